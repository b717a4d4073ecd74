//! The `lmdb` store against the conformance suite, a reopen, concurrent sessions and
//! its option checks.

#![cfg(feature = "lmdb")]

use crate::support;

use std::path::Path;

use kvlab_core::Store;
use kvlab_core::{Batch, OpKind, Outcome, StoreErrorKind};
use kvlab_stores::lmdb::{LmdbConfig, LmdbStore};
use kvlab_stores::StoreOptions;

fn open(dir: &Path, pairs: &[(&str, &str)]) -> Result<LmdbStore, kvlab_core::StoreError> {
    let opts = StoreOptions::from_strs("lmdb.", pairs);
    LmdbStore::open(LmdbConfig::from_options(Some(dir), opts)?)
}

#[test]
fn lmdb_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[]).unwrap();
    kvlab_stores::conformance::check_all(&store);
}

#[test]
fn lmdb_conforms_without_sync_and_with_writemap() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(
        dir.path(),
        &[
            ("lmdb.sync", "none"),
            ("lmdb.writemap", "true"),
            ("lmdb.readahead", "false"),
        ],
    )
    .unwrap();
    kvlab_stores::conformance::check_all(&store);
}

#[test]
fn lmdb_keeps_data_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    support::check_survives_reopen(|| open(dir.path(), &[("lmdb.sync", "nometa")]).unwrap());
}

#[test]
fn lmdb_destroy_on_open_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    support::check_destroy_on_open(
        || open(dir.path(), &[]).unwrap(),
        || open(dir.path(), &[("lmdb.destroy_on_open", "true")]).unwrap(),
    );
}

#[test]
fn lmdb_sessions_on_four_threads_see_every_record() {
    let dir = tempfile::tempdir().unwrap();
    // 8 000 write transactions: with the default `sync=full` each one waits for an
    // fsync, which turns a concurrency check into a minute of disk waits. Durability
    // is checked by the reopen test; this one is about the sessions.
    let store = open(dir.path(), &[("lmdb.sync", "none")]).unwrap();
    support::check_concurrent_sessions(&store);
    let stats = store.stats();
    let entries = stats
        .iter()
        .find(|(n, _)| n == "entries")
        .map(|(_, v)| v.clone());
    assert_eq!(entries, Some(kvlab_core::StatValue::Int(8000)), "{stats:?}");
}

#[test]
fn lmdb_map_full_is_an_error_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("lmdb.map_size", "1MiB")]).unwrap();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let value = vec![7u8; 64 << 10];
    let mut failure = None;
    for i in 0..64 {
        let key = format!("k{i:03}");
        if let Err(e) = support::op(
            &mut s,
            &mut b,
            OpKind::Insert,
            key.as_bytes(),
            &[(b"f", &value)],
        ) {
            failure = Some((i, e));
            break;
        }
    }
    let (i, e) = failure.expect("4 MiB of values fit a 1 MiB map");
    assert!(i > 0, "the first 64 KiB value already failed: {e}");
    // LMDB's own name for the error (mdb.c, mdb_strerror), and the option to raise.
    assert_eq!(e.kind, StoreErrorKind::Full);
    assert!(e.message.contains("MDB_MAP_FULL"), "{e}");
    assert!(e.message.contains("lmdb.map_size="), "{e}");
    // The records committed before the map filled up are still there.
    let r = support::op(&mut s, &mut b, OpKind::Read, b"k000", &[]);
    assert_eq!(
        r,
        Ok(Outcome::Hit {
            bytes: value.len() as u64
        })
    );
}

#[test]
fn lmdb_grouped_batch_rolls_back_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("lmdb.map_size", "1MiB")]).unwrap();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    // A small insert, then a value larger than the map: one transaction, so neither lands.
    for (key, len) in [(&b"small"[..], 10usize), (&b"huge"[..], 2 << 20)] {
        let slot = b.push();
        slot.request.kind = OpKind::Insert;
        slot.request.key.extend_from_slice(key);
        slot.request.value.fields_mut().push(b"f", &vec![1u8; len]);
    }
    kvlab_core::block_on(kvlab_core::Session::execute(&mut s, &mut b));
    for slot in b.slots() {
        let e = slot.result.clone().unwrap_err();
        assert!(e.message.contains("rolled back"), "{e}");
        assert!(slot.completed_at.is_some());
    }
    let r = support::op(&mut s, &mut b, OpKind::Read, b"small", &[]);
    assert_eq!(r, Ok(Outcome::Miss), "a write of the aborted batch landed");
}

#[test]
fn lmdb_option_errors_name_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let err = open(dir.path(), &[("lmdb.mapsize", "1GiB")]).unwrap_err();
    assert_eq!(err.kind, StoreErrorKind::Config);
    assert!(err.message.contains("`lmdb.mapsize`"), "{err}");
    assert!(err.message.contains("lmdb.map_size"), "{err}");
    let err = open(dir.path(), &[("lmdb.map_size", "lots")]).unwrap_err();
    assert!(
        err.message
            .contains("`lmdb.map_size`: `lots` is not a size"),
        "{err}"
    );
    let err = open(dir.path(), &[("lmdb.map_size", "12345")]).unwrap_err();
    assert!(
        err.message.contains("multiple of the 4096-byte page size"),
        "{err}"
    );
}

#[test]
fn lmdb_stats_describe_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), &[("lmdb.map_size", "64MiB")]).unwrap();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..100u32 {
        support::op(
            &mut s,
            &mut b,
            OpKind::Insert,
            &i.to_be_bytes(),
            &[(b"f", &[0u8; 3000])],
        )
        .unwrap();
    }
    store.flush().unwrap();
    let stats = store.stats();
    let int = |name: &str| match stats.iter().find(|(n, _)| n == name) {
        Some((_, kvlab_core::StatValue::Int(v))) => *v,
        other => panic!("stat {name}: {other:?} in {stats:?}"),
    };
    assert_eq!(int("map_size_bytes"), 64 << 20);
    assert_eq!(int("entries"), 100);
    // A value over LMDB's node limit (about half a page) goes to its own overflow
    // pages: each encoded 3009-byte value takes exactly one 4 KiB overflow page.
    assert_eq!(int("overflow_pages"), 100, "{stats:?}");
    assert_eq!(int("page_size_bytes"), 4096, "{stats:?}");
    assert!(int("file_size_bytes") >= int("used_bytes") / 2, "{stats:?}");
    let opts = store.options();
    assert!(
        opts.iter().any(|(n, v)| n == "sync" && *v == "full".into()),
        "{opts:?}"
    );
}

#[test]
#[ignore = "measurement: prints ops/s; run with --release -- --ignored --nocapture"]
fn lmdb_single_thread_throughput() {
    let dir = tempfile::tempdir().unwrap();
    // A synced commit costs milliseconds: fewer records for the synced modes.
    for (sync, records) in [("none", 100_000), ("nometa", 2_000), ("full", 2_000)] {
        let store = open(
            dir.path(),
            &[("lmdb.sync", sync), ("lmdb.destroy_on_open", "true")],
        )
        .unwrap();
        println!("lmdb.sync={sync}");
        support::print_throughput(&store, records);
    }
}

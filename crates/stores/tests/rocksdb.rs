//! The RocksDB store's merges, checked with RocksDB's own `ldb` (Debian's `rocksdb-tools`)
//! reading the database kvlab wrote: each merge operator's result is what RocksDB
//! documents for it (utilities/merge_operators/: `put` keeps the last operand,
//! `stringappend` joins the operands with `,`, `uint64add` adds 64-bit little-endian
//! integers), computed here from the operands, not from kvlab.

#![cfg(feature = "rocksdb")]

use std::path::Path;
use std::process::Command;

use kvlab_core::{block_on, Batch, CommandId, OpKind, Outcome, Session, Store, MERGE_COMMAND};
use kvlab_stores::rocksdb::{RocksDbConfig, RocksDbStore};
use kvlab_stores::StoreOptions;

fn open(dir: &Path, merge_operator: &str) -> RocksDbStore {
    let opts = StoreOptions::from_strs("rocksdb.", &[("rocksdb.merge_operator", merge_operator)]);
    RocksDbStore::open(RocksDbConfig::from_options(Some(dir), opts).unwrap()).unwrap()
}

/// Sends `MERGE key operand` for each pair, in one batch.
fn merge_all<S: Session>(session: &mut S, merges: &[(&[u8], &[u8])]) -> Vec<Outcome> {
    let mut batch = Batch::new();
    for (key, operand) in merges {
        let req = &mut batch.push().request;
        req.kind = OpKind::Insert;
        req.key.extend_from_slice(key);
        req.command.start(CommandId(0));
        req.command.args.push(MERGE_COMMAND);
        req.command.args.push(key);
        req.command.args.push(operand);
    }
    block_on(session.execute(&mut batch));
    batch
        .slots()
        .iter()
        .map(|s| s.result.clone().expect("a merge succeeds"))
        .collect()
}

/// `ldb get KEY` on the closed database, values in hex; `None` when `ldb` is missing.
fn ldb_get_hex(dir: &Path, key: &str) -> Option<String> {
    let out = match Command::new("ldb")
        .arg(format!("--db={}", dir.display()))
        // kvlab keeps its records in YCSB's column family.
        .arg("--column_family=usertable")
        .args(["get", "--value_hex", key])
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: ldb (rocksdb-tools) not runnable: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "ldb get {key}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap().trim().to_string())
}

fn hex(bytes: &[u8]) -> String {
    let digits: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    format!("0x{digits}")
}

/// Merges with each of RocksDB's operators, some on top of a put, some flushed to an SST
/// and some left in the WAL: `ldb get` reads what the operator makes of them.
#[test]
fn merges_are_what_ldb_reads_back() {
    let a = 5u64.to_le_bytes();
    let b = 1_000_000_007u64.to_le_bytes();
    let c = u64::MAX.to_le_bytes();
    // (operator, merges before a flush, merges after, expected value of `k`)
    type Case<'a> = (&'a str, Vec<&'a [u8]>, Vec<&'a [u8]>, Vec<u8>);
    let cases: [Case; 3] = [
        (
            "put",
            vec![b"first", b"second"],
            vec![b"third"],
            b"third".to_vec(),
        ),
        (
            "stringappend",
            vec![b"x", b"yy"],
            vec![b"zzz"],
            b"x,yy,zzz".to_vec(),
        ),
        (
            "uint64add",
            vec![&a, &b],
            vec![&c],
            // Wrapping: RocksDB's UInt64AddOperator adds modulo 2^64.
            5u64.wrapping_add(1_000_000_007)
                .wrapping_add(u64::MAX)
                .to_le_bytes()
                .to_vec(),
        ),
    ];
    for (operator, before, after, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = open(dir.path(), operator);
            assert!(store.capabilities().merge);
            let mut s = store.session().unwrap();
            let merges: Vec<(&[u8], &[u8])> = before.iter().map(|o| (&b"k"[..], *o)).collect();
            let outcomes = merge_all(&mut s, &merges);
            assert!(
                matches!(outcomes[0], Outcome::Written { bytes } if bytes == 1 + before[0].len() as u64),
                "{outcomes:?}"
            );
            store.flush().unwrap();
            let merges: Vec<(&[u8], &[u8])> = after.iter().map(|o| (&b"k"[..], *o)).collect();
            merge_all(&mut s, &merges);
            // A key that holds a put first: the put operator's last operand replaces it.
            if operator == "put" {
                let mut batch = Batch::new();
                let req = &mut batch.push().request;
                req.kind = OpKind::Insert;
                req.key.extend_from_slice(b"p");
                req.value.set_blob(b"base");
                block_on(s.execute(&mut batch));
                merge_all(&mut s, &[(b"p", b"merged")]);
            }
            // kvlab reads what it merged, too.
            let mut batch = Batch::new();
            let req = &mut batch.push().request;
            req.kind = OpKind::Read;
            req.key.extend_from_slice(b"k");
            req.read.set_blob();
            block_on(s.execute(&mut batch));
            assert_eq!(
                batch.slots()[0].result,
                Ok(Outcome::Hit {
                    bytes: expected.len() as u64
                }),
                "{operator}"
            );
        }
        let Some(got) = ldb_get_hex(dir.path(), "k") else {
            return;
        };
        assert_eq!(got, hex(&expected), "{operator}: ldb get k");
        if operator == "put" {
            assert_eq!(ldb_get_hex(dir.path(), "p").unwrap(), hex(b"merged"));
        }
    }
}

/// `rocksdb.merge_operator=none` opens without one: the store does not offer merges,
/// and a merge sent anyway fails by name; a bad choice is refused with the choices.
#[test]
fn without_a_merge_operator_merges_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), "none");
    assert!(!store.capabilities().merge);
    let mut s = store.session().unwrap();
    let mut batch = Batch::new();
    let req = &mut batch.push().request;
    req.command.start(CommandId(0));
    for arg in [MERGE_COMMAND, b"k", b"v"] {
        req.command.args.push(arg);
    }
    block_on(s.execute(&mut batch));
    let err = batch.slots()[0].result.clone().unwrap_err();
    assert!(err.message.contains("merge_operator=none"), "{err}");

    let opts = StoreOptions::from_strs("rocksdb.", &[("rocksdb.merge_operator", "concat")]);
    let err = RocksDbConfig::from_options(Some(dir.path()), opts).unwrap_err();
    assert!(err.message.contains("uint64add"), "{err}");
}

/// A batch of reads (`--pipeline`) is one MultiGet: hits return their records, misses
/// miss, in the batch's order — the same as one read at a time (`rocksdb.multi_get=false`).
#[test]
fn a_batch_of_reads_is_one_multi_get_with_each_slots_own_result() {
    for multi_get in ["true", "false"] {
        let dir = tempfile::tempdir().unwrap();
        let opts = StoreOptions::from_strs("rocksdb.", &[("rocksdb.multi_get", multi_get)]);
        let store =
            RocksDbStore::open(RocksDbConfig::from_options(Some(dir.path()), opts).unwrap())
                .unwrap();
        let mut s = store.session().unwrap();
        let mut batch = Batch::new();
        for i in 0..10 {
            let req = &mut batch.push().request;
            req.kind = OpKind::Insert;
            req.key.extend_from_slice(format!("user{i}").as_bytes());
            req.value
                .fields_mut()
                .push(b"field0", "v".repeat(i + 1).as_bytes());
        }
        block_on(s.execute(&mut batch));
        // Half of the keys were flushed to an SST, half are in the memtable.
        store.flush().unwrap();
        batch.clear();
        // Keys 15, 14, …, 0: the first five miss, the rest hit, out of key order.
        for i in (0..16).rev() {
            let req = &mut batch.push().request;
            req.kind = OpKind::Read;
            req.key.extend_from_slice(format!("user{i}").as_bytes());
        }
        block_on(s.execute(&mut batch));
        for (slot, i) in batch.slots().iter().zip((0..16usize).rev()) {
            if i >= 10 {
                assert_eq!(slot.result, Ok(Outcome::Miss), "user{i}");
            } else {
                assert_eq!(
                    slot.result,
                    Ok(Outcome::Hit {
                        bytes: i as u64 + 1
                    }),
                    "user{i}"
                );
                assert_eq!(
                    slot.reply.get(b"field0"),
                    Some("v".repeat(i + 1).as_bytes()),
                    "user{i} multi_get={multi_get}"
                );
            }
        }
        // RocksDB's own count of keys looked up by MultiGet (all 16) says which path ran.
        let tickers = store.tickers();
        let multiget_keys = tickers
            .iter()
            .find(|(name, _)| name == "rocksdb.number.multiget.keys.read")
            .map(|(_, n)| *n);
        let expected = if multi_get == "true" { 16 } else { 0 };
        assert_eq!(multiget_keys, Some(expected), "multi_get={multi_get}");
    }
}

/// db_bench's key for key number `k` (`GenerateKeyFromInt`: big-endian, then `'0'`s).
fn db_bench_key(k: u64) -> Vec<u8> {
    let mut key = k.to_be_bytes().to_vec();
    key.resize(16, b'0');
    key
}

/// Keys `0..n` written in a scattered order (so that L0 files overlap) with 200-byte
/// values, into a database with small memtables and SST files.
fn load_scattered(dir: &Path, n: u64) -> RocksDbStore {
    let opts = StoreOptions::from_strs(
        "rocksdb.",
        &[
            ("rocksdb.write_buffer_size", "512KiB"),
            ("rocksdb.target_file_size_base", "256KiB"),
            ("rocksdb.compression", "none"),
            ("rocksdb.wal", "false"),
        ],
    );
    let store = RocksDbStore::open(RocksDbConfig::from_options(Some(dir), opts).unwrap()).unwrap();
    let mut session = store.session().unwrap();
    let mut batch = Batch::new();
    let value = [b'v'; 200];
    for i in 0..n {
        // 7919 is prime and does not divide n: a permutation of 0..n.
        let k = i * 7919 % n;
        let r = crate::support::op(
            &mut session,
            &mut batch,
            OpKind::Insert,
            &db_bench_key(k),
            &[(b"f", &value)],
        );
        assert!(r.is_ok(), "{r:?}");
    }
    drop(session);
    store
}

/// After a full compaction, the last level's files tile the key space: sorted, no
/// overlap, about `target_file_size_base` each, their entries summing to the keys
/// written; a read-only open of the same directory sees the same files, and the range
/// starts are the files' first key numbers.
#[test]
fn a_full_compaction_tiles_the_key_space_in_sst_files() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let store = load_scattered(dir.path(), n);
    store.flush().unwrap();
    let before = store.sst_files();
    assert!(!before.is_empty(), "the flushes wrote SST files");
    store.compact_all().unwrap();
    let files = store.sst_files();
    let last = files.iter().map(|f| f.level).max().unwrap();
    assert!(last >= 1, "a full compaction leaves L0: {files:?}");
    assert!(
        files.iter().all(|f| f.level == last),
        "every file at the last level: {files:?}"
    );
    let tiles = kvlab_stores::rocksdb::last_level_files(&files);
    assert_eq!(tiles.len(), files.len());
    // 20 000 entries of ~230 bytes (4.6 MB) in files of 256 KiB: about 18 files.
    assert!(
        (10..=30).contains(&tiles.len()),
        "{} files of 256 KiB for 4.6 MB",
        tiles.len()
    );
    for pair in tiles.windows(2) {
        assert!(
            pair[0].largest_key < pair[1].smallest_key,
            "overlapping files: {pair:?}"
        );
    }
    assert_eq!(tiles[0].smallest_key, db_bench_key(0));
    assert_eq!(tiles.last().unwrap().largest_key, db_bench_key(n - 1));
    assert_eq!(tiles.iter().map(|f| f.entries).sum::<u64>(), n);
    for f in &tiles[..tiles.len() - 1] {
        assert!(
            f.size_bytes > 200 << 10 && f.size_bytes < 400 << 10,
            "{} is {} bytes for a 256 KiB target",
            f.name,
            f.size_bytes
        );
    }
    // Each file's entries are the keys between its bounds (keys are 0..n, one each).
    for f in &tiles {
        let lo = kvlab_stores::rocksdb::key_number(&f.smallest_key);
        let hi = kvlab_stores::rocksdb::key_number(&f.largest_key);
        assert_eq!(hi - lo + 1, f.entries, "{}", f.name);
    }

    // A read-only open, while the store holds the database, sees the same layout.
    let mut read = kvlab_stores::rocksdb::read_sst_files(dir.path()).unwrap();
    let mut sorted = files.clone();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    read.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(read, sorted);
    let starts = kvlab_stores::rocksdb::range_starts(&read);
    let want: Vec<u64> = tiles
        .iter()
        .map(|f| kvlab_stores::rocksdb::key_number(&f.smallest_key))
        .collect();
    assert_eq!(starts, want);
    assert_eq!(starts[0], 0);
}

/// A read-only open of a directory without a database is an error naming it.
#[test]
fn the_layout_of_a_missing_database_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let err = kvlab_stores::rocksdb::read_sst_files(&missing).unwrap_err();
    assert!(err.message.contains("nothing-here"), "{err}");
    assert!(!missing.exists(), "a read-only open created the directory");
}

/// A database loaded into one memtable and flushed once (one L0 file, as `kvlab model
/// fidelity` loads its base) is rewritten by the full compaction into files of the
/// target size: a trivial move of the one file would leave one range.
#[test]
fn one_flushed_file_is_split_by_the_full_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions::from_strs(
        "rocksdb.",
        &[
            ("rocksdb.write_buffer_size", "64MiB"),
            ("rocksdb.target_file_size_base", "256KiB"),
            ("rocksdb.compression", "none"),
            ("rocksdb.wal", "false"),
        ],
    );
    let store =
        RocksDbStore::open(RocksDbConfig::from_options(Some(dir.path()), opts).unwrap()).unwrap();
    let mut session = store.session().unwrap();
    let mut batch = Batch::new();
    let value = [b'v'; 200];
    let n = 10_000u64;
    for k in 0..n {
        let r = crate::support::op(
            &mut session,
            &mut batch,
            OpKind::Insert,
            &db_bench_key(k),
            &[(b"f", &value)],
        );
        assert!(r.is_ok(), "{r:?}");
    }
    drop(session);
    store.flush().unwrap();
    assert_eq!(store.sst_files().len(), 1, "one memtable, one flush");
    store.compact_all().unwrap();
    let tiles = kvlab_stores::rocksdb::last_level_files(&store.sst_files());
    assert!(
        tiles.len() >= 6,
        "{} files for 2.3 MB of 256 KiB",
        tiles.len()
    );
    assert_eq!(tiles.iter().map(|f| f.entries).sum::<u64>(), n);
}

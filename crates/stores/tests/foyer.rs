//! The `foyer` store on a real foyer hybrid cache with its disk tier in a temporary
//! directory: conformance, DRAM vs disk hits, admission, destroy-on-open, driving
//! sessions from inside another runtime, and option errors.
#![cfg(feature = "foyer")]

use std::path::Path;

use kvlab_core::{block_on, Batch, OpKind, Outcome, Session, StatValue, Store, StoreErrorKind};
use kvlab_stores::foyer::{FoyerConfig, FoyerSession, FoyerStore};
use kvlab_stores::StoreOptions;

fn config(pairs: &[(&str, &str)]) -> Result<FoyerConfig, kvlab_core::StoreError> {
    FoyerConfig::from_options(StoreOptions::from_strs("foyer.", pairs))
}

fn open(pairs: &[(&str, &str)]) -> FoyerStore {
    FoyerStore::open(config(pairs).expect("valid foyer options")).expect("foyer opens")
}

fn open_on_disk(dir: &Path, pairs: &[(&str, &str)]) -> FoyerStore {
    let dir = dir
        .to_str()
        .expect("temporary directories have UTF-8 paths");
    let mut all = vec![("foyer.disk_path", dir)];
    all.extend_from_slice(pairs);
    open(&all)
}

fn stat(store: &FoyerStore, name: &str) -> Option<StatValue> {
    store
        .stats()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

fn int(store: &FoyerStore, name: &str) -> i64 {
    match stat(store, name) {
        Some(StatValue::Int(v)) => v,
        other => panic!("stat {name}: {other:?}"),
    }
}

/// Executes one blob request and returns its outcome.
fn blob(s: &mut FoyerSession, b: &mut Batch, kind: OpKind, key: &[u8], value: &[u8]) -> Outcome {
    b.clear();
    let slot = b.push();
    slot.request.kind = kind;
    slot.request.read.set_blob();
    slot.request.key.extend_from_slice(key);
    if matches!(kind, OpKind::Insert | OpKind::Update) {
        slot.request.value.set_blob(value);
    }
    block_on(s.execute(b));
    b.slots()[0]
        .result
        .clone()
        .expect("a foyer blob request succeeds")
}

/// A value that differs per key, so that a value returned for the wrong key shows.
fn value_of(i: u32, len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|j| (i.wrapping_mul(31).wrapping_add(j * 7) % 251) as u8)
        .collect()
}

#[test]
fn foyer_conforms_with_a_disk_tier() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_on_disk(
        dir.path(),
        &[
            ("foyer.memory", "16MiB"),
            ("foyer.disk_size", "64MiB"),
            ("foyer.block_size", "4MiB"),
        ],
    );
    kvlab_stores::conformance::check_all(&store);
    assert!(!store.capabilities().scan);
}

#[test]
fn foyer_conforms_in_dram_only() {
    let store = open(&[("foyer.memory", "16MiB"), ("foyer.eviction", "s3fifo")]);
    kvlab_stores::conformance::check_all(&store);
    assert_eq!(int(&store, "disk_hits"), 0);
    assert_eq!(
        stat(&store, "disk_write_bytes"),
        None,
        "no disk tier, no disk stats"
    );
}

/// With 1 MiB of DRAM in front of a 16 MiB disk, 8 MiB of values mostly live on disk:
/// reading them back is served partly from disk, and every value read is the one
/// written.
#[test]
fn reads_beyond_dram_are_served_from_disk() {
    const KEYS: u32 = 2048;
    const LEN: usize = 4096;
    let dir = tempfile::tempdir().unwrap();
    let store = open_on_disk(
        dir.path(),
        &[
            ("foyer.memory", "1MiB"),
            ("foyer.disk_size", "16MiB"),
            ("foyer.block_size", "1MiB"),
        ],
    );
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..KEYS {
        let key = format!("key{i}");
        blob(
            &mut s,
            &mut b,
            OpKind::Insert,
            key.as_bytes(),
            &value_of(i, LEN),
        );
    }
    store.flush().unwrap();
    let (mut hits, mut last_hit) = (0, None::<u32>);
    for i in 0..KEYS {
        let key = format!("key{i}");
        match blob(&mut s, &mut b, OpKind::Read, key.as_bytes(), b"") {
            Outcome::Hit { bytes } => {
                assert_eq!(bytes, LEN as u64);
                assert!(
                    b.slots()[0].reply.field(0).1 == value_of(i, LEN),
                    "{key}'s value"
                );
                hits += 1;
                last_hit = Some(i);
            }
            Outcome::Miss => {}
            other => panic!("read of {key}: {other:?}"),
        }
    }
    let (dram, disk, misses) = (
        int(&store, "dram_hits"),
        int(&store, "disk_hits"),
        int(&store, "misses"),
    );
    assert_eq!((dram + disk, dram + disk + misses), (hits, KEYS as i64));
    assert!(
        disk > 0,
        "no read was served from disk: {:?}",
        store.stats()
    );
    // DRAM holds at most 1 MiB of the 8 MiB, so most hits come from disk.
    assert!(dram <= (1 << 20) / LEN as i64, "{dram} DRAM hits");
    assert!(int(&store, "dram_evictions") > 0);
    assert!(int(&store, "disk_write_bytes") > 0);
    assert!(int(&store, "disk_read_bytes") >= disk * LEN as i64);
    assert!(int(&store, "disk_admitted_bytes") > 0);
    assert_eq!(int(&store, "inserts"), KEYS as i64);

    // A disk hit puts the entry back in DRAM: reading it again is a DRAM hit.
    let last = format!("key{}", last_hit.expect("some key was a hit"));
    assert!(matches!(
        blob(&mut s, &mut b, OpKind::Read, last.as_bytes(), b""),
        Outcome::Hit { .. }
    ));
    assert_eq!(int(&store, "dram_hits"), dram + 1, "{:?}", store.stats());
}

/// A rate limit of 8 KiB/s lets at most a couple of 4 KiB entries through to disk.
#[test]
fn rated_admission_rejects_what_exceeds_the_rate() {
    let dir = tempfile::tempdir().unwrap();
    let store = open_on_disk(
        dir.path(),
        &[
            ("foyer.memory", "1MiB"),
            ("foyer.disk_size", "16MiB"),
            ("foyer.block_size", "1MiB"),
            ("foyer.admission", "rated:8KiB"),
        ],
    );
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..1024 {
        blob(
            &mut s,
            &mut b,
            OpKind::Insert,
            format!("key{i}").as_bytes(),
            &value_of(i, 4096),
        );
    }
    store.flush().unwrap();
    assert!(
        int(&store, "disk_rejected_bytes") > 0,
        "{:?}",
        store.stats()
    );
    assert!(
        int(&store, "disk_admitted_bytes") < int(&store, "disk_rejected_bytes"),
        "{:?}",
        store.stats()
    );
}

#[test]
fn destroy_on_open_deletes_only_foyer_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "keep me").unwrap();
    let opts = [
        ("foyer.memory", "1MiB"),
        ("foyer.disk_size", "8MiB"),
        ("foyer.block_size", "1MiB"),
    ];
    drop(open_on_disk(dir.path(), &opts));
    let foyer_files = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("foyer-")
            })
            .count()
    };
    assert!(foyer_files() > 0, "foyer wrote no files");
    let mut with_destroy = opts.to_vec();
    with_destroy.push(("foyer.destroy_on_open", "true"));
    // Files are deleted before the store opens, and recreated by it.
    let store = open_on_disk(dir.path(), &with_destroy);
    assert!(dir.path().join("notes.txt").exists());
    drop(store);
    assert!(foyer_files() > 0);
}

/// The store opens, runs and closes inside a current-thread tokio runtime, as kvlab's
/// runner may drive sessions: nothing nests a `block_on` or needs the caller's runtime.
#[test]
fn sessions_run_inside_another_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = open_on_disk(
            dir.path(),
            &[
                ("foyer.memory", "1MiB"),
                ("foyer.disk_size", "16MiB"),
                ("foyer.block_size", "1MiB"),
            ],
        );
        let mut s = store.session().unwrap();
        let mut b = Batch::new();
        for i in 0..512u32 {
            b.clear();
            let slot = b.push();
            slot.request.kind = OpKind::Insert;
            slot.request.read.set_blob();
            slot.request
                .key
                .extend_from_slice(format!("key{i}").as_bytes());
            slot.request.value.set_blob(&value_of(i, 8192));
            s.execute(&mut b).await;
        }
        store.flush().unwrap();
        for i in 0..512u32 {
            b.clear();
            let slot = b.push();
            slot.request.kind = OpKind::Read;
            slot.request.read.set_blob();
            slot.request
                .key
                .extend_from_slice(format!("key{i}").as_bytes());
            s.execute(&mut b).await;
            if let Ok(Outcome::Hit { .. }) = b.slots()[0].result {
                assert!(b.slots()[0].reply.field(0).1 == value_of(i, 8192));
            }
        }
        assert!(int(&store, "disk_hits") > 0, "{:?}", store.stats());
    });
}

#[test]
fn option_errors_name_the_option() {
    let err = config(&[("foyer.memroy", "1MiB")]).unwrap_err();
    assert_eq!(err.kind, StoreErrorKind::Config);
    assert!(err.message.contains("`foyer.memroy`"), "{err}");
    assert!(err.message.contains("foyer.memory"), "{err}");

    let err = config(&[("foyer.disk_size", "big")]).unwrap_err();
    assert!(
        err.message
            .contains("`foyer.disk_size`: `big` is not a size in bytes"),
        "{err}"
    );
    let err = config(&[("foyer.admission", "rated:fast")]).unwrap_err();
    assert!(err.message.contains("`foyer.admission`"), "{err}");
    let err = config(&[("foyer.flushers", "0")]).unwrap_err();
    assert!(err.message.contains("`foyer.flushers`"), "{err}");
    let err = config(&[
        ("foyer.disk_path", "/nonexistent"),
        ("foyer.disk_size", "16MiB"),
        ("foyer.block_size", "16MiB"),
    ])
    .unwrap_err();
    assert!(err.message.contains("fewer than 2 blocks"), "{err}");

    let c = config(&[("foyer.admission", "rated:64MiB")]).unwrap();
    assert_eq!(c.memory_bytes, 256 << 20);
    assert_eq!(c.disk_path, None);
    let store = open(&[("foyer.memory", "4MiB")]);
    assert!(store
        .options()
        .contains(&("memory_bytes".to_string(), StatValue::Int(4 << 20))));
}

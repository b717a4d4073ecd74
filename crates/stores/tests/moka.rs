//! The `moka` store on a real moka cache: conformance, capacity in bytes, expiry,
//! statistics and option errors.
#![cfg(feature = "moka")]

use kvlab_core::{block_on, Batch, OpKind, Outcome, Session, StatValue, Store, StoreErrorKind};
use kvlab_stores::moka::{MokaConfig, MokaSession, MokaStore};
use kvlab_stores::StoreOptions;

fn open(pairs: &[(&str, &str)]) -> MokaStore {
    MokaStore::open(config(pairs).expect("valid moka options")).expect("moka opens")
}

fn config(pairs: &[(&str, &str)]) -> Result<MokaConfig, kvlab_core::StoreError> {
    MokaConfig::from_options(StoreOptions::from_strs("moka.", pairs))
}

fn stat(store: &MokaStore, name: &str) -> i64 {
    match store.stats().into_iter().find(|(n, _)| n == name) {
        Some((_, StatValue::Int(v))) => v,
        other => panic!("stat {name}: {other:?}"),
    }
}

/// Executes one blob request and returns its outcome.
fn blob(s: &mut MokaSession, b: &mut Batch, kind: OpKind, key: &[u8], value: &[u8]) -> Outcome {
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
        .expect("moka never fails a blob request")
}

#[test]
fn moka_conforms() {
    let store = open(&[("moka.capacity", "64MiB")]);
    kvlab_stores::conformance::check_all(&store);
    assert!(!store.capabilities().scan);
}

#[test]
fn moka_lru_conforms() {
    let store = open(&[("moka.capacity", "64MiB"), ("moka.eviction", "lru")]);
    kvlab_stores::conformance::check_all(&store);
}

/// Fills 10 000 keys of 1 KiB into caches of 1, 4 and 16 MiB, then reads every key:
/// hits rise with capacity, and the 16 MiB cache (about 10.1 MiB of data) holds all.
#[test]
fn hits_rise_with_capacity() {
    let value = vec![7u8; 1024];
    let mut hits = Vec::new();
    for capacity in ["1MiB", "4MiB", "16MiB"] {
        let store = open(&[("moka.capacity", capacity)]);
        let mut s = store.session().unwrap();
        let mut b = Batch::new();
        for i in 0..10_000 {
            blob(
                &mut s,
                &mut b,
                OpKind::Insert,
                format!("key{i}").as_bytes(),
                &value,
            );
        }
        store.flush().unwrap();
        let weighted = stat(&store, "weighted_size_bytes");
        let capacity_bytes = stat(&store, "capacity_bytes");
        assert!(
            weighted <= capacity_bytes,
            "{capacity}: {weighted} bytes held"
        );
        let mut got = 0;
        for i in 0..10_000 {
            match blob(
                &mut s,
                &mut b,
                OpKind::Read,
                format!("key{i}").as_bytes(),
                b"",
            ) {
                Outcome::Hit { bytes } => {
                    assert_eq!(bytes, 1024);
                    assert_eq!(b.slots()[0].reply.field(0).1, &value[..]);
                    got += 1;
                }
                Outcome::Miss => {}
                other => panic!("read: {other:?}"),
            }
        }
        assert_eq!(stat(&store, "hits"), got);
        assert_eq!(stat(&store, "misses"), 10_000 - got);
        assert_eq!(stat(&store, "inserts"), 10_000);
        if got < 10_000 {
            assert!(
                stat(&store, "evictions") > 0,
                "{capacity}: misses without evictions"
            );
        }
        hits.push(got);
    }
    assert!(
        hits[0] < hits[1] && hits[1] < hits[2],
        "hits by capacity: {hits:?}"
    );
    assert_eq!(hits[2], 10_000, "16 MiB holds all 10 000 entries");
    // Each entry weighs its key plus its value: 1 MiB holds at most 1 MiB / 1028 B.
    assert!(
        hits[0] <= (1 << 20) / 1028,
        "1 MiB cache held {} entries",
        hits[0]
    );
}

#[test]
fn sessions_share_the_cache_and_counters_add_up() {
    let store = open(&[]);
    let (mut a, mut b) = (store.session().unwrap(), store.session().unwrap());
    let mut batch = Batch::new();
    blob(&mut a, &mut batch, OpKind::Insert, b"shared", b"v");
    assert_eq!(
        blob(&mut b, &mut batch, OpKind::Read, b"shared", b""),
        Outcome::Hit { bytes: 1 }
    );
    assert_eq!(
        blob(&mut b, &mut batch, OpKind::Read, b"other", b""),
        Outcome::Miss
    );
    drop(b);
    // A closed session's counts stay in the totals.
    assert_eq!((stat(&store, "hits"), stat(&store, "misses")), (1, 1));
    assert_eq!(stat(&store, "entry_count"), 1);
    // A blob update of an absent key is a miss and writes nothing.
    assert_eq!(
        blob(&mut a, &mut batch, OpKind::Update, b"absent", b"x"),
        Outcome::Miss
    );
    assert_eq!(stat(&store, "inserts"), 1);
}

#[test]
fn scans_are_refused() {
    let store = open(&[]);
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let slot = b.push();
    slot.request.kind = OpKind::Scan;
    slot.request.key.extend_from_slice(b"k");
    slot.request.scan_len = 10;
    block_on(s.execute(&mut b));
    let err = b.slots()[0].result.clone().unwrap_err();
    assert_eq!(err.kind, StoreErrorKind::Unsupported);
}

/// Writes `short` with a 1 s time to live and `forever` without one.
fn write_short_and_forever(s: &mut MokaSession, b: &mut Batch) {
    b.clear();
    let slot = b.push();
    slot.request.kind = OpKind::Insert;
    slot.request.read.set_blob();
    slot.request.ttl_s = 1;
    slot.request.key.extend_from_slice(b"short");
    slot.request.value.set_blob(b"v");
    block_on(s.execute(b));
    blob(s, b, OpKind::Insert, b"forever", b"v");
    assert_eq!(
        blob(s, b, OpKind::Read, b"short", b""),
        Outcome::Hit { bytes: 1 }
    );
}

/// A write's own time to live (with `moka.per_entry_ttl`), and the store-wide one,
/// expire entries; a write without either does not. Expiry is checked against the
/// clock, so this sleeps.
#[test]
fn entries_expire_after_their_time_to_live() {
    let store = open(&[("moka.per_entry_ttl", "true")]);
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    write_short_and_forever(&mut s, &mut b);
    let ignoring = open(&[]);
    let mut i = ignoring.session().unwrap();
    write_short_and_forever(&mut i, &mut b);
    let with_default = open(&[("moka.ttl_s", "1")]);
    let mut d = with_default.session().unwrap();
    blob(&mut d, &mut b, OpKind::Insert, b"default", b"v");

    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(
        blob(&mut s, &mut b, OpKind::Read, b"short", b""),
        Outcome::Miss
    );
    assert_eq!(
        blob(&mut s, &mut b, OpKind::Read, b"forever", b""),
        Outcome::Hit { bytes: 1 }
    );
    assert_eq!(stat(&store, "expirations"), 1);
    // Without moka.per_entry_ttl a write's time to live is ignored.
    assert_eq!(
        blob(&mut i, &mut b, OpKind::Read, b"short", b""),
        Outcome::Hit { bytes: 1 }
    );
    assert_eq!(
        blob(&mut d, &mut b, OpKind::Read, b"default", b""),
        Outcome::Miss
    );
}

#[test]
fn option_errors_name_the_option() {
    let err = config(&[("moka.capacty", "1MiB")]).unwrap_err();
    assert_eq!(err.kind, StoreErrorKind::Config);
    assert!(err.message.contains("`moka.capacty`"), "{err}");
    assert!(err.message.contains("moka.capacity"), "{err}");

    let err = config(&[("moka.capacity", "lots")]).unwrap_err();
    assert!(
        err.message
            .contains("`moka.capacity`: `lots` is not a size in bytes"),
        "{err}"
    );
    let err = config(&[("moka.eviction", "random")]).unwrap_err();
    assert!(err.message.contains("one of: tinylfu, lru"), "{err}");

    let store = open(&[("moka.capacity", "2MiB"), ("moka.initial_capacity", "1000")]);
    let options = store.options();
    assert!(options.contains(&("capacity_bytes".to_string(), StatValue::Int(2 << 20))));
    assert!(options.contains(&("eviction".to_string(), StatValue::Text("tinylfu".into()))));
}

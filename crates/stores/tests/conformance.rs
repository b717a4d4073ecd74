//! The conformance suite over every store in this crate that holds data.

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_conforms() {
    use kvlab_stores::rocksdb::{RocksDbConfig, RocksDbStore};
    use kvlab_stores::StoreOptions;
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions::new("rocksdb.", Vec::new());
    let store =
        RocksDbStore::open(RocksDbConfig::from_options(Some(dir.path()), opts).unwrap()).unwrap();
    kvlab_stores::conformance::check_all(&store);
}

#[cfg(feature = "rocksdb")]
#[test]
fn rocksdb_without_wal_keeps_data_across_reopen() {
    use kvlab_core::{block_on, Batch, OpKind, Outcome, Session, Store};
    use kvlab_stores::rocksdb::{RocksDbConfig, RocksDbStore};
    use kvlab_stores::StoreOptions;
    let dir = tempfile::tempdir().unwrap();
    let opts = || StoreOptions::from_strs("rocksdb.", &[("rocksdb.wal", "false")]);
    {
        let store =
            RocksDbStore::open(RocksDbConfig::from_options(Some(dir.path()), opts()).unwrap())
                .unwrap();
        let mut s = store.session().unwrap();
        let mut b = Batch::new();
        let slot = b.push();
        slot.request.kind = OpKind::Insert;
        slot.request.key.extend_from_slice(b"k");
        slot.request.value.fields_mut().push(b"f", b"v");
        block_on(s.execute(&mut b));
        store.flush().unwrap();
        let stats = store.stats();
        assert!(stats.iter().any(|(n, _)| n == "bytes_written"), "{stats:?}");
    }
    let store =
        RocksDbStore::open(RocksDbConfig::from_options(Some(dir.path()), opts()).unwrap()).unwrap();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let slot = b.push();
    slot.request.kind = OpKind::Read;
    slot.request.key.extend_from_slice(b"k");
    block_on(s.execute(&mut b));
    assert_eq!(b.slots()[0].result, Ok(Outcome::Hit { bytes: 1 }));
}

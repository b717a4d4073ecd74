//! Checks shared by the embedded-engine tests (`tests/lmdb.rs`, `tests/wiredtiger.rs`):
//! durability across a reopen, a destroying reopen, concurrent sessions, and a
//! single-thread throughput probe.

use std::time::Instant;

use kvlab_core::{block_on, Batch, OpKind, Outcome, Session, Store, StoreError};

/// Runs one request and returns its result.
pub fn op<S: Session>(
    session: &mut S,
    batch: &mut Batch,
    kind: OpKind,
    key: &[u8],
    fields: &[(&[u8], &[u8])],
) -> Result<Outcome, StoreError> {
    batch.clear();
    let slot = batch.push();
    slot.request.kind = kind;
    slot.request.key.extend_from_slice(key);
    for (name, value) in fields {
        slot.request.value.fields_mut().push(name, value);
    }
    block_on(session.execute(batch));
    batch.slots()[0].result.clone()
}

fn key(i: u64) -> Vec<u8> {
    format!("user{i:012}").into_bytes()
}

/// Writes the record `k` with one field `f` = `v`.
pub fn write_one<S: Session>(session: &mut S) {
    let r = op(
        session,
        &mut Batch::new(),
        OpKind::Insert,
        b"k",
        &[(b"f", b"v")],
    );
    assert!(matches!(r, Ok(Outcome::Written { .. })), "{r:?}");
}

/// Writes one record through `first`, drops it, and opens `then`, which destroys the
/// data on open: the record must be gone.
pub fn check_destroy_on_open<S: Store>(first: impl FnOnce() -> S, then: impl FnOnce() -> S) {
    {
        let store = first();
        write_one(&mut store.session().unwrap());
    }
    let store = then();
    let mut s = store.session().unwrap();
    let r = op(&mut s, &mut Batch::new(), OpKind::Read, b"k", &[]);
    assert_eq!(r, Ok(Outcome::Miss), "the destroying reopen kept a record");
}

/// Writes 200 records, updates one, deletes one, flushes and drops the store; the
/// reopened store must return exactly what was left.
pub fn check_survives_reopen<S: Store>(open: impl Fn() -> S) {
    {
        let store = open();
        let mut s = store.session().unwrap();
        let mut b = Batch::new();
        for i in 0..200 {
            let v = format!("value-{i}");
            let r = op(
                &mut s,
                &mut b,
                OpKind::Insert,
                &key(i),
                &[(b"field0", v.as_bytes())],
            );
            assert!(
                matches!(r, Ok(Outcome::Written { .. })),
                "insert {i}: {r:?}"
            );
        }
        let r = op(
            &mut s,
            &mut b,
            OpKind::Update,
            &key(7),
            &[(b"field1", b"extra")],
        );
        assert!(matches!(r, Ok(Outcome::Written { .. })), "update: {r:?}");
        assert_eq!(
            op(&mut s, &mut b, OpKind::Delete, &key(9), &[]),
            Ok(Outcome::Deleted)
        );
        store.flush().unwrap();
    }
    let store = open();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..200 {
        let got = op(&mut s, &mut b, OpKind::Read, &key(i), &[]).unwrap();
        if i == 9 {
            assert_eq!(got, Outcome::Miss, "deleted key 9 came back");
            continue;
        }
        let want = format!("value-{i}");
        let reply = &b.slots()[0].reply;
        assert_eq!(
            reply.get(b"field0"),
            Some(want.as_bytes()),
            "record {i} after reopen"
        );
        if i == 7 {
            assert_eq!(
                reply.get(b"field1"),
                Some(&b"extra"[..]),
                "update lost on reopen"
            );
        }
    }
    let r = op(&mut s, &mut b, OpKind::Scan, &key(0), &[]);
    assert!(
        matches!(
            r,
            Ok(Outcome::Scanned {
                records: 0,
                bytes: 0,
                ..
            })
        ),
        "scan of 0 records: {r:?}"
    );
    b.clear();
    let slot = b.push();
    slot.request.kind = OpKind::Scan;
    slot.request.key.extend_from_slice(&key(5));
    slot.request.scan_len = 10;
    block_on(s.execute(&mut b));
    // Keys 5..=15 without the deleted 9: ten records, each value "value-N".
    let bytes: u64 = [5, 6, 7, 8, 10, 11, 12, 13, 14, 15]
        .iter()
        .map(|i: &u64| format!("value-{i}").len() as u64 + if *i == 7 { 5 } else { 0 })
        .sum();
    let r = &b.slots()[0].result;
    assert!(
        matches!(r, Ok(Outcome::Scanned { records: 10, bytes: b, .. }) if *b == bytes),
        "scan after reopen: {r:?}"
    );
}

/// Four threads, each with its own session, insert and read back 2000 records each at
/// the same time; afterwards one session finds all 8000.
pub fn check_concurrent_sessions<S: Store>(store: &S) {
    const THREADS: u64 = 4;
    const PER_THREAD: u64 = 2000;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            scope.spawn(move || {
                let mut s = store.session().unwrap();
                let mut b = Batch::new();
                for i in 0..PER_THREAD {
                    let k = key(t * PER_THREAD + i);
                    let r = op(&mut s, &mut b, OpKind::Insert, &k, &[(b"f", &k)]);
                    assert!(
                        matches!(r, Ok(Outcome::Written { .. })),
                        "thread {t} insert {i}: {r:?}"
                    );
                    let r = op(&mut s, &mut b, OpKind::Read, &k, &[]);
                    assert_eq!(
                        r,
                        Ok(Outcome::Hit {
                            bytes: k.len() as u64
                        }),
                        "thread {t} read {i}"
                    );
                }
            });
        }
    });
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..THREADS * PER_THREAD {
        let k = key(i);
        assert_eq!(
            op(&mut s, &mut b, OpKind::Read, &k, &[]),
            Ok(Outcome::Hit {
                bytes: k.len() as u64
            }),
            "record {i} after the threads finished"
        );
        assert_eq!(b.slots()[0].reply.get(b"f"), Some(&k[..]));
    }
}

/// Prints single-thread insert and read throughput for `records` (not a multiple of
/// 7919 or 104729) records of ten
/// 100-byte fields (YCSB's default record), one request per batch. A measurement to
/// run by hand (`--release -- --ignored --nocapture`), not an assertion.
pub fn print_throughput<S: Store>(store: &S, records: u64) {
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let value = [b'x'; 100];
    let names: Vec<Vec<u8>> = (0..10).map(|f| format!("field{f}").into_bytes()).collect();
    let fields: Vec<(&[u8], &[u8])> = names.iter().map(|n| (&n[..], &value[..])).collect();
    // Keys in a scrambled order, as YCSB's hashed inserts write them: multiplying by a
    // prime that does not divide `records` permutes 0..records.
    let start = Instant::now();
    for i in 0..records {
        op(
            &mut s,
            &mut b,
            OpKind::Insert,
            &key((i * 7919) % records),
            &fields,
        )
        .unwrap();
    }
    let insert_s = start.elapsed().as_secs_f64();
    store.flush().unwrap();
    let start = Instant::now();
    for i in 0..records {
        let r = op(
            &mut s,
            &mut b,
            OpKind::Read,
            &key((i * 104_729) % records),
            &[],
        )
        .unwrap();
        assert!(matches!(r, Outcome::Hit { .. }));
    }
    let read_s = start.elapsed().as_secs_f64();
    println!(
        "{}: {records} records of 10x100 B, 1 thread: insert {:.0} ops/s, read {:.0} ops/s",
        store.name(),
        records as f64 / insert_s,
        records as f64 / read_s
    );
}

//! The conformance suite every data-holding store must pass: get/put/update/delete/scan
//! semantics, misses as outcomes, large values, binary keys, partial reads, and
//! multi-key reads (per-key hits and misses, or refused as unsupported).
//!
//! Each check panics with a message naming the store and the violated expectation, so
//! it is meant to be called from tests: `conformance::check_all(&store)` for embedded
//! stores, or [`check_all_with`] and an executor (e.g. an async runtime's `block_on`)
//! for network stores, whose sessions need a reactor.

use kvlab_core::{block_on, Batch, OpKind, Outcome, Record, Session, Store, StoreErrorKind};

/// Executes a batch on a session to completion.
pub trait Executor<S> {
    /// Runs `session.execute(batch)` until it is done.
    fn execute(&mut self, session: &mut S, batch: &mut Batch);
}

impl<S, F: FnMut(&mut S, &mut Batch)> Executor<S> for F {
    fn execute(&mut self, session: &mut S, batch: &mut Batch) {
        self(session, batch)
    }
}

fn one<S: Session>(
    exec: &mut impl Executor<S>,
    session: &mut S,
    batch: &mut Batch,
) -> (Outcome, Record) {
    exec.execute(session, batch);
    let slot = &batch.slots()[0];
    assert!(
        slot.completed_at.is_some(),
        "the session did not complete the slot"
    );
    let outcome = match &slot.result {
        Ok(o) => *o,
        Err(e) => panic!(
            "{:?} of {:?} failed: {e}",
            slot.request.kind, slot.request.key
        ),
    };
    (outcome, slot.reply.clone())
}

fn request<'b>(batch: &'b mut Batch, kind: OpKind, key: &[u8]) -> &'b mut kvlab_core::Request {
    batch.clear();
    let slot = batch.push();
    slot.request.kind = kind;
    slot.request.key.extend_from_slice(key);
    &mut slot.request
}

/// Runs every check against `store`, whose data must start empty for the keys used
/// (all start with `kvlab-conformance-`), driving sessions with [`block_on`].
pub fn check_all<S: Store>(store: &S) {
    check_all_with(store, |s: &mut S::Session, b: &mut Batch| {
        block_on(s.execute(b))
    });
}

/// [`check_all`] with sessions driven by `exec`.
pub fn check_all_with<S: Store>(store: &S, mut exec: impl Executor<S::Session>) {
    let exec = &mut exec;
    let name = store.name();
    let mut s = store
        .session()
        .unwrap_or_else(|e| panic!("{name}: opening a session: {e}"));
    let mut b = Batch::new();

    // A read of a key never written is a miss, not an error.
    request(&mut b, OpKind::Read, b"kvlab-conformance-absent");
    assert_eq!(
        one(exec, &mut s, &mut b).0,
        Outcome::Miss,
        "{name}: read of an absent key"
    );

    // Insert then read back every field.
    let r = request(&mut b, OpKind::Insert, b"kvlab-conformance-a");
    r.value.fields_mut().push(b"field0", b"value-zero");
    r.value.fields_mut().push(b"field1", b"value-one");
    assert!(
        matches!(one(exec, &mut s, &mut b).0, Outcome::Written { .. }),
        "{name}: insert"
    );
    request(&mut b, OpKind::Read, b"kvlab-conformance-a");
    let (o, reply) = one(exec, &mut s, &mut b);
    assert_eq!(o, Outcome::Hit { bytes: 19 }, "{name}: read after insert");
    assert_eq!(
        reply.get(b"field0"),
        Some(&b"value-zero"[..]),
        "{name}: field0"
    );
    assert_eq!(
        reply.get(b"field1"),
        Some(&b"value-one"[..]),
        "{name}: field1"
    );

    // A partial read returns just the named field.
    let r = request(&mut b, OpKind::Read, b"kvlab-conformance-a");
    r.read.names_mut().push(b"field1", b"");
    let (_, reply) = one(exec, &mut s, &mut b);
    assert_eq!(reply.len(), 1, "{name}: partial read returned {reply:?}");
    assert_eq!(reply.get(b"field1"), Some(&b"value-one"[..]));

    // An update replaces the named field and keeps the others.
    let r = request(&mut b, OpKind::Update, b"kvlab-conformance-a");
    r.value.fields_mut().push(b"field1", b"changed");
    assert!(
        matches!(one(exec, &mut s, &mut b).0, Outcome::Written { .. }),
        "{name}: update"
    );
    request(&mut b, OpKind::Read, b"kvlab-conformance-a");
    let (_, reply) = one(exec, &mut s, &mut b);
    assert_eq!(
        reply.get(b"field0"),
        Some(&b"value-zero"[..]),
        "{name}: update kept field0"
    );
    assert_eq!(
        reply.get(b"field1"),
        Some(&b"changed"[..]),
        "{name}: update changed field1"
    );

    // Large values and binary keys survive intact.
    let big: Vec<u8> = (0..1_048_576u32).map(|i| (i * 7 % 251) as u8).collect();
    let key = b"kvlab-conformance-\x00\xff\x01binary";
    let r = request(&mut b, OpKind::Insert, key);
    r.value.fields_mut().push(b"field0", &big);
    one(exec, &mut s, &mut b);
    request(&mut b, OpKind::Read, key);
    let (o, reply) = one(exec, &mut s, &mut b);
    assert_eq!(
        o,
        Outcome::Hit {
            bytes: big.len() as u64
        },
        "{name}: 1 MiB value"
    );
    assert!(
        reply.get(b"field0") == Some(&big[..]),
        "{name}: 1 MiB value corrupted"
    );

    // Delete makes the key a miss.
    request(&mut b, OpKind::Delete, key);
    assert_eq!(
        one(exec, &mut s, &mut b).0,
        Outcome::Deleted,
        "{name}: delete"
    );
    request(&mut b, OpKind::Read, key);
    assert_eq!(
        one(exec, &mut s, &mut b).0,
        Outcome::Miss,
        "{name}: read after delete"
    );

    // A blob is one opaque value: stored and returned verbatim, replaced by an update.
    let blob_key = b"kvlab-conformance-blob";
    let r = request(&mut b, OpKind::Insert, blob_key);
    r.value.set_blob(b"\x00opaque\r\nbytes");
    one(exec, &mut s, &mut b);
    let r = request(&mut b, OpKind::Read, blob_key);
    r.read.set_blob();
    let (o, reply) = one(exec, &mut s, &mut b);
    assert_eq!(o, Outcome::Hit { bytes: 14 }, "{name}: blob read");
    assert_eq!(
        reply.field(0),
        (&b""[..], &b"\x00opaque\r\nbytes"[..]),
        "{name}: blob value"
    );
    let r = request(&mut b, OpKind::Update, blob_key);
    r.value.set_blob(b"new");
    one(exec, &mut s, &mut b);
    let r = request(&mut b, OpKind::Read, blob_key);
    r.read.set_blob();
    let (o, reply) = one(exec, &mut s, &mut b);
    assert_eq!(
        (o, reply.field(0).1),
        (Outcome::Hit { bytes: 3 }, &b"new"[..]),
        "{name}: blob after update"
    );
    request(&mut b, OpKind::Delete, blob_key);
    one(exec, &mut s, &mut b);

    // A multi-key read is one request: every key's value as a field named by the key,
    // hits and misses counted per key. A store that cannot do it says so.
    let (m1, m2): (&[u8], &[u8]) = (b"kvlab-conformance-m1", b"kvlab-conformance-m2");
    for (key, value) in [(m1, &b"one"[..]), (m2, b"second")] {
        let r = request(&mut b, OpKind::Insert, key);
        r.value.set_blob(value);
        one(exec, &mut s, &mut b);
    }
    let r = request(&mut b, OpKind::Read, m1);
    r.read.set_blob();
    r.more_keys.push(b"kvlab-conformance-m-absent");
    r.more_keys.push(m2);
    exec.execute(&mut s, &mut b);
    let slot = &b.slots()[0];
    match &slot.result {
        Err(e) if e.kind == StoreErrorKind::Unsupported => {}
        Err(e) => panic!("{name}: multi-key read failed: {e}"),
        Ok(o) => {
            assert_eq!(
                *o,
                Outcome::MultiRead {
                    hits: 2,
                    misses: 1,
                    bytes: 9
                },
                "{name}: multi-key read of two present keys and an absent one"
            );
            let r = &slot.reply;
            assert_eq!(
                (r.len(), r.get(m1), r.get(m2)),
                (2, Some(&b"one"[..]), Some(&b"second"[..])),
                "{name}: multi-key read values"
            );
        }
    }
    for key in [m1, m2] {
        request(&mut b, OpKind::Delete, key);
        one(exec, &mut s, &mut b);
    }

    // Scans return keys in order from the start key, at most scan_len of them.
    if store.capabilities().scan {
        for i in 0..5u8 {
            let r = request(
                &mut b,
                OpKind::Insert,
                format!("kvlab-conformance-s{i}").as_bytes(),
            );
            r.value.fields_mut().push(b"f", &[i; 10]);
            one(exec, &mut s, &mut b);
        }
        let r = request(&mut b, OpKind::Scan, b"kvlab-conformance-s1");
        r.scan_len = 3;
        // Whether the scan starts at its key is the store's to tell (network stores
        // cannot): not compared here.
        let got = one(exec, &mut s, &mut b).0;
        assert!(
            matches!(
                got,
                Outcome::Scanned {
                    records: 3,
                    bytes: 30,
                    ..
                }
            ),
            "{name}: scan of 3 from s1: {got:?}"
        );
        let r = request(&mut b, OpKind::Scan, b"kvlab-conformance-s3");
        r.scan_len = 100;
        let got = one(exec, &mut s, &mut b).0;
        assert!(
            matches!(
                got,
                Outcome::Scanned {
                    records: 2,
                    bytes: 20,
                    ..
                }
            ),
            "{name}: scan past the last key: {got:?}"
        );
    }

    // A batch executes in order and completes every slot.
    b.clear();
    for (i, kind) in [OpKind::Insert, OpKind::Read, OpKind::Delete, OpKind::Read]
        .into_iter()
        .enumerate()
    {
        let slot = b.push();
        slot.request.kind = kind;
        slot.request
            .key
            .extend_from_slice(b"kvlab-conformance-batch");
        if i == 0 {
            slot.request.value.fields_mut().push(b"field0", b"x");
        }
    }
    exec.execute(&mut s, &mut b);
    let got: Vec<_> = b.slots().iter().map(|s| s.result.clone().ok()).collect();
    assert_eq!(
        got,
        vec![
            Some(Outcome::Written {
                bytes: "kvlab-conformance-batch".len() as u64 + 7
            }),
            Some(Outcome::Hit { bytes: 1 }),
            Some(Outcome::Deleted),
            Some(Outcome::Miss)
        ],
        "{name}: batch of insert/read/delete/read"
    );
}

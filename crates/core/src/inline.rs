//! Embedded engines behind one adapter: an engine implements a few blocking primitives
//! ([`Engine`]: get, put, delete, scan), and [`execute_one`] / [`execute_batch`] turn
//! requests into them — the batch loop, the refusals of what no embedded engine does
//! (multi-key reads, arbitrary commands, unsplit read-modify-writes) and YCSB's partial
//! update (read the record, merge the updated fields, write it back, as YCSB's RocksDB
//! binding does) are written here once.
//!
//! The runner checks a workload's [`crate::Needs`] against the store's
//! [`crate::Capabilities`] before it runs, so the refusals here are a last line of
//! defence, not the way a user learns what a store lacks.

use crate::{
    Batch, OpKind, Outcome, Record, Request, StoreError, StoreErrorKind, ValueLayout, ValueRef,
};

/// The primitive operations of an embedded key-value engine, on the calling thread.
///
/// Values are the bytes the engine stores for a key: a blob verbatim, or a record in the
/// YCSB field encoding ([`Request::encode_value`]).
pub trait Engine {
    /// The store's name, for messages.
    const NAME: &'static str;

    /// Looks `key` up for a read request: `Some(with(value))` when found, with the
    /// engine's value borrowed (no copy). Caches count hits and misses here; the
    /// default is [`Engine::get`].
    #[inline]
    fn read<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        self.get(key, with)
    }

    /// Looks `key` up for the engine's own use (a partial update's read): `Some(with(value))`
    /// when found.
    fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError>;

    /// Whether `key` holds a value (a blob update replaces only a value that is there).
    /// The default looks it up.
    #[inline]
    fn contains(&mut self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.get(key, |_| ())?.is_some())
    }

    /// Stores `value` under `key`; `req` is the write asking for it (its TTL, for caches
    /// that honour one).
    fn put(&mut self, key: &[u8], value: &[u8], req: &Request) -> Result<(), StoreError>;

    /// Removes `key`; removing a key that is not there is not an error.
    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError>;

    /// Calls `each` with the values of up to `n` (at least 1) keys from `start` on, in key
    /// order, and says how many it visited and whether the first was `start` itself. The
    /// default refuses: the engine cannot scan (and says so in its capabilities).
    fn scan(
        &mut self,
        start: &[u8],
        n: u32,
        each: impl FnMut(&[u8]) -> Result<(), StoreError>,
    ) -> Result<ScanEnd, StoreError> {
        let _ = (start, n, each);
        Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!("{} cannot scan", Self::NAME),
        ))
    }

    /// Called after each request with its result, e.g. to release a cursor's position;
    /// an error replaces a successful result. The default does nothing.
    #[inline]
    fn finish(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// What an [`Engine::scan`] visited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanEnd {
    /// Records visited.
    pub records: u64,
    /// The first record visited has the start key itself (db_bench counts such a seek
    /// as found).
    pub starts_at_key: bool,
}

/// Buffers [`execute_one`] reuses from request to request, so that it does not allocate
/// once warm. One per session.
#[derive(Debug, Default)]
pub struct Scratch {
    encoded: Vec<u8>,
    current: Record,
    scanned: Record,
}

impl Scratch {
    /// Empty buffers.
    pub fn new() -> Scratch {
        Scratch::default()
    }
}

/// Executes one request on `engine`, with the reply (a read's fields, or a blob as one
/// unnamed field) in `reply`.
///
/// - A read decodes the stored value as the request asks ([`Request::decode_value`]).
/// - An insert stores the request's value ([`Request::encode_value`]).
/// - A blob update replaces the value if there is one, else misses; a field update reads
///   the record, merges the updated fields ([`Record::merge_from`]) and writes it back,
///   as YCSB's RocksDB binding does, and misses when there is no record.
/// - A delete removes the key; a scan decodes each value it visits (for the bytes read).
#[inline]
pub fn execute_one<E: Engine>(
    engine: &mut E,
    scratch: &mut Scratch,
    req: &Request,
    reply: &mut Record,
) -> Result<Outcome, StoreError> {
    if req.command.is_some() {
        return Err(StoreError::command_unsupported(E::NAME));
    }
    match req.kind {
        OpKind::Read if req.is_multi_read() => Err(StoreError::multi_read_unsupported(E::NAME)),
        OpKind::Read => match engine.read(&req.key, |value| req.decode_value(value, reply))? {
            Some(decoded) => Ok(Outcome::Hit { bytes: decoded? }),
            None => Ok(Outcome::Miss),
        },
        OpKind::Insert => {
            let value = match req.value.get() {
                ValueRef::Blob(blob) => blob,
                ValueRef::Fields(fields) => {
                    scratch.encoded.clear();
                    fields.encode_into(&mut scratch.encoded);
                    &scratch.encoded
                }
            };
            engine.put(&req.key, value, req)?;
            Ok(written(req))
        }
        OpKind::Update if req.value.is_blob() => {
            if !engine.contains(&req.key)? {
                return Ok(Outcome::Miss);
            }
            engine.put(&req.key, req.value.blob(), req)?;
            Ok(written(req))
        }
        OpKind::Update => {
            let (current, encoded) = (&mut scratch.current, &mut scratch.encoded);
            encoded.clear();
            match engine.get(&req.key, |stored| {
                merge_update(stored, req, current, encoded)
            })? {
                Some(merged) => merged?,
                None => return Ok(Outcome::Miss),
            }
            engine.put(&req.key, &scratch.encoded, req)?;
            Ok(written(req))
        }
        OpKind::Delete => {
            engine.delete(&req.key)?;
            Ok(Outcome::Deleted)
        }
        OpKind::Scan => {
            let mut bytes = 0u64;
            if req.scan_len == 0 {
                return Ok(Outcome::Scanned {
                    records: 0,
                    starts_at_key: false,
                    bytes,
                });
            }
            let scanned = &mut scratch.scanned;
            let end = engine.scan(&req.key, req.scan_len, |value| {
                bytes += req.decode_value(value, scanned)?;
                Ok(())
            })?;
            Ok(Outcome::Scanned {
                records: end.records,
                starts_at_key: end.starts_at_key,
                bytes,
            })
        }
        OpKind::ReadModifyWrite => Err(StoreError::read_modify_write_unsplit()),
    }
}

/// YCSB's partial update of a record stored in one value: decodes the stored record
/// (`stored`) into `current`, merges the update's fields into it ([`Record::merge_from`]:
/// updated fields replace theirs, new ones are added) and appends the merged record's
/// encoding to `out` ([`ValueLayout::Encoded`]'s merge). Embedded engines (through
/// [`execute_one`]) and in-process caches merge with this; the Redis string model and
/// memcached with their own [`ValueLayout`].
pub fn merge_update(
    stored: &[u8],
    update: &Request,
    current: &mut Record,
    out: &mut Vec<u8>,
) -> Result<(), StoreError> {
    ValueLayout::Encoded.merge_update(stored, update, current, out)
}

/// Executes every request of `batch` in order ([`execute_one`], then
/// [`Engine::finish`]) and completes its slot.
#[inline]
pub fn execute_batch<E: Engine>(engine: &mut E, scratch: &mut Scratch, batch: &mut Batch) {
    for slot in batch.slots_mut() {
        let mut result = execute_one(engine, scratch, &slot.request, &mut slot.reply);
        if let Err(e) = engine.finish() {
            if result.is_ok() {
                result = Err(e);
            }
        }
        slot.complete(result);
    }
}

#[inline]
fn written(req: &Request) -> Outcome {
    Outcome::Written {
        bytes: req.written_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// An engine over an ordered map, for the adapter's own logic.
    #[derive(Default)]
    struct MapEngine {
        map: BTreeMap<Vec<u8>, Vec<u8>>,
        finished: usize,
    }

    impl Engine for MapEngine {
        const NAME: &'static str = "map";

        fn get<R>(
            &mut self,
            key: &[u8],
            with: impl FnOnce(&[u8]) -> R,
        ) -> Result<Option<R>, StoreError> {
            Ok(self.map.get(key).map(|v| with(v)))
        }

        fn put(&mut self, key: &[u8], value: &[u8], _req: &Request) -> Result<(), StoreError> {
            self.map.insert(key.to_vec(), value.to_vec());
            Ok(())
        }

        fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
            self.map.remove(key);
            Ok(())
        }

        fn scan(
            &mut self,
            start: &[u8],
            n: u32,
            mut each: impl FnMut(&[u8]) -> Result<(), StoreError>,
        ) -> Result<ScanEnd, StoreError> {
            let mut end = ScanEnd::default();
            for (k, v) in self.map.range(start.to_vec()..).take(n as usize) {
                end.starts_at_key |= end.records == 0 && k == start;
                each(v)?;
                end.records += 1;
            }
            Ok(end)
        }

        fn finish(&mut self) -> Result<(), StoreError> {
            self.finished += 1;
            Ok(())
        }
    }

    fn run(
        e: &mut MapEngine,
        s: &mut Scratch,
        req: &Request,
    ) -> (Result<Outcome, StoreError>, Record) {
        let mut reply = Record::new();
        (execute_one(e, s, req, &mut reply), reply)
    }

    fn write(kind: OpKind, key: &[u8], fields: &[(&[u8], &[u8])]) -> Request {
        let mut req = Request {
            kind,
            key: key.to_vec(),
            ..Request::default()
        };
        for (n, v) in fields {
            req.value.fields_mut().push(n, v);
        }
        req
    }

    #[test]
    fn a_field_update_merges_into_the_stored_record_and_misses_without_one() {
        let (mut e, mut s) = (MapEngine::default(), Scratch::new());
        let insert = write(OpKind::Insert, b"k", &[(b"f0", b"a"), (b"f1", b"b")]);
        assert!(matches!(
            run(&mut e, &mut s, &insert).0,
            Ok(Outcome::Written { .. })
        ));
        let update = write(OpKind::Update, b"k", &[(b"f1", b"B")]);
        assert!(matches!(
            run(&mut e, &mut s, &update).0,
            Ok(Outcome::Written { .. })
        ));
        let read = write(OpKind::Read, b"k", &[]);
        let (result, reply) = run(&mut e, &mut s, &read);
        assert!(
            matches!(result, Ok(Outcome::Hit { bytes: 2 })),
            "{result:?}"
        );
        assert_eq!(
            (reply.get(b"f0"), reply.get(b"f1")),
            (Some(&b"a"[..]), Some(&b"B"[..]))
        );
        let missing = write(OpKind::Update, b"nope", &[(b"f1", b"B")]);
        assert!(matches!(run(&mut e, &mut s, &missing).0, Ok(Outcome::Miss)));
        assert!(!e.map.contains_key(&b"nope"[..]));
    }

    #[test]
    fn a_read_that_discards_counts_what_a_copying_read_copies() {
        let (mut e, mut s) = (MapEngine::default(), Scratch::new());
        let insert = write(OpKind::Insert, b"k", &[(b"f0", b"abc"), (b"f1", b"de")]);
        run(&mut e, &mut s, &insert).0.unwrap();
        e.map.insert(b"bad".to_vec(), vec![0, 0, 0, 9, b'x']);
        let shapes: [fn(&mut Request); 3] = [
            |r| r.read.set_all(),
            |r| r.read.names_mut().push(b"f1", b""),
            |r| r.read.set_blob(),
        ];
        for shape in shapes {
            for key in [&b"k"[..], b"bad", b"none"] {
                let mut read = write(OpKind::Read, key, &[]);
                shape(&mut read);
                let (copied, copy) = run(&mut e, &mut s, &read);
                read.read.set_discard(true);
                let (counted, count) = run(&mut e, &mut s, &read);
                assert_eq!(
                    format!("{counted:?}"),
                    format!("{copied:?}"),
                    "{:?} {:?}",
                    read.read.shape(),
                    String::from_utf8_lossy(key)
                );
                assert!(count.is_empty());
                if let Ok(Outcome::Hit { bytes }) = copied {
                    assert_eq!(bytes, copy.value_bytes() as u64);
                    assert!(!copy.is_empty());
                }
            }
        }
        // Scans count alike.
        let mut scan = write(OpKind::Scan, b"", &[]);
        scan.scan_len = 2;
        let copied = run(&mut e, &mut s, &scan).0;
        scan.read.set_discard(true);
        assert_eq!(
            format!("{:?}", run(&mut e, &mut s, &scan).0),
            format!("{copied:?}")
        );
    }

    #[test]
    fn a_blob_update_replaces_only_a_value_that_is_there() {
        let (mut e, mut s) = (MapEngine::default(), Scratch::new());
        let mut update = write(OpKind::Update, b"b", &[]);
        update.value.set_blob(b"v2");
        assert!(matches!(run(&mut e, &mut s, &update).0, Ok(Outcome::Miss)));
        let mut insert = write(OpKind::Insert, b"b", &[]);
        insert.value.set_blob(b"v1");
        run(&mut e, &mut s, &insert).0.unwrap();
        assert_eq!(e.map[&b"b"[..]], b"v1");
        run(&mut e, &mut s, &update).0.unwrap();
        assert_eq!(e.map[&b"b"[..]], b"v2");
    }

    #[test]
    fn scans_count_records_and_bytes_and_deletes_remove() {
        let (mut e, mut s) = (MapEngine::default(), Scratch::new());
        for k in [b"a", b"b", b"c"] {
            run(&mut e, &mut s, &write(OpKind::Insert, k, &[(b"f", b"xyz")]))
                .0
                .unwrap();
        }
        let mut scan = write(OpKind::Scan, b"b", &[]);
        scan.scan_len = 5;
        let r = run(&mut e, &mut s, &scan).0;
        assert!(
            matches!(
                r,
                Ok(Outcome::Scanned {
                    records: 2,
                    starts_at_key: true,
                    bytes: 6
                })
            ),
            "{r:?}"
        );
        // From a key that is not there: the records after it, not starting at it.
        let mut between = write(OpKind::Scan, b"bb", &[]);
        between.scan_len = 5;
        let r = run(&mut e, &mut s, &between).0;
        assert!(
            matches!(
                r,
                Ok(Outcome::Scanned {
                    records: 1,
                    starts_at_key: false,
                    bytes: 3
                })
            ),
            "{r:?}"
        );
        scan.scan_len = 0;
        let r = run(&mut e, &mut s, &scan).0;
        assert!(
            matches!(
                r,
                Ok(Outcome::Scanned {
                    records: 0,
                    starts_at_key: false,
                    bytes: 0
                })
            ),
            "{r:?}"
        );
        run(&mut e, &mut s, &write(OpKind::Delete, b"b", &[]))
            .0
            .unwrap();
        let r = run(&mut e, &mut s, &write(OpKind::Read, b"b", &[])).0;
        assert!(matches!(r, Ok(Outcome::Miss)));
    }

    #[test]
    fn what_no_embedded_engine_does_is_refused_by_name() {
        let (mut e, mut s) = (MapEngine::default(), Scratch::new());
        let mut multi = write(OpKind::Read, b"a", &[]);
        multi.more_keys.push(b"b");
        let err = run(&mut e, &mut s, &multi).0.unwrap_err();
        assert!(
            err.message.contains("map cannot read several keys"),
            "{err}"
        );
        let rmw = write(OpKind::ReadModifyWrite, b"a", &[]);
        assert_eq!(
            run(&mut e, &mut s, &rmw).0.unwrap_err().kind,
            StoreErrorKind::Unsupported
        );
        let mut batch = Batch::new();
        batch.push().request = write(OpKind::Insert, b"x", &[(b"f", b"1")]);
        batch.push().request = write(OpKind::Read, b"x", &[]);
        execute_batch(&mut e, &mut s, &mut batch);
        assert_eq!(e.finished, 2);
        assert!(matches!(batch.slots()[1].result, Ok(Outcome::Hit { .. })));
    }
}

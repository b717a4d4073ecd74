//! A trace loaded once into the compact form every simulation reads.

use hashbrown::HashMap;
use kvlab_trace::{TraceReader, TraceRecord};

use crate::error::SimError;

/// "Never requested again" as a next-access time (libCacheSim's `MAX_REUSE_DISTANCE`,
/// `INT64_MAX`; oracleGeneral's −1 reads as this too).
pub const NEVER: i64 = i64::MAX;

/// What a request does to a cache in op-aware mode (by default every request is a lookup).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum OpClass {
    /// A read: a lookup, inserted on a miss.
    Lookup = 0,
    /// A write: inserts (or refreshes) the object without counting a miss.
    Set = 1,
    /// A delete: removes the object.
    Delete = 2,
}

impl OpClass {
    pub(crate) fn of(rec: &TraceRecord) -> OpClass {
        if rec.op.is_delete() {
            OpClass::Delete
        } else if rec.op.is_write() {
            OpClass::Set
        } else {
            OpClass::Lookup
        }
    }
}

/// How a trace is loaded.
#[derive(Clone, Copy, Debug)]
pub struct LoadOptions {
    /// Skip requests whose object size is 0, as libCacheSim's readers do by default
    /// (`ignore_size_zero_req`); they are counted in [`SimTrace::skipped_zero_size`].
    pub skip_zero_size: bool,
    /// Use the trace's own next-access times ([`TraceRecord::next_access`], oracleGeneral's
    /// fourth field) instead of computing them in a pre-pass. libCacheSim's Belady reads the
    /// trace's; when they are correct both give the same order.
    pub trace_next_access: bool,
    /// Whether the trace carries sizes. Without them every request is an object of size
    /// 1, as libCacheSim's readers of such traces (plain text, ARC, LIRS…) set
    /// `obj_size = 1`, so byte counts equal object counts. [`SimTrace::from_reader`] sets it
    /// from [`kvlab_trace::TraceInfo::has_sizes`].
    pub has_sizes: bool,
    /// Runs kvlab recorded (`--record`) write a read's size as the bytes it returned: a
    /// miss (or a store that returns empty values) records no value, only the key. With
    /// this set, such a read takes the object's size from its nearest request that
    /// carried a value — the previous one, else the next one (the look-aside set that
    /// follows a miss) — so byte mode charges a missed object its real size.
    /// [`SimTrace::from_reader`] sets it from [`kvlab_trace::TraceInfo::has_outcomes`].
    pub fill_read_sizes: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            skip_zero_size: true,
            trace_next_access: false,
            has_sizes: true,
            fill_read_sizes: false,
        }
    }
}

/// A trace being loaded.
#[derive(Default)]
struct Builder {
    t: SimTrace,
    index: HashMap<u64, u32>,
    /// Requests whose size is unknown ([`LoadOptions::fill_read_sizes`]).
    unsized_reads: Vec<usize>,
}

impl Builder {
    fn push(&mut self, rec: &TraceRecord, opts: LoadOptions) -> Result<(), SimError> {
        let t = &mut self.t;
        let size = if opts.has_sizes {
            u32::try_from(rec.obj_size()).unwrap_or(u32::MAX)
        } else {
            1
        };
        if size == 0 && opts.skip_zero_size {
            t.skipped_zero_size += 1;
            return Ok(());
        }
        let next = t.ids.len();
        if next == u32::MAX as usize {
            return Err(SimError::TooManyObjects {
                max: u64::from(u32::MAX) - 1,
            });
        }
        let obj = *self.index.entry(rec.id).or_insert(next as u32);
        if obj as usize == next {
            t.ids.push(rec.id);
            t.first_size.push(size);
        }
        let op = OpClass::of(rec);
        if opts.fill_read_sizes && op == OpClass::Lookup && rec.value_size == 0 {
            self.unsized_reads.push(t.obj.len());
        }
        t.obj.push(obj);
        t.size.push(size);
        t.op.push(op);
        t.next_access.push(if rec.next_access < 0 {
            NEVER
        } else {
            rec.next_access
        });
        Ok(())
    }

    fn finish(mut self, opts: LoadOptions) -> SimTrace {
        if !self.unsized_reads.is_empty() {
            self.fill_read_sizes();
        }
        if !opts.trace_next_access {
            self.t.compute_next_access();
        }
        self.t
    }
}

impl Builder {
    /// Gives each read of [`Builder::unsized_reads`] the size of its object's nearest
    /// request with a known size: the previous one, else the next one; a read of an
    /// object no request sized keeps its key-only size. Each object's first size (the
    /// byte working set) follows.
    fn fill_read_sizes(&mut self) {
        const UNKNOWN: u32 = 0;
        let t = &mut self.t;
        let mut unsized_mark = vec![false; t.obj.len()];
        for &i in &self.unsized_reads {
            unsized_mark[i] = true;
        }
        let mut known = vec![UNKNOWN; t.ids.len()];
        let mut still = Vec::new();
        for (i, (&obj, &marked)) in t.obj.iter().zip(&unsized_mark).enumerate() {
            let o = obj as usize;
            if !marked {
                known[o] = t.size[i];
            } else if known[o] != UNKNOWN {
                t.size[i] = known[o];
            } else {
                still.push(i);
            }
        }
        known.fill(UNKNOWN);
        let mut pending = still.iter().rev().peekable();
        for (i, (&obj, &marked)) in t.obj.iter().zip(&unsized_mark).enumerate().rev() {
            let o = obj as usize;
            if !marked {
                known[o] = t.size[i];
            }
            if pending.peek() == Some(&&i) {
                pending.next();
                if known[o] != UNKNOWN {
                    t.size[i] = known[o];
                }
            }
        }
        let mut seen = vec![false; t.ids.len()];
        for (&obj, &size) in t.obj.iter().zip(&t.size) {
            let o = obj as usize;
            if !seen[o] {
                seen[o] = true;
                t.first_size[o] = size;
            }
        }
    }
}

/// One request as a policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Req {
    /// The object's dense index (0 ..  [`SimTrace::n_objects`]).
    pub obj: u32,
    /// The object's size: 1 in object mode, the traced size in byte mode.
    pub size: u64,
    /// Index of the next request to the same object ([`NEVER`] if none).
    pub next_access: i64,
    /// The object's id in the trace (W-TinyLFU's sketch hashes it, as libCacheSim's does).
    pub id: u64,
}

/// A trace in memory: per request a dense object index, a size, a next-access time and an
/// op class (17 bytes per request), plus each object's original id and first size (12 bytes
/// per object).
#[derive(Clone, Debug, Default)]
pub struct SimTrace {
    obj: Vec<u32>,
    size: Vec<u32>,
    next_access: Vec<i64>,
    op: Vec<OpClass>,
    ids: Vec<u64>,
    first_size: Vec<u32>,
    skipped_zero_size: u64,
}

impl SimTrace {
    /// Loads records (from any reader: `TraceReader`s are adapted by
    /// [`SimTrace::from_reader`]). Object sizes are [`TraceRecord::obj_size`], clamped to
    /// `u32::MAX`.
    pub fn from_records<I>(records: I, opts: LoadOptions) -> Result<SimTrace, SimError>
    where
        I: IntoIterator<Item = Result<TraceRecord, SimError>>,
    {
        let mut b = Builder::default();
        for rec in records {
            b.push(&rec?, opts)?;
        }
        Ok(b.finish(opts))
    }

    /// Loads every record of a reader (reusing one record: nothing is allocated per
    /// request); uses the reader's next-access times when it says it has them
    /// ([`kvlab_trace::TraceInfo::has_next_access`]).
    pub fn from_reader<R: TraceReader + ?Sized>(
        reader: &mut R,
        mut opts: LoadOptions,
    ) -> Result<SimTrace, SimError> {
        let info = reader.info();
        opts.trace_next_access |= info.has_next_access;
        opts.has_sizes &= info.has_sizes;
        opts.fill_read_sizes |= info.has_outcomes;
        let mut b = Builder::default();
        let mut rec = TraceRecord::default();
        loop {
            rec.clear();
            if !reader.read(&mut rec)? {
                break;
            }
            b.push(&rec, opts)?;
        }
        Ok(b.finish(opts))
    }

    /// Builds a trace from object ids alone (every size 1, every op a lookup): for tests
    /// and synthetic streams.
    pub fn from_ids(ids: impl IntoIterator<Item = u64>) -> SimTrace {
        let recs = ids.into_iter().map(|id| {
            Ok(TraceRecord {
                id,
                value_size: 1,
                next_access: -1,
                batch_len: 1,
                ..TraceRecord::default()
            })
        });
        SimTrace::from_records(recs, LoadOptions::default())
            .expect("in-memory ids cannot fail to load (fewer than 2^32 objects)")
    }

    /// Next access of each request: the index of the next request to the same object.
    fn compute_next_access(&mut self) {
        let mut seen = vec![NEVER; self.ids.len()];
        for i in (0..self.obj.len()).rev() {
            let o = self.obj[i] as usize;
            self.next_access[i] = seen[o];
            seen[o] = i as i64;
        }
    }

    /// Requests kept.
    pub fn len(&self) -> usize {
        self.obj.len()
    }

    /// True when no request was kept.
    pub fn is_empty(&self) -> bool {
        self.obj.is_empty()
    }

    /// Distinct objects.
    pub fn n_objects(&self) -> usize {
        self.ids.len()
    }

    /// Requests skipped because their size was 0.
    pub fn skipped_zero_size(&self) -> u64 {
        self.skipped_zero_size
    }

    /// Working set: distinct objects (object mode) or the sum of each object's size at its
    /// first request (byte mode), as libCacheSim's `cal_working_set_size` counts it.
    pub fn working_set(&self, mode: crate::Mode) -> u64 {
        match mode {
            crate::Mode::Object => self.ids.len() as u64,
            crate::Mode::Byte => self.first_size.iter().map(|&s| u64::from(s)).sum(),
        }
    }

    /// Sum of the sizes of all requests.
    pub fn requested_bytes(&self) -> u64 {
        self.size.iter().map(|&s| u64::from(s)).sum()
    }

    /// The `i`th request, sized for `mode`.
    #[inline]
    pub fn req(&self, i: usize, mode: crate::Mode) -> Req {
        let obj = self.obj[i];
        Req {
            obj,
            size: match mode {
                crate::Mode::Object => 1,
                crate::Mode::Byte => u64::from(self.size[i]),
            },
            next_access: self.next_access[i],
            id: self.ids[obj as usize],
        }
    }

    /// The traced size of the `i`th request (whatever the mode).
    #[inline]
    pub fn traced_size(&self, i: usize) -> u64 {
        u64::from(self.size[i])
    }

    /// The op class of the `i`th request.
    #[inline]
    pub fn op(&self, i: usize) -> OpClass {
        self.op[i]
    }

    /// Dense object index of each request.
    pub fn objects(&self) -> &[u32] {
        &self.obj
    }

    /// Traced size of each request.
    pub fn sizes(&self) -> &[u32] {
        &self.size
    }

    /// Original id of each dense object index.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvlab_trace::{TraceError, TraceInfo};

    struct VecReader {
        info: TraceInfo,
        recs: Vec<(u64, u64)>,
        at: usize,
    }

    impl TraceReader for VecReader {
        fn info(&self) -> &TraceInfo {
            &self.info
        }

        fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
            let Some(&(id, size)) = self.recs.get(self.at) else {
                return Ok(false);
            };
            self.at += 1;
            rec.id = id;
            rec.value_size = size;
            Ok(true)
        }
    }

    #[test]
    fn a_reader_loads_with_dense_ids_and_computed_next_access() {
        let mut r = VecReader {
            info: TraceInfo {
                has_sizes: true,
                ..TraceInfo::default()
            },
            recs: vec![(7, 10), (9, 0), (8, 20), (7, 10), (8, 20)],
            at: 0,
        };
        let t = SimTrace::from_reader(&mut r, LoadOptions::default()).expect("loads");
        assert_eq!(t.objects(), [0, 1, 0, 1]);
        assert_eq!(t.ids(), [7, 8]);
        assert_eq!(t.skipped_zero_size(), 1);
        assert_eq!(t.working_set(crate::Mode::Byte), 30);
        let next: Vec<i64> = (0..4)
            .map(|i| t.req(i, crate::Mode::Object).next_access)
            .collect();
        assert_eq!(next, [2, 3, NEVER, NEVER]);
    }

    #[test]
    fn a_trace_without_sizes_has_objects_of_size_one() {
        let mut r = VecReader {
            info: TraceInfo::default(),
            recs: vec![(7, 0), (8, 0), (7, 0)],
            at: 0,
        };
        let t = SimTrace::from_reader(&mut r, LoadOptions::default()).expect("loads");
        assert_eq!((t.len(), t.skipped_zero_size()), (3, 0));
        assert_eq!(t.sizes(), [1, 1, 1]);
    }

    #[test]
    fn recorded_reads_without_a_value_take_the_nearest_sized_request() {
        use kvlab_trace::Op;
        // (id, op, value size), each key 4 bytes: object 1 is read (missed), set with 96
        // bytes, read again; object 2 is set with 10, then read twice without a value;
        // object 3 is only ever read.
        let recs = [
            (1, Op::Get, 0),
            (1, Op::Set, 96),
            (1, Op::Get, 0),
            (2, Op::Set, 10),
            (2, Op::Get, 0),
            (3, Op::Get, 0),
            (2, Op::Get, 0),
        ]
        .map(|(id, op, value_size)| {
            Ok(TraceRecord {
                id,
                op,
                key_size: 4,
                value_size,
                next_access: -1,
                batch_len: 1,
                ..TraceRecord::default()
            })
        });
        let opts = LoadOptions {
            fill_read_sizes: true,
            ..LoadOptions::default()
        };
        let t = SimTrace::from_records(recs, opts).expect("loads");
        assert_eq!(t.sizes(), [100, 100, 100, 14, 14, 4, 14]);
        assert_eq!(t.working_set(crate::Mode::Byte), 100 + 14 + 4);
    }
}

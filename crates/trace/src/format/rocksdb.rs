//! RocksDB query traces (`DB::StartTrace`, `db_bench -trace_file`), trace format versions
//! before and from 0.2 (RocksDB `trace_replay/trace_replay.cc`).
//!
//! A file is records back to back, each `u64 timestamp_us | u8 type | u32 payload_len |
//! payload` (little-endian). The first record (Begin) carries the trace and RocksDB
//! versions; the last (End) may be missing when the traced process died: the reader then
//! stops after the last whole record. A record cut short is an error naming the file, the
//! record's byte offset and how many whole records came before it.
//!
//! Every operation becomes one [`TraceRecord`], as RocksDB's `trace_analyzer` counts
//! them: each entry of a WriteBatch (Put, Delete, SingleDelete, DeleteRange, Merge,
//! PutEntity, BlobIndex as a Put) and each key of a MultiGet is its own record, with
//! [`TraceRecord::batch_len`] and [`TraceRecord::batch_pos`] saying where it sits. Like
//! `trace_analyzer` (`tools/trace_analyzer_tool.cc`, `TraceAnalyzer::Handle`), a batch
//! written for a transaction's Prepare without its Commit is skipped (the Commit's batch
//! carries the same entries), and LogData, Noop, prepare and commit markers are not
//! entries. A Put's, Merge's or PutEntity's value size is the value's length; a
//! DeleteRange's end key is in [`TraceRecord::upper_bound`]; an iterator's bounds are in
//! [`TraceRecord::lower_bound`] and [`TraceRecord::upper_bound`].

use std::ops::Range;

use crate::input::Input;
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Bytes of a record header: `u64 timestamp | u8 type | u32 payload_len`.
const HEADER_BYTES: usize = 13;
/// The Begin record's payload starts with this (`kTraceMagic`).
pub(crate) const MAGIC: &[u8] = b"feedcafedeadbeef";

// Record types (`TraceType` in include/rocksdb/trace_record.h).
pub(crate) const TYPE_BEGIN: u8 = 1;
pub(crate) const TYPE_END: u8 = 2;
pub(crate) const TYPE_WRITE: u8 = 3;
pub(crate) const TYPE_GET: u8 = 4;
pub(crate) const TYPE_SEEK: u8 = 5;
pub(crate) const TYPE_SEEK_FOR_PREV: u8 = 6;
pub(crate) const TYPE_MULTI_GET: u8 = 13;

/// One operation of the current trace record, as ranges into its payload.
#[derive(Clone, Debug)]
struct Entry {
    op: Op,
    cf: u32,
    key: Range<usize>,
    value_size: u64,
    lower: Range<usize>,
    upper: Range<usize>,
}

/// Reads a RocksDB query trace.
pub struct RocksdbReader {
    input: Input,
    info: TraceInfo,
    /// The trace format version without its dot (`0.2` → 2).
    version: u32,
    /// The current record's payload and its stream offset.
    payload: Vec<u8>,
    payload_offset: u64,
    ts: u64,
    entries: Vec<Entry>,
    next: usize,
    /// Whole trace records read, Begin included.
    records: u64,
    done: bool,
}

impl RocksdbReader {
    /// Reads the Begin record of `input`.
    pub(crate) fn new(mut input: Input) -> Result<RocksdbReader, TraceError> {
        let Some(header) = input.record(HEADER_BYTES, "RocksDB trace header record")? else {
            return Err(input.corrupt(0, "empty file: a RocksDB trace starts with a Begin record"));
        };
        let (kind, len) = (header[8], u32_le(&header[9..13]) as usize);
        if kind != TYPE_BEGIN {
            return Err(input.corrupt(
                8,
                format!("a RocksDB trace starts with a Begin record (type 1), found type {kind}"),
            ));
        }
        let payload = match input.record(len, "RocksDB Begin record")? {
            Some(p) => p.to_vec(),
            None => return Err(input.corrupt(13, "the Begin record's payload is missing")),
        };
        if !payload.starts_with(MAGIC) {
            return Err(input.corrupt(13, "the Begin record does not start with feedcafedeadbeef"));
        }
        let text = String::from_utf8_lossy(&payload);
        let field = |name: &str| {
            text.split(['\t', '\n'])
                .find_map(|f| f.strip_prefix(name))
                .map(|v| v.trim().to_string())
        };
        let trace_version = field("Trace Version: ").unwrap_or_default();
        let version: u32 = trace_version.replace('.', "").parse().map_err(|_| {
            input.corrupt(
                13,
                format!("unreadable trace version {trace_version:?} in the Begin record"),
            )
        })?;
        let mut meta = vec![("rocksdb_trace_version".to_string(), trace_version)];
        if let Some(v) = field("RocksDB Version: ") {
            meta.push(("rocksdb_version".to_string(), v));
        }
        Ok(RocksdbReader {
            input,
            info: TraceInfo {
                format: "rocksdb".to_string(),
                key_encoding: KeyEncoding::Bytes,
                time_unit: TimeUnit::Micros,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: false,
                meta,
            },
            version,
            payload: Vec::new(),
            payload_offset: 0,
            ts: 0,
            entries: Vec::new(),
            next: 0,
            records: 1,
            done: false,
        })
    }

    /// Whole trace records read so far (the Begin record included): after an error, the
    /// records before the damage.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// Reads trace records until one holds operations; false at the end.
    fn next_record(&mut self) -> Result<bool, TraceError> {
        loop {
            let start = self.input.offset();
            let records = self.records;
            let header = match self.input.record(HEADER_BYTES, "record header") {
                Ok(Some(h)) => h,
                Ok(None) => return Ok(false),
                Err(e) => return Err(self.truncated(e, start, records)),
            };
            let ts = u64_le(&header[0..8]);
            let kind = header[8];
            let len = u32_le(&header[9..13]) as usize;
            self.payload_offset = start + HEADER_BYTES as u64;
            match self.input.record(len, "record payload") {
                Ok(Some(p)) => {
                    self.payload.clear();
                    self.payload.extend_from_slice(p);
                }
                Ok(None) => {
                    let e = self.input.corrupt(
                        self.payload_offset,
                        format!("truncated record: {len} payload bytes expected, the file ends"),
                    );
                    return Err(self.truncated(e, start, records));
                }
                Err(e) => return Err(self.truncated(e, start, records)),
            }
            self.records += 1;
            self.ts = ts;
            self.entries.clear();
            self.next = 0;
            match kind {
                TYPE_END => return Ok(false),
                TYPE_WRITE | TYPE_GET | TYPE_SEEK | TYPE_SEEK_FOR_PREV | TYPE_MULTI_GET => {
                    self.decode(kind)?;
                    if !self.entries.is_empty() {
                        return Ok(true);
                    }
                }
                // None, a second Begin, block-cache and IO-tracer records carry no query.
                0 | TYPE_BEGIN | 7..=12 => {}
                _ => {
                    return Err(self.input.corrupt(
                        start + 8,
                        format!("unknown trace record type {kind} (known: 1–13)"),
                    ))
                }
            }
        }
    }

    /// Names the record and the whole records before it in a truncation error.
    fn truncated(&self, e: TraceError, start: u64, records: u64) -> TraceError {
        match e {
            TraceError::Corrupt { path, what, .. } => TraceError::Corrupt {
                path,
                offset: start,
                what: format!(
                    "{what} (the record starting here; {records} whole records before it)"
                ),
            },
            other => other,
        }
    }

    /// Decodes the payload of a query record into entries.
    fn decode(&mut self, kind: u8) -> Result<(), TraceError> {
        let mut c = Cursor {
            buf: &self.payload,
            pos: 0,
        };
        let r = if self.version >= 2 {
            decode_v2(&mut c, kind, &mut self.entries)
        } else {
            decode_v1(&mut c, kind, &mut self.entries)
        };
        r.map_err(|what| {
            self.input.corrupt(
                self.payload_offset + c.pos as u64,
                format!("record type {kind}: {what}"),
            )
        })
    }
}

impl TraceReader for RocksdbReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        if self.next >= self.entries.len() {
            if self.done {
                return Ok(false);
            }
            match self.next_record() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Ok(false);
                }
                Err(e) => {
                    self.done = true;
                    self.entries.clear();
                    return Err(e);
                }
            }
        }
        let e = &self.entries[self.next];
        rec.clear();
        rec.ts = self.ts;
        rec.op = e.op;
        rec.set_key(&self.payload[e.key.clone()]);
        rec.value_size = e.value_size;
        rec.cf = e.cf;
        rec.lower_bound
            .extend_from_slice(&self.payload[e.lower.clone()]);
        rec.upper_bound
            .extend_from_slice(&self.payload[e.upper.clone()]);
        rec.batch_len = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        rec.batch_pos = u32::try_from(self.next).unwrap_or(u32::MAX);
        self.next += 1;
        Ok(true)
    }
}

/// A position in a payload; errors are `String`s the reader turns into [`TraceError`]s
/// at the cursor's offset.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn fixed(&mut self, n: usize, what: &str) -> Result<Range<usize>, String> {
        if self.left() < n {
            return Err(format!("{what}: {n} bytes expected, {} left", self.left()));
        }
        self.pos += n;
        Ok(self.pos - n..self.pos)
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        let r = self.fixed(4, what)?;
        Ok(u32_le(&self.buf[r]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        let r = self.fixed(8, what)?;
        Ok(u64_le(&self.buf[r]))
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        let r = self.fixed(1, what)?;
        Ok(self.buf[r.start])
    }

    /// A LEB128 `varint32` (RocksDB `GetVarint32`).
    fn varint32(&mut self, what: &str) -> Result<u32, String> {
        let mut v: u32 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.u8(what)?;
            v |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(format!("{what}: varint32 longer than 5 bytes"))
    }

    /// A length-prefixed slice (`GetLengthPrefixedSlice`).
    fn slice(&mut self, what: &str) -> Result<Range<usize>, String> {
        let n = self.varint32(what)? as usize;
        self.fixed(n, what)
    }
}

fn u32_le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn u64_le(b: &[u8]) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

fn entry(op: Op, cf: u32, key: Range<usize>) -> Entry {
    Entry {
        op,
        cf,
        key,
        value_size: 0,
        lower: 0..0,
        upper: 0..0,
    }
}

/// Payload bits of trace format 0.2 (`TracePayloadType` in trace_replay.h).
mod bit {
    pub const WRITE_BATCH: u64 = 1 << 1;
    pub const GET_CF: u64 = 1 << 2;
    pub const GET_KEY: u64 = 1 << 3;
    pub const ITER_CF: u64 = 1 << 4;
    pub const ITER_KEY: u64 = 1 << 5;
    pub const ITER_LOWER: u64 = 1 << 6;
    pub const ITER_UPPER: u64 = 1 << 7;
    pub const MULTI_GET_SIZE: u64 = 1 << 8;
    pub const MULTI_GET_CFS: u64 = 1 << 9;
    pub const MULTI_GET_KEYS: u64 = 1 << 10;
}

/// Trace format ≥ 0.2: a payload map, then the fields whose bits are set, in bit order
/// (`TracerHelper::DecodeTraceRecord`).
fn decode_v2(c: &mut Cursor<'_>, kind: u8, out: &mut Vec<Entry>) -> Result<(), String> {
    let map = c.u64("payload map")?;
    let mut batch = 0..0;
    let (mut get_cf, mut get_key) = (0, 0..0);
    let (mut iter_cf, mut iter_key, mut lower, mut upper) = (0, 0..0, 0..0, 0..0);
    let (mut mget_n, mut mget_cfs, mut mget_keys) = (0, 0..0, 0..0);
    // Walk the set bits from low to high, as RocksDB does.
    let mut rest = map;
    while rest != 0 {
        let b = 1u64 << rest.trailing_zeros();
        rest &= !b;
        match b {
            bit::WRITE_BATCH => batch = c.slice("WriteBatch data")?,
            bit::GET_CF => get_cf = c.u32("Get column family")?,
            bit::GET_KEY => get_key = c.slice("Get key")?,
            bit::ITER_CF => iter_cf = c.u32("iterator column family")?,
            bit::ITER_KEY => iter_key = c.slice("iterator key")?,
            bit::ITER_LOWER => lower = c.slice("iterator lower bound")?,
            bit::ITER_UPPER => upper = c.slice("iterator upper bound")?,
            bit::MULTI_GET_SIZE => mget_n = c.u32("MultiGet size")?,
            bit::MULTI_GET_CFS => mget_cfs = c.slice("MultiGet column families")?,
            bit::MULTI_GET_KEYS => mget_keys = c.slice("MultiGet keys")?,
            _ => return Err(format!("unknown payload map bit {}", b.trailing_zeros())),
        }
    }
    match kind {
        TYPE_WRITE => write_batch(c.buf, batch, out),
        TYPE_GET => {
            out.push(entry(Op::Get, get_cf, get_key));
            Ok(())
        }
        TYPE_SEEK | TYPE_SEEK_FOR_PREV => {
            let op = if kind == TYPE_SEEK {
                Op::Seek
            } else {
                Op::SeekForPrev
            };
            let mut e = entry(op, iter_cf, iter_key);
            e.lower = lower;
            e.upper = upper;
            out.push(e);
            Ok(())
        }
        _ => {
            // MultiGet: n column family ids, then n keys, each a slice, inside one slice.
            let n = mget_n as usize;
            if mget_cfs.len() != 4 * n {
                return Err(format!(
                    "MultiGet of {n} keys holds {} bytes of column family ids, not {}",
                    mget_cfs.len(),
                    4 * n
                ));
            }
            let mut keys = Cursor {
                buf: &c.buf[..mget_keys.end],
                pos: mget_keys.start,
            };
            for i in 0..n {
                let cf = u32_le(&c.buf[mget_cfs.start + 4 * i..]);
                let key = keys.slice("MultiGet key")?;
                out.push(entry(Op::MultiGet, cf, key));
            }
            Ok(())
        }
    }
}

/// Trace format before 0.2: Get and iterator payloads are `u32 cf_id, slice key`
/// (`EncodeCFAndKey`), a Write's is the raw WriteBatch.
fn decode_v1(c: &mut Cursor<'_>, kind: u8, out: &mut Vec<Entry>) -> Result<(), String> {
    match kind {
        TYPE_WRITE => write_batch(c.buf, 0..c.buf.len(), out),
        TYPE_GET | TYPE_SEEK | TYPE_SEEK_FOR_PREV => {
            let cf = c.u32("column family")?;
            let key = c.slice("key")?;
            let op = match kind {
                TYPE_GET => Op::Get,
                TYPE_SEEK => Op::Seek,
                _ => Op::SeekForPrev,
            };
            out.push(entry(op, cf, key));
            Ok(())
        }
        _ => Err("MultiGet records do not exist before trace format 0.2".to_string()),
    }
}

/// Decodes a WriteBatch (`db/write_batch.cc`: `u64 sequence | u32 count | records`).
fn write_batch(buf: &[u8], range: Range<usize>, out: &mut Vec<Entry>) -> Result<(), String> {
    let mut c = Cursor {
        buf: &buf[..range.end],
        pos: range.start,
    };
    c.u64("WriteBatch sequence")?;
    c.u32("WriteBatch count")?;
    let first = out.len();
    let (mut begin_prepare, mut commit) = (false, false);
    while c.left() > 0 {
        let tag = c.u8("WriteBatch tag")?;
        // Column-family variants carry a varint32 cf id after the tag
        // (`ReadRecordFromWriteBatch`).
        let cf = match tag {
            0x4 | 0x5 | 0x6 | 0x8 | 0xE | 0x10 | 0x17 => c.varint32("column family id")?,
            _ => 0,
        };
        match tag {
            0x1 | 0x5 | 0x2 | 0x6 | 0x11 | 0x10 | 0x16 | 0x17 => {
                let key = c.slice("key")?;
                let value = c.slice("value")?;
                let op = match tag {
                    0x2 | 0x6 => Op::Merge,
                    0x16 | 0x17 => Op::PutEntity,
                    _ => Op::Put,
                };
                let mut e = entry(op, cf, key);
                e.value_size = value.len() as u64;
                out.push(e);
            }
            0x0 | 0x4 => {
                let key = c.slice("key")?;
                out.push(entry(Op::Delete, cf, key));
            }
            0x7 | 0x8 => {
                let key = c.slice("key")?;
                out.push(entry(Op::SingleDelete, cf, key));
            }
            0xF | 0xE => {
                let begin = c.slice("range begin key")?;
                let end = c.slice("range end key")?;
                let mut e = entry(Op::DeleteRange, cf, begin);
                e.upper = end;
                out.push(e);
            }
            // LogData: a blob, not an entry.
            0x3 => {
                c.slice("log data")?;
            }
            // Noop and the BeginPrepare variants: no data.
            0xD => {}
            0x9 | 0x12 | 0x13 => begin_prepare = true,
            // EndPrepare and Rollback: an xid.
            0xA | 0xC => {
                c.slice("xid")?;
            }
            0xB => {
                c.slice("xid")?;
                commit = true;
            }
            // CommitWithTimestamp: a timestamp and an xid.
            0x15 => {
                c.slice("commit timestamp")?;
                c.slice("xid")?;
                commit = true;
            }
            _ => return Err(format!("unknown WriteBatch tag {tag:#x}")),
        }
    }
    if begin_prepare && !commit {
        out.truncate(first);
    }
    Ok(())
}

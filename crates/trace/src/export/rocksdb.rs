//! RocksDB's query-trace format (trace format 0.2, RocksDB 7.8's
//! `trace_replay/trace_replay.cc`: `TracerHelper::EncodeTrace`, `Tracer::WriteHeader`,
//! `Tracer::WriteFooter`), so that `db_bench -benchmarks=replay -trace_file=FILE
//! -db=DIR` replays any trace: a run kvlab recorded against any store, a cache trace, a
//! RocksDB trace read back.
//!
//! The file is records back to back, `u64 timestamp_us | u8 type | u32 payload_len |
//! payload`, little-endian: a Begin record (`feedcafedeadbeef\tTrace Version: 0.2\t
//! RocksDB Version: 7.8\tFormat: Timestamp OpType Payload\n`), the queries, an End
//! record. Each query's payload is a `u64` payload map and the fields its bits name:
//!
//! | kvlab op | RocksDB record |
//! |---|---|
//! | get, gets, read, other | Get (map `0xC`: `u32 cf`, key) |
//! | multiget | MultiGet (map `0x700`), the keys of one batch together |
//! | put, set, insert, update, add, replace, cas, append, prepend, incr, decr, write, put-entity | a WriteBatch Put (tag `0x1`, `0x5` with a column family) of a value of the request's value size (zero bytes) |
//! | read-modify-write | a Get, then a WriteBatch of one Put |
//! | delete, single-delete, delete-range, merge | WriteBatch Delete `0x0`, SingleDelete `0x7`, DeleteRange `0xF` (to the record's upper bound), Merge `0x2` |
//! | seek, scan | IteratorSeek (map `0x30`, bounds when present); a scan's length is not traced |
//! | seekforprev | IteratorSeekForPrev |
//!
//! The entries of one WriteBatch (consecutive records with [`TraceRecord::batch_pos`]
//! 0, 1, … of one [`TraceRecord::batch_len`]) go back into one WriteBatch, and a
//! MultiGet's keys into one MultiGet, so a RocksDB trace converted to kvtrace and back
//! has its records again. A put-entity becomes a Put (its wide-column encoding is not
//! traced). Keys of id traces are the id's 8 bytes, big-endian, as `kvlab trace dump`
//! writes them. Timestamps become microseconds; the Begin record carries the first
//! request's, and a later request stamped earlier (threads of a recording finish out of
//! order) is stamped with it: db_bench's replayer waits `(ts − begin ts) /
//! fast_forward` after its start for each record.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::format::rocksdb::{
    MAGIC, TYPE_BEGIN, TYPE_END, TYPE_GET, TYPE_MULTI_GET, TYPE_SEEK, TYPE_SEEK_FOR_PREV,
    TYPE_WRITE,
};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// The operations written, as db_bench's replay counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RocksdbSummary {
    /// Requests read from the source.
    pub requests: u64,
    /// Get records (a read-modify-write's read included).
    pub gets: u64,
    /// Keys of MultiGet records.
    pub multiget_keys: u64,
    /// Put and Merge entries of WriteBatches.
    pub puts: u64,
    /// Delete, SingleDelete and DeleteRange entries of WriteBatches.
    pub deletes: u64,
    /// IteratorSeek and IteratorSeekForPrev records.
    pub seeks: u64,
    /// Trace records written, Begin and End included.
    pub records: u64,
}

/// What a pending batch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Batch {
    None,
    Write,
    MultiGet,
}

/// Writes a RocksDB query trace, one [`TraceRecord`] at a time.
pub struct RocksdbTraceWriter<W: Write> {
    out: BufWriter<W>,
    path: PathBuf,
    time_unit: TimeUnit,
    id_keys: bool,
    /// The Begin record's timestamp, once written.
    begin_us: Option<u64>,
    last_us: u64,
    // The batch being gathered: its kind, timestamp, expected and gathered entries.
    batch: Batch,
    batch_us: u64,
    batch_len: u32,
    batch_n: u32,
    /// WriteBatch records, or a MultiGet's key slices.
    entries: Vec<u8>,
    /// A MultiGet's column family ids.
    cfs: Vec<u8>,
    payload: Vec<u8>,
    key: Vec<u8>,
    zeros: Vec<u8>,
    summary: RocksdbSummary,
}

impl<W: Write> RocksdbTraceWriter<W> {
    /// A writer of a trace whose records `info` describes (their time unit, whether keys
    /// are ids); `path` names the output in errors.
    pub fn new(out: W, path: &Path, info: &TraceInfo) -> RocksdbTraceWriter<W> {
        RocksdbTraceWriter {
            out: BufWriter::with_capacity(1 << 18, out),
            path: path.to_path_buf(),
            time_unit: info.time_unit,
            id_keys: info.key_encoding == KeyEncoding::Id,
            begin_us: None,
            last_us: 0,
            batch: Batch::None,
            batch_us: 0,
            batch_len: 0,
            batch_n: 0,
            entries: Vec::new(),
            cfs: Vec::new(),
            payload: Vec::new(),
            key: Vec::new(),
            zeros: Vec::new(),
            summary: RocksdbSummary::default(),
        }
    }

    fn io(&self) -> impl Fn(std::io::Error) -> TraceError + '_ {
        move |source| TraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Writes one trace record: header and payload.
    fn record(&mut self, ts_us: u64, kind: u8, payload: &[u8]) -> Result<(), TraceError> {
        let mut h = [0u8; 13];
        h[0..8].copy_from_slice(&ts_us.to_le_bytes());
        h[8] = kind;
        let len = u32::try_from(payload.len()).map_err(|_| TraceError::Format {
            path: self.path.clone(),
            what: format!(
                "a trace record of {} bytes: RocksDB's payload length is 32-bit",
                payload.len()
            ),
        })?;
        h[9..13].copy_from_slice(&len.to_le_bytes());
        self.out.write_all(&h).map_err(self.io())?;
        self.out.write_all(payload).map_err(self.io())?;
        self.summary.records += 1;
        Ok(())
    }

    /// Writes the Begin record on the first request.
    fn begin(&mut self, ts_us: u64) -> Result<u64, TraceError> {
        let begin = match self.begin_us {
            Some(b) => b,
            None => {
                let mut p = MAGIC.to_vec();
                p.extend_from_slice(
                    b"\tTrace Version: 0.2\tRocksDB Version: 7.8\tFormat: Timestamp OpType \
                      Payload\n",
                );
                self.record(ts_us, TYPE_BEGIN, &p)?;
                self.begin_us = Some(ts_us);
                ts_us
            }
        };
        Ok(ts_us.max(begin))
    }

    /// Adds one request.
    pub fn write(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        self.summary.requests += 1;
        let ts = super::convert_ts(rec.ts, self.time_unit, 1_000);
        let ts = self.begin(ts)?;
        self.last_us = self.last_us.max(ts);
        self.key.clear();
        if self.id_keys && rec.key.is_empty() {
            self.key.extend_from_slice(&rec.id.to_be_bytes());
        } else {
            self.key.extend_from_slice(&rec.key);
        }
        match rec.op {
            Op::Get | Op::Gets | Op::Read | Op::Other => {
                self.flush_batch()?;
                self.get(ts, rec.cf)
            }
            Op::ReadModifyWrite => {
                self.flush_batch()?;
                self.get(ts, rec.cf)?;
                self.batch_entry(Batch::Write, ts, 1, 0, rec)
            }
            Op::Seek | Op::Scan | Op::SeekForPrev => {
                self.flush_batch()?;
                self.seek(ts, rec)
            }
            Op::MultiGet => {
                self.batch_entry(Batch::MultiGet, ts, rec.batch_len, rec.batch_pos, rec)
            }
            _ => self.batch_entry(Batch::Write, ts, rec.batch_len, rec.batch_pos, rec),
        }
    }

    fn get(&mut self, ts: u64, cf: u32) -> Result<(), TraceError> {
        let mut p = std::mem::take(&mut self.payload);
        p.clear();
        p.extend_from_slice(&0xCu64.to_le_bytes());
        p.extend_from_slice(&cf.to_le_bytes());
        put_slice(&mut p, &self.key);
        self.summary.gets += 1;
        let r = self.record(ts, TYPE_GET, &p);
        self.payload = p;
        r
    }

    fn seek(&mut self, ts: u64, rec: &TraceRecord) -> Result<(), TraceError> {
        let mut p = std::mem::take(&mut self.payload);
        p.clear();
        let mut map: u64 = 0x30;
        if !rec.lower_bound.is_empty() {
            map |= 0x40;
        }
        if !rec.upper_bound.is_empty() {
            map |= 0x80;
        }
        p.extend_from_slice(&map.to_le_bytes());
        p.extend_from_slice(&rec.cf.to_le_bytes());
        put_slice(&mut p, &self.key);
        if !rec.lower_bound.is_empty() {
            put_slice(&mut p, &rec.lower_bound);
        }
        if !rec.upper_bound.is_empty() {
            put_slice(&mut p, &rec.upper_bound);
        }
        self.summary.seeks += 1;
        let kind = if rec.op == Op::SeekForPrev {
            TYPE_SEEK_FOR_PREV
        } else {
            TYPE_SEEK
        };
        let r = self.record(ts, kind, &p);
        self.payload = p;
        r
    }

    /// Adds an entry to the batch being gathered (starting one when this entry does not
    /// continue it), and writes the batch once whole.
    fn batch_entry(
        &mut self,
        kind: Batch,
        ts: u64,
        len: u32,
        pos: u32,
        rec: &TraceRecord,
    ) -> Result<(), TraceError> {
        let len = len.max(1);
        let continues =
            self.batch == kind && self.batch_len == len && self.batch_n == pos && pos > 0;
        if !continues {
            self.flush_batch()?;
            self.batch = kind;
            self.batch_us = ts;
            self.batch_len = if pos == 0 { len } else { 1 };
        }
        if kind == Batch::MultiGet {
            self.cfs.extend_from_slice(&rec.cf.to_le_bytes());
            put_slice(&mut self.entries, &self.key);
            self.summary.multiget_keys += 1;
        } else {
            self.write_entry(rec);
        }
        self.batch_n += 1;
        if self.batch_n >= self.batch_len {
            self.flush_batch()?;
        }
        Ok(())
    }

    /// One WriteBatch record (`db/write_batch.cc`): a tag, a varint32 column family for
    /// the column-family variants, then the key (and value, or range end).
    fn write_entry(&mut self, rec: &TraceRecord) {
        let e = &mut self.entries;
        let cf = rec.cf;
        let (tag, cf_tag) = match rec.op {
            Op::Delete => (0x0, 0x4),
            Op::SingleDelete => (0x7, 0x8),
            Op::DeleteRange => (0xF, 0xE),
            Op::Merge => (0x2, 0x6),
            _ => (0x1, 0x5),
        };
        if cf == 0 {
            e.push(tag);
        } else {
            e.push(cf_tag);
            put_varint32(e, cf);
        }
        put_slice(e, &self.key);
        match rec.op {
            Op::Delete | Op::SingleDelete => self.summary.deletes += 1,
            Op::DeleteRange => {
                put_slice(e, &rec.upper_bound);
                self.summary.deletes += 1;
            }
            _ => {
                let n = usize::try_from(rec.value_size).unwrap_or(usize::MAX);
                if self.zeros.len() < n {
                    self.zeros.resize(n, 0);
                }
                put_slice(e, &self.zeros[..n]);
                self.summary.puts += 1;
            }
        }
    }

    /// Writes the batch gathered so far, if any.
    fn flush_batch(&mut self) -> Result<(), TraceError> {
        let kind = std::mem::replace(&mut self.batch, Batch::None);
        let n = std::mem::take(&mut self.batch_n);
        self.batch_len = 0;
        let mut p = std::mem::take(&mut self.payload);
        p.clear();
        let r = match kind {
            Batch::None => Ok(()),
            Batch::Write => {
                // Payload map bit 1: the WriteBatch's bytes, as a slice.
                p.extend_from_slice(&0x2u64.to_le_bytes());
                let mut wb = Vec::with_capacity(12 + self.entries.len());
                wb.extend_from_slice(&0u64.to_le_bytes());
                wb.extend_from_slice(&n.to_le_bytes());
                wb.extend_from_slice(&self.entries);
                put_slice(&mut p, &wb);
                self.record(self.batch_us, TYPE_WRITE, &p)
            }
            Batch::MultiGet => {
                p.extend_from_slice(&0x700u64.to_le_bytes());
                p.extend_from_slice(&n.to_le_bytes());
                put_slice(&mut p, &self.cfs);
                put_slice(&mut p, &self.entries);
                self.record(self.batch_us, TYPE_MULTI_GET, &p)
            }
        };
        self.entries.clear();
        self.cfs.clear();
        self.payload = p;
        r
    }

    /// Writes what is gathered and the End record, and flushes; returns what was
    /// written. An empty trace is a Begin and an End record.
    pub fn finish(mut self) -> Result<RocksdbSummary, TraceError> {
        self.flush_batch()?;
        let end = self.begin(self.last_us)?;
        self.record(end.max(self.last_us), TYPE_END, &[])?;
        self.out.flush().map_err(self.io())?;
        Ok(self.summary)
    }
}

/// Writes every record of `reader` to `out` as a RocksDB query trace.
pub fn write<R: TraceReader + ?Sized, W: Write>(
    reader: &mut R,
    out: W,
    path: &Path,
) -> Result<RocksdbSummary, TraceError> {
    let mut w = RocksdbTraceWriter::new(out, path, reader.info());
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec)? {
        w.write(&rec)?;
    }
    w.finish()
}

/// A `varint32` (LEB128, RocksDB `PutVarint32`).
fn put_varint32(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-prefixed slice (`PutLengthPrefixedSlice`).
fn put_slice(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint32(out, u32::try_from(bytes.len()).unwrap_or(u32::MAX));
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_leb128() {
        let mut v = Vec::new();
        put_varint32(&mut v, 0);
        put_varint32(&mut v, 127);
        put_varint32(&mut v, 128);
        put_varint32(&mut v, 300);
        assert_eq!(v, [0, 127, 0x80, 1, 0xAC, 2]);
    }

    #[test]
    fn an_empty_trace_is_begin_and_end() {
        let mut out = Vec::new();
        let w = RocksdbTraceWriter::new(&mut out, Path::new("t"), &TraceInfo::default());
        assert_eq!(w.finish().unwrap().records, 2);
        assert_eq!(&out[13..29], MAGIC);
        assert_eq!(out[8], TYPE_BEGIN);
        assert_eq!(&out[out.len() - 13..][8..], [TYPE_END, 0, 0, 0, 0]);
    }
}

//! kvlab's own trace format, `.kvtrace`: self-describing, compact, lossless for every
//! field of [`TraceRecord`], and cut into independently compressed blocks so that large
//! traces can be read on several threads.
//!
//! [`KvtraceWriter`] writes one (buffered; [`KvtraceWriter::write`] then
//! [`KvtraceWriter::finish`]); [`KvtraceReader`] reads one as a [`TraceReader`], and
//! [`KvtraceReader::next_block`] with a [`BlockDecoder`] per thread reads its blocks in
//! parallel.
//!
//! # Byte layout
//!
//! All fixed-width integers are little-endian; `varint` is unsigned LEB128 (≤ 10 bytes);
//! `zigzag` maps a signed integer to an unsigned one (`(n << 1) ^ (n >> 63)`) before its
//! varint.
//!
//! ```text
//! file    = header block* end
//! header  = "KVTRACE\0"          8 bytes of magic
//!           u32 version          1
//!           u32 info_len
//!           info_len bytes       the source's TraceInfo as JSON (format, key_encoding,
//!                                time_unit, has_sizes, has_next_access, has_outcomes,
//!                                meta: [[name, value], …] — kvlab version, workload,
//!                                seed, the source's own facts)
//! block   = u32 compressed_len   > 0
//!           u32 raw_len          bytes of the records once decompressed
//!           u32 record_count
//!           u32 reserved         0
//!           compressed_len bytes one zstd frame holding record_count records
//! end     = 16 zero bytes        (a block header with compressed_len 0): the writer
//!                                finished; a file without it was cut short
//! record  = u8 op                position of the op in Op::ALL
//!           varint flags         which optional fields follow (bits below)
//!           zigzag ts_delta      ts minus the previous record's ts in the block (the
//!                                first record of a block: minus 0), wrapping
//!           then, in bit order, the fields whose bit is set:
//!   bit 0  varint len, bytes     key
//!   bit 1  varint                id (when the key is empty and the id is not 0, or the
//!                                id is not key_id(key))
//!   bit 2  varint                key_size (when it is not the key's length)
//!   bit 3  varint                value_size
//!   bit 4  varint                scan_len
//!   bit 5  varint                ttl_s
//!   bit 6  varint                cf
//!   bit 7  zigzag                next_access (when not −1)
//!   bit 8  varint, varint        batch_len, batch_pos (when not 1, 0)
//!   bit 9  u8                    outcome (0 unknown, 1 hit, 2 miss, 3 error)
//!   bit 10 varint                latency_ns
//!   bit 11 varint                intended_ns
//!   bit 12 varint len, bytes     lower_bound
//!   bit 13 varint len, bytes     upper_bound
//! ```
//!
//! A record that leaves every optional field at its default costs 3 bytes before
//! compression. Blocks hold about [`BLOCK_RAW_BYTES`] of records.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::input::Input;
use crate::{key_id, Op, Outcome, TraceError, TraceInfo, TraceReader, TraceRecord};

/// The file's first 8 bytes.
pub const MAGIC: &[u8; 8] = b"KVTRACE\0";
/// The layout version this module writes and reads.
pub const VERSION: u32 = 1;
/// Raw bytes of records a block holds before it is compressed and written.
pub const BLOCK_RAW_BYTES: usize = 256 * 1024;
/// Largest raw block a reader accepts: a writer's blocks hold [`BLOCK_RAW_BYTES`] plus
/// one record, so anything much larger is a damaged header.
const MAX_BLOCK_BYTES: usize = 1 << 30;
/// Bytes of a block header.
const BLOCK_HEADER_BYTES: usize = 16;
/// zstd level of blocks: fast to write from a live run, still compact.
const ZSTD_LEVEL: i32 = 3;

const F_KEY: u32 = 1 << 0;
const F_ID: u32 = 1 << 1;
const F_KEY_SIZE: u32 = 1 << 2;
const F_VALUE_SIZE: u32 = 1 << 3;
const F_SCAN_LEN: u32 = 1 << 4;
const F_TTL: u32 = 1 << 5;
const F_CF: u32 = 1 << 6;
const F_NEXT: u32 = 1 << 7;
const F_BATCH: u32 = 1 << 8;
const F_OUTCOME: u32 = 1 << 9;
const F_LATENCY: u32 = 1 << 10;
const F_INTENDED: u32 = 1 << 11;
const F_LOWER: u32 = 1 << 12;
const F_UPPER: u32 = 1 << 13;
const F_ALL: u32 = (1 << 14) - 1;

#[inline]
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn outcome_code(o: Outcome) -> u8 {
    match o {
        Outcome::Unknown => 0,
        Outcome::Hit => 1,
        Outcome::Miss => 2,
        Outcome::Error => 3,
    }
}

/// Appends `rec` to a block's raw bytes; `prev_ts` is the previous record's ts in the
/// block (0 for the first).
pub(crate) fn encode_record(out: &mut Vec<u8>, rec: &TraceRecord, prev_ts: u64) {
    let mut flags = 0;
    if !rec.key.is_empty() {
        flags |= F_KEY;
    }
    let implied_id = if rec.key.is_empty() {
        0
    } else {
        key_id(&rec.key)
    };
    if rec.id != implied_id {
        flags |= F_ID;
    }
    if rec.key_size as usize != rec.key.len() {
        flags |= F_KEY_SIZE;
    }
    if rec.value_size != 0 {
        flags |= F_VALUE_SIZE;
    }
    if rec.scan_len != 0 {
        flags |= F_SCAN_LEN;
    }
    if rec.ttl_s != 0 {
        flags |= F_TTL;
    }
    if rec.cf != 0 {
        flags |= F_CF;
    }
    if rec.next_access != -1 {
        flags |= F_NEXT;
    }
    if rec.batch_len != 1 || rec.batch_pos != 0 {
        flags |= F_BATCH;
    }
    if rec.outcome != Outcome::Unknown {
        flags |= F_OUTCOME;
    }
    if rec.latency_ns != 0 {
        flags |= F_LATENCY;
    }
    if rec.intended_ns != 0 {
        flags |= F_INTENDED;
    }
    if !rec.lower_bound.is_empty() {
        flags |= F_LOWER;
    }
    if !rec.upper_bound.is_empty() {
        flags |= F_UPPER;
    }
    // Op::ALL is in declaration order, so the discriminant is the op's position.
    out.push(rec.op as u8);
    put_varint(out, u64::from(flags));
    put_varint(out, zigzag(rec.ts.wrapping_sub(prev_ts) as i64));
    if flags & F_KEY != 0 {
        put_varint(out, rec.key.len() as u64);
        out.extend_from_slice(&rec.key);
    }
    if flags & F_ID != 0 {
        put_varint(out, rec.id);
    }
    if flags & F_KEY_SIZE != 0 {
        put_varint(out, u64::from(rec.key_size));
    }
    if flags & F_VALUE_SIZE != 0 {
        put_varint(out, rec.value_size);
    }
    if flags & F_SCAN_LEN != 0 {
        put_varint(out, u64::from(rec.scan_len));
    }
    if flags & F_TTL != 0 {
        put_varint(out, u64::from(rec.ttl_s));
    }
    if flags & F_CF != 0 {
        put_varint(out, u64::from(rec.cf));
    }
    if flags & F_NEXT != 0 {
        put_varint(out, zigzag(rec.next_access));
    }
    if flags & F_BATCH != 0 {
        put_varint(out, u64::from(rec.batch_len));
        put_varint(out, u64::from(rec.batch_pos));
    }
    if flags & F_OUTCOME != 0 {
        out.push(outcome_code(rec.outcome));
    }
    if flags & F_LATENCY != 0 {
        put_varint(out, rec.latency_ns);
    }
    if flags & F_INTENDED != 0 {
        put_varint(out, rec.intended_ns);
    }
    if flags & F_LOWER != 0 {
        put_varint(out, rec.lower_bound.len() as u64);
        out.extend_from_slice(&rec.lower_bound);
    }
    if flags & F_UPPER != 0 {
        put_varint(out, rec.upper_bound.len() as u64);
        out.extend_from_slice(&rec.upper_bound);
    }
}

/// Decodes records from one block's raw bytes. Its primitives return `Option`s (two
/// registers, no error value to build on the hot path); [`RecordDecoder::record`] says
/// what failed.
struct RecordDecoder<'a> {
    buf: &'a [u8],
    pos: usize,
    prev_ts: u64,
}

/// Why a record did not decode.
const TRUNCATED: &str =
    "a field runs past the block or is out of range (a varint over 10 bytes, a \
     32-bit field over 32 bits, an outcome code over 3)";

impl RecordDecoder<'_> {
    #[inline(always)]
    fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// A varint: one-byte values (most fields) on the fast path.
    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Some(u64::from(b));
            }
        }
        self.varint_long()
    }

    /// A varint of 2+ bytes. With 8 bytes at hand, branch-free: the first byte without
    /// its top bit ends the varint, and the 7-bit groups are gathered by shifts.
    #[inline]
    fn varint_long(&mut self) -> Option<u64> {
        if let Some(b) = self.buf.get(self.pos..self.pos + 8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            let w = u64::from_le_bytes(a);
            let stops = !w & 0x8080_8080_8080_8080;
            if stops != 0 {
                let len = (stops.trailing_zeros() / 8 + 1) as usize;
                let x = if len == 8 {
                    w
                } else {
                    w & ((1u64 << (8 * len)) - 1)
                };
                let v = (x & 0x7f)
                    | ((x >> 1) & (0x7f << 7))
                    | ((x >> 2) & (0x7f << 14))
                    | ((x >> 3) & (0x7f << 21))
                    | ((x >> 4) & (0x7f << 28))
                    | ((x >> 5) & (0x7f << 35))
                    | ((x >> 6) & (0x7f << 42))
                    | ((x >> 7) & (0x7f << 49));
                self.pos += len;
                return Some(v);
            }
        }
        self.varint_slow()
    }

    /// A varint near the block's end, or of 9–10 bytes.
    #[inline(never)]
    fn varint_slow(&mut self) -> Option<u64> {
        let w = &self.buf[self.pos.min(self.buf.len())..];
        let mut v: u64 = 0;
        for (i, &b) in w.iter().take(10).enumerate() {
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                if i == 9 && b > 1 {
                    return None;
                }
                self.pos += i + 1;
                return Some(v);
            }
        }
        None
    }

    #[inline(always)]
    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }

    #[inline]
    fn bytes(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let n = usize::try_from(self.varint()?).ok()?;
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len())?;
        out.extend_from_slice(&self.buf[self.pos..end]);
        self.pos = end;
        Some(())
    }

    /// Fills `rec` with the next record.
    #[inline]
    fn record(&mut self, rec: &mut TraceRecord) -> Result<(), &'static str> {
        rec.clear();
        let op = self.byte().ok_or(TRUNCATED)?;
        rec.op = *Op::ALL
            .get(op as usize)
            .ok_or("an op code past the known ops")?;
        let flags = self.u32().ok_or(TRUNCATED)?;
        if flags & !F_ALL != 0 {
            return Err("unknown flag bits");
        }
        self.fields(flags, rec).ok_or(TRUNCATED)
    }

    #[inline(always)]
    fn fields(&mut self, flags: u32, rec: &mut TraceRecord) -> Option<()> {
        self.prev_ts = self.prev_ts.wrapping_add(unzigzag(self.varint()?) as u64);
        rec.ts = self.prev_ts;
        if flags & F_KEY != 0 {
            self.bytes(&mut rec.key)?;
            rec.key_size = u32::try_from(rec.key.len()).unwrap_or(u32::MAX);
            rec.id = key_id(&rec.key);
        }
        if flags & F_ID != 0 {
            rec.id = self.varint()?;
        }
        if flags & F_KEY_SIZE != 0 {
            rec.key_size = self.u32()?;
        }
        if flags & F_VALUE_SIZE != 0 {
            rec.value_size = self.varint()?;
        }
        if flags & F_SCAN_LEN != 0 {
            rec.scan_len = self.u32()?;
        }
        if flags & F_TTL != 0 {
            rec.ttl_s = self.u32()?;
        }
        if flags & F_CF != 0 {
            rec.cf = self.u32()?;
        }
        if flags & F_NEXT != 0 {
            rec.next_access = unzigzag(self.varint()?);
        }
        if flags & F_BATCH != 0 {
            rec.batch_len = self.u32()?;
            rec.batch_pos = self.u32()?;
        }
        if flags & F_OUTCOME != 0 {
            rec.outcome = match self.byte()? {
                0 => Outcome::Unknown,
                1 => Outcome::Hit,
                2 => Outcome::Miss,
                3 => Outcome::Error,
                _ => return None,
            };
        }
        if flags & F_LATENCY != 0 {
            rec.latency_ns = self.varint()?;
        }
        if flags & F_INTENDED != 0 {
            rec.intended_ns = self.varint()?;
        }
        if flags & F_LOWER != 0 {
            self.bytes(&mut rec.lower_bound)?;
        }
        if flags & F_UPPER != 0 {
            self.bytes(&mut rec.upper_bound)?;
        }
        Some(())
    }
}

/// Writes a `.kvtrace` stream.
pub struct KvtraceWriter<W: Write> {
    out: W,
    path: PathBuf,
    raw: Vec<u8>,
    compressed: Vec<u8>,
    count: u32,
    prev_ts: u64,
    compressor: zstd::bulk::Compressor<'static>,
    written: u64,
}

impl<W: Write> KvtraceWriter<W> {
    /// Starts a stream to `out` (named `path` in errors) for records of a trace
    /// described by `info`; kvlab's version is added to its meta (`kvlab_version`) when
    /// it is not there.
    pub fn new(mut out: W, path: &Path, info: &TraceInfo) -> Result<KvtraceWriter<W>, TraceError> {
        let io = |source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut info = info.clone();
        if !info.meta.iter().any(|(k, _)| k == "kvlab_version") {
            info.meta.push((
                "kvlab_version".to_string(),
                env!("CARGO_PKG_VERSION").to_string(),
            ));
        }
        let json = serde_json::to_vec(&info).map_err(|e| io(std::io::Error::other(e)))?;
        let mut header = Vec::with_capacity(16 + json.len());
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&VERSION.to_le_bytes());
        header.extend_from_slice(&u32::try_from(json.len()).unwrap_or(u32::MAX).to_le_bytes());
        header.extend_from_slice(&json);
        out.write_all(&header).map_err(io)?;
        let compressor = zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(io)?;
        Ok(KvtraceWriter {
            out,
            path: path.to_path_buf(),
            raw: Vec::with_capacity(BLOCK_RAW_BYTES + 4096),
            compressed: Vec::new(),
            count: 0,
            prev_ts: 0,
            compressor,
            written: header.len() as u64,
        })
    }

    fn io(&self, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Appends one record.
    #[inline]
    pub fn write(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        encode_record(&mut self.raw, rec, self.prev_ts);
        self.prev_ts = rec.ts;
        self.count += 1;
        if self.raw.len() >= BLOCK_RAW_BYTES {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Compresses and writes the records gathered so far as one block.
    fn flush_block(&mut self) -> Result<(), TraceError> {
        if self.count == 0 {
            return Ok(());
        }
        let bound = zstd::zstd_safe::compress_bound(self.raw.len());
        self.compressed.clear();
        self.compressed.reserve(bound);
        let r = self
            .compressor
            .compress_to_buffer(&self.raw, &mut self.compressed);
        r.map_err(|e| self.io(e))?;
        let mut header = [0u8; BLOCK_HEADER_BYTES];
        header[0..4].copy_from_slice(&(self.compressed.len() as u32).to_le_bytes());
        header[4..8].copy_from_slice(&(self.raw.len() as u32).to_le_bytes());
        header[8..12].copy_from_slice(&self.count.to_le_bytes());
        let r = self
            .out
            .write_all(&header)
            .and_then(|()| self.out.write_all(&self.compressed));
        r.map_err(|e| self.io(e))?;
        self.written += (BLOCK_HEADER_BYTES + self.compressed.len()) as u64;
        self.raw.clear();
        self.count = 0;
        self.prev_ts = 0;
        Ok(())
    }

    /// Writes the last block and the end marker, flushes, and returns the output.
    pub fn finish(mut self) -> Result<W, TraceError> {
        self.flush_block()?;
        let r = self
            .out
            .write_all(&[0u8; BLOCK_HEADER_BYTES])
            .and_then(|()| self.out.flush());
        r.map_err(|e| self.io(e))?;
        Ok(self.out)
    }

    /// Bytes written to the output so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }
}

/// One compressed block of a `.kvtrace`, as [`KvtraceReader::next_block`] hands it out
/// for decoding on any thread.
#[derive(Clone, Debug)]
pub struct KvtraceBlock {
    /// Byte offset of the block's header in the stream.
    pub offset: u64,
    /// Records in the block.
    pub record_count: u32,
    raw_len: u32,
    compressed: Vec<u8>,
}

/// Decodes [`KvtraceBlock`]s (one per thread: it keeps a zstd context and a buffer).
pub struct BlockDecoder {
    decompressor: zstd::bulk::Decompressor<'static>,
    raw: Vec<u8>,
    path: PathBuf,
}

impl BlockDecoder {
    /// A decoder naming `path` in errors.
    pub fn new(path: &Path) -> Result<BlockDecoder, TraceError> {
        let decompressor = zstd::bulk::Decompressor::new().map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(BlockDecoder {
            decompressor,
            raw: Vec::new(),
            path: path.to_path_buf(),
        })
    }

    fn decompress(
        &mut self,
        offset: u64,
        compressed: &[u8],
        raw_len: u32,
    ) -> Result<(), TraceError> {
        if raw_len as usize > MAX_BLOCK_BYTES {
            return Err(TraceError::Corrupt {
                path: self.path.clone(),
                offset,
                what: format!("block of {raw_len} raw bytes; at most {MAX_BLOCK_BYTES} expected"),
            });
        }
        self.raw.clear();
        self.raw.reserve(raw_len as usize);
        match self
            .decompressor
            .decompress_to_buffer(compressed, &mut self.raw)
        {
            Ok(n) if n == raw_len as usize => Ok(()),
            Ok(n) => Err(TraceError::Corrupt {
                path: self.path.clone(),
                offset,
                what: format!("block decompresses to {n} bytes, its header says {raw_len}"),
            }),
            Err(e) => Err(TraceError::Corrupt {
                path: self.path.clone(),
                offset,
                what: format!("block does not decompress: {e}"),
            }),
        }
    }

    /// Calls `f` with each record of `block`, in order, through one reused record.
    pub fn decode(
        &mut self,
        block: &KvtraceBlock,
        mut f: impl FnMut(&TraceRecord),
    ) -> Result<(), TraceError> {
        self.decompress(block.offset, &block.compressed, block.raw_len)?;
        let mut d = RecordDecoder {
            buf: &self.raw,
            pos: 0,
            prev_ts: 0,
        };
        let mut rec = TraceRecord::default();
        for i in 0..block.record_count {
            d.record(&mut rec).map_err(|what| TraceError::Corrupt {
                path: self.path.clone(),
                offset: block.offset,
                what: format!("record {i} of the block (raw byte {}): {what}", d.pos),
            })?;
            f(&rec);
        }
        if d.pos != self.raw.len() {
            return Err(TraceError::Corrupt {
                path: self.path.clone(),
                offset: block.offset,
                what: format!(
                    "the block holds {} bytes after its last record",
                    self.raw.len() - d.pos
                ),
            });
        }
        Ok(())
    }
}

/// The next block's header and compressed bytes (borrowed from `input`): `(offset,
/// raw_len, record_count, compressed)`; `None` after the end marker. Any error sets
/// `done`.
#[expect(clippy::type_complexity, reason = "a private helper's one tuple")]
fn next_raw_block<'a>(
    input: &'a mut Input,
    done: &mut bool,
) -> Result<Option<(u64, u32, u32, &'a [u8])>, TraceError> {
    if *done {
        return Ok(None);
    }
    // Until a block is whole, a failure is final.
    *done = true;
    let offset = input.offset();
    let Some(h) = input.record(BLOCK_HEADER_BYTES, "kvtrace block header")? else {
        return Err(input.corrupt(
            offset,
            "the stream ends without the end marker (the writer did not finish)",
        ));
    };
    let word = |i: usize| u32::from_le_bytes([h[4 * i], h[4 * i + 1], h[4 * i + 2], h[4 * i + 3]]);
    let (compressed_len, raw_len, record_count) = (word(0), word(1), word(2));
    if compressed_len == 0 {
        if raw_len != 0 || record_count != 0 {
            return Err(input.corrupt(offset, "an end marker with a non-zero count"));
        }
        return Ok(None);
    }
    let n = compressed_len as usize;
    if n > MAX_BLOCK_BYTES {
        return Err(input.corrupt(
            offset,
            format!("a block of {n} bytes; at most {MAX_BLOCK_BYTES} expected"),
        ));
    }
    if input.peek(n)?.len() < n {
        return Err(input.corrupt(
            offset,
            format!("the stream ends inside the block (its header says {n} bytes)"),
        ));
    }
    *done = false;
    // `peek` saw the n bytes, so `record` has them.
    let c = input.record(n, "kvtrace block")?.unwrap_or(&[]);
    Ok(Some((offset, raw_len, record_count, c)))
}

/// Reads a `.kvtrace` stream.
pub struct KvtraceReader {
    input: Input,
    info: TraceInfo,
    source: TraceInfo,
    decoder: BlockDecoder,
    /// Decoded position in the current block.
    pos: usize,
    left: u32,
    prev_ts: u64,
    block_offset: u64,
    done: bool,
}

impl KvtraceReader {
    pub(crate) fn new(mut input: Input) -> Result<KvtraceReader, TraceError> {
        let Some(h) = input.record(16, "kvtrace header")? else {
            return Err(input.corrupt(0, "empty file: a kvtrace starts with \"KVTRACE\\0\""));
        };
        if &h[..8] != MAGIC {
            return Err(input.corrupt(0, "not a kvtrace: \"KVTRACE\\0\" expected"));
        }
        let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
        let info_len = u32::from_le_bytes([h[12], h[13], h[14], h[15]]) as usize;
        if version != VERSION {
            return Err(input.corrupt(
                8,
                format!("kvtrace version {VERSION} expected, found {version}"),
            ));
        }
        let Some(json) = input.record(info_len, "kvtrace header")? else {
            return Err(input.corrupt(16, "the header's TraceInfo is missing"));
        };
        let source: TraceInfo = serde_json::from_slice(json).map_err(|e| {
            input.corrupt(16, format!("the header's TraceInfo is not valid JSON: {e}"))
        })?;
        let mut info = source.clone();
        info.format = "kvtrace".to_string();
        if !info.meta.iter().any(|(k, _)| k == "source_format") {
            info.meta
                .push(("source_format".to_string(), source.format.clone()));
        }
        let decoder = BlockDecoder::new(input.path())?;
        Ok(KvtraceReader {
            input,
            info,
            source,
            decoder,
            pos: 0,
            left: 0,
            prev_ts: 0,
            block_offset: 0,
            done: false,
        })
    }

    /// The [`TraceInfo`] the writer was given (the source's format and facts).
    pub fn source_info(&self) -> &TraceInfo {
        &self.source
    }

    /// The next compressed block, for decoding elsewhere with a [`BlockDecoder`];
    /// `None` after the end marker. Do not mix with [`TraceReader::read`].
    pub fn next_block(&mut self) -> Result<Option<KvtraceBlock>, TraceError> {
        Ok(next_raw_block(&mut self.input, &mut self.done)?.map(
            |(offset, raw_len, record_count, c)| KvtraceBlock {
                offset,
                record_count,
                raw_len,
                compressed: c.to_vec(),
            },
        ))
    }

    /// Decompresses the next block with records; false after the end marker.
    fn load_block(&mut self) -> Result<bool, TraceError> {
        loop {
            let next = next_raw_block(&mut self.input, &mut self.done)?;
            let Some((offset, raw_len, record_count, compressed)) = next else {
                return Ok(false);
            };
            if let Err(e) = self.decoder.decompress(offset, compressed, raw_len) {
                self.done = true;
                return Err(e);
            }
            self.pos = 0;
            self.left = record_count;
            self.prev_ts = 0;
            self.block_offset = offset;
            if record_count > 0 {
                return Ok(true);
            }
        }
    }
}

impl TraceReader for KvtraceReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    #[inline]
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        if self.left == 0 && !self.load_block()? {
            return Ok(false);
        }
        let mut d = RecordDecoder {
            buf: &self.decoder.raw,
            pos: self.pos,
            prev_ts: self.prev_ts,
        };
        if let Err(what) = d.record(rec) {
            self.done = true;
            self.left = 0;
            return Err(self.input.corrupt(
                self.block_offset,
                format!("in the block starting here, raw byte {}: {what}", d.pos),
            ));
        }
        self.pos = d.pos;
        self.prev_ts = d.prev_ts;
        self.left -= 1;
        if self.left == 0 && self.pos != self.decoder.raw.len() {
            self.done = true;
            return Err(self.input.corrupt(
                self.block_offset,
                format!(
                    "the block starting here holds {} bytes after its last record",
                    self.decoder.raw.len() - self.pos
                ),
            ));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips() {
        for v in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn a_default_record_costs_three_bytes() {
        let mut rec = TraceRecord::default();
        rec.clear();
        let mut out = Vec::new();
        encode_record(&mut out, &rec, 0);
        assert_eq!(out, [0, 0, 0]);
    }
}

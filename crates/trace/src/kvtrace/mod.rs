//! kvlab's own trace format, `.kvtrace`: self-describing, compact, lossless for every
//! field of [`TraceRecord`], and cut into independently compressed blocks so that large
//! traces can be read on several threads.
//!
//! [`KvtraceWriter`] writes one (buffered; [`KvtraceWriter::write`] then
//! [`KvtraceWriter::finish`]); [`KvtraceReader`] reads one as a [`TraceReader`],
//! decoding the blocks ahead on a few threads of its own
//! ([`crate::OpenOptions::decode_threads`], by default [`default_decode_threads`]) and
//! handing out their records in file order. [`KvtraceReader::next_block`] with a
//! [`BlockDecoder`] per thread reads the blocks for whoever wants to spread them
//! otherwise.
//!
//! # Byte layout
//!
//! All fixed-width integers are little-endian; `varint` is unsigned LEB128; `zigzag`
//! maps a signed integer to an unsigned one (`(n << 1) ^ (n >> 63)`).
//!
//! ```text
//! file    = header block* end
//! header  = "KVTRACE\0"          8 bytes of magic
//!           u32 version          2 (1: intended_ns absolute, still read)
//!           u32 info_len
//!           info_len bytes       the source's TraceInfo as JSON (format, key_encoding,
//!                                time_unit, has_sizes, has_next_access, has_outcomes,
//!                                meta: [[name, value], …] — kvlab version, workload,
//!                                seed, the source's own facts)
//! block   = u32 compressed_len   > 0
//!           u32 raw_len          bytes of the block once decompressed
//!           u32 record_count
//!           u32 reserved         0
//!           compressed_len bytes one zstd frame holding the raw block
//! end     = 16 zero bytes        (a block header with compressed_len 0): the writer
//!                                finished; a file without it was cut short
//! raw     = varint record_count
//!           17 columns           one value per record each, in this order
//!           key bytes            the records' keys back to back (lengths: key_len)
//!           lower bytes          their lower bounds back to back
//!           upper bytes          their upper bounds back to back
//! column  = u8 width             0, 1, 2, 4 or 8; 0: every value is 0, nothing follows
//!           record_count × width bytes
//! ```
//!
//! The columns, each stored so that the field's default is 0 (a column of defaults
//! costs one byte):
//!
//! | # | column | value |
//! |---|---|---|
//! | 0 | op | position of the op in `Op::ALL` |
//! | 1 | ts | zigzag(ts − the previous record's ts in the block; the first: − 0), wrapping |
//! | 2 | key_len | the key's length |
//! | 3 | id | id XOR key_id(key) (for an empty key: id) |
//! | 4 | key_size | key_size XOR the key's length |
//! | 5 | value_size | value_size |
//! | 6 | scan_len | scan_len |
//! | 7 | ttl_s | ttl_s |
//! | 8 | cf | cf |
//! | 9 | next_access | zigzag(next_access + 1) |
//! | 10 | batch_len | batch_len XOR 1 |
//! | 11 | batch_pos | batch_pos |
//! | 12 | outcome | 0 unknown, 1 hit, 2 miss, 3 error |
//! | 13 | latency_ns | latency_ns |
//! | 14 | intended_ns | zigzag(intended_ns − ts), wrapping (0 in a closed loop) |
//! | 15 | lower_len | the lower bound's length |
//! | 16 | upper_len | the upper bound's length |
//!
//! Columns make both ends fast: a reader decodes a whole column in one tight loop and
//! then hands out records by index, and zstd sees like values together. Blocks hold at
//! most [`BLOCK_RECORDS`] records, fewer when their keys and bounds pass
//! [`BLOCK_RAW_BYTES`].

use std::io::Write;
use std::path::{Path, PathBuf};

mod ahead;
mod block;

use ahead::{DecoderPool, Slot};
use block::{BlockBuilder, Columns, Cursor};

use crate::input::Input;
use crate::{TraceError, TraceInfo, TraceReader, TraceRecord};

/// The file's first 8 bytes.
pub const MAGIC: &[u8; 8] = b"KVTRACE\0";
/// The layout version this module writes; it reads this one and version 1 (whose
/// intended times are absolute).
pub const VERSION: u32 = 2;
/// The oldest layout version read.
const OLDEST_VERSION: u32 = 1;
/// Bytes of keys and bounds after which a block is written even if it holds fewer than
/// [`BLOCK_RECORDS`] records.
pub const BLOCK_RAW_BYTES: usize = 256 * 1024;
/// Largest raw block a reader accepts: a writer's blocks hold at most
/// [`BLOCK_RECORDS`] × 136 bytes plus [`BLOCK_RAW_BYTES`] and one record's keys, so
/// anything much larger is a damaged header.
const MAX_BLOCK_BYTES: usize = 1 << 30;
/// Bytes of a block header.
const BLOCK_HEADER_BYTES: usize = 16;
/// zstd level of blocks: fast to write from a live run (level 3 cost the recorder's
/// writer thread ~15 % more CPU for files ~3 % smaller), still compact.
const ZSTD_LEVEL: i32 = 1;

/// Records a block holds at most (fewer when their keys are long).
pub const BLOCK_RECORDS: usize = 16 * 1024;

/// Writes a `.kvtrace` stream.
pub struct KvtraceWriter<W: Write> {
    out: W,
    path: PathBuf,
    block: BlockBuilder,
    raw: Vec<u8>,
    compressed: Vec<u8>,
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
            block: BlockBuilder::default(),
            raw: Vec::new(),
            compressed: Vec::new(),
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
        self.block.push(rec);
        self.after_push()
    }

    /// Appends one record with a byte key, whose id is taken to be the one its key
    /// implies ([`crate::key_id`], what every reader gives a byte key): `rec.id` is not
    /// read, and the key is not hashed. For writers that never set ids of their own,
    /// such as the recorder.
    #[inline]
    pub fn write_key_id(&mut self, rec: &TraceRecord) -> Result<(), TraceError> {
        self.block.push_key_id(rec);
        self.after_push()
    }

    #[inline]
    fn after_push(&mut self) -> Result<(), TraceError> {
        if self.block.len() >= BLOCK_RECORDS || self.block.byte_len() >= BLOCK_RAW_BYTES {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Compresses and writes the records gathered so far as one block.
    fn flush_block(&mut self) -> Result<(), TraceError> {
        let count = self.block.len() as u32;
        if count == 0 {
            return Ok(());
        }
        self.raw.clear();
        self.raw.reserve(self.block.raw_bound());
        self.block.encode(&mut self.raw);
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
        header[8..12].copy_from_slice(&count.to_le_bytes());
        let r = self
            .out
            .write_all(&header)
            .and_then(|()| self.out.write_all(&self.compressed));
        r.map_err(|e| self.io(e))?;
        self.written += (BLOCK_HEADER_BYTES + self.compressed.len()) as u64;
        Ok(())
    }

    /// Writes the records gathered so far as a block (however few) and flushes the
    /// output: what was written survives a crash of the writing process (a reader then
    /// reads every flushed record and reports the missing end marker).
    pub fn flush(&mut self) -> Result<(), TraceError> {
        self.flush_block()?;
        let r = self.out.flush();
        r.map_err(|e| self.io(e))
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
#[derive(Clone, Debug, Default)]
pub struct KvtraceBlock {
    /// Byte offset of the block's header in the stream.
    pub offset: u64,
    /// Records in the block.
    pub record_count: u32,
    raw_len: u32,
    /// The file's layout version.
    version: u32,
    compressed: Vec<u8>,
}

impl KvtraceBlock {
    /// Makes this block the one at `offset` (whose header said `raw_len` and
    /// `record_count`) with the compressed bytes `c`, keeping its buffer.
    fn refill(&mut self, offset: u64, raw_len: u32, record_count: u32, version: u32, c: &[u8]) {
        self.offset = offset;
        self.raw_len = raw_len;
        self.record_count = record_count;
        self.version = version;
        self.compressed.clear();
        self.compressed.extend_from_slice(c);
    }
}

/// A block once decompressed: its raw bytes and its decoded columns, which hand out
/// its records.
#[derive(Default)]
struct Decoded {
    raw: Vec<u8>,
    columns: Columns,
}

/// Decompresses and decodes blocks: a zstd context, and the file errors name.
struct Unpacker {
    decompressor: zstd::bulk::Decompressor<'static>,
    path: PathBuf,
}

impl Unpacker {
    fn new(path: &Path) -> Result<Unpacker, TraceError> {
        let decompressor = zstd::bulk::Decompressor::new().map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Unpacker {
            decompressor,
            path: path.to_path_buf(),
        })
    }

    /// Decompresses the block at `offset` (its compressed bytes, and what its header
    /// says) into `out` and decodes its columns. On an error, `out` holds nothing to
    /// read.
    fn unpack(
        &mut self,
        offset: u64,
        compressed: &[u8],
        raw_len: u32,
        record_count: u32,
        version: u32,
        out: &mut Decoded,
    ) -> Result<(), TraceError> {
        if raw_len as usize > MAX_BLOCK_BYTES {
            return Err(TraceError::Corrupt {
                path: self.path.clone(),
                offset,
                what: format!("block of {raw_len} raw bytes; at most {MAX_BLOCK_BYTES} expected"),
            });
        }
        out.raw.clear();
        out.raw.reserve(raw_len as usize);
        match self
            .decompressor
            .decompress_to_buffer(compressed, &mut out.raw)
        {
            Ok(n) if n == raw_len as usize => out
                .columns
                .decode(&out.raw, record_count, version)
                .map_err(|what| TraceError::Corrupt {
                    path: self.path.clone(),
                    offset,
                    what: format!("in the block starting here: {what}"),
                }),
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

    /// [`Unpacker::unpack`] of a block read ahead.
    fn unpack_block(&mut self, block: &KvtraceBlock, out: &mut Decoded) -> Result<(), TraceError> {
        self.unpack(
            block.offset,
            &block.compressed,
            block.raw_len,
            block.record_count,
            block.version,
            out,
        )
    }
}

/// Decodes the raw (decompressed) block `raw` of a file of layout `version`, whose
/// header says it holds `count` records, and calls `f` with each record in order: the
/// columns without the zstd frame around them, for the `kvtrace_block` fuzz target.
pub(crate) fn decode_raw_block(
    raw: &[u8],
    count: u32,
    version: u32,
    mut f: impl FnMut(&TraceRecord),
) -> Result<(), String> {
    let mut columns = Columns::default();
    columns.decode(raw, count, version)?;
    let mut cur = columns.start();
    let mut rec = TraceRecord::default();
    while cur.i < columns.len() {
        columns.fill(raw, &mut cur, &mut rec);
        f(&rec);
    }
    Ok(())
}

/// Decodes [`KvtraceBlock`]s (one per thread: it keeps a zstd context and a buffer).
pub struct BlockDecoder {
    unpacker: Unpacker,
    decoded: Decoded,
}

impl BlockDecoder {
    /// A decoder naming `path` in errors.
    pub fn new(path: &Path) -> Result<BlockDecoder, TraceError> {
        Ok(BlockDecoder {
            unpacker: Unpacker::new(path)?,
            decoded: Decoded::default(),
        })
    }

    /// Calls `f` with each record of `block`, in order, through one reused record.
    pub fn decode(
        &mut self,
        block: &KvtraceBlock,
        mut f: impl FnMut(&TraceRecord),
    ) -> Result<(), TraceError> {
        let d = &mut self.decoded;
        self.unpacker.unpack_block(block, d)?;
        let mut cur = d.columns.start();
        let mut rec = TraceRecord::default();
        while cur.i < d.columns.len() {
            d.columns.fill(&d.raw, &mut cur, &mut rec);
            f(&rec);
        }
        Ok(())
    }
}

/// The next block's header and compressed bytes (borrowed from `input`): `(offset,
/// raw_len, record_count, compressed)`; `None` after the end marker. Any error, and the
/// end marker, set `done`.
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

/// True when the stream at `input` holds a second block after the next one (peeked,
/// not consumed): a trace of one block is decoded on the calling thread.
fn holds_several_blocks(input: &mut Input) -> Result<bool, TraceError> {
    let h = input.peek(BLOCK_HEADER_BYTES)?;
    if h.len() < BLOCK_HEADER_BYTES {
        return Ok(false);
    }
    let n = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
    if n == 0 || n > MAX_BLOCK_BYTES {
        return Ok(false);
    }
    let next = BLOCK_HEADER_BYTES + n;
    let b = input.peek(next + 4)?;
    Ok(b.len() == next + 4 && b[next..] != [0u8; 4])
}

/// The decoder threads a reader starts when not told ([`OpenOptions::decode_threads`]
/// is `None`): one core fewer than the machine has (the calling thread reads the file
/// and hands out records), at least 1 and at most [`MAX_DEFAULT_DECODE_THREADS`]; 0 (decode
/// on the calling thread) on a machine of one core.
///
/// [`OpenOptions::decode_threads`]: crate::OpenOptions::decode_threads
pub fn default_decode_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores <= 1 {
        0
    } else {
        (cores - 1).clamp(1, MAX_DEFAULT_DECODE_THREADS)
    }
}

/// The most decoder threads [`default_decode_threads`] picks: past it, the calling
/// thread handing out records is the bottleneck.
pub const MAX_DEFAULT_DECODE_THREADS: usize = 4;

/// How a reader decodes its blocks, chosen at its first block.
enum Decoding {
    /// No block read yet.
    NotStarted,
    /// On the calling thread, one block at a time.
    Inline,
    /// Ahead, on decoder threads.
    Ahead(DecoderPool),
}

/// Reads a `.kvtrace` stream.
///
/// The calling thread reads the compressed blocks; with decoder threads
/// ([`OpenOptions::decode_threads`](crate::OpenOptions::decode_threads)), they decompress
/// and decode the next blocks while it hands out the records of the current one, in
/// file order. An error (a corrupt block, a cut file) comes after every record before
/// the damage, as it does decoding on one thread. Dropping the reader stops its threads.
pub struct KvtraceReader {
    input: Input,
    info: TraceInfo,
    source: TraceInfo,
    /// Decompresses blocks on the calling thread.
    unpacker: Unpacker,
    /// The file's layout version.
    version: u32,
    /// Decoder threads asked for (0: none).
    threads: usize,
    decoding: Decoding,
    /// The block whose records are being handed out.
    current: Box<Slot>,
    /// The next record of the current block.
    cur: Cursor,
    /// No more blocks come from `input`: its end marker was read, or it failed.
    input_done: bool,
    /// A failure reading `input`, held until the blocks before it are handed out.
    input_error: Option<TraceError>,
    /// [`TraceReader::read`] returned its end or an error.
    done: bool,
}

impl KvtraceReader {
    /// Reads a kvtrace from `input` with `threads` decoder threads (`None`: the
    /// default, [`default_decode_threads`]).
    pub(crate) fn new(
        mut input: Input,
        threads: Option<usize>,
    ) -> Result<KvtraceReader, TraceError> {
        let Some(h) = input.record(16, "kvtrace header")? else {
            return Err(input.corrupt(0, "empty file: a kvtrace starts with \"KVTRACE\\0\""));
        };
        if &h[..8] != MAGIC {
            return Err(input.corrupt(0, "not a kvtrace: \"KVTRACE\\0\" expected"));
        }
        let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
        let info_len = u32::from_le_bytes([h[12], h[13], h[14], h[15]]) as usize;
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(input.corrupt(
                8,
                format!("kvtrace version {OLDEST_VERSION} to {VERSION} expected, found {version}"),
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
        let unpacker = Unpacker::new(input.path())?;
        Ok(KvtraceReader {
            input,
            info,
            source,
            unpacker,
            version,
            threads: threads.unwrap_or_else(default_decode_threads),
            decoding: Decoding::NotStarted,
            current: Box::default(),
            cur: Cursor::default(),
            input_done: false,
            input_error: None,
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
        Ok(next_raw_block(&mut self.input, &mut self.input_done)?.map(
            |(offset, raw_len, record_count, c)| {
                let mut b = KvtraceBlock::default();
                b.refill(offset, raw_len, record_count, self.version, c);
                b
            },
        ))
    }

    /// Makes the next block with records the current one; false after the last. After
    /// an error or the end, the reader is done.
    #[cold]
    fn advance(&mut self) -> Result<bool, TraceError> {
        if self.done {
            return Ok(false);
        }
        let r = self.load_next();
        if !matches!(r, Ok(true)) {
            self.done = true;
            // Stops the decoder threads now rather than when the reader is dropped.
            self.decoding = Decoding::Inline;
        }
        r
    }

    fn load_next(&mut self) -> Result<bool, TraceError> {
        if matches!(self.decoding, Decoding::NotStarted) {
            self.decoding = self.choose_decoding()?;
        }
        loop {
            let record_count = match &mut self.decoding {
                Decoding::Ahead(pool) => {
                    // Keep every free slot busy, then take the next block in file order.
                    while !self.input_done && pool.has_free_slot() {
                        match next_raw_block(&mut self.input, &mut self.input_done) {
                            Ok(Some((offset, raw_len, count, c))) => {
                                pool.submit(|b| b.refill(offset, raw_len, count, self.version, c))?;
                            }
                            Ok(None) => {}
                            Err(e) => self.input_error = Some(e),
                        }
                    }
                    if pool.in_flight() == 0 {
                        // Every block before the input's end or failure is handed out.
                        return self.input_error.take().map_or(Ok(false), Err);
                    }
                    let next = pool.next_in_order()?;
                    let done = std::mem::replace(&mut self.current, next);
                    pool.give_back(done);
                    self.current.result()?;
                    self.current.block.record_count
                }
                Decoding::Inline | Decoding::NotStarted => {
                    let next = next_raw_block(&mut self.input, &mut self.input_done)?;
                    let Some((offset, raw_len, count, c)) = next else {
                        return Ok(false);
                    };
                    let out = &mut self.current.decoded;
                    self.unpacker
                        .unpack(offset, c, raw_len, count, self.version, out)?;
                    count
                }
            };
            self.cur = self.current.decoded.columns.start();
            if record_count > 0 {
                return Ok(true);
            }
        }
    }

    /// Decoder threads when asked for and the trace holds more than one block (a small
    /// trace is decoded sooner than threads start); on the calling thread otherwise, or
    /// when no thread could be started.
    fn choose_decoding(&mut self) -> Result<Decoding, TraceError> {
        if self.threads == 0 || !holds_several_blocks(&mut self.input)? {
            return Ok(Decoding::Inline);
        }
        Ok(DecoderPool::start(self.input.path(), self.threads)?
            .map_or(Decoding::Inline, Decoding::Ahead))
    }
}

impl TraceReader for KvtraceReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    #[inline]
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        if self.cur.i >= self.current.decoded.columns.len() && !self.advance()? {
            return Ok(false);
        }
        let d = &self.current.decoded;
        d.columns.fill(&d.raw, &mut self.cur, rec);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_records_store_only_their_count_and_widths() {
        let mut rec = TraceRecord::default();
        rec.clear();
        let mut b = BlockBuilder::default();
        for _ in 0..1000 {
            b.push(&rec);
        }
        let mut out = Vec::new();
        b.encode(&mut out);
        // varint 1000 (2 bytes) and one zero width per column.
        assert_eq!(out.len(), 2 + block::COLUMNS);
        let mut c = Columns::default();
        c.decode(&out, 1000, VERSION).unwrap();
        let mut cur = c.start();
        let mut got = TraceRecord::default();
        c.fill(&out, &mut cur, &mut got);
        assert_eq!(got, rec);
    }

    /// A raw block of two records written by hand: ts 10 and 15 (deltas 10, 5), the
    /// intended column holding 7 and 9. Version 1 reads them as absolute times, version
    /// 2 as zigzag offsets from ts (−4 and −5).
    #[test]
    fn intended_times_are_absolute_in_version_1_and_relative_to_ts_from_version_2() {
        let mut raw = vec![2u8];
        for c in 0..block::COLUMNS {
            match c {
                block::C_TS => raw.extend([1, 20, 10]),
                block::C_INTENDED => raw.extend([1, 7, 9]),
                _ => raw.push(0),
            }
        }
        for (version, want) in [(1, [7, 9]), (2, [6, 10])] {
            let mut c = Columns::default();
            c.decode(&raw, 2, version).unwrap();
            let mut cur = c.start();
            for (ts, intended) in [10, 15].into_iter().zip(want) {
                let mut got = TraceRecord::default();
                c.fill(&raw, &mut cur, &mut got);
                assert_eq!(
                    (got.ts, got.intended_ns),
                    (ts, intended),
                    "version {version}"
                );
            }
        }
        // Version 2 without an intended column: every request was sent when intended.
        let mut rec = TraceRecord::default();
        rec.clear();
        rec.ts = 42;
        rec.intended_ns = 42;
        let mut b = BlockBuilder::default();
        b.push(&rec);
        let mut out = Vec::new();
        b.encode(&mut out);
        let mut c = Columns::default();
        c.decode(&out, 1, VERSION).unwrap();
        let mut got = TraceRecord::default();
        c.fill(&out, &mut c.start(), &mut got);
        assert_eq!(got, rec);
    }

    #[test]
    fn a_block_that_fails_to_decode_holds_no_records() {
        let mut b = BlockBuilder::default();
        for _ in 0..3 {
            b.push(&TraceRecord::default());
        }
        let mut good = Vec::new();
        b.encode(&mut good);
        let mut c = Columns::default();
        c.decode(&good, 3, VERSION).unwrap();
        assert_eq!(c.len(), 3);
        // The record count is right, the op column's width is not.
        let mut bad = good.clone();
        bad[1] = 3;
        assert!(c.decode(&bad, 3, VERSION).is_err());
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_record_pushed_with_its_key_id_implied_reads_as_one_pushed_with_it() {
        let mut b = BlockBuilder::default();
        let mut with_id = Vec::new();
        for key in [&b"user123"[..], b"", b"k"] {
            let mut rec = TraceRecord::default();
            rec.set_key(key);
            rec.value_size = 7;
            with_id.push(rec.clone());
            // Left unset: the writer implies it.
            rec.id = 0;
            b.push_key_id(&rec);
        }
        let mut out = Vec::new();
        b.encode(&mut out);
        let mut c = Columns::default();
        c.decode(&out, 3, VERSION).unwrap();
        let mut cur = c.start();
        for want in &with_id {
            let mut got = TraceRecord::default();
            c.fill(&out, &mut cur, &mut got);
            assert_eq!(&got, want);
        }
    }
}

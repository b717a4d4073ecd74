//! The bodies of the fuzz targets (`crates/trace/fuzz/fuzz_targets/*.rs`), also run on
//! stable by the crate's fuzz smoke test. Not part of the supported API.
//!
//! Each body reads arbitrary bytes as a trace and panics only when an invariant breaks:
//! a reader that panics (also when asked again after an error), yields a record after it
//! said the trace ended, fails with an error that does not name the trace or says
//! nothing, or names a byte offset past the bytes it was given.

use std::io::Cursor;
use std::path::Path;

use crate::open::{compression_of, open_reader_buffered, Compression};
use crate::{Format, OpenOptions, TraceError, TraceReader, TraceRecord};

/// The name fuzzed traces are read under (errors must name it).
const NAME: &str = "fuzz-input";

/// The buffers a fuzzed trace is read through: inputs are small (a 1 MiB buffer zeroed
/// for each cost most of the target's time), and reads that end mid-record are exercised
/// more often.
const BUFFER_BYTES: usize = 4096;

/// Records read at most from one input: enough to walk every record of a fuzzer's
/// inputs, a bound on a kvtrace block that decompresses to many records.
const MAX_RECORDS: u64 = 1 << 16;

/// Checks the invariants of one error of a trace read from `len` bytes; compressed input
/// may decompress to more bytes than it has, so offsets are only bounded when `plain`.
fn check_error(e: &TraceError, len: usize, plain: bool) {
    let text = e.to_string();
    assert!(
        text.starts_with(NAME),
        "an error that does not start with the trace's name: {text}"
    );
    assert!(
        text.len() > NAME.len() + 2,
        "an error that says nothing: {text}"
    );
    if let TraceError::Corrupt { offset, .. } = e {
        if plain {
            assert!(
                *offset <= len as u64,
                "an error at byte {offset} of a {len}-byte trace: {text}"
            );
        }
    }
}

/// Reads every record of `reader`; returns how many were read before the end or an
/// error (checked).
fn drain(reader: &mut dyn TraceReader, len: usize, plain: bool) -> u64 {
    let mut rec = TraceRecord::default();
    let mut n = 0;
    while n < MAX_RECORDS {
        match reader.read(&mut rec) {
            Ok(true) => n += 1,
            Ok(false) => {
                // The end stays the end.
                assert!(
                    !matches!(reader.read(&mut rec), Ok(true)),
                    "a record after the end of the trace"
                );
                return n;
            }
            Err(e) => {
                check_error(&e, len, plain);
                // Callers stop at an error; a reader asked again must still not panic,
                // and what it says is checked as well.
                for _ in 0..4 {
                    match reader.read(&mut rec) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => check_error(&e, len, plain),
                    }
                }
                return n;
            }
        }
    }
    n
}

/// Reads `data` as a trace of `format` (told from the bytes when `None`, as `kvtrace
/// stats FILE` tells a file named `fuzz-input`). `decode_threads` is passed to a kvtrace
/// reader. Returns the records read.
pub fn read_trace(format: Option<Format>, data: &[u8], decode_threads: usize) -> u64 {
    let options = OpenOptions {
        format,
        decode_threads: Some(decode_threads),
        ..OpenOptions::default()
    };
    let plain = compression_of(data) == Compression::None;
    match open_reader_buffered(
        Box::new(Cursor::new(data.to_vec())),
        Path::new(NAME),
        &options,
        BUFFER_BYTES,
    ) {
        Ok(mut reader) => drain(&mut reader, data.len(), plain),
        Err(e) => {
            check_error(&e, data.len(), plain);
            0
        }
    }
}

/// The format the fuzz target's first byte picks: every format, and "tell it".
pub fn format_of(selector: u8) -> Option<Format> {
    let i = selector as usize % (Format::ALL.len() + 1);
    Format::ALL.get(i).copied()
}

/// The `read_any` fuzz target: the first byte picks the format (or none) and whether a
/// kvtrace reader decodes on its own thread, the rest is the trace.
pub fn read_any(data: &[u8]) -> u64 {
    let Some((&selector, trace)) = data.split_first() else {
        return 0;
    };
    read_trace(format_of(selector), trace, usize::from(selector >> 7))
}

/// The leading varint of `raw` (a raw block's record count), as the header's `u32`
/// count; 0 when it is missing or does not fit.
fn leading_count(raw: &[u8]) -> u32 {
    let mut n: u64 = 0;
    for (i, &b) in raw.iter().take(10).enumerate() {
        n |= u64::from(b & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
        if b < 0x80 {
            break;
        }
    }
    u32::try_from(n).unwrap_or(0)
}

/// `raw` as the one block of a whole `.kvtrace` stream of layout `version`: header,
/// the block compressed, end marker.
fn kvtrace_stream(raw: &[u8], count: u32, version: u32) -> Vec<u8> {
    let info = serde_json::to_vec(&crate::TraceInfo::default()).expect("a TraceInfo as JSON");
    thread_local! {
        // One zstd context for every input: creating one per input cost more than the
        // rest of the target.
        static COMPRESSOR: std::cell::RefCell<zstd::bulk::Compressor<'static>> =
            std::cell::RefCell::new(zstd::bulk::Compressor::new(1).expect("a zstd context"));
    }
    let compressed = COMPRESSOR
        .with(|c| c.borrow_mut().compress(raw))
        .expect("compressing in memory");
    let mut out = Vec::with_capacity(64 + info.len() + compressed.len());
    out.extend_from_slice(crate::kvtrace::MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(info.len() as u32).to_le_bytes());
    out.extend_from_slice(&info);
    for word in [compressed.len() as u32, raw.len() as u32, count, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&compressed);
    out.extend_from_slice(&[0; 16]);
    out
}

/// The `kvtrace_block` fuzz target: the first byte picks the layout version (1 or 2),
/// the rest is a raw (decompressed) block, whose columns are decoded as they are, with no
/// zstd frame for the fuzzer to get through. Then the same block, compressed into a whole
/// `.kvtrace`, must read as the same records (or fail as well, with an error that names
/// the trace). Returns the records decoded.
pub fn kvtrace_block(data: &[u8]) -> u64 {
    let Some((&selector, raw)) = data.split_first() else {
        return 0;
    };
    let version = 1 + u32::from(selector & 1);
    let count = leading_count(raw);
    let mut direct = Vec::new();
    let decoded = crate::kvtrace::decode_raw_block(raw, count, version, |rec| {
        if (direct.len() as u64) < MAX_RECORDS {
            direct.push(rec.clone());
        }
    });
    if let Err(what) = &decoded {
        assert!(!what.trim().is_empty(), "a block error that says nothing");
        assert!(direct.is_empty(), "records from a block that failed");
    }
    let stream = kvtrace_stream(raw, count, version);
    let options = OpenOptions {
        format: Some(Format::Kvtrace),
        decode_threads: Some(0),
        ..OpenOptions::default()
    };
    let mut reader = open_reader_buffered(
        Box::new(Cursor::new(stream)),
        Path::new(NAME),
        &options,
        BUFFER_BYTES,
    )
    .expect("a kvtrace header written here opens");
    let mut rec = TraceRecord::default();
    for (i, want) in direct.iter().enumerate() {
        match reader.read(&mut rec) {
            Ok(true) => assert_eq!(&rec, want, "record {i} of the block read differently"),
            other => panic!("record {i} of a block that decodes: {other:?}"),
        }
    }
    if decoded.is_err() {
        match reader.read(&mut rec) {
            Err(e) => check_error(&e, usize::MAX, false),
            other => panic!("a block that does not decode read as {other:?}"),
        }
    } else if (direct.len() as u64) < MAX_RECORDS {
        assert!(
            matches!(reader.read(&mut rec), Ok(false)),
            "a record after the block's last"
        );
    }
    direct.len() as u64
}

/// The `parquet` fuzz target: `data` as a Parquet trace export (`kvlab trace convert
/// --to parquet`), read as `kvlab` reads one. Returns the records read.
#[cfg(feature = "parquet")]
pub fn parquet(data: &[u8]) -> u64 {
    let bytes = bytes::Bytes::copy_from_slice(data);
    match crate::parquet::parquet_reader(bytes, Path::new(NAME)) {
        Ok(mut reader) => drain(&mut reader, data.len(), false),
        Err(e) => {
            check_error(&e, data.len(), false);
            0
        }
    }
}

//! The bodies of the fuzz targets (`crates/trace/fuzz/fuzz_targets/*.rs`), also run on
//! stable by the crate's fuzz smoke test. Not part of the supported API.
//!
//! Each body reads arbitrary bytes as a trace and panics only when an invariant breaks:
//! a reader that panics (also when asked again after an error), yields a record after it
//! said the trace ended, fails with an error that does not name the trace or says
//! nothing, or names a byte offset past the bytes it was given.

use std::io::Cursor;
use std::path::Path;

use crate::open::{compression_of, Compression};
use crate::{open_reader, Format, OpenOptions, TraceError, TraceReader, TraceRecord};

/// The name fuzzed traces are read under (errors must name it).
const NAME: &str = "fuzz-input";

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
    match open_reader(
        Box::new(Cursor::new(data.to_vec())),
        Path::new(NAME),
        &options,
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

//! kvlab's traces: what really happened, one request at a time.
//!
//! - [`TraceRecord`]: one request of any trace, in one vocabulary (time, [`Op`], key,
//!   sizes, scan length, TTL, column family or tenant, next access, and for runs kvlab
//!   recorded, outcome and latency). Readers fill a record in place, so reading a trace
//!   allocates nothing per request once warm.
//! - [`TraceInfo`]: what a trace says about itself — its format, whether keys are bytes
//!   or numeric ids ([`KeyEncoding`]), its time unit, whether it carries sizes.
//! - [`TraceReader`]: the one interface every format's reader implements; [`open()`]
//!   tells a file's format and compression and returns its reader.
//!
//! Around them: [`mod@format`] (a reader per format: RocksDB query traces, libCacheSim's
//! oracleGeneral, lcs, vscsi, csv, txt and twr, Twitter's CSV, ARC, LIRS, cache2k,
//! scarab, AdaptSize, MSR Cambridge, Tencent CBS, Redis MONITOR), [`kvtrace`] (kvlab's
//! own format, [`KvtraceWriter`]), [`stats`] ([`Stats::collect`]), [`dump`]
//! (RocksDB trace_analyzer's human-readable layout), [`export`] (libCacheSim's
//! oracleGeneral, csv and txt, and RocksDB's query-trace format, written for those tools
//! to read) and [`convert`]; with the cargo
//! feature `parquet`, `parquet` (one row per request, and the DuckDB query that
//! reproduces `trace stats`).
//!
//! ```no_run
//! # fn main() -> Result<(), kvlab_trace::TraceError> {
//! use kvlab_trace::{open, OpenOptions, Stats};
//! // Format and compression are told from the file; `-` is standard input.
//! let mut reader = open("mixgraph.trace.zst", &OpenOptions::default())?;
//! let stats = Stats::collect(&mut reader)?;
//! println!("{}", stats.to_json());
//! # Ok(())
//! # }
//! ```
//!
//! Converting to kvtrace:
//!
//! ```no_run
//! # fn main() -> Result<(), kvlab_trace::TraceError> {
//! use std::path::Path;
//! use kvlab_trace::{convert, open, KvtraceWriter, OpenOptions};
//! let mut reader = open("trace.oracleGeneral.bin", &OpenOptions::default())?;
//! let out = Path::new("trace.kvtrace");
//! let file = std::fs::File::create(out).map_err(|source| kvlab_trace::TraceError::Io {
//!     path: out.to_path_buf(),
//!     source,
//! })?;
//! let mut writer = KvtraceWriter::new(std::io::BufWriter::new(file), out, reader.info())?;
//! convert(&mut reader, &mut writer)?;
//! writer.finish()?;
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod analyze;
pub mod dump;
pub mod error;
pub mod export;
pub mod format;
pub mod fuzzing;
mod input;
pub mod kvtrace;
pub mod open;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod record;
pub mod recorder;
pub mod stats;

pub use error::TraceError;
pub use format::csv::CsvSpec;
pub use kvtrace::{KvtraceReader, KvtraceWriter};
pub use open::{open, open_kvtrace, open_reader, Format, OpenOptions};
pub use record::{
    key_id, KeyEncoding, Op, Outcome, TimeUnit, TraceInfo, TraceRecord, STARTED_UNIX_NS,
};
pub use recorder::{RecordStream, RecordingSummary, TraceRecorder};
pub use stats::Stats;

/// A trace being read, one record at a time.
pub trait TraceReader: Send {
    /// What the trace says about itself (known before the first record).
    fn info(&self) -> &TraceInfo;

    /// Fills `rec` with the next request (after [`TraceRecord::clear`]); `Ok(false)` at
    /// the end of the trace. After an error, stop: what the reader returns if asked
    /// again is unspecified (a text reader may go on at the next line).
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError>;
}

impl<R: TraceReader + ?Sized> TraceReader for Box<R> {
    fn info(&self) -> &TraceInfo {
        (**self).info()
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        (**self).read(rec)
    }
}

/// Copies every record of `reader` to `writer` (which the caller then
/// [`KvtraceWriter::finish`]es); returns the records copied. Made with
/// `KvtraceWriter::new(out, path, reader.info())`, the writer keeps the source's
/// [`TraceInfo`].
pub fn convert<R: TraceReader + ?Sized, W: std::io::Write>(
    reader: &mut R,
    writer: &mut KvtraceWriter<W>,
) -> Result<u64, TraceError> {
    let mut rec = TraceRecord::default();
    let mut n = 0;
    while reader.read(&mut rec)? {
        writer.write(&rec)?;
        n += 1;
    }
    Ok(n)
}

//! Paths of the shared sample traces and small helpers.

use std::path::{Path, PathBuf};

use kvlab_trace::{
    open, Format, KvtraceWriter, OpenOptions, Stats, TraceInfo, TraceReader, TraceRecord,
};

/// A file under /work/shared/data/traces.
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(rel)
}

/// Opens a sample trace, forcing `format` when given.
pub fn reader(rel: &str, format: Option<Format>) -> Box<dyn TraceReader> {
    let opts = OpenOptions {
        format,
        ..OpenOptions::default()
    };
    open(data(rel), &opts).unwrap_or_else(|e| panic!("opening {rel}: {e}"))
}

/// Stats of a sample trace.
pub fn stats(rel: &str, format: Option<Format>) -> Stats {
    Stats::collect(&mut reader(rel, format)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// Every record of a reader.
pub fn records(r: &mut dyn TraceReader) -> Vec<TraceRecord> {
    let mut out = Vec::new();
    let mut rec = TraceRecord::default();
    while r.read(&mut rec).unwrap_or_else(|e| panic!("reading: {e}")) {
        out.push(rec.clone());
    }
    out
}

/// Writes `recs` as a kvtrace in memory.
pub fn encode(info: &TraceInfo, recs: &[TraceRecord]) -> Vec<u8> {
    let mut w = KvtraceWriter::new(Vec::new(), Path::new("mem.kvtrace"), info).expect("a writer");
    for r in recs {
        w.write(r).expect("writing to memory");
    }
    w.finish().expect("finishing")
}

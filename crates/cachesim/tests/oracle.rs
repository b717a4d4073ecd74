//! The shared sample traces for tests, benches and the example, read by kvlab's own
//! trace readers (`kvlab_trace::open`: format and compression told from the file).

use std::path::{Path, PathBuf};

use kvlab_cachesim::{LoadOptions, SimTrace};
use kvlab_trace::{OpenOptions, TraceRecord};

/// Where the shared sample traces are (`/work/shared/data/traces`).
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(rel)
}

/// Every record of a trace file.
pub fn records(path: &Path) -> Vec<TraceRecord> {
    let mut reader = kvlab_trace::open(path, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    let mut out = Vec::new();
    let mut rec = TraceRecord::default();
    while reader
        .read(&mut rec)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
    {
        out.push(rec.clone());
    }
    out
}

/// A trace file loaded for simulation as `kvlab sim` loads it: an oracleGeneral file with
/// its own next-access times; a trace without sizes (the ARC paper's `.lis`) as objects
/// of size 1.
pub fn load(path: &Path) -> SimTrace {
    let mut reader = kvlab_trace::open(path, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    SimTrace::from_reader(&mut reader, LoadOptions::default())
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}

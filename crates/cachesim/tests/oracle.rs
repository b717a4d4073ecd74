//! A minimal oracleGeneral reader for tests, benches and the example (24-byte LE records:
//! `u32 time, u64 id, u32 size, i64 next_access`). It stands in for `kvlab_trace::open`
//! until the trace readers land; then it goes away.

use std::path::{Path, PathBuf};

use kvlab_cachesim::{LoadOptions, SimError, SimTrace};
use kvlab_trace::TraceRecord;

/// Where the shared sample traces are (`/work/shared/data/traces`).
pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(rel)
}

/// The records of an oracleGeneral file.
pub fn records(path: &Path) -> Vec<TraceRecord> {
    let bytes = read(path);
    parse(&bytes).collect()
}

fn read(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    assert_eq!(
        bytes.len() % 24,
        0,
        "{}: not a whole number of 24-byte records",
        path.display()
    );
    bytes
}

fn parse(bytes: &[u8]) -> impl Iterator<Item = TraceRecord> + '_ {
    bytes.chunks_exact(24).map(|r| {
        let u32_at = |o: usize| u32::from_le_bytes(r[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(r[o..o + 8].try_into().expect("8 bytes"));
        TraceRecord {
            ts: u64::from(u32_at(0)),
            id: u64_at(4),
            value_size: u64::from(u32_at(12)),
            next_access: u64_at(16) as i64,
            batch_len: 1,
            ..TraceRecord::default()
        }
    })
}

/// An oracleGeneral file loaded for simulation, with its own next-access times.
pub fn load(path: &Path) -> SimTrace {
    let opts = LoadOptions {
        trace_next_access: true,
        ..LoadOptions::default()
    };
    let bytes = read(path);
    SimTrace::from_records(parse(&bytes).map(Ok::<_, SimError>), opts)
        .expect("an in-memory trace loads")
}

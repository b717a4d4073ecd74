//! Minimal trace readers for tests, benches and the example: oracleGeneral (24-byte LE
//! records: `u32 time, u64 id, u32 size, i64 next_access`) and the ARC traces' zstd `.lis`
//! text. They stand in for `kvlab_trace::open` until the trace readers land; then they go
//! away.

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

/// An ARC-paper `.lis.zst` trace (`start_block n_blocks ignore request_no` per line), one
/// request per block, each block an object of 512 bytes.
pub fn load_arc_lis(path: &Path) -> SimTrace {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = std::io::read_to_string(
        zstd::Decoder::new(file).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut recs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<u64> = line
            .split_whitespace()
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("{} line {}: a number", path.display(), n + 1))
            })
            .collect();
        assert_eq!(f.len(), 4, "{} line {}: four fields", path.display(), n + 1);
        for block in f[0]..f[0] + f[1] {
            recs.push(Ok::<_, SimError>(TraceRecord {
                id: block,
                value_size: 512,
                next_access: -1,
                batch_len: 1,
                ..TraceRecord::default()
            }));
        }
    }
    SimTrace::from_records(recs, LoadOptions::default()).expect("an in-memory trace loads")
}

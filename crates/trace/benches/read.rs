//! Reading speed of the formats a cache simulation or a replay reads most: records per
//! second of cloudPhysicsIO (113,872 requests) as oracleGeneral, as kvtrace, and as a
//! RocksDB trace (mixgraph, 60,000 operations). Criterion reports time per trace; divide
//! the record count by it.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kvlab_trace::{convert, open, KvtraceWriter, OpenOptions, TraceRecord};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(rel)
}

fn read_all(path: &Path) -> u64 {
    let mut r = open(path, &OpenOptions::default()).expect("opening the sample");
    let mut rec = TraceRecord::default();
    let mut sum = 0u64;
    while r.read(&mut rec).expect("reading the sample") {
        sum = sum.wrapping_add(rec.id);
    }
    sum
}

fn read(c: &mut Criterion) {
    let og = data("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    let dir = tempfile::tempdir().expect("a temp dir");
    let kv = dir.path().join("cloudPhysicsIO.kvtrace");
    let mut src = open(&og, &OpenOptions::default()).expect("opening the sample");
    let file = std::fs::File::create(&kv).expect("creating the kvtrace");
    let mut w = KvtraceWriter::new(std::io::BufWriter::new(file), &kv, src.info())
        .expect("a kvtrace writer");
    convert(&mut src, &mut w).expect("converting");
    w.finish().expect("finishing the kvtrace");

    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(113_872));
    g.bench_function("oracleGeneral", |b| b.iter(|| black_box(read_all(&og))));
    g.bench_function("kvtrace", |b| b.iter(|| black_box(read_all(&kv))));
    let mixgraph = data("rocksdb/mixgraph.trace");
    g.throughput(Throughput::Elements(60_000));
    g.bench_function("rocksdb_mixgraph", |b| {
        b.iter(|| black_box(read_all(&mixgraph)))
    });
    g.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);

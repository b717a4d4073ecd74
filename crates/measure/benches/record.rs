//! The cost of [`Recorder::record`] on the hot path: it must stay a few nanoseconds.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use kvlab_core::{OpKind, Status};
use kvlab_measure::Recorder;

fn record(c: &mut Criterion) {
    let mut r = Recorder::new();
    // Latencies spread over many buckets (1 µs .. ~1 ms), as a real run's are.
    let latencies: Vec<u64> = (0..4096u64)
        .map(|i| 1_000 + (i * 7919) % 1_000_000)
        .collect();
    let mut i = 0usize;
    c.bench_function("record", |b| {
        b.iter(|| {
            let ns = latencies[i & 4095];
            i = i.wrapping_add(1);
            r.record(
                black_box(OpKind::Read),
                black_box(Status::Ok),
                black_box(ns),
            );
        })
    });
    c.bench_function("record_intended", |b| {
        b.iter(|| {
            let ns = latencies[i & 4095];
            i = i.wrapping_add(1);
            r.record_intended(black_box(OpKind::Update), black_box(ns));
        })
    });
    let other = r.clone();
    c.bench_function("merge", |b| b.iter(|| r.merge(black_box(&other))));
}

criterion_group!(benches, record);
criterion_main!(benches);

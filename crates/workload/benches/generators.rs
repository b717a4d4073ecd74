//! Cost of one draw from each key chooser and generator (target: ≤ 30 ns median), and
//! of one whole YCSB operation from a run worker.
//!
//! `cargo bench --bench generators -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use kvlab_core::Request;
use kvlab_workload::generator::{
    AcknowledgedCounter, Constant, Counter, Exponential, Histogram, Hotspot, ScrambledZipfian,
    Sequential, SkewedLatest, Uniform, Zipfian,
};
use kvlab_workload::{fnvhash64, CoreWorkload, Properties};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const RECORDS: u64 = 10_000_000;

fn generators(c: &mut Criterion) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut g = c.benchmark_group("generator");

    let uniform = Uniform::new(0, RECORDS - 1);
    g.bench_function("uniform", |b| b.iter(|| black_box(uniform.next(&mut rng))));

    let zipfian = Zipfian::new(0, RECORDS - 1, 0.99);
    g.bench_function("zipfian", |b| b.iter(|| black_box(zipfian.next(&mut rng))));

    let scrambled = ScrambledZipfian::new(0, RECORDS - 1, 0.99);
    g.bench_function("scrambled_zipfian", |b| {
        b.iter(|| black_box(scrambled.next(&mut rng)))
    });

    let basis = Arc::new(AcknowledgedCounter::new(RECORDS));
    let mut latest = SkewedLatest::new(basis.clone(), 0.99);
    g.bench_function("skewed_latest", |b| {
        b.iter(|| black_box(latest.next(&mut rng)))
    });

    g.bench_function("acknowledged_counter_next_ack", |b| {
        b.iter(|| {
            let v = basis.next();
            basis.acknowledge(black_box(v));
        })
    });

    let hotspot = Hotspot::new(0, RECORDS - 1, 0.2, 0.8);
    g.bench_function("hotspot", |b| b.iter(|| black_box(hotspot.next(&mut rng))));

    let exponential = Exponential::new(95.0, RECORDS as f64 * 0.8571428571);
    g.bench_function("exponential", |b| {
        b.iter(|| black_box(exponential.next(&mut rng)))
    });

    let sequential = Sequential::new(0, RECORDS - 1);
    g.bench_function("sequential", |b| b.iter(|| black_box(sequential.next())));

    let counter = Counter::new(0);
    g.bench_function("counter", |b| b.iter(|| black_box(counter.next())));

    let buckets: Vec<u64> = (0..64).map(|i| 1000 / (i + 1)).collect();
    let histogram = Histogram::new(&buckets, 64);
    g.bench_function("histogram", |b| {
        b.iter(|| black_box(histogram.next(&mut rng)))
    });

    let constant = Constant::new(100);
    g.bench_function("constant", |b| b.iter(|| black_box(constant.next())));

    g.bench_function("fnvhash64", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            black_box(fnvhash64(i))
        })
    });
    g.finish();
}

fn operations(c: &mut Criterion) {
    let mut g = c.benchmark_group("operation");
    for (name, distribution) in [
        ("workloada_zipfian", "zipfian"),
        ("workloada_latest", "latest"),
    ] {
        let mut p = Properties::new();
        p.parse_str(
            &format!(
                "recordcount={RECORDS}\nreadproportion=0.5\nupdateproportion=0.5\n\
                 requestdistribution={distribution}\n"
            ),
            Path::new("bench"),
        )
        .expect("bench properties parse");
        let wl = Arc::new(CoreWorkload::from_properties(&p, &[], &[]).expect("bench workload"));
        let mut worker = wl.run_worker(1, 0);
        let mut req = Request::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                black_box(worker.next(&mut req));
            })
        });
        if distribution == "zipfian" {
            // Key numbers beyond the pre-formatted names: a name formatted per call.
            let mut key = Vec::new();
            let mut keynum = 1u64 << 20;
            g.bench_function("key_name_formatted", |b| {
                b.iter(|| {
                    keynum += 1;
                    wl.key_name(black_box(keynum), &mut key);
                    black_box(&key);
                })
            });
        }
    }
    g.finish();
}

/// Private, so the undocumented function `criterion_group!` generates is not public API.
mod group {
    use super::*;
    criterion_group!(benches, generators, operations);
}
use group::benches;
criterion_main!(benches);

//! Simulation throughput per policy on cloudPhysicsIO (113,872 requests), object mode at
//! 10% of the working set; and an LRU miss-ratio curve of 100 sizes in one pass against
//! 100 separate LRU simulations.
//!
//! `cargo bench -p kvlab-cachesim --bench policies`

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

#[path = "../tests/oracle.rs"]
#[expect(dead_code, reason = "the bench only loads whole traces")]
mod oracle;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kvlab_cachesim::mrc::lru_stack_distances;
use kvlab_cachesim::{simulate, Mode, PolicySpec, SimOptions};

fn policies(c: &mut Criterion) {
    let t = oracle::load(&oracle::data(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    ));
    let size = t.n_objects() as u64 / 10;
    let mut g = c.benchmark_group("policy_obj_10pct");
    g.throughput(Throughput::Elements(t.len() as u64));
    g.sample_size(10);
    for p in PolicySpec::all() {
        g.bench_function(p.name(), |b| {
            b.iter(|| simulate(&t, &p, size, SimOptions::default()).expect("runs"))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("lru_mrc_100_sizes");
    g.sample_size(10);
    let n = t.n_objects() as u64;
    let sizes: Vec<u64> = (1..=100).map(|k| n * k / 100).collect();
    g.bench_function("one_pass_olken", |b| {
        b.iter(|| {
            let m = lru_stack_distances(&t, Mode::Object);
            sizes.iter().map(|&s| m.misses(s)).sum::<f64>()
        })
    });
    g.bench_function("100_lru_runs", |b| {
        b.iter(|| {
            sizes
                .iter()
                .map(|&s| {
                    simulate(&t, &PolicySpec::Lru, s, SimOptions::default())
                        .expect("runs")
                        .misses
                })
                .sum::<u64>()
        })
    });
    g.finish();
}

criterion_group!(benches, policies);
criterion_main!(benches);

//! Cost of one mixgraph operation from [`MixGraph::next`]: the thread's `mt19937_64`
//! draw, the key number (uniform, power model, or key ranges with the power model,
//! each power-model key re-seeding an `mt19937_64`), the op type, the value size or
//! scan length, and the key bytes — into the generator's own key buffer.
//!
//! `cargo bench -p kvlab-dist --bench mixgraph -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kvlab_dist::mixgraph::{KeyModel, MixGraph, MixGraphConfig, Mt19937_64};

fn next(c: &mut Criterion) {
    let mut g = c.benchmark_group("mixgraph_next");
    g.throughput(Throughput::Elements(1));
    let zippy = MixGraphConfig::zippydb_example();
    let cases = [
        ("default_all_random", MixGraphConfig::default()),
        ("zippydb_prefix_dist", zippy.clone()),
        (
            "zippydb_prefix_random",
            MixGraphConfig {
                key_model: Some(KeyModel::PrefixRandom),
                ..zippy.clone()
            },
        ),
        (
            "zippydb_all_dist",
            MixGraphConfig {
                key_model: Some(KeyModel::AllDist),
                ..zippy.clone()
            },
        ),
        (
            "zippydb_prefix_dist_decorrelated",
            MixGraphConfig {
                decorrelate: true,
                ..zippy.clone()
            },
        ),
    ];
    for (name, config) in cases {
        let mut gen = MixGraph::new(&config, 0).expect("a valid config");
        g.bench_function(name, |b| {
            b.iter(|| {
                let op = gen.next_op();
                black_box((op.kind, op.key[0], op.value_size_bytes, op.scan_len));
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("mt19937_64");
    g.throughput(Throughput::Elements(1));
    let mut mt = Mt19937_64::new(5489);
    g.bench_function("next", |b| b.iter(|| black_box(mt.next_u64())));
    let mut seed = 0u64;
    g.bench_function("first_output", |b| {
        b.iter(|| {
            seed += 1;
            black_box(Mt19937_64::first_output(seed))
        })
    });
    g.finish();
}

/// Private, so the undocumented function `criterion_group!` generates is not public API.
mod group {
    use super::*;
    criterion_group!(benches, next);
}
use group::benches;
criterion_main!(benches);

//! Cost of one cache-workload request from a client's source (target: ≤ 50 ns): key
//! choice by popularity, the key's size and name, and for sets the value size and
//! bytes. Each benchmark runs `next` on a reused request; completions are not fed back
//! (no look-aside), so gets are measured as gets.
//!
//! `cargo bench -p kvlab-workload --bench cache -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use kvlab_core::Request;
use kvlab_workload::{
    CacheBenchConfig, CacheSpec, CacheWorkload, OpMix, OpSource, Popularity, SizeDist, Workload,
};

/// KV-mixed sizes: piecewise-uniform values, uniform keys.
fn kv_mixed(keys: u64, popularity: Popularity, get: f64) -> Arc<CacheWorkload> {
    Arc::new(
        CacheWorkload::new(CacheSpec {
            keys,
            operations: 0,
            popularity,
            key_size: SizeDist::parse("uniform:16-64").unwrap(),
            value_size: SizeDist::parse("pieces:16-255:34,256-1023:36,1024-4095:26,4096-16383:4")
                .unwrap(),
            ttl_s: None,
            mix: OpMix {
                get,
                set: 1.0 - get,
                delete: 0.0,
                lone_get: 0.0,
                lone_set: 0.0,
            },
            lookaside: false,
        })
        .expect("bench spec validates"),
    )
}

/// 400 buckets: single hot keys first, then ever larger, colder buckets (the shape of
/// CacheBench's hit_ratio `pop.json` files).
fn buckets() -> Popularity {
    let sizes: Vec<u64> = (0..400).map(|b| 1 + (b * b) as u64 / 8).collect();
    let weights: Vec<f64> = (0..400).map(|b| 1.0 / (1.0 + b as f64)).collect();
    Popularity::Buckets { sizes, weights }
}

fn cache(c: &mut Criterion) {
    let mut g = c.benchmark_group("cache_next");
    let cases = [
        (
            "zipfian_get",
            kv_mixed(10_000_000, Popularity::Zipfian { theta: 0.99 }, 1.0),
        ),
        (
            "zipfian_95get_5set",
            kv_mixed(10_000_000, Popularity::Zipfian { theta: 0.99 }, 0.95),
        ),
        ("buckets_get", kv_mixed(10_000_000, buckets(), 1.0)),
        ("buckets_95get_5set", kv_mixed(10_000_000, buckets(), 0.95)),
        ("buckets_50get_50set", kv_mixed(10_000_000, buckets(), 0.5)),
        (
            "uniform_get",
            kv_mixed(10_000_000, Popularity::Uniform, 1.0),
        ),
        (
            "zipf_1.2_get",
            kv_mixed(10_000_000, Popularity::Zipfian { theta: 1.2 }, 1.0),
        ),
    ];
    for (name, wl) in cases {
        let mut source = wl.source(1, 0, 1);
        let mut req = Request::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                let t = source.next(&mut req);
                black_box((req.key.len(), t))
            })
        });
    }

    // A real production-derived config: 403 buckets, 26 814 discrete value sizes.
    let cdn = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/cachebench/cdn/config.json");
    if cdn.is_file() {
        let overrides = [("numKeys".to_string(), "10000000".to_string())];
        let config = CacheBenchConfig::load(&cdn, &overrides).expect("cdn config loads");
        let wl = Arc::new(config.workload().expect("cdn workload builds"));
        let mut source = wl.source(1, 0, 1);
        let mut req = Request::default();
        g.bench_function("cachebench_cdn", |b| {
            b.iter(|| {
                let t = source.next(&mut req);
                black_box((req.key.len(), t))
            })
        });
    }
    g.finish();
}

mod group {
    use super::*;
    criterion_group!(benches, cache);
}
use group::benches;
criterion_main!(benches);

//! Cost of one memtier request from a [`MemtierSource`]: key choice, value size, value
//! slice, TTL and key formatting, into a reused request (no allocation per request).
//!
//! `cargo bench -p kvlab-workload --bench memtier -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use kvlab_core::Request;
use kvlab_core::{OpSource, Workload};
use kvlab_memtier::{
    DataSize, ExpiryRange, KeyPattern, MemtierSpec, MemtierWorkload, Ratio, SizeWeight,
};

fn next(c: &mut Criterion) {
    let mut g = c.benchmark_group("memtier_next");
    let default = MemtierSpec::default();
    let cases = [
        ("default_R_1to10_32B", default.clone()),
        (
            "gaussian_G_1to10",
            MemtierSpec {
                set_pattern: KeyPattern::Gaussian,
                get_pattern: KeyPattern::Gaussian,
                ..default.clone()
            },
        ),
        (
            "zipf_Z_1to10_exp1",
            MemtierSpec {
                set_pattern: KeyPattern::Zipfian,
                get_pattern: KeyPattern::Zipfian,
                ..default.clone()
            },
        ),
        (
            "sets_random_data_list_expiry",
            MemtierSpec {
                ratio: Ratio { sets: 1, gets: 0 },
                random_data: true,
                data_size: DataSize::List(vec![
                    SizeWeight {
                        size_bytes: 128,
                        weight: 3,
                    },
                    SizeWeight {
                        size_bytes: 4096,
                        weight: 1,
                    },
                ]),
                expiry: Some(ExpiryRange {
                    min_s: 60,
                    max_s: 600,
                }),
                ..default.clone()
            },
        ),
        (
            "sequential_S_1to1",
            MemtierSpec {
                ratio: Ratio { sets: 1, gets: 1 },
                set_pattern: KeyPattern::Sequential,
                get_pattern: KeyPattern::Sequential,
                ..default
            },
        ),
    ];
    let commands = |texts: &[&str]| {
        texts
            .iter()
            .map(|t| kvlab_memtier::ArbitraryCommand::parse(t).expect("bench command parses"))
            .collect::<Vec<_>>()
    };
    let cases = cases.into_iter().chain([
        (
            "commands_set_get",
            MemtierSpec {
                commands: commands(&["set __key__ __data__", "get __key__"]),
                ..MemtierSpec::default()
            },
        ),
        (
            "command_key_within_argument",
            MemtierSpec {
                commands: commands(&["hset h:__key__:x f __data__"]),
                ..MemtierSpec::default()
            },
        ),
    ]);
    for (name, spec) in cases {
        let wl = std::sync::Arc::new(MemtierWorkload::new(spec).expect("bench spec validates"));
        let mut source = wl.source(1, 0, 1);
        let mut req = Request::default();
        g.bench_function(name, |b| {
            b.iter(|| {
                req.clear();
                black_box(source.next(&mut req));
            })
        });
    }
    g.finish();
}

/// Private, so the undocumented function `criterion_group!` generates is not public API.
mod group {
    use super::*;
    criterion_group!(benches, next);
}
use group::benches;
criterion_main!(benches);

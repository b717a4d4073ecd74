//! The memtier workload against memtier_benchmark's behaviour: the SET/GET cycle, key
//! patterns and their ranges, the Gaussian and Zipf distributions (chi-square with a
//! fixed seed, p = 0.001), value sizes, expiry, seeding and key names.

mod fuzz_smoke;

use std::collections::HashMap;
use std::sync::Arc;

use kvlab_core::{OpKind, Request};
use kvlab_core::{OpSource, Workload};
use kvlab_dist::fit::assert_fits;
use kvlab_memtier::{
    DataSize, ExpiryRange, KeyPattern, MemtierSource, MemtierSpec, MemtierWorkload, Ratio,
    SizePattern, SizeWeight, Zipf,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

const SEED: u64 = 0x5eed;

fn workload(spec: MemtierSpec) -> Arc<MemtierWorkload> {
    Arc::new(MemtierWorkload::new(spec).expect("spec validates"))
}

/// One generated request, owned.
#[derive(Clone, Debug, PartialEq)]
struct Op {
    kind: OpKind,
    key: String,
    value: Vec<u8>,
    ttl_s: u32,
}

fn next_op(source: &mut MemtierSource, req: &mut Request) -> Op {
    req.clear();
    source.next(req).expect("memtier sources never run dry");
    assert!(
        req.read.is_blob() || req.value.is_blob(),
        "memtier requests are blobs"
    );
    Op {
        kind: req.kind,
        key: String::from_utf8(req.key.clone()).unwrap(),
        value: req.value.blob().to_vec(),
        ttl_s: req.ttl_s,
    }
}

fn ops(wl: &Arc<MemtierWorkload>, seed: u64, client: usize, clients: usize, n: usize) -> Vec<Op> {
    let mut source = wl.source(seed, client, clients);
    let mut req = Request::default();
    (0..n).map(|_| next_op(&mut source, &mut req)).collect()
}

/// The key number after `prefix`.
fn key_number(key: &str, prefix: &str) -> u64 {
    key.strip_prefix(prefix)
        .unwrap_or_else(|| panic!("key {key} lacks prefix {prefix}"))
        .parse()
        .unwrap_or_else(|_| panic!("key {key} does not end in a decimal number"))
}

fn keys_of(ops: &[Op], kind: OpKind, prefix: &str) -> Vec<u64> {
    ops.iter()
        .filter(|o| o.kind == kind)
        .map(|o| key_number(&o.key, prefix))
        .collect()
}

#[test]
fn defaults_are_memtiers() {
    let spec = MemtierSpec::default();
    assert_eq!(spec.ratio, Ratio { sets: 1, gets: 10 });
    assert_eq!(spec.key_prefix, "memtier-");
    assert_eq!((spec.key_minimum, spec.key_maximum), (0, 10_000_000));
    assert_eq!(
        (spec.set_pattern, spec.get_pattern),
        (KeyPattern::Random, KeyPattern::Random)
    );
    assert_eq!(spec.data_size, DataSize::Fixed(32));
    assert_eq!(spec.expiry, None);
    assert_eq!(spec.requests, Some(10_000));
    assert_eq!(spec.total_clients, 200);
    assert_eq!(spec.key_zipf_exp, 1.0);
    assert!(!spec.random_data && !spec.distinct_client_seed);
    let wl = workload(spec);
    assert_eq!(wl.operation_count(), 2_000_000);
    assert_eq!(wl.requests_per_client(), Some(10_000));
    assert!(!wl.needs().scan);
}

#[test]
fn ratio_is_a_fixed_cycle_of_sets_then_gets() {
    for (sets, gets) in [(1, 10), (3, 2), (0, 1), (1, 0), (2, 0)] {
        let wl = workload(MemtierSpec {
            ratio: Ratio { sets, gets },
            ..MemtierSpec::default()
        });
        let cycle = (sets + gets) as usize;
        let got: Vec<OpKind> = ops(&wl, SEED, 0, 1, 7 * cycle)
            .into_iter()
            .map(|o| o.kind)
            .collect();
        let one: Vec<OpKind> = std::iter::repeat_n(OpKind::Insert, sets as usize)
            .chain(std::iter::repeat_n(OpKind::Read, gets as usize))
            .collect();
        assert_eq!(got, one.repeat(7), "ratio {sets}:{gets}");
    }
}

#[test]
fn sets_carry_values_and_gets_carry_only_a_key() {
    let wl = workload(MemtierSpec {
        ratio: Ratio { sets: 1, gets: 1 },
        data_size: DataSize::Fixed(128),
        ..MemtierSpec::default()
    });
    let got = ops(&wl, SEED, 0, 1, 4);
    assert_eq!(got[0].kind, OpKind::Insert);
    assert_eq!(
        got[0].value,
        vec![b'x'; 128],
        "memtier's default data is x…x"
    );
    assert_eq!(got[0].ttl_s, 0);
    assert_eq!(got[1].kind, OpKind::Read);
    assert!(got[1].value.is_empty());
}

#[test]
fn gets_count_their_values_unless_a_multi_key_get_needs_its_reply() {
    let gets = |spec: MemtierSpec| {
        let wl = workload(spec);
        let mut source = wl.source(SEED, 0, 1);
        let mut req = Request::default();
        let mut discards = Vec::new();
        for _ in 0..8 {
            next_op(&mut source, &mut req);
            if req.kind == OpKind::Read {
                discards.push((req.key_count(), req.read.discards()));
            }
        }
        discards
    };
    let single = gets(MemtierSpec {
        ratio: Ratio { sets: 1, gets: 1 },
        ..MemtierSpec::default()
    });
    assert_eq!(
        single,
        vec![(1, true); 4],
        "a GET's value is counted, not copied"
    );
    let multi = gets(MemtierSpec {
        ratio: Ratio { sets: 1, gets: 3 },
        multi_key_get: 3,
        ..MemtierSpec::default()
    });
    assert_eq!(
        multi,
        vec![(3, false); 4],
        "an MGET's reply says which keys were found"
    );
}

#[test]
fn random_data_differs_between_sets_and_is_not_plain() {
    let wl = workload(MemtierSpec {
        ratio: Ratio { sets: 1, gets: 0 },
        data_size: DataSize::Fixed(64),
        random_data: true,
        ..MemtierSpec::default()
    });
    let got = ops(&wl, SEED, 0, 1, 100);
    for o in &got {
        assert_eq!(o.value.len(), 64);
        assert_ne!(o.value, vec![b'x'; 64]);
    }
    let mut values: Vec<&Vec<u8>> = got.iter().map(|o| &o.value).collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 100, "every SET has a different value");
    // Random bytes: all 256 values occur across the sets.
    let mut seen = [false; 256];
    for b in got.iter().flat_map(|o| &o.value) {
        seen[*b as usize] = true;
    }
    assert!(seen.iter().all(|&s| s), "bytes span 0..=255");
}

#[test]
fn key_names_are_prefix_and_decimal() {
    let wl = workload(MemtierSpec {
        key_prefix: "kv_".into(),
        key_minimum: 1,
        key_maximum: 5_000_000,
        set_pattern: KeyPattern::Sequential,
        get_pattern: KeyPattern::Sequential,
        ratio: Ratio { sets: 1, gets: 0 },
        ..MemtierSpec::default()
    });
    let keys: Vec<String> = ops(&wl, SEED, 0, 1, 3).into_iter().map(|o| o.key).collect();
    assert_eq!(keys, ["kv_1", "kv_2", "kv_3"]);
    let mut out = b"junk".to_vec();
    wl.key_name(4_999_999, &mut out);
    assert_eq!(out, b"kv_4999999");
    wl.key_name(0, &mut out);
    assert_eq!(out, b"kv_0");
}

#[test]
fn every_pattern_stays_in_the_key_range() {
    use KeyPattern::*;
    for (set, get) in [
        (Random, Random),
        (Sequential, Sequential),
        (Gaussian, Gaussian),
        (Zipfian, Zipfian),
        (Parallel, Parallel),
        (Random, Gaussian),
        (Zipfian, Sequential),
    ] {
        let (min, max) = (17, 116);
        let wl = workload(MemtierSpec {
            key_minimum: min,
            key_maximum: max,
            set_pattern: set,
            get_pattern: get,
            ratio: Ratio { sets: 1, gets: 1 },
            total_clients: 3,
            ..MemtierSpec::default()
        });
        let mut seen = std::collections::BTreeSet::new();
        for client in 0..3 {
            for o in ops(&wl, SEED, client, 3, 20_000) {
                let k = key_number(&o.key, "memtier-");
                assert!((min..=max).contains(&k), "{set:?}:{get:?} key {k}");
                seen.insert(k);
            }
        }
        // Every pattern reaches both ends of a 100-key range in 60 000 draws (Zipf's
        // least likely key has p ≈ 1/(116·H) ≈ 0.0027 with exponent 1).
        assert!(
            seen.contains(&min) && seen.contains(&max),
            "{set:?}:{get:?} never reached an end: {:?}..{:?}",
            seen.first(),
            seen.last()
        );
    }
    // Zipf limits keys to positive numbers.
    let wl = workload(MemtierSpec {
        key_minimum: 0,
        key_maximum: 10,
        set_pattern: Zipfian,
        get_pattern: Zipfian,
        ..MemtierSpec::default()
    });
    let keys = keys_of(&ops(&wl, SEED, 0, 1, 10_000), OpKind::Read, "memtier-");
    assert!(keys.iter().all(|&k| (1..=10).contains(&k)));
}

#[test]
fn sequential_counters_are_per_client_and_per_command_and_wrap() {
    let wl = workload(MemtierSpec {
        key_minimum: 3,
        key_maximum: 7,
        set_pattern: KeyPattern::Sequential,
        get_pattern: KeyPattern::Sequential,
        ratio: Ratio { sets: 1, gets: 2 },
        ..MemtierSpec::default()
    });
    for client in [0, 5] {
        let got = ops(&wl, SEED, client, 8, 30);
        assert_eq!(
            keys_of(&got, OpKind::Insert, "memtier-"),
            [3, 4, 5, 6, 7, 3, 4, 5, 6, 7],
            "client {client}: sets walk the range and wrap after key_maximum"
        );
        assert_eq!(
            keys_of(&got, OpKind::Read, "memtier-"),
            [3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7, 3, 4, 5, 6, 7],
            "client {client}: gets have their own counter"
        );
    }
}

#[test]
fn parallel_splits_the_range_as_memtier_does() {
    // range = (max − min)/clients + 1; the last client takes the leftover.
    for (max, want) in [
        (99, [(0, 24), (25, 49), (50, 74), (75, 99)]),
        (100, [(0, 25), (26, 51), (52, 77), (78, 100)]),
    ] {
        let wl = workload(MemtierSpec {
            key_maximum: max,
            set_pattern: KeyPattern::Parallel,
            get_pattern: KeyPattern::Parallel,
            ratio: Ratio { sets: 1, gets: 0 },
            total_clients: 4,
            ..MemtierSpec::default()
        });
        for (client, (lo, hi)) in want.into_iter().enumerate() {
            let source = wl.source(SEED, client, 4);
            assert_eq!(source.key_range(), lo..=hi, "max {max} client {client}");
            let n = (hi - lo + 1) as usize;
            let keys = keys_of(
                &ops(&wl, SEED, client, 4, n + 2),
                OpKind::Insert,
                "memtier-",
            );
            let expect: Vec<u64> = (lo..=hi).chain([lo, lo + 1]).collect();
            assert_eq!(keys, expect, "client {client} walks its slice and wraps");
        }
    }
}

/// Φ, the standard normal CDF (Abramowitz & Stegun 7.1.26 for erf, |error| < 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * z);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[test]
fn gaussian_keys_follow_memtiers_truncated_normal() {
    // Defaults: median = len/2 + min + 0.5, stddev = len/6, draws redrawn outside
    // [min, max + 1] and truncated.
    let (min, max) = (1000u64, 61_000u64);
    let len = (max - min) as f64;
    let (median, stddev) = (len / 2.0 + min as f64 + 0.5, len / 6.0);
    let wl = workload(MemtierSpec {
        key_minimum: min,
        key_maximum: max,
        set_pattern: KeyPattern::Gaussian,
        get_pattern: KeyPattern::Gaussian,
        ..MemtierSpec::default()
    });
    let keys = keys_of(&ops(&wl, SEED, 0, 1, 220_000), OpKind::Read, "memtier-");
    let n = keys.len() as f64;
    let mean = keys.iter().map(|&k| k as f64).sum::<f64>() / n;
    let sd = (keys.iter().map(|&k| (k as f64 - mean).powi(2)).sum::<f64>() / n).sqrt();
    // A normal truncated at ±3σ has standard deviation 0.98658σ; truncating the draw
    // to an integer lowers the mean by 0.5.
    let expect_sd = stddev * 0.98658;
    let se_mean = expect_sd / n.sqrt();
    assert!(
        (mean - (median - 0.5)).abs() < 5.0 * se_mean,
        "mean {mean} vs {}",
        median - 0.5
    );
    assert!(
        (sd - expect_sd).abs() < 5.0 * expect_sd / (2.0 * n).sqrt(),
        "stddev {sd} vs {expect_sd}"
    );

    // The whole shape: 30 equal-width bins over [min, max + 1).
    let bins = 30usize;
    let width = (max + 1 - min) as f64 / bins as f64;
    let cdf = |x: f64| normal_cdf((x - median) / stddev);
    let mass = cdf(max as f64 + 1.0) - cdf(min as f64);
    let expected: Vec<f64> = (0..bins)
        .map(|i| {
            let a = min as f64 + i as f64 * width;
            (cdf(a + width) - cdf(a)) / mass
        })
        .collect();
    let mut observed = vec![0u64; bins];
    for &k in &keys {
        // A key k stands for the draws in [k, k + 1).
        observed[(((k - min) as f64 + 0.5) / width) as usize] += 1;
    }
    assert_fits("gaussian keys", &observed, &expected);
}

#[test]
fn gaussian_honours_stddev_and_median() {
    let wl = workload(MemtierSpec {
        key_minimum: 0,
        key_maximum: 1_000_000,
        set_pattern: KeyPattern::Random,
        get_pattern: KeyPattern::Gaussian,
        key_stddev: Some(5000.0),
        key_median: Some(300_000.0),
        ..MemtierSpec::default()
    });
    let keys = keys_of(&ops(&wl, SEED, 0, 1, 110_000), OpKind::Read, "memtier-");
    let n = keys.len() as f64;
    let mean = keys.iter().map(|&k| k as f64).sum::<f64>() / n;
    let sd = (keys.iter().map(|&k| (k as f64 - mean).powi(2)).sum::<f64>() / n).sqrt();
    assert!(
        (mean - 299_999.5).abs() < 5.0 * 5000.0 / n.sqrt(),
        "mean {mean}"
    );
    assert!(
        (sd - 5000.0).abs() < 5.0 * 5000.0 / (2.0 * n).sqrt(),
        "stddev {sd}"
    );
}

/// P(k) ∝ k^−s over [lo, hi], binned as keys lo..lo+ranks and one tail bin.
fn zipf_pmf(lo: u64, hi: u64, s: f64, ranks: usize) -> Vec<f64> {
    let w: Vec<f64> = (lo..=hi).map(|k| (k as f64).powf(-s)).collect();
    let total: f64 = w.iter().sum();
    let mut pmf: Vec<f64> = w[..ranks].iter().map(|x| x / total).collect();
    pmf.push(1.0 - pmf.iter().sum::<f64>());
    pmf
}

#[test]
fn zipf_matches_the_exact_zipf_pmf() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(SEED);
    for (lo, hi, s, ranks) in [
        (1, 1000, 1.0, 40),
        (1, 1000, 0.6, 40),
        (1, 1000, 0.99, 40),
        (1, 100_000, 2.0, 25),
        (50, 5000, 1.3, 30),
        (1, 200, 0.00001, 199), // degenerates to uniform, as in memtier
    ] {
        let z = Zipf::new(lo, hi, s);
        let mut observed = vec![0u64; ranks + 1];
        for _ in 0..400_000 {
            let k = z.next(&mut rng);
            assert!((lo..=hi).contains(&k));
            observed[((k - lo) as usize).min(ranks)] += 1;
        }
        let expected = if s < 1e-4 {
            let mut v = vec![1.0 / (hi - lo + 1) as f64; ranks];
            v.push(1.0 - v.iter().sum::<f64>());
            v
        } else {
            zipf_pmf(lo, hi, s, ranks)
        };
        assert_fits(&format!("zipf [{lo}, {hi}] s={s}"), &observed, &expected);
    }
    let z = Zipf::new(0, 0, 1.0);
    assert_eq!((z.min(), z.max()), (1, 1), "keys are limited to positive");
}

#[test]
fn data_size_list_is_memtiers_weighted_round_robin() {
    let list = vec![
        SizeWeight {
            size_bytes: 32,
            weight: 2,
        },
        SizeWeight {
            size_bytes: 64,
            weight: 1,
        },
        SizeWeight {
            size_bytes: 1000,
            weight: 3,
        },
    ];
    let wl = workload(MemtierSpec {
        ratio: Ratio { sets: 1, gets: 1 },
        data_size: DataSize::List(list),
        ..MemtierSpec::default()
    });
    // Only SETs draw sizes; each client starts at the first entry.
    for client in [0, 3] {
        let sizes: Vec<usize> = ops(&wl, SEED, client, 4, 2 * 600)
            .into_iter()
            .filter(|o| o.kind == OpKind::Insert)
            .map(|o| o.value.len())
            .collect();
        assert_eq!(&sizes[..8], [32, 32, 64, 1000, 1000, 1000, 32, 32]);
        let mut counts: HashMap<usize, usize> = HashMap::new();
        for s in &sizes {
            *counts.entry(*s).or_default() += 1;
        }
        // 600 SETs = 100 rounds of 2 + 1 + 3: the weights exactly.
        assert_eq!(counts[&32], 200);
        assert_eq!(counts[&64], 100);
        assert_eq!(counts[&1000], 300);
    }
}

#[test]
fn data_size_range_random_is_uniform() {
    let wl = workload(MemtierSpec {
        ratio: Ratio { sets: 1, gets: 0 },
        data_size: DataSize::Range {
            min_bytes: 10,
            max_bytes: 29,
            pattern: SizePattern::Random,
        },
        ..MemtierSpec::default()
    });
    let mut observed = vec![0u64; 20];
    for o in ops(&wl, SEED, 0, 1, 40_000) {
        assert!((10..=29).contains(&o.value.len()), "{}", o.value.len());
        observed[o.value.len() - 10] += 1;
    }
    assert_fits("data-size-range R", &observed, &[0.05; 20]);
}

#[test]
fn data_size_range_spread_follows_the_key() {
    let (kmin, kmax) = (100u64, 1100u64);
    let wl = workload(MemtierSpec {
        key_minimum: kmin,
        key_maximum: kmax,
        ratio: Ratio { sets: 1, gets: 0 },
        data_size: DataSize::Range {
            min_bytes: 10,
            max_bytes: 510,
            pattern: SizePattern::Spread,
        },
        ..MemtierSpec::default()
    });
    for o in ops(&wl, SEED, 0, 1, 5000) {
        let k = key_number(&o.key, "memtier-");
        let a = (k - kmin) as f64 / (kmax - kmin) as f64;
        let want = (500.0 * a + 10.0) as usize;
        assert_eq!(o.value.len(), want, "key {k}");
    }
}

#[test]
fn expiry_is_uniform_in_the_range() {
    let wl = workload(MemtierSpec {
        ratio: Ratio { sets: 3, gets: 1 },
        expiry: Some(ExpiryRange {
            min_s: 5,
            max_s: 14,
        }),
        ..MemtierSpec::default()
    });
    let mut observed = vec![0u64; 10];
    for o in ops(&wl, SEED, 0, 1, 40_000) {
        match o.kind {
            OpKind::Insert => {
                assert!((5..=14).contains(&o.ttl_s), "ttl {}", o.ttl_s);
                observed[(o.ttl_s - 5) as usize] += 1;
            }
            _ => assert_eq!(o.ttl_s, 0, "GETs carry no TTL"),
        }
    }
    assert_fits("expiry-range", &observed, &[0.1; 10]);
}

#[test]
fn without_distinct_seeds_every_client_sends_the_same_stream() {
    let spec = MemtierSpec {
        key_maximum: 1_000_000,
        random_data: true,
        data_size: DataSize::Range {
            min_bytes: 1,
            max_bytes: 100,
            pattern: SizePattern::Random,
        },
        ..MemtierSpec::default()
    };
    let shared = workload(spec.clone());
    let a = ops(&shared, SEED, 0, 8, 500);
    for client in 1..8 {
        assert_eq!(ops(&shared, SEED, client, 8, 500), a, "client {client}");
    }
    let distinct = workload(MemtierSpec {
        distinct_client_seed: true,
        ..spec
    });
    let streams: Vec<Vec<Op>> = (0..8).map(|c| ops(&distinct, SEED, c, 8, 500)).collect();
    for i in 0..8 {
        for j in i + 1..8 {
            assert_ne!(streams[i], streams[j], "clients {i} and {j}");
        }
    }
    // As in memtier (seed = client index): distinct client 0 draws the shared stream.
    assert_eq!(streams[0], a);
}

#[test]
fn streams_are_determined_by_the_seed() {
    let wl = workload(MemtierSpec {
        distinct_client_seed: true,
        set_pattern: KeyPattern::Gaussian,
        get_pattern: KeyPattern::Zipfian,
        expiry: Some(ExpiryRange {
            min_s: 1,
            max_s: 100,
        }),
        ..MemtierSpec::default()
    });
    assert_eq!(ops(&wl, 7, 3, 4, 1000), ops(&wl, 7, 3, 4, 1000));
    assert_ne!(ops(&wl, 7, 3, 4, 1000), ops(&wl, 8, 3, 4, 1000));
}

#[track_caller]
fn rejects(spec: MemtierSpec, needle: &str) {
    match MemtierWorkload::new(spec) {
        Err(kvlab_memtier::MemtierError::Inconsistent(msg)) => {
            assert!(msg.contains(needle), "`{msg}` does not mention `{needle}`")
        }
        Err(e) => panic!("unexpected error kind: {e}"),
        Ok(_) => panic!("accepted a spec that should fail with `{needle}`"),
    }
}

#[test]
fn invalid_specs_are_rejected_naming_the_flag() {
    let d = MemtierSpec::default;
    rejects(
        MemtierSpec {
            ratio: Ratio { sets: 0, gets: 0 },
            ..d()
        },
        "--ratio",
    );
    rejects(
        MemtierSpec {
            key_minimum: 10,
            key_maximum: 9,
            ..d()
        },
        "--key-maximum",
    );
    rejects(
        MemtierSpec {
            set_pattern: KeyPattern::Parallel,
            ..d()
        },
        "parallel key-pattern",
    );
    rejects(
        MemtierSpec {
            set_pattern: KeyPattern::Parallel,
            get_pattern: KeyPattern::Parallel,
            key_maximum: 10,
            total_clients: 12,
            ..d()
        },
        "P:P",
    );
    rejects(
        MemtierSpec {
            key_stddev: Some(10.0),
            ..d()
        },
        "--key-stddev",
    );
    rejects(
        MemtierSpec {
            get_pattern: KeyPattern::Gaussian,
            key_median: Some(10_000_000.0),
            ..d()
        },
        "--key-median",
    );
    rejects(
        MemtierSpec {
            get_pattern: KeyPattern::Gaussian,
            key_maximum: 1,
            ..d()
        },
        "at least 3 keys",
    );
    rejects(
        MemtierSpec {
            key_zipf_exp: 5.0,
            ..d()
        },
        "--key-zipf-exp",
    );
    rejects(
        MemtierSpec {
            data_size: DataSize::Fixed(0),
            ..d()
        },
        "--data-size",
    );
    rejects(
        MemtierSpec {
            data_size: DataSize::Range {
                min_bytes: 0,
                max_bytes: 10,
                pattern: SizePattern::Random,
            },
            ..d()
        },
        "--data-size-range",
    );
    rejects(
        MemtierSpec {
            data_size: DataSize::List(vec![SizeWeight {
                size_bytes: 8,
                weight: 0,
            }]),
            ..d()
        },
        "--data-size-list",
    );
    rejects(
        MemtierSpec {
            expiry: Some(ExpiryRange { min_s: 0, max_s: 0 }),
            ..d()
        },
        "--expiry-range",
    );
    rejects(
        MemtierSpec {
            requests: Some(0),
            ..d()
        },
        "--requests",
    );
}

#[test]
fn effective_settings_use_memtier_flag_names() {
    let spec = MemtierSpec {
        get_pattern: KeyPattern::Gaussian,
        key_maximum: 600,
        ..MemtierSpec::default()
    };
    let eff: HashMap<String, String> = spec.effective().into_iter().collect();
    assert_eq!(eff["ratio"], "1:10");
    assert_eq!(eff["key-pattern"], "R:G");
    assert_eq!(eff["key-stddev"], "100");
    assert_eq!(eff["key-median"], "300.5");
    assert_eq!(eff["data-size"], "32");
    assert_eq!(eff["expiry-range"], "0-0");
}

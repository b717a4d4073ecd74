//! The cache workload: size and popularity distributions against their specification
//! (chi-square, fixed seeds, p = 0.001), the operation mix, look-aside fills, lone keys,
//! determinism, the presets in `workloads/cache`, and CacheBench configs — the real ones
//! in `shared/data/cachebench` and small ones written here.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{assert_fits, chi_square, chi_square_critical, props};
use kvlab_core::{OpKind, Outcome, Request, Slot, StoreError, StoreErrorKind};
use kvlab_workload::generator::zeta;
use kvlab_workload::{
    CacheBenchConfig, CacheSource, CacheSpec, CacheWorkload, OpMix, OpSource, Popularity,
    Properties, SizeDist, Ticket, Verdict, Workload, WorkloadError,
};

const SEED: u64 = 0x5eed;

/// A stand-in cache for driving a source in tests: the keys set and not deleted since,
/// with no eviction. It decides hits and misses the way any cache would.
#[derive(Default)]
struct FakeCache {
    keys: HashMap<Vec<u8>, usize>,
}

impl FakeCache {
    fn execute(&mut self, slot: &mut Slot) {
        let req = &slot.request;
        assert!(req.read.is_blob(), "cache requests are blobs");
        let outcome = match req.kind {
            OpKind::Read => match self.keys.get(&req.key) {
                Some(&len) => Outcome::Hit { bytes: len as u64 },
                None => Outcome::Miss,
            },
            OpKind::Insert => {
                assert!(req.value.is_blob(), "a set's value is a blob");
                assert_eq!(
                    req.written_bytes(),
                    (req.key.len() + req.value.blob().len()) as u64
                );
                self.keys.insert(req.key.clone(), req.value.blob().len());
                Outcome::Written {
                    bytes: (req.key.len() + req.value.blob().len()) as u64,
                }
            }
            OpKind::Delete => {
                self.keys.remove(&req.key);
                Outcome::Deleted
            }
            other => panic!("a cache workload issued {other:?}"),
        };
        slot.complete(Ok(outcome));
    }
}

/// One generated request and how it ended.
#[derive(Clone, Debug, PartialEq)]
struct Step {
    kind: OpKind,
    key: Vec<u8>,
    value: Vec<u8>,
    ttl_s: u32,
    hit: Option<bool>,
    /// The read's value is counted, not copied ([`kvlab_core::ReadFields::discards`]).
    discards: bool,
}

/// Drives `source` through `cache` for `n` requests, `depth` at a time (generated
/// together, then executed and completed in order, as a pipelining runner does).
fn drive(source: &mut CacheSource, cache: &mut FakeCache, n: usize, depth: usize) -> Vec<Step> {
    let mut slots: Vec<(Slot, Ticket)> = (0..depth)
        .map(|_| (Slot::default(), Ticket::NONE))
        .collect();
    let mut steps = Vec::with_capacity(n);
    while steps.len() < n {
        let batch = depth.min(n - steps.len());
        for (slot, ticket) in slots.iter_mut().take(batch) {
            slot.request.clear();
            *ticket = source
                .next(&mut slot.request)
                .expect("cache sources never run dry");
        }
        for (slot, ticket) in slots.iter_mut().take(batch) {
            cache.execute(slot);
            let hit = match slot.result {
                Ok(Outcome::Hit { .. }) => Some(true),
                Ok(Outcome::Miss) => Some(false),
                _ => None,
            };
            steps.push(Step {
                kind: slot.request.kind,
                key: slot.request.key.clone(),
                value: slot.request.value.blob().to_vec(),
                ttl_s: slot.request.ttl_s,
                hit,
                discards: slot.request.read.discards(),
            });
            assert_eq!(source.completed(slot, *ticket), Verdict::Unchecked);
        }
    }
    steps
}

fn spec(keys: u64) -> CacheSpec {
    CacheSpec {
        keys,
        ..CacheSpec::default()
    }
}

fn mix(get: f64, set: f64, delete: f64, lone_get: f64, lone_set: f64) -> OpMix {
    OpMix {
        get,
        set,
        delete,
        lone_get,
        lone_set,
    }
}

fn build(spec: CacheSpec) -> Arc<CacheWorkload> {
    Arc::new(CacheWorkload::new(spec).expect("spec validates"))
}

/// Bins of a size distribution for a chi-square test: consecutive pieces (in size
/// order; pieces must not overlap) and quarters of wide pieces, merged until each bin
/// holds ≥ 1/`max_bins` of the probability. Returns the bins' inclusive upper bounds and
/// probabilities.
fn size_bins(dist: &SizeDist, max_bins: usize) -> (Vec<u64>, Vec<f64>) {
    let total: f64 = dist.pieces().iter().map(|p| p.weight).sum();
    let mut pieces: Vec<_> = dist.pieces().iter().filter(|p| p.weight > 0.0).collect();
    pieces.sort_by_key(|p| p.lo);
    // (upper bound, probability) of each elementary range.
    let mut edges: Vec<(u64, f64)> = Vec::new();
    for p in pieces {
        let span = p.hi - p.lo + 1;
        let per_size = p.weight / total / span as f64;
        if span >= 4 {
            let q = span / 4;
            let mut lo = p.lo;
            for hi in [p.lo + q - 1, p.lo + 2 * q - 1, p.lo + 3 * q - 1, p.hi] {
                edges.push((hi, per_size * (hi - lo + 1) as f64));
                lo = hi + 1;
            }
        } else {
            edges.push((p.hi, per_size * span as f64));
        }
    }
    let min_p = 1.0 / max_bins as f64;
    let (mut uppers, mut probs) = (Vec::new(), Vec::new());
    let mut acc = 0.0;
    for (hi, p) in edges {
        acc += p;
        if acc >= min_p {
            uppers.push(hi);
            probs.push(acc);
            acc = 0.0;
        }
    }
    if acc > 0.0 {
        match probs.last_mut() {
            Some(last) => {
                *last += acc;
                *uppers.last_mut().unwrap() = dist.max();
            }
            None => {
                uppers.push(dist.max());
                probs.push(acc);
            }
        }
    }
    (uppers, probs)
}

fn bin_counts(uppers: &[u64], samples: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut counts = vec![0u64; uppers.len()];
    for s in samples {
        let i = uppers.partition_point(|&u| u < s);
        counts[i.min(uppers.len() - 1)] += 1;
    }
    counts
}

#[test]
fn keys_are_distinct_printable_and_decode() {
    let wl = build(CacheSpec {
        key_size: SizeDist::parse("pieces:1-7:0.3,8-63:0.7").unwrap(),
        ..spec(100_000)
    });
    assert_eq!(wl.key_digits(), 3, "64³ ≥ 100 000 > 64²");
    let mut seen = HashSet::new();
    let mut name = Vec::new();
    for i in 0..100_000 {
        wl.key_name(i, &mut name);
        assert_eq!(name.len(), wl.key_size_of(i));
        assert!(name.len() >= 3);
        assert!(
            name.iter().all(|b| b.is_ascii_graphic()),
            "memcached-safe: {name:?}"
        );
        assert!(!CacheWorkload::is_lone_key(&name));
        assert_eq!(wl.key_index(&name), Some(i));
        assert!(seen.insert(name.clone()), "key {i} repeats");
    }
    // Not keys of this population: a padding change, a short key, a lone key.
    wl.key_name(5, &mut name);
    let last = name.len() - 1;
    name[last] = if name[last] == b'A' { b'B' } else { b'A' };
    assert_eq!(wl.key_index(&name), None);
    assert_eq!(wl.key_index(b"AB"), None);
    assert_eq!(wl.key_index(b"#AAAA0.A."), None);
}

#[test]
fn per_key_sizes_fit_their_distributions() {
    let key_size = SizeDist::parse("uniform:16-255").unwrap();
    let value_size =
        SizeDist::parse("pieces:10-99:40,100-999:35,1000-9999:20,10000-65535:5").unwrap();
    let ttl = SizeDist::parse("discrete:60:5,3600:4,86400:1").unwrap();
    let wl = build(CacheSpec {
        key_size: key_size.clone(),
        value_size: value_size.clone(),
        ttl_s: Some(ttl.clone()),
        popularity: Popularity::Uniform,
        ..spec(200_000)
    });
    let n = wl.key_count();
    let key_of: &dyn Fn(u64) -> u64 = &|i| wl.key_size_of(i) as u64;
    let value_of: &dyn Fn(u64) -> u64 = &|i| wl.value_size_of(i) as u64;
    let ttl_of: &dyn Fn(u64) -> u64 = &|i| u64::from(wl.ttl_of(i));
    for (what, dist, sample) in [
        ("key size", &key_size, key_of),
        ("value size", &value_size, value_of),
        ("ttl", &ttl, ttl_of),
    ] {
        let (uppers, probs) = size_bins(dist, 40);
        let counts = bin_counts(&uppers, (0..n).map(sample));
        assert_fits(what, &counts, &probs);
        let mean = (0..n).map(sample).sum::<u64>() as f64 / n as f64;
        let sd = {
            let m2 = dist
                .pieces()
                .iter()
                .map(|p| {
                    let (a, b) = (p.lo as f64, p.hi as f64);
                    p.weight * ((b - a + 1.0).powi(2) - 1.0) / 12.0
                        + p.weight * ((a + b) / 2.0).powi(2)
                })
                .sum::<f64>()
                / dist.pieces().iter().map(|p| p.weight).sum::<f64>();
            (m2 - dist.mean().powi(2)).sqrt()
        };
        assert!(
            (mean - dist.mean()).abs() < 5.0 * sd / (n as f64).sqrt(),
            "{what}: mean {mean} vs {}",
            dist.mean()
        );
    }
    // Negative control: the value sizes do not fit a shifted distribution.
    let shifted = SizeDist::parse("pieces:10-99:30,100-999:45,1000-9999:20,10000-65535:5").unwrap();
    let (uppers, probs) = size_bins(&shifted, 40);
    let counts = bin_counts(&uppers, (0..n).map(|i| wl.value_size_of(i) as u64));
    assert!(chi_square(&counts, &probs) > chi_square_critical(counts.len()));

    // Requests carry the key's own sizes and TTL.
    let wl = build(CacheSpec {
        mix: mix(0.0, 1.0, 0.0, 0.0, 0.0),
        ..(*wl).spec().clone()
    });
    let mut source = wl.source(SEED, 0, 1);
    for step in drive(&mut source, &mut FakeCache::default(), 20_000, 1) {
        let i = wl.key_index(&step.key).expect("a population key");
        assert_eq!(step.kind, OpKind::Insert);
        assert_eq!(step.value.len(), wl.value_size_of(i));
        assert_eq!(step.ttl_s, wl.ttl_of(i));
        assert!(step.value.iter().all(|b| (b' '..=b'~').contains(b)));
    }
}

#[test]
fn popularity_buckets_follow_their_weights() {
    let sizes = vec![1, 1, 2, 10, 100, 1000, 98_886];
    let weights = vec![30.0, 10.0, 10.0, 15.0, 15.0, 10.0, 10.0];
    let wl = build(CacheSpec {
        popularity: Popularity::Buckets {
            sizes: sizes.clone(),
            weights: weights.clone(),
        },
        mix: mix(1.0, 0.0, 0.0, 0.0, 0.0),
        ..spec(100_000)
    });
    let ranges = wl.bucket_ranges().expect("bucketed popularity");
    // Σ sizes = keys: every bucket keeps its size.
    let lens: Vec<u64> = ranges.iter().map(|(r, _)| r.end - r.start).collect();
    assert_eq!(lens, sizes);
    let total: f64 = weights.iter().sum();
    for ((_, p), w) in ranges.iter().zip(&weights) {
        assert!((p - w / total).abs() < 1e-12);
    }
    let mut source = wl.source(SEED, 0, 1);
    let steps = drive(&mut source, &mut FakeCache::default(), 200_000, 1);
    let mut counts = vec![0u64; ranges.len()];
    let mut in_big = vec![0u64; 10];
    let big = ranges[6].0.clone();
    for s in &steps {
        let i = wl.key_index(&s.key).unwrap();
        let b = ranges.iter().position(|(r, _)| r.contains(&i)).unwrap();
        counts[b] += 1;
        if big.contains(&i) {
            in_big[((i - big.start) * 10 / (big.end - big.start)) as usize] += 1;
        }
    }
    let probs: Vec<f64> = ranges.iter().map(|(_, p)| *p).collect();
    assert_fits("bucket frequencies", &counts, &probs);
    assert_fits("uniform within a bucket", &in_big, &[0.1; 10]);
}

#[test]
fn bucket_sizes_scale_with_the_key_count() {
    let popularity = Popularity::Buckets {
        sizes: vec![1, 1, 4, 994],
        weights: vec![4.0, 3.0, 2.0, 1.0],
    };
    let lens = |keys| -> Vec<u64> {
        build(CacheSpec {
            popularity: popularity.clone(),
            ..spec(keys)
        })
        .bucket_ranges()
        .unwrap()
        .iter()
        .map(|(r, _)| r.end - r.start)
        .collect()
    };
    assert_eq!(lens(1000), [1, 1, 4, 994]);
    // Scaled up: proportional.
    assert_eq!(lens(10_000), [10, 10, 40, 9940]);
    // Scaled down: every bucket keeps a key; the rest in proportion to size − 1.
    assert_eq!(lens(100), [1, 1, 1, 97]);
    let err = CacheWorkload::new(CacheSpec {
        popularity,
        ..spec(3)
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("at least one key per bucket"),
        "{err}"
    );
}

/// The PMF of YCSB's (Gray et al.) Zipfian sampler for ranks `0..ranks` (see
/// `tests/distributions.rs`).
fn gray_pmf(n: u64, theta: f64, zetan: f64, ranks: usize) -> Vec<f64> {
    let zeta2 = 1.0 + 0.5f64.powf(theta);
    let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
    let u2 = zeta2 / zetan;
    let lo = |k: f64| ((k / n as f64).powf(1.0 - theta) - 1.0 + eta) / eta;
    (0..ranks)
        .map(|k| {
            let a = lo(k as f64).max(u2);
            let b = lo(k as f64 + 1.0).min(1.0);
            let head = match k {
                0 => 1.0 / zetan,
                1 => 0.5f64.powf(theta) / zetan,
                _ => 0.0,
            };
            head + (b - a).max(0.0)
        })
        .collect()
}

fn get_indices(wl: &Arc<CacheWorkload>, n: usize) -> Vec<u64> {
    let mut source = wl.source(SEED, 0, 1);
    drive(&mut source, &mut FakeCache::default(), n, 1)
        .iter()
        .map(|s| wl.key_index(&s.key).unwrap())
        .collect()
}

fn rank_fit(what: &str, indices: &[u64], pmf: &[f64]) {
    let ranks = pmf.len();
    let mut bins = vec![0u64; ranks + 1];
    for &i in indices {
        bins[(i as usize).min(ranks)] += 1;
    }
    let mut expected = pmf.to_vec();
    expected.push(1.0 - pmf.iter().sum::<f64>());
    assert_fits(what, &bins, &expected);
}

#[test]
fn zipfian_popularity_fits_for_any_theta() {
    let n = 10_000u64;
    let gets = mix(1.0, 0.0, 0.0, 0.0, 0.0);
    let wl = build(CacheSpec {
        popularity: Popularity::Zipfian { theta: 0.99 },
        mix: gets,
        ..spec(n)
    });
    let indices = get_indices(&wl, 200_000);
    rank_fit(
        "zipfian θ=0.99",
        &indices,
        &gray_pmf(n, 0.99, zeta(n, 0.99), 40),
    );

    for theta in [1.0, 1.3] {
        let wl = build(CacheSpec {
            popularity: Popularity::Zipfian { theta },
            mix: gets,
            ..spec(n)
        });
        let indices = get_indices(&wl, 200_000);
        let norm: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
        let pmf: Vec<f64> = (1..=40).map(|k| (k as f64).powf(-theta) / norm).collect();
        rank_fit(&format!("zipf θ={theta}"), &indices, &pmf);
    }
}

#[test]
fn uniform_and_normal_popularity() {
    let n = 1000u64;
    let gets = mix(1.0, 0.0, 0.0, 0.0, 0.0);
    let wl = build(CacheSpec {
        popularity: Popularity::Uniform,
        mix: gets,
        ..spec(n)
    });
    let mut bins = vec![0u64; 50];
    for i in get_indices(&wl, 100_000) {
        bins[(i * 50 / n) as usize] += 1;
    }
    assert_fits("uniform", &bins, &[0.02; 50]);

    // CacheBench's default: N((n−1)/2, (n−1)/4) truncated to ±2σ, so 68.27/95.45 of
    // the draws lie within one σ of the mean, and the mean is the centre.
    let wl = build(CacheSpec {
        popularity: Popularity::Normal,
        mix: gets,
        ..spec(n)
    });
    let indices = get_indices(&wl, 100_000);
    let (mu, sigma) = ((n - 1) as f64 / 2.0, (n - 1) as f64 / 4.0);
    let within = indices
        .iter()
        .filter(|&&i| (i as f64 - mu).abs() <= sigma)
        .count();
    let p = 0.682_689_5 / 0.954_499_7;
    assert_fits(
        "within one σ",
        &[within as u64, (indices.len() - within) as u64],
        &[p, 1.0 - p],
    );
    let mean = indices.iter().sum::<u64>() as f64 / indices.len() as f64;
    assert!((mean - mu).abs() < 3.0, "mean {mean}");
}

/// Counts of get, set, delete, lone get, lone set in `steps`.
fn classify(steps: &[Step]) -> [u64; 5] {
    let mut counts = [0u64; 5];
    for s in steps {
        let lone = CacheWorkload::is_lone_key(&s.key);
        let i = match (s.kind, lone) {
            (OpKind::Read, false) => 0,
            (OpKind::Insert, false) => 1,
            (OpKind::Delete, false) => 2,
            (OpKind::Read, true) => 3,
            (OpKind::Insert, true) => 4,
            other => panic!("unexpected {other:?}"),
        };
        counts[i] += 1;
    }
    counts
}

#[test]
fn operation_mix_fits_its_shares() {
    let shares = mix(5.0, 3.0, 1.0, 0.5, 0.5);
    let wl = build(CacheSpec {
        mix: shares,
        ..spec(10_000)
    });
    let mut source = wl.source(SEED, 0, 1);
    let steps = drive(&mut source, &mut FakeCache::default(), 100_000, 1);
    let expected: Vec<f64> = shares.normalised().unwrap().shares().to_vec();
    assert_fits("operation mix", &classify(&steps), &expected);
    // Deletes and gets carry no value; sets do. No get's value is looked at, so none is
    // copied.
    for s in &steps {
        assert_eq!(s.value.is_empty(), s.kind != OpKind::Insert, "{s:?}");
        assert!(s.kind != OpKind::Read || s.discards, "{s:?}");
    }
}

#[test]
fn lookaside_sets_exactly_once_per_missed_get() {
    for depth in [1, 8] {
        let wl = build(CacheSpec {
            mix: mix(0.8, 0.05, 0.05, 0.1, 0.0),
            lookaside: true,
            popularity: Popularity::Zipfian { theta: 0.9 },
            ..spec(5_000)
        });
        let mut source = wl.source(SEED, 3, 4);
        let mut cache = FakeCache::default();
        let steps = drive(&mut source, &mut cache, 100_000, depth);

        // Every get that missed has its own set later, in miss order; no other set of
        // that kind appears: count the missed gets and the look-aside sets by replaying
        // the queue a runner would see.
        let mut missed: std::collections::VecDeque<usize> = Default::default();
        let (mut misses, mut fills, mut hits) = (0u64, 0u64, 0u64);
        let (mut lone_gets, mut lone_fills) = (0u64, 0u64);
        for (at, s) in steps.iter().enumerate() {
            // Requests generated in the same batch as a miss cannot be its fill.
            let batch_start = at - at % depth;
            let fill_due = missed.front().is_some_and(|&m| m < batch_start);
            if fill_due {
                let m = &steps[missed.pop_front().unwrap()];
                assert_eq!(
                    s.kind,
                    OpKind::Insert,
                    "step {at}: the fill of a missed get"
                );
                assert_eq!(s.key, m.key, "step {at}: fills the missed key");
                fills += 1;
                match wl.key_index(&s.key) {
                    Some(i) => assert_eq!(s.value.len(), wl.value_size_of(i)),
                    None => {
                        assert!(CacheWorkload::is_lone_key(&s.key));
                        lone_fills += 1;
                    }
                }
                continue;
            }
            if s.kind == OpKind::Read {
                if CacheWorkload::is_lone_key(&s.key) {
                    lone_gets += 1;
                    assert_eq!(s.hit, Some(false), "a lone get never hits");
                }
                match s.hit {
                    Some(true) => hits += 1,
                    Some(false) => {
                        misses += 1;
                        missed.push_back(at);
                    }
                    None => unreachable!(),
                }
            }
        }
        assert_eq!(fills + missed.len() as u64, misses, "depth {depth}");
        assert_eq!(source.pending_fills(), missed.len());
        // As in CacheBench, lone gets are filled too.
        let lone_pending = missed
            .iter()
            .filter(|&&m| CacheWorkload::is_lone_key(&steps[m].key))
            .count() as u64;
        assert_eq!(lone_fills + lone_pending, lone_gets);
        assert!(
            hits > 10_000 && misses > 5_000,
            "hits {hits}, misses {misses}"
        );
    }
}

#[test]
fn no_fill_without_lookaside_after_a_hit_or_after_an_error() {
    let wl = build(CacheSpec {
        mix: mix(1.0, 0.0, 0.0, 0.0, 0.0),
        lookaside: true,
        ..spec(100)
    });
    let mut source = wl.source(SEED, 0, 1);
    let mut slot = Slot::default();
    let t = source.next(&mut slot.request).unwrap();
    slot.complete(Err(StoreError::new(StoreErrorKind::Timeout, "slow")));
    source.completed(&slot, t);
    assert_eq!(source.pending_fills(), 0, "an error is not a miss");
    slot.request.clear();
    let t = source.next(&mut slot.request).unwrap();
    slot.complete(Ok(Outcome::Hit { bytes: 3 }));
    source.completed(&slot, t);
    assert_eq!(source.pending_fills(), 0);
    slot.request.clear();
    let t = source.next(&mut slot.request).unwrap();
    let missed_key = slot.request.key.clone();
    slot.complete(Ok(Outcome::Miss));
    source.completed(&slot, t);
    assert_eq!(source.pending_fills(), 1);
    let mut req = Request::default();
    assert_eq!(source.next(&mut req), Some(Ticket::NONE));
    assert_eq!((req.kind, &req.key), (OpKind::Insert, &missed_key));

    let wl = build(CacheSpec {
        mix: mix(1.0, 0.0, 0.0, 0.0, 0.0),
        lookaside: false,
        ..spec(100)
    });
    let mut source = wl.source(SEED, 0, 1);
    let steps = drive(&mut source, &mut FakeCache::default(), 1000, 1);
    assert!(steps
        .iter()
        .all(|s| s.kind == OpKind::Read && s.hit == Some(false)));
}

#[test]
fn lone_keys_are_never_repeated_nor_population_keys() {
    let wl = build(CacheSpec {
        mix: mix(0.5, 0.2, 0.0, 0.2, 0.1),
        lookaside: true,
        ..spec(1000)
    });
    let mut lone_gets = HashSet::new();
    let mut cache = FakeCache::default();
    for client in 0..3 {
        let mut source = wl.source(SEED, client, 3);
        for s in drive(&mut source, &mut cache, 20_000, 1) {
            if !CacheWorkload::is_lone_key(&s.key) {
                continue;
            }
            assert_eq!(wl.key_index(&s.key), None);
            assert!(s.key.iter().all(|b| b.is_ascii_graphic()));
            if s.kind == OpKind::Read {
                assert_eq!(s.hit, Some(false), "a lone get hit: {:?}", s.key);
                assert!(lone_gets.insert(s.key), "a lone key was requested twice");
            }
        }
    }
    assert!(lone_gets.len() > 5_000, "{}", lone_gets.len());
}

#[test]
fn same_seed_same_stream_other_client_or_seed_other_stream() {
    let wl = build(CacheSpec {
        mix: mix(0.6, 0.2, 0.1, 0.05, 0.05),
        lookaside: true,
        ttl_s: Some(SizeDist::parse("uniform:1-1000").unwrap()),
        key_size: SizeDist::parse("uniform:8-40").unwrap(),
        value_size: SizeDist::parse("pieces:1-100:1,101-5000:1").unwrap(),
        ..spec(2000)
    });
    let run = |seed, client| {
        let mut source = wl.source(seed, client, 4);
        drive(&mut source, &mut FakeCache::default(), 5000, 4)
    };
    let a = run(SEED, 1);
    assert_eq!(a, run(SEED, 1));
    assert_ne!(a, run(SEED, 2));
    assert_ne!(a, run(SEED + 1, 1));
    // Same key population either way: sizes are per key, not per stream.
    let b = run(SEED + 1, 1);
    let sizes: HashMap<&[u8], usize> = a
        .iter()
        .filter(|s| s.kind == OpKind::Insert && !CacheWorkload::is_lone_key(&s.key))
        .map(|s| (s.key.as_slice(), s.value.len()))
        .collect();
    let mut shared = 0;
    for s in b.iter().filter(|s| s.kind == OpKind::Insert) {
        if let Some(&len) = sizes.get(s.key.as_slice()) {
            assert_eq!(len, s.value.len());
            shared += 1;
        }
    }
    assert!(shared > 100);
}

// ---------------------------------------------------------------------------------
// Property files and presets.

fn presets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/cache")
}

fn preset(name: &str, overrides: &[&str]) -> Result<CacheSpec, WorkloadError> {
    let mut p = Properties::new();
    p.load_file(&presets_dir().join(name))?;
    for o in overrides {
        p.set_override(o)?;
    }
    CacheSpec::from_properties(&p, &["threadcount", "target"], &[])
}

#[test]
fn presets_parse_and_hit_their_class_means() {
    let classes = [("small", 150.0), ("mixed", 1391.0), ("large", 19010.0)];
    let mixes = [
        ("readonly", 1.0, 0.0),
        ("readheavy", 0.95, 0.05),
        ("balanced", 0.5, 0.5),
        ("setheavy", 0.05, 0.95),
    ];
    let mut found = 0;
    for entry in std::fs::read_dir(presets_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let spec = preset(&name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (_, target) = classes
            .iter()
            .find(|(c, _)| name.starts_with(&format!("kv-{c}-")))
            .unwrap_or_else(|| panic!("{name}: not a kv-<class>-<mix> preset"));
        let (_, get, set) = mixes
            .iter()
            .find(|(m, _, _)| name.ends_with(&format!("-{m}")))
            .unwrap_or_else(|| panic!("{name}: unknown mix"));
        let mean = spec.mean_kv_bytes();
        assert!(
            (mean / target - 1.0).abs() < 0.02,
            "{name}: mean {mean} vs {target}"
        );
        assert_eq!(spec.mix, mix(*get, *set, 0.0, 0.0, 0.0), "{name}");
        assert!(spec.lookaside, "{name}");
        assert_eq!(spec.keys, ((256u64 << 20) as f64 / mean) as u64, "{name}");
        let wl = CacheWorkload::new(spec).unwrap();
        assert!(wl.key_digits() <= 4);
        found += 1;
    }
    assert_eq!(found, 12);

    // Scaling: the data size sets the key count; -p cache.keys replaces it.
    let small = preset("kv-mixed-balanced", &[]).unwrap();
    let big = preset("kv-mixed-balanced", &["cache.data_size=2GiB"]).unwrap();
    assert!((big.keys as f64 / small.keys as f64 - 8.0).abs() < 1e-4);
    assert_eq!(
        preset("kv-mixed-balanced", &["cache.keys=1000"])
            .unwrap()
            .keys,
        1000
    );
}

#[test]
fn property_errors_name_the_key_and_line() {
    let parse =
        |text: &str| CacheSpec::from_properties(&props(text), &["threadcount"], &["rocksdb."]);
    let err = parse("workload=kvlab.cache\ncache.popularty=uniform\n").unwrap_err();
    assert!(
        matches!(&err, WorkloadError::UnknownProperty { suggestion: Some(s), .. } if s == "cache.popularity"),
        "{err}"
    );
    assert!(err.to_string().contains("workloads/x:2"), "{err}");
    let err = parse("cache.value_size=pieces:1-10\n").unwrap_err();
    assert!(
        err.to_string().contains("cache.value_size") && err.to_string().contains("workloads/x:1"),
        "{err}"
    );
    let err = parse("cache.keys=10\ncache.data_size=1GiB\n").unwrap_err();
    assert!(err.to_string().contains("both set"), "{err}");
    let err = parse("cache.data_size=lots\n").unwrap_err();
    assert!(err.to_string().contains("cache.data_size"), "{err}");
    let err = parse("workload=site.ycsb.workloads.CoreWorkload\n").unwrap_err();
    assert!(err.to_string().contains("kvlab.cache"), "{err}");
    let err = parse("cache.popularity=buckets\n").unwrap_err();
    assert!(
        err.to_string().contains("cache.popularity_buckets"),
        "{err}"
    );
    let err = parse("cache.get=0\ncache.set=0\n").unwrap_err();
    assert!(err.to_string().contains("sum to 0"), "{err}");
    let err = parse("cache.lookaside=yes\n").unwrap_err();
    assert!(err.to_string().contains("true, false"), "{err}");

    // Accepted: other layers' names, pass-through prefixes, inline buckets.
    let spec = parse(
        "threadcount=4\nrocksdb.block_cache=1\ncache.popularity=buckets\n\
         cache.popularity_buckets=1, 9\ncache.popularity_weights=3,1\ncache.ttl=fixed:60\n\
         cache.keys=10\n",
    )
    .unwrap();
    assert_eq!(
        spec.popularity,
        Popularity::Buckets {
            sizes: vec![1, 9],
            weights: vec![3.0, 1.0]
        }
    );
    assert_eq!(spec.ttl_s, Some(SizeDist::fixed(60)));

    // A CacheBench pop.json named by a property file, relative to that file.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pop.json",
        r#"{"popularityBuckets": [1, 3], "popularityWeights": [2, 1], "oneHits": 0.1}"#,
    );
    let file = write(
        dir.path(),
        "workload",
        "cache.keys=4\ncache.popularity=buckets\ncache.popularity_file=pop.json\n",
    );
    let mut p = Properties::new();
    p.load_file(&file).unwrap();
    let spec = CacheSpec::from_properties(&p, &[], &[]).unwrap();
    assert_eq!(
        spec.popularity,
        Popularity::Buckets {
            sizes: vec![1, 3],
            weights: vec![2.0, 1.0]
        }
    );
    let mut p = Properties::new();
    p.parse_str(
        "cache.popularity=buckets\ncache.popularity_file=none.json\n",
        &file,
    )
    .unwrap();
    let err = CacheSpec::from_properties(&p, &[], &[]).unwrap_err();
    assert!(err.to_string().contains("none.json"), "{err}");
}

// ---------------------------------------------------------------------------------
// CacheBench configs.

fn overrides(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Groups consecutive buckets until each group expects ≥ 20 of `draws`.
fn merge_bins(counts: &[u64], probs: &[f64], draws: f64) -> (Vec<u64>, Vec<f64>) {
    let (mut oc, mut op) = (Vec::new(), Vec::new());
    let (mut c, mut p) = (0u64, 0.0);
    for (&ci, &pi) in counts.iter().zip(probs) {
        c += ci;
        p += pi;
        if p * draws >= 20.0 {
            oc.push(c);
            op.push(p);
            c = 0;
            p = 0.0;
        }
    }
    if p > 0.0 || c > 0 {
        *oc.last_mut().unwrap() += c;
        *op.last_mut().unwrap() += p;
    }
    (oc, op)
}

#[test]
fn real_cachebench_configs_scale_down_and_fit() {
    let Some(dir) = common::cachebench_dir() else {
        return;
    };
    let mut configs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path().join("config.json");
        if !path.is_file() {
            continue;
        }
        configs += 1;
        let raw: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let test = &raw["test_config"];
        let config = CacheBenchConfig::load(
            &path,
            &overrides(&[("numKeys", "100000"), ("numOps", "100000")]),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let spec = config.spec();
        assert_eq!(spec.keys, 100_000);
        assert_eq!(config.ops_per_thread(), 100_000);
        assert_eq!(config.threads(), test["numThreads"].as_u64().unwrap());
        assert_eq!(spec.operations, 100_000 * config.threads());
        assert_eq!(
            config.cache_size_mb(),
            raw["cache_config"]["cacheSizeMB"].as_u64()
        );
        assert!(spec.lookaside);
        let warned: Vec<&str> = config.warnings().iter().map(|w| w.field.as_str()).collect();
        assert!(warned.contains(&"pop.json:oneHits"), "{warned:?}");
        assert!(
            warned.contains(&"cache_config.poolRebalanceIntervalSec"),
            "{warned:?}"
        );
        if test.get("opDelayNs").is_some() {
            assert!(warned.contains(&"test_config.opDelayNs"));
            let expected = config.threads() as f64 * test["opDelayBatch"].as_f64().unwrap() * 1e9
                / test["opDelayNs"].as_f64().unwrap();
            assert_eq!(config.target_rate_ops_per_s(), Some(expected));
        } else {
            assert_eq!(config.target_rate_ops_per_s(), None);
        }

        // The spec is the file's: ratios, key sizes, value sizes, buckets.
        let ratio = |f: &str| test.get(f).and_then(|v| v.as_f64()).unwrap_or(0.0);
        assert_eq!(
            spec.mix,
            mix(
                ratio("getRatio"),
                ratio("setRatio"),
                ratio("delRatio"),
                ratio("loneGetRatio"),
                0.0
            )
        );
        let sizes: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(path.with_file_name("sizes.json")).unwrap(),
        )
        .unwrap();
        let values = sizes["valSizeRange"].as_array().unwrap();
        assert_eq!(
            spec.value_size.pieces().len(),
            values.len(),
            "discrete sizes"
        );
        assert_eq!(
            spec.value_size.max(),
            values.last().unwrap().as_u64().unwrap()
        );
        // Key sizes: uniform over [r[i], r[i+1]) with probability p[i].
        let bounds: Vec<u64> = test["keySizeRange"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let probs: Vec<f64> = test["keySizeRangeProbability"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let pieces: Vec<(u64, u64, f64)> = spec
            .key_size
            .pieces()
            .iter()
            .map(|p| (p.lo, p.hi, p.weight))
            .collect();
        let expected: Vec<(u64, u64, f64)> = bounds
            .windows(2)
            .zip(&probs)
            .map(|(b, &p)| (b[0], b[1] - 1, p))
            .collect();
        assert_eq!(pieces, expected);

        let wl = Arc::new(config.workload().unwrap());
        let name = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();

        // Per-key value sizes fit the file's distribution.
        let (uppers, probs) = size_bins(&spec.value_size, 40);
        let counts = bin_counts(&uppers, (0..spec.keys).map(|i| wl.value_size_of(i) as u64));
        assert_fits(&format!("{name}: value sizes"), &counts, &probs);

        // The stream: op shares and bucket frequencies, with a cache that never hits so
        // every get is filled with its key's value size.
        let mut source = wl.source(SEED, 0, config.threads() as usize);
        let mut cache = FakeCache::default();
        let mut steps = Vec::new();
        let mut slot = Slot::default();
        while steps.len() < 200_000 {
            slot.request.clear();
            let t = source.next(&mut slot.request).unwrap();
            cache.execute(&mut slot);
            if slot.request.kind == OpKind::Insert {
                cache.keys.clear();
            }
            steps.push((
                slot.request.kind,
                slot.request.key.clone(),
                slot.request.value.blob().len(),
            ));
            source.completed(&slot, t);
        }
        let (mut gets, mut lone_gets, mut fills) = (0u64, 0u64, 0u64);
        let ranges = wl.bucket_ranges().unwrap();
        let mut bucket_counts = vec![0u64; ranges.len()];
        for (kind, key, len) in &steps {
            let index = wl.key_index(key);
            match (kind, index) {
                (OpKind::Read, Some(i)) => {
                    gets += 1;
                    let b = ranges.partition_point(|(r, _)| r.end <= i);
                    bucket_counts[b] += 1;
                }
                (OpKind::Read, None) => lone_gets += 1,
                (OpKind::Insert, Some(i)) => {
                    fills += 1;
                    assert_eq!(*len, wl.value_size_of(i));
                }
                (OpKind::Insert, None) => fills += 1,
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        assert_eq!(
            fills,
            gets + lone_gets,
            "{name}: every get missed and was filled"
        );
        let m = spec.mix.normalised().unwrap();
        assert_fits(
            &format!("{name}: get/lone get"),
            &[gets, lone_gets],
            &[m.get, m.lone_get],
        );
        let probs: Vec<f64> = ranges.iter().map(|(_, p)| *p).collect();
        let (oc, op) = merge_bins(&bucket_counts, &probs, gets as f64);
        assert_fits(&format!("{name}: popularity buckets"), &oc, &op);
    }
    assert_eq!(configs, 6, "the six hit_ratio configs");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const SMALL_CONFIG: &str = r#"{
  // comments are allowed, as CacheBench strips them
  "cache_config": { "cacheSizeMB": 64, "nvmCacheSizeMB": 512, "htBucketPower": 20 },
  "test_config": {
    "numOps": 1000, "numThreads": 4, "numKeys": 5000,
    "keySizeRange": [8, 16, 32], "keySizeRangeProbability": [0.5, 0.5],
    "valSizeRange": [100, 200, 1000, 5000], "valSizeRangeProbability": [0.6, 0.3, 0.1],
    "popularityBuckets": [1, 10, 4989], "popularityWeights": [5, 3, 2],
    "getRatio": 0.7, "setRatio": 0.2, "delRatio": 0.1, "loneGetRatio": 0.1,
    /* block comment "with a string" */
    "addChainedRatio": 0.0,
    "enableLookaside": false,
    "opRatePerSec": 5000,
    "samplingIntervalMs": 500,
    "getRatoi": 0.5
  }
}"#;

#[test]
fn cachebench_fields_map_to_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "config.json", SMALL_CONFIG);
    let config = CacheBenchConfig::load(&path, &[]).unwrap();
    let spec = config.spec();
    assert_eq!(
        (spec.keys, spec.operations, config.threads()),
        (5000, 4000, 4)
    );
    // Piecewise: [100, 200) → 100..=199, and so on.
    assert_eq!(
        spec.value_size,
        SizeDist::parse("pieces:100-199:0.6,200-999:0.3,1000-4999:0.1").unwrap()
    );
    assert_eq!(
        spec.key_size,
        SizeDist::parse("pieces:8-15:0.5,16-31:0.5").unwrap()
    );
    assert_eq!(spec.mix, mix(0.7, 0.2, 0.1, 0.1, 0.0));
    assert!(!spec.lookaside);
    assert_eq!(config.target_rate_ops_per_s(), Some(5000.0));
    assert_eq!(
        (config.cache_size_mb(), config.nvm_cache_size_mb()),
        (Some(64), Some(512))
    );
    let warnings: Vec<String> = config.warnings().iter().map(|w| w.to_string()).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("cache_config.htBucketPower")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("test_config.samplingIntervalMs")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("test_config.getRatoi") && w.contains("did you mean `getRatio`")),
        "{warnings:?}"
    );
    assert_eq!(warnings.len(), 3, "{warnings:?}");

    // Overrides scale it and name unknown fields.
    let config = CacheBenchConfig::load(
        &path,
        &overrides(&[
            ("numThreads", "2"),
            ("numOps", "50"),
            ("enableLookaside", "true"),
            ("setRatio", "0"),
        ]),
    )
    .unwrap();
    assert_eq!((config.spec().operations, config.threads()), (100, 2));
    assert!(config.spec().lookaside);
    assert_eq!(config.spec().mix.set, 0.0);
    let err = CacheBenchConfig::load(&path, &overrides(&[("numkeys", "10")])).unwrap_err();
    assert!(
        matches!(&err, WorkloadError::UnknownProperty { suggestion: Some(s), .. } if s == "numKeys"),
        "{err}"
    );
    let err = CacheBenchConfig::load(&path, &overrides(&[("numKeys", "lots")])).unwrap_err();
    assert!(
        err.to_string().contains("numKeys") && err.to_string().contains("-p"),
        "{err}"
    );

    // A single pool distribution, discrete TTLs, and the default (normal) popularity.
    let path = write(
        dir.path(),
        "pooled.json",
        r#"{"test_config": {"numKeys": 100, "numThreads": 1, "generator": "online",
            "poolDistributions": [{
              "keySizeRange": [16, 17], "keySizeRangeProbability": [1],
              "valSizeRange": [10, 20], "valSizeRangeProbability": [1, 3],
              "ttlSecsRange": [60, 3600], "ttlSecsRangeProbability": [1, 1],
              "getRatio": 1}]}}"#,
    );
    let config = CacheBenchConfig::load(
        &path,
        &overrides(&[("getRatio", "0.5"), ("setRatio", "0.5")]),
    )
    .unwrap();
    let spec = config.spec();
    assert_eq!(spec.popularity, Popularity::Normal);
    assert_eq!(spec.key_size, SizeDist::fixed(16));
    assert_eq!(
        spec.value_size,
        SizeDist::parse("discrete:10:1,20:3").unwrap()
    );
    assert_eq!(
        spec.ttl_s,
        Some(SizeDist::parse("discrete:60:1,3600:1").unwrap())
    );
    assert_eq!(spec.mix, mix(0.5, 0.5, 0.0, 0.0, 0.0));
}

#[test]
fn cachebench_errors_point_at_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let check = |name: &str, text: &str, needles: &[&str]| {
        let path = write(dir.path(), name, text);
        let err = CacheBenchConfig::load(&path, &[]).unwrap_err().to_string();
        for needle in needles {
            assert!(err.contains(needle), "{name}: `{err}` lacks `{needle}`");
        }
    };
    check(
        "broken.json",
        "{\n  \"test_config\": {\n    \"numKeys\": 10,,\n  }\n}",
        &["broken.json:3", "column"],
    );
    let base = |extra: &str| {
        format!(
            "{{\"test_config\": {{\n\"numKeys\": 10,\n\"keySizeRange\": [8, 9],\n\
             \"keySizeRangeProbability\": [1],\n\"valSizeRange\": [10],\n\
             \"valSizeRangeProbability\": [1],\n\"getRatio\": 1{extra}}}}}"
        )
    };
    check(
        "chained.json",
        &base(",\n\"addChainedRatio\": 0.5"),
        &["addChainedRatio", "chained.json:8", "chained items"],
    );
    check(
        "replay.json",
        &base(",\n\"generator\": \"replay\""),
        &["generator", "replay.json:8", "replay"],
    );
    check(
        "pools.json",
        &base(",\n\"keyPoolDistribution\": [0.5, 0.5]"),
        &["keyPoolDistribution", "single cache pool"],
    );
    check(
        "setifmiss.json",
        &base(",\n\"onlySetIfMiss\": true"),
        &["onlySetIfMiss"],
    );
    check(
        "update.json",
        &base(",\n\"updateRatio\": 0.1"),
        &["updateRatio", "in-place"],
    );
    check(
        "sizes.json",
        &base("").replace("\"valSizeRange\": [10]", "\"valSizeRange\": [10, 20, 30]"),
        &["valSizeRange", "sizes.json:5", "one more"],
    );
    check(
        "keys.json",
        &base("").replace("\"numKeys\": 10,", ""),
        &["numKeys", "positive"],
    );
    check(
        "nokeysize.json",
        &base("").replace("\"keySizeRange\": [8, 9],", ""),
        &["keySizeRange"],
    );
    check(
        "missing-pop.json",
        &base(",\n\"popDistFile\": \"nowhere.json\""),
        &["nowhere.json"],
    );
    check("notest.json", "{\"cache_config\": {}}", &["test_config"]);
    // The base itself is fine.
    let path = write(dir.path(), "base.json", &base(""));
    let config = CacheBenchConfig::load(&path, &[]).unwrap();
    assert_eq!(config.spec().value_size, SizeDist::fixed(10));
    assert_eq!(config.warnings()[0].field, "test_config.numThreads");
}

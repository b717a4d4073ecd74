//! Every key and length distribution against its expected PMF, by chi-square with a
//! fixed seed (p = 0.001), plus the acknowledged-insert guarantee under threads.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{assert_fits, chi_square, chi_square_critical, ycsb_workload};
use kvlab_core::{OpKind, Request};
use kvlab_workload::fnvhash64;
use kvlab_workload::generator::{
    zeta, AcknowledgedCounter, Exponential, Hotspot, ScrambledZipfian, Sequential, SkewedLatest,
    Uniform, Zipfian,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn rng() -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(0x5eed)
}

/// The exact PMF of YCSB's (Gray et al.) Zipfian sampler over `n` items for ranks
/// `0..ranks`: ranks 0 and 1 are true Zipf; rank k ≥ 2 gets the measure of the `u`
/// interval that the inverse formula maps to k. (The sampler is an approximation of
/// Zipf beyond rank 1: rank 2 is ~17% too likely for n = 1000, θ = 0.99.)
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

/// Bins ranks `0..ranks` plus one tail bin.
fn rank_bins(samples: impl Iterator<Item = u64>, ranks: usize) -> Vec<u64> {
    let mut bins = vec![0u64; ranks + 1];
    for s in samples {
        bins[(s as usize).min(ranks)] += 1;
    }
    bins
}

fn with_tail(mut pmf: Vec<f64>) -> Vec<f64> {
    let head: f64 = pmf.iter().sum();
    pmf.push(1.0 - head);
    pmf
}

#[test]
fn uniform_fits() {
    let g = Uniform::new(100, 199);
    let mut r = rng();
    let mut bins = vec![0u64; 100];
    for _ in 0..200_000 {
        let v = g.next(&mut r);
        assert!((100..=199).contains(&v));
        bins[(v - 100) as usize] += 1;
    }
    assert_fits("uniform", &bins, &[0.01; 100]);
}

#[test]
fn zipfian_fits_ycsb_sampler_pmf() {
    let (n, theta) = (1000u64, 0.99);
    let g = Zipfian::new(0, n - 1, theta);
    assert!((g.zetan() - zeta(n, theta)).abs() < 1e-12);
    let mut r = rng();
    let ranks = 60;
    let bins = rank_bins((0..300_000).map(|_| g.next(&mut r)), ranks);
    let pmf = with_tail(gray_pmf(n, theta, g.zetan(), ranks));
    assert_fits("zipfian", &bins, &pmf);
    // Ranks 0 and 1 are exact Zipf: 1/ζ and 2^-θ/ζ.
    assert!((pmf[0] - 1.0 / zeta(n, theta)).abs() < 1e-15);

    // Negative control: θ = 0.9 draws do not fit the θ = 0.99 PMF.
    let other = Zipfian::new(0, n - 1, 0.9);
    let bins = rank_bins((0..300_000).map(|_| other.next(&mut r)), ranks);
    assert!(chi_square(&bins, &pmf) > chi_square_critical(bins.len()));
}

#[test]
fn zipfian_with_min_offset_and_growing_count() {
    let mut g = Zipfian::new(10, 109, 0.99);
    let mut r = rng();
    for _ in 0..10_000 {
        let v = g.next(&mut r);
        assert!((10..=109).contains(&v), "{v}");
    }
    // Growing the count extends ζ incrementally to the full sum, as YCSB.
    let _ = g.next_for_count(&mut r, 5000);
    assert!((g.zetan() - zeta(5000, 0.99)).abs() < 1e-9);
}

#[test]
fn scrambled_zipfian_puts_top_ranks_on_hashed_keys() {
    let (min, itemcount) = (0u64, 1_000_000u64);
    let g = ScrambledZipfian::new(min, min + itemcount - 1, 0.99);
    let mut r = rng();
    let ranks = 8;
    let keys: Vec<u64> = (0..ranks as u64)
        .map(|rank| min + fnvhash64(rank) % itemcount)
        .collect();
    let mut bins = vec![0u64; ranks + 1];
    for _ in 0..400_000 {
        let v = g.next(&mut r);
        assert!(v < min + itemcount);
        match keys.iter().position(|&k| k == v) {
            Some(i) => bins[i] += 1,
            None => bins[ranks] += 1,
        }
    }
    // Each of the top keys gets its rank's probability (other ranks landing on the same
    // key add ~1e-6, far below the test's resolution).
    let pmf = with_tail(gray_pmf(
        ScrambledZipfian::ITEM_COUNT + 1,
        0.99,
        ScrambledZipfian::ZETAN,
        ranks,
    ));
    assert_fits("scrambled zipfian", &bins, &pmf);
    assert!((pmf[0] - 1.0 / ScrambledZipfian::ZETAN).abs() < 1e-15);
}

#[test]
fn scrambled_zipfian_other_theta_uses_computed_zeta() {
    let g = ScrambledZipfian::new(0, 999_999, 0.8);
    let mut r = rng();
    let top = fnvhash64(0) % 1_000_000;
    let hits = (0..200_000).filter(|_| g.next(&mut r) == top).count() as u64;
    let p0 = 1.0 / zeta(ScrambledZipfian::ITEM_COUNT + 1, 0.8);
    assert_fits(
        "scrambled θ=0.8 top key",
        &[hits, 200_000 - hits],
        &[p0, 1.0 - p0],
    );
}

#[test]
fn hotspot_fits() {
    // Keys 0..100: hot set 0..20 gets 80% of draws.
    let g = Hotspot::new(0, 99, 0.2, 0.8);
    assert_eq!(g.hot_interval(), 20);
    let mut r = rng();
    let mut bins = vec![0u64; 100];
    for _ in 0..200_000 {
        bins[g.next(&mut r) as usize] += 1;
    }
    let pmf: Vec<f64> = (0..100)
        .map(|k| if k < 20 { 0.8 / 20.0 } else { 0.2 / 80.0 })
        .collect();
    assert_fits("hotspot", &bins, &pmf);
}

#[test]
fn exponential_fits() {
    // 95% of draws below 100.
    let g = Exponential::new(95.0, 100.0);
    let mut r = rng();
    let buckets = 30; // floor(x / 10) for 0..30, then tail
    let mut bins = vec![0u64; buckets + 1];
    for _ in 0..200_000 {
        let x = g.next(&mut r);
        bins[((x / 10.0) as usize).min(buckets)] += 1;
    }
    let cdf = |x: f64| 1.0 - (-g.gamma() * x).exp();
    let mut pmf: Vec<f64> = (0..buckets)
        .map(|b| cdf((b + 1) as f64 * 10.0) - cdf(b as f64 * 10.0))
        .collect();
    pmf.push(1.0 - cdf(buckets as f64 * 10.0));
    assert_fits("exponential", &bins, &pmf);
    assert!((cdf(100.0) - 0.95).abs() < 1e-12);
}

#[test]
fn exponential_request_distribution_favours_recent_keys() {
    let wl = ycsb_workload(
        "workloadc",
        &[
            "requestdistribution=exponential",
            "recordcount=1000",
            "insertorder=ordered",
        ],
    );
    let mut w = wl.run_worker(1, 0);
    let mut req = Request::default();
    // keynum = 999 − ⌊x⌋, x exponential with 95% below 1000 · 0.857.
    let g = Exponential::new(95.0, 1000.0 * 0.8571428571);
    let cdf = |x: f64| 1.0 - (-g.gamma() * x).exp();
    let buckets = 10; // 100-key buckets counted from the newest key
    let mut bins = vec![0u64; buckets];
    for _ in 0..100_000 {
        w.next(&mut req);
        let keynum: u64 = std::str::from_utf8(&req.key[4..]).unwrap().parse().unwrap();
        bins[((999 - keynum) / 100) as usize] += 1;
    }
    // Draws ≥ 1000 are retried (keynum < 0), so the PMF is conditioned on x < 1000.
    let total = cdf(1000.0);
    let pmf: Vec<f64> = (0..buckets)
        .map(|b| (cdf((b + 1) as f64 * 100.0) - cdf(b as f64 * 100.0)) / total)
        .collect();
    assert_fits("exponential keys", &bins, &pmf);
}

#[test]
fn sequential_is_in_order_across_workers() {
    let s = Sequential::new(0, 9);
    assert_eq!(
        (0..12).map(|_| s.next()).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
    );
    // In a workload the sequence is shared: two workers interleave one walk.
    let wl = ycsb_workload(
        "workloadc",
        &[
            "requestdistribution=sequential",
            "recordcount=50",
            "insertorder=ordered",
        ],
    );
    let (mut a, mut b) = (wl.run_worker(1, 0), wl.run_worker(1, 1));
    let mut req = Request::default();
    let mut keys = Vec::new();
    for i in 0..100 {
        if i % 3 == 0 {
            b.next(&mut req)
        } else {
            a.next(&mut req)
        };
        keys.push(
            std::str::from_utf8(&req.key[4..])
                .unwrap()
                .parse::<u64>()
                .unwrap(),
        );
    }
    let expected: Vec<u64> = (0..100).map(|i| i % 50).collect();
    assert_eq!(keys, expected);
}

#[test]
fn scan_lengths_fit() {
    let wl = ycsb_workload("workloade", &["insertproportion=0", "maxscanlength=20"]);
    let mut w = wl.run_worker(3, 0);
    let mut req = Request::default();
    let mut bins = vec![0u64; 20];
    for _ in 0..100_000 {
        w.next(&mut req);
        assert_eq!(req.kind, OpKind::Scan);
        bins[req.scan_len as usize - 1] += 1;
    }
    assert_fits("uniform scan length", &bins, &[0.05; 20]);

    let wl = ycsb_workload(
        "workloade",
        &[
            "insertproportion=0",
            "minscanlength=1",
            "maxscanlength=100",
            "scanlengthdistribution=zipfian",
        ],
    );
    let mut w = wl.run_worker(3, 0);
    let ranks = 30;
    let mut bins = vec![0u64; ranks + 1];
    for _ in 0..100_000 {
        w.next(&mut req);
        bins[(req.scan_len as usize - 1).min(ranks)] += 1;
    }
    let pmf = with_tail(gray_pmf(100, 0.99, zeta(100, 0.99), ranks));
    assert_fits("zipfian scan length", &bins, &pmf);
}

#[test]
fn skewed_latest_fits_and_favours_the_newest() {
    let basis = Arc::new(AcknowledgedCounter::new(1001));
    let mut g = SkewedLatest::new(basis.clone(), 0.99);
    let mut r = rng();
    let ranks = 40;
    // next = last − zipf(last): rank = 1000 − value.
    let bins = rank_bins((0..200_000).map(|_| 1000 - g.next(&mut r)), ranks);
    let pmf = with_tail(gray_pmf(1000, 0.99, zeta(1000, 0.99), ranks));
    assert_fits("skewed latest", &bins, &pmf);
}

#[test]
fn skewed_latest_never_returns_an_unacknowledged_key() {
    const START: u64 = 1000;
    const INSERTS_PER_THREAD: u64 = 20_000;
    const WRITERS: u64 = 3;
    let basis = Arc::new(AcknowledgedCounter::new(START));
    let total = START + WRITERS * INSERTS_PER_THREAD;
    let done: Arc<Vec<AtomicBool>> =
        Arc::new((0..total).map(|k| AtomicBool::new(k < START)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let (mut g, done, stop) = (
                SkewedLatest::new(basis.clone(), 0.99),
                done.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                let mut r = Xoshiro256PlusPlus::seed_from_u64(t);
                let mut checked = 0u64;
                while !stop.load(Ordering::Acquire) || checked < 100_000 {
                    let k = g.next(&mut r);
                    assert!(
                        done[k as usize].load(Ordering::Acquire),
                        "key {k} not acknowledged"
                    );
                    checked += 1;
                }
                checked
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|t| {
            let (basis, done) = (basis.clone(), done.clone());
            std::thread::spawn(move || {
                let mut held = Vec::new();
                for i in 0..INSERTS_PER_THREAD {
                    let k = basis.next();
                    held.push(k);
                    // Complete inserts out of order: hold some back for a while.
                    if (i + t) % 7 != 0 || held.len() > 16 {
                        for k in held.drain(..).rev() {
                            done[k as usize].store(true, Ordering::Release);
                            basis.acknowledge(k);
                        }
                    }
                }
                for k in held {
                    done[k as usize].store(true, Ordering::Release);
                    basis.acknowledge(k);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!(
        basis.last_value(),
        Some(total - 1),
        "every insert acknowledged in the end"
    );
    stop.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() >= 100_000);
    }
}

#[test]
fn latest_workload_reads_only_acknowledged_inserts() {
    let wl = ycsb_workload("workloadd", &["recordcount=100", "insertorder=ordered"]);
    let mut w = wl.run_worker(8, 0);
    let mut req = Request::default();
    let mut pending = Vec::new();
    // One worker: inserts are 100, 101, … and acknowledged in batches, so the
    // acknowledged keys are exactly 0..acked_below.
    let mut acked_below = 100u64;
    let mut new_key_reads = 0;
    for i in 0..20_000 {
        match w.next(&mut req) {
            Some(k) => pending.push(k),
            None => {
                let keynum: u64 = std::str::from_utf8(&req.key[4..]).unwrap().parse().unwrap();
                assert!(
                    keynum < acked_below,
                    "read of {keynum} before its insert completed"
                );
                new_key_reads += u64::from(keynum >= 100);
            }
        }
        if i % 50 == 0 {
            acked_below += pending.len() as u64;
            for k in pending.drain(..) {
                w.acknowledge(k);
            }
        }
    }
    assert!(
        new_key_reads > 10_000,
        "latest favours new inserts: {new_key_reads}"
    );
}

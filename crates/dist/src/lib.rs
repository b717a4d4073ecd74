//! Every random variate kvlab draws, once: the YCSB generators, Zipf by
//! rejection-inversion, truncated normals, Walker's alias table, size distributions, and
//! the seed mix every derived random stream goes through.
//!
//! - [`KeyChooser`]: the one interface of every key distribution below.
//! - [`ycsb`]: YCSB's `site.ycsb.generator` package — uniform, Zipfian (Gray et al.),
//!   scrambled Zipfian, skewed-latest, hotspot, exponential, sequential and counter,
//!   histogram — one file per generator, with YCSB's FNV hash ([`fnvhash64`]).
//! - [`zipf`]: Zipf for any exponent by rejection-inversion — the formulation behind
//!   CacheBench-style popularity ([`ZipfRejection`], [`ZipfMixture`]) and memtier's own
//!   ([`Zipf`]).
//! - [`normal`]: memtier's Gaussian key chooser ([`TruncatedNormal`]) and CacheBench's
//!   default popularity ([`CacheBenchNormal`]).
//! - [`Alias`] (Walker/Vose), [`SizeDist`] and [`SizeSampler`] (CacheBench's value-size
//!   forms).
//! - [`mixgraph`]: db_bench's `mixgraph` workload (the FAST'20 key-range model),
//!   bit-exact with db_bench's `mt19937_64` streams ([`MixGraph`], [`Mt19937_64`]).
//! - [`locality`]: temporal and spatial locality over any key draw (an LRU stack model
//!   with steps, kvlab's extension of the key-range model), on [`stack`]: exact LRU
//!   stack distances (also what trace analysis measures).
//! - [`fit`]: Pearson's chi-square test, for checking a draw against a distribution.
//! - [`ValuePool`]: the bytes values are sliced from (YCSB's character classes,
//!   printable, or any bytes).
//! - [`worker_seed`], [`mix64`] and [`KeyRng`]: SplitMix64, the one mix for seeds and
//!   per-key streams.
//! - [`decimal`]: the decimal formatter key names are written with (YCSB's and
//!   memtier's).
//!
//! Every variate takes its random source as an argument (`R: RngCore`; kvlab uses
//! Xoshiro256++ everywhere), so it is plain data; [`next_f64`] and [`next_below`] are
//! the two primitive draws. Where two tools define "the same" variate differently, both
//! are here, each bit-exact with its tool, and the module says why.

#![warn(missing_docs)]

pub mod alias;
pub mod chooser;
pub mod decimal;
pub mod fit;
pub mod fuzzing;
pub mod locality;
pub mod mixgraph;
pub mod normal;
pub mod seed;
pub mod size;
pub mod stack;
pub mod values;
pub mod ycsb;
pub mod zipf;

pub use alias::Alias;
pub use chooser::KeyChooser;
pub use locality::{Locality, LocalityGen, Reuse};
pub use mixgraph::{MixGraph, MixGraphConfig, MixGraphError, MixGraphKeys, MixOp, Mt19937_64};
pub use normal::{CacheBenchNormal, TruncatedNormal};
pub use seed::{mix64, KeyRng};
pub use size::{SizeDist, SizePiece, SizeSampler};
pub use values::ValuePool;
pub use zipf::{Zipf, ZipfMixture, ZipfRejection};

use rand_core::RngCore;

/// A uniform double in `[0, 1)` with 53 random bits, like Java's `Random.nextDouble()`.
#[inline]
pub fn next_f64<R: RngCore>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `[0, n)` (`0` when `n == 0`), by Lemire's multiply-shift.
#[inline]
pub fn next_below<R: RngCore>(rng: &mut R, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// The seed of worker `worker`'s random source, derived from the run seed.
///
/// SplitMix64 (Steele et al., "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): the state `run_seed + (worker + 1) · 0x9E3779B97F4A7C15` goes through
/// SplitMix64's output mix, so neighbouring workers (and neighbouring run seeds) get
/// unrelated seeds.
pub fn worker_seed(run_seed: u64, worker: usize) -> u64 {
    mix64(
        run_seed.wrapping_add(
            (worker as u64)
                .wrapping_add(1)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15),
        ),
    )
}

/// YCSB's `Utils.fnvhash64`: 64-bit FNV-1a over the 8 little-endian bytes of `val`,
/// then Java's `Math.abs` of the result as a signed long (so `i64::MIN` stays
/// 2⁶³ — the only result with the top bit set).
///
/// A zero byte only multiplies the hash by the prime, so for `val < 2³²` (key numbers
/// and Zipfian ranks, nearly always) the four high bytes are one multiplication by
/// the prime's fourth power: the same result, with half the dependent steps.
#[inline]
pub fn fnvhash64(val: u64) -> u64 {
    const OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 1_099_511_628_211;
    const PRIME4: u64 = PRIME
        .wrapping_mul(PRIME)
        .wrapping_mul(PRIME)
        .wrapping_mul(PRIME);
    let bytes = val.to_le_bytes();
    let mut hash = OFFSET_BASIS;
    for &byte in &bytes[..4] {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    if val >> 32 == 0 {
        hash = hash.wrapping_mul(PRIME4);
    } else {
        for &byte in &bytes[4..] {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    (hash as i64).wrapping_abs() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn fnvhash64_matches_ycsb() {
        // Values of site.ycsb.Utils.fnvhash64 (Java), pinned.
        assert_eq!(fnvhash64(0), 6284781860667377211);
        assert_eq!(fnvhash64(1), 8517097267634966620);
        assert_eq!(fnvhash64(2), 1820151046732198393);
        assert_eq!(fnvhash64(1000), 5952875239596136740);
        assert_eq!(fnvhash64(123456789), 2350796791908741607);
        assert_eq!(fnvhash64(i64::MAX as u64), 8289549613075766851);
    }

    #[test]
    fn fnvhash64_is_byte_wise_fnv_1a() {
        let reference = |val: u64| {
            let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
            for byte in val.to_le_bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(1_099_511_628_211);
            }
            (hash as i64).wrapping_abs() as u64
        };
        let mut x = 1u64;
        for i in 0..10_000u64 {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(i);
            let v = x >> (i % 64);
            assert_eq!(fnvhash64(v), reference(v), "{v}");
        }
        for v in [0, u64::from(u32::MAX), 1 << 32, u64::MAX] {
            assert_eq!(fnvhash64(v), reference(v), "{v}");
        }
    }

    #[test]
    fn worker_seeds_differ() {
        let seeds: Vec<u64> = (0..64).map(|w| worker_seed(7, w)).collect();
        let mut sorted = seeds.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 64);
        assert_ne!(worker_seed(7, 0), worker_seed(8, 0));
        assert_eq!(worker_seed(7, 3), worker_seed(7, 3));
    }

    #[test]
    fn parse_forms_and_display_round_trip() {
        for text in [
            "fixed:16",
            "uniform:16-255",
            "pieces:1-7:0.3,8-63:0.7",
            "discrete:100:1,200:3",
            "pieces:5:1,10-20:2",
        ] {
            let d = SizeDist::parse(text).unwrap();
            assert_eq!(SizeDist::parse(&d.to_string()).unwrap(), d, "{text}");
        }
        assert_eq!(SizeDist::parse("42").unwrap(), SizeDist::fixed(42));
        assert_eq!(
            SizeDist::parse("uniform:1KiB-4k").unwrap(),
            SizeDist::uniform(1024, 4096).unwrap()
        );
        for bad in [
            "uniform:9-3",
            "pieces:1-2",
            "pieces:1-2:-1",
            "pieces:1-2:0",
            "zipf:3",
            "fixed:x",
            "discrete:",
        ] {
            assert!(SizeDist::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn means_and_ranges() {
        let d = SizeDist::parse("pieces:0-10:1,100:3").unwrap();
        assert!((d.mean() - (5.0 + 300.0) / 4.0).abs() < 1e-9);
        assert_eq!((d.min(), d.max()), (0, 100));
        assert!((d.probability_in(0, 4) - 0.25 * 5.0 / 11.0).abs() < 1e-12);
        assert!((d.probability_in(0, 1000) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn alias_table_matches_weights() {
        let weights = [1.0, 0.0, 5.0, 2.0, 0.5];
        let alias = Alias::new(&weights);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut counts = [0u64; 5];
        let n = 850_000;
        for _ in 0..n {
            counts[alias.sample(rng.next_u64())] += 1;
        }
        assert_eq!(counts[1], 0, "a zero weight is never drawn");
        let total: f64 = weights.iter().sum();
        for (c, w) in counts.iter().zip(weights) {
            let expected = n as f64 * w / total;
            assert!(
                (*c as f64 - expected).abs() <= 5.0 * expected.sqrt() + 1.0,
                "{counts:?}"
            );
        }
    }

    /// Pearson's chi-square of `draws` ranks against the exact Zipf pmf over `0..n`,
    /// with bins of single ranks merged until each expects at least 20 draws; returns
    /// the statistic and the critical value at p = 0.001 (Wilson–Hilferty).
    fn zipf_chi_square(draws: &[u64], n: u64, exponent: f64) -> (f64, f64) {
        let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-exponent)).collect();
        let total: f64 = weights.iter().sum();
        let mut counts = vec![0u64; n as usize];
        for &d in draws {
            counts[d as usize] += 1;
        }
        let draws_f = draws.len() as f64;
        let (mut stat, mut bins) = (0.0, 0usize);
        let (mut observed, mut expected) = (0u64, 0.0);
        for (c, w) in counts.iter().zip(&weights) {
            observed += c;
            expected += w / total * draws_f;
            if expected >= 20.0 {
                stat += (observed as f64 - expected).powi(2) / expected;
                bins += 1;
                (observed, expected) = (0, 0.0);
            }
        }
        // The last, short bin joins the statistic as is (expected > 0 when non-empty).
        if expected > 0.0 {
            stat += (observed as f64 - expected).powi(2) / expected;
            bins += 1;
        }
        let k = (bins - 1) as f64;
        let a = 2.0 / (9.0 * k);
        (stat, k * (1.0 - a + 3.0902 * a.sqrt()).powi(3))
    }

    #[test]
    fn zipf_mixture_fits_the_exact_pmf() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        // Small heads, so that head, seam and tail all carry many draws.
        for (n, exponent, head) in [
            (3000u64, 1.0, 100u64),
            (3000, 1.2, 100),
            (3000, 2.0, 10),
            (500, 1.5, 1),
            (200, 1.2, 1 << 16),
        ] {
            let z = ZipfMixture::with_head(n, exponent, head);
            let draws: Vec<u64> = (0..1_000_000).map(|_| z.next(&mut rng)).collect();
            assert!(draws.iter().all(|&d| d < n));
            let (stat, critical) = zipf_chi_square(&draws, n, exponent);
            assert!(
                stat < critical,
                "n={n} s={exponent} head={head}: chi-square {stat:.1} ≥ {critical:.1}"
            );
        }
    }

    #[test]
    fn zipf_mixture_tail_mass_on_many_keys() {
        // The default head of 2¹⁶ ranks over 10⁷ keys: the share of draws past the head,
        // and past 10× the head, against direct sums of the pmf.
        let (n, exponent) = (10_000_000u64, 1.2);
        let z = ZipfMixture::new(n, exponent);
        let head = ZipfMixture::HEAD;
        let sum = |a: u64, b: u64| (a..=b).map(|k| (k as f64).powf(-exponent)).sum::<f64>();
        let total = sum(1, n);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
        let draws = 2_000_000u64;
        let (mut past_head, mut past_ten) = (0u64, 0u64);
        for _ in 0..draws {
            let r = z.next(&mut rng);
            past_head += u64::from(r >= head);
            past_ten += u64::from(r >= 10 * head);
        }
        for (what, got, p) in [
            ("past the head", past_head, sum(head + 1, n) / total),
            ("past 10× the head", past_ten, sum(10 * head + 1, n) / total),
        ] {
            let expected = p * draws as f64;
            let sd = (expected * (1.0 - p)).sqrt();
            assert!(
                (got as f64 - expected).abs() < 5.0 * sd,
                "{what}: {got} draws, expected {expected:.0} ± {sd:.0}"
            );
        }
    }

    #[test]
    fn zipf_rejection_head_frequencies() {
        for exponent in [0.7, 1.0, 1.5] {
            let n = 1000u64;
            let z = ZipfRejection::new(n, exponent);
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-exponent)).sum();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
            let draws = 400_000;
            let mut counts = [0u64; 4];
            for _ in 0..draws {
                let k = z.next(&mut rng);
                assert!(k < n);
                if k < 4 {
                    counts[k as usize] += 1;
                }
            }
            for (k, c) in counts.iter().enumerate() {
                let expected = draws as f64 * ((k + 1) as f64).powf(-exponent) / norm;
                assert!(
                    (*c as f64 - expected).abs() <= 5.0 * expected.sqrt(),
                    "s={exponent} rank {k}: {c} vs {expected:.0}"
                );
            }
        }
    }
}

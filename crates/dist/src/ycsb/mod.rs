//! Number generators: YCSB's `site.ycsb.generator` package, in Rust.
//!
//! Every generator takes its random source as an argument (`&mut R` where
//! `R: RngCore`, in kvlab always `rand_xoshiro::Xoshiro256PlusPlus`), so a generator is
//! plain data that can be cloned into each worker or shared behind an `Arc`. The only
//! generators with shared mutable state are the counters ([`Counter`],
//! [`AcknowledgedCounter`], [`Sequential`]), which use atomics, exactly where YCSB shares
//! one generator object between all client threads.
//!
//! The arithmetic follows YCSB's Java classes of the same (suffix-less) names; each type
//! names its upstream file and any deliberate difference. Two differences apply to all:
//!
//! - Random doubles are `[0, 1)` with 53 random bits like `java.util.Random::nextDouble`,
//!   but they come from Xoshiro256++, so streams are not bit-identical to YCSB's.
//! - Where YCSB draws `Math.abs(nextLong()) % n`, kvlab draws `⌊u64 · n / 2⁶⁴⌋`
//!   (Lemire's multiply-shift): the same uniform distribution (bias below 2⁻³² for any
//!   realistic `n`, as YCSB's modulo), without a 64-bit division on the hot path.

mod constant;
mod counter;
mod exponential;
mod histogram;
mod hotspot;
mod latest;
mod scrambled;
mod uniform;
mod zipfian;

pub use constant::*;
pub use counter::*;
pub use exponential::*;
pub use histogram::*;
pub use hotspot::*;
pub use latest::*;
pub use scrambled::*;
pub use uniform::*;
pub use zipfian::*;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rand_core::RngCore;

pub use crate::{fnvhash64, next_below, next_f64};

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn zeta_matches_direct_sum_across_the_euler_maclaurin_seam() {
        // Direct sum of 3·10⁷ terms vs 10⁷ direct + Euler–Maclaurin tail.
        let n = 3 * ZETA_DIRECT_TERMS;
        let mut direct = 0.0;
        for i in 0..n {
            direct += 1.0 / ((i + 1) as f64).powf(0.99);
        }
        let fast = zeta(n, 0.99);
        assert!((fast - direct).abs() / direct < 1e-11, "{fast} vs {direct}");
    }

    #[test]
    fn scrambled_zetan_agrees_with_ycsb_constant() {
        let z = zeta(ScrambledZipfian::ITEM_COUNT, 0.99);
        // YCSB's constant is a direct sum of 10¹⁰ doubles, with its own rounding error.
        assert!((z - ScrambledZipfian::ZETAN).abs() < 1e-8, "{z}");
    }

    #[test]
    fn histogram_reproduces_ycsb_draw() {
        // YCSB walks buckets subtracting counts: number 0 → first bucket, etc.
        let h = Histogram::new(&[2, 0, 3, 5], 10);
        let expect = |number: u64| {
            let i = h.cumulative.partition_point(|&c| c < number);
            if i < h.cumulative.len() {
                (i as u64 + 1) * 10
            } else {
                30
            }
        };
        let ycsb = |mut number: i64| {
            let counts = [2i64, 0, 3, 5];
            for (i, c) in counts[..3].iter().enumerate() {
                number -= c;
                if number <= 0 {
                    return (i as u64 + 1) * 10;
                }
            }
            30
        };
        for number in 0..10 {
            assert_eq!(expect(number), ycsb(number as i64), "number {number}");
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let tens = (0..10_000).filter(|_| h.next(&mut rng) == 10).count();
        // P(10) = P(number in {0, 1, 2}) = 0.3; every other draw is 30.
        assert!((2800..3200).contains(&tens), "{tens}");
    }

    #[test]
    fn histogram_file_errors_name_the_line() {
        assert_eq!(Histogram::parse("Blocks\t4\n").unwrap_err().0, 1);
        let err = Histogram::parse("BlockSize\t4\n0\t1\n2\t5\n").unwrap_err();
        assert_eq!(err.0, 3, "{}", err.1);
        let h = Histogram::parse("BlockSize\t4\n0\t1\n1\t5\n").unwrap();
        assert_eq!(h.max_value(), 4);
    }

    #[test]
    fn histogram_counts_and_sizes_past_u64_are_errors_naming_the_line() {
        let err = Histogram::parse("BlockSize\t4\n0\t18446744073709551615\n1\t1\n").unwrap_err();
        assert_eq!(err.0, 3, "{}", err.1);
        let err =
            Histogram::parse("BlockSize\t18446744073709551615\n0\t1\n1\t1\n2\t1\n").unwrap_err();
        assert_eq!(err.0, 4, "{}", err.1);
        let h = Histogram::parse("BlockSize\t18446744073709551615\n0\t1\n1\t1\n").unwrap();
        assert_eq!(h.max_value(), u64::MAX);
    }

    #[test]
    fn acknowledged_counter_waits_for_gaps() {
        let c = AcknowledgedCounter::new(10);
        assert_eq!(c.last_value(), Some(9));
        let (a, b, d) = (c.next(), c.next(), c.next());
        assert_eq!((a, b, d), (10, 11, 12));
        c.acknowledge(12);
        c.acknowledge(11);
        assert_eq!(c.last_value(), Some(9), "10 is still outstanding");
        c.acknowledge(10);
        assert_eq!(c.last_value(), Some(12));
        // Wrap around the window many times.
        for _ in 0..3 * AcknowledgedCounter::WINDOW_SIZE {
            let v = c.next();
            c.acknowledge(v);
        }
        assert_eq!(
            c.last_value(),
            Some(12 + 3 * AcknowledgedCounter::WINDOW_SIZE)
        );
    }

    #[test]
    #[should_panic(expected = "too many unacknowledged")]
    fn acknowledged_counter_rejects_window_overflow() {
        let c = AcknowledgedCounter::new(1);
        let first = c.next();
        c.acknowledge(first + 1 + AcknowledgedCounter::WINDOW_SIZE);
        c.acknowledge(first + 1);
    }

    /// YCSB's formula with `pow`, as `Zipfian::sample` computed it before the fast path.
    fn plain_sample(z: &Zipfian, u: f64, itemcount: u64) -> u64 {
        let uz = u * z.zetan;
        if uz < 1.0 {
            return z.base;
        }
        if uz < 1.0 + z.half_pow_theta {
            return z.base + 1;
        }
        z.base + (itemcount as f64 * (z.eta * u - z.eta + 1.0).powf(z.alpha)) as u64
    }

    #[test]
    fn zipfian_fast_path_returns_the_plain_formula() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let cases = [
            Zipfian::with_zetan(
                0,
                ScrambledZipfian::ITEM_COUNT + 1,
                0.99,
                ScrambledZipfian::ZETAN,
            ),
            Zipfian::new(0, 9_999_999, 0.99),
            Zipfian::new(3, 1002, 0.5),
            Zipfian::new(0, 99, 0.2),
            Zipfian::new(0, 999_999, 0.999),
            Zipfian::new(0, 99_999, 0.9),
            Zipfian::new(0, 1, 0.99),
        ];
        for z in &cases {
            let n = z.items;
            // Random draws.
            for _ in 0..200_000 {
                let u = next_f64(&mut rng);
                assert_eq!(z.sample(u, n), plain_sample(z, u, n), "u = {u}, n = {n}");
            }
            // Draws whose product lies within a few ulps of an integer, where the fast
            // path must defer to pow: invert the formula at integers, try neighbours.
            let alpha = z.alpha;
            for _ in 0..2_000 {
                let k = 2 + next_below(&mut rng, n.saturating_sub(2).max(1));
                let x = (k as f64 / n as f64).powf(1.0 / alpha);
                let u0 = (x - 1.0 + z.eta) / z.eta;
                if !(0.0..1.0).contains(&u0) {
                    continue;
                }
                let mut u = u0;
                for _ in 0..8 {
                    u = f64::from_bits(u.to_bits() - 1);
                }
                for _ in 0..16 {
                    assert_eq!(z.sample(u, n), plain_sample(z, u, n), "u = {u}, n = {n}");
                    u = f64::from_bits(u.to_bits() + 1);
                }
            }
        }
    }

    #[test]
    fn integer_pow_is_within_its_bound() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(6);
        for theta in [0.5, 0.75, 0.9, 0.95, 0.99, 0.999] {
            let alpha = 1.0 / (1.0 - theta);
            let fast = IntegerPow::new(alpha).expect("1/(1 − θ) is an integer up to rounding");
            for _ in 0..100_000 {
                let x = next_f64(&mut rng).max(f64::MIN_POSITIVE);
                let Some((p, err)) = fast.pow(x) else {
                    assert!(x < 0.5 || x.powf(alpha) < 1e-290, "{x}^{alpha} refused");
                    continue;
                };
                let exact = x.powf(alpha);
                assert!(
                    (p - exact).abs() <= err / 2.0 * exact,
                    "{x}^{alpha}: {p} vs {exact}"
                );
            }
        }
        for alpha in [2.5, 1.0 / (1.0 - 0.7), 5000.0, 0.5] {
            assert_eq!(IntegerPow::new(alpha), None, "{alpha}");
        }
        let square = IntegerPow::new(2.0).unwrap();
        assert_eq!(square.pow(0.0), None);
        assert_eq!(square.pow(0.25), None);
        assert_eq!(square.pow(1.5), None);
        assert_eq!(square.pow(0.5).map(|(p, _)| p), Some(0.25));
    }

    #[test]
    fn modulus_matches_the_remainder_operator() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
        let divisors = [1, 2, 3, 7, 10, 1000, 10_000_000_001, 1 << 62, (1 << 63) + 1]
            .into_iter()
            .chain([u64::MAX - 1, u64::MAX])
            .chain((0..200).map(|_| rng.next_u64() >> (rng.next_u32() % 64)))
            .collect::<Vec<u64>>();
        for d in divisors.into_iter().filter(|&d| d > 0) {
            let m = Modulus::new(d);
            let edges = [0, 1, d - 1, d, d.wrapping_mul(2), u64::MAX, u64::MAX - 1];
            for x in edges.into_iter().chain((0..500).map(|_| rng.next_u64())) {
                assert_eq!(m.reduce(x), x % d, "{x} mod {d}");
            }
        }
        assert_eq!(Modulus::new(0).reduce(12345), 12345);
    }

    #[test]
    fn sequential_wraps() {
        let s = Sequential::new(5, 7);
        let got: Vec<u64> = (0..7).map(|_| s.next()).collect();
        assert_eq!(got, [5, 6, 7, 5, 6, 7, 5]);
    }
}

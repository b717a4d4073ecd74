//! YCSB's `ScrambledZipfianGenerator`: Zipfian ranks spread over the key space by FNV.

use super::*;

/// Zipfian popularity scattered over `[min, max]` by hashing (YCSB
/// `ScrambledZipfianGenerator`): draws a rank from a Zipfian over
/// [`ScrambledZipfian::ITEM_COUNT`] items and returns `min + fnvhash64(rank) % itemcount`.
///
/// Because the rank space is fixed, the popular keys do not move when the key range
/// grows, and the key for a given rank is the same as in YCSB.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    pub(super) zipfian: Zipfian,
    pub(super) min: u64,
    pub(super) itemcount: Modulus,
}

impl ScrambledZipfian {
    /// YCSB `ScrambledZipfianGenerator.ITEM_COUNT`: the rank space (10¹⁰).
    pub const ITEM_COUNT: u64 = 10_000_000_000;
    /// YCSB `ScrambledZipfianGenerator.ZETAN`: ζ(10¹⁰, 0.99), precomputed by YCSB.
    pub const ZETAN: f64 = 26.46902820178302;
    /// The θ that [`ScrambledZipfian::ZETAN`] was computed for.
    pub const USED_ZIPFIAN_CONSTANT: f64 = 0.99;

    /// A scrambled Zipfian over `[min, max]` with constant `theta`.
    ///
    /// As in YCSB the inner Zipfian spans `0..=ITEM_COUNT` (ITEM_COUNT + 1 items). With
    /// θ = 0.99 it uses YCSB's precomputed [`ScrambledZipfian::ZETAN`]; for any other θ,
    /// YCSB sums 10¹⁰ terms (minutes) while kvlab uses [`zeta`]'s Euler–Maclaurin tail
    /// (milliseconds, same value to ~1e-12 relative).
    pub fn new(min: u64, max: u64, theta: f64) -> ScrambledZipfian {
        let items = Self::ITEM_COUNT + 1;
        let zetan = if theta == Self::USED_ZIPFIAN_CONSTANT {
            Self::ZETAN
        } else {
            zeta(items, theta)
        };
        ScrambledZipfian {
            zipfian: Zipfian::with_zetan(0, items, theta, zetan),
            min,
            itemcount: Modulus::new(max - min + 1),
        }
    }

    /// The next value: [`ScrambledZipfian::key_of_rank`] of [`ScrambledZipfian::next_rank`].
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        self.key_of_rank(self.next_rank(rng))
    }

    /// The next draw's rank (0 the most popular), before it is scattered: callers that
    /// keep what they derive from the hottest keys look it up by rank.
    #[inline]
    pub fn next_rank<R: RngCore>(&self, rng: &mut R) -> u64 {
        self.zipfian.next(rng)
    }

    /// The value of a rank: `min + fnvhash64(rank) % itemcount`.
    #[inline]
    pub fn key_of_rank(&self, rank: u64) -> u64 {
        self.min + self.itemcount.reduce(fnvhash64(rank))
    }
}

/// `x % d` for a divisor fixed at construction, by a multiplication with a precomputed
/// reciprocal and at most two corrections instead of a 64-bit division (which costs
/// tens of cycles). Exact for every `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Modulus {
    pub(super) d: u64,
    /// ⌊(2⁶⁴ − 1) / d⌋.
    pub(super) m: u64,
}

impl Modulus {
    /// Reduction modulo `d`; `d == 0` stands for 2⁶⁴ (the identity).
    pub(crate) fn new(d: u64) -> Modulus {
        Modulus {
            d,
            m: u64::MAX.checked_div(d).unwrap_or(0),
        }
    }

    /// `x mod d`. The estimate `⌊x·m / 2⁶⁴⌋` is at most 2 below `⌊x / d⌋`: with
    /// `m > (2⁶⁴ − 1)/d − 1`, `x/d − x·m/2⁶⁴ < x·(2⁻⁶⁴/d + 2⁻⁶⁴) < 2`.
    #[inline]
    pub(crate) fn reduce(self, x: u64) -> u64 {
        if self.d == 0 {
            return x;
        }
        let q = ((u128::from(x) * u128::from(self.m)) >> 64) as u64;
        let mut r = x - q * self.d;
        if r >= self.d {
            r -= self.d;
        }
        if r >= self.d {
            r -= self.d;
        }
        r
    }
}

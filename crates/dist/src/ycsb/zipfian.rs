//! YCSB's `ZipfianGenerator` (Gray et al.'s algorithm) and its zeta sums.

use super::*;

/// Number of leading terms of ζ(n, θ) that [`zeta`] sums directly, as YCSB does; the
/// rest of a longer sum is computed by the Euler–Maclaurin formula.
///
/// Fuzz builds (`--cfg fuzzing`), which build a workload and its ζ for every input, sum
/// 2¹⁰ terms directly: Euler–Maclaurin from there is still exact to f64 precision but for
/// the order of the additions, and a fuzzer's item counts no longer cost seconds.
pub const ZETA_DIRECT_TERMS: u64 = if cfg!(fuzzing) { 1 << 10 } else { 10_000_000 };

/// ζ(n, θ) = Σ_{i=1..n} 1/i^θ, the normalisation constant of a Zipfian over `n` items
/// (YCSB `ZipfianGenerator.zetastatic(n, theta)`).
///
/// YCSB sums every term, which takes minutes for billions of items; kvlab sums the first
/// [`ZETA_DIRECT_TERMS`] terms in YCSB's order and adds the rest by Euler–Maclaurin with
/// two Bernoulli corrections, whose truncation error is below 10⁻³⁰ there. The result
/// differs from a full direct sum by less than the direct sum's own rounding error.
pub fn zeta(n: u64, theta: f64) -> f64 {
    zeta_from(0, n, theta, 0.0)
}

/// ζ continued from `st` to `n` terms: `initial + Σ_{i=st+1..n} 1/i^θ` (YCSB
/// `zetastatic(st, n, theta, initialsum)`, used when the item count grows).
pub fn zeta_from(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    let direct_end = n.min(st.saturating_add(ZETA_DIRECT_TERMS));
    for i in st..direct_end {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    if direct_end < n {
        sum += euler_maclaurin(direct_end + 1, n, theta);
    }
    sum
}

/// Σ_{k=a..b} k^-θ by Euler–Maclaurin: ∫ₐᵇ + (f(a)+f(b))/2 + B₂/2!·(f'(b)−f'(a))
/// + B₄/4!·(f'''(b)−f'''(a)). Accurate to far below f64 precision for `a ≥ 10⁶`.
pub(crate) fn euler_maclaurin(a: u64, b: u64, theta: f64) -> f64 {
    let (a, b) = (a as f64, b as f64);
    let f = |x: f64| x.powf(-theta);
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
    integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0
}

/// Zipfian-distributed integers in `[min, max]`: `min` is the most popular, `min + 1`
/// the next, and so on (YCSB `ZipfianGenerator`, the algorithm of Gray et al., "Quickly
/// Generating Billion-Record Synthetic Databases", SIGMOD 1994).
///
/// Like YCSB, the item count can grow after construction ([`Zipfian::next_for_count`]):
/// ζ is then extended incrementally, and `eta` keeps using the item count given at
/// construction — YCSB's formula, reproduced as is.
#[derive(Clone, Debug)]
pub struct Zipfian {
    pub(super) base: u64,
    pub(super) items: u64,
    pub(super) theta: f64,
    pub(super) alpha: f64,
    pub(super) zetan: f64,
    pub(super) eta: f64,
    pub(super) zeta2theta: f64,
    pub(super) half_pow_theta: f64,
    pub(super) count_for_zeta: u64,
    /// The fast form of `x^alpha`, when `alpha` is an integer up to rounding.
    pub(super) integer_pow: Option<IntegerPow>,
}

impl Zipfian {
    /// YCSB's default Zipfian constant θ (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
    pub const DEFAULT_THETA: f64 = 0.99;

    /// A Zipfian over `[min, max]` with constant `theta` (0 < θ < 1), computing ζ.
    pub fn new(min: u64, max: u64, theta: f64) -> Zipfian {
        let items = max - min + 1;
        Zipfian::with_zetan(min, items, theta, zeta(items, theta))
    }

    /// A Zipfian over `items` items from `base`, with ζ(items, θ) precomputed by the
    /// caller (YCSB's four-argument constructor). `items` may be 0, in which case every
    /// draw returns `base`.
    pub fn with_zetan(base: u64, items: u64, theta: f64, zetan: f64) -> Zipfian {
        let zeta2theta = zeta(2, theta);
        let mut z = Zipfian {
            base,
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: 0.0,
            zeta2theta,
            half_pow_theta: 0.5f64.powf(theta),
            count_for_zeta: items,
            integer_pow: IntegerPow::new(1.0 / (1.0 - theta)),
        };
        z.eta = z.eta_for(zetan);
        z
    }

    pub(super) fn eta_for(&self, zetan: f64) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / zetan)
    }

    /// The number of items given at construction.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The current ζ(n, θ).
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// The next value over the item count given at construction.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        self.sample(next_f64(rng), self.items)
    }

    /// The next value over `itemcount` items (YCSB `nextLong(itemcount)`). When
    /// `itemcount` exceeds the count ζ was computed for, ζ is extended incrementally;
    /// a smaller count reuses the larger ζ, as YCSB does by default
    /// (`allowitemcountdecrease = false`).
    #[inline]
    pub fn next_for_count<R: RngCore>(&mut self, rng: &mut R, itemcount: u64) -> u64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta_from(self.count_for_zeta, itemcount, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = self.eta_for(self.zetan);
        }
        self.sample(next_f64(rng), itemcount)
    }

    #[inline]
    pub(super) fn sample(&self, u: f64, itemcount: u64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + self.half_pow_theta {
            return self.base + 1;
        }
        let x = self.eta * u - self.eta + 1.0;
        self.base + scaled_pow_floor(itemcount as f64, x, self.alpha, self.integer_pow)
    }
}

/// `(n * x.powf(alpha)) as u64`, the last step of YCSB's Zipfian formula, bit for bit,
/// usually without calling `pow`.
///
/// `pow` was a sixth of a YCSB operation's cost. When `alpha = 1/(1 − θ)` is an integer
/// up to rounding — as for YCSB's θ = 0.99 (α = 100 + 9·10⁻¹⁴) and every θ = 1 − 1/m
/// — [`IntegerPow`] computes `x^alpha` with a few multiplications and a bound `err` on
/// its relative error, and decides the result whenever `n · x^alpha` lies far enough
/// from an integer: if `⌊v(1 − err)⌋ = ⌊v(1 + err)⌋` for the fast `v`, the product
/// computed with `pow` lies in that interval too (the bound covers `pow`'s own error of
/// under one ulp) and has the same integer part. Otherwise — 2.7·10⁻⁵ of the draws of
/// YCSB's scrambled Zipfian over 10¹⁰ items, fewer for small counts — `pow` is
/// called as before, so every draw returns exactly what the plain formula returns.
#[inline]
pub(crate) fn scaled_pow_floor(n: f64, x: f64, alpha: f64, fast: Option<IntegerPow>) -> u64 {
    if let Some((p, err)) = fast.and_then(|f| f.pow(x)) {
        let v = n * p;
        let lo = (v * (1.0 - err)) as u64;
        if lo == (v * (1.0 + err)) as u64 {
            return lo;
        }
    }
    (n * x.powf(alpha)) as u64
}

/// `x^alpha` for an exponent `alpha = m + f` within [`IntegerPow::MAX_FRACTION`] of an
/// integer `m` in `1..=`[`IntegerPow::MAX_POWER`]: `x^m` by repeated squaring, with a
/// bound on the relative error that includes the neglected `x^f`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct IntegerPow {
    pub(super) m: u32,
    /// `|alpha − m|`.
    pub(super) f: f64,
}

impl IntegerPow {
    const MAX_POWER: u32 = 4096;
    const MAX_FRACTION: f64 = 1e-12;
    /// 2⁻⁵³ (the unit roundoff) with a margin.
    const ROUNDOFF: f64 = 1.2e-16;

    /// The fast form of `x^alpha`, if `alpha` is close enough to an integer.
    pub(super) fn new(alpha: f64) -> Option<IntegerPow> {
        let m = alpha.round();
        ((1.0..=f64::from(Self::MAX_POWER)).contains(&m) && (alpha - m).abs() <= Self::MAX_FRACTION)
            .then(|| IntegerPow {
                m: m as u32,
                f: (alpha - m).abs(),
            })
    }

    /// `Some((p, err))` with `|p − x^alpha| ≤ err · x^alpha / 2`, for `½ ≤ x ≤ 1` and
    /// a result above 10⁻³⁰⁰ (so no step is subnormal); `None` otherwise.
    ///
    /// Repeated squaring rounds at most `m − 1` times along any path, so `x^m` is
    /// within `(m − 1)·2⁻⁵³` of exact (relative, first order); `x^f` lies between 1 and
    /// `1 ± f·|ln x|`, and `|ln x| ≤ (1 − x)/x ≤ 2(1 − x)` for `x ≥ ½`. `err` is twice
    /// the sum of both, with room for `pow`'s own error.
    #[inline]
    pub(super) fn pow(self, x: f64) -> Option<(f64, f64)> {
        if !(0.5..=1.0).contains(&x) {
            return None;
        }
        let (mut p, mut base, mut e) = (1.0, x, self.m);
        loop {
            if e & 1 == 1 {
                p *= base;
            }
            e >>= 1;
            if e == 0 {
                break;
            }
            base *= base;
        }
        if p < 1e-300 {
            return None;
        }
        let err = 2.0 * (f64::from(self.m + 2) * Self::ROUNDOFF + self.f * 2.0 * (1.0 - x));
        Some((p, err))
    }
}

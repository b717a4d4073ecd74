//! Number generators: YCSB's `site.ycsb.generator` package, in Rust.
//!
//! Every generator takes its random source as an argument (`&mut R` where
//! `R: RngCore`, in kvlab always [`rand_xoshiro::Xoshiro256PlusPlus`]), so a generator is
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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rand_core::RngCore;

use crate::fnvhash64;

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

/// Always the same value (YCSB `ConstantIntegerGenerator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constant {
    value: u64,
}

impl Constant {
    /// A generator that always returns `value`.
    pub fn new(value: u64) -> Constant {
        Constant { value }
    }

    /// The value.
    #[inline]
    pub fn next(&self) -> u64 {
        self.value
    }
}

/// Uniform integers in `[lb, ub]`, both inclusive (YCSB `UniformLongGenerator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uniform {
    lb: u64,
    interval: u64,
}

impl Uniform {
    /// A generator over `[lb, ub]`. The caller guarantees `lb <= ub`; an empty range
    /// (`ub < lb`) always yields `lb`.
    pub fn new(lb: u64, ub: u64) -> Uniform {
        Uniform {
            lb,
            interval: ub.wrapping_sub(lb).wrapping_add(1),
        }
    }

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        if self.interval == 0 {
            // [0, u64::MAX]: the whole range.
            return rng.next_u64();
        }
        self.lb + next_below(rng, self.interval)
    }
}

/// Number of leading terms of ζ(n, θ) that [`zeta`] sums directly, as YCSB does; the
/// rest of a longer sum is computed by the Euler–Maclaurin formula.
pub const ZETA_DIRECT_TERMS: u64 = 10_000_000;

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
    base: u64,
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    zeta2theta: f64,
    half_pow_theta: f64,
    count_for_zeta: u64,
    /// The fast form of `x^alpha`, when `alpha` is an integer up to rounding.
    integer_pow: Option<IntegerPow>,
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

    fn eta_for(&self, zetan: f64) -> f64 {
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
    fn sample(&self, u: f64, itemcount: u64) -> u64 {
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
fn scaled_pow_floor(n: f64, x: f64, alpha: f64, fast: Option<IntegerPow>) -> u64 {
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
struct IntegerPow {
    m: u32,
    /// `|alpha − m|`.
    f: f64,
}

impl IntegerPow {
    const MAX_POWER: u32 = 4096;
    const MAX_FRACTION: f64 = 1e-12;
    /// 2⁻⁵³ (the unit roundoff) with a margin.
    const ROUNDOFF: f64 = 1.2e-16;

    /// The fast form of `x^alpha`, if `alpha` is close enough to an integer.
    fn new(alpha: f64) -> Option<IntegerPow> {
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
    fn pow(self, x: f64) -> Option<(f64, f64)> {
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

/// Zipfian popularity scattered over `[min, max]` by hashing (YCSB
/// `ScrambledZipfianGenerator`): draws a rank from a Zipfian over
/// [`ScrambledZipfian::ITEM_COUNT`] items and returns `min + fnvhash64(rank) % itemcount`.
///
/// Because the rank space is fixed, the popular keys do not move when the key range
/// grows, and the key for a given rank is the same as in YCSB.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    zipfian: Zipfian,
    min: u64,
    itemcount: Modulus,
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

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        self.min + self.itemcount.reduce(fnvhash64(self.zipfian.next(rng)))
    }
}

/// `x % d` for a divisor fixed at construction, by a multiplication with a precomputed
/// reciprocal and at most two corrections instead of a 64-bit division (which costs
/// tens of cycles). Exact for every `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Modulus {
    d: u64,
    /// ⌊(2⁶⁴ − 1) / d⌋.
    m: u64,
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

/// A counter that hands out consecutive values but only *reports* a value (via
/// [`AcknowledgedCounter::last_value`]) once it and every value before it have been
/// acknowledged (YCSB `AcknowledgedCounterGenerator`).
///
/// CoreWorkload uses it for transaction-phase inserts: readers never choose a key whose
/// insert has not completed. Shared by all workers; lock-free: acknowledgements set a
/// bit in a window of [`AcknowledgedCounter::WINDOW_SIZE`] bits, and whichever
/// acknowledger wins a try-lock (a flag, never waited on) slides the limit over the
/// contiguous acknowledged prefix. Unlike YCSB, an acknowledger that loses the try-lock
/// race re-checks after the winner releases, so the limit never lags behind a completed
/// prefix until the next acknowledgement.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicU64,
    /// Every value below this has been acknowledged (YCSB's `limit + 1`).
    acked_below: AtomicU64,
    sliding: AtomicBool,
    window: Box<[AtomicU64]>,
}

impl AcknowledgedCounter {
    /// Bits in the window of pending acknowledgements (YCSB: 2²⁰).
    pub const WINDOW_SIZE: u64 = 1 << 20;
    const MASK: u64 = Self::WINDOW_SIZE - 1;

    /// A counter whose first value is `start`; values below `start` count as
    /// acknowledged.
    pub fn new(start: u64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            acked_below: AtomicU64::new(start),
            sliding: AtomicBool::new(false),
            window: (0..Self::WINDOW_SIZE / 64)
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Hands out the next value.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Every value below the returned one has been acknowledged (or was below `start`).
    #[inline]
    pub fn acknowledged_below(&self) -> u64 {
        self.acked_below.load(Ordering::Acquire)
    }

    /// The highest value such that it and all below it are acknowledged (YCSB
    /// `lastValue()`); `None` if the counter started at 0 and 0 is not acknowledged yet.
    #[inline]
    pub fn last_value(&self) -> Option<u64> {
        self.acknowledged_below().checked_sub(1)
    }

    #[inline]
    fn bit(&self, value: u64) -> (&AtomicU64, u64) {
        let slot = value & Self::MASK;
        (&self.window[(slot >> 6) as usize], 1u64 << (slot & 63))
    }

    /// Marks `value` (returned by [`AcknowledgedCounter::next`]) as done.
    ///
    /// The caller guarantees each value is acknowledged once.
    ///
    /// # Panics
    ///
    /// When more than [`AcknowledgedCounter::WINDOW_SIZE`] values are outstanding (YCSB
    /// throws "Too many unacknowledged insertion keys").
    pub fn acknowledge(&self, value: u64) {
        let (word, mask) = self.bit(value);
        let previous = word.fetch_or(mask, Ordering::AcqRel);
        assert!(
            previous & mask == 0,
            "too many unacknowledged insertion keys: more than {} outstanding",
            Self::WINDOW_SIZE
        );
        loop {
            if self
                .sliding
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                // The slider will see our bit, or re-check after releasing.
                return;
            }
            let mut limit = self.acked_below.load(Ordering::Relaxed);
            let stop = limit + Self::WINDOW_SIZE;
            while limit < stop {
                let (word, mask) = self.bit(limit);
                if word.load(Ordering::Acquire) & mask == 0 {
                    break;
                }
                word.fetch_and(!mask, Ordering::AcqRel);
                limit += 1;
            }
            self.acked_below.store(limit, Ordering::Release);
            self.sliding.store(false, Ordering::Release);
            let (word, mask) = self.bit(limit);
            if word.load(Ordering::Acquire) & mask == 0 {
                return;
            }
        }
    }
}

/// Recent items favoured: `last − zipf(last)`, where `last` is the basis counter's
/// highest acknowledged value (YCSB `SkewedLatestGenerator`).
///
/// Never returns a value above the basis's [`AcknowledgedCounter::last_value`] at the
/// time of the call. Inherited from YCSB: the Zipfian draws from `0..last`, so the
/// smallest value (key 0 when the counter starts at `recordcount`) is never chosen.
/// The inner Zipfian's ζ grows incrementally with `last`, per clone (one per worker).
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    basis: Arc<AcknowledgedCounter>,
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// A generator over `basis` with Zipfian constant `theta`. The caller guarantees
    /// `basis` started at 1 or more (CoreWorkload starts it at `recordcount`).
    pub fn new(basis: Arc<AcknowledgedCounter>, theta: f64) -> SkewedLatest {
        let items = basis.acknowledged_below().saturating_sub(1);
        let zipfian = Zipfian::with_zetan(0, items, theta, zeta(items, theta));
        SkewedLatest { basis, zipfian }
    }

    /// The basis counter.
    pub fn basis(&self) -> &Arc<AcknowledgedCounter> {
        &self.basis
    }

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&mut self, rng: &mut R) -> u64 {
        let max = self.basis.acknowledged_below().saturating_sub(1);
        max - self.zipfian.next_for_count(rng, max).min(max)
    }
}

/// A fraction `hot_opn_fraction` of draws fall uniformly in the first
/// `hot_set_fraction` of `[lb, ub]`, the rest uniformly in the remainder (YCSB
/// `HotspotIntegerGenerator`).
///
/// Differences: the hot-set size is not truncated to a 32-bit `int`; fractions outside
/// `[0, 1]` are rejected by CoreWorkload instead of being reset to 0; and an empty hot
/// (or cold) set sends every draw to the other set instead of dividing by zero.
#[derive(Clone, Copy, Debug)]
pub struct Hotspot {
    lb: u64,
    hot_interval: u64,
    cold_interval: u64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    /// A hotspot generator over `[lb, ub]`.
    pub fn new(lb: u64, ub: u64, hot_set_fraction: f64, hot_opn_fraction: f64) -> Hotspot {
        let interval = ub - lb + 1;
        let hot_interval = (interval as f64 * hot_set_fraction) as u64;
        let cold_interval = interval - hot_interval;
        let hot_opn_fraction = if hot_interval == 0 {
            0.0
        } else if cold_interval == 0 {
            1.0
        } else {
            hot_opn_fraction
        };
        Hotspot {
            lb,
            hot_interval,
            cold_interval,
            hot_opn_fraction,
        }
    }

    /// Size of the hot set.
    pub fn hot_interval(&self) -> u64 {
        self.hot_interval
    }

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        if next_f64(rng) < self.hot_opn_fraction {
            self.lb + next_below(rng, self.hot_interval)
        } else {
            self.lb + self.hot_interval + next_below(rng, self.cold_interval)
        }
    }
}

/// Exponentially distributed reals, skewed towards 0 (YCSB `ExponentialGenerator`).
#[derive(Clone, Copy, Debug)]
pub struct Exponential {
    gamma: f64,
}

impl Exponential {
    /// Rate such that `percentile` percent of draws fall below `range` (YCSB's
    /// `ExponentialGenerator(percentile, range)`: γ = −ln(1 − percentile/100) / range).
    pub fn new(percentile: f64, range: f64) -> Exponential {
        Exponential {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    /// An exponential with the given mean (γ = 1/mean).
    pub fn with_mean(mean: f64) -> Exponential {
        Exponential { gamma: 1.0 / mean }
    }

    /// The rate γ.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The next value, `−ln(u)/γ` (infinite when `u` is exactly 0, as in YCSB).
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> f64 {
        -next_f64(rng).ln() / self.gamma
    }
}

/// `start, start+1, …, end, start, …` from one counter shared by every user (YCSB
/// `SequentialGenerator`, whose counter is shared by all client threads).
#[derive(Debug)]
pub struct Sequential {
    counter: AtomicU64,
    start: u64,
    interval: u64,
}

impl Sequential {
    /// A sequence over `[start, end]`. The caller guarantees `start <= end`.
    pub fn new(start: u64, end: u64) -> Sequential {
        Sequential {
            counter: AtomicU64::new(0),
            start,
            interval: end - start + 1,
        }
    }

    /// The next value in the shared sequence.
    #[inline]
    pub fn next(&self) -> u64 {
        self.start + self.counter.fetch_add(1, Ordering::Relaxed) % self.interval
    }
}

/// A plain shared counter from `start` (YCSB `CounterGenerator`).
#[derive(Debug)]
pub struct Counter {
    next: AtomicU64,
}

impl Counter {
    /// A counter whose first value is `start`.
    pub fn new(start: u64) -> Counter {
        Counter {
            next: AtomicU64::new(start),
        }
    }

    /// Hands out the next value.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }
}

/// Sizes drawn from a histogram of block counts (YCSB `HistogramGenerator`, used for
/// `fieldlengthdistribution=histogram`).
///
/// File format (tab-separated, as YCSB): a first line `BlockSize<TAB>n`, then one line
/// `bucket<TAB>count` per bucket, buckets numbered from 0 in order. YCSB's draw is
/// reproduced exactly, quirks included: `number = uniform[0, area)`; for each bucket
/// `i` but the last, `number -= count[i]` and return `(i + 1) · blocksize` once
/// `number <= 0`; otherwise return `(len − 1) · blocksize`.
#[derive(Clone, Debug)]
pub struct Histogram {
    block_size: u64,
    /// Cumulative counts of every bucket but the last.
    cumulative: Vec<u64>,
    buckets: u64,
    area: u64,
}

impl Histogram {
    /// A histogram from bucket counts and a block size. The caller guarantees at least
    /// one bucket and a nonzero total count.
    pub fn new(buckets: &[u64], block_size: u64) -> Histogram {
        let mut cumulative = Vec::with_capacity(buckets.len());
        let mut area = 0u64;
        for (i, &count) in buckets.iter().enumerate() {
            area += count;
            if i + 1 < buckets.len() {
                cumulative.push(area);
            }
        }
        Histogram {
            block_size,
            cumulative,
            buckets: buckets.len() as u64,
            area,
        }
    }

    /// Parses YCSB's histogram file text. Errors are `(line number, message)`.
    pub fn parse(text: &str) -> Result<Histogram, (usize, String)> {
        let mut lines = text.lines().enumerate();
        let block_size = match lines.next() {
            Some((_, first)) => {
                let mut parts = first.split('\t');
                if parts.next().map(str::trim) != Some("BlockSize") {
                    return Err((1, "the first line must be `BlockSize<TAB>n`".into()));
                }
                parse_count(parts.next()).ok_or((1, "BlockSize needs an integer".to_string()))?
            }
            None => return Err((1, "empty histogram file".into())),
        };
        let mut buckets = Vec::new();
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let mut parts = line.split('\t');
            let (Some(bucket), Some(count)) =
                (parse_count(parts.next()), parse_count(parts.next()))
            else {
                return Err((i + 1, "expected `bucket<TAB>count` (two integers)".into()));
            };
            if bucket != buckets.len() as u64 {
                return Err((
                    i + 1,
                    format!("expected bucket {} next, found {bucket}", buckets.len()),
                ));
            }
            buckets.push(count);
        }
        if buckets.is_empty() || buckets.iter().sum::<u64>() == 0 {
            return Err((1, "the histogram has no counts".into()));
        }
        Ok(Histogram::new(&buckets, block_size))
    }

    /// The largest value the histogram can return.
    pub fn max_value(&self) -> u64 {
        self.buckets.saturating_sub(1).max(1) * self.block_size
    }

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        let number = next_below(rng, self.area);
        // First bucket i (not the last) whose cumulative count reaches `number`.
        let i = self.cumulative.partition_point(|&c| c < number);
        if i < self.cumulative.len() {
            (i as u64 + 1) * self.block_size
        } else {
            (self.buckets - 1) * self.block_size
        }
    }
}

fn parse_count(s: Option<&str>) -> Option<u64> {
    s?.trim().parse().ok()
}

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

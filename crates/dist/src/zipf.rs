//! Zipf by rejection-inversion (Hörmann & Derflinger, "Rejection-inversion to generate
//! variates from monotone discrete distributions", ACM TOMACS 6(3), 1996), for any
//! exponent — where YCSB's Zipfian ([`crate::ycsb::Zipfian`], Gray et al.'s algorithm)
//! needs θ < 1.
//!
//! Two formulations live here, each bit-exact with the tool it imitates, so they are
//! not merged: [`ZipfRejection`] (Apache Commons RNG's, behind CacheBench-style
//! popularity; with [`ZipfMixture`] an alias table takes the head) and [`Zipf`]
//! (memtier_benchmark's own formulas, special cases and clamping). For the same
//! exponent and range they draw the same distribution from different streams.

use rand_core::RngCore;

use crate::{next_below, next_f64, Alias};

/// memtier's tolerance around the exponents it treats as exactly 0 (uniform) or 1.
const ZIPF_EPS: f64 = 1e-4;

/// Zipf-distributed ranks `0..n` (rank 0 the most popular, P(k) ∝ 1/(k+1)^s) for any
/// exponent `s > 0` (the cache workload uses it for s ≥ 1), exactly, in two parts:
///
/// - the **head**, the first [`ZipfMixture::HEAD`] ranks (all of them when `n` is no
///   larger), and one more entry standing for the whole tail, with weights `1/k^s` and
///   the tail's `Σ_{k>head} 1/k^s`, in a Walker alias table: one random word and one
///   memory read per draw (the table takes 8 bytes per entry, 512 KiB in all);
/// - the **tail**, drawn only when the alias table picks its entry (6 % of draws for
///   s = 1.2 over 10⁷ keys), by rejection-inversion restricted to the tail's ranks
///   ([`ZipfRejection`]).
///
/// Each rank's probability is its weight over the total, as for one sampler over all
/// ranks; the tail's weight is summed directly up to 10⁵ terms and by Euler–Maclaurin
/// beyond (relative error far below 10⁻¹⁵ from rank 2¹⁶ on).
#[derive(Clone, Debug)]
pub struct ZipfMixture {
    alias: Alias,
    /// Ranks in the alias table; the entry at `head` (when present) is the tail.
    head: u64,
    tail: Option<ZipfRejection>,
}

impl ZipfMixture {
    /// Ranks drawn from the alias table.
    pub const HEAD: u64 = 1 << 16;
    /// Up to this many tail terms are summed directly.
    const DIRECT_TAIL_TERMS: u64 = 100_000;

    /// The caller guarantees `n ≥ 1` and a finite `exponent > 0`.
    pub fn new(n: u64, exponent: f64) -> ZipfMixture {
        ZipfMixture::with_head(n, exponent, Self::HEAD)
    }

    /// As [`ZipfMixture::new`] with `head ≥ 1` ranks in the alias table.
    pub fn with_head(n: u64, exponent: f64, head: u64) -> ZipfMixture {
        let head = head.clamp(1, n);
        let mut weights: Vec<f64> = (1..=head).map(|k| (k as f64).powf(-exponent)).collect();
        let tail = (head < n).then(|| {
            let tail_weight = if n - head <= Self::DIRECT_TAIL_TERMS {
                (head + 1..=n).map(|k| (k as f64).powf(-exponent)).sum()
            } else {
                crate::ycsb::euler_maclaurin(head + 1, n, exponent)
            };
            weights.push(tail_weight);
            ZipfRejection::from_rank(head + 1, n, exponent)
        });
        ZipfMixture {
            alias: Alias::new(&weights),
            head,
            tail,
        }
    }

    /// The next rank (0-based).
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        let i = self.alias.sample(rng.next_u64()) as u64;
        match &self.tail {
            Some(tail) if i == self.head => tail.next(rng),
            _ => i,
        }
    }
}

/// Zipf-distributed ranks `first − 1 .. n` (0-based: 1-based rank `k` is drawn with
/// probability ∝ 1/k^s for `first ≤ k ≤ n`) for any exponent `s > 0`, by
/// rejection-inversion (Hörmann & Derflinger, "Rejection-inversion to generate variates
/// from monotone discrete distributions", ACM TOMACS 1996; the formulation of Apache
/// Commons RNG's `RejectionInversionZipfSampler`, which starts at rank 1). Expected O(1)
/// per draw with no normalisation constant, so it also serves θ ≥ 1, where the
/// algorithm of [`crate::ycsb::Zipfian`] does not apply.
#[derive(Clone, Debug)]
pub struct ZipfRejection {
    first: f64,
    n: f64,
    exponent: f64,
    h_integral_first: f64,
    h_integral_n: f64,
    s: f64,
}

impl ZipfRejection {
    /// Ranks `0..n`. The caller guarantees `n ≥ 1` and a finite `exponent > 0`.
    #[cfg(test)]
    pub fn new(n: u64, exponent: f64) -> ZipfRejection {
        ZipfRejection::from_rank(1, n, exponent)
    }

    /// 1-based ranks `first..=n`, returned 0-based. The caller guarantees
    /// `1 ≤ first ≤ n` and a finite `exponent > 0`.
    pub fn from_rank(first: u64, n: u64, exponent: f64) -> ZipfRejection {
        let first = first as f64;
        let mut z = ZipfRejection {
            first,
            n: n as f64,
            exponent,
            h_integral_first: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        // Rank `first` takes [H(first + ½) − h(first), H(first + ½)], always accepted;
        // rank k > first takes [H(k − ½), H(k + ½)], accepted on the last h(k) of it.
        z.h_integral_first = z.h_integral(first + 0.5) - z.h(first);
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        // The quick-accept bound f(first + 1), f(x) = x − H⁻¹(H(x + ½) − h(x)) being
        // non-decreasing (Theorem 2 of the paper).
        let next = first + 1.0;
        z.s = next - z.h_integral_inverse(z.h_integral(next + 0.5) - z.h(next));
        z
    }

    /// The next rank (0-based).
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        loop {
            let u = self.h_integral_n + next_f64(rng) * (self.h_integral_first - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(self.first, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }

    /// h(x) = x^(−s).
    #[inline]
    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    /// H(x) = ∫₁ˣ h = (x^(1−s) − 1)/(1 − s), continuous at s = 1 (ln x).
    #[inline]
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    /// H⁻¹.
    #[inline]
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x)/x, accurate near 0.
#[inline]
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (eˣ − 1)/x, accurate near 0.
#[inline]
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// memtier's Zipf key chooser (`object_generator::zipf_distribution`): exponent `s` in
/// (0, 5) over `[max(min, 1), max]`, `P(k) ∝ k^−s`, sampled by rejection-inversion
/// (Hörmann & Derflinger, "Rejection-inversion to generate variates from monotone
/// discrete distributions", ACM TOMACS 6(3), 1996). The formulas, the special cases
/// for `s ≈ 0` (uniform) and `s ≈ 1` (harmonic), and the clamping are memtier's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zipf {
    min: u64,
    max: u64,
    exponent: f64,
    one_minus_exp: f64,
    one_minus_exp_inv: f64,
    h_min: f64,
    h_max: f64,
    squeeze: f64,
}

impl Zipf {
    /// A chooser over `[max(min, 1), max]` (memtier: "will limit keys to positive").
    pub fn new(min: u64, max: u64, exponent: f64) -> Zipf {
        let exponent = if exponent < ZIPF_EPS {
            0.0
        } else if (exponent - 1.0).abs() < ZIPF_EPS {
            1.0
        } else {
            exponent
        };
        let zmin = min.max(1);
        let zmax = max.max(zmin);
        let (a, b) = (zmin as f64, zmax as f64);
        let mut z = Zipf {
            min: zmin,
            max: zmax,
            exponent,
            one_minus_exp: 0.0,
            one_minus_exp_inv: 0.0,
            h_min: 0.0,
            h_max: 0.0,
            squeeze: 0.0,
        };
        if exponent == 0.0 {
            return z;
        }
        if exponent == 1.0 {
            z.h_min = (a + 0.5).ln() - 1.0 / a;
            z.h_max = (b + 0.5).ln();
            let t = (a + 1.5).ln() - 1.0 / (a + 1.0);
            z.squeeze = a + 1.0 - t.exp();
        } else {
            let q = 1.0 - exponent;
            z.one_minus_exp = q;
            z.one_minus_exp_inv = 1.0 / q;
            z.h_min = (a + 0.5).powf(q) - q * a.powf(-exponent);
            z.h_max = (b + 0.5).powf(q);
            let t = (a + 1.5).powf(q) - q * (a + 1.0).powf(-exponent);
            z.squeeze = a + 1.0 - t.powf(z.one_minus_exp_inv);
        }
        z
    }

    /// The smallest key it returns (the most popular).
    pub fn min(&self) -> u64 {
        self.min
    }

    /// The largest key it returns.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The next key.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        let (a, b) = (self.min as f64, self.max as f64);
        if self.exponent == 0.0 {
            return self.min + next_below(rng, self.max - self.min + 1);
        }
        loop {
            let p = next_f64(rng);
            let u = p * (self.h_max - self.h_min) + self.h_min;
            let mut x = if self.exponent == 1.0 {
                u.exp()
            } else {
                u.powf(self.one_minus_exp_inv)
            };
            if x < a - 0.5 {
                x = a + 0.5;
            }
            if x >= b + 0.5 {
                x = b;
            }
            let k = (x + 0.5).floor();
            if k - x <= self.squeeze {
                return k as u64;
            }
            let accept = if self.exponent == 1.0 {
                u > (k + 0.5).ln() - 1.0 / k
            } else {
                self.one_minus_exp_inv * (u - (k + 0.5).powf(self.one_minus_exp))
                    > -k.powf(-self.exponent)
            };
            if accept {
                return k as u64;
            }
        }
    }
}

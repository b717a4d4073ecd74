//! Size distributions (value sizes, scan lengths) fitted to an empirical CDF: the
//! candidates of Cao et al. (FAST'20, §5: generalized Pareto, Pareto, Weibull, lognormal,
//! exponential, power), each fitted by minimising the root-mean-square error between its
//! CDF and the empirical one, the best chosen by that error, as the paper does.
//!
//! db_bench's sizes are `⌈X⌉` of a continuous `X` (`ParetoCdfInversion`), so
//! `P(size ≤ n) = F_X(n)` at every integer `n`: the empirical CDF at the observed sizes
//! is compared with the candidate's CDF at the same points, with no continuity shift.
//!
//! Value sizes written by db_bench are not plain draws: `MixGraph` writes
//! `max(⌈X⌉, 10)`, and a draw over `value_max` modulo `value_max` ([`SizeClamp`]). With
//! the default flags about a third of the draws are under 10 bytes, so fitting the 10s
//! as samples pulls `k` far off. [`fit_sizes_clamped`] fits the generalized Pareto by
//! maximum likelihood with the clamp in the likelihood: a size at the floor counts as
//! the CDF mass under it (a censored observation), a size under the wrap adds the mass
//! of the draws that wrap onto it, a size over the wrap the mass above the wrap.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use kvlab_dist::mixgraph::SizeModel;

use crate::solve::{linear_regression, nelder_mead};

/// One candidate's fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The fitted distribution.
    #[serde(flatten)]
    pub model: SizeModel,
    /// Root-mean-square error between its CDF and the empirical CDF at the fit's points.
    pub rmse: f64,
}

/// Every candidate fitted to one size sample, best first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeFit {
    /// Sizes observed.
    pub samples: u64,
    /// Distinct sizes observed.
    pub distinct: usize,
    /// Points of the empirical CDF the error is taken at.
    pub points: usize,
    /// Mean size.
    pub mean: f64,
    /// Largest size.
    pub max: u64,
    /// Every candidate, by increasing RMSE.
    pub candidates: Vec<Candidate>,
    /// The clamp the generalized Pareto was fitted through ([`fit_sizes_clamped`]), by
    /// maximum likelihood; `None`: fitted by RMSE like the others.
    #[serde(default)]
    pub clamp: Option<SizeClamp>,
    /// Samples at or under the clamp's floor (censored observations).
    #[serde(default)]
    pub censored: u64,
}

/// How db_bench turns a drawn size into the size it writes (`MixGraph` in RocksDB
/// 7.8.3's `tools/db_bench_tool.cc`):
///
/// ```text
/// val_size = ParetoCdfInversion(u, value_theta, value_k, value_sigma);  // ⌈X⌉
/// if (val_size < 10) val_size = 10;
/// else if (val_size > value_max) val_size = val_size % value_max;
/// ```
///
/// with `value_max = min(mix_max_value_size, 1 MiB)` (`mix_max_value_size` defaults to
/// 1024). The upper end is a wrap, not a clamp: a draw of 1030 bytes writes 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeClamp {
    /// Draws under this are written as this (db_bench: 10 bytes).
    pub floor_bytes: u64,
    /// Draws over this are written modulo it (db_bench's `value_max`).
    pub wrap_bytes: u64,
    /// The uniforms the sizes were drawn from, when known ([`DrawGrid`]); `None`:
    /// uniform on (0, 1).
    #[serde(default)]
    pub grid: Option<DrawGrid>,
}

/// The uniforms db_bench draws a Put's size from. MixGraph takes one `r = next() % num`
/// per operation and uses it for the op type (`r % range` in the Put's slots `lo..hi`,
/// `QueryDecider`) *and* the size (`u = r / num`), so a Put's `u` is never under
/// `lo / num`: the size's tail is cut at `⌈X(lo/num)⌉` (with `-num=50000` and db_bench's
/// default sizes, 185 bytes). Above the cut a Put's `r` lie on a comb (`lo..hi` of every
/// `range`); a line from `lo` with the comb's mean density meets its count at the start
/// of every tooth, so `u` is taken as uniform on `[lo/num, 1)`. The comb itself is left
/// out on purpose: its teeth are about as wide as one size's interval of `u`, so an
/// exact likelihood gives sizes between teeth no mass and has a needle for a maximum.
/// The cut is negligible for `num` in the millions, not for small key spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawGrid {
    /// db_bench's `-num`.
    pub num: u64,
    /// The first of the Put's slots (`lo`, [`kvlab_dist::mixgraph::OpMix::put_slots`]).
    pub first_put_slot: u64,
}

impl DrawGrid {
    /// `P(u < s)` for a Put's `u`: uniform on `[lo/num, 1)`.
    fn below(&self, s: f64) -> f64 {
        let num = self.num as f64;
        let lo = self.first_put_slot as f64;
        if num <= lo {
            return s;
        }
        ((s * num - lo) / (num - lo)).clamp(0.0, 1.0)
    }
}

impl SizeClamp {
    /// db_bench's floor of value sizes, in bytes.
    pub const DB_BENCH_FLOOR_BYTES: u64 = 10;
    /// db_bench's default `mix_max_value_size`, in bytes.
    pub const DB_BENCH_VALUE_MAX_BYTES: u64 = 1024;
    /// The largest `value_max` db_bench has (its value buffer, 1 MiB).
    pub const DB_BENCH_VALUE_BUFFER_BYTES: u64 = 1 << 20;

    /// db_bench's clamp of value sizes under `-mix_max_value_size` (at least 1).
    pub fn db_bench_values(mix_max_value_size: u64) -> SizeClamp {
        SizeClamp {
            floor_bytes: Self::DB_BENCH_FLOOR_BYTES,
            wrap_bytes: mix_max_value_size.clamp(1, Self::DB_BENCH_VALUE_BUFFER_BYTES),
            grid: None,
        }
    }

    /// The same clamp, with the uniforms on `grid`.
    pub fn with_grid(self, grid: DrawGrid) -> SizeClamp {
        SizeClamp {
            grid: Some(grid),
            ..self
        }
    }

    /// The size db_bench writes for a draw of `drawn` bytes (`⌈X⌉`).
    pub fn apply(&self, drawn: i64) -> u64 {
        let floor = self.floor_bytes.min(i64::MAX as u64) as i64;
        let wrap = self.wrap_bytes.clamp(1, i64::MAX as u64) as i64;
        if drawn < floor {
            floor as u64
        } else if drawn > wrap {
            (drawn % wrap) as u64
        } else {
            drawn as u64
        }
    }
}

impl SizeFit {
    /// The candidate with the smallest RMSE.
    pub fn best(&self) -> &Candidate {
        &self.candidates[0]
    }

    /// The generalized Pareto candidate (what db_bench can draw).
    pub fn generalized_pareto(&self) -> Option<(f64, f64, f64, f64)> {
        self.candidates.iter().find_map(|c| match c.model {
            SizeModel::GeneralizedPareto { theta, k, sigma } => Some((theta, k, sigma, c.rmse)),
            _ => None,
        })
    }
}

/// The most points of the empirical CDF an error is taken at: beyond, the points where
/// the CDF crosses evenly spaced levels.
const MAX_POINTS: usize = 1000;

/// Fits every candidate to the sizes counted in `histogram` (size → count); `None` when
/// it is empty. Every candidate by RMSE ([`fit_sizes_clamped`] with no clamp).
pub fn fit_sizes(histogram: &BTreeMap<u64, u64>) -> Option<SizeFit> {
    fit_sizes_clamped(histogram, None)
}

/// Fits every candidate to the sizes counted in `histogram` (size → count), as
/// [`fit_sizes`]; with a `clamp`, the sizes are taken as written through it (db_bench's
/// value sizes) and the generalized Pareto is fitted by maximum likelihood through the
/// clamp (see the module docs), its RMSE taken as the others'. `None` when the
/// histogram is empty.
pub fn fit_sizes_clamped(
    histogram: &BTreeMap<u64, u64>,
    clamp: Option<SizeClamp>,
) -> Option<SizeFit> {
    let samples: u64 = histogram.values().sum();
    if samples == 0 {
        return None;
    }
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(histogram.len().min(MAX_POINTS));
    let mut cum = 0u64;
    let mut next_level = 0.0;
    let step = 1.0 / MAX_POINTS as f64;
    let keep_all = histogram.len() <= MAX_POINTS;
    for (&size, &count) in histogram {
        cum += count;
        let f = cum as f64 / samples as f64;
        if keep_all || f >= next_level {
            points.push((size as f64, f));
            next_level = f + step;
        }
    }
    let mean = histogram
        .iter()
        .map(|(&s, &c)| s as f64 * c as f64)
        .sum::<f64>()
        / samples as f64;
    let max = *histogram.keys().next_back().unwrap_or(&0);
    let median = points
        .iter()
        .find(|p| p.1 >= 0.5)
        .map_or(mean, |p| p.0)
        .max(1.0);
    let min_positive = histogram.keys().copied().find(|&s| s > 0).unwrap_or(1) as f64;
    let rmse = |m: &SizeModel| -> f64 {
        let s: f64 = points.iter().map(|&(x, f)| (m.cdf(x) - f).powi(2)).sum();
        (s / points.len() as f64).sqrt()
    };
    let mut candidates = Vec::with_capacity(6);

    // Generalized Pareto: first with θ = 0 (db_bench's default, and the paper's value
    // fits) from several shapes, σ from the median; then θ freed, kept only when it
    // halves the error (θ, k and σ trade off against each other, so a free θ fitting the
    // sampling noise would move k and σ away from the θ = 0 fit).
    let gpd0 = |p: &[f64; 2]| SizeModel::GeneralizedPareto {
        theta: 0.0,
        k: p[0],
        sigma: p[1].exp(),
    };
    let mut best0: ([f64; 2], f64) = ([0.0, median.ln()], f64::INFINITY);
    for k0 in [-0.3, 0.05, 0.3, 1.0] {
        let sigma0 = median * k0 / (2f64.powf(k0) - 1.0);
        let fit = nelder_mead([k0, sigma0.max(1e-3).ln()], [0.1, 0.3], 3000, |p| {
            rmse(&gpd0(p))
        });
        if fit.1 < best0.1 {
            best0 = fit;
        }
    }
    let gpd = |p: &[f64; 3]| SizeModel::GeneralizedPareto {
        theta: p[0],
        k: p[1],
        sigma: p[2].exp(),
    };
    let free = nelder_mead(
        [0.0, best0.0[0], best0.0[1]],
        [min_positive.max(1.0), 0.1, 0.3],
        3000,
        |p| rmse(&gpd(p)),
    );
    let by_rmse = if free.1 < 0.5 * best0.1 {
        gpd(&free.0)
    } else {
        gpd0(&best0.0)
    };
    let gpd_model = match clamp {
        Some(clamp) => fit_gpd_clamped(histogram, clamp, by_rmse, median),
        None => by_rmse,
    };
    candidates.push(Candidate {
        model: gpd_model,
        rmse: rmse(&gpd_model),
    });

    // Pareto: x_m at the smallest positive size, α by maximum likelihood.
    let log_mean = histogram
        .iter()
        .filter(|(&s, _)| s > 0)
        .map(|(&s, &c)| (s as f64 / min_positive).ln() * c as f64)
        .sum::<f64>()
        / samples as f64;
    let alpha0 = if log_mean > 0.0 { 1.0 / log_mean } else { 1.0 };
    let pareto = |p: &[f64; 2]| SizeModel::Pareto {
        scale: p[0].exp(),
        shape: p[1].exp(),
    };
    let (p, e) = nelder_mead([min_positive.ln(), alpha0.ln()], [0.2, 0.3], 2000, |p| {
        rmse(&pareto(p))
    });
    candidates.push(Candidate {
        model: pareto(&p),
        rmse: e,
    });

    // Weibull: λ at the mean, k = 1.
    let weibull = |p: &[f64; 2]| SizeModel::Weibull {
        scale: p[0].exp(),
        shape: p[1].exp(),
    };
    let (p, e) = nelder_mead([mean.max(1e-3).ln(), 0.0], [0.3, 0.3], 2000, |p| {
        rmse(&weibull(p))
    });
    candidates.push(Candidate {
        model: weibull(&p),
        rmse: e,
    });

    // Lognormal: moments of ln x over positive sizes.
    let (mut n, mut s1, mut s2) = (0.0, 0.0, 0.0);
    for (&s, &c) in histogram.iter().filter(|(&s, _)| s > 0) {
        let l = (s as f64).ln();
        n += c as f64;
        s1 += l * c as f64;
        s2 += l * l * c as f64;
    }
    let mu0 = if n > 0.0 { s1 / n } else { 0.0 };
    let sd0 = if n > 0.0 {
        (s2 / n - mu0 * mu0).max(1e-4).sqrt()
    } else {
        1.0
    };
    let lognormal = |p: &[f64; 2]| SizeModel::Lognormal {
        mu: p[0],
        sigma: p[1].exp(),
    };
    let (p, e) = nelder_mead([mu0, sd0.ln()], [0.3, 0.3], 2000, |p| rmse(&lognormal(p)));
    candidates.push(Candidate {
        model: lognormal(&p),
        rmse: e,
    });

    // Exponential: the mean.
    let exponential = |p: &[f64; 1]| SizeModel::Exponential { mean: p[0].exp() };
    let (p, e) = nelder_mead([mean.max(1e-3).ln()], [0.3], 500, |p| rmse(&exponential(p)));
    candidates.push(Candidate {
        model: exponential(&p),
        rmse: e,
    });

    // Power: a log-log regression of the CDF, then refined.
    let (la, b) = linear_regression(
        points
            .iter()
            .filter(|&&(x, f)| x > 0.0 && f < 1.0)
            .map(|&(x, f)| (x.ln(), f.ln())),
    )
    .unwrap_or((-(max.max(1) as f64).ln(), 1.0));
    let power = |p: &[f64; 2]| SizeModel::Power {
        a: p[0].exp(),
        b: p[1],
    };
    let (p, e) = nelder_mead([la, b], [0.3, 0.1], 2000, |p| rmse(&power(p)));
    candidates.push(Candidate {
        model: power(&p),
        rmse: e,
    });

    candidates.sort_by(|a, b| a.rmse.total_cmp(&b.rmse));
    Some(SizeFit {
        samples,
        distinct: histogram.len(),
        points: points.len(),
        mean,
        max,
        candidates,
        clamp,
        censored: clamp.map_or(0, |c| {
            histogram.range(..=c.floor_bytes).map(|(_, &n)| n).sum()
        }),
    })
}

/// The generalized Pareto's survival function `P(X > x)`.
fn gpd_survival(theta: f64, k: f64, sigma: f64, x: f64) -> f64 {
    if x < theta {
        return 1.0;
    }
    let z = (x - theta) / sigma;
    if k.abs() < 1e-12 {
        (-z).exp()
    } else {
        let base = 1.0 + k * z;
        if base <= 0.0 {
            0.0
        } else {
            base.powf(-1.0 / k)
        }
    }
}

/// The most survival evaluations one likelihood spends on the mass wrapped onto sizes
/// (bins × wraps): bounds the fit's time for heavy tails over many sizes.
const WRAP_BUDGET: usize = 1 << 16;

/// The most wraps (`j` in `n + j·value_max`) counted for one size.
const MAX_WRAPS: u64 = 64;

/// The most bins a likelihood is taken over: beyond, neighbouring sizes share a bin (a
/// coarsened observation), so a trace of a million distinct sizes fits in bounded time.
const MAX_BINS: usize = 1000;

/// A histogram as the clamped likelihood reads it: the censored count at or under the
/// floor, bins of sizes between floor and wrap (`first..=last`, count), and the count
/// over the wrap.
#[derive(Debug)]
struct Bins {
    clamp: SizeClamp,
    censored: u64,
    bins: Vec<(u64, u64, u64)>,
    over: u64,
}

impl Bins {
    fn new(histogram: &BTreeMap<u64, u64>, clamp: SizeClamp) -> Bins {
        let wrap = clamp.wrap_bytes.max(1);
        let floor = clamp.floor_bytes;
        let censored = histogram.range(..=floor).map(|(_, &c)| c).sum();
        let over = if wrap < u64::MAX {
            histogram.range(wrap + 1..).map(|(_, &c)| c).sum()
        } else {
            0
        };
        let inside: Vec<(u64, u64)> = histogram
            .iter()
            .filter(|(&n, &c)| n > floor && n <= wrap && c > 0)
            .map(|(&n, &c)| (n, c))
            .collect();
        let per_bin = if inside.len() > MAX_BINS {
            inside.iter().map(|&(_, c)| c).sum::<u64>() / MAX_BINS as u64
        } else {
            0
        };
        let mut bins: Vec<(u64, u64, u64)> = Vec::with_capacity(inside.len().min(MAX_BINS + 1));
        for (n, c) in inside {
            match bins.last_mut() {
                Some(last) if last.2 < per_bin => {
                    last.1 = n;
                    last.2 += c;
                }
                _ => bins.push((n, n, c)),
            }
        }
        Bins {
            clamp,
            censored,
            bins,
            over,
        }
    }

    /// The log-likelihood at (θ, k, σ); see [`clamped_log_likelihood`].
    fn log_likelihood(&self, (theta, k, sigma): (f64, f64, f64)) -> f64 {
        if !(sigma > 0.0 && sigma.is_finite() && k.is_finite() && theta.is_finite()) {
            return f64::NEG_INFINITY;
        }
        let clamp = self.clamp;
        // `P(⌈X⌉ > x) = P(u < S(x))`: S itself for uniform u, the grid's share otherwise.
        let s = |x: f64| {
            let s = gpd_survival(theta, k, sigma, x);
            clamp.grid.map_or(s, |g| g.below(s))
        };
        let wrap = clamp.wrap_bytes.max(1);
        let floor = clamp.floor_bytes;
        let wraps = if s(wrap as f64) < 1e-15 {
            0
        } else {
            (WRAP_BUDGET / (self.bins.len() + 1)).clamp(1, MAX_WRAPS as usize) as u64
        };
        // The mass of the draws db_bench wraps onto `first..=last` (under the wrap):
        // `Σ_j P(first + j·wrap ≤ ⌈X⌉ ≤ last + j·wrap)`, a draw of `wrap` itself kept.
        let wrapped = |first: u64, last: u64| -> f64 {
            let mut mass = 0.0;
            let last = last.min(wrap - 1);
            for j in 1..=wraps {
                let first = if j == 1 { first.max(1) } else { first };
                if first > last {
                    continue;
                }
                let (Some(lo), Some(hi)) = (
                    j.checked_mul(wrap).and_then(|jw| jw.checked_add(first)),
                    j.checked_mul(wrap).and_then(|jw| jw.checked_add(last)),
                ) else {
                    break;
                };
                let above = s(lo as f64 - 1.0);
                if above < 1e-300 {
                    break;
                }
                mass += above - s(hi as f64);
            }
            mass
        };
        let term = |count: u64, p: f64| count as f64 * p.max(1e-300).ln();
        let mut ll = 0.0;
        if self.censored > 0 {
            ll += term(self.censored, 1.0 - s(floor as f64) + wrapped(0, floor));
        }
        for &(first, last, count) in &self.bins {
            let p = s(first as f64 - 1.0) - s(last as f64) + wrapped(first, last);
            ll += term(count, p);
        }
        if self.over > 0 {
            ll += term(self.over, s(wrap as f64));
        }
        ll
    }
}

/// The log-likelihood of the sizes `histogram` holds, written by db_bench through
/// `clamp` from `⌈X⌉` with `X` generalized Pareto (θ, k, σ):
///
/// - a size at or under the floor: `P(⌈X⌉ ≤ floor) = F(floor)` (censored), plus what
///   wraps onto it;
/// - a size `n` over the floor, at most the wrap: `P(⌈X⌉ = n) = S(n−1) − S(n)`, plus,
///   under the wrap, `Σ_j P(⌈X⌉ = n + j·wrap)` (db_bench's `val_size % value_max`);
/// - a size over the wrap (db_bench cannot write one): `S(wrap)`, right-censored.
///
/// With a [`DrawGrid`], `S` is the share of the grid's `u` under it. Over 1000 distinct
/// sizes, neighbouring sizes are taken together (each bin `P(first ≤ ⌈X⌉ ≤ last)`).
pub fn clamped_log_likelihood(
    histogram: &BTreeMap<u64, u64>,
    clamp: SizeClamp,
    params: (f64, f64, f64),
) -> f64 {
    Bins::new(histogram, clamp).log_likelihood(params)
}

/// The χ² (1 degree of freedom) quantile at 0.999: a free θ must raise twice the
/// log-likelihood by this much over θ = 0 (db_bench's default) to be kept.
const CHI2_1_999: f64 = 10.83;

/// The generalized Pareto by maximum likelihood through `clamp`: θ = 0 from several
/// starts (the RMSE fit's among them); with a [`DrawGrid`], refined from the fit
/// without it (its cut makes sizes over the cut impossible, so a search from afar can
/// stall where a draw lands beyond it); then θ free, kept only when a likelihood-ratio
/// test at 0.1 % says so.
fn fit_gpd_clamped(
    histogram: &BTreeMap<u64, u64>,
    clamp: SizeClamp,
    by_rmse: SizeModel,
    median: f64,
) -> SizeModel {
    let smooth_bins = Bins::new(
        histogram,
        SizeClamp {
            grid: None,
            ..clamp
        },
    );
    let bins = Bins::new(histogram, clamp);
    let search = |bins: &Bins, starts: &[[f64; 2]], step: [f64; 2]| {
        let nll0 = |p: &[f64; 2]| {
            let ll = bins.log_likelihood((0.0, p[0], p[1].exp()));
            if ll.is_finite() {
                -ll
            } else {
                f64::MAX
            }
        };
        let mut best: ([f64; 2], f64) = ([0.0, median.max(1.0).ln()], f64::MAX);
        for &start in starts {
            // A second pass from the first's end: Nelder–Mead can stall on a ridge.
            let first = nelder_mead(start, step, 2000, nll0);
            let fit = nelder_mead(first.0, [step[0] / 5.0, step[1] / 5.0], 2000, nll0);
            if fit.1 < best.1 {
                best = fit;
            }
        }
        best
    };
    let mut starts: Vec<[f64; 2]> = [-0.2, 0.1, 0.3, 0.8]
        .iter()
        .map(|&k0: &f64| {
            let sigma0 = median * k0 / (2f64.powf(k0) - 1.0);
            [k0, sigma0.max(1e-3).ln()]
        })
        .collect();
    if let SizeModel::GeneralizedPareto { k, sigma, .. } = by_rmse {
        if k.is_finite() && sigma > 0.0 && sigma.is_finite() {
            starts.push([k, sigma.ln()]);
        }
    }
    let smooth = search(&smooth_bins, &starts, [0.05, 0.2]);
    let best0 = match clamp.grid {
        None => smooth,
        Some(_) => {
            // The cut only ever raises k (it removes the tail the smooth fit saw thin):
            // starts at and above the smooth fit's k.
            let near: Vec<[f64; 2]> = [0.0, 0.05, 0.1, 0.2, 0.4]
                .iter()
                .map(|dk| [smooth.0[0] + dk, smooth.0[1]])
                .collect();
            search(&bins, &near, [0.02, 0.05])
        }
    };
    let nll = |p: &[f64; 3]| {
        let ll = bins.log_likelihood((p[0], p[1], p[2].exp()));
        if ll.is_finite() {
            -ll
        } else {
            f64::MAX
        }
    };
    let free = nelder_mead([0.0, best0.0[0], best0.0[1]], [0.5, 0.01, 0.02], 3000, nll);
    if best0.1 < f64::MAX && 2.0 * (best0.1 - free.1) > CHI2_1_999 {
        SizeModel::GeneralizedPareto {
            theta: free.0[0],
            k: free.0[1],
            sigma: free.0[2].exp(),
        }
    } else if best0.1 < f64::MAX {
        SizeModel::GeneralizedPareto {
            theta: 0.0,
            k: best0.0[0],
            sigma: best0.0[1].exp(),
        }
    } else {
        by_rmse
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpd_cdf_inverts_db_bench_formula() {
        // db_bench: x = θ + σ(u^{−k} − 1)/k has survival u.
        let m = SizeModel::GeneralizedPareto {
            theta: 0.0,
            k: 0.2615,
            sigma: 25.45,
        };
        for u in [0.9, 0.5, 0.1, 0.01] {
            let x: f64 = 25.45 * (f64::powf(u, -0.2615) - 1.0) / 0.2615;
            assert!((m.cdf(x) - (1.0 - u)).abs() < 1e-12);
        }
    }
}

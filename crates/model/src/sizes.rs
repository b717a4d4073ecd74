//! Size distributions (value sizes, scan lengths) fitted to an empirical CDF: the
//! candidates of Cao et al. (FAST'20, §5: generalized Pareto, Pareto, Weibull, lognormal,
//! exponential, power), each fitted by minimising the root-mean-square error between its
//! CDF and the empirical one, the best chosen by that error, as the paper does.
//!
//! db_bench's sizes are `⌈X⌉` of a continuous `X` (`ParetoCdfInversion`), so
//! `P(size ≤ n) = F_X(n)` at every integer `n`: the empirical CDF at the observed sizes
//! is compared with the candidate's CDF at the same points, with no continuity shift.

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
/// it is empty.
pub fn fit_sizes(histogram: &BTreeMap<u64, u64>) -> Option<SizeFit> {
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
    candidates.push(if free.1 < 0.5 * best0.1 {
        Candidate {
            model: gpd(&free.0),
            rmse: free.1,
        }
    } else {
        Candidate {
            model: gpd0(&best0.0),
            rmse: best0.1,
        }
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
    })
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

//! The request rate over time fitted by db_bench's sine model (`-sine_mix_rate`:
//! `SineRate(t) = A·sin(B·t + C) + D`, t in seconds, RocksDB 7.8
//! `tools/db_bench_tool.cc`), against a constant rate.
//!
//! For each angular frequency `B` of a log-spaced grid the model is linear in
//! `(A cos C, A sin C, D)`, so each grid point is an ordinary least-squares solve; the
//! best `B` is then refined by golden-section search. The sine is kept only when its
//! Bayesian information criterion beats the constant's (counting `B` as a parameter) and
//! it explains at least [`crate::FitOptions::min_sine_r2`] of the variance.

use serde::{Deserialize, Serialize};

use crate::solve::solve_linear;

/// The sine fit and the constant it is compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QpsFit {
    /// Seconds of trace fitted (the first and last dropped).
    pub seconds: usize,
    /// Seconds per point fitted (1, or more for traces over [`MAX_POINTS`] seconds).
    pub bin_seconds: usize,
    /// Mean requests per second (the constant model).
    pub mean_ops_per_sec: f64,
    /// RMSE of the constant model (ops/s).
    pub constant_rmse: f64,
    /// Amplitude A (ops/s, ≥ 0).
    pub sine_a: f64,
    /// Angular frequency B (radians/s).
    pub sine_b: f64,
    /// Phase C (radians, in `[0, 2π)`).
    pub sine_c: f64,
    /// Offset D (ops/s).
    pub sine_d: f64,
    /// RMSE of the sine (ops/s).
    pub sine_rmse: f64,
    /// R² of the sine (the constant's is 0).
    pub sine_r2: f64,
    /// Bayesian information criterion of the constant (1 parameter).
    pub constant_bic: f64,
    /// Bayesian information criterion of the sine (4 parameters).
    pub sine_bic: f64,
    /// Whether the sine was chosen.
    pub sine_chosen: bool,
}

/// The most points a rate is fitted at.
pub const MAX_POINTS: usize = 20_000;

/// Grid points over B.
const GRID: usize = 400;

/// The fewest seconds a rate is fitted over.
pub const MIN_SECONDS: usize = 30;

/// Fits the sine and the constant to `ops_per_sec[t]` (requests in second `t`); `None`
/// with fewer than [`MIN_SECONDS`]. The first and the last second are dropped: the last
/// is partial, and the first is often a warm-up (db_bench's first sine interval runs at
/// its rate limiter's initial rate). `t = 0` is the trace's first request.
pub fn fit_qps(ops_per_sec: &[u64], min_sine_r2: f64) -> Option<QpsFit> {
    let q: Vec<f64> = ops_per_sec
        .iter()
        .take(ops_per_sec.len().saturating_sub(1))
        .skip(1)
        .map(|&c| c as f64)
        .collect();
    let seconds = q.len();
    if seconds < MIN_SECONDS {
        return None;
    }
    // Long traces are fitted on bins of whole seconds (at most MAX_POINTS of them), each
    // bin's mean rate placed at its middle, so the fit's cost stays bounded.
    let bin = seconds.div_ceil(MAX_POINTS);
    let (ts, q): (Vec<f64>, Vec<f64>) = q
        .chunks(bin)
        .enumerate()
        .map(|(i, c)| {
            let t = (i * bin) as f64 + (c.len() - 1) as f64 / 2.0;
            (t, c.iter().sum::<f64>() / c.len() as f64)
        })
        .unzip();
    let n = q.len();
    let mean = q.iter().sum::<f64>() / n as f64;
    let sst: f64 = q.iter().map(|v| (v - mean).powi(2)).sum();
    // Periods from 4 s (4 bins) to half the trace: a longer one would fit a trend as an
    // arc of a sine, and extrapolate it.
    let b_min = 4.0 * std::f64::consts::PI / seconds as f64;
    let b_max = 2.0 * std::f64::consts::PI / (4 * bin) as f64;
    let solve = |b: f64| -> ([f64; 3], f64) {
        let mut m = [[0.0; 3]; 3];
        let mut v = [0.0; 3];
        for (&t, &y) in ts.iter().zip(&q) {
            let (s, c) = (b * t).sin_cos();
            let row = [s, c, 1.0];
            for i in 0..3 {
                v[i] += row[i] * y;
                for j in 0..3 {
                    m[i][j] += row[i] * row[j];
                }
            }
        }
        match solve_linear(m, v) {
            Some(x) => {
                let sse = ts
                    .iter()
                    .zip(&q)
                    .map(|(&t, &y)| {
                        let (s, c) = (b * t).sin_cos();
                        (x[0] * s + x[1] * c + x[2] - y).powi(2)
                    })
                    .sum();
                (x, sse)
            }
            None => ([0.0, 0.0, mean], sst),
        }
    };
    let ratio = (b_max / b_min).powf(1.0 / (GRID - 1) as f64);
    let mut best = (b_min, solve(b_min));
    let mut b = b_min;
    for _ in 1..GRID {
        b *= ratio;
        let s = solve(b);
        if s.1 < best.1 .1 {
            best = (b, s);
        }
    }
    // Golden-section refinement between the neighbouring grid points.
    let (mut lo, mut hi) = ((best.0 / ratio).max(b_min), (best.0 * ratio).min(b_max));
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..60 {
        let x1 = hi - g * (hi - lo);
        let x2 = lo + g * (hi - lo);
        if solve(x1).1 < solve(x2).1 {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    let mid = (lo + hi) / 2.0;
    let refined = solve(mid);
    if refined.1 < best.1 .1 {
        best = (mid, refined);
    }
    let (b, (x, sse)) = best;
    // A·sin(Bt + C) = A cos C · sin Bt + A sin C · cos Bt.
    let a = x[0].hypot(x[1]);
    // The fit's t = 0 is second 1 of the trace, whose count is the rate at its middle,
    // 1.5 s after the first request: shift the phase so that t = 0 is the first request
    // (db_bench's t is seconds since its start).
    let c = (x[1].atan2(x[0]) - 1.5 * b).rem_euclid(2.0 * std::f64::consts::PI);
    let nf = n as f64;
    let bic = |sse: f64, k: f64| nf * (sse.max(1e-300) / nf).ln() + k * nf.ln();
    let constant_bic = bic(sst, 1.0);
    let sine_bic = bic(sse, 4.0);
    let sine_r2 = if sst > 0.0 { 1.0 - sse / sst } else { 0.0 };
    Some(QpsFit {
        seconds,
        bin_seconds: bin,
        mean_ops_per_sec: mean,
        constant_rmse: (sst / nf).sqrt(),
        sine_a: a,
        sine_b: b,
        sine_c: c,
        sine_d: x[2],
        sine_rmse: (sse / nf).sqrt(),
        sine_r2,
        constant_bic,
        sine_bic,
        // db_bench takes `rand() % (int)sine_a`: an amplitude under 1 cannot run.
        sine_chosen: sine_bic < constant_bic && sine_r2 >= min_sine_r2 && a >= 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_noisy_sine_is_recovered_and_a_flat_rate_is_not_a_sine() {
        // Deterministic "noise" from a linear congruential sequence, ±50 ops/s.
        let mut state = 12345u64;
        let mut noise = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 100.0
        };
        let q: Vec<u64> = (0..2000)
            .map(|t| (350.0 * (0.0105 * t as f64 + 1.0).sin() + 5000.0 + noise()) as u64)
            .collect();
        let fit = fit_qps(&q, 0.25).expect("enough seconds");
        assert!(fit.sine_chosen, "{fit:?}");
        assert!((fit.sine_b - 0.0105).abs() < 1e-4, "{fit:?}");
        assert!((fit.sine_a - 350.0).abs() < 10.0, "{fit:?}");
        assert!((fit.sine_d - 5000.0).abs() < 5.0, "{fit:?}");
        assert!((fit.sine_c - 1.0).abs() < 0.05, "{fit:?}");
        let flat: Vec<u64> = (0..2000).map(|_| (5000.0 + noise()) as u64).collect();
        let fit = fit_qps(&flat, 0.25).expect("enough seconds");
        assert!(!fit.sine_chosen, "{fit:?}");
        // Three days of seconds, one period a day: fitted on 13-second bins.
        let q: Vec<u64> = (0..260_000)
            .map(|t| {
                (300.0 * (2.0 * std::f64::consts::PI * t as f64 / 86_400.0).sin()
                    + 1000.0
                    + noise()) as u64
            })
            .collect();
        let fit = fit_qps(&q, 0.25).expect("enough seconds");
        assert_eq!(fit.bin_seconds, 13);
        assert!(fit.sine_chosen, "{fit:?}");
        assert!(
            (fit.sine_b * 86_400.0 / (2.0 * std::f64::consts::PI) - 1.0).abs() < 0.01,
            "{fit:?}"
        );
        assert!(
            (fit.sine_a - 300.0).abs() < 5.0 && (fit.sine_d - 1000.0).abs() < 5.0,
            "{fit:?}"
        );
        assert!(
            fit.sine_c.min(2.0 * std::f64::consts::PI - fit.sine_c) < 0.02,
            "{fit:?}"
        );
    }
}

//! YCSB's `ExponentialGenerator`.

use super::*;

/// Exponentially distributed reals, skewed towards 0 (YCSB `ExponentialGenerator`).
#[derive(Clone, Copy, Debug)]
pub struct Exponential {
    pub(super) gamma: f64,
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

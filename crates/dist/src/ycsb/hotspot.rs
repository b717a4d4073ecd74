//! YCSB's `HotspotIntegerGenerator`.

use super::*;

/// A fraction `hot_opn_fraction` of draws fall uniformly in the first
/// `hot_set_fraction` of `[lb, ub]`, the rest uniformly in the remainder (YCSB
/// `HotspotIntegerGenerator`).
///
/// Differences: the hot-set size is not truncated to a 32-bit `int`; fractions outside
/// `[0, 1]` are rejected by CoreWorkload instead of being reset to 0; and an empty hot
/// (or cold) set sends every draw to the other set instead of dividing by zero.
#[derive(Clone, Copy, Debug)]
pub struct Hotspot {
    pub(super) lb: u64,
    pub(super) hot_interval: u64,
    pub(super) cold_interval: u64,
    pub(super) hot_opn_fraction: f64,
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

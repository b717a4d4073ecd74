//! YCSB's `UniformLongGenerator`.

use super::*;

/// Uniform integers in `[lb, ub]`, both inclusive (YCSB `UniformLongGenerator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uniform {
    pub(super) lb: u64,
    pub(super) interval: u64,
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

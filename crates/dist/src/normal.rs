//! Truncated normals by Marsaglia's polar method, each bit-exact with the tool it
//! imitates (so not merged): memtier's Gaussian key chooser ([`TruncatedNormal`],
//! which keeps the second normal of each pair and truncates) and CacheBench's default
//! popularity ([`CacheBenchNormal`], which drops it and rounds).

use rand_core::RngCore;

use crate::next_f64;

/// memtier's Gaussian key chooser (`gaussian_noise::gaussian_distribution_range`):
/// normal draws by Marsaglia's polar method, redrawn while outside
/// `[min, max + 1]`, truncated to an integer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TruncatedNormal {
    min: u64,
    max: u64,
    stddev: f64,
    median: f64,
}

impl TruncatedNormal {
    /// A chooser over `[min, max]`. The caller guarantees `min < median < max` and a
    /// positive, finite `stddev`.
    pub fn new(min: u64, max: u64, stddev: f64, median: f64) -> TruncatedNormal {
        TruncatedNormal {
            min,
            max,
            stddev,
            median,
        }
    }

    /// The next key. The polar method makes normals in pairs: the second of a pair is
    /// kept in `spare` (one per client, as memtier keeps it in each generator).
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R, spare: &mut Option<f64>) -> u64 {
        if self.min == self.max {
            return self.min;
        }
        let (lo, hi) = (self.min as f64, self.max as f64 + 1.0);
        loop {
            let z = match spare.take() {
                Some(z) => z,
                None => {
                    let (u, v, s) = loop {
                        let u = next_f64(rng) * 2.0 - 1.0;
                        let v = next_f64(rng) * 2.0 - 1.0;
                        let s = u * u + v * v;
                        if s < 1.0 && s != 0.0 {
                            break (u, v, s);
                        }
                    };
                    let m = (-2.0 * s.ln() / s).sqrt();
                    *spare = Some(v * m);
                    u * m
                }
            };
            let val = self.stddev * z + self.median;
            if (lo..=hi).contains(&val) {
                return (val as u64).min(self.max);
            }
        }
    }
}

/// CacheBench's popularity when a config has no popularity buckets
/// (`cachebench/workload/FastDiscrete.h`, `NormalDistribution`): a normal with mean
/// (n−1)/2 and standard deviation (n−1)/4, rounded, redrawn while outside `0..n`.
#[derive(Clone, Debug)]
pub struct CacheBenchNormal {
    mean: f64,
    sd: f64,
    max: f64,
}

impl CacheBenchNormal {
    /// Ranks `0..n`, `n ≥ 1`.
    pub fn new(n: u64) -> CacheBenchNormal {
        let max = (n - 1) as f64;
        CacheBenchNormal {
            mean: max / 2.0,
            sd: max / 4.0,
            max,
        }
    }

    /// The next rank.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        loop {
            // Marsaglia's polar method; one of the pair is used.
            let (u, s) = loop {
                let u = 2.0 * next_f64(rng) - 1.0;
                let v = 2.0 * next_f64(rng) - 1.0;
                let s = u * u + v * v;
                if s > 0.0 && s < 1.0 {
                    break (u, s);
                }
            };
            let z = u * (-2.0 * s.ln() / s).sqrt();
            let x = (self.mean + self.sd * z).round();
            if (0.0..=self.max).contains(&x) {
                return x as u64;
            }
        }
    }
}

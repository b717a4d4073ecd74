//! [`KeyRanges`]: db_bench's key-range table (`GenerateTwoTermExpKeys` in RocksDB 7.8
//! `tools/db_bench_tool.cc`): `keyrange_num` equal ranges of keys, each given a share of
//! an integer interval `0..rand_max` by the two-term-exponential hotness
//! `a·e^{b·x} + c·e^{d·x}`, then shuffled.
//!
//! kvlab also builds the table over ranges of unequal sizes
//! ([`MixGraphConfig::keyrange_starts`]: one range per SST file of a database, the key
//! ranges "sized by the data" of the FAST'20 paper): the hotness and the shuffle are
//! db_bench's for that many ranges; only the keys each range holds differ.

use super::mt::Mt19937_64;
use super::ops::TWO_POW_63;
use super::{f64_to_i64_x86, MixGraphConfig, MixGraphError};

/// Key ranges sized by the data: a database's layout (one range per SST file of its last
/// non-empty level, the FAST'20 paper's choice), as the generator's explicit ranges
/// ([`MixGraphConfig::keyrange_starts`]) and the fitter's cuts take them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRangeLayout {
    /// Each range's first key number (a db_bench key's first 8 bytes big-endian),
    /// strictly increasing.
    pub starts: Vec<u64>,
    /// One past the largest key number the database holds (`num` when none is given).
    pub end: u64,
    /// Where the layout came from (`sst:DBPATH`), recorded in a fitted model.
    pub source: String,
}

/// The key-range table: per range (in shuffled order) its share of `0..rand_max`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRanges {
    /// Start of each range's share, in shuffled order (non-decreasing).
    starts: Vec<i64>,
    /// Size of each range's share (db_bench's `keyrange_access`), same order.
    accesses: Vec<i64>,
    /// Keys per range (`num / keyrange_num`).
    keys_per_range: i64,
    /// Explicit ranges: range `i` holds keys `bounds[i] .. bounds[i + 1]` (the last
    /// bound is `num`); `None` for db_bench's equal ranges.
    bounds: Option<Box<[u64]>>,
    /// Sum of all shares (db_bench's `keyrange_rand_max_`).
    rand_max: i64,
    /// The range of each value of `0..rand_max`, when there are at most
    /// [`KeyRanges::MAX_LOOKUP`] (the same answer as the binary search, without its
    /// mispredicted branches).
    lookup: Option<Box<[u32]>>,
}

impl KeyRanges {
    /// The largest `rand_max` with a lookup table (256 KiB of range ids).
    const MAX_LOOKUP: i64 = 1 << 16;

    /// The table `InitiateExpDistribution(num, a, b, c, d)` builds, step by step:
    ///
    /// 1. for `pfx = keyrange_num` down to 1, `p = a·e^{b·pfx} + c·e^{d·pfx}` (below
    ///    10⁻¹⁶: 0);
    /// 2. `amplify = ⌊1/p⌋ + 1` from the first non-zero `p` (so that range gets a share
    ///    of at least 1 — the others are scaled by the same factor and floored, RocksDB
    ///    issue #8355);
    /// 3. each range's share is `⌊amplify · p⌋`, laid out in that order;
    /// 4. shuffled by `mt19937_64(rand_max)`: for each `i` in order, swap `i` with
    ///    `next() % keyrange_num`;
    /// 5. starts recomputed in the shuffled order.
    ///
    /// Errors when no range has a share (every `p` below 10⁻¹⁶) or the shares overflow
    /// a signed 64-bit total (where db_bench's arithmetic is undefined).
    pub fn new(config: &MixGraphConfig) -> Result<KeyRanges, MixGraphError> {
        let n = config.keyrange_num.max(1);
        let (a, b, c, d) = (
            config.keyrange_dist_a,
            config.keyrange_dist_b,
            config.keyrange_dist_c,
            config.keyrange_dist_d,
        );
        let overflow = || {
            MixGraphError::flag(
                "keyrange_dist_a",
                a,
                "keyrange_dist_a..d whose scaled key-range shares sum below 2^63",
            )
        };
        let mut amplify: i64 = 0;
        let mut accesses = Vec::with_capacity(n as usize);
        let mut rand_max: i64 = 0;
        for pfx in (1..=n).rev() {
            let x = pfx as f64;
            let mut p = a * (b * x).exp() + c * (d * x).exp();
            if p < 1e-16 {
                p = 0.0;
            }
            if amplify == 0 && p > 0.0 {
                amplify = f64_to_i64_x86((1.0 / p).floor()) + 1;
            }
            let access = if p <= 0.0 {
                0
            } else {
                let scaled = (amplify as f64 * p).floor();
                if scaled >= TWO_POW_63 {
                    return Err(overflow());
                }
                scaled as i64
            };
            rand_max = rand_max.checked_add(access).ok_or_else(overflow)?;
            accesses.push(access);
        }
        if rand_max == 0 {
            return Err(MixGraphError::flag(
                "keyrange_dist_a",
                a,
                "keyrange_dist_a..d giving some key range a hotness of at least 1e-16",
            ));
        }
        let mut shuffle = Mt19937_64::new(rand_max as u64);
        for i in 0..accesses.len() {
            let pos = (shuffle.next_u64() % n as u64) as usize;
            accesses.swap(i, pos);
        }
        let mut starts = Vec::with_capacity(accesses.len());
        let mut offset = 0;
        for &access in &accesses {
            starts.push(offset);
            offset += access;
        }
        let lookup = (rand_max <= Self::MAX_LOOKUP).then(|| {
            let mut ids = Vec::with_capacity(rand_max as usize);
            for (id, &access) in accesses.iter().enumerate() {
                ids.extend(std::iter::repeat_n(id as u32, access as usize));
            }
            ids.into_boxed_slice()
        });
        let bounds = config.keyrange_starts.as_ref().map(|starts| {
            let mut b = starts.to_vec();
            b.push(config.num as u64);
            b.into_boxed_slice()
        });
        Ok(KeyRanges {
            starts,
            accesses,
            keys_per_range: config.num / n,
            bounds,
            rand_max,
            lookup,
        })
    }

    /// The range `ini_rand` falls in (db_bench's binary search in `DistGetKeyID`: the
    /// last range whose start is at most `ini_rand % rand_max`).
    #[inline]
    pub fn range_of(&self, ini_rand: i64) -> usize {
        let r = ini_rand % self.rand_max;
        match &self.lookup {
            Some(ids) => ids[r as usize] as usize,
            None => self.starts.partition_point(|&s| s <= r) - 1,
        }
    }

    /// Keys per range of equal ranges (`num / keyrange_num`; the last
    /// `num % keyrange_num` keys belong to no range and are never drawn). Explicit ranges
    /// ([`KeyRanges::is_explicit`]) have their own sizes: [`KeyRanges::span`].
    pub fn keys_per_range(&self) -> i64 {
        self.keys_per_range
    }

    /// Whether the ranges are explicit ([`MixGraphConfig::keyrange_starts`]) rather than
    /// db_bench's equal ones.
    pub fn is_explicit(&self) -> bool {
        self.bounds.is_some()
    }

    /// Range `i`'s first key number and its number of keys: `i·keys_per_range` and
    /// `keys_per_range` for equal ranges, `start_i` and `start_{i+1} − start_i` (the last
    /// range ending at `num`) for explicit ones.
    #[inline]
    pub fn span(&self, i: usize) -> (u64, u64) {
        match &self.bounds {
            None => {
                let size = self.keys_per_range as u64;
                (size * i as u64, size)
            }
            Some(b) => (b[i], b[i + 1] - b[i]),
        }
    }

    /// The largest range's number of keys.
    pub fn max_range_keys(&self) -> u64 {
        match &self.bounds {
            None => self.keys_per_range as u64,
            Some(b) => b.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0),
        }
    }

    /// Each range's share of draws, in range order (range `i` holds keys
    /// [`KeyRanges::span`]`(i)`): its access count over the total.
    pub fn probabilities(&self) -> Vec<f64> {
        self.accesses
            .iter()
            .map(|&a| a as f64 / self.rand_max as f64)
            .collect()
    }

    /// The total of the shares (db_bench's `keyrange_rand_max_`).
    pub fn rand_max(&self) -> i64 {
        self.rand_max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_floored_after_scaling_by_the_first_nonzero_range() {
        // p(3) = e^-3 ≈ 0.0498 sets amplify = ⌊20.09⌋ + 1 = 21; shares ⌊21·p⌋ = 1, 2, 7.
        let c = MixGraphConfig {
            num: 300,
            keyrange_num: 3,
            keyrange_dist_a: 1.0,
            keyrange_dist_b: -1.0,
            ..MixGraphConfig::default()
        };
        let r = KeyRanges::new(&c).expect("valid");
        assert_eq!(r.rand_max(), 10);
        assert_eq!(r.keys_per_range(), 100);
        let mut p = r.probabilities();
        p.sort_by(f64::total_cmp);
        assert_eq!(p, [0.1, 0.2, 0.7]);
        // Every draw lands in a range whose share covers it.
        let mut hits = [0u32; 3];
        for d in 0..10 {
            hits[r.range_of(d)] += 1;
        }
        let shares: Vec<u32> = r
            .probabilities()
            .iter()
            .map(|q| (q * 10.0).round() as u32)
            .collect();
        assert_eq!(hits.to_vec(), shares);
    }

    #[test]
    fn lookup_is_the_binary_search() {
        let c = MixGraphConfig::zippydb_example();
        let r = KeyRanges::new(&c).expect("valid");
        assert!(r.lookup.is_some());
        let searched = KeyRanges {
            lookup: None,
            ..r.clone()
        };
        for d in 0..10 * r.rand_max() {
            assert_eq!(r.range_of(d), searched.range_of(d), "{d}");
        }
    }
}

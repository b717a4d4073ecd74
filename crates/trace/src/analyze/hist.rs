//! Histograms the analysis keeps: [`ValueHist`] (sizes, scan lengths: exact while few
//! distinct values are seen) and [`Log2Hist`] (distances and times on powers of two).

use super::IdMap;

/// Distinct values a [`ValueHist`] keeps exactly before it rounds them.
const EXACT_LIMIT: usize = 4096;

/// Values below this are never rounded.
const ROUND_FROM: u64 = 1024;

/// Sub-buckets per power of two once values are rounded: 1/128 relative precision.
const SUB_BITS: u32 = 7;

/// Counts of values (sizes in bytes, scan lengths): exact while at most 4096 distinct
/// values have been seen — so libCacheSim's exact `object_size: req_cnt` table of a block
/// trace can be compared value for value — then each value from 1024 up is rounded down
/// to 8 significant bits (under 1 % error), which bounds the table at a few thousand
/// entries whatever the trace holds. Count, sum, min and max stay exact.
#[derive(Clone, Debug, Default)]
pub struct ValueHist {
    counts: IdMap<u64>,
    rounded: bool,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// The rounded value of `v` (see [`ValueHist`]).
fn round(v: u64) -> u64 {
    if v < ROUND_FROM {
        return v;
    }
    let shift = (63 - v.leading_zeros()) - SUB_BITS;
    (v >> shift) << shift
}

impl ValueHist {
    /// Counts one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Counts `n` occurrences of one value (a sampled object standing for `n` objects).
    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.count += n;
        self.sum += u128::from(v) * u128::from(n);
        let key = if self.rounded { round(v) } else { v };
        *self.counts.entry(key).or_insert(0) += n;
        if !self.rounded && self.counts.len() > EXACT_LIMIT {
            self.rounded = true;
            let exact = std::mem::take(&mut self.counts);
            for (v, n) in exact {
                *self.counts.entry(round(v)).or_insert(0) += n;
            }
        }
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Heap bytes held (about: the table's entries).
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * 17
    }

    /// Mean value (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest value.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Whether values were rounded (more than 4096 distinct ones were seen).
    pub fn is_rounded(&self) -> bool {
        self.rounded
    }

    /// `(value, count)` by increasing value; rounded values are their bucket's floor.
    pub fn sorted(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.counts.iter().map(|(&k, &n)| (k, n)).collect();
        v.sort_unstable();
        v
    }

    /// The smallest recorded value (bucket floor once rounded) at or below which a
    /// fraction `q` of the values lie.
    pub fn quantile(&self, q: f64) -> u64 {
        let target = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (v, n) in self.sorted() {
            seen += n;
            if seen >= target {
                return v;
            }
        }
        self.max
    }
}

/// Counts on powers of two: bucket 0 holds the value 0, bucket `k ≥ 1` the values in
/// `[2^(k-1), 2^k)`. So "value < 2^k" is exactly buckets `0..=k`, which makes the
/// histogram of LRU stack distances an exact LRU hit ratio at every cache size 2^k.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log2Hist {
    /// Counts per bucket (65 buckets cover every u64).
    pub buckets: Vec<u64>,
}

impl Default for Log2Hist {
    fn default() -> Self {
        Log2Hist {
            buckets: vec![0; 65],
        }
    }
}

impl Log2Hist {
    /// The bucket of `v`.
    #[inline]
    pub fn bucket(v: u64) -> usize {
        (64 - v.leading_zeros()) as usize
    }

    /// The values `[lo, hi)` of bucket `b`.
    pub fn bounds(b: usize) -> (u64, u64) {
        match b {
            0 => (0, 1),
            64 => (1 << 63, u64::MAX),
            _ => (1 << (b - 1), 1 << b),
        }
    }

    /// Counts one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.buckets[Self::bucket(v)] += 1;
    }

    /// Counts `n` occurrences of one value (a sampled request standing for `n`).
    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        self.buckets[Self::bucket(v)] += n;
    }

    /// Values counted.
    pub fn total(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The last bucket holding a value, plus one (0 when empty).
    pub fn used(&self) -> usize {
        self.buckets
            .iter()
            .rposition(|&n| n > 0)
            .map_or(0, |b| b + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_until_many_values_then_rounded_within_one_percent() {
        let mut h = ValueHist::default();
        for v in [5, 5, 512, 4096] {
            h.record(v);
        }
        assert_eq!(h.sorted(), vec![(5, 2), (512, 1), (4096, 1)]);
        assert!(!h.is_rounded());
        for v in 0..10_000u64 {
            h.record(v * 7919);
        }
        assert!(h.is_rounded());
        assert!(h.sorted().len() < 2 * EXACT_LIMIT);
        assert_eq!(h.count(), 10_004);
        assert_eq!(h.max(), 9_999 * 7919);
        for (v, _) in h.sorted() {
            assert_eq!(round(v), v, "a rounded value is its own floor");
        }
        for v in [1024u64, 5000, 123_456_789, u64::MAX] {
            let r = round(v);
            assert!(r <= v && (v - r) as f64 <= v as f64 / 128.0, "{v} -> {r}");
        }
    }

    #[test]
    fn log2_buckets_split_at_powers_of_two() {
        assert_eq!(Log2Hist::bucket(0), 0);
        assert_eq!(Log2Hist::bucket(1), 1);
        assert_eq!(Log2Hist::bucket(2), 2);
        assert_eq!(Log2Hist::bucket(3), 2);
        assert_eq!(Log2Hist::bucket(4), 3);
        assert_eq!(Log2Hist::bucket(u64::MAX), 64);
        for b in 1..64 {
            let (lo, hi) = Log2Hist::bounds(b);
            assert_eq!(Log2Hist::bucket(lo), b);
            assert_eq!(Log2Hist::bucket(hi - 1), b);
            assert_eq!(Log2Hist::bucket(hi), b + 1);
        }
    }
}

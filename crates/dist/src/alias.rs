//! Walker's alias table: O(1) draws from a discrete distribution.

/// Walker's alias table (Vose's construction, "A linear algorithm for generating random
/// numbers with a given distribution", IEEE TSE 1991): one 64-bit random word `x` picks
/// an entry in O(1) — `x · columns / 2⁶⁴` the column, the high 32 bits of the
/// fraction the coin (so every column is equally likely to within 2⁻⁶⁴ · columns).
#[derive(Clone, Debug)]
pub struct Alias {
    /// Per column: the coin below which the column itself is taken, in units of 2⁻³²,
    /// and the column's alias — side by side, so a draw reads one cache line.
    columns: Vec<(u32, u32)>,
}

impl Alias {
    /// The caller guarantees: `weights` is non-empty, has at most `u32::MAX` entries,
    /// every weight is finite and ≥ 0, and their sum is positive.
    pub fn new(weights: &[f64]) -> Alias {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut threshold = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            threshold[s] = (scaled[s] * 4_294_967_296.0).min(u32::MAX as f64) as u32;
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // What is left has (up to rounding) probability 1: keeps itself.
        Alias {
            columns: threshold.into_iter().zip(alias).collect(),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Never: a table has at least one entry.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The entry for the random word `x`.
    #[inline]
    pub fn sample(&self, x: u64) -> usize {
        let wide = u128::from(x) * self.columns.len() as u128;
        let i = (wide >> 64) as usize;
        let coin = ((wide as u64) >> 32) as u32;
        let (threshold, alias) = self.columns[i];
        if coin < threshold {
            i
        } else {
            alias as usize
        }
    }
}

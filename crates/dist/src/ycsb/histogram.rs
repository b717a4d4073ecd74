//! YCSB's `HistogramGenerator`.

use super::*;

/// Sizes drawn from a histogram of block counts (YCSB `HistogramGenerator`, used for
/// `fieldlengthdistribution=histogram`).
///
/// File format (tab-separated, as YCSB): a first line `BlockSize<TAB>n`, then one line
/// `bucket<TAB>count` per bucket, buckets numbered from 0 in order. YCSB's draw is
/// reproduced exactly, quirks included: `number = uniform[0, area)`; for each bucket
/// `i` but the last, `number -= count[i]` and return `(i + 1) · blocksize` once
/// `number <= 0`; otherwise return `(len − 1) · blocksize`.
#[derive(Clone, Debug)]
pub struct Histogram {
    pub(super) block_size: u64,
    /// Cumulative counts of every bucket but the last.
    pub(super) cumulative: Vec<u64>,
    pub(super) buckets: u64,
    pub(super) area: u64,
}

impl Histogram {
    /// A histogram from bucket counts and a block size. The caller guarantees at least
    /// one bucket and a nonzero total count.
    pub fn new(buckets: &[u64], block_size: u64) -> Histogram {
        let mut cumulative = Vec::with_capacity(buckets.len());
        let mut area = 0u64;
        for (i, &count) in buckets.iter().enumerate() {
            area += count;
            if i + 1 < buckets.len() {
                cumulative.push(area);
            }
        }
        Histogram {
            block_size,
            cumulative,
            buckets: buckets.len() as u64,
            area,
        }
    }

    /// Parses YCSB's histogram file text. Errors are `(line number, message)`.
    pub fn parse(text: &str) -> Result<Histogram, (usize, String)> {
        let mut lines = text.lines().enumerate();
        let block_size = match lines.next() {
            Some((_, first)) => {
                let mut parts = first.split('\t');
                if parts.next().map(str::trim) != Some("BlockSize") {
                    return Err((1, "the first line must be `BlockSize<TAB>n`".into()));
                }
                parse_count(parts.next()).ok_or((1, "BlockSize needs an integer".to_string()))?
            }
            None => return Err((1, "empty histogram file".into())),
        };
        let mut buckets = Vec::new();
        let mut total = 0u64;
        for (i, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let mut parts = line.split('\t');
            let (Some(bucket), Some(count)) =
                (parse_count(parts.next()), parse_count(parts.next()))
            else {
                return Err((i + 1, "expected `bucket<TAB>count` (two integers)".into()));
            };
            if bucket != buckets.len() as u64 {
                return Err((
                    i + 1,
                    format!("expected bucket {} next, found {bucket}", buckets.len()),
                ));
            }
            total = total.checked_add(count).ok_or_else(|| {
                (
                    i + 1,
                    "expected counts that add up to at most 2^64 - 1".to_string(),
                )
            })?;
            if bucket.max(1).checked_mul(block_size).is_none() {
                return Err((
                    i + 1,
                    format!("bucket {bucket} of BlockSize {block_size} is past 2^64 - 1 bytes"),
                ));
            }
            buckets.push(count);
        }
        if total == 0 {
            return Err((1, "the histogram has no counts".into()));
        }
        Ok(Histogram::new(&buckets, block_size))
    }

    /// The largest value the histogram can return.
    pub fn max_value(&self) -> u64 {
        self.buckets.saturating_sub(1).max(1) * self.block_size
    }

    /// The next value.
    #[inline]
    pub fn next<R: RngCore>(&self, rng: &mut R) -> u64 {
        let number = next_below(rng, self.area);
        // First bucket i (not the last) whose cumulative count reaches `number`.
        let i = self.cumulative.partition_point(|&c| c < number);
        if i < self.cumulative.len() {
            (i as u64 + 1) * self.block_size
        } else {
            (self.buckets - 1) * self.block_size
        }
    }
}

pub(crate) fn parse_count(s: Option<&str>) -> Option<u64> {
    s?.trim().parse().ok()
}

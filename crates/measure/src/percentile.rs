//! The value at a percentile, by Java HdrHistogram's rank rule (2.2.2,
//! `AbstractHistogram.getValueAtPercentile`), so that a percentile in `result.json`, the
//! YCSB text report and `timeline.csv` is the one Java's `HistogramLogProcessor` reads
//! from the same `latency.hlog`.
//!
//! The rule: take one ulp off the percentile (`Math.nextAfter(p, -∞)`, so that a
//! percentile whose count lands exactly on a whole number is not pushed into the next
//! bucket by rounding), clamp it to 0..100, count `ceil(p × total / 100)` values (at
//! least 1), and return the highest value equivalent to the bucket where that count is
//! reached (the lowest for percentile 0). HdrHistogram_rust's `value_at_percentile`
//! computes `ceil(p / 100 × total)` without the ulp, which lands one bucket higher where
//! `p / 100 × total` rounds up past a whole number (99.9 % of 1000 values: 999.0000000000001
//! → the 1000th value).

use hdrhistogram::Histogram;

/// The value at `percentile` (0–100) of `h`, as Java HdrHistogram's
/// `getValueAtPercentile` returns it; 0 for an empty histogram.
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    let requested = next_down(percentile).clamp(0.0, 100.0);
    let fp_count = (requested * h.len() as f64) / 100.0;
    let count = (fp_count.ceil() as u64).max(1);
    let mut total = 0u64;
    for v in h.iter_recorded() {
        total += v.count_since_last_iteration();
        if total >= count {
            let value = v.value_iterated_to();
            return if percentile == 0.0 {
                h.lowest_equivalent(value)
            } else {
                h.highest_equivalent(value)
            };
        }
    }
    0
}

/// Java's `Math.nextAfter(x, Double.NEGATIVE_INFINITY)`: the next double toward −∞.
fn next_down(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        x
    } else if x == 0.0 {
        -f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() - 1)
    } else {
        f64::from_bits(x.to_bits() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_ranks_stay_in_their_bucket() {
        // 1000 values 1..=1000 µs in ns: 99.9 % is the 999th value. HdrHistogram_rust's
        // rule (99.9 / 100 × 1000 = 999.0000000000001, ceil 1000) takes the 1000th.
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        assert_eq!(value_at_percentile(&h, 99.9), h.highest_equivalent(999_000));
        assert_eq!(h.value_at_percentile(99.9), h.highest_equivalent(1_000_000));
        assert_eq!(value_at_percentile(&h, 50.0), h.highest_equivalent(500_000));
        assert_eq!(
            value_at_percentile(&h, 100.0),
            h.highest_equivalent(1_000_000)
        );
        assert_eq!(value_at_percentile(&h, 0.0), h.lowest_equivalent(1000));
        assert_eq!(
            value_at_percentile(&Histogram::<u64>::new(3).unwrap(), 50.0),
            0
        );
    }

    #[test]
    fn next_down_is_one_ulp_toward_minus_infinity() {
        assert!(next_down(99.9) < 99.9);
        assert_eq!(next_down(99.9).to_bits() + 1, 99.9f64.to_bits());
        assert!(next_down(0.0) < 0.0);
        assert_eq!(next_down(-1.0).to_bits(), (-1.0f64).to_bits() + 1);
    }
}

//! HdrHistogram's text outputs for one histogram: the percentile distribution
//! ([`write_percentile_distribution`], HdrHistogram_c's `hdr_percentiles_print`) and a
//! one-histogram log ([`write_histogram_log`], `hdr_log_write_header` + `hdr_log_write`),
//! as memtier_benchmark writes them for `--hdr-file-prefix`.

use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::MeasureError;

/// The layout of a percentile distribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PercentileFormat {
    /// Fixed-width columns and a `#[Mean …]` footer (HdrHistogram's `.hgrm` text, what
    /// `HistogramLogProcessor` and the online plotter read).
    Classic,
    /// Comma-separated columns, no footer.
    Csv,
}

/// Writes `h`'s percentile distribution as HdrHistogram_c's `hdr_percentiles_print`
/// does: a header, one line per reporting step (`Value Percentile TotalCount
/// 1/(1-Percentile)`), the last at percentile 1.0, and for [`PercentileFormat::Classic`]
/// the mean, standard deviation, maximum, total count, buckets and sub-buckets.
///
/// Values are divided by `value_scale` (1e6 turns nanoseconds into milliseconds) and
/// printed with as many decimals as `h` has significant digits; the lines are
/// [`percentile_steps`].
pub fn write_percentile_distribution<W: Write>(
    h: &Histogram<u64>,
    ticks_per_half_distance: u32,
    value_scale: f64,
    format: PercentileFormat,
    out: &mut W,
) -> io::Result<()> {
    let digits = usize::from(h.sigfig());
    let line = |out: &mut W, value: u64, percentile: f64, count: u64| {
        let value = value as f64 / value_scale;
        let p = percentile / 100.0;
        let inverted = 1.0 / (1.0 - p);
        match format {
            PercentileFormat::Classic => writeln!(
                out,
                "{value:12.digits$} {p:12.6} {count:12} {inverted:12.2}"
            ),
            PercentileFormat::Csv => writeln!(out, "{value:.digits$},{p:.6},{count},{inverted:.2}"),
        }
    };
    let names = ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"];
    match format {
        PercentileFormat::Classic => writeln!(
            out,
            "{:>12} {:>12} {:>12} {:>12}\n",
            names[0], names[1], names[2], names[3]
        )?,
        PercentileFormat::Csv => writeln!(out, "{}", names.join(","))?,
    }
    for step in percentile_steps(h, ticks_per_half_distance) {
        line(out, step.value, step.percentile, step.total_count)?;
    }
    let total = h.len();
    if format == PercentileFormat::Classic {
        let (mean, stdev, max) = if total == 0 {
            (0.0, 0.0, 0.0)
        } else {
            (h.mean(), h.stdev(), h.max() as f64)
        };
        writeln!(
            out,
            "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
            mean / value_scale,
            stdev / value_scale
        )?;
        writeln!(
            out,
            "#[Max     = {:12.3}, Total count    = {total:12}]",
            max / value_scale
        )?;
        writeln!(
            out,
            "#[Buckets = {:12}, SubBuckets     = {:12}]",
            h.buckets(),
            sub_bucket_count(h.sigfig())
        )?;
    }
    Ok(())
}

/// One line of a percentile distribution ([`percentile_steps`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PercentileStep {
    /// The highest value equivalent to the bucket the step stopped at, in the
    /// histogram's unit.
    pub value: u64,
    /// The step's percentile, 0 to 100.
    pub percentile: f64,
    /// Values recorded up to and including that bucket.
    pub total_count: u64,
}

/// The steps of HdrHistogram_c's percentile iterator (`hdr_iter_percentile_init` +
/// `percentile_iter_next`): starting at 0 %, `ticks_per_half_distance` steps per halving
/// of the distance to 100 %, each reported at the first bucket whose cumulative count
/// reaches it; then one step at 100 % for the last bucket. An empty histogram has that
/// last step only, at value 0.
pub fn percentile_steps(h: &Histogram<u64>, ticks_per_half_distance: u32) -> Vec<PercentileStep> {
    let mut steps = Vec::new();
    let total = h.len();
    let ticks = i64::from(ticks_per_half_distance.max(1));
    let mut percentile_to = 0.0f64;
    let mut cumulative = 0u64;
    let mut value = 0u64;
    'buckets: for v in h.iter_all() {
        if cumulative >= total {
            break;
        }
        let count = v.count_at_value();
        cumulative += count;
        value = v.value_iterated_to();
        if count == 0 {
            continue;
        }
        while percentile_to <= 100.0 * cumulative as f64 / total as f64 {
            steps.push(PercentileStep {
                value,
                percentile: percentile_to,
                total_count: cumulative,
            });
            // The reporting step halves each time the distance to 100 % does.
            let halvings = ((100.0 / (100.0 - percentile_to)).ln() / 2f64.ln()) as i64 + 1;
            let half_distance = 2f64.powf(halvings as f64) as i64;
            percentile_to += 100.0 / (ticks * half_distance) as f64;
            if cumulative >= total {
                break 'buckets;
            }
        }
    }
    steps.push(PercentileStep {
        value,
        percentile: 100.0,
        total_count: cumulative,
    });
    steps
}

/// HdrHistogram's sub-bucket count for `sigfig` significant digits: the power of two
/// that holds `2 × 10^sigfig` (2048 for 3 digits).
fn sub_bucket_count(sigfig: u8) -> u64 {
    let single_unit_resolution = 2 * 10u64.pow(u32::from(sigfig));
    single_unit_resolution.next_power_of_two()
}

/// Writes a histogram log holding the one histogram `h`, recorded from `start` to `end`,
/// as HdrHistogram_c's `hdr_log_write_header` and `hdr_log_write` do (log format 1.2):
///
/// ```text
/// #[COMMENT]
/// #[Histogram log format version 1.2]
/// #[StartTime: 1763779618.123 (seconds since epoch), Sun Nov 02:46:58 GMT 2025]
/// "StartTimestamp","EndTimestamp","Interval_Max","Interval_Compressed_Histogram"
/// 1763779618.123,1763779628.456,1234.0,HISTFAAA…
/// ```
///
/// The timestamps are seconds since the epoch, the maximum is in `h`'s unit, and the
/// histogram is V2 deflate-compressed and base64-encoded. The date in the header is C's
/// `strftime("%a %b %X %Z %Y")` of the start in UTC, without the day of the month, as
/// HdrHistogram_c prints it.
pub fn write_histogram_log<W: Write>(
    out: &mut W,
    comment: &str,
    start: SystemTime,
    end: SystemTime,
    h: &Histogram<u64>,
) -> Result<(), MeasureError> {
    let mut compressed = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut compressed)?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&compressed);
    let (start_s, end_s) = (epoch_secs(start), epoch_secs(end));
    let max = if h.is_empty() { 0 } else { h.max() };
    write!(
        out,
        "#[{comment}]\n\
         #[Histogram log format version 1.2]\n\
         #[StartTime: {start_s:.3} (seconds since epoch), {}]\n\
         \"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n\
         {start_s:.3},{end_s:.3},{max}.0,{encoded}\n",
        c_date_utc(start)
    )?;
    Ok(())
}

fn epoch_secs(t: SystemTime) -> f64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// C's `strftime(buf, n, "%a %b %X %Z %Y", gmtime(t))` in the C locale: `Sun Nov 02:46:58
/// GMT 2025`.
fn c_date_utc(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    };
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (year, month) = year_month(days);
    format!(
        "{} {} {:02}:{:02}:{:02} GMT {year}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[month as usize - 1],
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The year and month (1–12) of a day counted from 1970-01-01 — Howard Hinnant's
/// `civil_from_days` (<https://howardhinnant.github.io/date_algorithms.html>).
fn year_month(days: i64) -> (i64, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn histogram(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn classic_distribution_matches_hdrhistogram_c() {
        // 1..=100 recorded once each: HdrHistogram_c's hdr_percentiles_print(h, f, 5, 1.0,
        // CLASSIC) prints these lines (steps of 10 %, then 5 %, 2.5 %, …).
        let h = histogram(1..=100);
        let mut out = Vec::new();
        write_percentile_distribution(&h, 5, 1.0, PercentileFormat::Classic, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value   Percentile   TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert_eq!(
            lines[2],
            "       1.000     0.000000            1         1.00"
        );
        assert_eq!(
            lines[3],
            "      10.000     0.100000           10         1.11"
        );
        assert_eq!(
            lines[4],
            "      20.000     0.200000           20         1.25"
        );
        let body: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| !l.starts_with('#'))
            .collect();
        assert_eq!(
            *body.last().unwrap(),
            "     100.000     1.000000          100          inf"
        );
        assert!(text.contains("#[Mean    =       50.500, StdDeviation   =       28.866]"));
        assert!(text.contains("#[Max     =      100.000, Total count    =          100]"));
        assert!(text.contains("SubBuckets     =         2048]"));
    }

    #[test]
    fn the_distribution_reads_back_as_the_histograms_percentiles() {
        let h = histogram((1..=5000u64).map(|i| i * 977));
        let mut out = Vec::new();
        write_percentile_distribution(&h, 10, 1e6, PercentileFormat::Csv, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut last = (0.0, 0.0);
        for row in text.lines().skip(1) {
            let cols: Vec<f64> = row.split(',').map(|c| c.parse().unwrap()).collect();
            assert!(cols[1] >= last.1 && cols[0] >= last.0, "{row}");
            // Each row's value is the histogram's value at that quantile (in ms, 3 decimals).
            let q = cols[1].min(1.0);
            let expected = h.value_at_quantile(q) as f64 / 1e6;
            assert!((cols[0] - expected).abs() < 0.0015, "{row} vs {expected}");
            last = (cols[0], cols[1]);
        }
        assert_eq!(last.1, 1.0);
    }

    #[test]
    fn log_has_hdrhistogram_cs_header_and_one_histogram() {
        let h = histogram([100, 200, 300]);
        let start = UNIX_EPOCH + Duration::from_millis(1_763_779_618_123);
        let end = start + Duration::from_secs(10);
        let mut out = Vec::new();
        write_histogram_log(&mut out, "GET command", start, end, &h).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "#[GET command]");
        assert_eq!(lines[1], "#[Histogram log format version 1.2]");
        assert_eq!(
            lines[2],
            "#[StartTime: 1763779618.123 (seconds since epoch), Sat Nov 02:46:58 GMT 2025]"
        );
        assert!(lines[4].starts_with("1763779618.123,1763779628.123,300.0,HISTF"));
        // hdrhistogram's own reader takes the log back.
        let mut deserializer = hdrhistogram::serialization::Deserializer::new();
        let encoded = lines[4].rsplit(',').next().unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        let back: Histogram<u64> = deserializer.deserialize(&mut &bytes[..]).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn c_dates() {
        assert_eq!(c_date_utc(UNIX_EPOCH), "Thu Jan 00:00:00 GMT 1970");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(c_date_utc(leap), "Tue Feb 00:00:00 GMT 2000");
    }
}

//! [`RunSummary`] and the YCSB text report.

use std::collections::BTreeMap;
use std::io::{self, Write};

use hdrhistogram::Histogram;
use kvlab_core::Status;
use serde::{Deserialize, Serialize};

/// The results of one run: throughput, latency per operation kind, statuses, errors and
/// bytes. Produced by [`crate::Recorder::summary`]; serialized into the result document and
/// printed by [`write_ycsb_text`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// Wall-clock length of the measured phase, in milliseconds.
    pub runtime_ms: f64,
    /// Operations completed, each read-modify-write counted once.
    pub operations: u64,
    /// `operations` divided by the runtime.
    pub throughput_ops_per_sec: f64,
    /// Service-time latency of every store operation (read-modify-write excluded, its
    /// halves included); `None` when nothing was recorded.
    pub overall: Option<LatencySummary>,
    /// One entry per operation kind with at least one operation, in report order.
    pub ops: Vec<OpSummary>,
    /// Latency from the intended start time (`Intended-READ`, …), only for kinds that
    /// recorded it (open-loop runs).
    pub intended: Vec<OpSummary>,
    /// Error counts by [`kvlab_core::StoreErrorKind::name`]; kinds that did not occur are
    /// left out.
    pub errors: BTreeMap<String, u64>,
    /// Payload bytes read from the store.
    pub bytes_read: u64,
    /// Payload bytes written to the store: the key and value (field names and values) of
    /// every write, and the key and operand of every merge.
    pub bytes_written: u64,
}

/// The results of one operation kind (or its intended-start-time measurement).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct OpSummary {
    /// YCSB's name for the measurement: `READ`, `READ-MODIFY-WRITE`, `Intended-READ`, ….
    pub name: String,
    /// Operations recorded, every status.
    pub operations: u64,
    /// Operations by status (`OK`, `NOT_FOUND`, `ERROR`); statuses that did not occur are
    /// left out, and intended-time entries have none.
    pub returns: BTreeMap<String, u64>,
    /// Failed attempts that were sent again (YCSB's `core_workload_insertion_retry_limit`):
    /// not operations, not in `returns` or the latency — each retried operation is
    /// recorded once, with its last attempt. Left out of the document when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u64,
    /// The latency distribution.
    pub latency: LatencySummary,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A latency distribution in microseconds (recorded in nanoseconds, so fractional).
///
/// Values are HDR histogram values at 3 significant digits: min is the lowest value
/// equivalent to the smallest recorded, max and percentiles the highest equivalent value —
/// the same conventions as YCSB's HdrHistogram measurement.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LatencySummary {
    /// Mean.
    pub avg_us: f64,
    /// Minimum.
    pub min_us: f64,
    /// Maximum.
    pub max_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// 99.99th percentile.
    pub p9999_us: f64,
}

pub(crate) fn ns_to_us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

impl LatencySummary {
    /// Summarizes a histogram of nanoseconds. An empty histogram gives all zeros.
    pub fn from_histogram(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary {
                avg_us: 0.0,
                min_us: 0.0,
                max_us: 0.0,
                p50_us: 0.0,
                p90_us: 0.0,
                p95_us: 0.0,
                p99_us: 0.0,
                p999_us: 0.0,
                p9999_us: 0.0,
            };
        }
        // Java HdrHistogram's rank rule: the figures HistogramLogProcessor reads from the
        // same latency.hlog.
        let p = |percentile: f64| ns_to_us(crate::percentile::value_at_percentile(h, percentile));
        LatencySummary {
            // Rounded to whole nanoseconds: finer digits are noise (HDR keeps 3 significant
            // digits) and would print as e.g. 37.183519999999994.
            avg_us: h.mean().round() / 1000.0,
            min_us: ns_to_us(h.min()),
            max_us: ns_to_us(h.max()),
            p50_us: p(50.0),
            p90_us: p(90.0),
            p95_us: p(95.0),
            p99_us: p(99.0),
            p999_us: p(99.9),
            p9999_us: p(99.99),
        }
    }
}

/// Formats a double as Java's `Double.toString` does (which YCSB's text exporter uses):
/// the shortest digits that round-trip, at least one digit after the point, and
/// computerized scientific notation (`1.0E7`) outside `[1e-3, 1e7)`.
pub(crate) fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let abs = d.abs();
    if (1e-3..1e7).contains(&abs) {
        let s = format!("{d}");
        if s.contains('.') {
            s
        } else {
            s + ".0"
        }
    } else {
        // Rust's `{:e}` gives "1.2345e7" / "1e-4"; Java writes "1.2345E7" / "1.0E-4".
        let s = format!("{d:e}");
        let (mantissa, exponent) = s.split_once('e').expect("{:e} output has an exponent");
        if mantissa.contains('.') {
            format!("{mantissa}E{exponent}")
        } else {
            format!("{mantissa}.0E{exponent}")
        }
    }
}

/// Whole microseconds, as YCSB prints them: YCSB records `(int) (ns / 1000)`, so fractions
/// are truncated.
fn whole_us(us: f64) -> u64 {
    us.floor() as u64
}

/// Writes one measurement section (`[READ], Operations, …` through `Return=…`).
fn write_op(out: &mut impl Write, op: &OpSummary) -> io::Result<()> {
    let name = &op.name;
    let lat = &op.latency;
    writeln!(out, "[{name}], Operations, {}", op.operations)?;
    writeln!(
        out,
        "[{name}], AverageLatency(us), {}",
        java_double(lat.avg_us)
    )?;
    writeln!(out, "[{name}], MinLatency(us), {}", whole_us(lat.min_us))?;
    writeln!(out, "[{name}], MaxLatency(us), {}", whole_us(lat.max_us))?;
    // YCSB's `ordinal()` appends "th" to whole percentiles only: 99.9 prints as
    // "99.9PercentileLatency(us)" (OneMeasurementHdrHistogram.java).
    for (label, us) in [
        ("50th", lat.p50_us),
        ("90th", lat.p90_us),
        ("95th", lat.p95_us),
        ("99th", lat.p99_us),
        ("99.9", lat.p999_us),
        ("99.99", lat.p9999_us),
    ] {
        writeln!(
            out,
            "[{name}], {label}PercentileLatency(us), {}",
            whole_us(us)
        )?;
    }
    // Known statuses in YCSB's order, then anything else (a document from a newer kvlab).
    for status in Status::ALL {
        if let Some(n) = op.returns.get(status.ycsb_name()) {
            writeln!(out, "[{name}], Return={}, {n}", status.ycsb_name())?;
        }
    }
    for (status, n) in &op.returns {
        if !Status::ALL.iter().any(|s| s.ycsb_name() == status) {
            writeln!(out, "[{name}], Return={status}, {n}")?;
        }
    }
    if op.retries > 0 {
        writeln!(out, "[{name}], Retries, {}", op.retries)?;
    }
    Ok(())
}

/// Writes `summary` in the text format of YCSB's `TextMeasurementsExporter` with HdrHistogram
/// measurements, so that scripts that parse YCSB output parse kvlab's:
///
/// ```text
/// [OVERALL], RunTime(ms), 10001
/// [OVERALL], Throughput(ops/sec), 1234.5
/// [READ], Operations, 500
/// [READ], AverageLatency(us), 12.3
/// [READ], MinLatency(us), 3
/// [READ], MaxLatency(us), 900
/// [READ], 50thPercentileLatency(us), 10
/// [READ], 90thPercentileLatency(us), 14
/// [READ], 95thPercentileLatency(us), 17
/// [READ], 99thPercentileLatency(us), 40
/// [READ], 99.9PercentileLatency(us), 200
/// [READ], 99.99PercentileLatency(us), 900
/// [READ], Return=OK, 480
/// [READ], Return=NOT_FOUND, 20
/// [Intended-READ], Operations, 500
/// …
/// [ERRORS], connection, 3
/// [OVERALL], BytesRead, 512000
/// [OVERALL], BytesWritten, 0
/// ```
///
/// Numbers follow YCSB: run time, min, max and percentiles as whole (truncated)
/// microseconds, average and throughput as Java prints a `double`. The `[ERRORS]` and byte
/// lines, and `[INSERT], Retries, N` (failed attempts sent again, printed when there were
/// any), are kvlab additions.
///
/// Unlike YCSB, failed and not-found operations are in their kind's latency histogram
/// rather than a separate `READ-FAILED` measurement; `Return=` counts are the same.
pub fn write_ycsb_text(summary: &RunSummary, out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "[OVERALL], RunTime(ms), {}",
        summary.runtime_ms.round() as u64
    )?;
    writeln!(
        out,
        "[OVERALL], Throughput(ops/sec), {}",
        java_double(summary.throughput_ops_per_sec)
    )?;
    for op in summary.ops.iter().chain(&summary.intended) {
        write_op(out, op)?;
    }
    for (kind, n) in &summary.errors {
        writeln!(out, "[ERRORS], {kind}, {n}")?;
    }
    writeln!(out, "[OVERALL], BytesRead, {}", summary.bytes_read)?;
    writeln!(out, "[OVERALL], BytesWritten, {}", summary.bytes_written)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use kvlab_core::{OpKind, StoreErrorKind};

    use super::*;
    use crate::Recorder;

    #[test]
    fn doubles_print_as_java_does() {
        for (d, java) in [
            (1234.5, "1234.5"),
            (5.0, "5.0"),
            (0.0, "0.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (12.345678, "12.345678"),
            (1e7, "1.0E7"),
            (12345678.9, "1.23456789E7"),
            (9999999.0, "9999999.0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(java_double(d), java, "{d}");
        }
    }

    #[test]
    fn retries_are_counted_apart_from_operations_merged_and_printed() {
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        a.record(OpKind::Insert, Status::Ok, 1_000);
        a.record_retry(OpKind::Insert);
        b.record(OpKind::Insert, Status::Error, 2_000);
        b.record_retry(OpKind::Insert);
        b.record_retry(OpKind::Insert);
        b.record(OpKind::Read, Status::Ok, 1_000);
        a.merge(&b);
        assert_eq!(a.retries(OpKind::Insert), 3);
        assert_eq!(a.retries(OpKind::Read), 0);
        assert_eq!(a.operations(), 3, "retries are not operations");
        let summary = a.summary(Duration::from_secs(1));
        let insert = summary.ops.iter().find(|o| o.name == "INSERT").unwrap();
        assert_eq!((insert.operations, insert.retries), (2, 3));
        let mut text = Vec::new();
        write_ycsb_text(&summary, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("[INSERT], Return=ERROR, 1\n[INSERT], Retries, 3\n"),
            "{text}"
        );
        assert!(!text.contains("[READ], Retries"), "{text}");
        let json = serde_json::to_string(&summary).unwrap();
        assert_eq!(
            json.matches("\"retries\"").count(),
            1,
            "only where non-zero: {json}"
        );
        let back: RunSummary = serde_json::from_str(&json).unwrap();
        assert_eq!(back, summary);
        a.reset();
        assert_eq!(a.retries(OpKind::Insert), 0);
    }

    /// Golden test: exact bytes for a fixed recorder. Latencies below 2048 ns are exact in
    /// the histogram; above, HDR buckets widen (900 000 ns lies in 899 584..=900 095, so the
    /// max prints as 900 µs and the mean uses the bucket's middle, 899 840 ns).
    #[test]
    fn ycsb_text_golden() {
        let mut r = Recorder::new();
        for i in 0..480u64 {
            r.record(OpKind::Read, Status::Ok, 1_000 + i);
        }
        for _ in 0..20 {
            r.record(OpKind::Read, Status::NotFound, 900_000);
        }
        r.record(OpKind::Update, Status::Ok, 5_000);
        r.record(OpKind::Update, Status::Error, 2_000_000);
        r.record_intended(OpKind::Update, 7_000);
        r.record_error(StoreErrorKind::Connection);
        r.record_error(StoreErrorKind::Connection);
        r.record_error(StoreErrorKind::Timeout);
        r.add_bytes(512_000, 2_048);
        let summary = r.summary(Duration::from_micros(10_001_000));
        let mut out = Vec::new();
        write_ycsb_text(&summary, &mut out).unwrap();
        let expected = "\
[OVERALL], RunTime(ms), 10001
[OVERALL], Throughput(ops/sec), 50.19498050194981
[READ], Operations, 500
[READ], AverageLatency(us), 37.184
[READ], MinLatency(us), 1
[READ], MaxLatency(us), 900
[READ], 50thPercentileLatency(us), 1
[READ], 90thPercentileLatency(us), 1
[READ], 95thPercentileLatency(us), 1
[READ], 99thPercentileLatency(us), 900
[READ], 99.9PercentileLatency(us), 900
[READ], 99.99PercentileLatency(us), 900
[READ], Return=OK, 480
[READ], Return=NOT_FOUND, 20
[UPDATE], Operations, 2
[UPDATE], AverageLatency(us), 1002.693
[UPDATE], MinLatency(us), 5
[UPDATE], MaxLatency(us), 2000
[UPDATE], 50thPercentileLatency(us), 5
[UPDATE], 90thPercentileLatency(us), 2000
[UPDATE], 95thPercentileLatency(us), 2000
[UPDATE], 99thPercentileLatency(us), 2000
[UPDATE], 99.9PercentileLatency(us), 2000
[UPDATE], 99.99PercentileLatency(us), 2000
[UPDATE], Return=OK, 1
[UPDATE], Return=ERROR, 1
[Intended-UPDATE], Operations, 1
[Intended-UPDATE], AverageLatency(us), 7.002
[Intended-UPDATE], MinLatency(us), 7
[Intended-UPDATE], MaxLatency(us), 7
[Intended-UPDATE], 50thPercentileLatency(us), 7
[Intended-UPDATE], 90thPercentileLatency(us), 7
[Intended-UPDATE], 95thPercentileLatency(us), 7
[Intended-UPDATE], 99thPercentileLatency(us), 7
[Intended-UPDATE], 99.9PercentileLatency(us), 7
[Intended-UPDATE], 99.99PercentileLatency(us), 7
[ERRORS], connection, 2
[ERRORS], timeout, 1
[OVERALL], BytesRead, 512000
[OVERALL], BytesWritten, 2048
";
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }
}

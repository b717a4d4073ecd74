//! Live metrics of a phase in Prometheus' text exposition format (version 0.0.4), for a
//! scraper to follow a run while it happens: what `/metrics` serves under `--metrics`.
//!
//! [`LiveMetrics`] reads the phase's intervals as they close ([`LiveMetrics::interval`])
//! and renders ([`LiveMetrics::render`]):
//!
//! | metric | type | labels | what |
//! |---|---|---|---|
//! | `kvlab_info` | gauge (1) | `phase`, `store`, `workload`, `version` | what runs |
//! | `kvlab_operations_total` | counter | `op`, `status` | measured operations (warm-up excluded), as YCSB's `Return=` counts |
//! | `kvlab_errors_total` | counter | `kind` | failed operations by error kind (`results.errors` in `result.json`) |
//! | `kvlab_retries_total` | counter | `op` | failed attempts sent again (YCSB's insertion retries) |
//! | `kvlab_latency_seconds` | histogram | `op` | service time of the measured operations, in the buckets of [`LATENCY_BUCKETS_S`] |
//! | `kvlab_intended_latency_seconds` | histogram | `op` | time from each request's intended start (open loop only) |
//! | `kvlab_read_bytes_total`, `kvlab_written_bytes_total` | counter | | payload bytes read and written |
//! | `kvlab_interval_operations_per_second` | gauge | | throughput of the last interval (warm-up included) |
//! | `kvlab_interval_latency_seconds` | summary | `op`, `quantile` | the last interval's exact HDR quantiles (0.5, 0.9, 0.99, 0.999, 1); `_sum` and `_count` those of the measured operations so far |
//! | `kvlab_elapsed_seconds` | gauge | | time since the measured part started (negative in warm-up) |
//! | `kvlab_warmup` | gauge | | 1 while warming up |
//! | `kvlab_expected_operations` | gauge | | operations the measured part will run, when known |
//! | `kvlab_store_unreachable_seconds` | gauge | | time the store could not be reached so far |
//!
//! The counters and histograms are those of the measured part so far, updated once an
//! interval (`--interval`), so a scrape sees the state at the last interval's end; a new
//! run in the same process (memtier's `-x`) starts them again from zero, which Prometheus
//! reads as a counter reset. Bucket counts are the HDR histogram's, to its precision
//! (three significant digits: a latency within 0.1 % of a bucket's bound may fall on
//! either side of it); `_sum` is the histogram's mean times its count.

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use kvlab_core::{OpKind, Status, StoreErrorKind};

use crate::Recorder;

/// The upper bounds (seconds) of the latency histograms' buckets, `+Inf` besides: 100 ns
/// to 10 s, three per decade (1, 2.5, 5), for in-process stores that answer in hundreds
/// of nanoseconds (a moka or null read: starting at 5 µs put nearly every read in the
/// first bucket, where `histogram_quantile` says nothing), servers that answer in
/// microseconds and servers that stall.
pub const LATENCY_BUCKETS_S: [f64; 25] = [
    0.000_000_1,
    0.000_000_25,
    0.000_000_5,
    0.000_001,
    0.000_002_5,
    0.000_005,
    0.000_01,
    0.000_025,
    0.000_05,
    0.000_1,
    0.000_25,
    0.000_5,
    0.001,
    0.002_5,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
];

/// The quantiles of the last interval's latency ([`LiveMetrics`]'s
/// `kvlab_interval_latency_seconds`).
pub const INTERVAL_QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

/// What a phase is, for `kvlab_info`'s labels.
#[derive(Debug, Clone, Default)]
pub struct RunLabels {
    /// `load`, `run`, `verify`.
    pub phase: String,
    /// The store's name in results (`--label`, else the `--db` kind).
    pub store: String,
    /// The workload's name in results.
    pub workload: String,
}

/// The last interval, as the gauges show it.
#[derive(Debug, Clone, Default)]
struct LastInterval {
    rate: f64,
    /// Per op kind with operations: the quantiles' values in seconds.
    quantiles: Vec<(OpKind, [f64; INTERVAL_QUANTILES.len()])>,
}

/// A phase's metrics so far, fed interval by interval and rendered on demand.
#[derive(Debug)]
pub struct LiveMetrics {
    labels: RunLabels,
    total: Recorder,
    last: LastInterval,
    elapsed_s: f64,
    warmup: bool,
    expected: Option<u64>,
    unreachable_s: f64,
}

impl LiveMetrics {
    /// Nothing measured yet.
    pub fn new(labels: RunLabels) -> LiveMetrics {
        LiveMetrics {
            labels,
            total: Recorder::new(),
            last: LastInterval::default(),
            elapsed_s: 0.0,
            warmup: false,
            expected: None,
            unreachable_s: 0.0,
        }
    }

    /// Reads one closed interval: `recorder` holds what completed in it, `time_s` is its
    /// end in seconds since the measured part started (negative in warm-up). A warm-up
    /// interval sets the gauges but adds nothing to the counters.
    pub fn interval(
        &mut self,
        time_s: f64,
        interval_s: f64,
        recorder: &Recorder,
        warmup: bool,
        expected: Option<u64>,
    ) {
        self.elapsed_s = time_s;
        self.warmup = warmup;
        self.expected = expected;
        self.last.rate = if interval_s > 0.0 {
            recorder.operations() as f64 / interval_s
        } else {
            0.0
        };
        self.last.quantiles.clear();
        for kind in OpKind::ALL {
            let h = recorder.histogram(kind);
            if h.is_empty() {
                continue;
            }
            // Java HdrHistogram's rank rule, as result.json's percentiles (q × 100 is exact
            // for these quantiles).
            let q = INTERVAL_QUANTILES
                .map(|q| crate::percentile::value_at_percentile(h, q * 100.0) as f64 / 1e9);
            self.last.quantiles.push((kind, q));
        }
        if !warmup {
            self.total.merge(recorder);
        }
    }

    /// Sets the time the store could not be reached so far.
    pub fn set_unreachable_s(&mut self, seconds: f64) {
        self.unreachable_s = seconds;
    }

    /// Everything measured so far (the sum of the measured intervals).
    pub fn total(&self) -> &Recorder {
        &self.total
    }

    /// Appends the exposition to `out`.
    pub fn render(&self, out: &mut String) {
        let t = &self.total;
        header(
            out,
            "kvlab_info",
            "gauge",
            "What runs: phase, store, workload, kvlab's version.",
        );
        let _ = writeln!(
            out,
            "kvlab_info{{phase=\"{}\",store=\"{}\",workload=\"{}\",version=\"{}\"}} 1",
            escape(&self.labels.phase),
            escape(&self.labels.store),
            escape(&self.labels.workload),
            env!("CARGO_PKG_VERSION")
        );

        header(
            out,
            "kvlab_operations_total",
            "counter",
            "Measured operations by kind and how they ended (warm-up excluded).",
        );
        for kind in OpKind::ALL {
            if t.count(kind) == 0 && t.retries(kind) == 0 {
                continue;
            }
            for status in Status::ALL {
                let _ = writeln!(
                    out,
                    "kvlab_operations_total{{op=\"{}\",status=\"{}\"}} {}",
                    op_label(kind),
                    status_label(status),
                    t.status_count(kind, status)
                );
            }
        }

        header(
            out,
            "kvlab_errors_total",
            "counter",
            "Failed operations by error kind.",
        );
        for kind in StoreErrorKind::ALL {
            let _ = writeln!(
                out,
                "kvlab_errors_total{{kind=\"{}\"}} {}",
                kind.name(),
                t.error_count(kind)
            );
        }

        header(
            out,
            "kvlab_retries_total",
            "counter",
            "Failed attempts that were sent again (YCSB's insertion retries).",
        );
        for kind in OpKind::ALL {
            if t.retries(kind) > 0 || t.count(kind) > 0 {
                let _ = writeln!(
                    out,
                    "kvlab_retries_total{{op=\"{}\"}} {}",
                    op_label(kind),
                    t.retries(kind)
                );
            }
        }

        header(
            out,
            "kvlab_latency_seconds",
            "histogram",
            "Service time of the measured operations (send to completion).",
        );
        for kind in OpKind::ALL {
            let h = t.histogram(kind);
            if !h.is_empty() {
                histogram(out, "kvlab_latency_seconds", kind, h);
            }
        }
        if OpKind::ALL
            .iter()
            .any(|&k| !t.intended_histogram(k).is_empty())
        {
            header(
                out,
                "kvlab_intended_latency_seconds",
                "histogram",
                "Time from each measured operation's intended start to its completion (open loop).",
            );
            for kind in OpKind::ALL {
                let h = t.intended_histogram(kind);
                if !h.is_empty() {
                    histogram(out, "kvlab_intended_latency_seconds", kind, h);
                }
            }
        }

        header(
            out,
            "kvlab_read_bytes_total",
            "counter",
            "Payload bytes read from the store.",
        );
        let _ = writeln!(out, "kvlab_read_bytes_total {}", t.bytes_read());
        header(
            out,
            "kvlab_written_bytes_total",
            "counter",
            "Payload bytes written to the store.",
        );
        let _ = writeln!(out, "kvlab_written_bytes_total {}", t.bytes_written());

        header(
            out,
            "kvlab_interval_operations_per_second",
            "gauge",
            "Throughput of the last interval (warm-up included).",
        );
        let _ = writeln!(
            out,
            "kvlab_interval_operations_per_second {}",
            float(self.last.rate)
        );
        header(
            out,
            "kvlab_interval_latency_seconds",
            "summary",
            "Service-time quantiles of the last interval (exact HDR quantiles; 1 is the \
             maximum); _sum and _count those of the measured operations so far.",
        );
        for (kind, values) in &self.last.quantiles {
            let op = op_label(*kind);
            for (q, v) in INTERVAL_QUANTILES.iter().zip(values) {
                let _ = writeln!(
                    out,
                    "kvlab_interval_latency_seconds{{op=\"{op}\",quantile=\"{}\"}} {}",
                    float(*q),
                    float(*v)
                );
            }
            let h = t.histogram(*kind);
            let _ = writeln!(
                out,
                "kvlab_interval_latency_seconds_sum{{op=\"{op}\"}} {}",
                float(sum_s(h))
            );
            let _ = writeln!(
                out,
                "kvlab_interval_latency_seconds_count{{op=\"{op}\"}} {}",
                h.len()
            );
        }

        header(
            out,
            "kvlab_elapsed_seconds",
            "gauge",
            "Seconds since the measured part started (negative while warming up).",
        );
        let _ = writeln!(out, "kvlab_elapsed_seconds {}", float(self.elapsed_s));
        header(out, "kvlab_warmup", "gauge", "1 while warming up, else 0.");
        let _ = writeln!(out, "kvlab_warmup {}", u8::from(self.warmup));
        if let Some(n) = self.expected {
            header(
                out,
                "kvlab_expected_operations",
                "gauge",
                "Operations the measured part runs in all.",
            );
            let _ = writeln!(out, "kvlab_expected_operations {n}");
        }
        header(
            out,
            "kvlab_store_unreachable_seconds",
            "gauge",
            "Seconds of the run so far in which the store could not be reached.",
        );
        let _ = writeln!(
            out,
            "kvlab_store_unreachable_seconds {}",
            float(self.unreachable_s)
        );
    }
}

/// `# HELP` and `# TYPE` lines.
fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One histogram's cumulative buckets, `_sum` and `_count`.
fn histogram(out: &mut String, name: &str, kind: OpKind, h: &Histogram<u64>) {
    let op = op_label(kind);
    let bounds_ns = LATENCY_BUCKETS_S.map(|s| (s * 1e9).round() as u64);
    let mut counts = [0u64; LATENCY_BUCKETS_S.len()];
    for v in h.iter_recorded() {
        let value = v.value_iterated_to();
        if let Some(i) = bounds_ns.iter().position(|&b| value <= b) {
            counts[i] += v.count_at_value();
        }
    }
    let mut cumulative = 0;
    for (bound, n) in LATENCY_BUCKETS_S.iter().zip(counts) {
        cumulative += n;
        let _ = writeln!(
            out,
            "{name}_bucket{{op=\"{op}\",le=\"{}\"}} {cumulative}",
            float(*bound)
        );
    }
    let _ = writeln!(out, "{name}_bucket{{op=\"{op}\",le=\"+Inf\"}} {}", h.len());
    let _ = writeln!(out, "{name}_sum{{op=\"{op}\"}} {}", float(sum_s(h)));
    let _ = writeln!(out, "{name}_count{{op=\"{op}\"}} {}", h.len());
}

/// A histogram's sum in seconds: its mean (of HDR's median-equivalent values) times its
/// count.
fn sum_s(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        0.0
    } else {
        h.mean() * h.len() as f64 / 1e9
    }
}

/// An op kind as a label value: YCSB's name in lower case (`read`, `read-modify-write`).
fn op_label(kind: OpKind) -> &'static str {
    kind.label()
}

/// A status as a label value: `ok`, `not_found`, `error`.
fn status_label(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::NotFound => "not_found",
        Status::Error => "error",
    }
}

/// A sample value as Prometheus reads it (`+Inf`, `-Inf`, `NaN` by name).
fn float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
            .parse()
            .unwrap()
    }

    /// Counters add the measured intervals and leave warm-up out; buckets are cumulative
    /// and end at the count; the gauges are the last interval's.
    #[test]
    fn counters_add_the_measured_intervals_and_buckets_are_cumulative() {
        let mut m = LiveMetrics::new(RunLabels {
            phase: "run".into(),
            store: "redis \"a\"".into(),
            workload: "workloada".into(),
        });
        let mut warm = Recorder::new();
        warm.record(OpKind::Read, Status::Ok, 7_000);
        m.interval(-1.0, 1.0, &warm, true, Some(4));
        let mut r = Recorder::new();
        // 150 ns, 3 µs, 20 µs, 2 ms reads (one not found); one 40 ms update that failed.
        r.record(OpKind::Read, Status::Ok, 150);
        r.record(OpKind::Read, Status::Ok, 3_000);
        r.record(OpKind::Read, Status::NotFound, 20_000);
        r.record(OpKind::Read, Status::Ok, 2_000_000);
        r.record(OpKind::Update, Status::Error, 40_000_000);
        r.record_error(StoreErrorKind::Timeout);
        r.add_bytes(300, 100);
        m.interval(0.5, 0.5, &r, false, Some(4));
        m.set_unreachable_s(0.25);
        let mut text = String::new();
        m.render(&mut text);

        assert!(text.contains("store=\"redis \\\"a\\\"\""), "{text}");
        assert_eq!(
            sample(&text, "kvlab_operations_total{op=\"read\",status=\"ok\"}"),
            3.0
        );
        assert_eq!(
            sample(
                &text,
                "kvlab_operations_total{op=\"read\",status=\"not_found\"}"
            ),
            1.0
        );
        assert_eq!(
            sample(
                &text,
                "kvlab_operations_total{op=\"update\",status=\"error\"}"
            ),
            1.0
        );
        assert!(!text.contains("op=\"insert\""), "{text}");
        assert_eq!(sample(&text, "kvlab_errors_total{kind=\"timeout\"}"), 1.0);
        let bucket = |le: &str| {
            sample(
                &text,
                &format!("kvlab_latency_seconds_bucket{{op=\"read\",le=\"{le}\"}}"),
            )
        };
        // The first bucket is 100 ns; in-process reads of a few hundred ns spread over
        // the first ones.
        assert_eq!(bucket("0.0000001"), 0.0);
        assert_eq!(bucket("0.00000025"), 1.0);
        assert_eq!(bucket("0.0000025"), 1.0);
        assert_eq!(bucket("0.000005"), 2.0);
        assert_eq!(bucket("0.00001"), 2.0);
        assert_eq!(bucket("0.000025"), 3.0);
        assert_eq!(bucket("0.001"), 3.0);
        assert_eq!(bucket("0.0025"), 4.0);
        assert_eq!(bucket("+Inf"), 4.0);
        assert!(text.contains("le=\"0.0000001\"}"), "{text}");
        assert_eq!(
            sample(&text, "kvlab_latency_seconds_count{op=\"read\"}"),
            4.0
        );
        let sum = sample(&text, "kvlab_latency_seconds_sum{op=\"read\"}");
        assert!((sum - 0.002_023_15).abs() < 0.000_005, "{sum}");
        assert_eq!(sample(&text, "kvlab_read_bytes_total"), 300.0);
        assert_eq!(sample(&text, "kvlab_written_bytes_total"), 100.0);
        assert_eq!(sample(&text, "kvlab_interval_operations_per_second"), 10.0);
        let max = sample(
            &text,
            "kvlab_interval_latency_seconds{op=\"update\",quantile=\"1\"}",
        );
        assert!((max - 0.04).abs() < 0.000_1, "{max}");
        assert_eq!(sample(&text, "kvlab_warmup"), 0.0);
        assert_eq!(sample(&text, "kvlab_expected_operations"), 4.0);
        assert_eq!(sample(&text, "kvlab_store_unreachable_seconds"), 0.25);
        assert!(!text.contains("kvlab_intended_latency_seconds"), "{text}");
        // Every sample line belongs to a metric declared before it.
        let mut declared = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                declared.push(rest.split(' ').next().unwrap().to_string());
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap();
                assert!(
                    declared.iter().any(|d| name == d
                        || ["_bucket", "_sum", "_count"]
                            .iter()
                            .any(|s| name.strip_suffix(s) == Some(d))),
                    "{line}"
                );
            }
        }
    }
}

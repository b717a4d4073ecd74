//! memtier_benchmark's output for `kvlab memtier`: the `ALL STATS` table, the request
//! latency distribution, and a JSON document in the spirit of `--json-out-file` (run
//! totals per command type with percentiles, and a per-second `Time-Serie`).
//!
//! SETs are kvlab's INSERT requests and GETs its READs; a GET that finds nothing is a
//! miss. As in memtier, a multi-key GET (`--multi-key-get`) is one operation — one
//! request in Ops/sec and one latency, from sending the command to its last reply —
//! whose keys count one by one in Hits/sec and Misses/sec (the run's per-key counts,
//! [`RunOutcome::keys_hit`]). Latencies are in milliseconds and throughput in KB/s (1024
//! bytes), as memtier prints them.

use std::io::Write;
use std::path::PathBuf;

use hdrhistogram::Histogram;
use kvlab_core::{OpKind, Status};
use kvlab_measure::Recorder;
use kvlab_runner::RunOutcome;
use serde_json::{json, Map, Value};

use crate::memtier_args::MemtierArgs;

/// What the memtier output should contain.
#[derive(Clone, Debug)]
pub struct Options {
    percentiles: Vec<f64>,
    hide_histogram: bool,
    json_out: Option<PathBuf>,
    out_file: Option<PathBuf>,
}

impl Options {
    /// The output flags of a memtier command line.
    pub fn from_args(a: &MemtierArgs) -> Options {
        Options {
            percentiles: a.percentiles(),
            hide_histogram: a.hide_histogram,
            json_out: a.json_out_file.clone(),
            out_file: a.out_file.clone(),
        }
    }

    /// `--out-file`, where the text report goes instead of stdout.
    pub fn out_file(&self) -> Option<&PathBuf> {
        self.out_file.as_ref()
    }

    /// `--json-out-file`.
    pub fn json_out(&self) -> Option<&PathBuf> {
        self.json_out.as_ref()
    }
}

/// memtier's command types and the kvlab kinds they are.
const TYPES: [(&str, OpKind); 2] = [("Sets", OpKind::Insert), ("Gets", OpKind::Read)];

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// memtier's name for a percentile: `p50.00`, `p99.90`.
fn percentile_key(p: f64) -> String {
    format!("p{p:.2}")
}

/// memtier's column header: `p50 Latency`, `p99.9 Latency`.
fn percentile_header(p: f64) -> String {
    let text = format!("{p}");
    format!("p{text} Latency")
}

/// One command type's figures over a span of time.
struct Figures {
    count: u64,
    ops_per_sec: f64,
    hits_per_sec: Option<f64>,
    misses_per_sec: Option<f64>,
    avg_ms: Option<f64>,
    min_ms: Option<f64>,
    max_ms: Option<f64>,
    percentiles_ms: Vec<Option<f64>>,
    kb_per_sec: f64,
}

fn figures(
    histogram: &Histogram<u64>,
    hits: Option<u64>,
    misses: Option<u64>,
    bytes: u64,
    secs: f64,
    percentiles: &[f64],
) -> Figures {
    let count = histogram.len();
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let some = count > 0;
    Figures {
        count,
        ops_per_sec: rate(count),
        hits_per_sec: hits.map(rate),
        misses_per_sec: misses.map(rate),
        avg_ms: some.then(|| histogram.mean() / 1e6),
        min_ms: some.then(|| ms(histogram.min())),
        max_ms: some.then(|| ms(histogram.max())),
        percentiles_ms: percentiles
            .iter()
            .map(|&p| some.then(|| ms(histogram.value_at_quantile(p / 100.0))))
            .collect(),
        kb_per_sec: rate(bytes) / 1024.0,
    }
}

/// The figures of every type and the totals, from `recorder` over `secs` seconds. GET
/// hits and misses are `keys` (counted per key) when given, else the recorder's
/// per-request counts.
fn all(
    recorder: &Recorder,
    keys: Option<(u64, u64)>,
    secs: f64,
    percentiles: &[f64],
) -> Vec<(&'static str, Figures)> {
    let mut out = Vec::new();
    let mut total = Histogram::<u64>::new(3).expect("3 significant digits is valid");
    let (hits, misses) = keys.unwrap_or_else(|| {
        (
            recorder.status_count(OpKind::Read, Status::Ok),
            recorder.status_count(OpKind::Read, Status::NotFound),
        )
    });
    for (name, kind) in TYPES {
        let h = recorder.histogram(kind);
        total
            .add(h)
            .expect("histograms of one recorder are compatible");
        let (hit, miss, bytes) = if kind == OpKind::Read {
            (Some(hits), Some(misses), recorder.bytes_read())
        } else {
            (None, None, recorder.bytes_written())
        };
        out.push((name, figures(h, hit, miss, bytes, secs, percentiles)));
    }
    let bytes = recorder.bytes_read() + recorder.bytes_written();
    out.push((
        "Totals",
        figures(&total, Some(hits), Some(misses), bytes, secs, percentiles),
    ));
    out
}

/// Prints the `ALL STATS` table of a run and, unless hidden, the latency distribution.
pub fn print(opts: &Options, run: &RunOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    let recorder = &run.total;
    let secs = run.elapsed.as_secs_f64();
    let p = &opts.percentiles;
    let width = 13 + 13 * 3 + 16 * (1 + p.len()) + 13;
    writeln!(out)?;
    writeln!(out)?;
    writeln!(out, "ALL STATS")?;
    writeln!(out, "{}", "=".repeat(width))?;
    write!(
        out,
        "{:<6}{:>13}{:>13}{:>13}{:>16}",
        "Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency"
    )?;
    for &q in p {
        write!(out, "{:>16}", percentile_header(q))?;
    }
    writeln!(out, "{:>13} ", "KB/sec")?;
    writeln!(out, "{}", "-".repeat(width))?;
    let dash = |v: Option<f64>, w: usize, prec: usize| match v {
        Some(v) => format!("{v:>w$.prec$}"),
        None => format!("{:>w$}", "---"),
    };
    let rows = all(recorder, Some((run.keys_hit, run.keys_missed)), secs, p);
    for (i, (name, f)) in rows.iter().enumerate() {
        if i == TYPES.len() {
            // memtier's WAIT row: kvlab sends no WAIT commands.
            write!(
                out,
                "{:<6}{:>13.2}{:>13}{:>13}{:>16}",
                "Waits", 0.0, "---", "---", "---"
            )?;
            for _ in p {
                write!(out, "{:>16}", "---")?;
            }
            writeln!(out, "{:>13} ", "---")?;
        }
        write!(
            out,
            "{:<6}{:>13.2}{}{}{}",
            name,
            f.ops_per_sec,
            dash(f.hits_per_sec, 13, 2),
            dash(f.misses_per_sec, 13, 2),
            dash(f.avg_ms, 16, 5)
        )?;
        for v in &f.percentiles_ms {
            write!(out, "{}", dash(*v, 16, 5))?;
        }
        writeln!(out, "{:>13.2} ", f.kb_per_sec)?;
    }
    if !opts.hide_histogram {
        writeln!(out)?;
        writeln!(out)?;
        writeln!(out, "Request Latency Distribution")?;
        writeln!(out, "{:<6}{:>12}{:>16}", "Type", "<= msec", "Percent")?;
        writeln!(out, "{}", "-".repeat(72))?;
        for (label, kind) in [("SET", OpKind::Insert), ("GET", OpKind::Read)] {
            let h = recorder.histogram(kind);
            if h.is_empty() {
                continue;
            }
            let total = h.len() as f64;
            let mut seen = 0u64;
            for v in h.iter_recorded() {
                seen += v.count_at_value();
                writeln!(
                    out,
                    "{:<6}{:>12.3}{:>16.3}",
                    label,
                    ms(h.highest_equivalent(v.value_iterated_to())),
                    100.0 * seen as f64 / total
                )?;
            }
            writeln!(out, "---")?;
        }
    }
    Ok(())
}

fn figures_json(f: &Figures, percentiles: &[f64]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("Count".into(), json!(f.count));
    m.insert("Ops/sec".into(), json!(f.ops_per_sec));
    m.insert("Hits/sec".into(), json!(f.hits_per_sec.unwrap_or(0.0)));
    m.insert("Misses/sec".into(), json!(f.misses_per_sec.unwrap_or(0.0)));
    m.insert("Latency".into(), json!(f.avg_ms.unwrap_or(0.0)));
    m.insert("Average Latency".into(), json!(f.avg_ms.unwrap_or(0.0)));
    m.insert("Min Latency".into(), json!(f.min_ms.unwrap_or(0.0)));
    m.insert("Max Latency".into(), json!(f.max_ms.unwrap_or(0.0)));
    m.insert("KB/sec".into(), json!(f.kb_per_sec));
    let mut pm = Map::new();
    for (q, v) in percentiles.iter().zip(&f.percentiles_ms) {
        pm.insert(percentile_key(*q), json!(v.unwrap_or(0.0)));
    }
    m.insert("Percentile Latencies".into(), Value::Object(pm));
    m
}

/// One second (reporting interval) of a run, for the JSON `Time-Serie`.
pub struct Second {
    figures: Vec<(&'static str, Figures)>,
}

impl Second {
    /// The figures of one interval's recorder.
    pub fn from_interval(opts: &Options, recorder: &Recorder, interval_s: f64) -> Second {
        Second {
            figures: all(recorder, None, interval_s, &opts.percentiles),
        }
    }
}

/// The JSON document: configuration, run information and `ALL STATS` of `run` with a
/// per-second series for each type.
pub fn json_document(
    opts: &Options,
    configuration: Vec<(String, String)>,
    run_information: Map<String, Value>,
    run: &RunOutcome,
    seconds: &[Second],
) -> Value {
    let p = &opts.percentiles;
    let mut stats = Map::new();
    let keys = Some((run.keys_hit, run.keys_missed));
    for (i, (name, f)) in all(&run.total, keys, run.elapsed.as_secs_f64(), p)
        .into_iter()
        .enumerate()
    {
        let mut m = figures_json(&f, p);
        let mut series = Map::new();
        for (t, s) in seconds.iter().enumerate() {
            let f = &s.figures[i].1;
            let mut point = Map::new();
            point.insert("Count".into(), json!(f.count));
            point.insert("Average Latency".into(), json!(f.avg_ms.unwrap_or(0.0)));
            point.insert("Min Latency".into(), json!(f.min_ms.unwrap_or(0.0)));
            point.insert("Max Latency".into(), json!(f.max_ms.unwrap_or(0.0)));
            for (q, v) in p.iter().zip(&f.percentiles_ms) {
                point.insert(percentile_key(*q), json!(v.unwrap_or(0.0)));
            }
            series.insert(t.to_string(), Value::Object(point));
        }
        m.insert("Time-Serie".into(), Value::Object(series));
        stats.insert(name.to_string(), Value::Object(m));
    }
    json!({
        "configuration": configuration
            .into_iter()
            .map(|(k, v)| (k, Value::from(v)))
            .collect::<Map<String, Value>>(),
        "run information": run_information,
        "ALL STATS": stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn recorder() -> Recorder {
        let mut r = Recorder::new();
        for i in 1..=100u64 {
            r.record(OpKind::Read, Status::Ok, i * 10_000);
        }
        for _ in 0..50 {
            r.record(OpKind::Read, Status::NotFound, 5_000);
        }
        r.record(OpKind::Insert, Status::Ok, 1_000_000);
        r.add_bytes(2048, 1024);
        r
    }

    /// A run of [`recorder`]'s requests over `secs`, whose reads found `keys_hit` keys
    /// and missed `keys_missed`.
    fn run(secs: u64, keys_hit: u64, keys_missed: u64) -> RunOutcome {
        RunOutcome {
            total: recorder(),
            elapsed: Duration::from_secs(secs),
            interrupted: false,
            error_budget_exceeded: false,
            fell_behind: false,
            max_schedule_lag_ms: 0.0,
            integrity_checked: 0,
            integrity_failed: 0,
            groups: Vec::new(),
            keys_hit,
            keys_missed,
        }
    }

    fn opts(hide: bool) -> Options {
        Options {
            percentiles: vec![50.0, 99.0, 99.9],
            hide_histogram: hide,
            json_out: None,
            out_file: None,
        }
    }

    #[test]
    fn the_table_has_memtier_columns_and_rates() {
        let mut out = Vec::new();
        print(&opts(true), &run(2, 100, 50), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("p99.9 Latency"), "{text}");
        let gets = text.lines().find(|l| l.starts_with("Gets")).unwrap();
        let cols: Vec<&str> = gets.split_whitespace().collect();
        // 150 gets over 2 s; 100 hits, 50 misses.
        assert_eq!(&cols[1..4], ["75.00", "50.00", "25.00"], "{gets}");
        let sets = text.lines().find(|l| l.starts_with("Sets")).unwrap();
        assert!(sets.contains("---"), "{sets}");
        assert!(text.contains("Waits"));
        assert!(!text.contains("Request Latency Distribution"));
        let mut out = Vec::new();
        print(&opts(false), &run(2, 100, 50), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let last_get = text.lines().rfind(|l| l.starts_with("GET")).unwrap();
        assert!(last_get.ends_with("100.000"), "{last_get}");
    }

    #[test]
    fn multi_key_gets_count_requests_as_operations_and_keys_as_hits_and_misses() {
        // The same 150 GET requests, which read 400 keys: 300 found, 100 not.
        let mut out = Vec::new();
        print(&opts(true), &run(2, 300, 100), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let gets = text.lines().find(|l| l.starts_with("Gets")).unwrap();
        let cols: Vec<&str> = gets.split_whitespace().collect();
        assert_eq!(&cols[1..4], ["75.00", "150.00", "50.00"], "{gets}");
        let doc = json_document(&opts(true), Vec::new(), Map::new(), &run(2, 300, 100), &[]);
        let gets = &doc["ALL STATS"]["Gets"];
        assert_eq!(
            (&gets["Count"], &gets["Hits/sec"], &gets["Misses/sec"]),
            (&json!(150), &json!(150.0), &json!(50.0))
        );
    }

    #[test]
    fn json_has_totals_percentiles_and_a_series() {
        let r = recorder();
        let second = Second::from_interval(&opts(true), &r, 1.0);
        let doc = json_document(
            &opts(true),
            vec![("ratio".into(), "1:10".into())],
            Map::new(),
            &run(1, 100, 50),
            &[second],
        );
        let gets = &doc["ALL STATS"]["Gets"];
        assert_eq!(gets["Count"], json!(150));
        assert_eq!(gets["Hits/sec"], json!(100.0));
        assert!(gets["Percentile Latencies"]["p99.90"].as_f64().unwrap() > 0.9);
        assert_eq!(gets["Time-Serie"]["0"]["Count"], json!(150));
        assert_eq!(doc["ALL STATS"]["Totals"]["Count"], json!(151));
        assert_eq!(doc["configuration"]["ratio"], json!("1:10"));
    }
}

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
//!
//! With `--wait-ratio` a `Waits` row has the WAITs (kvlab's command id 0). With
//! `--command` the rows are the commands instead — one per command name, memtier's
//! `Sets`, `Gets`, `Hsets` (see [`crate::row_name`]) — from the
//! recorder's per-command histograms, then `Totals`; their Hits/sec and Misses/sec are
//! `---` (0 in the JSON).
//!
//! With `-x/--run-count N` (N > 1) the report has memtier's three sections instead of
//! `ALL STATS`: `BEST RUN RESULTS` and `WORST RUN RESULTS` (the runs with the highest and
//! lowest total requests per second; on a tie the earlier run) and `AGGREGATED AVERAGE
//! RESULTS (N runs)`, whose rates and average latencies are the means of the runs',
//! whose counts are their sums, and whose percentiles come from the runs' merged
//! histograms.

use std::io::Write;
use std::path::PathBuf;

use hdrhistogram::Histogram;
use kvlab_core::{CommandId, OpKind, Status};
use kvlab_measure::Recorder;
use kvlab_runner::RunOutcome;
use serde_json::{json, Map, Value};

use crate::args::MemtierArgs;

/// What the memtier output should contain.
#[derive(Clone, Debug)]
pub struct Options {
    percentiles: Vec<f64>,
    hide_histogram: bool,
    json_out: Option<PathBuf>,
    out_file: Option<PathBuf>,
    run_count: u32,
    print_all_runs: bool,
    layout: Layout,
    hdr_file_prefix: Option<String>,
    client_stats: Option<String>,
    data_verify: bool,
    verify_only: bool,
}

/// Which rows the table has.
#[derive(Clone, Debug, PartialEq)]
enum Layout {
    /// `Sets`, `Gets`, an empty `Waits` row (in the text only) and `Totals`.
    SetGet,
    /// `Sets`, `Gets`, `Waits` (the WAITs of `--wait-ratio`, [`CommandId`] 0) and
    /// `Totals`.
    Wait,
    /// One row per command name (upper case, per [`CommandId`]: `Sets`, `Hsets`) and
    /// `Totals`, as memtier prints arbitrary commands.
    Commands(Vec<String>),
}

impl Options {
    /// The output flags of a memtier command line.
    pub fn from_args(a: &MemtierArgs) -> Options {
        let layout = match a.commands() {
            Ok(commands) if !commands.is_empty() => {
                let mut names: Vec<String> = Vec::new();
                for c in commands {
                    if !names.contains(&c.name()) {
                        names.push(c.name());
                    }
                }
                Layout::Commands(names)
            }
            _ if a.wait_ratio.is_some_and(|w| w.gets > 0) => Layout::Wait,
            _ => Layout::SetGet,
        };
        Options {
            percentiles: a.percentiles(),
            hide_histogram: a.hide_histogram,
            json_out: a.json_out_file.clone(),
            out_file: a.out_file.clone(),
            run_count: a.run_count,
            print_all_runs: a.print_all_runs,
            layout,
            hdr_file_prefix: a.hdr_file_prefix.clone(),
            client_stats: a.client_stats.clone(),
            data_verify: a.data_verify(),
            verify_only: a.verify_only,
        }
    }

    /// `-x/--run-count`: how many times the whole test runs (at least 1).
    pub fn run_count(&self) -> u32 {
        self.run_count.max(1)
    }

    /// `--out-file`, where the text report goes instead of stdout.
    pub fn out_file(&self) -> Option<&PathBuf> {
        self.out_file.as_ref()
    }

    /// `--json-out-file`.
    pub fn json_out(&self) -> Option<&PathBuf> {
        self.json_out.as_ref()
    }

    /// `--hdr-file-prefix`: where each run's HDR histogram files go.
    pub fn hdr_file_prefix(&self) -> Option<&str> {
        self.hdr_file_prefix.as_deref()
    }

    /// The names of the arbitrary commands (`--command`), one per row of the table, in
    /// [`kvlab_core::CommandId`] order; empty for memtier's SET/GET (and WAIT) requests.
    pub fn command_names(&self) -> &[String] {
        match &self.layout {
            Layout::Commands(names) => names,
            _ => &[],
        }
    }

    /// `--data-verify` (or `--verify-only`): read the imported objects back at the end.
    pub fn data_verify(&self) -> bool {
        self.data_verify
    }

    /// `--verify-only`: verify without running the test.
    pub fn verify_only(&self) -> bool {
        self.verify_only
    }

    /// `--client-stats`: the prefix of each run's per-client CSV files.
    pub fn client_stats(&self) -> Option<&str> {
        self.client_stats.as_deref()
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
    /// `None` where memtier prints `---` (WAITs).
    kb_per_sec: Option<f64>,
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
        kb_per_sec: Some(rate(bytes) / 1024.0),
    }
}

/// The figures of every row and the totals, from `recorder` over `secs` seconds. GET
/// hits and misses are `keys` (counted per key) when given, else the recorder's
/// per-request counts.
fn all(
    layout: &Layout,
    recorder: &Recorder,
    keys: Option<(u64, u64)>,
    secs: f64,
    percentiles: &[f64],
) -> Vec<(String, Figures)> {
    let mut out = Vec::new();
    let mut total = Histogram::<u64>::new(3).expect("3 significant digits is valid");
    let add = |total: &mut Histogram<u64>, h: &Histogram<u64>| {
        total
            .add(h)
            .expect("histograms of one recorder are compatible")
    };
    let empty = Histogram::<u64>::new(3).expect("3 significant digits is valid");
    let command = |i: usize| {
        recorder
            .command_histogram(CommandId(i as u16))
            .unwrap_or(&empty)
    };
    let mut bytes = recorder.bytes_read() + recorder.bytes_written();
    if let Layout::Commands(names) = layout {
        for (i, name) in names.iter().enumerate() {
            let h = command(i);
            add(&mut total, h);
            let b = recorder.command_bytes(CommandId(i as u16));
            bytes += b;
            let f = figures(h, None, None, b, secs, percentiles);
            out.push((crate::row_name(name), f));
        }
        let f = figures(&total, None, None, bytes, secs, percentiles);
        out.push(("Totals".to_string(), f));
        return out;
    }
    let (hits, misses) = keys.unwrap_or_else(|| {
        (
            recorder.status_count(OpKind::Read, Status::Ok),
            recorder.status_count(OpKind::Read, Status::NotFound),
        )
    });
    for (name, kind) in TYPES {
        let h = recorder.histogram(kind);
        add(&mut total, h);
        let (hit, miss, bytes) = if kind == OpKind::Read {
            (Some(hits), Some(misses), recorder.bytes_read())
        } else {
            (None, None, recorder.bytes_written())
        };
        out.push((
            name.to_string(),
            figures(h, hit, miss, bytes, secs, percentiles),
        ));
    }
    if *layout == Layout::Wait {
        let h = command(0);
        add(&mut total, h);
        let mut f = figures(h, None, None, 0, secs, percentiles);
        f.kb_per_sec = None;
        out.push(("Waits".to_string(), f));
    }
    out.push((
        "Totals".to_string(),
        figures(&total, Some(hits), Some(misses), bytes, secs, percentiles),
    ));
    out
}

/// Prints the `ALL STATS` table of a run and, unless hidden, the latency distribution.
pub fn print(opts: &Options, run: &RunOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    let rows = run_rows(&opts.layout, run, &opts.percentiles);
    print_section(opts, "ALL STATS", &rows, &run.total, out)
}

/// Prints memtier's report of several runs of one test: with `--print-all-runs` each
/// run's table, then the best run, the worst run and their aggregated average (see the
/// module documentation).
pub fn print_runs(opts: &Options, runs: &[RunOutcome], out: &mut dyn Write) -> std::io::Result<()> {
    let Some((best, worst)) = best_and_worst(runs) else {
        return Ok(());
    };
    let p = &opts.percentiles;
    let l = &opts.layout;
    if opts.print_all_runs {
        for (i, run) in runs.iter().enumerate() {
            let title = format!("RUN #{} RESULTS", i + 1);
            print_section(opts, &title, &run_rows(l, run, p), &run.total, out)?;
        }
    }
    print_section(
        opts,
        BEST,
        &run_rows(l, &runs[best], p),
        &runs[best].total,
        out,
    )?;
    print_section(
        opts,
        WORST,
        &run_rows(l, &runs[worst], p),
        &runs[worst].total,
        out,
    )?;
    let (rows, merged) = average_rows(l, runs, p);
    print_section(opts, &average_title(runs.len()), &rows, &merged, out)
}

const BEST: &str = "BEST RUN RESULTS";
const WORST: &str = "WORST RUN RESULTS";

fn average_title(runs: usize) -> String {
    format!("AGGREGATED AVERAGE RESULTS ({runs} runs)")
}

/// The figures of one run: its requests over its elapsed time, GET hits and misses
/// counted per key.
fn run_rows(layout: &Layout, run: &RunOutcome, percentiles: &[f64]) -> Vec<(String, Figures)> {
    all(
        layout,
        &run.total,
        Some((run.keys_hit, run.keys_missed)),
        run.elapsed.as_secs_f64(),
        percentiles,
    )
}

/// The indexes of the runs with the highest and the lowest total requests per second,
/// the earlier run on a tie, as memtier picks them; `None` for no runs.
pub fn best_and_worst(runs: &[RunOutcome]) -> Option<(usize, usize)> {
    let rate = |r: &RunOutcome| r.total.operations() as f64 / r.elapsed.as_secs_f64().max(1e-9);
    let mut best = 0;
    let mut worst = 0;
    for (i, r) in runs.iter().enumerate().skip(1) {
        if rate(r) > rate(&runs[best]) {
            best = i;
        }
        if rate(r) < rate(&runs[worst]) {
            worst = i;
        }
    }
    (!runs.is_empty()).then_some((best, worst))
}

/// The aggregated average of `runs`: rates and average latencies are the runs' means,
/// counts their sums, minimum and maximum latencies the extremes, and percentiles
/// those of the merged histograms (also returned, for the latency distribution).
fn average_rows(
    layout: &Layout,
    runs: &[RunOutcome],
    percentiles: &[f64],
) -> (Vec<(String, Figures)>, Recorder) {
    let mut merged = Recorder::new();
    for r in runs {
        merged.merge(&r.total);
    }
    let per_run: Vec<_> = runs
        .iter()
        .map(|r| run_rows(layout, r, percentiles))
        .collect();
    let n = runs.len().max(1) as f64;
    let merged_rows = all(layout, &merged, Some((0, 0)), 1.0, percentiles);
    let rows = merged_rows
        .into_iter()
        .enumerate()
        .map(|(i, (name, m))| {
            let column = || per_run.iter().map(move |rows| &rows[i].1);
            let mean = |v: f64| v / n;
            let mean_of = |get: fn(&Figures) -> Option<f64>| {
                let values: Vec<f64> = column().filter_map(get).collect();
                (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
            };
            let figures = Figures {
                count: column().map(|f| f.count).sum(),
                ops_per_sec: mean(column().map(|f| f.ops_per_sec).sum()),
                hits_per_sec: mean_of(|f| f.hits_per_sec),
                misses_per_sec: mean_of(|f| f.misses_per_sec),
                avg_ms: mean_of(|f| f.avg_ms),
                min_ms: column().filter_map(|f| f.min_ms).reduce(f64::min),
                max_ms: column().filter_map(|f| f.max_ms).reduce(f64::max),
                percentiles_ms: m.percentiles_ms,
                kb_per_sec: mean_of(|f| f.kb_per_sec),
            };
            (name, figures)
        })
        .collect();
    (rows, merged)
}

/// Prints one titled table (`ALL STATS`, `BEST RUN RESULTS`, …) and, unless hidden, the
/// latency distribution of `recorder`.
fn print_section(
    opts: &Options,
    title: &str,
    rows: &[(String, Figures)],
    recorder: &Recorder,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let p = &opts.percentiles;
    // memtier widens the type column to its longest command name.
    let type_width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0).max(6);
    let width = type_width + 7 + 13 * 3 + 16 * (1 + p.len()) + 13;
    writeln!(out)?;
    writeln!(out)?;
    writeln!(out, "{title}")?;
    writeln!(out, "{}", "=".repeat(width))?;
    write!(
        out,
        "{:<type_width$}{:>13}{:>13}{:>13}{:>16}",
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
    for (i, (name, f)) in rows.iter().enumerate() {
        if i == TYPES.len() && opts.layout == Layout::SetGet {
            // memtier's WAIT row: no --wait-ratio, no WAITs.
            write!(
                out,
                "{:<type_width$}{:>13.2}{:>13}{:>13}{:>16}",
                "Waits", 0.0, "---", "---", "---"
            )?;
            for _ in p {
                write!(out, "{:>16}", "---")?;
            }
            writeln!(out, "{:>13} ", "---")?;
        }
        write!(
            out,
            "{:<type_width$}{:>13.2}{}{}{}",
            name,
            f.ops_per_sec,
            dash(f.hits_per_sec, 13, 2),
            dash(f.misses_per_sec, 13, 2),
            dash(f.avg_ms, 16, 5)
        )?;
        for v in &f.percentiles_ms {
            write!(out, "{}", dash(*v, 16, 5))?;
        }
        writeln!(out, "{} ", dash(f.kb_per_sec, 13, 2))?;
    }
    if !opts.hide_histogram {
        writeln!(out)?;
        writeln!(out)?;
        writeln!(out, "Request Latency Distribution")?;
        writeln!(out, "{:<6}{:>12}{:>16}", "Type", "<= msec", "Percent")?;
        writeln!(out, "{}", "-".repeat(72))?;
        let empty = Histogram::<u64>::new(3).expect("3 significant digits is valid");
        let mut hists: Vec<(String, &Histogram<u64>)> = Vec::new();
        let command = |i: usize| {
            recorder
                .command_histogram(CommandId(i as u16))
                .unwrap_or(&empty)
        };
        match &opts.layout {
            Layout::Commands(names) => {
                for (i, name) in names.iter().enumerate() {
                    hists.push((name.clone(), command(i)));
                }
            }
            layout => {
                hists.push(("SET".into(), recorder.histogram(OpKind::Insert)));
                hists.push(("GET".into(), recorder.histogram(OpKind::Read)));
                if *layout == Layout::Wait {
                    hists.push(("WAIT".into(), command(0)));
                }
            }
        }
        for (label, h) in hists {
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
    m.insert("KB/sec".into(), json!(f.kb_per_sec.unwrap_or(0.0)));
    let mut pm = Map::new();
    for (q, v) in percentiles.iter().zip(&f.percentiles_ms) {
        pm.insert(percentile_key(*q), json!(v.unwrap_or(0.0)));
    }
    m.insert("Percentile Latencies".into(), Value::Object(pm));
    m
}

/// One second (reporting interval) of a run, for the JSON `Time-Serie`.
pub struct Second {
    figures: Vec<(String, Figures)>,
}

impl Second {
    /// The figures of one interval's recorder.
    pub fn from_interval(opts: &Options, recorder: &Recorder, interval_s: f64) -> Second {
        Second {
            figures: all(&opts.layout, recorder, None, interval_s, &opts.percentiles),
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
    let stats = stats_json(
        &run_rows(&opts.layout, run, &opts.percentiles),
        seconds,
        &opts.percentiles,
    );
    document(
        configuration,
        run_information,
        vec![("ALL STATS".into(), stats)],
    )
}

/// The JSON document of several runs of one test (`-x`): `BEST RUN RESULTS` and `WORST
/// RUN RESULTS` with those runs' per-second series, and `AGGREGATED AVERAGE RESULTS (N
/// runs)` without one. `seconds[i]` is run `i`'s series.
pub fn json_document_runs(
    opts: &Options,
    configuration: Vec<(String, String)>,
    run_information: Map<String, Value>,
    runs: &[RunOutcome],
    seconds: &[Vec<Second>],
) -> Value {
    let p = &opts.percentiles;
    let mut sections = Vec::new();
    if let Some((best, worst)) = best_and_worst(runs) {
        let series = |i: usize| seconds.get(i).map_or(&[][..], Vec::as_slice);
        for (title, i) in [(BEST, best), (WORST, worst)] {
            let stats = stats_json(&run_rows(&opts.layout, &runs[i], p), series(i), p);
            sections.push((title.to_string(), stats));
        }
        let (rows, _) = average_rows(&opts.layout, runs, p);
        sections.push((average_title(runs.len()), stats_json(&rows, &[], p)));
    }
    document(configuration, run_information, sections)
}

/// Each type's totals with percentiles and its per-second `Time-Serie`.
fn stats_json(
    rows: &[(String, Figures)],
    seconds: &[Second],
    percentiles: &[f64],
) -> Map<String, Value> {
    let mut stats = Map::new();
    for (i, (name, f)) in rows.iter().enumerate() {
        let mut m = figures_json(f, percentiles);
        let mut series = Map::new();
        for (t, s) in seconds.iter().enumerate() {
            let f = &s.figures[i].1;
            let mut point = Map::new();
            point.insert("Count".into(), json!(f.count));
            point.insert("Average Latency".into(), json!(f.avg_ms.unwrap_or(0.0)));
            point.insert("Min Latency".into(), json!(f.min_ms.unwrap_or(0.0)));
            point.insert("Max Latency".into(), json!(f.max_ms.unwrap_or(0.0)));
            for (q, v) in percentiles.iter().zip(&f.percentiles_ms) {
                point.insert(percentile_key(*q), json!(v.unwrap_or(0.0)));
            }
            series.insert(t.to_string(), Value::Object(point));
        }
        m.insert("Time-Serie".into(), Value::Object(series));
        stats.insert(name.to_string(), Value::Object(m));
    }
    stats
}

fn document(
    configuration: Vec<(String, String)>,
    run_information: Map<String, Value>,
    sections: Vec<(String, Map<String, Value>)>,
) -> Value {
    let mut doc = Map::new();
    doc.insert(
        "configuration".into(),
        Value::Object(
            configuration
                .into_iter()
                .map(|(k, v)| (k, Value::from(v)))
                .collect(),
        ),
    );
    doc.insert("run information".into(), Value::Object(run_information));
    for (title, stats) in sections {
        doc.insert(title, Value::Object(stats));
    }
    Value::Object(doc)
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
            connection_lost: None,
            fell_behind: false,
            max_schedule_lag_ms: 0.0,
            integrity_checked: 0,
            integrity_failed: 0,
            groups: Vec::new(),
            keys_hit,
            keys_missed,
            unfinished: 0,
            measured_start: None,
            clients: Vec::new(),
            first_errors: Vec::new(),
        }
    }

    fn opts(hide: bool) -> Options {
        Options {
            percentiles: vec![50.0, 99.0, 99.9],
            hide_histogram: hide,
            json_out: None,
            out_file: None,
            run_count: 1,
            print_all_runs: false,
            layout: Layout::SetGet,
            hdr_file_prefix: None,
            client_stats: None,
            data_verify: false,
            verify_only: false,
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
    fn several_runs_report_the_best_the_worst_and_their_average() {
        // The same requests over 4 s, 2 s and 2 s: the second run is the best (the
        // earlier of two equal ones), the first the worst.
        let runs = [run(4, 100, 50), run(2, 100, 50), run(2, 100, 50)];
        assert_eq!(best_and_worst(&runs), Some((1, 0)));
        assert_eq!(best_and_worst(&[]), None);
        let mut o = opts(true);
        o.print_all_runs = true;
        let mut out = Vec::new();
        print_runs(&o, &runs, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let gets = |title: &str| -> Vec<String> {
            let table = text.split(&format!("\n{title}\n")).nth(1).unwrap();
            let row = table.lines().find(|l| l.starts_with("Gets")).unwrap();
            row.split_whitespace().map(str::to_string).collect()
        };
        // 150 gets in 4 s and in 2 s; the average rate is the mean of 37.5, 75, 75.
        assert_eq!(gets("RUN #1 RESULTS")[1], "37.50");
        assert_eq!(gets("BEST RUN RESULTS")[1], "75.00");
        assert_eq!(gets("WORST RUN RESULTS")[1], "37.50");
        assert_eq!(
            gets("AGGREGATED AVERAGE RESULTS (3 runs)")[1..3],
            ["62.50", "41.67"]
        );
        assert!(!text.contains("ALL STATS"));

        let doc = json_document_runs(&o, Vec::new(), Map::new(), &runs, &[]);
        let avg = &doc["AGGREGATED AVERAGE RESULTS (3 runs)"]["Gets"];
        assert_eq!(avg["Count"], json!(450));
        assert_eq!(doc["WORST RUN RESULTS"]["Gets"]["Ops/sec"], json!(37.5));
        // Percentiles of the merged histograms: the same requests in every run.
        assert_eq!(
            avg["Percentile Latencies"],
            doc["BEST RUN RESULTS"]["Gets"]["Percentile Latencies"]
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

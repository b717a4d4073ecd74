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
use std::time::SystemTime;

use hdrhistogram::Histogram;
use kvlab_core::{CommandId, OpKind, Status, StoreErrorKind};
use kvlab_measure::Recorder;
use kvlab_runner::RunOutcome;
use serde_json::{Map, Value};

use crate::args::MemtierArgs;
use crate::json::Json;

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
    /// `--cluster-mode`: the tables and the JSON rows have memtier's `MOVED/sec` and
    /// `ASK/sec`.
    cluster: bool,
    /// Boxed: the options travel in an enum beside small variants.
    header: Box<RunHeader>,
    configuration: Box<Json>,
}

/// The run information memtier prints before its tables and puts in its JSON's `run
/// information` (`memtier_benchmark.cpp`, `main`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunHeader {
    /// `--threads`.
    pub threads: usize,
    /// `--clients`, per thread.
    pub clients_per_thread: usize,
    /// Requests per client (`--requests`, `allkeys` resolved), or `None` when bounded by
    /// `--test-time`.
    pub requests_per_client: Option<u64>,
    /// `--test-time`, in seconds (0 when bounded by requests).
    pub test_time_s: u64,
}

impl RunHeader {
    /// memtier's lines: `%-9u Threads`, `%-9u Connections per thread`, and `%-9llu
    /// Requests per client` or `%-9llu Seconds`.
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{:<9} Threads", self.threads)?;
        writeln!(out, "{:<9} Connections per thread", self.clients_per_thread)?;
        let (n, what) = self.bound();
        writeln!(out, "{n:<9} {what}")
    }

    /// The run's bound and its name: requests per client, or seconds.
    pub fn bound(&self) -> (u64, &'static str) {
        match self.requests_per_client {
            Some(n) => (n, "Requests per client"),
            None => (self.test_time_s, "Seconds"),
        }
    }
}

/// memtier_benchmark's live line on stderr, once a second (`run_benchmark`):
/// `[RUN #1 40%,   2 secs]  1 threads 50 conns:   123456 ops,   61728 (avg:   61728)
/// ops/sec, 2.35MB/sec (avg: 2.35MB/sec),  0.81 (avg:  0.81) msec latency`, ending in a
/// carriage return so that each line overwrites the last on a terminal; with
/// `N conn errors` after the connections once a connection has failed.
#[derive(Clone, Debug)]
pub struct Progress {
    run: u32,
    header: RunHeader,
    ops: u64,
    bytes: f64,
    latency_ms: f64,
    elapsed_s: f64,
}

/// memtier's `size_to_str`: `12.34KB`, `1.50MB`, `2.00GB` (1024-based).
fn size_to_str(bytes: f64) -> String {
    const KB: f64 = 1024.0;
    if bytes >= KB * KB * KB {
        format!("{:.2}GB", bytes / (KB * KB * KB))
    } else if bytes >= KB * KB {
        format!("{:.2}MB", bytes / (KB * KB))
    } else {
        format!("{:.2}KB", bytes / KB)
    }
}

impl Progress {
    /// The line of one interval (`interval_s` long) whose requests `recorder` holds;
    /// `conn_errors`: connection failures so far.
    pub fn interval(
        &mut self,
        opts: &Options,
        recorder: &Recorder,
        interval_s: f64,
        conn_errors: u64,
    ) -> String {
        let rows = all(&opts.layout, recorder, None, interval_s, &[]);
        let cur = rows
            .iter()
            .find(|(name, _)| name == "Totals")
            .map(|(_, f)| f)
            .expect("every layout has a Totals row");
        let cur_bytes = cur.kb_per_sec.unwrap_or(0.0) * 1024.0;
        let cur_latency = cur.avg_ms.unwrap_or(0.0);
        self.ops += cur.count;
        self.bytes += cur_bytes * interval_s;
        self.latency_ms += cur_latency * cur.count as f64;
        self.elapsed_s += interval_s;
        let per_s = |v: f64, s: f64| if s > 0.0 { v / s } else { 0.0 };
        let h = &self.header;
        let percent = match h.requests_per_client {
            Some(n) => {
                let all = n as f64 * (h.threads * h.clients_per_thread) as f64;
                per_s(self.ops as f64, all) * 100.0
            }
            None => per_s(self.elapsed_s, h.test_time_s as f64) * 100.0,
        };
        let errors = if conn_errors > 0 {
            format!(" {conn_errors} conn errors")
        } else {
            String::new()
        };
        let avg_latency = if self.ops > 0 {
            self.latency_ms / self.ops as f64
        } else {
            0.0
        };
        format!(
            "[RUN #{} {percent:.0}%, {:>3} secs] {:>2} threads {:>2} conns{errors}: {:>11} ops, \
             {:>7} (avg: {:>7}) ops/sec, {}/sec (avg: {}/sec), {cur_latency:>5.2} (avg: \
             {avg_latency:>5.2}) msec latency\r",
            self.run,
            self.elapsed_s as u64,
            h.threads,
            h.clients_per_thread,
            self.ops,
            cur.ops_per_sec as u64,
            per_s(self.ops as f64, self.elapsed_s) as u64,
            size_to_str(cur_bytes),
            size_to_str(per_s(self.bytes, self.elapsed_s)),
        )
    }
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
        let names = a.command_names();
        let layout = match a.commands() {
            Ok(commands) if !commands.is_empty() => Layout::Commands(names),
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
            cluster: a.cluster_mode,
            header: Box::new(RunHeader {
                threads: a.threads(),
                clients_per_thread: a.clients_per_thread(),
                requests_per_client: a.requests_per_client(),
                test_time_s: a.test_time.map_or(0, u64::from),
            }),
            configuration: Box::new(crate::json::configuration(a)),
        }
    }

    /// memtier's `configuration` object of the JSON document.
    pub fn configuration(&self) -> &Json {
        &self.configuration
    }

    /// The run information printed before the tables.
    pub fn header(&self) -> &RunHeader {
        &self.header
    }

    /// The live line of run `run` (1-based), before its first interval.
    pub fn progress(&self, run: u32) -> Progress {
        Progress {
            run,
            header: (*self.header).clone(),
            ops: 0,
            bytes: 0.0,
            latency_ms: 0.0,
            elapsed_s: 0.0,
        }
    }

    /// memtier's line before the runs: `Writing results to FILE...` with `-o FILE`,
    /// else `Writing results to stdout`.
    pub fn writing_results(&self) -> String {
        match &self.out_file {
            Some(f) => format!("Writing results to {}...", f.display()),
            None => "Writing results to stdout".to_string(),
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

/// memtier's JSON name for a percentile: `"p%.3f"` cut to 6 characters by its 8-byte
/// buffer (`result_print_to_json`): `p50.00`, `p99.90`, `p99.99`, `p100.0`.
fn percentile_key(p: f64) -> String {
    let mut key = format!("p{p:.3}");
    key.truncate(6);
    key
}

/// memtier's column header (`run_stats::print`): `p50 Latency`, `p99.9 Latency`, with
/// up to 3 decimals, as many as the `float` percentile needs to within 0.001 — so
/// `99.99`, which a `float` holds as 99.98999…, is `p99.990`.
fn percentile_header(p: f64) -> String {
    let q = p as f32;
    let mut digits = 0usize;
    let mut frac = q.abs() - q.abs().trunc();
    while frac.abs() > 0.001 && digits < 3 {
        frac *= 10.0;
        digits += 1;
        frac -= frac.trunc();
    }
    format!("p{q:.digits$} Latency")
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
    /// Bytes received and sent on the wire.
    rx_bytes: u64,
    tx_bytes: u64,
    /// The span the rates are over, in seconds.
    secs: f64,
    /// The latencies' histogram (nanoseconds), for the JSON's compressed histogram and
    /// accumulated latency.
    histogram: Histogram<u64>,
}

/// Bytes of one row on the wire: received and sent.
#[derive(Clone, Copy)]
struct Traffic {
    rx: u64,
    tx: u64,
}

impl Traffic {
    fn split(rx: u64, tx: u64) -> Traffic {
        Traffic { rx, tx }
    }
}

fn figures(
    histogram: &Histogram<u64>,
    hits: Option<u64>,
    misses: Option<u64>,
    traffic: Traffic,
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
        kb_per_sec: Some(rate(traffic.rx + traffic.tx) / 1024.0),
        rx_bytes: traffic.rx,
        tx_bytes: traffic.tx,
        secs,
        histogram: histogram.clone(),
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
    // Bytes on the wire, as memtier counts them: each request as encoded (`m_size`)
    // and each reply as parsed (`get_total_len()`), framing, misses and errors included.
    let wire = |kind: OpKind| recorder.wire_bytes(kind);
    let (mut rx, mut tx) = (0, 0);
    for kind in OpKind::ALL {
        rx += wire(kind).received;
        tx += wire(kind).sent;
    }
    if let Layout::Commands(names) = layout {
        for (i, name) in names.iter().enumerate() {
            let h = command(i);
            add(&mut total, h);
            let w = recorder.command_wire_bytes(CommandId(i as u16));
            // memtier 2.3.0's `run_stats::summarize` adds each command's RX + TX to both
            // the total RX and the total TX, counting them twice; kvlab adds each once.
            rx += w.received;
            tx += w.sent;
            let traffic = Traffic::split(w.received, w.sent);
            let f = figures(h, None, None, traffic, secs, percentiles);
            out.push((crate::row_name(name), f));
        }
        let f = figures(
            &total,
            None,
            None,
            Traffic::split(rx, tx),
            secs,
            percentiles,
        );
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
        let traffic = Traffic::split(wire(kind).received, wire(kind).sent);
        let (hit, miss) = if kind == OpKind::Read {
            (Some(hits), Some(misses))
        } else {
            (None, None)
        };
        out.push((
            name.to_string(),
            figures(h, hit, miss, traffic, secs, percentiles),
        ));
    }
    if *layout == Layout::Wait {
        // memtier counts no bytes for WAITs (`update_wait_op`), in their row or the
        // totals.
        let h = command(0);
        add(&mut total, h);
        let mut f = figures(h, None, None, Traffic::split(0, 0), secs, percentiles);
        f.kb_per_sec = None;
        out.push(("Waits".to_string(), f));
    }
    let traffic = Traffic::split(rx, tx);
    out.push((
        "Totals".to_string(),
        figures(&total, Some(hits), Some(misses), traffic, secs, percentiles),
    ));
    out
}

/// Prints the `ALL STATS` table of a run and, unless hidden, the latency distribution.
pub fn print(opts: &Options, run: &RunOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    let rows = run_rows(&opts.layout, run, &opts.percentiles);
    opts.header.write(out)?;
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
    opts.header.write(out)?;
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
                // RX and TX rates over the runs' time together.
                rx_bytes: column().map(|f| f.rx_bytes).sum(),
                tx_bytes: column().map(|f| f.tx_bytes).sum(),
                secs: column().map(|f| f.secs).sum(),
                histogram: m.histogram,
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
    // output_table (run_stats.cpp): every column is `column_size` characters and a
    // blank, its `===` and `---` rules as wide; the type column is as wide as the
    // longest command name (`print_type_column`), at least 6, plus one.
    let names = opts.command_names();
    let commands = !names.is_empty();
    let type_size = names.iter().map(String::len).max().unwrap_or(0).max(6) + 1;
    let mut widths = vec![type_size + 1, 13];
    if !commands {
        // Hits/sec and Misses/sec are left out for arbitrary commands (run_stats::print).
        widths.extend([13, 13]);
    }
    if opts.cluster {
        widths.extend([13, 13]);
    }
    widths.push(16);
    widths.extend(p.iter().map(|_| 16));
    widths.push(13);
    let width: usize = widths.iter().sum();
    writeln!(out)?;
    writeln!(out)?;
    writeln!(out, "{title}")?;
    writeln!(out, "{}", "=".repeat(width))?;
    write!(out, "{:<type_size$} {:>12} ", "Type", "Ops/sec")?;
    if !commands {
        write!(out, "{:>12} {:>12} ", "Hits/sec", "Misses/sec")?;
    }
    if opts.cluster {
        write!(out, "{:>12} {:>12} ", "MOVED/sec", "ASK/sec")?;
    }
    write!(out, "{:>15} ", "Avg. Latency")?;
    for &q in p {
        write!(out, "{:>15} ", percentile_header(q))?;
    }
    writeln!(out, "{:>12} ", "KB/sec")?;
    writeln!(out, "{}", "-".repeat(width))?;
    let cell = |v: Option<f64>, w: usize, prec: usize| match v {
        Some(v) => format!("{v:>w$.prec$} "),
        None => format!("{:>w$} ", "---"),
    };
    for (i, (name, f)) in rows.iter().enumerate() {
        if i == TYPES.len() && opts.layout == Layout::SetGet {
            // memtier's WAIT row: no --wait-ratio, no WAITs.
            write!(out, "{:<type_size$} {:>12.2} ", "Waits", 0.0)?;
            write!(out, "{}{}", cell(None, 12, 2), cell(None, 12, 2))?;
            if opts.cluster {
                write!(out, "{}{}", cell(None, 12, 2), cell(None, 12, 2))?;
            }
            for _ in 0..=p.len() {
                write!(out, "{}", cell(None, 15, 5))?;
            }
            writeln!(out, "{}", cell(None, 12, 2))?;
        }
        write!(out, "{:<type_size$} {:>12.2} ", name, f.ops_per_sec)?;
        if !commands {
            write!(
                out,
                "{}{}",
                cell(f.hits_per_sec, 12, 2),
                cell(f.misses_per_sec, 12, 2)
            )?;
        }
        if opts.cluster {
            // kvlab follows every MOVED and ASK: no request ends in one (see the
            // differences in docs/memtier.md).
            write!(out, "{}{}", cell(Some(0.0), 12, 2), cell(Some(0.0), 12, 2))?;
        }
        write!(out, "{}", cell(f.avg_ms, 15, 5))?;
        for v in &f.percentiles_ms {
            write!(out, "{}", cell(*v, 15, 5))?;
        }
        writeln!(out, "{}", cell(f.kb_per_sec, 12, 2))?;
    }
    if !opts.hide_histogram {
        print_distribution(opts, recorder, out)?;
    }
    Ok(())
}

/// memtier's *Request Latency Distribution* (`run_stats::print_histogram`): per type,
/// HdrHistogram's percentile iteration with 10 ticks per half distance
/// (`hdr_iter_percentile_init(…, LATENCY_HDR_GRANULARITY)`), each step's highest
/// equivalent value in milliseconds and its percentile; `---` after every type but the
/// last WAIT part, which memtier prints even without WAITs. A type without requests
/// (the WAITs of a run without `--wait-ratio`, the GETs of `--ratio=1:0`) still has the
/// iterator's one step, `0.000 100.000`.
fn print_distribution(
    opts: &Options,
    recorder: &Recorder,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(out)?;
    writeln!(out, "Request Latency Distribution")?;
    writeln!(out, "{:<6} {:>12} {:>12}", "Type", "<= msec   ", "Percent")?;
    writeln!(out, "{}", "-".repeat(72))?;
    let parts = distribution_parts(opts, recorder);
    for (label, h, rule) in parts {
        for (value_ns, percent) in percentile_steps(&h) {
            writeln!(out, "{:<6} {:>8.3} {:>12.3}", label, ms(value_ns), percent)?;
        }
        if rule {
            writeln!(out, "---")?;
        }
    }
    Ok(())
}

/// The parts of the latency distribution: a label, its histogram, and whether a `---`
/// follows it (memtier's last, WAIT part has none).
fn distribution_parts(opts: &Options, recorder: &Recorder) -> Vec<(String, Histogram<u64>, bool)> {
    let empty = Histogram::<u64>::new(3).expect("3 significant digits is valid");
    let command = |i: usize| {
        recorder
            .command_histogram(CommandId(i as u16))
            .unwrap_or(&empty)
            .clone()
    };
    let mut parts = Vec::new();
    match &opts.layout {
        Layout::Commands(names) => {
            for (i, name) in names.iter().enumerate() {
                parts.push((name.clone(), command(i), true));
            }
        }
        layout => {
            let set = recorder.histogram(OpKind::Insert).clone();
            let get = recorder.histogram(OpKind::Read).clone();
            parts.push(("SET".into(), set, true));
            parts.push(("GET".into(), get, true));
            let waits = if *layout == Layout::Wait {
                command(0)
            } else {
                empty.clone()
            };
            parts.push(("WAIT".into(), waits, false));
        }
    }
    parts
}

/// HdrHistogram's percentile iterator (`hdr_iter_percentile_init` with 10 ticks per
/// half distance, `hdr_histogram.c`): `(highest equivalent value, percentile)` pairs,
/// the percentile stepping by 5 %, then 2.5 %, 1.25 % … as it halves the distance to
/// 100 %, and a last step at 100 % for the maximum. An empty histogram has that last
/// step only, at 0 (`percentile_iter_next` reports 100 % at once when there is no next
/// value).
fn percentile_steps(h: &Histogram<u64>) -> Vec<(u64, f64)> {
    const TICKS_PER_HALF_DISTANCE: f64 = 10.0;
    let total = h.len();
    let mut steps = Vec::new();
    let mut to_report = 0.0f64;
    let mut cumulative = 0u64;
    let mut last = 0u64;
    for v in h.iter_recorded() {
        cumulative += v.count_at_value();
        last = h.highest_equivalent(v.value_iterated_to());
        let current = 100.0 * cumulative as f64 / total as f64;
        while to_report <= current {
            steps.push((last, to_report));
            // percentile_iter_next: once the last recorded value is reached, the next
            // step is the final 100 %.
            if cumulative >= total {
                break;
            }
            // As hdr_histogram.c computes it: log(…)/log(2), truncated.
            let doublings = ((100.0 / (100.0 - to_report)).ln() / 2f64.ln()) as i32 + 1;
            let half_distance = 2f64.powi(doublings);
            to_report += 100.0 / (TICKS_PER_HALF_DISTANCE * half_distance);
        }
    }
    steps.push((last, 100.0));
    steps
}

/// One row of `ALL STATS` in memtier's JSON (`result_print_to_json`), its keys in
/// memtier's order. `time_serie` is the row's per-second figures.
fn figures_json(
    f: &Figures,
    percentiles: &[f64],
    time_serie: Json,
    errors: (u64, f64),
    cluster: bool,
) -> Json {
    let rate = |b: u64| {
        if f.secs > 0.0 {
            b as f64 / f.secs / 1024.0
        } else {
            0.0
        }
    };
    let mut m = Json::object();
    m.put("Count", f.count);
    m.put("Ops/sec", Json::rounded(f.ops_per_sec, 2));
    m.put("Hits/sec", Json::rounded(f.hits_per_sec.unwrap_or(0.0), 2));
    m.put(
        "Misses/sec",
        Json::rounded(f.misses_per_sec.unwrap_or(0.0), 2),
    );
    if cluster {
        // memtier counts the requests answered with a redirection; kvlab follows them.
        m.put("MOVED/sec", Json::rounded(0.0, 2));
        m.put("ASK/sec", Json::rounded(0.0, 2));
    }
    m.put("Connection Errors/sec", Json::rounded(errors.1, 2));
    m.put("Connection Errors", errors.0);
    let avg = Json::rounded(f.avg_ms.unwrap_or(0.0), 3);
    m.put("Latency", avg.clone());
    m.put("Average Latency", avg);
    m.put("Accumulated Latency", accumulated_ms(&f.histogram));
    m.put("Min Latency", Json::rounded(f.min_ms.unwrap_or(0.0), 3));
    m.put("Max Latency", Json::rounded(f.max_ms.unwrap_or(0.0), 3));
    let kb = Json::rounded(f.kb_per_sec.unwrap_or(0.0), 2);
    m.put("KB/sec", kb.clone());
    m.put("KB/sec RX/TX", kb);
    let split = |b: u64| Json::rounded(rate(b), 2);
    m.put("KB/sec RX", split(f.rx_bytes));
    m.put("KB/sec TX", split(f.tx_bytes));
    m.put("Time-Serie", time_serie);
    let mut pm = Json::object();
    for (q, v) in percentiles.iter().zip(&f.percentiles_ms) {
        pm.put(percentile_key(*q), Json::rounded(v.unwrap_or(0.0), 3));
    }
    let mut log = Json::object();
    log.put("Compressed Histogram", compressed(&f.histogram));
    pm.put("Histogram log format", log);
    m.put("Percentile Latencies", pm);
    m
}

/// The sum of a histogram's latencies in whole milliseconds, memtier's `Accumulated
/// Latency` (`m_total_latency / LATENCY_HDR_RESULTS_MULTIPLIER`).
fn accumulated_ms(h: &Histogram<u64>) -> u64 {
    let total_ns = h.mean() * h.len() as f64;
    (total_ns / 1e6) as u64
}

/// A histogram as HdrHistogram's compressed log form (`hdr_string_write`: V2
/// deflate-compressed, base64, `HISTF…`), in microseconds as memtier records them.
fn compressed(h: &Histogram<u64>) -> Json {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
    let us = crate::files::micros(h);
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(&us, &mut bytes) {
        Ok(_) => Json::Str(base64::engine::general_purpose::STANDARD.encode(&bytes)),
        Err(_) => Json::Null,
    }
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

/// When a run started and ended, for the JSON's `Runtime`.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: SystemTime,
    end: SystemTime,
    interrupted: bool,
}

impl Span {
    fn of(run: &RunOutcome) -> Span {
        let end = run
            .measured_start
            .map_or_else(SystemTime::now, |s| s + run.elapsed);
        Span {
            start: end - run.elapsed,
            end,
            interrupted: run.interrupted,
        }
    }

    /// memtier's `Runtime` object (`run_stats::print_json`).
    fn json(&self) -> Json {
        let ms = |t: SystemTime| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        };
        let (start, end) = (ms(self.start), ms(self.end));
        let mut r = Json::object();
        r.put("Start time", start);
        r.put("Finish time", end);
        r.put("Total duration", end.saturating_sub(start));
        r.put("Time unit", "MILLISECONDS");
        r.put(
            "Interrupted",
            if self.interrupted { "true" } else { "false" },
        );
        r
    }
}

/// The JSON document of one run: memtier's `configuration`, `run information` and `ALL
/// STATS` (`Runtime`, a row per type with its per-second `Time-Serie`, and unless
/// `--hide-histogram` the latency distribution per type). `run_information` holds
/// kvlab's additions to memtier's run information (seed, pipeline, runtime); the
/// workload's settings are memtier's `configuration`, from the flags, so
/// `_kvlab_settings` is not written.
pub fn json_document(
    opts: &Options,
    _kvlab_settings: Vec<(String, String)>,
    run_information: Map<String, Value>,
    run: &RunOutcome,
    seconds: &[Second],
) -> Json {
    let rows = run_rows(&opts.layout, run, &opts.percentiles);
    let secs = run.elapsed.as_secs_f64();
    let stats = stats_json(opts, &rows, seconds, &run.total, secs, Span::of(run));
    document(opts, run_information, vec![("ALL STATS".into(), stats)])
}

/// The JSON document of several runs of one test (`-x`): with `--print-all-runs` each
/// run's `RUN #N RESULTS`, then `BEST RUN RESULTS` and `WORST RUN RESULTS`, all with
/// their run's per-second series, and `AGGREGATED AVERAGE RESULTS (N runs)` without
/// one. `seconds[i]` is run `i`'s series.
pub fn json_document_runs(
    opts: &Options,
    _kvlab_settings: Vec<(String, String)>,
    run_information: Map<String, Value>,
    runs: &[RunOutcome],
    seconds: &[Vec<Second>],
) -> Json {
    let p = &opts.percentiles;
    let mut sections = Vec::new();
    if let Some((best, worst)) = best_and_worst(runs) {
        let series = |i: usize| seconds.get(i).map_or(&[][..], Vec::as_slice);
        // memtier's `--print-all-runs` writes every run's section first, as it prints
        // every run's table.
        let all_runs = (0..runs.len()).filter(|_| opts.print_all_runs);
        let each = all_runs.map(|i| (format!("RUN #{} RESULTS", i + 1), i));
        let chosen = [(BEST.to_string(), best), (WORST.to_string(), worst)];
        for (title, i) in each.chain(chosen) {
            let rows = run_rows(&opts.layout, &runs[i], p);
            let r = &runs[i];
            let secs = r.elapsed.as_secs_f64();
            let stats = stats_json(opts, &rows, series(i), &r.total, secs, Span::of(r));
            sections.push((title, stats));
        }
        let (rows, merged) = average_rows(&opts.layout, runs, p);
        let span = Span {
            start: Span::of(&runs[0]).start,
            end: Span::of(&runs[runs.len() - 1]).end,
            interrupted: runs.iter().any(|r| r.interrupted),
        };
        let secs = runs.iter().map(|r| r.elapsed.as_secs_f64()).sum();
        sections.push((
            average_title(runs.len()),
            stats_json(opts, &rows, &[], &merged, secs, span),
        ));
    }
    document(opts, run_information, sections)
}

/// One section: `Runtime`, each type's totals with percentiles and its per-second
/// `Time-Serie`, then the latency distribution unless hidden.
fn stats_json(
    opts: &Options,
    rows: &[(String, Figures)],
    seconds: &[Second],
    recorder: &Recorder,
    secs: f64,
    span: Span,
) -> Json {
    let percentiles = &opts.percentiles;
    let mut stats = Json::object();
    stats.put("Runtime", span.json());
    let connection_errors = recorder.error_count(StoreErrorKind::Connection);
    let mut rows: Vec<(String, &Figures)> = rows.iter().map(|(n, f)| (n.clone(), f)).collect();
    // memtier writes a Waits row even without --wait-ratio.
    let no_waits;
    if opts.layout == Layout::SetGet {
        no_waits = figures(
            &Histogram::<u64>::new(3).expect("3 significant digits is valid"),
            None,
            None,
            Traffic::split(0, 0),
            secs,
            percentiles,
        );
        rows.insert(TYPES.len(), ("Waits".to_string(), &no_waits));
    }
    for (i, (name, f)) in rows.iter().enumerate() {
        // The per-second figures of this row; the Waits row memtier adds has none.
        let source = if opts.layout == Layout::SetGet && i >= TYPES.len() {
            (i > TYPES.len()).then(|| i - 1)
        } else {
            Some(i)
        };
        let mut series = Json::object();
        for (t, s) in seconds.iter().enumerate() {
            let mut point = Json::object();
            let Some(f) = source.and_then(|i| s.figures.get(i)).map(|(_, f)| f) else {
                point.put("Bytes RX", 0u64);
                point.put("Bytes TX", 0u64);
                point.put("Count", 0u64);
                series.put(t.to_string(), point);
                continue;
            };
            point.put("Bytes RX", f.rx_bytes);
            point.put("Bytes TX", f.tx_bytes);
            point.put("Count", f.count);
            if f.count > 0 {
                point.put("Average Latency", Json::rounded(f.avg_ms.unwrap_or(0.0), 3));
                point.put("Accumulated Latency", accumulated_ms(&f.histogram));
                point.put("Min Latency", Json::rounded(f.min_ms.unwrap_or(0.0), 3));
                point.put("Max Latency", Json::rounded(f.max_ms.unwrap_or(0.0), 3));
                for (q, v) in percentiles.iter().zip(&f.percentiles_ms) {
                    point.put(percentile_key(*q), Json::rounded(v.unwrap_or(0.0), 3));
                }
            }
            series.put(t.to_string(), point);
        }
        let errors = if name == "Totals" {
            let rate = if secs > 0.0 {
                connection_errors as f64 / secs
            } else {
                0.0
            };
            (connection_errors, rate)
        } else {
            (0, 0.0)
        };
        stats.put(
            name.clone(),
            figures_json(f, percentiles, series, errors, opts.cluster),
        );
    }
    if !opts.hide_histogram {
        for (label, h, _) in distribution_parts(opts, recorder) {
            let steps = percentile_steps(&h)
                .into_iter()
                .map(|(value_ns, percent)| {
                    let mut o = Json::object();
                    o.put("<=msec", Json::rounded(ms(value_ns), 3));
                    o.put("percent", Json::rounded(percent, 3));
                    o
                })
                .collect();
            stats.put(label, Json::Array(steps));
        }
    }
    stats
}

/// The document: memtier's `configuration`, its `run information` (`Threads`,
/// `Connections per thread`, `Requests per client` or `Seconds`, `Format version`) and
/// then kvlab's additions, then the sections.
fn document(
    opts: &Options,
    run_information: Map<String, Value>,
    sections: Vec<(String, Json)>,
) -> Json {
    let mut doc = Json::object();
    doc.put("configuration", (*opts.configuration).clone());
    let mut run = Json::object();
    let h = &opts.header;
    run.put("Threads", h.threads);
    run.put("Connections per thread", h.clients_per_thread);
    let (n, what) = h.bound();
    run.put(what, n);
    run.put("Format version", 2u64);
    for (k, v) in run_information {
        if k != "Threads" && k != "Connections per thread" {
            run.put(k, Json::from(v));
        }
    }
    doc.put("run information", run);
    for (title, stats) in sections {
        doc.put(title, stats);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvlab_core::WireBytes;
    use serde_json::json;
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
        // Payload bytes, which memtier's figures leave out, and the wire's.
        r.add_bytes(2000, 1000);
        r.add_wire(
            OpKind::Read,
            WireBytes {
                sent: 4500,
                received: 2048,
            },
        );
        r.add_wire(
            OpKind::Insert,
            WireBytes {
                sent: 1019,
                received: 5,
            },
        );
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
            cluster: false,
            header: Box::default(),
            configuration: Box::new(Json::object()),
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
        let doc =
            json_document(&opts(true), Vec::new(), Map::new(), &run(2, 300, 100), &[]).to_value();
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

        let doc = json_document_runs(&o, Vec::new(), Map::new(), &runs, &[]).to_value();
        let avg = &doc["AGGREGATED AVERAGE RESULTS (3 runs)"]["Gets"];
        assert_eq!(avg["Count"], json!(450));
        assert_eq!(doc["WORST RUN RESULTS"]["Gets"]["Ops/sec"], json!(37.5));
        // Percentiles of the merged histograms: the same requests in every run.
        for key in ["p50.00", "p99.00", "p99.90"] {
            assert_eq!(
                avg["Percentile Latencies"][key],
                doc["BEST RUN RESULTS"]["Gets"]["Percentile Latencies"][key]
            );
        }
    }

    #[test]
    fn json_has_totals_percentiles_and_a_series() {
        let r = recorder();
        let second = Second::from_interval(&opts(false), &r, 1.0);
        let doc = json_document(
            &opts(false),
            Vec::new(),
            Map::new(),
            &run(1, 100, 50),
            &[second],
        );
        let text = serde_json::to_string(&doc).unwrap();
        let doc = doc.to_value();
        let gets = &doc["ALL STATS"]["Gets"];
        assert_eq!(gets["Count"], json!(150));
        assert_eq!(gets["Hits/sec"], json!(100.0));
        assert!(gets["Percentile Latencies"]["p99.90"].as_f64().unwrap() > 0.9);
        let compressed = &gets["Percentile Latencies"]["Histogram log format"];
        assert!(compressed["Compressed Histogram"]
            .as_str()
            .unwrap()
            .starts_with("HISTF"));
        assert_eq!(gets["Time-Serie"]["0"]["Count"], json!(150));
        assert_eq!(gets["Time-Serie"]["0"]["Bytes RX"], json!(2048));
        assert_eq!(gets["Time-Serie"]["0"]["Bytes TX"], json!(4500));
        // (2048 + 4500) / 1024 KB in 1 s; the totals add the SET's 1019 + 5 bytes.
        assert_eq!(gets["KB/sec"], json!(6.39));
        assert_eq!(gets["KB/sec RX"], json!(2.0));
        let totals = &doc["ALL STATS"]["Totals"];
        assert_eq!(totals["KB/sec"], json!(7.39));
        assert_eq!(totals["KB/sec TX"], json!(5.39));
        assert_eq!(doc["ALL STATS"]["Totals"]["Count"], json!(151));
        assert_eq!(doc["ALL STATS"]["Waits"]["Count"], json!(0));
        assert_eq!(
            doc["ALL STATS"]["Runtime"]["Time unit"],
            json!("MILLISECONDS")
        );
        // The order memtier_benchmark 2.3.0 wrote into its --json-out-file (a run of
        // `-t 1 -c 1 -n 100` against redis-server): sections, then a row's keys.
        let order = |keys: &[&str]| {
            let at: Vec<usize> = keys
                .iter()
                .map(|k| text.find(&format!("\"{k}\"")).unwrap_or(usize::MAX))
                .collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{keys:?} in {text}");
        };
        order(&[
            "configuration",
            "run information",
            "ALL STATS",
            "Runtime",
            "Sets",
            "Gets",
        ]);
        order(&[
            "Count",
            "Ops/sec",
            "Hits/sec",
            "Misses/sec",
            "Connection Errors/sec",
            "Connection Errors",
            "Latency",
            "Average Latency",
            "Accumulated Latency",
            "Min Latency",
            "Max Latency",
            "KB/sec",
            "KB/sec RX/TX",
            "KB/sec RX",
            "KB/sec TX",
            "Time-Serie",
            "Percentile Latencies",
        ]);
        order(&["Waits", "Totals", "SET", "GET", "WAIT"]);
        assert_eq!(doc["ALL STATS"]["GET"][0]["percent"], json!(0.0));
    }

    #[test]
    fn percentile_names_are_memtiers() {
        // memtier 2.3.0 with --print-percentiles=50,99.99,100 printed the columns
        // `p50 Latency`, `p99.990 Latency`, `p100 Latency` and the JSON keys p50.00,
        // p99.99, p100.0.
        let headers: Vec<String> = [50.0, 99.9, 99.99, 100.0]
            .iter()
            .map(|&p| percentile_header(p))
            .collect();
        assert_eq!(
            headers,
            [
                "p50 Latency",
                "p99.9 Latency",
                "p99.990 Latency",
                "p100 Latency"
            ]
        );
        let keys: Vec<String> = [50.0, 99.9, 99.99, 100.0]
            .iter()
            .map(|&p| percentile_key(p))
            .collect();
        assert_eq!(keys, ["p50.00", "p99.90", "p99.99", "p100.0"]);
    }

    #[test]
    fn an_empty_distribution_has_the_iterators_one_step() {
        // memtier 2.3.0 ended every run without --wait-ratio with the line
        // `WAIT      0.000      100.000`, and with --ratio=1:0 printed `GET       0.000
        // 100.000` between its `---` rules: HdrHistogram_c's percentile iterator
        // reports 100 % once when the histogram has no value.
        let h = Histogram::<u64>::new(3).unwrap();
        assert_eq!(percentile_steps(&h), [(0, 100.0)]);
    }

    #[test]
    fn the_distribution_steps_as_hdr_histograms_percentile_iterator() {
        // 40 latencies: 39 of 15 µs and one of 247 µs. memtier 2.3.0 printed for such
        // a SET histogram the steps 0, 5, …, 50, 52.5, …, 97.5 at 0.015 ms, then
        // 97.656 and 100 at the maximum.
        let mut h = Histogram::<u64>::new(3).unwrap();
        h.record_n(15_000, 39).unwrap();
        h.record(247_000).unwrap();
        let steps = percentile_steps(&h);
        let percents: Vec<f64> = steps.iter().map(|s| s.1).collect();
        assert_eq!(
            &percents[..12],
            [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 52.5]
        );
        let tail: Vec<(f64, String)> = steps[steps.len() - 3..]
            .iter()
            .map(|&(v, p)| (p, format!("{:.3}", ms(v))))
            .collect();
        assert_eq!(
            tail,
            [
                (97.5, "0.015".to_string()),
                (97.65625, "0.247".to_string()),
                (100.0, "0.247".to_string())
            ]
        );
    }
}

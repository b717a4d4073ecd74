//! [`Comparison`]: two results, or two sets of rounds, side by side — throughput, latency
//! per operation, errors, hit ratio — with the ratio B/A and, over rounds, what the
//! statistics say of it ([`MetricComparison`]: medians, bootstrap intervals, the
//! Mann–Whitney p-value and a verdict, `~` for no significant difference, as Go's
//! benchstat prints it).

use std::path::{Path, PathBuf};

use crate::format;
use crate::load::{find_result_files, ResultDir};
use crate::stats::{self, Interval};
use crate::study::{
    find_op, read_hit_ratio_pct, read_miss_ratio_pct, workload_name, CacheFigures, Cell,
    LatencyFigure, Round, Study, StudyOptions,
};
use crate::table::{Align, Table};
use crate::{ReportError, ResultDocument};

/// How [`Comparison::render`] lays out its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ComparisonFormat {
    /// A GitHub-flavoured markdown table.
    #[default]
    Markdown,
    /// Aligned plain columns.
    Terminal,
}

/// One side of a comparison: the rounds of one cell (one result is one round).
#[derive(Clone, Debug)]
pub struct Side {
    /// The path the side was named by.
    pub path: PathBuf,
    /// Its rounds (shards of one round merged into it), by number.
    pub rounds: Vec<Round>,
}

impl Side {
    /// The rounds at or below `path`: a `result.json`, a result directory, or a directory
    /// of result directories (a suite cell's rounds). Results of more than one cell (store
    /// × workload × clients) are refused, naming the cells.
    pub fn load(path: &Path) -> Result<Side, ReportError> {
        let files = find_result_files(path)?;
        let base = if path.is_dir() {
            path
        } else {
            path.parent().unwrap_or(Path::new(""))
        };
        let rounds = files
            .iter()
            .map(|f| Round::load(f, base))
            .collect::<Result<Vec<_>, _>>()?;
        let study = Study::new(rounds, StudyOptions::default());
        match <[Cell; 1]>::try_from(study.cells) {
            Ok([cell]) => Ok(Side {
                path: path.to_path_buf(),
                rounds: cell.rounds,
            }),
            Err(cells) => Err(ReportError::SeveralCells {
                path: path.to_path_buf(),
                cells: cells
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {} {}",
                            c.key.store,
                            c.key.workload,
                            c.key.concurrency_label()
                        )
                    })
                    .collect(),
            }),
        }
    }

    /// The side's one result, when it is one round.
    fn only(&self) -> Option<&ResultDir> {
        match self.rounds.as_slice() {
            [r] => Some(&r.result),
            _ => None,
        }
    }
}

/// One metric compared: its median over A's and over B's rounds, and what the statistics
/// say of the difference. With one round a side, the medians are the values and there is
/// no interval, p-value or verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricComparison {
    /// The metric's label, unit included (`Throughput (ops/s)`).
    pub metric: String,
    /// A's median; `None` when no round of A has the figure.
    pub a: Option<f64>,
    /// B's median.
    pub b: Option<f64>,
    /// `b / a`; `None` without both or with `a` = 0.
    pub b_over_a: Option<f64>,
    /// The 95 % bootstrap interval of A's median ([`stats::bootstrap_median_ci`]);
    /// `None` for fewer than two rounds.
    pub a_ci: Option<Interval>,
    /// The 95 % bootstrap interval of B's median.
    pub b_ci: Option<Interval>,
    /// The 95 % bootstrap interval of the relative change `b / a − 1`
    /// ([`stats::bootstrap_change_ci`]).
    pub change_ci: Option<Interval>,
    /// The two-sided Mann–Whitney U p-value of A's rounds against B's; `None` when the
    /// test says nothing (every value equal, or a side with fewer than two rounds).
    pub p_value: Option<f64>,
    /// The difference is significant: enough rounds on both sides ([`stats::MIN_ROUNDS`])
    /// and a p-value below [`stats::ALPHA`].
    pub significant: bool,
    /// A's rounds that have the figure.
    pub rounds_a: usize,
    /// B's rounds that have the figure.
    pub rounds_b: usize,
}

impl MetricComparison {
    /// Compares one metric's values over A's and B's rounds.
    pub fn new(metric: impl Into<String>, a: &[f64], b: &[f64]) -> MetricComparison {
        let (ma, mb) = (stats::median(a), stats::median(b));
        let ci = |v: &[f64]| {
            stats::bootstrap_median_ci(
                v,
                stats::CONFIDENCE,
                stats::RESAMPLES,
                stats::BOOTSTRAP_SEED,
            )
        };
        // One round has no spread to test against: no p-value.
        let p_value = (a.len() >= 2 && b.len() >= 2)
            .then(|| stats::mann_whitney_u(a, b).map(|t| t.p_value))
            .flatten();
        let enough = a.len() >= stats::MIN_ROUNDS && b.len() >= stats::MIN_ROUNDS;
        let b_over_a = match (ma, mb) {
            (Some(x), Some(y)) if x != 0.0 => Some(y / x),
            _ => None,
        };
        MetricComparison {
            metric: metric.into(),
            a: ma,
            b: mb,
            b_over_a,
            a_ci: ci(a),
            b_ci: ci(b),
            change_ci: stats::bootstrap_change_ci(
                a,
                b,
                stats::CONFIDENCE,
                stats::RESAMPLES,
                stats::BOOTSTRAP_SEED,
            ),
            significant: enough && b_over_a.is_some() && p_value.is_some_and(|p| p < stats::ALPHA),
            p_value,
            rounds_a: a.len(),
            rounds_b: b.len(),
        }
    }

    /// The verdict as benchstat prints it: `~` when the difference is not significant,
    /// else the change of the median with the half-width of its interval,
    /// `+4.2 % ± 1.3 %`; `too few rounds` with fewer than [`stats::MIN_ROUNDS`] a side.
    pub fn verdict(&self) -> String {
        if self.rounds_a < stats::MIN_ROUNDS || self.rounds_b < stats::MIN_ROUNDS {
            return "too few rounds".to_string();
        }
        match (self.significant, self.b_over_a) {
            (true, Some(r)) => {
                let change = 100.0 * (r - 1.0);
                match self.change_ci {
                    Some(ci) => format!("{change:+.1} % ± {:.1} %", 100.0 * ci.half_width()),
                    None => format!("{change:+.1} %"),
                }
            }
            _ => "~".to_string(),
        }
    }
}

/// Two sides — single results or sets of rounds — and the metrics that compare them.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The baseline.
    pub a: Side,
    /// The side compared with it.
    pub b: Side,
    /// Every metric either side has, in table order.
    pub metrics: Vec<MetricComparison>,
    /// The metrics as a table: Metric, A, B, B/A, and over rounds the intervals, the
    /// change, p and the verdict.
    pub table: Table,
}

/// One row: a metric's label and its value in each round of A and of B (rounds without
/// the figure left out).
struct Row {
    label: String,
    a: Vec<f64>,
    b: Vec<f64>,
    format: fn(f64) -> String,
}

fn count(v: f64) -> String {
    format!("{v:.0}")
}

fn seconds(v: f64) -> String {
    format!("{v:.2}")
}

fn pct(v: f64) -> String {
    format::percent(v, 2)
}

const LATENCIES: [(&str, LatencyFigure); 4] = [
    ("avg", |l| l.avg_us),
    ("p50", |l| l.p50_us),
    ("p99", |l| l.p99_us),
    ("p99.9", |l| l.p999_us),
];

fn rows(a: &[&ResultDocument], b: &[&ResultDocument]) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut push = |label: String, f: &dyn Fn(&ResultDocument) -> Option<f64>, format| {
        let values = |docs: &[&ResultDocument]| -> Vec<f64> {
            docs.iter()
                .filter_map(|d| f(d))
                .filter(|v| v.is_finite())
                .collect()
        };
        let (va, vb) = (values(a), values(b));
        if !va.is_empty() || !vb.is_empty() {
            rows.push(Row {
                label,
                a: va,
                b: vb,
                format,
            });
        }
    };
    push(
        "Throughput (ops/s)".into(),
        &|d| Some(d.results.throughput_ops_per_sec),
        format::rate,
    );
    push(
        "Operations".into(),
        &|d| Some(d.results.operations as f64),
        count,
    );
    push(
        "Runtime (s)".into(),
        &|d| Some(d.results.runtime_ms / 1000.0),
        seconds,
    );
    push(
        "Errors".into(),
        &|d| Some(d.results.errors.values().sum::<u64>() as f64),
        count,
    );
    let mut kinds: Vec<&String> = a
        .iter()
        .chain(b)
        .flat_map(|d| d.results.errors.keys())
        .collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        push(
            format!("Errors: {kind}"),
            &|d| Some(d.results.errors.get(kind).copied().unwrap_or(0) as f64),
            count,
        );
    }
    push("Hit ratio (%)".into(), &read_hit_ratio_pct, pct);
    push(
        "DRAM hits (%)".into(),
        &|d| CacheFigures::of(d)?.dram_hit_pct,
        pct,
    );
    push(
        "Disk hits (%)".into(),
        &|d| CacheFigures::of(d)?.disk_hit_pct,
        pct,
    );
    push(
        "Gets (ops/s)".into(),
        &|d| Some(CacheFigures::of(d)?.get_ops_per_sec),
        format::rate,
    );
    push(
        "Sets (ops/s)".into(),
        &|d| Some(CacheFigures::of(d)?.set_ops_per_sec),
        format::rate,
    );
    for (p, f) in LATENCIES {
        push(
            format!("All operations {p} (µs)"),
            &|d| d.results.overall.as_ref().map(f),
            format::micros,
        );
    }
    let mut ops: Vec<&str> = Vec::new();
    for d in a.iter().chain(b) {
        for o in d.results.ops.iter().chain(&d.results.intended) {
            if !ops.contains(&o.name.as_str()) {
                ops.push(&o.name);
            }
        }
    }
    ops.sort_by_key(|n| n.starts_with("Intended-"));
    for op in ops {
        push(
            format!("{op} operations"),
            &|d| find_op(d, op).map(|o| o.operations as f64),
            count,
        );
        for (p, f) in LATENCIES {
            push(
                format!("{op} {p} (µs)"),
                &|d| find_op(d, op).map(|o| f(&o.latency)),
                format::micros,
            );
        }
    }
    rows
}

/// Why a result's figures need a second look, as short flags: reads that missed, a failed
/// run, a busy machine, a run that had not settled.
pub(crate) fn warnings(round: &Round) -> Vec<String> {
    let d = round.doc();
    let mut flags = Vec::new();
    if d.runner.reads_missed {
        let pct = read_miss_ratio_pct(d).unwrap_or(0.0);
        flags.push(format!(
            "⚠ reads missed {pct:.1}%: the store did not hold the workload's records"
        ));
    }
    if let Some(failure) = &d.runner.failure {
        flags.push(format!("⚠ {failure}"));
    }
    if let Some(busy) = busy(d) {
        flags.push(format!("⚠ {busy}"));
    }
    if let Some(unsettled) = unsettled(round) {
        flags.push(format!("⚠ {unsettled}"));
    }
    flags
}

/// `busy machine: other processes took 35 % of the CPU` for a result taken on a busy
/// machine (`host.busy`).
pub(crate) fn busy(d: &ResultDocument) -> Option<String> {
    let h = &d.host;
    if !h.busy {
        return None;
    }
    let mut what = Vec::new();
    if let Some(p) = h
        .other_cpu_pct
        .filter(|p| *p > crate::host::BUSY_OTHER_CPU_PCT)
    {
        what.push(format!("other processes took {p:.0} % of the CPU"));
    }
    if let Some(p) = h.steal_pct.filter(|p| *p > crate::host::BUSY_STEAL_PCT) {
        what.push(format!("steal {p:.0} %"));
    }
    Some(format!("busy machine: {}", what.join(", ")))
}

/// `not settled: throughput still rising 8.1 % over the last 10 intervals` when the last
/// half of the round's timeline still trends ([`stats::settling`]), in throughput or in
/// p99.
pub(crate) fn unsettled(round: &Round) -> Option<String> {
    let t = round.timeline.as_ref()?;
    let rows = t.full_rows();
    let throughput: Vec<f64> = rows.iter().map(|r| r.throughput_ops_per_sec).collect();
    let p99: Vec<f64> = rows.iter().map(|r| r.p99_us).collect();
    let (what, u) = match stats::settling(&throughput) {
        Some(u) => ("throughput", u),
        None => ("p99", stats::settling(&p99)?),
    };
    Some(format!(
        "not settled: {what} still {} {:.1} % over the last {} intervals (a longer warm-up \
         or run would show its steady state)",
        if u.drift > 0.0 { "rising" } else { "falling" },
        100.0 * u.drift.abs(),
        u.n
    ))
}

/// A one-line description of a side: its result (store, workload, clients, seed) or its
/// rounds, then its warnings.
fn describe(side: &Side) -> String {
    let first = &side.rounds[0];
    let d = first.doc();
    let (threads, connections, pipeline) = d.runner.clients();
    let mut clients = format!("{threads}×{connections}");
    if pipeline > 1 {
        clients.push_str(&format!("×{pipeline}"));
    }
    let mut line = match side.only() {
        Some(r) => format!(
            "{} — {} on {}, {} clients, seed {}",
            r.file.display(),
            workload_name(d),
            d.store.display_name(),
            clients,
            d.seed
        ),
        None => format!(
            "{} — {} rounds of {} on {}, {} clients",
            side.path.display(),
            side.rounds.len(),
            workload_name(d),
            d.store.display_name(),
            clients,
        ),
    };
    let several = side.rounds.len() > 1;
    for r in &side.rounds {
        for w in warnings(r) {
            if several {
                line.push_str(&format!(" — round {}: {w}", r.number));
            } else {
                line.push_str(&format!(" — {w}"));
            }
        }
    }
    line
}

impl Comparison {
    /// Compares two sides.
    pub fn new(a: Side, b: Side) -> Comparison {
        let docs = |s: &Side| -> Vec<ResultDocument> {
            s.rounds.iter().map(|r| r.doc().clone()).collect()
        };
        let (da, db) = (docs(&a), docs(&b));
        let (ra, rb): (Vec<&ResultDocument>, Vec<&ResultDocument>) =
            (da.iter().collect(), db.iter().collect());
        let rows = rows(&ra, &rb);
        let metrics: Vec<MetricComparison> = rows
            .iter()
            .map(|r| MetricComparison::new(r.label.clone(), &r.a, &r.b))
            .collect();
        let over_rounds = a.rounds.len() > 1 || b.rounds.len() > 1;
        let mut columns = vec![
            ("Metric", Align::Left),
            ("A", Align::Right),
            ("B", Align::Right),
            ("B/A", Align::Right),
        ];
        if over_rounds {
            columns.extend([
                ("A 95 % CI", Align::Right),
                ("B 95 % CI", Align::Right),
                ("Change (95 % CI)", Align::Right),
                ("p", Align::Right),
                ("Verdict", Align::Left),
            ]);
        }
        let mut table = Table::new("Comparison", &columns);
        for (row, m) in rows.iter().zip(&metrics) {
            let cell = |v: Option<f64>| match v {
                Some(v) => ((row.format)(v), Some(v)),
                None => ("–".to_string(), None),
            };
            let ratio = match (m.a, m.b) {
                (Some(x), Some(y)) => (format::ratio(y, x), m.b_over_a),
                _ => ("–".to_string(), None),
            };
            let mut cells = vec![(row.label.clone(), None), cell(m.a), cell(m.b), ratio];
            if over_rounds {
                let interval = |ci: Option<Interval>| match ci {
                    Some(ci) => (
                        format!("{} … {}", (row.format)(ci.low), (row.format)(ci.high)),
                        None,
                    ),
                    None => ("–".to_string(), None),
                };
                let change = match m.change_ci {
                    Some(ci) => (
                        format!("{:+.1} … {:+.1} %", 100.0 * ci.low, 100.0 * ci.high),
                        None,
                    ),
                    None => ("–".to_string(), None),
                };
                let p = match m.p_value {
                    Some(p) => (format!("{p:.3}"), Some(p)),
                    None => ("–".to_string(), None),
                };
                cells.extend([
                    interval(m.a_ci),
                    interval(m.b_ci),
                    change,
                    p,
                    (m.verdict(), None),
                ]);
            }
            table.push(cells);
        }
        Comparison {
            a,
            b,
            metrics,
            table,
        }
    }

    /// Compares the results at `a` and `b`: each a `result.json`, a result directory, or a
    /// directory of one cell's rounds ([`Side::load`]).
    pub fn load(a: &Path, b: &Path) -> Result<Comparison, ReportError> {
        Ok(Comparison::new(Side::load(a)?, Side::load(b)?))
    }

    /// How the statistics were made, and what they cannot say: a few lines for the text
    /// outputs.
    fn method(&self) -> String {
        let (na, nb) = (self.a.rounds.len(), self.b.rounds.len());
        if na == 1 && nb == 1 {
            return format!(
                "One round each: no intervals, p-values or verdicts (compare sets of rounds, \
                 at least {} each, for those).",
                stats::MIN_ROUNDS
            );
        }
        let mut s = format!(
            "A: {na} round{}, B: {nb} round{}. Medians over rounds; intervals: 95 % {} \
             (seed {:#x}); p: two-sided Mann–Whitney U, as benchstat; verdict `~`: no \
             significant difference at α = {}.",
            if na == 1 { "" } else { "s" },
            if nb == 1 { "" } else { "s" },
            stats::BOOTSTRAP_METHOD,
            stats::BOOTSTRAP_SEED,
            stats::ALPHA
        );
        if na < stats::MIN_ROUNDS || nb < stats::MIN_ROUNDS {
            s.push_str(&format!(
                " Too few rounds for a verdict: at least {} a side are needed (with fewer no \
                 difference can reach p < {}).",
                stats::MIN_ROUNDS,
                stats::ALPHA
            ));
        }
        s
    }

    /// The comparison: which results A and B are, how the statistics were made, then the
    /// table.
    pub fn render(&self, format: ComparisonFormat) -> String {
        let (a, b) = (describe(&self.a), describe(&self.b));
        match format {
            ComparisonFormat::Markdown => format!(
                "- A: {}\n- B: {}\n\n{}\n\n{}",
                a.replace('|', "\\|"),
                b.replace('|', "\\|"),
                self.method(),
                self.table.to_markdown()
            ),
            ComparisonFormat::Terminal => {
                format!(
                    "A: {a}\nB: {b}\n\n{}\n\n{}",
                    self.method(),
                    self.table.to_terminal()
                )
            }
        }
    }

    /// `kvlab compare --json`: `a` and `b` (the first result of each side — file, store,
    /// workload, phase, clients, seed — with `rounds`, `files`, `busy` and `unsettled`),
    /// `method`, and `metrics`: each `{metric, a, b, b_over_a, a_ci, b_ci, change_ci,
    /// p_value, significant, rounds_a, rounds_b, verdict}` with plain numbers, intervals as
    /// two-element arrays, and null where there is no figure.
    pub fn to_json(&self) -> serde_json::Value {
        let num = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map_or(serde_json::Value::Null, serde_json::Value::from)
        };
        let interval = |ci: Option<Interval>| {
            ci.map_or(serde_json::Value::Null, |ci| {
                serde_json::json!([ci.low, ci.high])
            })
        };
        let metrics: Vec<serde_json::Value> = self
            .metrics
            .iter()
            .map(|m| {
                serde_json::json!({
                    "metric": m.metric,
                    "a": num(m.a),
                    "b": num(m.b),
                    "b_over_a": num(m.b_over_a),
                    "a_ci": interval(m.a_ci),
                    "b_ci": interval(m.b_ci),
                    "change_ci": interval(m.change_ci),
                    "p_value": num(m.p_value),
                    "significant": m.significant,
                    "rounds_a": m.rounds_a,
                    "rounds_b": m.rounds_b,
                    "verdict": m.verdict(),
                })
            })
            .collect();
        serde_json::json!({
            "a": side_json(&self.a),
            "b": side_json(&self.b),
            "method": {
                "center": "median over rounds",
                "interval": stats::BOOTSTRAP_METHOD,
                "confidence": stats::CONFIDENCE,
                "bootstrap_seed": stats::BOOTSTRAP_SEED,
                "test": "two-sided Mann-Whitney U (exact without ties up to 50 a side, else normal with tie and continuity corrections)",
                "alpha": stats::ALPHA,
                "min_rounds": stats::MIN_ROUNDS,
            },
            "metrics": metrics,
        })
    }
}

/// A side of a comparison as JSON: its first result's file, store, workload, phase,
/// clients and seed (a string too, since a JSON number loses digits beyond 2^53 in most
/// readers), its rounds' files, and which rounds ran on a busy machine or had not settled.
fn side_json(side: &Side) -> serde_json::Value {
    let r = &side.rounds[0];
    let d = r.doc();
    let (threads, connections, pipeline) = d.runner.clients();
    serde_json::json!({
        "file": r.result.file.display().to_string(),
        "path": side.path.display().to_string(),
        "store": d.store.display_name(),
        "workload": d.workload_label.clone().unwrap_or_else(|| {
            d.runner.property_files.join("+")
        }),
        "phase": d.phase.as_str(),
        "threads": threads,
        "connections": connections,
        "pipeline": pipeline,
        "seed": d.seed,
        "seed_string": d.seed.to_string(),
        "rounds": side.rounds.len(),
        "files": side.rounds.iter().map(|r| r.result.file.display().to_string()).collect::<Vec<_>>(),
        "busy": side.rounds.iter().filter(|r| r.doc().host.busy).map(|r| r.number).collect::<Vec<_>>(),
        "unsettled": side.rounds.iter().filter(|r| unsettled(r).is_some()).map(|r| r.number).collect::<Vec<_>>(),
    })
}

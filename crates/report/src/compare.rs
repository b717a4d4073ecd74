//! [`Comparison`]: two results side by side — throughput, latency per operation, errors,
//! hit ratio — with the ratio B/A.

use std::path::Path;

use crate::format;
use crate::load::{find_result_files, ResultDir};
use crate::study::{
    find_op, read_hit_ratio_pct, read_miss_ratio_pct, workload_name, CacheFigures, LatencyFigure,
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

/// Two results and the table that compares them.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The baseline.
    pub a: ResultDir,
    /// The result compared with it.
    pub b: ResultDir,
    /// Metric, A, B, B/A.
    pub table: Table,
}

/// The one result at or below `path`: a `result.json`, a directory holding one, or a
/// directory with exactly one below it.
fn one_result(path: &Path) -> Result<ResultDir, ReportError> {
    let files = find_result_files(path)?;
    match files.as_slice() {
        [file] => ResultDir::open(file),
        _ => Err(ReportError::SeveralResults {
            path: path.to_path_buf(),
            count: files.len(),
        }),
    }
}

/// One row: a metric's label and its value in A and B (`None`: A or B has no such figure).
struct Row {
    label: String,
    a: Option<f64>,
    b: Option<f64>,
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

fn rows(a: &ResultDocument, b: &ResultDocument) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut push = |label: String, f: &dyn Fn(&ResultDocument) -> Option<f64>, format| {
        let (va, vb) = (f(a), f(b));
        if va.is_some() || vb.is_some() {
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
        .results
        .errors
        .keys()
        .chain(b.results.errors.keys())
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
    for d in [a, b] {
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

/// A one-line description of a result: store, workload, clients, seed.
fn describe(r: &ResultDir) -> String {
    let d = &r.doc;
    let (threads, connections, pipeline) = d.runner.clients();
    let mut clients = format!("{threads}×{connections}");
    if pipeline > 1 {
        clients.push_str(&format!("×{pipeline}"));
    }
    let mut line = format!(
        "{} — {} on {}, {} clients, seed {}",
        r.file.display(),
        workload_name(d),
        d.store.display_name(),
        clients,
        d.seed
    );
    // What makes the figures not those of a working store, as the summary's flags.
    if d.runner.reads_missed {
        let pct = read_miss_ratio_pct(d).unwrap_or(0.0);
        line.push_str(&format!(
            " — ⚠ reads missed {pct:.1}%: the store did not hold the workload's records"
        ));
    }
    if let Some(failure) = &d.runner.failure {
        line.push_str(&format!(" — ⚠ {failure}"));
    }
    line
}

impl Comparison {
    /// Compares two results.
    pub fn new(a: ResultDir, b: ResultDir) -> Comparison {
        let mut table = Table::new(
            "Comparison",
            &[
                ("Metric", Align::Left),
                ("A", Align::Right),
                ("B", Align::Right),
                ("B/A", Align::Right),
            ],
        );
        for row in rows(&a.doc, &b.doc) {
            let cell = |v: Option<f64>| match v {
                Some(v) => ((row.format)(v), Some(v)),
                None => ("–".to_string(), None),
            };
            let ratio = match (row.a, row.b) {
                (Some(x), Some(y)) => {
                    let r = format::ratio(y, x);
                    let v = (x != 0.0).then(|| y / x);
                    (r, v)
                }
                _ => ("–".to_string(), None),
            };
            table.push(vec![
                (row.label.clone(), None),
                cell(row.a),
                cell(row.b),
                ratio,
            ]);
        }
        Comparison { a, b, table }
    }

    /// Compares the results at `a` and `b`: each a `result.json`, or a directory with
    /// exactly one at or below it.
    pub fn load(a: &Path, b: &Path) -> Result<Comparison, ReportError> {
        Ok(Comparison::new(one_result(a)?, one_result(b)?))
    }

    /// The comparison: which results A and B are, then the table.
    pub fn render(&self, format: ComparisonFormat) -> String {
        let (a, b) = (describe(&self.a), describe(&self.b));
        match format {
            ComparisonFormat::Markdown => format!(
                "- A: {}\n- B: {}\n\n{}",
                a.replace('|', "\\|"),
                b.replace('|', "\\|"),
                self.table.to_markdown()
            ),
            ComparisonFormat::Terminal => {
                format!("A: {a}\nB: {b}\n\n{}", self.table.to_terminal())
            }
        }
    }
}

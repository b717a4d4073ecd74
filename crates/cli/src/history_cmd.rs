//! `kvlab history`: results kept in an SQLite database (`kvlab_history`), a metric's
//! series over time, and the change points that mark regressions — a CI gate for
//! nightly benchmarks (`history changes --fail-on-regression 5%`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kvlab_history::{Added, Filter, History, Series};
use kvlab_report::chart::{Axis, LineChart, Palette, Point, Series as Line};

use crate::args::usage;

/// `kvlab history …`.
#[derive(Args, Debug)]
pub(crate) struct HistoryCommand {
    #[command(subcommand)]
    command: HistorySub,
}

#[derive(Subcommand, Debug)]
enum HistorySub {
    /// Store the results below result directories in the history database.
    Add(AddArgs),
    /// Print a metric's series over time, per store × workload × clients; --html also
    /// writes a chart.
    Show(ShowArgs),
    /// Find change points in each series (E-divisive means, permutation test) and,
    /// with --fail-on-regression, exit 1 when the newest results form a regression.
    Changes(ChangesArgs),
}

/// The database and which series.
#[derive(Args, Debug)]
struct Select {
    /// The history database (SQLite), created if missing.
    #[arg(long, value_name = "FILE", default_value = kvlab_history::DEFAULT_DB)]
    db: PathBuf,
    /// The metric: throughput, p50, p99, p99.9, avg, max, errors, operations, or an
    /// operation's (READ.p99).
    #[arg(long, value_name = "NAME", default_value = "throughput")]
    metric: String,
    /// Only this store (its label or kind, as reports name it).
    #[arg(long, value_name = "NAME")]
    store: Option<String>,
    /// Only this workload (as reports name it: workloada, a suite's workload name).
    #[arg(long, value_name = "NAME")]
    workload: Option<String>,
    /// Only results with this tag.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_tag)]
    tag: Option<(String, String)>,
}

#[derive(Args, Debug)]
struct AddArgs {
    /// The history database (SQLite), created if missing.
    #[arg(long, value_name = "FILE", default_value = kvlab_history::DEFAULT_DB)]
    db: PathBuf,
    /// A label stored with every result added, e.g. the store's version or a commit:
    /// --tag rocksdb=7.8.3 (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_tag)]
    tag: Vec<(String, String)>,
    /// Result directories (searched recursively for result.json) or result.json files.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
}

#[derive(Args, Debug)]
struct ShowArgs {
    #[command(flatten)]
    select: Select,
    /// Also write the series as a self-contained HTML page with a chart.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Print the series as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct ChangesArgs {
    #[command(flatten)]
    select: Select,
    /// Print the change points as JSON: `changes[]` with series, index, time,
    /// before_median, after_median, change, p_value.
    #[arg(long)]
    json: bool,
    /// Exit 1 when a series' newest change point is a regression (throughput lower,
    /// latency higher) of more than this: 5% or 0.05.
    #[arg(long, value_name = "PCT", value_parser = parse_threshold)]
    fail_on_regression: Option<f64>,
}

fn parse_tag(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("`{s}`: expected NAME=VALUE, e.g. rocksdb=7.8.3")),
    }
}

/// `5%` → 0.05, `0.05` → 0.05.
fn parse_threshold(s: &str) -> Result<f64, String> {
    let bad = || format!("`{s}`: expected a share such as 5% or 0.05");
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
        None => s.trim().parse::<f64>().map_err(|_| bad())?,
    };
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(bad())
    }
}

/// Runs `kvlab history`.
pub(crate) fn history(c: HistoryCommand) -> Result<ExitCode> {
    match c.command {
        HistorySub::Add(a) => add(a),
        HistorySub::Show(a) => show(a),
        HistorySub::Changes(a) => changes(a),
    }
}

fn open(db: &Path) -> Result<History> {
    History::open(db).map_err(|e| anyhow::anyhow!("{e}"))
}

fn add(a: AddArgs) -> Result<ExitCode> {
    add_dirs(&a.db, &a.dirs, &a.tag)?;
    Ok(ExitCode::SUCCESS)
}

/// Adds every result below `dirs` to the history in `db` with `tags`, and says how many
/// were new (`kvlab history add`, `kvlab suite --history`).
pub(crate) fn add_dirs(db: &Path, dirs: &[PathBuf], tags: &[(String, String)]) -> Result<()> {
    let mut files = Vec::new();
    for dir in dirs {
        files.extend(kvlab_report::find_result_files(dir).map_err(|e| usage(e.to_string()))?);
    }
    let mut h = open(db)?;
    let (mut new, mut there) = (0, 0);
    for file in &files {
        let doc = kvlab_report::ResultDocument::load(file).map_err(|e| anyhow::anyhow!("{e}"))?;
        match h
            .add(&doc, file, tags)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("adding {}", file.display()))?
        {
            Added::New => new += 1,
            Added::AlreadyThere => there += 1,
        }
    }
    eprintln!(
        "kvlab: added {new} result{} to {} ({there} already there; {} in all)",
        if new == 1 { "" } else { "s" },
        db.display(),
        h.len().map_err(|e| anyhow::anyhow!("{e}"))?
    );
    Ok(())
}

fn select(s: &Select) -> Result<Vec<Series>> {
    if !s.db.is_file() {
        return Err(usage(format!(
            "{}: no history database (create one with `kvlab history add`)",
            s.db.display()
        )));
    }
    let h = open(&s.db)?;
    let filter = Filter {
        store: s.store.clone(),
        workload: s.workload.clone(),
        tag: s.tag.clone(),
    };
    let metric = kvlab_history::metric_name(&s.metric);
    let series = h
        .series(&metric, &filter)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if series.is_empty() {
        return Err(usage(format!(
            "{}: no results with {metric} match the selection",
            s.db.display()
        )));
    }
    Ok(series)
}

fn title(s: &Series) -> String {
    format!("{} — {} — {}", s.store, s.workload, s.clients)
}

fn show(a: ShowArgs) -> Result<ExitCode> {
    let series = select(&a.select)?;
    let mut out = String::new();
    if a.json {
        let v: Vec<serde_json::Value> = series
            .iter()
            .map(|s| {
                serde_json::json!({
                    "store": s.store,
                    "workload": s.workload,
                    "clients": s.clients,
                    "metric": s.metric,
                    "points": s.points.iter().map(|p| serde_json::json!({
                        "time": p.time,
                        "value": p.value,
                        "kvlab_version": p.kvlab_version,
                        "tags": p.tags,
                        "busy": p.busy,
                        "file": p.file,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        out = serde_json::to_string_pretty(&serde_json::json!({ "series": v }))?;
        out.push('\n');
    } else {
        for s in &series {
            out.push_str(&format!("{} ({})\n", title(s), s.metric));
            for p in &s.points {
                let mut line =
                    format!("  {}  {:>14.2}  kvlab {}", p.time, p.value, p.kvlab_version);
                if !p.tags.is_empty() {
                    line.push_str(&format!("  {}", p.tags.join(" ")));
                }
                if p.busy {
                    line.push_str("  ⚠ busy machine");
                }
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    if let Some(path) = &a.html {
        kvlab_report::write_atomic(path, html(&series).as_bytes(), true)
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("kvlab: chart in {}", path.display());
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// One self-contained page: a line chart of every series, by result number.
fn html(series: &[Series]) -> String {
    let palette = Palette::new(series.iter().map(title));
    let metric = series.first().map_or("", |s| s.metric.as_str());
    let chart = LineChart {
        title: format!("{metric} over time"),
        x: Axis::linear("Result (oldest first)"),
        y: Axis::linear(metric.to_string()),
        series: series
            .iter()
            .map(|s| {
                Line::new(
                    title(s),
                    palette.color(&title(s)),
                    s.points
                        .iter()
                        .enumerate()
                        .map(|(i, p)| Point::new(i as f64, p.value))
                        .collect(),
                )
            })
            .collect(),
        markers: true,
    };
    let rows: String = series
        .iter()
        .flat_map(|s| {
            s.points.iter().enumerate().map(move |(i, p)| {
                format!(
                    "<tr><td>{}</td><td>{i}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    escape(&title(s)),
                    escape(&p.time),
                    p.value,
                    escape(&p.tags.join(" "))
                )
            })
        })
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>kvlab history: {m}</title>\n<style>body{{font-family:sans-serif;margin:2em}}\
         svg{{max-width:100%}}table{{border-collapse:collapse}}td,th{{padding:2px 8px;\
         border-bottom:1px solid #ddd}}</style>\n</head>\n<body>\n<h1>kvlab history: {m}</h1>\n\
         {svg}\n<table>\n<tr><th>Series</th><th>#</th><th>Time</th><th>Value</th>\
         <th>Tags</th></tr>\n{rows}</table>\n</body>\n</html>\n",
        m = escape(metric),
        svg = chart.to_svg(),
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn changes(a: ChangesArgs) -> Result<ExitCode> {
    let series = select(&a.select)?;
    let mut all = Vec::new();
    let mut failing = Vec::new();
    for s in &series {
        let found = kvlab_history::changes(s);
        if let (Some(threshold), Some(newest)) = (a.fail_on_regression, found.last()) {
            if newest.regression && newest.change.abs() > threshold {
                failing.push(format!(
                    "{}: {:+.1} % from {} (p = {:.3})",
                    title(s),
                    100.0 * newest.change,
                    newest.time,
                    newest.p_value
                ));
            }
        }
        all.push((s, found));
    }
    let mut out = String::new();
    if a.json {
        let changes: Vec<serde_json::Value> = all
            .iter()
            .flat_map(|(s, found)| {
                found.iter().map(move |c| {
                    serde_json::json!({
                        "series": {
                            "store": s.store,
                            "workload": s.workload,
                            "clients": s.clients,
                            "metric": s.metric,
                        },
                        "index": c.index,
                        "time": c.time,
                        "before_median": c.before_median,
                        "after_median": c.after_median,
                        "change": c.change,
                        "p_value": c.p_value,
                        "regression": c.regression,
                    })
                })
            })
            .collect();
        out = serde_json::to_string_pretty(&serde_json::json!({ "changes": changes }))?;
        out.push('\n');
    } else {
        for (s, found) in &all {
            out.push_str(&format!(
                "{} ({}, {} results): ",
                title(s),
                s.metric,
                s.points.len()
            ));
            if found.is_empty() {
                out.push_str("no change point\n");
                continue;
            }
            out.push('\n');
            for c in found {
                out.push_str(&format!(
                    "  at #{} ({}): median {:.2} → {:.2} ({:+.1} %{}), p = {:.3}\n",
                    c.index,
                    c.time,
                    c.before_median,
                    c.after_median,
                    100.0 * c.change,
                    if c.regression { ", a regression" } else { "" },
                    c.p_value
                ));
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    if !failing.is_empty() {
        for f in &failing {
            eprintln!("kvlab: regression: {f}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

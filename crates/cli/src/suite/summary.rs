//! The summary: each store × workload × concurrency over its rounds — mean, minimum,
//! maximum and coefficient of variation of throughput and p99, monitor means — and the
//! flags for rounds that vary too much or failed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Context, Result};
use kvlab_report::ResultDocument;
use serde::Serialize;

use super::execute::{auto_rounds, result_dirs, write_json, Runner, Status};
use super::matrix::DataMode;

/// Mean, minimum, maximum and coefficient of variation of a cell's rounds.
#[derive(Debug, Clone, Serialize)]
struct Spread {
    mean: f64,
    min: f64,
    max: f64,
    /// Sample standard deviation over the mean, in percent; none with fewer than two
    /// rounds.
    cv_pct: Option<f64>,
}

impl Spread {
    fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let cv_pct = (values.len() >= 2 && mean != 0.0).then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            100.0 * var.sqrt() / mean.abs()
        });
        Some(Spread {
            mean,
            min,
            max,
            cv_pct,
        })
    }
}

/// One row of the summary: a cell over its rounds.
#[derive(Debug, Clone, Serialize)]
pub(super) struct SummaryRow {
    store: String,
    workload: String,
    threads: usize,
    connections: usize,
    rounds: u32,
    rounds_ok: usize,
    rounds_failed: usize,
    throughput_ops_per_sec: Option<Spread>,
    p99_us: Option<Spread>,
    /// Reads that found no record over reads answered, percent, mean over the rounds
    /// that read; none without reads.
    read_miss_pct: Option<f64>,
    /// Per round, in round order: throughput and p99 (absent for a round without a result).
    per_round: Vec<serde_json::Value>,
    /// Means over the rounds of the monitor's means, when the suite monitored.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    monitor: BTreeMap<String, f64>,
    pub(super) flagged: bool,
    flags: Vec<String>,
}

/// The monitor columns the summary shows.
const SUMMARY_MONITOR: &[(&str, &str)] = &[
    ("cpu.kvlab_cpu_pct", "mean"),
    ("cpu.server_cpu_pct", "mean"),
    ("memory.server_rss_bytes", "max"),
    ("dbsize.data_dir_bytes", "max"),
];

/// A cell's monitor summary, the columns the summary shows, added to `monitor`.
fn add_monitor_summary(dir: &std::path::Path, monitor: &mut BTreeMap<String, Vec<f64>>) {
    let msum = std::fs::read_to_string(dir.join("monitor").join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<kvlab_monitor::MonitorSummary>(&t).ok());
    if let Some(m) = msum {
        for (col, stat) in SUMMARY_MONITOR {
            if let Some(cs) = m.columns.get(*col) {
                let v = if *stat == "max" { cs.max } else { cs.mean };
                monitor.entry(format!("{col}.{stat}")).or_default().push(v);
            }
        }
    }
}

impl Runner<'_> {
    fn summary_rows(&self) -> Vec<SummaryRow> {
        let plan = self.plan;
        let mut groups: BTreeMap<(usize, usize, usize, usize), Vec<usize>> = BTreeMap::new();
        for (i, c) in plan.cells.iter().enumerate() {
            groups
                .entry((c.store, c.workload, c.threads, c.connections))
                .or_default()
                .push(i);
        }
        let mut rows = Vec::new();
        for ((s, w, t, c), mut idx) in groups {
            idx.sort_by_key(|&i| plan.cells[i].round);
            let mut thr = Vec::new();
            let mut p99 = Vec::new();
            let mut misses = Vec::new();
            let mut reads_missed = false;
            let mut per_round = Vec::new();
            let mut monitor: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            let mut failed = 0;
            let mut target_missed = false;
            // Each cell's rounds, in order: the cell itself, or the rounds its run made
            // (`rounds = "auto"`, whose monitor covers them all, in the cell's directory).
            let mut results = Vec::new();
            for &i in &idx {
                let cell = &plan.cells[i];
                let dir = plan.cell_dir(cell);
                if self.cells[i].status == Status::Failed {
                    failed += 1;
                }
                if self.cells[i].status != Status::Ok {
                    results.push((cell.round, None, Some(self.cells[i].status)));
                } else if let Some(doc) = auto_rounds(&dir) {
                    target_missed |= doc["reached"] == serde_json::Value::Bool(false);
                    add_monitor_summary(&dir, &mut monitor);
                    for (r, d) in result_dirs(&dir).into_iter().enumerate() {
                        results.push((r as u32 + 1, Some((d, false)), None));
                    }
                } else {
                    results.push((cell.round, Some((dir, true)), None));
                }
            }
            for (round, dir, status) in results {
                let Some((dir, own_monitor)) = dir else {
                    per_round.push(serde_json::json!({ "round": round, "status": status }));
                    continue;
                };
                let Ok(doc) = ResultDocument::load(&dir.join(kvlab_report::RESULT_FILE)) else {
                    per_round.push(serde_json::json!({ "round": round, "status": "failed" }));
                    failed += 1;
                    continue;
                };
                thr.push(doc.results.throughput_ops_per_sec);
                let p = doc.results.overall.as_ref().map(|o| o.p99_us);
                if let Some(p) = p {
                    p99.push(p);
                }
                // kvlab's own share (keys counted per key), else the READ returns.
                let read = doc.results.ops.iter().find(|o| o.name == "READ");
                let share = doc.runner.read_miss_share.or_else(|| {
                    let r = read?;
                    let n = |s: &str| r.returns.get(s).copied().unwrap_or(0) as f64;
                    let answered = n("OK") + n("NOT_FOUND");
                    (answered > 0.0).then(|| n("NOT_FOUND") / answered)
                });
                misses.extend(share.map(|s| 100.0 * s));
                reads_missed |= doc.runner.reads_missed;
                per_round.push(serde_json::json!({
                    "round": round,
                    "status": "ok",
                    "throughput_ops_per_sec": doc.results.throughput_ops_per_sec,
                    "p99_us": p,
                }));
                if own_monitor {
                    add_monitor_summary(&dir, &mut monitor);
                }
            }
            let throughput = Spread::of(&thr);
            let p99s = Spread::of(&p99);
            let mut flags = Vec::new();
            for (what, sp) in [("throughput", &throughput), ("p99", &p99s)] {
                if let Some(cv) = sp.as_ref().and_then(|s| s.cv_pct) {
                    if cv > self.cv_threshold {
                        flags.push(format!("{what} CV {cv:.1}% > {}%", self.cv_threshold));
                    }
                }
            }
            if failed > 0 {
                flags.push(format!("{failed} round(s) failed"));
            }
            if target_missed {
                flags.push("rounds target not reached".to_string());
            }
            let read_miss_pct = Spread::of(&misses).map(|s| s.mean);
            if reads_missed {
                // A YCSB workload's reads should all find their records (kvlab marked it).
                flags.push(format!("reads missed {:.1}%", read_miss_pct.unwrap_or(0.0)));
            }
            rows.push(SummaryRow {
                store: plan.stores[s].name.clone(),
                workload: plan.workloads[w].name.clone(),
                threads: t,
                connections: c,
                rounds: per_round.len() as u32,
                rounds_ok: thr.len(),
                rounds_failed: failed,
                throughput_ops_per_sec: throughput,
                p99_us: p99s,
                read_miss_pct,
                per_round,
                monitor: monitor
                    .into_iter()
                    .map(|(k, v)| (k, v.iter().sum::<f64>() / v.len() as f64))
                    .collect(),
                flagged: !flags.is_empty(),
                flags,
            });
        }
        rows
    }

    /// Writes `summary.json` and `summary.md`; returns the rows.
    pub(super) fn write_summary(&self) -> Result<Vec<SummaryRow>> {
        let plan = self.plan;
        let rows = self.summary_rows();
        write_json(
            &plan.out.join("summary.json"),
            &serde_json::json!({
                "suite": plan.name,
                "cv_threshold_pct": self.cv_threshold,
                "rounds": plan.rounds_label(),
                "server_restarts": self.restarts,
                "stopped_because": self.stopped,
                "cells": rows,
            }),
        )?;
        let mut md = String::new();
        let _ = writeln!(md, "# Suite `{}`\n", plan.name);
        if let Some(d) = &plan.description {
            let _ = writeln!(md, "{}\n", d.trim());
        }
        let _ = writeln!(
            md,
            "{} cells × {}; per cell the mean, minimum and maximum over its rounds and \
             the coefficient of variation (CV = sample standard deviation / mean). Cells whose \
             CV exceeds {}% are flagged, and so are cells whose reads missed where every read \
             should find its record. Throughput in operations per second, p99 over all \
             operations in microseconds, read misses in percent of the reads answered.\n",
            rows.len(),
            plan.rounds_text(),
            self.cv_threshold
        );
        let show_monitor = rows.iter().any(|r| !r.monitor.is_empty());
        md.push_str("| store | workload | concurrency | rounds ok | ops/s mean | ops/s min | ops/s max | ops/s CV | p99 µs mean | p99 min | p99 max | p99 CV | read misses % |");
        if show_monitor {
            md.push_str(" kvlab CPU % | server CPU % | server RSS MiB max |");
        }
        md.push_str(" flags |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        if show_monitor {
            md.push_str("---:|---:|---:|");
        }
        md.push_str("---|\n");
        let num = |v: Option<f64>, digits: usize| match v {
            Some(v) if v.is_finite() => format!("{v:.digits$}"),
            _ => "–".into(),
        };
        let cv = |s: &Option<Spread>| match s.as_ref().and_then(|s| s.cv_pct) {
            Some(c) => format!("{c:.1}%"),
            None => "–".into(),
        };
        for r in &rows {
            let t = r.throughput_ops_per_sec.as_ref();
            let p = r.p99_us.as_ref();
            let _ = write!(
                md,
                "| {} | {} | t{}-c{} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.store,
                r.workload,
                r.threads,
                r.connections,
                r.rounds_ok,
                r.rounds,
                num(t.map(|s| s.mean), 0),
                num(t.map(|s| s.min), 0),
                num(t.map(|s| s.max), 0),
                cv(&r.throughput_ops_per_sec),
                num(p.map(|s| s.mean), 1),
                num(p.map(|s| s.min), 1),
                num(p.map(|s| s.max), 1),
                cv(&r.p99_us),
                num(r.read_miss_pct, 1),
            );
            if show_monitor {
                let _ = write!(
                    md,
                    " {} | {} | {} |",
                    num(r.monitor.get("cpu.kvlab_cpu_pct.mean").copied(), 0),
                    num(r.monitor.get("cpu.server_cpu_pct.mean").copied(), 0),
                    num(
                        r.monitor
                            .get("memory.server_rss_bytes.max")
                            .map(|b| b / 1048576.0),
                        1
                    ),
                );
            }
            let _ = writeln!(
                md,
                " {} |",
                if r.flagged {
                    r.flags.join("; ")
                } else {
                    String::new()
                }
            );
        }
        if !self.loads.is_empty() || plan.datasets.iter().any(|d| d.mode != DataMode::InCell) {
            let _ = writeln!(
                md,
                "\n{} data set{}; {} load{} in this invocation (see suite.json).",
                plan.datasets.len(),
                if plan.datasets.len() == 1 { "" } else { "s" },
                self.loads.len(),
                if self.loads.len() == 1 { "" } else { "s" },
            );
        }
        if self.restarts > 0 {
            let _ = writeln!(
                md,
                "\nA server the suite started died and was started again {} time{} (its data \
                 loaded again, the cell it died in run again; see suite.json).",
                self.restarts,
                if self.restarts == 1 { "" } else { "s" },
            );
        }
        if let Some(reason) = &self.stopped {
            let _ = writeln!(md, "\nThe suite stopped before the end: {reason}.");
        }
        kvlab_report::write_atomic(&plan.out.join("summary.md"), md.as_bytes(), true)
            .context("writing summary.md")?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_rounds() {
        let s = Spread::of(&[90.0, 100.0, 110.0]).unwrap();
        assert_eq!((s.mean, s.min, s.max), (100.0, 90.0, 110.0));
        // Sample standard deviation 10 over mean 100.
        assert!((s.cv_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(Spread::of(&[5.0]).unwrap().cv_pct, None);
        assert!(Spread::of(&[]).is_none());
    }
}

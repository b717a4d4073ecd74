//! What a phase writes: the YCSB or memtier report on stdout, result.json (with its
//! runner section), memtier's result files, and secrets redacted from all of them.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use kvlab_core::{StatValue, Store, StoreStats};
use kvlab_memtier::{files as memtier_files, report as memtier_report};
use kvlab_report::{Loop, RunnerSection, SineRate};
use kvlab_report::{ResultDocument, StoreSection};
use kvlab_runner::{RunOutcome, TargetRate, Warmup};
use kvlab_workload::AnyWorkload;

use crate::phase::db_bench;
use crate::phase::open::stats_map;
use crate::phase::{
    failure, first_errors, read_miss_share, reads_missed, PhaseSpec, ReportStyle, RunDone,
};

/// The command line as stored in results: passwords in URLs and the value of memtier's
/// `-a`/`--authenticate` replaced by `***`.
pub fn redact_args(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut secret_next = false;
    for a in args {
        if secret_next {
            out.push("***".into());
            secret_next = false;
            continue;
        }
        if a == "-a" || a == "--authenticate" {
            secret_next = true;
            out.push(a);
        } else if a.starts_with("--authenticate=") {
            out.push("--authenticate=***".into());
        } else if a.starts_with("-a") && a.len() > 2 && !a.starts_with("--") {
            out.push("-a***".into());
        } else {
            out.push(redact_settings(&kvlab_report::redact_url(&a)));
        }
    }
    out
}

/// Server settings whose values are secrets: hidden wherever settings are shown.
pub const SECRET_SETTINGS: &[&str] = &["requirepass", "masterauth"];

/// `--spawn` settings with the values of [`SECRET_SETTINGS`] replaced by `***`
/// (`requirepass=x,maxmemory=1gb` → `requirepass=***,maxmemory=1gb`).
pub fn redact_settings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, name)) = SECRET_SETTINGS
        .iter()
        .filter_map(|n| rest.find(&format!("{n}=")).map(|at| (at, *n)))
        .min()
    {
        let value_start = at + name.len() + 1;
        out.push_str(&rest[..value_start]);
        out.push_str("***");
        let value_len = rest[value_start..]
            .find(',')
            .unwrap_or(rest.len() - value_start);
        rest = &rest[value_start + value_len..];
    }
    out.push_str(rest);
    out
}

/// memtier's per-run files of run `run` (from 1): `--hdr-file-prefix` and
/// `--client-stats`.
pub fn write_memtier_files(ctx: &PhaseSpec, run: u32, done: &RunDone) -> Result<()> {
    let ReportStyle::Memtier(o) = &ctx.report else {
        return Ok(());
    };
    // memtier writes the client files as its threads finish (`run_benchmark`), then the
    // HDR files (`main`).
    if let Some(prefix) = o.client_stats() {
        memtier_files::write_client_stats(prefix, run, &done.outcome, o.command_names())?;
    }
    if let Some(prefix) = o.hdr_file_prefix() {
        memtier_files::write_hdr_files(
            prefix,
            run,
            &done.outcome,
            done.started,
            o.command_names(),
        )?;
    }
    Ok(())
}

/// Where the text report goes: memtier's `--out-file`, or stdout.
pub fn report_output(ctx: &PhaseSpec) -> Result<Box<dyn Write>> {
    Ok(match &ctx.report {
        ReportStyle::Memtier(o) if o.out_file().is_some() => {
            let path = o.out_file().expect("checked just above");
            Box::new(std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("creating {}", path.display()))?,
            ))
        }
        _ => Box::new(std::io::stdout().lock()),
    })
}

/// memtier's `run information` of the JSON document.
pub fn memtier_run_information(
    ctx: &PhaseSpec,
    runtime: Duration,
    interrupted: bool,
) -> serde_json::Map<String, serde_json::Value> {
    let mut run = serde_json::Map::new();
    run.insert("Threads".into(), ctx.plan.threads.into());
    run.insert("Connections per thread".into(), ctx.plan.clients.into());
    run.insert("Pipeline".into(), ctx.plan.pipeline.into());
    run.insert("Seed".into(), ctx.plan.seed.into());
    run.insert(
        "Runtime (msec)".into(),
        (runtime.as_secs_f64() * 1e3).into(),
    );
    run.insert("Interrupted".into(), interrupted.into());
    run
}

/// Prints the report of one run (YCSB's text or memtier's summary and JSON).
pub fn print_report(ctx: &PhaseSpec, done: &RunDone, stats: &StoreStats) -> Result<()> {
    let outcome = &done.outcome;
    let summary = outcome
        .total
        .summary_named(outcome.elapsed, &ctx.workload.command_names());
    let mut out = report_output(ctx)?;
    match &ctx.report {
        ReportStyle::DbBench => {
            writeln!(
                out,
                "{}",
                db_bench::summary_line(outcome, ctx.plan.threads * ctx.plan.clients, &ctx.workload)
            )?;
            kvlab_measure::write_ycsb_text(&summary, &mut out)?;
        }
        ReportStyle::Ycsb => {
            kvlab_measure::write_ycsb_text(&summary, &mut out)?;
            crate::phase::hook::of(ctx).report(ctx, outcome, &mut out)?;
            if matches!(ctx.workload, AnyWorkload::Cache(_))
                || stats.iter().any(|(k, _)| k == "dram_hits")
            {
                write_cache_lines(outcome, stats, &mut out)?;
            }
        }
        ReportStyle::Memtier(o) => {
            memtier_report::print(o, outcome, &mut out)?;
            if let Some(path) = o.json_out() {
                let run = memtier_run_information(ctx, outcome.elapsed, outcome.interrupted);
                let doc = memtier_report::json_document(
                    o,
                    ctx.workload.effective(),
                    run,
                    outcome,
                    &done.seconds,
                );
                let text = serde_json::to_string_pretty(&doc)?;
                eprintln!("Saving JSON output file: {}", path.display());
                kvlab_report::write_atomic(path, text.as_bytes(), true)?;
            }
        }
    }
    if ctx.workload.data_integrity() {
        writeln!(out, "[VERIFY], Operations, {}", outcome.integrity_checked)?;
        writeln!(
            out,
            "[VERIFY], Return=OK, {}",
            outcome.integrity_checked - outcome.integrity_failed
        )?;
        if outcome.integrity_failed > 0 {
            writeln!(
                out,
                "[VERIFY], Return=UNEXPECTED_STATE, {}",
                outcome.integrity_failed
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Prints memtier's report of several runs (`-x`): best, worst and average, and its JSON.
pub fn print_runs_report(ctx: &PhaseSpec, done: Vec<RunDone>) -> Result<()> {
    let ReportStyle::Memtier(o) = &ctx.report else {
        return Ok(());
    };
    let mut out = report_output(ctx)?;
    let (outcomes, seconds): (Vec<RunOutcome>, Vec<Vec<memtier_report::Second>>) =
        done.into_iter().map(|d| (d.outcome, d.seconds)).unzip();
    memtier_report::print_runs(o, &outcomes, &mut out)?;
    out.flush()?;
    if let Some(path) = o.json_out() {
        let runtime = outcomes.iter().map(|r| r.elapsed).sum();
        let interrupted = outcomes.iter().any(|r| r.interrupted);
        let mut run = memtier_run_information(ctx, runtime, interrupted);
        run.insert("Runs".into(), outcomes.len().into());
        let doc = memtier_report::json_document_runs(
            o,
            ctx.workload.effective(),
            run,
            &outcomes,
            &seconds,
        );
        let text = serde_json::to_string_pretty(&doc)?;
        eprintln!("Saving JSON output file: {}", path.display());
        kvlab_report::write_atomic(path, text.as_bytes(), true)?;
    }
    Ok(())
}

/// Writes `result.json` and `timeline.csv` of a finished run into `dir`, if given.
pub fn write_result<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    dir: Option<&Path>,
    done: &RunDone,
    stats: StoreStats,
    extra_stats: StoreStats,
) -> Result<()> {
    let Some(dir) = dir else {
        return Ok(());
    };
    let outcome = &done.outcome;
    let doc = ResultDocument {
        kvlab_version: env!("CARGO_PKG_VERSION").to_string(),
        command: redact_args(std::env::args()),
        phase: ctx.phase,
        started_at: kvlab_report::rfc3339(done.started),
        finished_at: kvlab_report::rfc3339(SystemTime::now()),
        seed: ctx.plan.seed,
        interrupted: outcome.interrupted,
        fell_behind: outcome.fell_behind,
        workload: ctx.workload.effective().into_iter().collect(),
        workload_label: ctx.options.workload_label.clone(),
        runner: RunnerSection {
            unreachable_s: done.unreachable_s,
            faults: done.faults.clone(),
            ..runner_section(ctx, outcome)
        },
        store: StoreSection {
            name: store.name().to_string(),
            label: ctx.options.label.clone(),
            options: stats_map(
                store
                    .options()
                    .into_iter()
                    .chain(ctx.server.clone())
                    .collect(),
            ),
            stats: stats_map(stats.into_iter().chain(extra_stats).collect()),
        },
        host: done.host.finish(),
        results: outcome
            .total
            .summary_named(outcome.elapsed, &ctx.workload.command_names()),
        notes: done.notes.clone(),
        merge: None,
    };
    let mut csv = Vec::new();
    // After the kinds' (and the intended) columns: a replay's merges, `merge_ops,
    // merge_p99_us`, named as the results name them.
    let merge = String::from_utf8_lossy(kvlab_core::MERGE_COMMAND);
    kvlab_measure::write_timeline_csv(
        &done.timeline,
        &kvlab_core::OpKind::ALL,
        &[&merge],
        &mut csv,
    )?;
    kvlab_report::write_atomic(&dir.join("timeline.csv"), &csv, true)?;
    kvlab_report::write_atomic(
        &dir.join("result.json"),
        doc.to_json_pretty().as_bytes(),
        ctx.options.overwrite,
    )?;
    eprintln!("kvlab: results in {}", dir.display());
    Ok(())
}

/// The cache lines of the text report: hit ratio of the gets (reads), get and set
/// throughput, and, when the store reports them, its tiers' hit ratios and evictions.
pub fn write_cache_lines(
    outcome: &RunOutcome,
    stats: &StoreStats,
    out: &mut dyn Write,
) -> Result<()> {
    use kvlab_core::{OpKind, Status};
    let t = &outcome.total;
    let hits = t.status_count(OpKind::Read, Status::Ok);
    let misses = t.status_count(OpKind::Read, Status::NotFound);
    let secs = outcome.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let ratio = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            100.0 * n as f64 / of as f64
        }
    };
    writeln!(out, "[CACHE], Gets, {}", hits + misses)?;
    writeln!(
        out,
        "[CACHE], HitRatio(%), {:.2}",
        ratio(hits, hits + misses)
    )?;
    let int = |name: &str| stat_u64(stats, name);
    if let (Some(dram), Some(disk)) = (int("dram_hits"), int("disk_hits")) {
        let gets = dram + disk + int("misses").unwrap_or(0);
        writeln!(out, "[CACHE], DramHitRatio(%), {:.2}", ratio(dram, gets))?;
        writeln!(out, "[CACHE], DiskHitRatio(%), {:.2}", ratio(disk, gets))?;
    }
    writeln!(
        out,
        "[CACHE], GetThroughput(ops/sec), {:.1}",
        (hits + misses) as f64 / secs
    )?;
    let sets = t.count(OpKind::Insert) + t.count(OpKind::Update);
    writeln!(
        out,
        "[CACHE], SetThroughput(ops/sec), {:.1}",
        sets as f64 / secs
    )?;
    if let Some(e) = ["evictions", "evicted_keys"].iter().find_map(|n| int(n)) {
        writeln!(out, "[CACHE], Evictions, {e}")?;
    }
    Ok(())
}

/// The result's runner section: the plan as run, and what the runner saw.
pub fn runner_section(ctx: &PhaseSpec, outcome: &RunOutcome) -> RunnerSection {
    let p = &ctx.plan;
    let mut r = RunnerSection {
        threads: p.threads as u64,
        connections_per_thread: p.clients as u64,
        pipeline: p.pipeline as u64,
        // Reads counted per key: differs from the READ counts only for multi-key GETs.
        keys_found: outcome.keys_hit,
        keys_not_found: outcome.keys_missed,
        operations: p.operations,
        duration_s: p.duration.map(|d| d.as_secs_f64()),
        warmup: match p.warmup {
            Warmup::None => None,
            Warmup::Ops(n) => Some(serde_json::json!({ "operations": n })),
            Warmup::Time(d) => Some(serde_json::json!({ "seconds": d.as_secs_f64() })),
        },
        target_rate_ops_per_sec: p.target_rate.map(|r| r.mean()),
        loop_kind: if p.target_rate.is_some() {
            Loop::Open
        } else {
            Loop::Closed
        },
        interval_s: p.interval.as_secs_f64(),
        max_errors: p.max_errors,
        max_schedule_lag_ms: outcome.max_schedule_lag_ms,
        error_budget_exceeded: outcome.error_budget_exceeded,
        failed_operations: outcome.total.errors_total(),
        failure: failure(ctx, outcome),
        first_errors: first_errors(outcome)
            .into_iter()
            .map(|e| kvlab_report::FirstError {
                kind: e.kind.name().to_string(),
                message: e.message.clone(),
            })
            .collect(),
        read_miss_share: read_miss_share(outcome),
        reads_missed: reads_missed(ctx, outcome),
        integrity_checked: outcome.integrity_checked,
        integrity_failed: outcome.integrity_failed,
        unfinished_requests: outcome.unfinished,
        measured_start: outcome.measured_start.map(kvlab_report::rfc3339),
        property_files: ctx
            .options
            .property_files
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        overrides: ctx.options.properties.clone(),
        shard: ctx.options.shard,
        ..RunnerSection::default()
    };
    if let Some(TargetRate::Sine {
        mean,
        amplitude,
        period,
    }) = p.target_rate
    {
        r.target_rate_sine = Some(SineRate {
            mean,
            amplitude,
            period_s: period.as_secs_f64(),
        });
    }
    if !outcome.groups.is_empty() {
        // Thread plans: each group's results, in the plan's group order.
        r.group_results = Some(
            outcome
                .groups
                .iter()
                .map(|g| serde_json::to_value(g.summary(outcome.elapsed)).unwrap_or_default())
                .collect(),
        );
    }
    crate::phase::hook::of(ctx).runner(ctx, &mut r);
    r
}

/// The store statistic `name` as a count, when the store reported it as a non-negative
/// integer.
pub fn stat_u64(stats: &StoreStats, name: &str) -> Option<u64> {
    stats.iter().find_map(|(k, v)| match v {
        StatValue::Int(i) if k == name => u64::try_from(*i).ok(),
        _ => None,
    })
}

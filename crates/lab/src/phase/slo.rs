//! `kvlab run --slo p99=1ms,p99.9=5ms`: the highest rate at which the store meets
//! latency targets, and the latency–throughput curve around it.
//!
//! The search runs the workload in steps of `--slo-step` each against the same store:
//! first closed loop, which gives the store's capacity C at this concurrency; then open
//! loop (`--target-rate`) at 10, 30, 50, 70, 80, 90 and 100 % of C — the curve; then it
//! halves the gap between the highest rate that met the targets and the lowest that did
//! not, four times. A step meets the targets when every percentile of its latency from
//! each request's intended start (coordinated omission corrected: a request that waited
//! behind a stalled one is as late as it was) is within its target, it achieved at least
//! 95 % of the offered rate, and no operation failed (beyond `--max-errors`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use kvlab_core::Store;
use kvlab_report::Phase;
use kvlab_runner::{RunPlan, TargetRate};

use crate::options::SloTargets;
use crate::phase::checks::usage;
use crate::phase::output::write_result;
use crate::phase::{run_once, PhaseSpec};
use crate::Interrupted;

/// One step of the search.
#[derive(Clone, Debug, serde::Serialize)]
struct Step {
    /// The offered rate (operations per second); `None` for the closed-loop probe.
    offered_ops_per_sec: Option<f64>,
    achieved_ops_per_sec: f64,
    operations: u64,
    errors: u64,
    /// Latency percentiles in µs: from each request's intended start in open loop,
    /// service time in the closed-loop probe.
    p50_us: f64,
    p99_us: f64,
    p999_us: f64,
    max_us: f64,
    /// The targets' percentiles, in the targets' order (µs).
    target_values_us: Vec<f64>,
    meets: bool,
    /// Why it does not meet the targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    missed: Option<String>,
    /// Its result directory, under `--out`.
    #[serde(skip_serializing_if = "Option::is_none")]
    dir: Option<String>,
}

impl Step {
    /// The curve's numbers: offered and achieved rate, p50, p99, p99.9, max, errors.
    fn columns(&self) -> [f64; 7] {
        [
            self.offered_ops_per_sec.unwrap_or(0.0),
            self.achieved_ops_per_sec,
            self.p50_us,
            self.p99_us,
            self.p999_us,
            self.max_us,
            self.errors as f64,
        ]
    }
}

/// The fractions of the closed-loop capacity the curve is measured at.
const CURVE: [f64; 7] = [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0];
/// Halvings of the gap between the highest rate that met the targets and the lowest that
/// did not.
const REFINEMENTS: usize = 4;
/// The share of the offered rate a step must achieve.
const KEEP_UP: f64 = 0.95;

/// Runs the search on an open store; the exit code is 0 when some rate met the targets,
/// 1 when none did.
pub fn search<S: Store>(ctx: &PhaseSpec, store: &S) -> Result<ExitCode> {
    let targets = ctx.options.slo.clone().expect("search runs with --slo");
    if ctx.phase != Phase::Run {
        return Err(usage("--slo searches with `kvlab run`"));
    }
    if ctx.plan.target_rate.is_some() || ctx.options.duration.is_some() {
        return Err(usage(
            "--slo sets each step's rate and length itself: leave out --target-rate and \
             --duration (--slo-step sets the length)",
        ));
    }
    if let Some(dir) = &ctx.options.out {
        kvlab_report::prepare_out_dir(dir, ctx.options.overwrite)
            .with_context(|| format!("preparing the output directory {}", dir.display()))?;
    }
    let step_length = ctx.options.slo_step;
    eprintln!(
        "kvlab: searching the highest rate meeting {targets} ({} s steps: closed loop, then \
         open loop at {} % of its throughput, then {REFINEMENTS} halvings)",
        step_length.as_secs_f64(),
        CURVE.map(|f| (f * 100.0).to_string()).join(", ")
    );
    let mut steps: Vec<Step> = Vec::new();
    let mut run = |rate: Option<f64>| -> Result<Option<Step>> {
        if ctx.stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let index = steps.len();
        let step = run_step(ctx, store, &targets, rate, index)?;
        eprintln!(
            "kvlab: step {index}: {} offered, {:.0} achieved, p50 {:.1} µs, p99 {:.1} µs, \
             p99.9 {:.1} µs: {}",
            rate.map_or("closed loop".to_string(), |r| format!("{r:.0} ops/s")),
            step.achieved_ops_per_sec,
            step.p50_us,
            step.p99_us,
            step.p999_us,
            match (&step.missed, rate) {
                (_, None) => "the capacity".to_string(),
                (None, _) => "meets the targets".to_string(),
                (Some(why), _) => format!("misses ({why})"),
            }
        );
        steps.push(step.clone());
        Ok(Some(step))
    };
    let Some(probe) = run(None)? else {
        return Err(Interrupted("interrupted: nothing was measured".into()).into());
    };
    let capacity = probe.achieved_ops_per_sec;
    let mut best: Option<f64> = None;
    let mut worst: Option<f64> = None;
    for fraction in CURVE {
        let rate = (capacity * fraction).max(1.0);
        let Some(s) = run(Some(rate))? else { break };
        if s.meets {
            if worst.is_none() {
                best = Some(rate);
            }
        } else if worst.is_none() {
            worst = Some(rate);
        }
    }
    if let Some(mut high) = worst {
        let mut low = best.unwrap_or(0.0);
        for _ in 0..REFINEMENTS {
            let rate = (low + high) / 2.0;
            if rate < 1.0 {
                break;
            }
            let Some(s) = run(Some(rate))? else { break };
            if s.meets {
                low = rate;
                best = Some(rate);
            } else {
                high = rate;
            }
        }
    }

    let interrupted = ctx.stop.load(Ordering::SeqCst);
    let lowest = report_search(ctx, &targets, &steps, capacity, best, interrupted)?;
    if interrupted {
        return Ok(ExitCode::from(130));
    }
    Ok(if best.is_some() {
        ExitCode::SUCCESS
    } else {
        let lowest = lowest.unwrap_or(capacity);
        eprintln!("kvlab: no rate met {targets}, down to {lowest:.0} ops/s");
        ExitCode::from(1)
    })
}

/// The search's table and `[SLO]` lines on stdout, `slo.json` and `curve.csv` in the
/// result directory; the lowest rate offered (for the word when none met the targets).
fn report_search(
    ctx: &PhaseSpec,
    targets: &SloTargets,
    steps: &[Step],
    capacity: f64,
    best: Option<f64>,
    interrupted: bool,
) -> Result<Option<f64>> {
    let mut curve: Vec<&Step> = steps
        .iter()
        .filter(|s| s.offered_ops_per_sec.is_some())
        .collect();
    curve.sort_by(|a, b| {
        let rate = |s: &Step| s.offered_ops_per_sec.unwrap_or(0.0);
        rate(a).total_cmp(&rate(b))
    });
    let at_best = best.and_then(|b| {
        steps
            .iter()
            .find(|s| s.offered_ops_per_sec == Some(b))
            .map(|s| s.achieved_ops_per_sec)
    });
    let summary = serde_json::json!({
        "targets": targets.0.iter().map(|(p, d)| serde_json::json!({
            "percentile": p,
            "latency_us": d.as_secs_f64() * 1e6,
        })).collect::<Vec<_>>(),
        "step_s": ctx.options.slo_step.as_secs_f64(),
        "capacity_ops_per_sec": capacity,
        "max_rate_ops_per_sec": best,
        "achieved_at_max_ops_per_sec": at_best,
        "interrupted": interrupted,
        "steps": steps,
    });
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "| offered ops/s | achieved ops/s | p50 µs | p99 µs | p99.9 µs | max µs | errors | meets {targets} |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|")?;
    for s in &curve {
        let cells: Vec<String> = s
            .columns()
            .iter()
            .zip([0, 0, 1, 1, 1, 1, 0])
            .map(|(v, digits)| format!("{v:.digits$}"))
            .collect();
        let meets = if s.meets { "yes" } else { "no" };
        writeln!(out, "| {} | {meets} |", cells.join(" | "))?;
    }
    writeln!(out)?;
    let max = best.map_or_else(|| "none".to_string(), |b| format!("{b:.0}"));
    writeln!(out, "[SLO], MaxRate(ops/sec), {max}")?;
    writeln!(out, "[SLO], Capacity(ops/sec), {capacity:.0}")?;
    out.flush()?;
    if let Some(dir) = &ctx.options.out {
        let mut json = serde_json::to_string_pretty(&summary)?;
        json.push('\n');
        kvlab_report::write_atomic(&dir.join("slo.json"), json.as_bytes(), true)?;
        let mut csv = String::from(
            "offered_ops_per_sec,achieved_ops_per_sec,p50_us,p99_us,p999_us,max_us,errors,meets\n",
        );
        for s in &curve {
            let cells: Vec<String> = s.columns().iter().map(f64::to_string).collect();
            csv.push_str(&format!("{},{}\n", cells.join(","), s.meets));
        }
        kvlab_report::write_atomic(&dir.join("curve.csv"), csv.as_bytes(), true)?;
        eprintln!("kvlab: results in {}", dir.display());
    }
    Ok(curve.first().and_then(|s| s.offered_ops_per_sec))
}

/// Runs one step: closed loop (`rate` None) or open loop at `rate`, for `--slo-step`;
/// its result directory is `OUT/steps/NN`.
fn run_step<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    targets: &SloTargets,
    rate: Option<f64>,
    index: usize,
) -> Result<Step> {
    let dir = ctx
        .options
        .out
        .as_ref()
        .map(|d| d.join("steps").join(format!("{index:02}")));
    if let Some(dir) = &dir {
        kvlab_report::prepare_out_dir(dir, true)
            .with_context(|| format!("preparing the output directory {}", dir.display()))?;
    }
    let mut args = ctx.options.clone();
    args.out = dir.clone();
    args.target_rate = rate.map(TargetRate::Constant);
    args.duration = Some(ctx.options.slo_step);
    let step_ctx = PhaseSpec {
        options: args,
        plan: RunPlan {
            target_rate: rate.map(TargetRate::Constant),
            duration: Some(ctx.options.slo_step),
            operations: None,
            ..ctx.plan.clone()
        },
        ..ctx.clone()
    };
    let done = run_once(&step_ctx, store, dir.as_deref(), 1)?;
    write_result(
        &step_ctx,
        store,
        dir.as_deref(),
        &done,
        store.stats(),
        Vec::new(),
    )?;
    let total = &done.outcome.total;
    // Closed loop: the service time of every operation, as the result's `overall`.
    // Open loop: every kind's latency from its intended start.
    let h = match rate {
        None => total.overall(),
        Some(_) => {
            let mut h = total.intended_histogram(kvlab_core::OpKind::ALL[0]).clone();
            for kind in &kvlab_core::OpKind::ALL[1..] {
                h.add(total.intended_histogram(*kind))
                    .expect("a recorder's histograms share one precision");
            }
            h
        }
    };
    let us = |p: f64| {
        if h.is_empty() {
            0.0
        } else {
            kvlab_measure::percentile::value_at_percentile(&h, p) as f64 / 1000.0
        }
    };
    let elapsed = done.outcome.elapsed.as_secs_f64();
    let operations = total.operations();
    let achieved = if elapsed > 0.0 {
        operations as f64 / elapsed
    } else {
        0.0
    };
    let errors = total.errors_total();
    let target_values_us: Vec<f64> = targets.0.iter().map(|(p, _)| us(*p)).collect();
    let mut missed = Vec::new();
    if let Some(rate) = rate {
        if achieved < KEEP_UP * rate {
            missed.push(format!(
                "achieved {:.0} % of the rate",
                100.0 * achieved / rate
            ));
        }
        for ((p, target), value) in targets.0.iter().zip(&target_values_us) {
            let target_us = target.as_secs_f64() * 1e6;
            if *value > target_us {
                missed.push(format!("p{p} {value:.1} µs > {target_us} µs"));
            }
        }
        if errors > ctx.plan.max_errors.unwrap_or(0) {
            missed.push(format!("{errors} operations failed"));
        }
        if done.outcome.interrupted {
            missed.push("interrupted".into());
        }
    }
    Ok(Step {
        offered_ops_per_sec: rate,
        achieved_ops_per_sec: achieved,
        operations,
        errors,
        p50_us: us(50.0),
        p99_us: us(99.0),
        p999_us: us(99.9),
        max_us: if h.is_empty() {
            0.0
        } else {
            h.max() as f64 / 1000.0
        },
        target_values_us,
        meets: rate.is_some() && missed.is_empty(),
        missed: (!missed.is_empty()).then(|| missed.join("; ")),
        dir: dir.map(|d| d.display().to_string()),
    })
}

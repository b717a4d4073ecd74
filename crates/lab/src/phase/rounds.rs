//! `kvlab run --rounds N|auto`: the measured run repeated against the same store, each
//! round's results in `OUT/round-N`, and the median throughput with its 95 % interval —
//! with `auto`, repeated until that interval is within `--rounds-target` of the median
//! (3 rounds at least, `--max-rounds` at most), as a careful benchmarker repeats a run on
//! a noisy machine until its figure settles.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use kvlab_core::{Store, StoreStats};
use kvlab_report::stats::{bootstrap_median_ci, median, Interval, BOOTSTRAP_METHOD};

use crate::options::Rounds;
use crate::phase::output::{print_report, write_result};
use crate::phase::{exit_code, run_once, PhaseSpec};

/// The fewest rounds `auto` judges an interval on.
const MIN_AUTO_ROUNDS: u32 = 3;

/// Runs the rounds and prints and writes their summary; the exit code is the first
/// failed round's (which ends the rounds), else success.
pub fn run_rounds<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    rounds: Rounds,
    extra_stats: &dyn Fn() -> StoreStats,
) -> Result<ExitCode> {
    let (max, auto) = match rounds {
        Rounds::Fixed(n) => (n, false),
        Rounds::Auto => (ctx.options.max_rounds, true),
    };
    let target = ctx.options.rounds_target;
    let mut throughputs: Vec<f64> = Vec::new();
    let mut code = ExitCode::SUCCESS;
    let mut reached = false;
    for round in 1..=max {
        if ctx.stop.load(Ordering::SeqCst) {
            break;
        }
        let of = if auto {
            format!("at most {max}, until ±{target} %")
        } else {
            max.to_string()
        };
        eprintln!("kvlab: round {round} ({of})");
        let dir = ctx
            .options
            .out
            .as_ref()
            .map(|d| d.join(format!("round-{round}")));
        if let Some(dir) = &dir {
            kvlab_report::prepare_out_dir(dir, ctx.options.overwrite)
                .with_context(|| format!("preparing the output directory {}", dir.display()))?;
        }
        let done = run_once(ctx, store, dir.as_deref(), 1)?;
        let stats = store.stats();
        print_report(ctx, &done, &stats)?;
        write_result(ctx, store, dir.as_deref(), &done, stats, extra_stats())?;
        let o = &done.outcome;
        let secs = o.elapsed.as_secs_f64();
        if secs > 0.0 {
            throughputs.push(o.total.operations() as f64 / secs);
        }
        code = exit_code(ctx, o);
        if o.interrupted || code != ExitCode::SUCCESS {
            break;
        }
        if auto && round >= MIN_AUTO_ROUNDS {
            if let Some((m, ci)) = interval(&throughputs, ctx.plan.seed) {
                if ci.half_width() <= m * target / 100.0 {
                    reached = true;
                    break;
                }
            }
        }
    }
    summarize(ctx, &throughputs, auto, reached)?;
    Ok(code)
}

/// The median and its 95 % percentile-bootstrap interval.
fn interval(values: &[f64], seed: u64) -> Option<(f64, Interval)> {
    Some((
        median(values)?,
        bootstrap_median_ci(values, 0.95, 10_000, seed)?,
    ))
}

/// `[ROUNDS]` lines on stdout and `OUT/rounds.json`.
fn summarize(ctx: &PhaseSpec, throughputs: &[f64], auto: bool, reached: bool) -> Result<()> {
    let target = ctx.options.rounds_target;
    let found = interval(throughputs, ctx.plan.seed);
    let mut out = std::io::stdout().lock();
    writeln!(out, "[ROUNDS], Rounds, {}", throughputs.len())?;
    if let Some(m) = median(throughputs) {
        writeln!(out, "[ROUNDS], MedianThroughput(ops/sec), {m:.1}")?;
    }
    let width = found.map(|(m, ci)| ci.half_width() / m * 100.0);
    if let (Some((_, ci)), Some(w)) = (found, width) {
        writeln!(
            out,
            "[ROUNDS], Throughput95CI(ops/sec), [{:.1}, {:.1}] (±{w:.2} %, {BOOTSTRAP_METHOD})",
            ci.low, ci.high
        )?;
    }
    if auto {
        let verdict = if reached { "reached" } else { "not reached" };
        writeln!(out, "[ROUNDS], Target(±%), {target} {verdict}")?;
    }
    out.flush()?;
    if auto && !reached {
        eprintln!(
            "kvlab: warning: after {} rounds the median throughput's 95 % interval is \
             ±{} of it, not within ±{target} %: this machine is noisier than the target \
             (raise --max-rounds or --rounds-target, or quiet the machine)",
            throughputs.len(),
            width.map_or_else(|| "unknown".to_string(), |w| format!("{w:.2} %")),
        );
    }
    let Some(dir) = &ctx.options.out else {
        return Ok(());
    };
    let doc = serde_json::json!({
        "mode": if auto { "auto" } else { "fixed" },
        "rounds": throughputs.len(),
        "max_rounds": if auto { ctx.options.max_rounds } else { throughputs.len() as u32 },
        "target_pct": auto.then_some(target),
        "reached": auto.then_some(reached),
        "throughputs": throughputs,
        "median_throughput": median(throughputs),
        "throughput_ci": found.map(|(_, ci)| ci.to_array()),
        "half_width_pct": width,
        "method": BOOTSTRAP_METHOD,
        "dirs": (1..=throughputs.len()).map(|r| format!("round-{r}")).collect::<Vec<_>>(),
    });
    let mut json = serde_json::to_string_pretty(&doc)?;
    json.push('\n');
    kvlab_report::write_atomic(&dir.join("rounds.json"), json.as_bytes(), true)?;
    Ok(())
}

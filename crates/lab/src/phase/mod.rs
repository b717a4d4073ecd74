//! Running a phase on an open store: load, run (once or memtier's repeated runs) and
//! verify, with progress, interval files and the exit code.
//!
//! A phase is a [`PhaseSpec`] made once from its [`PhaseOptions`] by
//! [`select::select_phase`], run on the store [`open::open_store`] opens.

pub mod checks;
pub mod crash;
pub mod db_bench;
pub mod hook;
pub mod import;
pub mod interrupt;
pub mod model;
pub mod open;
pub mod output;
pub mod replay;
pub mod rounds;
pub mod select;
pub mod slo;
pub mod trace;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::observe::progress::{enabled as progress_enabled, Progress, When};
use crate::observe::Observers;
use anyhow::{Context, Result};
use kvlab_core::{StatValue, Store, StoreStats};
use kvlab_measure::{IntervalLog, TimelineRow};
use kvlab_memtier::report as memtier_report;
use kvlab_report::Phase;
use kvlab_runner::{RunOutcome, RunPlan};
use kvlab_trace::TraceRecorder;
use kvlab_workload::{with_workload, AnyWorkload, Properties};

use crate::phase::checks::usage;
use crate::phase::output::{print_report, print_runs_report, write_memtier_files, write_result};
use crate::phase::select::records;
use crate::Interrupted;

use crate::options::PhaseOptions;

/// What a phase needs besides the store. A copy with another plan or server facts runs
/// the same phase again (an `--slo` step, a spawned server's run).
#[derive(Clone)]
pub struct PhaseSpec {
    /// Load, run or verify.
    pub phase: Phase,
    /// The options the phase was given.
    pub options: PhaseOptions,
    /// The workload's properties: the `-P` files, then `-p` and what flags stand for.
    pub props: Properties,
    /// The workload chosen from the options ([`select::select_phase`]).
    pub workload: AnyWorkload,
    /// The runner's plan: threads, clients, operations or duration, rate, warm-up.
    pub plan: RunPlan,
    /// How the results are printed.
    pub report: ReportStyle,
    /// Set by Ctrl-C ([`interrupt::install_stop_handler`]): the phase stops and writes
    /// what it measured.
    pub stop: Arc<AtomicBool>,
    /// Facts about a server kvlab started (`spawned.*`), for the result.
    pub server: StoreStats,
    /// What acts on or watches the phase beside its workload; copies of the phase (an
    /// SLO step, a spawned server's run, memtier's `-x` runs) share them.
    pub observers: Observers,
}

/// How results are printed.
#[derive(Clone)]
pub enum ReportStyle {
    /// YCSB's text report.
    Ycsb,
    /// memtier_benchmark's summary (and optionally its JSON).
    Memtier(memtier_report::Options),
    /// db_bench's summary line (`kvlab db_bench`), then YCSB's text.
    DbBench,
}

/// Runs the phase; `store_stats` is sampled every interval into `monitor/store.csv`,
/// `extra_stats` adds statistics taken at the end (a spawned server's resource use).
pub fn execute_observed<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    store_stats: Option<kvlab_monitor::StoreStatsFn>,
    extra_stats: impl Fn() -> StoreStats,
) -> Result<ExitCode> {
    if ctx.phase == Phase::Verify && ctx.options.monitor.metrics.is_some() {
        return Err(usage(
            "--metrics does not apply to verify: it reads every record once and measures no \
             operations over time",
        ));
    }
    eprintln!(
        "kvlab {} {} on {} ({} thread{}, seed {})",
        env!("CARGO_PKG_VERSION"),
        ctx.phase,
        store.name(),
        ctx.plan.threads,
        if ctx.plan.threads == 1 { "" } else { "s" },
        ctx.plan.seed
    );
    if ctx.phase == Phase::Verify {
        return verify(ctx, store);
    }
    if ctx.options.slo.is_some() {
        return crate::phase::slo::search(ctx, store);
    }
    if let ReportStyle::Memtier(o) = &ctx.report {
        if o.verify_only() {
            return memtier_verification(ctx, store, ExitCode::SUCCESS);
        }
    }
    if let Some(dir) = &ctx.options.out {
        kvlab_report::prepare_out_dir(dir, ctx.options.overwrite)
            .with_context(|| format!("preparing the output directory {}", dir.display()))?;
    }
    // Resource monitoring and the store's statistics into OUT/monitor/*.csv, every
    // interval, for the whole phase. A parent such as `kvlab suite` may turn it off
    // (--monitor off), set its interval (--monitor-interval) and name the server
    // process it started (--monitor-server-pid).
    let monitor = start_monitor(ctx, store_stats);
    if let Some(rounds) = ctx.options.rounds {
        let code = crate::phase::rounds::run_rounds(ctx, store, rounds, &extra_stats)?;
        if let Some(m) = monitor {
            if let Err(e) = m.stop() {
                eprintln!("kvlab: warning: resource monitoring: {e}");
            }
        }
        return Ok(code);
    }
    let runs = match &ctx.report {
        ReportStyle::Memtier(o) => o.run_count(),
        ReportStyle::Ycsb | ReportStyle::DbBench => 1,
    };
    if runs == 1 {
        let mut done = run_once(ctx, store, ctx.options.out.as_deref(), 1)?;
        write_memtier_files(ctx, 1, &done)?;
        let mut stats = store.stats();
        if let Some(n) = extstore_note(ctx, &stats, &done.outcome) {
            eprintln!("kvlab: warning: {n}");
            done.notes.push(n);
        }
        if let Some(m) = monitor {
            match m.stop() {
                Ok(summary) => stats.extend(
                    summary
                        .flat()
                        .into_iter()
                        .map(|(k, v)| (format!("monitor.{k}"), StatValue::Float(v))),
                ),
                Err(e) => eprintln!("kvlab: warning: resource monitoring: {e}"),
            }
        }
        print_report(ctx, &done, &stats)?;
        write_result(
            ctx,
            store,
            ctx.options.out.as_deref(),
            &done,
            stats,
            extra_stats(),
        )?;
        let code = exit_code(ctx, &done.outcome);
        return memtier_verification(ctx, store, code);
    }
    memtier_runs(ctx, store, runs, monitor, &extra_stats)
}

/// Resource monitoring and the store's statistics into OUT/monitor/*.csv, every
/// interval, for the whole phase. A parent such as `kvlab suite` may turn it off
/// (--monitor off), set its interval (--monitor-interval) and name the server process it
/// started (--monitor-server-pid).
fn start_monitor(
    ctx: &PhaseSpec,
    store_stats: Option<kvlab_monitor::StoreStatsFn>,
) -> Option<kvlab_monitor::Monitor> {
    let m = &ctx.options.monitor;
    ctx.options
        .out
        .as_ref()
        .filter(|_| m.monitor)
        .and_then(|dir| {
            let mut config = kvlab_monitor::MonitorConfig::new(dir);
            config.interval = m
                .monitor_interval
                .filter(|d| !d.is_zero())
                .unwrap_or(ctx.options.interval);
            config.server_pid = crate::phase::output::stat_u64(&ctx.server, "spawned.pid")
                .and_then(|pid| u32::try_from(pid).ok())
                .or(m.monitor_server_pid);
            config.data_dir = ctx.options.path.clone();
            config.store_stats = store_stats;
            kvlab_monitor::Monitor::start(config)
                .map_err(|e| eprintln!("kvlab: warning: resource monitoring is off: {e}"))
                .ok()
        })
}

/// memtier's `-x`: the whole test several times against the same store, a second
/// apart, each run's result files in OUT/run-N; the monitor covers them all.
fn memtier_runs<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    runs: u32,
    monitor: Option<kvlab_monitor::Monitor>,
    extra_stats: &impl Fn() -> StoreStats,
) -> Result<ExitCode> {
    let mut done: Vec<RunDone> = Vec::new();
    for id in 1..=runs {
        if id > 1 {
            std::thread::sleep(Duration::from_secs(1));
        }
        if ctx.stop.load(Ordering::SeqCst) {
            break;
        }
        let dir = ctx
            .options
            .out
            .as_ref()
            .map(|d| d.join(format!("run-{id}")));
        if let Some(dir) = &dir {
            kvlab_report::prepare_out_dir(dir, ctx.options.overwrite)
                .with_context(|| format!("preparing the output directory {}", dir.display()))?;
        }
        let d = run_once(ctx, store, dir.as_deref(), id)?;
        write_memtier_files(ctx, id, &d)?;
        write_result(ctx, store, dir.as_deref(), &d, store.stats(), extra_stats())?;
        let interrupted = d.outcome.interrupted;
        done.push(d);
        if interrupted {
            break;
        }
    }
    if let Some(m) = monitor {
        if let Err(e) = m.stop() {
            eprintln!("kvlab: warning: resource monitoring: {e}");
        }
    }
    let code = done
        .iter()
        .map(|d| exit_code(ctx, &d.outcome))
        .find(|c| *c != ExitCode::SUCCESS)
        .unwrap_or(ExitCode::SUCCESS);
    print_runs_report(ctx, done)?;
    memtier_verification(ctx, store, code)
}

/// memtier's `--data-verify` after the runs (and all of `--verify-only`): its
/// verification client reads the imported objects back ([`kvlab_memtier::verify`]),
/// each failure on stderr as memtier prints it, the counts in the report and the JSON.
/// Returns `code` (the runs' exit code), or 1 when keys failed; nothing is verified
/// after an interrupted run, or without `--data-verify`.
pub fn memtier_verification<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    code: ExitCode,
) -> Result<ExitCode> {
    let (ReportStyle::Memtier(o), AnyWorkload::Memtier(w)) = (&ctx.report, &ctx.workload) else {
        return Ok(code);
    };
    if !o.data_verify() || ctx.stop.load(Ordering::SeqCst) {
        return Ok(code);
    }
    let check = kvlab_memtier::verify::verify(
        store,
        w,
        o,
        ctx.plan.seed,
        &ctx.stop,
        ctx.workload.effective(),
    )?;
    Ok(if check.failed > 0 && code == ExitCode::SUCCESS {
        ExitCode::from(1)
    } else {
        code
    })
}

/// What one run of a phase leaves behind: its outcome and the series taken during it.
pub struct RunDone {
    /// The runner's outcome: counts and histograms per operation.
    pub outcome: RunOutcome,
    /// When the measured run started.
    pub started: SystemTime,
    /// One row per reporting interval.
    pub timeline: Vec<TimelineRow>,
    /// memtier's per-second figures, when its JSON is asked for.
    pub seconds: Vec<memtier_report::Second>,
    /// Remarks on the run (interrupted, fell behind, …), printed and kept in the result.
    pub notes: Vec<String>,
    /// Seconds of the measured part the store could not be reached (about).
    pub unreachable_s: f64,
    /// `--fault`: when each fault was in force (`runner.faults`).
    pub faults: Vec<serde_json::Value>,
    /// How busy the machine was, read from the start of the run (`host.*` load figures).
    pub host: kvlab_report::HostProbe,
}

/// A runner error as the command's error: a plan the runner refuses (threads,
/// connections, a target rate) or a workload the store cannot run is what the command
/// line asked for (exit 2); anything else is a failure (exit 1).
fn usage_or(e: kvlab_runner::RunError) -> anyhow::Error {
    match e {
        kvlab_runner::RunError::Unsupported(m) | kvlab_runner::RunError::Plan(m) => usage(m),
        e => e.into(),
    }
}

/// Runs the phase's workload once, writing the HDR interval log into `dir`.
/// `run`: which of memtier's `--run-count` runs this is (1 otherwise).
pub fn run_once<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    dir: Option<&Path>,
    run: u32,
) -> Result<RunDone> {
    let started = SystemTime::now();
    // A server kvlab started for the run is the run's load, not other processes'.
    let server_pid = crate::phase::output::stat_u64(&ctx.server, "spawned.pid");
    let host = kvlab_report::HostProbe::start(&Vec::from_iter(server_pid.map(|p| p as u32)));
    let mut watch = Watch::new(ctx, store, dir, run, started)?;
    let mut observer = |iv: &kvlab_runner::Interval<'_>| watch.interval(iv);
    replay::before(ctx, store)?;
    if let Some(at) = ctx.options.start_at {
        wait_until_start(at, &ctx.stop)?;
    }
    let recorder = start_recording(ctx, store.name(), &store.options())?;
    let recording = recorder.clone().map(|r| r as Arc<dyn kvlab_core::Tap>);
    let join = crate::expected::BothTaps::join;
    let tap = join(recording, crate::phase::crash::expected_log(ctx)?);
    // A tap of the plan's own (memtier's -D) sees the batches too.
    let tap = join(tap, ctx.plan.tap.clone());
    let plan = RunPlan {
        tap,
        ..ctx.plan.clone()
    };
    // --fault: the schedule runs from the phase's start to its end.
    let faults = ctx.observers.proxy.get().map(|p| {
        let stop = Arc::new(AtomicBool::new(false));
        (p.schedule(Arc::clone(&stop)), stop, p)
    });
    let outcome = if ctx.phase == Phase::Load {
        let workload = records(&ctx.workload, "load")?;
        let o = kvlab_runner::load(store, workload, &plan, &ctx.stop, &mut observer)
            .map_err(usage_or)?;
        watch.display.finish();
        eprintln!("kvlab: flushing {} after load", store.name());
        store.flush().context("flushing the store after load")?;
        o
    } else {
        let o = with_workload!(&ctx.workload, w => {
            kvlab_runner::run(store, w, &plan, &ctx.stop, &mut observer).map_err(usage_or)?
        });
        if let AnyWorkload::Import(w) = &ctx.workload {
            // An import then flushes the store, as `load` does.
            w.finish();
            store.flush().context("flushing the store after import")?;
        }
        watch.display.finish();
        if watch.memtier_line.is_some() {
            // memtier ends its live line with two newlines.
            eprint!("\n\n");
        }
        o
    };
    let faults = faults.map(|(thread, stop, proxy)| {
        stop.store(true, Ordering::SeqCst);
        let _ = thread.join();
        proxy.applied()
    });
    // Dropping the log flushes its buffered writer.
    drop(watch.hlog.take());
    if let Some(e) = watch.hlog_error.take() {
        eprintln!("kvlab: warning: writing the interval log: {e}");
    }
    drop(plan);
    let mut notes = Vec::new();
    if let Some(recorder) = recorder {
        let r = recorder
            .finish()
            .context("finishing the trace recording (--record)")?;
        notes.push(recording_note(&r));
    }
    notes.extend(watch.outage.note(outcome.elapsed.as_secs_f64()));
    notes.extend(run_notes(ctx, &outcome));
    for n in &notes {
        eprintln!("kvlab: {n}");
    }
    crate::phase::hook::of(ctx).timeline(ctx, &mut watch.timeline);
    Ok(RunDone {
        outcome,
        started,
        timeline: watch.timeline,
        seconds: watch.seconds,
        notes,
        unreachable_s: watch.outage.unreachable_s(),
        faults: faults.unwrap_or_default(),
        host,
    })
}

/// What watches a run's measured intervals: the progress line (or memtier's), outages,
/// the `--metrics` page, `timeline.csv`'s rows, memtier's per-second JSON and the
/// interval log (`latency.hlog`).
struct Watch<'a> {
    ctx: &'a PhaseSpec,
    display: Progress,
    outage: crate::observe::outage::Outage,
    live: Option<(
        &'a crate::observe::metrics::Endpoint,
        kvlab_measure::LiveMetrics,
    )>,
    /// memtier's own live line, which replaces kvlab's progress line on `kvlab memtier`.
    memtier_line: Option<(&'a memtier_report::Options, memtier_report::Progress)>,
    conn_errors: u64,
    seconds: Vec<memtier_report::Second>,
    command_names: Option<Vec<String>>,
    timeline: Vec<TimelineRow>,
    hlog: Option<IntervalLog<std::io::BufWriter<std::fs::File>>>,
    hlog_error: Option<kvlab_measure::MeasureError>,
}

impl<'a> Watch<'a> {
    fn new<S: Store>(
        ctx: &'a PhaseSpec,
        store: &S,
        dir: Option<&Path>,
        run: u32,
        started: SystemTime,
    ) -> Result<Watch<'a>> {
        let hlog = match dir {
            Some(dir) => {
                let path = dir.join("latency.hlog");
                let file = std::fs::File::create(&path)
                    .with_context(|| format!("creating {}", path.display()))?;
                Some(IntervalLog::new(std::io::BufWriter::new(file), started)?)
            }
            None => None,
        };
        let memtier_line = match &ctx.report {
            ReportStyle::Memtier(o) => {
                eprintln!("[RUN #{run}] Preparing benchmark client...");
                eprintln!("[RUN #{run}] Launching threads now...");
                (ctx.options.progress != When::Never).then(|| (o, o.progress(run)))
            }
            _ => None,
        };
        let shown = match memtier_line {
            Some(_) => When::Never,
            None => ctx.options.progress,
        };
        let endpoint = match ctx.options.monitor.metrics {
            Some(addr) => Some(crate::observe::metrics::serve(
                &ctx.observers.metrics,
                addr,
            )?),
            None => None,
        };
        let live = endpoint.map(|e| {
            let live = kvlab_measure::LiveMetrics::new(kvlab_measure::RunLabels {
                phase: ctx.phase.as_str().to_string(),
                store: ctx
                    .options
                    .label
                    .clone()
                    .unwrap_or_else(|| store.name().to_string()),
                workload: workload_name(ctx),
            });
            e.publish(&live);
            (e, live)
        });
        Ok(Watch {
            ctx,
            display: Progress::new(shown, ctx.phase.as_str()),
            outage: Default::default(),
            live,
            memtier_line,
            conn_errors: 0,
            seconds: Vec::new(),
            command_names: None,
            timeline: Vec::new(),
            hlog,
            hlog_error: None,
        })
    }

    /// One closed interval.
    fn interval(&mut self, iv: &kvlab_runner::Interval<'_>) {
        self.outage.interval(iv, &mut self.display);
        if let Some((endpoint, live)) = self.live.as_mut() {
            let expected = iv.expected;
            live.interval(iv.time_s, iv.interval_s, iv.recorder, iv.warmup, expected);
            live.set_unreachable_s(self.outage.unreachable_s());
            endpoint.publish(live);
        }
        self.display.update(iv);
        if iv.warmup {
            return;
        }
        if let Some((o, line)) = self.memtier_line.as_mut() {
            self.conn_errors += iv
                .recorder
                .error_count(kvlab_core::StoreErrorKind::Connection);
            eprint!(
                "{}",
                line.interval(o, iv.recorder, iv.interval_s, self.conn_errors)
            );
        }
        if let ReportStyle::Memtier(o) = &self.ctx.report {
            if o.json_out().is_some() {
                self.seconds.push(memtier_report::Second::from_interval(
                    o,
                    iv.recorder,
                    iv.interval_s,
                ));
            }
        }
        // Asked at the first interval, after the replay learned whether the store merges.
        let ctx = self.ctx;
        let names: &[String] = self
            .command_names
            .get_or_insert_with(|| ctx.workload.command_names());
        self.timeline.push(TimelineRow::from_interval(
            iv.time_s,
            iv.interval_s,
            iv.recorder,
            names,
        ));
        if let Some(log) = self.hlog.as_mut() {
            let start = Duration::from_secs_f64((iv.time_s - iv.interval_s).max(0.0));
            let length = Duration::from_secs_f64(iv.interval_s);
            if let Err(e) = log.write_interval(start, length, iv.recorder, names) {
                self.hlog_error.get_or_insert(e);
            }
        }
    }
}

/// What a `--record` recording wrote, and what it cost the run.
fn recording_note(r: &kvlab_trace::RecordingSummary) -> String {
    let mut note = format!(
        "recorded {} requests to {} ({} bytes)",
        r.records,
        r.path.display(),
        r.bytes
    );
    if r.sampled_out > 0 {
        note.push_str(&format!("; {} left out by --record-sample", r.sampled_out));
    }
    if r.stalled_ns > 0 {
        note.push_str(&format!(
            "; clients waited {:.1} ms for the trace writer: recording slowed the run",
            r.stalled_ns as f64 / 1e6
        ));
    }
    note
}

/// What a run's outcome says a reader must know: how it stopped, what failed, reads
/// that found nothing, a schedule it could not keep, integrity checks, and what the
/// import and replay families add.
fn run_notes(ctx: &PhaseSpec, outcome: &RunOutcome) -> Vec<String> {
    let mut notes = Vec::new();
    if outcome.interrupted {
        notes.push("interrupted: results cover the operations completed before the stop".into());
    }
    if outcome.unfinished > 0 {
        notes.push(format!(
            "{} requests were still waiting for a reply when the run stopped: abandoned, \
             not counted as operations",
            outcome.unfinished
        ));
    }
    if outcome.error_budget_exceeded {
        notes.push(format!(
            "stopped: more than {} operations failed (--max-errors)",
            ctx.plan.max_errors.unwrap_or(0)
        ));
    }
    if let Some(e) = &outcome.connection_lost {
        notes.push(format!(
            "stopped: {e} (without --reconnect-on-error a lost connection ends the run, as \
             in memtier_benchmark)"
        ));
    }
    print_first_errors(outcome);
    let failed = outcome.total.errors_total();
    match failure(ctx, outcome) {
        Some(f) => notes.push(f),
        None if failed > 0 => notes.push(format!(
            "{failed} of {} operations failed ({}), within --max-errors {}",
            outcome.total.operations(),
            error_kinds_text(outcome),
            ctx.plan.max_errors.unwrap_or(0)
        )),
        None => {}
    }
    if let Some(w) = miss_warning(ctx, outcome) {
        notes.push(w);
    }
    if outcome.fell_behind {
        notes.push(format!(
            "fell behind: the client lagged its schedule by up to {:.1} ms; the offered load \
             was below the schedule (--target-rate, or a replay's --speed), see the Intended-* latencies",
            outcome.max_schedule_lag_ms
        ));
    }
    if ctx.workload.data_integrity() {
        notes.push(format!(
            "dataintegrity: {} reads checked, {} did not match",
            outcome.integrity_checked, outcome.integrity_failed
        ));
    }
    notes.extend(crate::phase::hook::of(ctx).notes(ctx, outcome));
    notes
}

/// The prefix of a recording's header entries that hold a store option of the recorded
/// run (`store_option.model`): `kvlab replay` takes them for a replay on the same store.
pub const RECORDED_OPTION: &str = "store_option.";

/// Starts the trace recorder of `--record`, if asked: its header names kvlab's version,
/// the phase, the store, the workload, the seed and the command line.
fn start_recording(
    ctx: &PhaseSpec,
    store: &str,
    options: &StoreStats,
) -> Result<Option<Arc<TraceRecorder>>> {
    let Some(path) = &ctx.options.record.record else {
        return Ok(None);
    };
    let mut meta = vec![
        (
            "kvlab_version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
        ("phase".to_string(), ctx.phase.as_str().to_string()),
        ("store".to_string(), store.to_string()),
        ("workload".to_string(), workload_name(ctx)),
        ("seed".to_string(), ctx.plan.seed.to_string()),
        (
            "command_line".to_string(),
            std::env::args().collect::<Vec<_>>().join(" "),
        ),
    ];
    // The options that lay the records out (Redis' model), for a replay of the recording.
    let layout = crate::StoreInfo::find(store).map_or(&[][..], |s| s.layout_options);
    for (name, value) in options {
        if let (true, StatValue::Text(v)) = (layout.contains(&name.as_str()), value) {
            meta.push((format!("{RECORDED_OPTION}{name}"), v.clone()));
        }
    }
    let recorder = TraceRecorder::create(path, meta, ctx.options.record.record_sample)
        .with_context(|| format!("creating the trace file {} (--record)", path.display()))?;
    Ok(Some(Arc::new(recorder)))
}

/// `--start-at`: waits for the wall-clock time `at` (the store already open), so that
/// processes on several machines start their phases together; Ctrl-C stops the wait.
fn wait_until_start(at: SystemTime, stop: &AtomicBool) -> Result<()> {
    let shown = kvlab_report::rfc3339(at);
    match at.duration_since(SystemTime::now()) {
        Ok(wait) => eprintln!(
            "kvlab: starting at {shown} (--start-at), in {:.1} s",
            wait.as_secs_f64()
        ),
        Err(late) => {
            eprintln!(
                "kvlab: warning: --start-at {shown} passed {:.1} s ago: starting now",
                late.duration().as_secs_f64()
            );
            return Ok(());
        }
    }
    while let Ok(left) = at.duration_since(SystemTime::now()) {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Interrupted(
                "interrupted while waiting for --start-at: nothing was measured".into(),
            )
            .into());
        }
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
    Ok(())
}

/// The workload's name for a trace header: `--workload-label`, else the property files.
fn workload_name(ctx: &PhaseSpec) -> String {
    if let Some(label) = &ctx.options.workload_label {
        return label.clone();
    }
    let files: Vec<String> = ctx
        .options
        .property_files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    files.join(",")
}

/// The exit code of a finished run: 130 if interrupted; 1 if it failed for errors
/// ([`failure`]: a load that did not load every record, more failed operations than
/// `--max-errors` allows, 0 by default), lost its connection, reads did not match, or a
/// replayed trace could not be read to its end; else success.
pub fn exit_code(ctx: &PhaseSpec, outcome: &RunOutcome) -> ExitCode {
    if outcome.interrupted {
        ExitCode::from(130)
    } else if outcome.error_budget_exceeded
        || failure(ctx, outcome).is_some()
        || outcome.connection_lost.is_some()
        || outcome.integrity_failed > 0
        || crate::phase::hook::of(ctx).failed(ctx)
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `verify`: reads every record back (or every key of `--keys`, or sets them against
/// `--expected-log`) and reports missing and corrupted ones.
pub fn verify<S: Store>(ctx: &PhaseSpec, store: &S) -> Result<ExitCode> {
    if let Some(at) = ctx.options.start_at {
        wait_until_start(at, &ctx.stop)?;
    }
    if let AnyWorkload::Keys(k) = &ctx.workload {
        return import::verify_keys(ctx, store, k);
    }
    if let Some(log) = &ctx.options.expected_log {
        return crate::phase::crash::check(ctx, store, log);
    }
    let show = progress_enabled(ctx.options.progress);
    let report = kvlab_runner::verify(
        store,
        records(&ctx.workload, "verify")?,
        ctx.plan.threads,
        &ctx.stop,
        &|done, total| {
            if show {
                eprint!("\r\x1b[2Kverify {done}/{total}");
            }
        },
    )?;
    if show {
        eprintln!();
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "[VERIFY], Records, {}", report.checked)?;
    writeln!(out, "[VERIFY], Missing, {}", report.missing)?;
    writeln!(out, "[VERIFY], Corrupted, {}", report.corrupted)?;
    writeln!(out, "[VERIFY], Errors, {}", report.errors)?;
    writeln!(
        out,
        "[VERIFY], Values, {}",
        if ctx.workload.data_integrity() {
            "checked (dataintegrity=true)"
        } else {
            "not checked (field names only; set -p dataintegrity=true when loading and verifying)"
        }
    )?;
    for k in &report.first_missing {
        writeln!(out, "[VERIFY], MissingKey, {k}")?;
    }
    for k in &report.first_corrupted {
        writeln!(out, "[VERIFY], CorruptedKey, {k}")?;
    }
    for k in &report.first_errors {
        writeln!(out, "[VERIFY], Error, {k}")?;
    }
    out.flush()?;
    if ctx.stop.load(Ordering::Relaxed) {
        eprintln!("kvlab: verify interrupted after {} records", report.checked);
        return Ok(ExitCode::from(130));
    }
    if report.ok() {
        eprintln!("kvlab: verify: all {} records intact", report.checked);
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "kvlab: verify failed: {} missing, {} corrupted, {} errors of {} records",
            report.missing, report.corrupted, report.errors, report.checked
        );
        Ok(ExitCode::from(1))
    }
}

/// The error counts of a run by kind, as `full: 4289, server: 2`.
pub fn error_kinds_text(outcome: &RunOutcome) -> String {
    kvlab_core::StoreErrorKind::ALL
        .iter()
        .filter_map(|k| {
            let n = outcome.total.error_count(*k);
            (n > 0).then(|| format!("{}: {n}", k.name()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why a finished phase fails for its errors (exit code 1), as the line stderr and
/// `runner.failure` show; `None` when it does not, or when it was interrupted (exit 130).
///
/// kvlab fails loudly where YCSB prints `Return=ERROR` and exits 0: a `load` (or
/// `import`) fails unless every record was stored, whatever `--max-errors` says, since
/// every later run would measure a partial data set; a `run` fails when more operations
/// failed than `--max-errors` allows — none by default, so a benchmark of failures
/// cannot pass for one of a working store. Without `--max-errors` the run still goes to
/// its end, so the result shows how many failed; with it, the run stops once more than
/// N have failed.
pub fn failure(ctx: &PhaseSpec, outcome: &RunOutcome) -> Option<String> {
    if outcome.interrupted {
        return None;
    }
    let failed = outcome.total.errors_total();
    let kinds = error_kinds_text(outcome);
    let stopped = match ctx.plan.max_errors {
        Some(n) if outcome.error_budget_exceeded => {
            format!("; stopped after more than {n} failures (--max-errors), the rest untried")
        }
        _ => String::new(),
    };
    if matches!(ctx.phase, Phase::Load | Phase::Import) {
        use kvlab_core::{Dataset, OpKind, Status};
        let stored = outcome.total.status_count(OpKind::Insert, Status::Ok);
        let expected = match (&ctx.workload, ctx.phase) {
            (AnyWorkload::Core(w), Phase::Load) => w.count(),
            _ => outcome.total.count(OpKind::Insert),
        };
        if failed == 0 && !outcome.error_budget_exceeded {
            return None;
        }
        return Some(format!(
            "{} failed: {} of {expected} records were not stored, {failed} inserts failed \
             ({kinds}){stopped}",
            ctx.phase,
            expected.saturating_sub(stored)
        ));
    }
    let budget = ctx.plan.max_errors.unwrap_or(0);
    if failed <= budget && !outcome.error_budget_exceeded {
        return None;
    }
    let rule = match ctx.plan.max_errors {
        Some(n) => format!("more than --max-errors {n}"),
        None => "a run fails when any operation fails; --max-errors N tolerates N".into(),
    };
    Some(format!(
        "{} failed: {failed} of {} operations failed ({kinds}); {rule}{stopped}",
        ctx.phase,
        outcome.total.operations()
    ))
}

/// The first failures of each kind ([`RunOutcome::first_errors`]), each message once.
pub fn first_errors(outcome: &RunOutcome) -> Vec<&kvlab_core::StoreError> {
    let mut seen: Vec<&kvlab_core::StoreError> = Vec::new();
    for e in &outcome.first_errors {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    seen
}

/// Prints the first failures of each kind on stderr with the store's own message
/// (`MDB_MAP_FULL …`, `OOM command not allowed …`).
fn print_first_errors(outcome: &RunOutcome) {
    for e in first_errors(outcome) {
        eprintln!("kvlab: error ({}): {}", e.kind.name(), e.message);
    }
}

/// The measured reads (`READ` operations, each of one key) that found their record and
/// that found none. Other operations that miss (an update of a missing record) are not
/// reads, so they are not counted here.
fn read_results(outcome: &RunOutcome) -> (u64, u64) {
    use kvlab_core::{OpKind, Status};
    (
        outcome.total.status_count(OpKind::Read, Status::Ok),
        outcome.total.status_count(OpKind::Read, Status::NotFound),
    )
}

/// The share of measured reads that found no record; `None` without reads. Reads of
/// several keys at once (an import's multi-gets) count per key.
pub fn read_miss_share(outcome: &RunOutcome) -> Option<f64> {
    let (hit, missed) = match read_results(outcome) {
        (0, 0) => (outcome.keys_hit, outcome.keys_missed),
        counts => counts,
    };
    let reads = hit + missed;
    (reads > 0).then(|| missed as f64 / reads as f64)
}

/// True when reads missed on a workload whose reads should all find their records: a
/// YCSB workload (its reads choose among loaded and acknowledged inserted keys) or
/// db_bench's mixgraph (`--model` too: its reads choose among the `num` loaded keys) when
/// most of its reads missed —
/// not a cache workload, memtier or a replay, where misses are expected; nor a YCSB
/// workload with kvlab's `deleteproportion`, whose reads may find a deleted record.
pub fn reads_missed(ctx: &PhaseSpec, outcome: &RunOutcome) -> bool {
    let deletes = ctx
        .props
        .get("deleteproportion")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .is_some_and(|p| p > 0.0);
    let (hit, missed) = read_results(outcome);
    // A mixgraph database loaded as db_bench's fillrandom loads it (keys drawn with
    // replacement) lacks about a third of its keys: only a majority of misses says the
    // workload's keys are not there.
    let expected = match ctx.workload {
        AnyWorkload::Core(_) | AnyWorkload::CorePlan(_) => missed > 0,
        AnyWorkload::MixGraph(_) => missed > hit,
        _ => false,
    };
    expected && ctx.phase == Phase::Run && !deletes
}

/// The warning for [`reads_missed`]: nearly all (99 % or more) or some of the reads found
/// no record.
fn miss_warning(ctx: &PhaseSpec, outcome: &RunOutcome) -> Option<String> {
    if !reads_missed(ctx, outcome) {
        return None;
    }
    let (hit, missed) = read_results(outcome);
    let reads = hit + missed;
    let share = missed as f64 / reads as f64;
    let pct = 100.0 * share;
    Some(if share >= 0.99 {
        format!(
            "warning: {missed} of {reads} reads ({pct:.1} %) found no record: the store does \
             not hold the workload's records (never loaded? loaded at another --path or with \
             another recordcount?), so the figures measure misses"
        )
    } else if matches!(ctx.workload, AnyWorkload::MixGraph(_)) {
        format!(
            "warning: {missed} of {reads} reads ({pct:.1} %) found no record: the store holds \
             few of the mixgraph workload's `num` keys (never loaded? a --path of another \
             database?), so the figures measure misses"
        )
    } else {
        format!(
            "warning: {missed} of {reads} reads ({pct:.1} %) found no record: the store lost \
             or never held part of the workload's records (evicted under a server's maxmemory \
             policy? a partial load?), so the figures mix in misses"
        )
    })
}

/// The warning for a YCSB workload whose `recordcount` is absent or 0
/// ([`crate::plan::record_count_warning`]).
pub fn default_record_count_warning(ctx: &PhaseSpec) -> Option<String> {
    if !matches!(
        ctx.workload,
        AnyWorkload::Core(_) | AnyWorkload::CorePlan(_)
    ) {
        return None;
    }
    crate::plan::record_count_warning(ctx.props.get("recordcount"))
}

/// memcached's default `ext_item_size`: smaller items never go to extstore.
const EXTSTORE_ITEM_SIZE_DEFAULT: u64 = 512;

/// Says why, when memcached runs with extstore (its `stats` carry `extstore_*` counters)
/// and the phase wrote values but memcached wrote none of them to flash: it moves an item
/// there only when the item is at least `ext_item_size` bytes and its slab memory is
/// full (the item reaches the cold end of the LRU), so small values or a data set that
/// fits in memory never reach the file.
fn extstore_note(ctx: &PhaseSpec, stats: &StoreStats, outcome: &RunOutcome) -> Option<String> {
    let int = |name: &str| crate::phase::output::stat_u64(stats, name);
    let writes = outcome.total.count(kvlab_core::OpKind::Insert)
        + outcome.total.count(kvlab_core::OpKind::Update);
    if int("extstore_objects_written")? != 0 || writes == 0 {
        return None;
    }
    let item_size = ctx
        .server
        .iter()
        .find_map(|(k, v)| match v {
            StatValue::Text(s) if k == "spawned.config.ext_item_size" => s.parse().ok(),
            _ => None,
        })
        .unwrap_or(EXTSTORE_ITEM_SIZE_DEFAULT);
    let mean_bytes = outcome.total.bytes_written() / writes;
    let reason = if mean_bytes < item_size {
        format!(
            "this phase wrote items of {mean_bytes} bytes of key and value on average, below ext_item_size \
             ({item_size} bytes): such items stay in memory or are evicted"
        )
    } else {
        match (int("bytes"), int("limit_maxbytes")) {
            (Some(b), Some(l)) => format!(
                "memory never filled ({b} of {l} bytes used), so no item was pushed out to flash"
            ),
            _ => "memory never filled, so no item was pushed out to flash".to_string(),
        }
    };
    Some(format!(
        "memcached wrote nothing to extstore: it moves an item to flash only when the item \
         is at least ext_item_size bytes and memory is full; {reason}"
    ))
}

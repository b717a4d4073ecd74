//! What key files, thread plans, imports and memtier's multi-key GETs add to a phase:
//! their workloads from the options, their `PhaseHook`s,
//! and `verify --keys`.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use anyhow::Result;
use kvlab_core::{OpKind, Status, Store};
use kvlab_report::Phase;
use kvlab_runner::{RunOutcome, RunPlan, Warmup};
use kvlab_workload::{
    AnyWorkload, CoreWorkload, ImportWorkload, KeyCheck, KeyFile, KeyFileWorkload, Plan,
    PlanWorkload, Properties, WorkloadError,
};
use serde_json::json;

use crate::options::PhaseOptions;
use crate::phase::checks::usage;
use crate::phase::hook::PhaseHook;
use crate::phase::select::{CLI_PROPERTIES, STORE_PREFIXES};
use crate::phase::PhaseSpec;

/// An import (`kvlab import`): its lines, malformed lines, strict stop, read errors,
/// failed inserts and the sampled key file.
pub struct ImportHook<'a>(pub &'a ImportWorkload);

impl PhaseHook for ImportHook<'_> {
    fn notes(&self, _ctx: &PhaseSpec, outcome: &RunOutcome) -> Vec<String> {
        let w = self.0;
        let mut notes = Vec::new();
        let r = w.finish();
        let path = r.path.display();
        notes.push(format!(
            "import: {} lines of {path}: {} imported, {} malformed{}, {} blank",
            r.lines,
            outcome.total.status_count(OpKind::Insert, Status::Ok),
            r.malformed,
            if w.spec().strict { "" } else { " (skipped)" },
            r.blank
        ));
        for m in &r.first_malformed {
            notes.push(format!("import: malformed {path}:{}", malformed_at(m)));
        }
        if let Some(m) = &r.strict_failure {
            notes.push(format!(
                "import stopped (--strict): {path}:{}",
                malformed_at(m)
            ));
        }
        if let Some(e) = &r.read_error {
            notes.push(format!("import: {path}: {e}"));
        }
        if r.failed_inserts > 0 {
            notes.push(format!(
                "import: {} inserts failed (see the ERROR counts above)",
                r.failed_inserts
            ));
        }
        if let Some(s) = &w.spec().sample {
            notes.push(format!(
                "import: {} keys written to {}",
                r.sampled_keys,
                s.path.display()
            ));
        }
        if let Some(e) = &r.keys_out_error {
            notes.push(format!("import: writing the key file failed: {e}"));
        }
        notes
    }

    /// `[IMPORT]` lines after the YCSB report.
    fn report(&self, _ctx: &PhaseSpec, outcome: &RunOutcome, out: &mut dyn Write) -> Result<()> {
        let w = self.0;
        let r = w.finish();
        let secs = outcome.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
        writeln!(out, "[IMPORT], File, {}", r.path.display())?;
        writeln!(out, "[IMPORT], Lines, {}", r.lines)?;
        writeln!(
            out,
            "[IMPORT], Imported, {}",
            outcome.total.status_count(OpKind::Insert, Status::Ok)
        )?;
        writeln!(out, "[IMPORT], Malformed, {}", r.malformed)?;
        writeln!(out, "[IMPORT], Blank, {}", r.blank)?;
        writeln!(out, "[IMPORT], Lines/sec, {:.1}", r.lines as f64 / secs)?;
        for m in &r.first_malformed {
            writeln!(
                out,
                "[IMPORT], MalformedLine, {}:{}",
                r.path.display(),
                malformed_at(m)
            )?;
        }
        if let Some(s) = &w.spec().sample {
            writeln!(out, "[IMPORT], SampledKeys, {}", r.sampled_keys)?;
            writeln!(out, "[IMPORT], KeysOut, {}", s.path.display())?;
        }
        Ok(())
    }

    /// A strict import that stopped at a malformed line, a read error, failed inserts,
    /// an incomplete key file: the phase failed although the runner did not.
    fn failed(&self, _ctx: &PhaseSpec) -> bool {
        self.0.finish().failed()
    }

    /// The result's `runner.import`.
    fn runner(&self, _ctx: &PhaseSpec, runner: &mut kvlab_report::RunnerSection) {
        let w = self.0;
        let r = w.finish();
        runner.import = Some(json!({
                "file": r.path.display().to_string(),
                "lines": r.lines,
                "blank": r.blank,
                "malformed": r.malformed,
                "first_malformed": r.first_malformed.iter().map(|m| json!({
                    "line": m.line, "fields": m.fields, "expected": m.expected,
                })).collect::<Vec<_>>(),
                "strict_failure_line": r.strict_failure.as_ref().map(|m| m.line),
                "read_error": r.read_error,
                "failed_inserts": r.failed_inserts,
                "sampled_keys": r.sampled_keys,
                "keys_out_error": r.keys_out_error,
        }));
    }
}

/// A thread plan (`--plan`): each group's threads, operations and latencies.
pub struct PlanHook;

impl PhaseHook for PlanHook {
    /// Per-group operation counts.
    fn notes(&self, ctx: &PhaseSpec, _outcome: &RunOutcome) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some((plan, counts)) = ctx.workload.plan_counts() {
            for (i, (g, c)) in plan.groups().iter().zip(&counts).enumerate() {
                let kinds: Vec<String> = OpKind::ALL
                    .iter()
                    .filter(|k| c.issued[k.index()] > 0)
                    .map(|k| {
                        let s = &c.status[k.index()];
                        format!(
                            "{k} {} (NOT_FOUND {}, ERROR {})",
                            c.issued[k.index()],
                            s[Status::NotFound.index()],
                            s[Status::Error.index()]
                        )
                    })
                    .collect();
                notes.push(format!(
                    "group {} (threads {}): {} operations: {}",
                    g.name,
                    plan.thread_ranges(i),
                    c.total(),
                    kinds.join(", ")
                ));
            }
        }
        notes
    }

    /// `[GROUP:name]` lines after the YCSB report.
    fn report(&self, ctx: &PhaseSpec, outcome: &RunOutcome, out: &mut dyn Write) -> Result<()> {
        if let Some((plan, counts)) = ctx.workload.plan_counts() {
            for (i, (g, c)) in plan.groups().iter().zip(&counts).enumerate() {
                let section = format!("[GROUP:{}]", g.name);
                writeln!(out, "{section}, Threads, {}", plan.thread_ranges(i))?;
                writeln!(out, "{section}, Operations, {}", c.total())?;
                // Latency per group, from the runner's per-group recorders.
                if let Some(rec) = outcome.groups.get(i) {
                    let summary = rec.summary(outcome.elapsed);
                    writeln!(
                        out,
                        "{section}, Throughput(ops/sec), {}",
                        summary.throughput_ops_per_sec
                    )?;
                    for op in &summary.ops {
                        let l = &op.latency;
                        writeln!(
                            out,
                            "{section}, {} AverageLatency(us), {}",
                            op.name, l.avg_us
                        )?;
                        writeln!(
                            out,
                            "{section}, {} 99thPercentileLatency(us), {}",
                            op.name, l.p99_us
                        )?;
                        writeln!(
                            out,
                            "{section}, {} 99.9PercentileLatency(us), {}",
                            op.name, l.p999_us
                        )?;
                    }
                }
                for k in OpKind::ALL {
                    let n = c.issued[k.index()];
                    if n == 0 {
                        continue;
                    }
                    writeln!(out, "{section}, {k} Operations, {n}")?;
                    writeln!(
                        out,
                        "{section}, {k} Share(%), {:.2}",
                        100.0 * n as f64 / c.total() as f64
                    )?;
                    for s in Status::ALL {
                        writeln!(
                            out,
                            "{section}, {k} Return={}, {}",
                            s.ycsb_name(),
                            c.status[k.index()][s.index()]
                        )?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The result's `runner.groups`.
    fn runner(&self, ctx: &PhaseSpec, runner: &mut kvlab_report::RunnerSection) {
        if let Some((plan, counts)) = ctx.workload.plan_counts() {
            let groups: Vec<serde_json::Value> = plan
                    .groups()
                    .iter()
                    .zip(&counts)
                    .enumerate()
                    .map(|(i, (g, c))| {
                        let ops: serde_json::Map<String, serde_json::Value> = OpKind::ALL
                            .iter()
                            .filter(|k| c.issued[k.index()] > 0)
                            .map(|k| {
                                let s = &c.status[k.index()];
                                (
                                    k.ycsb_name().to_string(),
                                    json!({
                                        "issued": c.issued[k.index()],
                                        "OK": s[Status::Ok.index()],
                                        "NOT_FOUND": s[Status::NotFound.index()],
                                        "ERROR": s[Status::Error.index()],
                                    }),
                                )
                            })
                            .collect();
                        json!({
                            "name": g.name,
                            "threads": plan.thread_ranges(i),
                            "thread_count": g.threads,
                            "mix": g.mix.properties().into_iter().collect::<std::collections::BTreeMap<_, _>>(),
                            "operations": c.total(),
                            "by_kind": ops,
                        })
                    })
                    .collect();
            runner.plan_groups = Some(json!(groups));
        }
    }
}

/// memtier's flags on `kvlab run`: a multi-key GET's keys, counted one by one.
pub struct MultiGetHook<'a>(pub &'a kvlab_workload::memtier::MemtierWorkload);

impl PhaseHook for MultiGetHook<'_> {
    /// `[MULTI-GET]` lines after the YCSB report.
    fn report(&self, _ctx: &PhaseSpec, outcome: &RunOutcome, out: &mut dyn Write) -> Result<()> {
        let w = self.0;
        if w.spec().multi_key_get > 1 {
            // A multi-key GET is one READ above; its keys count here one by one.
            let keys = outcome.keys_hit + outcome.keys_missed;
            let reads = outcome.total.count(OpKind::Read);
            writeln!(out, "[MULTI-GET], Keys, {keys}")?;
            writeln!(out, "[MULTI-GET], KeysFound, {}", outcome.keys_hit)?;
            writeln!(out, "[MULTI-GET], KeysNotFound, {}", outcome.keys_missed)?;
            if reads > 0 {
                writeln!(
                    out,
                    "[MULTI-GET], KeysPerRead, {:.2}",
                    keys as f64 / reads as f64
                )?;
            }
        }
        Ok(())
    }
}

fn malformed_at(m: &kvlab_workload::MalformedLine) -> String {
    format!(
        "{}: {} field{}, expected {}",
        m.line,
        m.fields,
        if m.fields == 1 { "" } else { "s" },
        m.expected
    )
}

/// An input file named on the command line (an import file, `--keys`, a plan) that cannot
/// be read or parsed: a usage error (exit code 2), found before anything runs, as for a
/// property file.
pub fn workload_error(e: WorkloadError) -> anyhow::Error {
    usage(e.to_string())
}

/// Turns `run`'s or `verify`'s workload into a key-file or plan workload when
/// `--keys` or a plan is given; errors for options that do not apply to the phase.
/// A plan sets the thread count (`--threads`, when given, must match it).
pub fn phase_work(
    phase: Phase,
    args: &mut PhaseOptions,
    props: &Properties,
    work: AnyWorkload,
) -> Result<AnyWorkload> {
    let k = args.keys.clone();
    let has_plan = k.plan.is_some() || !k.plan_config.is_empty() || !k.thread_plan_map.is_empty();
    if k.keys.is_none() && !has_plan {
        if k.value_format.is_some() {
            return Err(usage("--value-format applies to import and to --keys"));
        }
        return Ok(work);
    }
    let what = if has_plan { "a thread plan" } else { "--keys" };
    if phase == Phase::Load || (phase == Phase::Verify && has_plan) {
        return Err(usage(format!(
            "{what} does not apply to {phase}: plans are for run, key files for run and \
             verify"
        )));
    }
    if !matches!(work, AnyWorkload::Core(_)) {
        return Err(usage(format!(
            "{what} works with YCSB property files, not with memtier or cache workloads"
        )));
    }
    if k.plan.is_some() && !(k.plan_config.is_empty() && k.thread_plan_map.is_empty()) {
        return Err(usage(
            "give either --plan FILE or --plan-config/--thread-plan-map, not both",
        ));
    }
    let keys = match &k.keys {
        Some(path) => {
            let file = KeyFile::load(path).map_err(workload_error)?;
            Some(Arc::new(
                KeyFileWorkload::from_properties(
                    Arc::new(file),
                    k.value_format.unwrap_or_default(),
                    props,
                    CLI_PROPERTIES,
                    STORE_PREFIXES,
                )
                .map_err(workload_error)?,
            ))
        }
        None => None,
    };
    if !has_plan {
        let keys = keys.expect("--keys was given");
        return Ok(AnyWorkload::Keys(keys));
    }
    let plan = match &k.plan {
        Some(path) => Plan::load(path).map_err(workload_error)?,
        None => {
            let threads = args.threads.ok_or_else(|| {
                usage("--plan-config/--thread-plan-map need --threads (thread_num)")
            })?;
            Plan::from_thread_map(&k.plan_config, &k.thread_plan_map, threads)
                .map_err(workload_error)?
        }
    };
    match args.threads {
        Some(t) if t != plan.threads() => {
            return Err(usage(format!(
                "--threads {t}, but the plan's groups have {} threads in all",
                plan.threads()
            )))
        }
        _ => args.threads = Some(plan.threads()),
    }
    if let Some(keys) = keys {
        let groups = plan.groups().iter().map(|g| Arc::new(keys.with_mix(g.mix)));
        let groups = groups.collect();
        return Ok(AnyWorkload::KeyPlan(Arc::new(PlanWorkload::new(
            plan, groups,
        ))));
    }
    // YCSB keys: one CoreWorkload per group, with the group's mix. Each has its own
    // insert sequence, so only one group may insert, or keys would collide.
    let inserting: Vec<&str> = plan
        .groups()
        .iter()
        .filter(|g| g.mix.weight(OpKind::Insert) > 0.0)
        .map(|g| g.name.as_str())
        .collect();
    if inserting.len() > 1 {
        return Err(usage(format!(
            "groups {} all insert: on YCSB keys only one group may insert (their new keys \
             would collide); use --keys, whose inserted keys are unique per client",
            inserting.join(", ")
        )));
    }
    let mut workloads = Vec::new();
    for g in plan.groups() {
        let mut p = props.clone();
        for (key, value) in g.mix.properties() {
            p.set(&key, &value, g.origin.clone());
        }
        let w = CoreWorkload::from_properties(&p, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(workload_error)?;
        workloads.push(Arc::new(w));
    }
    Ok(AnyWorkload::CorePlan(Arc::new(PlanWorkload::new(
        plan, workloads,
    ))))
}

/// `verify --keys`: reads every key of the file and reports the missing ones.
pub fn verify_keys<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    keys: &KeyFileWorkload,
) -> Result<ExitCode> {
    let check = Arc::new(KeyCheck::new(Arc::clone(keys.keys()), keys.value_format()));
    let total = keys.keys().len() as u64;
    let plan = RunPlan {
        operations: Some(total),
        duration: None,
        warmup: Warmup::None,
        target_rate: None,
        ..ctx.plan.clone()
    };
    let mut display = crate::observe::progress::Progress::new(ctx.options.progress, "verify");
    let outcome = kvlab_runner::run(store, &check, &plan, &ctx.stop, &mut |iv| {
        display.update(iv)
    })?;
    display.finish();
    let t = &outcome.total;
    let missing = t.status_count(OpKind::Read, Status::NotFound);
    let errors = t.status_count(OpKind::Read, Status::Error);
    let checked = t.count(OpKind::Read);
    let mut out = std::io::stdout().lock();
    writeln!(out, "[VERIFY], KeyFile, {}", keys.keys().path().display())?;
    writeln!(out, "[VERIFY], Records, {checked}")?;
    writeln!(out, "[VERIFY], Missing, {missing}")?;
    writeln!(out, "[VERIFY], Errors, {errors}")?;
    for k in check.first_missing() {
        let mut line = Vec::new();
        kvlab_workload::escape_key(&k, &mut line);
        writeln!(
            out,
            "[VERIFY], MissingKey, {}",
            String::from_utf8_lossy(&line)
        )?;
    }
    for e in check.first_errors() {
        writeln!(out, "[VERIFY], Error, {e}")?;
    }
    out.flush()?;
    if outcome.interrupted || ctx.stop.load(Ordering::Relaxed) {
        eprintln!("kvlab: verify interrupted after {checked} keys");
        return Ok(ExitCode::from(130));
    }
    if missing == 0 && errors == 0 && checked == total {
        eprintln!(
            "kvlab: verify: all {checked} keys of {} present",
            keys.keys().path().display()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "kvlab: verify: {missing} missing, {errors} errors of {total} keys in {}",
            keys.keys().path().display()
        );
        Ok(ExitCode::from(1))
    }
}

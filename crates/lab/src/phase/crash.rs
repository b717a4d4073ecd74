//! Crash tests inside a phase: `--expected-log` appended as writes are acknowledged
//! (`load`, `run`), and `verify --expected-log` setting every record against it.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use kvlab_core::{Dataset, Store, Tap};
use kvlab_runner::RecordState;

use crate::expected::{CrashCheck, ExpectedLog, ExpectedState, Found};
use crate::phase::checks::refused;
use crate::phase::select::records;
use crate::phase::PhaseSpec;

/// Opens `--expected-log` for writing, when it is given (`load` and `run`).
pub fn expected_log(ctx: &PhaseSpec) -> Result<Option<Arc<dyn Tap>>> {
    let Some(path) = &ctx.options.expected_log else {
        return Ok(None);
    };
    let log = ExpectedLog::append(path)
        .with_context(|| format!("opening the expected-state log {}", path.display()))?;
    Ok(Some(Arc::new(log)))
}

/// `verify --expected-log FILE`: reads every record back and sets it against the log.
pub fn check<S: Store>(ctx: &PhaseSpec, store: &S, log: &Path) -> Result<ExitCode> {
    let acked = ExpectedState::read(log).map_err(refused)?;
    let dataset = records(&ctx.workload, "verify")?;
    let (first, count) = (dataset.first(), dataset.count());
    let states: Vec<AtomicU8> = (0..count).map(|_| AtomicU8::new(0)).collect();
    kvlab_runner::verify_each(
        store,
        dataset,
        ctx.plan.threads,
        &ctx.stop,
        &|_, _| {},
        &|n, state| {
            let code = match state {
                RecordState::Intact => 1,
                RecordState::Corrupted => 2,
                RecordState::Missing => 3,
                RecordState::Error => 4,
            };
            states[(n - first) as usize].store(code, Ordering::Relaxed);
        },
    )?;
    let mut c = CrashCheck::new(&acked);
    let mut key = Vec::new();
    for (i, state) in states.iter().enumerate() {
        key.clear();
        dataset.key(first + i as u64, &mut key);
        let found = match state.load(Ordering::Relaxed) {
            1 => Some(Found::Intact),
            2 => Some(Found::Corrupted),
            3 => Some(Found::Missing),
            4 => Some(Found::Error),
            _ => None, // not read: interrupted
        };
        c.count(&acked, &key, found);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "[CRASH], Acknowledged, {}", c.acknowledged)?;
    writeln!(out, "[CRASH], Recovered, {}", c.recovered)?;
    writeln!(out, "[CRASH], Lost, {}", c.lost)?;
    writeln!(out, "[CRASH], Corrupted, {}", c.corrupted)?;
    writeln!(
        out,
        "[CRASH], UnacknowledgedPresent, {}",
        c.unacknowledged_present
    )?;
    writeln!(out, "[CRASH], Errors, {}", c.errors)?;
    writeln!(out, "[CRASH], Unchecked, {}", c.unchecked)?;
    out.flush()?;
    if !c.first_lost.is_empty() {
        eprintln!(
            "kvlab: lost acknowledged writes of: {}",
            c.first_lost.join(", ")
        );
    }
    Ok(if ctx.stop.load(Ordering::SeqCst) {
        ExitCode::from(130)
    } else if c.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

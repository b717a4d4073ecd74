//! What a workload family adds to a phase around the generic run — its notes, report
//! lines, result entries, timeline columns and failures — as one [`PhaseHook`] per
//! family, chosen once by [`of`]: the phase ([`crate::phase`]) and its output
//! ([`crate::phase::output`]) ask the hook and know no family. The hooks live beside
//! their families: a replay's in [`crate::phase::replay`], an import's, a thread plan's
//! and memtier's multi-key GETs in [`crate::phase::import`].
//!
//! A replay's preparation (adapting to the store, `--preload`) stays a generic function
//! (`replay::before`): it loads the store, and a trait object cannot take a store of
//! any type.

use std::io::Write;

use anyhow::Result;
use kvlab_measure::TimelineRow;
use kvlab_report::RunnerSection;
use kvlab_runner::RunOutcome;
use kvlab_workload::AnyWorkload;

use crate::phase::import::{ImportHook, MultiGetHook, PlanHook};
use crate::phase::replay::ReplayHook;
use crate::phase::PhaseSpec;

/// What one workload family adds to a phase. Every method has a default that adds
/// nothing.
pub trait PhaseHook {
    /// Remarks said on stderr after the run and kept in the result's notes.
    fn notes(&self, _ctx: &PhaseSpec, _outcome: &RunOutcome) -> Vec<String> {
        Vec::new()
    }

    /// Lines of the family's own after YCSB's text report.
    fn report(&self, _ctx: &PhaseSpec, _outcome: &RunOutcome, _out: &mut dyn Write) -> Result<()> {
        Ok(())
    }

    /// Whether the family's own accounting failed the phase (exit code 1) although the
    /// runner did not.
    fn failed(&self, _ctx: &PhaseSpec) -> bool {
        false
    }

    /// The family's entries in the result's runner section.
    fn runner(&self, _ctx: &PhaseSpec, _runner: &mut RunnerSection) {}

    /// The timeline's rows, completed with what the family knows of each interval.
    fn timeline(&self, _ctx: &PhaseSpec, _rows: &mut [TimelineRow]) {}
}

/// A family with nothing to add: YCSB, caches, mixgraph, key files, memtier's workload.
struct Plain;

impl PhaseHook for Plain {}

/// The hook of the phase's workload family.
pub fn of(ctx: &PhaseSpec) -> Box<dyn PhaseHook + '_> {
    if ctx.options.replay.is_some() {
        return Box::new(ReplayHook);
    }
    match &ctx.workload {
        AnyWorkload::Import(w) => Box::new(ImportHook(w)),
        AnyWorkload::CorePlan(_) | AnyWorkload::KeyPlan(_) => Box::new(PlanHook),
        AnyWorkload::Memtier(w) => Box::new(MultiGetHook(w)),
        _ => Box::new(Plain),
    }
}

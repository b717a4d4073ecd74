//! kvlab's phase library: what every command checks before it does any work.
//!
//! The types that matter:
//!
//! - [`STORES`]: one row of facts ([`StoreInfo`]) per store kvlab can run against — how it
//!   is reached ([`Access`]), its option prefix, the flags that apply to it ([`Flag`]),
//!   whether it persists, can be spawned, crashed, and the eviction policy `kvlab sim`
//!   compares it with. Flag refusals, help text, a suite's store validation, `kvlab
//!   crash`'s list and `kvlab sim`'s policy choice are all derived from it, so a new store
//!   is one row here (and one arm where stores are opened).
//! - [`StoreInfo::check`]: the one sentence for a flag that does not apply to a store
//!   (exit code 2 in the command line).
//! - [`limits`]: what the machine can hold — worker threads against the process and
//!   memory limits, connections against the open-file limit — checked before a phase
//!   starts, so a plan the machine cannot run is refused instead of aborting midway.
//! - [`plan`]: values that cannot mean anything (a zero duration, a sampling rate outside
//!   (0, 1], a run of zero operations) refused with the option named.
//!
//! - [`expected`]: the expected-state log of crash tests (a runner tap appending every
//!   acknowledged write) and the tally of what a store kept against it.
//! - [`observe`]: what watches or acts on a running phase beside its workload — live
//!   progress, the `--metrics` endpoint, Toxiproxy faults, outages — as fields of the
//!   phase ([`observe::Observers`]), never process globals.
//! - [`outputs`]: an output file that exists is replaced only with `--overwrite`, checked
//!   before the work that fills it.
//!
//! - [`options`]: a phase's options as plain values ([`options::PhaseOptions`]), which
//!   the command line's flags convert into.
//!
//! - [`phase`]: the phase engine — [`phase::select::select_phase`] makes a
//!   [`phase::PhaseSpec`] (workload, plan, report style, observers) from the options once,
//!   [`phase::open::open_store`] opens the store and runs it; output, SLO search, rounds,
//!   and each workload family's [`phase::hook::PhaseHook`] live beside it.
//!
//! - [`sim`]: `kvlab sim`'s table, page and comparison with measured runs.
//!
//! The command line's parser stops at [`options::PhaseOptions`]: the only flag type the
//! options hold is memtier's workload group, which `kvlab-memtier` owns with memtier's
//! syntax.

pub mod expected;
pub mod limits;
pub mod observe;
pub mod options;
pub mod outputs;
pub mod phase;
pub mod plan;
pub mod sim;
mod stores;

pub use stores::{is_store_option, Access, Flag, StoreInfo, OPTION_PREFIXES, STORES};

/// A plan that cannot run as given: the one sentence a user sees (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// Stopped by Ctrl-C before anything was measured (exit code 130, as a shell reports an
/// interrupted command).
#[derive(Debug)]
pub struct Interrupted(pub String);
impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Interrupted {}

impl Refusal {
    /// A refusal with this sentence.
    pub fn new(sentence: impl Into<String>) -> Self {
        Self(sentence.into())
    }
}

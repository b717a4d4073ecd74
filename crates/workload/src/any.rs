//! The one list of kvlab's workloads: [`AnyWorkload`] holds a workload of any family,
//! and [`with_workload!`](crate::with_workload) runs generic code on the one it holds.
//!
//! Adding a family touches its own module, one variant here and one arm of
//! [`with_workload!`](crate::with_workload); every question the binary asks of a
//! workload ([`AnyWorkload::needs`], [`AnyWorkload::operation_count`], …) is answered
//! through the [`Workload`] trait or the family's own methods, here, once.

use std::sync::Arc;

use kvlab_core::{Needs, ValueLayout, Workload};

use crate::{memtier::MemtierWorkload, Plan};
use crate::{CacheWorkload, CoreWorkload, ImportWorkload, KeyFileWorkload, PlanWorkload};
use crate::{MixGraphWorkload, ReplayWorkload};

/// A workload of any family, shared.
#[derive(Clone, Debug)]
pub enum AnyWorkload {
    /// YCSB's CoreWorkload (load, run, verify).
    Core(Arc<CoreWorkload>),
    /// A memtier_benchmark-style workload (run only).
    Memtier(Arc<MemtierWorkload>),
    /// A CacheBench-style cache workload (run only).
    Cache(Arc<CacheWorkload>),
    /// `kvlab import`: the records of a delimited file.
    Import(Arc<ImportWorkload>),
    /// A key-file workload (`run --keys`, `verify --keys`).
    Keys(Arc<KeyFileWorkload>),
    /// A thread plan on YCSB keys (`run --plan`).
    CorePlan(Arc<PlanWorkload<CoreWorkload>>),
    /// A thread plan on a key file (`run --plan --keys`).
    KeyPlan(Arc<PlanWorkload<KeyFileWorkload>>),
    /// `kvlab replay`: a trace's requests.
    Replay(Arc<ReplayWorkload>),
    /// db_bench's mixgraph (`-p workload=kvlab.mixgraph`, `kvlab db_bench`).
    MixGraph(Arc<MixGraphWorkload>),
}

/// Evaluates `$body` with `$w` bound to the `&Arc<W>` of the workload an
/// [`AnyWorkload`] holds, for any `W: Workload` — one mechanical arm per family:
///
/// ```
/// # use std::sync::Arc;
/// # use kvlab_workload::{with_workload, AnyWorkload, CoreWorkload, Properties};
/// # use kvlab_core::Workload;
/// let mut props = Properties::new();
/// props.set_override("operationcount=500").unwrap();
/// let core = CoreWorkload::from_properties(&props, &[], &[]).unwrap();
/// let any = AnyWorkload::Core(Arc::new(core));
/// let count = with_workload!(&any, w => w.operation_count());
/// assert_eq!(count, 500);
/// ```
#[macro_export]
macro_rules! with_workload {
    ($any:expr, $w:ident => $body:expr) => {
        match $any {
            $crate::AnyWorkload::Core($w) => $body,
            $crate::AnyWorkload::Memtier($w) => $body,
            $crate::AnyWorkload::Cache($w) => $body,
            $crate::AnyWorkload::Import($w) => $body,
            $crate::AnyWorkload::Keys($w) => $body,
            $crate::AnyWorkload::CorePlan($w) => $body,
            $crate::AnyWorkload::KeyPlan($w) => $body,
            $crate::AnyWorkload::Replay($w) => $body,
            $crate::AnyWorkload::MixGraph($w) => $body,
        }
    };
}

impl AnyWorkload {
    /// What the workload needs of a store.
    pub fn needs(&self) -> Needs {
        with_workload!(self, w => w.needs())
    }

    /// How a store that keeps a record in one value (Redis' string model, memcached)
    /// lays this workload's records out: the one field bare when every record is that
    /// one field (`fieldcount=1`), else the field encoding. Workloads of blobs, and
    /// plans whose workloads disagree, get the encoding.
    pub fn value_layout(&self) -> ValueLayout {
        let names: Vec<&[Vec<u8>]> = match self {
            AnyWorkload::Core(w) => vec![w.field_names()],
            AnyWorkload::Keys(w) => vec![w.field_names()],
            AnyWorkload::Import(w) => vec![w.field_names()],
            AnyWorkload::CorePlan(w) => w.workloads().iter().map(|w| w.field_names()).collect(),
            AnyWorkload::KeyPlan(w) => w.workloads().iter().map(|w| w.field_names()).collect(),
            _ => return ValueLayout::Encoded,
        };
        let mut layouts = names.into_iter().map(ValueLayout::for_fields);
        let first = layouts.next().unwrap_or_default();
        if layouts.all(|l| l == first) {
            first
        } else {
            ValueLayout::Encoded
        }
    }

    /// Operations to run when the command line gives neither a count nor a duration.
    pub fn operation_count(&self) -> u64 {
        with_workload!(self, w => w.operation_count())
    }

    /// The YCSB records behind the workload — what `load` writes, `verify` reads back
    /// and a fresh server is preloaded with — if it has them.
    pub fn records(&self) -> Option<&Arc<CoreWorkload>> {
        match self {
            AnyWorkload::Core(w) => Some(w),
            AnyWorkload::CorePlan(w) => w.workloads().first(),
            _ => None,
        }
    }

    /// Why the workload has no `phase` phase (load, verify), for a workload without
    /// [`AnyWorkload::records`].
    pub fn no_phase(&self, phase: &str) -> String {
        match self {
            AnyWorkload::Memtier(_) => format!(
                "a memtier-style workload (--ratio, --key-pattern, …) has no {phase} phase: \
                 use `kvlab run` (--ratio 1:0 --key-pattern P:P writes every key once)"
            ),
            AnyWorkload::Cache(_) => format!(
                "a cache workload (--cachebench, or a property file with workload=cache) has \
                 no {phase} phase: caches fill as they run (look-aside sets after misses); \
                 use `kvlab run`"
            ),
            _ => format!("this workload has no {phase} phase: use `kvlab run`"),
        }
    }

    /// `dataintegrity=true`: reads are checked against what was written.
    pub fn data_integrity(&self) -> bool {
        matches!(self, AnyWorkload::Core(w) if w.data_integrity())
    }

    /// The names of the arbitrary commands the workload sends (memtier's `--command`,
    /// `WAIT`, a replay's `MERGE`), by command id, for the results.
    pub fn command_names(&self) -> Vec<String> {
        match self {
            AnyWorkload::Memtier(w) => w.spec().command_names(),
            AnyWorkload::Replay(w) => w.command_names(),
            _ => Vec::new(),
        }
    }

    /// Every effective setting, for the result document.
    pub fn effective(&self) -> Vec<(String, String)> {
        match self {
            AnyWorkload::Core(w) => w.effective(),
            AnyWorkload::Memtier(w) => w.spec().effective(),
            AnyWorkload::Cache(w) => w.effective(),
            AnyWorkload::Import(w) => w.effective(),
            AnyWorkload::Keys(w) => w.effective(),
            AnyWorkload::CorePlan(w) => plan_effective(w.plan(), w.workloads()[0].effective()),
            AnyWorkload::KeyPlan(w) => plan_effective(w.plan(), w.workloads()[0].effective()),
            AnyWorkload::Replay(w) => w.effective(),
            AnyWorkload::MixGraph(w) => w.effective(),
        }
    }

    /// A thread plan and what each of its groups has done so far; `None` without a plan.
    pub fn plan_counts(&self) -> Option<(&Plan, Vec<crate::GroupCounts>)> {
        match self {
            AnyWorkload::CorePlan(w) => Some((w.plan(), w.counts())),
            AnyWorkload::KeyPlan(w) => Some((w.plan(), w.counts())),
            _ => None,
        }
    }

    /// A thread plan's group of each of its threads; empty without a plan.
    pub fn thread_groups(&self) -> Vec<usize> {
        let Some((plan, _)) = self.plan_counts() else {
            return Vec::new();
        };
        (0..plan.threads())
            .map(|t| plan.group_of_thread(t))
            .collect()
    }
}

/// A plan's settings: the base workload's, without its mix, and each group's.
fn plan_effective(plan: &Plan, base: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = base
        .into_iter()
        .filter(|(k, _)| !crate::PROPORTION_KEYS.contains(&k.as_str()))
        .collect();
    out.extend(plan.effective());
    out
}

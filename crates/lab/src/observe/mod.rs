//! What watches or acts on a running phase beside its workload: the progress line, the
//! `--metrics` endpoint, Toxiproxy's faults and the record of outages.
//!
//! The long-lived ones (the proxy, the endpoint) are [`Observers`], a field of the phase:
//! copies of a phase (an SLO step, memtier's `-x` runs) share them, and two phases in one
//! process do not see each other's.

pub mod fault;
pub mod metrics;
pub mod outage;
pub mod progress;

use std::sync::{Arc, OnceLock};

/// The observers of a running phase: the Toxiproxy proxy of `--fault` (set when a
/// network store is opened through it, removed from Toxiproxy when the last copy of
/// the phase is gone) and the `--metrics` endpoint (started by the first run that asks,
/// kept for the runs after it so its address stays the same).
#[derive(Clone, Default)]
pub struct Observers {
    /// The proxy in front of the store, once a network store is opened through one.
    pub proxy: Arc<OnceLock<Arc<fault::Proxy>>>,
    /// The metrics endpoint, once a run has started it.
    pub metrics: Arc<OnceLock<metrics::Endpoint>>,
}

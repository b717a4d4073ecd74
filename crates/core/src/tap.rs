//! [`Tap`]: something that sees every batch a phase sends — the trace recorder is one.

use std::fmt;

use crate::store::Batch;
use crate::Timestamp;

/// Sees every request of a phase as the client issued it and as it ended, whatever the
/// store: the runner hands each client's completed batches to the client's own
/// [`TapClient`], after the batch's results are accounted for. Each slot carries its
/// due time ([`crate::Slot::due`]) when the phase has one, and its completion time.
///
/// The runner asks for one [`TapClient`] per client, so a tap keeps per-client buffers
/// and needs no lock on the hot path.
pub trait Tap: Send + Sync + fmt::Debug {
    /// The tap of one client (`client` of `clients`), made on the client's thread
    /// before the phase starts.
    fn client(&self, client: usize, clients: usize) -> Box<dyn TapClient>;
}

/// One client's view of a [`Tap`]. The runner drops it when the client is done: an
/// implementation flushes what it buffered then.
pub trait TapClient: Send {
    /// `batch` was sent at `started` and every slot has completed.
    fn batch(&mut self, batch: &Batch, started: Timestamp);
}

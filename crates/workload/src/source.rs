//! The interface between workloads and the runner: a [`Workload`] hands each client an
//! [`OpSource`], which fills requests one at a time and is told how each one ended.

use std::sync::Arc;
use std::time::Duration;

use kvlab_core::{OpKind, Outcome, Request, Slot};

use crate::{CoreWorkload, LoadWorker, RunWorker};

/// What a source asks the runner to hand back with a request's completion: an opaque
/// value the source chose (e.g. the key number of an insert to acknowledge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(pub u64);

impl Ticket {
    /// A ticket that carries nothing.
    pub const NONE: Ticket = Ticket(u64::MAX);
}

/// What a source concluded about a completed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to check.
    Unchecked,
    /// The reply was checked and is what was written.
    Good,
    /// The reply was checked and differs from what was written.
    Bad,
}

/// One client's stream of operations.
///
/// The runner calls [`OpSource::next`] for each request it sends and, once the request
/// has completed, [`OpSource::completed`] with the slot and the ticket `next` returned —
/// in the order the requests were generated. A source may react to a completion, e.g. a
/// look-aside cache workload queues a set after a get that missed and returns it from
/// the next call to `next`.
///
/// A request that failed may be sent again: before completing a failed request the
/// runner asks [`OpSource::retry_after`], and when it names a delay the runner waits that
/// long — only this client waits; the thread's other clients go on — and sends the same
/// request again. `completed` is called once, after the last attempt.
pub trait OpSource: Send {
    /// Fills `req` (the caller cleared it) with the next operation; `None` when the
    /// source is exhausted.
    fn next(&mut self, req: &mut Request) -> Option<Ticket>;

    /// Learns how a request from [`OpSource::next`] ended.
    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict;

    /// For a request from [`OpSource::next`] that failed (`slot.result` is an error) and
    /// has been retried `retries` times so far: how long to wait before sending it again,
    /// or `None` to give up and complete it with this result. The default never retries.
    #[inline]
    fn retry_after(&mut self, slot: &Slot, retries: u64) -> Option<Duration> {
        let _ = (slot, retries);
        None
    }
}

/// A workload the runner can run: it makes one [`OpSource`] per client.
pub trait Workload: Send + Sync {
    /// The per-client source.
    type Source: OpSource + 'static;

    /// The source of client `client` of `clients`, seeded from the run seed.
    fn source(&self, seed: u64, client: usize, clients: usize) -> Self::Source;

    /// True when the workload issues scans (stores that cannot scan refuse it).
    fn needs_scan(&self) -> bool;

    /// Operations to run when the plan gives neither a count nor a duration.
    fn operation_count(&self) -> u64;
}

/// A [`CoreWorkload`] client: its load-phase or transaction-phase stream.
#[derive(Debug)]
pub enum CoreSource {
    /// Inserts of the load phase.
    Load(LoadWorker),
    /// The transaction mix.
    Run(RunWorker),
}

impl OpSource for CoreSource {
    #[inline]
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        match self {
            CoreSource::Load(w) => w.next(req).then_some(Ticket::NONE),
            CoreSource::Run(w) => Some(w.next(req).map_or(Ticket::NONE, Ticket)),
        }
    }

    #[inline]
    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        let CoreSource::Run(w) = self else {
            return Verdict::Unchecked;
        };
        if ticket != Ticket::NONE {
            // As YCSB: acknowledged whatever the outcome, so `latest` moves on.
            w.acknowledge(ticket.0);
        }
        let wl = w.workload();
        if wl.data_integrity()
            && slot.request.kind == OpKind::Read
            && matches!(slot.result, Ok(Outcome::Hit { .. }))
        {
            if wl.check_read(&slot.request.key, &slot.reply) {
                Verdict::Good
            } else {
                Verdict::Bad
            }
        } else {
            Verdict::Unchecked
        }
    }

    /// YCSB's insertion retries (`core_workload_insertion_retry_limit`, `…_interval`):
    /// a failed insert is sent again up to the limit, after the interval × a uniform
    /// 0.8–1.2 jitter. Other kinds are never retried.
    #[inline]
    fn retry_after(&mut self, slot: &Slot, retries: u64) -> Option<Duration> {
        if slot.request.kind != OpKind::Insert || slot.result.is_ok() {
            return None;
        }
        match self {
            CoreSource::Load(w) => w.retry_delay(retries),
            CoreSource::Run(w) => w.retry_delay(retries),
        }
    }
}

/// The transaction phase of a [`CoreWorkload`]; client `c` is YCSB worker `c`.
impl Workload for Arc<CoreWorkload> {
    type Source = CoreSource;

    fn source(&self, seed: u64, client: usize, _clients: usize) -> CoreSource {
        CoreSource::Run(self.run_worker(seed, client))
    }

    fn needs_scan(&self) -> bool {
        CoreWorkload::needs_scan(self)
    }

    fn operation_count(&self) -> u64 {
        CoreWorkload::operation_count(self)
    }
}

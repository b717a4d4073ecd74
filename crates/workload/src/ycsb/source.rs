//! [`CoreWorkload`] behind the runner's seam ([`kvlab_core::Workload`],
//! [`kvlab_core::Dataset`]): its clients are [`CoreSource`]s.

use std::sync::Arc;
use std::time::Duration;

use kvlab_core::{Dataset, Needs, OpKind, OpSource, Outcome, Record, Request, Slot};
use kvlab_core::{Ticket, Verdict, Workload};

use crate::{CoreWorkload, LoadWorker, RunWorker};

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
impl Workload for CoreWorkload {
    type Source = CoreSource;

    fn source(self: &Arc<Self>, seed: u64, client: usize, _clients: usize) -> CoreSource {
        CoreSource::Run(self.run_worker(seed, client))
    }

    fn needs(&self) -> Needs {
        Needs {
            scan: CoreWorkload::needs_scan(self),
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        CoreWorkload::operation_count(self)
    }
}

/// The records of a [`CoreWorkload`]: `[insertstart, insertstart + insertcount)`, loaded
/// by [`LoadWorker`]s (client `c` is YCSB load worker `c`) and verified field by field.
impl Dataset for CoreWorkload {
    type Loader = CoreSource;

    fn first(&self) -> u64 {
        self.insert_start()
    }

    fn count(&self) -> u64 {
        self.insert_count()
    }

    fn loader(&self, seed: u64, client: usize, clients: usize) -> CoreSource {
        CoreSource::Load(self.load_worker(seed, client, clients))
    }

    fn key(&self, n: u64, key: &mut Vec<u8>) {
        self.key_name(n, key);
    }

    /// Present with every field the load wrote, and — with `dataintegrity=true` — the
    /// same values.
    fn check(&self, _n: u64, key: &[u8], reply: &Record) -> bool {
        self.check_loaded(key, reply)
    }
}

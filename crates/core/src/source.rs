//! The seam between workloads and the runner: a [`Workload`] hands each client an
//! [`OpSource`], which fills requests one at a time, may say when each is due, and is
//! told how each one ended. A [`Dataset`] is a workload's records, for loading and
//! verifying them. What a workload needs of a store ([`Needs`]) is checked once against
//! the store's [`Capabilities`] before anything runs.

use std::sync::Arc;
use std::time::Duration;

use crate::{Capabilities, Record, Request, Slot};

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
/// **When a request is due.** Right after `next`, the runner asks a timed source
/// ([`OpSource::TIMED`]) for [`OpSource::due`]. A
/// source that knows when its request should start (a trace replay: the recorded time,
/// scaled) returns it, counted from the start of the phase — the measured phase, or
/// the warm-up while warming up. The runner then sends the request no earlier than that
/// and measures its latency also from that moment (reported as `Intended-…`), exactly as
/// for an open-loop target rate — so a store that stalls cannot hide the
/// queueing it causes (coordinated omission). `None` (the default) leaves the timing to
/// the run's plan: closed loop, or the plan's target rate.
///
/// A request that failed may be sent again: before completing a failed request the
/// runner asks [`OpSource::retry_after`], and when it names a delay the runner waits that
/// long — only this client waits; the thread's other clients go on — and sends the same
/// request again. `completed` is called once, after the last attempt.
pub trait OpSource: Send {
    /// True when the source gives due times ([`OpSource::due`]). The default, false,
    /// lets the runner skip asking — sources without due times pay nothing for them.
    const TIMED: bool = false;

    /// Fills `req` (the caller cleared it) with the next operation; `None` when the
    /// source is exhausted.
    fn next(&mut self, req: &mut Request) -> Option<Ticket>;

    /// When the request the last [`OpSource::next`] returned is due, from the start of
    /// the phase; `None` leaves it to the plan. The default is `None`. Asked only when
    /// [`OpSource::TIMED`] is true.
    #[inline]
    fn due(&self) -> Option<Duration> {
        None
    }

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

/// What a workload needs of a store, checked once before a run against the store's
/// [`Capabilities`] ([`Needs::check`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Ordered scans ([`crate::OpKind::Scan`]).
    pub scan: bool,
    /// Reads of several keys in one request ([`Request::more_keys`], memtier's
    /// `--multi-key-get`).
    pub multi_read: bool,
    /// Arbitrary commands ([`Request::command`], memtier's `--command` and `WAIT`).
    pub commands: bool,
    /// Writes carry a time to live ([`Request::ttl_s`]). A store that cannot expire
    /// entries still runs the workload (the TTLs are ignored); the caller may warn
    /// ([`Needs::ignored_ttls`]).
    pub ttl: bool,
    /// Values are opaque blobs ([`crate::Value`]) rather than YCSB's named fields.
    /// Every store takes both; a store with several data models picks one by it.
    pub blob: bool,
}

impl Needs {
    /// What both `self` and `other` need: a workload that runs either (thread plans).
    pub fn union(self, other: Needs) -> Needs {
        Needs {
            scan: self.scan || other.scan,
            multi_read: self.multi_read || other.multi_read,
            commands: self.commands || other.commands,
            ttl: self.ttl || other.ttl,
            blob: self.blob || other.blob,
        }
    }

    /// Checks these needs against store `store`'s capabilities: the first thing it
    /// cannot do, as a message naming the store and what would.
    pub fn check(&self, store: &str, caps: &Capabilities) -> Result<(), String> {
        if self.scan && !caps.scan {
            return Err(format!(
                "the workload has scans but the {store} store cannot scan"
            ));
        }
        if self.multi_read && !caps.multi_read {
            return Err(format!(
                "the workload reads several keys in one request (memtier --multi-key-get) \
                 but the {store} store cannot; the redis (string model), memcached and null \
                 stores can"
            ));
        }
        if self.commands && !caps.commands {
            return Err(format!(
                "the workload sends arbitrary commands (memtier --command, --wait-ratio) \
                 but the {store} store cannot; the redis store can"
            ));
        }
        Ok(())
    }

    /// True when the workload's writes carry TTLs that the store will not honour.
    pub fn ignored_ttls(&self, caps: &Capabilities) -> bool {
        self.ttl && !caps.ttl
    }
}

/// A workload the runner can run: it makes one [`OpSource`] per client.
pub trait Workload: Send + Sync {
    /// The per-client source.
    type Source: OpSource + 'static;

    /// The source of client `client` of `clients`, seeded from the run seed. Sources
    /// outlive the call (they move to worker threads) and usually share the workload:
    /// the runner holds every workload in an [`Arc`].
    fn source(self: &Arc<Self>, seed: u64, client: usize, clients: usize) -> Self::Source;

    /// What the workload needs of a store, checked before it runs.
    fn needs(&self) -> Needs;

    /// Operations to run when the plan gives neither a count nor a duration.
    fn operation_count(&self) -> u64;
}

/// A workload's records: what a load phase inserts and what a verify phase reads back.
///
/// Records are numbered `first()..first() + count()`; loading splits them among the
/// clients as YCSB splits them among threads (client `c` of `n` loads `count / n`
/// records, one more for the first `count % n` clients).
pub trait Dataset: Send + Sync {
    /// The load phase's per-client source: the inserts of one client's slice.
    type Loader: OpSource + 'static;

    /// The first record number.
    fn first(&self) -> u64;

    /// How many records there are.
    fn count(&self) -> u64;

    /// The load-phase source of client `client` of `clients`, seeded from the run seed.
    fn loader(&self, seed: u64, client: usize, clients: usize) -> Self::Loader;

    /// What loading needs of a store.
    fn load_needs(&self) -> Needs {
        Needs::default()
    }

    /// Writes record `n`'s key into `key` (cleared by the caller).
    fn key(&self, n: u64, key: &mut Vec<u8>);

    /// Sets up `req` (cleared by the caller, `key` already written) to read record `n`
    /// back for verification. The default reads every field.
    fn verify_request(&self, n: u64, req: &mut Request) {
        let _ = n;
        req.kind = crate::OpKind::Read;
        req.read.set_all();
    }

    /// Whether `reply`, read back for record `n` (whose key is `key`), is the record as
    /// loaded.
    fn check(&self, n: u64, key: &[u8], reply: &Record) -> bool;
}

/// A shared dataset is the dataset.
impl<D: Dataset + ?Sized> Dataset for Arc<D> {
    type Loader = D::Loader;

    fn first(&self) -> u64 {
        (**self).first()
    }

    fn count(&self) -> u64 {
        (**self).count()
    }

    fn loader(&self, seed: u64, client: usize, clients: usize) -> D::Loader {
        (**self).loader(seed, client, clients)
    }

    fn load_needs(&self) -> Needs {
        (**self).load_needs()
    }

    fn key(&self, n: u64, key: &mut Vec<u8>) {
        (**self).key(n, key)
    }

    fn verify_request(&self, n: u64, req: &mut Request) {
        (**self).verify_request(n, req)
    }

    fn check(&self, n: u64, key: &[u8], reply: &Record) -> bool {
        (**self).check(n, key, reply)
    }
}

//! kvlab's runner: drives a [`Store`] with a workload from worker threads and measures it.
//!
//! - [`RunPlan`] says how: threads, how many operations or how long, warm-up, open-loop
//!   target rate, reporting interval, seed, error budget.
//! - [`load`] inserts a [`Dataset`]'s records; [`run`] executes any [`Workload`]'s
//!   operations; [`verify`] reads every loaded record back. The workload's
//!   [`kvlab_core::Needs`] are checked against the store's capabilities first.
//! - A source may say when each request is due ([`OpSource::due`], e.g. a trace
//!   replay): the request waits until then and its latency is also measured from then,
//!   as in open loop; otherwise the plan decides (closed loop, or a target rate).
//! - Work is done by *clients*: each has its own session (a connection, for network
//!   stores), its own op source ([`OpSource`]) and keeps up to `pipeline` requests in
//!   flight. `threads × clients` clients run on `threads` OS threads: an embedded store
//!   gets one client per thread, polled directly; a network store's clients are tasks
//!   of a tokio current-thread runtime on each thread (like memtier's threads × clients
//!   × pipeline).
//! - Each thread owns a [`Recorder`] shared by its clients and hands it over at every
//!   interval boundary (an atomic epoch, checked after each batch — no lock on the hot
//!   path). The calling thread merges the hand-overs into an [`Interval`], passes it to
//!   the caller's observer (progress, timeline, interval log) and into the run's totals.
//!
//! Latency is measured here, from the moment the request is handed to the session (or,
//! in open loop, from its intended start) to the moment the session completed it —
//! never by the store.

#![warn(missing_docs)]

mod client;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use kvlab_core::{block_on, Batch, Dataset, Outcome, Request, Session, Store, StoreError};
use kvlab_core::{OpSource, Tap, Workload};
use kvlab_measure::{ClientStats, Recorder};

use client::{BlockingPacer, Client, ClientTotals, Schedule, ThreadState, TokioPacer};

/// A failure that stops a phase before it starts.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The store could not open a session.
    #[error("opening a session on {store}: {source}")]
    Session {
        /// Store name.
        store: &'static str,
        /// Why.
        source: StoreError,
    },
    /// The workload needs something the store cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// A plan that makes no sense (e.g. zero threads).
    #[error("invalid plan: {0}")]
    Plan(String),
}

/// How much to do before measuring.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    /// Measure from the first operation.
    None,
    /// Run this many operations (in total, shared by the workers) before measuring;
    /// they are in addition to the measured operations.
    Ops(u64),
    /// Run for this long before measuring.
    Time(Duration),
}

/// An open-loop target rate over all clients, in operations per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TargetRate {
    /// The same rate throughout.
    Constant(f64),
    /// `mean + amplitude × sin(2π t / period)`: a load that swings up and down, to see
    /// how latency follows it.
    Sine {
        /// The average rate.
        mean: f64,
        /// The swing above and below the mean (less than the mean).
        amplitude: f64,
        /// One full swing.
        period: Duration,
    },
}

impl TargetRate {
    /// The rate `t_s` seconds into the run.
    pub fn at(&self, t_s: f64) -> f64 {
        match *self {
            TargetRate::Constant(r) => r,
            TargetRate::Sine {
                mean,
                amplitude,
                period,
            } => mean + amplitude * (std::f64::consts::TAU * t_s / period.as_secs_f64()).sin(),
        }
    }

    /// The average rate.
    pub fn mean(&self) -> f64 {
        match *self {
            TargetRate::Constant(r) => r,
            TargetRate::Sine { mean, .. } => mean,
        }
    }

    fn validate(&self) -> Result<(), String> {
        match *self {
            TargetRate::Constant(r) if !(r.is_finite() && r > 0.0) => {
                Err(format!("target rate must be > 0, got {r}"))
            }
            TargetRate::Sine {
                mean,
                amplitude,
                period,
            } if !(mean.is_finite()
                && amplitude.is_finite()
                && mean > 0.0
                && (0.0..mean).contains(&amplitude)
                && !period.is_zero()) =>
            {
                Err(format!(
                    "a sine target rate needs mean > 0, 0 <= amplitude < mean and a period > 0; \
                     got mean {mean}, amplitude {amplitude}, period {period:?}"
                ))
            }
            _ => Ok(()),
        }
    }
}

/// How to run a phase.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// Worker threads.
    pub threads: usize,
    /// Clients (sessions, i.e. connections) per thread; more than one only for stores
    /// whose sessions need a runtime (network stores).
    pub clients: usize,
    /// Requests each client keeps in flight (the batch size).
    pub pipeline: usize,
    /// Measured operations in total; `None` with a duration means "until the time is up".
    pub operations: Option<u64>,
    /// Stop after this long (measured part only).
    pub duration: Option<Duration>,
    /// Warm-up before measuring.
    pub warmup: Warmup,
    /// Open loop: the target rate over all clients. Latency is then also measured from
    /// each batch's intended start.
    pub target_rate: Option<TargetRate>,
    /// Length of a reporting interval.
    pub interval: Duration,
    /// The run seed; worker streams derive from it.
    pub seed: u64,
    /// Stop when more than this many operations have failed.
    pub max_errors: Option<u64>,
    /// Stop at the first request that fails because its connection was lost or could not
    /// be made (memtier without `--reconnect-on-error`); the outcome then says which
    /// ([`RunOutcome::connection_lost`]). Otherwise sessions reconnect with back-off and
    /// the run goes on.
    pub stop_on_connection_error: bool,
    /// Thread plans: the group of each thread (`thread_groups[t]`), so that results are
    /// also kept per group ([`RunOutcome::groups`]); empty for one group.
    pub thread_groups: Vec<usize>,
    /// Keep each client's requests second by second ([`RunOutcome::clients`], memtier's
    /// `--client-stats`).
    pub client_stats: bool,
    /// Shown every batch every client sends, e.g. the trace recorder (`--record`).
    pub tap: Option<Arc<dyn Tap>>,
    /// With a target rate, send each client's requests in bursts, one every tick, instead
    /// of spacing them evenly: memtier_benchmark's `--rate-limiting`, which releases a
    /// connection's requests at most 50 times a second. The schedule's requests due
    /// within a tick leave at its start (clients' ticks staggered across one tick), and
    /// the wait for the next tick sleeps without spinning: cheap at any rate, where an
    /// even schedule of sub-millisecond gaps keeps a core busy. `None`: evenly.
    pub burst_tick: Option<Duration>,
}

impl Default for RunPlan {
    fn default() -> RunPlan {
        RunPlan {
            threads: 1,
            clients: 1,
            pipeline: 1,
            operations: None,
            duration: None,
            warmup: Warmup::None,
            target_rate: None,
            interval: Duration::from_secs(1),
            seed: 0,
            max_errors: None,
            stop_on_connection_error: false,
            thread_groups: Vec::new(),
            client_stats: false,
            tap: None,
            burst_tick: None,
        }
    }
}

/// One reporting interval, as handed to the observer.
#[derive(Debug)]
pub struct Interval<'a> {
    /// Seconds since the measured part started (negative during warm-up).
    pub time_s: f64,
    /// The interval's length in seconds.
    pub interval_s: f64,
    /// What the workers recorded in this interval.
    pub recorder: &'a Recorder,
    /// Measured operations so far.
    pub done: u64,
    /// Measured operations expected in all (when known), for an ETA.
    pub expected: Option<u64>,
    /// Expected duration of the measured part (when known), for an ETA.
    pub duration: Option<Duration>,
    /// True while warming up: this interval does not count towards the results.
    pub warmup: bool,
}

/// What a phase produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// Everything measured (warm-up excluded).
    pub total: Recorder,
    /// Length of the measured part.
    pub elapsed: Duration,
    /// The wall-clock time the measured part started: time 0 of its intervals.
    pub measured_start: Option<std::time::SystemTime>,
    /// Stopped by the caller's stop flag (Ctrl-C) before finishing.
    pub interrupted: bool,
    /// Stopped because the error budget was exhausted.
    pub error_budget_exceeded: bool,
    /// Stopped at a lost connection ([`RunPlan::stop_on_connection_error`]): its error.
    pub connection_lost: Option<StoreError>,
    /// Open loop (a target rate, or a source's due times): the client could not keep to
    /// its schedule.
    pub fell_behind: bool,
    /// Open loop (a target rate, or a source's due times): the largest lag behind
    /// schedule seen by a worker, in milliseconds.
    pub max_schedule_lag_ms: f64,
    /// Reads whose values were checked (`dataintegrity=true`).
    pub integrity_checked: u64,
    /// Reads whose values did not match.
    pub integrity_failed: u64,
    /// Thread plans: what each group measured (indexed by group), beside `total`.
    pub groups: Vec<Recorder>,
    /// Keys that measured reads found, counted per key: a read's hit counts 1 and a
    /// multi-key read ([`kvlab_core::Outcome::MultiRead`]) its hits — where `total`
    /// counts each request once (memtier's hits/s against its ops/s).
    pub keys_hit: u64,
    /// Keys that measured reads did not find, counted per key as [`RunOutcome::keys_hit`].
    pub keys_missed: u64,
    /// Requests still waiting for a reply when the run stopped (a stalled server at the
    /// end of `duration`, Ctrl-C): abandoned, counted here and not as operations.
    pub unfinished: u64,
    /// With [`RunPlan::client_stats`]: each client's measured requests, second by second,
    /// ordered by thread and client; empty otherwise.
    pub clients: Vec<ClientStats>,
    /// The first [`FIRST_ERRORS_PER_KIND`] failed requests of each
    /// [`kvlab_core::StoreErrorKind`] (warm-up included), in the order they were counted,
    /// with the store's own messages.
    pub first_errors: Vec<StoreError>,
}

/// How many failures of each kind [`RunOutcome::first_errors`] keeps.
pub const FIRST_ERRORS_PER_KIND: u64 = 3;

/// Loads a dataset's records (for YCSB, `[insertstart, insertstart+insertcount)`),
/// split among the plan's clients as YCSB splits them among threads. `plan.operations`
/// and `duration` are ignored; warm-up is not applied.
pub fn load<S: Store, D: Dataset>(
    store: &S,
    dataset: &D,
    plan: &RunPlan,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
) -> Result<RunOutcome, RunError> {
    dataset
        .load_needs()
        .check(store.name(), &store.capabilities())
        .map_err(RunError::Unsupported)?;
    let count = dataset.count();
    let plan = RunPlan {
        operations: Some(count),
        duration: None,
        warmup: Warmup::None,
        ..plan.clone()
    };
    let clients = plan.threads * plan.clients;
    let sources: Vec<_> = (0..clients)
        .map(|i| {
            (
                dataset.loader(plan.seed, i, clients),
                split(count, clients, i),
            )
        })
        .collect();
    drive(store, &plan, sources, stop, observer)
}

/// Runs a workload's operations: `plan.operations` in all (split among the clients as
/// YCSB splits them among threads), or until `plan.duration` has passed, or — with
/// neither — the workload's own operation count.
pub fn run<S: Store, W: Workload>(
    store: &S,
    workload: &Arc<W>,
    plan: &RunPlan,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
) -> Result<RunOutcome, RunError> {
    workload
        .needs()
        .check(store.name(), &store.capabilities())
        .map_err(RunError::Unsupported)?;
    let total = match (plan.operations, plan.duration) {
        (Some(n), _) => n,
        (None, Some(_)) => u64::MAX,
        (None, None) => workload.operation_count(),
    };
    let clients = plan.threads * plan.clients;
    let sources: Vec<_> = (0..clients)
        .map(|i| {
            (
                workload.source(plan.seed, i, clients),
                split(total, clients, i),
            )
        })
        .collect();
    let plan = RunPlan {
        operations: (total != u64::MAX).then_some(total),
        ..plan.clone()
    };
    drive(store, &plan, sources, stop, observer)
}

/// State shared by the workers and the collecting thread.
pub(crate) struct Shared {
    /// Set once the run is stopping; set it with [`Shared::request_stop`].
    pub(crate) stop: AtomicBool,
    /// The current interval; advance it with [`Shared::next_epoch`].
    pub(crate) epoch: AtomicU64,
    /// Wakes the network threads' idle tasks (each thread's watcher and its clients'
    /// stop watch) when a new interval starts or the run stops: they wait for it
    /// instead of looking every few milliseconds, so a slow `--rate-limiting` run does
    /// not wake a thread a hundred times a second for nothing.
    pub(crate) wake: tokio::sync::Notify,
    pub(crate) errors: AtomicU64,
    /// Threads that have finished their warm-up.
    done: AtomicU64,
    pub(crate) max_errors: u64,
    pub(crate) budget_exceeded: AtomicBool,
    pub(crate) stop_on_connection_error: bool,
    /// The first lost connection, with [`RunPlan::stop_on_connection_error`].
    pub(crate) connection_lost: std::sync::Mutex<Option<StoreError>>,
    /// The first session that could not get ready; the run stops and fails with it.
    setup_error: std::sync::Mutex<Option<StoreError>>,
    /// Failures counted so far per [`kvlab_core::StoreErrorKind::index`], to keep the
    /// first few of each kind without taking the lock for every one.
    pub(crate) errors_seen: [AtomicU64; kvlab_core::StoreErrorKind::ALL.len()],
    /// [`RunOutcome::first_errors`].
    pub(crate) first_errors: std::sync::Mutex<Vec<StoreError>>,
    /// Emptied recorders, handed back by the collector for the next interval, as
    /// HdrHistogram's `Recorder` recycles its inactive histogram: a recorder is ~3 MiB of
    /// histograms, and allocating (and zeroing) one per thread per interval cost ~5 % of
    /// a pipelined network run's CPU in page faults.
    spares: std::sync::Mutex<Vec<Recorder>>,
}

impl Shared {
    /// Stops the run: every thread sees [`Shared::stop`], and its idle tasks wake.
    pub(crate) fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake.notify_waiters();
    }

    /// Starts a new interval and returns its epoch; idle threads wake to hand over.
    fn next_epoch(&self) -> u64 {
        let epoch = self.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        self.wake.notify_waiters();
        epoch
    }

    /// Waits until `done()` holds, looked at again whenever [`Shared::wake`] fires.
    async fn wait_for(&self, done: impl Fn() -> bool) {
        loop {
            let woken = self.wake.notified();
            let mut woken = std::pin::pin!(woken);
            // Registered before looking, so a wake between the look and the wait is
            // not lost.
            woken.as_mut().enable();
            if done() {
                return;
            }
            woken.await;
        }
    }

    /// An empty recorder: a recycled one if any.
    pub(crate) fn spare_recorder(&self) -> Recorder {
        self.spares
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_default()
    }

    /// Empties `recorder` and keeps it for [`Shared::spare_recorder`].
    fn recycle(&self, mut recorder: Recorder) {
        recorder.reset();
        self.spares
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(recorder);
    }
}

/// A thread's recorder, handed to the collector at an interval boundary.
pub(crate) struct Handover {
    /// The thread that sends it.
    pub(crate) thread: usize,
    /// The interval the recorder's operations completed in.
    pub(crate) epoch: u64,
    /// The thread sends nothing more for intervals before this one (`u64::MAX`: it has
    /// finished).
    pub(crate) closes: u64,
    pub(crate) warmup: bool,
    pub(crate) recorder: Recorder,
}

/// Splits `total` among `parts` as YCSB splits operations among threads: every part
/// gets `total / parts`, the first `total % parts` one more. `u64::MAX` means unbounded.
fn split(total: u64, parts: usize, index: usize) -> u64 {
    if total == u64::MAX {
        return u64::MAX;
    }
    let parts = parts as u64;
    total / parts + u64::from((index as u64) < total % parts)
}

fn check_plan(store_needs_runtime: bool, plan: &RunPlan) -> Result<(), RunError> {
    if plan.threads == 0 || plan.clients == 0 || plan.pipeline == 0 {
        return Err(RunError::Plan(
            "threads, connections and pipeline must each be at least 1".into(),
        ));
    }
    if plan.clients > 1 && !store_needs_runtime {
        return Err(RunError::Plan(format!(
            "{} connections per thread: only network stores have connections; use --threads",
            plan.clients
        )));
    }
    if let Some(rate) = plan.target_rate {
        rate.validate().map_err(RunError::Plan)?;
    }
    Ok(())
}

/// Opens every session first, so that a store that cannot serve fails before anything
/// runs.
fn open_sessions<S: Store>(store: &S, n: usize) -> Result<Vec<S::Session>, RunError> {
    (0..n)
        .map(|_| {
            store.session().map_err(|source| RunError::Session {
                store: store.name(),
                source,
            })
        })
        .collect()
}

fn drive<S: Store, Src: OpSource + 'static>(
    store: &S,
    plan: &RunPlan,
    sources: Vec<(Src, u64)>,
    caller_stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
) -> Result<RunOutcome, RunError> {
    let needs_runtime = store.capabilities().needs_runtime;
    check_plan(needs_runtime, plan)?;
    let sessions = open_sessions(store, sources.len())?;
    kvlab_core::Timestamp::calibrate();
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        done: AtomicU64::new(0),
        max_errors: plan.max_errors.unwrap_or(u64::MAX),
        budget_exceeded: AtomicBool::new(false),
        stop_on_connection_error: plan.stop_on_connection_error,
        connection_lost: std::sync::Mutex::new(None),
        setup_error: std::sync::Mutex::new(None),
        errors_seen: Default::default(),
        first_errors: std::sync::Mutex::new(Vec::new()),
        spares: std::sync::Mutex::new(Vec::new()),
        wake: tokio::sync::Notify::new(),
    });
    let threads = plan.threads;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let (tx, rx) = mpsc::channel::<Handover>();
    let timing = Arc::new(Timing::default());

    // Client c runs on thread c / clients; YCSB's warm-up split is over all clients.
    let total_clients = sources.len();
    let warm_total = match plan.warmup {
        Warmup::Ops(n) => n,
        Warmup::Time(_) => u64::MAX,
        Warmup::None => 0,
    };
    let mut per_thread: Vec<Vec<Budgeted<S::Session, Src>>> =
        (0..threads).map(|_| Vec::new()).collect();
    for (c, ((source, quota), session)) in sources.into_iter().zip(sessions).enumerate() {
        let warm = split(warm_total, total_clients, c);
        let mut client = Client::new(session, source, plan.pipeline);
        client.tap = plan.tap.as_ref().map(|tap| tap.client(c, total_clients));
        if plan.client_stats {
            client.stats = Some(Box::new(ClientStats::new(
                c / plan.clients,
                c % plan.clients,
            )));
        }
        per_thread[c / plan.clients].push((client, quota, warm));
    }

    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (index, clients) in per_thread.into_iter().enumerate() {
            let worker = Worker {
                first_client: index * plan.clients,
                total_clients,
                clients,
                needs_runtime,
                shared: Arc::clone(&shared),
                barrier: Arc::clone(&barrier),
                tx: tx.clone(),
                plan: plan.clone(),
                timing: Arc::clone(&timing),
            };
            handles.push(
                std::thread::Builder::new()
                    .name(format!("kvlab-worker-{index}"))
                    .spawn_scoped(scope, move || worker.work())
                    .expect("spawning a worker thread"),
            );
        }
        drop(tx);
        // Should the collector panic, the workers must still stop, or the scope would
        // wait for them forever.
        let _stop_on_unwind = StopOnDrop(&shared.stop);
        let outcome = collect(
            plan,
            &shared,
            &barrier,
            &rx,
            caller_stop,
            observer,
            handles,
            &timing,
        )?;
        // A session that could not get ready (connect, authenticate) stopped the run
        // before anything was timed: the phase failed, with the first such error.
        let setup = shared
            .setup_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match setup {
            Some(source) => Err(RunError::Session {
                store: store.name(),
                source,
            }),
            None => Ok(outcome),
        }
    })
}

/// Sets the stop flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// When the warm-up ends and the measured part starts, set by the collector.
#[derive(Default)]
struct Timing {
    warmup_start: std::sync::OnceLock<Instant>,
    warmup_end: std::sync::OnceLock<Instant>,
    start: std::sync::OnceLock<Instant>,
}

/// Per-group totals of a thread plan.
struct GroupTotals<'a> {
    thread_groups: &'a [usize],
    groups: Vec<Recorder>,
}

impl GroupTotals<'_> {
    fn new(thread_groups: &[usize]) -> GroupTotals<'_> {
        let n = thread_groups.iter().max().map_or(0, |&g| g + 1);
        GroupTotals {
            thread_groups,
            groups: (0..n).map(|_| Recorder::new()).collect(),
        }
    }

    /// Adds a measured hand-over to its thread's group.
    fn absorb(&mut self, h: &Handover) {
        if let Some(&g) = self.thread_groups.get(h.thread) {
            self.groups[g].merge(&h.recorder);
        }
    }
}

/// The measured intervals not yet reported. An interval is reported once every thread
/// has handed over what completed in it, so a thread that blocks (a paused server, an
/// engine stall) delays the report of an interval instead of moving the operations it
/// finished before the stall into a later one (HdrHistogram's interval logs keep the same
/// promise with a recorder the reader swaps).
struct Intervals {
    /// When the measured part started.
    start: Instant,
    /// The epoch of `pending[0]`, the oldest unreported interval.
    first: u64,
    /// The epoch being recorded now (the last of `pending`).
    current: u64,
    /// When each pending interval started, oldest first.
    starts: VecDeque<Instant>,
    /// What completed in each pending interval, oldest first.
    pending: VecDeque<Recorder>,
    /// Per thread: it sends nothing more for epochs before this one.
    closed: Vec<u64>,
    /// Measured operations reported so far.
    done: u64,
}

impl Intervals {
    fn new(epoch: u64, start: Instant, threads: usize) -> Intervals {
        Intervals {
            start,
            first: epoch,
            current: epoch,
            starts: VecDeque::from([start]),
            pending: VecDeque::from([Recorder::new()]),
            closed: vec![epoch; threads],
            done: 0,
        }
    }

    /// Files a measured hand-over under the interval its operations completed in, and
    /// returns its (now merged) recorder.
    fn absorb(&mut self, h: Handover) -> Recorder {
        // A thread never sends for an interval it already closed, nor for one the
        // collector has not started; clamp rather than lose data if it did.
        debug_assert!(h.epoch >= self.first && h.epoch <= self.current);
        let index = h.epoch.clamp(self.first, self.current) - self.first;
        self.pending[index as usize].merge(&h.recorder);
        let closed = &mut self.closed[h.thread];
        *closed = (*closed).max(h.closes);
        h.recorder
    }

    /// Starts interval `epoch` at `now`, its operations to be gathered in `recorder`
    /// (empty).
    fn tick(&mut self, epoch: u64, now: Instant, recorder: Recorder) {
        self.current = epoch;
        self.starts.push_back(now);
        self.pending.push_back(recorder);
    }

    /// Every thread has finished.
    fn finished(&self) -> bool {
        self.closed.iter().all(|&c| c == u64::MAX)
    }

    /// Marks every thread finished (they have all gone).
    fn all_finished(&mut self) {
        self.closed.fill(u64::MAX);
    }

    /// Reports, oldest first, every interval all threads have handed over; once all
    /// have finished, the last one too, ending at `now`.
    fn emit(
        &mut self,
        plan: &RunPlan,
        now: Instant,
        total: &mut Recorder,
        observer: &mut dyn FnMut(&Interval<'_>),
        recycle: &mut dyn FnMut(Recorder),
    ) {
        let finished = self.finished();
        let oldest_open = self.closed.iter().copied().min().unwrap_or(u64::MAX);
        while let Some(started) = self.starts.front().copied() {
            let end = if self.first < self.current && oldest_open > self.first {
                self.starts[1]
            } else if finished {
                self.starts.get(1).copied().unwrap_or(now)
            } else {
                break;
            };
            let recorder = self.pending.pop_front().expect("one recorder per start");
            self.starts.pop_front();
            self.done += recorder.operations();
            observer(&Interval {
                time_s: end.duration_since(self.start).as_secs_f64(),
                interval_s: end.duration_since(started).as_secs_f64(),
                recorder: &recorder,
                done: self.done,
                expected: plan.operations,
                duration: plan.duration,
                warmup: false,
            });
            total.merge(&recorder);
            recycle(recorder);
            self.first += 1;
        }
    }
}

/// Ends an interval: bumps the epoch so every thread hands over its recorder, then
/// waits (briefly) for the hand-overs so that each interval holds its own operations.
/// Returns the number of threads that reported they have finished, and the measured
/// operations received.
fn gather(
    shared: &Shared,
    rx: &mpsc::Receiver<Handover>,
    active: usize,
    into: &mut Recorder,
    warm: &mut Recorder,
    groups: &mut GroupTotals<'_>,
) -> (usize, u64) {
    let epoch = shared.next_epoch();
    let deadline = Instant::now() + Duration::from_millis(100);
    let (mut seen, mut finished, mut ops) = (0usize, 0usize, 0u64);
    while seen < active {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok(h) => {
                if h.closes == epoch || h.closes == u64::MAX {
                    seen += 1;
                }
                finished += usize::from(h.closes == u64::MAX);
                if h.warmup {
                    warm.merge(&h.recorder);
                } else {
                    ops += h.recorder.operations();
                    into.merge(&h.recorder);
                    groups.absorb(&h);
                }
            }
            Err(_) => break,
        }
    }
    (finished, ops)
}

#[expect(
    clippy::too_many_arguments,
    reason = "the collector's view of one drive() call; a struct would only rename them"
)]
fn collect(
    plan: &RunPlan,
    shared: &Shared,
    barrier: &Barrier,
    rx: &mpsc::Receiver<Handover>,
    caller_stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
    handles: Vec<std::thread::ScopedJoinHandle<'_, (ClientTotals, Vec<ClientStats>)>>,
    timing: &Timing,
) -> Result<RunOutcome, RunError> {
    let threads = handles.len();
    let mut total = Recorder::new();
    let mut warm = Recorder::new();
    let mut groups = GroupTotals::new(&plan.thread_groups);
    let expected = plan.operations;
    let poll = plan.interval.min(Duration::from_millis(50));

    // Warm-up: workers run until it ends, then meet at the barrier.
    let warmup_start = Instant::now();
    let warmup_end = match plan.warmup {
        Warmup::Time(d) => warmup_start + d,
        _ => warmup_start,
    };
    let _ = timing.warmup_start.set(warmup_start);
    let _ = timing.warmup_end.set(warmup_end);
    let mut last_tick = warmup_start;
    if plan.warmup != Warmup::None {
        while shared.done.load(Ordering::Acquire) < threads as u64 {
            if caller_stop.load(Ordering::Relaxed) {
                shared.request_stop();
            }
            std::thread::sleep(poll);
            if last_tick.elapsed() >= plan.interval {
                let mut ignored = Recorder::new();
                let mut no_groups = GroupTotals::new(&[]);
                gather(shared, rx, threads, &mut ignored, &mut warm, &mut no_groups);
                let now = Instant::now();
                observer(&Interval {
                    time_s: -warmup_end.saturating_duration_since(now).as_secs_f64(),
                    interval_s: now.duration_since(last_tick).as_secs_f64(),
                    recorder: &warm,
                    done: 0,
                    expected,
                    duration: plan.duration,
                    warmup: true,
                });
                warm.reset();
                last_tick = now;
            }
        }
        // Each thread's last warm-up hand-over; measured data cannot arrive yet.
        while let Ok(h) = rx.try_recv() {
            debug_assert!(h.warmup, "measured data before the barrier");
        }
    }
    barrier.wait();
    let start = Instant::now();
    let measured_start = std::time::SystemTime::now();
    let _ = timing.start.set(start);
    let mut intervals = Intervals::new(shared.epoch.load(Ordering::Acquire), start, threads);
    let mut next_tick = start + plan.interval;
    let ended = loop {
        if caller_stop.load(Ordering::Relaxed) {
            shared.request_stop();
        }
        if plan.duration.is_some_and(|d| start.elapsed() >= d) {
            shared.request_stop();
        }
        let wait = poll.min(next_tick.saturating_duration_since(Instant::now()));
        match rx.recv_timeout(wait) {
            Ok(h) if h.warmup => warm.merge(&h.recorder),
            Ok(h) => {
                groups.absorb(&h);
                shared.recycle(intervals.absorb(h));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => intervals.all_finished(),
        }
        let now = Instant::now();
        let mut recycle = |r: Recorder| shared.recycle(r);
        if intervals.finished() {
            intervals.emit(plan, now, &mut total, observer, &mut recycle);
            break now;
        }
        if now >= next_tick {
            // A new interval: every thread hands over what completed in the old one
            // at its next batch (or, idle, from its thread's watcher).
            let epoch = shared.next_epoch();
            intervals.tick(epoch, now, shared.spare_recorder());
            while next_tick <= now {
                next_tick += plan.interval;
            }
        }
        intervals.emit(plan, now, &mut total, observer, &mut recycle);
    };
    // A run stopped by its duration lasted that long: replies abandoned after it (a
    // stalled server) add no time.
    let elapsed = plan
        .duration
        .map_or(ended - start, |d| (ended - start).min(d));
    let mut outcome = RunOutcome {
        total,
        elapsed,
        measured_start: Some(measured_start),
        interrupted: caller_stop.load(Ordering::Relaxed),
        error_budget_exceeded: shared.budget_exceeded.load(Ordering::Relaxed),
        connection_lost: shared
            .connection_lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(),
        fell_behind: false,
        max_schedule_lag_ms: 0.0,
        integrity_checked: 0,
        integrity_failed: 0,
        groups: Vec::new(),
        keys_hit: 0,
        keys_missed: 0,
        unfinished: 0,
        clients: Vec::new(),
        first_errors: std::mem::take(
            &mut *shared
                .first_errors
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        ),
    };
    let mut max_lag = Duration::ZERO;
    for h in handles {
        let (r, clients) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        outcome.clients.extend(clients);
        outcome.integrity_checked += r.integrity_checked;
        outcome.integrity_failed += r.integrity_failed;
        outcome.keys_hit += r.keys_hit;
        outcome.keys_missed += r.keys_missed;
        outcome.unfinished += r.unfinished;
        max_lag = max_lag.max(r.max_lag);
    }
    // Hand-overs that arrived after the last tick still count.
    while let Ok(h) = rx.try_recv() {
        if !h.warmup {
            outcome.total.merge(&h.recorder);
            groups.absorb(&h);
        }
    }
    outcome.groups = groups.groups;
    // A schedule: the plan's target rate, or a source's due times (which alone make
    // the lag non-zero in a closed-loop plan).
    if plan.target_rate.is_some() || !max_lag.is_zero() {
        outcome.max_schedule_lag_ms = max_lag.as_secs_f64() * 1e3;
        // Behind by more than 100 ms, or by more than 1% of the run: the offered load was
        // not the target, and the intended-time latencies show what that cost.
        outcome.fell_behind = max_lag > Duration::from_millis(100).max(elapsed.mul_f64(0.01));
    }
    Ok(outcome)
}

/// A client with its measured and warm-up operation budgets.
type Budgeted<S, Src> = (Client<S, Src>, u64, u64);

/// One worker thread and the clients it drives.
struct Worker<S: Session, Src: OpSource> {
    first_client: usize,
    total_clients: usize,
    clients: Vec<Budgeted<S, Src>>,
    needs_runtime: bool,
    shared: Arc<Shared>,
    barrier: Arc<Barrier>,
    tx: mpsc::Sender<Handover>,
    plan: RunPlan,
    timing: Arc<Timing>,
}

impl<S: Session + 'static, Src: OpSource + 'static> Worker<S, Src> {
    fn work(self) -> (ClientTotals, Vec<ClientStats>) {
        let Worker {
            first_client,
            total_clients,
            clients,
            needs_runtime,
            shared,
            barrier,
            tx,
            plan,
            timing,
        } = self;
        let ts = Rc::new(ThreadState::new(
            tx,
            Arc::clone(&shared),
            first_client / plan.clients,
        ));
        let runtime = needs_runtime.then(thread_runtime);
        let (mut clients, budgets): (Vec<_>, Vec<_>) =
            clients.into_iter().map(|(c, q, w)| (c, (q, w))).unzip();
        clients = prepare_clients(runtime.as_ref(), &shared, clients);

        // Warm-up.
        if plan.warmup != Warmup::None {
            ts.begin(true);
            let deadline = match plan.warmup {
                Warmup::Time(_) => Some(*timing.warmup_end.wait()),
                _ => None,
            };
            let warmup_start = *timing.warmup_start.wait();
            for c in &mut clients {
                c.phase_start = warmup_start;
            }
            // The warm-up keeps the plan's target rate: it warms the store at the load
            // the measured part will put on it.
            let phases = budgets
                .iter()
                .enumerate()
                .map(|(i, &(_, w))| {
                    let schedule =
                        Schedule::of_plan(&plan, warmup_start, first_client + i, total_clients);
                    (w, deadline, schedule)
                })
                .collect();
            clients = run_clients(runtime.as_ref(), &ts, clients, phases);
            ts.hand_over_warmup();
            shared.done.fetch_add(1, Ordering::AcqRel);
        }
        barrier.wait();
        let start = *timing.start.wait();
        ts.begin(false);
        let started = kvlab_core::Timestamp::from_instant(start);
        for c in &mut clients {
            c.measured_from = started;
            c.phase_start = start;
        }
        let phases = budgets
            .iter()
            .enumerate()
            .map(|(i, &(q, _))| {
                let schedule = Schedule::of_plan(&plan, start, first_client + i, total_clients);
                (q, None, schedule)
            })
            .collect();
        let clients = run_clients(runtime.as_ref(), &ts, clients, phases);
        ts.hand_over_last();
        let mut totals = ClientTotals::default();
        for c in &clients {
            totals.integrity_checked += c.totals.integrity_checked;
            totals.integrity_failed += c.totals.integrity_failed;
            totals.max_lag = totals.max_lag.max(c.totals.max_lag);
            totals.keys_hit += c.totals.keys_hit;
            totals.keys_missed += c.totals.keys_missed;
            totals.unfinished += c.totals.unfinished;
        }
        let stats = clients.into_iter().filter_map(|c| c.stats).map(|s| *s);
        (totals, stats.collect())
    }
}

type Phase = (u64, Option<Instant>, Option<Schedule>);

/// Gets every session of a thread ready (connected, authenticated) before anything is
/// timed. A failure stops the run; the first one is what the run fails with.
fn prepare_clients<S: Session + 'static, Src: OpSource + 'static>(
    runtime: Option<&tokio::runtime::Runtime>,
    shared: &Shared,
    mut clients: Vec<Client<S, Src>>,
) -> Vec<Client<S, Src>> {
    let fail = |e: StoreError| {
        shared.request_stop();
        if let Ok(mut first) = shared.setup_error.lock() {
            first.get_or_insert(e);
        }
    };
    match runtime {
        None => {
            for c in &mut clients {
                if let Err(e) = block_on(c.session.prepare()) {
                    fail(e);
                }
            }
            clients
        }
        Some(rt) => {
            let local = tokio::task::LocalSet::new();
            let (clients, errors) = local.block_on(rt, async {
                let handles: Vec<_> = clients
                    .into_iter()
                    .map(|mut c| {
                        tokio::task::spawn_local(async move {
                            let r = c.session.prepare().await;
                            (c, r)
                        })
                    })
                    .collect();
                let mut back = Vec::with_capacity(handles.len());
                let mut errors = Vec::new();
                for h in handles {
                    let (c, r) = h
                        .await
                        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
                    back.push(c);
                    errors.extend(r.err());
                }
                (back, errors)
            });
            errors.into_iter().for_each(fail);
            clients
        }
    }
}

/// Runs one phase on every client of a thread and returns the clients: directly for an
/// embedded store's single client, as tasks of the thread's runtime otherwise.
fn run_clients<S: Session + 'static, Src: OpSource + 'static>(
    runtime: Option<&tokio::runtime::Runtime>,
    ts: &Rc<ThreadState>,
    mut clients: Vec<Client<S, Src>>,
    phases: Vec<Phase>,
) -> Vec<Client<S, Src>> {
    let Some(rt) = runtime else {
        for (client, (budget, deadline, schedule)) in clients.iter_mut().zip(phases) {
            block_on(client.run_phase(ts, budget, deadline, schedule, &BlockingPacer));
        }
        return clients;
    };
    let local = tokio::task::LocalSet::new();
    local.block_on(rt, async {
        // While every client waits on the network (a paused server), the thread still
        // hands over at each interval what its clients finished before.
        let watcher = {
            let ts = Rc::clone(ts);
            tokio::task::spawn_local(async move {
                loop {
                    // Hands over for an interval that started before the watcher
                    // looked, then waits for the next one.
                    ts.hand_over_on_new_epoch();
                    let seen = ts.shared.epoch.load(Ordering::Acquire);
                    ts.shared
                        .wait_for(|| ts.shared.epoch.load(Ordering::Acquire) != seen)
                        .await;
                }
            })
        };
        let handles: Vec<_> = clients
            .into_iter()
            .zip(phases)
            .map(|(mut client, (budget, deadline, schedule))| {
                let ts = Rc::clone(ts);
                tokio::task::spawn_local(async move {
                    let ended = {
                        let phase = client.run_phase(&ts, budget, deadline, schedule, &TokioPacer);
                        first_of(phase, abandon_after_stop(&ts.shared)).await
                    };
                    if !ended {
                        client.abandon();
                    }
                    client
                })
            })
            .collect();
        let mut back = Vec::with_capacity(handles.len());
        for h in handles {
            back.push(
                h.await
                    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())),
            );
        }
        watcher.abort();
        back
    })
}

/// How long a client may keep waiting for replies once the run is stopping (its time is
/// up, Ctrl-C, the error budget) before its outstanding requests are abandoned.
const STOP_GRACE: Duration = Duration::from_millis(250);

/// Completes [`STOP_GRACE`] after the run starts stopping.
async fn abandon_after_stop(shared: &Shared) {
    shared
        .wait_for(|| shared.stop.load(Ordering::Relaxed))
        .await;
    tokio::time::sleep(STOP_GRACE).await;
}

/// Polls `main` and `stop` together: true when `main` finished first, false when `stop`
/// did (and `main` is dropped unfinished).
async fn first_of(
    main: impl std::future::Future<Output = u64>,
    stop: impl std::future::Future<Output = ()>,
) -> bool {
    let mut main = std::pin::pin!(main);
    let mut stop = std::pin::pin!(stop);
    std::future::poll_fn(|cx| {
        if main.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(true);
        }
        if stop.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(false);
        }
        std::task::Poll::Pending
    })
    .await
}

/// The runtime of a thread whose sessions do asynchronous I/O.
fn thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("building a current-thread tokio runtime")
}

/// Runs `f(batch)`'s future to completion on `runtime`, or directly for embedded stores.
fn execute<S: Session>(runtime: Option<&tokio::runtime::Runtime>, s: &mut S, b: &mut Batch) {
    match runtime {
        Some(rt) => rt.block_on(s.execute(b)),
        None => block_on(s.execute(b)),
    }
}

/// What [`check_values`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueCheck {
    /// Reads that returned the expected value.
    pub verified: u64,
    /// Reads that did not: another value, no value, or an error.
    pub failed: u64,
}

/// How a read checked by [`check_values`] differed from what was expected.
#[derive(Debug)]
pub enum Mismatch<'a> {
    /// Another value.
    Value(&'a [u8]),
    /// No value: the key was not found.
    Missing,
    /// The read failed.
    Error(&'a StoreError),
}

/// Reads back values one at a time on one session, as memtier's verification client
/// does: `next` fills the request (a blob read) and the value it must return, and
/// returns false when there is nothing more to check; every read whose value differs
/// is handed to `mismatch` with the expected value. Stops early when `stop` is set.
pub fn check_values<S: Store>(
    store: &S,
    stop: &AtomicBool,
    next: &mut dyn FnMut(&mut Request, &mut Vec<u8>) -> bool,
    mismatch: &mut dyn FnMut(&Request, &[u8], Mismatch<'_>),
) -> Result<ValueCheck, RunError> {
    let mut session = open_sessions(store, 1)?
        .pop()
        .expect("one session was opened");
    let runtime = store.capabilities().needs_runtime.then(thread_runtime);
    let ready = match &runtime {
        Some(rt) => rt.block_on(session.prepare()),
        None => block_on(session.prepare()),
    };
    ready.map_err(|source| RunError::Session {
        store: store.name(),
        source,
    })?;
    let mut check = ValueCheck::default();
    let mut batch = Batch::new();
    let mut expected = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        batch.clear();
        if !next(&mut batch.push().request, &mut expected) {
            break;
        }
        execute(runtime.as_ref(), &mut session, &mut batch);
        let slot = &batch.slots()[0];
        let found = match &slot.result {
            Ok(Outcome::Miss) => Err(Mismatch::Missing),
            Ok(_) => match slot.reply.get(b"") {
                Some(value) if value == expected.as_slice() => Ok(()),
                Some(value) => Err(Mismatch::Value(value)),
                None => Err(Mismatch::Missing),
            },
            Err(e) => Err(Mismatch::Error(e)),
        };
        match found {
            Ok(()) => check.verified += 1,
            Err(m) => {
                check.failed += 1;
                mismatch(&slot.request, &expected, m);
            }
        }
    }
    Ok(check)
}

/// The result of [`verify`].
#[derive(Debug, Default, Clone, PartialEq)]
pub struct VerifyReport {
    /// Records read.
    pub checked: u64,
    /// Records not found.
    pub missing: u64,
    /// Records found but not as written (wrong fields, or with `dataintegrity=true`,
    /// wrong values).
    pub corrupted: u64,
    /// Reads that failed with an error.
    pub errors: u64,
    /// The first few missing keys.
    pub first_missing: Vec<String>,
    /// The first few corrupted keys.
    pub first_corrupted: Vec<String>,
    /// The first few errors.
    pub first_errors: Vec<String>,
}

impl VerifyReport {
    /// True when every record was found intact.
    pub fn ok(&self) -> bool {
        self.missing == 0 && self.corrupted == 0 && self.errors == 0
    }

    fn merge(&mut self, other: VerifyReport) {
        self.checked += other.checked;
        self.missing += other.missing;
        self.corrupted += other.corrupted;
        self.errors += other.errors;
        for (a, b) in [
            (&mut self.first_missing, other.first_missing),
            (&mut self.first_corrupted, other.first_corrupted),
            (&mut self.first_errors, other.first_errors),
        ] {
            a.extend(b);
            a.truncate(FIRST_FEW);
        }
    }
}

const FIRST_FEW: usize = 10;

/// What reading a record back found ([`verify_each`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordState {
    /// Found as loaded.
    Intact,
    /// Found, but not as loaded.
    Corrupted,
    /// Not found.
    Missing,
    /// The read failed.
    Error,
}

/// Reads back every record of a dataset and checks it against what `load` wrote
/// ([`Dataset::check`]; for YCSB: present, the same field names, and — with
/// `dataintegrity=true` — the same values). One session per thread.
pub fn verify<S: Store, D: Dataset>(
    store: &S,
    dataset: &D,
    threads: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<VerifyReport, RunError> {
    verify_each(store, dataset, threads, stop, progress, &|_, _| {})
}

/// [`verify`], also telling `each` what it found for every record (its number and
/// state), from the verifying threads.
pub fn verify_each<S: Store, D: Dataset>(
    store: &S,
    dataset: &D,
    threads: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
    each: &(dyn Fn(u64, RecordState) + Sync),
) -> Result<VerifyReport, RunError> {
    let threads = threads.max(1);
    let start = dataset.first();
    let count = dataset.count();
    let checked = AtomicU64::new(0);
    let sessions = open_sessions(store, threads)?;
    let needs_runtime = store.capabilities().needs_runtime;
    let reports: Vec<VerifyReport> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .enumerate()
            .map(|(i, mut session)| {
                let lo = start + count * i as u64 / threads as u64;
                let hi = start + count * (i as u64 + 1) / threads as u64;
                let checked = &checked;
                scope.spawn(move || {
                    let runtime = needs_runtime.then(thread_runtime);
                    let mut report = VerifyReport::default();
                    let ready = match &runtime {
                        Some(rt) => rt.block_on(session.prepare()),
                        None => block_on(session.prepare()),
                    };
                    if let Err(e) = ready {
                        report.errors = hi - lo;
                        report.first_errors.push(format!("opening a session: {e}"));
                        return report;
                    }
                    let mut batch = Batch::new();
                    for keynum in lo..hi {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        batch.clear();
                        let slot = batch.push();
                        dataset.key(keynum, &mut slot.request.key);
                        dataset.verify_request(keynum, &mut slot.request);
                        execute(runtime.as_ref(), &mut session, &mut batch);
                        let slot = &batch.slots()[0];
                        let key = || String::from_utf8_lossy(&slot.request.key).into_owned();
                        report.checked += 1;
                        let state = match &slot.result {
                            Ok(Outcome::Miss) => RecordState::Missing,
                            Ok(_) if !dataset.check(keynum, &slot.request.key, &slot.reply) => {
                                RecordState::Corrupted
                            }
                            Ok(_) => RecordState::Intact,
                            Err(_) => RecordState::Error,
                        };
                        each(keynum, state);
                        match &slot.result {
                            Ok(Outcome::Miss) => {
                                report.missing += 1;
                                if report.first_missing.len() < FIRST_FEW {
                                    report.first_missing.push(key());
                                }
                            }
                            Ok(_) => {
                                if state == RecordState::Corrupted {
                                    report.corrupted += 1;
                                    if report.first_corrupted.len() < FIRST_FEW {
                                        report.first_corrupted.push(key());
                                    }
                                }
                            }
                            Err(e) => {
                                report.errors += 1;
                                if report.first_errors.len() < FIRST_FEW {
                                    report.first_errors.push(format!("{}: {e}", key()));
                                }
                            }
                        }
                        if keynum % 4096 == 0 {
                            let n = checked.fetch_add(4096, Ordering::Relaxed);
                            progress(n, count);
                        }
                    }
                    report
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a verify worker panicked"))
            .collect()
    });
    let mut total = VerifyReport::default();
    for r in reports {
        total.merge(r);
    }
    Ok(total)
}

//! kvlab's runner: drives a [`Store`] with a workload from worker threads and measures it.
//!
//! - [`RunPlan`] says how: threads, how many operations or how long, warm-up, open-loop
//!   target rate, reporting interval, seed, error budget.
//! - [`load`] inserts the workload's records; [`run`] executes its transaction mix;
//!   [`verify`] reads every loaded record back.
//! - Each worker owns a [`Recorder`] and hands it over at every interval boundary (an
//!   atomic epoch, checked after each operation — no lock on the hot path). The calling
//!   thread merges the hand-overs into an [`Interval`], passes it to the caller's
//!   observer (progress, timeline, interval log) and into the run's totals.
//!
//! Latency is measured here, from the moment the request is handed to the session (or,
//! in open loop, from its intended start) to the moment the session completed it —
//! never by the store.

#![warn(missing_docs)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use kvlab_core::{
    block_on, Batch, OpKind, Outcome, Record, Request, Session, Status, Store, StoreError,
};
use kvlab_measure::Recorder;
use kvlab_workload::{CoreWorkload, LoadWorker, RunWorker};

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

/// How to run a phase.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// Worker threads, each with its own session.
    pub threads: usize,
    /// Measured operations in total; `None` with a duration means "until the time is up".
    pub operations: Option<u64>,
    /// Stop after this long (measured part only).
    pub duration: Option<Duration>,
    /// Warm-up before measuring.
    pub warmup: Warmup,
    /// Open loop: the target rate in operations per second over all workers. Latency
    /// is then also measured from each operation's intended start.
    pub target_rate: Option<f64>,
    /// Length of a reporting interval.
    pub interval: Duration,
    /// The run seed; worker streams derive from it.
    pub seed: u64,
    /// Stop when more than this many operations have failed.
    pub max_errors: Option<u64>,
}

impl Default for RunPlan {
    fn default() -> RunPlan {
        RunPlan {
            threads: 1,
            operations: None,
            duration: None,
            warmup: Warmup::None,
            target_rate: None,
            interval: Duration::from_secs(1),
            seed: 0,
            max_errors: None,
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
    /// Stopped by the caller's stop flag (Ctrl-C) before finishing.
    pub interrupted: bool,
    /// Stopped because the error budget was exhausted.
    pub error_budget_exceeded: bool,
    /// Open loop: the client could not keep to its schedule.
    pub fell_behind: bool,
    /// Open loop: the largest lag behind schedule seen by a worker, in milliseconds.
    pub max_schedule_lag_ms: f64,
    /// Reads whose values were checked (`dataintegrity=true`).
    pub integrity_checked: u64,
    /// Reads whose values did not match.
    pub integrity_failed: u64,
}

/// Loads the workload's records (`[insertstart, insertstart+insertcount)`), split
/// among the plan's threads as YCSB splits them. `plan.operations` and `duration` are
/// ignored; warm-up is not applied.
pub fn load<S: Store>(
    store: &S,
    workload: &Arc<CoreWorkload>,
    plan: &RunPlan,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
) -> Result<RunOutcome, RunError> {
    let plan = RunPlan {
        operations: Some(workload.insert_count()),
        duration: None,
        warmup: Warmup::None,
        ..plan.clone()
    };
    let threads = plan.threads;
    let sources: Vec<_> = (0..threads)
        .map(|i| {
            let w = workload.load_worker(plan.seed, i, threads);
            let quota = w.remaining();
            (Source::Load(w), quota)
        })
        .collect();
    drive(store, workload, &plan, sources, stop, observer)
}

/// Runs the workload's transaction phase.
pub fn run<S: Store>(
    store: &S,
    workload: &Arc<CoreWorkload>,
    plan: &RunPlan,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
) -> Result<RunOutcome, RunError> {
    if workload.needs_scan() && !store.capabilities().scan {
        return Err(RunError::Unsupported(format!(
            "the workload has scans (scanproportion > 0) but the {} store cannot scan",
            store.name()
        )));
    }
    let threads = plan.threads;
    let total = match (plan.operations, plan.duration) {
        (Some(n), _) => n,
        (None, Some(_)) => u64::MAX,
        (None, None) => workload.operation_count(),
    };
    let sources: Vec<_> = (0..threads)
        .map(|i| {
            let quota = if total == u64::MAX {
                u64::MAX
            } else {
                // YCSB's split: every thread gets opcount / threads, the first
                // opcount % threads one more.
                total / threads as u64 + u64::from((i as u64) < total % threads as u64)
            };
            (Source::Run(workload.run_worker(plan.seed, i)), quota)
        })
        .collect();
    let plan = RunPlan {
        operations: (total != u64::MAX).then_some(total),
        ..plan.clone()
    };
    drive(store, workload, &plan, sources, stop, observer)
}

enum Source {
    Load(LoadWorker),
    Run(RunWorker),
}

impl Source {
    /// Fills the next request; `Some(Some(k))` for an insert to acknowledge.
    fn next(&mut self, req: &mut Request) -> Option<Option<u64>> {
        match self {
            Source::Load(w) => w.next(req).then_some(None),
            Source::Run(w) => Some(w.next(req)),
        }
    }

    fn acknowledge(&self, keynum: u64) {
        if let Source::Run(w) = self {
            w.acknowledge(keynum);
        }
    }
}

/// State shared by the workers and the collecting thread.
struct Shared {
    stop: AtomicBool,
    epoch: AtomicU64,
    errors: AtomicU64,
    done: AtomicU64,
    max_errors: u64,
    budget_exceeded: AtomicBool,
}

struct Handover {
    epoch: u64,
    warmup: bool,
    recorder: Recorder,
}

struct WorkerResult {
    integrity_checked: u64,
    integrity_failed: u64,
    max_lag: Duration,
}

fn drive<S: Store>(
    store: &S,
    workload: &Arc<CoreWorkload>,
    plan: &RunPlan,
    sources: Vec<(Source, u64)>,
    caller_stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
) -> Result<RunOutcome, RunError> {
    if plan.threads == 0 {
        return Err(RunError::Plan("threads must be at least 1".into()));
    }
    if let Some(rate) = plan.target_rate {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(RunError::Plan(format!(
                "target rate must be > 0, got {rate}"
            )));
        }
    }
    // Open every session first: a store that cannot serve fails before anything runs.
    let mut sessions = Vec::with_capacity(plan.threads);
    for _ in 0..plan.threads {
        sessions.push(store.session().map_err(|source| RunError::Session {
            store: store.name(),
            source,
        })?);
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        done: AtomicU64::new(0),
        max_errors: plan.max_errors.unwrap_or(u64::MAX),
        budget_exceeded: AtomicBool::new(false),
    });
    let threads = plan.threads;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let (tx, rx) = mpsc::channel::<Handover>();
    let warmup_deadline_holder: Arc<std::sync::OnceLock<Instant>> = Arc::default();
    let start_holder: Arc<std::sync::OnceLock<Instant>> = Arc::default();

    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (index, ((source, quota), session)) in sources.into_iter().zip(sessions).enumerate() {
            let worker = Worker {
                index,
                threads,
                source,
                quota,
                session,
                workload: Arc::clone(workload),
                shared: Arc::clone(&shared),
                barrier: Arc::clone(&barrier),
                tx: tx.clone(),
                plan: plan.clone(),
                warmup_deadline: Arc::clone(&warmup_deadline_holder),
                start: Arc::clone(&start_holder),
            };
            handles.push(
                std::thread::Builder::new()
                    .name(format!("kvlab-worker-{index}"))
                    .spawn_scoped(scope, move || worker.work())
                    .expect("spawning a worker thread"),
            );
        }
        drop(tx);
        collect(
            plan,
            &shared,
            &barrier,
            &rx,
            caller_stop,
            observer,
            handles,
            &start_holder,
            &warmup_deadline_holder,
        )
    })
}

/// Ends an interval: bumps the epoch so every worker hands over its recorder, then
/// waits (briefly) for the hand-overs so that each interval holds its own operations.
/// Returns the number of workers that reported they have finished.
fn gather(
    shared: &Shared,
    rx: &mpsc::Receiver<Handover>,
    active: usize,
    into: &mut Recorder,
    warm: &mut Recorder,
) -> (usize, u64) {
    let epoch = shared.epoch.fetch_add(1, Ordering::AcqRel) + 1;
    let deadline = Instant::now() + Duration::from_millis(100);
    let (mut seen, mut finished, mut ops) = (0usize, 0usize, 0u64);
    while seen < active {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok(h) => {
                if h.epoch == epoch || h.epoch == u64::MAX {
                    seen += 1;
                }
                finished += usize::from(h.epoch == u64::MAX);
                if h.warmup {
                    warm.merge(&h.recorder);
                } else {
                    ops += h.recorder.operations();
                    into.merge(&h.recorder);
                }
            }
            Err(_) => break,
        }
    }
    (finished, ops)
}

#[allow(clippy::too_many_arguments)]
fn collect(
    plan: &RunPlan,
    shared: &Shared,
    barrier: &Barrier,
    rx: &mpsc::Receiver<Handover>,
    caller_stop: &AtomicBool,
    observer: &mut dyn FnMut(&Interval<'_>),
    handles: Vec<std::thread::ScopedJoinHandle<'_, WorkerResult>>,
    start_holder: &std::sync::OnceLock<Instant>,
    warmup_holder: &std::sync::OnceLock<Instant>,
) -> Result<RunOutcome, RunError> {
    let threads = handles.len();
    let mut total = Recorder::new();
    let mut interval = Recorder::new();
    let mut warm = Recorder::new();
    let expected = plan.operations;
    let poll = plan.interval.min(Duration::from_millis(50));

    // Warm-up: workers run until it ends, then meet at the barrier.
    let warmup_start = Instant::now();
    let warmup_end = match plan.warmup {
        Warmup::Time(d) => warmup_start + d,
        _ => warmup_start,
    };
    let _ = warmup_holder.set(warmup_end);
    let mut last_tick = warmup_start;
    if plan.warmup != Warmup::None {
        while shared.done.load(Ordering::Acquire) < threads as u64 {
            if caller_stop.load(Ordering::Relaxed) {
                shared.stop.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(poll);
            if last_tick.elapsed() >= plan.interval {
                let mut ignored = Recorder::new();
                gather(shared, rx, threads, &mut ignored, &mut warm);
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
        // Each worker's last warm-up hand-over; measured data cannot arrive yet.
        while let Ok(h) = rx.try_recv() {
            debug_assert!(h.warmup, "measured data before the barrier");
        }
    }
    barrier.wait();
    let start = Instant::now();
    let _ = start_holder.set(start);
    last_tick = start;
    let mut finished = 0usize;
    let mut done_ops = 0u64;
    let ended = loop {
        if caller_stop.load(Ordering::Relaxed) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        if plan.duration.is_some_and(|d| start.elapsed() >= d) {
            shared.stop.store(true, Ordering::Relaxed);
        }
        // Between ticks only final hand-overs (a worker that ran out of work) arrive.
        match rx.recv_timeout(poll.min(plan.interval.saturating_sub(last_tick.elapsed()))) {
            Ok(h) => {
                finished += usize::from(h.epoch == u64::MAX);
                done_ops += h.recorder.operations();
                interval.merge(&h.recorder);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => finished = threads,
        }
        let all_done = finished >= threads;
        if all_done || last_tick.elapsed() >= plan.interval {
            let now = Instant::now();
            if !all_done {
                let (f, ops) = gather(shared, rx, threads - finished, &mut interval, &mut warm);
                finished += f;
                done_ops += ops;
            }
            observer(&Interval {
                time_s: now.duration_since(start).as_secs_f64(),
                interval_s: now.duration_since(last_tick).as_secs_f64(),
                recorder: &interval,
                done: done_ops,
                expected,
                duration: plan.duration,
                warmup: false,
            });
            total.merge(&interval);
            interval.reset();
            last_tick = now;
            if finished >= threads {
                break now;
            }
        }
    };
    let elapsed = ended - start;
    let mut outcome = RunOutcome {
        total,
        elapsed,
        interrupted: caller_stop.load(Ordering::Relaxed),
        error_budget_exceeded: shared.budget_exceeded.load(Ordering::Relaxed),
        fell_behind: false,
        max_schedule_lag_ms: 0.0,
        integrity_checked: 0,
        integrity_failed: 0,
    };
    let mut max_lag = Duration::ZERO;
    for h in handles {
        let r = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        outcome.integrity_checked += r.integrity_checked;
        outcome.integrity_failed += r.integrity_failed;
        max_lag = max_lag.max(r.max_lag);
    }
    // Hand-overs that arrived after the last tick still count.
    while let Ok(h) = rx.try_recv() {
        if !h.warmup {
            outcome.total.merge(&h.recorder);
        }
    }
    if plan.target_rate.is_some() {
        outcome.max_schedule_lag_ms = max_lag.as_secs_f64() * 1e3;
        // Behind by more than 100 ms, or by more than 1% of the run: the offered load was
        // not the target, and the intended-time latencies show what that cost.
        outcome.fell_behind = max_lag > Duration::from_millis(100).max(elapsed.mul_f64(0.01));
    }
    Ok(outcome)
}

struct Worker<S: Session> {
    index: usize,
    threads: usize,
    source: Source,
    quota: u64,
    session: S,
    workload: Arc<CoreWorkload>,
    shared: Arc<Shared>,
    barrier: Arc<Barrier>,
    tx: mpsc::Sender<Handover>,
    plan: RunPlan,
    warmup_deadline: Arc<std::sync::OnceLock<Instant>>,
    start: Arc<std::sync::OnceLock<Instant>>,
}

/// Per-op state a worker keeps between operations.
struct OpContext {
    batch: Batch,
    rmw_read: Record,
    integrity: bool,
    integrity_checked: u64,
    integrity_failed: u64,
}

impl<S: Session> Worker<S> {
    fn work(mut self) -> WorkerResult {
        let mut ctx = OpContext {
            batch: Batch::new(),
            rmw_read: Record::new(),
            integrity: self.workload.data_integrity(),
            integrity_checked: 0,
            integrity_failed: 0,
        };
        let mut recorder = Recorder::new();
        let mut my_epoch = self.shared.epoch.load(Ordering::Acquire);

        // Warm-up.
        let warm_ops = match self.plan.warmup {
            Warmup::Ops(n) => {
                n / self.threads as u64 + u64::from((self.index as u64) < n % self.threads as u64)
            }
            Warmup::Time(_) => u64::MAX,
            Warmup::None => 0,
        };
        if warm_ops > 0 {
            let deadline = *self.warmup_deadline.wait();
            let mut n = 0u64;
            while n < warm_ops && !self.shared.stop.load(Ordering::Relaxed) {
                if matches!(self.plan.warmup, Warmup::Time(_)) && Instant::now() >= deadline {
                    break;
                }
                if !self.one_op(&mut ctx, &mut recorder, None) {
                    break;
                }
                n += 1;
                self.hand_over_on_new_epoch(&mut recorder, &mut my_epoch, true);
            }
            self.hand_over(&mut recorder, my_epoch, true);
            self.shared.done.fetch_add(1, Ordering::AcqRel);
        }
        self.barrier.wait();
        let start = *self.start.wait();
        my_epoch = self.shared.epoch.load(Ordering::Acquire);

        // Open loop: operation k of this worker is due at start + k / rate.
        let per_worker_rate = self.plan.target_rate.map(|r| r / self.threads as f64);
        let mut max_lag = Duration::ZERO;
        let mut done = 0u64;
        while done < self.quota && !self.shared.stop.load(Ordering::Relaxed) {
            let intended = per_worker_rate.map(|rate| {
                let due = start + Duration::from_secs_f64(done as f64 / rate);
                let now = Instant::now();
                if due > now {
                    sleep_until(due);
                } else {
                    max_lag = max_lag.max(now - due);
                }
                due
            });
            if !self.one_op(&mut ctx, &mut recorder, intended) {
                break;
            }
            done += 1;
            self.hand_over_on_new_epoch(&mut recorder, &mut my_epoch, false);
        }
        let _ = self.tx.send(Handover {
            epoch: u64::MAX,
            warmup: false,
            recorder,
        });
        WorkerResult {
            integrity_checked: ctx.integrity_checked,
            integrity_failed: ctx.integrity_failed,
            max_lag,
        }
    }

    /// Hands the recorder over when the collector has started a new interval.
    #[inline]
    fn hand_over_on_new_epoch(&self, recorder: &mut Recorder, my_epoch: &mut u64, warmup: bool) {
        let epoch = self.shared.epoch.load(Ordering::Acquire);
        if epoch != *my_epoch {
            *my_epoch = epoch;
            self.hand_over(recorder, epoch, warmup);
        }
    }

    /// Sends what `recorder` holds to the collector and starts a fresh one.
    fn hand_over(&self, recorder: &mut Recorder, epoch: u64, warmup: bool) {
        let recorder = std::mem::replace(recorder, Recorder::new());
        // The collector only goes away after joining the workers; a failed send cannot
        // lose data it still wants.
        let _ = self.tx.send(Handover {
            epoch,
            warmup,
            recorder,
        });
    }

    /// Generates and executes one operation; false when the source is exhausted.
    fn one_op(
        &mut self,
        ctx: &mut OpContext,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) -> bool {
        ctx.batch.clear();
        let slot = ctx.batch.push();
        let Some(insert_key) = self.source.next(&mut slot.request) else {
            return false;
        };
        let kind = slot.request.kind;
        if kind == OpKind::ReadModifyWrite {
            self.read_modify_write(ctx, recorder, intended);
            return true;
        }
        let started = Instant::now();
        block_on(self.session.execute(&mut ctx.batch));
        let slot = &ctx.batch.slots()[0];
        self.account(recorder, kind, slot, started, intended);
        if ctx.integrity && kind == OpKind::Read {
            if let Ok(Outcome::Hit { .. }) = slot.result {
                ctx.integrity_checked += 1;
                if !self.workload.check_read(&slot.request.key, &slot.reply) {
                    ctx.integrity_failed += 1;
                }
            }
        }
        if let Some(k) = insert_key {
            // As YCSB: acknowledged whatever the outcome, so `latest` moves on.
            self.source.acknowledge(k);
        }
        true
    }

    /// A read and then an update of the same key, measured separately and together.
    fn read_modify_write(
        &mut self,
        ctx: &mut OpContext,
        recorder: &mut Recorder,
        intended: Option<Instant>,
    ) {
        let started = Instant::now();
        {
            let slot = &mut ctx.batch.slots_mut()[0];
            // Keep the update's fields aside; the read names the same fields when not
            // reading all of them.
            std::mem::swap(&mut ctx.rmw_read, &mut slot.request.record);
            slot.request.kind = OpKind::Read;
            slot.request.record.clear();
            if !slot.request.read_all {
                for (name, _) in ctx.rmw_read.iter() {
                    slot.request.record.push(name, b"");
                }
            }
        }
        block_on(self.session.execute(&mut ctx.batch));
        let read_ok = {
            let slot = &ctx.batch.slots()[0];
            self.account(recorder, OpKind::Read, slot, started, None);
            slot.result.is_ok()
        };
        let mid = Instant::now();
        {
            let slot = &mut ctx.batch.slots_mut()[0];
            slot.request.kind = OpKind::Update;
            std::mem::swap(&mut ctx.rmw_read, &mut slot.request.record);
            slot.completed_at = None;
        }
        block_on(self.session.execute(&mut ctx.batch));
        let slot = &ctx.batch.slots()[0];
        self.account(recorder, OpKind::Update, slot, mid, None);
        let end = slot.completed_at.unwrap_or_else(Instant::now);
        let status = match (&slot.result, read_ok) {
            (Ok(o), true) => o.status(),
            _ => Status::Error,
        };
        recorder.record(OpKind::ReadModifyWrite, status, nanos(end - started));
        if let Some(due) = intended {
            recorder.record_intended(
                OpKind::ReadModifyWrite,
                nanos(end.saturating_duration_since(due)),
            );
        }
    }

    fn account(
        &self,
        recorder: &mut Recorder,
        kind: OpKind,
        slot: &kvlab_core::Slot,
        started: Instant,
        intended: Option<Instant>,
    ) {
        let end = slot.completed_at.unwrap_or_else(Instant::now);
        let service = nanos(end.saturating_duration_since(started));
        match &slot.result {
            Ok(outcome) => {
                recorder.record(kind, outcome.status(), service);
                recorder.add_bytes(outcome.bytes_read(), outcome.bytes_written());
            }
            Err(e) => {
                recorder.record(kind, Status::Error, service);
                recorder.record_error(e.kind);
                let errors = self.shared.errors.fetch_add(1, Ordering::Relaxed) + 1;
                if errors > self.shared.max_errors {
                    self.shared.budget_exceeded.store(true, Ordering::Relaxed);
                    self.shared.stop.store(true, Ordering::Relaxed);
                }
            }
        }
        if let Some(due) = intended {
            recorder.record_intended(kind, nanos(end.saturating_duration_since(due)));
        }
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// Sleeps until `due`: the OS sleep for all but the last 100 µs, then a spin, so the
/// schedule keeps microsecond precision without burning a core between operations.
fn sleep_until(due: Instant) {
    loop {
        let now = Instant::now();
        if now >= due {
            return;
        }
        let left = due - now;
        if left > Duration::from_micros(200) {
            std::thread::sleep(left - Duration::from_micros(100));
        } else {
            std::hint::spin_loop();
        }
    }
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

/// Reads back every record of `[insertstart, insertstart+insertcount)` and checks it
/// against what `load` wrote: present, the same field names, and — with
/// `dataintegrity=true` — the same values.
pub fn verify<S: Store>(
    store: &S,
    workload: &Arc<CoreWorkload>,
    threads: usize,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<VerifyReport, RunError> {
    let threads = threads.max(1);
    let start = workload.insert_start();
    let count = workload.insert_count();
    let checked = AtomicU64::new(0);
    let mut sessions = Vec::new();
    for _ in 0..threads {
        sessions.push(store.session().map_err(|source| RunError::Session {
            store: store.name(),
            source,
        })?);
    }
    let reports: Vec<VerifyReport> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .into_iter()
            .enumerate()
            .map(|(i, mut session)| {
                let lo = start + count * i as u64 / threads as u64;
                let hi = start + count * (i as u64 + 1) / threads as u64;
                let checked = &checked;
                scope.spawn(move || {
                    let mut report = VerifyReport::default();
                    let mut batch = Batch::new();
                    let mut expected = Record::new();
                    for keynum in lo..hi {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        batch.clear();
                        let slot = batch.push();
                        slot.request.kind = OpKind::Read;
                        workload.key_name(keynum, &mut slot.request.key);
                        block_on(session.execute(&mut batch));
                        let slot = &batch.slots()[0];
                        let key = || String::from_utf8_lossy(&slot.request.key).into_owned();
                        report.checked += 1;
                        match &slot.result {
                            Ok(Outcome::Miss) => {
                                report.missing += 1;
                                if report.first_missing.len() < FIRST_FEW {
                                    report.first_missing.push(key());
                                }
                            }
                            Ok(_) => {
                                workload.expected_record(keynum, &mut expected);
                                let good = if workload.data_integrity() {
                                    slot.reply.len() == expected.len()
                                        && workload.check_read(&slot.request.key, &slot.reply)
                                } else {
                                    slot.reply.len() == expected.len()
                                        && expected.iter().all(|(n, _)| slot.reply.get(n).is_some())
                                };
                                if !good {
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

//! One client: a session, an op source and a pipeline, driven by one loop for every kind
//! of store. Embedded stores run one client per thread polled by [`kvlab_core::block_on`];
//! network stores run many clients per thread as tasks of a tokio current-thread
//! runtime. The loop is the same `async fn` in both cases.

use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use kvlab_core::{
    Batch, OpKind, Record, Session, Slot, Status, StoreError, StoreErrorKind, Timestamp,
};
use kvlab_core::{OpSource, TapClient, Ticket, Verdict};
use kvlab_measure::{ClientStats, Recorder};

use crate::{Handover, Shared, TargetRate};

/// State shared by the clients of one thread: its recorder and the interval epoch it
/// last handed over at.
pub(crate) struct ThreadState {
    pub(crate) recorder: RefCell<Recorder>,
    epoch: Cell<u64>,
    warmup: Cell<bool>,
    tx: mpsc::Sender<Handover>,
    pub(crate) shared: Arc<Shared>,
    thread: usize,
}

impl ThreadState {
    pub(crate) fn new(
        tx: mpsc::Sender<Handover>,
        shared: Arc<Shared>,
        thread: usize,
    ) -> ThreadState {
        let epoch = shared.epoch.load(Ordering::Acquire);
        ThreadState {
            recorder: RefCell::new(Recorder::new()),
            epoch: Cell::new(epoch),
            warmup: Cell::new(false),
            tx,
            shared,
            thread,
        }
    }

    /// Starts a phase: measured data from here on is (or is not) warm-up.
    pub(crate) fn begin(&self, warmup: bool) {
        self.warmup.set(warmup);
        self.epoch.set(self.shared.epoch.load(Ordering::Acquire));
    }

    /// Hands the recorder over when the collector has started a new interval: what it
    /// holds completed in the interval the thread was in (its old epoch).
    #[inline]
    pub(crate) fn hand_over_on_new_epoch(&self) {
        let epoch = self.shared.epoch.load(Ordering::Acquire);
        if epoch != self.epoch.get() {
            let old = self.epoch.replace(epoch);
            self.send(old, epoch);
        }
    }

    /// Sends what the recorder holds as the thread's last hand-over: it has finished
    /// and sends nothing more.
    pub(crate) fn hand_over_last(&self) {
        self.send(self.epoch.get(), u64::MAX);
    }

    /// Sends what the recorder holds at the end of the warm-up.
    pub(crate) fn hand_over_warmup(&self) {
        let epoch = self.epoch.get();
        self.send(epoch, epoch);
    }

    /// Sends what the recorder holds — completed in interval `epoch` — and starts a
    /// fresh one; `closes` promises that nothing more comes for intervals before it.
    fn send(&self, epoch: u64, closes: u64) {
        let spare = self.shared.spare_recorder();
        let recorder = std::mem::replace(&mut *self.recorder.borrow_mut(), spare);
        // The collector only goes away after joining the workers; a failed send cannot
        // lose data it still wants.
        let _ = self.tx.send(Handover {
            thread: self.thread,
            epoch,
            closes,
            warmup: self.warmup.get(),
            recorder,
        });
    }
}

/// How a client waits for its next open-loop departure.
pub(crate) trait Pacer {
    /// Returns at `due` (or at once when it has passed).
    fn sleep_until(&self, due: Instant) -> impl std::future::Future<Output = ()>;

    /// Returns at `due` or up to a millisecond later, without spinning: for bursts on
    /// a coarse tick ([`crate::RunPlan::burst_tick`]), where the last moment's precision
    /// is not worth a core.
    fn sleep_coarse_until(&self, due: Instant) -> impl std::future::Future<Output = ()>;
}

/// Blocks the thread: the OS sleep for all but the last 100 µs, then a spin, so the
/// schedule keeps microsecond precision. For the one client of an embedded-store thread.
pub(crate) struct BlockingPacer;

impl Pacer for BlockingPacer {
    async fn sleep_until(&self, due: Instant) {
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

    async fn sleep_coarse_until(&self, due: Instant) {
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

/// Yields to the runtime: a timer for all but the last millisecond (tokio's timer has
/// millisecond resolution), then `yield_now` until due, so other clients of the thread
/// keep running while this one waits.
pub(crate) struct TokioPacer;

impl Pacer for TokioPacer {
    async fn sleep_until(&self, due: Instant) {
        let now = Instant::now();
        if due > now + Duration::from_millis(2) {
            tokio::time::sleep_until((due - Duration::from_millis(1)).into()).await;
        }
        while Instant::now() < due {
            tokio::task::yield_now().await;
        }
    }

    async fn sleep_coarse_until(&self, due: Instant) {
        tokio::time::sleep_until(due.into()).await;
    }
}

/// An open-loop schedule: when each of a client's batches is due.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    start: Instant,
    rate: TargetRate,
    /// The client's share of the rate, in batches per second per unit of total rate.
    share: f64,
    /// Seconds from start to the next departure.
    next_s: f64,
    /// Bursts: departures are moved back to the last tick (from `offset_s`), so that the
    /// batches due in a tick all leave at its start ([`crate::RunPlan::burst_tick`]).
    tick_s: Option<f64>,
    /// Where this client's ticks fall: staggered across one tick.
    offset_s: f64,
}

impl Schedule {
    /// A client's schedule: `clients` clients share `rate`, each sending batches of
    /// `pipeline` requests. Clients start staggered across one period so they do not
    /// all depart together.
    pub(crate) fn new(
        rate: TargetRate,
        start: Instant,
        client: usize,
        clients: usize,
        pipeline: usize,
        tick: Option<Duration>,
    ) -> Schedule {
        let share = 1.0 / (clients as f64 * pipeline as f64);
        let tick_s = tick.map(|t| t.as_secs_f64()).filter(|&t| t > 0.0);
        let stagger = client as f64 / clients as f64;
        let mut s = Schedule {
            start,
            rate,
            share,
            next_s: 0.0,
            tick_s,
            offset_s: tick_s.map_or(0.0, |t| t * stagger),
        };
        if tick_s.is_none() {
            s.next_s = s.gap_s(0.0) * stagger;
        }
        s
    }

    /// Client `client`'s schedule under `plan` from `start`: `None` without a target
    /// rate (a closed loop).
    pub(crate) fn of_plan(
        plan: &crate::RunPlan,
        start: Instant,
        client: usize,
        clients: usize,
    ) -> Option<Schedule> {
        plan.target_rate
            .map(|rate| Schedule::new(rate, start, client, clients, plan.pipeline, plan.burst_tick))
    }

    /// Whether departures come in bursts on a tick (waited for without spinning).
    pub(crate) fn bursts(&self) -> bool {
        self.tick_s.is_some()
    }

    /// Seconds between batches at time `t_s`.
    fn gap_s(&self, t_s: f64) -> f64 {
        1.0 / (self.rate.at(t_s) * self.share)
    }

    /// The next departure, advancing the schedule.
    pub(crate) fn next_due(&mut self) -> Instant {
        let at_s = match self.tick_s {
            Some(tick) => self.offset_s + (self.next_s / tick).floor() * tick,
            None => self.next_s,
        };
        self.next_s += self.gap_s(self.next_s);
        self.start + Duration::from_secs_f64(at_s)
    }
}

/// What one client has done, summed into the run's outcome.
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct ClientTotals {
    pub(crate) integrity_checked: u64,
    pub(crate) integrity_failed: u64,
    pub(crate) max_lag: Duration,
    /// Measured reads' keys found and not found, per key ([`kvlab_core::Outcome::key_hits`]).
    pub(crate) keys_hit: u64,
    pub(crate) keys_missed: u64,
    /// Requests sent but never answered: abandoned when the run stopped.
    pub(crate) unfinished: u64,
}

impl ClientTotals {
    /// Counts the source's verdict on one completed request.
    #[inline]
    fn count(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Unchecked => {}
            Verdict::Good => self.integrity_checked += 1,
            Verdict::Bad => {
                self.integrity_checked += 1;
                self.integrity_failed += 1;
            }
        }
    }
}

/// One client: a session, the op source feeding it, and reusable batches.
pub(crate) struct Client<S, Src> {
    pub(crate) session: S,
    pub(crate) source: Src,
    pipeline: usize,
    batch: Batch,
    tickets: Vec<Ticket>,
    /// Per slot of `batch`: true when it is the read half of a read-modify-write.
    rmw: Vec<bool>,
    /// The update halves of the batch's read-modify-writes.
    rmw_batch: Batch,
    /// Per slot of `batch`: true while it waits to be sent again
    /// ([`OpSource::retry_after`]); empty (the common case) unless a request of the
    /// batch failed.
    retrying: Vec<bool>,
    /// The slots being sent again, moved out of `batch` for the attempt.
    retry_batch: Batch,
    /// Where each of `retry_batch`'s slots belongs in `batch`.
    retry_index: Vec<usize>,
    pub(crate) totals: ClientTotals,
    /// With [`crate::RunPlan::client_stats`]: the measured requests second by second.
    pub(crate) stats: Option<Box<ClientStats>>,
    /// When the measured part started ([`ClientStats`] counts seconds from it).
    pub(crate) measured_from: Timestamp,
    exhausted: bool,
    /// When the phase started: the source's due times ([`OpSource::due`]) count from it.
    pub(crate) phase_start: Instant,
    /// Per slot of `batch`, when the source said it is due; empty when the source said
    /// nothing for any request of the batch (the common case).
    dues: Vec<Option<Instant>>,
    /// A request the source made that is due after the batch it would have joined
    /// departs: it waits here, with its ticket and due time, to lead the next batch.
    held: Option<(Box<Slot>, Ticket, Instant)>,
    /// The box of the last held request, reused for the next.
    spare_slot: Option<Box<Slot>>,
    /// With [`crate::RunPlan::tap`]: this client's tap, shown every completed batch.
    pub(crate) tap: Option<Box<dyn TapClient>>,
}

impl<S: Session, Src: OpSource> Client<S, Src> {
    pub(crate) fn new(session: S, source: Src, pipeline: usize) -> Client<S, Src> {
        Client {
            session,
            source,
            pipeline: pipeline.max(1),
            batch: Batch::new(),
            tickets: Vec::with_capacity(pipeline),
            rmw: Vec::with_capacity(pipeline),
            rmw_batch: Batch::new(),
            retrying: Vec::new(),
            retry_batch: Batch::new(),
            retry_index: Vec::new(),
            totals: ClientTotals::default(),
            stats: None,
            measured_from: Timestamp::now(),
            exhausted: false,
            phase_start: Instant::now(),
            dues: Vec::new(),
            held: None,
            spare_slot: None,
            tap: None,
        }
    }

    /// Runs up to `budget` operations (stopping early at `deadline`, on the shared stop
    /// flag, or when the source runs dry); returns how many ran.
    pub(crate) async fn run_phase<P: Pacer>(
        &mut self,
        ts: &ThreadState,
        mut budget: u64,
        deadline: Option<Instant>,
        mut schedule: Option<Schedule>,
        pacer: &P,
    ) -> u64 {
        // One request at a time with no schedule and no tap — an embedded store's usual
        // run — takes the short way (`Client::one`), which hands a request to the batch
        // path below only when it needs more.
        let one_by_one =
            self.pipeline == 1 && schedule.is_none() && self.tap.is_none() && self.held.is_none();
        let mut done = 0u64;
        while budget > 0 && !self.exhausted && !ts.shared.stop.load(Ordering::Relaxed) {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let n = if one_by_one {
                match self.one(ts, pacer).await {
                    One::Done => {
                        done += 1;
                        budget -= 1;
                        continue;
                    }
                    One::Exhausted => break,
                    One::Filled => 1,
                }
            } else {
                self.fill(budget)
            };
            if n == 0 {
                break;
            }
            // The source's due time for the batch (its first request's: the others are
            // due no later, or already overdue when the batch was filled), else the
            // plan's schedule.
            let due = match self.dues.first() {
                Some(&due) if Src::TIMED => due,
                _ => schedule.as_mut().map(Schedule::next_due),
            };
            let coarse = schedule.as_ref().is_some_and(Schedule::bursts);
            if let Some(due) = due {
                let now = Instant::now();
                if due > now {
                    if !wait_until(ts, due, deadline, pacer, coarse).await {
                        break;
                    }
                } else {
                    self.totals.max_lag = self.totals.max_lag.max(now - due);
                }
            }
            let intended = due.map(Timestamp::from_instant);
            if self.tap.is_some() && (intended.is_some() || !self.dues.is_empty()) {
                for (i, slot) in self.batch.slots_mut().iter_mut().enumerate() {
                    slot.due = intended_of(&self.dues, i, intended);
                }
            }
            // A session waiting to reconnect: the wait is nobody's latency (a schedule's
            // intended times still see it).
            if let Some(ready) = self.session.ready_at() {
                if ready > Instant::now() && !wait_until(ts, ready, deadline, pacer, false).await {
                    break;
                }
            }
            let started = Timestamp::now();
            self.session.execute(&mut self.batch).await;
            // Before recording the batch: when an interval ended while it ran, what the
            // thread finished before goes to that interval, the batch to the new one.
            ts.hand_over_on_new_epoch();
            self.finish(ts, started, intended, pacer).await;
            done += n as u64;
            budget -= n as u64;
        }
        done
    }

    /// Generates, executes and records one request: the batch path's work for a batch
    /// of one without its bookkeeping. A read-modify-write, a request with a due time,
    /// or one for a session waiting to reconnect, is left in the batch for the batch
    /// path ([`One::Filled`]); a failed request is finished as the batch path finishes
    /// it (retries and all).
    async fn one<P: Pacer>(&mut self, ts: &ThreadState, pacer: &P) -> One {
        self.batch.clear();
        self.rmw_batch.clear();
        let slot = self.batch.push();
        let Some(ticket) = self.source.next(&mut slot.request) else {
            self.batch.truncate(0);
            self.exhausted = true;
            return One::Exhausted;
        };
        debug_assert!(
            Src::TIMED || self.source.due().is_none(),
            "a source that gives due times must set OpSource::TIMED"
        );
        let due = if Src::TIMED { self.source.due() } else { None };
        if slot.request.kind == OpKind::ReadModifyWrite
            || due.is_some()
            || self.session.ready_at().is_some()
        {
            self.track(ticket);
            if let Some(due) = due {
                self.dues.push(Some(self.phase_start + due));
            }
            return One::Filled;
        }
        let started = Timestamp::now();
        self.session.execute(&mut self.batch).await;
        ts.hand_over_on_new_epoch();
        if self.batch.slots()[0].result.is_err() {
            self.track(ticket);
            self.finish(ts, started, None, pacer).await;
            return One::Done;
        }
        let slot = &self.batch.slots()[0];
        record_slot(
            ts,
            &mut self.totals,
            self.stats.as_deref_mut(),
            self.measured_from,
            slot,
            started,
            None,
        );
        let verdict = self.source.completed(slot, ticket);
        self.totals.count(verdict);
        One::Done
    }

    /// A batch of one request, in slot 0, generated by [`Client::one`]: starts the batch
    /// path's bookkeeping for it.
    #[cold]
    #[inline(never)]
    fn track(&mut self, ticket: Ticket) {
        self.reset_tracking();
        self.admit(0, ticket);
    }

    /// After the batch executed: sends again what the source retries, records the
    /// batch, sends and records the update halves of its read-modify-writes, and tells
    /// the source how each request ended.
    async fn finish<P: Pacer>(
        &mut self,
        ts: &ThreadState,
        started: Timestamp,
        intended: Option<Timestamp>,
        pacer: &P,
    ) {
        // Failures are rare: only then are retries looked for, and the batch recorded
        // without the requests to send again; otherwise the plain path.
        let mut wait = None;
        if self.batch.slots().iter().any(|slot| slot.result.is_err()) {
            wait = self.first_retries(ts);
        }
        if wait.is_none() {
            self.account_batch::<false>(ts, started, intended);
        } else {
            self.account_batch::<true>(ts, started, intended);
        }
        if let Some(tap) = &mut self.tap {
            tap.batch(&self.batch, started);
        }
        if !self.rmw_batch.is_empty() {
            let mid = Timestamp::now();
            self.session.execute(&mut self.rmw_batch).await;
            self.account_rmw(ts, started, mid, intended);
            if let Some(tap) = &mut self.tap {
                tap.batch(&self.rmw_batch, mid);
            }
        }
        let mut round = 0;
        while let Some(delay) = wait {
            round += 1;
            // Boxed: retries are rare, and the retry round's state would otherwise
            // grow this loop's future (and cost the successful path its inlining).
            wait = Box::pin(self.retry(ts, round, delay, intended, pacer)).await;
        }
        self.complete_batch();
    }

    /// Generates up to `pipeline` (and at most `budget`) requests into the batch;
    /// read-modify-writes become their read half, the update kept aside.
    fn fill(&mut self, budget: u64) -> usize {
        self.batch.clear();
        self.reset_tracking();
        let want = (self.pipeline as u64).min(budget) as usize;
        while self.batch.len() < want {
            let at = self.batch.len();
            let ticket = if Src::TIMED {
                match self.next_timed(at) {
                    Some(ticket) => ticket,
                    None => break,
                }
            } else {
                let slot = self.batch.push();
                let Some(ticket) = self.source.next(&mut slot.request) else {
                    self.batch.truncate(at);
                    self.exhausted = true;
                    break;
                };
                debug_assert!(
                    self.source.due().is_none(),
                    "a source that gives due times must set OpSource::TIMED"
                );
                ticket
            };
            self.admit(at, ticket);
        }
        self.batch.len()
    }

    /// Empties the batch path's bookkeeping for a new batch.
    #[inline]
    fn reset_tracking(&mut self) {
        self.tickets.clear();
        self.rmw.clear();
        self.rmw_batch.clear();
        self.retrying.clear();
        if Src::TIMED {
            self.dues.clear();
        }
    }

    /// Takes the request the source put in slot `at` into the batch's bookkeeping:
    /// its ticket, and a read-modify-write split into its read (in the slot) and its
    /// update (kept aside in `rmw_batch`).
    #[inline]
    fn admit(&mut self, at: usize, ticket: Ticket) {
        let slot = &mut self.batch.slots_mut()[at];
        self.tickets.push(ticket);
        let is_rmw = slot.request.kind == OpKind::ReadModifyWrite;
        self.rmw.push(is_rmw);
        if is_rmw {
            // The read reads what the source asked it to read (e.g. YCSB's one random
            // field); a named read that names nothing reads the fields the update
            // writes. The update takes the request's value (a swap of buffers, no copy).
            let req = &mut slot.request;
            req.kind = OpKind::Read;
            if req.read.names().is_some_and(Record::is_empty) {
                let names = req.read.names_mut();
                for (name, _) in req.value.fields().iter() {
                    names.push(name, b"");
                }
            }
            let update = self.rmw_batch.push();
            update.request.kind = OpKind::Update;
            update.request.key.extend_from_slice(&req.key);
            update.request.ttl_s = req.ttl_s;
            std::mem::swap(&mut update.request.value, &mut req.value);
        }
    }

    /// For a source with due times: puts its next request (the one held back from the
    /// last batch, or a new one) in slot `at` of the batch and returns its ticket; `None`
    /// when the source ran dry or the request is held back for the next batch.
    #[inline(never)]
    fn next_timed(&mut self, at: usize) -> Option<Ticket> {
        let slot = self.batch.push();
        let (ticket, due) = match self.held.take() {
            Some((mut held, ticket, due)) => {
                std::mem::swap(slot, &mut *held);
                self.held_spare(held);
                (ticket, Some(due))
            }
            None => {
                let Some(ticket) = self.source.next(&mut slot.request) else {
                    self.batch.truncate(at);
                    self.exhausted = true;
                    return None;
                };
                (ticket, self.source.due().map(|d| self.phase_start + d))
            }
        };
        if (due.is_some() || !self.dues.is_empty()) && self.hold(at, ticket, due) {
            return None;
        }
        Some(ticket)
    }

    /// For a request with a due time (or joining a batch whose requests have one): holds
    /// it back — moving it out of the batch and returning true — when it is due after
    /// the batch departs (its first request's due time, or now if that has passed);
    /// otherwise notes its due time in `dues`.
    #[cold]
    #[inline(never)]
    fn hold(&mut self, at: usize, ticket: Ticket, due: Option<Instant>) -> bool {
        if at > 0 {
            let now = Instant::now();
            let departs = self
                .dues
                .first()
                .copied()
                .flatten()
                .map_or(now, |d| d.max(now));
            if due.is_some_and(|d| d > departs) {
                let mut held = self.spare_slot.take().unwrap_or_default();
                std::mem::swap(&mut *held, &mut self.batch.slots_mut()[at]);
                self.batch.truncate(at);
                self.held = Some((held, ticket, due.expect("checked above")));
                return true;
            }
        }
        self.dues.resize(at, None);
        self.dues.push(due);
        false
    }

    /// Keeps a held request's emptied box for the next one.
    fn held_spare(&mut self, mut spare: Box<Slot>) {
        spare.request.clear();
        self.spare_slot = Some(spare);
    }

    /// After retry round `retries`: asks the source which failed requests among the
    /// batch's slots `slots` to send again ([`ask_retry`]); marks them in `retrying`,
    /// counts each retry, and returns the longest of their waits — `None` when none is
    /// retried. `retries` is how often each of `slots` has been sent again so far (the
    /// same for all: failed slots are retried together, round by round, and a slot that
    /// succeeded or gave up leaves for good).
    fn plan_retries(
        &mut self,
        ts: &ThreadState,
        retries: u64,
        slots: impl Iterator<Item = usize>,
    ) -> Option<Duration> {
        let mut wait = None;
        for i in slots {
            let slot = &self.batch.slots()[i];
            self.retrying[i] = false;
            if slot.result.is_ok() || self.rmw[i] {
                continue;
            }
            if let Some(delay) = ask_retry(&mut self.source, &ts.shared, slot, retries) {
                self.retrying[i] = true;
                ts.recorder.borrow_mut().record_retry(slot.request.kind);
                wait = Some(wait.map_or(delay, |w: Duration| w.max(delay)));
            }
        }
        wait
    }

    /// Retry round `round` (from 1): waits `delay` (this client only: the pacer yields
    /// to the thread's other clients), then sends the slots marked in `retrying` again,
    /// records those that are done and returns the wait before the next round, as
    /// [`Client::plan_retries`]. The stop flag cuts the wait short, and then nothing more
    /// is retried. While waiting, the thread's recorder is handed over at each new
    /// interval, as after a batch.
    async fn retry<P: Pacer>(
        &mut self,
        ts: &ThreadState,
        round: u64,
        delay: Duration,
        intended: Option<Timestamp>,
        pacer: &P,
    ) -> Option<Duration> {
        let due = Instant::now() + delay;
        loop {
            let now = Instant::now();
            if now >= due || ts.shared.stop.load(Ordering::Relaxed) {
                break;
            }
            pacer
                .sleep_until(due.min(now + Duration::from_millis(100)))
                .await;
            ts.hand_over_on_new_epoch();
        }
        let Client {
            batch,
            retrying,
            retry_batch,
            retry_index,
            ..
        } = self;
        retry_batch.clear();
        retry_index.clear();
        for (i, slot) in batch.slots_mut().iter_mut().enumerate() {
            if retrying[i] {
                std::mem::swap(retry_batch.push(), slot);
                retry_index.push(i);
            }
        }
        let started = Timestamp::now();
        self.session.execute(&mut self.retry_batch).await;
        for (slot, &i) in self
            .retry_batch
            .slots_mut()
            .iter_mut()
            .zip(&self.retry_index)
        {
            std::mem::swap(slot, &mut self.batch.slots_mut()[i]);
        }
        let index = std::mem::take(&mut self.retry_index);
        let wait = self.plan_retries(ts, round, index.iter().copied());
        let mut recorder = ts.recorder.borrow_mut();
        for &i in &index {
            if !self.retrying[i] {
                let slot = &self.batch.slots()[i];
                account(
                    &mut recorder,
                    &ts.shared,
                    slot.request.kind,
                    slot,
                    started,
                    intended_of(&self.dues, i, intended),
                );
            }
        }
        self.retry_index = index;
        wait
    }

    /// After a batch with a failed request: sizes `retrying` to the batch and marks the
    /// requests to send again ([`Client::plan_retries`], round 0). Out of line, off the
    /// successful path.
    #[cold]
    #[inline(never)]
    fn first_retries(&mut self, ts: &ThreadState) -> Option<Duration> {
        let len = self.batch.len();
        self.retrying.resize(len, false);
        self.plan_retries(ts, 0, 0..len)
    }

    /// Records every request of the batch — with `SKIP_RETRYING`, all but those marked
    /// in `retrying` (waiting to be sent again); a read-modify-write's read is recorded
    /// as a read (its whole is recorded by [`Client::account_rmw`]).
    fn account_batch<const SKIP_RETRYING: bool>(
        &mut self,
        ts: &ThreadState,
        started: Timestamp,
        intended: Option<Timestamp>,
    ) {
        for (i, (slot, &rmw)) in self.batch.slots().iter().zip(&self.rmw).enumerate() {
            if SKIP_RETRYING && self.retrying[i] {
                continue;
            }
            let intended = if rmw {
                None
            } else if Src::TIMED {
                intended_of(&self.dues, i, intended)
            } else {
                intended
            };
            record_slot(
                ts,
                &mut self.totals,
                self.stats.as_deref_mut(),
                self.measured_from,
                slot,
                started,
                intended,
            );
        }
    }

    /// Records the update halves and the wholes of the batch's read-modify-writes.
    fn account_rmw(
        &mut self,
        ts: &ThreadState,
        started: Timestamp,
        mid: Timestamp,
        intended: Option<Timestamp>,
    ) {
        let mut recorder = ts.recorder.borrow_mut();
        let reads = self.batch.slots().iter().zip(&self.rmw).enumerate();
        let reads = reads.filter(|(_, (_, &r))| r);
        for ((i, (read, _)), update) in reads.zip(self.rmw_batch.slots()) {
            let intended = intended_of(&self.dues, i, intended);
            account(&mut recorder, &ts.shared, OpKind::Update, update, mid, None);
            let end = update.completed_at.unwrap_or_else(Timestamp::now);
            let status = match (&read.result, &update.result) {
                (Ok(_), Ok(o)) => o.status(),
                _ => Status::Error,
            };
            recorder.record(OpKind::ReadModifyWrite, status, end.nanos_since(started));
            if let Some(due) = intended {
                recorder.record_intended(OpKind::ReadModifyWrite, end.nanos_since(due));
            }
        }
    }

    /// Gives up on the batch in flight (the run is stopping and its replies have not
    /// come): its requests count as unfinished, not as operations.
    pub(crate) fn abandon(&mut self) {
        self.totals.unfinished += (self.batch.len() + self.rmw_batch.len()) as u64;
    }

    /// Tells the source how each request ended, in generation order.
    fn complete_batch(&mut self) {
        for (slot, &ticket) in self.batch.slots().iter().zip(&self.tickets) {
            let verdict = self.source.completed(slot, ticket);
            self.totals.count(verdict);
        }
    }
}

/// How [`Client::one`] left its request.
enum One {
    /// Executed and recorded (or finished by the batch path, when it failed).
    Done,
    /// The source had no more requests.
    Exhausted,
    /// Generated and left in the batch for the batch path to send.
    Filled,
}

/// Records the request of `slot` ([`account`]) and, in the measured part, when answered,
/// its keys found and missed and the client's per-second statistics.
#[inline]
fn record_slot(
    ts: &ThreadState,
    totals: &mut ClientTotals,
    stats: Option<&mut ClientStats>,
    measured_from: Timestamp,
    slot: &Slot,
    started: Timestamp,
    intended: Option<Timestamp>,
) {
    account(
        &mut ts.recorder.borrow_mut(),
        &ts.shared,
        slot.request.kind,
        slot,
        started,
        intended,
    );
    if let (false, Ok(outcome)) = (ts.warmup.get(), &slot.result) {
        let (hit, missed) = outcome.key_hits();
        totals.keys_hit += hit;
        totals.keys_missed += missed;
        if let Some(stats) = stats {
            let end = slot.completed_at.unwrap_or_else(Timestamp::now);
            stats.record(
                slot.request.kind,
                slot.request.command.id,
                end.nanos_since(measured_from),
                end.nanos_since(started),
                slot.wire,
                *outcome,
            );
        }
    }
}

/// The intended start of slot `i` of a batch: its own due time when the source gave the
/// batch's requests due times (`dues` not empty), else the batch's.
#[inline]
fn intended_of(dues: &[Option<Instant>], i: usize, batch: Option<Timestamp>) -> Option<Timestamp> {
    if dues.is_empty() {
        batch
    } else {
        dues[i].map(Timestamp::from_instant)
    }
}

/// Waits until `due` — for the open-loop schedule or a request's due time — handing the
/// thread's recorder over at each new interval meanwhile (so a long wait does not hold
/// back what the thread already did). Returns false, early, when the run is stopping
/// or `deadline` passes first. `coarse`: wait without spinning
/// ([`Pacer::sleep_coarse_until`]).
async fn wait_until<P: Pacer>(
    ts: &ThreadState,
    due: Instant,
    deadline: Option<Instant>,
    pacer: &P,
    coarse: bool,
) -> bool {
    const STEP: Duration = Duration::from_millis(50);
    loop {
        let now = Instant::now();
        if now >= due {
            return true;
        }
        if ts.shared.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d) {
            return false;
        }
        let until = if due - now > STEP { now + STEP } else { due };
        let until = deadline.map_or(until, |d| until.min(d));
        if coarse {
            pacer.sleep_coarse_until(until).await;
        } else {
            pacer.sleep_until(until).await;
        }
        ts.hand_over_on_new_epoch();
    }
}

/// Whether to send a failed request again, and after how long: the source's answer
/// ([`OpSource::retry_after`]), or `None` once the run is stopping. Out of line: failures
/// are rare, and the successful path stays short.
#[cold]
#[inline(never)]
fn ask_retry<Src: OpSource>(
    source: &mut Src,
    shared: &Shared,
    slot: &Slot,
    retries: u64,
) -> Option<Duration> {
    if shared.stop.load(Ordering::Relaxed) {
        return None;
    }
    source.retry_after(slot, retries)
}

/// Records one completed arbitrary command ([`kvlab_core::Request::command`]) under its
/// own id: bytes are the command's arguments and its reply's payload. A command that
/// wrote ([`kvlab_core::Outcome::Written`]: a merge, its key and operand) also counts in
/// the bytes written, as a put's key and value do.
#[inline(never)]
fn account_command(
    recorder: &mut Recorder,
    shared: &Shared,
    slot: &Slot,
    service: u64,
    end: Timestamp,
    intended: Option<Timestamp>,
) {
    let req = &slot.request;
    let Some(command) = req.command.id else {
        return;
    };
    let sent = req.command.args.byte_len() as u64;
    recorder.add_command_wire(command, slot.wire);
    match &slot.result {
        Ok(outcome) => {
            recorder.record_command(
                command,
                outcome.status(),
                service,
                sent + outcome.bytes_read(),
            );
            recorder.add_bytes(0, outcome.bytes_written());
        }
        Err(e) => {
            recorder.record_command(command, Status::Error, service, sent);
            recorder.record_error(e.kind);
            count_error(shared, e);
        }
    }
    if let Some(due) = intended {
        recorder.record_command_intended(command, end.nanos_since(due));
    }
}

/// Counts failed request `e` against the shared error budget, stopping the run when it
/// is spent — or at once for a lost connection when the run stops on those.
#[inline]
fn count_error(shared: &Shared, e: &StoreError) {
    let errors = shared.errors.fetch_add(1, Ordering::Relaxed) + 1;
    if shared.errors_seen[e.kind.index()].fetch_add(1, Ordering::Relaxed)
        < crate::FIRST_ERRORS_PER_KIND
    {
        keep_first_error(shared, e);
    }
    if errors > shared.max_errors {
        shared.budget_exceeded.store(true, Ordering::Relaxed);
        shared.request_stop();
    }
    if e.kind == StoreErrorKind::Connection && shared.stop_on_connection_error {
        connection_lost(shared, e);
    }
}

/// Keeps one of the first failures of its kind for [`crate::RunOutcome::first_errors`].
#[cold]
#[inline(never)]
fn keep_first_error(shared: &Shared, e: &StoreError) {
    let mut first = shared
        .first_errors
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    first.push(e.clone());
}

/// Stops the run at a lost connection, keeping the first one's error.
#[cold]
#[inline(never)]
fn connection_lost(shared: &Shared, e: &StoreError) {
    let mut first = shared
        .connection_lost
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    first.get_or_insert_with(|| e.clone());
    shared.request_stop();
}

/// Records one completed request: service time from `started`, and in open loop the
/// latency from its intended start; errors count against the shared budget.
#[inline]
fn account(
    recorder: &mut Recorder,
    shared: &Shared,
    kind: OpKind,
    slot: &Slot,
    started: Timestamp,
    intended: Option<Timestamp>,
) {
    let end = slot.completed_at.unwrap_or_else(Timestamp::now);
    let service = end.nanos_since(started);
    if slot.request.command.is_some() {
        account_command(recorder, shared, slot, service, end, intended);
        return;
    }
    // Failed requests too: memtier counts an error reply's bytes as any other's.
    recorder.add_wire(kind, slot.wire);
    match &slot.result {
        Ok(outcome) => {
            recorder.record(kind, outcome.status(), service);
            recorder.add_bytes(outcome.bytes_read(), outcome.bytes_written());
        }
        Err(e) => {
            recorder.record(kind, Status::Error, service);
            recorder.record_error(e.kind);
            count_error(shared, e);
        }
    }
    if let Some(due) = intended {
        recorder.record_intended(kind, end.nanos_since(due));
    }
}

//! Unit tests of the runner's own logic — splitting, pacing, due times, warm-up,
//! retries, collection and the capability check — against a small in-process store
//! that logs when each request reached it. (The stores themselves are tested against
//! the real engines and servers in their own crates.)

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kvlab_core::{
    Batch, Capabilities, Needs, OpKind, OpSource, Outcome, Request, Session, Slot, Status, Store,
    StoreError, StoreErrorKind, Ticket, Verdict, Workload,
};

use crate::{run, split, RunError, RunPlan, TargetRate, Warmup};

/// What the log store saw: each request's key number and when it arrived.
type Log = Arc<Mutex<Vec<(u64, Instant)>>>;

/// A store that logs every request, takes `delay` per request, and fails a request's
/// first `fail_first` attempts when its key number is a multiple of `fail_every`.
#[derive(Clone, Default)]
struct LogStore {
    log: Log,
    delay: Duration,
    fail_every: u64,
    fail_first: u32,
    attempts: Arc<Mutex<std::collections::HashMap<u64, u32>>>,
    scan: bool,
    /// The request for this key number blocks the session this long (an engine stall).
    stall: Option<(u64, Duration)>,
}

struct LogSession(LogStore);

impl Store for LogStore {
    type Session = LogSession;

    fn name(&self) -> &'static str {
        "log"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            scan: self.scan,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<LogSession, StoreError> {
        Ok(LogSession(self.clone()))
    }
}

fn key_number(req: &Request) -> u64 {
    std::str::from_utf8(&req.key).unwrap().parse().unwrap()
}

impl Session for LogSession {
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        let s = &self.0;
        for slot in batch.slots_mut() {
            let n = key_number(&slot.request);
            s.log.lock().unwrap().push((n, Instant::now()));
            if !s.delay.is_zero() {
                std::thread::sleep(s.delay);
            }
            if let Some((_, stall)) = s.stall.filter(|&(k, _)| k == n) {
                std::thread::sleep(stall);
            }
            let fail = s.fail_every > 0 && n.is_multiple_of(s.fail_every) && {
                let mut attempts = s.attempts.lock().unwrap();
                let a = attempts.entry(n).or_default();
                *a += 1;
                *a <= s.fail_first
            };
            slot.complete(if fail {
                Err(StoreError::new(StoreErrorKind::Io, "planned failure"))
            } else {
                Ok(Outcome::Written { bytes: 0 })
            });
        }
        std::future::ready(())
    }
}

/// A workload whose client `c` writes keys `c·1_000_000, c·1_000_000 + 1, …`, each due
/// `gap × i` into the phase when `gap` is set, retrying failures up to `retries` times
/// after 1 ms.
#[derive(Clone, Default)]
struct Counting {
    gap: Option<Duration>,
    retries: u64,
    scan: bool,
    count: u64,
}

struct CountingSource {
    next: u64,
    base: u64,
    gap: Option<Duration>,
    retries: u64,
    completed: u64,
}

impl OpSource for CountingSource {
    const TIMED: bool = true;

    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        req.kind = OpKind::Insert;
        req.key
            .extend_from_slice((self.base + self.next).to_string().as_bytes());
        self.next += 1;
        Some(Ticket(self.next - 1))
    }

    fn due(&self) -> Option<Duration> {
        self.gap.map(|g| g * (self.next - 1) as u32)
    }

    fn completed(&mut self, _slot: &Slot, ticket: Ticket) -> Verdict {
        assert_eq!(
            ticket.0, self.completed,
            "completions come in generation order"
        );
        self.completed += 1;
        Verdict::Unchecked
    }

    fn retry_after(&mut self, _slot: &Slot, retries: u64) -> Option<Duration> {
        (retries < self.retries).then_some(Duration::from_millis(1))
    }
}

impl Workload for Counting {
    type Source = CountingSource;

    fn source(self: &Arc<Self>, _seed: u64, client: usize, _clients: usize) -> CountingSource {
        CountingSource {
            next: 0,
            base: client as u64 * 1_000_000,
            gap: self.gap,
            retries: self.retries,
            completed: 0,
        }
    }

    fn needs(&self) -> Needs {
        Needs {
            scan: self.scan,
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        self.count
    }
}

/// A run's outcome, what the store logged, and when the run was started.
type Ran = (crate::RunOutcome, Vec<(u64, Instant)>, Instant);

fn go(store: &LogStore, workload: Counting, plan: RunPlan) -> Result<Ran, RunError> {
    let before = Instant::now();
    let o = run(
        store,
        &Arc::new(workload),
        &plan,
        &AtomicBool::new(false),
        &mut |_| {},
    )?;
    let log = store.log.lock().unwrap().clone();
    Ok((o, log, before))
}

#[test]
fn split_is_ycsbs_per_thread_count() {
    assert_eq!(
        (0..3).map(|i| split(10, 3, i)).collect::<Vec<_>>(),
        [4, 3, 3]
    );
    assert_eq!(
        (0..4).map(|i| split(2, 4, i)).collect::<Vec<_>>(),
        [1, 1, 0, 0]
    );
    assert_eq!(split(u64::MAX, 7, 3), u64::MAX);
}

#[test]
fn operations_are_split_among_clients_and_counted_once() {
    let store = LogStore::default();
    let plan = RunPlan {
        threads: 2,
        operations: Some(1001),
        pipeline: 3,
        ..RunPlan::default()
    };
    let (o, log, _) = go(&store, Counting::default(), plan).unwrap();
    assert_eq!(o.total.operations(), 1001);
    assert_eq!(o.total.status_count(OpKind::Insert, Status::Ok), 1001);
    let client0 = log.iter().filter(|(n, _)| *n < 1_000_000).count();
    assert_eq!((client0, log.len() - client0), (501, 500));
}

#[test]
fn the_workloads_own_count_applies_without_count_or_duration() {
    let store = LogStore::default();
    let w = Counting {
        count: 77,
        ..Counting::default()
    };
    let (o, _, _) = go(&store, w, RunPlan::default()).unwrap();
    assert_eq!(o.total.operations(), 77);
}

#[test]
fn a_requests_due_time_holds_it_back_and_latency_counts_from_it() {
    // 20 requests due 10 ms apart, in batches of up to 4: none may leave before it is
    // due, so the run takes at least 190 ms and the pipeline never sends ahead.
    let store = LogStore::default();
    let w = Counting {
        gap: Some(Duration::from_millis(10)),
        ..Counting::default()
    };
    let plan = RunPlan {
        operations: Some(20),
        pipeline: 4,
        ..RunPlan::default()
    };
    let (o, log, before) = go(&store, w, plan).unwrap();
    assert_eq!(o.total.operations(), 20);
    assert!(o.elapsed >= Duration::from_millis(190), "{:?}", o.elapsed);
    let start = before.max(log[0].1 - Duration::from_millis(5));
    for (n, at) in &log {
        let due = Duration::from_millis(10 * n);
        assert!(
            at.duration_since(start) + Duration::from_millis(5) >= due,
            "request {n} sent {:?} after the start, due at {due:?}",
            at.duration_since(start)
        );
    }
    // Every request's latency is also recorded from its due time.
    assert_eq!(o.total.intended_histogram(OpKind::Insert).len(), 20);
}

/// A source whose requests come due in groups: request `i` is due at `step × ⌊i / group⌋`.
struct Grouped {
    next: u64,
    group: u64,
    step: Duration,
}

impl OpSource for Grouped {
    const TIMED: bool = true;

    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        req.kind = OpKind::Insert;
        req.key.extend_from_slice(self.next.to_string().as_bytes());
        self.next += 1;
        Some(Ticket(self.next - 1))
    }

    fn due(&self) -> Option<Duration> {
        Some(self.step * ((self.next - 1) / self.group) as u32)
    }

    fn completed(&mut self, _slot: &Slot, _ticket: Ticket) -> Verdict {
        Verdict::Unchecked
    }
}

struct GroupedWorkload;

impl Workload for GroupedWorkload {
    type Source = Grouped;

    fn source(self: &Arc<Self>, _seed: u64, _client: usize, _clients: usize) -> Grouped {
        Grouped {
            next: 0,
            group: 3,
            step: Duration::from_millis(40),
        }
    }

    fn needs(&self) -> Needs {
        Needs::default()
    }

    fn operation_count(&self) -> u64 {
        9
    }
}

#[test]
fn requests_due_together_share_a_batch_and_later_ones_wait_for_the_next() {
    // Nine requests due in threes 40 ms apart, pipeline 8: three batches of three, each
    // sent together at its due time, none early.
    let store = LogStore::default();
    let plan = RunPlan {
        pipeline: 8,
        ..RunPlan::default()
    };
    let o = run(
        &store,
        &Arc::new(GroupedWorkload),
        &plan,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(o.total.operations(), 9);
    let log = store.log.lock().unwrap().clone();
    let keys: Vec<u64> = log.iter().map(|(n, _)| *n).collect();
    assert_eq!(keys, (0..9).collect::<Vec<_>>(), "sent in order");
    let t0 = log[0].1;
    for group in log.chunks(3) {
        let first = group[0].1;
        // A group leaves together...
        assert!(group[2].1 - first < Duration::from_millis(20), "{group:?}");
        // ...and not before its due time.
        let due = Duration::from_millis(40) * (group[0].0 / 3) as u32;
        assert!(first - t0 + Duration::from_millis(5) >= due, "{group:?}");
    }
    assert!(log[8].1 - t0 >= Duration::from_millis(75));
}

/// [`Grouped`] without saying it is timed: its due times would be ignored.
struct Untimed(Grouped);

impl OpSource for Untimed {
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        self.0.next(req)
    }

    fn due(&self) -> Option<Duration> {
        self.0.due()
    }

    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        self.0.completed(slot, ticket)
    }
}

struct UntimedWorkload;

impl Workload for UntimedWorkload {
    type Source = Untimed;

    fn source(self: &Arc<Self>, seed: u64, client: usize, clients: usize) -> Untimed {
        Untimed(Arc::new(GroupedWorkload).source(seed, client, clients))
    }

    fn needs(&self) -> Needs {
        Needs::default()
    }

    fn operation_count(&self) -> u64 {
        3
    }
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "must set OpSource::TIMED")]
fn a_source_with_due_times_that_does_not_say_so_is_caught_in_debug_builds() {
    let _ = run(
        &LogStore::default(),
        &Arc::new(UntimedWorkload),
        &RunPlan::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    );
}

#[test]
fn a_store_that_falls_behind_due_times_shows_in_the_intended_latency() {
    // Every request due at once; the store takes 5 ms each, so the last of 20 waited
    // ~95 ms behind its due time although each took only ~5 ms.
    let store = LogStore {
        delay: Duration::from_millis(5),
        ..LogStore::default()
    };
    let w = Counting {
        gap: Some(Duration::ZERO),
        ..Counting::default()
    };
    let plan = RunPlan {
        operations: Some(20),
        ..RunPlan::default()
    };
    let (o, _, _) = go(&store, w, plan).unwrap();
    let service = o.total.histogram(OpKind::Insert).max();
    let intended = o.total.intended_histogram(OpKind::Insert).max();
    assert!(service < 50_000_000, "service max {service} ns");
    assert!(intended >= 90_000_000, "intended max {intended} ns");
    assert!(o.max_schedule_lag_ms >= 80.0, "{}", o.max_schedule_lag_ms);
}

#[test]
fn a_target_rate_paces_the_clients() {
    // 40 requests at 400/s over two clients: about 100 ms.
    let store = LogStore::default();
    let plan = RunPlan {
        threads: 2,
        operations: Some(40),
        target_rate: Some(TargetRate::Constant(400.0)),
        ..RunPlan::default()
    };
    let (o, log, _) = go(&store, Counting::default(), plan).unwrap();
    assert_eq!(o.total.operations(), 40);
    let first = log.iter().map(|(_, t)| *t).min().unwrap();
    let last = log.iter().map(|(_, t)| *t).max().unwrap();
    assert!(
        last - first >= Duration::from_millis(85),
        "{:?}",
        last - first
    );
    assert_eq!(o.total.intended_histogram(OpKind::Insert).len(), 40);
}

#[test]
fn the_stop_of_a_timed_run_cuts_a_long_wait_short() {
    // The second request is due in an hour; a 200 ms run must end on time.
    let store = LogStore::default();
    let w = Counting {
        gap: Some(Duration::from_secs(3600)),
        ..Counting::default()
    };
    let plan = RunPlan {
        duration: Some(Duration::from_millis(200)),
        ..RunPlan::default()
    };
    let t = Instant::now();
    let (o, _, _) = go(&store, w, plan).unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(o.total.operations(), 1);
}

#[test]
fn warm_up_operations_run_first_and_are_not_measured() {
    let store = LogStore::default();
    let plan = RunPlan {
        threads: 2,
        operations: Some(100),
        warmup: Warmup::Ops(30),
        ..RunPlan::default()
    };
    let (o, log, _) = go(&store, Counting::default(), plan).unwrap();
    assert_eq!(o.total.operations(), 100);
    assert_eq!(log.len(), 130);
}

#[test]
fn failed_requests_are_retried_as_the_source_says_and_recorded_once() {
    // Every 10th key fails twice; the source retries up to 3 times: all succeed, in
    // batches and one request at a time alike.
    for pipeline in [4, 1] {
        let store = LogStore {
            fail_every: 10,
            fail_first: 2,
            ..LogStore::default()
        };
        let w = Counting {
            retries: 3,
            ..Counting::default()
        };
        let plan = RunPlan {
            operations: Some(50),
            pipeline,
            ..RunPlan::default()
        };
        let (o, log, _) = go(&store, w, plan).unwrap();
        assert_eq!(o.total.status_count(OpKind::Insert, Status::Ok), 50);
        assert_eq!(o.total.retries(OpKind::Insert), 10, "pipeline {pipeline}");
        assert_eq!(log.len(), 60, "pipeline {pipeline}");
    }

    // With one retry allowed, the five failing keys fail for good.
    let store = LogStore {
        fail_every: 10,
        fail_first: 2,
        ..LogStore::default()
    };
    let w = Counting {
        retries: 1,
        ..Counting::default()
    };
    let plan = RunPlan {
        operations: Some(50),
        ..RunPlan::default()
    };
    let (o, _, _) = go(&store, w, plan).unwrap();
    assert_eq!(o.total.status_count(OpKind::Insert, Status::Error), 5);
    assert_eq!(o.total.retries(OpKind::Insert), 5);
}

#[test]
fn every_interval_reaches_the_observer_and_sums_to_the_total() {
    let store = LogStore {
        delay: Duration::from_millis(1),
        ..LogStore::default()
    };
    let plan = RunPlan {
        threads: 2,
        duration: Some(Duration::from_millis(350)),
        interval: Duration::from_millis(100),
        ..RunPlan::default()
    };
    let mut seen = Vec::new();
    let o = run(
        &store,
        &Arc::new(Counting::default()),
        &plan,
        &AtomicBool::new(false),
        &mut |iv| seen.push(iv.recorder.operations()),
    )
    .unwrap();
    assert!(seen.len() >= 3, "{seen:?}");
    assert_eq!(seen.iter().sum::<u64>(), o.total.operations());
    assert!(o.total.operations() > 0);
}

/// A request that blocks its thread for 450 ms (an engine stall) 200 ms into the run,
/// 100 ms intervals: the intervals before the stall hold what completed in them (not
/// the interval in which the thread woke up), the ones inside it nothing, and each
/// interval is reported once, in order.
#[test]
fn a_stalled_thread_does_not_move_its_work_into_a_later_interval() {
    let store = LogStore {
        delay: Duration::from_millis(5),
        stall: Some((40, Duration::from_millis(450))),
        ..LogStore::default()
    };
    let plan = RunPlan {
        duration: Some(Duration::from_millis(900)),
        interval: Duration::from_millis(100),
        ..RunPlan::default()
    };
    let mut seen: Vec<(f64, u64)> = Vec::new();
    let o = run(
        &store,
        &Arc::new(Counting::default()),
        &plan,
        &AtomicBool::new(false),
        &mut |iv| seen.push((iv.time_s, iv.recorder.operations())),
    )
    .unwrap();
    let log = store.log.lock().unwrap();
    let start = log[0].1;
    let stall_from = log.iter().find(|(n, _)| *n == 40).unwrap().1 - start;
    let stall_to = stall_from + Duration::from_millis(455);
    for (i, &(end_s, ops)) in seen.iter().enumerate() {
        let end = Duration::from_secs_f64(end_s);
        let begin = Duration::from_secs_f64(end_s - 0.1).min(end);
        // Requests that reached the store in this interval (each completes ~5 ms later).
        let arrived = log
            .iter()
            .filter(|(_, at)| (*at - start) + Duration::from_millis(5) < end)
            .filter(|(_, at)| (*at - start) + Duration::from_millis(5) >= begin)
            .count() as u64;
        if begin >= stall_from + Duration::from_millis(10) && end <= stall_to {
            assert_eq!(ops, 0, "interval {i} lies inside the stall: {seen:?}");
        } else if end + Duration::from_millis(10) < stall_from && i > 0 {
            assert!(
                ops + 3 >= arrived && ops <= arrived + 3,
                "interval {i}: {ops} recorded, ~{arrived} completed: {seen:?}"
            );
        }
    }
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert_eq!(seen.iter().map(|s| s.1).sum::<u64>(), o.total.operations());
}

#[test]
fn a_workload_is_checked_against_the_store_before_it_runs() {
    let store = LogStore::default();
    let w = Counting {
        scan: true,
        ..Counting::default()
    };
    let err = go(&store, w.clone(), RunPlan::default()).err().unwrap();
    assert!(
        matches!(&err, RunError::Unsupported(m) if m.contains("log store cannot scan")),
        "{err}"
    );
    assert!(store.log.lock().unwrap().is_empty());
    let scanning = LogStore {
        scan: true,
        ..LogStore::default()
    };
    let w = Counting { count: 3, ..w };
    assert_eq!(
        go(&scanning, w, RunPlan::default())
            .unwrap()
            .0
            .total
            .operations(),
        3
    );
}

#[test]
fn the_first_failures_of_a_kind_are_kept_with_their_messages() {
    // Every request fails for good, on two threads.
    let store = LogStore {
        fail_every: 1,
        fail_first: u32::MAX,
        ..LogStore::default()
    };
    let plan = RunPlan {
        threads: 2,
        operations: Some(40),
        ..RunPlan::default()
    };
    let (o, _, _) = go(&store, Counting::default(), plan).unwrap();
    assert_eq!(o.total.error_count(StoreErrorKind::Io), 40);
    assert_eq!(o.first_errors.len() as u64, crate::FIRST_ERRORS_PER_KIND);
    assert!(o
        .first_errors
        .iter()
        .all(|e| e.kind == StoreErrorKind::Io && e.message == "planned failure"));

    // Nothing kept when nothing failed.
    let (o, _, _) = go(
        &LogStore::default(),
        Counting::default(),
        RunPlan::default(),
    )
    .unwrap();
    assert!(o.first_errors.is_empty());
}

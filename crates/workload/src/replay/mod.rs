//! Trace replay (`kvlab replay TRACE`): a trace of any format kvlab reads, sent to any
//! store, at the trace's pace or as fast as the store goes.
//!
//! - [`ReplayWorkload`]: one reader thread reads the trace once and deals its requests
//!   to the clients by a hash of the key, so every request of a key goes through one
//!   client, in the trace's order (RocksDB's own replayer cannot promise that with
//!   several threads). Each client's [`ReplaySource`] turns them into requests.
//! - One pass: the trace is read once, by the reader thread, which also counts what the
//!   replay needs to know of the whole trace — its requests, its first timestamp and
//!   the requests due in each reporting interval ([`ReplayWorkload::requests`],
//!   [`ReplayWorkload::intended_per_interval`]) — as it deals, so a trace on standard
//!   input (`-`) replays too. [`ReplayWorkload::preload`] is a second pass, before the
//!   replay, which counts the same figures while it gathers the keys.
//! - Timing: with `speed` a request is due at `(ts − first ts) / speed` from the start of
//!   the phase ([`OpSource::due`]): an open loop, whose latency the runner also measures
//!   from that intended time, as `run --target-rate` does. Without (`--speed max`),
//!   each client sends its next request when the previous one completed.
//! - Ops: reads (`get`, `gets`, block reads) read the value as one blob; a MultiGet's
//!   keys are one multi-key read on a store that has them ([`ReplayWorkload::adapt_to`],
//!   sent by the client of its first key), else one read per key; writes (`put`, `set`, `add`, `replace`, `cas`, `append`, `prepend`, `incr`,
//!   `decr`, block writes, kvlab's `insert`/`update`, `putentity`) write a blob of the
//!   traced size (the TTL too); `merge` is a merge (the command `MERGE key operand`,
//!   [`Request::merge`], an operand of the traced size, reported as `MERGE`) on a store
//!   with a merge operator (RocksDB's, `rocksdb.merge_operator`), and elsewhere a put of
//!   the operand's size; deletes (`delete`, `singledelete`) delete; `seek`,
//!   `seekforprev` and `scan` scan `max(1, scan length)` records from the key where the
//!   store can scan. What a store cannot do (`deleterange`, `other`, scans on a store
//!   without them) is counted by op name ([`ReplayWorkload::skipped`]), never dropped
//!   silently.
//! - Keys: a byte-key trace's keys as they are; an id trace's ids in decimal ASCII.
//! - [`ReplayWorkload::preload`]: the keys the trace reads before it writes them, with
//!   their sizes — loaded first (`--preload`), so a replay on an empty store sees the
//!   hits production saw.
//! - Look-aside (`--look-aside`): a read that misses is followed by a set of the key
//!   with the traced size, as a cache client fills a miss.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use kvlab_core::{
    CommandId, Dataset, Needs, OpKind, OpSource, Record, Request, Slot, Ticket, Verdict,
    MERGE_COMMAND,
};
use kvlab_core::{Outcome, Workload};
use kvlab_dist::ValuePool;
use kvlab_trace::{KeyEncoding, Op, OpenOptions, TimeUnit, TraceError, TraceReader, TraceRecord};

/// Requests per chunk handed from the reader to a client.
const CHUNK: usize = 1024;
/// Chunks a client's queue holds before the reader waits (bounds memory).
const QUEUE: usize = 8;
/// Bytes of the shared value pool (values are ranges of it; larger values repeat it).
const POOL_BYTES: usize = 8 << 20;
/// Records read when the trace is opened, kept for the reader thread: whether the
/// trace has TTLs is known from them before the run (a store may need to know).
const LOOK_AHEAD: usize = 4 * CHUNK;
/// How long, after a run, to wait for the reader thread to publish its last counts.
const READER_GRACE: Duration = Duration::from_secs(2);

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplaySpec {
    /// The trace.
    pub path: PathBuf,
    /// How to open it.
    pub open: OpenOptions,
    /// Timestamps divided by this; `None`: as fast as possible (closed loop).
    pub speed: Option<f64>,
    /// Value size for writes (and preloaded keys) of traces without sizes.
    pub default_value_size: u32,
    /// Stop after this many requests of the trace (`None`: all).
    pub limit: Option<u64>,
    /// Follow a read miss with a set of the key (a look-aside cache client).
    pub look_aside: bool,
    /// The reporting interval, for [`ReplayWorkload::intended_per_interval`].
    pub interval: std::time::Duration,
}

/// A trace replay (see the module docs).
#[derive(Debug)]
pub struct ReplayWorkload {
    spec: ReplaySpec,
    info: kvlab_trace::TraceInfo,
    /// The trace as opened, and the records read ahead, until a pass takes it.
    opened: Mutex<Option<Opened>>,
    /// How many times the trace was opened for reading.
    passes: AtomicU32,
    /// The whole-trace figures, published by the pass that counts them.
    counts: Arc<Mutex<Counts>>,
    /// The running reader thread, if any.
    reader: Mutex<Option<JoinHandle<()>>>,
    /// [`ReplayWorkload::wait_reader`] gave up on the reader once.
    reader_waited: AtomicBool,
    pool: ValuePool,
    queues: Mutex<Vec<Option<Receiver<Chunk>>>>,
    can_scan: AtomicBool,
    /// The store reads several keys in one request: a MultiGet is sent as one.
    can_multi_read: AtomicBool,
    /// The store has a merge operator: a Merge is sent as a merge, not a put.
    can_merge: AtomicBool,
    skipped: Arc<SkipCounts>,
    failed: Arc<Mutex<Option<TraceError>>>,
    /// The records read ahead carry TTLs (what [`Workload::needs`] says).
    ttl: bool,
}

/// An opened trace and the records already read from it.
struct Opened {
    reader: Box<dyn TraceReader>,
    ahead: VecDeque<TraceRecord>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("ahead", &self.ahead.len())
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// The next record: one read ahead, else the reader's.
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        match self.ahead.pop_front() {
            Some(r) => {
                *rec = r;
                Ok(true)
            }
            None => self.reader.read(rec),
        }
    }
}

/// What the replay knows of the whole trace: counted by the pass that reads it.
#[derive(Clone, Debug, Default)]
struct Counts {
    /// Requests read (up to the limit).
    requests: u64,
    first_ts: Option<u64>,
    /// A request with a TTL was read.
    ttl: bool,
    /// Requests due in each `spec.interval` of the replay (with a speed).
    intended: Vec<u64>,
    /// The pass read to the end of the trace (or the limit).
    complete: bool,
    /// Merges read.
    merges: u64,
    /// Merges whose operand is not 8 bytes (what RocksDB's uint64add counts as 0).
    merges_not_8_bytes: u64,
}

impl Counts {
    /// Counts `rec`, the next request of the trace: its due time (at `speed`, with
    /// `unit_ns` nanoseconds per timestamp unit) falls in reporting interval
    /// `due / bin_ns`.
    #[inline]
    fn count(&mut self, rec: &TraceRecord, speed: Option<f64>, unit_ns: f64, bin_ns: f64) {
        self.requests += 1;
        let first = *self.first_ts.get_or_insert(rec.ts);
        self.ttl |= rec.ttl_s > 0;
        if let Some(speed) = speed.filter(|_| unit_ns > 0.0) {
            let bin = (due_ns(rec.ts, first, unit_ns, speed) as f64 / bin_ns) as usize;
            if bin >= self.intended.len() {
                self.intended.resize(bin + 1, 0);
            }
            self.intended[bin] += 1;
        }
    }

    /// Counts a merge whose operand, as the replay sends it, is `size` bytes.
    #[inline]
    fn count_merge(&mut self, size: u32) {
        self.merges += 1;
        self.merges_not_8_bytes += u64::from(size != 8);
    }
}

/// Requests a store could not be sent, by op name.
#[derive(Debug, Default)]
struct SkipCounts {
    by_op: Mutex<HashMap<&'static str, u64>>,
    any: AtomicU64,
}

impl SkipCounts {
    fn add(&self, op: Op) {
        self.any.fetch_add(1, Ordering::Relaxed);
        *self
            .by_op
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(op.name())
            .or_default() += 1;
    }
}

/// One request as a client needs it.
#[derive(Clone, Copy, Debug)]
struct Item {
    op: Op,
    key: (u32, u32),
    value_size: u32,
    scan_len: u32,
    ttl_s: u32,
    due_ns: u64,
    /// A MultiGet's other keys: a range of the chunk's `more`.
    more: (u32, u32),
}

/// Requests for one client, their keys in one buffer.
#[derive(Debug, Default)]
struct Chunk {
    items: Vec<Item>,
    keys: Vec<u8>,
    /// The other keys of MultiGets, as ranges of `keys`.
    more: Vec<(u32, u32)>,
}

impl ReplayWorkload {
    /// Opens the trace and reads its first records ahead (kept for the replay, not read
    /// again): the trace is read through once, by the replay itself.
    pub fn open(spec: ReplaySpec) -> Result<ReplayWorkload, TraceError> {
        let mut reader = kvlab_trace::open(&spec.path, &spec.open)?;
        let info = reader.info().clone();
        if spec.speed.is_some() && info.time_unit == TimeUnit::Sequence {
            return Err(TraceError::Format {
                path: spec.path.clone(),
                what: format!(
                    "a {} trace has no timestamps: replay it with --speed max",
                    info.format
                ),
            });
        }
        let mut ahead = VecDeque::new();
        let limit = spec.limit.unwrap_or(u64::MAX).min(LOOK_AHEAD as u64) as usize;
        while ahead.len() < limit {
            let mut rec = TraceRecord::default();
            if !reader.read(&mut rec)? {
                break;
            }
            ahead.push_back(rec);
        }
        let ttl = ahead.iter().any(|r| r.ttl_s > 0);
        Ok(ReplayWorkload {
            pool: ValuePool::printable(POOL_BYTES, 0x6b76_6c61_6272_6570),
            opened: Mutex::new(Some(Opened { reader, ahead })),
            passes: AtomicU32::new(1),
            counts: Arc::default(),
            reader: Mutex::new(None),
            reader_waited: AtomicBool::new(false),
            info,
            spec,
            queues: Mutex::new(Vec::new()),
            can_scan: AtomicBool::new(true),
            can_multi_read: AtomicBool::new(false),
            can_merge: AtomicBool::new(false),
            skipped: Arc::default(),
            failed: Arc::default(),
            ttl,
        })
    }

    /// The trace as opened (the first pass), or opened again for another pass; a trace
    /// on standard input cannot be.
    fn take_opened(&self) -> Result<Opened, TraceError> {
        if let Some(o) = lock(&self.opened).take() {
            return Ok(o);
        }
        if self.spec.path.as_os_str() == "-" {
            return Err(TraceError::Format {
                path: self.spec.path.clone(),
                what: "standard input is read once; it was read already".into(),
            });
        }
        let reader = kvlab_trace::open(&self.spec.path, &self.spec.open)?;
        self.passes.fetch_add(1, Ordering::Relaxed);
        Ok(Opened {
            reader,
            ahead: VecDeque::new(),
        })
    }

    /// How many times the trace has been opened for reading: 1 for a replay, 2 with
    /// [`ReplayWorkload::preload`].
    pub fn passes(&self) -> u32 {
        self.passes.load(Ordering::Relaxed)
    }

    /// Waits (up to a grace period) for the reader thread of a finished run to end, so
    /// that its counts are final. A reader still busy after it (a run stopped while
    /// standard input keeps coming) is left running: its counts so far are used.
    fn wait_reader(&self) {
        let mut reader = lock(&self.reader);
        let Some(handle) = reader.take() else {
            return;
        };
        // Waited for in vain once: not again.
        let grace = if self.reader_waited.swap(true, Ordering::Relaxed) {
            Duration::ZERO
        } else {
            READER_GRACE
        };
        let deadline = std::time::Instant::now() + grace;
        while !handle.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if handle.is_finished() {
            let _ = handle.join();
            self.reader_waited.store(false, Ordering::Relaxed);
        } else {
            *reader = Some(handle);
        }
    }

    /// With a speed: how many requests the trace's timestamps make due in each
    /// reporting interval of the replay (`ReplaySpec::interval`), from its start; empty
    /// with `--speed max` or a trace without timestamps. Counted as the trace is read:
    /// call after the run (it waits for the reader to finish), or after
    /// [`ReplayWorkload::preload`].
    pub fn intended_per_interval(&self) -> Vec<u64> {
        self.wait_reader();
        lock(&self.counts).intended.clone()
    }

    /// Requests in the trace (up to the limit): known once a pass has read it through
    /// ([`ReplayWorkload::preload`], or the replay's own reading), `None` before. After
    /// a run stopped early, the requests read until then.
    pub fn requests(&self) -> Option<u64> {
        self.wait_reader();
        let counts = lock(&self.counts);
        (counts.complete || counts.requests > 0).then_some(counts.requests)
    }

    /// The trace had TTLs beyond the records read when it was opened: a store told
    /// before the run that it had none ([`Workload::needs`]) may not have honoured them.
    pub fn late_ttls(&self) -> bool {
        !self.ttl && lock(&self.counts).ttl
    }

    /// The trace's merges (up to the limit) and how many of them have an operand that
    /// is not 8 bytes — each of which RocksDB's `uint64add` merge operator counts as 0.
    /// A trace carries an operand's size, not its bytes: the replay sends operands of
    /// the traced size (the default value size when the trace has none) cut from its
    /// printable value pool. Counted as the trace is read, like
    /// [`ReplayWorkload::requests`].
    pub fn merge_operands(&self) -> (u64, u64) {
        self.wait_reader();
        let counts = lock(&self.counts);
        (counts.merges, counts.merges_not_8_bytes)
    }

    /// What the trace says about itself.
    pub fn info(&self) -> &kvlab_trace::TraceInfo {
        &self.info
    }

    /// Tells the replay what the store can do: scans are skipped (and counted) on a
    /// store that cannot scan, and a MultiGet is one multi-key read on a store that can
    /// read several keys in one request (else one read per key), and a Merge is a merge
    /// on a store with a merge operator (else a put). Call before the run.
    pub fn adapt_to(&self, caps: &kvlab_core::Capabilities) {
        self.can_scan.store(caps.scan, Ordering::Relaxed);
        self.can_multi_read
            .store(caps.multi_read, Ordering::Relaxed);
        self.can_merge.store(caps.merge, Ordering::Relaxed);
    }

    /// The names of the commands the replay sends, by command id: `MERGE` when merges go
    /// to the store as merges ([`ReplayWorkload::adapt_to`]).
    pub fn command_names(&self) -> Vec<String> {
        if self.can_merge.load(Ordering::Relaxed) {
            vec![String::from_utf8_lossy(MERGE_COMMAND).into_owned()]
        } else {
            Vec::new()
        }
    }

    /// Requests not sent because the store cannot do them, by op name (sorted).
    pub fn skipped(&self) -> Vec<(String, u64)> {
        let map = self
            .skipped
            .by_op
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut v: Vec<_> = map.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        v.sort();
        v
    }

    /// The error that stopped the reader, if the trace went bad midway.
    pub fn error(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(ToString::to_string)
    }

    /// Whether a read that misses is followed by a set of its key (`--look-aside`).
    pub fn look_aside(&self) -> bool {
        self.spec.look_aside
    }

    /// Every effective setting, for the result document.
    pub fn effective(&self) -> Vec<(String, String)> {
        vec![
            ("trace".into(), self.spec.path.display().to_string()),
            ("trace.format".into(), self.info.format.clone()),
            (
                "trace.requests".into(),
                self.requests()
                    .map_or_else(|| "unknown".to_string(), |n| n.to_string()),
            ),
            (
                "speed".into(),
                self.spec
                    .speed
                    .map_or_else(|| "max".to_string(), |s| s.to_string()),
            ),
            ("look_aside".into(), self.spec.look_aside.to_string()),
        ]
    }

    /// The keys the trace reads before it writes them (each once, with the size of its
    /// first read, or the default value size), for `--preload`. A pass of its own (the
    /// replay then reads the trace a second time), which also counts the trace's
    /// requests and intended rate. A trace on standard input cannot be preloaded.
    pub fn preload(&self) -> Result<Preload, TraceError> {
        if self.spec.path.as_os_str() == "-" {
            return Err(TraceError::Format {
                path: self.spec.path.clone(),
                what: "a preload reads the trace before the replay reads it again: \
                       standard input can be read only once"
                    .into(),
            });
        }
        let mut reader = self.take_opened()?;
        let mut counts = Counts::default();
        let (unit_ns, bin_ns) = self.count_units();
        let mut rec = TraceRecord::default();
        let mut seen: HashMap<u64, ()> = HashMap::new();
        let mut keys = Vec::new();
        let mut ends = Vec::new();
        let mut sizes = Vec::new();
        let mut key = Vec::new();
        let mut n = 0u64;
        while self.spec.limit.is_none_or(|l| n < l) && reader.read(&mut rec)? {
            n += 1;
            counts.count(&rec, self.spec.speed, unit_ns, bin_ns);
            if rec.op == Op::Merge {
                counts.count_merge(value_size(&self.info, &rec, self.spec.default_value_size));
            }
            if seen.insert(rec.id, ()).is_some() {
                continue;
            }
            if rec.op.is_read() {
                key_bytes(&self.info, &rec, &mut key);
                keys.extend_from_slice(&key);
                ends.push(keys.len());
                sizes.push(value_size(&self.info, &rec, self.spec.default_value_size));
            }
        }
        counts.complete = true;
        *lock(&self.counts) = counts;
        Ok(Preload {
            keys: keys.into(),
            ends: ends.into(),
            sizes: sizes.into(),
            pool: self.pool.shared().clone(),
        })
    }

    /// Nanoseconds per timestamp unit (0 without timestamps) and per reporting
    /// interval, for [`Counts::count`].
    fn count_units(&self) -> (f64, f64) {
        (
            self.info.time_unit.nanos().unwrap_or(0) as f64,
            self.spec.interval.as_nanos().max(1) as f64,
        )
    }

    /// Starts a reader thread that deals the trace to `clients` queues.
    fn start(&self, clients: usize) -> Vec<Option<Receiver<Chunk>>> {
        let mut senders = Vec::with_capacity(clients);
        let mut receivers = Vec::with_capacity(clients);
        for _ in 0..clients {
            let (tx, rx) = sync_channel::<Chunk>(QUEUE);
            senders.push(tx);
            receivers.push(Some(rx));
        }
        let failed = Arc::clone(&self.failed);
        let opened = match self.take_opened() {
            Ok(o) => o,
            Err(e) => {
                // Every queue is closed at once: the clients have nothing to send.
                *lock(&failed) = Some(e);
                return receivers;
            }
        };
        let dealer = Dealer {
            spec: self.spec.clone(),
            info: self.info.clone(),
            multi: self.can_multi_read.load(Ordering::Relaxed),
            counts: Arc::clone(&self.counts),
            units: self.count_units(),
        };
        let handle = std::thread::Builder::new()
            .name("kvlab-replay-reader".into())
            .spawn(move || {
                if let Err(e) = dealer.deal(opened, &senders) {
                    *lock(&failed) = Some(e);
                }
            })
            .expect("the OS starts a thread");
        *lock(&self.reader) = Some(handle);
        receivers
    }
}

/// What the reader thread needs: how to deal, and where to publish its counts.
struct Dealer {
    spec: ReplaySpec,
    info: kvlab_trace::TraceInfo,
    /// A MultiGet's keys make one request.
    multi: bool,
    /// Where the counts go. A count already complete (a preload pass's) is kept.
    counts: Arc<Mutex<Counts>>,
    /// [`ReplayWorkload::count_units`].
    units: (f64, f64),
}

impl Dealer {
    /// Publishes `counts` unless a complete count is there already.
    fn publish(&self, counts: &Counts) {
        let mut shared = lock(&self.counts);
        if !shared.complete || counts.complete {
            shared.clone_from(counts);
        }
    }

    /// The reader thread's loop: reads the trace and sends each request to the client
    /// its key hashes to, counting the trace's requests and due times as it goes
    /// (published every chunk, so a run that stops early still has the counts of what
    /// was read). With `multi`, the keys of one MultiGet make one request, sent to the
    /// client of its first key.
    fn deal(&self, mut reader: Opened, senders: &[SyncSender<Chunk>]) -> Result<(), TraceError> {
        let (spec, info) = (&self.spec, &self.info);
        let mut rec = TraceRecord::default();
        let mut chunks: Vec<Chunk> = (0..senders.len()).map(|_| Chunk::default()).collect();
        let mut key = Vec::new();
        let (unit_ns, bin_ns) = self.units;
        let mut counts = Counts::default();
        // The client of the MultiGet being gathered, while its keys keep coming.
        let mut gathering: Option<usize> = None;
        // A record that cannot be read ends the trace there: what was read before it is
        // still sent, then the error is the replay's.
        let mut failed = None;
        while spec.limit.is_none_or(|l| counts.requests < l) {
            match reader.read(&mut rec) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
            counts.count(&rec, spec.speed, unit_ns, bin_ns);
            if rec.op == Op::Merge {
                counts.count_merge(value_size(info, &rec, spec.default_value_size));
            }
            let first_ts = counts.first_ts.unwrap_or(rec.ts);
            if counts.requests % CHUNK as u64 == 0 {
                self.publish(&counts);
            }
            key_bytes(info, &rec, &mut key);
            let more_of_batch = rec.op == Op::MultiGet && rec.batch_pos > 0;
            let client = match (self.multi && more_of_batch, gathering) {
                (true, Some(client)) => {
                    let chunk = &mut chunks[client];
                    let start = chunk.keys.len() as u32;
                    chunk.keys.extend_from_slice(&key);
                    chunk.more.push((start, chunk.keys.len() as u32));
                    let item = chunk.items.last_mut().expect("the MultiGet's first key");
                    item.more.1 = chunk.more.len() as u32;
                    client
                }
                _ => {
                    // SplitMix64's finalizer spreads dense ids over the clients.
                    let client = (kvlab_dist::mix64(rec.id) % senders.len() as u64) as usize;
                    let chunk = &mut chunks[client];
                    let start = chunk.keys.len() as u32;
                    chunk.keys.extend_from_slice(&key);
                    let due_ns = spec
                        .speed
                        .map_or(0, |speed| due_ns(rec.ts, first_ts, unit_ns, speed));
                    let more = chunk.more.len() as u32;
                    chunk.items.push(Item {
                        op: rec.op,
                        key: (start, chunk.keys.len() as u32),
                        value_size: value_size(info, &rec, spec.default_value_size),
                        scan_len: rec.scan_len,
                        ttl_s: rec.ttl_s,
                        due_ns,
                        more: (more, more),
                    });
                    gathering = (self.multi && rec.op == Op::MultiGet).then_some(client);
                    client
                }
            };
            // A MultiGet still gathering keys stays in its chunk.
            if gathering.is_some() && rec.batch_pos + 1 < rec.batch_len {
                continue;
            }
            gathering = None;
            if chunks[client].items.len() >= CHUNK {
                let full = std::mem::take(&mut chunks[client]);
                if senders[client].send(full).is_err() {
                    // The run stopped: nobody reads any more.
                    self.publish(&counts);
                    return Ok(());
                }
            }
        }
        counts.complete = failed.is_none();
        self.publish(&counts);
        for (client, chunk) in chunks.into_iter().enumerate() {
            if !chunk.items.is_empty() {
                let _ = senders[client].send(chunk);
            }
        }
        failed.map_or(Ok(()), Err)
    }
}

/// Locks `m`, whose data stays usable after a panic elsewhere (counts and handles).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// When a request of timestamp `ts` is due, in nanoseconds from the replay's start: its
/// distance from the trace's first timestamp (`unit_ns` per unit), divided by `speed`.
fn due_ns(ts: u64, first_ts: u64, unit_ns: f64, speed: f64) -> u64 {
    (ts.saturating_sub(first_ts) as f64 * unit_ns / speed) as u64
}

/// The value size a request writes: the traced size, or `default` for traces without
/// sizes (and requests whose size is 0).
fn value_size(info: &kvlab_trace::TraceInfo, rec: &TraceRecord, default: u32) -> u32 {
    if info.has_sizes && rec.value_size > 0 {
        u32::try_from(rec.value_size).unwrap_or(u32::MAX)
    } else {
        default
    }
}

/// A key's bytes: a byte key as it is, an id in decimal ASCII.
fn key_bytes(info: &kvlab_trace::TraceInfo, rec: &TraceRecord, out: &mut Vec<u8>) {
    out.clear();
    if info.key_encoding == KeyEncoding::Id && rec.key.is_empty() {
        out.extend_from_slice(rec.id.to_string().as_bytes());
    } else {
        out.extend_from_slice(&rec.key);
    }
}

impl Workload for ReplayWorkload {
    type Source = ReplaySource;

    fn source(self: &Arc<Self>, _seed: u64, client: usize, clients: usize) -> ReplaySource {
        let mut queues = self
            .queues
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A new phase (every queue taken, or another client count) reads the trace anew.
        if queues.len() != clients || queues.iter().all(Option::is_none) {
            *queues = self.start(clients);
        }
        let rx = queues[client].take();
        ReplaySource {
            workload: Arc::clone(self),
            rx,
            chunk: Chunk::default(),
            at: 0,
            due: Duration::ZERO,
            fills: VecDeque::new(),
            pool_at: client * 4099,
        }
    }

    fn needs(&self) -> Needs {
        Needs {
            ttl: self.ttl,
            blob: true,
            ..Needs::default()
        }
    }

    /// Unbounded: the clients' shares of a trace differ (keys are dealt by hash), so
    /// each runs until its share is done; [`ReplayWorkload::requests`] is the total.
    fn operation_count(&self) -> u64 {
        u64::MAX
    }
}

/// One client's share of a replay.
#[derive(Debug)]
pub struct ReplaySource {
    workload: Arc<ReplayWorkload>,
    rx: Option<Receiver<Chunk>>,
    chunk: Chunk,
    at: usize,
    due: Duration,
    /// Look-aside sets owed for read misses: key and value size.
    fills: VecDeque<(Vec<u8>, u32)>,
    pool_at: usize,
}

impl ReplaySource {
    /// The next range of the value pool of `size` bytes (at most the pool's).
    fn pool_range(&mut self, size: u32) -> std::ops::Range<usize> {
        let pool_len = self.workload.pool.shared().len();
        let len = (size as usize).min(pool_len);
        self.pool_at = (self.pool_at + 7919) % (pool_len - len + 1);
        self.pool_at..self.pool_at + len
    }

    fn value(&mut self, req: &mut Request, size: u32) {
        let range = self.pool_range(size);
        req.value.set_shared(self.workload.pool.shared(), range);
    }

    /// Makes `req` the merge `MERGE key operand` ([`Request::merge`]) of `item`, its
    /// operand of the traced size; the key also in `req.key`, for stores that route by
    /// key.
    fn merge(&mut self, req: &mut Request, item: &Item) {
        let key = &self.chunk.keys[item.key.0 as usize..item.key.1 as usize];
        req.kind = OpKind::Insert;
        req.key.extend_from_slice(key);
        req.command.start(CommandId(0));
        req.command.args.push(MERGE_COMMAND);
        req.command.args.push(key);
        let range = self.pool_range(item.value_size);
        let pool = self.workload.pool.shared();
        req.command.args.push(&pool[range]);
    }
}

impl OpSource for ReplaySource {
    const TIMED: bool = true;

    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        if let Some((key, size)) = self.fills.pop_front() {
            req.kind = OpKind::Insert;
            req.key.extend_from_slice(&key);
            self.value(req, size);
            return Some(Ticket::NONE);
        }
        loop {
            if self.at == self.chunk.items.len() {
                self.chunk = self.rx.as_ref()?.recv().ok()?;
                self.at = 0;
            }
            let item = self.chunk.items[self.at];
            self.at += 1;
            let w = &*self.workload;
            if item.op == Op::Merge && w.can_merge.load(Ordering::Relaxed) {
                self.merge(req, &item);
                self.due = Duration::from_nanos(item.due_ns);
                return Some(Ticket::NONE);
            }
            // A recorded update stays an update (a miss where the record is gone), as
            // the run sent it; every other write sets its key.
            let kind = match item.op.kind() {
                Some(OpKind::Scan) if !w.can_scan.load(Ordering::Relaxed) => None,
                Some(OpKind::ReadModifyWrite) => Some(OpKind::Insert),
                kind => kind,
            };
            let Some(kind) = kind else {
                w.skipped.add(item.op);
                continue;
            };
            let look_aside = w.spec.look_aside;
            req.kind = kind;
            req.key
                .extend_from_slice(&self.chunk.keys[item.key.0 as usize..item.key.1 as usize]);
            for &(from, to) in &self.chunk.more[item.more.0 as usize..item.more.1 as usize] {
                req.more_keys
                    .push(&self.chunk.keys[from as usize..to as usize]);
            }
            req.read.set_blob();
            // A replay looks at no value it reads: a Get's bytes are counted, not copied.
            // A MultiGet keeps its reply, which says which keys were found.
            req.read.set_discard(req.more_keys.is_empty());
            match kind {
                OpKind::Insert | OpKind::Update => {
                    self.value(req, item.value_size);
                    req.ttl_s = item.ttl_s;
                }
                OpKind::Scan => req.scan_len = item.scan_len.max(1),
                _ => {}
            }
            self.due = Duration::from_nanos(item.due_ns);
            let ticket = if kind == OpKind::Read && look_aside {
                Ticket(u64::from(item.value_size))
            } else {
                Ticket::NONE
            };
            return Some(ticket);
        }
    }

    fn due(&self) -> Option<Duration> {
        self.workload.spec.speed.map(|_| self.due)
    }

    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        if self.workload.spec.look_aside
            && slot.request.kind == OpKind::Read
            && matches!(slot.result, Ok(Outcome::Miss))
        {
            self.fills
                .push_back((slot.request.key.clone(), ticket.0 as u32));
        }
        Verdict::Unchecked
    }
}

/// The keys a trace reads before writing them, with sizes: a [`Dataset`] to load before
/// a replay ([`ReplayWorkload::preload`]).
#[derive(Debug)]
pub struct Preload {
    keys: Arc<[u8]>,
    ends: Arc<[usize]>,
    sizes: Arc<[u32]>,
    pool: Arc<[u8]>,
}

impl Preload {
    fn key_range(&self, i: usize) -> std::ops::Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        start..self.ends[i]
    }

    /// Keys to load.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the trace writes every key before reading it.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl Dataset for Preload {
    type Loader = PreloadSource;

    fn first(&self) -> u64 {
        0
    }

    fn count(&self) -> u64 {
        self.ends.len() as u64
    }

    fn loader(&self, _seed: u64, client: usize, clients: usize) -> PreloadSource {
        let n = self.ends.len();
        let (base, extra) = (n / clients, n % clients);
        let start = client * base + client.min(extra);
        PreloadSource {
            keys: Arc::clone(&self.keys),
            ends: Arc::clone(&self.ends),
            sizes: Arc::clone(&self.sizes),
            pool: Arc::clone(&self.pool),
            next: start,
            end: start + base + usize::from(client < extra),
        }
    }

    fn load_needs(&self) -> Needs {
        Needs {
            blob: true,
            ..Needs::default()
        }
    }

    fn key(&self, n: u64, key: &mut Vec<u8>) {
        key.extend_from_slice(&self.keys[self.key_range(n as usize)]);
    }

    fn check(&self, _n: u64, _key: &[u8], reply: &Record) -> bool {
        !reply.is_empty()
    }
}

/// One client's share of a [`Preload`].
#[derive(Debug)]
pub struct PreloadSource {
    keys: Arc<[u8]>,
    ends: Arc<[usize]>,
    sizes: Arc<[u32]>,
    pool: Arc<[u8]>,
    next: usize,
    end: usize,
}

impl OpSource for PreloadSource {
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        req.kind = OpKind::Insert;
        req.key.extend_from_slice(&self.keys[start..self.ends[i]]);
        let len = (self.sizes[i] as usize).min(self.pool.len());
        req.value.set_shared(&self.pool, 0..len);
        Some(Ticket(i as u64))
    }

    fn completed(&mut self, _slot: &Slot, _ticket: Ticket) -> Verdict {
        Verdict::Unchecked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Twitter cache trace of `n` requests, one a millisecond (`ts` in seconds, so
    /// 1 000 share a second): sets with a TTL after the look-ahead, gets before.
    fn trace(dir: &std::path::Path, n: u64) -> PathBuf {
        let mut text = String::new();
        for i in 0..n {
            let (op, ttl) = if i < LOOK_AHEAD as u64 {
                ("get", 0)
            } else {
                ("set", 60)
            };
            text.push_str(&format!("{},k{},3,100,1,{op},{ttl}\n", i / 1000, i % 977));
        }
        let path = dir.join("t.twitter.csv");
        std::fs::write(&path, text).unwrap();
        path
    }

    fn spec(path: PathBuf, speed: Option<f64>) -> ReplaySpec {
        ReplaySpec {
            path,
            open: OpenOptions::default(),
            speed,
            default_value_size: 100,
            limit: None,
            look_aside: false,
            interval: Duration::from_secs(1),
        }
    }

    /// Takes every request of a replay of `clients` clients.
    fn drain(w: &Arc<ReplayWorkload>, clients: usize) -> u64 {
        let mut sources: Vec<_> = (0..clients).map(|c| w.source(0, c, clients)).collect();
        let mut req = Request::default();
        let mut n = 0;
        for s in &mut sources {
            while s.next(&mut req).is_some() {
                req.clear();
                n += 1;
            }
        }
        n
    }

    #[test]
    fn a_replay_reads_its_trace_once_and_counts_it_as_it_goes() {
        let dir = tempfile::tempdir().unwrap();
        let w = Arc::new(ReplayWorkload::open(spec(trace(dir.path(), 10_500), Some(1.0))).unwrap());
        assert_eq!(w.requests(), None, "nothing is counted before the replay");
        assert!(!w.needs().ttl, "the records read ahead have no TTL");
        assert_eq!(drain(&w, 3), 10_500);
        assert_eq!(w.passes(), 1);
        assert_eq!(w.requests(), Some(10_500));
        // One request a millisecond at speed 1: 1 000 due in each second, 500 in the last.
        let mut expected = vec![1000; 10];
        expected.push(500);
        assert_eq!(w.intended_per_interval(), expected);
        assert!(w.late_ttls(), "the sets' TTLs came after the look-ahead");
        assert!(w
            .effective()
            .contains(&("trace.requests".into(), "10500".into())));
    }

    /// db_bench's `mergerandom` trace (3 000 merges of 8-byte operands) counts its merges
    /// in the preload pass and in the replay's own; the Twitter trace has none.
    #[test]
    fn merges_and_their_operand_sizes_are_counted() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/traces/rocksdb/mergerandom.trace");
        if !path.exists() {
            eprintln!("skipped: {} is not beside the project", path.display());
            return;
        }
        let w = Arc::new(ReplayWorkload::open(spec(path.clone(), None)).unwrap());
        assert_eq!(drain(&w, 2), 3000);
        assert_eq!(w.merge_operands(), (3000, 0));
        let mut limited = spec(path, None);
        limited.limit = Some(100);
        let w = Arc::new(ReplayWorkload::open(limited).unwrap());
        w.preload().unwrap();
        assert_eq!(w.merge_operands(), (100, 0));

        let dir = tempfile::tempdir().unwrap();
        let w = Arc::new(ReplayWorkload::open(spec(trace(dir.path(), 100), None)).unwrap());
        assert_eq!(drain(&w, 1), 100);
        assert_eq!(w.merge_operands(), (0, 0));
    }

    /// A Get's value is counted, not copied; a MultiGet keeps its reply, which says which
    /// keys were found (the trace tap records each key's outcome from it).
    #[test]
    fn gets_count_their_values_and_multigets_keep_their_replies() {
        let dir = tempfile::tempdir().unwrap();
        let w = Arc::new(ReplayWorkload::open(spec(trace(dir.path(), 100), None)).unwrap());
        let mut source = w.source(0, 0, 1);
        let mut req = Request::default();
        let mut gets = 0;
        while source.next(&mut req).is_some() {
            if req.kind == OpKind::Read {
                assert!(req.read.discards());
                gets += 1;
            }
            req.clear();
        }
        assert_eq!(gets, 100, "the first requests of the trace are gets");

        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/traces/rocksdb/multireadrandom.trace");
        if !path.exists() {
            eprintln!("skipped: {} is not beside the project", path.display());
            return;
        }
        let w = Arc::new(ReplayWorkload::open(spec(path, None)).unwrap());
        w.adapt_to(&kvlab_core::Capabilities {
            multi_read: true,
            ..kvlab_core::Capabilities::NONE
        });
        let mut source = w.source(0, 0, 1);
        let mut multi = 0;
        while source.next(&mut req).is_some() {
            if req.kind == OpKind::Read {
                assert_eq!(req.read.discards(), !req.is_multi_read());
                multi += usize::from(req.is_multi_read());
            }
            req.clear();
        }
        assert!(multi > 0, "multireadrandom.trace holds MultiGets");
    }

    #[test]
    fn a_preload_is_the_second_pass_and_counts_first() {
        let dir = tempfile::tempdir().unwrap();
        let w = Arc::new(ReplayWorkload::open(spec(trace(dir.path(), 5_000), Some(2.0))).unwrap());
        // The keys read before written: the 977 keys the first gets read.
        assert_eq!(w.preload().unwrap().len(), 977);
        assert_eq!(w.passes(), 1);
        assert_eq!(w.requests(), Some(5_000));
        assert_eq!(w.intended_per_interval(), [2000, 2000, 1000]);
        assert_eq!(drain(&w, 2), 5_000);
        assert_eq!(w.passes(), 2);
        assert_eq!(w.intended_per_interval(), [2000, 2000, 1000]);
    }
}

//! Trace replay (`kvlab replay TRACE`): a trace of any format kvlab reads, sent to any
//! store, at the trace's pace or as fast as the store goes.
//!
//! - [`ReplayWorkload`]: one reader thread reads the trace once and deals its requests
//!   to the clients by a hash of the key, so every request of a key goes through one
//!   client, in the trace's order (RocksDB's own replayer cannot promise that with
//!   several threads). Each client's [`ReplaySource`] turns them into requests.
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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kvlab_core::{
    CommandId, Dataset, Needs, OpKind, OpSource, Record, Request, Slot, Ticket, Verdict,
    MERGE_COMMAND,
};
use kvlab_core::{Outcome, Workload};
use kvlab_dist::ValuePool;
use kvlab_trace::{KeyEncoding, Op, OpenOptions, TimeUnit, TraceError, TraceRecord};

/// Requests per chunk handed from the reader to a client.
const CHUNK: usize = 1024;
/// Chunks a client's queue holds before the reader waits (bounds memory).
const QUEUE: usize = 8;
/// Bytes of the shared value pool (values are ranges of it; larger values repeat it).
const POOL_BYTES: usize = 8 << 20;

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
    requests: u64,
    first_ts: u64,
    pool: ValuePool,
    queues: Mutex<Vec<Option<Receiver<Chunk>>>>,
    can_scan: AtomicBool,
    /// The store reads several keys in one request: a MultiGet is sent as one.
    can_multi_read: AtomicBool,
    /// The store has a merge operator: a Merge is sent as a merge, not a put.
    can_merge: AtomicBool,
    skipped: Arc<SkipCounts>,
    failed: Arc<Mutex<Option<TraceError>>>,
    ttl: bool,
    /// Requests due in each `spec.interval` of the replay (with a speed).
    intended: Vec<u64>,
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
    /// Opens the trace and reads it through once for its size, first timestamp and
    /// whether it has TTLs (a replay is sized before it starts).
    pub fn open(spec: ReplaySpec) -> Result<ReplayWorkload, TraceError> {
        let mut reader = kvlab_trace::open(&spec.path, &spec.open)?;
        let info = reader.info().clone();
        let mut rec = TraceRecord::default();
        let (mut requests, mut first_ts, mut ttl) = (0u64, None, false);
        let mut intended: Vec<u64> = Vec::new();
        let unit_ns = info.time_unit.nanos().unwrap_or(0) as f64;
        let bin_ns = spec.interval.as_nanos().max(1) as f64;
        while spec.limit.is_none_or(|l| requests < l) && reader.read(&mut rec)? {
            requests += 1;
            let first = *first_ts.get_or_insert(rec.ts);
            ttl |= rec.ttl_s > 0;
            if let Some(speed) = spec.speed.filter(|_| unit_ns > 0.0) {
                let due_ns = due_ns(rec.ts, first, unit_ns, speed);
                let bin = (due_ns as f64 / bin_ns) as usize;
                if bin >= intended.len() {
                    intended.resize(bin + 1, 0);
                }
                intended[bin] += 1;
            }
        }
        if spec.speed.is_some() && info.time_unit == TimeUnit::Sequence {
            return Err(TraceError::Format {
                path: spec.path.clone(),
                what: format!(
                    "a {} trace has no timestamps: replay it with --speed max",
                    info.format
                ),
            });
        }
        Ok(ReplayWorkload {
            pool: ValuePool::printable(POOL_BYTES, 0x6b76_6c61_6272_6570),
            requests,
            first_ts: first_ts.unwrap_or(0),
            info,
            spec,
            queues: Mutex::new(Vec::new()),
            can_scan: AtomicBool::new(true),
            can_multi_read: AtomicBool::new(false),
            can_merge: AtomicBool::new(false),
            skipped: Arc::default(),
            failed: Arc::default(),
            ttl,
            intended,
        })
    }

    /// With a speed: how many requests the trace's timestamps make due in each
    /// reporting interval of the replay (`ReplaySpec::interval`), from its start; empty
    /// with `--speed max` or a trace without timestamps.
    pub fn intended_per_interval(&self) -> &[u64] {
        &self.intended
    }

    /// Requests the replay sends (the trace's, up to the limit).
    pub fn requests(&self) -> u64 {
        self.requests
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

    /// Every effective setting, for the result document.
    pub fn effective(&self) -> Vec<(String, String)> {
        vec![
            ("trace".into(), self.spec.path.display().to_string()),
            ("trace.format".into(), self.info.format.clone()),
            ("trace.requests".into(), self.requests.to_string()),
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
    /// first read, or the default value size), for `--preload`. Reads the trace again.
    pub fn preload(&self) -> Result<Preload, TraceError> {
        let mut reader = kvlab_trace::open(&self.spec.path, &self.spec.open)?;
        let mut rec = TraceRecord::default();
        let mut seen: HashMap<u64, ()> = HashMap::new();
        let mut keys = Vec::new();
        let mut ends = Vec::new();
        let mut sizes = Vec::new();
        let mut key = Vec::new();
        let mut n = 0u64;
        while self.spec.limit.is_none_or(|l| n < l) && reader.read(&mut rec)? {
            n += 1;
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
        Ok(Preload {
            keys: keys.into(),
            ends: ends.into(),
            sizes: sizes.into(),
            pool: self.pool.shared().clone(),
        })
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
        let spec = self.spec.clone();
        let info = self.info.clone();
        let first_ts = self.first_ts;
        let failed = Arc::clone(&self.failed);
        let multi = self.can_multi_read.load(Ordering::Relaxed);
        std::thread::Builder::new()
            .name("kvlab-replay-reader".into())
            .spawn(move || {
                if let Err(e) = deal(&spec, &info, first_ts, multi, &senders) {
                    *failed
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                }
            })
            .expect("the OS starts a thread");
        receivers
    }
}

/// The reader thread's loop: reads the trace and sends each request to the client its
/// key hashes to. With `multi`, the keys of one MultiGet make one request, sent to the
/// client of its first key.
fn deal(
    spec: &ReplaySpec,
    info: &kvlab_trace::TraceInfo,
    first_ts: u64,
    multi: bool,
    senders: &[SyncSender<Chunk>],
) -> Result<(), TraceError> {
    let mut reader = kvlab_trace::open(&spec.path, &spec.open)?;
    let mut rec = TraceRecord::default();
    let mut chunks: Vec<Chunk> = (0..senders.len()).map(|_| Chunk::default()).collect();
    let mut key = Vec::new();
    let unit_ns = info.time_unit.nanos().unwrap_or(0) as f64;
    let mut n = 0u64;
    // The client of the MultiGet being gathered, while its keys keep coming.
    let mut gathering: Option<usize> = None;
    while spec.limit.is_none_or(|l| n < l) && reader.read(&mut rec)? {
        n += 1;
        key_bytes(info, &rec, &mut key);
        let more_of_batch = rec.op == Op::MultiGet && rec.batch_pos > 0;
        let client = match (multi && more_of_batch, gathering) {
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
                gathering = (multi && rec.op == Op::MultiGet).then_some(client);
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
                return Ok(()); // the run stopped: nobody reads any more
            }
        }
    }
    for (client, chunk) in chunks.into_iter().enumerate() {
        if !chunk.items.is_empty() {
            let _ = senders[client].send(chunk);
        }
    }
    Ok(())
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
            let kind = match item.op {
                op if op.is_read() && !matches!(op, Op::Seek | Op::SeekForPrev | Op::Scan) => {
                    OpKind::Read
                }
                Op::Seek | Op::SeekForPrev | Op::Scan => {
                    if !w.can_scan.load(Ordering::Relaxed) {
                        w.skipped.add(item.op);
                        continue;
                    }
                    OpKind::Scan
                }
                Op::Delete | Op::SingleDelete => OpKind::Delete,
                Op::Merge if w.can_merge.load(Ordering::Relaxed) => {
                    self.merge(req, &item);
                    self.due = Duration::from_nanos(item.due_ns);
                    return Some(Ticket::NONE);
                }
                Op::DeleteRange | Op::Other => {
                    w.skipped.add(item.op);
                    continue;
                }
                _ => OpKind::Insert,
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
            match kind {
                OpKind::Insert => {
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

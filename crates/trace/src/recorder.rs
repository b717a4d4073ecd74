//! The trace recorder (`--record FILE`): every request of a phase, as the client issued
//! it and as it ended, written to a `.kvtrace` — whatever the store.
//!
//! [`TraceRecorder`] is a [`Tap`]: the runner shows each client's completed batches to
//! the client's [`TapClient`], which turns every slot into a [`TraceRecord`] in a buffer
//! of its own (no lock, no allocation once warm: buffers go round between the clients
//! and the writer). Full buffers go through a bounded queue to one writer thread that
//! encodes and compresses them ([`KvtraceWriter`]). When the disk cannot keep up, the
//! queue fills and clients wait for it: the run slows down visibly instead of growing
//! memory, and [`RecordingSummary::stalled_ns`] says how long clients waited.
//!
//! What a record holds: `ts` (nanoseconds from the recorder's start to the batch's
//! send), `intended_ns` (the request's due time on the same clock; its send time in a
//! closed loop), the op ([`Op::Insert`], [`Op::Update`], [`Op::Get`], [`Op::Scan`],
//! [`Op::Delete`]; a multi-key read is one [`Op::MultiGet`] record per key; a merge
//! ([`kvlab_core::Request::merge`]), [`Op::Merge`] with its operand's size; another
//! command, [`Op::Other`] keyed by its first key), the key, the value size (a write's value; a
//! read's bytes returned), the scan length, the TTL, the outcome and the service
//! latency.

use std::fmt;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use kvlab_core::{Batch, OpKind, Outcome as StoreOutcome, Slot, Tap, TapClient, Timestamp};

use crate::kvtrace::KvtraceWriter;
use crate::record::{KeyEncoding, Op, Outcome, TimeUnit, TraceInfo, TraceRecord, STARTED_UNIX_NS};
use crate::TraceError;

/// Records per client buffer before it goes to the writer.
const CHUNK_RECORDS: usize = 4096;
/// Full buffers the queue holds before clients wait for the writer.
const QUEUE_CHUNKS: usize = 16;

/// Records a phase's requests to a `.kvtrace` file (see the module docs).
pub struct TraceRecorder {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<Result<u64, TraceError>>>>,
    path: PathBuf,
}

struct Shared {
    queue: Mutex<Option<SyncSender<Vec<TraceRecord>>>>,
    /// Emptied buffers (their key buffers kept), for clients to reuse.
    spare: Mutex<Vec<Vec<TraceRecord>>>,
    base: Timestamp,
    /// Keep a key when `mix(key_id) <= threshold` (`u64::MAX`: every key).
    threshold: u64,
    stalled_ns: AtomicU64,
    kept: AtomicU64,
    skipped: AtomicU64,
}

/// What a finished recording wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingSummary {
    /// The file.
    pub path: PathBuf,
    /// Records written.
    pub records: u64,
    /// Requests left out by sampling (`--record-sample`).
    pub sampled_out: u64,
    /// Bytes of the file.
    pub bytes: u64,
    /// Nanoseconds clients spent waiting for the writer (summed over clients): above
    /// zero, recording slowed the run.
    pub stalled_ns: u64,
}

impl TraceRecorder {
    /// Creates `path` and starts the writer. `info_meta` goes into the file's header
    /// (kvlab version, workload, seed, store, phase); `sample` keeps that fraction of
    /// the keys (every request of a kept key), deterministically by key.
    pub fn create(
        path: &Path,
        info_meta: Vec<(String, String)>,
        sample: f64,
    ) -> Result<TraceRecorder, TraceError> {
        let file = File::create(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base = Timestamp::now();
        let mut info_meta = info_meta;
        // The wall-clock time of timestamp 0, so that exports can state absolute times.
        let unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        info_meta.push((STARTED_UNIX_NS.to_string(), unix_ns.to_string()));
        let info = TraceInfo {
            format: "kvtrace".into(),
            key_encoding: KeyEncoding::Bytes,
            time_unit: TimeUnit::Nanos,
            has_sizes: true,
            has_next_access: false,
            has_outcomes: true,
            meta: info_meta,
        };
        let mut writer = KvtraceWriter::new(BufWriter::with_capacity(1 << 20, file), path, &info)?;
        let (tx, rx) = sync_channel::<Vec<TraceRecord>>(QUEUE_CHUNKS);
        let threshold = if sample >= 1.0 {
            u64::MAX
        } else {
            (sample.max(0.0) * u64::MAX as f64) as u64
        };
        let shared = Arc::new(Shared {
            queue: Mutex::new(Some(tx)),
            spare: Mutex::new(Vec::new()),
            base,
            threshold,
            stalled_ns: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
        });
        let for_writer = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("kvlab-record".into())
            .spawn(move || -> Result<u64, TraceError> {
                write_all(&mut writer, &rx, &for_writer)?;
                let out = writer.finish()?;
                let written = out.get_ref().metadata().map(|m| m.len()).unwrap_or(0);
                drop(out);
                Ok(written)
            })
            .map_err(|source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(TraceRecorder {
            shared,
            writer: Mutex::new(Some(handle)),
            path: path.to_path_buf(),
        })
    }

    /// A recorder that writes no file: its records come out of the [`RecordStream`], in
    /// the order the clients' buffers fill (one client: the order it sent them). The same
    /// bounded queue stands between the clients and the reader, so a slow reader slows
    /// the run instead of growing memory; a reader dropped early lets the run finish
    /// without it. [`TraceRecorder::finish`] ends the stream once every client is gone.
    /// What `kvlab sim -P` simulates, without a temporary file.
    pub fn streaming() -> (TraceRecorder, RecordStream) {
        let (tx, rx) = sync_channel::<Vec<TraceRecord>>(QUEUE_CHUNKS);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Some(tx)),
            spare: Mutex::new(Vec::new()),
            base: Timestamp::now(),
            threshold: u64::MAX,
            stalled_ns: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
        });
        let stream = RecordStream {
            rx,
            shared: Arc::clone(&shared),
            chunk: Vec::new().into_iter(),
        };
        let recorder = TraceRecorder {
            shared,
            writer: Mutex::new(None),
            path: PathBuf::from("-"),
        };
        (recorder, stream)
    }

    /// Waits for every buffered record to be written and closes the file. Call it after
    /// the phase, when every client (and so every [`TapClient`]) is gone.
    pub fn finish(&self) -> Result<RecordingSummary, TraceError> {
        drop(lock(&self.shared.queue).take());
        let handle = lock(&self.writer).take();
        let bytes = match handle {
            Some(h) => h.join().map_err(|_| TraceError::Format {
                path: self.path.clone(),
                what: "the trace writer thread panicked".into(),
            })??,
            None => 0,
        };
        Ok(RecordingSummary {
            path: self.path.clone(),
            records: self.shared.kept.load(Ordering::Relaxed),
            sampled_out: self.shared.skipped.load(Ordering::Relaxed),
            bytes,
            stalled_ns: self.shared.stalled_ns.load(Ordering::Relaxed),
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write_all(
    writer: &mut KvtraceWriter<BufWriter<File>>,
    rx: &Receiver<Vec<TraceRecord>>,
    shared: &Shared,
) -> Result<(), TraceError> {
    while let Ok(chunk) = rx.recv() {
        for rec in &chunk {
            // Every record's id is its key's (see `fill`): the key is not hashed.
            writer.write_key_id(rec)?;
        }
        // The records go back as they are: a client overwrites them in place (each
        // keeps its key buffer), so a warm recorder allocates nothing.
        lock(&shared.spare).push(chunk);
    }
    Ok(())
}

/// The records of a [`TraceRecorder::streaming`] recorder, as an iterator; it ends when
/// the recorder is finished.
pub struct RecordStream {
    rx: Receiver<Vec<TraceRecord>>,
    shared: Arc<Shared>,
    chunk: std::vec::IntoIter<TraceRecord>,
}

impl Iterator for RecordStream {
    type Item = TraceRecord;

    fn next(&mut self) -> Option<TraceRecord> {
        loop {
            if let Some(mut rec) = self.chunk.next() {
                // The id a file's writer implies from the key (`fill` leaves it).
                rec.id = crate::key_id(&rec.key);
                return Some(rec);
            }
            let chunk = self.rx.recv().ok()?;
            // A buffer of the same size goes back for a client to fill (the records
            // themselves leave with the iterator).
            lock(&self.shared.spare).push(Vec::with_capacity(chunk.len()));
            self.chunk = chunk.into_iter();
        }
    }
}

impl fmt::Debug for RecordStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordStream").finish_non_exhaustive()
    }
}

impl fmt::Debug for TraceRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceRecorder")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Tap for TraceRecorder {
    fn client(&self, _client: usize, _clients: usize) -> Box<dyn TapClient> {
        Box::new(ClientRecorder {
            shared: Arc::clone(&self.shared),
            buf: Vec::new(),
            live: 0,
        })
    }
}

/// One client's buffer.
struct ClientRecorder {
    shared: Arc<Shared>,
    buf: Vec<TraceRecord>,
    live: usize,
}

impl ClientRecorder {
    /// The next record to fill (cleared).
    #[inline]
    fn next_record(&mut self) -> &mut TraceRecord {
        if self.live == self.buf.len() {
            self.buf.push(TraceRecord::default());
        }
        let rec = &mut self.buf[self.live];
        self.live += 1;
        rec.clear();
        rec
    }

    #[inline]
    fn keep(&self, key: &[u8]) -> bool {
        self.shared.threshold == u64::MAX
            || kvlab_dist::mix64(crate::key_id(key)) <= self.shared.threshold
    }

    /// Sends the live records to the writer and takes a spare buffer.
    fn flush(&mut self) {
        if self.live == 0 {
            return;
        }
        let spare = lock(&self.shared.spare).pop().unwrap_or_default();
        let mut full = std::mem::replace(&mut self.buf, spare);
        full.truncate(self.live);
        self.shared
            .kept
            .fetch_add(self.live as u64, Ordering::Relaxed);
        self.live = 0;
        let queue = lock(&self.shared.queue).clone();
        if let Some(tx) = queue {
            let waited = Instant::now();
            // A full queue blocks here: the disk sets the pace, memory stays bounded.
            if tx.try_send(full).is_err_and(|e| match e {
                std::sync::mpsc::TrySendError::Full(full) => {
                    let _ = tx.send(full);
                    true
                }
                std::sync::mpsc::TrySendError::Disconnected(_) => false,
            }) {
                self.shared
                    .stalled_ns
                    .fetch_add(waited.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
        }
    }

    fn record_slot(&mut self, slot: &Slot, started: Timestamp) {
        let base = self.shared.base;
        let req = &slot.request;
        let ts = started.nanos_since(base);
        let intended = slot.due.map_or(ts, |d| d.nanos_since(base));
        let latency = slot.completed_at.map_or(0, |c| c.nanos_since(started));
        let outcome = match &slot.result {
            Err(_) => Outcome::Error,
            Ok(StoreOutcome::Miss) | Ok(StoreOutcome::Replied { nil: true, .. }) => Outcome::Miss,
            Ok(StoreOutcome::MultiRead { .. }) | Ok(_) => Outcome::Hit,
        };
        let returned = match slot.result {
            Ok(StoreOutcome::Hit { bytes }) => bytes,
            _ => 0,
        };
        if req.command.is_some() {
            if !self.keep(&req.key) {
                self.shared.skipped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let rec = self.next_record();
            match req.merge() {
                Some((key, operand)) => {
                    fill(rec, Op::Merge, key, ts, intended, latency, outcome);
                    rec.value_size = operand.len() as u64;
                }
                None => fill(rec, Op::Other, &req.key, ts, intended, latency, outcome),
            }
            return;
        }
        if req.is_multi_read() {
            let n = req.key_count() as u32;
            for (i, key) in req.keys().enumerate() {
                if !self.keep(key) {
                    self.shared.skipped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let found = slot.reply.get(key);
                let rec = self.next_record();
                let o = match (&slot.result, found) {
                    (Err(_), _) => Outcome::Error,
                    (_, Some(_)) => Outcome::Hit,
                    (_, None) => Outcome::Miss,
                };
                fill(rec, Op::MultiGet, key, ts, intended, latency, o);
                rec.value_size = found.map_or(0, |v| v.len() as u64);
                rec.batch_len = n;
                rec.batch_pos = i as u32;
            }
            return;
        }
        if !self.keep(&req.key) {
            self.shared.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let op = match req.kind {
            OpKind::Read => Op::Get,
            OpKind::Insert => Op::Insert,
            OpKind::Update => Op::Update,
            OpKind::Scan => Op::Scan,
            OpKind::Delete => Op::Delete,
            OpKind::ReadModifyWrite => Op::ReadModifyWrite,
        };
        let rec = self.next_record();
        fill(rec, op, &req.key, ts, intended, latency, outcome);
        rec.ttl_s = req.ttl_s;
        match req.kind {
            OpKind::Insert | OpKind::Update => rec.value_size = req.value.size_bytes() as u64,
            OpKind::Read => rec.value_size = returned,
            OpKind::Scan => rec.scan_len = req.scan_len,
            _ => {}
        }
    }
}

#[inline]
fn fill(
    rec: &mut TraceRecord,
    op: Op,
    key: &[u8],
    ts: u64,
    intended: u64,
    latency: u64,
    outcome: Outcome,
) {
    rec.op = op;
    // The id is left for the writer to imply from the key (`write_key_id`): hashing
    // every key here cost the run ~10 ns a request.
    rec.key.clear();
    rec.key.extend_from_slice(key);
    rec.key_size = u32::try_from(key.len()).unwrap_or(u32::MAX);
    rec.ts = ts;
    rec.intended_ns = intended;
    rec.latency_ns = latency;
    rec.outcome = outcome;
}

impl TapClient for ClientRecorder {
    fn batch(&mut self, batch: &Batch, started: Timestamp) {
        for slot in batch.slots() {
            self.record_slot(slot, started);
        }
        if self.live >= CHUNK_RECORDS {
            self.flush();
        }
    }
}

impl Drop for ClientRecorder {
    fn drop(&mut self) {
        self.flush();
    }
}

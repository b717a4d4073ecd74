//! Simulation over a stream: a trace read once, in [`Block`]s, every (policy, size)
//! simulator fed from each block, memory bounded by the simulators' state and the
//! read-ahead, not by the trace's length.
//!
//! - [`BlockBuilder`] turns records into blocks: dense object indices (one table of the
//!   ids seen so far), sizes, op classes and next-access times, with the same rules as
//!   [`crate::SimTrace`] (size-0 requests skipped and counted, traces without sizes as
//!   size 1), so a streamed run's miss counts equal a whole-trace run's.
//! - [`StreamJob`] is one consumer of blocks: a simulator ([`StreamJob::simulator`]) or a
//!   miss-ratio curve ([`StreamJob::Curve`]); [`run_stream`] feeds every job from every
//!   block on worker threads while one thread reads ahead a bounded number of blocks.
//! - Next-access times (Belady) come from the trace where it carries them
//!   ([`crate::LoadOptions::trace_next_access`]); otherwise [`NextAccessFile`] computes
//!   them in a pass before the simulation into a temporary file on disk (4 + 8 bytes per
//!   request on disk, per-object state in memory), read back alongside the stream.
//!
//! Per-object state (every policy's arrays, the id table) grows with the distinct objects
//! met so far ([`crate::Policy::grow`]); nothing grows with requests.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::time::Instant;

use hashbrown::HashMap;
use kvlab_trace::{TraceReader, TraceRecord};

use crate::error::SimError;
use crate::mrc::CurveBuilder;
use crate::policy::{Policy, PolicySpec};
use crate::sim::{with_policy, PolicyVisitor, SimOptions, SimResult, Simulator, Tally};
use crate::trace::{LoadOptions, OpClass, Req, NEVER};
use crate::Mode;

/// Requests per block by default (64 Ki).
pub const DEFAULT_BLOCK: usize = 1 << 16;

/// Blocks read ahead of the slowest worker by default.
pub const DEFAULT_READ_AHEAD: usize = 4;

/// A run of consecutive requests, as [`crate::SimTrace`] holds them (dense object index,
/// size, next-access time, op class) plus each request's object id.
#[derive(Clone, Debug, Default)]
pub struct Block {
    obj: Vec<u32>,
    size: Vec<u32>,
    next_access: Vec<i64>,
    op: Vec<OpClass>,
    id: Vec<u64>,
    /// Distinct objects met up to the end of this block.
    n_objects: usize,
}

impl Block {
    /// An empty block with room for `n` requests.
    pub fn with_capacity(n: usize) -> Block {
        Block {
            obj: Vec::with_capacity(n),
            size: Vec::with_capacity(n),
            next_access: Vec::with_capacity(n),
            op: Vec::with_capacity(n),
            id: Vec::with_capacity(n),
            n_objects: 0,
        }
    }

    /// Requests in the block.
    pub fn len(&self) -> usize {
        self.obj.len()
    }

    /// True when the block holds no request.
    pub fn is_empty(&self) -> bool {
        self.obj.is_empty()
    }

    /// Distinct objects of the stream up to the end of this block (every dense index in
    /// the block is below it).
    pub fn n_objects(&self) -> usize {
        self.n_objects
    }

    /// The `i`th request, sized for `mode`.
    #[inline]
    pub fn req(&self, i: usize, mode: Mode) -> Req {
        Req {
            obj: self.obj[i],
            size: match mode {
                Mode::Object => 1,
                Mode::Byte => u64::from(self.size[i]),
            },
            next_access: self.next_access[i],
            id: self.id[i],
        }
    }

    /// The traced size of the `i`th request.
    #[inline]
    pub fn traced_size(&self, i: usize) -> u64 {
        u64::from(self.size[i])
    }

    /// The op class of the `i`th request.
    #[inline]
    pub fn op(&self, i: usize) -> OpClass {
        self.op[i]
    }

    /// Dense object index of each request.
    pub fn objects(&self) -> &[u32] {
        &self.obj
    }

    /// Traced size of each request.
    pub fn sizes(&self) -> &[u32] {
        &self.size
    }

    /// Object id of each request.
    pub fn ids(&self) -> &[u64] {
        &self.id
    }

    /// Empties the block, keeping its memory.
    pub fn clear(&mut self) {
        self.obj.clear();
        self.size.clear();
        self.next_access.clear();
        self.op.clear();
        self.id.clear();
    }

    /// Next-access time of each request (the index of the next request to the same
    /// object among the requests kept, or the trace's own field; [`NEVER`] if none).
    pub fn next_accesses_mut(&mut self) -> &mut [i64] {
        &mut self.next_access
    }
}

/// Turns records into [`Block`]s: the id table (object id → dense index) and each
/// object's first size (the working set) live here, across blocks.
#[derive(Debug)]
pub struct BlockBuilder {
    opts: LoadOptions,
    index: HashMap<u64, u32>,
    first_size: Vec<u32>,
    requests: u64,
    requested_bytes: u64,
    skipped_zero_size: u64,
}

impl BlockBuilder {
    /// A builder with no object seen. `opts.fill_read_sizes` is not supported on a stream
    /// (it needs each object's next sized request): callers load such traces whole.
    pub fn new(opts: LoadOptions) -> BlockBuilder {
        BlockBuilder {
            opts,
            index: HashMap::new(),
            first_size: Vec::new(),
            requests: 0,
            requested_bytes: 0,
            skipped_zero_size: 0,
        }
    }

    /// Appends one record to `block` (or counts it as skipped when its size is 0).
    pub fn push(&mut self, rec: &TraceRecord, block: &mut Block) -> Result<(), SimError> {
        let size = if self.opts.has_sizes {
            u32::try_from(rec.obj_size()).unwrap_or(u32::MAX)
        } else {
            1
        };
        if size == 0 && self.opts.skip_zero_size {
            self.skipped_zero_size += 1;
            return Ok(());
        }
        let next = self.first_size.len();
        if next == u32::MAX as usize {
            return Err(SimError::TooManyObjects {
                max: u64::from(u32::MAX) - 1,
            });
        }
        let obj = *self.index.entry(rec.id).or_insert(next as u32);
        if obj as usize == next {
            self.first_size.push(size);
        }
        block.obj.push(obj);
        block.size.push(size);
        block.op.push(OpClass::of(rec));
        block.id.push(rec.id);
        block
            .next_access
            .push(if !self.opts.trace_next_access || rec.next_access < 0 {
                NEVER
            } else {
                rec.next_access
            });
        block.n_objects = self.first_size.len();
        self.requests += 1;
        self.requested_bytes += u64::from(size);
        Ok(())
    }

    /// Reads records from `reader` into `block` until it holds `max` requests (size-0
    /// requests skipped do not count) or the trace ends; returns false at the end.
    pub fn fill<R: TraceReader + ?Sized>(
        &mut self,
        reader: &mut R,
        block: &mut Block,
        max: usize,
    ) -> Result<bool, SimError> {
        let mut rec = TraceRecord::default();
        while block.len() < max {
            rec.clear();
            if !reader.read(&mut rec)? {
                return Ok(false);
            }
            self.push(&rec, block)?;
        }
        Ok(true)
    }

    /// Starts the same trace again (after a pass that only counted): the id table and
    /// first sizes are kept (the second pass meets the same objects in the same order),
    /// the request counts start over.
    pub fn rewind(&mut self) {
        self.requests = 0;
        self.requested_bytes = 0;
        self.skipped_zero_size = 0;
    }

    /// Requests kept so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Traced bytes of the requests kept so far.
    pub fn requested_bytes(&self) -> u64 {
        self.requested_bytes
    }

    /// Requests skipped so far because their size was 0.
    pub fn skipped_zero_size(&self) -> u64 {
        self.skipped_zero_size
    }

    /// Distinct objects so far.
    pub fn n_objects(&self) -> usize {
        self.first_size.len()
    }

    /// Working set of the objects so far, as [`crate::SimTrace::working_set`] counts it.
    pub fn working_set(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Object => self.first_size.len() as u64,
            Mode::Byte => self.first_size.iter().map(|&s| u64::from(s)).sum(),
        }
    }
}

struct Running<P> {
    sim: Simulator<P>,
    tally: Tally,
    name: String,
    cache_size: u64,
    opts: SimOptions,
    n_objects: usize,
    seconds: f64,
}

impl<P: Policy> BlockSimJob for Running<P> {
    fn feed_block(&mut self, block: &Block) {
        let start = Instant::now();
        if block.n_objects > self.n_objects {
            self.n_objects = block.n_objects;
            self.sim.grow(self.n_objects);
        }
        let (mode, op_aware) = (self.opts.mode, self.opts.op_aware);
        for i in 0..block.len() {
            let req = block.req(i, mode);
            self.sim.step(
                &req,
                block.op(i),
                block.traced_size(i),
                op_aware,
                &mut self.tally,
            );
        }
        self.seconds += start.elapsed().as_secs_f64();
    }

    fn sim_result(&self) -> SimResult {
        self.tally.result(
            self.name.clone(),
            self.cache_size,
            self.opts.mode,
            self.seconds,
        )
    }
}

/// One consumer of a stream of blocks.
pub enum StreamJob {
    /// A (policy, size) simulator.
    Sim(Box<dyn BlockSimJob>),
    /// LRU's miss-ratio curve (exact or SHARDS).
    Curve(Box<CurveBuilder>),
}

/// A simulator as [`StreamJob::Sim`] holds it (built by [`StreamJob::simulator`]).
pub trait BlockSimJob: Send {
    /// Runs one block.
    fn feed_block(&mut self, block: &Block);
    /// The result so far.
    fn sim_result(&self) -> SimResult;
}

impl std::fmt::Debug for StreamJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamJob::Sim(s) => write!(f, "Sim({})", s.sim_result().policy),
            StreamJob::Curve(c) => write!(f, "Curve({c:?})"),
        }
    }
}

impl StreamJob {
    /// A simulator of `spec` at `cache_size`, sized for `n_objects` objects to start
    /// with (it grows as blocks bring new ones).
    pub fn simulator(
        spec: &PolicySpec,
        cache_size: u64,
        n_objects: usize,
        opts: SimOptions,
    ) -> Result<StreamJob, SimError> {
        struct Boxed {
            name: String,
            cache_size: u64,
            opts: SimOptions,
            n_objects: usize,
        }
        impl PolicyVisitor for Boxed {
            type Out = Box<dyn BlockSimJob>;
            fn visit<P: Policy + 'static>(self, policy: P) -> Self::Out {
                Box::new(Running {
                    sim: Simulator::new(policy),
                    tally: Tally::default(),
                    name: self.name,
                    cache_size: self.cache_size,
                    opts: self.opts,
                    n_objects: self.n_objects,
                    seconds: 0.0,
                })
            }
        }
        let v = Boxed {
            name: spec.name(),
            cache_size,
            opts,
            n_objects,
        };
        with_policy(spec, cache_size, n_objects, v).map(StreamJob::Sim)
    }

    fn feed(&mut self, block: &Block) {
        match self {
            StreamJob::Sim(s) => s.feed_block(block),
            StreamJob::Curve(c) => c.feed(block),
        }
    }

    /// A simulator's result (None for a curve).
    pub fn result(&self) -> Option<SimResult> {
        match self {
            StreamJob::Sim(s) => Some(s.sim_result()),
            StreamJob::Curve(_) => None,
        }
    }
}

/// What a streamed run saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Blocks read.
    pub blocks: u64,
    /// Requests in them.
    pub requests: u64,
    /// Most blocks alive at once (read ahead, queued or being simulated): at most
    /// `read_ahead + 1` per worker plus the one being read.
    pub max_live_blocks: usize,
}

/// A block shared by the workers that counts itself alive until the last one drops it.
struct Shared {
    block: Block,
    live: Arc<AtomicUsize>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Feeds every job from every block `fill` produces, on `threads` workers (0: every
/// core; at most one per job), each owning a share of the jobs, while the calling
/// thread reads: at most `read_ahead` blocks wait for the slowest worker. `fill` clears
/// nothing: it is given an empty block and returns false at the end of the stream.
/// The jobs come back in their order, with what the stream read.
pub fn run_stream<F>(
    mut fill: F,
    jobs: Vec<StreamJob>,
    threads: usize,
    read_ahead: usize,
) -> Result<(Vec<StreamJob>, StreamStats), SimError>
where
    F: FnMut(&mut Block) -> Result<bool, SimError>,
{
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
    .clamp(1, jobs.len().max(1));
    let mut shares: Vec<Vec<(usize, StreamJob)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        shares[i % threads].push((i, job));
    }
    let live = Arc::new(AtomicUsize::new(0));
    let max_live = AtomicUsize::new(0);
    let mut stats = StreamStats::default();
    type Channel = (SyncSender<Arc<Shared>>, Receiver<Arc<Shared>>);
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..threads)
        .map(|_| -> Channel { sync_channel(read_ahead.max(1)) })
        .unzip();
    let (read, done) = std::thread::scope(|s| {
        let workers: Vec<_> = shares
            .into_iter()
            .zip(rxs)
            .map(|(mut share, rx)| {
                s.spawn(move || {
                    for shared in rx {
                        for (_, job) in &mut share {
                            job.feed(&shared.block);
                        }
                    }
                    share
                })
            })
            .collect();
        let read = (|| {
            loop {
                let mut block = Block::with_capacity(DEFAULT_BLOCK);
                let now = live.fetch_add(1, Ordering::AcqRel) + 1;
                max_live.fetch_max(now, Ordering::AcqRel);
                let shared = |block| {
                    Arc::new(Shared {
                        block,
                        live: Arc::clone(&live),
                    })
                };
                let more = match fill(&mut block) {
                    Ok(more) => more,
                    Err(e) => {
                        drop(shared(block));
                        return Err(e);
                    }
                };
                if block.is_empty() {
                    drop(shared(block));
                    if more {
                        continue;
                    }
                    return Ok(());
                }
                stats.blocks += 1;
                stats.requests += block.len() as u64;
                let b = shared(block);
                for tx in &txs {
                    // A worker only stops early by panicking, which the join reports.
                    let _ = tx.send(Arc::clone(&b));
                }
                if !more {
                    return Ok(());
                }
            }
        })();
        drop(txs);
        let done: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        (read, done)
    });
    read?;
    let mut out: Vec<(usize, StreamJob)> = Vec::new();
    for share in done {
        match share {
            Ok(share) => out.extend(share),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
    out.sort_by_key(|(i, _)| *i);
    stats.max_live_blocks = max_live.load(Ordering::Acquire);
    Ok((out.into_iter().map(|(_, j)| j).collect(), stats))
}

/// Next-access times computed before a streamed simulation, kept on disk: each kept
/// request's dense object index is written to a temporary file during a first pass
/// ([`NextAccessFile::record`]); [`NextAccessFile::finish`] reads it backwards and writes
/// each request's next access (the index of the next request to the same object among
/// the kept ones, as [`crate::SimTrace`] computes it) to a second file, which
/// [`NextAccessFile::fill`] reads alongside the stream. Memory: 8 bytes per object and
/// two buffers; disk: 12 bytes per request, removed when this is dropped.
#[derive(Debug)]
pub struct NextAccessFile {
    objects: Option<BufWriter<File>>,
    requests: u64,
    next: Option<BufReader<File>>,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io {
        what: what.to_string(),
        source,
    }
}

impl NextAccessFile {
    /// Opens the first temporary file (in the system's temporary directory).
    pub fn new() -> Result<NextAccessFile, SimError> {
        let f = tempfile::tempfile().map_err(io("creating a temporary file for next accesses"))?;
        Ok(NextAccessFile {
            objects: Some(BufWriter::with_capacity(1 << 20, f)),
            requests: 0,
            next: None,
        })
    }

    /// Records the objects of a block of the first pass.
    pub fn record(&mut self, block: &Block) -> Result<(), SimError> {
        let w = self.objects.as_mut().ok_or_else(|| SimError::Io {
            what: "recording next accesses after the pass ended".into(),
            source: std::io::Error::other("NextAccessFile::finish was called"),
        })?;
        for &o in block.objects() {
            w.write_all(&o.to_le_bytes())
                .map_err(io("writing the temporary file of object indices"))?;
        }
        self.requests += block.len() as u64;
        Ok(())
    }

    /// Computes every next access (backwards over the recorded objects, `n_objects`
    /// of them) into the second file and rewinds it for [`NextAccessFile::fill`].
    pub fn finish(&mut self, n_objects: usize) -> Result<(), SimError> {
        const CHUNK: u64 = 1 << 16;
        let Some(w) = self.objects.take() else {
            return Ok(());
        };
        let mut objects = w
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io("writing the temporary file of object indices"))?;
        let mut next =
            tempfile::tempfile().map_err(io("creating a temporary file for next accesses"))?;
        next.set_len(self.requests * 8)
            .map_err(io("sizing the temporary file of next accesses"))?;
        let mut seen = vec![NEVER; n_objects];
        let mut ob = vec![0u8; (CHUNK * 4) as usize];
        let mut nb = vec![0u8; (CHUNK * 8) as usize];
        let mut end = self.requests;
        while end > 0 {
            let start = end.saturating_sub(CHUNK);
            let n = (end - start) as usize;
            objects
                .seek(SeekFrom::Start(start * 4))
                .and_then(|_| objects.read_exact(&mut ob[..n * 4]))
                .map_err(io("reading the temporary file of object indices"))?;
            for k in (0..n).rev() {
                let o =
                    u32::from_le_bytes([ob[4 * k], ob[4 * k + 1], ob[4 * k + 2], ob[4 * k + 3]]);
                let slot = seen.get_mut(o as usize).ok_or_else(|| SimError::Io {
                    what: "reading the temporary file of object indices".into(),
                    source: std::io::Error::other(format!("object {o} of {n_objects}")),
                })?;
                nb[8 * k..8 * k + 8].copy_from_slice(&slot.to_le_bytes());
                *slot = (start + k as u64) as i64;
            }
            next.seek(SeekFrom::Start(start * 8))
                .and_then(|_| next.write_all(&nb[..n * 8]))
                .map_err(io("writing the temporary file of next accesses"))?;
            end = start;
        }
        next.seek(SeekFrom::Start(0))
            .map_err(io("rewinding the temporary file of next accesses"))?;
        self.next = Some(BufReader::with_capacity(1 << 20, next));
        Ok(())
    }

    /// Sets the next-access times of a block of the streaming pass (the blocks in order).
    pub fn fill(&mut self, block: &mut Block) -> Result<(), SimError> {
        let r = self.next.as_mut().ok_or_else(|| SimError::Io {
            what: "reading next accesses before they were computed".into(),
            source: std::io::Error::other("NextAccessFile::finish was not called"),
        })?;
        let mut b = [0u8; 8];
        for slot in block.next_accesses_mut() {
            r.read_exact(&mut b)
                .map_err(io("reading the temporary file of next accesses"))?;
            *slot = i64::from_le_bytes(b);
        }
        Ok(())
    }
}

//! The `foyer` store: an in-process hybrid cache ([`foyer::HybridCache`]) — a DRAM
//! cache in front of a disk cache, the two tiers CacheLib-style benchmarks measure.
//!
//! [`FoyerStore`] owns the cache and a small multi-thread tokio runtime of its own
//! (`foyer.runtime_threads` workers) on which foyer runs every background task: disk
//! reads, flushes to disk, block reclaiming. Sessions share the cache. A key maps to
//! one value: a blob's bytes verbatim, otherwise the YCSB single-value encoding of the
//! record. A read of an absent or evicted key is [`Outcome::Miss`]; an update reads,
//! merges and writes back (a blob update replaces the value if the key is present).
//! The cache cannot scan, and has no per-entry expiry: [`kvlab_core::Request::ttl_s`]
//! is ignored.
//!
//! **Tiers.** An entry is written to DRAM; with the default write policy it goes to
//! disk when DRAM evicts it (`foyer.write_policy=insertion` writes every insert to disk
//! too). A read is served from DRAM, else from the disk tier, which puts the entry back
//! in DRAM. kvlab counts each read by where foyer says the entry came from
//! ([`foyer::Source`] of the returned entry): `dram_hits`, `disk_hits` (including
//! entries still in foyer's write buffer on their way to disk), `misses`.
//!
//! **The session future** awaits foyer's lookups. A DRAM hit is ready at once; a disk
//! lookup runs on the store's runtime and wakes the session through its waker, so the
//! future needs no tokio context and may be polled by any executor — a runtime's
//! `block_on`, or [`kvlab_core::block_on`] (which spins while a disk read is in
//! flight). Nothing is spawned on the caller's runtime. Opening and closing wait for
//! tasks run on the store's own runtime, never with a nested `block_on`, so they may be
//! called from inside another runtime too.
//!
//! **Capacities are in bytes.** A DRAM entry weighs its key plus value length, as in
//! the `moka` store. The disk tier is foyer's block engine: entries are packed into
//! blocks of `foyer.block_size` (the unit of disk eviction and the largest entry the
//! disk tier can hold) on files in `foyer.disk_path`.

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use foyer::{
    BlockEngineConfig, DeviceBuilder, Event, EventListener, EvictionConfig, FifoConfig,
    FsDeviceBuilder, HybridCache, HybridCachePolicy, LfuConfig, LruConfig, RecoverMode,
    S3FifoConfig, SieveConfig, Source, Spawner, Statistics, StorageFilter, StorageFilterCondition,
    StorageFilterResult,
};
use kvlab_core::inline::merge_update;
use kvlab_core::{
    Batch, Capabilities, OpKind, Outcome, Record, Request, Session, StatValue, Store, StoreError,
    StoreErrorKind, StoreStats,
};

use crate::StoreOptions;

/// Option names `foyer.*` that the store understands (after the `foyer.` prefix).
pub const OPTION_NAMES: &[&str] = &[
    "memory",
    "disk_path",
    "disk_size",
    "block_size",
    "admission",
    "eviction",
    "write_policy",
    "shards",
    "flushers",
    "reclaimers",
    "buffer_pool_size",
    "direct_io",
    "recover",
    "flush_on_close",
    "destroy_on_open",
    "runtime_threads",
];

const EVICTIONS: &[&str] = &["lfu", "lru", "s3fifo", "fifo", "sieve"];
const WRITE_POLICIES: &[&str] = &["eviction", "insertion"];
const RECOVER_MODES: &[&str] = &["none", "quiet", "strict"];

/// Which entries DRAM hands to the disk tier may be written to disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Every entry (foyer's default).
    All,
    /// At most this many bytes per second (a token bucket holding one second's worth);
    /// entries over the budget are dropped instead of written.
    Rated {
        /// Admitted bytes per second.
        bytes_per_s: u64,
    },
}

impl Admission {
    /// Parses `all` or `rated:<size>` (bytes per second, e.g. `rated:64MiB`).
    pub fn parse(text: &str) -> Option<Admission> {
        let t = text.trim().to_ascii_lowercase();
        if t == "all" {
            return Some(Admission::All);
        }
        let rate = kvlab_core::parse_bytes(t.strip_prefix("rated:")?)?;
        (rate > 0).then_some(Admission::Rated { bytes_per_s: rate })
    }
}

impl std::fmt::Display for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Admission::All => f.write_str("all"),
            Admission::Rated { bytes_per_s } => write!(f, "rated:{bytes_per_s}"),
        }
    }
}

/// Effective foyer options, every default filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoyerConfig {
    /// DRAM tier capacity in bytes of keys plus values (default 256 MiB; the CLI's
    /// `--cache-size` sets it).
    pub memory_bytes: u64,
    /// Directory of the disk tier's files (the CLI's `--disk-path`); `None` runs DRAM
    /// only (default none).
    pub disk_path: Option<PathBuf>,
    /// Disk tier capacity in bytes (default 1 GiB; the CLI's `--disk-size`).
    pub disk_size_bytes: u64,
    /// Disk block size in bytes: the unit of disk eviction and the largest entry the
    /// disk tier holds (default 16 MiB, foyer's default).
    pub block_size_bytes: u64,
    /// Disk admission (default all).
    pub admission: Admission,
    /// DRAM eviction policy: `lfu` (w-TinyLFU, foyer's default), `lru`, `s3fifo`,
    /// `fifo` or `sieve`.
    pub eviction: String,
    /// When entries are written to disk: on DRAM `eviction` (default) or on
    /// `insertion`.
    pub write_policy: String,
    /// DRAM cache shards, each with its own lock (default 8, foyer's default).
    pub shards: u64,
    /// Disk flusher tasks: blocks written concurrently (default 1).
    pub flushers: u64,
    /// Disk reclaimer tasks: blocks reclaimed concurrently (default 1).
    pub reclaimers: u64,
    /// Flush buffer bytes shared by the flushers; entries beyond it are dropped
    /// (default 16 MiB).
    pub buffer_pool_size_bytes: u64,
    /// Open the disk files with O_DIRECT (default false).
    pub direct_io: bool,
    /// Recover the disk tier left by a previous run: `none` (default: start cold),
    /// `quiet` (skip bad entries) or `strict` (fail on them). Recovery keeps a
    /// tombstone log so deletes survive a reopen.
    pub recover: String,
    /// Write every DRAM entry to disk when the store closes (default false).
    pub flush_on_close: bool,
    /// Delete the disk tier's files (`foyer-*` in `disk_path`) before opening
    /// (default false).
    pub destroy_on_open: bool,
    /// Worker threads of the store's tokio runtime (default 2).
    pub runtime_threads: u64,
}

fn positive(name: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).ok().filter(|v| *v > 0).ok_or_else(|| {
        StoreError::new(
            StoreErrorKind::Config,
            format!("option `foyer.{name}`: `{value}` is not a positive integer"),
        )
    })
}

fn config_error(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Config, message)
}

impl FoyerConfig {
    /// Reads `foyer.*` options.
    pub fn from_options(mut o: StoreOptions) -> Result<FoyerConfig, StoreError> {
        let disk_path = o.string("disk_path", "");
        let admission_text = o.string("admission", "all");
        let admission = Admission::parse(&admission_text).ok_or_else(|| {
            config_error(format!(
                "option `foyer.admission`: `{admission_text}` is not `all` or \
                 `rated:<bytes per second>` (e.g. rated:64MiB)"
            ))
        })?;
        let config = FoyerConfig {
            memory_bytes: o.size("memory", 256 << 20)?,
            disk_path: (!disk_path.is_empty()).then(|| PathBuf::from(disk_path)),
            disk_size_bytes: o.size("disk_size", 1 << 30)?,
            block_size_bytes: o.size("block_size", 16 << 20)?,
            admission,
            eviction: o.choice("eviction", EVICTIONS, "lfu")?,
            write_policy: o.choice("write_policy", WRITE_POLICIES, "eviction")?,
            shards: positive("shards", o.int("shards", 8)?)?,
            flushers: positive("flushers", o.int("flushers", 1)?)?,
            reclaimers: positive("reclaimers", o.int("reclaimers", 1)?)?,
            buffer_pool_size_bytes: o.size("buffer_pool_size", 16 << 20)?,
            direct_io: o.bool("direct_io", false)?,
            recover: o.choice("recover", RECOVER_MODES, "none")?,
            flush_on_close: o.bool("flush_on_close", false)?,
            destroy_on_open: o.bool("destroy_on_open", false)?,
            runtime_threads: positive("runtime_threads", o.int("runtime_threads", 2)?)?,
        };
        o.finish(OPTION_NAMES)?;
        if config.memory_bytes == 0 {
            return Err(config_error(
                "option `foyer.memory`: `0` is not a positive size in bytes".into(),
            ));
        }
        if config.block_size_bytes < 4096 {
            return Err(config_error(format!(
                "option `foyer.block_size`: `{}` is not a size of at least 4KiB",
                config.block_size_bytes
            )));
        }
        if config.disk_path.is_some() && config.disk_size_bytes < 2 * config.block_size_bytes {
            return Err(config_error(format!(
                "option `foyer.disk_size`: {} bytes hold fewer than 2 blocks of \
                 `foyer.block_size` = {} bytes; the disk tier needs a spare block to reclaim",
                config.disk_size_bytes, config.block_size_bytes
            )));
        }
        Ok(config)
    }

    fn to_stats(&self) -> StoreStats {
        let path = match &self.disk_path {
            Some(p) => p.display().to_string(),
            None => String::new(),
        };
        vec![
            ("memory_bytes".into(), self.memory_bytes.into()),
            ("disk_path".into(), path.into()),
            ("disk_size_bytes".into(), self.disk_size_bytes.into()),
            ("block_size_bytes".into(), self.block_size_bytes.into()),
            ("admission".into(), self.admission.to_string().into()),
            ("eviction".into(), self.eviction.clone().into()),
            ("write_policy".into(), self.write_policy.clone().into()),
            ("shards".into(), self.shards.into()),
            ("flushers".into(), self.flushers.into()),
            ("reclaimers".into(), self.reclaimers.into()),
            (
                "buffer_pool_size_bytes".into(),
                self.buffer_pool_size_bytes.into(),
            ),
            ("direct_io".into(), self.direct_io.into()),
            ("recover".into(), self.recover.clone().into()),
            ("flush_on_close".into(), self.flush_on_close.into()),
            ("runtime_threads".into(), self.runtime_threads.into()),
        ]
    }
}

/// The cache type a [`FoyerStore`] holds: raw key bytes to stored value bytes.
pub type FoyerCache = HybridCache<Vec<u8>, Vec<u8>>;

/// Counters of one session. Only that session's thread writes them (a plain load and
/// store, no locked read-modify-write); [`FoyerStore::stats`] sums every session's.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Tally {
    dram_hits: AtomicU64,
    disk_hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
    deletes: AtomicU64,
}

#[inline]
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Entries DRAM evicted, counted by foyer's event listener.
#[derive(Debug, Default)]
struct DramEvictions {
    count: AtomicU64,
    bytes: AtomicU64,
}

impl EventListener for DramEvictions {
    type Key = Vec<u8>;
    type Value = Vec<u8>;

    fn on_leave(&self, reason: Event, key: &Vec<u8>, value: &Vec<u8>) {
        if reason == Event::Evict {
            self.count.fetch_add(1, Ordering::Relaxed);
            let bytes = (key.len() + value.len()) as u64;
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}

/// The disk admission decision, and the bytes it admitted and rejected (foyer's
/// estimated serialized sizes of key and value, which the write amplification divides
/// by).
#[derive(Debug)]
struct AdmissionGate {
    /// `(last refill, tokens in bytes)` of the rate limit, when there is one.
    bucket: Option<Mutex<(Instant, f64)>>,
    bytes_per_s: f64,
    admitted_bytes: AtomicU64,
    rejected_bytes: AtomicU64,
}

impl AdmissionGate {
    fn new(admission: Admission) -> AdmissionGate {
        let bytes_per_s = match admission {
            Admission::All => 0.0,
            Admission::Rated { bytes_per_s } => bytes_per_s as f64,
        };
        AdmissionGate {
            bucket: match admission {
                Admission::All => None,
                Admission::Rated { .. } => Some(Mutex::new((Instant::now(), bytes_per_s))),
            },
            bytes_per_s,
            admitted_bytes: AtomicU64::new(0),
            rejected_bytes: AtomicU64::new(0),
        }
    }

    /// Takes `bytes` from the bucket at time `now`, if it holds that many.
    fn admit(&self, bytes: usize, now: Instant) -> bool {
        let Some(bucket) = &self.bucket else {
            return true;
        };
        let mut bucket = bucket.lock().expect("no thread panics holding the bucket");
        let refill = now.saturating_duration_since(bucket.0).as_secs_f64() * self.bytes_per_s;
        let tokens = (bucket.1 + refill).min(self.bytes_per_s);
        *bucket = (now, tokens);
        if tokens >= bytes as f64 {
            bucket.1 -= bytes as f64;
            true
        } else {
            false
        }
    }
}

/// The [`StorageFilterCondition`] handed to foyer, sharing the gate with the store.
#[derive(Debug)]
struct GateCondition(Arc<AdmissionGate>);

impl StorageFilterCondition for GateCondition {
    fn filter(
        &self,
        _: &Arc<Statistics>,
        _hash: u64,
        estimated_size: usize,
    ) -> StorageFilterResult {
        let gate = &self.0;
        if gate.admit(estimated_size, Instant::now()) {
            gate.admitted_bytes
                .fetch_add(estimated_size as u64, Ordering::Relaxed);
            StorageFilterResult::Admit
        } else {
            gate.rejected_bytes
                .fetch_add(estimated_size as u64, Ordering::Relaxed);
            StorageFilterResult::Reject
        }
    }
}

/// Runs `task` on the store's runtime and blocks the calling thread until it is done.
///
/// Unlike `Runtime::block_on` this works from inside another runtime too (the task
/// runs on the store's worker threads; the caller only waits on a channel).
fn run_on<T: Send + 'static>(
    spawner: &Spawner,
    task: impl Future<Output = T> + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let _handle = spawner.spawn(async move {
        // The receiver waits below, so the send succeeds.
        let _ = tx.send(task.await);
    });
    rx.recv()
        .expect("the store's runtime runs its tasks to completion")
}

fn io_err(context: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::new(StoreErrorKind::Io, format!("{context}: {e}"))
}

/// An open foyer hybrid cache and the runtime its background tasks run on.
pub struct FoyerStore {
    cache: FoyerCache,
    spawner: Spawner,
    evictions: Arc<DramEvictions>,
    gate: Arc<AdmissionGate>,
    tallies: crate::tally::Tallies<Tally>,
    config: FoyerConfig,
}

impl std::fmt::Debug for FoyerStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoyerStore")
            .field("config", &self.config)
            .finish()
    }
}

impl FoyerStore {
    /// Starts the store's runtime and opens the cache described by `config`, creating
    /// the disk directory if missing.
    pub fn open(config: FoyerConfig) -> Result<FoyerStore, StoreError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.runtime_threads as usize)
            .thread_name("kvlab-foyer")
            .enable_all()
            .build()
            .map_err(|e| io_err("starting the foyer runtime", e))?;
        // The spawner owns the runtime: it lives as long as the cache's last handle.
        let spawner = Spawner::from(runtime);

        let evictions = Arc::new(DramEvictions::default());
        let gate = Arc::new(AdmissionGate::new(config.admission));
        let eviction: EvictionConfig = match config.eviction.as_str() {
            "lru" => LruConfig::default().into(),
            "s3fifo" => S3FifoConfig::default().into(),
            "fifo" => FifoConfig::default().into(),
            "sieve" => SieveConfig.into(),
            _ => LfuConfig::default().into(),
        };
        let mut builder = HybridCache::builder()
            .with_name("kvlab")
            .with_policy(match config.write_policy.as_str() {
                "insertion" => HybridCachePolicy::WriteOnInsertion,
                _ => HybridCachePolicy::WriteOnEviction,
            })
            .with_flush_on_close(config.flush_on_close)
            .with_event_listener(evictions.clone())
            .memory(config.memory_bytes as usize)
            .with_shards(config.shards as usize)
            .with_eviction_config(eviction)
            .with_weighter(|k: &Vec<u8>, v: &Vec<u8>| k.len() + v.len())
            .storage()
            .with_spawner(spawner.clone());

        if let Some(dir) = &config.disk_path {
            if config.destroy_on_open {
                destroy_disk_files(dir)?;
            }
            let device = FsDeviceBuilder::new(dir)
                .with_capacity(config.disk_size_bytes as usize)
                .with_direct(config.direct_io)
                .build()
                .map_err(|e| io_err(&format!("opening the foyer disk at {}", dir.display()), e))?;
            let recover = match config.recover.as_str() {
                "quiet" => RecoverMode::Quiet,
                "strict" => RecoverMode::Strict,
                _ => RecoverMode::None,
            };
            let engine = BlockEngineConfig::new(device)
                .with_block_size(config.block_size_bytes as usize)
                .with_flushers(config.flushers as usize)
                .with_reclaimers(config.reclaimers as usize)
                .with_buffer_pool_size(config.buffer_pool_size_bytes as usize)
                .with_admission_filter(
                    StorageFilter::new().with_condition(GateCondition(gate.clone())),
                )
                .with_tombstone_log(recover != RecoverMode::None);
            builder = builder
                .with_engine_config(engine)
                .with_recover_mode(recover);
        }

        let cache = run_on(&spawner, builder.build()).map_err(|e| {
            let place = match &config.disk_path {
                Some(dir) => format!(" with its disk at {}", dir.display()),
                None => String::new(),
            };
            io_err(&format!("opening the foyer cache{place}"), e)
        })?;
        Ok(FoyerStore {
            cache,
            spawner,
            evictions,
            gate,
            tallies: crate::tally::Tallies::default(),
            config,
        })
    }

    /// The effective configuration.
    pub fn config(&self) -> &FoyerConfig {
        &self.config
    }

    /// The underlying hybrid cache.
    pub fn cache(&self) -> &FoyerCache {
        &self.cache
    }

    fn sum(&self, field: impl Fn(&Tally) -> &AtomicU64) -> u64 {
        self.tallies.sum(field)
    }
}

/// Deletes foyer's files (named `foyer-*`) in `dir`, leaving anything else alone.
fn destroy_disk_files(dir: &std::path::Path) -> Result<(), StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(&format!("listing {}", dir.display()), e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_err(&format!("listing {}", dir.display()), e))?;
        if entry.file_name().to_string_lossy().starts_with("foyer-") {
            let path = entry.path();
            std::fs::remove_file(&path)
                .map_err(|e| io_err(&format!("deleting {}", path.display()), e))?;
        }
    }
    Ok(())
}

impl Drop for FoyerStore {
    /// Closes the cache: waits for its flush and reclaim tasks (and, with
    /// `foyer.flush_on_close`, writes DRAM to disk) on the store's runtime.
    fn drop(&mut self) {
        let cache = self.cache.clone();
        if let Err(e) = run_on(&self.spawner, async move { cache.close().await }) {
            tracing::warn!("closing the foyer cache: {e}");
        }
    }
}

impl Store for FoyerStore {
    type Session = FoyerSession;

    fn name(&self) -> &'static str {
        "foyer"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            needs_runtime: true,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<FoyerSession, StoreError> {
        let tally = self.tallies.register();
        Ok(FoyerSession {
            cache: self.cache.clone(),
            tally,
            current: Record::new(),
        })
    }

    fn options(&self) -> StoreStats {
        self.config.to_stats()
    }

    fn stats(&self) -> StoreStats {
        let dram_hits = self.sum(|t| &t.dram_hits);
        let disk_hits = self.sum(|t| &t.disk_hits);
        let misses = self.sum(|t| &t.misses);
        let ratio = |part: u64, whole: u64| {
            StatValue::Float(if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            })
        };
        let reads = dram_hits + disk_hits + misses;
        let memory = self.cache.memory();
        let mut out: StoreStats = vec![
            ("dram_hits".into(), dram_hits.into()),
            ("disk_hits".into(), disk_hits.into()),
            ("misses".into(), misses.into()),
            ("hit_ratio".into(), ratio(dram_hits + disk_hits, reads)),
            ("dram_hit_ratio".into(), ratio(dram_hits, reads)),
            ("inserts".into(), self.sum(|t| &t.inserts).into()),
            ("deletes".into(), self.sum(|t| &t.deletes).into()),
            ("memory_usage_bytes".into(), (memory.usage() as u64).into()),
            (
                "memory_capacity_bytes".into(),
                (memory.capacity() as u64).into(),
            ),
            (
                "dram_evictions".into(),
                self.evictions.count.load(Ordering::Relaxed).into(),
            ),
            (
                "dram_evicted_bytes".into(),
                self.evictions.bytes.load(Ordering::Relaxed).into(),
            ),
        ];
        if self.cache.is_hybrid() {
            let disk = self.cache.statistics();
            let admitted = self.gate.admitted_bytes.load(Ordering::Relaxed);
            let written = disk.disk_write_bytes() as u64;
            let device = self.cache.storage().device();
            out.extend([
                (
                    "disk_capacity_bytes".into(),
                    (device.capacity() as u64).into(),
                ),
                ("disk_admitted_bytes".into(), admitted.into()),
                (
                    "disk_rejected_bytes".into(),
                    self.gate.rejected_bytes.load(Ordering::Relaxed).into(),
                ),
                ("disk_write_bytes".into(), written.into()),
                (
                    "disk_read_bytes".into(),
                    (disk.disk_read_bytes() as u64).into(),
                ),
                (
                    "disk_write_ios".into(),
                    (disk.disk_write_ios() as u64).into(),
                ),
                ("disk_read_ios".into(), (disk.disk_read_ios() as u64).into()),
                ("write_amplification".into(), ratio(written, admitted)),
            ]);
        }
        out
    }

    /// Waits until the entries queued for disk are written (and blocks reclaimed).
    fn flush(&self) -> Result<(), StoreError> {
        let storage = self.cache.storage().clone();
        run_on(&self.spawner, async move { storage.wait().await });
        Ok(())
    }
}

/// A worker's handle on a [`FoyerStore`]'s shared cache.
pub struct FoyerSession {
    cache: FoyerCache,
    tally: Arc<Tally>,
    current: Record,
}

impl std::fmt::Debug for FoyerSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoyerSession").finish_non_exhaustive()
    }
}

fn written(req: &Request) -> Outcome {
    Outcome::Written {
        bytes: req.written_bytes(),
    }
}

impl FoyerSession {
    /// Looks `key` up in both tiers, counting where a hit came from.
    async fn lookup(
        &self,
        key: &[u8],
    ) -> Result<Option<foyer::HybridCacheEntry<Vec<u8>, Vec<u8>>>, StoreError> {
        match self.cache.get(key).await {
            Ok(Some(entry)) => {
                match entry.source() {
                    Source::Disk => bump(&self.tally.disk_hits),
                    Source::Memory | Source::Outer => bump(&self.tally.dram_hits),
                }
                Ok(Some(entry))
            }
            Ok(None) => {
                bump(&self.tally.misses);
                Ok(None)
            }
            Err(e) => Err(io_err("foyer get", e)),
        }
    }

    fn put(&self, req: &Request, value: Vec<u8>) {
        drop(self.cache.insert(req.key.clone(), value));
        bump(&self.tally.inserts);
    }

    async fn run(&mut self, req: &Request, reply: &mut Record) -> Result<Outcome, StoreError> {
        match req.kind {
            OpKind::Read if req.is_multi_read() => Err(StoreError::multi_read_unsupported("foyer")),
            OpKind::Read => match self.lookup(&req.key).await? {
                Some(entry) => Ok(Outcome::Hit {
                    bytes: req.decode_value(entry.value(), reply)?,
                }),
                None => Ok(Outcome::Miss),
            },
            OpKind::Insert => {
                let mut value = Vec::new();
                req.encode_value(&mut value);
                self.put(req, value);
                Ok(written(req))
            }
            OpKind::Update if req.value.is_blob() => {
                // A blob update replaces the value, if there is one.
                if self
                    .cache
                    .get(req.key.as_slice())
                    .await
                    .map_err(|e| io_err("foyer get for update", e))?
                    .is_none()
                {
                    return Ok(Outcome::Miss);
                }
                self.put(req, req.value.blob().to_vec());
                Ok(written(req))
            }
            OpKind::Update => {
                // Read, merge the updated fields, write back.
                let entry = self
                    .cache
                    .get(req.key.as_slice())
                    .await
                    .map_err(|e| io_err("foyer get for update", e))?;
                let Some(entry) = entry else {
                    return Ok(Outcome::Miss);
                };
                let mut value = Vec::new();
                merge_update(entry.value(), req, &mut self.current, &mut value)?;
                drop(entry);
                self.put(req, value);
                Ok(written(req))
            }
            OpKind::Delete => {
                self.cache.remove(req.key.as_slice());
                bump(&self.tally.deletes);
                Ok(Outcome::Deleted)
            }
            OpKind::Scan => Err(StoreError::new(
                StoreErrorKind::Unsupported,
                "foyer is a hash cache and cannot scan",
            )),
            OpKind::ReadModifyWrite => Err(StoreError::read_modify_write_unsplit()),
        }
    }
}

impl Session for FoyerSession {
    /// Awaits foyer's lookups; needs no tokio context (see the module docs).
    async fn execute(&mut self, batch: &mut Batch) {
        for slot in batch.slots_mut() {
            let result = self.run(&slot.request, &mut slot.reply).await;
            slot.complete(result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_parses_all_and_rated() {
        assert_eq!(Admission::parse("all"), Some(Admission::All));
        assert_eq!(
            Admission::parse("rated:64MiB"),
            Some(Admission::Rated {
                bytes_per_s: 64 << 20
            })
        );
        assert_eq!(Admission::parse("rated:0"), None);
        assert_eq!(Admission::parse("sometimes"), None);
    }

    #[test]
    fn a_rated_gate_admits_at_most_one_second_of_bytes() {
        let gate = AdmissionGate::new(Admission::Rated { bytes_per_s: 1000 });
        let start = gate.bucket.as_ref().unwrap().lock().unwrap().0;
        let at = |ms: u64| start + std::time::Duration::from_millis(ms);
        // The bucket starts full: one second's 1000 bytes, then nothing is left.
        assert!(gate.admit(600, at(0)));
        assert!(gate.admit(400, at(0)));
        assert!(!gate.admit(1, at(0)));
        // Half a second refills 500 bytes; the bucket never holds more than 1000.
        assert!(!gate.admit(501, at(500)));
        assert!(gate.admit(500, at(500)));
        assert!(!gate.admit(1001, at(60_000)));
        assert!(gate.admit(1000, at(60_000)));
        assert!(AdmissionGate::new(Admission::All).admit(usize::MAX, at(0)));
    }
}

//! The `moka` store: an in-process, in-memory cache ([`moka::sync::Cache`], a
//! concurrent W-TinyLFU cache after Java's Caffeine).
//!
//! [`MokaStore`] owns one cache that every [`MokaSession`] shares (the cache is
//! internally concurrent); a session executes its batch synchronously. A key maps to
//! one value: a blob's bytes verbatim, otherwise the YCSB single-value encoding of the
//! record ([`kvlab_core::Request::encode_value`]). A read of an absent, evicted or
//! expired key is [`kvlab_core::Outcome::Miss`]. An update reads the value, merges the updated
//! fields and writes it back (a blob update replaces the value if the key is present).
//! The cache cannot scan.
//!
//! **Capacity is in bytes.** Each entry weighs its key length plus its stored value
//! length, with no per-entry overhead added: the same accounting as the `foyer` store,
//! so hit ratios at one `--cache-size` compare across caches. The process uses more
//! memory than the capacity by moka's own per-entry bookkeeping (hash table slot,
//! access-order deque node, frequency sketch), which this weight does not count.
//!
//! **Expiry.** `moka.ttl_s` gives every entry a time to live. With
//! `moka.per_entry_ttl=true`, a write whose [`kvlab_core::Request::ttl_s`] is non-zero
//! uses that instead (a per-entry [`moka::Expiry`]); without it, per-write times to
//! live are ignored, because moka's per-entry expiry slows every read of a large
//! cache. A write resets the entry's time to live; a read does not.
//!
//! **Statistics** count hits, misses, inserts and deletes per session (each session
//! owns its counters, so counting costs no shared cache line) and evictions by cause
//! through moka's eviction listener. moka applies evictions lazily, in maintenance
//! tasks that run on later operations; [`MokaStore::stats`] and [`Store::flush`] run
//! the pending tasks first, so the figures they see are settled.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kvlab_core::inline::{execute_batch, Engine, Scratch};
use kvlab_core::{
    Batch, Capabilities, Request, Session, StatValue, Store, StoreError, StoreErrorKind, StoreStats,
};
use moka::notification::RemovalCause;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;
use moka::Expiry;

use crate::StoreOptions;

/// Option names `moka.*` that the store understands (after the `moka.` prefix).
pub const OPTION_NAMES: &[&str] = &[
    "capacity",
    "ttl_s",
    "per_entry_ttl",
    "eviction",
    "initial_capacity",
];

const EVICTIONS: &[&str] = &["tinylfu", "lru"];

/// Effective moka options, every default filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MokaConfig {
    /// Cache capacity in bytes of keys plus values (default 256 MiB; the CLI's
    /// `--cache-size` sets it).
    pub capacity_bytes: u64,
    /// Time to live of every entry in seconds; 0 = none (default 0).
    pub ttl_s: u32,
    /// Honour each write's own [`kvlab_core::Request::ttl_s`] (default false: it is
    /// ignored). Off by default because moka's per-entry expiry costs reads about a
    /// tenth of their throughput on a large cache (see `docs/stores-caches.md`).
    pub per_entry_ttl: bool,
    /// `tinylfu` (W-TinyLFU admission and eviction, moka's default) or `lru`.
    pub eviction: String,
    /// Entries the hash table is sized for up front; 0 = moka's default (default 0).
    pub initial_capacity: u64,
}

impl MokaConfig {
    /// Reads `moka.*` options.
    pub fn from_options(mut o: StoreOptions) -> Result<MokaConfig, StoreError> {
        let capacity_bytes = o.size("capacity", 256 << 20)?;
        let ttl_s = o.int("ttl_s", 0)?;
        let config = MokaConfig {
            capacity_bytes,
            ttl_s: u32::try_from(ttl_s).map_err(|_| {
                StoreError::new(
                    StoreErrorKind::Config,
                    format!("option `moka.ttl_s`: `{ttl_s}` is not a number of seconds in 0..=4294967295"),
                )
            })?,
            per_entry_ttl: o.bool("per_entry_ttl", false)?,
            eviction: o.choice("eviction", EVICTIONS, "tinylfu")?,
            initial_capacity: o.size("initial_capacity", 0)?,
        };
        o.finish(OPTION_NAMES)?;
        if config.capacity_bytes == 0 {
            return Err(StoreError::new(
                StoreErrorKind::Config,
                "option `moka.capacity`: `0` is not a positive size in bytes",
            ));
        }
        Ok(config)
    }

    fn to_stats(&self) -> StoreStats {
        vec![
            ("capacity_bytes".into(), self.capacity_bytes.into()),
            ("ttl_s".into(), u64::from(self.ttl_s).into()),
            ("per_entry_ttl".into(), self.per_entry_ttl.into()),
            ("eviction".into(), self.eviction.clone().into()),
            ("initial_capacity".into(), self.initial_capacity.into()),
        ]
    }
}

/// A cached value: the stored bytes and the time to live the write asked for.
#[derive(Clone, Debug)]
pub struct CachedValue {
    /// The stored value (blob bytes or encoded record).
    pub bytes: Arc<[u8]>,
    /// The write's [`kvlab_core::Request::ttl_s`]; 0 = the store's default.
    pub ttl_s: u32,
}

/// The cache type a [`MokaStore`] holds: raw key bytes to [`CachedValue`].
pub type MokaCache = Cache<Box<[u8]>, CachedValue>;

/// The weight of an entry: key plus value bytes, saturated to moka's `u32` weights.
fn weigh(key: &[u8], value: &CachedValue) -> u32 {
    u32::try_from(key.len() + value.bytes.len()).unwrap_or(u32::MAX)
}

/// Per-entry time to live: the write's own `ttl_s`, else the store's default.
struct TimeToLive {
    default: Option<Duration>,
}

impl TimeToLive {
    fn of(&self, value: &CachedValue) -> Option<Duration> {
        if value.ttl_s > 0 {
            Some(Duration::from_secs(u64::from(value.ttl_s)))
        } else {
            self.default
        }
    }
}

impl Expiry<Box<[u8]>, CachedValue> for TimeToLive {
    fn expire_after_create(
        &self,
        _key: &Box<[u8]>,
        value: &CachedValue,
        _created_at: Instant,
    ) -> Option<Duration> {
        self.of(value)
    }

    fn expire_after_update(
        &self,
        _key: &Box<[u8]>,
        value: &CachedValue,
        _updated_at: Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        self.of(value)
    }
}

/// Counters of one session. Only that session's thread writes them (a plain load and
/// store, no locked read-modify-write); [`MokaStore::stats`] sums every session's.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Tally {
    hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
    deletes: AtomicU64,
}

#[inline]
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Removals reported by moka's eviction listener.
#[derive(Debug, Default)]
struct Removals {
    evictions: AtomicU64,
    evicted_bytes: AtomicU64,
    expirations: AtomicU64,
}

/// An open moka cache.
pub struct MokaStore {
    cache: MokaCache,
    removals: Arc<Removals>,
    tallies: crate::tally::Tallies<Tally>,
    config: MokaConfig,
}

impl std::fmt::Debug for MokaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MokaStore")
            .field("config", &self.config)
            .finish()
    }
}

impl MokaStore {
    /// Builds an empty cache described by `config`.
    pub fn open(config: MokaConfig) -> Result<MokaStore, StoreError> {
        let removals = Arc::new(Removals::default());
        let listener = Arc::clone(&removals);
        let mut builder = MokaCache::builder()
            .max_capacity(config.capacity_bytes)
            .weigher(|k, v| weigh(k, v))
            .eviction_policy(match config.eviction.as_str() {
                "lru" => EvictionPolicy::lru(),
                _ => EvictionPolicy::tiny_lfu(),
            })
            .eviction_listener(move |key, value: CachedValue, cause| match cause {
                RemovalCause::Size => {
                    listener.evictions.fetch_add(1, Ordering::Relaxed);
                    let bytes = (key.len() + value.bytes.len()) as u64;
                    listener.evicted_bytes.fetch_add(bytes, Ordering::Relaxed);
                }
                RemovalCause::Expired => {
                    listener.expirations.fetch_add(1, Ordering::Relaxed);
                }
                RemovalCause::Explicit | RemovalCause::Replaced => {}
            });
        let default_ttl = (config.ttl_s > 0).then(|| Duration::from_secs(u64::from(config.ttl_s)));
        if config.per_entry_ttl {
            builder = builder.expire_after(TimeToLive {
                default: default_ttl,
            });
        } else if let Some(ttl) = default_ttl {
            builder = builder.time_to_live(ttl);
        }
        if config.initial_capacity > 0 {
            builder = builder.initial_capacity(config.initial_capacity as usize);
        }
        Ok(MokaStore {
            cache: builder.build(),
            removals,
            tallies: crate::tally::Tallies::default(),
            config,
        })
    }

    /// The effective configuration.
    pub fn config(&self) -> &MokaConfig {
        &self.config
    }

    /// The underlying cache, e.g. to compare kvlab's path with direct calls.
    pub fn cache(&self) -> &MokaCache {
        &self.cache
    }

    fn sum(&self, field: impl Fn(&Tally) -> &AtomicU64) -> u64 {
        self.tallies.sum(field)
    }
}

impl Store for MokaStore {
    type Session = MokaSession;

    fn name(&self) -> &'static str {
        "moka"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ttl: self.config.per_entry_ttl,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<MokaSession, StoreError> {
        let tally = self.tallies.register();
        Ok(MokaSession {
            engine: MokaEngine {
                cache: self.cache.clone(),
                tally,
            },
            scratch: Scratch::new(),
        })
    }

    fn options(&self) -> StoreStats {
        self.config.to_stats()
    }

    fn stats(&self) -> StoreStats {
        self.cache.run_pending_tasks();
        let hits = self.sum(|t| &t.hits);
        let misses = self.sum(|t| &t.misses);
        let reads = hits + misses;
        let hit_ratio = if reads == 0 {
            0.0
        } else {
            hits as f64 / reads as f64
        };
        let r = &self.removals;
        vec![
            ("entry_count".into(), self.cache.entry_count().into()),
            (
                "weighted_size_bytes".into(),
                self.cache.weighted_size().into(),
            ),
            ("capacity_bytes".into(), self.config.capacity_bytes.into()),
            ("hits".into(), hits.into()),
            ("misses".into(), misses.into()),
            ("hit_ratio".into(), StatValue::Float(hit_ratio)),
            ("inserts".into(), self.sum(|t| &t.inserts).into()),
            ("deletes".into(), self.sum(|t| &t.deletes).into()),
            (
                "evictions".into(),
                r.evictions.load(Ordering::Relaxed).into(),
            ),
            (
                "evicted_bytes".into(),
                r.evicted_bytes.load(Ordering::Relaxed).into(),
            ),
            (
                "expirations".into(),
                r.expirations.load(Ordering::Relaxed).into(),
            ),
        ]
    }

    /// Runs moka's pending maintenance (admission, eviction, expiry), so that entry
    /// counts and evictions are settled, e.g. at the end of a load.
    fn flush(&self) -> Result<(), StoreError> {
        self.cache.run_pending_tasks();
        Ok(())
    }
}

/// A worker's handle on a [`MokaStore`]'s shared cache, run by the shared
/// embedded-store adapter ([`kvlab_core::inline`]).
pub struct MokaSession {
    engine: MokaEngine,
    scratch: Scratch,
}

/// The cache's primitives, counting reads' hits and misses, inserts and deletes in the
/// session's tally.
struct MokaEngine {
    cache: MokaCache,
    tally: Arc<Tally>,
}

impl std::fmt::Debug for MokaSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MokaSession").finish_non_exhaustive()
    }
}

impl Engine for MokaEngine {
    const NAME: &'static str = "moka";

    #[inline]
    fn read<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        match self.cache.get(key) {
            Some(value) => {
                bump(&self.tally.hits);
                Ok(Some(with(&value.bytes)))
            }
            None => {
                bump(&self.tally.misses);
                Ok(None)
            }
        }
    }

    #[inline]
    fn get<R>(
        &mut self,
        key: &[u8],
        with: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, StoreError> {
        Ok(self.cache.get(key).map(|value| with(&value.bytes)))
    }

    /// Without touching the entry's popularity.
    fn contains(&mut self, key: &[u8]) -> Result<bool, StoreError> {
        Ok(self.cache.contains_key(key))
    }

    #[inline]
    fn put(&mut self, key: &[u8], value: &[u8], req: &Request) -> Result<(), StoreError> {
        let value = CachedValue {
            bytes: Arc::from(value),
            ttl_s: req.ttl_s,
        };
        self.cache.insert(key.into(), value);
        bump(&self.tally.inserts);
        Ok(())
    }

    fn delete(&mut self, key: &[u8]) -> Result<(), StoreError> {
        self.cache.invalidate(key);
        bump(&self.tally.deletes);
        Ok(())
    }
}

impl Session for MokaSession {
    #[inline]
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        execute_batch(&mut self.engine, &mut self.scratch, batch);
        std::future::ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &str)]) -> StoreOptions {
        StoreOptions::from_strs("moka.", pairs)
    }

    #[test]
    fn options_fill_defaults_and_parse_sizes() {
        let c = MokaConfig::from_options(options(&[])).unwrap();
        assert_eq!(c.capacity_bytes, 256 << 20);
        assert_eq!((c.ttl_s, c.eviction.as_str()), (0, "tinylfu"));
        let c = MokaConfig::from_options(options(&[
            ("moka.capacity", "64MiB"),
            ("moka.eviction", "LRU"),
            ("moka.ttl_s", "30"),
        ]))
        .unwrap();
        assert_eq!(
            (c.capacity_bytes, c.eviction.as_str(), c.ttl_s),
            (64 << 20, "lru", 30)
        );
    }

    #[test]
    fn bad_ttl_and_zero_capacity_are_named() {
        let err = MokaConfig::from_options(options(&[("moka.ttl_s", "-1")])).unwrap_err();
        assert!(err.message.contains("moka.ttl_s"), "{err}");
        let err = MokaConfig::from_options(options(&[("moka.capacity", "0")])).unwrap_err();
        assert!(err.message.contains("moka.capacity"), "{err}");
    }
}

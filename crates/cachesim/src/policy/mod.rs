//! Eviction policies: the [`Policy`] trait and one module per policy.
//!
//! Each policy reproduces the eviction algorithm of the same name in libCacheSim
//! (`libCacheSim/cache/eviction/*.c`, at the commit pinned by the `libcachesim` 0.3.5
//! PyPI package), decision for decision, so that miss counts are equal; its module says
//! which upstream file it follows and where the upstream code has quirks that are kept.
//!
//! Per-object state lives in `Vec`s indexed by the object's dense index
//! ([`crate::Req::obj`]): nothing is allocated per request and no hash map is consulted on
//! the hot path.

use std::fmt;
use std::str::FromStr;

use crate::error::SimError;
use crate::trace::Req;

pub mod arc;
pub mod belady;
pub mod clock;
pub mod fifo;
pub mod gdsf;
pub mod lfu;
pub mod lfuda;
pub mod lirs;
pub mod lru;
pub mod s3fifo;
pub mod sampled_lru;
pub mod sieve;
pub mod slru;
pub mod twoq;
pub mod wtinylfu;

/// An eviction policy driven by [`crate::Simulator::access`].
///
/// The simulator calls, for every request: [`Policy::lookup`]; on a miss, if
/// [`Policy::can_insert`], [`Policy::evict`] until the object fits and then
/// [`Policy::insert`] (or, when [`Policy::insert_then_evict`], insert first and evict
/// while over capacity); finally [`Policy::end_access`]. The caller guarantees that
/// `evict` is only called while the cache holds an object, and `insert` only for an object
/// that `lookup` just reported missing.
pub trait Policy: Send {
    /// Makes room for objects `0..n_objects` (a stream meets new objects as it goes).
    /// Called only with a count above every earlier one: state sized for fewer objects
    /// is extended, never shrunk.
    fn grow(&mut self, n_objects: usize);

    /// Whether the object is resident; on a hit, updates the policy's state (recency,
    /// frequency…). Ghost entries count as misses (and may be consumed here).
    fn lookup(&mut self, req: &Req) -> bool;

    /// Whether a missed object may be inserted (by default: if it fits in the cache).
    /// Policies may evict here, as libCacheSim's LIRS does.
    fn can_insert(&mut self, req: &Req) -> bool {
        req.size <= self.capacity()
    }

    /// Objects (object mode) or bytes (byte mode) resident.
    fn occupied(&self) -> u64;

    /// The cache's capacity in objects or bytes.
    fn capacity(&self) -> u64;

    /// Evicts (at least) one object to make room for `req`.
    fn evict(&mut self, req: &Req);

    /// Inserts the missed object of `req`.
    fn insert(&mut self, req: &Req);

    /// Removes an object (op-aware deletes); false if it was not resident.
    fn remove(&mut self, obj: u32) -> bool;

    /// libCacheSim's GDSF inserts first and then evicts while over capacity (the new
    /// object may be evicted at once); every other policy evicts first.
    fn insert_then_evict(&self) -> bool {
        false
    }

    /// Called after every request (libCacheSim's LIRS bounds its stack here).
    fn end_access(&mut self) {}
}

/// A policy and its parameters, named as libCacheSim names them.
#[derive(Clone, Debug, PartialEq)]
pub enum PolicySpec {
    /// Least recently used.
    Lru,
    /// First in, first out.
    Fifo,
    /// CLOCK with an n-bit counter (`Clock`: 1 bit; `Clock2bit`: 2 bits).
    Clock {
        /// Counter bits.
        bits: u32,
    },
    /// SIEVE.
    Sieve,
    /// Least frequently used, ties by time of entering the frequency.
    Lfu,
    /// S3-FIFO (libCacheSim's current `S3FIFO.c`).
    S3Fifo {
        /// Small FIFO's share of the cache.
        small_size_ratio: f64,
        /// Ghost FIFO's size as a share of the cache.
        ghost_size_ratio: f64,
        /// Hits in the small FIFO needed to move to the main FIFO.
        move_to_main_threshold: u32,
    },
    /// Adaptive replacement cache.
    Arc,
    /// Low inter-reference recency set.
    Lirs,
    /// 2Q.
    TwoQ {
        /// Ain's share of the cache.
        ain_size_ratio: f64,
        /// Aout's size as a share of the cache.
        aout_size_ratio: f64,
    },
    /// Segmented LRU.
    Slru {
        /// Number of equal segments.
        segments: u32,
    },
    /// Window TinyLFU with an SLRU main cache.
    WTinyLfu {
        /// The window LRU's share of the cache.
        window_ratio: f64,
        /// A doorkeeper in front of the sketch (kvlab's variant; libCacheSim has none).
        doorkeeper: bool,
    },
    /// Greedy dual size frequency.
    Gdsf,
    /// LFU with dynamic aging.
    Lfuda,
    /// Belady's MIN (evicts the object requested farthest in the future).
    Belady,
    /// Redis's approximated LRU (`allkeys-lru`, `maxmemory-samples`).
    SampledLru {
        /// Keys sampled per eviction.
        samples: u32,
        /// Seed of the sampling's random source (Xoshiro256++).
        seed: u64,
    },
}

impl PolicySpec {
    /// Every policy with its default parameters.
    pub fn all() -> Vec<PolicySpec> {
        [
            "LRU",
            "FIFO",
            "Clock",
            "Clock2bit",
            "Sieve",
            "LFU",
            "S3FIFO",
            "ARC",
            "LIRS",
            "TwoQ",
            "SLRU",
            "WTinyLFU",
            "WTinyLFU-doorkeeper",
            "GDSF",
            "LFUDA",
            "Belady",
            "SampledLRU",
        ]
        .into_iter()
        .map(|n| n.parse().expect("every built-in policy name parses"))
        .collect()
    }

    /// The name in output (libCacheSim's, plus `Clock2bit` and `SampledLRU`).
    pub fn name(&self) -> String {
        match self {
            PolicySpec::Lru => "LRU".into(),
            PolicySpec::Fifo => "FIFO".into(),
            PolicySpec::Clock { bits: 1 } => "Clock".into(),
            PolicySpec::Clock { bits: 2 } => "Clock2bit".into(),
            PolicySpec::Clock { bits } => format!("Clock{bits}bit"),
            PolicySpec::Sieve => "Sieve".into(),
            PolicySpec::Lfu => "LFU".into(),
            PolicySpec::S3Fifo { .. } => "S3FIFO".into(),
            PolicySpec::Arc => "ARC".into(),
            PolicySpec::Lirs => "LIRS".into(),
            PolicySpec::TwoQ { .. } => "TwoQ".into(),
            PolicySpec::Slru { .. } => "SLRU".into(),
            PolicySpec::WTinyLfu {
                doorkeeper: false, ..
            } => "WTinyLFU".into(),
            PolicySpec::WTinyLfu {
                doorkeeper: true, ..
            } => "WTinyLFU-doorkeeper".into(),
            PolicySpec::Gdsf => "GDSF".into(),
            PolicySpec::Lfuda => "LFUDA".into(),
            PolicySpec::Belady => "Belady".into(),
            PolicySpec::SampledLru { .. } => "SampledLRU".into(),
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for PolicySpec {
    type Err = SimError;

    /// A name (any case), optionally followed by `:key=value,key=value`:
    /// `Clock:bits=3`, `S3FIFO:small=0.1,ghost=0.9,threshold=2`, `TwoQ:ain=0.25,aout=0.5`,
    /// `SLRU:segments=4`, `WTinyLFU:window=0.01,doorkeeper=true`,
    /// `SampledLRU:samples=5,seed=0`. `WTinyLFU-doorkeeper` is `WTinyLFU:doorkeeper=true`.
    fn from_str(s: &str) -> Result<PolicySpec, SimError> {
        let err = |reason: String| SimError::Policy {
            text: s.to_string(),
            reason,
        };
        let (name, params) = match s.split_once(':') {
            Some((n, p)) => (n.trim(), p.trim()),
            None => (s.trim(), ""),
        };
        let mut spec = match name.to_ascii_lowercase().as_str() {
            "lru" => PolicySpec::Lru,
            "fifo" => PolicySpec::Fifo,
            "clock" => PolicySpec::Clock { bits: 1 },
            "clock2bit" => PolicySpec::Clock { bits: 2 },
            "sieve" => PolicySpec::Sieve,
            "lfu" => PolicySpec::Lfu,
            "s3fifo" | "s3-fifo" => PolicySpec::S3Fifo {
                small_size_ratio: 0.1,
                ghost_size_ratio: 0.9,
                move_to_main_threshold: 2,
            },
            "arc" => PolicySpec::Arc,
            "lirs" => PolicySpec::Lirs,
            "twoq" | "2q" => PolicySpec::TwoQ {
                ain_size_ratio: 0.25,
                aout_size_ratio: 0.5,
            },
            "slru" => PolicySpec::Slru { segments: 4 },
            "wtinylfu" | "w-tinylfu" => PolicySpec::WTinyLfu {
                window_ratio: 0.01,
                doorkeeper: false,
            },
            "wtinylfu-doorkeeper" => PolicySpec::WTinyLfu {
                window_ratio: 0.01,
                doorkeeper: true,
            },
            "gdsf" => PolicySpec::Gdsf,
            "lfuda" => PolicySpec::Lfuda,
            "belady" => PolicySpec::Belady,
            "sampledlru" | "redis-lru" => PolicySpec::SampledLru {
                samples: 5,
                seed: 0,
            },
            _ => return Err(err("unknown policy name".into())),
        };
        for kv in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| err(format!("parameter {kv:?} is not key=value")))?;
            let (k, v) = (k.trim(), v.trim());
            let f = || {
                v.parse::<f64>()
                    .map_err(|_| err(format!("{k}={v}: not a number")))
            };
            let u = || {
                v.parse::<u64>()
                    .map_err(|_| err(format!("{k}={v}: not an integer")))
            };
            let u32_ = || {
                u().and_then(|x| u32::try_from(x).map_err(|_| err(format!("{k}={v}: too large"))))
            };
            match (&mut spec, k) {
                (PolicySpec::Clock { bits }, "bits") => *bits = u32_()?.clamp(1, 30),
                (
                    PolicySpec::S3Fifo {
                        small_size_ratio, ..
                    },
                    "small",
                ) => *small_size_ratio = f()?,
                (
                    PolicySpec::S3Fifo {
                        ghost_size_ratio, ..
                    },
                    "ghost",
                ) => *ghost_size_ratio = f()?,
                (
                    PolicySpec::S3Fifo {
                        move_to_main_threshold,
                        ..
                    },
                    "threshold",
                ) => *move_to_main_threshold = u32_()?,
                (PolicySpec::TwoQ { ain_size_ratio, .. }, "ain") => *ain_size_ratio = f()?,
                (
                    PolicySpec::TwoQ {
                        aout_size_ratio, ..
                    },
                    "aout",
                ) => *aout_size_ratio = f()?,
                (PolicySpec::Slru { segments }, "segments") => *segments = u32_()?.max(1),
                (PolicySpec::WTinyLfu { window_ratio, .. }, "window") => *window_ratio = f()?,
                (PolicySpec::WTinyLfu { doorkeeper, .. }, "doorkeeper") => {
                    *doorkeeper = matches!(v, "1" | "true" | "yes" | "on")
                }
                (PolicySpec::SampledLru { samples, .. }, "samples") => *samples = u32_()?.max(1),
                (PolicySpec::SampledLru { seed, .. }, "seed") => *seed = u()?,
                _ => return Err(err(format!("{name} has no parameter {k:?}"))),
            }
        }
        Ok(spec)
    }
}

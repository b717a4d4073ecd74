//! YCSB-compatible workloads for kvlab.
//!
//! The main types and how they connect:
//!
//! - [`Properties`] holds `key=value` settings from YCSB property files
//!   (`workloads/ycsb/workloada` …) and `-p` overrides, each with its [`Origin`].
//! - [`CoreWorkload::from_properties`] validates every property (unknown names, bad
//!   numbers and enumeration values are errors that point at `file:line`) into a
//!   workload shared by all workers behind an `Arc`.
//! - Each worker then asks it for a [`LoadWorker`] (its slice of the inserts of the load
//!   phase) or a [`RunWorker`] (the transaction phase), and calls `next` to fill a reused
//!   [`kvlab_core::Request`] without allocating.
//!
//! - The runner sees workloads through [`Workload`] (defined in `kvlab-core`, re-exported
//!   here), which makes one [`OpSource`] per client; [`CoreSource`] is a `CoreWorkload`
//!   client, and a `CoreWorkload` is also the [`Dataset`] that `load` and `verify` walk.
//! - Other families: CacheBench-style caches ([`CacheWorkload`], [`CacheBenchConfig`]),
//!   memtier-style ([`memtier`]), imports and key files ([`ImportWorkload`],
//!   [`KeyFileWorkload`]) and thread plans ([`PlanWorkload`]). [`AnyWorkload`] is the one
//!   list of them, and [`with_workload!`] runs generic code on the one it holds.
//!
//! Each family lives in a folder of its own: `ycsb/` (CoreWorkload and its sources),
//! `cache/` (CacheBench-style caches and CacheBench configs), `files/`
//! (imports and key files), `memtier/` (memtier_benchmark's key patterns, `--command`
//! lines and `--data-import` files); `plan.rs` (thread plans over any of them) and
//! `any.rs` (the one list of workloads) sit beside them. Adding a family touches its folder and one
//! arm of [`with_workload!`].
//!
//! The [`generator`] module holds the key, length and counter generators (uniform,
//! Zipfian, scrambled Zipfian, skewed-latest, hotspot, exponential, sequential,
//! histogram, …), each a small value that takes the random source as an argument.
//!
//! # Compatibility with YCSB
//!
//! Key names, key-choice distributions, the operation mix and all property names and
//! defaults follow YCSB's `CoreWorkload` (`core/src/main/java/site/ycsb/workloads/
//! CoreWorkload.java`), so a result is comparable with one from YCSB: key `n` is
//! `"user" + fnvhash64(n)` as in YCSB, and a scrambled Zipfian favours the same keys.
//! Deliberate differences:
//!
//! - **Random source.** Xoshiro256++ seeded explicitly from the run seed
//!   ([`worker_seed`]), never from the clock; Java's `Random` is not reproduced, so op
//!   streams are not bit-identical to YCSB's — only key names and distributions are.
//!   The same seed always gives the same stream.
//! - **64-bit counts.** Record, operation and key counts are `u64` where YCSB truncates
//!   some to a Java `int` (`nextKeynum`'s `intValue()`, the hotspot set size).
//! - **Random values** are slices, at a random offset, of a 256 KiB pool of random
//!   printable bytes generated once (with YCSB `RandomByteIterator`'s character
//!   classes), instead of fresh random bytes per field: no per-operation work, and
//!   values still do not compress across records.
//! - **Load split.** Each load worker inserts a contiguous slice of
//!   `[insertstart, insertstart + insertcount)`, with YCSB `Client`'s per-thread counts
//!   (`count / workers`, one more for the first `count % workers` workers); YCSB's
//!   threads instead take keys from one shared counter, so which thread inserts which
//!   key is not deterministic there.
//! - **Strict parsing.** Booleans must be `true`/`false` (YCSB reads anything else as
//!   false), `insertorder` must be `hashed`/`ordered`, hotspot fractions must be in
//!   `[0, 1]`, unknown properties are errors.
//! - **Extensions**, all documented on [`CoreWorkload`]: `zipfianconstant` (θ of the
//!   `zipfian` and `latest` key choosers, default 0.99) and `deleteproportion`
//!   (default 0, produces `OpKind::Delete`).

mod any;
mod cache;
mod files;
pub mod fuzzing;
mod mixgraph;
mod plan;
mod props;
mod replay;
mod ycsb;

/// YCSB's generators (kept under this name for existing paths): [`kvlab_dist::ycsb`].
pub use kvlab_dist::ycsb as generator;
pub mod memtier;

use std::path::PathBuf;

pub use kvlab_dist::{fnvhash64, worker_seed};

pub use any::AnyWorkload;
pub use cache::cachebench::{CacheBenchConfig, CacheBenchWarning, CACHEBENCH_OVERRIDES};
pub use cache::{CacheSource, CacheSpec, CacheWorkload, OpMix, Popularity, SizeDist, SizePiece};
pub use files::import::{ImportReport, ImportSource, ImportSpec, ImportWorkload, KeySample};
pub use files::import::{MalformedLine, TrailingDelimiter, ValueFormat};
pub use files::keyfile::{escape_key, unescape_key, KeyCheck, KeyCheckSource, KeyFile};
pub use files::keyfile::{KeyFileSource, KeyFileWorkload};
pub use kvlab_core::{Dataset, Needs, OpSource, Ticket, Verdict, Workload};
pub use mixgraph::{
    read_range_starts, KeyRangeLayout, MixGraphSource, MixGraphWorkload, MixGraphWorkloadError,
    SeekTally,
};
pub use plan::PROPORTION_KEYS;
pub use plan::{GroupCounts, Plan, PlanGroup, PlanSource, PlanWorkload, Proportions};
pub use props::{Origin, Properties};
pub use replay::{Preload, PreloadSource, ReplaySource, ReplaySpec, ReplayWorkload};
pub use ycsb::source::CoreSource;
pub use ycsb::{CoreWorkload, LoadWorker, RunWorker};

/// Everything that can go wrong reading or validating a workload.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// A file could not be read.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A malformed line in a property or histogram file.
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A `-p` argument without `=`.
    #[error("`-p {arg}`: expected `key=value`")]
    Override {
        /// The argument as given.
        arg: String,
    },
    /// A CacheBench config key (`numKeys`, `getRatio`, …) given as a `-p` property of a
    /// cache workload.
    #[error(
        "unknown property `{key}` ({origin}): `{key}` is a CacheBench config key; give \
         the config file with `--cachebench FILE`, or set the cache workload's own \
         property{}",
        did_you_mean(.suggestion)
    )]
    CacheBenchKey {
        /// The property name.
        key: String,
        /// Where it was set.
        origin: Origin,
        /// The closest `cache.*` property, if one is close.
        suggestion: Option<String>,
    },
    /// A property no layer knows.
    #[error("unknown property `{key}` ({origin}){}", did_you_mean(.suggestion))]
    UnknownProperty {
        /// The property name.
        key: String,
        /// Where it was set.
        origin: Origin,
        /// The closest known name, if one is close.
        suggestion: Option<String>,
    },
    /// A value that does not parse or is out of range.
    #[error("invalid value `{value}` for `{key}` ({origin}): expected {expected}")]
    InvalidValue {
        /// The property name.
        key: String,
        /// The value as given.
        value: String,
        /// Where it was set.
        origin: Origin,
        /// What would have been accepted.
        expected: String,
    },
    /// Properties that are each valid but contradict each other.
    #[error("{0}")]
    Inconsistent(String),
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

//! What a trace holds: composition, sizes, popularity, locality and reuse, computed in one
//! streaming pass whose memory is bounded by the distinct keys, not the requests.
//!
//! - [`Analyzer`]: fed every [`TraceRecord`] of a trace ([`Analyzer::observe`]), then
//!   [`Analyzer::finish`]ed into an [`Analysis`].
//! - [`Analysis`]: the figures ([`Summary`] and the tables behind each chart), written by
//!   [`Analysis::write`] as `summary.json`, one CSV per figure and, optionally, a
//!   self-contained `index.html` (see [`output`] for the files and their columns).
//!
//! What it computes, and whose definitions it follows:
//! - request, object and byte counts, compulsory miss ratio, objects requested exactly
//!   1…5 times, the 10 largest request counts and the Zipf fit exactly as libCacheSim's
//!   `traceAnalyzer` does (`analyzer.cpp`, `popularity.cpp`);
//! - its reuse distribution in virtual time on log base 1.5 buckets (`reuse.cpp`), beside
//!   kvlab's own log2 histograms of reuse time, in requests and in seconds;
//! - exact LRU stack distances ([`stack`]) and the LRU hit ratio they imply;
//! - the key-space heatmap, the key × time access series, per-op composition, QPS, key
//!   and value sizes and scan lengths of RocksDB's `trace_analyzer` and of the FAST'20
//!   paper "Characterizing, Modeling, and Benchmarking RocksDB Key-Value Workloads at
//!   Facebook" (Figures 9–13);
//! - working set (distinct keys) per time window, and Pearson correlations between
//!   per-request variables that workload models draw independently.
//!
//! Memory grows with the distinct keys (120–170 bytes a key), never with the requests.
//! Past [`AnalyzeOptions::max_keys`] distinct keys the per-key figures become estimates
//! ([`Sampling`]): keys are sampled spatially, by a hash of the key, as SHARDS samples
//! them (Waldspurger et al., FAST '15), the rate halving whenever the sample outgrows the
//! bound (SHARDS with a fixed sample size); each sampled key then stands for 1/rate keys
//! and each of its reuses for 1/rate reuses, and its stack distance among sampled keys is
//! scaled by 1/rate. The most requested keys come from a Misra–Gries summary over every
//! request instead (counts at most [`Sampling::top_error_requests`] low). Figures over
//! requests (counts, bytes, ops, sizes, QPS) stay exact.

pub mod hist;
mod html;
pub mod output;
/// Exact LRU stack distances ([`kvlab_dist::stack`], shared with the locality layer that
/// generates them).
pub use kvlab_dist::stack;
pub mod zipf;

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;

use crate::record::{KeyEncoding, Op, TraceInfo, TraceRecord};
use hist::{Log2Hist, ValueHist};
use stack::StackDistance;

/// Most working-set windows kept (45 days of 60 s windows): a clock that jumps far ahead
/// must not make the analysis allocate for every empty window in between.
pub const MAX_WINDOWS: usize = 1 << 16;

/// How many objects requested exactly 1, 2, … times are counted (libCacheSim's
/// `track_n_hit` default).
pub const X_HIT: usize = 5;

/// What the analysis computes at which resolution.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyzeOptions {
    /// Keys listed as the most requested (and request counts in `top_frequencies`).
    pub top_keys: usize,
    /// Width of a QPS bucket in seconds.
    pub qps_bucket_s: u64,
    /// Width of a working-set window in seconds (libCacheSim's `time_window`, 60).
    pub window_s: u64,
    /// Traces without a clock ([`crate::TimeUnit::Sequence`]): width of a working-set window in
    /// requests; a QPS bucket is a tenth of it.
    pub window_requests: u64,
    /// Buckets of the key-space heatmap (keys in sorted order, equal key counts).
    pub heatmap_buckets: usize,
    /// Most points kept for the key × time series (sampled evenly over the trace).
    pub time_series_points: usize,
    /// Most QPS buckets kept: past this, buckets are merged two by two.
    pub max_qps_buckets: usize,
    /// How the sorted keys are cut into the key ranges whose boundaries the heatmap and
    /// the key × time series show (and `keyranges.csv` lists).
    pub key_ranges: KeyRangeRule,
    /// Most column families (tenants) given a heatmap, key ranges and time series of
    /// their own when a trace has more than one: the most requested ones.
    pub max_cf_locality: usize,
    /// Most distinct keys followed one by one: past this, keys are sampled and the
    /// per-key figures estimated ([`Sampling`]); `None` follows every key exactly,
    /// whatever the memory.
    pub max_keys: Option<usize>,
}

/// The default [`AnalyzeOptions::max_keys`]: at most about 1.4 GB of memory (1 399 828 KiB
/// of maximum RSS measured on a 10⁸-request trace of 8.9 M objects, docs/performance.md).
pub const DEFAULT_MAX_KEYS: usize = 1 << 23;

/// Counters of the Misra–Gries summary of the most requested keys once keys are sampled
/// (or 64 per listed key, if more).
pub const HEAVY_COUNTERS: usize = 4096;

/// How the per-key figures of a sampled analysis were estimated (`summary.json`'s
/// `sampling`; absent when every key was followed exactly).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sampling {
    /// How: `"spatial key sampling (SHARDS, fixed sample size)"`.
    pub method: String,
    /// The final share of keys sampled (a power of two: 1/2, 1/4, …).
    pub rate: f64,
    /// Keys each sampled key stands for (1 / rate).
    pub weight: u64,
    /// The bound on the keys followed ([`AnalyzeOptions::max_keys`]).
    pub max_keys: u64,
    /// Keys in the final sample.
    pub sampled_keys: u64,
    /// The figures that are estimates.
    pub estimated: Vec<String>,
    /// The request counts of the most requested keys (`top_frequencies`, `top_keys.csv`)
    /// are at most this many requests below the true counts (Misra–Gries).
    pub top_error_requests: u64,
}

/// The figures a sampled analysis estimates ([`Sampling::estimated`]).
pub const ESTIMATED_FIGURES: [&str; 15] = [
    "objects",
    "object_bytes",
    "compulsory_miss_ratio",
    "compulsory_miss_ratio_bytes",
    "frequency_mean",
    "x_hit",
    "zipf_alpha",
    "top_frequencies",
    "reuses",
    "mean_stack_distance",
    "max_working_set",
    "correlations (key_hotness)",
    "popularity, access counts, heatmap, key ranges, key x time series",
    "stack distance, reuse time and libCacheSim reuse histograms",
    "object sizes, working set per window",
];

/// A Misra–Gries counter: the count, and the key's bytes (byte-key traces).
type Counter = (u64, Option<Box<[u8]>>);

/// The Misra–Gries summary of the most requested keys (Misra and Gries, 1982): at most
/// `cap` counters; a key without one when all are taken lowers every counter by one
/// instead. A key's counter is at most `decrements` below its true count.
#[derive(Clone, Debug)]
struct Heavy {
    cap: usize,
    counts: IdMap<Counter>,
    decrements: u64,
}

impl Heavy {
    #[inline]
    fn count(&mut self, id: u64, key: Option<&[u8]>) {
        if let Some(c) = self.counts.get_mut(&id) {
            c.0 += 1;
        } else if self.counts.len() < self.cap {
            self.counts.insert(id, (1, key.map(Box::from)));
        } else {
            self.decrements += 1;
            self.counts.retain(|_, c| {
                c.0 -= 1;
                c.0 > 0
            });
        }
    }
}

/// The interval a trace's request rate is counted in, from its span (ns from the first
/// request to the last): 1, 2 or 5 × 10ⁿ ms, the narrowest that cuts the span into at
/// most [`QPS_INTERVALS`], from 1 ms up to 1 s. A trace of a second or more is counted
/// per second; 20 000 requests in 0.242 s are counted in 5 ms intervals (49 of them),
/// not as one second holding 20 000.
pub fn qps_interval_ns(span_ns: u64) -> u64 {
    const MS: u64 = 1_000_000;
    let mut step = MS;
    while step < 1_000 * MS {
        for m in [1, 2, 5] {
            if span_ns / (m * step) < QPS_INTERVALS {
                return m * step;
            }
        }
        step *= 10;
    }
    1_000 * MS
}

/// The most intervals [`qps_interval_ns`] cuts a sub-second trace into.
pub const QPS_INTERVALS: u64 = 100;

/// An interval as a reader names it: `5 ms`, `1 s`, `250 µs`.
pub fn interval_label(ns: u64) -> String {
    let (value, unit) = if ns >= 1_000_000_000 {
        (ns as f64 / 1e9, "s")
    } else if ns >= 1_000_000 {
        (ns as f64 / 1e6, "ms")
    } else if ns >= 1_000 {
        (ns as f64 / 1e3, "µs")
    } else {
        (ns as f64, "ns")
    };
    format!("{} {unit}", (value * 1000.0).round() / 1000.0)
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            top_keys: 10,
            qps_bucket_s: 1,
            window_s: 60,
            window_requests: 10_000,
            heatmap_buckets: 1000,
            time_series_points: 20_000,
            max_qps_buckets: 1 << 16,
            key_ranges: KeyRangeRule::Ranges(30),
            max_cf_locality: 16,
            max_keys: Some(DEFAULT_MAX_KEYS),
        }
    }
}

/// How sorted keys are cut into key ranges for the locality figures, spelt as
/// `kvlab model fit --key-ranges` spells its equal-count rules: `ranges:N` (or `N`),
/// `keys:N`, and `none` (or `0`) for no ranges.
///
/// The FAST'20 paper draws a key range per MySQL table or SST file on its heatmaps and
/// time series (Figures 9–13); a trace does not say where those lie, so the ranges here
/// hold equal counts of the keys the trace accessed, as the model's `ranges:N` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRangeRule {
    /// No key ranges.
    None,
    /// This many ranges of equal distinct-key counts (differing by at most one key);
    /// fewer when there are fewer keys.
    Ranges(u64),
    /// Ranges of this many distinct keys each (the last one may hold fewer).
    KeysPerRange(u64),
}

impl std::str::FromStr for KeyRangeRule {
    type Err = String;

    /// `none`, `0`, `N` or `ranges:N` (N ranges), `keys:N` (N keys per range).
    fn from_str(s: &str) -> Result<KeyRangeRule, String> {
        let bad = || {
            format!(
                "key-range rule {s:?}: expected ranges:N (or N), keys:N (keys per range) or \
                 none (or 0)"
            )
        };
        let number = |n: &str| n.parse::<u64>().map_err(|_| bad());
        match s.split_once(':') {
            None if s == "none" => Ok(KeyRangeRule::None),
            None => Ok(match number(s)? {
                0 => KeyRangeRule::None,
                n => KeyRangeRule::Ranges(n),
            }),
            Some(("ranges", n)) => Ok(match number(n)? {
                0 => KeyRangeRule::None,
                n => KeyRangeRule::Ranges(n),
            }),
            Some(("keys", n)) => match number(n)? {
                0 => Err(bad()),
                n => Ok(KeyRangeRule::KeysPerRange(n)),
            },
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for KeyRangeRule {
    /// The rule as `--key-ranges` takes it (`none`, `ranges:N`, `keys:N`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyRangeRule::None => write!(f, "none"),
            KeyRangeRule::Ranges(n) => write!(f, "ranges:{n}"),
            KeyRangeRule::KeysPerRange(n) => write!(f, "keys:{n}"),
        }
    }
}

impl KeyRangeRule {
    /// The ranges of `keys` keys in sorted order, as `(first, end)` positions.
    fn cut(self, keys: usize) -> Vec<(usize, usize)> {
        match self {
            KeyRangeRule::None => Vec::new(),
            KeyRangeRule::Ranges(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX).min(keys);
                (0..n).map(|i| (keys * i / n, keys * (i + 1) / n)).collect()
            }
            KeyRangeRule::KeysPerRange(per) => {
                let per = usize::try_from(per).unwrap_or(usize::MAX).max(1);
                (0..keys)
                    .step_by(per)
                    .map(|lo| (lo, lo.saturating_add(per).min(keys)))
                    .collect()
            }
        }
    }
}

/// A hasher for 64-bit ids (statistics and analyses): splitmix64's finalizer
/// ([`kvlab_dist::mix64`]), so sequential block numbers spread
/// as well as hashed keys (the standard SipHash would cost more than the analysis).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        kvlab_dist::mix64(self.0)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }

    fn write_u32(&mut self, v: u32) {
        self.0 = u64::from(v);
    }
}

pub(crate) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// What the analysis keeps per distinct key.
#[derive(Clone, Copy, Debug)]
struct KeyState {
    /// Requests to the key.
    count: u32,
    /// Requests that change the store (not reads).
    writes: u32,
    /// Working-set window of the last request, plus one (0: none yet).
    last_window: u32,
    /// Position (0-based request index) of the last request.
    last_pos: u64,
    /// Time of the last request, in nanoseconds since the first request.
    last_ns: u64,
    /// Sum of value sizes over the key's requests.
    value_bytes: u64,
    /// Sum of scan lengths over the key's requests.
    scan_len: u64,
    /// Position of the last request in the stack-distance tree.
    stack_pos: u32,
    /// Column family (tenant) of the first request; requests of the key in another
    /// one are counted in [`Analyzer::cf_extra`].
    cf: u32,
}

impl Default for KeyState {
    fn default() -> Self {
        KeyState {
            count: 0,
            writes: 0,
            last_window: 0,
            last_pos: 0,
            last_ns: 0,
            value_bytes: 0,
            scan_len: 0,
            stack_pos: stack::NONE,
            cf: 0,
        }
    }
}

/// Per-op counts.
#[derive(Clone, Debug, Default)]
struct OpStats {
    requests: u64,
    key_size: ValueHist,
    value_size: ValueHist,
    scan_len: ValueHist,
    /// Requests per QPS bucket.
    qps: Vec<u64>,
    /// Requests per millisecond of the trace's first second (traces with a clock): a
    /// trace shorter than a QPS bucket is drawn from these ([`qps_interval_ns`]).
    qps_first_second: Vec<u64>,
    /// Requests per key slot; left empty for the first op seen, whose count is the
    /// key's total less the other ops' (so a single-op trace keeps no second count).
    per_key: Vec<u32>,
}

/// One working-set window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Requests in the window.
    pub requests: u64,
    /// Distinct keys requested in the window.
    pub distinct_keys: u64,
    /// Keys requested for the first time in the trace.
    pub new_keys: u64,
}

/// Exact sums over requests for Pearson correlations, in integers so nothing is lost
/// before the final division.
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    n: u128,
    sum: [u128; 3],
    /// Sums of products: (value,value) (value,write) (value,scan) (write,write)
    /// (write,scan) (scan,scan).
    prod: [u128; 6],
}

/// The variables whose correlation is reported, in the order of [`Analysis::correlations`].
pub const CORRELATED: [&str; 4] = ["key_hotness", "value_size", "is_write", "scan_len"];

/// `(requests to a key, keys requested that many times)`, by increasing request count.
pub type CountHist = Vec<(u64, u64)>;

/// One point of the key × time series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesPoint {
    /// Seconds since the first request (requests, for traces without a clock).
    pub time: f64,
    /// The key's rank in sorted key order (0 = smallest key).
    pub key_rank: u64,
    /// The op.
    pub op: Op,
}

/// One bucket of the key-space heatmap: a run of keys adjacent in sorted order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HeatBucket {
    /// The first key of the run (text, or hex for binary keys; the id for id traces).
    pub first_key: String,
    /// The last key of the run.
    pub last_key: String,
    /// Keys in the run.
    pub keys: u64,
    /// Requests to them.
    pub requests: u64,
    /// Read requests to them.
    pub reads: u64,
    /// Requests that change the store.
    pub writes: u64,
    /// The most requests to one key of the run.
    pub max_key_requests: u64,
}

/// One key range: keys adjacent in sorted order, cut by [`KeyRangeRule`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KeyRange {
    /// The rank of its first key in sorted key order (0 = smallest key): where its
    /// boundary is drawn.
    pub first_rank: u64,
    /// Its first key (as [`HeatBucket::first_key`]).
    pub first_key: String,
    /// Its last key.
    pub last_key: String,
    /// Distinct keys in it.
    pub keys: u64,
    /// Requests to them.
    pub requests: u64,
    /// Its share of the requests (of the column family's, for a column family's ranges).
    pub share: f64,
}

/// The key-space figures of one column family (tenant) of a trace with several: its
/// own keys in sorted order, as the paper plots one column family at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct CfLocality {
    /// The column family (tenant) id.
    pub cf: u32,
    /// Requests to it.
    pub requests: u64,
    /// Distinct keys requested in it.
    pub keys: u64,
    /// Its heatmap over its keys.
    pub heatmap: Vec<HeatBucket>,
    /// Its key ranges.
    pub key_ranges: Vec<KeyRange>,
    /// The sampled requests of the whole trace's series that went to it, `key_rank`
    /// being the key's rank among the column family's keys.
    pub time_series: Vec<SeriesPoint>,
}

/// A key's requests, for the heatmap and the key ranges.
#[derive(Clone, Copy, Debug)]
struct KeyCount {
    slot: u32,
    requests: u64,
    reads: u64,
    writes: u64,
}

impl KeyCount {
    /// `requests` to the key in `slot`, `writes` of them: every request that does not
    /// write is a read (`Op::is_read`).
    fn of(slot: u32, requests: u64, writes: u64) -> KeyCount {
        KeyCount {
            slot,
            requests,
            reads: requests.saturating_sub(writes),
            writes,
        }
    }
}

/// Pearson's r between two per-request variables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Correlation {
    /// One variable (a name of [`CORRELATED`]).
    pub a: String,
    /// The other.
    pub b: String,
    /// Pearson's r over the requests; `None` (`null`) when a variable does not vary.
    pub pearson_r: Option<f64>,
}

/// The headline figures (`summary.json`). The fields named in libCacheSim's `stat`
/// output are computed as it computes them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The trace's format (its reader's name).
    pub format: String,
    /// Requests.
    pub requests: u64,
    /// Distinct keys (objects).
    pub objects: u64,
    /// Sum of object sizes (key + value) over requests.
    pub request_bytes: u64,
    /// Sum of object sizes at each object's first request.
    pub object_bytes: u64,
    /// Objects / requests (libCacheSim "compulsory miss ratio (req)").
    pub compulsory_miss_ratio: f64,
    /// Object bytes / request bytes (libCacheSim "compulsory miss ratio (byte)").
    pub compulsory_miss_ratio_bytes: f64,
    /// Requests per object.
    pub frequency_mean: f64,
    /// Objects requested exactly once.
    pub one_hit_objects: u64,
    /// Objects requested exactly 1, 2, 3, 4 and 5 times.
    pub x_hit: Vec<u64>,
    /// The Zipf exponent of the rank/count fit (`null` when no fit was made).
    pub zipf_alpha: Option<f64>,
    /// R² of that fit.
    pub zipf_r2: Option<f64>,
    /// Why there is no fit, when there is none.
    pub zipf_note: Option<String>,
    /// The largest request counts of one object, most first.
    pub top_frequencies: Vec<u64>,
    /// Seconds from the first to the last request (`null` without a clock).
    pub time_span_s: Option<f64>,
    /// Requests per op, by op name.
    pub ops: BTreeMap<String, u64>,
    /// Column families / tenants seen.
    pub column_families: u64,
    /// Requests that are not a key's first, whose LRU stack distance is known.
    pub reuses: u64,
    /// Mean LRU stack distance of those requests.
    pub mean_stack_distance: f64,
    /// Most distinct keys in one working-set window.
    pub max_working_set: u64,
    /// Requests after the last working-set window kept (65 536 windows), left out of
    /// `working_set.csv`; 0 for almost every trace.
    pub requests_beyond_windows: u64,
    /// Pearson's r between every two of the per-request variables [`CORRELATED`].
    pub correlations: Vec<Correlation>,
    /// How the per-key figures were estimated, when keys were sampled (absent from the
    /// JSON when every key was followed exactly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Sampling>,
}

/// Everything [`Analyzer::finish`] computed.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The headline figures.
    pub summary: Summary,
    /// Whether the time axis is seconds (false: requests, for traces without a clock).
    pub has_clock: bool,
    /// Requests per op.
    pub ops: Vec<(Op, u64)>,
    /// Requests per column family (tenant) and op.
    pub cf_ops: Vec<(u32, Op, u64)>,
    /// Width of a QPS bucket (seconds, or requests without a clock): 1 s, or for a trace
    /// shorter than a second an interval chosen from its span ([`qps_interval_ns`]).
    pub qps_bucket: f64,
    /// Requests per QPS bucket, per op.
    pub qps: Vec<(Op, Vec<u64>)>,
    /// Key sizes per op.
    pub key_sizes: Vec<(Op, ValueHist)>,
    /// Value sizes per op.
    pub value_sizes: Vec<(Op, ValueHist)>,
    /// Object sizes (key + value) at each object's first request (libCacheSim's
    /// `object_size: obj_cnt`).
    pub object_sizes: ValueHist,
    /// Scan lengths of scans (Seek, SeekForPrev, Scan).
    pub scan_lengths: Vec<(Op, ValueHist)>,
    /// `(requests to a key, keys with that many)` per op, and for all ops as `None`.
    pub access_counts: Vec<(Option<Op>, CountHist)>,
    /// The most requested keys: `(key, id, requests)`.
    pub top_keys: Vec<(String, u64, u64)>,
    /// The key-space heatmap.
    pub heatmap: Vec<HeatBucket>,
    /// The rule the key ranges were cut by.
    pub key_range_rule: KeyRangeRule,
    /// The key ranges over all keys, in key order.
    pub key_ranges: Vec<KeyRange>,
    /// The heatmap, key ranges and time series per column family (tenant), by id, when
    /// the trace has more than one (at most [`AnalyzeOptions::max_cf_locality`], the
    /// most requested); empty otherwise.
    pub per_cf: Vec<CfLocality>,
    /// The sampled key × time series.
    pub time_series: Vec<SeriesPoint>,
    /// LRU stack distances (log2 buckets) of the requests that are not a key's first.
    pub stack_distance: Log2Hist,
    /// Reuse time in requests since the key's previous request (log2 buckets).
    pub reuse_requests: Log2Hist,
    /// Reuse time in nanoseconds (log2 buckets; empty without a clock).
    pub reuse_ns: Log2Hist,
    /// libCacheSim's reuse histogram: bucket `floor(ln(requests since previous request)
    /// / ln(1.5))` → requests (`reuse.cpp`, "reuse virtual time … log base 1.5").
    pub reuse_lcs_vtime: Vec<u64>,
    /// First requests to a key (cold misses; libCacheSim's `-1` reuse bucket).
    pub cold_requests: u64,
    /// Width of a working-set window (seconds, or requests without a clock).
    pub window: f64,
    /// The working set per window.
    pub windows: Vec<Window>,
    /// Request counts per object, sorted most first (the popularity curve); when keys
    /// were sampled, the sampled objects' counts, each standing for
    /// [`Sampling::weight`] objects.
    pub popularity: Vec<u64>,
    /// Pearson's r matrix over [`CORRELATED`] (row-major, `None` where undefined).
    pub correlations: [[Option<f64>; 4]; 4],
}

/// Computes an [`Analysis`] from the records of one trace, in one pass.
#[derive(Debug)]
pub struct Analyzer {
    info: TraceInfo,
    opts: AnalyzeOptions,
    /// Nanoseconds per time unit (`None`: no clock).
    unit_ns: Option<u64>,
    first_ts: Option<u64>,
    last_ns: u64,
    requests: u64,
    request_bytes: u64,
    object_bytes: u64,
    object_sizes: ValueHist,
    slot_of: IdMap<u32>,
    ids: Vec<u64>,
    keys: Vec<KeyState>,
    /// Byte keys back to back, and where each slot's starts (byte-key traces only).
    key_arena: Vec<u8>,
    key_start: Vec<u64>,
    ops: Vec<Option<Box<OpStats>>>,
    first_op: Option<Op>,
    cf_ops: HashMap<u32, [u64; Op::ALL.len()]>,
    /// Requests and writes of a key in a column family other than its first's, by
    /// `slot << 32 | cf` (keys of most traces stay in one: this stays empty).
    cf_extra: IdMap<[u32; 2]>,
    qps_width: u64,
    stack: StackDistance,
    stack_distance: Log2Hist,
    stack_sum: u128,
    reuse_requests: Log2Hist,
    reuse_ns: Log2Hist,
    reuse_lcs_vtime: Vec<u64>,
    lcs_bucket: LcsBucket,
    cold: u64,
    windows: Vec<Window>,
    /// Requests after the last working-set window kept ([`MAX_WINDOWS`]).
    late_requests: u64,
    /// Sampled requests.
    samples: Vec<Sample>,
    sample_stride: u64,
    /// The next request index that is a multiple of `sample_stride`.
    next_sample: u64,
    moments: Moments,
    /// Keys are sampled when the top `shift` bits of their hash are 0 (0: every key):
    /// each sampled key stands for `1 << shift`.
    shift: u32,
    /// The most requested keys, once keys are sampled.
    heavy: Option<Heavy>,
}

/// A sampled request of the key × time series.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Its index in the trace.
    pos: u64,
    /// Its time, as [`Analyzer::rel_ns`].
    time: u64,
    slot: u32,
    cf: u32,
    op: Op,
}

/// libCacheSim's reuse bucket `(int)(log(vtime) / log(1.5))` (`reuse.cpp`), found by a
/// search over the first value of each bucket — computed once with that very formula, so
/// the buckets are the same — instead of a logarithm per request.
#[derive(Clone, Debug)]
struct LcsBucket {
    /// `starts[b]`: the smallest value whose bucket is at least `b`.
    starts: Vec<u64>,
}

impl LcsBucket {
    fn formula(v: u64) -> usize {
        ((v as f64).ln() / 1.5f64.ln()) as usize
    }

    fn new() -> LcsBucket {
        let top = Self::formula(u64::MAX);
        let starts = (0..=top)
            .map(|b| {
                // The formula never decreases as v grows: binary search for its first b.
                let (mut lo, mut hi) = (1u64, u64::MAX);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if Self::formula(mid) >= b {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                lo
            })
            .collect();
        LcsBucket { starts }
    }

    /// The bucket of `v ≥ 1`.
    #[inline]
    fn of(&self, v: u64) -> usize {
        self.starts.partition_point(|&s| s <= v) - 1
    }
}

impl Analyzer {
    /// An analyzer for a trace that says `info` about itself.
    pub fn new(info: &TraceInfo, opts: &AnalyzeOptions) -> Analyzer {
        Analyzer {
            info: info.clone(),
            opts: opts.clone(),
            unit_ns: info.time_unit.nanos(),
            first_ts: None,
            last_ns: 0,
            requests: 0,
            request_bytes: 0,
            object_bytes: 0,
            object_sizes: ValueHist::default(),
            slot_of: IdMap::default(),
            ids: Vec::new(),
            keys: Vec::new(),
            key_arena: Vec::new(),
            key_start: Vec::new(),
            ops: vec![None; Op::ALL.len()],
            first_op: None,
            cf_ops: HashMap::new(),
            cf_extra: IdMap::default(),
            qps_width: 1,
            stack: StackDistance::default(),
            stack_distance: Log2Hist::default(),
            stack_sum: 0,
            reuse_requests: Log2Hist::default(),
            reuse_ns: Log2Hist::default(),
            reuse_lcs_vtime: Vec::new(),
            lcs_bucket: LcsBucket::new(),
            cold: 0,
            windows: Vec::new(),
            late_requests: 0,
            samples: Vec::new(),
            sample_stride: 1,
            next_sample: 0,
            moments: Moments::default(),
            shift: 0,
            heavy: None,
        }
    }

    /// Keys each followed key stands for (1 while every key is followed).
    #[inline]
    fn weight(&self) -> u64 {
        1 << self.shift
    }

    /// Whether key `id` is in the sample at `shift`.
    #[inline]
    fn sampled(id: u64, shift: u32) -> bool {
        // A salted hash, so the sample is not the one kvlab's id hash tables cluster on.
        shift == 0 || kvlab_dist::mix64(id ^ 0x5851_f42d_4c95_7f2d) >> (64 - shift) == 0
    }

    /// Halves the sampling rate until the keys followed fit [`AnalyzeOptions::max_keys`]
    /// again, forgetting the keys no longer sampled (their requests stay counted in every
    /// figure over requests, and in the estimates made so far).
    fn lower_rate(&mut self, max_keys: usize) {
        if self.heavy.is_none() {
            // The summary starts from the exact counts so far: no error yet.
            let cap = HEAVY_COUNTERS.max(64 * self.opts.top_keys);
            let mut by_count: Vec<u32> = (0..self.keys.len() as u32).collect();
            let k = cap.min(by_count.len());
            if k > 0 && k < by_count.len() {
                by_count.select_nth_unstable_by(k - 1, |a, b| {
                    self.keys[*b as usize]
                        .count
                        .cmp(&self.keys[*a as usize].count)
                });
            }
            by_count.truncate(k);
            let mut counts = IdMap::default();
            for s in by_count {
                let key = (self.info.key_encoding == KeyEncoding::Bytes)
                    .then(|| Box::from(self.key_bytes(s as usize)));
                counts.insert(
                    self.ids[s as usize],
                    (u64::from(self.keys[s as usize].count), key),
                );
            }
            self.heavy = Some(Heavy {
                cap,
                counts,
                decrements: 0,
            });
        }
        let mut kept = self.keys.len();
        while kept > max_keys && self.shift < 63 {
            self.shift += 1;
            kept = self
                .ids
                .iter()
                .filter(|&&id| Self::sampled(id, self.shift))
                .count();
        }
        // Old slot -> new slot (NONE: dropped).
        const GONE: u32 = u32::MAX;
        let mut remap = vec![GONE; self.keys.len()];
        let mut n = 0u32;
        for (slot, &id) in self.ids.iter().enumerate() {
            if Self::sampled(id, self.shift) {
                remap[slot] = n;
                n += 1;
            }
        }
        let keep = |v: &[u32]| -> Vec<usize> {
            v.iter()
                .enumerate()
                .filter(|(_, &r)| r != GONE)
                .map(|(i, _)| i)
                .collect()
        };
        let old: Vec<usize> = keep(&remap);
        self.keys = old.iter().map(|&i| self.keys[i]).collect();
        self.ids = old.iter().map(|&i| self.ids[i]).collect();
        if self.info.key_encoding == KeyEncoding::Bytes {
            let mut arena = Vec::new();
            let mut start = Vec::with_capacity(old.len());
            for &i in &old {
                start.push(arena.len() as u64);
                arena.extend_from_slice(self.key_bytes(i));
            }
            self.key_arena = arena;
            self.key_start = start;
        }
        self.slot_of.retain(|_, s| {
            let r = remap[*s as usize];
            *s = r;
            r != GONE
        });
        for op in self.ops.iter_mut().flatten() {
            if !op.per_key.is_empty() {
                op.per_key = old
                    .iter()
                    .map(|&i| op.per_key.get(i).copied().unwrap_or(0))
                    .collect();
            }
        }
        self.cf_extra = std::mem::take(&mut self.cf_extra)
            .into_iter()
            .filter_map(|(at, v)| {
                let r = remap[(at >> 32) as usize];
                (r != GONE).then(|| (u64::from(r) << 32 | (at & 0xffff_ffff), v))
            })
            .collect();
        self.samples.retain_mut(|p| {
            let r = remap[p.slot as usize];
            p.slot = r;
            r != GONE
        });
        let keys = &mut self.keys;
        self.stack.retain(
            |s| Some(remap[s as usize]).filter(|&r| r != GONE),
            |s, p| keys[s as usize].stack_pos = p,
        );
    }

    /// The bytes of slot `slot`'s key (byte-key traces).
    fn key_bytes(&self, slot: usize) -> &[u8] {
        let start = self.key_start[slot] as usize;
        let end = self
            .key_start
            .get(slot + 1)
            .map_or(self.key_arena.len(), |&e| e as usize);
        &self.key_arena[start..end]
    }

    /// Time of a timestamp in nanoseconds since the first request; the request index
    /// without a clock. Timestamps before the first count as the first.
    #[inline]
    fn rel_ns(&mut self, ts: u64) -> u64 {
        match self.unit_ns {
            Some(unit) => {
                let first = *self.first_ts.get_or_insert(ts);
                ts.saturating_sub(first).saturating_mul(unit)
            }
            None => self.requests,
        }
    }

    /// Width of a working-set window in the units of [`Analyzer::rel_ns`].
    fn window_units(&self) -> u64 {
        match self.unit_ns {
            Some(_) => self.opts.window_s.max(1).saturating_mul(1_000_000_000),
            None => self.opts.window_requests.max(1),
        }
    }

    /// Width of a QPS bucket (before merging) in the units of [`Analyzer::rel_ns`].
    fn qps_units(&self) -> u64 {
        match self.unit_ns {
            Some(_) => self.opts.qps_bucket_s.max(1).saturating_mul(1_000_000_000),
            None => (self.opts.window_requests / 10).max(1),
        }
    }

    /// Counts one request.
    pub fn observe(&mut self, rec: &TraceRecord) {
        let now = self.rel_ns(rec.ts);
        let (window_units, qps_units) = (self.window_units(), self.qps_units());
        self.last_ns = self.last_ns.max(now);
        let pos = self.requests;
        self.requests += 1;
        let size = rec.obj_size();
        self.request_bytes += size;
        let is_write = !rec.op.is_read();
        let bytes_key = self.info.key_encoding == KeyEncoding::Bytes;
        if let Some(h) = self.heavy.as_mut() {
            h.count(rec.id, bytes_key.then_some(&rec.key[..]));
        }

        // Working set: requests here, keys below.
        let w = (now / window_units) as usize;
        if w >= MAX_WINDOWS {
            self.late_requests += 1;
        } else {
            if w >= self.windows.len() {
                self.windows.resize(w + 1, Window::default());
            }
            self.windows[w].requests += 1;
        }

        let slot = if Self::sampled(rec.id, self.shift) {
            Some(self.observe_key(rec, pos, now, size, is_write, w))
        } else {
            None
        };

        // Per op.
        let mut b = (now / qps_units / self.qps_width) as usize;
        while b >= self.opts.max_qps_buckets.max(2) {
            self.merge_qps();
            b = (now / qps_units / self.qps_width) as usize;
        }
        let op = self.ops[rec.op as usize].get_or_insert_with(Box::default);
        op.requests += 1;
        op.key_size.record(u64::from(rec.key_size));
        op.value_size.record(rec.value_size);
        if matches!(rec.op, Op::Seek | Op::SeekForPrev | Op::Scan) {
            op.scan_len.record(u64::from(rec.scan_len));
        }
        if b >= op.qps.len() {
            op.qps.resize(b + 1, 0);
        }
        op.qps[b] += 1;
        if self.unit_ns.is_some() && now < 1_000_000_000 {
            let ms = (now / 1_000_000) as usize;
            if ms >= op.qps_first_second.len() {
                op.qps_first_second.resize(ms + 1, 0);
            }
            op.qps_first_second[ms] += 1;
        }
        if *self.first_op.get_or_insert(rec.op) != rec.op {
            if let Some(slot) = slot {
                if slot as usize >= op.per_key.len() {
                    op.per_key.resize(self.keys.len(), 0);
                }
                op.per_key[slot as usize] = op.per_key[slot as usize].saturating_add(1);
            }
        }
        self.cf_ops.entry(rec.cf).or_insert([0; Op::ALL.len()])[rec.op as usize] += 1;

        // Key × time samples: every `stride`-th request, the stride doubling (and every
        // other sample dropped) whenever the buffer fills, so the kept points stay evenly
        // spread over the whole trace. (The next sampled index is kept, so no division is
        // made per request.) Requests to keys out of the key sample are left out.
        if pos == self.next_sample {
            if self.samples.len() >= self.opts.time_series_points.max(2) {
                let stride = self.sample_stride;
                self.samples.retain(|s| (s.pos / stride).is_multiple_of(2));
                self.sample_stride *= 2;
            }
            if let (true, Some(slot)) = (pos.is_multiple_of(self.sample_stride), slot) {
                self.samples.push(Sample {
                    pos,
                    time: now,
                    slot,
                    cf: rec.cf,
                    op: rec.op,
                });
            }
            self.next_sample = (pos / self.sample_stride + 1) * self.sample_stride;
        }

        // Correlations.
        let m = &mut self.moments;
        let (v, wr, s) = (
            u128::from(rec.value_size),
            u128::from(is_write),
            u128::from(rec.scan_len),
        );
        m.n += 1;
        m.sum[0] += v;
        m.sum[1] += wr;
        m.sum[2] += s;
        m.prod[0] += v * v;
        m.prod[1] += v * wr;
        m.prod[2] += v * s;
        m.prod[3] += wr;
        m.prod[4] += wr * s;
        m.prod[5] += s * s;

        if let Some(max) = self.opts.max_keys {
            if self.keys.len() > max.max(1) {
                self.lower_rate(max.max(1));
            }
        }
    }

    /// The per-key part of [`Analyzer::observe`] for a key in the sample (every key
    /// while none is dropped): returns the key's slot. Counts made here stand for
    /// [`Analyzer::weight`] keys' or requests' each.
    #[inline]
    fn observe_key(
        &mut self,
        rec: &TraceRecord,
        pos: u64,
        now: u64,
        size: u64,
        is_write: bool,
        w: usize,
    ) -> u32 {
        let weight = self.weight();
        let next_slot = self.keys.len() as u32;
        let slot = *self.slot_of.entry(rec.id).or_insert(next_slot);
        let first = slot == next_slot;
        if first {
            self.keys.push(KeyState {
                cf: rec.cf,
                ..KeyState::default()
            });
            self.ids.push(rec.id);
            if self.info.key_encoding == KeyEncoding::Bytes {
                self.key_start.push(self.key_arena.len() as u64);
                self.key_arena.extend_from_slice(&rec.key);
            }
            self.object_bytes += size * weight;
            self.object_sizes.record_n(size, weight);
        }

        // Reuse: stack distance, and time since the previous request.
        let keys = &mut self.keys;
        let mut stack_pos = keys[slot as usize].stack_pos;
        let distance = self.stack.access(slot, &mut stack_pos, |s, p| {
            keys[s as usize].stack_pos = p;
        });
        let key = &mut self.keys[slot as usize];
        key.stack_pos = stack_pos;
        match distance {
            None => self.cold += weight,
            Some(d) => {
                // Among sampled keys, d stands for d / rate keys.
                let d = d * weight;
                self.stack_distance.record_n(d, weight);
                self.stack_sum += u128::from(d) * u128::from(weight);
                let vt = pos - key.last_pos;
                self.reuse_requests.record_n(vt, weight);
                let b = self.lcs_bucket.of(vt);
                if b >= self.reuse_lcs_vtime.len() {
                    self.reuse_lcs_vtime.resize(b + 1, 0);
                }
                self.reuse_lcs_vtime[b] += weight;
                if self.unit_ns.is_some() {
                    self.reuse_ns
                        .record_n(now.saturating_sub(key.last_ns), weight);
                }
            }
        }
        key.count = key.count.saturating_add(1);
        key.writes += u32::from(is_write);
        key.last_pos = pos;
        key.last_ns = now;
        key.value_bytes = key.value_bytes.saturating_add(rec.value_size);
        key.scan_len += u64::from(rec.scan_len);
        if key.cf != rec.cf {
            let extra = self
                .cf_extra
                .entry(u64::from(slot) << 32 | u64::from(rec.cf))
                .or_default();
            extra[0] = extra[0].saturating_add(1);
            extra[1] = extra[1].saturating_add(u32::from(is_write));
        }
        if w < MAX_WINDOWS {
            let win = &mut self.windows[w];
            if first {
                win.new_keys += weight;
            }
            if key.last_window != w as u32 + 1 {
                key.last_window = w as u32 + 1;
                win.distinct_keys += weight;
            }
        }
        slot
    }

    /// Heap bytes the analyzer holds, about: what grows with the distinct keys (the key
    /// table, per-key records, key bytes, the stack-distance tree) plus bounded tables
    /// (histograms, QPS buckets, windows, sampled points) — never anything per request.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let per_op: usize = self
            .ops
            .iter()
            .flatten()
            .map(|o| {
                o.per_key.capacity() * 4
                    + o.qps.capacity() * 8
                    + o.qps_first_second.capacity() * 8
                    + o.key_size.heap_bytes()
                    + o.value_size.heap_bytes()
                    + o.scan_len.heap_bytes()
            })
            .sum();
        self.slot_of.capacity() * (size_of::<(u64, u32)>() + 1)
            + self.ids.capacity() * 8
            + self.keys.capacity() * size_of::<KeyState>()
            + self.key_arena.capacity()
            + self.key_start.capacity() * 8
            + per_op
            + self.cf_ops.capacity() * (4 + 8 * Op::ALL.len() + 1)
            + self.stack.heap_bytes()
            + self.reuse_lcs_vtime.capacity() * 8
            + self.object_sizes.heap_bytes()
            + self.windows.capacity() * size_of::<Window>()
            + self.samples.capacity() * size_of::<Sample>()
            + self.cf_extra.capacity() * (size_of::<(u64, [u32; 2])>() + 1)
            + self.heavy.as_ref().map_or(0, |h| {
                h.counts.capacity() * (size_of::<(u64, Counter)>() + 1)
                    + h.counts
                        .values()
                        .map(|c| c.1.as_ref().map_or(0, |k| k.len()))
                        .sum::<usize>()
            })
    }

    /// Halves the QPS resolution: merges buckets two by two.
    fn merge_qps(&mut self) {
        self.qps_width *= 2;
        for op in self.ops.iter_mut().flatten() {
            let merged = op.qps.chunks(2).map(|c| c.iter().sum()).collect();
            op.qps = merged;
        }
    }

    /// The display form of slot `slot`'s key.
    fn key_text(&self, slot: usize) -> String {
        if self.info.key_encoding == KeyEncoding::Id {
            return self.ids[slot].to_string();
        }
        let start = self.key_start[slot] as usize;
        let end = self
            .key_start
            .get(slot + 1)
            .map_or(self.key_arena.len(), |&e| e as usize);
        key_display(&self.key_arena[start..end])
    }

    /// Slots in sorted key order (bytes, or ids).
    fn sorted_slots(&self) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.keys.len() as u32).collect();
        if self.info.key_encoding == KeyEncoding::Id {
            order.sort_unstable_by_key(|&s| self.ids[s as usize]);
        } else {
            let key = |s: u32| {
                let start = self.key_start[s as usize] as usize;
                let end = self
                    .key_start
                    .get(s as usize + 1)
                    .map_or(self.key_arena.len(), |&e| e as usize);
                &self.key_arena[start..end]
            };
            order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
        }
        order
    }

    /// A sample's time on the series' axis: seconds since the first request, or its
    /// index without a clock.
    fn series_time(&self, pos: u64, time: u64) -> f64 {
        if self.unit_ns.is_some() {
            time as f64 / 1e9
        } else {
            pos as f64
        }
    }

    /// The heatmap of `keys` (in sorted key order): runs of equal key count.
    fn heat_buckets(&self, keys: &[KeyCount]) -> Vec<HeatBucket> {
        let nb = self.opts.heatmap_buckets.max(1).min(keys.len().max(1));
        let mut heatmap = Vec::with_capacity(nb);
        for b in 0..nb {
            let lo = keys.len() * b / nb;
            let hi = keys.len() * (b + 1) / nb;
            if lo == hi {
                continue;
            }
            let mut hb = HeatBucket {
                first_key: self.key_text(keys[lo].slot as usize),
                last_key: self.key_text(keys[hi - 1].slot as usize),
                keys: (hi - lo) as u64 * self.weight(),
                requests: 0,
                reads: 0,
                writes: 0,
                max_key_requests: 0,
            };
            for k in &keys[lo..hi] {
                hb.requests += k.requests * self.weight();
                hb.writes += k.writes * self.weight();
                hb.reads += k.reads * self.weight();
                hb.max_key_requests = hb.max_key_requests.max(k.requests);
            }
            heatmap.push(hb);
        }
        heatmap
    }

    /// The key ranges of `keys` (in sorted key order) by the options' rule, their shares
    /// of the requests to `keys`.
    fn key_ranges_of(&self, keys: &[KeyCount]) -> Vec<KeyRange> {
        let total: u64 = keys.iter().map(|k| k.requests).sum();
        self.opts
            .key_ranges
            .cut(keys.len())
            .into_iter()
            .map(|(lo, hi)| {
                let requests: u64 = keys[lo..hi].iter().map(|k| k.requests).sum();
                KeyRange {
                    first_rank: lo as u64 * self.weight(),
                    first_key: self.key_text(keys[lo].slot as usize),
                    last_key: self.key_text(keys[hi - 1].slot as usize),
                    keys: (hi - lo) as u64 * self.weight(),
                    requests: requests * self.weight(),
                    share: if total == 0 {
                        0.0
                    } else {
                        requests as f64 / total as f64
                    },
                }
            })
            .collect()
    }

    /// The heatmap, key ranges and series of each of the most requested column families
    /// (by id), over the keys requested in it; `order` is the slots in sorted key order
    /// and `rank` each slot's place in it.
    fn cf_locality(&self, order: &[u32], rank: &[u64]) -> Vec<CfLocality> {
        let mut chosen: Vec<(u32, u64)> = self
            .cf_ops
            .iter()
            .map(|(&cf, counts)| (cf, counts.iter().sum()))
            .collect();
        chosen.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        chosen.truncate(self.opts.max_cf_locality);
        chosen.sort_unstable();
        let index: HashMap<u32, usize> = chosen
            .iter()
            .enumerate()
            .map(|(i, &(cf, _))| (cf, i))
            .collect();
        // Requests of keys outside their first column family, by slot.
        let mut elsewhere: IdMap<Vec<(u32, u64, u64)>> = IdMap::default();
        for (&at, &[n, w]) in &self.cf_extra {
            elsewhere
                .entry(at >> 32)
                .or_default()
                .push((at as u32, u64::from(n), u64::from(w)));
        }
        // Each column family's keys, in sorted key order (a slot is pushed at most once
        // per column family, in the order of `order`).
        let mut keys: Vec<Vec<KeyCount>> = vec![Vec::new(); chosen.len()];
        for &s in order {
            let k = &self.keys[s as usize];
            let (mut n, mut w) = (u64::from(k.count), u64::from(k.writes));
            for &(cf, en, ew) in elsewhere.get(&u64::from(s)).into_iter().flatten() {
                n = n.saturating_sub(en);
                w = w.saturating_sub(ew);
                if let Some(&i) = index.get(&cf) {
                    keys[i].push(KeyCount::of(s, en, ew));
                }
            }
            if n > 0 {
                if let Some(&i) = index.get(&k.cf) {
                    keys[i].push(KeyCount::of(s, n, w));
                }
            }
        }
        let mut series: Vec<Vec<SeriesPoint>> = vec![Vec::new(); chosen.len()];
        for p in &self.samples {
            if let Some(&i) = index.get(&p.cf) {
                let at = rank[p.slot as usize];
                series[i].push(SeriesPoint {
                    time: self.series_time(p.pos, p.time),
                    key_rank: keys[i].partition_point(|k| rank[k.slot as usize] < at) as u64
                        * self.weight(),
                    op: p.op,
                });
            }
        }
        chosen
            .iter()
            .zip(keys)
            .zip(series)
            .map(|((&(cf, requests), keys), time_series)| CfLocality {
                cf,
                requests,
                keys: keys.len() as u64 * self.weight(),
                heatmap: self.heat_buckets(&keys),
                key_ranges: self.key_ranges_of(&keys),
                time_series,
            })
            .collect()
    }

    /// The analysis of every request observed.
    pub fn finish(mut self) -> Analysis {
        let weight = self.weight();
        let objects = self.keys.len() as u64 * weight;
        let n = self.requests;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };

        // Popularity.
        let mut popularity: Vec<u64> = self.keys.iter().map(|k| u64::from(k.count)).collect();
        popularity.sort_unstable_by(|a, b| b.cmp(a));
        let mut x_hit = vec![0u64; X_HIT];
        for &c in &popularity {
            if (1..=X_HIT as u64).contains(&c) {
                x_hit[c as usize - 1] += weight;
            }
        }
        let (zipf_alpha, zipf_r2, zipf_note) = match zipf::fit(&popularity) {
            Ok(f) => (Some(f.alpha), Some(f.r2), None),
            Err(why) => (None, None, Some(why)),
        };
        let mut top_frequencies: Vec<u64> = popularity
            .iter()
            .take(self.opts.top_keys)
            .copied()
            .collect();

        // Top keys (ties: the key seen first).
        let mut top: Vec<u32> = (0..self.keys.len() as u32).collect();
        let k = self.opts.top_keys.min(top.len());
        let by_count = |a: &u32, b: &u32| {
            self.keys[*b as usize]
                .count
                .cmp(&self.keys[*a as usize].count)
                .then(a.cmp(b))
        };
        if k > 0 && k < top.len() {
            top.select_nth_unstable_by(k - 1, by_count);
        }
        top.truncate(k);
        top.sort_unstable_by(by_count);
        let mut top_keys: Vec<(String, u64, u64)> = top
            .iter()
            .map(|&s| {
                (
                    self.key_text(s as usize),
                    self.ids[s as usize],
                    u64::from(self.keys[s as usize].count),
                )
            })
            .collect();
        if let Some(h) = &self.heavy {
            // Over every request, not the sample (ties: the smaller id).
            let mut heavy: Vec<(&u64, &Counter)> = h.counts.iter().collect();
            heavy.sort_unstable_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
            heavy.truncate(self.opts.top_keys);
            top_keys = heavy
                .iter()
                .map(|(&id, (c, key))| {
                    let text = match key {
                        Some(k) => key_display(k),
                        None => id.to_string(),
                    };
                    (text, id, *c)
                })
                .collect();
            top_frequencies = top_keys.iter().map(|t| t.2).collect();
        }

        // Ops.
        let present: Vec<(Op, &OpStats)> = Op::ALL
            .iter()
            .filter_map(|&op| self.ops[op as usize].as_deref().map(|s| (op, s)))
            .collect();
        let ops: Vec<(Op, u64)> = present.iter().map(|(op, s)| (*op, s.requests)).collect();
        let mut cf_ops: Vec<(u32, Op, u64)> = self
            .cf_ops
            .iter()
            .flat_map(|(&cf, counts)| {
                Op::ALL
                    .iter()
                    .filter(|&&op| counts[op as usize] > 0)
                    .map(move |&op| (cf, op, counts[op as usize]))
            })
            .collect();
        cf_ops.sort_unstable();

        // Access counts per op, and for all ops.
        let count_hist = |counts: &mut dyn Iterator<Item = u64>| {
            let mut h: std::collections::BTreeMap<u64, u64> = Default::default();
            for c in counts.filter(|&c| c > 0) {
                *h.entry(c).or_insert(0) += weight;
            }
            h.into_iter().collect::<Vec<_>>()
        };
        let own = |op: Op, slot: usize| -> u64 {
            self.ops[op as usize]
                .as_deref()
                .and_then(|s| s.per_key.get(slot))
                .map_or(0, |&c| u64::from(c))
        };
        let count_of = |op: Op, slot: usize| -> u64 {
            if Some(op) == self.first_op {
                let others: u64 = present
                    .iter()
                    .filter(|(o, _)| *o != op)
                    .map(|(o, _)| own(*o, slot))
                    .sum();
                u64::from(self.keys[slot].count).saturating_sub(others)
            } else {
                own(op, slot)
            }
        };
        let mut access_counts = vec![(
            None,
            count_hist(&mut self.keys.iter().map(|k| u64::from(k.count))),
        )];
        if present.len() > 1 {
            for (op, _) in &present {
                access_counts.push((
                    Some(*op),
                    count_hist(&mut (0..self.keys.len()).map(|slot| count_of(*op, slot))),
                ));
            }
        }

        // Heatmap over sorted keys.
        let order = self.sorted_slots();
        let counts: Vec<KeyCount> = order
            .iter()
            .map(|&s| {
                let k = &self.keys[s as usize];
                KeyCount::of(s, u64::from(k.count), u64::from(k.writes))
            })
            .collect();
        let heatmap = self.heat_buckets(&counts);
        let key_ranges = self.key_ranges_of(&counts);
        drop(counts);

        // Key × time series.
        let mut rank = vec![0u64; order.len()];
        for (r, &s) in order.iter().enumerate() {
            rank[s as usize] = r as u64;
        }
        let has_clock = self.unit_ns.is_some();
        let time_series = self
            .samples
            .iter()
            .map(
                |&Sample {
                     pos,
                     time,
                     slot,
                     op,
                     ..
                 }| SeriesPoint {
                    time: self.series_time(pos, time),
                    key_rank: rank[slot as usize] * weight,
                    op,
                },
            )
            .collect();
        let per_cf = if self.cf_ops.len() > 1 {
            self.cf_locality(&order, &rank)
        } else {
            Vec::new()
        };

        // Correlations.
        let correlations = self.correlations();
        let mut corr_list = Vec::new();
        for i in 0..4 {
            for j in i + 1..4 {
                corr_list.push(Correlation {
                    a: CORRELATED[i].to_string(),
                    b: CORRELATED[j].to_string(),
                    pearson_r: correlations[i][j],
                });
            }
        }

        let sampled_reuses = self.stack_distance.total();
        let mean_stack_distance = if sampled_reuses == 0 {
            0.0
        } else {
            self.stack_sum as f64 / sampled_reuses as f64
        };
        if self.heavy.is_some() {
            // Reuses counted from sampled keys swing with whether a hot key is in the
            // sample; their count is rather the requests less the (estimated) first
            // requests, so the histograms are scaled to it, their shapes kept (the
            // adjustment SHARDS-adj makes, as a ratio).
            let f = n.saturating_sub(objects) as f64 / sampled_reuses.max(1) as f64;
            let scale = |v: &mut u64| *v = (*v as f64 * f).round() as u64;
            self.stack_distance.buckets.iter_mut().for_each(scale);
            self.reuse_requests.buckets.iter_mut().for_each(scale);
            self.reuse_ns.buckets.iter_mut().for_each(scale);
            self.reuse_lcs_vtime.iter_mut().for_each(scale);
            self.cold = objects;
        }
        let reuses = self.stack_distance.total();
        let summary = Summary {
            format: self.info.format.clone(),
            requests: n,
            objects,
            request_bytes: self.request_bytes,
            object_bytes: self.object_bytes,
            compulsory_miss_ratio: ratio(objects, n),
            compulsory_miss_ratio_bytes: ratio(self.object_bytes, self.request_bytes),
            frequency_mean: ratio(n, objects),
            one_hit_objects: x_hit[0],
            x_hit,
            zipf_alpha,
            zipf_r2,
            zipf_note,
            top_frequencies,
            time_span_s: self.unit_ns.map(|_| self.last_ns as f64 / 1e9),
            ops: ops
                .iter()
                .map(|(op, c)| (op.name().to_string(), *c))
                .collect(),
            column_families: self.cf_ops.len() as u64,
            reuses,
            mean_stack_distance,
            max_working_set: self
                .windows
                .iter()
                .map(|w| w.distinct_keys)
                .max()
                .unwrap_or(0),
            requests_beyond_windows: self.late_requests,
            correlations: corr_list,
            sampling: self.heavy.as_ref().map(|h| Sampling {
                method: "spatial key sampling (SHARDS, fixed sample size)".into(),
                rate: 1.0 / weight as f64,
                weight,
                max_keys: self.opts.max_keys.unwrap_or(0) as u64,
                sampled_keys: self.keys.len() as u64,
                estimated: ESTIMATED_FIGURES.iter().map(|f| f.to_string()).collect(),
                top_error_requests: h.decrements,
            }),
        };
        // A trace shorter than a QPS bucket: buckets of a width chosen from its span,
        // from the counts per millisecond of its first second.
        let short_ns =
            (has_clock && self.opts.qps_bucket_s.max(1) == 1 && self.last_ns < 1_000_000_000)
                .then(|| qps_interval_ns(self.last_ns))
                .filter(|&ns| ns < 1_000_000_000);
        let (qps_bucket, window) = if let Some(ns) = short_ns {
            (ns as f64 / 1e9, self.opts.window_s.max(1) as f64)
        } else if has_clock {
            (
                (self.opts.qps_bucket_s.max(1) * self.qps_width) as f64,
                self.opts.window_s.max(1) as f64,
            )
        } else {
            (
                (self.qps_units() * self.qps_width) as f64,
                self.window_units() as f64,
            )
        };
        let per_op = |f: fn(&OpStats) -> &ValueHist| -> Vec<(Op, ValueHist)> {
            present
                .iter()
                .filter(|(_, s)| f(s).count() > 0)
                .map(|(op, s)| (*op, f(s).clone()))
                .collect()
        };
        Analysis {
            summary,
            has_clock,
            qps: present
                .iter()
                .map(|(op, s)| match short_ns {
                    Some(ns) => {
                        let per = (ns / 1_000_000).max(1) as usize;
                        let q = s
                            .qps_first_second
                            .chunks(per)
                            .map(|c| c.iter().sum())
                            .collect();
                        (*op, q)
                    }
                    None => (*op, s.qps.clone()),
                })
                .collect(),
            key_sizes: per_op(|s| &s.key_size),
            value_sizes: per_op(|s| &s.value_size),
            scan_lengths: per_op(|s| &s.scan_len),
            object_sizes: self.object_sizes.clone(),
            ops,
            cf_ops,
            qps_bucket,
            access_counts,
            top_keys,
            heatmap,
            key_range_rule: self.opts.key_ranges,
            key_ranges,
            per_cf,
            time_series,
            stack_distance: self.stack_distance.clone(),
            reuse_requests: self.reuse_requests.clone(),
            reuse_ns: self.reuse_ns.clone(),
            reuse_lcs_vtime: self.reuse_lcs_vtime.clone(),
            cold_requests: self.cold,
            window,
            windows: self.windows.clone(),
            popularity,
            correlations,
        }
    }

    /// Pearson's r between every two of [`CORRELATED`], per request.
    fn correlations(&self) -> [[Option<f64>; 4]; 4] {
        let m = &self.moments;
        // Sums involving key hotness h (the key's request count c): over the requests of
        // a key h is constant, so Σh = Σ_k c², Σh² = Σ_k c³, Σh·x = Σ_k c·Σ_{k's} x.
        let (mut sh, mut shh, mut shv, mut shw, mut shs) = (0u128, 0u128, 0u128, 0u128, 0u128);
        // A sampled key stands for `weight` keys.
        let weight = u128::from(self.weight());
        for k in &self.keys {
            let c = u128::from(k.count);
            sh += c * c * weight;
            shh += c * c * c * weight;
            shv += c * u128::from(k.value_bytes) * weight;
            shw += c * u128::from(k.writes) * weight;
            shs += c * u128::from(k.scan_len) * weight;
        }
        let sum = [sh, m.sum[0], m.sum[1], m.sum[2]];
        let prod = |i: usize, j: usize| -> u128 {
            let (i, j) = (i.min(j), i.max(j));
            match (i, j) {
                (0, 0) => shh,
                (0, 1) => shv,
                (0, 2) => shw,
                (0, 3) => shs,
                (1, 1) => m.prod[0],
                (1, 2) => m.prod[1],
                (1, 3) => m.prod[2],
                (2, 2) => m.prod[3],
                (2, 3) => m.prod[4],
                _ => m.prod[5],
            }
        };
        let n = m.n as f64;
        let cov = |i: usize, j: usize| n * prod(i, j) as f64 - sum[i] as f64 * sum[j] as f64;
        let mut r = [[None; 4]; 4];
        for (i, row) in r.iter_mut().enumerate() {
            for (j, cell) in row.iter_mut().enumerate() {
                let d = (cov(i, i) * cov(j, j)).sqrt();
                if d > 0.0 && d.is_finite() {
                    *cell = Some((cov(i, j) / d).clamp(-1.0, 1.0));
                }
            }
        }
        r
    }
}

/// A key as text: itself when it is printable ASCII, else `0x` and its hex.
pub fn key_display(key: &[u8]) -> String {
    if !key.is_empty() && key.iter().all(|b| b.is_ascii_graphic()) {
        String::from_utf8_lossy(key).into_owned()
    } else {
        let mut s = String::with_capacity(2 + 2 * key.len());
        s.push_str("0x");
        for b in key {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcs_buckets_equal_the_formula() {
        let b = LcsBucket::new();
        let mut v = 1u64;
        while v < u64::MAX / 8 {
            for w in [v, v + 1, v.saturating_sub(1).max(1), (v / 2 * 3).max(1)] {
                assert_eq!(b.of(w), LcsBucket::formula(w), "{w}");
            }
            v = v + v / 4 + 1;
        }
        for w in 1..100_000 {
            assert_eq!(b.of(w), LcsBucket::formula(w), "{w}");
        }
        for s in &b.starts[1..] {
            assert_eq!(b.of(*s), LcsBucket::formula(*s));
            assert_eq!(b.of(s - 1), LcsBucket::formula(s - 1));
        }
    }
}

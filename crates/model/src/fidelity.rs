//! How faithful a fitted model is, as Cao et al. (FAST'20, §8, Figure 14) measure it:
//! the trace and the workloads meant to imitate it, as request streams over one key
//! space, so that a RocksDB database holding the trace's keys can run each of them.
//!
//! - [`TraceSample`]: a trace read once ([`TraceSample::read`]): its requests as
//!   [`Access`]es whose key is the key's rank among the trace's distinct keys in key
//!   order (ids numerically, byte keys bytewise), and the keys to load, in the order the
//!   trace first touches them, with their sizes.
//! - Key bytes: rank `r` is db_bench's `GenerateKeyFromInt(r)` ([`KeySpace`]), the bytes
//!   mixgraph writes for key number `r`. The model's key numbers, the YCSB choosers'
//!   and the trace's ranks therefore name the same keys, in the same order, and a
//!   replay of the trace reads the same blocks the model's key ranges stand for.
//! - The workloads: the fitted model in db_bench's four key models
//!   ([`mixgraph_accesses`]: `Prefix_dist`, `Prefix_random`, `All_dist`, `All_random`),
//!   and YCSB's key choosers fitted to the trace's popularity ([`YcsbFit`],
//!   [`ycsb_accesses`]: uniform, scrambled zipfian, hotspot, exponential, as YCSB's
//!   `CoreWorkload` draws them), each as many requests as the trace.
//! - [`Distances`]: query-level distances to the trace (Kolmogorov–Smirnov statistics
//!   of per-key access counts, value sizes, scan lengths and arrival times).
//! - [`FidelityReport`]: what `kvlab model fidelity` writes as `fidelity.json`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use kvlab_dist::mixgraph::{KeyFormat, KeyModel, MixGraph, MixGraphConfig, OpKind, SineSchedule};
use kvlab_dist::ycsb::{Exponential, Hotspot, ScrambledZipfian, Uniform};
use kvlab_trace::{KeyEncoding, KvtraceWriter, Op, TimeUnit, TraceInfo, TraceReader, TraceRecord};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

use crate::{Model, ModelError};

/// The workloads of a fidelity report, in report order: the trace's replay, the model's
/// four key models, and YCSB's four request distributions.
pub const WORKLOADS: [&str; 9] = [
    "replay",
    "prefix_dist",
    "prefix_random",
    "all_dist",
    "all_random",
    "ycsb_uniform",
    "ycsb_zipfian",
    "ycsb_hotspot",
    "ycsb_exponential",
];

/// The mixgraph key model of a workload name (`prefix_dist` …), if it is one.
pub fn key_model_of(name: &str) -> Option<KeyModel> {
    match name {
        "prefix_dist" => Some(KeyModel::PrefixDist),
        "prefix_random" => Some(KeyModel::PrefixRandom),
        "all_dist" => Some(KeyModel::AllDist),
        "all_random" => Some(KeyModel::AllRandom),
        _ => None,
    }
}

/// What a request does (the replay's reading of a trace's ops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A point read.
    Get,
    /// A write of a value.
    Put,
    /// A seek and a scan of `scan_len` records.
    Seek,
    /// A delete.
    Delete,
}

impl AccessKind {
    /// The trace op it is written as.
    pub fn op(self) -> Op {
        match self {
            AccessKind::Get => Op::Get,
            AccessKind::Put => Op::Put,
            AccessKind::Seek => Op::Seek,
            AccessKind::Delete => Op::Delete,
        }
    }
}

/// One request over the key space `0..distinct keys` (or beyond, for db_bench's
/// negative `All_dist` key numbers, which name no stored key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// What it does.
    pub kind: AccessKind,
    /// The key number (the trace key's rank in key order).
    pub key: u64,
    /// Bytes a put writes (0 otherwise).
    pub value_size_bytes: u32,
    /// Records a seek scans (0 otherwise; the replay scans at least 1).
    pub scan_len: u32,
    /// When it is due, in ns from the first request; `None` for a trace without a clock.
    pub at_ns: Option<u64>,
}

/// The key bytes of key numbers: db_bench's `GenerateKeyFromInt` for one key size (the
/// big-endian key number, padded with `'0'`), no prefix.
#[derive(Clone, Debug)]
pub struct KeySpace {
    format: KeyFormat,
}

impl KeySpace {
    /// Keys of `key_size_bytes` bytes (at least 8, so that every key number keeps all
    /// its bytes and key order is number order).
    pub fn new(key_size_bytes: usize) -> KeySpace {
        let config = MixGraphConfig {
            key_size: key_size_bytes.max(8) as i32,
            keys_per_prefix: 0,
            ..MixGraphConfig::default()
        };
        KeySpace {
            format: KeyFormat::new(&config),
        }
    }

    /// Key length in bytes.
    pub fn key_size(&self) -> usize {
        self.format.key_size()
    }

    /// The bytes of key number `key`, into `out` (replaced).
    pub fn write(&self, key: u64, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.format.buffer());
        self.format.write(key, out);
    }
}

/// A trace read once for a fidelity comparison (see the module docs).
#[derive(Clone, Debug)]
pub struct TraceSample {
    /// The trace's name.
    pub source: String,
    /// What the trace says about itself.
    pub info: TraceInfo,
    /// Its requests, keys as ranks.
    pub accesses: Vec<Access>,
    /// Every distinct key (rank) with its size (the first traced size, or the default),
    /// in the order the trace first touches them.
    pub load: Vec<(u64, u32)>,
    /// Key length of the database's keys (the trace's most common key length, at
    /// least 8 bytes).
    pub key_size_bytes: usize,
    /// Requests a store cannot replay (`deleterange`, `other`), left out.
    pub skipped: u64,
}

/// A trace key while reading: a numeric id or bytes.
enum Keys {
    Ids(HashMap<u64, u32>, Vec<u64>),
    Bytes(HashMap<Vec<u8>, u32>, Vec<Vec<u8>>),
}

impl TraceSample {
    /// Reads the first `limit` requests of `reader` (all without a limit). Writes and
    /// keys without a traced size take `default_value_size_bytes`. `source` names the
    /// trace in errors.
    pub fn read<R: TraceReader + ?Sized>(
        reader: &mut R,
        source: &str,
        limit: Option<u64>,
        default_value_size_bytes: u32,
    ) -> Result<TraceSample, ModelError> {
        let info = reader.info().clone();
        let ns_per_tick = info.time_unit.nanos();
        let mut keys = match info.key_encoding {
            KeyEncoding::Id => Keys::Ids(HashMap::new(), Vec::new()),
            KeyEncoding::Bytes => Keys::Bytes(HashMap::new(), Vec::new()),
        };
        let mut accesses = Vec::new();
        let mut first_sizes: Vec<u32> = Vec::new();
        let mut key_lengths: BTreeMap<usize, u64> = BTreeMap::new();
        let mut first_ts = None;
        let mut skipped = 0u64;
        let mut rec = TraceRecord::default();
        let mut n = 0u64;
        while limit.is_none_or(|l| n < l) && reader.read(&mut rec)? {
            n += 1;
            let kind = match rec.op {
                Op::Seek | Op::SeekForPrev | Op::Scan => AccessKind::Seek,
                op if op.is_read() => AccessKind::Get,
                Op::Delete | Op::SingleDelete => AccessKind::Delete,
                Op::DeleteRange | Op::Other => {
                    skipped += 1;
                    continue;
                }
                _ => AccessKind::Put,
            };
            // The replay's key bytes: byte keys as they are, ids in decimal.
            let by_id = matches!(keys, Keys::Ids(..)) && rec.key.is_empty();
            let key_len = if by_id {
                decimal_len(rec.id)
            } else {
                rec.key.len()
            };
            *key_lengths.entry(key_len).or_insert(0) += 1;
            let size = if info.has_sizes && rec.value_size > 0 {
                u32::try_from(rec.value_size).unwrap_or(u32::MAX)
            } else {
                default_value_size_bytes
            };
            let next = first_sizes.len() as u32;
            let index = match &mut keys {
                Keys::Ids(map, list) => {
                    let id = if by_id {
                        rec.id
                    } else {
                        kvlab_trace::key_id(&rec.key)
                    };
                    *map.entry(id).or_insert_with(|| {
                        list.push(id);
                        next
                    })
                }
                Keys::Bytes(map, list) => {
                    if let Some(&i) = map.get(rec.key.as_slice()) {
                        i
                    } else {
                        map.insert(rec.key.clone(), next);
                        list.push(rec.key.clone());
                        next
                    }
                }
            };
            if index == next {
                first_sizes.push(size);
            }
            let at_ns = ns_per_tick.map(|ns| {
                let t0 = *first_ts.get_or_insert(rec.ts);
                rec.ts.saturating_sub(t0).saturating_mul(ns)
            });
            accesses.push(Access {
                kind,
                // The index for now; the rank below.
                key: u64::from(index),
                value_size_bytes: if kind == AccessKind::Put { size } else { 0 },
                scan_len: if kind == AccessKind::Seek {
                    rec.scan_len
                } else {
                    0
                },
                at_ns,
            });
        }
        // Ranks: the distinct keys in key order.
        let mut order: Vec<u32> = (0..first_sizes.len() as u32).collect();
        match &keys {
            Keys::Ids(_, list) => order.sort_unstable_by_key(|&i| list[i as usize]),
            Keys::Bytes(_, list) => order.sort_unstable_by(|&a, &b| {
                list[a as usize].as_slice().cmp(list[b as usize].as_slice())
            }),
        }
        drop(keys);
        let mut rank = vec![0u64; order.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i as usize] = r as u64;
        }
        for a in &mut accesses {
            a.key = rank[a.key as usize];
        }
        let load = first_sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| (rank[i], s))
            .collect();
        let modal = key_lengths
            .iter()
            .max_by_key(|(&len, &c)| (c, std::cmp::Reverse(len)))
            .map_or(16, |(&len, _)| len);
        Ok(TraceSample {
            source: source.to_owned(),
            info,
            accesses,
            load,
            key_size_bytes: modal.max(8),
            skipped,
        })
    }

    /// Distinct keys.
    pub fn distinct_keys(&self) -> u64 {
        self.load.len() as u64
    }

    /// The span of the trace's clock in ns (`None` without a clock).
    pub fn span_ns(&self) -> Option<u64> {
        self.accesses.last().and_then(|a| a.at_ns)
    }

    /// The shares of gets, puts, seeks and deletes.
    pub fn mix(&self) -> [f64; 4] {
        let mut c = [0u64; 4];
        for a in &self.accesses {
            c[a.kind as usize] += 1;
        }
        let n = self.accesses.len().max(1) as f64;
        c.map(|v| v as f64 / n)
    }

    /// Per-key access counts, most accessed first.
    pub fn ranked_counts(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.load.len()];
        for a in &self.accesses {
            counts[a.key as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts
    }
}

/// Digits of `v` in decimal.
fn decimal_len(v: u64) -> usize {
    v.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Writes `accesses` as a kvtrace file of byte keys ([`KeySpace`] of `key_size_bytes`)
/// that `kvlab replay` replays: times in ns when every access has one, else positions.
pub fn write_kvtrace(
    path: &Path,
    accesses: &[Access],
    key_size_bytes: usize,
    source: &str,
) -> Result<u64, ModelError> {
    let io = |source: std::io::Error| ModelError::Io {
        path: path.to_path_buf(),
        source,
    };
    let timed = accesses.iter().all(|a| a.at_ns.is_some());
    let info = TraceInfo {
        format: "kvlab.fidelity".into(),
        key_encoding: KeyEncoding::Bytes,
        time_unit: if timed {
            TimeUnit::Nanos
        } else {
            TimeUnit::Sequence
        },
        has_sizes: true,
        meta: vec![("source".into(), source.to_owned())],
        ..TraceInfo::default()
    };
    let file = std::fs::File::create(path).map_err(io)?;
    let mut writer = KvtraceWriter::new(std::io::BufWriter::new(file), path, &info)?;
    let space = KeySpace::new(key_size_bytes);
    let mut rec = TraceRecord::default();
    let mut key = Vec::new();
    for (i, a) in accesses.iter().enumerate() {
        rec.clear();
        space.write(a.key, &mut key);
        rec.set_key(&key);
        rec.op = a.kind.op();
        rec.ts = if timed {
            a.at_ns.unwrap_or(0)
        } else {
            i as u64
        };
        rec.value_size = u64::from(a.value_size_bytes);
        rec.scan_len = a.scan_len;
        writer.write(&rec)?;
    }
    writer.finish()?;
    Ok(accesses.len() as u64)
}

/// The load of a sample: a put of every distinct key, with its size, in the order the
/// trace first touches it.
pub fn load_accesses(sample: &TraceSample) -> Vec<Access> {
    sample
        .load
        .iter()
        .map(|&(key, size)| Access {
            kind: AccessKind::Put,
            key,
            value_size_bytes: size,
            scan_len: 0,
            at_ns: None,
        })
        .collect()
}

/// `n` requests of `model` with db_bench's key model `key_model`, keys of
/// `key_size_bytes` (thread 0 of db_bench's mixgraph, [`MixGraph`]). Due times follow
/// the model's sine rate when it has one (its first interval too, which db_bench runs at
/// 1 M ops/s), else spread evenly over `span_ns`. A model of
/// one key range (`keyrange_num = 1`, no weights) runs its key-range variants as one
/// range of weight 1.
pub fn mixgraph_accesses(
    model: &Model,
    key_model: KeyModel,
    n: u64,
    key_size_bytes: usize,
    span_ns: Option<u64>,
) -> Result<Vec<Access>, ModelError> {
    let refused = |e: kvlab_dist::MixGraphError| ModelError::Generate {
        key_model: key_model.paper_name().to_owned(),
        message: e.to_string(),
    };
    let mut config = model.to_config();
    config.key_model = Some(key_model);
    config.key_size = key_size_bytes.max(8) as i32;
    config.keys_per_prefix = 0;
    config.threads = 1;
    let no_weights = [
        config.keyrange_dist_a,
        config.keyrange_dist_b,
        config.keyrange_dist_c,
        config.keyrange_dist_d,
    ]
    .iter()
    .all(|&w| w == 0.0);
    if config.keyrange_num <= 1 && no_weights {
        // A key space smaller than one SST file is one key range (db_bench refuses a
        // key-range model without weights): the whole weight on it.
        config.keyrange_num = 1;
        config.keyrange_dist_a = 1.0;
    }
    let mut gen = MixGraph::new(&config, 0).map_err(refused)?;
    let mut schedule = if config.sine_mix_rate {
        // The first interval at the sine's rate: db_bench runs it at 1 M ops/s, which
        // would put the model's first seconds of requests at once.
        Some(
            SineSchedule::new(&config)
                .map_err(refused)?
                .modulate_first_interval(),
        )
    } else {
        None
    };
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let op = gen.next_op();
        let at_ns = match &mut schedule {
            Some(s) => Some(s.next_due_ns()),
            None => span_ns.map(|span| even(i, n, span)),
        };
        out.push(Access {
            kind: match op.kind {
                OpKind::Get => AccessKind::Get,
                OpKind::Put => AccessKind::Put,
                OpKind::Seek => AccessKind::Seek,
            },
            key: op.key_number,
            value_size_bytes: u32::try_from(op.value_size_bytes).unwrap_or(u32::MAX),
            scan_len: u32::try_from(op.scan_len).unwrap_or(u32::MAX),
            at_ns,
        });
    }
    Ok(out)
}

/// The trace's requests in a random order (Fisher–Yates, seeded), due times kept in
/// place: the same per-key popularity, op mix and sizes without the trace's temporal
/// locality — what any independent-draws model, however well fitted, can reach at best.
pub fn shuffled(accesses: &[Access], seed: u64) -> Vec<Access> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = accesses.to_vec();
    for i in (1..out.len()).rev() {
        let j = kvlab_dist::next_below(&mut rng, i as u64 + 1) as usize;
        out.swap(i, j);
    }
    for (o, a) in out.iter_mut().zip(accesses) {
        o.at_ns = a.at_ns;
    }
    out
}

/// Request `i` of `n` spread evenly over `span` ns.
fn even(i: u64, n: u64, span: u64) -> u64 {
    (u128::from(i) * u128::from(span) / u128::from(n.max(1))) as u64
}

/// YCSB's request distributions fitted to a trace's popularity (keys ranked by access
/// count), in YCSB's own parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct YcsbFit {
    /// The zipfian constant θ: minus the slope of log count against log rank (ranks
    /// log-spaced), kept in YCSB's `(0, 1)`.
    pub zipfian_constant: f64,
    /// `hotspotdatafraction`: the hot share of the keys…
    pub hotspot_data_fraction: f64,
    /// …and `hotspotopnfraction`, the share of requests to it (the pair whose two-piece
    /// CDF is nearest the trace's, in the maximum distance).
    pub hotspot_opn_fraction: f64,
    /// `exponential.percentile`.
    pub exponential_percentile: f64,
    /// `exponential.frac`: the share of the keys (the hottest) that take
    /// `exponential.percentile` percent of the requests.
    pub exponential_frac: f64,
    /// Records a YCSB scan reads: uniform in `1..=max` (`maxscanlength`: the trace's
    /// longest scan, at least 1).
    pub max_scan_length: u32,
    /// A YCSB write's value size (the trace's mean write size, or the default).
    pub value_size_bytes: u32,
}

impl YcsbFit {
    /// Fits the parameters to `sample`'s popularity, scans and writes.
    pub fn fit(sample: &TraceSample, default_value_size_bytes: u32) -> YcsbFit {
        let counts = sample.ranked_counts();
        let total: u64 = counts.iter().sum();
        let n = counts.len().max(1);
        // Log-spaced ranks with at least one access.
        let ranks = log_ranks(n, 200);
        let points: Vec<(f64, f64)> = ranks
            .iter()
            .filter(|&&r| counts[r - 1] > 0)
            .map(|&r| ((r as f64).ln(), (counts[r - 1] as f64).ln()))
            .collect();
        let slope = crate::solve::linear_regression(points.iter().copied()).map_or(0.99, |f| -f.1);
        let zipfian_constant = if slope.is_finite() {
            slope.clamp(0.01, 0.995)
        } else {
            0.99
        };
        // The CDF over ranks.
        let mut cdf = Vec::with_capacity(n);
        let mut cum = 0u64;
        for &c in &counts {
            cum += c;
            cdf.push(cum as f64 / total.max(1) as f64);
        }
        let at = |k: usize| if k == 0 { 0.0 } else { cdf[(k - 1).min(n - 1)] };
        let mut best = (0.2, 0.8, f64::INFINITY);
        for h_pct in 1..100 {
            let h = f64::from(h_pct) / 100.0;
            let hot = ((h * n as f64).round() as usize).clamp(1, n);
            let p = at(hot);
            let err = ranks
                .iter()
                .map(|&r| {
                    let g = if r <= hot {
                        p * r as f64 / hot as f64
                    } else {
                        p + (1.0 - p) * (r - hot) as f64 / (n - hot).max(1) as f64
                    };
                    (g - at(r)).abs()
                })
                .fold(0.0, f64::max);
            if err < best.2 {
                best = (h, p, err);
            }
        }
        let percentile = 95.0;
        let r95 = cdf
            .iter()
            .position(|&f| f >= percentile / 100.0)
            .map_or(n, |i| i + 1);
        let puts: Vec<u32> = sample
            .accesses
            .iter()
            .filter(|a| a.kind == AccessKind::Put)
            .map(|a| a.value_size_bytes)
            .collect();
        let value_size_bytes = if puts.is_empty() {
            default_value_size_bytes
        } else {
            (puts.iter().map(|&s| u64::from(s)).sum::<u64>() / puts.len() as u64) as u32
        };
        YcsbFit {
            zipfian_constant,
            hotspot_data_fraction: best.0,
            hotspot_opn_fraction: best.1,
            exponential_percentile: percentile,
            exponential_frac: r95 as f64 / n as f64,
            max_scan_length: sample
                .accesses
                .iter()
                .map(|a| a.scan_len)
                .max()
                .unwrap_or(0)
                .max(1),
            value_size_bytes,
        }
    }
}

/// About `points` ranks in `1..=n`, log-spaced, increasing, each once.
fn log_ranks(n: usize, points: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..points)
        .map(|i| {
            let t = i as f64 / (points - 1) as f64;
            ((n as f64).powf(t).round() as usize).clamp(1, n)
        })
        .collect();
    v.dedup();
    v
}

/// YCSB's request distributions (`requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YcsbDistribution {
    /// `uniform`.
    Uniform,
    /// `zipfian` (YCSB's `ScrambledZipfianGenerator`: hot keys scattered by FNV).
    Zipfian,
    /// `hotspot` (the hot set is the lowest key numbers).
    Hotspot,
    /// `exponential` (the hottest keys are the last inserted: the highest numbers).
    Exponential,
}

impl YcsbDistribution {
    /// The distribution of a workload name (`ycsb_zipfian` …), if it is one.
    pub fn of(name: &str) -> Option<YcsbDistribution> {
        match name {
            "ycsb_uniform" => Some(YcsbDistribution::Uniform),
            "ycsb_zipfian" => Some(YcsbDistribution::Zipfian),
            "ycsb_hotspot" => Some(YcsbDistribution::Hotspot),
            "ycsb_exponential" => Some(YcsbDistribution::Exponential),
            _ => None,
        }
    }
}

/// `sample.accesses.len()` requests with YCSB's key choice `dist` over the sample's
/// keys (`CoreWorkload.nextKeynum`, site.ycsb.workloads.CoreWorkload), the sample's op
/// mix, writes of [`YcsbFit::value_size_bytes`] and scans uniform in
/// `1..=max_scan_length`, evenly spread over the trace's clock span.
pub fn ycsb_accesses(
    sample: &TraceSample,
    fit: &YcsbFit,
    dist: YcsbDistribution,
    seed: u64,
) -> Vec<Access> {
    let n = sample.accesses.len() as u64;
    let keys = sample.distinct_keys().max(1);
    let last = keys - 1;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let uniform = Uniform::new(0, last);
    let zipfian = ScrambledZipfian::new(0, last, fit.zipfian_constant);
    let hotspot = Hotspot::new(0, last, fit.hotspot_data_fraction, fit.hotspot_opn_fraction);
    let exponential = Exponential::new(
        fit.exponential_percentile,
        keys as f64 * fit.exponential_frac,
    );
    let scan = Uniform::new(1, u64::from(fit.max_scan_length));
    let mix = sample.mix();
    let span = sample.span_ns();
    (0..n)
        .map(|i| {
            let key = match dist {
                YcsbDistribution::Uniform => uniform.next(&mut rng),
                YcsbDistribution::Zipfian => zipfian.next(&mut rng),
                YcsbDistribution::Hotspot => hotspot.next(&mut rng),
                // CoreWorkload: lastValue − ⌊draw⌋, drawn again while negative.
                YcsbDistribution::Exponential => loop {
                    let x = exponential.next(&mut rng);
                    if x < keys as f64 {
                        break last - x as u64;
                    }
                },
            };
            let u = kvlab_dist::next_f64(&mut rng);
            let kind = if u < mix[0] {
                AccessKind::Get
            } else if u < mix[0] + mix[1] {
                AccessKind::Put
            } else if u < mix[0] + mix[1] + mix[2] {
                AccessKind::Seek
            } else {
                AccessKind::Delete
            };
            Access {
                kind,
                key,
                value_size_bytes: if kind == AccessKind::Put {
                    fit.value_size_bytes
                } else {
                    0
                },
                scan_len: if kind == AccessKind::Seek {
                    scan.next(&mut rng) as u32
                } else {
                    0
                },
                at_ns: span.map(|s| even(i, n, s)),
            }
        })
        .collect()
}

/// Query-level distances of a workload to the trace: two-sample Kolmogorov–Smirnov
/// statistics (the largest gap between the two empirical CDFs; 0 = the same), `None`
/// when either side has nothing to compare.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Distances {
    /// Of the accesses per key (over the keys each side touches).
    pub access_counts_ks: Option<f64>,
    /// Of the value sizes of writes.
    pub value_sizes_ks: Option<f64>,
    /// Of the scan lengths of seeks.
    pub scan_lengths_ks: Option<f64>,
    /// Of the requests' due times at 1 ms resolution: the cumulative QPS curves.
    pub qps_ks: Option<f64>,
}

impl Distances {
    /// The distances of `other` to `trace`.
    pub fn between(trace: &[Access], other: &[Access]) -> Distances {
        let counts = |a: &[Access]| {
            let mut per_key: HashMap<u64, u64> = HashMap::new();
            for x in a {
                *per_key.entry(x.key).or_insert(0) += 1;
            }
            histogram(per_key.into_values())
        };
        let of = |a: &[Access], kind: AccessKind, f: fn(&Access) -> u64| {
            histogram(a.iter().filter(|x| x.kind == kind).map(f))
        };
        let times = |a: &[Access]| {
            if a.iter().all(|x| x.at_ns.is_some()) {
                histogram(a.iter().map(|x| x.at_ns.unwrap_or(0) / 1_000_000))
            } else {
                BTreeMap::new()
            }
        };
        Distances {
            access_counts_ks: ks(&counts(trace), &counts(other)),
            value_sizes_ks: ks(
                &of(trace, AccessKind::Put, |x| u64::from(x.value_size_bytes)),
                &of(other, AccessKind::Put, |x| u64::from(x.value_size_bytes)),
            ),
            scan_lengths_ks: ks(
                &of(trace, AccessKind::Seek, |x| u64::from(x.scan_len)),
                &of(other, AccessKind::Seek, |x| u64::from(x.scan_len)),
            ),
            qps_ks: ks(&times(trace), &times(other)),
        }
    }
}

/// Counts of each value.
fn histogram(values: impl Iterator<Item = u64>) -> BTreeMap<u64, u64> {
    let mut h = BTreeMap::new();
    for v in values {
        *h.entry(v).or_insert(0) += 1;
    }
    h
}

/// The two-sample Kolmogorov–Smirnov statistic of two histograms; `None` when either is
/// empty.
pub fn ks(a: &BTreeMap<u64, u64>, b: &BTreeMap<u64, u64>) -> Option<f64> {
    let (na, nb) = (a.values().sum::<u64>(), b.values().sum::<u64>());
    if na == 0 || nb == 0 {
        return None;
    }
    let mut values: Vec<u64> = a.keys().chain(b.keys()).copied().collect();
    values.sort_unstable();
    values.dedup();
    let (mut ca, mut cb, mut d) = (0u64, 0u64, 0.0f64);
    for v in values {
        ca += a.get(&v).copied().unwrap_or(0);
        cb += b.get(&v).copied().unwrap_or(0);
        d = d.max((ca as f64 / na as f64 - cb as f64 / nb as f64).abs());
    }
    Some(d)
}

/// Requests per second of `accesses` (empty without due times).
pub fn qps_per_second(accesses: &[Access]) -> Vec<u64> {
    qps_counts(accesses, 1_000_000_000)
}

/// Requests in each interval of `interval_ns` from the first request (empty without due
/// times; an interval of 0 counts as 1 ns).
pub fn qps_counts(accesses: &[Access], interval_ns: u64) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for a in accesses {
        let Some(t) = a.at_ns else {
            return Vec::new();
        };
        let i = (t / interval_ns.max(1)) as usize;
        if i >= out.len() {
            out.resize(i + 1, 0);
        }
        out[i] += 1;
    }
    out
}

/// The interval the request rate of `accesses` is counted in, chosen from their span
/// ([`kvlab_trace::analyze::qps_interval_ns`]): a second for a trace of a second or
/// more, less for a shorter one. `None` without due times.
pub fn qps_interval_ns(accesses: &[Access]) -> Option<u64> {
    let span = accesses
        .iter()
        .map(|a| a.at_ns)
        .try_fold(0u64, |m, t| Some(m.max(t?)))?;
    Some(kvlab_trace::analyze::qps_interval_ns(span))
}

/// One workload's row of a fidelity report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkloadFidelity {
    /// One of [`WORKLOADS`].
    pub name: String,
    /// Requests sent.
    pub requests: u64,
    /// Point reads the store answered (found or not).
    pub reads: u64,
    /// Data blocks read from storage: RocksDB's `rocksdb.block.cache.data.miss`.
    pub block_reads: u64,
    /// Block cache hits: `rocksdb.block.cache.hit`.
    pub block_cache_hits: u64,
    /// Bytes read from SST files: `rocksdb.last.level.read.bytes` +
    /// `rocksdb.non.last.level.read.bytes`.
    pub read_bytes: u64,
    /// Bytes written to SST files: `rocksdb.flush.write.bytes` +
    /// `rocksdb.compact.write.bytes`, during the run and when the database next opens
    /// (RocksDB then flushes what the memtable held).
    pub write_bytes: u64,
    /// Each figure divided by the replay's (`None` when the replay's is 0).
    pub ratios: Ratios,
    /// Query-level distances to the trace.
    pub distances: Distances,
    /// Why the workload did not run (its figures are then 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A workload's figures over the replay's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Ratios {
    /// Of [`WorkloadFidelity::block_reads`].
    pub block_reads: Option<f64>,
    /// Of [`WorkloadFidelity::block_cache_hits`].
    pub block_cache_hits: Option<f64>,
    /// Of [`WorkloadFidelity::read_bytes`].
    pub read_bytes: Option<f64>,
    /// Of [`WorkloadFidelity::write_bytes`].
    pub write_bytes: Option<f64>,
}

impl Ratios {
    /// `w`'s figures over `replay`'s.
    pub fn of(w: &WorkloadFidelity, replay: &WorkloadFidelity) -> Ratios {
        let r = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
        Ratios {
            block_reads: r(w.block_reads, replay.block_reads),
            block_cache_hits: r(w.block_cache_hits, replay.block_cache_hits),
            read_bytes: r(w.read_bytes, replay.read_bytes),
            write_bytes: r(w.write_bytes, replay.write_bytes),
        }
    }
}

/// `fidelity.json`: the comparison of a trace's replay with the model and YCSB.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FidelityReport {
    /// The trace.
    pub trace: String,
    /// Its format.
    pub format: String,
    /// Requests of the trace compared (each workload sends as many).
    pub requests: u64,
    /// Distinct keys (the database's keys).
    pub distinct_keys: u64,
    /// Key length of the database's keys.
    pub key_size_bytes: usize,
    /// Bytes of the database's values, summed.
    pub loaded_bytes: u64,
    /// The block cache of every run.
    pub block_cache_bytes: u64,
    /// The model file fitted to the trace.
    pub model: String,
    /// YCSB's parameters fitted to the trace.
    pub ycsb: Option<YcsbFit>,
    /// One row per workload, in [`WORKLOADS`] order.
    pub workloads: Vec<WorkloadFidelity>,
    /// Rows that explain the others: `replay_shuffled`, the trace's requests in a
    /// random order ([`shuffled`]).
    pub diagnostics: Vec<WorkloadFidelity>,
    /// How the figures were taken and what was left out.
    pub notes: Vec<String>,
}

impl FidelityReport {
    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The workload named `name`.
    pub fn workload(&self, name: &str) -> Option<&WorkloadFidelity> {
        self.workloads.iter().find(|w| w.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_bytes_sort_as_key_numbers() {
        let space = KeySpace::new(6);
        assert_eq!(space.key_size(), 8);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (x, y) in [(0u64, 1u64), (255, 256), (9, 10), (65_535, 1 << 20)] {
            space.write(x, &mut a);
            space.write(y, &mut b);
            assert!(a < b, "{x} < {y}");
        }
        let space = KeySpace::new(16);
        space.write(0x0102, &mut a);
        assert_eq!(&a[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&a[8..], b"00000000");
    }

    #[test]
    fn ks_of_equal_and_disjoint_samples() {
        let a = histogram([1, 2, 3].into_iter());
        let b = histogram([4, 5].into_iter());
        assert_eq!(ks(&a, &a), Some(0.0));
        assert_eq!(ks(&a, &b), Some(1.0));
        assert_eq!(ks(&a, &BTreeMap::new()), None);
        let c = histogram([1, 1, 3, 3].into_iter());
        // F_a(1) = 1/3, F_c(1) = 1/2; F_a(2) = 2/3, F_c(2) = 1/2.
        let d = ks(&a, &c).unwrap_or(f64::NAN);
        assert!((d - 1.0 / 6.0).abs() < 1e-12, "{d}");
    }

    /// A trace of ids, as an ARC block trace reads.
    struct Ids(Vec<(Op, u64)>, TraceInfo);

    impl TraceReader for Ids {
        fn info(&self) -> &TraceInfo {
            &self.1
        }

        fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, kvlab_trace::TraceError> {
            rec.clear();
            if self.0.is_empty() {
                return Ok(false);
            }
            let (op, id) = self.0.remove(0);
            rec.op = op;
            rec.id = id;
            Ok(true)
        }
    }

    #[test]
    fn ids_rank_in_numeric_order_and_load_in_first_touch_order() {
        let info = TraceInfo {
            key_encoding: KeyEncoding::Id,
            time_unit: TimeUnit::Sequence,
            ..TraceInfo::default()
        };
        // Decimal text would sort 100 < 20 < 9; numbers sort 9 < 20 < 100.
        let trace = vec![
            (Op::Get, 20),
            (Op::Get, 100),
            (Op::Put, 9),
            (Op::Get, 20),
            (Op::DeleteRange, 5),
        ];
        let mut reader = Ids(trace, info);
        let s = TraceSample::read(&mut reader, "t", None, 1024).expect("reads");
        let keys: Vec<u64> = s.accesses.iter().map(|a| a.key).collect();
        assert_eq!(keys, [1, 2, 0, 1]);
        assert_eq!(s.load, [(1, 1024), (2, 1024), (0, 1024)]);
        assert_eq!(s.skipped, 1);
        assert_eq!(s.accesses[2].kind, AccessKind::Put);
        assert_eq!(s.accesses[2].value_size_bytes, 1024);
        // Ids of up to 3 digits: keys of at least 8 bytes.
        assert_eq!(s.key_size_bytes, 8);
        assert_eq!(s.ranked_counts(), [2, 1, 1]);
        let mut limited = Ids(vec![(Op::Get, 7), (Op::Get, 8)], reader.1.clone());
        let s = TraceSample::read(&mut limited, "t", Some(1), 1).expect("reads");
        assert_eq!(s.accesses.len(), 1);
    }

    #[test]
    fn the_model_and_the_trace_name_the_same_key_bytes() {
        // Key number k of db_bench's mixgraph (MixGraph's own key bytes) is the bytes the
        // replay of rank k writes.
        let model = Model {
            mixgraph: crate::MixGraphParams {
                num: Some(1000),
                key_size: Some(16),
                ..crate::MixGraphParams::default()
            },
            ..Model::default()
        };
        let mut config = model.to_config();
        config.key_model = Some(KeyModel::AllRandom);
        let mut gen = MixGraph::new(&config, 0).expect("a valid model");
        let space = KeySpace::new(16);
        let mut key = Vec::new();
        for _ in 0..100 {
            let op = gen.next_op();
            space.write(op.key_number, &mut key);
            assert_eq!(op.key, key.as_slice());
            assert!(op.key_number < 1000);
        }
    }

    #[test]
    fn a_shuffle_keeps_every_request_and_the_clock() {
        let a: Vec<Access> = (0..100)
            .map(|i| Access {
                kind: AccessKind::Get,
                key: i % 7,
                value_size_bytes: 0,
                scan_len: 0,
                at_ns: Some(i * 10),
            })
            .collect();
        let s = shuffled(&a, 1);
        assert_ne!(s, a);
        let mut keys: Vec<u64> = s.iter().map(|x| x.key).collect();
        keys.sort_unstable();
        let mut want: Vec<u64> = a.iter().map(|x| x.key).collect();
        want.sort_unstable();
        assert_eq!(keys, want);
        assert!(s.iter().zip(&a).all(|(x, y)| x.at_ns == y.at_ns));
    }

    /// A sample whose key `k` (a rank) is drawn by `draw`.
    fn sample_of(keys: u64, n: usize, mut draw: impl FnMut() -> u64) -> TraceSample {
        let accesses: Vec<Access> = (0..n)
            .map(|_| Access {
                kind: AccessKind::Get,
                key: draw(),
                value_size_bytes: 0,
                scan_len: 0,
                at_ns: None,
            })
            .collect();
        TraceSample {
            source: "t".into(),
            info: TraceInfo::default(),
            accesses,
            load: (0..keys).map(|k| (k, 100)).collect(),
            key_size_bytes: 16,
            skipped: 0,
        }
    }

    #[test]
    fn ycsb_parameters_come_back_from_ycsb_generators() {
        // YCSB's own generators (kvlab-dist's ports of site.ycsb.generator) draw the
        // requests; the fit must find their parameters again.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let zipf = kvlab_dist::ycsb::Zipfian::new(0, 9_999, 0.8);
        let s = sample_of(10_000, 2_000_000, || zipf.next(&mut rng));
        let fit = YcsbFit::fit(&s, 100);
        assert!(
            (fit.zipfian_constant - 0.8).abs() < 0.05,
            "θ {}",
            fit.zipfian_constant
        );
        let hot = Hotspot::new(0, 9_999, 0.1, 0.9);
        let s = sample_of(10_000, 1_000_000, || hot.next(&mut rng));
        let fit = YcsbFit::fit(&s, 100);
        assert!((fit.hotspot_data_fraction - 0.1).abs() < 0.015, "{fit:?}");
        assert!((fit.hotspot_opn_fraction - 0.9).abs() < 0.02, "{fit:?}");
        // Uniform requests: the hottest 95 % of keys take about 95 % of the requests.
        let uni = Uniform::new(0, 9_999);
        let s = sample_of(10_000, 1_000_000, || uni.next(&mut rng));
        let fit = YcsbFit::fit(&s, 100);
        assert!((fit.exponential_frac - 0.95).abs() < 0.03, "{fit:?}");
        assert!(fit.zipfian_constant < 0.1, "{fit:?}");
    }

    #[test]
    fn decimal_lengths() {
        assert_eq!(decimal_len(0), 1);
        assert_eq!(decimal_len(9), 1);
        assert_eq!(decimal_len(10), 2);
        assert_eq!(decimal_len(u64::MAX), 20);
    }
}

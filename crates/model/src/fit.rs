//! [`fit()`]: one pass over a trace, then every part of the mixgraph model fitted
//! ([`crate::sizes`], [`crate::keys`], [`crate::qps`]) and assembled into a [`Model`]
//! and a [`FitReport`].
//!
//! Op names map to db_bench's three kinds: reads (`get`, `gets`, `read`, `multiget`) →
//! Get, writes (`put`, `set`, `merge`, `update`, …) → Put, seeks and scans → Seek.
//! Deletes and unnamed ops are counted and reported, not modelled (mixgraph issues
//! none). The key models count the accesses of the three modelled kinds.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

use kvlab_trace::{KeyEncoding, Op, TraceReader, TraceRecord};
use serde::{Deserialize, Serialize};

use crate::keys::{fit_key_ranges, fit_power, KeyRangeFit, KeyRanges, PowerFit, RangeCut};
use crate::model::{MixGraphParams, Model};
use crate::qps::{fit_qps, QpsFit};
use crate::sizes::{fit_sizes, SizeFit};
use crate::ModelError;

/// How the sorted keys are cut into key ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyRangeRule {
    /// As many keys per range as one SST file of RocksDB's defaults holds:
    /// 64 MiB (`target_file_size_base`) over the key size plus the mean value size —
    /// the paper's choice (a key range per SST file).
    SstFile,
    /// This many distinct keys per range.
    KeysPerRange(u64),
    /// This many ranges (`keyrange_num`).
    Ranges(u64),
}

/// What [`fit()`] is told.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// The trace's name for the model's header and errors (its path).
    pub source: String,
    /// How many key ranges.
    pub key_ranges: KeyRangeRule,
    /// How keys are grouped into ranges.
    pub range_cut: RangeCut,
    /// The least share of the per-second rate's variance a sine must explain to be kept
    /// (it must also beat the constant by BIC).
    pub min_sine_r2: f64,
}

impl std::str::FromStr for KeyRangeRule {
    type Err = String;

    /// `sst`, `keys:N` (keys per range) or `ranges:N` (`keyrange_num`).
    fn from_str(s: &str) -> Result<KeyRangeRule, String> {
        let number = |n: &str| {
            n.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!("key-range rule {s:?}: expected a positive integer after ':'")
            })
        };
        match s.split_once(':') {
            None if s == "sst" => Ok(KeyRangeRule::SstFile),
            Some(("keys", n)) => Ok(KeyRangeRule::KeysPerRange(number(n)?)),
            Some(("ranges", n)) => Ok(KeyRangeRule::Ranges(number(n)?)),
            _ => Err(format!(
                "key-range rule {s:?}: expected sst, keys:N (keys per range) or ranges:N"
            )),
        }
    }
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions {
            source: "trace".into(),
            key_ranges: KeyRangeRule::SstFile,
            range_cut: RangeCut::EqualKeys,
            min_sine_r2: 0.25,
        }
    }
}

/// RocksDB's default `target_file_size_base` (64 MiB).
const SST_FILE_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// The most seconds of per-second rates kept (115 days); longer traces skip the QPS fit.
const MAX_SECONDS: u64 = 10_000_000;

/// Requests per kind, as db_bench's three kinds plus what mixgraph does not issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    /// Reads → Get.
    pub get: u64,
    /// Writes and merges → Put.
    pub put: u64,
    /// Seeks and scans → Seek.
    pub seek: u64,
    /// Deletes (reported, not modelled).
    pub delete: u64,
    /// Ops of no kind (reported, not modelled).
    pub other: u64,
}

impl OpCounts {
    /// Get + Put + Seek.
    pub fn modelled(&self) -> u64 {
        self.get + self.put + self.seek
    }

    fn add(&mut self, kind: Kind) {
        match kind {
            Kind::Get => self.get += 1,
            Kind::Put => self.put += 1,
            Kind::Seek => self.seek += 1,
            Kind::Delete => self.delete += 1,
            Kind::Other => self.other += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::thousandths;

    #[test]
    fn mix_is_written_in_thousandths_summing_to_one() {
        assert_eq!(thousandths(&[849_830, 140_130, 10_040]), [0.85, 0.14, 0.01]);
        assert_eq!(thousandths(&[1, 1, 1]), [0.334, 0.333, 0.333]);
        // A rare kind keeps a slot.
        assert_eq!(thousandths(&[1_000_000, 0, 3]), [0.999, 0.0, 0.001]);
        assert_eq!(thousandths(&[0, 5, 0]), [0.0, 1.0, 0.0]);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Get,
    Put,
    Seek,
    Delete,
    Other,
}

fn kind_of(op: Op) -> Kind {
    match op {
        Op::Seek | Op::SeekForPrev | Op::Scan => Kind::Seek,
        Op::Other => Kind::Other,
        op if op.is_delete() => Kind::Delete,
        op if op.is_write() => Kind::Put,
        op if op.is_read() => Kind::Get,
        _ => Kind::Other,
    }
}

/// Everything a fit reports: what the trace held and every candidate's error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// The trace ([`FitOptions::source`]).
    pub source: String,
    /// Its format (the reader's name).
    pub format: String,
    /// Requests read.
    pub requests: u64,
    /// Requests per op, under the trace's own op names.
    pub ops: BTreeMap<String, u64>,
    /// Requests per kind.
    pub kinds: OpCounts,
    /// Requests per kind and column family (RocksDB), tenant or client (other formats).
    pub column_families: BTreeMap<u32, OpCounts>,
    /// `[get, put, seek]` shares of the modelled requests (the model writes them at
    /// db_bench's resolution, thousandths).
    pub mix: [f64; 3],
    /// Key sizes in bytes and their counts (empty: the trace has none).
    pub key_sizes: BTreeMap<u32, u64>,
    /// The key size written: the most common (db_bench's keys have one size).
    pub key_size: u32,
    /// Mean key size in bytes.
    pub mean_key_size: f64,
    /// Distinct keys of the modelled requests.
    pub distinct_keys: u64,
    /// Value sizes of writes, fitted (none: the trace has no write with a size).
    pub value_sizes: Option<SizeFit>,
    /// Scan lengths of seeks, fitted (none: not recorded, e.g. RocksDB query traces).
    pub scan_lengths: Option<SizeFit>,
    /// How many key ranges.
    pub key_range_rule: KeyRangeRule,
    /// How keys were grouped into ranges.
    pub range_cut: RangeCut,
    /// Keys the model draws from (`num`): the distinct keys, or the span of positions
    /// with [`RangeCut::EqualSpan`].
    pub key_space: u64,
    /// The key-range hotness.
    pub key_ranges: KeyRangeFit,
    /// The power model of key popularity (in-range, or over all keys with one range).
    pub power: Option<PowerFit>,
    /// The request rate per second (none: no clock, or too short).
    pub qps: Option<QpsFit>,
    /// What was assumed or left at db_bench's defaults, and why.
    pub notes: Vec<String>,
}

/// A fitted model and its report.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The model.
    pub model: Model,
    /// Every fit's errors.
    pub report: FitReport,
}

/// A fast hasher for the per-key counts (FxHash's multiply-rotate, as rustc uses): keys
/// are counted once per request, and the hash need not resist adversaries.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.write_u64(u64::from_le_bytes(w));
        }
        let mut w = [0u8; 8];
        let rest = chunks.remainder();
        w[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(w) ^ rest.len() as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type Fx = BuildHasherDefault<FxHasher>;

/// Accesses per key: byte keys or numeric ids.
enum KeyCounts {
    Bytes(HashMap<Box<[u8]>, u64, Fx>),
    Ids(HashMap<u64, u64, Fx>),
}

impl KeyCounts {
    #[inline]
    fn add(&mut self, rec: &TraceRecord) {
        match self {
            KeyCounts::Bytes(m) => match m.get_mut(rec.key.as_slice()) {
                Some(c) => *c += 1,
                None => {
                    m.insert(rec.key.as_slice().into(), 1);
                }
            },
            KeyCounts::Ids(m) => *m.entry(rec.id).or_insert(0) += 1,
        }
    }

    /// (position, count) in key order (bytes lexicographically, ids numerically); a
    /// byte key's position is its first 8 bytes big-endian, zero-padded (monotone in
    /// key order).
    fn into_sorted(self) -> Vec<(u64, u64)> {
        match self {
            KeyCounts::Bytes(m) => {
                let mut v: Vec<_> = m.into_iter().collect();
                v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                v.into_iter()
                    .map(|(k, c)| {
                        let mut w = [0u8; 8];
                        let n = k.len().min(8);
                        w[..n].copy_from_slice(&k[..n]);
                        (u64::from_be_bytes(w), c)
                    })
                    .collect()
            }
            KeyCounts::Ids(m) => {
                let mut v: Vec<_> = m.into_iter().collect();
                v.sort_unstable_by_key(|e| e.0);
                v
            }
        }
    }
}

/// Reads every record of `reader` and fits db_bench's mixgraph model to them.
pub fn fit<R: TraceReader + ?Sized>(
    reader: &mut R,
    options: &FitOptions,
) -> Result<Fit, ModelError> {
    let info = reader.info().clone();
    let unfit = |what: &str| ModelError::Unfit {
        source_name: options.source.clone(),
        what: what.to_owned(),
    };
    let mut ops: BTreeMap<Op, u64> = BTreeMap::new();
    let mut kinds = OpCounts::default();
    let mut column_families: BTreeMap<u32, OpCounts> = BTreeMap::new();
    let mut key_sizes: BTreeMap<u32, u64> = BTreeMap::new();
    let mut value_sizes: BTreeMap<u64, u64> = BTreeMap::new();
    let mut scan_lens: BTreeMap<u64, u64> = BTreeMap::new();
    let mut keys = match info.key_encoding {
        KeyEncoding::Bytes => KeyCounts::Bytes(HashMap::default()),
        KeyEncoding::Id => KeyCounts::Ids(HashMap::default()),
    };
    let ns_per_tick = info.time_unit.nanos();
    let mut per_second: Vec<u64> = Vec::new();
    let mut first_ts: Option<u64> = None;
    let mut qps_overflow = false;
    let mut requests = 0u64;
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec)? {
        requests += 1;
        *ops.entry(rec.op).or_insert(0) += 1;
        let kind = kind_of(rec.op);
        kinds.add(kind);
        column_families.entry(rec.cf).or_default().add(kind);
        if !matches!(kind, Kind::Get | Kind::Put | Kind::Seek) {
            continue;
        }
        keys.add(&rec);
        if rec.key_size > 0 {
            *key_sizes.entry(rec.key_size).or_insert(0) += 1;
        }
        if kind == Kind::Put && info.has_sizes {
            *value_sizes.entry(rec.value_size).or_insert(0) += 1;
        }
        if kind == Kind::Seek && rec.scan_len > 0 {
            *scan_lens.entry(u64::from(rec.scan_len)).or_insert(0) += 1;
        }
        if let Some(ns) = ns_per_tick {
            let t0 = *first_ts.get_or_insert(rec.ts);
            let second =
                (u128::from(rec.ts.saturating_sub(t0)) * u128::from(ns) / 1_000_000_000) as u64;
            if second < MAX_SECONDS {
                let s = second as usize;
                if s >= per_second.len() {
                    per_second.resize(s + 1, 0);
                }
                per_second[s] += 1;
            } else {
                qps_overflow = true;
            }
        }
    }
    if kinds.modelled() == 0 {
        return Err(unfit("no get, put or seek request to model"));
    }
    let mut notes = Vec::new();
    let m = kinds.modelled() as f64;
    let mix = [
        kinds.get as f64 / m,
        kinds.put as f64 / m,
        kinds.seek as f64 / m,
    ];
    if kinds.delete + kinds.other > 0 {
        notes.push(format!(
            "{} deletes and {} other requests are not modelled (mixgraph issues only Get, \
             Put and Seek); the mix is over the other {} requests",
            kinds.delete,
            kinds.other,
            kinds.modelled()
        ));
    }

    // Key size: the most common (db_bench's keys all have `key_size` bytes).
    let key_size = key_sizes
        .iter()
        .max_by_key(|(&s, &c)| (c, std::cmp::Reverse(s)))
        .map_or(0, |(&s, _)| s);
    let key_count: u64 = key_sizes.values().sum();
    let mean_key_size = if key_count > 0 {
        key_sizes
            .iter()
            .map(|(&s, &c)| f64::from(s) * c as f64)
            .sum::<f64>()
            / key_count as f64
    } else {
        0.0
    };
    if key_sizes.is_empty() {
        notes.push("the trace records no key sizes: key_size keeps db_bench's 16".into());
    } else if key_sizes.len() > 1 {
        notes.push(format!(
            "{} distinct key sizes (mean {mean_key_size:.1} B): key_size is the most common",
            key_sizes.len()
        ));
    }

    let value_fit = fit_sizes(&value_sizes);
    if value_fit.is_none() {
        notes.push(
            "no write with a value size: value_theta/k/sigma keep db_bench's defaults".into(),
        );
    }
    let scan_fit = fit_sizes(&scan_lens);
    if scan_fit.is_none() && kinds.seek > 0 {
        notes.push(format!(
            "the trace records no scan lengths ({} format: e.g. RocksDB query traces do not \
             record Next calls): iter_theta/k/sigma keep db_bench's defaults",
            info.format
        ));
    }

    let keys = keys.into_sorted();
    let distinct = keys.len() as u64;
    let mean_value = value_fit.as_ref().map_or(34.5, |f| f.mean);
    let keyrange_num = match options.key_ranges {
        KeyRangeRule::SstFile => {
            let bytes = f64::from(if key_size > 0 { key_size } else { 16 }) + mean_value;
            let per = (SST_FILE_BYTES / bytes.max(1.0)).floor().max(1.0) as u64;
            distinct.div_ceil(per)
        }
        KeyRangeRule::KeysPerRange(per) => distinct.div_ceil(per.max(1)),
        KeyRangeRule::Ranges(n) => n,
    }
    .clamp(1, distinct);
    let ranges = KeyRanges::cut(&keys, keyrange_num, options.range_cut);
    drop(keys);
    let key_ranges = fit_key_ranges(&ranges);
    let power = fit_power(&ranges);
    // The model's key space: the accessed keys, or the span of positions when ranges cut
    // the span (db_bench's key numbers); a span beyond 2^62 keeps the accessed keys.
    let key_space = if ranges.key_space < 1 << 62 {
        ranges.key_space
    } else {
        distinct
    };
    if options.range_cut == RangeCut::EqualSpan && key_space / 1000 > distinct {
        notes.push(format!(
            "ranges cut the key span: num = {key_space} positions for {distinct} distinct \
             keys (right for db_bench's key numbers and numeric ids; keys whose first 8 \
             bytes are text spread thinly: EqualKeys may suit them better)"
        ));
    }

    let qps = if qps_overflow {
        notes.push(format!(
            "the trace spans over {MAX_SECONDS} s: no QPS fit, sine_mix_rate off"
        ));
        None
    } else {
        fit_qps(&per_second, options.min_sine_r2)
    };
    if ns_per_tick.is_none() {
        notes.push("the trace has no clock: no QPS fit, sine_mix_rate off".into());
    } else if qps.is_none() && !qps_overflow {
        notes.push(format!(
            "the trace spans {} s, under the {} s (plus first and last) a rate is fitted \
             over: sine_mix_rate off",
            per_second.len(),
            crate::qps::MIN_SECONDS
        ));
    }

    let report = FitReport {
        source: options.source.clone(),
        format: info.format.clone(),
        requests,
        ops: ops
            .iter()
            .map(|(op, &c)| (op.name().to_owned(), c))
            .collect(),
        kinds,
        column_families,
        mix,
        key_sizes,
        key_size,
        mean_key_size,
        distinct_keys: distinct,
        value_sizes: value_fit,
        scan_lengths: scan_fit,
        key_range_rule: options.key_ranges,
        range_cut: options.range_cut,
        key_space,
        key_ranges,
        power,
        qps,
        notes,
    };
    let (model, report) = assemble(report);
    Ok(Fit { model, report })
}

/// The model of a report's fits (checked with db_bench's validation: a part db_bench
/// would refuse falls back, with a note).
fn assemble(mut report: FitReport) -> (Model, FitReport) {
    let mut p = MixGraphParams {
        num: Some(report.key_space as i64),
        reads: Some(report.requests as i64),
        key_size: Some(if report.key_size > 0 {
            report.key_size as i32
        } else {
            16
        }),
        ..MixGraphParams::default()
    };
    let mix = thousandths(&[report.kinds.get, report.kinds.put, report.kinds.seek]);
    p.mix_get_ratio = Some(mix[0]);
    p.mix_put_ratio = Some(mix[1]);
    p.mix_seek_ratio = Some(mix[2]);
    if let Some((theta, k, sigma, _)) = report
        .value_sizes
        .as_ref()
        .and_then(|f| f.generalized_pareto())
    {
        p.value_theta = Some(theta);
        p.value_k = Some(k);
        p.value_sigma = Some(sigma);
        let max = report.value_sizes.as_ref().map_or(0, |f| f.max);
        p.mix_max_value_size = Some((max as i64).clamp(1024, 1 << 20));
    }
    if let Some((theta, k, sigma, _)) = report
        .scan_lengths
        .as_ref()
        .and_then(|f| f.generalized_pareto())
    {
        p.iter_theta = Some(theta);
        p.iter_k = Some(k);
        p.iter_sigma = Some(sigma);
        let max = report.scan_lengths.as_ref().map_or(0, |f| f.max);
        p.mix_max_scan_len = Some((max as i64 + 1).max(10_000));
    }
    if let Some(power) = &report.power {
        if power.a > 0.0 && power.b != 0.0 && power.a.is_finite() && power.b.is_finite() {
            p.key_dist_a = Some(power.a);
            p.key_dist_b = Some(power.b);
        } else {
            report
                .notes
                .push("the power model did not fit: keys are uniform".into());
        }
    }
    let kr = &report.key_ranges;
    p.keyrange_num = Some(kr.keyrange_num as i64);
    if kr.keyrange_num > 1 {
        p.keyrange_dist_a = Some(kr.a);
        p.keyrange_dist_b = Some(kr.b);
        p.keyrange_dist_c = Some(kr.c);
        p.keyrange_dist_d = Some(kr.d);
        if p.key_dist_a.is_none() {
            report.notes.push(
                "db_bench ignores key ranges without a power model (RocksDB issue #8356)".into(),
            );
        }
    }
    if let Some(q) = &report.qps {
        if q.sine_chosen {
            p.sine_mix_rate = Some(true);
            p.sine_a = Some(q.sine_a);
            p.sine_b = Some(q.sine_b);
            p.sine_c = Some(q.sine_c);
            p.sine_d = Some(q.sine_d);
            // Twenty rate updates per period at least, between 0.1 s and db_bench's 10 s.
            let period_ms = 2.0 * std::f64::consts::PI / q.sine_b * 1000.0;
            p.sine_mix_rate_interval_milliseconds =
                Some(((period_ms / 20.0) as u64).clamp(100, 10_000));
        }
    }
    let mut model = Model {
        header: vec![
            "kvlab model: db_bench mixgraph flags fitted to a trace (Cao et al., FAST'20)".into(),
            format!(
                "made by kvlab-model {} from {} ({} format, {} requests, {} distinct keys)",
                env!("CARGO_PKG_VERSION"),
                report.source,
                report.format,
                report.requests,
                report.distinct_keys
            ),
        ],
        mixgraph: p,
        fit: toml::Table::new(),
    };
    // A part db_bench would refuse (e.g. key-range weights all under 1e-16) falls back to
    // db_bench's defaults, one part at a time, each with a note.
    let fallbacks: [(&str, FallBack); 4] = [
        ("key ranges (keyrange_num = 1)", |p| {
            p.keyrange_num = Some(1);
            p.keyrange_dist_a = None;
            p.keyrange_dist_b = None;
            p.keyrange_dist_c = None;
            p.keyrange_dist_d = None;
        }),
        ("sine rate (off)", |p| {
            p.sine_mix_rate = None;
            p.sine_a = None;
            p.sine_b = None;
            p.sine_c = None;
            p.sine_d = None;
            p.sine_mix_rate_interval_milliseconds = None;
        }),
        ("power model (uniform keys)", |p| {
            p.key_dist_a = None;
            p.key_dist_b = None;
        }),
        ("sizes (db_bench's defaults)", |p| {
            p.value_theta = None;
            p.value_k = None;
            p.value_sigma = None;
            p.iter_theta = None;
            p.iter_k = None;
            p.iter_sigma = None;
        }),
    ];
    for (part, fall_back) in fallbacks {
        match model.to_config().validate() {
            Ok(()) => break,
            Err(e) => {
                report.notes.push(format!(
                    "db_bench would refuse the model ({e}): dropped the {part}"
                ));
                fall_back(&mut model.mixgraph);
            }
        }
    }
    model.fit = fit_table(&report);
    (model, report)
}

/// The shares of `counts` at db_bench's resolution: thousandths summing to 1 (largest
/// remainders), each kind that occurs at least 0.001. db_bench's `QueryDecider` gives
/// each kind `⌈1000·ratio/sum⌉` of about 1000 slots, so a ratio off the grid is rounded
/// up and grows the total (0.84983, 0.14013, 0.01004 would run as 850, 141 and 11 of
/// 1002); on the grid it runs exactly.
fn thousandths(counts: &[u64; 3]) -> [f64; 3] {
    let total: u64 = counts.iter().sum();
    let exact: Vec<f64> = counts
        .iter()
        .map(|&c| 1000.0 * c as f64 / total.max(1) as f64)
        .collect();
    let mut slots: Vec<i64> = exact
        .iter()
        .zip(counts)
        .map(|(&e, &c)| if c > 0 { (e.floor() as i64).max(1) } else { 0 })
        .collect();
    // Hand out (or take back) the slots to reach 1000, by largest (smallest) remainder.
    let mut order: Vec<usize> = (0..3).filter(|&i| counts[i] > 0).collect();
    order.sort_by(|&i, &j| {
        let ri = exact[i] - slots[i] as f64;
        let rj = exact[j] - slots[j] as f64;
        rj.total_cmp(&ri)
    });
    let mut sum: i64 = slots.iter().sum();
    for &i in order.iter().cycle().take(3000) {
        if sum == 1000 {
            break;
        }
        if sum < 1000 {
            slots[i] += 1;
            sum += 1;
        } else if slots[i] > 1 {
            slots[i] -= 1;
            sum -= 1;
        }
    }
    [
        slots[0] as f64 / 1000.0,
        slots[1] as f64 / 1000.0,
        slots[2] as f64 / 1000.0,
    ]
}

/// Resets one part of a model to db_bench's defaults.
type FallBack = fn(&mut MixGraphParams);

/// The `[fit]` table of a report.
fn fit_table(r: &FitReport) -> toml::Table {
    let mut t = toml::Table::new();
    let put = |t: &mut toml::Table, k: &str, v: toml::Value| {
        t.insert(k.to_owned(), v);
    };
    let f = |x: f64| toml::Value::Float(x);
    let i = |x: u64| toml::Value::Integer(x.min(i64::MAX as u64) as i64);
    put(&mut t, "format", toml::Value::String(r.format.clone()));
    put(&mut t, "requests", i(r.requests));
    put(&mut t, "distinct_keys", i(r.distinct_keys));
    put(
        &mut t,
        "range_cut",
        toml::Value::String(
            match r.range_cut {
                RangeCut::EqualKeys => "equal_keys",
                RangeCut::EqualSpan => "equal_span",
            }
            .into(),
        ),
    );
    put(
        &mut t,
        "key_size_rule",
        toml::Value::String("most common".into()),
    );
    put(&mut t, "mean_key_size_bytes", f(r.mean_key_size));
    let mut ops = toml::Table::new();
    for (k, v) in [
        ("get", r.kinds.get),
        ("put", r.kinds.put),
        ("seek", r.kinds.seek),
        ("delete", r.kinds.delete),
        ("other", r.kinds.other),
    ] {
        ops.insert(k.into(), i(v));
    }
    put(&mut t, "ops", toml::Value::Table(ops));
    let kr = &r.key_ranges;
    let mut k = toml::Table::new();
    k.insert("keys_per_range".into(), i(kr.keys_per_range));
    k.insert("rmse".into(), f(kr.rmse));
    k.insert("r2".into(), f(kr.r2));
    put(&mut t, "key_ranges", toml::Value::Table(k));
    if let Some(p) = &r.power {
        let mut k = toml::Table::new();
        k.insert("rmse".into(), f(p.rmse));
        k.insert(
            "through_db_bench".into(),
            toml::Value::Boolean(p.through_db_bench),
        );
        k.insert("cdf_a".into(), f(p.cdf_a));
        k.insert("cdf_b".into(), f(p.cdf_b));
        k.insert("cdf_rmse".into(), f(p.cdf_rmse));
        if let Some(e) = p.cdf_rmse_through_db_bench {
            k.insert("cdf_rmse_through_db_bench".into(), f(e));
        }
        k.insert("points".into(), i(p.points as u64));
        put(&mut t, "key_power", toml::Value::Table(k));
    }
    for (name, fit) in [
        ("value_size", &r.value_sizes),
        ("scan_length", &r.scan_lengths),
    ] {
        let Some(fit) = fit else { continue };
        let mut k = toml::Table::new();
        k.insert("samples".into(), i(fit.samples));
        k.insert("mean".into(), f(fit.mean));
        k.insert("max".into(), i(fit.max));
        k.insert(
            "best".into(),
            toml::Value::String(fit.best().model.name().into()),
        );
        for c in &fit.candidates {
            let mut ct = toml::Table::new();
            for (pn, pv) in c.model.params() {
                ct.insert(pn.into(), f(pv));
            }
            ct.insert("rmse".into(), f(c.rmse));
            k.insert(c.model.name().into(), toml::Value::Table(ct));
        }
        put(&mut t, name, toml::Value::Table(k));
    }
    if let Some(q) = &r.qps {
        let mut k = toml::Table::new();
        k.insert("seconds".into(), i(q.seconds as u64));
        k.insert("constant_rmse".into(), f(q.constant_rmse));
        k.insert("sine_rmse".into(), f(q.sine_rmse));
        k.insert("sine_r2".into(), f(q.sine_r2));
        k.insert("constant_bic".into(), f(q.constant_bic));
        k.insert("sine_bic".into(), f(q.sine_bic));
        k.insert("sine_chosen".into(), toml::Value::Boolean(q.sine_chosen));
        put(&mut t, "qps", toml::Value::Table(k));
    }
    if !r.notes.is_empty() {
        put(
            &mut t,
            "notes",
            toml::Value::Array(r.notes.iter().cloned().map(toml::Value::String).collect()),
        );
    }
    t
}

impl FitReport {
    /// The report as JSON.
    pub fn to_json(&self) -> String {
        // Plain data with finite or null numbers: serialization cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl fmt::Display for FitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} format, {} requests, {} distinct keys",
            self.source, self.format, self.requests, self.distinct_keys
        )?;
        let k = &self.kinds;
        writeln!(
            f,
            "op mix: get {:.4} ({}), put {:.4} ({}), seek {:.4} ({}); not modelled: {} \
             deletes, {} other",
            self.mix[0], k.get, self.mix[1], k.put, self.mix[2], k.seek, k.delete, k.other
        )?;
        let ops: Vec<String> = self.ops.iter().map(|(o, c)| format!("{o} {c}")).collect();
        writeln!(f, "ops as the trace names them: {}", ops.join(", "))?;
        if self.column_families.len() > 1 {
            for (cf, c) in &self.column_families {
                writeln!(
                    f,
                    "  cf {cf}: get {} put {} seek {} delete {} other {}",
                    c.get, c.put, c.seek, c.delete, c.other
                )?;
            }
        }
        let sizes: Vec<String> = self
            .key_sizes
            .iter()
            .take(12)
            .map(|(s, c)| format!("{s} B × {c}"))
            .collect();
        writeln!(
            f,
            "key size: {} B (most common; mean {:.1} B); sizes: {}",
            self.key_size,
            self.mean_key_size,
            if sizes.is_empty() {
                "not recorded".into()
            } else {
                sizes.join(", ")
            }
        )?;
        for (what, fit) in [
            ("value size", &self.value_sizes),
            ("scan length", &self.scan_lengths),
        ] {
            match fit {
                None => writeln!(f, "{what}: not recorded (db_bench's defaults kept)")?,
                Some(fit) => {
                    writeln!(
                        f,
                        "{what}: {} samples, {} distinct, mean {:.2}, max {}; CDF RMSE at {} \
                         points:",
                        fit.samples, fit.distinct, fit.mean, fit.max, fit.points
                    )?;
                    for c in &fit.candidates {
                        let params: Vec<String> = c
                            .model
                            .params()
                            .iter()
                            .map(|(n, v)| format!("{n}={v:.6}"))
                            .collect();
                        writeln!(
                            f,
                            "  {:<19} rmse {:.6}  {}",
                            c.model.name(),
                            c.rmse,
                            params.join(" ")
                        )?;
                    }
                }
            }
        }
        let kr = &self.key_ranges;
        writeln!(
            f,
            "key ranges: {} of {} keys ({:?}, {:?}, key space {}); a·e^(bx)+c·e^(dx): a={:.6} \
             b={:.6} c={:.6} d={:.6}, rmse {:.3e}, R² {:.4}",
            kr.keyrange_num,
            kr.keys_per_range,
            self.key_range_rule,
            self.range_cut,
            self.key_space,
            kr.a,
            kr.b,
            kr.c,
            kr.d,
            kr.rmse,
            kr.r2
        )?;
        match &self.power {
            Some(p) => {
                writeln!(
                    f,
                    "key popularity over {} ranks: paper's fit of a·r^b to the CDF: a={:.6} \
                     b={:.6}, rmse {:.3e}{}",
                    p.ranks,
                    p.cdf_a,
                    p.cdf_b,
                    p.cdf_rmse,
                    p.cdf_rmse_through_db_bench
                        .map_or(String::new(), |e| format!(
                            " (through db_bench's generation: rmse {e:.3e})"
                        ))
                )?;
                if p.through_db_bench {
                    writeln!(
                        f,
                        "  fitted through db_bench's generation (written): a={:.6} b={:.6}, \
                         rmse {:.3e}",
                        p.a, p.b, p.rmse
                    )?;
                }
            }
            None => writeln!(f, "key popularity: no fit")?,
        }
        match &self.qps {
            Some(q) => writeln!(
                f,
                "QPS over {} s: constant {:.1} ops/s (rmse {:.1}, BIC {:.1}); sine \
                 A={:.3} B={:.6} C={:.4} D={:.3} (rmse {:.1}, R² {:.4}, BIC {:.1}): {}",
                q.seconds,
                q.mean_ops_per_sec,
                q.constant_rmse,
                q.constant_bic,
                q.sine_a,
                q.sine_b,
                q.sine_c,
                q.sine_d,
                q.sine_rmse,
                q.sine_r2,
                q.sine_bic,
                if q.sine_chosen {
                    "sine chosen"
                } else {
                    "constant kept"
                }
            )?,
            None => writeln!(f, "QPS: no fit")?,
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

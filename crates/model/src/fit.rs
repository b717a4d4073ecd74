//! [`fit()`]: one pass over a trace, then every part of the mixgraph model fitted
//! ([`crate::sizes`], [`crate::keys`], [`crate::qps`]) and assembled into a [`Model`]
//! and a [`FitReport`].
//!
//! Op names map to db_bench's three kinds: reads (`get`, `gets`, `read`, `multiget`) →
//! Get, writes (`put`, `set`, `merge`, `update`, …) → Put, seeks and scans → Seek.
//! Deletes and unnamed ops are counted and reported, not modelled (mixgraph issues
//! none). The key models count the accesses of the three modelled kinds.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use kvlab_dist::mixgraph::{KeyRangeLayout, MixGraphConfig, OpMix};
use kvlab_trace::{KeyEncoding, Op, TraceReader, TraceRecord};

use crate::keys::{fit_key_ranges, fit_power_with, KeyRanges, RangeCut};
use crate::locality::fit_locality;
use crate::model::{KvlabParams, MixGraphParams, Model};
use crate::qps::fit_qps;
use crate::report::fit_table;
pub use crate::report::{FitReport, KeyRangeRule, OpCounts};
use crate::sizes::{fit_sizes, fit_sizes_clamped, DrawGrid, SizeClamp, SizeFit, SizeModel};
use crate::ModelError;

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
    /// Mean bytes of the values a database of the trace's keys holds, for the `sst`
    /// key-range rule (`None`: the trace's mean write size, or db_bench's 34.5 without
    /// writes).
    pub stored_value_size_bytes: Option<f64>,
    /// The SST file size of the RocksDB the model is for (`target_file_size_base`), for
    /// the `sst` key-range rule; default 64 MiB, RocksDB's.
    pub sst_file_bytes: u64,
    /// The layout [`KeyRangeRule::SstLayout`] names (read by the caller): ranges cut at
    /// its starts, key numbers as positions (first 8 bytes big-endian), `num` its end.
    pub layout: Option<KeyRangeLayout>,
    /// Fit the in-range power model with `a = size^{−b}`, so that db_bench's ranks reach
    /// every key of a range ([`crate::keys::fit_power_with`]); default false (the
    /// paper's fit, and the fit through db_bench's generation).
    pub power_covers_keys: bool,
    /// db_bench's `-num` when the trace is db_bench's mixgraph: a Put's size is drawn
    /// from `u = r / num` with `r` one of the Put's draws, never under the first Put slot
    /// over `num`, which cuts the sizes' tail ([`crate::sizes::DrawGrid`]); the value
    /// fit takes the cut into account. `None` (the default): sizes drawn from uniform
    /// `u` (right for `num` in the millions, and for traces not made by db_bench).
    pub db_bench_num: Option<u64>,
    /// Fit kvlab's locality layer ([`crate::locality`]) to the order of the keys, and
    /// write it as the model's `[locality]` table; default true. Needs the request
    /// sequence in memory (4 bytes a request) and [`RangeCut::EqualKeys`].
    pub locality: bool,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions {
            source: "trace".into(),
            key_ranges: KeyRangeRule::SstFile,
            range_cut: RangeCut::EqualKeys,
            min_sine_r2: 0.25,
            stored_value_size_bytes: None,
            sst_file_bytes: SST_FILE_BYTES,
            layout: None,
            power_covers_keys: false,
            db_bench_num: None,
            locality: true,
        }
    }
}

/// The best-fitting size law when it is not the generalized Pareto db_bench draws and
/// beats it clearly (an RMSE under [`LAW_MARGIN`] of the generalized Pareto's): the
/// model's `[kvlab] value_model`/`scan_model`, which `kvlab run --model` draws instead.
fn better_than_gpd(fit: &SizeFit) -> Option<SizeModel> {
    let best = fit.best();
    let (.., gpd_rmse) = fit.generalized_pareto()?;
    (!matches!(best.model, SizeModel::GeneralizedPareto { .. })
        && best.rmse < LAW_MARGIN * gpd_rmse)
        .then_some(best.model)
}

/// How much better than the generalized Pareto another size law must fit to replace
/// it (db_bench's own law wins ties and near-ties).
const LAW_MARGIN: f64 = 0.9;

/// RocksDB's default `target_file_size_base` (64 MiB).
const SST_FILE_BYTES: u64 = 64 << 20;

/// The most seconds of per-second rates kept (115 days); longer traces skip the QPS fit.
const MAX_SECONDS: u64 = 10_000_000;

// Counting by kind is the fit's: `OpCounts` itself is the report's.
impl OpCounts {
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

/// Each key's index (in first-touch order), byte keys or numeric ids.
enum KeyIndex {
    Bytes(HashMap<Box<[u8]>, u32, Fx>),
    Ids(HashMap<u64, u32, Fx>),
}

/// The requests in order: each one's key as a rank in key order, and its kind.
type Sequence = (Vec<u32>, Vec<u8>);

/// Accesses per key, and the order of the keys' accesses when locality is fitted.
struct KeyCounts {
    index: KeyIndex,
    /// Per key index: accesses.
    counts: Vec<u64>,
    /// Per request: its key's index and its kind (only when kept).
    sequence: Option<Sequence>,
}

impl KeyCounts {
    fn new(encoding: KeyEncoding, keep_sequence: bool) -> KeyCounts {
        KeyCounts {
            index: match encoding {
                KeyEncoding::Bytes => KeyIndex::Bytes(HashMap::default()),
                KeyEncoding::Id => KeyIndex::Ids(HashMap::default()),
            },
            counts: Vec::new(),
            sequence: keep_sequence.then(Sequence::default),
        }
    }

    #[inline]
    fn add(&mut self, rec: &TraceRecord, kind: Kind) {
        let next = self.counts.len() as u32;
        let i = match &mut self.index {
            KeyIndex::Bytes(m) => match m.get(rec.key.as_slice()) {
                Some(&i) => i,
                None => {
                    m.insert(rec.key.as_slice().into(), next);
                    next
                }
            },
            KeyIndex::Ids(m) => *m.entry(rec.id).or_insert(next),
        };
        if i == next {
            self.counts.push(0);
        }
        self.counts[i as usize] += 1;
        if let Some((keys, kinds)) = &mut self.sequence {
            keys.push(i);
            kinds.push(kind as u8);
        }
    }

    /// (position, count) in key order (bytes lexicographically, ids numerically); a
    /// byte key's position is its first 8 bytes big-endian, zero-padded (monotone in
    /// key order). With the sequence kept, also the requests' keys as ranks in that
    /// order.
    fn into_sorted(self) -> (Vec<(u64, u64)>, Option<Sequence>) {
        let counts = self.counts;
        let (order, positions): (Vec<u32>, Vec<u64>) = match self.index {
            KeyIndex::Bytes(m) => {
                let mut v: Vec<_> = m.into_iter().collect();
                v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                v.into_iter()
                    .map(|(k, i)| {
                        let mut w = [0u8; 8];
                        let n = k.len().min(8);
                        w[..n].copy_from_slice(&k[..n]);
                        (i, u64::from_be_bytes(w))
                    })
                    .unzip()
            }
            KeyIndex::Ids(m) => {
                let mut v: Vec<_> = m.into_iter().collect();
                v.sort_unstable_by_key(|e| e.0);
                v.into_iter().map(|(id, i)| (i, id)).unzip()
            }
        };
        let sequence = self.sequence.map(|(mut keys, kinds)| {
            let mut rank = vec![0u32; order.len()];
            for (r, &i) in order.iter().enumerate() {
                rank[i as usize] = r as u32;
            }
            for k in &mut keys {
                *k = rank[*k as usize];
            }
            (keys, kinds)
        });
        let sorted = order
            .iter()
            .zip(positions)
            .map(|(&i, pos)| (pos, counts[i as usize]))
            .collect();
        (sorted, sequence)
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
    let keep_sequence = options.locality && options.range_cut == RangeCut::EqualKeys;
    let mut keys = KeyCounts::new(info.key_encoding, keep_sequence);
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
        keys.add(&rec, kind);
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

    // db_bench writes max(⌈X⌉, 10) and wraps sizes over value_max: the value sizes are
    // fitted through that clamp, value_max the largest size seen (at least db_bench's
    // default 1024), as the model writes mix_max_value_size.
    let largest_value = value_sizes.keys().next_back().copied().unwrap_or(0);
    let mut clamp = SizeClamp::db_bench_values(largest_value.clamp(
        SizeClamp::DB_BENCH_VALUE_MAX_BYTES,
        SizeClamp::DB_BENCH_VALUE_BUFFER_BYTES,
    ));
    if let Some(num) = options.db_bench_num.filter(|_| kinds.put > 0) {
        let [get, put, seek] = thousandths(&[kinds.get, kinds.put, kinds.seek]);
        let mix = OpMix::new(&MixGraphConfig {
            mix_get_ratio: get,
            mix_put_ratio: put,
            mix_seek_ratio: seek,
            ..MixGraphConfig::default()
        });
        clamp = clamp.with_grid(DrawGrid {
            num,
            first_put_slot: mix.put_slots().0,
        });
    }
    let value_fit = fit_sizes_clamped(&value_sizes, Some(clamp));
    if let Some(v) = value_fit.as_ref().filter(|v| v.censored > 0) {
        notes.push(format!(
            "{} of {} value sizes ({:.1} %) are at or under db_bench's {}-byte floor: \
             the generalized Pareto counts them as censored (the mass under the floor), \
             sizes over {} bytes as wrapped",
            v.censored,
            v.samples,
            100.0 * v.censored as f64 / v.samples as f64,
            clamp.floor_bytes,
            clamp.wrap_bytes
        ));
    }
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

    let (keys, sequence) = keys.into_sorted();
    let distinct = keys.len() as u64;
    let mean_value = options
        .stored_value_size_bytes
        .unwrap_or_else(|| value_fit.as_ref().map_or(34.5, |f| f.mean));
    let layout = match (&options.key_ranges, &options.layout) {
        (KeyRangeRule::SstLayout(_), Some(layout)) => Some(layout),
        (KeyRangeRule::SstLayout(path), None) => {
            return Err(ModelError::Unfit {
                source_name: options.source.clone(),
                what: format!(
                    "key ranges sst:{}: the database's layout was not read",
                    path.display()
                ),
            })
        }
        _ => None,
    };
    // The locality layer is fitted on ranks in key order: it runs on the model's key
    // numbers only where they are those ranks (a layout's key numbers are positions).
    let ranked = layout.is_none() || keys.iter().enumerate().all(|(i, k)| k.0 == i as u64);
    let locality = match sequence {
        Some((seq, kinds)) if ranked => fit_locality(&seq, Some(&kinds), distinct),
        Some(_) => {
            notes.push(
                "no locality layer: the layout's key numbers are the keys' positions, not \
                 the ranks the layer is fitted on"
                    .into(),
            );
            None
        }
        None => None,
    };
    if options.locality && options.range_cut != RangeCut::EqualKeys {
        notes.push(
            "no locality layer: ranges cut the key span, so key numbers are positions, not \
             the ranks the layer is fitted on (use --range-cut keys)"
                .into(),
        );
    }
    let ranges = match layout {
        Some(layout) => {
            let (ranges, outside) = KeyRanges::cut_at(&keys, &layout.starts, layout.end);
            if outside > 0 {
                notes.push(format!(
                    "{outside} of the trace's {distinct} distinct keys lie outside the \
                     database's key numbers {}..{} (counted in the first or last range)",
                    layout.starts.first().copied().unwrap_or(0),
                    layout.end
                ));
            }
            ranges
        }
        None => {
            let keyrange_num = match options.key_ranges {
                KeyRangeRule::SstFile => {
                    let bytes = f64::from(if key_size > 0 { key_size } else { 16 }) + mean_value;
                    let per = (options.sst_file_bytes.max(1) as f64 / bytes.max(1.0))
                        .floor()
                        .max(1.0) as u64;
                    distinct.div_ceil(per)
                }
                KeyRangeRule::KeysPerRange(per) => distinct.div_ceil(per.max(1)),
                KeyRangeRule::Ranges(n) => n,
                KeyRangeRule::SstLayout(_) => 1,
            }
            .clamp(1, distinct);
            KeyRanges::cut(&keys, keyrange_num, options.range_cut)
        }
    };
    drop(keys);
    let key_ranges = fit_key_ranges(&ranges);
    let power = fit_power_with(&ranges, options.power_covers_keys);
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
        key_range_rule: options.key_ranges.clone(),
        range_cut: options.range_cut,
        key_space,
        key_ranges,
        power,
        qps,
        locality: locality.as_ref().map(|l| l.stats.clone()),
        notes,
    };
    let (mut model, report) = assemble(report, layout);
    model.locality = locality.map(|l| l.locality);
    Ok(Fit { model, report })
}

/// The model of a report's fits (checked with db_bench's validation: a part db_bench
/// would refuse falls back, with a note).
fn assemble(mut report: FitReport, layout: Option<&KeyRangeLayout>) -> (Model, FitReport) {
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
        locality: None,
        kvlab: KvlabParams::default(),
        fit: toml::Table::new(),
    };
    if let Some(layout) = layout {
        model.kvlab.keyrange_starts = Some(layout.starts.clone());
        model.kvlab.keyrange_source = Some(layout.source.clone());
    }
    model.kvlab.value_model = report.value_sizes.as_ref().and_then(better_than_gpd);
    model.kvlab.scan_model = report.scan_lengths.as_ref().and_then(better_than_gpd);
    // A part db_bench would refuse (e.g. key-range weights all under 1e-16) falls back to
    // db_bench's defaults, one part at a time, each with a note.
    let fallbacks: [(&str, FallBack); 4] = [
        ("key ranges (keyrange_num = 1)", |p, k| {
            k.keyrange_starts = None;
            k.keyrange_source = None;
            p.keyrange_num = Some(1);
            p.keyrange_dist_a = None;
            p.keyrange_dist_b = None;
            p.keyrange_dist_c = None;
            p.keyrange_dist_d = None;
        }),
        ("sine rate (off)", |p, _| {
            p.sine_mix_rate = None;
            p.sine_a = None;
            p.sine_b = None;
            p.sine_c = None;
            p.sine_d = None;
            p.sine_mix_rate_interval_milliseconds = None;
        }),
        ("power model (uniform keys)", |p, _| {
            p.key_dist_a = None;
            p.key_dist_b = None;
        }),
        ("sizes (db_bench's defaults)", |p, k| {
            k.value_model = None;
            k.scan_model = None;
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
                fall_back(&mut model.mixgraph, &mut model.kvlab);
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
type FallBack = fn(&mut MixGraphParams, &mut KvlabParams);

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

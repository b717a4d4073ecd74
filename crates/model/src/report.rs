//! [`FitReport`]: what a fit saw and how well each part fitted, as text (for stderr),
//! JSON, and the model file's `[fit]` table; with the two types it names that
//! [`mod@crate::fit`] also uses, [`KeyRangeRule`] and [`OpCounts`], so that the fit depends
//! on the report and not the other way round.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::keys::{KeyRangeFit, PowerFit, RangeCut};
use crate::qps::QpsFit;
use crate::sizes::SizeFit;

/// How the sorted keys are cut into key ranges.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyRangeRule {
    /// As many keys per range as one SST file holds: [`crate::FitOptions::sst_file_bytes`]
    /// (RocksDB's `target_file_size_base`, 64 MiB by default) over the key size plus the
    /// mean value size — the paper's choice (a key range per SST file).
    SstFile,
    /// This many distinct keys per range.
    KeysPerRange(u64),
    /// This many ranges (`keyrange_num`).
    Ranges(u64),
    /// One range per SST file of the RocksDB database at this path (its last non-empty
    /// level): the caller reads the layout into [`crate::FitOptions::layout`].
    SstLayout(std::path::PathBuf),
}

impl std::str::FromStr for KeyRangeRule {
    type Err = String;

    /// `sst`, `sst:DBPATH`, `keys:N` (keys per range) or `ranges:N` (`keyrange_num`).
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
            Some(("sst", path)) if !path.is_empty() => Ok(KeyRangeRule::SstLayout(path.into())),
            _ => Err(format!(
                "key-range rule {s:?}: expected sst, sst:DBPATH (a RocksDB database's SST \
                 files), keys:N (keys per range) or ranges:N"
            )),
        }
    }
}

impl std::fmt::Display for KeyRangeRule {
    /// The rule as `--key-ranges` takes it (`sst`, `sst:DBPATH`, `keys:N`, `ranges:N`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyRangeRule::SstFile => write!(f, "sst"),
            KeyRangeRule::SstLayout(path) => write!(f, "sst:{}", path.display()),
            KeyRangeRule::KeysPerRange(n) => write!(f, "keys:{n}"),
            KeyRangeRule::Ranges(n) => write!(f, "ranges:{n}"),
        }
    }
}

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
}

/// Everything a fit reports: what the trace held and every candidate's error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// The trace ([`crate::FitOptions::source`]).
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
    /// kvlab's locality layer: how the requests were classed (none: not fitted).
    #[serde(default)]
    pub locality: Option<crate::locality::LocalityStats>,
    /// What was assumed or left at db_bench's defaults, and why.
    pub notes: Vec<String>,
}

/// The most key sizes the `[fit.key_sizes]` table lists.
const KEY_SIZES_KEPT: usize = 64;

/// The `[fit]` table of a report.
pub(crate) fn fit_table(r: &FitReport) -> toml::Table {
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
    // The observed key sizes as a discrete distribution (bytes → requests), the most
    // common [`KEY_SIZES_KEPT`] of them.
    let mut sizes: Vec<(&u32, &u64)> = r.key_sizes.iter().collect();
    sizes.sort_by_key(|&(s, c)| (std::cmp::Reverse(*c), *s));
    sizes.truncate(KEY_SIZES_KEPT);
    sizes.sort_by_key(|&(s, _)| *s);
    let sizes: toml::Table = sizes
        .into_iter()
        .map(|(s, &c)| (s.to_string(), i(c)))
        .collect();
    if !sizes.is_empty() {
        put(&mut t, "key_sizes", toml::Value::Table(sizes));
    }
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
        if let Some(c) = &fit.clamp {
            k.insert("censored".into(), i(fit.censored));
            k.insert("floor_bytes".into(), i(c.floor_bytes));
            k.insert("wrap_bytes".into(), i(c.wrap_bytes));
        }
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
    if let Some(l) = &r.locality {
        let mut k = toml::Table::new();
        let share = |c: u64| f(c as f64 / l.requests.max(1) as f64);
        k.insert("new_share".into(), share(l.new));
        k.insert("new_stepped_share".into(), share(l.new_stepped));
        k.insert("new_near_share".into(), share(l.new_near));
        k.insert("stepped_share".into(), share(l.stepped));
        k.insert("reused_share".into(), share(l.reused));
        k.insert("classes".into(), i(l.classes));
        put(&mut t, "locality", toml::Value::Table(k));
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
                    if let Some(c) = &fit.clamp {
                        writeln!(
                            f,
                            "  (generalized Pareto by maximum likelihood through db_bench's \
                             clamp: {} sizes at or under {} B censored, wrap over {} B{})",
                            fit.censored,
                            c.floor_bytes,
                            c.wrap_bytes,
                            c.grid.map_or(String::new(), |g| format!(
                                ", draws from u ≥ {}/{}",
                                g.first_put_slot, g.num
                            ))
                        )?;
                    }
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
            "key ranges: {} of {} keys ({}, {:?}, key space {}); a·e^(bx)+c·e^(dx): a={:.6} \
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
        if let Some(l) = &self.locality {
            let pct = |c: u64| 100.0 * c as f64 / l.requests.max(1) as f64;
            writeln!(
                f,
                "locality: {:.1} % first touches ({:.1} % a step after the previous, {:.1} % \
                 beside a recent key), {:.1} % a step from a recent key, {:.1} % re-touches \
                 ({} classes)",
                pct(l.new),
                pct(l.new_stepped),
                pct(l.new_near),
                pct(l.stepped),
                pct(l.reused),
                l.classes
            )?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

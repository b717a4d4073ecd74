//! [`MixGraphConfig`]: every db_bench flag the `mixgraph` benchmark reads, with
//! db_bench's defaults (RocksDB 7.8 `tools/db_bench_tool.cc`, the `DEFINE_*` lines),
//! and its validation.

use std::sync::Arc;

use super::keyrange::KeyRanges;
use super::MixGraphError;

/// The paper's four key models (Cao et al., "Characterizing, Modeling, and Benchmarking
/// RocksDB Key-Value Workloads at Facebook", FAST'20, §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyModel {
    /// Key ranges with two-term-exponential hotness; inside a range, a power-model rank
    /// scattered by `mt19937_64(rank)` (db_bench's `DistGetKeyID` with `key_dist_a`,
    /// `key_dist_b` set).
    PrefixDist,
    /// Key ranges with the same hotness as [`KeyModel::PrefixDist`] (the same range for
    /// the same draw); inside a range, a uniform offset (SplitMix64's mix of the draw:
    /// db_bench 7.8 never reaches its own uniform branch, RocksDB issue #8356).
    PrefixRandom,
    /// No key ranges; a power-model rank over the whole key space, scattered by
    /// `mt19937_64(rank)` (db_bench's `PowerCdfInversion` branch; the key number is a
    /// signed remainder and may be negative).
    AllDist,
    /// No key ranges; every key equally likely (what YCSB's uniform does).
    AllRandom,
}

impl KeyModel {
    /// The paper's name (`Prefix_dist`, …).
    pub fn paper_name(self) -> &'static str {
        match self {
            KeyModel::PrefixDist => "Prefix_dist",
            KeyModel::PrefixRandom => "Prefix_random",
            KeyModel::AllDist => "All_dist",
            KeyModel::AllRandom => "All_random",
        }
    }
}

/// db_bench's mixgraph flags (`-num=…` is the field `num`), defaults as in RocksDB 7.8,
/// plus kvlab's two switches [`MixGraphConfig::key_model`] and
/// [`MixGraphConfig::decorrelate`], whose defaults keep the stream db_bench's.
///
/// Types are db_bench's flag types, so that any value db_bench accepts can be stated;
/// [`MixGraphConfig::validate`] refuses what db_bench would crash or loop on.
#[derive(Clone, Debug, PartialEq)]
pub struct MixGraphConfig {
    /// `-num`: key numbers are drawn from `0..num`.
    pub num: i64,
    /// `-reads`: operations per thread (negative: `num`), unless `duration` is set.
    pub reads: i64,
    /// `-duration`: seconds to run (0: `reads` decides).
    pub duration: i32,
    /// `-threads`: threads, each with its own random stream.
    pub threads: i32,
    /// `-seed`: the seed base (db_bench takes the time when it is 0; kvlab takes 0 as
    /// the value 0 — pass the base db_bench printed to reproduce such a run).
    pub seed: i64,
    /// `-key_size`: key length in bytes.
    pub key_size: i32,
    /// `-prefix_size`: bytes of the prefix written when `keys_per_prefix > 0`.
    pub prefix_size: i32,
    /// `-keys_per_prefix`: keys per prefix (0: no prefix).
    pub keys_per_prefix: i64,
    /// `-keyrange_num`: number of equal key ranges.
    pub keyrange_num: i64,
    /// `-keyrange_dist_a`: `a` of the key-range hotness `a·e^{b·x} + c·e^{d·x}`.
    pub keyrange_dist_a: f64,
    /// `-keyrange_dist_b`.
    pub keyrange_dist_b: f64,
    /// `-keyrange_dist_c`.
    pub keyrange_dist_c: f64,
    /// `-keyrange_dist_d`.
    pub keyrange_dist_d: f64,
    /// `-key_dist_a`: `a` of the key-hotness power model `a·x^b`.
    pub key_dist_a: f64,
    /// `-key_dist_b`.
    pub key_dist_b: f64,
    /// `-value_theta`: location θ of the generalized Pareto value size.
    pub value_theta: f64,
    /// `-value_k`: shape k of the value size.
    pub value_k: f64,
    /// `-value_sigma`: scale σ of the value size.
    pub value_sigma: f64,
    /// `-iter_theta`: location θ of the generalized Pareto scan length.
    pub iter_theta: f64,
    /// `-iter_k`: shape k of the scan length.
    pub iter_k: f64,
    /// `-iter_sigma`: scale σ of the scan length.
    pub iter_sigma: f64,
    /// `-mix_get_ratio`.
    pub mix_get_ratio: f64,
    /// `-mix_put_ratio`.
    pub mix_put_ratio: f64,
    /// `-mix_seek_ratio`.
    pub mix_seek_ratio: f64,
    /// `-mix_max_scan_len`: scan lengths are taken modulo this.
    pub mix_max_scan_len: i64,
    /// `-mix_max_value_size`: larger value sizes wrap modulo this (itself capped at
    /// 1 MiB).
    pub mix_max_value_size: i64,
    /// `-sine_mix_rate`: modulate the request rate by a sine.
    pub sine_mix_rate: bool,
    /// `-sine_a`: amplitude A of `A·sin(B·t + C) + D` (ops/s, t in seconds).
    pub sine_a: f64,
    /// `-sine_b`: angular frequency B (radians per second).
    pub sine_b: f64,
    /// `-sine_c`: phase C (radians).
    pub sine_c: f64,
    /// `-sine_d`: offset D (ops/s).
    pub sine_d: f64,
    /// `-sine_mix_rate_interval_milliseconds`: how often the rate is recomputed.
    pub sine_mix_rate_interval_milliseconds: u64,
    /// `-sine_mix_rate_noise`: noise ratio in `[0, 1]`.
    pub sine_mix_rate_noise: f64,
    /// kvlab: the key model; `None` chooses as db_bench does from the flags (key ranges
    /// when any `keyrange_dist_*` is non-zero, a power model when `key_dist_a` and
    /// `key_dist_b` are, uniform keys when either is zero — even with key ranges).
    pub key_model: Option<KeyModel>,
    /// kvlab: explicit key ranges, by their first key numbers (strictly increasing,
    /// below `num`): range `i` holds keys `starts[i] .. starts[i + 1]`, the last up to
    /// `num` (keys below `starts[0]` belong to no range). `keyrange_num` must equal their
    /// count. The ranges' hotness and shuffle are db_bench's for `keyrange_num` ranges;
    /// a key drawn in range `i` is `starts[i] + offset mod size_i`, db_bench's in-range
    /// mapping with that range's size. `None` (default): db_bench's equal ranges of
    /// `num / keyrange_num` keys.
    pub keyrange_starts: Option<Arc<[u64]>>,
    /// kvlab: draw the key, the operation, and the value size or scan length from three
    /// independent draws, where db_bench derives all four from one. Off by default
    /// (db_bench's stream).
    pub decorrelate: bool,
    /// kvlab: temporal and spatial locality laid over the key model's draws
    /// ([`crate::locality`], fitted by `kvlab model fit`); `None` (the default) keeps
    /// db_bench's independent draws. Each thread keeps its own recency order.
    pub locality: Option<Arc<crate::locality::Locality>>,
    /// kvlab: the law of a Put's value size where it is not db_bench's generalized
    /// Pareto (`value_theta/k/sigma`, used when `None`): drawn as `⌈F⁻¹(1 − u)⌉` of the
    /// same draw `u` db_bench inverts, then raised to 10 and wrapped as db_bench does.
    /// Set by a model whose best-fitting value-size law is another one.
    pub value_model: Option<super::SizeModel>,
    /// kvlab: the law of a Seek's scan length where it is not db_bench's generalized
    /// Pareto (`iter_*`, used when `None`); taken modulo `mix_max_scan_len` as db_bench
    /// takes its own.
    pub scan_model: Option<super::SizeModel>,
}

impl Default for MixGraphConfig {
    fn default() -> MixGraphConfig {
        MixGraphConfig {
            num: 1_000_000,
            reads: -1,
            duration: 0,
            threads: 1,
            seed: 0,
            key_size: 16,
            prefix_size: 0,
            keys_per_prefix: 0,
            keyrange_num: 1,
            keyrange_dist_a: 0.0,
            keyrange_dist_b: 0.0,
            keyrange_dist_c: 0.0,
            keyrange_dist_d: 0.0,
            key_dist_a: 0.0,
            key_dist_b: 0.0,
            value_theta: 0.0,
            value_k: 0.2615,
            value_sigma: 25.45,
            iter_theta: 0.0,
            iter_k: 2.517,
            iter_sigma: 14.236,
            mix_get_ratio: 1.0,
            mix_put_ratio: 0.0,
            mix_seek_ratio: 0.0,
            mix_max_scan_len: 10_000,
            mix_max_value_size: 1024,
            sine_mix_rate: false,
            sine_a: 1.0,
            sine_b: 1.0,
            sine_c: 0.0,
            sine_d: 1.0,
            sine_mix_rate_interval_milliseconds: 10_000,
            sine_mix_rate_noise: 0.0,
            key_model: None,
            keyrange_starts: None,
            decorrelate: false,
            locality: None,
            value_model: None,
            scan_model: None,
        }
    }
}

/// The largest key kvlab builds (1 MiB).
const MAX_KEY_SIZE: i32 = 1 << 20;

/// The most key ranges kvlab builds a table for (2²⁴).
const MAX_KEY_RANGES: i64 = 1 << 24;

/// The longest sine-rate interval (2⁴⁰ ms, 35 years), so that due times in ns fit.
const MAX_SINE_INTERVAL_MS: u64 = 1 << 40;

impl MixGraphConfig {
    /// PR #5953's ZippyDB-like example (`-key_dist_a=0.002312 -key_dist_b=0.3467
    /// -keyrange_dist_a=14.18 … -keyrange_num=30 -mix_get_ratio=0.85 …
    /// -sine_a=350 -sine_b=0.0105 -sine_d=50000 -reads=1000000 -num=5000000
    /// -key_size=48`), sine rate off.
    pub fn zippydb_example() -> MixGraphConfig {
        MixGraphConfig {
            num: 5_000_000,
            reads: 1_000_000,
            key_size: 48,
            key_dist_a: 0.002312,
            key_dist_b: 0.3467,
            keyrange_dist_a: 14.18,
            keyrange_dist_b: -2.917,
            keyrange_dist_c: 0.0164,
            keyrange_dist_d: -0.08082,
            keyrange_num: 30,
            value_k: 0.2615,
            value_sigma: 25.45,
            iter_k: 2.517,
            iter_sigma: 14.236,
            mix_get_ratio: 0.85,
            mix_put_ratio: 0.14,
            mix_seek_ratio: 0.01,
            sine_mix_rate_interval_milliseconds: 5000,
            sine_a: 350.0,
            sine_b: 0.0105,
            sine_d: 50_000.0,
            ..MixGraphConfig::default()
        }
    }

    /// Whether any `keyrange_dist_*` is non-zero (db_bench's `use_prefix_modeling`).
    pub fn uses_key_ranges(&self) -> bool {
        self.keyrange_dist_a != 0.0
            || self.keyrange_dist_b != 0.0
            || self.keyrange_dist_c != 0.0
            || self.keyrange_dist_d != 0.0
    }

    /// Whether `key_dist_a` and `key_dist_b` are both non-zero (db_bench's
    /// `!use_random_modeling`).
    pub fn uses_power_model(&self) -> bool {
        self.key_dist_a != 0.0 && self.key_dist_b != 0.0
    }

    /// The key model in force: [`MixGraphConfig::key_model`], or db_bench's choice.
    pub fn effective_key_model(&self) -> KeyModel {
        match self.key_model {
            Some(model) => model,
            None if !self.uses_power_model() => KeyModel::AllRandom,
            None if self.uses_key_ranges() => KeyModel::PrefixDist,
            None => KeyModel::AllDist,
        }
    }

    /// Operations per thread (db_bench's `reads_`: `reads`, or `num` when negative);
    /// `None` when `duration` decides.
    pub fn ops_per_thread(&self) -> Option<u64> {
        let reads = if self.reads < 0 { self.num } else { self.reads };
        (self.duration <= 0).then_some(reads as u64)
    }

    /// The largest value size: `mix_max_value_size`, at most 1 MiB (db_bench's
    /// `value_max`).
    pub fn value_max(&self) -> i64 {
        self.mix_max_value_size.min(1 << 20)
    }

    /// Checks every flag; errors name the flag and the allowed range.
    pub fn validate(&self) -> Result<(), MixGraphError> {
        self.check_sizes()?;
        self.check_models()?;
        self.check_mix()?;
        self.check_sine()?;
        for (which, law) in [
            ("value_model", &self.value_model),
            ("scan_model", &self.scan_model),
        ] {
            if let Some(law) = law {
                law.validate()
                    .map_err(|why| MixGraphError::SizeModel { which, why })?;
            }
        }
        match &self.locality {
            Some(l) => l
                .validate(self.num as u64)
                .map_err(|e| MixGraphError::Locality(e.0)),
            None => Ok(()),
        }
    }

    fn check_sizes(&self) -> Result<(), MixGraphError> {
        if self.num < 1 {
            return Err(MixGraphError::flag("num", self.num, "at least 1"));
        }
        if self.threads < 1 {
            return Err(MixGraphError::flag("threads", self.threads, "at least 1"));
        }
        if self.duration < 0 {
            return Err(MixGraphError::flag("duration", self.duration, "at least 0"));
        }
        if !(1..=MAX_KEY_SIZE).contains(&self.key_size) {
            return Err(MixGraphError::flag(
                "key_size",
                self.key_size,
                format!("1 to {MAX_KEY_SIZE} bytes"),
            ));
        }
        if !(0..=self.key_size).contains(&self.prefix_size) {
            return Err(MixGraphError::flag(
                "prefix_size",
                self.prefix_size,
                format!("0 to key_size ({})", self.key_size),
            ));
        }
        // db_bench divides `num` by `keys_per_prefix`, then by the quotient.
        if !(0..=self.num).contains(&self.keys_per_prefix) {
            return Err(MixGraphError::flag(
                "keys_per_prefix",
                self.keys_per_prefix,
                format!("0 to num ({})", self.num),
            ));
        }
        Ok(())
    }

    fn check_models(&self) -> Result<(), MixGraphError> {
        for (flag, v) in [
            ("keyrange_dist_a", self.keyrange_dist_a),
            ("keyrange_dist_b", self.keyrange_dist_b),
            ("keyrange_dist_c", self.keyrange_dist_c),
            ("keyrange_dist_d", self.keyrange_dist_d),
            ("key_dist_a", self.key_dist_a),
            ("key_dist_b", self.key_dist_b),
            ("value_theta", self.value_theta),
            ("value_k", self.value_k),
            ("value_sigma", self.value_sigma),
            ("iter_theta", self.iter_theta),
            ("iter_k", self.iter_k),
            ("iter_sigma", self.iter_sigma),
        ] {
            if !v.is_finite() {
                return Err(MixGraphError::flag(flag, v, "a finite number"));
            }
        }
        let model = self.effective_key_model();
        let needs_ranges = matches!(model, KeyModel::PrefixDist | KeyModel::PrefixRandom);
        let needs_power = matches!(model, KeyModel::PrefixDist | KeyModel::AllDist);
        if needs_ranges && !self.uses_key_ranges() {
            return Err(MixGraphError::KeyModel {
                model: model.paper_name(),
                expected: "a non-zero keyrange_dist_a, _b, _c or _d",
            });
        }
        if needs_power && !self.uses_power_model() {
            return Err(MixGraphError::KeyModel {
                model: model.paper_name(),
                expected: "non-zero key_dist_a and key_dist_b",
            });
        }
        // The table holds one entry per range, so kvlab bounds it where db_bench does not.
        if !(1..=self.num.min(MAX_KEY_RANGES)).contains(&self.keyrange_num) {
            return Err(MixGraphError::flag(
                "keyrange_num",
                self.keyrange_num,
                format!("1 to num ({}), at most {MAX_KEY_RANGES}", self.num),
            ));
        }
        if let Some(starts) = &self.keyrange_starts {
            self.check_starts(starts)?;
        }
        if needs_ranges {
            KeyRanges::new(self)?;
        }
        Ok(())
    }

    /// Explicit range starts: as many as `keyrange_num`, strictly increasing, below
    /// `num`.
    fn check_starts(&self, starts: &[u64]) -> Result<(), MixGraphError> {
        if starts.len() as i64 != self.keyrange_num {
            return Err(MixGraphError::flag(
                "keyrange_num",
                self.keyrange_num,
                format!("the number of key-range starts ({})", starts.len()),
            ));
        }
        if let Some(i) = starts.windows(2).position(|w| w[0] >= w[1]) {
            return Err(MixGraphError::flag(
                "keyrange_starts",
                format!("{} then {}", starts[i], starts[i + 1]),
                format!(
                    "strictly increasing key numbers (starts {} and {})",
                    i + 1,
                    i + 2
                ),
            ));
        }
        if let Some(&last) = starts.last() {
            if last >= self.num as u64 {
                return Err(MixGraphError::flag(
                    "keyrange_starts",
                    last,
                    format!("key numbers below num ({})", self.num),
                ));
            }
        }
        Ok(())
    }

    fn check_mix(&self) -> Result<(), MixGraphError> {
        for (flag, v) in [
            ("mix_get_ratio", self.mix_get_ratio),
            ("mix_put_ratio", self.mix_put_ratio),
            ("mix_seek_ratio", self.mix_seek_ratio),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(MixGraphError::flag(flag, v, "a finite ratio ≥ 0"));
            }
        }
        let sum = self.mix_get_ratio + self.mix_put_ratio + self.mix_seek_ratio;
        if sum <= 0.0 {
            return Err(MixGraphError::flag(
                "mix_get_ratio",
                self.mix_get_ratio,
                "mix_get_ratio + mix_put_ratio + mix_seek_ratio > 0",
            ));
        }
        if self.mix_max_scan_len < 1 {
            return Err(MixGraphError::flag(
                "mix_max_scan_len",
                self.mix_max_scan_len,
                "at least 1",
            ));
        }
        if self.mix_max_value_size < 1 {
            return Err(MixGraphError::flag(
                "mix_max_value_size",
                self.mix_max_value_size,
                "at least 1",
            ));
        }
        Ok(())
    }

    fn check_sine(&self) -> Result<(), MixGraphError> {
        for (flag, v) in [
            ("sine_a", self.sine_a),
            ("sine_b", self.sine_b),
            ("sine_c", self.sine_c),
            ("sine_d", self.sine_d),
        ] {
            if !v.is_finite() {
                return Err(MixGraphError::flag(flag, v, "a finite number"));
            }
        }
        if !(0.0..=1.0).contains(&self.sine_mix_rate_noise) {
            return Err(MixGraphError::flag(
                "sine_mix_rate_noise",
                self.sine_mix_rate_noise,
                "0 to 1",
            ));
        }
        if !(1..=MAX_SINE_INTERVAL_MS).contains(&self.sine_mix_rate_interval_milliseconds) {
            return Err(MixGraphError::flag(
                "sine_mix_rate_interval_milliseconds",
                self.sine_mix_rate_interval_milliseconds,
                format!("1 to {MAX_SINE_INTERVAL_MS}"),
            ));
        }
        // db_bench's AddNoise takes `rand() % (int)sine_a` at every rate change, noise
        // or not: a division by zero when |sine_a| < 1.
        if self.sine_mix_rate && !(self.sine_a.abs() >= 1.0 && self.sine_a.abs() < 2.147e9) {
            return Err(MixGraphError::flag(
                "sine_a",
                self.sine_a,
                "|sine_a| from 1 to 2^31 with -sine_mix_rate (db_bench takes rand() % (int)sine_a)",
            ));
        }
        Ok(())
    }
}

/// A flag's value parsed as gflags would, or an error naming the flag.
fn parse<T: std::str::FromStr>(
    flag: &'static str,
    value: &str,
    expected: &'static str,
) -> Result<T, MixGraphError> {
    value
        .trim()
        .parse()
        .map_err(|_| MixGraphError::flag(flag, value, expected))
}

/// A gflags boolean: `true`/`false`, `1`/`0`, `yes`/`no`, `t`/`f`, `y`/`n` (any case).
fn parse_bool(flag: &'static str, value: &str) -> Result<bool, MixGraphError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "t" | "y" => Ok(true),
        "false" | "0" | "no" | "f" | "n" => Ok(false),
        _ => Err(MixGraphError::flag(flag, value, "true or false")),
    }
}

impl MixGraphConfig {
    /// Sets db_bench flag `name` (without dashes) from its text, as db_bench's gflags
    /// parses it. Returns `false` for a flag mixgraph does not read (`db`,
    /// `use_existing_db`, …), leaving the config unchanged, so a db_bench command line
    /// can be passed whole. Does not validate ([`MixGraphConfig::validate`] does).
    pub fn set_flag(&mut self, name: &str, value: &str) -> Result<bool, MixGraphError> {
        const INT: &str = "an integer";
        const NUM: &str = "a number";
        match name {
            "num" => self.num = parse("num", value, INT)?,
            "reads" => self.reads = parse("reads", value, INT)?,
            "duration" => self.duration = parse("duration", value, INT)?,
            "threads" => self.threads = parse("threads", value, INT)?,
            "seed" => self.seed = parse("seed", value, INT)?,
            "key_size" => self.key_size = parse("key_size", value, INT)?,
            "prefix_size" => self.prefix_size = parse("prefix_size", value, INT)?,
            "keys_per_prefix" => self.keys_per_prefix = parse("keys_per_prefix", value, INT)?,
            "keyrange_num" => self.keyrange_num = parse("keyrange_num", value, INT)?,
            "keyrange_dist_a" => self.keyrange_dist_a = parse("keyrange_dist_a", value, NUM)?,
            "keyrange_dist_b" => self.keyrange_dist_b = parse("keyrange_dist_b", value, NUM)?,
            "keyrange_dist_c" => self.keyrange_dist_c = parse("keyrange_dist_c", value, NUM)?,
            "keyrange_dist_d" => self.keyrange_dist_d = parse("keyrange_dist_d", value, NUM)?,
            "key_dist_a" => self.key_dist_a = parse("key_dist_a", value, NUM)?,
            "key_dist_b" => self.key_dist_b = parse("key_dist_b", value, NUM)?,
            "value_theta" => self.value_theta = parse("value_theta", value, NUM)?,
            "value_k" => self.value_k = parse("value_k", value, NUM)?,
            "value_sigma" => self.value_sigma = parse("value_sigma", value, NUM)?,
            "iter_theta" => self.iter_theta = parse("iter_theta", value, NUM)?,
            "iter_k" => self.iter_k = parse("iter_k", value, NUM)?,
            "iter_sigma" => self.iter_sigma = parse("iter_sigma", value, NUM)?,
            "mix_get_ratio" => self.mix_get_ratio = parse("mix_get_ratio", value, NUM)?,
            "mix_put_ratio" => self.mix_put_ratio = parse("mix_put_ratio", value, NUM)?,
            "mix_seek_ratio" => self.mix_seek_ratio = parse("mix_seek_ratio", value, NUM)?,
            "mix_max_scan_len" => {
                self.mix_max_scan_len = parse("mix_max_scan_len", value, INT)?;
            }
            "mix_max_value_size" => {
                self.mix_max_value_size = parse("mix_max_value_size", value, INT)?;
            }
            "sine_mix_rate" => self.sine_mix_rate = parse_bool("sine_mix_rate", value)?,
            "sine_a" => self.sine_a = parse("sine_a", value, NUM)?,
            "sine_b" => self.sine_b = parse("sine_b", value, NUM)?,
            "sine_c" => self.sine_c = parse("sine_c", value, NUM)?,
            "sine_d" => self.sine_d = parse("sine_d", value, NUM)?,
            "sine_mix_rate_interval_milliseconds" => {
                self.sine_mix_rate_interval_milliseconds = parse(
                    "sine_mix_rate_interval_milliseconds",
                    value,
                    "a non-negative integer",
                )?;
            }
            "sine_mix_rate_noise" => {
                self.sine_mix_rate_noise = parse("sine_mix_rate_noise", value, NUM)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The config of a db_bench command line's arguments (`-num=5000000`,
    /// `--key_size=48`, `-sine_mix_rate`, …): defaults, then each mixgraph flag in
    /// order, validated. Returns the arguments it did not use (other db_bench flags,
    /// and anything not of the form `-name=value`: gflags' `-name value` is not read,
    /// except for the boolean `-sine_mix_rate` / `-nosine_mix_rate`).
    pub fn from_db_bench_args<'a>(
        args: impl IntoIterator<Item = &'a str>,
    ) -> Result<(MixGraphConfig, Vec<&'a str>), MixGraphError> {
        let mut config = MixGraphConfig::default();
        let mut unused = Vec::new();
        for arg in args {
            let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
                unused.push(arg);
                continue;
            };
            // gflags: a boolean flag alone means true; `-noflag` means false.
            let (name, value) = match flag.split_once('=') {
                Some((name, value)) => (name, value),
                None if flag == "sine_mix_rate" => (flag, "true"),
                None if flag == "nosine_mix_rate" => ("sine_mix_rate", "false"),
                None => {
                    unused.push(arg);
                    continue;
                }
            };
            if !config.set_flag(name, value)? {
                unused.push(arg);
            }
        }
        config.validate()?;
        Ok((config, unused))
    }
}

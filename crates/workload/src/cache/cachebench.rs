//! [`CacheBenchConfig`]: CacheLib CacheBench JSON configs (`{"cache_config": {…},
//! "test_config": {…}}`) read as kvlab cache workloads.
//!
//! The `test_config` fields that define CacheBench's stress workload become a
//! [`CacheSpec`] — with the semantics of CacheLib's `cachebench/util/Config.cpp` and
//! `cachebench/workload/WorkloadDistribution.h` — and the ones that size the run
//! (`numThreads`, `opRatePerSec`, `cacheSizeMB`) are exposed for the command line.
//! Nothing is ignored silently: a field that kvlab does not model is a
//! [`CacheBenchWarning`] when the workload stays the same without it, and an error when
//! ignoring it would change what the workload does (chained items, trace replay, …).

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::props::suggestion;
use crate::WorkloadError;
use crate::{CacheSpec, CacheWorkload, OpMix, Origin, Popularity, SizeDist, SizePiece};

/// A `cache_config` or `test_config` field that kvlab reads but does not model, and why
/// that leaves the workload unchanged (or how kvlab approximates it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheBenchWarning {
    /// The field, qualified by where it is: `test_config.opDelayNs`,
    /// `cache_config.poolRebalanceIntervalSec`, `pop.json:oneHits`.
    pub field: String,
    /// What kvlab does instead.
    pub message: String,
}

impl fmt::Display for CacheBenchWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// A CacheBench config read as a kvlab cache workload.
///
/// The `test_config` fields that define CacheBench's stress workload become a
/// [`CacheSpec`], with the semantics of CacheLib's `cachebench/util/Config.cpp` and
/// `cachebench/workload/WorkloadDistribution.h`; the ones that size the run
/// (`numThreads`, `opRatePerSec`, `cacheSizeMB`) are exposed for the command line.
/// Nothing is ignored silently: a field kvlab does not model is a [`CacheBenchWarning`]
/// when the workload stays the same without it, and an error when ignoring it would
/// change what the workload does (chained items, trace replay, several pools, …). The
/// field-by-field list is in `docs/cache-workloads.md`.
#[derive(Clone, Debug)]
pub struct CacheBenchConfig {
    path: PathBuf,
    spec: CacheSpec,
    threads: u64,
    ops_per_thread: u64,
    target_rate: Option<f64>,
    cache_size_mb: Option<u64>,
    nvm_cache_size_mb: Option<u64>,
    warnings: Vec<CacheBenchWarning>,
}

/// `test_config` fields that `-p name=value` may override (numbers, and `true`/`false`
/// for `enableLookaside`).
pub const CACHEBENCH_OVERRIDES: &[&str] = &[
    "delRatio",
    "enableLookaside",
    "getRatio",
    "loneGetRatio",
    "loneSetRatio",
    "numKeys",
    "numOps",
    "numThreads",
    "opDelayBatch",
    "opDelayNs",
    "opRatePerSec",
    "setRatio",
];

/// Fields of CacheLib's `DistributionConfig`: read from `test_config`, or from the one
/// entry of `poolDistributions`.
const DISTRIBUTION_FIELDS: &[&str] = &[
    "addChainedRatio",
    "chainedItemLengthRange",
    "chainedItemLengthRangeProbability",
    "chainedItemValSizeRange",
    "chainedItemValSizeRangeProbability",
    "couldExistRatio",
    "delRatio",
    "getRatio",
    "keySizeRange",
    "keySizeRangeProbability",
    "loneGetRatio",
    "loneSetRatio",
    "popDistFile",
    "popularityBuckets",
    "popularityWeights",
    "setRatio",
    "ttlSecsRange",
    "ttlSecsRangeProbability",
    "updateRatio",
    "valSizeDistFile",
    "valSizeRange",
    "valSizeRangeProbability",
];

/// `StressorConfig` fields kvlab reads.
const STRESSOR_FIELDS: &[&str] = &[
    "configPath",
    "enableLookaside",
    "generator",
    "keyPoolDistribution",
    "name",
    "numKeys",
    "numOps",
    "numThreads",
    "onlySetIfMiss",
    "opDelayBatch",
    "opDelayNs",
    "opPoolDistribution",
    "opRatePerSec",
    "poolDistributions",
];

const REPLAY_ONLY: &str = "used only by CacheBench's trace-replay generators; ignored";

/// CacheBench fields whose absence leaves kvlab's workload the same, and why.
const IGNORED_FIELDS: &[(&str, &str)] = &[
    (
        "chainedItemLengthRange",
        "chained items are used only with addChainedRatio > 0; ignored",
    ),
    (
        "chainedItemLengthRangeProbability",
        "chained items are used only with addChainedRatio > 0; ignored",
    ),
    (
        "chainedItemValSizeRange",
        "chained items are used only with addChainedRatio > 0; ignored",
    ),
    (
        "chainedItemValSizeRangeProbability",
        "chained items are used only with addChainedRatio > 0; ignored",
    ),
    (
        "checkConsistency",
        "kvlab does not check the values a cache returns; ignored",
    ),
    ("checkNvmCacheWarmUp", "a CacheLib NVM cache check; ignored"),
    ("diskFilePath", REPLAY_ONLY),
    ("ignoreOpCount", REPLAY_ONLY),
    (
        "maxCachePieces",
        "used only by CacheBench's piecewise-replay generator; ignored",
    ),
    (
        "cachePieceSize",
        "used only by CacheBench's piecewise-replay generator; ignored",
    ),
    (
        "maxInconsistencyCount",
        "kvlab does not check the values a cache returns; ignored",
    ),
    (
        "maxInvalidDestructorCount",
        "a CacheLib item destructor check; ignored",
    ),
    ("minLBA", REPLAY_ONLY),
    (
        "opRateBurstSize",
        "kvlab paces its open loop evenly, without bursts; ignored",
    ),
    ("pageSize", REPLAY_ONLY),
    (
        "populateItem",
        "kvlab always writes value bytes of the chosen size; ignored",
    ),
    ("repeatTraceReplay", REPLAY_ONLY),
    ("replayGeneratorConfig", REPLAY_ONLY),
    (
        "samplingIntervalMs",
        "CacheBench's stats sampling; kvlab reports its own intervals; ignored",
    ),
    ("timestampFactor", REPLAY_ONLY),
    (
        "touchValue",
        "kvlab stores return the value of every hit; ignored",
    ),
    ("traceBlockSize", REPLAY_ONLY),
    ("traceFileName", REPLAY_ONLY),
    ("traceFileNames", REPLAY_ONLY),
    ("traceFilePath", REPLAY_ONLY),
    (
        "useLegacyKeyGen",
        "a CacheBench key-generation variant; kvlab names keys its own way; ignored",
    ),
];

/// Generators kvlab models: CacheBench's default `WorkloadGenerator` (empty name) and
/// the `OnlineGenerator`; both sample the same distributions.
const GENERATORS: &[&str] = &["", "workload", "online"];

/// A parsed JSON file (comments stripped, as CacheBench does) with its text for line
/// lookups.
struct JsonFile {
    path: PathBuf,
    text: String,
    root: Map<String, Value>,
}

impl JsonFile {
    fn read(path: &Path) -> Result<JsonFile, WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        JsonFile::parse(&text, path)
    }

    fn parse(text: &str, path: &Path) -> Result<JsonFile, WorkloadError> {
        let text = strip_comments(text);
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let message = full.strip_suffix(&suffix).unwrap_or(&full);
            WorkloadError::Syntax {
                path: path.to_path_buf(),
                line: e.line(),
                message: format!("column {}: malformed JSON: {message}", e.column()),
            }
        })?;
        let Value::Object(root) = value else {
            return Err(WorkloadError::Syntax {
                path: path.to_path_buf(),
                line: 1,
                message: "expected a JSON object".into(),
            });
        };
        Ok(JsonFile {
            path: path.to_path_buf(),
            text,
            root,
        })
    }

    /// The 1-based line where `"field":` first appears (1 when it does not).
    fn line_of(&self, field: &str) -> usize {
        let quoted = format!("\"{field}\"");
        let mut from = 0;
        while let Some(at) = self.text[from..].find(&quoted) {
            let end = from + at + quoted.len();
            if self.text[end..].trim_start().starts_with(':') {
                return self.text[..from + at].matches('\n').count() + 1;
            }
            from = end;
        }
        1
    }

    fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }
}

/// Replaces `//` and `/* */` comments outside strings with spaces, keeping newlines so
/// line numbers stay right (folly's `json::stripComments`, which CacheBench applies).
fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
            }
            i += 1;
        } else if b == b'"' {
            in_string = true;
            out.push(b);
            i += 1;
        } else if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
            for &c in &bytes[i..end] {
                out.push(if c == b'\n' { b'\n' } else { b' ' });
            }
            i = end;
        } else {
            out.push(b);
            i += 1;
        }
    }
    // Only ASCII bytes outside strings were replaced, by ASCII: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Typed access to one JSON object's fields, with errors that point at `file:line` (or
/// at `-p` for overridden fields).
struct Fields<'a> {
    map: &'a Map<String, Value>,
    file: &'a JsonFile,
    overridden: &'a BTreeSet<String>,
}

impl<'a> Fields<'a> {
    fn origin(&self, field: &str) -> Origin {
        if self.overridden.contains(field) {
            Origin::CommandLine
        } else {
            Origin::File {
                path: self.file.path.clone(),
                line: self.file.line_of(field),
            }
        }
    }

    fn invalid(&self, field: &str, expected: &str) -> WorkloadError {
        let mut value = self
            .map
            .get(field)
            .map_or_else(String::new, Value::to_string);
        if value.len() > 60 {
            let mut cut = 57;
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            value.truncate(cut);
            value.push_str("...");
        }
        WorkloadError::InvalidValue {
            key: field.to_string(),
            value,
            origin: self.origin(field),
            expected: expected.to_string(),
        }
    }

    fn has(&self, field: &str) -> bool {
        self.map.contains_key(field)
    }

    fn u64(&self, field: &str) -> Result<Option<u64>, WorkloadError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(v) => json_u64(v)
                .map(Some)
                .ok_or_else(|| self.invalid(field, "a non-negative integer")),
        }
    }

    fn f64(&self, field: &str) -> Result<Option<f64>, WorkloadError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(self.invalid(field, "a non-negative number")),
            },
        }
    }

    fn bool(&self, field: &str) -> Result<Option<bool>, WorkloadError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            // folly's asBool, which CacheBench uses, also takes 0 and 1.
            Some(v) if json_u64(v) == Some(0) => Ok(Some(false)),
            Some(v) if json_u64(v) == Some(1) => Ok(Some(true)),
            Some(_) => Err(self.invalid(field, "true or false")),
        }
    }

    fn str(&self, field: &str) -> Result<Option<&'a str>, WorkloadError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.invalid(field, "a string")),
        }
    }

    fn f64_list(&self, field: &str) -> Result<Option<Vec<f64>>, WorkloadError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_f64().filter(|x| x.is_finite() && *x >= 0.0))
                .collect::<Option<Vec<f64>>>()
                .map(Some)
                .ok_or_else(|| self.invalid(field, "a list of non-negative numbers")),
            Some(_) => Err(self.invalid(field, "a list of non-negative numbers")),
        }
    }

    fn u64_list(&self, field: &str) -> Result<Option<Vec<u64>>, WorkloadError> {
        match self.map.get(field) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(json_u64)
                .collect::<Option<Vec<u64>>>()
                .map(Some)
                .ok_or_else(|| self.invalid(field, "a list of non-negative integers")),
            Some(_) => Err(self.invalid(field, "a list of non-negative integers")),
        }
    }

    /// A list with at most one entry (pool lists: kvlab models one pool).
    fn single_pool(&self, field: &str) -> Result<(), WorkloadError> {
        match self.map.get(field) {
            None => Ok(()),
            Some(Value::Array(items)) if items.len() <= 1 => Ok(()),
            Some(_) => {
                Err(self.invalid(field, "at most one entry: kvlab models a single cache pool"))
            }
        }
    }
}

/// An integral, non-negative JSON number (`5e6` included).
fn json_u64(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let x = v.as_f64()?;
    (x >= 0.0 && x.fract() == 0.0 && x < 18_446_744_073_709_551_616.0).then_some(x as u64)
}

/// A CacheBench size distribution (`valSizeRange` + `valSizeRangeProbability`, or the
/// TTL pair): discrete when both lists have the same length, piecewise uniform over
/// `[r[i], r[i+1])` when the ranges have one more entry — CacheLib's
/// `usesDiscreteValueSizes` and its `std::piecewise_constant_distribution`, whose real
/// draws are truncated to integers.
fn size_dist(
    f: &Fields<'_>,
    range_field: &str,
    prob_field: &str,
    allow_discrete: bool,
) -> Result<Option<SizeDist>, WorkloadError> {
    let (Some(range), Some(probs)) = (f.f64_list(range_field)?, f.f64_list(prob_field)?) else {
        if f.has(range_field) || f.has(prob_field) {
            let missing = if f.has(range_field) {
                prob_field
            } else {
                range_field
            };
            let present = if f.has(range_field) {
                range_field
            } else {
                prob_field
            };
            return Err(f.invalid(present, &format!("to come with {missing}")));
        }
        return Ok(None);
    };
    if let Some(x) = range.iter().find(|x| x.fract() != 0.0) {
        return Err(f.invalid(range_field, &format!("whole numbers (found {x})")));
    }
    let pieces: Vec<SizePiece> = if allow_discrete && range.len() == probs.len() {
        range
            .iter()
            .zip(&probs)
            .map(|(&v, &weight)| SizePiece {
                lo: v as u64,
                hi: v as u64,
                weight,
            })
            .collect()
    } else if range.len() == probs.len() + 1 {
        let mut pieces = Vec::with_capacity(probs.len());
        for (i, &weight) in probs.iter().enumerate() {
            let (lo, hi) = (range[i], range[i + 1]);
            if hi < lo || (hi == lo && weight > 0.0) {
                return Err(f.invalid(
                    range_field,
                    &format!("increasing boundaries (entry {i}: {lo} then {hi})"),
                ));
            }
            if hi > lo {
                pieces.push(SizePiece {
                    lo: lo as u64,
                    hi: hi as u64 - 1,
                    weight,
                });
            }
        }
        pieces
    } else {
        let expected = if allow_discrete {
            format!(
                "as many entries as {prob_field} ({}, discrete sizes) or one more \
                 (boundaries of uniform ranges); found {}",
                probs.len(),
                range.len()
            )
        } else {
            format!(
                "one more entry than {prob_field} (boundaries of uniform ranges: {}); found {}",
                probs.len() + 1,
                range.len()
            )
        };
        return Err(f.invalid(range_field, &expected));
    };
    SizeDist::from_pieces(pieces)
        .map(Some)
        .map_err(|e| f.invalid(prob_field, &e))
}

/// Reads a CacheBench popularity file (`popDistFile`, e.g. `pop.json`):
/// `popularityBuckets` and `popularityWeights`. Other fields (`oneHits`) are not read,
/// as in CacheBench.
pub(crate) fn read_popularity_file(path: &Path) -> Result<(Vec<u64>, Vec<f64>), WorkloadError> {
    let file = JsonFile::read(path)?;
    let none = BTreeSet::new();
    let f = Fields {
        map: &file.root,
        file: &file,
        overridden: &none,
    };
    match (
        f.u64_list("popularityBuckets")?,
        f.f64_list("popularityWeights")?,
    ) {
        (Some(sizes), Some(weights)) => Ok((sizes, weights)),
        _ => Err(WorkloadError::Syntax {
            path: path.to_path_buf(),
            line: 1,
            message: "expected popularityBuckets and popularityWeights".into(),
        }),
    }
}

impl CacheBenchConfig {
    /// Reads the config at `path` and applies `overrides` (`-p name=value`, names from
    /// [`CACHEBENCH_OVERRIDES`]) to its `test_config` before interpreting it.
    /// `valSizeDistFile` and `popDistFile` are read relative to `configPath`, or to the
    /// config's directory when there is none.
    pub fn load(
        path: &Path,
        overrides: &[(String, String)],
    ) -> Result<CacheBenchConfig, WorkloadError> {
        let file = JsonFile::read(path)?;
        CacheBenchConfig::from_file(file, overrides)
    }

    /// As [`CacheBenchConfig::load`], with the config's text given; `path` names it in
    /// errors and locates the distribution files.
    pub fn parse_str(
        text: &str,
        path: &Path,
        overrides: &[(String, String)],
    ) -> Result<CacheBenchConfig, WorkloadError> {
        CacheBenchConfig::from_file(JsonFile::parse(text, path)?, overrides)
    }

    fn from_file(
        mut file: JsonFile,
        overrides: &[(String, String)],
    ) -> Result<CacheBenchConfig, WorkloadError> {
        let mut warnings = Vec::new();
        let top_fields: Vec<String> = file.root.keys().cloned().collect();
        for field in top_fields {
            if field != "cache_config" && field != "test_config" {
                warnings.push(CacheBenchWarning {
                    field,
                    message: "not a CacheBench config section; ignored".into(),
                });
            }
        }
        if !matches!(file.root.get("test_config"), Some(Value::Object(_))) {
            return Err(WorkloadError::Syntax {
                path: file.path.clone(),
                line: file.line_of("test_config"),
                message: "expected a `test_config` object".into(),
            });
        }
        let overridden = apply_overrides(&mut file, overrides)?;
        let Some(Value::Object(test)) = file.root.get("test_config") else {
            unreachable!("test_config was checked to be an object above");
        };
        let t = Fields {
            map: test,
            file: &file,
            overridden: &overridden,
        };

        // The stressor: which generator, how many threads, keys, operations, how fast.
        let generator = t.str("generator")?.unwrap_or("");
        if !GENERATORS.contains(&generator) {
            return Err(t.invalid(
                "generator",
                "\"\" (CacheBench's default workload generator) or \"online\": kvlab \
                 generates from distributions and does not replay traces",
            ));
        }
        if let Some(name) = t.str("name")? {
            if !name.is_empty() {
                return Err(t.invalid(
                    "name",
                    "\"\": kvlab runs CacheBench's standard stress test, not its custom ones",
                ));
            }
        }
        if t.bool("onlySetIfMiss")? == Some(true) {
            return Err(t.invalid(
                "onlySetIfMiss",
                "false: kvlab's sets always write (set-if-absent is not modelled)",
            ));
        }
        t.single_pool("keyPoolDistribution")?;
        t.single_pool("opPoolDistribution")?;
        let num_keys = match t.u64("numKeys")? {
            Some(n) if n > 0 => n,
            _ => return Err(t.invalid("numKeys", "a positive integer")),
        };
        let ops_per_thread = t.u64("numOps")?.unwrap_or(0);
        let threads = match t.u64("numThreads")? {
            Some(0) => return Err(t.invalid("numThreads", "a positive integer")),
            Some(n) => n,
            None => {
                warnings.push(CacheBenchWarning {
                    field: "test_config.numThreads".into(),
                    message: "absent (CacheBench would run no thread); kvlab uses 1".into(),
                });
                1
            }
        };
        let lookaside = t.bool("enableLookaside")?.unwrap_or(false);
        let mut target_rate = t.u64("opRatePerSec")?.filter(|&r| r > 0).map(|r| r as f64);
        let delay_ns = t.u64("opDelayNs")?.unwrap_or(0);
        let delay_batch = t.u64("opDelayBatch")?.unwrap_or(0);
        if delay_ns > 0 && delay_batch > 0 {
            let rate = threads as f64 * delay_batch as f64 * 1e9 / delay_ns as f64;
            warnings.push(CacheBenchWarning {
                field: "test_config.opDelayNs".into(),
                message: format!(
                    "CacheBench sleeps opDelayNs={delay_ns} after every opDelayBatch=\
                     {delay_batch} operations of each thread; kvlab approximates it as an \
                     open-loop target of at most {rate:.0} ops/s over {threads} threads \
                     (CacheBench's rate is lower: its sleeps add to the operations' time)"
                ),
            });
            target_rate = Some(target_rate.map_or(rate, |r| r.min(rate)));
        }

        // The distribution: test_config itself, or the one pool distribution.
        let config_dir = match t.str("configPath")? {
            Some(dir) if !dir.is_empty() => {
                let dir = Path::new(dir);
                if dir.is_relative() {
                    file.path.parent().unwrap_or(Path::new("")).join(dir)
                } else {
                    dir.to_path_buf()
                }
            }
            _ => file.path.parent().unwrap_or(Path::new("")).to_path_buf(),
        };
        let dist_map: &Map<String, Value> = match test.get("poolDistributions") {
            None => test,
            Some(Value::Array(pools)) if pools.len() == 1 => match &pools[0] {
                Value::Object(m) => m,
                _ => return Err(t.invalid("poolDistributions", "a list of one object")),
            },
            Some(_) => {
                return Err(t.invalid(
                    "poolDistributions",
                    "a list of one object: kvlab models a single cache pool",
                ))
            }
        };
        let pooled = test.contains_key("poolDistributions");
        let d = Fields {
            map: dist_map,
            file: &file,
            overridden: &overridden,
        };
        for field in ["addChainedRatio", "updateRatio", "couldExistRatio"] {
            if d.f64(field)?.is_some_and(|r| r > 0.0) {
                let what = match field {
                    "addChainedRatio" => "chained items",
                    "updateRatio" => "in-place updates",
                    _ => "could-exist lookups",
                };
                return Err(d.invalid(field, &format!("0: kvlab does not model {what}")));
            }
        }
        let mix = OpMix {
            get: d.f64("getRatio")?.unwrap_or(0.0),
            set: d.f64("setRatio")?.unwrap_or(0.0),
            delete: d.f64("delRatio")?.unwrap_or(0.0),
            lone_get: d.f64("loneGetRatio")?.unwrap_or(0.0),
            lone_set: d.f64("loneSetRatio")?.unwrap_or(0.0),
        };
        if mix.normalised().is_none() {
            return Err(WorkloadError::Inconsistent(format!(
                "{}:{}: getRatio, setRatio, delRatio, loneGetRatio and loneSetRatio sum to 0",
                file.path.display(),
                file.line_of("getRatio")
            )));
        }
        let key_size = size_dist(&d, "keySizeRange", "keySizeRangeProbability", false)?
            .ok_or_else(|| {
                d.invalid(
                    "keySizeRange",
                    "keySizeRange and keySizeRangeProbability (CacheBench requires them)",
                )
            })?;

        let mut value_size = size_dist(&d, "valSizeRange", "valSizeRangeProbability", true)?;
        if let Some(name) = d.str("valSizeDistFile")? {
            if !name.is_empty() {
                let sizes = JsonFile::read(&config_dir.join(name))?;
                let s = Fields {
                    map: &sizes.root,
                    file: &sizes,
                    overridden: &BTreeSet::new(),
                };
                if let Some(dist) = size_dist(&s, "valSizeRange", "valSizeRangeProbability", true)?
                {
                    value_size = Some(dist);
                }
                for field in sizes.root.keys() {
                    if field != "valSizeRange" && field != "valSizeRangeProbability" {
                        warnings.push(CacheBenchWarning {
                            field: format!("{}:{field}", sizes.name()),
                            message: "not read by CacheBench from a valSizeDistFile; ignored"
                                .into(),
                        });
                    }
                }
            }
        }
        let value_size = value_size.ok_or_else(|| {
            d.invalid(
                "valSizeRange",
                "valSizeRange and valSizeRangeProbability, inline or in valSizeDistFile",
            )
        })?;
        let ttl_s = size_dist(&d, "ttlSecsRange", "ttlSecsRangeProbability", true)?;

        let mut buckets = d.u64_list("popularityBuckets")?;
        let mut weights = d.f64_list("popularityWeights")?;
        if let Some(name) = d.str("popDistFile")? {
            if !name.is_empty() {
                let pop = JsonFile::read(&config_dir.join(name))?;
                let p = Fields {
                    map: &pop.root,
                    file: &pop,
                    overridden: &BTreeSet::new(),
                };
                if let Some(b) = p.u64_list("popularityBuckets")? {
                    buckets = Some(b);
                }
                if let Some(w) = p.f64_list("popularityWeights")? {
                    weights = Some(w);
                }
                for field in pop.root.keys() {
                    if field == "popularityBuckets" || field == "popularityWeights" {
                        continue;
                    }
                    let message = if field == "oneHits" {
                        "not read by CacheBench (loneGetRatio sets the share of gets of \
                         keys requested once); ignored"
                    } else {
                        "not read by CacheBench from a popDistFile; ignored"
                    };
                    warnings.push(CacheBenchWarning {
                        field: format!("{}:{field}", pop.name()),
                        message: message.into(),
                    });
                }
            }
        }
        let popularity = match (buckets, weights) {
            (Some(sizes), Some(weights)) if !sizes.is_empty() && !weights.is_empty() => {
                if sizes.len() != weights.len() {
                    return Err(WorkloadError::Inconsistent(format!(
                        "{}: popularityBuckets has {} entries but popularityWeights has {}",
                        file.path.display(),
                        sizes.len(),
                        weights.len()
                    )));
                }
                Popularity::Buckets { sizes, weights }
            }
            (None, None) => Popularity::Normal,
            (Some(s), Some(w)) if s.is_empty() && w.is_empty() => Popularity::Normal,
            _ => {
                return Err(WorkloadError::Inconsistent(format!(
                    "{}: popularityBuckets and popularityWeights must be given together",
                    file.path.display()
                )))
            }
        };

        // Everything else in test_config (and in the pool distribution).
        for field in test.keys() {
            let handled = STRESSOR_FIELDS.contains(&field.as_str())
                || (!pooled && DISTRIBUTION_FIELDS.contains(&field.as_str()));
            if handled && !is_ignored(field) {
                continue;
            }
            warnings.push(field_warning("test_config", field, pooled));
        }
        if pooled {
            for field in dist_map.keys() {
                if !DISTRIBUTION_FIELDS.contains(&field.as_str()) || is_ignored(field) {
                    warnings.push(field_warning(
                        "test_config.poolDistributions[0]",
                        field,
                        false,
                    ));
                }
            }
        }

        // The cache: its size is a suggestion for the command line.
        let mut cache_size_mb = None;
        let mut nvm_cache_size_mb = None;
        match file.root.get("cache_config") {
            None => {}
            Some(Value::Object(cache)) => {
                let c = Fields {
                    map: cache,
                    file: &file,
                    overridden: &overridden,
                };
                cache_size_mb = c.u64("cacheSizeMB")?;
                nvm_cache_size_mb = c.u64("nvmCacheSizeMB")?;
                for field in cache.keys() {
                    if field != "cacheSizeMB" && field != "nvmCacheSizeMB" {
                        warnings.push(CacheBenchWarning {
                            field: format!("cache_config.{field}"),
                            message: "a CacheLib cache setting, not part of the workload; \
                                      ignored"
                                .into(),
                        });
                    }
                }
            }
            Some(_) => {
                return Err(WorkloadError::Syntax {
                    path: file.path.clone(),
                    line: file.line_of("cache_config"),
                    message: "expected `cache_config` to be an object".into(),
                })
            }
        }

        let spec = CacheSpec {
            keys: num_keys,
            operations: ops_per_thread.saturating_mul(threads),
            popularity,
            key_size,
            value_size,
            ttl_s,
            mix,
            lookaside,
        };
        Ok(CacheBenchConfig {
            path: file.path,
            spec,
            threads,
            ops_per_thread,
            target_rate,
            cache_size_mb,
            nvm_cache_size_mb,
            warnings,
        })
    }

    /// The config file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The workload as a spec: `keys = numKeys`, `operations = numOps × numThreads`.
    pub fn spec(&self) -> &CacheSpec {
        &self.spec
    }

    /// Builds the workload ([`CacheWorkload::new`] of [`CacheBenchConfig::spec`]).
    pub fn workload(&self) -> Result<CacheWorkload, WorkloadError> {
        CacheWorkload::new(self.spec.clone())
    }

    /// `numThreads`: the client count CacheBench runs (1 when absent).
    pub fn threads(&self) -> u64 {
        self.threads
    }

    /// `numOps`: operations per thread.
    pub fn ops_per_thread(&self) -> u64 {
        self.ops_per_thread
    }

    /// The target rate over all threads, in operations per second: `opRatePerSec`, or
    /// the rate `opDelayNs`/`opDelayBatch` allow (`numThreads × opDelayBatch × 10⁹ /
    /// opDelayNs`), the lower of the two when both are set; `None` for no limit.
    pub fn target_rate_ops_per_s(&self) -> Option<f64> {
        self.target_rate
    }

    /// `cache_config.cacheSizeMB`: the DRAM cache size CacheBench used, in MiB — a
    /// suggestion for the store's cache size (the command line's `--cache-size` wins).
    pub fn cache_size_mb(&self) -> Option<u64> {
        self.cache_size_mb
    }

    /// `cache_config.nvmCacheSizeMB`: the flash cache size CacheBench used, in MiB.
    pub fn nvm_cache_size_mb(&self) -> Option<u64> {
        self.nvm_cache_size_mb
    }

    /// Fields read but not modelled, each with what kvlab does instead, in file order
    /// of sections and name order within a section.
    pub fn warnings(&self) -> &[CacheBenchWarning] {
        &self.warnings
    }
}

fn is_ignored(field: &str) -> bool {
    IGNORED_FIELDS.iter().any(|(f, _)| *f == field)
}

fn field_warning(section: &str, field: &str, pooled: bool) -> CacheBenchWarning {
    let message = if let Some((_, why)) = IGNORED_FIELDS.iter().find(|(f, _)| *f == field) {
        (*why).to_string()
    } else if pooled && DISTRIBUTION_FIELDS.contains(&field) {
        "CacheBench reads the distribution from poolDistributions when it is given; ignored"
            .to_string()
    } else {
        let known = STRESSOR_FIELDS
            .iter()
            .chain(DISTRIBUTION_FIELDS)
            .copied()
            .chain(IGNORED_FIELDS.iter().map(|(f, _)| *f));
        match suggestion(field, known) {
            Some(s) => format!("not a CacheBench field (did you mean `{s}`?); ignored"),
            None => "not a CacheBench field; ignored".to_string(),
        }
    };
    CacheBenchWarning {
        field: format!("{section}.{field}"),
        message,
    }
}

/// Applies `-p` overrides to `test_config` (or its one pool distribution, for
/// distribution fields) and returns the overridden names.
fn apply_overrides(
    file: &mut JsonFile,
    overrides: &[(String, String)],
) -> Result<BTreeSet<String>, WorkloadError> {
    let mut overridden = BTreeSet::new();
    for (name, text) in overrides {
        let name = name.trim();
        let text = text.trim();
        if !CACHEBENCH_OVERRIDES.contains(&name) {
            return Err(WorkloadError::UnknownProperty {
                key: name.to_string(),
                origin: Origin::CommandLine,
                suggestion: suggestion(name, CACHEBENCH_OVERRIDES.iter().copied()),
            });
        }
        let invalid = |expected: &str| WorkloadError::InvalidValue {
            key: name.to_string(),
            value: text.to_string(),
            origin: Origin::CommandLine,
            expected: expected.to_string(),
        };
        let value = if name == "enableLookaside" {
            match text {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(invalid("true or false")),
            }
        } else if name.ends_with("Ratio") {
            match text.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => serde_json::Number::from_f64(x)
                    .map(Value::Number)
                    .ok_or_else(|| invalid("a non-negative number"))?,
                _ => return Err(invalid("a non-negative number")),
            }
        } else {
            match text.parse::<u64>() {
                Ok(n) => Value::from(n),
                Err(_) => return Err(invalid("a non-negative integer")),
            }
        };
        let Some(Value::Object(test)) = file.root.get_mut("test_config") else {
            unreachable!("test_config was checked to be an object before overrides");
        };
        let into_pool = DISTRIBUTION_FIELDS.contains(&name)
            && matches!(test.get("poolDistributions"),
                Some(Value::Array(pools)) if pools.len() == 1 && pools[0].is_object());
        if into_pool {
            if let Some(Value::Array(pools)) = test.get_mut("poolDistributions") {
                if let Value::Object(pool) = &mut pools[0] {
                    pool.insert(name.to_string(), value);
                }
            }
        } else {
            test.insert(name.to_string(), value);
        }
        overridden.insert(name.to_string());
    }
    Ok(overridden)
}

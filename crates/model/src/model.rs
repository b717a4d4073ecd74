//! [`Model`]: a mixgraph model file — a `[mixgraph]` table whose keys are db_bench's flag
//! names (RocksDB 7.8 `tools/db_bench_tool.cc`, as [`MixGraphConfig::set_flag`] reads
//! them), and a free-form `[fit]` table of how well each part fitted.
//!
//! ```toml
//! # kvlab model: db_bench mixgraph flags fitted to a trace
//! [mixgraph]
//! num = 50000            # distinct keys
//! mix_get_ratio = 0.85
//! keyrange_num = 10
//! keyrange_dist_a = 14.18
//! # …
//! [fit]
//! requests = 1000000
//! ```
//!
//! A `[kvlab]` table, when present, holds what db_bench has no flag for:
//! `keyrange_starts` (key ranges sized by the data, one per SST file of a database) and
//! `keyrange_source` (where they came from).
//!
//! A key left out keeps db_bench's default; an unknown key, a value of the wrong type,
//! or a set of values db_bench refuses ([`MixGraphConfig::validate`]) is an error naming
//! the file, the line and the key.

use std::path::{Path, PathBuf};

use kvlab_dist::locality::{Locality, Reuse};
use kvlab_dist::mixgraph::{MixGraphConfig, MixGraphError, SizeModel};
use serde::{Deserialize, Serialize};

use crate::ModelError;

macro_rules! params {
    ($($(#[doc = $doc:literal])+ $name:ident: $ty:ty,)+) => {
        /// The `[mixgraph]` table: each key a db_bench flag (`-num`, `-mix_get_ratio`,
        /// …); a key left out (`None`) keeps db_bench's default.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct MixGraphParams {
            $(
                $(#[doc = $doc])+
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $name: Option<$ty>,
            )+
        }

        impl MixGraphParams {
            /// Every key the table allows, in file order.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($name)),+];

            /// `config` with every key that is set applied.
            pub fn apply(&self, config: &mut MixGraphConfig) {
                $(if let Some(v) = self.$name { config.$name = v; })+
            }

            /// Each key that is set: name, value as TOML, its documentation.
            fn entries(&self) -> Vec<(&'static str, String, &'static str)> {
                let mut out = Vec::new();
                $(if let Some(v) = self.$name {
                    out.push((stringify!($name), toml_value(v), concat!($($doc),+)));
                })+
                out
            }
        }
    };
}

/// A value as TOML writes it (floats always with a point or an exponent).
trait TomlValue {
    fn toml(&self) -> String;
}

impl TomlValue for f64 {
    fn toml(&self) -> String {
        // `{:?}` keeps a float a float (`1.0`, `1e-20`) and round-trips exactly.
        format!("{self:?}")
    }
}

macro_rules! plain_toml {
    ($($t:ty),+) => {$(impl TomlValue for $t { fn toml(&self) -> String { self.to_string() } })+};
}
plain_toml!(i64, i32, u64, bool);

fn toml_value<T: TomlValue>(v: T) -> String {
    v.toml()
}

params! {
    /// Key numbers are drawn from `0..num` (fitted: the trace's distinct keys).
    num: i64,
    /// Operations per thread (fitted: the trace's requests).
    reads: i64,
    /// Seconds to run (0: `reads` decides).
    duration: i32,
    /// Threads, each with its own random stream.
    threads: i32,
    /// The seed base of the threads' streams.
    seed: i64,
    /// Key length in bytes (fitted: the most common key size).
    key_size: i32,
    /// Bytes of the key prefix when `keys_per_prefix > 0`.
    prefix_size: i32,
    /// Keys per prefix (0: none).
    keys_per_prefix: i64,
    /// Get's share of the op mix (fitted: reads of every kind).
    mix_get_ratio: f64,
    /// Put's share (fitted: writes and merges).
    mix_put_ratio: f64,
    /// Seek's share (fitted: seeks and scans).
    mix_seek_ratio: f64,
    /// Equal key ranges of sorted keys.
    keyrange_num: i64,
    /// `a` of the key-range hotness `a·e^{b·x} + c·e^{d·x}` (x: range rank, hottest 1).
    keyrange_dist_a: f64,
    /// `b` of the key-range hotness.
    keyrange_dist_b: f64,
    /// `c` of the key-range hotness.
    keyrange_dist_c: f64,
    /// `d` of the key-range hotness.
    keyrange_dist_d: f64,
    /// `a` of the key popularity power model `P(rank ≤ r) = a·r^b`.
    key_dist_a: f64,
    /// `b` of the power model.
    key_dist_b: f64,
    /// Location θ of the generalized Pareto value size.
    value_theta: f64,
    /// Shape k of the value size.
    value_k: f64,
    /// Scale σ of the value size.
    value_sigma: f64,
    /// Larger value sizes wrap modulo this (at most 1 MiB).
    mix_max_value_size: i64,
    /// Location θ of the generalized Pareto scan length.
    iter_theta: f64,
    /// Shape k of the scan length.
    iter_k: f64,
    /// Scale σ of the scan length.
    iter_sigma: f64,
    /// Scan lengths are taken modulo this.
    mix_max_scan_len: i64,
    /// Modulate the request rate by `sine_a·sin(sine_b·t + sine_c) + sine_d`.
    sine_mix_rate: bool,
    /// Amplitude A of the rate (ops/s).
    sine_a: f64,
    /// Angular frequency B (radians per second).
    sine_b: f64,
    /// Phase C (radians).
    sine_c: f64,
    /// Offset D (ops/s).
    sine_d: f64,
    /// How often the rate is recomputed (ms).
    sine_mix_rate_interval_milliseconds: u64,
    /// Noise ratio of the rate, 0 to 1.
    sine_mix_rate_noise: f64,
}

/// The `[kvlab]` table: what the generator takes beyond db_bench's flags.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvlabParams {
    /// Key ranges sized by the data: each range's first key number, strictly
    /// increasing, below `num`, as many as `keyrange_num`
    /// ([`MixGraphConfig::keyrange_starts`]); `None`: db_bench's equal ranges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyrange_starts: Option<Vec<u64>>,
    /// Where the starts came from (`sst:DBPATH`), for the reader; not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyrange_source: Option<String>,
    /// The value-size law where the best fit is not db_bench's generalized Pareto
    /// ([`MixGraphConfig::value_model`]); `None`: `value_theta/k/sigma`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_model: Option<SizeModel>,
    /// The scan-length law where the best fit is not a generalized Pareto
    /// ([`MixGraphConfig::scan_model`]); `None`: `iter_theta/k/sigma`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_model: Option<SizeModel>,
}

impl KvlabParams {
    /// Every key the table allows.
    pub const KEYS: &'static [&'static str] = &[
        "keyrange_starts",
        "keyrange_source",
        "value_model",
        "scan_model",
    ];

    fn is_empty(&self) -> bool {
        self.keyrange_starts.is_none()
            && self.keyrange_source.is_none()
            && self.value_model.is_none()
            && self.scan_model.is_none()
    }
}

/// A mixgraph model: db_bench flags, how they were made, and how well they fitted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Model {
    /// Comment lines written at the top of the file (without `# `): how it was made.
    pub header: Vec<String>,
    /// The `[mixgraph]` table.
    pub mixgraph: MixGraphParams,
    /// The `[locality]` table: kvlab's locality layer over the key model's draws
    /// ([`kvlab_dist::locality`]; not a db_bench flag, so [`Model::db_bench_args`]
    /// leaves it out). `None`: db_bench's independent draws.
    pub locality: Option<Locality>,
    /// The `[kvlab]` table: kvlab-only settings of the generator (explicit key ranges).
    pub kvlab: KvlabParams,
    /// The `[fit]` table: errors of each fit (free-form; not read by the generator).
    pub fit: toml::Table,
}

/// The file's layout, as serde reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    mixgraph: MixGraphParams,
    #[serde(default)]
    locality: Option<LocalityTable>,
    #[serde(default)]
    kvlab: KvlabParams,
    #[serde(default)]
    fit: toml::Table,
}

/// The `[locality]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalityTable {
    new_share: f64,
    new_steps: Vec<[u64; 2]>,
    #[serde(default)]
    new_near: Vec<[u64; 4]>,
    reuse: Vec<[u64; 4]>,
    #[serde(default = "all_pure")]
    pure_keys: f64,
    #[serde(default)]
    same_op: Vec<f64>,
}

fn all_pure() -> f64 {
    1.0
}

impl LocalityTable {
    fn into_locality(self) -> Locality {
        Locality {
            new_share: self.new_share,
            new_steps: self.new_steps.into_iter().map(|[s, w]| (s, w)).collect(),
            new_near: classes(self.new_near),
            reuse: classes(self.reuse),
            pure_keys: self.pure_keys,
            same_op: self.same_op,
        }
    }
}

/// `[depth_lo, depth_hi, step, weight]` rows as classes.
fn classes(rows: Vec<[u64; 4]>) -> Vec<Reuse> {
    rows.into_iter()
        .map(|[depth_lo, depth_hi, step, weight]| Reuse {
            depth_lo,
            depth_hi,
            step,
            weight,
        })
        .collect()
}

/// `[depth_lo, depth_hi, step, weight]` rows, one a line.
fn class_rows(out: &mut String, key: &str, classes: &[Reuse]) {
    out.push_str(&format!("{key} = [\n"));
    for r in classes {
        out.push_str(&format!(
            "  [{}, {}, {}, {}],\n",
            r.depth_lo, r.depth_hi, r.step, r.weight
        ));
    }
    out.push_str("]\n");
}

/// The `[locality]` table's text.
fn locality_toml(l: &Locality) -> String {
    let mut out = String::from(
        "\n# kvlab's locality layer over the key model's draws (not a db_bench flag: db_bench \
         draws every\n# key independently). `kvlab run --model` and `kvlab model fidelity` run it; \
         remove the table\n# for db_bench's mixgraph alone.\n[locality]\n\
         # Share of requests that touch a key for the first time.\n",
    );
    out.push_str(&format!("new_share = {}\n", toml_value(l.new_share)));
    out.push_str(
        "# [step, weight]: a new key is the first untouched key at or after the previous new key \
         + step\n# (step 0: at or after the key model's draw).\nnew_steps = [",
    );
    let steps: Vec<String> = l
        .new_steps
        .iter()
        .map(|(s, w)| format!("[{s}, {w}]"))
        .collect();
    out.push_str(&steps.join(", "));
    out.push_str(
        "]\n# [depth_lo, depth_hi, step, weight]: or (drawn with new_steps by weight) the first \
         untouched key at or\n# after the key at an LRU depth in depth_lo..=depth_hi, plus step.\n",
    );
    class_rows(&mut out, "new_near", &l.new_near);
    out.push_str(
        "# [depth_lo, depth_hi, step, weight]: a key touched again is the key at an LRU depth \
         uniform in\n# depth_lo..=depth_hi (0: the key touched last; depths count distinct \
         keys), plus step.\n",
    );
    class_rows(&mut out, "reuse", &l.reuse);
    out.push_str(
        "# The share of keys that keep the op and size of their first touch on every touch.\n",
    );
    out.push_str(&format!("pure_keys = {}\n", toml_value(l.pure_keys)));
    out.push_str(
        "# For the other keys, per kind of that first touch (get, put, seek), the chance that \
         a touch\n# keeps its op and size (else the new draw's, for that touch).\nsame_op = [",
    );
    let same: Vec<String> = l.same_op.iter().map(|&p| toml_value(p)).collect();
    out.push_str(&same.join(", "));
    out.push_str("]\n");
    out
}

impl Model {
    /// The generator's config: db_bench's defaults with every key of `[mixgraph]`
    /// applied. A model read by [`Model::from_toml`] gives a validated config.
    pub fn to_config(&self) -> MixGraphConfig {
        let mut config = MixGraphConfig::default();
        self.mixgraph.apply(&mut config);
        config.locality = self.locality.clone().map(std::sync::Arc::new);
        if let Some(starts) = &self.kvlab.keyrange_starts {
            config.keyrange_starts = Some(starts.as_slice().into());
        }
        config.value_model = self.kvlab.value_model;
        config.scan_model = self.kvlab.scan_model;
        config
    }

    /// The `[mixgraph]` table as db_bench arguments (`-num=49958`, `-mix_get_ratio=0.85`,
    /// …), each key that is set, in file order: `db_bench --benchmarks=mixgraph` with
    /// them runs the model.
    pub fn db_bench_args(&self) -> Vec<String> {
        self.mixgraph
            .entries()
            .into_iter()
            .map(|(key, value, _)| format!("-{key}={value}"))
            .collect()
    }

    /// The model file's text: the header as comments, `[mixgraph]` with each key's
    /// meaning as a comment, then `[fit]`.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        for line in &self.header {
            out.push_str(&format!("# {line}\n"));
        }
        out.push_str(
            "#\n# [mixgraph] keys are db_bench's mixgraph flags (`db_bench -benchmarks=mixgraph \
             -<key>=<value>`);\n# a key left out keeps db_bench's default. [fit] says how \
             well each part fitted.\n\n[mixgraph]\n",
        );
        for (key, value, doc) in self.mixgraph.entries() {
            out.push_str(&format!("# {}\n{key} = {value}\n", doc.trim()));
        }
        if let Some(l) = &self.locality {
            out.push_str(&locality_toml(l));
        }
        if !self.kvlab.is_empty() {
            out.push_str(
                "\n# [kvlab] keys are kvlab's, beyond db_bench's flags (docs/models.md).\n[kvlab]\n",
            );
            if let Some(starts) = &self.kvlab.keyrange_starts {
                out.push_str(
                    "# Key ranges sized by the data: each range's first key number (range i \
                     holds keys\n# start_i .. start_(i+1), the last up to num); keyrange_num \
                     of them\nkeyrange_starts = [",
                );
                for (i, v) in starts.iter().enumerate() {
                    if i % 10 == 0 {
                        out.push_str("\n   ");
                    }
                    out.push_str(&format!(" {v},"));
                }
                out.push_str("\n]\n");
            }
            if let Some(source) = &self.kvlab.keyrange_source {
                out.push_str(&format!(
                    "# Where the key ranges came from\nkeyrange_source = {}\n",
                    toml::Value::String(source.clone())
                ));
            }
            for (key, law, flags) in [
                (
                    "value_model",
                    &self.kvlab.value_model,
                    "value_theta/k/sigma",
                ),
                ("scan_model", &self.kvlab.scan_model, "iter_theta/k/sigma"),
            ] {
                if let Some(law) = law {
                    out.push_str(&format!(
                        "# The best-fitting law of the {}, which db_bench cannot draw: `kvlab run \
                         --model`\n# draws it in place of {flags} (the [mixgraph] keys \
                         stay db_bench's nearest fit)\n{key} = {}\n",
                        if key == "value_model" {
                            "value sizes"
                        } else {
                            "scan lengths"
                        },
                        law_toml(law)
                    ));
                }
            }
        }
        if !self.fit.is_empty() {
            let mut root = toml::Table::new();
            root.insert("fit".into(), toml::Value::Table(self.fit.clone()));
            out.push('\n');
            // A table of plain values always serializes.
            out.push_str(&toml::to_string(&root).unwrap_or_default());
        }
        out
    }

    /// Reads a model file's text; `path` names the file in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Model, ModelError> {
        let file: ModelFile = toml::from_str(text).map_err(|e| syntax_error(text, path, &e))?;
        let header = text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .map(|l| l.trim_start_matches('#').trim_start().to_owned())
            .take_while(|l| !l.is_empty())
            .collect();
        law_keys_known(text, path)?;
        let model = Model {
            header,
            mixgraph: file.mixgraph,
            locality: file.locality.map(LocalityTable::into_locality),
            kvlab: file.kvlab,
            fit: file.fit,
        };
        model.to_config().validate().map_err(|e| {
            let (key, message) = match e {
                MixGraphError::Flag {
                    flag,
                    value,
                    expected,
                } => (flag.to_owned(), format!("{value}: expected {expected}")),
                MixGraphError::KeyModel { model, expected } => (
                    "key_dist_a".to_owned(),
                    format!("key model {model} needs {expected}"),
                ),
                MixGraphError::SizeModel { which, why } => (which.to_owned(), why),
                MixGraphError::Locality(message) => {
                    let line = key_line(text, "locality", "new_share").unwrap_or(0);
                    return ModelError::Key {
                        path: path.to_path_buf(),
                        line,
                        key: "locality".to_owned(),
                        message,
                    };
                }
            };
            ModelError::Key {
                path: path.to_path_buf(),
                line: key_line(text, table_of(&key), &key).unwrap_or(0),
                key,
                message,
            }
        })?;
        Ok(model)
    }

    /// Reads a model file.
    pub fn read(path: &Path) -> Result<Model, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Model::from_toml(&text, path)
    }

    /// Writes the model file.
    pub fn write(&self, path: &Path) -> Result<(), ModelError> {
        std::fs::write(path, self.to_toml()).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Refuses a key of `[kvlab] value_model`/`scan_model` that its law does not have
/// (serde would ignore it): `FILE:LINE: key `value_model`: …`.
fn law_keys_known(text: &str, path: &Path) -> Result<(), ModelError> {
    let Ok(root) = text.parse::<toml::Table>() else {
        return Ok(());
    };
    let Some(kvlab) = root.get("kvlab").and_then(|t| t.as_table()) else {
        return Ok(());
    };
    for key in ["value_model", "scan_model"] {
        let Some(table) = kvlab.get(key).and_then(|t| t.as_table()) else {
            continue;
        };
        let Ok(law) = table.clone().try_into::<SizeModel>() else {
            continue;
        };
        let params = law.params();
        if let Some(extra) = table
            .keys()
            .find(|k| *k != "model" && !params.iter().any(|(name, _)| name == k))
        {
            let names: Vec<&str> = params.iter().map(|(name, _)| *name).collect();
            return Err(ModelError::Key {
                path: path.to_path_buf(),
                line: key_line(text, "kvlab", key).unwrap_or(0),
                key: key.to_owned(),
                message: format!(
                    "{} has no parameter `{extra}` (its parameters: {})",
                    law.name(),
                    names.join(", ")
                ),
            });
        }
    }
    Ok(())
}

/// A size law as an inline TOML table: `{ model = "weibull", scale = 120.5, shape = 0.8 }`.
fn law_toml(law: &SizeModel) -> String {
    let mut parts = vec![format!("model = {:?}", law.name())];
    parts.extend(
        law.params()
            .into_iter()
            .map(|(name, v)| format!("{name} = {}", toml_value(v))),
    );
    format!("{{ {} }}", parts.join(", "))
}

/// The table a model file's key belongs in: `[kvlab]` for its keys, else `[mixgraph]`.
fn table_of(key: &str) -> &'static str {
    if KvlabParams::KEYS.contains(&key) {
        "kvlab"
    } else {
        "mixgraph"
    }
}

/// The 1-based line of `key = …` inside `[table]` of `text`.
fn key_line(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut current = String::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            current = name.trim().to_owned();
        } else if current == table {
            if let Some((k, _)) = t.split_once('=') {
                if k.trim().trim_matches('"') == key {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

/// A TOML or serde error as a [`ModelError`]: the line of its span, and the key written
/// on that line (or named in the message) when there is one.
fn syntax_error(text: &str, path: &Path, e: &toml::de::Error) -> ModelError {
    let mut message = e.message().trim().to_owned();
    if message.is_empty() {
        // toml says nothing of some characters it refuses (a control character in a
        // comment): name the character.
        let at = e.span().and_then(|s| text.get(s.start..)?.chars().next());
        message = match at {
            Some(c) => format!("unexpected character {c:?}"),
            None => "not valid TOML".to_owned(),
        };
    }
    // An error at the end of a text ending in a newline is on its last line.
    let last = text.lines().count().max(1);
    let line = e
        .span()
        .map(|s| (text[..s.start.min(text.len())].matches('\n').count() + 1).min(last));
    let named = message
        .split('`')
        .nth(1)
        .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"))
        .map(str::to_owned);
    let on_line = line.and_then(|l| {
        let t = text.lines().nth(l - 1)?.trim();
        if t.starts_with('[') || t.starts_with('#') {
            return None;
        }
        match t.split_once('=') {
            Some((k, _)) => Some(k.trim().trim_matches('"').to_owned()),
            // A line inside a multi-line array: the key whose `= [` opened it.
            None => text
                .lines()
                .take(l - 1)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .map(str::trim)
                .find(|t| !t.starts_with('#') && (t.contains('=') || t.starts_with('[')))
                .and_then(|t| t.split_once('='))
                .filter(|(_, v)| v.trim_start().starts_with('['))
                .map(|(k, _)| k.trim().trim_matches('"').to_owned()),
        }
    });
    match named.or(on_line) {
        Some(key) => {
            let line = line
                .or_else(|| key_line(text, table_of(&key), &key))
                .unwrap_or(0);
            ModelError::Key {
                path: path.to_path_buf(),
                line,
                key,
                message,
            }
        }
        None => ModelError::Syntax {
            path: path.to_path_buf(),
            line: line.unwrap_or(0),
            message,
        },
    }
}

/// Where [`Model`] files conventionally live: `<name>.model.toml` next to the trace.
pub fn default_model_path(trace: &Path) -> PathBuf {
    let name = trace
        .file_name()
        .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
    trace.with_file_name(format!("{name}.model.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_character_in_a_comment_is_an_error_that_names_it() {
        let text = "# made \u{10}by hand\n[mixgraph]\nnum = 1\n";
        let err = Model::from_toml(text, Path::new("m.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.toml:1: unexpected character '\\u{10}'",
            "{err:?}"
        );
    }

    #[test]
    fn an_error_at_the_end_of_the_file_is_on_its_last_line() {
        let err = Model::from_toml("[mixgraph]\nreads = [1,\n", Path::new("m.toml")).unwrap_err();
        assert!(err.to_string().starts_with("m.toml:2: "), "{err}");
    }
}

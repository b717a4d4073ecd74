//! kvlab's result document and safe result-file writing.
//!
//! The main types and how they connect:
//!
//! - [`ResultDocument`]: everything one phase of a run produced — the command, seed,
//!   effective workload and runner settings, the [`StoreSection`] (options and engine
//!   statistics), the [`HostInfo`], and the measured [`kvlab_measure::RunSummary`]. It is
//!   written as `result.json` ([`ResultDocument::to_json_pretty`]) and read back by the
//!   report and comparison commands ([`ResultDocument::load`]).
//! - [`write_atomic`] and [`prepare_out_dir`]: results are written to a temporary file in
//!   the same directory, synced and renamed into place, and never silently replace an
//!   earlier result ([`ReportError::Exists`] unless the caller asked to overwrite).
//!
//! Helpers: [`rfc3339`] for timestamps, [`redact_url`] to strip passwords from connection
//! URLs before they are stored in [`ResultDocument::command`].
//!
//! Reading results back (`kvlab report`, `kvlab compare`):
//!
//! - [`ResultDir`]: one result directory as written by `kvlab run --out`: the document,
//!   its [`Timeline`], the [`LatencyLog`] decoded from `latency.hlog`, and any
//!   [`MonitorSeries`] under `monitor/`. [`find_result_files`] walks directories for them.
//! - [`Study`]: every result of a report grouped into [`Cell`]s (store × workload ×
//!   concurrency), each with its rounds and their spread ([`Spread`]: mean, min, max,
//!   coefficient of variation).
//!   A study renders as markdown [`Table`]s ([`Study::to_markdown`]) or as one
//!   self-contained HTML page with inline SVG charts ([`Study::to_html`]), drawn with
//!   [`chart::LineChart`] and [`chart::BarChart`].
//! - [`Comparison`]: two results, or two sets of rounds ([`Side`]), side by side: per
//!   metric ([`MetricComparison`]) the medians, B/A, bootstrap intervals, the
//!   Mann–Whitney p-value and a verdict, as markdown, terminal text or JSON. The
//!   statistics live in [`stats`].

pub mod chart;
mod compare;
mod format;
pub mod fuzzing;
mod host;
mod html;
mod load;
mod markdown;
mod merge;
mod runner;
pub mod stats;
mod study;
mod table;
mod time;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use compare::{Comparison, ComparisonFormat, MetricComparison, Side};
pub use host::{HostInfo, HostProbe, BUSY_OTHER_CPU_PCT, BUSY_STEAL_PCT};
pub use load::{
    find_result_files, LatencyLog, LoggedInterval, MonitorSeries, ResultDir, Timeline,
    LATENCY_LOG_FILE, TIMELINE_FILE,
};
pub use merge::{differences, merge, Difference, MergeInput, Merged};
pub use runner::{FirstError, Loop, MergedFrom, RunnerSection, Shard, SineRate};
pub use study::{Cell, CellKey, Round, Spread, Study, StudyOptions};

/// The workload's name as reports give it: its label (`--workload-label`, a suite's
/// workload name), else its property files' names (`workloada`), a CacheBench config's
/// directory, `memtier`, …, with ` [load]` for phases other than `run`.
pub fn workload_name(doc: &ResultDocument) -> String {
    study::workload_name(doc)
}
pub use table::{Align, Table};
pub use time::{parse_rfc3339, rfc3339};
pub use write::{prepare_out_dir, write_atomic, RESULT_FILE};

/// A failure to write or read a result.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file already exists and the caller did not ask to overwrite it.
    #[error("{} already exists (pass --overwrite to replace it)", .0.display())]
    Exists(PathBuf),
    /// A file-system operation on `path` failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done (`writing`, `reading`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A directory given to a report holds no `result.json` at any depth.
    #[error("no {} found in {} or below it", RESULT_FILE, .0.display())]
    NoResults(PathBuf),
    /// A comparison was given a directory with several results below it.
    #[error(
        "{} holds {count} results; name one result directory or result.json",
        path.display()
    )]
    SeveralResults {
        /// The directory.
        path: PathBuf,
        /// How many `result.json` files it holds.
        count: usize,
    },
    /// A comparison side holds the results of several cells (stores, workloads or
    /// client counts), which are not rounds of one measurement.
    #[error(
        "{} holds results of {} cells ({}); name one result directory, or a directory of \
         one cell's rounds",
        path.display(), cells.len(), cells.join("; ")
    )]
    SeveralCells {
        /// The directory.
        path: PathBuf,
        /// The cells it holds: store, workload, clients.
        cells: Vec<String>,
    },
    /// A CSV file (`timeline.csv`, `monitor/*.csv`) that kvlab cannot read.
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The 1-based line number (1 is the header).
        line: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A `latency.hlog` that is not a readable HdrHistogram interval log.
    #[error("{}: {message}", path.display())]
    LatencyLog {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
    /// Results that cannot be merged exactly (`kvlab merge`): what is wrong, naming the
    /// result.
    #[error("{0}")]
    Merge(String),
    /// A result document that is not valid JSON of the expected shape.
    #[error("parsing result document{}: {source}", match path {
        Some(p) => format!(" {}", p.display()),
        None => String::new(),
    })]
    Json {
        /// The file it was read from, if any.
        path: Option<PathBuf>,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
}

/// A phase of a kvlab run, as `result.json` names it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// `kvlab load`: the workload's records are inserted.
    Load,
    /// `kvlab run` (and `kvlab memtier`): the workload's operations.
    Run,
    /// `kvlab verify`: the records are read back and checked.
    Verify,
    /// `kvlab import`: the records of a file are inserted.
    Import,
}

impl Phase {
    /// The phase's name: `load`, `run`, `verify` or `import`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Run => "run",
            Phase::Verify => "verify",
            Phase::Import => "import",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A phase equals its name.
impl PartialEq<&str> for Phase {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Everything one phase (`load`, `run`, `verify` or `import`) of a kvlab run produced, as
/// stored in `result.json`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ResultDocument {
    /// The kvlab version that produced the document.
    pub kvlab_version: String,
    /// The command line, with credentials redacted by the caller (see [`redact_url`]).
    pub command: Vec<String>,
    /// The phase: `load`, `run`, `verify` or `import`.
    pub phase: Phase,
    /// When the phase started, RFC 3339 UTC (see [`rfc3339`]).
    pub started_at: String,
    /// When the phase finished, RFC 3339 UTC.
    pub finished_at: String,
    /// The run seed every worker's seed derives from. Written twice, as `"seed"` (a
    /// number) and `"seed_string"` (its decimal digits: `jq` and JavaScript read numbers
    /// as doubles, which round a seed beyond 2^53); read from either, a string or a
    /// number in either key.
    #[serde(flatten, with = "seed_fields")]
    pub seed: u64,
    /// True when the run was stopped early (signal or error) and the results are partial.
    pub interrupted: bool,
    /// Open loop: true when the client could not keep its schedule, so the offered load
    /// was lower than the target.
    pub fell_behind: bool,
    /// The effective workload properties, after defaults and overrides.
    pub workload: BTreeMap<String, String>,
    /// The user's name for the workload (`--workload-label`, a suite's workload name):
    /// reports name the workload by it instead of by its property files or flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_label: Option<String>,
    /// How the phase was run: threads, connections, pipeline, target rate, warm-up,
    /// duration, …, and what the runner saw besides latencies.
    pub runner: RunnerSection,
    /// The store under test.
    pub store: StoreSection,
    /// The machine the client ran on.
    pub host: HostInfo,
    /// The measurements.
    pub results: kvlab_measure::RunSummary,
    /// Free-form remarks (warnings, unknown workload properties, …).
    pub notes: Vec<String>,
    /// A merged result that `kvlab merge --force` made of results that are not parts of
    /// one experiment: what differed. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeSection>,
}

/// The `merge` section of a result that `kvlab merge --force` merged although its inputs
/// differed (see [`differences`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MergeSection {
    /// True: the merge was forced.
    pub forced: bool,
    /// The fields in which the inputs differed (`workload.readproportion`,
    /// `store.name`, `runner.measured_start`, …).
    pub differences: Vec<String>,
}

/// The store under test: its name, the options it was opened with, and the statistics it
/// reported after the phase.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StoreSection {
    /// The target's name (`rocksdb`, `redis`, `memcached`, `null`, …).
    pub name: String,
    /// The user's name for this store (`--label`, a suite's store name), when it is
    /// more than the kind: reports tell stores apart by [`StoreSection::display_name`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The options the store was opened with, credentials redacted.
    pub options: BTreeMap<String, serde_json::Value>,
    /// The store's own statistics after the phase.
    pub stats: BTreeMap<String, serde_json::Value>,
}

impl StoreSection {
    /// How reports name the store: its label, else its kind.
    pub fn display_name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }
}

impl ResultDocument {
    /// The document as indented JSON, with a trailing newline.
    pub fn to_json_pretty(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .expect("a ResultDocument has string keys and finite-or-null numbers only");
        s.push('\n');
        s
    }

    /// Parses a document from JSON.
    pub fn from_json(s: &str) -> Result<ResultDocument, ReportError> {
        serde_json::from_str(s).map_err(|source| ReportError::Json { path: None, source })
    }

    /// Reads and parses a `result.json` file.
    pub fn load(path: &Path) -> Result<ResultDocument, ReportError> {
        let text = std::fs::read_to_string(path).map_err(|source| ReportError::Io {
            action: "reading",
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ReportError::Json {
            path: Some(path.to_path_buf()),
            source,
        })
    }
}

/// `seed` and `seed_string` of a [`ResultDocument`].
mod seed_fields {
    use serde::de::Error as _;
    use serde::ser::SerializeMap as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// A seed as written: a number or a string of decimal digits.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(u64),
        Text(String),
        Other(serde::de::IgnoredAny),
    }

    impl Written {
        fn value<E: serde::de::Error>(self) -> Result<u64, E> {
            match self {
                Written::Number(n) => Ok(n),
                Written::Text(t) => t.trim().parse().map_err(|_| {
                    E::custom(format!(
                        "seed `{t}`: expected a whole number in 0..=18446744073709551615"
                    ))
                }),
                Written::Other(_) => Err(E::custom(
                    "seed: expected a whole number in 0..=18446744073709551615, or its digits \
                     as a string",
                )),
            }
        }
    }

    #[derive(Deserialize)]
    struct Fields {
        #[serde(default)]
        seed: Option<Written>,
        #[serde(default)]
        seed_string: Option<Written>,
    }

    pub(super) fn serialize<S: Serializer>(seed: &u64, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("seed", seed)?;
        map.serialize_entry("seed_string", &seed.to_string())?;
        map.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let f = Fields::deserialize(d)?;
        // The string is exact where the number may have been rounded by another tool.
        match (f.seed_string, f.seed) {
            (Some(w), _) | (None, Some(w)) => w.value(),
            (None, None) => Err(D::Error::missing_field("seed")),
        }
    }
}

/// Replaces the password of every URL in `s` with `***`:
/// `redis://user:secret@host:6379/0` → `redis://user:***@host:6379/0`, and
/// `redis://:secret@host` → `redis://:***@host`. A user name alone (`scheme://user@host`),
/// an empty password and strings without credentials are left unchanged. A `pass=` (or
/// `password=`) query parameter (`redis+unix:///s.sock?db=1&pass=secret`) becomes
/// `pass=***`. Passwords passed as separate arguments (`-a secret`) are the caller's to
/// redact.
pub fn redact_url(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(scheme_end) = rest.find("://") {
        let authority_start = scheme_end + 3;
        out.push_str(&rest[..authority_start]);
        rest = &rest[authority_start..];
        // The authority ends at the path, query or fragment — or at whitespace, should the
        // URL sit inside a longer string.
        let authority_len = rest
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(rest.len());
        let authority = &rest[..authority_len];
        match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                match userinfo.split_once(':') {
                    Some((user, password)) if !password.is_empty() => {
                        out.push_str(user);
                        out.push_str(":***");
                        out.push_str(&authority[at..]);
                    }
                    _ => out.push_str(authority),
                }
            }
            None => out.push_str(authority),
        }
        rest = &rest[authority_len..];
        // The `pass=` (or `password=`) parameter of a query, as UNIX socket URLs
        // (`redis+unix:///path?pass=secret`) carry the password.
        let url_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if let Some(q) = rest[..url_len].find('?') {
            out.push_str(&rest[..=q]);
            let query = &rest[q + 1..url_len];
            for (i, param) in query.split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match param.split_once('=') {
                    Some((name @ ("pass" | "password"), value)) if !value.is_empty() => {
                        out.push_str(name);
                        out.push_str("=***");
                    }
                    _ => out.push_str(param),
                }
            }
            rest = &rest[url_len..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use kvlab_core::{OpKind, Status, StoreErrorKind};
    use kvlab_measure::Recorder;
    use serde_json::json;

    use super::*;

    fn document() -> ResultDocument {
        let mut r = Recorder::new();
        for i in 0..1000u64 {
            r.record(OpKind::Read, Status::Ok, 1_000 + i * 37);
            r.record_intended(OpKind::Read, 2_000 + i * 41);
        }
        r.record(OpKind::Update, Status::Error, 123_456);
        r.record_error(StoreErrorKind::Timeout);
        r.add_bytes(1_000_000, 1_000);
        ResultDocument {
            kvlab_version: "0.1.0".into(),
            command: vec![
                "kvlab".into(),
                "run".into(),
                redact_url("redis://u:pw@h:6379"),
            ],
            phase: Phase::Run,
            started_at: rfc3339(UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
            finished_at: rfc3339(UNIX_EPOCH + Duration::from_millis(1_700_000_010_500)),
            seed: u64::MAX,
            interrupted: false,
            fell_behind: true,
            workload: [("recordcount".to_string(), "1000".to_string())].into(),
            workload_label: Some("small-reads".into()),
            runner: RunnerSection {
                threads: 8,
                warmup: Some(json!("5s")),
                other: [("target_ops_per_sec".to_string(), json!(1e5))].into(),
                ..RunnerSection::default()
            },
            store: StoreSection {
                name: "redis".into(),
                label: None,
                options: [("url".to_string(), json!("redis://u:***@h:6379"))].into(),
                stats: [
                    ("used_memory".to_string(), json!(123456789)),
                    ("hit_ratio".to_string(), json!(0.875)),
                ]
                .into(),
            },
            host: HostInfo::detect(),
            results: r.summary(Duration::from_millis(10_500)),
            notes: vec!["unknown property: foo".into()],
            merge: None,
        }
    }

    #[test]
    fn json_round_trip_of_a_full_document() {
        let doc = document();
        let text = doc.to_json_pretty();
        assert!(text.ends_with("}\n"));
        assert_eq!(ResultDocument::from_json(&text).unwrap(), doc);
        assert_eq!(doc.command[2], "redis://u:***@h:6379");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULT_FILE);
        write_atomic(&path, text.as_bytes(), false).unwrap();
        assert_eq!(ResultDocument::load(&path).unwrap(), doc);

        // Results written before workload labels existed have none, and a document
        // without a label does not write the key.
        assert!(
            text.contains("\"workload_label\": \"small-reads\""),
            "{text}"
        );
        let mut unlabelled = doc.clone();
        unlabelled.workload_label = None;
        let text = unlabelled.to_json_pretty();
        assert!(!text.contains("workload_label"), "{text}");
        assert_eq!(ResultDocument::from_json(&text).unwrap(), unlabelled);
    }

    #[test]
    fn the_seed_is_written_as_a_number_and_a_string_and_read_from_either() {
        let doc = document();
        assert!(doc.seed > 1 << 53);
        let text = doc.to_json_pretty();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["seed"].as_u64(), Some(u64::MAX));
        assert_eq!(v["seed_string"], "18446744073709551615");
        let read = |v: &serde_json::Value| ResultDocument::from_json(&v.to_string());
        // A tool that rounded the number through a double: the string still holds it.
        let mut rounded = v.clone();
        rounded["seed"] = serde_json::json!(1.8446744073709552e19);
        assert_eq!(read(&rounded).unwrap().seed, u64::MAX);
        // Only the number (results written before the string), or only a string.
        let mut number = v.clone();
        number.as_object_mut().unwrap().remove("seed_string");
        number["seed"] = 12345.into();
        assert_eq!(read(&number).unwrap().seed, 12345);
        let mut text_only = v.clone();
        text_only.as_object_mut().unwrap().remove("seed");
        text_only["seed_string"] = "9007199254740993".into();
        assert_eq!(read(&text_only).unwrap().seed, 9_007_199_254_740_993);
        let mut string_seed = number.clone();
        string_seed["seed"] = "77".into();
        assert_eq!(read(&string_seed).unwrap().seed, 77);
        let mut neither = number.clone();
        neither.as_object_mut().unwrap().remove("seed");
        assert!(read(&neither).unwrap_err().to_string().contains("seed"));
        let mut bad = number;
        bad["seed"] = "12x".into();
        assert!(read(&bad).unwrap_err().to_string().contains("12x"));
    }

    #[test]
    fn malformed_documents_are_errors_naming_the_file() {
        assert!(matches!(
            ResultDocument::from_json("{\"phase\": 1}"),
            Err(ReportError::Json { path: None, .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, "not json").unwrap();
        let err = ResultDocument::load(&path).unwrap_err();
        assert!(err.to_string().contains("bad.json"), "{err}");
        let err = ResultDocument::load(&dir.path().join("missing.json")).unwrap_err();
        assert!(
            matches!(
                err,
                ReportError::Io {
                    action: "reading",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn redaction() {
        for (input, want) in [
            (
                "redis://user:secret@host:6379/0",
                "redis://user:***@host:6379/0",
            ),
            ("redis://:secret@host", "redis://:***@host"),
            (
                "rediss://default:p%40ss@h:1?db=2",
                "rediss://default:***@h:1?db=2",
            ),
            ("memcache://user@host:11211", "memcache://user@host:11211"),
            ("redis://user:@host", "redis://user:@host"),
            ("redis://host:6379/0", "redis://host:6379/0"),
            ("127.0.0.1:6379", "127.0.0.1:6379"),
            ("--url=redis://a:b@h --x", "--url=redis://a:***@h --x"),
            ("a://u:p@h, b://v:q@i/x@y", "a://u:***@h, b://v:***@i/x@y"),
            ("", ""),
            ("://", "://"),
            (
                "redis+unix:///tmp/r.sock?db=2&pass=s3cret --x",
                "redis+unix:///tmp/r.sock?db=2&pass=*** --x",
            ),
            (
                "unix:///s?password=p&user=u",
                "unix:///s?password=***&user=u",
            ),
            ("unix:///s?db=1", "unix:///s?db=1"),
        ] {
            assert_eq!(redact_url(input), want, "{input}");
        }
    }
}

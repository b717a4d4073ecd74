//! [`Study`]: results grouped into [`Cell`]s — one per store × workload × concurrency —
//! each holding its [`Round`]s, with [`Spread`]s (mean, min, max, coefficient of
//! variation) over them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kvlab_measure::{LatencySummary, OpSummary};

use crate::chart::Palette;
use crate::format;
use crate::load::{find_result_files, LatencyLog, MonitorSeries, ResultDir, Timeline};
use crate::{Phase, ReportError, ResultDocument};

/// How a study judges its cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StudyOptions {
    /// A cell whose rounds' throughput or P99 varies by more than this coefficient of
    /// variation (percent) is flagged.
    pub cv_threshold_pct: f64,
}

impl Default for StudyOptions {
    fn default() -> StudyOptions {
        StudyOptions {
            cv_threshold_pct: 10.0,
        }
    }
}

/// One result of a study: the document and the files beside it.
#[derive(Clone, Debug)]
pub struct Round {
    /// The round number: from a `round-<n>` directory in the path, else the result's place
    /// among its cell's results in path order (from 1).
    pub number: u32,
    /// The result's path relative to the directory the study was given (for display).
    pub path: PathBuf,
    /// The result document and where it was read.
    pub result: ResultDir,
    /// `timeline.csv`, when present.
    pub timeline: Option<Timeline>,
    /// `latency.hlog` merged over its intervals, when present.
    pub latency: Option<LatencyLog>,
    /// `monitor/*.csv`.
    pub monitor: Vec<MonitorSeries>,
}

impl Round {
    /// Reads the result `file` (a `result.json`) and every file beside it. `root` is the
    /// directory the file was found under; the displayed path is relative to it.
    pub fn load(file: &Path, root: &Path) -> Result<Round, ReportError> {
        let result = ResultDir::open(file)?;
        let timeline = result.timeline()?;
        let latency = result.latency_log()?;
        let monitor = result.monitor()?;
        let path = match file.strip_prefix(root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
            _ => file.to_path_buf(),
        };
        Ok(Round {
            number: round_number(file).unwrap_or(0),
            path,
            result,
            timeline,
            latency,
            monitor,
        })
    }

    /// The result document.
    pub fn doc(&self) -> &ResultDocument {
        &self.result.doc
    }
}

/// The `n` of the last `round-<n>` (or `round_<n>`, `round<n>`) component of `path`.
fn round_number(path: &Path) -> Option<u32> {
    path.components().rev().find_map(|c| {
        let s = c.as_os_str().to_str()?;
        let rest = s.strip_prefix("round")?;
        let digits = rest.strip_prefix(['-', '_']).unwrap_or(rest);
        digits.parse().ok()
    })
}

/// What identifies a cell: the store, the workload and the client's concurrency.
/// Cells sort by store, workload, then concurrency (threads × connections).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CellKey {
    /// The store's name (`rocksdb`, `redis`, …).
    pub store: String,
    /// The workload's name: its property files' names (`workloada`), a CacheBench
    /// config's directory (`cachebench:cdn`) or `memtier`, with the properties that
    /// tell it apart from same-named workloads of the study (`workloada (recordcount=1000)`),
    /// and ` [load]` for load phases.
    pub workload: String,
    /// Worker threads.
    pub threads: u64,
    /// Connections per thread.
    pub connections: u64,
    /// Requests in flight per connection.
    pub pipeline: u64,
    /// Open loop: the target rate in operations per second, rounded.
    pub target_ops_per_sec: Option<u64>,
}

impl CellKey {
    /// Threads × connections per thread: the number of clients.
    pub fn concurrency(&self) -> u64 {
        self.threads * self.connections
    }

    /// `2×16`, with `×4` for a pipeline deeper than 1 and ` @ 10k ops/s` in open loop.
    pub fn concurrency_label(&self) -> String {
        let mut s = format!("{}×{}", self.threads, self.connections);
        if self.pipeline > 1 {
            s.push_str(&format!("×{}", self.pipeline));
        }
        if let Some(rate) = self.target_ops_per_sec {
            s.push_str(&format!(" @ {} ops/s", format::compact(rate as f64)));
        }
        s
    }

    fn order(&self) -> (Natural<'_>, Natural<'_>, u64, u64, u64, Option<u64>) {
        (
            Natural(&self.store),
            Natural(&self.workload),
            self.concurrency(),
            self.threads,
            self.pipeline,
            self.target_ops_per_sec,
        )
    }

    /// The key without the store: what cells of different stores share in a chart.
    pub(crate) fn setting(&self) -> Setting {
        Setting {
            workload: self.workload.clone(),
            threads: self.threads,
            connections: self.connections,
            pipeline: self.pipeline,
            target_ops_per_sec: self.target_ops_per_sec,
        }
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// A name ordered as people read it: runs of digits compare as numbers, so
/// `recordcount=4000` comes before `recordcount=12000` and `redis-2` before `redis-10`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Natural<'a>(pub(crate) &'a str);

impl Ord for Natural<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (mut a, mut b) = (self.0.as_bytes(), other.0.as_bytes());
        let digits = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
        while let (Some(&x), Some(&y)) = (a.first(), b.first()) {
            let ord = if x.is_ascii_digit() && y.is_ascii_digit() {
                let (n, m) = (digits(a), digits(b));
                let (p, q) = (&a[..n], &b[..m]);
                // Without leading zeros, the longer number is the larger.
                let trim = |s: &'_ [u8]| -> usize { s.iter().take_while(|&&c| c == b'0').count() };
                let (p, q) = (&p[trim(p)..], &q[trim(q)..]);
                let ord = p.len().cmp(&q.len()).then(p.cmp(q)).then(n.cmp(&m));
                a = &a[n..];
                b = &b[m..];
                ord
            } else {
                a = &a[1..];
                b = &b[1..];
                x.cmp(&y)
            };
            if ord.is_ne() {
                return ord;
            }
        }
        a.len().cmp(&b.len())
    }
}

impl PartialOrd for Natural<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A figure of a latency summary (`|l| l.p99_us`), in µs.
pub(crate) type LatencyFigure = fn(&LatencySummary) -> f64;

/// A workload at one concurrency, across stores.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Setting {
    pub(crate) workload: String,
    pub(crate) threads: u64,
    pub(crate) connections: u64,
    pub(crate) pipeline: u64,
    pub(crate) target_ops_per_sec: Option<u64>,
}

impl Setting {
    fn order(&self) -> (Natural<'_>, u64, u64, u64, Option<u64>) {
        (
            Natural(&self.workload),
            self.threads * self.connections,
            self.threads,
            self.pipeline,
            self.target_ops_per_sec,
        )
    }

    pub(crate) fn key(&self, store: &str) -> CellKey {
        CellKey {
            store: store.to_string(),
            workload: self.workload.clone(),
            threads: self.threads,
            connections: self.connections,
            pipeline: self.pipeline,
            target_ops_per_sec: self.target_ops_per_sec,
        }
    }
}

impl PartialOrd for Setting {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Setting {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// Mean, minimum, maximum and coefficient of variation of one figure over rounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// How many rounds had the figure.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation over the mean, in percent; `None` for fewer than two
    /// values or a zero mean.
    pub cv_pct: Option<f64>,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let cv_pct = if n >= 2 && mean != 0.0 {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            Some(100.0 * var.sqrt() / mean.abs())
        } else {
            None
        };
        Some(Spread {
            n,
            mean,
            min,
            max,
            cv_pct,
        })
    }
}

/// The cache figures of one result, as the `[CACHE]` report lines give them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CacheFigures {
    /// Gets answered (hits + misses).
    pub(crate) gets: u64,
    /// Hits over gets, percent.
    pub(crate) hit_ratio_pct: Option<f64>,
    /// DRAM and disk tier hits over the store's lookups, percent (hybrid caches).
    pub(crate) dram_hit_pct: Option<f64>,
    pub(crate) disk_hit_pct: Option<f64>,
    /// Gets per second.
    pub(crate) get_ops_per_sec: f64,
    /// Sets (inserts and updates) per second.
    pub(crate) set_ops_per_sec: f64,
    /// The store's eviction count, when it reports one.
    pub(crate) evictions: Option<f64>,
}

/// The named status count of an operation kind.
fn returns(doc: &ResultDocument, op: &str, status: &str) -> u64 {
    doc.results
        .ops
        .iter()
        .find(|o| o.name == op)
        .and_then(|o| o.returns.get(status).copied())
        .unwrap_or(0)
}

fn ops(doc: &ResultDocument, op: &str) -> u64 {
    doc.results
        .ops
        .iter()
        .find(|o| o.name == op)
        .map_or(0, |o| o.operations)
}

fn stat(doc: &ResultDocument, name: &str) -> Option<f64> {
    doc.store
        .stats
        .get(name)
        .and_then(serde_json::Value::as_f64)
}

/// Percent of `n` in `of`, `None` when `of` is 0.
fn pct(n: f64, of: f64) -> Option<f64> {
    (of > 0.0).then(|| 100.0 * n / of)
}

/// True for a cache workload's result (CacheBench-style: `cache.*` properties).
pub(crate) fn is_cache_run(doc: &ResultDocument) -> bool {
    doc.workload.keys().any(|k| k.starts_with("cache."))
        || doc
            .workload
            .get("workload")
            .is_some_and(|w| w == "kvlab.cache")
}

/// Reads that found their key over all reads that completed (OK or NOT_FOUND), percent.
pub(crate) fn read_hit_ratio_pct(doc: &ResultDocument) -> Option<f64> {
    let hits = returns(doc, "READ", "OK") as f64;
    let misses = returns(doc, "READ", "NOT_FOUND") as f64;
    pct(hits, hits + misses)
}

/// Reads that found no record over reads answered (OK or NOT_FOUND), percent — computed
/// from the misses (not as 100 − the hit ratio), so that it prints as the run's own
/// `read_miss_share` × 100 does, to the last rounded digit.
pub(crate) fn read_miss_ratio_pct(doc: &ResultDocument) -> Option<f64> {
    let hits = returns(doc, "READ", "OK") as f64;
    let misses = returns(doc, "READ", "NOT_FOUND") as f64;
    pct(misses, hits + misses)
}

impl CacheFigures {
    /// The cache figures of a cache run; `None` for other workloads.
    pub(crate) fn of(doc: &ResultDocument) -> Option<CacheFigures> {
        if !is_cache_run(doc) {
            return None;
        }
        let hits = returns(doc, "READ", "OK");
        let gets = hits + returns(doc, "READ", "NOT_FOUND");
        let secs = (doc.results.runtime_ms / 1000.0).max(f64::MIN_POSITIVE);
        let sets = ops(doc, "INSERT") + ops(doc, "UPDATE");
        let (dram_hit_pct, disk_hit_pct) = match (stat(doc, "dram_hits"), stat(doc, "disk_hits")) {
            (Some(dram), Some(disk)) => {
                let lookups = dram + disk + stat(doc, "misses").unwrap_or(0.0);
                (pct(dram, lookups), pct(disk, lookups))
            }
            _ => (None, None),
        };
        Some(CacheFigures {
            gets,
            hit_ratio_pct: pct(hits as f64, gets as f64),
            dram_hit_pct,
            disk_hit_pct,
            get_ops_per_sec: gets as f64 / secs,
            set_ops_per_sec: sets as f64 / secs,
            evictions: ["evictions", "evicted_keys", "dram_evictions"]
                .iter()
                .find_map(|n| stat(doc, n)),
        })
    }
}

/// The rounds of one store × workload × concurrency.
#[derive(Clone, Debug)]
pub struct Cell {
    /// What the rounds share.
    pub key: CellKey,
    /// The rounds, by number.
    pub rounds: Vec<Round>,
}

impl Cell {
    /// The spread over rounds of a figure of each document (rounds without it skipped).
    pub fn spread(&self, figure: impl Fn(&ResultDocument) -> Option<f64>) -> Option<Spread> {
        let values: Vec<f64> = self
            .rounds
            .iter()
            .filter_map(|r| figure(r.doc()))
            .filter(|v| v.is_finite())
            .collect();
        Spread::of(&values)
    }

    /// Throughput over rounds, operations per second.
    pub fn throughput(&self) -> Option<Spread> {
        self.spread(|d| Some(d.results.throughput_ops_per_sec))
    }

    /// A figure of the overall (all store operations) latency over rounds, µs.
    pub fn overall(&self, figure: fn(&LatencySummary) -> f64) -> Option<Spread> {
        self.spread(|d| d.results.overall.as_ref().map(figure))
    }

    /// A figure of one operation's latency (`READ`, `Intended-READ`, …) over rounds, µs.
    pub fn op_latency(&self, op: &str, figure: fn(&LatencySummary) -> f64) -> Option<Spread> {
        self.spread(|d| find_op(d, op).map(|o| figure(&o.latency)))
    }

    /// The operation names of the cell's rounds, measured kinds first in report order,
    /// then intended-time entries.
    pub fn op_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for r in &self.rounds {
            for o in r.doc().results.ops.iter().chain(&r.doc().results.intended) {
                if !names.contains(&o.name) {
                    names.push(o.name.clone());
                }
            }
        }
        let intended = |n: &String| n.starts_with("Intended-");
        names.sort_by_key(|n| intended(n));
        names
    }

    /// Store errors of every kind, summed over rounds.
    pub fn errors(&self) -> u64 {
        self.rounds
            .iter()
            .map(|r| r.doc().results.errors.values().sum::<u64>())
            .sum()
    }

    /// Reads that found no record over reads answered (OK or NOT_FOUND), percent, over
    /// rounds; `None` when no round read.
    pub fn read_miss_pct(&self) -> Option<Spread> {
        self.spread(read_miss_ratio_pct)
    }

    /// Why the cell's figures need a second look: a throughput or P99 coefficient of
    /// variation above `cv_threshold_pct`, interrupted runs, an open loop that fell behind,
    /// errors, reads that missed where every read should find its record (kvlab marks
    /// such a result `runner.reads_missed`: a YCSB workload on a store that was not
    /// loaded, or lost data), rounds taken on a busy machine (`host.busy`), and rounds
    /// whose timeline still trended at its end ([`crate::stats::settling`]).
    pub fn flags(&self, cv_threshold_pct: f64) -> Vec<String> {
        let mut flags = Vec::new();
        let over = |s: Option<Spread>| s.and_then(|s| s.cv_pct).filter(|cv| *cv > cv_threshold_pct);
        if let Some(cv) = over(self.throughput()) {
            flags.push(format!("⚠ throughput CV {cv:.1}%"));
        }
        if let Some(cv) = over(self.overall(|l| l.p99_us)) {
            flags.push(format!("⚠ P99 CV {cv:.1}%"));
        }
        if self.rounds.iter().any(|r| r.doc().interrupted) {
            flags.push("interrupted".into());
        }
        if self.rounds.iter().any(|r| r.doc().fell_behind) {
            flags.push("fell behind".into());
        }
        if self.errors() > 0 {
            flags.push("errors".into());
        }
        if self.rounds.iter().any(|r| r.doc().runner.reads_missed) {
            let pct = self.read_miss_pct().map_or(0.0, |s| s.mean);
            flags.push(format!("⚠ reads missed {pct:.1}%"));
        }
        let busy = self.rounds.iter().filter(|r| r.doc().host.busy).count();
        if busy > 0 {
            flags.push(format!("⚠ busy machine ({busy} of {})", self.rounds.len()));
        }
        let unsettled = self
            .rounds
            .iter()
            .filter(|r| crate::compare::unsettled(r).is_some())
            .count();
        if unsettled > 0 {
            flags.push(format!(
                "⚠ not settled ({unsettled} of {})",
                self.rounds.len()
            ));
        }
        flags
    }

    pub(crate) fn cache(&self) -> Vec<CacheFigures> {
        self.rounds
            .iter()
            .filter_map(|r| CacheFigures::of(r.doc()))
            .collect()
    }

    /// A workload property shared by the rounds (the first round's value).
    pub(crate) fn property(&self, name: &str) -> Option<&str> {
        self.rounds
            .first()
            .and_then(|r| r.doc().workload.get(name))
            .map(String::as_str)
    }
}

pub(crate) fn find_op<'a>(doc: &'a ResultDocument, op: &str) -> Option<&'a OpSummary> {
    doc.results
        .ops
        .iter()
        .chain(&doc.results.intended)
        .find(|o| o.name == op)
}

/// Every result of a report, grouped into cells.
#[derive(Clone, Debug)]
pub struct Study {
    /// The cells, ordered by store, workload, concurrency.
    pub cells: Vec<Cell>,
    /// Thresholds.
    pub options: StudyOptions,
    /// One colour per store.
    pub palette: Palette,
    /// What the report must say besides its tables: results skipped because they could
    /// not be read ([`Study::skipped`]), shards merged into their round or left apart.
    pub notes: Vec<String>,
}

/// Workload properties that a runner flag also sets; they do not tell workloads apart.
/// (`clients-total` is memtier's threads × connections.)
const RUNNER_PROPERTIES: [&str; 4] = ["threadcount", "target", "maxexecutiontime", "clients-total"];

/// The workload's name before disambiguation: its label (`--workload-label`, a suite's
/// workload name) when it has one, else [`family_name`]; ` [load]` (the phase) for phases
/// other than `run`.
pub(crate) fn workload_name(doc: &ResultDocument) -> String {
    let mut name = match &doc.workload_label {
        Some(label) => label.clone(),
        None => family_name(doc),
    };
    if doc.phase != Phase::Run {
        name.push_str(&format!(" [{}]", doc.phase));
    }
    name
}

/// What the workload is, whatever its label: its property files' names, a CacheBench
/// config's directory, `memtier`, an imported file's name, its thread plan or key file
/// (`plan:NAME`, `keys:NAME`), or the workload class. Cache charts draw workloads of one
/// family at several data sizes as one curve.
pub(crate) fn family_name(doc: &ResultDocument) -> String {
    fn stem(p: &str) -> (&Path, String) {
        let path = Path::new(p);
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.to_string());
        (path, stem)
    }
    let files: Vec<String> = doc
        .runner
        .property_files
        .iter()
        .map(|p| stem(p).1)
        .collect();
    if !files.is_empty() {
        files.join("+")
    } else if let Some(config) = command_option(doc, "--cachebench") {
        let (path, stem) = stem(config);
        let dir = path
            .parent()
            .and_then(Path::file_name)
            .map(|s| s.to_string_lossy().into_owned());
        match dir {
            Some(dir) if stem == "config" => format!("cachebench:{dir}"),
            _ => format!("cachebench:{stem}"),
        }
    } else if doc.command.get(1).is_some_and(|c| c == "memtier") {
        "memtier".to_string()
    } else if let Some(file) = imported_file(doc) {
        stem(file).1
    } else if let Some(plan) = command_option(doc, "--plan") {
        format!("plan:{}", stem(plan).1)
    } else if let Some(keys) = command_option(doc, "--keys") {
        format!("keys:{}", stem(keys).1)
    } else if let Some(w) = doc.workload.get("workload") {
        w.rsplit('.').next().unwrap_or(w).to_string()
    } else {
        "workload".to_string()
    }
}

/// The file an import read (its `import.file` property), unless it came through a pipe
/// (`<(zcat …)` names `/dev/fd/N`).
fn imported_file(doc: &ResultDocument) -> Option<&str> {
    let file = doc.workload.get("import.file")?;
    (!file.starts_with("/dev/fd/") && !file.starts_with("/proc/")).then_some(file)
}

/// The value of option `name` on the result's command line, given as `NAME VALUE` or
/// `NAME=VALUE`.
fn command_option<'a>(doc: &'a ResultDocument, name: &str) -> Option<&'a str> {
    doc.command
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a.strip_prefix(name) {
            Some("") => doc.command.get(i + 1).map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        })
}

/// How a differing property shows in a workload name.
fn describe_property(name: &str, value: Option<&String>) -> String {
    match value {
        None => format!("{name}=–"),
        Some(v) if name == "cache.data_size" => match v.parse::<f64>() {
            Ok(b) => format!("{name}={}", format::bytes(b).replace(' ', "")),
            Err(_) => format!("{name}={v}"),
        },
        Some(v) => format!("{name}={v}"),
    }
}

/// The workload name of every document: the base name, with the properties that differ
/// between unlabelled documents of the same base name appended. A label is the user's name
/// for the workload and is used as it is.
fn workload_names(docs: &[&ResultDocument]) -> Vec<String> {
    let base: Vec<String> = docs.iter().map(|d| workload_name(d)).collect();
    // A `--duration` run ran for its duration, not for the file's operationcount: it is
    // told apart by what ran.
    let props = |d: &ResultDocument| -> BTreeMap<String, String> {
        let mut props: BTreeMap<String, String> = d
            .workload
            .iter()
            .filter(|(k, _)| !RUNNER_PROPERTIES.contains(&k.as_str()))
            .filter(|(k, _)| !(d.runner.duration_s.is_some() && *k == "operationcount"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(s) = d.runner.duration_s {
            props.insert("duration".into(), format!("{s}s"));
        }
        props
    };
    let mut by_base: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, b) in base.iter().enumerate() {
        if docs[i].workload_label.is_none() {
            by_base.entry(b).or_default().push(i);
        }
    }
    let mut names = base.clone();
    for (b, members) in by_base {
        let maps: Vec<BTreeMap<String, String>> = members.iter().map(|i| props(docs[*i])).collect();
        let keys: BTreeSet<&String> = maps.iter().flat_map(|m| m.keys()).collect();
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| maps.iter().any(|m| m.get(*k) != maps[0].get(*k)))
            .collect();
        if differing.is_empty() {
            continue;
        }
        for (i, m) in members.iter().zip(&maps) {
            // A run names what bounded it, its duration or its operation count, not the
            // other's absence.
            let props: Vec<String> = differing
                .iter()
                .filter(|k| {
                    m.contains_key(**k) || !["duration", "operationcount"].contains(&k.as_str())
                })
                .map(|k| describe_property(k, m.get(*k)))
                .collect();
            names[*i] = format!("{b} ({})", props.join(", "));
        }
    }
    names
}

/// The rounds with the shards of each round merged into one round. Shards belong to one
/// round when they are of one shard count, phase, store and workload, come from the same
/// `round-<n>` directory (or none), and their measured windows overlap; a group that
/// [`crate::merge()`] refuses stays apart, and the notes say why.
fn merge_shards(rounds: Vec<Round>) -> (Vec<Round>, Vec<String>) {
    let mut notes = Vec::new();
    let (sharded, mut out): (Vec<Round>, Vec<Round>) = rounds
        .into_iter()
        .partition(|r| r.doc().runner.shard.is_some());
    let key = |r: &Round| {
        let d = r.doc();
        (
            d.runner.shard.map(|s| s.count),
            round_number(&r.result.file),
            d.phase.as_str(),
            d.store.display_name().to_string(),
            workload_name(d),
        )
    };
    let mut groups: BTreeMap<_, Vec<Round>> = BTreeMap::new();
    for r in sharded {
        groups.entry(key(&r)).or_default().push(r);
    }
    for (_, mut group) in groups {
        let start = |r: &Round| {
            r.doc()
                .runner
                .measured_start
                .as_deref()
                .and_then(crate::parse_rfc3339)
        };
        group.sort_by_key(|r| start(r));
        // Runs of shards whose windows overlap the run's first shard's.
        let mut runs: Vec<Vec<Round>> = Vec::new();
        for r in group {
            let fits = runs.last().is_some_and(|run| {
                let (first, s) = (&run[0], start(&r));
                let end = start(first).map(|t| {
                    t + std::time::Duration::from_secs_f64(
                        (first.doc().results.runtime_ms / 1000.0).max(0.0),
                    )
                });
                let index = r.doc().runner.shard.map(|s| s.index);
                matches!((s, end), (Some(s), Some(e)) if s < e)
                    && !run
                        .iter()
                        .any(|o| o.doc().runner.shard.map(|s| s.index) == index)
            });
            match runs.last_mut() {
                Some(run) if fits => run.push(r),
                _ => runs.push(vec![r]),
            }
        }
        for run in runs {
            if run.len() == 1 {
                out.extend(run);
                continue;
            }
            match merge_round(&run) {
                Ok(merged) => {
                    notes.push(format!(
                        "shards {} merged into one round",
                        run.iter()
                            .map(|r| format!(
                                "{} ({})",
                                r.path.display(),
                                r.doc().runner.shard.expect("a sharded round")
                            ))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    out.push(merged);
                }
                Err(e) => {
                    notes.push(format!("shards left apart, not merged: {e}"));
                    out.extend(run);
                }
            }
        }
    }
    (out, notes)
}

/// The shards of one round merged ([`crate::merge()`]) into one round, with the merged
/// timeline and latency histograms; shown under the first shard's path.
fn merge_round(shards: &[Round]) -> Result<Round, ReportError> {
    let inputs = shards
        .iter()
        .map(|r| crate::MergeInput::open(&r.result.dir))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = crate::merge(inputs, vec!["kvlab".into(), "report".into()], false)?;
    let mut latency = LatencyLog {
        overall: crate::load::empty_histogram(),
        by_tag: BTreeMap::new(),
    };
    for iv in &merged.intervals {
        let h = match &iv.tag {
            None => &mut latency.overall,
            Some(t) => latency
                .by_tag
                .entry(t.clone())
                .or_insert_with(crate::load::empty_histogram),
        };
        // Histograms of one precision, as every kvlab log holds: adding cannot fail.
        let _ = h.add(&iv.histogram);
    }
    let first = &shards[0];
    Ok(Round {
        number: first.number,
        path: first.path.clone(),
        result: ResultDir {
            doc: merged.doc,
            ..first.result.clone()
        },
        timeline: (!merged.timeline.is_empty()).then_some(Timeline {
            rows: merged.timeline,
        }),
        latency: Some(latency),
        monitor: Vec::new(),
    })
}

impl Study {
    /// Finds every `result.json` at or below each of `roots`, reads them with the files
    /// beside them, and groups them. A root without any result is an error naming it.
    pub fn load(roots: &[PathBuf], options: StudyOptions) -> Result<Study, ReportError> {
        let mut rounds = Vec::new();
        let mut seen = BTreeSet::new();
        for root in roots {
            for file in find_result_files(root)? {
                let canonical = file.canonicalize().unwrap_or_else(|_| file.clone());
                if seen.insert(canonical) {
                    let base = if root.is_dir() {
                        root.as_path()
                    } else {
                        root.parent().unwrap_or(Path::new(""))
                    };
                    rounds.push(Round::load(&file, base)?);
                }
            }
        }
        Ok(Study::new(rounds, options))
    }

    /// Groups rounds into cells. The shards of one round (`runner.shard`, of one count,
    /// with overlapping measured windows) are merged into that round first
    /// ([`crate::merge()`]), so that they count once, not as rounds. Rounds without a
    /// `round-<n>` path, or whose numbers collide within a cell, are numbered by path
    /// order.
    pub fn new(rounds: Vec<Round>, options: StudyOptions) -> Study {
        let (rounds, notes) = merge_shards(rounds);
        let docs: Vec<&ResultDocument> = rounds.iter().map(Round::doc).collect();
        let names = workload_names(&docs);
        let mut cells: BTreeMap<CellKey, Vec<Round>> = BTreeMap::new();
        for (round, workload) in rounds.into_iter().zip(names) {
            let doc = round.doc();
            let key = CellKey {
                store: doc.store.display_name().to_string(),
                workload,
                threads: doc.runner.clients().0,
                connections: doc.runner.clients().1,
                pipeline: doc.runner.clients().2,
                target_ops_per_sec: doc.runner.target_rate_ops_per_sec.map(|r| r.round() as u64),
            };
            cells.entry(key).or_default().push(round);
        }
        let cells: Vec<Cell> = cells
            .into_iter()
            .map(|(key, mut rounds)| {
                rounds.sort_by(|a, b| a.path.cmp(&b.path));
                let numbers: BTreeSet<u32> = rounds.iter().map(|r| r.number).collect();
                if numbers.contains(&0) || numbers.len() != rounds.len() {
                    for (i, r) in rounds.iter_mut().enumerate() {
                        r.number = i as u32 + 1;
                    }
                }
                rounds.sort_by_key(|r| r.number);
                Cell { key, rounds }
            })
            .collect();
        let palette = Palette::new(cells.iter().map(|c| c.key.store.clone()));
        Study {
            cells,
            options,
            palette,
            notes,
        }
    }

    /// Records that `file` was skipped because it could not be read (`error`): the
    /// report says so on the page, not only on stderr.
    pub fn skipped(&mut self, file: &Path, error: &str) {
        self.notes
            .push(format!("skipped {}: {error}", file.display()));
    }

    /// The stores of the study, sorted.
    pub fn stores(&self) -> Vec<&str> {
        let set: BTreeSet<Natural<'_>> = self.cells.iter().map(|c| Natural(&c.key.store)).collect();
        set.into_iter().map(|n| n.0).collect()
    }

    /// Every result of the study.
    pub fn rounds(&self) -> impl Iterator<Item = (&Cell, &Round)> {
        self.cells
            .iter()
            .flat_map(|c| c.rounds.iter().map(move |r| (c, r)))
    }

    /// The workload × concurrency settings, sorted by workload then concurrency.
    pub(crate) fn settings(&self) -> Vec<Setting> {
        let set: BTreeSet<Setting> = self.cells.iter().map(|c| c.key.setting()).collect();
        set.into_iter().collect()
    }

    /// The workloads, sorted.
    pub(crate) fn workloads(&self) -> Vec<&str> {
        let set: BTreeSet<Natural<'_>> = self
            .cells
            .iter()
            .map(|c| Natural(&c.key.workload))
            .collect();
        set.into_iter().map(|n| n.0).collect()
    }

    /// The cell of a key.
    pub(crate) fn cell(&self, key: &CellKey) -> Option<&Cell> {
        self.cells
            .binary_search_by(|c| c.key.cmp(key))
            .ok()
            .map(|i| &self.cells[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_rounds() {
        let s = Spread::of(&[90.0, 100.0, 110.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 100.0, 90.0, 110.0));
        assert!((s.cv_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(Spread::of(&[5.0]).unwrap().cv_pct, None);
        assert_eq!(Spread::of(&[0.0, 0.0]).unwrap().cv_pct, None);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn round_numbers_from_paths() {
        assert_eq!(
            round_number(Path::new("r/redis/a/2x1/round-3/result.json")),
            Some(3)
        );
        assert_eq!(round_number(Path::new("round_12/result.json")), Some(12));
        assert_eq!(round_number(Path::new("round7")), Some(7));
        assert_eq!(
            round_number(Path::new("r/around-1/rounds/result.json")),
            None
        );
    }

    #[test]
    fn names_sort_with_numbers_as_numbers() {
        let mut names = [
            "w (recordcount=12000)",
            "w (recordcount=4000)",
            "w (recordcount=8000)",
            "redis-10",
            "redis-2",
            "redis",
            "a007",
            "a7",
            "a10",
        ];
        names.sort_by(|x, y| Natural(x).cmp(&Natural(y)));
        assert_eq!(
            names,
            [
                "a7",
                "a007",
                "a10",
                "redis",
                "redis-2",
                "redis-10",
                "w (recordcount=4000)",
                "w (recordcount=8000)",
                "w (recordcount=12000)"
            ]
        );
        assert_eq!(Natural("x1").cmp(&Natural("x1")), std::cmp::Ordering::Equal);
    }

    #[test]
    fn cell_keys_sort_by_concurrency() {
        let key = |threads, connections| CellKey {
            store: "redis".into(),
            workload: "a".into(),
            threads,
            connections,
            pipeline: 1,
            target_ops_per_sec: None,
        };
        let mut keys = [key(4, 4), key(1, 2), key(2, 1), key(16, 1), key(1, 1)];
        keys.sort();
        let labels: Vec<String> = keys.iter().map(CellKey::concurrency_label).collect();
        assert_eq!(labels, ["1×1", "1×2", "2×1", "4×4", "16×1"]);
        let open = CellKey {
            pipeline: 4,
            target_ops_per_sec: Some(20_000),
            ..key(2, 8)
        };
        assert_eq!(open.concurrency_label(), "2×8×4 @ 20k ops/s");
    }
}

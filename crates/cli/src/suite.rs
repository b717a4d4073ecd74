//! `kvlab suite FILE.toml`: a matrix of stores × workloads × thread and connection counts
//! × rounds, each cell run as its own `kvlab` child process.
//!
//! The pieces and how they connect:
//!
//! - [`SuiteCommand`]: the command line (`--out`, `--force`, `--cv-threshold`,
//!   `--dry-run`).
//! - `RawSuite` and friends: the TOML file as written (serde, `deny_unknown_fields`).
//! - `Plan`: the raw file validated — stores, workloads, the expanded `Cell`s and the
//!   `DataSet`s they share — so nothing runs unless the whole file is right. Every
//!   child's command line is parsed by kvlab's own parser during validation too.
//! - `Runner`: walks the data sets; for each it starts the server (or picks the
//!   data directory), loads once, runs the pending cells as children
//!   (`kvlab run|memtier … --out CELL`), records failures in `failed.json`, keeps
//!   `suite.json` current, and at the end writes `summary.md` / `summary.json`.
//!
//! The file format and the layout of the results are described in `docs/suites.md`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use clap::{Args, Parser};
use kvlab_report::ResultDocument;
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_workload::{CacheWorkload, CoreWorkload, Properties};
use serde::{Deserialize, Serialize};

use crate::{usage, Cli, Command as CliCommand, CLI_PROPERTIES, STORE_PREFIXES};

/// `kvlab suite`: run a suite file's matrix.
#[derive(Args, Debug, Clone)]
pub(crate) struct SuiteCommand {
    /// The suite file (TOML): stores, workloads, the matrix, rounds; see docs/suites.md.
    #[arg(value_name = "FILE.toml")]
    file: PathBuf,
    /// Results directory (default: results/NAME, NAME being the suite's name).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Run every cell again, even those with a complete result, and load every data set
    /// afresh.
    #[arg(long)]
    force: bool,
    /// Flag cells whose rounds' coefficient of variation of throughput or p99 exceeds
    /// this many percent.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    cv_threshold: f64,
    /// Validate the file, print the data sets and every cell's command line, run nothing.
    #[arg(long)]
    dry_run: bool,
}

// ---------------------------------------------------------------------------------------
// The file as written.

/// A suite file.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    rounds: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    cell_timeout: Option<String>,
    #[serde(default)]
    monitor: Option<bool>,
    #[serde(default)]
    monitor_interval: Option<String>,
    #[serde(default)]
    load: Option<RawLoad>,
    #[serde(default, rename = "store")]
    stores: Vec<RawStore>,
    #[serde(default, rename = "workload")]
    workloads: Vec<RawWorkload>,
    #[serde(default)]
    matrix: Option<RawMatrix>,
    #[serde(default, rename = "cell")]
    cells: Vec<RawCell>,
}

/// `[load]`: how data sets are loaded.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawLoad {
    threads: Option<usize>,
    connections: Option<usize>,
    pipeline: Option<usize>,
}

/// When a suite-spawned server starts and stops.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
enum SpawnPer {
    /// One server per distinct data set: loaded once, every cell of the data set runs on it.
    #[default]
    Dataset,
    /// A fresh server for every cell, loaded before it.
    Cell,
}

/// `[[store]]`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawStore {
    name: String,
    db: String,
    #[serde(default)]
    spawn: Option<String>,
    #[serde(default)]
    spawn_per: Option<SpawnPer>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    path: Option<PathBuf>,
    #[serde(default)]
    keep_data: Option<bool>,
    #[serde(default)]
    cache_size: Option<String>,
    #[serde(default)]
    disk_path: Option<PathBuf>,
    #[serde(default)]
    disk_size: Option<String>,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
    #[serde(default)]
    args: Vec<String>,
}

/// `[[workload]]`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: String,
    #[serde(default)]
    properties: Vec<PathBuf>,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
    #[serde(default)]
    memtier: Option<String>,
    #[serde(default)]
    prefill: Option<String>,
    #[serde(default)]
    duration: Option<String>,
    #[serde(default)]
    warmup: Option<String>,
    #[serde(default)]
    pipeline: Option<usize>,
    #[serde(default)]
    stores: Option<Vec<String>>,
    #[serde(default)]
    threads: Option<Vec<usize>>,
    #[serde(default)]
    connections: Option<Vec<usize>>,
    #[serde(default)]
    args: Vec<String>,
}

/// `[matrix]`.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    #[serde(default)]
    threads: Vec<usize>,
    #[serde(default)]
    connections: Option<Vec<usize>>,
}

/// `[[cell]]`: an override for the cells it matches.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawCell {
    #[serde(default)]
    store: Option<String>,
    #[serde(default)]
    workload: Option<String>,
    #[serde(default)]
    threads: Option<usize>,
    #[serde(default)]
    connections: Option<usize>,
    #[serde(default)]
    skip: bool,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
    #[serde(default)]
    duration: Option<String>,
    #[serde(default)]
    args: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// The validated plan.

/// How cells reach a store.
#[derive(Debug, Clone)]
enum Access {
    /// An embedded store: each data set gets a directory under `root`.
    Embedded { root: PathBuf },
    /// An in-process cache or the null store: every cell's process starts empty and
    /// loads (YCSB) by itself.
    InProcess,
    /// A server the suite starts.
    Spawn {
        kind: ServerKind,
        spec: ServerSpec,
        settings: String,
        per: SpawnPer,
    },
    /// A server that is already running.
    Url(String),
}

#[derive(Debug)]
struct StorePlan {
    name: String,
    db: String,
    access: Access,
    /// `-p db.NAME=VALUE` store options.
    options: Vec<String>,
    /// Arguments every child of this store gets (`--cache-size`, … and `args`).
    args: Vec<String>,
    keep_data: bool,
}

impl StorePlan {
    fn is_network(&self) -> bool {
        matches!(self.access, Access::Spawn { .. } | Access::Url(_))
    }
}

/// What kind of workload, with what it needs.
#[derive(Debug, Clone)]
enum WorkKind {
    /// YCSB CoreWorkload property files: a data set to load.
    Ycsb,
    /// A cache workload (`workload=kvlab.cache`): runs on an empty store.
    Cache,
    /// A memtier_benchmark command line, optionally with a prefill command line.
    Memtier {
        args: Vec<String>,
        prefill: Option<Vec<String>>,
    },
}

#[derive(Debug)]
struct WorkloadPlan {
    name: String,
    kind: WorkKind,
    property_files: Vec<PathBuf>,
    set: Vec<(String, String)>,
    duration: Option<String>,
    warmup: Option<String>,
    pipeline: Option<usize>,
    args: Vec<String>,
}

/// One run: a store, a workload, a concurrency and a round.
#[derive(Debug, Clone)]
struct Cell {
    store: usize,
    workload: usize,
    threads: usize,
    connections: usize,
    round: u32,
    /// Extra `-p` properties from `[[cell]]` overrides.
    set: Vec<(String, String)>,
    duration: Option<String>,
    args: Vec<String>,
    /// `STORE/WORKLOAD/tT-cC/round-N`, relative to the results directory.
    rel: PathBuf,
    dataset: usize,
}

/// How a data set comes to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum DataMode {
    /// `kvlab load` once, then every cell runs on it.
    Load,
    /// A memtier prefill command line once, then every cell runs on it.
    Prefill,
    /// Nothing to load: cells start from what the store holds (an empty new server or
    /// directory, or what earlier cells of the data set left).
    Empty,
    /// Each cell's own process loads (in-process stores, which start empty).
    InCell,
}

#[derive(Debug)]
struct DataSet {
    /// Directory name: `ds-` and a hash of the key.
    id: String,
    store: usize,
    /// What makes two cells share it (store, load-affecting properties…).
    key: String,
    mode: DataMode,
    /// The cell whose settings load it.
    first_cell: usize,
    cells: Vec<usize>,
}

#[derive(Debug)]
struct Plan {
    name: String,
    description: Option<String>,
    file: PathBuf,
    out: PathBuf,
    rounds: u32,
    seed: Option<u64>,
    cell_timeout: Option<Duration>,
    monitor: Option<Duration>,
    load_threads: usize,
    load_connections: usize,
    load_pipeline: usize,
    threads: Vec<usize>,
    connections: Vec<usize>,
    stores: Vec<StorePlan>,
    workloads: Vec<WorkloadPlan>,
    cells: Vec<Cell>,
    datasets: Vec<DataSet>,
}

/// A usage error naming the suite file and the key.
fn bad(file: &Path, key: &str, msg: impl std::fmt::Display) -> anyhow::Error {
    usage(format!("{}: {key}: {msg}", file.display()))
}

/// A valid store, workload or suite name: it becomes a directory name.
fn check_name(file: &Path, key: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with(['.', '_', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(bad(
            file,
            key,
            format!(
                "`{name}` is not a usable name: expected letters, digits, `-`, `_` or `.`, \
                 not starting with `.`, `_` or `-` (it becomes a directory name)"
            ),
        ))
    }
}

/// A TOML scalar as the text of a `-p` value.
fn scalar(file: &Path, key: &str, v: &toml::Value) -> Result<String> {
    Ok(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => {
            return Err(bad(
                file,
                key,
                format!(
                    "expected a string, number or boolean, found {}",
                    other.type_str()
                ),
            ))
        }
    })
}

fn scalars(
    file: &Path,
    key: &str,
    table: &BTreeMap<String, toml::Value>,
) -> Result<Vec<(String, String)>> {
    table
        .iter()
        .map(|(k, v)| Ok((k.clone(), scalar(file, &format!("{key}.{k}"), v)?)))
        .collect()
}

/// Splits a command line into words: whitespace separates, single or double quotes
/// group (without escapes inside single quotes), a backslash escapes the next character.
fn split_words(s: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => cur.push(c),
                            None => return Err("a backslash at the end".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => cur.push(c),
                    None => return Err("a backslash at the end".into()),
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// memtier flags the suite sets itself.
const MEMTIER_RESERVED: &[(&str, &str)] = &[
    ("-s", "--server"),
    ("-p", "--port"),
    ("-S", "--unix-socket"),
    ("-u", "--uri"),
    ("-t", "--threads"),
    ("-c", "--clients"),
    ("", "--out"),
    ("", "--overwrite"),
    ("", "--spawn"),
    ("", "--progress"),
];

/// The words of a memtier line, refusing the flags the suite sets (a `prefill` line may
/// set its own threads and clients).
fn memtier_words(file: &Path, key: &str, line: &str, prefill: bool) -> Result<Vec<String>> {
    let words = split_words(line).map_err(|e| bad(file, key, e))?;
    for w in &words {
        for (short, long) in MEMTIER_RESERVED {
            let hit = (!short.is_empty()
                && (w == short || (w.starts_with(short) && !w.starts_with("--"))))
                || w == long
                || w.starts_with(&format!("{long}="));
            // A prefill may set its own threads and clients.
            let settable = prefill && (*long == "--threads" || *long == "--clients");
            if hit && !settable {
                return Err(bad(
                    file,
                    key,
                    format!(
                        "`{w}`: the suite sets {} itself (server and port from the store, \
                         threads and clients from the matrix, --out per cell)",
                        if short.is_empty() {
                            long.to_string()
                        } else {
                            format!("{short}/{long}")
                        }
                    ),
                ));
            }
        }
    }
    Ok(words)
}

/// Words of a memtier command line naming the protocol, if any.
fn names_protocol(words: &[String]) -> bool {
    words.iter().any(|w| {
        w == "-P"
            || w == "--protocol"
            || w.starts_with("--protocol=")
            || (w.starts_with("-P") && !w.starts_with("--"))
    })
}

/// `host` and `port` of a `redis://host:port` or `memcached://host:port` URL.
fn host_port(url: &str) -> Option<(String, String)> {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let rest = rest.trim_end_matches('/');
    if rest.contains(['@', '/', ',']) {
        return None;
    }
    let (host, port) = rest.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    Some((host.to_string(), port.to_string()))
}

/// The properties whose values decide which records a YCSB load writes.
const LOAD_PROPERTIES: &[&str] = &[
    "recordcount",
    "insertstart",
    "insertcount",
    "fieldcount",
    "fieldlength",
    "fieldlengthdistribution",
    "fieldlengthhistogram",
    "minfieldlength",
    "fieldnameprefix",
    "zeropadding",
    "insertorder",
    "table",
    "dataintegrity",
];

/// FNV-1a 64 of `s`, for short stable directory names.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn parse_time(file: &Path, key: &str, s: &str) -> Result<Duration> {
    crate::parse_duration(s).map_err(|e| bad(file, key, e))
}

impl Plan {
    /// Reads and validates `cmd.file`.
    fn load(cmd: &SuiteCommand) -> Result<Plan> {
        let file = &cmd.file;
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading the suite file {}", file.display()))
            .map_err(|e| usage(format!("{e:#}")))?;
        let raw: RawSuite =
            toml::from_str(&text).map_err(|e| usage(format!("{}: {e}", file.display())))?;
        let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
        Plan::validate(raw, file, &base, cmd.out.clone())
    }

    fn validate(raw: RawSuite, file: &Path, base: &Path, out: Option<PathBuf>) -> Result<Plan> {
        check_name(file, "name", &raw.name)?;
        let rounds = raw.rounds.unwrap_or(1);
        if rounds == 0 {
            return Err(bad(file, "rounds", "expected at least 1"));
        }
        let out = out.unwrap_or_else(|| PathBuf::from("results").join(&raw.name));
        let cell_timeout = raw
            .cell_timeout
            .as_deref()
            .map(|s| parse_time(file, "cell_timeout", s))
            .transpose()?;
        let monitor_interval = raw
            .monitor_interval
            .as_deref()
            .map(|s| parse_time(file, "monitor_interval", s))
            .transpose()?
            .unwrap_or(Duration::from_secs(1));
        if monitor_interval.is_zero() {
            return Err(bad(file, "monitor_interval", "expected a time above zero"));
        }
        let monitor = raw.monitor.unwrap_or(true).then_some(monitor_interval);
        let load = raw.load.unwrap_or_default();
        for (k, v) in [
            ("load.threads", load.threads),
            ("load.connections", load.connections),
            ("load.pipeline", load.pipeline),
        ] {
            if v == Some(0) {
                return Err(bad(file, k, "expected at least 1"));
            }
        }

        if raw.stores.is_empty() {
            return Err(bad(
                file,
                "store",
                "no [[store]]: expected at least one store",
            ));
        }
        if raw.workloads.is_empty() {
            return Err(bad(
                file,
                "workload",
                "no [[workload]]: expected at least one workload",
            ));
        }
        let stores = raw
            .stores
            .iter()
            .enumerate()
            .map(|(i, s)| validate_store(file, base, &out, i, s))
            .collect::<Result<Vec<_>>>()?;
        unique(file, "store", stores.iter().map(|s| s.name.as_str()))?;
        let workloads = raw
            .workloads
            .iter()
            .enumerate()
            .map(|(i, w)| validate_workload(file, base, i, w, &stores))
            .collect::<Result<Vec<_>>>()?;
        unique(file, "workload", workloads.iter().map(|w| w.name.as_str()))?;

        let matrix = raw.matrix.unwrap_or(RawMatrix {
            threads: Vec::new(),
            connections: None,
        });
        let counts = |key: &str, v: &[usize]| -> Result<()> {
            if v.contains(&0) {
                return Err(bad(file, key, "counts must be at least 1"));
            }
            Ok(())
        };
        counts("matrix.threads", &matrix.threads)?;
        let connections = matrix.connections.clone().unwrap_or_else(|| vec![1]);
        counts("matrix.connections", &connections)?;
        if connections.is_empty() {
            return Err(bad(
                file,
                "matrix.connections",
                "empty matrix: expected a list of connection counts, e.g. connections = [1, 16] \
                 (or leave it out for 1)",
            ));
        }

        // Expand the matrix.
        let mut cells = Vec::new();
        for (wi, (w, rw)) in workloads.iter().zip(&raw.workloads).enumerate() {
            let key = format!("workload[{wi}] ({})", w.name);
            let threads = rw.threads.as_ref().unwrap_or(&matrix.threads);
            counts(&format!("{key}.threads"), threads)?;
            if threads.is_empty() {
                return Err(bad(
                    file,
                    "matrix.threads",
                    format!(
                        "empty matrix: expected a list of thread counts, e.g. threads = [1, 2] \
                         (or `threads` in workload `{}`)",
                        w.name
                    ),
                ));
            }
            let conns = rw.connections.as_ref().unwrap_or(&connections);
            counts(&format!("{key}.connections"), conns)?;
            if conns.is_empty() {
                return Err(bad(
                    file,
                    &format!("{key}.connections"),
                    "expected at least one count",
                ));
            }
            for (si, s) in stores.iter().enumerate() {
                if let Some(only) = &rw.stores {
                    if !only.contains(&s.name) {
                        continue;
                    }
                }
                if matches!(w.kind, WorkKind::Memtier { .. }) && !s.is_network() {
                    return Err(bad(
                        file,
                        &format!("{key}.memtier"),
                        format!(
                            "a memtier workload needs a redis or memcached store, and store `{}` \
                             is `{}`; list the stores it runs on with `stores = [...]`",
                            s.name, s.db
                        ),
                    ));
                }
                // Connections are a network store's axis; embedded stores run c1.
                let conns: Vec<usize> = if s.is_network() {
                    dedup(conns)
                } else {
                    vec![1]
                };
                for &t in &dedup(threads) {
                    for &c in &conns {
                        for round in 1..=rounds {
                            let rel = PathBuf::from(&s.name)
                                .join(&w.name)
                                .join(format!("t{t}-c{c}"))
                                .join(format!("round-{round}"));
                            cells.push(Cell {
                                store: si,
                                workload: wi,
                                threads: t,
                                connections: c,
                                round,
                                set: Vec::new(),
                                duration: None,
                                args: Vec::new(),
                                rel,
                                dataset: usize::MAX,
                            });
                        }
                    }
                }
            }
        }

        // Per-cell overrides.
        let mut skipped = vec![false; cells.len()];
        for (oi, o) in raw.cells.iter().enumerate() {
            let key = format!("cell[{oi}]");
            if let Some(s) = &o.store {
                if !stores.iter().any(|x| &x.name == s) {
                    return Err(bad(
                        file,
                        &format!("{key}.store"),
                        format!("no store named `{s}`"),
                    ));
                }
            }
            if let Some(w) = &o.workload {
                if !workloads.iter().any(|x| &x.name == w) {
                    return Err(bad(
                        file,
                        &format!("{key}.workload"),
                        format!("no workload named `{w}`"),
                    ));
                }
            }
            let set = scalars(file, &format!("{key}.set"), &o.set)?;
            if let Some(d) = &o.duration {
                parse_time(file, &format!("{key}.duration"), d)?;
            }
            let mut matched = 0;
            for (ci, c) in cells.iter_mut().enumerate() {
                let hit = o.store.as_ref().is_none_or(|s| &stores[c.store].name == s)
                    && o.workload
                        .as_ref()
                        .is_none_or(|w| &workloads[c.workload].name == w)
                    && o.threads.is_none_or(|t| t == c.threads)
                    && o.connections.is_none_or(|n| n == c.connections);
                if !hit {
                    continue;
                }
                matched += 1;
                if o.skip {
                    skipped[ci] = true;
                }
                c.set.extend(set.iter().cloned());
                if o.duration.is_some() {
                    c.duration.clone_from(&o.duration);
                }
                c.args.extend(o.args.iter().cloned());
            }
            if matched == 0 {
                return Err(bad(file, &key, "matches no cell of the matrix"));
            }
        }
        let cells: Vec<Cell> = cells
            .into_iter()
            .zip(skipped)
            .filter(|(_, s)| !s)
            .map(|(c, _)| c)
            .collect();
        if cells.is_empty() {
            return Err(bad(file, "matrix", "empty matrix: every cell is skipped"));
        }

        let mut plan = Plan {
            name: raw.name,
            description: raw.description,
            file: file.to_path_buf(),
            out,
            rounds,
            seed: raw.seed,
            cell_timeout,
            monitor,
            load_threads: load.threads.unwrap_or(2),
            load_connections: load.connections.unwrap_or(1),
            load_pipeline: load.pipeline.unwrap_or(1),
            threads: dedup(&matrix.threads),
            connections,
            stores,
            workloads,
            cells,
            datasets: Vec::new(),
        };
        plan.assign_datasets()?;
        plan.check_command_lines()?;
        Ok(plan)
    }

    /// The properties of a YCSB or cache cell: files, the workload's `set`, the cell's.
    fn properties(&self, cell: &Cell) -> Result<Properties> {
        let w = &self.workloads[cell.workload];
        let mut props = Properties::new();
        for f in &w.property_files {
            props.load_file(f).map_err(|e| usage(e.to_string()))?;
        }
        for (k, v) in w.set.iter().chain(&cell.set) {
            props
                .set_override(&format!("{k}={v}"))
                .map_err(|e| usage(e.to_string()))?;
        }
        Ok(props)
    }

    /// Groups the cells into data sets, and orders them so each data set's cells run
    /// together: stores in file order, data sets in order of first use, and within a data
    /// set round by round (round 1 of every cell, then round 2…).
    fn assign_datasets(&mut self) -> Result<()> {
        let mut keys: HashMap<String, String> = HashMap::new();
        let mut datasets: Vec<DataSet> = Vec::new();
        let mut by_key: HashMap<String, usize> = HashMap::new();
        for ci in 0..self.cells.len() {
            let cell = &self.cells[ci];
            let store = &self.stores[cell.store];
            let w = &self.workloads[cell.workload];
            let per_cell = matches!(
                store.access,
                Access::Spawn {
                    per: SpawnPer::Cell,
                    ..
                }
            );
            let (mode, mut key) = match &w.kind {
                WorkKind::Ycsb => {
                    let set_key = format!("{}|{:?}", cell.workload, cell.set);
                    let key = match keys.get(&set_key) {
                        Some(k) => k.clone(),
                        None => {
                            let props = self.properties(cell)?;
                            let wl = CoreWorkload::from_properties(
                                &props,
                                CLI_PROPERTIES,
                                STORE_PREFIXES,
                            )
                            .map_err(|e| {
                                bad(
                                    &self.file,
                                    &format!("workload `{}` (cell {})", w.name, cell.rel.display()),
                                    e,
                                )
                            })?;
                            let eff: BTreeMap<String, String> =
                                wl.effective().into_iter().collect();
                            let mut k = String::from("ycsb");
                            for p in LOAD_PROPERTIES {
                                if let Some(v) = eff.get(*p) {
                                    let _ = write!(k, " {p}={v}");
                                }
                            }
                            for (p, v) in props.iter() {
                                if STORE_PREFIXES.iter().any(|s| p.starts_with(s)) {
                                    let _ = write!(k, " {p}={v}");
                                }
                            }
                            keys.insert(set_key, k.clone());
                            k
                        }
                    };
                    if matches!(store.access, Access::InProcess) {
                        (
                            DataMode::InCell,
                            format!("{key} cell={}", cell.rel.display()),
                        )
                    } else {
                        (DataMode::Load, key)
                    }
                }
                WorkKind::Cache => {
                    // A cache runs from empty: a fresh directory or server per cell (a
                    // url store cannot be emptied and is shared).
                    match store.access {
                        Access::Url(_) => (DataMode::Empty, "cache".to_string()),
                        _ => (
                            DataMode::Empty,
                            format!("cache cell={}", cell.rel.display()),
                        ),
                    }
                }
                WorkKind::Memtier { prefill, .. } => match prefill {
                    Some(p) => (
                        DataMode::Prefill,
                        format!("memtier prefill={}", p.join(" ")),
                    ),
                    None => (DataMode::Empty, "memtier".to_string()),
                },
            };
            if per_cell {
                let _ = write!(key, " cell={}", cell.rel.display());
            }
            let key = format!("store={} {key}", store.name);
            let di = *by_key.entry(key.clone()).or_insert_with(|| {
                datasets.push(DataSet {
                    id: format!("ds-{:016x}", fnv(&key)),
                    store: cell.store,
                    key,
                    mode,
                    first_cell: ci,
                    cells: Vec::new(),
                });
                datasets.len() - 1
            });
            datasets[di].cells.push(ci);
            self.cells[ci].dataset = di;
        }
        // Order: by store, then data set (first use); within, by round, then file order.
        datasets.sort_by_key(|d| (d.store, d.first_cell));
        for d in &mut datasets {
            let cells = &self.cells;
            d.cells.sort_by_key(|&c| (cells[c].round, c));
        }
        for (di, d) in datasets.iter().enumerate() {
            for &c in &d.cells {
                self.cells[c].dataset = di;
            }
        }
        self.datasets = datasets;
        Ok(())
    }

    /// The data directory of an embedded store's data set.
    fn data_dir(&self, ds: &DataSet) -> Option<PathBuf> {
        match &self.stores[ds.store].access {
            Access::Embedded { root } => Some(root.join(&ds.id)),
            _ => None,
        }
    }

    /// The directory of a cell.
    fn cell_dir(&self, cell: &Cell) -> PathBuf {
        self.out.join(&cell.rel)
    }

    /// The directory of a data set's load output.
    fn load_dir(&self, ds: &DataSet) -> PathBuf {
        self.out
            .join(&self.stores[ds.store].name)
            .join("_load")
            .join(&ds.id)
    }

    /// The arguments that point a child at the store: `--db`, where it is, its options.
    fn store_args(
        &self,
        store: &StorePlan,
        data_dir: Option<&Path>,
        url: Option<&str>,
    ) -> Vec<String> {
        let mut a = vec!["--db".to_string(), store.db.clone()];
        if let Some(d) = data_dir {
            a.push("--path".into());
            a.push(d.display().to_string());
        }
        if let Some(u) = url {
            a.push("--url".into());
            a.push(u.to_string());
        }
        for o in &store.options {
            a.push("-p".into());
            a.push(o.clone());
        }
        a.extend(store.args.iter().cloned());
        a
    }

    /// The child command line of a cell (without the program name). `url` is the
    /// server's address for network stores.
    fn cell_args(&self, cell: &Cell, url: Option<&str>, out: &Path) -> Vec<String> {
        let store = &self.stores[cell.store];
        let w = &self.workloads[cell.workload];
        let ds = &self.datasets[cell.dataset];
        let mut a: Vec<String> = Vec::new();
        match &w.kind {
            WorkKind::Memtier { args, .. } => {
                a.push("memtier".into());
                a.extend(args.iter().cloned());
                a.extend(memtier_target(store, args, url));
                a.extend(["-t".into(), cell.threads.to_string()]);
                a.extend(["-c".into(), cell.connections.to_string()]);
                if let Some(d) = cell.duration.as_ref().or(w.duration.as_ref()) {
                    let secs = crate::parse_duration(d)
                        .unwrap_or_default()
                        .as_secs()
                        .max(1);
                    a.push(format!("--test-time={secs}"));
                }
            }
            WorkKind::Ycsb | WorkKind::Cache => {
                a.push("run".into());
                for f in &w.property_files {
                    a.push("-P".into());
                    a.push(f.display().to_string());
                }
                for (k, v) in w.set.iter().chain(&cell.set) {
                    a.push("-p".into());
                    a.push(format!("{k}={v}"));
                }
                a.extend(self.store_args(store, self.data_dir(ds).as_deref(), url));
                a.extend(["--threads".into(), cell.threads.to_string()]);
                if store.is_network() {
                    a.extend(["--connections".into(), cell.connections.to_string()]);
                }
                if let Some(p) = w.pipeline {
                    a.extend(["--pipeline".into(), p.to_string()]);
                }
                if let Some(d) = cell.duration.as_ref().or(w.duration.as_ref()) {
                    a.extend(["--duration".into(), d.clone()]);
                }
                if let Some(wu) = &w.warmup {
                    a.extend(["--warmup".into(), wu.clone()]);
                }
                if let Some(s) = self.seed {
                    a.extend(["--seed".into(), (s + u64::from(cell.round) - 1).to_string()]);
                }
            }
        }
        a.extend(["--out".into(), out.display().to_string()]);
        a.extend(["--overwrite".into(), "--progress".into(), "never".into()]);
        if matches!(w.kind, WorkKind::Memtier { .. }) {
            // Store options and args of a memtier cell: only `args` apply.
            a.extend(store.args.iter().cloned());
        }
        a.extend(w.args.iter().cloned());
        a.extend(cell.args.iter().cloned());
        a
    }

    /// The child command line that loads a data set, if it needs one.
    fn load_args(&self, ds: &DataSet, url: Option<&str>, out: &Path) -> Option<Vec<String>> {
        let cell = &self.cells[ds.first_cell];
        let store = &self.stores[ds.store];
        let w = &self.workloads[cell.workload];
        let mut a: Vec<String> = Vec::new();
        match (&ds.mode, &w.kind) {
            (DataMode::Load, _) => {
                a.push("load".into());
                for f in &w.property_files {
                    a.push("-P".into());
                    a.push(f.display().to_string());
                }
                for (k, v) in w.set.iter().chain(&cell.set) {
                    a.push("-p".into());
                    a.push(format!("{k}={v}"));
                }
                a.extend(self.store_args(store, self.data_dir(ds).as_deref(), url));
                a.extend(["--threads".into(), self.load_threads.to_string()]);
                if store.is_network() {
                    a.extend(["--connections".into(), self.load_connections.to_string()]);
                    a.extend(["--pipeline".into(), self.load_pipeline.to_string()]);
                }
                if let Some(s) = self.seed {
                    a.extend(["--seed".into(), s.to_string()]);
                }
            }
            (
                DataMode::Prefill,
                WorkKind::Memtier {
                    prefill: Some(p), ..
                },
            ) => {
                a.push("memtier".into());
                a.extend(p.iter().cloned());
                a.extend(memtier_target(store, p, url));
            }
            _ => return None,
        }
        a.extend(["--out".into(), out.display().to_string()]);
        a.extend(["--overwrite".into(), "--progress".into(), "never".into()]);
        Some(a)
    }

    /// Parses every distinct child command line with kvlab's own parser (a typo in
    /// `args` or a memtier flag stops the suite before anything runs), and checks memtier
    /// protocols against the stores.
    fn check_command_lines(&self) -> Result<()> {
        let placeholder = |s: &StorePlan| match &s.access {
            Access::Spawn { kind, .. } => Some(format!("{}://127.0.0.1:1", kind.scheme())),
            Access::Url(u) => Some(u.clone()),
            _ => None,
        };
        let mut seen = BTreeSet::new();
        let mut lines: Vec<(String, usize, Vec<String>)> = Vec::new();
        for d in &self.datasets {
            let url = placeholder(&self.stores[d.store]);
            if let Some(a) = self.load_args(d, url.as_deref(), Path::new("/out")) {
                lines.push((format!("the load of data set {}", d.id), d.store, a));
            }
        }
        for c in &self.cells {
            let url = placeholder(&self.stores[c.store]);
            let a = self.cell_args(c, url.as_deref(), Path::new("/out"));
            lines.push((format!("cell {}", c.rel.display()), c.store, a));
        }
        for (what, store, a) in lines {
            if !seen.insert(a.clone()) {
                continue;
            }
            let fail = |msg: &str| {
                usage(format!(
                    "{}: {what}: `kvlab {}`: {msg}",
                    self.file.display(),
                    a.join(" ")
                ))
            };
            let argv = std::iter::once("kvlab".to_string()).chain(a.iter().cloned());
            let cli = Cli::try_parse_from(argv).map_err(|e| {
                let msg = e.to_string();
                fail(
                    msg.lines()
                        .next()
                        .unwrap_or_default()
                        .trim_start_matches("error: "),
                )
            })?;
            if let CliCommand::Memtier(m) = cli.command {
                m.memtier.validate().map_err(|e| fail(&e))?;
                m.memtier.spec().map_err(|e| fail(&e))?;
                let speaks = if m.memtier.protocol().is_redis() {
                    "redis"
                } else {
                    "memcached"
                };
                let db = &self.stores[store].db;
                if speaks != db {
                    return Err(fail(&format!(
                        "the memtier protocol speaks {speaks} but store `{}` is {db}",
                        self.stores[store].name
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `-s HOST -p PORT` (and the memcached protocol when none is named) for a memtier
/// child; the placeholder of a store without a URL yet.
fn memtier_target(store: &StorePlan, words: &[String], url: Option<&str>) -> Vec<String> {
    let (host, port) = url
        .and_then(host_port)
        .unwrap_or_else(|| ("HOST".into(), "PORT".into()));
    let mut a = vec!["-s".to_string(), host, "-p".to_string(), port];
    if store.db == "memcached" && !names_protocol(words) {
        a.push("--protocol=memcache_text".into());
    }
    a
}

fn dedup(v: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn unique<'a>(file: &Path, what: &str, names: impl Iterator<Item = &'a str>) -> Result<()> {
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            return Err(bad(
                file,
                what,
                format!("two {what}s are named `{n}`: names must be unique"),
            ));
        }
    }
    Ok(())
}

const EMBEDDED: &[&str] = &["rocksdb", "lmdb", "wiredtiger"];
const IN_PROCESS: &[&str] = &["moka", "foyer", "null"];
const NETWORK: &[&str] = &["redis", "memcached"];

fn validate_store(
    file: &Path,
    base: &Path,
    out: &Path,
    i: usize,
    s: &RawStore,
) -> Result<StorePlan> {
    let key = format!("store[{i}]");
    check_name(file, &format!("{key}.name"), &s.name)?;
    let key = format!("store[{i}] ({})", s.name);
    let available = crate::available_stores();
    if !available.contains(&s.db.as_str()) {
        return Err(bad(
            file,
            &format!("{key}.db"),
            format!(
                "unknown store `{}`; expected one of: {}",
                s.db,
                available.join(", ")
            ),
        ));
    }
    let db = s.db.as_str();
    let only = |field: &str, present: bool, allowed: &[&str], what: &str| -> Result<()> {
        if present && !allowed.contains(&db) {
            return Err(bad(
                file,
                &format!("{key}.{field}"),
                format!("`{field}` applies to {what}, not to `{db}`"),
            ));
        }
        Ok(())
    };
    only("spawn", s.spawn.is_some(), NETWORK, "redis and memcached")?;
    only("url", s.url.is_some(), NETWORK, "redis and memcached")?;
    only(
        "spawn_per",
        s.spawn_per.is_some(),
        NETWORK,
        "spawned servers",
    )?;
    only(
        "path",
        s.path.is_some(),
        EMBEDDED,
        "embedded stores (rocksdb, lmdb, wiredtiger)",
    )?;
    only(
        "keep_data",
        s.keep_data.is_some(),
        EMBEDDED,
        "embedded stores (rocksdb, lmdb, wiredtiger)",
    )?;
    only(
        "cache_size",
        s.cache_size.is_some(),
        &["moka", "foyer"],
        "moka and foyer",
    )?;
    only("disk_path", s.disk_path.is_some(), &["foyer"], "foyer")?;
    only("disk_size", s.disk_size.is_some(), &["foyer"], "foyer")?;
    let access = if EMBEDDED.contains(&db) {
        let root = match &s.path {
            Some(p) if p.is_relative() => base.join(p),
            Some(p) => p.clone(),
            None => out.join(&s.name).join("_data"),
        };
        Access::Embedded { root }
    } else if IN_PROCESS.contains(&db) {
        Access::InProcess
    } else {
        match (&s.spawn, &s.url) {
            (Some(_), Some(_)) => {
                return Err(bad(file, &key, "give either `spawn` or `url`, not both"));
            }
            (None, None) => {
                return Err(bad(
                    file,
                    &key,
                    "a network store needs `spawn = \"SETTINGS\"` (a local server the suite \
                     starts; \"\" for the defaults) or `url = \"redis://host:port\"`",
                ));
            }
            (None, Some(u)) => Access::Url(u.clone()),
            (Some(settings), None) => {
                let kind = if db == "redis" {
                    ServerKind::Redis
                } else {
                    ServerKind::Memcached
                };
                let spec = ServerSpec::parse(kind, settings)
                    .map_err(|e| bad(file, &format!("{key}.spawn"), e))?;
                Access::Spawn {
                    kind,
                    spec,
                    settings: settings.clone(),
                    per: s.spawn_per.unwrap_or_default(),
                }
            }
        }
    };
    if s.spawn_per.is_some() && s.spawn.is_none() {
        return Err(bad(
            file,
            &format!("{key}.spawn_per"),
            "applies only with `spawn`",
        ));
    }
    let mut options = Vec::new();
    for (k, v) in scalars(file, &format!("{key}.options"), &s.options)? {
        let prefix = format!("{db}.");
        let name = if k.starts_with(&prefix) {
            k
        } else if STORE_PREFIXES.iter().any(|p| k.starts_with(p)) {
            return Err(bad(
                file,
                &format!("{key}.options.{k}"),
                format!("an option of another store; options of `{db}` start with `{prefix}` or have no prefix"),
            ));
        } else {
            format!("{prefix}{k}")
        };
        options.push(format!("{name}={v}"));
    }
    let mut args = Vec::new();
    if let Some(c) = &s.cache_size {
        args.extend(["--cache-size".to_string(), c.clone()]);
    }
    if let Some(p) = &s.disk_path {
        let p = if p.is_relative() {
            base.join(p)
        } else {
            p.clone()
        };
        args.extend(["--disk-path".to_string(), p.display().to_string()]);
    }
    if let Some(d) = &s.disk_size {
        args.extend(["--disk-size".to_string(), d.clone()]);
    }
    args.extend(s.args.iter().cloned());
    Ok(StorePlan {
        name: s.name.clone(),
        db: s.db.clone(),
        access,
        options,
        args,
        keep_data: s.keep_data.unwrap_or(false),
    })
}

fn validate_workload(
    file: &Path,
    base: &Path,
    i: usize,
    w: &RawWorkload,
    stores: &[StorePlan],
) -> Result<WorkloadPlan> {
    check_name(file, &format!("workload[{i}].name"), &w.name)?;
    let key = format!("workload[{i}] ({})", w.name);
    if let Some(only) = &w.stores {
        for s in only {
            if !stores.iter().any(|x| &x.name == s) {
                return Err(bad(
                    file,
                    &format!("{key}.stores"),
                    format!("no store named `{s}`"),
                ));
            }
        }
        if only.is_empty() {
            return Err(bad(
                file,
                &format!("{key}.stores"),
                "expected at least one store name",
            ));
        }
    }
    if let Some(d) = &w.duration {
        parse_time(file, &format!("{key}.duration"), d)?;
    }
    if let Some(wu) = &w.warmup {
        crate::parse_warmup(wu).map_err(|e| bad(file, &format!("{key}.warmup"), e))?;
    }
    if w.pipeline == Some(0) {
        return Err(bad(file, &format!("{key}.pipeline"), "expected at least 1"));
    }
    let set = scalars(file, &format!("{key}.set"), &w.set)?;
    let property_files: Vec<PathBuf> = w
        .properties
        .iter()
        .map(|p| {
            if p.is_relative() {
                base.join(p)
            } else {
                p.clone()
            }
        })
        .collect();
    let kind = match (&w.memtier, w.properties.is_empty()) {
        (Some(_), false) => {
            return Err(bad(
                file,
                &key,
                "give either `memtier` or `properties`, not both",
            ));
        }
        (None, true) => {
            return Err(bad(
                file,
                &key,
                "expected `properties = [\"workloads/ycsb/workloada\"]` (YCSB or cache property \
                 files, relative to the suite file) or `memtier = \"--ratio=1:10 ...\"`",
            ));
        }
        (Some(line), true) => {
            if !set.is_empty() {
                return Err(bad(
                    file,
                    &format!("{key}.set"),
                    "applies to property-file workloads; put memtier flags in `memtier`",
                ));
            }
            if w.pipeline.is_some() || w.warmup.is_some() {
                return Err(bad(file, &key, "`pipeline` and `warmup` apply to property-file workloads; give memtier's --pipeline in `memtier`"));
            }
            let args = memtier_words(file, &format!("{key}.memtier"), line, false)?;
            let prefill = w
                .prefill
                .as_deref()
                .map(|p| memtier_words(file, &format!("{key}.prefill"), p, true))
                .transpose()?;
            WorkKind::Memtier { args, prefill }
        }
        (None, false) => {
            if w.prefill.is_some() {
                return Err(bad(file, &format!("{key}.prefill"), "applies to memtier workloads; a YCSB workload's data set is loaded with `kvlab load`"));
            }
            let mut props = Properties::new();
            for f in &property_files {
                if !f.is_file() {
                    return Err(bad(
                        file,
                        &format!("{key}.properties"),
                        format!(
                            "{} is not a file (paths are relative to the suite file)",
                            f.display()
                        ),
                    ));
                }
                props
                    .load_file(f)
                    .map_err(|e| bad(file, &format!("{key}.properties"), e))?;
            }
            for (k, v) in &set {
                props
                    .set_override(&format!("{k}={v}"))
                    .map_err(|e| bad(file, &format!("{key}.set.{k}"), e))?;
            }
            if props.get("workload") == Some(CacheWorkload::CLASS) {
                CacheWorkload::from_properties(&props, CLI_PROPERTIES, STORE_PREFIXES)
                    .map_err(|e| bad(file, &key, e))?;
                WorkKind::Cache
            } else {
                CoreWorkload::from_properties(&props, CLI_PROPERTIES, STORE_PREFIXES)
                    .map_err(|e| bad(file, &key, e))?;
                WorkKind::Ycsb
            }
        }
    };
    Ok(WorkloadPlan {
        name: w.name.clone(),
        kind,
        property_files,
        set,
        duration: w.duration.clone(),
        warmup: w.warmup.clone(),
        pipeline: w.pipeline,
        args: w.args.clone(),
    })
}

// ---------------------------------------------------------------------------------------
// Running.

/// Ctrl-C presses (and SIGTERMs) seen by the suite.
static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

/// How long a child has to finish after its second SIGINT (or a timeout's SIGINT)
/// before it is killed.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// How many lines of a failed child's stderr go into `failed.json`.
const STDERR_TAIL_LINES: usize = 30;

/// `kvlab suite`.
pub(crate) fn run(cmd: SuiteCommand) -> Result<ExitCode> {
    if !(cmd.cv_threshold.is_finite() && cmd.cv_threshold >= 0.0) {
        return Err(usage("--cv-threshold must be a percentage of at least 0"));
    }
    let plan = Plan::load(&cmd)?;
    if cmd.dry_run {
        print_plan(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let _ = ctrlc::set_handler(|| {
        INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    });
    let exe = std::env::current_exe().context("finding the kvlab binary to run cells with")?;
    Runner::new(&plan, &cmd, exe)?.run()
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `--dry-run`: the plan on stdout.
fn print_plan(plan: &Plan) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "suite {}: {} ({} × {} × concurrency × {}), {}, results in {}",
        plan.name,
        plural(plan.cells.len(), "cell"),
        plural(plan.stores.len(), "store"),
        plural(plan.workloads.len(), "workload"),
        plural(plan.rounds as usize, "round"),
        plural(plan.datasets.len(), "data set"),
        plan.out.display()
    )?;
    writeln!(
        out,
        "(a spawned server's address is added to its cells' command lines once it runs)"
    )?;
    for d in &plan.datasets {
        let store = &plan.stores[d.store];
        writeln!(
            out,
            "\ndata set {} of store {} ({:?}, {}): {}",
            d.id,
            store.name,
            d.mode,
            plural(d.cells.len(), "cell"),
            d.key
        )?;
        if let Some(a) = plan.load_args(d, None, &plan.load_dir(d)) {
            writeln!(out, "  load: kvlab {}", a.join(" "))?;
        }
        for &c in &d.cells {
            let cell = &plan.cells[c];
            writeln!(
                out,
                "  {}: kvlab {}",
                cell.rel.display(),
                plan.cell_args(cell, None, &plan.cell_dir(cell)).join(" ")
            )?;
        }
    }
    out.flush()
}

/// Where a cell stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    /// Not run yet.
    Pending,
    /// A complete result.
    Ok,
    /// The child failed (see `failed.json`).
    Failed,
    /// Stopped by Ctrl-C; runs again when the suite is run again.
    Interrupted,
}

#[derive(Debug, Clone, Serialize)]
struct CellState {
    status: Status,
    /// Run by this invocation (false: complete from an earlier one, or not reached).
    ran: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// How a child ended.
struct ChildEnd {
    status: Option<ExitStatus>,
    interrupted: bool,
    timed_out: bool,
    seconds: f64,
    command: Vec<String>,
    stderr_path: PathBuf,
}

impl ChildEnd {
    fn describe(&self) -> String {
        if self.timed_out {
            return "timed out (cell_timeout)".into();
        }
        match self.status {
            Some(s) => kvlab_exit(&s),
            None => "could not be started".into(),
        }
    }

    /// `failed.json` for this end.
    fn failure(&self, phase: &str, reason: String) -> serde_json::Value {
        use std::os::unix::process::ExitStatusExt;
        serde_json::json!({
            "phase": phase,
            "reason": reason,
            "exit_code": self.status.and_then(|s| s.code()),
            "signal": self.status.and_then(|s| s.signal()),
            "timed_out": self.timed_out,
            "interrupted": self.interrupted,
            "seconds": self.seconds,
            "command": crate::redact_args(self.command.iter().cloned()),
            "stderr_tail": tail(&self.stderr_path, STDERR_TAIL_LINES),
            "finished_at": kvlab_report::rfc3339(SystemTime::now()),
        })
    }
}

fn kvlab_exit(s: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(0), _) => "exited with status 0".into(),
        (Some(1), _) => "failed (exit status 1)".into(),
        (Some(2), _) => "usage error (exit status 2)".into(),
        (Some(130), _) => "interrupted (exit status 130)".into(),
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => format!("{s}"),
    }
}

/// The last `n` lines of a text file.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A complete result in `dir`: `result.json` that parses, was not interrupted, and no
/// `failed.json` beside it.
fn complete(dir: &Path) -> bool {
    if dir.join("failed.json").exists() {
        return false;
    }
    matches!(ResultDocument::load(&dir.join(kvlab_report::RESULT_FILE)), Ok(d) if !d.interrupted)
}

/// Sends `signal` to `pid`, a child not yet reaped.
fn signal(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory-safety preconditions; `pid` is our unreaped child.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// A record of one load, for `suite.json`.
#[derive(Debug, Serialize)]
struct LoadRecord {
    dataset: String,
    store: String,
    workload: String,
    mode: DataMode,
    ok: bool,
    seconds: f64,
    dir: String,
}

struct Runner<'a> {
    plan: &'a Plan,
    force: bool,
    cv_threshold: f64,
    exe: PathBuf,
    cells: Vec<CellState>,
    dataset_loads: Vec<u32>,
    loads: Vec<LoadRecord>,
    started_at: String,
    started: Instant,
    interrupted: bool,
    /// Cells run so far, and cells to run, for progress lines.
    done: usize,
    to_run: usize,
}

impl<'a> Runner<'a> {
    fn new(plan: &'a Plan, cmd: &SuiteCommand, exe: PathBuf) -> Result<Runner<'a>> {
        std::fs::create_dir_all(&plan.out)
            .with_context(|| format!("creating the results directory {}", plan.out.display()))?;
        let cells: Vec<CellState> = plan
            .cells
            .iter()
            .map(|c| CellState {
                status: if !cmd.force && complete(&plan.cell_dir(c)) {
                    Status::Ok
                } else {
                    Status::Pending
                },
                ran: false,
                seconds: None,
                note: None,
            })
            .collect();
        let to_run = cells.iter().filter(|c| c.status != Status::Ok).count();
        Ok(Runner {
            plan,
            force: cmd.force,
            cv_threshold: cmd.cv_threshold,
            exe,
            cells,
            dataset_loads: vec![0; plan.datasets.len()],
            loads: Vec::new(),
            started_at: kvlab_report::rfc3339(SystemTime::now()),
            started: Instant::now(),
            interrupted: false,
            done: 0,
            to_run,
        })
    }

    fn stopping(&mut self) -> bool {
        if INTERRUPTS.load(Ordering::SeqCst) > 0 {
            self.interrupted = true;
        }
        self.interrupted
    }

    fn run(mut self) -> Result<ExitCode> {
        let plan = self.plan;
        let before = self.cells.iter().filter(|c| c.status == Status::Ok).count();
        eprintln!(
            "kvlab suite {}: {} cells, {} complete from before, {} data sets; results in {}",
            plan.name,
            plan.cells.len(),
            before,
            plan.datasets.len(),
            plan.out.display()
        );
        self.write_state()?;
        for di in 0..plan.datasets.len() {
            if self.stopping() {
                break;
            }
            self.run_dataset(di)?;
            self.write_state()?;
        }
        self.write_state()?;
        let summary = self.write_summary()?;
        let failed = self.count(Status::Failed);
        let ok = self.count(Status::Ok);
        let ran = self.cells.iter().filter(|c| c.ran).count();
        eprintln!(
            "kvlab suite {}: {ok} of {} cells ok ({ran} run now), {failed} failed, {} pending; \
             {} load{}; {} flagged (CV > {}%); {:.1} s; summary in {}",
            plan.name,
            plan.cells.len(),
            self.count(Status::Pending) + self.count(Status::Interrupted),
            self.loads.len(),
            if self.loads.len() == 1 { "" } else { "s" },
            summary.iter().filter(|r| r.flagged).count(),
            self.cv_threshold,
            self.started.elapsed().as_secs_f64(),
            plan.out.join("summary.md").display()
        );
        Ok(if self.interrupted {
            eprintln!("kvlab suite: interrupted; run the same command again to continue");
            ExitCode::from(130)
        } else if failed > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }

    fn count(&self, s: Status) -> usize {
        self.cells.iter().filter(|c| c.status == s).count()
    }

    /// Loads (if needed) and runs the pending cells of data set `di`.
    fn run_dataset(&mut self, di: usize) -> Result<()> {
        let plan = self.plan;
        let ds = &plan.datasets[di];
        let pending: Vec<usize> = ds
            .cells
            .iter()
            .copied()
            .filter(|&c| self.cells[c].status != Status::Ok)
            .collect();
        let store = &plan.stores[ds.store];
        let data_dir = plan.data_dir(ds);
        if pending.is_empty() {
            self.cleanup(ds, data_dir.as_deref());
            return Ok(());
        }
        // The server, or the data directory.
        let mut server: Option<Server> = None;
        let mut url: Option<String> = None;
        let mut need_load = matches!(ds.mode, DataMode::Load | DataMode::Prefill);
        match &store.access {
            Access::Spawn { spec, settings, .. } => match Server::start(spec) {
                Ok(s) => {
                    eprintln!(
                        "kvlab suite: started {} {} at {} (pid {}) for data set {} [{}]",
                        s.kind(),
                        s.version(),
                        s.url(),
                        s.pid(),
                        ds.id,
                        settings
                    );
                    url = Some(s.url());
                    server = Some(s);
                }
                Err(e) => {
                    let msg = format!("starting the server of store `{}`: {e}", store.name);
                    eprintln!("kvlab suite: {msg}");
                    self.fail_cells(&pending, "spawn", &msg, None);
                    return Ok(());
                }
            },
            Access::Url(u) => url = Some(u.clone()),
            Access::Embedded { root } => {
                let dir = data_dir
                    .clone()
                    .expect("an embedded store has a data directory");
                let marker = root.join(format!("{}.json", ds.id));
                let reuse = !self.force
                    && ds.mode == DataMode::Load
                    && dir.is_dir()
                    && std::fs::read_to_string(&marker)
                        .ok()
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                        .is_some_and(|v| v["key"] == ds.key.as_str());
                if reuse {
                    eprintln!(
                        "kvlab suite: data set {} already loaded in {}",
                        ds.id,
                        dir.display()
                    );
                    need_load = false;
                } else {
                    let _ = std::fs::remove_file(&marker);
                    if dir.exists() {
                        std::fs::remove_dir_all(&dir).with_context(|| {
                            format!("removing the old data set {}", dir.display())
                        })?;
                    }
                    std::fs::create_dir_all(&dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
            }
            Access::InProcess => need_load = false,
        }
        if need_load && !self.load(di, url.as_deref(), server.as_ref(), &pending)? {
            if let Some(s) = server {
                let _ = s.stop();
            }
            return Ok(());
        }
        for &c in &pending {
            if self.stopping() {
                break;
            }
            self.run_cell(c, url.as_deref(), server.as_ref())?;
        }
        if let Some(s) = server {
            match s.stop() {
                Ok(r) => eprintln!("kvlab suite: server {}", r.describe()),
                Err(e) => eprintln!("kvlab suite: warning: stopping the server: {e}"),
            }
        }
        self.cleanup(ds, data_dir.as_deref());
        Ok(())
    }

    /// Removes a finished data set's directory unless the store keeps data.
    fn cleanup(&self, ds: &DataSet, dir: Option<&Path>) {
        let store = &self.plan.stores[ds.store];
        let Some(dir) = dir else { return };
        let all_ok = ds.cells.iter().all(|&c| self.cells[c].status == Status::Ok);
        if store.keep_data || !all_ok || !dir.exists() {
            return;
        }
        if let Access::Embedded { root } = &store.access {
            let _ = std::fs::remove_file(root.join(format!("{}.json", ds.id)));
        }
        if let Err(e) = std::fs::remove_dir_all(dir) {
            eprintln!("kvlab suite: warning: removing {}: {e}", dir.display());
        }
    }

    /// Loads data set `di`; false (and the pending cells failed) if the load failed.
    fn load(
        &mut self,
        di: usize,
        url: Option<&str>,
        server: Option<&Server>,
        pending: &[usize],
    ) -> Result<bool> {
        let plan = self.plan;
        let ds = &plan.datasets[di];
        let dir = plan.load_dir(ds);
        reset_dir(&dir)?;
        let args = plan
            .load_args(ds, url, &dir)
            .expect("a data set in load or prefill mode has a load command");
        let what = match ds.mode {
            DataMode::Prefill => "prefilling",
            _ => "loading",
        };
        eprintln!(
            "kvlab suite: {what} data set {} of store {} ({})",
            ds.id, plan.stores[ds.store].name, ds.key
        );
        let (end, _) =
            self.run_child(&args, &dir, |pid| self.start_monitor(&dir, pid, server, ds))?;
        let ok = !end.interrupted && end.status.is_some_and(|s| s.success()) && complete(&dir);
        self.loads.push(LoadRecord {
            dataset: ds.id.clone(),
            store: plan.stores[ds.store].name.clone(),
            workload: plan.workloads[plan.cells[ds.first_cell].workload]
                .name
                .clone(),
            mode: ds.mode.clone(),
            ok,
            seconds: end.seconds,
            dir: dir.display().to_string(),
        });
        self.dataset_loads[di] += 1;
        if end.interrupted {
            self.interrupted = true;
            return Ok(false);
        }
        if !ok {
            let reason = format!("the load of data set {} {}", ds.id, end.describe());
            write_json(
                &dir.join("failed.json"),
                &end.failure("load", reason.clone()),
            )?;
            eprintln!(
                "kvlab suite: {reason}; its {} cells are marked failed (see {})",
                pending.len(),
                dir.join("failed.json").display()
            );
            self.fail_cells(pending, "load", &reason, Some(&end));
            return Ok(false);
        }
        if let (Some(data), Access::Embedded { root }) =
            (plan.data_dir(ds), &plan.stores[ds.store].access)
        {
            write_json(
                &root.join(format!("{}.json", ds.id)),
                &serde_json::json!({
                    "key": ds.key,
                    "dir": data.display().to_string(),
                    "loaded_at": kvlab_report::rfc3339(SystemTime::now()),
                }),
            )?;
        }
        eprintln!("kvlab suite: loaded in {:.1} s", end.seconds);
        Ok(true)
    }

    /// Marks cells failed without running them (their data set could not be prepared).
    fn fail_cells(&mut self, cells: &[usize], phase: &str, reason: &str, end: Option<&ChildEnd>) {
        for &c in cells {
            let dir = self.plan.cell_dir(&self.plan.cells[c]);
            let _ = reset_dir(&dir);
            let doc = match end {
                Some(e) => e.failure(phase, reason.to_string()),
                None => serde_json::json!({ "phase": phase, "reason": reason }),
            };
            let _ = write_json(&dir.join("failed.json"), &doc);
            self.cells[c] = CellState {
                status: Status::Failed,
                ran: false,
                seconds: None,
                note: Some(reason.to_string()),
            };
        }
    }

    fn run_cell(&mut self, ci: usize, url: Option<&str>, server: Option<&Server>) -> Result<()> {
        let plan = self.plan;
        let cell = &plan.cells[ci];
        let ds = &plan.datasets[cell.dataset];
        let dir = plan.cell_dir(cell);
        reset_dir(&dir)?;
        let args = plan.cell_args(cell, url, &dir);
        let before = server.and_then(|s| s.sample().ok());
        let (end, monitor) =
            self.run_child(&args, &dir, |pid| self.start_monitor(&dir, pid, server, ds))?;
        if let Some(s) = server {
            let after = s.sample().ok();
            let mut doc = serde_json::json!({
                "pid": s.pid(),
                "url": kvlab_report::redact_url(&s.url()),
                "binary": s.binary().display().to_string(),
                "version": s.version(),
                "config": s.config().iter().cloned().collect::<BTreeMap<String, String>>(),
            });
            if let (Some(b), Some(a)) = (before, after) {
                doc["cpu_user_s"] = (a.user_secs - b.user_secs).into();
                doc["cpu_system_s"] = (a.system_secs - b.system_secs).into();
                doc["rss_bytes"] = a.rss_bytes.into();
            }
            write_json(&dir.join("server.json"), &doc)?;
        }
        drop(monitor);
        let ok = !end.interrupted && end.status.is_some_and(|s| s.success()) && complete(&dir);
        let status = if end.interrupted {
            self.interrupted = true;
            Status::Interrupted
        } else if ok {
            Status::Ok
        } else {
            let reason = format!("the cell {}", end.describe());
            write_json(&dir.join("failed.json"), &end.failure("run", reason))?;
            Status::Failed
        };
        self.done += 1;
        let line = match status {
            Status::Ok => ResultDocument::load(&dir.join(kvlab_report::RESULT_FILE))
                .map(|d| {
                    format!(
                        "{:.0} ops/s, p99 {}",
                        d.results.throughput_ops_per_sec,
                        d.results
                            .overall
                            .map(|o| format!("{:.0} µs", o.p99_us))
                            .unwrap_or_else(|| "-".into())
                    )
                })
                .unwrap_or_default(),
            Status::Failed => format!(
                "FAILED: {} (see {})",
                end.describe(),
                dir.join("failed.json").display()
            ),
            Status::Interrupted => "interrupted".into(),
            Status::Pending => String::new(),
        };
        eprintln!(
            "kvlab suite: [{}/{}] {}: {line} ({:.1} s)",
            self.done,
            self.to_run,
            cell.rel.display(),
            end.seconds
        );
        self.cells[ci] = CellState {
            status,
            ran: true,
            seconds: Some(end.seconds),
            note: (status == Status::Failed).then(|| end.describe()),
        };
        self.write_state()
    }

    /// The monitor of a child (`None` when the suite does not monitor).
    fn start_monitor(
        &self,
        dir: &Path,
        pid: u32,
        server: Option<&Server>,
        ds: &DataSet,
    ) -> Option<kvlab_monitor::Monitor> {
        let interval = self.plan.monitor?;
        let mut config = kvlab_monitor::MonitorConfig::new(dir);
        config.interval = interval;
        config.client_pid = Some(pid);
        config.server_pid = server.map(Server::pid);
        config.data_dir = self.plan.data_dir(ds);
        config.store_stats = server.map(|s| server_stats(s.kind(), s.addr()));
        match kvlab_monitor::Monitor::start(config) {
            Ok(m) => Some(m),
            Err(e) => {
                eprintln!("kvlab suite: warning: not monitoring: {e}");
                None
            }
        }
    }

    /// Runs `kvlab ARGS` with stdout and stderr in `dir`, forwarding Ctrl-C and
    /// enforcing the cell timeout. `watch` is called with the child's pid once it runs,
    /// and what it returns is stopped when the child has ended.
    fn run_child(
        &self,
        args: &[String],
        dir: &Path,
        watch: impl FnOnce(u32) -> Option<kvlab_monitor::Monitor>,
    ) -> Result<(ChildEnd, Option<kvlab_monitor::MonitorSummary>)> {
        use std::os::unix::process::CommandExt;
        let stdout_path = dir.join("stdout.txt");
        let stderr_path = dir.join("stderr.txt");
        let stdout = std::fs::File::create(&stdout_path)
            .with_context(|| format!("creating {}", stdout_path.display()))?;
        let stderr = std::fs::File::create(&stderr_path)
            .with_context(|| format!("creating {}", stderr_path.display()))?;
        let mut command = vec![self.exe.display().to_string()];
        command.extend(args.iter().cloned());
        let started = Instant::now();
        let seen = INTERRUPTS.load(Ordering::SeqCst);
        // Its own process group: the terminal's Ctrl-C reaches the suite only, which
        // forwards exactly one SIGINT per press.
        let spawned = Command::new(&self.exe)
            .args(args)
            // The suite monitors its cells itself (with the server and store statistics);
            // the child must not write the same monitor/ files.
            .env("KVLAB_MONITOR", "off")
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .spawn();
        let mut child: Child = match spawned {
            Ok(c) => c,
            Err(e) => {
                std::fs::write(
                    &stderr_path,
                    format!("starting {}: {e}\n", self.exe.display()),
                )?;
                return Ok((
                    ChildEnd {
                        status: None,
                        interrupted: false,
                        timed_out: false,
                        seconds: 0.0,
                        command,
                        stderr_path,
                    },
                    None,
                ));
            }
        };
        let monitor = watch(child.id());
        let mut forwarded = seen;
        let mut timed_out = false;
        let mut kill_at: Option<Instant> = None;
        let status = loop {
            if let Some(s) = child.try_wait().context("waiting for a cell")? {
                break s;
            }
            let now = INTERRUPTS.load(Ordering::SeqCst);
            while forwarded < now {
                forwarded += 1;
                signal(child.id(), libc::SIGINT);
                if forwarded - seen >= 2 {
                    kill_at.get_or_insert(Instant::now() + KILL_GRACE);
                }
            }
            if let Some(limit) = self.plan.cell_timeout {
                if !timed_out && started.elapsed() > limit {
                    timed_out = true;
                    signal(child.id(), libc::SIGINT);
                    kill_at.get_or_insert(Instant::now() + KILL_GRACE);
                }
            }
            if kill_at.is_some_and(|k| Instant::now() > k) {
                let _ = child.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let summary = monitor.and_then(|m| match m.stop() {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("kvlab suite: warning: monitor: {e}");
                None
            }
        });
        Ok((
            ChildEnd {
                status: Some(status),
                interrupted: INTERRUPTS.load(Ordering::SeqCst) > seen && !timed_out,
                timed_out,
                seconds: started.elapsed().as_secs_f64(),
                command,
                stderr_path,
            },
            summary,
        ))
    }

    /// Writes `suite.json`: the matrix, every cell's status, the data sets and loads.
    fn write_state(&self) -> Result<()> {
        let plan = self.plan;
        let state = if self.interrupted {
            "interrupted"
        } else if self.cells.iter().all(|c| c.status == Status::Ok) {
            "complete"
        } else if self.cells.iter().any(|c| c.status == Status::Pending) {
            "running"
        } else {
            "finished with failures"
        };
        let cells: Vec<serde_json::Value> = plan
            .cells
            .iter()
            .zip(&self.cells)
            .map(|(c, s)| {
                serde_json::json!({
                    "path": c.rel.display().to_string(),
                    "store": plan.stores[c.store].name,
                    "workload": plan.workloads[c.workload].name,
                    "threads": c.threads,
                    "connections": c.connections,
                    "round": c.round,
                    "dataset": plan.datasets[c.dataset].id,
                    "status": s.status,
                    "ran": s.ran,
                    "seconds": s.seconds,
                    "note": s.note,
                })
            })
            .collect();
        let datasets: Vec<serde_json::Value> = plan
            .datasets
            .iter()
            .zip(&self.dataset_loads)
            .map(|(d, &n)| {
                serde_json::json!({
                    "id": d.id,
                    "store": plan.stores[d.store].name,
                    "key": d.key,
                    "mode": d.mode,
                    "cells": d.cells.len(),
                    "loads": n,
                    "data_dir": plan.data_dir(d).map(|p| p.display().to_string()),
                })
            })
            .collect();
        let count = |s: Status| self.count(s);
        let doc = serde_json::json!({
            "suite": plan.name,
            "description": plan.description,
            "file": plan.file.display().to_string(),
            "kvlab_version": env!("CARGO_PKG_VERSION"),
            "started_at": self.started_at,
            "updated_at": kvlab_report::rfc3339(SystemTime::now()),
            "state": state,
            "matrix": {
                "stores": plan.stores.iter().map(|s| &s.name).collect::<Vec<_>>(),
                "workloads": plan.workloads.iter().map(|w| &w.name).collect::<Vec<_>>(),
                "threads": plan.threads,
                "connections": plan.connections,
                "rounds": plan.rounds,
                "cells": plan.cells.len(),
            },
            "counts": {
                "ok": count(Status::Ok),
                "failed": count(Status::Failed),
                "interrupted": count(Status::Interrupted),
                "pending": count(Status::Pending),
                "ran": self.cells.iter().filter(|c| c.ran).count(),
            },
            "load_count": self.loads.len(),
            "loads": self.loads,
            "datasets": datasets,
            "cells": cells,
        });
        write_json(&plan.out.join("suite.json"), &doc)
    }
}

/// Empties `dir` (creating it).
fn reset_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

fn write_json(path: &Path, v: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(v)?;
    text.push('\n');
    kvlab_report::write_atomic(path, text.as_bytes(), true)
        .with_context(|| format!("writing {}", path.display()))
}

/// Statistics of a suite-spawned server for `store.csv`: Redis `INFO` and `DBSIZE`, or
/// memcached `stats`, a fresh connection per sample.
pub(crate) fn server_stats(
    kind: ServerKind,
    addr: std::net::SocketAddr,
) -> kvlab_monitor::StoreStatsFn {
    match kind {
        ServerKind::Redis => Box::new(move || {
            const NAMES: &[&str] = &[
                "used_memory",
                "used_memory_rss",
                "maxmemory",
                "connected_clients",
                "total_commands_processed",
                "keyspace_hits",
                "keyspace_misses",
                "evicted_keys",
                "expired_keys",
            ];
            let mut out = Vec::new();
            if let Ok(kvlab_spawn::resp::Value::Bulk(Some(b))) =
                kvlab_spawn::resp::command(addr, &["INFO", "all"])
            {
                let text = String::from_utf8_lossy(&b);
                let info: HashMap<&str, &str> = text
                    .lines()
                    .filter_map(|l| l.trim().split_once(':'))
                    .collect();
                for n in NAMES {
                    let v = info
                        .get(n)
                        .and_then(|v| v.parse::<f64>().ok())
                        .unwrap_or(f64::NAN);
                    out.push((n.to_string(), v));
                }
            } else {
                out.extend(NAMES.iter().map(|n| (n.to_string(), f64::NAN)));
            }
            let keys = match kvlab_spawn::resp::command(addr, &["DBSIZE"]) {
                Ok(kvlab_spawn::resp::Value::Integer(n)) => n as f64,
                _ => f64::NAN,
            };
            out.push(("keys".into(), keys));
            out
        }),
        ServerKind::Memcached => Box::new(move || {
            const NAMES: &[&str] = &[
                "curr_items",
                "bytes",
                "limit_maxbytes",
                "curr_connections",
                "get_hits",
                "get_misses",
                "evictions",
                "extstore_objects_written",
                "extstore_bytes_written",
                "extstore_bytes_read",
                "get_extstore",
            ];
            let stats = memcached_stats(addr).unwrap_or_default();
            NAMES
                .iter()
                .map(|n| {
                    let v = stats
                        .get(*n)
                        .and_then(|v| v.parse::<f64>().ok())
                        .unwrap_or(f64::NAN);
                    (n.to_string(), v)
                })
                .collect()
        }),
    }
}

/// memcached's `stats` as name-value pairs.
fn memcached_stats(addr: std::net::SocketAddr) -> Option<HashMap<String, String>> {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    s.write_all(b"stats\r\n").ok()?;
    let mut out = HashMap::new();
    for line in BufReader::new(s).lines() {
        let line = line.ok()?;
        if line == "END" {
            break;
        }
        let mut w = line.split_whitespace();
        if let (Some("STAT"), Some(k), Some(v)) = (w.next(), w.next(), w.next()) {
            out.insert(k.to_string(), v.to_string());
        }
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------
// The summary.

/// Mean, minimum, maximum and coefficient of variation of a cell's rounds.
#[derive(Debug, Clone, Serialize)]
struct Spread {
    mean: f64,
    min: f64,
    max: f64,
    /// Sample standard deviation over the mean, in percent; none with fewer than two
    /// rounds.
    cv_pct: Option<f64>,
}

impl Spread {
    fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let cv_pct = (values.len() >= 2 && mean != 0.0).then(|| {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
            100.0 * var.sqrt() / mean.abs()
        });
        Some(Spread {
            mean,
            min,
            max,
            cv_pct,
        })
    }
}

/// One row of the summary: a cell over its rounds.
#[derive(Debug, Clone, Serialize)]
struct SummaryRow {
    store: String,
    workload: String,
    threads: usize,
    connections: usize,
    rounds: u32,
    rounds_ok: usize,
    rounds_failed: usize,
    throughput_ops_per_sec: Option<Spread>,
    p99_us: Option<Spread>,
    /// Per round, in round order: throughput and p99 (absent for a round without a result).
    per_round: Vec<serde_json::Value>,
    /// Means over the rounds of the monitor's means, when the suite monitored.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    monitor: BTreeMap<String, f64>,
    flagged: bool,
    flags: Vec<String>,
}

/// The monitor columns the summary shows.
const SUMMARY_MONITOR: &[(&str, &str)] = &[
    ("cpu.kvlab_cpu_pct", "mean"),
    ("cpu.server_cpu_pct", "mean"),
    ("memory.server_rss_bytes", "max"),
    ("dbsize.data_dir_bytes", "max"),
];

impl Runner<'_> {
    fn summary_rows(&self) -> Vec<SummaryRow> {
        let plan = self.plan;
        let mut groups: BTreeMap<(usize, usize, usize, usize), Vec<usize>> = BTreeMap::new();
        for (i, c) in plan.cells.iter().enumerate() {
            groups
                .entry((c.store, c.workload, c.threads, c.connections))
                .or_default()
                .push(i);
        }
        let mut rows = Vec::new();
        for ((s, w, t, c), mut idx) in groups {
            idx.sort_by_key(|&i| plan.cells[i].round);
            let mut thr = Vec::new();
            let mut p99 = Vec::new();
            let mut per_round = Vec::new();
            let mut monitor: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            let mut failed = 0;
            for &i in &idx {
                let cell = &plan.cells[i];
                let dir = plan.cell_dir(cell);
                if self.cells[i].status == Status::Failed {
                    failed += 1;
                }
                let doc = (self.cells[i].status == Status::Ok)
                    .then(|| ResultDocument::load(&dir.join(kvlab_report::RESULT_FILE)).ok())
                    .flatten();
                let Some(doc) = doc else {
                    per_round.push(
                        serde_json::json!({ "round": cell.round, "status": self.cells[i].status }),
                    );
                    continue;
                };
                thr.push(doc.results.throughput_ops_per_sec);
                let p = doc.results.overall.as_ref().map(|o| o.p99_us);
                if let Some(p) = p {
                    p99.push(p);
                }
                per_round.push(serde_json::json!({
                    "round": cell.round,
                    "status": "ok",
                    "throughput_ops_per_sec": doc.results.throughput_ops_per_sec,
                    "p99_us": p,
                }));
                let msum = std::fs::read_to_string(dir.join("monitor").join("summary.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str::<kvlab_monitor::MonitorSummary>(&t).ok());
                if let Some(m) = msum {
                    for (col, stat) in SUMMARY_MONITOR {
                        if let Some(cs) = m.columns.get(*col) {
                            let v = if *stat == "max" { cs.max } else { cs.mean };
                            monitor.entry(format!("{col}.{stat}")).or_default().push(v);
                        }
                    }
                }
            }
            let throughput = Spread::of(&thr);
            let p99s = Spread::of(&p99);
            let mut flags = Vec::new();
            for (what, sp) in [("throughput", &throughput), ("p99", &p99s)] {
                if let Some(cv) = sp.as_ref().and_then(|s| s.cv_pct) {
                    if cv > self.cv_threshold {
                        flags.push(format!("{what} CV {cv:.1}% > {}%", self.cv_threshold));
                    }
                }
            }
            if failed > 0 {
                flags.push(format!("{failed} round(s) failed"));
            }
            rows.push(SummaryRow {
                store: plan.stores[s].name.clone(),
                workload: plan.workloads[w].name.clone(),
                threads: t,
                connections: c,
                rounds: idx.len() as u32,
                rounds_ok: thr.len(),
                rounds_failed: failed,
                throughput_ops_per_sec: throughput,
                p99_us: p99s,
                per_round,
                monitor: monitor
                    .into_iter()
                    .map(|(k, v)| (k, v.iter().sum::<f64>() / v.len() as f64))
                    .collect(),
                flagged: !flags.is_empty(),
                flags,
            });
        }
        rows
    }

    /// Writes `summary.json` and `summary.md`; returns the rows.
    fn write_summary(&self) -> Result<Vec<SummaryRow>> {
        let plan = self.plan;
        let rows = self.summary_rows();
        write_json(
            &plan.out.join("summary.json"),
            &serde_json::json!({
                "suite": plan.name,
                "cv_threshold_pct": self.cv_threshold,
                "rounds": plan.rounds,
                "cells": rows,
            }),
        )?;
        let mut md = String::new();
        let _ = writeln!(md, "# Suite `{}`\n", plan.name);
        if let Some(d) = &plan.description {
            let _ = writeln!(md, "{}\n", d.trim());
        }
        let _ = writeln!(
            md,
            "{} cells × {} round{}; per cell the mean, minimum and maximum over its rounds and \
             the coefficient of variation (CV = sample standard deviation / mean). Cells whose \
             CV exceeds {}% are flagged. Throughput in operations per second, p99 over all \
             operations in microseconds.\n",
            rows.len(),
            plan.rounds,
            if plan.rounds == 1 { "" } else { "s" },
            self.cv_threshold
        );
        let show_monitor = rows.iter().any(|r| !r.monitor.is_empty());
        md.push_str("| store | workload | concurrency | rounds ok | ops/s mean | ops/s min | ops/s max | ops/s CV | p99 µs mean | p99 min | p99 max | p99 CV |");
        if show_monitor {
            md.push_str(" kvlab CPU % | server CPU % | server RSS MiB max |");
        }
        md.push_str(" flags |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        if show_monitor {
            md.push_str("---:|---:|---:|");
        }
        md.push_str("---|\n");
        let num = |v: Option<f64>, digits: usize| match v {
            Some(v) if v.is_finite() => format!("{v:.digits$}"),
            _ => "–".into(),
        };
        let cv = |s: &Option<Spread>| match s.as_ref().and_then(|s| s.cv_pct) {
            Some(c) => format!("{c:.1}%"),
            None => "–".into(),
        };
        for r in &rows {
            let t = r.throughput_ops_per_sec.as_ref();
            let p = r.p99_us.as_ref();
            let _ = write!(
                md,
                "| {} | {} | t{}-c{} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.store,
                r.workload,
                r.threads,
                r.connections,
                r.rounds_ok,
                r.rounds,
                num(t.map(|s| s.mean), 0),
                num(t.map(|s| s.min), 0),
                num(t.map(|s| s.max), 0),
                cv(&r.throughput_ops_per_sec),
                num(p.map(|s| s.mean), 1),
                num(p.map(|s| s.min), 1),
                num(p.map(|s| s.max), 1),
                cv(&r.p99_us),
            );
            if show_monitor {
                let _ = write!(
                    md,
                    " {} | {} | {} |",
                    num(r.monitor.get("cpu.kvlab_cpu_pct.mean").copied(), 0),
                    num(r.monitor.get("cpu.server_cpu_pct.mean").copied(), 0),
                    num(
                        r.monitor
                            .get("memory.server_rss_bytes.max")
                            .map(|b| b / 1048576.0),
                        1
                    ),
                );
            }
            let _ = writeln!(
                md,
                " {} |",
                if r.flagged {
                    r.flags.join("; ")
                } else {
                    String::new()
                }
            );
        }
        if !self.loads.is_empty() || plan.datasets.iter().any(|d| d.mode != DataMode::InCell) {
            let _ = writeln!(
                md,
                "\n{} data set{}; {} load{} in this invocation (see suite.json).",
                plan.datasets.len(),
                if plan.datasets.len() == 1 { "" } else { "s" },
                self.loads.len(),
                if self.loads.len() == 1 { "" } else { "s" },
            );
        }
        kvlab_report::write_atomic(&plan.out.join("summary.md"), md.as_bytes(), true)
            .context("writing summary.md")?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_line() {
        assert_eq!(
            split_words(r#" --ratio=1:10  --key-prefix="kv _" 'a b'c \ x"#).unwrap(),
            ["--ratio=1:10", "--key-prefix=kv _", "a bc", " x"]
        );
        assert_eq!(split_words("").unwrap(), Vec::<String>::new());
        assert_eq!(split_words(r#"''"#).unwrap(), [""]);
        assert!(split_words("'open").is_err());
        assert!(split_words("\"open").is_err());
    }

    #[test]
    fn host_and_port_of_a_single_server_url() {
        assert_eq!(
            host_port("redis://127.0.0.1:6379"),
            Some(("127.0.0.1".into(), "6379".into()))
        );
        assert_eq!(
            host_port("memcached://localhost:11211/"),
            Some(("localhost".into(), "11211".into()))
        );
        assert_eq!(host_port("redis://u:p@h:1"), None);
        assert_eq!(host_port("memcached://a:1,b:2"), None);
        assert_eq!(host_port("redis://h:port"), None);
    }

    #[test]
    fn spread_of_rounds() {
        let s = Spread::of(&[90.0, 100.0, 110.0]).unwrap();
        assert_eq!((s.mean, s.min, s.max), (100.0, 90.0, 110.0));
        // Sample standard deviation 10 over mean 100.
        assert!((s.cv_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(Spread::of(&[5.0]).unwrap().cv_pct, None);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn memtier_lines_may_not_set_what_the_suite_sets() {
        let f = Path::new("s.toml");
        for line in [
            "-t 4",
            "--threads=4",
            "-c8",
            "-s host",
            "--port 1",
            "--out x",
        ] {
            let err = memtier_words(f, "k", line, false).unwrap_err().to_string();
            assert!(err.contains("the suite sets"), "{line}: {err}");
        }
        assert!(memtier_words(f, "k", "--ratio=1:0 --test-time=5 -P redis", false).is_ok());
        // A prefill sets its own threads and clients.
        assert!(memtier_words(f, "k", "--requests=allkeys -t 2 -c 8", true).is_ok());
        assert!(memtier_words(f, "k", "--requests=allkeys -s h", true).is_err());
    }
}

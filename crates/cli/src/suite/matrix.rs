//! The validated plan: stores, workloads, the expanded cells and the data sets they
//! share, where each cell's results go, and each child's command line.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use kvlab_spawn::{ServerKind, ServerSpec};
use kvlab_workload::{CoreWorkload, Properties};
use serde::{Deserialize, Serialize};

use crate::args::usage;
use kvlab_lab::phase::select::{CLI_PROPERTIES, STORE_PREFIXES};

/// How cells reach a store.
#[derive(Debug, Clone)]
pub(super) enum Access {
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
    /// A server that is already running, at this URL without its credentials (those
    /// are the store's `auth`, passed to children in their environment).
    Url(String),
}

#[derive(Debug)]
pub(super) struct StorePlan {
    pub(super) name: String,
    pub(super) db: String,
    pub(super) access: Access,
    /// `-p db.NAME=VALUE` store options.
    pub(super) options: Vec<String>,
    /// Arguments every child of this store gets (`--cache-size`, … and `args`).
    pub(super) args: Vec<String>,
    pub(super) keep_data: bool,
    /// The password (`:PASSWORD` or `USER:PASSWORD`) of the store's server: from its
    /// `url`, or the `requirepass` of a server the suite spawns. Children get it in
    /// their environment ([`crate::argv::AUTH_ENV`]), never on their command line.
    pub(super) auth: Option<String>,
}

impl StorePlan {
    pub(super) fn is_network(&self) -> bool {
        matches!(self.access, Access::Spawn { .. } | Access::Url(_))
    }
}

/// What kind of workload, with what it needs.
#[derive(Debug, Clone)]
pub(super) enum WorkKind {
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
pub(super) struct WorkloadPlan {
    pub(super) name: String,
    pub(super) kind: WorkKind,
    pub(super) property_files: Vec<PathBuf>,
    pub(super) set: Vec<(String, String)>,
    pub(super) duration: Option<String>,
    pub(super) warmup: Option<String>,
    pub(super) pipeline: Option<usize>,
    /// `fresh_data = true`: every cell gets a data set of its own, loaded (or a server
    /// started) just before it, so what the cell writes reaches no other cell.
    pub(super) fresh_data: bool,
    pub(super) args: Vec<String>,
}

/// One run: a store, a workload, a concurrency and a round.
#[derive(Debug, Clone)]
pub(super) struct Cell {
    pub(super) store: usize,
    pub(super) workload: usize,
    pub(super) threads: usize,
    pub(super) connections: usize,
    pub(super) round: u32,
    /// Extra `-p` properties from `[[cell]]` overrides.
    pub(super) set: Vec<(String, String)>,
    pub(super) duration: Option<String>,
    pub(super) args: Vec<String>,
    /// `STORE/WORKLOAD/tT-cC/round-N`, relative to the results directory.
    pub(super) rel: PathBuf,
    pub(super) dataset: usize,
}

/// How a data set comes to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum DataMode {
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
pub(super) struct DataSet {
    /// Directory name: `ds-` and a hash of the key.
    pub(super) id: String,
    pub(super) store: usize,
    /// What makes two cells share it (store, load-affecting properties…).
    pub(super) key: String,
    pub(super) mode: DataMode,
    /// The cell whose settings load it.
    pub(super) first_cell: usize,
    pub(super) cells: Vec<usize>,
    /// Loaded for one cell of a `fresh_data` workload: never reused from an earlier
    /// invocation, since the cell may have written to it.
    pub(super) fresh: bool,
}

/// `rounds = "auto"`: the half-width of the median throughput's 95 % interval to reach,
/// in percent of the median, and the most rounds to run for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct AutoRounds {
    pub(super) target_pct: f64,
    pub(super) max: u32,
}

#[derive(Debug)]
pub(super) struct Plan {
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) file: PathBuf,
    pub(super) out: PathBuf,
    pub(super) rounds: u32,
    /// `rounds = "auto"`: each cell's run repeats itself until its interval is narrow
    /// enough (`rounds` is then 1).
    pub(super) auto_rounds: Option<AutoRounds>,
    pub(super) seed: Option<u64>,
    pub(super) cell_timeout: Option<Duration>,
    /// Stop after this many cells (or loads) in a row failed; 0: never.
    pub(super) max_failures_in_a_row: usize,
    pub(super) monitor: Option<Duration>,
    /// Record each measured cell's requests to `trace.kvtrace` in its directory, keeping
    /// this fraction of the keys (`record = true`, `record_sample`).
    pub(super) record: Option<f64>,
    pub(super) load_threads: usize,
    pub(super) load_connections: usize,
    pub(super) load_pipeline: usize,
    pub(super) threads: Vec<usize>,
    pub(super) connections: Vec<usize>,
    pub(super) stores: Vec<StorePlan>,
    pub(super) workloads: Vec<WorkloadPlan>,
    pub(super) cells: Vec<Cell>,
    pub(super) datasets: Vec<DataSet>,
}

/// What a memtier child needs to reach the server of `url` (credentials already split
/// off): `-s HOST -p PORT` or `-S SOCKET`, and `--select-db N`, `--tls` as the URL says;
/// `None` when memtier cannot name it (several servers).
fn memtier_address(url: &str) -> Option<Vec<String>> {
    let u = kvlab_net::ServerUrl::parse(
        url,
        &[
            "redis",
            "rediss",
            "redis+unix",
            "unix",
            "memcached",
            "memcached+unix",
        ],
        6379,
    )
    .ok()?;
    let mut a = Vec::new();
    match (&u.socket, u.hosts.as_slice()) {
        (Some(path), _) => a.extend(["-S".to_string(), path.display().to_string()]),
        (None, [(host, port)]) => a.extend([
            "-s".to_string(),
            host.clone(),
            "-p".into(),
            port.to_string(),
        ]),
        _ => return None,
    }
    if let Some(db) = u.db.filter(|&d| d > 0) {
        a.push(format!("--select-db={db}"));
    }
    if u.scheme == "rediss" {
        a.push("--tls".into());
    }
    Some(a)
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

impl Plan {
    /// The properties of a YCSB or cache cell: files, the workload's `set`, the cell's.
    pub(super) fn properties(&self, cell: &Cell) -> Result<Properties> {
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
    pub(super) fn assign_datasets(&mut self) -> Result<()> {
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
            if per_cell || w.fresh_data {
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
                    fresh: w.fresh_data,
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
    pub(super) fn data_dir(&self, ds: &DataSet) -> Option<PathBuf> {
        match &self.stores[ds.store].access {
            Access::Embedded { root } => Some(root.join(&ds.id)),
            _ => None,
        }
    }

    /// `rounds` as `summary.json` and `suite.json` give it: the number, or `"auto"`.
    pub(super) fn rounds_label(&self) -> serde_json::Value {
        match self.auto_rounds {
            Some(_) => "auto".into(),
            None => self.rounds.into(),
        }
    }

    /// The rounds in words: `3 rounds`, or `rounds until ±2 % (at most 20)`.
    pub(super) fn rounds_text(&self) -> String {
        match self.auto_rounds {
            Some(a) => format!("rounds until ±{} % (at most {})", a.target_pct, a.max),
            None if self.rounds == 1 => "1 round".into(),
            None => format!("{} rounds", self.rounds),
        }
    }

    /// The directory of a cell.
    pub(super) fn cell_dir(&self, cell: &Cell) -> PathBuf {
        self.out.join(&cell.rel)
    }

    /// The directory of a data set's load output.
    pub(super) fn load_dir(&self, ds: &DataSet) -> PathBuf {
        self.out
            .join(&self.stores[ds.store].name)
            .join("_load")
            .join(&ds.id)
    }

    /// The arguments that point a child at the store: `--db`, where it is, its options.
    pub(super) fn store_args(
        &self,
        store: &StorePlan,
        data_dir: Option<&Path>,
        url: Option<&str>,
    ) -> Vec<String> {
        let mut a = vec![
            "--db".to_string(),
            store.db.clone(),
            "--label".to_string(),
            store.name.clone(),
        ];
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
    pub(super) fn cell_args(&self, cell: &Cell, url: Option<&str>, out: &Path) -> Vec<String> {
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
                    let secs = kvlab_lab::plan::parse_duration(d)
                        .unwrap_or_default()
                        .as_secs()
                        .max(1);
                    a.push(format!("--test-time={secs}"));
                }
            }
            WorkKind::Ycsb | WorkKind::Cache => {
                a.push("run".into());
                a.extend(property_args(w, cell));
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
                if let Some(auto) = self.auto_rounds {
                    a.extend(["--rounds".into(), "auto".into()]);
                    a.extend(["--rounds-target".into(), auto.target_pct.to_string()]);
                    a.extend(["--max-rounds".into(), auto.max.to_string()]);
                }
            }
        }
        // Reports name the cell's workload as the suite does.
        a.extend(["--workload-label".into(), w.name.clone()]);
        a.extend(["--out".into(), out.display().to_string()]);
        a.extend(["--overwrite".into(), "--progress".into(), "never".into()]);
        if let Some(sample) = self.record {
            let trace = out.join("trace.kvtrace");
            a.extend(["--record".into(), trace.display().to_string()]);
            if sample < 1.0 {
                a.extend(["--record-sample".into(), sample.to_string()]);
            }
        }
        if matches!(w.kind, WorkKind::Memtier { .. }) {
            // Store options and args of a memtier cell: only `args` apply.
            a.extend(store.args.iter().cloned());
        }
        a.extend(w.args.iter().cloned());
        a.extend(cell.args.iter().cloned());
        a
    }

    /// The workload of every cell of a data set, when they all have the same one.
    pub(super) fn only_workload(&self, ds: &DataSet) -> Option<usize> {
        let first = self.cells[*ds.cells.first()?].workload;
        ds.cells
            .iter()
            .all(|&c| self.cells[c].workload == first)
            .then_some(first)
    }

    /// The names of the workloads of a data set's cells, in file order, comma-separated.
    pub(super) fn workload_names(&self, ds: &DataSet) -> String {
        let mut ws: Vec<usize> = ds.cells.iter().map(|&c| self.cells[c].workload).collect();
        ws.sort_unstable();
        ws.dedup();
        ws.iter()
            .map(|&w| self.workloads[w].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The child command line that loads a data set, if it needs one.
    pub(super) fn load_args(
        &self,
        ds: &DataSet,
        url: Option<&str>,
        out: &Path,
    ) -> Option<Vec<String>> {
        let cell = &self.cells[ds.first_cell];
        let store = &self.stores[ds.store];
        let w = &self.workloads[cell.workload];
        let mut a: Vec<String> = Vec::new();
        match (&ds.mode, &w.kind) {
            (DataMode::Load, _) => {
                a.push("load".into());
                a.extend(property_args(w, cell));
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
        // A data set of one workload's cells is that workload's load; one that several
        // workloads share keeps the name its properties give it. A memtier prefill is
        // named for what it is, so a report does not show it as one more workload.
        let label = match (&ds.mode, self.only_workload(ds)) {
            (DataMode::Prefill, _) => Some(format!("prefill for {}", self.workload_names(ds))),
            (_, Some(w)) => Some(self.workloads[w].name.clone()),
            _ => None,
        };
        if let Some(label) = label {
            a.extend(["--workload-label".into(), label]);
        }
        a.extend(["--out".into(), out.display().to_string()]);
        a.extend(["--overwrite".into(), "--progress".into(), "never".into()]);
        Some(a)
    }
}

/// A cell's workload properties as `kvlab load`/`run` arguments: `-P FILE` for each of
/// the workload's property files, then `-p NAME=VALUE` for the workload's and the cell's
/// settings.
fn property_args(w: &WorkloadPlan, cell: &Cell) -> Vec<String> {
    let mut a = Vec::new();
    for f in &w.property_files {
        a.push("-P".into());
        a.push(f.display().to_string());
    }
    for (k, v) in w.set.iter().chain(&cell.set) {
        a.push("-p".into());
        a.push(format!("{k}={v}"));
    }
    a
}

/// `-s HOST -p PORT` (and the memcached protocol when none is named) for a memtier
/// child; `PORT` stands for the port of a server not started yet.
fn memtier_target(store: &StorePlan, words: &[String], url: Option<&str>) -> Vec<String> {
    let mut a = url
        .and_then(memtier_address)
        .unwrap_or_else(|| ["-s", "127.0.0.1", "-p", "PORT"].map(String::from).to_vec());
    a.extend(["--label".to_string(), store.name.clone()]);
    if store.db == "memcached" && !names_protocol(words) {
        a.push("--protocol=memcache_text".into());
    }
    a
}

/// When a suite-spawned server starts and stops.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum SpawnPer {
    /// One server per distinct data set: loaded once, every cell of the data set runs on it.
    #[default]
    Dataset,
    /// A fresh server for every cell, loaded before it.
    Cell,
}

/// A usage error naming the suite file and the key.
pub(super) fn bad(file: &Path, key: &str, msg: impl std::fmt::Display) -> anyhow::Error {
    usage(format!("{}: {key}: {msg}", file.display()))
}

/// Words of a memtier command line naming the protocol, if any.
pub(super) fn names_protocol(words: &[String]) -> bool {
    words.iter().any(|w| {
        w == "-P"
            || w == "--protocol"
            || w.starts_with("--protocol=")
            || (w.starts_with("-P") && !w.starts_with("--"))
    })
}

/// By default the suite stops after this many cells (or loads) in a row failed
/// (`max_failures_in_a_row`): past that the cause is the store or the machine, not the
/// cell, and every further cell would fail alike.
pub(super) const MAX_CONSECUTIVE_FAILURES: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_reaches_a_url_by_host_port_socket_db_and_tls() {
        let words = |u: &str| memtier_address(u).map(|a| a.join(" "));
        assert_eq!(
            words("redis://127.0.0.1:6379").as_deref(),
            Some("-s 127.0.0.1 -p 6379")
        );
        assert_eq!(
            words("memcached://localhost:11211/").as_deref(),
            Some("-s localhost -p 11211")
        );
        assert_eq!(
            words("rediss://h:1/3").as_deref(),
            Some("-s h -p 1 --select-db=3 --tls")
        );
        assert_eq!(
            words("redis+unix:///tmp/r.sock").as_deref(),
            Some("-S /tmp/r.sock")
        );
        assert_eq!(words("memcached://a:1,b:2"), None);
        assert_eq!(words("redis://h:port"), None);
    }
}

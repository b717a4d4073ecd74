//! The suite file as written (serde, unknown keys refused) and its validation into a
//! [`Plan`]: names, store kinds and their settings, spawn settings, property files,
//! durations, memtier lines, and every child command line parsed by kvlab's own parser.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use kvlab_spawn::{ServerKind, ServerSpec};
use kvlab_workload::{CacheWorkload, CoreWorkload, Properties};
use serde::Deserialize;

use super::command::SuiteCommand;
use super::matrix::{
    bad, Access, AutoRounds, Cell, Plan, SpawnPer, StorePlan, WorkKind, WorkloadPlan,
};
use crate::args::{usage, Cli, Command as CliCommand};
use kvlab_lab::phase::select::{CLI_PROPERTIES, STORE_PREFIXES};

/// A suite file.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    rounds: Option<RawRounds>,
    #[serde(default)]
    rounds_target: Option<f64>,
    #[serde(default)]
    max_rounds: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    cell_timeout: Option<String>,
    #[serde(default)]
    max_failures_in_a_row: Option<usize>,
    #[serde(default)]
    monitor: Option<bool>,
    #[serde(default)]
    monitor_interval: Option<String>,
    #[serde(default)]
    record: Option<bool>,
    #[serde(default)]
    record_sample: Option<f64>,
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

/// `rounds`: a number, or `"auto"`.
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
enum RawRounds {
    Count(u32),
    Word(String),
}

/// `[load]`: how data sets are loaded.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct RawLoad {
    threads: Option<usize>,
    connections: Option<usize>,
    pipeline: Option<usize>,
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
    fresh_data: Option<bool>,
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
    ("", "--label"),
    ("", "--workload-label"),
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

fn parse_time(file: &Path, key: &str, s: &str) -> Result<Duration> {
    kvlab_lab::plan::parse_duration(s).map_err(|e| bad(file, key, e))
}

impl Plan {
    /// Reads and validates `cmd.file`.
    pub(super) fn load(cmd: &SuiteCommand) -> Result<Plan> {
        let file = &cmd.file;
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading the suite file {}", file.display()))
            .map_err(|e| usage(format!("{e:#}")))?;
        Plan::parse(&text, file, cmd.out.clone())
    }

    /// Parses and validates `text`, the suite file `file` (property files are relative
    /// to its directory).
    pub(super) fn parse(text: &str, file: &Path, out: Option<PathBuf>) -> Result<Plan> {
        let raw: RawSuite =
            toml::from_str(text).map_err(|e| usage(format!("{}: {e}", file.display())))?;
        let base = file.parent().map(Path::to_path_buf).unwrap_or_default();
        Plan::validate(raw, file, &base, out)
    }

    fn validate(raw: RawSuite, file: &Path, base: &Path, out: Option<PathBuf>) -> Result<Plan> {
        check_name(file, "name", &raw.name)?;
        let (rounds, auto_rounds) = rounds_of(file, &raw)?;
        let out = out.unwrap_or_else(|| PathBuf::from("results").join(&raw.name));
        let cell_timeout = raw
            .cell_timeout
            .as_deref()
            .map(|s| parse_time(file, "cell_timeout", s))
            .transpose()?;
        let (monitor, record) = monitor_and_record(file, &raw)?;
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
        counts(file, "matrix.threads", &matrix.threads)?;
        let connections = matrix.connections.clone().unwrap_or_else(|| vec![1]);
        counts(file, "matrix.connections", &connections)?;
        if connections.is_empty() {
            return Err(bad(
                file,
                "matrix.connections",
                "empty matrix: expected a list of connection counts, e.g. connections = [1, 16] \
                 (or leave it out for 1)",
            ));
        }

        let cells = expand(
            file,
            &workloads,
            &raw.workloads,
            &stores,
            (&matrix.threads, &connections),
            rounds,
            auto_rounds.is_some(),
        )?;
        let cells = apply_overrides(file, &raw.cells, cells, &stores, &workloads)?;

        let mut plan = Plan {
            name: raw.name,
            description: raw.description,
            file: file.to_path_buf(),
            out,
            rounds,
            auto_rounds,
            seed: raw.seed,
            cell_timeout,
            max_failures_in_a_row: raw
                .max_failures_in_a_row
                .unwrap_or(super::matrix::MAX_CONSECUTIVE_FAILURES),
            monitor,
            record,
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

    /// Parses every distinct child command line with kvlab's own parser (a typo in
    /// `args` or a memtier flag stops the suite before anything runs), and checks memtier
    /// protocols against the stores.
    pub(super) fn check_command_lines(&self) -> Result<()> {
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

/// The suite's `monitor` (its sampling interval, when on) and `record` (the fraction
/// of keys recorded, when on) settings.
fn monitor_and_record(file: &Path, raw: &RawSuite) -> Result<(Option<Duration>, Option<f64>)> {
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
    let record_sample = raw.record_sample.unwrap_or(1.0);
    if !(record_sample > 0.0 && record_sample <= 1.0) {
        return Err(bad(
            file,
            "record_sample",
            "expected a fraction above 0, at most 1",
        ));
    }
    if raw.record_sample.is_some() && raw.record != Some(true) {
        return Err(bad(file, "record_sample", "set `record = true` to record"));
    }
    let record = (raw.record == Some(true)).then_some(record_sample);
    Ok((monitor, record))
}

/// The suite's `rounds`: a number of cells per combination, or `"auto"` — one cell whose
/// `kvlab run --rounds auto` repeats until the median throughput's 95 % interval is within
/// `rounds_target` % (default 2) or `max_rounds` rounds (default 20) were run.
fn rounds_of(file: &Path, raw: &RawSuite) -> Result<(u32, Option<AutoRounds>)> {
    let auto = match &raw.rounds {
        None => false,
        Some(RawRounds::Count(0)) => return Err(bad(file, "rounds", "expected at least 1")),
        Some(RawRounds::Count(_)) => false,
        Some(RawRounds::Word(w)) if w == "auto" => true,
        Some(RawRounds::Word(w)) => {
            return Err(bad(
                file,
                "rounds",
                format!("`{w}`: expected a number of rounds or \"auto\""),
            ))
        }
    };
    if !auto {
        for (key, given) in [
            ("rounds_target", raw.rounds_target.is_some()),
            ("max_rounds", raw.max_rounds.is_some()),
        ] {
            if given {
                return Err(bad(file, key, "applies with `rounds = \"auto\"`"));
            }
        }
        let n = match raw.rounds {
            Some(RawRounds::Count(n)) => n,
            _ => 1,
        };
        return Ok((n, None));
    }
    let target_pct = raw.rounds_target.unwrap_or(2.0);
    if !(target_pct > 0.0 && target_pct < 100.0) {
        return Err(bad(
            file,
            "rounds_target",
            "expected a percentage above 0 and below 100",
        ));
    }
    let max = raw.max_rounds.unwrap_or(20);
    if max < 3 {
        return Err(bad(
            file,
            "max_rounds",
            "expected at least 3 (an interval needs rounds)",
        ));
    }
    if raw.record == Some(true) {
        return Err(bad(
            file,
            "record",
            "every round of an auto cell would replace its recording; record with a number \
             of rounds",
        ));
    }
    if let Some(w) = raw.workloads.iter().find(|w| w.memtier.is_some()) {
        return Err(bad(
            file,
            "rounds",
            format!(
                "\"auto\" repeats `kvlab run` cells; workload `{}` is a memtier line: give \
                 a number of rounds",
                w.name
            ),
        ));
    }
    Ok((1, Some(AutoRounds { target_pct, max })))
}

/// A count list of the matrix (`threads`, `connections`): every count at least 1.
fn counts(file: &Path, key: &str, v: &[usize]) -> Result<()> {
    if v.contains(&0) {
        return Err(bad(file, key, "counts must be at least 1"));
    }
    Ok(())
}

/// The matrix expanded: a cell for every store × workload × threads × connections ×
/// round (connections only for network stores), a workload's own `threads`,
/// `connections` and `stores` taking precedence over the matrix's.
fn expand(
    file: &Path,
    workloads: &[WorkloadPlan],
    raw_workloads: &[RawWorkload],
    stores: &[StorePlan],
    (matrix_threads, connections): (&[usize], &[usize]),
    rounds: u32,
    auto: bool,
) -> Result<Vec<Cell>> {
    let mut cells = Vec::new();
    for (wi, (w, rw)) in workloads.iter().zip(raw_workloads).enumerate() {
        let key = format!("workload[{wi}] ({})", w.name);
        let threads = rw.threads.as_deref().unwrap_or(matrix_threads);
        counts(file, &format!("{key}.threads"), threads)?;
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
        let conns = rw.connections.as_deref().unwrap_or(connections);
        counts(file, &format!("{key}.connections"), conns)?;
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
                        // With `rounds = "auto"` the cell's one run makes its rounds
                        // (round-N) in its directory itself.
                        let cell = PathBuf::from(&s.name)
                            .join(&w.name)
                            .join(format!("t{t}-c{c}"));
                        let rel = if auto {
                            cell
                        } else {
                            cell.join(format!("round-{round}"))
                        };
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
    Ok(cells)
}

/// The `[[cell]]` overrides applied to the cells they match (settings, duration,
/// arguments, `skip`); an override that matches no cell is an error, as is a matrix
/// whose every cell is skipped.
fn apply_overrides(
    file: &Path,
    raw_cells: &[RawCell],
    mut cells: Vec<Cell>,
    stores: &[StorePlan],
    workloads: &[WorkloadPlan],
) -> Result<Vec<Cell>> {
    let mut skipped = vec![false; cells.len()];
    for (oi, o) in raw_cells.iter().enumerate() {
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
    Ok(cells)
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
    let available = kvlab_lab::phase::open::available_stores();
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
    let store = kvlab_lab::StoreInfo::find(db).expect("an available store is in the table");
    // The fields that apply to some stores only, as the table says.
    use kvlab_lab::Flag;
    for (field, present, flag) in [
        ("spawn", s.spawn.is_some(), Flag::Spawn),
        ("url", s.url.is_some(), Flag::Url),
        ("spawn_per", s.spawn_per.is_some(), Flag::Spawn),
        ("path", s.path.is_some(), Flag::Path),
        ("keep_data", s.keep_data.is_some(), Flag::Path),
        ("cache_size", s.cache_size.is_some(), Flag::CacheSize),
        ("disk_path", s.disk_path.is_some(), Flag::DiskPath),
        ("disk_size", s.disk_size.is_some(), Flag::DiskSize),
    ] {
        if present && !store.takes(flag) {
            return Err(bad(
                file,
                &format!("{key}.{field}"),
                format!("`{field}` applies to {}, not to `{db}`", flag.applies_to()),
            ));
        }
    }
    let (access, auth) = store_access(file, base, out, &key, s, store)?;
    if s.spawn_per.is_some() && s.spawn.is_none() {
        return Err(bad(
            file,
            &format!("{key}.spawn_per"),
            "applies only with `spawn`",
        ));
    }
    let options = store_options(file, &key, db, s)?;
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
        auth,
    })
}

/// How the suite reaches a store: its data directory (embedded), in process, a server
/// it spawns or a URL; and the credentials a URL or the spawn settings carry.
fn store_access(
    file: &Path,
    base: &Path,
    out: &Path,
    key: &str,
    s: &RawStore,
    store: &kvlab_lab::StoreInfo,
) -> Result<(Access, Option<String>)> {
    let db = s.db.as_str();
    let mut auth = None;
    let access = if store.access == kvlab_lab::Access::Embedded {
        let root = match &s.path {
            Some(p) if p.is_relative() => base.join(p),
            Some(p) => p.clone(),
            None => out.join(&s.name).join("_data"),
        };
        Access::Embedded { root }
    } else if store.access == kvlab_lab::Access::InProcess {
        Access::InProcess
    } else {
        match (&s.spawn, &s.url) {
            (Some(_), Some(_)) => {
                return Err(bad(file, key, "give either `spawn` or `url`, not both"));
            }
            (None, None) => {
                return Err(bad(
                    file,
                    key,
                    "a network store needs `spawn = \"SETTINGS\"` (a local server the suite \
                     starts; \"\" for the defaults) or `url = \"redis://host:port\"`",
                ));
            }
            (None, Some(u)) => {
                let (public, credentials) = crate::argv::split_credentials(u);
                auth = credentials;
                Access::Url(public)
            }
            (Some(settings), None) => {
                let kind = if db == "redis" {
                    ServerKind::Redis
                } else {
                    ServerKind::Memcached
                };
                let spec = ServerSpec::parse(kind, settings)
                    .map_err(|e| bad(file, &format!("{key}.spawn"), e))?;
                auth = spec.get("requirepass").map(|p| format!(":{p}"));
                Access::Spawn {
                    kind,
                    spec,
                    settings: settings.clone(),
                    per: s.spawn_per.unwrap_or_default(),
                }
            }
        }
    };
    Ok((access, auth))
}

/// A store's `options`, each under the store's prefix (`rocksdb.`, …); another store's
/// option is refused.
fn store_options(file: &Path, key: &str, db: &str, s: &RawStore) -> Result<Vec<String>> {
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
    Ok(options)
}

/// A workload of YCSB or cache property files (with its `set` overrides), checked by
/// building it as `kvlab run` would.
fn property_workload(
    file: &Path,
    key: &str,
    w: &RawWorkload,
    property_files: &[PathBuf],
    set: &[(String, String)],
) -> Result<WorkKind> {
    if w.prefill.is_some() {
        return Err(bad(
            file,
            &format!("{key}.prefill"),
            "applies to memtier workloads; a YCSB workload's data set is loaded with `kvlab load`",
        ));
    }
    let mut props = Properties::new();
    for f in property_files {
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
    for (k, v) in set {
        props
            .set_override(&format!("{k}={v}"))
            .map_err(|e| bad(file, &format!("{key}.set.{k}"), e))?;
    }
    Ok(if props.get("workload") == Some(CacheWorkload::CLASS) {
        CacheWorkload::from_properties(&props, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(|e| bad(file, key, e))?;
        WorkKind::Cache
    } else {
        CoreWorkload::from_properties(&props, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(|e| bad(file, key, e))?;
        WorkKind::Ycsb
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
        kvlab_lab::phase::checks::parse_warmup(wu)
            .map_err(|e| bad(file, &format!("{key}.warmup"), e))?;
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
        (None, false) => property_workload(file, &key, w, &property_files, &set)?,
    };
    Ok(WorkloadPlan {
        name: w.name.clone(),
        kind,
        property_files,
        set,
        duration: w.duration.clone(),
        warmup: w.warmup.clone(),
        pipeline: w.pipeline,
        fresh_data: w.fresh_data.unwrap_or(false),
        args: w.args.clone(),
    })
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

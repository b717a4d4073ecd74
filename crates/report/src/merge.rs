//! Results of several kvlab processes merged into one, exactly (`kvlab merge`): the
//! shards of one experiment (`--shard I/N`, on one client machine or many), or any
//! processes that ran the same phase against the same store at the same time.
//!
//! Nothing is averaged. Counts (operations, returns, errors, retries, bytes) add up;
//! latency distributions are the HDR histograms of every process's `latency.hlog`
//! added together, so every percentile of the merged result is the percentile of all
//! the operations, as if one process had recorded them. The processes' clocks place
//! them on one time line: each `latency.hlog` and `timeline.csv` counts from its
//! `runner.measured_start`, and the merged result's time 0 is the earliest of them; its
//! throughput is all operations over the time from that start to the last process's
//! end. Intervals of different processes that end within half an interval of each
//! other fall in the same row of the merged timeline, so with a common start
//! (`--start-at`) each row holds one interval of every process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use hdrhistogram::Histogram;
use kvlab_measure::{is_log_tag, LatencySummary, OpSummary, RunSummary, TimelineRow};

use crate::load::{empty_histogram as empty, LoggedInterval, LATENCY_LOG_FILE};
use crate::{
    parse_rfc3339, rfc3339, LatencyLog, MergeSection, MergedFrom, Phase, ReportError, ResultDir,
    ResultDocument, Timeline,
};

/// One process's result, as `kvlab merge` reads it.
#[derive(Debug)]
pub struct MergeInput {
    /// Its directory, as given.
    pub dir: PathBuf,
    /// Its `result.json`.
    pub doc: ResultDocument,
    /// Its `latency.hlog`, interval by interval.
    pub intervals: Vec<LoggedInterval>,
    /// Its `timeline.csv`, when it has one.
    pub timeline: Option<Timeline>,
    /// When its measured part started.
    start: SystemTime,
}

impl MergeInput {
    /// Reads the result in `dir` (its `result.json`, `latency.hlog` and `timeline.csv`).
    /// A result without a latency log or a measured start cannot be merged exactly and
    /// is refused, naming what is missing.
    pub fn open(dir: &Path) -> Result<MergeInput, ReportError> {
        let r = ResultDir::open(dir)?;
        let log = r.dir.join(LATENCY_LOG_FILE);
        if !log.is_file() {
            return Err(merge_error(format!(
                "{}: no {LATENCY_LOG_FILE} beside {}: its latencies cannot be merged (run \
                 with --out)",
                dir.display(),
                r.file.display()
            )));
        }
        let intervals = LatencyLog::intervals(&log)?;
        let start = r
            .doc
            .runner
            .measured_start
            .as_deref()
            .and_then(parse_rfc3339)
            .ok_or_else(|| {
                merge_error(format!(
                    "{}: runner.measured_start is missing or not an RFC 3339 time: the \
                     result cannot be placed on the others' time line",
                    r.file.display()
                ))
            })?;
        Ok(MergeInput {
            timeline: r.timeline()?,
            dir: dir.to_path_buf(),
            doc: r.doc,
            intervals,
            start,
        })
    }
}

/// The merged result: its document, its interval log and its timeline.
#[derive(Debug)]
pub struct Merged {
    /// The merged `result.json`.
    pub doc: ResultDocument,
    /// Time 0 of the merged log and timeline: the earliest measured start.
    pub start: SystemTime,
    /// Every input's intervals on the merged time line, in time order.
    pub intervals: Vec<LoggedInterval>,
    /// The merged timeline, one row per interval.
    pub timeline: Vec<TimelineRow>,
    /// The measurements' names in report order (YCSB kinds, then commands such as
    /// `MERGE`).
    pub names: Vec<String>,
}

fn merge_error(message: String) -> ReportError {
    ReportError::Merge(message)
}

fn secs_between(from: SystemTime, to: SystemTime) -> f64 {
    match to.duration_since(from) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

fn add(into: &mut Histogram<u64>, h: &Histogram<u64>, dir: &Path) -> Result<(), ReportError> {
    into.add(h).map_err(|e| {
        merge_error(format!(
            "{}: cannot add its histogram: {e:?}",
            dir.display()
        ))
    })
}

/// What `--force` may override: why results do not look like parts of one experiment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// The field that differs, as `result.json` names it: `phase`, `kvlab_version`,
    /// `store.name`, `store.label`, `store.options.<key>`, `workload.<property>`,
    /// `workload_label`, `runner.property_files`, or `runner.measured_start` for measured
    /// windows that do not overlap.
    pub field: String,
    /// One sentence naming the results and the values.
    pub sentence: String,
}

/// Workload properties that belong to one process, not to the experiment: its thread
/// count and share of a target rate, memtier's clients.
const PER_PROCESS_PROPERTIES: [&str; 3] = ["threadcount", "target", "clients-total"];

/// Store options that name one process or what it measured, not how the store was set
/// up: a spawned server's PID, command line (its port), CPU time and memory.
fn per_process_option(key: &str) -> bool {
    key.ends_with("pid")
        || key == "spawned.command_line"
        || (key.starts_with("spawned.") && (key.ends_with("_s") || key.ends_with("_bytes")))
}

fn show(v: Option<&impl std::fmt::Display>) -> String {
    v.map_or_else(|| "(unset)".to_string(), |v| format!("`{v}`"))
}

/// Why `inputs` (shards already in order) are not the results of one experiment: every
/// field in which an input differs from the first, and measured windows that have no
/// instant in common. Empty when they belong together.
pub fn differences(inputs: &[MergeInput]) -> Vec<Difference> {
    let mut out = Vec::new();
    let Some(first) = inputs.first() else {
        return out;
    };
    let f = &first.doc;
    let a = first.dir.display();
    let mut differ = |field: String, what: &str, x: String, i: &MergeInput, y: String| {
        if out.iter().any(|d: &Difference| d.field == field) {
            return;
        }
        out.push(Difference {
            sentence: format!("{a} has {field} {x}, {} has {y}: {what}", i.dir.display()),
            field,
        });
    };
    // In load and verify phases each shard's slice of the records is its own.
    let sliced = |k: &str| {
        f.phase != Phase::Run
            && f.runner.shard.is_some()
            && ["insertstart", "insertcount"].contains(&k)
    };
    for i in &inputs[1..] {
        let d = &i.doc;
        if d.phase != f.phase {
            differ(
                "phase".into(),
                "results of different phases",
                format!("`{}`", f.phase),
                i,
                format!("`{}`", d.phase),
            );
        }
        if d.kvlab_version != f.kvlab_version {
            differ(
                "kvlab_version".into(),
                "results of different kvlab versions",
                format!("`{}`", f.kvlab_version),
                i,
                format!("`{}`", d.kvlab_version),
            );
        }
        if d.store.name != f.store.name {
            differ(
                "store.name".into(),
                "results of different stores",
                format!("`{}`", f.store.name),
                i,
                format!("`{}`", d.store.name),
            );
        }
        if d.store.label != f.store.label {
            differ(
                "store.label".into(),
                "results of different stores",
                show(f.store.label.as_ref()),
                i,
                show(d.store.label.as_ref()),
            );
        }
        let keys: BTreeMap<&String, ()> = f
            .store
            .options
            .keys()
            .chain(d.store.options.keys())
            .map(|k| (k, ()))
            .collect();
        for k in keys.into_keys().filter(|k| !per_process_option(k)) {
            let (x, y) = (f.store.options.get(k), d.store.options.get(k));
            if x != y {
                differ(
                    format!("store.options.{k}"),
                    "results of different store options",
                    show(x),
                    i,
                    show(y),
                );
            }
        }
        if d.workload_label != f.workload_label {
            differ(
                "workload_label".into(),
                "results of different workloads",
                show(f.workload_label.as_ref()),
                i,
                show(d.workload_label.as_ref()),
            );
        }
        // By file name: machines may hold the same files at other paths (the properties
        // themselves are compared below).
        let names = |files: &[String]| -> Vec<String> {
            files
                .iter()
                .map(|f| {
                    Path::new(f)
                        .file_name()
                        .map_or_else(|| f.clone(), |n| n.to_string_lossy().into_owned())
                })
                .collect()
        };
        if names(&d.runner.property_files) != names(&f.runner.property_files) {
            differ(
                "runner.property_files".into(),
                "results of different workloads",
                format!("`{}`", f.runner.property_files.join(", ")),
                i,
                format!("`{}`", d.runner.property_files.join(", ")),
            );
        }
        let keys: BTreeMap<&String, ()> = f
            .workload
            .keys()
            .chain(d.workload.keys())
            .map(|k| (k, ()))
            .collect();
        for k in keys.into_keys() {
            if PER_PROCESS_PROPERTIES.contains(&k.as_str()) || sliced(k) {
                continue;
            }
            let (x, y) = (f.workload.get(k), d.workload.get(k));
            if x != y {
                differ(
                    format!("workload.{k}"),
                    "results of different workloads",
                    show(x),
                    i,
                    show(y),
                );
            }
        }
    }
    // Every two measured windows overlap exactly when the latest start comes before the
    // earliest end.
    let window = |i: &MergeInput| {
        let end = i.start
            + std::time::Duration::from_secs_f64((i.doc.results.runtime_ms / 1000.0).max(0.0));
        (i.start, end)
    };
    let latest = inputs
        .iter()
        .max_by_key(|i| i.start)
        .expect("one input at least");
    let earliest_end = inputs
        .iter()
        .min_by_key(|i| window(i).1)
        .expect("one input at least");
    if inputs.len() > 1 && window(latest).0 >= window(earliest_end).1 {
        out.push(Difference {
            field: "runner.measured_start".into(),
            sentence: format!(
                "{} measured from {} to {}, {} from {}: their measured windows do not overlap, \
                 so they are not parts of one experiment",
                earliest_end.dir.display(),
                rfc3339(window(earliest_end).0),
                rfc3339(window(earliest_end).1),
                latest.dir.display(),
                rfc3339(latest.start),
            ),
        });
    }
    out
}

/// Merges `inputs` (at least one) into one result. `command` is the merge's own command
/// line, for the document. Inputs that ran as shards are put in shard order; they must
/// be shards of one count, each once, and their latency logs must hold exactly the
/// operations their documents count. Results that are not parts of one experiment
/// ([`differences`]: another phase, store, store option, workload or kvlab version, or a
/// measured window that does not overlap the others') are refused with the first
/// difference unless `force`; a forced merge lists them in the document's
/// [`MergeSection`].
pub fn merge(
    mut inputs: Vec<MergeInput>,
    command: Vec<String>,
    force: bool,
) -> Result<Merged, ReportError> {
    if inputs.is_empty() {
        return Err(merge_error(
            "nothing to merge: give result directories".into(),
        ));
    }
    let mut notes = Vec::new();
    let sharded = inputs
        .iter()
        .filter(|i| i.doc.runner.shard.is_some())
        .count();
    if sharded > 0 {
        if sharded < inputs.len() {
            let loose = inputs
                .iter()
                .find(|i| i.doc.runner.shard.is_none())
                .unwrap();
            return Err(merge_error(format!(
                "{} did not run as a shard, the others did: merge the shards of one experiment",
                loose.dir.display()
            )));
        }
        inputs.sort_by_key(|i| i.doc.runner.shard.map(|s| s.index));
        let count = inputs[0].doc.runner.shard.unwrap().count;
        for w in inputs.windows(2) {
            let (a, b) = (
                w[0].doc.runner.shard.unwrap(),
                w[1].doc.runner.shard.unwrap(),
            );
            if b.count != count {
                return Err(merge_error(format!(
                    "{} is shard {a}, {} shard {b}: shards of different experiments",
                    w[0].dir.display(),
                    w[1].dir.display()
                )));
            }
            if a.index == b.index {
                return Err(merge_error(format!(
                    "{} and {} are both shard {a}",
                    w[0].dir.display(),
                    w[1].dir.display()
                )));
            }
        }
        if inputs.len() < count as usize {
            let have: Vec<u32> = inputs
                .iter()
                .map(|i| i.doc.runner.shard.unwrap().index)
                .collect();
            let missing: Vec<String> = (0..count)
                .filter(|i| !have.contains(i))
                .map(|i| format!("{i}/{count}"))
                .collect();
            notes.push(format!(
                "merged {} of {count} shards; missing: {}",
                inputs.len(),
                missing.join(", ")
            ));
        }
    }
    let differences = differences(&inputs);
    if let Some(d) = differences.first() {
        if !force {
            return Err(merge_error(format!(
                "refusing to merge: {} (--force merges anyway)",
                d.sentence
            )));
        }
    }
    for d in &differences {
        notes.push(format!("forced: {}", d.sentence));
    }
    let first = &inputs[0];

    let start = inputs
        .iter()
        .map(|i| i.start)
        .min()
        .expect("one input at least");
    let offsets: Vec<f64> = inputs
        .iter()
        .map(|i| secs_between(start, i.start))
        .collect();
    let end_s = inputs
        .iter()
        .zip(&offsets)
        .map(|(i, o)| o + i.doc.results.runtime_ms / 1000.0)
        .fold(0.0, f64::max);

    // The measurements' names: YCSB's kinds in report order, then what else appears.
    let mut names: Vec<String> = Vec::new();
    for kind in kvlab_core::OpKind::ALL {
        if inputs
            .iter()
            .any(|i| i.doc.results.ops.iter().any(|o| o.name == kind.ycsb_name()))
        {
            names.push(kind.ycsb_name().to_string());
        }
    }
    for i in &inputs {
        for o in &i.doc.results.ops {
            if !names.contains(&o.name) {
                names.push(o.name.clone());
            }
        }
    }

    // Every input's histograms added up, after checking each holds what it counts.
    let mut overall = empty();
    let mut by_tag: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    let mut untagged: Vec<String> = Vec::new();
    for i in &inputs {
        let mut own: BTreeMap<Option<&str>, Histogram<u64>> = BTreeMap::new();
        for iv in &i.intervals {
            add(
                own.entry(iv.tag.as_deref()).or_insert_with(empty),
                &iv.histogram,
                &i.dir,
            )?;
        }
        let counted = |tag: &str| own.get(&Some(tag)).map_or(0, |h| h.len());
        for o in i.doc.results.ops.iter().chain(&i.doc.results.intended) {
            let tag = &o.name;
            if !is_log_tag(tag) {
                // A command named with spaces or commas has no line of its own in the log.
                if !untagged.contains(tag) {
                    untagged.push(tag.clone());
                }
                continue;
            }
            if counted(tag) != o.operations {
                return Err(merge_error(format!(
                    "{}: {LATENCY_LOG_FILE} holds {} {tag} latencies, result.json counts {} \
                     operations: the log is incomplete, so the results cannot be merged \
                     exactly",
                    i.dir.display(),
                    counted(tag),
                    o.operations
                )));
            }
        }
        for (tag, h) in &own {
            match tag {
                None => add(&mut overall, h, &i.dir)?,
                Some(t) => add(by_tag.entry(t.to_string()).or_insert_with(empty), h, &i.dir)?,
            }
        }
    }

    if !untagged.is_empty() {
        notes.push(format!(
            "{} cannot be told apart in the latency logs (a name with spaces or commas): \
             their merged latencies are empty",
            untagged.join(", ")
        ));
    }
    let summed = |name: &str, list: fn(&RunSummary) -> &Vec<OpSummary>| {
        let mut operations = 0;
        let mut retries = 0;
        let mut returns: BTreeMap<String, u64> = BTreeMap::new();
        for i in &inputs {
            if let Some(o) = list(&i.doc.results).iter().find(|o| o.name == name) {
                operations += o.operations;
                retries += o.retries;
                for (status, n) in &o.returns {
                    *returns.entry(status.clone()).or_default() += n;
                }
            }
        }
        (operations > 0).then(|| OpSummary {
            name: name.to_string(),
            operations,
            returns,
            retries,
            latency: LatencySummary::from_histogram(by_tag.get(name).unwrap_or(&empty())),
        })
    };
    let ops: Vec<OpSummary> = names.iter().filter_map(|n| summed(n, |r| &r.ops)).collect();
    let intended: Vec<OpSummary> = names
        .iter()
        .filter_map(|n| summed(&format!("Intended-{n}"), |r| &r.intended))
        .collect();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for i in &inputs {
        for (k, n) in &i.doc.results.errors {
            *errors.entry(k.clone()).or_default() += n;
        }
    }
    let operations: u64 = inputs.iter().map(|i| i.doc.results.operations).sum();
    let results = RunSummary {
        runtime_ms: end_s * 1000.0,
        operations,
        throughput_ops_per_sec: if end_s > 0.0 {
            operations as f64 / end_s
        } else {
            0.0
        },
        overall: (!overall.is_empty()).then(|| LatencySummary::from_histogram(&overall)),
        ops,
        intended,
        errors,
        bytes_read: inputs.iter().map(|i| i.doc.results.bytes_read).sum(),
        bytes_written: inputs.iter().map(|i| i.doc.results.bytes_written).sum(),
    };

    // Every interval on the merged time line.
    let mut intervals: Vec<LoggedInterval> = Vec::new();
    for (i, offset) in inputs.iter().zip(&offsets) {
        for iv in &i.intervals {
            intervals.push(LoggedInterval {
                start_s: iv.start_s + offset,
                ..iv.clone()
            });
        }
    }
    intervals.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));

    let interval_s = first.doc.runner.interval_s;
    if inputs.iter().any(|i| i.doc.runner.interval_s != interval_s) {
        notes.push(format!(
            "the results' reporting intervals differ; the merged timeline uses {}'s, {interval_s} s",
            first.dir.display()
        ));
    }
    let timeline = merged_timeline(
        &inputs, &offsets, &intervals, interval_s, &names, &mut notes,
    );

    let merge = (!differences.is_empty()).then(|| MergeSection {
        forced: true,
        differences: differences.into_iter().map(|d| d.field).collect(),
    });
    let mut doc = merged_document(&inputs, command, start, end_s, results, notes);
    doc.merge = merge;
    Ok(Merged {
        doc,
        start,
        intervals,
        timeline,
        names,
    })
}

/// The merged timeline: row k holds every input's interval that ends within half an
/// interval of `k × interval_s` on the merged time line. Counts are the inputs' rows
/// added up; latencies are those of the interval histograms that fall in the row.
fn merged_timeline(
    inputs: &[MergeInput],
    offsets: &[f64],
    intervals: &[LoggedInterval],
    interval_s: f64,
    names: &[String],
    notes: &mut Vec<String>,
) -> Vec<TimelineRow> {
    if interval_s <= 0.0 {
        return Vec::new();
    }
    let bin = |end_s: f64| ((end_s / interval_s).round().max(1.0)) as usize;
    #[derive(Default)]
    struct Row {
        end_s: f64,
        operations: u64,
        errors: u64,
        per_op: BTreeMap<String, u64>,
        intended: Option<u64>,
        overall: Option<Histogram<u64>>,
        tags: BTreeMap<String, Histogram<u64>>,
    }
    let mut rows: BTreeMap<usize, Row> = BTreeMap::new();
    let mut without = Vec::new();
    for (i, offset) in inputs.iter().zip(offsets) {
        let Some(t) = &i.timeline else {
            without.push(i.dir.display().to_string());
            continue;
        };
        for r in &t.rows {
            let end = r.time_s + offset;
            let row = rows.entry(bin(end)).or_default();
            row.end_s = row.end_s.max(end);
            row.operations += r.operations;
            row.errors += r.errors;
            for (name, n, _) in &r.per_op {
                *row.per_op.entry(name.clone()).or_default() += n;
            }
            if let Some(n) = r.intended_ops {
                *row.intended.get_or_insert(0) += n;
            }
        }
    }
    if !without.is_empty() {
        notes.push(format!(
            "no timeline.csv in {}: the merged timeline leaves their operations out",
            without.join(", ")
        ));
    }
    for iv in intervals {
        let row = rows.entry(bin(iv.start_s + iv.length_s)).or_default();
        let h = match &iv.tag {
            None => row.overall.get_or_insert_with(empty),
            Some(t) => row.tags.entry(t.clone()).or_insert_with(empty),
        };
        // Both histograms are 3-digit histograms of nanoseconds: adding cannot fail.
        let _ = h.add(&iv.histogram);
    }
    let mut out = Vec::new();
    let mut previous = 0.0;
    for row in rows.into_values() {
        if row.end_s <= 0.0 {
            continue;
        }
        let length = row.end_s - previous;
        previous = row.end_s;
        let overall = LatencySummary::from_histogram(&row.overall.unwrap_or_else(empty));
        out.push(TimelineRow {
            time_s: row.end_s,
            interval_s: length,
            operations: row.operations,
            throughput_ops_per_sec: if length > 0.0 {
                row.operations as f64 / length
            } else {
                0.0
            },
            p50_us: overall.p50_us,
            p99_us: overall.p99_us,
            p999_us: overall.p999_us,
            max_us: overall.max_us,
            errors: row.errors,
            per_op: names
                .iter()
                .filter_map(|n| {
                    let count = *row.per_op.get(n)?;
                    let p99 = row
                        .tags
                        .get(n)
                        .map_or(0.0, |h| LatencySummary::from_histogram(h).p99_us);
                    (count > 0).then(|| (n.clone(), count, p99))
                })
                .collect(),
            intended_ops: row.intended,
        });
    }
    out
}

/// The first input's machine, busy if any input's was: its load figures the highest of
/// the inputs' (the worst of the machines the processes ran on).
fn merged_host(inputs: &[MergeInput]) -> crate::HostInfo {
    let mut host = inputs[0].doc.host.clone();
    let worst = |f: fn(&crate::HostInfo) -> Option<f64>| {
        inputs
            .iter()
            .filter_map(|i| f(&i.doc.host))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    host.load_avg_start = worst(|h| h.load_avg_start);
    host.load_avg_end = worst(|h| h.load_avg_end);
    host.steal_pct = worst(|h| h.steal_pct);
    host.other_cpu_pct = worst(|h| h.other_cpu_pct);
    host.busy = inputs.iter().any(|i| i.doc.host.busy);
    host
}

/// The merged `result.json`: the first input's description of the run, with what adds
/// up added up and every input listed in `runner.merged_from`.
fn merged_document(
    inputs: &[MergeInput],
    command: Vec<String>,
    start: SystemTime,
    end_s: f64,
    results: RunSummary,
    mut notes: Vec<String>,
) -> ResultDocument {
    let first = &inputs[0].doc;
    let sum = |f: fn(&ResultDocument) -> u64| inputs.iter().map(|i| f(&i.doc)).sum::<u64>();
    let mut runner = first.runner.clone();
    runner.threads = sum(|d| d.runner.threads);
    runner.operations = inputs
        .iter()
        .map(|i| i.doc.runner.operations)
        .sum::<Option<u64>>();
    runner.failed_operations = sum(|d| d.runner.failed_operations);
    runner.keys_found = sum(|d| d.runner.keys_found);
    runner.keys_not_found = sum(|d| d.runner.keys_not_found);
    runner.integrity_checked = sum(|d| d.runner.integrity_checked);
    runner.integrity_failed = sum(|d| d.runner.integrity_failed);
    runner.unfinished_requests = sum(|d| d.runner.unfinished_requests);
    runner.error_budget_exceeded = inputs.iter().any(|i| i.doc.runner.error_budget_exceeded);
    runner.reads_missed = inputs.iter().any(|i| i.doc.runner.reads_missed);
    runner.max_schedule_lag_ms = inputs
        .iter()
        .map(|i| i.doc.runner.max_schedule_lag_ms)
        .fold(0.0, f64::max);
    runner.unreachable_s = inputs
        .iter()
        .map(|i| i.doc.runner.unreachable_s)
        .fold(0.0, f64::max);
    runner.target_rate_ops_per_sec = inputs
        .iter()
        .map(|i| i.doc.runner.target_rate_ops_per_sec)
        .sum::<Option<f64>>();
    let read = |d: &ResultDocument| {
        d.results.ops.iter().find(|o| o.name == "READ").map(|o| {
            (
                o.operations,
                o.returns.get("NOT_FOUND").copied().unwrap_or(0),
            )
        })
    };
    runner.read_miss_share = first.runner.read_miss_share.map(|_| {
        let (reads, missed) = inputs
            .iter()
            .filter_map(|i| read(&i.doc))
            .fold((0, 0), |(a, b), (r, m)| (a + r, b + m));
        if reads == 0 {
            0.0
        } else {
            missed as f64 / reads as f64
        }
    });
    runner.failure = inputs.iter().find_map(|i| i.doc.runner.failure.clone());
    runner.first_errors = inputs
        .iter()
        .flat_map(|i| i.doc.runner.first_errors.iter().cloned())
        .take(10)
        .collect();
    runner.measured_start = Some(rfc3339(start));
    runner.shard = None;
    runner.merged_from = inputs
        .iter()
        .map(|i| MergedFrom {
            dir: i.dir.display().to_string(),
            shard: i.doc.runner.shard,
            measured_start: i.doc.runner.measured_start.clone(),
            operations: i.doc.results.operations,
            throughput_ops_per_sec: i.doc.results.throughput_ops_per_sec,
            hostname: i.doc.host.hostname.clone(),
        })
        .collect();

    // The workload is the experiment's: its properties are kept, not added up — except
    // the slices of the records that load and verify shards each took, joined again.
    let mut workload = first.workload.clone();
    if first.phase != Phase::Run && inputs.iter().all(|i| i.doc.runner.shard.is_some()) {
        let number =
            |d: &ResultDocument, k: &str| d.workload.get(k).and_then(|v| v.parse::<u64>().ok());
        if let Some(start) = inputs
            .iter()
            .filter_map(|i| number(&i.doc, "insertstart"))
            .min()
        {
            workload.insert("insertstart".into(), start.to_string());
        }
        let counts: Option<u64> = inputs.iter().map(|i| number(&i.doc, "insertcount")).sum();
        if let Some(n) = counts {
            workload.insert("insertcount".into(), n.to_string());
        }
    }
    let store = inputs
        .iter()
        .max_by(|a, b| a.doc.finished_at.cmp(&b.doc.finished_at))
        .map_or_else(|| first.store.clone(), |i| i.doc.store.clone());
    notes.insert(
        0,
        format!(
            "merged from {} results ({}); their latency histograms added up, throughput over \
             the {:.3} s from the first start to the last end",
            inputs.len(),
            inputs
                .iter()
                .map(|i| match i.doc.runner.shard {
                    Some(s) => format!("{} as shard {s}", i.dir.display()),
                    None => i.dir.display().to_string(),
                })
                .collect::<Vec<_>>()
                .join(", "),
            end_s
        ),
    );
    for i in inputs {
        for n in &i.doc.notes {
            notes.push(format!("{}: {n}", i.dir.display()));
        }
    }
    ResultDocument {
        kvlab_version: env!("CARGO_PKG_VERSION").to_string(),
        command,
        phase: first.phase,
        started_at: inputs
            .iter()
            .map(|i| i.doc.started_at.clone())
            .min()
            .unwrap_or_default(),
        finished_at: inputs
            .iter()
            .map(|i| i.doc.finished_at.clone())
            .max()
            .unwrap_or_default(),
        seed: first.seed,
        interrupted: inputs.iter().any(|i| i.doc.interrupted),
        fell_behind: inputs.iter().any(|i| i.doc.fell_behind),
        workload,
        workload_label: first.workload_label.clone(),
        runner,
        store,
        host: merged_host(inputs),
        results,
        notes,
        merge: None,
    }
}

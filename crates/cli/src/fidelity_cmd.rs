//! `kvlab model fidelity TRACE --db rocksdb …`: the fitted model against the trace it
//! was fitted to, on RocksDB, as Cao et al. (FAST'20) Figure 14 compares them.
//!
//! One database holds the trace's keys ([`kvlab_model::fidelity`] maps them to
//! db_bench's key bytes in key order); each workload — the trace's replay, the model's
//! four key models, YCSB's four distributions fitted to the trace — runs on a fresh
//! copy of it with the same block cache, as `kvlab replay` of a kvtrace file in a child
//! process (its own RocksDB instance and statistics), and its RocksDB tickers, less
//! those of opening the copy, give the row.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use kvlab_dist::mixgraph::{KeyModel, KeyRangeLayout};
use kvlab_model::fidelity::{
    self, Distances, FidelityReport, Ratios, TraceSample, WorkloadFidelity, YcsbDistribution,
    YcsbFit, WORKLOADS,
};
use kvlab_model::{FitOptions, KeyRangeRule, RangeCut};
use kvlab_report::chart::{Axis, Bar, BarChart, BarSeries, LineChart, Palette, Point, Series};
use kvlab_stores::StoreOptions;

use crate::args::usage;
use crate::trace_cmd;
use kvlab_lab::phase::select;

/// `kvlab model fidelity`.
#[derive(Args, Debug)]
pub(crate) struct FidelityArgs {
    #[command(flatten)]
    pub(crate) input: trace_cmd::InputArgs,
    /// The store (RocksDB only: the figures are its statistics tickers).
    #[arg(long, value_name = "STORE", default_value = "rocksdb")]
    pub(crate) db: String,
    /// The block cache of every run (`rocksdb.block_cache_size`).
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = parse_bytes_arg)]
    pub(crate) block_cache: u64,
    /// Value size of keys and writes when the trace has no sizes.
    #[arg(long, value_name = "SIZE", default_value = "100", value_parser = parse_bytes_arg)]
    pub(crate) value_size: u64,
    /// Compare only the first N requests of the trace.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<u64>,
    /// Key ranges of the model (as `model fit --key-ranges`); `sst`: one range per SST
    /// file of the compacted base database.
    #[arg(long, value_name = "RULE", default_value = "sst")]
    pub(crate) key_ranges: KeyRangeRule,
    /// SST file size of the base database (`rocksdb.target_file_size_base`): the loaded
    /// keys are compacted into files of this size, and every run opens its copy with it.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_bytes_arg)]
    pub(crate) sst_size: u64,
    /// How keys are grouped into ranges (as `model fit --range-cut`).
    #[arg(long, value_name = "CUT", default_value = "keys")]
    pub(crate) range_cut: RangeCut,
    /// Fit the in-range power model so that it reaches every key of a range
    /// (`a = size^-b`) instead of the paper's free fit.
    #[arg(long)]
    pub(crate) cover_keys: bool,
    /// Fit and run db_bench's model alone: no `[locality]` layer (the four key-model
    /// rows then draw every key independently, as db_bench does).
    #[arg(long)]
    pub(crate) no_locality: bool,
    /// Only these workloads (comma-separated; the replay always runs).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub(crate) workloads: Vec<String>,
    /// Directory for fidelity.json, model.toml, each run's results (runs/NAME) and the
    /// workload files (work/).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Also write index.html: the paper's bar charts and the tables.
    #[arg(long)]
    pub(crate) html: bool,
    /// Keep the databases (work/base and one copy per workload) instead of removing them.
    #[arg(long)]
    pub(crate) keep_dbs: bool,
}

/// A positive size argument (`100`, `4KiB`, `8MiB`), as clap parses it.
pub(crate) fn parse_bytes_arg(s: &str) -> std::result::Result<u64, String> {
    kvlab_core::parse_bytes(s)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("expected a size such as 100, 4KiB or 8MiB; got `{s}`"))
}

/// RocksDB tickers of one run, by kvlab's name (result.json `store.stats`).
type Tickers = BTreeMap<String, u64>;

/// The workloads whose requests per second the page draws.
const QPS_CURVES: [&str; 3] = ["replay", "prefix_dist", "ycsb_uniform"];

/// The diagnostic workload: the trace's requests shuffled.
const SHUFFLED: &str = "replay_shuffled";
/// The diagnostic workload: Prefix_dist without kvlab's locality layer (db_bench's
/// independent draws), run when the model has the layer.
const INDEPENDENT: &str = "prefix_dist_independent";

/// Runs `kvlab model fidelity`.
pub(crate) fn fidelity(a: FidelityArgs) -> Result<ExitCode> {
    check_args(&a)?;
    let value_size = u32::try_from(a.value_size).map_err(|_| usage("--value-size: too large"))?;
    let out = a.out.clone();
    let work = out.join("work");
    std::fs::create_dir_all(&work)
        .with_context(|| format!("creating the output directory {}", work.display()))?;
    let started = std::time::Instant::now();
    let trace_name = a.input.trace.display().to_string();

    // The trace, its keys as ranks in key order.
    let mut reader = a.input.open(None)?;
    let sample = TraceSample::read(&mut *reader, &trace_name, a.limit, value_size)
        .map_err(|e| anyhow::anyhow!(e))?;
    drop(reader);
    if sample.accesses.is_empty() {
        return Err(usage(format!("{trace_name}: no request to compare")));
    }
    let n = sample.accesses.len() as u64;
    let key_size = sample.key_size_bytes;
    eprintln!(
        "kvlab: {trace_name}: {n} requests, {} distinct keys ({key_size}-byte keys)",
        sample.distinct_keys()
    );
    let [replay_trace, load_trace, empty_trace] = write_traces(&sample, &work, &trace_name)?;
    let loaded_bytes: u64 = sample
        .load
        .iter()
        .map(|&(_, s)| u64::from(s) + key_size as u64)
        .sum();

    let mut bench = Bench::build(
        &a,
        &sample,
        &work,
        &out,
        &load_trace,
        &empty_trace,
        loaded_bytes,
    )?;

    let (fit, model_path) = fit_model(
        &a,
        &replay_trace,
        &bench.base,
        bench.layout.take(),
        &sample,
        &out,
    )?;
    let ycsb = YcsbFit::fit(&sample, value_size);
    let (run_model, unrecorded_scans) = model_to_run(&fit.model, &sample);
    let mut report = new_report(&a, &sample, &bench, &model_path, &ycsb, loaded_bytes);
    if unrecorded_scans {
        report.notes.push(
            "the trace records no scan lengths: its seeks are replayed as scans of one \
             record, and the model's seeks scan one record too (mix_max_scan_len = 1)"
                .into(),
        );
    }
    for note in &fit.report.notes {
        report.notes.push(format!("model: {note}"));
    }

    let mut curves: Vec<(&str, Vec<u64>)> = Vec::new();
    let independent = run_model.locality.is_some().then_some(INDEPENDENT);
    for name in WORKLOADS.into_iter().chain([SHUFFLED]).chain(independent) {
        if name != "replay" && !a.workloads.is_empty() && !a.workloads.iter().any(|w| w == name) {
            continue;
        }
        let accesses = accesses_of(name, &sample, &run_model, &ycsb);
        let mut row = WorkloadFidelity {
            name: name.to_owned(),
            ..WorkloadFidelity::default()
        };
        match accesses {
            Err(e) => {
                eprintln!("kvlab: {name}: not run: {e}");
                row.error = Some(e);
            }
            Ok(accesses) => bench.measure(&mut row, name, accesses, &sample, &mut curves)?,
        }
        if name == SHUFFLED || name == INDEPENDENT {
            report.diagnostics.push(row);
        } else {
            report.workloads.push(row);
        }
    }
    let replay = report.workload("replay").cloned().unwrap_or_default();
    for w in report
        .workloads
        .iter_mut()
        .chain(report.diagnostics.iter_mut())
        .filter(|w| w.error.is_none())
    {
        w.ratios = Ratios::of(w, &replay);
    }
    if !a.keep_dbs {
        remove_dir(&bench.base)?;
    }
    std::fs::write(out.join("fidelity.json"), report.to_json() + "\n")
        .with_context(|| format!("writing {}", out.join("fidelity.json").display()))?;
    print_table(&report);
    if a.html {
        std::fs::write(out.join("index.html"), page(&report, &sample, &curves))
            .with_context(|| format!("writing {}", out.join("index.html").display()))?;
    }
    eprintln!(
        "kvlab: fidelity of {trace_name} in {} ({:.1} s)",
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// The model as the comparison runs it, and whether the trace records no scan lengths.
fn model_to_run(model: &kvlab_model::Model, sample: &TraceSample) -> (kvlab_model::Model, bool) {
    // A trace without scan lengths (RocksDB query traces do not record Next calls) is
    // replayed with scans of one record: the model's seeks scan as many (db_bench's
    // `ParetoCdfInversion(…) % 1` is 0, which the replay sends as 1), so that scans
    // weigh the same on both sides.
    let seeks = sample
        .accesses
        .iter()
        .filter(|x| x.kind == fidelity::AccessKind::Seek);
    let unrecorded_scans = seeks.clone().next().is_some() && seeks.clone().all(|x| x.scan_len == 0);
    let mut run_model = model.clone();
    if unrecorded_scans {
        run_model.mixgraph.mix_max_scan_len = Some(1);
    }
    (run_model, unrecorded_scans)
}

/// `--db` and `--workloads` as fidelity takes them (exit code 2 otherwise).
fn check_args(a: &FidelityArgs) -> Result<()> {
    if a.db != "rocksdb" {
        return Err(usage(format!(
            "model fidelity compares RocksDB's statistics: --db rocksdb, not `{}`",
            a.db
        )));
    }
    for w in &a.workloads {
        if !WORKLOADS.contains(&w.as_str()) && w != SHUFFLED {
            return Err(usage(format!(
                "--workloads: `{w}` is not one of {}",
                WORKLOADS.join(", ")
            )));
        }
    }
    Ok(())
}

/// The trace's requests (`replay.kvtrace`), the base database's load (`load.kvtrace`)
/// and an empty trace (to open a database and count what opening it costs), in `work`.
fn write_traces(sample: &TraceSample, work: &Path, trace_name: &str) -> Result<[PathBuf; 3]> {
    let replay_trace = work.join("replay.kvtrace");
    fidelity::write_kvtrace(
        &replay_trace,
        &sample.accesses,
        sample.key_size_bytes,
        trace_name,
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    let load_trace = work.join("load.kvtrace");
    let load = fidelity::load_accesses(sample);
    fidelity::write_kvtrace(&load_trace, &load, sample.key_size_bytes, trace_name)
        .map_err(|e| anyhow::anyhow!(e))?;
    let empty_trace = work.join("empty.kvtrace");
    fidelity::write_kvtrace(&empty_trace, &[], sample.key_size_bytes, trace_name)
        .map_err(|e| anyhow::anyhow!(e))?;
    Ok([replay_trace, load_trace, empty_trace])
}

/// The requests of workload `name` over the trace's keys: the trace itself, shuffled,
/// the fitted model (with and without its locality layer) or a YCSB distribution fitted
/// to the trace; as many as the trace has, over the same span.
fn accesses_of(
    name: &str,
    sample: &TraceSample,
    run_model: &kvlab_model::Model,
    ycsb: &YcsbFit,
) -> std::result::Result<Vec<fidelity::Access>, String> {
    let n = sample.accesses.len() as u64;
    let key_size = sample.key_size_bytes;
    let span = sample.span_ns();
    if name == "replay" {
        Ok(sample.accesses.clone())
    } else if name == SHUFFLED {
        Ok(fidelity::shuffled(&sample.accesses, 0x5348_5546))
    } else if name == INDEPENDENT {
        let mut alone = run_model.clone();
        alone.locality = None;
        fidelity::mixgraph_accesses(&alone, KeyModel::PrefixDist, n, key_size, span)
            .map_err(|e| e.to_string())
    } else if let Some(model) = fidelity::key_model_of(name) {
        fidelity::mixgraph_accesses(run_model, model, n, key_size, span).map_err(|e| e.to_string())
    } else if let Some(dist) = YcsbDistribution::of(name) {
        Ok(fidelity::ycsb_accesses(sample, ycsb, dist, 0x5943_5342))
    } else {
        Err(format!("unknown workload {name}"))
    }
}

/// The report before any workload ran: the trace, the database and what every
/// comparison shares.
fn new_report(
    a: &FidelityArgs,
    sample: &TraceSample,
    bench: &Bench,
    model_path: &Path,
    ycsb: &YcsbFit,
    loaded_bytes: u64,
) -> FidelityReport {
    let mut report = FidelityReport {
        trace: a.input.trace.display().to_string(),
        format: sample.info.format.clone(),
        requests: sample.accesses.len() as u64,
        distinct_keys: sample.distinct_keys(),
        key_size_bytes: sample.key_size_bytes,
        loaded_bytes,
        block_cache_bytes: a.block_cache,
        model: model_path.display().to_string(),
        ycsb: Some(ycsb.clone()),
        workloads: Vec::new(),
        diagnostics: Vec::new(),
        notes: vec![
            format!(
                "keys: the trace's {} distinct keys in key order are key numbers 0..{}, \
                 written as db_bench's GenerateKeyFromInt ({} bytes): the replay, \
                 the model and YCSB address the same keys",
                sample.distinct_keys(),
                sample.distinct_keys(),
                sample.key_size_bytes
            ),
            format!(
                "each workload ran on a fresh copy of one database (the trace's keys loaded \
                 in first-touch order, flushed once, then compacted into {} SST \
                 files of up to {} bytes), RocksDB's defaults but the block cache and the \
                 SST size; figures are the tickers of the run less those of opening the \
                 copy; bytes written also count the flush of what the memtable held at the \
                 end (the next open of the copy)",
                bench.sst_files, a.sst_size
            ),
        ],
    };
    if sample.skipped > 0 {
        report.notes.push(format!(
            "{} requests no store can replay (deleterange, other) were left out",
            sample.skipped
        ));
    }
    report
}

/// The databases of a fidelity run: the base (every key of the trace, compacted into
/// SST files), the copy each workload runs on, and how they run.
struct Bench {
    base: PathBuf,
    db: PathBuf,
    work: PathBuf,
    runs: PathBuf,
    cache: String,
    run_props: [String; 1],
    empty_trace: PathBuf,
    /// Opening a fresh copy: what every run's figures are less.
    baseline: RunResult,
    sst_files: usize,
    /// The base's SST layout, until the model's fit takes it.
    layout: Option<KeyRangeLayout>,
    keep_dbs: bool,
}

impl Bench {
    /// The base database: every key, in the order the trace first touches it, in one
    /// memtable flushed once, then opened once more and compacted into SST files of
    /// --sst-size (the layout `--key-ranges sst` cuts the model's ranges at).
    fn build(
        a: &FidelityArgs,
        sample: &TraceSample,
        work: &Path,
        out: &Path,
        load_trace: &Path,
        empty_trace: &Path,
        loaded_bytes: u64,
    ) -> Result<Bench> {
        let base = work.join("base");
        remove_dir(&base)?;
        let cache = a.block_cache.to_string();
        let buffer = (loaded_bytes * 2).clamp(64 << 20, 4 << 30).to_string();
        eprintln!(
            "kvlab: loading {} keys ({} bytes) into {}",
            sample.distinct_keys(),
            loaded_bytes,
            base.display()
        );
        spawn_replay(
            load_trace,
            &base,
            &work.join("load"),
            &cache,
            &[
                "rocksdb.wal=false".into(),
                format!("rocksdb.write_buffer_size={buffer}"),
            ],
        )?;
        let run_props = [format!("rocksdb.target_file_size_base={}", a.sst_size)];
        spawn_replay(empty_trace, &base, &work.join("settle"), &cache, &run_props)?;
        let (sst_files, base_layout) = compact_base(&base, a.sst_size)?;
        eprintln!(
            "kvlab: compacted {} into {sst_files} SST files of up to {} bytes",
            base.display(),
            a.sst_size
        );
        let db = work.join("db");
        copy_db(&base, &db)?;
        let baseline = spawn_replay(empty_trace, &db, &work.join("baseline"), &cache, &run_props)?;
        remove_dir(&db)?;
        remove_dir(&db)?;
        Ok(Bench {
            base,
            db,
            work: work.to_path_buf(),
            runs: out.join("runs"),
            cache,
            run_props,
            empty_trace: empty_trace.to_path_buf(),
            baseline,
            sst_files,
            layout: Some(base_layout),
            keep_dbs: a.keep_dbs,
        })
    }

    /// Runs one workload's requests on a fresh copy of the base and fills its row (and
    /// its QPS curve, for the workloads drawn).
    fn measure<'n>(
        &self,
        row: &mut WorkloadFidelity,
        name: &'n str,
        accesses: Vec<fidelity::Access>,
        sample: &TraceSample,
        curves: &mut Vec<(&'n str, Vec<u64>)>,
    ) -> Result<()> {
        row.requests = accesses.len() as u64;
        row.distances = Distances::between(&sample.accesses, &accesses);
        let path = self.work.join(format!("{name}.kvtrace"));
        fidelity::write_kvtrace(&path, &accesses, sample.key_size_bytes, name)
            .map_err(|e| anyhow::anyhow!(e))?;
        if QPS_CURVES.contains(&name) {
            let interval = fidelity::qps_interval_ns(&sample.accesses).unwrap_or(1);
            let qps = fidelity::qps_counts(&accesses, interval);
            if !qps.is_empty() {
                curves.push((name, qps));
            }
        }
        drop(accesses);
        copy_db(&self.base, &self.db)?;
        eprintln!("kvlab: running {name} ({} requests)", sample.accesses.len());
        let run = spawn_replay(
            &path,
            &self.db,
            &self.runs.join(name),
            &self.cache,
            &self.run_props,
        )?;
        // What the memtable still holds is written when the database next opens
        // (RocksDB flushes the recovered log): open it once more to count it.
        let close = self.work.join(format!("close-{name}"));
        let closed = spawn_replay(
            &self.empty_trace,
            &self.db,
            &close,
            &self.cache,
            &self.run_props,
        )?;
        remove_dir(&close)?;
        if !self.keep_dbs {
            remove_dir(&self.db)?;
            let _ = std::fs::remove_file(&path);
        } else {
            let kept = self.work.join(format!("db-{name}"));
            remove_dir(&kept)?;
            std::fs::rename(&self.db, &kept)
                .with_context(|| format!("keeping {}", kept.display()))?;
        }
        fill_row(row, &run, &closed, &self.baseline);
        Ok(())
    }
}

/// The model, fitted to the keys the database holds, written to OUT/model.toml.
fn fit_model(
    a: &FidelityArgs,
    replay_trace: &Path,
    base: &Path,
    base_layout: Option<KeyRangeLayout>,
    sample: &TraceSample,
    out: &Path,
) -> Result<(kvlab_model::Fit, PathBuf)> {
    let trace_name = a.input.trace.display().to_string();
    // The model, fitted to the keys the database holds.
    let mut fit_reader = kvlab_trace::open(replay_trace, &kvlab_trace::OpenOptions::default())
        .map_err(|e| anyhow::anyhow!(e))?;
    // `sst`: the base's own files; `sst:DBPATH`: that database's.
    let (key_ranges, layout) = match a.key_ranges.clone() {
        KeyRangeRule::SstFile => (KeyRangeRule::SstLayout(base.to_path_buf()), base_layout),
        KeyRangeRule::SstLayout(path) => {
            let layout = select::rocksdb_layout(&path)
                .map_err(|e| usage(format!("--key-ranges sst:{}: {e}", path.display())))?;
            (KeyRangeRule::SstLayout(path), Some(layout))
        }
        rule => (rule, None),
    };
    let options = FitOptions {
        source: trace_name.clone(),
        key_ranges,
        layout,
        range_cut: a.range_cut,
        stored_value_size_bytes: Some(
            sample.load.iter().map(|&(_, s)| f64::from(s)).sum::<f64>() / sample.load.len() as f64,
        ),
        power_covers_keys: a.cover_keys,
        locality: !a.no_locality,
        sst_file_bytes: a.sst_size,
        ..FitOptions::default()
    };
    let fit = kvlab_model::fit(&mut *fit_reader, &options).map_err(|e| anyhow::anyhow!(e))?;
    let model_path = out.join("model.toml");
    fit.model
        .write(&model_path)
        .map_err(|e| anyhow::anyhow!(e))?;
    Ok((fit, model_path))
}

/// One run's figures: its tickers less the baseline's (opening the copy); writes also
/// count what opening the database again flushed (`closed`).
fn fill_row(row: &mut WorkloadFidelity, run: &RunResult, closed: &RunResult, baseline: &RunResult) {
    let less = |r: &RunResult, name: &str| {
        r.tickers
            .get(name)
            .copied()
            .unwrap_or(0)
            .saturating_sub(baseline.tickers.get(name).copied().unwrap_or(0))
    };
    let d = |name: &str| less(run, name);
    let written = |r: &RunResult| less(r, "flush_write_bytes") + less(r, "compaction_write_bytes");
    row.reads = run.reads;
    row.block_reads = d("block_cache_data_miss");
    row.block_cache_hits = d("block_cache_hit");
    row.read_bytes = d("last_level_read_bytes") + d("non_last_level_read_bytes");
    row.write_bytes = written(run) + written(closed);
}

/// What a child replay left in its result.json.
#[derive(Debug, Default)]
struct RunResult {
    tickers: Tickers,
    reads: u64,
}

/// Replays `trace` on the database at `db` in a child `kvlab replay` (as fast as it
/// goes, one client), results in `out`.
fn spawn_replay(
    trace: &Path,
    db: &Path,
    out: &Path,
    block_cache: &str,
    extra: &[String],
) -> Result<RunResult> {
    let exe = std::env::current_exe().context("finding the kvlab executable")?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.arg("replay")
        .arg(trace)
        .args(["--speed", "max", "--db", "rocksdb", "--path"])
        .arg(db)
        .arg("--out")
        .arg(out)
        .args([
            "--overwrite",
            "--progress",
            "never",
            "--monitor",
            "off",
            "--threads",
            "1",
        ])
        .arg("-p")
        .arg(format!("rocksdb.block_cache_size={block_cache}"));
    for p in extra {
        cmd.arg("-p").arg(p);
    }
    let output = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("starting {}", exe.display()))?;
    if !output.status.success() {
        anyhow::bail!(
            "kvlab replay {} on {} failed ({}): {}",
            trace.display(),
            db.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let path = out.join("result.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut result = RunResult::default();
    if let Some(stats) = doc
        .pointer("/store/stats")
        .and_then(serde_json::Value::as_object)
    {
        for (k, v) in stats {
            if let Some(v) = v.as_u64() {
                result.tickers.insert(k.clone(), v);
            }
        }
    } else {
        anyhow::bail!("{}: no store.stats section", path.display());
    }
    result.reads = doc
        .pointer("/results/ops")
        .and_then(serde_json::Value::as_array)
        .and_then(|ops| {
            ops.iter()
                .find(|o| o.get("name").and_then(serde_json::Value::as_str) == Some("READ"))
        })
        .and_then(|o| o.get("operations"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    Ok(result)
}

/// Compacts the base database at `path` into SST files of `sst_size` bytes (a full
/// compaction, the bottommost level forced) and returns its number of files and the
/// key ranges of its layout (one per file of the last level, by first key number).
fn compact_base(path: &Path, sst_size: u64) -> Result<(usize, KeyRangeLayout)> {
    #[cfg(feature = "rocksdb")]
    {
        use kvlab_stores::rocksdb::{last_level_files, RocksDbConfig, RocksDbStore};
        let size = sst_size.to_string();
        let options = StoreOptions::from_strs(
            "rocksdb.",
            &[
                ("rocksdb.target_file_size_base", size.as_str()),
                ("rocksdb.wal", "false"),
            ],
        );
        let config = RocksDbConfig::from_options(Some(path), options)
            .map_err(|e| anyhow::anyhow!(e.message))?;
        let store = RocksDbStore::open(config)
            .with_context(|| format!("opening the base database {}", path.display()))?;
        store
            .compact_all()
            .with_context(|| format!("compacting {}", path.display()))?;
        let files = store.sst_files();
        let layout = select::layout_of(path, &files)
            .ok_or_else(|| anyhow::anyhow!("{}: no SST file after loading", path.display()))?;
        Ok((last_level_files(&files).len(), layout))
    }
    #[cfg(not(feature = "rocksdb"))]
    {
        let _ = (path, sst_size);
        anyhow::bail!("model fidelity needs kvlab built with rocksdb")
    }
}

/// Copies the files of database `from` into a new directory `to` (RocksDB's directory
/// is flat).
fn copy_db(from: &Path, to: &Path) -> Result<()> {
    remove_dir(to)?;
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry.with_context(|| format!("reading {}", from.display()))?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Removes a directory tree if it exists.
fn remove_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

/// A ratio as the table prints it.
fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}"))
}

/// A distance as the table prints it.
fn dist(d: Option<f64>) -> String {
    d.map_or_else(|| "-".into(), |d| format!("{d:.3}"))
}

/// The report's table on stdout.
fn print_table(report: &FidelityReport) {
    println!(
        "{:<23} {:>12} {:>6} {:>12} {:>6} {:>14} {:>6} {:>12} {:>6} {:>7} {:>7}",
        "workload",
        "block_reads",
        "ratio",
        "cache_hits",
        "ratio",
        "read_bytes",
        "ratio",
        "write_bytes",
        "ratio",
        "ks_keys",
        "ks_qps"
    );
    for w in report.workloads.iter().chain(&report.diagnostics) {
        if let Some(e) = &w.error {
            println!("{:<23} not run: {e}", w.name);
            continue;
        }
        println!(
            "{:<23} {:>12} {:>6} {:>12} {:>6} {:>14} {:>6} {:>12} {:>6} {:>7} {:>7}",
            w.name,
            w.block_reads,
            ratio(w.ratios.block_reads),
            w.block_cache_hits,
            ratio(w.ratios.block_cache_hits),
            w.read_bytes,
            ratio(w.ratios.read_bytes),
            w.write_bytes,
            ratio(w.ratios.write_bytes),
            dist(w.distances.access_counts_ks),
            dist(w.distances.qps_ks),
        );
    }
}

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One figure of a row.
type Figure = fn(&WorkloadFidelity) -> u64;

/// One bar chart per figure (block reads, cache hits, bytes read and written), a bar
/// per workload that ran.
fn figure_charts(ran: &[&WorkloadFidelity]) -> String {
    let figures: [(&str, Figure); 4] = [
        ("Block reads (data block cache misses)", |w| w.block_reads),
        ("Block cache hits", |w| w.block_cache_hits),
        ("Bytes read from SST files", |w| w.read_bytes),
        ("Bytes written (flush + compaction)", |w| w.write_bytes),
    ];
    let groups: Vec<String> = ran.iter().map(|w| w.name.clone()).collect();
    let mut charts = String::new();
    for (i, (title, f)) in figures.iter().enumerate() {
        let chart = BarChart {
            title: (*title).into(),
            groups: groups.clone(),
            y: Axis::linear(*title),
            series: vec![BarSeries {
                label: (*title).into(),
                color: Palette::nth(i).into(),
                values: ran
                    .iter()
                    .map(|w| {
                        Some(Bar {
                            value: f(w) as f64,
                            lo: None,
                            hi: None,
                        })
                    })
                    .collect(),
            }],
        };
        charts.push_str(&format!("<div class='fig'>{}</div>", chart.to_svg()));
    }
    charts
}

/// Ratios to the replay: one group per figure, one bar per workload.
fn ratio_chart(ran: &[&WorkloadFidelity]) -> BarChart {
    BarChart {
        title: "Ratio to the replay (1 = the trace)".into(),
        groups: vec![
            "block reads".into(),
            "cache hits".into(),
            "read bytes".into(),
            "write bytes".into(),
        ],
        y: Axis::linear("Workload / replay"),
        series: ran
            .iter()
            .filter(|w| w.name != "replay")
            .enumerate()
            .map(|(i, w)| BarSeries {
                label: w.name.clone(),
                color: Palette::nth(i).into(),
                values: [
                    w.ratios.block_reads,
                    w.ratios.block_cache_hits,
                    w.ratios.read_bytes,
                    w.ratios.write_bytes,
                ]
                .iter()
                .map(|r| {
                    r.map(|v| Bar {
                        value: v,
                        lo: None,
                        hi: None,
                    })
                })
                .collect(),
            })
            .collect(),
    }
}

/// The figures' table rows, one per workload (diagnostics included).
fn figure_rows(report: &FidelityReport) -> String {
    report
        .workloads
        .iter()
        .chain(&report.diagnostics)
        .map(|w| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                esc(&w.name),
                w.requests,
                w.block_reads,
                ratio(w.ratios.block_reads),
                w.block_cache_hits,
                ratio(w.ratios.block_cache_hits),
                w.read_bytes,
                ratio(w.ratios.read_bytes),
                w.write_bytes,
                ratio(w.ratios.write_bytes),
                dist(w.distances.access_counts_ks),
                dist(w.distances.value_sizes_ks),
                dist(w.distances.scan_lengths_ks),
                dist(w.distances.qps_ks),
            )
        })
        .collect()
}

/// The trace's QPS (and the workloads' curves) over intervals chosen from its span,
/// with a line saying the interval, mean and peak.
fn qps_section(sample: &TraceSample, curves: &[(&str, Vec<u64>)]) -> String {
    // The rate is counted in intervals chosen from the trace's span (a sub-second trace
    // in milliseconds), drawn and printed as requests per second.
    let interval_ns = fidelity::qps_interval_ns(&sample.accesses);
    let qps = interval_ns.map_or_else(Vec::new, |ns| fidelity::qps_counts(&sample.accesses, ns));
    match interval_ns.filter(|_| !qps.is_empty()) {
        None => "<p>The trace has no clock: no QPS curve.</p>".to_string(),
        Some(ns) => {
            let per_second = 1e9 / ns as f64;
            let span_ns = sample
                .accesses
                .iter()
                .filter_map(|a| a.at_ns)
                .max()
                .unwrap_or(0);
            let label = kvlab_trace::analyze::interval_label(ns);
            let max = qps.iter().copied().max().unwrap_or(0) as f64 * per_second;
            let chart = LineChart {
                title: format!(
                    "Requests per second, in {label} intervals (the replay is the trace's clock)"
                ),
                x: Axis::linear("Time (s)"),
                y: Axis::linear("Requests per second"),
                series: curves
                    .iter()
                    .enumerate()
                    .map(|(i, (name, q))| {
                        let points = q
                            .iter()
                            .enumerate()
                            .map(|(t, &v)| {
                                Point::new(t as f64 * ns as f64 / 1e9, v as f64 * per_second)
                            })
                            .collect();
                        Series::new(*name, Palette::nth(i), points)
                    })
                    .collect(),
                markers: false,
            };
            // The requests over the span, first request to last (a one-request trace: none).
            let mean = if span_ns > 0 {
                format!(
                    "{:.0}",
                    sample.accesses.len() as f64 / (span_ns as f64 / 1e9)
                )
            } else {
                "–".to_string()
            };
            format!(
                "<p>The trace's QPS over {} ({label} intervals): mean {mean}, peak {max:.0} \
                 requests/s.</p><div class='wide'>{}</div>",
                kvlab_trace::analyze::interval_label(span_ns),
                chart.to_svg()
            )
        }
    }
}

/// The HTML page: one bar chart per figure (the paper's Figure 14), the ratios to the
/// replay, the tables, the QPS curves.
fn page(report: &FidelityReport, sample: &TraceSample, curves: &[(&str, Vec<u64>)]) -> String {
    let ran: Vec<&WorkloadFidelity> = report
        .workloads
        .iter()
        .chain(&report.diagnostics)
        .filter(|w| w.error.is_none())
        .collect();
    let charts = figure_charts(&ran);
    let ratio_chart = ratio_chart(&ran);
    let rows = figure_rows(report);
    let qps_note = qps_section(sample, curves);
    let notes: String = report
        .notes
        .iter()
        .map(|n| format!("<li>{}</li>", esc(n)))
        .collect();
    let ycsb = report.ycsb.as_ref().map_or_else(String::new, |y| {
        format!(
            "<p>YCSB fitted to the trace: zipfian constant {:.3}; hotspot {:.0} % of keys \
             take {:.1} % of requests; exponential: {:.1} % of keys take {} % of requests.\
             </p>",
            y.zipfian_constant,
            y.hotspot_data_fraction * 100.0,
            y.hotspot_opn_fraction * 100.0,
            y.exponential_frac * 100.0,
            y.exponential_percentile
        )
    });
    format!(
        "<!doctype html><html><head><meta charset='utf-8'><title>kvlab model fidelity: {name}\
         </title><style>body{{font-family:sans-serif;margin:2em;max-width:1300px}}\
         td,th{{padding:2px 8px;text-align:right}}td:first-child{{text-align:left}}\
         .fig{{display:inline-block;vertical-align:top;max-width:100%}}\
         .fig svg,.wide svg{{max-width:100%;height:auto}}</style></head><body>\
         <h1>Model fidelity: {name}</h1>\
         <p>{requests} requests over {keys} distinct keys ({key_size}-byte keys, {loaded} \
         bytes loaded), block cache {cache} bytes. Model: <code>{model}</code>.</p>\
         {ycsb}<div class='wide'>{ratio}</div>{charts}\
         <h2>Figures</h2><table><tr><th>workload</th><th>requests</th><th>block reads</th>\
         <th>ratio</th><th>cache hits</th><th>ratio</th><th>read bytes</th><th>ratio</th>\
         <th>write bytes</th><th>ratio</th><th>KS access counts</th><th>KS value sizes</th>\
         <th>KS scan lengths</th><th>KS QPS</th></tr>{rows}</table>{qps_note}\
         <h2>Notes</h2><ul>{notes}</ul></body></html>\n",
        name = esc(&report.trace),
        requests = report.requests,
        keys = report.distinct_keys,
        key_size = report.key_size_bytes,
        loaded = report.loaded_bytes,
        cache = report.block_cache_bytes,
        model = esc(&report.model),
        ratio = ratio_chart.to_svg(),
    )
}

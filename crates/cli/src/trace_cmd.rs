//! `kvlab trace`: statistics, dumps, conversions and analyses of traces in every format
//! `kvlab-trace` reads.

use std::fs::File;
use std::io::BufWriter;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use kvlab_trace::analyze::{AnalyzeOptions, Analyzer, KeyRangeRule, DEFAULT_MAX_KEYS};
use kvlab_trace::export::libcachesim::LibCacheSimFormat;
use kvlab_trace::export::OutputFormat;
use kvlab_trace::parquet::Partition;
use kvlab_trace::{CsvSpec, Format, KvtraceWriter, OpenOptions, Stats, TraceReader, TraceRecord};

use crate::args::usage;

/// `kvlab trace …`
#[derive(Args, Debug)]
pub(crate) struct TraceCommand {
    #[command(subcommand)]
    pub(crate) command: TraceSub,
}

#[derive(Subcommand, Debug)]
pub(crate) enum TraceSub {
    /// Requests, distinct keys, bytes, per-op counts, first and last timestamp, key and
    /// value sizes of a trace.
    Stats(StatsArgs),
    /// Print a trace one request per line; `--format rocksdb-human` is RocksDB
    /// trace_analyzer's human-readable layout (`0x<KEY> <type> <cf> <value size> <µs>`).
    Dump(DumpArgs),
    /// Convert a trace: to kvlab's own format (kvtrace: lossless, compact, in
    /// independently compressed blocks), Parquet (one row per request), libCacheSim's
    /// oracleGeneral (next-access times computed), csv (`time,obj_id,obj_size,op`) or txt
    /// (one object id a line), or RocksDB's query-trace format (db_bench
    /// -benchmarks=replay replays it).
    Convert(ConvertArgs),
    /// Analyze a trace: composition, QPS, sizes, popularity (Zipf fit, one-hit wonders),
    /// key-space locality, reuse distance and time, working set, correlations; JSON and
    /// CSV per figure, and with --html one page of charts.
    Analyze(AnalyzeArgs),
}

/// How to read the input trace (shared by every `trace` subcommand).
#[derive(Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// The trace file (`-`: standard input); .zst, .gz, .xz and .bz2 are decompressed.
    #[arg(value_name = "TRACE")]
    pub(crate) trace: PathBuf,
    /// The input format when it cannot be told from the file: rocksdb, oracleGeneral,
    /// lcs, vscsi, csv, txt, twr, twitter, arc, lirs, cache2k, scarab, adaptsize, msr,
    /// tencent, monitor, kvtrace.
    #[arg(long = "input-format", value_name = "FORMAT")]
    pub(crate) input_format: Option<Format>,
    /// Columns of a csv trace, as libCacheSim's `-t` option spells them, e.g.
    /// "time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, delimiter=,, has-header=true".
    #[arg(long, value_name = "SPEC")]
    pub(crate) csv_spec: Option<CsvSpec>,
}

impl InputArgs {
    /// Opens the trace, naming it in the error (a `.parquet` file is a Parquet export).
    /// A trace that cannot be opened, or whose format cannot be told, is a usage error
    /// (exit code 2), as a property file that cannot be read: nothing has run yet.
    pub(crate) fn open(&self, format: Option<Format>) -> Result<Box<dyn TraceReader>> {
        if self.trace.extension().is_some_and(|e| e == "parquet") {
            let reader = kvlab_trace::parquet::open_parquet(&self.trace)
                .map_err(|e| crate::usage(e.to_string()))?;
            return Ok(Box::new(reader));
        }
        kvlab_trace::open(&self.trace, &self.options(format))
            .map_err(|e| crate::usage(e.to_string()))
    }

    /// How to open the trace: `format` (a subcommand's own `--format`), else
    /// `--input-format`, the csv column spec, and a kvtrace's default decoder threads.
    pub(crate) fn options(&self, format: Option<Format>) -> OpenOptions {
        OpenOptions {
            format: format.or(self.input_format),
            csv: self.csv_spec.clone(),
            decode_threads: None,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// The input format (same as --input-format).
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Option<Format>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct DumpArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// The output layout: rocksdb-human (the only one).
    #[arg(long, value_name = "LAYOUT", default_value = "rocksdb-human")]
    pub(crate) format: DumpFormat,
}

/// `trace dump`'s output layouts.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum DumpFormat {
    /// RocksDB trace_analyzer `-convert_to_human_readable_trace`'s lines.
    RocksdbHuman,
}

#[derive(Args, Debug)]
pub(crate) struct ConvertArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// Where to write.
    #[arg(value_name = "OUTPUT")]
    pub(crate) output: PathBuf,
    /// The input format (same as --input-format).
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Option<Format>,
    /// What to write: kvtrace, parquet, oracleGeneral, csv, txt or rocksdb. Default: told
    /// from OUTPUT's name (`.kvtrace`, `.parquet`, `.oracleGeneral.bin`). Object ids are
    /// the ids `kvlab sim` uses (a byte key's 64-bit FNV-1a), so libCacheSim's miss ratio
    /// on the file is `kvlab sim`'s.
    #[arg(long, value_name = "FORMAT")]
    pub(crate) output_format: Option<OutputFormat>,
    /// Write a Hive-partitioned Parquet dataset into the directory OUTPUT, which Spark,
    /// DuckDB, Trino and Polars read as one table: `hour` (`OUTPUT/dt=2026-11-28T14/
    /// part-0.parquet`, by the requests' wall-clock hour, UTC) or a request count N
    /// (`OUTPUT/chunk=0/part-0.parquet` holds the first N requests).
    #[arg(long, value_name = "hour|N")]
    pub(crate) partition_by: Option<PartitionBy>,
    /// Replace OUTPUT if it exists.
    #[arg(long)]
    pub(crate) overwrite: bool,
}

/// `--partition-by`: the hour or a number of requests (the output is Parquet).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PartitionBy(Partition);

impl std::str::FromStr for PartitionBy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "hour" {
            return Ok(PartitionBy(Partition::Hour));
        }
        match s.parse::<u64>() {
            Ok(n) if n > 0 => Ok(PartitionBy(Partition::Requests(n))),
            _ => Err(format!(
                "`{s}`: expected `hour` or a number of requests per partition (at least 1)"
            )),
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct AnalyzeArgs {
    #[command(flatten)]
    pub(crate) input: InputArgs,
    /// The input format (same as --input-format).
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Option<Format>,
    /// Directory for summary.json, the CSV files and index.html.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: PathBuf,
    /// Also write index.html: one self-contained page with every chart.
    #[arg(long)]
    pub(crate) html: bool,
    /// Keys listed as the most requested.
    #[arg(long, value_name = "N", default_value = "10")]
    pub(crate) top: usize,
    /// Width of a working-set window in seconds.
    #[arg(long, value_name = "S", default_value = "60")]
    pub(crate) window: u64,
    /// Key ranges whose boundaries the heatmap and the key × time series show (and
    /// keyranges.csv lists): `ranges:N` (or N) ranges of equal distinct-key counts,
    /// `keys:N` keys per range, `none` (or 0) for none.
    #[arg(long, value_name = "RULE", default_value = "ranges:30")]
    pub(crate) key_ranges: KeyRangeRule,
    /// Most distinct keys followed one by one (120–170 bytes of memory each): past this,
    /// keys are sampled by a hash of the key (SHARDS-style, the rate halving as needed)
    /// and the per-key figures are estimates, as summary.json's `sampling` and
    /// index.html say.
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_MAX_KEYS as u64,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub(crate) max_keys: u64,
    /// Follow every key exactly, whatever the memory: no sampling.
    #[arg(long, conflicts_with = "max_keys")]
    pub(crate) exact: bool,
}

/// Runs `kvlab trace …`.
pub(crate) fn trace(cmd: TraceCommand) -> Result<ExitCode> {
    match cmd.command {
        TraceSub::Stats(a) => {
            let mut reader = a.input.open(a.format)?;
            let stats = Stats::collect(&mut *reader).map_err(|e| anyhow::anyhow!(e))?;
            let mut out = std::io::stdout().lock();
            if a.json {
                writeln!(out, "{}", stats.to_json())?;
            } else {
                write!(out, "{}", stats_table(&stats))?;
            }
            if let Some(at) = stats.damaged_at {
                eprintln!(
                    "kvlab: warning: {} is damaged at byte {at}: the figures cover the {} \
                     requests before it",
                    a.input.trace.display(),
                    stats.requests
                );
            } else if let Some(damage) = &stats.damage {
                // A bad text line: the reader's message names the file and the line.
                eprintln!(
                    "kvlab: warning: {damage}: the figures cover the {} requests before it",
                    stats.requests
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        TraceSub::Dump(a) => {
            let mut reader = a.input.open(None)?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match a.format {
                DumpFormat::RocksdbHuman => {
                    kvlab_trace::dump::rocksdb_human(&mut *reader, &mut out)
                        .map_err(|e| anyhow::anyhow!(e))?;
                }
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        TraceSub::Convert(a) => convert(a),
        TraceSub::Analyze(a) => analyze(a),
    }
}

fn convert(a: ConvertArgs) -> Result<ExitCode> {
    let Some(format) = a
        .output_format
        .or_else(|| OutputFormat::from_path(&a.output))
        .or(a.partition_by.map(|_| OutputFormat::Parquet))
    else {
        return Err(usage(format!(
            "{}: give --output-format (kvtrace, parquet, oracleGeneral, csv, txt or \
             rocksdb); only .kvtrace, .parquet and .oracleGeneral.bin tell it",
            a.output.display()
        )));
    };
    if let Some(PartitionBy(partition)) = a.partition_by {
        if format != OutputFormat::Parquet {
            return Err(usage(format!(
                "--partition-by writes a Parquet dataset, not {}: give --output-format \
                 parquet, or leave out --partition-by",
                format.name()
            )));
        }
        return convert_to_dataset(&a, partition);
    }
    if a.output.exists() && !a.overwrite {
        return Err(usage(format!(
            "{} exists (--overwrite replaces it)",
            a.output.display()
        )));
    }
    let mut reader = a.input.open(a.format)?;
    // Written beside the target and renamed at the end, so a failed conversion leaves
    // no half trace under the final name.
    let tmp = partial(&a.output);
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let out = BufWriter::new(file);
    let mut notes = Vec::new();
    let result = match format {
        OutputFormat::Parquet => kvlab_trace::parquet::write_parquet(&mut *reader, out, &a.output),
        OutputFormat::Kvtrace => {
            KvtraceWriter::new(out, &a.output, reader.info()).and_then(|mut w| {
                let n = kvlab_trace::convert(&mut *reader, &mut w)?;
                w.finish().map(|_| n)
            })
        }
        OutputFormat::OracleGeneral | OutputFormat::Csv | OutputFormat::Txt => {
            let kind = match format {
                OutputFormat::OracleGeneral => LibCacheSimFormat::OracleGeneral,
                OutputFormat::Csv => LibCacheSimFormat::Csv,
                _ => LibCacheSimFormat::Txt,
            };
            kvlab_trace::export::libcachesim::write(&mut *reader, kind, out, &a.output).map(|s| {
                if s.skipped_zero_size > 0 {
                    notes.push(format!(
                        "{} requests of size 0 left out (libCacheSim and kvlab sim skip them)",
                        s.skipped_zero_size
                    ));
                }
                if s.sized_from_neighbours > 0 {
                    notes.push(format!(
                        "{} reads without a value sized as their key's other requests (as \
                         kvlab sim sizes them)",
                        s.sized_from_neighbours
                    ));
                }
                s.requests
            })
        }
        OutputFormat::Rocksdb => kvlab_trace::export::rocksdb::write(&mut *reader, out, &a.output)
            .map(|s| {
                notes.push(format!(
                    "{} Get, {} MultiGet keys, {} Put/Merge, {} Delete, {} Seek",
                    s.gets, s.multiget_keys, s.puts, s.deletes, s.seeks
                ));
                s.requests
            }),
    }
    .map_err(|e| anyhow::anyhow!(e));
    let n = match result {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, &a.output)
        .with_context(|| format!("renaming {} to {}", tmp.display(), a.output.display()))?;
    eprintln!(
        "kvlab: wrote {n} requests from {} ({}) to {} ({format})",
        a.input.trace.display(),
        reader.info().format,
        a.output.display()
    );
    for note in notes {
        eprintln!("kvlab: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `trace convert --partition-by`: a Parquet dataset, written into `OUTPUT.partial`
/// and renamed into place at the end, so that a failed conversion leaves no half
/// dataset under the final name.
fn convert_to_dataset(a: &ConvertArgs, partition: Partition) -> Result<ExitCode> {
    let out = &a.output;
    if out.exists() {
        if !a.overwrite {
            return Err(usage(format!(
                "{} exists (--overwrite replaces it)",
                out.display()
            )));
        }
        if !is_dataset(out) {
            return Err(usage(format!(
                "{} is not a Parquet dataset kvlab wrote: --overwrite replaces only one \
                 (give a new directory)",
                out.display()
            )));
        }
    }
    let mut reader = a.input.open(a.format)?;
    if partition == Partition::Hour && reader.info().time_unit.nanos().is_none() {
        return Err(usage(format!(
            "--partition-by hour: {} ({}) has no clock; give a number of requests per \
             partition instead",
            a.input.trace.display(),
            reader.info().format
        )));
    }
    let tmp = partial(out);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let summary = match kvlab_trace::parquet::write_dataset(&mut *reader, &tmp, partition) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(anyhow::anyhow!(e));
        }
    };
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("replacing {}", out.display()))?;
    }
    std::fs::rename(&tmp, out)
        .with_context(|| format!("renaming {} to {}", tmp.display(), out.display()))?;
    eprintln!(
        "kvlab: wrote {} requests from {} ({}) to {} (parquet: {} partitions, {} files)",
        summary.rows,
        a.input.trace.display(),
        reader.info().format,
        out.display(),
        summary.partitions,
        summary.files
    );
    Ok(ExitCode::SUCCESS)
}

/// Where a conversion writes before it renames its output into place: `OUTPUT.partial`.
fn partial(output: &Path) -> PathBuf {
    let mut tmp = output.as_os_str().to_owned();
    tmp.push(".partial");
    PathBuf::from(tmp)
}

/// A directory holding only `KEY=VALUE/` partitions of `.parquet` files.
fn is_dataset(dir: &Path) -> bool {
    let Ok(parts) = std::fs::read_dir(dir) else {
        return false;
    };
    parts.flatten().all(|part| {
        part.file_name().to_string_lossy().contains('=')
            && std::fs::read_dir(part.path()).is_ok_and(|files| {
                files
                    .flatten()
                    .all(|f| f.path().extension().is_some_and(|e| e == "parquet"))
            })
    })
}

fn analyze(a: AnalyzeArgs) -> Result<ExitCode> {
    let mut reader = a.input.open(a.format)?;
    let options = AnalyzeOptions {
        top_keys: a.top.max(1),
        window_s: a.window.max(1),
        key_ranges: a.key_ranges,
        max_keys: (!a.exact).then(|| usize::try_from(a.max_keys).unwrap_or(usize::MAX)),
        ..AnalyzeOptions::default()
    };
    let mut analyzer = Analyzer::new(reader.info(), &options);
    let mut rec = TraceRecord::default();
    while reader.read(&mut rec).map_err(|e| anyhow::anyhow!(e))? {
        analyzer.observe(&rec);
    }
    let analysis = analyzer.finish();
    analysis
        .write(&a.out, a.html)
        .map_err(|e| anyhow::anyhow!(e))?;
    if let Some(s) = &analysis.summary.sampling {
        eprintln!(
            "kvlab: more than {} distinct keys (--max-keys): the per-key figures are \
             estimated from {} keys sampled at rate 1/{} (about {} objects; top-key counts \
             at most {} requests low); summary.json's \"sampling\" lists them, --exact \
             follows every key",
            s.max_keys, s.sampled_keys, s.weight, analysis.summary.objects, s.top_error_requests
        );
    }
    eprintln!(
        "kvlab: analysis of {} in {}{}",
        a.input.trace.display(),
        a.out.display(),
        if a.html { " (index.html)" } else { "" }
    );
    Ok(ExitCode::SUCCESS)
}

/// `trace stats` as a table.
fn stats_table(s: &Stats) -> String {
    let mut t = String::new();
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    t.push_str(&format!("format          {}\n", s.format));
    t.push_str(&format!("requests        {}\n", s.requests));
    t.push_str(&format!("distinct keys   {}\n", s.distinct_keys));
    t.push_str(&format!("bytes           {}\n", opt(s.bytes)));
    t.push_str(&format!(
        "first ts        {}\nlast ts         {}\n",
        opt(s.first_ts),
        opt(s.last_ts)
    ));
    t.push_str("ops\n");
    for (op, n) in &s.ops {
        t.push_str(&format!("  {op:<14}{n}\n"));
    }
    t
}

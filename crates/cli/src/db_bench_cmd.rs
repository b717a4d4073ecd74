//! `kvlab db_bench --benchmarks=mixgraph …`: db_bench's own command line for its
//! mixgraph benchmark, run by kvlab (on RocksDB by default), with db_bench's summary line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser};
use kvlab_dist::mixgraph::MixGraphConfig;
use kvlab_report::Phase;
use kvlab_workload::MixGraphWorkload;

use crate::args::{usage, PhaseArgs, ProgressArg};
use kvlab_lab::phase::open::open_store;
use kvlab_lab::phase::select::select_phase;
use kvlab_lab::phase::ReportStyle;

/// `kvlab db_bench`.
#[derive(Args, Debug)]
pub(crate) struct DbBenchCommand {
    /// The store to run on instead of RocksDB (any `--db` of `kvlab run`).
    #[arg(long = "kvlab-db", value_name = "STORE", default_value = "rocksdb")]
    pub(crate) store: String,
    /// kvlab's result directory (result.json, timeline.csv, latency.hlog).
    #[arg(long = "kvlab-out", value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Replace an existing --kvlab-out result and `--trace_file` (db_bench replaces its
    /// trace file; kvlab asks first).
    #[arg(long = "kvlab-overwrite")]
    pub(crate) overwrite: bool,
    /// db_bench's flags, as db_bench takes them: `--benchmarks=mixgraph`, `--db=DIR`,
    /// `--threads=N`, every mixgraph flag (`--num=…`, `--key_dist_a=…`, …), and its
    /// RocksDB tuning flags (`--cache_size`, `--bloom_bits`, `--compression_type`, …),
    /// which set the rocksdb store's options.
    #[arg(
        value_name = "DB_BENCH_FLAGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(crate) flags: Vec<String>,
}

/// db_bench flags that do not change what mixgraph sends and have no kvlab store option,
/// accepted and not used (`use_existing_db`: kvlab never destroys the database first).
const IGNORED: &[&str] = &[
    "use_existing_db",
    "statistics",
    "histogram",
    "max_bytes_for_level_base",
    "stats_interval_seconds",
    "stats_per_interval",
    "num_levels",
    "compression_ratio",
    "value_size",
];

/// db_bench's RocksDB tuning flags and the `rocksdb.*` store option each sets, so that
/// `kvlab db_bench` opens the database as db_bench would with the same command line.
const ROCKSDB_FLAGS: &[(&str, &str)] = &[
    ("cache_size", "block_cache_size"),
    ("bloom_bits", "bloom_bits"),
    ("compression_type", "compression"),
    ("write_buffer_size", "write_buffer_size"),
    ("max_write_buffer_number", "max_write_buffer_number"),
    ("target_file_size_base", "target_file_size_base"),
    ("max_background_jobs", "max_background_jobs"),
    ("enable_pipelined_write", "pipelined_write"),
    ("disable_wal", "wal"),
    ("sync", "sync"),
];

/// The `rocksdb.NAME=VALUE` option of a db_bench tuning flag, or why it cannot be one.
fn rocksdb_option(flag: &str, value: &str) -> Result<Option<String>, String> {
    let Some(&(_, option)) = ROCKSDB_FLAGS.iter().find(|(f, _)| *f == flag) else {
        return Ok(None);
    };
    let truth = |v: &str| match v {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("-{flag}={v}: expected true, false, 1 or 0")),
    };
    let value = match flag {
        // db_bench: a negative -bloom_bits keeps BlockBasedTableOptions' default filter
        // policy, which is none.
        "bloom_bits" if value.starts_with('-') => "0".to_owned(),
        "cache_size" if value.starts_with('-') => {
            return Err(format!(
                "-cache_size={value}: kvlab's RocksDB store always has a block cache; give \
                 its size in bytes"
            ))
        }
        "compression_type" if value == "bzip2" => "bz2".to_owned(),
        "disable_wal" => (!truth(value)?).to_string(),
        "enable_pipelined_write" | "sync" => truth(value)?.to_string(),
        _ => value.to_owned(),
    };
    Ok(Some(format!("rocksdb.{option}={value}")))
}

/// Runs the mixgraph benchmark of a db_bench command line.
pub(crate) fn db_bench(cmd: DbBenchCommand) -> Result<ExitCode> {
    let (config, unused) = MixGraphConfig::from_db_bench_args(cmd.flags.iter().map(String::as_str))
        .map_err(|e| usage(e.to_string()))?;
    let mut path = None;
    let mut benchmarks = None;
    let mut trace_file = None;
    let mut store_options = Vec::new();
    for arg in unused {
        let flag = arg.trim_start_matches('-');
        let (name, value) = flag.split_once('=').unwrap_or((flag, "true"));
        match name {
            "benchmarks" => benchmarks = Some(value.to_string()),
            "db" => path = Some(PathBuf::from(value)),
            "trace_file" => trace_file = Some(PathBuf::from(value)),
            n if ROCKSDB_FLAGS.iter().any(|(f, _)| *f == n) => {
                if cmd.store == "rocksdb" {
                    store_options.extend(rocksdb_option(n, value).map_err(usage)?);
                } else {
                    eprintln!(
                        "kvlab: db_bench flag -{n} tunes RocksDB: not used with --kvlab-db {}",
                        cmd.store
                    );
                }
            }
            n if IGNORED.contains(&n) => {
                eprintln!("kvlab: db_bench flag -{n} is accepted and not used by kvlab");
            }
            _ => {
                return Err(usage(format!(
                    "`{arg}` is not a db_bench mixgraph flag kvlab takes (see docs/mixgraph.md)"
                )))
            }
        }
    }
    match benchmarks.as_deref() {
        Some("mixgraph") => {}
        Some(other) => {
            return Err(usage(format!(
                "kvlab db_bench runs db_bench's mixgraph benchmark only; --benchmarks={other} \
                 is not one (use kvlab run for YCSB-style workloads)"
            )))
        }
        None => return Err(usage("give --benchmarks=mixgraph")),
    }
    if trace_file.is_some() {
        eprintln!(
            "kvlab: -trace_file: kvlab records the requests as a .kvtrace (kvlab's format; \
             `kvlab trace dump` prints them as trace_analyzer does), not as a RocksDB trace"
        );
    }
    let mut properties = vec![format!("workload={}", MixGraphWorkload::CLASS)];
    for arg in &cmd.flags {
        let flag = arg.trim_start_matches('-');
        let (name, value) = match flag.split_once('=') {
            Some(nv) => nv,
            None if flag == "sine_mix_rate" => ("sine_mix_rate", "true"),
            None if flag == "nosine_mix_rate" => ("sine_mix_rate", "false"),
            None => continue,
        };
        if MixGraphConfig::default()
            .set_flag(name, value)
            .unwrap_or(false)
            && name != "threads"
        {
            properties.push(format!("{name}={value}"));
        }
    }
    /// `run`'s arguments with their defaults, for the store given.
    #[derive(Parser)]
    struct Defaults {
        #[command(flatten)]
        args: PhaseArgs,
    }
    let mut args = Defaults::try_parse_from(["db_bench", "--db", &cmd.store])
        .map_err(|e| usage(e.to_string()))?
        .args;
    if cmd.store == "rocksdb" {
        // db_bench keeps its records in the default column family (kvlab run: YCSB's
        // `usertable`), so kvlab db_bench and db_bench share their databases.
        properties.push("rocksdb.column_family=default".to_string());
    }
    properties.extend(store_options);
    args.properties = properties;
    if path.is_some()
        && kvlab_lab::StoreInfo::find(&cmd.store).is_some_and(|s| !s.takes(kvlab_lab::Flag::Path))
    {
        return Err(usage(format!(
            "--db=DIR is db_bench's database directory: it applies to {} (--kvlab-db), not \
             to --kvlab-db {}; leave it out",
            kvlab_lab::Flag::Path.applies_to(),
            cmd.store
        )));
    }
    args.path = path;
    args.threads = Some(config.threads.max(1) as usize);
    args.out = cmd.out;
    args.overwrite = cmd.overwrite;
    args.progress = ProgressArg::Never;
    args.record.record = trace_file;
    if config.reads < 0 && config.duration > 0 {
        args.duration = Some(Duration::from_secs(config.duration as u64));
    }
    args.seed = Some(config.seed as u64);
    let mut ctx = select_phase(Phase::Run, args.into_options())?;
    ctx.report = ReportStyle::DbBench;
    open_store(ctx)
}

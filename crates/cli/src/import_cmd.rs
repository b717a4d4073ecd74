//! `kvlab import`, key files (`run|verify --keys`) and thread plans (`run --plan`,
//! `--plan_config`/`--thread_plan_map`), as Terark's benchmark runs them.
//!
//! Each is a workload the runner drives like any other ([`kvlab_workload::AnyWorkload`]), so stores,
//! threads × connections × pipeline, progress and the result files work as for `run`;
//! this module adds their options, their checks and their report lines.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use kvlab_report::Phase;
use kvlab_runner::{RunPlan, Warmup};
use kvlab_workload::{
    AnyWorkload, ImportSpec, ImportWorkload, KeySample, Properties, TrailingDelimiter, ValueFormat,
};

use crate::args::{usage, PhaseArgs};
use kvlab_lab::options::KeyOptions;
use kvlab_lab::phase::select::STORE_PREFIXES;
use kvlab_lab::phase::{PhaseSpec, ReportStyle};

/// Options of `run` and `verify` for key files and thread plans.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct KeyArgs {
    /// A key file, one key per line (as `import --keys-out` writes it): `run` reads,
    /// updates and inserts around keys chosen from it; `verify` checks that every key
    /// in it is present.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// How values are stored: blob (one opaque value, the default) or fields (YCSB
    /// fields field0…). For `import`, and for `run`/`verify` with --keys.
    #[arg(long, value_name = "FORMAT", value_parser = parse_value_format)]
    value_format: Option<ValueFormat>,
    /// A thread plan file: groups of threads, each with its own operation mix
    /// (group.NAME.threads=N, group.NAME.readproportion=…); see docs/import.md.
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// A mix for --thread-plan-map, ID:READ:WRITE:UPDATE in percent, e.g. 1:90:5:5
    /// (write = insert); repeatable.
    #[arg(long = "plan-config", alias = "plan_config", value_name = "ID:R:W:U")]
    plan_config: Vec<String>,
    /// Threads that run a --plan-config mix, THREADS:ID with THREADS a number or an
    /// inclusive range MIN-MAX, e.g. 0-3:1; unmapped threads use config 0. Repeatable.
    #[arg(
        long = "thread-plan-map",
        alias = "thread_plan_map",
        value_name = "THREADS:ID"
    )]
    thread_plan_map: Vec<String>,
}

impl KeyArgs {
    /// The key and plan options as plain values.
    pub(crate) fn into_options(self) -> KeyOptions {
        KeyOptions {
            keys: self.keys,
            value_format: self.value_format,
            plan: self.plan,
            plan_config: self.plan_config,
            thread_plan_map: self.thread_plan_map,
        }
    }
}

fn parse_value_format(s: &str) -> std::result::Result<ValueFormat, String> {
    s.parse()
}

fn parse_trailing(s: &str) -> std::result::Result<TrailingDelimiter, String> {
    s.parse()
}

/// `kvlab import FILE`: load records from a delimited text file.
#[derive(Args, Debug, Clone)]
pub(crate) struct ImportCommand {
    /// The data file, one record per line, read sequentially: a path, `-` for standard
    /// input, or a pipe such as <(zcat lineitem.tbl.gz).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The field delimiter: one byte, or `tab` / `\t`.
    #[arg(long, short = 'd', value_name = "CHAR", default_value = "|")]
    delimiter: String,
    /// The key's field numbers (from 0), in key order, e.g. 0,1,2; the key is those
    /// fields joined with the delimiter.
    #[arg(long, value_name = "LIST", required = true)]
    key_fields: String,
    /// Fields every line must have (default: as many as the first line).
    #[arg(long, value_name = "N")]
    fields: Option<usize>,
    /// Import only the first N lines.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Stop at the first malformed line (exit code 1) instead of skipping it.
    #[arg(long)]
    strict: bool,
    /// A delimiter at the end of a line: strip (it ends the last field, as in TPC-H
    /// files; the default) or keep (it starts an empty last field).
    #[arg(long, value_name = "MODE", default_value = "strip", value_parser = parse_trailing)]
    trailing_delimiter: TrailingDelimiter,
    /// Write this fraction of the imported keys (0 < F <= 1, sampled by --seed) to
    /// --keys-out.
    #[arg(long, value_name = "F")]
    sample_keys: Option<f64>,
    /// The key file to write (one key per line); every key unless --sample-keys.
    #[arg(long, value_name = "FILE")]
    keys_out: Option<PathBuf>,
    #[command(flatten)]
    phase: PhaseArgs,
}

// What imports, thread plans and memtier's multi-key GETs add to a phase: their
// `PhaseHook`s (kvlab_lab::phase::hook), the report lines, notes and result entries of each.

/// The delimiter byte from `--delimiter`.
fn parse_delimiter(s: &str) -> Result<u8> {
    match s {
        "tab" | "\\t" => Ok(b'\t'),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(usage(format!(
            "--delimiter `{s}`: expected one byte, e.g. '|' or tab"
        ))),
    }
}

/// `kvlab import FILE`: a run of an [`ImportWorkload`].
pub(crate) fn import(cmd: ImportCommand) -> Result<ExitCode> {
    let a = &cmd.phase;
    for (given, flag) in [
        (!a.property_files.is_empty(), "-P"),
        (a.cachebench.is_some(), "--cachebench"),
        (a.warmup.is_some(), "--warmup"),
        (a.keys.keys.is_some(), "--keys"),
        (a.keys.plan.is_some(), "--plan"),
        (!a.keys.plan_config.is_empty(), "--plan-config"),
        (!a.keys.thread_plan_map.is_empty(), "--thread-plan-map"),
    ] {
        if given {
            return Err(usage(format!("{flag} does not apply to import")));
        }
    }
    let mut props = Properties::new();
    for p in &a.properties {
        props.set_override(p).map_err(|e| usage(e.to_string()))?;
    }
    if let Some((k, _)) = props
        .iter()
        .find(|(k, _)| !STORE_PREFIXES.iter().any(|p| k.starts_with(p)))
    {
        return Err(usage(format!(
            "-p {k}: import takes store options only ({})",
            STORE_PREFIXES.join(", ")
        )));
    }
    let key_fields = cmd
        .key_fields
        .split(',')
        .map(|f| {
            f.trim().parse::<usize>().map_err(|_| {
                usage(format!(
                    "--key-fields `{}`: `{f}` is not a field number (from 0)",
                    cmd.key_fields
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let sample = match (cmd.sample_keys, &cmd.keys_out) {
        (Some(_), None) => return Err(usage("--sample-keys needs --keys-out FILE")),
        (fraction, Some(path)) => Some(KeySample {
            fraction: fraction.unwrap_or(1.0),
            path: path.clone(),
        }),
        (None, None) => None,
    };
    let spec = ImportSpec {
        fields: cmd.fields,
        value_format: a.keys.value_format.unwrap_or_default(),
        limit: cmd.limit,
        strict: cmd.strict,
        trailing_delimiter: cmd.trailing_delimiter,
        sample,
        ..ImportSpec::new(parse_delimiter(&cmd.delimiter)?, key_fields)
    };
    let path = if cmd.file.as_os_str() == "-" {
        PathBuf::from("/dev/stdin")
    } else {
        cmd.file.clone()
    };
    let threads = a.threads.unwrap_or(1);
    if let Some(shard) = a.shard {
        return Err(usage(format!(
            "--shard {shard} does not apply to import: split the file instead"
        )));
    }
    if threads == 0 || a.connections == 0 || a.pipeline == 0 {
        return Err(usage(
            "--threads, --connections and --pipeline must be at least 1",
        ));
    }
    if a.interval.is_zero() {
        return Err(usage("--interval must be greater than zero"));
    }
    let workload =
        ImportWorkload::open(&path, spec).map_err(kvlab_lab::phase::import::workload_error)?;
    let plan = RunPlan {
        threads,
        clients: a.connections,
        pipeline: a.pipeline,
        operations: None,
        duration: a.duration,
        warmup: Warmup::None,
        target_rate: a.target_rate,
        interval: a.interval,
        seed: a
            .seed
            .unwrap_or_else(kvlab_lab::phase::interrupt::random_seed),
        max_errors: a.max_errors,
        stop_on_connection_error: false,
        thread_groups: Vec::new(),
        ..RunPlan::default()
    };
    let ctx = PhaseSpec {
        phase: Phase::Import,
        options: cmd.phase.into_options(),
        props,
        workload: AnyWorkload::Import(Arc::new(workload)),
        plan,
        report: ReportStyle::Ycsb,
        stop: kvlab_lab::phase::interrupt::install_stop_handler(),
        server: Vec::new(),
        observers: super::Observers::default(),
    };
    super::open_store(ctx)
}

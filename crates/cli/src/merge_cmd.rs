//! `kvlab merge DIR... --out OUT`: the results of several kvlab processes (the shards of
//! one experiment, `--shard I/N`, on one machine or many) merged exactly into one result
//! directory — `result.json`, `latency.hlog` and `timeline.csv` — that `report` and
//! `compare` read as any other (`kvlab_report::merge`).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use kvlab_report::{MergeInput, ReportError, LATENCY_LOG_FILE, RESULT_FILE, TIMELINE_FILE};

use crate::args::usage;

/// `kvlab merge`'s arguments.
#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// The result directories to merge (each with result.json and latency.hlog), e.g. the
    /// --out directories of `kvlab run --shard 0/4` … `3/4`.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write the merged result.json, latency.hlog and timeline.csv.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace a result already in --out.
    #[arg(long)]
    overwrite: bool,
    /// Merge results that are not parts of one experiment (another workload, store,
    /// store option, phase or kvlab version, or measured windows that do not overlap),
    /// which merge otherwise refuses; the result's `merge` section lists what differed.
    #[arg(long)]
    force: bool,
}

/// Runs `kvlab merge`: writes the merged result and prints its YCSB text report.
pub(crate) fn merge(args: MergeArgs) -> Result<ExitCode> {
    let mut inputs = Vec::new();
    for dir in &args.dirs {
        if !dir.exists() {
            return Err(usage(format!(
                "{}: no such result directory",
                dir.display()
            )));
        }
        inputs.push(MergeInput::open(dir).map_err(input_error)?);
    }
    let command = kvlab_lab::phase::output::redact_args(std::env::args());
    let merged = kvlab_report::merge(inputs, command, args.force).map_err(input_error)?;
    kvlab_report::prepare_out_dir(&args.out, args.overwrite)
        .with_context(|| format!("preparing the output directory {}", args.out.display()))?;

    let mut log = kvlab_measure::IntervalLog::new(Vec::new(), merged.start)?;
    for iv in &merged.intervals {
        log.write_histogram(
            iv.tag.as_deref(),
            Duration::from_secs_f64(iv.start_s.max(0.0)),
            Duration::from_secs_f64(iv.length_s.max(0.0)),
            &iv.histogram,
        )?;
    }
    let mut timeline = Vec::new();
    let kinds = kvlab_core::OpKind::ALL;
    let commands: Vec<&str> = merged
        .names
        .iter()
        .map(String::as_str)
        .filter(|n| !kinds.iter().any(|k| k.ycsb_name() == *n))
        .collect();
    kvlab_measure::write_timeline_csv(&merged.timeline, &kinds, &commands, &mut timeline)?;
    let write = |name: &str, bytes: &[u8]| -> Result<()> {
        let path = args.out.join(name);
        kvlab_report::write_atomic(&path, bytes, true)
            .with_context(|| format!("writing {}", path.display()))
    };
    write(LATENCY_LOG_FILE, &log.into_inner())?;
    write(TIMELINE_FILE, &timeline)?;
    write(RESULT_FILE, merged.doc.to_json_pretty().as_bytes())?;

    for note in &merged.doc.notes[1..] {
        eprintln!("kvlab: note: {note}");
    }
    let mut out = std::io::stdout().lock();
    kvlab_measure::write_ycsb_text(&merged.doc.results, &mut out)?;
    out.flush()?;
    eprintln!("kvlab: {}", merged.doc.notes[0]);
    eprintln!("kvlab: merged result in {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// What is wrong with the inputs is a usage error (exit code 2): a missing or unreadable
/// result, results of different experiments (workloads, stores, store options, phases,
/// kvlab versions, or measured windows that do not overlap — unless --force), a latency
/// log that does not hold what its result counts.
fn input_error(e: ReportError) -> anyhow::Error {
    usage(e.to_string())
}

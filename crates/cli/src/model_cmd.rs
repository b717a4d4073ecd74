//! `kvlab model fit TRACE -o MODEL`: db_bench's mixgraph model fitted to a trace, and
//! `run --model MODEL`, which runs it; `kvlab model fidelity` ([`fidelity_cmd`]).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use kvlab_model::{FitOptions, KeyRangeRule, RangeCut};

use crate::args::{refused, usage};
use crate::{fidelity_cmd, trace_cmd};
use kvlab_lab::phase::select;

/// `kvlab model …`
#[derive(Args, Debug)]
pub(crate) struct ModelCommand {
    #[command(subcommand)]
    pub(crate) command: ModelSub,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ModelSub {
    /// Fit db_bench's mixgraph model (op mix, key-range hotness, in-range popularity,
    /// value sizes, scan lengths, QPS) to a trace; write it as a TOML model file.
    Fit(FitArgs),
    /// Compare the fitted model with the trace on RocksDB (the paper's Figure 14): block
    /// reads, cache hits, bytes read and written of the trace's replay, of the model's
    /// four key models and of YCSB's distributions fitted to the trace, each on a fresh
    /// copy of one database holding the trace's keys; `--out DIR` gets fidelity.json.
    Fidelity(Box<fidelity_cmd::FidelityArgs>),
}

#[derive(Args, Debug)]
pub(crate) struct FitArgs {
    #[command(flatten)]
    pub(crate) input: trace_cmd::InputArgs,
    /// The model file to write (TOML, commented).
    #[arg(short = 'o', long = "output", value_name = "MODEL")]
    pub(crate) output: PathBuf,
    /// How many key ranges: `sst` (the average keys per SST file of `--sst-size`, as the
    /// paper recommends), `sst:DBPATH` (one range per SST file of that RocksDB
    /// database, cut at the files' first keys), `keys:N` (N keys per range) or
    /// `ranges:N`.
    #[arg(long, value_name = "RULE", default_value = "sst")]
    pub(crate) key_ranges: KeyRangeRule,
    /// The SST file size of the RocksDB the model is for (`target_file_size_base`), for
    /// `--key-ranges sst`.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = fidelity_cmd::parse_bytes_arg)]
    pub(crate) sst_size: u64,
    /// How keys are grouped into ranges: `keys` (equal key counts) or `span` (equal
    /// spans of the key space).
    #[arg(long, value_name = "CUT", default_value = "keys")]
    pub(crate) range_cut: RangeCut,
    /// The `-num` db_bench made the trace with, when it did: its Put sizes are drawn
    /// from `u ≥ (first Put slot)/num`, which cuts their tail, and the value fit takes
    /// that into account (matters under a few million keys).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) db_bench_num: Option<u64>,
    /// Leave out kvlab's locality layer (the `[locality]` table): a model of db_bench's
    /// mixgraph flags alone.
    #[arg(long)]
    pub(crate) no_locality: bool,
    /// Also print the fit report as JSON on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Replace the model file if it exists.
    #[arg(long)]
    pub(crate) overwrite: bool,
}

/// Runs `kvlab model …`.
pub(crate) fn model(cmd: ModelCommand) -> Result<ExitCode> {
    match cmd.command {
        ModelSub::Fit(a) => {
            kvlab_lab::outputs::check_output_file("-o", &a.output, a.overwrite).map_err(refused)?;
            let layout = match &a.key_ranges {
                KeyRangeRule::SstLayout(path) => {
                    let layout = select::rocksdb_layout(path)
                        .map_err(|e| usage(format!("--key-ranges sst:{}: {e}", path.display())))?;
                    eprintln!(
                        "kvlab: key ranges: the {} SST files of the last level of {}",
                        layout.starts.len(),
                        path.display()
                    );
                    Some(layout)
                }
                _ => None,
            };
            let mut reader = a.input.open(None)?;
            let options = FitOptions {
                source: a.input.trace.display().to_string(),
                key_ranges: a.key_ranges,
                range_cut: a.range_cut,
                locality: !a.no_locality,
                sst_file_bytes: a.sst_size,
                layout,
                db_bench_num: a.db_bench_num,
                ..FitOptions::default()
            };
            let started = std::time::Instant::now();
            let fit = kvlab_model::fit(&mut *reader, &options).map_err(|e| anyhow::anyhow!(e))?;
            fit.model.write(&a.output).map_err(|e| anyhow::anyhow!(e))?;
            eprintln!("{}", fit.report);
            eprintln!(
                "kvlab: model of {} written to {} in {:.2} s",
                a.input.trace.display(),
                a.output.display(),
                started.elapsed().as_secs_f64()
            );
            if a.json {
                println!("{}", fit.report.to_json());
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelSub::Fidelity(a) => fidelity_cmd::fidelity(*a),
    }
}

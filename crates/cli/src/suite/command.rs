//! `kvlab suite`'s command line.

use std::path::PathBuf;

use clap::Args;

/// `kvlab suite`: run a suite file's matrix.
#[derive(Args, Debug, Clone)]
pub(crate) struct SuiteCommand {
    /// The suite file (TOML): stores, workloads, the matrix, rounds; see docs/suites.md.
    #[arg(value_name = "FILE.toml")]
    pub(crate) file: PathBuf,
    /// Results directory (default: results/NAME, NAME being the suite's name).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Run every cell again, even those with a complete result, and load every data set
    /// afresh.
    #[arg(long)]
    pub(crate) force: bool,
    /// Flag cells whose rounds' coefficient of variation of throughput or p99 exceeds
    /// this many percent.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub(crate) cv_threshold: f64,
    /// Validate the file, print the data sets and every cell's command line, run nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Add every cell's results to this history database (SQLite, as `kvlab history
    /// add`; results already there are kept once).
    #[arg(long, value_name = "FILE")]
    pub(crate) history: Option<PathBuf>,
}

//! `kvlab report` and `kvlab compare`: read result directories back and show them as
//! markdown tables, an HTML page with charts, or a side-by-side comparison.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use kvlab_report::{Comparison, ComparisonFormat, ReportError, Study, StudyOptions};

/// `kvlab report DIR…`.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReportArgs {
    /// Result directories, searched recursively for result.json (or result.json files).
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Write the report as one self-contained HTML file with charts.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Also write the markdown tables to this file.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Flag cells whose rounds' throughput or P99 coefficient of variation exceeds this
    /// percentage.
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    cv_threshold: f64,
    /// Title of the HTML report (default: the directories).
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Do not print the markdown tables on stdout.
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// `kvlab compare A B`.
#[derive(Args, Debug, Clone)]
pub(crate) struct CompareArgs {
    /// The baseline: a result directory or result.json.
    #[arg(value_name = "A")]
    a: PathBuf,
    /// The result to compare with A.
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Output: a markdown table or aligned terminal columns.
    #[arg(long, value_name = "FORMAT", default_value = "markdown")]
    format: Format,
}

/// `--format` of `kvlab compare`.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum Format {
    /// A GitHub-flavoured markdown table.
    Markdown,
    /// Aligned plain columns.
    Terminal,
}

/// Naming results that are not there is a usage error (exit code 2); unreadable or
/// malformed files are failures (exit code 1).
fn classify(e: ReportError) -> anyhow::Error {
    match e {
        ReportError::NoResults(_) | ReportError::SeveralResults { .. } => {
            crate::usage(e.to_string())
        }
        ReportError::Io { ref path, .. } if !path.exists() => crate::usage(e.to_string()),
        e => e.into(),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    kvlab_report::write_atomic(path, bytes, true)?;
    Ok(())
}

/// Runs `kvlab report`.
pub(crate) fn report(args: ReportArgs) -> Result<ExitCode> {
    if !(args.cv_threshold.is_finite() && args.cv_threshold >= 0.0) {
        return Err(crate::usage(format!(
            "--cv-threshold {}: expected a percentage >= 0",
            args.cv_threshold
        )));
    }
    let options = StudyOptions {
        cv_threshold_pct: args.cv_threshold,
    };
    let study = Study::load(&args.dirs, options).map_err(classify)?;
    let markdown = study.to_markdown();
    if let Some(path) = &args.markdown {
        write_file(path, markdown.as_bytes())?;
    }
    if let Some(path) = &args.html {
        let title = args.title.clone().unwrap_or_else(|| {
            let dirs: Vec<String> = args.dirs.iter().map(|d| d.display().to_string()).collect();
            format!("kvlab report: {}", dirs.join(", "))
        });
        write_file(path, study.to_html(&title).as_bytes())?;
        eprintln!("kvlab: report in {}", path.display());
    }
    if !args.quiet {
        let mut out = std::io::stdout().lock();
        out.write_all(markdown.as_bytes())?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `kvlab compare`.
pub(crate) fn compare(args: CompareArgs) -> Result<ExitCode> {
    let comparison = Comparison::load(&args.a, &args.b).map_err(classify)?;
    let format = match args.format {
        Format::Markdown => ComparisonFormat::Markdown,
        Format::Terminal => ComparisonFormat::Terminal,
    };
    let mut out = std::io::stdout().lock();
    out.write_all(comparison.render(format).as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

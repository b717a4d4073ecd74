//! `kvlab report` and `kvlab compare`: read result directories back and show them as
//! markdown tables, an HTML page with charts, or a side-by-side comparison.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use kvlab_report::{
    find_result_files, Comparison, ComparisonFormat, ReportError, Round, Study, StudyOptions,
};

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
    /// Replace the --html and --markdown files if they exist.
    #[arg(long)]
    overwrite: bool,
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
    /// Stop at the first result that cannot be read (by default it is skipped with a
    /// warning naming the file).
    #[arg(long)]
    strict: bool,
}

/// `kvlab compare A B`.
#[derive(Args, Debug, Clone)]
pub(crate) struct CompareArgs {
    /// The baseline: a result directory or result.json, or a directory of one cell's
    /// rounds (e.g. a suite's results/redis/workloada/4x1).
    #[arg(value_name = "A")]
    a: PathBuf,
    /// The result, or the rounds, to compare with A.
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Output: a markdown table, aligned terminal columns, or JSON.
    #[arg(long, value_name = "FORMAT", default_value = "markdown")]
    format: Format,
    /// JSON output (the same as --format json): which results A and B are, and every
    /// metric's median in A and B, the ratio B/A, the 95 % intervals (a_ci, b_ci,
    /// change_ci), the Mann–Whitney p_value, significant, rounds_a and rounds_b (null
    /// where there is none).
    #[arg(long, conflicts_with = "format")]
    json: bool,
}

/// `--format` of `kvlab compare`.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum Format {
    /// A GitHub-flavoured markdown table.
    Markdown,
    /// Aligned plain columns.
    Terminal,
    /// One JSON object.
    Json,
}

/// Naming results that are not there is a usage error (exit code 2); unreadable or
/// malformed files are failures (exit code 1).
fn classify(e: ReportError) -> anyhow::Error {
    match e {
        ReportError::NoResults(_)
        | ReportError::SeveralResults { .. }
        | ReportError::SeveralCells { .. } => crate::usage(e.to_string()),
        ReportError::Io { ref path, .. } if !path.exists() => crate::usage(e.to_string()),
        // The message holds its cause already: as a chain it would be printed twice.
        e => anyhow::Error::msg(e.to_string()),
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
    for (flag, path) in [("--html", &args.html), ("--markdown", &args.markdown)] {
        if let Some(path) = path {
            kvlab_lab::outputs::check_output_file(flag, path, args.overwrite)
                .map_err(crate::refused)?;
        }
    }
    let study = load_study(&args.dirs, options, args.strict)?;
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

/// The results below `roots` (as [`Study::load`]), skipping with a warning each one that
/// cannot be read, unless `strict`; the report names the skipped ones on the page too.
/// Having none left is an error.
fn load_study(roots: &[PathBuf], options: StudyOptions, strict: bool) -> Result<Study> {
    let mut rounds = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut skipped = Vec::new();
    for root in roots {
        let base = if root.is_dir() {
            root.as_path()
        } else {
            root.parent().unwrap_or(Path::new(""))
        };
        for file in find_result_files(root).map_err(classify)? {
            let canonical = file.canonicalize().unwrap_or_else(|_| file.clone());
            if !seen.insert(canonical) {
                continue;
            }
            match Round::load(&file, base) {
                Ok(r) => rounds.push(r),
                Err(e) if strict => return Err(classify(e)),
                Err(e) => {
                    eprintln!("kvlab: warning: skipping {}: {e}", file.display());
                    skipped.push((file, e.to_string()));
                }
            }
        }
    }
    if rounds.is_empty() && !skipped.is_empty() {
        return Err(anyhow::anyhow!(
            "none of the {} results found could be read",
            skipped.len()
        ));
    }
    if !skipped.is_empty() {
        eprintln!(
            "kvlab: warning: {} result{} skipped (--strict stops at the first)",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" }
        );
    }
    let mut study = Study::new(rounds, options);
    for (file, e) in &skipped {
        study.skipped(file, e);
    }
    Ok(study)
}

/// Runs `kvlab compare`.
pub(crate) fn compare(args: CompareArgs) -> Result<ExitCode> {
    let comparison = Comparison::load(&args.a, &args.b).map_err(classify)?;
    let text = match (args.json, args.format) {
        (true, _) | (_, Format::Json) => {
            let mut t = serde_json::to_string_pretty(&comparison.to_json())?;
            t.push('\n');
            t
        }
        (false, Format::Markdown) => comparison.render(ComparisonFormat::Markdown),
        (false, Format::Terminal) => comparison.render(ComparisonFormat::Terminal),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

//! `kvlab suite FILE.toml`: a matrix of stores × workloads × thread and connection counts
//! × rounds, each cell run as its own `kvlab` child process.
//!
//! The pieces and how they connect:
//!
//! - [`SuiteCommand`]: the command line (`--out`, `--force`, `--cv-threshold`,
//!   `--dry-run`), and [`run`], the entry.
//! - `spec`: `RawSuite` and friends, the TOML file as written (serde,
//!   `deny_unknown_fields`), and its validation into a `Plan`, so nothing runs unless the
//!   whole file is right. Every child's command line is parsed by kvlab's own parser
//!   during validation too.
//! - `matrix`: the `Plan` — stores, workloads, the expanded `Cell`s and the `DataSet`s
//!   they share — with each cell's directory and each child's command line.
//! - `execute`: the `Runner` walks the data sets; for each it starts the server (or picks
//!   the data directory), loads once, runs the pending cells as children
//!   (`kvlab run|memtier … --out CELL`), records failures in `failed.json` and keeps
//!   `suite.json` current.
//! - `server`: a spawned server's statistics and its record in `server.json`.
//! - `summary`: `summary.md` / `summary.json`, each cell over its rounds.
//!
//! The file format and the layout of the results are described in `docs/suites.md`.

mod command;
mod execute;
#[cfg(test)]
mod fuzzing;
mod matrix;
mod server;
mod spec;
mod summary;

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};

pub(crate) use command::SuiteCommand;

use crate::args::usage;
use execute::{Runner, INTERRUPTS};
use matrix::{Access, Plan};

/// `kvlab suite`.
pub(crate) fn run(cmd: SuiteCommand) -> Result<ExitCode> {
    if !(cmd.cv_threshold.is_finite() && cmd.cv_threshold >= 0.0) {
        return Err(usage("--cv-threshold must be a percentage of at least 0"));
    }
    let plan = Plan::load(&cmd)?;
    if cmd.dry_run {
        print_plan(&plan)?;
        return Ok(ExitCode::SUCCESS);
    }
    let _ = ctrlc::set_handler(|| {
        INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    });
    let exe = std::env::current_exe().context("finding the kvlab binary to run cells with")?;
    let code = Runner::new(&plan, &cmd, exe)?.run()?;
    if let Some(db) = &cmd.history {
        if plan.out.is_dir() {
            crate::history_cmd::add_dirs(db, std::slice::from_ref(&plan.out), &[])?;
        }
    }
    Ok(code)
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `--dry-run`: the plan on stdout.
fn print_plan(plan: &Plan) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "suite {}: {} ({} × {} × concurrency × {}), {}, results in {}",
        plan.name,
        plural(plan.cells.len(), "cell"),
        plural(plan.stores.len(), "store"),
        plural(plan.workloads.len(), "workload"),
        plan.rounds_text(),
        plural(plan.datasets.len(), "data set"),
        plan.out.display()
    )?;
    writeln!(
        out,
        "(PORT: the port of a server the suite starts; a password is passed to each child in \
         its environment, {}, never on its command line)",
        crate::argv::AUTH_ENV
    )?;
    for d in &plan.datasets {
        let store = &plan.stores[d.store];
        writeln!(
            out,
            "\ndata set {} of store {} ({:?}, {}): {}",
            d.id,
            store.name,
            d.mode,
            plural(d.cells.len(), "cell"),
            d.key
        )?;
        let url = match &store.access {
            Access::Url(u) => Some(u.clone()),
            Access::Spawn { kind, .. } => Some(format!("{}://127.0.0.1:PORT", kind.scheme())),
            _ => None,
        };
        let url = url.as_deref();
        if let Some(a) = plan.load_args(d, url, &plan.load_dir(d)) {
            writeln!(out, "  load: kvlab {}", a.join(" "))?;
        }
        for &c in &d.cells {
            let cell = &plan.cells[c];
            writeln!(
                out,
                "  {}: kvlab {}",
                cell.rel.display(),
                plan.cell_args(cell, url, &plan.cell_dir(cell)).join(" ")
            )?;
        }
    }
    out.flush()
}

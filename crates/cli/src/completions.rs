//! `kvlab completions SHELL` and `kvlab man`: shell completion scripts (clap_complete)
//! and roff manual pages (clap_mangen), both generated from the command line kvlab
//! parses, so they never fall behind it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory};

use crate::args::Cli;

/// `kvlab completions SHELL`.
#[derive(Args, Debug, Clone)]
pub(crate) struct CompletionsCommand {
    /// The shell: bash, zsh, fish, elvish or powershell. Install, e.g. for bash:
    /// `kvlab completions bash > ~/.local/share/bash-completion/completions/kvlab`.
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// `kvlab man`.
#[derive(Args, Debug, Clone)]
pub(crate) struct ManCommand {
    /// Write kvlab.1 and a page per subcommand (kvlab-run.1, …) into this directory
    /// instead of printing kvlab.1 on stdout.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// Prints the completion script of `cmd.shell` on stdout.
pub(crate) fn completions(cmd: CompletionsCommand) -> Result<ExitCode> {
    let mut command = Cli::command();
    // Into memory first: clap_complete panics on a write error, and a closed pipe
    // (`kvlab completions bash | head`) is the reader's choice.
    let mut script = Vec::new();
    clap_complete::generate(cmd.shell, &mut command, "kvlab", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Prints kvlab.1, or writes every page into `--out-dir`.
pub(crate) fn man(cmd: ManCommand) -> Result<ExitCode> {
    let command = Cli::command();
    match cmd.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(command, &dir)
                .with_context(|| format!("writing manual pages into {}", dir.display()))?;
            eprintln!("kvlab: manual pages in {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&page)?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

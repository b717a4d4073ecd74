//! The `kvlab` binary: parses the command line and hands each command to its library.
//!
//! - `main.rs`: `main`, dispatch of the subcommands, `kvlab memtier`.
//! - [`args`]: the command line (clap); a phase's flags (`PhaseArgs`) convert into the
//!   phase library's plain `kvlab_lab::options::PhaseOptions`, and the phase library
//!   (`kvlab_lab::phase`) selects the workload and plan, opens the store, runs the
//!   phase and writes its results.
//! - Subcommands of their own: [`import_cmd`], [`report_cmd`], [`suite`], [`crash`],
//!   [`sim_cmd`], [`trace_cmd`]; memtier's flags, report and files come from
//!   `kvlab-memtier`.
//! - [`argv`]: the command line before clap parses it (YCSB's single-dash flags, a
//!   password from `KVLAB_AUTH`). [`completions`]: `kvlab completions`, `kvlab man`.

mod args;
mod argv;
mod completions;
mod crash;
mod db_bench_cmd;
mod fidelity_cmd;
mod history_cmd;
mod import_cmd;
mod merge_cmd;
mod model_cmd;
mod replay_cmd;
mod report_cmd;
mod sim_cmd;
mod suite;
mod trace_cmd;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Parser;
use kvlab_lab::observe::Observers;
use kvlab_memtier::{args as memtier_args, report as memtier_report};
use kvlab_report::Phase;
use kvlab_runner::{RunPlan, TargetRate, Warmup};
use kvlab_workload::memtier::MemtierWorkload;
use kvlab_workload::{AnyWorkload, Properties};

use crate::args::{refused, usage, Cli, Command, MemtierCommand, PhaseArgs, UsageError};
use kvlab_lab::phase::open::open_store;
use kvlab_lab::phase::select::{check_workers, select_phase};
use kvlab_lab::phase::{PhaseSpec, ReportStyle};

fn main() -> ExitCode {
    // Read once and dropped, so nothing this process starts inherits it.
    let auth = std::env::var(argv::AUTH_ENV).ok();
    std::env::remove_var(argv::AUTH_ENV);
    let cli = match Cli::try_parse_from(argv::rewrite(
        std::env::args_os().collect(),
        auth.as_deref(),
    )) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KVLAB_LOG")
                // The FUSE library of `crash --power-loss` reports replies to a writer
                // kvlab has just killed: expected, not worth a line.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,fuser=off")),
        )
        .init();
    let result = dispatch(cli);
    match result {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (`kvlab trace dump … | head`) is the reader's choice.
            let broken_pipe = e.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            if e.downcast_ref::<kvlab_lab::Interrupted>().is_some() {
                eprintln!("kvlab: {}", error_text(&e));
                return ExitCode::from(130);
            }
            eprintln!("kvlab: error: {}", error_text(&e));
            ExitCode::from(
                if e.downcast_ref::<UsageError>().is_some()
                    || e.downcast_ref::<kvlab_lab::Refusal>().is_some()
                {
                    2
                } else {
                    1
                },
            )
        }
    }
}

/// An error and its causes, joined by ": " as anyhow's `{:#}` joins them, without a cause
/// whose text the message already holds (an error that prints its source, such as a
/// trace's "FILE: No such file or directory", would otherwise say it twice).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let (phase, args) = match cli.command {
        Command::Load(a) => (Phase::Load, a),
        Command::Run(a) => (Phase::Run, a.into_phase()),
        Command::Verify(a) => (Phase::Verify, a),
        Command::Memtier(m) => return memtier(*m),
        Command::Report(a) => return report_cmd::report(a),
        Command::Compare(a) => return report_cmd::compare(a),
        Command::Merge(a) => return merge_cmd::merge(a),
        Command::History(c) => return history_cmd::history(c),
        Command::Crash(c) => return crash::crash(*c),
        Command::Import(c) => return import_cmd::import(*c),
        Command::Suite(s) => return suite::run(s),
        Command::Trace(t) => return trace_cmd::trace(t),
        Command::Sim(c) => return sim_cmd::sim(*c),
        Command::Model(c) => return model_cmd::model(c),
        Command::DbBench(c) => return db_bench_cmd::db_bench(c),
        Command::Completions(c) => return completions::completions(c),
        Command::Man(c) => return completions::man(c),
        Command::Replay(r) => (Phase::Run, replay_cmd::phase_args(*r)?),
    };
    open_store(select_phase(phase, args.into_options())?)
}

/// `kvlab memtier`: a memtier_benchmark command line, run as a kvlab phase.
fn memtier(m: MemtierCommand) -> Result<ExitCode> {
    let a = &m.memtier;
    if a.version {
        // memtier's -v prints its version and exits at once.
        println!(
            "kvlab memtier v={} (memtier_benchmark 2.3.0 command line)",
            env!("CARGO_PKG_VERSION")
        );
        return Ok(ExitCode::SUCCESS);
    }
    a.validate().map_err(usage)?;
    // What memtier checks after parsing its flags fails with exit code 1, not 2.
    a.validate_setup().map_err(anyhow::Error::msg)?;
    let spec = a.spec().map_err(usage)?;
    for w in a.warnings() {
        eprintln!("kvlab: warning: {w}");
    }
    if let (Some(path), Some(items), false) = (&a.data_import, &spec.import, a.generate_keys) {
        // memtier reads the keys first (imported_keylist::read_keys).
        eprintln!(
            "Reading keys from {}... {} keys read.",
            path.display(),
            items.len()
        );
    }
    if let (Some(memtier_args::Requests::AllKeys), Some(n)) = (a.requests, a.requests_per_client())
    {
        // config_init_defaults prints the resolved count on stdout.
        println!("setting requests to {n}");
    }
    let workload = MemtierWorkload::new(spec).map_err(|e| usage(e.to_string()))?;
    if a.show_config {
        // memtier's config_print: the values on stdout, their frame on stderr.
        eprintln!("============== Configuration values: ==============");
        print!("{}", kvlab_memtier::json::show_config(a));
        eprintln!("===================================================");
    }
    let seed = a
        .seed()
        .unwrap_or_else(kvlab_lab::phase::interrupt::random_seed);
    if let (Some(per), Some(total)) = (a.rate_limit_per_connection(), a.target_rate()) {
        eprintln!(
            "kvlab: --rate-limiting {per}/s per connection: open loop at {total} requests/s \
             in total"
        );
    }
    let db = if a.protocol().is_redis() {
        "redis"
    } else {
        "memcached"
    };
    let mut args = PhaseArgs::defaults(db)?;
    // memtier's traffic only: no server queries (docs/memtier.md, Server traffic).
    args.properties = [a.store_options(), a.traffic_options()].concat();
    args.url = m.spawn.is_none().then(|| a.url());
    args.spawn = m.spawn.clone();
    args.threads = Some(a.threads());
    args.connections = a.clients_per_thread();
    args.pipeline = a.pipeline();
    args.timeout = Some(kvlab_lab::options::RequestTimeout(None));
    args.target_rate = a.target_rate().map(TargetRate::Constant);
    args.duration = a.duration();
    args.seed = Some(seed);
    args.out = m.out.clone();
    args.overwrite = m.overwrite;
    args.max_errors = m.max_errors;
    args.progress = m.progress;
    args.record = m.record.clone();
    args.label = m.label.clone();
    args.workload_label = m.workload_label.clone();
    args.monitor = m.monitor.clone();
    let mut props = Properties::new();
    for p in &args.properties {
        props.set_override(p).map_err(|e| usage(e.to_string()))?;
    }
    check_workers(a.threads(), a.clients_per_thread(), true)?;
    if !a.verify_only {
        // memtier replaces its result files; kvlab replaces none without --overwrite.
        let planned = kvlab_memtier::files::planned_files(
            a.hdr_file_prefix.as_deref(),
            a.client_stats.as_deref(),
            a.run_count,
            a.threads(),
            a.clients_per_thread(),
            &a.command_names(),
        );
        for (flag, path) in planned {
            kvlab_lab::outputs::check_output_file(flag, &path, m.overwrite).map_err(refused)?;
        }
    }
    if let Some(path) = &m.record.record {
        kvlab_lab::outputs::check_output_file("--record", path, m.overwrite).map_err(refused)?;
    }
    let plan = RunPlan {
        threads: a.threads(),
        clients: a.clients_per_thread(),
        pipeline: a.pipeline(),
        operations: a.total_requests(),
        duration: a.duration(),
        warmup: Warmup::None,
        target_rate: args.target_rate,
        interval: args.interval,
        seed,
        max_errors: m.max_errors,
        // memtier stops at a lost connection unless told to reconnect.
        stop_on_connection_error: !a.reconnect_on_error(),
        thread_groups: Vec::new(),
        client_stats: a.client_stats.is_some(),
        // -D: each request and reply on stderr.
        tap: (a.debug > 0).then(|| {
            Arc::new(kvlab_memtier::debug::DebugTap::new(
                a.server_label(),
                a.command_names(),
            )) as Arc<dyn kvlab_core::Tap>
        }),
        // memtier releases a connection's requests in bursts, at most 50 a second.
        burst_tick: a.rate_limit_tick(),
    };
    let report = memtier_report::Options::from_args(a);
    if !report.verify_only() {
        eprintln!("{}", report.writing_results());
    }
    let ctx = PhaseSpec {
        phase: Phase::Run,
        options: args.into_options(),
        props,
        workload: AnyWorkload::Memtier(Arc::new(workload)),
        plan,
        report: ReportStyle::Memtier(report),
        stop: kvlab_lab::phase::interrupt::install_stop_handler(),
        server: Vec::new(),
        observers: Observers::default(),
    };
    open_store(ctx)
}

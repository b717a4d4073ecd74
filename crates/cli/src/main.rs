//! The `kvlab` binary: parses the command line, opens the chosen store, runs a phase
//! and writes its results.

mod import_cmd;
mod memtier_args;
mod memtier_files;
mod memtier_report;
mod progress;
mod report_cmd;
mod run_memtier;
mod suite;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use kvlab_core::{StatValue, Store, StoreStats};
use kvlab_measure::{IntervalLog, TimelineRow};
use kvlab_report::{HostInfo, ResultDocument, StoreSection};
use kvlab_runner::{RunOutcome, RunPlan, TargetRate, Warmup};
use kvlab_stores::null::NullStore;
use kvlab_stores::StoreOptions;
use kvlab_workload::memtier::MemtierWorkload;
use kvlab_workload::{
    with_workload, AnyWorkload, CacheBenchConfig, CacheWorkload, CoreWorkload, Properties,
};

/// kvlab: a workload lab for key-value stores and caches.
#[derive(Parser, Debug)]
#[command(name = "kvlab", version, about, long_about = None, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Insert the workload's records into the store (YCSB's load phase).
    Load(PhaseArgs),
    /// Run the workload's operation mix against the store (YCSB's transaction phase).
    Run(PhaseArgs),
    /// Read every loaded record back and report missing or corrupted ones.
    Verify(PhaseArgs),
    /// Run a memtier_benchmark command line: memtier's own flags (-s, -p, -t, -c,
    /// --ratio, --key-pattern, --data-size, --test-time, …) and its summary output.
    Memtier(Box<MemtierCommand>),
    /// Report the results below result directories: markdown tables, and with --html
    /// one self-contained HTML page with charts.
    Report(report_cmd::ReportArgs),
    /// Compare two results: throughput, latency per operation, errors and hit ratio, with
    /// the ratio B/A.
    Compare(report_cmd::CompareArgs),
    /// Load records from a delimited text file (e.g. TPC-H lineitem.tbl): key = the
    /// --key-fields joined with the delimiter, value = the other fields.
    Import(Box<import_cmd::ImportCommand>),
    /// Run a suite file: stores × workloads × threads/connections × rounds, each cell
    /// as its own kvlab process, with resumable results and a summary (docs/suites.md).
    Suite(suite::SuiteCommand),
}

/// `kvlab memtier`: memtier_benchmark's flags plus kvlab's result options.
#[derive(Args, Debug, Clone)]
struct MemtierCommand {
    #[command(flatten)]
    memtier: memtier_args::MemtierArgs,
    /// Directory for kvlab's result.json, timeline.csv and latency.hlog.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replace results already in --out.
    #[arg(long)]
    overwrite: bool,
    /// Start a local server instead of connecting to -s/-p (settings as for `run`).
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, default_missing_value = "")]
    spawn: Option<String>,
    /// Stop once more than this many requests have failed.
    #[arg(long, value_name = "N")]
    max_errors: Option<u64>,
    /// A name for the store in results and reports (default: redis or memcached).
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// A name for the workload in results and reports (default: `memtier`, told apart from
    /// other memtier runs by the flags that differ); a suite passes its workload's name.
    #[arg(long, value_name = "NAME")]
    workload_label: Option<String>,
    /// Progress display on stderr: auto, always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    progress: progress::When,
}

#[derive(Args, Debug, Clone)]
struct PhaseArgs {
    /// A YCSB workload property file; several are read in order, later ones win.
    #[arg(short = 'P', value_name = "FILE")]
    property_files: Vec<PathBuf>,
    /// A property override, `name=value` (after every -P file).
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    properties: Vec<String>,
    /// The store: rocksdb, redis, memcached, null.
    #[arg(long, value_name = "STORE")]
    db: String,
    /// Data directory of an embedded store (same as -p rocksdb.dir=DIR).
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// A CacheBench config (JSON with a test_config): its workload runs instead of a
    /// property file's; scale it with -p numKeys=… -p numOps=… -p numThreads=….
    #[arg(long, value_name = "FILE")]
    cachebench: Option<PathBuf>,
    /// Capacity of an in-process cache (moka; foyer's memory tier), e.g. 256MiB.
    #[arg(long, value_name = "SIZE")]
    cache_size: Option<String>,
    /// Directory of a hybrid cache's disk tier (foyer).
    #[arg(long, value_name = "DIR")]
    disk_path: Option<PathBuf>,
    /// Capacity of a hybrid cache's disk tier (foyer), e.g. 1GiB.
    #[arg(long, value_name = "SIZE")]
    disk_size: Option<String>,
    /// Server of a network store: redis://user:password@host:port/db (credentials and
    /// db optional), rediss://… for TLS, memcached://host:port,host:port…; a UNIX
    /// domain socket: redis+unix:///path?db=N (or unix:///path), memcached+unix:///path.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Start a local server for the run (redis-server or memcached from PATH) on a free
    /// loopback port, with comma-separated settings, e.g. maxmemory=512mb or m=64,t=4
    /// (unixsocket=PATH or s=PATH: on a UNIX domain socket); it starts empty, so `run`
    /// loads the workload's records first.
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, default_missing_value = "")]
    spawn: Option<String>,
    /// Worker threads (YCSB `threadcount`).
    #[arg(long, short = 't', value_name = "N")]
    threads: Option<usize>,
    /// Connections per thread (network stores), each its own client.
    #[arg(long, short = 'c', value_name = "N", default_value_t = 1)]
    connections: usize,
    /// Requests in flight per connection: each client sends this many, then reads the
    /// replies.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pipeline: usize,
    /// Per-request timeout of network stores (e.g. 500ms, 2s); none by default.
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    timeout: Option<Duration>,
    /// Open loop at this many operations per second in total (YCSB `-target`), or a
    /// swinging load `sine:MEAN,AMPLITUDE,PERIOD` (e.g. sine:20000,10000,60s); latency
    /// is then also measured from each request's intended start.
    #[arg(long, alias = "target", value_name = "OPS", value_parser = parse_target_rate)]
    target_rate: Option<TargetRate>,
    /// Run for this long instead of `operationcount` operations (e.g. 30, 30s, 2m).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Warm up before measuring: a time (10s) or an operation count (50000ops).
    #[arg(long, value_name = "TIME|Nops")]
    warmup: Option<String>,
    /// Seed of every random choice; printed and stored in the result. Random if unset.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Directory for result.json, timeline.csv and latency.hlog.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replace results already in --out.
    #[arg(long)]
    overwrite: bool,
    /// Reporting interval (timeline rows, interval log, progress), e.g. 1s.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = parse_duration)]
    interval: Duration,
    /// Stop once more than this many operations have failed.
    #[arg(long, value_name = "N")]
    max_errors: Option<u64>,
    /// Progress display on stderr: auto (when stderr is a terminal), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    progress: progress::When,
    /// A name for the store in results and reports (default: the --db kind), e.g. to
    /// tell two redis configurations apart.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// A name for the workload in results and reports (default: the property files'
    /// names, told apart by the properties that differ); a suite passes its workload's name.
    #[arg(long, value_name = "NAME")]
    workload_label: Option<String>,
    #[command(flatten)]
    keys: import_cmd::KeyArgs,
    #[command(flatten)]
    memtier: run_memtier::RunMemtierArgs,
}

/// A usage error: bad flags, properties or configuration (exit code 2).
#[derive(Debug)]
struct UsageError(String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Duration::from_secs_f64(v * mult)),
        _ => Err(format!("`{s}` is not a duration (e.g. 30, 30s, 500ms, 2m)")),
    }
}

fn parse_target_rate(s: &str) -> std::result::Result<TargetRate, String> {
    let t = s.trim();
    let Some(sine) = t.strip_prefix("sine:") else {
        return match t.parse::<f64>() {
            Ok(r) if r.is_finite() && r > 0.0 => Ok(TargetRate::Constant(r)),
            _ => Err(format!(
                "`{s}` is not a rate: give operations per second (e.g. 5000) or \
                 sine:MEAN,AMPLITUDE,PERIOD"
            )),
        };
    };
    let parts: Vec<&str> = sine.split(',').map(str::trim).collect();
    let bad = || format!("`{s}`: expected sine:MEAN,AMPLITUDE,PERIOD, e.g. sine:20000,10000,60s");
    let [mean, amplitude, period] = parts[..] else {
        return Err(bad());
    };
    let mean: f64 = mean.parse().map_err(|_| bad())?;
    let amplitude: f64 = amplitude.parse().map_err(|_| bad())?;
    let period = parse_duration(period)?;
    if !(mean > 0.0 && (0.0..mean).contains(&amplitude) && !period.is_zero()) {
        return Err(format!(
            "`{s}`: a sine rate needs MEAN > 0, 0 <= AMPLITUDE < MEAN and PERIOD > 0"
        ));
    }
    Ok(TargetRate::Sine {
        mean,
        amplitude,
        period,
    })
}

fn parse_warmup(s: &str) -> Result<Warmup> {
    let t = s.trim();
    if let Some(n) = t.strip_suffix("ops") {
        let n: u64 = n
            .trim()
            .parse()
            .map_err(|_| usage(format!("--warmup `{s}`: expected e.g. 10s or 50000ops")))?;
        return Ok(Warmup::Ops(n));
    }
    let d = parse_duration(t).map_err(|e| usage(format!("--warmup: {e}; or e.g. 50000ops")))?;
    Ok(if d.is_zero() {
        Warmup::None
    } else {
        Warmup::Time(d)
    })
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("kvlab: error: {e:#}");
            ExitCode::from(if e.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            })
        }
    }
}

/// What a phase needs besides the store.
struct Phase {
    phase: &'static str,
    args: PhaseArgs,
    props: Properties,
    work: AnyWorkload,
    plan: RunPlan,
    report: ReportStyle,
    stop: Arc<AtomicBool>,
    /// Facts about a server kvlab started (`spawned.*`), for the result.
    server: StoreStats,
}

/// The records a phase that has them (load, verify, a fresh server's preload) works
/// on, or a usage error naming the workload family that has no such phase.
fn records<'a>(work: &'a AnyWorkload, phase: &str) -> Result<&'a Arc<CoreWorkload>> {
    work.records().ok_or_else(|| usage(work.no_phase(phase)))
}

/// The Redis data model a workload means: YCSB records are hashes, blob values (memtier,
/// cache, blob imports and key files) are strings.
fn redis_model(work: &AnyWorkload) -> kvlab_net::redis::Model {
    if work.needs().blob {
        kvlab_net::redis::Model::String
    } else {
        kvlab_net::redis::Model::Hash
    }
}

/// Settings a CacheBench config brings, used where the command line is silent.
#[derive(Default)]
struct Defaults {
    threads: Option<usize>,
    ops_per_thread: Option<u64>,
    target_rate: Option<f64>,
    cache_size_mb: Option<u64>,
    disk_size_mb: Option<u64>,
}

/// How results are printed.
#[derive(Clone)]
enum ReportStyle {
    /// YCSB's text report.
    Ycsb,
    /// memtier_benchmark's summary (and optionally its JSON).
    Memtier(memtier_report::Options),
}

/// Property names consumed here rather than by the workload.
const CLI_PROPERTIES: &[&str] = &[
    "threadcount",
    "target",
    "db",
    "exporter",
    "exportfile",
    "measurementtype",
    "measurement.interval",
    "status.interval",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "histogram.buckets",
    "maxexecutiontime",
];

/// Option prefixes that stores declare: passed to the store, which validates them.
const STORE_PREFIXES: &[&str] = &[
    "rocksdb.",
    "lmdb.",
    "wiredtiger.",
    "moka.",
    "foyer.",
    "redis.",
    "memcached.",
    "null.",
];

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let (phase, mut args) = match cli.command {
        Command::Load(a) => ("load", a),
        Command::Run(a) => ("run", a),
        Command::Verify(a) => ("verify", a),
        Command::Memtier(m) => return memtier(*m),
        Command::Report(a) => return report_cmd::report(a),
        Command::Compare(a) => return report_cmd::compare(a),
        Command::Import(c) => return import_cmd::import(*c),
        Command::Suite(s) => return suite::run(s),
    };
    let mut props = Properties::new();
    for f in &args.property_files {
        props.load_file(f).map_err(|e| usage(e.to_string()))?;
    }
    for p in &args.properties {
        props.set_override(p).map_err(|e| usage(e.to_string()))?;
    }
    // The workload: a CacheBench config, a cache property file, or YCSB's CoreWorkload.
    let mut defaults = Defaults::default();
    let work = if args.memtier.given() {
        memtier_work(&args, &props)?
    } else if let Some(path) = &args.cachebench {
        let mut overrides = Vec::new();
        for (k, v) in props.iter() {
            if kvlab_workload::CACHEBENCH_OVERRIDES.contains(&k) {
                overrides.push((k.to_string(), v.to_string()));
            } else if !is_runner_or_store_property(k) {
                return Err(usage(format!(
                    "property `{k}` does not apply to a CacheBench config; its overrides are: {}",
                    kvlab_workload::CACHEBENCH_OVERRIDES.join(", ")
                )));
            }
        }
        let config = CacheBenchConfig::load(path, &overrides).map_err(|e| usage(e.to_string()))?;
        for w in config.warnings() {
            eprintln!("kvlab: warning: {}: {w}", path.display());
        }
        defaults.threads = Some(config.threads() as usize);
        defaults.ops_per_thread = Some(config.ops_per_thread());
        defaults.target_rate = config.target_rate_ops_per_s();
        defaults.cache_size_mb = config.cache_size_mb();
        defaults.disk_size_mb = config.nvm_cache_size_mb();
        AnyWorkload::Cache(Arc::new(
            config.workload().map_err(|e| usage(e.to_string()))?,
        ))
    } else if props.get("workload") == Some(CacheWorkload::CLASS) {
        let w = CacheWorkload::from_properties(&props, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(|e| usage(e.to_string()))?;
        AnyWorkload::Cache(Arc::new(w))
    } else {
        let w = CoreWorkload::from_properties(&props, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(|e| usage(e.to_string()))?;
        AnyWorkload::Core(Arc::new(w))
    };
    let work = import_cmd::phase_work(phase, &mut args, &props, work)?;
    let threads = given_threads(&args, &props)?
        .or(defaults.threads)
        .unwrap_or(1);
    if args.cache_size.is_none() {
        args.cache_size = defaults.cache_size_mb.map(|mb| format!("{mb}MiB"));
    }
    if args.disk_size.is_none() {
        args.disk_size = defaults
            .disk_size_mb
            .filter(|&mb| mb > 0)
            .map(|mb| format!("{mb}MiB"));
    }
    if threads == 0 {
        return Err(usage("--threads must be at least 1"));
    }
    let target_rate = match (args.target_rate, props.get("target")) {
        (Some(t), _) => Some(t),
        (None, Some(t)) => {
            let v: f64 = t
                .trim()
                .parse()
                .map_err(|_| usage(format!("property target: `{t}` is not a number")))?;
            (v > 0.0).then_some(TargetRate::Constant(v))
        }
        (None, None) => defaults.target_rate.map(TargetRate::Constant),
    };
    if args.connections == 0 || args.pipeline == 0 {
        return Err(usage("--connections and --pipeline must be at least 1"));
    }
    let duration = match (args.duration, props.get("maxexecutiontime")) {
        (Some(d), _) => Some(d),
        (None, Some(t)) => Some(Duration::from_secs(t.trim().parse().map_err(|_| {
            usage(format!(
                "property maxexecutiontime: `{t}` is not a number of seconds"
            ))
        })?)),
        (None, None) => None,
    };
    let warmup = match &args.warmup {
        Some(w) => parse_warmup(w)?,
        None => Warmup::None,
    };
    if args.interval.is_zero() {
        return Err(usage("--interval must be greater than zero"));
    }
    let seed = args.seed.unwrap_or_else(random_seed);
    let plan = RunPlan {
        threads,
        clients: args.connections,
        pipeline: args.pipeline,
        operations: if args.duration.is_some() {
            None
        } else {
            // CacheBench's numOps is per thread.
            Some(match defaults.ops_per_thread {
                Some(per_thread) => per_thread.saturating_mul(threads as u64),
                None => work.operation_count(),
            })
        },
        duration,
        warmup,
        target_rate,
        interval: args.interval,
        seed,
        max_errors: args.max_errors,
        stop_on_connection_error: false,
        thread_groups: work.thread_groups(),
        ..RunPlan::default()
    };
    let stop = install_stop_handler();
    let ctx = Phase {
        phase,
        args,
        props,
        work,
        plan,
        report: ReportStyle::Ycsb,
        stop,
        server: Vec::new(),
    };
    open_store(ctx)
}

/// Whether a property is read here ([`CLI_PROPERTIES`]) or by the store
/// ([`STORE_PREFIXES`]) rather than by a workload.
fn is_runner_or_store_property(k: &str) -> bool {
    CLI_PROPERTIES.contains(&k) || STORE_PREFIXES.iter().any(|p| k.starts_with(p))
}

/// The worker threads asked for: `--threads`, else the `threadcount` property.
fn given_threads(args: &PhaseArgs, props: &Properties) -> Result<Option<usize>> {
    match (args.threads, props.get("threadcount")) {
        (Some(t), _) => Ok(Some(t)),
        (None, Some(t)) => {
            Ok(Some(t.trim().parse().map_err(|_| {
                usage(format!("property threadcount: `{t}` is not a number"))
            })?))
        }
        (None, None) => Ok(None),
    }
}

/// The memtier-style workload of `run --ratio …` (and the other memtier flags): no
/// property file or CacheBench config beside it, and no workload properties.
fn memtier_work(args: &PhaseArgs, props: &Properties) -> Result<AnyWorkload> {
    if !args.property_files.is_empty() || args.cachebench.is_some() {
        return Err(usage(
            "the memtier flags (--ratio, --key-*, --data-size*, --requests, …) describe the \
             workload: give them instead of -P or --cachebench, not with them",
        ));
    }
    if args.memtier.has_requests() && args.duration.is_some() {
        return Err(usage("give either --requests or --duration, not both"));
    }
    if let Some((k, _)) = props.iter().find(|(k, _)| !is_runner_or_store_property(k)) {
        return Err(usage(format!(
            "property `{k}` does not apply to a memtier-style workload (its flags are \
             --ratio, --key-*, --data-size*, --expiry-range, --requests; see docs/memtier.md)"
        )));
    }
    let threads = given_threads(args, props)?.unwrap_or(1);
    let spec = args
        .memtier
        .spec(threads.max(1), args.connections.max(1))
        .map_err(usage)?;
    if !spec.commands.is_empty() && args.db != "redis" {
        return Err(usage(format!(
            "--command sends Redis commands: it needs --db redis, not --db {}",
            args.db
        )));
    }
    let workload = MemtierWorkload::new(spec).map_err(|e| usage(e.to_string()))?;
    Ok(AnyWorkload::Memtier(Arc::new(workload)))
}

/// Handles Ctrl-C: the first stops the run (results so far are written), the second
/// stops any server kvlab started and leaves at once.
fn install_stop_handler() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                kvlab_spawn::stop_all_spawned();
                std::process::exit(130);
            }
        });
    }
    stop
}

/// `kvlab memtier`: a memtier_benchmark command line, run as a kvlab phase.
fn memtier(m: MemtierCommand) -> Result<ExitCode> {
    let a = &m.memtier;
    a.validate().map_err(usage)?;
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
    let workload = MemtierWorkload::new(spec).map_err(|e| usage(e.to_string()))?;
    if a.show_config {
        for (k, v) in workload.spec().effective() {
            eprintln!("{k} = {v}");
        }
    }
    let seed = a.seed().unwrap_or_else(random_seed);
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
    let args = PhaseArgs {
        property_files: Vec::new(),
        properties: a.store_options(),
        db: db.into(),
        path: None,
        cachebench: None,
        cache_size: None,
        disk_path: None,
        disk_size: None,
        url: m.spawn.is_none().then(|| a.url()),
        spawn: m.spawn.clone(),
        threads: Some(a.threads()),
        connections: a.clients_per_thread(),
        pipeline: a.pipeline(),
        timeout: None,
        target_rate: a.target_rate().map(TargetRate::Constant),
        duration: a.duration(),
        warmup: None,
        seed: Some(seed),
        out: m.out.clone(),
        overwrite: m.overwrite,
        interval: Duration::from_secs(1),
        max_errors: m.max_errors,
        progress: m.progress,
        label: m.label.clone(),
        workload_label: m.workload_label.clone(),
        keys: Default::default(),
        memtier: Default::default(),
    };
    let mut props = Properties::new();
    for p in &args.properties {
        props.set_override(p).map_err(|e| usage(e.to_string()))?;
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
    };
    let ctx = Phase {
        phase: "run",
        args,
        props,
        work: AnyWorkload::Memtier(Arc::new(workload)),
        plan,
        report: ReportStyle::Memtier(memtier_report::Options::from_args(a)),
        stop: install_stop_handler(),
        server: Vec::new(),
    };
    open_store(ctx)
}

/// Opens the phase's store and runs the phase on it.
fn open_store(ctx: Phase) -> Result<ExitCode> {
    let store_pairs: Vec<(String, String)> = ctx
        .props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();

    // The one place that knows every store.
    match ctx.args.db.as_str() {
        #[cfg(feature = "rocksdb")]
        "rocksdb" => {
            use kvlab_stores::rocksdb::{RocksDbConfig, RocksDbStore};
            let options = StoreOptions::new("rocksdb.", store_pairs);
            let config = RocksDbConfig::from_options(ctx.args.path.as_deref(), options)
                .map_err(|e| usage(e.message))?;
            let path = config.path.clone();
            let store = RocksDbStore::open(config)
                .with_context(|| format!("opening rocksdb at {}", path.display()))?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "lmdb")]
        "lmdb" => {
            use kvlab_stores::lmdb::{LmdbConfig, LmdbStore};
            let options = StoreOptions::new("lmdb.", store_pairs);
            let config = LmdbConfig::from_options(ctx.args.path.as_deref(), options)
                .map_err(|e| usage(e.message))?;
            let path = config.path.clone();
            let store = LmdbStore::open(config)
                .with_context(|| format!("opening lmdb at {}", path.display()))?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "wiredtiger")]
        "wiredtiger" => {
            use kvlab_stores::wiredtiger::{WiredTigerConfig, WiredTigerStore};
            let options = StoreOptions::new("wiredtiger.", store_pairs);
            let config = WiredTigerConfig::from_options(ctx.args.path.as_deref(), options)
                .map_err(|e| usage(e.message))?;
            let path = config.path.clone();
            let store = WiredTigerStore::open(config)
                .with_context(|| format!("opening wiredtiger at {}", path.display()))?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "moka")]
        "moka" => {
            use kvlab_stores::moka::{MokaConfig, MokaStore};
            let mut pairs = store_pairs;
            if let Some(size) = &ctx.args.cache_size {
                pairs.push(("moka.capacity".into(), size.clone()));
            }
            // Per-entry expiry costs reads; turn it on only for workloads with TTLs.
            if ctx.work.needs().ttl && !pairs.iter().any(|(k, _)| k == "moka.per_entry_ttl") {
                pairs.push(("moka.per_entry_ttl".into(), "true".into()));
            }
            let config = MokaConfig::from_options(StoreOptions::new("moka.", pairs))
                .map_err(|e| usage(e.message))?;
            let store = MokaStore::open(config).context("opening the moka cache")?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "foyer")]
        "foyer" => {
            use kvlab_stores::foyer::{FoyerConfig, FoyerStore};
            let mut pairs = store_pairs;
            for (name, value) in [
                ("foyer.memory", ctx.args.cache_size.clone()),
                (
                    "foyer.disk_path",
                    ctx.args.disk_path.as_ref().map(|p| p.display().to_string()),
                ),
                ("foyer.disk_size", ctx.args.disk_size.clone()),
            ] {
                if let Some(v) = value {
                    pairs.push((name.into(), v));
                }
            }
            let config = FoyerConfig::from_options(StoreOptions::new("foyer.", pairs))
                .map_err(|e| usage(e.message))?;
            let store = FoyerStore::open(config).context("opening the foyer cache")?;
            execute(&ctx, Arc::new(store))
        }
        "redis" => {
            use kvlab_net::redis::{RedisConfig, RedisStore};
            let server = spawn_server(&ctx, kvlab_spawn::ServerKind::Redis)?;
            let url = server_url(&ctx, server.as_ref(), "redis://127.0.0.1:6379")?;
            let mut pairs = store_pairs;
            if let Some(t) = ctx.args.timeout {
                pairs.push(("redis.timeout_ms".into(), t.as_millis().max(1).to_string()));
            }
            // A TLS server kvlab started is trusted through its own CA file.
            if let Some(ca) = server.as_ref().filter(|s| s.tls()).and_then(|s| {
                s.config()
                    .iter()
                    .find(|(k, _)| k == "tls-ca-cert-file")
                    .map(|(_, v)| v.trim_matches('"').to_string())
            }) {
                if !pairs.iter().any(|(k, _)| k == "redis.tls_ca_file") {
                    pairs.push(("redis.tls_ca_file".into(), ca));
                }
            }
            let config = RedisConfig::from_options(
                &url,
                redis_model(&ctx.work),
                StoreOptions::new("redis.", pairs),
            )
            .map_err(|e| usage(e.message))?;
            let shown = config.url.to_string();
            let stats = server_stats(kvlab_spawn::ServerKind::Redis, &config.url);
            let store =
                RedisStore::open(config).with_context(|| format!("opening redis at {shown}"))?;
            execute_with_server(&ctx, &store, server, stats)
        }
        "memcached" => {
            use kvlab_net::memcached::{MemcachedConfig, MemcachedStore};
            let server = spawn_server(&ctx, kvlab_spawn::ServerKind::Memcached)?;
            let url = server_url(&ctx, server.as_ref(), "memcached://127.0.0.1:11211")?;
            let mut pairs = store_pairs;
            if let Some(t) = ctx.args.timeout {
                pairs.push((
                    "memcached.timeout_ms".into(),
                    t.as_millis().max(1).to_string(),
                ));
            }
            let config =
                MemcachedConfig::from_options(&url, StoreOptions::new("memcached.", pairs))
                    .map_err(|e| usage(e.message))?;
            let shown = config.url.to_string();
            let stats = server_stats(kvlab_spawn::ServerKind::Memcached, &config.url);
            let store = MemcachedStore::open(config)
                .with_context(|| format!("opening memcached at {shown}"))?;
            execute_with_server(&ctx, &store, server, stats)
        }
        "null" => {
            StoreOptions::new("null.", store_pairs)
                .finish(&[])
                .map_err(|e| usage(e.message))?;
            execute(&ctx, Arc::new(NullStore))
        }
        other => Err(usage(format!(
            "unknown store `{other}`; available: {}",
            available_stores().join(", ")
        ))),
    }
}

fn available_stores() -> Vec<&'static str> {
    let mut v = Vec::new();
    if cfg!(feature = "rocksdb") {
        v.push("rocksdb");
    }
    if cfg!(feature = "lmdb") {
        v.push("lmdb");
    }
    if cfg!(feature = "wiredtiger") {
        v.push("wiredtiger");
    }
    if cfg!(feature = "moka") {
        v.push("moka");
    }
    if cfg!(feature = "foyer") {
        v.push("foyer");
    }
    v.extend(["redis", "memcached", "null"]);
    v
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

fn stats_map(stats: StoreStats) -> BTreeMap<String, serde_json::Value> {
    stats
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                StatValue::Int(i) => serde_json::Value::from(i),
                StatValue::Float(f) => serde_json::Value::from(f),
                StatValue::Text(s) => serde_json::Value::from(s),
            };
            (k, v)
        })
        .collect()
}

/// The command line as stored in results: passwords in URLs and the value of memtier's
/// `-a`/`--authenticate` replaced by `***`.
fn redact_args(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut secret_next = false;
    for a in args {
        if secret_next {
            out.push("***".into());
            secret_next = false;
            continue;
        }
        if a == "-a" || a == "--authenticate" {
            secret_next = true;
            out.push(a);
        } else if a.starts_with("--authenticate=") {
            out.push("--authenticate=***".into());
        } else if a.starts_with("-a") && a.len() > 2 && !a.starts_with("--") {
            out.push("-a***".into());
        } else {
            out.push(redact_settings(&kvlab_report::redact_url(&a)));
        }
    }
    out
}

/// Server settings whose values are secrets: hidden wherever settings are shown.
const SECRET_SETTINGS: &[&str] = &["requirepass", "masterauth"];

/// `--spawn` settings with the values of [`SECRET_SETTINGS`] replaced by `***`
/// (`requirepass=x,maxmemory=1gb` → `requirepass=***,maxmemory=1gb`).
fn redact_settings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, name)) = SECRET_SETTINGS
        .iter()
        .filter_map(|n| rest.find(&format!("{n}=")).map(|at| (at, *n)))
        .min()
    {
        let value_start = at + name.len() + 1;
        out.push_str(&rest[..value_start]);
        out.push_str("***");
        let value_len = rest[value_start..]
            .find(',')
            .unwrap_or(rest.len() - value_start);
        rest = &rest[value_start + value_len..];
    }
    out.push_str(rest);
    out
}

/// Starts the `--spawn` server of a network store, if asked.
fn spawn_server(ctx: &Phase, kind: kvlab_spawn::ServerKind) -> Result<Option<kvlab_spawn::Server>> {
    let Some(settings) = &ctx.args.spawn else {
        return Ok(None);
    };
    if ctx.args.url.is_some() {
        return Err(usage("give either --url or --spawn, not both"));
    }
    let spec = kvlab_spawn::ServerSpec::parse(kind, settings).map_err(|e| usage(e.to_string()))?;
    let server = kvlab_spawn::Server::start(&spec)?;
    eprintln!(
        "kvlab: started {} {} at {} (pid {})",
        kind,
        server.version(),
        server.url(),
        server.pid()
    );
    Ok(Some(server))
}

/// The server URL: the spawned server's (with its `requirepass` as the password, so a
/// run can authenticate to the server it started), `--url`, or the default.
fn server_url(ctx: &Phase, server: Option<&kvlab_spawn::Server>, default: &str) -> Result<String> {
    Ok(match (server, &ctx.args.url) {
        (Some(s), _) => match s.config().iter().find(|(k, _)| k == "requirepass") {
            Some((_, password)) if s.unix_socket().is_some() => format!(
                "{}?pass={}",
                s.url(),
                memtier_args::percent_encode(password)
            ),
            Some((_, password)) => s.url().replacen(
                "://",
                &format!("://:{}@", memtier_args::percent_encode(password)),
                1,
            ),
            None => s.url(),
        },
        (None, Some(u)) => u.clone(),
        (None, None) => default.to_string(),
    })
}

/// Runs the phase on a store whose server kvlab may have started: a fresh server is
/// empty, so `run` loads the workload's records first; the server is stopped at the
/// end and its version, settings and resource use go into the result.
///
/// `stats` samples the server's statistics for `monitor/store.csv` (over a connection of
/// its own, so never through the store's sessions).
fn execute_with_server<S: Store>(
    ctx: &Phase,
    store: &S,
    server: Option<kvlab_spawn::Server>,
    stats: Option<kvlab_monitor::StoreStatsFn>,
) -> Result<ExitCode> {
    let Some(server) = server else {
        if !store.capabilities().persistent {
            preload(ctx, store, &format!("the {} store", store.name()))?;
        }
        return execute_observed(ctx, store, stats, Vec::new);
    };
    preload(ctx, store, "the new server")?;
    let before = server.sample().ok();
    let mut info: Vec<(String, StatValue)> = vec![
        (
            "spawned.binary".into(),
            server.binary().display().to_string().into(),
        ),
        ("spawned.version".into(), server.version().into()),
        ("spawned.pid".into(), StatValue::from(server.pid() as u64)),
        (
            "spawned.command_line".into(),
            server.command_line().join(" ").into(),
        ),
    ];
    for (k, v) in server.config() {
        let v = if SECRET_SETTINGS.contains(&k.as_str()) {
            "***"
        } else {
            v.as_str()
        };
        info.push((format!("spawned.config.{k}"), v.into()));
    }
    let ctx = Phase {
        phase: ctx.phase,
        args: ctx.args.clone(),
        props: ctx.props.clone(),
        work: ctx.work.clone(),
        plan: ctx.plan.clone(),
        report: ctx.report.clone(),
        stop: Arc::clone(&ctx.stop),
        server: info,
    };
    let code = execute_observed(&ctx, store, stats, || {
        let mut stats = Vec::new();
        if let (Some(b), Ok(a)) = (&before, server.sample()) {
            stats.push((
                "spawned.cpu_user_s".to_string(),
                StatValue::from(a.user_secs - b.user_secs),
            ));
            stats.push((
                "spawned.cpu_system_s".to_string(),
                StatValue::from(a.system_secs - b.system_secs),
            ));
            stats.push((
                "spawned.rss_bytes".to_string(),
                StatValue::from(a.rss_bytes),
            ));
        }
        stats
    });
    match server.stop() {
        Ok(r) => eprintln!("kvlab: server {}", r.describe()),
        Err(e) => eprintln!("kvlab: warning: stopping the server: {e}"),
    }
    code
}

/// Runs the phase on an embedded or in-process store, whose own statistics
/// ([`Store::stats`]) the monitor samples for `monitor/store.csv`.
fn execute<S: Store>(ctx: &Phase, store: Arc<S>) -> Result<ExitCode> {
    if !store.capabilities().persistent {
        preload(ctx, &*store, &format!("the {} store", store.name()))?;
    }
    let sampled = Arc::clone(&store);
    let stats: kvlab_monitor::StoreStatsFn = Box::new(move || numeric_stats(sampled.stats()));
    execute_observed(ctx, &*store, Some(stats), Vec::new)
}

/// The numbers among a store's statistics (text ones, such as a version, are left out).
fn numeric_stats(stats: StoreStats) -> Vec<(String, f64)> {
    stats
        .into_iter()
        .filter_map(|(name, v)| match v {
            StatValue::Int(i) => Some((name, i as f64)),
            StatValue::Float(f) => Some((name, f)),
            StatValue::Text(_) => None,
        })
        .collect()
}

/// The statistics of the servers of `url` (Redis `INFO`, memcached `stats`), sampled over
/// connections of their own (over the URL's UNIX domain socket, if it names one); `None`
/// over TLS, which they do not speak, or when no server name resolves.
fn server_stats(
    kind: kvlab_spawn::ServerKind,
    url: &kvlab_net::ServerUrl,
) -> Option<kvlab_monitor::StoreStatsFn> {
    if url.scheme == "rediss" {
        return None;
    }
    if let Some(path) = &url.socket {
        let mut stats = kvlab_monitor::ServerStats::unix(kind, path.clone()).with_db(url.db);
        if let Some(password) = &url.password {
            stats = stats.with_auth(url.user.clone(), password.clone());
        }
        return Some(stats.into_fn());
    }
    let addrs: Vec<std::net::SocketAddr> = (0..url.hosts.len())
        .filter_map(|i| url.resolve(i).ok())
        .collect();
    if addrs.is_empty() {
        return None;
    }
    let mut stats = kvlab_monitor::ServerStats::new(kind, addrs).with_db(url.db);
    if let Some(password) = &url.password {
        stats = stats.with_auth(url.user.clone(), password.clone());
    }
    Some(stats.into_fn())
}

/// Before `run` on a store that starts empty (a server kvlab started, an in-process
/// cache), loads the workload's records, unmeasured, so reads find what a separate
/// `load` would have written.
fn preload<S: Store>(ctx: &Phase, store: &S, what: &str) -> Result<()> {
    if ctx.phase != "run" || ctx.work.records().map_or(0, |c| c.insert_count()) == 0 {
        return Ok(());
    }
    eprintln!(
        "kvlab: {what} starts empty: loading {} records first",
        ctx.work.records().map_or(0, |c| c.insert_count())
    );
    let plan = RunPlan {
        target_rate: None,
        ..ctx.plan.clone()
    };
    let workload = records(&ctx.work, "load")?;
    let o = kvlab_runner::load(store, workload, &plan, &ctx.stop, &mut |_| {})?;
    let failed = o.total.errors_total();
    if failed > 0 || o.interrupted {
        anyhow::bail!("loading {what} failed: {failed} inserts failed");
    }
    Ok(())
}

/// Runs the phase; `store_stats` is sampled every interval into `monitor/store.csv`,
/// `extra_stats` adds statistics taken at the end (a spawned server's resource use).
fn execute_observed<S: Store>(
    ctx: &Phase,
    store: &S,
    store_stats: Option<kvlab_monitor::StoreStatsFn>,
    extra_stats: impl Fn() -> StoreStats,
) -> Result<ExitCode> {
    eprintln!(
        "kvlab {} {} on {} ({} thread{}, seed {})",
        env!("CARGO_PKG_VERSION"),
        ctx.phase,
        store.name(),
        ctx.plan.threads,
        if ctx.plan.threads == 1 { "" } else { "s" },
        ctx.plan.seed
    );
    if ctx.phase == "verify" {
        return verify(ctx, store);
    }
    if let ReportStyle::Memtier(o) = &ctx.report {
        if o.verify_only() {
            return memtier_verification(ctx, store, ExitCode::SUCCESS);
        }
    }
    if let Some(dir) = &ctx.args.out {
        kvlab_report::prepare_out_dir(dir, ctx.args.overwrite)
            .with_context(|| format!("preparing the output directory {}", dir.display()))?;
    }
    // Resource monitoring and the store's statistics into OUT/monitor/*.csv, every
    // interval, for the whole phase. A parent such as `kvlab suite` may turn it off
    // (KVLAB_MONITOR=off), set its interval (KVLAB_MONITOR_INTERVAL, seconds) and name
    // the server process it started (KVLAB_MONITOR_SERVER_PID).
    let monitor_off = std::env::var_os("KVLAB_MONITOR").is_some_and(|v| v == "off");
    let monitor = ctx
        .args
        .out
        .as_ref()
        .filter(|_| !monitor_off)
        .and_then(|dir| {
            let mut config = kvlab_monitor::MonitorConfig::new(dir);
            config.interval = std::env::var("KVLAB_MONITOR_INTERVAL")
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s > 0.0)
                .map_or(ctx.args.interval, Duration::from_secs_f64);
            config.server_pid = ctx
                .server
                .iter()
                .find_map(|(k, v)| match v {
                    StatValue::Int(pid) if k == "spawned.pid" => Some(*pid as u32),
                    _ => None,
                })
                .or_else(|| {
                    std::env::var("KVLAB_MONITOR_SERVER_PID")
                        .ok()
                        .and_then(|p| p.trim().parse::<u32>().ok())
                });
            config.data_dir = ctx.args.path.clone();
            config.store_stats = store_stats;
            kvlab_monitor::Monitor::start(config)
                .map_err(|e| eprintln!("kvlab: warning: resource monitoring is off: {e}"))
                .ok()
        });
    let runs = match &ctx.report {
        ReportStyle::Memtier(o) => o.run_count(),
        ReportStyle::Ycsb => 1,
    };
    if runs == 1 {
        let done = run_once(ctx, store, ctx.args.out.as_deref())?;
        write_memtier_files(ctx, 1, &done)?;
        let mut stats = store.stats();
        if let Some(m) = monitor {
            match m.stop() {
                Ok(summary) => stats.extend(
                    summary
                        .flat()
                        .into_iter()
                        .map(|(k, v)| (format!("monitor.{k}"), StatValue::Float(v))),
                ),
                Err(e) => eprintln!("kvlab: warning: resource monitoring: {e}"),
            }
        }
        print_report(ctx, &done, &stats)?;
        write_result(
            ctx,
            store,
            ctx.args.out.as_deref(),
            &done,
            stats,
            extra_stats(),
        )?;
        let code = exit_code(ctx, &done.outcome);
        return memtier_verification(ctx, store, code);
    }
    // memtier's -x: the whole test several times against the same store, a second
    // apart, each run's result files in OUT/run-N; the monitor covers them all.
    let mut done: Vec<RunDone> = Vec::new();
    for id in 1..=runs {
        if id > 1 {
            std::thread::sleep(Duration::from_secs(1));
        }
        if ctx.stop.load(Ordering::SeqCst) {
            break;
        }
        eprintln!("kvlab: run {id} of {runs}");
        let dir = ctx.args.out.as_ref().map(|d| d.join(format!("run-{id}")));
        if let Some(dir) = &dir {
            kvlab_report::prepare_out_dir(dir, ctx.args.overwrite)
                .with_context(|| format!("preparing the output directory {}", dir.display()))?;
        }
        let d = run_once(ctx, store, dir.as_deref())?;
        write_memtier_files(ctx, id, &d)?;
        write_result(ctx, store, dir.as_deref(), &d, store.stats(), extra_stats())?;
        let interrupted = d.outcome.interrupted;
        done.push(d);
        if interrupted {
            break;
        }
    }
    if let Some(m) = monitor {
        if let Err(e) = m.stop() {
            eprintln!("kvlab: warning: resource monitoring: {e}");
        }
    }
    let code = done
        .iter()
        .map(|d| exit_code(ctx, &d.outcome))
        .find(|c| *c != ExitCode::SUCCESS)
        .unwrap_or(ExitCode::SUCCESS);
    print_runs_report(ctx, done)?;
    memtier_verification(ctx, store, code)
}

/// memtier's `--data-verify` after the runs (and all of `--verify-only`): its
/// verification client reads the imported objects back ([`kvlab_runner::check_values`]),
/// each failure on stderr as memtier prints it, the counts in the report and the JSON.
/// Returns `code` (the runs' exit code), or 1 when keys failed; nothing is verified
/// after an interrupted run, or without `--data-verify`.
fn memtier_verification<S: Store>(ctx: &Phase, store: &S, code: ExitCode) -> Result<ExitCode> {
    let (ReportStyle::Memtier(o), AnyWorkload::Memtier(w)) = (&ctx.report, &ctx.work) else {
        return Ok(code);
    };
    if !o.data_verify() || ctx.stop.load(Ordering::SeqCst) {
        return Ok(code);
    }
    let mut out: Box<dyn Write> = match o.out_file() {
        Some(path) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    write!(out, "\n\nPerforming data verification...\n")?;
    out.flush()?;
    let mut verifier = w.verifier(ctx.plan.seed);
    let shown = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let check = kvlab_runner::check_values(
        store,
        &ctx.stop,
        &mut |req, expected| verifier.next(req, expected),
        &mut |req, expected, mismatch| match mismatch {
            kvlab_runner::Mismatch::Error(e) => {
                eprintln!("error: request for key [{}] failed: {e}", shown(&req.key));
            }
            kvlab_runner::Mismatch::Value(got) => eprintln!(
                "error: key [{}]: expected [{}], got [{}]",
                shown(&req.key),
                shown(expected),
                shown(got)
            ),
            kvlab_runner::Mismatch::Missing => eprintln!(
                "error: key [{}]: expected [{}], got []",
                shown(&req.key),
                shown(expected)
            ),
        },
    )?;
    write!(
        out,
        "Data verification completed:\n{:<10} keys verified successfuly.\n{:<10} keys failed.\n",
        check.verified, check.failed
    )?;
    out.flush()?;
    if let Some(path) = o.json_out() {
        let mut doc: serde_json::Value = match std::fs::read(path) {
            Ok(text) => serde_json::from_slice(&text)
                .with_context(|| format!("reading {}", path.display()))?,
            Err(_) => serde_json::json!({
                "configuration": ctx.work.effective().into_iter().collect::<BTreeMap<_, _>>()
            }),
        };
        doc["client verifications results"] = serde_json::json!({
            "keys verified successfuly": check.verified,
            "keys failed": check.failed,
        });
        let text = serde_json::to_string_pretty(&doc)?;
        kvlab_report::write_atomic(path, text.as_bytes(), true)?;
    }
    Ok(if check.failed > 0 && code == ExitCode::SUCCESS {
        ExitCode::from(1)
    } else {
        code
    })
}

/// memtier's per-run files of run `run` (from 1): `--hdr-file-prefix` and
/// `--client-stats`.
fn write_memtier_files(ctx: &Phase, run: u32, done: &RunDone) -> Result<()> {
    let ReportStyle::Memtier(o) = &ctx.report else {
        return Ok(());
    };
    if let Some(prefix) = o.hdr_file_prefix() {
        memtier_files::write_hdr_files(
            prefix,
            run,
            &done.outcome,
            done.started,
            o.command_names(),
        )?;
    }
    if let Some(prefix) = o.client_stats() {
        memtier_files::write_client_stats(prefix, run, &done.outcome)?;
    }
    Ok(())
}

/// What one run of a phase leaves behind: its outcome and the series taken during it.
struct RunDone {
    outcome: RunOutcome,
    started: SystemTime,
    timeline: Vec<TimelineRow>,
    /// memtier's per-second figures, when its JSON is asked for.
    seconds: Vec<memtier_report::Second>,
    /// Remarks on the run (interrupted, fell behind, …), printed and kept in the result.
    notes: Vec<String>,
}

/// Runs the phase's workload once, writing the HDR interval log into `dir`.
fn run_once<S: Store>(ctx: &Phase, store: &S, dir: Option<&Path>) -> Result<RunDone> {
    let started = SystemTime::now();
    let mut hlog = match dir {
        Some(dir) => {
            let path = dir.join("latency.hlog");
            let file = std::fs::File::create(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            Some(IntervalLog::new(std::io::BufWriter::new(file), started)?)
        }
        None => None,
    };
    let mut timeline: Vec<TimelineRow> = Vec::new();
    let mut display = progress::Progress::new(ctx.args.progress, ctx.phase);
    let mut hlog_error = None;
    let mut seconds: Vec<memtier_report::Second> = Vec::new();
    let mut observer = |iv: &kvlab_runner::Interval<'_>| {
        display.update(iv);
        if iv.warmup {
            return;
        }
        if let ReportStyle::Memtier(o) = &ctx.report {
            if o.json_out().is_some() {
                seconds.push(memtier_report::Second::from_interval(
                    o,
                    iv.recorder,
                    iv.interval_s,
                ));
            }
        }
        timeline.push(TimelineRow::from_interval(
            iv.time_s,
            iv.interval_s,
            iv.recorder,
        ));
        if let Some(log) = hlog.as_mut() {
            let start = Duration::from_secs_f64((iv.time_s - iv.interval_s).max(0.0));
            if let Err(e) =
                log.write_interval(start, Duration::from_secs_f64(iv.interval_s), iv.recorder)
            {
                hlog_error.get_or_insert(e);
            }
        }
    };
    let outcome = if ctx.phase == "load" {
        let workload = records(&ctx.work, "load")?;
        let o = kvlab_runner::load(store, workload, &ctx.plan, &ctx.stop, &mut observer)?;
        display.finish();
        eprintln!("kvlab: flushing {} after load", store.name());
        store.flush().context("flushing the store after load")?;
        o
    } else {
        let o = with_workload!(&ctx.work, w => {
            kvlab_runner::run(store, w, &ctx.plan, &ctx.stop, &mut observer)?
        });
        if let AnyWorkload::Import(w) = &ctx.work {
            // An import then flushes the store, as `load` does.
            w.finish();
            store.flush().context("flushing the store after import")?;
        }
        display.finish();
        o
    };
    // Dropping the log flushes its buffered writer.
    drop(hlog.take());
    if let Some(e) = hlog_error {
        eprintln!("kvlab: warning: writing the interval log: {e}");
    }
    let mut notes = Vec::new();
    if outcome.interrupted {
        notes.push("interrupted: results cover the operations completed before the stop".into());
    }
    if outcome.error_budget_exceeded {
        notes.push(format!(
            "stopped: more than {} operations failed (--max-errors)",
            ctx.plan.max_errors.unwrap_or(0)
        ));
    }
    if let Some(e) = &outcome.connection_lost {
        notes.push(format!(
            "stopped: {e} (without --reconnect-on-error a lost connection ends the run, as \
             in memtier_benchmark)"
        ));
    }
    if outcome.fell_behind {
        notes.push(format!(
            "fell behind: the client lagged its schedule by up to {:.1} ms; the offered load \
             was below --target-rate, see the Intended-* latencies",
            outcome.max_schedule_lag_ms
        ));
    }
    if ctx.work.data_integrity() {
        notes.push(format!(
            "dataintegrity: {} reads checked, {} did not match",
            outcome.integrity_checked, outcome.integrity_failed
        ));
    }
    notes.extend(import_cmd::extra_notes(&ctx.work, &outcome));

    for n in &notes {
        eprintln!("kvlab: {n}");
    }
    Ok(RunDone {
        outcome,
        started,
        timeline,
        seconds,
        notes,
    })
}

/// The exit code of a finished run: 130 if interrupted, 1 if requests failed beyond
/// `--max-errors` or reads did not match, else success.
fn exit_code(ctx: &Phase, outcome: &RunOutcome) -> ExitCode {
    if outcome.interrupted {
        ExitCode::from(130)
    } else if outcome.error_budget_exceeded
        || outcome.connection_lost.is_some()
        || outcome.integrity_failed > 0
        || import_cmd::extra_failed(&ctx.work)
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Where the text report goes: memtier's `--out-file`, or stdout.
fn report_output(ctx: &Phase) -> Result<Box<dyn Write>> {
    Ok(match &ctx.report {
        ReportStyle::Memtier(o) if o.out_file().is_some() => {
            let path = o.out_file().expect("checked just above");
            Box::new(std::io::BufWriter::new(
                std::fs::File::create(path)
                    .with_context(|| format!("creating {}", path.display()))?,
            ))
        }
        _ => Box::new(std::io::stdout().lock()),
    })
}

/// memtier's `run information` of the JSON document.
fn memtier_run_information(
    ctx: &Phase,
    runtime: Duration,
    interrupted: bool,
) -> serde_json::Map<String, serde_json::Value> {
    let mut run = serde_json::Map::new();
    run.insert("Threads".into(), ctx.plan.threads.into());
    run.insert("Connections per thread".into(), ctx.plan.clients.into());
    run.insert("Pipeline".into(), ctx.plan.pipeline.into());
    run.insert("Seed".into(), ctx.plan.seed.into());
    run.insert(
        "Runtime (msec)".into(),
        (runtime.as_secs_f64() * 1e3).into(),
    );
    run.insert("Interrupted".into(), interrupted.into());
    run
}

/// Prints the report of one run (YCSB's text or memtier's summary and JSON).
fn print_report(ctx: &Phase, done: &RunDone, stats: &StoreStats) -> Result<()> {
    let outcome = &done.outcome;
    let summary = outcome
        .total
        .summary_named(outcome.elapsed, &ctx.work.command_names());
    let mut out = report_output(ctx)?;
    match &ctx.report {
        ReportStyle::Ycsb => {
            kvlab_measure::write_ycsb_text(&summary, &mut out)?;
            import_cmd::write_extra_report(&ctx.work, outcome, &mut out)?;
            if matches!(ctx.work, AnyWorkload::Cache(_))
                || stats.iter().any(|(k, _)| k == "dram_hits")
            {
                write_cache_lines(outcome, stats, &mut out)?;
            }
        }
        ReportStyle::Memtier(o) => {
            memtier_report::print(o, outcome, &mut out)?;
            if let Some(path) = o.json_out() {
                let run = memtier_run_information(ctx, outcome.elapsed, outcome.interrupted);
                let doc = memtier_report::json_document(
                    o,
                    ctx.work.effective(),
                    run,
                    outcome,
                    &done.seconds,
                );
                let text = serde_json::to_string_pretty(&doc)?;
                kvlab_report::write_atomic(path, text.as_bytes(), true)?;
            }
        }
    }
    if ctx.work.data_integrity() {
        writeln!(out, "[VERIFY], Operations, {}", outcome.integrity_checked)?;
        writeln!(
            out,
            "[VERIFY], Return=OK, {}",
            outcome.integrity_checked - outcome.integrity_failed
        )?;
        if outcome.integrity_failed > 0 {
            writeln!(
                out,
                "[VERIFY], Return=UNEXPECTED_STATE, {}",
                outcome.integrity_failed
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Prints memtier's report of several runs (`-x`): best, worst and average, and its JSON.
fn print_runs_report(ctx: &Phase, done: Vec<RunDone>) -> Result<()> {
    let ReportStyle::Memtier(o) = &ctx.report else {
        return Ok(());
    };
    let mut out = report_output(ctx)?;
    let (outcomes, seconds): (Vec<RunOutcome>, Vec<Vec<memtier_report::Second>>) =
        done.into_iter().map(|d| (d.outcome, d.seconds)).unzip();
    memtier_report::print_runs(o, &outcomes, &mut out)?;
    out.flush()?;
    if let Some(path) = o.json_out() {
        let runtime = outcomes.iter().map(|r| r.elapsed).sum();
        let interrupted = outcomes.iter().any(|r| r.interrupted);
        let mut run = memtier_run_information(ctx, runtime, interrupted);
        run.insert("Runs".into(), outcomes.len().into());
        let doc =
            memtier_report::json_document_runs(o, ctx.work.effective(), run, &outcomes, &seconds);
        let text = serde_json::to_string_pretty(&doc)?;
        kvlab_report::write_atomic(path, text.as_bytes(), true)?;
    }
    Ok(())
}

/// Writes `result.json` and `timeline.csv` of a finished run into `dir`, if given.
fn write_result<S: Store>(
    ctx: &Phase,
    store: &S,
    dir: Option<&Path>,
    done: &RunDone,
    stats: StoreStats,
    extra_stats: StoreStats,
) -> Result<()> {
    let Some(dir) = dir else {
        return Ok(());
    };
    let outcome = &done.outcome;
    let doc = ResultDocument {
        kvlab_version: env!("CARGO_PKG_VERSION").to_string(),
        command: redact_args(std::env::args()),
        phase: ctx.phase.to_string(),
        started_at: kvlab_report::rfc3339(done.started),
        finished_at: kvlab_report::rfc3339(SystemTime::now()),
        seed: ctx.plan.seed,
        interrupted: outcome.interrupted,
        fell_behind: outcome.fell_behind,
        workload: ctx.work.effective().into_iter().collect(),
        workload_label: ctx.args.workload_label.clone(),
        runner: runner_section(ctx, outcome),
        store: StoreSection {
            name: store.name().to_string(),
            label: ctx.args.label.clone(),
            options: stats_map(
                store
                    .options()
                    .into_iter()
                    .chain(ctx.server.clone())
                    .collect(),
            ),
            stats: stats_map(stats.into_iter().chain(extra_stats).collect()),
        },
        host: HostInfo::detect(),
        results: outcome
            .total
            .summary_named(outcome.elapsed, &ctx.work.command_names()),
        notes: done.notes.clone(),
    };
    let mut csv = Vec::new();
    kvlab_measure::write_timeline_csv(&done.timeline, &kvlab_core::OpKind::ALL, &mut csv)?;
    kvlab_report::write_atomic(&dir.join("timeline.csv"), &csv, true)?;
    kvlab_report::write_atomic(
        &dir.join("result.json"),
        doc.to_json_pretty().as_bytes(),
        ctx.args.overwrite,
    )?;
    eprintln!("kvlab: results in {}", dir.display());
    Ok(())
}

/// The cache lines of the text report: hit ratio of the gets (reads), get and set
/// throughput, and, when the store reports them, its tiers' hit ratios and evictions.
fn write_cache_lines(outcome: &RunOutcome, stats: &StoreStats, out: &mut dyn Write) -> Result<()> {
    use kvlab_core::{OpKind, Status};
    let t = &outcome.total;
    let hits = t.status_count(OpKind::Read, Status::Ok);
    let misses = t.status_count(OpKind::Read, Status::NotFound);
    let secs = outcome.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
    let ratio = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            100.0 * n as f64 / of as f64
        }
    };
    writeln!(out, "[CACHE], Gets, {}", hits + misses)?;
    writeln!(
        out,
        "[CACHE], HitRatio(%), {:.2}",
        ratio(hits, hits + misses)
    )?;
    let int = |name: &str| {
        stats.iter().find_map(|(k, v)| match v {
            StatValue::Int(i) if k == name => Some(*i as u64),
            _ => None,
        })
    };
    if let (Some(dram), Some(disk)) = (int("dram_hits"), int("disk_hits")) {
        let gets = dram + disk + int("misses").unwrap_or(0);
        writeln!(out, "[CACHE], DramHitRatio(%), {:.2}", ratio(dram, gets))?;
        writeln!(out, "[CACHE], DiskHitRatio(%), {:.2}", ratio(disk, gets))?;
    }
    writeln!(
        out,
        "[CACHE], GetThroughput(ops/sec), {:.1}",
        (hits + misses) as f64 / secs
    )?;
    let sets = t.count(OpKind::Insert) + t.count(OpKind::Update);
    writeln!(
        out,
        "[CACHE], SetThroughput(ops/sec), {:.1}",
        sets as f64 / secs
    )?;
    if let Some(e) = ["evictions", "evicted_keys"].iter().find_map(|n| int(n)) {
        writeln!(out, "[CACHE], Evictions, {e}")?;
    }
    Ok(())
}

fn runner_section(ctx: &Phase, outcome: &RunOutcome) -> BTreeMap<String, serde_json::Value> {
    use serde_json::json;
    let p = &ctx.plan;
    let mut m = BTreeMap::new();
    m.insert("threads".into(), json!(p.threads));
    if !outcome.groups.is_empty() {
        // Thread plans: each group's results, in the plan's group order.
        let groups: Vec<serde_json::Value> = outcome
            .groups
            .iter()
            .map(|g| serde_json::to_value(g.summary(outcome.elapsed)).unwrap_or_default())
            .collect();
        m.insert("group_results".into(), json!(groups));
    }
    m.insert("connections_per_thread".into(), json!(p.clients));
    m.insert("pipeline".into(), json!(p.pipeline));
    // Reads counted per key: differs from the READ counts only for multi-key GETs.
    m.insert("keys_found".into(), json!(outcome.keys_hit));
    m.insert("keys_not_found".into(), json!(outcome.keys_missed));
    if let Some(TargetRate::Sine {
        mean,
        amplitude,
        period,
    }) = p.target_rate
    {
        m.insert(
            "target_rate_sine".into(),
            json!({ "mean": mean, "amplitude": amplitude, "period_s": period.as_secs_f64() }),
        );
    }
    m.insert("operations".into(), json!(p.operations));
    m.insert(
        "duration_s".into(),
        json!(p.duration.map(|d| d.as_secs_f64())),
    );
    m.insert(
        "warmup".into(),
        match p.warmup {
            Warmup::None => json!(null),
            Warmup::Ops(n) => json!({ "operations": n }),
            Warmup::Time(d) => json!({ "seconds": d.as_secs_f64() }),
        },
    );
    m.insert(
        "target_rate_ops_per_sec".into(),
        json!(p.target_rate.map(|r| r.mean())),
    );
    m.insert(
        "loop".into(),
        json!(if p.target_rate.is_some() {
            "open"
        } else {
            "closed"
        }),
    );
    m.insert("interval_s".into(), json!(p.interval.as_secs_f64()));
    m.insert("max_errors".into(), json!(p.max_errors));
    m.insert(
        "max_schedule_lag_ms".into(),
        json!(outcome.max_schedule_lag_ms),
    );
    m.insert(
        "error_budget_exceeded".into(),
        json!(outcome.error_budget_exceeded),
    );
    m.insert("integrity_checked".into(), json!(outcome.integrity_checked));
    m.insert("integrity_failed".into(), json!(outcome.integrity_failed));
    m.insert(
        "property_files".into(),
        json!(ctx
            .args
            .property_files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()),
    );
    m.insert("overrides".into(), json!(ctx.args.properties));
    m.extend(import_cmd::extra_runner(&ctx.work));
    m
}

fn verify<S: Store>(ctx: &Phase, store: &S) -> Result<ExitCode> {
    if let AnyWorkload::Keys(k) = &ctx.work {
        return import_cmd::verify_keys(ctx, store, k);
    }
    let show = progress::enabled(ctx.args.progress);
    let report = kvlab_runner::verify(
        store,
        records(&ctx.work, "verify")?,
        ctx.plan.threads,
        &ctx.stop,
        &|done, total| {
            if show {
                eprint!("\r\x1b[2Kverify {done}/{total}");
            }
        },
    )?;
    if show {
        eprintln!();
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "[VERIFY], Records, {}", report.checked)?;
    writeln!(out, "[VERIFY], Missing, {}", report.missing)?;
    writeln!(out, "[VERIFY], Corrupted, {}", report.corrupted)?;
    writeln!(out, "[VERIFY], Errors, {}", report.errors)?;
    writeln!(
        out,
        "[VERIFY], Values, {}",
        if ctx.work.data_integrity() {
            "checked (dataintegrity=true)"
        } else {
            "not checked (field names only; set -p dataintegrity=true when loading and verifying)"
        }
    )?;
    for k in &report.first_missing {
        writeln!(out, "[VERIFY], MissingKey, {k}")?;
    }
    for k in &report.first_corrupted {
        writeln!(out, "[VERIFY], CorruptedKey, {k}")?;
    }
    for k in &report.first_errors {
        writeln!(out, "[VERIFY], Error, {k}")?;
    }
    out.flush()?;
    if ctx.stop.load(Ordering::Relaxed) {
        eprintln!("kvlab: verify interrupted after {} records", report.checked);
        return Ok(ExitCode::from(130));
    }
    if report.ok() {
        eprintln!("kvlab: verify: all {} records intact", report.checked);
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "kvlab: verify: {} missing, {} corrupted, {} errors of {} records",
            report.missing, report.corrupted, report.errors, report.checked
        );
        Ok(ExitCode::from(1))
    }
}

//! The command line: `kvlab`'s subcommands and their options (clap), and the parsers
//! of durations, target rates and warm-ups.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use kvlab_lab::observe::progress::When;
use kvlab_lab::options::{
    MonitorOptions, PhaseOptions, RecordOptions, Replay, RequestTimeout, Rounds, SloTargets,
};
use kvlab_memtier::{args as memtier_args, run as run_memtier};
use kvlab_runner::TargetRate;

use crate::{
    completions, crash, db_bench_cmd, import_cmd, merge_cmd, model_cmd, replay_cmd, report_cmd,
    sim_cmd, suite, trace_cmd,
};

/// kvlab: a workload lab for key-value stores and caches.
#[derive(Parser, Debug)]
#[command(name = "kvlab", version, about, long_about = None, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Insert the workload's records into the store (YCSB's load phase).
    Load(PhaseArgs),
    /// Run the workload's operation mix against the store (YCSB's transaction phase).
    Run(RunArgs),
    /// Read every loaded record back and report missing or corrupted ones.
    Verify(PhaseArgs),
    /// Run a memtier_benchmark command line: memtier's own flags (-s, -p, -t, -c,
    /// --ratio, --key-pattern, --data-size, --test-time, …) and its summary output.
    #[command(after_long_help = MEMTIER_CHOICES)]
    Memtier(Box<MemtierCommand>),
    /// Report the results below result directories: markdown tables, and with --html
    /// one self-contained HTML page with charts.
    Report(report_cmd::ReportArgs),
    /// Compare two results, or two sets of rounds: throughput, latency per operation,
    /// errors and hit ratio, with the ratio B/A; over rounds medians, 95 % intervals, the
    /// Mann–Whitney p-value and a verdict.
    Compare(report_cmd::CompareArgs),
    /// Merge the results of several kvlab processes (the shards of one experiment,
    /// `--shard I/N`, on one machine or many) exactly: counts added, HDR histograms merged.
    Merge(merge_cmd::MergeArgs),
    /// Keep results in an SQLite history, show a metric over time, and find the change
    /// points that mark regressions (a CI gate with --fail-on-regression).
    History(crate::history_cmd::HistoryCommand),
    /// Crash-test an embedded store: load it in a child process killed with SIGKILL
    /// after --kill-after, then check every acknowledged write (lost / recovered /
    /// corrupted), for several rounds.
    Crash(Box<crash::CrashCommand>),
    /// Load records from a delimited text file (e.g. TPC-H lineitem.tbl): key = the
    /// --key-fields joined with the delimiter, value = the other fields.
    Import(Box<import_cmd::ImportCommand>),
    /// Run a suite file: stores × workloads × threads/connections × rounds, each cell
    /// as its own kvlab process, with resumable results and a summary (docs/suites.md).
    Suite(suite::SuiteCommand),
    /// Replay a trace (any format `kvlab trace` reads) against a store, at the trace's
    /// pace divided by --speed, or as fast as possible (--speed max); results as `run`.
    Replay(Box<replay_cmd::ReplayCommand>),
    /// db_bench's command line for its mixgraph benchmark (`--benchmarks=mixgraph`, its
    /// flags as db_bench spells them), run by kvlab on RocksDB (or --kvlab-db).
    #[command(name = "db_bench")]
    DbBench(db_bench_cmd::DbBenchCommand),
    /// Workload models: `model fit TRACE -o MODEL` fits db_bench's mixgraph model to a
    /// trace (run it with `kvlab run --model MODEL`).
    Model(model_cmd::ModelCommand),
    /// Simulate cache eviction over a trace (libCacheSim's semantics and policies):
    /// miss ratios per policy and size, and LRU's miss-ratio curve in one pass.
    Sim(Box<sim_cmd::SimCommand>),
    /// Read, convert and analyze traces: `trace stats`, `trace dump`, `trace convert`,
    /// `trace analyze` (every common trace format; see docs/traces.md).
    Trace(trace_cmd::TraceCommand),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    Completions(completions::CompletionsCommand),
    /// Print kvlab's manual page (roff), or write one per subcommand with --out-dir.
    Man(completions::ManCommand),
}

/// Where `kvlab memtier` chooses differently from memtier_benchmark 2.3.0, said at the
/// end of `kvlab memtier --help`, where a memtier user looks (the whole list:
/// docs/memtier.md, "Differences from memtier_benchmark").
const MEMTIER_CHOICES: &str = "\
Where kvlab memtier differs from memtier_benchmark 2.3.0 (docs/memtier.md, \"Differences\"):
  Exit code      1 when operations failed (errors beyond --max-errors, a lost connection,
                 a server that cannot be reached, keys --data-verify found wrong), 2 for
                 usage errors; memtier exits 0 whatever it found.
  Server traffic kvlab asks the server for its facts and statistics over extra
                 connections (Redis: INFO server and INFO cluster at start, INFO at the
                 end; memcached: version and stats), for result.json.
                 --no-server-queries sends memtier's traffic only.
  Lost connection
                 without --reconnect-on-error it stops the whole run (memtier stops the
                 thread that lost it).
  Random streams Xoshiro256++ from the seed: memtier's key patterns, distributions and
                 cycles, not its glibc random_r keys one for one.
  Redis Cluster  MOVED and ASK are followed and the request counted once, with its final
                 reply (memtier counts the redirection as the operation).
  TLS            without --cacert the system's CA bundle is trusted; a certificate in
                 --cacert is also trusted as the server's own (a self-signed server).
  kvlab's flags  --out, --overwrite, --record, --metrics, --monitor, --spawn, --label,
                 --max-errors, --progress, --no-server-queries: kvlab's result files and
                 options, beside memtier's own.";

/// `kvlab memtier`: memtier_benchmark's flags plus kvlab's result options.
#[derive(Args, Debug, Clone)]
pub(crate) struct MemtierCommand {
    #[command(flatten)]
    pub(crate) memtier: memtier_args::MemtierArgs,
    /// Directory for kvlab's result.json, timeline.csv and latency.hlog.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Replace results already in --out.
    #[arg(long)]
    pub(crate) overwrite: bool,
    /// Start a local server instead of connecting to -s/-p (settings as for `run`).
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, default_missing_value = "")]
    pub(crate) spawn: Option<String>,
    /// Stop once more than this many requests have failed.
    #[arg(long, value_name = "N")]
    pub(crate) max_errors: Option<u64>,
    /// A name for the store in results and reports (default: redis or memcached).
    #[arg(long, value_name = "NAME")]
    pub(crate) label: Option<String>,
    /// A name for the workload in results and reports (default: `memtier`, told apart from
    /// other memtier runs by the flags that differ); a suite passes its workload's name.
    #[arg(long, value_name = "NAME")]
    pub(crate) workload_label: Option<String>,
    /// Progress display on stderr: auto, always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub(crate) progress: ProgressArg,
    #[command(flatten)]
    pub(crate) record: RecordArgs,
    #[command(flatten)]
    pub(crate) monitor: MonitorArgs,
}

/// Trace recording of a phase (`--record FILE`).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct RecordArgs {
    /// Record every request of the phase, as the client issued it and as it ended
    /// (intended and actual start, op, key, value size, scan length, TTL, outcome,
    /// latency), to FILE in kvlab's trace format (.kvtrace): read it with `kvlab trace`,
    /// replay it with `kvlab replay`.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// With --record: keep this fraction of the keys (every request of a kept key;
    /// chosen by a hash of the key, so the same keys in every run).
    #[arg(long, value_name = "FRACTION", default_value = "1", value_parser = parse_fraction)]
    pub(crate) record_sample: f64,
}

impl RecordArgs {
    /// The recording's options as plain values.
    pub(crate) fn into_options(self) -> RecordOptions {
        RecordOptions {
            record: self.record,
            record_sample: self.record_sample,
        }
    }
}

/// `--start-at`: an RFC 3339 timestamp or seconds since the epoch.
fn parse_start_at(s: &str) -> Result<std::time::SystemTime, String> {
    if let Some(t) = kvlab_report::parse_rfc3339(s) {
        return Ok(t);
    }
    match s.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => {
            Ok(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(secs))
        }
        _ => Err(format!(
            "`{s}`: expected an RFC 3339 time (2026-11-27T21:40:00Z) or seconds since the epoch"
        )),
    }
}

/// A fraction in (0, 1].
fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!(
            "expected a fraction in (0, 1], e.g. 0.1; got `{s}`"
        )),
    }
}

/// Resource monitoring of a phase with `--out` (`OUT/monitor/*.csv`): on by default,
/// every `--interval`. A parent such as `kvlab suite` passes its own settings here.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct MonitorArgs {
    /// Resource monitoring (host, kvlab, server and store statistics into
    /// OUT/monitor/*.csv): on (default) or off.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off,
          action = clap::ArgAction::Set)]
    pub(crate) monitor: bool,
    /// How often the monitor samples (default: --interval).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub(crate) monitor_interval: Option<Duration>,
    /// A server process to sample into the monitor's server_* columns, when kvlab did
    /// not start it itself (--spawn names its own).
    #[arg(long, value_name = "PID")]
    pub(crate) monitor_server_pid: Option<u32>,
    /// Serve live metrics in Prometheus' text format at http://ADDR/metrics while the
    /// phase runs (e.g. 127.0.0.1:9464; port 0 picks a free one, said on stderr):
    /// operations, errors and latency histograms so far, the last interval's throughput
    /// and quantiles (docs/monitoring.md).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics: Option<std::net::SocketAddr>,
}

impl MonitorArgs {
    /// The monitor's options as plain values.
    pub(crate) fn into_options(self) -> MonitorOptions {
        MonitorOptions {
            monitor: self.monitor,
            monitor_interval: self.monitor_interval,
            monitor_server_pid: self.monitor_server_pid,
            metrics: self.metrics,
        }
    }
}

fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}`: expected on or off")),
    }
}

#[derive(Args, Debug, Clone)]
pub(crate) struct PhaseArgs {
    /// A YCSB workload property file; several are read in order, later ones win.
    #[arg(short = 'P', value_name = "FILE")]
    pub(crate) property_files: Vec<PathBuf>,
    /// A property override, `name=value` (after every -P file).
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub(crate) properties: Vec<String>,
    /// The store: rocksdb, lmdb, wiredtiger, moka, foyer, redis, memcached, null.
    #[arg(long, value_name = "STORE")]
    pub(crate) db: String,
    /// Data directory of an embedded store (same as -p rocksdb.dir=DIR).
    #[arg(long, value_name = "DIR")]
    pub(crate) path: Option<PathBuf>,
    /// A CacheBench config (JSON with a test_config): its workload runs instead of a
    /// property file's; scale it with -p numKeys=… -p numOps=… -p numThreads=….
    #[arg(long, value_name = "FILE")]
    pub(crate) cachebench: Option<PathBuf>,
    /// Capacity of an in-process cache (moka; foyer's memory tier), e.g. 256MiB.
    #[arg(long, value_name = "SIZE")]
    pub(crate) cache_size: Option<String>,
    /// RocksDB's merge operator, which a replay's merges go through (same as
    /// -p rocksdb.merge_operator=NAME): put (the last operand wins), uint64add (adds
    /// 8-byte little-endian integers; an operand of another size counts as 0),
    /// stringappend (joins with commas), max, none (merges replay as puts).
    #[arg(long, value_name = "NAME", value_parser = kvlab_lab::phase::checks::MERGE_OPERATORS)]
    pub(crate) merge_operator: Option<String>,
    /// Directory of a hybrid cache's disk tier (foyer).
    #[arg(long, value_name = "DIR")]
    pub(crate) disk_path: Option<PathBuf>,
    /// Capacity of a hybrid cache's disk tier (foyer), e.g. 1GiB.
    #[arg(long, value_name = "SIZE")]
    pub(crate) disk_size: Option<String>,
    /// Server of a network store: redis://user:password@host:port/db (credentials and
    /// db optional), rediss://… for TLS, memcached://host:port,host:port…; a UNIX
    /// domain socket: redis+unix:///path?db=N (or unix:///path), memcached+unix:///path.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Start a local server for the run (redis-server or memcached from PATH) on a free
    /// loopback port, with comma-separated settings, e.g. maxmemory=512mb or m=64,t=4
    /// (unixsocket=PATH or s=PATH: on a UNIX domain socket); it starts empty, so `run`
    /// loads the workload's records first.
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, default_missing_value = "")]
    pub(crate) spawn: Option<String>,
    /// Worker threads (YCSB `threadcount`).
    #[arg(long, short = 't', value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// Connections per thread (network stores), each its own client.
    #[arg(long, short = 'c', value_name = "N", default_value_t = 1)]
    pub(crate) connections: usize,
    /// Requests in flight per connection: each client sends this many, then reads the
    /// replies.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) pipeline: usize,
    /// Per-request timeout of network stores (e.g. 500ms, 2s, or `none`; default 5s): a
    /// request without a reply by then fails as a timeout, so a stalled server cannot
    /// hold a client forever.
    #[arg(long, value_name = "TIME")]
    pub(crate) timeout: Option<RequestTimeout>,
    /// Open loop at this many operations per second in total (YCSB `-target`), or a
    /// swinging load `sine:MEAN,AMPLITUDE,PERIOD` (e.g. sine:20000,10000,60s); latency
    /// is then also measured from each request's intended start.
    #[arg(long, alias = "target", value_name = "OPS", value_parser = parse_target_rate)]
    pub(crate) target_rate: Option<TargetRate>,
    /// Run for this long instead of `operationcount` operations (e.g. 30, 30s, 2m).
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    pub(crate) duration: Option<Duration>,
    /// Warm up before measuring: a time (10s) or an operation count (50000ops).
    #[arg(long, value_name = "TIME|Nops")]
    pub(crate) warmup: Option<String>,
    /// Seed of every random choice; printed and stored in the result. Random if unset.
    #[arg(long, value_name = "N")]
    pub(crate) seed: Option<u64>,
    /// Run as shard I of N of one experiment spread over N processes (on one machine or
    /// many): `load` inserts the I-th of N contiguous slices of the records (YCSB's
    /// insertstart/insertcount), `run` the I-th share of the operations and of
    /// --target-rate, with a seed of its own; `kvlab merge` merges their results exactly.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<kvlab_report::Shard>,
    /// The API of a running toxiproxy-server (HOST:PORT, e.g. 127.0.0.1:8474) that
    /// --fault goes through.
    #[arg(long, value_name = "HOST:PORT")]
    pub(crate) toxiproxy: Option<String>,
    /// A network fault during the phase, through --toxiproxy:
    /// `KIND[:VALUE][,NAME=VALUE…]@START[-END]` with KIND `latency:TIME` (`jitter=TIME`),
    /// `bandwidth:KBPS`, `timeout[:TIME]`, `reset[:TIME]`, `slow_close:TIME`,
    /// `limit_data:BYTES` or `down`; e.g. `latency:50ms@5s-10s`, `down@3s-4s` (repeatable;
    /// docs/durability.md).
    #[arg(long = "fault", value_name = "SPEC")]
    pub(crate) faults: Vec<kvlab_lab::observe::fault::FaultSpec>,
    /// Crash tests: with `load` or `run`, append every write the store acknowledged to
    /// FILE (one write per completed batch, so it survives the process being killed);
    /// with `verify`, check every record against FILE: recovered, lost, corrupted
    /// (`[CRASH], …` lines; exit code 1 when an acknowledged write was lost).
    #[arg(long, value_name = "FILE")]
    pub(crate) expected_log: Option<PathBuf>,
    /// Search the highest rate at which the store meets latency targets, e.g.
    /// `p99=1ms,p99.9=5ms`: closed loop for its capacity, then open-loop steps at 10 … 100 %
    /// of it (the latency–throughput curve) and halvings around the limit; latency from
    /// each request's intended start. Writes OUT/slo.json, OUT/curve.csv, OUT/steps/NN.
    #[arg(long, value_name = "TARGETS")]
    pub(crate) slo: Option<SloTargets>,
    /// With --slo: how long each step runs.
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "10s")]
    pub(crate) slo_step: Duration,
    /// `run --rounds` ([`RoundsArgs`]): not a flag of the other phases.
    #[arg(skip)]
    pub(crate) rounds: Option<Rounds>,
    /// `run --rounds-target`.
    #[arg(skip = 2.0)]
    pub(crate) rounds_target: f64,
    /// `run --max-rounds`.
    #[arg(skip = 20u32)]
    pub(crate) max_rounds: u32,
    /// Start the phase at this wall-clock time, so that shards on several machines start
    /// together: RFC 3339 (2026-11-27T21:40:00Z) or seconds since the epoch. The store is
    /// opened and connected first.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub(crate) start_at: Option<std::time::SystemTime>,
    /// Directory for result.json, timeline.csv and latency.hlog.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Replace results already in --out, and a --record file that exists.
    #[arg(long)]
    pub(crate) overwrite: bool,
    /// Reporting interval (timeline rows, interval log, progress), e.g. 1s.
    #[arg(long, value_name = "TIME", default_value = "1s", value_parser = parse_duration)]
    pub(crate) interval: Duration,
    /// Stop once more than this many operations have failed.
    #[arg(long, value_name = "N")]
    pub(crate) max_errors: Option<u64>,
    /// Progress display on stderr: auto (when stderr is a terminal), always, never.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub(crate) progress: ProgressArg,
    #[command(flatten)]
    pub(crate) record: RecordArgs,
    /// A name for the store in results and reports (default: the --db kind), e.g. to
    /// tell two redis configurations apart.
    #[arg(long, value_name = "NAME")]
    pub(crate) label: Option<String>,
    /// A name for the workload in results and reports (default: the property files'
    /// names, told apart by the properties that differ); a suite passes its workload's name.
    #[arg(long, value_name = "NAME")]
    pub(crate) workload_label: Option<String>,
    #[command(flatten)]
    pub(crate) monitor: MonitorArgs,
    #[command(flatten)]
    pub(crate) keys: import_cmd::KeyArgs,
    #[command(flatten)]
    pub(crate) memtier: run_memtier::RunMemtierArgs,
    /// Run a workload model (`kvlab model fit` writes one): db_bench's mixgraph with the
    /// model's flags (`-p FLAG=VALUE` overrides them).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<PathBuf>,
    /// `kvlab replay`: the trace replay to run instead of a workload.
    #[arg(skip)]
    pub(crate) replay: Option<Replay>,
}

pub(crate) use kvlab_lab::plan::parse_duration;

/// `--progress`: when to show the live progress line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ProgressArg {
    /// When stderr is a terminal.
    Auto,
    /// Always (one line per interval when stderr is not a terminal).
    Always,
    /// Never.
    Never,
}

impl From<ProgressArg> for When {
    fn from(p: ProgressArg) -> When {
        match p {
            ProgressArg::Auto => When::Auto,
            ProgressArg::Always => When::Always,
            ProgressArg::Never => When::Never,
        }
    }
}

/// A usage error: bad flags, properties or configuration (exit code 2).
#[derive(Debug)]
pub(crate) struct UsageError(String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

pub(crate) fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

impl PhaseArgs {
    /// Every flag at its default, for `--db db`: what a command that runs a phase of its
    /// own (`kvlab memtier`, `kvlab sim -P`, `kvlab db_bench`) starts from before it sets
    /// its own fields. The defaults are clap's, so they are written once, on the flags.
    pub(crate) fn defaults(db: &str) -> Result<PhaseArgs> {
        /// The phase flags alone.
        #[derive(Parser)]
        struct Flags {
            #[command(flatten)]
            args: PhaseArgs,
        }
        let flags =
            Flags::try_parse_from(["kvlab", "--db", db]).map_err(|e| usage(e.to_string()))?;
        Ok(flags.args)
    }

    /// The options as plain values, for the phase engine.
    pub(crate) fn into_options(self) -> PhaseOptions {
        PhaseOptions {
            property_files: self.property_files,
            properties: self.properties,
            db: self.db,
            path: self.path,
            cachebench: self.cachebench,
            cache_size: self.cache_size,
            merge_operator: self.merge_operator,
            disk_path: self.disk_path,
            disk_size: self.disk_size,
            url: self.url,
            spawn: self.spawn,
            threads: self.threads,
            connections: self.connections,
            pipeline: self.pipeline,
            timeout: self.timeout,
            target_rate: self.target_rate,
            duration: self.duration,
            warmup: self.warmup,
            seed: self.seed,
            shard: self.shard,
            toxiproxy: self.toxiproxy,
            faults: self.faults,
            expected_log: self.expected_log,
            slo: self.slo,
            slo_step: self.slo_step,
            rounds: self.rounds,
            rounds_target: self.rounds_target,
            max_rounds: self.max_rounds,
            start_at: self.start_at,
            out: self.out,
            overwrite: self.overwrite,
            interval: self.interval,
            max_errors: self.max_errors,
            progress: self.progress.into(),
            record: self.record.into_options(),
            label: self.label,
            workload_label: self.workload_label,
            monitor: self.monitor.into_options(),
            keys: self.keys.into_options(),
            memtier: self.memtier,
            model: self.model,
            replay: self.replay,
        }
    }
}

pub(crate) fn parse_target_rate(s: &str) -> std::result::Result<TargetRate, String> {
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

/// `kvlab run`: a phase's arguments and its rounds.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) phase: PhaseArgs,
    #[command(flatten)]
    pub(crate) rounds: RoundsArgs,
}

impl RunArgs {
    /// The phase's arguments, the rounds in them.
    pub(crate) fn into_phase(self) -> PhaseArgs {
        PhaseArgs {
            rounds: self.rounds.rounds,
            rounds_target: self.rounds.rounds_target,
            max_rounds: self.rounds.max_rounds,
            ..self.phase
        }
    }
}

/// `run`'s own flags: repeating the measured run.
#[derive(Args, Debug)]
pub(crate) struct RoundsArgs {
    /// Repeat the measured run, N times or `auto` — until the 95 % interval of the
    /// median throughput is within --rounds-target of it (3 rounds at least,
    /// --max-rounds at most). Each round's results go to OUT/round-N, the summary to
    /// OUT/rounds.json; `kvlab compare` reads the rounds.
    #[arg(long, value_name = "N|auto")]
    pub(crate) rounds: Option<Rounds>,
    /// With --rounds auto: the interval's half-width to reach, in percent of the median.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, default_value = "2")]
    pub(crate) rounds_target: f64,
    /// With --rounds auto: stop after this many rounds whether or not the interval is
    /// narrow enough (the summary says which).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) max_rounds: u32,
}

fn parse_percent(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p),
        _ => Err(format!(
            "`{s}`: expected a percentage above 0 and below 100 (2 or 2%)"
        )),
    }
}

/// A refusal of the phase library as the command's usage error (exit code 2).
pub(crate) fn refused(r: kvlab_lab::Refusal) -> anyhow::Error {
    usage(r.0)
}

#[cfg(test)]
mod tests {
    use kvlab_lab::phase::checks::{apply_merge_operator, check_store_flags, MERGE_OPERATORS};
    use kvlab_lab::Refusal;
    use kvlab_workload::Properties;

    use super::*;

    /// Every command's flags are clap-valid (unique names and long flags, defaults that
    /// parse): clap checks this only when a command is built, so a clash in a command
    /// no test runs would first show as a user's panic.
    #[test]
    fn every_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// `kvlab ARGV…`'s phase arguments and properties as `select_phase` makes them.
    fn phase(argv: &[&str]) -> (PhaseOptions, Result<Properties>) {
        let cli = Cli::try_parse_from(argv).unwrap();
        let args = match cli.command {
            Command::Run(a) => a.into_phase(),
            Command::Load(a) => a,
            c => panic!("not a phase: {c:?}"),
        }
        .into_options();
        let mut props = Properties::new();
        for p in &args.properties {
            props.set_override(p).unwrap();
        }
        let result = apply_merge_operator(&args, &mut props).map(|()| props);
        (args, result)
    }

    #[cfg(feature = "rocksdb")]
    #[test]
    fn merge_operator_names_are_the_stores() {
        assert_eq!(&MERGE_OPERATORS[..], kvlab_stores::rocksdb::MERGE_OPERATORS);
    }

    #[test]
    fn merge_operator_is_the_rocksdb_property() {
        let (args, props) = phase(&[
            "kvlab",
            "run",
            "--db",
            "rocksdb",
            "--merge-operator",
            "uint64add",
        ]);
        let props = props.unwrap();
        assert_eq!(props.get("rocksdb.merge_operator"), Some("uint64add"));
        check_store_flags(&args, &props).unwrap();

        // Both, agreeing: fine; disagreeing: a usage error naming both.
        let (_, props) = phase(&[
            "kvlab",
            "load",
            "--db",
            "rocksdb",
            "-p",
            "rocksdb.merge_operator=max",
            "--merge-operator",
            "max",
        ]);
        assert_eq!(props.unwrap().get("rocksdb.merge_operator"), Some("max"));
        let (_, props) = phase(&[
            "kvlab",
            "run",
            "--db",
            "rocksdb",
            "-p",
            "rocksdb.merge_operator=put",
            "--merge-operator",
            "uint64add",
        ]);
        let e = props.unwrap_err();
        assert!(e.downcast_ref::<Refusal>().is_some());
        assert_eq!(
            e.to_string(),
            "--merge-operator uint64add and rocksdb.merge_operator=put (from -p) disagree: \
             give one of them"
        );

        // Not a merge operator RocksDB has by that name: clap refuses it.
        let bad =
            Cli::try_parse_from(["kvlab", "run", "--db", "rocksdb", "--merge-operator", "sum"])
                .unwrap_err();
        assert_eq!(bad.kind(), clap::error::ErrorKind::InvalidValue);
    }

    #[test]
    fn merge_operator_on_another_store_is_refused_naming_it() {
        for db in ["lmdb", "redis", "memcached", "null"] {
            let (args, props) = phase(&["kvlab", "run", "--db", db, "--merge-operator", "put"]);
            let e = check_store_flags(&args, &props.unwrap()).unwrap_err();
            assert!(e.downcast_ref::<Refusal>().is_some());
            assert_eq!(
                e.to_string(),
                format!(
                    "--merge-operator put does not apply to --db {db}: it is RocksDB's merge \
                     operator (-p rocksdb.merge_operator); on --db {db} a replay's merges are \
                     puts"
                )
            );
        }
    }
}

//! A phase's options as plain values: what `kvlab load`, `run`, `verify`, `replay`,
//! `import`, `memtier`, `db_bench` and `sim -P` hand the phase engine once their
//! command lines are parsed. The command line's flag structs convert into
//! [`PhaseOptions`]; nothing below it sees a parser.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kvlab_memtier::run::RunMemtierArgs;
use kvlab_report::Shard;
use kvlab_runner::TargetRate;
use kvlab_workload::{ReplayWorkload, ValueFormat};

use crate::observe::fault::FaultSpec;
use crate::observe::progress::When;
use crate::plan::parse_duration;

/// Every option of a phase (`--db`, `-P`, `-p`, the store, load, output and observer
/// flags), by the flags' names.
#[derive(Clone, Debug)]
pub struct PhaseOptions {
    /// `-P`: YCSB property files, read in order.
    pub property_files: Vec<PathBuf>,
    /// `-p name=value`: property overrides, after every file.
    pub properties: Vec<String>,
    /// `--db`: the store's name (a row of [`crate::STORES`]).
    pub db: String,
    /// `--path`: an embedded store's data directory.
    pub path: Option<PathBuf>,
    /// `--cachebench`: a CacheBench config whose workload runs.
    pub cachebench: Option<PathBuf>,
    /// `--cache-size`: an in-process cache's capacity, as given (e.g. `256MiB`).
    pub cache_size: Option<String>,
    /// `--merge-operator`: RocksDB's merge operator by db_bench's name.
    pub merge_operator: Option<String>,
    /// `--disk-path`: a hybrid cache's disk tier.
    pub disk_path: Option<PathBuf>,
    /// `--disk-size`: a hybrid cache's disk capacity, as given.
    pub disk_size: Option<String>,
    /// `--url`: a network store's server.
    pub url: Option<String>,
    /// `--spawn`: start a local server with these comma-separated settings.
    pub spawn: Option<String>,
    /// `--threads`: worker threads (else the `threadcount` property).
    pub threads: Option<usize>,
    /// `--connections`: clients per thread of a network store.
    pub connections: usize,
    /// `--pipeline`: requests in flight per connection.
    pub pipeline: usize,
    /// `--timeout`: a network store's per-request timeout; `None` when not given.
    pub timeout: Option<RequestTimeout>,
    /// `--target-rate`: an open loop at this rate.
    pub target_rate: Option<TargetRate>,
    /// `--duration`: run for this long instead of `operationcount` operations.
    pub duration: Option<Duration>,
    /// `--warmup`: a time (`10s`) or an operation count (`50000ops`), as given.
    pub warmup: Option<String>,
    /// `--seed`: the seed of every random choice; random when `None`.
    pub seed: Option<u64>,
    /// `--shard I/N`: this process's share of one experiment.
    pub shard: Option<Shard>,
    /// `--toxiproxy`: the API address `--fault` goes through.
    pub toxiproxy: Option<String>,
    /// `--fault`: network faults during the phase.
    pub faults: Vec<FaultSpec>,
    /// `--expected-log`: the crash tests' log of acknowledged writes.
    pub expected_log: Option<PathBuf>,
    /// `--slo`: search the highest rate that meets these latency targets.
    pub slo: Option<SloTargets>,
    /// `--slo-step`: how long each step of the search runs.
    pub slo_step: Duration,
    /// `run --rounds`.
    pub rounds: Option<Rounds>,
    /// `run --rounds-target`: the interval, in percent of the median, auto rounds aim at.
    pub rounds_target: f64,
    /// `run --max-rounds`: the most rounds `--rounds auto` runs.
    pub max_rounds: u32,
    /// `--start-at`: the wall-clock time the phase starts at.
    pub start_at: Option<SystemTime>,
    /// `--out`: the result directory.
    pub out: Option<PathBuf>,
    /// `--overwrite`: replace results (and a `--record` file) that exist.
    pub overwrite: bool,
    /// `--interval`: the reporting interval.
    pub interval: Duration,
    /// `--max-errors`: stop once more operations than this have failed.
    pub max_errors: Option<u64>,
    /// `--progress`: when to show the live progress line.
    pub progress: When,
    /// `--record` and `--record-sample`.
    pub record: RecordOptions,
    /// `--label`: the store's name in results.
    pub label: Option<String>,
    /// `--workload-label`: the workload's name in results.
    pub workload_label: Option<String>,
    /// `--monitor…` and `--metrics`.
    pub monitor: MonitorOptions,
    /// `--keys`, `--value-format` and the thread plan's options.
    pub keys: KeyOptions,
    /// memtier's workload flags on `kvlab run` (`--ratio`, `--key-*`, …): the flag group
    /// of `kvlab-memtier`, which owns memtier's syntax.
    pub memtier: RunMemtierArgs,
    /// `--model`: a fitted workload model to run.
    pub model: Option<PathBuf>,
    /// `kvlab replay`: the trace replay that runs instead of a workload.
    pub replay: Option<Replay>,
}

impl PhaseOptions {
    /// The per-request timeout of network stores: `--timeout`, else
    /// [`DEFAULT_REQUEST_TIMEOUT`]; `None` waits forever.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.timeout.map_or(Some(DEFAULT_REQUEST_TIMEOUT), |t| t.0)
    }
}

/// Trace recording of a phase (`--record FILE`).
#[derive(Clone, Debug, Default)]
pub struct RecordOptions {
    /// The trace file every request of the phase is written to.
    pub record: Option<PathBuf>,
    /// The fraction of keys kept (every request of a kept key).
    pub record_sample: f64,
}

/// Resource monitoring (`OUT/monitor/*.csv`) and live metrics of a phase.
#[derive(Clone, Debug, Default)]
pub struct MonitorOptions {
    /// Whether the monitor samples at all.
    pub monitor: bool,
    /// How often it samples (default: the reporting interval).
    pub monitor_interval: Option<Duration>,
    /// A server process kvlab did not start, sampled into the server columns.
    pub monitor_server_pid: Option<u32>,
    /// Where live metrics are served in Prometheus' text format.
    pub metrics: Option<SocketAddr>,
}

/// Key files and thread plans of `run` and `verify` (see `kvlab import`).
#[derive(Clone, Debug, Default)]
pub struct KeyOptions {
    /// `--keys`: a key file, one key per line.
    pub keys: Option<PathBuf>,
    /// `--value-format`: how values are stored.
    pub value_format: Option<ValueFormat>,
    /// `--plan`: a thread plan file.
    pub plan: Option<PathBuf>,
    /// `--plan-config ID:R:W:U`: mixes for `--thread-plan-map`.
    pub plan_config: Vec<String>,
    /// `--thread-plan-map THREADS:ID`: which threads run which mix.
    pub thread_plan_map: Vec<String>,
}

/// A per-request timeout; `None` waits forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);

/// A network store's per-request timeout when `--timeout` is not given: long enough for
/// any key-value request, short enough that a stalled server fails requests instead of
/// holding a run.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

impl std::str::FromStr for RequestTimeout {
    type Err = String;

    /// A duration (`500ms`, `2s`), or `none`.
    fn from_str(s: &str) -> Result<RequestTimeout, String> {
        if s.eq_ignore_ascii_case("none") {
            return Ok(RequestTimeout(None));
        }
        parse_duration(s).map(|d| RequestTimeout(Some(d)))
    }
}

/// `--rounds`: a fixed count, or until the throughput's interval is narrow enough.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounds {
    /// Exactly this many rounds (at least 1).
    Fixed(u32),
    /// Until `--rounds-target` is met, within `--max-rounds`.
    Auto,
}

impl std::str::FromStr for Rounds {
    type Err = String;

    /// `auto`, or a number of rounds (at least 1).
    fn from_str(s: &str) -> Result<Rounds, String> {
        if s == "auto" {
            return Ok(Rounds::Auto);
        }
        match s.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Rounds::Fixed(n)),
            _ => Err(format!(
                "`{s}`: expected `auto` or a number of rounds (at least 1)"
            )),
        }
    }
}

/// The latency targets of `--slo`: `(percentile, latency)` pairs, e.g. `p99=1ms`.
#[derive(Clone, Debug, PartialEq)]
pub struct SloTargets(pub Vec<(f64, Duration)>);

impl std::str::FromStr for SloTargets {
    type Err = String;

    /// `pNN=LATENCY[,pNN=LATENCY…]`: `p99=1ms`, `p99.9=5ms`, `p50=200us`.
    fn from_str(s: &str) -> Result<SloTargets, String> {
        let mut targets = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || {
                format!(
                    "`{part}`: expected pPERCENTILE=LATENCY, e.g. p99=1ms, p99.9=5ms, p50=200us"
                )
            };
            let (p, latency) = part.split_once('=').ok_or_else(bad)?;
            let p: f64 = p
                .trim()
                .strip_prefix('p')
                .and_then(|p| p.parse().ok())
                .ok_or_else(bad)?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("`{part}`: a percentile is above 0 and at most 100"));
            }
            let latency = parse_latency(latency.trim()).ok_or_else(bad)?;
            targets.push((p, latency));
        }
        if targets.is_empty() {
            return Err("give at least one target, e.g. p99=1ms".into());
        }
        Ok(SloTargets(targets))
    }
}

/// `250us`, `250µs`, `1.5ms`, `2s`.
fn parse_latency(s: &str) -> Option<Duration> {
    let (n, unit) = [("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)]
        .into_iter()
        .find_map(|(suffix, unit)| s.strip_suffix(suffix).map(|n| (n, unit)))?;
    let v: f64 = n.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then(|| Duration::from_secs_f64(v * unit))
}

impl std::fmt::Display for SloTargets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(p, d)| format!("p{p}={}", latency_text(*d)))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// A latency as `--slo` reads it back: µs below a millisecond, else ms.
fn latency_text(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us}us")
    } else {
        format!("{}ms", us / 1000.0)
    }
}

/// The trace replay a run phase carries instead of a workload (`kvlab replay`).
#[derive(Clone, Debug)]
pub struct Replay {
    /// The replay, reading the trace as it goes.
    pub workload: Arc<ReplayWorkload>,
    /// Whether the store is loaded with the trace's keys before the replay.
    pub preload: bool,
}

#[cfg(test)]
mod tests {
    use super::SloTargets;
    use std::time::Duration;

    /// Targets read in µs, ms and s, print back as given, and refuse what is not one.
    #[test]
    fn targets_read_and_print_back() {
        let t: SloTargets = "p99=1ms, p99.9=5ms,p50=250us".parse().unwrap();
        assert_eq!(
            t.0,
            [
                (99.0, Duration::from_millis(1)),
                (99.9, Duration::from_millis(5)),
                (50.0, Duration::from_micros(250)),
            ]
        );
        assert_eq!(t.to_string(), "p99=1ms,p99.9=5ms,p50=250us");
        assert_eq!(
            "p100=2s".parse::<SloTargets>().unwrap().0[0].1,
            Duration::from_secs(2)
        );
        for bad in [
            "", "p99", "99=1ms", "p0=1ms", "p101=1ms", "p99=1", "p99=-1ms", "p99=0ms",
        ] {
            assert!(bad.parse::<SloTargets>().is_err(), "{bad}");
        }
    }
}

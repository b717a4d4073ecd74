//! `kvlab memtier`: memtier_benchmark's own command-line flags, so that a memtier command
//! line runs with `memtier_benchmark` replaced by `kvlab memtier`.
//!
//! [`MemtierArgs`] accepts memtier's flag names, short flags, value syntax and defaults
//! (`memtier_benchmark.cpp`: `config_parse_args`, `config_init_defaults`). Flags kvlab
//! honours become a [`MemtierSpec`] ([`MemtierArgs::spec`]), a server URL
//! ([`MemtierArgs::url`]) and run-plan values (threads, clients, requests or test
//! time, pipeline, rate). Flags kvlab does not implement still parse, and
//! [`MemtierArgs::validate`] then refuses them with
//! `not supported by kvlab memtier: --FLAG (reason)`, except memtier 2.3.0's newer
//! flags that change no request (StatsD, staircase ramp-up, connection jitter,
//! reconnection limits), which are accepted with a warning ([`MemtierArgs::warnings`]):
//! never silently ignored. As with memtier's `getopt_long`, the last of a repeated flag
//! wins and words that are not flags are ignored (with a warning).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::{
    ArbitraryCommand, DataSize, ExpiryRange, ImportedItems, KeyPattern, MemtierSpec, Ratio,
    SizePattern, SizeWeight, WaitSpec, MAX_DATA_SIZE_BYTES,
};
use clap::{ArgAction, Args, ValueEnum};

/// The run seed without `--randomize` or `--seed`: memtier's clients use a constant
/// seed by default, so two runs send the same keys.
pub const CONSTANT_SEED: u64 = 0;

/// memtier's `-P/--protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MemtierProtocol {
    /// Redis RESP, the server's default version.
    #[value(name = "redis")]
    Redis,
    /// Redis RESP2, set with HELLO 2.
    #[value(name = "resp2")]
    Resp2,
    /// Redis RESP3, set with HELLO 3.
    #[value(name = "resp3")]
    Resp3,
    /// memcached's text protocol.
    #[value(name = "memcache_text")]
    MemcacheText,
    /// memcached's binary protocol.
    #[value(name = "memcache_binary")]
    MemcacheBinary,
}

impl MemtierProtocol {
    /// True for the Redis protocols.
    pub fn is_redis(self) -> bool {
        matches!(
            self,
            MemtierProtocol::Redis | MemtierProtocol::Resp2 | MemtierProtocol::Resp3
        )
    }
}

/// memtier's `-n/--requests`: a count per client, or `allkeys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requests {
    /// Requests per client.
    PerClient(u64),
    /// Enough requests to cover the key range (memtier: `key-maximum − key-minimum`
    /// per client, or for `P:P` each client's slice, `range/(clients × threads) + 1`).
    AllKeys,
}

/// `--data-size-list`'s entries (a newtype so that clap takes the list as one value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeList(pub Vec<SizeWeight>);

/// One occurrence of `--command`, `--command-ratio` or `--command-key-pattern`,
/// numbered in command-line order: memtier applies a ratio or key pattern to the last
/// `--command` before it, so the three lists are merged back into that order.
#[derive(Clone, Debug, PartialEq)]
pub struct Sequenced<T> {
    /// The position among every sequenced value parsed so far (increasing along a
    /// command line).
    pub seq: u64,
    /// The value.
    pub value: T,
}

/// The next sequence number: clap parses a command line's values in order.
pub(crate) fn next_seq() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// `--print-percentiles`' values, in percent.
#[derive(Clone, Debug, PartialEq)]
pub struct Percentiles(pub Vec<f64>);

/// memtier_benchmark's command line (see the module docs). Defaults are memtier's; as
/// with memtier's `getopt_long`, a flag given twice takes its last value
/// (`args_override_self`), and words that are not flags are ignored.
#[derive(Args, Debug, Clone)]
#[command(disable_help_flag = true, args_override_self = true)]
pub struct MemtierArgs {
    // ---- Connection and general options ----
    /// Server address (default: localhost).
    #[arg(
        short = 's',
        long,
        visible_alias = "host",
        short_alias = 'h',
        value_name = "ADDR"
    )]
    pub server: Option<String>,
    /// Server port (default: 6379).
    #[arg(
        short = 'p',
        long,
        value_name = "PORT",
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub port: Option<u16>,
    /// UNIX domain socket to connect to instead of --server/--port
    /// (redis+unix:// or memcached+unix://).
    #[arg(short = 'S', long, value_name = "SOCKET")]
    pub unix_socket: Option<PathBuf>,
    /// Resolve --server to IPv4 addresses only.
    #[arg(short = '4', long)]
    pub ipv4: bool,
    /// Resolve --server to IPv6 addresses only.
    #[arg(short = '6', long)]
    pub ipv6: bool,
    /// Protocol: redis, resp2, resp3, memcache_text, memcache_binary.
    #[arg(short = 'P', long, value_name = "PROTOCOL", default_value = "redis")]
    pub protocol: MemtierProtocol,
    /// Credentials: a password, or USER:PASSWORD for Redis 6 ACL users.
    #[arg(short = 'a', long, value_name = "CREDENTIALS")]
    pub authenticate: Option<String>,
    /// Server URI, redis://user:password@host:port/dbnum; takes precedence over
    /// --server, --port, --authenticate and --select-db.
    #[arg(short = 'u', long, value_name = "URI")]
    pub uri: Option<String>,
    /// Connect over TLS (rediss://).
    #[arg(long)]
    pub tls: bool,
    /// Client certificate (PEM) to present to a server that authenticates clients.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// CA certificates (PEM) that verify the server (default: the system roots).
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Do not verify the server's certificate.
    #[arg(long)]
    pub tls_skip_verify: bool,
    /// Server name sent in the TLS handshake (SNI) and verified.
    #[arg(long, value_name = "STRING")]
    pub sni: Option<String>,
    /// TLS protocol versions to offer, comma-separated: TLSv1.2, TLSv1.3 (kvlab's TLS
    /// library has no TLSv1 or TLSv1.1).
    #[arg(long, value_name = "LIST")]
    pub tls_protocols: Option<String>,
    /// Number of full-test iterations: the report shows the best, the worst and their
    /// average; each run's result files go to OUT/run-N.
    #[arg(short = 'x', long, value_name = "NUMBER", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub run_count: u32,
    /// Print debug output (repeat for more).
    #[arg(short = 'D', long, action = ArgAction::Count)]
    pub debug: u8,
    /// A Redis Cluster: slots from CLUSTER SLOTS, a connection per master per client.
    #[arg(long)]
    pub cluster_mode: bool,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
    /// Print the version and exit.
    #[arg(short = 'v', long)]
    pub version: bool,
    /// Words that are not flags: ignored, as memtier's `getopt_long` loop leaves them.
    #[arg(hide = true, value_name = "IGNORED")]
    pub ignored: Vec<String>,

    // ---- Results output options ----
    /// Name of the output file (default: stdout).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub out_file: Option<PathBuf>,
    /// Name of the JSON output file (kvlab writes its own result document there).
    #[arg(long, value_name = "FILE")]
    pub json_out_file: Option<PathBuf>,
    /// Per-client stats files: PREFIX-RUN-THREAD-CLIENT.csv, each client's requests
    /// second by second and its latency distributions.
    #[arg(long, value_name = "FILE", value_parser = parse_file_prefix)]
    pub client_stats: Option<String>,
    /// Prefix of HDR histogram files: PREFIX_FULL_RUN_N, PREFIX_GET_command_run_N and
    /// PREFIX_SET_command_run_N, each .txt (percentiles) and .hgrm (HdrHistogram log).
    #[arg(long, value_name = "FILE", value_parser = parse_file_prefix)]
    pub hdr_file_prefix: Option<String>,
    /// Print the configuration before running.
    #[arg(long)]
    pub show_config: bool,
    /// Leave out the request latency distribution that follows the table.
    #[arg(long)]
    pub hide_histogram: bool,
    /// Percentiles to print (default: 50,99,99.9).
    #[arg(long, value_name = "LIST", value_parser = parse_percentiles)]
    pub print_percentiles: Option<Percentiles>,
    /// With -x, print the results of every run before the best, worst and average.
    #[arg(long)]
    pub print_all_runs: bool,

    // ---- Test options ----
    /// Requests per client, or `allkeys` for the whole key range (default: 10000).
    #[arg(short = 'n', long, value_name = "NUMBER", value_parser = parse_requests,
          conflicts_with = "test_time")]
    pub requests: Option<Requests>,
    /// Maximum requests per second from each connection (default: unlimited).
    #[arg(long, value_name = "NUMBER", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limiting: Option<u32>,
    /// Clients (connections) per thread.
    #[arg(short = 'c', long, value_name = "NUMBER", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub clients: u32,
    /// Threads.
    #[arg(short = 't', long, value_name = "NUMBER", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// Seconds to run the test.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..))]
    pub test_time: Option<u32>,
    /// Set:Get ratio: per cycle, SETS sets then GETS gets (default: 1:10).
    #[arg(long, value_name = "SETS:GETS", value_parser = parse_ratio)]
    pub ratio: Option<Ratio>,
    /// Pipelined requests per connection.
    #[arg(long, value_name = "NUMBER", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub pipeline: u32,
    /// Close and reopen each client's connection after this many requests.
    #[arg(long, value_name = "NUM", value_parser = clap::value_parser!(u32).range(1..))]
    pub reconnect_interval: Option<u32>,
    /// On a lost connection, reconnect (with back-off) and go on; without it the run
    /// stops at the first lost connection.
    #[arg(long)]
    pub reconnect_on_error: bool,
    /// Connection (and TLS handshake) timeout in seconds (0, memtier's default: kvlab's
    /// 5 s).
    #[arg(long, value_name = "SECS")]
    pub connection_timeout: Option<u32>,
    /// memtier 2.3.0: reconnection attempts after a lost connection (0: unlimited).
    /// kvlab reconnects with its own back-off (see docs/memtier.md) and warns.
    #[arg(long, value_name = "NUM")]
    pub max_reconnect_attempts: Option<u32>,
    /// memtier 2.3.0: back-off factor between reconnection attempts. Ignored, with a
    /// warning: kvlab's back-off doubles from 10 ms to 1 s.
    #[arg(long, value_name = "FACTOR", value_parser = parse_backoff_factor)]
    pub reconnect_backoff_factor: Option<f64>,
    /// memtier 2.3.0: least random delay before each thread's connections open, in µs.
    /// Ignored, with a warning.
    #[arg(long, value_name = "MICROS")]
    pub thread_conn_start_min_jitter_micros: Option<u32>,
    /// memtier 2.3.0: most random delay before each thread's connections open, in µs.
    /// Ignored, with a warning.
    #[arg(long, value_name = "MICROS")]
    pub thread_conn_start_max_jitter_micros: Option<u32>,
    /// memtier 2.3.0: clients per thread at start of a staircase ramp-up. Ignored, with
    /// a warning: every client runs from the start.
    #[arg(long, value_name = "NUM", value_parser = clap::value_parser!(u32).range(1..))]
    pub clients_start: Option<u32>,
    /// memtier 2.3.0: clients added per step of the ramp-up. Ignored, with a warning.
    #[arg(long, value_name = "NUM", value_parser = clap::value_parser!(u32).range(1..))]
    pub clients_step: Option<u32>,
    /// memtier 2.3.0: seconds per step of the ramp-up. Ignored, with a warning.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u32).range(1..))]
    pub step_duration: Option<u32>,
    /// memtier 2.3.0: StatsD host for live metrics. Ignored, with a warning.
    #[arg(long, value_name = "HOST")]
    pub statsd_host: Option<String>,
    /// memtier 2.3.0: StatsD port. Ignored, with a warning.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub statsd_port: Option<u16>,
    /// memtier 2.3.0: StatsD metric prefix. Ignored, with a warning.
    #[arg(long, value_name = "PREFIX")]
    pub statsd_prefix: Option<String>,
    /// memtier 2.3.0: StatsD run label. Ignored, with a warning.
    #[arg(long, value_name = "LABEL")]
    pub statsd_run_label: Option<String>,
    /// memtier 2.3.0: Graphite port for StatsD. Ignored, with a warning.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub graphite_port: Option<u16>,
    /// memtier 2.3.0: a `redis-cli monitor` capture to replay. Refused: kvlab replays
    /// such captures with `kvlab replay --format monitor`.
    #[arg(long, value_name = "FILE")]
    pub monitor_input: Option<PathBuf>,
    /// memtier 2.3.0: which monitor commands to replay, S or R. Without --monitor-input
    /// it changes nothing (accepted with a warning).
    #[arg(long, value_name = "S|R", value_parser = parse_monitor_pattern)]
    pub monitor_pattern: Option<char>,
    /// memtier 2.3.0: one table row per command name (`command`, the default, as kvlab
    /// does) or per `--command` line (`line`, refused).
    #[arg(long, value_name = "command|line")]
    pub command_stats_breakdown: Option<String>,
    /// memtier 2.3.0: SCAN commands follow the cursor of the last reply. Refused.
    #[arg(long)]
    pub scan_incremental_iteration: bool,
    /// memtier 2.3.0: most SCAN iterations per cursor walk. Without
    /// --scan-incremental-iteration it changes nothing (accepted with a warning).
    #[arg(long, value_name = "NUM")]
    pub scan_incremental_max_iterations: Option<u32>,
    /// Multi-key GETs of up to NUM keys each (Redis MGET, memcached `get k1 … kN`).
    #[arg(long, value_name = "NUM", value_parser = clap::value_parser!(u32).range(1..))]
    pub multi_key_get: Option<u32>,
    /// Redis database to select.
    #[arg(long, value_name = "DB")]
    pub select_db: Option<u32>,
    /// A different random seed for each client.
    #[arg(long)]
    pub distinct_client_seed: bool,
    /// A random run seed (printed), instead of the constant one.
    #[arg(long, conflicts_with = "seed")]
    pub randomize: bool,
    /// kvlab extension: the run seed (default: 0, memtier's constant seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// kvlab extension: send the server memtier's traffic only — no INFO (Redis) or
    /// version/stats (memcached) queries for server facts and statistics.
    #[arg(long)]
    pub no_server_queries: bool,

    // ---- Arbitrary commands ----
    /// A command to send instead of SET/GET, in quotes (repeatable), e.g.
    /// --command="set __key__ __data__": __key__ is a key of the key options, __data__ a
    /// value of the object options (redis protocols only).
    #[arg(long, value_name = "COMMAND", value_parser = parse_command)]
    pub command: Vec<Sequenced<ArbitraryCommand>>,
    /// Times the last --command is sent in a row per cycle (default: 1).
    #[arg(long, value_name = "NUMBER", value_parser = parse_command_ratio)]
    pub command_ratio: Vec<Sequenced<u32>>,
    /// Key pattern of the last --command: R, S, G, P or Z (default: R).
    #[arg(long, value_name = "R|S|G|P|Z", value_parser = parse_command_key_pattern)]
    pub command_key_pattern: Vec<Sequenced<KeyPattern>>,

    // ---- Object options ----
    /// Value size in bytes (default: 32).
    #[arg(short = 'd', long, value_name = "SIZE", value_parser = parse_data_size,
          conflicts_with_all = ["data_size_range", "data_size_list"])]
    pub data_size: Option<u32>,
    /// Write values OFFSET bytes into their strings: SETRANGE key OFFSET value and
    /// GETRANGE key OFFSET -1 (redis only, not with --expiry-range).
    #[arg(long, value_name = "OFFSET")]
    pub data_offset: Option<u32>,
    /// Random value bytes instead of x…x.
    #[arg(short = 'R', long)]
    pub random_data: bool,
    /// Random value sizes in MIN-MAX.
    #[arg(long, value_name = "RANGE", value_parser = parse_size_range,
          conflicts_with = "data_size_list")]
    pub data_size_range: Option<(u32, u32)>,
    /// Value sizes from a weight list, SIZE1:WEIGHT1,…
    #[arg(long, value_name = "LIST", value_parser = parse_size_list)]
    pub data_size_list: Option<SizeList>,
    /// With --data-size-range: R random sizes, S sizes spread over the key range.
    #[arg(long, value_name = "R|S", default_value = "R", value_parser = parse_size_pattern)]
    pub data_size_pattern: SizePattern,
    /// Random TTLs in seconds from MIN-MAX.
    #[arg(long, value_name = "RANGE", value_parser = parse_expiry_range)]
    pub expiry_range: Option<ExpiryRange>,

    // ---- Imported data options ----
    /// Objects for SETs from a memtier/memcached dump file (`dumpflags, time, exptime, …`
    /// CSV): keys, values and expiry times.
    #[arg(long, value_name = "FILE")]
    pub data_import: Option<PathBuf>,
    /// After the test, read the imported objects back and count those that differ
    /// (needs --data-import).
    #[arg(long)]
    pub data_verify: bool,
    /// Only verify the imported objects, without a test (implies --data-verify).
    #[arg(long)]
    pub verify_only: bool,
    /// Imported values under generated keys (--key-prefix, --key-minimum, --key-maximum).
    #[arg(long)]
    pub generate_keys: bool,
    /// Write imported objects without their expiry time.
    #[arg(long)]
    pub no_expiry: bool,

    // ---- Key options ----
    /// Key prefix.
    #[arg(long, value_name = "PREFIX", default_value = "memtier-")]
    pub key_prefix: String,
    /// Smallest key number.
    #[arg(long, value_name = "NUMBER", default_value_t = 0)]
    pub key_minimum: u64,
    /// Largest key number.
    #[arg(long, value_name = "NUMBER", default_value_t = 10_000_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub key_maximum: u64,
    /// SET:GET key patterns: R random, S sequential, G Gaussian, P parallel, Z Zipf
    /// (default: R:R).
    #[arg(long, value_name = "PATTERN", value_parser = parse_key_pattern)]
    pub key_pattern: Option<(KeyPattern, KeyPattern)>,
    /// Standard deviation of G (default: key range / 6).
    #[arg(long, value_name = "NUMBER", value_parser = parse_key_stddev)]
    pub key_stddev: Option<f64>,
    /// Median of G (default: the middle of the key range).
    #[arg(long, value_name = "NUMBER", value_parser = parse_key_median)]
    pub key_median: Option<f64>,
    /// Exponent of Z, in (0, 5) (default: 1).
    #[arg(long, value_name = "NUMBER", value_parser = parse_zipf_exp)]
    pub key_zipf_exp: Option<f64>,

    // ---- WAIT options ----
    /// Set:Wait ratio: WAIT numreplicas timeout among the SETs and GETs (redis only).
    #[arg(long, value_name = "SETS:WAITS", value_parser = parse_wait_ratio)]
    pub wait_ratio: Option<Ratio>,
    /// Replicas each WAIT waits for, uniform in MIN-MAX (default: 0-0).
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_num_slaves)]
    pub num_slaves: Option<(u32, u32)>,
    /// WAIT timeouts in milliseconds, Gaussian in MIN-MAX (default: 0-0).
    #[arg(long, value_name = "MIN-MAX", value_parser = parse_wait_timeout)]
    pub wait_timeout: Option<(u32, u32)>,
}

/// `not supported by kvlab memtier: FLAG (reason)`.
fn unsupported(flag: &str, reason: &str) -> String {
    format!("not supported by kvlab memtier: {flag} ({reason})")
}

impl MemtierArgs {
    /// Refuses every flag kvlab does not implement, and the combinations memtier itself
    /// refuses, with a message naming the flag and why.
    pub fn validate(&self) -> Result<(), String> {
        let checks: &[(bool, &str, &str)] = &[
            (
                self.authenticate.is_some() && self.protocol == MemtierProtocol::MemcacheBinary,
                "--authenticate with -P memcache_binary",
                "memcached SASL authentication is not implemented",
            ),
            (
                self.monitor_input.is_some(),
                "--monitor-input",
                "replay a redis-cli monitor capture with `kvlab replay --format monitor`",
            ),
            (
                self.scan_incremental_iteration,
                "--scan-incremental-iteration",
                "SCAN cursors are not followed; each SCAN is sent as written",
            ),
            (
                self.command_stats_breakdown
                    .as_deref()
                    .is_some_and(|b| b.eq_ignore_ascii_case("line")),
                "--command-stats-breakdown=line",
                "kvlab's rows are per command name",
            ),
        ];
        // memtier's own refusals while it parses (`config_parse_args`, exit code 2) come
        // first, as there.
        if let Some(b) = self.command_stats_breakdown.as_deref() {
            if !b.eq_ignore_ascii_case("command") && !b.eq_ignore_ascii_case("line") {
                return Err("command-stats-breakdown must be 'command' or 'line'".to_string());
            }
        }
        let staircase = [self.clients_start, self.clients_step, self.step_duration];
        if staircase.iter().any(Option::is_some) {
            if staircase.iter().any(Option::is_none) {
                return Err(
                    "--clients-start, --clients-step, and --step-duration must all be \
                            specified together"
                        .to_string(),
                );
            }
            if self.requests.is_some() {
                return Err("--requests cannot be used with client staircase mode. Use \
                            --test-time instead"
                    .to_string());
            }
        }
        if self.cluster_mode && self.reconnect_interval.is_some() {
            return Err("cluster mode does not support reconnect-interval option".to_string());
        }
        if let Some((_, flag, reason)) = checks.iter().find(|c| c.0) {
            return Err(unsupported(flag, reason));
        }
        if let Some(uri) = &self.uri {
            parse_uri(uri)?;
        }
        // memtier's own refusals (memtier_benchmark.cpp, main).
        if self.authenticate.is_some() && self.protocol == MemtierProtocol::MemcacheText {
            return Err(
                "--authenticate can only be used with redis or memcache_binary".to_string(),
            );
        }
        let tls_uri = self
            .uri
            .as_deref()
            .is_some_and(|u| u.starts_with("rediss://"));
        let tls_options = self.cacert.is_some()
            || self.tls_protocols.is_some()
            || self.tls_skip_verify
            || self.sni.is_some()
            || self.cert.is_some()
            || self.key.is_some();
        if (self.tls || tls_options || tls_uri) && !self.protocol.is_redis() {
            return Err("TLS (--tls and its options) is for the redis protocols".to_string());
        }
        if tls_options && !(self.tls || tls_uri) {
            return Err(
                "--cacert, --tls-skip-verify, --tls-protocols, --sni, --cert and --key need \
                 --tls"
                    .to_string(),
            );
        }
        if self.cert.is_some() != self.key.is_some() {
            return Err("--cert and --key go together".to_string());
        }
        if self.ipv4 && self.ipv6 {
            return Err("give -4/--ipv4 or -6/--ipv6, not both".to_string());
        }
        if self.unix_socket.is_some() && (self.tls || self.cluster_mode) {
            return Err("-S/--unix-socket cannot be used with --tls or --cluster-mode".to_string());
        }
        if self.cluster_mode && !self.protocol.is_redis() {
            return Err("--cluster-mode can only be used with the redis protocols".to_string());
        }
        if self.cluster_mode && self.select_db.is_some_and(|db| db > 0) {
            return Err("--select-db cannot be used with --cluster-mode".to_string());
        }
        // memtier_benchmark.cpp, main: the data offset's own checks.
        if let Some(offset) = self.data_offset.filter(|&o| o > 0) {
            if offset > kvlab_net::redis::MAX_DATA_OFFSET {
                return Err(format!(
                    "--data-offset={offset}: data-offset too long (at most {})",
                    kvlab_net::redis::MAX_DATA_OFFSET
                ));
            }
            if self.expiry_range.is_some() || !self.protocol.is_redis() {
                return Err(
                    "--data-offset can only be used with redis protocol, and cannot be \
                            used with expiry (--expiry-range)"
                        .to_string(),
                );
            }
        }
        if self.select_db.is_some_and(|db| db > 0) && !self.protocol.is_redis() {
            return Err("--select-db can only be used with the redis protocol".to_string());
        }
        self.validate_commands()?;
        Ok(())
    }

    /// The checks memtier makes once its flags are parsed and its defaults filled in, and
    /// answers with exit code 1 rather than the usage error's 2 (`memtier_benchmark.cpp`,
    /// `main`): client staircase and connection jitter bounds, a UNIX socket beside
    /// `-s`/`-p`, a `--command` of several keys in cluster mode, and imported data
    /// (`--data-verify`, `--no-expiry` without an import; sizes, random data, cluster
    /// mode or key options with one). Call it after [`MemtierArgs::validate`];
    /// [`MemtierArgs::spec`] calls both.
    pub fn validate_setup(&self) -> Result<(), String> {
        if let Some(start) = self.clients_start {
            if start >= self.clients {
                return Err(format!(
                    "--clients-start ({start}) must be less than --clients ({})",
                    self.clients
                ));
            }
            if self.test_time.is_none() {
                return Err("--test-time is required when using client staircase mode".to_string());
            }
        }
        let min_jitter = self.thread_conn_start_min_jitter_micros.unwrap_or(0);
        let max_jitter = self.thread_conn_start_max_jitter_micros.unwrap_or(0);
        if min_jitter > max_jitter {
            return Err(format!(
                "thread-conn-start-min-jitter-micros ({min_jitter}) cannot be greater than \
                 thread-conn-start-max-jitter-micros ({max_jitter})"
            ));
        }
        if self.unix_socket.is_some() && (self.server.is_some() || self.port.is_some()) {
            return Err(
                "UNIX domain socket and TCP cannot be used together (-S/--unix-socket \
                        with -s/--server or -p/--port)"
                    .to_string(),
            );
        }
        if self.cluster_mode {
            if let Some(c) = self.commands()?.iter().find(|c| c.key_count() > 1) {
                return Err(format!(
                    "--command `{}`: cluster mode supports only single-key commands",
                    c.text
                ));
            }
        }
        // Imported data.
        if self.data_import.is_none() {
            if self.data_verify || self.verify_only {
                return Err("use data-verify only with data-import: --data-verify and \
                            --verify-only check the objects of --data-import=FILE"
                    .to_string());
            }
            if self.no_expiry {
                return Err("use no-expiry only with data-import (--data-import=FILE)".to_string());
            }
        } else {
            if self.cluster_mode {
                return Err(
                    "--cluster-mode cannot be specified when importing (--data-import)".to_string(),
                );
            }
            if self.data_size.is_some()
                || self.data_size_list.is_some()
                || self.data_size_range.is_some()
            {
                return Err(
                    "data size (--data-size, --data-size-list, --data-size-range) \
                            cannot be specified when importing (--data-import)"
                        .to_string(),
                );
            }
            if self.random_data {
                return Err(
                    "--random-data cannot be specified when importing (--data-import)".to_string(),
                );
            }
            let default = MemtierSpec::default();
            if !self.generate_keys
                && (self.key_prefix != default.key_prefix
                    || self.key_minimum != default.key_minimum
                    || self.key_maximum != default.key_maximum)
            {
                return Err("use key-minimum, key-maximum and key-prefix only with \
                            generate-keys (--data-import without --generate-keys uses the \
                            file's keys)"
                    .to_string());
            }
        }
        Ok(())
    }

    /// memtier's refusals around `--command` and `--wait-ratio`
    /// (`verify_arbitrary_command_option`, `verify_cluster_option`,
    /// `format_arbitrary_command`), and kvlab's own for flags memtier would silently
    /// ignore beside them.
    fn validate_commands(&self) -> Result<(), String> {
        let commands = self.commands()?;
        let wait = self.wait_ratio.is_some();
        if !commands.is_empty() {
            if !self.protocol.is_redis() {
                return Err(format!(
                    "--command can only be used with the redis protocols (-P redis, resp2, \
                     resp3), not -P {}",
                    protocol_name(self.protocol)
                ));
            }
            if self.key_pattern.is_some() {
                return Err(
                    "when using arbitrary command, key pattern is configured with \
                            --command-key-pattern option (not --key-pattern)"
                        .to_string(),
                );
            }
            if self.ratio.is_some() {
                return Err("when using arbitrary command, ratio is configured with \
                            --command-ratio option (not --ratio)"
                    .to_string());
            }
            for (given, flag) in [
                (wait, "--wait-ratio"),
                (self.multi_key_get.is_some(), "--multi-key-get"),
                (self.expiry_range.is_some(), "--expiry-range"),
            ] {
                if given {
                    return Err(format!(
                        "{flag} does not apply to --command (memtier ignores it beside \
                         arbitrary commands); leave it out"
                    ));
                }
            }
        }
        if wait {
            if !self.protocol.is_redis() {
                return Err("--wait-ratio can only be used with the redis protocols".into());
            }
            if self.cluster_mode {
                return Err("--wait-ratio cannot be used with --cluster-mode (memtier: \
                            cluster mode does not support wait-ratio)"
                    .into());
            }
        } else if self.num_slaves.is_some() || self.wait_timeout.is_some() {
            return Err(
                "--num-slaves and --wait-timeout set the WAITs of --wait-ratio, \
                        which is not given"
                    .into(),
            );
        }
        Ok(())
    }

    /// The `--command`s in order, each with the `--command-ratio` and
    /// `--command-key-pattern` given after it (before the next `--command`); an error
    /// for a ratio or key pattern before any command.
    pub fn commands(&self) -> Result<Vec<ArbitraryCommand>, String> {
        enum Item<'a> {
            Command(&'a ArbitraryCommand),
            Ratio(u32),
            Pattern(KeyPattern),
        }
        let mut items: Vec<(u64, Item<'_>)> = Vec::new();
        items.extend(
            self.command
                .iter()
                .map(|c| (c.seq, Item::Command(&c.value))),
        );
        items.extend(
            self.command_ratio
                .iter()
                .map(|r| (r.seq, Item::Ratio(r.value))),
        );
        items.extend(
            self.command_key_pattern
                .iter()
                .map(|p| (p.seq, Item::Pattern(p.value))),
        );
        items.sort_by_key(|(seq, _)| *seq);
        let mut commands: Vec<ArbitraryCommand> = Vec::new();
        for (_, item) in items {
            match item {
                Item::Command(c) => commands.push(c.clone()),
                Item::Ratio(r) => match commands.last_mut() {
                    Some(c) => c.ratio = r,
                    None => {
                        return Err(format!(
                            "--command-ratio={r}: no arbitrary command found (it applies to \
                             the --command before it)"
                        ))
                    }
                },
                Item::Pattern(p) => match commands.last_mut() {
                    Some(c) => c.key_pattern = p,
                    None => {
                        return Err(format!(
                            "--command-key-pattern={}: no arbitrary command found (it \
                             applies to the --command before it)",
                            p.letter()
                        ))
                    }
                },
            }
        }
        Ok(commands)
    }

    /// `--wait-ratio`, `--num-slaves` and `--wait-timeout` (memtier's defaults: 0-0).
    pub fn wait(&self) -> Option<WaitSpec> {
        let ratio = self.wait_ratio?;
        let (min_replicas, max_replicas) = self.num_slaves.unwrap_or((0, 0));
        let (min_timeout_ms, max_timeout_ms) = self.wait_timeout.unwrap_or((0, 0));
        Some(WaitSpec {
            sets: ratio.sets,
            waits: ratio.gets,
            min_replicas,
            max_replicas,
            min_timeout_ms,
            max_timeout_ms,
        })
    }

    /// The workload these flags describe: [`MemtierArgs::validate`] and
    /// [`MemtierArgs::validate_setup`], then memtier's defaults and the workload's own
    /// validation.
    pub fn spec(&self) -> Result<MemtierSpec, String> {
        self.validate()?;
        self.validate_setup()?;
        let data_size = if let Some(n) = self.data_size {
            DataSize::Fixed(n)
        } else if let Some(list) = &self.data_size_list {
            DataSize::List(list.0.clone())
        } else if let Some((min_bytes, max_bytes)) = self.data_size_range {
            DataSize::Range {
                min_bytes,
                max_bytes,
                pattern: self.data_size_pattern,
            }
        } else {
            DataSize::default()
        };
        let (set_pattern, get_pattern) = self.key_pattern();
        let spec = MemtierSpec {
            ratio: self.ratio(),
            key_prefix: self.key_prefix.clone(),
            key_minimum: self.key_minimum,
            // memtier runs with a reversed range (see `warnings`): one key.
            key_maximum: self.key_maximum.max(self.key_minimum),
            set_pattern,
            get_pattern,
            key_stddev: self.key_stddev,
            key_median: self.key_median,
            key_zipf_exp: self.key_zipf_exp.unwrap_or(1.0),
            data_size,
            random_data: self.random_data,
            expiry: self.expiry_range,
            requests: self.requests_per_client(),
            total_clients: self.connections() as u64,
            distinct_client_seed: self.distinct_client_seed,
            multi_key_get: self.multi_key_get.unwrap_or(0),
            commands: self.commands()?,
            wait: self.wait(),
            import: None,
            generate_keys: self.generate_keys,
            no_expiry: self.no_expiry,
        };
        let spec = match &self.data_import {
            None => spec,
            Some(path) => {
                let items = ImportedItems::read(path)
                    .map_err(|e| format!("--data-import={}: {e}", path.display()))?;
                let n = items.len() as u64;
                // Without --generate-keys, GETs choose among the file's keys 1..=n
                // (import_object_generator: key range [1, keys]).
                let (key_minimum, key_maximum) = if self.generate_keys {
                    (spec.key_minimum, spec.key_maximum)
                } else {
                    (1, n.max(1))
                };
                MemtierSpec {
                    key_minimum,
                    key_maximum,
                    import: Some(std::sync::Arc::new(items)),
                    ..spec
                }
            }
        };
        spec.validate().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    /// `--data-verify` (or `--verify-only`, which implies it).
    pub fn data_verify(&self) -> bool {
        self.data_verify || self.verify_only
    }

    /// The server as a URL: `--uri` if given; otherwise `redis://[USER:PASSWORD@]HOST:PORT
    /// [/DB]` for the Redis protocols (a password alone gives `:PASSWORD@`), or
    /// `memcached://HOST:PORT`; with `--unix-socket`, `redis+unix:///PATH[?db=DB&user=
    /// USER&pass=PASSWORD]` or `memcached+unix:///PATH` (a relative path made absolute).
    /// Credentials are percent-encoded; the RESP version is [`MemtierArgs::protocol`]'s.
    pub fn url(&self) -> String {
        if let Some(uri) = &self.uri {
            return uri.clone();
        }
        if let Some(socket) = &self.unix_socket {
            return self.unix_url(socket);
        }
        let host = self.server.as_deref().unwrap_or("localhost");
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let port = self.port.unwrap_or(6379);
        if !self.protocol.is_redis() {
            return format!("memcached://{host}:{port}");
        }
        let credentials = match self.authenticate.as_deref() {
            None => String::new(),
            Some(auth) => match auth.split_once(':') {
                Some((user, password)) => {
                    format!("{}:{}@", percent_encode(user), percent_encode(password))
                }
                None => format!(":{}@", percent_encode(auth)),
            },
        };
        let db = match self.select_db {
            Some(db) if db > 0 => format!("/{db}"),
            _ => String::new(),
        };
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://{credentials}{host}:{port}{db}")
    }

    /// [`MemtierArgs::url`] for a UNIX domain socket.
    fn unix_url(&self, socket: &std::path::Path) -> String {
        let path = std::path::absolute(socket).unwrap_or_else(|_| socket.to_path_buf());
        if !self.protocol.is_redis() {
            return format!("memcached+unix://{}", path.display());
        }
        let mut params = Vec::new();
        if let Some(db) = self.select_db.filter(|&db| db > 0) {
            params.push(format!("db={db}"));
        }
        match self
            .authenticate
            .as_deref()
            .map(|a| a.split_once(':').unwrap_or(("", a)))
        {
            Some(("", password)) => params.push(format!("pass={}", percent_encode(password))),
            Some((user, password)) => {
                params.push(format!("user={}", percent_encode(user)));
                params.push(format!("pass={}", percent_encode(password)));
            }
            None => {}
        }
        let query = if params.is_empty() {
            String::new()
        } else {
            format!("?{}", params.join("&"))
        };
        format!("redis+unix://{}{query}", path.display())
    }

    /// Store options (`redis.*` or `memcached.*`) for the TLS and cluster flags
    /// (`--cacert`, `--tls-skip-verify`, `--tls-protocols`, `--sni`, `--cert`/`--key`,
    /// `--cluster-mode`),
    /// `--connection-timeout` and the RESP version, as `name=value` properties.
    pub fn store_options(&self) -> Vec<String> {
        let mut o = Vec::new();
        // memtier's default of 0 means no timeout of its own: kvlab keeps its default.
        if let Some(secs) = self.connection_timeout.filter(|&s| s > 0) {
            let store = if self.protocol.is_redis() {
                "redis"
            } else {
                "memcached"
            };
            o.push(format!(
                "{store}.connect_timeout_ms={}",
                u64::from(secs) * 1000
            ));
        }
        // memtier sends `HELLO 2` or `HELLO 3` for these two, nothing for `redis`.
        match self.protocol {
            MemtierProtocol::Resp2 => o.push("redis.protocol=resp2".to_string()),
            MemtierProtocol::Resp3 => o.push("redis.protocol=resp3".to_string()),
            _ => {}
        }
        let store = if self.protocol.is_redis() {
            "redis"
        } else {
            "memcached"
        };
        if self.protocol == MemtierProtocol::MemcacheBinary {
            o.push("memcached.protocol=binary".to_string());
        }
        if self.ipv4 || self.ipv6 {
            let family = if self.ipv4 { "ipv4" } else { "ipv6" };
            o.push(format!("{store}.address_family={family}"));
        }
        if let Some(n) = self.reconnect_interval.filter(|&n| n > 0) {
            o.push(format!("{store}.reconnect_interval={n}"));
        }
        if let Some(ca) = &self.cacert {
            o.push(format!("redis.tls_ca_file={}", ca.display()));
        }
        if self.tls_skip_verify {
            o.push("redis.tls_skip_verify=true".to_string());
        }
        if let Some(versions) = &self.tls_protocols {
            o.push(format!("redis.tls_protocols={versions}"));
        }
        if let Some(sni) = &self.sni {
            o.push(format!("redis.tls_sni={sni}"));
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            o.push(format!("redis.tls_cert_file={}", cert.display()));
            o.push(format!("redis.tls_key_file={}", key.display()));
        }
        if self.cluster_mode {
            o.push("redis.cluster=yes".to_string());
        }
        if let Some(offset) = self.data_offset.filter(|&o| o > 0) {
            o.push(format!("redis.data_offset={offset}"));
        }
        o
    }

    /// Store options that keep the server's traffic memtier's own: no `INFO` (Redis)
    /// or `version`/`stats` (memcached) queries for server facts and statistics, and
    /// so, on Redis, the cluster mode from `--cluster-mode` instead of `INFO cluster`.
    /// Empty unless `--no-server-queries`.
    pub fn traffic_options(&self) -> Vec<String> {
        if !self.no_server_queries {
            Vec::new()
        } else if self.protocol.is_redis() {
            let cluster = if self.cluster_mode { "yes" } else { "no" };
            vec![
                "redis.server_queries=false".to_string(),
                format!("redis.cluster={cluster}"),
            ]
        } else {
            vec!["memcached.server_queries=false".to_string()]
        }
    }

    /// The wire protocol.
    pub fn protocol(&self) -> MemtierProtocol {
        self.protocol
    }

    /// `--ratio`, memtier's 1:10 by default.
    pub fn ratio(&self) -> Ratio {
        self.ratio.unwrap_or_default()
    }

    /// `--key-pattern`, memtier's R:R by default.
    pub fn key_pattern(&self) -> (KeyPattern, KeyPattern) {
        self.key_pattern
            .unwrap_or((KeyPattern::Random, KeyPattern::Random))
    }

    /// `--reconnect-on-error`: reconnect and go on after a lost connection.
    pub fn reconnect_on_error(&self) -> bool {
        self.reconnect_on_error
    }

    /// Threads (`-t`).
    pub fn threads(&self) -> usize {
        self.threads as usize
    }

    /// Clients (connections) per thread (`-c`).
    pub fn clients_per_thread(&self) -> usize {
        self.clients as usize
    }

    /// All clients: threads × clients per thread.
    pub fn connections(&self) -> usize {
        self.threads() * self.clients_per_thread()
    }

    /// memtier's requests per client: `--requests`, `allkeys` resolved as memtier
    /// resolves it, memtier's default of 10 000 when neither `--requests` nor
    /// `--test-time` is given, and `None` with `--test-time`.
    pub fn requests_per_client(&self) -> Option<u64> {
        match (self.requests, self.test_time) {
            (Some(Requests::PerClient(n)), _) => Some(n),
            // memtier: without generated keys an import leaves the key range unset, so
            // `allkeys` is 0 requests, and then the default.
            (Some(Requests::AllKeys), _) if self.data_import.is_some() && !self.generate_keys => {
                Some(MemtierSpec::DEFAULT_REQUESTS)
            }
            (Some(Requests::AllKeys), _) => {
                // config_init_defaults: key_maximum − key_minimum; for P:P divided per
                // client, plus one; then, as for no --requests at all, 10 000 if that
                // is 0.
                let range = self.key_maximum.saturating_sub(self.key_minimum);
                let parallel = self.key_pattern() == (KeyPattern::Parallel, KeyPattern::Parallel);
                Some(if parallel {
                    range / self.connections() as u64 + 1
                } else if range > 0 {
                    range
                } else {
                    MemtierSpec::DEFAULT_REQUESTS
                })
            }
            (None, Some(_)) => None,
            (None, None) => Some(MemtierSpec::DEFAULT_REQUESTS),
        }
    }

    /// Requests in total for the runner: requests per client × threads × clients per
    /// thread; `None` when the run is bounded by `--test-time`.
    pub fn total_requests(&self) -> Option<u64> {
        self.requests_per_client()
            .map(|r| r.saturating_mul(self.connections() as u64))
    }

    /// `--test-time`.
    pub fn duration(&self) -> Option<Duration> {
        self.test_time.map(|s| Duration::from_secs(u64::from(s)))
    }

    /// Requests in flight per connection (`--pipeline`).
    pub fn pipeline(&self) -> usize {
        self.pipeline as usize
    }

    /// `--rate-limiting`: requests per second per connection.
    pub fn rate_limit_per_connection(&self) -> Option<u32> {
        self.rate_limiting
    }

    /// The names of the `--command`s, one per distinct name in the order given (the
    /// rows of the table; a request's [`kvlab_core::CommandId`] indexes them).
    pub fn command_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for c in self.commands().unwrap_or_default() {
            if !names.contains(&c.name()) {
                names.push(c.name());
            }
        }
        names
    }

    /// The server as `-D/--debug` names it: the URL without its scheme.
    pub fn server_label(&self) -> String {
        let url = self.url();
        url.split_once("://")
            .map_or(url.clone(), |(_, rest)| rest.to_string())
    }

    /// `--rate-limiting`'s tick, as memtier computes it: a connection may send
    /// ceil(rate / 50) requests a tick, `rate / that` ticks a second (integer
    /// division), each tick `1 000 000 / ticks` µs long.
    pub fn rate_limit_tick(&self) -> Option<std::time::Duration> {
        let rate = self.rate_limiting.filter(|&r| r > 0)?;
        let per_tick = rate.div_ceil(50);
        let ticks = (rate / per_tick).max(1);
        Some(std::time::Duration::from_micros(u64::from(
            1_000_000 / ticks,
        )))
    }

    /// `--rate-limiting` as kvlab's open-loop target over all connections.
    pub fn target_rate(&self) -> Option<f64> {
        self.rate_limiting
            .map(|r| f64::from(r) * self.connections() as f64)
    }

    /// The run seed: `--seed`, or memtier's constant seed ([`CONSTANT_SEED`]); `None`
    /// with `--randomize`, when the caller picks a random seed and prints it.
    pub fn seed(&self) -> Option<u64> {
        if self.randomize {
            None
        } else {
            Some(self.seed.unwrap_or(CONSTANT_SEED))
        }
    }

    /// `--print-percentiles` (default 50, 99, 99.9).
    pub fn percentiles(&self) -> Vec<f64> {
        self.print_percentiles
            .as_ref()
            .map_or_else(|| vec![50.0, 99.0, 99.9], |p| p.0.clone())
    }

    /// Things worth a warning that memtier also warns about (e.g. `--uri` overriding
    /// `--server`).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.uri.is_some() {
            for (given, flag) in [
                (self.server.is_some(), "--server"),
                (self.port.is_some(), "--port"),
                (self.authenticate.is_some(), "--authenticate"),
                (self.select_db.is_some(), "--select-db"),
            ] {
                if given {
                    w.push(format!(
                        "both --uri and {flag} given: the URI takes precedence"
                    ));
                }
            }
        }
        if self.generate_keys && self.data_import.is_none() {
            w.push("--generate-keys has no effect without --data-import".to_string());
        }
        for (given, flag, why) in [
            (
                self.max_reconnect_attempts.is_some() || self.reconnect_backoff_factor.is_some(),
                "--max-reconnect-attempts/--reconnect-backoff-factor",
                "with --reconnect-on-error kvlab retries without limit, its back-off doubling \
                 from 10 ms to 1 s",
            ),
            (
                self.thread_conn_start_min_jitter_micros.is_some()
                    || self.thread_conn_start_max_jitter_micros.is_some(),
                "--thread-conn-start-min/max-jitter-micros",
                "all connections open at start",
            ),
            (
                self.clients_start.is_some()
                    || self.clients_step.is_some()
                    || self.step_duration.is_some(),
                "--clients-start/--clients-step/--step-duration",
                "every client runs from the start (no staircase ramp-up)",
            ),
            (
                self.monitor_pattern.is_some() && self.monitor_input.is_none(),
                "--monitor-pattern",
                "it only applies to --monitor-input",
            ),
            (
                self.scan_incremental_max_iterations.is_some() && !self.scan_incremental_iteration,
                "--scan-incremental-max-iterations",
                "it only applies to --scan-incremental-iteration",
            ),
            (
                self.statsd_host.is_some()
                    || self.statsd_port.is_some()
                    || self.statsd_prefix.is_some()
                    || self.statsd_run_label.is_some()
                    || self.graphite_port.is_some(),
                "--statsd-*/--graphite-port",
                "no StatsD metrics are sent; see --out and --monitor for live figures",
            ),
        ] {
            if given {
                w.push(format!("{flag} ignored by kvlab memtier: {why}"));
            }
        }
        if !self.ignored.is_empty() {
            w.push(format!(
                "ignoring arguments that are not flags, as memtier does: {}",
                self.ignored.join(" ")
            ));
        }
        if self.key_minimum > self.key_maximum {
            w.push(format!(
                "--key-minimum={} is above --key-maximum={}: every key is {}{} (memtier's S \
                 and P patterns send that key; its random patterns draw from an underflowed \
                 range)",
                self.key_minimum, self.key_maximum, self.key_prefix, self.key_minimum
            ));
        }
        w
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Checks memtier's URI form `redis[s]://[[user]:password@]host[:port][/dbnum]`.
fn parse_uri(uri: &str) -> Result<(), String> {
    let bad = |what: &str| {
        format!("--uri `{uri}`: {what}; expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]")
    };
    let rest = uri
        .strip_prefix("redis://")
        .or_else(|| uri.strip_prefix("rediss://"))
        .ok_or_else(|| bad("the scheme must be redis:// or rediss://"))?;
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let (hostport, db) = rest.split_once('/').unwrap_or((rest, ""));
    if !db.is_empty() && db.parse::<u32>().is_err() {
        return Err(bad("the database must be a number"));
    }
    let port = if hostport.starts_with('[') {
        hostport.rsplit_once("]:").map(|(_, p)| p)
    } else {
        hostport.rsplit_once(':').map(|(_, p)| p)
    };
    if let Some(p) = port {
        if !matches!(p.parse::<u16>(), Ok(n) if n > 0) {
            return Err(bad("the port must be in 1-65535"));
        }
    }
    if hostport.is_empty() || hostport.starts_with(':') {
        return Err(bad("no host"));
    }
    Ok(())
}

fn parse_u32(s: &str, what: &str) -> Result<u32, String> {
    s.parse()
        .map_err(|_| format!("`{s}` is not {what} (a whole number)"))
}

/// `SETS:GETS`, not both zero (memtier `config_ratio`).
fn parse_ratio(s: &str) -> Result<Ratio, String> {
    let err = || format!("`{s}`: ratio must be expressed as [0-n]:[0-n], e.g. 1:10");
    let (a, b) = s.split_once(':').ok_or_else(err)?;
    let (sets, gets) = (a.parse().map_err(|_| err())?, b.parse().map_err(|_| err())?);
    if sets == 0 && gets == 0 {
        return Err(format!(
            "`{s}`: at least one of SETs and GETs must be non-zero"
        ));
    }
    Ok(Ratio { sets, gets })
}

/// memtier's name of a protocol.
fn protocol_name(p: MemtierProtocol) -> &'static str {
    match p {
        MemtierProtocol::Redis => "redis",
        MemtierProtocol::Resp2 => "resp2",
        MemtierProtocol::Resp3 => "resp3",
        MemtierProtocol::MemcacheText => "memcache_text",
        MemtierProtocol::MemcacheBinary => "memcache_binary",
    }
}

/// One `--command`, split and checked ([`ArbitraryCommand::parse`]).
fn parse_command(s: &str) -> Result<Sequenced<ArbitraryCommand>, String> {
    let value = ArbitraryCommand::parse(s).map_err(|e| e.to_string())?;
    Ok(Sequenced {
        seq: next_seq(),
        value,
    })
}

/// `--command-ratio`: a whole number greater than zero.
fn parse_command_ratio(s: &str) -> Result<Sequenced<u32>, String> {
    match s.parse::<u32>() {
        Ok(n) if n > 0 && !s.starts_with('+') => Ok(Sequenced {
            seq: next_seq(),
            value: n,
        }),
        _ => Err(format!(
            "`{s}`: command-ratio must be a whole number greater than zero"
        )),
    }
}

/// `--command-key-pattern`: one of R, S, G, P, Z.
fn parse_command_key_pattern(s: &str) -> Result<Sequenced<KeyPattern>, String> {
    let mut chars = s.chars();
    match (chars.next().and_then(KeyPattern::from_letter), chars.next()) {
        (Some(value), None) => Ok(Sequenced {
            seq: next_seq(),
            value,
        }),
        _ => Err(format!(
            "`{s}`: command-key-pattern must be one of S, R, Z, G, P"
        )),
    }
}

/// `--wait-ratio=SETS:WAITS`, not both zero.
fn parse_wait_ratio(s: &str) -> Result<Ratio, String> {
    parse_ratio(s)
        .map_err(|_| format!("`{s}`: wait-ratio must be expressed as [0-n]:[0-n], not 0:0"))
}

/// `--num-slaves=MIN-MAX` (memtier's `config_range`: MAX at least 1).
fn parse_num_slaves(s: &str) -> Result<(u32, u32), String> {
    match parse_range(s) {
        Some((min, max)) if max > 0 => Ok((min, max)),
        _ => Err(format!(
            "`{s}`: num-slaves must be expressed as [0-n]-[1-n]"
        )),
    }
}

/// `--wait-timeout=MIN-MAX` in milliseconds (MAX at least 1).
fn parse_wait_timeout(s: &str) -> Result<(u32, u32), String> {
    match parse_range(s) {
        Some((min, max)) if max > 0 => Ok((min, max)),
        _ => Err(format!(
            "`{s}`: wait-timeout must be expressed as [0-n]-[1-n] (milliseconds)"
        )),
    }
}

/// `X:Y` with X, Y one of R, S, G, P, Z; P on both sides or neither.
fn parse_key_pattern(s: &str) -> Result<(KeyPattern, KeyPattern), String> {
    let err = || format!("`{s}`: key-pattern must be in the format of [S/R/G/P/Z]:[S/R/G/P/Z]");
    let c: Vec<char> = s.chars().collect();
    if c.len() != 3 || c[1] != ':' {
        return Err(err());
    }
    let set = KeyPattern::from_letter(c[0]).ok_or_else(err)?;
    let get = KeyPattern::from_letter(c[2]).ok_or_else(err)?;
    if (set == KeyPattern::Parallel) != (get == KeyPattern::Parallel) {
        return Err(format!(
            "`{s}`: parallel key-pattern must be configured for both SET and GET commands"
        ));
    }
    Ok((set, get))
}

/// `MIN-MAX` of whole numbers; swapped when MIN > MAX, as memtier's `config_range`.
fn parse_range(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.split_once('-')?;
    let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
    Some((a.min(b), a.max(b)))
}

fn parse_size_range(s: &str) -> Result<(u32, u32), String> {
    match parse_range(s) {
        Some((min, max)) if min >= 1 && max <= MAX_DATA_SIZE_BYTES => Ok((min, max)),
        _ => Err(format!(
            "`{s}`: data-size-range must be expressed as [1-n]-[1-n] (at most \
             {MAX_DATA_SIZE_BYTES} bytes)"
        )),
    }
}

fn parse_expiry_range(s: &str) -> Result<ExpiryRange, String> {
    match parse_range(s) {
        Some((min_s, max_s)) if max_s > 0 => Ok(ExpiryRange { min_s, max_s }),
        _ => Err(format!(
            "`{s}`: expiry-range must be expressed as [0-n]-[1-n] (seconds)"
        )),
    }
}

fn parse_data_size(s: &str) -> Result<u32, String> {
    let n = parse_u32(s, "a size in bytes")?;
    if (1..=MAX_DATA_SIZE_BYTES).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "data-size must be between 1 and {MAX_DATA_SIZE_BYTES} bytes, got {n}"
        ))
    }
}

/// `SIZE:WEIGHT,…`, sizes in 1..=512 MiB, weights > 0.
fn parse_size_list(s: &str) -> Result<SizeList, String> {
    let err =
        || format!("`{s}`: data-size-list must be expressed as [size1:weight1],...[sizeN:weightN]");
    let mut list = Vec::new();
    for item in s.split(',') {
        let (size, weight) = item.split_once(':').ok_or_else(err)?;
        let (size_bytes, weight): (u32, u32) = (
            size.parse().map_err(|_| err())?,
            weight.parse().map_err(|_| err())?,
        );
        if !(1..=MAX_DATA_SIZE_BYTES).contains(&size_bytes) || weight == 0 {
            return Err(format!(
                "`{item}` in `{s}`: sizes must be between 1 and {MAX_DATA_SIZE_BYTES} bytes \
                 and weights greater than zero"
            ));
        }
        list.push(SizeWeight { size_bytes, weight });
    }
    Ok(SizeList(list))
}

fn parse_size_pattern(s: &str) -> Result<SizePattern, String> {
    match s {
        "R" => Ok(SizePattern::Random),
        "S" => Ok(SizePattern::Spread),
        _ => Err(format!("`{s}`: data-size-pattern must be either R or S")),
    }
}

fn parse_requests(s: &str) -> Result<Requests, String> {
    if s == "allkeys" {
        return Ok(Requests::AllKeys);
    }
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(Requests::PerClient(n)),
        _ => Err(format!(
            "`{s}`: requests must be a number greater than zero, or allkeys"
        )),
    }
}

/// `--hdr-file-prefix` and `--client-stats`: a path prefix, not empty.
fn parse_file_prefix(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("the file prefix must not be empty".to_string());
    }
    Ok(s.to_string())
}

fn parse_backoff_factor(s: &str) -> Result<f64, String> {
    parse_f64(s)
        .filter(|&v| v > 0.0)
        .ok_or_else(|| format!("`{s}`: reconnect-backoff-factor must be greater than zero"))
}

/// memtier's `--monitor-pattern`: one letter, `S` or `R`, in either case.
fn parse_monitor_pattern(s: &str) -> Result<char, String> {
    match s.to_ascii_uppercase().as_str() {
        "S" => Ok('S'),
        "R" => Ok('R'),
        _ => Err(format!(
            "`{s}`: monitor-pattern must be 'S' (sequential) or 'R' (random)"
        )),
    }
}

fn parse_f64(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn parse_key_stddev(s: &str) -> Result<f64, String> {
    parse_f64(s)
        .filter(|&v| v > 0.0)
        .ok_or_else(|| format!("`{s}`: key-stddev must be a finite number greater than zero"))
}

fn parse_key_median(s: &str) -> Result<f64, String> {
    parse_f64(s)
        .filter(|&v| v > 0.0)
        .ok_or_else(|| format!("`{s}`: key-median must be greater than zero"))
}

fn parse_zipf_exp(s: &str) -> Result<f64, String> {
    parse_f64(s)
        .filter(|&v| v > 0.0 && v < 5.0)
        .ok_or_else(|| format!("`{s}`: key-zipf-exp must be within interval (0, 5)"))
}

fn parse_percentiles(s: &str) -> Result<Percentiles, String> {
    let err = || format!("`{s}`: quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...)");
    let list = s
        .split(',')
        .map(|p| parse_f64(p).filter(|v| (0.0..=100.0).contains(v)))
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(err)?;
    Ok(Percentiles(list))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct T {
        #[command(flatten)]
        a: MemtierArgs,
    }

    fn parse(line: &str) -> Result<MemtierArgs, clap::Error> {
        let argv = std::iter::once("memtier_benchmark").chain(line.split_whitespace());
        T::try_parse_from(argv).map(|t| t.a)
    }

    fn args(line: &str) -> MemtierArgs {
        parse(line).unwrap_or_else(|e| panic!("`{line}` does not parse: {e}"))
    }

    #[track_caller]
    fn spec_error(line: &str) -> String {
        args(line)
            .spec()
            .expect_err(&format!("`{line}` should be refused"))
    }

    #[test]
    fn first_example_line() {
        let a = args(
            "-s 127.0.0.1 -p 6379 -t 2 -c 16 --ratio=1:10 --key-maximum=500000 \
             --data-size=128 --test-time=10",
        );
        let spec = a.spec().unwrap();
        assert_eq!(spec.ratio, Ratio { sets: 1, gets: 10 });
        assert_eq!((spec.key_minimum, spec.key_maximum), (0, 500_000));
        assert_eq!(spec.data_size, DataSize::Fixed(128));
        assert_eq!(spec.key_prefix, "memtier-");
        assert_eq!(
            (spec.set_pattern, spec.get_pattern),
            (KeyPattern::Random, KeyPattern::Random)
        );
        assert_eq!(spec.requests, None, "bounded by --test-time");
        assert_eq!(spec.total_clients, 32);
        assert!(!spec.distinct_client_seed && !spec.random_data);
        assert_eq!(a.url(), "redis://127.0.0.1:6379");
        assert_eq!(a.duration(), Some(Duration::from_secs(10)));
        assert_eq!(
            (a.threads(), a.clients_per_thread(), a.connections()),
            (2, 16, 32)
        );
        assert_eq!(a.total_requests(), None);
        assert_eq!(a.pipeline(), 1);
        assert_eq!(a.seed(), Some(CONSTANT_SEED));
        assert_eq!(a.protocol(), MemtierProtocol::Redis);
    }

    #[test]
    fn second_example_line() {
        let a = args(
            "-s 127.0.0.1 -p 6379 -t 32 -c 4 --distinct-client-seed --ratio=1:10 \
             --key-prefix=kv_ --key-minimum=1 --key-maximum=5000000 --random-data \
             --data-size=128 --hide-histogram --test-time=300",
        );
        let spec = a.spec().unwrap();
        assert!(spec.distinct_client_seed && spec.random_data);
        assert_eq!(spec.key_prefix, "kv_");
        assert_eq!((spec.key_minimum, spec.key_maximum), (1, 5_000_000));
        assert_eq!(spec.data_size, DataSize::Fixed(128));
        assert_eq!(spec.total_clients, 128);
        assert!(a.hide_histogram);
        assert_eq!(a.duration(), Some(Duration::from_secs(300)));
        assert_eq!(a.connections(), 128);
    }

    #[test]
    fn defaults_are_memtiers() {
        let a = args("");
        let spec = a.spec().unwrap();
        assert_eq!(spec, MemtierSpec::default());
        assert_eq!(a.url(), "redis://localhost:6379");
        assert_eq!((a.threads(), a.clients_per_thread()), (4, 50));
        assert_eq!(a.requests_per_client(), Some(10_000));
        assert_eq!(a.total_requests(), Some(2_000_000));
        assert_eq!(a.duration(), None);
        assert_eq!(a.percentiles(), [50.0, 99.0, 99.9]);
        assert_eq!(a.rate_limit_per_connection(), None);
        assert_eq!(a.target_rate(), None);
        assert!(a.warnings().is_empty());
    }

    #[test]
    fn values_are_accepted_attached_or_separate() {
        for line in [
            "--ratio=1:4 --key-pattern=S:G -n=7",
            "--ratio 1:4 --key-pattern S:G -n 7",
            "--ratio 1:4 --key-pattern S:G -n7",
        ] {
            let a = args(line);
            assert_eq!(a.ratio(), Ratio { sets: 1, gets: 4 }, "{line}");
            assert_eq!(
                a.key_pattern(),
                (KeyPattern::Sequential, KeyPattern::Gaussian)
            );
            assert_eq!(a.requests_per_client(), Some(7));
        }
    }

    #[test]
    fn requests_are_per_client() {
        let a = args("-t 3 -c 5 -n 1000");
        assert_eq!(a.requests_per_client(), Some(1000));
        assert_eq!(a.total_requests(), Some(15_000));
        assert_eq!(a.spec().unwrap().requests, Some(1000));
        // allkeys: memtier's key_maximum − key_minimum, or per client for P:P.
        let a = args("-n allkeys --key-minimum=10 --key-maximum=1010");
        assert_eq!(a.requests_per_client(), Some(1000));
        let a = args("-n allkeys -t 2 -c 4 --key-maximum=1000 --key-pattern=P:P");
        assert_eq!(a.requests_per_client(), Some(1000 / 8 + 1));
        assert_eq!(a.total_requests(), Some(8 * 126));
        let a = args("-n allkeys --key-minimum=5 --key-maximum=5");
        assert_eq!(
            a.requests_per_client(),
            Some(10_000),
            "memtier's fallback for 0"
        );
        assert!(parse("-n 10 --test-time=5").is_err(), "mutually exclusive");
        assert!(parse("-n 0").is_err());
        assert!(parse("-n lots").is_err());
    }

    #[test]
    fn object_options() {
        let s = args("--data-size-range=100-10 --data-size-pattern=S")
            .spec()
            .unwrap();
        assert_eq!(
            s.data_size,
            DataSize::Range {
                min_bytes: 10,
                max_bytes: 100,
                pattern: SizePattern::Spread
            },
            "memtier swaps a reversed range"
        );
        let s = args("--data-size-list=32:7,1024:3").spec().unwrap();
        assert_eq!(
            s.data_size,
            DataSize::List(vec![
                SizeWeight {
                    size_bytes: 32,
                    weight: 7
                },
                SizeWeight {
                    size_bytes: 1024,
                    weight: 3
                }
            ])
        );
        let s = args("-R -d 10 --expiry-range=30-5").spec().unwrap();
        assert!(s.random_data);
        assert_eq!(
            s.expiry,
            Some(ExpiryRange {
                min_s: 5,
                max_s: 30
            })
        );
        assert!(parse("-d 10 --data-size-range=1-5").is_err());
        assert!(parse("-d 10 --data-size-list=1:5").is_err());
        assert!(parse("--data-size-range=1-5 --data-size-list=1:5").is_err());
        assert!(parse("-d 0").is_err());
        assert!(parse("--data-size-range=0-5").is_err());
        assert!(parse("--data-size-list=8:0").is_err());
        assert!(parse("--data-size-list=8").is_err());
        assert!(parse("--data-size-pattern=X").is_err());
        assert!(parse("--expiry-range=0-0").is_err());
    }

    #[test]
    fn key_options() {
        let s = args("--key-pattern=G:Z --key-stddev=10 --key-median=500 --key-zipf-exp=0.8")
            .spec()
            .unwrap();
        assert_eq!(
            (s.set_pattern, s.get_pattern),
            (KeyPattern::Gaussian, KeyPattern::Zipfian)
        );
        assert_eq!(
            (s.key_stddev, s.key_median, s.key_zipf_exp),
            (Some(10.0), Some(500.0), 0.8)
        );
        assert!(parse("--key-pattern=P:R").is_err());
        assert!(parse("--key-pattern=RR").is_err());
        assert!(parse("--key-pattern=R:Q").is_err());
        assert!(parse("--key-zipf-exp=5").is_err());
        assert!(parse("--key-stddev=0").is_err());
        assert!(parse("--ratio=0:0").is_err());
        assert!(parse("--ratio=1-10").is_err());
        assert!(spec_error("--key-stddev=10").contains("--key-stddev"));
        assert!(spec_error("--key-pattern=G:G --key-median=20000000").contains("--key-median"));
        // memtier 2.3.0 runs with --key-minimum=100 --key-maximum=10: with S:S every SET
        // wrote memtier-100; kvlab runs with that one key and warns.
        let reversed = args("--key-minimum=100 --key-maximum=10");
        assert_eq!(reversed.spec().unwrap().key_maximum, 100);
        assert!(reversed.warnings()[0].contains("memtier-100"));
    }

    #[test]
    fn connection_options() {
        let a = args("-h ::1 -p 7000 -a secret --select-db 3 -P resp3");
        assert_eq!(a.url(), "redis://:secret@[::1]:7000/3");
        assert_eq!(a.protocol(), MemtierProtocol::Resp3);
        let a = args("--host cache.local -a app:p@ss:word");
        assert_eq!(a.url(), "redis://app:p%40ss%3Aword@cache.local:6379");
        let a = args("--server 10.0.0.1 -p 11211 -P memcache_text");
        assert_eq!(a.url(), "memcached://10.0.0.1:11211");
        assert!(a.spec().is_ok());
        let a = args("-u redis://u:p@h:1234/2 -s other");
        assert_eq!(a.url(), "redis://u:p@h:1234/2");
        assert_eq!(a.warnings().len(), 1);
        assert!(a.spec().is_ok());
        assert!(spec_error("-u http://h").contains("--uri"));
        assert!(spec_error("-u redis://h:0").contains("port"));
        assert!(spec_error("-P memcache_text -a pw").contains("--authenticate"));
        assert!(spec_error("-P memcache_text --select-db=2").contains("--select-db"));
        assert!(parse("-P memcache_ascii").is_err());
        let a = args("-S /tmp/r.sock -s ignored --select-db 2 -a u:p@ss");
        assert_eq!(a.url(), "redis+unix:///tmp/r.sock?db=2&user=u&pass=p%40ss");
        let a = args("-S /tmp/m.sock -P memcache_binary");
        assert_eq!(a.url(), "memcached+unix:///tmp/m.sock");
        assert_eq!(a.store_options(), ["memcached.protocol=binary"]);
        let a = args("--unix-socket rel.sock");
        assert!(a.url().starts_with("redis+unix:///") && a.url().ends_with("/rel.sock"));
        assert!(spec_error("-S /r.sock --tls --tls-skip-verify").contains("--unix-socket"));
        assert_eq!(args("-4").store_options(), ["redis.address_family=ipv4"]);
        assert_eq!(
            args("-6 -P memcache_text --reconnect-interval=5").store_options(),
            [
                "memcached.address_family=ipv6",
                "memcached.reconnect_interval=5"
            ]
        );
        assert!(spec_error("-4 -6").contains("not both"));
        assert!(args("--reconnect-on-error").spec().is_ok());
        assert!(parse("-p 0").is_err());
    }

    #[test]
    fn run_options() {
        let a = args("-t 2 -c 10 --pipeline=16 --rate-limiting=100 --randomize -D -D");
        assert_eq!(a.pipeline(), 16);
        assert_eq!(a.rate_limit_per_connection(), Some(100));
        assert_eq!(a.target_rate(), Some(2000.0));
        assert_eq!(
            a.seed(),
            None,
            "--randomize: the caller picks and prints a seed"
        );
        assert_eq!(a.debug, 2);
        assert_eq!(args("--seed 42").seed(), Some(42));
        assert!(parse("--seed 42 --randomize").is_err());
        let a = args(
            "--print-percentiles 90,99.99 --show-config --print-all-runs -o out.txt \
             --json-out-file=r.json",
        );
        assert_eq!(a.percentiles(), [90.0, 99.99]);
        assert!(a.show_config && a.print_all_runs);
        assert_eq!(a.out_file, Some(PathBuf::from("out.txt")));
        assert_eq!(a.json_out_file, Some(PathBuf::from("r.json")));
        assert!(parse("--print-percentiles=101").is_err());
        assert!(parse("-t 0").is_err());
        assert!(parse("-c 0").is_err());
        assert!(parse("--pipeline=0").is_err());
        assert!(parse("--test-time=0").is_err());
    }

    #[test]
    fn tls_and_cluster_flags_become_store_options() {
        let a = args("-s 127.0.0.1 -p 7000 --tls --cacert ca.pem --sni db.local -a pw");
        a.validate().unwrap();
        assert_eq!(a.url(), "rediss://:pw@127.0.0.1:7000");
        assert_eq!(
            a.store_options(),
            ["redis.tls_ca_file=ca.pem", "redis.tls_sni=db.local"]
        );
        assert_eq!(
            args("--connection-timeout 3 -P memcache_text").store_options(),
            ["memcached.connect_timeout_ms=3000"]
        );
        let a = args("--tls --cert c.pem --key k.pem");
        a.validate().unwrap();
        assert_eq!(
            a.store_options(),
            ["redis.tls_cert_file=c.pem", "redis.tls_key_file=k.pem"]
        );
        let a = args(
            "--tls --tls-skip-verify --tls-protocols=TLSv1.2,TLSv1.3 --protocol=resp3 \
             --cluster-mode",
        );
        a.validate().unwrap();
        assert_eq!(
            a.store_options(),
            [
                "redis.protocol=resp3",
                "redis.tls_skip_verify=true",
                "redis.tls_protocols=TLSv1.2,TLSv1.3",
                "redis.cluster=yes"
            ]
        );
        args("-u rediss://h:1").validate().unwrap();
        for (line, message) in [
            ("--cacert ca.pem", "need --tls"),
            ("--tls-protocols TLSv1.3", "need --tls"),
            ("--tls --cert c.pem", "go together"),
            ("--tls -P memcache_text", "redis protocols"),
            ("--cluster-mode -P memcache_text", "redis protocols"),
            ("--cluster-mode --select-db 2", "--cluster-mode"),
        ] {
            let e = args(line).validate().unwrap_err();
            assert!(e.contains(message), "{line}: {e}");
        }
    }

    #[test]
    fn parsing_follows_memtiers_getopt_long() {
        // memtier 2.3.0 takes the last of a repeated flag (`-t 1 -t 2` ran 2 threads),
        // ignores words that are not flags, and knows -v/--version; --command still
        // accumulates.
        let a = args("-t 1 -t 2 --ratio=1:1 --ratio=2:1 stray words --command=ping --command=echo");
        assert_eq!((a.threads, a.ratio().sets), (2, 2));
        assert_eq!(a.ignored, ["stray", "words"]);
        assert_eq!(a.command.len(), 2);
        assert!(a.warnings().iter().any(|w| w.contains("stray words")));
        assert!(args("-v").version && args("--version").version);
        // memtier's default --connection-timeout=0 is accepted and leaves kvlab's.
        assert!(args("--connection-timeout=0").store_options().is_empty());
        // memtier 2.3.0's newer flags: accepted with a warning, or refused by name.
        let newer = args(
            "--max-reconnect-attempts=3 --reconnect-backoff-factor=2 \
             --thread-conn-start-min-jitter-micros=1 --thread-conn-start-max-jitter-micros=9 \
             --clients-start=1 --clients-step=1 --step-duration=5 --statsd-host=h \
             --command-stats-breakdown=Command --test-time=10 --monitor-pattern=r \
             --scan-incremental-max-iterations=5",
        );
        assert!(newer.spec().is_ok());
        assert_eq!(newer.warnings().len(), 6, "{:?}", newer.warnings());
        for line in [
            "--monitor-input=m.txt",
            "--scan-incremental-iteration",
            "--command-stats-breakdown=line",
        ] {
            assert!(
                spec_error(line).starts_with("not supported by kvlab memtier"),
                "{line}"
            );
        }
    }

    #[test]
    fn unsupported_flags_parse_then_are_refused_by_name() {
        // The one flag left unsupported: SASL authentication over the binary protocol.
        let err = spec_error("-P memcache_binary -a pw");
        assert!(
            err.starts_with("not supported by kvlab memtier: ") && err.contains("memcache_binary"),
            "{err}"
        );
        assert!(err.ends_with(')'), "gives a reason: {err}");
        // Harmless values of unsupported flags are accepted.
        assert!(args("-x 3 --data-offset=0").spec().is_ok());
        // --data-offset: SETRANGE/GETRANGE, redis only, without expiry.
        let a = args("--data-offset=100");
        a.validate().unwrap();
        assert_eq!(a.store_options(), ["redis.data_offset=100"]);
        assert!(args("--data-offset=0").store_options().is_empty());
        for (line, message) in [
            ("--data-offset=100 -P memcache_text", "redis protocol"),
            ("--data-offset=100 --expiry-range=1-2", "expiry"),
            ("--data-offset=536870912", "too long"),
        ] {
            let e = args(line).validate().unwrap_err();
            assert!(
                e.contains(message) && e.contains("data-offset"),
                "{line}: {e}"
            );
        }
        // Imported data: memtier's refusals.
        for (line, message) in [
            ("--data-verify", "use data-verify only with data-import"),
            ("--verify-only", "use data-verify only with data-import"),
            ("--no-expiry", "use no-expiry only with data-import"),
            (
                "--data-import=f -d 10",
                "cannot be specified when importing",
            ),
            (
                "--data-import=f -R",
                "--random-data cannot be specified when importing",
            ),
            (
                "--data-import=f --cluster-mode",
                "--cluster-mode cannot be specified",
            ),
            (
                "--data-import=f --key-maximum=10",
                "only with generate-keys",
            ),
            ("--data-import=f --key-prefix=k", "only with generate-keys"),
        ] {
            // memtier refuses them once its flags are parsed: exit code 1, not 2.
            let a = args(line);
            a.validate().unwrap();
            let e = a.validate_setup().unwrap_err();
            assert!(e.contains(message), "{line}: {e}");
        }
        args("--data-import=f --generate-keys --key-maximum=10 --no-expiry --verify-only")
            .validate()
            .unwrap();
        assert!(args("--verify-only --data-import=f").data_verify());
        assert_eq!(args("--generate-keys").warnings().len(), 1);
        assert_eq!(
            args("--data-import=f -n allkeys").requests_per_client(),
            Some(MemtierSpec::DEFAULT_REQUESTS)
        );
        let e = args("--data-import=/nonexistent/dump.csv")
            .spec()
            .unwrap_err();
        assert!(
            e.starts_with("--data-import=/nonexistent/dump.csv: reading"),
            "{e}"
        );
        // Output files memtier writes are written.
        let a = args("--client-stats=cs --hdr-file-prefix=out/h");
        assert!(a.spec().is_ok());
        assert_eq!(a.hdr_file_prefix.as_deref(), Some("out/h"));
        assert!(parse("--hdr-file-prefix=").is_err());
        assert!(parse("--client-stats=").is_err());
    }

    #[test]
    fn refusals_fall_where_memtiers_do() {
        // memtier_benchmark 2.3.0 refused these while parsing its flags (usage, exit
        // code 2): `--reconnect-interval 0` "reconnect-interval must be greater than
        // zero", `--statsd-port 0` "statsd-port must be a valid port number", …
        for line in [
            "--reconnect-interval=0",
            "--statsd-port=0",
            "--graphite-port=0",
            "--clients-start=0",
            "--clients-step=0",
            "--step-duration=0",
            "--reconnect-backoff-factor=0",
            "--monitor-pattern=X",
        ] {
            assert!(parse(line).is_err(), "{line} parses");
        }
        for (line, message) in [
            (
                "--clients-start=2",
                "--clients-start, --clients-step, and --step-duration must all be specified",
            ),
            (
                "--clients-start=2 --clients-step=1 --step-duration=1 -n 10",
                "--requests cannot be used with client staircase mode",
            ),
            (
                "--cluster-mode --reconnect-interval=5",
                "cluster mode does not support reconnect-interval",
            ),
            (
                "--command-stats-breakdown=foo",
                "command-stats-breakdown must be 'command' or 'line'",
            ),
        ] {
            let e = args(line).validate().unwrap_err();
            assert!(e.contains(message), "{line}: {e}");
        }
        // … and these after parsing (exit code 1): "--test-time is required when using
        // client staircase mode", "thread-conn-start-min-jitter-micros (10) cannot be
        // greater than thread-conn-start-max-jitter-micros (5)", "UNIX domain socket and
        // TCP cannot be used together".
        for (line, message) in [
            (
                "--clients-start=2 --clients-step=1 --step-duration=1",
                "--test-time is required when using client staircase mode",
            ),
            (
                "--clients-start=50 --clients-step=1 --step-duration=1 --test-time=5",
                "--clients-start (50) must be less than --clients (50)",
            ),
            (
                "--thread-conn-start-min-jitter-micros=10 \
                 --thread-conn-start-max-jitter-micros=5",
                "thread-conn-start-min-jitter-micros (10) cannot be greater than \
                 thread-conn-start-max-jitter-micros (5)",
            ),
            (
                "--thread-conn-start-min-jitter-micros=10",
                "cannot be greater than",
            ),
            (
                "-S /tmp/r.sock -p 6379",
                "UNIX domain socket and TCP cannot be used together",
            ),
            (
                "-S /tmp/r.sock -s localhost",
                "UNIX domain socket and TCP cannot be used together",
            ),
        ] {
            let a = args(line);
            a.validate().unwrap_or_else(|e| panic!("{line}: {e}"));
            let e = a.validate_setup().unwrap_err();
            assert!(e.contains(message), "{line}: {e}");
            assert_eq!(a.spec().unwrap_err(), e, "spec() refuses it too");
        }
        let a = args("--clients-start=2 --clients-step=1 --step-duration=1 --test-time=5 -c 3");
        assert!(a.validate().and_then(|()| a.validate_setup()).is_ok());
        assert_eq!(args("--monitor-pattern=s").monitor_pattern, Some('S'));
        assert!(args("--monitor-pattern=s").spec().is_ok());
    }

    /// Parses memtier arguments given one by one (values with spaces stay whole).
    fn parse_argv(argv: &[&str]) -> Result<MemtierArgs, clap::Error> {
        T::try_parse_from(std::iter::once("memtier_benchmark").chain(argv.iter().copied()))
            .map(|t| t.a)
    }

    #[test]
    fn command_ratio_and_key_pattern_apply_to_the_command_before_them() {
        let a = parse_argv(&[
            "--command=set __key__ __data__",
            "--command-ratio=2",
            "--command-key-pattern=S",
            "--command",
            "get __key__",
            "--command-key-pattern",
            "Z",
            "--command=ping",
            "--command-ratio=5",
        ])
        .unwrap();
        let spec = a.spec().unwrap();
        let got: Vec<(String, u32, char)> = spec
            .commands
            .iter()
            .map(|c| (c.name(), c.ratio, c.key_pattern.letter()))
            .collect();
        assert_eq!(
            got,
            [
                ("SET".to_string(), 2, 'S'),
                ("GET".to_string(), 1, 'Z'),
                ("PING".to_string(), 5, 'R')
            ]
        );
        assert_eq!(spec.command_names(), ["SET", "GET", "PING"]);
        let quoted = parse_argv(&[r#"--command=hset __key__ "a field" '__data__'"#]).unwrap();
        let args = &quoted.spec().unwrap().commands[0].args;
        assert_eq!(args.len(), 4);
    }

    #[test]
    fn command_refusals_are_memtiers() {
        for (argv, message) in [
            (
                &["--command-ratio=2", "--command=get __key__"][..],
                "no arbitrary command",
            ),
            (&["--command-key-pattern=S"][..], "no arbitrary command"),
            (
                &["--command=get __key__", "--ratio=1:1"][..],
                "--command-ratio option",
            ),
            (
                &["--command=get __key__", "--key-pattern=S:S"][..],
                "--command-key-pattern option",
            ),
            (
                &["--command=get __key__", "-P", "memcache_text"][..],
                "redis protocols",
            ),
            (
                &[
                    "--command=get __key__",
                    "--command-key-pattern=P",
                    "--command=ping",
                ][..],
                "parallel key-pattern must be configured to all commands",
            ),
            (
                &["--command=get __key__", "--wait-ratio=1:1"][..],
                "--wait-ratio",
            ),
            (
                &["--command=get __key__", "--multi-key-get=2"][..],
                "--multi-key-get",
            ),
            (
                &["--command=get __key__", "--key-stddev=3"][..],
                "--key-stddev",
            ),
            (
                &["--command=mget __key__ __key__", "--cluster-mode"][..],
                "single-key",
            ),
            (
                &["--wait-ratio=1:1", "-P", "memcache_text"][..],
                "redis protocols",
            ),
            (
                &["--wait-ratio=1:1", "--cluster-mode"][..],
                "--cluster-mode",
            ),
            (&["--num-slaves=1-1"][..], "--wait-ratio"),
        ] {
            let e = parse_argv(argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
                .spec()
                .unwrap_err();
            assert!(e.contains(message), "{argv:?}: {e}");
        }
        for argv in [
            &["--command=set k __data__x"][..],
            &["--command=set \"k"][..],
            &["--command="][..],
            &["--command=get __key__", "--command-ratio=0"][..],
            &["--command=get __key__", "--command-ratio=-1"][..],
            &["--command=get __key__", "--command-key-pattern=Q"][..],
            &["--wait-ratio=0:0"][..],
            &["--wait-ratio=1:1", "--num-slaves=0-0"][..],
        ] {
            assert!(parse_argv(argv).is_err(), "{argv:?} should not parse");
        }
        // G and Z per command build their choosers; G allows --key-stddev.
        let spec = parse_argv(&[
            "--command=get __key__",
            "--command-key-pattern=G",
            "--key-stddev=5",
        ])
        .unwrap()
        .spec()
        .unwrap();
        assert_eq!(spec.key_stddev, Some(5.0));
    }

    #[test]
    fn wait_flags_make_a_wait_spec() {
        let a = args("--wait-ratio=1:2 --num-slaves=1-3 --wait-timeout=100-50");
        let w = a.spec().unwrap().wait.unwrap();
        assert_eq!(
            (w.sets, w.waits, w.min_replicas, w.max_replicas),
            (1, 2, 1, 3)
        );
        assert_eq!(
            (w.min_timeout_ms, w.max_timeout_ms),
            (50, 100),
            "swapped as memtier"
        );
        let w = args("--wait-ratio=5:1").wait().unwrap();
        assert_eq!(
            (w.min_replicas, w.max_replicas, w.max_timeout_ms),
            (0, 0, 0)
        );
        assert_eq!(args("").wait(), None);
    }

    #[test]
    fn multi_key_get_sets_the_spec() {
        assert_eq!(args("--multi-key-get=4").spec().unwrap().multi_key_get, 4);
        assert_eq!(args("").spec().unwrap().multi_key_get, 0);
        assert!(parse("--multi-key-get=0").is_err());
    }

    #[test]
    fn help_is_long_only_because_h_is_host() {
        let err = parse("--help").unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp);
        assert!(err.to_string().contains("--key-zipf-exp"));
        assert_eq!(args("-h example").server.as_deref(), Some("example"));
    }
}

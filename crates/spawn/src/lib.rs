//! kvlab's local servers: start `redis-server` and `memcached` for a benchmark, watch them,
//! and stop them.
//!
//! The main types and how they connect:
//!
//! - [`ServerSpec`]: what to start — a [`ServerKind`] plus settings, usually parsed from
//!   kvlab's `--spawn` argument by [`ServerSpec::parse`] (`maxmemory=512mb,io-threads=4`
//!   for Redis, `m=64,t=4,ext_path=extstore:1g` for memcached).
//! - [`Server`]: a running server, made by [`Server::start`]. It runs the binary from `PATH`
//!   (or `bin=`) on a free port of 127.0.0.1 inside its own temporary work directory, waits
//!   until the server answers, and records its version, its settings and its log file.
//!   [`Server::sample`] reads its CPU time and resident memory as a [`ProcessSample`];
//!   [`cpu_percent`] turns two samples into a CPU utilisation. [`Server::stop`] sends
//!   SIGTERM, then SIGKILL after a grace period, and returns a [`StopReport`]; dropping a
//!   [`Server`] stops it too, so a server never outlives an error or a panic.
//! - [`stop_all_spawned`]: every server started and not yet stopped is also in a
//!   process-wide registry, so a Ctrl-C handler can stop them all. Servers run in their own
//!   process group, so the terminal's Ctrl-C reaches kvlab only and kvlab decides when its
//!   servers stop.
//! - [`Cluster`]: a Redis Cluster of several [`Server`]s, made by [`start_redis_cluster`].
//! - [`resp`]: a tiny blocking RESP client ([`resp::command`]) for readiness checks, cluster
//!   set-up and tests.
//! - [`SpawnError`]: every failure; start-up failures carry the last lines of the server's
//!   log.
//!
//! ```no_run
//! use kvlab_spawn::{cpu_percent, Server, ServerKind, ServerSpec};
//!
//! let spec = ServerSpec::parse(ServerKind::Redis, "maxmemory=64mb,maxmemory-policy=allkeys-lru")?;
//! let server = Server::start(&spec)?;
//! println!("{} {} at {}", server.kind(), server.version(), server.url());
//! let before = server.sample()?;
//! // ... run the benchmark against server.addr() ...
//! let after = server.sample()?;
//! println!("server CPU {:.0}%", cpu_percent(&before, &after, after.taken - before.taken));
//! let report = server.stop()?;
//! println!("stopped by {:?}: {}", report.how, report.status);
//! # Ok::<(), kvlab_spawn::SpawnError>(())
//! ```

mod cluster;
pub mod fuzzing;
mod process;
mod registry;
pub mod resp;
mod server;
mod spec;

pub use cluster::{start_redis_cluster, start_redis_cluster_with, Cluster};
pub use process::{cpu_percent, ProcessSample};
pub use registry::{spawned_pids, stop_all_spawned};
pub use server::{Server, StopHow, StopReport};
pub use spec::{ServerKind, ServerSpec, DEFAULT_START_TIMEOUT, DEFAULT_STOP_GRACE};

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

/// Every failure of this crate.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// A `--spawn` setting is malformed, unknown to kvlab, or reserved for kvlab.
    #[error("invalid --spawn setting `{setting}`: {reason}")]
    InvalidSpec {
        /// The offending setting (or the whole argument).
        setting: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server binary is neither given by `bin=` nor found on `PATH`.
    #[error("`{binary}` not found on PATH; install it (e.g. `{install_hint}`) or pass bin=/path/to/{binary}")]
    BinaryNotFound {
        /// The binary looked for, e.g. `redis-server`.
        binary: String,
        /// How to install it on Debian or Ubuntu.
        install_hint: String,
    },
    /// The binary's version could not be read from its `--version` / `-V` output.
    #[error("could not read the version of {}: {reason}", binary.display())]
    Version {
        /// The binary that was run.
        binary: PathBuf,
        /// What went wrong, with the output if there was any.
        reason: String,
    },
    /// The server exited before it was ready.
    #[error("{binary} {} during start-up; last log lines:\n{log_tail}", describe_exit(.status))]
    ExitedDuringStartup {
        /// The binary's file name, e.g. `redis-server`.
        binary: String,
        /// Its exit status.
        status: ExitStatus,
        /// The last lines of its log.
        log_tail: String,
    },
    /// The server did not become ready in time; it has been killed.
    #[error("{binary} was not ready after {waited:?}; last log lines:\n{log_tail}")]
    StartTimeout {
        /// The binary's file name.
        binary: String,
        /// How long kvlab waited.
        waited: Duration,
        /// The last lines of its log.
        log_tail: String,
    },
    /// Every port tried was taken by the time the server bound it.
    #[error("{binary} found its port in use {attempts} times; last log lines:\n{log_tail}")]
    PortsInUse {
        /// The binary's file name.
        binary: String,
        /// How many ports were tried.
        attempts: usize,
        /// The last lines of the last attempt's log.
        log_tail: String,
    },
    /// The process does not exist or has already exited (a zombie counts as exited).
    #[error("process {pid} is not running")]
    ProcessGone {
        /// Its process id.
        pid: u32,
    },
    /// `/proc/PID/...` could not be parsed.
    #[error("unexpected contents of /proc/{pid}/{file}: {reason}")]
    Proc {
        /// The process id.
        pid: u32,
        /// The file, `stat` or `status`.
        file: &'static str,
        /// What was unexpected.
        reason: String,
    },
    /// A RESP exchange failed: bad framing, or the connection closed mid-reply.
    #[error("RESP protocol error: {0}")]
    Protocol(String),
    /// Redis answered a command with an error reply.
    #[error("redis answered `{command}` with an error: {message}")]
    Redis {
        /// The command sent.
        command: String,
        /// The error reply, e.g. `ERR unknown command`.
        message: String,
    },
    /// A Redis Cluster could not be formed.
    #[error("redis cluster: {0}")]
    Cluster(String),
    /// An operating-system call failed.
    #[error("{context}: {source}")]
    Io {
        /// What kvlab was doing.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// "exited with status 1" or "was killed by signal 9 (SIGKILL)".
pub(crate) fn describe_exit(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => {
            let name = match signal {
                libc::SIGTERM => " (SIGTERM)",
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGINT => " (SIGINT)",
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGABRT => " (SIGABRT)",
                libc::SIGBUS => " (SIGBUS)",
                _ => "",
            };
            format!("was killed by signal {signal}{name}")
        }
        (None, None) => format!("ended with {status}"),
    }
}

impl SpawnError {
    /// Wraps an I/O error with what kvlab was doing.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> SpawnError {
        SpawnError::Io {
            context: context.into(),
            source,
        }
    }
}

//! [`Server`]: start a server on a free loopback port, wait until it answers, watch it,
//! stop it.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::process::{running_as_root, ProcessSample};
use crate::resp::{Connection, Value};
use crate::{registry, ServerKind, ServerSpec, SpawnError};

/// How many free ports [`Server::start`] tries when the port it picked is taken.
const PORT_ATTEMPTS: usize = 3;

/// How many log lines a start-up error shows.
const ERROR_LOG_LINES: usize = 20;

/// What Redis logs once it serves clients (7.2 and later append `tcp` or `tls`).
const REDIS_READY_LINE: &str = "Ready to accept connections";

/// How a server came to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopHow {
    /// It exited within the grace period after SIGTERM.
    Terminated,
    /// It was still running after the grace period and was killed with SIGKILL.
    Killed,
    /// It had already exited before the stop began: it crashed, was killed by
    /// [`Server::kill`], or was stopped by [`stop_all_spawned`](crate::stop_all_spawned).
    AlreadyExited,
}

/// What [`Server::stop`] observed.
#[derive(Debug, Clone)]
pub struct StopReport {
    /// The server's process id.
    pub pid: u32,
    /// How it stopped.
    pub how: StopHow,
    /// Its exit status (on Unix, `status.signal()` tells a signal death).
    pub status: ExitStatus,
    /// The last sample taken just before SIGTERM: the server's total CPU time and its
    /// memory at the end of the run. `None` if it had already exited.
    pub last_sample: Option<ProcessSample>,
    /// How long stopping took.
    pub took: Duration,
}

impl StopReport {
    /// One line for logs and result files, e.g.
    /// `stopped by SIGTERM in 0.112 s: exited with status 0`.
    pub fn describe(&self) -> String {
        let how = match self.how {
            StopHow::Terminated => "stopped by SIGTERM",
            StopHow::Killed => "killed with SIGKILL",
            StopHow::AlreadyExited => "had already stopped",
        };
        format!(
            "{how} in {:.3} s: {}",
            self.took.as_secs_f64(),
            crate::describe_exit(&self.status)
        )
    }
}

/// A running `redis-server` or `memcached`, started by [`Server::start`].
///
/// The server listens on 127.0.0.1 only, runs in its own process group (so the terminal's
/// Ctrl-C does not reach it) with a temporary work directory that holds its config, its
/// log and any data files, and which is deleted when the `Server` goes away. Stop it with
/// [`Server::stop`]; dropping it stops it too (best effort, never panicking).
#[derive(Debug)]
pub struct Server {
    kind: ServerKind,
    /// `None` once stopped.
    child: Option<Child>,
    /// Set once the child has been reaped by [`Server::try_wait`].
    exited: Option<ExitStatus>,
    pid: u32,
    addr: SocketAddr,
    /// The UNIX domain socket it also (Redis `unixsocket`) or only (memcached `s`)
    /// listens on.
    socket: Option<PathBuf>,
    /// memcached `B=binary`: it speaks the binary protocol only.
    binary_only: bool,
    tls: bool,
    binary: PathBuf,
    version: String,
    config: Vec<(String, String)>,
    command_line: Vec<String>,
    log_path: PathBuf,
    stop_grace: Duration,
    // Declared last: dropped after the Drop impl has stopped the process.
    workdir: TempDir,
}

/// Name-value settings, in order.
type Settings = Vec<(String, String)>;

/// What one launch on one port came to.
enum Launch {
    Ready(Box<Server>),
    PortInUse(String),
}

impl Server {
    /// Starts the server described by `spec` and waits until it is ready.
    ///
    /// The binary is `spec.binary` or [`ServerKind::binary_name`] on `PATH`; its version is
    /// read first (`redis-server --version`, `memcached -V`). The server gets a free port
    /// of 127.0.0.1 (bound and released by kvlab just before); if the server then finds
    /// that port taken, another is tried, up to three in all. It is ready when:
    ///
    /// - Redis answers `PING` over plain TCP with `+PONG` (or `-NOAUTH`, when the spec sets
    ///   a password), or its log says `Ready to accept connections` — the only check for a
    ///   TLS server, which gets `port 0` and `tls-port <free port>`;
    /// - memcached answers `version` with `VERSION ...` (a binary `VERSION` packet with
    ///   `B=binary`; over its socket with `s=PATH`).
    ///
    /// A UNIX domain socket path (Redis `unixsocket=PATH`, memcached `s=PATH`, which turns
    /// memcached's TCP off) that is relative is taken in the work directory; then
    /// [`Server::url`] names the socket.
    ///
    /// Redis runs from a generated `redis.conf`: `port`, `bind 127.0.0.1`, `dir <workdir>`,
    /// `logfile ""` (the log goes to stdout, which kvlab writes to `redis-server.log` beside
    /// the config together with stderr, so config errors land in the log too),
    /// `daemonize no`, then `protected-mode no`, `save ""` and `appendonly no` unless the
    /// spec sets them, then the spec's settings. With `cluster-enabled yes` and no
    /// `cluster-port`, a second free port is picked for the cluster bus.
    ///
    /// memcached runs as `memcached -l 127.0.0.1 -p PORT -U 0 -m 64 -t 4` (the spec's
    /// `m` and `t` replace those defaults), `-u root` when kvlab runs as root, then the
    /// spec's flags and `-o` options, with stdout and stderr in `memcached.log`.
    ///
    /// Fails with [`SpawnError::BinaryNotFound`], [`SpawnError::Version`],
    /// [`SpawnError::ExitedDuringStartup`], [`SpawnError::StartTimeout`] (after
    /// `spec.start_timeout`; the server is killed) or [`SpawnError::PortsInUse`]; the
    /// last three show the last lines of the server's log.
    pub fn start(spec: &ServerSpec) -> Result<Server, SpawnError> {
        Server::start_inner(spec, false)
    }

    /// [`Server::start`], as a Redis Cluster node when `cluster` is set.
    pub(crate) fn start_inner(spec: &ServerSpec, cluster: bool) -> Result<Server, SpawnError> {
        let binary = resolve_binary(spec.kind, spec.binary.as_deref())?;
        let version = read_version(spec.kind, &binary)?;
        let mut log_tail = String::new();
        for _ in 0..PORT_ATTEMPTS {
            match Server::launch(spec, &binary, &version, cluster)? {
                Launch::Ready(server) => return Ok(*server),
                Launch::PortInUse(tail) => log_tail = tail,
            }
        }
        Err(SpawnError::PortsInUse {
            binary: binary_label(&binary),
            attempts: PORT_ATTEMPTS,
            log_tail,
        })
    }

    fn launch(
        spec: &ServerSpec,
        binary: &Path,
        version: &str,
        cluster: bool,
    ) -> Result<Launch, SpawnError> {
        let kind = spec.kind;
        let workdir = tempfile::Builder::new()
            .prefix(&format!("kvlab-{}-", kind.binary_name()))
            .tempdir()
            .map_err(|e| SpawnError::io("creating a temporary work directory", e))?;
        let dir = workdir.path();
        let socket;
        let (port, config, args) = match kind {
            ServerKind::Redis => {
                let cluster = cluster
                    || spec
                        .get("cluster-enabled")
                        .is_some_and(|v| v.eq_ignore_ascii_case("yes"));
                let bus_port = cluster && spec.get("cluster-port").is_none();
                let (port, bus) = free_ports(bus_port)?;
                let config = redis_config(spec, dir, port, cluster, bus);
                socket = spec.get("unixsocket").map(|p| dir.join(p));
                let path = dir.join("redis.conf");
                write_redis_config(&path, &config)?;
                (port, config, vec![path.display().to_string()])
            }
            ServerKind::Memcached => {
                let (port, _) = free_ports(false)?;
                socket = spec.get("s").map(|p| dir.join(p));
                let (config, args) = memcached_args(spec, dir, port)?;
                (port, config, args)
            }
        };
        let log_path = dir.join(format!("{}.log", kind.binary_name()));
        let log = File::create(&log_path)
            .map_err(|e| SpawnError::io(format!("creating {}", log_path.display()), e))?;
        let log_err = log
            .try_clone()
            .map_err(|e| SpawnError::io("duplicating the log file handle", e))?;
        let mut command = Command::new(binary);
        command
            .args(&args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .process_group(0);
        let child = command
            .spawn()
            .map_err(|e| SpawnError::io(format!("starting {}", binary.display()), e))?;
        let pid = child.id();
        registry::register(pid);
        let mut command_line = vec![binary.display().to_string()];
        command_line.extend(args);
        let mut server = Server {
            kind,
            child: Some(child),
            exited: None,
            pid,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            socket,
            binary_only: kind == ServerKind::Memcached
                && spec.get("B").is_some_and(|b| b == "binary"),
            tls: spec.tls,
            binary: binary.to_path_buf(),
            version: version.to_string(),
            config,
            command_line,
            log_path,
            stop_grace: spec.stop_grace,
            workdir,
        };
        match server.wait_ready(spec.start_timeout)? {
            None => Ok(Launch::Ready(Box::new(server))),
            Some(status) => {
                let log_tail = server.log_tail(ERROR_LOG_LINES);
                if log_tail.contains("Address already in use") {
                    Ok(Launch::PortInUse(log_tail))
                } else {
                    Err(SpawnError::ExitedDuringStartup {
                        binary: binary_label(binary),
                        status,
                        log_tail,
                    })
                }
            }
        }
    }

    /// Waits until the server answers: `Ok(None)` when ready, `Ok(Some(status))` if it
    /// exited first. On timeout it kills the server and fails.
    fn wait_ready(&mut self, timeout: Duration) -> Result<Option<ExitStatus>, SpawnError> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(Some(status));
            }
            if self.probe() {
                // The port might have been answered by someone else while our server was
                // failing to bind it.
                return match self.try_wait()? {
                    Some(status) => Ok(Some(status)),
                    None => Ok(None),
                };
            }
            if start.elapsed() >= timeout {
                let log_tail = self.log_tail(ERROR_LOG_LINES);
                let _ = self.stop_inner(Duration::ZERO);
                return Err(SpawnError::StartTimeout {
                    binary: binary_label(&self.binary),
                    waited: start.elapsed(),
                    log_tail,
                });
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// One readiness check.
    fn probe(&self) -> bool {
        let timeout = Duration::from_millis(500);
        match self.kind {
            ServerKind::Redis => {
                if !self.tls {
                    let reply =
                        Connection::connect(self.addr, timeout).and_then(|mut c| c.call(&["PING"]));
                    match reply {
                        Ok(Value::Simple(s)) if s == "PONG" => return true,
                        Ok(Value::Error(e)) if e.starts_with("NOAUTH") => return true,
                        _ => {}
                    }
                }
                self.log_tail(50).contains(REDIS_READY_LINE)
            }
            ServerKind::Memcached => {
                let target = match &self.socket {
                    Some(path) => Target::Unix(path),
                    None => Target::Tcp(self.addr),
                };
                if self.binary_only {
                    memcached_binary_version(target, timeout).is_ok()
                } else {
                    memcached_version(target, timeout)
                        .is_ok_and(|line| line.starts_with("VERSION "))
                }
            }
        }
    }

    /// Which server this is.
    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The port it listens on (the TLS port for a TLS server).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// 127.0.0.1 and the port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether it serves TLS rather than plain TCP.
    pub fn tls(&self) -> bool {
        self.tls
    }

    /// The UNIX domain socket the server listens on, if one was asked for.
    pub fn unix_socket(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// Where clients connect: `redis://127.0.0.1:PORT`, `rediss://127.0.0.1:PORT` for TLS,
    /// or `memcached://127.0.0.1:PORT`; `redis+unix:///PATH` or `memcached+unix:///PATH`
    /// for a server on a UNIX domain socket.
    pub fn url(&self) -> String {
        if let Some(path) = &self.socket {
            return format!("{}+unix://{}", self.kind.scheme(), path.display());
        }
        let scheme = match (self.kind, self.tls) {
            (ServerKind::Redis, true) => "rediss",
            (kind, _) => kind.scheme(),
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The binary that runs.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The server's version, e.g. `7.0.15` or `1.6.18`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The effective settings: for Redis every directive of the generated `redis.conf`
    /// (kvlab's and the spec's, in order; an empty value is `""`), for memcached every flag
    /// (`m`, `t`...) and `-o` option (`ext_path`...) passed, with its value.
    pub fn config(&self) -> &[(String, String)] {
        &self.config
    }

    /// The command that started the server: the binary, then its arguments.
    pub fn command_line(&self) -> &[String] {
        &self.command_line
    }

    /// The server's log: its stdout and stderr.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The temporary work directory, deleted when the `Server` goes away.
    pub fn workdir(&self) -> &Path {
        self.workdir.path()
    }

    /// The last `lines` lines of the server's log, joined by newlines. If the log cannot be
    /// read, a note saying why.
    pub fn log_tail(&self, lines: usize) -> String {
        read_tail(&self.log_path, lines)
    }

    /// Samples the server's CPU time and memory. Fails with [`SpawnError::ProcessGone`]
    /// once it has exited.
    pub fn sample(&self) -> Result<ProcessSample, SpawnError> {
        if self.exited.is_some() || self.child.is_none() {
            return Err(SpawnError::ProcessGone { pid: self.pid });
        }
        ProcessSample::of(self.pid)
    }

    /// The exit status if the server has exited (crashed, or killed), without waiting;
    /// `None` while it runs.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>, SpawnError> {
        if let Some(status) = self.exited {
            return Ok(Some(status));
        }
        let Some(child) = self.child.as_mut() else {
            return Ok(None);
        };
        let status = registry::try_reap(child)
            .map_err(|e| SpawnError::io(format!("checking on process {}", self.pid), e))?;
        self.exited = status;
        Ok(status)
    }

    /// Kills the server with SIGKILL at once, as a crash would, without waiting or
    /// reaping; [`Server::try_wait`] and [`Server::stop`] see the death. Does nothing once
    /// the server has been reaped.
    pub fn kill(&self) {
        registry::signal(self.pid, libc::SIGKILL);
    }

    /// Starts the server again once it has died (killed by [`Server::kill`], say): the
    /// same binary, configuration, port and work directory — so that a Redis server reads
    /// back what it persisted there (its AOF or RDB file) — and waits up to `timeout`
    /// until it is ready (for Redis, until it has loaded that file). The log of the run
    /// before is kept beside the new one, as `<log>.1` (then `.2`, …).
    pub fn restart(&mut self, timeout: Duration) -> Result<(), SpawnError> {
        let waited = Instant::now();
        while self.try_wait()?.is_none() {
            if waited.elapsed() > Duration::from_secs(10) {
                return Err(SpawnError::io(
                    format!("restarting process {}", self.pid),
                    std::io::Error::other("it is still running"),
                ));
            }
            thread::sleep(Duration::from_millis(5));
        }
        // A fresh log, so that readiness is read from this run's lines only.
        let kept = (1..)
            .map(|n| PathBuf::from(format!("{}.{n}", self.log_path.display())))
            .find(|p| !p.exists())
            .expect("some numbered name is free");
        std::fs::rename(&self.log_path, &kept)
            .map_err(|e| SpawnError::io(format!("keeping {}", self.log_path.display()), e))?;
        let log = File::create(&self.log_path)
            .map_err(|e| SpawnError::io(format!("creating {}", self.log_path.display()), e))?;
        let log_err = log
            .try_clone()
            .map_err(|e| SpawnError::io("duplicating the log file handle", e))?;
        let child = Command::new(&self.binary)
            .args(&self.command_line[1..])
            .current_dir(self.workdir.path())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .process_group(0)
            .spawn()
            .map_err(|e| SpawnError::io(format!("starting {}", self.binary.display()), e))?;
        self.pid = child.id();
        registry::register(self.pid);
        self.child = Some(child);
        self.exited = None;
        match self.wait_ready(timeout)? {
            None => Ok(()),
            Some(status) => Err(SpawnError::ExitedDuringStartup {
                binary: binary_label(&self.binary),
                status,
                log_tail: self.log_tail(ERROR_LOG_LINES),
            }),
        }
    }

    /// Stops the server: SIGTERM, then SIGKILL if it still runs after the spec's
    /// `stop_grace` ([`DEFAULT_STOP_GRACE`](crate::DEFAULT_STOP_GRACE) by default). The
    /// process is reaped and the work directory deleted.
    pub fn stop(mut self) -> Result<StopReport, SpawnError> {
        let grace = self.stop_grace;
        self.stop_inner(grace)
    }

    /// [`Server::stop`] with another grace period; `Duration::ZERO` kills at once.
    pub fn stop_with_grace(mut self, grace: Duration) -> Result<StopReport, SpawnError> {
        self.stop_inner(grace)
    }

    fn stop_inner(&mut self, grace: Duration) -> Result<StopReport, SpawnError> {
        let started = Instant::now();
        let pid = self.pid;
        let report = |how, status, last_sample| StopReport {
            pid,
            how,
            status,
            last_sample,
            took: started.elapsed(),
        };
        if let Some(status) = self.try_wait()? {
            self.child = None;
            return Ok(report(StopHow::AlreadyExited, status, None));
        }
        let last_sample = ProcessSample::of(pid).ok();
        let mut how = StopHow::Terminated;
        if grace.is_zero() {
            how = StopHow::Killed;
            registry::signal(pid, libc::SIGKILL);
        } else {
            registry::signal(pid, libc::SIGTERM);
        }
        let mut pause = Duration::from_millis(1);
        let kill_deadline = started + grace;
        let give_up = kill_deadline + Duration::from_secs(30);
        loop {
            if let Some(status) = self.try_wait()? {
                self.child = None;
                return Ok(report(how, status, last_sample));
            }
            let now = Instant::now();
            if how == StopHow::Terminated && now >= kill_deadline {
                how = StopHow::Killed;
                registry::signal(pid, libc::SIGKILL);
            } else if now >= give_up {
                return Err(SpawnError::io(
                    format!("stopping process {pid}"),
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "still running 30 s after SIGKILL",
                    ),
                ));
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop_inner(self.stop_grace);
        }
    }
}

/// The file name of a binary, for messages: `redis-server`.
fn binary_label(binary: &Path) -> String {
    binary
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| binary.display().to_string())
}

/// `given`, or `kind`'s binary on `PATH`.
fn resolve_binary(kind: ServerKind, given: Option<&Path>) -> Result<PathBuf, SpawnError> {
    let name = kind.binary_name();
    match given {
        Some(path) if path.components().count() > 1 => {
            if is_executable(path) {
                Ok(path.to_path_buf())
            } else {
                Err(SpawnError::BinaryNotFound {
                    binary: path.display().to_string(),
                    install_hint: kind.install_hint().into(),
                })
            }
        }
        Some(bare) => find_on_path(&bare.to_string_lossy(), kind.install_hint()),
        None => find_on_path(name, kind.install_hint()),
    }
}

/// Looks `name` up on `PATH`.
pub(crate) fn find_on_path(name: &str, install_hint: &str) -> Result<PathBuf, SpawnError> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| SpawnError::BinaryNotFound {
            binary: name.to_string(),
            install_hint: install_hint.to_string(),
        })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `binary --version` / `-V` and picks the version out.
fn read_version(kind: ServerKind, binary: &Path) -> Result<String, SpawnError> {
    let flag = match kind {
        ServerKind::Redis => "--version",
        ServerKind::Memcached => "-V",
    };
    let mut command = Command::new(binary);
    command.arg(flag);
    let (status, output) = run_captured(&mut command, Duration::from_secs(10))?;
    let version = match kind {
        // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=..."
        ServerKind::Redis => output
            .split_whitespace()
            .find_map(|word| word.strip_prefix("v=")),
        // "memcached 1.6.18"
        ServerKind::Memcached => output
            .lines()
            .find_map(|line| line.trim().strip_prefix("memcached "))
            .map(str::trim),
    };
    match version {
        Some(v) if status.success() && !v.is_empty() => Ok(v.to_string()),
        _ => Err(SpawnError::Version {
            binary: binary.to_path_buf(),
            reason: format!(
                "`{} {flag}` exited with {status} and printed {:?}",
                binary.display(),
                output.trim()
            ),
        }),
    }
}

/// Runs `command` to completion with stdout and stderr captured together, killing it after
/// `timeout`.
pub(crate) fn run_captured(
    command: &mut Command,
    timeout: Duration,
) -> Result<(ExitStatus, String), SpawnError> {
    let what = format!("{:?}", command.get_program());
    let mut out = tempfile::tempfile()
        .map_err(|e| SpawnError::io("creating a file for command output", e))?;
    let clone = || {
        out.try_clone()
            .map_err(|e| SpawnError::io("duplicating a file handle", e))
    };
    command
        .stdin(Stdio::null())
        .stdout(clone()?)
        .stderr(clone()?);
    let mut child = command
        .spawn()
        .map_err(|e| SpawnError::io(format!("running {what}"), e))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SpawnError::io(
                    format!("running {what}"),
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no exit after {timeout:?}"),
                    ),
                ));
            }
            Err(e) => return Err(SpawnError::io(format!("waiting for {what}"), e)),
        }
    };
    let mut text = String::new();
    out.seek(SeekFrom::Start(0))
        .and_then(|_| out.read_to_string(&mut text))
        .map_err(|e| SpawnError::io(format!("reading the output of {what}"), e))?;
    Ok((status, text))
}

/// Binds 127.0.0.1:0 once (twice with `second`) and returns the ports, released again.
fn free_ports(second: bool) -> Result<(u16, u16), SpawnError> {
    let bind = || {
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| Ok((l.local_addr()?.port(), l)))
            .map_err(|e| SpawnError::io("finding a free port on 127.0.0.1", e))
    };
    let (first, _held) = bind()?;
    let other = if second { bind()?.0 } else { 0 };
    Ok((first, other))
}

/// Redis's quoting for config values that are paths.
fn redis_quote(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("\"{escaped}\"")
}

/// The directives of the generated `redis.conf`, values as written.
fn redis_config(
    spec: &ServerSpec,
    dir: &Path,
    port: u16,
    cluster: bool,
    bus_port: u16,
) -> Vec<(String, String)> {
    let mut config: Vec<(String, String)> = Vec::new();
    let mut set = |name: &str, value: String| config.push((name.to_string(), value));
    if spec.tls {
        set("port", "0".into());
        set("tls-port", port.to_string());
    } else {
        set("port", port.to_string());
    }
    set("bind", "127.0.0.1".into());
    set("dir", redis_quote(&dir.display().to_string()));
    set("logfile", "\"\"".into());
    set("daemonize", "no".into());
    let defaults = [
        ("protected-mode", "no"),
        ("save", "\"\""),
        ("appendonly", "no"),
    ];
    for (name, value) in defaults {
        if spec.get(name).is_none() {
            set(name, value.into());
        }
    }
    if cluster {
        if spec.get("cluster-enabled").is_none() {
            set("cluster-enabled", "yes".into());
        }
        if spec.get("cluster-config-file").is_none() {
            set("cluster-config-file", "nodes.conf".into());
        }
        if bus_port != 0 {
            set("cluster-port", bus_port.to_string());
        }
    }
    for (name, value) in &spec.options {
        let value = if value.is_empty() {
            "\"\"".to_string()
        } else if name == "unixsocket" {
            // A relative socket path is in the work directory.
            redis_quote(&dir.join(value).display().to_string())
        } else {
            value.clone()
        };
        set(name, value);
    }
    config
}

fn write_redis_config(path: &Path, config: &[(String, String)]) -> Result<(), SpawnError> {
    let mut text = String::from("# Generated by kvlab for one benchmark run.\n");
    for (name, value) in config {
        text.push_str(&format!("{name} {value}\n"));
    }
    File::create(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| SpawnError::io(format!("writing {}", path.display()), e))
}

/// memcached's settings and arguments. Creates the parent directories of `ext_path` files.
fn memcached_args(
    spec: &ServerSpec,
    dir: &Path,
    port: u16,
) -> Result<(Settings, Vec<String>), SpawnError> {
    // With a UNIX domain socket (`s`), memcached serves no TCP.
    let mut settings: Settings = if spec.get("s").is_some() {
        Vec::new()
    } else {
        vec![
            ("l".into(), "127.0.0.1".into()),
            ("p".into(), port.to_string()),
            ("U".into(), "0".into()),
        ]
    };
    for (name, default) in [("m", "64"), ("t", "4")] {
        if spec.get(name).is_none() {
            settings.push((name.into(), default.into()));
        }
    }
    if running_as_root() && spec.get("u").is_none() {
        settings.push(("u".into(), "root".into()));
    }
    settings.extend(spec.options.iter().map(|(k, v)| {
        if k == "s" {
            (k.clone(), dir.join(v).display().to_string())
        } else {
            (k.clone(), v.clone())
        }
    }));

    let mut args = Vec::new();
    for (name, value) in &settings {
        if name.chars().count() == 1 {
            args.push(format!("-{name}"));
            if !value.is_empty() {
                args.push(value.clone());
            }
        } else {
            args.push("-o".into());
            args.push(if value.is_empty() {
                name.clone()
            } else {
                format!("{name}={value}")
            });
        }
        if name == "ext_path" {
            // FILE:SIZE; the file's directory must exist.
            let file = value.rsplit_once(':').map_or(value.as_str(), |(f, _)| f);
            if let Some(parent) = dir.join(file).parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    SpawnError::io(format!("creating {} for ext_path", parent.display()), e)
                })?;
            }
        }
    }
    Ok((settings, args))
}

/// Where a readiness probe connects.
enum Target<'a> {
    Tcp(SocketAddr),
    Unix(&'a Path),
}

/// A blocking stream to a server, read and written with timeouts.
fn probe_stream(target: Target<'_>, timeout: Duration) -> std::io::Result<Box<dyn ReadWrite>> {
    let stream: Box<dyn ReadWrite> = match target {
        Target::Tcp(addr) => {
            let s = TcpStream::connect_timeout(&addr, timeout)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            Box::new(s)
        }
        Target::Unix(path) => {
            let s = std::os::unix::net::UnixStream::connect(path)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            Box::new(s)
        }
    };
    Ok(stream)
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

/// Sends memcached's `version` command and returns the reply line.
fn memcached_version(target: Target<'_>, timeout: Duration) -> std::io::Result<String> {
    let mut stream = probe_stream(target, timeout)?;
    stream.write_all(b"version\r\n")?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}

/// Sends a binary protocol `VERSION` packet (opcode 0x0b) and checks a response packet
/// (magic 0x81) comes back.
fn memcached_binary_version(target: Target<'_>, timeout: Duration) -> std::io::Result<()> {
    let mut stream = probe_stream(target, timeout)?;
    let mut request = [0u8; 24];
    request[0] = 0x80;
    request[1] = 0x0b;
    stream.write_all(&request)?;
    let mut header = [0u8; 24];
    stream.read_exact(&mut header)?;
    if header[0] == 0x81 && header[1] == 0x0b {
        Ok(())
    } else {
        Err(std::io::Error::other("not a binary VERSION response"))
    }
}

/// The last `lines` lines of the file at `path` (reading at most its last 64 KiB).
fn read_tail(path: &Path, lines: usize) -> String {
    const MAX: u64 = 64 * 1024;
    let read = || -> std::io::Result<String> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let from = len.saturating_sub(MAX);
        file.seek(SeekFrom::Start(from))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        let mut all: Vec<&str> = text.lines().collect();
        if from > 0 && !all.is_empty() {
            all.remove(0); // probably cut in the middle
        }
        let keep = all.len().saturating_sub(lines);
        Ok(all[keep..].join("\n").trim_matches('\n').to_string())
    };
    read().unwrap_or_else(|e| format!("(could not read {}: {e})", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_move_between_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Server>();
        send_sync::<crate::Cluster>();
        send_sync::<SpawnError>();
    }

    #[test]
    fn tail_of_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(read_tail(&path, 2), "c\nd");
        assert_eq!(read_tail(&path, 10), "a\nb\nc\nd");
        assert!(read_tail(&dir.path().join("none"), 2).starts_with("(could not read"));
    }

    #[test]
    fn redis_config_defaults_yield_to_spec() {
        let spec = ServerSpec::parse(ServerKind::Redis, "save=900 1,maxmemory=1mb").unwrap();
        let config = redis_config(&spec, Path::new("/w d"), 7000, false, 0);
        let get = |n: &str| {
            config
                .iter()
                .filter(|(k, _)| k == n)
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("port"), ["7000"]);
        assert_eq!(get("save"), ["900 1"]);
        assert_eq!(get("appendonly"), ["no"]);
        assert_eq!(get("dir"), ["\"/w d\""]);
        assert_eq!(get("maxmemory"), ["1mb"]);
        assert!(get("cluster-enabled").is_empty());
        let config = redis_config(&spec, Path::new("/w"), 7000, true, 7001);
        assert!(config.contains(&("cluster-port".into(), "7001".into())));
    }

    #[test]
    fn memcached_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let spec =
            ServerSpec::parse(ServerKind::Memcached, "m=32,L,ext_path=sub/ext:64m,modern").unwrap();
        let (settings, args) = memcached_args(&spec, dir.path(), 11311).unwrap();
        let line = args.join(" ");
        assert!(
            line.starts_with("-l 127.0.0.1 -p 11311 -U 0 -t 4"),
            "{line}"
        );
        assert!(
            line.contains("-m 32 -L -o ext_path=sub/ext:64m -o modern"),
            "{line}"
        );
        assert!(settings.contains(&("m".into(), "32".into())));
        assert!(dir.path().join("sub").is_dir());
    }

    #[test]
    fn missing_binary_names_the_package() {
        let err = resolve_binary(
            ServerKind::Memcached,
            Some(Path::new("/nonexistent/memcached")),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("apt-get install memcached"),
            "{err}"
        );
        let err = find_on_path("kvlab-no-such-binary", "apt-get install x").unwrap_err();
        assert!(err.to_string().contains("kvlab-no-such-binary"), "{err}");
    }
}

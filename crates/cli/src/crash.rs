//! Crash tests: does a store keep every write it acknowledged when its writer dies?
//!
//! Three pieces:
//! - `--expected-log FILE` on `load` and `run`: every write the store acknowledged is
//!   appended to FILE (`I`, `U` or `D`, a tab, the key), one `write(2)` per completed
//!   batch, after the store answered — so the file survives the process being killed, and
//!   it holds a subset of what was acknowledged (a write acknowledged in the instant
//!   before the kill may be missing from it, never the reverse).
//! - `--expected-log FILE` on `verify`: every record is read back and set against the
//!   log — recovered (acknowledged and there, intact), lost (acknowledged, not there; or
//!   a delete acknowledged and the record back), corrupted (there, not as written),
//!   unacknowledged but present (in flight when the writer died, and kept: allowed) —
//!   printed as `[CRASH], …` lines; exit code 1 when a write was lost or a record
//!   corrupted.
//! - `kvlab crash`: rounds of `load --expected-log` killed with SIGKILL after
//!   `--kill-after` — the writing process of an embedded store, or the server kvlab
//!   started (`--spawn`), then started again on its own data directory — each followed
//!   by `verify --expected-log` on what the store kept. With `--power-loss` the store's
//!   files (an embedded store's directory, a started Redis server's data directory) are
//!   written through a power-cut file system (`kvlab_powercut`) over the round's
//!   directory, and the kill cuts the power: what was not synced is gone before the
//!   check.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use kvlab_lab::expected::CrashCheck;
use kvlab_lab::plan::parse_duration;

use crate::args::{usage, PhaseArgs};
use kvlab_lab::phase::interrupt::random_seed;

/// `kvlab crash`'s own options (the rest are `load`'s).
#[derive(Args, Debug)]
pub(crate) struct CrashCommand {
    #[command(flatten)]
    pub(crate) phase: PhaseArgs,
    /// Kill the writer this long after its first acknowledged write (the clock starts
    /// there, not at the process's start, so a store that opens slowly is still tested): a
    /// time (2s), or MIN..MAX for a time drawn anew for each round (1s..3s).
    #[arg(long, value_name = "TIME|MIN..MAX", default_value = "2s")]
    pub(crate) kill_after: String,
    /// Kill the writer once it has acknowledged at least N writes (counted in its
    /// expected-state log, which it appends one batch at a time), instead of after a time.
    #[arg(long, value_name = "N", conflicts_with = "kill_after",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) kill_after_writes: Option<u64>,
    /// How many times to load, kill and check (each round into a fresh PATH/round-N).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) rounds: u32,
    /// Each kill is also a power cut: the store's directory (an embedded store's, or the
    /// data directory of a Redis server it starts) is served through a file system that
    /// keeps written data only once it is synced (`fsync`, `fdatasync`), and everything
    /// not synced at the kill is lost — as db_stress's fault-injection file system and
    /// LazyFS do. Needs /dev/fuse and root.
    #[arg(long)]
    pub(crate) power_loss: bool,
}

/// One round of `kvlab crash`.
#[derive(Debug, Clone, serde::Serialize)]
struct Round {
    round: u32,
    /// Seconds from the first acknowledged write to the kill.
    killed_after_s: f64,
    /// The writer finished before the kill: nothing was tested.
    finished_first: bool,
    /// Writes were acknowledged before a kill: a round that tested something. A round
    /// killed before its first acknowledged write, or whose writer finished first, did not.
    tested: bool,
    /// With `--power-loss`: the files and bytes written but not synced at the cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    unsynced_files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unsynced_bytes: Option<u64>,
    #[serde(flatten)]
    check: CrashCheck,
}

/// Parses `2s` or `1s..3s`.
fn kill_window(s: &str) -> Result<(Duration, Duration)> {
    let parse = |t: &str| parse_duration(t).map_err(|e| usage(format!("--kill-after: {e}")));
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (parse(a)?, parse(b)?);
            if a > b {
                return Err(usage(format!("--kill-after {s}: MIN is above MAX")));
            }
            Ok((a, b))
        }
        None => {
            let t = parse(s)?;
            Ok((t, t))
        }
    }
}

/// Options of `kvlab crash` not passed on to its `load` and `verify` children.
const OWN_OPTIONS: [&str; 7] = [
    "--kill-after",
    "--kill-after-writes",
    "--rounds",
    "--path",
    "--out",
    "--expected-log",
    "--progress",
];

/// Runs `kvlab crash`.
pub(crate) fn crash(cmd: CrashCommand) -> Result<ExitCode> {
    let a = &cmd.phase;
    let store = kvlab_lab::StoreInfo::find(&a.db).filter(|s| s.crashable);
    let server_kind = match store.map(|s| (s.access, s.name)) {
        Some((kvlab_lab::Access::Embedded, _)) => None,
        Some((_, "redis")) => Some(kvlab_spawn::ServerKind::Redis),
        Some((_, "memcached")) => Some(kvlab_spawn::ServerKind::Memcached),
        _ => {
            return Err(usage(format!(
                "kvlab crash kills the writer of an embedded store or a server it starts \
                 (--spawn): one of {}, not {}",
                kvlab_lab::StoreInfo::crashable_names().join(", "),
                a.db
            )))
        }
    };
    let spec = match (server_kind, &a.spawn) {
        (Some(kind), Some(settings)) => {
            Some(kvlab_spawn::ServerSpec::parse(kind, settings).map_err(|e| usage(e.to_string()))?)
        }
        (Some(_), None) => {
            return Err(usage(format!(
                "kvlab crash kills and restarts the {} server itself: give --spawn [SETTINGS] \
                 (e.g. --spawn appendonly=yes), not --url",
                a.db
            )))
        }
        (None, _) => None,
    };
    let base = match (&a.path, &spec) {
        (Some(p), _) => p.clone(),
        (None, Some(_)) => std::env::temp_dir().join(format!("kvlab-crash-{}", std::process::id())),
        (None, None) => {
            return Err(usage(
                "kvlab crash needs --path DIR (each round loads into DIR/round-N)",
            ))
        }
    };
    if cmd.rounds == 0 {
        return Err(usage("--rounds must be at least 1"));
    }
    if cmd.power_loss && store.is_some_and(|s| !s.power_loss) {
        return Err(usage(format!(
            "--power-loss cuts the power under a store's files: {} keeps none",
            a.db
        )));
    }
    // What its children (a load, then a verify) cannot both take.
    for (flag, given) in [
        ("--metrics", a.monitor.metrics.is_some()),
        ("--slo", a.slo.is_some()),
        ("--shard", a.shard.is_some()),
        ("--start-at", a.start_at.is_some()),
        ("--fault", !a.faults.is_empty()),
        ("--record", a.record.record.is_some()),
    ] {
        if given {
            return Err(usage(format!("{flag} does not apply to kvlab crash")));
        }
    }
    let (min, max) = kill_window(&cmd.kill_after)?;
    let passed = passed_args();
    let exe = std::env::current_exe().context("finding kvlab's own executable")?;
    let mut seed = a.seed.unwrap_or_else(random_seed) | 1;
    let mut rounds = Vec::new();
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    let crasher = Crasher {
        cmd: &cmd,
        spec: spec.as_ref(),
        base: &base,
        passed: &passed,
        exe: &exe,
    };
    for round in 1..=cmd.rounds {
        // A kill time in the window, from a small generator of its own.
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let span = (max - min).as_secs_f64();
        let after = min + Duration::from_secs_f64(span * (seed % 1_000_000) as f64 / 1e6);
        rounds.push(crasher.round(round, after)?);
    }
    summarize(&cmd, spec.is_some(), &base, &rounds)
}

/// Prints the rounds' table and totals, writes `crash.json` with `--out`, says which
/// rounds tested nothing, and gives the exit code: 1 when a write was lost or a record
/// corrupted, or when no round tested anything.
fn summarize(cmd: &CrashCommand, spawned: bool, base: &Path, rounds: &[Round]) -> Result<ExitCode> {
    let a = &cmd.phase;
    let mut out = std::io::stdout().lock();
    // With a power cut, a last column: what the cut dropped.
    let cut = if cmd.power_loss {
        " unsynced bytes |"
    } else {
        ""
    };
    writeln!(
        out,
        "| round | killed after s | acknowledged | recovered | lost | corrupted | unacknowledged present |{cut}"
    )?;
    writeln!(
        out,
        "|---|---|---|---|---|---|---|{}",
        if cmd.power_loss { "---|" } else { "" }
    )?;
    for r in rounds {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |{}",
            r.round,
            if r.finished_first {
                "(finished first)".to_string()
            } else {
                format!("{:.2}", r.killed_after_s)
            },
            r.check.acknowledged,
            r.check.recovered,
            r.check.lost,
            r.check.corrupted,
            r.check.unacknowledged_present,
            r.unsynced_bytes
                .map_or(String::new(), |b| format!(" {b} |"))
        )?;
    }
    let lost: u64 = rounds.iter().map(|r| r.check.lost).sum();
    let corrupted: u64 = rounds.iter().map(|r| r.check.corrupted).sum();
    let untested = rounds.iter().filter(|r| !r.tested).count();
    writeln!(out, "[CRASH], Rounds, {}", rounds.len())?;
    writeln!(out, "[CRASH], UntestedRounds, {untested}")?;
    writeln!(out, "[CRASH], Lost, {lost}")?;
    writeln!(out, "[CRASH], Corrupted, {corrupted}")?;
    out.flush()?;
    if spawned && a.path.is_none() {
        let _ = std::fs::remove_dir_all(base);
    }
    if let Some(dir) = &a.out {
        kvlab_report::prepare_out_dir(dir, a.overwrite)
            .with_context(|| format!("preparing the output directory {}", dir.display()))?;
        let doc = serde_json::json!({
            "store": a.db,
            "command": kvlab_lab::phase::output::redact_args(std::env::args()),
            "kill_after": cmd.kill_after,
            "power_loss": cmd.power_loss,
            "kill_after_writes": cmd.kill_after_writes,
            "rounds": rounds,
            "untested_rounds": untested,
            "lost": lost,
            "corrupted": corrupted,
        });
        let mut json = serde_json::to_string_pretty(&doc)?;
        json.push('\n');
        kvlab_report::write_atomic(&dir.join("crash.json"), json.as_bytes(), true)?;
        eprintln!("kvlab: results in {}", dir.display());
    }
    for r in rounds.iter().filter(|r| !r.tested) {
        eprintln!(
            "kvlab: round {}: untested: {}",
            r.round,
            if r.finished_first {
                "the writer finished before its kill (raise recordcount or lower --kill-after)"
            } else {
                "killed before the store acknowledged any write"
            }
        );
    }
    Ok(if lost > 0 || corrupted > 0 {
        eprintln!(
            "kvlab: crash failed: {lost} acknowledged writes lost and {corrupted} records \
             corrupted over {} rounds",
            rounds.len()
        );
        ExitCode::from(1)
    } else if untested == rounds.len() {
        eprintln!(
            "kvlab: crash failed: none of the {} rounds tested anything (no round was killed \
             after acknowledged writes)",
            rounds.len()
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What every round of one `kvlab crash` shares: its options, the server it starts, its
/// directory, the options its children take, and kvlab's own executable.
struct Crasher<'a> {
    cmd: &'a CrashCommand,
    spec: Option<&'a kvlab_spawn::ServerSpec>,
    base: &'a Path,
    passed: &'a [String],
    exe: &'a Path,
}

impl Crasher<'_> {
    /// One round: a fresh directory (through a power-cut mount with `--power-loss`), the
    /// server if kvlab starts one, the writer killed `after` its first acknowledged write
    /// (or after `--kill-after-writes`), the power cut, the server restarted, and the check
    /// of what the store kept.
    fn round(&self, round: u32, after: Duration) -> Result<Round> {
        let dir = self.base.join(format!("round-{round}"));
        let mount = self.base.join(format!("round-{round}.mnt"));
        let (mut power, mut server) = self.start_round(round, &dir, &mount)?;
        let writer_target: [String; 2] = match (&server, &power) {
            (Some(s), _) => ["--url".into(), s.url()],
            (None, Some(p)) => ["--path".into(), p.mountpoint().display().to_string()],
            (None, None) => ["--path".into(), dir.display().to_string()],
        };
        let target: [String; 2] = match &server {
            Some(s) => ["--url".into(), s.url()],
            None => ["--path".into(), dir.display().to_string()],
        };
        let log = self.base.join(format!("round-{round}.acked"));
        let child_args = |phase: &str, target: &[String; 2]| -> Vec<String> {
            let mut v = vec![phase.to_string()];
            v.extend(self.passed.iter().cloned());
            v.extend(target.iter().cloned());
            v.extend([
                "--expected-log".into(),
                log.display().to_string(),
                "--progress".into(),
                "never".into(),
                "-p".into(),
                "dataintegrity=true".into(),
            ]);
            v
        };
        // Empty until the writer acknowledges a write: a writer killed before its first
        // write leaves an empty log, not none.
        File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let mut writer = Command::new(self.exe)
            .args(child_args("load", &writer_target))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .context("starting the writer")?;
        let kill = KillClock {
            after,
            after_writes: self.cmd.kill_after_writes,
        };
        let (finished_first, killed_after_s) =
            kill.watch(&mut writer, &log, server.as_ref(), round)?;
        // The power goes out with the kill (or when the writer finished first): the server
        // goes with it, and what was not synced is gone; the check reads what is left.
        let unsynced = match power.take() {
            Some(p) => {
                if let Some(s) = server.as_mut() {
                    s.kill();
                    let waited = std::time::Instant::now();
                    while s.try_wait()?.is_none() && waited.elapsed() < Duration::from_secs(10) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                let lost = p.cut().context("cutting the power")?;
                if server.is_some() {
                    // The server comes back on what the disk kept, through a new mount.
                    power = Some(kvlab_powercut::PowerCut::mount(&dir, &mount)?);
                } else {
                    let _ = std::fs::remove_dir(&mount);
                }
                Some(lost)
            }
            None => None,
        };
        if let Some(s) = server.as_mut() {
            if !finished_first || unsynced.is_some() {
                s.restart(Duration::from_secs(60))
                    .context("restarting the server on what it persisted")?;
            }
        }
        let check = self.check(round, &child_args("verify", &target))?;
        if let Some(s) = server.take() {
            let _ = s.stop();
        }
        if let Some(p) = power.take() {
            p.unmount()
                .context("unmounting the power-cut file system")?;
            let _ = std::fs::remove_dir(&mount);
        }
        eprintln!(
            "kvlab: round {round}: {} {} after {killed_after_s:.2} s; {} acknowledged, \
             {} recovered, {} lost, {} corrupted, {} unacknowledged but present",
            if self.spec.is_some() {
                "server"
            } else {
                "writer"
            },
            if finished_first { "finished" } else { "killed" },
            check.acknowledged,
            check.recovered,
            check.lost,
            check.corrupted,
            check.unacknowledged_present
        );
        if let Some(u) = unsynced {
            eprintln!(
                "kvlab: round {round}: power cut: {} bytes in {} files were not synced",
                u.bytes, u.files
            );
        }
        Ok(Round {
            round,
            killed_after_s,
            finished_first,
            tested: !finished_first && check.acknowledged > 0,
            unsynced_files: unsynced.map(|u| u.files),
            unsynced_bytes: unsynced.map(|u| u.bytes),
            check,
        })
    }

    /// A round's store before the writer starts: a fresh directory for an embedded store
    /// (and for a server under a power cut), the power-cut mount at `mount`, the server
    /// started (its data under the mount with `--power-loss`).
    fn start_round(
        &self,
        round: u32,
        dir: &Path,
        mount: &Path,
    ) -> Result<(
        Option<kvlab_powercut::PowerCut>,
        Option<kvlab_spawn::Server>,
    )> {
        // An embedded store loads into a fresh directory, and so does a server under a
        // power cut (its data directory); a server otherwise has a work directory of its own.
        if self.spec.is_none() || self.cmd.power_loss {
            if dir.exists() {
                std::fs::remove_dir_all(dir)
                    .with_context(|| format!("clearing {} for a new round", dir.display()))?;
            }
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // With a power cut, the store's files are written through a mount of that directory.
        let power = if self.cmd.power_loss {
            if kvlab_powercut::PowerCut::clear_stale(mount)
                .with_context(|| format!("detaching the stale mount at {}", mount.display()))?
            {
                eprintln!(
                    "kvlab: detached a mount left at {} by a run that did not finish",
                    mount.display()
                );
            }
            std::fs::create_dir_all(mount)
                .with_context(|| format!("creating {}", mount.display()))?;
            Some(kvlab_powercut::PowerCut::mount(dir, mount)?)
        } else {
            None
        };
        let server = match self.spec {
            Some(spec) => {
                let mut spec = spec.clone();
                if power.is_some() {
                    // The server keeps its data (AOF, RDB) under the mount.
                    spec.options
                        .push(("dir".into(), format!("\"{}\"", mount.display())));
                }
                let s = kvlab_spawn::Server::start(&spec)?;
                eprintln!(
                    "kvlab: round {round}: started {} {} at {} (pid {})",
                    self.cmd.phase.db,
                    s.version(),
                    s.url(),
                    s.pid()
                );
                Some(s)
            }
            None => None,
        };
        Ok((power, server))
    }

    /// Runs the round's `verify --expected-log` child and reads its `[CRASH]` lines.
    fn check(&self, round: u32, args: &[String]) -> Result<CrashCheck> {
        let o = Command::new(self.exe)
            .args(args)
            .output()
            .context("starting the check")?;
        let stdout = String::from_utf8_lossy(&o.stdout);
        let field = |name: &str| -> Option<u64> {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("[CRASH], {name}, ")))
                .and_then(|v| v.trim().parse().ok())
        };
        let Some(acknowledged) = field("Acknowledged") else {
            return Err(anyhow::anyhow!(
                "round {round}: the check did not run: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        };
        let stderr = String::from_utf8_lossy(&o.stderr);
        let first_lost = stderr
            .lines()
            .find_map(|l| l.strip_prefix("kvlab: lost acknowledged writes of: "))
            .map(|l| l.split(", ").map(String::from).collect())
            .unwrap_or_default();
        Ok(CrashCheck {
            acknowledged,
            recovered: field("Recovered").unwrap_or(0),
            lost: field("Lost").unwrap_or(0),
            corrupted: field("Corrupted").unwrap_or(0),
            unacknowledged_present: field("UnacknowledgedPresent").unwrap_or(0),
            errors: field("Errors").unwrap_or(0),
            unchecked: field("Unchecked").unwrap_or(0),
            first_lost,
        })
    }
}

/// The command line after `crash`, less the options kvlab crash sets for its children.
fn passed_args() -> Vec<String> {
    let raw: Vec<String> = std::env::args().collect();
    let at = raw
        .iter()
        .position(|x| x == "crash")
        .map_or(raw.len(), |i| i + 1);
    let mut passed = Vec::new();
    let mut rest = raw[at..].iter().peekable();
    while let Some(arg) = rest.next() {
        let name = arg.split('=').next().unwrap_or(arg);
        if OWN_OPTIONS.contains(&name) {
            if !arg.contains('=') {
                rest.next();
            }
            continue;
        }
        if name == "--spawn" {
            // Its settings are optional: the next word is one unless it is an option.
            if !arg.contains('=') && rest.peek().is_some_and(|n| !n.starts_with('-')) {
                rest.next();
            }
            continue;
        }
        if arg == "--overwrite" || arg == "--power-loss" {
            continue;
        }
        passed.push(arg.clone());
    }
    passed
}

/// When a round's writer is killed: `after` its first acknowledged write, or once it has
/// acknowledged `after_writes` writes.
struct KillClock {
    after: Duration,
    after_writes: Option<u64>,
}

/// How long a writer may go without acknowledging a write before the round gives up on
/// it (killed, untested): far beyond any store's opening, short of hanging forever.
const FIRST_WRITE_LIMIT: Duration = Duration::from_secs(300);

impl KillClock {
    /// Watches the writer and its expected-state log until the kill is due, then kills
    /// the server (if kvlab started one) and the writer. Returns whether the writer
    /// finished first, and the seconds from its first acknowledged write to the kill.
    fn watch(
        &self,
        writer: &mut std::process::Child,
        log: &Path,
        server: Option<&kvlab_spawn::Server>,
        round: u32,
    ) -> Result<(bool, f64)> {
        let spawned = std::time::Instant::now();
        let mut first_write: Option<std::time::Instant> = None;
        let mut reader = File::open(log).with_context(|| format!("reading {}", log.display()))?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut writes = 0u64;
        let since_first =
            |t: Option<std::time::Instant>| t.map_or(0.0, |t| t.elapsed().as_secs_f64());
        loop {
            if let Some(status) = writer.try_wait()? {
                let mut err = String::new();
                if let Some(mut e) = writer.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                if !status.success() {
                    return Err(anyhow::anyhow!(
                        "round {round}: the writer failed before the kill ({status}): {}",
                        err.trim()
                    ));
                }
                return Ok((true, since_first(first_write)));
            }
            // The log grows one acknowledged batch at a time.
            loop {
                let n = std::io::Read::read(&mut reader, &mut buf)?;
                if n == 0 {
                    break;
                }
                writes += buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
            }
            if writes > 0 && first_write.is_none() {
                first_write = Some(std::time::Instant::now());
            }
            let due = match (self.after_writes, first_write) {
                (Some(n), _) => writes >= n,
                (None, Some(t)) => t.elapsed() >= self.after,
                (None, None) => false,
            };
            let stalled = first_write.is_none() && spawned.elapsed() >= FIRST_WRITE_LIMIT;
            if due || stalled {
                if stalled {
                    eprintln!(
                        "kvlab: round {round}: no write acknowledged in {} s: killing the writer",
                        FIRST_WRITE_LIMIT.as_secs()
                    );
                }
                // The server dies (its clients see it go), or the writer itself.
                if let Some(s) = server {
                    s.kill();
                }
                writer.kill().context("killing the writer")?;
                writer.wait()?;
                return Ok((false, since_first(first_write)));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

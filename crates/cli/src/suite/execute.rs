//! Running a plan: data sets loaded once, cells run as `kvlab` children with Ctrl-C
//! forwarded and timeouts enforced, failures recorded in `failed.json`, and `suite.json`
//! kept current so an interrupted suite resumes where it stopped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use kvlab_report::ResultDocument;
use kvlab_spawn::Server;
use serde::Serialize;

use super::command::SuiteCommand;
use super::matrix::{Access, DataMode, DataSet, Plan};
use super::server::{monitor_args, server_record};

/// Ctrl-C presses (and SIGTERMs) seen by the suite.
pub(super) static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

/// How long a child has to finish after its second SIGINT (or a timeout's SIGINT)
/// before it is killed.
const KILL_GRACE: Duration = Duration::from_secs(10);

/// How many lines of a failed child's stderr go into `failed.json`.
const STDERR_TAIL_LINES: usize = 30;

/// Where a cell stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Status {
    /// Not run yet.
    Pending,
    /// A complete result.
    Ok,
    /// The child failed (see `failed.json`).
    Failed,
    /// Stopped by Ctrl-C; runs again when the suite is run again.
    Interrupted,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct CellState {
    pub(super) status: Status,
    /// Run by this invocation (false: complete from an earlier one, or not reached).
    pub(super) ran: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) note: Option<String>,
}

/// How a child ended.
struct ChildEnd {
    status: Option<ExitStatus>,
    interrupted: bool,
    timed_out: bool,
    seconds: f64,
    command: Vec<String>,
    stderr_path: PathBuf,
}

impl ChildEnd {
    pub(super) fn describe(&self) -> String {
        if self.timed_out {
            return "timed out (cell_timeout)".into();
        }
        match self.status {
            Some(s) => kvlab_exit(&s),
            None => "could not be started".into(),
        }
    }

    /// `failed.json` for this end.
    pub(super) fn failure(&self, phase: &str, reason: String) -> serde_json::Value {
        use std::os::unix::process::ExitStatusExt;
        serde_json::json!({
            "phase": phase,
            "reason": reason,
            "exit_code": self.status.and_then(|s| s.code()),
            "signal": self.status.and_then(|s| s.signal()),
            "timed_out": self.timed_out,
            "interrupted": self.interrupted,
            "seconds": self.seconds,
            "command": kvlab_lab::phase::output::redact_args(self.command.iter().cloned()),
            "stderr_tail": tail(&self.stderr_path, STDERR_TAIL_LINES),
            "finished_at": kvlab_report::rfc3339(SystemTime::now()),
        })
    }
}

fn kvlab_exit(s: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(0), _) => "exited with status 0".into(),
        (Some(1), _) => "failed (exit status 1)".into(),
        (Some(2), _) => "usage error (exit status 2)".into(),
        (Some(130), _) => "interrupted (exit status 130)".into(),
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => format!("{s}"),
    }
}

/// The last `n` lines of a text file.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The result directories of a cell: its own, or with `rounds = "auto"` the rounds its
/// run made (`rounds.json`'s `dirs`, `round-1` …).
pub(super) fn result_dirs(dir: &Path) -> Vec<PathBuf> {
    match auto_rounds(dir) {
        Some(doc) => doc["dirs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str())
            .map(|d| dir.join(d))
            .collect(),
        None => vec![dir.to_path_buf()],
    }
}

/// A cell's `rounds.json`, when its run repeated itself (`rounds = "auto"`).
pub(super) fn auto_rounds(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("rounds.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// A complete result in `dir`: `result.json` that parses and was not interrupted (in
/// every round, for a cell that repeats itself), and no `failed.json` beside it.
pub(super) fn complete(dir: &Path) -> bool {
    if dir.join("failed.json").exists() {
        return false;
    }
    let dirs = result_dirs(dir);
    !dirs.is_empty()
        && dirs.iter().all(|d| {
            matches!(ResultDocument::load(&d.join(kvlab_report::RESULT_FILE)), Ok(d) if !d.interrupted)
        })
}

/// Sends `signal` to `pid`, a child not yet reaped.
fn signal(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill has no memory-safety preconditions; `pid` is our unreaped child.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// A record of one load, for `suite.json`.
#[derive(Debug, Serialize)]
pub(super) struct LoadRecord {
    pub(super) dataset: String,
    pub(super) store: String,
    pub(super) workload: String,
    pub(super) mode: DataMode,
    pub(super) ok: bool,
    pub(super) seconds: f64,
    pub(super) dir: String,
}

pub(super) struct Runner<'a> {
    pub(super) plan: &'a Plan,
    pub(super) force: bool,
    pub(super) cv_threshold: f64,
    pub(super) exe: PathBuf,
    pub(super) cells: Vec<CellState>,
    pub(super) dataset_loads: Vec<u32>,
    pub(super) loads: Vec<LoadRecord>,
    pub(super) started_at: String,
    pub(super) started: Instant,
    pub(super) interrupted: bool,
    /// Cells run so far, and cells to run, for progress lines.
    pub(super) done: usize,
    pub(super) to_run: usize,
    /// Servers the suite started again after they died.
    pub(super) restarts: usize,
    /// Cells and loads that failed in a row, the last first.
    pub(super) consecutive_failures: usize,
    /// Why the suite stopped before the end (too many failures in a row).
    pub(super) stopped: Option<String>,
}

impl<'a> Runner<'a> {
    pub(super) fn new(plan: &'a Plan, cmd: &SuiteCommand, exe: PathBuf) -> Result<Runner<'a>> {
        std::fs::create_dir_all(&plan.out)
            .with_context(|| format!("creating the results directory {}", plan.out.display()))?;
        let cells: Vec<CellState> = plan
            .cells
            .iter()
            .map(|c| CellState {
                status: if !cmd.force && complete(&plan.cell_dir(c)) {
                    Status::Ok
                } else {
                    Status::Pending
                },
                ran: false,
                seconds: None,
                note: None,
            })
            .collect();
        let to_run = cells.iter().filter(|c| c.status != Status::Ok).count();
        Ok(Runner {
            plan,
            force: cmd.force,
            cv_threshold: cmd.cv_threshold,
            exe,
            cells,
            dataset_loads: vec![0; plan.datasets.len()],
            loads: Vec::new(),
            started_at: kvlab_report::rfc3339(SystemTime::now()),
            started: Instant::now(),
            interrupted: false,
            done: 0,
            to_run,
            restarts: 0,
            consecutive_failures: 0,
            stopped: None,
        })
    }

    pub(super) fn stopping(&mut self) -> bool {
        if INTERRUPTS.load(Ordering::SeqCst) > 0 {
            self.interrupted = true;
        }
        self.interrupted || self.stopped.is_some()
    }

    /// Counts a failed (`ok` false) or good cell or load; after the plan's
    /// `max_failures_in_a_row` failures in a row the suite stops, saying why.
    fn count_outcome(&mut self, ok: bool, what: &str, why: &str) {
        if ok {
            self.consecutive_failures = 0;
            return;
        }
        self.consecutive_failures += 1;
        let limit = self.plan.max_failures_in_a_row;
        if limit > 0 && self.consecutive_failures >= limit && self.stopped.is_none() {
            let reason = format!(
                "{} cells or loads in a row failed, the last {what}: {why}",
                self.consecutive_failures
            );
            eprintln!(
                "kvlab suite: stopping: {reason}; the other cells stay pending (fix the cause \
                 and run the same command again to continue)"
            );
            self.stopped = Some(reason);
        }
    }

    pub(super) fn run(mut self) -> Result<ExitCode> {
        let plan = self.plan;
        let before = self.cells.iter().filter(|c| c.status == Status::Ok).count();
        eprintln!(
            "kvlab suite {}: {} cells, {} complete from before, {} data sets; results in {}",
            plan.name,
            plan.cells.len(),
            before,
            plan.datasets.len(),
            plan.out.display()
        );
        self.write_state()?;
        for di in 0..plan.datasets.len() {
            if self.stopping() {
                break;
            }
            self.run_dataset(di)?;
            self.write_state()?;
        }
        self.write_state()?;
        let summary = self.write_summary()?;
        let failed = self.count(Status::Failed);
        let ok = self.count(Status::Ok);
        let ran = self.cells.iter().filter(|c| c.ran).count();
        let restarts = match self.restarts {
            0 => String::new(),
            1 => "; 1 server restart".into(),
            n => format!("; {n} server restarts"),
        };
        eprintln!(
            "kvlab suite {}: {ok} of {} cells ok ({ran} run now), {failed} failed, {} pending; \
             {} load{}{restarts}; {} flagged (CV > {}%); {:.1} s; summary in {}",
            plan.name,
            plan.cells.len(),
            self.count(Status::Pending) + self.count(Status::Interrupted),
            self.loads.len(),
            if self.loads.len() == 1 { "" } else { "s" },
            summary.iter().filter(|r| r.flagged).count(),
            self.cv_threshold,
            self.started.elapsed().as_secs_f64(),
            plan.out.join("summary.md").display()
        );
        Ok(if self.interrupted {
            eprintln!("kvlab suite: interrupted; run the same command again to continue");
            ExitCode::from(130)
        } else if let Some(reason) = &self.stopped {
            eprintln!("kvlab suite: stopped before the end: {reason}");
            ExitCode::from(1)
        } else if failed > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    }

    pub(super) fn count(&self, s: Status) -> usize {
        self.cells.iter().filter(|c| c.status == s).count()
    }

    /// Loads (if needed) and runs the pending cells of data set `di`.
    pub(super) fn run_dataset(&mut self, di: usize) -> Result<()> {
        let plan = self.plan;
        let ds = &plan.datasets[di];
        let pending: Vec<usize> = ds
            .cells
            .iter()
            .copied()
            .filter(|&c| self.cells[c].status != Status::Ok)
            .collect();
        let store = &plan.stores[ds.store];
        let data_dir = plan.data_dir(ds);
        if pending.is_empty() {
            self.cleanup(ds, data_dir.as_deref());
            return Ok(());
        }
        // The server, or the data directory.
        let mut server: Option<Server> = None;
        let mut url: Option<String> = None;
        let mut need_load = matches!(ds.mode, DataMode::Load | DataMode::Prefill);
        match &store.access {
            Access::Spawn { spec, settings, .. } => match Server::start(spec) {
                Ok(s) => {
                    eprintln!(
                        "kvlab suite: started {} {} at {} (pid {}) for data set {} [{}]",
                        s.kind(),
                        s.version(),
                        s.url(),
                        s.pid(),
                        ds.id,
                        kvlab_lab::phase::output::redact_settings(settings)
                    );
                    url = Some(s.url());
                    server = Some(s);
                }
                Err(e) => {
                    let msg = format!("starting the server of store `{}`: {e}", store.name);
                    eprintln!("kvlab suite: {msg}");
                    self.fail_cells(&pending, "spawn", &msg, None);
                    self.count_outcome(false, "starting a server", &msg);
                    return Ok(());
                }
            },
            Access::Url(u) => url = Some(u.clone()),
            Access::Embedded { root } => {
                let dir = data_dir
                    .clone()
                    .expect("an embedded store has a data directory");
                let marker = root.join(format!("{}.json", ds.id));
                let reuse = !self.force
                    && !ds.fresh
                    && ds.mode == DataMode::Load
                    && dir.is_dir()
                    && std::fs::read_to_string(&marker)
                        .ok()
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                        .is_some_and(|v| v["key"] == ds.key.as_str());
                if reuse {
                    eprintln!(
                        "kvlab suite: data set {} already loaded in {}",
                        ds.id,
                        dir.display()
                    );
                    need_load = false;
                } else {
                    let _ = std::fs::remove_file(&marker);
                    if dir.exists() {
                        std::fs::remove_dir_all(&dir).with_context(|| {
                            format!("removing the old data set {}", dir.display())
                        })?;
                    }
                    std::fs::create_dir_all(&dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
            }
            Access::InProcess => need_load = false,
        }
        if need_load && !self.load(di, url.as_deref(), server.as_ref(), &pending)? {
            if let Some(s) = server {
                let _ = s.stop();
            }
            return Ok(());
        }
        for (i, &c) in pending.iter().enumerate() {
            if self.stopping() {
                break;
            }
            // A server the suite started that died between cells: start it again.
            if self.server_died(&mut server)
                && !self.restart(di, &mut server, &mut url, &pending[i..])?
            {
                break;
            }
            let ok = self.run_cell(c, url.as_deref(), server.as_ref())?;
            // It died during the cell: start it again and run the cell once more.
            if !ok && !self.interrupted && self.server_died(&mut server) {
                if !self.restart(di, &mut server, &mut url, &pending[i..])? {
                    break;
                }
                self.done -= 1;
                self.run_cell(c, url.as_deref(), server.as_ref())?;
            }
        }
        if let Some(s) = server {
            match s.stop() {
                Ok(r) => eprintln!("kvlab suite: server {}", r.describe()),
                Err(e) => eprintln!("kvlab suite: warning: stopping the server: {e}"),
            }
        }
        self.cleanup(ds, data_dir.as_deref());
        Ok(())
    }

    /// Whether the suite's server has exited (crashed, or killed by someone else).
    fn server_died(&self, server: &mut Option<Server>) -> bool {
        server
            .as_mut()
            .is_some_and(|s| matches!(s.try_wait(), Ok(Some(_))))
    }

    /// Starts the dead server of data set `di` again and loads its data again; `cells`,
    /// the data set's cells still to run, are failed when that does not work. Returns
    /// whether the cells can run.
    fn restart(
        &mut self,
        di: usize,
        server: &mut Option<Server>,
        url: &mut Option<String>,
        cells: &[usize],
    ) -> Result<bool> {
        let plan = self.plan;
        let ds = &plan.datasets[di];
        let store = &plan.stores[ds.store];
        let Access::Spawn { spec, .. } = &store.access else {
            return Ok(true);
        };
        let old = server.take();
        let (old_pid, how) = match old {
            Some(s) => (s.pid(), s.stop().map(|r| r.describe()).unwrap_or_default()),
            None => (0, String::new()),
        };
        let pending: Vec<usize> = cells
            .iter()
            .copied()
            .filter(|&c| self.cells[c].status != Status::Ok)
            .collect();
        match Server::start(spec) {
            Ok(s) => {
                self.restarts += 1;
                eprintln!(
                    "kvlab suite: the server of store {} (pid {old_pid}) died: {how}; started it \
                     again at {} (pid {}) for data set {}",
                    store.name,
                    s.url(),
                    s.pid(),
                    ds.id
                );
                *url = Some(s.url());
                *server = Some(s);
            }
            Err(e) => {
                let msg = format!(
                    "the server of store `{}` died, and starting it again failed: {e}",
                    store.name
                );
                eprintln!("kvlab suite: {msg}");
                self.fail_cells(&pending, "spawn", &msg, None);
                self.count_outcome(false, "restarting a server", &msg);
                return Ok(false);
            }
        }
        // A new server is empty: load the data set's records into it again.
        if matches!(ds.mode, DataMode::Load | DataMode::Prefill) {
            return self.load(di, url.as_deref(), server.as_ref(), &pending);
        }
        Ok(true)
    }

    /// Removes a finished data set's directory unless the store keeps data.
    pub(super) fn cleanup(&self, ds: &DataSet, dir: Option<&Path>) {
        let store = &self.plan.stores[ds.store];
        let Some(dir) = dir else { return };
        let all_ok = ds.cells.iter().all(|&c| self.cells[c].status == Status::Ok);
        if store.keep_data || !all_ok || !dir.exists() {
            return;
        }
        if let Access::Embedded { root } = &store.access {
            let _ = std::fs::remove_file(root.join(format!("{}.json", ds.id)));
        }
        if let Err(e) = std::fs::remove_dir_all(dir) {
            eprintln!("kvlab suite: warning: removing {}: {e}", dir.display());
        }
    }

    /// Loads data set `di`; false (and the pending cells failed) if the load failed.
    pub(super) fn load(
        &mut self,
        di: usize,
        url: Option<&str>,
        server: Option<&Server>,
        pending: &[usize],
    ) -> Result<bool> {
        let plan = self.plan;
        let ds = &plan.datasets[di];
        let dir = plan.load_dir(ds);
        reset_dir(&dir)?;
        let args = plan
            .load_args(ds, url, &dir)
            .expect("a data set in load or prefill mode has a load command");
        let what = match ds.mode {
            DataMode::Prefill => "prefilling",
            _ => "loading",
        };
        eprintln!(
            "kvlab suite: {what} data set {} of store {} ({})",
            ds.id, plan.stores[ds.store].name, ds.key
        );
        let auth = plan.stores[ds.store].auth.as_deref();
        let end = self.run_child(&args, &dir, server, auth)?;
        let mut ok = !end.interrupted && end.status.is_some_and(|s| s.success()) && complete(&dir);
        if ok && ds.mode == DataMode::Prefill {
            ok = mark_prefill(&dir)?;
        }
        self.loads.push(LoadRecord {
            dataset: ds.id.clone(),
            store: plan.stores[ds.store].name.clone(),
            workload: plan.workloads[plan.cells[ds.first_cell].workload]
                .name
                .clone(),
            mode: ds.mode.clone(),
            ok,
            seconds: end.seconds,
            dir: dir.display().to_string(),
        });
        self.dataset_loads[di] += 1;
        if end.interrupted {
            self.interrupted = true;
            return Ok(false);
        }
        if !ok {
            let reason = format!("the load of data set {} {}", ds.id, end.describe());
            write_json(
                &dir.join("failed.json"),
                &end.failure("load", reason.clone()),
            )?;
            eprintln!(
                "kvlab suite: {reason}; its {} cells are marked failed (see {})",
                pending.len(),
                dir.join("failed.json").display()
            );
            self.fail_cells(pending, "load", &reason, Some(&end));
            self.count_outcome(false, &format!("the load of data set {}", ds.id), &reason);
            return Ok(false);
        }
        if let (Some(data), Access::Embedded { root }) =
            (plan.data_dir(ds), &plan.stores[ds.store].access)
        {
            write_json(
                &root.join(format!("{}.json", ds.id)),
                &serde_json::json!({
                    "key": ds.key,
                    "dir": data.display().to_string(),
                    "loaded_at": kvlab_report::rfc3339(SystemTime::now()),
                }),
            )?;
        }
        eprintln!("kvlab suite: loaded in {:.1} s", end.seconds);
        self.count_outcome(true, "", "");
        Ok(true)
    }

    /// Marks cells failed without running them (their data set could not be prepared).
    fn fail_cells(&mut self, cells: &[usize], phase: &str, reason: &str, end: Option<&ChildEnd>) {
        for &c in cells {
            let dir = self.plan.cell_dir(&self.plan.cells[c]);
            let _ = reset_dir(&dir);
            let doc = match end {
                Some(e) => e.failure(phase, reason.to_string()),
                None => serde_json::json!({ "phase": phase, "reason": reason }),
            };
            let _ = write_json(&dir.join("failed.json"), &doc);
            self.cells[c] = CellState {
                status: Status::Failed,
                ran: false,
                seconds: None,
                note: Some(reason.to_string()),
            };
        }
    }

    /// Runs cell `ci`; true when it has a complete result.
    pub(super) fn run_cell(
        &mut self,
        ci: usize,
        url: Option<&str>,
        server: Option<&Server>,
    ) -> Result<bool> {
        let plan = self.plan;
        let cell = &plan.cells[ci];
        let dir = plan.cell_dir(cell);
        reset_dir(&dir)?;
        let args = plan.cell_args(cell, url, &dir);
        let before = server.and_then(|s| s.sample().ok());
        let auth = plan.stores[cell.store].auth.as_deref();
        let end = self.run_child(&args, &dir, server, auth)?;
        if let Some(s) = server {
            let doc = server_record(s, before, s.sample().ok());
            write_json(&dir.join("server.json"), &doc)?;
        }
        let ok = !end.interrupted && end.status.is_some_and(|s| s.success()) && complete(&dir);
        let status = if end.interrupted {
            self.interrupted = true;
            Status::Interrupted
        } else if ok {
            Status::Ok
        } else {
            let reason = format!("the cell {}", end.describe());
            write_json(&dir.join("failed.json"), &end.failure("run", reason))?;
            Status::Failed
        };
        self.done += 1;
        let line = match status {
            Status::Ok => match auto_rounds(&dir) {
                Some(doc) => format!(
                    "{} rounds, median {:.0} ops/s ±{:.2} %",
                    doc["rounds"],
                    doc["median_throughput"].as_f64().unwrap_or(0.0),
                    doc["half_width_pct"].as_f64().unwrap_or(f64::NAN)
                ),
                None => ResultDocument::load(&dir.join(kvlab_report::RESULT_FILE))
                    .map(|d| {
                        format!(
                            "{:.0} ops/s, p99 {}",
                            d.results.throughput_ops_per_sec,
                            d.results
                                .overall
                                .map(|o| format!("{:.0} µs", o.p99_us))
                                .unwrap_or_else(|| "-".into())
                        )
                    })
                    .unwrap_or_default(),
            },
            Status::Failed => format!(
                "FAILED: {} (see {})",
                end.describe(),
                dir.join("failed.json").display()
            ),
            Status::Interrupted => "interrupted".into(),
            Status::Pending => String::new(),
        };
        eprintln!(
            "kvlab suite: [{}/{}] {}: {line} ({:.1} s)",
            self.done,
            self.to_run,
            cell.rel.display(),
            end.seconds
        );
        self.cells[ci] = CellState {
            status,
            ran: true,
            seconds: Some(end.seconds),
            note: (status == Status::Failed).then(|| end.describe()),
        };
        if status != Status::Interrupted {
            let what = format!("cell {}", cell.rel.display());
            self.count_outcome(status == Status::Ok, &what, &end.describe());
        }
        self.write_state()?;
        Ok(status == Status::Ok)
    }

    /// Runs `kvlab ARGS` with stdout and stderr in `dir`, forwarding Ctrl-C and
    /// enforcing the cell timeout. The child monitors itself into `dir/monitor/` (told
    /// about the suite's `server`, if any) unless the suite does not monitor. `auth`, the
    /// store's password, goes into the child's environment only (see
    /// [`crate::argv::AUTH_ENV`]): its command line is visible to every local user.
    fn run_child(
        &self,
        args: &[String],
        dir: &Path,
        server: Option<&Server>,
        auth: Option<&str>,
    ) -> Result<ChildEnd> {
        use std::os::unix::process::CommandExt;
        let stdout_path = dir.join("stdout.txt");
        let stderr_path = dir.join("stderr.txt");
        let stdout = std::fs::File::create(&stdout_path)
            .with_context(|| format!("creating {}", stdout_path.display()))?;
        let stderr = std::fs::File::create(&stderr_path)
            .with_context(|| format!("creating {}", stderr_path.display()))?;
        let mut args = args.to_vec();
        args.extend(monitor_args(self.plan.monitor, server));
        let mut command = vec![self.exe.display().to_string()];
        command.extend(args.iter().cloned());
        let started = Instant::now();
        let seen = INTERRUPTS.load(Ordering::SeqCst);
        // Its own process group: the terminal's Ctrl-C reaches the suite only, which
        // forwards exactly one SIGINT per press.
        let mut child_command = Command::new(&self.exe);
        match auth {
            Some(a) => child_command.env(crate::argv::AUTH_ENV, a),
            None => child_command.env_remove(crate::argv::AUTH_ENV),
        };
        let spawned = child_command
            .args(&args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .spawn();
        let mut child: Child = match spawned {
            Ok(c) => c,
            Err(e) => {
                std::fs::write(
                    &stderr_path,
                    format!("starting {}: {e}\n", self.exe.display()),
                )?;
                return Ok(ChildEnd {
                    status: None,
                    interrupted: false,
                    timed_out: false,
                    seconds: 0.0,
                    command,
                    stderr_path,
                });
            }
        };
        let mut forwarded = seen;
        let mut timed_out = false;
        let mut kill_at: Option<Instant> = None;
        let status = loop {
            if let Some(s) = child.try_wait().context("waiting for a cell")? {
                break s;
            }
            let now = INTERRUPTS.load(Ordering::SeqCst);
            while forwarded < now {
                forwarded += 1;
                signal(child.id(), libc::SIGINT);
                if forwarded - seen >= 2 {
                    kill_at.get_or_insert(Instant::now() + KILL_GRACE);
                }
            }
            if let Some(limit) = self.plan.cell_timeout {
                if !timed_out && started.elapsed() > limit {
                    timed_out = true;
                    signal(child.id(), libc::SIGINT);
                    kill_at.get_or_insert(Instant::now() + KILL_GRACE);
                }
            }
            if kill_at.is_some_and(|k| Instant::now() > k) {
                let _ = child.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Ok(ChildEnd {
            status: Some(status),
            interrupted: INTERRUPTS.load(Ordering::SeqCst) > seen && !timed_out,
            timed_out,
            seconds: started.elapsed().as_secs_f64(),
            command,
            stderr_path,
        })
    }

    /// Writes `suite.json`: the matrix, every cell's status, the data sets and loads.
    pub(super) fn write_state(&self) -> Result<()> {
        let plan = self.plan;
        let state = if self.interrupted {
            "interrupted"
        } else if self.stopped.is_some() {
            "stopped"
        } else if self.cells.iter().all(|c| c.status == Status::Ok) {
            "complete"
        } else if self.cells.iter().any(|c| c.status == Status::Pending) {
            "running"
        } else {
            "finished with failures"
        };
        let cells: Vec<serde_json::Value> = plan
            .cells
            .iter()
            .zip(&self.cells)
            .map(|(c, s)| {
                serde_json::json!({
                    "path": c.rel.display().to_string(),
                    "store": plan.stores[c.store].name,
                    "workload": plan.workloads[c.workload].name,
                    "threads": c.threads,
                    "connections": c.connections,
                    "round": c.round,
                    "dataset": plan.datasets[c.dataset].id,
                    "status": s.status,
                    "ran": s.ran,
                    "seconds": s.seconds,
                    "note": s.note,
                })
            })
            .collect();
        let datasets: Vec<serde_json::Value> = plan
            .datasets
            .iter()
            .zip(&self.dataset_loads)
            .map(|(d, &n)| {
                serde_json::json!({
                    "id": d.id,
                    "store": plan.stores[d.store].name,
                    "key": d.key,
                    "mode": d.mode,
                    "fresh": d.fresh,
                    "cells": d.cells.len(),
                    "loads": n,
                    "data_dir": plan.data_dir(d).map(|p| p.display().to_string()),
                })
            })
            .collect();
        let count = |s: Status| self.count(s);
        let doc = serde_json::json!({
            "suite": plan.name,
            "description": plan.description,
            "file": plan.file.display().to_string(),
            "kvlab_version": env!("CARGO_PKG_VERSION"),
            "started_at": self.started_at,
            "updated_at": kvlab_report::rfc3339(SystemTime::now()),
            "state": state,
            "matrix": {
                "stores": plan.stores.iter().map(|s| &s.name).collect::<Vec<_>>(),
                "workloads": plan.workloads.iter().map(|w| &w.name).collect::<Vec<_>>(),
                "threads": plan.threads,
                "connections": plan.connections,
                "rounds": plan.rounds_label(),
                "cells": plan.cells.len(),
            },
            "counts": {
                "ok": count(Status::Ok),
                "failed": count(Status::Failed),
                "interrupted": count(Status::Interrupted),
                "pending": count(Status::Pending),
                "ran": self.cells.iter().filter(|c| c.ran).count(),
            },
            "stopped_because": self.stopped,
            "server_restarts": self.restarts,
            "load_count": self.loads.len(),
            "loads": self.loads,
            "datasets": datasets,
            "cells": cells,
        });
        write_json(&plan.out.join("suite.json"), &doc)
    }
}

/// Marks a prefill's result as the load phase it is (`kvlab memtier` records every run
/// as `run`), so reports show it as `[load]` beside the cells instead of as one more
/// workload; false if the result cannot be read back.
fn mark_prefill(dir: &Path) -> Result<bool> {
    let file = dir.join(kvlab_report::RESULT_FILE);
    let Ok(mut doc) = ResultDocument::load(&file) else {
        return Ok(false);
    };
    doc.phase = kvlab_report::Phase::Load;
    doc.notes
        .push("a suite's prefill of a data set: the suite recorded its phase as `load`".into());
    kvlab_report::write_atomic(&file, doc.to_json_pretty().as_bytes(), true)
        .with_context(|| format!("writing {}", file.display()))?;
    Ok(true)
}

/// Empties `dir` (creating it).
fn reset_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

pub(super) fn write_json(path: &Path, v: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(v)?;
    text.push('\n');
    kvlab_report::write_atomic(path, text.as_bytes(), true)
        .with_context(|| format!("writing {}", path.display()))
}

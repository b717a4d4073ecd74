//! CPU time and memory of a process from `/proc`, and the few signals kvlab sends.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::SpawnError;

/// CPU time and memory of one process at one moment, read from `/proc/PID/stat` and
/// `/proc/PID/status`.
///
/// Works for any process kvlab may read, including kvlab itself
/// (`ProcessSample::of(std::process::id())`). CPU time covers all threads of the process
/// but not its children (e.g. not a Redis fork that writes a snapshot).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcessSample {
    /// The process sampled.
    pub pid: u32,
    /// When the sample was taken.
    pub taken: Instant,
    /// CPU time in user mode since the process started, in seconds.
    pub user_secs: f64,
    /// CPU time in kernel mode since the process started, in seconds.
    pub system_secs: f64,
    /// Resident memory (`VmRSS`), in bytes.
    pub rss_bytes: u64,
    /// Number of threads.
    pub threads: u64,
}

impl ProcessSample {
    /// Samples process `pid`.
    ///
    /// Fails with [`SpawnError::ProcessGone`] if there is no such process or it has exited
    /// (a zombie not yet reaped counts as exited).
    pub fn of(pid: u32) -> Result<ProcessSample, SpawnError> {
        let taken = Instant::now();
        let stat = read_proc(pid, "stat")?;
        let fields = stat_fields(pid, &stat)?;
        // Fields after the command's closing parenthesis, from field 3 (state) on.
        let state = fields[0];
        if state == "Z" || state == "X" || state == "x" {
            return Err(SpawnError::ProcessGone { pid });
        }
        let ticks = |index: usize, name: &str| -> Result<f64, SpawnError> {
            fields[index]
                .parse::<u64>()
                .map(|t| t as f64 / clock_ticks_per_second())
                .map_err(|e| SpawnError::Proc {
                    pid,
                    file: "stat",
                    reason: format!("{name} `{}`: {e}", fields[index]),
                })
        };
        // utime is field 14 and stime field 15 of proc(5); fields[0] is field 3.
        let user_secs = ticks(11, "utime")?;
        let system_secs = ticks(12, "stime")?;

        let status = read_proc(pid, "status")?;
        let mut rss_bytes = None;
        let mut threads = None;
        for line in status.lines() {
            if let Some(rest) = line.strip_prefix("VmRSS:") {
                rss_bytes = Some(parse_kb(pid, rest)?);
            } else if let Some(rest) = line.strip_prefix("Threads:") {
                threads = Some(rest.trim().parse::<u64>().map_err(|e| SpawnError::Proc {
                    pid,
                    file: "status",
                    reason: format!("Threads `{}`: {e}", rest.trim()),
                })?);
            }
        }
        // A process that exits between the two reads loses its VmRSS line.
        let rss_bytes = rss_bytes.ok_or(SpawnError::ProcessGone { pid })?;
        Ok(ProcessSample {
            pid,
            taken,
            user_secs,
            system_secs,
            rss_bytes,
            threads: threads.unwrap_or(1),
        })
    }

    /// User plus system CPU time, in seconds.
    pub fn cpu_secs(&self) -> f64 {
        self.user_secs + self.system_secs
    }
}

/// CPU utilisation between two samples of one process over `wall` time, in percent of one
/// core: 100.0 is one core fully busy, 250.0 two and a half. Zero if `wall` is zero.
///
/// `wall` is usually `next.taken - prev.taken`. The result is never negative.
pub fn cpu_percent(prev: &ProcessSample, next: &ProcessSample, wall: Duration) -> f64 {
    let wall = wall.as_secs_f64();
    if wall <= 0.0 {
        return 0.0;
    }
    ((next.cpu_secs() - prev.cpu_secs()) / wall * 100.0).max(0.0)
}

fn read_proc(pid: u32, file: &'static str) -> Result<String, SpawnError> {
    std::fs::read_to_string(format!("/proc/{pid}/{file}")).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => SpawnError::ProcessGone { pid },
        // A process that is being torn down may answer ESRCH.
        _ if e.raw_os_error() == Some(libc::ESRCH) => SpawnError::ProcessGone { pid },
        _ => SpawnError::io(format!("reading /proc/{pid}/{file}"), e),
    })
}

/// The fields of `/proc/PID/stat` after `(comm)`, which may itself hold spaces and
/// parentheses; at least up to stime.
fn stat_fields(pid: u32, stat: &str) -> Result<Vec<&str>, SpawnError> {
    let rest = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .ok_or_else(|| SpawnError::Proc {
            pid,
            file: "stat",
            reason: "no `)` after the command name".into(),
        })?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.len() < 13 {
        return Err(SpawnError::Proc {
            pid,
            file: "stat",
            reason: format!("only {} fields after the command name", fields.len()),
        });
    }
    Ok(fields)
}

/// The state letter of a process (`R`, `S`, `Z`...), or `None` if it does not exist.
pub(crate) fn process_state(pid: u32) -> Option<char> {
    stat_state(&format!("/proc/{pid}/stat"))
}

/// The state letter of a `stat` file (of a process or of one of its threads).
fn stat_state(path: &str) -> Option<char> {
    let stat = std::fs::read_to_string(path).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().next()?.chars().next()
}

/// True while `pid` exists and has not exited. A zombie has exited — unless it is the
/// main thread of a multi-threaded server (Redis, memcached) whose other threads are
/// still on their way out: `/proc/PID/stat` shows the leader's state, and the process
/// cannot be reaped before its last thread has gone.
pub(crate) fn is_running(pid: u32) -> bool {
    match process_state(pid) {
        None | Some('X') | Some('x') => false,
        Some('Z') => live_threads(pid) > 0,
        Some(_) => true,
    }
}

/// The threads of `pid` other than its main thread that have not exited.
fn live_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| t.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&tid| tid != pid)
        .filter(|&tid| {
            let state = stat_state(&format!("/proc/{pid}/task/{tid}/stat"));
            !matches!(state, None | Some('Z') | Some('X') | Some('x'))
        })
        .count()
}

fn parse_kb(pid: u32, text: &str) -> Result<u64, SpawnError> {
    let number = text.trim().trim_end_matches("kB").trim();
    number
        .parse::<u64>()
        .map(|kb| kb * 1024)
        .map_err(|e| SpawnError::Proc {
            pid,
            file: "status",
            reason: format!("VmRSS `{}`: {e}", text.trim()),
        })
}

fn clock_ticks_per_second() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions; it only reads a system constant.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if ticks > 0 {
            ticks as f64
        } else {
            100.0
        }
    })
}

/// Sends `signal` to `pid`. The caller makes sure `pid` is a child not yet reaped, so it
/// cannot name a reused process id.
pub(crate) fn send_signal(pid: u32, signal: libc::c_int) -> std::io::Result<()> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "pid out of range"))?;
    // SAFETY: kill has no memory-safety preconditions.
    let rc = unsafe { libc::kill(pid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The effective user id is root (memcached then needs `-u root`).
pub(crate) fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_this_process() {
        let mut spin = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(50) {
            spin = spin.wrapping_add(1);
        }
        assert!(spin > 0);
        let a = ProcessSample::of(std::process::id()).unwrap();
        assert!(a.rss_bytes > 1024 * 1024, "{a:?}");
        assert!(a.threads >= 1);
        assert!(a.cpu_secs() > 0.0, "{a:?}");
        let b = ProcessSample::of(std::process::id()).unwrap();
        assert!(b.cpu_secs() >= a.cpu_secs());
        assert!(is_running(std::process::id()));
    }

    #[test]
    fn missing_process_is_gone() {
        // Above the default pid_max of 4194304.
        let err = ProcessSample::of(u32::MAX - 1).unwrap_err();
        assert!(matches!(err, SpawnError::ProcessGone { .. }), "{err}");
        assert!(!is_running(u32::MAX - 1));
    }

    #[test]
    fn percent_of_one_core() {
        let base = ProcessSample {
            pid: 1,
            taken: Instant::now(),
            user_secs: 1.0,
            system_secs: 0.5,
            rss_bytes: 0,
            threads: 1,
        };
        let next = ProcessSample {
            user_secs: 2.0,
            system_secs: 1.0,
            ..base
        };
        let p = cpu_percent(&base, &next, Duration::from_secs(1));
        assert!((p - 150.0).abs() < 1e-9, "{p}");
        assert_eq!(cpu_percent(&base, &next, Duration::ZERO), 0.0);
        assert_eq!(cpu_percent(&next, &base, Duration::from_secs(1)), 0.0);
    }

    #[test]
    fn comm_with_parentheses() {
        let stat = "42 (a) b) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 5 1000 10";
        let fields = stat_fields(42, stat).unwrap();
        assert_eq!(fields[0], "S");
        assert_eq!(fields[11], "7");
        assert_eq!(fields[12], "3");
    }
}

//! What the machine can hold: worker threads and connections against the process's
//! limits and the memory it has, checked before a phase starts.
//!
//! A plan beyond them does not fail cleanly later: a hundred thousand workers allocate
//! their latency recorders until the kernel kills the process, and a hundred million
//! abort on a failed allocation. Refused here with the limit named, they cost nothing.

use crate::Refusal;

/// The memory one worker thread takes at least: its stack (kvlab's workers run on the
/// default 2 MiB stacks, of which a few pages are touched) and its latency recorders (an
/// HDR histogram per operation kind and per interval, 3 significant digits from 1 ns to
/// an hour), measured at about 230 KiB a thread with `--threads 100000` on the null store.
pub const WORKER_BYTES: u64 = 256 * 1024;

/// File descriptors kvlab keeps for itself beside its connections: the store's files,
/// result files, the trace, the metrics endpoint, the monitor's /proc reads.
pub const RESERVED_FDS: u64 = 64;

/// The limits the check reads from the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// Threads a process of this user may have (`RLIMIT_NPROC`, capped by the kernel's
    /// `threads-max`); `None`: unlimited.
    pub max_threads: Option<u64>,
    /// Open files a process may have (`RLIMIT_NOFILE`, its hard limit: kvlab raises its
    /// soft limit to it before opening connections); `None`: unlimited.
    pub max_files: Option<u64>,
    /// Memory available to new allocations (`MemAvailable` in /proc/meminfo), bytes.
    pub available_bytes: Option<u64>,
}

impl Machine {
    /// This machine's limits, read from the kernel.
    pub fn current() -> Machine {
        let nproc = rlimit(libc::RLIMIT_NPROC).map(|(soft, _)| soft);
        let threads_max = std::fs::read_to_string("/proc/sys/kernel/threads-max")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let max_threads = match (nproc, threads_max) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Machine {
            max_threads,
            max_files: rlimit(libc::RLIMIT_NOFILE).map(|(_, hard)| hard),
            available_bytes: mem_available(),
        }
    }
}

/// The soft and hard limit of `resource`; `None` for unlimited.
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<(u64, u64)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` into the struct it is given, which lives here.
    let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
    let finite = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v);
    if !ok {
        return None;
    }
    match (finite(r.rlim_cur), finite(r.rlim_max)) {
        (None, None) => None,
        (soft, hard) => Some((soft.unwrap_or(u64::MAX), hard.unwrap_or(u64::MAX))),
    }
}

/// `MemAvailable` from /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Raises this process's soft open-file limit to its hard limit (as memtier_benchmark
/// and redis-benchmark leave to the shell's `ulimit -n`), so that every connection the
/// check allowed can be opened.
pub fn raise_open_files() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write one `rlimit` that lives here.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Refuses `threads` workers (each with `connections` clients when `network`) that the
/// machine cannot hold, naming the limit and the flag.
pub fn check_workers(
    machine: &Machine,
    threads: u64,
    connections: u64,
    network: bool,
) -> Result<(), Refusal> {
    if let Some(max) = machine.max_threads {
        // kvlab's own threads (reporting, monitor, trace writer) come on top.
        if threads.saturating_add(16) > max {
            return Err(Refusal(format!(
                "--threads {threads} is more than this machine lets a process start ({max} \
                 threads: the process limit `ulimit -u` and /proc/sys/kernel/threads-max); \
                 use fewer threads (network stores: more --connections per thread)"
            )));
        }
    }
    if let Some(avail) = machine.available_bytes {
        let need = threads.saturating_mul(WORKER_BYTES);
        if need > avail {
            return Err(Refusal(format!(
                "--threads {threads} needs about {} MiB for its workers' stacks and latency \
                 recorders ({} KiB each), more than the {} MiB of memory available; use \
                 fewer threads",
                need / (1024 * 1024),
                WORKER_BYTES / 1024,
                avail / (1024 * 1024)
            )));
        }
    }
    if network {
        if let Some(max) = machine.max_files {
            let sockets = threads.saturating_mul(connections);
            if sockets.saturating_add(RESERVED_FDS) > max {
                return Err(Refusal(format!(
                    "--threads {threads} × --connections {connections} = {sockets} \
                     connections, more than the {max} open files a process may have here \
                     (`ulimit -Hn`, less {RESERVED_FDS} kvlab keeps for itself); use fewer \
                     connections or raise the limit"
                )));
            }
        }
    }
    Ok(())
}

//! The process-wide list of servers started and not yet reaped, for Ctrl-C handlers.
//!
//! Invariant: a pid is in the list only while its child process has not been reaped, and
//! reaping happens under the list's lock ([`try_reap`]). A pid in the list therefore
//! still names our child (running or a zombie), never a reused id, and signalling it under
//! the lock is safe.

use std::process::{Child, ExitStatus};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::process::{is_running, send_signal};
use crate::DEFAULT_STOP_GRACE;

static SPAWNED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn lock() -> MutexGuard<'static, Vec<u32>> {
    // A panic while holding the lock leaves a list of pids, which stays valid.
    SPAWNED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Adds a freshly spawned child.
pub(crate) fn register(pid: u32) {
    lock().push(pid);
}

/// `Child::try_wait` under the lock; removes the pid once the child is reaped.
pub(crate) fn try_reap(child: &mut Child) -> std::io::Result<Option<ExitStatus>> {
    let mut pids = lock();
    let status = child.try_wait()?;
    if status.is_some() {
        let pid = child.id();
        pids.retain(|&p| p != pid);
    }
    Ok(status)
}

/// Sends `signal` to `pid` if it is a registered child not yet reaped; false otherwise.
pub(crate) fn signal(pid: u32, signal: libc::c_int) -> bool {
    let pids = lock();
    pids.contains(&pid) && send_signal(pid, signal).is_ok()
}

/// The process ids of every server started by this process and not yet stopped
/// (including one that has crashed but whose [`Server`](crate::Server) has not noticed).
pub fn spawned_pids() -> Vec<u32> {
    lock().clone()
}

/// Stops every server this process started and has not yet stopped: SIGTERM to each,
/// then SIGKILL to those still running after [`DEFAULT_STOP_GRACE`]. Returns how many
/// servers were signalled.
///
/// Meant for a Ctrl-C handler running on an ordinary thread, as the `ctrlc` crate's does
/// (it takes a mutex, so not from inside a raw signal handler). It blocks for at most the
/// grace period plus a second, and never panics. The [`Server`](crate::Server) values stay valid: stopping or dropping one
/// afterwards reaps the process and reports [`StopHow::AlreadyExited`].
///
/// [`StopHow::AlreadyExited`]: crate::StopHow::AlreadyExited
pub fn stop_all_spawned() -> usize {
    let targets: Vec<u32> = {
        let pids = lock();
        pids.iter()
            .copied()
            .filter(|&pid| is_running(pid) && send_signal(pid, libc::SIGTERM).is_ok())
            .collect()
    };
    let still_running = |targets: &[u32]| -> Vec<u32> {
        let pids = lock();
        targets
            .iter()
            .copied()
            .filter(|pid| pids.contains(pid) && is_running(*pid))
            .collect()
    };
    let deadline = Instant::now() + DEFAULT_STOP_GRACE;
    let mut left = still_running(&targets);
    while !left.is_empty() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
        left = still_running(&left);
    }
    if !left.is_empty() {
        {
            let pids = lock();
            for &pid in &left {
                if pids.contains(&pid) {
                    let _ = send_signal(pid, libc::SIGKILL);
                }
            }
        }
        let deadline = Instant::now() + Duration::from_secs(1);
        while !left.is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
            left = still_running(&left);
        }
    }
    targets.len()
}

//! Processes, ports and waits: a child process killed when its guard drops, signals by
//! PID, free loopback ports, and polling until something holds.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A process a test started itself (a server on a port of its choosing), killed by its
/// PID and reaped when dropped, so a failing test leaves nothing running.
pub struct Process(pub Child);

impl Process {
    /// Spawns `command` under the guard.
    pub fn spawn(command: &mut Command) -> Process {
        Process(command.spawn().unwrap())
    }

    /// Kills the process and reaps it, panicking if either fails.
    pub fn stop(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Sends signal `which` (`-STOP`, `-CONT`, `-INT`, …) to `pid` with kill(1), asserting
/// that it was delivered.
pub fn signal(which: &str, pid: u32) {
    let ok = Command::new("kill")
        .args([which, &pid.to_string()])
        .status()
        .expect("running kill")
        .success();
    assert!(ok, "kill {which} {pid}");
}

/// A loopback port that was free a moment ago (nothing listens on it once this
/// returns).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Polls `ready` every `every` until it holds, panicking with `what` once `limit` has
/// passed.
pub fn wait_until(limit: Duration, every: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "{what}");
        std::thread::sleep(every);
    }
}

/// Waits up to 10 s until something accepts connections on loopback `port`, panicking
/// with `what` when nothing does.
pub fn wait_for_port(port: u16, what: &str) {
    wait_until(
        Duration::from_secs(10),
        Duration::from_millis(20),
        what,
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
}

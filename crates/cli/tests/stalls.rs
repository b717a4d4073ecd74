//! A server that stops answering mid-run (paused with SIGSTOP): every interval of the
//! timeline holds what completed in it, `--duration` ends the run at its time with the
//! requests still outstanding counted as unfinished, and Ctrl-C during a pre-load is an
//! interruption (exit 130).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kvlab_spawn::{Server, ServerKind};

use crate::common::files::{csv_column, result_json};
use crate::common::process::{signal, Process};
use crate::common::servers::start;
use crate::common::{kvlab, kvlab_command, text};

/// Pauses a server (SIGSTOP) and resumes it (SIGCONT) when dropped, so a failing test
/// never leaves a stopped process behind.
struct Paused(u32);

impl Paused {
    fn new(pid: u32) -> Paused {
        signal("-STOP", pid);
        Paused(pid)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal("-CONT", self.0);
    }
}

fn store_args(kind: ServerKind, s: &Server) -> Vec<String> {
    let db = match kind {
        ServerKind::Redis => "redis",
        _ => "memcached",
    };
    vec!["--db".into(), db.into(), "--url".into(), s.url()]
}

/// `(interval end in seconds, operations)` of each row of `timeline.csv`.
fn timeline(dir: &Path) -> Vec<(f64, u64)> {
    let csv = std::fs::read_to_string(dir.join("timeline.csv")).unwrap();
    let time_s: Vec<f64> = csv_column(&csv, "time_s");
    time_s
        .into_iter()
        .zip(csv_column(&csv, "operations"))
        .collect()
}

/// Starts kvlab with `args` from the repository root, stdout discarded and stderr kept.
fn spawn_kvlab<A: AsRef<std::ffi::OsStr>>(args: &[A]) -> std::process::Child {
    kvlab_command(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `kvlab run` of YCSB's `workload` over `records` records on `kind`'s server `s`, its
/// results in `out`, with `extra` flags.
fn run_args(
    kind: ServerKind,
    s: &Server,
    out: &Path,
    workload: &str,
    records: u64,
    extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "run".into(),
        "-P".into(),
        format!("workloads/ycsb/{workload}"),
        "-p".into(),
        format!("recordcount={records}"),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(store_args(kind, s));
    args
}

/// Starts `kvlab run` on `kind` for `duration`, open loop at 2 000 operations a second
/// (a rate this machine keeps however busy it is), one client.
fn start_run(kind: ServerKind, s: &Server, out: &Path, duration: &str) -> std::process::Child {
    let extra = ["--target", "2000", "--duration", duration];
    spawn_kvlab(&run_args(kind, s, out, "workloada", 1000, &extra))
}

/// Seconds since midnight of an RFC 3339 UTC time as kvlab writes it
/// (`2026-11-24T22:49:38.033Z`), and its date.
fn day_seconds(rfc3339: &str) -> (String, f64) {
    let (date, time) = rfc3339.trim_end_matches('Z').split_once('T').unwrap();
    let mut f = time.split(':').map(|x| x.parse::<f64>().unwrap());
    let (h, m, s) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
    (date.to_string(), h * 3600.0 + m * 60.0 + s)
}

/// The server is paused for 2 s in the middle of a 6 s run: each interval holds what
/// completed in it — the one the pause starts in holds the work done before the pause,
/// the ones inside it nothing (before, the work done before a stall was reported in the
/// interval where the client woke up, and the interval before it showed nothing).
#[test]
fn a_stall_is_reported_in_the_intervals_it_happened_in() {
    for kind in [ServerKind::Redis, ServerKind::Memcached] {
        let s = start(kind, "");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut load: Vec<String> = ["load", "-P", "workloads/ycsb/workloada"]
            .map(String::from)
            .to_vec();
        load.extend(["-p".into(), "recordcount=1000".into()]);
        load.extend(store_args(kind, &s));
        let o = kvlab(&load.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{:?}", text(&o));

        let run = start_run(kind, &s, &out, "6s");
        std::thread::sleep(Duration::from_millis(2400));
        let paused_at = kvlab_report::rfc3339(std::time::SystemTime::now());
        let pause = Paused::new(s.pid());
        std::thread::sleep(Duration::from_secs(2));
        drop(pause);
        let resumed_at = kvlab_report::rfc3339(std::time::SystemTime::now());
        let o = run.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "{kind:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );

        // The pause in the run's own time.
        let doc = result_json(&out);
        let (day, started) = day_seconds(doc["runner"]["measured_start"].as_str().unwrap());
        let (pause_day, from) = day_seconds(&paused_at);
        let (_, to) = day_seconds(&resumed_at);
        if pause_day != day || to < from {
            continue; // across midnight: the arithmetic below would not hold
        }
        let (from, to) = (from - started, to - started);
        let rows = timeline(&out);
        for &(end, ops) in &rows {
            let start = end - 1.0;
            if start >= from && end <= to {
                assert_eq!(ops, 0, "{kind:?}: pause {from:.2}–{to:.2} s: {rows:?}");
            } else if start < from && end > from && start > 0.0 {
                // The interval the pause starts in holds the work done before it;
                // the rest of the run catches up after the pause (open loop).
                let expected = 2000.0 * (from - start);
                assert!(
                    (ops as f64 - expected).abs() <= 0.2 * expected + 100.0,
                    "{kind:?}: the interval ending at {end:.1} s should hold ~{expected:.0} \
                     operations: pause {from:.2}–{to:.2} s: {rows:?}"
                );
            }
        }
        let total: u64 = rows.iter().map(|r| r.1).sum();
        let reported = doc["results"]["operations"].as_u64().unwrap();
        assert_eq!(
            total, reported,
            "{kind:?}: the intervals add up to the total"
        );
    }
}

/// A server paused for good 1 s into a 2 s run (no request timeout): the run still ends
/// at its time, with the request it was waiting for counted as unfinished.
#[test]
fn duration_ends_the_run_while_requests_are_outstanding() {
    for kind in [ServerKind::Redis, ServerKind::Memcached] {
        let s = start(kind, "");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let started = Instant::now();
        let extra = [
            "--duration",
            "2s",
            "--timeout",
            "none",
            "--connections",
            "2",
        ];
        let run = spawn_kvlab(&run_args(kind, &s, &out, "workloadc", 100, &extra));
        std::thread::sleep(Duration::from_secs(1));
        signal("-STOP", s.pid());
        // Resumed after 20 s whatever happens, so a run that waits for the server ends
        // (and fails the test) instead of hanging it.
        let pid = s.pid();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            let _ = wait.recv_timeout(Duration::from_secs(20));
            signal("-CONT", pid);
        });
        let o = run.wait_with_output().unwrap();
        let took = started.elapsed();
        done.send(()).unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        // 2 s, a quarter second of grace for replies, then at most a second for each of
        // the two statistics queries that time out, the process start — and slack for a
        // busy machine; far from the 20 s the server stays paused.
        assert!(
            took < Duration::from_secs(12),
            "{kind:?}: took {took:?}: {stderr}"
        );
        let doc = result_json(&out);
        let runtime_ms = doc["results"]["runtime_ms"].as_f64().unwrap();
        assert!(
            runtime_ms <= 2000.5,
            "{kind:?}: the run's time stops at --duration"
        );
        watchdog.join().unwrap();
        assert!(
            stderr.contains("still waiting for a reply"),
            "{kind:?}: {stderr}"
        );
        let unfinished = doc["runner"]["unfinished_requests"].as_u64().unwrap();
        assert!(
            (1..=2).contains(&unfinished),
            "{kind:?}: one request per connection was outstanding: {unfinished}"
        );
    }
}

/// With a request timeout, a paused server's requests fail as timeouts (not as hangs),
/// and the run goes on to its end.
#[test]
fn a_request_timeout_fails_requests_to_a_paused_server() {
    let s = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let extra = ["--duration", "3s", "--timeout", "200ms"];
    let run = spawn_kvlab(&run_args(
        ServerKind::Redis,
        &s,
        &out,
        "workloadc",
        100,
        &extra,
    ));
    std::thread::sleep(Duration::from_millis(1000));
    let pause = Paused::new(s.pid());
    std::thread::sleep(Duration::from_millis(1000));
    drop(pause);
    let o = run.wait_with_output().unwrap();
    let doc = result_json(&out);
    let errors = doc["results"].to_string();
    assert!(
        errors.contains("timeout"),
        "requests to the paused server should fail as timeouts: {errors}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The run went on after the pause.
    let rows = timeline(&out);
    let last = rows.iter().find(|(t, _)| (t - 3.0).abs() < 0.2).unwrap();
    assert!(last.1 > 100, "{rows:?}");
}

/// Ctrl-C while kvlab loads a fresh in-process cache before the run: exit 130 and a
/// message that says nothing was measured (not "loading failed").
#[test]
fn ctrl_c_during_the_preload_is_an_interruption() {
    let mut run = spawn_kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "moka",
        "-p",
        "recordcount=50000000",
        "-p",
        "operationcount=10",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    signal("-INT", run.id());
    let started = Instant::now();
    let status = run.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(5), "{stderr}");
    assert!(stderr.contains("interrupted while loading"), "{stderr}");
    assert!(stderr.contains("nothing was measured"), "{stderr}");
    assert!(!stderr.contains("failed"), "{stderr}");
}

/// memcached killed 2 s into a 6 s run and started again 2 s later: stderr says when it
/// stopped answering and when it answered again, the result counts the time without it,
/// and the reconnection back-off (up to 1 s) is no request's latency.
#[test]
fn a_lost_server_is_said_out_loud_and_its_back_off_is_nobodys_latency() {
    let s = start(ServerKind::Memcached, "");
    let port = s.port();
    let url = s.url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = start_run(ServerKind::Memcached, &s, &out, "6s");
    std::thread::sleep(Duration::from_secs(2));
    drop(s); // stops it
    std::thread::sleep(Duration::from_secs(2));
    // Again on the same port, where the run's sessions reconnect.
    let _again = Process::spawn(
        Command::new("memcached")
            .args([
                "-u",
                "root",
                "-l",
                "127.0.0.1",
                "-U",
                "0",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let o = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("the store does not answer"),
        "{url}: {stderr}"
    );
    assert!(stderr.contains("the store answers again"), "{stderr}");
    let doc = result_json(&out);
    let unreachable = doc["runner"]["unreachable_s"].as_f64().unwrap();
    assert!(
        (1.0..=3.0).contains(&unreachable),
        "{unreachable}: {stderr}"
    );
    assert!(doc["results"]["errors"]["connection"].as_u64().unwrap() > 0);
    // The back-off doubles from 10 ms to 1 s while the server is away: were it timed,
    // the failed requests (several after 300 ms of waiting) would top the latency. A
    // refused connect on loopback fails at once.
    let max_us = doc["results"]["overall"]["max_us"].as_f64().unwrap();
    assert!(max_us < 300_000.0, "max {max_us} µs");
}

/// memcached killed 2 s into a 5 s run and not started again: the seconds the clients
/// spend waiting out their reconnection back-off (nothing sent, nothing failed) are not
/// taken for an answer — stderr never says the store answers again, and the outage runs
/// to the end of the run.
#[test]
fn a_server_lost_for_good_is_unreachable_to_the_end() {
    let s = start(ServerKind::Memcached, "");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = start_run(ServerKind::Memcached, &s, &out, "5s");
    std::thread::sleep(Duration::from_secs(2));
    drop(s); // stops it
    let o = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the store does not answer"), "{stderr}");
    assert!(!stderr.contains("the store answers again"), "{stderr}");
    assert!(
        stderr.contains("it did not answer again before the end"),
        "{stderr}"
    );
    let doc = result_json(&out);
    let unreachable = doc["runner"]["unreachable_s"].as_f64().unwrap();
    let elapsed = doc["runner"]["duration_s"].as_f64().unwrap();
    // Lost about 2 s in (the measured part starts a little after the process), so about
    // 3 s of 5 without it; every second from the loss to the end counts.
    assert!(
        (2.0..=3.6).contains(&unreachable) && unreachable < elapsed,
        "{unreachable} of {elapsed}: {stderr}"
    );
}

/// Ctrl-C during a run whose server stopped answering: the run stops, gives up the
/// replies the server owes, and writes its results marked interrupted (exit 130) — and a
/// second Ctrl-C while it does so does not lose them.
#[test]
fn ctrl_c_with_a_stalled_server_still_writes_the_results() {
    let s = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let extra = ["--duration", "60s", "--timeout", "none"];
    let run = spawn_kvlab(&run_args(
        ServerKind::Redis,
        &s,
        &out,
        "workloadc",
        100,
        &extra,
    ));
    std::thread::sleep(Duration::from_secs(1));
    let pause = Paused::new(s.pid());
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    signal("-INT", run.id());
    std::thread::sleep(Duration::from_millis(100));
    signal("-INT", run.id());
    let o = run.wait_with_output().unwrap();
    let took = started.elapsed();
    drop(pause);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(took < Duration::from_secs(10), "took {took:?}: {stderr}");
    assert!(stderr.contains("still writing the results"), "{stderr}");
    let doc = result_json(&out);
    assert_eq!(doc["interrupted"], true);
    assert!(doc["runner"]["unfinished_requests"].as_u64().unwrap() >= 1);
}

//! `--fault` through a real Toxiproxy (`toxiproxy-server`, installed by
//! `scripts/test.sh` from the Go module proxy) in front of a real redis-server: each
//! fault is in force in its window, its effect shows in those intervals of the timeline
//! and nowhere else, and every failure is counted once.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::common::files::result_json;
use crate::common::process::{free_port, wait_for_port, Process};
use crate::common::servers::redis;
use crate::common::{kvlab, text, workloada_on_redis};

/// The toxiproxy-server `scripts/test.sh` installs (or `KVLAB_TOXIPROXY`), started on
/// a free loopback port (stopped on drop), and its API's address.
fn toxiproxy() -> (Process, String) {
    let bin = std::env::var_os("KVLAB_TOXIPROXY").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").unwrap())
                .join(".cache/kvlab-go/bin/toxiproxy-server")
        },
        PathBuf::from,
    );
    assert!(
        bin.is_file(),
        "{} missing: scripts/test.sh installs it",
        bin.display()
    );
    let api_port = free_port();
    let server = Process::spawn(
        Command::new(&bin)
            .args(["-host", "127.0.0.1", "-port", &api_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_for_port(api_port, "toxiproxy-server never listened");
    (server, format!("127.0.0.1:{api_port}"))
}

/// The rows of a `timeline.csv`: (start, end, p50 µs, errors).
fn rows(csv: &str) -> Vec<(f64, f64, f64, u64)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let end: f64 = c[0].parse().unwrap();
            let length: f64 = c[1].parse().unwrap();
            (
                end - length,
                end,
                c[4].parse().unwrap(),
                c[8].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn faults_are_in_force_in_their_windows_and_every_failure_is_counted() {
    let (_toxiproxy, api) = toxiproxy();
    let s = redis("");
    let url = s.url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let common = workloada_on_redis(&url, 1000);
    let common: Vec<&str> = common.iter().map(String::as_str).collect();
    let mut load = vec!["load"];
    load.extend(&common);
    assert!(kvlab(&load).status.success());

    let mut args = vec![
        "run",
        "--duration",
        "5s",
        "--interval",
        "250ms",
        "--toxiproxy",
        &api,
        "--fault",
        "latency:25ms@1s-2.5s",
        "--fault",
        "down@3s-3.5s",
        "--fault",
        "reset@60s",
        "--max-errors",
        "1000000",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(&common);
    let o = kvlab(&args);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("fault on: latency:25ms@1s-2.5s"), "{err}");
    assert!(err.contains("fault off: down@3s-3.5s"), "{err}");

    let doc = result_json(&out);
    let faults = doc["runner"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 3, "{faults:?}");
    // One whose window the phase never reached is said, never applied.
    let never = faults.iter().find(|f| f["fault"] == "reset@60s").unwrap();
    assert!(never["from_s"].is_null(), "{never}");
    assert!(
        never["error"]
            .as_str()
            .unwrap()
            .contains("ended before its window"),
        "{never}"
    );
    let faults: Vec<&serde_json::Value> = faults.iter().filter(|f| f != &never).collect();
    for (f, (from, to)) in faults.iter().zip([(1.0, 2.5), (3.0, 3.5)]) {
        let (a, b) = (f["from_s"].as_f64().unwrap(), f["to_s"].as_f64().unwrap());
        assert!((a - from).abs() < 0.2 && (b - to).abs() < 0.2, "{f}");
        assert!(f["error"].is_null(), "{f}");
    }
    let timeline = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let rows = rows(&timeline);
    for &(start, end, p50, errors) in &rows {
        // Inside the latency window every request waited for the toxic.
        if start >= 1.1 && end <= 2.45 {
            assert!(p50 >= 25_000.0, "{start}-{end}: p50 {p50} µs\n{timeline}");
        }
        // Before it, and between the two faults, the server answers at once.
        if end <= 0.95 || (start >= 2.65 && end <= 2.95) {
            assert!(p50 < 10_000.0, "{start}-{end}: p50 {p50} µs\n{timeline}");
        }
        // Failures only while the proxy is down (and the reconnection after it).
        if errors > 0 {
            assert!(
                end > 2.95 && start < 3.8,
                "{start}-{end}: {errors} errors\n{timeline}"
            );
        }
    }
    let in_rows: u64 = rows.iter().map(|r| r.3).sum();
    let counted: u64 = doc["results"]["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(counted > 0, "{}", doc["results"]);
    assert_eq!(in_rows, counted, "{timeline}");
    assert_eq!(doc["runner"]["failed_operations"].as_u64(), Some(counted));

    // The proxy is gone once kvlab is.
    let mut c = std::net::TcpStream::connect(&api).unwrap();
    std::io::Write::write_all(&mut c, b"GET /proxies HTTP/1.0\r\n\r\n").unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut c, &mut answer).unwrap();
    assert!(answer.trim_end().ends_with("{}"), "{answer}");

    // What cannot be done is refused before anything runs.
    for (extra, says) in [
        (vec!["--fault", "down@1s"], "--fault needs --toxiproxy"),
        (
            vec!["--toxiproxy", &api, "--fault", "latency@1s"],
            "expected latency:TIME",
        ),
        (
            vec!["--toxiproxy", &api, "--fault", "latency:5ms"],
            "give its window after @",
        ),
        (
            vec!["--toxiproxy", &api, "--fault", "down@3s-2s"],
            "ends before it starts",
        ),
    ] {
        let mut args = vec!["run"];
        args.extend(&common);
        args.extend(extra.iter().copied());
        let o = kvlab(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "null",
        "--toxiproxy",
        &api,
        "--fault",
        "down@1s",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--fault does not apply to --db null"), "{err}");
}

/// The SLO search through a link of known latency: with 3 ms added to every reply, no
/// rate meets p99 = 1 ms, and the search says so; p99 = 50 ms is met, and every step's
/// median shows the link's 3 ms.
#[test]
fn the_slo_search_sees_the_latency_of_the_link() {
    let (_toxiproxy, api) = toxiproxy();
    let s = redis("");
    let url = s.url();
    let common = workloada_on_redis(&url, 1000);
    let common: Vec<&str> = common.iter().map(String::as_str).collect();
    assert!(kvlab(&[&["load"][..], &common].concat()).status.success());
    let dir = tempfile::tempdir().unwrap();
    for (target, met) in [("p99=1ms", false), ("p99=50ms", true)] {
        let out = dir.path().join(target);
        let o = kvlab(
            &[
                &[
                    "run",
                    "--slo",
                    target,
                    "--slo-step",
                    "300ms",
                    "--connections",
                    "4",
                    "--toxiproxy",
                    &api,
                    "--fault",
                    "latency:3ms@0s",
                    "--out",
                    out.to_str().unwrap(),
                ][..],
                &common,
            ]
            .concat(),
        );
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.success(), met, "{target}: {stdout}{stderr}");
        let slo: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("slo.json")).unwrap()).unwrap();
        assert_eq!(slo["max_rate_ops_per_sec"].is_null(), !met, "{slo}");
        for step in slo["steps"].as_array().unwrap() {
            let p50 = step["p50_us"].as_f64().unwrap();
            assert!(p50 >= 3000.0, "{target}: {step}");
        }
    }
}

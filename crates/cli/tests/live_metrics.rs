//! `--metrics ADDR`: a run's live metrics, scraped by a real Prometheus server while the
//! run goes on against a real redis-server, and checked by `promtool` (both from Debian's
//! `prometheus` package).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::files::result_json;
use crate::common::process::{free_port, wait_until, Process};
use crate::common::servers::redis;
use crate::common::{kvlab, kvlab_command, memtier_on, text, workloada_on_redis};

/// One HTTP/1.0 GET on loopback `port`: the status line, the headers and the body.
fn http_get(port: u16, path: &str) -> (String, String, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(c, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut response = String::new();
    c.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.to_string(), headers.to_string(), body.to_string())
}

/// An instant query's only sample value from Prometheus' HTTP API.
fn query(port: u16, promql: &str) -> Option<f64> {
    let mut encoded = String::new();
    for b in promql.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let (status, _, body) = http_get(port, &format!("/api/v1/query?query={encoded}"));
    assert!(status.contains("200"), "{promql}: {status} {body}");
    let doc: Value = serde_json::from_str(&body).unwrap();
    let result = doc["data"]["result"].as_array().unwrap();
    assert!(result.len() <= 1, "{promql}: {body}");
    result
        .first()
        .map(|r| r["value"][1].as_str().unwrap().parse().unwrap())
}

/// A run at 4 000 operations/s for 6 s, scraped every 250 ms: Prometheus sees the
/// counters rise while the run goes on, to no more than the run's final counts, the
/// latency histogram answers `histogram_quantile`, and `promtool` finds the page well
/// formed.
#[test]
fn a_runs_live_metrics_are_scraped_by_prometheus() {
    let s = redis("");
    let dir = tempfile::tempdir().unwrap();
    let url = s.url();
    let common = workloada_on_redis(&url, 1000);
    let common: Vec<&str> = common.iter().map(String::as_str).collect();
    let o = kvlab(&[&["load"][..], &common].concat());
    assert!(o.status.success(), "{:?}", text(&o));

    // Prometheus first, scraping the address kvlab will listen on.
    let metrics_port = free_port();
    let prom_port = free_port();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\n\
             scrape_configs:\n  - job_name: kvlab\n    static_configs:\n\
             \x20     - targets: ['127.0.0.1:{metrics_port}']\n"
        ),
    )
    .unwrap();
    let _prometheus = Process::spawn(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    wait_until(
        Duration::from_secs(30),
        Duration::from_millis(100),
        "prometheus never became ready",
        || {
            TcpStream::connect(("127.0.0.1", prom_port)).is_ok()
                && http_get(prom_port, "/-/ready").0.contains("200")
        },
    );

    let out = dir.path().join("out");
    let metrics = format!("127.0.0.1:{metrics_port}");
    let run_args = [
        "run",
        "--duration",
        "6s",
        "--target",
        "4000",
        "--interval",
        "250ms",
        "--metrics",
        &metrics,
        "--out",
        out.to_str().unwrap(),
    ];
    let mut run = kvlab_command(&[&run_args[..], &common].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("live metrics at") {
        assert!(stderr.read_line(&mut said).unwrap() > 0, "{said}");
    }
    assert!(
        said.contains(&format!("http://127.0.0.1:{metrics_port}/metrics")),
        "{said}"
    );

    // The page itself, mid-run: well formed for promtool, and what runs.
    std::thread::sleep(Duration::from_millis(1500));
    let (status, headers, page) = http_get(metrics_port, "/metrics");
    assert!(status.contains("200"), "{status}");
    assert!(
        headers.contains("Content-Type: text/plain; version=0.0.4"),
        "{headers}"
    );
    assert!(
        page.contains("kvlab_info{phase=\"run\",store=\"redis\""),
        "{page}"
    );
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(checked.status.success(), "{:?}\n{page}", text(&checked));
    assert_eq!(
        http_get(metrics_port, "/other").0.split(' ').nth(1),
        Some("404")
    );

    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(run.wait().unwrap().success(), "{said}{rest}");
    let doc = result_json(&out);
    let ops = doc["results"]["ops"].as_array().unwrap();
    let read = ops.iter().find(|o| o["name"] == "READ").unwrap();
    let reads = read["returns"]["OK"]
        .as_u64()
        .unwrap_or_else(|| panic!("{read}")) as f64;

    // What Prometheus kept of it.
    let series = "kvlab_operations_total{job=\"kvlab\",op=\"read\",status=\"ok\"}";
    let scrapes = query(prom_port, &format!("count_over_time({series}[5m])")).unwrap();
    assert!(scrapes >= 3.0, "{scrapes} scrapes");
    let first = query(prom_port, &format!("min_over_time({series}[5m])")).unwrap();
    let last = query(prom_port, &format!("max_over_time({series}[5m])")).unwrap();
    // Counters that rose while the run went on, to no more than the run's final count:
    // the last scrape saw the state of an interval before the end.
    assert!(
        first < last && last <= reads && last >= reads / 2.0,
        "scraped {first} to {last}, the run read {reads}"
    );
    let increase = query(
        prom_port,
        &format!("max_over_time(rate({series}[1s])[5m:250ms])"),
    );
    assert!(increase.is_some_and(|r| r > 1000.0), "{increase:?}");
    let p99 = query(
        prom_port,
        "histogram_quantile(0.99, max_over_time(kvlab_latency_seconds_bucket{op=\"read\"}[5m]))",
    )
    .unwrap();
    assert!(p99 > 0.0 && p99 < 1.0, "p99 {p99} s");
    let up = query(prom_port, "max_over_time(up{job=\"kvlab\"}[5m])").unwrap();
    assert_eq!(up, 1.0);

    // memtier's command line takes it too; verify, which has no intervals, refuses it.
    let port = s.addr().port().to_string();
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "500",
            "--hide-histogram",
            "--metrics",
            "127.0.0.1:0",
        ],
    );
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("kvlab: live metrics at http://127.0.0.1:"),
        "{err}"
    );
    let o = kvlab(&[&["verify", "--metrics", "127.0.0.1:0"][..], &common].concat());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--metrics does not apply to verify"), "{err}");
}

/// An in-process store's reads take hundreds of nanoseconds: the latency histogram's
/// buckets start at 100 ns, so the median of a moka run's reads lies in a bucket with a
/// lower bound, in the microseconds, where `histogram_quantile` interpolates (when the
/// buckets started at 5 µs, the first held nearly every read). The page is scraped
/// after two measured intervals were reported on stderr; `promtool` checks it; the run
/// then stops on SIGINT.
#[test]
fn in_process_latencies_spread_over_the_histograms_buckets() {
    let port = free_port();
    let metrics = format!("127.0.0.1:{port}");
    let mut run = kvlab_command(&[
        "run",
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=1000",
        "--db",
        "moka",
        "--threads",
        "1",
        "--duration",
        "10m",
        "--interval",
        "200ms",
        "--metrics",
        &metrics,
        "--progress",
        "always",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(run.stderr.take().unwrap());
    let mut said = String::new();
    let mut measured = 0;
    while measured < 2 {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{said}");
        if line.starts_with("run ") && line.contains(" ops/s") && !line.contains("warm") {
            measured += 1;
        }
        said.push_str(&line);
    }
    let (status, _, page) = http_get(port, "/metrics");
    crate::common::process::signal("-INT", run.id());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    run.wait().unwrap();
    assert!(status.contains("200"), "{status}");

    let buckets: Vec<(f64, f64)> = page
        .lines()
        .filter_map(|l| l.strip_prefix("kvlab_latency_seconds_bucket{op=\"read\",le=\""))
        .filter_map(|l| {
            let (le, count) = l.split_once("\"} ")?;
            Some((le.parse().ok()?, count.trim().parse().unwrap()))
        })
        .collect();
    assert_eq!(buckets[0].0, 1e-7, "{page}");
    let total = buckets.last().unwrap().1;
    assert!(total > 1000.0, "{total} reads\n{said}");
    // The median lies in a bucket with a lower bound (not the first), in the
    // microseconds (a few hundred ns in a release build, 2.5–5 µs in a debug one, up to
    // 10 µs on a busy machine): with the first bucket at 5 µs it was mostly the first,
    // and histogram_quantile could only say "≤ 5 µs".
    let median = buckets.iter().position(|(_, c)| *c >= total / 2.0).unwrap();
    assert!(median > 0, "the median in the first bucket: {buckets:?}");
    assert!(buckets[median].0 <= 1e-5, "{buckets:?}");

    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(checked.status.success(), "{:?}\n{page}", text(&checked));
}

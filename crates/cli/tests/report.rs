//! `kvlab report` and `kvlab compare` end to end: real `kvlab run`s on the null store
//! write result directories, which the commands then read back.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use common::files::result_json;
use common::{kvlab, text};

/// Runs workload A on the null store into `out`.
fn run_null(out: &Path, threads: &str, seed: &str) {
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=5000",
        "--db",
        "null",
        "--threads",
        threads,
        "--seed",
        seed,
        "--interval",
        "10ms",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "run failed: {}", text(&o).1);
}

/// results/null/workloada/{1x1/round-1, 1x1/round-2, 2x1/round-1}
fn results(root: &Path) -> Vec<PathBuf> {
    let dirs = [
        ("1x1/round-1", "1", "11"),
        ("1x1/round-2", "1", "12"),
        ("2x1/round-1", "2", "13"),
    ];
    dirs.iter()
        .map(|(rel, threads, seed)| {
            let dir = root.join("null/workloada").join(rel);
            run_null(&dir, threads, seed);
            dir
        })
        .collect()
}

fn throughput(dir: &Path) -> f64 {
    let doc = result_json(dir);
    doc["results"]["throughput_ops_per_sec"].as_f64().unwrap()
}

/// The READ returns that found nothing over all READ returns of a result, percent.
fn read_miss_pct(dir: &Path) -> f64 {
    let doc = result_json(dir);
    let ops = doc["results"]["ops"].as_array().unwrap();
    let read = ops
        .iter()
        .find(|o| o["name"] == "READ")
        .expect("a READ entry");
    let count = |status: &str| read["returns"][status].as_f64().unwrap_or(0.0);
    100.0 * count("NOT_FOUND") / (count("OK") + count("NOT_FOUND"))
}

/// The cells of the markdown row whose first cells are `prefix`.
fn row<'a>(markdown: &'a str, prefix: &[&str]) -> Option<Vec<&'a str>> {
    markdown.lines().find_map(|l| {
        let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
        (cells.len() >= prefix.len() && cells[..prefix.len()] == *prefix).then_some(cells)
    })
}

#[test]
fn report_writes_markdown_and_html_and_compare_gives_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("results");
    let runs = results(&root);
    let html = dir.path().join("out/report.html");
    let md = dir.path().join("out/report.md");
    let o = kvlab(&[
        "report",
        root.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "--cv-threshold",
        "0",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "report failed: {stderr}");
    assert_eq!(std::fs::read_to_string(&md).unwrap(), stdout);

    // The 1×1 cell has both rounds; its mean, min and max are the rounds' throughputs.
    let (a, b) = (throughput(&runs[0]), throughput(&runs[1]));
    let cells = row(&stdout, &["null", "workloada", "1×1"]).expect("a 1×1 row");
    assert_eq!(cells[3], "2");
    assert_eq!(cells[4], format!("{:.0}", (a + b) / 2.0));
    assert_eq!(cells[5], format!("{:.0}", a.min(b)));
    assert_eq!(cells[6], format!("{:.0}", a.max(b)));
    // A threshold of 0 flags any cell whose rounds differ at all.
    assert!(cells[13].contains("throughput CV"), "{cells:?}");
    // Read misses: NOT_FOUND over the READ returns of each result, mean of the rounds.
    let (ma, mb) = (read_miss_pct(&runs[0]), read_miss_pct(&runs[1]));
    assert_eq!(cells[11], format!("{:.1}", (ma + mb) / 2.0), "{cells:?}");
    let single = row(&stdout, &["null", "workloada", "2×1"]).expect("a 2×1 row");
    assert_eq!(single[3], "1");
    assert_eq!(single[7], "–", "one round has no CV");

    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.matches("<svg class=\"chart\"").count() >= 5, "{page}");
    assert!(page.contains("Throughput by clients — workloada"));

    // compare: markdown with B/A ratios computed from the documents.
    let o = kvlab(&[
        "compare",
        runs[0].to_str().unwrap(),
        runs[2].join("result.json").to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "compare failed: {stderr}");
    let (ta, tb) = (throughput(&runs[0]), throughput(&runs[2]));
    let cells = row(&stdout, &["Throughput (ops/s)"]).expect("a throughput row");
    assert_eq!(cells[1], format!("{ta:.0}"));
    assert_eq!(cells[2], format!("{tb:.0}"));
    assert_eq!(cells[3], format!("{:.3}", tb / ta));
    for metric in [
        "READ p99 (µs)",
        "UPDATE p99.9 (µs)",
        "Errors",
        "Hit ratio (%)",
    ] {
        assert!(
            row(&stdout, &[metric]).is_some(),
            "no {metric} row: {stdout}"
        );
    }

    let o = kvlab(&[
        "compare",
        "--format",
        "terminal",
        runs[0].to_str().unwrap(),
        runs[1].to_str().unwrap(),
    ]);
    let (stdout, _) = text(&o);
    assert!(o.status.success());
    assert!(!stdout.contains('|'), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("Throughput (ops/s)"))
        .unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[words.len() - 1], format!("{:.3}", b / a));
}

#[test]
fn bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = kvlab(&["report", empty.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("no result.json found in {}", empty.display())),
        "{stderr}"
    );

    let missing = dir.path().join("missing");
    let o = kvlab(&["report", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains(&missing.display().to_string()));

    let bad = dir.path().join("bad/run");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("result.json"), "{ not json").unwrap();
    let o = kvlab(&["report", dir.path().join("bad").to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&bad.join("result.json").display().to_string()),
        "{stderr}"
    );

    let o = kvlab(&["compare", empty.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));

    let o = kvlab(&["report", "--cv-threshold=-1", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--cv-threshold"));
}

/// `scripts/report-screenshot.sh` renders a report and writes a PNG of the whole page.
#[test]
fn the_screenshot_script_writes_a_png() {
    let has_chromium = std::env::var_os("KVLAB_CHROMIUM").is_some()
        || Command::new("sh")
            .args(["-c", "command -v chromium"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !has_chromium {
        eprintln!(
            "note: chromium not found, screenshot script not tested (apt-get install chromium)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("results");
    run_null(&root.join("a"), "1", "21");
    let png = dir.path().join("shot.png");
    let o = Command::new("scripts/report-screenshot.sh")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("KVLAB", env!("CARGO_BIN_EXE_kvlab"))
        .args([root.to_str().unwrap(), png.to_str().unwrap(), "1000"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // The IHDR chunk: width and height, big-endian, at bytes 16..24.
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!(width, 1000);
    assert!(height > 1000, "the whole page, not one window: {height}");
}

/// A run with a warm-up: the monitor starts before the warm-up and says when
/// (`monitor/summary.json`), the report draws its resource charts from the measured start
/// as it draws the timelines (the warm-up's samples before 0), and the page reads at a
/// laptop's window width.
#[test]
fn resource_charts_count_from_the_measured_start_as_the_timelines_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results/null");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=100",
        "-p",
        "operationcount=4000",
        "--db",
        "null",
        "--target-rate",
        "4000",
        "--warmup",
        "1s",
        "--interval",
        "100ms",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "run failed: {}", text(&o).1);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("monitor/summary.json")).unwrap())
            .unwrap();
    let started_ms = summary["started_unix_ms"]
        .as_u64()
        .expect("the monitor's start");
    let doc = result_json(&out);
    let measured = kvlab_report::parse_rfc3339(doc["runner"]["measured_start"].as_str().unwrap())
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(
        measured >= started_ms + 1000,
        "the monitor started before the 1 s warm-up: {started_ms} ms, measured {measured} ms"
    );
    let dir_result = kvlab_report::ResultDir::open(&out).unwrap();
    let offset = dir_result.monitor_offset_s().expect("both starts known");
    assert!(
        (offset + (measured - started_ms) as f64 / 1000.0).abs() < 1e-6,
        "{offset}"
    );
    let monitor = dir_result.monitor().unwrap();
    let cpu = monitor.iter().find(|m| m.name == "cpu").expect("cpu.csv");
    assert!(
        cpu.time_s[0] < 0.0,
        "warm-up samples come before 0: {:?}",
        cpu.time_s
    );

    let html = dir.path().join("report.html");
    let o = kvlab(&[
        "report",
        dir.path().join("results").to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "report failed: {}", text(&o).1);
    let page = std::fs::read_to_string(&html).unwrap();
    let resource = page
        .find("aria-label=\"cpu: ")
        .map(|i| &page[i..i + page[i..].find("</svg>").unwrap()])
        .expect("a cpu chart");
    assert!(
        resource.contains("Time from the measured start (s)"),
        "{resource}"
    );
    if let Some(seen) = common::browser::see(&html) {
        seen.assert_readable("kvlab report --html");
    }
}

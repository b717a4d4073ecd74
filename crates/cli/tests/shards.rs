//! One experiment spread over several kvlab processes against one real redis-server:
//! `load --shard I/N` inserts every record once between them, `run --shard I/N
//! --start-at T` runs a share of the operations each from a common start, and `kvlab
//! merge` adds their results up exactly — counts summed, every percentile that of the
//! shards' latency histograms added together, the intervals on one time line.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use serde_json::Value;

use crate::common::files::result_json;
use crate::common::servers::redis;
use crate::common::{kvlab, kvlab_command, text, workloada_on_redis};

/// Starts `kvlab ARGS` in the background (stdout and stderr kept).
fn background(args: &[&str]) -> Child {
    kvlab_command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for every child, asserting each succeeded.
fn all_succeed(children: Vec<Child>) {
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
    }
}

/// The service-time histogram of `tag` in `dir`'s latency.hlog, its intervals added up.
fn histogram(dir: &Path, tag: &str) -> Histogram<u64> {
    let log = kvlab_report::LatencyLog::load(&dir.join("latency.hlog")).unwrap();
    log.by_tag
        .get(tag)
        .cloned()
        .unwrap_or_else(|| panic!("no {tag} in {}", dir.display()))
}

/// The entry of `name` in a result's `results.ops`.
fn op<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["results"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {}", doc["results"]))
}

#[test]
fn shards_load_run_from_one_start_and_merge_exactly() {
    let s = redis("");
    let url = s.url();
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| -> PathBuf { dir.path().join(name) };
    let common = workloada_on_redis(&url, 3000);
    let common: Vec<&str> = common.iter().map(String::as_str).collect();

    // Three loaders in parallel: every record once between them.
    let loads: Vec<Child> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            let out = d(&format!("load{i}"));
            let mut args = vec!["load", "--shard", &shard, "--out", out.to_str().unwrap()];
            args.extend(&common);
            background(&args)
        })
        .collect();
    all_succeed(loads);
    for i in 0..3 {
        let doc = result_json(&d(&format!("load{i}")));
        assert_eq!(doc["runner"]["shard"]["index"], i);
        assert_eq!(doc["runner"]["shard"]["count"], 3);
        assert_eq!(doc["workload"]["insertstart"], (1000 * i).to_string());
        assert_eq!(doc["workload"]["insertcount"], "1000");
        assert_eq!(doc["results"]["operations"], 1000);
    }
    let mut args = vec!["verify"];
    args.extend(&common);
    let o = kvlab(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("[VERIFY], Records, 3000"), "{out}");
    assert!(out.contains("[VERIFY], Missing, 0"), "{out}");

    // Three runners from one start, 10 000 operations each.
    let start = kvlab_report::rfc3339(SystemTime::now() + Duration::from_secs(2));
    let runs: Vec<Child> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            let out = d(&format!("run{i}"));
            let mut args = vec![
                "run",
                "--shard",
                &shard,
                "--start-at",
                &start,
                "-p",
                "operationcount=30000",
                "--seed",
                "7",
                "--interval",
                "250ms",
                "--out",
                out.to_str().unwrap(),
            ];
            args.extend(&common);
            background(&args)
        })
        .collect();
    all_succeed(runs);
    let shards: Vec<Value> = (0..3)
        .map(|i| result_json(&d(&format!("run{i}"))))
        .collect();
    let mut seeds = Vec::new();
    for (i, doc) in shards.iter().enumerate() {
        assert_eq!(doc["results"]["operations"], 10_000, "shard {i}");
        assert_eq!(doc["runner"]["operations"], 10_000, "shard {i}");
        seeds.push(doc["seed_string"].as_str().unwrap().to_string());
        // Each started at the common start, within a scheduling delay.
        let at = doc["runner"]["measured_start"].as_str().unwrap();
        let late = kvlab_report::parse_rfc3339(at)
            .unwrap()
            .duration_since(kvlab_report::parse_rfc3339(&start).unwrap())
            .unwrap();
        assert!(
            late < Duration::from_millis(300),
            "shard {i} started {late:?} late"
        );
    }
    assert_eq!(seeds[0], "7");
    seeds.dedup();
    assert_eq!(seeds.len(), 3, "each shard a seed of its own: {seeds:?}");

    // Merged in any order.
    let merged = d("merged");
    let o = kvlab(&[
        "merge",
        d("run2").to_str().unwrap(),
        d("run0").to_str().unwrap(),
        d("run1").to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("[READ], Operations, "), "{out}");
    let m = result_json(&merged);
    assert_eq!(m["results"]["operations"], 30_000);
    assert_eq!(m["runner"]["threads"], 3);
    let from: Vec<u64> = m["runner"]["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["shard"]["index"].as_u64().unwrap())
        .collect();
    assert_eq!(from, [0, 1, 2]);
    assert!(m["runner"].get("shard").is_none(), "{}", m["runner"]);
    let runtime = m["results"]["runtime_ms"].as_f64().unwrap();
    for doc in &shards {
        assert!(runtime >= doc["results"]["runtime_ms"].as_f64().unwrap());
    }
    let throughput = m["results"]["throughput_ops_per_sec"].as_f64().unwrap();
    assert!((throughput - 30_000.0 / (runtime / 1000.0)).abs() < 1e-6 * throughput);

    for name in ["READ", "UPDATE"] {
        // Counts add up.
        let sum = |field: &str| -> u64 {
            shards
                .iter()
                .map(|s| op(s, name)[field].as_u64().unwrap())
                .sum()
        };
        assert_eq!(
            op(&m, name)["operations"].as_u64().unwrap(),
            sum("operations")
        );
        let ok: u64 = shards
            .iter()
            .map(|s| op(s, name)["returns"]["OK"].as_u64().unwrap())
            .sum();
        assert_eq!(op(&m, name)["returns"]["OK"].as_u64().unwrap(), ok);
        // Every percentile is that of the three logs' histograms added together.
        let mut all = Histogram::<u64>::new(3).unwrap();
        for i in 0..3 {
            all.add(histogram(&d(&format!("run{i}")), name)).unwrap();
        }
        assert_eq!(all.len(), sum("operations"));
        let latency = &op(&m, name)["latency"];
        for (field, p) in [("p50_us", 50.0), ("p99_us", 99.0), ("p999_us", 99.9)] {
            let want = all.value_at_percentile(p) as f64 / 1000.0;
            assert_eq!(latency[field].as_f64().unwrap(), want, "{name} {field}");
        }
        assert_eq!(
            latency["max_us"].as_f64().unwrap(),
            all.max() as f64 / 1000.0
        );
        // The merged log reads back as the same histogram.
        assert_eq!(histogram(&merged, name), all, "{name}");
    }
    // The timeline holds every operation once.
    let timeline = std::fs::read_to_string(merged.join("timeline.csv")).unwrap();
    let ops: u64 = timeline
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(ops, 30_000, "{timeline}");
    // A report reads it as any result.
    let o = kvlab(&["report", merged.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));

    // Two of three shards: merged, and said.
    let partial = d("partial");
    let o = kvlab(&[
        "merge",
        d("run0").to_str().unwrap(),
        d("run1").to_str().unwrap(),
        "--out",
        partial.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("merged 2 of 3 shards; missing: 2/3"), "{err}");

    // What cannot be merged exactly is refused, naming the result (exit code 2).
    let bare = d("bare");
    std::fs::create_dir(&bare).unwrap();
    std::fs::copy(d("run2").join("result.json"), bare.join("result.json")).unwrap();
    let cut = d("cut");
    std::fs::create_dir(&cut).unwrap();
    std::fs::copy(d("run2").join("result.json"), cut.join("result.json")).unwrap();
    let log = std::fs::read_to_string(d("run2").join("latency.hlog")).unwrap();
    // Three intervals short, and no newline after the last line left.
    let lines: Vec<&str> = log.lines().collect();
    std::fs::write(
        cut.join("latency.hlog"),
        lines[..lines.len() - 3].join("\n"),
    )
    .unwrap();
    let refused = [
        (vec![d("run0"), d("load1")], "results of different phases"),
        (vec![d("run0"), cut.clone()], "the log is incomplete"),
        (vec![d("run0"), d("run0")], "are both shard 0/3"),
        (vec![d("run0"), bare.clone()], "no latency.hlog"),
        (vec![d("run0"), d("nowhere")], "no such result directory"),
    ];
    for (dirs, says) in refused {
        let mut args = vec!["merge".to_string()];
        args.extend(dirs.iter().map(|p| p.display().to_string()));
        args.extend(["--out".into(), d("refused").display().to_string()]);
        let o = kvlab(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{dirs:?}: {err}");
        assert!(err.contains(says), "{dirs:?}: {err}");
    }
}

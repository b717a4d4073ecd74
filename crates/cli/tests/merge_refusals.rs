//! `kvlab merge` merges only the parts of one experiment: results of another workload,
//! store or store option, phase or kvlab version, or shards whose measured windows do not
//! overlap, are refused (exit code 2, one sentence naming the field) unless `--force`,
//! which marks the merged result. Workload properties are the experiment's, not summed;
//! `kvlab report` reads the shards of one round as that round.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::common::files::result_json;
use crate::common::{kvlab, kvlab_command, text};

/// `kvlab run` of a YCSB workload file on the null store as shard `shard`, into `out`;
/// `extra` goes last.
fn shard_args(workload: &str, shard: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--db",
        "null",
        "-P",
        &format!("workloads/ycsb/{workload}"),
        "-p",
        "recordcount=1000",
        "-p",
        "insertcount=1000",
        "-p",
        "operationcount=2000",
        "--shard",
        shard,
        "--monitor",
        "off",
        "--out",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(args: &[String]) {
    let o = kvlab_command(args).output().unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
}

/// Both shards of workload A from one common start, in parallel: their measured windows
/// overlap.
fn parallel_shards(dir: &Path) -> (PathBuf, PathBuf) {
    let start = kvlab_report::rfc3339(SystemTime::now() + Duration::from_millis(1000));
    let outs = (dir.join("run-0"), dir.join("run-1"));
    let children: Vec<Child> = [("0/2", &outs.0), ("1/2", &outs.1)]
        .iter()
        .map(|(shard, out)| {
            kvlab_command(&shard_args(
                "workloada",
                shard,
                out,
                &["--start-at", &start, "--duration", "500ms"],
            ))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{:?}", text(&o));
    }
    outs
}

fn merge(dirs: &[&Path], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["merge".to_string()];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    args.extend(["--out".to_string(), out.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    kvlab_command(&args).output().unwrap()
}

#[test]
fn shards_of_different_workloads_are_refused_naming_the_field_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("run-0"), dir.path().join("b-1"));
    // As a new user would: a workload A shard, and later a workload B shard.
    run(&shard_args("workloada", "0/2", &a, &[]));
    run(&shard_args("workloadb", "1/2", &b, &[]));
    let m = dir.path().join("m");
    let o = merge(&[&a, &b], &m, &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("runner.property_files") && err.contains("results of different workloads"),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    // One sentence: one error line.
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!m.join("result.json").exists());

    // --force merges anyway, and the result says it was forced and what differed.
    let o = merge(&[&a, &b], &m, &["--force"]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc = result_json(&m);
    assert_eq!(doc["merge"]["forced"], true, "{}", doc["merge"]);
    let differences: Vec<&str> = doc["merge"]["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for field in [
        "runner.property_files",
        "workload.readproportion",
        "workload.updateproportion",
        "runner.measured_start",
    ] {
        assert!(differences.contains(&field), "{field}: {differences:?}");
    }
    assert!(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("forced: ")),
        "{}",
        doc["notes"]
    );
}

#[test]
fn other_stores_and_windows_that_do_not_overlap_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    // The same workload twice in a row: two shards that were not one experiment.
    run(&shard_args("workloada", "0/2", &d("first"), &[]));
    run(&shard_args("workloada", "1/2", &d("later"), &[]));
    let o = merge(&[&d("first"), &d("later")], &d("m"), &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("measured windows do not overlap"), "{err}");

    // Another store: the sentence names store.name.
    let mut args = shard_args("workloada", "1/2", &d("moka"), &[]);
    let at = args.iter().position(|a| a == "null").unwrap();
    args[at] = "moka".into();
    run(&args);
    let o = merge(&[&d("first"), &d("moka")], &d("m"), &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("store.name `null`") && err.contains("results of different stores"),
        "{err}"
    );

    // Another kvlab version (a result written by another build).
    let old = d("old");
    std::fs::create_dir(&old).unwrap();
    for f in ["latency.hlog", "timeline.csv"] {
        std::fs::copy(d("later").join(f), old.join(f)).unwrap();
    }
    let mut doc: Value = result_json(&d("later"));
    doc["kvlab_version"] = "0.0.9".into();
    std::fs::write(old.join("result.json"), doc.to_string()).unwrap();
    let o = merge(&[&d("first"), &old], &d("m"), &[]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("kvlab_version"), "{err}");
}

#[test]
fn shards_of_one_round_merge_with_the_experiments_properties_and_report_as_one_round() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = parallel_shards(dir.path());
    let m = dir.path().join("merged");
    let o = merge(&[&a, &b], &m, &[]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let doc = result_json(&m);
    assert!(doc.get("merge").is_none(), "{}", doc["merge"]);
    // Each shard ran with insertcount=1000; the experiment's property is not their sum.
    assert_eq!(doc["workload"]["insertcount"], "1000");
    let ops = |d: &Path| result_json(d)["results"]["operations"].as_u64().unwrap();
    assert_eq!(
        doc["results"]["operations"].as_u64().unwrap(),
        ops(&a) + ops(&b)
    );

    // `kvlab report` of the two shard directories: one round, the shards' sum.
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    std::fs::rename(&a, shards.join("run-0")).unwrap();
    std::fs::rename(&b, shards.join("run-1")).unwrap();
    let o = kvlab(&["report", shards.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("shards ") && out.contains("merged into one round"),
        "{out}"
    );
    let row: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("| null"))
        .unwrap_or_else(|| panic!("{out}"))
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(row[4], "1", "one round, not two: {row:?}\n{out}");
    assert!(!out.contains("throughput CV"), "{out}");
}

//! `kvlab model fidelity` on real RocksDB with a cut of the ARC `OLTP` trace: the nine
//! workloads, the replay's counts against the trace file read without kvlab, every key
//! the replay and the model send present in the database, and YCSB's uniform keys
//! reading more blocks than the trace (Cao et al., FAST'20, Figure 14's direction).

use std::collections::HashSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::files::{read_json, shared_data_or_skip};
use crate::common::{kvlab, text};

const WORKLOADS: [&str; 9] = [
    "replay",
    "prefix_dist",
    "prefix_random",
    "all_dist",
    "all_random",
    "ycsb_uniform",
    "ycsb_zipfian",
    "ycsb_hotspot",
    "ycsb_exponential",
];

/// The ARC `OLTP` trace, or `None` (the test skips) when the shared data is not beside
/// the project.
fn oltp() -> Option<PathBuf> {
    shared_data_or_skip("traces/arc/OLTP.lis.zst")
}

/// The first `n` lines of an ARC trace, read by the `zstd` tool: (requests, distinct
/// blocks). An ARC line is `start count ignored request`: `count` blocks from `start`.
fn arc_counts(path: &Path, n: usize) -> (u64, u64) {
    let mut child = Command::new("zstd")
        .arg("-dc")
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the zstd tool runs");
    let out = child.stdout.take().expect("piped stdout");
    let mut requests = 0u64;
    let mut blocks = HashSet::new();
    for line in std::io::BufReader::new(out).lines().take(n) {
        let line = line.expect("a line of text");
        let mut f = line.split_whitespace();
        let start: u64 = f
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a start block");
        let count: u64 = f
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a block count");
        for b in start..start + count {
            blocks.insert(b);
            requests += 1;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    (requests, blocks.len() as u64)
}

fn u(v: &serde_json::Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn fidelity_of_an_oltp_cut_on_rocksdb() {
    let Some(trace) = oltp() else {
        return;
    };
    let limit = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fidelity");
    let o = kvlab(&[
        "model",
        "fidelity",
        trace.to_str().unwrap(),
        "--value-size",
        "1KiB",
        "--db",
        "rocksdb",
        "--block-cache",
        "8MiB",
        "--limit",
        &limit.to_string(),
        "--out",
        out.to_str().unwrap(),
        "--html",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "model fidelity failed:\n{stderr}");
    assert!(stdout.contains("replay"), "{stdout}");
    let doc = read_json(&out.join("fidelity.json"));
    let rows = doc["workloads"].as_array().expect("a workloads array");
    let names: Vec<&str> = rows.iter().filter_map(|w| w["name"].as_str()).collect();
    assert_eq!(names, WORKLOADS, "{doc}");
    for w in rows {
        assert!(w.get("error").is_none(), "{} did not run: {w}", w["name"]);
        for key in [
            "block_reads",
            "block_cache_hits",
            "read_bytes",
            "write_bytes",
        ] {
            u(w, key);
        }
    }
    let row = |name: &str| rows.iter().find(|w| w["name"] == name).expect("a row");

    // The trace, read without kvlab: as many requests and keys as the report says.
    let (requests, blocks) = arc_counts(&trace, limit);
    assert_eq!(u(&doc, "requests"), requests);
    assert_eq!(u(&doc, "distinct_keys"), blocks);
    let replay = row("replay");
    assert_eq!(u(replay, "reads"), requests, "the replay's reads: {replay}");

    // Every key the replay reads is in the database (the keys were mapped once, for the
    // load and for the replay), and so is every key of the uniform model and of YCSB.
    for name in [
        "replay",
        "all_random",
        "prefix_dist",
        "ycsb_uniform",
        "ycsb_exponential",
    ] {
        let result = read_json(&out.join("runs").join(name).join("result.json"));
        let found = u(&result["runner"], "keys_found");
        let missing = u(&result["runner"], "keys_not_found");
        assert_eq!(missing, 0, "{name}: {missing} keys not in the database");
        assert_eq!(found, u(row(name), "reads"), "{name}");
    }

    // RocksDB read blocks for the replay, each holding at least one 1 KiB value, and no
    // more blocks than reads.
    let block_reads = u(replay, "block_reads");
    assert!(block_reads > 0 && block_reads <= requests, "{replay}");
    assert!(u(replay, "read_bytes") >= block_reads * 1024, "{replay}");
    // The paper's direction: keys without the trace's locality read more blocks.
    let uniform = u(row("ycsb_uniform"), "block_reads");
    assert!(
        uniform as f64 > 1.3 * block_reads as f64,
        "YCSB uniform {uniform} block reads against the replay's {block_reads}"
    );
    // kvlab's locality layer: the fitted model reads close to the replay's blocks, and
    // much closer than db_bench's independent draws of the same model (a diagnostic).
    let diagnostics = doc["diagnostics"].as_array().expect("a diagnostics array");
    let independent = diagnostics
        .iter()
        .find(|w| w["name"] == "prefix_dist_independent")
        .expect("the independent Prefix_dist diagnostic");
    let model = u(row("prefix_dist"), "block_reads") as f64 / block_reads as f64;
    let alone = u(independent, "block_reads") as f64 / block_reads as f64;
    assert!(
        (0.8..1.2).contains(&model) && alone > 1.15 && (model - 1.0).abs() < (alone - 1.0).abs(),
        "prefix_dist {model:.3}× the replay's block reads, without locality {alone:.3}×"
    );
    let toml = std::fs::read_to_string(out.join("model.toml")).expect("model.toml");
    assert!(toml.contains("\n[locality]\n"), "{toml}");
    let html = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(
        html.contains("<svg") && html.contains("prefix_dist"),
        "{html}"
    );
    // All nine workloads on the page: still readable at a laptop's width.
    if let Some(seen) = crate::common::browser::see(&out.join("index.html")) {
        seen.assert_readable("kvlab model fidelity --html (nine workloads)");
    }
}

#[test]
fn fidelity_refuses_a_store_without_rocksdb_statistics() {
    let Some(trace) = oltp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = kvlab(&[
        "model",
        "fidelity",
        trace.to_str().unwrap(),
        "--db",
        "lmdb",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--db rocksdb"), "{stderr}");
}

/// db_bench's own mixgraph trace (byte keys, gets, puts and seeks): every key the replay
/// and the model read is in the database, the replay reads as often as the trace, and
/// the trace shuffled reads about as many blocks as the trace (a generated trace has no
/// temporal locality: its requests are independent draws).
#[test]
fn fidelity_of_a_db_bench_trace_on_rocksdb() {
    let Some(trace) = shared_data_or_skip("traces/rocksdb/mixgraph.trace") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fidelity");
    let o = kvlab(&[
        "model",
        "fidelity",
        trace.to_str().unwrap(),
        "--db",
        "rocksdb",
        "--block-cache",
        "1MiB",
        "--workloads",
        "prefix_dist,replay_shuffled",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "model fidelity failed:\n{stderr}");
    let doc = read_json(&out.join("fidelity.json"));
    let replay = &doc["workloads"][0];
    assert_eq!(replay["name"], "replay");
    // The file's 35 983 gets among 60 000 requests, as kvlab's RocksDB trace reader counts
    // them (`kvlab trace stats`; a consistency check of the replay's path, not an outside
    // count: no RocksDB trace_analyzer is installed here).
    assert_eq!(u(&doc, "requests"), 60_000);
    assert_eq!(u(replay, "reads"), 35_983);
    for name in ["replay", "prefix_dist"] {
        let result = read_json(&out.join("runs").join(name).join("result.json"));
        assert_eq!(u(&result["runner"], "keys_not_found"), 0, "{name}");
    }
    // The trace's puts reach the SST files once the memtable is flushed.
    assert!(u(replay, "write_bytes") > 0, "{replay}");
    let shuffled = &doc["diagnostics"][0];
    assert_eq!(shuffled["name"], "replay_shuffled");
    let ratio = u(shuffled, "block_reads") as f64 / u(replay, "block_reads") as f64;
    assert!(
        (0.9..1.1).contains(&ratio),
        "shuffled / replay block reads {ratio}"
    );
}

/// `run --model MODEL -p key_model=…` runs the paper's variant it names (what fidelity
/// compares), and refuses a name that is not one.
#[test]
fn run_model_takes_the_key_model_variants() {
    let Some(trace) = oltp() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.toml");
    let o = kvlab(&[
        "model",
        "fit",
        trace.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
        "--key-ranges",
        "ranges:10",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    for (name, paper) in [("prefix_dist", "Prefix_dist"), ("all_random", "All_random")] {
        let out = dir.path().join(name);
        let o = kvlab(&[
            "run",
            "--model",
            model.to_str().unwrap(),
            "-p",
            &format!("key_model={name}"),
            "-p",
            "reads=2000",
            "--db",
            "null",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
        let result = read_json(&out.join("result.json"));
        assert_eq!(
            result["workload"]["key_model"], paper,
            "{}",
            result["workload"]
        );
        assert_eq!(u(&result["results"], "operations"), 2000);
    }
    let o = kvlab(&[
        "run",
        "--model",
        model.to_str().unwrap(),
        "-p",
        "key_model=zipf",
        "--db",
        "null",
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("key_model"), "{stderr}");
}

/// `--sst-size` compacts the base database into files of that size, and the default
/// `--key-ranges sst` fits one key range per file: the model's `[kvlab]` starts are the
/// base's files (read back from the kept database, read-only, with `model fit
/// --key-ranges sst:…`), and the model's runs find every key.
#[test]
fn fidelity_cuts_the_model_at_the_base_databases_files() {
    let Some(trace) = shared_data_or_skip("traces/rocksdb/mixgraph.trace") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fidelity");
    let o = kvlab(&[
        "model",
        "fidelity",
        trace.to_str().unwrap(),
        "--db",
        "rocksdb",
        "--block-cache",
        "1MiB",
        "--sst-size",
        "128KiB",
        "--workloads",
        "prefix_dist,prefix_random",
        "--keep-dbs",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "model fidelity failed:\n{stderr}");
    let model: toml::Table = std::fs::read_to_string(out.join("model.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let starts: Vec<i64> = model["kvlab"]["keyrange_starts"]
        .as_array()
        .expect("[kvlab] keyrange_starts")
        .iter()
        .map(|v| v.as_integer().unwrap())
        .collect();
    // 15 030 keys of ~100-byte values (1.4 MB) in 128 KiB files: about a dozen.
    assert!((6..=30).contains(&starts.len()), "{starts:?}");
    assert_eq!(
        model["mixgraph"]["keyrange_num"].as_integer(),
        Some(starts.len() as i64)
    );
    assert_eq!(starts[0], 0);
    // The base's own layout, read again: the same starts.
    let base = out.join("work/base");
    let again = dir.path().join("again.toml");
    let rule = format!("sst:{}", base.display());
    let replay = out.join("work/replay.kvtrace");
    let o = kvlab(&[
        "model",
        "fit",
        replay.to_str().unwrap(),
        "--key-ranges",
        &rule,
        "-o",
        again.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "model fit failed:\n{stderr}");
    let refit: toml::Table = std::fs::read_to_string(&again).unwrap().parse().unwrap();
    assert_eq!(
        refit["kvlab"]["keyrange_starts"],
        model["kvlab"]["keyrange_starts"]
    );
    let doc = read_json(&out.join("fidelity.json"));
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains(&format!("compacted into {} SST files", starts.len())),
        "{notes}"
    );
    for name in ["replay", "prefix_dist", "prefix_random"] {
        let result = read_json(&out.join("runs").join(name).join("result.json"));
        assert_eq!(u(&result["runner"], "keys_not_found"), 0, "{name}");
    }
}

/// A trace of 0.4 s (a null-store run recorded: 20 000 requests at 50 000 ops/s): the
/// page counts its request rate in sub-second intervals and says so, its mean is the
/// requests over the trace's span (as `trace analyze` measures the span), and the page's
/// charts are drawn at a readable size in a laptop's window.
#[test]
fn fidelity_of_a_sub_second_trace_names_its_interval_and_reads_at_a_laptop_width() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("short.kvtrace");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=2000",
        "-p",
        "operationcount=20000",
        "--db",
        "null",
        "--target-rate",
        "50000",
        "--monitor",
        "off",
        "--progress",
        "never",
        "--record",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let analysis = dir.path().join("analysis");
    let o = kvlab(&[
        "trace",
        "analyze",
        trace.to_str().unwrap(),
        "--out",
        analysis.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let summary = read_json(&analysis.join("summary.json"));
    let span = summary["time_span_s"].as_f64().expect("a clock");
    assert!(span < 1.0, "{span} s");
    let out = dir.path().join("fidelity");
    let o = kvlab(&[
        "model",
        "fidelity",
        trace.to_str().unwrap(),
        "--db",
        "rocksdb",
        "--block-cache",
        "1MiB",
        "--workloads",
        "prefix_dist",
        "--out",
        out.to_str().unwrap(),
        "--html",
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "model fidelity failed:\n{stderr}");
    let requests = u(&read_json(&out.join("fidelity.json")), "requests") as f64;
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let line = page
        .split("<p>The trace's QPS over ")
        .nth(1)
        .and_then(|l| l.split("</p>").next())
        .expect("the QPS line");
    // `242 ms (5 ms intervals): mean 82645, peak … requests/s.`
    let interval = line
        .split(" (")
        .nth(1)
        .and_then(|l| l.split(" intervals").next())
        .expect(line);
    assert!(interval.ends_with(" ms"), "a sub-second interval: {line}");
    let mean: f64 = line
        .split("mean ")
        .nth(1)
        .and_then(|l| l.split(',').next())
        .and_then(|m| m.parse().ok())
        .expect(line);
    let want = requests / span;
    assert!(
        (mean - want).abs() < 0.01 * want,
        "mean {mean}, {requests} requests over {span} s"
    );
    assert!(
        page.contains(&format!("in {interval} intervals")),
        "the chart names it too"
    );
    if let Some(seen) = crate::common::browser::see(&out.join("index.html")) {
        seen.assert_readable("kvlab model fidelity --html");
    }
}

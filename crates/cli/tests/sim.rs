//! `kvlab sim` end to end: a workload as the input (`-P`), `--compare` with real moka
//! and redis-server runs, and one trace in every format kvlab reads, checked against
//! libcachesim 0.3.5's pinned miss counts.

use std::path::Path;

use serde_json::Value;

use crate::common::files::{shared_data, shared_data_or_skip};
use crate::common::servers::{call, redis};
use crate::common::{kvlab, ok, text};

fn json_rows(args: &[&str]) -> Vec<Value> {
    let out = ok(args);
    match serde_json::from_str(&out) {
        Ok(Value::Array(rows)) => rows,
        other => panic!("kvlab {args:?}: not a JSON array: {other:?}\n{out}"),
    }
}

/// (policy, cache_size, requests, misses, byte_misses) of each row.
fn counts(rows: &[Value]) -> Vec<(String, u64, u64, u64, u64)> {
    rows.iter()
        .map(|r| {
            let n = |f: &str| r[f].as_u64().unwrap_or_else(|| panic!("{f} in {r}"));
            (
                r["policy"].as_str().unwrap().to_string(),
                n("cache_size"),
                n("requests"),
                n("misses"),
                n("byte_misses"),
            )
        })
        .collect()
}

/// `kvlab sim -P X` simulates exactly the requests `kvlab run -P X --db null --record T`
/// records with the same seed: miss counts (and byte misses) equal, for a cache workload
/// and a YCSB one.
#[test]
fn synthetic_workloads_give_the_same_result_as_their_recorded_trace() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str]); 2] = [
        (
            "workloads/cache/kv-mixed-readheavy",
            &["-p", "cache.operations=50000"],
        ),
        ("workloads/ycsb/workloada", &["-p", "operationcount=5000"]),
    ];
    for (i, (workload, props)) in cases.iter().enumerate() {
        let trace = dir.path().join(format!("{i}.kvtrace"));
        let trace = trace.to_str().unwrap();
        ok(&[
            &["run", "-P", workload, "--db", "null", "--seed", "11"][..],
            props,
            &["--record", trace, "--progress", "never"],
        ]
        .concat());
        // The null store returns empty values; `sim -P` sizes a cache workload's reads
        // as their keys' values (checked below), so byte mode differs there.
        let modes: &[&[&str]] = if workload.contains("cache") {
            &[&[]]
        } else {
            &[&[], &["--bytes"]]
        };
        for mode in modes.iter().copied() {
            let sim = [
                "--policy",
                "lru,s3fifo,wtinylfu",
                "--size",
                "5%,25%",
                "--json",
            ];
            let recorded = json_rows(&[&["sim", trace][..], &sim, mode].concat());
            let generated = json_rows(
                &[
                    &["sim", "-P", workload, "--seed", "11"][..],
                    props,
                    &sim,
                    mode,
                ]
                .concat(),
            );
            assert_eq!(recorded.len(), 6);
            let shown = |rows: &[Value]| {
                let mut c = counts(rows);
                if workload.contains("cache") {
                    // Traced bytes differ (see above): compare the misses.
                    c.iter_mut().for_each(|c| c.4 = 0);
                }
                c
            };
            assert_eq!(
                shown(&recorded),
                shown(&generated),
                "{workload} {mode:?}: the recorded trace and the generated workload differ"
            );
            let lru = &counts(&recorded)[..2];
            assert!(lru.iter().all(|c| c.3 > 0 && c.3 < c.2), "{lru:?}");
        }
    }
    // Every key 16 bytes and every value 100: in byte mode each object weighs 116, so
    // 116 × N bytes must miss exactly as N objects (a read sized by its key alone, 16,
    // would not).
    let fixed = [
        "-P",
        "workloads/cache/kv-small-readheavy",
        "-p",
        "cache.key_size=fixed:16",
        "-p",
        "cache.value_size=fixed:100",
        "-p",
        "cache.operations=30000",
        "--seed",
        "5",
        "--policy",
        "lru,s3fifo",
        "--json",
    ];
    let obj = json_rows(&[&["sim"][..], &fixed, &["--size", "500,2000"]].concat());
    let byte = json_rows(&[&["sim"][..], &fixed, &["--bytes", "--size", "58000,232000"]].concat());
    let misses = |rows: &[Value]| -> Vec<u64> { counts(rows).iter().map(|c| c.3).collect() };
    assert_eq!(misses(&obj), misses(&byte));
    // --limit sets the operation count.
    let rows = json_rows(&[
        "sim",
        "-P",
        "workloads/ycsb/workloada",
        "--limit",
        "777",
        "--policy",
        "lru",
        "--size",
        "10",
        "--json",
    ]);
    assert_eq!(rows[0]["requests"], 777);
}

/// The matched row of a `--compare` run: (simulated hit ratio, measured hit ratio).
fn compared(rows: &[Value], policy: &str) -> (f64, f64) {
    let row = rows
        .iter()
        .find(|r| r["policy"] == policy && r.get("measured_hit_ratio").is_some())
        .unwrap_or_else(|| panic!("no {policy} row with a measured hit ratio in {rows:?}"));
    let sim = row["hit_ratio"].as_f64().unwrap();
    let miss = row["miss_ratio"].as_f64().unwrap();
    assert!((sim - (1.0 - miss)).abs() < 1e-12);
    (sim, row["measured_hit_ratio"].as_f64().unwrap())
}

/// A moka run's measured hit ratio is beside W-TinyLFU's simulated one on the trace the
/// run recorded, in byte mode at moka's capacity (moka weighs an entry as key + value
/// bytes, the trace's object size), and a redis-server's (maxmemory, allkeys-lru) beside
/// SampledLRU's (5 samples, Redis's default) in object mode at the number of keys the
/// server held. Measured (two runs): moka 0.6955 and 0.6964 against 0.6972 and 0.6982
/// (16 MiB); redis 0.7504 and 0.7499 against 0.7519 and 0.7512 (4 MB, 15 623–15 700
/// keys). The tolerance, 0.02, is ten times those differences;
/// what is left between them (moka's sketch aging and batched maintenance, Redis's
/// one-second LRU clock and its eviction pool) is in docs/simulation.md.
#[test]
fn compare_puts_moka_and_redis_hit_ratios_beside_the_simulated_ones() {
    let dir = tempfile::tempdir().unwrap();
    let workload = [
        "-P",
        "workloads/cache/kv-mixed-readheavy",
        "-p",
        "cache.operations=200000",
        "--seed",
        "1",
        "--progress",
        "never",
    ];
    let trace = dir.path().join("moka.kvtrace");
    let out = dir.path().join("moka");
    let (trace, out) = (trace.to_str().unwrap(), out.to_str().unwrap());
    ok(&[
        &[
            "run",
            "--db",
            "moka",
            "--cache-size",
            "16MiB",
            "--record",
            trace,
            "--out",
            out,
        ][..],
        &workload,
    ]
    .concat());
    let html = dir.path().join("page");
    let rows = json_rows(&[
        "sim",
        trace,
        "--bytes",
        "--policy",
        "wtinylfu,lru",
        "--size",
        "16MiB",
        "--compare",
        out,
        "--json",
        "--out",
        html.to_str().unwrap(),
        "--html",
    ]);
    let (sim, measured) = compared(&rows, "WTinyLFU");
    eprintln!("moka 16 MiB: measured {measured:.4}, W-TinyLFU {sim:.4}");
    assert!(
        (sim - measured).abs() < 0.02,
        "moka measured {measured}, W-TinyLFU simulated {sim}"
    );
    assert_eq!(rows[0]["measured_store"], "moka");
    assert_eq!(rows[0]["measured_cache_size_bytes"], 16 << 20);
    // The LRU row is not moka's policy: no measured fields.
    assert!(rows[1].get("measured_hit_ratio").is_none());
    let page = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(page.contains("moka (measured)") && page.contains("class=\"measured\""));

    let server = redis("maxmemory=4mb,maxmemory-policy=allkeys-lru");
    let url = format!("redis://{}", server.addr());
    let trace = dir.path().join("redis.kvtrace");
    let out = dir.path().join("redis");
    let (trace, out) = (trace.to_str().unwrap(), out.to_str().unwrap());
    ok(&[
        &[
            "run",
            "-P",
            "workloads/cache/kv-small-readheavy",
            "-p",
            "cache.keys=100000",
            "-p",
            "cache.key_size=fixed:16",
            "-p",
            "cache.value_size=fixed:100",
            "-p",
            "cache.lookaside=true",
            "--db",
            "redis",
            "--url",
            &url,
            "--record",
            trace,
            "--out",
            out,
        ][..],
        &workload[2..],
    ]
    .concat());
    // Equal keys and values: the server holds a steady number of them.
    let keys = call(&server, &["DBSIZE"]).as_int().unwrap().to_string();
    let rows = json_rows(&[
        "sim",
        trace,
        "--policy",
        "sampledlru",
        "--size",
        &keys,
        "--compare",
        out,
        "--json",
    ]);
    let (sim, measured) = compared(&rows, "SampledLRU");
    eprintln!("redis 4 MB, {keys} keys: measured {measured:.4}, SampledLRU {sim:.4}");
    assert!(
        (sim - measured).abs() < 0.02,
        "redis measured {measured}, SampledLRU simulated {sim} at {keys} keys"
    );
    assert_eq!(rows[0]["measured_store"], "redis");
}

/// `--compare` names what is wrong with a result directory.
#[test]
fn compare_explains_a_directory_without_a_result_or_hit_counts() {
    let dir = tempfile::tempdir().unwrap();
    let trace = shared_data("traces/libcachesim/cloudPhysicsIO.txt");
    let trace = trace.to_str().unwrap();
    let empty = dir.path().to_str().unwrap();
    let o = kvlab(&["sim", trace, "--size", "100", "--compare", empty]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no result.json"), "{err}");
    std::fs::write(
        dir.path().join("result.json"),
        r#"{"store": {"name": "moka"}, "results": {"ops": [{"name": "INSERT", "returns": {"OK": 5}}]}}"#,
    )
    .unwrap();
    let o = kvlab(&["sim", trace, "--size", "100", "--compare", empty]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no hit counts"), "{err}");
}

/// libcachesim 0.3.5's misses on cloudPhysicsIO (crates/cachesim/tests/
/// pinned_libcachesim.txt): `(mode, policy, size) -> misses`.
fn pinned(mode: &str, policy: &str, size: u64) -> u64 {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../cachesim/tests/pinned_libcachesim.txt"),
    )
    .unwrap();
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() == 6 && f[..4] == ["cloudPhysicsIO", mode, policy, &size.to_string()])
        .unwrap_or_else(|| panic!("cloudPhysicsIO {mode} {policy} {size} is not pinned"))[4]
        .parse()
        .unwrap()
}

/// One trace in every format kvlab reads it in — libCacheSim's own oracleGeneral, vscsi,
/// csv and txt copies, lcs, and `kvlab trace convert`'s kvtrace and Parquet — gives
/// libCacheSim's miss counts through `kvlab sim`: the same in object mode; in byte mode
/// each copy's own (libCacheSim's copies differ in sizes). The txt copy has no sizes, so
/// its byte miss ratio is its miss ratio (libCacheSim's objects of size 1).
#[test]
fn one_trace_in_every_format_gives_the_same_misses() {
    let dir = tempfile::tempdir().unwrap();
    let Some(og) = shared_data_or_skip("traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let og = og.to_str().unwrap();
    let mut sized: Vec<(String, Vec<String>)> = vec![
        (og.into(), vec![]),
        (
            shared_data("traces/libcachesim/cloudPhysicsIO.vscsi")
                .to_str()
                .unwrap()
                .into(),
            vec![],
        ),
        (
            shared_data("traces/derived/cloudPhysicsIO.lcs")
                .to_str()
                .unwrap()
                .into(),
            vec![],
        ),
        (
            shared_data("traces/libcachesim/cloudPhysicsIO.csv")
                .to_str()
                .unwrap()
                .into(),
            vec![
                "--csv-spec".into(),
                "time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, delimiter=,, has-header=true"
                    .into(),
            ],
        ),
    ];
    for ext in ["kvtrace", "parquet"] {
        let out = dir.path().join(format!("cloudPhysicsIO.{ext}"));
        ok(&["trace", "convert", og, out.to_str().unwrap()]);
        sized.push((out.to_str().unwrap().into(), vec![]));
    }
    let txt = shared_data("traces/libcachesim/cloudPhysicsIO.txt");
    let mut all = sized.clone();
    all.push((txt.to_str().unwrap().into(), vec![]));
    let expect_obj: Vec<u64> = [("LRU", 489), ("SLRU", 489), ("LRU", 4897), ("SLRU", 4897)]
        .iter()
        .map(|&(p, s)| pinned("obj", p, s))
        .collect();
    for (path, extra) in &all {
        let mut args: Vec<&str> = vec!["sim", path];
        args.extend(extra.iter().map(String::as_str));
        args.extend(["--policy", "lru,slru", "--size", "489,4897", "--json"]);
        let rows = json_rows(&args);
        let misses: Vec<u64> = rows.iter().map(|r| r["misses"].as_u64().unwrap()).collect();
        let mut by_policy_size = counts(&rows);
        by_policy_size.sort_by_key(|c| (c.1, c.0.clone()));
        let sorted: Vec<u64> = by_policy_size.iter().map(|c| c.3).collect();
        assert_eq!(sorted, expect_obj, "{path}: object mode (rows {misses:?})");
        if path.ends_with(".txt") {
            for r in &rows {
                assert_eq!(r["byte_miss_ratio"], r["miss_ratio"], "{path}: {r}");
            }
        }
    }
    // In byte mode the copies differ: libCacheSim's vscsi and csv copies carry other
    // sizes than its oracleGeneral one (lcs and the conversions are of oracleGeneral).
    // libcachesim 0.3.5 on the vscsi copy (`TraceType.VSCSI_TRACE`, cache_size
    // 20297697): LRU 0.8331811 (94876 misses), S3FIFO 0.8228713 (93702).
    let size = 20_297_697u64;
    let oracle_byte = [pinned("byte", "LRU", size), pinned("byte", "S3FIFO", size)];
    for (path, extra) in &sized {
        let mut args: Vec<&str> = vec!["sim", path];
        args.extend(extra.iter().map(String::as_str));
        let size = size.to_string();
        args.extend([
            "--bytes",
            "--policy",
            "lru,s3fifo",
            "--size",
            &size,
            "--json",
        ]);
        let rows = json_rows(&args);
        let misses: Vec<u64> = rows.iter().map(|r| r["misses"].as_u64().unwrap()).collect();
        let expect = if path.ends_with(".vscsi") || path.ends_with(".csv") {
            [94876, 93702]
        } else {
            oracle_byte
        };
        assert_eq!(misses, expect, "{path}: byte mode");
    }
}

//! `kvlab sim` end to end: a workload as the input (`-P`), `--compare` with real moka
//! and redis-server runs, and one trace in every format kvlab reads, checked against
//! libcachesim 0.3.5's pinned miss counts.

use std::path::Path;

use serde_json::Value;

use crate::common::files::{shared_data, shared_data_or_skip};
use crate::common::servers::{call, redis};
use crate::common::{self, kvlab, ok, text};

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

/// Writes an oracleGeneral file of `n` requests over about `objects` ids (sizes 1–97,
/// next-access times as libCacheSim's own files carry them, 1-based) and returns the
/// ids in order.
fn oracle_general_file(path: &Path, n: usize, objects: u64) -> Vec<u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut step = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let ids: Vec<u64> = (0..n)
        .map(|_| (step() % objects).min(step() % objects) * 31 + 5)
        .collect();
    let mut next = vec![-1i64; n];
    let mut seen = std::collections::HashMap::new();
    for i in (0..n).rev() {
        if let Some(&j) = seen.get(&ids[i]) {
            next[i] = j as i64 + 1;
        }
        seen.insert(ids[i], i);
    }
    let mut bytes = Vec::with_capacity(n * 24);
    for (i, &id) in ids.iter().enumerate() {
        bytes.extend_from_slice(&((i / 1000) as u32).to_le_bytes());
        bytes.extend_from_slice(&id.to_le_bytes());
        bytes.extend_from_slice(&((1 + id % 97) as u32).to_le_bytes());
        bytes.extend_from_slice(&next[i].to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
    ids
}

/// `kvlab sim FILE` streams a trace much longer than its block (64 Ki requests) and
/// gives the miss counts of the whole trace loaded in memory: every policy, object and
/// byte mode, Belady from the file's next-access times and, for the same ids as a txt
/// file (no next-access times), from a first pass to disk; the same from standard input.
#[test]
fn a_trace_longer_than_a_block_streams_to_the_whole_trace_results() {
    use kvlab_cachesim::{simulate_many, Capacity, LoadOptions, Mode, PolicySpec, SimOptions};
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("t.oracleGeneral.bin");
    let ids = oracle_general_file(&bin, 200_000, 20_000);
    let txt = dir.path().join("t.txt");
    let lines: String = ids.iter().map(|id| format!("{id}\n")).collect();
    std::fs::write(&txt, lines).unwrap();
    let policies = "LRU,FIFO,Sieve,S3FIFO,ARC,LIRS,Belady";
    for (file, mode, has_sizes) in [
        (&bin, "obj", true),
        (&bin, "byte", true),
        (&txt, "obj", false),
    ] {
        let file = file.to_str().unwrap();
        let args = [
            "sim",
            file,
            "--policy",
            policies,
            "--size",
            "1%,10%,777",
            "--mode",
            mode,
            "--json",
        ];
        let o = kvlab(&args);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        assert!(stderr.contains("streamed from"), "{stderr}");
        assert!(stderr.contains("4 blocks of up to 65536"), "{stderr}");
        if has_sizes {
            assert!(
                stderr.contains("Belady reads the next-access times"),
                "{stderr}"
            );
        } else {
            assert!(
                stderr.contains("next-access times Belady needs"),
                "{stderr}"
            );
        }
        let rows: Vec<Value> = serde_json::from_str(&stdout).unwrap();
        // The whole trace in memory, as before streaming.
        let mode = if mode == "byte" {
            Mode::Byte
        } else {
            Mode::Object
        };
        let trace = if has_sizes {
            let mut r = kvlab_trace::open(Path::new(file), &Default::default()).unwrap();
            kvlab_cachesim::SimTrace::from_reader(&mut *r, LoadOptions::default()).unwrap()
        } else {
            kvlab_cachesim::SimTrace::from_ids(ids.iter().copied())
        };
        let mut jobs = Vec::new();
        for p in policies.split(',') {
            for s in ["1%", "10%", "777"] {
                let c: Capacity = s.parse().unwrap();
                jobs.push((p.parse::<PolicySpec>().unwrap(), c.resolve(&trace, mode)));
            }
        }
        let opts = SimOptions {
            mode,
            op_aware: false,
        };
        let whole: Vec<(String, u64, u64, u64, u64)> = simulate_many(&trace, &jobs, opts, 0)
            .into_iter()
            .map(|r| {
                let r = r.unwrap();
                (r.policy, r.cache_size, r.requests, r.misses, r.byte_misses)
            })
            .collect();
        assert_eq!(counts(&rows), whole, "{file} {mode:?}");
        // From standard input (copied to a temporary file to be read twice).
        let mut from_stdin = args;
        from_stdin[1] = "-";
        let mut child = crate::common::kvlab_command(&from_stdin)
            .args([
                "--input-format",
                if has_sizes { "oracleGeneral" } else { "txt" },
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let bytes = std::fs::read(file).unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(&bytes)
        });
        let o = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        assert!(stderr.contains("standard input copied"), "{stderr}");
        let piped: Vec<Value> = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            counts(&piped),
            counts(&rows),
            "{file} {mode:?} from standard input"
        );
    }
}

/// `--shards-max-keys N` bounds the curve's sample; it is refused without --mrc and
/// beside --shards (exit 2, before any work).
#[test]
fn shards_with_a_fixed_sample_size_builds_a_curve_and_is_refused_where_it_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("t.oracleGeneral.bin");
    oracle_general_file(&bin, 100_000, 10_000);
    let file = bin.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let o = kvlab(&[
        "sim",
        file,
        "--size",
        "10%",
        "--mrc",
        "--shards-max-keys",
        "512",
        "--out",
        out,
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("SHARDS, at most 512 sampled objects"),
        "{stderr}"
    );
    let csv = std::fs::read_to_string(dir.path().join("out/mrc.csv")).unwrap();
    assert_eq!(csv.lines().count(), 101, "{csv}");
    let refusals: [(&[&str], &str); 3] = [
        (&["--shards-max-keys", "512"], "--shards-max-keys"),
        (
            &[
                "--mrc",
                "--out",
                out,
                "--shards",
                "0.1",
                "--shards-max-keys",
                "512",
            ],
            "give one of them",
        ),
        (
            &["--mrc", "--out", out, "--shards-max-keys", "0"],
            "at least 1",
        ),
    ];
    for (extra, says) in refusals {
        std::fs::remove_dir_all(dir.path().join("out")).ok();
        let o = kvlab(&[&["sim", file][..], extra].concat());
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("kvlab: error: "))
            .unwrap_or_else(|| panic!("no error line: {stderr}"));
        assert!(line.contains(says), "{says}: {stderr}");
        assert!(!dir.path().join("out").exists(), "refused before any work");
    }
}

/// A result directory as `kvlab run --db moka --out DIR` writes it, holding what
/// `--compare` reads: the store, its capacity and the gets' hits and misses.
fn moka_result(dir: &Path, capacity_bytes: u64, hits: u64, misses: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let doc = serde_json::json!({
        "store": {"name": "moka", "options": {"capacity_bytes": capacity_bytes}},
        "results": {"ops": [{"name": "READ", "returns": {"OK": hits, "NOT_FOUND": misses}}]},
    });
    std::fs::write(dir.join("result.json"), doc.to_string()).unwrap();
}

/// The `<title>` texts of the elements of `page` that open with `open`.
fn titles<'a>(page: &'a str, open: &str) -> Vec<&'a str> {
    page.match_indices(open)
        .filter_map(|(i, _)| {
            let rest = &page[i..];
            let start = rest.find("<title>")? + 7;
            Some(&rest[start..start + rest[start..].find("</title>")?])
        })
        .collect()
}

/// A run measured at one size is compared with the simulated row at that size only,
/// and drawn there only; when no simulated size is its size, the table and the page say
/// so and nothing is compared.
#[test]
fn compare_puts_a_measurement_only_at_the_size_it_was_measured_at() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("moka");
    let capacity: u64 = 2 << 20;
    moka_result(&run, capacity, 7_000, 3_000);
    let run = run.to_str().unwrap();
    let page_dir = dir.path().join("page");
    let sim = |sizes: &str, json: bool| {
        let mut args = vec![
            "sim",
            "-P",
            "workloads/cache/kv-mixed-readheavy",
            "-p",
            "cache.operations=20000",
            "--seed",
            "1",
            "--bytes",
            "--policy",
            "wtinylfu",
            "--size",
            sizes,
            "--compare",
            run,
            "--out",
            page_dir.to_str().unwrap(),
            "--html",
        ];
        if json {
            args.push("--json");
        }
        ok(&args)
    };
    let rows: Vec<Value> = serde_json::from_str(&sim("1MiB,2MiB,4MiB", true)).unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    let compared: Vec<u64> = rows
        .iter()
        .filter(|r| r.get("measured_hit_ratio").is_some())
        .map(|r| r["cache_size"].as_u64().unwrap())
        .collect();
    assert_eq!(compared, [capacity], "{rows:?}");
    let page = std::fs::read_to_string(page_dir.join("index.html")).unwrap();
    // One square, at the x of the simulated point of its size (the second of three).
    let squares = titles(&page, "<rect class=\"measured\"");
    assert_eq!(squares.len(), 1, "{squares:?}");
    let points = titles(&page, "<circle class=\"point\"");
    let x = |t: &str| {
        t.split(": ")
            .nth(1)
            .unwrap()
            .split(" → ")
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(points.len(), 3, "{points:?}");
    assert_eq!(x(squares[0]), x(points[1]), "{squares:?} {points:?}");
    assert!(squares[0].starts_with("moka (measured)"), "{squares:?}");
    if let Some(seen) = common::browser::see(&page_dir.join("index.html")) {
        seen.assert_readable("kvlab sim --compare --html");
    }
    // The text table: one comparison line, at the measured size.
    let table = sim("1MiB,2MiB,4MiB", false);
    let lines: Vec<&str> = table.lines().filter(|l| l.starts_with("moka ")).collect();
    assert_eq!(lines.len(), 1, "{table}");
    let cells: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(cells[4], capacity.to_string(), "the row's size: {table}");

    // No simulated size is the measured one: nothing compared, and the reader is told.
    let rows: Vec<Value> = serde_json::from_str(&sim("1MiB,4MiB", true)).unwrap();
    assert!(
        rows.iter().all(|r| r.get("measured_hit_ratio").is_none()),
        "{rows:?}"
    );
    let page = std::fs::read_to_string(page_dir.join("index.html")).unwrap();
    assert!(!page.contains("class=\"measured\""), "{page}");
    assert!(
        page.contains(&format!("measured at {capacity} bytes")),
        "{page}"
    );
    let table = sim("1MiB,4MiB", false);
    let line = table
        .lines()
        .find(|l| l.starts_with("moka "))
        .expect(&table);
    assert!(
        line.contains("not compared") && line.contains(&format!("--size {capacity}")),
        "{table}"
    );
}

/// `--mrc --html`: sizes on a logarithmic axis, so policies simulated at a few percent of
/// the working set are spread over the chart instead of crowded at its left edge beside
/// a curve that spans the whole working set; the exact curve is a dashed line without a
/// marker at each of its points.
#[test]
fn the_mrc_page_spreads_the_sizes_and_draws_the_curve_as_a_dashed_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mrc");
    ok(&[
        "sim",
        "-P",
        "workloads/cache/kv-mixed-readheavy",
        "-p",
        "cache.operations=20000",
        "--seed",
        "1",
        "--policy",
        "lru,s3fifo",
        "--size",
        "1%,2%,5%,10%",
        "--mrc",
        "--out",
        out.to_str().unwrap(),
        "--html",
    ]);
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let curve = page
        .split("<path class=\"series\"")
        .skip(1)
        .find(|p| p.contains("<title>LRU (exact curve)</title>"))
        .expect("the exact curve is drawn");
    assert!(curve.contains("stroke-dasharray"), "dashed: {curve}");
    let markers = titles(&page, "<circle class=\"point\"");
    assert!(
        !markers.iter().any(|t| t.starts_with("LRU (exact curve)")),
        "a marker on the curve: {markers:?}"
    );
    assert_eq!(markers.len(), 8, "2 policies × 4 sizes: {markers:?}");
    // The simulated points span most of the plotted width.
    let attr = |el: &str, name: &str| -> f64 {
        let i = el.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        el[i..].split('"').next().unwrap().parse().unwrap()
    };
    let plot = page
        .split("<rect class=\"plot\"")
        .nth(1)
        .expect("a plotted area");
    let width = attr(plot, "width");
    let xs: Vec<f64> = page
        .split("<circle class=\"point\"")
        .skip(1)
        .map(|c| attr(c, "cx"))
        .collect();
    let spread =
        xs.iter().copied().fold(f64::MIN, f64::max) - xs.iter().copied().fold(f64::MAX, f64::min);
    assert!(
        spread > 0.4 * width,
        "points span {spread:.0} of {width:.0} pixels: {xs:?}"
    );
    if let Some(seen) = common::browser::see(&out.join("index.html")) {
        seen.assert_readable("kvlab sim --mrc --html");
    }
}

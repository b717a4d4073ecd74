//! Traces end to end: `--record`, `kvlab replay`, `kvlab trace`, `kvlab sim` and the
//! mixgraph workload, checked against real redis-server processes (their `INFO
//! commandstats`), Debian's db_bench (its own traces of mixgraph) and published figures.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use kvlab_spawn::ServerKind;

use crate::common::files::{
    csv_column, read_json, result_doc, result_json, rocksdb_trace, shared_data_or_skip,
};
use crate::common::servers::{
    call, calls, info, info_stat, memcached_reply, memcached_stat, redis, start,
};
use crate::common::{kvlab, kvlab_command, ok, report_u64, text};

/// `kvlab replay TRACE` into store `db` at `url`, as fast as it can, without progress,
/// then `extra`.
fn replay_to<'a>(trace: &'a Path, db: &'a str, url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let trace = trace.to_str().unwrap();
    let mut args = vec![
        "replay",
        trace,
        "--db",
        db,
        "--url",
        url,
        "--speed",
        "max",
        "--progress",
        "never",
    ];
    args.extend_from_slice(extra);
    args
}

/// [`replay_to`] the redis-server at `url`, string model.
fn replay_to_redis<'a>(trace: &'a Path, url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = replay_to(trace, "redis", url, &["-p", "redis.model=string"]);
    args.extend_from_slice(extra);
    args
}

/// A recorded run, replayed against a fresh server, sends the same commands as the run
/// did: the servers' own counters agree.
#[test]
fn a_recorded_run_replays_as_the_same_commands() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.kvtrace");
    let first = redis("");
    let url = format!("redis://{}", first.addr());
    ok(&[
        "run",
        "--db",
        "redis",
        "--url",
        &url,
        "-p",
        "redis.model=string",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=4000",
        "-p",
        "readproportion=0.6",
        "-p",
        "updateproportion=0",
        "-p",
        "insertproportion=0.4",
        "-p",
        "fieldcount=1",
        "-p",
        "fieldlength=20",
        "--threads",
        "2",
        "--record",
        trace.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let (gets, sets) = (calls(&first, "get"), calls(&first, "set"));
    assert!(gets > 1000 && sets > 1000, "gets {gets}, sets {sets}");
    // The trace holds the measured phase: 4000 requests, reads and inserts.
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "stats", trace.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(stats["requests"], 4000);
    let ops = &stats["ops"];
    let (reads, inserts) = (
        ops["get"].as_u64().unwrap(),
        ops["insert"].as_u64().unwrap(),
    );
    assert_eq!(reads + inserts, 4000);
    assert_eq!(sets, inserts, "SETs = traced inserts");
    assert_eq!(gets, reads);

    let second = redis("");
    let url2 = format!("redis://{}", second.addr());
    ok(&replay_to_redis(&trace, &url2, &["--threads", "3"]));
    assert_eq!(calls(&second, "get"), reads, "replayed GETs");
    assert_eq!(calls(&second, "set"), inserts, "replayed SETs");
}

/// Several clients keep each key's requests in the trace's order: every key's last
/// write (the largest value) is what the server holds at the end — with several
/// threads and pipelined requests, and with several connections per thread too.
#[test]
fn replay_keeps_each_keys_order_with_several_clients() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("order.twitter.csv");
    let mut text_trace = String::new();
    let mut ts = 0;
    for round in 1..=20u32 {
        for key in 0..50u32 {
            ts += 1;
            text_trace.push_str(&format!("{ts},k{key},3,{},1,set,0\n", round * 10 + key % 7));
        }
    }
    std::fs::write(&trace, text_trace).unwrap();
    let layouts: [(&[&str], u64); 2] = [
        (&["--threads", "4", "--pipeline", "8"], 4),
        (
            &["--threads", "2", "--connections", "3", "--pipeline", "4"],
            6,
        ),
    ];
    for (layout, clients) in layouts {
        let server = redis("");
        let url = format!("redis://{}", server.addr());
        ok(&replay_to_redis(
            &trace,
            &url,
            &[&["--input-format", "twitter"][..], layout].concat(),
        ));
        // Every client had a connection of its own: the server counted at least one
        // more than the clients (kvlab's statistics queries and this INFO).
        let connections = info_stat(&info(&server, "stats"), "total_connections_received");
        assert!(connections > Some(clients), "{layout:?}: {connections:?}");
        assert_eq!(calls(&server, "set"), 1000, "{layout:?}");
        for key in 0..50u32 {
            let len = call(&server, &["STRLEN", &format!("k{key}")])
                .as_int()
                .unwrap();
            assert_eq!(
                len,
                i64::from(200 + key % 7),
                "{layout:?}: k{key} holds its last write"
            );
        }
    }
}

/// A trace piped into `kvlab replay -` is read once, as the replay goes: every request
/// reaches the server, and the result counts them; `--preload`, which would read it
/// twice, is refused.
#[test]
fn a_trace_on_standard_input_replays() {
    use std::io::Write;
    use std::process::Stdio;
    let mut text_trace = String::new();
    for i in 0..3000u32 {
        let op = if i % 3 == 0 { "set" } else { "get" };
        text_trace.push_str(&format!("{},k{},3,20,1,{op},0\n", i / 100, i % 211));
    }
    let server = redis("");
    let url = format!("redis://{}", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let replay = |extra: &[&str]| {
        let mut child = kvlab_command(&[
            "replay",
            "-",
            "--input-format",
            "twitter",
            "--db",
            "redis",
            "--url",
            &url,
            "-p",
            "redis.model=string",
            "--threads",
            "2",
            "--progress",
            "never",
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        // A refused command may exit before it reads: a broken pipe is its answer.
        let _ = child.stdin.take().unwrap().write_all(text_trace.as_bytes());
        child.wait_with_output().unwrap()
    };
    let o = replay(&["--speed", "10", "--out", out.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!((calls(&server, "set"), calls(&server, "get")), (1000, 2000));
    let result = result_json(&out);
    assert_eq!(result["workload"]["trace.requests"], "3000", "{result}");
    // 100 requests a traced second at speed 10: 1 000 due in each second of the replay.
    let csv = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let due: u64 = csv_column::<u64>(&csv, "intended_ops").iter().sum();
    assert_eq!(due, 3000, "{csv}");

    let o = replay(&["--preload"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not `-`"), "{err}");
}

/// `--preload` is a pass of its own before the replay's: it loads the keys read before
/// written, so every traced read hits, and its counts are the result's (every request
/// due once in the timeline, all of them in `trace.requests`).
#[test]
fn a_preloaded_replay_hits_and_counts_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("pre.twitter.csv");
    let mut text_trace = String::new();
    // 2 000 requests over 2 traced seconds: keys k0..k99 are read first, then set.
    for i in 0..2000u32 {
        let op = if i < 1000 { "get" } else { "set" };
        text_trace.push_str(&format!("{},k{},3,16,1,{op},0\n", i / 1000, i % 100));
    }
    std::fs::write(&trace, text_trace).unwrap();
    let server = redis("");
    let url = format!("redis://{}", server.addr());
    let out = dir.path().join("out");
    ok(&[
        "replay",
        trace.to_str().unwrap(),
        "--input-format",
        "twitter",
        "--preload",
        "--speed",
        "4",
        "--db",
        "redis",
        "--url",
        &url,
        "-p",
        "redis.model=string",
        "--out",
        out.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(
        (calls(&server, "set"), calls(&server, "get")),
        (100 + 1000, 1000)
    );
    let info = call(&server, &["INFO", "stats"]);
    assert!(info.as_str().unwrap().contains("keyspace_misses:0\r\n"));
    let result = result_json(&out);
    assert_eq!(result["workload"]["trace.requests"], "2000", "{result}");
    let csv = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let due: Vec<u64> = csv_column(&csv, "intended_ops");
    // Speed 4: the 1 000 requests of traced second 1 are due 0.25 s in, all in the
    // first reporting second.
    assert_eq!(due.iter().sum::<u64>(), 2000, "{csv}");
    assert_eq!(due[0], 2000, "{csv}");
}

/// `--record` of db_bench's mixgraph flags on the null store lists the same
/// (key, op, column family, value size) lines as RocksDB's dump of the trace db_bench
/// itself writes — one thread in order, two threads as the same lines interleaved.
#[test]
fn mixgraph_records_what_db_bench_traces() {
    let flags = [
        "num=50000",
        "key_size=48",
        "key_dist_a=0.002312",
        "key_dist_b=0.3467",
        "keyrange_num=30",
        "keyrange_dist_a=14.18",
        "keyrange_dist_b=-2.917",
        "keyrange_dist_c=0.0164",
        "keyrange_dist_d=-0.08082",
        "mix_get_ratio=0.85",
        "mix_put_ratio=0.14",
        "mix_seek_ratio=0.01",
        "reads=1500",
    ];
    for (seed, threads) in [("5", "1"), ("11", "2")] {
        let dir = tempfile::tempdir().unwrap();
        let db_trace = dir.path().join("db_bench.trace");
        let mut cmd = Command::new("db_bench");
        cmd.arg("--benchmarks=mixgraph")
            .arg(format!("-seed={seed}"))
            .arg(format!("-threads={threads}"))
            .arg(format!("-db={}", dir.path().join("db").display()))
            .arg(format!("-trace_file={}", db_trace.display()));
        for f in flags {
            cmd.arg(format!("-{f}"));
        }
        let out = cmd
            .output()
            .expect("db_bench runs (Debian's rocksdb-tools)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = dir.path().join("kvlab.kvtrace");
        let mut args = vec!["run", "--db", "null", "-p", "workload=kvlab.mixgraph"];
        let seed_prop = format!("seed={seed}");
        args.extend(["-p", &seed_prop]);
        for f in &flags {
            args.extend(["-p", f]);
        }
        let ours_s = ours.to_str().unwrap().to_string();
        args.extend([
            "--threads",
            threads,
            "--record",
            &ours_s,
            "--progress",
            "never",
        ]);
        ok(&args);
        let lines = |path: &Path| -> Vec<String> {
            let dump = ok(&[
                "trace",
                "dump",
                path.to_str().unwrap(),
                "--format",
                "rocksdb-human",
            ]);
            let mut v: Vec<String> = dump
                .lines()
                .map(|l| l.split(' ').take(4).collect::<Vec<_>>().join(" "))
                .collect();
            if threads != "1" {
                v.sort();
            }
            v
        };
        let (theirs, mine) = (lines(&db_trace), lines(&ours));
        let reads: usize = 1500 * threads.parse::<usize>().unwrap();
        assert_eq!(theirs.len(), reads, "db_bench traced every operation");
        assert!(
            theirs == mine,
            "seed {seed}, {threads} threads: kvlab's lines differ"
        );
    }
}

/// `trace stats --json` and `sim --json` keep the field names scripts read, and the
/// simulated LRU and ARC hit ratios on the ARC paper's OLTP trace are the paper's
/// (Megiddo & Modha, FAST'03, Table IV: c = 1000 → LRU 32.83 %, ARC 38.93 %).
#[test]
fn stats_and_sim_json_and_the_arc_papers_figures() {
    let Some(vscsi) = shared_data_or_skip("traces/libcachesim/cloudPhysicsIO.vscsi") else {
        return;
    };
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "stats", vscsi.to_str().unwrap(), "--json"])).unwrap();
    for field in [
        "requests",
        "distinct_keys",
        "bytes",
        "ops",
        "first_ts",
        "last_ts",
        "format",
    ] {
        assert!(stats.get(field).is_some(), "trace stats has {field}");
    }
    assert_eq!(
        (stats["requests"].as_u64(), stats["distinct_keys"].as_u64()),
        (Some(113_872), Some(48_974))
    );
    let Some(oltp) = shared_data_or_skip("traces/arc/OLTP.lis.zst") else {
        return;
    };
    let out = ok(&[
        "sim",
        oltp.to_str().unwrap(),
        "--policy",
        "lru,arc",
        "--size",
        "1000",
        "--json",
    ]);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let hit = |policy: &str| {
        let r = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["policy"] == policy)
            .unwrap();
        for field in [
            "cache_size",
            "mode",
            "requests",
            "misses",
            "miss_ratio",
            "byte_misses",
            "byte_miss_ratio",
            "seconds",
        ] {
            assert!(r.get(field).is_some(), "sim --json has {field}");
        }
        assert_eq!(r["cache_size"], 1000);
        1.0 - r["miss_ratio"].as_f64().unwrap()
    };
    assert!((hit("LRU") - 0.3283).abs() < 0.0005, "LRU {}", hit("LRU"));
    assert!((hit("ARC") - 0.3893).abs() < 0.0010, "ARC {}", hit("ARC"));
}

/// `trace analyze --key-ranges`: the key ranges in keyranges.csv and keyranges.json,
/// their boundaries on the page's locality charts, summary.json's fields kept, and the
/// same figures per column family (here the Twitter trace's client id); `none` draws
/// none, and a rule it cannot read is a usage error.
#[test]
fn analyze_cuts_key_ranges_and_draws_their_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("cfs.twitter.csv");
    let mut text_trace = String::new();
    // Client (column family) 1: a000..a059 read twice; client 2: b000..b029 set once.
    for round in 0..2 {
        for k in 0..60 {
            text_trace.push_str(&format!("{round},a{k:03},4,10,1,get,0\n"));
        }
    }
    for k in 0..30 {
        text_trace.push_str(&format!("2,b{k:03},4,10,2,set,0\n"));
    }
    std::fs::write(&trace, text_trace).unwrap();
    let analyze = |rule: &str, out: &Path| {
        kvlab(&[
            "trace",
            "analyze",
            trace.to_str().unwrap(),
            "--input-format",
            "twitter",
            "--key-ranges",
            rule,
            "--html",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let out = dir.path().join("three");
    let o = analyze("ranges:3", &out);
    assert!(o.status.success(), "{:?}", text(&o));
    let summary = read_json(&out.join("summary.json"));
    for field in [
        "requests",
        "objects",
        "compulsory_miss_ratio",
        "one_hit_objects",
        "x_hit",
        "zipf_alpha",
        "zipf_r2",
        "top_frequencies",
    ] {
        assert!(summary.get(field).is_some(), "summary.json has {field}");
    }
    assert_eq!(
        (summary["requests"].as_u64(), summary["objects"].as_u64()),
        (Some(150), Some(90))
    );
    let csv = std::fs::read_to_string(out.join("keyranges.csv")).unwrap();
    assert_eq!(
        csv,
        "range,first_rank,first_key,last_key,keys,requests,share\n\
         0,0,a000,a029,30,60,0.4\n1,30,a030,a059,30,60,0.4\n2,60,b000,b029,30,30,0.2\n"
    );
    let json = read_json(&out.join("keyranges.json"));
    assert_eq!(json["rule"], "ranges:3");
    assert_eq!(json["ranges"][2]["first_key"], "b000");
    // Each client (column family) on its own: its keys, ranges and requests.
    let cf2 = std::fs::read_to_string(out.join("keyranges.cf2.csv")).unwrap();
    let third = 1.0 / 3.0;
    assert_eq!(
        cf2,
        format!(
            "range,first_rank,first_key,last_key,keys,requests,share\n\
             0,0,b000,b009,10,10,{third}\n1,10,b010,b019,10,10,{third}\n\
             2,20,b020,b029,10,10,{third}\n"
        )
    );
    let heat1 = std::fs::read_to_string(out.join("heatmap.cf1.csv")).unwrap();
    assert_eq!(heat1.lines().count(), 1 + 60, "{heat1}");
    assert!(
        heat1.lines().skip(1).all(|l| l.ends_with(",2,2,0,2")),
        "{heat1}"
    );
    let series2 = std::fs::read_to_string(out.join("time_series.cf2.csv")).unwrap();
    assert_eq!(
        csv_column::<u64>(&series2, "key_rank"),
        (0..30).collect::<Vec<_>>()
    );
    assert_eq!(json["column_families"][0]["cf"], 1);
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("Column family / tenant 2: 30 requests, 30 keys"));
    // All keys, then each of the two column families: a heatmap and a series each.
    assert_eq!(page.matches("<g class=\"keyranges\"").count(), 3 * 2);

    let none = dir.path().join("none");
    let o = analyze("none", &none);
    assert!(o.status.success(), "{:?}", text(&o));
    let csv = std::fs::read_to_string(none.join("keyranges.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1, "{csv}");
    let page = std::fs::read_to_string(none.join("index.html")).unwrap();
    assert!(!page.contains("class=\"keyranges\""));

    let o = analyze("keys:0", &dir.path().join("bad"));
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("keys:N"), "{err}");
}

/// A trace that is cut short is named with the byte offset of the damage.
#[test]
fn a_cut_trace_is_named_with_its_offset() {
    let Some(src) = shared_data_or_skip("traces/rocksdb/mergerandom.trace") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.trace");
    let bytes = std::fs::read(src).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2 + 5]).unwrap();
    let o = kvlab(&["trace", "stats", cut.to_str().unwrap(), "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(stats["damaged_at"].as_u64().is_some(), "{out}");
    assert!(err.contains("damaged at byte"), "{err}");
}

/// A text trace with a bad line: `trace stats` gives the figures before it and warns
/// with the file and line; the commands that need the whole trace fail naming them; a
/// missing file is named once, with the system's reason once, and exits 2 in every
/// command that reads one.
#[test]
fn a_bad_line_is_named_and_a_missing_trace_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("bad.twitter.csv");
    std::fs::write(
        &csv,
        "1,k1,3,40,1,get,0\n2,k2,3,40,1,get,0\n3,k3,3\n4,k4,3,40,1,get,0\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap();
    let o = kvlab(&["trace", "stats", csv, "--input-format", "twitter", "--json"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["requests"], 2, "{out}");
    assert!(
        stats["damage"].as_str().is_some_and(|d| d.ends_with(
            "bad.twitter.csv:3: `timestamp,key,key_size,value_size,client_id,op,ttl` expected"
        )),
        "{out}"
    );
    assert!(
        err.contains("bad.twitter.csv:3: `timestamp,key,key_size,value_size,client_id,op,ttl` expected: the figures cover the 2 requests before it"),
        "{err}"
    );
    let model = dir.path().join("m.toml");
    let o = kvlab(&[
        "model",
        "fit",
        csv,
        "--input-format",
        "twitter",
        "-o",
        model.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("bad.twitter.csv:3:").count(), 1, "{err}");

    // A missing input file is a usage error (exit code 2) whichever command names it,
    // as a missing property file is for `run -P`: nothing has run yet.
    let missing = dir.path().join("missing.trace");
    let m = missing.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let model = model.to_str().unwrap();
    let commands: [&[&str]; 13] = [
        &["trace", "stats", m],
        &["trace", "dump", m],
        &["trace", "analyze", m, "--out", out],
        &["trace", "convert", m, &format!("{out}.kvtrace")],
        &["sim", m, "--policy", "lru", "--size", "10"],
        &["model", "fit", m, "-o", model],
        &["model", "fidelity", m, "--out", out],
        &["replay", m, "--db", "null"],
        &["run", "--model", m, "--db", "null"],
        &["run", "-P", m, "--db", "null"],
        &["import", m, "--db", "null", "--key-fields", "1"],
        &["verify", "--keys", m, "--db", "null"],
        &["report", m],
    ];
    for args in commands {
        let o = kvlab(args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("missing.trace"), "{args:?}: {err}");
        assert_eq!(
            err.matches("No such file or directory").count(),
            1,
            "{args:?}: {err}"
        );
    }
}

/// A kvtrace of many blocks, decoded ahead on threads, reads the same from a file and
/// from standard input; a reader closed early (`trace dump | head`) stops the command.
#[test]
fn a_kvtrace_of_many_blocks_reads_from_a_file_and_standard_input() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let Some(src) = shared_data_or_skip("traces/arc/OLTP.lis.zst") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kv = dir.path().join("oltp.kvtrace");
    ok(&[
        "trace",
        "convert",
        src.to_str().unwrap(),
        kv.to_str().unwrap(),
    ]);
    let from_file = trace_stats(&kv);
    assert_eq!(from_file["requests"], 914_145, "{from_file}");
    let mut child = kvlab_command(&["trace", "stats", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&kv).unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let from_stdin: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(from_stdin, from_file);

    let mut child = kvlab_command(&["trace", "dump", kv.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "trace dump outlives its reader"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `kvlab db_bench` takes db_bench's mixgraph command line and prints its summary line;
/// other benchmarks are refused by name (usage error, exit code 2).
#[test]
fn db_bench_command_lines_run_mixgraph_and_refuse_the_rest() {
    let out = ok(&[
        "db_bench",
        "--kvlab-db",
        "null",
        "--benchmarks=mixgraph",
        "--num=10000",
        "--mix_get_ratio=0.5",
        "--mix_put_ratio=0.5",
        "--mix_seek_ratio=0",
        "--reads=3000",
        "--seed=3",
        "--threads=2",
    ]);
    let line = out.lines().next().unwrap();
    assert!(line.starts_with("mixgraph     :"), "{line}");
    assert!(line.contains(" 6000 operations;"), "{line}");
    let o = kvlab(&["db_bench", "--benchmarks=fillrandom", "--db=/nonexistent"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--benchmarks=fillrandom"), "{err}");

    // db_bench's RocksDB tuning flags open the database as db_bench would.
    let dir = tempfile::tempdir().unwrap();
    let (db, out) = (dir.path().join("db"), dir.path().join("out"));
    let db_flag = format!("--db={}", db.display());
    ok(&[
        "db_bench",
        "--kvlab-out",
        out.to_str().unwrap(),
        "--benchmarks=mixgraph",
        "--num=1000",
        "--reads=200",
        "--cache_size=16777216",
        "--bloom_bits=-1",
        "--compression_type=none",
        "--disable_wal=1",
        "--enable_pipelined_write=true",
        "--write_buffer_size=8388608",
        &db_flag,
    ]);
    let options = &read_json(&out.join("result.json"))["store"]["options"];
    for (key, value) in [
        ("block_cache_size_bytes", serde_json::json!(16777216)),
        ("bloom_bits", serde_json::json!(0)),
        ("compression", serde_json::json!("none")),
        ("wal", serde_json::json!("false")),
        ("pipelined_write", serde_json::json!("true")),
    ] {
        assert_eq!(options[key], value, "{key} in {options}");
    }
    let o = kvlab(&[
        "db_bench",
        "--benchmarks=mixgraph",
        "--cache_size=-1",
        &db_flag,
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("-cache_size=-1: kvlab's RocksDB store always has a block cache; give its size in bytes"),
        "{err}"
    );
}

/// `model fit` writes the mixgraph flag names scripts read, `run --model` runs the
/// model, and a bad model file is a usage error naming the key.
#[test]
fn model_fit_writes_mixgraph_flags_and_run_model_runs_them() {
    let Some(trace) = shared_data_or_skip("traces/rocksdb/mixgraph.trace") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.toml");
    ok(&[
        "model",
        "fit",
        trace.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
    ]);
    let written = std::fs::read_to_string(&model).unwrap();
    let doc: toml::Value = toml::from_str(&written).unwrap();
    let mg = &doc["mixgraph"];
    for key in [
        "mix_get_ratio",
        "mix_put_ratio",
        "mix_seek_ratio",
        "key_dist_a",
        "key_dist_b",
        "keyrange_num",
        "value_k",
        "value_sigma",
        "value_theta",
    ] {
        assert!(mg.get(key).is_some(), "model has {key}:\n{written}");
    }
    // db_bench's trace was 60 % gets, 30 % puts, 10 % seeks.
    let get = mg["mix_get_ratio"].as_float().unwrap();
    assert!((get - 0.6).abs() < 0.01, "{get}");
    let out = ok(&[
        "run",
        "--model",
        model.to_str().unwrap(),
        "--db",
        "null",
        "-p",
        "reads=2000",
        "--progress",
        "never",
    ]);
    assert!(out.contains("[READ], Operations,"), "{out}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, written.replace("mix_get_ratio", "mix_gett_ratio")).unwrap();
    let o = kvlab(&["run", "--model", bad.to_str().unwrap(), "--db", "null"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("mix_gett_ratio"), "{err}");
}

/// A timed replay's timeline has, beside what completed in each interval, what the
/// trace's timestamps made due in it: a run recorded at 1 000 operations a second
/// replays at speed 1 with ~1 000 due and done per second, and at speed 2 with ~2 000.
#[test]
fn a_timed_replay_shows_the_intended_rate_beside_the_achieved() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("paced.kvtrace");
    ok(&[
        "run",
        "-P",
        "workloads/ycsb/workloadc",
        "--db",
        "null",
        "--target-rate",
        "1000",
        "--duration",
        "3s",
        "--record",
        trace.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "stats", trace.to_str().unwrap(), "--json"])).unwrap();
    let requests = stats["requests"].as_u64().unwrap();
    for speed in [1u64, 2] {
        let out = dir.path().join(format!("replay-{speed}"));
        ok(&[
            "replay",
            trace.to_str().unwrap(),
            "--db",
            "null",
            "--speed",
            &speed.to_string(),
            "--out",
            out.to_str().unwrap(),
            "--progress",
            "never",
        ]);
        let csv = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
        let done: Vec<u64> = csv_column(&csv, "operations");
        let due: Vec<u64> = csv_column(&csv, "intended_ops");
        let interval_s: Vec<f64> = csv_column(&csv, "interval_s");
        let rows: Vec<(u64, u64, f64)> = (done.into_iter().zip(due).zip(interval_s))
            .map(|((done, due), interval_s)| (done, due, interval_s))
            .collect();
        assert_eq!(
            rows.iter().map(|r| r.1).sum::<u64>(),
            requests,
            "speed {speed}: every traced request is due once: {rows:?}"
        );
        for &(done, due, interval_s) in &rows {
            if interval_s < 0.9 {
                continue;
            }
            let rate = 1000 * speed;
            assert!(due.abs_diff(rate) <= rate / 10, "speed {speed}: {rows:?}");
            // Done keeps up with due, within what a loaded 2-core machine allows.
            assert!(done.abs_diff(due) <= rate / 5, "speed {speed}: {rows:?}");
        }
    }
}

/// A RocksDB trace's MultiGets (db_bench `multireadrandom`: 1 000 MultiGets of its
/// default batch of 8 keys) replay as one multi-key read each on a store that has them:
/// redis-server counts 1 000 MGETs and 8 000 keys looked up (all missing).
#[test]
fn multigets_replay_as_multi_key_reads() {
    let Some(trace) = shared_data_or_skip("traces/rocksdb/multireadrandom.trace") else {
        return;
    };
    let server = redis("");
    let url = format!("redis://{}", server.addr());
    ok(&replay_to_redis(&trace, &url, &["--threads", "2"]));
    assert_eq!(calls(&server, "mget"), 1000);
    assert_eq!(calls(&server, "get"), 0);
    let info = call(&server, &["INFO", "stats"]);
    let misses: u64 = info
        .as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("keyspace_misses:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(misses, 8000);
}

/// `kvlab memtier --record` records what it sent: as many requests as the server
/// counted, sets and gets apart.
#[test]
fn memtier_records_what_it_sent() {
    let server = redis("");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("memtier.kvtrace");
    let port = server.port().to_string();
    let o = kvlab(&[
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "500",
        "--ratio",
        "1:3",
        "--hide-histogram",
        "--record",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let stats: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "stats", trace.to_str().unwrap(), "--json"])).unwrap();
    let (sets, gets) = (calls(&server, "set"), calls(&server, "get"));
    assert_eq!(sets + gets, 1000, "2 clients × 500 requests");
    assert_eq!(stats["requests"], 1000, "{stats:#}");
    let ops = &stats["ops"];
    let recorded_gets = ops["get"].as_u64().unwrap_or(0);
    assert_eq!(recorded_gets, gets, "{ops:#}");
    assert_eq!(1000 - recorded_gets, sets, "{ops:#}");
}

/// `trace stats --json` of a trace file, parsed.
fn trace_stats(trace: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["trace", "stats", trace.to_str().unwrap(), "--json"])).unwrap()
}

/// Requests per key of a trace, from its `trace dump --format rocksdb-human` lines
/// (`0x<KEY HEX> <type> <cf> <value size> <µs>`).
fn requests_per_key(trace: &Path) -> HashMap<String, u64> {
    let dumped = ok(&[
        "trace",
        "dump",
        trace.to_str().unwrap(),
        "--format",
        "rocksdb-human",
    ]);
    let mut per_key = HashMap::new();
    for line in dumped.lines() {
        let key = line.split(' ').next().unwrap().to_string();
        *per_key.entry(key).or_insert(0) += 1;
    }
    per_key
}

/// `load --record` records the load's inserts, one per record, on every client.
#[test]
fn a_recorded_load_holds_its_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let (db, trace) = (dir.path().join("db"), dir.path().join("load.kvtrace"));
    ok(&[
        "load",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "-p",
        "recordcount=700",
        "--threads",
        "2",
        "--record",
        trace.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let stats = trace_stats(&trace);
    assert_eq!(stats["format"], "kvtrace", "{stats}");
    assert_eq!(stats["requests"], 700, "{stats}");
    assert_eq!(stats["distinct_keys"], 700, "{stats}");
    assert_eq!(
        stats["ops"],
        serde_json::json!({ "insert": 700 }),
        "{stats}"
    );
    // The load's own keys: YCSB's `user` keys.
    let keys = requests_per_key(&trace);
    let user = format!(
        "0x{}",
        "user"
            .bytes()
            .map(|b| format!("{b:02X}"))
            .collect::<String>()
    );
    assert!(keys.keys().all(|k| k.starts_with(&user)), "{keys:?}");
}

/// `--record-sample` keeps a fraction of the keys chosen by the key alone: every
/// request of a kept key, the same keys in a second run of the same seed, and — in a
/// run of another seed — every key that run shares with the first is kept or left out
/// as it was there; the result counts the requests left out.
#[test]
fn record_sample_keeps_the_same_keys_in_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let record = |name: &str, seed: &str, sample: &str| {
        let (trace, out) = (
            dir.path().join(format!("{name}.kvtrace")),
            dir.path().join(name),
        );
        ok(&[
            "run",
            "-P",
            "workloads/ycsb/workloada",
            "--db",
            "null",
            "-p",
            "recordcount=2000",
            "-p",
            "operationcount=6000",
            "--seed",
            seed,
            "--record",
            trace.to_str().unwrap(),
            "--record-sample",
            sample,
            "--out",
            out.to_str().unwrap(),
            "--progress",
            "never",
        ]);
        (requests_per_key(&trace), result_doc(&out).notes)
    };
    let (all, _) = record("all", "5", "1");
    assert_eq!(all.values().sum::<u64>(), 6000);
    let (kept, notes) = record("kept", "5", "0.25");
    let (again, _) = record("again", "5", "0.25");
    let (other_seed, _) = record("other", "9", "0.25");
    assert_eq!(kept, again, "the same keys and requests with the same seed");
    for (key, n) in &kept {
        assert_eq!(all.get(key), Some(n), "every request of kept key {key}");
    }
    let share = kept.len() as f64 / all.len() as f64;
    assert!(
        (0.15..0.35).contains(&share),
        "{share}: {} of {}",
        kept.len(),
        all.len()
    );
    let left_out = 6000 - kept.values().sum::<u64>();
    let note = format!("; {left_out} left out by --record-sample");
    assert!(
        notes.iter().any(|n| n.contains(&note)),
        "{note} in {notes:?}"
    );
    let shared: Vec<&String> = other_seed.keys().filter(|k| all.contains_key(*k)).collect();
    assert!(shared.len() > 50, "{} keys in both runs", shared.len());
    for key in shared {
        assert!(
            kept.contains_key(key),
            "{key}: kept in one run, not in the other"
        );
    }
    // And no key that the first run left out is in the other seed's trace.
    let left: Vec<&String> = all.keys().filter(|k| !kept.contains_key(*k)).collect();
    assert!(left.iter().all(|k| !other_seed.contains_key(*k)));
}

/// `--look-aside` on a cache: a read that misses is followed by a set of the key, of
/// the traced size, so the next read of it hits; without it every read misses, and the
/// replay says so and how to fill the store.
#[test]
fn look_aside_fills_a_caches_misses() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("reads.twitter.csv");
    let mut text_trace = String::new();
    for round in 0..3u32 {
        for key in 0..100u32 {
            text_trace.push_str(&format!("{round},k{key},3,40,1,get,0\n"));
        }
    }
    std::fs::write(&trace, text_trace).unwrap();
    let replay = |extra: &[&str]| {
        let server = start(ServerKind::Memcached, "");
        let url = format!("memcached://{}", server.addr());
        let mut args = replay_to(
            &trace,
            "memcached",
            &url,
            &["--input-format", "twitter", "--threads", "2"],
        );
        args.extend_from_slice(extra);
        let o = kvlab(&args);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        (server, out, err)
    };
    let (server, out, err) = replay(&["--look-aside"]);
    assert!(!err.contains("missed"), "{err}");
    let stat = |name| memcached_stat(&server, name);
    assert_eq!(
        (stat("get_misses"), stat("get_hits"), stat("cmd_set")),
        (100, 200, 100),
        "{out}"
    );
    assert_eq!(report_u64(&out, "READ", "Return=NOT_FOUND"), 100, "{out}");
    assert_eq!(report_u64(&out, "INSERT", "Operations"), 100, "{out}");
    assert!(
        memcached_reply(&server, "get k42\r\n").starts_with("VALUE k42 0 40\r\n"),
        "a fill has the traced size"
    );
    let (plain, out, err) = replay(&[]);
    assert!(
        err.contains("kvlab: replay: every read (300) missed: the store held none of the keys")
            && err.contains("--preload loads those keys")
            && err.contains("--look-aside sets each missed key"),
        "{err}"
    );
    let stat = |name| memcached_stat(&plain, name);
    assert_eq!(
        (stat("get_misses"), stat("get_hits"), stat("cmd_set")),
        (300, 0, 0),
        "{out}"
    );
}

/// What a store cannot do is counted by op and named, on stderr and in the result's
/// notes, never sent and never dropped silently: a RocksDB trace's DeleteRanges on
/// redis-server, and a recorded YCSB workload E's scans on memcached.
#[test]
fn ops_a_store_cannot_do_are_counted_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("ranges.trace");
    let mut entries: Vec<(u8, &[u8], &[u8])> = vec![
        (0x1, b"k1", b"one"),
        (0x1, b"k2", b"two"),
        (0x1, b"k3", b"three"),
    ];
    entries.push((0xF, b"k1", b"k3"));
    entries.push((0x1, b"k4", b"four"));
    entries.push((0xF, b"k0", b"k9"));
    std::fs::write(&trace, rocksdb_trace::writes(&entries)).unwrap();
    assert_eq!(trace_stats(&trace)["ops"]["deleterange"], 2);
    let server = redis("");
    let url = format!("redis://{}", server.addr());
    let out = dir.path().join("redis");
    let o = kvlab(&replay_to_redis(
        &trace,
        &url,
        &["--out", out.to_str().unwrap()],
    ));
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let note = "replay: requests the store cannot do were not sent: deleterange 2";
    assert!(stderr.contains(note), "{stderr}");
    assert!(result_doc(&out).notes.iter().any(|n| n == note));
    assert_eq!(calls(&server, "set"), 4, "the puts were sent");
    assert_eq!(report_u64(&stdout, "INSERT", "Operations"), 4, "{stdout}");
    // Nothing else reached the server (no DEL, no UNLINK for the ranges).
    assert_eq!(calls(&server, "del") + calls(&server, "unlink"), 0);

    // YCSB workload E recorded on the null store, replayed on memcached (no scans).
    let recorded = dir.path().join("e.kvtrace");
    ok(&[
        "run",
        "-P",
        "workloads/ycsb/workloade",
        "--db",
        "null",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=2000",
        "--record",
        recorded.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let ops = trace_stats(&recorded)["ops"].clone();
    let (scans, inserts) = (
        ops["scan"].as_u64().unwrap(),
        ops["insert"].as_u64().unwrap(),
    );
    assert!(scans > 1000 && inserts > 0, "{ops}");
    let cache = start(ServerKind::Memcached, "");
    let url = format!("memcached://{}", cache.addr());
    let out = dir.path().join("memcached");
    let o = kvlab(&replay_to(
        &recorded,
        "memcached",
        &url,
        &["--out", out.to_str().unwrap()],
    ));
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let note = format!("replay: requests the store cannot do were not sent: scan {scans}");
    assert!(stderr.contains(&note), "{note} in {stderr}");
    assert!(result_doc(&out).notes.contains(&note));
    assert_eq!(memcached_stat(&cache, "cmd_set"), inserts);
    assert_eq!(memcached_stat(&cache, "cmd_get"), 0);
}

/// A run recorded for 0.2 s (10 000 requests at 50 000 ops/s, open loop) and analyzed:
/// the request rate is counted in sub-second intervals that the chart names, at about
/// the rate the run was paced at; the page reads at a laptop's window width.
#[test]
fn a_sub_second_recording_is_analyzed_in_sub_second_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("short.kvtrace");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=10000",
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
    let out = dir.path().join("analysis");
    ok(&[
        "trace",
        "analyze",
        trace.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--html",
    ]);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let span = summary["time_span_s"]
        .as_f64()
        .expect("a recorded trace has a clock");
    let requests = summary["requests"].as_f64().unwrap();
    assert!(span < 1.0, "a sub-second recording: {span} s");
    let csv = std::fs::read_to_string(out.join("qps.csv")).unwrap();
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|c| c.parse().unwrap()).collect())
        .collect();
    let width = rows[0][1];
    assert!(
        width <= span / 10.0,
        "{width} s intervals over {span} s: {csv}"
    );
    // Rates per second: over the intervals they add up to the requests.
    let total: f64 = rows.iter().map(|r| r[2] * width).sum();
    assert!(
        (total - requests).abs() < 1e-6 * requests,
        "{total} of {requests}: {csv}"
    );
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let label = format!(
        "{} intervals",
        kvlab_trace::analyze::interval_label((width * 1e9).round() as u64)
    );
    assert!(
        page.contains(&label),
        "the chart names its interval ({label})"
    );
    if let Some(seen) = crate::common::browser::see(&out.join("index.html")) {
        seen.assert_readable("kvlab trace analyze --html");
    }
}

#[test]
fn analyze_samples_keys_past_max_keys_and_says_so() {
    let Some(trace) = shared_data_or_skip("traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let t = trace.to_str().unwrap();
    let analyze = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "trace",
            "analyze",
            t,
            "--out",
            out.to_str().unwrap(),
            "--html",
        ];
        args.extend_from_slice(extra);
        kvlab(&args)
    };
    // 48 974 objects followed exactly, and at most 5 000 of them.
    let exact = dir.path().join("exact");
    let o = analyze(&exact, &["--exact"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let sampled = dir.path().join("sampled");
    let o = analyze(&sampled, &["--max-keys", "5000"]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("--max-keys") && err.contains("estimated"),
        "{err}"
    );
    let (x, e) = (
        read_json(&exact.join("summary.json")),
        read_json(&sampled.join("summary.json")),
    );
    assert!(x.get("sampling").is_none());
    assert_eq!(x["objects"].as_u64(), Some(48_974));
    let s = &e["sampling"];
    assert!(s["weight"].as_u64().unwrap() >= 16, "{s}");
    assert!(s["sampled_keys"].as_u64().unwrap() <= 5000, "{s}");
    assert_eq!(e["requests"], x["requests"]);
    let objects = e["objects"].as_u64().unwrap() as f64;
    assert!(
        (objects / 48_974.0 - 1.0).abs() < 0.2,
        "{objects} objects estimated"
    );
    let page = std::fs::read_to_string(sampled.join("index.html")).unwrap();
    assert!(page.contains("Estimated:"));
    // --exact and --max-keys contradict each other.
    let o = analyze(&dir.path().join("both"), &["--exact", "--max-keys", "10"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--max-keys"), "{err}");
}

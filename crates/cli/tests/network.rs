//! End-to-end tests of the `kvlab` binary against real redis-server and memcached
//! processes: load/run/verify in both Redis models and both memcached protocols,
//! `kvlab memtier`, `--spawn`, and failures (refused connections, a server killed
//! mid-run, passwords kept out of the output, a thousand connections).

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use kvlab_spawn::{Server, ServerKind};

use crate::common;
use common::files::{files_under, read_json, result_doc};
use common::process::free_port;
use common::servers::{call, calls, info, info_stat, memcached_reply, memcached_stat, start};
use common::{
    all_stats_row, kvlab, kvlab_command, memtier_on, report_u64, report_value, section_row, text,
};

/// Whether process `pid` still exists (and is not a zombie).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The pid in kvlab's `started … (pid N)` line.
fn spawned_pid(stderr: &str) -> u32 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kvlab: started "))
        .unwrap_or_else(|| panic!("no `started` line in:\n{stderr}"));
    line.rsplit_once("(pid ")
        .and_then(|(_, p)| p.strip_suffix(')'))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in `{line}`"))
}

/// Load, run and verify one store with `dataintegrity=true`; returns nothing, asserts
/// every phase. `extra` are the store's arguments (`--db`, `--url`, `-p`…).
fn load_run_verify(extra: &[&str], tag: &str) {
    let common = [
        &[
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            "recordcount=1500",
            "-p",
            "operationcount=3000",
            "-p",
            "dataintegrity=true",
            "--seed",
            "7",
        ][..],
        extra,
    ]
    .concat();
    let o = kvlab(&[&["load"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{tag}: load failed: {stderr}");
    assert_eq!(report_u64(&stdout, "INSERT", "Return=OK"), 1500, "{tag}");

    let o = kvlab(&[&["run"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{tag}: run failed: {stderr}");
    let reads = report_u64(&stdout, "READ", "Operations");
    let updates = report_u64(&stdout, "UPDATE", "Operations");
    assert_eq!(reads + updates, 3000, "{tag}");
    assert_eq!(report_u64(&stdout, "READ", "Return=OK"), reads, "{tag}");
    assert_eq!(report_u64(&stdout, "UPDATE", "Return=OK"), updates, "{tag}");
    assert_eq!(report_u64(&stdout, "VERIFY", "Return=OK"), reads, "{tag}");

    let o = kvlab(&[&["verify"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{tag}: verify failed: {stdout}{stderr}");
    assert_eq!(report_u64(&stdout, "VERIFY", "Records"), 1500, "{tag}");
    assert_eq!(report_u64(&stdout, "VERIFY", "Missing"), 0, "{tag}");
    assert_eq!(report_u64(&stdout, "VERIFY", "Corrupted"), 0, "{tag}");
    assert_eq!(report_u64(&stdout, "VERIFY", "Errors"), 0, "{tag}");
}

/// A key of the loaded YCSB records (`user…`), found with SCAN.
fn some_record_key(server: &Server) -> String {
    let reply = call(server, &["SCAN", "0", "MATCH", "user*"]);
    let keys = reply.as_array().unwrap()[1].as_array().unwrap();
    keys.first()
        .and_then(|k| k.as_str())
        .expect("a user key")
        .to_string()
}

#[test]
fn redis_load_run_verify_in_both_models_pipelined_and_not_and_verify_catches_damage() {
    let server = start(ServerKind::Redis, "");
    let url = server.url();
    for (model, shape, tag) in [
        (
            "redis.model=hash",
            &["--pipeline", "8", "--connections", "4", "--threads", "2"][..],
            "hash, pipelined",
        ),
        ("redis.model=string", &["--threads", "1"][..], "string"),
    ] {
        let args = [&["--db", "redis", "--url", &url, "-p", model][..], shape].concat();
        load_run_verify(&args, tag);

        // Damage one record behind kvlab's back: verify must notice.
        let key = some_record_key(&server);
        call(&server, &["DEL", &key]);
        let o = kvlab(
            &[
                &[
                    "verify",
                    "-P",
                    "workloads/ycsb/workloada",
                    "-p",
                    "recordcount=1500",
                    "-p",
                    "dataintegrity=true",
                ][..],
                &args[..],
            ]
            .concat(),
        );
        let (stdout, _) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{tag}: {stdout}");
        assert_eq!(report_u64(&stdout, "VERIFY", "Missing"), 1, "{tag}");
        assert!(
            stdout.contains(&format!("[VERIFY], MissingKey, {key}")),
            "{stdout}"
        );
        call(&server, &["FLUSHALL"]);
    }
}

#[test]
fn memcached_load_run_verify_over_text_and_meta() {
    let server = start(ServerKind::Memcached, "m=64");
    let url = server.url();
    for (protocol, shape) in [
        (
            "memcached.protocol=text",
            &["--pipeline", "4", "--connections", "2"][..],
        ),
        ("memcached.protocol=meta", &["--threads", "2"][..]),
    ] {
        let args = [
            &["--db", "memcached", "--url", &url, "-p", protocol][..],
            shape,
        ]
        .concat();
        load_run_verify(&args, protocol);
        kvlab_spawn::resp::command(server.addr(), &["flush_all"]).ok();
    }
}

/// memtier's seed-004 command line against `target` (server flags or `--spawn`).
fn memtier_seed_004(target: &[&str], json: &Path, out: Option<&Path>) -> Output {
    let json = format!("--json-out-file={}", json.display());
    let mut args = vec!["memtier"];
    args.extend_from_slice(target);
    args.extend_from_slice(&[
        "-t",
        "2",
        "-c",
        "4",
        "--distinct-client-seed",
        "--ratio=1:10",
        "--key-prefix=kv_",
        "--key-minimum=1",
        "--key-maximum=50000",
        "--random-data",
        "--data-size=128",
        "--hide-histogram",
        "--test-time=2",
        &json,
    ]);
    let out_arg;
    if let Some(dir) = out {
        out_arg = dir.display().to_string();
        args.extend_from_slice(&["--out", &out_arg]);
    }
    kvlab(&args)
}

/// Checks the ALL STATS table and the JSON file of a 1:10 SET:GET memtier run.
fn check_memtier(o: &Output, json: &Path, tag: &str) {
    let (stdout, stderr) = text(o);
    assert!(o.status.success(), "{tag}: {stderr}");
    let sets = all_stats_row(&stdout, "Sets");
    let gets = all_stats_row(&stdout, "Gets");
    let totals = all_stats_row(&stdout, "Totals");
    assert_eq!(totals.len(), 9, "{tag}: {totals:?}");
    let num = |row: &[String], col: usize| row[col].parse::<f64>().unwrap();
    let (set_ops, get_ops, total_ops) = (num(&sets, 1), num(&gets, 1), num(&totals, 1));
    assert!(set_ops > 0.0 && get_ops > 0.0, "{tag}: {stdout}");
    assert!(
        (total_ops - set_ops - get_ops).abs() < 1.0,
        "{tag}: {stdout}"
    );
    // A 1:10 ratio cycle: ten gets for each set.
    let ratio = get_ops / set_ops;
    assert!((9.5..10.5).contains(&ratio), "{tag}: gets/sets = {ratio}");
    // Gets are hits or misses.
    assert!(
        (num(&gets, 2) + num(&gets, 3) - get_ops).abs() < 1.0,
        "{tag}: {gets:?}"
    );
    assert!(num(&gets, 2) > 0.0, "{tag}: some gets hit the keys set");

    let doc = read_json(json);
    let all = &doc["ALL STATS"];
    let count = |t: &str| {
        all[t]["Count"]
            .as_u64()
            .unwrap_or_else(|| panic!("{tag}: {all}"))
    };
    assert!(count("Sets") > 0, "{tag}");
    let json_ratio = count("Gets") as f64 / count("Sets") as f64;
    assert!((9.5..10.5).contains(&json_ratio), "{tag}: {json_ratio}");
    assert!(
        (all["Totals"]["Ops/sec"].as_f64().unwrap() - total_ops).abs() < 0.01 * total_ops + 1.0,
        "{tag}: the table and the JSON agree"
    );
}

#[test]
fn memtier_seed_004_against_a_spawned_redis_and_memcache_text_against_memcached() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("redis.json");
    let out = dir.path().join("out");
    let o = memtier_seed_004(&["--spawn"], &json, Some(&out));
    check_memtier(&o, &json, "redis");
    let pid = spawned_pid(&text(&o).1);
    assert!(!alive(pid), "the spawned redis-server {pid} is gone");
    let doc = result_doc(&out);
    assert_eq!(doc.store.name, "redis");
    assert!(
        doc.store.options.contains_key("spawned.version"),
        "{:?}",
        doc.store.options
    );

    let server = start(ServerKind::Memcached, "m=64");
    let port = server.port().to_string();
    let json = dir.path().join("memcached.json");
    let o = memtier_seed_004(
        &["-s", "127.0.0.1", "-p", &port, "-P", "memcache_text"],
        &json,
        None,
    );
    check_memtier(&o, &json, "memcache_text");
}

#[test]
fn memtier_run_count_reports_best_worst_and_average_of_its_runs() {
    let server = start(ServerKind::Redis, "");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("runs.json");
    let json_arg = format!("--json-out-file={}", json.display());
    let out = dir.path().join("out");
    // Three runs of 2 clients × 200 requests at 1:1: 200 SETs per run.
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "--requests=200",
            "--ratio=1:1",
            "--key-maximum=1000",
            "--hide-histogram",
            "-x",
            "3",
            "--print-all-runs",
            &json_arg,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(!stdout.contains("ALL STATS"), "{stdout}");
    let ops = |title: &str| {
        section_row(&stdout, title, "Totals")[1]
            .parse::<f64>()
            .unwrap()
    };
    let runs: Vec<f64> = (1..=3).map(|n| ops(&format!("RUN #{n} RESULTS"))).collect();
    let max = runs.iter().cloned().fold(f64::MIN, f64::max);
    let min = runs.iter().cloned().fold(f64::MAX, f64::min);
    assert_eq!(ops("BEST RUN RESULTS"), max, "{stdout}");
    assert_eq!(ops("WORST RUN RESULTS"), min, "{stdout}");
    let mean = runs.iter().sum::<f64>() / 3.0;
    let average = ops("AGGREGATED AVERAGE RESULTS (3 runs)");
    assert!(
        (average - mean).abs() < 0.02,
        "{average} vs {mean}: {stdout}"
    );
    // The server saw all three runs.
    assert_eq!(
        server_counter(&server, ServerKind::Redis, "cmdstat_set"),
        600
    );

    let doc = read_json(&json);
    let avg = &doc["AGGREGATED AVERAGE RESULTS (3 runs)"]["Totals"];
    assert_eq!(avg["Count"], serde_json::json!(1200), "{doc}");
    assert_eq!(
        doc["BEST RUN RESULTS"]["Sets"]["Count"],
        serde_json::json!(200)
    );
    assert!(doc.get("ALL STATS").is_none());
    for n in 1..=3 {
        let result = result_doc(&out.join(format!("run-{n}")));
        assert_eq!(result.results.operations, 400, "run {n}");
    }
}

/// A counter of a server's statistics: memcached's `stats` (`STAT name value`) or
/// Redis' `INFO` (`name:value`).
fn server_counter(server: &Server, kind: ServerKind, name: &str) -> u64 {
    let text = match kind {
        ServerKind::Memcached => memcached_reply(server, "stats\r\n")
            .replace("STAT ", "")
            .replace(' ', ":"),
        _ => info(server, "all"),
    };
    info_stat(&text, name).unwrap_or(0)
}

#[test]
fn memtier_multi_key_get_counts_keys_as_the_server_does() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, protocol, hits, misses) in [
        (
            ServerKind::Redis,
            "redis",
            "keyspace_hits",
            "keyspace_misses",
        ),
        (
            ServerKind::Memcached,
            "memcache_text",
            "get_hits",
            "get_misses",
        ),
    ] {
        let server = start(kind, "");
        let port = server.port().to_string();
        let json = dir.path().join(format!("{protocol}.json"));
        let json_arg = format!("--json-out-file={}", json.display());
        // 2 clients × 100 requests: 25 cycles of a SET and GETs of 4, 4 and 2 keys.
        let o = memtier_on(
            &port,
            &[
                "-P",
                protocol,
                "-t",
                "1",
                "-c",
                "2",
                "--requests=100",
                "--ratio=1:10",
                "--multi-key-get=4",
                "--key-maximum=150",
                "--distinct-client-seed",
                "--hide-histogram",
                &json_arg,
            ],
        );
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{protocol}: {stderr}");
        let doc = read_json(&json);
        let gets = &doc["ALL STATS"]["Gets"];
        let secs = doc["run information"]["Runtime (msec)"].as_f64().unwrap() / 1e3;
        let per_key = |rate: &str| (gets[rate].as_f64().unwrap() * secs).round() as u64;
        // One operation per multi-key GET, its keys counted one by one.
        assert_eq!(gets["Count"], serde_json::json!(150), "{protocol}: {gets}");
        assert_eq!(
            doc["ALL STATS"]["Sets"]["Count"],
            serde_json::json!(50),
            "{protocol}"
        );
        let (kv_hits, kv_misses) = (per_key("Hits/sec"), per_key("Misses/sec"));
        assert_eq!(kv_hits + kv_misses, 500, "{protocol}: {gets}");
        assert!(kv_hits > 0 && kv_misses > 0, "{protocol}: {gets}");
        assert_eq!(
            (kv_hits, kv_misses),
            (
                server_counter(&server, kind, hits),
                server_counter(&server, kind, misses)
            ),
            "{protocol}: kvlab and the server count the same keys"
        );
        // The table agrees with the JSON document.
        let row = all_stats_row(&stdout, "Gets");
        let table_hits = row[2].parse::<f64>().unwrap();
        assert!(
            (table_hits - gets["Hits/sec"].as_f64().unwrap()).abs() < 0.01,
            "{protocol}: {row:?}"
        );
        if kind == ServerKind::Redis {
            // Every GET of the cycle (4, 4, 2 keys) is one MGET.
            assert_eq!(server_counter(&server, kind, "cmdstat_mget"), 150);
            assert_eq!(server_counter(&server, kind, "cmdstat_get"), 0);
        } else {
            assert_eq!(server_counter(&server, kind, "cmd_get"), 500);
        }
    }
}

#[test]
fn a_spawned_server_is_described_in_the_result_and_gone_after_kvlab_exits() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=2000",
        "--db",
        "redis",
        "--spawn",
        "maxmemory=64mb",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    // The new server was loaded first, so every read hits.
    assert_eq!(
        report_value(&stdout, "READ", "Return=OK"),
        report_value(&stdout, "READ", "Operations")
    );
    let pid = spawned_pid(&stderr);
    assert!(!alive(pid), "the spawned redis-server {pid} is gone");
    let doc = result_doc(&out);
    let version = doc.store.options["spawned.version"].as_str().unwrap();
    assert!(
        version.starts_with(|c: char| c.is_ascii_digit()),
        "{version}"
    );
    assert_eq!(
        doc.store.options["spawned.config.maxmemory"],
        serde_json::json!("64mb")
    );
    assert!(
        doc.store.stats.contains_key("spawned.cpu_user_s"),
        "{:?}",
        doc.store.stats
    );
}

#[test]
fn a_refused_connection_at_start_exits_1_naming_the_address_without_a_result() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    for (db, url) in [
        ("redis", format!("redis://{addr}")),
        ("memcached", format!("memcached://{addr}")),
    ] {
        let out = dir.path().join(db);
        let o = kvlab(&[
            "run",
            "-P",
            "workloads/ycsb/workloada",
            "--db",
            db,
            "--url",
            &url,
            "--out",
            out.to_str().unwrap(),
        ]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{db}: {stderr}");
        assert!(stderr.contains(&addr), "{db}: {stderr}");
        assert!(stderr.to_lowercase().contains("refused"), "{db}: {stderr}");
        assert!(!out.join("result.json").exists(), "{db}: no result written");
    }
    let o = memtier_on(&port.to_string(), &["--test-time=1"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&addr), "{stderr}");
}

#[test]
fn a_server_killed_mid_run_gives_connection_errors_until_max_errors_stops_the_run() {
    let server = start(ServerKind::Redis, "");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let started = Instant::now();
    let mut child = kvlab_command(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=1000",
        "--db",
        "redis",
        "--url",
        &server.url(),
        "--duration",
        "5s",
        "--threads",
        "2",
        "--connections",
        "16",
        "--pipeline",
        "4",
        "--max-errors",
        "1000",
        "--out",
        out.to_str().unwrap(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    server.kill();
    let o = loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break child.wait_with_output().unwrap();
        }
        if started.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("kvlab did not stop");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("--max-errors"), "{stderr}");
    let doc = result_doc(&out);
    assert!(doc.runner.error_budget_exceeded);
    let connection = doc.results.errors.get("connection").copied().unwrap_or(0);
    assert!(connection > 1000, "{:?}", doc.results.errors);
    // Only connection errors: a lost server is not a protocol or timeout failure.
    assert_eq!(doc.results.errors.len(), 1, "{:?}", doc.results.errors);
    // Before the kill, requests succeeded.
    let ok: u64 = doc
        .results
        .ops
        .iter()
        .filter_map(|op| op.returns.get("OK"))
        .sum();
    assert!(ok > 0, "{:?}", doc.results.ops);
    assert!(
        doc.results.runtime_ms < 5000.0,
        "stopped early by the error budget"
    );
}

#[test]
fn a_password_in_the_url_never_appears_in_output_or_results() {
    const SECRET: &str = "Sup3rS3cretPw";
    let server = start(ServerKind::Redis, &format!("requirepass={SECRET}"));
    let dir = tempfile::tempdir().unwrap();
    let good = format!("redis://:{SECRET}@127.0.0.1:{}", server.port());
    let bad = format!("redis://default:{SECRET}x@127.0.0.1:{}", server.port());
    let mut outputs = Vec::new();
    for (phase, url, ok) in [
        ("load", &good, true),
        ("run", &good, true),
        ("run", &bad, false),
    ] {
        let out = dir.path().join(format!("{phase}-{ok}"));
        let o = kvlab(&[
            phase,
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=400",
            "--db",
            "redis",
            "--url",
            url,
            "--out",
            out.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.success(), ok, "{phase} {ok}: {stderr}");
        if !ok {
            assert!(stderr.contains("handshake"), "{stderr}");
        }
        outputs.push(stdout);
        outputs.push(stderr);
        // Every file written, monitor/ series included.
        outputs.extend(files_under(&out));
    }
    assert!(outputs.len() > 6, "result files were written");
    for text in &outputs {
        assert!(!text.contains(SECRET), "the password leaked:\n{text}");
    }
    assert!(
        outputs.iter().any(|t| t.contains(":***@127.0.0.1")),
        "the URL is shown redacted"
    );
}

#[test]
fn a_memtier_password_never_appears_in_results() {
    const SECRET: &str = "Sup3rS3cretPw";
    let server = start(ServerKind::Redis, &format!("requirepass={SECRET}"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let json = dir.path().join("memtier.json");
    let port = server.port().to_string();
    let o = memtier_on(
        &port,
        &[
            "-a",
            SECRET,
            "--test-time=1",
            "--hide-histogram",
            "--json-out-file",
            json.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let result = std::fs::read_to_string(out.join("result.json")).unwrap();
    let json = std::fs::read_to_string(json).unwrap();
    for text in [&stdout, &stderr, &result, &json] {
        assert!(!text.contains(SECRET), "the password leaked:\n{text}");
    }
}

#[test]
fn a_thousand_connections_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=200",
        "-p",
        "operationcount=8192",
        "--db",
        "redis",
        "--spawn",
        "maxclients=2000",
        "--threads",
        "2",
        "--connections",
        "512",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let reads = report_u64(&stdout, "READ", "Operations");
    assert_eq!(reads + report_u64(&stdout, "UPDATE", "Operations"), 8192);
    assert_eq!(
        report_u64(&stdout, "READ", "Return=OK"),
        reads,
        "the records were loaded"
    );
    let doc = result_doc(&out);
    assert!(doc.results.errors.is_empty(), "{:?}", doc.results.errors);
    assert_eq!(doc.runner.connections_per_thread, 512);
    // 1024 sessions each connected once (plus kvlab's own probes).
    let received = doc.store.stats["total_connections_received"]
        .as_i64()
        .unwrap();
    assert!(received >= 1024, "{received} connections");
}

/// Loads and runs workload A with each of: one field, three fields all written
/// (`writeallfields=true`), three fields one at a time; `store` are the store's
/// arguments, `empty` empties the server, `reset` zeroes its counters and `counts` reads
/// its (gets, sets). A whole-record update must be one set and no get; a partial one a
/// get first.
fn whole_record_updates(
    store: &[&str],
    empty: impl Fn(),
    reset: impl Fn(),
    counts: impl Fn() -> (u64, u64),
) {
    for (props, whole) in [
        (&["-p", "fieldcount=1"][..], true),
        (
            &["-p", "fieldcount=3", "-p", "writeallfields=true"][..],
            true,
        ),
        (&["-p", "fieldcount=3"][..], false),
    ] {
        empty();
        let base = [
            &[
                "-P",
                "workloads/ycsb/workloada",
                "-p",
                "recordcount=200",
                "-p",
                "operationcount=2000",
            ][..],
            store,
            props,
        ]
        .concat();
        let o = kvlab(&[&["load"][..], &base].concat());
        assert!(o.status.success(), "{:?}", text(&o));
        reset();
        let o = kvlab(&[&["run"][..], &base].concat());
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        let reads = report_u64(&stdout, "READ", "Operations");
        let updates = report_u64(&stdout, "UPDATE", "Operations");
        assert_eq!(reads + updates, 2000);
        let tag = format!("{store:?} {props:?}");
        assert_eq!(report_u64(&stdout, "UPDATE", "Return=OK"), updates, "{tag}");
        let (gets, sets) = counts();
        assert_eq!(sets, updates, "{tag}: one store command per update");
        if whole {
            assert_eq!(gets, reads, "{tag}: no read before a whole-record update");
        } else {
            assert_eq!(gets, reads + updates, "{tag}: a partial update reads first");
        }
    }
}

/// In the string model an update that writes every field of the record (one field, or
/// `writeallfields=true`) replaces the record with one `SET`; a partial update still
/// reads the record first (`GET`, merge, `SET`). Counted by the server itself.
#[test]
fn redis_string_model_replaces_a_whole_record_with_one_set() {
    let server = start(ServerKind::Redis, "");
    let url = server.url();
    whole_record_updates(
        &["--db", "redis", "--url", &url, "-p", "redis.model=string"],
        || drop(call(&server, &["FLUSHALL"])),
        || drop(call(&server, &["CONFIG", "RESETSTAT"])),
        || (calls(&server, "get"), calls(&server, "set")),
    );
}

/// One line a memcached server answers to `command` (`flush_all`, `stats reset`).
fn memcached_line(server: &Server, command: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut c = std::net::TcpStream::connect(server.addr()).unwrap();
    c.write_all(format!("{command}\r\n").as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(c).read_line(&mut line).unwrap();
    line
}

/// A workload whose every record is one field stores it as that field's bytes alone —
/// what `GET key` shows, what redis-benchmark's and memtier's `-d` values are — in the
/// Redis string model and memcached, and reads it back checked (`dataintegrity`);
/// records of several fields keep the field encoding.
#[test]
fn a_one_field_record_is_stored_as_its_value_and_read_back_checked() {
    let redis = start(ServerKind::Redis, "");
    let memcached = start(ServerKind::Memcached, "m=64");
    let one = ["-p", "fieldcount=1", "-p", "fieldlength=7"];
    let (redis_url, memcached_url) = (redis.url(), memcached.url());
    let redis_args = [
        "--db",
        "redis",
        "--url",
        &redis_url,
        "-p",
        "redis.model=string",
    ];
    load_run_verify(&[&redis_args[..], &one].concat(), "redis, one field");
    let key = some_record_key(&redis);
    assert_eq!(call(&redis, &["STRLEN", &key]).as_int(), Some(7), "{key}");
    call(&redis, &["FLUSHALL"]);
    let three = ["-p", "fieldcount=3", "-p", "fieldlength=7"];
    load_run_verify(&[&redis_args[..], &three].concat(), "redis, three fields");
    let encoded = some_record_key(&redis);
    // Three times a 4-byte name length, `fieldN`, a 4-byte value length, 7 bytes.
    assert_eq!(call(&redis, &["STRLEN", &encoded]).as_int(), Some(63));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let o = kvlab(
        &[
            &[
                "run",
                "-P",
                "workloads/ycsb/workloada",
                "-p",
                "recordcount=1500",
            ][..],
            &[
                "-p",
                "operationcount=10",
                "-p",
                "fieldcount=1",
                "--out",
                out,
            ],
            &redis_args,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let doc = result_doc(dir.path());
    assert_eq!(doc.store.options["value_layout"], "single field field0");

    for protocol in ["text", "meta", "binary"] {
        memcached_line(&memcached, "flush_all");
        let p = format!("memcached.protocol={protocol}");
        let args = ["--db", "memcached", "--url", &memcached_url, "-p", &p];
        load_run_verify(&[&args[..], &one].concat(), &p);
        // The same workload, so the same keys: the item is the field's 7 bytes.
        let item = memcached_reply(&memcached, &format!("get {key}\r\n"));
        assert!(
            item.starts_with(&format!("VALUE {key} 0 7\r\n")),
            "{p}: {item}"
        );
    }
}

/// memcached: an update of a whole record is one `replace` (YCSB's memcached binding),
/// so it needs no `get` first and misses where the record is gone; a partial update
/// still reads first. Counted by the server, over the text, meta and binary protocols.
#[test]
fn memcached_replaces_a_whole_record_and_misses_a_missing_one() {
    let server = start(ServerKind::Memcached, "m=64");
    let url = server.url();
    for protocol in ["text", "meta", "binary"] {
        let p = format!("memcached.protocol={protocol}");
        whole_record_updates(
            &["--db", "memcached", "--url", &url, "-p", &p],
            || drop(memcached_line(&server, "flush_all")),
            || assert_eq!(memcached_line(&server, "stats reset"), "RESET\r\n"),
            || {
                (
                    memcached_stat(&server, "cmd_get"),
                    memcached_stat(&server, "cmd_set"),
                )
            },
        );
        // Updates of records that are not there: each misses, nothing is stored.
        memcached_line(&server, "flush_all");
        let o = kvlab(&[
            "run",
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=300",
            "-p",
            "readproportion=0",
            "-p",
            "updateproportion=1",
            "-p",
            "fieldcount=1",
            "--db",
            "memcached",
            "--url",
            &url,
            "-p",
            &p,
        ]);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stderr}");
        assert_eq!(
            report_u64(&stdout, "UPDATE", "Return=NOT_FOUND"),
            300,
            "{p}: {stdout}"
        );
        assert_eq!(memcached_stat(&server, "curr_items"), 0, "{p}");
    }
}

//! `kvlab` over other transports and with memtier's connection flags, against real
//! redis-server and memcached processes: load/run/verify and `kvlab memtier -S` over UNIX
//! domain sockets, `-P memcache_binary` with exact counts against memcached's own,
//! `--reconnect-interval` counted by the server, and `--reconnect-on-error` across a
//! server killed and restarted mid-run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kvlab_report::ResultDocument;
use kvlab_spawn::ServerKind;

use crate::common;
use common::files::result_doc;
use common::process::{free_port, wait_for_port, wait_until, Process};
use common::servers::{info_at, info_stat, memcached_stat, start};
use common::{all_stats_row, kvlab, kvlab_command, memtier_on, report_u64, text};

/// A statistic of a result document's `store.stats`.
fn store_stat(doc: &ResultDocument, name: &str) -> u64 {
    doc.store.stats[name]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} in {:?}", doc.store.stats))
}

#[test]
fn load_run_verify_over_unix_sockets() {
    let redis = start(ServerKind::Redis, "unixsocket=r.sock,unixsocketperm=700");
    let memcached = start(ServerKind::Memcached, "s=m.sock");
    let redis_url = format!("redis+unix://{}", redis.unix_socket().unwrap().display());
    let memcached_url = memcached.url();
    let cases: [(&str, &str, &[&str]); 4] = [
        ("redis", &redis_url, &[]),
        (
            "redis",
            &format!("{redis_url}?db=2"),
            &["-p", "redis.model=string"],
        ),
        (
            "memcached",
            &memcached_url,
            &["-p", "memcached.protocol=binary"],
        ),
        (
            "memcached",
            &memcached_url,
            &["-p", "memcached.protocol=meta"],
        ),
    ];
    for (db, url, extra) in cases {
        let tag = format!("{db} {url} {extra:?}");
        let common = [
            &[
                "-P",
                "workloads/ycsb/workloada",
                "-p",
                "recordcount=500",
                "-p",
                "operationcount=2000",
                "-p",
                "dataintegrity=true",
                "--db",
                db,
                "--url",
                url,
                "--threads",
                "2",
                "--connections",
                "4",
                "--pipeline",
                "4",
            ][..],
            extra,
        ]
        .concat();
        for phase in ["load", "run", "verify"] {
            let o = kvlab(&[&[phase], &common[..]].concat());
            let (stdout, stderr) = text(&o);
            assert!(o.status.success(), "{tag} {phase}: {stderr}");
            match phase {
                "load" => assert_eq!(report_u64(&stdout, "INSERT", "Return=OK"), 500, "{tag}"),
                "run" => {
                    let reads = report_u64(&stdout, "READ", "Operations");
                    assert_eq!(report_u64(&stdout, "READ", "Return=OK"), reads, "{tag}");
                    assert!(stdout.contains("[VERIFY]"), "{tag}");
                }
                _ => assert!(!stdout.contains("Return=ERROR"), "{tag}: {stdout}"),
            }
        }
    }
    // The Redis runs went over the socket: database 2 holds the string-model records.
    let info = kvlab_spawn::resp::command(redis.addr(), &["INFO", "keyspace"]).unwrap();
    assert!(info.as_str().unwrap().contains("db2:keys=500"), "{info:?}");
}

#[test]
fn memtier_over_unix_sockets_counts_what_the_servers_count() {
    let dir = tempfile::tempdir().unwrap();
    // Redis on a socket only (port 0 turns its TCP off).
    let socket = dir.path().join("redis.sock");
    let redis = Process::spawn(
        Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null()),
    );
    wait_until(
        Duration::from_secs(10),
        Duration::from_millis(20),
        "redis did not start",
        || socket.exists(),
    );
    // memcached on a socket, binary protocol only.
    let memcached = start(ServerKind::Memcached, "s=m.sock,B=binary");
    let m_socket = memcached.unix_socket().unwrap().display().to_string();
    let cases = [
        ("redis", socket.display().to_string(), "redis"),
        ("memcached", m_socket, "memcache_binary"),
    ];
    for (name, path, protocol) in cases {
        let out = dir.path().join(name);
        let o = kvlab(&[
            "memtier",
            "-S",
            &path,
            "-P",
            protocol,
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "200",
            "--ratio=1:3",
            "--key-maximum=400",
            "--pipeline=2",
            "--hide-histogram",
            "--out",
            out.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{name}: {stderr}");
        let totals = all_stats_row(&stdout, "Totals");
        assert!(
            totals[1].parse::<f64>().unwrap() > 0.0,
            "{name}: {totals:?}"
        );
        let doc = result_doc(&out);
        assert!(
            doc.results.errors.is_empty(),
            "{name}: {:?}",
            doc.results.errors
        );
        // 6 clients × 200 requests: 50 cycles of a SET and 3 GETs each.
        let found = doc.runner.keys_found;
        let missed = doc.runner.keys_not_found;
        assert_eq!(found + missed, 6 * 150, "{name}");
        if name == "memcached" {
            assert_eq!(store_stat(&doc, "cmd_set"), 6 * 50);
            assert_eq!(
                (store_stat(&doc, "get_hits"), store_stat(&doc, "get_misses")),
                (found, missed),
                "kvlab and memcached count the same hits and misses"
            );
        } else {
            assert_eq!(
                (
                    store_stat(&doc, "keyspace_hits"),
                    store_stat(&doc, "keyspace_misses")
                ),
                (found, missed)
            );
        }
        assert!(doc.store.options["url"]
            .as_str()
            .unwrap()
            .contains("+unix:///"));
    }
    redis.stop();
}

#[test]
fn memtier_memcache_binary_counts_sets_hits_and_misses_exactly() {
    let server = start(ServerKind::Memcached, "B=binary");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-P",
            "memcache_binary",
            "-t",
            "2",
            "-c",
            "2",
            "-n",
            "110",
            "--ratio=1:10",
            "--key-maximum=300",
            "--multi-key-get=4",
            "--hide-histogram",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    // A cycle is a SET, then GETs of 4, 4 and 2 keys. Per client, 110 requests are 27
    // cycles, a SET and a GET of 4 keys: 28 SETs and 274 keys read.
    assert_eq!(all_stats_row(&stdout, "Sets")[0], "Sets");
    let doc = result_doc(&out);
    let found = doc.runner.keys_found;
    let missed = doc.runner.keys_not_found;
    assert!(found > 0 && missed > 0, "{found} {missed}");
    assert_eq!(found + missed, 4 * 274);
    // The server's counters, read by kvlab over the binary protocol at the end (the
    // server does not speak the text protocol).
    assert_eq!(store_stat(&doc, "cmd_set"), 4 * 28);
    assert_eq!(store_stat(&doc, "get_hits"), found);
    assert_eq!(store_stat(&doc, "get_misses"), missed);
}

#[test]
fn memtier_reconnect_interval_reopens_connections_as_memtier_does() {
    let server = start(ServerKind::Memcached, "");
    let port = server.port().to_string();
    let run = |extra: &[&str]| {
        let before = memcached_stat(&server, "total_connections");
        let o = memtier_on(
            &port,
            &[
                &[
                    "-P",
                    "memcache_text",
                    "-t",
                    "2",
                    "-c",
                    "3",
                    "-n",
                    "95",
                    "--hide-histogram",
                ][..],
                extra,
            ]
            .concat(),
        );
        let (_, stderr) = text(&o);
        assert!(o.status.success(), "{extra:?}: {stderr}");
        // The counter's own connection is counted too.
        memcached_stat(&server, "total_connections") - before - 1
    };
    let baseline = run(&[]);
    // memtier: each client reconnects when its processed requests reach a multiple of
    // the interval, except at its last: 95 requests, interval 10 → 9 reconnections per
    // client, 6 clients.
    assert_eq!(run(&["--reconnect-interval=10"]), baseline + 6 * 9);
    // With a pipeline of 5 the batches end on the multiples of 10 too.
    assert_eq!(
        run(&["--reconnect-interval=10", "--pipeline=5"]),
        baseline + 6 * 9
    );
    assert_eq!(run(&["--reconnect-interval=95"]), baseline);
}

/// Starts redis-server on `port` (kvlab's spawner picks its own ports) and waits until
/// it answers.
fn redis_on(port: u16) -> Process {
    let child = Process::spawn(
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null()),
    );
    wait_for_port(port, "redis did not start");
    child
}

/// Runs `kvlab memtier` against Redis on a free port for 4 seconds, killing the server
/// after one and starting another on the same port half a second later; returns the
/// output, how long kvlab ran, and the second server's `INFO stats`.
fn memtier_across_a_restart(extra: &[&str]) -> (std::process::Output, Duration, String) {
    let port = free_port();
    let first = redis_on(port);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let child = kvlab_command(&["memtier", "-s", "127.0.0.1", "-p", &port.to_string()])
        .args(["-t", "1", "-c", "4", "--test-time=4", "--hide-histogram"])
        .args(extra)
        .arg("--out")
        .arg(dir.path().join("out"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    first.stop();
    std::thread::sleep(Duration::from_millis(500));
    let second = redis_on(port);
    let o = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    let info = info_at(std::net::SocketAddr::from(([127, 0, 0, 1], port)), "stats");
    second.stop();
    (o, elapsed, info)
}

/// A counter of an `INFO` text; panics when it has none.
fn info_counter(info: &str, name: &str) -> u64 {
    info_stat(info, name).unwrap_or_else(|| panic!("no {name} in {info}"))
}

#[test]
fn memtier_reconnect_on_error_goes_on_across_a_server_restart() {
    // The requests in flight when the server died fail: a budget lets the run pass.
    let (o, elapsed, info) =
        memtier_across_a_restart(&["--reconnect-on-error", "--max-errors", "100000"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("operations failed (connection: "),
        "{stderr}"
    );
    assert!(stderr.contains("within --max-errors 100000"), "{stderr}");
    assert!(
        elapsed >= Duration::from_secs(4),
        "ran its time: {elapsed:?}"
    );
    assert!(all_stats_row(&stdout, "Totals")[1].parse::<f64>().unwrap() > 0.0);
    // Every client reconnected to the restarted server, which then served requests.
    assert!(
        info_counter(&info, "total_connections_received") >= 4,
        "{info}"
    );
    assert!(
        info_counter(&info, "total_commands_processed") > 100,
        "{info}"
    );
}

#[test]
fn memtier_without_reconnect_on_error_stops_at_a_lost_connection() {
    let (o, elapsed, _) = memtier_across_a_restart(&[]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("--reconnect-on-error"), "{stderr}");
    assert!(stderr.contains("connection"), "{stderr}");
    assert!(
        elapsed < Duration::from_secs(4),
        "stopped early: {elapsed:?}"
    );
}

#[test]
fn spawned_servers_on_unix_sockets_and_address_families() {
    for (db, spawn) in [("memcached", "s=m.sock"), ("redis", "unixsocket=r.sock")] {
        let o = kvlab(&[
            "run",
            "-P",
            "workloads/ycsb/workloadc",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=500",
            "--db",
            db,
            "--spawn",
            spawn,
        ]);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{db}: {stderr}");
        assert!(
            stderr.contains("+unix:///"),
            "{db} runs over its socket: {stderr}"
        );
        assert_eq!(report_u64(&stdout, "READ", "Return=OK"), 500, "{db}");
    }
    // -4 resolves a name to its IPv4 address; -6 finds no IPv6 address for an IPv4 one.
    let server = start(ServerKind::Memcached, "");
    let port = server.port().to_string();
    let o = kvlab(&[
        "memtier",
        "-4",
        "-s",
        "localhost",
        "-p",
        &port,
        "-P",
        "memcache_text",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "20",
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let o = memtier_on(&port, &["-6", "-P", "memcache_text", "-n", "20"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("IPv6"), "{stderr}");
    let o = memtier_on(&port, &["-4", "-6"]);
    assert_eq!(o.status.code(), Some(2));
}

//! `kvlab memtier` beside memtier_benchmark 2.3.0 (built from its release tag and run
//! against redis-server with the same command lines): what memtier sent, printed and
//! wrote is quoted in each test, and kvlab must do the same — commands the server
//! counts, connections, the table's layout, the JSON document's configuration and key
//! order, and memtier's command-line parsing.

use crate::common;
use common::servers::{call, calls, info, info_stat, memcached_stat, redis, start};
use common::{all_stats_row, kvlab, memtier_on, text};
use kvlab_spawn::ServerKind;

/// `(name, calls)` of each `cmdstat_NAME:calls=N,…` line of `INFO commandstats`, sorted.
fn command_calls(info: &str) -> Vec<(String, u64)> {
    let mut seen: Vec<(String, u64)> = info
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| {
            let (name, rest) = l.split_once(":calls=")?;
            let calls = rest.split(',').next()?.parse().ok()?;
            Some((name.to_string(), calls))
        })
        .collect();
    seen.sort();
    seen
}

#[test]
fn the_server_sees_memtiers_traffic_only() {
    // memtier_benchmark 2.3.0 `-t 1 -c 2 -n 100 --expiry-range=10-20 --ratio=1:1`
    // against redis-server after CONFIG RESETSTAT: INFO commandstats then held only
    // cmdstat_setex:calls=100 and cmdstat_get:calls=100 (no SET, no INFO), and
    // total_connections_received counted its 2 connections (plus the query's own).
    let server = redis("");
    let port = server.port().to_string();
    call(&server, &["CONFIG", "RESETSTAT"]);
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--expiry-range=10-20",
            "--ratio=1:1",
            "--hide-histogram",
            "--no-server-queries",
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    // kvlab's 2 clients and this query's connection.
    assert_eq!(
        info_stat(&info(&server, "stats"), "total_connections_received"),
        Some(3)
    );
    let info = info(&server, "commandstats");
    let seen = command_calls(&info);
    assert_eq!(
        seen,
        [
            ("config|resetstat".to_string(), 1),
            ("get".to_string(), 100),
            // This test's INFO stats.
            ("info".to_string(), 1),
            ("setex".to_string(), 100)
        ],
        "{info}"
    );
    server.stop().unwrap();
}

#[test]
fn the_connection_handshake_is_memtiers() {
    // memtier_benchmark 2.3.0 `-t 1 -c 2 -n 6 --ratio=1:1 -P resp3 --select-db=2 -a
    // bob:pw` sent on each connection, pipelined, `AUTH bob pw`, `SELECT 2`, `HELLO 3`
    // (MONITOR); with `-P resp2` `HELLO 2`, with `-P redis` no HELLO.
    let server = redis("");
    let port = server.port().to_string();
    call(
        &server,
        &["ACL", "SETUSER", "bob", "on", ">pw", "~*", "&*", "+@all"],
    );
    for (protocol, hellos) in [("resp3", 2), ("resp2", 2), ("redis", 0)] {
        call(&server, &["CONFIG", "RESETSTAT"]);
        let o = memtier_on(
            &port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "6",
                "--ratio=1:1",
                "-P",
                protocol,
                "--select-db=2",
                "-a",
                "bob:pw",
                "--hide-histogram",
                "--no-server-queries",
            ],
        );
        let (_, stderr) = text(&o);
        assert!(o.status.success(), "{protocol}: {stderr}");
        let info = info(&server, "commandstats");
        let seen = command_calls(&info);
        let mut expected = vec![
            ("auth".to_string(), 2),
            ("config|resetstat".to_string(), 1),
            ("get".to_string(), 6),
            ("hello".to_string(), hellos),
            ("select".to_string(), 2),
            ("set".to_string(), 6),
        ];
        expected.retain(|(_, n)| *n > 0);
        assert_eq!(seen, expected, "{protocol}: {info}");
    }
    server.stop().unwrap();
}

#[test]
fn the_report_has_memtiers_header_and_column_layout() {
    // memtier_benchmark 2.3.0 `-t 1 -c 2 -n 100 --ratio=1:1 --hide-histogram` printed:
    //
    // 1         Threads
    // 2         Connections per thread
    // 100       Requests per client
    // (two empty lines, ALL STATS, then 124 `=`, the header below, 124 `-`, and rows
    // such as `Sets         8198.07          ---          ---         0.11824 …`.)
    const MEMTIER_HEADER: &str =
        "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     \
                                  p50 Latency     p99 Latency   p99.9 Latency       KB/sec ";
    let server = redis("");
    let port = server.port().to_string();
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--ratio=1:1",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..7],
        [
            "1         Threads",
            "2         Connections per thread",
            "100       Requests per client",
            "",
            "",
            "ALL STATS",
            &"=".repeat(124),
        ]
    );
    assert_eq!(lines[7], MEMTIER_HEADER);
    assert_eq!(lines[8], "-".repeat(124));
    for row in ["Sets ", "Gets ", "Waits ", "Totals "] {
        let line = lines
            .iter()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no {row}row in {stdout}"));
        assert_eq!(line.len(), 124, "{line}");
    }
    // memtier 2.3.0 with --print-percentiles=50,99.99,100 named its columns so.
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10",
            "--print-percentiles=50,99.99,100",
            "--hide-histogram",
        ],
    );
    let (stdout, _) = text(&o);
    assert!(
        stdout.contains(
            "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     \
             p50 Latency p99.990 Latency    p100 Latency       KB/sec "
        ),
        "{stdout}"
    );
    server.stop().unwrap();
}

#[test]
fn cluster_mode_tables_and_json_have_memtiers_moved_and_ask_columns() {
    // memtier_benchmark 2.3.0 `--cluster-mode -t 2 -c 3 -n 100 --ratio=1:1
    // --hide-histogram` against a 3-master cluster printed 150 `=`, this header, 150
    // `-`, and rows such as
    // `Waits           0.00          ---          ---          ---          ---  …`;
    // with `--command` its header has no Hits/sec and Misses/sec.
    const MEMTIER_HEADER: &str =
        "Type         Ops/sec     Hits/sec   Misses/sec    MOVED/sec      \
         ASK/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec ";
    const MEMTIER_COMMANDS_HEADER: &str = "Type         Ops/sec    MOVED/sec      ASK/sec    \
         Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec ";
    // memtier's JSON row: MOVED/sec and ASK/sec after Misses/sec, in every row.
    const MEMTIER_KEYS: [&str; 8] = [
        "Count",
        "Ops/sec",
        "Hits/sec",
        "Misses/sec",
        "MOVED/sec",
        "ASK/sec",
        "Connection Errors/sec",
        "Connection Errors",
    ];
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let port = cluster.addrs()[0].port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cluster.json");
    let json_arg = format!("--json-out-file={}", json.display());
    let o = memtier_on(
        &port,
        &[
            "--cluster-mode",
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "100",
            "--ratio=1:1",
            "--hide-histogram",
            &json_arg,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines.iter().position(|l| *l == "ALL STATS").unwrap();
    assert_eq!(lines[at + 1], "=".repeat(150));
    assert_eq!(lines[at + 2], MEMTIER_HEADER);
    assert_eq!(lines[at + 3], "-".repeat(150));
    for row in ["Sets ", "Gets ", "Waits ", "Totals "] {
        let line = lines.iter().find(|l| l.starts_with(row)).unwrap();
        assert_eq!(line.len(), 150, "{line}");
    }
    assert_eq!(
        all_stats_row(&stdout, "Waits")[2..7],
        ["---", "---", "---", "---", "---"]
    );
    // Every request got its reply (kvlab follows redirections): 0 MOVED/sec, 0 ASK/sec.
    assert_eq!(all_stats_row(&stdout, "Gets")[4..6], ["0.00", "0.00"]);
    let raw = std::fs::read_to_string(&json).unwrap();
    for row in ["Sets", "Gets", "Waits", "Totals"] {
        // The keys in memtier's order at the start of the row (a key missing or out of
        // order would be found in a later row).
        let from = raw.find(&format!("\"{row}\": {{")).unwrap();
        let mut at = from;
        for key in MEMTIER_KEYS {
            at += raw[at..].find(&format!("\"{key}\":")).unwrap() + 1;
        }
        assert!(at - from < 400, "{row}: {}", &raw[from..at]);
    }
    let doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
    for row in ["Sets", "Gets", "Waits", "Totals"] {
        assert_eq!(doc["ALL STATS"][row]["MOVED/sec"], serde_json::json!(0.0));
        assert_eq!(doc["ALL STATS"][row]["ASK/sec"], serde_json::json!(0.0));
    }
    let o = memtier_on(
        &port,
        &[
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "20",
            "--command=set __key__ __data__",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains(MEMTIER_COMMANDS_HEADER), "{stdout}");
    cluster.stop().unwrap();
}

#[test]
fn the_latency_distribution_is_memtiers_percentile_steps() {
    // memtier_benchmark 2.3.0 printed, for its 100-request runs, `Request Latency
    // Distribution`, `Type     <= msec         Percent`, 72 `-`, then per type lines
    // `SET       0.015        0.000`, `SET       0.015        5.000`, … stepping by
    // 5 %, 2.5 %, 1.25 % … and ending at `100.000`, a `---` after SET and after GET,
    // and for the WAITs it never sent the one line `WAIT      0.000      100.000`:
    // about 280 lines for 50 000 requests, not one per value.
    let server = redis("");
    let port = server.port().to_string();
    let o = memtier_on(&port, &["-t", "2", "-c", "5", "-n", "5000"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let dist = stdout
        .split("Request Latency Distribution\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no distribution in {stdout}"));
    let mut lines = dist.lines();
    assert_eq!(lines.next(), Some("Type     <= msec         Percent"));
    assert_eq!(lines.next(), Some("-".repeat(72).as_str()));
    let rest: Vec<&str> = lines.collect();
    assert!(rest.len() < 400, "{} lines", rest.len());
    let gets: Vec<f64> = rest
        .iter()
        .filter(|l| l.starts_with("GET "))
        .map(|l| l.split_whitespace().nth(2).unwrap().parse().unwrap())
        .collect();
    assert_eq!(gets[..3], [0.0, 5.0, 10.0]);
    assert_eq!(gets.last(), Some(&100.0));
    let get_line = rest.iter().find(|l| l.starts_with("GET ")).unwrap();
    // `%-6s %8.3f %12.3f`
    assert_eq!(get_line.len(), 6 + 1 + 8 + 1 + 12, "{get_line}");
    assert_eq!(rest.iter().filter(|l| **l == "---").count(), 2);
    assert_eq!(
        rest[rest.len() - 2..],
        ["---", "WAIT      0.000      100.000"]
    );
    server.stop().unwrap();
}

#[test]
fn a_type_without_requests_has_one_distribution_step() {
    // memtier_benchmark 2.3.0 `-t 1 -c 2 -n 100 --ratio 1:0 --json-out-file=…` printed
    // for the GETs it never sent `GET       0.000      100.000` between the SET part's
    // `---` and its own, then `WAIT      0.000      100.000`; its JSON's `ALL STATS` had
    // `"GET": [{"<=msec": 0.000, "percent": 100.000}]` and the same `WAIT`.
    let server = redis("");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let json_flag = format!("--json-out-file={}", json.display());
    let o = memtier_on(
        &port,
        &[
            "-t", "1", "-c", "2", "-n", "100", "--ratio", "1:0", &json_flag,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.ends_with("---\nGET       0.000      100.000\n---\nWAIT      0.000      100.000\n"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap())
        .expect("the JSON document parses");
    let one_step = serde_json::json!([{"<=msec": 0.0, "percent": 100.0}]);
    assert_eq!(doc["ALL STATS"]["GET"], one_step);
    assert_eq!(doc["ALL STATS"]["WAIT"], one_step);
    assert!(doc["ALL STATS"]["SET"]
        .as_array()
        .is_some_and(|a| a.len() > 1));
    server.stop().unwrap();
}

#[test]
fn refusals_exit_with_memtiers_codes_before_connecting() {
    // memtier_benchmark 2.3.0 exited 2 (after its usage text) for what it refuses while
    // parsing flags — `--reconnect-interval 0` "error: reconnect-interval must be greater
    // than zero.", `--statsd-port 0`, `--clients-start 2` alone "error: --clients-start,
    // --clients-step, and --step-duration must all be specified together.",
    // `--cluster-mode --reconnect-interval 5` — and 1 for what it refuses after:
    // `--data-verify` "error: use data-verify only with data-import", `-S PATH -p PORT`
    // "error: UNIX domain socket and TCP cannot be used together.", the staircase without
    // `--test-time`, a minimum jitter above the maximum. It connected to no server.
    let server = redis("");
    let port = server.port().to_string();
    let connections = || info_stat(&info(&server, "stats"), "total_connections_received");
    let before = connections();
    for (flags, code, message) in [
        (&["--reconnect-interval=0"][..], 2, "--reconnect-interval"),
        (&["--statsd-port=0"][..], 2, "--statsd-port"),
        (
            &["--clients-start=2"][..],
            2,
            "must all be specified together",
        ),
        (
            &["--cluster-mode", "--reconnect-interval=5"][..],
            2,
            "cluster mode does not support reconnect-interval",
        ),
        (
            &["--data-verify"][..],
            1,
            "use data-verify only with data-import",
        ),
        (
            &["-S", "/tmp/kvlab-no.sock"][..],
            1,
            "UNIX domain socket and TCP cannot be used together",
        ),
        (
            &["--clients-start=2", "--clients-step=1", "--step-duration=1"][..],
            1,
            "--test-time is required",
        ),
        (
            &[
                "--thread-conn-start-min-jitter-micros=10",
                "--thread-conn-start-max-jitter-micros=5",
            ][..],
            1,
            "cannot be greater than",
        ),
    ] {
        let o = memtier_on(&port, &[&["-t", "1", "-c", "4"][..], flags].concat());
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(code), "{flags:?}: {stderr}");
        assert!(stderr.contains(message), "{flags:?}: {stderr}");
        assert!(!stdout.contains("ALL STATS"), "{flags:?}: {stdout}");
    }
    // Only this test's own INFO queries connected.
    assert_eq!(connections().unwrap() - before.unwrap(), 1);
    server.stop().unwrap();
}

#[test]
fn show_config_prints_memtiers_list_on_stdout() {
    // memtier_benchmark 2.3.0 `--show-config` printed `============== Configuration
    // values: ==============` and a closing rule on stderr and between them, on stdout,
    // `server = 127.0.0.1`, `port = PORT`, `uri = `, `unix socket = (null)`, …,
    // `data_size_range = 0-0`, …, `key_stddev = 0.000000`, …, `json-out-file = (null)`,
    // `print-all-runs = no` (53 lines), then its results.
    let server = redis("");
    let port = server.port().to_string();
    let o = memtier_on(
        &port,
        &[
            "-n",
            "10",
            "-t",
            "1",
            "-c",
            "1",
            "--expiry-range=5-9",
            "--show-config",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("============== Configuration values: ==============\n"),
        "{stderr}"
    );
    let (config, results) = stdout
        .split_once("print-all-runs = no\n")
        .unwrap_or_else(|| panic!("no configuration list in {stdout}"));
    assert!(results.starts_with("1         Threads\n"), "{results}");
    let lines: Vec<&str> = config.lines().collect();
    assert_eq!(lines.len() + 1, 53, "{config}");
    assert_eq!(
        lines[..6],
        [
            "server = 127.0.0.1".to_string(),
            format!("port = {port}"),
            "uri = ".to_string(),
            "unix socket = (null)".to_string(),
            "address family = Unspecified".to_string(),
            "protocol = redis".to_string(),
        ]
    );
    for line in [
        "tls = no",
        "requests = 10",
        "ratio = 1:10",
        "data_size = 32",
        "random_data = no",
        "data_size_range = 0-0",
        "expiry_range = 5-9",
        "key_prefix = memtier-",
        "key_maximum = 10000000",
        "key_stddev = 0.000000",
        "wait-ratio = 0:0",
        "num-slaves = 0-0",
        "wait-timeout = 0-0",
        "json-out-file = (null)",
    ] {
        assert!(lines.contains(&line), "{line} in {config}");
    }
    server.stop().unwrap();
}

#[test]
fn the_json_configuration_is_memtiers() {
    // memtier_benchmark 2.3.0 `-s 127.0.0.1 -p PORT -t 1 -c 2 -n 100 --ratio=1:1
    // --expiry-range=10-20 --key-prefix=kv_ --key-maximum=1000 -d 64 --hide-histogram
    // --json-out-file=…` wrote this `configuration` (its `port` left out here):
    const MEMTIER: &str = r#"{"server": "127.0.0.1", "uri": "", "unix socket": null, "address family": "Unspecified", "protocol": "redis", "out_file": null, "tls": "false", "cert": null, "key": null, "cacert": null, "tls_skip_verify": "false", "sni": null, "client_stats": null, "run_count": 1, "debug": 0, "requests": 100, "rate_limit": 0, "clients": 2, "threads": 1, "test_time": 0, "ratio": "1:1", "pipeline": 1, "data_size": 64, "data_offset": 0, "random_data": "false", "data_size_range": "0:0", "data_size_list": "", "data_size_pattern": "R", "expiry_range": "10:20", "data_import": null, "data_verify": "false", "verify_only": "false", "generate_keys": "false", "key_prefix": "kv_", "key_minimum": 0, "key_maximum": 1000, "key_pattern": "R:R", "key_stddev": 0.0, "key_median": 0.0, "key_zipf_exp": 0.0, "reconnect_interval": 0, "connection_timeout": 0, "thread_conn_start_min_jitter_micros": 0, "thread_conn_start_max_jitter_micros": 0, "multi_key_get": 0, "authenticate": "", "select-db": 0, "no-expiry": "false", "wait-ratio": "0:0", "num-slaves": "0:0", "wait-timeout": "0-0", "print-all-runs": "false"}"#;
    // …and these keys, in this order, in `run information` and each row of ALL STATS.
    const RUN_INFORMATION: [&str; 4] = [
        "Threads",
        "Connections per thread",
        "Requests per client",
        "Format version",
    ];
    const ROW: [&str; 17] = [
        "Count",
        "Ops/sec",
        "Hits/sec",
        "Misses/sec",
        "Connection Errors/sec",
        "Connection Errors",
        "Latency",
        "Average Latency",
        "Accumulated Latency",
        "Min Latency",
        "Max Latency",
        "KB/sec",
        "KB/sec RX/TX",
        "KB/sec RX",
        "KB/sec TX",
        "Time-Serie",
        "Percentile Latencies",
    ];
    let server = redis("");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    let json_arg = format!("--json-out-file={}", path.display());
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--ratio=1:1",
            "--expiry-range=10-20",
            "--key-prefix=kv_",
            "--key-maximum=1000",
            "-d",
            "64",
            "--hide-histogram",
            &json_arg,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut config = doc["configuration"].clone();
    assert_eq!(config["port"], server.port());
    config.as_object_mut().unwrap().remove("port");
    let memtier: serde_json::Value = serde_json::from_str(MEMTIER).unwrap();
    assert_eq!(config, memtier);
    // Key order: each list's keys appear in the file in memtier's order.
    let in_order = |keys: &[&str], within: &str| {
        let at: Vec<usize> = keys
            .iter()
            .map(|k| {
                within
                    .find(&format!("\"{k}\""))
                    .unwrap_or_else(|| panic!("no {k}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    };
    in_order(&RUN_INFORMATION, &text);
    let sets = &text[text.find("\"Sets\"").unwrap()..];
    in_order(&ROW, sets);
    in_order(&["Runtime", "Sets", "Gets", "Waits", "Totals"], &text);
    assert_eq!(doc["run information"]["Format version"], 2);
    assert_eq!(doc["ALL STATS"]["Runtime"]["Time unit"], "MILLISECONDS");
    // 2 clients × 100 requests at 1:1.
    assert_eq!(doc["ALL STATS"]["Sets"]["Count"], 100);
    assert_eq!(doc["ALL STATS"]["Totals"]["Count"], 200);
    server.stop().unwrap();
}

#[test]
fn the_command_line_parses_as_memtiers_getopt_long() {
    // memtier_benchmark 2.3.0: `-n allkeys --key-maximum=1000 -t 1 -c 2` printed
    // `setting requests to 1000` on stdout before the run; `-v` printed its version and
    // exited 0; a repeated flag took its last value; a stray word was ignored;
    // `--connection-timeout=0` is its default.
    let server = redis("");
    let port = server.port().to_string();
    let o = memtier_on(
        &port,
        &[
            "-n",
            "allkeys",
            "--key-maximum=200",
            "-t",
            "3",
            "-t",
            "1",
            "-c",
            "2",
            "stray",
            "--connection-timeout=0",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.starts_with("setting requests to 200\n"), "{stdout}");
    assert!(stdout.contains("1         Threads\n"), "{stdout}");
    assert!(stderr.contains("stray"), "{stderr}");
    assert_eq!(calls(&server, "get") + calls(&server, "set"), 400);
    let v = kvlab(&["memtier", "-v"]);
    assert!(v.status.success());
    assert!(text(&v).0.contains("memtier_benchmark"), "{:?}", text(&v));
    server.stop().unwrap();
}

#[test]
fn memcached_sees_memtiers_connections_only() {
    // memtier_benchmark 2.3.0 `-P memcache_text -t 1 -c 2 -n 50` against a fresh
    // memcached: total_connections went from 3 to 6 between two `stats` queries (its 2
    // clients and the second query), cmd_set 10, cmd_get 90.
    let server = start(ServerKind::Memcached, "");
    let port = server.port().to_string();
    let before = memcached_stat(&server, "total_connections");
    let o = memtier_on(
        &port,
        &[
            "-P",
            "memcache_text",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "--hide-histogram",
            "--no-server-queries",
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(memcached_stat(&server, "total_connections") - before, 2 + 1);
    assert_eq!(memcached_stat(&server, "cmd_set"), 10);
    assert_eq!(memcached_stat(&server, "cmd_get"), 90);
    server.stop().unwrap();
}

#[test]
fn rate_limiting_releases_each_connections_requests_in_memtiers_bursts() {
    // memtier_benchmark 2.3.0 `--rate-limiting=500`: a connection may send
    // ceil(500 / 50) = 10 requests a tick, 50 ticks a second (20 ms each), refilled by a
    // timer; between ticks it waits in libevent, not on a core.
    let server = redis("");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.kvtrace");
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "60",
            "--rate-limiting=500",
            "--hide-histogram",
            "--record",
            trace.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{:?}", text(&o));
    let mut reader = kvlab_trace::open(&trace, &kvlab_trace::OpenOptions::default()).unwrap();
    let mut rec = kvlab_trace::TraceRecord::default();
    let mut per_due = std::collections::BTreeMap::<u64, u64>::new();
    while reader.read(&mut rec).unwrap() {
        *per_due.entry(rec.intended_ns).or_default() += 1;
    }
    // 2 connections × 60 requests, in bursts of 10 due together: 12 bursts, 6 a
    // connection, 20 ms apart, the two connections' ticks half a tick apart.
    assert_eq!(per_due.values().sum::<u64>(), 120, "{per_due:?}");
    assert!(per_due.values().all(|&n| n == 10), "{per_due:?}");
    let dues: Vec<u64> = per_due.keys().copied().collect();
    for pair in dues.windows(2) {
        let gap_ms = (pair[1] - pair[0]) as f64 / 1e6;
        assert!((gap_ms - 10.0).abs() < 0.01, "{dues:?}");
    }
}

#[test]
fn an_unreachable_server_without_server_queries_fails_naming_the_connection() {
    // memtier_benchmark 2.3.0 `--no-server-queries` against a closed port prints
    // "Connection error: Connection refused" for each connection; kvlab fails the run
    // (exit code 1) with the first connection's error, and prints no empty table.
    let port = common::process::free_port().to_string();
    let o = memtier_on(
        &port,
        &["-t", "1", "-c", "2", "--test-time=2", "--no-server-queries"],
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(!stdout.contains("ALL STATS"), "{stdout}");
}

#[test]
fn stderr_has_memtiers_lines_before_during_and_after_the_runs() {
    // memtier_benchmark 2.3.0 `-t 1 -c 2 -n 500 -x 2 --json-out-file=F` prints on stderr:
    // "Writing results to stdout", then per run "[RUN #N] Preparing benchmark client...",
    // "[RUN #N] Launching threads now...", a live line a second ending in \r
    // ("[RUN #N 100%,   0 secs]  1 threads  2 conns:        1000 ops, …"), two newlines,
    // and at the end "Saving JSON output file: F".
    let server = redis("");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("m.json");
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "500",
            "-x",
            "2",
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("Writing results to stdout\n"),
        "{stderr}"
    );
    for run in [1, 2] {
        let prepare = format!("[RUN #{run}] Preparing benchmark client...\n");
        let launch = format!("[RUN #{run}] Launching threads now...\n");
        let at = stderr.find(&prepare).unwrap_or_else(|| panic!("{stderr}"));
        assert!(stderr[at..].contains(&launch), "{stderr}");
        // The last live line of a run says all its requests are done.
        let live: Vec<&str> = stderr
            .split(['\r', '\n'])
            .filter(|l| l.starts_with(&format!("[RUN #{run} ")))
            .collect();
        let last = live.last().unwrap_or_else(|| panic!("{stderr}"));
        assert!(last.starts_with(&format!("[RUN #{run} 100%, ")), "{last}");
        assert!(
            last.contains(" 1 threads  2 conns:        1000 ops, "),
            "{last}"
        );
        assert!(last.ends_with(" msec latency"), "{last}");
    }
    assert!(
        stderr.ends_with(&format!("Saving JSON output file: {}\n", json.display())),
        "{stderr}"
    );
}

#[test]
fn debug_prints_each_request_and_its_reply() {
    // memtier_benchmark 2.3.0 -D prints, per request, `server …: SET key=[…]
    // value_len=… expiry=…` or `server …: GET key=[…]`, and a line for its response.
    let server = redis("");
    let port = server.port().to_string();
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "6",
            "--ratio=1:1",
            "-d",
            "20",
            "-D",
            "--hide-histogram",
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let label = format!("server 127.0.0.1:{port} (client 0): ");
    let sets: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with(&format!("{label}SET key=[memtier-")))
        .collect();
    let gets = stderr
        .lines()
        .filter(|l| l.starts_with(&format!("{label}GET key=[memtier-")))
        .count();
    let replies = stderr
        .lines()
        .filter(|l| l.starts_with(&format!("{label}handled response: ")))
        .count();
    assert_eq!((sets.len(), gets, replies), (3, 3, 6), "{stderr}");
    assert!(
        sets.iter().all(|l| l.ends_with("] value_len=20 expiry=0")),
        "{sets:?}"
    );
    // Without -D, none of it.
    let o = memtier_on(
        &port,
        &["-t", "1", "-c", "1", "-n", "6", "--hide-histogram"],
    );
    assert!(!text(&o).1.contains("handled response"), "{}", text(&o).1);
}

#[test]
fn help_states_where_kvlab_chooses_differently_from_memtier() {
    // A memtier user reads `--help`: kvlab's own choices (exit codes, the server
    // queries, what a lost connection does) are listed at its end, and every flag the
    // list names is a flag `kvlab memtier` takes.
    let o = kvlab(&["memtier", "--help"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let (options, choices) = stdout
        .split_once("Where kvlab memtier differs from memtier_benchmark 2.3.0")
        .expect("the list of kvlab's choices ends the help");
    for said in [
        "memtier exits 0 whatever it found",
        "--no-server-queries sends memtier's traffic only",
        "without --reconnect-on-error it stops the whole run",
    ] {
        let flat = choices.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(said), "`{said}` missing from:\n{choices}");
    }
    let named: Vec<&str> = choices
        .split(|c: char| c.is_whitespace() || c == ',' || c == ':' || c == '(' || c == ')')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .collect();
    assert!(named.len() >= 10, "{named:?}");
    for flag in named {
        let flag = flag.trim_end_matches(['.', ';']);
        assert!(
            options.contains(&format!("{flag} ")) || options.contains(&format!("{flag}\n")),
            "the help names {flag}, which kvlab memtier does not take"
        );
    }
}

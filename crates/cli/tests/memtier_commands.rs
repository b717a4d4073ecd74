//! End-to-end tests of memtier's arbitrary commands (`--command`, `--command-ratio`,
//! `--command-key-pattern`) and WAITs (`--wait-ratio`, `--num-slaves`, `--wait-timeout`)
//! in `kvlab memtier`, against real redis-server processes on free loopback ports: the
//! counts kvlab reports per command are those the server's `INFO commandstats` shows.

use std::time::{Duration, Instant};

use kvlab_spawn::Server;

use crate::common;
use common::files::{read_json, result_json};
use common::servers::{call, calls, redis};
use common::{all_stats_row, memtier_on, text};

fn int(server: &Server, args: &[&str]) -> i64 {
    call(server, args).as_int().unwrap()
}

#[test]
fn commands_are_sent_by_ratio_and_counted_as_the_server_counts_them() {
    let server = redis("");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("m.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let out = dir.path().join("out");
    let out_arg = out.display().to_string();
    // 2 clients × 100 requests; per client memtier's cycle sends SET ×2, GET ×3 from the
    // first request: 40 SETs and 60 GETs. memtier_benchmark 2.3.0 with this command line
    // and `-c 1` left cmdstat_set:calls=40, cmdstat_get:calls=60 in INFO commandstats.
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--command=set __key__ __data__",
            "--command-ratio=2",
            "--command=get __key__",
            "--command-ratio=3",
            "--key-maximum=50",
            "--hide-histogram",
            &json_arg,
            "--out",
            &out_arg,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!((calls(&server, "set"), calls(&server, "get")), (80, 120));
    // memtier's rows: one per command, named like its Sets and Gets, then Totals.
    let sets = all_stats_row(&stdout, "Sets");
    let gets = all_stats_row(&stdout, "Gets");
    let totals = all_stats_row(&stdout, "Totals");
    assert_eq!(sets.len(), gets.len());
    assert_eq!(totals.len(), sets.len());
    assert!(!stdout.contains("Waits"), "{stdout}");
    let doc = read_json(&json_path);
    let stats = &doc["ALL STATS"];
    assert_eq!(stats["Sets"]["Count"], 80);
    assert_eq!(stats["Gets"]["Count"], 120);
    assert_eq!(stats["Totals"]["Count"], 200);
    assert!(
        stats["Gets"]["Percentile Latencies"]["p99.00"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // kvlab's result document names the commands.
    let result = result_json(&out);
    let ops = result["results"]["ops"].as_array().unwrap();
    let count = |name: &str| {
        ops.iter()
            .find(|op| op["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {ops:?}"))["operations"]
            .as_u64()
            .unwrap()
    };
    assert_eq!((count("SET"), count("GET")), (80, 120));
    assert_eq!(result["results"]["operations"], 200);
    server.stop().unwrap();
}

#[test]
fn a_sequential_command_key_pattern_writes_the_range_in_order() {
    let server = redis("");
    let port = server.port().to_string();
    // Each client walks the keys from --key-minimum; the two clients write the same 30.
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "30",
            "--command=set __key__ __data__",
            "--command-key-pattern=S",
            "--key-prefix=seq:",
            "--key-minimum=1",
            "--key-maximum=1000",
            "-d",
            "7",
            "--hide-histogram",
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(int(&server, &["DBSIZE"]), 30);
    assert_eq!(int(&server, &["EXISTS", "seq:1", "seq:30"]), 2);
    assert_eq!(int(&server, &["EXISTS", "seq:0", "seq:31"]), 0);
    assert_eq!(
        int(&server, &["STRLEN", "seq:17"]),
        7,
        "__data__ is --data-size bytes"
    );
    server.stop().unwrap();
}

#[test]
fn quoted_arguments_and_replies_of_every_type() {
    let server = redis("");
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("m.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let out = dir.path().join("out");
    let out_arg = out.display().to_string();
    // A field name with a space, an escaped byte, integer, array, nil and status
    // replies; and an error reply, which counts as an error of its command.
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "60",
            "--command=hset __key__ 'a field' \"x\\x41y\"",
            "--command-key-pattern=S",
            "--command=rpush list __data__",
            "--command=lrange list 0 2",
            "--command=get no-such-key",
            "--command=incr counter",
            "--command=ping",
            "--command=sadd set-key only",
            "--command=set x",
            "--key-prefix=h:",
            "--key-maximum=1000",
            "--max-errors=100",
            "--hide-histogram",
            &json_arg,
            "--out",
            &out_arg,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let field = call(&server, &["HGET", "h:0", "a field"]);
    assert_eq!(field.as_str(), Some("xAy"));
    // 60 requests over 8 commands of ratio 1: 7 rounds of 8, then hset, rpush, lrange
    // and get (memtier 2.3.0 sends each command its ratio from the first request).
    assert_eq!(calls(&server, "hset"), 8);
    assert_eq!(calls(&server, "rpush"), 8);
    assert_eq!(calls(&server, "lrange"), 8);
    assert_eq!(calls(&server, "incr"), 7);
    assert_eq!(call(&server, &["GET", "counter"]).as_str(), Some("7"));
    let doc = read_json(&json_path);
    let stats = &doc["ALL STATS"];
    for (row, n) in [
        ("Hsets", 8),
        ("Rpushs", 8),
        ("Lranges", 8),
        ("Gets", 8),
        ("Incrs", 7),
        ("Pings", 7),
        ("Sadds", 7),
        ("Sets", 7),
        ("Totals", 60),
    ] {
        assert_eq!(stats[row]["Count"], n, "{row}");
    }
    assert!(stdout.contains("Lranges"), "{stdout}");
    // The wrong-arity SET failed every time: errors of SET; the nil GETs are misses.
    let result = result_json(&out);
    let ops = result["results"]["ops"].as_array().unwrap();
    let returns = |name: &str| {
        ops.iter()
            .find(|op| op["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {ops:?}"))["returns"]
            .clone()
    };
    assert_eq!(returns("SET"), serde_json::json!({"ERROR": 7}));
    assert_eq!(returns("GET"), serde_json::json!({"NOT_FOUND": 8}));
    assert_eq!(returns("PING"), serde_json::json!({"OK": 7}));
    server.stop().unwrap();
}

#[test]
fn memtiers_refusals_exit_2_with_the_reason() {
    for (args, message) in [
        (
            &["--command=get __key__", "-P", "memcache_text"][..],
            "redis protocols",
        ),
        (
            &["--command=get __key__", "--ratio=1:1"][..],
            "ratio is configured with --command-ratio",
        ),
        (
            &["--command=get __key__", "--key-pattern=S:S"][..],
            "key pattern is configured with --command-key-pattern",
        ),
        (
            &["--command-ratio=3", "--command=get __key__"][..],
            "no arbitrary command found",
        ),
        (
            // memtier 2.3.0: "error: data placeholder can't combined with other data".
            &["--command=set k __data__x"][..],
            "cannot be combined with other data",
        ),
        (&["--command=set \"k v"][..], "unbalanced double quotes"),
        (
            &[
                "--command=get __key__",
                "--command-key-pattern=P",
                "--command=ping",
            ][..],
            "parallel key-pattern must be configured to all commands",
        ),
        (
            &["--wait-ratio=1:1", "-P", "memcache_text"][..],
            "redis protocols",
        ),
        (&["--wait-timeout=10-20"][..], "--wait-ratio"),
    ] {
        // Refused before any connection: the port is never used.
        let o = memtier_on("1", args);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// memtier's WAIT schedule (`client::create_request`) for `requests` requests of one
/// client with `--ratio=SETS:GETS` and `--wait-ratio=WSETS:WAITS`: how many WAITs and
/// SETs it sends.
fn wait_schedule(requests: u64, ratio: (u32, u32), wait: (u64, u64)) -> (u64, u64) {
    let (mut waits, mut sets, mut in_sets, mut in_gets) = (0u64, 0u64, 0, 0);
    for _ in 0..requests {
        if waits == 0 || sets / waits > wait.0 / wait.1 {
            waits += 1;
            continue;
        }
        if in_sets == ratio.0 && in_gets == ratio.1 {
            (in_sets, in_gets) = (0, 0);
        }
        if in_sets < ratio.0 {
            in_sets += 1;
            sets += 1;
        } else {
            in_gets += 1;
        }
    }
    (waits, sets)
}

#[test]
fn waits_reach_a_real_replica_and_have_their_own_row() {
    let master = redis("");
    let replica = redis(&format!("replicaof=127.0.0.1 {}", master.port()));
    let start = Instant::now();
    loop {
        let info = call(&replica, &["INFO", "replication"]);
        if info.as_str().unwrap().contains("master_link_status:up") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the replica never linked: {info:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let port = master.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("m.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let o = memtier_on(
        &port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "40",
            "--ratio=1:1",
            "--wait-ratio=1:1",
            "--num-slaves=1-1",
            "--wait-timeout=2000-3000",
            "--key-maximum=100",
            "--hide-histogram",
            &json_arg,
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let (waits, sets) = wait_schedule(40, (1, 1), (1, 1));
    assert_eq!(calls(&master, "wait"), 2 * waits);
    assert_eq!(calls(&master, "set"), 2 * sets);
    let row = all_stats_row(&stdout, "Waits");
    assert_ne!(row[1], "0.00", "{stdout}");
    let doc = read_json(&json_path);
    assert_eq!(doc["ALL STATS"]["Waits"]["Count"], 2 * waits);
    assert_eq!(doc["ALL STATS"]["Totals"]["Count"], 80);
    // The replica holds what the master holds.
    let start = Instant::now();
    while int(&replica, &["DBSIZE"]) != int(&master, &["DBSIZE"]) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the replica lags"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    replica.stop().unwrap();
    master.stop().unwrap();
}

#[test]
fn in_a_cluster_each_command_goes_to_its_first_keys_master() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let port = cluster.addrs()[0].port().to_string();
    // P for every command: the 2 clients write keys 1..=400 once each, then read them.
    let o = memtier_on(
        &port,
        &[
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "400",
            "--command=set __key__ __data__",
            "--command-key-pattern=P",
            "--command=get __key__",
            "--command-key-pattern=P",
            "--command=ping",
            "--command-key-pattern=P",
            "--key-minimum=1",
            "--key-maximum=400",
            "--max-errors=0",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let total = |name: &str| -> u64 { cluster.nodes().iter().map(|n| calls(n, name)).sum() };
    // Per client: 400 requests over SET, GET, PING (the first round sends SET twice);
    // kvlab's connections also PING the nodes as they connect.
    assert_eq!((total("set"), total("get")), (2 * 134, 2 * 133));
    assert!(total("ping") >= 2 * 133);
    let mut keys = 0;
    for node in cluster.nodes() {
        let n = int(node, &["DBSIZE"]);
        assert!(n > 0, "no keys on {}", node.addr());
        keys += n;
    }
    assert_eq!(keys, 2 * 134, "every SET went to its key's master");
    assert!(all_stats_row(&stdout, "Pings")[1].parse::<f64>().unwrap() > 0.0);
}

#[test]
fn run_sends_commands_to_redis_and_reports_them_by_name() {
    let server = redis("");
    let url = format!("redis://127.0.0.1:{}", server.port());
    let o = common::kvlab(&[
        "run",
        "--db",
        "redis",
        "--url",
        &url,
        "--threads",
        "1",
        "--connections",
        "2",
        "--requests",
        "50",
        "--command=set __key__ __data__",
        "--command-ratio=2",
        "--command=get __key__",
        "--progress",
        "never",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    // Per connection: SET ×3, GET, then 15 rounds of SET SET GET, and a SET.
    assert_eq!((calls(&server, "set"), calls(&server, "get")), (68, 32));
    assert_eq!(common::report_u64(&stdout, "SET", "Operations"), 68);
    assert_eq!(common::report_u64(&stdout, "GET", "Operations"), 32);
    // A store that cannot send commands is refused by the capability check.
    let db = tempfile::tempdir().unwrap();
    let o = common::kvlab(&[
        "run",
        "--db",
        "rocksdb",
        "--path",
        db.path().to_str().unwrap(),
        "--command=get __key__",
        "--progress",
        "never",
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the rocksdb store cannot; the redis store can"),
        "{stderr}"
    );
    server.stop().unwrap();
}

#[test]
fn a_key_inside_a_longer_argument_is_substituted_as_memtier_does() {
    // memtier_benchmark 2.3.0, `-t 1 -c 1 -n 5 --command="hset h:__key__:x f __data__"
    // --command-key-pattern=S --key-maximum=100 -d 4`, left the keys h:memtier-0:x …
    // h:memtier-4:x, each with field f = xxxx; its table had only Hsets and Totals rows
    // and no Hits/sec or Misses/sec column.
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
            "5",
            "--command=hset h:__key__:x f __data__",
            "--command-key-pattern=S",
            "--key-maximum=100",
            "-d",
            "4",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let mut keys: Vec<String> = call(&server, &["KEYS", "*"])
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    keys.sort();
    let want: Vec<String> = (0..5).map(|i| format!("h:memtier-{i}:x")).collect();
    assert_eq!(keys, want);
    assert_eq!(
        call(&server, &["HGET", "h:memtier-3:x", "f"]).as_str(),
        Some("xxxx")
    );
    let header = stdout
        .lines()
        .find(|l| l.starts_with("Type"))
        .unwrap_or_else(|| panic!("no header in {stdout}"));
    let columns: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        columns,
        [
            "Type",
            "Ops/sec",
            "Avg. Latency",
            "p50 Latency",
            "p99 Latency",
            "p99.9 Latency",
            "KB/sec"
        ]
    );
    server.stop().unwrap();
}

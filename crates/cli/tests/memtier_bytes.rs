//! `kvlab memtier`'s byte counts (the `KB/sec` column, the JSON's `Bytes RX`/`Bytes TX`
//! and `KB/sec RX`/`TX`, `--client-stats`' `Total Bytes`) are the bytes on the wire, as
//! memtier_benchmark counts them: checked against what the server itself counted —
//! redis-server's `total_net_input_bytes`/`total_net_output_bytes` and memcached's
//! `bytes_read`/`bytes_written` — over RESP, memcached's text and binary protocols,
//! pipelined or not, with hits, misses and multi-key GETs.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use kvlab_spawn::{Server, ServerKind};
use serde_json::Value;

use crate::common::servers::start;
use crate::common::{all_stats_row, memtier_on, text};

/// `INFO stats` as a client sends it in RESP: 25 bytes the server counts as input.
const REDIS_INFO: &[u8] = b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n";
/// memcached's `stats` command: 7 bytes.
const MEMCACHED_STATS: &[u8] = b"stats\r\n";

/// What a server had counted when asked: bytes read from clients and written to them,
/// and the size of the reply to this very query (which the server counts as written
/// only after it answered, so the next query's figure includes it).
struct Counted {
    input: u64,
    output: u64,
    reply_bytes: u64,
}

fn field(text: &str, prefix: &str) -> u64 {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

/// Sends `query` on a new connection and reads the reply until `done` says it is whole.
fn ask(addr: SocketAddr, query: &[u8], done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(query).unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 65536];
    while !done(&reply) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the server closed the connection");
        reply.extend_from_slice(&buf[..n]);
    }
    reply
}

/// redis-server's `total_net_input_bytes` and `total_net_output_bytes`.
fn redis_counted(server: &Server) -> Counted {
    // A bulk string: `$LEN\r\n`, LEN bytes, `\r\n`.
    let whole = |r: &[u8]| {
        let Some(eol) = r.windows(2).position(|w| w == b"\r\n") else {
            return false;
        };
        let len: usize = std::str::from_utf8(&r[1..eol]).unwrap().parse().unwrap();
        r.len() == eol + 2 + len + 2
    };
    let reply = ask(server.addr(), REDIS_INFO, whole);
    let info = String::from_utf8_lossy(&reply);
    Counted {
        input: field(&info, "total_net_input_bytes:"),
        output: field(&info, "total_net_output_bytes:"),
        reply_bytes: reply.len() as u64,
    }
}

/// memcached's `bytes_read` and `bytes_written`.
fn memcached_counted(server: &Server) -> Counted {
    let reply = ask(server.addr(), MEMCACHED_STATS, |r| r.ends_with(b"END\r\n"));
    let stats = String::from_utf8_lossy(&reply);
    Counted {
        input: field(&stats, "STAT bytes_read "),
        output: field(&stats, "STAT bytes_written "),
        reply_bytes: reply.len() as u64,
    }
}

/// The server's counts once they hold every reply its clients already have: memcached
/// adds a reply's bytes to `bytes_written` only after sending it, from the thread that
/// served the connection, so a reply already read (the readiness probe's `VERSION …`,
/// kvlab's last) can be missing from the next `stats`. Asks until two answers in a row
/// differ by exactly the first query and its reply, twice running; returns the last
/// answer and the bytes the queries before it moved (in, out).
fn settled(server: &Server, counted: fn(&Server) -> Counted, query: u64) -> (Counted, u64, u64) {
    let mut last = counted(server);
    let (mut sent, mut got) = (0, 0);
    let mut steady = 0;
    for _ in 0..200 {
        let next = counted(server);
        sent += query;
        got += last.reply_bytes;
        if next.input - last.input == query && next.output - last.output == last.reply_bytes {
            steady += 1;
            // Twice in a row: a reply counted late can make one pair agree by chance.
            if steady == 2 {
                return (next, sent, got);
            }
        } else {
            steady = 0;
        }
        last = next;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("the server's byte counts did not settle");
}

/// Bytes received and sent by a row of the JSON, added up over its `Time-Serie`.
fn series_bytes(doc: &Value, row: &str) -> (u64, u64) {
    let series = doc["ALL STATS"][row]["Time-Serie"].as_object().unwrap();
    let sum = |key: &str| series.values().map(|p| p[key].as_u64().unwrap()).sum();
    (sum("Bytes RX"), sum("Bytes TX"))
}

/// Bytes received and sent in all `--client-stats` files under `dir` (SETs and GETs).
fn client_stats_bytes(dir: &std::path::Path) -> (u64, u64) {
    let (mut rx, mut tx) = (0, 0);
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let csv = std::fs::read_to_string(&path).unwrap();
        for row in csv.lines().skip(2).take_while(|l| !l.is_empty()) {
            let c: Vec<u64> = row
                .split(',')
                .map(|v| v.parse::<f64>().unwrap() as u64)
                .collect();
            // SET Total Bytes TX, RX; GET Total Bytes TX, RX.
            tx += c[4] + c[9];
            rx += c[5] + c[10];
        }
    }
    (rx, tx)
}

/// Runs `kvlab memtier` against `server` with `flags` and checks that every byte figure
/// it reports is what the server counted; returns the JSON document and the table.
fn run_and_check(
    server: &Server,
    counted: fn(&Server) -> Counted,
    query_bytes: u64,
    flags: &[&str],
) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let json_arg = format!("--json-out-file={}", json.display());
    let stats_arg = format!("--client-stats={}", dir.path().join("cs").display());
    let (before, _, _) = settled(server, counted, query_bytes);
    let mut args = vec![
        "-t",
        "1",
        "-c",
        "2",
        "--no-server-queries",
        "--hide-histogram",
        &json_arg,
        &stats_arg,
    ];
    args.extend_from_slice(flags);
    let o = memtier_on(&server.port().to_string(), &args);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let (after, queries_in, queries_out) = settled(server, counted, query_bytes);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (rx, tx) = series_bytes(&doc, "Totals");
    let (set_rx, set_tx) = series_bytes(&doc, "Sets");
    let (get_rx, get_tx) = series_bytes(&doc, "Gets");
    assert_eq!((set_rx + get_rx, set_tx + get_tx), (rx, tx));
    // The server read kvlab's requests and the queries since `before`; it wrote kvlab's
    // replies and the replies to `before` and to the queries after it but the last.
    assert_eq!(
        (
            after.input - before.input - queries_in - query_bytes,
            after.output - before.output - before.reply_bytes - queries_out
        ),
        (tx, rx),
        "server-counted (input, output) vs kvlab's (TX, RX) with {flags:?}"
    );
    assert_eq!(client_stats_bytes(dir.path()), (rx, tx), "{flags:?}");
    // The table's KB/sec is the JSON's, which is the bytes over the run's time.
    let totals = &doc["ALL STATS"]["Totals"];
    // The run's time, as precise as the JSON has it: requests over requests per second.
    let secs = totals["Count"].as_f64().unwrap() / totals["Ops/sec"].as_f64().unwrap();
    let kb = totals["KB/sec"].as_f64().unwrap();
    assert_eq!(
        all_stats_row(&stdout, "Totals").last().unwrap(),
        &format!("{kb:.2}")
    );
    let expected = (rx + tx) as f64 / 1024.0 / secs;
    assert!(
        (kb - expected).abs() <= 0.01 + expected * 0.001,
        "KB/sec {kb} vs {rx} + {tx} bytes in {secs} s"
    );
    (doc, stdout)
}

#[test]
fn redis_bytes_are_what_the_server_counted() {
    let server = start(ServerKind::Redis, "");
    let q = REDIS_INFO.len() as u64;
    // Hits and misses, one request in flight per connection, then four.
    for pipeline in ["1", "4"] {
        run_and_check(
            &server,
            redis_counted,
            q,
            &[
                "-n",
                "200",
                "--ratio=1:3",
                "--key-maximum=100",
                "--pipeline",
                pipeline,
            ],
        );
    }
    // Multi-key GETs (MGET) and SETEX.
    run_and_check(
        &server,
        redis_counted,
        q,
        &[
            "-n",
            "150",
            "--ratio=1:6",
            "--multi-key-get=3",
            "--key-maximum=100",
            "--expiry-range=100-200",
        ],
    );
    // GETs that all miss still move bytes: the requests, and the `$-1` replies.
    let (doc, stdout) = run_and_check(
        &server,
        redis_counted,
        q,
        &["-n", "100", "--ratio=0:1", "--key-prefix=absent-"],
    );
    let (rx, tx) = series_bytes(&doc, "Gets");
    // 200 GETs of `absent-N` keys: `*2\r\n$3\r\nGET\r\n$L\r\nabsent-N\r\n`, and 5 bytes back.
    assert_eq!(rx, 200 * 5);
    assert!(tx > 200 * 30, "{tx}");
    let gets = all_stats_row(&stdout, "Gets");
    assert!(
        gets.last().unwrap().parse::<f64>().unwrap() > 0.0,
        "{stdout}"
    );
}

#[test]
fn memcached_bytes_are_what_the_server_counted() {
    let server = start(ServerKind::Memcached, "");
    let q = MEMCACHED_STATS.len() as u64;
    for protocol in ["memcache_text", "memcache_binary"] {
        for pipeline in ["1", "3"] {
            run_and_check(
                &server,
                memcached_counted,
                q,
                &[
                    "-P",
                    protocol,
                    "-n",
                    "200",
                    "--ratio=1:3",
                    "--key-maximum=100",
                    "--pipeline",
                    pipeline,
                    "--expiry-range=100-200",
                ],
            );
        }
        run_and_check(
            &server,
            memcached_counted,
            q,
            &[
                "-P",
                protocol,
                "-n",
                "120",
                "--ratio=1:4",
                "--multi-key-get=2",
                "--key-maximum=100",
            ],
        );
        // All misses: memcached answers `END\r\n` (text) or a 24-byte header with
        // status 1 and the 9-byte "Not found" body (binary).
        let (doc, _) = run_and_check(
            &server,
            memcached_counted,
            q,
            &[
                "-P",
                protocol,
                "-n",
                "50",
                "--ratio=0:1",
                "--key-prefix=absent-",
            ],
        );
        let per_miss = if protocol == "memcache_text" { 5 } else { 33 };
        assert_eq!(series_bytes(&doc, "Gets").0, 100 * per_miss, "{protocol}");
    }
}

//! memtier_benchmark's data options on `kvlab memtier` against real servers:
//! `--data-offset` (SETRANGE/GETRANGE), checked through a separate connection.

use kvlab_spawn::{Server, ServerKind, ServerSpec};

mod common;
use common::{all_stats_row, memtier_on, text};

fn start(kind: ServerKind, spec: &str) -> Server {
    Server::start(&ServerSpec::parse(kind, spec).unwrap()).unwrap()
}

/// A Redis command's reply, over a connection of its own.
fn redis(server: &Server, args: &[&str]) -> kvlab_spawn::resp::Value {
    kvlab_spawn::resp::command(server.addr(), args).unwrap()
}

/// `calls` of a command in Redis' `INFO commandstats`.
fn calls(server: &Server, command: &str) -> u64 {
    let info = redis(server, &["INFO", "commandstats"]);
    let info = info.as_str().unwrap().to_string();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:calls=")))
        .map_or(0, |v| v.split(',').next().unwrap().parse().unwrap())
}

#[test]
fn a_data_offset_writes_values_that_far_into_their_strings_and_reads_them_back_there() {
    let server = start(ServerKind::Redis, "");
    // 50 keys, each SET then GET once: SETRANGE key 100 value, GETRANGE key 100 -1.
    let o = memtier_on(
        &server.port().to_string(),
        &[
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "100",
            "--ratio=1:1",
            "--key-pattern=S:S",
            "--key-minimum=1",
            "--key-maximum=50",
            "-d",
            "40",
            "--data-offset=100",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        (calls(&server, "setrange"), calls(&server, "getrange")),
        (50, 50)
    );
    assert_eq!((calls(&server, "set"), calls(&server, "get")), (0, 0));
    // Every GET found its key (a GETRANGE reply is a string).
    let gets = all_stats_row(&stdout, "Gets");
    assert_eq!(gets[3], "0.00", "no misses: {gets:?}");
    for key in ["memtier-1", "memtier-50"] {
        assert_eq!(redis(&server, &["STRLEN", key]).as_int(), Some(140));
        let head = redis(&server, &["GETRANGE", key, "0", "99"]);
        let zeros = kvlab_spawn::resp::Value::Bulk(Some(vec![0u8; 100]));
        assert_eq!(head, zeros, "zero bytes before the offset");
        let value = redis(&server, &["GETRANGE", key, "100", "-1"]);
        assert_eq!(value.as_str(), Some("x".repeat(40).as_str()));
    }
    assert_eq!(redis(&server, &["DBSIZE"]).as_int(), Some(50));
}

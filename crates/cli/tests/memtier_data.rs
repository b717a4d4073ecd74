//! memtier_benchmark's data options on `kvlab memtier` against real servers:
//! `--data-offset` (SETRANGE/GETRANGE), `--data-import` with `--generate-keys` and
//! `--no-expiry`, and `--data-verify`/`--verify-only` — checked through separate
//! connections, with keys changed behind kvlab's back.

use std::path::Path;

use kvlab_spawn::{Server, ServerKind};
use kvlab_workload::memtier::{write_import_item, IMPORT_HEADER};

use crate::common;
use common::servers::{call, calls, memcached_reply, start};
use common::{all_stats_row, memtier_on, text};

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
        assert_eq!(call(&server, &["STRLEN", key]).as_int(), Some(140));
        let head = call(&server, &["GETRANGE", key, "0", "99"]);
        let zeros = kvlab_spawn::resp::Value::Bulk(Some(vec![0u8; 100]));
        assert_eq!(head, zeros, "zero bytes before the offset");
        let value = call(&server, &["GETRANGE", key, "100", "-1"]);
        assert_eq!(value.as_str(), Some("x".repeat(40).as_str()));
    }
    assert_eq!(call(&server, &["DBSIZE"]).as_int(), Some(50));
}

/// Item `i` of the import file: key `imp-i`, a value with a quote and a comma.
fn item(i: usize) -> (String, String) {
    (
        format!("imp-{i}"),
        format!("value \"{i}\", {}", "v".repeat(i)),
    )
}

/// An import file of `n` items (memtier's own writer format), each with `exptime`.
fn import_file(dir: &Path, n: usize, exptime: u32) -> String {
    let path = dir.join("dump.csv");
    let mut file = format!("{IMPORT_HEADER}\n").into_bytes();
    for i in 0..n {
        let (k, v) = item(i);
        write_import_item(&mut file, k.as_bytes(), v.as_bytes(), exptime).unwrap();
    }
    std::fs::write(&path, file).unwrap();
    format!("--data-import={}", path.display())
}

/// The value of `key`, through a connection of kvlab's own.
fn value_of(server: &Server, kind: ServerKind, key: &str) -> Option<String> {
    match kind {
        ServerKind::Memcached => {
            let reply = memcached_reply(server, &format!("get {key}\r\n"));
            let mut lines = reply.split("\r\n");
            lines
                .next()
                .filter(|l| l.starts_with("VALUE"))
                .and(lines.next().map(str::to_string))
        }
        _ => call(server, &["GET", key]).as_str().map(str::to_string),
    }
}

#[test]
fn imported_objects_are_written_read_and_verified_and_changed_keys_fail() {
    let dir = tempfile::tempdir().unwrap();
    let import = import_file(dir.path(), 30, 0);
    for (kind, spec, protocol) in [
        (ServerKind::Redis, "", "redis"),
        (ServerKind::Memcached, "m=64", "memcache_text"),
    ] {
        let server = start(kind, spec);
        let port = server.port().to_string();
        let json = dir.path().join(format!("{protocol}.json"));
        let json_arg = format!("--json-out-file={}", json.display());
        // 60 requests at 1:1 with S:S: each imported item SET, then its key read.
        let flags = [
            "-P",
            protocol,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "60",
            "--ratio=1:1",
            "--key-pattern=S:S",
            "--hide-histogram",
            &import,
        ];
        let o = memtier_on(&port, &[&flags[..], &["--data-verify", &json_arg]].concat());
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{protocol}: {stderr}");
        assert!(stderr.contains("keys read."), "{stderr}");
        let gets = all_stats_row(&stdout, "Gets");
        assert_eq!(
            gets[3], "0.00",
            "{protocol}: every GET found its key: {gets:?}"
        );
        assert!(
            stdout.contains(
                "\n\nPerforming data verification...\nData verification completed:\n\
                 30         keys verified successfuly.\n0          keys failed.\n"
            ),
            "{protocol}: {stdout}"
        );
        for i in [0, 7, 29] {
            let (k, v) = item(i);
            assert_eq!(value_of(&server, kind, &k), Some(v), "{protocol} {k}");
        }
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(
            doc["client verifications results"],
            serde_json::json!({"keys verified successfuly": 30, "keys failed": 0})
        );
        assert_eq!(doc["ALL STATS"]["Sets"]["Count"], serde_json::json!(30));
        // The file's own keys: memtier leaves its default prefix and maximum unset.
        let config = &doc["configuration"];
        assert_eq!(
            (&config["key_prefix"], &config["key_maximum"]),
            (&serde_json::Value::Null, &serde_json::json!(0)),
            "{protocol}"
        );

        // Change one key and delete another behind kvlab's back.
        match kind {
            ServerKind::Memcached => {
                memcached_reply(&server, "set imp-5 0 0 5\r\nwrong\r\n");
                memcached_reply(&server, "delete imp-7\r\n");
            }
            _ => {
                call(&server, &["SET", "imp-5", "wrong"]);
                call(&server, &["DEL", "imp-7"]);
            }
        }
        let o = memtier_on(&port, &[&flags[..], &["--verify-only"]].concat());
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{protocol}: {stdout}\n{stderr}");
        assert!(
            !stdout.contains("ALL STATS"),
            "no test with --verify-only: {stdout}"
        );
        assert!(
            stdout.contains("28         keys verified successfuly.\n2          keys failed.\n"),
            "{protocol}: {stdout}"
        );
        let (_, v5) = item(5);
        assert!(
            stderr.contains(&format!("error: key [imp-5]: expected [{v5}], got [wrong]")),
            "{stderr}"
        );
        let (_, v7) = item(7);
        assert!(
            stderr.contains(&format!("error: key [imp-7]: expected [{v7}], got []")),
            "{stderr}"
        );
    }
}

#[test]
fn imported_values_under_generated_keys_with_or_without_their_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let import = import_file(dir.path(), 10, 1000);
    let server = start(ServerKind::Redis, "");
    let port = server.port().to_string();
    let run = |extra: &[&str]| {
        let flags = [
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10",
            "--ratio=1:0",
            "--hide-histogram",
        ];
        let o = memtier_on(&port, &[&flags[..], &[import.as_str()], extra].concat());
        assert!(o.status.success(), "{}", text(&o).1);
    };
    // The file's keys, and its exptime as each SET's time to live.
    run(&[]);
    let ttl = call(&server, &["TTL", "imp-3"]).as_int().unwrap();
    assert!((990..=1000).contains(&ttl), "{ttl}");
    // Generated keys gen-1…gen-10 in order, without expiry.
    run(&[
        "--generate-keys",
        "--no-expiry",
        "--key-prefix=gen-",
        "--key-minimum=1",
        "--key-maximum=10",
        "--key-pattern=S:S",
    ]);
    assert_eq!(call(&server, &["TTL", "gen-1"]).as_int(), Some(-1));
    assert_eq!(
        value_of(&server, ServerKind::Redis, "gen-1"),
        Some(item(0).1)
    );
    assert_eq!(
        value_of(&server, ServerKind::Redis, "gen-10"),
        Some(item(9).1)
    );
    assert_eq!(call(&server, &["DBSIZE"]).as_int(), Some(20));
    // memtier_benchmark 2.3.0 refuses it after parsing its flags: `error: use
    // data-verify only with data-import`, exit code 1.
    let o = memtier_on(&port, &["--data-verify"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("use data-verify only with data-import"));
}

//! `kvlab crash`: embedded engines loaded in a child process killed with SIGKILL (and
//! servers killed under their loader, then started again), then every acknowledged write
//! checked — with each engine's durability setting deciding
//! what a killed process keeps: RocksDB keeps everything with its write-ahead log and
//! loses its memtable without it; WiredTiger keeps every commit when its log is synced
//! and loses them all without a log; LMDB keeps every commit, synced or not. With
//! `--power-loss` the kill is also a power cut, and only what was synced survives.

use serde_json::Value;

use crate::common::{kvlab, text};

/// `kvlab crash` on `store` with `options` (a `--path` of its own for an embedded store),
/// killing at 1–1.5 s: its exit code, `crash.json`, and what it printed.
fn crash(store: &str, options: &[&str]) -> (Option<i32>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let out = dir.path().join("out");
    let mut args = vec![
        "crash",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=300000",
        "--db",
        store,
        "--out",
        out.to_str().unwrap(),
    ];
    // A time unless the case counts writes: on a busy machine a synced store acknowledges
    // few writes a second, so the cases that need writes wait for them.
    if !options.contains(&"--kill-after-writes") {
        args.extend(["--kill-after", "1s..1500ms"]);
    }
    if !["redis", "memcached"].contains(&store) {
        args.extend(["--path", path.to_str().unwrap()]);
    }
    args.extend(options);
    let o = kvlab(&args);
    let (stdout, stderr) = text(&o);
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("crash.json"))
            .unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}")),
    )
    .unwrap();
    (o.status.code(), doc, format!("{stdout}{stderr}"))
}

fn rounds(doc: &Value) -> &Vec<Value> {
    doc["rounds"].as_array().unwrap()
}

#[test]
fn what_a_killed_writer_leaves_is_checked_write_by_write() {
    // Kept: every acknowledged write recovered, in every round.
    for (store, options) in [
        ("rocksdb", &[][..]),
        ("lmdb", &["-p", "lmdb.sync=none"][..]),
        (
            "wiredtiger",
            &["-p", "wiredtiger.log=true", "-p", "wiredtiger.sync=true"][..],
        ),
    ] {
        let (code, doc, said) = crash(store, &[&["--rounds", "2"][..], options].concat());
        assert_eq!(code, Some(0), "{store} {options:?}: {said}");
        assert_eq!(rounds(&doc).len(), 2, "{doc}");
        for r in rounds(&doc) {
            assert_eq!(r["finished_first"], false, "{store}: {r}");
            let acked = r["acknowledged"].as_u64().unwrap();
            assert!(acked > 100, "{store}: {r}");
            assert_eq!(r["recovered"].as_u64(), Some(acked), "{store}: {r}");
            assert_eq!(r["lost"], 0, "{store}: {r}");
            assert_eq!(r["corrupted"], 0, "{store}: {r}");
            let killed = r["killed_after_s"].as_f64().unwrap();
            assert!((1.0..2.0).contains(&killed), "{store}: {r}");
        }
        assert!(said.contains("[CRASH], Lost, 0"), "{said}");
    }

    // Lost: without a write-ahead log, what a killed process had in memory.
    for (store, option) in [
        ("rocksdb", "rocksdb.wal=false"),
        ("wiredtiger", "wiredtiger.log=false"),
    ] {
        let (code, doc, said) = crash(store, &["--rounds", "2", "-p", option]);
        assert_eq!(code, Some(1), "{store}: {said}");
        for r in rounds(&doc) {
            let acked = r["acknowledged"].as_u64().unwrap();
            let lost = r["lost"].as_u64().unwrap();
            assert!(acked > 100 && lost > 0, "{store}: {r}");
            assert_eq!(
                r["recovered"].as_u64().unwrap() + lost,
                acked,
                "{store}: {r}"
            );
            assert!(!r["first_lost"].as_array().unwrap().is_empty(), "{r}");
        }
        assert_eq!(
            doc["lost"].as_u64().unwrap(),
            rounds(&doc)
                .iter()
                .map(|r| r["lost"].as_u64().unwrap())
                .sum::<u64>()
        );
    }
}

/// A server kvlab started, killed with SIGKILL under a loader and started again on its
/// own directory: Redis keeps what its append-only file holds and nothing without one;
/// memcached keeps nothing.
#[test]
fn a_killed_server_keeps_what_it_persisted() {
    for (store, spawn, kept) in [
        ("redis", "appendonly=yes", true),
        ("redis", "", false),
        ("memcached", "", false),
    ] {
        let (code, doc, said) = crash(
            store,
            &[
                "--spawn",
                spawn,
                "--rounds",
                "1",
                "--kill-after-writes",
                "300",
            ],
        );
        assert_eq!(code, Some(if kept { 0 } else { 1 }), "{said}");
        assert!(said.contains("server killed after"), "{said}");
        let r = &rounds(&doc)[0];
        let acked = r["acknowledged"].as_u64().unwrap();
        assert!(acked >= 300, "{store} {spawn}: {r}");
        // Read once the server had loaded what it kept (a read during Redis' loading
        // fails with -LOADING).
        assert_eq!(r["errors"], 0, "{store} {spawn}: {r}");
        let lost = if kept { 0 } else { acked };
        assert_eq!(r["lost"].as_u64(), Some(lost), "{store} {spawn}: {r}");
        assert_eq!(
            r["recovered"].as_u64(),
            Some(acked - lost),
            "{store} {spawn}: {r}"
        );
    }
}

/// What `kvlab crash` cannot test is refused, and a damaged log is named with its line.
/// `--power-loss`: the kill is also a power cut, so what was not synced is lost — where
/// a killed process loses nothing. Each engine's sync setting decides: RocksDB's WAL
/// without `sync` and LMDB's `MDB_NOSYNC` and WiredTiger's unsynced log lose every
/// acknowledged write of the round (the kill comes at the 300th acknowledged write,
/// before any of them synced), their
/// synced settings none; a Redis server writing its AOF under the cut (`dir` on the
/// mount) keeps every write with `appendfsync always` and the first second's with
/// `everysec`.
#[test]
fn a_power_cut_loses_what_was_not_synced() {
    for (store, options, keeps) in [
        ("rocksdb", &["-p", "rocksdb.sync=true"][..], true),
        ("rocksdb", &[][..], false),
        ("lmdb", &[][..], true),
        ("lmdb", &["-p", "lmdb.sync=none"][..], false),
        (
            "wiredtiger",
            &["-p", "wiredtiger.log=true", "-p", "wiredtiger.sync=true"][..],
            true,
        ),
        ("wiredtiger", &["-p", "wiredtiger.log=true"][..], false),
    ] {
        let (code, doc, said) = crash(
            store,
            &[
                &[
                    "--rounds",
                    "1",
                    "--power-loss",
                    "--kill-after-writes",
                    "300",
                ][..],
                options,
            ]
            .concat(),
        );
        let tag = format!("{store} {options:?}");
        assert_eq!(doc["power_loss"], true, "{tag}");
        let r = &rounds(&doc)[0];
        assert_eq!(r["finished_first"], false, "{tag}: {r}");
        let acked = r["acknowledged"].as_u64().unwrap();
        assert!(acked >= 300, "{tag}: {r}");
        assert_eq!(r["corrupted"], 0, "{tag}: {r}");
        assert!(said.contains("power cut: "), "{tag}: {said}");
        assert!(said.contains("| unsynced bytes |"), "{tag}: {said}");
        if keeps {
            assert_eq!(code, Some(0), "{tag}: {said}");
            assert_eq!(r["recovered"].as_u64(), Some(acked), "{tag}: {r}");
        } else {
            assert_eq!(code, Some(1), "{tag}: {said}");
            assert_eq!(r["lost"].as_u64(), Some(acked), "{tag}: {r}");
            assert!(r["unsynced_bytes"].as_u64().unwrap() > 0, "{tag}: {r}");
        }
    }
    // Redis' AOF synced once a second: a power cut loses the writes of the last second or
    // so, not those before — where a killed server loses none.
    let (code, doc, said) = crash(
        "redis",
        &[
            "--rounds",
            "1",
            "--power-loss",
            "--spawn",
            "appendonly=yes,appendfsync=everysec",
        ],
    );
    let r = &rounds(&doc)[0];
    let (acked, lost) = (
        r["acknowledged"].as_u64().unwrap(),
        r["lost"].as_u64().unwrap(),
    );
    assert_eq!(code, Some(1), "{said}");
    assert!(0 < lost && lost < acked, "{r}");
    assert_eq!(r["recovered"].as_u64(), Some(acked - lost), "{r}");
}

#[test]
fn crash_tests_refuse_what_they_cannot_check() {
    let o = kvlab(&[
        "crash",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "memcached",
        "--spawn",
        "m=64",
        "--power-loss",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("memcached keeps none"), "{err}");
    let o = kvlab(&["crash", "-P", "workloads/ycsb/workloada", "--db", "moka"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("embedded store"), "{err}");
    let o = kvlab(&[
        "crash",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "redis",
        "--url",
        "redis://127.0.0.1:1",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("give --spawn"), "{err}");
    let o = kvlab(&[
        "crash",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "rocksdb",
        "--path",
        "/tmp/unused",
        "--metrics",
        "127.0.0.1:0",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--metrics does not apply to kvlab crash"),
        "{err}"
    );
    let o = kvlab(&["crash", "-P", "workloads/ycsb/workloada", "--db", "rocksdb"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("needs --path"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("acked.log");
    std::fs::write(&log, "I\tuser1\nX user2\n").unwrap();
    let db = dir.path().join("db");
    let o = kvlab(&[
        "verify",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--expected-log",
        log.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("acked.log:2: expected `I`, `U` or `D`"),
        "{err}"
    );
}

/// A round tests something only when writes were acknowledged before the kill: one whose
/// writer finished first is untested (`tested: false`, `untested_rounds`), and a crash
/// test none of whose rounds tested anything fails instead of passing.
#[test]
fn a_round_that_tested_nothing_is_untested_not_passed() {
    let (code, doc, said) = crash("rocksdb", &["--rounds", "1", "-p", "recordcount=50"]);
    assert_eq!(code, Some(1), "{said}");
    let r = &rounds(&doc)[0];
    assert_eq!(r["finished_first"], true, "{r}");
    assert_eq!(r["tested"], false, "{r}");
    assert_eq!(doc["untested_rounds"], 1, "{doc}");
    assert!(said.contains("[CRASH], UntestedRounds, 1"), "{said}");
    assert!(
        said.contains("none of the 1 rounds tested anything"),
        "{said}"
    );
}

/// `--kill-after-writes N`: the writer dies once it has acknowledged N writes, however
/// long its store takes to open — the clock is the writes, not the wall.
#[test]
fn kill_after_writes_kills_once_that_many_writes_were_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Stores set to keep every acknowledged write, WiredTiger the slowest to open.
    for (store, options) in [
        (
            "wiredtiger",
            &["-p", "wiredtiger.log=true", "-p", "wiredtiger.sync=true"][..],
        ),
        ("lmdb", &[][..]),
    ] {
        let path = dir.path().join(store);
        let o = kvlab(
            &[
                &[
                    "crash",
                    "-P",
                    "workloads/ycsb/workloada",
                    "-p",
                    "recordcount=300000",
                    "--db",
                    store,
                    "--path",
                    path.to_str().unwrap(),
                    "--rounds",
                    "2",
                    "--kill-after-writes",
                    "2000",
                    "--out",
                    out.to_str().unwrap(),
                    "--overwrite",
                ][..],
                options,
            ]
            .concat(),
        );
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{store}: {stdout}{stderr}");
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("crash.json")).unwrap())
                .unwrap();
        assert_eq!(doc["kill_after_writes"], 2000, "{doc}");
        assert_eq!(doc["untested_rounds"], 0, "{doc}");
        for r in rounds(&doc) {
            assert_eq!(r["tested"], true, "{store}: {r}");
            assert_eq!(r["finished_first"], false, "{store}: {r}");
            // Killed at the 2 000th acknowledged write or a little after (the log grows a
            // batch at a time, and the kill takes a moment), far from all 300 000.
            let acked = r["acknowledged"].as_u64().unwrap();
            assert!((2000..300_000).contains(&acked), "{store}: {r}");
            assert_eq!(r["lost"], 0, "{store}: {r}");
        }
    }
}

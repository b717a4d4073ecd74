//! YCSB's insertion retries (`core_workload_insertion_retry_limit` and `…_interval`)
//! against a real redis-server that refuses writes: `maxmemory 1mb` with
//! `maxmemory-policy noeviction` answers every write past the limit with an OOM error.

use kvlab_report::ResultDocument;
use kvlab_spawn::Server;

use crate::common;
use common::files::result_doc_of;
use common::servers::redis;
use common::{kvlab, report_u64, text};

/// A redis-server that takes at most about one 300 KB record and refuses the rest.
fn full_redis() -> Server {
    redis("maxmemory=1mb,maxmemory-policy=noeviction")
}

/// The INSERT entry of a result's summary.
fn insert_entry(doc: &ResultDocument) -> &kvlab_measure::OpSummary {
    doc.results
        .ops
        .iter()
        .find(|op| op.name == "INSERT")
        .expect("an INSERT entry")
}

/// `kvlab load` of `records` 300 KB records with the given retry properties over
/// `connections` connections of one thread; returns the result document and stdout.
fn load(
    server: &Server,
    records: u64,
    connections: u64,
    limit: u64,
    interval: &str,
) -> (ResultDocument, String) {
    phase("load", &[], server, records, connections, limit, interval)
}

/// [`load`]'s command as `command` (`load` or `run`) with further arguments `extra`.
fn phase(
    command: &str,
    extra: &[&str],
    server: &Server,
    records: u64,
    connections: u64,
    limit: u64,
    interval: &str,
) -> (ResultDocument, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(command);
    let url = format!("redis://{}", server.addr());
    let o = kvlab(
        &[
            &[
                command,
                "-P",
                "workloads/ycsb/workloada",
                "-p",
                &format!("recordcount={records}"),
                "-p",
                "fieldcount=1",
                "-p",
                "fieldlength=300000",
                "-p",
                &format!("core_workload_insertion_retry_limit={limit}"),
                "-p",
                &format!("core_workload_insertion_retry_interval={interval}"),
                "--db",
                "redis",
                "--url",
                &url,
                "--threads",
                "1",
                "--connections",
                &connections.to_string(),
                "--seed",
                "3",
                "--progress",
                "never",
                "--out",
                out.to_str().unwrap(),
            ][..],
            extra,
        ]
        .concat(),
    );
    let doc = result_doc_of(&o, &out);
    let stdout = text(&o).0;
    (doc, stdout)
}

#[test]
fn failed_inserts_are_retried_after_the_interval_and_counted_once() {
    let server = full_redis();
    let (doc, stdout) = load(&server, 6, 1, 2, "0.1");
    // The server never frees memory.
    every_failure_retried_twice(&doc, &stdout, "the server took more than 1 MB");
}

/// Checks a load of 6 records with `core_workload_insertion_retry_limit=2` and an
/// interval of 0.1 s into a store that refuses every insert past its first few, for
/// good (`full` says what more than 3 successes would mean): each key counts once,
/// every failed key failed all three attempts, each retry waited, and only final
/// failures count as errors.
fn every_failure_retried_twice(doc: &ResultDocument, stdout: &str, full: &str) {
    let insert = insert_entry(doc);
    let errors = insert.returns.get("ERROR").copied().unwrap_or(0);
    let ok = insert.returns.get("OK").copied().unwrap_or(0);
    // Each key is one operation, whatever its attempts.
    assert_eq!(insert.operations, 6, "{insert:?}");
    assert_eq!(ok + errors, 6, "{insert:?}");
    assert!(errors >= 3, "{full}: {insert:?}");
    assert_eq!(insert.retries, 2 * errors, "{insert:?}");
    assert_eq!(report_u64(stdout, "INSERT", "Retries"), insert.retries);
    // Each retry waited 0.8–1.2 × 0.1 s.
    assert!(
        doc.results.runtime_ms >= insert.retries as f64 * 80.0,
        "{} retries in {} ms",
        insert.retries,
        doc.results.runtime_ms
    );
    // The failures that count are the final ones.
    assert_eq!(doc.results.errors.values().sum::<u64>(), errors);
}

#[test]
fn a_waiting_client_does_not_hold_up_the_other_clients_of_its_thread() {
    let server = full_redis();
    // Four connections on one thread, three keys each, one retry after ~1 s per
    // failed key. Waiting one client at a time would take at least 0.8 s per retry
    // (≥ 7.2 s); waiting side by side takes about three waits (~3 s), a margin that a
    // loaded machine does not eat.
    let (doc, _) = load(&server, 12, 4, 1, "1");
    let insert = insert_entry(&doc);
    assert_eq!(insert.operations, 12, "{insert:?}");
    assert!(insert.retries >= 9, "{insert:?}");
    let one_at_a_time_ms = insert.retries as f64 * 800.0;
    assert!(
        doc.results.runtime_ms < one_at_a_time_ms,
        "{} retries took {} ms: the clients waited one after another (≥ {one_at_a_time_ms} ms)",
        insert.retries,
        doc.results.runtime_ms
    );
    assert!(
        doc.results.runtime_ms >= 3.0 * 800.0,
        "each client waited three times: {} ms",
        doc.results.runtime_ms
    );
}

#[test]
fn transaction_phase_inserts_are_retried_too() {
    let server = full_redis();
    let (doc, stdout) = phase(
        "run",
        &[
            "-p",
            "insertproportion=1",
            "-p",
            "readproportion=0",
            "-p",
            "updateproportion=0",
            "-p",
            "operationcount=5",
        ],
        &server,
        1000,
        1,
        1,
        "0.05",
    );
    let insert = insert_entry(&doc);
    let errors = insert.returns.get("ERROR").copied().unwrap_or(0);
    assert_eq!(insert.operations, 5, "{insert:?}");
    assert!(errors >= 4, "{insert:?}");
    assert_eq!(insert.retries, errors, "{insert:?}");
    assert_eq!(report_u64(&stdout, "INSERT", "Retries"), errors);
    assert!(doc.results.runtime_ms >= errors as f64 * 40.0);
}

#[test]
fn without_a_retry_limit_nothing_is_retried() {
    let server = full_redis();
    let (doc, stdout) = load(&server, 4, 1, 0, "5");
    let insert = insert_entry(&doc);
    assert_eq!(insert.operations, 4);
    assert_eq!(insert.retries, 0);
    assert!(
        !stdout.contains("Retries"),
        "no Retries line without retries"
    );
    assert!(doc.results.runtime_ms < 4000.0, "nothing waited 5 s");
}

/// An embedded store's client waits on its own thread (the blocking pacer): a real
/// LMDB environment of 1 MiB refuses every 300 KB insert past its map size
/// (`MDB_MAP_FULL`), and keeps refusing them.
#[test]
fn an_embedded_store_retries_on_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("load");
    let db = dir.path().join("lmdb");
    let o = kvlab(&[
        "load",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=6",
        "-p",
        "fieldcount=1",
        "-p",
        "fieldlength=300000",
        "-p",
        "core_workload_insertion_retry_limit=2",
        "-p",
        "core_workload_insertion_retry_interval=0.1",
        "-p",
        "lmdb.map_size=1MiB",
        "--db",
        "lmdb",
        "--path",
        db.to_str().unwrap(),
        "--threads",
        "1",
        "--seed",
        "3",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ]);
    let doc = result_doc_of(&o, &out);
    let stdout = text(&o).0;
    every_failure_retried_twice(&doc, &stdout, "a 1 MiB map took more than 3 records");
}

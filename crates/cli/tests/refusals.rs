//! Where capabilities meet: combinations that once exited 0 having done nothing, ran
//! away, aborted, replaced a file or measured the wrong thing — each now runs as meant or
//! is refused before any work with one sentence naming the option.

use std::path::Path;

use crate::common::files::{shared_data, shared_data_or_skip};
use crate::common::servers;
use crate::common::{kvlab, report_u64, text};

/// Asserts that `o` is a refusal (exit 2) whose one error line contains `says`.
fn refused(o: &std::process::Output, says: &str) {
    let (stdout, stderr) = text(o);
    assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kvlab: error: "))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(line.contains(says), "{says}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

const TINY: [&str; 6] = [
    "-P",
    "workloads/ycsb/workloada",
    "-p",
    "recordcount=20",
    "--progress",
    "never",
];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    [base, extra].concat()
}

#[test]
fn a_cachebench_config_runs_against_a_server_its_size_the_spawned_servers_memory() {
    let Some(config) = shared_data_or_skip("cachebench/cdn/config.json") else {
        return;
    };
    let config = config.to_str().unwrap();
    let scale = [
        "-p",
        "numKeys=2000",
        "-p",
        "numOps=2000",
        "-p",
        "numThreads=1",
        "--progress",
        "never",
    ];
    for (db, spawn, setting) in [
        ("redis", "maxmemory-policy=allkeys-lru", "maxmemory=8192mb"),
        ("memcached", "", "m=8192"),
    ] {
        let o = kvlab(&with(
            &["run", "--cachebench", config, "--db", db, "--spawn", spawn],
            &scale,
        ));
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(0), "{db}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "cacheSizeMB (8192 MB) is the spawned server's memory: {setting}"
            )),
            "{db}: {stderr}"
        );
        let reads = report_u64(&stdout, "READ", "Operations");
        assert!(reads > 0, "{db}: {stdout}");
    }
    // A server's own memory setting wins, and is said to.
    let o = kvlab(&with(
        &[
            "run",
            "--cachebench",
            config,
            "--db",
            "redis",
            "--spawn",
            "maxmemory=64mb",
        ],
        &scale,
    ));
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("is not used: --spawn sets maxmemory"),
        "{stderr}"
    );
}

#[test]
fn sizes_beyond_the_machine_are_refused_with_the_limit_named() {
    // Once an allocation abort (exit 134) and an OOM kill.
    for threads in ["99999999999", "100000"] {
        let o = kvlab(&with(&["run", "--db", "null", "--threads", threads], &TINY));
        refused(&o, &format!("--threads {threads}"));
        let (_, stderr) = text(&o);
        assert!(
            stderr.contains("ulimit") || stderr.contains("MiB of memory"),
            "{stderr}"
        );
    }
    // Connections against the open-file limit.
    let o = kvlab(&with(
        &[
            "run",
            "--db",
            "redis",
            "--url",
            "redis://127.0.0.1:1",
            "--threads",
            "2",
            "--connections",
            "100000000",
        ],
        &TINY,
    ));
    refused(&o, "open files a process may have here");
}

#[test]
fn zero_and_meaningless_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    refused(
        &kvlab(&with(&["run", "--db", "null", "--duration", "0s"], &TINY)),
        "--duration 0 runs for no time",
    );
    refused(
        &kvlab(&with(
            &[
                "run",
                "--db",
                "null",
                "--slo",
                "p99=1ms",
                "--slo-step",
                "0s",
                "--out",
                out,
            ],
            &TINY,
        )),
        "--slo-step 0 runs for no time",
    );
    assert!(!Path::new(out).exists(), "refused before any work");
    refused(
        &kvlab(&with(
            &["run", "--db", "null", "-p", "operationcount=0"],
            &TINY,
        )),
        "operationcount=0: the run would do no operations",
    );
    let trace = shared_data("traces/rocksdb/mixgraph.trace");
    let trace = trace.to_str().unwrap();
    refused(
        &kvlab(&["replay", trace, "--db", "null", "--limit", "0"]),
        "--limit 0 replays no request",
    );
    for rate in ["0", "5", "-1"] {
        let o = kvlab(&[
            "sim",
            trace,
            "--policy",
            "lru",
            "--size",
            "10%",
            "--mrc",
            "--out",
            out,
            &format!("--shards={rate}"),
        ]);
        refused(&o, "--shards");
        assert!(!Path::new(out).exists(), "refused before any work");
    }
}

#[test]
fn a_damaged_trace_replays_every_readable_request_then_fails_at_its_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let Some(trace) = shared_data_or_skip("traces/rocksdb/mixgraph.trace") else {
        return;
    };
    let whole = std::fs::read(trace).unwrap();
    let cut = dir.path().join("cut.trace");
    std::fs::write(&cut, &whole[..1_648_434]).unwrap();
    let o = kvlab(&[
        "replay",
        cut.to_str().unwrap(),
        "--db",
        "null",
        "--speed",
        "max",
        "--progress",
        "never",
    ]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("at byte 1648417"), "{stderr}");
    // `kvlab trace stats` reads the same requests before the damage.
    let stats = kvlab(&["trace", "stats", cut.to_str().unwrap()]);
    let (stats_out, _) = text(&stats);
    let readable: u64 = stats_out
        .lines()
        .find_map(|l| l.strip_prefix("requests"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{stats_out}"));
    let replayed: u64 = ["READ", "INSERT", "SCAN", "DELETE", "UPDATE"]
        .iter()
        .filter_map(|s| {
            crate::common::report_value(&stdout, s, "Operations")
                .and_then(|v| v.parse::<u64>().ok())
        })
        .sum::<u64>();
    assert_eq!(replayed, readable, "{stdout}");
}

#[test]
fn a_recorded_redis_run_replays_as_it_ran() {
    let (a, b) = (servers::redis(""), servers::redis(""));
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("a.kvtrace");
    let trace = trace.to_str().unwrap();
    let workload = [
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=2000",
        "--db",
        "redis",
        "--progress",
        "never",
    ];
    for s in [&a, &b] {
        let o = kvlab(&with(&["load", "--url", &s.url()], &workload));
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let o = kvlab(&with(
        &["run", "--url", &a.url(), "--record", trace],
        &workload,
    ));
    let (ran, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let o = kvlab(&[
        "replay",
        trace,
        "--db",
        "redis",
        "--url",
        &b.url(),
        "--speed",
        "max",
        "--progress",
        "never",
    ]);
    let (replayed, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("recording was made with redis.model=hash"),
        "{stderr}"
    );
    // The same operations, each as it was sent: no WRONGTYPE, no update turned insert.
    for (kind, status) in [("READ", "OK"), ("UPDATE", "OK")] {
        let name = format!("Return={status}");
        assert_eq!(
            report_u64(&replayed, kind, &name),
            report_u64(&ran, kind, &name),
            "{kind}: {replayed}"
        );
    }
    assert_eq!(
        crate::common::report_value(&replayed, "INSERT", "Operations"),
        None
    );
    assert_eq!(
        crate::common::report_value(&replayed, "READ", "Return=ERROR"),
        None
    );
    let _ = (a.stop(), b.stop());
}

#[test]
fn an_output_file_is_never_replaced_without_overwrite_and_is_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().join("existing");
    std::fs::write(&existing, b"keep me").unwrap();
    let existing = existing.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let trace = shared_data("traces/rocksdb/mixgraph.trace");
    let trace = trace.to_str().unwrap();
    // model fit -o: an existing file, and a directory (refused before the fit).
    refused(
        &kvlab(&["model", "fit", trace, "-o", existing]),
        "the file exists; give --overwrite",
    );
    refused(&kvlab(&["model", "fit", trace, "-o", d]), "is a directory");
    // run --record.
    refused(
        &kvlab(&with(&["run", "--db", "null", "--record", existing], &TINY)),
        "--record",
    );
    refused(
        &kvlab(&with(&["run", "--db", "null", "--record", d], &TINY)),
        "is a directory",
    );
    // report --html.
    let out = dir.path().join("r");
    let o = kvlab(&with(
        &["run", "--db", "null", "--out", out.to_str().unwrap()],
        &TINY,
    ));
    assert!(o.status.success(), "{:?}", text(&o));
    refused(
        &kvlab(&[
            "report",
            out.to_str().unwrap(),
            "--html",
            existing,
            "--quiet",
        ]),
        "--html",
    );
    assert_eq!(std::fs::read(existing).unwrap(), b"keep me");
    // With --overwrite each is replaced.
    let o = kvlab(&[
        "report",
        out.to_str().unwrap(),
        "--html",
        existing,
        "--quiet",
        "--overwrite",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(std::fs::read_to_string(existing).unwrap().contains("<html"));
    let o = kvlab(&with(
        &["run", "--db", "null", "--record", existing, "--overwrite"],
        &TINY,
    ));
    assert!(o.status.success(), "{:?}", text(&o));
}

#[test]
fn the_read_miss_warning_counts_reads_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=1000",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let (stdout, stderr) = text(&o);
    let reads = report_u64(&stdout, "READ", "Operations");
    assert!(reads > 0 && reads < 1000, "{stdout}");
    assert!(
        stderr.contains(&format!(
            "{reads} of {reads} reads (100.0 %) found no record"
        )),
        "{reads} reads: {stderr}"
    );
    // db_bench's mixgraph on an empty database: its reads miss, and it is said.
    let db = dir.path().join("empty-mixgraph");
    let o = kvlab(&[
        "db_bench",
        "--benchmarks=mixgraph",
        "--num=1000",
        "--reads=2000",
        &format!("--db={}", db.display()),
    ]);
    let (_, stderr) = text(&o);
    assert!(
        stderr.contains("reads") && stderr.contains("found no record"),
        "{stderr}"
    );
}

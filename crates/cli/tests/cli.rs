//! End-to-end tests of the `kvlab` binary against a real RocksDB in a temp dir.

use std::path::Path;

use crate::common;
use common::files::{csv_column, result_doc};
use common::process::signal;
use common::{kvlab, kvlab_command, report_u64, report_value, text};

#[test]
fn load_run_verify_on_rocksdb_with_data_integrity() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = dir.path().join("out");
    let db = db.to_str().unwrap();
    let common = [
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=3000",
        "-p",
        "operationcount=6000",
        "-p",
        "dataintegrity=true",
        "--db",
        "rocksdb",
        "--path",
        db,
        "--seed",
        "42",
    ];
    let o = kvlab(&[&["load"], &common[..], &["--threads", "2"]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "load failed: {stderr}");
    assert_eq!(
        report_value(&stdout, "INSERT", "Operations").as_deref(),
        Some("3000")
    );
    assert_eq!(
        report_value(&stdout, "INSERT", "Return=OK").as_deref(),
        Some("3000")
    );

    let o = kvlab(
        &[
            &["run"],
            &common[..],
            &["--threads", "2", "--out", out.to_str().unwrap()],
        ]
        .concat(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "run failed: {stderr}");
    let reads: u64 = report_value(&stdout, "READ", "Operations")
        .unwrap()
        .parse()
        .unwrap();
    let updates: u64 = report_value(&stdout, "UPDATE", "Operations")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(reads + updates, 6000);
    // Every read hits, and every value read matches what was written.
    assert_eq!(
        report_value(&stdout, "READ", "Return=OK"),
        Some(reads.to_string())
    );
    assert_eq!(
        report_value(&stdout, "VERIFY", "Operations"),
        Some(reads.to_string())
    );
    assert_eq!(
        report_value(&stdout, "VERIFY", "Return=OK"),
        Some(reads.to_string())
    );
    assert!(
        stdout.contains("[READ], 99thPercentileLatency(us), "),
        "{stdout}"
    );

    let doc = result_doc(&out);
    assert_eq!(doc.seed, 42);
    assert_eq!(doc.phase, "run");
    assert!(!doc.interrupted);
    assert_eq!(doc.store.name, "rocksdb");
    assert_eq!(doc.store.options["wal"], serde_json::json!("true"));
    assert!(
        doc.store.stats.contains_key("block_cache_hit"),
        "{:?}",
        doc.store.stats
    );
    assert_eq!(doc.workload["recordcount"], "3000");
    assert_eq!(doc.results.operations, 6000);
    assert!(doc.host.cpus >= 1);
    let csv = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    assert!(csv.starts_with("time_s,interval_s,operations,"), "{csv}");
    let rows: u64 = csv_column::<u64>(&csv, "operations").iter().sum();
    assert_eq!(rows, 6000, "timeline rows add up to the run");
    let hlog = std::fs::read_to_string(out.join("latency.hlog")).unwrap();
    assert!(hlog.contains("Tag=READ"), "{hlog}");

    // The same --out again is refused rather than overwritten.
    let o = kvlab(&[&["run"], &common[..], &["--out", out.to_str().unwrap()]].concat());
    assert!(!o.status.success());
    assert!(text(&o).1.contains("result.json"), "{}", text(&o).1);
    assert_eq!(result_doc(&out).seed, 42);

    let o = kvlab(&[&["verify"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "verify failed: {stdout}{stderr}");
    assert_eq!(
        report_value(&stdout, "VERIFY", "Records").as_deref(),
        Some("3000")
    );
    assert_eq!(
        report_value(&stdout, "VERIFY", "Corrupted").as_deref(),
        Some("0")
    );
}

fn corrupt(db: &Path, keys_to_damage: &[&[u8]], key_to_delete: &[u8]) {
    use kvlab_core::{block_on, Batch, OpKind, Session, Store};
    use kvlab_stores::rocksdb::{RocksDbConfig, RocksDbStore};
    let store = RocksDbStore::open(
        RocksDbConfig::from_options(
            Some(db),
            kvlab_stores::StoreOptions::new("rocksdb.", vec![]),
        )
        .unwrap(),
    )
    .unwrap();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for k in keys_to_damage {
        let slot = b.push();
        slot.request.kind = OpKind::Update;
        slot.request.key.extend_from_slice(k);
        slot.request
            .value
            .fields_mut()
            .push(b"field3", b"not what kvlab wrote");
    }
    let slot = b.push();
    slot.request.kind = OpKind::Delete;
    slot.request.key.extend_from_slice(key_to_delete);
    block_on(s.execute(&mut b));
    assert!(b.slots().iter().all(|s| s.result.is_ok()));
}

#[test]
fn verify_detects_values_changed_and_records_removed_behind_its_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let common = [
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=500",
        "-p",
        "dataintegrity=true",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
    ];
    assert!(kvlab(&[&["load"], &common[..]].concat()).status.success());
    // Key numbers 7 and 9, hashed as YCSB hashes them; key 0 is removed.
    let names: Vec<String> = [7u64, 9]
        .iter()
        .map(|&n| format!("user{}", kvlab_workload::fnvhash64(n)))
        .collect();
    corrupt(
        &db,
        &[names[0].as_bytes(), names[1].as_bytes()],
        b"user6284781860667377211",
    );
    let o = kvlab(&[&["verify"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(
        report_value(&stdout, "VERIFY", "Missing").as_deref(),
        Some("1")
    );
    assert_eq!(
        report_value(&stdout, "VERIFY", "Corrupted").as_deref(),
        Some("2")
    );
    assert!(
        stdout.contains("[VERIFY], MissingKey, user6284781860667377211"),
        "{stdout}"
    );
    for n in &names {
        assert!(
            stdout.contains(&format!("[VERIFY], CorruptedKey, {n}")),
            "{stdout}"
        );
    }
}

#[test]
fn scans_run_on_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let common = [
        "-P",
        "workloads/ycsb/workloade",
        "-p",
        "recordcount=2000",
        "-p",
        "operationcount=2000",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
    ];
    assert!(kvlab(&[&["load"], &common[..]].concat()).status.success());
    let o = kvlab(&[&["run"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let scans: u64 = report_value(&stdout, "SCAN", "Operations")
        .unwrap()
        .parse()
        .unwrap();
    assert!(scans > 1700, "workload E is 95% scans: {stdout}");
    assert_eq!(
        report_value(&stdout, "SCAN", "Return=OK"),
        Some(scans.to_string())
    );
}

#[test]
fn latest_never_reads_a_key_not_yet_inserted() {
    // Workload D reads the latest inserts while inserting: on a store holding exactly
    // the loaded records, a read of an unacknowledged key would be a NOT_FOUND.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let common = [
        "-P",
        "workloads/ycsb/workloadd",
        "-p",
        "recordcount=1000",
        "-p",
        "operationcount=20000",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--threads",
        "4",
    ];
    assert!(kvlab(&[&["load"], &common[..]].concat()).status.success());
    let o = kvlab(&[&["run"], &common[..]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        report_value(&stdout, "INSERT", "Operations").is_some(),
        "{stdout}"
    );
    assert_eq!(
        report_value(&stdout, "READ", "Return=NOT_FOUND"),
        None,
        "{stdout}"
    );
}

#[test]
fn open_loop_reports_intended_latency_and_keeps_its_rate() {
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloadb",
        "-p",
        "operationcount=2000",
        "--db",
        "null",
        "--target-rate",
        "4000",
        "--threads",
        "2",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("[Intended-READ], Operations, "), "{stdout}");
    let tput: f64 = report_value(&stdout, "OVERALL", "Throughput(ops/sec)")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (3000.0..4400.0).contains(&tput),
        "open loop at 4000 ops/s ran at {tput}"
    );
}

#[test]
fn duration_and_warmup_bound_the_measured_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloadc",
        "--db",
        "null",
        "--duration",
        "1.5s",
        "--warmup",
        "500ms",
        "--interval",
        "250ms",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let doc = result_doc(&out);
    let runtime_s = doc.results.runtime_ms / 1e3;
    assert!(
        (1.4..2.0).contains(&runtime_s),
        "measured part lasted {runtime_s}s"
    );
    let csv = std::fs::read_to_string(out.join("timeline.csv")).unwrap();
    let first_time: f64 = csv
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        first_time > 0.0 && first_time < 0.5,
        "warm-up intervals are not in the timeline"
    );
}

/// Runs kvlab and checks it exits 2 with every one of `needles` on stderr.
fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let o = kvlab(args);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: expected `{needle}` in {stderr}"
        );
    }
}

#[test]
fn usage_errors_exit_2_and_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.properties");
    std::fs::write(&bad, "recordcount=10\n# comment\nreadproportoin=0.5\n").unwrap();
    assert_usage_error(
        &["run", "-P", bad.to_str().unwrap(), "--db", "null"],
        &["readproportoin", "bad.properties:3"],
    );
    let workload = ["run", "-P", "workloads/ycsb/workloada"];
    assert_usage_error(
        &[&workload[..], &["--db", "nosuchstore"]].concat(),
        &["available: rocksdb, lmdb, wiredtiger, moka, foyer, redis, memcached, null"],
    );
    assert_usage_error(
        &[
            &workload[..],
            &[
                "--db",
                "rocksdb",
                "--path",
                "/tmp/x",
                "-p",
                "rocksdb.compression=fast",
            ],
        ]
        .concat(),
        &["one of: none, snappy"],
    );
    assert_usage_error(
        &[&workload[..], &["--db", "null", "--threads", "0"]].concat(),
        &[],
    );
    assert_usage_error(
        &["run", "-P", "/nonexistent/workload", "--db", "null"],
        &["/nonexistent/workload"],
    );
    assert_usage_error(&["run", "--db", "null", "--bogus-flag"], &[]);
}

#[test]
fn store_failures_exit_1() {
    // A path RocksDB cannot create is a failure of the run, not of its usage.
    let o = kvlab(&[
        "load",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "rocksdb",
        "--path",
        "/proc/kvlab-cannot-create-this",
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("opening rocksdb at /proc/kvlab-cannot-create-this"),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_stops_and_still_writes_results_marked_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let child = kvlab_command(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "--db",
        "null",
        "--duration",
        "60s",
    ])
    .args(["--out", out.to_str().unwrap()])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    signal("-INT", child.id());
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        started.elapsed().as_secs() < 10,
        "kvlab did not stop promptly on SIGINT"
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stdout.contains("[OVERALL], Throughput(ops/sec), "),
        "{stdout}"
    );
    let doc = result_doc(&out);
    assert!(doc.interrupted);
    assert!(doc.results.operations > 0);
    assert!(
        doc.results.runtime_ms < 10_000.0,
        "{}",
        doc.results.runtime_ms
    );
    assert!(
        doc.notes.iter().any(|n| n.starts_with("interrupted")),
        "{:?}",
        doc.notes
    );
}

#[test]
fn run_takes_memtier_workload_flags_on_an_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let run = |extra: &[&str]| {
        let args = [&["run", "--db", "rocksdb", "--path", db][..], extra].concat();
        kvlab(&args)
    };
    // P:P splits keys 1..=400 over the 4 clients; allkeys: one SET per key.
    let o = run(&[
        "--threads=4",
        "--ratio=1:0",
        "--key-pattern=P:P",
        "--key-minimum=1",
        "--key-maximum=400",
        "--requests=allkeys",
        "--data-size=50",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        report_value(&stdout, "INSERT", "Return=OK").as_deref(),
        Some("400"),
        "memtier's allkeys for P:P: (400 - 1) / 4 + 1 = 100 SETs per client"
    );
    // A sequential GET pass over the same keys finds every one of them.
    let o = run(&[
        "--ratio=0:1",
        "--key-pattern=S:S",
        "--key-minimum=1",
        "--key-maximum=400",
        "--requests=400",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        report_value(&stdout, "READ", "Return=OK").as_deref(),
        Some("400"),
        "{stdout}"
    );
    // The flags replace a property file; memtier's own refusals are usage errors.
    for bad in [
        &["--ratio=1:1", "-P", "workloads/ycsb/workloada"][..],
        &["--ratio=1:1", "-p", "readproportion=0.5"][..],
        &["--requests=10", "--duration=1s"][..],
        &["--key-pattern=Q:R"][..],
        &["--key-minimum=9", "--key-maximum=3"][..],
    ] {
        let o = run(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o).1);
    }
}

#[test]
fn run_reports_the_keys_of_multi_key_gets() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // 100 requests at 1:10 in GETs of up to 4 keys: 25 cycles of a SET and GETs of
    // 4, 4 and 2 keys. The null store finds every key.
    let o = kvlab(&[
        "run",
        "--db",
        "null",
        "--ratio=1:10",
        "--multi-key-get=4",
        "--requests=100",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(report_u64(&stdout, "READ", "Operations"), 75, "{stdout}");
    assert_eq!(report_u64(&stdout, "MULTI-GET", "Keys"), 250, "{stdout}");
    assert_eq!(report_u64(&stdout, "MULTI-GET", "KeysFound"), 250);
    assert_eq!(report_u64(&stdout, "MULTI-GET", "KeysNotFound"), 0);
    assert_eq!(
        report_value(&stdout, "MULTI-GET", "KeysPerRead").as_deref(),
        Some("3.33")
    );
    let doc = result_doc(&out);
    assert_eq!(doc.runner.keys_found, 250);
}

/// `load` and `verify` on a store that does not outlive the process are refused with the
/// reason (exit 2), instead of loading into a store thrown away on exit, or reporting
/// every record missing.
#[test]
fn load_and_verify_on_a_store_that_dies_with_kvlab_are_refused() {
    for (phase, db, rest) in [
        ("load", "moka", &[][..]),
        ("verify", "moka", &[][..]),
        ("load", "redis", &["--spawn", ""][..]),
    ] {
        let o = kvlab(
            &[
                &[phase, "-P", "workloads/ycsb/workloada", "--db", db][..],
                rest,
            ]
            .concat(),
        );
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{phase} {db}: {stderr}");
        assert!(
            stderr.contains("kvlab run` loads such a store itself"),
            "{stderr}"
        );
    }
    // The null store still loads: that measures kvlab itself.
    let o = kvlab(&["load", "-P", "workloads/ycsb/workloada", "--db", "null"]);
    assert!(o.status.success(), "{:?}", text(&o));
}

/// A CacheBench config key given as `-p` on a cache workload points at `--cachebench`
/// and at the workload's own property.
#[test]
fn a_cachebench_key_as_a_property_points_at_the_right_flag() {
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/cache/kv-small-readonly",
        "--db",
        "null",
        "-p",
        "numKeys=100",
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--cachebench FILE"), "{stderr}");
    assert!(stderr.contains("did you mean `cache.keys`"), "{stderr}");
}

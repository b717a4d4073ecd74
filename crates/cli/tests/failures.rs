//! No silent failure: a `load` that did not store every record and a `run` whose
//! operations failed exit 1 with the store's own reason on stderr and the counts by kind
//! in result.json; reads that miss on a YCSB workload are flagged; store flags that do
//! not apply are refused; a missing `recordcount` is said. Against real stores: LMDB
//! with a 1 MiB map (its entries counted by LMDB's own `mdb_stat`) and redis-server
//! under `maxmemory` (its keys counted by `DBSIZE`, its refusals compared with the
//! reply it gives a plain client).

use std::path::Path;
use std::process::{Command, Output};

use kvlab_report::ResultDocument;
use kvlab_spawn::{Server, ServerKind, SpawnError};

use crate::common;
use common::files::{result_doc, result_doc_of};
use common::servers::{call, memcached_stat, redis, start};
use common::{kvlab, report_u64, text};

/// kvlab with `args` and `--progress never --out OUT`; returns the output and the result
/// document (panicking with stdout and stderr when there is none).
fn phase(args: &[&str], out: &Path) -> (Output, ResultDocument) {
    let o = kvlab(
        &[
            args,
            &["--progress", "never", "--out", out.to_str().unwrap()],
        ]
        .concat(),
    );
    let doc = result_doc_of(&o, out);
    (o, doc)
}

/// The `Entries:` of the main database as LMDB's own `mdb_stat` counts them.
fn mdb_entries(dir: &Path) -> u64 {
    let o = Command::new("mdb_stat")
        .arg(dir)
        .output()
        .expect("mdb_stat (Debian's lmdb-utils; scripts/setup.sh installs it)");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "mdb_stat failed: {out}");
    out.lines()
        .find_map(|l| l.trim().strip_prefix("Entries: "))
        .unwrap_or_else(|| panic!("no Entries line in:\n{out}"))
        .parse()
        .unwrap()
}

/// The number of YCSB records the server holds: its `user…` keys (the hash model also
/// keeps an `_indices` sorted set for scans).
fn dbsize(server: &Server) -> u64 {
    match call(server, &["KEYS", "user*"]) {
        kvlab_spawn::resp::Value::Array(Some(keys)) => keys.len() as u64,
        other => panic!("KEYS answered {other:?}"),
    }
}

/// The error reply the server gives a plain client for `args`.
fn error_reply(server: &Server, args: &[&str]) -> String {
    match kvlab_spawn::resp::command(server.addr(), args) {
        Err(SpawnError::Redis { message, .. }) => message,
        other => panic!("{args:?} was not refused: {other:?}"),
    }
}

/// A `-p NAME=VALUE` list as arguments.
fn props(pairs: &[&str]) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|p| ["-p".to_string(), p.to_string()])
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_load_into_a_full_lmdb_map_fails_with_mdb_map_full() {
    let dir = tempfile::tempdir().unwrap();
    // `load` of 5000 1 KB records into a fresh LMDB map of `map_size` at `name`.
    let load = |name: &str, map_size: &str| {
        let db = dir.path().join(name);
        let p = props(&[
            "recordcount=5000",
            "fieldcount=10",
            "fieldlength=100",
            &format!("lmdb.map_size={map_size}"),
        ]);
        let args = [
            &[
                "load",
                "-P",
                "workloads/ycsb/workloada",
                "--db",
                "lmdb",
                "--seed",
                "1",
            ][..],
            &strs(&p),
            &["--path", db.to_str().unwrap()],
        ]
        .concat();
        let (o, doc) = phase(&args, &dir.path().join(format!("{name}-out")));
        (o, doc, db)
    };
    let (o, doc, db) = load("lmdb", "1MiB");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    // LMDB's own count of what it holds.
    let stored = mdb_entries(&db);
    assert!(
        stored > 0 && stored < 5000,
        "a 1 MiB map holds some of 5000 1 KB records: {stored}"
    );
    let lost = 5000 - stored;
    // YCSB's report lines are unchanged: the failed inserts are Return=ERROR.
    assert_eq!(
        report_u64(&stdout, "INSERT", "Return=ERROR"),
        lost,
        "{stdout}"
    );
    assert_eq!(
        report_u64(&stdout, "INSERT", "Return=OK"),
        stored,
        "{stdout}"
    );
    // stderr: LMDB's name for the error, the option to raise, how many and why.
    assert!(stderr.contains("kvlab: error (full): "), "{stderr}");
    assert!(stderr.contains("MDB_MAP_FULL"), "{stderr}");
    assert!(stderr.contains("lmdb.map_size=1048576 bytes"), "{stderr}");
    assert!(stderr.contains("-p lmdb.map_size=2MiB"), "{stderr}");
    let why = format!(
        "load failed: {lost} of 5000 records were not stored, {lost} inserts failed (full: {lost})"
    );
    assert!(stderr.contains(&why), "{why}\n{stderr}");
    // result.json: counted by kind, the failure and the store's messages.
    assert_eq!(
        doc.results.errors.get("full"),
        Some(&lost),
        "{:?}",
        doc.results.errors
    );
    assert_eq!(doc.results.errors.len(), 1, "{:?}", doc.results.errors);
    assert_eq!(doc.runner.failed_operations, lost);
    assert_eq!(doc.runner.failure.as_deref(), Some(why.as_str()));
    assert!(!doc.runner.first_errors.is_empty());
    assert!(doc
        .runner
        .first_errors
        .iter()
        .all(|e| e.kind == "full" && e.message.contains("MDB_MAP_FULL")));
    assert!(doc.notes.iter().any(|n| n == &why), "{:?}", doc.notes);

    // The same load into a map that fits stores everything and succeeds.
    let (o, doc, db2) = load("lmdb2", "64MiB");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(mdb_entries(&db2), 5000);
    assert_eq!(doc.runner.failed_operations, 0);
    assert_eq!(doc.runner.failure, None);
    assert!(doc.runner.first_errors.is_empty());
}

/// `load` of `records` YCSB records (10 × 100 bytes) into `server`.
fn redis_load(server: &Server, records: u64, out: &Path) -> (Output, ResultDocument) {
    let url = format!("redis://{}", server.addr());
    let count = format!("recordcount={records}");
    phase(
        &[
            "load",
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            &count,
            "--db",
            "redis",
            "--url",
            &url,
            "--seed",
            "2",
        ],
        out,
    )
}

#[test]
fn a_load_into_a_redis_at_maxmemory_fails_with_its_oom_reply() {
    let server = redis("maxmemory=2mb,maxmemory-policy=noeviction");
    let dir = tempfile::tempdir().unwrap();
    let (o, doc) = redis_load(&server, 5000, &dir.path().join("out"));
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let stored = dbsize(&server);
    assert!(
        stored > 0 && stored < 5000,
        "2 MB holds some of 5000 1 KB records: {stored}"
    );
    let lost = 5000 - stored;
    assert_eq!(report_u64(&stdout, "INSERT", "Return=ERROR"), lost);
    // The server's own text, as it answers any client's write over its limit (pushed
    // below the memory in use, since the load may have stopped just under it).
    call(&server, &["CONFIG", "SET", "maxmemory", "1"]);
    let oom = error_reply(&server, &["HSET", "probe", "f", "v"]);
    assert!(oom.starts_with("OOM "), "{oom}");
    assert!(
        stderr.contains(&format!("kvlab: error (full): server replied: {oom}")),
        "{oom}\n{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "load failed: {lost} of 5000 records were not stored"
        )),
        "{stderr}"
    );
    // Counted as `full`, not as a protocol error.
    assert_eq!(
        doc.results.errors.get("full"),
        Some(&lost),
        "{:?}",
        doc.results.errors
    );
    assert!(!doc.results.errors.contains_key("protocol"));
    assert_eq!(
        doc.runner.first_errors[0].message,
        format!("server replied: {oom}")
    );
}

#[test]
fn a_run_fails_when_operations_fail_unless_max_errors_allows_them() {
    let server = redis("");
    let dir = tempfile::tempdir().unwrap();
    let (o, _) = redis_load(&server, 200, &dir.path().join("load"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(dbsize(&server), 200);
    // Now every write is refused: 1 byte of memory and no eviction.
    call(
        &server,
        &["CONFIG", "SET", "maxmemory-policy", "noeviction"],
    );
    call(&server, &["CONFIG", "SET", "maxmemory", "1"]);
    let oom = error_reply(&server, &["HSET", "probe", "f", "v"]);
    let url = format!("redis://{}", server.addr());
    let run = |extra: &[&str], out: &str| {
        let base = [
            "run",
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            "recordcount=200",
            "-p",
            "operationcount=300",
            "--db",
            "redis",
            "--url",
            &url,
            "--seed",
            "3",
        ];
        phase(&[&base[..], extra].concat(), &dir.path().join(out))
    };

    // Workload A: the reads succeed, every update is refused.
    let (o, doc) = run(&[], "a");
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let updates = report_u64(&stdout, "UPDATE", "Operations");
    assert!(updates > 0);
    assert_eq!(report_u64(&stdout, "UPDATE", "Return=ERROR"), updates);
    assert_eq!(report_u64(&stdout, "READ", "Return=OK"), 300 - updates);
    assert_eq!(doc.results.errors.get("full"), Some(&updates));
    assert!(
        stderr.contains(&format!("server replied: {oom}")),
        "{stderr}"
    );
    let why = format!(
        "run failed: {updates} of 300 operations failed (full: {updates}); a run fails when \
         any operation fails; --max-errors N tolerates N"
    );
    assert!(stderr.contains(&why), "{why}\n{stderr}");
    assert_eq!(doc.runner.failure.as_deref(), Some(why.as_str()));
    assert!(
        !doc.runner.error_budget_exceeded,
        "without --max-errors the run goes to its end"
    );
    assert_eq!(dbsize(&server), 200);

    // Only updates: every operation fails.
    let only = ["-p", "readproportion=0", "-p", "updateproportion=1"];
    let (o, doc) = run(&only, "all");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o).1);
    assert_eq!(doc.results.errors.get("full"), Some(&300));
    assert_eq!(doc.runner.failed_operations, 300);

    // A budget that covers the failures: the run passes, and says so.
    let (o, doc) = run(&[&only[..], &["--max-errors", "300"]].concat(), "budget");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("300 of 300 operations failed (full: 300), within --max-errors 300"),
        "{stderr}"
    );
    assert_eq!(doc.runner.failure, None);
    assert_eq!(doc.runner.failed_operations, 300);

    // A smaller budget: the run stops once it is spent, and fails.
    let (o, doc) = run(&[&only[..], &["--max-errors", "10"]].concat(), "small");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(doc.runner.error_budget_exceeded);
    assert!(doc.runner.failed_operations > 10 && doc.runner.failed_operations < 300);
    assert!(stderr.contains("more than --max-errors 10"), "{stderr}");
}

#[test]
fn an_error_reply_is_a_server_error_with_the_servers_text() {
    let server = redis("");
    // A user that may not write hashes: every HSET is answered with -NOPERM.
    call(
        &server,
        &[
            "ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@all", "-hset",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let url = format!("redis://reader:pw@{}", server.addr());
    let (o, doc) = phase(
        &[
            "load",
            "-P",
            "workloads/ycsb/workloada",
            "-p",
            "recordcount=50",
            "--db",
            "redis",
            "--url",
            &url,
        ],
        &dir.path().join("out"),
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(dbsize(&server), 0);
    assert_eq!(
        doc.results.errors.get("server"),
        Some(&50),
        "{:?}",
        doc.results.errors
    );
    assert!(!doc.results.errors.contains_key("protocol"));
    assert!(
        stderr.contains("kvlab: error (server): server replied: NOPERM"),
        "{stderr}"
    );
    assert!(doc
        .runner
        .first_errors
        .iter()
        .all(|e| e.kind == "server" && e.message.contains("hset")));
}

#[test]
fn reads_of_a_never_loaded_store_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("never-loaded");
    let run = |out: &str| {
        phase(
            &[
                "run",
                "-P",
                "workloads/ycsb/workloadc",
                "-p",
                "recordcount=1000",
                "-p",
                "operationcount=2000",
                "--db",
                "lmdb",
                "--path",
                db.to_str().unwrap(),
            ],
            &dir.path().join(out),
        )
    };
    let (o, doc) = run("empty");
    let (stdout, stderr) = text(&o);
    // LMDB holds nothing there.
    assert_eq!(mdb_entries(&db), 0);
    assert_eq!(report_u64(&stdout, "READ", "Return=NOT_FOUND"), 2000);
    // Not a failure (nothing failed), but said and marked.
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: 2000 of 2000 reads (100.0 %) found no record"),
        "{stderr}"
    );
    assert!(stderr.contains("never loaded?"), "{stderr}");
    assert!(doc.runner.reads_missed);
    assert_eq!(doc.runner.read_miss_share, Some(1.0));

    // Loaded: no warning, nothing marked.
    let o = kvlab(&[
        "load",
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=1000",
        "--db",
        "lmdb",
        "--path",
        db.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(mdb_entries(&db), 1000);
    let (o, doc) = run("loaded");
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("found no record"), "{stderr}");
    assert!(!doc.runner.reads_missed);
    assert_eq!(doc.runner.read_miss_share, Some(0.0));
}

#[test]
fn reads_of_a_redis_that_evicted_part_of_its_data_are_flagged_in_the_report() {
    let server = redis("maxmemory=2mb,maxmemory-policy=allkeys-random");
    let dir = tempfile::tempdir().unwrap();
    // An evicting server takes every write: the load succeeds.
    let (o, _) = redis_load(&server, 5000, &dir.path().join("load"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let kept = dbsize(&server);
    assert!(
        kept > 0 && kept < 4000,
        "2 MB keeps part of 5000 1 KB records: {kept}"
    );
    let url = format!("redis://{}", server.addr());
    let out = dir.path().join("runs/redis");
    let (o, doc) = phase(
        &[
            "run",
            "-P",
            "workloads/ycsb/workloadc",
            "-p",
            "recordcount=5000",
            "-p",
            "operationcount=4000",
            "-p",
            "requestdistribution=uniform",
            "--db",
            "redis",
            "--url",
            &url,
            "--seed",
            "4",
        ],
        &out,
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    // Uniform reads miss in proportion to what the server no longer holds.
    let expected = 1.0 - kept as f64 / 5000.0;
    let share = doc.runner.read_miss_share.unwrap();
    assert!(
        (share - expected).abs() < 0.05,
        "missed {share}, the server lacks {expected}"
    );
    assert!(doc.runner.reads_missed);
    assert!(
        stderr.contains("found no record: the store lost or never held part"),
        "{stderr}"
    );

    // The report's summary table shows the share and flags the cell.
    let md = dir.path().join("summary.md");
    let o = kvlab(&[
        "report",
        dir.path().join("runs").to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.contains("Read misses (%)"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| redis"))
        .unwrap_or_else(|| panic!("{md}"));
    // The report rounds its own percentage to one decimal: a share that sits on a
    // rounding boundary (90.15 %) may print either way, so read the figure back.
    let flagged = row
        .split("⚠ reads missed ")
        .nth(1)
        .and_then(|s| s.split('%').next())
        .unwrap_or_else(|| panic!("no flag: {row}"));
    let pct: f64 = flagged.parse().unwrap_or_else(|e| panic!("{flagged}: {e}"));
    assert!(
        (pct - 100.0 * share).abs() <= 0.051,
        "{pct} vs {share}: {row}"
    );
    assert!(row.contains(&format!(" {flagged} |")), "{flagged}: {row}");
}

#[test]
fn store_flags_that_do_not_apply_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let path = path.to_str().unwrap();
    let base = [
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=10",
    ];
    for (extra, says) in [
        (
            &["--db", "rocksdb", "--path", path, "--cache-size", "1GiB"][..],
            "--cache-size does not apply to --db rocksdb",
        ),
        (
            &["--db", "redis", "--path", path][..],
            "--path does not apply to --db redis",
        ),
        (
            &[
                "--db",
                "rocksdb",
                "--path",
                path,
                "--spawn",
                "maxmemory=1mb",
            ][..],
            "--spawn does not apply to --db rocksdb",
        ),
        (
            &["--db", "moka", "--url", "redis://127.0.0.1:1"][..],
            "--url does not apply to --db moka",
        ),
        (
            &["--db", "lmdb", "--path", path, "--timeout", "1s"][..],
            "--timeout does not apply to --db lmdb",
        ),
        (
            &["--db", "moka", "--disk-path", path][..],
            "--disk-path does not apply to --db moka",
        ),
    ] {
        let o = kvlab(&[&base[..], extra].concat());
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(says), "{says}\n{stderr}");
    }
    // Another store's option, and connections on an embedded store.
    let o = kvlab(
        &[
            &base[..],
            &[
                "--db",
                "rocksdb",
                "--path",
                path,
                "-p",
                "lmdb.map_size=1MiB",
            ],
        ]
        .concat(),
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("option `lmdb.map_size` is for --db lmdb, not --db rocksdb"),
        "{stderr}"
    );
    let o = kvlab(&[&base[..], &["--db", "moka", "--connections", "2"]].concat());
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--connections 2 does not apply to --db moka"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("loading"),
        "refused before the preload: {stderr}"
    );
    assert!(!Path::new(path).exists(), "nothing was opened");
    // The hint names the store's own setting.
    let o = kvlab(
        &[
            &base[..],
            &["--db", "rocksdb", "--path", path, "--cache-size", "1GiB"],
        ]
        .concat(),
    );
    assert!(text(&o).1.contains("-p rocksdb.block_cache_size=SIZE"));
}

#[test]
fn a_missing_recordcount_is_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no-recordcount");
    std::fs::write(
        &file,
        "readproportion=1\nupdateproportion=0\noperationcount=10\n",
    )
    .unwrap();
    let db = dir.path().join("db");
    let run = |extra: &[&str]| {
        let base = [
            "run",
            "-P",
            file.to_str().unwrap(),
            "--db",
            "rocksdb",
            "--progress",
            "never",
        ];
        kvlab(&[&base[..], extra, &["--path", db.to_str().unwrap()]].concat())
    };
    let o = run(&[]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    // YCSB's CoreWorkload: `if (recordcount == 0) recordcount = Integer.MAX_VALUE;`
    let says = "no recordcount given: as in YCSB, it means 2147483647 records";
    assert!(stderr.contains(says), "{stderr}");
    // recordcount=0 means the same (YCSB's `if (recordcount == 0)`), and is said the same.
    let o = run(&["-p", "recordcount=0"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let says = "recordcount=0: as in YCSB, it means 2147483647 records";
    assert!(stderr.contains(says), "{stderr}");
    let o = run(&["-p", "recordcount=100"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("no recordcount"), "{stderr}");
    // A store name that is wrong is the one thing said: no warning about the workload.
    let o = kvlab(&["run", "-P", file.to_str().unwrap(), "--db", "nosuch"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("kvlab: error: unknown store `nosuch`; available: "),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_load_into_a_memcached_that_may_not_evict_fails_with_its_out_of_memory_reply() {
    // memcached's own words for each protocol: its text and meta commands answer
    // "SERVER_ERROR out of memory storing object", the binary protocol status 0x82 with
    // "Out of memory allocating item".
    for (protocol, says) in [
        (
            "text",
            "server replied: SERVER_ERROR out of memory storing object",
        ),
        (
            "meta",
            "server replied: SERVER_ERROR out of memory storing object",
        ),
        ("binary", "Out of memory allocating item"),
    ] {
        // -M: "return error on memory exhausted instead of evicting" (memcached -h).
        let server = start(ServerKind::Memcached, "m=2,M");
        let dir = tempfile::tempdir().unwrap();
        let url = format!("memcached://{}", server.addr());
        let option = format!("memcached.protocol={protocol}");
        let (o, doc) = phase(
            &[
                "load",
                "-P",
                "workloads/ycsb/workloada",
                "-p",
                "recordcount=5000",
                "-p",
                &option,
                "--db",
                "memcached",
                "--url",
                &url,
            ],
            &dir.path().join("out"),
        );
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{protocol}: {stderr}");
        let stored = memcached_stat(&server, "curr_items");
        assert!(
            stored > 0 && stored < 5000,
            "{protocol}: 2 MB holds some of 5000 records: {stored}"
        );
        assert_eq!(memcached_stat(&server, "evictions"), 0);
        let lost = 5000 - stored;
        assert_eq!(
            doc.results.errors.get("full"),
            Some(&lost),
            "{protocol}: {:?}",
            doc.results.errors
        );
        assert!(
            stderr.contains("kvlab: error (full): "),
            "{protocol}: {stderr}"
        );
        assert!(stderr.contains(says), "{protocol}: {says}\n{stderr}");
        let why = format!("load failed: {lost} of 5000 records were not stored");
        assert!(stderr.contains(&why), "{protocol}: {stderr}");
    }
}

#[test]
fn a_spawned_server_that_refuses_the_preload_fails_the_run_with_its_reply() {
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=5000",
        "--db",
        "redis",
        "--spawn",
        "maxmemory=2mb,maxmemory-policy=noeviction",
        "--progress",
        "never",
    ]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stdout.is_empty(), "nothing was measured: {stdout}");
    // redis server.c, shared.oomerr.
    let oom = "server replied: OOM command not allowed when used memory > 'maxmemory'.";
    assert!(
        stderr.contains(&format!("kvlab: error (full): {oom}")),
        "{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.contains("loading the new server failed: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let lost: u64 = line
        .split("failed: ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(lost > 0 && lost < 5000, "{line}");
    assert!(
        line.ends_with(&format!(
            "{lost} of 5000 records were not stored (full: {lost})"
        )),
        "{line}"
    );
}

#[test]
fn a_suite_summary_shows_read_misses_and_flags_an_evicting_server() {
    let dir = tempfile::tempdir().unwrap();
    let workloads = common::workloads();
    let file = dir.path().join("evicting.toml");
    std::fs::write(
        &file,
        format!(
            r#"name = "evicting"

[[store]]
name = "small"
db = "redis"
spawn = "maxmemory=2mb,maxmemory-policy=allkeys-random"

[[workload]]
name = "reads"
properties = ["{workloads}/ycsb/workloadc"]
set = {{ recordcount = 5000, operationcount = 2000, requestdistribution = "uniform" }}

[matrix]
threads = [1]
connections = [1]
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = kvlab(&[
        "suite",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    // The cell's own result: kvlab marked its misses.
    let doc = result_doc(&out.join("small/reads/t1-c1/round-1"));
    assert!(doc.runner.reads_missed);
    let share = doc.runner.read_miss_share.unwrap();
    assert!(
        share > 0.3,
        "2 MB keeps well under 5000 1 KB records: {share}"
    );
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("| read misses % |"), "{md}");
    let pct = format!("{:.1}", 100.0 * share);
    let row = md
        .lines()
        .find(|l| l.starts_with("| small | reads |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains(&format!(" {pct} |")), "{pct}: {row}");
    assert!(row.contains(&format!("reads missed {pct}%")), "{row}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let cell = &summary["cells"][0];
    assert!(
        (cell["read_miss_pct"].as_f64().unwrap() - 100.0 * share).abs() < 1e-9,
        "{cell:#}"
    );
    assert_eq!(cell["flagged"], true);
}

#[test]
fn reads_of_deleted_records_are_not_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lmdb");
    let db = db.to_str().unwrap();
    let common = [
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=200",
        "--db",
        "lmdb",
        "--path",
        db,
    ];
    let o = kvlab(&[&["load"][..], &common, &["--progress", "never"]].concat());
    assert!(o.status.success(), "{}", text(&o).1);
    let (o, doc) = phase(
        &[
            &["run"][..],
            &common,
            &[
                "-p",
                "operationcount=2000",
                "-p",
                "readproportion=0.5",
                "-p",
                "deleteproportion=0.5",
                "--seed",
                "5",
            ],
        ]
        .concat(),
        &dir.path().join("out"),
    );
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    // Reads of deleted records miss: as the workload asks, so not flagged.
    let missed = report_u64(&stdout, "READ", "Return=NOT_FOUND");
    assert!(missed > 0, "{stdout}");
    assert!(!stderr.contains("found no record"), "{stderr}");
    assert!(!doc.runner.reads_missed);
    assert!(doc.runner.read_miss_share.unwrap() > 0.0);
}

/// memcached with extstore writes nothing to flash when its items are below
/// `ext_item_size` (512 bytes): kvlab says so and why, on stderr and in the result's
/// notes. Items of 1000 bytes that overflow 8 MiB of memory do reach the file (memcached's
/// own `extstore_objects_written`), and then nothing is said.
#[test]
fn memcached_extstore_that_writes_nothing_is_said_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let spawn = format!("m=8,ext_path={}/extstore:256m", dir.path().display());
    let run = |data_size: &str, requests: &str, out: &str| {
        phase(
            &[
                "memtier",
                "--protocol",
                "memcache_text",
                "--spawn",
                &spawn,
                "-t",
                "1",
                "-c",
                "10",
                "--ratio",
                "1:0",
                "--key-pattern",
                "P:P",
                "--data-size",
                data_size,
                "-n",
                requests,
                "--hide-histogram",
            ],
            &dir.path().join(out),
        )
    };
    let written = |doc: &ResultDocument| doc.store.stats["extstore_objects_written"].clone();

    let (o, doc) = run("100", "500", "small");
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(written(&doc), serde_json::json!(0), "{stderr}");
    assert!(
        stderr.contains("wrote nothing to extstore") && stderr.contains("below ext_item_size"),
        "{stderr}"
    );
    assert!(
        doc.notes
            .iter()
            .any(|n| n.contains("below ext_item_size (512 bytes)")),
        "{:?}",
        doc.notes
    );

    // 30 000 items of ~1 KB: more than 8 MiB.
    let (o, doc) = run("1000", "3000", "large");
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(written(&doc).as_u64().unwrap() > 0, "{stderr}");
    assert!(!stderr.contains("extstore"), "{stderr}");
}

//! A RocksDB trace's merges replayed through RocksDB's merge operator: db_bench's own
//! `mergerandom` trace (3 000 merges of 8-byte operands) against kvlab's RocksDB, read
//! back with RocksDB's `ldb`, recorded and dumped in RocksDB's human-readable trace
//! format (type 5 = Merge, tools/trace_analyzer_tool.h); merges in the results'
//! BytesWritten and timeline.csv; a crafted trace of decimal counters through
//! `--merge-operator uint64add`; and `--merge-operator` refused where it does not apply.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::files::{result_doc, rocksdb_trace, shared_data_or_skip};
use crate::common::{kvlab, ok, report_u64, text};

/// db_bench's `mergerandom` trace, or `None` (the test skips) when the shared data is
/// not beside the project.
fn trace() -> Option<PathBuf> {
    shared_data_or_skip("traces/rocksdb/mergerandom.trace")
}

/// `key type cf size ts` lines of a `kvlab trace dump`: (key, type, size) per line.
fn dump(path: &Path) -> Vec<(String, u32, u64)> {
    ok(&["trace", "dump", path.to_str().unwrap()])
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

/// `ldb scan --hex`: key → value length in bytes, or `None` when ldb is missing.
fn ldb_scan(db: &Path) -> Option<HashMap<String, u64>> {
    Some(
        ldb_scan_hex(db)?
            .into_iter()
            .map(|(key, value)| (key, (value.len() as u64 - 2) / 2))
            .collect(),
    )
}

/// `ldb compact`: compacts the whole database (merging merge operands) in ldb's
/// process, or `None` when ldb is missing.
fn ldb_compact(db: &Path) -> Option<()> {
    let out = match Command::new("ldb")
        .arg(format!("--db={}", db.display()))
        // kvlab keeps its records in YCSB's column family.
        .arg("--column_family=usertable")
        .arg("compact")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: ldb (rocksdb-tools) not runnable: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

/// `ldb scan --hex`: key → value, both as ldb prints them (`0x` and upper-case hex
/// digits), or `None` when ldb is missing.
fn ldb_scan_hex(db: &Path) -> Option<HashMap<String, String>> {
    let out = match Command::new("ldb")
        .arg(format!("--db={}", db.display()))
        // kvlab keeps its records in YCSB's column family.
        .arg("--column_family=usertable")
        .args(["scan", "--hex"])
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: ldb (rocksdb-tools) not runnable: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|line| {
                let (key, value) = line.split_once(" : ").unwrap();
                (key.to_string(), value.trim().to_string())
            })
            .collect(),
    )
}

/// With `rocksdb.merge_operator=stringappend` every key ldb reads holds its operands
/// joined by commas (length: the operands' sizes plus one comma between each two), the
/// results count the merges as `MERGE`, and the recorded replay dumps as type 5 lines,
/// one per merge of the trace.
#[test]
fn merges_replay_through_the_merge_operator() {
    let Some(trace) = trace() else {
        return;
    };
    let trace = trace.to_str().unwrap();
    let source = dump(Path::new(trace));
    assert!(
        source.iter().all(|(_, t, _)| *t == 5),
        "mergerandom has only merges"
    );
    let mut expected: HashMap<String, (u64, u64)> = HashMap::new();
    for (key, _, size) in &source {
        let e = expected.entry(key.clone()).or_default();
        e.0 += 1;
        e.1 += size;
    }

    let dir = tempfile::tempdir().unwrap();
    let (db, rec) = (dir.path().join("db"), dir.path().join("replay.kvtrace"));
    let results = dir.path().join("results");
    let out = ok(&[
        "replay",
        trace,
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--merge-operator",
        "stringappend",
        "--speed",
        "max",
        "--threads",
        "2",
        "--record",
        rec.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    // A merge writes its key and operand, as a put writes its key and value.
    let written: u64 = source
        .iter()
        .map(|(key, _, size)| key_len(key) + size)
        .sum();
    assert_eq!(written, 3000 * (16 + 8));
    assert_eq!(
        report_u64(&out, "OVERALL", "BytesWritten"),
        written,
        "{out}"
    );
    let doc = result_doc(&results);
    assert_eq!(doc.results.bytes_written, written);
    assert_eq!(
        doc.store.options["merge_operator"],
        serde_json::json!("stringappend")
    );
    let timeline = timeline_column_sums(&results.join("timeline.csv"));
    assert_eq!(timeline["merge_ops"], source.len() as u64);
    assert_eq!(timeline["operations"], source.len() as u64);
    assert_eq!(timeline["insert_ops"], 0);
    // The interval log has MERGE's own histograms, as it has every kind's.
    let hlog = kvlab_report::LatencyLog::load(&results.join("latency.hlog")).unwrap();
    assert_eq!(hlog.by_tag["MERGE"].len(), source.len() as u64);
    assert_eq!(hlog.overall.len(), source.len() as u64);
    assert!(
        !hlog.by_tag.contains_key("INSERT"),
        "{:?}",
        hlog.by_tag.keys()
    );
    assert_eq!(
        report_u64(&out, "MERGE", "Operations"),
        source.len() as u64,
        "{out}"
    );
    assert_eq!(
        report_u64(&out, "MERGE", "Return=OK"),
        source.len() as u64,
        "{out}"
    );
    assert!(!out.contains("[INSERT]"), "{out}");

    let Some(stored) = ldb_scan(&db) else {
        return;
    };
    assert_eq!(stored.len(), expected.len(), "keys ldb reads");
    for (key, (merges, bytes)) in &expected {
        assert_eq!(
            stored.get(key),
            Some(&(bytes + merges - 1)),
            "{key}: {merges} operands of {bytes} bytes joined by commas"
        );
    }

    let recorded = dump(&rec);
    assert_eq!(recorded.len(), source.len());
    assert!(
        recorded.iter().all(|(_, t, size)| *t == 5 && *size == 8),
        "{:?}",
        &recorded[..3]
    );
    let mut recorded_keys: Vec<_> = recorded.iter().map(|r| r.0.clone()).collect();
    let mut source_keys: Vec<_> = source.iter().map(|r| r.0.clone()).collect();
    recorded_keys.sort();
    source_keys.sort();
    assert_eq!(recorded_keys, source_keys);
}

/// Without a merge operator (`rocksdb.merge_operator=none`) a merge replays as the
/// documented put of its operand's size: INSERTs, and ldb reads one 8-byte value a key.
/// The bytes written are the same as through the merge operator, and timeline.csv has
/// its merge columns, empty.
#[test]
fn without_a_merge_operator_merges_replay_as_puts() {
    let Some(trace) = trace() else {
        return;
    };
    let trace = trace.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let results = dir.path().join("results");
    let out = ok(&[
        "replay",
        trace,
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "-p",
        "rocksdb.merge_operator=none",
        "--speed",
        "max",
        "--out",
        results.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(report_u64(&out, "INSERT", "Operations"), 3000, "{out}");
    assert!(!out.contains("[MERGE]"), "{out}");
    assert_eq!(report_u64(&out, "OVERALL", "BytesWritten"), 3000 * (16 + 8));
    let timeline = timeline_column_sums(&results.join("timeline.csv"));
    assert_eq!(timeline["merge_ops"], 0);
    assert_eq!(timeline["insert_ops"], 3000);
    let Some(stored) = ldb_scan(&db) else {
        return;
    };
    assert_eq!(stored.len(), 2775);
    assert!(stored.values().all(|len| *len == 8));
}

/// The length in bytes of a key as `trace dump` prints it (`0x` and hex digits).
fn key_len(dumped: &str) -> u64 {
    (dumped.trim_start_matches("0x").len() / 2) as u64
}

/// The columns every timeline.csv had before merges had theirs, in their order (the
/// kinds', then a timed replay's intended ones): scripts read them by place.
const TIMELINE_COLUMNS: [&str; 21] = [
    "time_s",
    "interval_s",
    "operations",
    "throughput_ops_per_sec",
    "p50_us",
    "p99_us",
    "p999_us",
    "max_us",
    "errors",
    "read_ops",
    "read_p99_us",
    "update_ops",
    "update_p99_us",
    "insert_ops",
    "insert_p99_us",
    "scan_ops",
    "scan_p99_us",
    "read_modify_write_ops",
    "read_modify_write_p99_us",
    "delete_ops",
    "delete_p99_us",
];

/// The sums of the count columns (`operations`, `*_ops`) of a `timeline.csv`, after
/// checking its header: the columns of earlier versions first, in their places, and
/// `merge_ops,merge_p99_us` last; a row without merges has an empty merge p99 cell.
fn timeline_column_sums(path: &Path) -> HashMap<String, u64> {
    let csv = std::fs::read_to_string(path).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header[..TIMELINE_COLUMNS.len()], TIMELINE_COLUMNS, "{csv}");
    assert_eq!(
        header[header.len() - 2..],
        ["merge_ops", "merge_p99_us"],
        "{csv}"
    );
    let mut sums: HashMap<String, u64> = HashMap::new();
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{csv}");
        for (name, cell) in header.iter().zip(&cells) {
            if *name == "operations" || name.ends_with("_ops") {
                *sums.entry(name.to_string()).or_default() += cell.parse::<u64>().unwrap();
            }
        }
        let (ops, p99) = (cells[header.len() - 2], cells[header.len() - 1]);
        if ops == "0" {
            assert_eq!(p99, "", "{line}");
        } else {
            assert!(p99.parse::<f64>().unwrap() > 0.0, "{line}");
        }
    }
    // kvlab's report reads the file back: merges under their results name.
    let t = kvlab_report::Timeline::load(path).unwrap();
    let merges: u64 = t
        .rows
        .iter()
        .flat_map(|r| &r.per_op)
        .filter(|(name, _, _)| name == "MERGE")
        .map(|(_, ops, _)| ops)
        .sum();
    assert_eq!(merges, sums["merge_ops"]);
    sums
}

/// Upper-case hex with `0x`, as `ldb --hex` prints keys and values.
fn hex(bytes: &[u8]) -> String {
    let digits: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    format!("0x{digits}")
}

/// RocksDB's uint64add (utilities/merge_operators/uint64add.cc) adds 8-byte
/// little-endian integers and counts an operand — or an existing value — of any other
/// size as 0, logging `uint64 value corruption`. A trace carries an operand's size, not
/// its bytes: kvlab sends operands of the traced size from its printable value pool. So
/// a trace of decimal counters ("1", "250") adds up to 0 in every key, as ldb reads back
/// from the real library; an 8-byte operand adds its 8 pool bytes (printable), and the
/// result notes how many operands were not 8 bytes.
#[test]
fn uint64add_counts_operands_that_are_not_8_bytes_as_0() {
    let mut entries: Vec<(u8, &[u8], &[u8])> = Vec::new();
    let small: [&[u8]; 9] = [b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9"];
    for operand in small {
        entries.push((0x2, b"ctr-small", operand));
    }
    for operand in [&b"10"[..], b"250", b"1000"] {
        entries.push((0x2, b"ctr-wide", operand));
    }
    // A put of a 3-byte decimal, then merges: the existing value counts as 0 too.
    entries.push((0x1, b"ctr-base", b"100"));
    entries.push((0x2, b"ctr-base", b"5"));
    entries.push((0x2, b"ctr-base", b"5"));
    // An 8-byte decimal is added as 8 bytes (the pool's, not these), the "1" as 0.
    entries.push((0x2, b"ctr-eight", b"12345678"));
    entries.push((0x2, b"ctr-eight", b"1"));
    let merges = entries.iter().filter(|e| e.0 == 0x2).count() as u64;
    let written: u64 = entries.iter().map(|e| (e.1.len() + e.2.len()) as u64).sum();

    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("counters.trace");
    std::fs::write(&trace, rocksdb_trace::writes(&entries)).unwrap();
    let dumped = dump(&trace);
    assert_eq!(dumped.len(), entries.len());
    assert!(
        dumped.iter().all(|(_, t, _)| [1, 5].contains(t)),
        "{dumped:?}"
    );

    let (db, results) = (dir.path().join("db"), dir.path().join("results"));
    let o = kvlab(&[
        "replay",
        trace.to_str().unwrap(),
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--merge-operator",
        "uint64add",
        "--speed",
        "max",
        "--threads",
        "2",
        "--out",
        results.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(report_u64(&out, "MERGE", "Operations"), merges, "{out}");
    assert_eq!(report_u64(&out, "MERGE", "Return=OK"), merges, "{out}");
    assert_eq!(report_u64(&out, "INSERT", "Operations"), 1, "{out}");
    assert_eq!(
        report_u64(&out, "OVERALL", "BytesWritten"),
        written,
        "{out}"
    );
    let note = format!(
        "replay: {} of {merges} merges had an operand that is not 8 bytes, which RocksDB's \
         uint64add counts as 0",
        merges - 1
    );
    assert!(err.contains(&note), "{err}");
    let doc = result_doc(&results);
    assert!(
        doc.notes.iter().any(|n| n.starts_with(&note)),
        "{:?}",
        doc.notes
    );
    assert_eq!(
        timeline_column_sums(&results.join("timeline.csv"))["merge_ops"],
        merges
    );

    // ldb compacts first: the merges were in the write-ahead log only, and compaction
    // merges them in ldb's process, which logs into the database's LOG.
    let Some(stored) = ldb_compact(&db).and_then(|()| ldb_scan_hex(&db)) else {
        return;
    };
    let zero = hex(&0u64.to_le_bytes());
    for key in [&b"ctr-small"[..], b"ctr-wide", b"ctr-base"] {
        assert_eq!(
            stored.get(&hex(key)),
            Some(&zero),
            "{}: {stored:?}",
            String::from_utf8_lossy(key)
        );
    }
    let eight = &stored[&hex(b"ctr-eight")];
    let bytes: Vec<u8> = (2..eight.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&eight[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(bytes.len(), 8, "{eight}");
    assert!(
        bytes.iter().all(|b| (b' '..=b'~').contains(b)),
        "one 8-byte operand of printable pool bytes, plus 0: {eight}"
    );
    assert_eq!(stored.len(), 4, "{stored:?}");
    // RocksDB said so in the database's info log, when it merged.
    let logged = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("LOG"))
        .any(|p| {
            String::from_utf8_lossy(&std::fs::read(&p).unwrap())
                .contains("uint64 value corruption, size: 1 > 8")
        });
    assert!(
        logged,
        "no `uint64 value corruption` in {}/LOG*",
        db.display()
    );
}

/// `--merge-operator` is rocksdb's: on another store, or against a different
/// `-p rocksdb.merge_operator`, it is a usage error (exit 2) that says why; `--help` of
/// run, load and replay and the shell completions list it.
#[test]
fn merge_operator_flag_is_refused_where_it_does_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("counters.trace");
    std::fs::write(&trace, rocksdb_trace::writes(&[(0x2, b"k", b"1")])).unwrap();
    let trace = trace.to_str().unwrap();
    let path = dir.path().join("db");
    let path = path.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "replay",
                trace,
                "--db",
                "lmdb",
                "--path",
                path,
                "--merge-operator",
                "put",
            ],
            "--merge-operator put does not apply to --db lmdb: it is RocksDB's merge operator",
        ),
        (
            &[
                "load",
                "-P",
                "workloads/ycsb/workloada",
                "--db",
                "memcached",
                "--merge-operator",
                "max",
            ],
            "--merge-operator max does not apply to --db memcached",
        ),
        (
            &[
                "run",
                "-P",
                "workloads/ycsb/workloada",
                "--db",
                "rocksdb",
                "--path",
                path,
                "-p",
                "rocksdb.merge_operator=put",
                "--merge-operator",
                "uint64add",
            ],
            "--merge-operator uint64add and rocksdb.merge_operator=put (from -p) disagree",
        ),
        (
            &[
                "replay",
                trace,
                "--db",
                "rocksdb",
                "--path",
                path,
                "--merge-operator",
                "sum",
            ],
            "invalid value 'sum' for '--merge-operator <NAME>'",
        ),
    ];
    for (args, message) in cases {
        let o = kvlab(args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    assert!(!dir.path().join("db").exists(), "nothing opened");

    for command in ["run", "load", "replay"] {
        let help = ok(&[command, "--help"]);
        assert!(
            help.contains("--merge-operator <NAME>"),
            "{command}: {help}"
        );
        assert!(help.contains("rocksdb.merge_operator"), "{command}: {help}");
    }
    let bash = ok(&["completions", "bash"]);
    assert!(bash.contains("--merge-operator"));
    assert!(
        bash.contains("put uint64add stringappend max none"),
        "{bash}"
    );
}

//! A RocksDB trace's merges replayed through RocksDB's merge operator: db_bench's own
//! `mergerandom` trace (3 000 merges of 8-byte operands) against kvlab's RocksDB, read
//! back with RocksDB's `ldb`, recorded and dumped in RocksDB's human-readable trace
//! format (type 5 = Merge, tools/trace_analyzer_tool.h).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{ok, report_u64};

/// db_bench's `mergerandom` trace, or `None` (the test skips) when the shared data is
/// not beside the project.
fn trace() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces/rocksdb/mergerandom.trace");
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not beside the project", p.display());
        None
    }
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
    let out = match Command::new("ldb")
        .arg(format!("--db={}", db.display()))
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
                let hex_digits = value.trim().trim_start_matches("0x").len() as u64;
                (key.to_string(), hex_digits / 2)
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
    let out = ok(&[
        "replay",
        trace,
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "-p",
        "rocksdb.merge_operator=stringappend",
        "--speed",
        "max",
        "--threads",
        "2",
        "--record",
        rec.to_str().unwrap(),
        "--progress",
        "never",
    ]);
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
#[test]
fn without_a_merge_operator_merges_replay_as_puts() {
    let Some(trace) = trace() else {
        return;
    };
    let trace = trace.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
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
        "--progress",
        "never",
    ]);
    assert_eq!(report_u64(&out, "INSERT", "Operations"), 3000, "{out}");
    assert!(!out.contains("[MERGE]"), "{out}");
    let Some(stored) = ldb_scan(&db) else {
        return;
    };
    assert_eq!(stored.len(), 2775);
    assert!(stored.values().all(|len| *len == 8));
}

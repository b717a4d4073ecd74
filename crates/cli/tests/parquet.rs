//! Parquet as analysts read it: DuckDB (the PyPI package) reads a converted recording
//! with typed columns — wall-clock timestamps, nulls for what is unknown, the operation
//! kinds `result.json` counts — and gives `trace stats`' figures; a partitioned
//! dataset reads back as one table; what `--partition-by` cannot do is refused.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::common::files::shared_data_or_skip;
use crate::common::python::venv;
use crate::common::{kvlab, ok, report_u64, text};

/// The DuckDB kvlab's Parquet is checked with.
const DUCKDB: &str = "duckdb==2.0.0";

/// Runs `sql` (one statement per argument) in DuckDB from the directory `dir`; prints
/// each result as a JSON list of rows.
fn duckdb(dir: &Path, sql: &[&str]) -> Vec<Value> {
    let python = venv("duckdb-2.0.0", &[DUCKDB]);
    let script = "import duckdb, json, sys\n\
                  for q in sys.argv[1:]:\n\
                  \x20   print(json.dumps(duckdb.sql(q).fetchall(), default=str))\n";
    let out = Command::new(python)
        .current_dir(dir)
        .arg("-c")
        .arg(script)
        .args(sql)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

#[test]
fn duckdb_reads_a_recording_typed_and_gives_trace_stats_figures() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.kvtrace");
    let before = now_ns();
    let run = ok(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=6000",
        "--db",
        "null",
        "--monitor",
        "off",
        "--progress",
        "never",
        "--record",
        trace.to_str().unwrap(),
    ]);
    let after = now_ns();
    ok(&[
        "trace",
        "convert",
        trace.to_str().unwrap(),
        dir.path().join("t.parquet").to_str().unwrap(),
    ]);
    let stats: Value =
        serde_json::from_str(&ok(&["trace", "stats", trace.to_str().unwrap(), "--json"])).unwrap();
    let rows = duckdb(
        dir.path(),
        &[
            "SELECT typeof(ts) FROM 't.parquet' LIMIT 1",
            "SELECT count(*), count(DISTINCT id), \
             sum(coalesce(key_size, 0) + coalesce(value_size, 0)), min(value_size), \
             max(value_size), avg(value_size), quantile_disc(value_size, 0.5), \
             quantile_disc(value_size, 0.99), epoch_ns(min(ts)), epoch_ns(max(ts)) \
             FROM 't.parquet'",
            "SELECT kind, count(*), count(value_size), count(outcome), count(latency_ns), \
             count(next_access), count(ttl_s) FROM 't.parquet' GROUP BY kind ORDER BY kind",
            "SELECT op, count(*) FROM 't.parquet' GROUP BY op ORDER BY op",
        ],
    );
    assert_eq!(rows[0][0][0], "TIMESTAMPTZ_NS", "{rows:?}");
    let f = &rows[1][0];
    assert_eq!(f[0], stats["requests"], "{f}");
    assert_eq!(f[1], stats["distinct_keys"], "{f}");
    assert_eq!(f[2], stats["bytes"], "{f}");
    let v = &stats["value_size"];
    assert_eq!((&f[3], &f[4]), (&v["min"], &v["max"]), "{f} {v}");
    assert!((f[5].as_f64().unwrap() - v["mean"].as_f64().unwrap()).abs() < 1e-6);
    assert_eq!((&f[6], &f[7]), (&v["p50"], &v["p99"]), "{f} {v}");
    // Wall-clock times: the recording states when it started.
    let (first, last) = (f[8].as_u64().unwrap(), f[9].as_u64().unwrap());
    assert!(before <= first && first <= last && last <= after, "{f}");
    // The kinds are result.json's, counted alike; a read of the null store returns no
    // value, so its size is unknown (null); nothing carries a next access or a TTL.
    let kinds = &rows[2];
    assert_eq!(kinds.as_array().unwrap().len(), 2, "{kinds}");
    for (row, kind) in kinds.as_array().unwrap().iter().zip(["READ", "UPDATE"]) {
        assert_eq!(row[0], kind.to_ascii_lowercase(), "{kinds}");
        let n = report_u64(&run, kind, "Operations");
        assert_eq!(row[1], n, "{kind}: {kinds}");
        let sized = if kind == "READ" { 0 } else { n };
        assert_eq!(
            (&row[2], &row[3], &row[4]),
            (&sized.into(), &n.into(), &n.into())
        );
        assert_eq!((&row[5], &row[6]), (&0.into(), &0.into()), "{kinds}");
    }
    let ops: serde_json::Map<String, Value> = rows[3]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].clone()))
        .collect();
    assert_eq!(Value::Object(ops), stats["ops"]);
}

#[test]
fn a_partitioned_dataset_reads_as_one_table() {
    let Some(src) = shared_data_or_skip("traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = src.to_str().unwrap();
    let chunks = dir.path().join("chunks");
    let hours = dir.path().join("hours");
    ok(&[
        "trace",
        "convert",
        src,
        chunks.to_str().unwrap(),
        "--partition-by",
        "40000",
    ]);
    ok(&[
        "trace",
        "convert",
        src,
        hours.to_str().unwrap(),
        "--partition-by",
        "hour",
    ]);
    let stats: Value = serde_json::from_str(&ok(&["trace", "stats", src, "--json"])).unwrap();
    let requests = stats["requests"].as_u64().unwrap();
    let rows = duckdb(
        dir.path(),
        &[
            "SELECT chunk, count(*) FROM read_parquet('chunks/*/*.parquet', \
             hive_partitioning = true) GROUP BY chunk ORDER BY chunk",
            "SELECT count(*), count(DISTINCT id), count(DISTINCT dt), \
             epoch_ns(min(ts)) // 1000000000, epoch_ns(max(ts)) // 1000000000, \
             count(next_access) FROM read_parquet('hours/*/*.parquet', hive_partitioning = true)",
        ],
    );
    let chunks = rows[0].as_array().unwrap();
    assert_eq!(chunks.len() as u64, requests.div_ceil(40_000), "{chunks:?}");
    for (i, c) in chunks.iter().enumerate() {
        let want = (requests - 40_000 * i as u64).min(40_000);
        assert_eq!((c[0].as_u64(), c[1].as_u64()), (Some(i as u64), Some(want)));
    }
    let h = &rows[1][0];
    assert_eq!(h[0], requests, "{h}");
    assert_eq!(h[1], stats["distinct_keys"], "{h}");
    // An oracleGeneral trace counts seconds from its start: its hours are 1970's.
    let (first, last) = (
        stats["first_ts"].as_u64().unwrap(),
        stats["last_ts"].as_u64().unwrap(),
    );
    assert_eq!(
        (h[3].as_u64(), h[4].as_u64()),
        (Some(first), Some(last)),
        "{h}"
    );
    assert_eq!(h[2].as_u64(), Some(last / 3600 - first / 3600 + 1), "{h}");
    assert_eq!(h[5], requests, "the trace carries next accesses: {h}");
}

#[test]
fn partition_by_is_refused_where_it_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let Some(txt) = shared_data_or_skip("traces/libcachesim/cloudPhysicsIO.txt") else {
        return;
    };
    let out = dir.path().join("d");
    let out = out.to_str().unwrap();
    let txt = txt.to_str().unwrap();
    for (args, says) in [
        (
            vec!["trace", "convert", txt, out, "--partition-by", "hour"],
            "has no clock; give a number of requests",
        ),
        (
            vec!["trace", "convert", txt, out, "--partition-by", "0"],
            "expected `hour` or a number of requests",
        ),
        (
            vec![
                "trace",
                "convert",
                txt,
                out,
                "--partition-by",
                "10",
                "--output-format",
                "csv",
            ],
            "--partition-by writes a Parquet dataset, not csv",
        ),
    ] {
        let o = kvlab(&args);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!Path::new(out).exists(), "{args:?} wrote something");
    }
    // A dataset is replaced only with --overwrite, and only a dataset is replaced.
    ok(&["trace", "convert", txt, out, "--partition-by", "100000"]);
    let again = ["trace", "convert", txt, out, "--partition-by", "50000"];
    let o = kvlab(&again);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
    let mut with = again.to_vec();
    with.push("--overwrite");
    ok(&with);
    assert!(Path::new(out).join("chunk=1").is_dir());
    std::fs::write(dir.path().join("d/notes.txt"), "mine").unwrap();
    let o = kvlab(&with);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("is not a Parquet dataset kvlab wrote"),
        "{stderr}"
    );
    assert!(dir.path().join("d/notes.txt").exists());
}

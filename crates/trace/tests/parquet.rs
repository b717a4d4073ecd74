//! Parquet export and import (feature `parquet`): every record survives the round trip,
//! and DuckDB's reading of an export gives `Stats`'s figures with the query documented
//! in `kvlab_trace::parquet` (run where the `duckdb` Python package is installed:
//! `$DUCKDB_PYTHON`, or `/tmp/lcs/bin/python` with `pip install duckdb`).

use std::path::PathBuf;
use std::process::Command;

use kvlab_trace::parquet::{open_parquet, write_parquet};
use kvlab_trace::{Stats, TraceReader};

use crate::common::{reader, records};

#[test]
fn records_round_trip_through_parquet() {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "rocksdb/seekrandom_bounded.trace",
        "rocksdb/deleterandom_batch4.trace",
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        "derived/adapt_size_request.twitter.csv.zst",
        "caffeine/snia/msr-cambridge1-sample.csv",
    ] {
        let path = dir.path().join("t.parquet");
        let mut src = reader(rel, None);
        let file = std::fs::File::create(&path).unwrap();
        let n = write_parquet(&mut src, file, &path).unwrap();
        let want = records(&mut reader(rel, None));
        assert_eq!(n, want.len() as u64);
        let mut back = open_parquet(&path).unwrap();
        assert_eq!(
            back.info(),
            reader(rel, None).info(),
            "{rel}: the TraceInfo is kept"
        );
        let got = records(&mut back);
        assert!(
            got == want,
            "{rel}: records differ after the Parquet round trip"
        );
    }
}

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("DUCKDB_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/lcs/bin/python"));
    let ok = p.exists()
        && Command::new(&p)
            .args(["-c", "import duckdb"])
            .output()
            .is_ok_and(|o| o.status.success());
    ok.then_some(p)
}

#[test]
fn duckdb_reproduces_trace_stats() {
    let Some(python) = python() else {
        eprintln!("parquet: no Python with duckdb (DUCKDB_PYTHON); not run");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "rocksdb/mixgraph.trace",
        "caffeine/adapt_size/request.trace.xz",
    ] {
        let path = dir.path().join("t.parquet");
        let file = std::fs::File::create(&path).unwrap();
        write_parquet(&mut reader(rel, None), file, &path).unwrap();
        let stats = Stats::collect(&mut reader(rel, None)).unwrap();
        let script = format!(
            "import duckdb\n\
             r = duckdb.sql(\"\"\"SELECT count(*), count(DISTINCT id), sum(key_size + value_size), \
             arg_min(ts, file_row_number), arg_max(ts, file_row_number), min(value_size), \
             max(value_size), avg(value_size), quantile_disc(value_size, 0.5), \
             quantile_disc(value_size, 0.99) FROM read_parquet('{p}', file_row_number = true)\"\"\").fetchall()[0]\n\
             print(' '.join(str(v) for v in r))\n\
             for op, n in duckdb.sql(\"SELECT op, count(*) FROM '{p}' GROUP BY op ORDER BY op\").fetchall():\n\
             \x20   print(op, n)\n",
            p = path.display()
        );
        let out = Command::new(&python)
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let f: Vec<&str> = lines.next().unwrap().split(' ').collect();
        let v = stats.value_size.as_ref().unwrap();
        assert_eq!(f[0].parse::<u64>().unwrap(), stats.requests, "{rel}");
        assert_eq!(f[1].parse::<u64>().unwrap(), stats.distinct_keys, "{rel}");
        assert_eq!(f[2].parse::<u64>().ok(), stats.bytes, "{rel}");
        assert_eq!(f[3].parse::<u64>().ok(), stats.first_ts, "{rel}");
        assert_eq!(f[4].parse::<u64>().ok(), stats.last_ts, "{rel}");
        assert_eq!(
            (f[5].parse::<u64>().unwrap(), f[6].parse::<u64>().unwrap()),
            (v.min, v.max)
        );
        assert!((f[7].parse::<f64>().unwrap() - v.mean).abs() < 1e-6 * v.mean.max(1.0));
        assert_eq!(
            (f[8].parse::<u64>().unwrap(), f[9].parse::<u64>().unwrap()),
            (v.p50, v.p99),
            "{rel}"
        );
        let ops: Vec<(String, u64)> = lines
            .map(|l| {
                let (op, n) = l.split_once(' ').unwrap();
                (op.to_string(), n.parse().unwrap())
            })
            .collect();
        let want: Vec<(String, u64)> = stats.ops.iter().map(|(k, v)| (k.clone(), *v)).collect();
        assert_eq!(ops, want, "{rel}");
    }
}

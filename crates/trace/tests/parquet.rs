//! Parquet export and import (feature `parquet`): every record survives the round trip,
//! through one file and through a partitioned dataset. (DuckDB's reading of an export
//! is checked end to end in the command-line tests, with DuckDB from PyPI.)

use std::path::{Path, PathBuf};

use kvlab_trace::parquet::{open_parquet, write_dataset, write_parquet, Partition};
use kvlab_trace::{TraceReader, TraceRecord};

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
        if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
            panic!("{rel}: record {i}: {:?} became {:?}", want[i], got[i]);
        }
        assert!(
            got == want,
            "{rel}: records differ after the Parquet round trip"
        );
    }
}

/// Every file of a dataset, partitions in name order (numbers by value), files in order.
fn dataset_files(dir: &Path) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let order = |p: &PathBuf| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let (key, value) = name.split_once('=').unwrap();
        (
            key.to_string(),
            value.parse::<u64>().ok(),
            value.to_string(),
        )
    };
    parts.sort_by_key(order);
    let mut files = Vec::new();
    for part in parts {
        let mut in_part: Vec<PathBuf> = std::fs::read_dir(&part)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        in_part.sort();
        files.extend(in_part);
    }
    files
}

#[test]
fn a_partitioned_dataset_holds_every_record_once() {
    for (rel, partition, want_parts) in [
        (
            "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
            Partition::Requests(5_000),
            None,
        ),
        (
            "caffeine/snia/msr-cambridge1-sample.csv",
            Partition::Hour,
            None,
        ),
        ("rocksdb/mixgraph.trace", Partition::Hour, Some(1)),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let want = records(&mut reader(rel, None));
        let summary = write_dataset(&mut reader(rel, None), dir.path(), partition).unwrap();
        assert_eq!(summary.rows, want.len() as u64, "{rel}");
        let files = dataset_files(dir.path());
        assert_eq!(files.len() as u64, summary.files, "{rel}");
        if let Partition::Requests(n) = partition {
            assert_eq!(summary.partitions, (want.len() as u64).div_ceil(n), "{rel}");
        }
        if let Some(parts) = want_parts {
            assert_eq!(summary.partitions, parts, "{rel}");
        }
        let mut got: Vec<TraceRecord> = Vec::new();
        for f in &files {
            let mut back = open_parquet(f).unwrap();
            assert_eq!(back.info(), reader(rel, None).info(), "{rel}");
            got.extend(records(&mut back));
        }
        assert!(
            got == want,
            "{rel}: records differ after the dataset round trip"
        );
    }
}

#[test]
fn a_trace_without_a_clock_is_not_partitioned_by_the_hour() {
    let dir = tempfile::tempdir().unwrap();
    let e = write_dataset(
        &mut reader("libcachesim/cloudPhysicsIO.txt", None),
        dir.path(),
        Partition::Hour,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("partition by a request count"),
        "{e}"
    );
}

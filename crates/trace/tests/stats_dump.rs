//! `Stats` JSON and the rocksdb-human dump of non-RocksDB formats; errors of damaged
//! text and binary files name the file and the line or byte.

use kvlab_trace::{dump, open, Format, OpenOptions, Stats, TraceError, TraceRecord};

use crate::common::{data, reader, records, stats};

#[test]
fn stats_json_has_the_fields_scripts_read() {
    let s = stats("libcachesim/cloudPhysicsIO.oracleGeneral.bin", None);
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    for field in [
        "requests",
        "distinct_keys",
        "bytes",
        "ops",
        "first_ts",
        "last_ts",
        "format",
        "time_unit",
        "key_size",
        "value_size",
        "damaged_at",
    ] {
        assert!(v.get(field).is_some(), "no {field} in {v}");
    }
    // libcachesim 0.3.5 (see libcachesim.rs): n=113872, 48974 objects, 4368040448 bytes,
    // clock_time 5633898..5641098.
    assert_eq!(v["requests"], 113_872);
    assert_eq!(v["distinct_keys"], 48_974);
    assert_eq!(v["bytes"], 4_368_040_448u64);
    assert_eq!(
        (v["first_ts"].as_u64(), v["last_ts"].as_u64()),
        (Some(5_633_898), Some(5_641_098))
    );
    assert_eq!(v["ops"]["get"], 113_872);
    assert_eq!(v["format"], "oracleGeneral");
    assert_eq!(v["time_unit"], "seconds");
    assert!(v["key_size"].is_null(), "an id trace states no key sizes");
    assert!(v["damaged_at"].is_null());
    // A format without sizes: bytes null.
    let t = stats("caffeine/lirs/cs.trace.gz", None);
    let v: serde_json::Value = serde_json::from_str(&t.to_json()).unwrap();
    assert!(v["bytes"].is_null() && v["value_size"].is_null());
}

#[test]
fn size_summaries_equal_a_sort_of_every_size() {
    for rel in [
        "rocksdb/mixgraph.trace",
        "caffeine/adapt_size/request.trace.xz",
    ] {
        let s = stats(rel, None);
        let recs = records(&mut reader(rel, None));
        let check = |mut v: Vec<u64>, got: &kvlab_trace::stats::SizeSummary| {
            v.sort_unstable();
            let n = v.len();
            // Nearest rank: the ceil(p·n)-th smallest.
            let rank = |p: usize| v[(p * n).div_ceil(100).max(1) - 1];
            let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
            assert_eq!(
                (got.min, got.max, got.p50, got.p99),
                (v[0], v[n - 1], rank(50), rank(99)),
                "{rel}"
            );
            assert!((got.mean - mean).abs() < 1e-6 * mean.max(1.0), "{rel}");
        };
        // Value sizes of the requests that state one: a read without a value (a
        // RocksDB Get) does not.
        let info = reader(rel, None).info().clone();
        check(
            recs.iter()
                .filter(|r| info.knows_value_size(r))
                .map(|r| r.value_size)
                .collect(),
            s.value_size.as_ref().unwrap(),
        );
        if let Some(k) = &s.key_size {
            check(recs.iter().map(|r| u64::from(r.key_size)).collect(), k);
        }
        assert_eq!(s.bytes, Some(recs.iter().map(TraceRecord::obj_size).sum()));
    }
}

#[test]
fn dump_of_an_id_trace_writes_8_byte_big_endian_keys_and_microseconds() {
    // oracleGeneral: seconds; the first record is id 42932745, 512 bytes, at 5633898 s.
    let mut r = reader("libcachesim/cloudPhysicsIO.oracleGeneral.bin", None);
    let mut out = Vec::new();
    let n = dump::rocksdb_human(&mut r, &mut out).unwrap();
    assert_eq!(n, 113_872);
    let first = String::from_utf8_lossy(&out)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(
        first,
        format!("0x{:016X} 0 0 512 5633898000000", 42_932_745u64)
    );
    // MSR: FILETIME ticks of 100 ns, the disk as column, writes as type 1.
    let mut r = reader("caffeine/snia/msr-cambridge1-sample.csv", None);
    let mut out = Vec::new();
    dump::rocksdb_human(&mut r, &mut out).unwrap();
    let first = String::from_utf8_lossy(&out)
        .lines()
        .next()
        .unwrap()
        .to_string();
    // 128166385295514663,hm,0,Write,9056014336,2048,2833
    assert_eq!(
        first,
        format!("0x{:016X} 1 0 2048 12816638529551466", 9_056_014_336u64)
    );
}

#[test]
fn a_bad_text_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (format, name, text, line) in [
        (Format::Lirs, "a.lirs", "1\n2\nx3\n", 3),
        (Format::Txt, "a.txt", "1\n\n0x10\nzz\n", 4),
        (Format::AdaptSize, "a.adapt", "1 2 3\n1 2\n", 2),
        (Format::Twitter, "a.tw", "1,k,1,2,1,get,0\n1,k,1\n", 2),
        (
            Format::Msr,
            "a.msr",
            "1,h,0,Read,0,512,1\n1,h,0,Erase,0,512,1\n",
            2,
        ),
        (Format::Tencent, "a.tc", "1,2,3,0,5\n1,2,3,7,5\n", 2),
        (Format::Arc, "a.lis", "1 1 0 0\nfoo\n", 2),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let mut r = open(
            &path,
            &OpenOptions {
                format: Some(format),
                csv: None,
                ..OpenOptions::default()
            },
        )
        .unwrap();
        let mut rec = TraceRecord::default();
        let err = loop {
            match r.read(&mut rec) {
                Ok(true) => {}
                Ok(false) => panic!("{format}: a bad line read to the end"),
                Err(e) => break e,
            }
        };
        match &err {
            TraceError::BadLine {
                path: p, line: l, ..
            } => {
                assert_eq!((p, *l), (&path, line), "{format}: {err}");
            }
            e => panic!("{format}: expected a bad line, got {e}"),
        }
        assert!(
            err.to_string().contains(&format!("{name}:{line}:")),
            "{err}"
        );
    }
}

#[test]
fn a_partial_binary_record_is_an_error_at_its_offset() {
    let og = std::fs::read(data("libcachesim/cloudPhysicsIO.oracleGeneral.bin")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.oracleGeneral.bin");
    std::fs::write(&path, &og[..24 * 1000 + 10]).unwrap();
    let s = Stats::collect(&mut open(&path, &OpenOptions::default()).unwrap()).unwrap();
    assert_eq!((s.requests, s.damaged_at), (1000, Some(24_000)));
    assert!(s.damage.unwrap().contains("cut.oracleGeneral.bin"));
}

#[test]
fn unknown_files_ask_for_a_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mystery.bin");
    std::fs::write(&path, [0u8, 1, 2, 3, 0, 0, 0, 9]).unwrap();
    match open(&path, &OpenOptions::default()) {
        Err(TraceError::Format { what, .. }) => assert!(what.contains("oracleGeneral"), "{what}"),
        Err(e) => panic!("expected a format error, got {e}"),
        Ok(_) => panic!("a mystery file opened"),
    }
}

#[test]
fn any_byte_stream_opens_like_a_file() {
    // The gzip'd LIRS trace from memory, its format told from the content.
    let bytes = std::fs::read(data("caffeine/lirs/cs.trace.gz")).unwrap();
    let mut r = kvlab_trace::open_reader(
        Box::new(std::io::Cursor::new(bytes)),
        "-",
        &OpenOptions::default(),
    )
    .unwrap();
    assert_eq!(r.info().format, "lirs");
    let s = Stats::collect(&mut r).unwrap();
    assert_eq!((s.requests, s.distinct_keys), (6_781, 1_409));
}

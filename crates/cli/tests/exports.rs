//! `kvlab trace convert` into other tools' formats, each file read by that tool:
//! libCacheSim (the `libcachesim` PyPI package) simulates the oracleGeneral, csv and txt
//! files kvlab writes, Debian's db_bench replays its RocksDB query traces, and `ldb`
//! finds kvlab's RocksDB records in YCSB's column family.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::files::shared_data_or_skip;
use crate::common::python::venv;
use crate::common::{kvlab, ok, text};

/// The libCacheSim build kvlab's simulator is checked against (docs/simulation.md).
const LIBCACHESIM: &str = "libcachesim==0.3.5";

/// libCacheSim's miss ratios of a file: `argv` = path, kind (oracleGeneral, csv, txt),
/// a JSON list of `[policy, size, object_mode]`; prints a JSON list of miss ratios.
/// The csv columns are the ones `kvlab trace convert --output-format csv` writes.
const LIBCACHESIM_MISS_RATIOS: &str = r#"
import json, sys
import libcachesim as lcs
path, kind, jobs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def reader(obj):
    if kind == "csv":
        p = lcs.ReaderInitParam(has_header=True, has_header_set=True, delimiter=",",
                                obj_id_is_num=True, obj_id_is_num_set=True,
                                ignore_obj_size=obj)
        p.time_field, p.obj_id_field, p.obj_size_field, p.op_field = 1, 2, 3, 4
        return lcs.TraceReader(path, lcs.TraceType.CSV_TRACE, p)
    t = {"oracleGeneral": lcs.TraceType.ORACLE_GENERAL_TRACE,
         "txt": lcs.TraceType.PLAIN_TXT_TRACE}[kind]
    return lcs.TraceReader(path, t, lcs.ReaderInitParam(ignore_obj_size=obj))
out = []
for policy, size, obj in jobs:
    cache = {"LRU": lcs.LRU, "Belady": lcs.Belady}[policy](size)
    out.append(cache.process_trace(reader(obj))[0])
print(json.dumps(out))
"#;

/// `kvlab sim FILE --policy P --size S [--bytes] --json`: (requests, misses) of the row.
fn kvlab_misses(file: &Path, policy: &str, size: &str, bytes: bool) -> (u64, u64) {
    let mut args = vec![
        "sim",
        file.to_str().unwrap(),
        "--policy",
        policy,
        "--size",
        size,
        "--json",
    ];
    if bytes {
        args.push("--bytes");
    }
    let out = ok(&args);
    let rows: Value = serde_json::from_str(&out).unwrap();
    let r = &rows[0];
    (
        r["requests"].as_u64().unwrap(),
        r["misses"].as_u64().unwrap(),
    )
}

/// libCacheSim's miss ratios of `file` for each (policy, size in objects or bytes,
/// object mode).
fn libcachesim_miss_ratios(
    python: &Path,
    file: &Path,
    kind: &str,
    jobs: &[(&str, u64, bool)],
) -> Vec<f64> {
    let o = Command::new(python)
        .args(["-c", LIBCACHESIM_MISS_RATIOS])
        .arg(file)
        .arg(kind)
        .arg(serde_json::to_string(jobs).unwrap())
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "libcachesim on {}: {err}",
        file.display()
    );
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"))
}

/// A run kvlab recorded against moka (a cache workload with look-aside fills, deletes
/// and reads that miss, so reads without a value), converted to oracleGeneral, csv and
/// txt: libCacheSim's LRU miss ratio on each file equals `kvlab sim`'s on the same file
/// and on the recording, in object and byte mode; libCacheSim's Belady, which takes
/// the oracleGeneral file's next-access times, equals `kvlab sim`'s Belady on the
/// recording (which computes its own). And libCacheSim's own oracleGeneral sample,
/// converted to oracleGeneral, comes back byte for byte.
#[test]
fn libcachesim_reads_each_converted_file_with_kvlab_sims_miss_ratio() {
    let python = venv("libcachesim-0.3.5", &[LIBCACHESIM]);
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("moka.kvtrace");
    let report = ok(&[
        "run",
        "-P",
        "workloads/cache/kv-mixed-balanced",
        "--db",
        "moka",
        "--cache-size",
        "4MiB",
        "-p",
        "cache.operations=30000",
        "-p",
        "cache.get=0.6",
        "-p",
        "cache.set=0.3",
        "-p",
        "cache.delete=0.1",
        "--seed",
        "3",
        "--record",
        rec.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert!(report.contains("[CACHE]"), "{report}");

    let og = dir.path().join("moka.oracleGeneral.bin");
    let csv = dir.path().join("moka.csv");
    let txt = dir.path().join("moka.txt");
    let r = rec.to_str().unwrap();
    // oracleGeneral is told from the name; csv and txt are asked for.
    let o = kvlab(&["trace", "convert", r, og.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("reads without a value sized as their key's other requests"),
        "{err}"
    );
    for (path, format) in [(&csv, "csv"), (&txt, "txt")] {
        ok(&[
            "trace",
            "convert",
            r,
            path.to_str().unwrap(),
            "--output-format",
            format,
        ]);
    }
    let head = std::fs::read_to_string(&csv).unwrap();
    assert!(
        head.starts_with("time,obj_id,obj_size,op\n"),
        "{}",
        &head[..100]
    );

    let object_sizes = [500u64, 2000];
    let byte_sizes = [1u64 << 20, 4 << 20];
    for (file, kind) in [(&og, "oracleGeneral"), (&csv, "csv"), (&txt, "txt")] {
        let mut jobs: Vec<(&str, u64, bool)> =
            object_sizes.iter().map(|&s| ("LRU", s, true)).collect();
        if kind != "txt" {
            jobs.extend(byte_sizes.iter().map(|&s| ("LRU", s, false)));
        }
        let theirs = libcachesim_miss_ratios(&python, file, kind, &jobs);
        for (&(policy, size, object), their) in jobs.iter().zip(&theirs) {
            let size_arg = size.to_string();
            let (requests, misses) = kvlab_misses(file, policy, &size_arg, !object);
            assert_eq!(requests, 30_000, "{kind}");
            assert!(misses > 0 && misses < requests, "{kind} {size}: {misses}");
            let ours = misses as f64 / requests as f64;
            assert!(
                (ours - their).abs() < 1e-9,
                "{kind} LRU at {size} ({}): kvlab sim {ours}, libCacheSim {their}",
                if object { "objects" } else { "bytes" }
            );
            // The conversion keeps what `kvlab sim` simulates of the recording.
            assert_eq!(
                kvlab_misses(&rec, policy, &size_arg, !object),
                (requests, misses),
                "{kind} {size}: the recording and its conversion"
            );
        }
    }

    // Belady reads oracleGeneral's next-access times.
    let jobs = [
        ("Belady", 500, true),
        ("Belady", 2000, true),
        ("Belady", 1 << 20, false),
    ];
    let theirs = libcachesim_miss_ratios(&python, &og, "oracleGeneral", &jobs);
    for (&(_, size, object), their) in jobs.iter().zip(&theirs) {
        let (requests, misses) = kvlab_misses(&rec, "belady", &size.to_string(), !object);
        let ours = misses as f64 / requests as f64;
        assert!(
            (ours - their).abs() < 1e-9,
            "Belady at {size}: kvlab sim on the recording {ours}, libCacheSim on the \
             oracleGeneral file {their}"
        );
    }

    let Some(sample) = shared_data_or_skip("traces/libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let again = dir.path().join("again.oracleGeneral.bin");
    ok(&[
        "trace",
        "convert",
        sample.to_str().unwrap(),
        again.to_str().unwrap(),
    ]);
    assert!(
        std::fs::read(&sample).unwrap() == std::fs::read(&again).unwrap(),
        "libCacheSim's oracleGeneral sample, converted to oracleGeneral, differs"
    );
}

/// Output names that do not tell the format are refused before anything is read,
/// naming the flag that says it.
#[test]
fn convert_asks_for_the_format_when_the_name_does_not_tell_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    let o = kvlab(&["trace", "convert", "missing.trace", out.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--output-format"), "{err}");
    assert!(!out.exists());
}

/// Counts of `kvlab trace dump` lines by RocksDB type id (0 Get, 1 Put, 2 Delete, 6
/// Seek…), the (key, type) sequence, and the keys whose last write is a put (what a
/// database that replayed the trace from empty holds).
struct Dump {
    by_type: std::collections::BTreeMap<u8, u64>,
    sequence: Vec<(String, u8)>,
    live: std::collections::BTreeSet<String>,
}

fn dump(trace: &Path) -> Dump {
    let out = ok(&["trace", "dump", trace.to_str().unwrap()]);
    let mut d = Dump {
        by_type: Default::default(),
        sequence: Vec::new(),
        live: Default::default(),
    };
    for line in out.lines() {
        let mut f = line.split(' ');
        let key = f.next().unwrap().to_string();
        let kind: u8 = f.next().unwrap().parse().unwrap();
        *d.by_type.entry(kind).or_default() += 1;
        match kind {
            1 => {
                d.live.insert(key.clone());
            }
            2 => {
                d.live.remove(&key);
            }
            _ => {}
        }
        d.sequence.push((key, kind));
    }
    d
}

/// A `COUNT` of db_bench's `-statistics` output.
fn ticker(stats: &str, name: &str) -> u64 {
    let prefix = format!("{name} COUNT : ");
    stats
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {name} in db_bench's statistics:\n{stats}"))
        .trim()
        .parse()
        .unwrap()
}

/// Two recordings — YCSB reads, updates, inserts and scans against RocksDB, and a cache
/// workload's gets, sets and deletes against moka — converted to RocksDB's query-trace
/// format: kvlab reads each back with the recording's operations on the same keys in
/// the same order, and Debian's db_bench replays it (`-benchmarks=replay`) with as many
/// Gets, written keys (Puts and Deletes) and Seeks as the recording has, leaving in its
/// database exactly the keys whose last write was a put (RocksDB's `ldb` lists them).
/// And db_bench's own traces, converted, read back as they were.
#[test]
fn db_bench_replays_a_converted_recording_with_its_operation_counts() {
    if Command::new("db_bench").arg("--version").output().is_err() {
        eprintln!("skipped: db_bench (rocksdb-tools) not runnable");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let ycsb = [
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=3000",
        "-p",
        "readproportion=0.4",
        "-p",
        "updateproportion=0.2",
        "-p",
        "insertproportion=0.2",
        "-p",
        "scanproportion=0.2",
        "--db",
        "rocksdb",
        "--path",
        &d("ycsb-db"),
        "--seed",
        "5",
    ];
    let cache = [
        "run",
        "-P",
        "workloads/cache/kv-mixed-balanced",
        "-p",
        "cache.operations=5000",
        "-p",
        "cache.get=0.6",
        "-p",
        "cache.set=0.3",
        "-p",
        "cache.delete=0.1",
        "--db",
        "moka",
        "--cache-size",
        "1MiB",
        "--seed",
        "5",
    ];
    for (name, run) in [("ycsb", &ycsb[..]), ("cache", &cache[..])] {
        let rec = d(&format!("{name}.kvtrace"));
        ok(&[run, &["--record", &rec, "--progress", "never"]].concat());
        let out = dir.path().join(format!("{name}.rocksdb.trace"));
        ok(&[
            "trace",
            "convert",
            &rec,
            out.to_str().unwrap(),
            "--output-format",
            "rocksdb",
        ]);
        let recorded = dump(Path::new(&rec));
        let converted = dump(&out);
        assert_eq!(converted.by_type, recorded.by_type, "{name}");
        assert!(
            converted.sequence == recorded.sequence,
            "{name}: keys or order"
        );
        let n = |t: u8| recorded.by_type.get(&t).copied().unwrap_or(0);
        if name == "ycsb" {
            assert!(
                n(0) > 0 && n(1) > 0 && n(6) > 0,
                "{name}: {:?}",
                recorded.by_type
            );
        } else {
            assert!(
                n(0) > 0 && n(1) > 0 && n(2) > 0,
                "{name}: {:?}",
                recorded.by_type
            );
        }

        // Debian's db_bench 7.8.3 asserts (`!handles.empty()`) when it replays into a
        // database opened with one column family: two make it pass the handles on.
        let db = d(&format!("{name}-replayed"));
        let o = Command::new("db_bench")
            .args([
                "-benchmarks=replay",
                &format!("-trace_file={}", out.display()),
                &format!("-db={db}"),
                "-num_column_families=2",
                "-statistics=true",
                "-trace_replay_fast_forward=100",
            ])
            .output()
            .unwrap();
        let (stats, err) = text(&o);
        assert!(o.status.success(), "db_bench replay: {stats}\n{err}");
        assert!(stats.contains("Replay completed"), "{stats}\n{err}");
        assert_eq!(
            ticker(&stats, "rocksdb.number.keys.read"),
            n(0),
            "{name}: Gets"
        );
        assert_eq!(
            ticker(&stats, "rocksdb.number.keys.written"),
            n(1) + n(2),
            "{name}: Puts and Deletes"
        );
        assert_eq!(
            ticker(&stats, "rocksdb.number.db.seek"),
            n(6),
            "{name}: Seeks"
        );

        let o = Command::new("ldb")
            .args([&format!("--db={db}"), "--hex", "scan"])
            .output()
            .unwrap();
        let (listed, err) = text(&o);
        assert!(o.status.success(), "ldb scan: {err}");
        let stored: std::collections::BTreeSet<String> = listed
            .lines()
            .map(|l| l.split(" : ").next().unwrap().to_string())
            .collect();
        assert_eq!(stored.len(), recorded.live.len(), "{name}: keys left");
        assert!(stored == recorded.live, "{name}: the keys left differ");
    }

    // db_bench's own traces (write batches of 4, merges, MultiGets, bounded seeks)
    // come back with every operation, key, value size and timestamp.
    for t in [
        "deleterandom_batch4",
        "mergerandom",
        "multireadrandom",
        "seekrandom_bounded",
    ] {
        let Some(src) = shared_data_or_skip(&format!("traces/rocksdb/{t}.trace")) else {
            return;
        };
        let out = dir.path().join(format!("{t}.again"));
        ok(&[
            "trace",
            "convert",
            src.to_str().unwrap(),
            out.to_str().unwrap(),
            "--output-format",
            "rocksdb",
        ]);
        let theirs = ok(&["trace", "dump", src.to_str().unwrap()]);
        let ours = ok(&["trace", "dump", out.to_str().unwrap()]);
        assert!(
            ours == theirs,
            "{t}: the converted trace reads back differently"
        );
        assert_eq!(
            std::fs::metadata(&src).unwrap().len(),
            std::fs::metadata(&out).unwrap().len(),
            "{t}"
        );
    }
}

/// The keys `ldb --db=DB [--column_family=CF] scan --hex` lists.
fn ldb_keys(db: &Path, cf: Option<&str>) -> std::collections::BTreeSet<String> {
    let mut c = Command::new("ldb");
    c.arg(format!("--db={}", db.display()));
    if let Some(cf) = cf {
        c.arg(format!("--column_family={cf}"));
    }
    let o = c.args(["scan", "--hex"]).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "ldb scan {cf:?}: {err}");
    out.lines()
        .map(|l| l.split(" : ").next().unwrap().to_string())
        .collect()
}

/// kvlab's RocksDB store keeps its records where YCSB's RocksDB binding does, in the
/// column family `usertable`: `ldb --column_family=usertable scan` lists exactly the
/// keys kvlab loaded and `default` holds none. `-p rocksdb.column_family=NAME` picks
/// another. A database whose records are in `default` (db_bench's) is refused with the
/// option that opens it, and opens with it.
#[test]
fn rocksdb_records_are_in_ycsbs_column_family() {
    if Command::new("ldb").arg("--version").output().is_err() {
        eprintln!("skipped: ldb (rocksdb-tools) not runnable");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let rec = dir.path().join("load.kvtrace");
    ok(&[
        "load",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=200",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--record",
        rec.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    let loaded: std::collections::BTreeSet<String> = dump(&rec).live;
    assert_eq!(loaded.len(), 200);
    assert!(
        ldb_keys(&db, Some("usertable")) == loaded,
        "usertable's keys"
    );
    assert!(ldb_keys(&db, None).is_empty(), "records in `default`");

    let other = dir.path().join("other");
    ok(&[
        "load",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=20",
        "-p",
        "rocksdb.column_family=kv",
        "--db",
        "rocksdb",
        "--path",
        other.to_str().unwrap(),
        "--progress",
        "never",
    ]);
    assert_eq!(ldb_keys(&other, Some("kv")).len(), 20);

    if Command::new("db_bench").arg("--version").output().is_err() {
        eprintln!("skipped: db_bench (rocksdb-tools) not runnable");
        return;
    }
    let bench = dir.path().join("bench");
    let o = Command::new("db_bench")
        .args([
            "-benchmarks=fillseq",
            "-num=50",
            &format!("-db={}", bench.display()),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    let run = |extra: &[&str]| {
        kvlab(
            &[
                &[
                    "run",
                    "-P",
                    "workloads/ycsb/workloadc",
                    "-p",
                    "recordcount=50",
                    "-p",
                    "operationcount=50",
                    "--db",
                    "rocksdb",
                    "--path",
                    bench.to_str().unwrap(),
                    "--progress",
                    "never",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let o = run(&[]);
    let (_, err) = text(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("in the column family `default`")
            && err.contains("-p rocksdb.column_family=default"),
        "{err}"
    );
    let o = run(&["-p", "rocksdb.column_family=default"]);
    assert!(o.status.success(), "{}", text(&o).1);
    // Refusing created nothing: db_bench's database has its one column family.
    assert_eq!(ldb_keys(&bench, None).len(), 50);
    let o = Command::new("ldb")
        .args([&format!("--db={}", bench.display()), "list_column_families"])
        .output()
        .unwrap();
    assert!(text(&o).0.contains("{default}"), "{}", text(&o).0);
}

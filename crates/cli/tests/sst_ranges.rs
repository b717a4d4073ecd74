//! Key ranges sized by the data: `-p keyrange_source=sst` reads the SST files of a
//! RocksDB database that db_bench filled and compacted, and `-p keyrange_bounds=FILE`
//! takes the same starts from a file; both issue the same keys.

use std::path::Path;
use std::process::Command;

use crate::common::files::read_json;
use crate::common::{kvlab, ok, text};

/// db_bench's `fillseq` of keys 0..n (16-byte keys, 200-byte values) into small SST
/// files, then `compact` (the whole key space).
fn db_bench_database(dir: &Path, n: u64) {
    let out = Command::new("db_bench")
        .arg(format!("--db={}", dir.display()))
        .args([
            "--benchmarks=fillseq,compact",
            "--key_size=16",
            "--value_size=200",
            "--compression_type=none",
            "--write_buffer_size=524288",
            "--target_file_size_base=262144",
            "--disable_wal=true",
            "--threads=1",
        ])
        .arg(format!("--num={n}"))
        .output()
        .expect("db_bench runs (Debian's rocksdb-tools)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The keys of a recorded run, in order.
fn recorded_keys(trace: &Path) -> Vec<String> {
    let dump = ok(&[
        "trace",
        "dump",
        trace.to_str().unwrap(),
        "--format",
        "rocksdb-human",
    ]);
    dump.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

/// A workload setting of a result.json.
fn setting(result: &Path, name: &str) -> Option<String> {
    let doc = read_json(result);
    fn find(v: &serde_json::Value, name: &str) -> Option<String> {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(x) = m.get(name) {
                    return Some(x.as_str().map_or_else(|| x.to_string(), str::to_owned));
                }
                m.values().find_map(|x| find(x, name))
            }
            serde_json::Value::Array(a) => a.iter().find_map(|x| find(x, name)),
            _ => None,
        }
    }
    find(&doc, name)
}

const FLAGS: [&str; 8] = [
    "workload=kvlab.mixgraph",
    "keyrange_dist_a=14.18",
    "keyrange_dist_b=-2.917",
    "keyrange_dist_c=0.0164",
    "keyrange_dist_d=-0.08082",
    "key_dist_a=0.002312",
    "key_dist_b=0.3467",
    "reads=3000",
];

#[test]
fn sst_ranges_are_the_files_of_a_compacted_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let n = 20_000u64;
    db_bench_database(&db, n);
    let files = std::fs::read_dir(&db)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".sst")
        })
        .count();
    assert!(files > 5, "{files} SST files for 4.4 MB in 256 KiB files");

    let run = |extra: &[&str], out: &str| -> std::path::PathBuf {
        let trace = dir.path().join(format!("{out}.kvtrace"));
        let out = dir.path().join(out);
        // db_bench's records are in RocksDB's `default` column family.
        let mut args = vec!["run", "--db", "rocksdb", "--path", db.to_str().unwrap()];
        args.extend(["-p", "rocksdb.column_family=default"]);
        for f in FLAGS.iter().chain(extra) {
            args.extend(["-p", f]);
        }
        let (t, o) = (trace.to_str().unwrap(), out.to_str().unwrap());
        args.extend(["--record", t, "--out", o, "--progress", "never"]);
        ok(&args);
        trace
    };
    let sst_trace = run(&["keyrange_source=sst"], "sst");
    let result = dir.path().join("sst/result.json");
    let starts: Vec<u64> = setting(&result, "keyrange_starts")
        .expect("keyrange_starts in the result")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(starts.len(), files, "one range per SST file");
    assert_eq!(starts[0], 0);
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    assert_eq!(setting(&result, "keyrange_num").unwrap(), files.to_string());
    // num: one past the largest key the database holds.
    assert_eq!(setting(&result, "num").unwrap(), n.to_string());

    // The same starts from a file (with a comment and a blank line) draw the same keys.
    let bounds = dir.path().join("bounds.txt");
    let text_starts: Vec<String> = starts.iter().map(u64::to_string).collect();
    std::fs::write(&bounds, format!("# starts\n\n{}\n", text_starts.join("\n"))).unwrap();
    let bounds_prop = format!("keyrange_bounds={}", bounds.display());
    let num_prop = format!("num={n}");
    let file_trace = run(&[&bounds_prop, &num_prop], "file");
    let sst_keys = recorded_keys(&sst_trace);
    assert_eq!(sst_keys.len(), 3000);
    assert!(sst_keys == recorded_keys(&file_trace), "different keys");
    // Every key is one the database holds (key numbers below n).
    for k in &sst_keys {
        let number = u64::from_str_radix(&k[2..18], 16).unwrap();
        assert!(number < n, "{k}");
    }
    // Unequal ranges are not db_bench's equal ones: the stream differs.
    let equal_trace = run(&[&num_prop, &format!("keyrange_num={files}")], "equal");
    assert!(sst_keys != recorded_keys(&equal_trace), "the same keys");
}

#[test]
fn sst_ranges_need_a_rocksdb_database() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    let m = missing.to_str().unwrap();
    for (args, want) in [
        (
            vec!["--db", "lmdb", "--path", m],
            "--db rocksdb, not `lmdb`",
        ),
        (
            vec!["--db", "rocksdb", "--path", m],
            "no RocksDB database at",
        ),
        (vec!["--db", "rocksdb"], "needs the database: --path DIR"),
    ] {
        let mut all = vec!["run"];
        all.extend(args);
        all.extend(["-p", "workload=kvlab.mixgraph", "-p", "keyrange_source=sst"]);
        let o = kvlab(&all);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: {err}");
    }
    // A file of starts that go down names its line.
    let bounds = dir.path().join("bounds.txt");
    std::fs::write(&bounds, "0\n100\n50\n").unwrap();
    let prop = format!("keyrange_bounds={}", bounds.display());
    let o = kvlab(&[
        "run",
        "--db",
        "null",
        "-p",
        "workload=kvlab.mixgraph",
        "-p",
        &prop,
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bounds.txt:3: 50: expected a key number above"),
        "{err}"
    );
}

/// `model fit --key-ranges sst:DB` cuts the trace's keys at the database's files: the
/// model records the starts in `[kvlab]`, and `run --model` draws from those ranges.
#[test]
fn a_model_fitted_on_a_layout_keeps_its_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let n = 20_000u64;
    db_bench_database(&db, n);
    let d = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // A trace over the database's keys: mixgraph on its own layout (db_bench's records
    // are in RocksDB's `default` column family).
    let mut args = vec!["run", "--db", "rocksdb", "--path", db.to_str().unwrap()];
    args.extend(["-p", "rocksdb.column_family=default"]);
    for f in FLAGS.iter().chain(&["keyrange_source=sst", "reads=20000"]) {
        args.extend(["-p", f]);
    }
    let (trace, first) = (d("trace.kvtrace"), d("first"));
    args.extend(["--record", &trace, "--out", &first, "--progress", "never"]);
    ok(&args);
    let starts = setting(&dir.path().join("first/result.json"), "keyrange_starts").unwrap();

    let model = d("model.toml");
    let sst_rule = format!("sst:{}", db.display());
    ok(&[
        "model",
        "fit",
        &trace,
        "--key-ranges",
        &sst_rule,
        "-o",
        &model,
    ]);
    let written = std::fs::read_to_string(&model).unwrap();
    let doc: toml::Table = written.parse().unwrap();
    let recorded: Vec<String> = doc["kvlab"]["keyrange_starts"]
        .as_array()
        .expect("[kvlab] keyrange_starts")
        .iter()
        .map(|v| v.as_integer().unwrap().to_string())
        .collect();
    assert_eq!(recorded.join(","), starts);
    assert_eq!(
        doc["mixgraph"]["keyrange_num"].as_integer(),
        Some(recorded.len() as i64)
    );
    assert_eq!(doc["mixgraph"]["num"].as_integer(), Some(n as i64));
    assert_eq!(
        doc["kvlab"]["keyrange_source"].as_str(),
        Some(sst_rule.as_str())
    );

    // The model runs on its ranges.
    let (again, out) = (d("again.kvtrace"), d("again"));
    ok(&[
        "run",
        "--model",
        &model,
        "--db",
        "null",
        "-p",
        "reads=1000",
        "--record",
        &again,
        "--out",
        &out,
        "--progress",
        "never",
    ]);
    assert_eq!(
        setting(&dir.path().join("again/result.json"), "keyrange_starts").unwrap(),
        starts
    );

    // Starts that go down are refused with the file and line.
    let line = written
        .lines()
        .position(|l| l.starts_with("keyrange_starts"))
        .unwrap()
        + 1;
    let bad = written.replacen("[\n    0,", "[\n    19000,", 1);
    assert_ne!(bad, written, "the starts are written from 0");
    let bad_path = d("bad.toml");
    std::fs::write(&bad_path, bad).unwrap();
    let o = kvlab(&["run", "--model", &bad_path, "--db", "null"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("bad.toml:{line}: key `keyrange_starts`")),
        "{err}"
    );

    // A database that is not there.
    let o = kvlab(&[
        "model",
        "fit",
        &trace,
        "--key-ranges",
        &format!("sst:{}", d("none")),
        "-o",
        &model,
        "--overwrite",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no RocksDB database at"), "{err}");
}

//! RocksDB query traces against RocksDB itself: Debian's `librocksdb.so.7.8` exports
//! `rocksdb::trace_analyzer_tool(int, char**)`, so a one-line C++ `main` linked against
//! it is RocksDB's own `trace_analyzer`. Its `-convert_to_human_readable_trace` output
//! must equal kvlab's [`kvlab_trace::dump::rocksdb_human`] byte for byte, and its
//! `Total_requests`/`Total_gets`/… line must equal kvlab's counts, for each of the five
//! traces Debian's `db_bench` 7.8.3 wrote.
//!
//! Needs `g++` and `librocksdb-dev` (`apt-get install -y g++ librocksdb-dev`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use kvlab_trace::{dump, Format, Op, TraceError, TraceRecord};

use crate::common::{data, reader};

const TRACES: [&str; 5] = [
    "deleterandom_batch4",
    "mergerandom",
    "mixgraph",
    "multireadrandom",
    "seekrandom_bounded",
];

/// The trace_analyzer binary, built once per test run.
fn trace_analyzer() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kvlab-trace-analyzer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let src = dir.join("ta.cc");
        std::fs::write(
            &src,
            "namespace rocksdb { int trace_analyzer_tool(int, char**); }\n\
             int main(int c, char** v){return rocksdb::trace_analyzer_tool(c, v);}\n",
        )
        .expect("writing ta.cc");
        let bin = dir.join("trace_analyzer");
        let out = Command::new("g++")
            .arg(&src)
            .arg("-o")
            .arg(&bin)
            .arg("-lrocksdb")
            .output()
            .expect("running g++ (apt-get install -y g++ librocksdb-dev)");
        assert!(
            out.status.success(),
            "g++ ta.cc -lrocksdb failed (apt-get install -y librocksdb-dev): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        bin
    })
}

/// Runs trace_analyzer on a sample: (human-readable trace, stdout).
fn analyze(name: &str) -> (Vec<u8>, String) {
    let out_dir = tempfile::tempdir().expect("a temp dir");
    let trace = data(&format!("rocksdb/{name}.trace"));
    let out = Command::new(trace_analyzer())
        .arg("-convert_to_human_readable_trace")
        .arg(format!("-trace_path={}", trace.display()))
        .arg(format!("-output_dir={}", out_dir.path().display()))
        .arg(format!("-output_prefix={name}"))
        .output()
        .expect("running trace_analyzer");
    assert!(
        out.status.success(),
        "trace_analyzer failed on {name}: {out:?}"
    );
    // `<prefix>-human_readable_trace.txt` in the output directory.
    let human = out_dir
        .path()
        .join(format!("{name}-human_readable_trace.txt"));
    let bytes = std::fs::read(&human).unwrap_or_else(|e| panic!("{}: {e}", human.display()));
    (bytes, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The number after `name: ` in trace_analyzer's summary line.
fn figure(stdout: &str, name: &str) -> u64 {
    let at = stdout
        .find(&format!("{name}: "))
        .unwrap_or_else(|| panic!("no {name} in {stdout}"));
    let rest = &stdout[at + name.len() + 2..];
    rest.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .expect("a number")
}

#[test]
fn human_readable_dump_equals_trace_analyzer_byte_for_byte() {
    for name in TRACES {
        let (want, _) = analyze(name);
        let mut got = Vec::new();
        let mut r = reader(&format!("rocksdb/{name}.trace"), Some(Format::Rocksdb));
        let lines = dump::rocksdb_human(&mut r, &mut got).expect("dumping");
        assert!(lines > 0);
        if got != want {
            let g = String::from_utf8_lossy(&got);
            let w = String::from_utf8_lossy(&want);
            for (i, (a, b)) in g.lines().zip(w.lines()).enumerate() {
                assert_eq!(a, b, "{name}: line {}", i + 1);
            }
            panic!(
                "{name}: {} lines from kvlab, {} from trace_analyzer",
                g.lines().count(),
                w.lines().count()
            );
        }
    }
}

#[test]
fn query_counts_equal_trace_analyzer() {
    for name in TRACES {
        let (_, stdout) = analyze(name);
        // trace_analyzer counts trace records: a WriteBatch or a MultiGet once.
        let (mut gets, mut writes, mut seeks, mut seek_prevs, mut multigets) = (0, 0, 0, 0, 0);
        let mut r = reader(&format!("rocksdb/{name}.trace"), Some(Format::Rocksdb));
        let mut rec = TraceRecord::default();
        while r.read(&mut rec).expect("reading") {
            if rec.batch_pos != 0 {
                continue;
            }
            match rec.op {
                Op::Get => gets += 1,
                Op::Seek => seeks += 1,
                Op::SeekForPrev => seek_prevs += 1,
                Op::MultiGet => multigets += 1,
                _ => writes += 1,
            }
        }
        let total = gets + writes + seeks + seek_prevs + multigets;
        assert_eq!(
            total,
            figure(&stdout, "Total_requests"),
            "{name}: Total_requests"
        );
        assert_eq!(gets, figure(&stdout, "Total_gets"), "{name}: Total_gets");
        assert_eq!(writes, figure(&stdout, "Total_write_batches"), "{name}");
        assert_eq!(seeks, figure(&stdout, "Total_seeks"), "{name}");
        assert_eq!(
            seek_prevs,
            figure(&stdout, "Total_seek_for_prevs"),
            "{name}"
        );
        assert_eq!(multigets, figure(&stdout, "Total_multigets"), "{name}");
    }
}

#[test]
fn bounded_seeks_carry_their_bounds() {
    // db_bench seekrandom with -iterate_upper_bound/-iterate_lower_bound writes map 0xF0
    // or 0xB0/0x70 records: some seeks have bounds.
    let mut r = reader("rocksdb/seekrandom_bounded.trace", None);
    let recs = crate::common::records(&mut r);
    assert!(recs
        .iter()
        .any(|r| !r.upper_bound.is_empty() || !r.lower_bound.is_empty()));
}

/// A copy of a sample with its last `cut` bytes removed.
fn truncated_copy(name: &str, cut: u64) -> (tempfile::TempDir, PathBuf, u64) {
    let src = data(&format!("rocksdb/{name}.trace"));
    let bytes = std::fs::read(&src).expect("reading the sample");
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join(format!("{name}.trace"));
    let len = bytes.len() as u64 - cut;
    std::fs::write(&path, &bytes[..len as usize]).expect("writing the copy");
    (dir, path, len)
}

#[test]
fn a_file_without_its_end_record_reads_to_its_last_whole_record() {
    // The End record is the last 13 bytes (type 2, no payload).
    let (_dir, path, _) = truncated_copy("mixgraph", 13);
    let s =
        kvlab_trace::Stats::collect(&mut kvlab_trace::open(&path, &Default::default()).unwrap())
            .unwrap();
    assert_eq!((s.requests, s.damaged_at), (60_000, None));
}

#[test]
fn a_truncated_record_is_an_error_naming_file_offset_and_records_before() {
    // Cut the End record and 5 bytes of the last query record.
    let (_dir, path, len) = truncated_copy("mixgraph", 13 + 5);
    let mut r = kvlab_trace::open(&path, &Default::default()).unwrap();
    let mut rec = TraceRecord::default();
    let mut n = 0;
    let err = loop {
        match r.read(&mut rec) {
            Ok(true) => n += 1,
            Ok(false) => panic!("a truncated trace read to its end"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, 59_999, "the records before the damage");
    let TraceError::Corrupt {
        path: p,
        offset,
        what,
    } = &err
    else {
        panic!("expected a corruption error, got {err}");
    };
    assert_eq!(p, &path);
    assert!(
        *offset < len && *offset + 13 + 5 > len - 64,
        "offset {offset} of {len}"
    );
    assert!(what.contains("whole records before it"), "{what}");
    let msg = err.to_string();
    assert!(
        msg.contains("mixgraph.trace") && msg.contains(&offset.to_string()),
        "{msg}"
    );
    // Stats: the records before the damage, and where it is.
    let mut r = kvlab_trace::open(&path, &Default::default()).unwrap();
    let s = kvlab_trace::Stats::collect(&mut r).unwrap();
    assert_eq!((s.requests, s.damaged_at), (59_999, Some(*offset)));
}

#[test]
fn trace_analyzer_also_fails_on_the_truncated_file() {
    // The authority agrees the cut file is damaged: without -try_process_corrupted_trace
    // trace_analyzer exits non-zero.
    let (_dir, path, _) = truncated_copy("mixgraph", 13 + 5);
    let out_dir = tempfile::tempdir().expect("a temp dir");
    let out = Command::new(trace_analyzer())
        .arg(format!("-trace_path={}", path.display()))
        .arg(format!("-output_dir={}", out_dir.path().display()))
        .output()
        .expect("running trace_analyzer");
    assert!(!out.status.success(), "{out:?}");
}

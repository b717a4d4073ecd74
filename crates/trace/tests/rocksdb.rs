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
        // Cargo's scratch directory for integration tests: rebuilt each run, not left
        // in /tmp.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kvlab-trace-analyzer");
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

/// Builders of RocksDB trace bytes (trace_replay.cc's layout), for traces db_bench does
/// not write: column families, SingleDelete, DeleteRange, LogData, transactions,
/// SeekForPrev with bounds, MultiGet over several column families, trace format 0.1.
mod build {
    pub fn varint(out: &mut Vec<u8>, mut v: u32) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub fn slice(out: &mut Vec<u8>, s: &[u8]) {
        varint(out, s.len() as u32);
        out.extend_from_slice(s);
    }

    pub fn record(out: &mut Vec<u8>, ts: u64, kind: u8, payload: &[u8]) {
        out.extend_from_slice(&ts.to_le_bytes());
        out.push(kind);
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(payload);
    }

    pub fn begin(out: &mut Vec<u8>, version: &str) {
        let p = format!(
            "feedcafedeadbeef\tTrace Version: {version}\tRocksDB Version: 7.8\tFormat: Timestamp OpType Payload\n"
        );
        record(out, 1_000, 1, p.as_bytes());
    }

    /// A WriteBatch of raw entries (`tag [cf] slices…`), `count` data entries.
    pub fn batch(count: u32, entries: &[u8]) -> Vec<u8> {
        let mut b = 7u64.to_le_bytes().to_vec();
        b.extend_from_slice(&count.to_le_bytes());
        b.extend_from_slice(entries);
        b
    }

    pub fn entry(out: &mut Vec<u8>, tag: u8, cf: Option<u32>, slices: &[&[u8]]) {
        out.push(tag);
        if let Some(cf) = cf {
            varint(out, cf);
        }
        for s in slices {
            slice(out, s);
        }
    }
}

/// A trace of every record kind in format `version` ("0.1" or "0.2").
fn crafted_trace(version: &str) -> Vec<u8> {
    use build::*;
    let v2 = version == "0.2";
    let mut t = Vec::new();
    begin(&mut t, version);
    let mut e = Vec::new();
    entry(&mut e, 0x5, Some(3), &[b"k1", b"hello"]);
    entry(&mut e, 0x7, None, &[b"k2"]);
    entry(&mut e, 0x8, Some(2), &[b"k3"]);
    entry(&mut e, 0xF, None, &[b"b", b"e"]);
    entry(&mut e, 0xE, Some(1), &[b"b1", b"e1"]);
    entry(&mut e, 0x3, None, &[b"a log blob"]);
    entry(&mut e, 0x2, None, &[b"k4", b"xy"]);
    entry(&mut e, 0x6, Some(4), &[b"k5", b"xyz"]);
    entry(&mut e, 0x4, Some(5), &[b"\x00\xff"]);
    entry(&mut e, 0x0, None, &[b"k6"]);
    entry(&mut e, 0x1, None, &[b"", b""]);
    let wb = batch(10, &e);
    let write = |ts: u64, wb: &[u8], t: &mut Vec<u8>| {
        if v2 {
            let mut p = (1u64 << 1).to_le_bytes().to_vec();
            slice(&mut p, wb);
            record(t, ts, 3, &p);
        } else {
            record(t, ts, 3, wb);
        }
    };
    write(2_000, &wb, &mut t);
    // A transaction's Prepare (skipped) and its Commit (no entries).
    let mut e = Vec::new();
    entry(&mut e, 0x9, None, &[]);
    entry(&mut e, 0x1, None, &[b"txk", b"txv"]);
    entry(&mut e, 0xA, None, &[b"xid1"]);
    write(2_500, &batch(1, &e), &mut t);
    let mut e = Vec::new();
    entry(&mut e, 0xB, None, &[b"xid1"]);
    write(2_600, &batch(0, &e), &mut t);
    // Get on cf 7, and a Seek and SeekForPrev with bounds.
    let key_record = |kind: u8,
                      ts: u64,
                      cf: u32,
                      key: &[u8],
                      bounds: Option<(&[u8], &[u8])>,
                      t: &mut Vec<u8>| {
        let mut p = Vec::new();
        if v2 {
            let mut map: u64 = if kind == 4 { 0xC } else { 0x30 };
            if bounds.is_some() {
                map |= 0xC0;
            }
            p.extend_from_slice(&map.to_le_bytes());
        }
        p.extend_from_slice(&cf.to_le_bytes());
        slice(&mut p, key);
        if let (true, Some((lo, hi))) = (v2, bounds) {
            slice(&mut p, lo);
            slice(&mut p, hi);
        }
        record(t, ts, kind, &p);
    };
    key_record(4, 3_000, 7, b"getkey", None, &mut t);
    key_record(5, 3_100, 0, b"seek", Some((b"a", b"z")), &mut t);
    key_record(6, 3_200, 9, b"prev\x01", Some((b"a", b"q")), &mut t);
    if v2 {
        // MultiGet of three keys over three column families.
        let mut p = 0x700u64.to_le_bytes().to_vec();
        p.extend_from_slice(&3u32.to_le_bytes());
        let mut cfs = Vec::new();
        for cf in [0u32, 4, 8] {
            cfs.extend_from_slice(&cf.to_le_bytes());
        }
        slice(&mut p, &cfs);
        let mut keys = Vec::new();
        for k in [&b"m1"[..], b"m22", b""] {
            slice(&mut keys, k);
        }
        slice(&mut p, &keys);
        record(&mut t, 4_000, 13, &p);
    }
    record(&mut t, 5_000, 2, &[]);
    t
}

#[test]
fn crafted_traces_of_every_record_kind_dump_as_trace_analyzer_does() {
    for version in ["0.2", "0.1"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("crafted.trace");
        std::fs::write(&path, crafted_trace(version)).unwrap();
        let out_dir = tempfile::tempdir().unwrap();
        let out = Command::new(trace_analyzer())
            .arg("-convert_to_human_readable_trace")
            .arg(format!("-trace_path={}", path.display()))
            .arg(format!("-output_dir={}", out_dir.path().display()))
            .arg("-output_prefix=crafted")
            .output()
            .expect("running trace_analyzer");
        assert!(
            out.status.success(),
            "trace_analyzer on the {version} trace: {out:?}"
        );
        let want = std::fs::read(out_dir.path().join("crafted-human_readable_trace.txt")).unwrap();
        let mut r = kvlab_trace::open(&path, &Default::default()).unwrap();
        let mut got = Vec::new();
        dump::rocksdb_human(&mut r, &mut got).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "trace format {version}"
        );
        assert!(want.len() > 100, "trace_analyzer wrote lines for {version}");
    }
}

#[test]
fn crafted_trace_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crafted.trace");
    std::fs::write(&path, crafted_trace("0.2")).unwrap();
    let recs = crate::common::records(&mut kvlab_trace::open(&path, &Default::default()).unwrap());
    let ops: Vec<Op> = recs.iter().map(|r| r.op).collect();
    use Op::*;
    assert_eq!(
        ops,
        [
            Put,
            SingleDelete,
            SingleDelete,
            DeleteRange,
            DeleteRange,
            Merge,
            Merge,
            Delete,
            Delete,
            Put,
            Get,
            Seek,
            SeekForPrev,
            MultiGet,
            MultiGet,
            MultiGet
        ]
    );
    let cfs: Vec<u32> = recs.iter().map(|r| r.cf).collect();
    assert_eq!(cfs, [3, 0, 2, 0, 1, 0, 4, 5, 0, 0, 7, 0, 9, 0, 4, 8]);
    assert_eq!((recs[0].batch_len, recs[9].batch_pos), (10, 9));
    assert_eq!(
        (recs[3].key.as_slice(), recs[3].upper_bound.as_slice()),
        (&b"b"[..], &b"e"[..])
    );
    assert_eq!(
        (
            recs[12].lower_bound.as_slice(),
            recs[12].upper_bound.as_slice()
        ),
        (&b"a"[..], &b"q"[..])
    );
    assert_eq!(
        (
            recs[13].batch_len,
            recs[15].batch_pos,
            recs[14].key.as_slice()
        ),
        (3, 2, &b"m22"[..])
    );
    assert_eq!(recs[6].value_size, 3);
}

#[test]
fn per_op_accesses_and_distinct_keys_equal_trace_analyzer() {
    // `-analyze_<op>` prints, per op type, "Total keys of '<op>' is: N" (distinct keys,
    // summed over column families) and "Total access is: N".
    let names = [
        ("get", Op::Get),
        ("put", Op::Put),
        ("delete", Op::Delete),
        ("single_delete", Op::SingleDelete),
        ("range_delete", Op::DeleteRange),
        ("merge", Op::Merge),
        ("iterator_Seek", Op::Seek),
        ("iterator_SeekForPrev", Op::SeekForPrev),
        ("multiget", Op::MultiGet),
    ];
    for name in TRACES {
        let out_dir = tempfile::tempdir().unwrap();
        let out = Command::new(trace_analyzer())
            .arg(format!(
                "-trace_path={}",
                data(&format!("rocksdb/{name}.trace")).display()
            ))
            .arg(format!("-output_dir={}", out_dir.path().display()))
            .args([
                "-analyze_get",
                "-analyze_put",
                "-analyze_delete",
                "-analyze_single_delete",
                "-analyze_range_delete",
                "-analyze_merge",
                "-analyze_iterator",
                "-analyze_multiget",
            ])
            .output()
            .expect("running trace_analyzer");
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let recs = crate::common::records(&mut reader(&format!("rocksdb/{name}.trace"), None));
        for (ta_name, op) in names {
            let at = stdout
                .find(&format!("Total keys of '{ta_name}' is: "))
                .unwrap_or_else(|| panic!("{name}: no totals for {ta_name}"));
            let mut words = stdout[at..].split_whitespace();
            let keys: u64 = words
                .nth(5)
                .and_then(|w| w.parse().ok())
                .expect("a key count");
            let access: u64 = words
                .nth(3)
                .and_then(|w| w.parse().ok())
                .expect("an access count");
            let of_op: Vec<_> = recs.iter().filter(|r| r.op == op).collect();
            let distinct: std::collections::HashSet<(u32, &[u8])> =
                of_op.iter().map(|r| (r.cf, r.key.as_slice())).collect();
            assert_eq!(
                (of_op.len() as u64, distinct.len() as u64),
                (access, keys),
                "{name}: {ta_name}"
            );
        }
    }
}

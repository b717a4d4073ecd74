//! Bit layouts of twr and vscsi v2 against libCacheSim: files built here, field by
//! field, were read by the libcachesim 0.3.5 PyPI package (`TraceReader(path,
//! TraceType.TWR_TRACE | VSCSI_TRACE)`, printing `clock_time obj_id obj_size op ttl` per
//! request; [`PROBE`]); kvlab must read the same. Where the package is installed
//! (`$LIBCACHESIM_PYTHON` or `/tmp/lcs/bin/python`) the probe runs again and must still
//! print [`TWR_AUTHORITY`] and [`VSCSI_AUTHORITY`].

use std::path::{Path, PathBuf};
use std::process::Command;

use kvlab_trace::{open, Format, Op, OpenOptions, TraceRecord};

use crate::common::records;

const PROBE: &str = r#"
import sys, libcachesim as lcs
path, kind = sys.argv[1], sys.argv[2]
t = {"twr": lcs.TraceType.TWR_TRACE, "vscsi": lcs.TraceType.VSCSI_TRACE}[kind]
r = lcs.TraceReader(path, t)
while True:
    try:
        q = r.read_one_req()
    except RuntimeError:
        break
    if not q.valid:
        break
    print(q.clock_time, q.obj_id, q.obj_size, int(q.op), q.ttl)
"#;

/// (ts, id, key size, value size, op code, ttl) of the twr file.
const TWR: [(i32, u64, u32, u32, u32, u32); 3] = [
    (10, 123_456_789, 20, 1000, 1, 0),
    (11, 42, 5, 4_194_303, 3, 3600),
    (12, 7, 1023, 1, 9, 16_777_215),
];
/// What libcachesim printed for it: `clock_time obj_id obj_size op ttl`.
const TWR_AUTHORITY: &str = "10 123456789 1020 1 0\n11 42 4194308 3 3600\n12 7 1024 9 16777215\n";

/// (cmd, len, lbn, ts µs) of the vscsi v2 file.
const VSCSI: [(u16, u32, u64, u64); 3] = [
    (0x28, 4096, 100, 5_000_000),
    (0x2a, 512, 200, 6_000_000),
    (0x28, 8192, 100, 7_500_000),
];
const VSCSI_AUTHORITY: &str = "5 100 4096 12 0\n6 200 512 13 0\n7 100 8192 12 0\n";

fn twr_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    for (ts, id, ks, vs, op, ttl) in TWR {
        b.extend_from_slice(&ts.to_le_bytes());
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&((ks << 22) | vs).to_le_bytes());
        b.extend_from_slice(&((op << 24) | ttl).to_le_bytes());
    }
    b
}

fn vscsi_v2_bytes() -> Vec<u8> {
    let mut b = Vec::new();
    for (i, (cmd, len, lbn, ts)) in VSCSI.into_iter().enumerate() {
        b.extend_from_slice(&cmd.to_le_bytes());
        b.extend_from_slice(&(2u16 << 8).to_le_bytes());
        b.extend_from_slice(&(i as u32).to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&lbn.to_le_bytes());
        b.extend_from_slice(&ts.to_le_bytes());
        b.extend_from_slice(&33u64.to_le_bytes());
    }
    b
}

/// libCacheSim's op code of an op twr and vscsi can hold.
fn code(op: Op) -> u32 {
    match op {
        Op::Get => 1,
        Op::Set => 3,
        Op::Delete => 9,
        Op::Read => 12,
        Op::Write => 13,
        _ => 0,
    }
}

/// Rows as the probe prints them (`ts_divisor` turns vscsi's µs into libCacheSim's s).
fn rows(path: &Path, format: Format, ts_divisor: u64) -> String {
    let mut r = open(
        path,
        &OpenOptions {
            format: Some(format),
            csv: None,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    records(&mut r)
        .iter()
        .map(|r: &TraceRecord| {
            format!(
                "{} {} {} {} {}\n",
                r.ts / ts_divisor,
                r.id,
                r.obj_size(),
                code(r.op),
                r.ttl_s
            )
        })
        .collect()
}

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("LIBCACHESIM_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/lcs/bin/python"));
    p.exists().then_some(p)
}

fn probe(path: &Path, kind: &str) -> Option<String> {
    let python = python()?;
    let out = Command::new(python)
        .arg("-c")
        .arg(PROBE)
        .arg(path)
        .arg(kind)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn twr_reads_as_libcachesim_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.twr");
    std::fs::write(&path, twr_bytes()).unwrap();
    assert_eq!(rows(&path, Format::Twr, 1), TWR_AUTHORITY);
    let mut r = open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(r.info().format, "twr", "told by the extension");
    let recs = records(&mut r);
    assert_eq!((recs[0].key_size, recs[0].value_size), (20, 1000));
    if let Some(printed) = probe(&path, "twr") {
        assert_eq!(printed, TWR_AUTHORITY);
    }
}

#[test]
fn vscsi_v2_reads_as_libcachesim_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.vscsi");
    std::fs::write(&path, vscsi_v2_bytes()).unwrap();
    assert_eq!(rows(&path, Format::Vscsi, 1_000_000), VSCSI_AUTHORITY);
    let mut r = open(&path, &OpenOptions::default()).unwrap();
    let recs = records(&mut r);
    assert_eq!(recs[0].latency_ns, 33_000, "v2's response time (µs)");
    if let Some(printed) = probe(&path, "vscsi") {
        assert_eq!(printed, VSCSI_AUTHORITY);
    }
}

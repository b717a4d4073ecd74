//! lcs v1–v8 written by libCacheSim itself: the libcachesim 0.3.5 PyPI package converts
//! cloudPhysicsIO.vscsi with `Util.convert_to_lcs(reader, out, lcs_ver=N)` and reads
//! each file back with its own lcs reader; kvlab's reader must give the same sequence
//! of (clock_time, obj_id, obj_size, op, next_access_vtime).
//!
//! Runs where that package is installed: `$LIBCACHESIM_PYTHON`, or
//! `/tmp/lcs/bin/python` (`python3 -m venv /tmp/lcs && /tmp/lcs/bin/pip install
//! libcachesim==0.3.5`); elsewhere it says so and passes, as the files cannot be made
//! without it (they are derived from GPL data and not shipped).

use std::path::PathBuf;
use std::process::Command;

use kvlab_trace::{open, Format, Op, OpenOptions, TraceRecord};

use crate::common::data;

/// The script: converts, then prints `version requests hash` per version, the hash
/// being `h = h * 1000003 + v mod 2^64` over each request's five fields.
const SCRIPT: &str = r#"
import sys, libcachesim as lcs
src, outdir = sys.argv[1], sys.argv[2]
M = (1 << 64) - 1
for ver in range(1, 9):
    out = f"{outdir}/v{ver}.lcs"
    lcs.Util.convert_to_lcs(lcs.TraceReader(src, lcs.TraceType.VSCSI_TRACE)._reader, out, lcs_ver=ver)
    r = lcs.TraceReader(out, lcs.TraceType.LCS_TRACE)
    n = 0; h = 0
    while True:
        try:
            q = r.read_one_req()
        except RuntimeError:
            break
        if not q.valid:
            break
        n += 1
        for v in (q.clock_time, q.obj_id, q.obj_size, int(q.op), q.next_access_vtime):
            h = (h * 1000003 + (v & M)) & M
    print(ver, n, h)
"#;

/// What the script printed on 2026-11-24 (libcachesim 0.3.5): v1 has no op field
/// (OP_NOP), v2–v8 carry READ/WRITE.
const AUTHORITY: [(u64, u64, u64); 8] = [
    (1, 113_872, 8095191334204187892),
    (2, 113_872, 6236412187561270716),
    (3, 113_872, 6236412187561270716),
    (4, 113_872, 6236412187561270716),
    (5, 113_872, 6236412187561270716),
    (6, 113_872, 6236412187561270716),
    (7, 113_872, 6236412187561270716),
    (8, 113_872, 6236412187561270716),
];

/// libCacheSim's `req_op_e` code of an op an lcs file can hold.
fn lcs_code(op: Op, version: u64) -> u64 {
    if version == 1 {
        return 0;
    }
    match op {
        Op::Get => 1,
        Op::Gets => 2,
        Op::Set => 3,
        Op::Add => 4,
        Op::Cas => 5,
        Op::Replace => 6,
        Op::Append => 7,
        Op::Prepend => 8,
        Op::Delete => 9,
        Op::Incr => 10,
        Op::Decr => 11,
        Op::Read => 12,
        Op::Write => 13,
        Op::Update => 14,
        _ => 0,
    }
}

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("LIBCACHESIM_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/lcs/bin/python"));
    p.exists().then_some(p)
}

#[test]
fn lcs_v1_to_v8_written_by_libcachesim_read_the_same() {
    let Some(python) = python() else {
        eprintln!("lcs_versions: no libcachesim 0.3.5 venv (LIBCACHESIM_PYTHON); not run");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(&python)
        .arg("-c")
        .arg(SCRIPT)
        .arg(data("libcachesim/cloudPhysicsIO.vscsi"))
        .arg(dir.path())
        .output()
        .expect("running python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Vec<(u64, u64, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let v: Vec<u64> = l.split(' ').filter_map(|f| f.parse().ok()).collect();
            (v.len() == 3).then(|| (v[0], v[1], v[2]))
        })
        .collect();
    assert_eq!(printed, AUTHORITY, "libcachesim's own numbers changed");
    for (version, requests, hash) in AUTHORITY {
        let path = dir.path().join(format!("v{version}.lcs"));
        let mut r = open(&path, &OpenOptions::default()).unwrap();
        assert_eq!(r.info().format, Format::Lcs.name());
        let mut rec = TraceRecord::default();
        let (mut n, mut h) = (0u64, 0u64);
        while r.read(&mut rec).unwrap() {
            n += 1;
            // libCacheSim reports "never again" as INT64_MAX.
            let next = if rec.next_access == -1 {
                i64::MAX
            } else {
                rec.next_access
            };
            for v in [
                rec.ts,
                rec.id,
                rec.value_size,
                lcs_code(rec.op, version),
                next as u64,
            ] {
                h = h.wrapping_mul(1_000_003).wrapping_add(v);
            }
        }
        assert_eq!((n, h), (requests, hash), "lcs v{version}");
    }
}

//! The libCacheSim formats against the libcachesim 0.3.5 PyPI package, libCacheSim's own
//! readers (`python3 -m venv /tmp/lcs && /tmp/lcs/bin/pip install libcachesim==0.3.5`).
//!
//! The numbers below were printed by `/tmp/lcs/bin/python lcs_counts.py`, which reads
//! each file with `libcachesim.TraceReader(path, TraceType.X[, ReaderInitParam])` and
//! `read_one_req()` until the end, and prints the request count, distinct `obj_id`s,
//! the sum of `obj_size`, a hash of the id sequence and one of the size sequence
//! (`h = h * 1000003 + v mod 2^64`), and the first and last `clock_time`. The csv spec
//! was `time_field=2, obj_id_field=5, obj_size_field=4, has_header=True,
//! delimiter=",", obj_id_is_num=True`. The script is kept in the test as
//! [`LCS_COUNTS_PY`].

use kvlab_trace::{open, CsvSpec, Format, OpenOptions, TraceReader, TraceRecord};

use crate::common::data;

/// The script that printed the authority numbers.
#[expect(dead_code, reason = "kept so the authority numbers can be regenerated")]
const LCS_COUNTS_PY: &str = r#"
import libcachesim as lcs
M = (1 << 64) - 1
def run(name, path, ttype, params=None):
    r = lcs.TraceReader(path, ttype, params) if params else lcs.TraceReader(path, ttype)
    n = 0; ids = set(); tot = 0; hi = 0; hs = 0; first = None; last = None
    while True:
        try:
            q = r.read_one_req()
        except RuntimeError:
            break
        if not q.valid:
            break
        n += 1; oid = q.obj_id & M; ids.add(oid); tot += q.obj_size
        hi = (hi * 1000003 + oid) & M; hs = (hs * 1000003 + q.obj_size) & M
        if first is None: first = q.clock_time
        last = q.clock_time
    print(name, n, len(ids), tot, hi, hs, first, last)
"#;

/// What libCacheSim read from one file.
struct Authority {
    requests: u64,
    distinct: u64,
    bytes: u64,
    id_hash: u64,
    size_hash: Option<u64>,
    first_ts: u64,
    last_ts: u64,
}

/// Reads `reader` the way the script reads the file.
fn measure(r: &mut dyn TraceReader, ts_divisor: u64) -> Authority {
    let mut rec = TraceRecord::default();
    let mut ids = std::collections::HashSet::new();
    let (mut n, mut bytes, mut hi, mut hs) = (0u64, 0u64, 0u64, 0u64);
    let (mut first, mut last) = (None, 0);
    while r.read(&mut rec).expect("reading") {
        n += 1;
        ids.insert(rec.id);
        bytes += rec.value_size;
        hi = hi.wrapping_mul(1_000_003).wrapping_add(rec.id);
        hs = hs.wrapping_mul(1_000_003).wrapping_add(rec.value_size);
        first.get_or_insert(rec.ts / ts_divisor);
        last = rec.ts / ts_divisor;
    }
    Authority {
        requests: n,
        distinct: ids.len() as u64,
        bytes,
        id_hash: hi,
        size_hash: Some(hs),
        first_ts: first.unwrap_or(0),
        last_ts: last,
    }
}

fn check(name: &str, mut r: Box<dyn TraceReader>, ts_divisor: u64, want: Authority) {
    let got = measure(&mut r, ts_divisor);
    assert_eq!(got.requests, want.requests, "{name}: requests");
    assert_eq!(got.distinct, want.distinct, "{name}: distinct ids");
    assert_eq!(got.id_hash, want.id_hash, "{name}: the id sequence");
    if let Some(h) = want.size_hash {
        assert_eq!(got.bytes, want.bytes, "{name}: bytes");
        assert_eq!(got.size_hash, Some(h), "{name}: the size sequence");
        assert_eq!(
            (got.first_ts, got.last_ts),
            (want.first_ts, want.last_ts),
            "{name}: time"
        );
    }
}

fn open_as(rel: &str, format: Format, csv: Option<CsvSpec>) -> Box<dyn TraceReader> {
    open(
        data(rel),
        &OpenOptions {
            format: Some(format),
            csv,
            ..OpenOptions::default()
        },
    )
    .expect("opening")
}

/// libCacheSim's id sequence of cloudPhysicsIO, the same in all five files.
const CLOUD_PHYSICS_ID_HASH: u64 = 3361653824392907179;

#[test]
fn cloud_physics_oracle_general_matches_libcachesim() {
    // oracleGeneral: n=113872 distinct=48974 bytes=4368040448 id_hash=3361653824392907179
    // size_hash=11770135363770625536 first=5633898 last=5641098
    let want = Authority {
        requests: 113_872,
        distinct: 48_974,
        bytes: 4_368_040_448,
        id_hash: CLOUD_PHYSICS_ID_HASH,
        size_hash: Some(11770135363770625536),
        first_ts: 5_633_898,
        last_ts: 5_641_098,
    };
    check(
        "oracleGeneral",
        open_as(
            "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
            Format::OracleGeneral,
            None,
        ),
        1,
        want,
    );
}

#[test]
fn cloud_physics_lcs_matches_libcachesim() {
    // lcs: the same numbers as oracleGeneral (it was converted from it).
    let want = Authority {
        requests: 113_872,
        distinct: 48_974,
        bytes: 4_368_040_448,
        id_hash: CLOUD_PHYSICS_ID_HASH,
        size_hash: Some(11770135363770625536),
        first_ts: 5_633_898,
        last_ts: 5_641_098,
    };
    check(
        "lcs",
        open_as("derived/cloudPhysicsIO.lcs", Format::Lcs, None),
        1,
        want,
    );
}

#[test]
fn cloud_physics_vscsi_and_csv_match_libcachesim() {
    // vscsi and csv: n=113872 distinct=48974 bytes=4205978112 id_hash=3361653824392907179
    // size_hash=18444626726398073344 first=5633898 last=5641098 (vscsi: libCacheSim
    // divides the µs timestamps by 10^6; kvlab keeps µs).
    let want = || Authority {
        requests: 113_872,
        distinct: 48_974,
        bytes: 4_205_978_112,
        id_hash: CLOUD_PHYSICS_ID_HASH,
        size_hash: Some(18444626726398073344),
        first_ts: 5_633_898,
        last_ts: 5_641_098,
    };
    let vscsi = open_as("libcachesim/cloudPhysicsIO.vscsi", Format::Vscsi, None);
    assert_eq!(vscsi.info().time_unit, kvlab_trace::TimeUnit::Micros);
    check("vscsi", vscsi, 1_000_000, want());
    let spec: CsvSpec =
        "time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, delimiter=,, has-header=true"
            .parse()
            .expect("the spec parses");
    check(
        "csv",
        open_as("libcachesim/cloudPhysicsIO.csv", Format::Csv, Some(spec)),
        1,
        want(),
    );
    // Without a spec, the header names the columns.
    check(
        "csv (header)",
        open_as("libcachesim/cloudPhysicsIO.csv", Format::Csv, None),
        1,
        want(),
    );
}

#[test]
fn cloud_physics_txt_matches_libcachesim() {
    // txt: n=113872 distinct=48974 id_hash=3361653824392907179 (libCacheSim gives every
    // request size 1; txt has no sizes).
    let want = Authority {
        requests: 113_872,
        distinct: 48_974,
        bytes: 0,
        id_hash: CLOUD_PHYSICS_ID_HASH,
        size_hash: None,
        first_ts: 0,
        last_ts: 0,
    };
    check(
        "txt",
        open_as("libcachesim/cloudPhysicsIO.txt", Format::Txt, None),
        1,
        want,
    );
}

#[test]
fn adapt_size_oracle_general_matches_libcachesim() {
    // adapt_size oracleGeneral: n=66987 distinct=36815 bytes=485353159
    // id_hash=3987618296462896207 size_hash=16849172603918213937 first=1 last=66987
    let want = Authority {
        requests: 66_987,
        distinct: 36_815,
        bytes: 485_353_159,
        id_hash: 3987618296462896207,
        size_hash: Some(16849172603918213937),
        first_ts: 1,
        last_ts: 66_987,
    };
    check(
        "adapt_size oracleGeneral",
        open_as(
            "derived/adapt_size_request.oracleGeneral.bin",
            Format::OracleGeneral,
            None,
        ),
        1,
        want,
    );
}

#[test]
fn the_five_cloud_physics_files_are_one_stream() {
    // Same (id) sequence everywhere; same (id, size) in oracleGeneral and lcs, and in
    // vscsi and csv (oracleGeneral fixes an object's size to its last one).
    let read = |rel: &str, f: Format| {
        let mut r = open_as(rel, f, None);
        crate::common::records(&mut r)
            .into_iter()
            .map(|r| (r.id, r.value_size))
            .collect::<Vec<_>>()
    };
    let og = read(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        Format::OracleGeneral,
    );
    let lcs = read("derived/cloudPhysicsIO.lcs", Format::Lcs);
    let vscsi = read("libcachesim/cloudPhysicsIO.vscsi", Format::Vscsi);
    let csv = read("libcachesim/cloudPhysicsIO.csv", Format::Csv);
    let txt = read("libcachesim/cloudPhysicsIO.txt", Format::Txt);
    assert_eq!(og, lcs);
    assert_eq!(vscsi, csv);
    let ids = |v: &[(u64, u64)]| v.iter().map(|p| p.0).collect::<Vec<_>>();
    assert_eq!(ids(&og), ids(&vscsi));
    assert_eq!(ids(&og), ids(&txt));
}

//! Every sample trace reads with the request and distinct-key counts its README gives
//! (/work/shared/data/traces/README.md; the ARC figure is Table III of the ARC paper,
//! the LIRS and cache2k ones are those the traces' publishers state), with the format
//! told from the file alone.

use kvlab_trace::Format;

use crate::common::stats;

/// (path, format detected, requests, distinct keys).
const SAMPLES: &[(&str, Format, u64, u64)] = &[
    (
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        Format::OracleGeneral,
        113_872,
        48_974,
    ),
    (
        "libcachesim/cloudPhysicsIO.vscsi",
        Format::Vscsi,
        113_872,
        48_974,
    ),
    (
        "libcachesim/cloudPhysicsIO.csv",
        Format::Csv,
        113_872,
        48_974,
    ),
    (
        "libcachesim/cloudPhysicsIO.txt",
        Format::Txt,
        113_872,
        48_974,
    ),
    ("derived/cloudPhysicsIO.lcs", Format::Lcs, 113_872, 48_974),
    (
        "derived/adapt_size_request.oracleGeneral.bin",
        Format::OracleGeneral,
        66_987,
        36_815,
    ),
    (
        "derived/adapt_size_request.twitter.csv.zst",
        Format::Twitter,
        66_987,
        36_815,
    ),
    ("arc/OLTP.lis.zst", Format::Arc, 914_145, 186_880),
    (
        "caffeine/lirs/2_pools.trace.gz",
        Format::Lirs,
        100_000,
        9_939,
    ),
    ("caffeine/lirs/backf.trace.gz", Format::Lirs, 9_000, 751),
    ("caffeine/lirs/cpp.trace.gz", Format::Lirs, 9_047, 1_223),
    ("caffeine/lirs/cs.trace.gz", Format::Lirs, 6_781, 1_409),
    ("caffeine/lirs/gli.trace.gz", Format::Lirs, 6_015, 2_529),
    ("caffeine/lirs/loop.trace.gz", Format::Lirs, 505_500, 1_011),
    ("caffeine/lirs/multi1.trace.gz", Format::Lirs, 15_858, 2_606),
    ("caffeine/lirs/multi2.trace.gz", Format::Lirs, 26_311, 5_684),
    ("caffeine/lirs/multi3.trace.gz", Format::Lirs, 30_241, 7_454),
    ("caffeine/lirs/ps.trace.gz", Format::Lirs, 10_448, 3_083),
    ("caffeine/lirs/scan.trace.gz", Format::Lirs, 50_025, 2_001),
    (
        "caffeine/lirs/sprite.trace.gz",
        Format::Lirs,
        133_996,
        7_075,
    ),
    ("caffeine/lirs/zigzag.trace.gz", Format::Lirs, 52_001, 2_001),
    (
        "caffeine/cache2k/web07.trace.xz",
        Format::Cache2k,
        76_118,
        20_484,
    ),
    (
        "caffeine/cache2k/web12.trace.xz",
        Format::Cache2k,
        95_607,
        13_756,
    ),
    (
        "caffeine/cache2k/orm-busy.trace.xz",
        Format::Cache2k,
        5_000_000,
        76_349,
    ),
    (
        "caffeine/scarab/scarab-recs.trace.xz",
        Format::Scarab,
        1_245_184,
        258_368,
    ),
    (
        "caffeine/adapt_size/request.trace.xz",
        Format::AdaptSize,
        66_987,
        36_815,
    ),
    (
        "caffeine/snia/msr-cambridge1-sample.csv",
        Format::Msr,
        1_000,
        713,
    ),
    (
        "caffeine/snia/tencent-cloud_storage-sample.bz2",
        Format::Tencent,
        50_000,
        44_687,
    ),
];

#[test]
fn every_sample_reads_with_its_readme_counts() {
    for &(path, format, requests, distinct) in SAMPLES {
        let s = stats(path, None);
        assert_eq!(s.format, format.name(), "{path}: detected format");
        assert_eq!(
            (s.requests, s.distinct_keys),
            (requests, distinct),
            "{path}"
        );
        assert_eq!(s.damaged_at, None, "{path}");
        assert_eq!(s.damage, None, "{path}");
    }
}

#[test]
fn adapt_size_has_its_size_changes() {
    // The README: 4,876 size changes of an id in the AdaptSize trace.
    let mut r = crate::common::reader("caffeine/adapt_size/request.trace.xz", None);
    let mut last = std::collections::HashMap::new();
    let mut changes = 0;
    for rec in crate::common::records(&mut r) {
        if let Some(old) = last.insert(rec.id, rec.value_size) {
            changes += u64::from(old != rec.value_size);
        }
    }
    assert_eq!(changes, 4_876);
}

#[test]
fn twitter_and_adapt_size_are_one_stream() {
    // The Twitter CSV was made from the AdaptSize oracleGeneral (key `as:<id>`, value
    // size = object size): same sizes, same order, same time.
    let mut og = crate::common::reader("derived/adapt_size_request.oracleGeneral.bin", None);
    let mut tw = crate::common::reader("derived/adapt_size_request.twitter.csv.zst", None);
    let og = crate::common::records(&mut og);
    let tw = crate::common::records(&mut tw);
    assert_eq!(og.len(), tw.len());
    for (a, b) in og.iter().zip(&tw) {
        assert_eq!(b.key, format!("as:{}", a.id).into_bytes());
        assert_eq!((a.ts, a.value_size), (b.ts, b.value_size));
        assert_eq!(b.cf, 1);
    }
}

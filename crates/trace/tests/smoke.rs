use crate::common::*;

#[test]
fn print_all() {
    for (f, fmt) in [
        ("libcachesim/cloudPhysicsIO.oracleGeneral.bin", None),
        ("libcachesim/cloudPhysicsIO.vscsi", None),
        ("libcachesim/cloudPhysicsIO.csv", None),
        ("libcachesim/cloudPhysicsIO.txt", None),
        ("derived/cloudPhysicsIO.lcs", None),
        ("derived/adapt_size_request.oracleGeneral.bin", None),
        ("derived/adapt_size_request.twitter.csv.zst", None),
        ("arc/OLTP.lis.zst", None),
        ("caffeine/lirs/cs.trace.gz", None),
        ("caffeine/cache2k/web07.trace.xz", None),
        ("caffeine/scarab/scarab-recs.trace.xz", None),
        ("caffeine/adapt_size/request.trace.xz", None),
        ("caffeine/snia/msr-cambridge1-sample.csv", None),
        ("caffeine/snia/tencent-cloud_storage-sample.bz2", None),
        ("rocksdb/mixgraph.trace", None),
        ("rocksdb/deleterandom_batch4.trace", None),
        ("rocksdb/multireadrandom.trace", None),
        ("rocksdb/seekrandom_bounded.trace", None),
        ("rocksdb/mergerandom.trace", None),
    ] {
        let s = stats(f, fmt);
        println!(
            "{f}: {} {} {} {:?} {:?}",
            s.format, s.requests, s.distinct_keys, s.ops, s.damage
        );
    }
}

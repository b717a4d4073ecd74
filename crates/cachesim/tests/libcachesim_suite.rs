//! libCacheSim's own test suite, ported: `test/test_evictionAlgo.c` (at the commit the
//! `libcachesim` 0.3.5 PyPI package pins) simulates cloudPhysicsIO.oracleGeneral.bin in
//! byte mode at 128 MiB … 1 GiB and hard-codes each policy's miss count and missed bytes.
//! The numbers below are copied from that file (and the PyPI package reproduces them).

use kvlab_cachesim::{simulate, Mode, PolicySpec, SimOptions};

use crate::oracle;

const MIB: u64 = 1 << 20;

/// (policy as kvlab names it, miss counts, missed bytes) at 128 MiB × 1..=8.
const TRUTH: &[(&str, [u64; 8], [u64; 8])] = &[
    (
        "ARC",
        [90252, 85861, 78168, 74297, 67381, 65685, 64439, 64772],
        [
            4068098560, 3821026816, 3525644800, 3296890368, 2868538880, 2771180032, 2699484672,
            2712971264,
        ],
    ),
    (
        "Belady",
        [79256, 70724, 65481, 61594, 59645, 57599, 50873, 48974],
        [
            3472532480, 2995165696, 2726689792, 2537648128, 2403427840, 2269212672, 2134992896,
            2029769728,
        ],
    ),
    (
        "Clock",
        [93313, 89775, 83411, 81328, 74815, 72283, 71927, 64456],
        [
            4213887488, 4064512000, 3762650624, 3644467200, 3256760832, 3091688448, 3074241024,
            2697378816,
        ],
    ),
    (
        "FIFO",
        [93403, 89386, 84387, 84025, 72498, 72228, 72182, 72140],
        [
            4213112832, 4052646400, 3829170176, 3807412736, 3093146112, 3079525888, 3079210496,
            3077547520,
        ],
    ),
    (
        "GDSF",
        [89070, 84750, 74850, 70490, 67923, 64180, 61027, 58721],
        [
            4210726912, 4057058816, 3719176192, 3436855296, 3271648256, 3029728768, 2828456448,
            2677800448,
        ],
    ),
    (
        "LFU",
        [91699, 86720, 78578, 76707, 69945, 66221, 64445, 64376],
        [
            4158632960, 3917211648, 3536227840, 3455379968, 3035580416, 2801699328, 2699456000,
            2696345600,
        ],
    ),
    (
        "LFUDA",
        [92637, 88601, 82001, 80240, 73214, 71386, 70415, 71128],
        [
            4200012288, 3993467904, 3673375232, 3579174400, 3164476928, 3046658048, 2998682624,
            3027994112,
        ],
    ),
    (
        "LIRS",
        [89819, 79237, 73143, 70363, 68405, 64494, 58640, 53924],
        [
            4060558336, 3525952512, 3199406080, 3011810816, 2848310272, 2580918784, 2361375744,
            2288325120,
        ],
    ),
    (
        "LRU",
        [93374, 89783, 83572, 81722, 72494, 72104, 71972, 71704],
        [
            4214303232, 4061242368, 3778040320, 3660569600, 3100927488, 3078128640, 3075403776,
            3061662720,
        ],
    ),
    (
        // The suite creates S3-FIFO with "move-to-main-threshold=2" (the default).
        "S3FIFO",
        [90117, 80915, 75060, 72191, 69815, 65542, 60799, 56045],
        [
            4058576896, 3573827584, 3244417024, 3061737984, 2898109952, 2628363776, 2425027072,
            2327934464,
        ],
    ),
    (
        "Sieve",
        [91699, 86720, 78578, 76707, 69945, 66221, 64445, 64376],
        [
            4158632960, 3917211648, 3536227840, 3455379968, 3035580416, 2801699328, 2699456000,
            2696345600,
        ],
    ),
    (
        // The suite creates SLRU with "n-seg=5".
        "SLRU:segments=5",
        [89624, 86725, 82781, 80203, 75388, 65645, 59035, 56063],
        [
            4123085312, 3915534848, 3690704896, 3493027840, 3174708736, 2661464064, 2507604992,
            2439981056,
        ],
    ),
];

#[test]
fn every_ported_policy_matches_libcachesim_test_suite_in_byte_mode() {
    let trace = oracle::load(&oracle::data(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    ));
    assert_eq!(trace.len(), 113_872, "g_req_cnt_true");
    assert_eq!(trace.requested_bytes(), 4_368_040_448, "g_req_byte_true");
    let opts = SimOptions {
        mode: Mode::Byte,
        ..SimOptions::default()
    };
    let jobs: Vec<(PolicySpec, u64)> = TRUTH
        .iter()
        .flat_map(|(p, _, _)| {
            (1..=8).map(move |k| (p.parse().expect("policy parses"), k * 128 * MIB))
        })
        .collect();
    let results = kvlab_cachesim::simulate_many(&trace, &jobs, opts, 0);
    let mut failures = Vec::new();
    for (i, (name, misses, bytes)) in TRUTH.iter().enumerate() {
        for k in 0..8 {
            let r = results[i * 8 + k].as_ref().expect("simulation runs");
            assert_eq!(r.requests, 113_872);
            if (r.misses, r.byte_misses) != (misses[k], bytes[k]) {
                failures.push(format!(
                    "{name} at {} MiB: kvlab {} misses / {} bytes, libCacheSim {} / {}",
                    (k + 1) * 128,
                    r.misses,
                    r.byte_misses,
                    misses[k],
                    bytes[k]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn simulate_runs_one_pair_like_simulate_many() {
    let trace = oracle::load(&oracle::data(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    ));
    let opts = SimOptions {
        mode: Mode::Byte,
        ..SimOptions::default()
    };
    let r = simulate(&trace, &PolicySpec::Lru, 128 * MIB, opts).expect("LRU runs");
    assert_eq!((r.misses, r.byte_misses), (93374, 4214303232));
    let json = serde_json::to_value(&r).expect("serializes");
    for field in [
        "policy",
        "cache_size",
        "mode",
        "requests",
        "misses",
        "miss_ratio",
        "byte_misses",
        "byte_miss_ratio",
        "seconds",
    ] {
        assert!(json.get(field).is_some(), "JSON has {field}");
    }
    assert_eq!(json["mode"], "byte");
    assert_eq!(json["policy"], "LRU");
}

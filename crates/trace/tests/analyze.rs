//! The trace analysis against libCacheSim 0.3.5's trace analyzer on real traces, and its
//! exact stack distances and correlations against brute force.
//!
//! The libCacheSim figures were produced by `bench/trace-analyze-vs-libcachesim.sh`'s
//! Python snippet, i.e. (in a venv with `pip install libcachesim==0.3.5`):
//!
//! ```text
//! import libcachesim as lcs
//! r = lcs.TraceReader(FILE, lcs.TraceType.ORACLE_GENERAL_TRACE)
//! lcs.TraceAnalyzer(r, "out").run()   # ./stat, out.popularity, out.reuse, out.size,
//!                                     # out.reqRate_w60
//! ```
//!
//! and, for the LRU misses, per cache size `c` in 2^0..2^16 objects:
//!
//! ```text
//! p = lcs.ReaderInitParam(ignore_obj_size=True)
//! r = lcs.TraceReader(FILE, lcs.TraceType.ORACLE_GENERAL_TRACE, reader_init_params=p)
//! mr, _ = lcs.LRU(cache_size=c).process_trace(r); misses = round(mr * n_requests)
//! ```

use std::path::{Path, PathBuf};

use kvlab_trace::analyze::{stack, stack::StackDistance, Analysis, AnalyzeOptions, Analyzer};
use kvlab_trace::{KeyEncoding, Op, TimeUnit, TraceInfo, TraceRecord};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/traces")
        .join(rel)
}

/// libCacheSim's oracleGeneral records (`u32 time_s, u64 id, u32 size, i64 next`), read
/// here directly so the analysis is checked apart from kvlab's readers.
fn analyze_oracle_general(rel: &str) -> Analysis {
    let bytes = std::fs::read(data(rel)).expect("the shared sample traces are present");
    let info = TraceInfo {
        format: "oracleGeneral".into(),
        key_encoding: KeyEncoding::Id,
        time_unit: TimeUnit::Seconds,
        has_sizes: true,
        has_next_access: true,
        ..TraceInfo::default()
    };
    let mut a = Analyzer::new(&info, &AnalyzeOptions::default());
    let mut rec = TraceRecord::default();
    for r in bytes.chunks_exact(24) {
        rec.clear();
        rec.ts = u64::from(u32::from_le_bytes(r[0..4].try_into().expect("4 bytes")));
        rec.id = u64::from_le_bytes(r[4..12].try_into().expect("8 bytes"));
        rec.value_size = u64::from(u32::from_le_bytes(r[12..16].try_into().expect("4 bytes")));
        rec.next_access = i64::from_le_bytes(r[16..24].try_into().expect("8 bytes"));
        a.observe(&rec);
    }
    a.finish()
}

/// What libCacheSim 0.3.5 printed for one trace.
struct Lcs {
    requests: u64,
    objects: u64,
    /// "compulsory miss ratio (req/byte)", 4 decimals.
    cmr: (&'static str, &'static str),
    /// "object size weighted by req/obj" (integer division).
    mean_size: (u64, u64),
    /// "popularity: Zipf alpha=…, R2=…".
    zipf: (&'static str, &'static str),
    x_hit: [u64; 5],
    top: [u64; 10],
    /// `.reuse`, "reuse virtual time: freq (log base 1.5)", buckets 0.. (bucket -1 is
    /// `objects`).
    reuse_vtime: &'static [u64],
    /// LRU misses at 2^0..2^16 objects.
    lru_misses: [u64; 17],
}

fn check(a: &Analysis, want: &Lcs) {
    let s = &a.summary;
    assert_eq!(s.requests, want.requests);
    assert_eq!(s.objects, want.objects);
    assert_eq!(format!("{:.4}", s.compulsory_miss_ratio), want.cmr.0);
    assert_eq!(format!("{:.4}", s.compulsory_miss_ratio_bytes), want.cmr.1);
    assert_eq!(
        (s.request_bytes / s.requests, s.object_bytes / s.objects),
        want.mean_size
    );
    assert_eq!(s.x_hit, want.x_hit);
    assert_eq!(s.one_hit_objects, want.x_hit[0]);
    assert_eq!(s.top_frequencies, want.top);
    let alpha = s.zipf_alpha.expect("enough objects for a fit");
    let r2 = s.zipf_r2.expect("enough objects for a fit");
    assert_eq!(
        (format!("{alpha:.4}"), format!("{r2:.4}")),
        (want.zipf.0.into(), want.zipf.1.into())
    );
    assert_eq!(a.cold_requests, want.objects);
    assert_eq!(a.reuse_lcs_vtime, want.reuse_vtime);
    let hits = a.lru_hit_ratios();
    for (k, &misses) in want.lru_misses.iter().enumerate() {
        // Cache size 2^k: the hit ratio at bucket k (distances below 2^k), or every
        // reuse once the cache is larger than every distance.
        let hit = hits
            .get(k)
            .map_or(hits.last().map_or(0.0, |h| h.1), |h| h.1);
        let got = s.requests - (hit * s.requests as f64).round() as u64;
        assert_eq!(got, misses, "LRU misses at {} objects", 1u64 << k);
    }
}

#[test]
fn cloudphysics_matches_libcachesim() {
    let a = analyze_oracle_general("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    check(
        &a,
        &Lcs {
            requests: 113_872,
            objects: 48_974,
            cmr: ("0.4301", "0.4647"),
            mean_size: (38_359, 41_445),
            zipf: ("0.5464", "0.8743"),
            x_hit: [21_049, 18_839, 827, 6_059, 263],
            top: [1630, 1342, 1341, 652, 360, 360, 326, 326, 326, 326],
            reuse_vtime: &[
                2685, 655, 534, 975, 306, 1019, 1014, 944, 1103, 1038, 1594, 1277, 1130, 1540,
                1740, 814, 464, 367, 501, 629, 1633, 2599, 9883, 4083, 3264, 2940, 4737, 15419, 11,
            ],
            lru_misses: [
                111_187, 110_525, 109_206, 108_196, 106_086, 104_212, 101_578, 99_411, 96_397,
                95_370, 94_816, 94_156, 92_713, 87_470, 74_972, 66_673, 48_974,
            ],
        },
    );
    // `.size`, section "object_size: req_cnt": 117 distinct sizes, the most requested
    // ones 65536 (40591), 8192 (18006), 4096 (15634), 69632 (13251).
    let sizes = a.value_sizes[0].1.sorted();
    assert_eq!(sizes.len(), 117);
    for (size, reqs) in [
        (65_536, 40_591),
        (8192, 18_006),
        (4096, 15_634),
        (69_632, 13_251),
    ] {
        assert!(sizes.contains(&(size, reqs)), "{size}: {reqs}");
    }
    // `.size`, section "object_size: obj_cnt" (size at the first request): 117 sizes,
    // 65536 (18638 objects), 8192 (7569), 69632 (6360), 4096 (4140).
    let objects = a.object_sizes.sorted();
    assert_eq!(objects.len(), 117);
    for (size, n) in [(65_536, 18_638), (8192, 7569), (69_632, 6360), (4096, 4140)] {
        assert!(objects.contains(&(size, n)), "{size}: {n}");
    }
    // libCacheSim "time span: 7200".
    assert_eq!(a.summary.time_span_s, Some(7200.0));
    // `.reqRate_w60`: per 60 s window, requests and distinct objects per second (integer
    // division; libCacheSim leaves out the last, partial window). Its "first seen obj"
    // rate is not compared: `reqRate.cpp` counts the request that crosses into a new
    // window in the old one, which moves first requests across windows.
    const REQ_RATE: [u64; 120] = [
        3, 3, 2, 3, 3, 3, 2, 5, 6, 4, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 6, 4, 3, 3, 3, 3, 3, 2, 229,
        320, 168, 4, 3, 5, 3, 3, 5, 3, 6, 3, 3, 2, 4, 3, 3, 3, 3, 3, 3, 3, 4, 3, 3, 2, 3, 2, 3, 3,
        3, 3, 5, 2, 7, 12, 3, 3, 36, 6, 3, 3, 3, 2, 4, 3, 3, 3, 3, 2, 3, 2, 3, 2, 3, 2, 4, 3, 3, 2,
        3, 2, 3, 2, 264, 313, 136, 3, 3, 5, 7, 3, 3, 3, 3, 3, 3, 3, 4, 3, 3, 3, 3, 3, 3, 3, 4, 2,
        3, 2, 4,
    ];
    const OBJ_RATE: [u64; 120] = [
        1, 2, 1, 2, 1, 2, 1, 3, 4, 2, 1, 2, 2, 2, 1, 1, 1, 2, 1, 1, 2, 4, 2, 2, 1, 2, 1, 1, 1, 195,
        241, 165, 3, 2, 3, 1, 1, 3, 1, 5, 1, 2, 1, 2, 1, 1, 1, 2, 2, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1,
        2, 1, 2, 1, 4, 10, 2, 1, 34, 5, 1, 1, 2, 1, 2, 2, 2, 1, 1, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1,
        2, 1, 2, 1, 209, 231, 134, 1, 2, 3, 5, 1, 2, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1, 2, 1, 2, 1,
        2, 1, 2,
    ];

    let per_window: Vec<u64> = a.qps[0]
        .1
        .chunks(60)
        .map(|c| c.iter().sum::<u64>() / 60)
        .collect();
    assert_eq!(per_window[..120], REQ_RATE);
    let objects: Vec<u64> = a.windows.iter().map(|w| w.distinct_keys / 60).collect();
    assert_eq!(objects[..120], OBJ_RATE);
}

#[test]
fn adapt_size_matches_libcachesim() {
    let a = analyze_oracle_general("derived/adapt_size_request.oracleGeneral.bin");
    check(
        &a,
        &Lcs {
            requests: 66_987,
            objects: 36_815,
            cmr: ("0.5496", "0.5745"),
            mean_size: (7245, 7574),
            zipf: ("0.4924", "0.8168"),
            x_hit: [29_858, 3873, 1105, 539, 353],
            top: [1031, 851, 848, 842, 354, 344, 273, 227, 182, 180],
            reuse_vtime: &[
                2500, 798, 521, 1069, 652, 1110, 968, 848, 961, 1028, 1169, 1162, 1017, 1076, 1257,
                943, 926, 1050, 1230, 1247, 1232, 1181, 1762, 1591, 1153, 1086, 572, 63,
            ],
            lru_misses: [
                64_487, 63_589, 62_258, 60_977, 59_194, 57_594, 55_731, 53_840, 51_871, 49_966,
                48_207, 45_844, 43_843, 40_951, 38_464, 36_875, 36_815,
            ],
        },
    );
    assert_eq!(a.summary.time_span_s, Some(66_986.0));
}

/// xorshift64*: a fixed, named generator for the random traces below.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Stack distances by definition: distinct keys between the two requests.
fn brute_force(keys: &[u32]) -> Vec<Option<u64>> {
    (0..keys.len())
        .map(|i| {
            let prev = keys[..i].iter().rposition(|&k| k == keys[i])?;
            let mut between: Vec<u32> = keys[prev + 1..i].to_vec();
            between.sort_unstable();
            between.dedup();
            Some(between.len() as u64)
        })
        .collect()
}

#[test]
fn stack_distances_equal_brute_force_on_random_traces() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    // Few keys and many requests force many renumberings of the positions; skewed
    // choices (squaring a uniform draw) give short and long distances alike.
    for (n, k) in [
        (1, 1),
        (50, 3),
        (3000, 7),
        (5000, 300),
        (6000, 2500),
        (4000, 100_000),
    ] {
        let keys: Vec<u32> = (0..n)
            .map(|_| {
                let u = rng.below(k);
                (u * u / k.max(1)) as u32
            })
            .collect();
        let mut s = StackDistance::default();
        let mut pos = vec![stack::NONE; k as usize + 1];
        let got: Vec<Option<u64>> = keys
            .iter()
            .map(|&key| {
                let mut p = pos[key as usize];
                let d = s.access(key, &mut p, |slot, new| pos[slot as usize] = new);
                pos[key as usize] = p;
                d
            })
            .collect();
        assert_eq!(got, brute_force(&keys), "{n} requests over {k} keys");
    }
}

fn info(encoding: KeyEncoding, unit: TimeUnit) -> TraceInfo {
    TraceInfo {
        format: "synthetic".into(),
        key_encoding: encoding,
        time_unit: unit,
        has_sizes: true,
        ..TraceInfo::default()
    }
}

/// Pearson's r of two columns, two-pass.
fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[test]
fn correlations_equal_a_two_pass_computation() {
    let mut rng = XorShift(42);
    let mut a = Analyzer::new(
        &info(KeyEncoding::Bytes, TimeUnit::Micros),
        &AnalyzeOptions::default(),
    );
    let mut recs = Vec::new();
    let mut rec = TraceRecord::default();
    for i in 0..20_000u64 {
        rec.clear();
        let k = {
            let u = rng.below(500);
            u * u / 500
        };
        rec.set_key(format!("key{k:05}").as_bytes());
        rec.ts = i * 10;
        // Hot keys get bigger values and more writes, so the correlations are not ~0.
        rec.op = match rng.below(10) {
            0 => Op::Put,
            1 => Op::Seek,
            _ if k < 20 && rng.below(2) == 0 => Op::Put,
            _ => Op::Get,
        };
        rec.value_size = 100 + rng.below(100) + if k < 50 { 1000 } else { 0 };
        rec.cf = (k % 3) as u32;
        rec.scan_len = if rec.op == Op::Seek {
            1 + rng.below(50) as u32
        } else {
            0
        };
        a.observe(&rec);
        recs.push(rec.clone());
    }
    let mut count = std::collections::HashMap::new();
    for r in &recs {
        *count.entry(r.id).or_insert(0u64) += 1;
    }
    let cols: [Vec<f64>; 4] = [
        recs.iter().map(|r| count[&r.id] as f64).collect(),
        recs.iter().map(|r| r.value_size as f64).collect(),
        recs.iter()
            .map(|r| f64::from(u8::from(!r.op.is_read())))
            .collect(),
        recs.iter().map(|r| f64::from(r.scan_len)).collect(),
    ];
    let an = a.finish();
    for i in 0..4 {
        for j in 0..4 {
            let want = pearson(&cols[i], &cols[j]).expect("every column varies");
            let got = an.correlations[i][j].expect("every column varies");
            assert!(
                (got - want).abs() < 1e-9,
                "r[{i}][{j}] = {got}, want {want}"
            );
        }
    }
    assert!(
        an.correlations[0][1].expect("varies") > 0.3,
        "hot keys have big values"
    );
    // Requests per column family and op, as counted directly.
    let mut by_cf = std::collections::BTreeMap::new();
    for r in &recs {
        *by_cf.entry((r.cf, r.op)).or_insert(0u64) += 1;
    }
    let direct: Vec<(u32, Op, u64)> = by_cf.into_iter().map(|((cf, op), n)| (cf, op, n)).collect();
    assert_eq!(an.cf_ops, direct);
    assert_eq!(an.summary.column_families, 3);
    // Scan lengths of the Seeks, 1..=50.
    let scans = &an.scan_lengths;
    assert_eq!(scans.len(), 1);
    assert_eq!(scans[0].0, Op::Seek);
    assert_eq!((scans[0].1.min(), scans[0].1.max()), (1, 50));
}

#[test]
fn locality_figures_follow_the_sorted_key_space() {
    // Keys key000..key999 in a shuffled order, key k requested (k % 10) + 1 times, at one
    // request per millisecond.
    let mut rng = XorShift(7);
    let mut order: Vec<u64> = (0..1000)
        .flat_map(|k| std::iter::repeat_n(k, (k % 10 + 1) as usize))
        .collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let opts = AnalyzeOptions {
        heatmap_buckets: 10,
        time_series_points: 100,
        window_s: 1,
        ..AnalyzeOptions::default()
    };
    let mut a = Analyzer::new(&info(KeyEncoding::Bytes, TimeUnit::Millis), &opts);
    let mut rec = TraceRecord::default();
    for (i, &k) in order.iter().enumerate() {
        rec.clear();
        rec.set_key(format!("key{k:03}").as_bytes());
        rec.ts = 5000 + i as u64;
        rec.op = if k % 2 == 0 { Op::Get } else { Op::Put };
        a.observe(&rec);
    }
    let an = a.finish();
    assert_eq!(an.summary.requests, 5500);
    assert_eq!(an.heatmap.len(), 10);
    for (b, h) in an.heatmap.iter().enumerate() {
        assert_eq!(h.first_key, format!("key{:03}", b * 100));
        assert_eq!(h.last_key, format!("key{:03}", b * 100 + 99));
        assert_eq!((h.keys, h.requests, h.max_key_requests), (100, 550, 10));
        assert_eq!((h.reads, h.writes), (250, 300));
    }
    // At most the asked points, evenly spread: the stride doubles, so ≥ half are kept.
    let ts = &an.time_series;
    assert!(ts.len() <= 100 && ts.len() >= 50, "{}", ts.len());
    for p in ts {
        let k = p.key_rank;
        assert!(k < 1000);
        assert_eq!(p.op, if k % 2 == 0 { Op::Get } else { Op::Put });
    }
    assert!(ts.windows(2).all(|w| w[0].time < w[1].time));
    assert!(ts.last().expect("points").time > 5.0 * 0.9 * 0.9);
    // 1 s windows of 1000 requests each (the last one 500).
    assert_eq!(an.windows.len(), 6);
    assert_eq!(an.windows.iter().map(|w| w.requests).sum::<u64>(), 5500);
    assert_eq!(an.windows.iter().map(|w| w.new_keys).sum::<u64>(), 1000);
    assert!(an.windows.iter().all(|w| w.distinct_keys <= w.requests));
    // QPS: 1000 per second.
    let total: Vec<u64> = (0..6)
        .map(|b| {
            an.qps
                .iter()
                .map(|(_, v)| v.get(b).copied().unwrap_or(0))
                .sum()
        })
        .collect();
    assert_eq!(total, vec![1000, 1000, 1000, 1000, 1000, 500]);
    // Access counts: 100 keys with each count 1..=10.
    let all = &an.access_counts[0];
    assert_eq!(all.0, None);
    assert_eq!(all.1, (1..=10).map(|c| (c, 100)).collect::<Vec<_>>());
    assert_eq!(an.summary.x_hit, vec![100; 5]);
    assert_eq!(an.summary.top_frequencies, vec![10; 10]);
    // The most requested keys: 10 requests each, so keys ending in 9.
    assert_eq!(an.top_keys.len(), 10);
    for (key, id, c) in &an.top_keys {
        assert!(key.ends_with('9') && *c == 10, "{key}: {c}");
        assert_eq!(*id, kvlab_trace::key_id(key.as_bytes()));
    }
    // Fewer than 200 objects would not be fitted; 1000 are.
    assert!(an.summary.zipf_alpha.is_some());
}

/// The records of `reqs` (key, column family, op), one a millisecond.
fn analyze_requests(reqs: &[(String, u32, Op)], opts: &AnalyzeOptions) -> Analysis {
    let mut a = Analyzer::new(&info(KeyEncoding::Bytes, TimeUnit::Millis), opts);
    let mut rec = TraceRecord::default();
    for (i, (key, cf, op)) in reqs.iter().enumerate() {
        rec.clear();
        rec.set_key(key.as_bytes());
        rec.ts = i as u64;
        rec.cf = *cf;
        rec.op = *op;
        a.observe(&rec);
    }
    a.finish()
}

#[test]
fn key_ranges_cut_the_sorted_keys_and_are_drawn_on_both_locality_charts() {
    // key000..key999 in a shuffled order, key k requested 1 + k / 250 times: four
    // quarters of the key space with 250, 500, 750 and 1000 requests.
    let mut rng = XorShift(11);
    let mut reqs: Vec<(String, u32, Op)> = (0..1000u32)
        .flat_map(|k| std::iter::repeat_n((format!("key{k:03}"), 0, Op::Get), 1 + k as usize / 250))
        .collect();
    for i in (1..reqs.len()).rev() {
        reqs.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let with = |rule: &str| AnalyzeOptions {
        key_ranges: rule.parse().expect("a valid rule"),
        ..AnalyzeOptions::default()
    };
    let a = analyze_requests(&reqs, &with("ranges:4"));
    let got: Vec<(u64, &str, &str, u64, u64, f64)> = a
        .key_ranges
        .iter()
        .map(|r| {
            let (first, last) = (r.first_key.as_str(), r.last_key.as_str());
            (r.first_rank, first, last, r.keys, r.requests, r.share)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, "key000", "key249", 250, 250, 0.1),
            (250, "key250", "key499", 250, 500, 0.2),
            (500, "key500", "key749", 250, 750, 0.3),
            (750, "key750", "key999", 250, 1000, 0.4),
        ]
    );
    // The heatmap is as it was: 1000 buckets of one key, whatever the ranges.
    assert_eq!(a.heatmap.len(), 1000);
    assert_eq!(a.heatmap[999].requests, 4);

    // keys:300: three full ranges and the rest.
    let a3 = analyze_requests(&reqs, &with("keys:300"));
    let sizes: Vec<(u64, u64)> = a3
        .key_ranges
        .iter()
        .map(|r| (r.first_rank, r.keys))
        .collect();
    assert_eq!(sizes, vec![(0, 300), (300, 300), (600, 300), (900, 100)]);
    // The default: 30 ranges of 33 or 34 keys covering every key and request once.
    let d = analyze_requests(&reqs, &AnalyzeOptions::default());
    assert_eq!(d.key_ranges.len(), 30);
    assert!(d.key_ranges.iter().all(|r| r.keys == 33 || r.keys == 34));
    assert_eq!(d.key_ranges.iter().map(|r| r.keys).sum::<u64>(), 1000);
    assert_eq!(d.key_ranges.iter().map(|r| r.requests).sum::<u64>(), 2500);
    assert!(analyze_requests(&reqs, &with("none")).key_ranges.is_empty());
    // More ranges than keys: one key each.
    let few = analyze_requests(&reqs[..3], &with("ranges:30"));
    assert_eq!(few.key_ranges.len(), few.summary.objects as usize);

    // The files: keyranges.csv and keyranges.json beside summary.json (whose fields
    // stay), and the three inner boundaries drawn on the heatmap and on the series.
    let dir = tempfile::tempdir().expect("a temporary directory");
    a.write(dir.path(), true)
        .expect("the directory is writable");
    let csv = std::fs::read_to_string(dir.path().join("keyranges.csv")).expect("written");
    assert_eq!(
        csv,
        "range,first_rank,first_key,last_key,keys,requests,share\n\
         0,0,key000,key249,250,250,0.1\n1,250,key250,key499,250,500,0.2\n\
         2,500,key500,key749,250,750,0.3\n3,750,key750,key999,250,1000,0.4\n"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("keyranges.json")).expect("written"),
    )
    .expect("keyranges.json is JSON");
    assert_eq!(json["rule"], "ranges:4");
    assert_eq!(json["ranges"][3]["first_rank"], 750);
    assert_eq!(json["ranges"][3]["share"], 0.4);
    assert_eq!(json["column_families"], serde_json::json!([]));
    let page = std::fs::read_to_string(dir.path().join("index.html")).expect("written");
    let groups: Vec<&str> = page
        .split("<g class=\"keyranges\"")
        .skip(1)
        .map(|g| &g[..g.find("</g>").expect("a closed group")])
        .collect();
    assert_eq!(groups.len(), 2, "the heatmap and the series");
    for g in &groups {
        assert_eq!(g.matches("<line").count(), 3, "{g}");
    }
    let none = analyze_requests(&reqs, &with("0"));
    none.write(dir.path(), true)
        .expect("the directory is writable");
    let page = std::fs::read_to_string(dir.path().join("index.html")).expect("written");
    assert!(!page.contains("class=\"keyranges\""));
}

#[test]
fn key_range_rules_are_spelt_as_the_models() {
    use kvlab_trace::analyze::KeyRangeRule;
    for (text, rule, shown) in [
        ("ranges:30", KeyRangeRule::Ranges(30), "ranges:30"),
        ("30", KeyRangeRule::Ranges(30), "ranges:30"),
        ("keys:1000", KeyRangeRule::KeysPerRange(1000), "keys:1000"),
        ("none", KeyRangeRule::None, "none"),
        ("0", KeyRangeRule::None, "none"),
        ("ranges:0", KeyRangeRule::None, "none"),
    ] {
        let got: KeyRangeRule = text.parse().expect("a valid rule");
        assert_eq!(got, rule, "{text}");
        assert_eq!(got.to_string(), shown);
    }
    for bad in ["keys:0", "sst", "ranges:x", "ranges", "-3", ""] {
        let err = bad.parse::<KeyRangeRule>().expect_err(bad);
        assert!(err.contains("ranges:N"), "{bad}: {err}");
    }
}

#[test]
fn column_families_get_their_own_heatmap_ranges_and_series() {
    // Column family 0: a000..a099, twice each; column family 7: b000..b049 once each,
    // and a000 three times (the same key bytes in another column family); column
    // family 3: c0 once.
    let mut reqs = Vec::new();
    for round in 0..2 {
        for k in 0..100 {
            reqs.push((
                format!("a{k:03}"),
                0,
                if round == 0 { Op::Put } else { Op::Get },
            ));
        }
    }
    for k in 0..50 {
        reqs.push((format!("b{k:03}"), 7, Op::Get));
    }
    for _ in 0..3 {
        reqs.push(("a000".to_string(), 7, Op::Put));
    }
    reqs.push(("c0".to_string(), 3, Op::Get));
    let opts = AnalyzeOptions {
        key_ranges: "ranges:2".parse().expect("a valid rule"),
        max_cf_locality: 2,
        ..AnalyzeOptions::default()
    };
    let a = analyze_requests(&reqs, &opts);
    // The default over all keys is as it was: 151 keys, a000 with its five requests.
    assert_eq!(a.heatmap.len(), 151);
    assert_eq!(
        (a.heatmap[0].first_key.as_str(), a.heatmap[0].requests),
        ("a000", 5)
    );
    assert_eq!(a.time_series.len(), reqs.len());
    // The two most requested column families, by id.
    let ids: Vec<(u32, u64, u64)> = a
        .per_cf
        .iter()
        .map(|c| (c.cf, c.requests, c.keys))
        .collect();
    assert_eq!(ids, vec![(0, 200, 100), (7, 53, 51)]);
    let (cf0, cf7) = (&a.per_cf[0], &a.per_cf[1]);
    assert_eq!(cf0.heatmap.len(), 100);
    assert!(cf0
        .heatmap
        .iter()
        .all(|b| (b.requests, b.reads, b.writes) == (2, 1, 1)));
    assert_eq!(
        (
            cf7.heatmap[0].first_key.as_str(),
            cf7.heatmap[0].requests,
            cf7.heatmap[0].writes
        ),
        ("a000", 3, 3)
    );
    assert_eq!(cf7.heatmap[1].first_key, "b000");
    // Ranges over the column family's own keys and requests.
    let r7: Vec<(u64, &str, &str, u64, u64)> = cf7
        .key_ranges
        .iter()
        .map(|r| {
            (
                r.first_rank,
                r.first_key.as_str(),
                r.last_key.as_str(),
                r.keys,
                r.requests,
            )
        })
        .collect();
    assert_eq!(
        r7,
        vec![(0, "a000", "b023", 25, 27), (25, "b024", "b049", 26, 26)]
    );
    // Each column family's series holds its requests, ranked among its keys.
    assert_eq!(cf0.time_series.len(), 200);
    assert_eq!(cf7.time_series.len(), 53);
    assert_eq!(cf0.time_series[0].key_rank, 0);
    assert_eq!(cf0.time_series[99].key_rank, 99);
    assert_eq!(
        cf7.time_series[0].key_rank, 1,
        "b000 follows a000 in column family 7"
    );
    assert!(cf7.time_series[50..]
        .iter()
        .all(|p| p.key_rank == 0 && p.op == Op::Put));

    let dir = tempfile::tempdir().expect("a temporary directory");
    a.write(dir.path(), true)
        .expect("the directory is writable");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect(name);
    assert_eq!(read("heatmap.cf7.csv").lines().count(), 1 + 51);
    assert_eq!(
        read("keyranges.cf7.csv").lines().nth(2),
        Some(format!("1,25,b024,b049,26,26,{}", 26.0 / 53.0).as_str())
    );
    assert_eq!(read("time_series.cf0.csv").lines().count(), 1 + 200);
    assert!(
        !dir.path().join("heatmap.cf3.csv").exists(),
        "not among the two"
    );
    let json: serde_json::Value =
        serde_json::from_str(&read("keyranges.json")).expect("keyranges.json is JSON");
    assert_eq!(json["column_families"][1]["cf"], 7);
    assert_eq!(json["column_families"][1]["ranges"][0]["requests"], 27);
    let page = read("index.html");
    assert!(page.contains("Column family / tenant 7: 53 requests, 51 keys"));
    assert_eq!(page.matches("<g class=\"keyranges\"").count(), 3 * 2);

    // One column family: no per-column-family figures or files.
    let one: Vec<(String, u32, Op)> = reqs.iter().map(|(k, _, op)| (k.clone(), 5, *op)).collect();
    let a = analyze_requests(&one, &opts);
    assert!(a.per_cf.is_empty());
    assert!(!a.csv_files().iter().any(|(name, _)| name.contains(".cf")));
}

#[test]
fn writes_summary_csvs_and_a_self_contained_page() {
    let a = analyze_oracle_general("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    let dir = std::env::temp_dir().join(format!("kvlab-analyze-test-{}", std::process::id()));
    a.write(&dir, true)
        .expect("the temporary directory is writable");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("summary.json")).expect("summary.json written"),
    )
    .expect("summary.json is JSON");
    for field in [
        "requests",
        "objects",
        "compulsory_miss_ratio",
        "one_hit_objects",
        "x_hit",
        "zipf_alpha",
        "zipf_r2",
        "top_frequencies",
    ] {
        assert!(json.get(field).is_some(), "summary.json has {field}");
    }
    assert_eq!(json["requests"], 113_872);
    assert_eq!(json["x_hit"][0], 21_049);
    for (name, _) in a.csv_files() {
        let text = std::fs::read_to_string(dir.join(&name)).expect("every CSV written");
        let mut lines = text.lines();
        let cols = lines.next().expect("a header").split(',').count();
        for l in lines {
            // No field of these traces holds a comma, so a row splits into its columns.
            assert_eq!(l.split(',').count(), cols, "{name}: {l}");
        }
    }
    let page = std::fs::read_to_string(dir.join("index.html")).expect("index.html written");
    assert!(page.matches("<svg").count() >= 8);
    assert!(
        !page.contains("http://")
            || page.matches("http://").count()
                == page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    assert!(!page.contains("<script") && !page.contains("https://"));
    std::fs::remove_dir_all(&dir).expect("the test's own directory");
}

#[test]
fn memory_follows_the_keys_not_the_requests() {
    // 1000 byte keys requested 1 M and then 3 M times, one request per millisecond:
    // what the analyzer holds must not grow with the requests.
    let opts = AnalyzeOptions::default();
    let mut a = Analyzer::new(&info(KeyEncoding::Bytes, TimeUnit::Millis), &opts);
    let mut rng = XorShift(3);
    let mut rec = TraceRecord::default();
    let mut held = Vec::new();
    for i in 0..3_000_000u64 {
        rec.clear();
        let k = {
            let u = rng.below(1000);
            u * u / 1000
        };
        rec.set_key(format!("key{k:04}").as_bytes());
        rec.ts = i;
        rec.op = if i % 3 == 0 { Op::Put } else { Op::Get };
        rec.value_size = rng.below(1 << 20);
        a.observe(&rec);
        if i + 1 == 1_000_000 || i + 1 == 3_000_000 {
            held.push(a.heap_bytes());
        }
    }
    // The per-second QPS buckets (3000 of them) and 50 windows are the only things that
    // follow time; the rest is per key or bounded.
    println!("heap bytes after 1 M and 3 M requests: {held:?}");
    assert!(held[0] < 2 << 20, "{held:?}");
    assert!(held[1] < held[0] + (256 << 10), "{held:?}");
    let an = a.finish();
    assert_eq!(an.summary.requests, 3_000_000);
    assert!(an.time_series.len() <= opts.time_series_points);
    assert!(an
        .value_sizes
        .iter()
        .all(|(_, h)| h.sorted().len() < 20_000));
}

#[test]
fn traces_without_a_clock_count_time_in_requests_and_empty_traces_write() {
    // libCacheSim's txt sample: one id per line, no time. Same requests, objects and
    // popularity as its oracleGeneral form (pinned above from libCacheSim).
    let a = analyze_file("libcachesim/cloudPhysicsIO.txt", &AnalyzeOptions::default());
    assert!(!a.has_clock);
    assert_eq!((a.summary.requests, a.summary.objects), (113_872, 48_974));
    assert_eq!(a.summary.x_hit, vec![21_049, 18_839, 827, 6_059, 263]);
    assert_eq!(a.summary.time_span_s, None);
    // Windows of 10 000 requests, QPS buckets of 1000.
    assert_eq!(a.windows.len(), 12);
    assert!(a.windows[..11].iter().all(|w| w.requests == 10_000));
    assert_eq!(a.qps_bucket, 1000.0);
    assert_eq!(a.qps[0].1.len(), 114);
    assert!(a.time_series.windows(2).all(|w| w[0].time < w[1].time));

    let empty = Analyzer::new(
        &info(KeyEncoding::Bytes, TimeUnit::Micros),
        &AnalyzeOptions::default(),
    )
    .finish();
    assert_eq!((empty.summary.requests, empty.summary.objects), (0, 0));
    assert_eq!(empty.summary.zipf_alpha, None);
    assert!(empty.summary.zipf_note.is_some());
    let dir = std::env::temp_dir().join(format!("kvlab-analyze-empty-{}", std::process::id()));
    empty
        .write(&dir, true)
        .expect("an empty analysis writes too");
    let json = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    assert!(json.contains("\"requests\": 0"));
    std::fs::remove_dir_all(&dir).expect("the test's own directory");
}

#[test]
fn a_clock_that_jumps_far_ahead_allocates_no_empty_windows() {
    // Two requests at 0 and ~1.8 years (in µs): windows stop at 65 536 × 60 s, QPS
    // buckets merge to stay under their bound.
    let mut a = Analyzer::new(
        &info(KeyEncoding::Bytes, TimeUnit::Micros),
        &AnalyzeOptions::default(),
    );
    let mut rec = TraceRecord::default();
    for ts in [0u64, 56_000_000_000_000] {
        rec.clear();
        rec.set_key(b"k");
        rec.ts = ts;
        a.observe(&rec);
    }
    assert!(a.heap_bytes() < 4 << 20, "{}", a.heap_bytes());
    let an = a.finish();
    assert_eq!(an.summary.requests_beyond_windows, 1);
    assert_eq!(an.windows.len(), 1);
    assert!(an.qps[0].1.len() <= AnalyzeOptions::default().max_qps_buckets);
    assert_eq!(an.qps[0].1.iter().sum::<u64>(), 2);
}

/// RocksDB's own `trace_analyzer` (a one-line `main` around `librocksdb`'s
/// `trace_analyzer_tool`), built once: the authority for per-op access counts, the
/// sorted key space and the key × time series of RocksDB query traces.
fn rocksdb_trace_analyzer() -> &'static Path {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kvlab-analyze-ta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let src = dir.join("ta.cc");
        std::fs::write(
            &src,
            "namespace rocksdb { int trace_analyzer_tool(int, char**); }\n\
             int main(int c, char** v){return rocksdb::trace_analyzer_tool(c, v);}\n",
        )
        .expect("writing ta.cc");
        let bin = dir.join("trace_analyzer");
        let out = std::process::Command::new("g++")
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

/// What trace_analyzer wrote for one op type (`get`, `put`, `merge`, `iterator_Seek`,
/// `multiget`…) of column family 0.
struct TaOutput {
    /// `accessed_key_count_distribution.txt`: (access count, keys).
    count_dist: Vec<(u64, u64)>,
    /// `accessed_key_stats.txt`, 4th column: each key's access count, keys in sorted order.
    key_counts: Vec<u64>,
    /// `time_series.txt`, 3rd column: the key id (rank in sorted order) of each request.
    series_keys: Vec<u64>,
}

fn run_trace_analyzer(name: &str, op_types: &[&str]) -> Vec<TaOutput> {
    let dir = std::env::temp_dir().join(format!("kvlab-analyze-ta-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let out = std::process::Command::new(rocksdb_trace_analyzer())
        .arg(format!(
            "-trace_path={}",
            data(&format!("rocksdb/{name}.trace")).display()
        ))
        .arg(format!("-output_dir={}", dir.display()))
        .arg(format!("-output_prefix={name}"))
        .args([
            "-analyze_get",
            "-analyze_put",
            "-analyze_merge",
            "-analyze_iterator",
        ])
        .args(["-analyze_multiget", "-analyze_delete"])
        .args([
            "-output_access_count_stats",
            "-output_key_stats",
            "-output_time_series",
        ])
        .output()
        .expect("running trace_analyzer");
    assert!(out.status.success(), "trace_analyzer on {name}: {out:?}");
    let read = |ty: &str, file: &str| {
        let path = dir.join(format!("{name}-{ty}-0-{file}"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let col = |line: &str, i: usize| -> u64 {
        line.split_whitespace()
            .nth(i)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("column {i} of {line:?}"))
    };
    let outputs = op_types
        .iter()
        .map(|ty| TaOutput {
            count_dist: read(ty, "accessed_key_count_distribution.txt")
                .lines()
                .map(|l| (col(l, 1), col(l, 3)))
                .collect(),
            key_counts: read(ty, "accessed_key_stats.txt")
                .lines()
                .map(|l| col(l, 3))
                .collect(),
            series_keys: read(ty, "time_series.txt")
                .lines()
                .map(|l| col(l, 2))
                .collect(),
        })
        .collect();
    std::fs::remove_dir_all(&dir).expect("the test's own directory");
    outputs
}

fn analyze_file(rel: &str, opts: &AnalyzeOptions) -> Analysis {
    let mut reader = kvlab_trace::open(data(rel), &kvlab_trace::OpenOptions::default())
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut a = Analyzer::new(reader.info(), opts);
    let mut rec = TraceRecord::default();
    while reader
        .read(&mut rec)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
    {
        a.observe(&rec);
    }
    a.finish()
}

#[test]
fn rocksdb_traces_match_rocksdb_trace_analyzer() {
    // Single-op traces: the whole key space and every request of the series compare.
    for (name, ty, op) in [
        ("seekrandom_bounded", "iterator_Seek", Op::Seek),
        ("multireadrandom", "multiget", Op::MultiGet),
        ("mergerandom", "merge", Op::Merge),
    ] {
        let ta = run_trace_analyzer(name, &[ty]).pop().expect("one op type");
        // One heatmap bucket per key and every request in the series.
        let opts = AnalyzeOptions {
            heatmap_buckets: usize::MAX,
            time_series_points: usize::MAX,
            ..AnalyzeOptions::default()
        };
        let a = analyze_file(&format!("rocksdb/{name}.trace"), &opts);
        assert_eq!(a.ops, vec![(op, ta.series_keys.len() as u64)], "{name}");
        assert_eq!(
            a.access_counts[0].1, ta.count_dist,
            "{name}: access count distribution"
        );
        let per_key: Vec<u64> = a.heatmap.iter().map(|b| b.requests).collect();
        assert!(a.heatmap.iter().all(|b| b.keys == 1));
        assert_eq!(per_key, ta.key_counts, "{name}: sorted key space");
        let series: Vec<u64> = a.time_series.iter().map(|p| p.key_rank).collect();
        assert_eq!(series, ta.series_keys, "{name}: key × time series");
    }
    // db_bench's mixgraph (Get, Put, Seek): per-op access count distributions.
    let ta = run_trace_analyzer("mixgraph", &["get", "put", "iterator_Seek"]);
    let a = analyze_file("rocksdb/mixgraph.trace", &AnalyzeOptions::default());
    for (op, t) in [Op::Get, Op::Put, Op::Seek].into_iter().zip(&ta) {
        let mine = a
            .access_counts
            .iter()
            .find(|(o, _)| *o == Some(op))
            .unwrap_or_else(|| panic!("a distribution for {op:?}"));
        assert_eq!(mine.1, t.count_dist, "mixgraph {op:?}");
    }
}

/// Throughput of the analysis alone (records made on the fly), on a synthetic stream of
/// 4 M requests over 1 M ids with a skewed popularity, plus the libCacheSim sample
/// with the page written to `$KVLAB_ANALYZE_OUT` when set. Not a test (timings are for
/// benchmarks): run with
/// `cargo test --release -p kvlab-trace --test tests analyze::throughput -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a test"]
fn throughput() {
    // Keys drawn as u^3 over 1 M ids (a skew close to Zipf 0.7 at the head), 10 % writes;
    // ids are hashed so they arrive in no useful order.
    let mut rng = XorShift(1);
    let n = 4_000_000u64;
    let keys = 1_000_000u64;
    let mut rec = TraceRecord::default();
    let mut a = Analyzer::new(
        &info(KeyEncoding::Id, TimeUnit::Micros),
        &AnalyzeOptions::default(),
    );
    let start = std::time::Instant::now();
    for i in 0..n {
        let u = rng.below(keys) as f64 / keys as f64;
        let k = (u.powi(3) * keys as f64) as u64;
        rec.id = kvlab_trace::key_id(&k.to_le_bytes());
        rec.ts = i;
        rec.op = if rng.below(10) == 0 { Op::Put } else { Op::Get };
        rec.value_size = 100 + (k & 1023);
        a.observe(&rec);
    }
    let an = a.finish();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "synthetic: {} requests, {} keys in {secs:.3} s: {:.2} M requests/s",
        an.summary.requests,
        an.summary.objects,
        an.summary.requests as f64 / secs / 1e6
    );
    let start = std::time::Instant::now();
    let an = analyze_oracle_general("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    println!(
        "cloudPhysicsIO: {:.3} s (reading included)",
        start.elapsed().as_secs_f64()
    );
    if let Ok(dir) = std::env::var("KVLAB_ANALYZE_OUT") {
        an.write(Path::new(&dir), true)
            .expect("the output directory is writable");
    }
}

/// A trace shorter than a second is counted in intervals chosen from its span, not in
/// one second: 20 000 requests evenly over 0.242 s are about 82 600 per second, in each
/// interval, and the intervals cover the span in 10 to 100 steps.
#[test]
fn a_sub_second_trace_is_counted_in_sub_second_intervals() {
    let mut a = Analyzer::new(
        &info(KeyEncoding::Bytes, TimeUnit::Micros),
        &AnalyzeOptions::default(),
    );
    let (n, span_us) = (20_000u64, 242_000u64);
    let mut rec = TraceRecord::default();
    for i in 0..n {
        rec.clear();
        rec.set_key(format!("key{}", i % 500).as_bytes());
        rec.ts = i * span_us / n;
        a.observe(&rec);
    }
    let an = a.finish();
    let width = an.qps_bucket;
    let span_s = an.summary.time_span_s.expect("a clock");
    assert!(width < span_s / 10.0, "{width} s intervals over {span_s} s");
    let counts = &an.qps[0].1;
    assert!(
        (10..=100).contains(&counts.len()),
        "{} intervals",
        counts.len()
    );
    assert_eq!(
        counts.len() as f64,
        (span_s / width).floor() + 1.0,
        "{width} over {span_s}"
    );
    assert_eq!(counts.iter().sum::<u64>(), n);
    let rate = n as f64 / span_s;
    // Every whole interval holds the rate (the last one is cut by the trace's end).
    for c in &counts[..counts.len() - 1] {
        let r = *c as f64 / width;
        assert!((r - rate).abs() < 0.01 * rate, "{r} against {rate}");
    }
    let qps_csv = {
        let dir = std::env::temp_dir().join(format!("kvlab-analyze-short-{}", std::process::id()));
        an.write(&dir, true).expect("writing the analysis");
        let csv = std::fs::read_to_string(dir.join("qps.csv")).expect("qps.csv");
        let page = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
        let label = kvlab_trace::analyze::interval_label((width * 1e9).round() as u64);
        assert!(
            page.contains(&format!("Requests per second ({label} intervals)")),
            "the chart names its interval, {label}"
        );
        std::fs::remove_dir_all(&dir).expect("the test's own directory");
        csv
    };
    let second: Vec<&str> = qps_csv
        .lines()
        .nth(1)
        .expect("a first interval")
        .split(',')
        .collect();
    assert_eq!(second[1].parse::<f64>().unwrap(), width, "{qps_csv}");
}

/// The interval rule: 1, 2 or 5 × 10ⁿ ms, at most 100 intervals, 1 s from a second up.
#[test]
fn qps_intervals_are_round_and_at_most_a_second() {
    use kvlab_trace::analyze::{interval_label, qps_interval_ns, QPS_INTERVALS};
    let ms = 1_000_000u64;
    for span in [
        0,
        1,
        ms / 2,
        99 * ms,
        100 * ms,
        242 * ms,
        999 * ms,
        5_000 * ms,
        3_600_000 * ms,
    ] {
        let i = qps_interval_ns(span);
        let mantissa = i / 10u64.pow((i as f64).log10().floor() as u32);
        assert!([1, 2, 5].contains(&mantissa), "{i} ns for {span}");
        assert!((ms..=1000 * ms).contains(&i), "{i} ns for {span}");
        assert!(
            span / i < QPS_INTERVALS || i == 1000 * ms,
            "{i} ns for {span}"
        );
        // The next narrower round interval would cut the span into too many.
        let narrower = if mantissa == 2 {
            i / 2
        } else if mantissa == 5 {
            i * 2 / 5
        } else {
            i / 2
        };
        assert!(
            i == ms || span / narrower >= QPS_INTERVALS,
            "{i} ns for {span}"
        );
    }
    assert_eq!(qps_interval_ns(3_600_000 * ms), 1000 * ms);
    assert_eq!(interval_label(5 * ms), "5 ms");
    assert_eq!(interval_label(1000 * ms), "1 s");
    assert_eq!(interval_label(250_000), "250 µs");
}

/// A skewed id trace (`n` requests over about `keys` ids, key `k` drawn as
/// `keys · u³`, so a few keys are hot), a request every millisecond.
fn skewed_trace(n: u64, keys: u64, seed: u64) -> Vec<TraceRecord> {
    let mut rng = XorShift(seed);
    (0..n)
        .map(|i| {
            let mut rec = TraceRecord::default();
            let u = rng.below(1 << 20) as f64 / f64::from(1 << 20);
            rec.id = (keys as f64 * u * u * u) as u64 * 7919 + 13;
            rec.ts = i;
            rec.op = if i % 4 == 0 { Op::Put } else { Op::Get };
            rec.value_size = 100 + rec.id % 900;
            rec
        })
        .collect()
}

fn analyze_records(recs: &[TraceRecord], opts: &AnalyzeOptions) -> Analysis {
    let mut a = Analyzer::new(&info(KeyEncoding::Id, TimeUnit::Millis), opts);
    for r in recs {
        a.observe(r);
    }
    a.finish()
}

/// The share of reuses whose stack distance is below `c` (an LRU cache of `c` objects
/// would hit them), from the log2 histogram.
fn below(h: &kvlab_trace::analyze::hist::Log2Hist, upto_bucket: usize) -> f64 {
    let total = h.total().max(1) as f64;
    let n: u64 = h.buckets[..upto_bucket].iter().sum();
    n as f64 / total
}

#[test]
fn past_max_keys_keys_are_sampled_and_the_estimates_are_close_and_said() {
    // 300 000 requests over ~60 000 keys, followed exactly and with at most 4 096 keys.
    let recs = skewed_trace(300_000, 60_000, 11);
    let exact = analyze_records(
        &recs,
        &AnalyzeOptions {
            max_keys: None,
            ..AnalyzeOptions::default()
        },
    );
    let opts = AnalyzeOptions {
        max_keys: Some(4096),
        ..AnalyzeOptions::default()
    };
    let est = analyze_records(&recs, &opts);
    assert!(exact.summary.sampling.is_none());
    let s = est.summary.sampling.clone().expect("keys were sampled");
    let (e, x) = (&est.summary, &exact.summary);
    println!("sampling {s:?}");
    println!(
        "objects {} / {}, mean stack distance {} / {}, one-hit {} / {}, max working set {} / {}",
        e.objects,
        x.objects,
        e.mean_stack_distance,
        x.mean_stack_distance,
        e.one_hit_objects,
        x.one_hit_objects,
        e.max_working_set,
        x.max_working_set
    );
    assert!(s.weight >= 8 && s.sampled_keys <= 4096, "{s:?}");
    assert_eq!(s.rate, 1.0 / s.weight as f64);
    // Figures over requests stay exact.
    assert_eq!(e.requests, x.requests);
    assert_eq!(e.request_bytes, x.request_bytes);
    assert_eq!(e.ops, x.ops);
    assert_eq!(est.qps, exact.qps);
    // Per-key figures are estimates within a few per cent.
    let close = |a: f64, b: f64, tol: f64, what: &str| {
        assert!((a - b).abs() <= tol * b.abs(), "{what}: {a} against {b}");
    };
    close(e.objects as f64, x.objects as f64, 0.1, "objects");
    close(
        e.object_bytes as f64,
        x.object_bytes as f64,
        0.15,
        "object bytes",
    );
    close(
        e.mean_stack_distance,
        x.mean_stack_distance,
        0.15,
        "mean stack distance",
    );
    close(e.reuses as f64, x.reuses as f64, 0.1, "reuses");
    close(
        e.max_working_set as f64,
        x.max_working_set as f64,
        0.15,
        "working set",
    );
    close(
        e.one_hit_objects as f64,
        x.one_hit_objects as f64,
        0.15,
        "one-hit objects",
    );
    close(
        e.zipf_alpha.expect("a fit"),
        x.zipf_alpha.expect("a fit"),
        0.1,
        "Zipf alpha",
    );
    for b in [8, 10, 12, 14] {
        let (pe, px) = (
            below(&est.stack_distance, b),
            below(&exact.stack_distance, b),
        );
        assert!(
            (pe - px).abs() < 0.03,
            "LRU hits below 2^{b}: {pe} against {px}"
        );
    }
    // The most requested keys: Misra–Gries counts at most `top_error_requests` low.
    assert_eq!(e.top_frequencies.len(), x.top_frequencies.len());
    for (got, want) in e.top_frequencies.iter().zip(&x.top_frequencies) {
        assert!(
            got <= want && got + s.top_error_requests >= *want,
            "{got} against {want} (error bound {})",
            s.top_error_requests
        );
    }
    assert_eq!(est.top_keys[0].1, exact.top_keys[0].1, "the hottest key");
    // The output says so.
    let dir = tempfile::tempdir().unwrap();
    est.write(dir.path(), true).unwrap();
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    assert!(summary.contains("\"sampling\""), "{summary}");
    assert!(summary.contains("spatial key sampling"), "{summary}");
    let page = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(page.contains("Estimated:"));
    let dir = tempfile::tempdir().unwrap();
    exact.write(dir.path(), true).unwrap();
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    assert!(
        !summary.contains("sampling"),
        "an exact analysis says nothing of it"
    );
}

#[test]
fn below_max_keys_the_analysis_is_the_exact_one() {
    let recs = skewed_trace(50_000, 3_000, 5);
    let exact = analyze_records(
        &recs,
        &AnalyzeOptions {
            max_keys: None,
            ..AnalyzeOptions::default()
        },
    );
    let bounded = analyze_records(
        &recs,
        &AnalyzeOptions {
            max_keys: Some(exact.summary.objects as usize),
            ..AnalyzeOptions::default()
        },
    );
    assert_eq!(bounded.summary, exact.summary);
    assert_eq!(bounded.popularity, exact.popularity);
    assert_eq!(bounded.stack_distance, exact.stack_distance);
}

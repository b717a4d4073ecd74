//! Properties every correct simulator has, whatever the policy.

use kvlab_cachesim::{
    simulate, simulate_many, LoadOptions, Mode, PolicySpec, SimError, SimOptions, SimTrace,
};
use kvlab_trace::{Op, TraceRecord};

use crate::oracle;

fn traces() -> Vec<(&'static str, SimTrace)> {
    vec![
        (
            "cloudPhysicsIO",
            oracle::load(&oracle::data(
                "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
            )),
        ),
        (
            "adapt_size",
            oracle::load(&oracle::data(
                "derived/adapt_size_request.oracleGeneral.bin",
            )),
        ),
    ]
}

fn obj() -> SimOptions {
    SimOptions::default()
}

#[test]
fn belady_misses_no_more_than_any_policy_in_object_mode() {
    for (name, t) in traces() {
        let n = t.n_objects() as u64;
        let sizes = [n / 200, n / 20, n / 5];
        let mut jobs = Vec::new();
        for &s in &sizes {
            for p in PolicySpec::all() {
                jobs.push((p, s));
            }
        }
        let results = simulate_many(&t, &jobs, obj(), 0);
        for &s in &sizes {
            let at: Vec<_> = results
                .iter()
                .filter_map(|r| r.as_ref().ok())
                .filter(|r| r.cache_size == s)
                .collect();
            let belady = at
                .iter()
                .find(|r| r.policy == "Belady")
                .expect("Belady ran");
            for r in &at {
                assert!(
                    belady.misses <= r.misses,
                    "{name} at {s}: Belady {} > {} {}",
                    belady.misses,
                    r.policy,
                    r.misses
                );
            }
        }
    }
}

#[test]
fn lru_misses_never_grow_with_the_cache() {
    for (name, t) in traces() {
        for mode in [Mode::Object, Mode::Byte] {
            let ws = t.working_set(mode);
            let sizes: Vec<u64> = (1..=40).map(|k| (ws * k / 40).max(1)).collect();
            let jobs: Vec<_> = sizes.iter().map(|&s| (PolicySpec::Lru, s)).collect();
            let opts = SimOptions {
                mode,
                ..SimOptions::default()
            };
            let misses: Vec<u64> = simulate_many(&t, &jobs, opts, 0)
                .into_iter()
                .map(|r| r.expect("LRU runs").misses)
                .collect();
            for w in misses.windows(2) {
                assert!(w[0] >= w[1], "{name} {mode:?}: LRU misses rose: {misses:?}");
            }
        }
    }
}

#[test]
fn a_cache_holding_the_working_set_misses_each_object_once() {
    for (name, t) in traces() {
        let distinct = t.n_objects() as u64;
        // LIRS keeps 1% of the cache for HIR objects and evicts them when that share is
        // full, even with room left: it is left out (libCacheSim's does the same).
        for p in PolicySpec::all()
            .into_iter()
            .filter(|p| *p != PolicySpec::Lirs)
        {
            let r = simulate(&t, &p, distinct, obj()).expect("runs");
            assert_eq!(
                r.misses, distinct,
                "{name} {p} at the working set (objects)"
            );
        }
        let bytes = t.working_set(Mode::Byte);
        let byte_mode = SimOptions {
            mode: Mode::Byte,
            ..SimOptions::default()
        };
        for p in [
            "LRU", "FIFO", "Clock", "Sieve", "LFU", "S3FIFO", "ARC", "GDSF", "LFUDA", "Belady",
        ] {
            let spec: PolicySpec = p.parse().expect("parses");
            let r = simulate(&t, &spec, bytes, byte_mode).expect("runs");
            assert_eq!(r.misses, distinct, "{name} {p} at the working set (bytes)");
        }
    }
}

#[test]
fn an_object_larger_than_the_cache_misses_and_is_not_admitted() {
    let recs = [(1, 10), (2, 100), (1, 10), (2, 100)].map(|(id, size)| {
        Ok::<_, SimError>(TraceRecord {
            id,
            value_size: size,
            next_access: -1,
            batch_len: 1,
            ..TraceRecord::default()
        })
    });
    let t = SimTrace::from_records(recs, LoadOptions::default()).expect("loads");
    let opts = SimOptions {
        mode: Mode::Byte,
        ..SimOptions::default()
    };
    for p in PolicySpec::all() {
        let r = simulate(&t, &p, 50, opts).expect("runs");
        // Object 2 never fits. Object 1 fits the cache, though not every policy admits it
        // (S3FIFO's small FIFO is 5 bytes, LIRS's HIR share 1 byte, W-TinyLFU's window 0).
        let admits_1 = !matches!(
            p.name().as_str(),
            "S3FIFO" | "LIRS" | "WTinyLFU" | "WTinyLFU-doorkeeper"
        );
        let want = if admits_1 { 3 } else { 4 };
        assert_eq!(r.misses, want, "{p}: object 2 never fits");
    }
}

#[test]
fn zero_size_requests_are_skipped_and_counted_unless_asked_otherwise() {
    let recs = || {
        [(1, 0), (1, 5), (2, 0), (1, 5)].map(|(id, size)| {
            Ok::<_, SimError>(TraceRecord {
                id,
                value_size: size,
                next_access: -1,
                batch_len: 1,
                ..TraceRecord::default()
            })
        })
    };
    let t = SimTrace::from_records(recs(), LoadOptions::default()).expect("loads");
    assert_eq!((t.len(), t.skipped_zero_size(), t.n_objects()), (2, 2, 1));
    let keep = LoadOptions {
        skip_zero_size: false,
        ..LoadOptions::default()
    };
    let t = SimTrace::from_records(recs(), keep).expect("loads");
    assert_eq!((t.len(), t.skipped_zero_size(), t.n_objects()), (4, 0, 2));
}

#[test]
fn op_aware_mode_deletes_and_sets_without_counting_them() {
    let recs = [
        (1, Op::Set),
        (1, Op::Get),
        (1, Op::Delete),
        (1, Op::Get),
        (2, Op::Get),
    ]
    .map(|(id, op)| {
        Ok::<_, SimError>(TraceRecord {
            id,
            op,
            value_size: 1,
            next_access: -1,
            batch_len: 1,
            ..TraceRecord::default()
        })
    });
    let t = SimTrace::from_records(recs, LoadOptions::default()).expect("loads");
    let aware = SimOptions {
        op_aware: true,
        ..SimOptions::default()
    };
    for p in PolicySpec::all() {
        let Ok(r) = simulate(&t, &p, 100, aware) else {
            continue;
        };
        // Set 1 (not counted), get 1 hits, delete 1, get 1 misses, get 2 misses.
        assert_eq!((r.requests, r.misses), (3, 2), "{p} op-aware");
        let r = simulate(&t, &p, 100, obj()).expect("runs");
        // Every op a lookup: 1 misses once, then hits; 2 misses.
        assert_eq!((r.requests, r.misses), (5, 2), "{p} default mode");
    }
}

#[test]
fn computed_next_access_equals_the_traces_own() {
    // oracleGeneral carries next-access times; the pre-pass must give Belady the same
    // order, hence the same misses.
    let path = oracle::data("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    let own = oracle::load(&path);
    let computed = SimTrace::from_records(
        oracle::records(&path).into_iter().map(Ok::<_, SimError>),
        LoadOptions::default(),
    )
    .expect("loads");
    for mode in [Mode::Object, Mode::Byte] {
        let opts = SimOptions {
            mode,
            ..SimOptions::default()
        };
        let size = own.working_set(mode) / 10;
        let a = simulate(&own, &PolicySpec::Belady, size, opts).expect("runs");
        let b = simulate(&computed, &PolicySpec::Belady, size, opts).expect("runs");
        assert_eq!(a.misses, b.misses, "{mode:?}");
    }
}

#[test]
fn sampled_lru_is_reproducible_and_close_to_lru() {
    let t = oracle::load(&oracle::data(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    ));
    let size = t.n_objects() as u64 / 10;
    let s: PolicySpec = "SampledLRU:samples=5,seed=7".parse().expect("parses");
    let a = simulate(&t, &s, size, obj()).expect("runs");
    let b = simulate(&t, &s, size, obj()).expect("runs");
    assert_eq!(a.misses, b.misses, "same seed, same result");
    let lru = simulate(&t, &PolicySpec::Lru, size, obj()).expect("runs");
    let rel = (a.misses as f64 - lru.misses as f64).abs() / lru.misses as f64;
    assert!(
        rel < 0.05,
        "sampled LRU within 5% of LRU: {} vs {}",
        a.misses,
        lru.misses
    );
}

#[test]
fn every_policy_survives_tiny_and_odd_capacities() {
    // Debug builds check overflow and bounds: any broken invariant at the edges panics.
    let t = oracle::load(&oracle::data(
        "derived/adapt_size_request.oracleGeneral.bin",
    ));
    let max = t.sizes().iter().copied().max().map_or(1, u64::from);
    for p in PolicySpec::all() {
        for size in [1, 2, 3, 7, 10, 11, 19, 20, 99, 100, 101] {
            if let Ok(r) = simulate(&t, &p, size, obj()) {
                assert!(r.misses <= r.requests, "{p} at {size}");
                assert!(
                    r.misses >= t.n_objects() as u64,
                    "{p} at {size}: cold misses count"
                );
            }
        }
        let byte_mode = SimOptions {
            mode: Mode::Byte,
            ..SimOptions::default()
        };
        for size in [1, 512, max - 1, max, max + 1, 10 * max] {
            if let Ok(r) = simulate(&t, &p, size, byte_mode) {
                assert!(r.misses <= r.requests, "{p} at {size} bytes");
            }
        }
    }
}

#[test]
fn a_trace_without_sizes_counts_bytes_as_objects_as_libcachesim_does() {
    // libCacheSim's plain-text reader sets every object's size to 1, so its byte miss
    // ratio equals its miss ratio: libcachesim 0.3.5 (PyPI) reading cloudPhysicsIO.txt
    // (`TraceType.PLAIN_TXT_TRACE`), `LRU(cache_size=489).process_trace` returns
    // (0.8379584…, 0.8379584…) = 95420 of 113872 requests, both ratios.
    let t = oracle::load(&oracle::data("libcachesim/cloudPhysicsIO.txt"));
    for mode in [Mode::Object, Mode::Byte] {
        let opts = SimOptions {
            mode,
            ..SimOptions::default()
        };
        let r = simulate(&t, &PolicySpec::Lru, 489, opts).expect("runs");
        assert_eq!((r.misses, r.byte_misses), (95420, 95420), "{mode:?}");
        assert_eq!(r.byte_miss_ratio, r.miss_ratio, "{mode:?}");
    }
}

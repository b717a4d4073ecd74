//! Miss-ratio curves against simulation.

use kvlab_cachesim::mrc::{lru_stack_distances, shards_fixed_rate, shards_fixed_size};
use kvlab_cachesim::{simulate_many, Mode, PolicySpec, SimOptions, SimTrace};

use crate::oracle;

fn traces() -> Vec<SimTrace> {
    vec![
        oracle::load(&oracle::data(
            "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
        )),
        oracle::load(&oracle::data(
            "derived/adapt_size_request.oracleGeneral.bin",
        )),
    ]
}

fn lru_misses(t: &SimTrace, sizes: &[u64], mode: Mode) -> Vec<u64> {
    lru_runs(t, sizes, mode)
        .into_iter()
        .map(|r| r.misses)
        .collect()
}

fn lru_runs(t: &SimTrace, sizes: &[u64], mode: Mode) -> Vec<kvlab_cachesim::SimResult> {
    let jobs: Vec<_> = sizes.iter().map(|&s| (PolicySpec::Lru, s)).collect();
    let opts = SimOptions {
        mode,
        ..SimOptions::default()
    };
    simulate_many(t, &jobs, opts, 0)
        .into_iter()
        .map(|r| r.expect("LRU runs"))
        .collect()
}

#[test]
fn curve_rows_equal_lru_result_rows() {
    let t = oracle::load(&oracle::data(
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    ));
    let n = t.n_objects() as u64;
    let sizes: Vec<u64> = (1..=10).map(|k| n * k / 10).collect();
    let rows = lru_stack_distances(&t, Mode::Object).results(&sizes);
    for (row, sim) in rows.iter().zip(lru_runs(&t, &sizes, Mode::Object)) {
        assert_eq!(
            (row.misses, row.byte_misses, row.requests),
            (sim.misses, sim.byte_misses, sim.requests),
            "at {}",
            row.cache_size
        );
        assert_eq!((row.policy.as_str(), row.mode), ("LRU", Mode::Object));
    }
}

#[test]
fn the_exact_curve_equals_lru_simulation_at_every_size() {
    for t in traces() {
        let n = t.n_objects() as u64;
        let sizes: Vec<u64> = (1..=25)
            .map(|k| (n * k / 25).max(1))
            .chain([1, 2, 3])
            .collect();
        let m = lru_stack_distances(&t, Mode::Object);
        let sim = lru_misses(&t, &sizes, Mode::Object);
        for (s, want) in sizes.iter().zip(sim) {
            assert_eq!(m.misses(*s), want as f64, "object mode at {s}");
        }
        // Byte mode: exact once no object is larger than the cache.
        let max = t.sizes().iter().copied().max().map_or(1, u64::from);
        let ws = t.working_set(Mode::Byte);
        let sizes: Vec<u64> = (1..=25).map(|k| (ws * k / 25).max(max)).collect();
        let m = lru_stack_distances(&t, Mode::Byte);
        let sim = lru_misses(&t, &sizes, Mode::Byte);
        for (s, want) in sizes.iter().zip(sim) {
            assert_eq!(m.misses(*s), want as f64, "byte mode at {s}");
        }
    }
}

fn mean_abs_error(t: &SimTrace, est: &kvlab_cachesim::mrc::Mrc, mode: Mode) -> f64 {
    let exact = lru_stack_distances(t, mode);
    let ws = t.working_set(mode);
    let sizes: Vec<u64> = (1..=50).map(|k| (ws * k / 50).max(1)).collect();
    sizes
        .iter()
        .map(|&s| (exact.miss_ratio(s) - est.miss_ratio(s)).abs())
        .sum::<f64>()
        / sizes.len() as f64
}

#[test]
fn shards_estimates_stay_close_to_the_exact_curve() {
    for t in traces() {
        for mode in [Mode::Object, Mode::Byte] {
            let full = shards_fixed_rate(&t, mode, 1.0);
            assert!(mean_abs_error(&t, &full, mode) < 1e-9, "rate 1 is exact");
            for rate in [0.001, 0.01, 0.1] {
                let e = mean_abs_error(&t, &shards_fixed_rate(&t, mode, rate), mode);
                eprintln!(
                    "{mode:?} {} requests: SHARDS fixed rate {rate}: MAE {e:.4}",
                    t.len()
                );
            }
            for size in [256, 1024, 8192] {
                let e = mean_abs_error(&t, &shards_fixed_size(&t, mode, size), mode);
                eprintln!(
                    "{mode:?} {} requests: SHARDS fixed size {size}: MAE {e:.4}",
                    t.len()
                );
            }
            let r = shards_fixed_rate(&t, mode, 0.1);
            let e = mean_abs_error(&t, &r, mode);
            assert!(e < 0.02, "{mode:?} fixed rate 0.1: mean abs error {e}");
            let s = shards_fixed_size(&t, mode, 8192);
            let e = mean_abs_error(&t, &s, mode);
            assert!(e < 0.02, "{mode:?} fixed size 8192: mean abs error {e}");
        }
    }
}

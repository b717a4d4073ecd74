//! Cache workloads end to end: CacheBench's production-derived configs against the
//! in-process caches, and hit ratios that move the way the cache and the workload say.

use std::path::PathBuf;
use std::process::Output;

use crate::common;
use common::files::shared_data;
use common::report_value;

/// kvlab with `args`, quietly and with seed 7.
fn kvlab(args: &[&str]) -> Output {
    common::kvlab(&[args, &["--progress", "never", "--seed", "7"]].concat())
}

/// The `[CACHE], NAME, value` line of a report.
fn cache_line(o: &Output, name: &str) -> f64 {
    let (stdout, stderr) = common::text(o);
    assert!(o.status.success(), "{stderr}");
    report_value(&stdout, "CACHE", name)
        .unwrap_or_else(|| panic!("no [CACHE], {name} in {stdout}"))
        .trim()
        .parse()
        .unwrap()
}

/// CacheLib's hit-ratio configs, shipped beside the project (`shared/data/cachebench`).
fn cachebench_configs() -> Vec<PathBuf> {
    let dir = shared_data("cachebench");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("note: {} not found; skipping", dir.display());
        return Vec::new();
    };
    let mut configs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path().join("config.json")))
        .filter(|p| p.is_file())
        .collect();
    configs.sort();
    configs
}

#[test]
fn every_cachebench_config_runs_scaled_down_on_the_memory_and_the_hybrid_cache() {
    let configs = cachebench_configs();
    for config in &configs {
        let config = config.to_str().unwrap();
        let scale = [
            "-p",
            "numKeys=20000",
            "-p",
            "numOps=3000",
            "-p",
            "numThreads=2",
        ];
        let mut args = vec!["run", "--cachebench", config];
        args.extend(scale);
        args.extend(["--db", "moka", "--cache-size", "8MiB"]);
        let o = kvlab(&args);
        let hit = cache_line(&o, "HitRatio(%)");
        assert!((0.0..=100.0).contains(&hit), "{config}: {hit}");
        assert!(cache_line(&o, "Gets",) > 0.0, "{config}");

        let disk = tempfile::tempdir().unwrap();
        let mut args = vec!["run", "--cachebench", config];
        args.extend(scale);
        let path = disk.path().to_str().unwrap();
        args.extend([
            "--db",
            "foyer",
            "--cache-size",
            "2MiB",
            "--disk-path",
            path,
            "--disk-size",
            "64MiB",
        ]);
        let o = kvlab(&args);
        let total = cache_line(&o, "HitRatio(%)");
        let dram = cache_line(&o, "DramHitRatio(%)");
        let disk_hits = cache_line(&o, "DiskHitRatio(%)");
        assert!(
            (dram + disk_hits - total).abs() < 0.5,
            "{config}: DRAM {dram} + disk {disk_hits} != {total}"
        );
    }
}

fn moka_hit_ratio(cache_size: &str, theta: &str) -> f64 {
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/cache/kv-small-readonly",
        "-p",
        "cache.data_size=8MiB",
        "-p",
        "cache.operations=60000",
        "-p",
        &format!("cache.zipf_theta={theta}"),
        "--db",
        "moka",
        "--cache-size",
        cache_size,
    ]);
    cache_line(&o, "HitRatio(%)")
}

#[test]
fn the_hit_ratio_falls_as_the_cache_shrinks_and_rises_with_skew() {
    let by_size: Vec<f64> = ["1MiB", "256KiB", "64KiB"]
        .iter()
        .map(|s| moka_hit_ratio(s, "0.99"))
        .collect();
    assert!(
        by_size[0] > by_size[1] && by_size[1] > by_size[2],
        "hit ratio by cache size 1MiB, 256KiB, 64KiB: {by_size:?}"
    );
    let by_theta: Vec<f64> = ["0.5", "0.99", "1.3"]
        .iter()
        .map(|t| moka_hit_ratio("256KiB", t))
        .collect();
    assert!(
        by_theta[0] < by_theta[1] && by_theta[1] < by_theta[2],
        "hit ratio by theta 0.5, 0.99, 1.3: {by_theta:?}"
    );
}

//! `kvlab run`/`load --out DIR` sample the store's own statistics into
//! `DIR/monitor/store.csv` (docs/monitoring.md): RocksDB's tickers and properties, a
//! spawned redis-server's `INFO`, and a memcached server given by `--url`'s `stats`.

use crate::common;

use std::path::Path;

use common::files::result_json;
use common::ok;
use common::servers::start;
use kvlab_spawn::ServerKind;

/// The header and rows of a CSV file; an empty cell is `None`.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<Option<f64>>>) {
    let t =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut lines = t.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|c| (!c.is_empty()).then(|| c.parse().unwrap()))
                .collect()
        })
        .collect();
    (header, rows)
}

/// Column `name` of `rows`.
fn column(header: &[String], rows: &[Vec<Option<f64>>], name: &str) -> Vec<Option<f64>> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter().map(|r| r[i]).collect()
}

/// The result document's statistics.
fn stats(dir: &Path) -> serde_json::Value {
    result_json(dir)["store"]["stats"].clone()
}

#[test]
fn rocksdb_load_and_run_sample_tickers_and_properties_every_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let db = db.to_str().unwrap();
    let load = tmp.path().join("load");
    let run = tmp.path().join("run");
    let common = [
        "--db",
        "rocksdb",
        "--path",
        db,
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=20000",
        "--progress",
        "never",
        "--interval",
        "500ms",
    ];
    let mut args = vec!["load", "--out", load.to_str().unwrap()];
    args.extend(common);
    ok(&args);
    let mut args = vec![
        "run",
        "--out",
        run.to_str().unwrap(),
        "-p",
        "operationcount=0",
        "--duration",
        "2s",
    ];
    args.extend(common);
    ok(&args);

    // The load wrote every key.
    let (h, rows) = read_csv(&load.join("monitor/store.csv"));
    let last = rows.last().expect("a row");
    let at = |name: &str| last[h.iter().position(|c| c == name).unwrap()].unwrap();
    assert_eq!(at("keys_written"), 20_000.0, "{h:?} {last:?}");

    let (h, rows) = read_csv(&run.join("monitor/store.csv"));
    // The documented columns, in order.
    for (i, name) in [
        "time_s",
        "block_cache_hit",
        "block_cache_miss",
        "block_cache_data_hit",
        "block_cache_data_miss",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(h[i], *name, "{h:?}");
    }
    for name in [
        "memtable_hit",
        "memtable_miss",
        "bytes_read",
        "bytes_written",
        "keys_read",
        "keys_written",
        "compaction_read_bytes",
        "compaction_write_bytes",
        "flush_write_bytes",
        "wal_bytes",
        "stall_micros",
        "estimate_num_keys",
        "total_sst_files_size_bytes",
        "live_sst_files_size_bytes",
        "block_cache_usage_bytes",
        "block_cache_capacity_bytes",
        "memtables_size_bytes",
        "pending_compaction_bytes",
        "running_compactions",
        "files_at_level0",
    ] {
        assert!(h.iter().any(|c| c == name), "no {name} in {h:?}");
    }
    // 2 s at 500 ms: four rows (and perhaps a short last one), every cell filled.
    assert!((4..=5).contains(&rows.len()), "{rows:?}");
    assert!(rows.iter().flatten().all(Option::is_some), "{rows:?}");
    // Reads only: the key count stays at the records loaded (an estimate), the block
    // cache fills (8 MiB by default, below the data) and reads grow every interval.
    for keys in column(&h, &rows, "estimate_num_keys") {
        let keys = keys.unwrap();
        assert!((18_000.0..=22_000.0).contains(&keys), "{keys}");
    }
    let usage = column(&h, &rows, "block_cache_usage_bytes");
    let capacity = column(&h, &rows, "block_cache_capacity_bytes");
    assert_eq!(capacity[0], Some(8.0 * 1024.0 * 1024.0));
    let last_usage = usage.last().unwrap().unwrap();
    assert!(
        last_usage > 1e6 && last_usage <= capacity[0].unwrap() * 1.1,
        "{usage:?}"
    );
    let reads = column(&h, &rows, "keys_read");
    assert!(reads[0].unwrap() > 0.0, "{reads:?}");
    assert!(reads.windows(2).all(|w| w[1] >= w[0]), "{reads:?}");
    assert_eq!(
        column(&h, &rows, "keys_written").last().unwrap(),
        &Some(0.0)
    );
    // The result's statistics summarize the series.
    let s = stats(&run);
    let max = s["monitor.store.block_cache_usage_bytes.max"]
        .as_f64()
        .unwrap();
    assert!((max - last_usage).abs() <= 1e6, "{max} vs {usage:?}");
    assert!(s["monitor.store.estimate_num_keys.mean"].as_f64().unwrap() > 18_000.0);
    assert!(run.join("monitor/dbsize.csv").is_file());
}

#[test]
fn a_spawned_redis_server_is_sampled_over_its_own_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    ok(&[
        "run",
        "--db",
        "redis",
        "--spawn",
        "maxmemory=64mb",
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "recordcount=2000",
        "-p",
        "operationcount=0",
        "--duration",
        "2s",
        "--interval",
        "500ms",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (h, rows) = read_csv(&out.join("monitor/store.csv"));
    let mut expected = vec!["time_s".to_string()];
    expected.extend(kvlab_monitor::REDIS_STATS.iter().map(|s| s.to_string()));
    assert_eq!(h, expected);
    assert!(rows.len() >= 4, "{rows:?}");
    // The server held the records kvlab loaded into it first (2000 hashes and the
    // `_indices` sorted set), and reads hit them.
    let keys = column(&h, &rows, "keys");
    assert!(keys.iter().all(|k| *k == Some(2001.0)), "{keys:?}");
    assert_eq!(
        column(&h, &rows, "maxmemory")[0],
        Some(64.0 * 1024.0 * 1024.0)
    );
    let hits = column(&h, &rows, "keyspace_hits");
    assert!(hits[0].unwrap() > 0.0, "{hits:?}");
    assert!(hits.windows(2).all(|w| w[1] >= w[0]), "{hits:?}");
    assert_eq!(column(&h, &rows, "keyspace_misses")[0], Some(0.0));
    assert!(column(&h, &rows, "used_memory")[0].unwrap() > 2000.0 * 1000.0);
    // The spawned server's CPU is in cpu.csv.
    let (h, cpu) = read_csv(&out.join("monitor/cpu.csv"));
    assert!(column(&h, &cpu, "server_cpu_pct")
        .iter()
        .all(Option::is_some));
    assert_eq!(stats(&out)["monitor.store.keys.max"], 2001.0);
}

#[test]
fn a_memcached_url_server_and_the_null_store() {
    let server = start(ServerKind::Memcached, "m=64");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("load");
    let url = server.url();
    ok(&[
        "load",
        "--db",
        "memcached",
        "--url",
        &url,
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=3000",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (h, rows) = read_csv(&out.join("monitor/store.csv"));
    let mut expected = vec!["time_s".to_string()];
    expected.extend(kvlab_monitor::MEMCACHED_STATS.iter().map(|s| s.to_string()));
    assert_eq!(h, expected);
    // The last row is taken after the load: every record is an item.
    let last = rows.last().unwrap();
    assert_eq!(last[1], Some(3000.0), "{rows:?}");
    assert_eq!(
        column(&h, &rows, "limit_maxbytes")[0],
        Some(64.0 * 1024.0 * 1024.0)
    );
    assert!(column(&h, &rows, "evictions")
        .iter()
        .all(|e| *e == Some(0.0)));
    // Without extstore, its columns are empty.
    assert!(column(&h, &rows, "extstore_bytes_written")
        .iter()
        .all(Option::is_none));
    server.stop().unwrap();

    // The null store has no statistics: no store.csv, the other files are there.
    let out = tmp.path().join("null");
    ok(&[
        "run",
        "--db",
        "null",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "operationcount=1000",
        "--progress",
        "never",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(out.join("monitor/cpu.csv").is_file());
    assert!(!out.join("monitor/store.csv").exists());
}

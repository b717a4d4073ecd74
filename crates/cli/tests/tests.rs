//! The `kvlab` binary end to end: every subcommand against real stores and servers
//! (RocksDB, LMDB, WiredTiger, moka, foyer, redis-server, memcached, headless chromium,
//! Prometheus)
//! started on free loopback ports and stopped by PID.

mod common;

mod cache;
mod cli;
mod comparisons;
mod contract;
mod crash;
mod db_bench_compat;
mod exports;
mod failures;
mod faults;
mod fidelity;
mod history;
mod import;
mod live_metrics;
mod memtier_bytes;
mod memtier_commands;
mod memtier_compat;
mod memtier_data;
mod memtier_outputs;
mod merge;
mod merge_refusals;
mod monitor;
mod network;
mod parquet;
mod percentiles;
mod refusals;
mod report;
mod retries;
mod servers;
mod shards;
mod sim;
mod slo;
mod sst_ranges;
mod stalls;
mod suite;
mod suites_failures;
mod traces;
mod transports;
mod value_sizes;

//! kvlab-trace's integration tests, one binary.

mod analyze;
mod common;
mod counts;
mod fuzz_smoke;
mod kvtrace;
mod layouts;
mod lcs_versions;
mod libcachesim;
mod monitor;
#[cfg(feature = "parquet")]
mod parquet;
mod perf;
mod rocksdb;
mod stats_dump;

//! Workload generation: YCSB's key names, constants and frequencies (golden values),
//! memtier-style and cache workloads, imports.

mod common;

mod cache;
mod distributions;
mod fuzz_smoke;
mod import;
mod workload;

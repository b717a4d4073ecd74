#![no_main]
//! Any bytes as a `kvlab memtier` command line (words between NUL bytes): no panics, a
//! workload that keeps its own bounds.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_memtier::fuzzing::args(data);
});

#![no_main]
//! Any bytes as a YCSB histogram file: no panics, draws in range.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_dist::fuzzing::histogram(data);
});

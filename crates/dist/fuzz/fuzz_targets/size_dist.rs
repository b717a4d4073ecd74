#![no_main]
//! Any bytes as a size distribution: no panics, its text form reads back the same, draws
//! in range.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_dist::fuzzing::size_dist(data);
});

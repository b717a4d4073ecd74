#![no_main]
//! Any bytes as a thread-plan file: no panics, errors that name the file and a line
//! within it.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_workload::fuzzing::plan(data);
});

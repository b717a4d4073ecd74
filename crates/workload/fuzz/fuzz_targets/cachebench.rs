#![no_main]
//! Any bytes as a CacheBench JSON config, and its workload built from it: no panics,
//! errors that name the file.

use std::path::Path;

use kvlab_workload::fuzzing;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fuzzing::cachebench(data, Path::new(fuzzing::NAME));
});

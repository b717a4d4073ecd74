#![no_main]
//! Any bytes as a YCSB property file, and the workload it selects built from it: no
//! panics, errors that name the file and a line within it.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_workload::fuzzing::properties(data);
});

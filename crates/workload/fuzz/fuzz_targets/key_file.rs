#![no_main]
//! Any bytes as a key file: no panics, escaped keys that read back the same.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_workload::fuzzing::key_file(data);
});

#![no_main]
//! Any bytes as a `result.json`: no panics, and a document that reads writes out and
//! reads back equal.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_report::fuzzing::result_json(data);
});

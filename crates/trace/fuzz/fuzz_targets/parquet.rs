#![no_main]
//! Any bytes as a Parquet trace export: no panics, no record after the end, errors that
//! name the trace.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_trace::fuzzing::parquet(data);
});

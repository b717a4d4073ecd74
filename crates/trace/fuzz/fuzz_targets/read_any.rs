#![no_main]
//! Any bytes as a trace of any format (the first byte picks it, or none to tell it from
//! the bytes): no panics, no record after the end, errors that name the trace and say
//! what was expected, offsets within the input.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_trace::fuzzing::read_any(data);
});

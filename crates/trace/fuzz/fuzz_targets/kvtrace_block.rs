#![no_main]
//! Any bytes as a raw kvtrace block (the first byte picks the layout version): no panics,
//! and the same records (or a failure) when the block is read compressed in a whole
//! `.kvtrace`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_trace::fuzzing::kvtrace_block(data);
});

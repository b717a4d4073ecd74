#![no_main]
//! Any bytes as a `latency.hlog` interval log: no panics, no allocation a length field
//! asks for before its bytes are there, errors that name the entry.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_report::fuzzing::latency_log(data);
});

#![no_main]
//! RESP parsing on arbitrary bytes: no panics, `skip` agrees with `parse`, complete frames
//! have incomplete prefixes, and re-encoded frames parse the same.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_proto::fuzzing::resp_parse(data);
});

#![no_main]
//! Any bytes as a server URL of every scheme: no panics, errors that name the URL and
//! never show its password, parsed URLs whose text parses back the same.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_net::fuzzing::server_url(data);
});

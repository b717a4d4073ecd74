#![no_main]
//! memcached binary protocol responses on arbitrary bytes: no panics, complete packets
//! have incomplete prefixes, and written-back responses parse the same.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_proto::fuzzing::memcache_binary_parse(data);
});

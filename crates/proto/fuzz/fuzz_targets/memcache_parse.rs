#![no_main]
//! memcached text replies, meta replies and requests on arbitrary bytes: no panics,
//! complete units have incomplete prefixes, and written-back replies parse the same.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_proto::fuzzing::memcache_parse(data);
});

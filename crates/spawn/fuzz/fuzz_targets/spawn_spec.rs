#![no_main]
//! Any bytes as `--spawn` settings of redis-server and of memcached: no panics, a spec
//! written back parses the same.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_spawn::fuzzing::spawn_spec(data);
});

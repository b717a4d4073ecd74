#![no_main]
//! Any bytes as a `--command` line: no panics, words that split the same quoted again.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_memtier::fuzzing::command(data);
});

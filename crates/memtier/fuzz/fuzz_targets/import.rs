#![no_main]
//! Any bytes as a `--data-import` file: no panics, errors on a line of the file, items
//! that read back the same written as memtier writes them.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_memtier::fuzzing::import(data);
});

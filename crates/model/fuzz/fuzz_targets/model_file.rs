#![no_main]
//! Any bytes as a model file (`kvlab model` TOML): no panics, errors on a line of the file,
//! a model that writes out and reads back equal.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kvlab_model::fuzzing::model_file(data);
});

//! kvlab-model's tests: one binary.

mod fit;
mod fuzz_smoke;
mod model;

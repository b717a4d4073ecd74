//! kvlab-model's tests: one binary.

mod fit;
mod model;

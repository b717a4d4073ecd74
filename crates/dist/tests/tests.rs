//! kvlab-dist's integration tests, one binary.

mod fuzz_smoke;
mod mixgraph;

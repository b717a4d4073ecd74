//! kvlab-trace's integration tests, one binary.
mod analyze;

//! kvlab-trace's integration tests, one binary.

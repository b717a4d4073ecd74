//! kvlab-dist's integration tests, one binary.

mod mixgraph;

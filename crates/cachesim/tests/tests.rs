//! kvlab-cachesim's integration tests: miss counts against libCacheSim, invariants, curves.

mod invariants;
mod libcachesim_suite;
mod mrc;
mod oracle;
mod pinned;
mod stream;

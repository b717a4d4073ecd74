//! The embedded stores against the real engines: the conformance suite, and each
//! engine's own options, statistics and failures.

mod support;

mod conformance;
mod foyer;
mod lmdb;
mod moka;
mod rocksdb;
mod wiredtiger;

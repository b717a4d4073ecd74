//! kvlab's stores: one module per target, each behind a cargo feature where it pulls in
//! a native library.
//!
//! Every store implements [`kvlab_core::Store`]; its options arrive as `name=value`
//! pairs ([`StoreOptions`], e.g. `rocksdb.block_cache_size=64MiB` from a property file or
//! `-p`), are validated when the store opens — an unknown or malformed option is an
//! error naming the option and the valid choices — and are echoed back by
//! [`kvlab_core::Store::options`] with every default filled in, for the result document.
//!
//! - [`null::NullStore`]: accepts everything and stores nothing, to measure kvlab's
//!   own overhead.
//! - [`rocksdb::RocksDbStore`] (feature `rocksdb`): an embedded RocksDB database.
//! - `lmdb::LmdbStore` (feature `lmdb`): an embedded LMDB environment.
//! - `wiredtiger::WiredTigerStore` (feature `wiredtiger`): an embedded WiredTiger
//!   database, linked against the system library (Debian's `libwiredtiger-dev`).
//! - [`moka::MokaStore`] (feature `moka`): an in-process, in-memory W-TinyLFU cache.
//! - [`foyer::FoyerStore`] (feature `foyer`): an in-process hybrid cache, DRAM in front
//!   of a disk tier, reporting DRAM hits, disk hits and misses apart.
//!
//! The embedded engines (rocksdb, lmdb, wiredtiger, moka) implement only their
//! primitives ([`kvlab_core::inline::Engine`]); the shared adapter turns requests into
//! them. What a store can do is in its [`kvlab_core::Capabilities`], checked against a
//! workload's needs before a phase starts.

#![warn(missing_docs)]

pub mod conformance;
#[cfg(feature = "foyer")]
pub mod foyer;
#[cfg(feature = "lmdb")]
pub mod lmdb;
#[cfg(feature = "moka")]
pub mod moka;
pub mod null;

#[cfg(feature = "rocksdb")]
pub mod rocksdb;
#[cfg(any(feature = "moka", feature = "foyer"))]
mod tally;
#[cfg(feature = "wiredtiger")]
pub mod wiredtiger;

pub use kvlab_core::StoreOptions;

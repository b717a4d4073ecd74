//! kvlab's network stores: servers reached over TCP (or TLS), driven through pipelined
//! connections.
//!
//! - [`redis::RedisStore`]: any RESP server or a Redis Cluster, with the `hash` (YCSB)
//!   or `string` (memtier) data model.
//! - [`memcached::MemcachedStore`]: one or several memcached servers (ketama), text or
//!   meta protocol.
//!
//! A store checks at open that its server answers (and that the credentials work), so a
//! wrong address fails before any work starts. Each session is one connection per
//! server; [`kvlab_core::Session::prepare`] connects it before anything is timed, a
//! lost connection is remade with exponential back-off, and every failure is reported
//! per request as a [`kvlab_core::StoreError`] of kind `connection`, `timeout` or
//! `protocol`. Sessions need a tokio runtime (`Capabilities::needs_runtime`).

#![warn(missing_docs)]

mod conn;
pub mod memcached;
pub mod redis;
pub mod url;

pub use conn::TlsVersion;
pub use url::ServerUrl;

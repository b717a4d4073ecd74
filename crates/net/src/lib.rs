//! kvlab's network stores: servers reached over TCP (or TLS) or a UNIX domain socket,
//! driven through pipelined connections.
//!
//! - [`redis::RedisStore`]: any RESP server or a Redis Cluster, with the `hash` (YCSB)
//!   or `string` (memtier) data model.
//! - [`memcached::MemcachedStore`]: one or several memcached servers (ketama), text,
//!   meta or binary protocol.
//!
//! Server addresses are [`ServerUrl`]s (`redis://…`, `redis+unix:///path`,
//! `memcached://a,b`, `memcached+unix:///path`); host names resolve within an
//! [`AddressFamily`]. With a reconnect interval (memtier's `--reconnect-interval`) a
//! session closes its connections every N requests and opens them again.
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
pub use url::{AddressFamily, ServerUrl};

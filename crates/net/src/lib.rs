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
//! `protocol` (a reply that breaks the protocol). A server's error reply is of kind
//! `server`, or `full` when it says the server is out of memory (Redis `-OOM` under
//! `maxmemory` with `noeviction`, memcached `SERVER_ERROR out of memory`), with the
//! server's own text in the message. Sessions need a tokio runtime
//! (`Capabilities::needs_runtime`).

#![warn(missing_docs)]

mod conn;
#[doc(hidden)]
pub mod fuzzing;
pub mod memcached;
pub mod redis;
pub mod url;

pub use conn::TlsVersion;
pub use url::{AddressFamily, ServerUrl};

use kvlab_core::{StoreError, StoreErrorKind};

/// A server's error reply as a request's error, its text kept verbatim after `server
/// replied: `. A reply that says the server is out of memory — Redis' `OOM command not
/// allowed when used memory > 'maxmemory'` (redis `server.c`, `shared.oomerr`), memcached's
/// `SERVER_ERROR out of memory storing object` (memcached `proto_text.c`) or binary
/// status 0x82 — is [`StoreErrorKind::Full`]; any other is [`StoreErrorKind::Server`].
pub(crate) fn error_reply(text: &str) -> StoreError {
    let lower = text.to_ascii_lowercase();
    let kind = if lower.starts_with("oom ") || lower.contains("out of memory") {
        StoreErrorKind::Full
    } else {
        StoreErrorKind::Server
    };
    StoreError::new(kind, format!("server replied: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_replies_are_server_errors_and_out_of_memory_is_full() {
        let oom = error_reply("OOM command not allowed when used memory > 'maxmemory'.");
        assert_eq!(oom.kind, StoreErrorKind::Full);
        assert!(oom.message.contains("OOM command not allowed"), "{oom}");
        let mc = error_reply("SERVER_ERROR out of memory storing object");
        assert_eq!(mc.kind, StoreErrorKind::Full);
        let wrong = error_reply("WRONGTYPE Operation against a key holding the wrong kind");
        assert_eq!(wrong.kind, StoreErrorKind::Server);
        assert!(wrong.message.ends_with("wrong kind"), "{wrong}");
    }
}

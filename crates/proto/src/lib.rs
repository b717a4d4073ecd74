//! kvlab's sans-IO protocol codecs: Redis RESP2/RESP3 and memcached (text, meta and
//! binary).
//!
//! Nothing here does I/O. A connection owns a write buffer (`Vec<u8>`) and a read buffer;
//! the client appends a pipeline of commands with the encoders, writes the buffer, then
//! parses replies from the front of the read buffer as bytes arrive. Every parser returns
//! `Ok(None)` while the buffer holds only part of a reply, `Ok(Some((reply, consumed)))`
//! once a whole reply is there, and a [`ProtoError`] for malformed input; parsers never
//! panic and never allocate — replies borrow from the read buffer.
//!
//! The main types and how they connect:
//!
//! - [`resp`]: encoders ([`resp::Command`], [`resp::set`], [`resp::get`], …) append commands;
//!   [`resp::parse`] reads a [`resp::Frame`], whose aggregates are lazy [`resp::Aggregate`]
//!   views; [`resp::skip`] only finds a reply's end. Cluster support: [`resp::key_slot`],
//!   [`resp::Redirect`] (from `MOVED`/`ASK` errors) and [`resp::parse_cluster_slots`].
//! - [`memcache`]: text protocol encoders ([`memcache::get`], [`memcache::set`], …) and
//!   [`memcache::parse`], which reads one [`memcache::Reply`] unit (a `VALUE` item, `END`,
//!   `STORED`, …); meta protocol encoders ([`memcache::mg`], [`memcache::ms`], …) and
//!   [`memcache::parse_meta`], which reads a [`memcache::MetaReply`] with its
//!   [`memcache::MetaFlags`]; binary protocol encoders and [`memcache::binary::parse`],
//!   which reads a [`memcache::binary::Response`]; [`memcache::parse_request`] reads commands (for test servers);
//!   [`memcache::Ketama`] picks a server for a key by consistent hashing.
//! - [`stats`]: the Redis `INFO` and memcached `stats` fields kvlab keeps, in one place,
//!   and [`stats::info_fields`], which splits an `INFO` reply's text.
//! - [`ProtoError`]: the one error type, naming the protocol, what was expected, what was
//!   found, and where; [`ErrorKind`] is its variant without fields.
//!
//! Parsing a pipeline of replies as they arrive:
//!
//! ```
//! use kvlab_proto::resp::{self, Frame};
//! let mut read_buf: Vec<u8> = Vec::new();
//! let mut replies = 0;
//! for chunk in [&b"$3\r\nfo"[..], b"o\r\n$-1\r", b"\n"] {
//!     read_buf.extend_from_slice(chunk); // bytes from the socket
//!     let mut pos = 0;
//!     while let Some((frame, used)) = resp::parse(&read_buf[pos..]).unwrap() {
//!         assert!(matches!(frame, Frame::Bulk(_)));
//!         replies += 1;
//!         pos += used;
//!     }
//!     read_buf.drain(..pos);
//! }
//! assert_eq!(replies, 2);
//! ```

#![warn(missing_docs)]

/// Unwraps `Ok(Some(v))` to `v`; returns `Ok(None)` (incomplete) and errors as they are.
macro_rules! ready {
    ($e:expr) => {
        match $e? {
            Some(v) => v,
            None => return Ok(None),
        }
    };
}

mod error;
#[doc(hidden)]
pub mod fuzzing;
mod md5;
pub mod memcache;
mod num;
pub mod resp;
pub mod stats;

pub use error::{ErrorKind, ProtoError, Protocol, Snippet};

//! memcached: text, meta and binary protocol encoding and reply parsing, and ketama
//! hashing.
//!
//! - Text protocol: encoders [`get`], [`get_multi`], [`gets`], [`set`], [`add`],
//!   [`replace`], [`cas`], [`delete`], [`touch`], [`incr`], [`decr`], [`version`],
//!   [`stats`], [`flush_all`]; [`parse`] reads one reply unit ([`Reply`]): a `get` reply is
//!   a sequence of [`Reply::Value`] units ended by [`Reply::End`].
//! - Meta protocol: encoders [`mg`], [`ms`], [`md`], [`mn`] taking [`MetaFlag`]s;
//!   [`parse_meta`] reads one [`MetaReply`], whose returned flags are a borrowed
//!   [`MetaFlags`] with lookups ([`MetaFlags::opaque`], [`MetaFlags::key`], …).
//! - Binary protocol: the [`binary`] module — encoders ([`binary::get`],
//!   [`binary::getkq`], [`binary::set`], [`binary::delete`], [`binary::noop`], …) and
//!   [`binary::parse`], which reads one [`binary::Response`] packet.
//! - [`parse_request`] reads a command of either protocol ([`Request`]), for test servers.
//! - [`Ketama`]: consistent hashing of keys over several servers.
//!
//! Keys are written as given: memcached keys are at most 250 bytes with no whitespace or
//! control characters ([`is_valid_key`]); the encoders do not check, to stay fast.
//!
//! ```
//! use kvlab_proto::memcache::{self, Reply};
//! let mut out = Vec::new();
//! memcache::get_multi(&mut out, &["a", "b"]);
//! assert_eq!(out, b"get a b\r\n");
//! let buf = b"VALUE a 0 2\r\nhi\r\nEND\r\n";
//! let (first, n) = memcache::parse(buf).unwrap().unwrap();
//! assert_eq!(first, Reply::Value { key: b"a", flags: 0, data: b"hi", cas: None });
//! assert_eq!(memcache::parse(&buf[n..]).unwrap(), Some((Reply::End, 5)));
//! ```

pub mod binary;
mod ketama;
mod meta;
mod request;
mod text;

pub use ketama::Ketama;
pub use meta::{
    md, mg, mn, ms, parse_meta, parse_meta_with, MetaFlag, MetaFlags, MetaFlagsIter, MetaReply,
};
pub use request::{parse_request, parse_request_with, KeyList, Request, StoreCommand};
pub use text::{
    add, cas, decr, delete, flush_all, get, get_multi, gets, gets_multi, incr, parse, parse_with,
    replace, set, stats, touch, version, Reply,
};

use crate::error::{ProtoError, Protocol, Snippet};

/// The longest key memcached accepts, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// Whether memcached accepts `key`: 1 to 250 bytes, no whitespace or control characters.
pub fn is_valid_key(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_LEN && key.iter().all(|&b| b > b' ' && b != 0x7f)
}

/// Bounds on what the memcached parsers accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest line, CRLF excluded: a line with no LF within this many bytes (plus 2)
    /// is an error. Default 2048 for replies.
    pub max_line_len: usize,
    /// The largest data block (`VALUE`, `VA`, `set`, `ms`), in bytes. Default 1 GiB,
    /// memcached's largest item size setting.
    pub max_value_len: usize,
}

impl Limits {
    /// The defaults for replies, as documented on each field.
    pub const DEFAULT: Limits = Limits {
        max_line_len: 2048,
        max_value_len: 1 << 30,
    };

    /// The defaults for requests ([`parse_request`]): a 64 KiB line, for long multi-gets.
    pub const REQUEST_DEFAULT: Limits = Limits {
        max_line_len: 64 << 10,
        max_value_len: 1 << 30,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Whether a partial line (no LF yet) can still become one starting with a keyword.
fn plausible(partial: &[u8], keywords: &[&[u8]], digits_ok: bool) -> bool {
    let t = partial.strip_suffix(b"\r").unwrap_or(partial);
    if digits_ok && !t.is_empty() && t.iter().all(u8::is_ascii_digit) {
        return true;
    }
    keywords.iter().any(|kw| {
        if t.len() <= kw.len() {
            kw.starts_with(t)
        } else {
            t.starts_with(kw)
        }
    })
}

/// How a line reader recognises garbage before the line is complete.
struct LineSpec {
    proto: Protocol,
    keywords: &'static [&'static [u8]],
    digits_ok: bool,
    expected: &'static str,
}

/// Reads the line at the start of `buf`: its content (CRLF excluded) and the offset just past
/// its LF.
#[inline]
fn read_line<'a>(
    buf: &'a [u8],
    limits: &Limits,
    spec: &LineSpec,
) -> Result<Option<(&'a [u8], usize)>, ProtoError> {
    let window = &buf[..buf.len().min(limits.max_line_len.saturating_add(2))];
    match memchr::memchr(b'\n', window) {
        Some(nl) => {
            if nl == 0 || buf[nl - 1] != b'\r' {
                return Err(ProtoError::MissingCrlf {
                    proto: spec.proto,
                    after: "a line (LF without CR)",
                    found: b'\n',
                    offset: nl,
                });
            }
            Ok(Some((&buf[..nl - 1], nl + 1)))
        }
        None if window.len() >= limits.max_line_len.saturating_add(2) => {
            Err(ProtoError::LineTooLong {
                proto: spec.proto,
                max: limits.max_line_len,
                offset: 0,
            })
        }
        None if !plausible(window, spec.keywords, spec.digits_ok) => Err(unknown(spec, window)),
        None => Ok(None),
    }
}

fn unknown(spec: &LineSpec, line: &[u8]) -> ProtoError {
    ProtoError::UnknownKeyword {
        proto: spec.proto,
        expected: spec.expected,
        line: Snippet::new(line),
        offset: 0,
    }
}

fn bad_value(proto: Protocol, expected: &'static str, found: &[u8], offset: usize) -> ProtoError {
    ProtoError::BadValue {
        proto,
        expected,
        found: Snippet::new(found),
        offset,
    }
}

/// Reads a `len`-byte data block at `start` followed by CRLF: the data and the offset past
/// the CRLF.
#[inline]
fn read_data<'a>(
    buf: &'a [u8],
    start: usize,
    len: usize,
    proto: Protocol,
    after: &'static str,
) -> Result<Option<(&'a [u8], usize)>, ProtoError> {
    let end = start.saturating_add(len);
    for (i, want) in [(end, b'\r'), (end.saturating_add(1), b'\n')] {
        let Some(&found) = buf.get(i) else {
            return Ok(None);
        };
        if found != want {
            return Err(ProtoError::MissingCrlf {
                proto,
                after,
                found,
                offset: i,
            });
        }
    }
    Ok(Some((&buf[start..end], end + 2)))
}

/// Checks a data length from a header against the limit.
fn check_len(
    len: Option<u64>,
    limits: &Limits,
    proto: Protocol,
    what: &'static str,
    line: &[u8],
) -> Result<usize, ProtoError> {
    let Some(len) = len else {
        return Err(bad_value(proto, what, line, 0));
    };
    if len > limits.max_value_len as u64 {
        return Err(ProtoError::TooLarge {
            proto,
            what: "data length",
            len,
            max: limits.max_value_len as u64,
            offset: 0,
        });
    }
    Ok(len as usize)
}

/// Splits at the first space: the token before it and the rest after it (empty if none).
#[inline]
fn token(s: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b' ', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &[]),
    }
}

/// Appends `<cmd> <key>` (shared by many encoders).
#[inline]
fn put_cmd_key(out: &mut Vec<u8>, cmd: &[u8], key: &[u8]) {
    out.extend_from_slice(cmd);
    out.push(b' ');
    out.extend_from_slice(key);
}

/// Appends ` <n>`.
#[inline]
fn put_sp_u64(out: &mut Vec<u8>, n: u64) {
    out.push(b' ');
    crate::num::put_u64(out, n);
}

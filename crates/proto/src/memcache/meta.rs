//! memcached meta protocol: `mg`, `ms`, `md`, `mn` and their replies.

use std::fmt;

use super::{bad_value, check_len, put_cmd_key, read_data, read_line, token, Limits, LineSpec};
use crate::error::{ProtoError, Protocol};
use crate::num;

const P: Protocol = Protocol::MemcacheMeta;

/// One flag of a meta command.
///
/// Common ones: `mg` — `v` (return the value), `f` (client flags), `k` (key), `t` (TTL
/// left), `c` (CAS), `s` (size), `q` (quiet: no `EN` on a miss), `O<opaque>`, `T<ttl>`
/// (touch); `ms` — `T<ttl>`, `F<flags>`, `C<cas>`, `I` (invalidate), `M<mode>` (`E` add,
/// `A` append, `P` prepend, `R` replace, `S` set), `q` (no `HD` on success); `md` — `q`,
/// `I`, `C<cas>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaFlag<'a> {
    /// A flag alone, like `v`.
    Flag(u8),
    /// A flag and a number, like `T30`.
    Num(u8, u64),
    /// A flag and a token, like `MS` or `O<opaque>`. Tokens must not contain spaces.
    Token(u8, &'a [u8]),
}

fn put_flags(out: &mut Vec<u8>, flags: &[MetaFlag<'_>]) {
    for f in flags {
        out.push(b' ');
        match *f {
            MetaFlag::Flag(c) => out.push(c),
            MetaFlag::Num(c, n) => {
                out.push(c);
                num::put_u64(out, n);
            }
            MetaFlag::Token(c, t) => {
                out.push(c);
                out.extend_from_slice(t);
            }
        }
    }
}

/// `mg <key> <flags>*\r\n` — meta get. Without `v` the reply has no value (`HD` on a hit).
///
/// ```
/// use kvlab_proto::memcache::{mg, MetaFlag};
/// let mut out = Vec::new();
/// mg(&mut out, b"foo", &[MetaFlag::Flag(b'v'), MetaFlag::Flag(b'f'), MetaFlag::Num(b'O', 7)]);
/// assert_eq!(out, b"mg foo v f O7\r\n");
/// ```
#[inline]
pub fn mg(out: &mut Vec<u8>, key: &[u8], flags: &[MetaFlag<'_>]) {
    put_cmd_key(out, b"mg", key);
    put_flags(out, flags);
    out.extend_from_slice(b"\r\n");
}

/// `ms <key> <datalen> <flags>*\r\n<data>\r\n` — meta set.
#[inline]
pub fn ms(out: &mut Vec<u8>, key: &[u8], data: &[u8], flags: &[MetaFlag<'_>]) {
    out.reserve(key.len() + data.len() + 32);
    put_cmd_key(out, b"ms", key);
    out.push(b' ');
    num::put_u64(out, data.len() as u64);
    put_flags(out, flags);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// `md <key> <flags>*\r\n` — meta delete.
pub fn md(out: &mut Vec<u8>, key: &[u8], flags: &[MetaFlag<'_>]) {
    put_cmd_key(out, b"md", key);
    put_flags(out, flags);
    out.extend_from_slice(b"\r\n");
}

/// `mn\r\n` — meta no-op, answered `MN`: ends a pipeline of quiet (`q`) commands, whose
/// successes are not answered.
pub fn mn(out: &mut Vec<u8>) {
    out.extend_from_slice(b"mn\r\n");
}

/// The flags returned on a meta reply line, borrowed: space-separated tokens, each a flag
/// letter followed by an optional value (`O123`, `k foo` is `kfoo`, `f30`, `c4`, `t-1`).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct MetaFlags<'a>(&'a [u8]);

impl<'a> MetaFlags<'a> {
    /// Wraps the flags part of a line (tokens separated by spaces).
    pub fn new(raw: &'a [u8]) -> MetaFlags<'a> {
        MetaFlags(raw)
    }

    /// The flags as received.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// Whether there are no flags.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// Each flag letter and its value (possibly empty), in order.
    pub fn iter(&self) -> MetaFlagsIter<'a> {
        MetaFlagsIter(self.0)
    }

    /// The value of the first flag `flag` (empty for a flag without one), if present.
    pub fn get(&self, flag: u8) -> Option<&'a [u8]> {
        self.iter().find(|&(f, _)| f == flag).map(|(_, v)| v)
    }

    /// Whether flag `flag` is present.
    pub fn has(&self, flag: u8) -> bool {
        self.get(flag).is_some()
    }

    /// The opaque token (`O`), echoed from the request.
    pub fn opaque(&self) -> Option<&'a [u8]> {
        self.get(b'O')
    }

    /// The key (`k`).
    pub fn key(&self) -> Option<&'a [u8]> {
        self.get(b'k')
    }

    /// The CAS value (`c`).
    pub fn cas(&self) -> Option<u64> {
        num::parse_u64(self.get(b'c')?)
    }

    /// The client flags (`f`).
    pub fn client_flags(&self) -> Option<u32> {
        u32::try_from(num::parse_u64(self.get(b'f')?)?).ok()
    }

    /// The remaining time to live in seconds (`t`), -1 for none.
    pub fn ttl(&self) -> Option<i64> {
        num::parse_i64(self.get(b't')?)
    }

    /// The value's size (`s`).
    pub fn size(&self) -> Option<u64> {
        num::parse_u64(self.get(b's')?)
    }
}

impl fmt::Debug for MetaFlags<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MetaFlags({:?})", String::from_utf8_lossy(self.0))
    }
}

impl<'a> IntoIterator for MetaFlags<'a> {
    type Item = (u8, &'a [u8]);
    type IntoIter = MetaFlagsIter<'a>;

    fn into_iter(self) -> MetaFlagsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`MetaFlags`]: `(flag letter, value)`.
#[derive(Debug, Clone)]
pub struct MetaFlagsIter<'a>(&'a [u8]);

impl<'a> Iterator for MetaFlagsIter<'a> {
    type Item = (u8, &'a [u8]);

    fn next(&mut self) -> Option<(u8, &'a [u8])> {
        loop {
            if self.0.is_empty() {
                return None;
            }
            let (tok, rest) = token(self.0);
            self.0 = rest;
            if let Some((&flag, value)) = tok.split_first() {
                return Some((flag, value));
            }
        }
    }
}

/// One meta protocol reply, borrowing from the read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaReply<'a> {
    /// `VA <size> <flags>*\r\n<data>\r\n`: a hit with its value.
    Value {
        /// The value (binary-safe).
        data: &'a [u8],
        /// The returned flags.
        flags: MetaFlags<'a>,
    },
    /// `HD <flags>*`: success without a value (a hit without `v`, a stored `ms`, a deleted
    /// `md`).
    Hit(MetaFlags<'a>),
    /// `EN`: a miss (`mg`).
    Miss(MetaFlags<'a>),
    /// `NF`: not found (`md`, `ma`).
    NotFound(MetaFlags<'a>),
    /// `NS`: not stored (`ms` whose mode condition failed).
    NotStored(MetaFlags<'a>),
    /// `EX`: exists (a CAS mismatch).
    Exists(MetaFlags<'a>),
    /// `MN`: the answer to `mn`.
    NoOp,
    /// `ME <key> <key>=<value>*`: the answer to `me` (meta debug), unparsed.
    Debug(&'a [u8]),
    /// `ERROR`
    Error,
    /// `CLIENT_ERROR <message>`
    ClientError(&'a [u8]),
    /// `SERVER_ERROR <message>`
    ServerError(&'a [u8]),
}

impl<'a> MetaReply<'a> {
    /// The returned flags, for the replies that carry them.
    pub fn flags(&self) -> Option<MetaFlags<'a>> {
        match *self {
            MetaReply::Value { flags, .. }
            | MetaReply::Hit(flags)
            | MetaReply::Miss(flags)
            | MetaReply::NotFound(flags)
            | MetaReply::NotStored(flags)
            | MetaReply::Exists(flags) => Some(flags),
            _ => None,
        }
    }

    /// Whether this is `ERROR`, `CLIENT_ERROR` or `SERVER_ERROR`.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            MetaReply::Error | MetaReply::ClientError(_) | MetaReply::ServerError(_)
        )
    }

    /// Appends the reply as a server sends it (for test servers and round trips).
    pub fn write(&self, out: &mut Vec<u8>) {
        let (code, flags): (&[u8], MetaFlags<'_>) = match *self {
            MetaReply::Value { data, flags } => {
                out.extend_from_slice(b"VA ");
                num::put_u64(out, data.len() as u64);
                put_raw_flags(out, flags);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(data);
                out.extend_from_slice(b"\r\n");
                return;
            }
            MetaReply::Hit(f) => (b"HD", f),
            MetaReply::Miss(f) => (b"EN", f),
            MetaReply::NotFound(f) => (b"NF", f),
            MetaReply::NotStored(f) => (b"NS", f),
            MetaReply::Exists(f) => (b"EX", f),
            MetaReply::NoOp => (b"MN", MetaFlags::default()),
            MetaReply::Debug(rest) => (b"ME", MetaFlags(rest)),
            MetaReply::Error => (b"ERROR", MetaFlags::default()),
            MetaReply::ClientError(m) => (b"CLIENT_ERROR", MetaFlags(m)),
            MetaReply::ServerError(m) => (b"SERVER_ERROR", MetaFlags(m)),
        };
        out.extend_from_slice(code);
        put_raw_flags(out, flags);
        out.extend_from_slice(b"\r\n");
    }
}

fn put_raw_flags(out: &mut Vec<u8>, flags: MetaFlags<'_>) {
    if !flags.0.is_empty() {
        out.push(b' ');
        out.extend_from_slice(flags.0);
    }
}

static SPEC: LineSpec = LineSpec {
    proto: P,
    keywords: &[
        b"VA ",
        b"HD",
        b"EN",
        b"NF",
        b"NS",
        b"EX",
        b"MN",
        b"ME",
        b"ERROR",
        b"CLIENT_ERROR",
        b"SERVER_ERROR",
    ],
    digits_ok: false,
    expected: "a meta reply code (VA, HD, EN, NF, NS, EX, MN, ME) or an error",
};

/// Parses one meta protocol reply at the start of `buf` with [`Limits::DEFAULT`].
///
/// `Ok(None)` while incomplete; `Ok(Some((reply, consumed)))` once whole. Never panics,
/// never allocates.
///
/// ```
/// use kvlab_proto::memcache::{parse_meta, MetaReply};
/// let (reply, n) = parse_meta(b"VA 2 f5 Oab\r\nhi\r\n").unwrap().unwrap();
/// let MetaReply::Value { data, flags } = reply else { panic!() };
/// assert_eq!((data, flags.client_flags(), flags.opaque(), n), (&b"hi"[..], Some(5), Some(&b"ab"[..]), 17));
/// ```
#[inline]
pub fn parse_meta(buf: &[u8]) -> Result<Option<(MetaReply<'_>, usize)>, ProtoError> {
    parse_meta_with(buf, &Limits::DEFAULT)
}

/// [`parse_meta`] with explicit [`Limits`].
pub fn parse_meta_with<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Option<(MetaReply<'a>, usize)>, ProtoError> {
    let (line, next) = ready!(read_line(buf, limits, &SPEC));
    let (code, rest) = token(line);
    let flags = MetaFlags(rest);
    let reply = match code {
        b"VA" => {
            let (size, rest) = token(rest);
            let len = check_len(num::parse_u64(size), limits, P, "VA <size> <flags>*", line)?;
            let (data, end) = ready!(read_data(buf, next, len, P, "a VA data block"));
            return Ok(Some((
                MetaReply::Value {
                    data,
                    flags: MetaFlags(rest),
                },
                end,
            )));
        }
        b"HD" => MetaReply::Hit(flags),
        b"EN" => MetaReply::Miss(flags),
        b"NF" => MetaReply::NotFound(flags),
        b"NS" => MetaReply::NotStored(flags),
        b"EX" => MetaReply::Exists(flags),
        b"MN" if rest.is_empty() => MetaReply::NoOp,
        b"ME" => MetaReply::Debug(rest),
        b"ERROR" => MetaReply::Error,
        b"CLIENT_ERROR" => MetaReply::ClientError(rest),
        b"SERVER_ERROR" => MetaReply::ServerError(rest),
        b"MN" => return Err(bad_value(P, "MN alone on its line", line, 0)),
        _ => return Err(super::unknown(&SPEC, line)),
    };
    Ok(Some((reply, next)))
}

//! memcached text protocol: command encoders and reply units.

use super::{
    bad_value, check_len, put_cmd_key, put_sp_u64, read_data, read_line, token, Limits, LineSpec,
};
use crate::error::{ProtoError, Protocol};
use crate::num;

const P: Protocol = Protocol::MemcacheText;

/// `get <key>\r\n`
#[inline]
pub fn get(out: &mut Vec<u8>, key: &[u8]) {
    put_cmd_key(out, b"get", key);
    out.extend_from_slice(b"\r\n");
}

/// `get <key>*\r\n`: several keys at once; the reply has a `VALUE` item per hit, then `END`.
pub fn get_multi<K: AsRef<[u8]>>(out: &mut Vec<u8>, keys: &[K]) {
    out.extend_from_slice(b"get");
    for k in keys {
        out.push(b' ');
        out.extend_from_slice(k.as_ref());
    }
    out.extend_from_slice(b"\r\n");
}

/// `gets <key>\r\n`: like [`get`], with each item's CAS unique in the reply.
pub fn gets(out: &mut Vec<u8>, key: &[u8]) {
    put_cmd_key(out, b"gets", key);
    out.extend_from_slice(b"\r\n");
}

/// `gets <key>*\r\n`
pub fn gets_multi<K: AsRef<[u8]>>(out: &mut Vec<u8>, keys: &[K]) {
    out.extend_from_slice(b"gets");
    for k in keys {
        out.push(b' ');
        out.extend_from_slice(k.as_ref());
    }
    out.extend_from_slice(b"\r\n");
}

#[expect(
    clippy::too_many_arguments,
    reason = "one parameter per field of the storage command line"
)]
#[inline]
fn store(
    out: &mut Vec<u8>,
    cmd: &[u8],
    key: &[u8],
    flags: u32,
    exptime: u32,
    value: &[u8],
    cas_unique: Option<u64>,
    noreply: bool,
) {
    out.reserve(cmd.len() + key.len() + value.len() + 48);
    put_cmd_key(out, cmd, key);
    put_sp_u64(out, flags as u64);
    put_sp_u64(out, exptime as u64);
    put_sp_u64(out, value.len() as u64);
    if let Some(c) = cas_unique {
        put_sp_u64(out, c);
    }
    if noreply {
        out.extend_from_slice(b" noreply");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// `set <key> <flags> <exptime> <bytes> [noreply]\r\n<data>\r\n`. `exptime` 0 never
/// expires; up to 30 days it is relative seconds, above that a Unix time.
#[inline]
pub fn set(out: &mut Vec<u8>, key: &[u8], flags: u32, exptime: u32, value: &[u8], noreply: bool) {
    store(out, b"set", key, flags, exptime, value, None, noreply);
}

/// `add ...`: store only if the key is absent (else `NOT_STORED`). Fields as in [`set`].
pub fn add(out: &mut Vec<u8>, key: &[u8], flags: u32, exptime: u32, value: &[u8], noreply: bool) {
    store(out, b"add", key, flags, exptime, value, None, noreply);
}

/// `replace ...`: store only if the key is present (else `NOT_STORED`). Fields as in [`set`].
pub fn replace(
    out: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    value: &[u8],
    noreply: bool,
) {
    store(out, b"replace", key, flags, exptime, value, None, noreply);
}

/// `cas <key> <flags> <exptime> <bytes> <cas unique> [noreply]\r\n<data>\r\n`: store only
/// if the item is unchanged since the `gets` that returned `cas_unique` (else `EXISTS`, or
/// `NOT_FOUND`).
pub fn cas(
    out: &mut Vec<u8>,
    key: &[u8],
    flags: u32,
    exptime: u32,
    value: &[u8],
    cas_unique: u64,
    noreply: bool,
) {
    store(
        out,
        b"cas",
        key,
        flags,
        exptime,
        value,
        Some(cas_unique),
        noreply,
    );
}

fn noreply_end(out: &mut Vec<u8>, noreply: bool) {
    out.extend_from_slice(if noreply { b" noreply\r\n" } else { b"\r\n" });
}

/// `delete <key> [noreply]\r\n` (`DELETED` or `NOT_FOUND`).
pub fn delete(out: &mut Vec<u8>, key: &[u8], noreply: bool) {
    put_cmd_key(out, b"delete", key);
    noreply_end(out, noreply);
}

/// `touch <key> <exptime> [noreply]\r\n` (`TOUCHED` or `NOT_FOUND`).
pub fn touch(out: &mut Vec<u8>, key: &[u8], exptime: u32, noreply: bool) {
    put_cmd_key(out, b"touch", key);
    put_sp_u64(out, exptime as u64);
    noreply_end(out, noreply);
}

/// `incr <key> <delta> [noreply]\r\n` (the new value as [`Reply::Number`], or `NOT_FOUND`).
pub fn incr(out: &mut Vec<u8>, key: &[u8], delta: u64, noreply: bool) {
    put_cmd_key(out, b"incr", key);
    put_sp_u64(out, delta);
    noreply_end(out, noreply);
}

/// `decr <key> <delta> [noreply]\r\n` (the new value as [`Reply::Number`], or `NOT_FOUND`).
pub fn decr(out: &mut Vec<u8>, key: &[u8], delta: u64, noreply: bool) {
    put_cmd_key(out, b"decr", key);
    put_sp_u64(out, delta);
    noreply_end(out, noreply);
}

/// `version\r\n` ([`Reply::Version`]).
pub fn version(out: &mut Vec<u8>) {
    out.extend_from_slice(b"version\r\n");
}

/// `stats\r\n` or `stats <arg>\r\n` (`STAT` lines then `END`).
pub fn stats(out: &mut Vec<u8>, arg: Option<&[u8]>) {
    match arg {
        Some(a) => {
            put_cmd_key(out, b"stats", a);
            out.extend_from_slice(b"\r\n");
        }
        None => out.extend_from_slice(b"stats\r\n"),
    }
}

/// `flush_all [noreply]\r\n` (`OK`).
pub fn flush_all(out: &mut Vec<u8>, noreply: bool) {
    out.extend_from_slice(b"flush_all");
    noreply_end(out, noreply);
}

/// One reply unit of the text protocol, borrowing from the read buffer.
///
/// A retrieval reply is several units: a [`Reply::Value`] per item found, then
/// [`Reply::End`]. A `stats` reply is [`Reply::Stat`] units then [`Reply::End`]. Other
/// commands answer with one unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply<'a> {
    /// `VALUE <key> <flags> <bytes> [<cas unique>]\r\n<data>\r\n`
    Value {
        /// The item's key.
        key: &'a [u8],
        /// The client flags stored with the item.
        flags: u32,
        /// The data block (binary-safe: may contain CR and LF).
        data: &'a [u8],
        /// The CAS unique (`gets` replies only).
        cas: Option<u64>,
    },
    /// `END`: the end of a retrieval or `stats` reply.
    End,
    /// `STORED`
    Stored,
    /// `NOT_STORED`: an `add` or `replace` whose condition did not hold.
    NotStored,
    /// `EXISTS`: a `cas` on an item modified since.
    Exists,
    /// `NOT_FOUND`
    NotFound,
    /// `DELETED`
    Deleted,
    /// `TOUCHED`
    Touched,
    /// `OK` (`flush_all`, `verbosity`)
    Ok,
    /// `RESET` (`stats reset`)
    Reset,
    /// `VERSION <version>`
    Version(&'a [u8]),
    /// `STAT <name> <value>`
    Stat {
        /// The statistic's name.
        name: &'a [u8],
        /// Its value: the rest of the line.
        value: &'a [u8],
    },
    /// `<value>`: the new value after `incr`/`decr`.
    Number(u64),
    /// `ERROR`: an unknown command (any message after it is dropped).
    Error,
    /// `CLIENT_ERROR <message>`: a malformed command.
    ClientError(&'a [u8]),
    /// `SERVER_ERROR <message>`: the server could not carry the command out.
    ServerError(&'a [u8]),
}

impl Reply<'_> {
    /// Whether this is `ERROR`, `CLIENT_ERROR` or `SERVER_ERROR`.
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            Reply::Error | Reply::ClientError(_) | Reply::ServerError(_)
        )
    }

    /// Appends the reply unit as a server sends it (for test servers and round trips).
    pub fn write(&self, out: &mut Vec<u8>) {
        let fixed: &[u8] = match *self {
            Reply::Value {
                key,
                flags,
                data,
                cas,
            } => {
                out.extend_from_slice(b"VALUE ");
                out.extend_from_slice(key);
                put_sp_u64(out, flags as u64);
                put_sp_u64(out, data.len() as u64);
                if let Some(c) = cas {
                    put_sp_u64(out, c);
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(data);
                b"\r\n"
            }
            Reply::End => b"END\r\n",
            Reply::Stored => b"STORED\r\n",
            Reply::NotStored => b"NOT_STORED\r\n",
            Reply::Exists => b"EXISTS\r\n",
            Reply::NotFound => b"NOT_FOUND\r\n",
            Reply::Deleted => b"DELETED\r\n",
            Reply::Touched => b"TOUCHED\r\n",
            Reply::Ok => b"OK\r\n",
            Reply::Reset => b"RESET\r\n",
            Reply::Error => b"ERROR\r\n",
            Reply::Version(v) => {
                out.extend_from_slice(b"VERSION ");
                out.extend_from_slice(v);
                b"\r\n"
            }
            Reply::Stat { name, value } => {
                out.extend_from_slice(b"STAT ");
                out.extend_from_slice(name);
                out.push(b' ');
                out.extend_from_slice(value);
                b"\r\n"
            }
            Reply::Number(n) => {
                num::put_u64(out, n);
                b"\r\n"
            }
            Reply::ClientError(m) => {
                out.extend_from_slice(b"CLIENT_ERROR ");
                out.extend_from_slice(m);
                b"\r\n"
            }
            Reply::ServerError(m) => {
                out.extend_from_slice(b"SERVER_ERROR ");
                out.extend_from_slice(m);
                b"\r\n"
            }
        };
        out.extend_from_slice(fixed);
    }
}

static SPEC: LineSpec = LineSpec {
    proto: P,
    keywords: &[
        b"VALUE ",
        b"END",
        b"STORED",
        b"NOT_STORED",
        b"EXISTS",
        b"NOT_FOUND",
        b"DELETED",
        b"TOUCHED",
        b"OK",
        b"RESET",
        b"VERSION ",
        b"STAT ",
        b"ERROR",
        b"CLIENT_ERROR",
        b"SERVER_ERROR",
    ],
    digits_ok: true,
    expected: "a reply keyword (VALUE, END, STORED, NOT_STORED, EXISTS, NOT_FOUND, DELETED, \
               TOUCHED, OK, RESET, VERSION, STAT, ERROR, CLIENT_ERROR, SERVER_ERROR) or a number",
};

/// Parses one text protocol reply unit at the start of `buf` with [`Limits::DEFAULT`].
///
/// `Ok(None)` while incomplete; `Ok(Some((reply, consumed)))` once whole. Never panics,
/// never allocates. A line with no LF within the line limit is an error, and so is a partial
/// line that cannot start any reply.
#[inline]
pub fn parse(buf: &[u8]) -> Result<Option<(Reply<'_>, usize)>, ProtoError> {
    parse_with(buf, &Limits::DEFAULT)
}

/// [`parse`] with explicit [`Limits`].
pub fn parse_with<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Option<(Reply<'a>, usize)>, ProtoError> {
    let (line, next) = ready!(read_line(buf, limits, &SPEC));
    if let Some(rest) = line.strip_prefix(b"VALUE ") {
        return parse_value(buf, line, rest, next, limits);
    }
    let reply = match line {
        b"END" => Reply::End,
        b"STORED" => Reply::Stored,
        b"NOT_STORED" => Reply::NotStored,
        b"EXISTS" => Reply::Exists,
        b"NOT_FOUND" => Reply::NotFound,
        b"DELETED" => Reply::Deleted,
        b"TOUCHED" => Reply::Touched,
        b"OK" => Reply::Ok,
        b"RESET" => Reply::Reset,
        b"ERROR" => Reply::Error,
        b"CLIENT_ERROR" => Reply::ClientError(b""),
        b"SERVER_ERROR" => Reply::ServerError(b""),
        _ => {
            if let Some(m) = line.strip_prefix(b"CLIENT_ERROR ") {
                Reply::ClientError(m)
            } else if let Some(m) = line.strip_prefix(b"SERVER_ERROR ") {
                Reply::ServerError(m)
            } else if line.starts_with(b"ERROR ") {
                Reply::Error
            } else if let Some(v) = line.strip_prefix(b"VERSION ") {
                Reply::Version(v)
            } else if let Some(rest) = line.strip_prefix(b"STAT ") {
                let (name, value) = token(rest);
                if name.is_empty() {
                    return Err(bad_value(P, "STAT <name> <value>", line, 0));
                }
                Reply::Stat { name, value }
            } else if line.first().is_some_and(u8::is_ascii_digit) {
                match num::parse_u64(line) {
                    Some(n) => Reply::Number(n),
                    None => return Err(bad_value(P, "a 64-bit unsigned number", line, 0)),
                }
            } else {
                return Err(super::unknown(&SPEC, line));
            }
        }
    };
    Ok(Some((reply, next)))
}

const VALUE_SHAPE: &str = "VALUE <key> <flags> <bytes> [<cas unique>]";

#[inline]
fn parse_value<'a>(
    buf: &'a [u8],
    line: &'a [u8],
    rest: &'a [u8],
    next: usize,
    limits: &Limits,
) -> Result<Option<(Reply<'a>, usize)>, ProtoError> {
    let (key, rest) = token(rest);
    let (flags, rest) = token(rest);
    let (len, rest) = token(rest);
    let cas = if rest.is_empty() {
        None
    } else {
        match num::parse_u64(rest) {
            Some(c) => Some(c),
            None => return Err(bad_value(P, VALUE_SHAPE, line, 0)),
        }
    };
    let flags = match num::parse_u64(flags) {
        Some(f) if !key.is_empty() && f <= u32::MAX as u64 => f as u32,
        _ => return Err(bad_value(P, VALUE_SHAPE, line, 0)),
    };
    let len = check_len(num::parse_u64(len), limits, P, VALUE_SHAPE, line)?;
    let (data, end) = ready!(read_data(buf, next, len, P, "a VALUE data block"));
    Ok(Some((
        Reply::Value {
            key,
            flags,
            data,
            cas,
        },
        end,
    )))
}

//! memcached commands as a server reads them (text and meta), for test servers and round
//! trips of the encoders.

use super::{bad_value, check_len, read_data, read_line, token, Limits, LineSpec, MetaFlags};
use crate::error::{ProtoError, Protocol};
use crate::num;

const P: Protocol = Protocol::MemcacheText;

/// Which text protocol storage command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreCommand {
    /// `set`
    Set,
    /// `add`
    Add,
    /// `replace`
    Replace,
    /// `append`
    Append,
    /// `prepend`
    Prepend,
    /// `cas`
    Cas,
}

/// The keys of a retrieval command, borrowed: space-separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyList<'a>(&'a [u8]);

impl<'a> KeyList<'a> {
    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.0.split(|&b| b == b' ').filter(|k| !k.is_empty())
    }

    /// The keys as received, separated by spaces.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// One memcached command, borrowing from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    /// `get <key>*` or (`cas: true`) `gets <key>*`.
    Get {
        /// The keys asked for.
        keys: KeyList<'a>,
        /// Whether CAS uniques were asked for (`gets`).
        cas: bool,
    },
    /// `set`/`add`/`replace`/`append`/`prepend`/`cas` with its data block.
    Store {
        /// Which command.
        cmd: StoreCommand,
        /// The key.
        key: &'a [u8],
        /// Client flags.
        flags: u32,
        /// Expiration time.
        exptime: u32,
        /// The data block.
        data: &'a [u8],
        /// The CAS unique (`cas` only).
        cas: Option<u64>,
        /// Whether no reply is wanted.
        noreply: bool,
    },
    /// `delete <key> [noreply]`
    Delete {
        /// The key.
        key: &'a [u8],
        /// Whether no reply is wanted.
        noreply: bool,
    },
    /// `touch <key> <exptime> [noreply]`
    Touch {
        /// The key.
        key: &'a [u8],
        /// The new expiration time.
        exptime: u32,
        /// Whether no reply is wanted.
        noreply: bool,
    },
    /// `incr`/`decr <key> <delta> [noreply]`
    Arith {
        /// `true` for `incr`, `false` for `decr`.
        incr: bool,
        /// The key.
        key: &'a [u8],
        /// The amount.
        delta: u64,
        /// Whether no reply is wanted.
        noreply: bool,
    },
    /// `version`
    Version,
    /// `stats [<arg>]`
    Stats(Option<&'a [u8]>),
    /// `flush_all [<delay>] [noreply]`
    FlushAll {
        /// Seconds before the flush, if given.
        delay: Option<u32>,
        /// Whether no reply is wanted.
        noreply: bool,
    },
    /// `mg <key> <flags>*`
    MetaGet {
        /// The key.
        key: &'a [u8],
        /// The request flags.
        flags: MetaFlags<'a>,
    },
    /// `ms <key> <datalen> <flags>*` with its data block.
    MetaSet {
        /// The key.
        key: &'a [u8],
        /// The data block.
        data: &'a [u8],
        /// The request flags.
        flags: MetaFlags<'a>,
    },
    /// `md <key> <flags>*`
    MetaDelete {
        /// The key.
        key: &'a [u8],
        /// The request flags.
        flags: MetaFlags<'a>,
    },
    /// `mn`
    MetaNoop,
}

static SPEC: LineSpec = LineSpec {
    proto: P,
    keywords: &[
        b"get ",
        b"gets ",
        b"set ",
        b"add ",
        b"replace ",
        b"append ",
        b"prepend ",
        b"cas ",
        b"delete ",
        b"touch ",
        b"incr ",
        b"decr ",
        b"version",
        b"stats",
        b"flush_all",
        b"mg ",
        b"ms ",
        b"md ",
        b"mn",
    ],
    digits_ok: false,
    expected: "a command (get, gets, set, add, replace, append, prepend, cas, delete, touch, \
               incr, decr, version, stats, flush_all, mg, ms, md, mn)",
};

/// Parses one command at the start of `buf` with [`Limits::REQUEST_DEFAULT`].
///
/// `Ok(None)` while incomplete; `Ok(Some((request, consumed)))` once whole.
pub fn parse_request(buf: &[u8]) -> Result<Option<(Request<'_>, usize)>, ProtoError> {
    parse_request_with(buf, &Limits::REQUEST_DEFAULT)
}

/// Splits off a trailing ` noreply`.
fn noreply(rest: &[u8]) -> (&[u8], bool) {
    if rest == b"noreply" {
        (&[], true)
    } else {
        match rest.strip_suffix(b" noreply") {
            Some(r) => (r, true),
            None => (rest, false),
        }
    }
}

fn u32_of(tok: &[u8]) -> Option<u32> {
    u32::try_from(num::parse_u64(tok)?).ok()
}

/// [`parse_request`] with explicit [`Limits`].
pub fn parse_request_with<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Option<(Request<'a>, usize)>, ProtoError> {
    let (line, next) = ready!(read_line(buf, limits, &SPEC));
    let (cmd, rest) = token(line);
    let shape_err = |expected| Err(bad_value(P, expected, line, 0));
    let req = match cmd {
        b"get" | b"gets" => {
            if KeyList(rest).iter().next().is_none() {
                return shape_err("get <key>*");
            }
            Request::Get {
                keys: KeyList(rest),
                cas: cmd == b"gets",
            }
        }
        b"set" | b"add" | b"replace" | b"append" | b"prepend" | b"cas" => {
            let store = match cmd {
                b"set" => StoreCommand::Set,
                b"add" => StoreCommand::Add,
                b"replace" => StoreCommand::Replace,
                b"append" => StoreCommand::Append,
                b"prepend" => StoreCommand::Prepend,
                _ => StoreCommand::Cas,
            };
            const SHAPE: &str = "<cmd> <key> <flags> <exptime> <bytes> [<cas unique>] [noreply]";
            let (rest, noreply) = noreply(rest);
            let (key, rest) = token(rest);
            let (flags, rest) = token(rest);
            let (exptime, rest) = token(rest);
            let (len, rest) = token(rest);
            let cas = if store == StoreCommand::Cas {
                let (c, tail) = token(rest);
                if !tail.is_empty() {
                    return shape_err(SHAPE);
                }
                match num::parse_u64(c) {
                    Some(c) => Some(c),
                    None => return shape_err(SHAPE),
                }
            } else {
                if !rest.is_empty() {
                    return shape_err(SHAPE);
                }
                None
            };
            let (Some(flags), Some(exptime)) = (u32_of(flags), u32_of(exptime)) else {
                return shape_err(SHAPE);
            };
            if key.is_empty() {
                return shape_err(SHAPE);
            }
            let len = check_len(num::parse_u64(len), limits, P, SHAPE, line)?;
            let (data, end) = ready!(read_data(buf, next, len, P, "a data block"));
            return Ok(Some((
                Request::Store {
                    cmd: store,
                    key,
                    flags,
                    exptime,
                    data,
                    cas,
                    noreply,
                },
                end,
            )));
        }
        b"delete" => {
            let (rest, noreply) = noreply(rest);
            if rest.is_empty() || rest.contains(&b' ') {
                return shape_err("delete <key> [noreply]");
            }
            Request::Delete { key: rest, noreply }
        }
        b"touch" => {
            let (rest, noreply) = noreply(rest);
            let (key, exptime) = token(rest);
            match u32_of(exptime) {
                Some(exptime) if !key.is_empty() => Request::Touch {
                    key,
                    exptime,
                    noreply,
                },
                _ => return shape_err("touch <key> <exptime> [noreply]"),
            }
        }
        b"incr" | b"decr" => {
            let (rest, noreply) = noreply(rest);
            let (key, delta) = token(rest);
            match num::parse_u64(delta) {
                Some(delta) if !key.is_empty() => Request::Arith {
                    incr: cmd == b"incr",
                    key,
                    delta,
                    noreply,
                },
                _ => return shape_err("incr|decr <key> <delta> [noreply]"),
            }
        }
        b"version" if rest.is_empty() => Request::Version,
        b"stats" => Request::Stats(if rest.is_empty() { None } else { Some(rest) }),
        b"flush_all" => {
            let (rest, noreply) = noreply(rest);
            let delay = if rest.is_empty() {
                None
            } else {
                match u32_of(rest) {
                    Some(d) => Some(d),
                    None => return shape_err("flush_all [<delay>] [noreply]"),
                }
            };
            Request::FlushAll { delay, noreply }
        }
        b"mg" | b"md" => {
            let (key, flags) = token(rest);
            if key.is_empty() {
                return shape_err("mg|md <key> <flags>*");
            }
            let flags = MetaFlags::new(flags);
            if cmd == b"mg" {
                Request::MetaGet { key, flags }
            } else {
                Request::MetaDelete { key, flags }
            }
        }
        b"ms" => {
            const SHAPE: &str = "ms <key> <datalen> <flags>*";
            let (key, rest) = token(rest);
            let (len, flags) = token(rest);
            if key.is_empty() {
                return shape_err(SHAPE);
            }
            let len = check_len(num::parse_u64(len), limits, P, SHAPE, line)?;
            let (data, end) = ready!(read_data(buf, next, len, P, "an ms data block"));
            return Ok(Some((
                Request::MetaSet {
                    key,
                    data,
                    flags: MetaFlags::new(flags),
                },
                end,
            )));
        }
        b"mn" if rest.is_empty() => Request::MetaNoop,
        _ => return Err(super::unknown(&SPEC, line)),
    };
    Ok(Some((req, next)))
}

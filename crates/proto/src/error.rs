//! The one error type of the crate.

use std::fmt;

/// Which protocol an error was found in, named at the start of its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Redis RESP2/RESP3.
    Resp,
    /// memcached's text protocol (storage and retrieval commands).
    MemcacheText,
    /// memcached's meta protocol (`mg`, `ms`, `md`, `mn`).
    MemcacheMeta,
    /// memcached's binary protocol.
    MemcacheBinary,
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::Resp => "RESP",
            Protocol::MemcacheText => "memcached text",
            Protocol::MemcacheMeta => "memcached meta",
            Protocol::MemcacheBinary => "memcached binary",
        })
    }
}

/// Up to 24 bytes copied from the input, for error messages (no allocation).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Snippet {
    bytes: [u8; Snippet::CAP],
    len: u8,
    truncated: bool,
}

impl Snippet {
    const CAP: usize = 24;

    /// Copies the start of `bytes` (up to 24 bytes).
    pub fn new(bytes: &[u8]) -> Snippet {
        let n = bytes.len().min(Self::CAP);
        let mut s = Snippet {
            bytes: [0; Self::CAP],
            len: n as u8,
            truncated: bytes.len() > n,
        };
        s.bytes[..n].copy_from_slice(&bytes[..n]);
        s
    }

    /// The copied bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl fmt::Debug for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Snippet {
    /// Quoted, with non-printable bytes escaped, and `...` when cut short.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for &b in self.as_bytes() {
            write!(f, "{}", std::ascii::escape_default(b))?;
        }
        f.write_str(if self.truncated { "...\"" } else { "\"" })
    }
}

/// A byte as it is shown in messages: `0x41 ('A')`, or `0x0a` for non-printable bytes.
struct ShowByte(u8);

impl fmt::Display for ShowByte {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_ascii_graphic() {
            write!(f, "0x{:02x} ('{}')", self.0, self.0 as char)
        } else {
            write!(f, "0x{:02x}", self.0)
        }
    }
}

/// Malformed protocol input, or a reply whose shape is not the expected one.
///
/// Offsets are byte positions in the buffer handed to the parser. Every variant is cheap to
/// build and copy (no allocation). [`ProtoError::kind`] gives the variant without its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoError {
    /// A byte that cannot appear here.
    UnexpectedByte {
        /// The protocol being parsed.
        proto: Protocol,
        /// What could have appeared, in words.
        expected: &'static str,
        /// The byte found instead.
        found: u8,
        /// Where it was found.
        offset: usize,
    },
    /// A line or a data block not followed by `\r\n`.
    MissingCrlf {
        /// The protocol being parsed.
        proto: Protocol,
        /// What the CRLF should have ended.
        after: &'static str,
        /// The byte found where `\r` or `\n` should be.
        found: u8,
        /// Where it was found.
        offset: usize,
    },
    /// A number that is not a valid decimal integer (no digits, too many digits, out of range).
    BadInteger {
        /// The protocol being parsed.
        proto: Protocol,
        /// Which number.
        what: &'static str,
        /// Where the number starts.
        offset: usize,
    },
    /// A length that is negative (other than the `-1` of a RESP2 nil).
    NegativeLength {
        /// The protocol being parsed.
        proto: Protocol,
        /// Which length.
        what: &'static str,
        /// The value found.
        len: i64,
        /// Where the length starts.
        offset: usize,
    },
    /// A length above the configured maximum.
    TooLarge {
        /// The protocol being parsed.
        proto: Protocol,
        /// Which length.
        what: &'static str,
        /// The value found.
        len: u64,
        /// The configured maximum.
        max: u64,
        /// Where the length starts.
        offset: usize,
    },
    /// Aggregates nested deeper than the configured maximum.
    TooDeep {
        /// The configured maximum depth.
        max: usize,
        /// Where the aggregate too many starts.
        offset: usize,
    },
    /// No line end within the configured maximum line length.
    LineTooLong {
        /// The protocol being parsed.
        proto: Protocol,
        /// The configured maximum, in bytes, CRLF included.
        max: usize,
        /// Where the line starts.
        offset: usize,
    },
    /// A value of the right frame type whose content is invalid (a double, a boolean, the
    /// format of a verbatim string, a memcached reply's fields).
    BadValue {
        /// The protocol being parsed.
        proto: Protocol,
        /// What was expected, in words.
        expected: &'static str,
        /// The start of what was found.
        found: Snippet,
        /// Where it starts.
        offset: usize,
    },
    /// A memcached line that starts with no known reply keyword (or command name).
    UnknownKeyword {
        /// The protocol being parsed.
        proto: Protocol,
        /// What could have appeared, in words.
        expected: &'static str,
        /// The start of the line.
        line: Snippet,
        /// Where the line starts.
        offset: usize,
    },
    /// A well-formed frame of the wrong shape for what was asked (e.g. `CLUSTER SLOTS` not
    /// answered with an array of slot ranges).
    UnexpectedFrame {
        /// What was being read.
        context: &'static str,
        /// What was expected there.
        expected: &'static str,
        /// What was found, by type name.
        found: &'static str,
    },
}

/// The variant of a [`ProtoError`], without its fields (for matching in tables and metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// [`ProtoError::UnexpectedByte`].
    UnexpectedByte,
    /// [`ProtoError::MissingCrlf`].
    MissingCrlf,
    /// [`ProtoError::BadInteger`].
    BadInteger,
    /// [`ProtoError::NegativeLength`].
    NegativeLength,
    /// [`ProtoError::TooLarge`].
    TooLarge,
    /// [`ProtoError::TooDeep`].
    TooDeep,
    /// [`ProtoError::LineTooLong`].
    LineTooLong,
    /// [`ProtoError::BadValue`].
    BadValue,
    /// [`ProtoError::UnknownKeyword`].
    UnknownKeyword,
    /// [`ProtoError::UnexpectedFrame`].
    UnexpectedFrame,
}

impl ProtoError {
    /// The variant, without its fields.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProtoError::UnexpectedByte { .. } => ErrorKind::UnexpectedByte,
            ProtoError::MissingCrlf { .. } => ErrorKind::MissingCrlf,
            ProtoError::BadInteger { .. } => ErrorKind::BadInteger,
            ProtoError::NegativeLength { .. } => ErrorKind::NegativeLength,
            ProtoError::TooLarge { .. } => ErrorKind::TooLarge,
            ProtoError::TooDeep { .. } => ErrorKind::TooDeep,
            ProtoError::LineTooLong { .. } => ErrorKind::LineTooLong,
            ProtoError::BadValue { .. } => ErrorKind::BadValue,
            ProtoError::UnknownKeyword { .. } => ErrorKind::UnknownKeyword,
            ProtoError::UnexpectedFrame { .. } => ErrorKind::UnexpectedFrame,
        }
    }

    /// The byte offset in the parsed buffer where the problem is, if the error has one.
    pub fn offset(&self) -> Option<usize> {
        match *self {
            ProtoError::UnexpectedByte { offset, .. }
            | ProtoError::MissingCrlf { offset, .. }
            | ProtoError::BadInteger { offset, .. }
            | ProtoError::NegativeLength { offset, .. }
            | ProtoError::TooLarge { offset, .. }
            | ProtoError::TooDeep { offset, .. }
            | ProtoError::LineTooLong { offset, .. }
            | ProtoError::BadValue { offset, .. }
            | ProtoError::UnknownKeyword { offset, .. } => Some(offset),
            ProtoError::UnexpectedFrame { .. } => None,
        }
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::UnexpectedByte {
                proto,
                expected,
                found,
                offset,
            } => write!(
                f,
                "{proto}: expected {expected}, found {} at offset {offset}",
                ShowByte(*found)
            ),
            ProtoError::MissingCrlf {
                proto,
                after,
                found,
                offset,
            } => write!(
                f,
                "{proto}: expected CRLF after {after}, found {} at offset {offset}",
                ShowByte(*found)
            ),
            ProtoError::BadInteger {
                proto,
                what,
                offset,
            } => write!(
                f,
                "{proto}: expected a decimal integer for {what} at offset {offset} \
                 (digits only, optional sign, in range)"
            ),
            ProtoError::NegativeLength {
                proto,
                what,
                len,
                offset,
            } => write!(
                f,
                "{proto}: expected a {what} >= 0 (or -1 for nil where allowed), \
                 found {len} at offset {offset}"
            ),
            ProtoError::TooLarge {
                proto,
                what,
                len,
                max,
                offset,
            } => write!(
                f,
                "{proto}: {what} {len} at offset {offset} is above the maximum {max}"
            ),
            ProtoError::TooDeep { max, offset } => write!(
                f,
                "RESP: aggregates nested more than {max} deep (at offset {offset})"
            ),
            ProtoError::LineTooLong { proto, max, offset } => write!(
                f,
                "{proto}: expected a line end within {max} bytes of offset {offset}, found none"
            ),
            ProtoError::BadValue {
                proto,
                expected,
                found,
                offset,
            } => write!(
                f,
                "{proto}: expected {expected}, found {found} at offset {offset}"
            ),
            ProtoError::UnknownKeyword {
                proto,
                expected,
                line,
                offset,
            } => write!(
                f,
                "{proto}: expected {expected}, found the line {line} at offset {offset}"
            ),
            ProtoError::UnexpectedFrame {
                context,
                expected,
                found,
            } => write!(f, "{context}: expected {expected}, found {found}"),
        }
    }
}

impl std::error::Error for ProtoError {}

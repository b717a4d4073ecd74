//! RESP2/RESP3 parsing: borrowed frames, lazy aggregates, and skipping.

use std::fmt;

use crate::error::{ProtoError, Protocol, Snippet};
use crate::num;

const P: Protocol = Protocol::Resp;

/// The deepest nesting of aggregates any [`Limits`] allows (an array inside an array is
/// depth 2).
pub const MAX_DEPTH: usize = 64;

/// Bounds that keep a hostile or broken server from making the parser wait forever or
/// recurse without end. Lengths above them are errors as soon as the header is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest bulk string, bulk error or verbatim string, in bytes. Default 512 MiB
    /// (Redis's `proto-max-bulk-len`).
    pub max_bulk_len: usize,
    /// The most elements in one aggregate (pairs for maps and attributes). Default 2^30;
    /// values above 2^31 − 1 act as 2^31 − 1.
    pub max_aggregate_len: usize,
    /// The deepest nesting of aggregates; default and upper bound [`MAX_DEPTH`]; at least 1.
    pub max_depth: usize,
    /// The longest line (simple string, error, integer, double, big number), CRLF excluded.
    /// Default 64 KiB.
    pub max_line_len: usize,
}

impl Limits {
    /// The defaults, as documented on each field.
    pub const DEFAULT: Limits = Limits {
        max_bulk_len: 512 << 20,
        max_aggregate_len: 1 << 30,
        max_depth: MAX_DEPTH,
        max_line_len: 64 << 10,
    };

    /// For re-parsing bytes that were validated already (the elements of an [`Aggregate`]).
    const TRUSTED: Limits = Limits {
        max_bulk_len: usize::MAX,
        max_aggregate_len: usize::MAX,
        max_depth: MAX_DEPTH,
        max_line_len: usize::MAX,
    };

    fn depth(&self) -> usize {
        self.max_depth.clamp(1, MAX_DEPTH)
    }

    fn aggregate_len(&self) -> usize {
        self.max_aggregate_len.min(i32::MAX as usize)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// One RESP frame, borrowing from the parsed buffer.
///
/// Scalars carry their bytes; aggregates are lazy [`Aggregate`] views whose elements are
/// parsed again on iteration (they were validated when the frame was parsed, so iteration
/// cannot fail). RESP3 attributes (`|`) are skipped: the frame they annotate is returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Frame<'a> {
    /// `+OK\r\n`
    SimpleString(&'a [u8]),
    /// `-ERR message\r\n`: the whole line after `-`, error code included.
    Error(&'a [u8]),
    /// `:1000\r\n`
    Integer(i64),
    /// `$5\r\nhello\r\n`; `None` for the RESP2 nil bulk `$-1\r\n`.
    Bulk(Option<&'a [u8]>),
    /// `*2\r\n...`; `None` for the RESP2 nil array `*-1\r\n`.
    Array(Option<Aggregate<'a>>),
    /// RESP3 `_\r\n`.
    Null,
    /// RESP3 `#t\r\n` / `#f\r\n`.
    Boolean(bool),
    /// RESP3 `,1.23\r\n` (also `inf`, `-inf`, `nan`).
    Double(f64),
    /// RESP3 `(3492890328409238509324850943850943825024385\r\n`: the digits, sign included.
    BigNumber(&'a [u8]),
    /// RESP3 `!21\r\nSYNTAX invalid syntax\r\n`.
    BulkError(&'a [u8]),
    /// RESP3 `=15\r\ntxt:Some string\r\n`.
    VerbatimString {
        /// The three-byte format (`txt`, `mkd`).
        format: &'a [u8],
        /// The text after the `:`.
        text: &'a [u8],
    },
    /// RESP3 `%2\r\n...`: [`Aggregate::len`] counts pairs; iteration yields key, value, ….
    Map(Aggregate<'a>),
    /// RESP3 `~3\r\n...`.
    Set(Aggregate<'a>),
    /// RESP3 `>3\r\n...`: out-of-band data (pub/sub messages, client-side caching
    /// invalidations) that can arrive between replies.
    Push(Aggregate<'a>),
}

/// A lazy view of an aggregate's elements: the header's count and the encoded elements.
///
/// Copying it is free; [`Aggregate::iter`] parses the elements one by one without
/// allocating. Any attributes among the elements are skipped by the iterator. An element
/// that is itself an aggregate is scanned again to find its end, so walking a whole tree
/// costs its size times its depth (replies are shallow; the depth is bounded by
/// [`MAX_DEPTH`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Aggregate<'a> {
    len: usize,
    frames: usize,
    bytes: &'a [u8],
}

impl<'a> Aggregate<'a> {
    /// The count in the header: elements, or pairs for a map.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the aggregate has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many frames [`Aggregate::iter`] yields: [`Aggregate::len`], twice that for maps.
    pub fn frame_count(&self) -> usize {
        self.frames
    }

    /// The encoded elements, exactly as received.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The elements, in order (for a map: key, value, key, value, …).
    pub fn iter(&self) -> Elements<'a> {
        Elements {
            bytes: self.bytes,
            remaining: self.frames,
        }
    }

    /// The elements two at a time: a map's key-value pairs, or a flat RESP2 `HGETALL` reply.
    /// A trailing odd element is dropped.
    pub fn pairs(&self) -> Pairs<'a> {
        Pairs(self.iter())
    }
}

impl fmt::Debug for Aggregate<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Aggregate<'a> {
    type Item = Frame<'a>;
    type IntoIter = Elements<'a>;

    fn into_iter(self) -> Elements<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Aggregate<'a> {
    type Item = Frame<'a>;
    type IntoIter = Elements<'a>;

    fn into_iter(self) -> Elements<'a> {
        self.iter()
    }
}

/// Iterator over an [`Aggregate`]'s elements.
#[derive(Debug, Clone)]
pub struct Elements<'a> {
    bytes: &'a [u8],
    remaining: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Frame<'a>;

    #[inline]
    fn next(&mut self) -> Option<Frame<'a>> {
        if self.remaining == 0 {
            return None;
        }
        // Validated when the aggregate was parsed: errors and incompleteness cannot happen,
        // but end the iteration rather than panic if they somehow did.
        match parse_with(self.bytes, &Limits::TRUSTED) {
            Ok(Some((frame, used))) => {
                self.bytes = &self.bytes[used..];
                self.remaining -= 1;
                Some(frame)
            }
            _ => {
                self.remaining = 0;
                None
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Elements<'_> {}
impl std::iter::FusedIterator for Elements<'_> {}

/// Iterator over an [`Aggregate`]'s elements two at a time.
#[derive(Debug, Clone)]
pub struct Pairs<'a>(Elements<'a>);

impl<'a> Iterator for Pairs<'a> {
    type Item = (Frame<'a>, Frame<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.remaining < 2 {
            return None;
        }
        let k = self.0.next()?;
        let v = self.0.next()?;
        Some((k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.remaining / 2, Some(self.0.remaining / 2))
    }
}

impl<'a> Frame<'a> {
    /// The frame type in words, for messages (`"a bulk string"`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Frame::SimpleString(_) => "a simple string",
            Frame::Error(_) => "an error",
            Frame::Integer(_) => "an integer",
            Frame::Bulk(Some(_)) => "a bulk string",
            Frame::Bulk(None) => "a nil bulk string",
            Frame::Array(Some(_)) => "an array",
            Frame::Array(None) => "a nil array",
            Frame::Null => "a null",
            Frame::Boolean(_) => "a boolean",
            Frame::Double(_) => "a double",
            Frame::BigNumber(_) => "a big number",
            Frame::BulkError(_) => "a bulk error",
            Frame::VerbatimString { .. } => "a verbatim string",
            Frame::Map(_) => "a map",
            Frame::Set(_) => "a set",
            Frame::Push(_) => "a push",
        }
    }

    /// The bytes of a string-like frame: simple, bulk (not nil), verbatim (the text), big
    /// number.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            Frame::SimpleString(s) | Frame::Bulk(Some(s)) | Frame::BigNumber(s) => Some(s),
            Frame::VerbatimString { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The value of an integer frame.
    pub fn as_integer(&self) -> Option<i64> {
        match *self {
            Frame::Integer(n) => Some(n),
            _ => None,
        }
    }

    /// The elements of an array (not nil), map, set or push.
    pub fn as_aggregate(&self) -> Option<Aggregate<'a>> {
        match *self {
            Frame::Array(Some(a)) | Frame::Map(a) | Frame::Set(a) | Frame::Push(a) => Some(a),
            _ => None,
        }
    }

    /// Whether the frame is a nil: RESP3 null, RESP2 nil bulk or nil array.
    pub fn is_nil(&self) -> bool {
        matches!(self, Frame::Null | Frame::Bulk(None) | Frame::Array(None))
    }

    /// Whether the frame is an error reply (simple or bulk).
    pub fn is_error(&self) -> bool {
        matches!(self, Frame::Error(_) | Frame::BulkError(_))
    }

    /// The message of an error reply (simple or bulk), error code included.
    pub fn error_message(&self) -> Option<&'a [u8]> {
        match *self {
            Frame::Error(m) | Frame::BulkError(m) => Some(m),
            _ => None,
        }
    }

    /// The cluster redirection in a `-MOVED` or `-ASK` error reply.
    pub fn redirect(&self) -> Option<super::Redirect<'a>> {
        super::parse_redirect(self.error_message()?)
    }

    /// Appends the frame in RESP encoding. Aggregates are copied as received (attributes
    /// among their elements included); doubles are written in their shortest round-tripping
    /// form. String contents are not checked: a simple string or error containing CR or LF
    /// writes a malformed frame.
    pub fn write(&self, out: &mut Vec<u8>) {
        match *self {
            Frame::SimpleString(s) => line(out, b'+', s),
            Frame::Error(s) => line(out, b'-', s),
            Frame::Integer(n) => {
                out.push(b':');
                num::put_i64(out, n);
                out.extend_from_slice(b"\r\n");
            }
            Frame::Bulk(None) => out.extend_from_slice(b"$-1\r\n"),
            Frame::Bulk(Some(s)) => super::encode::put_bulk(out, s),
            Frame::Array(None) => out.extend_from_slice(b"*-1\r\n"),
            Frame::Array(Some(a)) => aggregate(out, b'*', a),
            Frame::Null => out.extend_from_slice(b"_\r\n"),
            Frame::Boolean(b) => out.extend_from_slice(if b { b"#t\r\n" } else { b"#f\r\n" }),
            Frame::Double(x) => {
                out.push(b',');
                if x.is_nan() {
                    out.extend_from_slice(b"nan");
                } else {
                    num::with_f64(x, |s| out.extend_from_slice(s));
                }
                out.extend_from_slice(b"\r\n");
            }
            Frame::BigNumber(s) => line(out, b'(', s),
            Frame::BulkError(s) => {
                out.push(b'!');
                num::put_u64(out, s.len() as u64);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(s);
                out.extend_from_slice(b"\r\n");
            }
            Frame::VerbatimString { format, text } => {
                out.push(b'=');
                num::put_u64(out, (format.len() + 1 + text.len()) as u64);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(format);
                out.push(b':');
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
            Frame::Map(a) => aggregate(out, b'%', a),
            Frame::Set(a) => aggregate(out, b'~', a),
            Frame::Push(a) => aggregate(out, b'>', a),
        }
    }
}

fn line(out: &mut Vec<u8>, t: u8, s: &[u8]) {
    out.push(t);
    out.extend_from_slice(s);
    out.extend_from_slice(b"\r\n");
}

fn aggregate(out: &mut Vec<u8>, t: u8, a: Aggregate<'_>) {
    out.push(t);
    num::put_u64(out, a.len as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(a.bytes);
}

/// Parses one frame at the start of `buf` with [`Limits::DEFAULT`].
///
/// Returns `Ok(None)` when `buf` holds only part of a frame (read more and call again with
/// the longer buffer), `Ok(Some((frame, consumed)))` when a whole frame is there, where
/// `consumed` is its length in bytes, and an error for malformed input. Never panics and
/// never allocates.
///
/// ```
/// use kvlab_proto::resp::{parse, Frame};
/// assert_eq!(parse(b"$5\r\nhel").unwrap(), None);
/// assert_eq!(parse(b"$5\r\nhello\r\n:1\r\n").unwrap(), Some((Frame::Bulk(Some(b"hello")), 11)));
/// ```
#[inline]
pub fn parse(buf: &[u8]) -> Result<Option<(Frame<'_>, usize)>, ProtoError> {
    parse_with(buf, &Limits::DEFAULT)
}

/// [`parse`] with explicit [`Limits`].
#[inline]
pub fn parse_with<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Option<(Frame<'a>, usize)>, ProtoError> {
    let mut pos = 0;
    loop {
        match ready!(head(buf, pos, limits)) {
            Head::Frame(frame, end) => return Ok(Some((frame, end))),
            Head::Aggregate {
                kind,
                len,
                frames,
                start,
            } => {
                let end = if frames == 0 {
                    start
                } else {
                    ready!(skip_elements(buf, start, frames, 1, limits))
                };
                let agg = Aggregate {
                    len,
                    frames,
                    bytes: &buf[start..end],
                };
                let frame = match kind {
                    b'*' => Frame::Array(Some(agg)),
                    b'%' => Frame::Map(agg),
                    b'~' => Frame::Set(agg),
                    _ => Frame::Push(agg),
                };
                return Ok(Some((frame, end)));
            }
            Head::Attribute { frames, start } => {
                pos = if frames == 0 {
                    start
                } else {
                    ready!(skip_elements(buf, start, frames, 1, limits))
                };
            }
        }
    }
}

/// Finds the end of the frame at the start of `buf`, validating it but building nothing,
/// with [`Limits::DEFAULT`]: `Ok(Some(consumed))`, or `Ok(None)` if incomplete.
///
/// For replies the caller does not need to look at (e.g. `+OK` to a pipelined `SET`).
#[inline]
pub fn skip(buf: &[u8]) -> Result<Option<usize>, ProtoError> {
    skip_with(buf, &Limits::DEFAULT)
}

/// [`skip`] with explicit [`Limits`].
#[inline]
pub fn skip_with(buf: &[u8], limits: &Limits) -> Result<Option<usize>, ProtoError> {
    match ready!(head(buf, 0, limits)) {
        Head::Frame(_, end) => Ok(Some(end)),
        Head::Aggregate {
            frames: 0, start, ..
        } => Ok(Some(start)),
        _ => skip_elements(buf, 0, 1, 0, limits),
    }
}

/// What the first line of a frame says.
enum Head<'a> {
    /// A whole non-aggregate frame (or a nil array) and the offset just past it.
    Frame(Frame<'a>, usize),
    /// An aggregate header: its type byte, header count, number of frames that follow, and
    /// the offset of the first of them.
    Aggregate {
        kind: u8,
        len: usize,
        frames: usize,
        start: usize,
    },
    /// An attribute header: the number of frames of its map, and where they start.
    Attribute { frames: usize, start: usize },
}

/// Skips `frames` frames starting at `pos`, which are the elements of an aggregate at depth
/// `depth` (0 for top-level frames). Iterative: a fixed stack of remaining counts, one per
/// open aggregate.
fn skip_elements(
    buf: &[u8],
    mut pos: usize,
    frames: usize,
    depth: usize,
    limits: &Limits,
) -> Result<Option<usize>, ProtoError> {
    let max_depth = limits.depth();
    let mut stack = [0u32; MAX_DEPTH + 1];
    // `frames` never exceeds 2 * i32::MAX, so it fits.
    stack[0] = frames as u32;
    let mut sp = 1;
    loop {
        let at = pos;
        match ready!(head(buf, pos, limits)) {
            Head::Frame(_, end) => {
                pos = end;
                stack[sp - 1] -= 1;
            }
            Head::Aggregate { frames, start, .. } => {
                pos = start;
                stack[sp - 1] -= 1;
                if depth + sp > max_depth {
                    return Err(ProtoError::TooDeep {
                        max: max_depth,
                        offset: at,
                    });
                }
                if frames > 0 {
                    stack[sp] = frames as u32;
                    sp += 1;
                }
            }
            Head::Attribute { frames, start } => {
                // An attribute annotates the next frame: it is not an element of the parent.
                pos = start;
                if depth + sp > max_depth {
                    return Err(ProtoError::TooDeep {
                        max: max_depth,
                        offset: at,
                    });
                }
                if frames > 0 {
                    stack[sp] = frames as u32;
                    sp += 1;
                }
            }
        }
        while stack[sp - 1] == 0 {
            sp -= 1;
            if sp == 0 {
                return Ok(Some(pos));
            }
        }
    }
}

/// Reads the frame header at `pos`.
#[inline(always)]
fn head<'a>(buf: &'a [u8], pos: usize, limits: &Limits) -> Result<Option<Head<'a>>, ProtoError> {
    let Some(&t) = buf.get(pos) else {
        return Ok(None);
    };
    let p = pos + 1;
    let head = match t {
        b'$' => {
            if let Some((len, q)) = fast_len(buf, p) {
                if let Some(&[b'\r', b'\n']) = buf.get(q + len..q + len + 2) {
                    if len <= limits.max_bulk_len {
                        return Ok(Some(Head::Frame(
                            Frame::Bulk(Some(&buf[q..q + len])),
                            q + len + 2,
                        )));
                    }
                }
            }
            let (len, q) = ready!(read_len(buf, p, "bulk string length", true));
            if len < 0 {
                Head::Frame(Frame::Bulk(None), q)
            } else {
                let (data, end) = ready!(read_block(buf, p, q, len as u64, limits, "bulk string"));
                Head::Frame(Frame::Bulk(Some(data)), end)
            }
        }
        b'+' => {
            let (s, end) = ready!(read_line(buf, pos, limits, "a simple string"));
            Head::Frame(Frame::SimpleString(s), end)
        }
        b'-' => {
            let (s, end) = ready!(read_line(buf, pos, limits, "an error"));
            Head::Frame(Frame::Error(s), end)
        }
        b':' => {
            let (n, end) = ready!(read_int(buf, p, "an integer reply"));
            Head::Frame(Frame::Integer(n), end)
        }
        b'*' | b'%' | b'~' | b'>' | b'|' => {
            let what = match t {
                b'*' => "array length",
                b'%' => "map length",
                b'~' => "set length",
                b'>' => "push length",
                _ => "attribute length",
            };
            let (len, start) = ready!(read_len(buf, p, what, t == b'*'));
            if len < 0 {
                Head::Frame(Frame::Array(None), start)
            } else {
                let len = len as u64;
                let max = limits.aggregate_len() as u64;
                if len > max {
                    return Err(ProtoError::TooLarge {
                        proto: P,
                        what,
                        len,
                        max,
                        offset: p,
                    });
                }
                let len = len as usize;
                let frames = if t == b'%' || t == b'|' { len * 2 } else { len };
                if t == b'|' {
                    Head::Attribute { frames, start }
                } else {
                    Head::Aggregate {
                        kind: t,
                        len,
                        frames,
                        start,
                    }
                }
            }
        }
        b'_' => match buf.get(p) {
            None => return Ok(None),
            Some(b'\r') => match buf.get(p + 1) {
                None => return Ok(None),
                Some(b'\n') => Head::Frame(Frame::Null, p + 2),
                Some(&b) => return Err(missing_crlf("_ (null)", b, p + 1)),
            },
            Some(&b) => return Err(missing_crlf("_ (null)", b, p)),
        },
        b'#' => {
            let (s, end) = ready!(read_line(buf, pos, limits, "a boolean"));
            let v = match s {
                b"t" => true,
                b"f" => false,
                _ => return Err(bad_value("t or f after #", s, p)),
            };
            Head::Frame(Frame::Boolean(v), end)
        }
        b',' => {
            let (s, end) = ready!(read_line(buf, pos, limits, "a double"));
            let v = std::str::from_utf8(s)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| bad_value("a floating point number after ,", s, p))?;
            Head::Frame(Frame::Double(v), end)
        }
        b'(' => {
            let (s, end) = ready!(read_line(buf, pos, limits, "a big number"));
            let digits = match s.first() {
                Some(b'-' | b'+') => &s[1..],
                _ => s,
            };
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(bad_value("decimal digits after (", s, p));
            }
            Head::Frame(Frame::BigNumber(s), end)
        }
        b'!' => {
            let (len, q) = ready!(read_len(buf, p, "bulk error length", false));
            let (data, end) = ready!(read_block(buf, p, q, len as u64, limits, "bulk error"));
            Head::Frame(Frame::BulkError(data), end)
        }
        b'=' => {
            let (len, q) = ready!(read_len(buf, p, "verbatim string length", false));
            let (data, end) = ready!(read_block(buf, p, q, len as u64, limits, "verbatim string"));
            if data.len() < 4 || data[3] != b':' {
                return Err(bad_value(
                    "a three-byte format and ':' starting a verbatim string",
                    data,
                    q,
                ));
            }
            Head::Frame(
                Frame::VerbatimString {
                    format: &data[..3],
                    text: &data[4..],
                },
                end,
            )
        }
        _ => {
            return Err(ProtoError::UnexpectedByte {
                proto: P,
                expected: "a type byte (+ - : $ * _ # , ( ! = % ~ | >)",
                found: t,
                offset: pos,
            })
        }
    };
    Ok(Some(head))
}

/// The common case of a length line: 1 to 9 digits and CRLF, all present. Returns the length
/// and the offset after the CRLF; `None` sends the caller to the general path.
#[inline(always)]
fn fast_len(buf: &[u8], p: usize) -> Option<(usize, usize)> {
    let mut v = 0usize;
    let mut i = p;
    loop {
        let d = buf.get(i)?.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + d as usize;
        i += 1;
        if i - p > 9 {
            return None;
        }
    }
    if i == p || buf.get(i + 1) != Some(&b'\n') || buf[i] != b'\r' {
        return None;
    }
    Some((v, i + 2))
}

fn missing_crlf(after: &'static str, found: u8, offset: usize) -> ProtoError {
    ProtoError::MissingCrlf {
        proto: P,
        after,
        found,
        offset,
    }
}

fn bad_value(expected: &'static str, found: &[u8], offset: usize) -> ProtoError {
    ProtoError::BadValue {
        proto: P,
        expected,
        found: Snippet::new(found),
        offset,
    }
}

/// Reads a decimal integer line starting at `p` (just after the type byte): optional sign,
/// up to 19 digits, CRLF. Returns the value and the offset after the CRLF.
#[inline(always)]
fn read_int(buf: &[u8], p: usize, what: &'static str) -> Result<Option<(i64, usize)>, ProtoError> {
    let mut i = p;
    let neg = match buf.get(i) {
        None => return Ok(None),
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        Some(_) => false,
    };
    let digits = i;
    let mut v: u64 = 0;
    loop {
        let Some(&b) = buf.get(i) else {
            return Ok(None);
        };
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            if i - digits >= 19 {
                return Err(bad_integer(what, p));
            }
            v = v * 10 + d as u64;
            i += 1;
        } else if b == b'\r' {
            break;
        } else {
            return Err(ProtoError::UnexpectedByte {
                proto: P,
                expected: "a decimal digit or CR",
                found: b,
                offset: i,
            });
        }
    }
    if i == digits {
        return Err(bad_integer(what, p));
    }
    match buf.get(i + 1) {
        None => return Ok(None),
        Some(b'\n') => {}
        Some(&b) => return Err(missing_crlf(what, b, i + 1)),
    }
    let n = if neg {
        if v > i64::MAX as u64 + 1 {
            return Err(bad_integer(what, p));
        }
        0i64.wrapping_sub(v as i64)
    } else {
        if v > i64::MAX as u64 {
            return Err(bad_integer(what, p));
        }
        v as i64
    };
    Ok(Some((n, i + 2)))
}

fn bad_integer(what: &'static str, offset: usize) -> ProtoError {
    ProtoError::BadInteger {
        proto: P,
        what,
        offset,
    }
}

/// Reads a length line: like [`read_int`], but only -1 (where `nil_ok`) may be negative.
#[inline(always)]
fn read_len(
    buf: &[u8],
    p: usize,
    what: &'static str,
    nil_ok: bool,
) -> Result<Option<(i64, usize)>, ProtoError> {
    let (n, q) = ready!(read_int(buf, p, what));
    if n < 0 && !(nil_ok && n == -1) {
        return Err(ProtoError::NegativeLength {
            proto: P,
            what,
            len: n,
            offset: p,
        });
    }
    Ok(Some((n, q)))
}

/// Reads a `len`-byte data block at `q` followed by CRLF. `p` is where the length was.
#[inline(always)]
fn read_block<'a>(
    buf: &'a [u8],
    p: usize,
    q: usize,
    len: u64,
    limits: &Limits,
    what: &'static str,
) -> Result<Option<(&'a [u8], usize)>, ProtoError> {
    if len > limits.max_bulk_len as u64 {
        return Err(ProtoError::TooLarge {
            proto: P,
            what,
            len,
            max: limits.max_bulk_len as u64,
            offset: p,
        });
    }
    let end = q.saturating_add(len as usize);
    if buf.len() >= end.saturating_add(2) {
        if buf[end] != b'\r' {
            return Err(missing_crlf(what, buf[end], end));
        }
        if buf[end + 1] != b'\n' {
            return Err(missing_crlf(what, buf[end + 1], end + 1));
        }
        return Ok(Some((&buf[q..end], end + 2)));
    }
    // Incomplete, unless the byte after the data is already there and wrong.
    match buf.get(end) {
        Some(&b) if b != b'\r' => Err(missing_crlf(what, b, end)),
        _ => Ok(None),
    }
}

/// Reads the line after the type byte at `pos`: its content (no CR or LF inside) and the
/// offset after its CRLF.
#[inline(always)]
fn read_line<'a>(
    buf: &'a [u8],
    pos: usize,
    limits: &Limits,
    what: &'static str,
) -> Result<Option<(&'a [u8], usize)>, ProtoError> {
    let p = pos + 1;
    let window_end = buf
        .len()
        .min(p.saturating_add(limits.max_line_len).saturating_add(1));
    let window = buf.get(p..window_end).unwrap_or_default();
    match memchr::memchr2(b'\r', b'\n', window) {
        Some(i) => {
            let c = p + i;
            if buf[c] == b'\n' {
                return Err(missing_crlf(what, b'\n', c));
            }
            match buf.get(c + 1) {
                None => Ok(None),
                Some(b'\n') => Ok(Some((&buf[p..c], c + 2))),
                Some(&b) => Err(missing_crlf(what, b, c + 1)),
            }
        }
        None if window.len() > limits.max_line_len => Err(ProtoError::LineTooLong {
            proto: P,
            max: limits.max_line_len,
            offset: pos,
        }),
        None => Ok(None),
    }
}

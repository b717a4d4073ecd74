//! memcached binary protocol: request encoders and response parsing.
//!
//! Every packet is a 24-byte header — magic (`0x80` request, `0x81` response), opcode,
//! key length (2 bytes), extras length, data type, vbucket (request) or status
//! (response) (2 bytes), total body length (4 bytes), opaque (4 bytes), CAS (8 bytes),
//! all big-endian — then the extras, the key and the value, in that order
//! (memcached's `protocol_binary.h`). The opaque is echoed back unchanged, so a client
//! can tell which request a response answers; the quiet commands (`GETQ`, `GETKQ`)
//! answer nothing on a miss, and a `NOOP` after them marks the end of a batch.
//!
//! A miss is a response with status [`Status::KEY_NOT_FOUND`], not an error.

use std::fmt;

use super::Limits;
use crate::error::{ProtoError, Protocol, Snippet};

const P: Protocol = Protocol::MemcacheBinary;

/// The length of a packet header.
pub const HEADER_LEN: usize = 24;

/// The magic byte of a request.
pub const REQUEST_MAGIC: u8 = 0x80;

/// The magic byte of a response.
pub const RESPONSE_MAGIC: u8 = 0x81;

/// A command opcode (`protocol_binary_command`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Opcode(pub u8);

impl Opcode {
    /// Get a value; the response has the item flags as extras, no key.
    pub const GET: Opcode = Opcode(0x00);
    /// Store a value (extras: flags and expiration).
    pub const SET: Opcode = Opcode(0x01);
    /// Store a value only over an existing one (extras as `SET`'s): status
    /// [`Status::KEY_NOT_FOUND`] when the key is absent.
    pub const REPLACE: Opcode = Opcode(0x03);
    /// Delete a key.
    pub const DELETE: Opcode = Opcode(0x04);
    /// Flush every item.
    pub const FLUSH: Opcode = Opcode(0x08);
    /// Quiet get: a miss answers nothing.
    pub const GETQ: Opcode = Opcode(0x09);
    /// No operation: answered at once, after every earlier request.
    pub const NOOP: Opcode = Opcode(0x0a);
    /// The server's version string, as the value.
    pub const VERSION: Opcode = Opcode(0x0b);
    /// Get, with the key in the response.
    pub const GETK: Opcode = Opcode(0x0c);
    /// Quiet get with the key in the response: a miss answers nothing.
    pub const GETKQ: Opcode = Opcode(0x0d);
    /// Statistics: one response per statistic (key: name, value: value), then one with
    /// an empty key.
    pub const STAT: Opcode = Opcode(0x10);

    /// The opcode's name in memcached's documentation, or `None` for one kvlab does not
    /// send.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Opcode::GET => "GET",
            Opcode::SET => "SET",
            Opcode::REPLACE => "REPLACE",
            Opcode::DELETE => "DELETE",
            Opcode::FLUSH => "FLUSH",
            Opcode::GETQ => "GETQ",
            Opcode::NOOP => "NOOP",
            Opcode::VERSION => "VERSION",
            Opcode::GETK => "GETK",
            Opcode::GETKQ => "GETKQ",
            Opcode::STAT => "STAT",
            _ => return None,
        })
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Opcode(0x{:02x})", self.0),
        }
    }
}

/// A response status (`protocol_binary_response_status`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Status(pub u16);

impl Status {
    /// Success.
    pub const OK: Status = Status(0x0000);
    /// The key is absent: a miss for a get, nothing deleted for a delete.
    pub const KEY_NOT_FOUND: Status = Status(0x0001);
    /// The key exists (a CAS mismatch, or `add` of a present key).
    pub const KEY_EXISTS: Status = Status(0x0002);
    /// The value is larger than the server's item size limit.
    pub const VALUE_TOO_LARGE: Status = Status(0x0003);
    /// Invalid arguments.
    pub const INVALID_ARGUMENTS: Status = Status(0x0004);
    /// The item was not stored.
    pub const NOT_STORED: Status = Status(0x0005);
    /// Authentication failed.
    pub const AUTH_ERROR: Status = Status(0x0020);
    /// Unknown command.
    pub const UNKNOWN_COMMAND: Status = Status(0x0081);
    /// The server is out of memory.
    pub const OUT_OF_MEMORY: Status = Status(0x0082);

    /// The status in words, as memcached's documentation names it.
    pub fn text(self) -> &'static str {
        match self.0 {
            0x0000 => "no error",
            0x0001 => "key not found",
            0x0002 => "key exists",
            0x0003 => "value too large",
            0x0004 => "invalid arguments",
            0x0005 => "item not stored",
            0x0006 => "incr/decr on a non-numeric value",
            0x0007 => "the vbucket belongs to another server",
            0x0008 | 0x0020 => "authentication error",
            0x0009 | 0x0021 => "authentication continue",
            0x0081 => "unknown command",
            0x0082 => "out of memory",
            0x0083 => "not supported",
            0x0084 => "internal error",
            0x0085 => "busy",
            0x0086 => "temporary failure",
            _ => "unknown status",
        }
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Status(0x{:04x} {})", self.0, self.text())
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (status 0x{:04x})", self.text(), self.0)
    }
}

/// Appends a request header.
#[inline]
fn header(
    out: &mut Vec<u8>,
    opcode: Opcode,
    key_len: usize,
    extras_len: u8,
    body_len: usize,
    opaque: u32,
) {
    out.push(REQUEST_MAGIC);
    out.push(opcode.0);
    out.extend_from_slice(&(key_len as u16).to_be_bytes());
    out.push(extras_len);
    out.push(0); // data type: raw bytes
    out.extend_from_slice(&[0, 0]); // vbucket
    out.extend_from_slice(&(body_len as u32).to_be_bytes());
    out.extend_from_slice(&opaque.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // CAS
}

/// A request of a key and nothing else.
#[inline]
fn key_only(out: &mut Vec<u8>, opcode: Opcode, key: &[u8], opaque: u32) {
    out.reserve(HEADER_LEN + key.len());
    header(out, opcode, key.len(), 0, key.len(), opaque);
    out.extend_from_slice(key);
}

/// `GET key`: the response has the value (status [`Status::OK`]) or status
/// [`Status::KEY_NOT_FOUND`]. Keys are 1 to 250 bytes, any bytes (unlike the text
/// protocol's, they may hold spaces and control characters).
///
/// ```
/// use kvlab_proto::memcache::binary;
/// let mut out = Vec::new();
/// binary::get(&mut out, b"k", 7);
/// assert_eq!(out.len(), binary::HEADER_LEN + 1);
/// assert_eq!(&out[..2], &[0x80, 0x00]);
/// assert_eq!(&out[12..16], &7u32.to_be_bytes()); // the opaque
/// ```
#[inline]
pub fn get(out: &mut Vec<u8>, key: &[u8], opaque: u32) {
    key_only(out, Opcode::GET, key, opaque);
}

/// `GETK key`: as [`get`], with the key in the response.
pub fn getk(out: &mut Vec<u8>, key: &[u8], opaque: u32) {
    key_only(out, Opcode::GETK, key, opaque);
}

/// `GETQ key`: as [`get`], but a miss answers nothing.
pub fn getq(out: &mut Vec<u8>, key: &[u8], opaque: u32) {
    key_only(out, Opcode::GETQ, key, opaque);
}

/// `GETKQ key`: as [`getk`], but a miss answers nothing. A multi-key get is one
/// `GETKQ` per key and a [`noop`]: the hits come back with their keys (and each
/// request's opaque), then the `NOOP`'s response ends the batch.
#[inline]
pub fn getkq(out: &mut Vec<u8>, key: &[u8], opaque: u32) {
    key_only(out, Opcode::GETKQ, key, opaque);
}

/// `SET key value` with the item's `flags` and `expiry` (0: never; up to 30 days,
/// relative seconds; above, a Unix time).
#[inline]
pub fn set(out: &mut Vec<u8>, key: &[u8], value: &[u8], flags: u32, expiry: u32, opaque: u32) {
    storage(out, Opcode::SET, key, value, flags, expiry, opaque);
}

/// `REPLACE key value`: as [`set`], but only over an existing item (else
/// [`Status::KEY_NOT_FOUND`]).
#[inline]
pub fn replace(out: &mut Vec<u8>, key: &[u8], value: &[u8], flags: u32, expiry: u32, opaque: u32) {
    storage(out, Opcode::REPLACE, key, value, flags, expiry, opaque);
}

#[inline]
fn storage(
    out: &mut Vec<u8>,
    opcode: Opcode,
    key: &[u8],
    value: &[u8],
    flags: u32,
    expiry: u32,
    opaque: u32,
) {
    out.reserve(HEADER_LEN + 8 + key.len() + value.len());
    header(
        out,
        opcode,
        key.len(),
        8,
        8 + key.len() + value.len(),
        opaque,
    );
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&expiry.to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// `DELETE key`: status [`Status::OK`], or [`Status::KEY_NOT_FOUND`] when absent.
pub fn delete(out: &mut Vec<u8>, key: &[u8], opaque: u32) {
    key_only(out, Opcode::DELETE, key, opaque);
}

/// `NOOP`: answered after every earlier request of the connection.
pub fn noop(out: &mut Vec<u8>, opaque: u32) {
    header(out, Opcode::NOOP, 0, 0, 0, opaque);
}

/// `VERSION`: the response's value is the version string.
pub fn version(out: &mut Vec<u8>, opaque: u32) {
    header(out, Opcode::VERSION, 0, 0, 0, opaque);
}

/// `STAT [group]`: one response per statistic, then one with an empty key.
pub fn stat(out: &mut Vec<u8>, group: Option<&[u8]>, opaque: u32) {
    key_only(out, Opcode::STAT, group.unwrap_or_default(), opaque);
}

/// `FLUSH`: removes every item.
pub fn flush(out: &mut Vec<u8>, opaque: u32) {
    header(out, Opcode::FLUSH, 0, 0, 0, opaque);
}

/// One response packet, borrowed from the read buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Response<'a> {
    /// The opcode of the request it answers.
    pub opcode: Opcode,
    /// The status: [`Status::OK`], [`Status::KEY_NOT_FOUND`] (a miss), or an error.
    pub status: Status,
    /// The request's opaque, echoed.
    pub opaque: u32,
    /// The item's CAS value (0 where none).
    pub cas: u64,
    /// The extras: a get's 4-byte item flags, else usually empty.
    pub extras: &'a [u8],
    /// The key (`GETK`, `GETKQ`, `STAT`), else empty.
    pub key: &'a [u8],
    /// The value: a get's item, `VERSION`'s version, an error's message.
    pub value: &'a [u8],
}

impl fmt::Debug for Response<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("opcode", &self.opcode)
            .field("status", &self.status)
            .field("opaque", &self.opaque)
            .field("cas", &self.cas)
            .field("extras", &Snippet::new(self.extras))
            .field("key", &Snippet::new(self.key))
            .field("value", &Snippet::new(self.value))
            .finish()
    }
}

impl Response<'_> {
    /// The item flags of a get's response (its 4 extras bytes), if there.
    pub fn item_flags(&self) -> Option<u32> {
        let b: [u8; 4] = self.extras.try_into().ok()?;
        Some(u32::from_be_bytes(b))
    }

    /// Whether the status is [`Status::OK`].
    pub fn is_ok(&self) -> bool {
        self.status == Status::OK
    }

    /// Appends the response as the server sends it (for tests and the fuzz target).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.push(RESPONSE_MAGIC);
        out.push(self.opcode.0);
        out.extend_from_slice(&(self.key.len() as u16).to_be_bytes());
        out.push(self.extras.len() as u8);
        out.push(0);
        out.extend_from_slice(&self.status.0.to_be_bytes());
        let body = self.extras.len() + self.key.len() + self.value.len();
        out.extend_from_slice(&(body as u32).to_be_bytes());
        out.extend_from_slice(&self.opaque.to_be_bytes());
        out.extend_from_slice(&self.cas.to_be_bytes());
        out.extend_from_slice(self.extras);
        out.extend_from_slice(self.key);
        out.extend_from_slice(self.value);
    }
}

/// Reads the response packet at the start of `buf`: `Ok(None)` while incomplete,
/// `Ok(Some((response, consumed)))` once whole, an error for a packet that is not a
/// response (wrong magic, a data type other than raw bytes, extras and key longer than
/// the body, a body above the limit). Limits: [`Limits::DEFAULT`].
///
/// ```
/// use kvlab_proto::memcache::binary::{self, Opcode, Status};
/// let miss = [0x81, 0x00, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0];
/// let mut buf = miss.to_vec();
/// buf.extend_from_slice(b"Not found");
/// assert_eq!(binary::parse(&buf[..30]).unwrap(), None); // not all there yet
/// let (r, n) = binary::parse(&buf).unwrap().unwrap();
/// assert_eq!((r.opcode, r.status, r.opaque, n), (Opcode::GET, Status::KEY_NOT_FOUND, 7, 33));
/// assert_eq!(r.value, b"Not found");
/// ```
#[inline]
pub fn parse(buf: &[u8]) -> Result<Option<(Response<'_>, usize)>, ProtoError> {
    parse_with(buf, &Limits::DEFAULT)
}

/// [`parse`] with explicit limits: a body longer than `limits.max_value_len` plus room
/// for the extras and a key is an error.
pub fn parse_with<'a>(
    buf: &'a [u8],
    limits: &Limits,
) -> Result<Option<(Response<'a>, usize)>, ProtoError> {
    // Check what is there as soon as it is there, so that a stream out of step fails
    // at once instead of waiting for 24 bytes that may never come.
    if let Some(&magic) = buf.first() {
        if magic != RESPONSE_MAGIC {
            return Err(ProtoError::UnexpectedByte {
                proto: P,
                expected: "the response magic byte 0x81",
                found: magic,
                offset: 0,
            });
        }
    }
    if let Some(&data_type) = buf.get(5) {
        if data_type != 0 {
            return Err(ProtoError::UnexpectedByte {
                proto: P,
                expected: "data type 0x00 (raw bytes)",
                found: data_type,
                offset: 5,
            });
        }
    }
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let be16 = |i: usize| u16::from_be_bytes([buf[i], buf[i + 1]]);
    let be32 = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    let key_len = be16(2) as usize;
    let extras_len = buf[4] as usize;
    let body_len = be32(8) as usize;
    let max_body = limits.max_value_len.saturating_add(1024);
    if body_len > max_body {
        return Err(ProtoError::TooLarge {
            proto: P,
            what: "body length",
            len: body_len as u64,
            max: max_body as u64,
            offset: 8,
        });
    }
    if extras_len + key_len > body_len {
        return Err(ProtoError::BadValue {
            proto: P,
            expected: "extras and key lengths within the body length",
            found: Snippet::new(&buf[..12]),
            offset: 2,
        });
    }
    let end = HEADER_LEN + body_len;
    if buf.len() < end {
        return Ok(None);
    }
    let body = &buf[HEADER_LEN..end];
    let cas = u64::from_be_bytes(buf[16..24].try_into().expect("8 header bytes"));
    Ok(Some((
        Response {
            opcode: Opcode(buf[1]),
            status: Status(be16(6)),
            opaque: be32(12),
            cas,
            extras: &body[..extras_len],
            key: &body[extras_len..extras_len + key_len],
            value: &body[extras_len + key_len..],
        },
        end,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_request_has_flags_expiry_key_and_value() {
        let mut out = Vec::new();
        set(&mut out, b"key", b"value", 0xdead_beef, 30, 9);
        assert_eq!(out.len(), HEADER_LEN + 8 + 3 + 5);
        assert_eq!(&out[..8], &[0x80, 0x01, 0, 3, 8, 0, 0, 0]);
        assert_eq!(&out[8..12], &16u32.to_be_bytes());
        assert_eq!(&out[12..16], &9u32.to_be_bytes());
        assert_eq!(&out[24..28], &0xdead_beefu32.to_be_bytes());
        assert_eq!(&out[28..32], &30u32.to_be_bytes());
        assert_eq!(&out[32..], b"keyvalue");
    }
}

//! RESP command encoding: arrays of bulk strings appended to a write buffer.

use crate::num;

/// Appends `$<len>\r\n<data>\r\n`.
#[inline]
pub(crate) fn put_bulk(out: &mut Vec<u8>, data: &[u8]) {
    out.reserve(data.len() + 16);
    put_bulk_header(out, data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// Appends `$<len>\r\n`; lengths below 1000 as one fixed-size copy.
#[inline]
fn put_bulk_header(out: &mut Vec<u8>, len: usize) {
    if len < 10 {
        out.extend_from_slice(&[b'$', b'0' + len as u8, b'\r', b'\n']);
    } else if len < 100 {
        let [a, b] = num::two_digits(len);
        out.extend_from_slice(&[b'$', a, b, b'\r', b'\n']);
    } else if len < 1000 {
        let [a, b] = num::two_digits(len % 100);
        out.extend_from_slice(&[b'$', b'0' + (len / 100) as u8, a, b, b'\r', b'\n']);
    } else {
        out.push(b'$');
        num::put_u64(out, len as u64);
        out.extend_from_slice(b"\r\n");
    }
}

/// Appends a bulk string holding `n` in decimal.
#[inline]
fn put_bulk_u64(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let start = num::fmt_u64(&mut digits, n);
    put_bulk(out, &digits[start..]);
}

/// Appends a bulk string holding `x` in its shortest round-tripping decimal form.
fn put_bulk_f64(out: &mut Vec<u8>, x: f64) {
    num::with_f64(x, |s| put_bulk(out, s));
}

/// Appends `*<argc>\r\n`.
#[inline]
fn put_array_header(out: &mut Vec<u8>, argc: usize) {
    out.push(b'*');
    num::put_u64(out, argc as u64);
    out.extend_from_slice(b"\r\n");
}

/// A command being appended to a write buffer: `*<argc>\r\n` then one bulk string per
/// argument.
///
/// The argument count is written first, so exactly `argc` arguments must follow (checked
/// in debug builds). Nothing is allocated beyond the buffer's growth.
///
/// ```
/// let mut out = Vec::new();
/// kvlab_proto::resp::Command::new(&mut out, 3).arg(b"INCRBY").arg(b"counter").arg_u64(5);
/// assert_eq!(out, b"*3\r\n$6\r\nINCRBY\r\n$7\r\ncounter\r\n$1\r\n5\r\n");
/// ```
#[derive(Debug)]
pub struct Command<'o> {
    out: &'o mut Vec<u8>,
    remaining: usize,
}

impl<'o> Command<'o> {
    /// Starts a command of `argc` arguments (the command name included).
    #[inline]
    pub fn new(out: &'o mut Vec<u8>, argc: usize) -> Command<'o> {
        put_array_header(out, argc);
        Command {
            out,
            remaining: argc,
        }
    }

    fn take_one(&mut self) {
        debug_assert!(self.remaining > 0, "more arguments than the declared argc");
        self.remaining = self.remaining.saturating_sub(1);
    }

    /// Appends an argument.
    #[inline]
    pub fn arg(&mut self, arg: &[u8]) -> &mut Self {
        self.take_one();
        put_bulk(self.out, arg);
        self
    }

    /// Appends an unsigned integer argument in decimal.
    #[inline]
    pub fn arg_u64(&mut self, n: u64) -> &mut Self {
        self.take_one();
        put_bulk_u64(self.out, n);
        self
    }

    /// Appends a signed integer argument in decimal.
    pub fn arg_i64(&mut self, n: i64) -> &mut Self {
        self.take_one();
        let mut digits = [0u8; 21];
        let mut tmp = [0u8; 20];
        let start = num::fmt_u64(&mut tmp, n.unsigned_abs());
        let mut len = 0;
        if n < 0 {
            digits[0] = b'-';
            len = 1;
        }
        digits[len..len + 20 - start].copy_from_slice(&tmp[start..]);
        len += 20 - start;
        put_bulk(self.out, &digits[..len]);
        self
    }

    /// Appends a floating point argument in its shortest round-tripping form (`1.5`,
    /// `1e300`, `inf`, `-inf`), as Redis reads scores.
    pub fn arg_f64(&mut self, x: f64) -> &mut Self {
        self.take_one();
        put_bulk_f64(self.out, x);
        self
    }

    /// How many of the declared arguments are still to be appended.
    pub fn remaining(&self) -> usize {
        self.remaining
    }
}

/// Appends a command given as a slice of arguments (the command name first).
///
/// ```
/// let mut out = Vec::new();
/// kvlab_proto::resp::encode_command(&mut out, &["LPUSH", "list", "x"]);
/// assert_eq!(out, b"*3\r\n$5\r\nLPUSH\r\n$4\r\nlist\r\n$1\r\nx\r\n");
/// ```
pub fn encode_command<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    put_array_header(out, args.len());
    for a in args {
        put_bulk(out, a.as_ref());
    }
}

/// `GET key`
#[inline]
pub fn get(out: &mut Vec<u8>, key: &[u8]) {
    out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
    put_bulk(out, key);
}

/// `SET key value`, or `SETEX key ttl_s value` with a time to live in seconds — the
/// command memtier_benchmark sends for a SET with a TTL (`redis_protocol::write_command_set`),
/// so that servers count it under `setex`.
#[inline]
pub fn set(out: &mut Vec<u8>, key: &[u8], value: &[u8], ttl_s: Option<u32>) {
    out.reserve(key.len() + value.len() + 48);
    set_head(out, key, ttl_s);
    put_bulk(out, value);
}

/// `SET key` or `SETEX key ttl`: everything before the value.
#[inline]
fn set_head(out: &mut Vec<u8>, key: &[u8], ttl_s: Option<u32>) {
    match ttl_s {
        None => {
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
            put_bulk(out, key);
        }
        Some(ttl) => {
            out.extend_from_slice(b"*4\r\n$5\r\nSETEX\r\n");
            put_bulk(out, key);
            put_bulk_u64(out, ttl as u64);
        }
    }
}

/// `SET key value` or `SETEX key ttl value` (as [`set`]) with a value of `len` bytes
/// that `write` appends to `out` (no intermediate buffer for a value encoded on the
/// fly).
pub fn set_with(
    out: &mut Vec<u8>,
    key: &[u8],
    len: usize,
    ttl_s: Option<u32>,
    write: impl FnOnce(&mut Vec<u8>),
) {
    out.reserve(key.len() + len + 48);
    set_head(out, key, ttl_s);
    out.push(b'$');
    num::put_u64(out, len as u64);
    out.extend_from_slice(b"\r\n");
    let before = out.len();
    write(out);
    debug_assert_eq!(out.len() - before, len, "the value's announced length");
    out.extend_from_slice(b"\r\n");
}

/// `DEL key`
pub fn del(out: &mut Vec<u8>, key: &[u8]) {
    out.extend_from_slice(b"*2\r\n$3\r\nDEL\r\n");
    put_bulk(out, key);
}

/// `MGET key [key ...]`
pub fn mget<K: AsRef<[u8]>>(out: &mut Vec<u8>, keys: &[K]) {
    put_array_header(out, 1 + keys.len());
    out.extend_from_slice(b"$4\r\nMGET\r\n");
    for k in keys {
        put_bulk(out, k.as_ref());
    }
}

/// `HSET key field value [field value ...]`.
///
/// # Panics
///
/// If `fields` yields a different number of pairs than its `len()` said (the count is
/// written before the pairs).
pub fn hset<'f, I>(out: &mut Vec<u8>, key: &[u8], fields: I)
where
    I: IntoIterator<Item = (&'f [u8], &'f [u8])>,
    I::IntoIter: ExactSizeIterator,
{
    let fields = fields.into_iter();
    let n = fields.len();
    put_array_header(out, 2 + 2 * n);
    out.extend_from_slice(b"$4\r\nHSET\r\n");
    put_bulk(out, key);
    let mut written = 0;
    for (f, v) in fields {
        written += 1;
        assert!(written <= n, "hset: more fields than the iterator's len()");
        put_bulk(out, f);
        put_bulk(out, v);
    }
    assert_eq!(written, n, "hset: fewer fields than the iterator's len()");
}

/// `HGETALL key`
pub fn hgetall(out: &mut Vec<u8>, key: &[u8]) {
    out.extend_from_slice(b"*2\r\n$7\r\nHGETALL\r\n");
    put_bulk(out, key);
}

/// `HMGET key field [field ...]`
pub fn hmget<N: AsRef<[u8]>>(out: &mut Vec<u8>, key: &[u8], names: &[N]) {
    put_array_header(out, 2 + names.len());
    out.extend_from_slice(b"$5\r\nHMGET\r\n");
    put_bulk(out, key);
    for n in names {
        put_bulk(out, n.as_ref());
    }
}

/// `ZADD key score member`
pub fn zadd(out: &mut Vec<u8>, key: &[u8], score: f64, member: &[u8]) {
    out.extend_from_slice(b"*4\r\n$4\r\nZADD\r\n");
    put_bulk(out, key);
    put_bulk_f64(out, score);
    put_bulk(out, member);
}

/// `ZRANGEBYSCORE key min_score +inf LIMIT 0 count`: up to `count` members with a score of
/// at least `min_score`, lowest first (a YCSB scan on a sorted set).
pub fn zrangebyscore_limit(out: &mut Vec<u8>, key: &[u8], min_score: f64, count: u64) {
    out.extend_from_slice(b"*7\r\n$13\r\nZRANGEBYSCORE\r\n");
    put_bulk(out, key);
    put_bulk_f64(out, min_score);
    out.extend_from_slice(b"$4\r\n+inf\r\n$5\r\nLIMIT\r\n$1\r\n0\r\n");
    put_bulk_u64(out, count);
}

/// `AUTH password`, or `AUTH username password` (Redis 6 ACL users).
pub fn auth(out: &mut Vec<u8>, user: Option<&[u8]>, pass: &[u8]) {
    match user {
        Some(user) => {
            out.extend_from_slice(b"*3\r\n$4\r\nAUTH\r\n");
            put_bulk(out, user);
        }
        None => out.extend_from_slice(b"*2\r\n$4\r\nAUTH\r\n"),
    }
    put_bulk(out, pass);
}

/// `SELECT db`
pub fn select(out: &mut Vec<u8>, db: u32) {
    out.extend_from_slice(b"*2\r\n$6\r\nSELECT\r\n");
    put_bulk_u64(out, db as u64);
}

/// `HELLO protover`, or `HELLO protover AUTH username password`. Redis has no password-only
/// form of `HELLO ... AUTH`: pass `default` as the user name for a plain `requirepass`.
pub fn hello(out: &mut Vec<u8>, protover: u32, auth: Option<(&[u8], &[u8])>) {
    match auth {
        Some((user, pass)) => {
            out.extend_from_slice(b"*5\r\n$5\r\nHELLO\r\n");
            put_bulk_u64(out, protover as u64);
            out.extend_from_slice(b"$4\r\nAUTH\r\n");
            put_bulk(out, user);
            put_bulk(out, pass);
        }
        None => {
            out.extend_from_slice(b"*2\r\n$5\r\nHELLO\r\n");
            put_bulk_u64(out, protover as u64);
        }
    }
}

/// `PING`
pub fn ping(out: &mut Vec<u8>) {
    out.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
}

/// `INFO`, or `INFO section`.
pub fn info(out: &mut Vec<u8>, section: Option<&[u8]>) {
    match section {
        Some(s) => {
            out.extend_from_slice(b"*2\r\n$4\r\nINFO\r\n");
            put_bulk(out, s);
        }
        None => out.extend_from_slice(b"*1\r\n$4\r\nINFO\r\n"),
    }
}

/// `CLUSTER SLOTS` (answered by a reply for [`parse_cluster_slots`](super::parse_cluster_slots)).
pub fn cluster_slots(out: &mut Vec<u8>) {
    out.extend_from_slice(b"*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n");
}

/// `ASKING`: sent before retrying a command at the node named by an `-ASK` redirection.
pub fn asking(out: &mut Vec<u8>) {
    out.extend_from_slice(b"*1\r\n$6\r\nASKING\r\n");
}

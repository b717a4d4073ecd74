//! Redis Cluster: key slots, `MOVED`/`ASK` redirections, and the `CLUSTER SLOTS` reply.

use super::Frame;
use crate::error::ProtoError;

/// The number of hash slots in a Redis Cluster.
pub const SLOT_COUNT: u16 = 16384;

const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC16_TABLE: [u16; 256] = crc16_table();

/// CRC16-XMODEM (polynomial 0x1021, initial value 0, no reflection, no final xor), the
/// checksum Redis Cluster hashes keys with. `crc16(b"123456789") == 0x31C3`.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc = (crc << 8) ^ CRC16_TABLE[((crc >> 8) as u8 ^ b) as usize];
    }
    crc
}

/// The part of a key that is hashed: the hash tag between the first `{` and the next `}`
/// if that is not empty, else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = memchr::memchr(b'{', key) {
        let rest = &key[open + 1..];
        if let Some(close) = memchr::memchr(b'}', rest) {
            if close > 0 {
                return &rest[..close];
            }
        }
    }
    key
}

/// The cluster hash slot (0..16384) of a key: `crc16(hash_tag(key)) mod 16384`.
///
/// ```
/// use kvlab_proto::resp::key_slot;
/// assert_eq!(key_slot(b"foo"), 12182);
/// assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"{user1000}.followers"));
/// ```
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & (SLOT_COUNT - 1)
}

/// Which redirection a cluster node answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedirectKind {
    /// `MOVED`: the slot lives at another node from now on; update the slot map.
    Moved,
    /// `ASK`: retry this one command at the other node, preceded by `ASKING`.
    Ask,
}

/// A cluster redirection from an error reply: `MOVED <slot> <host:port>` or
/// `ASK <slot> <host:port>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Redirect<'a> {
    /// `MOVED` or `ASK`.
    pub kind: RedirectKind,
    /// The slot of the key.
    pub slot: u16,
    /// The node to go to, as sent: `host:port`, `[v6]:port`, or `:port` (Redis 7 with an
    /// unknown endpoint: the host of the node that answered).
    pub addr: &'a str,
}

impl<'a> Redirect<'a> {
    /// The host part of [`Redirect::addr`] (brackets of an IPv6 literal removed); empty for
    /// `:port`.
    pub fn host(&self) -> &'a str {
        let host = match self.addr.rsplit_once(':') {
            Some((h, _)) => h,
            None => self.addr,
        };
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
    }

    /// The port part of [`Redirect::addr`], if there is a valid one.
    pub fn port(&self) -> Option<u16> {
        self.addr.rsplit_once(':')?.1.parse().ok()
    }
}

/// Reads a `MOVED`/`ASK` redirection from an error message (without the leading `-`).
/// `None` for any other error.
///
/// ```
/// use kvlab_proto::resp::{parse_redirect, RedirectKind};
/// let r = parse_redirect(b"MOVED 3999 127.0.0.1:6381").unwrap();
/// assert_eq!((r.kind, r.slot, r.addr, r.port()), (RedirectKind::Moved, 3999, "127.0.0.1:6381", Some(6381)));
/// ```
pub fn parse_redirect(msg: &[u8]) -> Option<Redirect<'_>> {
    let (kind, rest) = if let Some(rest) = msg.strip_prefix(b"MOVED ") {
        (RedirectKind::Moved, rest)
    } else if let Some(rest) = msg.strip_prefix(b"ASK ") {
        (RedirectKind::Ask, rest)
    } else {
        return None;
    };
    let sp = memchr::memchr(b' ', rest)?;
    let slot = crate::num::parse_u64(&rest[..sp])?;
    if slot >= SLOT_COUNT as u64 {
        return None;
    }
    let addr = std::str::from_utf8(&rest[sp + 1..]).ok()?;
    if addr.is_empty() || addr.contains(' ') {
        return None;
    }
    Some(Redirect {
        kind,
        slot: slot as u16,
        addr,
    })
}

/// A node in a `CLUSTER SLOTS` reply: host (as sent; may be empty or `?` when unknown) and
/// port.
pub type NodeAddr = (String, u16);

/// One range of slots from a `CLUSTER SLOTS` reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRange {
    /// First slot of the range.
    pub start: u16,
    /// Last slot of the range (inclusive).
    pub end: u16,
    /// The master serving the range.
    pub master: NodeAddr,
    /// Its replicas, in the order sent.
    pub replicas: Vec<NodeAddr>,
}

const CTX: &str = "CLUSTER SLOTS";

fn shape(expected: &'static str, found: &Frame<'_>) -> ProtoError {
    ProtoError::UnexpectedFrame {
        context: CTX,
        expected,
        found: found.type_name(),
    }
}

fn slot_of(f: &Frame<'_>) -> Result<u16, ProtoError> {
    match f.as_integer() {
        Some(n) if (0..SLOT_COUNT as i64).contains(&n) => Ok(n as u16),
        _ => Err(shape("a slot number in 0..16384", f)),
    }
}

fn node_of(f: &Frame<'_>) -> Result<NodeAddr, ProtoError> {
    let node = f
        .as_aggregate()
        .filter(|a| a.len() >= 2)
        .ok_or_else(|| shape("a node: an array of host, port, …", f))?;
    let mut it = node.iter();
    let (Some(host), Some(port)) = (it.next(), it.next()) else {
        return Err(shape("a node: an array of host, port, …", f));
    };
    let host = match host {
        Frame::Bulk(None) | Frame::Null => String::new(),
        _ => {
            let bytes = host
                .as_bytes()
                .ok_or_else(|| shape("a host name string", &host))?;
            String::from_utf8_lossy(bytes).into_owned()
        }
    };
    let port = match port.as_integer() {
        Some(p) if (0..=u16::MAX as i64).contains(&p) => p as u16,
        _ => return Err(shape("a port number", &port)),
    };
    Ok((host, port))
}

/// Reads the reply to `CLUSTER SLOTS` (RESP2 or RESP3): one [`SlotRange`] per entry, in the
/// order sent. Extra node fields (node id, metadata) are ignored.
pub fn parse_cluster_slots(frame: &Frame<'_>) -> Result<Vec<SlotRange>, ProtoError> {
    let Frame::Array(Some(ranges)) = frame else {
        return Err(shape("an array of slot ranges", frame));
    };
    let mut out = Vec::with_capacity(ranges.len());
    for entry in ranges.iter() {
        let items = entry
            .as_aggregate()
            .filter(|a| a.len() >= 3)
            .ok_or_else(|| shape("a slot range: an array of start, end, master, …", &entry))?;
        let mut it = items.iter();
        let (Some(start), Some(end), Some(master)) = (it.next(), it.next(), it.next()) else {
            return Err(shape(
                "a slot range: an array of start, end, master, …",
                &entry,
            ));
        };
        let start = slot_of(&start)?;
        let end_slot = slot_of(&end)?;
        if end_slot < start {
            return Err(shape(
                "a slot range whose end is not before its start",
                &end,
            ));
        }
        let master = node_of(&master)?;
        let replicas = it.map(|r| node_of(&r)).collect::<Result<Vec<_>, _>>()?;
        out.push(SlotRange {
            start,
            end: end_slot,
            master,
            replicas,
        });
    }
    Ok(out)
}

//! Redis RESP2/RESP3: command encoding, reply parsing, and cluster helpers.
//!
//! - Encoding appends to a `Vec<u8>` write buffer: [`Command`] builds any command
//!   argument by argument, [`encode_command`] takes a slice, and the specialised encoders
//!   ([`get`], [`set`], [`hset`], [`zrangebyscore_limit`], …) write the commands a workload
//!   sends most, from pre-encoded constant prefixes.
//! - Parsing reads one [`Frame`] from the start of a read buffer with [`parse`]:
//!   `Ok(None)` means incomplete (read more), `Ok(Some((frame, consumed)))` a whole frame.
//!   Frames borrow from the buffer; aggregates are lazy [`Aggregate`] views, so parsing
//!   allocates nothing. [`skip`] only finds where a frame ends. [`Limits`] bound lengths
//!   and nesting.
//! - Cluster: [`key_slot`] maps a key to its hash slot, [`parse_redirect`] reads `MOVED`
//!   and `ASK` errors, [`parse_cluster_slots`] the `CLUSTER SLOTS` reply.
//!
//! A pipeline round trip:
//!
//! ```
//! use kvlab_proto::resp::{self, Frame};
//! let mut out = Vec::new();
//! resp::set(&mut out, b"k", b"v", None);
//! resp::get(&mut out, b"k");
//! // ... write `out`, read replies into `buf` ...
//! let buf = b"+OK\r\n$1\r\nv\r\n";
//! let n = resp::skip(buf).unwrap().unwrap();
//! let (frame, m) = resp::parse(&buf[n..]).unwrap().unwrap();
//! assert_eq!(frame, Frame::Bulk(Some(b"v")));
//! assert_eq!(n + m, buf.len());
//! ```

mod cluster;
mod encode;
mod parse;

pub use cluster::{
    crc16, hash_tag, key_slot, parse_cluster_slots, parse_redirect, NodeAddr, Redirect,
    RedirectKind, SlotRange, SLOT_COUNT,
};
pub use encode::{
    asking, auth, cluster_slots, del, encode_command, get, hello, hgetall, hmget, hset, info, mget,
    ping, select, set, set_with, zadd, zrangebyscore_limit, Command,
};
pub use parse::{
    parse, parse_with, skip, skip_with, Aggregate, Elements, Frame, Limits, Pairs, MAX_DEPTH,
};

//! The `redis` store: any server that speaks RESP (Redis, Valkey, Dragonfly, KeyDB,
//! Kvrocks…), one node or a Redis Cluster, over plain TCP, TLS or a UNIX domain socket
//! (`redis+unix:///path?db=N`), RESP2 or RESP3.
//!
//! Two data models (`redis.model`):
//!
//! - `hash` (YCSB's redis binding): a record is a hash — insert and update are
//!   `HSET key field value…`, a read is `HGETALL` (or `HMGET` of the named fields), a
//!   delete is `DEL`; inserts also `ZADD` the key to a sorted-set index (`_indices`)
//!   and scans walk it and then read each key. By default ([`IndexOrder::Ycsb`]) the
//!   index is YCSB's: a member scores the key's Java `String.hashCode`, and a scan is
//!   `ZRANGEBYSCORE index hashCode(start) +inf LIMIT 0 n`, so a "scan" returns keys in
//!   hash order, and a data set loaded by kvlab is scanned by YCSB as its own.
//!   With [`IndexOrder::Key`] every member scores 0 and scans use
//!   `ZRANGEBYLEX index [key + LIMIT 0 n`: a scan returns the keys that follow the start
//!   key in key order, as on every other store.
//! - `string` (memtier's): a record is one value — `SET key value` (`SETEX key ttl
//!   value` with a TTL), `GET`, `DEL`; a record of several fields is stored in kvlab's
//!   field encoding, and a partial update reads, merges and writes it back. No scans.
//!
//! A multi-key read ([`Request::is_multi_read`], memtier's `--multi-key-get`) is one
//! `MGET` in the string model: each non-nil element is a hit, returned as a reply field
//! named by its key. The hash model has no multi-key read of hashes and refuses it. In a
//! Redis Cluster, where an `MGET` across hash slots is refused (`CROSSSLOT`), the keys
//! are grouped by slot: one `MGET` per slot to the slot's node, all in flight together,
//! each following its own redirections; their hits, misses and bytes make one
//! [`Outcome::MultiRead`], and found values come back in the order the groups answer.
//!
//! A session is one connection per node. It encodes the whole batch (the pipeline),
//! writes it, then parses the replies as they arrive; each request is timed to its own
//! reply (to the socket read that brought it: replies of one read share one clock
//! read). A request may take several commands (an insert's `HSET` and `ZADD`, a scan's
//! `ZRANGEBYSCORE` or `ZRANGEBYLEX` and reads) and, in a cluster, several nodes: the session works in
//! rounds until every request of the batch is complete, following `MOVED` and `ASK`
//! redirections, and sending again, after a pause, an `MGET` answered `-TRYAGAIN` (its
//! slot's keys split by a resharding in progress). The common batch — one server, not a cluster, every request one
//! command (GET, SET, DEL, MGET, HGETALL, HMGET, a hash update's HSET) — is sent and
//! read in one pass without that bookkeeping.
//!
//! The module is a folder by concern: `config` (options, data models, the scan index's
//! order), `store` (opening, shared state, `INFO` statistics), `session` (a batch in
//! flight, cluster rounds) and `reply` (encoding commands, replies into outcomes).

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use kvlab_core::StoreOptions;
use kvlab_core::{
    Batch, Capabilities, OpKind, Outcome, Record, Request, Session, Slot, StatValue, Store,
    StoreError, StoreErrorKind, StoreStats, Timestamp, ValueLayout, ValueRef,
};
use kvlab_proto::resp::{self, Frame};

use crate::conn::{tls_settings, Addr, Conn, Endpoint, Link, Recycle, Tls, TlsVersion};
use crate::url::{resolve_host, AddressFamily, ServerUrl};

mod config;
mod reply;
mod session;
mod store;

use config::*;
use reply::*;
use session::*;
use store::*;

pub use config::{
    java_string_hash, ClusterMode, IndexOrder, Model, RedisConfig, MAX_DATA_OFFSET, OPTION_NAMES,
};
pub use session::RedisSession;
pub use store::RedisStore;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_offset_makes_writes_setrange_and_reads_getrange() {
        let mut req = Request {
            kind: OpKind::Insert,
            key: b"k1".to_vec(),
            ..Request::default()
        };
        req.value.set_blob(b"abc");
        req.read.set_blob();
        let mut out = Vec::new();
        encode_single(
            &mut out,
            Part::Write,
            Model::String,
            10,
            &ValueLayout::Encoded,
            &req,
        );
        assert_eq!(
            out,
            b"*4\r\n$8\r\nSETRANGE\r\n$2\r\nk1\r\n$2\r\n10\r\n$3\r\nabc\r\n"
        );
        req.kind = OpKind::Read;
        out.clear();
        encode_single(
            &mut out,
            Part::Get,
            Model::String,
            10,
            &ValueLayout::Encoded,
            &req,
        );
        assert_eq!(
            out,
            b"*4\r\n$8\r\nGETRANGE\r\n$2\r\nk1\r\n$2\r\n10\r\n$2\r\n-1\r\n"
        );
        out.clear();
        encode_single(
            &mut out,
            Part::Get,
            Model::String,
            0,
            &ValueLayout::Encoded,
            &req,
        );
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n");
        let o = |pairs: &[(&str, &str)]| {
            StoreOptions::new(
                "redis.",
                pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            )
        };
        let c = RedisConfig::from_options(
            "redis://h:1",
            Model::String,
            o(&[("redis.data_offset", "7")]),
        )
        .unwrap();
        assert_eq!(c.data_offset, 7);
        for (model, offset, message) in [
            (Model::Hash, "7", "redis.model=string"),
            (Model::String, "536870912", "0 to 536870911"),
            (Model::String, "-1", "0 to"),
        ] {
            let e = RedisConfig::from_options(
                "redis://h:1",
                model,
                o(&[("redis.data_offset", offset)]),
            )
            .unwrap_err();
            assert!(e.message.contains(message), "{e}");
        }
    }

    #[test]
    fn the_index_range_starts_at_the_key_inclusive() {
        let mut out = Vec::new();
        index_range(&mut out, IndexOrder::Key, b"_indices", b"user5", 10);
        assert_eq!(
            out,
            b"*7\r\n$11\r\nZRANGEBYLEX\r\n$8\r\n_indices\r\n$6\r\n[user5\r\n$1\r\n+\r\n\
              $5\r\nLIMIT\r\n$1\r\n0\r\n$2\r\n10\r\n"
        );
    }

    /// Scores computed by Java 17: `"user6284781860667377211".hashCode()` (YCSB's key 0)
    /// and others, as YCSB 0.17.0's redis binding wrote them into `_indices`.
    #[test]
    fn index_scores_are_java_string_hash_codes() {
        assert_eq!(java_string_hash(b""), 0);
        assert_eq!(java_string_hash(b"a"), 97);
        assert_eq!(java_string_hash(b"user6284781860667377211"), -594_971_599);
        assert_eq!(java_string_hash(b"user3474177960281627268"), -1_813_444_199);
        assert_eq!(java_string_hash(b"user1361870457709653378"), 1_851_385_811);
        // Non-ASCII: UTF-16 code units, as Java's String ("é" is one unit, 0xE9).
        assert_eq!(java_string_hash("é".as_bytes()), 0xE9);
        let mut out = Vec::new();
        index_add(
            &mut out,
            IndexOrder::Ycsb,
            b"_indices",
            b"user3474177960281627268",
        );
        assert_eq!(
            out,
            b"*4\r\n$4\r\nZADD\r\n$8\r\n_indices\r\n$13\r\n-1813444199.0\r\n\
              $23\r\nuser3474177960281627268\r\n"
        );
        out.clear();
        index_range(
            &mut out,
            IndexOrder::Ycsb,
            b"_indices",
            b"user3474177960281627268",
            7,
        );
        assert_eq!(
            out,
            b"*7\r\n$13\r\nZRANGEBYSCORE\r\n$8\r\n_indices\r\n$13\r\n-1813444199.0\r\n\
              $4\r\n+inf\r\n$5\r\nLIMIT\r\n$1\r\n0\r\n$1\r\n7\r\n"
        );
    }

    #[test]
    fn options_are_validated() {
        let o = |pairs: &[(&str, &str)]| {
            StoreOptions::new(
                "redis.",
                pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
            )
        };
        let c = RedisConfig::from_options("redis://127.0.0.1:1", Model::Hash, o(&[])).unwrap();
        assert_eq!(
            (c.model, c.resp3, c.cluster, c.index_order),
            (Model::Hash, false, ClusterMode::Auto, IndexOrder::Ycsb)
        );
        let c = RedisConfig::from_options(
            "rediss://u:p@h:2/1",
            Model::Hash,
            o(&[("redis.model", "string"), ("redis.protocol", "resp3")]),
        )
        .unwrap();
        assert_eq!((c.model, c.resp3, c.url.db), (Model::String, true, Some(1)));
        let e = RedisConfig::from_options("redis://h:1", Model::Hash, o(&[("redis.modle", "x")]))
            .unwrap_err();
        assert!(e.message.contains("redis.modle"), "{e}");
        let e = RedisConfig::from_options("redis://h:1", Model::Hash, o(&[("redis.model", "x")]))
            .unwrap_err();
        assert!(e.message.contains("hash, string"), "{e}");
    }
}

//! One request of any trace, and what a trace says about itself.

use kvlab_core::OpKind;
use serde::{Deserialize, Serialize};

/// An operation, named as the trace formats name them: every format's op names are in
/// this one list, so `trace stats` can count them under the trace's own names and a
/// conversion keeps them.
///
/// Several names mean the same thing to a store (`Put`, `Set`, `Insert`, `Update`,
/// `Write` all write a value); [`Op::rocksdb_human_type`] and the replay mapping group
/// them.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// A point read (RocksDB `Get`, memcached/Twitter `get`, libCacheSim `get`).
    #[default]
    Get,
    /// memcached/Twitter `gets` (a read that also returns the CAS token).
    Gets,
    /// A block read (block traces: vscsi, MSR, Tencent, CSV with an op column).
    Read,
    /// RocksDB `Put` (inside a WriteBatch).
    Put,
    /// memcached/Twitter/libCacheSim `set`.
    Set,
    /// memcached/Twitter `add`.
    Add,
    /// memcached/Twitter `replace`.
    Replace,
    /// memcached/Twitter `cas`.
    Cas,
    /// memcached/Twitter `append`.
    Append,
    /// memcached/Twitter `prepend`.
    Prepend,
    /// memcached/Twitter `incr`.
    Incr,
    /// memcached/Twitter `decr`.
    Decr,
    /// A block write.
    Write,
    /// YCSB `INSERT` (runs kvlab recorded).
    Insert,
    /// YCSB `UPDATE` (runs kvlab recorded).
    Update,
    /// YCSB `READ-MODIFY-WRITE` (runs kvlab recorded).
    ReadModifyWrite,
    /// A delete (RocksDB `Delete`, memcached/Twitter `delete`).
    Delete,
    /// RocksDB `SingleDelete`.
    SingleDelete,
    /// RocksDB `DeleteRange` (the key is the range's begin).
    DeleteRange,
    /// RocksDB `Merge`.
    Merge,
    /// RocksDB `PutEntity` (wide-column put).
    PutEntity,
    /// RocksDB `IteratorSeek`: the scan length is the number of `Next`s, when known.
    Seek,
    /// RocksDB `IteratorSeekForPrev`.
    SeekForPrev,
    /// YCSB `SCAN` (runs kvlab recorded): `scan_len` records from the key on.
    Scan,
    /// One key of a RocksDB `MultiGet` (each key is its own record; see
    /// [`TraceRecord::batch_len`]).
    MultiGet,
    /// Anything else a format names (kept so nothing is silently dropped).
    Other,
}

impl Op {
    /// Every op, in declaration order.
    pub const ALL: [Op; 26] = [
        Op::Get,
        Op::Gets,
        Op::Read,
        Op::Put,
        Op::Set,
        Op::Add,
        Op::Replace,
        Op::Cas,
        Op::Append,
        Op::Prepend,
        Op::Incr,
        Op::Decr,
        Op::Write,
        Op::Insert,
        Op::Update,
        Op::ReadModifyWrite,
        Op::Delete,
        Op::SingleDelete,
        Op::DeleteRange,
        Op::Merge,
        Op::PutEntity,
        Op::Seek,
        Op::SeekForPrev,
        Op::Scan,
        Op::MultiGet,
        Op::Other,
    ];

    /// The op's name, lower case, as its formats spell it (`get`, `put`, `set`,
    /// `seekforprev`, `multiget`, `readmodifywrite`…).
    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Gets => "gets",
            Op::Read => "read",
            Op::Put => "put",
            Op::Set => "set",
            Op::Add => "add",
            Op::Replace => "replace",
            Op::Cas => "cas",
            Op::Append => "append",
            Op::Prepend => "prepend",
            Op::Incr => "incr",
            Op::Decr => "decr",
            Op::Write => "write",
            Op::Insert => "insert",
            Op::Update => "update",
            Op::ReadModifyWrite => "readmodifywrite",
            Op::Delete => "delete",
            Op::SingleDelete => "singledelete",
            Op::DeleteRange => "deleterange",
            Op::Merge => "merge",
            Op::PutEntity => "putentity",
            Op::Seek => "seek",
            Op::SeekForPrev => "seekforprev",
            Op::Scan => "scan",
            Op::MultiGet => "multiget",
            Op::Other => "other",
        }
    }

    /// The op named `name` (as [`Op::name`] spells it, any case).
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL
            .into_iter()
            .find(|op| op.name().eq_ignore_ascii_case(name))
    }

    /// The type id RocksDB's `trace_analyzer -convert_to_human_readable_trace` prints:
    /// 0 Get, 1 Put, 2 Delete, 3 SingleDelete, 4 RangeDelete, 5 Merge, 6 IteratorSeek,
    /// 7 IteratorSeekForPrev, 8 MultiGet, 9 PutEntity. Reads of other formats are 0,
    /// writes 1, scans 6; a read-modify-write is 1 (it writes).
    pub fn rocksdb_human_type(self) -> u8 {
        match self {
            Op::Get | Op::Gets | Op::Read | Op::Other => 0,
            Op::Put
            | Op::Set
            | Op::Add
            | Op::Replace
            | Op::Cas
            | Op::Append
            | Op::Prepend
            | Op::Incr
            | Op::Decr
            | Op::Write
            | Op::Insert
            | Op::Update
            | Op::ReadModifyWrite => 1,
            Op::Delete => 2,
            Op::SingleDelete => 3,
            Op::DeleteRange => 4,
            Op::Merge => 5,
            Op::Seek | Op::Scan => 6,
            Op::SeekForPrev => 7,
            Op::MultiGet => 8,
            Op::PutEntity => 9,
        }
    }

    /// The operation kvlab counts this request as when it replays it (and records it
    /// from): YCSB's kinds, as `result.json`, the latency log and the Prometheus `op`
    /// label name them. Reads (and each MultiGet key) are `READ`; seeks and scans
    /// `SCAN`; deletes `DELETE`; a recorded update `UPDATE` and read-modify-write
    /// `READ-MODIFY-WRITE`; every other write sets its key, `INSERT`. `None` for what a
    /// replay skips: RocksDB's `DeleteRange` and ops a format names that kvlab does not
    /// know. (A replay sends a recorded read-modify-write as the write it ended with.)
    pub fn kind(self) -> Option<OpKind> {
        Some(match self {
            Op::Seek | Op::SeekForPrev | Op::Scan => OpKind::Scan,
            op if op.is_read() => OpKind::Read,
            Op::Delete | Op::SingleDelete => OpKind::Delete,
            Op::DeleteRange | Op::Other => return None,
            Op::Update => OpKind::Update,
            Op::ReadModifyWrite => OpKind::ReadModifyWrite,
            _ => OpKind::Insert,
        })
    }

    /// True for ops that read without writing.
    pub fn is_read(self) -> bool {
        matches!(
            self,
            Op::Get | Op::Gets | Op::Read | Op::MultiGet | Op::Seek | Op::SeekForPrev | Op::Scan
        )
    }

    /// True for ops that write a value (a delete is not one).
    pub fn is_write(self) -> bool {
        self.rocksdb_human_type() == 1 || matches!(self, Op::Merge | Op::PutEntity)
    }

    /// True for ops that remove keys.
    pub fn is_delete(self) -> bool {
        matches!(self, Op::Delete | Op::SingleDelete | Op::DeleteRange)
    }
}

/// How a request ended, for runs kvlab recorded (other traces: [`Outcome::Unknown`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Not recorded.
    #[default]
    Unknown,
    /// Found / written.
    Hit,
    /// Not found.
    Miss,
    /// Failed.
    Error,
}

/// Whether a trace's keys are byte strings or numeric ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyEncoding {
    /// Keys are byte strings ([`TraceRecord::key`]); [`TraceRecord::id`] is
    /// [`key_id`] of them.
    #[default]
    Bytes,
    /// Keys are numeric ids ([`TraceRecord::id`]); [`TraceRecord::key`] is empty.
    Id,
}

/// The unit of a trace's timestamps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Millis,
    /// Microseconds (RocksDB traces).
    #[default]
    Micros,
    /// Nanoseconds (runs kvlab recorded).
    Nanos,
    /// 100-nanosecond ticks (Windows FILETIME: MSR Cambridge).
    Filetime,
    /// No clock: the timestamp is the request's position (traces without time).
    Sequence,
}

impl TraceInfo {
    /// A [`TraceInfo::meta`] entry's value.
    pub fn meta_value(&self, name: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The wall-clock time of timestamp 0 in nanoseconds since the Unix epoch, when
    /// the trace states it: a recording's [`STARTED_UNIX_NS`]; FILETIME traces count
    /// from 1601-01-01; 0 for every other trace (its timestamps are taken as counted
    /// from the epoch, which is what they are for Unix-time traces).
    pub fn origin_unix_ns(&self) -> i128 {
        if let Some(ns) = self
            .meta_value(STARTED_UNIX_NS)
            .and_then(|v| v.parse().ok())
        {
            return ns;
        }
        match self.time_unit {
            // 1601-01-01 to 1970-01-01: 11 644 473 600 s.
            TimeUnit::Filetime => -11_644_473_600 * 1_000_000_000,
            _ => 0,
        }
    }

    /// Whether a record's [`TraceRecord::value_size`] says the object's size: the
    /// trace carries sizes, and the record is not a read that returned none (a
    /// recorded read of a missing key, or of a store that sends no value back).
    pub fn knows_value_size(&self, rec: &TraceRecord) -> bool {
        self.has_sizes && !(rec.value_size == 0 && rec.op.is_read())
    }
}

impl TimeUnit {
    /// Nanoseconds in one unit; `None` for [`TimeUnit::Sequence`].
    pub fn nanos(self) -> Option<u64> {
        match self {
            TimeUnit::Seconds => Some(1_000_000_000),
            TimeUnit::Millis => Some(1_000_000),
            TimeUnit::Micros => Some(1_000),
            TimeUnit::Nanos => Some(1),
            TimeUnit::Filetime => Some(100),
            TimeUnit::Sequence => None,
        }
    }
}

/// The [`TraceInfo::meta`] entry of a recording holding the wall-clock time of its
/// timestamp 0, in nanoseconds since the Unix epoch.
pub const STARTED_UNIX_NS: &str = "started_unix_ns";

/// What a trace says about itself: set by its reader before the first record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceInfo {
    /// The reader's name (`rocksdb`, `oracleGeneral`, `twitter`, `kvtrace`…).
    pub format: String,
    /// Byte keys or numeric ids.
    pub key_encoding: KeyEncoding,
    /// The unit of [`TraceRecord::ts`].
    pub time_unit: TimeUnit,
    /// Whether records carry sizes ([`TraceRecord::value_size`] is meaningful).
    pub has_sizes: bool,
    /// Whether records carry [`TraceRecord::next_access`].
    pub has_next_access: bool,
    /// Whether records carry an outcome and latency (runs kvlab recorded).
    pub has_outcomes: bool,
    /// Free-form facts of the source (kvtrace's header: kvlab version, workload, seed,
    /// RocksDB's trace and RocksDB versions…), kept by conversions.
    pub meta: Vec<(String, String)>,
}

/// One request. Readers fill it in place ([`TraceRecord::clear`] first), so the key
/// buffer is reused from record to record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceRecord {
    /// Timestamp in [`TraceInfo::time_unit`].
    pub ts: u64,
    /// The operation.
    pub op: Op,
    /// The key's bytes ([`KeyEncoding::Bytes`]); empty for id traces.
    pub key: Vec<u8>,
    /// The key's id: the trace's own for [`KeyEncoding::Id`], [`key_id`] of
    /// [`TraceRecord::key`] otherwise. Caches and analyses key on it.
    pub id: u64,
    /// The key's size in bytes as the trace states it (Twitter's key size; the key's
    /// length for byte keys; 0 when unknown).
    pub key_size: u32,
    /// The value's size in bytes (a write's value; the object's size in cache and block
    /// traces; 0 when the trace has none for this request).
    pub value_size: u64,
    /// Records a scan asks for (0: not a scan, or not recorded).
    pub scan_len: u32,
    /// Time to live in seconds (0: none).
    pub ttl_s: u32,
    /// Column family (RocksDB), tenant (libCacheSim lcs), client id (Twitter), volume
    /// (Tencent), disk (MSR); 0 when the trace has none.
    pub cf: u32,
    /// Index of this record's next request to the same key (libCacheSim's
    /// `next_access_vtime`); -1: never again, or not known.
    pub next_access: i64,
    /// A RocksDB WriteBatch or MultiGet becomes one record per entry: the number of
    /// entries in it (1 for a lone request) …
    pub batch_len: u32,
    /// … and this record's position in it (0-based).
    pub batch_pos: u32,
    /// For runs kvlab recorded: how the request ended.
    pub outcome: Outcome,
    /// For runs kvlab recorded: service latency in nanoseconds (0 when not recorded).
    pub latency_ns: u64,
    /// For runs kvlab recorded: when the request was due (open loop), in nanoseconds
    /// from the start of the phase; equal to the actual start in a closed loop.
    pub intended_ns: u64,
    /// RocksDB `IteratorSeek`/`SeekForPrev`: the iterator's lower bound (empty: none).
    pub lower_bound: Vec<u8>,
    /// RocksDB `IteratorSeek`/`SeekForPrev`: the iterator's upper bound; RocksDB
    /// `DeleteRange`: the range's (exclusive) end key. Empty: none.
    pub upper_bound: Vec<u8>,
}

impl TraceRecord {
    /// Resets every field (keeping the key buffer's allocation).
    #[inline]
    pub fn clear(&mut self) {
        // Field by field, not `*self = …`: this runs once per record. Destructured, so
        // that a new field cannot be forgotten here.
        let TraceRecord {
            ts,
            op,
            key,
            id,
            key_size,
            value_size,
            scan_len,
            ttl_s,
            cf,
            next_access,
            batch_len,
            batch_pos,
            outcome,
            latency_ns,
            intended_ns,
            lower_bound,
            upper_bound,
        } = self;
        *ts = 0;
        *op = Op::Get;
        key.clear();
        *id = 0;
        *key_size = 0;
        *value_size = 0;
        *scan_len = 0;
        *ttl_s = 0;
        *cf = 0;
        *next_access = -1;
        *batch_len = 1;
        *batch_pos = 0;
        *outcome = Outcome::Unknown;
        *latency_ns = 0;
        *intended_ns = 0;
        lower_bound.clear();
        upper_bound.clear();
    }

    /// The object's size as caches count it: key size plus value size (libCacheSim's
    /// reading of Twitter traces; for id traces the key size is 0, so it is the traced
    /// object size).
    #[inline]
    pub fn obj_size(&self) -> u64 {
        u64::from(self.key_size) + self.value_size
    }

    /// Sets a byte key: copies it, its length as the key size, and its [`key_id`].
    #[inline]
    pub fn set_key(&mut self, key: &[u8]) {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.key_size = u32::try_from(key.len()).unwrap_or(u32::MAX);
        self.id = key_id(key);
    }
}

/// The id of a byte key: 64-bit FNV-1a. Every reader of byte keys uses it, so the same
/// key has the same id in every format (a cache simulation of a trace and of its
/// conversion agree).
#[inline]
pub fn key_id(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_round_trip_and_are_distinct() {
        let mut names: Vec<_> = Op::ALL.iter().map(|op| op.name()).collect();
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
            assert_eq!(Op::from_name(&op.name().to_uppercase()), Some(op));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Op::ALL.len());
    }

    #[test]
    fn clear_keeps_the_key_buffer_and_resets_the_rest() {
        let mut r = TraceRecord::default();
        r.set_key(b"user1");
        r.value_size = 9;
        let cap = r.key.capacity();
        r.clear();
        assert!(r.key.is_empty());
        assert_eq!(r.key.capacity(), cap);
        assert_eq!((r.value_size, r.next_access, r.batch_len), (0, -1, 1));
    }

    #[test]
    fn key_id_is_fnv1a_64() {
        // FNV-1a 64 of "" and "a", the reference values of the FNV specification.
        assert_eq!(key_id(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(key_id(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}

//! Operations, outcomes and the [`Store`]/[`Session`] traits.

use std::fmt;
use std::future::Future;

use crate::value::{ReadFields, ReadShape, Value};
use crate::{Record, Timestamp};

/// The kind of an operation, named as YCSB reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// Read one record (all fields, those [`Request::read`] names, or one blob).
    Read,
    /// Overwrite some or all fields of an existing record.
    Update,
    /// Insert a new record.
    Insert,
    /// Read up to [`Request::scan_len`] records in key order starting at the key.
    Scan,
    /// A read followed by an update of the same key. Stores never see this kind: the
    /// runner executes it as a [`OpKind::Read`] and then an [`OpKind::Update`] and
    /// measures the pair as well as each half, as YCSB does.
    ReadModifyWrite,
    /// Remove a record.
    Delete,
}

impl OpKind {
    /// Every kind, in report order.
    pub const ALL: [OpKind; 6] = [
        OpKind::Read,
        OpKind::Update,
        OpKind::Insert,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Delete,
    ];

    /// The name YCSB prints in its reports: `READ`, `UPDATE`, `INSERT`, `SCAN`,
    /// `READ-MODIFY-WRITE`, `DELETE`.
    pub fn ycsb_name(self) -> &'static str {
        match self {
            OpKind::Read => "READ",
            OpKind::Update => "UPDATE",
            OpKind::Insert => "INSERT",
            OpKind::Scan => "SCAN",
            OpKind::ReadModifyWrite => "READ-MODIFY-WRITE",
            OpKind::Delete => "DELETE",
        }
    }

    /// [`OpKind::ycsb_name`] in lower case — `read`, `update`, `insert`, `scan`,
    /// `read-modify-write`, `delete` — the one spelling of the Prometheus `op` label and
    /// the Parquet `kind` column.
    pub fn label(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Insert => "insert",
            OpKind::Scan => "scan",
            OpKind::ReadModifyWrite => "read-modify-write",
            OpKind::Delete => "delete",
        }
    }

    /// A dense index in `0..6`, for per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for kinds that write data.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            OpKind::Update | OpKind::Insert | OpKind::Delete | OpKind::ReadModifyWrite
        )
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ycsb_name())
    }
}

/// A list of keys in one reusable buffer: the further keys of a multi-key read
/// ([`Request::more_keys`]). Cleared, not freed, between requests, so filling it does not
/// allocate once it has grown to the workload's size.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KeyList {
    bytes: Vec<u8>,
    /// End offset in `bytes` of each key.
    ends: Vec<u32>,
}

impl KeyList {
    /// An empty list.
    pub fn new() -> KeyList {
        KeyList::default()
    }

    /// Removes every key, keeping the capacity.
    #[inline]
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends a key.
    pub fn push(&mut self, key: &[u8]) {
        self.push_with(|out| out.extend_from_slice(key));
    }

    /// Appends a key that `write` appends to the given buffer (which holds the keys
    /// before it: `write` must only append), e.g. a prefix and a decimal number without
    /// a temporary.
    #[inline]
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(&mut self.bytes);
        self.ends.push(self.bytes.len() as u32);
    }

    /// Number of keys.
    #[inline]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when the list holds no key.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th key.
    ///
    /// # Panics
    ///
    /// When `i >= len()`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// The keys in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(move |i| self.get(i))
    }

    /// The total length of the keys, in bytes.
    #[inline]
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }
}

impl fmt::Debug for KeyList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.iter().map(String::from_utf8_lossy))
            .finish()
    }
}

/// One operation a workload asks a store to perform, in reusable owned buffers.
///
/// - `Insert`/`Update`: [`Request::value`] is what to write — named fields or one blob.
/// - `Read`: [`Request::read`] says what to read: every field, the fields it names, or
///   the value as one blob.
/// - `Scan`: `scan_len` records from `key` on, each read as [`Request::read`] says.
/// - `ReadModifyWrite` (split by the runner into a read and an update; stores never see
///   it): the read reads as [`Request::read`] says (e.g. YCSB's one random field), the
///   update writes [`Request::value`].
/// - `Delete`: only `key` matters.
/// - **Multi-key read** (memtier's `--multi-key-get`): a `Read` whose
///   [`Request::more_keys`] is not empty reads `key` and every key in `more_keys` in one
///   command (Redis `MGET`, memcached `get k1 … kN`). Each found key's stored value comes
///   back verbatim in `reply` as one field named by the key ([`Request::read`] does not
///   apply), and the outcome is [`Outcome::MultiRead`], which counts hits and misses per
///   key. Only stores that declare [`Capabilities::multi_read`] are given one.
/// - **Command** (memtier's `--command` and `WAIT`): when [`Request::command`] is set,
///   the request is that command, sent verbatim: [`Command::args`] holds its arguments,
///   the command name first. `kind` does not apply; `key` names the command's first key
///   (empty when it has none), for stores that route by key. Its reply may be of any
///   type: the outcome is [`Outcome::Replied`]. Only stores that declare
///   [`Capabilities::commands`] are given one.
/// - **Merge** (RocksDB's `Merge`, from a trace replay): the command `MERGE key operand`
///   ([`MERGE_COMMAND`]; [`Request::merge`] takes it apart), given only to stores that
///   declare [`Capabilities::merge`], which apply the operand with their merge operator;
///   the outcome is [`Outcome::Written`]. Being a command, its results are kept apart,
///   under the name `MERGE`.
///
/// **Blobs.** memtier-style, cache and trace workloads have no fields: a key maps to one
/// opaque value. Their writes carry a blob [`Value`] (owned, or a range of a shared
/// buffer) and their reads a blob [`ReadFields`]; stores keep the value bytes verbatim
/// (not the YCSB field encoding), and a blob read returns the value as a single unnamed
/// field of the reply.
#[derive(Clone, Debug)]
pub struct Request {
    /// What to do.
    pub kind: OpKind,
    /// The key, raw bytes (YCSB keys are ASCII, but stores must accept any bytes).
    pub key: Vec<u8>,
    /// What a write writes (fields or a blob).
    pub value: Value,
    /// What a read, scan or read-modify-write's read reads.
    pub read: ReadFields,
    /// Number of records a scan asks for.
    pub scan_len: u32,
    /// Time to live of a written value in seconds; 0 means no expiry. Stores without
    /// expiry ignore it.
    pub ttl_s: u32,
    /// The further keys of a multi-key read (see the type's docs); empty otherwise.
    pub more_keys: KeyList,
    /// An arbitrary command (see the type's docs), or none (`command.id` is `None`) for
    /// the operations of `kind`.
    pub command: Command,
}

/// The arbitrary command a [`Request`] sends, if any: one field, whose argument buffer is
/// kept from request to request (cleared, not freed), so a command workload does not
/// allocate once warm.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Command {
    /// The index the command's results are kept under; `None`: the request is not a
    /// command.
    pub id: Option<CommandId>,
    /// The command's arguments, its name first; empty when it is not a command.
    pub args: KeyList,
}

/// The name of the merge command ([`Request::merge`]).
pub const MERGE_COMMAND: &[u8] = b"MERGE";

impl Command {
    /// True when the request is this command (an id is set).
    #[inline]
    pub fn is_some(&self) -> bool {
        self.id.is_some()
    }

    /// Makes the request command `id` with no arguments yet (push them to
    /// [`Command::args`]).
    #[inline]
    pub fn start(&mut self, id: CommandId) {
        self.id = Some(id);
        self.args.clear();
    }
}

/// Which arbitrary command a [`Request`] is: a dense index, under which the runner keeps
/// the command's results beside those of the [`OpKind`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommandId(pub u16);

impl CommandId {
    /// The index, for per-command arrays.
    #[inline]
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl Request {
    /// The key and operand of a merge (see the type's docs): `Some` when the request is
    /// the command `MERGE key operand`.
    #[inline]
    pub fn merge(&self) -> Option<(&[u8], &[u8])> {
        let args = &self.command.args;
        (self.command.is_some() && args.len() == 3 && args.get(0) == MERGE_COMMAND)
            .then(|| (args.get(1), args.get(2)))
    }
}

impl Default for Request {
    fn default() -> Request {
        Request {
            kind: OpKind::Read,
            key: Vec::new(),
            value: Value::new(),
            read: ReadFields::new(),
            scan_len: 0,
            ttl_s: 0,
            more_keys: KeyList::new(),
            command: Command::default(),
        }
    }
}

impl Request {
    /// Resets to an all-fields read of an empty key, keeping buffer capacity.
    #[inline]
    pub fn clear(&mut self) {
        self.kind = OpKind::Read;
        self.key.clear();
        self.value.clear();
        self.read.set_all();
        self.read.set_discard(false);
        self.scan_len = 0;
        self.ttl_s = 0;
        self.more_keys.clear();
        if self.command.id.is_some() {
            self.command.id = None;
            self.command.args.clear();
        }
    }

    /// True for a multi-key read: a `Read` with [`Request::more_keys`].
    #[inline]
    pub fn is_multi_read(&self) -> bool {
        self.kind == OpKind::Read && !self.more_keys.is_empty()
    }

    /// Every key the request names: `key`, then [`Request::more_keys`].
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> + '_ {
        std::iter::once(self.key.as_slice()).chain(self.more_keys.iter())
    }

    /// Key `i` of the request: [`Request::key`] for 0, else [`Request::more_keys`]'s
    /// `i − 1`; `None` past [`Request::key_count`].
    pub fn key_at(&self, i: usize) -> Option<&[u8]> {
        match i {
            0 => Some(&self.key),
            _ if i < self.key_count() => Some(self.more_keys.get(i - 1)),
            _ => None,
        }
    }

    /// How many keys the request names (1 + [`Request::more_keys`]).
    pub fn key_count(&self) -> usize {
        1 + self.more_keys.len()
    }

    /// Appends the single value a key-value engine stores for this write
    /// ([`Value::encode_into`]).
    #[inline]
    pub fn encode_value(&self, out: &mut Vec<u8>) {
        self.value.encode_into(out);
    }

    /// Decodes a stored value into `reply` the way this read or scan asks
    /// ([`Request::read`]): a blob as one unnamed field; otherwise every field, or only
    /// the named ones. Returns the bytes of the values read ([`Outcome::Hit`]'s). A
    /// read that discards ([`ReadFields::set_discard`]) leaves `reply` empty and only
    /// counts them.
    #[inline]
    pub fn decode_value(&self, value: &[u8], reply: &mut Record) -> Result<u64, StoreError> {
        let read = &self.read;
        let wants = |n: &[u8]| read.wants(n);
        let only: Option<crate::record::FieldFilter<'_>> = match read.shape() {
            ReadShape::Blob => {
                reply.clear();
                if !read.discards() {
                    reply.push(b"", value);
                }
                return Ok(value.len() as u64);
            }
            ReadShape::All => None,
            ReadShape::Named => Some(&wants),
        };
        let result = if read.discards() {
            reply.clear();
            Record::encoded_value_bytes(value, only)
        } else {
            reply.decode_from(value, only).map(|()| reply.value_bytes())
        };
        result.map(|bytes| bytes as u64).map_err(|e| {
            StoreError::new(
                StoreErrorKind::Corrupt,
                format!("record `{}`: {e}", String::from_utf8_lossy(&self.key)),
            )
        })
    }

    /// What a write asks to store, in bytes, as [`Outcome::Written`] reports it: the key
    /// plus the value's size ([`Value::size_bytes`]).
    #[inline]
    pub fn written_bytes(&self) -> u64 {
        (self.key.len() + self.value.size_bytes()) as u64
    }
}

/// What an operation did. Misses are outcomes, not errors: a cache that does not hold
/// a key, or a read of a deleted record, is a normal result that workloads count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The key was found; `bytes` is the size of the value bytes returned.
    Hit {
        /// Bytes of value data returned.
        bytes: u64,
    },
    /// The key was not found.
    Miss,
    /// The write was applied; `bytes` is what the client asked to write: the key plus
    /// the record's field names and values (not the store's own encoding), so the figure
    /// compares across stores.
    Written {
        /// Bytes written (key + field names + values).
        bytes: u64,
    },
    /// A scan returned `records` records totalling `bytes` bytes of value data.
    Scanned {
        /// Records returned.
        records: u64,
        /// The first record returned has the start key itself (db_bench's `seek_found`:
        /// `Seek(key)` landed on `key`); false when the store cannot tell (network
        /// stores).
        starts_at_key: bool,
        /// Bytes of value data returned.
        bytes: u64,
    },
    /// The key was removed (or was already absent).
    Deleted,
    /// A multi-key read ([`Request::is_multi_read`]) found `hits` of its keys and not
    /// the other `misses`; `bytes` is the size of the values returned. It is one
    /// operation (one command, one latency), as memtier_benchmark counts an `MGET`, with
    /// hits and misses counted per key ([`Outcome::key_hits`]).
    MultiRead {
        /// Keys found.
        hits: u32,
        /// Keys not found.
        misses: u32,
        /// Bytes of value data returned.
        bytes: u64,
    },
    /// An arbitrary command ([`Request::command`]) was answered with a reply that is not
    /// an error (an error reply is a [`StoreError`]). A nil reply (`$-1`, `*-1`, RESP3
    /// `_`) is `NotFound`, any other `Ok`.
    Replied {
        /// Bytes of the reply's payload (bulk strings, simple strings, numbers).
        bytes: u64,
        /// The reply was nil.
        nil: bool,
    },
}

impl Outcome {
    /// The YCSB return status of this outcome.
    /// A multi-key read that found none of its keys is `NotFound`, like a miss.
    #[inline]
    pub fn status(self) -> Status {
        match self {
            Outcome::Miss
            | Outcome::MultiRead { hits: 0, .. }
            | Outcome::Replied { nil: true, .. } => Status::NotFound,
            _ => Status::Ok,
        }
    }

    /// Keys found and keys not found by a read, counted per key: `(1, 0)` for a hit,
    /// `(0, 1)` for a miss, each key of a multi-key read, and `(0, 0)` for what is not a
    /// read.
    #[inline]
    pub fn key_hits(self) -> (u64, u64) {
        match self {
            Outcome::Hit { .. } => (1, 0),
            Outcome::Miss => (0, 1),
            Outcome::MultiRead { hits, misses, .. } => (u64::from(hits), u64::from(misses)),
            _ => (0, 0),
        }
    }

    /// Bytes returned to the client by this outcome.
    #[inline]
    pub fn bytes_read(self) -> u64 {
        match self {
            Outcome::Hit { bytes }
            | Outcome::Scanned { bytes, .. }
            | Outcome::MultiRead { bytes, .. }
            | Outcome::Replied { bytes, .. } => bytes,
            _ => 0,
        }
    }

    /// Bytes sent to the store by this outcome.
    #[inline]
    pub fn bytes_written(self) -> u64 {
        match self {
            Outcome::Written { bytes } => bytes,
            _ => 0,
        }
    }
}

/// The return status of an operation, as YCSB reports it (`Return=OK`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    /// Succeeded.
    Ok,
    /// The key was not found.
    NotFound,
    /// Failed with a [`StoreError`].
    Error,
}

impl Status {
    /// Every status, in report order.
    pub const ALL: [Status; 3] = [Status::Ok, Status::NotFound, Status::Error];

    /// The name YCSB prints: `OK`, `NOT_FOUND`, `ERROR`.
    pub fn ycsb_name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::NotFound => "NOT_FOUND",
            Status::Error => "ERROR",
        }
    }

    /// A dense index in `0..3`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The broad kind of a store failure, for per-kind error counts (`result.json`'s
/// `results.errors`, the report's `[ERRORS]` lines).
///
/// A server that answers with an error reply is [`StoreErrorKind::Server`] (or
/// [`StoreErrorKind::Full`] when the reply says it is out of memory), never
/// [`StoreErrorKind::Protocol`], which is kept for replies that break the protocol: the
/// server's own text is kept in [`StoreError::message`] either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreErrorKind {
    /// The store refused an operation it does not support (e.g. scan on a hash table).
    Unsupported,
    /// Local I/O or engine failure.
    Io,
    /// A connection could not be made or was lost.
    Connection,
    /// No reply in time.
    Timeout,
    /// A reply that breaks the protocol: malformed, of the wrong type, or out of step.
    Protocol,
    /// Stored data that cannot be decoded.
    Corrupt,
    /// A configuration the store rejects.
    Config,
    /// The server answered the request with an error reply (Redis `-ERR …`, memcached
    /// `SERVER_ERROR …`/`CLIENT_ERROR …`, a binary error status).
    Server,
    /// The store is out of space and refuses writes: LMDB's `MDB_MAP_FULL` (its map
    /// size), Redis' `-OOM` (`maxmemory` with `noeviction`), memcached's
    /// `SERVER_ERROR out of memory`, WiredTiger's full cache, RocksDB's no-space error.
    Full,
}

impl StoreErrorKind {
    /// Every kind, in the order errors are reported.
    pub const ALL: [StoreErrorKind; 9] = [
        StoreErrorKind::Unsupported,
        StoreErrorKind::Io,
        StoreErrorKind::Connection,
        StoreErrorKind::Timeout,
        StoreErrorKind::Protocol,
        StoreErrorKind::Corrupt,
        StoreErrorKind::Config,
        StoreErrorKind::Server,
        StoreErrorKind::Full,
    ];

    /// A short lowercase name for reports.
    pub fn name(self) -> &'static str {
        match self {
            StoreErrorKind::Unsupported => "unsupported",
            StoreErrorKind::Io => "io",
            StoreErrorKind::Connection => "connection",
            StoreErrorKind::Timeout => "timeout",
            StoreErrorKind::Protocol => "protocol",
            StoreErrorKind::Corrupt => "corrupt",
            StoreErrorKind::Config => "config",
            StoreErrorKind::Server => "server",
            StoreErrorKind::Full => "full",
        }
    }

    /// A dense index in `0..9`, in [`StoreErrorKind::ALL`]'s order, for per-kind arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A failed operation or store setup.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.name())]
pub struct StoreError {
    /// What broadly went wrong.
    pub kind: StoreErrorKind,
    /// Details for a human.
    pub message: String,
}

impl StoreError {
    /// A new error of `kind`.
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            message: message.into(),
        }
    }

    /// The error a session returns when handed a [`OpKind::ReadModifyWrite`], which the
    /// runner always splits into a read and an update.
    pub fn read_modify_write_unsplit() -> StoreError {
        StoreError::new(
            StoreErrorKind::Unsupported,
            "read-modify-write is executed by the runner as a read and an update",
        )
    }

    /// The error a store returns for a multi-key read ([`Request::is_multi_read`]) it
    /// cannot send as one command.
    pub fn multi_read_unsupported(store: &str) -> StoreError {
        StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "{store} cannot read several keys in one request (memtier --multi-key-get); \
                 the redis (string model) and memcached stores can"
            ),
        )
    }

    /// The error a store returns for an arbitrary command ([`Request::command`]) it
    /// cannot send.
    pub fn command_unsupported(store: &str) -> StoreError {
        StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "{store} cannot send arbitrary commands (memtier --command, --wait-ratio); \
                 the redis store can"
            ),
        )
    }
}

/// One request in a [`Batch`], with room for its reply and result.
#[derive(Debug)]
pub struct Slot {
    /// What to do.
    pub request: Request,
    /// Fields read by a `Read` (filled by the session; cleared first).
    pub reply: Record,
    /// The result, set by [`Slot::complete`] or [`Slot::complete_at`].
    pub result: Result<Outcome, StoreError>,
    /// When the result arrived, set by [`Slot::complete`] or [`Slot::complete_at`].
    pub completed_at: Option<Timestamp>,
    /// When the request was due (an open loop's schedule or a timed source), set by the
    /// runner for a [`crate::Tap`]; `None` in a closed loop, or when no tap looks.
    pub due: Option<Timestamp>,
    /// The bytes the request and its replies took on the wire, counted by network
    /// sessions (zero for embedded stores); reset by [`Batch::push`].
    pub wire: WireBytes,
}

/// The bytes one request took on the wire, protocol framing included: what the session
/// encoded for it and what it read of its replies (an error or miss reply too), as
/// memtier_benchmark counts a request's `m_size` and its response's `get_total_len()`
/// (`shard_connection.cpp`, `protocol.cpp`) for `KB/sec`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireBytes {
    /// Bytes sent: the request as encoded.
    pub sent: u64,
    /// Bytes received: its replies as read.
    pub received: u64,
}

impl WireBytes {
    /// Adds `other`'s counts to these.
    #[inline]
    pub fn add(&mut self, other: WireBytes) {
        self.sent += other.sent;
        self.received += other.received;
    }
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            request: Request::default(),
            reply: Record::new(),
            result: Ok(Outcome::Miss),
            completed_at: None,
            due: None,
            wire: WireBytes::default(),
        }
    }
}

impl Slot {
    /// Records the result and stamps the completion time. Sessions call this as soon
    /// as each reply is known, so pipelined requests are timed individually.
    #[inline]
    pub fn complete(&mut self, result: Result<Outcome, StoreError>) {
        self.complete_at(result, Timestamp::now());
    }

    /// Records the result with a completion time the session already took, e.g. when
    /// the bytes it was parsed from were received: replies parsed from one socket read
    /// arrived together, so one clock read stamps them all.
    #[inline]
    pub fn complete_at(&mut self, result: Result<Outcome, StoreError>, at: Timestamp) {
        self.result = result;
        self.completed_at = Some(at);
    }
}

/// A batch of requests sent together. Its length is the pipeline depth: network
/// sessions write every request before reading replies; embedded sessions execute them
/// one after another.
#[derive(Debug, Default)]
pub struct Batch {
    slots: Vec<Slot>,
    len: usize,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Empties the batch, keeping every slot's buffers for reuse.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds a slot (reusing an old one's buffers) and returns it, its request cleared
    /// and its result reset.
    #[inline]
    pub fn push(&mut self) -> &mut Slot {
        if self.len == self.slots.len() {
            self.slots.push(Slot::default());
        }
        let slot = &mut self.slots[self.len];
        self.len += 1;
        slot.request.clear();
        slot.reply.clear();
        slot.completed_at = None;
        slot.due = None;
        slot.wire = WireBytes::default();
        slot
    }

    /// Drops the requests from `len` on (keeping their buffers), e.g. to take back a
    /// slot that [`Batch::push`] added but no request was generated for.
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Number of requests in the batch.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the batch holds no request.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slots in use.
    #[inline]
    pub fn slots(&self) -> &[Slot] {
        &self.slots[..self.len]
    }

    /// The slots in use, mutably.
    #[inline]
    pub fn slots_mut(&mut self) -> &mut [Slot] {
        &mut self.slots[..self.len]
    }
}

/// What a store can do, checked before a run starts so that a workload a store cannot
/// serve is refused up front instead of failing on every operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Ordered scans are supported.
    pub scan: bool,
    /// Data survives the process (so `load` then `run` in separate processes works).
    pub persistent: bool,
    /// Sessions do real asynchronous I/O: their futures must be polled inside a tokio
    /// runtime (network stores). When false, every future a session returns is ready on
    /// first poll and [`crate::block_on`] drives it.
    pub needs_runtime: bool,
    /// Reads of several keys in one request ([`Request::is_multi_read`]) are sent as one
    /// command.
    pub multi_read: bool,
    /// Arbitrary commands ([`Request::command`]) are sent verbatim.
    pub commands: bool,
    /// A write's own time to live ([`Request::ttl_s`]) is honoured.
    pub ttl: bool,
    /// Merges ([`Request::merge`]) go through the store's merge operator.
    pub merge: bool,
}

impl Capabilities {
    /// A store that can do none of the optional things: no scans, multi-key reads,
    /// commands or TTLs; not persistent; no runtime. Meant as the base of a struct
    /// update (`Capabilities { scan: true, ..Capabilities::NONE }`).
    pub const NONE: Capabilities = Capabilities {
        scan: false,
        persistent: false,
        needs_runtime: false,
        multi_read: false,
        commands: false,
        ttl: false,
        merge: false,
    };
}

/// A named statistic value reported by a store.
#[derive(Clone, Debug, PartialEq)]
pub enum StatValue {
    /// An integer counter or gauge.
    Int(i64),
    /// A real-valued statistic.
    Float(f64),
    /// Anything else (versions, option strings).
    Text(String),
}

impl From<i64> for StatValue {
    fn from(v: i64) -> StatValue {
        StatValue::Int(v)
    }
}
impl From<u64> for StatValue {
    fn from(v: u64) -> StatValue {
        StatValue::Int(v.min(i64::MAX as u64) as i64)
    }
}
impl From<f64> for StatValue {
    fn from(v: f64) -> StatValue {
        StatValue::Float(v)
    }
}
impl From<bool> for StatValue {
    fn from(v: bool) -> StatValue {
        StatValue::Text(v.to_string())
    }
}
impl From<&str> for StatValue {
    fn from(v: &str) -> StatValue {
        StatValue::Text(v.to_string())
    }
}
impl From<String> for StatValue {
    fn from(v: String) -> StatValue {
        StatValue::Text(v)
    }
}

/// Named statistics, in the order the store reports them.
pub type StoreStats = Vec<(String, StatValue)>;

/// A connection-like handle through which one worker drives a store.
///
/// The caller guarantees that a session is used by one task at a time; sessions of the
/// same store may run concurrently on different threads.
pub trait Session: Send {
    /// Executes every request of `batch` in order and calls [`Slot::complete`] on each
    /// slot as its result becomes known. Failures are reported per slot; this method
    /// itself never fails.
    ///
    /// Embedded stores complete synchronously and return a future that is ready on
    /// first poll; network stores write the whole batch, then read the replies.
    fn execute(&mut self, batch: &mut Batch) -> impl Future<Output = ()> + Send;

    /// Gets ready to serve before any request is timed, e.g. connects and
    /// authenticates, so that set-up cost never shows up in a measured latency. The
    /// runner awaits it once per session, on the thread that will drive the session.
    /// Embedded stores have nothing to do.
    fn prepare(&mut self) -> impl Future<Output = Result<(), StoreError>> + Send {
        std::future::ready(Ok(()))
    }

    /// When the session may next try to serve, after losing a connection (its
    /// reconnection back-off); `None` when it can now. The runner waits until then
    /// before it times the next batch, so a back-off is never counted as the latency of
    /// requests that were not even sent.
    #[inline]
    fn ready_at(&self) -> Option<std::time::Instant> {
        None
    }
}

/// Something kvlab drives: an engine, a cache or a server.
///
/// A workload never knows which store it runs on: it only produces [`Request`]s.
pub trait Store: Send + Sync + 'static {
    /// The session type this store hands to workers.
    type Session: Session + 'static;

    /// The store's name as given to `--db` (e.g. `rocksdb`).
    fn name(&self) -> &'static str;

    /// What the store can do.
    fn capabilities(&self) -> Capabilities;

    /// Opens a session for one worker.
    fn session(&self) -> Result<Self::Session, StoreError>;

    /// The effective configuration (options after defaults), for the result document.
    fn options(&self) -> StoreStats {
        Vec::new()
    }

    /// Statistics since the store was opened (engine counters, server INFO…).
    fn stats(&self) -> StoreStats {
        Vec::new()
    }

    /// Makes written data durable and quiescent, e.g. at the end of a load.
    fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kinds_label_is_its_ycsb_name_in_lower_case() {
        for kind in OpKind::ALL {
            assert_eq!(kind.label(), kind.ycsb_name().to_ascii_lowercase());
        }
    }

    #[test]
    fn a_merge_is_the_command_merge_key_operand_and_nothing_else() {
        let mut req = Request::default();
        assert_eq!(req.merge(), None);
        req.command.start(CommandId(0));
        for arg in [MERGE_COMMAND, b"k", b"operand"] {
            req.command.args.push(arg);
        }
        assert_eq!(req.merge(), Some((&b"k"[..], &b"operand"[..])));
        req.command.start(CommandId(0));
        for arg in [&b"SET"[..], b"k", b"v"] {
            req.command.args.push(arg);
        }
        assert_eq!(req.merge(), None, "another command");
        req.command.start(CommandId(0));
        req.command.args.push(MERGE_COMMAND);
        req.command.args.push(b"k");
        assert_eq!(req.merge(), None, "no operand");
    }

    #[test]
    fn a_slot_completes_at_the_given_time_or_now() {
        let mut b = Batch::new();
        let at = Timestamp::now();
        b.push().complete_at(Ok(Outcome::Deleted), at);
        let before = Timestamp::now();
        b.push().complete(Ok(Outcome::Miss));
        let (first, second) = (&b.slots()[0], &b.slots()[1]);
        assert_eq!(
            (first.result.clone(), first.completed_at),
            (Ok(Outcome::Deleted), Some(at))
        );
        assert!(second.completed_at.is_some_and(|t| t >= before));
        // A reused slot starts without a completion time.
        b.clear();
        assert_eq!(b.push().completed_at, None);
    }

    #[test]
    fn batch_reuses_slots() {
        let mut b = Batch::new();
        b.push().request.key.extend_from_slice(b"k1");
        b.push().request.key.extend_from_slice(b"k2");
        assert_eq!(b.len(), 2);
        b.clear();
        assert!(b.is_empty());
        let s = b.push();
        assert!(s.request.key.is_empty());
        assert!(s.request.key.capacity() >= 2);
        assert_eq!(b.slots().len(), 1);
    }

    #[test]
    fn blobs_are_stored_verbatim_and_records_encoded() {
        let mut req = Request::default();
        req.key.extend_from_slice(b"k");
        req.value.fields_mut().push(b"field0", b"v0");
        req.value.fields_mut().push(b"field1", b"v1");
        let mut stored = Vec::new();
        req.encode_value(&mut stored);
        let mut reply = Record::new();
        req.decode_value(&stored, &mut reply).unwrap();
        assert_eq!(reply.get(b"field1"), Some(&b"v1"[..]));
        // A read naming one field gets only that field.
        req.read.names_mut().push(b"field0", b"");
        req.decode_value(&stored, &mut reply).unwrap();
        assert_eq!((reply.len(), reply.get(b"field0")), (1, Some(&b"v0"[..])));
        assert!(req.decode_value(b"\x00\x00", &mut reply).is_err());

        req.clear();
        req.value.set_blob(b"raw bytes");
        req.read.set_blob();
        stored.clear();
        req.encode_value(&mut stored);
        assert_eq!(stored, b"raw bytes");
        req.decode_value(b"xyz", &mut reply).unwrap();
        assert_eq!(reply.field(0), (&b""[..], &b"xyz"[..]));
        assert_eq!(req.written_bytes(), 9);

        // A value in a shared buffer is the blob's value.
        req.clear();
        req.key.extend_from_slice(b"key");
        let pool: std::sync::Arc<[u8]> = std::sync::Arc::from(&b"0123456789"[..]);
        req.value.set_shared(&pool, 4..7);
        stored.clear();
        req.encode_value(&mut stored);
        assert_eq!(
            (stored.as_slice(), req.value.blob()),
            (&b"456"[..], &b"456"[..])
        );
        assert_eq!(req.written_bytes(), 3 + 3);
        req.clear();
        assert!(req.value.blob().is_empty() && !req.value.is_blob());
    }

    #[test]
    fn key_lists_and_multi_reads() {
        let mut req = Request::default();
        req.key.extend_from_slice(b"k0");
        assert!(!req.is_multi_read());
        req.more_keys.push(b"k1");
        req.more_keys
            .push_with(|out| out.extend_from_slice(b"key2"));
        req.more_keys.push(b"");
        assert!(req.is_multi_read());
        assert_eq!(req.key_count(), 4);
        let keys: Vec<&[u8]> = req.keys().collect();
        assert_eq!(keys, [&b"k0"[..], b"k1", b"key2", b""]);
        assert_eq!(req.more_keys.get(1), b"key2");
        let by_index: Vec<&[u8]> = (0..req.key_count()).filter_map(|i| req.key_at(i)).collect();
        assert_eq!(by_index, keys);
        assert_eq!(req.key_at(4), None);
        assert_eq!(format!("{:?}", req.more_keys), r#"["k1", "key2", ""]"#);
        req.clear();
        assert!(req.more_keys.is_empty());
        req.more_keys.push(b"x");
        req.kind = OpKind::Update;
        assert!(!req.is_multi_read(), "only a read is a multi-key read");
        let o = Outcome::MultiRead {
            hits: 2,
            misses: 1,
            bytes: 10,
        };
        assert_eq!(
            (o.status(), o.key_hits(), o.bytes_read()),
            (Status::Ok, (2, 1), 10)
        );
        let none = Outcome::MultiRead {
            hits: 0,
            misses: 3,
            bytes: 0,
        };
        assert_eq!((none.status(), none.key_hits()), (Status::NotFound, (0, 3)));
        assert_eq!(Outcome::Miss.key_hits(), (0, 1));
        assert_eq!(Outcome::Deleted.key_hits(), (0, 0));
    }

    #[test]
    fn outcome_statuses() {
        assert_eq!(Outcome::Miss.status(), Status::NotFound);
        assert_eq!(Outcome::Hit { bytes: 3 }.status(), Status::Ok);
        assert_eq!(
            Outcome::Scanned {
                records: 2,
                starts_at_key: false,
                bytes: 9
            }
            .bytes_read(),
            9
        );
        assert_eq!(OpKind::ReadModifyWrite.ycsb_name(), "READ-MODIFY-WRITE");
    }
}

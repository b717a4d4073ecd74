//! The `memcached` store: one or several memcached servers (keys spread by ketama
//! consistent hashing, as libmemcached) or one on a UNIX domain socket, over the text
//! protocol (`get`/`set`/`delete`), the meta protocol (`mg`/`ms`/`md`) or the binary
//! protocol (`GET`/`SET`/`DELETE` packets).
//!
//! A record is one item: a blob's bytes verbatim, or the record in kvlab's field
//! encoding (a partial update reads, merges and writes it back, in a second round). A
//! get that finds nothing is a miss (`Return=NOT_FOUND`), not an error. No scans.
//!
//! A multi-key read ([`Request::is_multi_read`], memtier's `--multi-key-get`) is one
//! `get k1 … kN` over the text protocol (the `VALUE`s, then `END`), or over the meta
//! protocol one quiet `mg <key> v q O<index>` per key and an `mn` (hits answer `VA`,
//! misses nothing, `MN` ends it), or over the binary protocol one `GETKQ` per key (its
//! opaque the key's index) and a `NOOP` (hits answer with their key, misses nothing, the
//! `NOOP`'s response ends it). With several servers its keys are split by ketama
//! server: one command per server, all sent in the same pipeline, and the request
//! completes when the last server has answered. Each found value is a reply field named
//! by its key.
//!
//! Keys memcached cannot take — longer than 250 bytes, or with spaces or control
//! characters — go over the meta protocol base64-encoded (its `b` flag); over the text
//! protocol they are sent as `~` and their hex digits (documented, so a text-protocol key
//! that really starts with `~` could collide with one). The binary protocol carries any
//! key of 1 to 250 bytes as it is.
//!
//! With `memcached.reconnect_interval=N` a session closes its connections after every
//! N requests and opens them again for the next (memtier's `--reconnect-interval`).

use std::sync::Arc;
use std::time::Duration;

use kvlab_core::StoreOptions;
use kvlab_core::{
    Batch, Capabilities, OpKind, Outcome, Record, Request, Session, StatValue, Store, StoreError,
    StoreErrorKind, StoreStats, ValueLayout, ValueRef,
};
use kvlab_proto::memcache::{self, binary, Ketama, MetaFlag, MetaReply, Reply};

use crate::conn::{Conn, Endpoint, Link, Recycle};
use crate::url::{AddressFamily, ServerUrl};

/// Every `memcached.*` option.
pub const OPTION_NAMES: &[&str] = &[
    "protocol",
    "timeout_ms",
    "connect_timeout_ms",
    "address_family",
    "reconnect_interval",
    "server_queries",
];

/// The wire protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `get`/`set`/`delete`.
    Text,
    /// `mg`/`ms`/`md`.
    Meta,
    /// Binary packets: `GET`/`SET`/`DELETE`, `GETKQ` and `NOOP` for multi-key reads.
    Binary,
}

impl Protocol {
    /// The option value: `text`, `meta` or `binary`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Text => "text",
            Protocol::Meta => "meta",
            Protocol::Binary => "binary",
        }
    }
}

/// A validated configuration of the `memcached` store.
#[derive(Clone, Debug)]
pub struct MemcachedConfig {
    /// The servers.
    pub url: ServerUrl,
    /// Text or meta protocol.
    pub protocol: Protocol,
    /// Per-request timeout.
    pub timeout: Option<Duration>,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Which addresses host names resolve to.
    pub address_family: AddressFamily,
    /// Close and reopen a session's connections after this many requests (0: never).
    pub reconnect_interval: u64,
    /// Ask the servers for their `version` at open and their `stats` for the
    /// statistics; `false` (memtier_benchmark's traffic only) sends neither.
    pub server_queries: bool,
    /// How a record is laid out in its item: a workload whose every record is one
    /// field sets [`ValueLayout::SingleField`] (the item is that field's bytes); the
    /// default is the field encoding.
    pub layout: ValueLayout,
}

impl MemcachedConfig {
    /// Validates `memcached.*` options for the servers in `url`.
    pub fn from_options(url: &str, mut opts: StoreOptions) -> Result<MemcachedConfig, StoreError> {
        let url = ServerUrl::parse(url, &["memcached", "memcached+unix"], 11211)?;
        let protocol = match opts
            .choice("protocol", &["text", "meta", "binary"], "text")?
            .as_str()
        {
            "meta" => Protocol::Meta,
            "binary" => Protocol::Binary,
            _ => Protocol::Text,
        };
        let address_family =
            AddressFamily::parse(&opts.choice("address_family", AddressFamily::NAMES, "any")?)
                .expect("a listed choice");
        let reconnect_interval = opts.int("reconnect_interval", 0)?;
        if reconnect_interval < 0 {
            return Err(StoreError::new(
                StoreErrorKind::Config,
                "memcached.reconnect_interval must be >= 0 (0: never)",
            ));
        }
        let timeout_ms = opts.int("timeout_ms", 0)?;
        let connect_timeout_ms = opts.int("connect_timeout_ms", 5000)?;
        if timeout_ms < 0 || connect_timeout_ms <= 0 {
            return Err(StoreError::new(
                StoreErrorKind::Config,
                "memcached.timeout_ms must be >= 0 (0: none) and memcached.connect_timeout_ms > 0",
            ));
        }
        let server_queries = opts.bool("server_queries", true)?;
        opts.finish(OPTION_NAMES)?;
        Ok(MemcachedConfig {
            layout: ValueLayout::Encoded,
            server_queries,
            url,
            protocol,
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms as u64)),
            connect_timeout: Duration::from_millis(connect_timeout_ms as u64),
            address_family,
            reconnect_interval: reconnect_interval as u64,
        })
    }

    /// The effective options, for the result document.
    pub fn to_stats(&self) -> StoreStats {
        vec![
            ("url".into(), StatValue::from(self.url.to_string())),
            (
                "servers".into(),
                StatValue::from(self.url.server_count() as u64),
            ),
            ("protocol".into(), self.protocol.name().into()),
            ("value_layout".into(), self.layout.describe().into()),
            (
                "timeout_ms".into(),
                StatValue::from(self.timeout.map_or(0, |t| t.as_millis() as u64)),
            ),
            ("address_family".into(), self.address_family.name().into()),
            (
                "reconnect_interval".into(),
                StatValue::from(self.reconnect_interval),
            ),
        ]
    }
}

struct Inner {
    config: MemcachedConfig,
    endpoints: Vec<Endpoint>,
    ketama: Ketama,
}

impl Inner {
    fn route(&self, key: &[u8]) -> usize {
        if self.endpoints.len() == 1 {
            0
        } else {
            self.ketama.server_for(key).unwrap_or(0)
        }
    }
}

/// A store on one or several memcached servers.
pub struct MemcachedStore {
    inner: Arc<Inner>,
    runtime: tokio::runtime::Runtime,
    versions: Vec<String>,
}

impl MemcachedStore {
    /// Checks every server answers `version`.
    pub fn open(config: MemcachedConfig) -> Result<MemcachedStore, StoreError> {
        let mut endpoints = Vec::new();
        let mut names = Vec::new();
        for i in 0..config.url.server_count() {
            endpoints.push(Endpoint {
                name: config.url.server_name(i),
                addr: config.url.addr(i, config.address_family)?,
                tls: None,
                connect_timeout: config.connect_timeout,
                timeout: config.timeout,
            });
            // libmemcached's ketama names a server `host:port`, or `host` on 11211.
            let name = match config.url.hosts.get(i) {
                Some((h, 11211)) => h.clone(),
                _ => config.url.server_name(i),
            };
            names.push((name, 1u32));
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::new(StoreErrorKind::Io, format!("starting a runtime: {e}")))?;
        let inner = Inner {
            config,
            endpoints,
            ketama: Ketama::new(&names),
        };
        let mut versions = Vec::new();
        let queried = if inner.config.server_queries {
            &inner.endpoints[..]
        } else {
            &[]
        };
        for ep in queried {
            let binary = inner.config.protocol == Protocol::Binary;
            let v = runtime.block_on(async {
                let mut conn = Conn::connect(ep).await?;
                // A server that does not speak the protocol may never answer.
                let asked = async {
                    if binary {
                        binary_version(&mut conn).await
                    } else {
                        text_version(&mut conn).await
                    }
                };
                match tokio::time::timeout(ep.connect_timeout, asked).await {
                    Ok(v) => v,
                    Err(_) => Err(StoreError::new(
                        StoreErrorKind::Connection,
                        format!(
                            "{}: no answer to `version` within {:?}{}",
                            ep.name,
                            ep.connect_timeout,
                            if binary {
                                "; does the server speak the binary protocol (memcached -B \
                                 auto or -B binary)?"
                            } else {
                                ""
                            }
                        ),
                    )),
                }
            })?;
            versions.push(v);
        }
        Ok(MemcachedStore {
            inner: Arc::new(inner),
            runtime,
            versions,
        })
    }

    /// Each server's version string.
    pub fn versions(&self) -> &[String] {
        &self.versions
    }
}

/// The server's version, asked over the text (or meta) protocol.
async fn text_version(conn: &mut Conn) -> Result<String, StoreError> {
    memcache::version(&mut conn.wbuf);
    conn.flush().await?;
    loop {
        match memcache::parse(conn.buffered()) {
            Ok(Some((Reply::Version(v), _))) => return Ok(String::from_utf8_lossy(v).into_owned()),
            Ok(Some((other, _))) => {
                return Err(StoreError::new(
                    StoreErrorKind::Protocol,
                    format!("{}: `version` answered {other:?}", conn.name()),
                ))
            }
            Ok(None) => conn.fill().await?,
            Err(e) => return Err(conn.protocol_error(e)),
        }
    }
}

/// The server's version, asked with a binary `VERSION` packet.
async fn binary_version(conn: &mut Conn) -> Result<String, StoreError> {
    binary::version(&mut conn.wbuf, 0);
    conn.flush().await?;
    loop {
        match binary::parse(conn.buffered()) {
            Ok(Some((r, _))) if r.opcode == binary::Opcode::VERSION && r.is_ok() => {
                return Ok(String::from_utf8_lossy(r.value).into_owned())
            }
            Ok(Some((r, _))) => {
                return Err(StoreError::new(
                    StoreErrorKind::Protocol,
                    format!(
                        "{}: a binary VERSION request was answered {r:?}",
                        conn.name()
                    ),
                ))
            }
            Ok(None) => conn.fill().await?,
            Err(e) => {
                return Err(StoreError::new(
                    StoreErrorKind::Protocol,
                    format!(
                        "{}: {e}; does the server speak the binary protocol (memcached -B \
                         auto or -B binary)?",
                        conn.name()
                    ),
                ))
            }
        }
    }
}

/// Appends a `stats [group]` reply's pairs (text protocol).
async fn text_stats(
    conn: &mut Conn,
    group: Option<&[u8]>,
    out: &mut Vec<(String, String)>,
) -> Result<(), StoreError> {
    memcache::stats(&mut conn.wbuf, group);
    conn.flush().await?;
    loop {
        match memcache::parse(conn.buffered()) {
            Ok(Some((reply, n))) => {
                let done = !matches!(reply, Reply::Stat { .. });
                if let Reply::Stat { name, value } = reply {
                    out.push((
                        String::from_utf8_lossy(name).into_owned(),
                        String::from_utf8_lossy(value).into_owned(),
                    ));
                }
                conn.consume(n);
                if done {
                    return Ok(());
                }
            }
            Ok(None) => conn.fill().await?,
            Err(e) => return Err(conn.protocol_error(e)),
        }
    }
}

/// Appends a binary `STAT [group]` reply's pairs: one packet per statistic, then one
/// with an empty key (or an error status, for a group the server does not have).
async fn binary_stats(
    conn: &mut Conn,
    group: Option<&[u8]>,
    out: &mut Vec<(String, String)>,
) -> Result<(), StoreError> {
    binary::stat(&mut conn.wbuf, group, 0);
    conn.flush().await?;
    loop {
        match binary::parse(conn.buffered()) {
            Ok(Some((r, n))) => {
                let done = r.key.is_empty() || !r.is_ok();
                if !done {
                    out.push((
                        String::from_utf8_lossy(r.key).into_owned(),
                        String::from_utf8_lossy(r.value).into_owned(),
                    ));
                }
                conn.consume(n);
                if done {
                    return Ok(());
                }
            }
            Ok(None) => conn.fill().await?,
            Err(e) => return Err(conn.protocol_error(e)),
        }
    }
}

impl Store for MemcachedStore {
    type Session = MemcachedSession;

    fn name(&self) -> &'static str {
        "memcached"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            persistent: true,
            needs_runtime: true,
            multi_read: true,
            ttl: true,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<MemcachedSession, StoreError> {
        Ok(MemcachedSession {
            inner: Arc::clone(&self.inner),
            links: (0..self.inner.endpoints.len())
                .map(|_| Link::default())
                .collect(),
            queues: vec![Vec::new(); self.inner.endpoints.len()],
            state: Vec::new(),
            key: Vec::new(),
            current: Record::new(),
            routes: Vec::new(),
            down: vec![None; self.inner.endpoints.len()],
            recycle: Recycle::new(self.inner.config.reconnect_interval),
        })
    }

    fn options(&self) -> StoreStats {
        let mut o = self.inner.config.to_stats();
        for (i, v) in self.versions.iter().enumerate() {
            o.push((format!("server{i}.version"), v.as_str().into()));
        }
        o
    }

    fn stats(&self) -> StoreStats {
        if !self.inner.config.server_queries {
            return Vec::new();
        }
        let mut totals: StoreStats = Vec::new();
        for ep in &self.inner.endpoints {
            let binary = self.inner.config.protocol == Protocol::Binary;
            let got: Result<Vec<(String, String)>, StoreError> =
                self.runtime
                    .block_on(crate::conn::within_stats_timeout(async {
                        let mut conn = Conn::connect(ep).await?;
                        let mut out = Vec::new();
                        for group in [None, Some(&b"extstore"[..])] {
                            if binary {
                                binary_stats(&mut conn, group, &mut out).await?;
                            } else {
                                text_stats(&mut conn, group, &mut out).await?;
                            }
                        }
                        Ok(out)
                    }));
            let Ok(pairs) = got else { continue };
            for (k, v) in pairs {
                if !kvlab_proto::stats::MEMCACHED_RESULT_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                // Counters add up over servers; the rest are the first server's.
                crate::conn::add_stat(&mut totals, k, &v);
            }
        }
        totals
    }
}

/// What a command in flight is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Get,
    Set,
    /// A whole-record update: stored only over an existing item (YCSB's memcached
    /// binding's `replace`), a miss otherwise.
    Replace,
    Delete,
    /// The read of a partial update.
    UpdateGet,
    /// One server's share of a multi-key read.
    MultiGet,
}

#[derive(Default)]
struct SlotState {
    outcome: Option<Result<Outcome, StoreError>>,
    /// A partial update's merged value, written in the second round.
    merged: Option<Vec<u8>>,
    /// A multi-key read: servers still to answer, keys found, value bytes.
    waiting: u32,
    hits: u32,
    bytes: u64,
}

/// A worker's connections to a `memcached` store: one per server.
pub struct MemcachedSession {
    inner: Arc<Inner>,
    links: Vec<Link>,
    /// Per server: (request index, what for), in send order.
    queues: Vec<Vec<(usize, Part)>>,
    state: Vec<SlotState>,
    key: Vec<u8>,
    current: Record,
    /// A multi-key read's server per key (kept for its capacity).
    routes: Vec<usize>,
    /// Per server: the error of this batch's failed connection attempt; the batch's
    /// other requests to it fail at once instead of each waiting for its own attempt.
    down: Vec<Option<StoreError>>,
    /// `memcached.reconnect_interval`.
    recycle: Recycle,
}

/// Longest key memcached accepts.
const MAX_KEY: usize = 250;

/// The key as sent, or `None` when it must be encoded: too long, or with bytes the text
/// protocol cannot carry.
fn plain_key(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY && memcache::is_valid_key(key)
}

/// `~` and the key's hex digits: a text-protocol stand-in for an unsendable key.
fn hex_key(key: &[u8], out: &mut Vec<u8>) -> Result<(), StoreError> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if 1 + 2 * key.len() > MAX_KEY {
        return Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "key of {} bytes with characters memcached's text protocol cannot carry: \
                 too long to encode (use -p memcached.protocol=meta)",
                key.len()
            ),
        ));
    }
    out.clear();
    out.push(b'~');
    for b in key {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 15) as usize]);
    }
    Ok(())
}

/// Checks a key the binary protocol can carry: 1 to 250 bytes, any bytes.
fn binary_key(key: &[u8]) -> Result<(), StoreError> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "key of {} bytes: memcached takes keys of 1 to {MAX_KEY} bytes",
                key.len()
            ),
        ));
    }
    Ok(())
}

/// Standard base64 (the meta protocol's `b` flag).
fn base64_key(key: &[u8], out: &mut Vec<u8>) -> Result<(), StoreError> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.clear();
    for chunk in key.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    if out.len() > MAX_KEY {
        return Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!("key of {} bytes is too long for memcached", key.len()),
        ));
    }
    Ok(())
}

/// The stand-in of a key memcached cannot take as is: base64 (meta) or `~`-hex (text).
fn wire_key(key: &[u8], meta: bool, out: &mut Vec<u8>) -> Result<(), StoreError> {
    if meta {
        base64_key(key, out)
    } else {
        hex_key(key, out)
    }
}

/// True for an update that merges into the stored record: a GET first, then a SET of
/// the merged record. An update of every field (or a blob) needs no read.
fn updates_part(req: &Request) -> bool {
    !req.value.is_blob() && !req.value.is_whole()
}

/// How a write that needs no read is sent: an update of a whole record replaces the
/// stored one, so it misses where the record is gone (as the read of a partial update
/// would); a blob update (memtier's SETs) and an insert set.
fn write_part(req: &Request) -> Part {
    if req.kind == OpKind::Update && req.value.is_whole() {
        Part::Replace
    } else {
        Part::Set
    }
}

/// The field encoding of a record of several fields ([`ValueLayout::Encoded`]).
fn encoded(fields: &Record) -> Vec<u8> {
    let mut value = Vec::with_capacity(fields.encoded_len());
    fields.encode_into(&mut value);
    value
}

/// Why a request of `kind` (a scan, or a read-modify-write the runner should have split)
/// cannot be sent to memcached.
fn not_encodable(kind: OpKind) -> StoreError {
    match kind {
        OpKind::Scan => StoreError::new(StoreErrorKind::Unsupported, "memcached cannot scan"),
        _ => StoreError::read_modify_write_unsplit(),
    }
}

impl MemcachedSession {
    async fn ensure_connected(&mut self, server: usize) -> Result<(), StoreError> {
        if self.links[server].conn.is_some() {
            return Ok(());
        }
        self.links[server].backoff.wait().await;
        match Conn::connect(&self.inner.endpoints[server]).await {
            Ok(c) => {
                self.links[server].conn = Some(c);
                self.links[server].backoff.succeeded();
                Ok(())
            }
            Err(e) => {
                self.links[server].backoff.failed();
                Err(e)
            }
        }
    }

    /// Encodes request `i` (its second-round write, when `merged` is set).
    fn encode(&mut self, req: &Request, i: usize, server: usize) -> Result<(), StoreError> {
        if req.command.is_some() {
            return Err(StoreError::command_unsupported("memcached"));
        }
        if self.inner.config.protocol == Protocol::Binary {
            return self.encode_binary(req, i, server);
        }
        let meta = self.inner.config.protocol == Protocol::Meta;
        let encoded_key = !plain_key(&req.key);
        let key: &[u8] = if !encoded_key {
            &req.key
        } else if meta {
            base64_key(&req.key, &mut self.key)?;
            &self.key
        } else {
            hex_key(&req.key, &mut self.key)?;
            &self.key
        };
        let conn = self.links[server]
            .conn
            .as_mut()
            .expect("connected before encoding");
        let out = &mut conn.wbuf;
        let ttl = req.ttl_s;
        let b64 = MetaFlag::Flag(b'b');
        // `set`, or `replace` (only over an existing item) for a whole-record update.
        let store = |replace: bool, value: &[u8], out: &mut Vec<u8>| {
            if meta {
                // `T<ttl>`, then `b` for an encoded key, then `MR` for a replace.
                let mut flags = [MetaFlag::Num(b'T', ttl as u64); 3];
                let mut n = 1;
                for (wanted, flag) in [(encoded_key, b64), (replace, MetaFlag::Token(b'M', b"R"))] {
                    if wanted {
                        flags[n] = flag;
                        n += 1;
                    }
                }
                let flags = &flags[..n];
                memcache::ms(out, key, value, flags);
            } else if replace {
                memcache::replace(out, key, 0, ttl, value, false);
            } else {
                memcache::set(out, key, 0, ttl, value, false);
            }
        };
        let layout = &self.inner.config.layout;
        let part = if let Some(value) = self.state[i].merged.take() {
            store(false, &value, out);
            Part::Set
        } else {
            match req.kind {
                OpKind::Read | OpKind::Update if req.kind == OpKind::Read || updates_part(req) => {
                    // A read, or the read half of a partial update.
                    if meta {
                        let v = [MetaFlag::Flag(b'v'), b64];
                        memcache::mg(out, key, if encoded_key { &v } else { &v[..1] });
                    } else {
                        memcache::get(out, key);
                    }
                    if req.kind == OpKind::Read {
                        Part::Get
                    } else {
                        Part::UpdateGet
                    }
                }
                OpKind::Read | OpKind::Insert | OpKind::Update => {
                    let part = write_part(req);
                    let replace = part == Part::Replace;
                    match req.value.get() {
                        ValueRef::Blob(blob) => store(replace, blob, out),
                        ValueRef::Fields(fields) => match layout.bare(fields) {
                            Some(value) => store(replace, value, out),
                            None => store(replace, &encoded(fields), out),
                        },
                    }
                    part
                }
                OpKind::Delete => {
                    if meta {
                        let f = [b64];
                        memcache::md(out, key, if encoded_key { &f } else { &[] });
                    } else {
                        memcache::delete(out, key, false);
                    }
                    Part::Delete
                }
                OpKind::Scan | OpKind::ReadModifyWrite => return Err(not_encodable(req.kind)),
            }
        };
        self.queues[server].push((i, part));
        Ok(())
    }

    /// Encodes request `i` as a binary packet whose opaque is `i` (its second-round
    /// write, when `merged` is set).
    fn encode_binary(&mut self, req: &Request, i: usize, server: usize) -> Result<(), StoreError> {
        binary_key(&req.key)?;
        let key = &req.key[..];
        let conn = self.links[server]
            .conn
            .as_mut()
            .expect("connected before encoding");
        let out = &mut conn.wbuf;
        let opaque = i as u32;
        let layout = &self.inner.config.layout;
        let part = if let Some(value) = self.state[i].merged.take() {
            binary::set(out, key, &value, 0, req.ttl_s, opaque);
            Part::Set
        } else {
            match req.kind {
                OpKind::Read | OpKind::Update if req.kind == OpKind::Read || updates_part(req) => {
                    binary::get(out, key, opaque);
                    if req.kind == OpKind::Read {
                        Part::Get
                    } else {
                        Part::UpdateGet
                    }
                }
                OpKind::Read | OpKind::Insert | OpKind::Update => {
                    let part = write_part(req);
                    let store = match part {
                        Part::Replace => binary::replace,
                        _ => binary::set,
                    };
                    let ttl = req.ttl_s;
                    match req.value.get() {
                        ValueRef::Blob(blob) => store(out, key, blob, 0, ttl, opaque),
                        ValueRef::Fields(fields) => match layout.bare(fields) {
                            Some(value) => store(out, key, value, 0, ttl, opaque),
                            None => store(out, key, &encoded(fields), 0, ttl, opaque),
                        },
                    }
                    part
                }
                OpKind::Delete => {
                    binary::delete(out, key, opaque);
                    Part::Delete
                }
                OpKind::Scan | OpKind::ReadModifyWrite => return Err(not_encodable(req.kind)),
            }
        };
        self.queues[server].push((i, part));
        Ok(())
    }

    /// Connects the servers the keys of multi-key read `i` live on and queues one
    /// command per server. Nothing is queued when a key cannot be sent or a server is
    /// down.
    async fn queue_multi_get(&mut self, req: &Request, i: usize) -> Result<(), StoreError> {
        let meta = self.inner.config.protocol == Protocol::Meta;
        let bin = self.inner.config.protocol == Protocol::Binary;
        self.routes.clear();
        for key in req.keys() {
            if bin {
                binary_key(key)?;
            } else if !plain_key(key) {
                // Fails on keys too long even when encoded.
                wire_key(key, meta, &mut self.key)?;
            }
            self.routes.push(self.inner.route(key));
        }
        for server in 0..self.links.len() {
            if !self.routes.contains(&server) {
                continue;
            }
            match &self.down[server] {
                Some(e) => return Err(e.clone()),
                None if self.links[server].conn.is_some() => {}
                None => {
                    if let Err(e) = self.ensure_connected(server).await {
                        self.down[server] = Some(e.clone());
                        return Err(e);
                    }
                }
            }
        }
        for server in 0..self.links.len() {
            if !self.routes.contains(&server) {
                continue;
            }
            let conn = self.links[server]
                .conn
                .as_mut()
                .expect("connected before encoding");
            let out = &mut conn.wbuf;
            if bin {
                // One quiet GETKQ per key, its opaque the key's index, then a NOOP.
                for (j, key) in req.keys().enumerate() {
                    if self.routes[j] == server {
                        binary::getkq(out, key, j as u32);
                    }
                }
                binary::noop(out, i as u32);
                self.queues[server].push((i, Part::MultiGet));
                self.state[i].waiting += 1;
                continue;
            }
            if !meta {
                out.extend_from_slice(b"get");
            }
            for (j, key) in req.keys().enumerate() {
                if self.routes[j] != server {
                    continue;
                }
                let plain = plain_key(key);
                let wire = if plain {
                    key
                } else {
                    wire_key(key, meta, &mut self.key)?;
                    &self.key[..]
                };
                if meta {
                    let flags = [
                        MetaFlag::Flag(b'v'),
                        MetaFlag::Flag(b'q'),
                        MetaFlag::Num(b'O', j as u64),
                        MetaFlag::Flag(b'b'),
                    ];
                    memcache::mg(out, wire, &flags[..3 + usize::from(!plain)]);
                } else {
                    out.push(b' ');
                    out.extend_from_slice(wire);
                }
            }
            if meta {
                memcache::mn(out);
            } else {
                out.extend_from_slice(b"\r\n");
            }
            self.queues[server].push((i, Part::MultiGet));
            self.state[i].waiting += 1;
        }
        Ok(())
    }

    async fn exchange(&mut self, batch: &mut Batch) {
        for server in 0..self.queues.len() {
            if self.queues[server].is_empty() {
                continue;
            }
            let conn = self.links[server].conn.as_mut().expect("connected");
            if let Err(e) = conn.flush().await {
                self.fail_server(server, &e);
                continue;
            }
            let protocol = self.inner.config.protocol;
            let meta = protocol == Protocol::Meta;
            let mut k = 0;
            while k < self.queues[server].len() {
                let (i, part) = self.queues[server][k];
                let conn = self.links[server].conn.as_mut().expect("connected");
                let slot = &mut batch.slots_mut()[i];
                let consumed = conn.consumed();
                let reads = Reads {
                    reply: &mut slot.reply,
                    current: &mut self.current,
                    layout: &self.inner.config.layout,
                };
                let result = if part == Part::MultiGet {
                    let state = &mut self.state[i];
                    let share = if protocol == Protocol::Binary {
                        read_binary_multi(conn, &slot.request, &mut slot.reply, state).await
                    } else if meta {
                        read_meta_multi(conn, &slot.request, &mut slot.reply, state).await
                    } else {
                        read_text_multi(conn, &mut slot.reply, state, &mut self.key).await
                    };
                    share.map(|failed| match failed {
                        Some(e) => Step::Failed(e),
                        None if state.waiting > 0 => Step::Pending,
                        None => Step::Done(Outcome::MultiRead {
                            hits: state.hits,
                            misses: (slot.request.key_count() as u32).saturating_sub(state.hits),
                            bytes: state.bytes,
                        }),
                    })
                } else if protocol == Protocol::Binary {
                    read_binary(conn, part, i, &slot.request, reads).await
                } else if meta {
                    read_meta(conn, part, &slot.request, reads).await
                } else {
                    read_text(conn, part, &slot.request, reads).await
                };
                // The reply arrived with the connection's last read.
                let at = conn.received_at();
                slot.wire.received += conn.consumed() - consumed;
                match result {
                    // A multi-key read that already failed on another server stays failed.
                    Ok(Step::Done(_) | Step::Failed(_)) if slot.completed_at.is_some() => {}
                    Ok(Step::Done(outcome)) => slot.complete_at(Ok(outcome), at),
                    Ok(Step::Failed(e)) => slot.complete_at(Err(e), at),
                    Ok(Step::Pending) => {}
                    Ok(Step::Write(value)) => self.state[i].merged = Some(value),
                    Err(e) => {
                        // The connection is lost or out of step: fail the rest.
                        self.queues[server].drain(..k);
                        self.fail_server(server, &e);
                        break;
                    }
                }
                k += 1;
            }
            self.queues[server].clear();
        }
    }

    /// Bytes waiting in every connection's write buffer.
    fn queued_bytes(&self) -> u64 {
        crate::conn::queued_bytes(self.links.iter().filter_map(|l| l.conn.as_ref()))
    }

    fn fail_server(&mut self, server: usize, e: &StoreError) {
        for (i, _) in self.queues[server].drain(..) {
            self.state[i].outcome = Some(Err(e.clone()));
            self.state[i].merged = None;
        }
        self.links[server].conn = None;
        self.links[server].backoff.failed();
    }
}

/// How a reply left its request.
enum Step {
    Done(Outcome),
    /// The server refused this request; the connection is fine.
    Failed(StoreError),
    /// A partial update read its record: write this merged value next round.
    Write(Vec<u8>),
    /// One server's share of a multi-key read is in; others are still to answer.
    Pending,
}

/// An error reply (`SERVER_ERROR …`, `CLIENT_ERROR …`) as the request's error, its text
/// kept: out of memory is `full`, anything else `server` ([`crate::error_reply`]).
fn server_error(reply: &str, msg: &[u8]) -> StoreError {
    crate::error_reply(&format!("{reply} {}", String::from_utf8_lossy(msg)))
}

/// Where a reply's value goes: the slot's reply record, the scratch record of a merge,
/// and the layout both are read in.
struct Reads<'a> {
    reply: &'a mut Record,
    current: &'a mut Record,
    layout: &'a ValueLayout,
}

/// Decodes a found value for a read, or merges it for a partial update.
fn found(part: Part, req: &Request, data: &[u8], reads: &mut Reads<'_>) -> Step {
    if part == Part::UpdateGet {
        let mut value = Vec::new();
        return match reads
            .layout
            .merge_update(data, req, reads.current, &mut value)
        {
            Ok(()) => Step::Write(value),
            Err(e) => Step::Failed(e),
        };
    }
    match reads.layout.decode(req, data, reads.reply) {
        Ok(bytes) => Step::Done(Outcome::Hit { bytes }),
        Err(e) => Step::Failed(e),
    }
}

fn written(req: &Request) -> Outcome {
    Outcome::Written {
        bytes: req.written_bytes(),
    }
}

/// A reply that does not answer what was sent: `what` names the command (a [`Part`], or
/// a multi-key read's).
fn unexpected(reply: &impl std::fmt::Debug, what: impl std::fmt::Display) -> StoreError {
    StoreError::new(
        StoreErrorKind::Protocol,
        format!("unexpected reply {reply:?} to a {what}"),
    )
}

/// Reads the reply to one text-protocol command (a get's `VALUE` and `END` included).
async fn read_text(
    conn: &mut Conn,
    part: Part,
    req: &Request,
    mut reads: Reads<'_>,
) -> Result<Step, StoreError> {
    let mut step = None;
    conn.read_until(|c| {
        let Some((r, n)) = memcache::parse(c.buffered()).map_err(|e| c.protocol_error(e))? else {
            return Ok(None);
        };
        let done = match (r, part) {
            (Reply::Value { data, .. }, Part::Get | Part::UpdateGet) => {
                // The item comes before END; keep reading.
                step = Some(found(part, req, data, &mut reads));
                None
            }
            (Reply::End, Part::Get | Part::UpdateGet) => {
                Some(step.take().unwrap_or(Step::Done(Outcome::Miss)))
            }
            (Reply::Stored, Part::Set | Part::Replace) => Some(Step::Done(written(req))),
            (Reply::NotStored, Part::Replace) => Some(Step::Done(Outcome::Miss)),
            (Reply::Deleted | Reply::NotFound, Part::Delete) => Some(Step::Done(Outcome::Deleted)),
            (Reply::ServerError(m), _) => Some(Step::Failed(server_error("SERVER_ERROR", m))),
            (Reply::ClientError(m), _) => Some(Step::Failed(server_error("CLIENT_ERROR", m))),
            (other, _) => return Err(unexpected(&other, format_args!("{part:?}"))),
        };
        Ok(Some((n, done)))
    })
    .await
}

/// Reads the reply to one meta-protocol command.
async fn read_meta(
    conn: &mut Conn,
    part: Part,
    req: &Request,
    mut reads: Reads<'_>,
) -> Result<Step, StoreError> {
    conn.read_until(|c| {
        let Some((r, n)) = memcache::parse_meta(c.buffered()).map_err(|e| c.protocol_error(e))?
        else {
            return Ok(None);
        };
        let step = match (r, part) {
            (MetaReply::Value { data, .. }, Part::Get | Part::UpdateGet) => {
                found(part, req, data, &mut reads)
            }
            (MetaReply::Miss(_), Part::Get | Part::UpdateGet) => Step::Done(Outcome::Miss),
            (MetaReply::Hit(_), Part::Set | Part::Replace) => Step::Done(written(req)),
            (MetaReply::NotStored(_), Part::Replace) => Step::Done(Outcome::Miss),
            (MetaReply::Hit(_) | MetaReply::NotFound(_), Part::Delete) => {
                Step::Done(Outcome::Deleted)
            }
            (MetaReply::ServerError(m), _) => Step::Failed(server_error("SERVER_ERROR", m)),
            (MetaReply::ClientError(m), _) => Step::Failed(server_error("CLIENT_ERROR", m)),
            (other, _) => return Err(unexpected(&other, format_args!("{part:?}"))),
        };
        Ok(Some((n, Some(step))))
    })
    .await
}

/// A binary protocol error status as a request's error.
fn binary_error(status: binary::Status, message: &[u8]) -> StoreError {
    let e = crate::error_reply(&format!("{status}: {}", String::from_utf8_lossy(message)));
    if status == binary::Status::OUT_OF_MEMORY {
        return StoreError::new(StoreErrorKind::Full, e.message);
    }
    e
}

/// A binary response that answers another request than the one expected: the
/// connection is out of step.
fn out_of_step(r: &binary::Response<'_>, what: &str) -> StoreError {
    StoreError::new(
        StoreErrorKind::Protocol,
        format!(
            "a binary {:?} response with opaque {} where {what} was expected",
            r.opcode, r.opaque
        ),
    )
}

/// Reads the response to binary request `i` (its opaque).
async fn read_binary(
    conn: &mut Conn,
    part: Part,
    i: usize,
    req: &Request,
    mut reads: Reads<'_>,
) -> Result<Step, StoreError> {
    let opcode = match part {
        Part::Get | Part::UpdateGet => binary::Opcode::GET,
        Part::Set => binary::Opcode::SET,
        Part::Replace => binary::Opcode::REPLACE,
        Part::Delete => binary::Opcode::DELETE,
        Part::MultiGet => unreachable!("multi-key reads are read by read_binary_multi"),
    };
    conn.read_until(|c| {
        let Some((r, n)) = binary::parse(c.buffered()).map_err(|e| c.protocol_error(e))? else {
            return Ok(None);
        };
        if r.opaque != i as u32 || r.opcode != opcode {
            return Err(out_of_step(
                &r,
                &format!("the {:?} response to request {i}", opcode),
            ));
        }
        let step = match (part, r.status) {
            (Part::Get | Part::UpdateGet, binary::Status::OK) => {
                found(part, req, r.value, &mut reads)
            }
            (Part::Get | Part::UpdateGet, binary::Status::KEY_NOT_FOUND) => {
                Step::Done(Outcome::Miss)
            }
            (Part::Set | Part::Replace, binary::Status::OK) => Step::Done(written(req)),
            (Part::Replace, binary::Status::KEY_NOT_FOUND) => Step::Done(Outcome::Miss),
            (Part::Delete, binary::Status::OK | binary::Status::KEY_NOT_FOUND) => {
                Step::Done(Outcome::Deleted)
            }
            (_, status) => Step::Failed(binary_error(status, r.value)),
        };
        Ok(Some((n, Some(step))))
    })
    .await
}

/// Reads one server's `GETKQ` hits (misses are quiet) and the `NOOP` that ends a
/// multi-key read, adding the hits to `reply` and `state`. `Ok(Some(e))` when the
/// server refused a key.
async fn read_binary_multi(
    conn: &mut Conn,
    req: &Request,
    reply: &mut Record,
    state: &mut SlotState,
) -> Result<Option<StoreError>, StoreError> {
    let mut failed = None;
    conn.read_until(|c| {
        let Some((r, n)) = binary::parse(c.buffered()).map_err(|e| c.protocol_error(e))? else {
            return Ok(None);
        };
        match r.opcode {
            binary::Opcode::NOOP => {
                state.waiting -= 1;
                return Ok(Some((n, Some(failed.take()))));
            }
            binary::Opcode::GETKQ => {}
            _ => return Err(out_of_step(&r, "a GETKQ or NOOP response")),
        }
        match r.status {
            binary::Status::OK => {
                let key = usize::try_from(r.opaque)
                    .ok()
                    .and_then(|j| req.key_at(j))
                    .ok_or_else(|| out_of_step(&r, "a key index of the multi-key read"))?;
                reply.push(key, r.value);
                state.hits += 1;
                state.bytes += r.value.len() as u64;
            }
            binary::Status::KEY_NOT_FOUND => {}
            status => {
                failed.get_or_insert_with(|| binary_error(status, r.value));
            }
        }
        Ok(Some((n, None)))
    })
    .await
}

/// The key a multi-key read's reply names: `~`-hex stand-ins decoded back into `scratch`.
fn reply_key<'a>(wire: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let Some(digits) = wire.strip_prefix(b"~") else {
        return wire;
    };
    if digits.len() % 2 != 0 || !digits.iter().all(|&b| hex(b).is_some()) {
        return wire;
    }
    scratch.clear();
    for pair in digits.chunks(2) {
        scratch.push(hex(pair[0]).unwrap_or(0) << 4 | hex(pair[1]).unwrap_or(0));
    }
    scratch
}

/// Reads one server's `VALUE`s and `END` for a multi-key `get`, adding the hits to
/// `reply` and `state`. `Ok(Some(e))` when the server refused the command.
async fn read_text_multi(
    conn: &mut Conn,
    reply: &mut Record,
    state: &mut SlotState,
    scratch: &mut Vec<u8>,
) -> Result<Option<StoreError>, StoreError> {
    conn.read_until(|c| {
        let Some((r, n)) = memcache::parse(c.buffered()).map_err(|e| c.protocol_error(e))? else {
            return Ok(None);
        };
        let failed = match r {
            Reply::Value { key, data, .. } => {
                reply.push(reply_key(key, scratch), data);
                state.hits += 1;
                state.bytes += data.len() as u64;
                return Ok(Some((n, None)));
            }
            Reply::End => None,
            // A refused `get` has no END.
            Reply::ServerError(m) => Some(server_error("SERVER_ERROR", m)),
            Reply::ClientError(m) => Some(server_error("CLIENT_ERROR", m)),
            other => return Err(unexpected(&other, "multi-key get")),
        };
        state.waiting -= 1;
        Ok(Some((n, Some(failed))))
    })
    .await
}

/// Reads one server's `VA`s (misses are quiet) and `MN` for a multi-key read's
/// `mg … q` commands, adding the hits to `reply` and `state`. `Ok(Some(e))` when the
/// server refused a command.
async fn read_meta_multi(
    conn: &mut Conn,
    req: &Request,
    reply: &mut Record,
    state: &mut SlotState,
) -> Result<Option<StoreError>, StoreError> {
    let mut failed = None;
    conn.read_until(|c| {
        let Some((r, n)) = memcache::parse_meta(c.buffered()).map_err(|e| c.protocol_error(e))?
        else {
            return Ok(None);
        };
        match r {
            MetaReply::Value { data, flags } => {
                let key = flags
                    .opaque()
                    .and_then(|o| std::str::from_utf8(o).ok()?.parse::<usize>().ok())
                    .and_then(|j| req.key_at(j));
                let Some(key) = key else {
                    return Err(StoreError::new(
                        StoreErrorKind::Protocol,
                        "a multi-key read's VA reply lacks the key index sent as its opaque",
                    ));
                };
                reply.push(key, data);
                state.hits += 1;
                state.bytes += data.len() as u64;
            }
            MetaReply::NoOp => {
                state.waiting -= 1;
                return Ok(Some((n, Some(failed.take()))));
            }
            MetaReply::Miss(_) => {}
            MetaReply::ServerError(m) => {
                failed.get_or_insert_with(|| server_error("SERVER_ERROR", m));
            }
            MetaReply::ClientError(m) => {
                failed.get_or_insert_with(|| server_error("CLIENT_ERROR", m));
            }
            other => return Err(unexpected(&other, "multi-key mg")),
        }
        Ok(Some((n, None)))
    })
    .await
}

impl Session for MemcachedSession {
    fn ready_at(&self) -> Option<std::time::Instant> {
        crate::conn::ready_at(&self.links)
    }

    async fn prepare(&mut self) -> Result<(), StoreError> {
        for server in 0..self.links.len() {
            self.ensure_connected(server).await?;
        }
        Ok(())
    }

    async fn execute(&mut self, batch: &mut Batch) {
        let n = batch.len();
        self.state.clear();
        self.state.resize_with(n, SlotState::default);
        self.down.iter_mut().for_each(|d| *d = None);
        // Two rounds: everything, then the writes of partial updates.
        for round in 0..2 {
            for q in &mut self.queues {
                q.clear();
            }
            for i in 0..n {
                let slot = &batch.slots()[i];
                if slot.completed_at.is_some() || self.state[i].outcome.is_some() {
                    continue;
                }
                if round == 1 && self.state[i].merged.is_none() {
                    continue;
                }
                let before = self.queued_bytes();
                if slot.request.is_multi_read() {
                    if let Err(e) = self.queue_multi_get(&batch.slots()[i].request, i).await {
                        self.state[i].outcome = Some(Err(e));
                    }
                    batch.slots_mut()[i].wire.sent += self.queued_bytes() - before;
                    continue;
                }
                let server = self.inner.route(&slot.request.key);
                let connected = match &self.down[server] {
                    Some(e) => Err(e.clone()),
                    None if self.links[server].conn.is_some() => Ok(()),
                    None => self.ensure_connected(server).await,
                };
                let r = match connected {
                    Ok(()) => self.encode(&batch.slots()[i].request, i, server),
                    Err(e) => {
                        self.down[server] = Some(e.clone());
                        Err(e)
                    }
                };
                if let Err(e) = r {
                    self.state[i].outcome = Some(Err(e));
                }
                batch.slots_mut()[i].wire.sent += self.queued_bytes() - before;
            }
            self.exchange(batch).await;
        }
        if self.recycle.count(n) {
            // memtier's --reconnect-interval: the next batch connects afresh.
            for link in &mut self.links {
                link.conn = None;
            }
        }
        for (slot, st) in batch.slots_mut().iter_mut().zip(&mut self.state) {
            if slot.completed_at.is_none() {
                slot.complete(st.outcome.take().unwrap_or_else(|| {
                    Err(StoreError::new(
                        StoreErrorKind::Protocol,
                        "request left incomplete",
                    ))
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsendable_keys_are_encoded() {
        let mut out = Vec::new();
        assert!(plain_key(b"user123"));
        assert!(!plain_key(b"has space"));
        assert!(!plain_key(b"ctl\x01"));
        hex_key(b"a \x00", &mut out).unwrap();
        assert_eq!(out, b"~612000");
        base64_key(b"any carnal pleas", &mut out).unwrap();
        assert_eq!(out, b"YW55IGNhcm5hbCBwbGVhcw==");
        base64_key(b"ab", &mut out).unwrap();
        assert_eq!(out, b"YWI=");
        assert!(hex_key(&[0u8; 200], &mut out).is_err());
    }
}

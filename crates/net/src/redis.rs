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
//! - `string` (memtier's): a record is one value — `SET key value [EX ttl]`, `GET`,
//!   `DEL`; a record of several fields is stored in kvlab's field encoding, and a partial
//!   update reads, merges and writes it back. No scans.
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

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use kvlab_core::{
    Batch, Capabilities, OpKind, Outcome, Record, Request, Session, Slot, StatValue, Store,
    StoreError, StoreErrorKind, StoreStats, Timestamp,
};
use kvlab_proto::resp::{self, Frame};
use kvlab_stores::StoreOptions;

use crate::conn::{tls_settings, Addr, Conn, Endpoint, Link, Recycle, Tls, TlsVersion};
use crate::url::{resolve_host, AddressFamily, ServerUrl};

/// Largest `redis.data_offset`: memtier's limit (`2^29 − 1`, so that offset and value
/// stay within Redis' 512 MiB strings).
pub const MAX_DATA_OFFSET: u32 = (1 << 29) - 1;

/// Every `redis.*` option.
pub const OPTION_NAMES: &[&str] = &[
    "model",
    "protocol",
    "timeout_ms",
    "connect_timeout_ms",
    "tls_ca_file",
    "tls_skip_verify",
    "tls_sni",
    "tls_protocols",
    "tls_cert_file",
    "tls_key_file",
    "cluster",
    "index_key",
    "data_offset",
    "address_family",
    "reconnect_interval",
    "index_order",
];

/// How records map onto Redis data types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// One string value per record (`SET`/`GET`).
    String,
    /// One hash per record, plus a sorted-set index for scans (YCSB's binding).
    Hash,
}

impl Model {
    /// `string` or `hash`.
    pub fn name(self) -> &'static str {
        match self {
            Model::String => "string",
            Model::Hash => "hash",
        }
    }
}

/// How the hash model's scan index orders its members (`redis.index_order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexOrder {
    /// YCSB's redis binding (`RedisClient.java`): a member scores its key's Java
    /// `String.hashCode` ([`java_string_hash`]); a scan is `ZRANGEBYSCORE` from the start
    /// key's score, so it returns keys in hash order.
    Ycsb,
    /// Every member scores 0 and a scan is `ZRANGEBYLEX`: keys in byte order, from the
    /// start key on, as a scan on every other store.
    Key,
}

impl IndexOrder {
    /// `ycsb` or `key`.
    pub fn name(self) -> &'static str {
        match self {
            IndexOrder::Ycsb => "ycsb",
            IndexOrder::Key => "key",
        }
    }
}

/// Java's `String.hashCode` of a key: `s[0]·31^(n−1) + … + s[n−1]` over its UTF-16 code
/// units, wrapping at 32 bits — the score YCSB's redis binding gives a key in its scan
/// index (`hash(key)` in `RedisClient.java`). A key that is not UTF-8 counts one unit per
/// byte.
pub fn java_string_hash(key: &[u8]) -> i32 {
    let step = |h: i32, unit: u16| h.wrapping_mul(31).wrapping_add(i32::from(unit));
    match std::str::from_utf8(key) {
        Ok(s) => s.encode_utf16().fold(0, step),
        Err(_) => key.iter().fold(0, |h, &b| step(h, u16::from(b))),
    }
}

/// Whether to treat the server as a Redis Cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterMode {
    /// Ask the server (`INFO cluster`).
    Auto,
    /// Always: fail if the server is not in cluster mode.
    Yes,
    /// Never: one node, redirections are errors.
    No,
}

/// A validated configuration of the `redis` store.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// The server (or a cluster seed node), with credentials and database.
    pub url: ServerUrl,
    /// The data model.
    pub model: Model,
    /// Speak RESP3 (`HELLO 3`) instead of RESP2.
    pub resp3: bool,
    /// Per-request timeout: a batch whose replies take longer fails its requests.
    pub timeout: Option<Duration>,
    /// Connection (and TLS handshake) timeout.
    pub connect_timeout: Duration,
    /// PEM file of CA certificates to trust for `rediss://`.
    pub tls_ca_file: Option<PathBuf>,
    /// Trust any server certificate (self-signed test servers).
    pub tls_skip_verify: bool,
    /// TLS server name, when not the URL's host.
    pub tls_sni: Option<String>,
    /// The TLS versions to offer (`redis.tls_protocols=TLSv1.2,TLSv1.3`); empty: both.
    pub tls_protocols: Vec<TlsVersion>,
    /// Client certificate chain (PEM) and its private key (PEM), for servers that
    /// authenticate clients (`tls-auth-clients yes`).
    pub tls_client_cert: Option<(PathBuf, PathBuf)>,
    /// Cluster handling.
    pub cluster: ClusterMode,
    /// The sorted set indexing keys for scans (hash model).
    pub index_key: String,
    /// memtier's `--data-offset` (string model): when above 0, a blob write is
    /// `SETRANGE key OFFSET value` (no time to live) and a single-key read
    /// `GETRANGE key OFFSET -1`, so values sit `OFFSET` bytes into their strings.
    pub data_offset: u32,
    /// Which addresses host names resolve to.
    pub address_family: AddressFamily,
    /// Close and reopen a session's connections after this many requests (0: never).
    pub reconnect_interval: u64,
    /// How the index orders keys, and so what a scan returns (hash model).
    pub index_order: IndexOrder,
}

fn config_err(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Config, message)
}

impl RedisConfig {
    /// Validates `redis.*` options for the server at `url`; `default_model` applies when
    /// `redis.model` is not given (YCSB workloads use hash, memtier-style ones string).
    pub fn from_options(
        url: &str,
        default_model: Model,
        mut opts: StoreOptions,
    ) -> Result<RedisConfig, StoreError> {
        let url = ServerUrl::parse(url, &["redis", "rediss", "redis+unix", "unix"], 6379)?;
        if url.server_count() != 1 {
            return Err(config_err(format!(
                "{url}: give one server (a cluster is discovered from any of its nodes)"
            )));
        }
        let model = match opts
            .choice("model", &["hash", "string"], default_model.name())?
            .as_str()
        {
            "string" => Model::String,
            _ => Model::Hash,
        };
        let resp3 = opts.choice("protocol", &["resp2", "resp3", "2", "3"], "resp2")?;
        let timeout_ms = opts.int("timeout_ms", 0)?;
        let connect_timeout_ms = opts.int("connect_timeout_ms", 5000)?;
        if timeout_ms < 0 || connect_timeout_ms <= 0 {
            return Err(config_err(
                "redis.timeout_ms must be >= 0 (0: none) and redis.connect_timeout_ms > 0".into(),
            ));
        }
        let tls_ca_file = Some(opts.string("tls_ca_file", ""))
            .filter(|s| !s.is_empty())
            .map(PathBuf::from);
        let tls_skip_verify = opts.bool("tls_skip_verify", false)?;
        let tls_sni = Some(opts.string("tls_sni", "")).filter(|s| !s.is_empty());
        let tls_protocols = TlsVersion::parse_list(&opts.string("tls_protocols", ""))?;
        let tls_client_cert = match (
            Some(opts.string("tls_cert_file", "")).filter(|s| !s.is_empty()),
            Some(opts.string("tls_key_file", "")).filter(|s| !s.is_empty()),
        ) {
            (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
            (None, None) => None,
            _ => {
                return Err(config_err(
                    "a client certificate needs both redis.tls_cert_file and \
                     redis.tls_key_file"
                        .into(),
                ))
            }
        };
        let cluster = match opts
            .choice("cluster", &["auto", "yes", "no", "true", "false"], "auto")?
            .as_str()
        {
            "yes" | "true" => ClusterMode::Yes,
            "no" | "false" => ClusterMode::No,
            _ => ClusterMode::Auto,
        };
        let index_key = opts.string("index_key", "_indices");
        let data_offset = opts.int("data_offset", 0)?;
        if !(0..=i64::from(MAX_DATA_OFFSET)).contains(&data_offset) {
            return Err(config_err(format!(
                "redis.data_offset must be 0 to {MAX_DATA_OFFSET}, got {data_offset}"
            )));
        }
        if data_offset > 0 && model != Model::String {
            return Err(config_err(
                "redis.data_offset (SETRANGE/GETRANGE) needs redis.model=string".into(),
            ));
        }
        let address_family =
            AddressFamily::parse(&opts.choice("address_family", AddressFamily::NAMES, "any")?)
                .expect("a listed choice");
        let reconnect_interval = opts.int("reconnect_interval", 0)?;
        if reconnect_interval < 0 {
            return Err(config_err(
                "redis.reconnect_interval must be >= 0 (0: never)".into(),
            ));
        }
        let index_order = match opts
            .choice("index_order", &["ycsb", "key"], "ycsb")?
            .as_str()
        {
            "key" => IndexOrder::Key,
            _ => IndexOrder::Ycsb,
        };
        opts.finish(OPTION_NAMES)?;
        Ok(RedisConfig {
            url,
            model,
            resp3: resp3.ends_with('3'),
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms as u64)),
            connect_timeout: Duration::from_millis(connect_timeout_ms as u64),
            tls_ca_file,
            tls_skip_verify,
            tls_sni,
            tls_protocols,
            tls_client_cert,
            cluster,
            index_key,
            data_offset: data_offset as u32,
            address_family,
            reconnect_interval: reconnect_interval as u64,
            index_order,
        })
    }

    /// The effective options, for the result document (password hidden).
    pub fn to_stats(&self) -> StoreStats {
        vec![
            ("url".into(), StatValue::from(self.url.to_string())),
            ("model".into(), self.model.name().into()),
            (
                "protocol".into(),
                if self.resp3 { "resp3" } else { "resp2" }.into(),
            ),
            (
                "timeout_ms".into(),
                StatValue::from(self.timeout.map_or(0, |t| t.as_millis() as u64)),
            ),
            (
                "connect_timeout_ms".into(),
                StatValue::from(self.connect_timeout.as_millis() as u64),
            ),
            ("tls".into(), StatValue::from(self.url.scheme == "rediss")),
            (
                "tls_skip_verify".into(),
                StatValue::from(self.tls_skip_verify),
            ),
            (
                "tls_client_cert".into(),
                StatValue::from(self.tls_client_cert.is_some()),
            ),
            ("index_key".into(), self.index_key.as_str().into()),
            (
                "data_offset".into(),
                StatValue::from(u64::from(self.data_offset)),
            ),
            ("address_family".into(), self.address_family.name().into()),
            (
                "reconnect_interval".into(),
                StatValue::from(self.reconnect_interval),
            ),
            ("index_order".into(), self.index_order.name().into()),
        ]
    }
}

/// `ZADD index score key`: the score is the key's Java `hashCode` (YCSB's order) or 0
/// (key order: a set of equal scores is ordered by member bytes).
fn index_add(out: &mut Vec<u8>, order: IndexOrder, index: &[u8], key: &[u8]) {
    let score = match order {
        IndexOrder::Ycsb => f64::from(java_string_hash(key)),
        IndexOrder::Key => 0.0,
    };
    resp::zadd(out, index, score, key);
}

/// The index command of a scan of `n` keys from `key`: `ZRANGEBYSCORE index
/// hashCode(key) +inf LIMIT 0 n` (YCSB's), or `ZRANGEBYLEX index [key + LIMIT 0 n`.
fn index_range(out: &mut Vec<u8>, order: IndexOrder, index: &[u8], key: &[u8], n: u32) {
    if order == IndexOrder::Ycsb {
        let score = f64::from(java_string_hash(key));
        resp::zrangebyscore_limit(out, index, score, u64::from(n));
        return;
    }
    let mut start = Vec::with_capacity(key.len() + 1);
    start.push(b'[');
    start.extend_from_slice(key);
    resp::Command::new(out, 7)
        .arg(b"ZRANGEBYLEX")
        .arg(index)
        .arg(&start)
        .arg(b"+")
        .arg(b"LIMIT")
        .arg(b"0")
        .arg_u64(n as u64);
}

/// The cluster's slot map: which node serves each of the 16384 slots.
struct SlotMap {
    /// Node index per slot; `usize::MAX` where no node is known.
    owner: Vec<usize>,
}

/// What every session of a store shares.
struct Inner {
    config: RedisConfig,
    tls: Option<Arc<Tls>>,
    /// Known nodes; only ever appended to, so an index stays valid.
    nodes: RwLock<Vec<Endpoint>>,
    /// `Some` in cluster mode.
    slots: Option<RwLock<SlotMap>>,
}

impl Inner {
    fn endpoint(&self, host: &str, port: u16) -> Result<Endpoint, StoreError> {
        let name = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let addr = resolve_host(host, port, self.config.address_family)?;
        Ok(Endpoint {
            name,
            addr: Addr::Tcp(addr),
            tls: self.tls.clone(),
            connect_timeout: self.config.connect_timeout,
            timeout: self.config.timeout,
        })
    }

    /// The index of the node at `host:port`, adding it if new.
    fn node_index(&self, host: &str, port: u16) -> Result<usize, StoreError> {
        let ep = self.endpoint(host, port)?;
        let mut nodes = self.nodes.write().expect("node list lock poisoned");
        if let Some(i) = nodes.iter().position(|n| n.addr == ep.addr) {
            return Ok(i);
        }
        nodes.push(ep);
        Ok(nodes.len() - 1)
    }

    /// The node that serves `key`.
    fn route(&self, key: &[u8]) -> usize {
        match &self.slots {
            None => 0,
            Some(_) => self.route_slot(resp::key_slot(key)),
        }
    }

    /// The node that serves hash slot `slot` (node 0 when no node is known).
    fn route_slot(&self, slot: u16) -> usize {
        match &self.slots {
            None => 0,
            Some(map) => {
                let owner = map.read().expect("slot map lock poisoned").owner[slot as usize];
                if owner == usize::MAX {
                    0
                } else {
                    owner
                }
            }
        }
    }

    /// True for a multi-key read sent as one `MGET` per hash slot of its keys (string
    /// model in a cluster).
    fn grouped(&self, req: &Request) -> bool {
        self.slots.is_some() && self.config.model == Model::String && req.is_multi_read()
    }

    /// Where a request's next commands go: the node, whether after an `ASK`, and the
    /// index's node when the request also writes the scan index (hash model).
    ///
    /// A `MOVED` has already updated the slot map, so the request is routed afresh (the
    /// `MOVED` of an index command names the index's node, not the key's); an `ASK`
    /// names the node for this one request. A scan starts at the index's node.
    fn target(
        &self,
        req: &Request,
        redirect: Option<(usize, bool)>,
    ) -> (usize, bool, Option<usize>) {
        let hash = self.config.model == Model::Hash;
        let index = self.config.index_key.as_bytes();
        let (node, ask) = match redirect {
            Some((node, true)) => (node, true),
            _ if req.kind == OpKind::Scan && hash => (self.route(index), false),
            _ => (self.route(&req.key), false),
        };
        let index_node = (hash && matches!(req.kind, OpKind::Insert | OpKind::Delete))
            .then(|| self.route(index));
        (node, ask, index_node)
    }

    /// Loads the slot map from `CLUSTER SLOTS` on `conn`.
    async fn load_slots(&self, conn: &mut Conn) -> Result<(), StoreError> {
        resp::cluster_slots(&mut conn.wbuf);
        conn.flush().await?;
        let ranges = loop {
            match resp::parse(conn.buffered()) {
                Ok(Some((frame, n))) => {
                    let r = if let Some(msg) = error_message(&frame) {
                        Err(StoreError::new(
                            StoreErrorKind::Protocol,
                            format!("CLUSTER SLOTS: {msg}"),
                        ))
                    } else {
                        resp::parse_cluster_slots(&frame).map_err(|e| {
                            StoreError::new(StoreErrorKind::Protocol, format!("CLUSTER SLOTS: {e}"))
                        })
                    };
                    conn.consume(n);
                    break r?;
                }
                Ok(None) => conn.fill().await?,
                Err(e) => return Err(conn.protocol_error(e)),
            }
        };
        let mut owner = vec![usize::MAX; 16384];
        for r in &ranges {
            let node = self.node_index(&r.master.0, r.master.1)?;
            for s in r.start..=r.end.min(16383) {
                owner[s as usize] = node;
            }
        }
        if let Some(map) = &self.slots {
            map.write().expect("slot map lock poisoned").owner = owner;
        }
        Ok(())
    }

    /// Connects to node `i` and runs the handshake: `HELLO 3` (with credentials) for
    /// RESP3, else `AUTH`; then `SELECT` for a database other than 0.
    async fn connect(&self, i: usize) -> Result<Conn, StoreError> {
        let ep = self.nodes.read().expect("node list lock poisoned")[i].clone();
        let mut conn = Conn::connect(&ep).await?;
        let url = &self.config.url;
        let pass = url.password.as_deref().map(str::as_bytes);
        let user = url.user.as_deref().map(str::as_bytes);
        let mut replies = 0;
        if self.config.resp3 {
            let auth = pass.map(|p| (user.unwrap_or(b"default"), p));
            resp::hello(&mut conn.wbuf, 3, auth);
            replies += 1;
        } else if let Some(p) = pass {
            resp::auth(&mut conn.wbuf, user, p);
            replies += 1;
        }
        if let Some(db) = url.db.filter(|&d| d != 0) {
            resp::select(&mut conn.wbuf, db);
            replies += 1;
        }
        if replies == 0 {
            return Ok(conn);
        }
        conn.flush().await?;
        let mut first_error = None;
        for _ in 0..replies {
            loop {
                match resp::parse(conn.buffered()) {
                    Ok(Some((frame, n))) => {
                        if let Some(msg) = error_message(&frame) {
                            first_error.get_or_insert(msg);
                        }
                        conn.consume(n);
                        break;
                    }
                    Ok(None) => conn.fill().await?,
                    Err(e) => return Err(conn.protocol_error(e)),
                }
            }
        }
        match first_error {
            None => Ok(conn),
            Some(msg) => Err(StoreError::new(
                StoreErrorKind::Config,
                format!(
                    "{}: the handshake (AUTH/HELLO/SELECT) failed: {msg}",
                    ep.name
                ),
            )),
        }
    }
}

/// The text of an error reply, if `frame` is one.
fn error_message(frame: &Frame<'_>) -> Option<String> {
    match frame {
        Frame::Error(m) | Frame::BulkError(m) => Some(String::from_utf8_lossy(m).into_owned()),
        _ => None,
    }
}

/// A store on a Redis-protocol server or cluster.
pub struct RedisStore {
    inner: Arc<Inner>,
    /// Runs the store's own requests (probe, INFO) from the calling thread.
    runtime: tokio::runtime::Runtime,
    server: Vec<(String, String)>,
}

impl RedisStore {
    /// Connects once to check the server answers and the credentials work, reads the
    /// server's name and version, and discovers a cluster's nodes.
    pub fn open(config: RedisConfig) -> Result<RedisStore, StoreError> {
        let tls = if config.url.scheme == "rediss" {
            Some(tls_settings(
                &config.url.hosts[0].0,
                config.tls_ca_file.as_deref(),
                config.tls_skip_verify,
                config.tls_sni.as_deref(),
                &config.tls_protocols,
                config
                    .tls_client_cert
                    .as_ref()
                    .map(|(c, k)| (c.as_path(), k.as_path())),
            )?)
        } else {
            None
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::new(StoreErrorKind::Io, format!("starting a runtime: {e}")))?;
        let mut inner = Inner {
            config,
            tls,
            nodes: RwLock::new(Vec::new()),
            slots: None,
        };
        match &inner.config.url.socket {
            Some(path) => {
                let ep = Endpoint {
                    name: path.display().to_string(),
                    addr: Addr::Unix(path.clone()),
                    tls: None,
                    connect_timeout: inner.config.connect_timeout,
                    timeout: inner.config.timeout,
                };
                inner
                    .nodes
                    .write()
                    .expect("node list lock poisoned")
                    .push(ep);
            }
            None => {
                let (host, port) = inner.config.url.hosts[0].clone();
                inner.node_index(&host, port)?;
            }
        }
        let (server, cluster) = runtime.block_on(async {
            let mut conn = inner.connect(0).await?;
            let info = info(&mut conn, Some("server")).await?;
            let cluster_info = info_map(&info_text(&mut conn, "cluster").await?);
            Ok::<_, StoreError>((info_map(&info), cluster_info))
        })?;
        let enabled = cluster
            .iter()
            .any(|(k, v)| k == "cluster_enabled" && v == "1");
        match (inner.config.cluster, enabled) {
            (ClusterMode::Yes, false) => {
                return Err(config_err(format!(
                    "{}: redis.cluster=yes but the server is not in cluster mode",
                    inner.config.url
                )))
            }
            (ClusterMode::Yes, true) | (ClusterMode::Auto, true) => {
                inner.slots = Some(RwLock::new(SlotMap {
                    owner: vec![usize::MAX; 16384],
                }));
                runtime.block_on(async {
                    let mut conn = inner.connect(0).await?;
                    inner.load_slots(&mut conn).await
                })?;
            }
            _ => {}
        }
        let keep = [
            "redis_version",
            "valkey_version",
            "dragonfly_version",
            "server_name",
            "redis_mode",
            "os",
            "arch_bits",
            "io_threads_active",
        ];
        let server = server
            .into_iter()
            .filter(|(k, _)| keep.contains(&k.as_str()))
            .collect();
        Ok(RedisStore {
            inner: Arc::new(inner),
            runtime,
            server,
        })
    }

    /// The server's name and version as `INFO server` reports them.
    pub fn server_info(&self) -> &[(String, String)] {
        &self.server
    }

    /// True when talking to a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        self.inner.slots.is_some()
    }

    /// Number of nodes known (cluster masters, or 1).
    pub fn nodes(&self) -> usize {
        self.inner
            .nodes
            .read()
            .expect("node list lock poisoned")
            .len()
    }
}

async fn info_text(conn: &mut Conn, section: &str) -> Result<String, StoreError> {
    resp::info(&mut conn.wbuf, Some(section.as_bytes()));
    conn.flush().await?;
    loop {
        match resp::parse(conn.buffered()) {
            Ok(Some((frame, n))) => {
                let text = match frame {
                    Frame::Bulk(Some(b)) | Frame::VerbatimString { text: b, .. } => {
                        Ok(String::from_utf8_lossy(b).into_owned())
                    }
                    Frame::SimpleString(b) => Ok(String::from_utf8_lossy(b).into_owned()),
                    other => Err(StoreError::new(
                        StoreErrorKind::Protocol,
                        format!(
                            "INFO {section}: {}",
                            error_message(&other).unwrap_or_else(|| format!(
                                "unexpected {} reply",
                                other.type_name()
                            ))
                        ),
                    )),
                };
                conn.consume(n);
                return text;
            }
            Ok(None) => conn.fill().await?,
            Err(e) => return Err(conn.protocol_error(e)),
        }
    }
}

async fn info(conn: &mut Conn, section: Option<&str>) -> Result<String, StoreError> {
    info_text(conn, section.unwrap_or("all")).await
}

/// `name:value` lines of an INFO reply ([`kvlab_proto::stats::info_fields`]), owned.
fn info_map(text: &str) -> Vec<(String, String)> {
    kvlab_proto::stats::info_fields(text)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl Store for RedisStore {
    type Session = RedisSession;

    fn name(&self) -> &'static str {
        "redis"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            scan: self.inner.config.model == Model::Hash,
            persistent: true,
            needs_runtime: true,
            multi_read: self.inner.config.model == Model::String,
            commands: true,
            ttl: true,
        }
    }

    fn session(&self) -> Result<RedisSession, StoreError> {
        Ok(RedisSession {
            inner: Arc::clone(&self.inner),
            links: Vec::new(),
            work: Work::default(),
            recycle: Recycle::new(self.inner.config.reconnect_interval),
        })
    }

    fn options(&self) -> StoreStats {
        let mut o = self.inner.config.to_stats();
        o.push(("cluster".into(), StatValue::from(self.is_cluster())));
        o.push(("nodes".into(), StatValue::from(self.nodes() as u64)));
        for (k, v) in &self.server {
            o.push((format!("server.{k}"), v.as_str().into()));
        }
        o
    }

    fn stats(&self) -> StoreStats {
        let nodes = self.nodes();
        let mut totals: Vec<(String, StatValue)> = Vec::new();
        for i in 0..nodes {
            let got = self.runtime.block_on(async {
                let mut conn = self.inner.connect(i).await?;
                info(&mut conn, None).await
            });
            let Ok(text) = got else { continue };
            for (k, v) in info_map(&text) {
                if !kvlab_proto::stats::REDIS_RESULT_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                // Counters add up over a cluster's nodes; the rest are the first node's.
                crate::conn::add_stat(&mut totals, k, &v);
            }
        }
        totals
    }
}

/// What one command of a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// `GET` of a read.
    Get,
    /// `HGETALL` of a read.
    HGetAll,
    /// `HMGET` of a read of named fields.
    HMGet,
    /// `SET`/`HSET` of a write: the request completes as written.
    Write,
    /// `ASKING`: only checked for errors.
    Aside,
    /// `ZADD`/`ZREM` of the scan index: checked for errors and redirections of the
    /// index's own slot.
    Index,
    /// `DEL` of a delete.
    Del,
    /// `ZRANGEBYLEX` of a scan: the keys to read next.
    ScanIndex,
    /// `HGETALL`/`HMGET` of a scanned key: adds a record to the scan.
    ScanRead,
    /// `GET` before a partial update of a string record.
    UpdateGet,
    /// `MGET` of a multi-key read.
    MGet,
    /// `MGET` of the keys of a cluster multi-key read that share one hash slot (one
    /// [`Group`]).
    MGetGroup,
    /// An arbitrary command ([`Request::command`]), sent as given; any reply but an
    /// error completes it.
    Command,
}

/// A command waiting for its reply on a node's connection.
#[derive(Clone, Copy, Debug)]
struct Pending {
    slot: usize,
    part: Part,
    /// For a [`Part::ScanRead`]: the index of its key in `Work::keys`; for a
    /// [`Part::MGetGroup`]: the index of its group in `Work::groups`.
    key: u32,
}

/// Progress of one request of the batch.
#[derive(Default)]
struct SlotWork {
    /// Commands still unanswered.
    waiting: u32,
    outcome: Option<Result<Outcome, StoreError>>,
    /// Node to resend to after a redirection, and whether it was an `ASK`.
    redirect: Option<(usize, bool)>,
    /// The same for the scan index's command (hash model), whose slot is not the key's.
    index_redirect: Option<(usize, bool)>,
    /// Scan progress: keys found by the index (range into `Work::keys`), records and
    /// bytes read so far.
    scan_keys: std::ops::Range<usize>,
    /// The scan's reads have been sent (its index was answered before).
    scan_reading: bool,
    /// Reads of scanned keys that were redirected and are sent again next round.
    scan_rereads: u32,
    scanned: u64,
    scanned_bytes: u64,
    /// A string update's merged value, to be written in the next round.
    merged: Option<Vec<u8>>,
    /// A cluster multi-key read: its groups of keys (range into `Work::groups`), the
    /// groups redirected and sent again next round, and the keys found and value bytes
    /// returned so far.
    groups: std::ops::Range<usize>,
    group_resends: u32,
    multi_hits: u32,
    multi_bytes: u64,
}

/// The keys of a cluster multi-key read that share one hash slot: they go to one node
/// as one `MGET` (Redis refuses an `MGET` across slots with `CROSSSLOT`, even when one
/// node serves them all).
struct Group {
    /// Range into `Work::group_keys`, which holds indices of the request's keys
    /// (0 is [`Request::key`], `k` the `k`-th of [`Request::more_keys`] from 1).
    keys: std::ops::Range<usize>,
    /// The node to send the `MGET` to next and whether after an `ASK`; `None` once
    /// sent.
    target: Option<(usize, bool)>,
}

/// Reusable per-batch state.
#[derive(Default)]
struct Work {
    slots: Vec<SlotWork>,
    /// Per node: the commands sent, in order.
    queues: Vec<Vec<Pending>>,
    /// Keys a scan's index returned.
    keys: Vec<Vec<u8>>,
    /// Per key of `keys`: the node to read it from next round and whether after an
    /// `ASK`; `None` once its read is sent.
    key_target: Vec<Option<(usize, bool)>>,
    keys_used: usize,
    current: Record,
    /// Requests with something to send in the current round (kept for its capacity).
    todo: Vec<usize>,
    /// Nodes this batch failed to connect to, with the error: the batch's other
    /// requests to them fail at once instead of each waiting for its own attempt.
    down: Vec<(usize, StoreError)>,
    /// The groups of the batch's cluster multi-key reads, and their keys' indices.
    groups: Vec<Group>,
    group_keys: Vec<u32>,
    /// Scratch: (hash slot, key index) of a multi-key read's keys, to group them.
    by_slot: Vec<(u16, u32)>,
    /// The command of each request of a batch sent the direct way
    /// ([`RedisSession::execute_direct`]).
    parts: Vec<Part>,
    /// A `-TRYAGAIN` came back this round: the next round waits first.
    try_again: bool,
}

impl Work {
    /// Splits the keys of multi-key read `i` by hash slot into groups, each aimed at
    /// the node that serves its slot.
    fn plan_groups(&mut self, inner: &Inner, req: &Request, i: usize) {
        let Work {
            slots,
            groups,
            group_keys,
            by_slot,
            ..
        } = self;
        by_slot.clear();
        by_slot.extend(
            req.keys()
                .enumerate()
                .map(|(k, key)| (resp::key_slot(key), k as u32)),
        );
        by_slot.sort_unstable();
        let first = groups.len();
        for run in by_slot.chunk_by(|a, b| a.0 == b.0) {
            let start = group_keys.len();
            group_keys.extend(run.iter().map(|&(_, k)| k));
            groups.push(Group {
                keys: start..group_keys.len(),
                target: Some((inner.route_slot(run[0].0), false)),
            });
        }
        slots[i].groups = first..groups.len();
    }
}

/// Key `k` of a request: 0 is [`Request::key`], then [`Request::more_keys`].
fn nth_key(req: &Request, k: u32) -> &[u8] {
    match k {
        0 => &req.key,
        k => req.more_keys.get(k as usize - 1),
    }
}

/// Where a part of request `i` (work `w`) goes on `node`: that node's connection and
/// queue, with an `ASKING` queued ahead of it for an `ASK` redirection. `None` (and the
/// request failed) when the node has no connection: `execute` connects first, so a
/// failure there already failed the request.
fn redirected<'a>(
    links: &'a mut [Link],
    queues: &'a mut Vec<Vec<Pending>>,
    w: &mut SlotWork,
    i: usize,
    node: usize,
    ask: bool,
) -> Option<(&'a mut Conn, &'a mut Vec<Pending>)> {
    if queues.len() <= node {
        queues.resize_with(node + 1, Vec::new);
    }
    let Some(conn) = links.get_mut(node).and_then(|l| l.conn.as_mut()) else {
        w.outcome.get_or_insert_with(|| {
            Err(StoreError::new(StoreErrorKind::Connection, "not connected"))
        });
        return None;
    };
    let q = &mut queues[node];
    if ask {
        asking_ahead(conn, q, w, i);
    }
    Some((conn, q))
}

/// Queues an `ASKING` on `conn` for request `i`, ahead of the command an `ASK`
/// redirection sends there; its reply is set aside.
fn asking_ahead(conn: &mut Conn, q: &mut Vec<Pending>, w: &mut SlotWork, i: usize) {
    resp::asking(&mut conn.wbuf);
    q.push(Pending {
        slot: i,
        part: Part::Aside,
        key: 0,
    });
    w.waiting += 1;
}

/// A worker's connections to a `redis` store: one per node.
pub struct RedisSession {
    inner: Arc<Inner>,
    links: Vec<Link>,
    work: Work,
    /// `redis.reconnect_interval`.
    recycle: Recycle,
}

/// How many rounds a batch may take: a scan needs two, and each redirection one more.
const MAX_ROUNDS: usize = 6;

/// The pause before resending an `MGET` answered `-TRYAGAIN` (keys of a slot split by a
/// resharding), doubled at each of up to [`TRY_AGAIN_WAITS`] waits per batch: 10 ms to
/// 640 ms, 1.27 s in all.
const TRY_AGAIN_FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// How many times a batch waits for a resharding before `-TRYAGAIN` counts as a
/// redirection round.
const TRY_AGAIN_WAITS: u32 = 7;

impl RedisSession {
    /// Grows the per-node link and queue lists to hold `node`.
    fn make_room(&mut self, node: usize) {
        if self.links.len() <= node {
            self.links.resize_with(node + 1, Link::default);
        }
        if self.work.queues.len() <= node {
            self.work.queues.resize_with(node + 1, Vec::new);
        }
    }

    fn link(&mut self, node: usize) -> &mut Link {
        self.make_room(node);
        &mut self.links[node]
    }

    async fn ensure_connected(&mut self, node: usize) -> Result<(), StoreError> {
        if self.link(node).conn.is_some() {
            return Ok(());
        }
        self.link(node).backoff.wait().await;
        match self.inner.connect(node).await {
            Ok(c) => {
                let link = self.link(node);
                link.conn = Some(c);
                link.backoff.succeeded();
                Ok(())
            }
            Err(e) => {
                self.link(node).backoff.failed();
                Err(e)
            }
        }
    }

    /// [`RedisSession::ensure_connected`] at most once per batch and node: after a
    /// failed attempt, the error again.
    async fn connect_once(&mut self, node: usize) -> Result<(), StoreError> {
        if let Some((_, e)) = self.work.down.iter().find(|(n, _)| *n == node) {
            return Err(e.clone());
        }
        let r = self.ensure_connected(node).await;
        if let Err(e) = &r {
            self.work.down.push((node, e.clone()));
        }
        r
    }

    /// Encodes the commands of request `i` for this round onto its node's queue.
    ///
    /// `inner` is the session's own (cloned once per batch, so that encoding a request
    /// does not touch the shared count).
    fn encode(&mut self, inner: &Inner, batch: &Batch, i: usize) {
        let req = &batch.slots()[i].request;
        if req.kind == OpKind::Scan && !self.work.slots[i].scan_keys.is_empty() {
            self.encode_scan_reads(req, i);
            return;
        }
        if inner.grouped(req) {
            self.encode_groups(req, i);
            return;
        }
        let model = inner.config.model;
        let offset = inner.config.data_offset;
        let redirect = self.work.slots[i].redirect.take();
        let (node, ask, _) = inner.target(req, redirect);
        self.make_room(node);
        let w = &mut self.work.slots[i];
        let Some(conn) = self.links[node].conn.as_mut() else {
            // Not connected: failed below when the connection is attempted.
            self.work.queues[node].push(Pending {
                slot: i,
                part: Part::Aside,
                key: 0,
            });
            w.waiting += 1;
            return;
        };
        let out = &mut conn.wbuf;
        let q = &mut self.work.queues[node];
        let mut push = |part: Part, w: &mut SlotWork| {
            q.push(Pending {
                slot: i,
                part,
                key: 0,
            });
            w.waiting += 1;
        };
        if ask {
            resp::asking(out);
            push(Part::Aside, w);
        }
        if let Some(value) = w.merged.take() {
            resp::set(out, &req.key, &value, (req.ttl_s > 0).then_some(req.ttl_s));
            push(Part::Write, w);
            return;
        }
        if req.command.is_some() {
            encode_single(out, Part::Command, model, 0, req);
            push(Part::Command, w);
            return;
        }
        let index = inner.config.index_key.as_bytes();
        let order = inner.config.index_order;
        match (req.kind, model) {
            (OpKind::Read, Model::String) if req.is_multi_read() => {
                encode_single(out, Part::MGet, model, offset, req);
                push(Part::MGet, w);
            }
            (OpKind::Read, Model::Hash) if req.is_multi_read() => {
                w.outcome = Some(Err(StoreError::new(
                    StoreErrorKind::Unsupported,
                    "a multi-key read (MGET) needs the string model: redis.model=string",
                )));
            }
            (OpKind::Read, Model::String) => {
                encode_single(out, Part::Get, model, offset, req);
                push(Part::Get, w);
            }
            (OpKind::Read, Model::Hash) => {
                let part = read_command(out, req, &req.key);
                push(part, w);
            }
            (OpKind::Insert | OpKind::Update, Model::String) => {
                if req.kind == OpKind::Update && !req.blob {
                    resp::get(out, &req.key);
                    push(Part::UpdateGet, w);
                } else {
                    encode_single(out, Part::Write, model, offset, req);
                    push(Part::Write, w);
                }
            }
            (OpKind::Insert | OpKind::Update, Model::Hash) => {
                resp::hset(out, &req.key, req.record.iter());
                push(Part::Write, w);
                if req.kind == OpKind::Insert {
                    // The index lives in its own slot: in a cluster, another node.
                    self.pending_index(i, |out| index_add(out, order, index, &req.key));
                }
            }
            (OpKind::Delete, _) => {
                resp::del(out, &req.key);
                push(Part::Del, w);
                if model == Model::Hash {
                    self.pending_index(i, |out| {
                        resp::Command::new(out, 3)
                            .arg(b"ZREM")
                            .arg(index)
                            .arg(&req.key);
                    });
                }
            }
            (OpKind::Scan, _) => {
                // `target` sent the scan to the index's node.
                index_range(out, order, index, &req.key, req.scan_len);
                push(Part::ScanIndex, w);
            }
            (OpKind::ReadModifyWrite, _) => {
                w.outcome = Some(Err(StoreError::read_modify_write_unsplit()));
            }
        }
    }

    /// Queues the reads of a scan's keys, each on its own node: every key once the
    /// index has answered, then the keys whose reads were redirected.
    fn encode_scan_reads(&mut self, req: &Request, i: usize) {
        let w = &mut self.work.slots[i];
        w.scan_reading = true;
        w.scan_rereads = 0;
        for j in w.scan_keys.clone() {
            let Some((node, ask)) = self.work.key_target[j].take() else {
                continue;
            };
            let Some((conn, q)) =
                redirected(&mut self.links, &mut self.work.queues, w, i, node, ask)
            else {
                continue;
            };
            read_command(&mut conn.wbuf, req, &self.work.keys[j]);
            q.push(Pending {
                slot: i,
                part: Part::ScanRead,
                key: j as u32,
            });
            w.waiting += 1;
        }
    }

    /// Queues the `MGET` of every group of cluster multi-key read `i` that has
    /// somewhere to go: all of them in the first round, then those redirected.
    fn encode_groups(&mut self, req: &Request, i: usize) {
        let w = &mut self.work.slots[i];
        w.group_resends = 0;
        for g in w.groups.clone() {
            let group = &mut self.work.groups[g];
            let Some((node, ask)) = group.target.take() else {
                continue;
            };
            let Some((conn, q)) =
                redirected(&mut self.links, &mut self.work.queues, w, i, node, ask)
            else {
                continue;
            };
            let keys = &self.work.group_keys[group.keys.clone()];
            let mut cmd = resp::Command::new(&mut conn.wbuf, 1 + keys.len());
            cmd.arg(b"MGET");
            for &k in keys {
                cmd.arg(nth_key(req, k));
            }
            q.push(Pending {
                slot: i,
                part: Part::MGetGroup,
                key: g as u32,
            });
            w.waiting += 1;
        }
    }

    /// Queues an index command (`ZADD`/`ZREM`) for request `i` on the index key's node.
    fn pending_index(&mut self, i: usize, encode: impl FnOnce(&mut Vec<u8>)) {
        let (node, ask) = match self.work.slots[i].index_redirect.take() {
            Some((node, true)) => (node, true),
            // After a `MOVED` the slot map already names the index's new node.
            _ => (
                self.inner.route(self.inner.config.index_key.as_bytes()),
                false,
            ),
        };
        self.make_room(node);
        let w = &mut self.work.slots[i];
        let q = &mut self.work.queues[node];
        match self.links[node].conn.as_mut() {
            Some(conn) => {
                if ask {
                    asking_ahead(conn, q, w, i);
                }
                encode(&mut conn.wbuf);
            }
            None => {
                // Fails when the connection is attempted; the request then fails.
            }
        }
        q.push(Pending {
            slot: i,
            part: Part::Index,
            key: 0,
        });
        w.waiting += 1;
    }
}

/// `HGETALL key`, or `HMGET key names…` for a read of named fields.
fn read_command(out: &mut Vec<u8>, req: &Request, key: &[u8]) -> Part {
    if req.read_all || req.record.is_empty() {
        resp::hgetall(out, key);
        Part::HGetAll
    } else {
        let mut cmd = resp::Command::new(out, 2 + req.record.len());
        cmd.arg(b"HMGET").arg(key);
        for (name, _) in req.record.iter() {
            cmd.arg(name);
        }
        Part::HMGet
    }
}

/// The one command that serves `req` on its own, when there is one: a read, a string
/// write that needs no read first, a hash update, a string delete. The rest (inserts
/// and deletes that also touch the scan index, partial string updates, scans) take
/// several commands; so does a multi-key read in a cluster, one `MGET` per hash slot
/// ([`Group`]), which is why only batches for one server use this.
fn single_command(model: Model, req: &Request) -> Option<Part> {
    if req.command.is_some() {
        return Some(Part::Command);
    }
    match (req.kind, model) {
        (OpKind::Read, Model::String) if req.is_multi_read() => Some(Part::MGet),
        (OpKind::Read, Model::Hash) if req.is_multi_read() => None,
        (OpKind::Read, Model::String) => Some(Part::Get),
        (OpKind::Read, Model::Hash) if req.read_all || req.record.is_empty() => Some(Part::HGetAll),
        (OpKind::Read, Model::Hash) => Some(Part::HMGet),
        (OpKind::Insert, Model::String) | (OpKind::Update, Model::Hash) => Some(Part::Write),
        (OpKind::Update, Model::String) if req.blob => Some(Part::Write),
        (OpKind::Delete, Model::String) => Some(Part::Del),
        _ => None,
    }
}

/// Encodes the command `part` ([`single_command`]) of `req`; with a data offset
/// ([`RedisConfig::data_offset`]) a string read or blob write addresses its value at that
/// offset, as memtier's `write_command_get` and `write_command_set` do.
fn encode_single(out: &mut Vec<u8>, part: Part, model: Model, data_offset: u32, req: &Request) {
    match part {
        Part::Get if data_offset > 0 => {
            resp::Command::new(out, 4)
                .arg(b"GETRANGE")
                .arg(&req.key)
                .arg_u64(u64::from(data_offset))
                .arg(b"-1");
        }
        Part::Get => resp::get(out, &req.key),
        Part::Write if data_offset > 0 && model == Model::String && req.blob => {
            resp::Command::new(out, 4)
                .arg(b"SETRANGE")
                .arg(&req.key)
                .arg_u64(u64::from(data_offset))
                .arg(req.blob_value());
        }
        Part::MGet => {
            let mut cmd = resp::Command::new(out, 1 + req.key_count());
            cmd.arg(b"MGET");
            for key in req.keys() {
                cmd.arg(key);
            }
        }
        Part::HGetAll | Part::HMGet => {
            read_command(out, req, &req.key);
        }
        Part::Write if model == Model::Hash => resp::hset(out, &req.key, req.record.iter()),
        Part::Write => {
            // `SET key value [EX ttl]`
            let ttl = (req.ttl_s > 0).then_some(req.ttl_s);
            if req.blob {
                resp::set(out, &req.key, req.blob_value(), ttl);
            } else {
                let mut value = Vec::with_capacity(req.record.encoded_len());
                req.encode_value(&mut value);
                resp::set(out, &req.key, &value, ttl);
            }
        }
        Part::Del => resp::del(out, &req.key),
        Part::Command => {
            let mut cmd = resp::Command::new(out, req.args.len());
            for arg in req.args.iter() {
                cmd.arg(arg);
            }
        }
        other => unreachable!("{other:?} is not a single command"),
    }
}

/// The payload bytes of a reply to an arbitrary command: the strings' bytes, or the
/// encoded elements of an aggregate; numbers, booleans and nil count nothing.
fn reply_bytes(frame: &Frame<'_>) -> u64 {
    let n = match frame {
        Frame::SimpleString(b) | Frame::Error(b) | Frame::BigNumber(b) | Frame::BulkError(b) => {
            b.len()
        }
        Frame::Bulk(Some(b)) => b.len(),
        Frame::VerbatimString { text, .. } => text.len(),
        Frame::Array(Some(a)) | Frame::Map(a) | Frame::Set(a) | Frame::Push(a) => a.bytes().len(),
        Frame::Bulk(None)
        | Frame::Array(None)
        | Frame::Null
        | Frame::Integer(_)
        | Frame::Boolean(_)
        | Frame::Double(_) => 0,
    };
    n as u64
}

/// The outcome of a request sent as one command ([`single_command`]) from its reply,
/// which is not an error reply.
fn single_outcome(part: Part, frame: &Frame<'_>, slot: &mut Slot) -> Result<Outcome, StoreError> {
    let req = &slot.request;
    match part {
        Part::Command => Ok(Outcome::Replied {
            bytes: reply_bytes(frame),
            nil: matches!(frame, Frame::Bulk(None) | Frame::Array(None) | Frame::Null),
        }),
        Part::Write => Ok(Outcome::Written {
            bytes: req.written_bytes(),
        }),
        Part::Del => Ok(Outcome::Deleted),
        Part::Get => match frame {
            // A blob is returned verbatim: its size is the value's.
            Frame::Bulk(Some(v)) if req.blob => {
                slot.reply.clear();
                slot.reply.push(b"", v);
                Ok(Outcome::Hit {
                    bytes: v.len() as u64,
                })
            }
            Frame::Bulk(Some(v)) => req.decode_value(v, &mut slot.reply).map(|()| Outcome::Hit {
                bytes: slot.reply.value_bytes() as u64,
            }),
            Frame::Bulk(None) | Frame::Null => Ok(Outcome::Miss),
            other => Err(unexpected("GET", other)),
        },
        Part::MGet => match frame.as_aggregate() {
            Some(values) => {
                slot.reply.clear();
                let (mut hits, mut bytes) = (0u32, 0u64);
                for (key, value) in req.keys().zip(values.iter()) {
                    if let Some(v) = value.as_bytes() {
                        slot.reply.push(key, v);
                        hits += 1;
                        bytes += v.len() as u64;
                    }
                }
                Ok(Outcome::MultiRead {
                    hits,
                    misses: (req.key_count() as u32).saturating_sub(hits),
                    bytes,
                })
            }
            None => Err(unexpected("MGET", frame)),
        },
        Part::HGetAll | Part::HMGet => {
            match hash_reply(frame, req, &mut slot.reply, part == Part::HGetAll) {
                Err(e) => Err(e),
                Ok(()) if slot.reply.is_empty() => Ok(Outcome::Miss),
                Ok(()) => Ok(Outcome::Hit {
                    bytes: slot.reply.value_bytes() as u64,
                }),
            }
        }
        other => unreachable!("{other:?} is not a single command"),
    }
}

impl RedisSession {
    /// Executes a batch: in one pass when it can ([`RedisSession::execute_direct`]),
    /// else in rounds.
    async fn execute_rounds(&mut self, batch: &mut Batch) {
        if self.inner.slots.is_none() && self.execute_direct(batch).await {
            return;
        }
        let n = batch.len();
        self.work.slots.clear();
        self.work.slots.resize_with(n, SlotWork::default);
        self.work.keys_used = 0;
        self.work.down.clear();
        self.work.groups.clear();
        self.work.group_keys.clear();
        // Cloned once per batch: encoding a request does not touch the shared count.
        let inner = Arc::clone(&self.inner);
        let mut todo = std::mem::take(&mut self.work.todo);
        let mut round = 0;
        let mut waits = 0;
        self.work.try_again = false;
        while round < MAX_ROUNDS {
            if std::mem::take(&mut self.work.try_again) {
                // Rounds that only wait out a resharding do not count as redirections.
                tokio::time::sleep(TRY_AGAIN_FIRST_WAIT * (1 << waits)).await;
                waits += 1;
            }
            // Requests with something left to send this round.
            todo.clear();
            todo.extend((0..n).filter(|&i| {
                let w = &self.work.slots[i];
                w.outcome.is_none() && w.waiting == 0 && batch.slots()[i].completed_at.is_none()
            }));
            if todo.is_empty() {
                break;
            }
            // Connect to every node this round needs.
            for &i in &todo {
                let req = &batch.slots()[i].request;
                let w = &self.work.slots[i];
                if req.kind == OpKind::Scan && !w.scan_keys.is_empty() {
                    for j in w.scan_keys.clone() {
                        if let Some((node, _)) = self.work.key_target[j] {
                            if let Err(e) = self.connect_once(node).await {
                                self.work.slots[i].outcome = Some(Err(e));
                            }
                        }
                    }
                    continue;
                }
                if inner.grouped(req) {
                    if w.groups.is_empty() {
                        self.work.plan_groups(&inner, req, i);
                    }
                    for g in self.work.slots[i].groups.clone() {
                        let Some((node, _)) = self.work.groups[g].target else {
                            continue;
                        };
                        if self.links.get(node).is_some_and(|l| l.conn.is_some()) {
                            continue;
                        }
                        if let Err(e) = self.connect_once(node).await {
                            self.work.slots[i].outcome = Some(Err(e));
                        }
                    }
                    continue;
                }
                let (node, _, index_node) = inner.target(req, w.redirect);
                let index_node = match w.index_redirect {
                    Some((n, true)) => index_node.map(|_| n),
                    _ => index_node,
                };
                for node in [Some(node), index_node].into_iter().flatten() {
                    if self.links.get(node).is_some_and(|l| l.conn.is_some()) {
                        continue;
                    }
                    if let Err(e) = self.connect_once(node).await {
                        self.work.slots[i].outcome = Some(Err(e));
                    }
                }
            }
            for q in &mut self.work.queues {
                q.clear();
            }
            for &i in &todo {
                if self.work.slots[i].outcome.is_none() {
                    self.encode(&inner, batch, i);
                }
            }
            self.exchange(batch).await;
            if !self.work.try_again || waits == TRY_AGAIN_WAITS {
                round += 1;
            }
            if round == MAX_ROUNDS {
                for w in &mut self.work.slots {
                    if w.outcome.is_none() {
                        w.outcome = Some(Err(StoreError::new(
                            StoreErrorKind::Protocol,
                            "too many redirections",
                        )));
                    }
                }
            }
        }
        self.work.todo = todo;
        for (slot, w) in batch.slots_mut().iter_mut().zip(&mut self.work.slots) {
            if slot.completed_at.is_none() {
                let r = w.outcome.take().unwrap_or(Err(StoreError::new(
                    StoreErrorKind::Protocol,
                    "request left incomplete",
                )));
                slot.complete(r);
            }
        }
    }
}

impl Session for RedisSession {
    async fn prepare(&mut self) -> Result<(), StoreError> {
        let nodes = self
            .inner
            .nodes
            .read()
            .expect("node list lock poisoned")
            .len();
        for node in 0..nodes {
            self.ensure_connected(node).await?;
        }
        Ok(())
    }

    async fn execute(&mut self, batch: &mut Batch) {
        self.execute_rounds(batch).await;
        if self.recycle.count(batch.len()) {
            // memtier's --reconnect-interval: the next batch connects afresh.
            for link in &mut self.links {
                link.conn = None;
            }
        }
    }
}

impl RedisSession {
    /// The common case, without the bookkeeping of rounds: one node, already
    /// connected, and every request one command ([`single_command`]). Encodes the
    /// batch, sends it, and completes each request at its reply, stamped with the time
    /// of the read that brought it. Returns false, having done nothing, when the batch
    /// needs the general way.
    async fn execute_direct(&mut self, batch: &mut Batch) -> bool {
        let model = self.inner.config.model;
        let offset = self.inner.config.data_offset;
        let Some(link) = self.links.first_mut().filter(|l| l.conn.is_some()) else {
            return false;
        };
        let parts = &mut self.work.parts;
        parts.clear();
        for slot in batch.slots() {
            match single_command(model, &slot.request) {
                Some(part) => parts.push(part),
                None => return false,
            }
        }
        let conn = link.conn.as_mut().expect("checked above");
        for (slot, &part) in batch.slots().iter().zip(parts.iter()) {
            encode_single(&mut conn.wbuf, part, model, offset, &slot.request);
        }
        let mut failed = conn.flush().await.err();
        let mut i = 0;
        while failed.is_none() && i < parts.len() {
            match resp::parse(conn.buffered()) {
                Ok(Some((Frame::Push(_), n))) => conn.consume(n),
                Ok(Some((frame, n))) => {
                    let slot = &mut batch.slots_mut()[i];
                    let result = match error_message(&frame) {
                        Some(msg) => Err(StoreError::new(
                            StoreErrorKind::Protocol,
                            format!("server replied: {msg}"),
                        )),
                        None => single_outcome(parts[i], &frame, slot),
                    };
                    conn.consume(n);
                    slot.complete_at(result, conn.received_at());
                    i += 1;
                }
                Ok(None) => failed = conn.fill().await.err(),
                Err(e) => failed = Some(conn.protocol_error(e)),
            }
        }
        if let Some(e) = failed {
            // The connection is unusable: fail what waits on it and reconnect next time.
            for slot in &mut batch.slots_mut()[i..] {
                slot.complete(Err(e.clone()));
            }
            link.conn = None;
            link.backoff.failed();
        }
        true
    }

    /// Writes every node's queued commands, then reads the replies node by node.
    async fn exchange(&mut self, batch: &mut Batch) {
        for node in 0..self.work.queues.len() {
            if self.work.queues[node].is_empty() {
                continue;
            }
            let Some(conn) = self.links[node].conn.as_mut() else {
                continue;
            };
            if let Err(e) = conn.flush().await {
                self.fail_node(batch, node, e);
            }
        }
        for node in 0..self.work.queues.len() {
            let mut k = 0;
            while k < self.work.queues[node].len() {
                let p = self.work.queues[node][k];
                k += 1;
                let Some(conn) = self.links[node].conn.as_mut() else {
                    let w = &mut self.work.slots[p.slot];
                    w.waiting = w.waiting.saturating_sub(1);
                    w.outcome.get_or_insert_with(|| {
                        Err(StoreError::new(StoreErrorKind::Connection, "not connected"))
                    });
                    continue;
                };
                let got = loop {
                    match resp::parse(conn.buffered()) {
                        Ok(Some((Frame::Push(_), n))) => conn.consume(n),
                        Ok(Some((frame, n))) => {
                            apply(&self.inner, &mut self.work, batch, p, &frame);
                            conn.consume(n);
                            break Ok(());
                        }
                        Ok(None) => {
                            if let Err(e) = conn.fill().await {
                                break Err(e);
                            }
                        }
                        Err(e) => break Err(conn.protocol_error(e)),
                    }
                };
                // The reply arrived with the connection's last read.
                let at = match got {
                    Ok(()) => conn.received_at(),
                    Err(_) => Timestamp::now(),
                };
                if let Err(e) = got {
                    // The connection is unusable: fail what waits on it and reconnect
                    // next time.
                    let w = &mut self.work.slots[p.slot];
                    w.waiting = w.waiting.saturating_sub(1);
                    w.outcome.get_or_insert_with(|| Err(e.clone()));
                    for q in &self.work.queues[node][k..] {
                        let w = &mut self.work.slots[q.slot];
                        w.waiting = w.waiting.saturating_sub(1);
                        w.outcome.get_or_insert_with(|| Err(e.clone()));
                    }
                    k = self.work.queues[node].len();
                    self.links[node].conn = None;
                    self.links[node].backoff.failed();
                }
                // Complete requests as soon as their last reply is in, so each is timed
                // to its own reply.
                let w = &mut self.work.slots[p.slot];
                if w.waiting == 0
                    && w.redirect.is_none()
                    && w.index_redirect.is_none()
                    && w.merged.is_none()
                {
                    if let Some(r) = finish(w, &batch.slots()[p.slot].request) {
                        batch.slots_mut()[p.slot].complete_at(r, at);
                    }
                }
            }
        }
        // Redirections and follow-ups are sent in the next round.
        for w in &mut self.work.slots {
            if w.redirect.is_some() || w.index_redirect.is_some() || w.merged.is_some() {
                w.outcome = None;
            }
        }
    }

    fn fail_node(&mut self, batch: &mut Batch, node: usize, e: StoreError) {
        for p in self.work.queues[node].drain(..) {
            let w = &mut self.work.slots[p.slot];
            w.waiting = w.waiting.saturating_sub(1);
            if w.outcome.is_none() {
                w.outcome = Some(Err(e.clone()));
            }
            if w.waiting == 0 && batch.slots()[p.slot].completed_at.is_none() {
                let r = w.outcome.take().expect("set just above");
                batch.slots_mut()[p.slot].complete(r);
            }
        }
        self.links[node].conn = None;
        self.links[node].backoff.failed();
    }
}

/// The outcome of a request whose replies are all in, unless it needs another round
/// (a scan whose keys must now be read).
fn finish(w: &mut SlotWork, req: &Request) -> Option<Result<Outcome, StoreError>> {
    if let Some(r) = w.outcome.take() {
        if r.is_err() || req.kind != OpKind::Scan {
            return Some(r);
        }
    }
    if !w.groups.is_empty() {
        // A cluster multi-key read: done when no group waits to be sent again.
        if w.group_resends > 0 {
            return None;
        }
        return Some(Ok(Outcome::MultiRead {
            hits: w.multi_hits,
            misses: (req.key_count() as u32).saturating_sub(w.multi_hits),
            bytes: w.multi_bytes,
        }));
    }
    if req.kind == OpKind::Scan {
        if !w.scan_keys.is_empty() && (!w.scan_reading || w.scan_rereads > 0) {
            // The index answered (or a read was redirected): keys are read next round.
            return None;
        }
        return Some(Ok(Outcome::Scanned {
            records: w.scanned,
            bytes: w.scanned_bytes,
        }));
    }
    None
}

/// Applies one reply to its request's progress.
fn apply(inner: &Inner, work: &mut Work, batch: &mut Batch, p: Pending, frame: &Frame<'_>) {
    let Work {
        slots,
        keys,
        key_target,
        keys_used,
        current,
        groups,
        group_keys,
        try_again,
        ..
    } = work;
    let w = &mut slots[p.slot];
    w.waiting = w.waiting.saturating_sub(1);
    if let Some(msg) = error_message(frame) {
        if p.part == Part::MGetGroup && inner.slots.is_some() && msg.starts_with("TRYAGAIN") {
            // A slot being resharded holds some of the MGET's keys, its target the
            // others: send the MGET again, to the slot's owner, after a pause (the
            // cluster specification's advice, and redis-rs's wait-and-retry).
            let group = &mut groups[p.key as usize];
            let first = group_keys[group.keys.start];
            let node = inner.route(nth_key(&batch.slots()[p.slot].request, first));
            group.target = Some((node, false));
            w.group_resends += 1;
            *try_again = true;
            return;
        }
        if let Some(r) = frame.redirect() {
            if inner.slots.is_some() {
                if let Some(port) = r.port() {
                    if let Ok(node) = inner.node_index(r.host(), port) {
                        let ask = r.kind == resp::RedirectKind::Ask;
                        if !ask {
                            if let Some(map) = &inner.slots {
                                map.write().expect("slot map lock poisoned").owner
                                    [r.slot as usize] = node;
                            }
                        }
                        if p.part == Part::ScanRead {
                            // One key of a scan: read it again, the others are done.
                            key_target[p.key as usize] = Some((node, ask));
                            w.scan_rereads += 1;
                        } else if p.part == Part::Index {
                            // The index's slot moves, not the key's: the key's command
                            // goes where it went, the index's to the named node.
                            w.index_redirect = Some((node, ask));
                        } else if p.part == Part::MGetGroup {
                            // One slot's keys of a multi-key read: that MGET goes again.
                            groups[p.key as usize].target = Some((node, ask));
                            w.group_resends += 1;
                        } else {
                            w.redirect = Some((node, ask));
                        }
                        return;
                    }
                }
            }
        }
        if !matches!(p.part, Part::Aside | Part::Index) || w.outcome.is_none() {
            w.outcome = Some(Err(StoreError::new(
                StoreErrorKind::Protocol,
                format!("server replied: {msg}"),
            )));
        }
        return;
    }
    let slot: &mut Slot = &mut batch.slots_mut()[p.slot];
    let result = match p.part {
        Part::Aside | Part::Index => return,
        Part::Write
        | Part::Del
        | Part::Get
        | Part::MGet
        | Part::HGetAll
        | Part::HMGet
        | Part::Command => single_outcome(p.part, frame, slot),
        Part::MGetGroup => match frame.as_aggregate() {
            Some(values) => {
                let req = &slot.request;
                let keys = &group_keys[groups[p.key as usize].keys.clone()];
                for (&k, value) in keys.iter().zip(values.iter()) {
                    if let Some(v) = value.as_bytes() {
                        slot.reply.push(nth_key(req, k), v);
                        w.multi_hits += 1;
                        w.multi_bytes += v.len() as u64;
                    }
                }
                // The outcome is known when every group has answered (`finish`).
                return;
            }
            None => Err(unexpected("MGET", frame)),
        },
        Part::ScanRead => {
            let req = &slot.request;
            current.clear();
            let all = req.read_all || req.record.is_empty();
            match hash_reply(frame, req, current, all) {
                Err(e) => Err(e),
                Ok(()) => {
                    if !current.is_empty() {
                        w.scanned += 1;
                        w.scanned_bytes += current.value_bytes() as u64;
                    }
                    return;
                }
            }
        }
        Part::ScanIndex => match frame.as_aggregate() {
            Some(agg) => {
                let start = *keys_used;
                for k in agg.iter() {
                    if let Some(b) = k.as_bytes() {
                        if keys.len() <= *keys_used {
                            keys.push(Vec::new());
                            key_target.push(None);
                        }
                        keys[*keys_used].clear();
                        keys[*keys_used].extend_from_slice(b);
                        key_target[*keys_used] = Some((inner.route(b), false));
                        *keys_used += 1;
                    }
                }
                w.scan_keys = start..*keys_used;
                if w.scan_keys.is_empty() {
                    Ok(Outcome::Scanned {
                        records: 0,
                        bytes: 0,
                    })
                } else {
                    return;
                }
            }
            None => Err(unexpected("ZRANGEBYSCORE/ZRANGEBYLEX", frame)),
        },
        Part::UpdateGet => match frame {
            Frame::Bulk(Some(v)) => match slot.request.decode_value(v, current) {
                Ok(()) => {
                    current.merge_from(&slot.request.record);
                    let mut value = Vec::with_capacity(current.encoded_len());
                    current.encode_into(&mut value);
                    w.merged = Some(value);
                    return;
                }
                Err(e) => Err(e),
            },
            Frame::Bulk(None) | Frame::Null => Ok(Outcome::Miss),
            other => Err(unexpected("GET", other)),
        },
    };
    if w.outcome.as_ref().is_none_or(|o| o.is_ok()) {
        w.outcome = Some(result);
    }
}

fn unexpected(command: &str, frame: &Frame<'_>) -> StoreError {
    StoreError::new(
        StoreErrorKind::Protocol,
        format!("{command}: unexpected {} reply", frame.type_name()),
    )
}

/// Fills `reply` from an `HGETALL` reply (pairs) or an `HMGET` reply (values in the
/// order of the request's names; absent fields are nil).
fn hash_reply(
    frame: &Frame<'_>,
    req: &Request,
    reply: &mut Record,
    all: bool,
) -> Result<(), StoreError> {
    reply.clear();
    let Some(agg) = frame.as_aggregate() else {
        return Err(unexpected(if all { "HGETALL" } else { "HMGET" }, frame));
    };
    if all {
        for (name, value) in agg.pairs() {
            if let (Some(n), Some(v)) = (name.as_bytes(), value.as_bytes()) {
                reply.push(n, v);
            }
        }
    } else {
        for ((name, _), value) in req.record.iter().zip(agg.iter()) {
            if let Some(v) = value.as_bytes() {
                reply.push(name, v);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_offset_makes_writes_setrange_and_reads_getrange() {
        let mut req = Request {
            kind: OpKind::Insert,
            blob: true,
            key: b"k1".to_vec(),
            ..Request::default()
        };
        req.record.push(b"", b"abc");
        let mut out = Vec::new();
        encode_single(&mut out, Part::Write, Model::String, 10, &req);
        assert_eq!(
            out,
            b"*4\r\n$8\r\nSETRANGE\r\n$2\r\nk1\r\n$2\r\n10\r\n$3\r\nabc\r\n"
        );
        req.kind = OpKind::Read;
        out.clear();
        encode_single(&mut out, Part::Get, Model::String, 10, &req);
        assert_eq!(
            out,
            b"*4\r\n$8\r\nGETRANGE\r\n$2\r\nk1\r\n$2\r\n10\r\n$2\r\n-1\r\n"
        );
        out.clear();
        encode_single(&mut out, Part::Get, Model::String, 0, &req);
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

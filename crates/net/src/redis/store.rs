//! [`RedisStore`]: opening (probe, authentication, cluster slots), the shared state
//! its sessions use, and the server's `INFO` statistics.

use super::*;

/// The cluster's slot map: which node serves each of the 16384 slots.
pub(super) struct SlotMap {
    /// Node index per slot; `usize::MAX` where no node is known.
    pub(super) owner: Vec<usize>,
}

/// What every session of a store shares.
pub(super) struct Inner {
    pub(super) config: RedisConfig,
    pub(super) tls: Option<Arc<Tls>>,
    /// Known nodes; only ever appended to, so an index stays valid.
    pub(super) nodes: RwLock<Vec<Endpoint>>,
    /// `Some` in cluster mode.
    pub(super) slots: Option<RwLock<SlotMap>>,
}

impl Inner {
    pub(super) fn endpoint(&self, host: &str, port: u16) -> Result<Endpoint, StoreError> {
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
    pub(super) fn node_index(&self, host: &str, port: u16) -> Result<usize, StoreError> {
        let ep = self.endpoint(host, port)?;
        let mut nodes = self.nodes.write().expect("node list lock poisoned");
        if let Some(i) = nodes.iter().position(|n| n.addr == ep.addr) {
            return Ok(i);
        }
        nodes.push(ep);
        Ok(nodes.len() - 1)
    }

    /// The node that serves `key`.
    pub(super) fn route(&self, key: &[u8]) -> usize {
        match &self.slots {
            None => 0,
            Some(_) => self.route_slot(resp::key_slot(key)),
        }
    }

    /// The node that serves hash slot `slot` (node 0 when no node is known).
    pub(super) fn route_slot(&self, slot: u16) -> usize {
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
    pub(super) fn grouped(&self, req: &Request) -> bool {
        self.slots.is_some() && self.config.model == Model::String && req.is_multi_read()
    }

    /// Where a request's next commands go: the node, whether after an `ASK`, and the
    /// index's node when the request also writes the scan index (hash model).
    ///
    /// A `MOVED` has already updated the slot map, so the request is routed afresh (the
    /// `MOVED` of an index command names the index's node, not the key's); an `ASK`
    /// names the node for this one request. A scan starts at the index's node.
    pub(super) fn target(
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
    pub(super) async fn load_slots(&self, conn: &mut Conn) -> Result<(), StoreError> {
        resp::cluster_slots(&mut conn.wbuf);
        conn.flush().await?;
        let ranges = loop {
            match resp::parse(conn.buffered()) {
                Ok(Some((frame, n))) => {
                    let r = if let Some(msg) = error_message(&frame) {
                        let e = crate::error_reply(&msg);
                        Err(StoreError::new(
                            e.kind,
                            format!("CLUSTER SLOTS: {}", e.message),
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

    /// Connects to node `i` and runs memtier_benchmark's handshake, pipelined: `AUTH`
    /// with credentials, `SELECT` for a database other than 0, then `HELLO 2` or `HELLO
    /// 3` when `redis.protocol` was given.
    pub(super) async fn connect(&self, i: usize) -> Result<Conn, StoreError> {
        let ep = self.nodes.read().expect("node list lock poisoned")[i].clone();
        let mut conn = Conn::connect(&ep).await?;
        let url = &self.config.url;
        let pass = url.password.as_deref().map(str::as_bytes);
        let user = url.user.as_deref().map(str::as_bytes);
        let mut replies = 0;
        if let Some(p) = pass {
            resp::auth(&mut conn.wbuf, user, p);
            replies += 1;
        }
        if let Some(db) = url.db.filter(|&d| d != 0) {
            resp::select(&mut conn.wbuf, db);
            replies += 1;
        }
        if self.config.hello {
            resp::hello(&mut conn.wbuf, if self.config.resp3 { 3 } else { 2 }, None);
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
pub(super) fn error_message(frame: &Frame<'_>) -> Option<String> {
    match frame {
        Frame::Error(m) | Frame::BulkError(m) => Some(String::from_utf8_lossy(m).into_owned()),
        _ => None,
    }
}

/// A store on a Redis-protocol server or cluster.
pub struct RedisStore {
    pub(super) inner: Arc<Inner>,
    /// Runs the store's own requests (probe, INFO) from the calling thread.
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) server: Vec<(String, String)>,
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
        let (server, cluster) = if inner.config.server_queries {
            runtime.block_on(async {
                let mut conn = inner.connect(0).await?;
                let info = info(&mut conn, Some("server")).await?;
                let cluster_info = info_map(&info_text(&mut conn, "cluster").await?);
                Ok::<_, StoreError>((info_map(&info), cluster_info))
            })?
        } else {
            (Vec::new(), Vec::new())
        };
        // Without server queries the configuration says (redis.cluster yes or no).
        let enabled = !inner.config.server_queries && inner.config.cluster == ClusterMode::Yes
            || cluster
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

pub(super) async fn info_text(conn: &mut Conn, section: &str) -> Result<String, StoreError> {
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

pub(super) async fn info(conn: &mut Conn, section: Option<&str>) -> Result<String, StoreError> {
    info_text(conn, section.unwrap_or("all")).await
}

/// `name:value` lines of an INFO reply ([`kvlab_proto::stats::info_fields`]), owned.
pub(super) fn info_map(text: &str) -> Vec<(String, String)> {
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
            merge: false,
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
        if !self.inner.config.server_queries {
            return Vec::new();
        }
        let nodes = self.nodes();
        let mut totals: Vec<(String, StatValue)> = Vec::new();
        for i in 0..nodes {
            let got = self
                .runtime
                .block_on(crate::conn::within_stats_timeout(async {
                    let mut conn = self.inner.connect(i).await?;
                    info(&mut conn, None).await
                }));
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

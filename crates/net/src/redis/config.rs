//! The store's settings (`redis.*` options, [`RedisConfig`]), its data models and the
//! scan index's ordering.

use super::*;

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
    "server_queries",
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
    /// How the string model lays a record out in its one value: a workload whose every
    /// record is one field sets [`ValueLayout::SingleField`] (`SET key <the field's
    /// bytes>`); the default is the field encoding.
    pub layout: ValueLayout,
    /// Speak RESP3 (`HELLO 3`) instead of RESP2.
    pub resp3: bool,
    /// Send `HELLO 2` or `HELLO 3` after `AUTH` and `SELECT`, as memtier_benchmark does
    /// for `-P resp2` and `-P resp3`: set when `redis.protocol` is given.
    pub hello: bool,
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
    /// Ask the server for its facts (`INFO server` and `INFO cluster` at open, `INFO`
    /// for the statistics); `false` (memtier_benchmark's traffic only) sends none,
    /// leaving the server facts and statistics empty and needing `cluster` yes or no.
    pub server_queries: bool,
}

pub(super) fn config_err(message: String) -> StoreError {
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
        // Empty when not given: RESP2 without a `HELLO`.
        let resp3 = opts.choice("protocol", &["resp2", "resp3", "2", "3"], "")?;
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
        let server_queries = opts.bool("server_queries", true)?;
        if !server_queries && cluster == ClusterMode::Auto {
            return Err(config_err(
                "redis.server_queries=false needs redis.cluster=yes or no (auto asks the server)"
                    .into(),
            ));
        }
        opts.finish(OPTION_NAMES)?;
        Ok(RedisConfig {
            layout: ValueLayout::Encoded,
            url,
            model,
            resp3: resp3.ends_with('3'),
            hello: !resp3.is_empty(),
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
            server_queries,
        })
    }

    /// The effective options, for the result document (password hidden).
    pub fn to_stats(&self) -> StoreStats {
        vec![
            ("url".into(), StatValue::from(self.url.to_string())),
            ("model".into(), self.model.name().into()),
            ("value_layout".into(), self.layout.describe().into()),
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
pub(super) fn index_add(out: &mut Vec<u8>, order: IndexOrder, index: &[u8], key: &[u8]) {
    let score = match order {
        IndexOrder::Ycsb => f64::from(java_string_hash(key)),
        IndexOrder::Key => 0.0,
    };
    resp::zadd(out, index, score, key);
}

/// The index command of a scan of `n` keys from `key`: `ZRANGEBYSCORE index
/// hashCode(key) +inf LIMIT 0 n` (YCSB's), or `ZRANGEBYLEX index [key + LIMIT 0 n`.
pub(super) fn index_range(out: &mut Vec<u8>, order: IndexOrder, index: &[u8], key: &[u8], n: u32) {
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

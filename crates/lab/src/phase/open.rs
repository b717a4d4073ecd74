//! Opening the chosen store (the one `match` over store names), starting a server when
//! asked (`--spawn`), watching its statistics, and preloading a fresh one.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use kvlab_core::{StatValue, Store, StoreStats};
use kvlab_memtier::args as memtier_args;
use kvlab_report::Phase;
use kvlab_runner::RunPlan;
use kvlab_stores::null::NullStore;
use kvlab_stores::StoreOptions;

use crate::phase::checks::{check_store_flags, usage};
use crate::phase::output::SECRET_SETTINGS;
use crate::phase::select::{records, redis_model};
use crate::phase::{
    default_record_count_warning, error_kinds_text, execute_observed, first_errors, PhaseSpec,
};

/// Opens the phase's store and runs the phase on it.
pub fn open_store(ctx: PhaseSpec) -> Result<ExitCode> {
    // A store name that is wrong is said before any warning about the workload.
    if !available_stores().contains(&ctx.options.db.as_str()) {
        return Err(unknown_store(&ctx.options.db));
    }
    check_store_flags(&ctx.options, &ctx.props)?;
    if let Some(w) = default_record_count_warning(&ctx) {
        eprintln!("kvlab: warning: {w}");
    }
    let store_pairs: Vec<(String, String)> = ctx
        .props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();

    // The one place that knows every store.
    match ctx.options.db.as_str() {
        #[cfg(feature = "rocksdb")]
        "rocksdb" => {
            use kvlab_stores::rocksdb::{RocksDbConfig, RocksDbStore};
            let options = StoreOptions::new("rocksdb.", store_pairs);
            let config = RocksDbConfig::from_options(ctx.options.path.as_deref(), options)
                .map_err(|e| usage(e.message))?;
            let path = config.path.clone();
            let store = RocksDbStore::open(config)
                .with_context(|| format!("opening rocksdb at {}", path.display()))?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "lmdb")]
        "lmdb" => {
            use kvlab_stores::lmdb::{LmdbConfig, LmdbStore};
            let options = StoreOptions::new("lmdb.", store_pairs);
            let config = LmdbConfig::from_options(ctx.options.path.as_deref(), options)
                .map_err(|e| usage(e.message))?;
            let path = config.path.clone();
            let store = LmdbStore::open(config)
                .with_context(|| format!("opening lmdb at {}", path.display()))?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "wiredtiger")]
        "wiredtiger" => {
            use kvlab_stores::wiredtiger::{WiredTigerConfig, WiredTigerStore};
            let options = StoreOptions::new("wiredtiger.", store_pairs);
            let config = WiredTigerConfig::from_options(ctx.options.path.as_deref(), options)
                .map_err(|e| usage(e.message))?;
            let path = config.path.clone();
            let store = WiredTigerStore::open(config)
                .with_context(|| format!("opening wiredtiger at {}", path.display()))?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "moka")]
        "moka" => {
            use kvlab_stores::moka::{MokaConfig, MokaStore};
            let mut pairs = store_pairs;
            if let Some(size) = &ctx.options.cache_size {
                pairs.push(("moka.capacity".into(), size.clone()));
            }
            // Per-entry expiry costs reads; turn it on only for workloads with TTLs.
            if ctx.workload.needs().ttl && !pairs.iter().any(|(k, _)| k == "moka.per_entry_ttl") {
                pairs.push(("moka.per_entry_ttl".into(), "true".into()));
            }
            let config = MokaConfig::from_options(StoreOptions::new("moka.", pairs))
                .map_err(|e| usage(e.message))?;
            let store = MokaStore::open(config).context("opening the moka cache")?;
            execute(&ctx, Arc::new(store))
        }
        #[cfg(feature = "foyer")]
        "foyer" => {
            use kvlab_stores::foyer::{FoyerConfig, FoyerStore};
            let mut pairs = store_pairs;
            for (name, value) in [
                ("foyer.memory", ctx.options.cache_size.clone()),
                (
                    "foyer.disk_path",
                    ctx.options
                        .disk_path
                        .as_ref()
                        .map(|p| p.display().to_string()),
                ),
                ("foyer.disk_size", ctx.options.disk_size.clone()),
            ] {
                if let Some(v) = value {
                    pairs.push((name.into(), v));
                }
            }
            let config = FoyerConfig::from_options(StoreOptions::new("foyer.", pairs))
                .map_err(|e| usage(e.message))?;
            let store = FoyerStore::open(config).context("opening the foyer cache")?;
            execute(&ctx, Arc::new(store))
        }
        "redis" => open_redis(&ctx, store_pairs),
        "memcached" => open_memcached(&ctx, store_pairs),
        "null" => {
            StoreOptions::new("null.", store_pairs)
                .finish(&[])
                .map_err(|e| usage(e.message))?;
            execute(&ctx, Arc::new(NullStore))
        }
        other => Err(unknown_store(other)),
    }
}

/// A Redis store (or Redis Cluster): `--url`, `--spawn` or the default address, through
/// a `--fault` proxy when asked; a TLS server kvlab started is trusted through its own
/// CA file.
fn open_redis(ctx: &PhaseSpec, store_pairs: Vec<(String, String)>) -> Result<ExitCode> {
    use kvlab_net::redis::{RedisConfig, RedisStore};
    let server = spawn_server(ctx, kvlab_spawn::ServerKind::Redis)?;
    let url = server_url(ctx, server.as_ref(), "redis://127.0.0.1:6379")?;
    let mut pairs = store_pairs;
    if let Some(t) = ctx.options.request_timeout() {
        pairs.push(("redis.timeout_ms".into(), t.as_millis().max(1).to_string()));
    }
    // A TLS server kvlab started is trusted through its own CA file.
    if let Some(ca) = server.as_ref().filter(|s| s.tls()).and_then(|s| {
        s.config()
            .iter()
            .find(|(k, _)| k == "tls-ca-cert-file")
            .map(|(_, v)| v.trim_matches('"').to_string())
    }) {
        if !pairs.iter().any(|(k, _)| k == "redis.tls_ca_file") {
            pairs.push(("redis.tls_ca_file".into(), ca));
        }
    }
    let mut config = RedisConfig::from_options(
        &url,
        redis_model(&ctx.workload),
        StoreOptions::new("redis.", pairs),
    )
    .map_err(|e| usage(e.message))?;
    config.layout = ctx.workload.value_layout();
    let shown = config.url.to_string();
    let stats = server_stats(kvlab_spawn::ServerKind::Redis, &config.url);
    let store = RedisStore::open(config).with_context(|| format!("opening redis at {shown}"))?;
    execute_with_server(ctx, &store, server, stats)
}

/// A memcached store: `--url`, `--spawn` or the default address, through a `--fault`
/// proxy when asked.
fn open_memcached(ctx: &PhaseSpec, store_pairs: Vec<(String, String)>) -> Result<ExitCode> {
    use kvlab_net::memcached::{MemcachedConfig, MemcachedStore};
    let server = spawn_server(ctx, kvlab_spawn::ServerKind::Memcached)?;
    let url = server_url(ctx, server.as_ref(), "memcached://127.0.0.1:11211")?;
    let mut pairs = store_pairs;
    if let Some(t) = ctx.options.request_timeout() {
        pairs.push((
            "memcached.timeout_ms".into(),
            t.as_millis().max(1).to_string(),
        ));
    }
    let mut config = MemcachedConfig::from_options(&url, StoreOptions::new("memcached.", pairs))
        .map_err(|e| usage(e.message))?;
    config.layout = ctx.workload.value_layout();
    let shown = config.url.to_string();
    let stats = server_stats(kvlab_spawn::ServerKind::Memcached, &config.url);
    let store =
        MemcachedStore::open(config).with_context(|| format!("opening memcached at {shown}"))?;
    execute_with_server(ctx, &store, server, stats)
}

/// The usage error for a `--db` kvlab does not know (or was built without).
fn unknown_store(name: &str) -> anyhow::Error {
    usage(format!(
        "unknown store `{name}`; available: {}",
        available_stores().join(", ")
    ))
}

/// The stores this build of kvlab has: the rows of [`crate::STORES`] whose cargo
/// feature was built in.
pub fn available_stores() -> Vec<&'static str> {
    crate::STORES
        .iter()
        .filter(|s| s.feature.is_none_or(built))
        .map(|s| s.name)
        .collect()
}

/// The store features of this binary, and whether each was built in.
const FEATURES: [(&str, bool); 5] = [
    ("rocksdb", cfg!(feature = "rocksdb")),
    ("lmdb", cfg!(feature = "lmdb")),
    ("wiredtiger", cfg!(feature = "wiredtiger")),
    ("moka", cfg!(feature = "moka")),
    ("foyer", cfg!(feature = "foyer")),
];

/// Whether the store feature `name` of this binary was built in.
fn built(name: &str) -> bool {
    FEATURES.iter().any(|(n, on)| *n == name && *on)
}

/// A store's statistics as a JSON map by name.
pub fn stats_map(stats: StoreStats) -> BTreeMap<String, serde_json::Value> {
    stats
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                StatValue::Int(i) => serde_json::Value::from(i),
                StatValue::Float(f) => serde_json::Value::from(f),
                StatValue::Text(s) => serde_json::Value::from(s),
            };
            (k, v)
        })
        .collect()
}

/// Starts the `--spawn` server of a network store, if asked.
pub fn spawn_server(
    ctx: &PhaseSpec,
    kind: kvlab_spawn::ServerKind,
) -> Result<Option<kvlab_spawn::Server>> {
    let Some(settings) = &ctx.options.spawn else {
        return Ok(None);
    };
    if ctx.options.url.is_some() {
        return Err(usage("give either --url or --spawn, not both"));
    }
    let spec = kvlab_spawn::ServerSpec::parse(kind, settings).map_err(|e| usage(e.to_string()))?;
    let server = kvlab_spawn::Server::start(&spec)?;
    eprintln!(
        "kvlab: started {} {} at {} (pid {})",
        kind,
        server.version(),
        server.url(),
        server.pid()
    );
    Ok(Some(server))
}

/// The server URL: the spawned server's (with its `requirepass` as the password, so a
/// run can authenticate to the server it started), `--url`, or the default.
pub fn server_url(
    ctx: &PhaseSpec,
    server: Option<&kvlab_spawn::Server>,
    default: &str,
) -> Result<String> {
    Ok(match (server, &ctx.options.url) {
        (Some(s), _) => match s.config().iter().find(|(k, _)| k == "requirepass") {
            Some((_, password)) if s.unix_socket().is_some() => format!(
                "{}?pass={}",
                s.url(),
                memtier_args::percent_encode(password)
            ),
            Some((_, password)) => s.url().replacen(
                "://",
                &format!("://:{}@", memtier_args::percent_encode(password)),
                1,
            ),
            None => s.url(),
        },
        (None, Some(u)) => u.clone(),
        (None, None) => default.to_string(),
    })
    .and_then(|url| {
        crate::observe::fault::through_proxy(
            ctx.options.toxiproxy.as_deref(),
            &ctx.options.faults,
            &ctx.observers.proxy,
            url,
        )
    })
}

/// Runs the phase on a store whose server kvlab may have started: a fresh server is
/// empty, so `run` loads the workload's records first; the server is stopped at the
/// end and its version, settings and resource use go into the result.
///
/// `stats` samples the server's statistics for `monitor/store.csv` (over a connection of
/// its own, so never through the store's sessions).
pub fn execute_with_server<S: Store>(
    ctx: &PhaseSpec,
    store: &S,
    server: Option<kvlab_spawn::Server>,
    stats: Option<kvlab_monitor::StoreStatsFn>,
) -> Result<ExitCode> {
    refuse_lost_phase(ctx, store, server.is_some())?;
    let Some(server) = server else {
        if !store.capabilities().persistent {
            preload(ctx, store, &format!("the {} store", store.name()))?;
        }
        return execute_observed(ctx, store, stats, Vec::new);
    };
    preload(ctx, store, "the new server")?;
    let before = server.sample().ok();
    let mut info: Vec<(String, StatValue)> = vec![
        (
            "spawned.binary".into(),
            server.binary().display().to_string().into(),
        ),
        ("spawned.version".into(), server.version().into()),
        ("spawned.pid".into(), StatValue::from(server.pid() as u64)),
        (
            "spawned.command_line".into(),
            server.command_line().join(" ").into(),
        ),
    ];
    for (k, v) in server.config() {
        let v = if SECRET_SETTINGS.contains(&k.as_str()) {
            "***"
        } else {
            v.as_str()
        };
        info.push((format!("spawned.config.{k}"), v.into()));
    }
    let ctx = PhaseSpec {
        server: info,
        ..ctx.clone()
    };
    let code = execute_observed(&ctx, store, stats, || {
        let mut stats = Vec::new();
        if let (Some(b), Ok(a)) = (&before, server.sample()) {
            stats.push((
                "spawned.cpu_user_s".to_string(),
                StatValue::from(a.user_secs - b.user_secs),
            ));
            stats.push((
                "spawned.cpu_system_s".to_string(),
                StatValue::from(a.system_secs - b.system_secs),
            ));
            stats.push((
                "spawned.rss_bytes".to_string(),
                StatValue::from(a.rss_bytes),
            ));
        }
        stats
    });
    match server.stop() {
        Ok(r) => eprintln!("kvlab: server {}", r.describe()),
        Err(e) => eprintln!("kvlab: warning: stopping the server: {e}"),
    }
    code
}

/// Refuses `load` and `verify` on a store that does not outlive this process (an
/// in-process cache, a server kvlab starts and stops): a `load` would be thrown away
/// on exit, and a `verify` would find nothing. The null store's load is exempt: loading
/// into it measures kvlab itself.
fn refuse_lost_phase<S: Store>(ctx: &PhaseSpec, store: &S, spawned: bool) -> Result<()> {
    let null_load = store.name() == "null" && ctx.phase == Phase::Load;
    if !matches!(ctx.phase, Phase::Load | Phase::Verify) || null_load {
        return Ok(());
    }
    let what = if spawned {
        format!(
            "the {} server kvlab starts (--spawn) stops when kvlab exits",
            store.name()
        )
    } else if !store.capabilities().persistent {
        format!("the {} store lives in kvlab's own memory", store.name())
    } else {
        return Ok(());
    };
    Err(usage(format!(
        "{what}: a `{}` would {}; `kvlab run` loads such a store itself before it \
         measures (and `-p dataintegrity=true` checks every read), or give a store that \
         outlives the process (--url, --path, or foyer with --disk-path)",
        ctx.phase.as_str(),
        if ctx.phase == Phase::Load {
            "be thrown away when kvlab exits"
        } else {
            "find nothing"
        }
    )))
}

/// Runs the phase on an embedded or in-process store, whose own statistics
/// ([`Store::stats`]) the monitor samples for `monitor/store.csv`.
pub fn execute<S: Store>(ctx: &PhaseSpec, store: Arc<S>) -> Result<ExitCode> {
    refuse_lost_phase(ctx, &*store, false)?;
    if !store.capabilities().persistent {
        preload(ctx, &*store, &format!("the {} store", store.name()))?;
    }
    let sampled = Arc::clone(&store);
    let stats: kvlab_monitor::StoreStatsFn = Box::new(move || numeric_stats(sampled.stats()));
    execute_observed(ctx, &*store, Some(stats), Vec::new)
}

/// The numbers among a store's statistics (text ones, such as a version, are left out).
pub fn numeric_stats(stats: StoreStats) -> Vec<(String, f64)> {
    stats
        .into_iter()
        .filter_map(|(name, v)| match v {
            StatValue::Int(i) => Some((name, i as f64)),
            StatValue::Float(f) => Some((name, f)),
            StatValue::Text(_) => None,
        })
        .collect()
}

/// The statistics of the servers of `url` (Redis `INFO`, memcached `stats`), sampled over
/// connections of their own (over the URL's UNIX domain socket, if it names one); `None`
/// over TLS, which they do not speak, or when no server name resolves.
pub fn server_stats(
    kind: kvlab_spawn::ServerKind,
    url: &kvlab_net::ServerUrl,
) -> Option<kvlab_monitor::StoreStatsFn> {
    if url.scheme == "rediss" {
        return None;
    }
    if let Some(path) = &url.socket {
        let mut stats = kvlab_monitor::ServerStats::unix(kind, path.clone()).with_db(url.db);
        if let Some(password) = &url.password {
            stats = stats.with_auth(url.user.clone(), password.clone());
        }
        return Some(stats.into_fn());
    }
    let addrs: Vec<std::net::SocketAddr> = (0..url.hosts.len())
        .filter_map(|i| url.resolve(i).ok())
        .collect();
    if addrs.is_empty() {
        return None;
    }
    let mut stats = kvlab_monitor::ServerStats::new(kind, addrs).with_db(url.db);
    if let Some(password) = &url.password {
        stats = stats.with_auth(url.user.clone(), password.clone());
    }
    Some(stats.into_fn())
}

/// Before `run` on a store that starts empty (a server kvlab started, an in-process
/// cache), loads the workload's records, unmeasured, so reads find what a separate
/// `load` would have written.
pub fn preload<S: Store>(ctx: &PhaseSpec, store: &S, what: &str) -> Result<()> {
    if ctx.phase != Phase::Run || ctx.workload.records().map_or(0, |c| c.insert_count()) == 0 {
        return Ok(());
    }
    eprintln!(
        "kvlab: {what} starts empty: loading {} records first",
        ctx.workload.records().map_or(0, |c| c.insert_count())
    );
    load_first(ctx, store, records(&ctx.workload, "load")?, what)
}

/// Loads `dataset` before the measured phase (closed loop, no progress, no results): a
/// fresh store's records, or a replay's `--preload`; `what` names it in the error.
pub fn load_first<S: Store, D: kvlab_core::Dataset>(
    ctx: &PhaseSpec,
    store: &S,
    dataset: &D,
    what: &str,
) -> Result<()> {
    let plan = RunPlan {
        target_rate: None,
        ..ctx.plan.clone()
    };
    let o = kvlab_runner::load(store, dataset, &plan, &ctx.stop, &mut |_| {})?;
    let failed = o.total.errors_total();
    if o.interrupted {
        return Err(crate::Interrupted(format!(
            "interrupted while loading {what} ({} records loaded): nothing was measured",
            o.total.operations() - failed
        ))
        .into());
    }
    if failed > 0 {
        // The store's own reasons first, as after a `load`.
        for e in first_errors(&o) {
            eprintln!("kvlab: error ({}): {}", e.kind.name(), e.message);
        }
        anyhow::bail!(
            "loading {what} failed: {failed} of {} records were not stored ({})",
            dataset.count(),
            error_kinds_text(&o)
        );
    }
    Ok(())
}

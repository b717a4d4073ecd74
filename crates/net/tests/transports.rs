//! Transports and connection handling of the network stores against real servers:
//! UNIX domain sockets, memcached's binary protocol on a binary-only server (exact hit,
//! miss and set counts against the server's `stats`), and memtier's reconnect interval
//! (counted by the server's `total_connections`).

use kvlab_core::{Batch, OpKind, Outcome, Session, StatValue, Store};
use kvlab_net::memcached::{MemcachedConfig, MemcachedStore};
use kvlab_net::redis::{Model, RedisConfig, RedisStore};
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_stores::StoreOptions;

fn start(kind: ServerKind, spec: &str) -> Server {
    Server::start(&ServerSpec::parse(kind, spec).unwrap()).unwrap()
}

fn options(prefix: &str, pairs: &[(&str, &str)]) -> StoreOptions {
    StoreOptions::new(
        prefix,
        pairs
            .iter()
            .map(|(k, v)| (format!("{prefix}{k}"), v.to_string())),
    )
}

fn memcached_store(url: &str, pairs: &[(&str, &str)]) -> MemcachedStore {
    MemcachedStore::open(MemcachedConfig::from_options(url, options("memcached.", pairs)).unwrap())
        .unwrap()
}

fn redis_store(url: &str, pairs: &[(&str, &str)]) -> RedisStore {
    RedisStore::open(
        RedisConfig::from_options(url, Model::String, options("redis.", pairs)).unwrap(),
    )
    .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A counter from a store's statistics.
fn stat(stats: &[(String, StatValue)], name: &str) -> i64 {
    match stats.iter().find(|(k, _)| k == name) {
        Some((_, StatValue::Int(n))) => *n,
        other => panic!("{name}: {other:?} in {stats:?}"),
    }
}

/// A blob request of `kind` on `key` (writes put `value`).
fn push(batch: &mut Batch, kind: OpKind, key: &str, value: &[u8]) {
    let slot = batch.push();
    slot.request.kind = kind;
    slot.request.read.set_blob();
    slot.request.key.extend_from_slice(key.as_bytes());
    if kind != OpKind::Read && kind != OpKind::Delete {
        slot.request.value.set_blob(value);
    }
}

#[test]
fn memcached_over_a_unix_socket_conforms_in_every_protocol() {
    let server = start(ServerKind::Memcached, "s=mc.sock,m=64,I=2m");
    let url = server.url();
    assert!(url.starts_with("memcached+unix:///"), "{url}");
    assert!(server.unix_socket().unwrap().exists());
    for protocol in ["text", "meta", "binary"] {
        let store = memcached_store(&url, &[("protocol", protocol)]);
        assert_eq!(store.options()[0].1, StatValue::from(url.as_str()));
        let rt = runtime();
        kvlab_stores::conformance::check_all_with(
            &store,
            |s: &mut kvlab_net::memcached::MemcachedSession, b: &mut Batch| {
                rt.block_on(async {
                    s.prepare().await.unwrap();
                    s.execute(b).await
                })
            },
        );
        // The statistics come over the socket too.
        assert!(stat(&store.stats(), "cmd_set") > 0, "{protocol}");
    }
}

#[test]
fn redis_over_a_unix_socket_conforms_and_selects_its_database() {
    let server = start(
        ServerKind::Redis,
        "unixsocket=redis.sock,unixsocketperm=700",
    );
    let socket = server.unix_socket().unwrap().display().to_string();
    for url in [
        format!("redis+unix://{socket}"),
        format!("unix://{socket}?db=3"),
    ] {
        let store = redis_store(&url, &[]);
        let rt = runtime();
        kvlab_stores::conformance::check_all_with(
            &store,
            |s: &mut kvlab_net::redis::RedisSession, b: &mut Batch| {
                rt.block_on(async {
                    s.prepare().await.unwrap();
                    s.execute(b).await
                })
            },
        );
    }
    // `?db=3` writes to database 3, seen over TCP.
    let store = redis_store(&format!("unix://{socket}?db=3"), &[]);
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut batch = Batch::new();
    push(&mut batch, OpKind::Insert, "in-db-3", b"v");
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut batch).await
    });
    assert!(batch.slots()[0].result.is_ok());
    match kvlab_spawn::resp::command(server.addr(), &["INFO", "keyspace"]).unwrap() {
        kvlab_spawn::resp::Value::Bulk(Some(text)) => {
            let text = String::from_utf8_lossy(&text);
            assert!(text.contains("db3:keys="), "{text}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn memcached_binary_protocol_counts_exactly_what_the_server_counts() {
    // A server that speaks the binary protocol only.
    let server = start(ServerKind::Memcached, "B=binary,m=64");
    let store = memcached_store(&server.url(), &[("protocol", "binary")]);
    let rt = runtime();
    let mut s = store.session().unwrap();
    rt.block_on(s.prepare()).unwrap();
    let before = store.stats();
    // 50 sets (one with a TTL, one of a key with a space and a control byte), then a
    // pipeline of 80 gets (every other key absent), 3 deletes (one absent) and 10
    // multi-key gets of 7 keys.
    let mut batch = Batch::new();
    for i in 0..50 {
        push(
            &mut batch,
            OpKind::Insert,
            &format!("bk{i}"),
            format!("value-{i}").as_bytes(),
        );
    }
    batch.slots_mut()[3].request.ttl_s = 100;
    push(&mut batch, OpKind::Insert, "a key\x01", b"odd");
    rt.block_on(s.execute(&mut batch));
    assert!(batch
        .slots()
        .iter()
        .all(|s| matches!(s.result, Ok(Outcome::Written { .. }))));
    batch.clear();
    for i in 0..80 {
        push(
            &mut batch,
            OpKind::Read,
            &format!("bk{}", i / 2 + (i % 2) * 1000),
            b"",
        );
    }
    push(&mut batch, OpKind::Read, "a key\x01", b"");
    push(&mut batch, OpKind::Delete, "bk0", b"");
    push(&mut batch, OpKind::Delete, "bk1", b"");
    push(&mut batch, OpKind::Delete, "absent", b"");
    for r in 0..10 {
        let slot = batch.push();
        slot.request.read.set_blob();
        slot.request
            .key
            .extend_from_slice(format!("bk{}", 10 + r).as_bytes());
        for j in 1..7 {
            // Keys 10+r+j*5: present below 50.
            slot.request
                .more_keys
                .push(format!("bk{}", 10 + r + j * 5).as_bytes());
        }
    }
    rt.block_on(s.execute(&mut batch));
    let results: Vec<_> = batch.slots().iter().map(|s| s.result.clone()).collect();
    for (i, r) in results[..80].iter().enumerate() {
        if i % 2 == 0 {
            let len = format!("value-{}", i / 2).len() as u64;
            assert_eq!(r, &Ok(Outcome::Hit { bytes: len }), "get {i}");
        } else {
            assert_eq!(
                r,
                &Ok(Outcome::Miss),
                "get {i}: a miss is a miss, not an error"
            );
        }
    }
    assert_eq!(results[80], Ok(Outcome::Hit { bytes: 3 }));
    assert_eq!(batch.slots()[80].reply.get(b""), Some(&b"odd"[..]));
    assert_eq!(
        results[81..84],
        [
            Ok(Outcome::Deleted),
            Ok(Outcome::Deleted),
            Ok(Outcome::Deleted)
        ]
    );
    let (mut multi_hits, mut multi_misses) = (0, 0);
    for r in 0..10 {
        let present = (0..7).filter(|j| 10 + r + j * 5 < 50).count() as u32;
        let slot = &batch.slots()[84 + r];
        assert!(
            matches!(slot.result, Ok(Outcome::MultiRead { hits, misses, .. })
                if hits == present && misses == 7 - present),
            "multi-get {r}: {:?}",
            slot.result
        );
        assert_eq!(slot.reply.len(), present as usize);
        assert_eq!(
            slot.reply.get(format!("bk{}", 10 + r).as_bytes()),
            Some(format!("value-{}", 10 + r).as_bytes())
        );
        multi_hits += present as i64;
        multi_misses += 7 - present as i64;
    }
    let after = store.stats();
    let delta = |name| stat(&after, name) - stat(&before, name);
    assert_eq!(delta("cmd_set"), 51);
    assert_eq!(delta("get_hits"), 40 + 1 + multi_hits);
    assert_eq!(delta("get_misses"), 40 + multi_misses);
    assert_eq!(stat(&after, "curr_items"), 51 - 2);
}

#[test]
fn a_text_server_refusing_binary_is_named_at_open() {
    let server = start(ServerKind::Memcached, "B=ascii");
    let config = MemcachedConfig::from_options(
        &server.url(),
        options(
            "memcached.",
            &[("protocol", "binary"), ("connect_timeout_ms", "300")],
        ),
    )
    .unwrap();
    let e = MemcachedStore::open(config).err().expect("refused");
    assert!(e.message.contains(&server.addr().to_string()), "{e}");
    assert!(e.message.contains("binary protocol"), "{e}");
}

/// The server's `total_connections` (memcached) or `total_connections_received` (Redis).
fn connections(stats: &[(String, String)], name: &str) -> u64 {
    stats
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.parse().unwrap())
        .unwrap_or_else(|| panic!("{name} missing"))
}

fn memcached_counters(server: &Server) -> Vec<(String, String)> {
    use std::io::{BufRead, BufReader, Write};
    let mut c = std::net::TcpStream::connect(server.addr()).unwrap();
    c.write_all(b"stats\r\n").unwrap();
    let mut out = Vec::new();
    for line in BufReader::new(c).lines() {
        let line = line.unwrap();
        if line == "END" {
            break;
        }
        let mut parts = line.splitn(3, ' ');
        parts.next();
        out.push((
            parts.next().unwrap().to_string(),
            parts.next().unwrap_or("").to_string(),
        ));
    }
    out
}

fn redis_counters(server: &Server) -> Vec<(String, String)> {
    match kvlab_spawn::resp::command(server.addr(), &["INFO", "stats"]).unwrap() {
        kvlab_spawn::resp::Value::Bulk(Some(text)) => String::from_utf8_lossy(&text)
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect(),
        other => panic!("{other:?}"),
    }
}

/// Runs `batches` batches of `pipeline` gets on one session and returns how many
/// connections the server saw beyond the store's own.
fn connections_for<S: Store>(
    store: &S,
    batches: usize,
    pipeline: usize,
    counters: impl Fn() -> u64,
) -> u64 {
    let rt = runtime();
    let mut s = store.session().unwrap();
    let before = counters();
    rt.block_on(s.prepare()).unwrap();
    let mut batch = Batch::new();
    for b in 0..batches {
        batch.clear();
        for i in 0..pipeline {
            push(
                &mut batch,
                OpKind::Read,
                &format!("rk{}", b * pipeline + i),
                b"",
            );
        }
        rt.block_on(s.execute(&mut batch));
        assert!(batch.slots().iter().all(|s| s.result.is_ok()), "batch {b}");
    }
    drop(s);
    // Each counter read is a connection of its own.
    counters() - before - 1
}

#[test]
fn a_reconnect_interval_opens_one_connection_per_interval_as_memtier() {
    let mc = start(ServerKind::Memcached, "");
    let redis = start(ServerKind::Redis, "");
    let mc_count = || connections(&memcached_counters(&mc), "total_connections");
    let redis_count = || connections(&redis_counters(&redis), "total_connections_received");
    // memtier: a client reconnects each time its processed requests reach a multiple
    // of the interval, except at its last request: 1 + (requests − 1) / interval
    // connections.
    for (batches, pipeline, interval, expected) in [
        (100, 1, 10, 10),
        (100, 1, 7, 15),
        (25, 4, 10, 10),
        (30, 1, 0, 1),
        (10, 1, 10, 1),
    ] {
        let requests = batches * pipeline;
        let pairs = [("reconnect_interval", interval.to_string())];
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        for protocol in ["text", "binary"] {
            let mut p = pairs.clone();
            p.push(("protocol", protocol));
            let store = memcached_store(&mc.url(), &p);
            let got = connections_for(&store, batches, pipeline, mc_count);
            assert_eq!(
                got, expected,
                "memcached {protocol}: {requests} requests, interval {interval}"
            );
        }
        let store = redis_store(&redis.url(), &pairs);
        let got = connections_for(&store, batches, pipeline, redis_count);
        assert_eq!(
            got, expected,
            "redis: {requests} requests, interval {interval}"
        );
    }
}

#[test]
fn ipv6_only_resolution_of_an_ipv4_address_fails_clearly() {
    let server = start(ServerKind::Memcached, "");
    let config = MemcachedConfig::from_options(
        &format!("memcached://localhost:{}", server.port()),
        options("memcached.", &[("address_family", "ipv4")]),
    )
    .unwrap();
    MemcachedStore::open(config).unwrap();
    let config = MemcachedConfig::from_options(
        &server.url(),
        options("memcached.", &[("address_family", "ipv6")]),
    )
    .unwrap();
    let e = MemcachedStore::open(config).err().expect("no IPv6 address");
    assert!(e.message.contains("IPv6"), "{e}");
    let e = MemcachedConfig::from_options(
        &server.url(),
        options("memcached.", &[("address_family", "v5")]),
    )
    .unwrap_err();
    assert!(e.message.contains("address_family"), "{e}");
}

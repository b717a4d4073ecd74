//! The `memcached` store against real memcached servers on free loopback ports.

use kvlab_core::{Batch, OpKind, Outcome, Session, Store};
use kvlab_net::memcached::{MemcachedConfig, MemcachedSession, MemcachedStore};
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_stores::StoreOptions;

fn memcached() -> Server {
    // Items up to 2 MiB: the conformance suite writes a 1 MiB value.
    Server::start(&ServerSpec::parse(ServerKind::Memcached, "m=64,I=2m").unwrap()).unwrap()
}

fn open(url: &str, protocol: &str) -> MemcachedStore {
    let opts = StoreOptions::new(
        "memcached.",
        [("memcached.protocol".to_string(), protocol.to_string())],
    );
    MemcachedStore::open(MemcachedConfig::from_options(url, opts).unwrap()).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn text_and_meta_protocols_conform_on_one_and_on_two_servers() {
    let (a, b) = (memcached(), memcached());
    let two = format!("memcached://127.0.0.1:{},127.0.0.1:{}", a.port(), b.port());
    for (url, protocol) in [
        (a.url(), "text"),
        (b.url(), "meta"),
        (two.clone(), "text"),
        (two, "meta"),
    ] {
        let store = open(&url, protocol);
        let rt = runtime();
        kvlab_stores::conformance::check_all_with(
            &store,
            |s: &mut MemcachedSession, b: &mut Batch| {
                rt.block_on(async {
                    s.prepare().await.unwrap();
                    s.execute(b).await
                })
            },
        );
        for s in [&a, &b] {
            kvlab_spawn::resp::command(s.addr(), &["flush_all"]).ok();
        }
    }
}

#[test]
fn keys_spread_over_servers_and_misses_are_counted_as_misses() {
    let (a, b) = (memcached(), memcached());
    let url = format!("memcached://127.0.0.1:{},127.0.0.1:{}", a.port(), b.port());
    let store = open(&url, "text");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut batch = Batch::new();
    for i in 0..200 {
        let slot = batch.push();
        slot.request.kind = OpKind::Insert;
        slot.request.blob = true;
        slot.request
            .key
            .extend_from_slice(format!("key{i}").as_bytes());
        slot.request.record.push(b"", b"v");
    }
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut batch).await
    });
    assert!(batch.slots().iter().all(|s| s.result.is_ok()));
    batch.clear();
    for i in 0..400 {
        let slot = batch.push();
        slot.request.blob = true;
        slot.request
            .key
            .extend_from_slice(format!("key{i}").as_bytes());
    }
    rt.block_on(s.execute(&mut batch));
    let hits = batch
        .slots()
        .iter()
        .filter(|s| s.result == Ok(Outcome::Hit { bytes: 1 }))
        .count();
    let misses = batch
        .slots()
        .iter()
        .filter(|s| s.result == Ok(Outcome::Miss))
        .count();
    assert_eq!((hits, misses), (200, 200));
    let stats = store.stats();
    let items = stats
        .iter()
        .find(|(k, _)| k == "curr_items")
        .map(|(_, v)| v.clone());
    assert_eq!(items, Some(kvlab_core::StatValue::Int(200)), "{stats:?}");
    // Both servers hold some of the keys.
    for server in [&a, &b] {
        let mut c = std::net::TcpStream::connect(server.addr()).unwrap();
        use std::io::{Read, Write};
        c.write_all(b"stats\r\n").unwrap();
        let mut buf = vec![0u8; 8192];
        let n = c.read(&mut buf).unwrap();
        let text = String::from_utf8_lossy(&buf[..n]);
        let line = text
            .lines()
            .find(|l| l.starts_with("STAT curr_items "))
            .unwrap();
        let count: u64 = line.rsplit(' ').next().unwrap().trim().parse().unwrap();
        assert!(count > 40, "{line}");
    }
}

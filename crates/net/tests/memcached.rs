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
fn text_meta_and_binary_protocols_conform_on_one_and_on_two_servers() {
    let (a, b) = (memcached(), memcached());
    let two = format!("memcached://127.0.0.1:{},127.0.0.1:{}", a.port(), b.port());
    for (url, protocol) in [
        (a.url(), "text"),
        (b.url(), "meta"),
        (a.url(), "binary"),
        (two.clone(), "text"),
        (two.clone(), "meta"),
        (two, "binary"),
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
        slot.request.read.set_blob();
        slot.request
            .key
            .extend_from_slice(format!("key{i}").as_bytes());
        slot.request.value.set_blob(b"v");
    }
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut batch).await
    });
    assert!(batch.slots().iter().all(|s| s.result.is_ok()));
    batch.clear();
    for i in 0..400 {
        let slot = batch.push();
        slot.request.read.set_blob();
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

/// `get_hits` and `get_misses` summed over a store's servers.
fn get_counters(store: &MemcachedStore) -> (i64, i64) {
    let stats = store.stats();
    let int = |name: &str| match stats.iter().find(|(k, _)| k == name) {
        Some((_, kvlab_core::StatValue::Int(n))) => *n,
        other => panic!("{name}: {other:?} in {stats:?}"),
    };
    (int("get_hits"), int("get_misses"))
}

#[test]
fn multi_key_reads_count_hits_per_key_over_two_servers_as_the_servers_do() {
    let (a, b) = (memcached(), memcached());
    let url = format!("memcached://127.0.0.1:{},127.0.0.1:{}", a.port(), b.port());
    for protocol in ["text", "meta", "binary"] {
        let store = open(&url, protocol);
        let rt = runtime();
        let mut s = store.session().unwrap();
        let mut batch = Batch::new();
        // Keys 0..60 exist (one with bytes the text protocol cannot carry), 60..120 not.
        let key = |i: usize| -> Vec<u8> {
            if i == 7 {
                b"bin key\x01".to_vec()
            } else {
                format!("mk{i}").into_bytes()
            }
        };
        for i in 0..60 {
            let slot = batch.push();
            slot.request.kind = OpKind::Insert;
            slot.request.read.set_blob();
            slot.request.key = key(i);
            slot.request.value.set_blob(format!("value-{i}").as_bytes());
        }
        rt.block_on(async {
            s.prepare().await.unwrap();
            s.execute(&mut batch).await
        });
        assert!(batch.slots().iter().all(|s| s.result.is_ok()));
        let before = get_counters(&store);
        // A pipeline of multi-key reads of 12 keys (every 5th key absent), a single read
        // and a write between them.
        batch.clear();
        let mut expected = Vec::new();
        for r in 0..8usize {
            let slot = batch.push();
            slot.request.kind = OpKind::Read;
            slot.request.read.set_blob();
            let keys: Vec<usize> = (0..12)
                .map(|j| r * 7 + j + if j % 5 == 4 { 60 } else { 0 })
                .collect();
            slot.request.key = key(keys[0]);
            for &k in &keys[1..] {
                slot.request.more_keys.push(&key(k));
            }
            expected.push(keys);
            let slot = batch.push();
            slot.request.kind = if r % 2 == 0 {
                OpKind::Read
            } else {
                OpKind::Insert
            };
            slot.request.read.set_blob();
            slot.request.key = key(100 + r);
            slot.request.value.set_blob(b"w");
        }
        rt.block_on(s.execute(&mut batch));
        let (mut hits, mut misses) = (0, 0);
        for (r, keys) in expected.iter().enumerate() {
            let slot = &batch.slots()[2 * r];
            let present: Vec<usize> = keys.iter().copied().filter(|&k| k < 60).collect();
            let bytes: usize = present.iter().map(|k| format!("value-{k}").len()).sum();
            assert_eq!(
                slot.result,
                Ok(Outcome::MultiRead {
                    hits: present.len() as u32,
                    misses: (keys.len() - present.len()) as u32,
                    bytes: bytes as u64
                }),
                "{protocol}: multi-key read {r}"
            );
            assert_eq!(slot.reply.len(), present.len());
            for &k in &present {
                assert_eq!(
                    slot.reply.get(&key(k)),
                    Some(format!("value-{k}").as_bytes()),
                    "{protocol}: key {k}"
                );
            }
            hits += present.len() as i64;
            misses += (keys.len() - present.len()) as i64;
            let single = &batch.slots()[2 * r + 1];
            if r % 2 == 0 {
                assert_eq!(single.result, Ok(Outcome::Miss));
                misses += 1;
            } else {
                assert!(matches!(single.result, Ok(Outcome::Written { .. })));
            }
        }
        let after = get_counters(&store);
        assert_eq!(
            (after.0 - before.0, after.1 - before.1),
            (hits, misses),
            "{protocol}: the servers count the same hits and misses"
        );
        for server in [&a, &b] {
            kvlab_spawn::resp::command(server.addr(), &["flush_all"]).ok();
        }
    }
}

//! The `redis` store against a real redis-server started on a free loopback port.

use kvlab_core::{Batch, OpKind, Outcome, Session, Store};
use kvlab_net::redis::{Model, RedisConfig, RedisStore};
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_stores::StoreOptions;

fn redis(spec: &str) -> Server {
    Server::start(&ServerSpec::parse(ServerKind::Redis, spec).unwrap()).unwrap()
}

/// Opens the store; the hash model's index is in key order (`redis.index_order=key`)
/// unless `pairs` say otherwise, as the conformance suite's scans expect key order.
fn open(url: &str, pairs: &[(&str, &str)]) -> Result<RedisStore, kvlab_core::StoreError> {
    let key_order = [("redis.index_order", "key")];
    let defaults = key_order
        .iter()
        .filter(|(k, _)| !pairs.iter().any(|(p, _)| p == k));
    let opts = StoreOptions::new(
        "redis.",
        defaults
            .chain(pairs)
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    RedisStore::open(RedisConfig::from_options(url, Model::Hash, opts)?)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn conforms(store: &RedisStore) {
    let rt = runtime();
    kvlab_stores::conformance::check_all_with(
        store,
        |s: &mut kvlab_net::redis::RedisSession, b: &mut Batch| {
            rt.block_on(async {
                s.prepare().await.unwrap();
                s.execute(b).await
            })
        },
    );
}

#[test]
fn both_models_and_both_protocols_conform() {
    let server = redis("");
    for (model, protocol) in [
        ("hash", "resp2"),
        ("string", "resp2"),
        ("hash", "resp3"),
        ("string", "resp3"),
    ] {
        let store = open(
            &server.url(),
            &[("redis.model", model), ("redis.protocol", protocol)],
        )
        .unwrap();
        conforms(&store);
        // Each model leaves its keys behind; start the next from an empty server.
        kvlab_spawn::resp::command(server.addr(), &["FLUSHALL"]).unwrap();
    }
    let store = open(&server.url(), &[]).unwrap();
    let info = store.server_info();
    assert!(
        info.iter()
            .any(|(k, v)| k == "redis_version" && !v.is_empty()),
        "{info:?}"
    );
    let stats = store.stats();
    assert!(stats.iter().any(|(k, _)| k == "used_memory"), "{stats:?}");
}

#[test]
fn a_pipelined_batch_completes_every_request_in_order() {
    let server = redis("");
    let store = open(&server.url(), &[("redis.model", "string")]).unwrap();
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..64 {
        let slot = b.push();
        slot.request.kind = if i % 2 == 0 {
            OpKind::Insert
        } else {
            OpKind::Read
        };
        slot.request.read.set_blob();
        slot.request
            .key
            .extend_from_slice(format!("k{}", i / 2).as_bytes());
        if i % 2 == 0 {
            slot.request.value.set_blob(&vec![b'x'; i]);
        }
    }
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut b).await
    });
    let mut last = None;
    for (i, slot) in b.slots().iter().enumerate() {
        let at = slot.completed_at.expect("every slot completed");
        assert!(last.is_none_or(|l| at >= l), "completed in order");
        last = Some(at);
        if i % 2 == 1 {
            assert_eq!(
                slot.result,
                Ok(Outcome::Hit {
                    bytes: (i - 1) as u64
                })
            );
        }
    }
}

/// The YCSB index (the default) is YCSB's (RedisClient.java of YCSB 0.17.0's redis binding): a
/// member scores its key's Java `String.hashCode`, and a scan takes the keys whose score
/// is at least the start key's, in score order. Scores as Java 17 computes them.
#[test]
fn the_ycsb_index_scores_java_hash_codes_and_scans_in_their_order() {
    let server = redis("");
    let store = open(&server.url(), &[("redis.index_order", "ycsb")]).unwrap();
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    // YCSB's keys 0, 1 and 2 and their Java hash codes.
    let keys = [
        ("user6284781860667377211", -594_971_599i64),
        ("user3474177960281627268", -1_813_444_199),
        ("user1361870457709653378", 1_851_385_811),
    ];
    for (key, _) in keys {
        let slot = b.push();
        slot.request.kind = OpKind::Insert;
        slot.request.key.extend_from_slice(key.as_bytes());
        slot.request.value.fields_mut().push(b"field0", b"v");
    }
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut b).await
    });
    for (key, score) in keys {
        let got = kvlab_spawn::resp::command(server.addr(), &["ZSCORE", "_indices", key]);
        let got = match got.unwrap() {
            kvlab_spawn::resp::Value::Bulk(Some(v)) => String::from_utf8(v).unwrap(),
            other => panic!("ZSCORE {key}: {other:?}"),
        };
        assert_eq!(got, score.to_string(), "score of {key}");
    }
    // From key 0 (score −594971599) on: key 0 and key 2; key 1 scores lower.
    let mut scan = |b: &mut Batch, start: &str, len: u32| {
        b.clear();
        let slot = b.push();
        slot.request.kind = OpKind::Scan;
        slot.request.key.extend_from_slice(start.as_bytes());
        slot.request.scan_len = len;
        slot.request.read.set_all();
        rt.block_on(s.execute(b));
        b.slots()[0].result.clone()
    };
    assert_eq!(
        scan(&mut b, keys[0].0, 10),
        Ok(Outcome::Scanned {
            records: 2,
            starts_at_key: false,
            bytes: 2
        })
    );
    assert_eq!(
        scan(&mut b, keys[1].0, 10),
        Ok(Outcome::Scanned {
            records: 3,
            starts_at_key: false,
            bytes: 3
        })
    );
    assert_eq!(
        scan(&mut b, keys[2].0, 10),
        Ok(Outcome::Scanned {
            records: 1,
            starts_at_key: false,
            bytes: 1
        })
    );
}

#[test]
fn wrong_address_and_wrong_password_fail_at_open_without_leaking_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = open(&format!("redis://127.0.0.1:{port}"), &[])
        .err()
        .unwrap();
    assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
    let server = redis("requirepass=sesame");
    let url = format!("redis://:wrong-secret@127.0.0.1:{}", server.port());
    let e = open(&url, &[]).err().unwrap();
    assert!(!e.message.contains("wrong-secret"), "{e}");
    assert!(e.message.contains("handshake"), "{e}");
    let url = format!("redis://:sesame@127.0.0.1:{}", server.port());
    let store = open(&url, &[]).unwrap();
    assert!(!format!("{:?}", store.options()).contains("sesame"));
    conforms(&store);
}

/// `keyspace_hits` and `keyspace_misses` of the server.
fn keyspace(store: &RedisStore) -> (i64, i64) {
    let stats = store.stats();
    let int = |name: &str| match stats.iter().find(|(k, _)| k == name) {
        Some((_, kvlab_core::StatValue::Int(n))) => *n,
        other => panic!("{name}: {other:?} in {stats:?}"),
    };
    (int("keyspace_hits"), int("keyspace_misses"))
}

#[test]
fn mget_counts_hits_per_key_as_the_server_does_and_the_hash_model_refuses_it() {
    let server = redis("");
    let store = open(&server.url(), &[("redis.model", "string")]).unwrap();
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    for i in 0..30 {
        let slot = b.push();
        slot.request.kind = OpKind::Insert;
        slot.request.read.set_blob();
        slot.request
            .key
            .extend_from_slice(format!("m{i}").as_bytes());
        slot.request.value.set_blob(format!("v{i}").as_bytes());
    }
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut b).await
    });
    let before = keyspace(&store);
    // Pipelined MGETs of 1 to 6 keys, keys 30.. absent.
    b.clear();
    let mut want = (0, 0);
    for r in 0..10usize {
        let slot = b.push();
        slot.request.kind = OpKind::Read;
        slot.request.read.set_blob();
        let keys: Vec<usize> = (0..=r % 6).map(|j| r * 4 + j).collect();
        slot.request
            .key
            .extend_from_slice(format!("m{}", keys[0]).as_bytes());
        for k in &keys[1..] {
            slot.request.more_keys.push(format!("m{k}").as_bytes());
        }
        let found = keys.iter().filter(|&&k| k < 30).count();
        want.0 += found as i64;
        want.1 += (keys.len() - found) as i64;
    }
    rt.block_on(s.execute(&mut b));
    for (r, slot) in b.slots().iter().enumerate() {
        let keys: Vec<usize> = (0..=r % 6).map(|j| r * 4 + j).collect();
        if keys.len() == 1 {
            // One key and no more keys: a plain GET.
            assert!(matches!(
                slot.result,
                Ok(Outcome::Hit { .. } | Outcome::Miss)
            ));
            continue;
        }
        let found: Vec<usize> = keys.iter().copied().filter(|&k| k < 30).collect();
        let bytes: usize = found.iter().map(|k| format!("v{k}").len()).sum();
        assert_eq!(
            slot.result,
            Ok(Outcome::MultiRead {
                hits: found.len() as u32,
                misses: (keys.len() - found.len()) as u32,
                bytes: bytes as u64
            }),
            "MGET {r}"
        );
        for k in found {
            assert_eq!(
                slot.reply.get(format!("m{k}").as_bytes()),
                Some(format!("v{k}").as_bytes())
            );
        }
    }
    let after = keyspace(&store);
    assert_eq!((after.0 - before.0, after.1 - before.1), want);

    let hash = open(&server.url(), &[]).unwrap();
    let mut s = hash.session().unwrap();
    b.clear();
    let slot = b.push();
    slot.request.kind = OpKind::Read;
    slot.request.key.extend_from_slice(b"m1");
    slot.request.more_keys.push(b"m2");
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut b).await
    });
    let err = b.slots()[0].result.clone().unwrap_err();
    assert_eq!(err.kind, kvlab_core::StoreErrorKind::Unsupported);
    assert!(err.message.contains("redis.model=string"), "{err}");
}

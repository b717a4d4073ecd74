//! The `redis` store against a real redis-server started on a free loopback port.

use kvlab_core::{Batch, OpKind, Outcome, Session, Store};
use kvlab_net::redis::{Model, RedisConfig, RedisStore};
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_stores::StoreOptions;

fn redis(spec: &str) -> Server {
    Server::start(&ServerSpec::parse(ServerKind::Redis, spec).unwrap()).unwrap()
}

fn open(url: &str, pairs: &[(&str, &str)]) -> Result<RedisStore, kvlab_core::StoreError> {
    let opts = StoreOptions::new(
        "redis.",
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
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
        slot.request.blob = true;
        slot.request
            .key
            .extend_from_slice(format!("k{}", i / 2).as_bytes());
        if i % 2 == 0 {
            slot.request.record.push(b"", &vec![b'x'; i]);
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

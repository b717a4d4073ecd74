//! The `redis` store on a real three-master Redis Cluster: discovery, conformance in both
//! models, scans across nodes, and `MOVED`/`ASK` redirections while a slot migrates.

use std::net::SocketAddr;

use kvlab_core::{Batch, OpKind, Outcome, Session, Store};
use kvlab_net::redis::{Model, RedisConfig, RedisSession, RedisStore};
use kvlab_proto::resp::key_slot;
use kvlab_spawn::resp::{command, Value};
use kvlab_spawn::Cluster;
use kvlab_stores::StoreOptions;

fn open(url: &str, model: &str) -> RedisStore {
    // Key order: the scans below expect the keys that follow the start key.
    let opts = StoreOptions::new(
        "redis.",
        [
            ("redis.model".to_string(), model.to_string()),
            ("redis.index_order".to_string(), "key".to_string()),
        ],
    );
    RedisStore::open(RedisConfig::from_options(url, Model::Hash, opts).unwrap()).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn cmd(addr: SocketAddr, args: &[&str]) -> Value {
    command(addr, args).unwrap_or_else(|e| panic!("{} on {addr}: {e}", args.join(" ")))
}

/// The node of `cluster` that serves `slot`.
fn owner(cluster: &Cluster, slot: u16) -> SocketAddr {
    cluster
        .slot_ranges()
        .unwrap()
        .into_iter()
        .find(|&(first, last, _)| (first..=last).contains(&slot))
        .map(|(_, _, addr)| addr)
        .unwrap()
}

fn flush_all(cluster: &Cluster) {
    for addr in cluster.addrs() {
        cmd(addr, &["FLUSHALL"]);
    }
}

/// `errorstat_NAME:count=N` of a node's `INFO errorstats` (0 when absent).
fn error_count(addr: SocketAddr, name: &str) -> u64 {
    let info = cmd(addr, &["INFO", "errorstats"]);
    let prefix = format!("errorstat_{name}:count=");
    info.as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix(&prefix).map(|n| n.parse().unwrap()))
        .unwrap_or(0)
}

fn exec(rt: &tokio::runtime::Runtime, s: &mut RedisSession, b: &mut Batch) {
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(b).await
    });
    assert!(b.slots().iter().all(|s| s.completed_at.is_some()));
}

fn push(b: &mut Batch, kind: OpKind, key: &str, value: &str) {
    let slot = b.push();
    slot.request.kind = kind;
    slot.request.read.set_blob();
    slot.request.key.extend_from_slice(key.as_bytes());
    if matches!(kind, OpKind::Insert | OpKind::Update) {
        slot.request.value.set_blob(value.as_bytes());
    }
}

#[test]
fn a_cluster_is_discovered_conforms_in_both_models_and_scans_across_nodes() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let seed = &cluster.urls()[1];
    for model in ["hash", "string"] {
        let store = open(seed, model);
        assert!(store.is_cluster());
        assert_eq!(store.nodes(), 3);
        assert!(store
            .options()
            .iter()
            .any(|(k, v)| k == "nodes" && *v == kvlab_core::StatValue::from(3u64)));
        let rt = runtime();
        kvlab_stores::conformance::check_all_with(&store, |s: &mut RedisSession, b: &mut Batch| {
            exec(&rt, s, b)
        });
        // Counters add up over the three nodes.
        let stats = store.stats();
        let processed = stats
            .iter()
            .find(|(k, _)| k == "total_commands_processed")
            .map(|(_, v)| v.clone());
        assert!(
            matches!(processed, Some(kvlab_core::StatValue::Int(n)) if n > 20),
            "{stats:?}"
        );
        flush_all(&cluster);
    }

    // A multi-key read of keys of one hash slot (a hash tag) is one MGET; keys of
    // several slots are read too (see the test of multi-key reads below).
    let store = open(seed, "string");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    push(&mut b, OpKind::Insert, "{t}-a", "1");
    push(&mut b, OpKind::Insert, "{t}-b", "22");
    exec(&rt, &mut s, &mut b);
    b.clear();
    push(&mut b, OpKind::Read, "{t}-a", "");
    for k in ["{t}-b", "{t}-c"] {
        b.slots_mut()[0].request.more_keys.push(k.as_bytes());
    }
    push(&mut b, OpKind::Read, "x-a", "");
    b.slots_mut()[1].request.more_keys.push(b"x-b");
    exec(&rt, &mut s, &mut b);
    assert_eq!(
        b.slots()[0].result,
        Ok(Outcome::MultiRead {
            hits: 2,
            misses: 1,
            bytes: 3
        })
    );
    assert_ne!(key_slot(b"x-a"), key_slot(b"x-b"));
    assert_eq!(
        b.slots()[1].result,
        Ok(Outcome::MultiRead {
            hits: 0,
            misses: 2,
            bytes: 0
        })
    );
    flush_all(&cluster);

    // Hash model: the scan index is one sorted set on one node, the records it names
    // are spread over all three; a scan reads each record from its own node.
    let store = open(seed, "hash");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let keys: Vec<String> = (0..60).map(|i| format!("scan-key-{i:03}")).collect();
    let mut nodes_used: Vec<SocketAddr> = keys
        .iter()
        .map(|k| owner(&cluster, key_slot(k.as_bytes())))
        .collect();
    nodes_used.sort();
    nodes_used.dedup();
    assert_eq!(nodes_used.len(), 3, "the keys span every node");
    for (i, k) in keys.iter().enumerate() {
        let slot = b.push();
        slot.request.kind = OpKind::Insert;
        slot.request.key.extend_from_slice(k.as_bytes());
        slot.request
            .value
            .fields_mut()
            .push(b"field0", format!("v{i:03}").as_bytes());
    }
    exec(&rt, &mut s, &mut b);
    for slot in b.slots() {
        assert!(slot.result.is_ok(), "{:?}", slot.result);
    }
    let index_node = owner(&cluster, key_slot(b"_indices"));
    assert_eq!(
        cmd(index_node, &["ZCARD", "_indices"]).as_int(),
        Some(60),
        "every insert indexed on the index's node"
    );
    // Several scans in one pipelined batch, starting at keys on different nodes.
    b.clear();
    for (start, len) in [(0usize, 10u32), (25, 20), (55, 10), (59, 1)] {
        let slot = b.push();
        slot.request.kind = OpKind::Scan;
        slot.request.key.extend_from_slice(keys[start].as_bytes());
        slot.request.scan_len = len;
        slot.request.read.set_all();
    }
    exec(&rt, &mut s, &mut b);
    let got: Vec<_> = b.slots().iter().map(|s| s.result.clone()).collect();
    assert_eq!(
        got,
        vec![
            Ok(Outcome::Scanned {
                records: 10,
                starts_at_key: false,
                bytes: 10 * 4
            }),
            Ok(Outcome::Scanned {
                records: 20,
                starts_at_key: false,
                bytes: 20 * 4
            }),
            Ok(Outcome::Scanned {
                records: 5,
                starts_at_key: false,
                bytes: 5 * 4
            }),
            Ok(Outcome::Scanned {
                records: 1,
                starts_at_key: false,
                bytes: 4
            }),
        ]
    );
    // A record deleted behind the index's back (the index still names it) is not
    // found: the scan completes with what it could read.
    let index_node_keys = |k: &str| owner(&cluster, key_slot(k.as_bytes()));
    assert_eq!(
        cmd(index_node_keys(&keys[59]), &["DEL", &keys[59]]).as_int(),
        Some(1)
    );
    b.clear();
    for (start, len) in [(59usize, 1u32), (58, 5)] {
        let slot = b.push();
        slot.request.kind = OpKind::Scan;
        slot.request.key.extend_from_slice(keys[start].as_bytes());
        slot.request.scan_len = len;
        slot.request.read.set_all();
    }
    exec(&rt, &mut s, &mut b);
    assert_eq!(
        b.slots()[0].result,
        Ok(Outcome::Scanned {
            records: 0,
            starts_at_key: false,
            bytes: 0
        })
    );
    assert_eq!(
        b.slots()[1].result,
        Ok(Outcome::Scanned {
            records: 1,
            starts_at_key: false,
            bytes: 4
        })
    );

    // Scanned records whose slots move: one slot half-way (its record is read after an
    // ASK), another slot completely (MOVED); the scan still reads every record.
    let asked = &keys[3];
    let moved = &keys[7];
    let (ask_slot, moved_slot) = (key_slot(asked.as_bytes()), key_slot(moved.as_bytes()));
    assert_ne!(ask_slot, moved_slot);
    let ask_from = owner(&cluster, ask_slot);
    let ask_to = cluster
        .addrs()
        .into_iter()
        .find(|&a| a != ask_from)
        .unwrap();
    begin_migration(ask_slot, ask_from, ask_to);
    migrate_keys(ask_from, ask_to, std::slice::from_ref(asked));
    let moved_from = owner(&cluster, moved_slot);
    let moved_to = cluster
        .addrs()
        .into_iter()
        .find(|&a| a != moved_from)
        .unwrap();
    begin_migration(moved_slot, moved_from, moved_to);
    migrate_keys(moved_from, moved_to, std::slice::from_ref(moved));
    end_migration(&cluster, moved_slot, moved_to);
    let (asks, moves) = (
        error_count(ask_from, "ASK"),
        error_count(moved_from, "MOVED"),
    );
    b.clear();
    let slot = b.push();
    slot.request.kind = OpKind::Scan;
    slot.request.key.extend_from_slice(keys[0].as_bytes());
    slot.request.scan_len = 10;
    slot.request.read.set_all();
    exec(&rt, &mut s, &mut b);
    assert_eq!(
        b.slots()[0].result,
        Ok(Outcome::Scanned {
            records: 10,
            starts_at_key: false,
            bytes: 40
        })
    );
    assert_eq!(error_count(ask_from, "ASK"), asks + 1);
    assert_eq!(error_count(moved_from, "MOVED"), moves + 1);

    // Deletes remove the record and its index entry.
    b.clear();
    for k in &keys[..30] {
        let slot = b.push();
        slot.request.kind = OpKind::Delete;
        slot.request.key.extend_from_slice(k.as_bytes());
    }
    exec(&rt, &mut s, &mut b);
    assert!(b.slots().iter().all(|s| s.result == Ok(Outcome::Deleted)));
    assert_eq!(cmd(index_node, &["ZCARD", "_indices"]).as_int(), Some(30));
}

/// Keys that share a hash tag, so all live in one slot.
fn tagged(tag: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{{{tag}}}key{i}")).collect()
}

/// Node ids by address.
fn node_id(addr: SocketAddr) -> String {
    cmd(addr, &["CLUSTER", "MYID"])
        .as_str()
        .unwrap()
        .to_string()
}

/// Starts moving `slot` from `from` to `to` (IMPORTING on the target, MIGRATING on the
/// source), as `redis-cli --cluster reshard` does.
fn begin_migration(slot: u16, from: SocketAddr, to: SocketAddr) {
    let s = slot.to_string();
    cmd(to, &["CLUSTER", "SETSLOT", &s, "IMPORTING", &node_id(from)]);
    cmd(from, &["CLUSTER", "SETSLOT", &s, "MIGRATING", &node_id(to)]);
}

/// Moves `keys` from `from` to `to` with MIGRATE.
fn migrate_keys(from: SocketAddr, to: SocketAddr, keys: &[String]) {
    let port = to.port().to_string();
    let mut args = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
    args.extend(keys.iter().map(String::as_str));
    assert_eq!(cmd(from, &args).as_str(), Some("OK"));
}

/// Ends the migration: every node learns that `to` owns `slot`.
fn end_migration(cluster: &Cluster, slot: u16, to: SocketAddr) {
    let id = node_id(to);
    let s = slot.to_string();
    // The target first, then the source, then the rest (Redis Cluster specification).
    let mut order = vec![to];
    order.extend(cluster.addrs().into_iter().filter(|&a| a != to));
    for addr in order {
        cmd(addr, &["CLUSTER", "SETSLOT", &s, "NODE", &id]);
    }
}

#[test]
fn moved_and_ask_redirections_are_followed_and_moved_updates_the_slot_map() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let store = open(&cluster.urls()[0], "string");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();

    // --- MOVED: a slot finished moving after the store loaded its slot map.
    let keys = tagged("moved", 8);
    let slot = key_slot(keys[0].as_bytes());
    let from = owner(&cluster, slot);
    let to = cluster.addrs().into_iter().find(|&a| a != from).unwrap();
    for (i, k) in keys.iter().enumerate() {
        push(&mut b, OpKind::Insert, k, &format!("value{i}"));
    }
    exec(&rt, &mut s, &mut b);
    assert!(b.slots().iter().all(|s| s.result.is_ok()));
    begin_migration(slot, from, to);
    migrate_keys(from, to, &keys);
    end_migration(&cluster, slot, to);
    assert_eq!(
        cmd(to, &["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]).as_int(),
        Some(8)
    );

    let moved_before = error_count(from, "MOVED");
    // One pipelined batch: reads of every key, an overwrite and a new key, all sent to
    // the old owner, all redirected.
    b.clear();
    for k in &keys {
        push(&mut b, OpKind::Read, k, "");
    }
    push(&mut b, OpKind::Update, &keys[0], "rewritten");
    push(&mut b, OpKind::Insert, "{moved}new", "fresh");
    push(&mut b, OpKind::Read, "{moved}new", "");
    exec(&rt, &mut s, &mut b);
    for (i, slot) in b.slots()[..8].iter().enumerate() {
        assert_eq!(
            slot.result,
            Ok(Outcome::Hit { bytes: 6 }),
            "read of {}",
            keys[i]
        );
        assert_eq!(slot.reply.field(0).1, format!("value{i}").as_bytes());
    }
    assert!(b.slots()[8].result.is_ok(), "{:?}", b.slots()[8].result);
    assert!(b.slots()[9].result.is_ok(), "{:?}", b.slots()[9].result);
    assert_eq!(b.slots()[10].result, Ok(Outcome::Hit { bytes: 5 }));
    let moved = error_count(from, "MOVED") - moved_before;
    assert!(moved >= 1, "the old owner answered MOVED");
    // The writes landed on the new owner.
    assert_eq!(cmd(to, &["GET", &keys[0]]).as_str(), Some("rewritten"));
    assert_eq!(cmd(to, &["GET", "{moved}new"]).as_str(), Some("fresh"));

    // The session learned the new owner: the next requests go straight there.
    b.clear();
    for k in &keys {
        push(&mut b, OpKind::Read, k, "");
    }
    exec(&rt, &mut s, &mut b);
    assert!(b
        .slots()
        .iter()
        .all(|s| matches!(s.result, Ok(Outcome::Hit { .. }))));
    assert_eq!(
        error_count(from, "MOVED") - moved_before,
        moved,
        "no MOVED after the slot map was updated"
    );
    // So does a new session of the same store (the map is the store's).
    let mut s2 = store.session().unwrap();
    b.clear();
    push(&mut b, OpKind::Read, &keys[1], "");
    exec(&rt, &mut s2, &mut b);
    assert_eq!(b.slots()[0].result, Ok(Outcome::Hit { bytes: 6 }));
    assert_eq!(error_count(from, "MOVED") - moved_before, moved);

    // --- ASK: a slot half-way through migrating. Keys already moved are answered by
    // the target after ASKING; keys not yet moved by the source; absent keys (and so
    // new ones) by the target.
    let keys = tagged("ask", 6);
    let slot = key_slot(keys[0].as_bytes());
    let from = owner(&cluster, slot);
    let to = cluster.addrs().into_iter().find(|&a| a != from).unwrap();
    b.clear();
    for (i, k) in keys.iter().enumerate() {
        push(&mut b, OpKind::Insert, k, &format!("ask{i}"));
    }
    exec(&rt, &mut s, &mut b);
    assert!(b.slots().iter().all(|s| s.result.is_ok()));
    begin_migration(slot, from, to);
    migrate_keys(from, to, &keys[..3]);
    let ask_before = error_count(from, "ASK");
    let asking_before = asking_calls(to);
    b.clear();
    for k in &keys {
        push(&mut b, OpKind::Read, k, "");
    }
    push(&mut b, OpKind::Read, "{ask}absent", "");
    push(&mut b, OpKind::Insert, "{ask}added", "during");
    exec(&rt, &mut s, &mut b);
    for (i, slot) in b.slots()[..6].iter().enumerate() {
        assert_eq!(
            slot.result,
            Ok(Outcome::Hit { bytes: 4 }),
            "read of {}",
            keys[i]
        );
        assert_eq!(slot.reply.field(0).1, format!("ask{i}").as_bytes());
    }
    assert_eq!(b.slots()[6].result, Ok(Outcome::Miss));
    assert!(b.slots()[7].result.is_ok(), "{:?}", b.slots()[7].result);
    // Three moved keys, the absent one and the new one were asked for elsewhere.
    assert_eq!(error_count(from, "ASK") - ask_before, 5);
    assert_eq!(asking_calls(to) - asking_before, 5);
    assert_eq!(
        cmd(to, &["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]).as_int(),
        Some(4)
    );
    // An ASK does not change the slot map: the source is asked again.
    b.clear();
    push(&mut b, OpKind::Read, &keys[4], "");
    push(&mut b, OpKind::Read, &keys[0], "");
    exec(&rt, &mut s, &mut b);
    assert_eq!(b.slots()[0].result, Ok(Outcome::Hit { bytes: 4 }));
    assert_eq!(b.slots()[1].result, Ok(Outcome::Hit { bytes: 4 }));
    assert_eq!(error_count(from, "ASK") - ask_before, 6);
    // Finish the migration; the session follows the final MOVED.
    migrate_keys(from, to, &keys[3..]);
    end_migration(&cluster, slot, to);
    b.clear();
    for k in &keys {
        push(&mut b, OpKind::Read, k, "");
    }
    push(&mut b, OpKind::Read, "{ask}added", "");
    exec(&rt, &mut s, &mut b);
    assert!(
        b.slots()
            .iter()
            .all(|s| matches!(s.result, Ok(Outcome::Hit { .. }))),
        "{:?}",
        b.slots().iter().map(|s| &s.result).collect::<Vec<_>>()
    );
}

#[test]
fn an_ask_for_the_scan_index_alone_is_followed_to_the_index_node() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let store = open(&cluster.urls()[0], "hash");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let insert = |b: &mut Batch, key: &str| {
        let slot = b.push();
        slot.request.kind = OpKind::Insert;
        slot.request.key.extend_from_slice(key.as_bytes());
        slot.request
            .value
            .fields_mut()
            .push(b"field0", key.as_bytes());
    };
    insert(&mut b, "user-first");
    exec(&rt, &mut s, &mut b);
    assert!(b.slots()[0].result.is_ok(), "{:?}", b.slots()[0].result);
    // The index (`_indices`) moves to another node; the records' own slots do not.
    let slot = key_slot(b"_indices");
    let from = owner(&cluster, slot);
    let to = cluster.addrs().into_iter().find(|&a| a != from).unwrap();
    begin_migration(slot, from, to);
    migrate_keys(from, to, &["_indices".to_string()]);
    let ask_before = error_count(from, "ASK");
    let keys = ["user-a", "user-b", "user-c", "user-d"];
    b.clear();
    for k in keys {
        insert(&mut b, k);
    }
    exec(&rt, &mut s, &mut b);
    for (k, slot) in keys.iter().zip(b.slots()) {
        assert!(slot.result.is_ok(), "insert of {k}: {:?}", slot.result);
        let home = owner(&cluster, key_slot(k.as_bytes()));
        assert_eq!(
            cmd(home, &["HGET", k, "field0"]).as_str(),
            Some(*k),
            "{k} is on its own node"
        );
    }
    assert_eq!(
        error_count(from, "ASK") - ask_before,
        keys.len() as u64,
        "each index write was asked for elsewhere once"
    );
    end_migration(&cluster, slot, to);
    assert_eq!(
        cmd(to, &["ZCARD", "_indices"]).as_int(),
        Some(1 + keys.len() as i64),
        "every key is in the index, on its new node"
    );
}

/// How many `ASKING` commands a node has served.
fn asking_calls(addr: SocketAddr) -> u64 {
    let info = cmd(addr, &["INFO", "commandstats"]);
    info.as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix("cmdstat_asking:calls="))
        .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
        .unwrap_or(0)
}

/// A field of a node's `INFO` (0 when absent): `name:value`, or for `cmdstat_*` the
/// `calls=` count.
fn info_count(addr: SocketAddr, section: &str, name: &str) -> u64 {
    let info = cmd(addr, &["INFO", section]);
    info.as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{name}:")))
        .map(|v| {
            let v = v.split(',').next().unwrap();
            v.trim_start_matches("calls=").parse().unwrap()
        })
        .unwrap_or(0)
}

/// `INFO` counter `name` summed over the cluster's nodes.
fn cluster_count(cluster: &Cluster, section: &str, name: &str) -> u64 {
    cluster
        .addrs()
        .into_iter()
        .map(|a| info_count(a, section, name))
        .sum()
}

/// Pushes a multi-key read of `keys`.
fn push_multi_read(b: &mut Batch, keys: &[String]) {
    push(b, OpKind::Read, &keys[0], "");
    let slot = b.slots_mut().last_mut().unwrap();
    for k in &keys[1..] {
        slot.request.more_keys.push(k.as_bytes());
    }
}

#[test]
fn a_multi_key_read_across_slots_is_one_mget_per_slot_and_follows_redirections() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let store = open(&cluster.urls()[2], "string");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();

    // 40 keys over every node, two pairs sharing a slot (hash tags); every third key
    // is never written.
    let mut keys: Vec<String> = (0..36).map(|i| format!("mk-{i}")).collect();
    keys.extend(["{p}1", "{p}2", "{q}1", "{q}2"].map(String::from));
    let value = |k: &str| format!("v-{k}");
    let stored = |i: usize| !i.is_multiple_of(3);
    for (i, k) in keys.iter().enumerate() {
        if stored(i) {
            push(&mut b, OpKind::Insert, k, &value(k));
        }
    }
    exec(&rt, &mut s, &mut b);
    assert!(b.slots().iter().all(|s| s.result.is_ok()));

    // Pipelined multi-key reads of 2 to 11 keys (and one of the tagged pairs), their
    // keys in every order of slots.
    let reads: Vec<Vec<usize>> = vec![
        (0..9).collect(),
        (9..20).rev().collect(),
        vec![20, 22],
        (21..36).step_by(2).collect(),
        vec![36, 3, 37, 38, 39],
        vec![37, 36],
    ];
    let expect = |read: &[usize]| {
        let hits = read.iter().filter(|&&i| stored(i)).count() as u32;
        let bytes: usize = read
            .iter()
            .filter(|&&i| stored(i))
            .map(|&i| value(&keys[i]).len())
            .sum();
        Outcome::MultiRead {
            hits,
            misses: read.len() as u32 - hits,
            bytes: bytes as u64,
        }
    };
    let slots_of = |read: &[usize]| {
        let mut slots: Vec<u16> = read.iter().map(|&i| key_slot(keys[i].as_bytes())).collect();
        slots.sort();
        slots.dedup();
        slots.len() as u64
    };
    let nodes_of = |read: &[usize]| {
        let mut nodes: Vec<SocketAddr> = read
            .iter()
            .map(|&i| owner(&cluster, key_slot(keys[i].as_bytes())))
            .collect();
        nodes.sort();
        nodes.dedup();
        nodes.len()
    };
    assert_eq!(nodes_of(&reads[0]), 3, "the first read spans every node");
    assert_eq!(slots_of(&reads[5]), 1);
    let (hits0, misses0, mgets0) = (
        cluster_count(&cluster, "stats", "keyspace_hits"),
        cluster_count(&cluster, "stats", "keyspace_misses"),
        cluster_count(&cluster, "commandstats", "cmdstat_mget"),
    );
    b.clear();
    for read in &reads {
        let keys: Vec<String> = read.iter().map(|&i| keys[i].clone()).collect();
        push_multi_read(&mut b, &keys);
    }
    exec(&rt, &mut s, &mut b);
    for (read, slot) in reads.iter().zip(b.slots()) {
        assert_eq!(slot.result, Ok(expect(read)), "read of keys {read:?}");
        // Each found key comes back once, named by its key.
        let mut got: Vec<(String, String)> = slot
            .reply
            .iter()
            .map(|(k, v)| {
                (
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect();
        got.sort();
        let mut want: Vec<(String, String)> = read
            .iter()
            .filter(|&&i| stored(i))
            .map(|&i| (keys[i].clone(), value(&keys[i])))
            .collect();
        want.sort();
        assert_eq!(got, want, "read of keys {read:?}");
    }
    // The servers counted every key once, and one MGET per slot of each read.
    let all_hits: u64 = reads
        .iter()
        .map(|r| r.iter().filter(|&&i| stored(i)).count() as u64)
        .sum();
    let all_keys: u64 = reads.iter().map(|r| r.len() as u64).sum();
    assert_eq!(
        (
            cluster_count(&cluster, "stats", "keyspace_hits") - hits0,
            cluster_count(&cluster, "stats", "keyspace_misses") - misses0,
        ),
        (all_hits, all_keys - all_hits)
    );
    assert_eq!(
        cluster_count(&cluster, "commandstats", "cmdstat_mget") - mgets0,
        reads.iter().map(|r| slots_of(r)).sum::<u64>()
    );
    assert_eq!(
        cluster_count(&cluster, "errorstats", "errorstat_CROSSSLOT"),
        0
    );

    // Slots that move under one read: one completely (its MGET is answered MOVED and
    // sent to the new owner), one half-way (its moved key is answered ASK).
    let read: Vec<usize> = (0..12).collect();
    let (moved, asked) = (1usize, 2usize);
    let (moved_slot, ask_slot) = (
        key_slot(keys[moved].as_bytes()),
        key_slot(keys[asked].as_bytes()),
    );
    assert_ne!(moved_slot, ask_slot);
    let moved_from = owner(&cluster, moved_slot);
    let moved_to = cluster
        .addrs()
        .into_iter()
        .find(|&a| a != moved_from)
        .unwrap();
    begin_migration(moved_slot, moved_from, moved_to);
    migrate_keys(moved_from, moved_to, std::slice::from_ref(&keys[moved]));
    end_migration(&cluster, moved_slot, moved_to);
    let ask_from = owner(&cluster, ask_slot);
    let ask_to = cluster
        .addrs()
        .into_iter()
        .find(|&a| a != ask_from)
        .unwrap();
    begin_migration(ask_slot, ask_from, ask_to);
    migrate_keys(ask_from, ask_to, std::slice::from_ref(&keys[asked]));
    let (moves, asks) = (
        error_count(moved_from, "MOVED"),
        error_count(ask_from, "ASK"),
    );
    b.clear();
    let names: Vec<String> = read.iter().map(|&i| keys[i].clone()).collect();
    push_multi_read(&mut b, &names);
    push(&mut b, OpKind::Read, &keys[4], "");
    exec(&rt, &mut s, &mut b);
    assert_eq!(b.slots()[0].result, Ok(expect(&read)));
    assert_eq!(
        b.slots()[1].result,
        Ok(Outcome::Hit {
            bytes: value(&keys[4]).len() as u64
        })
    );
    assert_eq!(error_count(moved_from, "MOVED"), moves + 1);
    assert_eq!(error_count(ask_from, "ASK"), asks + 1);
}

#[test]
fn an_mget_answered_tryagain_during_a_resharding_is_sent_again_after_a_pause() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let store = open(&cluster.urls()[0], "string");
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    // Four keys of one slot, all written.
    let keys = tagged("try", 4);
    for k in &keys {
        push(&mut b, OpKind::Insert, k, "v");
    }
    exec(&rt, &mut s, &mut b);
    assert!(b.slots().iter().all(|s| s.result.is_ok()));
    let slot = key_slot(keys[0].as_bytes());
    let from = owner(&cluster, slot);
    let to = cluster.addrs().into_iter().find(|&a| a != from).unwrap();
    // Half the keys move: the source has some of the MGET's keys, not all, and answers
    // -TRYAGAIN until the resharding ends, 150 ms later.
    begin_migration(slot, from, to);
    migrate_keys(from, to, &keys[..2]);
    let tries = error_count(from, "TRYAGAIN");
    let rest = keys[2..].to_vec();
    let finisher = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        migrate_keys(from, to, &rest);
    });
    b.clear();
    push_multi_read(&mut b, &keys);
    let started = std::time::Instant::now();
    exec(&rt, &mut s, &mut b);
    finisher.join().unwrap();
    end_migration(&cluster, slot, to);
    // Not an error: after the last keys moved, the source answered ASK and the MGET
    // went to the target.
    assert_eq!(
        b.slots()[0].result,
        Ok(Outcome::MultiRead {
            hits: 4,
            misses: 0,
            bytes: 4
        })
    );
    assert!(
        error_count(from, "TRYAGAIN") > tries,
        "the source said TRYAGAIN"
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    assert_eq!(error_count(from, "ASK"), 1);
}

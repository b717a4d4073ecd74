//! Real Redis Clusters of local redis-server nodes.

use std::path::Path;

use kvlab_spawn::{resp, start_redis_cluster, start_redis_cluster_with, ServerKind, ServerSpec};

fn cluster_info(addr: std::net::SocketAddr) -> String {
    resp::command(addr, &["CLUSTER", "INFO"])
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn three_masters_cover_all_slots() {
    let cluster = start_redis_cluster(3).unwrap();
    let addrs = cluster.addrs();
    assert_eq!(addrs.len(), 3);
    for &addr in &addrs {
        let info = cluster_info(addr);
        assert!(info.contains("cluster_state:ok"), "{addr}: {info}");
        assert!(info.contains("cluster_known_nodes:3"), "{addr}: {info}");
    }
    // CLUSTER SLOTS by hand: three ranges, one per master, covering 0..=16383.
    let slots = resp::command(addrs[1], &["CLUSTER", "SLOTS"]).unwrap();
    assert_eq!(slots.as_array().unwrap().len(), 3, "{slots:?}");
    let ranges = cluster.slot_ranges().unwrap();
    assert_eq!(ranges.len(), 3);
    assert_eq!(ranges[0].0, 0);
    assert_eq!(ranges[2].1, 16383);
    assert_eq!(ranges[0].1 + 1, ranges[1].0);
    assert_eq!(ranges[1].1 + 1, ranges[2].0);
    let mut masters: Vec<_> = ranges.iter().map(|r| r.2).collect();
    masters.sort();
    let mut sorted = addrs.clone();
    sorted.sort();
    assert_eq!(masters, sorted);

    // A key lands on one node; the others redirect.
    let moved = addrs
        .iter()
        .filter(|&&a| resp::command(a, &["SET", "kvlab", "1"]).is_err())
        .count();
    assert_eq!(moved, 2);

    let pids: Vec<u32> = cluster.nodes().iter().map(|n| n.pid()).collect();
    let reports = cluster.stop().unwrap();
    assert_eq!(reports.len(), 3);
    for pid in pids {
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }
}

#[test]
fn one_master_by_hand() {
    let spec = ServerSpec::parse(ServerKind::Redis, "maxmemory=32mb").unwrap();
    let cluster = start_redis_cluster_with(&spec, 1).unwrap();
    let ranges = cluster.slot_ranges().unwrap();
    assert_eq!(ranges, [(0, 16383, cluster.addrs()[0])]);
    resp::command(cluster.addrs()[0], &["SET", "kvlab", "1"]).unwrap();
    let pid = cluster.nodes()[0].pid();
    drop(cluster);
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
}

#[test]
fn two_masters_by_hand() {
    let cluster = start_redis_cluster(2).unwrap();
    let ranges = cluster.slot_ranges().unwrap();
    assert_eq!(ranges.len(), 2);
    assert_eq!(
        (ranges[0].0, ranges[0].1, ranges[1].0, ranges[1].1),
        (0, 8191, 8192, 16383)
    );
    assert!(cluster_info(cluster.addrs()[1]).contains("cluster_known_nodes:2"));
}

#[test]
fn zero_masters_or_memcached_are_refused() {
    assert!(start_redis_cluster(0).is_err());
    let spec = ServerSpec::new(ServerKind::Memcached);
    assert!(start_redis_cluster_with(&spec, 3).is_err());
}

//! `stop_all_spawned`, alone in its own test binary (process) so that it stops only the
//! servers started here.

use std::path::Path;
use std::time::Duration;

use kvlab_spawn::{spawned_pids, stop_all_spawned, Server, ServerKind, ServerSpec, StopHow};

#[test]
fn stop_all_spawned_stops_every_live_server() {
    let redis = Server::start(&ServerSpec::new(ServerKind::Redis)).unwrap();
    let memcached = Server::start(&ServerSpec::new(ServerKind::Memcached)).unwrap();
    let stopped = Server::start(&ServerSpec::new(ServerKind::Redis)).unwrap();
    let stopped_pid = stopped.pid();
    stopped.stop().unwrap();

    let mut pids = spawned_pids();
    pids.sort();
    let mut expected = vec![redis.pid(), memcached.pid()];
    expected.sort();
    assert_eq!(pids, expected);
    assert!(!pids.contains(&stopped_pid));

    assert_eq!(stop_all_spawned(), 2);
    // Both have exited (zombies until their Server reaps them).
    assert!(redis.sample().is_err());
    assert!(memcached.sample().is_err());

    for server in [redis, memcached] {
        let pid = server.pid();
        let report = server.stop().unwrap();
        assert_eq!(report.how, StopHow::AlreadyExited);
        assert!(report.took < Duration::from_secs(1));
        assert!(!Path::new(&format!("/proc/{pid}")).exists());
    }
    assert!(spawned_pids().is_empty());
    assert_eq!(stop_all_spawned(), 0);
}

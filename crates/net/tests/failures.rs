//! Failures of network stores against real servers: a server killed mid-batch and
//! restarted on the same port, a busy server and per-request timeouts, and servers
//! that answer garbage. Every failure must be a per-request error of the right kind
//! (`connection`, `timeout`, `protocol`) with a message, never a panic or a hang.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kvlab_core::{Batch, OpKind, Outcome, Session, Store, StoreError, StoreErrorKind};
use kvlab_net::memcached::{MemcachedConfig, MemcachedStore};
use kvlab_net::redis::{Model, RedisConfig, RedisStore};
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_stores::StoreOptions;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn open_redis(url: &str, pairs: &[(&str, &str)]) -> Result<RedisStore, StoreError> {
    let opts = StoreOptions::new(
        "redis.",
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
    );
    RedisStore::open(RedisConfig::from_options(url, Model::String, opts)?)
}

fn open_memcached(url: &str, protocol: &str) -> Result<MemcachedStore, StoreError> {
    let opts = StoreOptions::new(
        "memcached.",
        [("memcached.protocol".to_string(), protocol.to_string())],
    );
    MemcachedStore::open(MemcachedConfig::from_options(url, opts)?)
}

/// A batch of `n` blob requests of `kind` on keys `{prefix}0…`, writes of `value`.
fn batch(kind: OpKind, prefix: &str, n: usize, value: &[u8]) -> Batch {
    let mut b = Batch::new();
    for i in 0..n {
        let slot = b.push();
        slot.request.kind = kind;
        slot.request.read.set_blob();
        slot.request
            .key
            .extend_from_slice(format!("{prefix}{i}").as_bytes());
        if kind == OpKind::Insert {
            slot.request.value.set_blob(value);
        }
    }
    b
}

/// Every slot completed, with the error kinds of those that failed.
fn error_kinds(b: &Batch) -> Vec<Option<StoreErrorKind>> {
    b.slots()
        .iter()
        .map(|s| {
            assert!(s.completed_at.is_some(), "every slot completes");
            s.result.as_ref().err().map(|e| {
                assert!(!e.message.is_empty());
                e.kind
            })
        })
        .collect()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process started by the test on a port of its choosing, killed on drop.
struct Process {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Process {
    /// redis-server on `port` (no persistence, DEBUG allowed), once it answers PING.
    fn redis(port: u16) -> Process {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--enable-debug-command",
                "yes",
            ])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting redis-server");
        let p = Process { child, _dir: dir };
        p.wait_ready(port, || {
            kvlab_spawn::resp::command(addr(port), &["PING"]).is_ok()
        });
        p
    }

    /// memcached on `port`, once it answers `version`.
    fn memcached(port: u16) -> Process {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("memcached")
            .args([
                "-l",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "0",
                "-u",
                "root",
            ])
            .args(["-m", "16", "-t", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting memcached");
        let p = Process { child, _dir: dir };
        p.wait_ready(port, || {
            let Ok(mut c) = TcpStream::connect(addr(port)) else {
                return false;
            };
            let mut buf = [0u8; 64];
            c.write_all(b"version\r\n").is_ok()
                && c.read(&mut buf)
                    .is_ok_and(|n| buf[..n].starts_with(b"VERSION"))
        });
        p
    }

    fn wait_ready(&self, port: u16, ready: impl Fn() -> bool) {
        let start = Instant::now();
        while !ready() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "server on port {port} not ready after 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, as a crash.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Runs `b` again until every request succeeds (bounded: 40 tries), as a client that
/// keeps going while its server comes back; returns the number of tries.
fn until_ok<S: Session>(rt: &tokio::runtime::Runtime, s: &mut S, b: &mut Batch) -> usize {
    for tries in 1..=40 {
        rt.block_on(s.execute(b));
        let kinds = error_kinds(b);
        if kinds.iter().all(Option::is_none) {
            return tries;
        }
        assert!(
            kinds
                .iter()
                .flatten()
                .all(|k| *k == StoreErrorKind::Connection),
            "{kinds:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the session did not reconnect");
}

#[test]
fn redis_killed_mid_batch_fails_requests_then_the_session_reconnects_on_restart() {
    let port = free_port();
    let server = Process::redis(port);
    let url = format!("redis://127.0.0.1:{port}");
    let store = open_redis(&url, &[]).unwrap();
    let rt = runtime();
    let mut s = store.session().unwrap();
    rt.block_on(s.prepare()).unwrap();
    let mut b = batch(OpKind::Insert, "k", 32, b"before");
    rt.block_on(s.execute(&mut b));
    assert!(error_kinds(&b).iter().all(Option::is_none));

    // The server stalls (DEBUG SLEEP on another connection) with the batch in flight,
    // and dies before answering it.
    let sleeper = std::thread::spawn(move || {
        let mut c =
            kvlab_spawn::resp::Connection::connect(addr(port), Duration::from_secs(5)).unwrap();
        let _ = c.call(&["DEBUG", "SLEEP", "2"]);
    });
    std::thread::sleep(Duration::from_millis(100));
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        server.kill();
    });
    let mut b = batch(OpKind::Read, "k", 32, b"");
    rt.block_on(s.execute(&mut b));
    let kinds = error_kinds(&b);
    assert!(
        kinds.iter().all(|k| *k == Some(StoreErrorKind::Connection)),
        "{kinds:?}"
    );
    let e = b.slots()[0].result.clone().unwrap_err();
    assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
    killer.join().unwrap();
    sleeper.join().unwrap();

    // Down: every request of a batch fails fast, with one connection attempt per batch
    // rather than a back-off wait per request.
    for _ in 0..3 {
        let mut b = batch(OpKind::Read, "k", 64, b"");
        let started = Instant::now();
        rt.block_on(s.execute(&mut b));
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "a batch to a dead server took {:?}",
            started.elapsed()
        );
        let kinds = error_kinds(&b);
        assert!(
            kinds.iter().all(|k| *k == Some(StoreErrorKind::Connection)),
            "{kinds:?}"
        );
        let e = b.slots()[63].result.clone().unwrap_err();
        assert!(e.message.contains("refused"), "{e}");
    }

    // Back on the same port (empty: no persistence): the same session reconnects.
    let _server = Process::redis(port);
    let mut b = batch(OpKind::Insert, "k", 32, b"after");
    until_ok(&rt, &mut s, &mut b);
    let mut b = batch(OpKind::Read, "k", 32, b"");
    rt.block_on(s.execute(&mut b));
    for slot in b.slots() {
        assert_eq!(slot.result, Ok(Outcome::Hit { bytes: 5 }));
        assert_eq!(slot.reply.field(0).1, b"after");
    }
}

#[test]
fn a_busy_redis_times_requests_out_and_the_session_recovers_in_step() {
    let server =
        Server::start(&ServerSpec::parse(ServerKind::Redis, "enable-debug-command=yes").unwrap())
            .unwrap();
    let addr = server.addr();
    let store = open_redis(&server.url(), &[("redis.timeout_ms", "200")]).unwrap();
    let rt = runtime();
    let mut s = store.session().unwrap();
    rt.block_on(s.prepare()).unwrap();
    let mut b = batch(OpKind::Insert, "one", 4, b"1");
    rt.block_on(s.execute(&mut b));
    let mut b2 = batch(OpKind::Insert, "two", 4, b"22");
    rt.block_on(s.execute(&mut b2));
    assert!(error_kinds(&b)
        .iter()
        .chain(&error_kinds(&b2))
        .all(Option::is_none));

    let sleeper = std::thread::spawn(move || {
        let mut c = kvlab_spawn::resp::Connection::connect(addr, Duration::from_secs(5)).unwrap();
        c.call(&["DEBUG", "SLEEP", "1"]).unwrap()
    });
    std::thread::sleep(Duration::from_millis(100));
    let mut b = batch(OpKind::Read, "one", 4, b"");
    rt.block_on(s.execute(&mut b));
    let kinds = error_kinds(&b);
    assert!(
        kinds.iter().all(|k| *k == Some(StoreErrorKind::Timeout)),
        "{kinds:?}"
    );
    let e = b.slots()[0].result.clone().unwrap_err();
    assert!(e.message.contains("200ms"), "{e}");
    sleeper.join().unwrap();

    // The late replies to the timed-out reads must not be taken for the next batch's.
    let mut b = batch(OpKind::Read, "two", 4, b"");
    rt.block_on(s.execute(&mut b));
    for slot in b.slots() {
        assert_eq!(slot.result, Ok(Outcome::Hit { bytes: 2 }));
        assert_eq!(slot.reply.field(0).1, b"22");
    }
}

#[test]
fn memcached_killed_fails_its_requests_and_the_session_reconnects_on_restart() {
    for protocol in ["text", "meta"] {
        let (port, other) = (free_port(), free_port());
        let server = Process::memcached(port);
        let _other = Process::memcached(other);
        let url = format!("memcached://127.0.0.1:{port},127.0.0.1:{other}");
        let store = open_memcached(&url, protocol).unwrap();
        let rt = runtime();
        let mut s = store.session().unwrap();
        rt.block_on(s.prepare()).unwrap();
        let mut b = batch(OpKind::Insert, "key", 100, b"v");
        rt.block_on(s.execute(&mut b));
        assert!(error_kinds(&b).iter().all(Option::is_none));

        // One of two servers dies: its keys fail with connection errors, the other's
        // keep working, in the same batches.
        server.kill();
        for _ in 0..3 {
            let mut b = batch(OpKind::Read, "key", 100, b"");
            let started = Instant::now();
            rt.block_on(s.execute(&mut b));
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "a batch with a dead server took {:?}",
                started.elapsed()
            );
            let kinds = error_kinds(&b);
            let failed = kinds.iter().filter(|k| k.is_some()).count();
            assert!(
                kinds
                    .iter()
                    .flatten()
                    .all(|k| *k == StoreErrorKind::Connection),
                "{kinds:?}"
            );
            assert!(
                (10..90).contains(&failed),
                "{protocol}: {failed} of 100 failed"
            );
            for slot in b.slots().iter().filter(|s| s.result.is_ok()) {
                assert_eq!(slot.result, Ok(Outcome::Hit { bytes: 1 }));
            }
            let e = b
                .slots()
                .iter()
                .find_map(|s| s.result.clone().err())
                .unwrap();
            assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
        }

        // Restarted (empty) on the same port: the session reconnects; the restarted
        // server's keys are misses, the other's hits.
        let _server = Process::memcached(port);
        let mut b = batch(OpKind::Read, "key", 100, b"");
        until_ok(&rt, &mut s, &mut b);
        let hits = b
            .slots()
            .iter()
            .filter(|s| s.result == Ok(Outcome::Hit { bytes: 1 }))
            .count();
        let misses = b
            .slots()
            .iter()
            .filter(|s| s.result == Ok(Outcome::Miss))
            .count();
        assert_eq!(hits + misses, 100);
        assert!((10..90).contains(&misses), "{misses} misses");
    }
}

/// A server on a free port that answers every read with `reply(request)`; `None`
/// closes the connection. Serves connections one after another until the test ends.
fn fake_server(reply: fn(&[u8]) -> Option<Vec<u8>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    match reply(&buf[..n]) {
                        Some(out) => {
                            if conn.write_all(&out).is_err() {
                                return;
                            }
                        }
                        None => return,
                    }
                }
            });
        }
    });
    port
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Answers `INFO` as a single plain Redis would, everything else with garbage.
fn redis_garbage(request: &[u8]) -> Option<Vec<u8>> {
    if contains(request, b"INFO") {
        let body = "# Server\r\nredis_version:7.0.0\r\n# Cluster\r\ncluster_enabled:0\r\n";
        return Some(format!("${}\r\n{body}\r\n", body.len()).into_bytes());
    }
    Some(b"%%%garbage\r\n".to_vec())
}

/// Answers `INFO`, then half a reply and a closed connection.
fn redis_truncated(request: &[u8]) -> Option<Vec<u8>> {
    if contains(request, b"INFO") {
        return redis_garbage(request);
    }
    None
}

#[test]
fn garbage_from_a_redis_server_is_a_protocol_error_with_a_message() {
    // Garbage from the first byte: the store does not open.
    let port = fake_server(|_| Some(b"%%%garbage\r\n".to_vec()));
    let e = open_redis(&format!("redis://127.0.0.1:{port}"), &[])
        .err()
        .expect("a garbage-speaking server does not open");
    assert_eq!(e.kind, StoreErrorKind::Protocol, "{e}");
    assert!(!e.message.is_empty());

    // Garbage to requests: every request of the batch fails with a protocol error, and
    // so does the next batch (the session reconnects and gets garbage again).
    let port = fake_server(redis_garbage);
    let store = open_redis(&format!("redis://127.0.0.1:{port}"), &[]).unwrap();
    let rt = runtime();
    let mut s = store.session().unwrap();
    rt.block_on(s.prepare()).unwrap();
    for _ in 0..2 {
        let mut b = batch(OpKind::Read, "k", 8, b"");
        rt.block_on(s.execute(&mut b));
        let kinds = error_kinds(&b);
        assert_eq!(kinds[0], Some(StoreErrorKind::Protocol), "{kinds:?}");
        assert!(kinds.iter().all(Option::is_some), "{kinds:?}");
        let e = b.slots()[0].result.clone().unwrap_err();
        assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
        assert!(e.message.contains("RESP"), "{e}");
        std::thread::sleep(Duration::from_millis(30));
    }

    // A connection closed instead of a reply is a connection error.
    let port = fake_server(redis_truncated);
    let store = open_redis(&format!("redis://127.0.0.1:{port}"), &[]).unwrap();
    let mut s = store.session().unwrap();
    rt.block_on(s.prepare()).unwrap();
    let mut b = batch(OpKind::Insert, "k", 4, b"v");
    rt.block_on(s.execute(&mut b));
    let kinds = error_kinds(&b);
    assert!(
        kinds.iter().all(|k| *k == Some(StoreErrorKind::Connection)),
        "{kinds:?}"
    );
    let e = b.slots()[0].result.clone().unwrap_err();
    assert!(e.message.contains("closed the connection"), "{e}");
}

#[test]
fn garbage_from_a_memcached_server_is_a_protocol_error_with_a_message() {
    fn reply(request: &[u8]) -> Option<Vec<u8>> {
        if request.starts_with(b"version") {
            return Some(b"VERSION 1.6.0\r\n".to_vec());
        }
        Some(b"%%%garbage\r\n".to_vec())
    }
    let port = fake_server(reply);
    let rt = runtime();
    for protocol in ["text", "meta"] {
        let store = open_memcached(&format!("memcached://127.0.0.1:{port}"), protocol).unwrap();
        let mut s = store.session().unwrap();
        rt.block_on(s.prepare()).unwrap();
        for kind in [OpKind::Read, OpKind::Insert] {
            let mut b = batch(kind, "k", 8, b"v");
            rt.block_on(s.execute(&mut b));
            let kinds = error_kinds(&b);
            assert_eq!(
                kinds[0],
                Some(StoreErrorKind::Protocol),
                "{protocol}: {kinds:?}"
            );
            assert!(kinds.iter().all(Option::is_some), "{protocol}: {kinds:?}");
            let e = b.slots()[0].result.clone().unwrap_err();
            assert!(e.message.contains("%%%garbage"), "{e}");
            assert!(e.message.contains(&format!("127.0.0.1:{port}")), "{e}");
            std::thread::sleep(Duration::from_millis(30));
        }
    }
}

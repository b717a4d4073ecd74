//! Real redis-server processes: start, answer, sample, stop, fail.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kvlab_spawn::{cpu_percent, resp, Server, ServerKind, ServerSpec, SpawnError, StopHow};

fn redis(spec: &str) -> ServerSpec {
    ServerSpec::parse(ServerKind::Redis, spec).expect("valid spec")
}

fn assert_gone(pid: u32) {
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "process {pid} still exists"
    );
}

/// Sends an inline command over a raw socket and returns the first reply line.
fn raw_line(server: &Server, command: &str) -> String {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(format!("{command}\r\n").as_bytes())
        .unwrap();
    let mut buf = [0u8; 256];
    let n = stream.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn start_ping_config_sample_stop() {
    let server = Server::start(&redis("maxmemory=64mb,maxmemory-policy=allkeys-lru")).unwrap();
    let pid = server.pid();
    assert_eq!(server.kind(), ServerKind::Redis);
    assert!(
        server.version().starts_with(char::is_numeric),
        "{}",
        server.version()
    );
    assert_eq!(server.url(), format!("redis://127.0.0.1:{}", server.port()));
    assert!(server
        .config()
        .contains(&("maxmemory".to_string(), "64mb".to_string())));
    assert!(server.workdir().join("redis.conf").is_file());

    assert_eq!(raw_line(&server, "PING"), "+PONG\r\n");
    let reply = resp::command(server.addr(), &["CONFIG", "GET", "maxmemory"]).unwrap();
    assert_eq!(reply.as_array().unwrap()[1].as_str(), Some("67108864"));
    let reply = resp::command(server.addr(), &["CONFIG", "GET", "maxmemory-policy"]).unwrap();
    assert_eq!(reply.as_array().unwrap()[1].as_str(), Some("allkeys-lru"));
    let reply = resp::command(server.addr(), &["CONFIG", "GET", "save"]).unwrap();
    assert_eq!(reply.as_array().unwrap()[1].as_str(), Some(""));

    let before = server.sample().unwrap();
    assert_eq!(before.pid, pid);
    assert!(before.rss_bytes > 0, "{before:?}");
    for i in 0..2000 {
        resp::command(server.addr(), &["SET", &format!("k{i}"), "v"]).unwrap();
    }
    let after = server.sample().unwrap();
    assert!(after.cpu_secs() > 0.0, "{after:?}");
    let busy = cpu_percent(&before, &after, after.taken - before.taken);
    assert!((0.0..=400.0).contains(&busy), "{busy}");

    let log_path = server.log_path().to_path_buf();
    assert!(server.log_tail(50).contains("Ready to accept connections"));
    let report = server.stop().unwrap();
    assert_eq!(report.pid, pid);
    assert_eq!(report.how, StopHow::Terminated);
    assert!(report.status.success(), "{:?}", report.status);
    assert!(report.last_sample.unwrap().rss_bytes > 0);
    assert!(report.took < Duration::from_secs(5), "{:?}", report.took);
    assert!(
        report.describe().starts_with("stopped by SIGTERM in "),
        "{}",
        report.describe()
    );
    assert!(report.describe().ends_with(": exited with status 0"));
    assert_gone(pid);
    assert!(!log_path.exists(), "the work directory is deleted");
}

#[test]
fn bogus_directive_fails_with_log_lines() {
    let err = Server::start(&redis("bogus-directive=yes")).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, SpawnError::ExitedDuringStartup { .. }),
        "{text}"
    );
    assert!(
        text.starts_with("redis-server exited with status 1 during start-up; last log lines:\n"),
        "{text}"
    );
    assert!(text.contains("bogus-directive"), "{text}");
}

#[test]
fn settings_pass_through_and_password_readiness() {
    let server = Server::start(&redis(
        "appendonly=yes,io-threads=2,requirepass=secret,save=\"900 1\"",
    ))
    .unwrap();
    let mut conn = resp::Connection::connect(server.addr(), resp::DEFAULT_TIMEOUT).unwrap();
    assert_eq!(
        conn.call(&["AUTH", "secret"]).unwrap(),
        resp::Value::Simple("OK".into())
    );
    let get = |conn: &mut resp::Connection, name: &str| {
        let reply = conn.call(&["CONFIG", "GET", name]).unwrap();
        reply.as_array().unwrap()[1].as_str().unwrap().to_string()
    };
    assert_eq!(get(&mut conn, "appendonly"), "yes");
    assert_eq!(get(&mut conn, "io-threads"), "2");
    assert_eq!(get(&mut conn, "save"), "900 1");
    let pid = server.pid();
    server.stop().unwrap();
    assert_gone(pid);
}

#[test]
fn drop_stops_the_server() {
    let server = Server::start(&redis("")).unwrap();
    let pid = server.pid();
    let workdir = server.workdir().to_path_buf();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(server);
    assert_gone(pid);
    assert!(!workdir.exists());
}

#[test]
fn kill_simulates_a_crash() {
    let mut server = Server::start(&redis("")).unwrap();
    let pid = server.pid();
    assert_eq!(server.try_wait().unwrap(), None);
    server.kill();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "still running");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.signal(), Some(libc_sigkill()));
    assert!(matches!(
        server.sample(),
        Err(SpawnError::ProcessGone { .. })
    ));
    assert!(TcpStream::connect(server.addr()).is_err());
    server.kill(); // reaped: does nothing
    let report = server.stop().unwrap();
    assert_eq!(report.how, StopHow::AlreadyExited);
    assert_eq!(report.status.signal(), Some(libc_sigkill()));
    assert!(report.last_sample.is_none());
    assert_gone(pid);
}

fn libc_sigkill() -> i32 {
    9
}

#[test]
fn stop_with_zero_grace_kills() {
    let server = Server::start(&redis("")).unwrap();
    let pid = server.pid();
    let report = server.stop_with_grace(Duration::ZERO).unwrap();
    assert_eq!(report.how, StopHow::Killed);
    assert_eq!(report.status.signal(), Some(libc_sigkill()));
    assert!(report
        .describe()
        .ends_with("was killed by signal 9 (SIGKILL)"));
    assert_gone(pid);
}

#[test]
fn missing_binary_suggests_the_package() {
    let err = Server::start(&redis("bin=/nonexistent/redis-server")).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SpawnError::BinaryNotFound { .. }), "{text}");
    assert!(text.contains("apt-get install redis-server"), "{text}");
}

#[test]
fn binary_without_a_version_is_refused() {
    let err = Server::start(&redis("bin=/bin/true")).unwrap_err();
    assert!(matches!(err, SpawnError::Version { .. }), "{err}");
}

/// A fake redis-server: answers `--version`, then runs `body`.
fn fake_server(dir: &Path, body: &str) -> ServerSpec {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("redis-server");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Redis server v=9.9.9 sha=0'; exit 0; fi\n{body}\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    redis(&format!("bin={}", path.display()))
}

#[test]
fn start_timeout_kills_and_shows_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = fake_server(dir.path(), "echo 'warming up forever'\nexec sleep 60");
    spec.start_timeout = Duration::from_millis(500);
    let start = Instant::now();
    let err = Server::start(&spec).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SpawnError::StartTimeout { .. }), "{text}");
    assert!(text.contains("warming up forever"), "{text}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn port_in_use_is_retried_three_times() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let spec = fake_server(
        dir.path(),
        &format!(
            "echo x >> {}\necho 'bind: Address already in use'\nexit 1",
            count.display()
        ),
    );
    let err = Server::start(&spec).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, SpawnError::PortsInUse { attempts: 3, .. }),
        "{text}"
    );
    assert!(text.contains("Address already in use"), "{text}");
    assert_eq!(std::fs::read_to_string(count).unwrap().lines().count(), 3);
}

/// Makes a self-signed certificate with the openssl CLI; `None` if it is missing.
fn self_signed(dir: &Path) -> Option<(String, String)> {
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=127.0.0.1", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .ok()?
        .status
        .success();
    ok.then(|| (cert.display().to_string(), key.display().to_string()))
}

#[test]
fn tls_server_is_ready_by_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let Some((cert, key)) = self_signed(dir.path()) else {
        eprintln!("openssl not installed; skipping the TLS test");
        return;
    };
    let spec = redis(&format!(
        "tls=yes,tls-cert-file={cert},tls-key-file={key},tls-ca-cert-file={cert},tls-auth-clients=no"
    ));
    let server = Server::start(&spec).unwrap();
    assert!(server.tls());
    assert_eq!(
        server.url(),
        format!("rediss://127.0.0.1:{}", server.port())
    );
    assert!(server
        .config()
        .contains(&("port".to_string(), "0".to_string())));
    // A plain-text PING gets no +PONG from a TLS port.
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    stream.write_all(b"PING\r\n").unwrap();
    let mut buf = [0u8; 64];
    let n = stream.read(&mut buf).unwrap_or(0);
    assert!(!String::from_utf8_lossy(&buf[..n]).contains("PONG"));
    // redis-cli over TLS does.
    let out = Command::new("redis-cli")
        .args(["--tls", "--cacert", &cert, "-h", "127.0.0.1", "-p"])
        .arg(server.port().to_string())
        .arg("PING")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "PONG",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid = server.pid();
    server.stop().unwrap();
    assert_gone(pid);
}

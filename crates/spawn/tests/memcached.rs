//! Real memcached processes: start, answer, sample, extstore, stop, fail.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use kvlab_spawn::{Server, ServerKind, ServerSpec, SpawnError, StopHow};

fn memcached(spec: &str) -> ServerSpec {
    ServerSpec::parse(ServerKind::Memcached, spec).expect("valid spec")
}

fn assert_gone(pid: u32) {
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "process {pid} still exists"
    );
}

/// Sends text commands and reads reply lines until one equals `end` (or starts with it).
fn exchange(server: &Server, request: &str, end: &str) -> Vec<String> {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut lines = Vec::new();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "closed: {lines:?}"
        );
        let line = line.trim_end().to_string();
        let done = line.starts_with(end);
        lines.push(line);
        if done {
            return lines;
        }
    }
}

fn stat(server: &Server, command: &str, name: &str) -> String {
    let lines = exchange(server, &format!("{command}\r\n"), "END");
    let prefix = format!("STAT {name} ");
    lines
        .iter()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {name} in {lines:?}"))
        .to_string()
}

#[test]
fn start_answer_sample_stop() {
    let server = Server::start(&memcached("m=32,t=2")).unwrap();
    let pid = server.pid();
    assert_eq!(
        server.url(),
        format!("memcached://127.0.0.1:{}", server.port())
    );
    assert!(server.version().starts_with("1."), "{}", server.version());
    assert_eq!(
        exchange(&server, "version\r\n", "VERSION"),
        [format!("VERSION {}", server.version())]
    );
    assert_eq!(
        exchange(&server, "set k 0 0 5\r\nhello\r\nget k\r\n", "END"),
        ["STORED", "VALUE k 0 5", "hello", "END"]
    );
    assert_eq!(
        stat(&server, "stats settings", "maxbytes"),
        (32 << 20).to_string()
    );
    assert_eq!(stat(&server, "stats settings", "num_threads"), "2");
    assert_eq!(stat(&server, "stats settings", "udpport"), "0");
    assert_eq!(stat(&server, "stats", "pid"), pid.to_string());
    let settings = server.config();
    assert!(settings.contains(&("m".to_string(), "32".to_string())));
    assert!(settings.contains(&("t".to_string(), "2".to_string())));

    let sample = server.sample().unwrap();
    assert!(sample.rss_bytes > 0, "{sample:?}");
    assert!(sample.threads >= 2, "{sample:?}");

    let report = server.stop().unwrap();
    assert_eq!(report.how, StopHow::Terminated);
    assert_gone(pid);
}

#[test]
fn extstore_with_an_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not/yet/there/extstore");
    let server = Server::start(&memcached(&format!(
        "m=64,ext_path={}:64m,ext_wbuf_size=4",
        file.display()
    )))
    .unwrap();
    assert!(file.is_file(), "memcached created {}", file.display());
    assert_eq!(
        stat(&server, "stats settings", "ext_wbuf_size"),
        (4 << 20).to_string()
    );
    assert!(exchange(&server, "stats\r\n", "END")
        .iter()
        .any(|l| l.starts_with("STAT extstore_")));
    let pid = server.pid();
    server.stop().unwrap();
    assert_gone(pid);
}

#[test]
fn extstore_with_a_relative_path_lives_in_the_workdir() {
    let server = Server::start(&memcached("ext_path=ext/store:64m")).unwrap();
    let file = server.workdir().join("ext/store");
    assert!(file.is_file());
    drop(server);
    assert!(!file.exists());
}

#[test]
fn bad_option_fails_with_log_lines() {
    let err = Server::start(&memcached("bogus_option=1")).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, SpawnError::ExitedDuringStartup { .. }),
        "{text}"
    );
    assert!(text.starts_with("memcached exited with status"), "{text}");
    assert!(text.contains("bogus_option"), "{text}");
}

#[test]
fn missing_binary_suggests_the_package() {
    let err = Server::start(&memcached("bin=/nonexistent/memcached")).unwrap_err();
    assert!(
        err.to_string().contains("apt-get install memcached"),
        "{err}"
    );
}

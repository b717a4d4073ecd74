//! Redis MONITOR output from the real thing: a `redis-server` on a free loopback port,
//! `redis-cli monitor` writing to a file, and commands sent over RESP (binary keys and
//! values included), then read back with the monitor reader. Redis's own quoting
//! (`sdscatrepr`) is the authority for the escapes.
//!
//! Needs `redis-server` and `redis-cli` (`apt-get install -y redis-server redis-tools`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kvlab_trace::{open, Format, Op, OpenOptions, TraceRecord};

use crate::common::records;

/// Children killed (by their own PID) when the test ends, even by a panic.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends one command as RESP and reads its one-line (or bulk) reply.
fn command(conn: &mut BufReader<TcpStream>, args: &[&[u8]]) {
    let mut req = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        req.extend_from_slice(a);
        req.extend_from_slice(b"\r\n");
    }
    conn.get_mut().write_all(&req).unwrap();
    // Replies: +OK, :n, $n + data, *n + n bulks, -ERR.
    let mut line = String::new();
    conn.read_line(&mut line).unwrap();
    let mut pending: i64 = match line.as_bytes()[0] {
        b'*' => line[1..].trim().parse().unwrap(),
        b'$' => {
            let n: i64 = line[1..].trim().parse().unwrap();
            if n >= 0 {
                let mut buf = vec![0; n as usize + 2];
                conn.read_exact(&mut buf).unwrap();
            }
            0
        }
        b'-' => panic!(
            "redis refused {:?}: {line}",
            String::from_utf8_lossy(args[0])
        ),
        _ => 0,
    };
    while pending > 0 {
        line.clear();
        conn.read_line(&mut line).unwrap();
        let n: i64 = line[1..].trim().parse().unwrap();
        if n >= 0 {
            let mut buf = vec![0; n as usize + 2];
            conn.read_exact(&mut buf).unwrap();
        }
        pending -= 1;
    }
}

#[test]
fn redis_monitor_output_reads_as_the_commands_sent() {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let server = Killed(
        Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (apt-get install -y redis-server)"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let stream = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("redis-server did not start: {e}"),
        }
    };
    let out_path = dir.path().join("monitor.txt");
    let monitor = Killed(
        Command::new("redis-cli")
            .args(["-p", &port.to_string(), "monitor"])
            .stdout(std::fs::File::create(&out_path).unwrap())
            .spawn()
            .expect("redis-cli"),
    );
    // redis-cli prints OK once MONITOR is on.
    while std::fs::read(&out_path).unwrap_or_default().len() < 3 {
        assert!(Instant::now() < deadline, "redis-cli monitor did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut conn = BufReader::new(stream);
    let c = &mut conn;
    command(c, &[b"SELECT", b"3"]);
    command(c, &[b"SET", b"user:1", b"hello"]);
    command(c, &[b"SET", b"k2", b"v\"al\n\0ue\\", b"EX", b"100"]);
    command(c, &[b"SET", b"k3", b"abc", b"PX", b"1500"]);
    command(c, &[b"SETEX", b"k4", b"30", b"xyz"]);
    command(c, &[b"GET", b"user:1"]);
    command(c, &[b"MGET", b"user:1", b"k2", b"k3"]);
    command(c, &[b"DEL", b"k3", b"k4"]);
    command(c, &[b"MSET", b"a", b"1", b"b", b"22"]);
    command(c, &[b"INCR", b"counter"]);
    command(c, &[b"HSET", b"h", b"f", b"v"]);
    command(c, &[b"GET", b"\xff\x01 key\t"]);
    command(c, &[b"PING"]);
    // MONITOR lines reach redis-cli asynchronously: wait for the last one.
    while !String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).contains("\"PING\"") {
        assert!(
            Instant::now() < deadline,
            "the monitor output did not arrive"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(monitor);
    drop(server);

    let mut r = open(&out_path, &OpenOptions::default()).expect("opening the monitor output");
    assert_eq!(
        r.info().format,
        Format::Monitor.name(),
        "detected from the content"
    );
    let recs = records(&mut r);
    let got: Vec<(Op, Vec<u8>, u64, u32, u32, u32)> = recs
        .iter()
        .map(|r: &TraceRecord| {
            (
                r.op,
                r.key.clone(),
                r.value_size,
                r.ttl_s,
                r.batch_len,
                r.batch_pos,
            )
        })
        .collect();
    let k = |s: &[u8]| s.to_vec();
    let want = vec![
        (Op::Other, k(b"3"), 0, 0, 1, 0), // SELECT 3: its argument is its "key"
        (Op::Set, k(b"user:1"), 5, 0, 1, 0),
        (Op::Set, k(b"k2"), 9, 100, 1, 0),
        (Op::Set, k(b"k3"), 3, 2, 1, 0),
        (Op::Set, k(b"k4"), 3, 30, 1, 0),
        (Op::Get, k(b"user:1"), 0, 0, 1, 0),
        (Op::Get, k(b"user:1"), 0, 0, 3, 0),
        (Op::Get, k(b"k2"), 0, 0, 3, 1),
        (Op::Get, k(b"k3"), 0, 0, 3, 2),
        (Op::Delete, k(b"k3"), 0, 0, 2, 0),
        (Op::Delete, k(b"k4"), 0, 0, 2, 1),
        (Op::Set, k(b"a"), 1, 0, 2, 0),
        (Op::Set, k(b"b"), 2, 0, 2, 1),
        (Op::Incr, k(b"counter"), 0, 0, 1, 0),
        (Op::Other, k(b"h"), 0, 0, 1, 0),
        (Op::Get, k(b"\xff\x01 key\t"), 0, 0, 1, 0),
        (Op::Other, k(b""), 0, 0, 1, 0),
    ];
    assert_eq!(got, want);
    // Redis feeds MONITOR after running a command, so even SELECT shows database 3.
    assert!(recs.iter().all(|r| r.cf == 3));
    // Timestamps: µs of today.
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64;
    assert!(recs
        .iter()
        .all(|r| r.ts <= now_us && r.ts + 60_000_000 > now_us));
}

#[test]
fn a_bad_monitor_line_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.txt");
    std::fs::write(
        &p,
        "OK\n1700000000.000001 [0 127.0.0.1:1] \"GET\" \"a\"\n1700000000.2 [0 x] \"GET \"b\n",
    )
    .unwrap();
    let mut r = open(
        &p,
        &OpenOptions {
            format: Some(Format::Monitor),
            csv: None,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let mut rec = TraceRecord::default();
    assert!(r.read(&mut rec).unwrap());
    assert_eq!(
        (rec.ts, rec.key.as_slice()),
        (1_700_000_000_000_001, &b"a"[..])
    );
    match r.read(&mut rec) {
        Err(kvlab_trace::TraceError::BadLine { line, path, .. }) => {
            assert_eq!(line, 3);
            assert_eq!(path, p);
        }
        other => panic!("expected a bad line, got {other:?}"),
    }
}

//! The servers kvlab runs against: redis-server and memcached started by kvlab's own
//! spawner on free loopback ports (stopped by PID when the `Server` drops), and what
//! they say over connections of the test's own — RESP replies, `INFO` counters and
//! memcached's `stats`.

use std::io::{BufRead, BufReader, Write};

use kvlab_spawn::{Server, ServerKind, ServerSpec};

/// A server of `kind` with `spec`'s settings (`key=value,…`) on a free loopback port
/// (stopped on drop).
pub fn start(kind: ServerKind, spec: &str) -> Server {
    Server::start(&ServerSpec::parse(kind, spec).unwrap()).unwrap()
}

/// A redis-server with `spec`'s settings on a free loopback port (stopped on drop).
pub fn redis(spec: &str) -> Server {
    start(ServerKind::Redis, spec)
}

/// Sends one command to `server` and returns its reply.
pub fn call(server: &Server, args: &[&str]) -> kvlab_spawn::resp::Value {
    kvlab_spawn::resp::command(server.addr(), args).unwrap()
}

/// The text of `INFO section` (`stats`, `commandstats`, `all`, …) at `addr`.
pub fn info_at(addr: std::net::SocketAddr, section: &str) -> String {
    kvlab_spawn::resp::command(addr, &["INFO", section])
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

/// The text of the server's `INFO section`.
pub fn info(server: &Server, section: &str) -> String {
    info_at(server.addr(), section)
}

/// Counter `name` of an `INFO` text (`name:value`; for a `cmdstat_*` line its
/// `calls=`), or `None` when the text has no such line.
pub fn info_stat(info: &str, name: &str) -> Option<u64> {
    let prefix = format!("{name}:");
    info.lines()
        .find_map(|l| l.trim().strip_prefix(&prefix))
        .and_then(|v| v.split(',').next())
        .map(|v| v.trim().trim_start_matches("calls=").parse().unwrap())
}

/// `calls` of `cmdstat_NAME` in the server's `INFO commandstats` (0 when absent).
pub fn calls(server: &Server, name: &str) -> u64 {
    info_stat(&info(server, "commandstats"), &format!("cmdstat_{name}")).unwrap_or(0)
}

/// A memcached text command's reply (`command` with its `\r\n`) over a connection of
/// its own, read up to its `END`, `STORED` or `DELETED` line.
pub fn memcached_reply(server: &Server, command: &str) -> String {
    let mut c = std::net::TcpStream::connect(server.addr()).unwrap();
    c.write_all(command.as_bytes()).unwrap();
    let mut r = BufReader::new(c);
    let mut text = String::new();
    while !["END\r\n", "STORED\r\n", "DELETED\r\n"]
        .iter()
        .any(|end| text.ends_with(end))
    {
        assert!(r.read_line(&mut text).unwrap() > 0, "{text}");
    }
    text
}

/// memcached's `stats` counter `name`, over a connection of its own (the server must
/// listen on TCP).
pub fn memcached_stat(server: &Server, name: &str) -> u64 {
    let mut c = std::net::TcpStream::connect(server.addr()).unwrap();
    c.write_all(b"stats\r\n").unwrap();
    let prefix = format!("STAT {name} ");
    for line in BufReader::new(c).lines() {
        let line = line.unwrap();
        if let Some(v) = line.strip_prefix(&prefix) {
            return v.trim().parse().unwrap();
        }
        assert_ne!(line, "END", "no {name}");
    }
    unreachable!("memcached closed the connection")
}

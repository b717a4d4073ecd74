//! A network store's statistics, read from its server over a connection of their own:
//! Redis `INFO all` and `DBSIZE`, memcached `stats`. For `store.csv` of a run against a
//! server kvlab started or one given by URL.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use kvlab_spawn::{resp, ServerKind};

use crate::StoreStatsFn;

/// The Redis statistics sampled, in `store.csv`'s column order: fields of `INFO all`,
/// then `keys` (`DBSIZE` of the selected database). The one list is kvlab-proto's.
pub const REDIS_STATS: &[&str] = kvlab_proto::stats::REDIS_SAMPLED_FIELDS;

/// The memcached statistics sampled (fields of `stats`), in `store.csv`'s column order.
/// The `extstore_*` and `get_extstore` fields exist only with extstore. The one list is
/// kvlab-proto's.
pub const MEMCACHED_STATS: &[&str] = kvlab_proto::stats::MEMCACHED_SAMPLED_FIELDS;

/// How long a sample waits to connect, and then for each read or write.
const TIMEOUT: Duration = Duration::from_secs(1);

/// Samples the statistics of one or more servers of one kind (a URL's servers), each over
/// a connection of its own that is opened at the first sample and again after a failure.
///
/// Every sample has every column of [`REDIS_STATS`] or [`MEMCACHED_STATS`]; a value is
/// summed over the servers that answered, and `NaN` (an empty cell) when none did.
///
/// ```no_run
/// use kvlab_monitor::{MonitorConfig, ServerStats};
/// use kvlab_spawn::ServerKind;
///
/// let stats = ServerStats::new(ServerKind::Redis, vec!["127.0.0.1:6379".parse().unwrap()]);
/// let mut config = MonitorConfig::new("results/run-1");
/// config.store_stats = Some(stats.into_fn());
/// ```
pub struct ServerStats {
    kind: ServerKind,
    servers: Vec<Link>,
    user: Option<String>,
    password: Option<String>,
    db: Option<u32>,
}

/// One server and its connection, if open.
struct Link {
    addr: Target,
    conn: Option<Conn>,
}

/// Where a server listens.
#[derive(Clone, Debug)]
enum Target {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// A blocking byte stream: TCP or a UNIX domain socket.
trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

enum Conn {
    Redis(resp::Connection),
    Memcached(Box<dyn Stream>),
}

impl ServerStats {
    /// Statistics of the servers at `addrs` (at least one), without authentication.
    pub fn new(kind: ServerKind, addrs: Vec<SocketAddr>) -> ServerStats {
        ServerStats {
            kind,
            servers: addrs
                .into_iter()
                .map(|addr| Link {
                    addr: Target::Tcp(addr),
                    conn: None,
                })
                .collect(),
            user: None,
            password: None,
            db: None,
        }
    }

    /// Statistics of the server on the UNIX domain socket at `path`, without
    /// authentication. memcached is asked over the text protocol (a binary-only server,
    /// `-B binary`, gives no sample).
    pub fn unix(kind: ServerKind, path: PathBuf) -> ServerStats {
        ServerStats {
            kind,
            servers: vec![Link {
                addr: Target::Unix(path),
                conn: None,
            }],
            user: None,
            password: None,
            db: None,
        }
    }

    /// Redis: authenticates each connection (`AUTH [user] password`) first.
    pub fn with_auth(mut self, user: Option<String>, password: String) -> ServerStats {
        self.user = user;
        self.password = Some(password);
        self
    }

    /// Redis: counts the keys of database `db` (`SELECT db`) instead of database 0.
    pub fn with_db(mut self, db: Option<u32>) -> ServerStats {
        self.db = db;
        self
    }

    /// The column names every sample returns, in order.
    pub fn columns(&self) -> &'static [&'static str] {
        match self.kind {
            ServerKind::Redis => REDIS_STATS,
            ServerKind::Memcached => MEMCACHED_STATS,
        }
    }

    /// One sample: every column, summed over the servers that answered.
    pub fn sample(&mut self) -> Vec<(String, f64)> {
        let columns = self.columns();
        let mut sums = vec![f64::NAN; columns.len()];
        for i in 0..self.servers.len() {
            let Some(values) = self.sample_server(i) else {
                // Reconnect at the next sample.
                self.servers[i].conn = None;
                continue;
            };
            for (sum, name) in sums.iter_mut().zip(columns) {
                if let Some(v) = values.get(*name).and_then(|v| v.parse::<f64>().ok()) {
                    *sum = if sum.is_nan() { v } else { *sum + v };
                }
            }
        }
        columns.iter().map(|n| n.to_string()).zip(sums).collect()
    }

    /// The monitor's callback: [`ServerStats::sample`] on the monitor's thread.
    pub fn into_fn(mut self) -> StoreStatsFn {
        Box::new(move || self.sample())
    }

    /// The statistics of server `i` as text, `None` if it could not be read.
    fn sample_server(&mut self, i: usize) -> Option<HashMap<String, String>> {
        if self.servers[i].conn.is_none() {
            let conn = self.connect(&self.servers[i].addr)?;
            self.servers[i].conn = Some(conn);
        }
        match self.servers[i].conn.as_mut()? {
            Conn::Redis(c) => {
                let info = match c.call(&["INFO", "all"]).ok()? {
                    resp::Value::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
                    _ => return None,
                };
                let mut out: HashMap<String, String> = kvlab_proto::stats::info_fields(&info)
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                if let resp::Value::Integer(n) = c.call(&["DBSIZE"]).ok()? {
                    out.insert("keys".into(), n.to_string());
                }
                Some(out)
            }
            Conn::Memcached(stream) => memcached_stats(stream),
        }
    }

    fn connect(&self, addr: &Target) -> Option<Conn> {
        match self.kind {
            ServerKind::Redis => {
                let mut c = match addr {
                    Target::Tcp(addr) => resp::Connection::connect(*addr, TIMEOUT).ok()?,
                    Target::Unix(path) => resp::Connection::connect_unix(path, TIMEOUT).ok()?,
                };
                if let Some(password) = &self.password {
                    let mut args = vec!["AUTH"];
                    args.extend(self.user.as_deref());
                    args.push(password);
                    if !matches!(c.call(&args).ok()?, resp::Value::Simple(_)) {
                        return None;
                    }
                }
                if let Some(db) = self.db {
                    if !matches!(
                        c.call(&["SELECT", &db.to_string()]).ok()?,
                        resp::Value::Simple(_)
                    ) {
                        return None;
                    }
                }
                Some(Conn::Redis(c))
            }
            ServerKind::Memcached => {
                let stream: Box<dyn Stream> = match addr {
                    Target::Tcp(addr) => {
                        let s = TcpStream::connect_timeout(addr, TIMEOUT).ok()?;
                        s.set_read_timeout(Some(TIMEOUT)).ok()?;
                        s.set_write_timeout(Some(TIMEOUT)).ok()?;
                        Box::new(s)
                    }
                    Target::Unix(path) => {
                        let s = UnixStream::connect(path).ok()?;
                        s.set_read_timeout(Some(TIMEOUT)).ok()?;
                        s.set_write_timeout(Some(TIMEOUT)).ok()?;
                        Box::new(s)
                    }
                };
                Some(Conn::Memcached(stream))
            }
        }
    }
}

impl std::fmt::Debug for ServerStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerStats")
            .field("kind", &self.kind)
            .field(
                "servers",
                &self.servers.iter().map(|l| &l.addr).collect::<Vec<_>>(),
            )
            .field("db", &self.db)
            .finish_non_exhaustive()
    }
}

/// memcached's `stats` on an open connection, as name-value pairs, read with kvlab's
/// text-protocol parser; `None` for anything but `STAT` lines and `END`.
fn memcached_stats(stream: &mut Box<dyn Stream>) -> Option<HashMap<String, String>> {
    use kvlab_proto::memcache::{self, Reply};
    let mut request = Vec::new();
    memcache::stats(&mut request, None);
    stream.write_all(&request).ok()?;
    let mut out = HashMap::new();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let mut pos = 0;
        while let Some((reply, used)) = memcache::parse(&buf[pos..]).ok()? {
            pos += used;
            match reply {
                Reply::Stat { name, value } => {
                    out.insert(
                        String::from_utf8_lossy(name).into_owned(),
                        String::from_utf8_lossy(value).trim().to_string(),
                    );
                }
                Reply::End => return Some(out),
                // ERROR, SERVER_ERROR …: not a stats reply.
                _ => return None,
            }
        }
        buf.drain(..pos);
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_server_gives_every_column_empty() {
        // A port nothing listens on: bind, note the address, close.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        for kind in [ServerKind::Redis, ServerKind::Memcached] {
            let mut s = ServerStats::new(kind, vec![addr]);
            let row = s.sample();
            let names: Vec<&str> = row.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, s.columns());
            assert!(row.iter().all(|(_, v)| v.is_nan()), "{row:?}");
        }
    }
}

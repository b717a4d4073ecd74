//! Server URLs: `redis://[user:password@]host:port[/db]`, `rediss://…` (TLS),
//! `memcached://host:port[,host:port…]`, and UNIX domain sockets:
//! `redis+unix:///path/to/socket[?db=N&user=U&pass=P]` (also `unix:///…`, as redis-rs
//! spells it) and `memcached+unix:///path/to/socket`.

use std::path::PathBuf;

use kvlab_core::{StoreError, StoreErrorKind};

use crate::conn::Addr;

/// A parsed server URL. Its `Display` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// `redis`, `rediss`, `redis+unix`, `unix`, `memcached` or `memcached+unix`.
    pub scheme: String,
    /// ACL user name, if any.
    pub user: Option<String>,
    /// Password, if any.
    pub password: Option<String>,
    /// Servers as `(host, port)`: at least one, or none with a [`ServerUrl::socket`].
    pub hosts: Vec<(String, u16)>,
    /// The UNIX domain socket of a `…+unix://` URL (then `hosts` is empty).
    pub socket: Option<PathBuf>,
    /// Redis database number from the path (`/3`) or, for a socket, the `db` parameter.
    pub db: Option<u32>,
}

/// Which addresses a host name may resolve to (memtier's `-4`/`-6`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AddressFamily {
    /// The first address the resolver returns.
    #[default]
    Any,
    /// IPv4 addresses only.
    Ipv4,
    /// IPv6 addresses only.
    Ipv6,
}

impl AddressFamily {
    /// The option values: `any`, `ipv4`, `ipv6`.
    pub const NAMES: &'static [&'static str] = &["any", "ipv4", "ipv6"];

    /// Parses one of [`AddressFamily::NAMES`].
    pub fn parse(name: &str) -> Option<AddressFamily> {
        match name {
            "any" => Some(AddressFamily::Any),
            "ipv4" => Some(AddressFamily::Ipv4),
            "ipv6" => Some(AddressFamily::Ipv6),
            _ => None,
        }
    }

    /// The option value.
    pub fn name(self) -> &'static str {
        match self {
            AddressFamily::Any => "any",
            AddressFamily::Ipv4 => "ipv4",
            AddressFamily::Ipv6 => "ipv6",
        }
    }

    fn admits(self, addr: &std::net::SocketAddr) -> bool {
        match self {
            AddressFamily::Any => true,
            AddressFamily::Ipv4 => addr.is_ipv4(),
            AddressFamily::Ipv6 => addr.is_ipv6(),
        }
    }
}

/// Resolves `host:port` to its first address of `family`.
pub(crate) fn resolve_host(
    host: &str,
    port: u16,
    family: AddressFamily,
) -> Result<std::net::SocketAddr, StoreError> {
    use std::net::ToSocketAddrs;
    let found = (host, port)
        .to_socket_addrs()
        .map_err(|e| {
            StoreError::new(
                StoreErrorKind::Connection,
                format!("cannot resolve host `{host}`: {e}"),
            )
        })?
        .find(|a| family.admits(a));
    found.ok_or_else(|| {
        let only = match family {
            AddressFamily::Any => String::new(),
            f => format!(
                " to an {} address",
                if f == AddressFamily::Ipv4 {
                    "IPv4"
                } else {
                    "IPv6"
                }
            ),
        };
        StoreError::new(
            StoreErrorKind::Connection,
            format!("cannot resolve host `{host}`{only}"),
        )
    })
}

impl std::fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://", self.scheme)?;
        if let Some(path) = &self.socket {
            write!(f, "{}", path.display())?;
            let mut sep = '?';
            let mut param = |f: &mut std::fmt::Formatter<'_>, text: String| {
                let r = write!(f, "{sep}{text}");
                sep = '&';
                r
            };
            if let Some(db) = self.db {
                param(f, format!("db={db}"))?;
            }
            if let Some(u) = &self.user {
                param(f, format!("user={u}"))?;
            }
            if self.password.is_some() {
                param(f, "pass=***".to_string())?;
            }
            return Ok(());
        }
        match (&self.user, &self.password) {
            (Some(u), Some(_)) => write!(f, "{u}:***@")?,
            (None, Some(_)) => write!(f, ":***@")?,
            (Some(u), None) => write!(f, "{u}@")?,
            (None, None) => {}
        }
        for (i, (h, p)) in self.hosts.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if h.contains(':') {
                write!(f, "[{h}]:{p}")?;
            } else {
                write!(f, "{h}:{p}")?;
            }
        }
        if let Some(db) = self.db {
            write!(f, "/{db}")?;
        }
        Ok(())
    }
}

fn bad(url: &str, why: impl std::fmt::Display) -> StoreError {
    // Never echo a password: show the URL with its credentials cut out.
    let shown = match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => format!("{}***{}", &url[..s + 3], &url[at..]),
        // A socket URL's `pass=` parameter, and all that follows it.
        _ => match url
            .find('?')
            .and_then(|q| url[q..].find("pass").map(|i| q + i))
        {
            Some(i) => format!("{}***", &url[..i]),
            None => url.to_string(),
        },
    };
    StoreError::new(StoreErrorKind::Config, format!("URL `{shown}`: {why}"))
}

fn percent_decode(url: &str, s: &str) -> Result<String, StoreError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| {
                    bad(
                        url,
                        "a `%` in the credentials or parameters is not followed by two hex \
                         digits",
                    )
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(url, "credentials or parameters are not UTF-8"))
}

/// Whether `scheme` names a UNIX domain socket URL (`…+unix`, or redis-rs's `unix`).
fn is_unix_scheme(scheme: &str) -> bool {
    scheme == "unix" || scheme.ends_with("+unix")
}

impl ServerUrl {
    /// Parses `url`; `default_port` applies to hosts given without one. Schemes other
    /// than those in `schemes` are errors.
    pub fn parse(url: &str, schemes: &[&str], default_port: u16) -> Result<ServerUrl, StoreError> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad(url, format!("expected {}://HOST:PORT", schemes[0])))?;
        if !schemes.contains(&scheme) {
            return Err(bad(
                url,
                format!("scheme `{scheme}` is not one of {}", schemes.join(", ")),
            ));
        }
        if is_unix_scheme(scheme) {
            return ServerUrl::parse_unix(url, scheme, rest);
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let (creds, hosts) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        let (user, password) = match creds {
            None => (None, None),
            Some(c) => match c.split_once(':') {
                Some((u, p)) => (
                    (!u.is_empty())
                        .then(|| percent_decode(url, u))
                        .transpose()?,
                    Some(percent_decode(url, p)?),
                ),
                // `redis://secret@host`: a lone credential is the password, as redis-cli.
                None => (None, Some(percent_decode(url, c)?)),
            },
        };
        let mut parsed = Vec::new();
        for h in hosts.split(',') {
            let h = h.trim();
            if h.is_empty() {
                return Err(bad(url, "empty host"));
            }
            let (host, port) = if let Some(rest) = h.strip_prefix('[') {
                let (host, after) = rest
                    .split_once(']')
                    .ok_or_else(|| bad(url, "unclosed `[` in an IPv6 host"))?;
                let port = match after {
                    "" => None,
                    _ => Some(after.strip_prefix(':').ok_or_else(|| {
                        bad(url, format!("`{after}` after `[{host}]`: expected `:PORT`"))
                    })?),
                };
                (host, port)
            } else {
                match h.rsplit_once(':') {
                    Some((host, port)) => (host, Some(port)),
                    None => (h, None),
                }
            };
            if host.is_empty() {
                return Err(bad(url, format!("empty host in `{h}`")));
            }
            if host.contains(|c: char| c.is_whitespace() || c.is_control() || "[]".contains(c)) {
                return Err(bad(
                    url,
                    format!("host `{host}` holds a space, a control character or a bracket"),
                ));
            }
            let port =
                match port {
                    None => default_port,
                    Some(p) => p.parse().ok().filter(|&n: &u16| n > 0).ok_or_else(|| {
                        bad(url, format!("port `{p}` is not a number in 1..65535"))
                    })?,
                };
            parsed.push((host.to_string(), port));
        }
        let db = match path.trim_end_matches('/') {
            "" => None,
            p => Some(
                p.parse()
                    .map_err(|_| bad(url, format!("database `{p}` is not a number")))?,
            ),
        };
        Ok(ServerUrl {
            scheme: scheme.to_string(),
            user,
            password,
            hosts: parsed,
            socket: None,
            db,
        })
    }

    /// `SCHEME:///absolute/path[?db=N&user=U&pass=P]`: the part after `://` is `rest`.
    fn parse_unix(url: &str, scheme: &str, rest: &str) -> Result<ServerUrl, StoreError> {
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, q),
            None => (rest, ""),
        };
        if !path.starts_with('/') || path.len() < 2 {
            return Err(bad(
                url,
                format!(
                    "expected {scheme}:///PATH/TO/SOCKET (an absolute path after the three \
                     slashes)"
                ),
            ));
        }
        let redis = !scheme.starts_with("memcached");
        let mut parsed = ServerUrl {
            scheme: scheme.to_string(),
            user: None,
            password: None,
            hosts: Vec::new(),
            socket: Some(PathBuf::from(path)),
            db: None,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            match name {
                "db" if redis => {
                    parsed.db = Some(
                        value
                            .parse()
                            .map_err(|_| bad(url, format!("database `{value}` is not a number")))?,
                    )
                }
                "user" if redis => parsed.user = Some(percent_decode(url, value)?),
                "pass" | "password" if redis => parsed.password = Some(percent_decode(url, value)?),
                _ if redis => {
                    return Err(bad(
                        url,
                        format!("unknown parameter `{name}`: expected db, user or pass"),
                    ))
                }
                _ => return Err(bad(url, format!("unknown parameter `{name}`"))),
            }
        }
        Ok(parsed)
    }

    /// Whether the URL names a UNIX domain socket.
    pub fn is_unix(&self) -> bool {
        self.socket.is_some()
    }

    /// How many servers the URL names (a socket is one).
    pub fn server_count(&self) -> usize {
        if self.socket.is_some() {
            1
        } else {
            self.hosts.len()
        }
    }

    /// Server `i` for messages: `host:port`, or the socket path.
    pub fn server_name(&self, i: usize) -> String {
        match &self.socket {
            Some(path) => path.display().to_string(),
            None => self.host_port(i),
        }
    }

    /// Server `i`'s address: its socket, or its host resolved within `family`.
    pub(crate) fn addr(&self, i: usize, family: AddressFamily) -> Result<Addr, StoreError> {
        match &self.socket {
            Some(path) => Ok(Addr::Unix(path.clone())),
            None => {
                let (h, p) = &self.hosts[i];
                resolve_host(h, *p, family).map(Addr::Tcp)
            }
        }
    }

    /// `host:port` of server `i`, for messages and connecting.
    pub fn host_port(&self, i: usize) -> String {
        let (h, p) = &self.hosts[i];
        if h.contains(':') {
            format!("[{h}]:{p}")
        } else {
            format!("{h}:{p}")
        }
    }

    /// Resolves server `i` to a socket address (an error for a UNIX socket URL).
    pub fn resolve(&self, i: usize) -> Result<std::net::SocketAddr, StoreError> {
        match self.hosts.get(i) {
            Some((h, p)) => resolve_host(h, *p, AddressFamily::Any),
            None => Err(StoreError::new(
                StoreErrorKind::Connection,
                format!("{self} has no TCP address"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_credentials_hosts_and_db_and_hides_the_password() {
        let u =
            ServerUrl::parse("redis://alice:s%40cret@127.0.0.1:6380/2", &["redis"], 6379).unwrap();
        assert_eq!(u.user.as_deref(), Some("alice"));
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.hosts, vec![("127.0.0.1".to_string(), 6380)]);
        assert_eq!(u.db, Some(2));
        assert_eq!(u.to_string(), "redis://alice:***@127.0.0.1:6380/2");
        let u = ServerUrl::parse("redis://pw@h", &["redis"], 6379).unwrap();
        assert_eq!((u.user, u.password.as_deref()), (None, Some("pw")));
        let u = ServerUrl::parse("memcached://a:1,b:2,[::1]:3,c", &["memcached"], 11211).unwrap();
        assert_eq!(u.hosts.len(), 4);
        assert_eq!(u.hosts[3], ("c".to_string(), 11211));
        assert_eq!(u.host_port(2), "[::1]:3");
    }

    #[test]
    fn unix_socket_urls_take_a_path_and_redis_parameters() {
        let schemes = ["redis", "rediss", "redis+unix", "unix"];
        let u = ServerUrl::parse(
            "redis+unix:///tmp/r.sock?db=3&user=al&pass=p%40ss",
            &schemes,
            6379,
        )
        .unwrap();
        assert_eq!(
            u.socket.as_deref(),
            Some(std::path::Path::new("/tmp/r.sock"))
        );
        assert!(u.hosts.is_empty());
        assert_eq!((u.db, u.user.as_deref()), (Some(3), Some("al")));
        assert_eq!(u.password.as_deref(), Some("p@ss"));
        assert_eq!(
            u.to_string(),
            "redis+unix:///tmp/r.sock?db=3&user=al&pass=***"
        );
        assert_eq!(u.server_count(), 1);
        assert_eq!(u.server_name(0), "/tmp/r.sock");
        let u = ServerUrl::parse("unix:///run/redis.sock", &schemes, 6379).unwrap();
        assert_eq!(u.to_string(), "unix:///run/redis.sock");
        let u = ServerUrl::parse(
            "memcached+unix:///tmp/m.sock",
            &["memcached", "memcached+unix"],
            11211,
        )
        .unwrap();
        assert_eq!(
            u.addr(0, AddressFamily::Any).unwrap(),
            Addr::Unix("/tmp/m.sock".into())
        );
        for (url, want) in [
            ("redis+unix://tmp/r.sock", "absolute path"),
            ("redis+unix:///tmp/r.sock?db=x", "database `x`"),
            (
                "redis+unix:///tmp/r.sock?timeout=1&pass=secret",
                "unknown parameter `timeout`",
            ),
        ] {
            let e = ServerUrl::parse(url, &schemes, 6379).unwrap_err();
            assert!(e.message.contains(want), "{url}: {e}");
            assert!(!e.message.contains("secret"), "{url}: {e}");
        }
        let e =
            ServerUrl::parse("memcached+unix:///m.sock?db=1", &["memcached+unix"], 1).unwrap_err();
        assert!(e.message.contains("unknown parameter `db`"), "{e}");
    }

    #[test]
    fn an_address_family_filters_what_a_name_resolves_to() {
        let v4 = resolve_host("127.0.0.1", 1, AddressFamily::Ipv4).unwrap();
        assert!(v4.is_ipv4());
        let e = resolve_host("127.0.0.1", 1, AddressFamily::Ipv6).unwrap_err();
        assert!(e.message.contains("to an IPv6 address"), "{e}");
        assert!(resolve_host("::1", 1, AddressFamily::Ipv6)
            .unwrap()
            .is_ipv6());
    }

    #[test]
    fn errors_name_the_problem_and_never_the_password() {
        for (url, want) in [
            ("127.0.0.1:6379", "expected redis://"),
            ("http://h:1", "scheme `http`"),
            ("redis://h:notaport", "port `notaport`"),
            ("redis://h:1/x", "database `x`"),
            ("redis://u:secret@h:99999", "port `99999`"),
        ] {
            let e = ServerUrl::parse(url, &["redis", "rediss"], 6379).unwrap_err();
            assert!(e.message.contains(want), "{url}: {e}");
            assert!(!e.message.contains("secret"), "{url}: {e}");
        }
    }
}

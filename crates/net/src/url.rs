//! Server URLs: `redis://[user:password@]host:port[/db]`, `rediss://…` (TLS) and
//! `memcached://host:port[,host:port…]`.

use kvlab_core::{StoreError, StoreErrorKind};

/// A parsed server URL. Its `Display` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// `redis`, `rediss` or `memcached`.
    pub scheme: String,
    /// ACL user name, if any.
    pub user: Option<String>,
    /// Password, if any.
    pub password: Option<String>,
    /// Servers as `(host, port)`, at least one.
    pub hosts: Vec<(String, u16)>,
    /// Redis database number from the path (`/3`).
    pub db: Option<u32>,
}

impl std::fmt::Debug for ServerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://", self.scheme)?;
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
        _ => url.to_string(),
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
                        "a `%` in the credentials is not followed by two hex digits",
                    )
                })?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(url, "credentials are not UTF-8"))
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
                (host, after.strip_prefix(':'))
            } else {
                match h.rsplit_once(':') {
                    Some((host, port)) => (host, Some(port)),
                    None => (h, None),
                }
            };
            let port = match port {
                None => default_port,
                Some(p) => p
                    .parse()
                    .map_err(|_| bad(url, format!("port `{p}` is not a number in 1..65535")))?,
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
            db,
        })
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

    /// Resolves server `i` to a socket address.
    pub fn resolve(&self, i: usize) -> Result<std::net::SocketAddr, StoreError> {
        use std::net::ToSocketAddrs;
        let (h, p) = &self.hosts[i];
        (h.as_str(), *p)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                StoreError::new(
                    StoreErrorKind::Connection,
                    format!("cannot resolve host `{h}`"),
                )
            })
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

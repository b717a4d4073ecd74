//! What to start: [`ServerKind`] and [`ServerSpec`], parsed from kvlab's `--spawn` argument.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::SpawnError;

/// How long [`Server::start`](crate::Server::start) waits for a server to answer.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`Server::stop`](crate::Server::stop) waits after SIGTERM before SIGKILL.
pub const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(10);

/// Which server to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerKind {
    /// `redis-server`, configured by a generated `redis.conf`.
    Redis,
    /// `memcached`, configured by command-line flags.
    Memcached,
}

impl ServerKind {
    /// The binary looked up on `PATH`: `redis-server` or `memcached`.
    pub fn binary_name(self) -> &'static str {
        match self {
            ServerKind::Redis => "redis-server",
            ServerKind::Memcached => "memcached",
        }
    }

    /// The URL scheme of the server's address: `redis` or `memcached`.
    pub fn scheme(self) -> &'static str {
        match self {
            ServerKind::Redis => "redis",
            ServerKind::Memcached => "memcached",
        }
    }

    /// The Debian/Ubuntu command that installs the binary.
    pub fn install_hint(self) -> &'static str {
        match self {
            ServerKind::Redis => "apt-get install redis-server",
            ServerKind::Memcached => "apt-get install memcached",
        }
    }
}

impl fmt::Display for ServerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.binary_name())
    }
}

/// Settings that kvlab itself writes for Redis and that a spec may not override.
const REDIS_RESERVED: &[&str] = &["port", "tls-port", "bind", "dir", "logfile", "daemonize"];

/// memcached flags that kvlab itself passes and that a spec may not override (`s`, a
/// UNIX domain socket, replaces the TCP port).
const MEMCACHED_RESERVED: &[&str] = &["l", "p", "U", "d"];

/// What to start: a kind of server and its settings.
///
/// Build one with [`ServerSpec::parse`] from kvlab's `--spawn` argument, or with
/// [`ServerSpec::new`] and [`ServerSpec::set`] from code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// Which server.
    pub kind: ServerKind,
    /// The server's settings in the order given, without kvlab's own keys (`bin`, `tls`).
    ///
    /// For Redis each is a `redis.conf` directive and its arguments, written verbatim as
    /// `name value` (an empty value is written as `""`). For memcached a one-letter name is
    /// a flag (`m` → `-m VALUE`) and a longer one an extended option
    /// (`ext_path` → `-o ext_path=VALUE`); an empty value gives the flag or option alone.
    pub options: Vec<(String, String)>,
    /// The binary to run; `None` looks up [`ServerKind::binary_name`] on `PATH`.
    pub binary: Option<PathBuf>,
    /// Redis only: serve TLS on the port instead of plain TCP (`tls=yes`, or any `tls-*`
    /// setting). The certificate settings must be given; kvlab generates none.
    pub tls: bool,
    /// How long to wait for the server to become ready.
    pub start_timeout: Duration,
    /// How long [`Server::stop`](crate::Server::stop) waits after SIGTERM before SIGKILL.
    pub stop_grace: Duration,
}

impl ServerSpec {
    /// A spec with no settings: the server's defaults, plus kvlab's (see [`Server::start`]).
    ///
    /// [`Server::start`]: crate::Server::start
    pub fn new(kind: ServerKind) -> ServerSpec {
        ServerSpec {
            kind,
            options: Vec::new(),
            binary: None,
            tls: false,
            start_timeout: DEFAULT_START_TIMEOUT,
            stop_grace: DEFAULT_STOP_GRACE,
        }
    }

    /// Parses kvlab's `--spawn` argument: comma-separated `name=value` settings, or nothing.
    ///
    /// A value in double quotes may contain commas, and `""` is the empty value
    /// (`save=""`). Empty items are ignored. Two keys belong to kvlab rather than the
    /// server:
    ///
    /// - `bin=/path/to/binary` runs that binary instead of the one on `PATH`;
    /// - `tls=yes|no` (Redis only) serves TLS; it needs `tls-cert-file`, `tls-key-file` and
    ///   `tls-ca-cert-file` (or `tls-ca-cert-dir`), which pass through like any other
    ///   directive. Any `tls-*` setting implies `tls=yes`.
    ///
    /// **Redis**: every other setting is a `redis.conf` directive passed through verbatim,
    /// e.g. `maxmemory=512mb`, `maxmemory-policy=allkeys-lru`, `appendonly=yes`,
    /// `io-threads=4`, `save=900 1`. A directive must have a value. kvlab's defaults
    /// (`save ""`, `appendonly no`, `protected-mode no`) apply unless the spec sets them;
    /// `port`, `tls-port`, `bind`, `dir`, `logfile` and `daemonize` belong to kvlab and are
    /// rejected.
    ///
    /// **memcached**: a one-letter name is a flag — `m=64` (MB of memory), `t=4`
    /// (threads), `c=1024` (max connections), `I=2m` (max item size), `L` (no value) —
    /// and a longer name is an extended option, `-o name=value` — `ext_path=FILE:SIZE`
    /// and the other `ext_*` options, `modern`, `no_lru_crawler`... A relative `ext_path`
    /// lies in the server's temporary work directory, and its parent directories are
    /// created. `l`, `p`, `U`, `d` and `s` belong to kvlab and are rejected.
    ///
    /// Errors are [`SpawnError::InvalidSpec`], naming the setting.
    pub fn parse(kind: ServerKind, spec: &str) -> Result<ServerSpec, SpawnError> {
        let mut out = ServerSpec::new(kind);
        let mut tls: Option<bool> = None;
        for item in split_items(spec)? {
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name.trim(), Some(unquote(value.trim(), &item)?)),
                None => (item.as_str(), None),
            };
            let invalid = |reason: &str| SpawnError::InvalidSpec {
                setting: item.clone(),
                reason: reason.to_string(),
            };
            if name.is_empty() {
                return Err(invalid("the name is missing"));
            }
            if name.chars().any(|c| c.is_whitespace() || c == '"') {
                return Err(invalid("a name may not contain spaces or quotes"));
            }
            match name {
                "bin" => {
                    let value = value.filter(|v| !v.is_empty());
                    let value = value.ok_or_else(|| invalid("bin needs a path"))?;
                    out.binary = Some(PathBuf::from(value));
                    continue;
                }
                "tls" => {
                    if kind != ServerKind::Redis {
                        return Err(invalid("tls=yes is supported for redis only"));
                    }
                    tls = Some(match value.as_deref() {
                        Some("yes") | Some("true") | Some("1") | None => true,
                        Some("no") | Some("false") | Some("0") => false,
                        Some(_) => return Err(invalid("tls takes yes or no")),
                    });
                    continue;
                }
                _ => {}
            }
            match kind {
                ServerKind::Redis => {
                    let lower = name.to_ascii_lowercase();
                    if REDIS_RESERVED.contains(&lower.as_str()) {
                        return Err(invalid(
                            "kvlab sets this itself (it picks a free port on 127.0.0.1 and a temporary directory)",
                        ));
                    }
                    let Some(value) = value else {
                        return Err(invalid("a redis directive needs a value: name=value"));
                    };
                    out.options.push((name.to_string(), value));
                }
                ServerKind::Memcached => {
                    let name = name.trim_start_matches('-');
                    if name.is_empty() {
                        return Err(invalid("the name is missing"));
                    }
                    if MEMCACHED_RESERVED.contains(&name) {
                        return Err(invalid(
                            "kvlab sets this itself (it listens on a free TCP port of 127.0.0.1, UDP off)",
                        ));
                    }
                    if name == "o" {
                        return Err(invalid(
                            "write extended options as name=value, e.g. ext_path=extstore:1g, not o=...",
                        ));
                    }
                    out.options
                        .push((name.to_string(), value.unwrap_or_default()));
                }
            }
        }
        // Only Redis serves TLS: memcached's options named `tls-*` are just options.
        let any_tls_setting = kind == ServerKind::Redis
            && out
                .options
                .iter()
                .any(|(name, _)| name.to_ascii_lowercase().starts_with("tls-"));
        out.tls = match tls {
            Some(false) if any_tls_setting => {
                return Err(SpawnError::InvalidSpec {
                    setting: "tls=no".into(),
                    reason: "tls-* settings are given too".into(),
                })
            }
            Some(explicit) => explicit,
            None => any_tls_setting,
        };
        if out.tls {
            let has = |name: &str| {
                out.options
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(name))
            };
            if !has("tls-cert-file") || !has("tls-key-file") {
                return Err(SpawnError::InvalidSpec {
                    setting: "tls=yes".into(),
                    reason: "TLS needs tls-cert-file and tls-key-file (and tls-ca-cert-file or \
                             tls-ca-cert-dir unless tls-auth-clients=no); kvlab generates no certificates"
                        .into(),
                });
            }
        }
        Ok(out)
    }

    /// Adds a setting, as [`ServerSpec::parse`] would for `name=value`, without checks.
    pub fn set(mut self, name: impl Into<String>, value: impl Into<String>) -> ServerSpec {
        self.options.push((name.into(), value.into()));
        self
    }

    /// The last value given for `name` (case-insensitive for Redis), if any.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| match self.kind {
                ServerKind::Redis => n.eq_ignore_ascii_case(name),
                ServerKind::Memcached => n == name,
            })
            .map(|(_, v)| v.as_str())
    }
}

/// Splits at commas outside double quotes; trims items and drops empty ones.
fn split_items(spec: &str) -> Result<Vec<String>, SpawnError> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in spec.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if quoted {
        return Err(SpawnError::InvalidSpec {
            setting: spec.to_string(),
            reason: "a double quote is not closed".into(),
        });
    }
    items.push(current);
    Ok(items
        .into_iter()
        .map(|item| item.trim().to_string())
        .filter(|item| !item.is_empty())
        .collect())
}

/// Strips one pair of surrounding double quotes; rejects quotes anywhere else.
fn unquote(value: &str, item: &str) -> Result<String, SpawnError> {
    let inner = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) => inner,
        None => value,
    };
    if inner.contains('"') {
        return Err(SpawnError::InvalidSpec {
            setting: item.to_string(),
            reason: "quote a whole value (\"...\"), not part of it".into(),
        });
    }
    Ok(inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(spec: &ServerSpec) -> Vec<(&str, &str)> {
        spec.options
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn empty_spec_has_no_settings() {
        for text in ["", "  ", ",", " , ,"] {
            let spec = ServerSpec::parse(ServerKind::Redis, text).unwrap();
            assert_eq!(spec, ServerSpec::new(ServerKind::Redis));
        }
    }

    #[test]
    fn redis_settings_pass_through_in_order() {
        let spec = ServerSpec::parse(
            ServerKind::Redis,
            "maxmemory=512mb, maxmemory-policy=allkeys-lru,appendonly=yes,io-threads=4,save=\"900 1, 300 10\",bin=/opt/redis-server",
        )
        .unwrap();
        assert_eq!(
            opts(&spec),
            [
                ("maxmemory", "512mb"),
                ("maxmemory-policy", "allkeys-lru"),
                ("appendonly", "yes"),
                ("io-threads", "4"),
                ("save", "900 1, 300 10"),
            ]
        );
        assert_eq!(spec.binary, Some(PathBuf::from("/opt/redis-server")));
        assert!(!spec.tls);
        assert_eq!(spec.get("MAXMEMORY"), Some("512mb"));
    }

    #[test]
    fn a_memcached_name_of_dashes_only_is_missing() {
        for bad in ["-", "--=1", "m=64,-"] {
            let err = ServerSpec::parse(ServerKind::Memcached, bad).unwrap_err();
            assert!(
                err.to_string().contains("the name is missing"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn empty_quoted_value() {
        let spec = ServerSpec::parse(ServerKind::Redis, "save=\"\"").unwrap();
        assert_eq!(opts(&spec), [("save", "")]);
    }

    #[test]
    fn redis_rejects_reserved_and_valueless() {
        for bad in [
            "port=6379",
            "Bind=0.0.0.0",
            "daemonize=yes",
            "dir=/tmp",
            "appendonly",
        ] {
            let err = ServerSpec::parse(ServerKind::Redis, bad).unwrap_err();
            assert!(
                matches!(err, SpawnError::InvalidSpec { .. }),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn tls_needs_certificates() {
        let err = ServerSpec::parse(ServerKind::Redis, "tls=yes").unwrap_err();
        assert!(err.to_string().contains("tls-cert-file"), "{err}");
        let spec = ServerSpec::parse(
            ServerKind::Redis,
            "tls-cert-file=/c.pem,tls-key-file=/k.pem,tls-ca-cert-file=/ca.pem",
        )
        .unwrap();
        assert!(spec.tls);
        assert!(ServerSpec::parse(ServerKind::Redis, "tls=no,tls-cert-file=/c").is_err());
        assert!(ServerSpec::parse(ServerKind::Memcached, "tls=yes").is_err());
        // A memcached option named tls-* does not turn TLS on (it is redis only).
        let spec =
            ServerSpec::parse(ServerKind::Memcached, "tls-cert-file=/c,tls-key-file=/k").unwrap();
        assert!(!spec.tls);
        assert!(ServerSpec::parse(ServerKind::Redis, "tls=maybe").is_err());
    }

    #[test]
    fn memcached_flags_and_extended_options() {
        let spec = ServerSpec::parse(
            ServerKind::Memcached,
            "m=64,t=4,c=1024,I=2m,L,ext_path=/x/extstore:64m,ext_wbuf_size=8,modern",
        )
        .unwrap();
        assert_eq!(
            opts(&spec),
            [
                ("m", "64"),
                ("t", "4"),
                ("c", "1024"),
                ("I", "2m"),
                ("L", ""),
                ("ext_path", "/x/extstore:64m"),
                ("ext_wbuf_size", "8"),
                ("modern", ""),
            ]
        );
        for bad in ["p=11211", "l=0.0.0.0", "U=1", "d", "o=modern"] {
            assert!(
                ServerSpec::parse(ServerKind::Memcached, bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn malformed_items() {
        for bad in ["=5", "a b=1", "save=\"x", "maxmemory=1\"2\"", "bin=", "bin"] {
            assert!(ServerSpec::parse(ServerKind::Redis, bad).is_err(), "{bad}");
        }
    }
}

//! The command line before clap sees it: YCSB's single-dash client flags spelled as
//! kvlab's, and credentials from the [`AUTH_ENV`] environment variable put where the
//! command line names the server, so a password never has to be on the command line
//! (where `ps` shows it to every local user).
//!
//! YCSB's client (`site.ycsb.Client`, parsed in its `Client.parseArguments`) takes
//! `-threads N`, `-target N`, `-s` (status lines), `-load` and `-t` (the phase). clap
//! reads `-threads` as `-t hreads`, so those words are rewritten first, only where the
//! meaning is not in doubt:
//!
//! | YCSB | kvlab |
//! |---|---|
//! | `-threads N` | `--threads N` |
//! | `-target N` | `--target-rate N` |
//! | `-s` | `--progress always` |
//! | `-db NAME` | `--db NAME` (a store name: YCSB's binding class names are refused with the list of stores) |
//! | `-load` (in place of the subcommand) | `load` |
//! | `-t` (in place of the subcommand) | `run` |
//!
//! after `load`, `run` and `verify` only (memtier's `-s` is its server); `-t N` after a
//! subcommand stays kvlab's `--threads`.

use std::ffi::OsString;

/// Credentials for the server a command line names: `PASSWORD`, or `USER:PASSWORD`
/// (memtier's `--authenticate`; `:PASSWORD` for a password that holds a `:`). `kvlab
/// suite` passes a store's password to its children this way. When set, they go into
/// `--url` (`run`, `load`, `verify`, `replay`) or become `--authenticate` (`memtier`),
/// unless the command line already gives credentials.
pub(crate) const AUTH_ENV: &str = "KVLAB_AUTH";

/// The subcommands YCSB's flags apply to.
const YCSB_PHASES: &[&str] = &["load", "run", "verify"];

/// The command line clap parses: `args` (the program name first) with YCSB's flags
/// rewritten and the credentials of [`AUTH_ENV`] (`auth`) added.
pub(crate) fn rewrite(args: Vec<OsString>, auth: Option<&str>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::with_capacity(args.len() + 2);
    let mut words = args.into_iter();
    out.extend(words.next());
    let mut subcommand: Option<String> = None;
    for w in words {
        let Some(s) = w.to_str() else {
            out.push(w);
            continue;
        };
        match (subcommand.as_deref(), s) {
            (None, "-load") => {
                subcommand = Some("load".into());
                out.push("load".into());
            }
            (None, "-t") => {
                subcommand = Some("run".into());
                out.push("run".into());
            }
            (None, s) if !s.starts_with('-') => {
                subcommand = Some(s.to_string());
                out.push(w);
            }
            (Some(sub), "-threads") if YCSB_PHASES.contains(&sub) => out.push("--threads".into()),
            (Some(sub), "-target") if YCSB_PHASES.contains(&sub) => {
                out.push("--target-rate".into())
            }
            (Some(sub), "-db") if YCSB_PHASES.contains(&sub) => out.push("--db".into()),
            (Some(sub), "-s") if YCSB_PHASES.contains(&sub) => {
                out.extend(["--progress".into(), "always".into()])
            }
            _ => out.push(w),
        }
    }
    if let Some(auth) = auth.filter(|a| !a.is_empty()) {
        add_credentials(&mut out, subcommand.as_deref(), auth);
    }
    out
}

/// Puts `auth` into the `--url` of a phase or replay, or adds memtier's
/// `--authenticate`, unless the command line has credentials already.
fn add_credentials(args: &mut Vec<OsString>, subcommand: Option<&str>, auth: &str) {
    if subcommand == Some("memtier") {
        let has = args.iter().any(|a| {
            a.to_str().is_some_and(|a| {
                a == "-a"
                    || a == "--authenticate"
                    || a.starts_with("--authenticate=")
                    || a == "-u"
                    || a == "--uri"
                    || a.starts_with("--uri=")
                    || (a.starts_with("-a") && !a.starts_with("--"))
            })
        });
        if !has {
            args.push(format!("--authenticate={auth}").into());
        }
        return;
    }
    for i in 0..args.len() {
        let Some(a) = args[i].to_str() else { continue };
        if a == "--url" {
            if let Some(url) = args.get(i + 1).and_then(|u| u.to_str()) {
                args[i + 1] = with_credentials(url, auth).into();
            }
            return;
        }
        if let Some(url) = a.strip_prefix("--url=") {
            args[i] = format!("--url={}", with_credentials(url, auth)).into();
            return;
        }
    }
}

/// `url` with `auth` (`PASSWORD` or `USER:PASSWORD`) as its credentials, unless it has
/// some: `redis://h:1` → `redis://:PASSWORD@h:1`; a socket URL gets `pass=` (and
/// `user=`) parameters.
pub(crate) fn with_credentials(url: &str, auth: &str) -> String {
    let (user, password) = match auth.split_once(':') {
        Some((u, p)) => (u, p),
        None => ("", auth),
    };
    let enc = kvlab_memtier::args::percent_encode;
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    if scheme == "unix" || scheme.ends_with("+unix") {
        if rest.contains("pass=") || rest.contains("password=") {
            return url.to_string();
        }
        let mut params = Vec::new();
        if !user.is_empty() {
            params.push(format!("user={}", enc(user)));
        }
        params.push(format!("pass={}", enc(password)));
        let sep = if rest.contains('?') { '&' } else { '?' };
        return format!("{url}{sep}{}", params.join("&"));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return url.to_string();
    }
    format!("{scheme}://{}:{}@{rest}", enc(user), enc(password))
}

/// `url` without its credentials, and the credentials as [`AUTH_ENV`] takes them
/// (`:PASSWORD` or `USER:PASSWORD`; `None` without a password). The URL's other parts
/// are kept as written.
pub(crate) fn split_credentials(url: &str) -> (String, Option<String>) {
    let Ok(parsed) = kvlab_net::ServerUrl::parse(
        url,
        &[
            "redis",
            "rediss",
            "redis+unix",
            "unix",
            "memcached",
            "memcached+unix",
        ],
        6379,
    ) else {
        return (url.to_string(), None);
    };
    let Some(password) = parsed.password else {
        return (url.to_string(), None);
    };
    let auth = format!("{}:{password}", parsed.user.unwrap_or_default());
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_string(), Some(auth));
    };
    if parsed.socket.is_some() {
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        let kept: Vec<&str> = query
            .split('&')
            .filter(|p| {
                let name = p.split('=').next().unwrap_or_default();
                !p.is_empty() && !matches!(name, "user" | "pass" | "password")
            })
            .collect();
        let query = if kept.is_empty() {
            String::new()
        } else {
            format!("?{}", kept.join("&"))
        };
        return (format!("{scheme}://{path}{query}"), Some(auth));
    }
    let end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let hosts = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (format!("{scheme}://{hosts}{path}"), Some(auth))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str, auth: Option<&str>) -> Vec<String> {
        let args: Vec<OsString> = line.split(' ').map(OsString::from).collect();
        rewrite(args, auth)
            .into_iter()
            .map(|w| w.into_string().unwrap())
            .collect()
    }

    #[test]
    fn ycsb_client_flags_become_kvlabs() {
        assert_eq!(
            words("kvlab run -P w -threads 2 -target 100 -s -db null", None).join(" "),
            "kvlab run -P w --threads 2 --target-rate 100 --progress always --db null"
        );
        assert_eq!(
            words("kvlab -load -P w -threads 4", None).join(" "),
            "kvlab load -P w --threads 4"
        );
        assert_eq!(
            words("kvlab -t -P w -t 3", None).join(" "),
            "kvlab run -P w -t 3"
        );
        // memtier's -s is its server; other subcommands are left alone.
        assert_eq!(
            words("kvlab memtier -s h -threads", None).join(" "),
            "kvlab memtier -s h -threads"
        );
        assert_eq!(words("kvlab --help", None).join(" "), "kvlab --help");
    }

    #[test]
    fn credentials_go_into_the_url_or_become_authenticate() {
        assert_eq!(
            words("kvlab run --url redis://127.0.0.1:7/2 -t 1", Some(":p@ss")).join(" "),
            "kvlab run --url redis://:p%40ss@127.0.0.1:7/2 -t 1"
        );
        assert_eq!(
            words("kvlab load --url=redis://h:1", Some("bob:pw")).join(" "),
            "kvlab load --url=redis://bob:pw@h:1"
        );
        // Credentials on the command line win.
        assert_eq!(
            words("kvlab run --url redis://:a@h:1", Some(":b")).join(" "),
            "kvlab run --url redis://:a@h:1"
        );
        assert_eq!(
            words("kvlab memtier -s h -p 1", Some(":pw")).join(" "),
            "kvlab memtier -s h -p 1 --authenticate=:pw"
        );
        assert_eq!(
            words("kvlab memtier -s h -a x", Some(":pw")).join(" "),
            "kvlab memtier -s h -a x"
        );
        assert_eq!(
            with_credentials("redis+unix:///tmp/r.sock?db=1", "u:pw"),
            "redis+unix:///tmp/r.sock?db=1&user=u&pass=pw"
        );
    }

    #[test]
    fn credentials_split_off_a_url() {
        assert_eq!(
            split_credentials("redis://:s%40cret@127.0.0.1:6379/3"),
            ("redis://127.0.0.1:6379/3".into(), Some(":s@cret".into()))
        );
        assert_eq!(
            split_credentials("redis://bob:pw@h:1"),
            ("redis://h:1".into(), Some("bob:pw".into()))
        );
        assert_eq!(
            split_credentials("redis+unix:///s.sock?db=1&pass=pw"),
            ("redis+unix:///s.sock?db=1".into(), Some(":pw".into()))
        );
        assert_eq!(
            split_credentials("memcached://a:1,b:2"),
            ("memcached://a:1,b:2".into(), None)
        );
        // What goes out comes back.
        let (url, auth) = split_credentials("redis://:a:b%20c@h:1");
        assert_eq!(
            with_credentials(&url, auth.as_deref().unwrap()),
            "redis://:a%3Ab%20c@h:1"
        );
        let back = kvlab_net::ServerUrl::parse("redis://:a%3Ab%20c@h:1", &["redis"], 1).unwrap();
        assert_eq!(back.password.as_deref(), Some("a:b c"));
    }
}

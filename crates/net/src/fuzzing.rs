//! The body of the `server_url` fuzz target (`crates/net/fuzz/fuzz_targets/`), also run
//! on stable by the crate's fuzz smoke test. Not part of the supported API.
//!
//! The body parses arbitrary bytes as a server URL of every scheme kvlab takes and panics
//! only when an invariant breaks: a parser that panics, an error that says nothing, does
//! not name the URL or shows its password, a parsed URL without a server, with an empty
//! host or port 0, or one whose text (password hidden) does not parse back the same.

use kvlab_core::StoreError;

use crate::ServerUrl;

/// The schemes `--redis`/`--url` and `--memcached` take, with their default ports.
const SCHEMES: [(&[&str], u16); 2] = [
    (&["redis", "rediss", "redis+unix", "unix"], 6379),
    (&["memcached", "memcached+unix"], 11211),
];

/// The password of `url` as written (in the authority, between `://` and the last `@`
/// before the path), when it is long enough and appears nowhere else in the URL, so that
/// finding it in an error means the error shows it.
fn written_password(url: &str) -> Option<&str> {
    let start = url.find("://")? + 3;
    let authority = url[start..].split('/').next()?;
    let at = start + authority.rfind('@')?;
    let creds = &url[start..at];
    let (_, password) = creds.split_once(':').unwrap_or(("", creds));
    let elsewhere = url[..start].contains(password) || url[at..].contains(password);
    // The error shows `***` and what follows the last `@`: a password made of those can
    // appear in it without being shown.
    let masked = password.contains(['*', '@']);
    (password.len() >= 6 && !elsewhere && !masked).then_some(password)
}

/// Checks one parse error of `url`.
fn check_error(url: &str, e: &StoreError) {
    let text = e.to_string();
    assert!(
        text.contains("URL `"),
        "an error that does not name the URL: {text}"
    );
    let why = text.rsplit_once("`: ").map_or("", |(_, why)| why);
    assert!(!why.trim().is_empty(), "an error that says nothing: {text}");
    let shown = text
        .split_once("URL `")
        .and_then(|(_, rest)| rest.split_once("`: "))
        .map_or("", |(shown, _)| shown);
    if let Some(password) = written_password(url) {
        assert!(
            !shown.contains(password),
            "an error that shows the password: {text}"
        );
    }
}

/// Checks a parsed URL: servers, hosts and ports, and that its text parses back the
/// same (the password, shown as `***`, aside) when its credentials need no escaping.
fn check_parsed(url: &ServerUrl, schemes: &[&str], default_port: u16) {
    assert!(url.server_count() >= 1, "a URL without a server: {url}");
    assert_eq!(url.hosts.is_empty(), url.is_unix(), "hosts beside a socket");
    for (host, port) in &url.hosts {
        assert!(!host.is_empty(), "an empty host: {url:?}");
        assert!(*port > 0, "port 0: {url}");
    }
    // The text is for messages: it writes credentials as they are, unescaped, so only a
    // URL whose credentials need no escaping reads back from it.
    let plain = |c: &Option<String>| {
        c.as_deref()
            .is_none_or(|c| !c.contains(|ch: char| "&=@:/?%#,[] ".contains(ch) || ch.is_control()))
    };
    if !plain(&url.user) || !plain(&url.password) {
        return;
    }
    let written = url.to_string();
    let again = ServerUrl::parse(&written, schemes, default_port)
        .unwrap_or_else(|e| panic!("`{written}` does not parse back: {e}"));
    let mut expected = url.clone();
    if expected.password.is_some() {
        expected.password = Some("***".to_string());
    }
    assert_eq!(again, expected, "`{written}` parses back differently");
}

/// The `server_url` fuzz target: `data` as a URL of each scheme group (Redis, memcached).
/// Returns how many groups parsed it.
pub fn server_url(data: &[u8]) -> usize {
    let url = String::from_utf8_lossy(data);
    let mut parsed = 0;
    for (schemes, default_port) in SCHEMES {
        match ServerUrl::parse(&url, schemes, default_port) {
            Ok(u) => {
                check_parsed(&u, schemes, default_port);
                parsed += 1;
            }
            Err(e) => check_error(&url, &e),
        }
    }
    parsed
}

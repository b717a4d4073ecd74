//! The body of kvlab-spawn's fuzz check, run on stable by the crate's fuzz smoke test.
//! Not part of the supported API.
//!
//! The body reads arbitrary bytes as a `--spawn` argument for each kind of server and
//! panics only when an invariant breaks: a parser that panics, or fails with an error
//! that does not name a setting or says nothing; a spec that, written back as
//! `name="value"` settings, does not parse to the same spec.

use crate::{ServerKind, ServerSpec, SpawnError};

/// Parses `data` as a `--spawn` argument for a Redis and a memcached server. Returns
/// how many of the two parsed.
pub fn spawn_spec(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let mut parsed = 0;
    for kind in [ServerKind::Redis, ServerKind::Memcached] {
        match ServerSpec::parse(kind, &text) {
            Ok(spec) => {
                parsed += 1;
                // memcached's names are written with a dash, which keeps an option named
                // like one of kvlab's keys (`-tls`) an option.
                let dash = if kind == ServerKind::Memcached {
                    "-"
                } else {
                    ""
                };
                let mut written: Vec<String> = spec
                    .options
                    .iter()
                    .map(|(name, value)| format!("{dash}{name}=\"{value}\""))
                    .collect();
                if let Some(bin) = &spec.binary {
                    written.push(format!("bin=\"{}\"", bin.display()));
                }
                if spec.tls {
                    written.push("tls=yes".into());
                }
                let written = written.join(",");
                let again = ServerSpec::parse(kind, &written).unwrap_or_else(|e| {
                    panic!("`{written}`, written back from `{text}`, does not parse: {e}")
                });
                assert_eq!(again, spec, "`{written}` does not parse to the same spec");
            }
            Err(e) => {
                let message = e.to_string();
                let SpawnError::InvalidSpec { setting, reason } = &e else {
                    panic!("a --spawn error that is not about a setting: {message}");
                };
                assert!(
                    !reason.trim().is_empty(),
                    "an error that says nothing: {message}"
                );
                // A setting of the argument, or the `tls=…` its tls-* settings imply.
                assert!(
                    text.contains(setting.as_str()) || setting.starts_with("tls="),
                    "an error naming `{setting}`, not in `{text}`"
                );
            }
        }
    }
    parsed
}

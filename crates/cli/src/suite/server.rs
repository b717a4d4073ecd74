//! A server the suite spawned, as its cells see it: what the child's monitor needs to
//! know about it, and its record in a cell's `server.json`.

use std::collections::BTreeMap;
use std::time::Duration;

use kvlab_spawn::{ProcessSample, Server};

/// The arguments that set up a child's monitor: off when the suite does not monitor
/// (`monitor = false`); else its interval, and the spawned server's pid for the
/// `server_*` columns. The child samples the store's statistics (`store.csv`) itself:
/// from the server over its own connection, or from an embedded store it opened.
pub(super) fn monitor_args(monitor: Option<Duration>, server: Option<&Server>) -> Vec<String> {
    let Some(interval) = monitor else {
        return vec!["--monitor".into(), "off".into()];
    };
    let mut args = vec![
        "--monitor-interval".into(),
        format!("{}ms", interval.as_millis().max(1)),
    ];
    if let Some(s) = server {
        args.extend(["--monitor-server-pid".into(), s.pid().to_string()]);
    }
    args
}

/// A cell's `server.json`: the server's address, binary, version and configuration, and
/// the CPU seconds it spent (passwords in its settings shown as `***`) between `before` and `after` and its RSS at the end.
pub(super) fn server_record(
    s: &Server,
    before: Option<ProcessSample>,
    after: Option<ProcessSample>,
) -> serde_json::Value {
    let mut doc = serde_json::json!({
        "pid": s.pid(),
        "url": kvlab_report::redact_url(&s.url()),
        "binary": s.binary().display().to_string(),
        "version": s.version(),
        "config": s
            .config()
            .iter()
            .map(|(k, v)| {
                let secret = kvlab_lab::phase::output::SECRET_SETTINGS.iter().any(|n| k.eq_ignore_ascii_case(n));
                (k.clone(), if secret { "***".to_string() } else { v.clone() })
            })
            .collect::<BTreeMap<String, String>>(),
    });
    if let (Some(b), Some(a)) = (before, after) {
        doc["cpu_user_s"] = (a.user_secs - b.user_secs).into();
        doc["cpu_system_s"] = (a.system_secs - b.system_secs).into();
        doc["rss_bytes"] = a.rss_bytes.into();
    }
    doc
}

//! Statistics of a server the suite spawned, for `store.csv`.

use std::collections::HashMap;
use std::time::Duration;

use kvlab_spawn::ServerKind;

/// Statistics of a suite-spawned server for `store.csv`: Redis `INFO` and `DBSIZE`, or
/// memcached `stats`, a fresh connection per sample.
pub(crate) fn server_stats(
    kind: ServerKind,
    addr: std::net::SocketAddr,
) -> kvlab_monitor::StoreStatsFn {
    match kind {
        ServerKind::Redis => Box::new(move || {
            const NAMES: &[&str] = &[
                "used_memory",
                "used_memory_rss",
                "maxmemory",
                "connected_clients",
                "total_commands_processed",
                "keyspace_hits",
                "keyspace_misses",
                "evicted_keys",
                "expired_keys",
            ];
            let mut out = Vec::new();
            if let Ok(kvlab_spawn::resp::Value::Bulk(Some(b))) =
                kvlab_spawn::resp::command(addr, &["INFO", "all"])
            {
                let text = String::from_utf8_lossy(&b);
                let info: HashMap<&str, &str> = text
                    .lines()
                    .filter_map(|l| l.trim().split_once(':'))
                    .collect();
                for n in NAMES {
                    let v = info
                        .get(n)
                        .and_then(|v| v.parse::<f64>().ok())
                        .unwrap_or(f64::NAN);
                    out.push((n.to_string(), v));
                }
            } else {
                out.extend(NAMES.iter().map(|n| (n.to_string(), f64::NAN)));
            }
            let keys = match kvlab_spawn::resp::command(addr, &["DBSIZE"]) {
                Ok(kvlab_spawn::resp::Value::Integer(n)) => n as f64,
                _ => f64::NAN,
            };
            out.push(("keys".into(), keys));
            out
        }),
        ServerKind::Memcached => Box::new(move || {
            const NAMES: &[&str] = &[
                "curr_items",
                "bytes",
                "limit_maxbytes",
                "curr_connections",
                "get_hits",
                "get_misses",
                "evictions",
                "extstore_objects_written",
                "extstore_bytes_written",
                "extstore_bytes_read",
                "get_extstore",
            ];
            let stats = memcached_stats(addr).unwrap_or_default();
            NAMES
                .iter()
                .map(|n| {
                    let v = stats
                        .get(*n)
                        .and_then(|v| v.parse::<f64>().ok())
                        .unwrap_or(f64::NAN);
                    (n.to_string(), v)
                })
                .collect()
        }),
    }
}

/// memcached's `stats` as name-value pairs.
fn memcached_stats(addr: std::net::SocketAddr) -> Option<HashMap<String, String>> {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    s.write_all(b"stats\r\n").ok()?;
    let mut out = HashMap::new();
    for line in BufReader::new(s).lines() {
        let line = line.ok()?;
        if line == "END" {
            break;
        }
        let mut w = line.split_whitespace();
        if let (Some("STAT"), Some(k), Some(v)) = (w.next(), w.next(), w.next()) {
            out.insert(k.to_string(), v.to_string());
        }
    }
    Some(out)
}

//! memtier_benchmark's `--json-out-file` document, written as memtier's `json_handler`
//! writes it: objects keep their keys in the order memtier writes them (not sorted),
//! and numbers are rounded as its `printf` formats round them (`%.2f` rates, `%.3f`
//! latencies).
//!
//! [`Json`] is that ordered tree; [`configuration`] is memtier's `configuration` object
//! (`memtier_benchmark.cpp`, `config_print_to_json`): its snake_case keys with typed
//! values. [`show_config`] is the same configuration as `--show-config` prints it
//! (`config_print`).

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

use crate::args::MemtierArgs;
use crate::{KeyPattern, SizePattern};

/// A JSON value whose objects keep their insertion order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`: memtier's `"%s"` of a NULL string.
    Null,
    /// An integer.
    Int(i64),
    /// A number with a fraction.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its keys in order.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An empty object.
    pub fn object() -> Json {
        Json::Object(Vec::new())
    }

    /// Appends `key: value` to an object (replacing an earlier value of `key`); does
    /// nothing to other values.
    pub fn put(&mut self, key: impl Into<String>, value: impl Into<Json>) {
        if let Json::Object(entries) = self {
            let key = key.into();
            let value = value.into();
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value,
                None => entries.push((key, value)),
            }
        }
    }

    /// A number rounded to `decimals` places, as `printf("%.Nf")` prints it.
    pub fn rounded(v: f64, decimals: i32) -> Json {
        let scale = 10f64.powi(decimals);
        Json::Float((v * scale).round() / scale)
    }

    /// The same document as a [`serde_json::Value`] (whose objects sort their keys).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_string())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Str(s)
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Json {
        Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<u32> for Json {
    fn from(n: u32) -> Json {
        Json::Int(i64::from(n))
    }
}

impl From<usize> for Json {
    fn from(n: usize) -> Json {
        Json::from(n as u64)
    }
}

impl From<f64> for Json {
    fn from(v: f64) -> Json {
        Json::Float(v)
    }
}

impl From<Option<String>> for Json {
    fn from(s: Option<String>) -> Json {
        s.map_or(Json::Null, Json::Str)
    }
}

impl From<serde_json::Value> for Json {
    fn from(v: serde_json::Value) -> Json {
        use serde_json::Value;
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Str(b.to_string()),
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Json::Int(i),
                (None, Some(f)) => Json::Float(f),
                (None, None) => Json::Null,
            },
            Value::String(s) => Json::Str(s),
            Value::Array(a) => Json::Array(a.into_iter().map(Json::from).collect()),
            Value::Object(m) => Json::Object(m.into_iter().map(|(k, v)| (k, v.into())).collect()),
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Int(i) => s.serialize_i64(*i),
            Json::Float(f) => s.serialize_f64(*f),
            Json::Str(t) => s.serialize_str(t),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Json {
    /// Reads JSON keeping each object's key order (to add to a document written
    /// earlier without reordering it).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> serde::de::Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Str(b.to_string()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Int(n))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::from(n))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Json::Float(v))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::Str(s.to_string()))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            entries.push((k, v));
        }
        Ok(Json::Object(entries))
    }
}

fn flag(b: bool) -> Json {
    Json::Str(if b { "true" } else { "false" }.to_string())
}

fn path(p: &Option<std::path::PathBuf>) -> Json {
    p.as_ref()
        .map_or(Json::Null, |p| Json::Str(p.display().to_string()))
}

/// memtier's `configuration` object for `a` (`config_print_to_json`), with memtier's
/// defaults (`config_init_defaults`) filled in. A password (`-a`, `--uri`) is written
/// as `****`: kvlab keeps credentials out of its result files.
pub fn configuration(a: &MemtierArgs) -> Json {
    let mut c = Json::object();
    let unix = a.unix_socket.is_some();
    c.put(
        "server",
        if unix {
            Json::Null
        } else {
            a.server
                .clone()
                .unwrap_or_else(|| "localhost".into())
                .into()
        },
    );
    c.put(
        "port",
        u32::from(a.port.unwrap_or(if unix { 0 } else { 6379 })),
    );
    c.put("uri", a.uri.as_ref().map_or("", |_| "****"));
    c.put("unix socket", path(&a.unix_socket));
    c.put(
        "address family",
        match (a.ipv4, a.ipv6) {
            (true, _) => "AF_INET",
            (_, true) => "AF_INET6",
            _ => "Unspecified",
        },
    );
    let protocol = clap::ValueEnum::to_possible_value(&a.protocol)
        .map_or_else(String::new, |v| v.get_name().to_string());
    c.put("protocol", protocol);
    c.put("out_file", path(&a.out_file));
    c.put("tls", flag(a.tls));
    c.put("cert", path(&a.cert));
    c.put("key", path(&a.key));
    c.put("cacert", path(&a.cacert));
    c.put("tls_skip_verify", flag(a.tls_skip_verify));
    c.put("sni", Json::from(a.sni.clone()));
    c.put("client_stats", Json::from(a.client_stats.clone()));
    c.put("run_count", a.run_count);
    c.put("debug", u32::from(a.debug));
    c.put("requests", a.requests_per_client().unwrap_or(0));
    c.put("rate_limit", a.rate_limiting.unwrap_or(0));
    c.put("clients", a.clients);
    c.put("threads", a.threads);
    c.put("test_time", a.test_time.unwrap_or(0));
    let ratio = a.ratio();
    c.put("ratio", format!("{}:{}", ratio.sets, ratio.gets));
    c.put("pipeline", a.pipeline);
    let sized = a.data_size_list.is_some() || a.data_size_range.is_some();
    let default_size = if sized || a.data_import.is_some() {
        0
    } else {
        32
    };
    c.put("data_size", a.data_size.unwrap_or(default_size));
    c.put("data_offset", a.data_offset.unwrap_or(0));
    c.put("random_data", flag(a.random_data));
    let (lo, hi) = a.data_size_range.unwrap_or((0, 0));
    c.put("data_size_range", format!("{lo}:{hi}"));
    let list = a.data_size_list.as_ref().map_or_else(String::new, |l| {
        l.0.iter()
            .map(|e| format!("{}:{}", e.size_bytes, e.weight))
            .collect::<Vec<_>>()
            .join(",")
    });
    c.put("data_size_list", list);
    c.put(
        "data_size_pattern",
        match a.data_size_pattern {
            SizePattern::Random => "R",
            SizePattern::Spread => "S",
        },
    );
    let (lo, hi) = a.expiry_range.map_or((0, 0), |e| (e.min_s, e.max_s));
    c.put("expiry_range", format!("{lo}:{hi}"));
    c.put("data_import", path(&a.data_import));
    c.put("data_verify", flag(a.data_verify));
    c.put("verify_only", flag(a.verify_only));
    c.put("generate_keys", flag(a.generate_keys));
    // memtier fills in its default prefix and maximum only for generated keys: an
    // import's own keys leave them unset.
    let imported_keys = a.data_import.is_some() && !a.generate_keys;
    if imported_keys {
        c.put("key_prefix", Json::Null);
    } else {
        c.put("key_prefix", a.key_prefix.as_str());
    }
    c.put("key_minimum", a.key_minimum);
    c.put("key_maximum", if imported_keys { 0 } else { a.key_maximum });
    let (set, get) = a.key_pattern();
    let letter = |p: KeyPattern| p.letter();
    c.put("key_pattern", format!("{}:{}", letter(set), letter(get)));
    c.put("key_stddev", a.key_stddev.unwrap_or(0.0));
    c.put("key_median", a.key_median.unwrap_or(0.0));
    c.put("key_zipf_exp", a.key_zipf_exp.unwrap_or(0.0));
    c.put("reconnect_interval", a.reconnect_interval.unwrap_or(0));
    c.put("connection_timeout", a.connection_timeout.unwrap_or(0));
    c.put(
        "thread_conn_start_min_jitter_micros",
        a.thread_conn_start_min_jitter_micros.unwrap_or(0),
    );
    c.put(
        "thread_conn_start_max_jitter_micros",
        a.thread_conn_start_max_jitter_micros.unwrap_or(0),
    );
    c.put("multi_key_get", a.multi_key_get.unwrap_or(0));
    c.put(
        "authenticate",
        a.authenticate.as_ref().map_or("", |_| "****"),
    );
    c.put("select-db", a.select_db.unwrap_or(0));
    c.put("no-expiry", flag(a.no_expiry));
    let w = a.wait_ratio.unwrap_or(crate::Ratio { sets: 0, gets: 0 });
    c.put("wait-ratio", format!("{}:{}", w.sets, w.gets));
    let (lo, hi) = a.num_slaves.unwrap_or((0, 0));
    c.put("num-slaves", format!("{lo}:{hi}"));
    let (lo, hi) = a.wait_timeout.unwrap_or((0, 0));
    c.put("wait-timeout", format!("{lo}-{hi}"));
    c.put("print-all-runs", flag(a.print_all_runs));
    if let Some(start) = a.clients_start.filter(|&n| n > 0) {
        c.put("clients_start", start);
        c.put("clients_step", a.clients_step.unwrap_or(0));
        c.put("step_duration", a.step_duration.unwrap_or(0));
    }
    c
}

/// memtier's `--show-config` text (`config_print`): `name = value` lines, in its order,
/// with its spellings — `yes`/`no`, `(null)` for an unset path, `MIN-MAX` ranges, `%f`
/// fractions — and no `key_zipf_exp`. The values are [`configuration`]'s (passwords
/// written as `****`) plus `json-out-file`.
pub fn show_config(a: &MemtierArgs) -> String {
    /// The printed names, each also its key in [`configuration`] but `json-out-file`.
    const NAMES: [&str; 53] = [
        "server",
        "port",
        "uri",
        "unix socket",
        "address family",
        "protocol",
        "tls",
        "cert",
        "key",
        "cacert",
        "tls_skip_verify",
        "sni",
        "out_file",
        "client_stats",
        "run_count",
        "debug",
        "requests",
        "rate_limit",
        "clients",
        "threads",
        "test_time",
        "ratio",
        "pipeline",
        "data_size",
        "data_offset",
        "random_data",
        "data_size_range",
        "data_size_list",
        "data_size_pattern",
        "expiry_range",
        "data_import",
        "data_verify",
        "verify_only",
        "generate_keys",
        "key_prefix",
        "key_minimum",
        "key_maximum",
        "key_pattern",
        "key_stddev",
        "key_median",
        "reconnect_interval",
        "connection_timeout",
        "thread_conn_start_min_jitter_micros",
        "thread_conn_start_max_jitter_micros",
        "multi_key_get",
        "authenticate",
        "select-db",
        "no-expiry",
        "wait-ratio",
        "num-slaves",
        "wait-timeout",
        "json-out-file",
        "print-all-runs",
    ];
    /// The ranges `config_print` writes as `%u-%u` where the JSON has `"%u:%u"`.
    const DASHED: [&str; 3] = ["data_size_range", "expiry_range", "num-slaves"];
    let Json::Object(entries) = configuration(a) else {
        unreachable!("the configuration is an object");
    };
    let mut out = String::new();
    for name in NAMES {
        let v = if name == "json-out-file" {
            path(&a.json_out_file)
        } else {
            entries
                .iter()
                .find(|(k, _)| k == name)
                .map_or(Json::Null, |(_, v)| v.clone())
        };
        let v = match v {
            Json::Null => "(null)".to_string(),
            Json::Int(n) => n.to_string(),
            Json::Float(f) => format!("{f:.6}"),
            Json::Str(s) if s == "true" => "yes".to_string(),
            Json::Str(s) if s == "false" => "no".to_string(),
            Json::Str(s) if DASHED.contains(&name) => s.replacen(':', "-", 1),
            Json::Str(s) => s,
            other => other.to_value().to_string(),
        };
        out.push_str(&format!("{name} = {v}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_their_order_and_numbers_their_rounding() {
        let mut o = Json::object();
        o.put("z", 1u64);
        o.put("a", Json::rounded(30464.5812, 2));
        o.put("m", Json::Null);
        o.put("z", 2u64);
        let text = serde_json::to_string(&o).unwrap();
        assert_eq!(text, r#"{"z":2,"a":30464.58,"m":null}"#);
        // Read back, the order stays.
        let back: Json = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}

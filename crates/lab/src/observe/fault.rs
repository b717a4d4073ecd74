//! Fault injection for network stores through Toxiproxy (`--toxiproxy ADDR --fault SPEC`).
//!
//! kvlab asks a running `toxiproxy-server` (its HTTP API at ADDR) for a proxy in front of
//! the store's server, connects through it, and during the phase adds and removes
//! Toxiproxy's toxics on schedule: `latency`, `bandwidth`, `timeout`, `reset_peer`,
//! `slow_close`, `limit_data`, or takes the proxy `down`. Every operation that fails
//! meanwhile is counted by kind as always (`timeout`, `connection`, …), and the result
//! says when each fault was in force (`runner.faults`), so the failures and the
//! latencies of `timeline.csv` line up with their causes.

use std::io::{Read, Write as _};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::plan::parse_duration;
use crate::Refusal;

/// A refusal (exit code 2) as the error this module returns.
fn refuse(sentence: impl Into<String>) -> anyhow::Error {
    Refusal::new(sentence).into()
}

/// One fault: a toxic (or the proxy down) from `start` to `end` of the phase.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultSpec {
    /// As given.
    pub text: String,
    /// Toxiproxy's toxic type, or `down`.
    kind: String,
    /// The toxic's attributes.
    attributes: serde_json::Map<String, serde_json::Value>,
    /// `downstream` (server to kvlab, the default) or `upstream`.
    stream: String,
    /// The share of connections it applies to.
    toxicity: f64,
    start: Duration,
    end: Option<Duration>,
}

fn millis(s: &str, what: &str) -> std::result::Result<u64, String> {
    parse_duration(s)
        .map(|d| d.as_millis() as u64)
        .map_err(|e| format!("{what}: {e}"))
}

impl std::str::FromStr for FaultSpec {
    type Err = String;

    /// `KIND[:VALUE][,NAME=VALUE…]@START[-END]`, e.g. `latency:50ms,jitter=10ms@5s-10s`,
    /// `down@3s-4s`, `reset@2s`, `bandwidth:64@1s-3s` (KB/s), `timeout:500ms@2s-3s`.
    fn from_str(s: &str) -> std::result::Result<FaultSpec, String> {
        let err = |why: String| format!("--fault `{s}`: {why}");
        let (what, when) = s
            .split_once('@')
            .ok_or_else(|| err("give its window after @, e.g. latency:50ms@5s-10s".into()))?;
        let (start, end) = match when.split_once('-') {
            Some((a, b)) => (
                parse_duration(a).map_err(&err)?,
                Some(parse_duration(b).map_err(&err)?),
            ),
            None => (parse_duration(when).map_err(&err)?, None),
        };
        if end.is_some_and(|e| e <= start) {
            return Err(err("the window ends before it starts".into()));
        }
        let mut parts = what.split(',');
        let head = parts.next().unwrap_or_default();
        let (kind, value) = match head.split_once(':') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (head.trim(), None),
        };
        let mut attributes = serde_json::Map::new();
        let mut set = |k: &str, v: u64| {
            attributes.insert(k.to_string(), serde_json::Value::from(v));
        };
        let kind = match (kind, value) {
            ("latency", Some(v)) => {
                set("latency", millis(v, "latency").map_err(&err)?);
                "latency"
            }
            ("bandwidth", Some(v)) => {
                set(
                    "rate",
                    v.parse().map_err(|_| err(format!("`{v}` is not KB/s")))?,
                );
                "bandwidth"
            }
            ("timeout", v) => {
                set(
                    "timeout",
                    v.map_or(Ok(0), |v| millis(v, "timeout")).map_err(&err)?,
                );
                "timeout"
            }
            ("reset", v) => {
                set(
                    "timeout",
                    v.map_or(Ok(0), |v| millis(v, "reset")).map_err(&err)?,
                );
                "reset_peer"
            }
            ("slow_close", Some(v)) => {
                set("delay", millis(v, "slow_close").map_err(&err)?);
                "slow_close"
            }
            ("limit_data", Some(v)) => {
                set(
                    "bytes",
                    v.parse().map_err(|_| err(format!("`{v}` is not bytes")))?,
                );
                "limit_data"
            }
            ("down", None) => "down",
            _ => {
                return Err(err(
                    "expected latency:TIME, bandwidth:KBPS, timeout[:TIME], reset[:TIME], \
                     slow_close:TIME, limit_data:BYTES or down"
                        .into(),
                ))
            }
        };
        let mut stream = "downstream".to_string();
        let mut toxicity = 1.0;
        for option in parts {
            let (k, v) = option
                .split_once('=')
                .ok_or_else(|| err(format!("`{option}`: expected NAME=VALUE")))?;
            match (k.trim(), kind) {
                ("jitter", "latency") => {
                    let ms = millis(v, "jitter").map_err(&err)?;
                    attributes.insert("jitter".into(), ms.into());
                }
                ("stream", _) if matches!(v, "upstream" | "downstream") => stream = v.into(),
                ("toxicity", _) => {
                    toxicity = v
                        .parse::<f64>()
                        .ok()
                        .filter(|t| (0.0..=1.0).contains(t))
                        .ok_or_else(|| err(format!("toxicity `{v}`: expected 0 to 1")))?;
                }
                _ => return Err(err(format!("`{option}` does not apply to {kind}"))),
            }
        }
        Ok(FaultSpec {
            text: s.to_string(),
            kind: kind.to_string(),
            attributes,
            stream,
            toxicity,
            start,
            end,
        })
    }
}

/// One HTTP/1.0 request to Toxiproxy's API (so the answer is never chunked); the status
/// and the body.
fn api(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Result<(u16, String)> {
    let mut c = TcpStream::connect(addr)
        .with_context(|| format!("--toxiproxy {addr}: cannot reach toxiproxy-server's API"))?;
    c.set_read_timeout(Some(Duration::from_secs(5)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        c,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nUser-Agent: kvlab\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    c.read_to_string(&mut response)?;
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| anyhow::anyhow!("--toxiproxy {addr}: not an HTTP answer"))?;
    let body = response
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    Ok((status, body))
}

/// A Toxiproxy proxy in front of the store, and when each fault was in force.
#[derive(Debug)]
pub struct Proxy {
    api: String,
    name: String,
    faults: Vec<FaultSpec>,
    applied: Mutex<Vec<serde_json::Value>>,
}

/// With `--toxiproxy` (and its `--fault`s): a proxy in front of `url`'s server, and `url`
/// rewritten to reach the server through it; without, `url` as it is. `--toxiproxy`
/// alone goes through the proxy without a fault: the baseline of the same path.
/// The proxy goes into `slot`, the phase's observer.
pub fn through_proxy(
    toxiproxy: Option<&str>,
    faults: &[FaultSpec],
    slot: &OnceLock<Arc<Proxy>>,
    url: String,
) -> Result<String> {
    if faults.is_empty() && toxiproxy.is_none() {
        return Ok(url);
    }
    let Some(api_addr) = toxiproxy else {
        return Err(refuse(
            "--fault needs --toxiproxy HOST:PORT, the API of a running toxiproxy-server",
        ));
    };
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| refuse(format!("--fault: `{url}` is not a URL")))?;
    if scheme.contains("unix") {
        return Err(refuse(
            "--fault goes through a TCP proxy: not a UNIX socket",
        ));
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), authority),
    };
    if hostport.contains(',') {
        return Err(refuse(
            "--fault puts one proxy in front of one server: give one in --url",
        ));
    }
    let default_port = if scheme.starts_with("memcached") {
        11211
    } else {
        6379
    };
    let upstream = if hostport
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        hostport.to_string()
    } else {
        format!("{hostport}:{default_port}")
    };
    let name = format!("kvlab-{}", std::process::id());
    let (status, body) = api(
        api_addr,
        "POST",
        "/proxies",
        Some(&serde_json::json!({
            "name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true
        })),
    )?;
    if status / 100 != 2 {
        return Err(anyhow::anyhow!(
            "--toxiproxy {api_addr}: creating a proxy to {upstream}: HTTP {status}: {}",
            body.trim()
        ));
    }
    let listen = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["listen"].as_str().map(String::from))
        .ok_or_else(|| anyhow::anyhow!("--toxiproxy {api_addr}: no listen address in {body}"))?;
    let listen = listen.replace("[::]", "127.0.0.1");
    eprintln!(
        "kvlab: through toxiproxy {listen} → {upstream} ({})",
        if faults.is_empty() {
            "no fault: the path alone".to_string()
        } else {
            let faults: Vec<&str> = faults.iter().map(|f| f.text.as_str()).collect();
            format!("faults: {}", faults.join(", "))
        }
    );
    let proxy = Proxy {
        api: api_addr.to_string(),
        name,
        faults: faults.to_vec(),
        applied: Mutex::new(Vec::new()),
    };
    if slot.set(Arc::new(proxy)).is_err() {
        return Err(anyhow::anyhow!(
            "--toxiproxy: the phase already has a proxy (one store per phase)"
        ));
    }
    Ok(format!("{scheme}://{userinfo}{listen}{tail}"))
}

impl Drop for Proxy {
    /// Removes the proxy from Toxiproxy when the phase that made it is gone.
    fn drop(&mut self) {
        let _ = api(
            &self.api,
            "DELETE",
            &format!("/proxies/{}", self.name),
            None,
        );
    }
}

impl Proxy {
    fn apply(&self, f: &FaultSpec, i: usize) -> Result<()> {
        let (status, body) = if f.kind == "down" {
            api(
                &self.api,
                "POST",
                &format!("/proxies/{}", self.name),
                Some(&serde_json::json!({ "enabled": false })),
            )?
        } else {
            api(
                &self.api,
                "POST",
                &format!("/proxies/{}/toxics", self.name),
                Some(&serde_json::json!({
                    "name": format!("fault-{i}"),
                    "type": f.kind,
                    "stream": f.stream,
                    "toxicity": f.toxicity,
                    "attributes": f.attributes,
                })),
            )?
        };
        if status / 100 != 2 {
            return Err(anyhow::anyhow!(
                "applying --fault {}: HTTP {status}: {}",
                f.text,
                body.trim()
            ));
        }
        Ok(())
    }

    fn remove(&self, f: &FaultSpec, i: usize) -> Result<()> {
        let (status, body) = if f.kind == "down" {
            api(
                &self.api,
                "POST",
                &format!("/proxies/{}", self.name),
                Some(&serde_json::json!({ "enabled": true })),
            )?
        } else {
            api(
                &self.api,
                "DELETE",
                &format!("/proxies/{}/toxics/fault-{i}", self.name),
                None,
            )?
        };
        if status / 100 != 2 && status != 404 {
            return Err(anyhow::anyhow!(
                "removing --fault {}: HTTP {status}: {}",
                f.text,
                body.trim()
            ));
        }
        Ok(())
    }

    /// Runs the schedule on a thread of its own from now (the phase's start) until
    /// `stop` is set; at the stop, removes what is still in force.
    pub fn schedule(self: &Arc<Self>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
        let me = Arc::clone(self);
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut on: Vec<Option<f64>> = vec![None; me.faults.len()];
            let mut done = vec![false; me.faults.len()];
            let record =
                |f: &FaultSpec, from: Option<f64>, to: Option<f64>, error: Option<String>| {
                    me.applied
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(serde_json::json!({
                            "fault": f.text, "from_s": from, "to_s": to, "error": error,
                        }));
                };
            loop {
                let now = started.elapsed();
                let stopping = stop.load(Ordering::SeqCst);
                for (i, f) in me.faults.iter().enumerate() {
                    if done[i] {
                        continue;
                    }
                    let ends = f.end.is_some_and(|e| now >= e);
                    match on[i] {
                        None if stopping || ends => {
                            let why = "not in force: the phase ended before its window";
                            record(f, None, None, Some(why.into()));
                            done[i] = true;
                        }
                        None if now >= f.start => match me.apply(f, i) {
                            Ok(()) => {
                                let at = started.elapsed().as_secs_f64();
                                eprintln!("kvlab: {at:.2} s: fault on: {}", f.text);
                                on[i] = Some(at);
                            }
                            Err(e) => {
                                eprintln!("kvlab: warning: {e}");
                                record(f, None, None, Some(e.to_string()));
                                done[i] = true;
                            }
                        },
                        Some(from) if stopping || ends => {
                            let result = me.remove(f, i);
                            let at = started.elapsed().as_secs_f64();
                            if !stopping {
                                eprintln!("kvlab: {at:.2} s: fault off: {}", f.text);
                            }
                            let error = result.err().map(|e| e.to_string());
                            record(f, Some(from), Some(at), error);
                            done[i] = true;
                        }
                        _ => {}
                    }
                }
                if done.iter().all(|d| *d) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    }

    /// When each fault was in force in the last phase (`runner.faults`).
    pub fn applied(&self) -> Vec<serde_json::Value> {
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::FaultSpec;

    /// Each kind becomes its Toxiproxy toxic with its attributes in milliseconds, bytes
    /// or KB/s; options and windows are read; what Toxiproxy could not take is refused.
    #[test]
    fn fault_specs_read_as_toxiproxy_toxics() {
        let f: FaultSpec = "latency:50ms,jitter=10ms,stream=upstream,toxicity=0.5@5s-10s"
            .parse()
            .unwrap();
        assert_eq!(f.kind, "latency");
        assert_eq!(f.attributes["latency"], 50);
        assert_eq!(f.attributes["jitter"], 10);
        assert_eq!((f.stream.as_str(), f.toxicity), ("upstream", 0.5));
        assert_eq!(f.start, std::time::Duration::from_secs(5));
        assert_eq!(f.end, Some(std::time::Duration::from_secs(10)));
        for (spec, kind, attribute, value) in [
            ("bandwidth:64@1s", "bandwidth", "rate", 64),
            ("timeout@1s", "timeout", "timeout", 0),
            ("timeout:500ms@1s", "timeout", "timeout", 500),
            ("reset@1s", "reset_peer", "timeout", 0),
            ("slow_close:2s@1s", "slow_close", "delay", 2000),
            ("limit_data:1000@1s", "limit_data", "bytes", 1000),
        ] {
            let f: FaultSpec = spec.parse().unwrap();
            assert_eq!((f.kind.as_str(), f.end), (kind, None), "{spec}");
            assert_eq!(f.attributes[attribute], value, "{spec}");
        }
        let down: FaultSpec = "down@3s-4s".parse().unwrap();
        assert!(down.kind == "down" && down.attributes.is_empty());
        for bad in [
            "latency:5ms",
            "latency@1s",
            "down:5@1s",
            "jitter@1s",
            "latency:5ms,jitter=2ms,toxicity=2@1s",
            "bandwidth:64,jitter=1ms@1s",
            "down@4s-3s",
            "latency:fast@1s",
        ] {
            assert!(bad.parse::<FaultSpec>().is_err(), "{bad}");
        }
    }
}

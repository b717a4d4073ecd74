//! `--metrics ADDR`: the phase's live metrics served over HTTP at `/metrics`, in
//! Prometheus' text exposition format (`kvlab_measure::prometheus`), for a Prometheus
//! server (or `curl`) to scrape while the run goes on.
//!
//! One endpoint per phase (its observer, `Observers::metrics`), started by the first run
//! that asks for it and kept for the runs after it (memtier's `-x` runs, SLO steps), so
//! the address stays the same. A small
//! HTTP/1.1 server on its own thread: `GET /metrics` (or `/`) answers the page as of the
//! last closed interval, anything else 404 or 405; one request per connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use kvlab_measure::LiveMetrics;

/// The process's metrics endpoint: the page it serves.
pub struct Endpoint {
    page: Mutex<String>,
}

/// The endpoint in `slot` listening on `addr` (port 0: any free port), started on first
/// use and said on stderr. A later call returns the same endpoint whatever its address.
pub fn serve(slot: &Arc<OnceLock<Endpoint>>, addr: SocketAddr) -> Result<&Endpoint> {
    if let Some(e) = slot.get() {
        return Ok(e);
    }
    let listener = TcpListener::bind(addr)
        .with_context(|| format!("--metrics {addr}: cannot listen there"))?;
    let addr = listener
        .local_addr()
        .context("--metrics: the bound address")?;
    let endpoint = slot.get_or_init(|| Endpoint {
        page: Mutex::new(String::new()),
    });
    let served = Arc::clone(slot);
    std::thread::Builder::new()
        .name("kvlab-metrics".into())
        .spawn(move || {
            let endpoint = served
                .get()
                .expect("the endpoint is set before its thread starts");
            for conn in listener.incoming().flatten() {
                // A client that stalls cannot hold the endpoint for long.
                let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = conn.set_write_timeout(Some(Duration::from_secs(2)));
                answer(conn, endpoint);
            }
        })
        .context("--metrics: starting its thread")?;
    eprintln!("kvlab: live metrics at http://{addr}/metrics");
    Ok(endpoint)
}

impl Endpoint {
    /// Renders `live` as the page served from now on.
    pub fn publish(&self, live: &LiveMetrics) {
        let mut page = String::with_capacity(8 * 1024);
        live.render(&mut page);
        *self.page.lock().unwrap_or_else(|e| e.into_inner()) = page;
    }
}

/// Reads one request's head and answers it.
fn answer(mut conn: TcpStream, endpoint: &Endpoint) {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics" | "/") => (
            "200 OK",
            endpoint
                .page
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        ),
        ("GET" | "HEAD", _) => ("404 Not Found", "kvlab serves /metrics\n".to_string()),
        _ => ("405 Method Not Allowed", "GET /metrics\n".to_string()),
    };
    let content_type = if status.starts_with("200") {
        "text/plain; version=0.0.4; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if method != "HEAD" {
        response.extend_from_slice(body.as_bytes());
    }
    let _ = conn.write_all(&response);
}

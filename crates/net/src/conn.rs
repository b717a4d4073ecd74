//! A connection: a TCP, TLS or UNIX domain socket stream with a write buffer that a
//! batch is encoded into and a read buffer that replies are parsed from, plus the
//! reconnect back-off.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kvlab_core::{StoreError, StoreErrorKind, Timestamp};
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

/// A server's address: a TCP socket address or a UNIX domain socket path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Addr {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

/// Where to connect, and how.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// `host:port` (or the socket path) as given, for messages.
    pub(crate) name: String,
    pub(crate) addr: Addr,
    pub(crate) tls: Option<Arc<Tls>>,
    pub(crate) connect_timeout: Duration,
    /// Per read or write of a batch; `None` waits forever.
    pub(crate) timeout: Option<Duration>,
}

/// TLS settings shared by every connection of a store.
pub(crate) struct Tls {
    pub(crate) connector: tokio_rustls::TlsConnector,
    pub(crate) server_name: rustls::pki_types::ServerName<'static>,
}

enum Io {
    Tcp(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    Unix(UnixStream),
}

/// An open connection with its buffers.
pub(crate) struct Conn {
    io: Io,
    /// Bytes to send; sessions encode requests here and call [`Conn::flush`].
    pub(crate) wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    rpos: usize,
    /// Bytes parsed ([`Conn::consume`]d) since the connection was made: sessions take
    /// differences of it to count each request's reply bytes ([`kvlab_core::WireBytes`]).
    consumed: u64,
    /// When the last read returned bytes (see [`Conn::received_at`]).
    received_at: Timestamp,
    timeout: Option<Duration>,
    name: String,
}

const READ_CHUNK: usize = 64 * 1024;

/// Bytes waiting in the write buffers of `conns`: what a session has encoded and not yet
/// sent, so that the difference around encoding a request is that request's wire size.
pub(crate) fn queued_bytes<'a>(conns: impl Iterator<Item = &'a Conn>) -> u64 {
    conns.map(|c| c.wbuf.len() as u64).sum()
}

impl Conn {
    /// Connects (and for TLS, shakes hands) within the endpoint's connect timeout.
    pub(crate) async fn connect(ep: &Endpoint) -> Result<Conn, StoreError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            StoreError::new(
                StoreErrorKind::Connection,
                format!("{what} {}: {e}", ep.name),
            )
        };
        let addr = match &ep.addr {
            Addr::Tcp(addr) => *addr,
            Addr::Unix(path) => {
                let io = match tokio::time::timeout(ep.connect_timeout, UnixStream::connect(path))
                    .await
                {
                    Ok(Ok(s)) => Io::Unix(s),
                    Ok(Err(e)) => return Err(fail("connecting to", &e)),
                    Err(_) => {
                        return Err(fail(
                            "connecting to",
                            &format!("no answer within {:?}", ep.connect_timeout),
                        ))
                    }
                };
                return Ok(Conn::new(io, ep));
            }
        };
        let tcp = match tokio::time::timeout(ep.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => return Err(fail("connecting to", &e)),
            Err(_) => {
                return Err(fail(
                    "connecting to",
                    &format!("no answer within {:?}", ep.connect_timeout),
                ))
            }
        };
        tcp.set_nodelay(true)
            .map_err(|e| fail("setting TCP_NODELAY on", &e))?;
        let io = match &ep.tls {
            None => Io::Tcp(tcp),
            Some(tls) => {
                let handshake = tls.connector.connect(tls.server_name.clone(), tcp);
                match tokio::time::timeout(ep.connect_timeout, handshake).await {
                    Ok(Ok(s)) => Io::Tls(Box::new(s)),
                    Ok(Err(e)) => return Err(fail("TLS handshake with", &e)),
                    Err(_) => {
                        return Err(fail(
                            "TLS handshake with",
                            &format!(
                                "no answer within {:?}; is the server serving TLS on this port?",
                                ep.connect_timeout
                            ),
                        ))
                    }
                }
            }
        };
        Ok(Conn::new(io, ep))
    }

    fn new(io: Io, ep: &Endpoint) -> Conn {
        Conn {
            io,
            wbuf: Vec::with_capacity(16 * 1024),
            rbuf: Vec::with_capacity(READ_CHUNK),
            rpos: 0,
            consumed: 0,
            received_at: Timestamp::now(),
            timeout: ep.timeout,
            name: ep.name.clone(),
        }
    }

    /// Sends everything in the write buffer and empties it.
    pub(crate) async fn flush(&mut self) -> Result<(), StoreError> {
        let write = async {
            match &mut self.io {
                Io::Tcp(s) => write_all(s, &self.wbuf).await,
                Io::Tls(s) => write_all(s.as_mut(), &self.wbuf).await,
                Io::Unix(s) => write_all(s, &self.wbuf).await,
            }
        };
        let result = with_timeout(self.timeout, write).await;
        self.wbuf.clear();
        result.map_err(|e| self.io_error("writing to", e))
    }

    /// The bytes received and not yet consumed.
    #[inline]
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.rbuf[self.rpos..]
    }

    /// Marks `n` buffered bytes as parsed.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        self.rpos += n;
        self.consumed += n as u64;
        if self.rpos == self.rbuf.len() {
            self.rbuf.clear();
            self.rpos = 0;
        }
    }

    /// Bytes parsed since the connection was made (see [`Conn::consume`]).
    #[inline]
    pub(crate) fn consumed(&self) -> u64 {
        self.consumed
    }

    /// When the buffered bytes were received: the time the last [`Conn::fill`] returned
    /// (or the connection was made). A reply parsed from the buffer arrived then, so
    /// sessions stamp every reply of one read with it instead of reading the clock per
    /// reply.
    #[inline]
    pub(crate) fn received_at(&self) -> Timestamp {
        self.received_at
    }

    /// Waits for more bytes and stamps their arrival ([`Conn::received_at`]). End of
    /// stream is a connection error.
    pub(crate) async fn fill(&mut self) -> Result<(), StoreError> {
        if self.rpos > 0 && self.rpos * 2 >= self.rbuf.len() {
            self.rbuf.drain(..self.rpos);
            self.rpos = 0;
        }
        self.rbuf.reserve(READ_CHUNK);
        let read = async {
            match &mut self.io {
                Io::Tcp(s) => s.read_buf(&mut self.rbuf).await,
                Io::Tls(s) => s.read_buf(&mut self.rbuf).await,
                Io::Unix(s) => s.read_buf(&mut self.rbuf).await,
            }
        };
        match with_timeout(self.timeout, read).await {
            Ok(0) => Err(StoreError::new(
                StoreErrorKind::Connection,
                format!("{} closed the connection", self.name),
            )),
            Ok(_) => {
                self.received_at = Timestamp::now();
                Ok(())
            }
            Err(e) => Err(self.io_error("reading from", e)),
        }
    }

    /// Reads replies until `take` has what it waits for. `take` sees the connection's
    /// buffered bytes and returns `Ok(None)` when they hold no whole reply yet (more are
    /// read), else how many bytes it used — consumed — and, once done, the result.
    pub(crate) async fn read_until<T>(
        &mut self,
        mut take: impl FnMut(&Conn) -> Result<Option<(usize, Option<T>)>, StoreError>,
    ) -> Result<T, StoreError> {
        loop {
            match take(self)? {
                Some((n, done)) => {
                    self.consume(n);
                    if let Some(done) = done {
                        return Ok(done);
                    }
                }
                None => self.fill().await?,
            }
        }
    }

    /// The server's name, for messages.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// A reply that breaks the protocol, naming the server that sent it.
    pub(crate) fn protocol_error(&self, e: kvlab_proto::ProtoError) -> StoreError {
        StoreError::new(StoreErrorKind::Protocol, format!("{}: {e}", self.name))
    }

    fn io_error(&self, what: &str, e: std::io::Error) -> StoreError {
        let kind = if e.kind() == std::io::ErrorKind::TimedOut {
            StoreErrorKind::Timeout
        } else {
            StoreErrorKind::Connection
        };
        StoreError::new(kind, format!("{what} {}: {e}", self.name))
    }
}

async fn write_all<W: AsyncWrite + Unpin>(w: &mut W, buf: &[u8]) -> std::io::Result<()> {
    w.write_all(buf).await?;
    w.flush().await
}

async fn with_timeout<T>(
    timeout: Option<Duration>,
    f: impl std::future::Future<Output = std::io::Result<T>>,
) -> std::io::Result<T> {
    match timeout {
        None => f.await,
        Some(t) => match tokio::time::timeout(t, f).await {
            Ok(r) => r,
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no reply within {t:?}"),
            )),
        },
    }
}

/// A connection to one server, made on first use and remade after a failure.
#[derive(Default)]
pub(crate) struct Link {
    pub(crate) conn: Option<Conn>,
    pub(crate) backoff: Backoff,
}

/// The latest time any of `links` without a connection may try again: when a session
/// can next serve a batch ([`kvlab_core::Session::ready_at`]).
pub(crate) fn ready_at(links: &[Link]) -> Option<Instant> {
    links
        .iter()
        .filter(|l| l.conn.is_none())
        .filter_map(|l| l.backoff.next_attempt())
        .max()
}

/// memtier's `--reconnect-interval`: counts a session's requests and says when its
/// connections are due to be closed, to be opened again by the next batch. Counting
/// whole batches, a pipeline that does not divide the interval reconnects after the
/// batch that reaches or passes each multiple of it.
#[derive(Debug, Default)]
pub(crate) struct Recycle {
    interval: u64,
    done: u64,
}

impl Recycle {
    /// Every `interval` requests; 0 never.
    pub(crate) fn new(interval: u64) -> Recycle {
        Recycle { interval, done: 0 }
    }

    /// Counts `n` more requests: true when they reach or pass a multiple of the interval.
    #[inline]
    pub(crate) fn count(&mut self, n: usize) -> bool {
        if self.interval == 0 {
            return false;
        }
        let before = self.done / self.interval;
        self.done += n as u64;
        self.done / self.interval != before
    }
}

/// Adds a server statistic to `totals`: numbers found on several servers add up (whole
/// numbers and reals apart); ratios and anything else keep the first server's value.
pub(crate) fn add_stat(totals: &mut kvlab_core::StoreStats, name: String, text: &str) {
    use kvlab_core::StatValue;
    let value = match (text.parse::<i64>(), text.parse::<f64>()) {
        (Ok(i), _) => StatValue::Int(i),
        (_, Ok(f)) => StatValue::Float(f),
        _ => StatValue::Text(text.to_string()),
    };
    match totals.iter_mut().find(|(n, _)| *n == name) {
        Some((_, StatValue::Int(a))) => {
            if let StatValue::Int(b) = value {
                *a += b;
            }
        }
        Some((_, StatValue::Float(a))) if !name.contains("ratio") => {
            if let StatValue::Float(b) = value {
                *a += b;
            }
        }
        Some(_) => {}
        None => totals.push((name, value)),
    }
}

/// Exponential back-off between reconnection attempts: 10 ms doubling to 1 s, reset by
/// a success.
#[derive(Debug)]
pub(crate) struct Backoff {
    next_attempt: Option<Instant>,
    delay: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            next_attempt: None,
            delay: Backoff::FIRST,
        }
    }
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);

    /// When the next attempt is allowed, if it has to wait.
    pub(crate) fn next_attempt(&self) -> Option<Instant> {
        self.next_attempt
    }

    /// Waits until the next attempt is allowed.
    pub(crate) async fn wait(&self) {
        if let Some(at) = self.next_attempt {
            tokio::time::sleep_until(at.into()).await;
        }
    }

    /// An attempt failed: the next one waits longer.
    pub(crate) fn failed(&mut self) {
        self.next_attempt = Some(Instant::now() + self.delay);
        self.delay = (self.delay * 2).min(Backoff::MAX);
    }

    /// An attempt succeeded.
    pub(crate) fn succeeded(&mut self) {
        self.next_attempt = None;
        self.delay = Backoff::FIRST;
    }
}

/// A TLS protocol version a client may offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl TlsVersion {
    /// Parses a list such as `TLSv1.2,TLSv1.3` (commas or spaces between the names, as
    /// memtier's `--tls-protocols` and redis-server's `tls-protocols` take them); an
    /// empty list is empty.
    pub fn parse_list(list: &str) -> Result<Vec<TlsVersion>, StoreError> {
        let mut versions = Vec::new();
        for name in list.split([',', ' ']).filter(|n| !n.is_empty()) {
            let v = match name {
                "TLSv1.2" => TlsVersion::Tls12,
                "TLSv1.3" => TlsVersion::Tls13,
                "TLSv1" | "TLSv1.1" => {
                    return Err(StoreError::new(
                        StoreErrorKind::Config,
                        format!(
                            "TLS protocol `{name}`: kvlab's TLS library (rustls) speaks \
                             TLSv1.2 and TLSv1.3 only"
                        ),
                    ))
                }
                other => {
                    return Err(StoreError::new(
                        StoreErrorKind::Config,
                        format!("TLS protocol `{other}`: expected TLSv1.2 or TLSv1.3"),
                    ))
                }
            };
            if !versions.contains(&v) {
                versions.push(v);
            }
        }
        Ok(versions)
    }

    fn rustls(self) -> &'static rustls::SupportedProtocolVersion {
        match self {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        }
    }
}

/// Builds the TLS settings: offer `versions` (TLS 1.2 and 1.3 when empty); trust the CA
/// file's certificates (or the given roots), or — for self-signed test servers — trust
/// anything; present `client_cert` (certificate chain and private key, PEM files) to
/// servers that authenticate clients.
pub(crate) fn tls_settings(
    host: &str,
    ca_file: Option<&std::path::Path>,
    skip_verify: bool,
    sni: Option<&str>,
    versions: &[TlsVersion],
    client_cert: Option<(&std::path::Path, &std::path::Path)>,
) -> Result<Arc<Tls>, StoreError> {
    let config_err = |m: String| StoreError::new(StoreErrorKind::Config, m);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone());
    let builder = if versions.is_empty() {
        builder.with_safe_default_protocol_versions()
    } else {
        let versions: Vec<_> = versions.iter().map(|v| v.rustls()).collect();
        builder.with_protocol_versions(&versions)
    }
    .map_err(|e| config_err(format!("TLS: {e}")))?;
    let builder = if skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
    } else {
        let verifier = TrustedCertificates::load(ca_file, provider)?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
    };
    let config = match client_cert {
        None => builder.with_no_client_auth(),
        Some((cert_path, key_path)) => {
            let read = |path: &std::path::Path| {
                std::fs::read(path).map_err(|e| {
                    config_err(format!("reading TLS client file {}: {e}", path.display()))
                })
            };
            let pem = read(cert_path)?;
            let certs = rustls_pemfile::certs(&mut pem.as_slice())
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| config_err(format!("{}: {e}", cert_path.display())))?;
            if certs.is_empty() {
                return Err(config_err(format!(
                    "{}: no PEM certificate found",
                    cert_path.display()
                )));
            }
            let pem = read(key_path)?;
            let key = rustls_pemfile::private_key(&mut pem.as_slice())
                .map_err(|e| config_err(format!("{}: {e}", key_path.display())))?
                .ok_or_else(|| {
                    config_err(format!("{}: no PEM private key found", key_path.display()))
                })?;
            builder
                .with_client_auth_cert(certs, key)
                .map_err(|e| config_err(format!("TLS client certificate: {e}")))?
        }
    };
    let name = sni.unwrap_or(host).to_string();
    let server_name = rustls::pki_types::ServerName::try_from(name.clone())
        .map_err(|e| config_err(format!("TLS server name `{name}`: {e}")))?;
    Ok(Arc::new(Tls {
        connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
        server_name,
    }))
}

/// Where the system keeps its CA certificates, as OpenSSL looks for them when no CA
/// file is given: `$SSL_CERT_FILE`, then the bundle of Debian and Ubuntu, of Red Hat
/// and Fedora, of openSUSE, and of Alpine and the BSDs.
const SYSTEM_CA_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The certificates a client trusts — a CA file's, or the system's when none is
/// given — checked as OpenSSL (and so memtier_benchmark and redis-cli) checks them: a
/// chain to one of them, or the server's own certificate being one of them (a
/// self-signed server certificate given as the CA file, which WebPKI alone refuses as
/// a CA used as an end entity). Handshake signatures are always checked.
#[derive(Debug)]
struct TrustedCertificates {
    webpki: Arc<rustls::client::WebPkiServerVerifier>,
    certificates: Vec<rustls::pki_types::CertificateDer<'static>>,
}

impl TrustedCertificates {
    fn load(
        ca_file: Option<&std::path::Path>,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<TrustedCertificates, StoreError> {
        let config_err = |m: String| StoreError::new(StoreErrorKind::Config, m);
        let system = std::env::var_os("SSL_CERT_FILE")
            .map(std::path::PathBuf::from)
            .into_iter()
            .chain(SYSTEM_CA_BUNDLES.iter().map(std::path::PathBuf::from))
            .find(|p| p.is_file());
        let path = match (ca_file, &system) {
            (Some(path), _) => path,
            (None, Some(path)) => path.as_path(),
            (None, None) => {
                return Err(config_err(format!(
                    "TLS needs CA certificates to trust, and this system has none where \
                     OpenSSL looks ($SSL_CERT_FILE, {}): give a CA file \
                     (redis.tls_ca_file=PATH, memtier's --cacert) or, for a self-signed \
                     test server, redis.tls_skip_verify=true",
                    SYSTEM_CA_BUNDLES.join(", ")
                )))
            }
        };
        let pem = std::fs::read(path)
            .map_err(|e| config_err(format!("reading CA file {}: {e}", path.display())))?;
        let mut roots = rustls::RootCertStore::empty();
        let mut certificates = Vec::new();
        for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
            let cert = cert.map_err(|e| config_err(format!("CA file {}: {e}", path.display())))?;
            // A system bundle may hold certificates WebPKI cannot use as anchors;
            // those are skipped, as OpenSSL skips what it cannot parse.
            let added = roots.add(cert.clone());
            if ca_file.is_some() {
                added.map_err(|e| config_err(format!("CA file {}: {e}", path.display())))?;
            }
            certificates.push(cert);
        }
        if certificates.is_empty() {
            return Err(config_err(format!(
                "CA file {}: no PEM certificate found",
                path.display()
            )));
        }
        let webpki =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| config_err(format!("CA file {}: {e}", path.display())))?;
        Ok(TrustedCertificates {
            webpki,
            certificates,
        })
    }
}

impl rustls::client::danger::ServerCertVerifier for TrustedCertificates {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        if self
            .certificates
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            // The server presents a certificate the user trusts as it is.
            return Ok(rustls::client::danger::ServerCertVerified::assertion());
        }
        self.webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Accepts any server certificate (still checking handshake signatures), for
/// self-signed test servers.
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// How long a statistics query (`INFO`, `stats`) may take before the server is taken to
/// be unresponsive: the query is given up and the statistics left out, so a stalled
/// server cannot hold a finished run (or the monitor) forever.
pub(crate) const STATS_TIMEOUT: Duration = Duration::from_secs(1);

/// Runs a statistics query, failing it as a timeout after [`STATS_TIMEOUT`].
pub(crate) async fn within_stats_timeout<T>(
    query: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(STATS_TIMEOUT, query)
        .await
        .unwrap_or_else(|_| {
            Err(StoreError::new(
                StoreErrorKind::Timeout,
                format!("no statistics from the server in {STATS_TIMEOUT:?}"),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::Recycle;

    #[test]
    fn a_recycle_is_due_each_time_a_multiple_of_its_interval_is_reached_or_passed() {
        let mut r = Recycle::new(10);
        let due: Vec<bool> = (0..25).map(|_| r.count(1)).collect();
        let at: Vec<usize> = due
            .iter()
            .enumerate()
            .filter(|(_, d)| **d)
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(at, [10, 20]);
        // Batches of 4: 12 passes 10, 20 is reached, 32 passes 30.
        let mut r = Recycle::new(10);
        let due: Vec<bool> = (0..8).map(|_| r.count(4)).collect();
        assert_eq!(due, [false, false, true, false, true, false, false, true]);
        let mut never = Recycle::new(0);
        assert!((0..100).all(|_| !never.count(7)));
    }
}

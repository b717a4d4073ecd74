//! The `redis` store over TLS (`rediss://`) against a real redis-server serving TLS,
//! with a CA and a server certificate made by `openssl` for the test.

use std::path::{Path, PathBuf};
use std::process::Command;

use kvlab_core::{Batch, OpKind, Outcome, Session, Store, StoreErrorKind};
use kvlab_net::redis::{Model, RedisConfig, RedisSession, RedisStore};
use kvlab_spawn::{Server, ServerKind, ServerSpec};
use kvlab_stores::StoreOptions;

/// The DNS name the server certificate carries besides the IP address 127.0.0.1.
const CERT_DNS_NAME: &str = "kvlab-redis.test";

/// A CA and a server certificate signed by it, in a temporary directory.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("running openssl");
    assert!(
        out.status.success(),
        "openssl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Makes `NAME-ca.crt`/`.key` (a self-signed CA) in `dir`.
fn make_ca(dir: &Path, name: &str) {
    let (crt, key) = (format!("{name}-ca.crt"), format!("{name}-ca.key"));
    let subject = format!("/CN=kvlab test CA {name}");
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", &key, "-out",
            &crt, "-subj", &subject,
        ],
    );
}

/// Makes `NAME.key` and `NAME.crt`, signed by the CA `test` with the extensions `ext`.
fn issue(dir: &Path, name: &str, ext: &str) {
    let (key, csr, crt, ext_file) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
        format!("{name}.ext"),
    );
    let subject = format!("/CN=kvlab {name}");
    openssl(
        dir,
        &[
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj",
            &subject,
        ],
    );
    std::fs::write(dir.join(&ext_file), ext).unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "test-ca.crt",
            "-CAkey",
            "test-ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext_file,
            "-out",
            &crt,
        ],
    );
}

/// A CA `test`, a server certificate `server.crt`/`.key` it signed for 127.0.0.1 and
/// [`CERT_DNS_NAME`], a client certificate `client.crt`/`.key` it signed, and an
/// unrelated CA `other`; `None` (with a note) without openssl.
fn pki() -> Option<Pki> {
    if Command::new("openssl").arg("version").output().is_err() {
        eprintln!("note: openssl is not installed (apt-get install openssl); TLS test skipped");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    make_ca(d, "test");
    make_ca(d, "other");
    issue(
        d,
        "server",
        &format!(
            "subjectAltName=IP:127.0.0.1,DNS:{CERT_DNS_NAME}\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
        ),
    );
    issue(
        d,
        "client",
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
    );
    Some(Pki { dir })
}

/// redis-server serving TLS only, not asking clients for certificates.
fn tls_redis(pki: &Pki) -> Server {
    tls_redis_authenticating(pki, "no")
}

/// redis-server serving TLS only, with `tls-auth-clients` set to `auth_clients`.
fn tls_redis_authenticating(pki: &Pki, auth_clients: &str) -> Server {
    tls_redis_with(pki, &format!("tls-auth-clients={auth_clients}"))
}

/// redis-server serving TLS only, with `extra` settings.
fn tls_redis_with(pki: &Pki, extra: &str) -> Server {
    let spec = format!(
        "tls-cert-file={},tls-key-file={},tls-ca-cert-file={},{extra}",
        pki.path("server.crt").display(),
        pki.path("server.key").display(),
        pki.path("test-ca.crt").display(),
    );
    let server = Server::start(&ServerSpec::parse(ServerKind::Redis, &spec).unwrap()).unwrap();
    assert!(server.tls());
    assert!(
        server.url().starts_with("rediss://127.0.0.1:"),
        "{}",
        server.url()
    );
    server
}

/// Opens the store; the hash model's index is in key order (`redis.index_order=key`)
/// unless `pairs` say otherwise, as the conformance suite's scans expect key order.
fn open(url: &str, pairs: &[(&str, &str)]) -> Result<RedisStore, kvlab_core::StoreError> {
    let key_order = [("redis.index_order", "key")];
    let defaults = key_order
        .iter()
        .filter(|(k, _)| !pairs.iter().any(|(p, _)| p == k));
    let opts = StoreOptions::new(
        "redis.",
        defaults
            .chain(pairs)
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    RedisStore::open(RedisConfig::from_options(url, Model::Hash, opts)?)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn conforms(store: &RedisStore) {
    let rt = runtime();
    kvlab_stores::conformance::check_all_with(store, |s: &mut RedisSession, b: &mut Batch| {
        rt.block_on(async {
            s.prepare().await.unwrap();
            s.execute(b).await
        })
    });
}

/// Writes and reads back one blob through a fresh session.
fn round_trip(store: &RedisStore, key: &[u8]) {
    let rt = runtime();
    let mut s = store.session().unwrap();
    let mut b = Batch::new();
    let slot = b.push();
    slot.request.kind = OpKind::Insert;
    slot.request.read.set_blob();
    slot.request.key.extend_from_slice(key);
    slot.request.value.set_blob(b"over tls");
    let slot = b.push();
    slot.request.kind = OpKind::Read;
    slot.request.read.set_blob();
    slot.request.key.extend_from_slice(key);
    rt.block_on(async {
        s.prepare().await.unwrap();
        s.execute(&mut b).await
    });
    assert!(b.slots()[0].result.is_ok(), "{:?}", b.slots()[0].result);
    assert_eq!(b.slots()[1].result, Ok(Outcome::Hit { bytes: 8 }));
    assert_eq!(b.slots()[1].reply.field(0).1, b"over tls");
}

#[test]
fn tls_with_a_ca_file_conforms_in_both_models_and_both_protocols() {
    let Some(pki) = pki() else { return };
    let server = tls_redis(&pki);
    let ca = pki.path("test-ca.crt");
    let ca = ca.to_str().unwrap();
    // Each model in its own database (the URL's `/N`, sent as SELECT over TLS): both
    // use the same conformance keys.
    for (model, protocol, db) in [("hash", "resp2", 0), ("string", "resp3", 1)] {
        let store = open(
            &format!("{}/{db}", server.url()),
            &[
                ("redis.tls_ca_file", ca),
                ("redis.model", model),
                ("redis.protocol", protocol),
            ],
        )
        .unwrap();
        assert!(store
            .options()
            .iter()
            .any(|(k, v)| k == "tls" && *v == kvlab_core::StatValue::from(true)));
        conforms(&store);
    }
}

#[test]
fn tls_skip_verify_and_sni_work_and_bad_trust_fails_at_open_with_a_clear_error() {
    let Some(pki) = pki() else { return };
    let server = tls_redis(&pki);
    let url = server.url();
    let ca = pki.path("test-ca.crt");
    let ca = ca.to_str().unwrap();

    // A self-signed test server without a CA file: trust anything.
    let store = open(&url, &[("redis.tls_skip_verify", "true")]).unwrap();
    round_trip(&store, b"tls-skip-verify");

    // The certificate names CERT_DNS_NAME: checking that name instead of 127.0.0.1 works…
    let store = open(
        &url,
        &[("redis.tls_ca_file", ca), ("redis.tls_sni", CERT_DNS_NAME)],
    )
    .unwrap();
    round_trip(&store, b"tls-sni");
    // …and a name the certificate does not carry fails the handshake.
    let e = open(
        &url,
        &[
            ("redis.tls_ca_file", ca),
            ("redis.tls_sni", "elsewhere.test"),
        ],
    )
    .err()
    .expect("a certificate for another name is refused");
    assert_eq!(e.kind, StoreErrorKind::Connection, "{e}");
    assert!(e.message.contains("TLS handshake"), "{e}");
    assert!(
        e.message.contains(&format!("127.0.0.1:{}", server.port())),
        "{e}"
    );
    assert!(e.message.to_lowercase().contains("name"), "{e}");

    // A CA that did not sign the server's certificate.
    let other = pki.path("other-ca.crt");
    let e = open(&url, &[("redis.tls_ca_file", other.to_str().unwrap())])
        .err()
        .expect("a server certificate from an unknown CA is refused");
    assert_eq!(e.kind, StoreErrorKind::Connection, "{e}");
    assert!(e.message.contains("TLS handshake"), "{e}");
    assert!(e.message.to_lowercase().contains("issuer"), "{e}");

    // Neither a CA file nor skip-verify: the system's CA certificates, as OpenSSL
    // trusts by default, which did not sign this test server's.
    let e = open(&url, &[])
        .err()
        .expect("a test CA is not among the system's");
    assert_eq!(e.kind, StoreErrorKind::Connection, "{e}");
    assert!(e.message.contains("TLS handshake"), "{e}");
    assert!(e.message.to_lowercase().contains("issuer"), "{e}");

    // A CA file that is missing, or holds no certificate.
    let e = open(&url, &[("redis.tls_ca_file", "/nonexistent/ca.pem")])
        .err()
        .unwrap();
    assert_eq!(e.kind, StoreErrorKind::Config, "{e}");
    assert!(e.message.contains("/nonexistent/ca.pem"), "{e}");
    let key = pki.path("server.key");
    let e = open(&url, &[("redis.tls_ca_file", key.to_str().unwrap())])
        .err()
        .unwrap();
    assert!(e.message.contains("no PEM certificate"), "{e}");

    // Plain TCP to the TLS port fails at open instead of hanging.
    let plain = url.replacen("rediss://", "redis://", 1);
    let e = open(
        &plain,
        &[
            ("redis.connect_timeout_ms", "2000"),
            ("redis.timeout_ms", "2000"),
        ],
    )
    .err()
    .expect("plain TCP to a TLS port fails");
    assert!(
        matches!(e.kind, StoreErrorKind::Connection | StoreErrorKind::Timeout),
        "{e}"
    );
}

#[test]
fn tls_to_a_plain_server_fails_at_open_with_a_handshake_error() {
    let server = Server::start(&ServerSpec::new(ServerKind::Redis)).unwrap();
    let url = server.url().replacen("redis://", "rediss://", 1);
    let e = open(
        &url,
        &[
            ("redis.tls_skip_verify", "true"),
            ("redis.connect_timeout_ms", "2000"),
        ],
    )
    .err()
    .expect("TLS to a plain server fails");
    assert_eq!(e.kind, StoreErrorKind::Connection, "{e}");
    assert!(e.message.contains("TLS handshake"), "{e}");
    assert!(e.message.contains("serving TLS"), "{e}");
}

#[test]
fn a_client_certificate_is_presented_to_a_server_that_asks_for_one() {
    let Some(pki) = pki() else { return };
    let server = tls_redis_authenticating(&pki, "yes");
    let ca = pki.path("test-ca.crt").display().to_string();
    let (crt, key) = (
        pki.path("client.crt").display().to_string(),
        pki.path("client.key").display().to_string(),
    );
    let store = open(
        &server.url(),
        &[
            ("redis.tls_ca_file", &ca),
            ("redis.tls_cert_file", &crt),
            ("redis.tls_key_file", &key),
        ],
    )
    .unwrap();
    conforms(&store);
    // Without the certificate the server ends the handshake.
    let e = open(&server.url(), &[("redis.tls_ca_file", &ca)])
        .err()
        .unwrap();
    assert_eq!(e.kind, StoreErrorKind::Connection, "{e:?}");
    // Half a pair, or a file without a key, is a configuration error naming the option
    // or the file.
    let e = open(
        &server.url(),
        &[("redis.tls_ca_file", &ca), ("redis.tls_cert_file", &crt)],
    )
    .err()
    .unwrap();
    assert!(e.message.contains("redis.tls_key_file"), "{}", e.message);
    let e = open(
        &server.url(),
        &[
            ("redis.tls_ca_file", &ca),
            ("redis.tls_cert_file", &crt),
            ("redis.tls_key_file", &crt),
        ],
    )
    .err()
    .unwrap();
    assert_eq!(e.kind, StoreErrorKind::Config, "{e:?}");
    assert!(e.message.contains("client.crt"), "{}", e.message);
}

#[test]
fn tls_protocols_limit_the_versions_offered() {
    let Some(pki) = pki() else { return };
    let server = tls_redis_with(&pki, "tls-auth-clients=no,tls-protocols=TLSv1.3");
    let url = server.url();
    let skip = ("redis.tls_skip_verify", "true");
    let store = open(&url, &[skip, ("redis.tls_protocols", "TLSv1.2,TLSv1.3")]).unwrap();
    round_trip(&store, b"tls-1.3");
    // A server speaking TLS 1.3 only refuses a client offering TLS 1.2 only.
    let e = open(&url, &[skip, ("redis.tls_protocols", "TLSv1.2")])
        .err()
        .expect("no common TLS version");
    assert_eq!(e.kind, StoreErrorKind::Connection, "{e}");
    assert!(e.message.contains("TLS handshake"), "{e}");
    // Versions rustls does not speak, and unknown names, are configuration errors.
    for (list, want) in [
        ("TLSv1.1", "TLSv1.2 and TLSv1.3 only"),
        ("SSLv3", "expected"),
    ] {
        let e = open(&url, &[skip, ("redis.tls_protocols", list)])
            .err()
            .expect("refused");
        assert_eq!(e.kind, StoreErrorKind::Config, "{e}");
        assert!(e.message.contains(want), "{list}: {e}");
    }
}

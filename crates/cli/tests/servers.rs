//! `kvlab run` and `kvlab memtier` against servers that need more than a host and a
//! port: a password set by `--spawn requirepass=…`, TLS (`--tls`), and a Redis Cluster
//! (`--cluster-mode`). Every server is a real redis-server on a loopback port.

use std::process::Command;

use crate::common;
use common::files::{files_under, result_doc};
use common::servers::{info_at, info_stat, redis};
use common::{all_stats_row, kvlab, memtier_on, text};

#[test]
fn a_spawned_server_with_a_password_is_used_with_it_and_the_password_is_never_shown() {
    const SECRET: &str = "Sp4wnedS3cret";
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let settings = format!("maxmemory=64mb,requirepass={SECRET}");
    let o = kvlab(&[
        "run",
        "-P",
        "workloads/ycsb/workloada",
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=600",
        "--db",
        "redis",
        "--spawn",
        &settings,
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let doc = result_doc(&out);
    assert_eq!(doc.results.operations, 600);
    assert!(doc.results.errors.is_empty(), "{:?}", doc.results.errors);
    assert_eq!(
        doc.store.options["spawned.config.requirepass"],
        serde_json::json!("***"),
        "the setting is recorded, its value is not"
    );
    let mut texts = files_under(&out);
    texts.push(stdout);
    texts.push(stderr);
    for t in &texts {
        assert!(!t.contains(SECRET), "the password leaked:\n{t}");
    }
    assert!(
        texts.iter().any(|t| t.contains("requirepass=***")),
        "the command line is shown with the value hidden"
    );
}

#[test]
fn memtier_tls_flags_reach_a_tls_server() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=kvlab-test", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("running openssl (apt-get install openssl)");
    assert!(made.status.success(), "{}", text(&made).1);
    let spec = format!(
        "tls-cert-file={0},tls-key-file={1},tls-ca-cert-file={0},tls-auth-clients=no",
        cert.display(),
        key.display()
    );
    let server = redis(&spec);
    let port = server.port().to_string();
    let memtier = |extra: &[&str]| {
        let mut args = vec![
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--ratio=1:1",
            "--key-maximum=100",
            "--hide-histogram",
        ];
        args.extend_from_slice(extra);
        memtier_on(&port, &args)
    };
    // The certificate names no host and is its own issuer: only skipping verification
    // gets through, which shows the handshake is TLS.
    let o = memtier(&["--tls", "--tls-skip-verify", "--sni", "kvlab-test"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let row = all_stats_row(&stdout, "Totals");
    let ops: f64 = row[1].parse().unwrap();
    assert!(ops > 0.0, "{stdout}");
    // The self-signed certificate given as the CA file is trusted as it is, as
    // memtier_benchmark (OpenSSL) trusts it, where WebPKI alone refuses a CA certificate
    // used as a server's.
    let o = memtier(&["--tls", "--cacert", cert.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    // Plain TCP against the TLS port fails the handshake; without --cacert the
    // system's CA certificates are trusted, and none signed this one.
    for extra in [&[][..], &["--tls"][..]] {
        let o = memtier(extra);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {stderr}");
        if !extra.is_empty() {
            assert!(stderr.contains("invalid peer certificate"), "{stderr}");
        }
    }
    let o = memtier(&["--cacert", cert.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--cacert without --tls is a usage error"
    );
    assert!(text(&o).1.contains("need --tls"), "{}", text(&o).1);
}

#[test]
fn memtier_cluster_mode_spreads_keys_over_every_master() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let first = cluster.addrs()[0];
    let port = first.port().to_string();
    let o = memtier_on(
        &port,
        &[
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "4",
            "-n",
            "300",
            "--ratio=1:0",
            "--key-pattern=P:P",
            "--key-minimum=1",
            "--key-maximum=1200",
            "--hide-histogram",
        ],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        all_stats_row(&stdout, "Totals")[1].parse::<f64>().unwrap() > 0.0,
        "{stdout}"
    );
    // P:P splits 1..=1200 among the 4 clients, 300 SETs each: every key once.
    let mut keys = 0;
    for node in cluster.nodes() {
        let n = match kvlab_spawn::resp::command(node.addr(), &["DBSIZE"]).unwrap() {
            kvlab_spawn::resp::Value::Integer(n) => n,
            other => panic!("DBSIZE: {other:?}"),
        };
        assert!(n > 300, "a third of the keys or so on {}: {n}", node.addr());
        keys += n;
    }
    assert_eq!(keys, 1200);
}

/// `INFO` counter `name` (for `cmdstat_*` its `calls=`) summed over the cluster's nodes.
fn cluster_counter(cluster: &kvlab_spawn::Cluster, name: &str) -> u64 {
    cluster
        .addrs()
        .into_iter()
        .map(|addr| info_stat(&info_at(addr, "all"), name).unwrap_or(0))
        .sum()
}

#[test]
fn memtier_multi_key_gets_in_a_cluster_span_slots_and_count_keys_as_the_nodes_do() {
    let cluster = kvlab_spawn::start_redis_cluster(3).unwrap();
    let port = cluster.addrs()[1].port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cluster.json");
    let json_arg = format!("--json-out-file={}", json.display());
    // 2 clients × 120 requests: 30 cycles of a SET and GETs of 4, 4 and 2 keys drawn
    // from 200 keys, which fall in many slots on every master.
    let o = memtier_on(
        &port,
        &[
            "--cluster-mode",
            "-t",
            "1",
            "-c",
            "2",
            "--pipeline=4",
            "--requests=120",
            "--ratio=1:10",
            "--multi-key-get=4",
            "--key-maximum=200",
            "--distinct-client-seed",
            "--hide-histogram",
            &json_arg,
        ],
    );
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let gets = &doc["ALL STATS"]["Gets"];
    let secs = doc["run information"]["Runtime (msec)"].as_f64().unwrap() / 1e3;
    let per_key = |rate: &str| (gets[rate].as_f64().unwrap() * secs).round() as u64;
    // One operation per multi-key GET, none failed, its keys counted one by one.
    assert_eq!(gets["Count"], serde_json::json!(180), "{gets}");
    let (hits, misses) = (per_key("Hits/sec"), per_key("Misses/sec"));
    assert_eq!(hits + misses, 2 * 30 * 10, "{gets}");
    assert!(hits > 0 && misses > 0, "{gets}");
    assert_eq!(
        (hits, misses),
        (
            cluster_counter(&cluster, "keyspace_hits"),
            cluster_counter(&cluster, "keyspace_misses")
        ),
        "kvlab and the nodes count the same keys"
    );
    // No MGET across slots reached a node; GETs of keys in several slots were split
    // into one MGET per slot, so there are more MGETs than GETs.
    assert_eq!(cluster_counter(&cluster, "errorstat_CROSSSLOT"), 0);
    let mgets = cluster_counter(&cluster, "cmdstat_mget");
    assert!(
        mgets > 180 && mgets <= 600,
        "{mgets} MGETs for 180 GETs of 600 keys"
    );
    assert_eq!(cluster_counter(&cluster, "cmdstat_get"), 0);
}

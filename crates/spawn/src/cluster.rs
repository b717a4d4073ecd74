//! [`Cluster`]: a local Redis Cluster of master nodes, for kvlab's Redis Cluster tests and
//! runs.

use std::net::SocketAddr;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use crate::resp;
use crate::server::{find_on_path, run_captured};
use crate::{Server, ServerKind, ServerSpec, SpawnError, StopReport};

/// How long [`start_redis_cluster`] waits for every node to report `cluster_state:ok`.
const CLUSTER_OK_TIMEOUT: Duration = Duration::from_secs(30);

/// The number of hash slots of a Redis Cluster.
const SLOTS: usize = 16384;

/// A running Redis Cluster of masters without replicas, made by [`start_redis_cluster`].
///
/// Each node is a [`Server`] with its own port, cluster-bus port and work directory.
/// Stop the cluster with [`Cluster::stop`]; dropping it stops every node too.
#[derive(Debug)]
pub struct Cluster {
    nodes: Vec<Server>,
}

/// Starts a Redis Cluster of `masters` nodes with kvlab's default settings; see
/// [`start_redis_cluster_with`].
pub fn start_redis_cluster(masters: usize) -> Result<Cluster, SpawnError> {
    start_redis_cluster_with(&ServerSpec::new(ServerKind::Redis), masters)
}

/// Starts a Redis Cluster of `masters` nodes, each a Redis [`Server`] started from `spec`
/// with `cluster-enabled yes`, `cluster-config-file nodes.conf` and a free `cluster-port`.
///
/// Three or more masters are joined by
/// `redis-cli --cluster create 127.0.0.1:P1 ... --cluster-replicas 0 --cluster-yes`
/// (`redis-cli` beside the server binary, else on `PATH`); one or two — which `redis-cli`
/// refuses — by `CLUSTER ADDSLOTSRANGE` and `CLUSTER MEET` (Redis 7 or later). The call
/// returns once every node's `CLUSTER INFO` shows `cluster_state:ok`, all 16384 slots
/// assigned and every node known, or fails after 30 s.
///
/// Fails with [`SpawnError::Cluster`] for zero masters, a TLS or non-Redis spec, or a
/// cluster that does not form; with the errors of [`Server::start`] for a node that does
/// not start. Nodes already started are stopped on failure.
pub fn start_redis_cluster_with(spec: &ServerSpec, masters: usize) -> Result<Cluster, SpawnError> {
    if masters == 0 {
        return Err(SpawnError::Cluster(
            "a cluster needs at least one master".into(),
        ));
    }
    if spec.kind != ServerKind::Redis {
        return Err(SpawnError::Cluster(format!(
            "a cluster is made of redis-server, not {}",
            spec.kind
        )));
    }
    if spec.tls {
        return Err(SpawnError::Cluster("TLS clusters are not supported".into()));
    }
    let nodes = (0..masters)
        .map(|_| Server::start_inner(spec, true))
        .collect::<Result<Vec<_>, _>>()?;
    let cluster = Cluster { nodes };
    if masters >= 3 {
        cluster.create_with_redis_cli()?;
    } else {
        cluster.create_by_hand()?;
    }
    cluster.wait_ok()?;
    Ok(cluster)
}

impl Cluster {
    /// The nodes, in the order of their slot ranges (node 0 holds slot 0).
    pub fn nodes(&self) -> &[Server] {
        &self.nodes
    }

    /// The nodes' addresses, in the order of [`Cluster::nodes`].
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(Server::addr).collect()
    }

    /// The nodes' URLs, `redis://127.0.0.1:PORT`, in the order of [`Cluster::nodes`].
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }

    /// Stops every node (see [`Server::stop`]) and returns their reports in node order, or
    /// the first error after trying them all.
    pub fn stop(self) -> Result<Vec<StopReport>, SpawnError> {
        let mut reports = Vec::with_capacity(self.nodes.len());
        let mut first_error = None;
        for node in self.nodes {
            match node.stop() {
                Ok(report) => reports.push(report),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            None => Ok(reports),
            Some(e) => Err(e),
        }
    }

    /// The cluster's slot ranges as `CLUSTER SLOTS` on the first node reports them:
    /// `(first slot, last slot, master address)`, sorted by first slot.
    pub fn slot_ranges(&self) -> Result<Vec<(u16, u16, SocketAddr)>, SpawnError> {
        let seed = self.nodes[0].addr();
        let reply = resp::command(seed, &["CLUSTER", "SLOTS"])?;
        let bad = || SpawnError::Protocol(format!("unexpected CLUSTER SLOTS reply {reply:?}"));
        let mut ranges = Vec::new();
        for range in reply.as_array().ok_or_else(bad)? {
            let parse = || -> Option<(u16, u16, SocketAddr)> {
                let items = range.as_array()?;
                let first = u16::try_from(items.first()?.as_int()?).ok()?;
                let last = u16::try_from(items.get(1)?.as_int()?).ok()?;
                let master = items.get(2)?.as_array()?;
                // An empty IP means "the address you asked" (a node that met no other).
                let ip = match master.first()?.as_str()? {
                    "" => seed.ip(),
                    ip => ip.parse().ok()?,
                };
                let port = u16::try_from(master.get(1)?.as_int()?).ok()?;
                Some((first, last, SocketAddr::new(ip, port)))
            };
            ranges.push(parse().ok_or_else(bad)?);
        }
        ranges.sort_unstable();
        Ok(ranges)
    }

    fn create_with_redis_cli(&self) -> Result<(), SpawnError> {
        let beside_server = self.nodes[0].binary().with_file_name("redis-cli");
        let cli = if beside_server.is_file() {
            beside_server
        } else {
            find_on_path("redis-cli", "apt-get install redis-tools")?
        };
        let mut command = Command::new(&cli);
        command.args(["--cluster", "create"]);
        command.args(self.nodes.iter().map(|n| n.addr().to_string()));
        command.args(["--cluster-replicas", "0", "--cluster-yes"]);
        let (status, output) = run_captured(&mut command, Duration::from_secs(60))?;
        if !status.success() {
            let tail: Vec<&str> = output.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(SpawnError::Cluster(format!(
                "`{} --cluster create` exited with {status}:\n{}",
                cli.display(),
                tail.join("\n")
            )));
        }
        Ok(())
    }

    fn create_by_hand(&self) -> Result<(), SpawnError> {
        let n = self.nodes.len();
        for (i, node) in self.nodes.iter().enumerate() {
            let first = (i * SLOTS / n).to_string();
            let last = ((i + 1) * SLOTS / n - 1).to_string();
            resp::command(node.addr(), &["CLUSTER", "ADDSLOTSRANGE", &first, &last])?;
        }
        let seed = self.nodes[0].addr();
        for node in &self.nodes[1..] {
            let bus = node
                .config()
                .iter()
                .rev()
                .find(|(name, _)| name.eq_ignore_ascii_case("cluster-port"))
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| (u32::from(node.port()) + 10000).to_string());
            let port = node.port().to_string();
            resp::command(seed, &["CLUSTER", "MEET", "127.0.0.1", &port, &bus])?;
        }
        Ok(())
    }

    /// Waits until every node reports a healthy cluster with all nodes and slots.
    fn wait_ok(&self) -> Result<(), SpawnError> {
        let start = Instant::now();
        let wanted_nodes = format!("cluster_known_nodes:{}", self.nodes.len());
        let wanted_slots = format!("cluster_slots_assigned:{SLOTS}");
        let mut pending: Vec<&Server> = self.nodes.iter().collect();
        while !pending.is_empty() {
            let node = pending[0];
            let info = resp::command(node.addr(), &["CLUSTER", "INFO"])?;
            let info = info.as_str().unwrap_or_default().to_string();
            let has = |line: &str| info.lines().any(|l| l.trim() == line);
            if has("cluster_state:ok") && has(&wanted_nodes) && has(&wanted_slots) {
                pending.remove(0);
                continue;
            }
            let last_info = format!("{}: {}", node.addr(), info.replace("\r\n", " "));
            if start.elapsed() >= CLUSTER_OK_TIMEOUT {
                return Err(SpawnError::Cluster(format!(
                    "not ok after {CLUSTER_OK_TIMEOUT:?}; CLUSTER INFO of {last_info}"
                )));
            }
            thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

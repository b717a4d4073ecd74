//! [`RedisSession`]: a batch's requests in flight — the one-pass path for the common
//! batch, and the rounds that follow cluster redirections and `-TRYAGAIN`.

use super::*;

/// What one command of a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// `GET` of a read.
    Get,
    /// `HGETALL` of a read.
    HGetAll,
    /// `HMGET` of a read of named fields.
    HMGet,
    /// `SET`/`HSET` of a write: the request completes as written.
    Write,
    /// `ASKING`: only checked for errors.
    Aside,
    /// `ZADD`/`ZREM` of the scan index: checked for errors and redirections of the
    /// index's own slot.
    Index,
    /// `DEL` of a delete.
    Del,
    /// `ZRANGEBYLEX` of a scan: the keys to read next.
    ScanIndex,
    /// `HGETALL`/`HMGET` of a scanned key: adds a record to the scan.
    ScanRead,
    /// `GET` before a partial update of a string record.
    UpdateGet,
    /// `MGET` of a multi-key read.
    MGet,
    /// `MGET` of the keys of a cluster multi-key read that share one hash slot (one
    /// [`Group`]).
    MGetGroup,
    /// An arbitrary command ([`Request::command`]), sent as given; any reply but an
    /// error completes it.
    Command,
}

/// A command waiting for its reply on a node's connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) slot: usize,
    pub(super) part: Part,
    /// For a [`Part::ScanRead`]: the index of its key in `Work::keys`; for a
    /// [`Part::MGetGroup`]: the index of its group in `Work::groups`.
    pub(super) key: u32,
}

/// Progress of one request of the batch.
#[derive(Default)]
pub(super) struct SlotWork {
    /// Commands still unanswered.
    pub(super) waiting: u32,
    pub(super) outcome: Option<Result<Outcome, StoreError>>,
    /// Node to resend to after a redirection, and whether it was an `ASK`.
    pub(super) redirect: Option<(usize, bool)>,
    /// The same for the scan index's command (hash model), whose slot is not the key's.
    pub(super) index_redirect: Option<(usize, bool)>,
    /// Scan progress: keys found by the index (range into `Work::keys`), records and
    /// bytes read so far.
    pub(super) scan_keys: std::ops::Range<usize>,
    /// The scan's reads have been sent (its index was answered before).
    pub(super) scan_reading: bool,
    /// Reads of scanned keys that were redirected and are sent again next round.
    pub(super) scan_rereads: u32,
    pub(super) scanned: u64,
    pub(super) scanned_bytes: u64,
    /// A string update's merged value, to be written in the next round.
    pub(super) merged: Option<Vec<u8>>,
    /// A cluster multi-key read: its groups of keys (range into `Work::groups`), the
    /// groups redirected and sent again next round, and the keys found and value bytes
    /// returned so far.
    pub(super) groups: std::ops::Range<usize>,
    pub(super) group_resends: u32,
    pub(super) multi_hits: u32,
    pub(super) multi_bytes: u64,
}

/// The keys of a cluster multi-key read that share one hash slot: they go to one node
/// as one `MGET` (Redis refuses an `MGET` across slots with `CROSSSLOT`, even when one
/// node serves them all).
pub(super) struct Group {
    /// Range into `Work::group_keys`, which holds indices of the request's keys
    /// (0 is [`Request::key`], `k` the `k`-th of [`Request::more_keys`] from 1).
    pub(super) keys: std::ops::Range<usize>,
    /// The node to send the `MGET` to next and whether after an `ASK`; `None` once
    /// sent.
    pub(super) target: Option<(usize, bool)>,
}

/// Reusable per-batch state.
#[derive(Default)]
pub(super) struct Work {
    pub(super) slots: Vec<SlotWork>,
    /// Per node: the commands sent, in order.
    pub(super) queues: Vec<Vec<Pending>>,
    /// Keys a scan's index returned.
    pub(super) keys: Vec<Vec<u8>>,
    /// Per key of `keys`: the node to read it from next round and whether after an
    /// `ASK`; `None` once its read is sent.
    pub(super) key_target: Vec<Option<(usize, bool)>>,
    pub(super) keys_used: usize,
    pub(super) current: Record,
    /// Requests with something to send in the current round (kept for its capacity).
    pub(super) todo: Vec<usize>,
    /// Nodes this batch failed to connect to, with the error: the batch's other
    /// requests to them fail at once instead of each waiting for its own attempt.
    pub(super) down: Vec<(usize, StoreError)>,
    /// The groups of the batch's cluster multi-key reads, and their keys' indices.
    pub(super) groups: Vec<Group>,
    pub(super) group_keys: Vec<u32>,
    /// Scratch: (hash slot, key index) of a multi-key read's keys, to group them.
    pub(super) by_slot: Vec<(u16, u32)>,
    /// The command of each request of a batch sent the direct way
    /// ([`RedisSession::execute_direct`]).
    pub(super) parts: Vec<Part>,
    /// A `-TRYAGAIN` came back this round: the next round waits first.
    pub(super) try_again: bool,
}

impl Work {
    /// Splits the keys of multi-key read `i` by hash slot into groups, each aimed at
    /// the node that serves its slot.
    pub(super) fn plan_groups(&mut self, inner: &Inner, req: &Request, i: usize) {
        let Work {
            slots,
            groups,
            group_keys,
            by_slot,
            ..
        } = self;
        by_slot.clear();
        by_slot.extend(
            req.keys()
                .enumerate()
                .map(|(k, key)| (resp::key_slot(key), k as u32)),
        );
        by_slot.sort_unstable();
        let first = groups.len();
        for run in by_slot.chunk_by(|a, b| a.0 == b.0) {
            let start = group_keys.len();
            group_keys.extend(run.iter().map(|&(_, k)| k));
            groups.push(Group {
                keys: start..group_keys.len(),
                target: Some((inner.route_slot(run[0].0), false)),
            });
        }
        slots[i].groups = first..groups.len();
    }
}

/// Key `k` of a request: 0 is [`Request::key`], then [`Request::more_keys`].
pub(super) fn nth_key(req: &Request, k: u32) -> &[u8] {
    match k {
        0 => &req.key,
        k => req.more_keys.get(k as usize - 1),
    }
}

/// Where a part of request `i` (work `w`) goes on `node`: that node's connection and
/// queue, with an `ASKING` queued ahead of it for an `ASK` redirection. `None` (and the
/// request failed) when the node has no connection: `execute` connects first, so a
/// failure there already failed the request.
pub(super) fn redirected<'a>(
    links: &'a mut [Link],
    queues: &'a mut Vec<Vec<Pending>>,
    w: &mut SlotWork,
    i: usize,
    node: usize,
    ask: bool,
) -> Option<(&'a mut Conn, &'a mut Vec<Pending>)> {
    if queues.len() <= node {
        queues.resize_with(node + 1, Vec::new);
    }
    let Some(conn) = links.get_mut(node).and_then(|l| l.conn.as_mut()) else {
        w.outcome.get_or_insert_with(|| {
            Err(StoreError::new(StoreErrorKind::Connection, "not connected"))
        });
        return None;
    };
    let q = &mut queues[node];
    if ask {
        asking_ahead(conn, q, w, i);
    }
    Some((conn, q))
}

/// Queues an `ASKING` on `conn` for request `i`, ahead of the command an `ASK`
/// redirection sends there; its reply is set aside.
pub(super) fn asking_ahead(conn: &mut Conn, q: &mut Vec<Pending>, w: &mut SlotWork, i: usize) {
    resp::asking(&mut conn.wbuf);
    q.push(Pending {
        slot: i,
        part: Part::Aside,
        key: 0,
    });
    w.waiting += 1;
}

/// A worker's connections to a `redis` store: one per node.
pub struct RedisSession {
    pub(super) inner: Arc<Inner>,
    pub(super) links: Vec<Link>,
    pub(super) work: Work,
    /// `redis.reconnect_interval`.
    pub(super) recycle: Recycle,
}

/// How many rounds a batch may take: a scan needs two, and each redirection one more.
pub(super) const MAX_ROUNDS: usize = 6;

/// The pause before resending an `MGET` answered `-TRYAGAIN` (keys of a slot split by a
/// resharding), doubled at each of up to [`TRY_AGAIN_WAITS`] waits per batch: 10 ms to
/// 640 ms, 1.27 s in all.
pub(super) const TRY_AGAIN_FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// How many times a batch waits for a resharding before `-TRYAGAIN` counts as a
/// redirection round.
pub(super) const TRY_AGAIN_WAITS: u32 = 7;

impl RedisSession {
    /// Grows the per-node link and queue lists to hold `node`.
    pub(super) fn make_room(&mut self, node: usize) {
        if self.links.len() <= node {
            self.links.resize_with(node + 1, Link::default);
        }
        if self.work.queues.len() <= node {
            self.work.queues.resize_with(node + 1, Vec::new);
        }
    }

    pub(super) fn link(&mut self, node: usize) -> &mut Link {
        self.make_room(node);
        &mut self.links[node]
    }

    pub(super) async fn ensure_connected(&mut self, node: usize) -> Result<(), StoreError> {
        if self.link(node).conn.is_some() {
            return Ok(());
        }
        self.link(node).backoff.wait().await;
        match self.inner.connect(node).await {
            Ok(c) => {
                let link = self.link(node);
                link.conn = Some(c);
                link.backoff.succeeded();
                Ok(())
            }
            Err(e) => {
                self.link(node).backoff.failed();
                Err(e)
            }
        }
    }

    /// [`RedisSession::ensure_connected`] at most once per batch and node: after a
    /// failed attempt, the error again.
    pub(super) async fn connect_once(&mut self, node: usize) -> Result<(), StoreError> {
        if let Some((_, e)) = self.work.down.iter().find(|(n, _)| *n == node) {
            return Err(e.clone());
        }
        let r = self.ensure_connected(node).await;
        if let Err(e) = &r {
            self.work.down.push((node, e.clone()));
        }
        r
    }

    /// Encodes the commands of request `i` for this round onto its node's queue.
    ///
    /// `inner` is the session's own (cloned once per batch, so that encoding a request
    /// does not touch the shared count).
    pub(super) fn encode(&mut self, inner: &Inner, batch: &Batch, i: usize) {
        let req = &batch.slots()[i].request;
        if req.kind == OpKind::Scan && !self.work.slots[i].scan_keys.is_empty() {
            self.encode_scan_reads(req, i);
            return;
        }
        if inner.grouped(req) {
            self.encode_groups(req, i);
            return;
        }
        let model = inner.config.model;
        let offset = inner.config.data_offset;
        let layout = &inner.config.layout;
        let redirect = self.work.slots[i].redirect.take();
        let (node, ask, _) = inner.target(req, redirect);
        self.make_room(node);
        let w = &mut self.work.slots[i];
        let Some(conn) = self.links[node].conn.as_mut() else {
            // Not connected: failed below when the connection is attempted.
            self.work.queues[node].push(Pending {
                slot: i,
                part: Part::Aside,
                key: 0,
            });
            w.waiting += 1;
            return;
        };
        let out = &mut conn.wbuf;
        let q = &mut self.work.queues[node];
        let mut push = |part: Part, w: &mut SlotWork| {
            q.push(Pending {
                slot: i,
                part,
                key: 0,
            });
            w.waiting += 1;
        };
        if ask {
            resp::asking(out);
            push(Part::Aside, w);
        }
        if let Some(value) = w.merged.take() {
            resp::set(out, &req.key, &value, (req.ttl_s > 0).then_some(req.ttl_s));
            push(Part::Write, w);
            return;
        }
        if req.command.is_some() {
            encode_single(out, Part::Command, model, 0, layout, req);
            push(Part::Command, w);
            return;
        }
        let index = inner.config.index_key.as_bytes();
        let order = inner.config.index_order;
        match (req.kind, model) {
            (OpKind::Read, Model::String) if req.is_multi_read() => {
                encode_single(out, Part::MGet, model, offset, layout, req);
                push(Part::MGet, w);
            }
            (OpKind::Read, Model::Hash) if req.is_multi_read() => {
                w.outcome = Some(Err(StoreError::new(
                    StoreErrorKind::Unsupported,
                    "a multi-key read (MGET) needs the string model: redis.model=string",
                )));
            }
            (OpKind::Read, Model::String) => {
                encode_single(out, Part::Get, model, offset, layout, req);
                push(Part::Get, w);
            }
            (OpKind::Read, Model::Hash) => {
                let part = read_command(out, req, &req.key);
                push(part, w);
            }
            (OpKind::Insert | OpKind::Update, Model::String) => {
                // A partial update merges into the stored record (GET, then SET); an
                // update of every field (or a blob) replaces it with one SET.
                if req.kind == OpKind::Update && !req.value.is_blob() && !req.value.is_whole() {
                    resp::get(out, &req.key);
                    push(Part::UpdateGet, w);
                } else {
                    encode_single(out, Part::Write, model, offset, layout, req);
                    push(Part::Write, w);
                }
            }
            (OpKind::Insert | OpKind::Update, Model::Hash) => {
                hset(out, req);
                push(Part::Write, w);
                if req.kind == OpKind::Insert {
                    // The index lives in its own slot: in a cluster, another node.
                    self.pending_index(i, |out| index_add(out, order, index, &req.key));
                }
            }
            (OpKind::Delete, _) => {
                resp::del(out, &req.key);
                push(Part::Del, w);
                if model == Model::Hash {
                    self.pending_index(i, |out| {
                        resp::Command::new(out, 3)
                            .arg(b"ZREM")
                            .arg(index)
                            .arg(&req.key);
                    });
                }
            }
            (OpKind::Scan, _) => {
                // `target` sent the scan to the index's node.
                index_range(out, order, index, &req.key, req.scan_len);
                push(Part::ScanIndex, w);
            }
            (OpKind::ReadModifyWrite, _) => {
                w.outcome = Some(Err(StoreError::read_modify_write_unsplit()));
            }
        }
    }

    /// Queues the reads of a scan's keys, each on its own node: every key once the
    /// index has answered, then the keys whose reads were redirected.
    pub(super) fn encode_scan_reads(&mut self, req: &Request, i: usize) {
        let w = &mut self.work.slots[i];
        w.scan_reading = true;
        w.scan_rereads = 0;
        for j in w.scan_keys.clone() {
            let Some((node, ask)) = self.work.key_target[j].take() else {
                continue;
            };
            let Some((conn, q)) =
                redirected(&mut self.links, &mut self.work.queues, w, i, node, ask)
            else {
                continue;
            };
            read_command(&mut conn.wbuf, req, &self.work.keys[j]);
            q.push(Pending {
                slot: i,
                part: Part::ScanRead,
                key: j as u32,
            });
            w.waiting += 1;
        }
    }

    /// Queues the `MGET` of every group of cluster multi-key read `i` that has
    /// somewhere to go: all of them in the first round, then those redirected.
    pub(super) fn encode_groups(&mut self, req: &Request, i: usize) {
        let w = &mut self.work.slots[i];
        w.group_resends = 0;
        for g in w.groups.clone() {
            let group = &mut self.work.groups[g];
            let Some((node, ask)) = group.target.take() else {
                continue;
            };
            let Some((conn, q)) =
                redirected(&mut self.links, &mut self.work.queues, w, i, node, ask)
            else {
                continue;
            };
            let keys = &self.work.group_keys[group.keys.clone()];
            let mut cmd = resp::Command::new(&mut conn.wbuf, 1 + keys.len());
            cmd.arg(b"MGET");
            for &k in keys {
                cmd.arg(nth_key(req, k));
            }
            q.push(Pending {
                slot: i,
                part: Part::MGetGroup,
                key: g as u32,
            });
            w.waiting += 1;
        }
    }

    /// Queues an index command (`ZADD`/`ZREM`) for request `i` on the index key's node.
    pub(super) fn pending_index(&mut self, i: usize, encode: impl FnOnce(&mut Vec<u8>)) {
        let (node, ask) = match self.work.slots[i].index_redirect.take() {
            Some((node, true)) => (node, true),
            // After a `MOVED` the slot map already names the index's new node.
            _ => (
                self.inner.route(self.inner.config.index_key.as_bytes()),
                false,
            ),
        };
        self.make_room(node);
        let w = &mut self.work.slots[i];
        let q = &mut self.work.queues[node];
        match self.links[node].conn.as_mut() {
            Some(conn) => {
                if ask {
                    asking_ahead(conn, q, w, i);
                }
                encode(&mut conn.wbuf);
            }
            None => {
                // Fails when the connection is attempted; the request then fails.
            }
        }
        q.push(Pending {
            slot: i,
            part: Part::Index,
            key: 0,
        });
        w.waiting += 1;
    }
}

impl RedisSession {
    /// Executes a batch: in one pass when it can ([`RedisSession::execute_direct`]),
    /// else in rounds.
    pub(super) async fn execute_rounds(&mut self, batch: &mut Batch) {
        if self.inner.slots.is_none() && self.execute_direct(batch).await {
            return;
        }
        let n = batch.len();
        self.work.slots.clear();
        self.work.slots.resize_with(n, SlotWork::default);
        self.work.keys_used = 0;
        self.work.down.clear();
        self.work.groups.clear();
        self.work.group_keys.clear();
        // Cloned once per batch: encoding a request does not touch the shared count.
        let inner = Arc::clone(&self.inner);
        let mut todo = std::mem::take(&mut self.work.todo);
        let mut round = 0;
        let mut waits = 0;
        self.work.try_again = false;
        while round < MAX_ROUNDS {
            if std::mem::take(&mut self.work.try_again) {
                // Rounds that only wait out a resharding do not count as redirections.
                tokio::time::sleep(TRY_AGAIN_FIRST_WAIT * (1 << waits)).await;
                waits += 1;
            }
            // Requests with something left to send this round.
            todo.clear();
            todo.extend((0..n).filter(|&i| {
                let w = &self.work.slots[i];
                w.outcome.is_none() && w.waiting == 0 && batch.slots()[i].completed_at.is_none()
            }));
            if todo.is_empty() {
                break;
            }
            // Connect to every node this round needs.
            for &i in &todo {
                let req = &batch.slots()[i].request;
                let w = &self.work.slots[i];
                if req.kind == OpKind::Scan && !w.scan_keys.is_empty() {
                    for j in w.scan_keys.clone() {
                        if let Some((node, _)) = self.work.key_target[j] {
                            if let Err(e) = self.connect_once(node).await {
                                self.work.slots[i].outcome = Some(Err(e));
                            }
                        }
                    }
                    continue;
                }
                if inner.grouped(req) {
                    if w.groups.is_empty() {
                        self.work.plan_groups(&inner, req, i);
                    }
                    for g in self.work.slots[i].groups.clone() {
                        let Some((node, _)) = self.work.groups[g].target else {
                            continue;
                        };
                        if self.links.get(node).is_some_and(|l| l.conn.is_some()) {
                            continue;
                        }
                        if let Err(e) = self.connect_once(node).await {
                            self.work.slots[i].outcome = Some(Err(e));
                        }
                    }
                    continue;
                }
                let (node, _, index_node) = inner.target(req, w.redirect);
                let index_node = match w.index_redirect {
                    Some((n, true)) => index_node.map(|_| n),
                    _ => index_node,
                };
                for node in [Some(node), index_node].into_iter().flatten() {
                    if self.links.get(node).is_some_and(|l| l.conn.is_some()) {
                        continue;
                    }
                    if let Err(e) = self.connect_once(node).await {
                        self.work.slots[i].outcome = Some(Err(e));
                    }
                }
            }
            for q in &mut self.work.queues {
                q.clear();
            }
            for &i in &todo {
                if self.work.slots[i].outcome.is_none() {
                    // What the request queued on any node's connection (an `ASKING`,
                    // a scan's reads, an index command included) is its wire bytes.
                    let before = self.queued_bytes();
                    self.encode(&inner, batch, i);
                    batch.slots_mut()[i].wire.sent += self.queued_bytes() - before;
                }
            }
            self.exchange(batch).await;
            if !self.work.try_again || waits == TRY_AGAIN_WAITS {
                round += 1;
            }
            if round == MAX_ROUNDS {
                for w in &mut self.work.slots {
                    if w.outcome.is_none() {
                        w.outcome = Some(Err(StoreError::new(
                            StoreErrorKind::Protocol,
                            "too many redirections",
                        )));
                    }
                }
            }
        }
        self.work.todo = todo;
        for (slot, w) in batch.slots_mut().iter_mut().zip(&mut self.work.slots) {
            if slot.completed_at.is_none() {
                let r = w.outcome.take().unwrap_or(Err(StoreError::new(
                    StoreErrorKind::Protocol,
                    "request left incomplete",
                )));
                slot.complete(r);
            }
        }
    }
}

impl Session for RedisSession {
    fn ready_at(&self) -> Option<std::time::Instant> {
        crate::conn::ready_at(&self.links)
    }

    async fn prepare(&mut self) -> Result<(), StoreError> {
        let nodes = self
            .inner
            .nodes
            .read()
            .expect("node list lock poisoned")
            .len();
        for node in 0..nodes {
            self.ensure_connected(node).await?;
        }
        Ok(())
    }

    async fn execute(&mut self, batch: &mut Batch) {
        self.execute_rounds(batch).await;
        if self.recycle.count(batch.len()) {
            // memtier's --reconnect-interval: the next batch connects afresh.
            for link in &mut self.links {
                link.conn = None;
            }
        }
    }
}

impl RedisSession {
    /// The common case, without the bookkeeping of rounds: one node, already
    /// connected, and every request one command ([`single_command`]). Encodes the
    /// batch, sends it, and completes each request at its reply, stamped with the time
    /// of the read that brought it. Returns false, having done nothing, when the batch
    /// needs the general way.
    pub(super) async fn execute_direct(&mut self, batch: &mut Batch) -> bool {
        let model = self.inner.config.model;
        let offset = self.inner.config.data_offset;
        let layout = &self.inner.config.layout;
        let Some(link) = self.links.first_mut().filter(|l| l.conn.is_some()) else {
            return false;
        };
        let parts = &mut self.work.parts;
        parts.clear();
        for slot in batch.slots() {
            match single_command(model, &slot.request) {
                Some(part) => parts.push(part),
                None => return false,
            }
        }
        let conn = link.conn.as_mut().expect("checked above");
        for (slot, &part) in batch.slots_mut().iter_mut().zip(parts.iter()) {
            let before = conn.wbuf.len();
            encode_single(&mut conn.wbuf, part, model, offset, layout, &slot.request);
            slot.wire.sent += (conn.wbuf.len() - before) as u64;
        }
        let mut failed = conn.flush().await.err();
        let mut i = 0;
        while failed.is_none() && i < parts.len() {
            match resp::parse(conn.buffered()) {
                Ok(Some((Frame::Push(_), n))) => conn.consume(n),
                Ok(Some((frame, n))) => {
                    let slot = &mut batch.slots_mut()[i];
                    let result = match error_message(&frame) {
                        Some(msg) => Err(crate::error_reply(&msg)),
                        None => single_outcome(parts[i], &frame, layout, slot),
                    };
                    conn.consume(n);
                    slot.wire.received += n as u64;
                    slot.complete_at(result, conn.received_at());
                    i += 1;
                }
                Ok(None) => failed = conn.fill().await.err(),
                Err(e) => failed = Some(conn.protocol_error(e)),
            }
        }
        if let Some(e) = failed {
            // The connection is unusable: fail what waits on it and reconnect next time.
            for slot in &mut batch.slots_mut()[i..] {
                slot.complete(Err(e.clone()));
            }
            link.conn = None;
            link.backoff.failed();
        }
        true
    }

    /// Writes every node's queued commands, then reads the replies node by node.
    pub(super) async fn exchange(&mut self, batch: &mut Batch) {
        for node in 0..self.work.queues.len() {
            if self.work.queues[node].is_empty() {
                continue;
            }
            let Some(conn) = self.links[node].conn.as_mut() else {
                continue;
            };
            if let Err(e) = conn.flush().await {
                self.fail_node(batch, node, e);
            }
        }
        for node in 0..self.work.queues.len() {
            let mut k = 0;
            while k < self.work.queues[node].len() {
                let p = self.work.queues[node][k];
                k += 1;
                let Some(conn) = self.links[node].conn.as_mut() else {
                    let w = &mut self.work.slots[p.slot];
                    w.waiting = w.waiting.saturating_sub(1);
                    w.outcome.get_or_insert_with(|| {
                        Err(StoreError::new(StoreErrorKind::Connection, "not connected"))
                    });
                    continue;
                };
                let got = loop {
                    match resp::parse(conn.buffered()) {
                        Ok(Some((Frame::Push(_), n))) => conn.consume(n),
                        Ok(Some((frame, n))) => {
                            apply(&self.inner, &mut self.work, batch, p, &frame);
                            conn.consume(n);
                            batch.slots_mut()[p.slot].wire.received += n as u64;
                            break Ok(());
                        }
                        Ok(None) => {
                            if let Err(e) = conn.fill().await {
                                break Err(e);
                            }
                        }
                        Err(e) => break Err(conn.protocol_error(e)),
                    }
                };
                // The reply arrived with the connection's last read.
                let at = match got {
                    Ok(()) => conn.received_at(),
                    Err(_) => Timestamp::now(),
                };
                if let Err(e) = got {
                    // The connection is unusable: fail what waits on it and reconnect
                    // next time.
                    let w = &mut self.work.slots[p.slot];
                    w.waiting = w.waiting.saturating_sub(1);
                    w.outcome.get_or_insert_with(|| Err(e.clone()));
                    for q in &self.work.queues[node][k..] {
                        let w = &mut self.work.slots[q.slot];
                        w.waiting = w.waiting.saturating_sub(1);
                        w.outcome.get_or_insert_with(|| Err(e.clone()));
                    }
                    k = self.work.queues[node].len();
                    self.links[node].conn = None;
                    self.links[node].backoff.failed();
                }
                // Complete requests as soon as their last reply is in, so each is timed
                // to its own reply.
                let w = &mut self.work.slots[p.slot];
                if w.waiting == 0
                    && w.redirect.is_none()
                    && w.index_redirect.is_none()
                    && w.merged.is_none()
                {
                    if let Some(r) = finish(w, &batch.slots()[p.slot].request) {
                        batch.slots_mut()[p.slot].complete_at(r, at);
                    }
                }
            }
        }
        // Redirections and follow-ups are sent in the next round.
        for w in &mut self.work.slots {
            if w.redirect.is_some() || w.index_redirect.is_some() || w.merged.is_some() {
                w.outcome = None;
            }
        }
    }

    /// Bytes waiting in every connection's write buffer.
    fn queued_bytes(&self) -> u64 {
        crate::conn::queued_bytes(self.links.iter().filter_map(|l| l.conn.as_ref()))
    }

    pub(super) fn fail_node(&mut self, batch: &mut Batch, node: usize, e: StoreError) {
        for p in self.work.queues[node].drain(..) {
            let w = &mut self.work.slots[p.slot];
            w.waiting = w.waiting.saturating_sub(1);
            if w.outcome.is_none() {
                w.outcome = Some(Err(e.clone()));
            }
            if w.waiting == 0 && batch.slots()[p.slot].completed_at.is_none() {
                let r = w.outcome.take().expect("set just above");
                batch.slots_mut()[p.slot].complete(r);
            }
        }
        self.links[node].conn = None;
        self.links[node].backoff.failed();
    }
}

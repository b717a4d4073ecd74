//! `-D/--debug`: every request and its reply on stderr, as memtier_benchmark's debug
//! log shows them (`server 127.0.0.1:6379: SET key=[memtier-42] value_len=32
//! expiry=0`, `server …: GET key=[memtier-7]`, then how the reply was handled), one
//! line each, written by the client that sent them.

use std::io::Write;

use kvlab_core::{Batch, OpKind, Outcome, Slot, Tap, TapClient, Timestamp, ValueRef};

/// The tap that prints each request and reply (`--debug`).
#[derive(Debug)]
pub struct DebugTap {
    server: String,
    /// The arbitrary commands' names, by [`kvlab_core::CommandId`].
    commands: Vec<String>,
}

impl DebugTap {
    /// Prints the requests sent to `server` (as memtier names it: `127.0.0.1:6379`);
    /// `commands`: the names of `--command`s, in order.
    pub fn new(server: impl Into<String>, commands: Vec<String>) -> DebugTap {
        DebugTap {
            server: server.into(),
            commands,
        }
    }
}

impl Tap for DebugTap {
    fn client(&self, client: usize, _clients: usize) -> Box<dyn TapClient> {
        Box::new(DebugClient {
            label: format!("server {} (client {client})", self.server),
            commands: self.commands.clone(),
            line: String::new(),
        })
    }
}

struct DebugClient {
    label: String,
    commands: Vec<String>,
    line: String,
}

/// A key or argument as memtier prints one: the bytes, non-printable ones escaped.
fn shown(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

impl DebugClient {
    fn request(&self, slot: &Slot) -> String {
        let r = &slot.request;
        let key = shown(&r.key);
        if let Some(id) = r.command.id {
            let name = self
                .commands
                .get(usize::from(id.0))
                .map_or("COMMAND", String::as_str);
            let args: Vec<String> = r.command.args.iter().map(shown).collect();
            return format!("{name} {}", args.join(" "));
        }
        match r.kind {
            OpKind::Read if !r.more_keys.is_empty() => {
                let last = r.more_keys.iter().last().map(shown).unwrap_or_default();
                format!("MGET {} keys [{key}] .. [{last}]", r.more_keys.len() + 1)
            }
            OpKind::Read => format!("GET key=[{key}]"),
            OpKind::Insert | OpKind::Update => {
                let len = match r.value.get() {
                    ValueRef::Blob(b) => b.len(),
                    ValueRef::Fields(f) => f.iter().map(|(_, v)| v.len()).sum(),
                };
                format!("SET key=[{key}] value_len={len} expiry={}", r.ttl_s)
            }
            other => format!("{} key=[{key}]", other.ycsb_name()),
        }
    }

    fn reply(slot: &Slot) -> String {
        let received = slot.wire.received;
        match &slot.result {
            Ok(Outcome::Hit { bytes }) => {
                format!("hit, {bytes} value bytes ({received} bytes on the wire)")
            }
            Ok(Outcome::Miss) => format!("miss ({received} bytes on the wire)"),
            Ok(Outcome::MultiRead { hits, misses, .. }) => {
                format!("{hits} hits, {misses} misses ({received} bytes on the wire)")
            }
            Ok(_) => format!("ok ({received} bytes on the wire)"),
            Err(e) => format!("error: {e}"),
        }
    }
}

impl TapClient for DebugClient {
    fn batch(&mut self, batch: &Batch, _started: Timestamp) {
        self.line.clear();
        for slot in batch.slots() {
            let request = self.request(slot);
            let reply = Self::reply(slot);
            self.line.push_str(&format!(
                "{0}: {request}\n{0}: handled response: {reply}\n",
                self.label
            ));
        }
        // One write a batch, so that clients' lines do not interleave mid-line.
        let _ = std::io::stderr().lock().write_all(self.line.as_bytes());
    }
}

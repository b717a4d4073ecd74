//! The expected-state log of crash tests (`--expected-log FILE`): what a writer's store
//! acknowledged, appended as it happens, and the tally of what a store kept against it —
//! db_stress's expected state, as a file that survives the writer being killed.
//!
//! - [`ExpectedLog`]: a runner tap that appends every acknowledged write (`I`, `U` or
//!   `D`, a tab, the key, a newline), one `write(2)` per completed batch, after the store
//!   answered: the file holds a subset of what was acknowledged (a write acknowledged in
//!   the instant before a kill may be missing from it, never the reverse).
//! - [`ExpectedState::read`]: each key's last acknowledged write — present (insert,
//!   update) or absent (delete); a line the writer died in the middle of is not read.
//! - [`CrashCheck`]: each record as read back ([`Found`]) set against that state:
//!   recovered, lost, corrupted, unacknowledged but present.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::sync::Arc;

use kvlab_core::{Batch, OpKind, Outcome, Tap, TapClient, Timestamp};

use crate::Refusal;

/// The tap of `--expected-log`: appends every acknowledged write to the file.
#[derive(Debug)]
pub struct ExpectedLog {
    file: File,
}

impl ExpectedLog {
    /// Opens `path` for appending (created when missing).
    pub fn append(path: &Path) -> std::io::Result<ExpectedLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(ExpectedLog { file })
    }
}

impl Tap for ExpectedLog {
    fn client(&self, _client: usize, _clients: usize) -> Box<dyn TapClient> {
        Box::new(ExpectedLogClient {
            file: self
                .file
                .try_clone()
                .expect("a second handle of the expected-state log"),
            buf: Vec::with_capacity(4096),
        })
    }
}

struct ExpectedLogClient {
    file: File,
    buf: Vec<u8>,
}

impl TapClient for ExpectedLogClient {
    fn batch(&mut self, batch: &Batch, _started: Timestamp) {
        self.buf.clear();
        for slot in batch.slots() {
            let op = match slot.request.kind {
                OpKind::Insert => b'I',
                OpKind::Update | OpKind::ReadModifyWrite => b'U',
                OpKind::Delete => b'D',
                OpKind::Read | OpKind::Scan => continue,
            };
            if !matches!(
                slot.result,
                Ok(Outcome::Written { .. } | Outcome::Deleted | Outcome::Hit { .. })
            ) {
                continue;
            }
            self.buf.extend_from_slice(&[op, b'\t']);
            self.buf.extend_from_slice(&slot.request.key);
            self.buf.push(b'\n');
        }
        if !self.buf.is_empty() {
            // One append per batch (the file is shared by the clients: O_APPEND keeps the
            // lines whole). A failed write loses lines, which can only hide a lost write.
            let _ = self.file.write_all(&self.buf);
        }
    }
}

/// Forwards every batch to two taps (`--record`, `--expected-log`, memtier's `-D`).
#[derive(Debug)]
pub struct BothTaps(pub Arc<dyn Tap>, pub Arc<dyn Tap>);

impl BothTaps {
    /// The tap that shows every batch to `a` and `b`, whichever of them there are.
    pub fn join(a: Option<Arc<dyn Tap>>, b: Option<Arc<dyn Tap>>) -> Option<Arc<dyn Tap>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(Arc::new(BothTaps(a, b))),
            (a, b) => a.or(b),
        }
    }
}

impl Tap for BothTaps {
    fn client(&self, client: usize, clients: usize) -> Box<dyn TapClient> {
        Box::new(BothClients(
            self.0.client(client, clients),
            self.1.client(client, clients),
        ))
    }
}

struct BothClients(Box<dyn TapClient>, Box<dyn TapClient>);

impl TapClient for BothClients {
    fn batch(&mut self, batch: &Batch, started: Timestamp) {
        self.0.batch(batch, started);
        self.1.batch(batch, started);
    }
}

/// Each key's last acknowledged write in an expected-state log: `true` when the record
/// must be there (insert or update), `false` when it must not (delete).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExpectedState {
    last: HashMap<Vec<u8>, bool>,
}

impl ExpectedState {
    /// Reads the log at `path`; a line it cannot read names the file and line.
    pub fn read(path: &Path) -> Result<ExpectedState, Refusal> {
        let file = File::open(path).map_err(|e| {
            Refusal(format!(
                "--expected-log {}: {e}; a load or run with --expected-log writes it",
                path.display()
            ))
        })?;
        let mut last = HashMap::new();
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        let mut number = 0u64;
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Refusal(format!("--expected-log {}: {e}", path.display())))?;
            if n == 0 {
                break;
            }
            number += 1;
            if line.last() != Some(&b'\n') {
                // The writer died in the middle of this line: it was not acknowledged whole.
                break;
            }
            line.pop();
            let (present, key) = match line.split_first() {
                Some((b'I' | b'U', rest)) => (true, rest),
                Some((b'D', rest)) => (false, rest),
                _ => {
                    return Err(Refusal(format!(
                        "{}:{number}: expected `I`, `U` or `D`, a tab and a key",
                        path.display()
                    )))
                }
            };
            let Some(key) = key.strip_prefix(b"\t") else {
                return Err(Refusal(format!(
                    "{}:{number}: expected a tab after the operation",
                    path.display()
                )));
            };
            last.insert(key.to_vec(), present);
        }
        Ok(ExpectedState { last })
    }

    /// Keys with an acknowledged write.
    pub fn len(&self) -> usize {
        self.last.len()
    }

    /// Whether no write was acknowledged.
    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }

    /// Whether `key`'s record must be there (`Some(true)`), must not (`Some(false)`), or
    /// was never acknowledged (`None`).
    pub fn expected(&self, key: &[u8]) -> Option<bool> {
        self.last.get(key).copied()
    }
}

/// How a record was found when read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// There, as written.
    Intact,
    /// There, not as written.
    Corrupted,
    /// Not there.
    Missing,
    /// The read failed.
    Error,
}

/// What `verify --expected-log` found (each round of `kvlab crash` in `crash.json`).
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CrashCheck {
    /// Writes the log holds (each key's last).
    pub acknowledged: u64,
    /// Acknowledged and kept.
    pub recovered: u64,
    /// Acknowledged and not kept.
    pub lost: u64,
    /// Found, but not as written.
    pub corrupted: u64,
    /// Not acknowledged (in flight when the writer died), yet kept.
    pub unacknowledged_present: u64,
    /// Reads that failed.
    pub errors: u64,
    /// Acknowledged keys outside the dataset's records (not checked).
    pub unchecked: u64,
    /// The first lost keys.
    pub first_lost: Vec<String>,
}

/// How many lost keys a check names.
const FIRST_LOST: usize = 10;

impl CrashCheck {
    /// A check against `state`, before any record is counted.
    pub fn new(state: &ExpectedState) -> CrashCheck {
        CrashCheck {
            acknowledged: state.len() as u64,
            // Every acknowledged key is unchecked until a record of the dataset has it.
            unchecked: state.len() as u64,
            ..CrashCheck::default()
        }
    }

    /// Counts the record `key` of the dataset, found as `found` (`None`: not read, the
    /// check was interrupted), against `state`.
    pub fn count(&mut self, state: &ExpectedState, key: &[u8], found: Option<Found>) {
        let expected = state.expected(key);
        if expected.is_some() {
            self.unchecked -= 1;
        }
        match (found, expected) {
            (None, _) => {}
            (Some(Found::Error), _) => self.errors += 1,
            (Some(Found::Corrupted), _) => self.corrupted += 1,
            (Some(Found::Intact), Some(true)) | (Some(Found::Missing), Some(false)) => {
                self.recovered += 1
            }
            (Some(Found::Intact), None) => self.unacknowledged_present += 1,
            (Some(Found::Missing), None) => {}
            (Some(Found::Intact | Found::Missing), Some(_)) => {
                self.lost += 1;
                if self.first_lost.len() < FIRST_LOST {
                    self.first_lost
                        .push(String::from_utf8_lossy(key).into_owned());
                }
            }
        }
    }

    /// Whether the store broke a promise: a write lost, a record corrupted, a read failed.
    pub fn failed(&self) -> bool {
        self.lost > 0 || self.corrupted > 0 || self.errors > 0
    }
}

//! The `null` store: accepts everything, stores nothing.

use kvlab_core::{Batch, Capabilities, OpKind, Outcome, Session, Store, StoreError};

/// A store that completes every request at once without storing anything: reads hit
/// with zero bytes (a multi-key read finds every key), writes succeed, scans return nothing. Running a workload against it
/// measures kvlab's own cost per operation (generation, timing, recording).
#[derive(Debug, Default)]
pub struct NullStore;

/// A [`NullStore`] session.
#[derive(Debug, Default)]
pub struct NullSession;

impl Store for NullStore {
    type Session = NullSession;

    fn name(&self) -> &'static str {
        "null"
    }

    fn capabilities(&self) -> Capabilities {
        // Takes everything: every key is there, every write and command succeeds.
        Capabilities {
            scan: true,
            multi_read: true,
            commands: true,
            ttl: true,
            ..Capabilities::NONE
        }
    }

    fn session(&self) -> Result<NullSession, StoreError> {
        Ok(NullSession)
    }
}

impl Session for NullSession {
    #[inline]
    fn execute(&mut self, batch: &mut Batch) -> impl std::future::Future<Output = ()> + Send {
        for slot in batch.slots_mut() {
            let outcome = match slot.request.kind {
                // Every key is there, with an empty value.
                OpKind::Read if slot.request.is_multi_read() => Ok(Outcome::MultiRead {
                    hits: slot.request.key_count() as u32,
                    misses: 0,
                    bytes: 0,
                }),
                OpKind::Read => Ok(Outcome::Hit { bytes: 0 }),
                OpKind::Scan => Ok(Outcome::Scanned {
                    records: 0,
                    starts_at_key: false,
                    bytes: 0,
                }),
                OpKind::Insert | OpKind::Update => {
                    let bytes = slot.request.written_bytes();
                    Ok(Outcome::Written { bytes })
                }
                OpKind::Delete => Ok(Outcome::Deleted),
                OpKind::ReadModifyWrite => Err(StoreError::read_modify_write_unsplit()),
            };
            slot.complete(outcome);
        }
        std::future::ready(())
    }
}

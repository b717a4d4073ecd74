//! kvlab's core vocabulary, shared by every other crate.
//!
//! The types that matter:
//!
//! - [`Request`]: one operation a workload asks for (kind, key, fields, scan length), held
//!   in reusable owned buffers so that generating a request never allocates once warm.
//! - [`Store`] opens [`Session`]s; a session executes a [`Batch`] of requests (the batch
//!   length is the pipeline depth) and fills each slot with an [`Outcome`] or a
//!   [`StoreError`]. A miss is an outcome ([`Outcome::Miss`]), never an error.
//! - [`Workload`] makes one [`OpSource`] per client: the seam between workloads and the
//!   runner. A source fills requests, may say when each is due ([`OpSource::due`]), and
//!   learns how each ended; a workload's [`Needs`] are checked against the store's
//!   [`Capabilities`] before it runs. A [`Dataset`] is the records a load phase writes
//!   and a verify phase reads back.
//! - [`inline`]: embedded engines implement a few blocking primitives ([`inline::Engine`])
//!   and share one request loop, refusals and YCSB's partial-update merge.
//! - [`Record`]: a YCSB-style record — named fields with byte values — stored flat in one
//!   buffer, with the single-value encoding that key-value engines store.
//!
//! This crate knows nothing of threads, histograms, async runtimes or engines: it depends
//! on `std` and `thiserror` only.

#![warn(missing_docs)]

mod bytes;
mod clock;
pub mod inline;
mod layout;
mod options;
mod record;
mod shared;
mod source;
mod store;
mod tap;
mod value;

pub use bytes::parse_bytes;
pub use clock::Timestamp;
pub use layout::ValueLayout;
pub use options::StoreOptions;
pub use record::{FieldFilter, FieldSpan, Record, RecordDecodeError};
pub use shared::SharedBytes;
pub use source::{Dataset, Needs, OpSource, Ticket, Verdict, Workload};
pub use store::{
    Batch, Capabilities, Command, CommandId, KeyList, OpKind, Outcome, Request, Session, Slot,
    StatValue, Status, Store, StoreError, StoreErrorKind, StoreStats, WireBytes, MERGE_COMMAND,
};
pub use tap::{Tap, TapClient};
pub use value::{ReadFields, ReadShape, Value, ValueRef};

/// Drives a future to completion on the current thread by polling it in a loop.
///
/// Meant for sessions of embedded stores, whose futures are ready on first poll; a
/// future that returns `Pending` is polled again at once (busy-waiting), so network
/// sessions should be driven by an async runtime instead.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        std::hint::spin_loop();
    }
}

//! kvlab's traces: what really happened, one request at a time.
//!
//! - [`TraceRecord`]: one request of any trace, in one vocabulary (time, [`Op`], key,
//!   sizes, scan length, TTL, column family or tenant, next access, and for runs kvlab
//!   recorded, outcome and latency). Readers fill a record in place, so reading a trace
//!   allocates nothing per request once warm.
//! - [`TraceInfo`]: what a trace says about itself — its format, whether keys are bytes
//!   or numeric ids ([`KeyEncoding`]), its time unit, whether it carries sizes.
//! - [`TraceReader`]: the one interface every format's reader implements.

#![warn(missing_docs)]

pub mod analyze;
pub mod error;
pub mod record;

pub use error::TraceError;
pub use record::{key_id, KeyEncoding, Op, Outcome, TimeUnit, TraceInfo, TraceRecord};

/// A trace being read, one record at a time.
pub trait TraceReader: Send {
    /// What the trace says about itself (known before the first record).
    fn info(&self) -> &TraceInfo;

    /// Fills `rec` with the next request (after [`TraceRecord::clear`]); `Ok(false)` at
    /// the end of the trace. After an error the reader is done.
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError>;
}

impl<R: TraceReader + ?Sized> TraceReader for Box<R> {
    fn info(&self) -> &TraceInfo {
        (**self).info()
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        (**self).read(rec)
    }
}

//! The one error type of the cache simulator.

use kvlab_trace::TraceError;

/// What can go wrong when loading a trace for simulation or parsing a simulation's inputs.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The trace reader failed (its error names the file and offset).
    #[error("reading the trace for simulation: {0}")]
    Trace(#[from] TraceError),
    /// A trace has more distinct objects than the simulator indexes (2³² − 1).
    #[error("the trace has more than {max} distinct objects")]
    TooManyObjects {
        /// The largest number of distinct objects supported.
        max: u64,
    },
    /// A capacity could not be parsed.
    #[error("cache size {text:?}: expected a count (`1000`), bytes with a unit (`64MiB`, `2GB`) or a fraction of the working set (`5%`, `0.05`): {reason}")]
    Capacity {
        /// The text given.
        text: String,
        /// What was wrong with it.
        reason: &'static str,
    },
    /// A policy name or its parameters could not be parsed.
    #[error("policy {text:?}: {reason}")]
    Policy {
        /// The text given.
        text: String,
        /// What was wrong with it.
        reason: String,
    },
    /// A policy cannot run at this capacity (libCacheSim refuses it too).
    #[error("{policy} cannot run with a cache of {cache_size}: {reason}")]
    Unsupported {
        /// The policy's name.
        policy: String,
        /// The capacity asked for.
        cache_size: u64,
        /// Why.
        reason: &'static str,
    },
    /// A temporary file of a streamed simulation (next-access times) failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

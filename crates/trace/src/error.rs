//! The one error type of kvlab-trace.

use std::path::PathBuf;

/// What went wrong reading or writing a trace. Every variant names the file and, where
/// there is one, the byte offset or line, and says what was expected.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes at `offset` are not what the format allows.
    #[error("{path}: at byte {offset}: {what}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the bad record or field in the (decompressed) stream.
        offset: u64,
        /// What was expected and what was found.
        what: String,
    },
    /// A text line is not what the format allows.
    #[error("{path}:{line}: {what}")]
    BadLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What was expected and what was found.
        what: String,
    },
    /// The format could not be told, or an option does not fit it.
    #[error("{path}: {what}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

//! [`ModelError`]: why a trace could not be fitted or a model file not read.

use std::path::PathBuf;

/// An error of kvlab-model. Errors about a model file name the file, the line and the
/// key, and say what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A key of a model file holds a value of the wrong type or out of range, or is
    /// not a key the table allows.
    #[error("{}:{line}: key `{key}`: {message}", path.display())]
    Key {
        /// The model file.
        path: PathBuf,
        /// 1-based line of the key (0: not found in the text).
        line: usize,
        /// The key (`mix_get_ratio`, …).
        key: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A model file is not valid TOML, or lacks a table.
    #[error("{}:{line}: {message}", path.display())]
    Syntax {
        /// The model file.
        path: PathBuf,
        /// 1-based line (0: the whole file).
        line: usize,
        /// What the parser expected.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The trace could not be read.
    #[error("reading the trace: {0}")]
    Trace(#[from] kvlab_trace::TraceError),
    /// A model cannot generate requests with the key model asked for (db_bench would
    /// refuse the flags).
    #[error("mixgraph {key_model}: {message}")]
    Generate {
        /// The key model (`Prefix_dist`, …).
        key_model: String,
        /// Why, as db_bench's validation says it.
        message: String,
    },
    /// The trace holds nothing a model can be fitted to.
    #[error("trace {source_name}: {what}")]
    Unfit {
        /// The trace's name ([`crate::FitOptions::source`]).
        source_name: String,
        /// What is missing.
        what: String,
    },
}

//! kvlab's workload models: db_bench's `mixgraph` model (Cao et al., "Characterizing,
//! Modeling, and Benchmarking RocksDB Key-Value Workloads at Facebook", FAST'20) fitted
//! to any trace kvlab reads, kept as a TOML model file, and run by kvlab's bit-exact
//! mixgraph generator.
//!
//! - [`fit()`]: one pass over a [`kvlab_trace::TraceReader`] (memory bounded by the
//!   distinct keys) and the fits, with [`FitOptions`]; gives a [`Fit`]: the [`Model`]
//!   and the [`FitReport`] listing every candidate's error.
//! - [`Model`]: the `[mixgraph]` table of db_bench flag names and a `[fit]` table of
//!   errors; [`Model::to_toml`] writes it commented, [`Model::from_toml`] reads it back
//!   (unknown keys, wrong types and out-of-range values are errors naming the file, line
//!   and key), [`Model::to_config`] gives the [`kvlab_dist::mixgraph::MixGraphConfig`]
//!   [`kvlab_dist::mixgraph::MixGraph`] runs.
//!
//! The pieces: [`sizes`] (value sizes and scan lengths: generalized Pareto, Pareto,
//! Weibull, lognormal, exponential and power fitted to the empirical CDF, chosen by
//! RMSE as in the paper), [`keys`] (key-range hotness `a·e^{bx} + c·e^{dx}` and the
//! in-range power model in db_bench's conventions), [`qps`] (the sine rate against a
//! constant), [`fidelity`] (the model against the trace it was fitted to, and against
//! YCSB's distributions, as request streams over the trace's key space: the paper's
//! Figure 14), [`locality`] (kvlab's locality layer — an LRU stack with steps — fitted
//! to the order of the trace's keys; not part of db_bench's model).

#![warn(missing_docs)]

pub mod error;
pub mod fidelity;
pub mod fit;
pub mod fuzzing;
pub mod keys;
pub mod locality;
pub mod model;
pub mod qps;
pub mod report;
pub mod sizes;
mod solve;

pub use error::ModelError;
pub use fit::{fit, Fit, FitOptions};
pub use keys::RangeCut;
pub use model::{KvlabParams, MixGraphParams, Model};
pub use report::{FitReport, KeyRangeRule, OpCounts};

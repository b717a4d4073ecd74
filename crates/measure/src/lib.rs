//! kvlab's measurement: per-worker recording, exact merging, and export.
//!
//! The main types and how they connect:
//!
//! - [`Recorder`]: one per worker thread. HDR histograms in nanoseconds per [`OpKind`]
//!   (service time, and time from the intended start for open-loop runs), counts per
//!   [`Status`], error counts per [`StoreErrorKind`], byte counters. Recording takes no lock
//!   and never allocates; recorders merge exactly with [`Recorder::merge`].
//! - [`RunSummary`]: what a merged recorder says about a run ([`Recorder::summary`]) —
//!   throughput and a [`LatencySummary`] in microseconds per kind. It is serialized into the
//!   result document and printed in YCSB's text format by [`write_ycsb_text`].
//! - Over time: [`TimelineRow`]s (one per interval, written by [`write_timeline_csv`]) and
//!   an [`IntervalLog`] of per-interval histograms that HdrHistogram's tools read.
//! - Per client, with memtier's `--client-stats`: [`ClientStats`], second by second.
//! - Live, while a phase runs: [`LiveMetrics`], the measured intervals so far in
//!   Prometheus' text exposition format (`--metrics`).
//! - Percentiles by Java HdrHistogram's rank rule ([`percentile::value_at_percentile`]),
//!   so that every figure kvlab prints is the one Java's tools read from its logs.
//! - For one histogram: its percentile distribution
//!   ([`write_percentile_distribution`]) and a one-histogram log ([`write_histogram_log`]),
//!   as HdrHistogram_c prints them.
//!
//! [`OpKind`]: kvlab_core::OpKind
//! [`Status`]: kvlab_core::Status
//! [`StoreErrorKind`]: kvlab_core::StoreErrorKind

mod client_stats;
mod hdr_text;
mod interval;
pub mod percentile;
pub mod prometheus;
mod recorder;
mod summary;
mod timeline;

pub use client_stats::{
    ClientSecond, ClientStats, CommandSecond, CLIENT_HIGHEST_TRACKABLE_US,
    CLIENT_SIGNIFICANT_DIGITS,
};
pub use hdr_text::{
    percentile_steps, write_histogram_log, write_percentile_distribution, PercentileFormat,
    PercentileStep,
};
pub use interval::{is_log_tag, IntervalLog};
pub use prometheus::{LiveMetrics, RunLabels};
pub use recorder::{Recorder, HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS};
pub use summary::{write_ycsb_text, LatencySummary, OpSummary, RunSummary};
pub use timeline::{write_timeline_csv, TimelineRow};

/// A failure to write measurements.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// Writing the output failed.
    #[error("writing measurements: {0}")]
    Io(#[from] std::io::Error),
    /// A histogram could not be serialized for an interval log.
    #[error("serializing a histogram: {0}")]
    Serialize(#[from] hdrhistogram::serialization::V2DeflateSerializeError),
}

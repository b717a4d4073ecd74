//! The `runner` section of `result.json`: how a phase was run, and what the runner saw
//! besides the latency histograms (keys found, integrity checks, schedule lag).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a phase was run. The fields are in the JSON's key order (alphabetical, as earlier
/// documents wrote them); every field has a default, so older documents that lack one
/// still load, and keys this version does not know are kept in [`RunnerSection::other`].
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(default)]
pub struct RunnerSection {
    /// Sessions (connections) per thread.
    pub connections_per_thread: u64,
    /// `--duration`, in seconds.
    pub duration_s: Option<f64>,
    /// The run stopped because `--max-errors` was exceeded.
    pub error_budget_exceeded: bool,
    /// Measured operations that failed with a store error (the sum of `results.errors`).
    pub failed_operations: u64,
    /// Why the command failed (exit code 1): records a `load` did not load, or failed
    /// operations beyond the error budget (`--max-errors`, 0 by default); `None` when it
    /// did not fail for errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// `--fault`: each fault, when it was in force (`fault`, `from_s`, `to_s` in
    /// seconds from the phase's start; null times and an `error` when it never was:
    /// Toxiproxy refused it, or the phase ended before its window).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<serde_json::Value>,
    /// The first failures of each error kind, with the store's own messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub first_errors: Vec<FirstError>,
    /// Thread plans: each group's results (a summary per group, in the plan's order).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_results: Option<Vec<serde_json::Value>>,
    /// `kvlab import`: what was read (lines, blank, malformed, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import: Option<serde_json::Value>,
    /// Reads whose values were checked (`dataintegrity=true`).
    pub integrity_checked: u64,
    /// Checked reads whose values did not match.
    pub integrity_failed: u64,
    /// The reporting interval, in seconds.
    pub interval_s: f64,
    /// Keys that reads found, counted per key (a multi-key read counts each).
    pub keys_found: u64,
    /// Keys that reads did not find, counted per key.
    pub keys_not_found: u64,
    /// Closed or open loop.
    #[serde(rename = "loop")]
    pub loop_kind: Loop,
    /// `--max-errors`.
    pub max_errors: Option<u64>,
    /// The largest lag behind the open-loop schedule (or the source's due times), in
    /// milliseconds.
    pub max_schedule_lag_ms: f64,
    /// When the measured part started (RFC 3339, UTC): time 0 of `timeline.csv` and the
    /// interval log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_start: Option<String>,
    /// A merged result (`kvlab merge`): the results it was merged from, in shard order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedFrom>,
    /// Measured operations asked for (none with `--duration`).
    pub operations: Option<u64>,
    /// The `-p` overrides, as given.
    pub overrides: Vec<String>,
    /// Requests in flight per session.
    pub pipeline: u64,
    /// Thread plans: each group's operation counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_groups: Option<serde_json::Value>,
    /// The property files, in the order read.
    pub property_files: Vec<String>,
    /// Measured reads that found no record over all reads that completed, counted per key
    /// (`keys_not_found / (keys_found + keys_not_found)`); `None` without reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_miss_share: Option<f64>,
    /// Reads missed on a workload whose reads should all find their records (YCSB's
    /// workloads read only loaded or inserted keys; cache workloads, memtier and trace
    /// replays expect misses): the store was not loaded, was loaded elsewhere (another
    /// `--path`, another `recordcount`), or lost data (an evicting server).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reads_missed: bool,
    /// The part of a sharded experiment this process ran (`--shard I/N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Open loop: the mean target rate over all clients, operations per second.
    pub target_rate_ops_per_sec: Option<f64>,
    /// Open loop with a sine target rate: its mean, amplitude and period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_rate_sine: Option<SineRate>,
    /// Worker threads.
    pub threads: u64,
    /// Requests still waiting for a reply when the run stopped (abandoned, not counted
    /// as operations).
    pub unfinished_requests: u64,
    /// Seconds of the measured part the store could not be reached (about: an interval
    /// with only failed connections counts whole, one with some answers half).
    pub unreachable_s: f64,
    /// Warm-up before measuring.
    pub warmup: Option<serde_json::Value>,
    /// Keys this version of kvlab does not know, from documents written by others.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

/// One of N processes of a sharded experiment (`--shard I/N`): it loads the I-th of N
/// contiguous slices of the records and runs the I-th share of the operations.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shard {
    /// The shard, from 0.
    pub index: u32,
    /// How many shards there are.
    pub count: u32,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `I/N` with `0 <= I < N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}`: expected I/N, the shard I (from 0) of N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(format!(
                "`{s}`: shard {index} of {count} does not exist (0 <= I < N)"
            ));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// This shard's part of `total` items split as YCSB splits work between threads:
    /// `(first, count)` where shard `i` takes `total / N` items, plus one if
    /// `i < total % N`, after the parts of the shards before it.
    pub fn part(&self, total: u64) -> (u64, u64) {
        let (n, i) = (u64::from(self.count), u64::from(self.index));
        let (each, extra) = (total / n, total % n);
        (i * each + i.min(extra), each + u64::from(i < extra))
    }
}

/// One input of a merged result.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MergedFrom {
    /// The result directory it was read from, as given.
    pub dir: String,
    /// Its shard, when it ran as one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Its measured part's wall-clock start (RFC 3339).
    pub measured_start: Option<String>,
    /// Its operations.
    pub operations: u64,
    /// Its own throughput over its own measured time.
    pub throughput_ops_per_sec: f64,
    /// The machine it ran on.
    pub hostname: String,
}

/// One failed request as the store reported it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FirstError {
    /// The error's kind (`full`, `server`, `connection`, …, as in `results.errors`).
    pub kind: String,
    /// The store's message (e.g. LMDB's `MDB_MAP_FULL`, Redis' `OOM command not allowed…`).
    pub message: String,
}

/// Closed loop (each client sends when its previous request completes) or open loop (a
/// target rate, or a source's due times).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Loop {
    /// Closed loop.
    #[default]
    Closed,
    /// Open loop.
    Open,
}

/// A sine target rate: `mean + amplitude × sin(2π t / period)`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq)]
pub struct SineRate {
    /// The average rate, operations per second.
    pub mean: f64,
    /// The swing above and below the mean.
    pub amplitude: f64,
    /// One full swing, in seconds.
    pub period_s: f64,
}

impl RunnerSection {
    /// Threads × connections × pipeline as a report names the clients, each at least 1
    /// (older documents may lack them).
    pub fn clients(&self) -> (u64, u64, u64) {
        (
            self.threads.max(1),
            self.connections_per_thread.max(1),
            self.pipeline.max(1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    /// Shards split like YCSB's threads: every item once, in order, the first shards
    /// taking one more of the remainder.
    #[test]
    fn shards_split_every_item_once_in_order() {
        for (total, n) in [(10u64, 3u32), (2, 5), (0, 2), (1_000_000, 7)] {
            let mut next = 0;
            for i in 0..n {
                let (first, count) = Shard { index: i, count: n }.part(total);
                assert_eq!(first, next, "{total} {i}/{n}");
                next += count;
            }
            assert_eq!(next, total);
        }
        assert_eq!(Shard { index: 0, count: 3 }.part(10), (0, 4));
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        for bad in ["3/3", "0/0", "1", "a/2", "-1/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}

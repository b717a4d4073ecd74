//! `trace stats`: what a trace holds, in one streaming pass.
//!
//! [`Stats::collect`] reads any [`TraceReader`] to its end and counts requests, distinct
//! keys (by [`TraceRecord::id`]), bytes, ops, the first and last timestamps and the key-
//! and value-size distributions. Its JSON has exactly the field names of [`Stats`]
//! (scripts read them). A trace damaged part-way (a RocksDB trace cut inside a record, a
//! kvtrace without its end marker) gives the statistics of the records before the
//! damage, with [`Stats::damaged_at`] and [`Stats::damage`] saying where and what.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::BuildHasherDefault;

use serde::{Deserialize, Serialize};

use crate::analyze::IdHasher;
use crate::{KeyEncoding, TimeUnit, TraceError, TraceReader, TraceRecord};

/// Min, max, mean and percentiles of a size (bytes). Percentiles are nearest-rank: the
/// smallest size that at least p % of the requests do not exceed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeSummary {
    /// Smallest.
    pub min: u64,
    /// Largest.
    pub max: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (nearest rank).
    pub p50: u64,
    /// 99th percentile (nearest rank).
    pub p99: u64,
}

/// Statistics of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// The reader's format name.
    pub format: String,
    /// Records read (each WriteBatch entry and MultiGet key counts once).
    pub requests: u64,
    /// Distinct [`TraceRecord::id`]s.
    pub distinct_keys: u64,
    /// Sum of [`TraceRecord::obj_size`]; `None` (JSON null) when the format has no sizes.
    pub bytes: Option<u64>,
    /// Records per op name ([`crate::Op::name`]).
    pub ops: BTreeMap<String, u64>,
    /// The first record's timestamp, in `time_unit`.
    pub first_ts: Option<u64>,
    /// The last record's timestamp, in `time_unit`.
    pub last_ts: Option<u64>,
    /// The unit of `first_ts` and `last_ts`.
    pub time_unit: TimeUnit,
    /// Key sizes ([`TraceRecord::key_size`]); `None` for id traces that state none.
    pub key_size: Option<SizeSummary>,
    /// Value sizes ([`TraceRecord::value_size`]) of the requests that state one
    /// ([`crate::TraceInfo::knows_value_size`]: not a read that returned no value); `None` when
    /// the format has no sizes.
    pub value_size: Option<SizeSummary>,
    /// Byte offset where the trace is damaged; `None` when it read to its end.
    pub damaged_at: Option<u64>,
    /// What the damage is (the reader's error message).
    pub damage: Option<String>,
}

/// A set of ids.
pub(crate) type IdSet = HashSet<u64, BuildHasherDefault<IdHasher>>;

/// Counts of each size.
#[derive(Default)]
struct SizeCounts {
    counts: HashMap<u64, u64, BuildHasherDefault<IdHasher>>,
    /// The last size seen and how often in a row (most traces repeat sizes).
    last: u64,
    run: u64,
}

impl SizeCounts {
    #[inline]
    fn add(&mut self, v: u64) {
        if v == self.last {
            self.run += 1;
        } else {
            self.flush();
            self.last = v;
            self.run = 1;
        }
    }

    fn flush(&mut self) {
        if self.run > 0 {
            *self.counts.entry(self.last).or_insert(0) += self.run;
            self.run = 0;
        }
    }

    fn summary(mut self) -> Option<SizeSummary> {
        self.flush();
        let mut sizes: Vec<(u64, u64)> = self.counts.into_iter().collect();
        sizes.sort_unstable();
        let n: u64 = sizes.iter().map(|&(_, c)| c).sum();
        if n == 0 {
            return None;
        }
        let sum: u128 = sizes
            .iter()
            .map(|&(v, c)| u128::from(v) * u128::from(c))
            .sum();
        let rank = |p: u64| {
            // Nearest rank: the ceil(p/100 · n)-th smallest (1-based).
            let want = (n * p).div_ceil(100).max(1);
            let mut seen = 0;
            for &(v, c) in &sizes {
                seen += c;
                if seen >= want {
                    return v;
                }
            }
            sizes[sizes.len() - 1].0
        };
        Some(SizeSummary {
            min: sizes[0].0,
            max: sizes[sizes.len() - 1].0,
            mean: sum as f64 / n as f64,
            p50: rank(50),
            p99: rank(99),
        })
    }
}

impl Stats {
    /// Reads `reader` to its end. A damaged trace (a [`TraceError::Corrupt`] or
    /// [`TraceError::BadLine`]) ends the pass with the statistics so far and
    /// [`Stats::damaged_at`] set (the byte offset; for a bad line, `None` with the line
    /// in [`Stats::damage`]); only I/O and format errors are returned.
    pub fn collect<R: TraceReader + ?Sized>(reader: &mut R) -> Result<Stats, TraceError> {
        let info = reader.info().clone();
        let mut rec = TraceRecord::default();
        let mut ids = IdSet::default();
        let mut ops = [0u64; crate::Op::ALL.len()];
        let mut keys = SizeCounts::default();
        let mut values = SizeCounts::default();
        let (mut requests, mut bytes, mut any_key_size) = (0u64, 0u64, false);
        let (mut first_ts, mut last_ts) = (None, None);
        let (mut damaged_at, mut damage) = (None, None);
        loop {
            match reader.read(&mut rec) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e @ TraceError::Corrupt { .. }) => {
                    if let TraceError::Corrupt { offset, .. } = &e {
                        damaged_at = Some(*offset);
                    }
                    damage = Some(e.to_string());
                    break;
                }
                Err(e @ TraceError::BadLine { .. }) => {
                    damage = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(e),
            }
            requests += 1;
            ids.insert(rec.id);
            ops[rec.op as usize] += 1;
            bytes += rec.obj_size();
            keys.add(u64::from(rec.key_size));
            any_key_size |= rec.key_size > 0;
            if info.knows_value_size(&rec) {
                values.add(rec.value_size);
            }
            if first_ts.is_none() {
                first_ts = Some(rec.ts);
            }
            last_ts = Some(rec.ts);
        }
        let ops = crate::Op::ALL
            .iter()
            .zip(ops)
            .filter(|&(_, n)| n > 0)
            .map(|(op, n)| (op.name().to_string(), n))
            .collect();
        let key_sizes = info.key_encoding == KeyEncoding::Bytes || any_key_size;
        Ok(Stats {
            format: info.format.clone(),
            requests,
            distinct_keys: ids.len() as u64,
            bytes: info.has_sizes.then_some(bytes),
            ops,
            first_ts,
            last_ts,
            time_unit: info.time_unit,
            key_size: if key_sizes { keys.summary() } else { None },
            value_size: if info.has_sizes {
                values.summary()
            } else {
                None
            },
            damaged_at,
            damage,
        })
    }

    /// The statistics as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut s = SizeCounts::default();
        for v in 1..=100 {
            s.add(v);
        }
        let m = s.summary().unwrap();
        assert_eq!((m.min, m.max, m.p50, m.p99), (1, 100, 50, 99));
        assert!((m.mean - 50.5).abs() < 1e-9);
    }
}

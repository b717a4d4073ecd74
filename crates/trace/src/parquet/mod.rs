//! Traces as Apache Parquet (cargo feature `parquet`): one row per request, typed as
//! analysts expect, for DuckDB, Spark, Trino, Polars and pandas.
//!
//! [`write_parquet`] exports any [`crate::TraceReader`] to one file; [`write_dataset`] to a
//! Hive-partitioned directory (`dt=2026-11-28T14/part-0.parquet`, or
//! `chunk=0/part-0.parquet` by request count) that those engines read as one table;
//! [`ParquetReader`] ([`open_parquet`]) reads a file back as a [`crate::TraceReader`], losing
//! nothing. The source's [`crate::TraceInfo`] is kept as JSON in each file's key-value
//! metadata under `kvlab.trace_info`.
//!
//! # Columns
//!
//! | column | type | null when |
//! |---|---|---|
//! | `ts` | `TIMESTAMP(NANOS, UTC)` | the trace has no clock (its row order is its time) |
//! | `op` | string: the trace's own op ([`crate::Op::name`]: `get`, `set`, `seek`…) | never |
//! | `kind` | string: what kvlab counts it as ([`crate::Op::kind`]), lowercase: `read`, `update`, `insert`, `scan`, `read-modify-write`, `delete` | a replay skips it (`deleterange`, `other`) |
//! | `key` | binary | the trace keys by numeric id |
//! | `id` | uint64 | never |
//! | `key_size` | uint32 | unknown (0 in the trace) |
//! | `value_size` | uint64 | unknown: the trace has no sizes, or a read returned no value |
//! | `scan_len` | uint32 | not a scan, or not recorded |
//! | `ttl_s` | uint32 | no time to live |
//! | `cf` | uint32 | never (0: the trace has none) |
//! | `next_access` | int64: the row of the key's next request, −1 never again | the trace does not carry it |
//! | `batch_len`, `batch_pos` | uint32 | never |
//! | `outcome` | string: `hit`, `miss`, `error` | not recorded |
//! | `latency_ns`, `intended_ns` | uint64 | not recorded (runs kvlab recorded have both; block traces such as MSR's may state a response time) |
//! | `lower_bound`, `upper_bound` | binary | none |
//!
//! `ts` is one unit everywhere: the wall-clock time of the request. A recording states
//! when it started (its `started_unix_ns`), so its rows carry real times; FILETIME
//! traces (MSR Cambridge) count from 1601 and are moved to the Unix epoch; every other
//! trace's timestamps are taken as counted from the Unix epoch (true of Unix-time
//! traces; a trace that counts from its own start begins on 1970-01-01). The file's
//! metadata says which: `kvlab.ts_origin_ns`, the wall-clock nanoseconds of the
//! source's timestamp 0.
//!
//! `kind` is the one vocabulary every kvlab output shares: `result.json` and the latency
//! log name the same kinds in YCSB's upper case (`READ`, `READ-MODIFY-WRITE`), the
//! Prometheus `op` label exactly as here.
//!
//! # `trace stats` in DuckDB
//!
//! This query gives [`crate::Stats`]'s figures from an export (percentiles are
//! nearest-rank, which `quantile_disc` matches on these traces but not for every n):
//!
//! ```sql
//! SELECT count(*)                                          AS requests,
//!        count(DISTINCT id)                                AS distinct_keys,
//!        sum(coalesce(key_size, 0) + coalesce(value_size, 0)) AS bytes,
//!        min(value_size)                                   AS value_size_min,
//!        max(value_size)                                   AS value_size_max,
//!        avg(value_size)                                   AS value_size_mean,
//!        quantile_disc(value_size, 0.5)                    AS value_size_p50,
//!        quantile_disc(value_size, 0.99)                   AS value_size_p99
//! FROM 'trace.parquet';
//!
//! SELECT op, count(*) AS n FROM 'trace.parquet' GROUP BY op ORDER BY op;
//!
//! -- Requests a second, by kind.
//! SELECT date_trunc('second', ts) AS second, kind, count(*) AS n
//! FROM 'trace.parquet' GROUP BY ALL ORDER BY ALL;
//!
//! -- A partitioned dataset is one table.
//! SELECT dt, count(*) FROM read_parquet('dataset/*/*.parquet', hive_partitioning = true)
//! GROUP BY dt ORDER BY dt;
//! ```

mod read;
mod write;

pub(crate) use read::parquet_reader;
pub use read::{open_parquet, ParquetReader};
pub use write::{write_dataset, write_parquet, DatasetSummary, Partition};

use std::path::Path;

use crate::{Outcome, TraceError};

/// The metadata key holding the source's [`TraceInfo`] as JSON.
///
/// [`TraceInfo`]: crate::TraceInfo
pub const INFO_KEY: &str = "kvlab.trace_info";

/// The metadata key holding the wall-clock nanoseconds (since the Unix epoch) of the
/// source's timestamp 0: `ts` is this plus the source's timestamp in nanoseconds.
pub const ORIGIN_KEY: &str = "kvlab.ts_origin_ns";

/// The metadata key naming the column layout: `2` for the one described above. Files
/// without it are kvlab's first layout (every column required, `ts` in the source's
/// unit), which [`open_parquet`] still reads.
pub const LAYOUT_KEY: &str = "kvlab.layout";

/// The layout [`write_parquet`] writes.
const LAYOUT: &str = "2";

const SCHEMA: &str = "
message kvlab_trace {
  optional int64 ts (TIMESTAMP(NANOS,true));
  required binary op (STRING);
  optional binary kind (STRING);
  optional binary key;
  required int64 id (INTEGER(64,false));
  optional int32 key_size (INTEGER(32,false));
  optional int64 value_size (INTEGER(64,false));
  optional int32 scan_len (INTEGER(32,false));
  optional int32 ttl_s (INTEGER(32,false));
  required int32 cf (INTEGER(32,false));
  optional int64 next_access;
  required int32 batch_len (INTEGER(32,false));
  required int32 batch_pos (INTEGER(32,false));
  optional binary outcome (STRING);
  optional int64 latency_ns (INTEGER(64,false));
  optional int64 intended_ns (INTEGER(64,false));
  optional binary lower_bound;
  optional binary upper_bound;
}";

fn outcome_name(o: Outcome) -> Option<&'static str> {
    match o {
        Outcome::Unknown => None,
        Outcome::Hit => Some("hit"),
        Outcome::Miss => Some("miss"),
        Outcome::Error => Some("error"),
    }
}

fn err(path: &Path, e: impl std::fmt::Display) -> TraceError {
    TraceError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

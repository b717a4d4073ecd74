//! kvlab's resource monitor: what the machine, kvlab and the store's server spend while a
//! benchmark runs, sampled on a thread of its own into CSV time series.
//!
//! The main types and how they connect:
//!
//! - [`MonitorConfig`]: where to write, how often to sample, and what to watch — the
//!   client process (kvlab itself unless told otherwise), an optional server process, an
//!   optional data directory, and an optional [`StoreStatsFn`] that returns a store's own
//!   statistics (RocksDB properties, Redis `INFO`, memcached `stats`) as numbers.
//! - [`Monitor`]: made by [`Monitor::start`], which creates `OUT/monitor/` and its files
//!   and starts the sampling thread. Every interval it appends one row to each file:
//!   `cpu.csv`, `memory.csv`, `disk.csv`, and `dbsize.csv` (with a data directory) and
//!   `store.csv` (with a statistics callback). [`Monitor::stop`] writes a last row for
//!   the part-interval since the previous one, stops the thread and returns the
//!   [`MonitorSummary`].
//! - [`ServerStats`]: a network store's [`StoreStatsFn`] — Redis `INFO` and `DBSIZE`,
//!   memcached `stats` — read from the server over a connection of its own.
//! - [`MonitorSummary`]: mean and maximum of every column (`cpu.server_cpu_pct`, …), for
//!   a run's `result.json`; also written as `OUT/monitor/summary.json`.
//!
//! The files follow the monitor of the Terark DB benchmark (`${prefix}-cpu.txt`,
//! `-memory.txt`, `-dbsize.txt`: time, CPU %, iowait; total, free, cached, resident;
//! database size), with bytes instead of KB and a unit in every column name. The
//! operations series of that monitor is kvlab's own `timeline.csv`. Every column is
//! described in `docs/monitoring.md`.
//!
//! ```no_run
//! use std::time::Duration;
//! use kvlab_monitor::{Monitor, MonitorConfig};
//!
//! let mut config = MonitorConfig::new("results/run-1");
//! config.interval = Duration::from_millis(500);
//! config.data_dir = Some("/tmp/db".into());
//! config.store_stats = Some(Box::new(|| vec![("keys".to_string(), 42.0)]));
//! let monitor = Monitor::start(config)?;
//! // ... run the benchmark ...
//! let summary = monitor.stop()?;
//! println!("kvlab used {:.0}% CPU on average", summary.mean("cpu", "kvlab_cpu_pct").unwrap_or(0.0));
//! # Ok::<(), kvlab_monitor::MonitorError>(())
//! ```

mod sampler;
mod series;
mod server_stats;
pub mod system;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use sampler::{CPU_COLUMNS, DBSIZE_COLUMNS, DISK_COLUMNS, MEMORY_COLUMNS};
pub use server_stats::{ServerStats, MEMCACHED_STATS, REDIS_STATS};

/// A store's statistics as name-value pairs, called once per sample on the monitor's
/// thread. It should return the same names every time: the names of its first call
/// become `store.csv`'s columns, a name missing later is an empty cell, and a name that
/// first appears later is left out (and logged once). When the first call returns
/// nothing, there is no `store.csv`.
pub type StoreStatsFn = Box<dyn FnMut() -> Vec<(String, f64)> + Send>;

/// The sub-directory of the output directory that holds the monitor's files.
pub const MONITOR_DIR: &str = "monitor";

/// Every failure of the monitor: a file it could not create or write.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// A file-system operation on `path` failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done (`creating`, `writing`).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The sampling thread panicked (a bug, or a panicking statistics callback).
    #[error("the monitor's sampling thread panicked")]
    Panicked,
}

impl MonitorError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> MonitorError {
        MonitorError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What a [`Monitor`] watches and where it writes.
pub struct MonitorConfig {
    /// The run's output directory; the files go into its `monitor/` sub-directory,
    /// which is created.
    pub out_dir: PathBuf,
    /// Time between samples (default 1 s).
    pub interval: Duration,
    /// The client process whose CPU, memory and I/O are the `kvlab_*` columns; `None`
    /// (the default) is this process. A suite that runs kvlab as a child sets the
    /// child's pid here.
    pub client_pid: Option<u32>,
    /// A server process (a spawned `redis-server` or `memcached`), for the `server_*`
    /// columns; empty cells without one or once it has exited.
    pub server_pid: Option<u32>,
    /// An embedded store's data directory, walked every sample for `dbsize.csv`.
    pub data_dir: Option<PathBuf>,
    /// The store's own statistics, for `store.csv`.
    pub store_stats: Option<StoreStatsFn>,
}

impl MonitorConfig {
    /// A configuration that samples this process and the system once a second into
    /// `out_dir/monitor/`.
    pub fn new(out_dir: impl Into<PathBuf>) -> MonitorConfig {
        MonitorConfig {
            out_dir: out_dir.into(),
            interval: Duration::from_secs(1),
            client_pid: None,
            server_pid: None,
            data_dir: None,
            store_stats: None,
        }
    }
}

impl std::fmt::Debug for MonitorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MonitorConfig")
            .field("out_dir", &self.out_dir)
            .field("interval", &self.interval)
            .field("client_pid", &self.client_pid)
            .field("server_pid", &self.server_pid)
            .field("data_dir", &self.data_dir)
            .field("store_stats", &self.store_stats.is_some())
            .finish()
    }
}

/// Mean and maximum of one column over the rows that had a value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ColumnSummary {
    /// Mean of the column's values.
    pub mean: f64,
    /// Largest value.
    pub max: f64,
    /// Rows that had a value.
    pub samples: u64,
}

/// What [`Monitor::stop`] returns: mean and maximum per column, keyed `FILE.COLUMN`
/// (`cpu.server_cpu_pct`, `memory.kvlab_rss_bytes`, `store.keys`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorSummary {
    /// The sampling interval, in seconds.
    pub interval_s: f64,
    /// Rows written to each file.
    pub rows: u64,
    /// Time from [`Monitor::start`] to the last row, in seconds.
    pub duration_s: f64,
    /// When [`Monitor::start`] ran (time 0 of every file's `time_s`), in milliseconds
    /// since the Unix epoch: a report puts the files on the run's own time axis
    /// (`runner.measured_start`) with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ms: Option<u64>,
    /// Every column that had at least one value.
    pub columns: BTreeMap<String, ColumnSummary>,
}

impl MonitorSummary {
    /// The summary of `column` of `file` (the file's stem: `cpu`, `memory`, …).
    pub fn column(&self, file: &str, column: &str) -> Option<&ColumnSummary> {
        self.columns.get(&format!("{file}.{column}"))
    }

    /// The mean of `column` of `file`.
    pub fn mean(&self, file: &str, column: &str) -> Option<f64> {
        self.column(file, column).map(|c| c.mean)
    }

    /// The maximum of `column` of `file`.
    pub fn max(&self, file: &str, column: &str) -> Option<f64> {
        self.column(file, column).map(|c| c.max)
    }

    /// Flat `FILE.COLUMN.mean` / `FILE.COLUMN.max` pairs, e.g. for a result's statistics.
    pub fn flat(&self) -> Vec<(String, f64)> {
        self.columns
            .iter()
            .flat_map(|(k, c)| [(format!("{k}.mean"), c.mean), (format!("{k}.max"), c.max)])
            .collect()
    }
}

/// A running monitor: a thread sampling into `OUT/monitor/*.csv`. Stop it with
/// [`Monitor::stop`]; dropping it stops it too, without a summary.
pub struct Monitor {
    dir: PathBuf,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<Result<MonitorSummary, MonitorError>>>,
}

impl Monitor {
    /// Creates `config.out_dir/monitor/` and its CSV files (headers written), takes the
    /// first sample as the baseline and starts sampling every `config.interval`.
    ///
    /// Errors only when a directory or file cannot be created; a process that is gone
    /// or a file of `/proc` that cannot be read later gives empty cells, not an error.
    pub fn start(config: MonitorConfig) -> Result<Monitor, MonitorError> {
        let dir = config.out_dir.join(MONITOR_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| MonitorError::io("creating", &dir, e))?;
        let sampler = sampler::Sampler::new(config, &dir)?;
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("kvlab-monitor".into())
            .spawn(move || sampler.run(&rx))
            .map_err(|e| MonitorError::io("starting the sampling thread for", &dir, e))?;
        Ok(Monitor {
            dir,
            stop: Some(tx),
            thread: Some(thread),
        })
    }

    /// The directory the files are written to, `OUT/monitor`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a last row (unless the previous one is less than a tenth of an interval
    /// old), stops the thread, writes `summary.json` and returns the summary.
    pub fn stop(mut self) -> Result<MonitorSummary, MonitorError> {
        drop(self.stop.take());
        let thread = self.thread.take().expect("a monitor is stopped only once");
        let summary = thread.join().map_err(|_| MonitorError::Panicked)??;
        let path = self.dir.join("summary.json");
        let mut text = serde_json::to_string_pretty(&summary)
            .expect("a summary of numbers and strings serializes");
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| MonitorError::io("writing", &path, e))?;
        Ok(summary)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor").field("dir", &self.dir).finish()
    }
}

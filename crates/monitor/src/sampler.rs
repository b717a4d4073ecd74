//! The sampling thread: takes a sample every interval and appends a row to each series.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use kvlab_spawn::{cpu_percent, ProcessSample};

use crate::series::Series;
use crate::system::{whole_disks, CpuTimes, DirSize, IoBytes, MemInfo};
use crate::{MonitorConfig, MonitorError, MonitorSummary, StoreStatsFn};

/// The columns of `cpu.csv` after `time_s`, in order.
pub const CPU_COLUMNS: &[&str] = &[
    "kvlab_cpu_pct",
    "server_cpu_pct",
    "system_cpu_pct",
    "iowait_pct",
];
/// The columns of `memory.csv` after `time_s`, in order.
pub const MEMORY_COLUMNS: &[&str] = &[
    "kvlab_rss_bytes",
    "server_rss_bytes",
    "mem_total_bytes",
    "mem_free_bytes",
    "mem_available_bytes",
    "mem_cached_bytes",
];
/// The columns of `disk.csv` after `time_s`, in order.
pub const DISK_COLUMNS: &[&str] = &[
    "disk_read_bytes_per_s",
    "disk_write_bytes_per_s",
    "kvlab_read_bytes_per_s",
    "kvlab_write_bytes_per_s",
    "server_read_bytes_per_s",
    "server_write_bytes_per_s",
];
/// The columns of `dbsize.csv` after `time_s`, in order.
pub const DBSIZE_COLUMNS: &[&str] = &[
    "data_dir_bytes",
    "data_dir_allocated_bytes",
    "data_dir_files",
];

/// One moment's counters; the rates of a row come from two of these.
struct Snapshot {
    taken: Instant,
    client: Option<ProcessSample>,
    server: Option<ProcessSample>,
    cpu: Option<CpuTimes>,
    disks: Option<IoBytes>,
    client_io: Option<IoBytes>,
    server_io: Option<IoBytes>,
}

/// Owns everything the thread needs.
pub(crate) struct Sampler {
    started: Instant,
    /// The wall-clock time of `started`, in ms since the Unix epoch.
    started_unix_ms: Option<u64>,
    interval: Duration,
    client_pid: u32,
    server_pid: Option<u32>,
    data_dir: Option<std::path::PathBuf>,
    disks: Vec<String>,
    stats: Option<(StoreStatsFn, HashMap<String, usize>)>,
    warned_new_stat: bool,
    cpu: Series,
    memory: Series,
    disk: Series,
    dbsize: Option<Series>,
    store: Option<Series>,
    last: Snapshot,
    rows: u64,
    last_row_s: f64,
}

fn names(columns: &[&str]) -> Vec<String> {
    columns.iter().map(|c| c.to_string()).collect()
}

impl Sampler {
    /// Creates the files and takes the baseline sample (and the statistics callback's
    /// first call, which fixes `store.csv`'s columns).
    pub(crate) fn new(mut config: MonitorConfig, dir: &Path) -> Result<Sampler, MonitorError> {
        let started = Instant::now();
        let started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_millis()).ok());
        let stats = match config.store_stats.take() {
            Some(mut f) => {
                let mut columns: Vec<String> = Vec::new();
                for (name, _) in f() {
                    if !columns.contains(&name) {
                        columns.push(name);
                    }
                }
                // Nothing to sample (e.g. the null store): no store.csv.
                (!columns.is_empty()).then_some((f, columns))
            }
            None => None,
        };
        let store = match &stats {
            Some((_, columns)) => Some(Series::create(dir, "store", columns.clone())?),
            None => None,
        };
        let dbsize = match &config.data_dir {
            Some(_) => Some(Series::create(dir, "dbsize", names(DBSIZE_COLUMNS))?),
            None => None,
        };
        let client_pid = config.client_pid.unwrap_or_else(std::process::id);
        let disks = whole_disks();
        let mut sampler = Sampler {
            started,
            started_unix_ms,
            interval: config.interval.max(Duration::from_millis(1)),
            client_pid,
            server_pid: config.server_pid,
            data_dir: config.data_dir,
            stats: stats.map(|(f, columns)| {
                let index = columns
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| (c, i))
                    .collect();
                (f, index)
            }),
            warned_new_stat: false,
            cpu: Series::create(dir, "cpu", names(CPU_COLUMNS))?,
            memory: Series::create(dir, "memory", names(MEMORY_COLUMNS))?,
            disk: Series::create(dir, "disk", names(DISK_COLUMNS))?,
            dbsize,
            store,
            last: Snapshot {
                taken: started,
                client: None,
                server: None,
                cpu: None,
                disks: None,
                client_io: None,
                server_io: None,
            },
            disks,
            rows: 0,
            last_row_s: 0.0,
        };
        sampler.last = sampler.snapshot();
        Ok(sampler)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            taken: Instant::now(),
            client: ProcessSample::of(self.client_pid).ok(),
            server: self.server_pid.and_then(|p| ProcessSample::of(p).ok()),
            cpu: CpuTimes::read(),
            disks: IoBytes::read_disks(&self.disks),
            client_io: IoBytes::read_process(self.client_pid),
            server_io: self.server_pid.and_then(IoBytes::read_process),
        }
    }

    /// Samples until the sender is dropped, then writes the last row.
    pub(crate) fn run(mut self, stop: &mpsc::Receiver<()>) -> Result<MonitorSummary, MonitorError> {
        let mut tick: u32 = 1;
        loop {
            let due = self.started + self.interval * tick;
            let wait = due.saturating_duration_since(Instant::now());
            let stopping = !matches!(
                stop.recv_timeout(wait),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            let now_s = self.started.elapsed().as_secs_f64();
            if stopping {
                // A sliver of an interval gives noisy rates; the previous row stands.
                if self.rows == 0 || now_s - self.last_row_s >= self.interval.as_secs_f64() / 10.0 {
                    self.row()?;
                }
                break;
            }
            self.row()?;
            // After a stall (a suspended process), skip the ticks already past.
            let elapsed = self.started.elapsed().as_secs_f64() / self.interval.as_secs_f64();
            tick = (elapsed.floor() as u32).max(tick) + 1;
        }
        let mut columns = std::collections::BTreeMap::new();
        for series in [Some(&self.cpu), Some(&self.memory), Some(&self.disk)]
            .into_iter()
            .chain([self.dbsize.as_ref(), self.store.as_ref()])
            .flatten()
        {
            columns.extend(series.summaries());
        }
        Ok(MonitorSummary {
            interval_s: self.interval.as_secs_f64(),
            rows: self.rows,
            duration_s: self.last_row_s,
            started_unix_ms: self.started_unix_ms,
            columns,
        })
    }

    /// Takes a sample and appends one row to every series.
    fn row(&mut self) -> Result<(), MonitorError> {
        let now = self.snapshot();
        let time_s = now.taken.duration_since(self.started).as_secs_f64();
        let wall = now.taken.duration_since(self.last.taken);
        let secs = wall.as_secs_f64();
        let last = &self.last;

        let process_cpu = |a: &Option<ProcessSample>, b: &Option<ProcessSample>| match (a, b) {
            (Some(a), Some(b)) => Some(cpu_percent(a, b, wall)),
            _ => None,
        };
        let system = match (&last.cpu, &now.cpu) {
            (Some(a), Some(b)) => a.percent_until(b),
            _ => None,
        };
        self.cpu.row(
            time_s,
            &[
                process_cpu(&last.client, &now.client),
                process_cpu(&last.server, &now.server),
                system.map(|s| s.0),
                system.map(|s| s.1),
            ],
        )?;

        let mem = MemInfo::read();
        self.memory.row(
            time_s,
            &[
                now.client.map(|s| s.rss_bytes as f64),
                now.server.map(|s| s.rss_bytes as f64),
                mem.map(|m| m.total_bytes as f64),
                mem.map(|m| m.free_bytes as f64),
                mem.map(|m| m.available_bytes as f64),
                mem.map(|m| m.cached_bytes as f64),
            ],
        )?;

        let rate = |a: &Option<IoBytes>, b: &Option<IoBytes>| match (a, b) {
            (Some(a), Some(b)) => {
                let (r, w) = a.rate_until(b, secs);
                (Some(r), Some(w))
            }
            _ => (None, None),
        };
        let (disk_r, disk_w) = rate(&last.disks, &now.disks);
        let (client_r, client_w) = rate(&last.client_io, &now.client_io);
        let (server_r, server_w) = rate(&last.server_io, &now.server_io);
        self.disk.row(
            time_s,
            &[disk_r, disk_w, client_r, client_w, server_r, server_w],
        )?;

        if let (Some(series), Some(dir)) = (self.dbsize.as_mut(), &self.data_dir) {
            let size = DirSize::measure(dir);
            series.row(
                time_s,
                &[
                    size.map(|s| s.bytes as f64),
                    size.map(|s| s.allocated_bytes as f64),
                    size.map(|s| s.files as f64),
                ],
            )?;
        }

        if let (Some(series), Some((f, index))) = (self.store.as_mut(), self.stats.as_mut()) {
            let mut values = vec![None; series.columns().len()];
            for (name, v) in f() {
                match index.get(&name) {
                    Some(&i) => values[i] = Some(v),
                    None if !self.warned_new_stat => {
                        self.warned_new_stat = true;
                        tracing::warn!(
                            "store statistic `{name}` appeared after the first sample; \
                             store.csv keeps the first sample's columns"
                        );
                    }
                    None => {}
                }
            }
            series.row(time_s, &values)?;
        }

        self.last = now;
        self.rows += 1;
        self.last_row_s = time_s;
        Ok(())
    }
}

//! kvlab's result history: results kept in an embedded SQLite database, a metric's series
//! over time, and the change points that mark a regression.
//!
//! The main types and how they connect:
//!
//! - [`History`]: one SQLite file (`results/history.sqlite` by default). [`History::add`]
//!   stores a [`kvlab_report::ResultDocument`] — keyed by store, workload, clients,
//!   effective options, host, kvlab version, the user's tags (`rocksdb=7.8.3`) and time —
//!   with its figures as rows of `metrics`. The schema ([`SCHEMA`]) is plain tables that
//!   other tools read (Python's `sqlite3`, DuckDB's `sqlite_scan`).
//! - [`History::series`]: one metric's values over time for each store × workload ×
//!   clients, as [`Series`] of [`Point`]s.
//! - [`changes`]: the change points of a series by E-divisive means with a permutation
//!   test ([`kvlab_report::stats::e_divisive`]), each a [`Change`] with its medians
//!   before and after and whether it is a regression.

use std::path::{Path, PathBuf};

use kvlab_measure::LatencySummary;
use kvlab_report::stats;
use kvlab_report::ResultDocument;
use rusqlite::{params, Connection, OptionalExtension};

/// The default database file.
pub const DEFAULT_DB: &str = "results/history.sqlite";

/// The schema's version, in SQLite's `user_version`.
pub const SCHEMA_VERSION: i64 = 1;

/// The tables, as created. Every result is one row of `results`; its figures are rows of
/// `metrics` (`name`, `value`), its tags rows of `tags`. Times are RFC 3339 UTC text,
/// which sorts in time order.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS results (
    id            INTEGER PRIMARY KEY,
    started_at    TEXT NOT NULL,    -- RFC 3339, UTC: when the phase started
    finished_at   TEXT NOT NULL,
    store         TEXT NOT NULL,    -- store.label, else store.name
    store_kind    TEXT NOT NULL,    -- store.name: rocksdb, redis, null, ...
    workload      TEXT NOT NULL,    -- workload label, else the property files' names
    phase         TEXT NOT NULL,    -- load, run, verify, import
    threads       INTEGER NOT NULL,
    connections   INTEGER NOT NULL, -- per thread
    pipeline      INTEGER NOT NULL,
    target_ops_per_sec REAL,        -- open loop; NULL in closed loop
    options       TEXT NOT NULL,    -- JSON: {\"store\": store.options, \"workload\": properties}
    host          TEXT NOT NULL,    -- host.hostname
    kvlab_version TEXT NOT NULL,
    seed          TEXT NOT NULL,    -- decimal digits
    busy          INTEGER NOT NULL, -- host.busy: 1 when other processes took the CPU
    file          TEXT NOT NULL,    -- the result.json it was read from
    document      TEXT NOT NULL,    -- the whole result.json
    UNIQUE (started_at, host, seed, store, workload, phase, threads, connections)
);
CREATE TABLE IF NOT EXISTS metrics (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    name      TEXT NOT NULL,        -- throughput_ops_per_sec, p99_us, READ.p99_us, ...
    value     REAL NOT NULL,
    PRIMARY KEY (result_id, name)
);
CREATE TABLE IF NOT EXISTS tags (
    result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
    name      TEXT NOT NULL,        -- --tag NAME=VALUE: rocksdb=7.8.3, commit=abc123
    value     TEXT NOT NULL,
    PRIMARY KEY (result_id, name)
);
CREATE INDEX IF NOT EXISTS results_series ON results (store, workload, started_at);
";

/// A failure of the history database.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// SQLite refused an operation on the file.
    #[error("{}: {source}", path.display())]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file holds a history of another schema version.
    #[error("{}: history schema version {found}, this kvlab reads {SCHEMA_VERSION}", path.display())]
    Version {
        /// The database file.
        path: PathBuf,
        /// The version it holds.
        found: i64,
    },
}

/// A result history in one SQLite file.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

/// What [`History::add`] did with a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// Stored as a new row.
    New,
    /// The same result (start, host, seed, store, workload, phase, clients) was there.
    AlreadyThere,
}

/// One value of a series.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// When the result's phase started (RFC 3339).
    pub time: String,
    /// The metric's value.
    pub value: f64,
    /// The kvlab version that measured it.
    pub kvlab_version: String,
    /// Its tags, `name=value`, sorted.
    pub tags: Vec<String>,
    /// The result was taken on a busy machine (`host.busy`).
    pub busy: bool,
    /// The `result.json` it came from.
    pub file: String,
}

/// One metric over time for one store × workload × clients.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The store.
    pub store: String,
    /// The workload.
    pub workload: String,
    /// Threads × connections (× pipeline), as reports write it: `2×16`.
    pub clients: String,
    /// The metric's name in `metrics.name`.
    pub metric: String,
    /// The values, oldest first.
    pub points: Vec<Point>,
}

/// Which series [`History::series`] returns; `None` matches any.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter {
    /// Only this store.
    pub store: Option<String>,
    /// Only this workload.
    pub workload: Option<String>,
    /// Only results carrying this tag (`name`, `value`).
    pub tag: Option<(String, String)>,
}

/// The metric a user names (`throughput`, `p99`, `READ.p99`) as stored in
/// `metrics.name` (`throughput_ops_per_sec`, `p99_us`, `READ.p99_us`).
pub fn metric_name(user: &str) -> String {
    match user {
        "throughput" => "throughput_ops_per_sec".to_string(),
        "p50" | "p90" | "p95" | "p99" | "p999" | "p9999" | "avg" | "max" => format!("{user}_us"),
        "p99.9" => "p999_us".to_string(),
        other => match other.split_once('.') {
            Some((op, p)) if !p.ends_with("_us") && p.starts_with('p') => {
                format!("{op}.{}_us", p.replace('.', ""))
            }
            _ => other.to_string(),
        },
    }
}

/// True when a larger value of the metric is better (throughput, hit ratio); latencies
/// and errors are better smaller.
pub fn higher_is_better(metric: &str) -> bool {
    metric.starts_with("throughput") || metric.contains("hit_ratio")
}

/// The figures of a result stored as `metrics` rows.
fn figures(doc: &ResultDocument) -> Vec<(String, f64)> {
    let r = &doc.results;
    let mut out = vec![
        (
            "throughput_ops_per_sec".to_string(),
            r.throughput_ops_per_sec,
        ),
        ("operations".to_string(), r.operations as f64),
        ("errors".to_string(), r.errors.values().sum::<u64>() as f64),
        ("runtime_s".to_string(), r.runtime_ms / 1000.0),
    ];
    let latency = |prefix: &str, l: &LatencySummary, out: &mut Vec<(String, f64)>| {
        for (name, v) in [
            ("avg_us", l.avg_us),
            ("p50_us", l.p50_us),
            ("p90_us", l.p90_us),
            ("p95_us", l.p95_us),
            ("p99_us", l.p99_us),
            ("p999_us", l.p999_us),
            ("p9999_us", l.p9999_us),
            ("max_us", l.max_us),
        ] {
            out.push((format!("{prefix}{name}"), v));
        }
    };
    if let Some(l) = &r.overall {
        latency("", l, &mut out);
    }
    for o in r.ops.iter().chain(&r.intended) {
        latency(&format!("{}.", o.name), &o.latency, &mut out);
    }
    out.retain(|(_, v)| v.is_finite());
    out
}

impl History {
    /// Opens the history in `path`, creating the file (and its directory) and the tables
    /// when they are not there.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        let err = |source| HistoryError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| err(rusqlite::Error::ToSqlConversionFailure(Box::new(e))))?;
        }
        let conn = Connection::open(path).map_err(err)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(err)?;
        if version != 0 && version != SCHEMA_VERSION {
            return Err(HistoryError::Version {
                path: path.to_path_buf(),
                found: version,
            });
        }
        conn.execute_batch(&format!(
            "PRAGMA foreign_keys = ON;{SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};"
        ))
        .map_err(err)?;
        Ok(History {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn err(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Stores the result read from `file` with `tags` (`name`, `value`). A result already
    /// there (same start, host, seed, store, workload, phase and clients) is left as it is.
    pub fn add(
        &mut self,
        doc: &ResultDocument,
        file: &Path,
        tags: &[(String, String)],
    ) -> Result<Added, HistoryError> {
        let (threads, connections, pipeline) = doc.runner.clients();
        let options = serde_json::json!({
            "store": doc.store.options,
            "workload": doc.workload,
        });
        let tx = self.conn.transaction().map_err(|e| HistoryError::Sqlite {
            path: self.path.clone(),
            source: e,
        })?;
        let inserted = tx
            .execute(
                "INSERT OR IGNORE INTO results (started_at, finished_at, store, store_kind, \
                 workload, phase, threads, connections, pipeline, target_ops_per_sec, options, \
                 host, kvlab_version, seed, busy, file, document) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                params![
                    doc.started_at,
                    doc.finished_at,
                    doc.store.display_name(),
                    doc.store.name,
                    kvlab_report::workload_name(doc),
                    doc.phase.as_str(),
                    threads as i64,
                    connections as i64,
                    pipeline as i64,
                    doc.runner.target_rate_ops_per_sec,
                    options.to_string(),
                    doc.host.hostname,
                    doc.kvlab_version,
                    doc.seed.to_string(),
                    doc.host.busy,
                    file.display().to_string(),
                    doc.to_json_pretty(),
                ],
            )
            .map_err(|e| HistoryError::Sqlite {
                path: self.path.clone(),
                source: e,
            })?;
        if inserted == 0 {
            return Ok(Added::AlreadyThere);
        }
        let id = tx.last_insert_rowid();
        for (name, value) in figures(doc) {
            tx.execute(
                "INSERT OR REPLACE INTO metrics (result_id, name, value) VALUES (?1, ?2, ?3)",
                params![id, name, value],
            )
            .map_err(|e| HistoryError::Sqlite {
                path: self.path.clone(),
                source: e,
            })?;
        }
        for (name, value) in tags {
            tx.execute(
                "INSERT OR REPLACE INTO tags (result_id, name, value) VALUES (?1, ?2, ?3)",
                params![id, name, value],
            )
            .map_err(|e| HistoryError::Sqlite {
                path: self.path.clone(),
                source: e,
            })?;
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Added::New)
    }

    /// The series of `metric` (as stored: `throughput_ops_per_sec`, see [`metric_name`])
    /// matching `filter`, one per store × workload × clients, each oldest first, sorted
    /// by store, workload, clients.
    pub fn series(&self, metric: &str, filter: &Filter) -> Result<Vec<Series>, HistoryError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.store, r.workload, r.threads, r.connections, r.pipeline, \
                 r.started_at, m.value, r.kvlab_version, r.busy, r.file \
                 FROM results r JOIN metrics m ON m.result_id = r.id \
                 WHERE m.name = ?1 AND (?2 IS NULL OR r.store = ?2) \
                 AND (?3 IS NULL OR r.workload = ?3) \
                 AND (?4 IS NULL OR EXISTS (SELECT 1 FROM tags t WHERE t.result_id = r.id \
                      AND t.name = ?4 AND t.value = ?5)) \
                 ORDER BY r.store, r.workload, r.threads * r.connections, r.threads, \
                 r.pipeline, r.started_at, r.id",
            )
            .map_err(|e| self.err(e))?;
        let (tag_name, tag_value) = match &filter.tag {
            Some((n, v)) => (Some(n.as_str()), Some(v.as_str())),
            None => (None, None),
        };
        let rows = stmt
            .query_map(
                params![metric, filter.store, filter.workload, tag_name, tag_value],
                |r| {
                    let (threads, connections, pipeline): (i64, i64, i64) =
                        (r.get(3)?, r.get(4)?, r.get(5)?);
                    let mut clients = format!("{threads}×{connections}");
                    if pipeline > 1 {
                        clients.push_str(&format!("×{pipeline}"));
                    }
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        clients,
                        Point {
                            time: r.get(6)?,
                            value: r.get(7)?,
                            kvlab_version: r.get(8)?,
                            tags: Vec::new(),
                            busy: r.get(9)?,
                            file: r.get(10)?,
                        },
                    ))
                },
            )
            .map_err(|e| self.err(e))?;
        let mut out: Vec<Series> = Vec::new();
        for row in rows {
            let (id, store, workload, clients, mut point) = row.map_err(|e| self.err(e))?;
            point.tags = self.tags(id)?;
            match out.last_mut() {
                Some(s) if s.store == store && s.workload == workload && s.clients == clients => {
                    s.points.push(point)
                }
                _ => out.push(Series {
                    store,
                    workload,
                    clients,
                    metric: metric.to_string(),
                    points: vec![point],
                }),
            }
        }
        Ok(out)
    }

    fn tags(&self, id: i64) -> Result<Vec<String>, HistoryError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, value FROM tags WHERE result_id = ?1 ORDER BY name")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([id], |r| {
                Ok(format!(
                    "{}={}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// How many results the history holds.
    pub fn len(&self) -> Result<u64, HistoryError> {
        self.conn
            .query_row("SELECT count(*) FROM results", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }

    /// True when the history holds no result.
    pub fn is_empty(&self) -> Result<bool, HistoryError> {
        Ok(self.len()? == 0)
    }

    /// The value of one result's metric, for tests and tools: `None` when absent.
    pub fn metric_of(&self, file: &str, metric: &str) -> Result<Option<f64>, HistoryError> {
        self.conn
            .query_row(
                "SELECT m.value FROM results r JOIN metrics m ON m.result_id = r.id \
                 WHERE r.file = ?1 AND m.name = ?2",
                params![file, metric],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}

/// A change point of a series.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The index of the first point after the change, in the series' points.
    pub index: usize,
    /// The time of that point.
    pub time: String,
    /// The median of the points since the previous change (or the start) up to it.
    pub before_median: f64,
    /// The median of the points from it up to the next change (or the end).
    pub after_median: f64,
    /// `after_median / before_median − 1` (−0.1: 10 % lower).
    pub change: f64,
    /// The permutation-test p-value.
    pub p_value: f64,
    /// The change made the metric worse (throughput lower, latency higher).
    pub regression: bool,
}

/// The smallest segment E-divisive considers: 3 results.
pub const MIN_SEGMENT: usize = 3;

/// Permutations of the test of each change point.
pub const PERMUTATIONS: usize = 999;

/// The change points of a series (E-divisive means, permutation test at
/// [`stats::ALPHA`], seeded so that the same history gives the same answer), oldest
/// first.
pub fn changes(series: &Series) -> Vec<Change> {
    let values: Vec<f64> = series.points.iter().map(|p| p.value).collect();
    let found = stats::e_divisive(
        &values,
        MIN_SEGMENT,
        PERMUTATIONS,
        stats::ALPHA,
        stats::BOOTSTRAP_SEED,
    );
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().map(|c| c.index))
        .chain(std::iter::once(values.len()))
        .collect();
    found
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let before = stats::median(&values[bounds[k]..c.index]).unwrap_or(f64::NAN);
            let after = stats::median(&values[c.index..bounds[k + 2]]).unwrap_or(f64::NAN);
            let change = after / before - 1.0;
            Change {
                index: c.index,
                time: series.points[c.index].time.clone(),
                before_median: before,
                after_median: after,
                change,
                p_value: c.p_value,
                regression: if higher_is_better(&series.metric) {
                    change < 0.0
                } else {
                    change > 0.0
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture result of the report crate's suite (a real null-store run).
    fn fixture() -> (PathBuf, ResultDocument) {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../report/tests/fixtures/suite/null/workloada/1x1/round-1/result.json");
        let doc = ResultDocument::load(&file).unwrap();
        (file, doc)
    }

    /// Nightly results: `throughputs[i]` on night `i`.
    fn nightly(history: &mut History, throughputs: &[f64], tags: &[(String, String)]) {
        let (file, doc) = fixture();
        for (i, t) in throughputs.iter().enumerate() {
            let mut d = doc.clone();
            d.started_at = format!("2026-10-{:02}T02:00:00.000Z", i + 1);
            d.seed = i as u64;
            d.results.throughput_ops_per_sec = *t;
            let added = history
                .add(&d, &file.with_extension(format!("{i}")), tags)
                .unwrap();
            assert_eq!(added, Added::New);
        }
    }

    #[test]
    fn a_regression_in_nightly_results_is_found_where_it_happened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h/history.sqlite");
        let mut h = History::open(&db).unwrap();
        assert!(h.is_empty().unwrap());
        // 20 nights at ~1000 ops/s, then 12 at ~900: a 10 % regression from night 20.
        let values: Vec<f64> = (0..32)
            .map(|i| {
                let noise = [4.0, -7.0, 2.0, 9.0, -3.0, -5.0, 6.0, 0.0][i % 8];
                if i < 20 {
                    1000.0 + noise
                } else {
                    900.0 + noise
                }
            })
            .collect();
        let tag = vec![("rocksdb".to_string(), "7.8.3".to_string())];
        nightly(&mut h, &values, &tag);
        assert_eq!(h.len().unwrap(), 32);
        // Adding the same result again stores nothing.
        let (file, mut doc) = fixture();
        doc.started_at = "2026-10-01T02:00:00.000Z".into();
        doc.seed = 0;
        assert_eq!(h.add(&doc, &file, &[]).unwrap(), Added::AlreadyThere);

        let series = h
            .series(&metric_name("throughput"), &Filter::default())
            .unwrap();
        assert_eq!(series.len(), 1);
        let s = &series[0];
        assert_eq!(
            (s.store.as_str(), s.workload.as_str()),
            ("null", "workloada")
        );
        assert_eq!(s.points.len(), 32);
        assert_eq!(s.points[0].tags, ["rocksdb=7.8.3"]);
        assert_eq!(s.points[31].value, values[31]);
        let found = changes(s);
        assert_eq!(found.len(), 1, "{found:?}");
        let c = &found[0];
        assert!(c.index.abs_diff(20) <= 2, "{c:?}");
        assert!(c.regression && c.p_value < stats::ALPHA, "{c:?}");
        assert!((c.change + 0.1).abs() < 0.01, "{c:?}");
        assert_eq!(c.time, s.points[c.index].time);

        // Filters.
        let by_tag = Filter {
            tag: Some(("rocksdb".into(), "7.8.3".into())),
            ..Filter::default()
        };
        assert_eq!(
            h.series("throughput_ops_per_sec", &by_tag).unwrap().len(),
            1
        );
        let other = Filter {
            store: Some("redis".into()),
            ..Filter::default()
        };
        assert!(h
            .series("throughput_ops_per_sec", &other)
            .unwrap()
            .is_empty());
        // Reopened, the history is all there.
        drop(h);
        assert_eq!(History::open(&db).unwrap().len().unwrap(), 32);
    }

    #[test]
    fn steady_nightly_results_have_no_change_point() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(&dir.path().join("history.sqlite")).unwrap();
        let values: Vec<f64> = (0..30)
            .map(|i| 1000.0 + [4.0, -7.0, 2.0, 9.0, -3.0, -5.0, 6.0, 0.0, -1.0][i % 9])
            .collect();
        nightly(&mut h, &values, &[]);
        let series = h
            .series("throughput_ops_per_sec", &Filter::default())
            .unwrap();
        assert!(changes(&series[0]).is_empty());
    }

    #[test]
    fn metric_names() {
        assert_eq!(metric_name("throughput"), "throughput_ops_per_sec");
        assert_eq!(metric_name("p99"), "p99_us");
        assert_eq!(metric_name("p99.9"), "p999_us");
        assert_eq!(metric_name("READ.p99"), "READ.p99_us");
        assert_eq!(metric_name("READ.p99.9"), "READ.p999_us");
        assert_eq!(metric_name("p99_us"), "p99_us");
        assert!(higher_is_better("throughput_ops_per_sec"));
        assert!(!higher_is_better("READ.p99_us"));
    }
}

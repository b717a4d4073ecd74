//! db_bench's `mixgraph` as a kvlab workload (`-p workload=kvlab.mixgraph`): the
//! key-range model of the FAST'20 RocksDB workload study, on every store.
//!
//! Every mixgraph flag is a property of the same name (`num`, `key_size`,
//! `keyrange_num`, `keyrange_dist_a..d`, `key_dist_a/b`, `value_theta/k/sigma`,
//! `iter_theta/k/sigma`, `mix_get/put/seek_ratio`, `mix_max_scan_len`,
//! `mix_max_value_size`, `sine_mix_rate`, `sine_a..d`,
//! `sine_mix_rate_interval_milliseconds`, `sine_mix_rate_noise`, `seed`, `reads`,
//! `threads`) with db_bench's defaults; `key_model` picks one of the paper's four variants
//! (`prefix_dist`, `prefix_random`, `all_dist`, `all_random`; default: as db_bench
//! decides from the flags) and `decorrelate=true` draws key, op, value size and scan
//! length from independent uniforms. Client `k` of the run draws thread `k`'s stream of
//! db_bench (seed `seed + k + 1`), so the same flags, seed and client count issue the
//! same operations as `db_bench --benchmarks=mixgraph` ([`kvlab_dist::mixgraph`] says
//! what is bit-exact).
//!
//! Key ranges sized by the data (kvlab only; db_bench has equal ranges): with
//! `keyrange_bounds=FILE` (one start key number per line, strictly increasing) or
//! `keyrange_source=sst` (the SST files of a RocksDB database's last non-empty level,
//! resolved by the caller into a [`KeyRangeLayout`]), range `i` holds keys
//! `start_i .. start_{i+1}` ([`MixGraphConfig::keyrange_starts`]) and `keyrange_num` is
//! the number of ranges.
//!
//! Gets read the value as one blob, Puts write a blob of the drawn size, Seeks scan the
//! drawn number of records from the key. With `sine_mix_rate=true` each client's
//! requests are due on the sine-modulated schedule (its share of the rate).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kvlab_core::{Needs, OpKind, OpSource, Outcome, Request, Slot, Ticket, Verdict, Workload};
pub use kvlab_dist::mixgraph::KeyRangeLayout;
use kvlab_dist::mixgraph::SineSchedule;
use kvlab_dist::mixgraph::{KeyModel, MixGraph, MixGraphConfig, OpKind as MixKind};
use kvlab_dist::ValuePool;

use crate::props::Properties;

/// A mixgraph workload (see the module docs).
#[derive(Debug)]
pub struct MixGraphWorkload {
    config: MixGraphConfig,
    model: MixGraph,
    pool: ValuePool,
    tally: SeekTally,
}

/// What db_bench's mixgraph summary counts of its seeks that the runner's recorders do
/// not, summed over every client: seeks that landed on their own key (db_bench's
/// `seek_found`, part of its `reads … found`) and the records the seeks visited (its
/// `total_scan_length`, the `avg size: … scan` and part of its MB/s).
#[derive(Debug, Default)]
pub struct SeekTally {
    found: AtomicU64,
    records: AtomicU64,
}

impl SeekTally {
    /// Seeks whose first record has the seek's key.
    pub fn found(&self) -> u64 {
        self.found.load(Ordering::Relaxed)
    }

    /// Records the seeks visited.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }
}

/// Reads `keyrange_bounds=FILE`: one start key number per line (blank lines and lines
/// starting with `#` skipped), strictly increasing; errors name the file and line.
pub fn read_range_starts(path: &std::path::Path) -> Result<Vec<u64>, MixGraphWorkloadError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        MixGraphWorkloadError(format!(
            "property keyrange_bounds: reading {}: {e}",
            path.display()
        ))
    })?;
    let mut starts: Vec<u64> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let v: u64 = t.parse().map_err(|_| {
            MixGraphWorkloadError(format!(
                "{}: `{t}`: expected a key number (a non-negative integer)",
                at()
            ))
        })?;
        if let Some(&prev) = starts.last() {
            if v <= prev {
                return Err(MixGraphWorkloadError(format!(
                    "{}: {v}: expected a key number above the previous start ({prev})",
                    at()
                )));
            }
        }
        starts.push(v);
    }
    if starts.is_empty() {
        return Err(MixGraphWorkloadError(format!(
            "{}: no key-range start (expected one key number per line)",
            path.display()
        )));
    }
    Ok(starts)
}

/// A mixgraph property that is not right.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MixGraphWorkloadError(String);

impl MixGraphWorkload {
    /// The `workload` property value that selects it.
    pub const CLASS: &'static str = "kvlab.mixgraph";

    /// From properties: every mixgraph flag by name, plus `key_model` and `decorrelate`.
    /// Properties in `ignored` (the runner's and stores') are skipped; any other is an
    /// error naming it.
    pub fn from_properties(
        props: &Properties,
        ignored: &[&str],
        ignored_prefixes: &[&str],
    ) -> Result<MixGraphWorkload, MixGraphWorkloadError> {
        Self::from_properties_with(props, ignored, ignored_prefixes, None)
    }

    /// As [`MixGraphWorkload::from_properties`], with the layout `keyrange_source=sst`
    /// stands for (read by the caller from the store's database; `None` when there is
    /// none, which makes `keyrange_source=sst` an error).
    pub fn from_properties_with(
        props: &Properties,
        ignored: &[&str],
        ignored_prefixes: &[&str],
        layout: Option<&KeyRangeLayout>,
    ) -> Result<MixGraphWorkload, MixGraphWorkloadError> {
        let mut config = MixGraphConfig::default();
        let mut starts: Option<Vec<u64>> = None;
        let mut end: Option<u64> = None;
        for (k, v) in props.iter() {
            if k == "workload"
                || ignored.contains(&k)
                || ignored_prefixes.iter().any(|p| k.starts_with(p))
            {
                continue;
            }
            match k {
                "keyrange_bounds" => {
                    if starts.is_some() {
                        return Err(MixGraphWorkloadError(
                            "keyrange_bounds and keyrange_source: give one of them".into(),
                        ));
                    }
                    starts = Some(read_range_starts(std::path::Path::new(v.trim()))?);
                }
                "keyrange_source" => {
                    if v.trim() != "sst" {
                        return Err(MixGraphWorkloadError(format!(
                            "property keyrange_source: `{v}`: expected sst (the SST files of \
                             the --db rocksdb database at --path)"
                        )));
                    }
                    if starts.is_some() {
                        return Err(MixGraphWorkloadError(
                            "keyrange_bounds and keyrange_source: give one of them".into(),
                        ));
                    }
                    let layout = layout.ok_or_else(|| {
                        MixGraphWorkloadError(
                            "property keyrange_source=sst needs an existing RocksDB database: \
                             --db rocksdb --path DIR"
                                .into(),
                        )
                    })?;
                    starts = Some(layout.starts.clone());
                    end = Some(layout.end);
                }
                "key_model" => {
                    config.key_model = Some(parse_key_model(v)?);
                }
                "decorrelate" => {
                    config.decorrelate = matches!(v.trim(), "true" | "1" | "yes");
                }
                _ => {
                    let known = config
                        .set_flag(k, v.trim())
                        .map_err(|e| MixGraphWorkloadError(e.to_string()))?;
                    if !known {
                        return Err(MixGraphWorkloadError(format!(
                            "property `{k}` is not a mixgraph flag (see docs/mixgraph.md)"
                        )));
                    }
                }
            }
        }
        if let Some(starts) = starts {
            if !props.iter().any(|(k, _)| k == "keyrange_num") {
                config.keyrange_num = starts.len() as i64;
            }
            if let Some(end) = end.filter(|_| !props.iter().any(|(k, _)| k == "num")) {
                config.num = i64::try_from(end).unwrap_or(i64::MAX);
            }
            config.keyrange_starts = Some(starts.into());
        }
        MixGraphWorkload::new(config)
    }

    /// From a validated configuration.
    pub fn new(config: MixGraphConfig) -> Result<MixGraphWorkload, MixGraphWorkloadError> {
        let model = MixGraph::new(&config, 0).map_err(|e| MixGraphWorkloadError(e.to_string()))?;
        if config.sine_mix_rate {
            SineSchedule::new(&config).map_err(|e| MixGraphWorkloadError(e.to_string()))?;
        }
        let pool_len = usize::try_from(config.value_max())
            .unwrap_or(1 << 20)
            .max(1)
            * 2;
        Ok(MixGraphWorkload {
            pool: ValuePool::printable(pool_len.max(1 << 16), config.seed as u64),
            model,
            config,
            tally: SeekTally::default(),
        })
    }

    /// The seeks' tally so far, over every client.
    pub fn seeks(&self) -> &SeekTally {
        &self.tally
    }

    /// The configuration (db_bench's flags).
    pub fn config(&self) -> &MixGraphConfig {
        &self.config
    }

    /// Operations each client runs (db_bench's `-reads`, per thread); `None` with
    /// `-reads=-1`: until `--duration` (or the time db_bench's `-duration` gives).
    pub fn ops_per_client(&self) -> Option<u64> {
        self.config.ops_per_thread()
    }

    /// Every effective setting, for the result document.
    pub fn effective(&self) -> Vec<(String, String)> {
        let c = &self.config;
        let mut v = vec![
            ("workload".to_string(), Self::CLASS.to_string()),
            (
                "key_model".into(),
                self.model.key_model().paper_name().into(),
            ),
            ("decorrelate".into(), c.decorrelate.to_string()),
        ];
        if let Some(starts) = &c.keyrange_starts {
            let text: Vec<String> = starts.iter().map(u64::to_string).collect();
            v.push(("keyrange_starts".into(), text.join(",")));
        }
        let pairs: [(&str, String); 30] = [
            ("num", c.num.to_string()),
            ("reads", c.reads.to_string()),
            ("seed", c.seed.to_string()),
            ("key_size", c.key_size.to_string()),
            ("keyrange_num", c.keyrange_num.to_string()),
            ("keyrange_dist_a", c.keyrange_dist_a.to_string()),
            ("keyrange_dist_b", c.keyrange_dist_b.to_string()),
            ("keyrange_dist_c", c.keyrange_dist_c.to_string()),
            ("keyrange_dist_d", c.keyrange_dist_d.to_string()),
            ("key_dist_a", c.key_dist_a.to_string()),
            ("key_dist_b", c.key_dist_b.to_string()),
            ("value_theta", c.value_theta.to_string()),
            ("value_k", c.value_k.to_string()),
            ("value_sigma", c.value_sigma.to_string()),
            ("iter_theta", c.iter_theta.to_string()),
            ("iter_k", c.iter_k.to_string()),
            ("iter_sigma", c.iter_sigma.to_string()),
            ("mix_get_ratio", c.mix_get_ratio.to_string()),
            ("mix_put_ratio", c.mix_put_ratio.to_string()),
            ("mix_seek_ratio", c.mix_seek_ratio.to_string()),
            ("mix_max_scan_len", c.mix_max_scan_len.to_string()),
            ("mix_max_value_size", c.mix_max_value_size.to_string()),
            ("sine_mix_rate", c.sine_mix_rate.to_string()),
            ("sine_a", c.sine_a.to_string()),
            ("sine_b", c.sine_b.to_string()),
            ("sine_c", c.sine_c.to_string()),
            ("sine_d", c.sine_d.to_string()),
            (
                "sine_mix_rate_interval_milliseconds",
                c.sine_mix_rate_interval_milliseconds.to_string(),
            ),
            ("sine_mix_rate_noise", c.sine_mix_rate_noise.to_string()),
            ("prefix_size", c.prefix_size.to_string()),
        ];
        v.extend(pairs.into_iter().map(|(k, val)| (k.to_string(), val)));
        v
    }
}

fn parse_key_model(v: &str) -> Result<KeyModel, MixGraphWorkloadError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "prefix_dist" => Ok(KeyModel::PrefixDist),
        "prefix_random" => Ok(KeyModel::PrefixRandom),
        "all_dist" => Ok(KeyModel::AllDist),
        "all_random" => Ok(KeyModel::AllRandom),
        other => Err(MixGraphWorkloadError(format!(
            "property key_model: `{other}` is not one of prefix_dist, prefix_random, all_dist, \
             all_random"
        ))),
    }
}

impl Workload for MixGraphWorkload {
    type Source = MixGraphSource;

    fn source(self: &Arc<Self>, _seed: u64, client: usize, clients: usize) -> MixGraphSource {
        let schedule = self.config.sine_mix_rate.then(|| {
            // Each client keeps its share of the run-wide rate.
            let n = clients.max(1) as f64;
            let share = MixGraphConfig {
                sine_a: self.config.sine_a / n,
                sine_d: self.config.sine_d / n,
                ..self.config.clone()
            };
            SineSchedule::new(&share).expect("validated when the workload was made")
        });
        MixGraphSource {
            workload: Arc::clone(self),
            gen: self.model.for_thread(client as u32),
            schedule,
            due: Duration::ZERO,
            pool_at: client * 7,
        }
    }

    fn needs(&self) -> Needs {
        Needs {
            scan: self.config.mix_seek_ratio > 0.0,
            blob: true,
            ..Needs::default()
        }
    }

    fn operation_count(&self) -> u64 {
        // db_bench's -reads is per thread; the runner splits the total evenly.
        match self.config.ops_per_thread() {
            Some(n) => n.saturating_mul(u64::try_from(self.config.threads.max(1)).unwrap_or(1)),
            None => u64::from(u32::MAX),
        }
    }
}

/// One client's mixgraph stream (db_bench's thread of the same index).
#[derive(Debug)]
pub struct MixGraphSource {
    workload: Arc<MixGraphWorkload>,
    gen: MixGraph,
    schedule: Option<SineSchedule>,
    due: Duration,
    pool_at: usize,
}

impl OpSource for MixGraphSource {
    const TIMED: bool = true;

    #[inline]
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        let op = self.gen.next_op();
        req.key.extend_from_slice(op.key);
        match op.kind {
            MixKind::Get => {
                req.kind = OpKind::Read;
                req.read.set_blob();
                // db_bench's mixgraph never looks at what it read.
                req.read.set_discard(true);
            }
            MixKind::Put => {
                req.kind = OpKind::Insert;
                let pool = self.workload.pool.shared();
                let len = (op.value_size_bytes as usize).min(pool.len());
                self.pool_at = (self.pool_at + 4099) % (pool.len() - len + 1);
                req.value.set_shared(pool, self.pool_at..self.pool_at + len);
            }
            MixKind::Seek => {
                req.kind = OpKind::Scan;
                req.read.set_blob();
                req.read.set_discard(true);
                req.scan_len = u32::try_from(op.scan_len).unwrap_or(u32::MAX);
            }
        }
        if let Some(s) = &mut self.schedule {
            self.due = Duration::from_nanos(s.next_due_ns());
        }
        Some(Ticket::NONE)
    }

    #[inline]
    fn due(&self) -> Option<Duration> {
        self.schedule.as_ref().map(|_| self.due)
    }

    fn completed(&mut self, slot: &Slot, _ticket: Ticket) -> Verdict {
        // Seeks are a few percent of mixgraph's operations: one relaxed add each.
        if let Ok(Outcome::Scanned {
            records,
            starts_at_key,
            ..
        }) = slot.result
        {
            let tally = &self.workload.tally;
            tally.records.fetch_add(records, Ordering::Relaxed);
            if starts_at_key {
                tally.found.fetch_add(1, Ordering::Relaxed);
            }
        }
        Verdict::Unchecked
    }
}

#[cfg(test)]
mod range_start_tests {
    use super::*;

    #[test]
    fn range_starts_files_name_the_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("starts.txt");
        std::fs::write(&path, "# first\n0\n\n250\n700\n").unwrap();
        assert_eq!(read_range_starts(&path).unwrap(), vec![0, 250, 700]);
        for (text, want) in [
            ("0\n12x\n", "starts.txt:2: `12x`: expected a key number"),
            ("0\n-3\n", "starts.txt:2: `-3`: expected a key number"),
            (
                "5\n5\n",
                "starts.txt:2: 5: expected a key number above the previous start (5)",
            ),
            ("# only a comment\n", "no key-range start"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = read_range_starts(&path).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = read_range_starts(&dir.path().join("missing")).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }

    #[test]
    fn explicit_ranges_set_keyrange_num_and_an_unequal_count_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("starts.txt");
        std::fs::write(&path, "0\n100\n900\n").unwrap();
        let mut props = Properties::new();
        for p in [
            "workload=kvlab.mixgraph".to_string(),
            "num=1000".into(),
            "keyrange_dist_a=14.18".into(),
            "keyrange_dist_b=-2.917".into(),
            "key_dist_a=0.002312".into(),
            "key_dist_b=0.3467".into(),
            format!("keyrange_bounds={}", path.display()),
        ] {
            props.set_override(&p).unwrap();
        }
        let w = MixGraphWorkload::from_properties(&props, &[], &[]).unwrap();
        assert_eq!(w.config().keyrange_num, 3);
        assert_eq!(
            w.config().keyrange_starts.as_deref(),
            Some(&[0, 100, 900][..])
        );
        props.set_override("keyrange_num=4").unwrap();
        let e = MixGraphWorkload::from_properties(&props, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("keyrange_num"), "{e}");
        // keyrange_source=sst without a database is refused.
        let mut props = Properties::new();
        props.set_override("keyrange_source=sst").unwrap();
        let e = MixGraphWorkload::from_properties(&props, &[], &[]).unwrap_err();
        assert!(e.to_string().contains("--db rocksdb --path DIR"), "{e}");
    }
}

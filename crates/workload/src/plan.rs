//! Thread plans: groups of threads, each with its own operation mix, in one run.
//!
//! - [`Proportions`] is an operation mix (YCSB's six `*proportion` properties).
//! - [`Plan`] assigns every worker thread to a [`PlanGroup`] (a name, a thread count and
//!   a mix). It comes from a plan file ([`Plan::load`]) or from Terark's benchmark's
//!   `--plan_config` / `--thread_plan_map` flags ([`Plan::from_thread_map`]).
//! - [`PlanWorkload`] runs one workload per group (built by the caller with the group's
//!   mix) and hands each client the source of its thread's group, wrapped in a
//!   [`PlanSource`] that counts operations per group ([`GroupCounts`]).
//!
//! # Plan files
//!
//! ```text
//! # Two threads that only read, one that only inserts.
//! group.readers.threads = 2
//! group.readers.readproportion = 1
//! group.writers.threads = 1
//! group.writers.insertproportion = 1
//! ```
//!
//! Lines are `group.NAME.SETTING = VALUE` (`:` may replace `=`); `#` and `!` start
//! comments; blank lines are skipped. `NAME` is letters, digits, `_` and `-`. Settings:
//! `threads` (required, from 1 to 65536 over all groups) and the proportions `readproportion`,
//! `updateproportion`, `insertproportion`, `scanproportion`,
//! `readmodifywriteproportion`, `deleteproportion`. A group's mix is exactly what it
//! lists: proportions it does not set are 0 (not YCSB's 0.95/0.05 defaults), and at
//! least one must be positive. Threads are numbered in the order groups first appear:
//! above, threads 0–1 are `readers` and thread 2 is `writers`. Anything else — an
//! unknown setting, a setting given twice, a bad number — is an error naming the file
//! and line.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use kvlab_core::{OpKind, Request, Slot, Status};

use crate::{Needs, OpSource, Origin, Properties, Ticket, Verdict, Workload, WorkloadError};

/// The property names of the six operation proportions, in [`OpKind::ALL`] order.
pub const PROPORTION_KEYS: [&str; 6] = [
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "deleteproportion",
];

/// YCSB's default proportions, in [`OpKind::ALL`] order.
const YCSB_DEFAULTS: [f64; 6] = [0.95, 0.05, 0.0, 0.0, 0.0, 0.0];

/// An operation mix: a non-negative weight per [`OpKind`], not all zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Proportions {
    weights: [f64; 6],
    /// Cumulative normalised weights, for [`Proportions::choose`].
    thresholds: [f64; 6],
}

impl Proportions {
    /// A mix from weights in [`OpKind::ALL`] order (they need not sum to 1). Errors
    /// when a weight is negative or not finite, or when all are zero.
    pub fn new(weights: [f64; 6]) -> Result<Proportions, String> {
        if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(format!(
                "{} = {}: expected a non-negative number",
                PROPORTION_KEYS[i], weights[i]
            ));
        }
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return Err(format!(
                "every proportion is 0; give at least one of {}",
                PROPORTION_KEYS.join(", ")
            ));
        }
        let mut thresholds = [0.0; 6];
        let mut cumulative = 0.0;
        for (t, w) in thresholds.iter_mut().zip(weights) {
            cumulative += w / total;
            *t = cumulative;
        }
        Ok(Proportions {
            weights,
            thresholds,
        })
    }

    /// The mix YCSB properties give: the six `*proportion` properties with YCSB's
    /// defaults (`readproportion` 0.95, `updateproportion` 0.05, the others 0).
    pub fn from_properties(props: &Properties) -> Result<Proportions, WorkloadError> {
        let mut weights = YCSB_DEFAULTS;
        for (w, key) in weights.iter_mut().zip(PROPORTION_KEYS) {
            if let Some(v) = props.get(key) {
                *w = match v.trim().parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => x,
                    _ => {
                        return Err(WorkloadError::InvalidValue {
                            key: key.to_string(),
                            value: v.to_string(),
                            origin: props.origin(key).cloned().unwrap_or(Origin::Default),
                            expected: "a non-negative number".into(),
                        })
                    }
                };
            }
        }
        Proportions::new(weights).map_err(WorkloadError::Inconsistent)
    }

    /// The weight of `kind` as given.
    pub fn weight(&self, kind: OpKind) -> f64 {
        self.weights[kind.index()]
    }

    /// The share of `kind` in the mix, in `[0, 1]`.
    pub fn share(&self, kind: OpKind) -> f64 {
        let i = kind.index();
        self.thresholds[i] - if i == 0 { 0.0 } else { self.thresholds[i - 1] }
    }

    /// The kind for a uniform draw `u` in `[0, 1)`.
    #[inline]
    pub fn choose(&self, u: f64) -> OpKind {
        match self.thresholds.iter().position(|&t| u < t) {
            Some(i) => OpKind::ALL[i],
            // Rounding can leave the last threshold a hair below 1: the last kind with a
            // positive weight.
            None => OpKind::ALL[self.weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)],
        }
    }

    /// The weights as `(property name, value)` pairs.
    pub fn properties(&self) -> Vec<(String, String)> {
        PROPORTION_KEYS
            .iter()
            .zip(self.weights)
            .map(|(k, w)| (k.to_string(), w.to_string()))
            .collect()
    }
}

/// One group of a [`Plan`]: threads that share an operation mix.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanGroup {
    /// The group's name (`readers`), or `config<ID>` for a `--plan_config` entry.
    pub name: String,
    /// Worker threads in the group.
    pub threads: usize,
    /// The group's operation mix.
    pub mix: Proportions,
    /// Where the group was defined (its first line in a plan file).
    pub origin: Origin,
}

/// Worker threads split into groups, each with its own mix.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    groups: Vec<PlanGroup>,
    /// The group of each thread, by thread number.
    thread_groups: Vec<usize>,
}

/// The settings a plan-file group takes besides the proportions.
const THREADS: &str = "threads";

/// The most threads a plan file may give, over all its groups: each is a slot of the
/// plan, allocated up front.
const MAX_PLAN_THREADS: usize = 1 << 16;

impl Plan {
    /// Reads a plan file (see the module docs). The file is read sequentially, so a
    /// pipe works too.
    pub fn load(path: &Path) -> Result<Plan, WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Plan::parse_str(&text, path)
    }

    /// Parses plan-file text; `path` names the file in errors.
    pub fn parse_str(text: &str, path: &Path) -> Result<Plan, WorkloadError> {
        let syntax = |line: usize, message: String| WorkloadError::Syntax {
            path: path.to_path_buf(),
            line,
            message,
        };
        struct Raw {
            first_line: usize,
            threads: Option<usize>,
            weights: [f64; 6],
        }
        let mut order: Vec<String> = Vec::new();
        let mut raw: HashMap<String, Raw> = HashMap::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, line_text) in text.lines().enumerate() {
            let line = index + 1;
            let t = line_text.trim();
            if t.is_empty() || t.starts_with('#') || t.starts_with('!') {
                continue;
            }
            let Some(at) = t.find(['=', ':']) else {
                return Err(syntax(
                    line,
                    format!("expected `group.NAME.SETTING = VALUE`, found `{t}`"),
                ));
            };
            let (key, value) = (t[..at].trim(), t[at + 1..].trim());
            if let Some(first) = seen.insert(key.to_string(), line) {
                return Err(syntax(
                    line,
                    format!("`{key}` is set again (first set on line {first})"),
                ));
            }
            let mut parts = key.splitn(3, '.');
            let (Some("group"), Some(name), Some(setting)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(syntax(
                    line,
                    format!("unknown plan key `{key}`: expected `group.NAME.SETTING`"),
                ));
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(syntax(
                    line,
                    format!(
                        "group name `{name}` in `{key}`: use letters, digits, `_` and `-` only"
                    ),
                ));
            }
            let group = raw.entry(name.to_string()).or_insert_with(|| {
                order.push(name.to_string());
                Raw {
                    first_line: line,
                    threads: None,
                    weights: [0.0; 6],
                }
            });
            if setting == THREADS {
                match value.parse::<usize>() {
                    Ok(n) if (1..=MAX_PLAN_THREADS).contains(&n) => group.threads = Some(n),
                    _ => {
                        let expected = format!("at least 1 and at most {MAX_PLAN_THREADS}");
                        return Err(syntax(
                            line,
                            format!("`{key}` = `{value}`: expected a thread count, {expected}"),
                        ));
                    }
                }
            } else if let Some(i) = PROPORTION_KEYS.iter().position(|k| *k == setting) {
                match value.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => group.weights[i] = x,
                    _ => {
                        return Err(syntax(
                            line,
                            format!("`{key}` = `{value}`: expected a non-negative number"),
                        ))
                    }
                }
            } else {
                return Err(syntax(
                    line,
                    format!(
                        "unknown setting `{setting}` in `{key}`; a group takes {THREADS}, {}",
                        PROPORTION_KEYS.join(", ")
                    ),
                ));
            }
        }
        if order.is_empty() {
            return Err(syntax(
                1,
                "no groups: expected lines like `group.readers.threads = 2`".into(),
            ));
        }
        let mut groups = Vec::with_capacity(order.len());
        let mut thread_groups = Vec::new();
        for name in order {
            let r = &raw[&name];
            let threads = r.threads.ok_or_else(|| {
                syntax(
                    r.first_line,
                    format!("group `{name}` has no `group.{name}.threads`"),
                )
            })?;
            let mix = Proportions::new(r.weights)
                .map_err(|m| syntax(r.first_line, format!("group `{name}`: {m}")))?;
            if thread_groups.len() + threads > MAX_PLAN_THREADS {
                return Err(syntax(
                    r.first_line,
                    format!("group `{name}`: more than {MAX_PLAN_THREADS} threads in all"),
                ));
            }
            thread_groups.extend(std::iter::repeat_n(groups.len(), threads));
            groups.push(PlanGroup {
                name,
                threads,
                mix,
                origin: Origin::File {
                    path: path.to_path_buf(),
                    line: r.first_line,
                },
            });
        }
        Ok(Plan {
            groups,
            thread_groups,
        })
    }

    /// A plan from Terark's benchmark's flags: `--plan_config ID:READ:INSERT:UPDATE`
    /// (percentages of reads, writes — inserts — and updates; they are weights and need not sum to
    /// 100) and `--thread_plan_map THREADS:ID`, where `THREADS` is a thread number or an
    /// inclusive range `MIN-MAX`. Threads that no map names use config `0`, as in the
    /// original tool. Each config that some thread uses becomes a group `config<ID>`.
    pub fn from_thread_map(
        configs: &[String],
        maps: &[String],
        threads: usize,
    ) -> Result<Plan, WorkloadError> {
        let bad = |m: String| WorkloadError::Inconsistent(m);
        if threads == 0 {
            return Err(bad("a thread plan needs at least 1 thread".into()));
        }
        let mut mixes: Vec<(String, Proportions)> = Vec::new();
        for c in configs {
            let parts: Vec<&str> = c.split(':').map(str::trim).collect();
            let [id, read, insert, update] = parts[..] else {
                return Err(bad(format!(
                    "--plan_config `{c}`: expected ID:READ:WRITE:UPDATE, e.g. 0:90:5:5"
                )));
            };
            let mut weights = [0.0; 6];
            for (slot, text) in [(0, read), (2, insert), (1, update)] {
                weights[slot] = match text.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => x,
                    _ => {
                        return Err(bad(format!(
                            "--plan_config `{c}`: `{text}` is not a non-negative percentage"
                        )))
                    }
                };
            }
            if id.is_empty() || !id.chars().all(|ch| ch.is_ascii_alphanumeric()) {
                return Err(bad(format!(
                    "--plan_config `{c}`: the config id `{id}` must be letters or digits"
                )));
            }
            if mixes.iter().any(|(i, _)| i == id) {
                return Err(bad(format!("--plan_config: config `{id}` is given twice")));
            }
            let mix = Proportions::new(weights)
                .map_err(|_| bad(format!("--plan_config `{c}`: every percentage is 0")))?;
            mixes.push((id.to_string(), mix));
        }
        let mut assigned: Vec<Option<usize>> = vec![None; threads];
        for m in maps {
            let Some((range, id)) = m.rsplit_once(':') else {
                return Err(bad(format!(
                    "--thread_plan_map `{m}`: expected THREADS:ID, e.g. 0-3:1 or 4:0"
                )));
            };
            let config = mixes
                .iter()
                .position(|(i, _)| i == id.trim())
                .ok_or_else(|| {
                    bad(format!(
                        "--thread_plan_map `{m}`: no --plan_config has id `{}`",
                        id.trim()
                    ))
                })?;
            let number = |s: &str| {
                s.trim().parse::<usize>().map_err(|_| {
                    bad(format!(
                        "--thread_plan_map `{m}`: `{s}` is not a thread number"
                    ))
                })
            };
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(range)?, number(range)?),
            };
            if lo > hi || hi >= threads {
                return Err(bad(format!(
                    "--thread_plan_map `{m}`: threads {lo}-{hi} are not within 0-{} \
                     (--threads {threads})",
                    threads - 1
                )));
            }
            for (t, slot) in assigned.iter_mut().enumerate().take(hi + 1).skip(lo) {
                if let Some(earlier) = slot {
                    return Err(bad(format!(
                        "--thread_plan_map `{m}`: thread {t} is already mapped to config `{}`",
                        mixes[*earlier].0
                    )));
                }
                *slot = Some(config);
            }
        }
        let default = mixes.iter().position(|(i, _)| i == "0");
        let mut thread_configs = Vec::with_capacity(threads);
        for (t, slot) in assigned.iter().enumerate() {
            let c = slot.or(default).ok_or_else(|| {
                bad(format!(
                    "thread {t} is in no --thread_plan_map range and there is no config 0 \
                     for it to default to"
                ))
            })?;
            thread_configs.push(c);
        }
        let mut groups: Vec<PlanGroup> = Vec::new();
        let mut group_of_config: HashMap<usize, usize> = HashMap::new();
        let mut thread_groups = Vec::with_capacity(threads);
        for c in thread_configs {
            let g = *group_of_config.entry(c).or_insert_with(|| {
                groups.push(PlanGroup {
                    name: format!("config{}", mixes[c].0),
                    threads: 0,
                    mix: mixes[c].1,
                    origin: Origin::CommandLine,
                });
                groups.len() - 1
            });
            groups[g].threads += 1;
            thread_groups.push(g);
        }
        Ok(Plan {
            groups,
            thread_groups,
        })
    }

    /// The groups, in the order they were defined.
    pub fn groups(&self) -> &[PlanGroup] {
        &self.groups
    }

    /// Worker threads in all.
    pub fn threads(&self) -> usize {
        self.thread_groups.len()
    }

    /// The index (into [`Plan::groups`]) of thread `thread`'s group.
    pub fn group_of_thread(&self, thread: usize) -> usize {
        self.thread_groups[thread.min(self.thread_groups.len() - 1)]
    }

    /// The thread numbers of group `group`, as text: `0-1`, `2`, `0,3-4`.
    pub fn thread_ranges(&self, group: usize) -> String {
        let mut out: Vec<String> = Vec::new();
        let mut t = 0;
        while t < self.thread_groups.len() {
            if self.thread_groups[t] != group {
                t += 1;
                continue;
            }
            let start = t;
            while t + 1 < self.thread_groups.len() && self.thread_groups[t + 1] == group {
                t += 1;
            }
            out.push(if start == t {
                start.to_string()
            } else {
                format!("{start}-{t}")
            });
            t += 1;
        }
        out.join(",")
    }

    /// The plan as `(name, value)` pairs for a result document: per group its threads
    /// and proportions.
    pub fn effective(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (i, g) in self.groups.iter().enumerate() {
            out.push((
                format!("plan.group.{}.threads", g.name),
                self.thread_ranges(i),
            ));
            for (k, v) in g.mix.properties() {
                out.push((format!("plan.group.{}.{k}", g.name), v));
            }
        }
        out
    }
}

/// What the clients of one group did: operations issued per kind, and how they ended.
///
/// A read-modify-write counts once, under [`OpKind::ReadModifyWrite`], with the status
/// of its read half (the runner reports the update half to the source no more than the
/// recorder does). Counts include warm-up operations, which the runner's results leave
/// out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCounts {
    /// Operations issued, by [`OpKind::index`].
    pub issued: [u64; 6],
    /// Completed operations by [`OpKind::index`] and [`Status::index`].
    pub status: [[u64; 3]; 6],
}

impl GroupCounts {
    /// Operations issued in all.
    pub fn total(&self) -> u64 {
        self.issued.iter().sum()
    }

    fn add(&mut self, other: &GroupCounts) {
        for k in 0..6 {
            self.issued[k] += other.issued[k];
            for s in 0..3 {
                self.status[k][s] += other.status[k][s];
            }
        }
    }
}

/// A workload per plan group; client `c` gets the source of its thread's group.
#[derive(Debug)]
pub struct PlanWorkload<W> {
    plan: Plan,
    workloads: Vec<Arc<W>>,
    counts: Vec<Arc<Mutex<GroupCounts>>>,
}

impl<W: Workload> PlanWorkload<W> {
    /// One workload per group of `plan`, in [`Plan::groups`] order (each built with its
    /// group's mix).
    ///
    /// # Panics
    ///
    /// When `workloads` does not have one workload per group (a caller bug).
    pub fn new(plan: Plan, workloads: Vec<Arc<W>>) -> PlanWorkload<W> {
        assert_eq!(
            plan.groups().len(),
            workloads.len(),
            "one workload per plan group"
        );
        let counts = workloads
            .iter()
            .map(|_| Arc::new(Mutex::new(GroupCounts::default())))
            .collect();
        PlanWorkload {
            plan,
            workloads,
            counts,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The groups' workloads, in [`Plan::groups`] order.
    pub fn workloads(&self) -> &[Arc<W>] {
        &self.workloads
    }

    /// What each group's clients have done so far (complete once the run's sources have
    /// been dropped, i.e. after the runner returns), in [`Plan::groups`] order.
    pub fn counts(&self) -> Vec<GroupCounts> {
        self.counts
            .iter()
            .map(|c| *c.lock().unwrap_or_else(|p| p.into_inner()))
            .collect()
    }
}

impl<W: Workload> Workload for PlanWorkload<W> {
    type Source = PlanSource<W::Source>;

    /// Client `client` of `clients` runs on thread `client * threads / clients` (the
    /// runner puts `clients / threads` consecutive clients on each thread).
    fn source(self: &Arc<Self>, seed: u64, client: usize, clients: usize) -> PlanSource<W::Source> {
        let thread = client * self.plan.threads() / clients.max(1);
        let group = self.plan.group_of_thread(thread);
        PlanSource {
            inner: self.workloads[group].source(seed, client, clients),
            pending: std::collections::VecDeque::new(),
            counts: GroupCounts::default(),
            shared: Arc::clone(&self.counts[group]),
        }
    }

    fn needs(&self) -> Needs {
        self.workloads
            .iter()
            .map(|w| w.needs())
            .fold(Needs::default(), Needs::union)
    }

    fn operation_count(&self) -> u64 {
        self.workloads
            .iter()
            .map(|w| w.operation_count())
            .max()
            .unwrap_or(0)
    }
}

/// A group member's source: the group workload's source, with its operations counted.
/// The counts join the group's totals when the source is dropped.
#[derive(Debug)]
pub struct PlanSource<S: OpSource> {
    inner: S,
    /// Kinds issued and not completed yet, oldest first (completions come in order).
    pending: std::collections::VecDeque<OpKind>,
    counts: GroupCounts,
    shared: Arc<Mutex<GroupCounts>>,
}

impl<S: OpSource> OpSource for PlanSource<S> {
    const TIMED: bool = S::TIMED;

    #[inline]
    fn next(&mut self, req: &mut Request) -> Option<Ticket> {
        let ticket = self.inner.next(req)?;
        self.counts.issued[req.kind.index()] += 1;
        self.pending.push_back(req.kind);
        Some(ticket)
    }

    #[inline]
    fn due(&self) -> Option<std::time::Duration> {
        self.inner.due()
    }

    #[inline]
    fn completed(&mut self, slot: &Slot, ticket: Ticket) -> Verdict {
        let kind = self.pending.pop_front().unwrap_or(slot.request.kind);
        let status = match &slot.result {
            Ok(o) => o.status(),
            Err(_) => Status::Error,
        };
        self.counts.status[kind.index()][status.index()] += 1;
        self.inner.completed(slot, ticket)
    }

    #[inline]
    fn retry_after(&mut self, slot: &Slot, retries: u64) -> Option<std::time::Duration> {
        self.inner.retry_after(slot, retries)
    }
}

impl<S: OpSource> Drop for PlanSource<S> {
    fn drop(&mut self) {
        self.shared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(&self.counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Plan, WorkloadError> {
        Plan::parse_str(text, Path::new("plan.txt"))
    }

    #[test]
    fn thread_counts_past_the_limit_are_errors_naming_the_line() {
        let err = parse("group.a.readproportion=1\ngroup.a.threads=22146734595\n").unwrap_err();
        assert!(err.to_string().starts_with("plan.txt:2: "), "{err}");
        let err = parse(
            "group.a.threads=65536\ngroup.a.readproportion=1\n\
             group.b.threads=1\ngroup.b.readproportion=1\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("plan.txt:3: group `b`"),
            "{err}"
        );
    }

    #[test]
    fn groups_take_threads_in_order() {
        let p = parse(
            "# readers first\ngroup.readers.threads = 2\ngroup.readers.readproportion=1\n\n\
             group.writers.threads: 1\ngroup.writers.insertproportion = 3\n\
             group.writers.updateproportion = 1\n",
        )
        .unwrap();
        assert_eq!(p.threads(), 3);
        assert_eq!(
            (0..3).map(|t| p.group_of_thread(t)).collect::<Vec<_>>(),
            [0, 0, 1]
        );
        let w = &p.groups()[1];
        assert_eq!(w.name, "writers");
        assert_eq!(w.mix.share(OpKind::Insert), 0.75);
        assert_eq!(w.mix.share(OpKind::Read), 0.0);
        assert_eq!(p.thread_ranges(0), "0-1");
        assert_eq!(p.thread_ranges(1), "2");
    }

    #[test]
    fn plan_file_errors_name_the_line() {
        let cases = [
            (
                "group.a.threads=1\ngroup.a.readproportoin=1\n",
                2,
                "unknown setting",
            ),
            ("group.a.threads=0\n", 1, "at least 1"),
            (
                "group.a.threads=1\ngroup.a.readproportion=-1\n",
                2,
                "non-negative",
            ),
            ("group.a.threads=1\ngroup.a.threads=2\n", 2, "set again"),
            ("threads=1\n", 1, "group.NAME.SETTING"),
            ("group.a b.threads=1\n", 1, "group name"),
            ("group.a.readproportion=1\n", 1, "no `group.a.threads`"),
            ("group.a.threads=1\n", 1, "every proportion is 0"),
            ("just words\n", 1, "expected"),
            ("# nothing\n", 1, "no groups"),
        ];
        for (text, line, what) in cases {
            match parse(text) {
                Err(WorkloadError::Syntax {
                    line: l, message, ..
                }) => {
                    assert_eq!(l, line, "{text:?}: {message}");
                    assert!(message.contains(what), "{text:?}: {message}");
                }
                other => panic!("{text:?}: expected a syntax error, got {other:?}"),
            }
        }
    }

    #[test]
    fn thread_map_defaults_to_config_zero() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let p = Plan::from_thread_map(&s(&["0:100:0:0", "1:0:50:50"]), &s(&["1-2:1"]), 4).unwrap();
        assert_eq!(p.groups().len(), 2);
        assert_eq!(p.groups()[0].name, "config0");
        assert_eq!(p.thread_ranges(0), "0,3");
        assert_eq!(p.thread_ranges(1), "1-2");
        assert_eq!(p.groups()[1].mix.share(OpKind::Update), 0.5);
        for (configs, maps, threads) in [
            (&["0:1:1"][..], &[][..], 2),
            (&["1:1:0:0"][..], &[][..], 2),
            (&["0:1:0:0"][..], &["0-2:0"][..], 2),
            (&["0:1:0:0"][..], &["0:7"][..], 2),
            (&["0:1:0:0", "1:0:1:0"][..], &["0:0", "0:1"][..], 2),
            (&["0:0:0:0"][..], &[][..], 1),
        ] {
            assert!(
                Plan::from_thread_map(&s(configs), &s(maps), threads).is_err(),
                "{configs:?} {maps:?}"
            );
        }
    }

    #[test]
    fn choose_follows_thresholds() {
        let m = Proportions::new([1.0, 0.0, 1.0, 0.0, 0.0, 0.0]).unwrap();
        assert_eq!(m.choose(0.0), OpKind::Read);
        assert_eq!(m.choose(0.49), OpKind::Read);
        assert_eq!(m.choose(0.5), OpKind::Insert);
        assert_eq!(m.choose(0.999_999), OpKind::Insert);
        assert_eq!(m.choose(1.0), OpKind::Insert);
        assert!(Proportions::new([0.0; 6]).is_err());
        assert!(Proportions::new([f64::NAN, 1.0, 0.0, 0.0, 0.0, 0.0]).is_err());
    }
}

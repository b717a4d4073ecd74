//! From arguments to a workload and a plan: the one place that chooses what a phase
//! runs (a memtier-style workload, a CacheBench config, a cache or YCSB property file,
//! a key file or a thread plan) and how (threads, connections, rate, duration).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::observe::Observers;
use anyhow::Result;
use kvlab_report::Phase;
use kvlab_runner::{RunPlan, TargetRate, Warmup};
use kvlab_workload::memtier::MemtierWorkload;
use kvlab_workload::{
    AnyWorkload, CacheBenchConfig, CacheWorkload, CoreWorkload, KeyRangeLayout, MixGraphWorkload,
    Properties,
};

use crate::options::{PhaseOptions, Rounds};
use crate::phase::checks::{apply_merge_operator, parse_warmup, refused, usage};
use crate::phase::interrupt::{install_stop_handler, random_seed};
use crate::phase::{import, model};
use crate::phase::{PhaseSpec, ReportStyle};

/// The records a phase that has them (load, verify, a fresh server's preload) works
/// on, or a usage error naming the workload family that has no such phase.
pub fn records<'a>(work: &'a AnyWorkload, phase: &str) -> Result<&'a Arc<CoreWorkload>> {
    work.records().ok_or_else(|| usage(work.no_phase(phase)))
}

/// The Redis data model a workload means: YCSB records are hashes, blob values (memtier,
/// cache, blob imports and key files) are strings.
pub fn redis_model(work: &AnyWorkload) -> kvlab_net::redis::Model {
    if work.needs().blob {
        kvlab_net::redis::Model::String
    } else {
        kvlab_net::redis::Model::Hash
    }
}

/// Settings a CacheBench config brings, used where the command line is silent.
#[derive(Default)]
pub struct Defaults {
    /// Worker threads.
    pub threads: Option<usize>,
    /// Operations per thread.
    pub ops_per_thread: Option<u64>,
    /// A target rate in operations per second.
    pub target_rate: Option<f64>,
    /// The cache's size in MiB.
    pub cache_size_mb: Option<u64>,
    /// The disk tier's size in MiB.
    pub disk_size_mb: Option<u64>,
}

/// Property names consumed here rather than by the workload.
pub const CLI_PROPERTIES: &[&str] = &[
    "threadcount",
    "target",
    "db",
    "exporter",
    "exportfile",
    "measurementtype",
    "measurement.interval",
    "status.interval",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "histogram.buckets",
    "maxexecutiontime",
];

/// Option prefixes that stores declare (from the store table): passed to the store,
/// which validates them.
pub const STORE_PREFIXES: &[&str] = &crate::OPTION_PREFIXES;

/// `load`, `run` and `verify`: the workload (a memtier-style one from its flags, a
/// CacheBench config, a cache property file, or YCSB's CoreWorkload, then a key file
/// or thread plan over it) and the runner's plan, from the command line and the
/// properties — the one place where arguments become a workload.
pub fn select_phase(phase: Phase, mut args: PhaseOptions) -> Result<PhaseSpec> {
    let mut props = Properties::new();
    for f in &args.property_files {
        props.load_file(f).map_err(|e| usage(e.to_string()))?;
    }
    for p in &args.properties {
        props.set_override(p).map_err(|e| usage(e.to_string()))?;
    }
    apply_merge_operator(&args, &mut props)?;
    let core = args.replay.is_none()
        && args.model.is_none()
        && !args.memtier.given()
        && args.cachebench.is_none()
        && !matches!(
            props.get("workload"),
            Some(MixGraphWorkload::CLASS | CacheWorkload::CLASS)
        );
    if let Some(shard) = args.shard {
        if !core {
            return Err(usage(format!(
                "--shard {shard} splits a YCSB workload's records and operations \
                 (CoreWorkload property files, without --keys or --plan); not this one"
            )));
        }
        if matches!(phase, Phase::Load | Phase::Verify) {
            shard_records(shard, &mut props)?;
        }
    }
    let mut defaults = Defaults::default();
    let work = choose_workload(&args, &props, &mut defaults)?;
    let work = import::phase_work(phase, &mut args, &props, work)?;
    if let Some(shard) = args.shard.filter(|_| !matches!(work, AnyWorkload::Core(_))) {
        return Err(usage(format!(
            "--shard {shard} splits a YCSB workload's records and operations (CoreWorkload \
             property files); not a key file or a thread plan"
        )));
    }
    let threads = given_threads(&args, &props)?
        .or(defaults.threads)
        .unwrap_or(1);
    if let Some(mb) = defaults.cache_size_mb {
        apply_config_cache_size(&mut args, mb);
    }
    let takes = |flag| crate::StoreInfo::find(&args.db).is_some_and(|s| s.takes(flag));
    if args.disk_size.is_none() && takes(crate::Flag::DiskSize) {
        args.disk_size = defaults
            .disk_size_mb
            .filter(|&mb| mb > 0)
            .map(|mb| format!("{mb}MiB"));
    }
    if threads == 0 {
        return Err(usage("--threads must be at least 1"));
    }
    let mut plan = run_plan(&args, &props, &work, threads, &defaults)?;
    if let Some(shard) = args.shard {
        shard_plan(shard, phase, &mut plan);
    }
    check_plan(phase, &args, &plan)?;
    let stop = install_stop_handler();
    let ctx = PhaseSpec {
        phase,
        options: args,
        props,
        workload: work,
        plan,
        report: ReportStyle::Ycsb,
        stop,
        server: Vec::new(),
        observers: Observers::default(),
    };
    Ok(ctx)
}

/// The run's plan from the flags, the workload's properties (`target`,
/// `maxexecutiontime`) and what the workload implies (`defaults`).
fn run_plan(
    args: &PhaseOptions,
    props: &Properties,
    work: &AnyWorkload,
    threads: usize,
    defaults: &Defaults,
) -> Result<RunPlan> {
    let target_rate = match (args.target_rate, props.get("target")) {
        (Some(t), _) => Some(t),
        (None, Some(t)) => {
            let v: f64 = t
                .trim()
                .parse()
                .map_err(|_| usage(format!("property target: `{t}` is not a number")))?;
            (v > 0.0).then_some(TargetRate::Constant(v))
        }
        (None, None) => defaults.target_rate.map(TargetRate::Constant),
    };
    if args.connections == 0 || args.pipeline == 0 {
        return Err(usage("--connections and --pipeline must be at least 1"));
    }
    let duration = match (args.duration, props.get("maxexecutiontime")) {
        (Some(d), _) => Some(d),
        (None, Some(t)) => Some(Duration::from_secs(t.trim().parse().map_err(|_| {
            usage(format!(
                "property maxexecutiontime: `{t}` is not a number of seconds"
            ))
        })?)),
        (None, None) => None,
    };
    let warmup = match &args.warmup {
        Some(w) => parse_warmup(w)?,
        None => Warmup::None,
    };
    if args.interval.is_zero() {
        return Err(usage("--interval must be greater than zero"));
    }
    let seed = args.seed.unwrap_or_else(random_seed);
    Ok(RunPlan {
        threads,
        clients: args.connections,
        pipeline: args.pipeline,
        // A replay runs until every client has sent its share of the trace.
        operations: if args.duration.is_some() || matches!(work, AnyWorkload::Replay(_)) {
            None
        } else {
            // CacheBench's numOps and db_bench's -reads are per thread (client).
            let per_client = match &work {
                AnyWorkload::MixGraph(w) => w.ops_per_client(),
                _ => None,
            };
            Some(match defaults.ops_per_thread.or(per_client) {
                Some(per_thread) => per_thread.saturating_mul(threads as u64),
                None => work.operation_count(),
            })
        },
        duration,
        warmup,
        target_rate,
        interval: args.interval,
        seed,
        max_errors: args.max_errors,
        stop_on_connection_error: false,
        thread_groups: work.thread_groups(),
        ..RunPlan::default()
    })
}

/// The workload the arguments name: a replay, a fitted model, a memtier line, a
/// CacheBench config, a mixgraph or cache property file, or YCSB's CoreWorkload; what
/// the workload implies for the plan goes into `defaults`.
fn choose_workload(
    args: &PhaseOptions,
    props: &Properties,
    defaults: &mut Defaults,
) -> Result<AnyWorkload> {
    let work = if let Some(r) = &args.replay {
        AnyWorkload::Replay(Arc::clone(&r.workload))
    } else if let Some(model) = &args.model {
        let w = model::model_work(model, props)?;
        if let AnyWorkload::MixGraph(m) = &w {
            defaults.threads = Some(m.config().threads.max(1) as usize);
        }
        w
    } else if args.memtier.given() {
        memtier_work(args, props)?
    } else if let Some(path) = &args.cachebench {
        cachebench_work(path, props, defaults)?
    } else if props.get("workload") == Some(MixGraphWorkload::CLASS) {
        let layout = match props.get("keyrange_source") {
            Some(_) => sst_layout(args, props)?,
            None => None,
        };
        let w = MixGraphWorkload::from_properties_with(
            props,
            CLI_PROPERTIES,
            STORE_PREFIXES,
            layout.as_ref(),
        )
        .map_err(|e| usage(e.to_string()))?;
        defaults.threads = Some(w.config().threads.max(1) as usize);
        AnyWorkload::MixGraph(Arc::new(w))
    } else if props.get("workload") == Some(CacheWorkload::CLASS) {
        let w = CacheWorkload::from_properties(props, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(|e| usage(e.to_string()))?;
        AnyWorkload::Cache(Arc::new(w))
    } else {
        let w = CoreWorkload::from_properties(props, CLI_PROPERTIES, STORE_PREFIXES)
            .map_err(|e| usage(e.to_string()))?;
        AnyWorkload::Core(Arc::new(w))
    };
    Ok(work)
}

/// A CacheBench config's workload, with the properties that override it; its threads,
/// operations, rate and cache sizes become the plan's defaults.
fn cachebench_work(
    path: &Path,
    props: &Properties,
    defaults: &mut Defaults,
) -> Result<AnyWorkload> {
    let mut overrides = Vec::new();
    for (k, v) in props.iter() {
        if kvlab_workload::CACHEBENCH_OVERRIDES.contains(&k) {
            overrides.push((k.to_string(), v.to_string()));
        } else if !is_runner_or_store_property(k) {
            return Err(usage(format!(
                "property `{k}` does not apply to a CacheBench config; its overrides are: {}",
                kvlab_workload::CACHEBENCH_OVERRIDES.join(", ")
            )));
        }
    }
    let config = CacheBenchConfig::load(path, &overrides).map_err(|e| usage(e.to_string()))?;
    for w in config.warnings() {
        eprintln!("kvlab: warning: {}: {w}", path.display());
    }
    defaults.threads = Some(config.threads() as usize);
    defaults.ops_per_thread = Some(config.ops_per_thread());
    defaults.target_rate = config.target_rate_ops_per_s();
    defaults.cache_size_mb = config.cache_size_mb();
    defaults.disk_size_mb = config.nvm_cache_size_mb();
    Ok(AnyWorkload::Cache(Arc::new(
        config.workload().map_err(|e| usage(e.to_string()))?,
    )))
}

/// The plan's values that cannot mean anything or that the machine cannot hold, refused
/// before the store is opened: a zero `--duration` or `--slo-step`, a run of zero
/// operations, more worker threads or connections than the machine's limits.
fn check_plan(phase: Phase, args: &PhaseOptions, plan: &RunPlan) -> Result<()> {
    use crate::plan as checks;
    if let Some(d) = args.duration {
        checks::check_duration("--duration", d).map_err(refused)?;
    }
    if args.slo.is_some() {
        checks::check_duration("--slo-step", args.slo_step).map_err(refused)?;
    }
    if phase == Phase::Run {
        checks::check_operations(plan.operations).map_err(refused)?;
    }
    check_rounds(phase, args)?;
    if let Some(path) = &args.record.record {
        crate::outputs::check_output_file("--record", path, args.overwrite).map_err(refused)?;
    }
    let network =
        crate::StoreInfo::find(&args.db).is_some_and(|s| s.access == crate::Access::Network);
    check_workers(plan.threads, plan.clients, network)
}

/// `--rounds` repeats a measured run and keeps each round's results apart: it needs
/// `run`, and none of what a round would overwrite or the search that sets its own runs.
fn check_rounds(phase: Phase, args: &PhaseOptions) -> Result<()> {
    let Some(rounds) = args.rounds else {
        return Ok(());
    };
    let refuse = |m: &str| Err(usage(format!("--rounds: {m}")));
    if phase != Phase::Run {
        return refuse("repeats `kvlab run` only (a load or verify is done once)");
    }
    if args.slo.is_some() {
        return refuse("--slo runs its own steps; leave out --rounds");
    }
    if args.record.record.is_some() {
        return refuse("every round would replace the --record file; record one run instead");
    }
    if args.expected_log.is_some() {
        return refuse("every round would replace the --expected-log; use one run");
    }
    if rounds == Rounds::Auto && args.max_rounds < 3 {
        return refuse("auto needs --max-rounds of at least 3 (an interval needs rounds)");
    }
    Ok(())
}

/// Refuses worker threads and connections beyond this machine's limits (after raising the
/// soft open-file limit to the hard one, as a benchmark client should).
pub fn check_workers(threads: usize, clients: usize, network: bool) -> Result<()> {
    crate::limits::raise_open_files();
    crate::limits::check_workers(
        &crate::limits::Machine::current(),
        threads as u64,
        clients as u64,
        network,
    )
    .map_err(refused)
}

/// A CacheBench config's `cacheSizeMB` (CacheLib's cache size) where the store has a
/// size of the kind: an in-process cache's capacity unless `--cache-size` gives one; a
/// spawned server's memory (`maxmemory`, memcached's `m`) unless `--spawn` sets it; said
/// on stderr either way, and where it cannot apply (an embedded store, a running
/// server), said too — the workload runs in every case.
fn apply_config_cache_size(args: &mut PhaseOptions, mb: u64) {
    use crate::{Access, Flag, StoreInfo};
    let Some(store) = StoreInfo::find(&args.db) else {
        return;
    };
    let db = store.name;
    let said =
        |how: String| eprintln!("kvlab: the CacheBench config's cacheSizeMB ({mb} MB) {how}");
    if store.takes(Flag::CacheSize) {
        if args.cache_size.is_none() {
            args.cache_size = Some(format!("{mb}MiB"));
            said(format!("is {db}'s capacity"));
        } else {
            said("is not used: --cache-size gives the capacity".into());
        }
        return;
    }
    if store.access != Access::Network {
        said(format!(
            "is CacheLib's cache size: not applied to --db {db}, which has no cache of the kind"
        ));
        return;
    }
    let Some(settings) = args.spawn.as_mut() else {
        said(format!(
            "is not applied to a running {db} server: its memory is its own configuration"
        ));
        return;
    };
    // memcached's memory is `m` or its long name `memory-limit`.
    let (key, names): (&str, &[&str]) = if db == "redis" {
        ("maxmemory", &["maxmemory"])
    } else {
        ("m", &["m", "memory-limit"])
    };
    let set = settings.split(',').any(|kv| {
        kv.split('=')
            .next()
            .is_some_and(|k| names.contains(&k.trim()))
    });
    if set {
        said(format!("is not used: --spawn sets {key}"));
        return;
    }
    let value = if db == "redis" {
        format!("{mb}mb")
    } else {
        mb.to_string()
    };
    if !settings.trim().is_empty() {
        settings.push(',');
    }
    settings.push_str(&format!("{key}={value}"));
    said(format!("is the spawned server's memory: {key}={value}"));
}

/// Whether a property is read here ([`CLI_PROPERTIES`]) or by the store
/// ([`STORE_PREFIXES`]) rather than by a workload.
pub fn is_runner_or_store_property(k: &str) -> bool {
    CLI_PROPERTIES.contains(&k) || STORE_PREFIXES.iter().any(|p| k.starts_with(p))
}

/// The worker threads asked for: `--threads`, else the `threadcount` property.
pub fn given_threads(args: &PhaseOptions, props: &Properties) -> Result<Option<usize>> {
    match (args.threads, props.get("threadcount")) {
        (Some(t), _) => Ok(Some(t)),
        (None, Some(t)) => {
            Ok(Some(t.trim().parse().map_err(|_| {
                usage(format!("property threadcount: `{t}` is not a number"))
            })?))
        }
        (None, None) => Ok(None),
    }
}

/// The memtier-style workload of `run --ratio …` (and the other memtier flags): no
/// property file or CacheBench config beside it, and no workload properties.
pub fn memtier_work(args: &PhaseOptions, props: &Properties) -> Result<AnyWorkload> {
    if !args.property_files.is_empty() || args.cachebench.is_some() {
        return Err(usage(
            "the memtier flags (--ratio, --key-*, --data-size*, --requests, …) describe the \
             workload: give them instead of -P or --cachebench, not with them",
        ));
    }
    if args.memtier.has_requests() && args.duration.is_some() {
        return Err(usage("give either --requests or --duration, not both"));
    }
    if let Some((k, _)) = props.iter().find(|(k, _)| !is_runner_or_store_property(k)) {
        return Err(usage(format!(
            "property `{k}` does not apply to a memtier-style workload (its flags are \
             --ratio, --key-*, --data-size*, --expiry-range, --requests; see docs/memtier.md)"
        )));
    }
    let threads = given_threads(args, props)?.unwrap_or(1);
    let spec = args
        .memtier
        .spec(threads.max(1), args.connections.max(1))
        .map_err(usage)?;
    // Whether the store can send commands is the runner's check (Needs::check), as
    // for every other capability.
    let workload = MemtierWorkload::new(spec).map_err(|e| usage(e.to_string()))?;
    Ok(AnyWorkload::Memtier(Arc::new(workload)))
}

/// The key ranges `-p keyrange_source=sst` stands for: the SST files of the last
/// non-empty level of the `--db rocksdb` database at `--path` (read-only, before the
/// phase opens it); a usage error for another store or a database without files.
fn sst_layout(args: &PhaseOptions, props: &Properties) -> Result<Option<KeyRangeLayout>> {
    if args.db != "rocksdb" {
        return Err(usage(format!(
            "property keyrange_source=sst reads a RocksDB database's SST files: --db rocksdb, \
             not `{}`",
            args.db
        )));
    }
    let path = match (&args.path, props.get("rocksdb.dir")) {
        (Some(p), _) => p.clone(),
        (None, Some(dir)) => PathBuf::from(dir),
        (None, None) => {
            return Err(usage(
                "property keyrange_source=sst needs the database: --path DIR".to_string(),
            ))
        }
    };
    rocksdb_layout(&path)
        .map(Some)
        .map_err(|e| usage(format!("property keyrange_source=sst: {e}")))
}

/// The key ranges of the RocksDB database at `path`: one range per SST file of its last
/// non-empty level, read read-only. An error (its text) when there is no database or it
/// has no SST file.
pub fn rocksdb_layout(path: &Path) -> std::result::Result<KeyRangeLayout, String> {
    #[cfg(feature = "rocksdb")]
    {
        if !path.join("CURRENT").is_file() {
            return Err(format!(
                "no RocksDB database at {} (load one first)",
                path.display()
            ));
        }
        let files = kvlab_stores::rocksdb::read_sst_files(path).map_err(|e| e.message)?;
        layout_of(path, &files).ok_or_else(|| {
            format!(
                "the database at {} has no SST file (empty, or its data still in the \
                 memtable: load it with a flush first)",
                path.display()
            )
        })
    }
    #[cfg(not(feature = "rocksdb"))]
    {
        let _ = path;
        Err("kvlab was built without rocksdb".into())
    }
}

/// The key ranges of the SST files `files` of the database at `path`
/// ([`kvlab_stores::rocksdb::key_ranges`]); `None` without files.
#[cfg(feature = "rocksdb")]
pub fn layout_of(path: &Path, files: &[kvlab_stores::rocksdb::SstFile]) -> Option<KeyRangeLayout> {
    let (starts, end) = kvlab_stores::rocksdb::key_ranges(files)?;
    Some(KeyRangeLayout {
        starts,
        end,
        source: format!("sst:{}", path.display()),
    })
}

/// `--shard I/N` for `load` and `verify`: the I-th of N contiguous slices of the records
/// the workload would load (`insertstart`, `insertcount`), split as YCSB splits them
/// between threads.
fn shard_records(shard: kvlab_report::Shard, props: &mut Properties) -> Result<()> {
    let number = |name: &str| -> Result<Option<u64>> {
        props
            .get(name)
            .map(|v| {
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| usage(format!("property {name}: `{v}` is not a whole number")))
            })
            .transpose()
    };
    let records = match number("recordcount")? {
        None | Some(0) => i32::MAX as u64,
        Some(n) => n,
    };
    let start = number("insertstart")?.unwrap_or(0);
    let count = number("insertcount")?.unwrap_or(records.saturating_sub(start));
    let (first, n) = shard.part(count);
    if n == 0 {
        return Err(usage(format!(
            "--shard {shard}: {count} records split {} ways leave this shard none",
            shard.count
        )));
    }
    props
        .set_override(&format!("insertstart={}", start + first))
        .and_then(|()| props.set_override(&format!("insertcount={n}")))
        .map_err(|e| usage(e.to_string()))
}

/// `--shard I/N` for the runner: the I-th share of the operations (YCSB's split) and of
/// the target rate, and a seed of its own (shard 0 keeps the given one), so shards do not
/// repeat each other's requests.
fn shard_plan(shard: kvlab_report::Shard, phase: Phase, plan: &mut RunPlan) {
    let share = 1.0 / f64::from(shard.count);
    if phase == Phase::Run {
        plan.operations = plan.operations.map(|n| shard.part(n).1);
    }
    plan.target_rate = plan.target_rate.map(|r| match r {
        TargetRate::Constant(rate) => TargetRate::Constant(rate * share),
        TargetRate::Sine {
            mean,
            amplitude,
            period,
        } => TargetRate::Sine {
            mean: mean * share,
            amplitude: amplitude * share,
            period,
        },
    });
    plan.seed = plan
        .seed
        .wrapping_add(u64::from(shard.index).wrapping_mul(0x9e37_79b9_7f4a_7c15));
}

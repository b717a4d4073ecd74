//! `kvlab sim TRACE` as a stream: the trace read once in blocks, every (policy, size)
//! simulator and the LRU curve fed from each block on worker threads, memory bounded by
//! the simulators' per-object state and the read-ahead, not by the trace's length.
//!
//! A pass before the simulation reads the trace once more when it must: sizes given as a
//! share of the working set (the working set is counted first, as libCacheSim does) and
//! Belady on a trace without next-access times (they are computed into a temporary file,
//! not memory). Standard input is then copied to a temporary file first.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use kvlab_cachesim::mrc::{CurveBuilder, Mrc};
use kvlab_cachesim::stream::{DEFAULT_BLOCK, DEFAULT_READ_AHEAD};
use kvlab_cachesim::{
    run_stream, Block, BlockBuilder, Capacity, LoadOptions, Mode, NextAccessFile, PolicySpec,
    SimError, SimOptions, SimResult, StreamJob,
};
use kvlab_trace::TraceReader;

use crate::args::usage;
use crate::trace_cmd::InputArgs;

/// The LRU curve built alongside the simulations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum CurveKind {
    /// Exact stack distances.
    Exact,
    /// SHARDS at a fixed sampling rate (`--shards RATE`).
    Rate(f64),
    /// SHARDS with a fixed sample size (`--shards-max-keys N`).
    MaxKeys(usize),
}

impl CurveKind {
    /// An empty builder of this curve.
    pub(crate) fn builder(self, mode: Mode) -> CurveBuilder {
        match self {
            CurveKind::Exact => CurveBuilder::exact(mode),
            CurveKind::Rate(r) => CurveBuilder::shards_fixed_rate(mode, r),
            CurveKind::MaxKeys(n) => CurveBuilder::shards_fixed_size(mode, n),
        }
    }

    /// How the curve is computed, in words.
    pub(crate) fn label(self) -> String {
        match self {
            CurveKind::Exact => "exact".into(),
            CurveKind::Rate(r) => format!("SHARDS, sampling rate {r}"),
            CurveKind::MaxKeys(n) => format!("SHARDS, at most {n} sampled objects"),
        }
    }
}

/// What to simulate.
pub(crate) struct Plan<'a> {
    /// The trace.
    pub(crate) input: &'a InputArgs,
    /// Policies, each at every size.
    pub(crate) specs: &'a [PolicySpec],
    /// Sizes.
    pub(crate) sizes: &'a [Capacity],
    /// Mode and op-awareness.
    pub(crate) opts: SimOptions,
    /// `--keep-zero-size`.
    pub(crate) keep_zero_size: bool,
    /// `--mrc` (with `--shards` or `--shards-max-keys`).
    pub(crate) curve: Option<CurveKind>,
    /// `--threads` (0: every core).
    pub(crate) threads: usize,
}

/// What a streamed run produced.
pub(crate) struct Outcome {
    /// One result per (policy, size), in order (a policy refusing its size is an error).
    pub(crate) results: Vec<Result<SimResult, SimError>>,
    /// The LRU curve, with `--mrc`.
    pub(crate) curve: Option<Mrc>,
    /// The working set (objects or bytes).
    pub(crate) working_set: u64,
    /// The trace's name.
    pub(crate) name: String,
}

/// A trace file copied from standard input (removed when dropped).
struct Spooled(PathBuf);

impl Drop for Spooled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Copies standard input to a temporary file for the passes that read it twice.
fn spool_stdin() -> Result<Spooled> {
    let path = std::env::temp_dir().join(format!("kvlab-sim-stdin-{}", std::process::id()));
    let mut file = std::fs::File::create(&path)
        .with_context(|| format!("creating {} for standard input", path.display()))?;
    let spooled = Spooled(path);
    let bytes = std::io::copy(&mut std::io::stdin().lock(), &mut file)
        .with_context(|| format!("copying standard input to {}", spooled.0.display()))?;
    eprintln!(
        "kvlab: standard input copied to {} ({bytes} bytes) to be read twice",
        spooled.0.display()
    );
    Ok(spooled)
}

/// Streams the trace of `plan` through every simulator; `None` when the trace must be
/// loaded whole instead (a kvlab recording whose reads carry no value: their size is
/// the object's next sized request's).
pub(crate) fn run(plan: &Plan) -> Result<Option<Outcome>> {
    let name = plan.input.trace.display().to_string();
    let fractions = plan.sizes.iter().any(|c| c.is_fraction());
    let belady = plan.specs.contains(&PolicySpec::Belady);
    // Standard input may have to be read twice (whether the trace carries next-access
    // times is only known once it is open): copied to a file before anything reads it.
    let mut source = plan.input.clone();
    let mut _spooled = None;
    if source.trace == Path::new("-") && (fractions || belady) {
        let s = spool_stdin()?;
        source.trace = s.0.clone();
        _spooled = Some(s);
    }
    let mut reader = source.open(None)?;
    let info = reader.info().clone();
    if info.has_outcomes {
        return Ok(None);
    }
    let mode = plan.opts.mode;
    let load = LoadOptions {
        skip_zero_size: info.has_sizes && !plan.keep_zero_size,
        trace_next_access: info.has_next_access,
        has_sizes: info.has_sizes,
        fill_read_sizes: false,
    };
    let mut builder = BlockBuilder::new(load);
    let mut next = None;
    if belady && info.has_next_access {
        eprintln!("kvlab: Belady reads the next-access times {name} carries");
    }
    if fractions || (belady && !info.has_next_access) {
        next = first_pass(
            &mut *reader,
            &mut builder,
            &name,
            fractions,
            belady && !info.has_next_access,
        )?;
        if mode == Mode::Byte && builder.requested_bytes() == 0 {
            return Err(no_sizes(&name));
        }
        reader = source.open(None)?;
        builder.rewind();
    }
    let working_set = builder.working_set(mode);
    let mut slots = Vec::new();
    let mut jobs = Vec::new();
    for spec in plan.specs {
        for size in plan.sizes {
            let c = size.of_working_set(working_set);
            match StreamJob::simulator(spec, c, builder.n_objects(), plan.opts) {
                Ok(job) => {
                    slots.push(Ok(jobs.len()));
                    jobs.push(job);
                }
                Err(e) => slots.push(Err(e)),
            }
        }
    }
    if let Some(kind) = plan.curve {
        jobs.push(StreamJob::Curve(Box::new(kind.builder(mode))));
    }
    let started = Instant::now();
    let fill = |b: &mut Block| {
        let more = builder.fill(&mut *reader, b, DEFAULT_BLOCK)?;
        if let Some(n) = next.as_mut() {
            NextAccessFile::fill(n, b)?;
        }
        Ok(more)
    };
    let (done, stats) = run_stream(fill, jobs, plan.threads, DEFAULT_READ_AHEAD)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    eprintln!(
        "kvlab: {} requests, {} objects ({} of size 0 skipped) streamed from {name} in {:.2} s \
         ({} blocks of up to {DEFAULT_BLOCK} requests, at most {} in memory at once)",
        builder.requests(),
        builder.n_objects(),
        builder.skipped_zero_size(),
        started.elapsed().as_secs_f64(),
        stats.blocks,
        stats.max_live_blocks,
    );
    if mode == Mode::Byte && builder.requested_bytes() == 0 {
        return Err(no_sizes(&name));
    }
    let mut curve = None;
    let mut results_of_jobs = Vec::new();
    for job in done {
        match job {
            StreamJob::Curve(b) => curve = Some(b.finish()),
            StreamJob::Sim(_) => results_of_jobs.push(job.result()),
        }
    }
    let results = slots
        .into_iter()
        .map(|slot| {
            slot.map(|i| {
                results_of_jobs[i]
                    .take()
                    .expect("every simulator job gives one result")
            })
        })
        .collect();
    Ok(Some(Outcome {
        results,
        curve,
        working_set: builder.working_set(mode),
        name,
    }))
}

/// Byte mode on a trace with no sizes.
pub(crate) fn no_sizes(name: &str) -> anyhow::Error {
    usage(format!(
        "{name} has no object sizes: byte mode (--bytes) needs them"
    ))
}

/// Reads the whole trace once before simulating: the working set (for sizes given as a
/// share of it) and, for Belady, each request's next access into a temporary file.
fn first_pass(
    reader: &mut dyn TraceReader,
    builder: &mut BlockBuilder,
    name: &str,
    fractions: bool,
    next_access: bool,
) -> Result<Option<NextAccessFile>> {
    let started = Instant::now();
    let mut next = if next_access {
        Some(NextAccessFile::new().map_err(|e| anyhow::anyhow!(e))?)
    } else {
        None
    };
    let mut block = Block::with_capacity(DEFAULT_BLOCK);
    loop {
        block.clear();
        let more = builder
            .fill(reader, &mut block, DEFAULT_BLOCK)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if let Some(n) = next.as_mut() {
            n.record(&block).map_err(|e| anyhow::anyhow!(e))?;
        }
        if !more {
            break;
        }
    }
    if let Some(n) = next.as_mut() {
        n.finish(builder.n_objects())
            .map_err(|e| anyhow::anyhow!(e))?;
    }
    let why = match (fractions, next_access) {
        (true, true) => "the working set for sizes given as a share of it, and the next-access times Belady needs (the trace carries none) into a temporary file",
        (true, false) => "the working set for sizes given as a share of it",
        _ => "the next-access times Belady needs (the trace carries none) into a temporary file",
    };
    eprintln!(
        "kvlab: a first pass over {name} counted {} requests, {} objects in {:.2} s: {why}",
        builder.requests(),
        builder.n_objects(),
        started.elapsed().as_secs_f64()
    );
    Ok(next)
}

//! Streamed simulation against whole-trace simulation: equal results, bounded memory.

use kvlab_cachesim::mrc::{lru_stack_distances, shards_fixed_size, CurveBuilder};
use kvlab_cachesim::{
    run_stream, simulate_many, Block, BlockBuilder, Capacity, LoadOptions, Mode, NextAccessFile,
    PolicySpec, SimOptions, SimResult, SimTrace, StreamJob,
};
use kvlab_trace::{OpenOptions, TraceRecord};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::oracle;

/// A skewed stream: `n` requests over about `objects` ids, sizes 1..=97, every 50th size 0.
fn generated(n: usize, objects: u64) -> Vec<TraceRecord> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    (0..n)
        .map(|i| {
            let a = rng.next_u64() % objects;
            let b = rng.next_u64() % objects;
            let id = a.min(b) * 7919 + 3;
            TraceRecord {
                id,
                value_size: if i % 50 == 49 { 0 } else { 1 + id % 97 },
                next_access: -1,
                batch_len: 1,
                ..TraceRecord::default()
            }
        })
        .collect()
}

/// Whole-trace results without their timings.
fn whole(trace: &SimTrace, jobs: &[(PolicySpec, u64)], opts: SimOptions) -> Vec<SimResult> {
    simulate_many(trace, jobs, opts, 0)
        .into_iter()
        .map(|r| untimed(r.expect("the whole-trace run")))
        .collect()
}

fn untimed(mut r: SimResult) -> SimResult {
    r.seconds = 0.0;
    r
}

fn jobs_for(trace: &SimTrace, mode: Mode) -> Vec<(PolicySpec, u64)> {
    let mut jobs = Vec::new();
    for spec in PolicySpec::all() {
        for size in ["1%", "10%"] {
            let c: Capacity = size.parse().expect("a size");
            jobs.push((spec.clone(), c.resolve(trace, mode)));
        }
    }
    jobs
}

/// Streams `records` in blocks of `block` requests through `jobs`, next accesses from a
/// first pass to disk; returns the results and the stream's statistics.
fn streamed(
    records: &[TraceRecord],
    jobs: &[(PolicySpec, u64)],
    opts: SimOptions,
    block: usize,
    read_ahead: usize,
) -> (Vec<SimResult>, kvlab_cachesim::StreamStats) {
    let mut builder = BlockBuilder::new(LoadOptions::default());
    let mut next = NextAccessFile::new().expect("a temporary file");
    for chunk in records.chunks(block) {
        let mut b = Block::with_capacity(block);
        for r in chunk {
            builder.push(r, &mut b).expect("a record");
        }
        next.record(&b).expect("recorded");
    }
    next.finish(builder.n_objects()).expect("next accesses");
    builder.rewind();
    let sims = jobs
        .iter()
        .map(|(spec, size)| StreamJob::simulator(spec, *size, 0, opts).expect("a simulator"))
        .collect();
    let mut chunks = records.chunks(block);
    let fill = |b: &mut Block| {
        let Some(chunk) = chunks.next() else {
            return Ok(false);
        };
        for r in chunk {
            builder.push(r, b)?;
        }
        next.fill(b)?;
        Ok(true)
    };
    let (done, stats) = run_stream(fill, sims, 2, read_ahead).expect("the stream runs");
    let results = done
        .iter()
        .map(|j| untimed(j.result().expect("a simulator's result")))
        .collect();
    (results, stats)
}

#[test]
fn a_stream_much_longer_than_a_block_equals_the_whole_trace_for_every_policy() {
    let records = generated(60_000, 3_000);
    let trace = SimTrace::from_records(records.iter().cloned().map(Ok), LoadOptions::default())
        .expect("loads");
    for mode in [Mode::Object, Mode::Byte] {
        let opts = SimOptions {
            mode,
            op_aware: false,
        };
        let jobs = jobs_for(&trace, mode);
        let (got, stats) = streamed(&records, &jobs, opts, 500, 3);
        assert_eq!(got, whole(&trace, &jobs, opts), "{mode:?}");
        assert_eq!(stats.blocks, 120);
        assert_eq!(stats.requests, trace.len() as u64);
        // Read-ahead is bounded: the slowest worker's queue, the block it runs and the
        // one being read.
        assert!(
            stats.max_live_blocks <= 3 + 2,
            "{} blocks alive at once",
            stats.max_live_blocks
        );
    }
}

#[test]
fn an_oracle_general_file_streams_with_its_own_next_accesses() {
    let path = oracle::data("libcachesim/cloudPhysicsIO.oracleGeneral.bin");
    let trace = oracle::load(&path);
    let opts = SimOptions::default();
    let jobs = jobs_for(&trace, Mode::Object);
    let mut reader = kvlab_trace::open(&path, &OpenOptions::default()).expect("opens");
    let mut builder = BlockBuilder::new(LoadOptions {
        trace_next_access: true,
        ..LoadOptions::default()
    });
    let sims = jobs
        .iter()
        .map(|(spec, size)| StreamJob::simulator(spec, *size, 0, opts).expect("a simulator"))
        .collect();
    let fill = |b: &mut Block| builder.fill(&mut *reader, b, 4096);
    let (done, stats) = run_stream(fill, sims, 0, 2).expect("the stream runs");
    let got: Vec<SimResult> = done
        .iter()
        .map(|j| untimed(j.result().expect("a result")))
        .collect();
    assert_eq!(got, whole(&trace, &jobs, opts));
    assert!(stats.blocks > 20);
}

#[test]
fn curves_from_a_stream_equal_whole_trace_curves_in_a_bounded_window() {
    let records = generated(100_000, 1_000);
    let trace = SimTrace::from_records(records.iter().cloned().map(Ok), LoadOptions::default())
        .expect("loads");
    for mode in [Mode::Object, Mode::Byte] {
        let mut exact = CurveBuilder::exact(mode);
        let mut sampled = CurveBuilder::shards_fixed_size(mode, 64);
        let mut builder = BlockBuilder::new(LoadOptions::default());
        for chunk in records.chunks(777) {
            let mut b = Block::with_capacity(777);
            for r in chunk {
                builder.push(r, &mut b).expect("a record");
            }
            exact.feed(&b);
            sampled.feed(&b);
            assert!(sampled.tracked() <= 64);
            assert!(sampled.window() <= 2 * 64 + 4096, "{}", sampled.window());
            assert!(exact.window() <= 2 * 1_000 + 4096, "{}", exact.window());
        }
        assert_eq!(
            exact.finish(),
            lru_stack_distances(&trace, mode),
            "{mode:?}"
        );
        assert_eq!(
            sampled.finish(),
            shards_fixed_size(&trace, mode, 64),
            "{mode:?}"
        );
    }
}

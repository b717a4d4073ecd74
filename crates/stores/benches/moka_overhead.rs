//! kvlab's cost on an in-process cache: gets per second on a moka cache holding 1 M keys
//! of 100-byte values, from 2 threads choosing keys uniformly at random, measured
//!
//! - (a) `bare`: a loop calling `cache.get(key)` on the store's own moka cache, with the
//!   key strings precomputed, copying each value out (as (b) copies it into the reply:
//!   a loop that never reads the value skips the cache miss on its bytes);
//! - (b) `session`: the same reads through [`MokaSession::execute`], one blob read per
//!   [`Batch`], copying the key into the request each time as kvlab's runner does;
//!
//! and prints (b)/(a), which kvlab wants at 0.8 or more. Rates are given by wall-clock
//! time and by each thread's CPU time; on a machine shared with other work the CPU-time
//! figures are the steadier (preemption does not count), and ratios are the median of
//! the rounds' ratios, each between runs made one right after the other. For reference it also measures
//! (a0) `plain`: a moka cache without kvlab's value wrapper and eviction listener, i.e.
//! `Cache<Box<[u8]>, Arc<[u8]>>` with only a byte weigher, so the cost of those shows
//! apart from the adapter's.
//!
//! `cargo bench -p kvlab-stores --bench moka_overhead`. The environment may set
//! `KVLAB_BENCH_THREADS` (default 2), `KVLAB_BENCH_OPS` (gets per thread and round,
//! default 2 000 000), `KVLAB_BENCH_ROUNDS` (default 5) and
//! `KVLAB_BENCH_MOKA` (extra store options, e.g. `moka.per_entry_ttl=true,moka.eviction=lru`).

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use kvlab_core::{block_on, Batch, OpKind, Outcome, Session, Store};
use kvlab_stores::moka::{MokaConfig, MokaSession, MokaStore};
use kvlab_stores::StoreOptions;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const KEYS: u64 = 1_000_000;
const VALUE_LEN: usize = 100;

/// An index in `0..KEYS`, uniformly (Lemire's multiply-shift; the bias is < 2^-44).
#[inline]
fn pick(rng: &mut Xoshiro256PlusPlus) -> usize {
    ((u128::from(rng.next_u64()) * u128::from(KEYS)) >> 64) as usize
}

/// Nanoseconds the calling thread has run on a CPU (`/proc/thread-self/schedstat`), so
/// that time a thread spends preempted by other processes on a shared machine does
/// not count against it.
fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat")
        .expect("Linux reports per-thread CPU time in /proc/thread-self/schedstat");
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("schedstat starts with the CPU time in ns")
}

/// Gets per second of one measurement: by wall-clock time, and by CPU time (as if each
/// thread had a core to itself).
#[derive(Clone, Copy, Debug, Default)]
struct Rate {
    wall: f64,
    cpu: f64,
}

/// Runs `body(thread, rng, ops)` on `threads` threads at once, each doing `ops` gets
/// seeded by `round`.
fn measure<F>(threads: usize, round: usize, ops: u64, body: &F) -> Rate
where
    F: Fn(usize, &mut Xoshiro256PlusPlus, u64) -> u64 + Sync,
{
    let barrier = Barrier::new(threads + 1);
    let (wall, cpu_ns) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                scope.spawn(move || {
                    let seed = (round * threads + t) as u64 + 1;
                    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                    barrier.wait();
                    let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
                    let hits = body(t, &mut rng, ops);
                    let cpu_ns = thread_cpu_ns() - cpu_start;
                    assert_eq!(hits, ops, "every key was preloaded and fits");
                    (start.elapsed(), cpu_ns)
                })
            })
            .collect();
        barrier.wait();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench threads do not panic"))
            .fold((Duration::ZERO, 0u64), |(wall, cpu), (w, c)| {
                (wall.max(w), cpu + c)
            })
    });
    let total = (ops * threads as u64) as f64;
    Rate {
        wall: total / wall.as_secs_f64(),
        cpu: total * threads as f64 / (cpu_ns as f64 / 1e9),
    }
}

fn main() {
    let env = |name: &str, default: u64| -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let ops = env("KVLAB_BENCH_OPS", 2_000_000);
    let threads = env("KVLAB_BENCH_THREADS", 2) as usize;
    let rounds = env("KVLAB_BENCH_ROUNDS", 5) as usize;
    let keys: Vec<Vec<u8>> = (0..KEYS)
        .map(|i| format!("memtier-{i}").into_bytes())
        .collect();
    let value = vec![b'x'; VALUE_LEN];

    let mut options = vec![("moka.capacity".to_string(), "1GiB".to_string())];
    let extra = std::env::var("KVLAB_BENCH_MOKA").unwrap_or_default();
    for pair in extra.split(',').filter(|p| !p.is_empty()) {
        let (name, value) = pair
            .split_once('=')
            .expect("KVLAB_BENCH_MOKA holds name=value pairs separated by commas");
        options.push((name.to_string(), value.to_string()));
    }
    let config =
        MokaConfig::from_options(StoreOptions::new("moka.", options)).expect("valid options");
    let store = MokaStore::open(config).expect("moka opens");
    {
        let mut s = store.session().expect("a session");
        let mut batch = Batch::new();
        for key in &keys {
            batch.clear();
            let slot = batch.push();
            slot.request.kind = OpKind::Insert;
            slot.request.read.set_blob();
            slot.request.key.extend_from_slice(key);
            slot.request.value.set_blob(&value);
            block_on(s.execute(&mut batch));
        }
    }
    store.flush().expect("moka flushes");

    type Plain = moka::sync::Cache<Box<[u8]>, Arc<[u8]>>;
    let plain = Plain::builder()
        .max_capacity(1 << 30)
        .weigher(|k, v| (k.len() + v.len()) as u32)
        .build();
    for key in &keys {
        plain.insert(key.as_slice().into(), Arc::from(value.as_slice()));
    }
    plain.run_pending_tasks();
    println!("store options: {:?}", store.options());
    println!(
        "moka_overhead: {KEYS} keys, {VALUE_LEN}-byte values, {threads} threads, {ops} gets \
         per thread and round, best of {rounds} rounds"
    );

    let keys = &keys;
    let plain_get = |_: usize, rng: &mut Xoshiro256PlusPlus, ops: u64| {
        let (mut hits, mut value) = (0, Vec::with_capacity(VALUE_LEN));
        for _ in 0..ops {
            if let Some(v) = plain.get(keys[pick(rng)].as_slice()) {
                // Take the value, as a reply does.
                value.clear();
                value.extend_from_slice(&v);
                black_box(&value);
                hits += 1;
            }
        }
        hits
    };
    let cache = store.cache();
    let bare_get = |_: usize, rng: &mut Xoshiro256PlusPlus, ops: u64| {
        let (mut hits, mut value) = (0, Vec::with_capacity(VALUE_LEN));
        for _ in 0..ops {
            if let Some(v) = cache.get(keys[pick(rng)].as_slice()) {
                // Take the value, as a reply does.
                value.clear();
                value.extend_from_slice(&v.bytes);
                black_box(&value);
                hits += 1;
            }
        }
        hits
    };
    let sessions: Vec<std::sync::Mutex<MokaSession>> = (0..threads)
        .map(|_| std::sync::Mutex::new(store.session().expect("a session")))
        .collect();
    let session_get = |t: usize, rng: &mut Xoshiro256PlusPlus, ops: u64| {
        let mut session = sessions[t].lock().expect("one thread per session");
        let mut batch = Batch::new();
        let mut hits = 0;
        for _ in 0..ops {
            batch.clear();
            let slot = batch.push();
            slot.request.kind = OpKind::Read;
            slot.request.read.set_blob();
            slot.request.key.extend_from_slice(&keys[pick(rng)]);
            block_on(session.execute(&mut batch));
            if let Ok(Outcome::Hit { bytes }) = batch.slots()[0].result {
                black_box(bytes);
                hits += 1;
            }
        }
        hits
    };

    // The variants take turns within each round, each round starting with the next
    // one, so that load from other processes on the machine falls on all of them
    // alike. Rates report the best round; ratios the median of the rounds' ratios,
    // each between runs made one right after the other.
    let mut rates = [[Rate::default(); 3]; 64];
    let rounds = rounds.clamp(1, rates.len());
    for (round, rate) in rates.iter_mut().enumerate().take(rounds) {
        for turn in 0..3 {
            let variant = (round + turn) % 3;
            rate[variant] = match variant {
                0 => measure(threads, round, ops, &plain_get),
                1 => measure(threads, round, ops, &bare_get),
                _ => measure(threads, round, ops, &session_get),
            };
        }
    }
    let rates = &rates[..rounds];
    for (round, r) in rates.iter().enumerate() {
        println!(
            "round {round}: wall (a0) {:>9.0} (a) {:>9.0} (b) {:>9.0}; \
             cpu (a0) {:>9.0} (a) {:>9.0} (b) {:>9.0} gets/s",
            r[0].wall, r[1].wall, r[2].wall, r[0].cpu, r[1].cpu, r[2].cpu
        );
    }
    let best = |v: usize, by: fn(&Rate) -> f64| rates.iter().map(|r| by(&r[v])).fold(0.0, f64::max);
    let median_ratio = |num: usize, den: usize, by: fn(&Rate) -> f64| {
        let mut ratios: Vec<f64> = rates.iter().map(|r| by(&r[num]) / by(&r[den])).collect();
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    };
    let wall: fn(&Rate) -> f64 = |r| r.wall;
    let cpu: fn(&Rate) -> f64 = |r| r.cpu;
    println!("best round, gets/s          wall clock    per CPU time");
    for (v, name) in [
        "(a0) plain moka get",
        "(a)  bare store cache get",
        "(b)  MokaSession::execute",
    ]
    .into_iter()
    .enumerate()
    {
        println!("{name:<27} {:>12.0}  {:>12.0}", best(v, wall), best(v, cpu));
    }
    println!(
        "(b)/(a)  median of rounds: {:.3} by CPU time, {:.3} by wall clock (target >= 0.8)",
        median_ratio(2, 1, cpu),
        median_ratio(2, 1, wall)
    );
    println!(
        "(a)/(a0) median of rounds: {:.3} by CPU time, {:.3} by wall clock \
         (value wrapper, eviction listener, options)",
        median_ratio(1, 0, cpu),
        median_ratio(1, 0, wall)
    );
}

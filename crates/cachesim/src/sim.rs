//! The one access loop ([`Simulator::access`]), whole-trace runs and parallel batches.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::policy::{self, Policy, PolicySpec};
use crate::trace::{OpClass, Req, SimTrace};

/// How objects are sized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mode {
    /// Every object has size 1; capacity in objects (libCacheSim's `ignore_obj_size`).
    #[default]
    #[serde(rename = "obj")]
    Object,
    /// Sizes from the trace; capacity in bytes; no per-object metadata
    /// (libCacheSim's `consider_obj_metadata = false`).
    #[serde(rename = "byte")]
    Byte,
}

impl Mode {
    /// `"obj"` or `"byte"`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Object => "obj",
            Mode::Byte => "byte",
        }
    }
}

/// How a trace is simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimOptions {
    /// Object or byte mode.
    pub mode: Mode,
    /// Op-aware mode: a delete removes the object, a write inserts it (or refreshes it)
    /// without counting a request or a miss. Off by default: every request is a lookup,
    /// as in libCacheSim.
    pub op_aware: bool,
}

/// The outcome of one (policy, size) simulation. JSON field names are part of kvlab's
/// output format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    /// Policy name (libCacheSim's).
    pub policy: String,
    /// Capacity in objects (`obj`) or bytes (`byte`).
    pub cache_size: u64,
    /// `"obj"` or `"byte"`.
    pub mode: Mode,
    /// Lookups simulated.
    pub requests: u64,
    /// Lookups that missed.
    pub misses: u64,
    /// `misses / requests`.
    pub miss_ratio: f64,
    /// Traced bytes of the lookups that missed (trace sizes, in either mode).
    pub byte_misses: u64,
    /// `byte_misses` / traced bytes requested.
    pub byte_miss_ratio: f64,
    /// Wall time of the simulation.
    pub seconds: f64,
}

/// A cache: a policy behind the one access loop.
#[derive(Debug)]
pub struct Simulator<P> {
    policy: P,
}

impl<P: Policy> Simulator<P> {
    /// Wraps a policy.
    pub fn new(policy: P) -> Self {
        Simulator { policy }
    }

    /// The policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// One lookup, libCacheSim's `cache_get_base`: a hit is a resident object; on a miss
    /// the object is inserted after evicting until it fits, unless it cannot be inserted
    /// (larger than the cache, or refused by the policy). Returns whether it hit.
    #[inline]
    pub fn access(&mut self, req: &Req) -> bool {
        let hit = self.policy.lookup(req);
        if !hit {
            self.admit(req);
        }
        self.policy.end_access();
        hit
    }

    /// A write in op-aware mode: refreshes a resident object or inserts a new one.
    #[inline]
    pub fn set(&mut self, req: &Req) {
        if !self.policy.lookup(req) {
            self.admit(req);
        }
        self.policy.end_access();
    }

    /// A delete in op-aware mode.
    #[inline]
    pub fn delete(&mut self, obj: u32) -> bool {
        self.policy.remove(obj)
    }

    #[inline]
    fn admit(&mut self, req: &Req) {
        let p = &mut self.policy;
        if !p.can_insert(req) {
            return;
        }
        if p.insert_then_evict() {
            p.insert(req);
            while p.occupied() > p.capacity() {
                p.evict(req);
            }
        } else {
            let mut stalled = 0u32;
            while p.occupied() + req.size > p.capacity() {
                let before = p.occupied();
                p.evict(req);
                // An eviction may free nothing (S3FIFO's small FIFO may only promote to
                // main), but a policy that frees nothing again and again would loop for
                // ever (libCacheSim would hang); give up on this insertion then.
                if p.occupied() >= before {
                    stalled += 1;
                    if stalled == MAX_STALLED_EVICTIONS {
                        return;
                    }
                } else {
                    stalled = 0;
                }
            }
            p.insert(req);
        }
    }
}

/// Consecutive evictions that free nothing before [`Simulator::access`] gives up inserting.
const MAX_STALLED_EVICTIONS: u32 = 1 << 16;

/// Runs a whole trace through a policy.
pub fn run_policy<P: Policy>(
    policy: P,
    name: String,
    cache_size: u64,
    trace: &SimTrace,
    opts: SimOptions,
) -> SimResult {
    let start = Instant::now();
    let mut sim = Simulator::new(policy);
    let (mut requests, mut misses, mut req_bytes, mut miss_bytes) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..trace.len() {
        let req = trace.req(i, opts.mode);
        if opts.op_aware {
            match trace.op(i) {
                OpClass::Lookup => {}
                OpClass::Set => {
                    sim.set(&req);
                    continue;
                }
                OpClass::Delete => {
                    sim.delete(req.obj);
                    continue;
                }
            }
        }
        let traced = trace.traced_size(i);
        requests += 1;
        req_bytes += traced;
        if !sim.access(&req) {
            misses += 1;
            miss_bytes += traced;
        }
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    SimResult {
        policy: name,
        cache_size,
        mode: opts.mode,
        requests,
        misses,
        miss_ratio: ratio(misses, requests),
        byte_misses: miss_bytes,
        byte_miss_ratio: ratio(miss_bytes, req_bytes),
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Simulates `spec` at `cache_size` (objects or bytes) over `trace`.
pub fn simulate(
    trace: &SimTrace,
    spec: &PolicySpec,
    cache_size: u64,
    opts: SimOptions,
) -> Result<SimResult, SimError> {
    let n = trace.n_objects();
    let name = spec.name();
    let c = cache_size;
    let unsupported = |reason| SimError::Unsupported {
        policy: spec.name(),
        cache_size,
        reason,
    };
    if c == 0 {
        return Err(unsupported("the cache size must be positive"));
    }
    Ok(match *spec {
        PolicySpec::Lru => run_policy(policy::lru::Lru::new(c, n), name, c, trace, opts),
        PolicySpec::Fifo => run_policy(policy::fifo::Fifo::new(c, n), name, c, trace, opts),
        PolicySpec::Clock { bits } => {
            run_policy(policy::clock::Clock::new(c, n, bits), name, c, trace, opts)
        }
        PolicySpec::Sieve => run_policy(policy::sieve::Sieve::new(c, n), name, c, trace, opts),
        PolicySpec::Lfu => run_policy(policy::lfu::Lfu::new(c, n), name, c, trace, opts),
        PolicySpec::S3Fifo {
            small_size_ratio,
            ghost_size_ratio,
            move_to_main_threshold,
        } => {
            let p = policy::s3fifo::S3Fifo::new(
                c,
                n,
                small_size_ratio,
                ghost_size_ratio,
                move_to_main_threshold,
            )
            .ok_or_else(|| unsupported("the small FIFO would be empty (libCacheSim refuses it)"))?;
            run_policy(p, name, c, trace, opts)
        }
        PolicySpec::Arc => run_policy(policy::arc::Arc::new(c, n), name, c, trace, opts),
        PolicySpec::Lirs => run_policy(policy::lirs::Lirs::new(c, n), name, c, trace, opts),
        PolicySpec::TwoQ {
            ain_size_ratio,
            aout_size_ratio,
        } => run_policy(
            policy::twoq::TwoQ::new(c, n, ain_size_ratio, aout_size_ratio),
            name,
            c,
            trace,
            opts,
        ),
        PolicySpec::Slru { segments } => run_policy(
            policy::slru::Slru::new(c, n, segments),
            name,
            c,
            trace,
            opts,
        ),
        PolicySpec::WTinyLfu {
            window_ratio,
            doorkeeper,
        } => run_policy(
            policy::wtinylfu::WTinyLfu::new(c, n, window_ratio, doorkeeper),
            name,
            c,
            trace,
            opts,
        ),
        PolicySpec::Gdsf => run_policy(policy::gdsf::Gdsf::new(c, n), name, c, trace, opts),
        PolicySpec::Lfuda => run_policy(policy::lfuda::Lfuda::new(c, n), name, c, trace, opts),
        PolicySpec::Belady => run_policy(policy::belady::Belady::new(c, n), name, c, trace, opts),
        PolicySpec::SampledLru { samples, seed } => run_policy(
            policy::sampled_lru::SampledLru::new(c, n, samples, seed),
            name,
            c,
            trace,
            opts,
        ),
    })
}

/// Simulates every (policy, size) pair on all cores (`std::thread::scope`), results in
/// the order of `jobs`. `threads = 0` uses [`std::thread::available_parallelism`].
pub fn simulate_many(
    trace: &SimTrace,
    jobs: &[(PolicySpec, u64)],
    opts: SimOptions,
    threads: usize,
) -> Vec<Result<SimResult, SimError>> {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
    .min(jobs.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<SimResult, SimError>>> = Vec::new();
    results.resize_with(jobs.len(), || None);
    let slots = std::sync::Mutex::new(&mut results);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((spec, size)) = jobs.get(i) else {
                    break;
                };
                let r = simulate(trace, spec, *size, opts);
                slots.lock().expect("a simulation thread panicked")[i] = Some(r);
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.expect("every job index below jobs.len() was taken by a thread"))
        .collect()
}

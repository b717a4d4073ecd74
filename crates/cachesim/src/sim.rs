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

/// The counts of one run, kept alike by whole-trace and streamed runs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    requests: u64,
    misses: u64,
    req_bytes: u64,
    miss_bytes: u64,
}

impl Tally {
    /// The result row of these counts.
    pub(crate) fn result(
        &self,
        name: String,
        cache_size: u64,
        mode: Mode,
        seconds: f64,
    ) -> SimResult {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        SimResult {
            policy: name,
            cache_size,
            mode,
            requests: self.requests,
            misses: self.misses,
            miss_ratio: ratio(self.misses, self.requests),
            byte_misses: self.miss_bytes,
            byte_miss_ratio: ratio(self.miss_bytes, self.req_bytes),
            seconds,
        }
    }
}

impl<P: Policy> Simulator<P> {
    /// One request of a run: in op-aware mode a set or a delete, else a counted lookup.
    #[inline]
    pub(crate) fn step(
        &mut self,
        req: &Req,
        op: OpClass,
        traced: u64,
        op_aware: bool,
        tally: &mut Tally,
    ) {
        if op_aware {
            match op {
                OpClass::Lookup => {}
                OpClass::Set => {
                    self.set(req);
                    return;
                }
                OpClass::Delete => {
                    self.delete(req.obj);
                    return;
                }
            }
        }
        tally.requests += 1;
        tally.req_bytes += traced;
        if !self.access(req) {
            tally.misses += 1;
            tally.miss_bytes += traced;
        }
    }

    /// Makes room for objects `0..n_objects` ([`Policy::grow`]).
    pub(crate) fn grow(&mut self, n_objects: usize) {
        self.policy.grow(n_objects);
    }
}

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
    let mut tally = Tally::default();
    for i in 0..trace.len() {
        let req = trace.req(i, opts.mode);
        sim.step(
            &req,
            trace.op(i),
            trace.traced_size(i),
            opts.op_aware,
            &mut tally,
        );
    }
    tally.result(name, cache_size, opts.mode, start.elapsed().as_secs_f64())
}

/// What to do with a policy once it is built: [`with_policy`] builds the policy a
/// [`PolicySpec`] names and hands it to [`PolicyVisitor::visit`], monomorphised.
pub(crate) trait PolicyVisitor {
    /// What the visit returns.
    type Out;
    /// Runs with the built policy.
    fn visit<P: Policy + 'static>(self, policy: P) -> Self::Out;
}

/// Builds the policy `spec` names at `cache_size` for `n_objects` objects and visits it.
pub(crate) fn with_policy<V: PolicyVisitor>(
    spec: &PolicySpec,
    cache_size: u64,
    n_objects: usize,
    v: V,
) -> Result<V::Out, SimError> {
    let (c, n) = (cache_size, n_objects);
    let unsupported = |reason| SimError::Unsupported {
        policy: spec.name(),
        cache_size,
        reason,
    };
    if c == 0 {
        return Err(unsupported("the cache size must be positive"));
    }
    Ok(match *spec {
        PolicySpec::Lru => v.visit(policy::lru::Lru::new(c, n)),
        PolicySpec::Fifo => v.visit(policy::fifo::Fifo::new(c, n)),
        PolicySpec::Clock { bits } => v.visit(policy::clock::Clock::new(c, n, bits)),
        PolicySpec::Sieve => v.visit(policy::sieve::Sieve::new(c, n)),
        PolicySpec::Lfu => v.visit(policy::lfu::Lfu::new(c, n)),
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
            v.visit(p)
        }
        PolicySpec::Arc => v.visit(policy::arc::Arc::new(c, n)),
        PolicySpec::Lirs => v.visit(policy::lirs::Lirs::new(c, n)),
        PolicySpec::TwoQ {
            ain_size_ratio,
            aout_size_ratio,
        } => v.visit(policy::twoq::TwoQ::new(
            c,
            n,
            ain_size_ratio,
            aout_size_ratio,
        )),
        PolicySpec::Slru { segments } => v.visit(policy::slru::Slru::new(c, n, segments)),
        PolicySpec::WTinyLfu {
            window_ratio,
            doorkeeper,
        } => v.visit(policy::wtinylfu::WTinyLfu::new(
            c,
            n,
            window_ratio,
            doorkeeper,
        )),
        PolicySpec::Gdsf => v.visit(policy::gdsf::Gdsf::new(c, n)),
        PolicySpec::Lfuda => v.visit(policy::lfuda::Lfuda::new(c, n)),
        PolicySpec::Belady => v.visit(policy::belady::Belady::new(c, n)),
        PolicySpec::SampledLru { samples, seed } => {
            v.visit(policy::sampled_lru::SampledLru::new(c, n, samples, seed))
        }
    })
}

/// Simulates `spec` at `cache_size` (objects or bytes) over `trace`.
pub fn simulate(
    trace: &SimTrace,
    spec: &PolicySpec,
    cache_size: u64,
    opts: SimOptions,
) -> Result<SimResult, SimError> {
    struct Whole<'a> {
        trace: &'a SimTrace,
        name: String,
        cache_size: u64,
        opts: SimOptions,
    }
    impl PolicyVisitor for Whole<'_> {
        type Out = SimResult;
        fn visit<P: Policy + 'static>(self, policy: P) -> SimResult {
            run_policy(policy, self.name, self.cache_size, self.trace, self.opts)
        }
    }
    let v = Whole {
        trace,
        name: spec.name(),
        cache_size,
        opts,
    };
    with_policy(spec, cache_size, trace.n_objects(), v)
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

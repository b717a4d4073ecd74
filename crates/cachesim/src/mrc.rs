//! LRU miss-ratio curves: every cache size from one pass over the trace.
//!
//! - [`lru_stack_distances`] computes each request's exact LRU stack distance (Olken's
//!   algorithm: a Fenwick tree over request positions marks each object's last access; the
//!   distance of a re-access is the number — or total size — of distinct objects touched
//!   since the previous one, itself included). In object mode a request hits an LRU cache
//!   of `c` objects iff its distance is ≤ `c`, so [`Mrc::misses`] at `c` equals
//!   [`crate::simulate`]'s LRU miss count exactly ([`Mrc::results`] gives the same rows
//!   as the simulator, byte misses included). In byte mode the same holds as long as
//!   no object is larger than the cache (an oversized object is never admitted by the
//!   simulator but occupies a stack position here).
//! - [`shards_fixed_rate`] and [`shards_fixed_size`] estimate the curve from a spatially
//!   hashed sample of objects (Waldspurger et al., "Efficient MRC Construction with
//!   SHARDS", FAST'15): an object is tracked iff its hash is below a threshold; each sampled
//!   re-access counts `1/R` at distance `d/R`, `R` the sampling rate in effect. Fixed size
//!   lowers the threshold to drop the largest-hash object whenever more than `s_max` objects
//!   are tracked.
//!
//! Error against the exact curve (mean absolute miss-ratio error over 50 evenly spaced
//! sizes, object / byte mode), measured by this crate's tests on the sample traces:
//!
//! | trace (requests / objects) | R = 0.001 | R = 0.01 | R = 0.1 | s_max = 256 | 1,024 | 8,192 |
//! |---|---|---|---|---|---|---|
//! | cloudPhysicsIO (113,872 / 48,974) | 0.223 / 0.275 | 0.028 / 0.031 | 0.002 / 0.004 | 0.016 / 0.020 | 0.008 / 0.010 | 0.003 / 0.004 |
//! | adapt_size (66,987 / 36,815) | 0.231 / 0.247 | 0.023 / 0.026 | 0.009 / 0.008 | 0.018 / 0.024 | 0.012 / 0.009 | 0.006 / 0.005 |
//!
//! At R = 0.001 these traces leave only a few dozen objects in the sample, hence the
//! error; the FAST'15 paper's 0.001 works for traces of millions of objects.

use hashbrown::HashMap;

use crate::sim::SimResult;
use crate::trace::SimTrace;
use crate::Mode;

/// A Fenwick (binary indexed) tree of `u64` sums.
#[derive(Debug)]
struct Fenwick {
    tree: Vec<u64>,
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }

    /// A tree over `values` (position `i` holds `values[i]`), built in linear time.
    fn from_values(values: &[u64]) -> Fenwick {
        let mut tree = vec![0u64; values.len() + 1];
        for (i, &v) in values.iter().enumerate() {
            let j = i + 1;
            tree[j] = tree[j].wrapping_add(v);
            let parent = j + (j & j.wrapping_neg());
            if parent < tree.len() {
                tree[parent] = tree[parent].wrapping_add(tree[j]);
            }
        }
        Fenwick { tree }
    }

    fn add(&mut self, i: usize, v: u64) {
        let mut i = i + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add(v);
            i += i & i.wrapping_neg();
        }
    }

    fn sub(&mut self, i: usize, v: u64) {
        self.add(i, v.wrapping_neg());
    }

    /// Sum of positions `0..=i`.
    fn prefix(&self, i: usize) -> u64 {
        let mut i = i + 1;
        let mut s = 0u64;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i -= i & i.wrapping_neg();
        }
        s
    }
}

/// A miss-ratio curve: the sorted reuse distances of a trace, each with its weight (1, or
/// `1/R` for SHARDS) and the traced bytes it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct Mrc {
    /// Requests the curve covers.
    pub requests: u64,
    /// Traced bytes those requests ask for.
    pub requested_bytes: u64,
    /// Distances are in objects or bytes.
    pub mode: Mode,
    /// `"LRU"` for exact curves, `"LRU-SHARDS"` for estimates.
    pub name: &'static str,
    /// Finite stack distances, ascending (scaled back to the whole trace for SHARDS).
    distances: Vec<u64>,
    /// Cumulative weights of `distances`.
    cumulative_weight: Vec<f64>,
    /// Cumulative weighted traced bytes of `distances`.
    cumulative_bytes: Vec<f64>,
    /// Cold misses (first accesses), weighted.
    cold: f64,
    /// Traced bytes of the cold misses, weighted.
    cold_bytes: f64,
}

impl Mrc {
    /// A curve from `(distance, weight, weighted traced bytes)` in ascending distance.
    fn from_sorted(
        name: &'static str,
        mode: Mode,
        totals: (u64, u64),
        rows: impl Iterator<Item = (u64, f64, f64)>,
        cold: f64,
        cold_bytes: f64,
    ) -> Mrc {
        let (mut w, mut b) = (0.0, 0.0);
        let mut distances = Vec::new();
        let mut cumulative_weight = Vec::new();
        let mut cumulative_bytes = Vec::new();
        for (d, dw, db) in rows {
            w += dw;
            b += db;
            distances.push(d);
            cumulative_weight.push(w);
            cumulative_bytes.push(b);
        }
        Mrc {
            requests: totals.0,
            requested_bytes: totals.1,
            mode,
            name,
            distances,
            cumulative_weight,
            cumulative_bytes,
            cold,
            cold_bytes,
        }
    }

    fn above(cum: &[f64], hits: usize) -> f64 {
        let total = cum.last().copied().unwrap_or(0.0);
        let below = if hits == 0 { 0.0 } else { cum[hits - 1] };
        total - below
    }

    /// Misses of an LRU cache of `size` objects or bytes (estimated for SHARDS).
    pub fn misses(&self, size: u64) -> f64 {
        let hits = self.distances.partition_point(|&d| d <= size);
        self.cold + Self::above(&self.cumulative_weight, hits)
    }

    /// Traced bytes missed at `size`.
    pub fn byte_misses(&self, size: u64) -> f64 {
        let hits = self.distances.partition_point(|&d| d <= size);
        self.cold_bytes + Self::above(&self.cumulative_bytes, hits)
    }

    /// Miss ratio at `size`.
    pub fn miss_ratio(&self, size: u64) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            (self.misses(size) / self.requests as f64).min(1.0)
        }
    }

    /// `(size, miss ratio)` at each size.
    pub fn curve(&self, sizes: &[u64]) -> Vec<(u64, f64)> {
        sizes.iter().map(|&s| (s, self.miss_ratio(s))).collect()
    }

    /// One result row per size, as [`crate::simulate`] reports them (misses rounded;
    /// `seconds` is 0: the curve's cost is paid once, not per size).
    pub fn results(&self, sizes: &[u64]) -> Vec<SimResult> {
        let ratio = |a: f64, b: u64| if b == 0 { 0.0 } else { (a / b as f64).min(1.0) };
        sizes
            .iter()
            .map(|&s| {
                let misses = self.misses(s).round();
                let bytes = self.byte_misses(s).round();
                SimResult {
                    policy: self.name.to_string(),
                    cache_size: s,
                    mode: self.mode,
                    requests: self.requests,
                    misses: misses as u64,
                    miss_ratio: ratio(misses, self.requests),
                    byte_misses: bytes as u64,
                    byte_miss_ratio: ratio(bytes, self.requested_bytes),
                    seconds: 0.0,
                }
            })
            .collect()
    }
}

/// A Fenwick tree over a window of stack positions that is compacted when it fills: the
/// live marks (one per tracked object, at its last access) are renumbered in order, so
/// positions — and memory — are bounded by the tracked objects, not the requests.
#[derive(Debug)]
struct Stack<K> {
    fw: Fenwick,
    /// The key marked at each position, its weight, and whether the mark is live.
    owner: Vec<K>,
    weight: Vec<u64>,
    alive: Vec<bool>,
    /// Next free position.
    top: usize,
    /// Live marks.
    live: usize,
    /// Sum of the live weights.
    marked: u64,
}

impl<K: Copy + Default> Stack<K> {
    fn new() -> Stack<K> {
        Stack::with_capacity(1 << 12)
    }

    fn with_capacity(cap: usize) -> Stack<K> {
        Stack {
            fw: Fenwick::new(cap),
            owner: vec![K::default(); cap],
            weight: vec![0; cap],
            alive: vec![false; cap],
            top: 0,
            live: 0,
            marked: 0,
        }
    }

    /// Weight of the live marks after position `p` plus `w`: the stack distance of a
    /// re-access of weight `w` whose previous access is marked at `p`.
    fn distance(&self, p: u32, w: u64) -> u64 {
        self.marked - self.fw.prefix(p as usize) + w
    }

    /// Unmarks position `p`.
    fn remove(&mut self, p: u32) {
        let p = p as usize;
        if self.alive[p] {
            self.fw.sub(p, self.weight[p]);
            self.marked -= self.weight[p];
            self.alive[p] = false;
            self.live -= 1;
        }
    }

    /// Marks `key` with weight `w` at the next position and returns it; when the window
    /// is full the live marks move first, each reported to `relocate(key, new position)`.
    fn push(&mut self, key: K, w: u64, relocate: impl FnMut(K, u32)) -> u32 {
        if self.top == self.owner.len() {
            self.compact(relocate);
        }
        let p = self.top;
        self.top += 1;
        self.owner[p] = key;
        self.weight[p] = w;
        self.alive[p] = true;
        self.live += 1;
        self.marked += w;
        self.fw.add(p, w);
        p as u32
    }

    /// Renumbers the live marks `0..live` in order, in a window at least twice as large.
    fn compact(&mut self, mut relocate: impl FnMut(K, u32)) {
        let cap = self.owner.len().max(2 * self.live + 1024);
        let mut next = Stack::with_capacity(cap);
        let mut values = vec![0u64; cap];
        for p in 0..self.top {
            if self.alive[p] {
                let q = next.top;
                next.top += 1;
                next.owner[q] = self.owner[p];
                next.weight[q] = self.weight[p];
                next.alive[q] = true;
                values[q] = self.weight[p];
                relocate(self.owner[p], q as u32);
            }
        }
        next.fw = Fenwick::from_values(&values);
        next.live = self.live;
        next.marked = self.marked;
        *self = next;
    }
}

/// Where a curve's distances go: exact per-distance sums, object distances indexed
/// directly and byte distances in a sorted map; SHARDS's weighted and scaled ones
/// (rounded to 12 significant bits for the fixed sample size, so the histogram stays
/// bounded whatever the trace's length).
#[derive(Debug, Default)]
struct Histogram {
    by_index: Vec<(u64, u64)>,
    exact: std::collections::BTreeMap<u64, (u64, u64)>,
    weighted: std::collections::BTreeMap<u64, (f64, f64)>,
}

/// Rounds `d` down to its 12 most significant bits.
fn coarse(d: u64) -> u64 {
    let bits = 64 - d.leading_zeros();
    if bits <= 12 {
        d
    } else {
        let shift = bits - 12;
        (d >> shift) << shift
    }
}

/// SHARDS's sample: the objects tracked, their marks and the threshold.
#[derive(Debug)]
struct Sample {
    threshold: u64,
    max_objects: usize,
    coarse: bool,
    last: HashMap<u64, u32>,
    by_hash: std::collections::BTreeSet<(u64, u64)>,
    stack: Stack<u64>,
}

/// What a [`CurveBuilder`] computes.
#[derive(Debug)]
enum Kind {
    /// Exact: every object's last position, by dense index.
    Exact { last: Vec<u32>, stack: Stack<u32> },
    /// SHARDS (fixed rate or fixed size).
    Shards(Box<Sample>),
}

/// LRU's miss-ratio curve built one request at a time ([`CurveBuilder::push`], or a
/// [`crate::Block`] at a time): exact stack distances, SHARDS at a fixed rate, or SHARDS
/// with a fixed sample size. Memory: exact and fixed rate, per object (tracked) and per
/// distinct distance; fixed size, bounded by the sample size whatever the trace.
#[derive(Debug)]
pub struct CurveBuilder {
    mode: Mode,
    kind: Kind,
    hist: Histogram,
    requests: u64,
    requested_bytes: u64,
    cold: f64,
    cold_bytes: f64,
}

const NOT_SEEN: u32 = u32::MAX;

impl CurveBuilder {
    fn with_kind(mode: Mode, kind: Kind) -> CurveBuilder {
        CurveBuilder {
            mode,
            kind,
            hist: Histogram::default(),
            requests: 0,
            requested_bytes: 0,
            cold: 0.0,
            cold_bytes: 0.0,
        }
    }

    /// Exact stack distances (Olken's algorithm).
    pub fn exact(mode: Mode) -> CurveBuilder {
        CurveBuilder::with_kind(
            mode,
            Kind::Exact {
                last: Vec::new(),
                stack: Stack::new(),
            },
        )
    }

    fn shards(mode: Mode, threshold: u64, max_objects: usize, coarse: bool) -> CurveBuilder {
        CurveBuilder::with_kind(
            mode,
            Kind::Shards(Box::new(Sample {
                threshold,
                max_objects,
                coarse,
                last: HashMap::new(),
                by_hash: std::collections::BTreeSet::new(),
                stack: Stack::new(),
            })),
        )
    }

    /// SHARDS at a fixed sampling rate in (0, 1].
    pub fn shards_fixed_rate(mode: Mode, rate: f64) -> CurveBuilder {
        let threshold = ((rate.clamp(0.0, 1.0) * SHARD_MODULUS as f64) as u64).max(1);
        CurveBuilder::shards(mode, threshold, usize::MAX, false)
    }

    /// SHARDS with at most `max_objects` objects tracked (SHARDS's fixed sample size).
    pub fn shards_fixed_size(mode: Mode, max_objects: usize) -> CurveBuilder {
        CurveBuilder::shards(mode, SHARD_MODULUS, max_objects.max(1), true)
    }

    /// Objects tracked now (SHARDS: the sample, at most its fixed size).
    pub fn tracked(&self) -> usize {
        match &self.kind {
            Kind::Exact { stack, .. } => stack.live,
            Kind::Shards(s) => s.last.len(),
        }
    }

    /// Positions of the stack window now (its memory): at most twice the objects
    /// tracked plus a constant, whatever the number of requests.
    pub fn window(&self) -> usize {
        match &self.kind {
            Kind::Exact { stack, .. } => stack.owner.len(),
            Kind::Shards(s) => s.stack.owner.len(),
        }
    }

    /// Every request of a block, in order.
    pub fn feed(&mut self, block: &crate::Block) {
        for ((&o, &id), &size) in block.objects().iter().zip(block.ids()).zip(block.sizes()) {
            self.push(o, id, size);
        }
    }

    /// One request: the object's dense index, its id and its traced size.
    pub fn push(&mut self, obj: u32, id: u64, size: u32) {
        self.requests += 1;
        self.requested_bytes += u64::from(size);
        let w = match self.mode {
            Mode::Object => 1,
            Mode::Byte => u64::from(size),
        };
        match &mut self.kind {
            Kind::Exact { last, stack } => {
                let o = obj as usize;
                if o >= last.len() {
                    last.resize(o + 1, NOT_SEEN);
                }
                let p = last[o];
                if p == NOT_SEEN {
                    self.cold += 1.0;
                    self.cold_bytes += f64::from(size);
                } else {
                    let d = stack.distance(p, w);
                    stack.remove(p);
                    let slot = if self.mode == Mode::Object {
                        let d = d as usize;
                        if d >= self.hist.by_index.len() {
                            self.hist.by_index.resize(d + 1, (0, 0));
                        }
                        &mut self.hist.by_index[d]
                    } else {
                        self.hist.exact.entry(d).or_default()
                    };
                    slot.0 += 1;
                    slot.1 += u64::from(size);
                }
                last[o] = stack.push(obj, w, |k, q| last[k as usize] = q);
            }
            Kind::Shards(s) => {
                let h = shard_hash(id);
                if h >= s.threshold {
                    return;
                }
                let rate = s.threshold as f64 / SHARD_MODULUS as f64;
                match s.last.get(&id) {
                    None => {
                        self.cold += 1.0 / rate;
                        self.cold_bytes += f64::from(size) / rate;
                        s.by_hash.insert((h, id));
                    }
                    Some(&p) => {
                        let d = (s.stack.distance(p, w) as f64 / rate) as u64;
                        let d = if s.coarse { coarse(d) } else { d };
                        s.stack.remove(p);
                        let e = self.hist.weighted.entry(d).or_default();
                        e.0 += 1.0 / rate;
                        e.1 += f64::from(size) / rate;
                    }
                }
                let last = &mut s.last;
                let p = s.stack.push(id, w, |k, q| {
                    last.insert(k, q);
                });
                last.insert(id, p);
                while s.by_hash.len() > s.max_objects {
                    let Some((h_max, victim)) = s.by_hash.pop_last() else {
                        break;
                    };
                    s.threshold = h_max;
                    if let Some(p) = s.last.remove(&victim) {
                        s.stack.remove(p);
                    }
                }
            }
        }
    }

    /// The curve.
    pub fn finish(self) -> Mrc {
        let totals = (self.requests, self.requested_bytes);
        let (mode, cold, cold_bytes) = (self.mode, self.cold, self.cold_bytes);
        match self.kind {
            Kind::Exact { .. } if mode == Mode::Object => Mrc::from_sorted(
                "LRU",
                mode,
                totals,
                self.hist
                    .by_index
                    .iter()
                    .enumerate()
                    .filter(|(_, &(c, _))| c > 0)
                    .map(|(d, &(c, b))| (d as u64, c as f64, b as f64)),
                cold,
                cold_bytes,
            ),
            Kind::Exact { .. } => Mrc::from_sorted(
                "LRU",
                mode,
                totals,
                self.hist
                    .exact
                    .iter()
                    .map(|(&d, &(c, b))| (d, c as f64, b as f64)),
                cold,
                cold_bytes,
            ),
            Kind::Shards(_) => Mrc::from_sorted(
                "LRU-SHARDS",
                mode,
                totals,
                self.hist.weighted.iter().map(|(&d, &(w, b))| (d, w, b)),
                cold,
                cold_bytes,
            ),
        }
    }
}

/// Feeds every request of a loaded trace to a builder.
fn over_trace(trace: &SimTrace, mut b: CurveBuilder) -> Mrc {
    let ids = trace.ids();
    for (&o, &size) in trace.objects().iter().zip(trace.sizes()) {
        b.push(o, ids[o as usize], size);
    }
    b.finish()
}

/// Exact LRU stack distances of every request, as a curve.
pub fn lru_stack_distances(trace: &SimTrace, mode: Mode) -> Mrc {
    over_trace(trace, CurveBuilder::exact(mode))
}

/// SHARDS's spatial hash of an object id into `[0, 2^24)` (a 64-bit mix, then the top
/// 24 bits).
fn shard_hash(id: u64) -> u64 {
    let mut z = id.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) >> 40
}

const SHARD_MODULUS: u64 = 1 << 24;

/// SHARDS with a fixed sampling rate `rate` in (0, 1]: objects whose hash falls below
/// `rate × 2^24` are tracked exactly; distances and counts are scaled by `1/rate`.
pub fn shards_fixed_rate(trace: &SimTrace, mode: Mode, rate: f64) -> Mrc {
    over_trace(trace, CurveBuilder::shards_fixed_rate(mode, rate))
}

/// SHARDS with a fixed sample size (`max_objects` tracked objects): the threshold starts
/// at 1 and is lowered to evict the largest-hash object whenever the sample would
/// exceed `max_objects`; each distance is scaled by the rate in effect when it was seen.
pub fn shards_fixed_size(trace: &SimTrace, mode: Mode, max_objects: usize) -> Mrc {
    over_trace(trace, CurveBuilder::shards_fixed_size(mode, max_objects))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenwick_prefix_sums() {
        let mut f = Fenwick::new(8);
        for i in 0..8 {
            f.add(i, i as u64);
        }
        f.sub(3, 3);
        assert_eq!(f.prefix(7), 28 - 3);
        assert_eq!(f.prefix(3), 3);
    }

    #[test]
    fn distances_of_a_small_stream() {
        // a b c a b b: distances a=3, b=3, b=1.
        let t = SimTrace::from_ids([1, 2, 3, 1, 2, 2]);
        let m = lru_stack_distances(&t, Mode::Object);
        assert_eq!(m.distances, [1, 3], "distinct distances");
        assert_eq!(m.cumulative_weight, [1.0, 3.0]);
        assert_eq!(m.byte_misses(3), 3.0);
        assert_eq!(m.misses(1), 5.0);
        assert_eq!(m.misses(3), 3.0);
    }
}

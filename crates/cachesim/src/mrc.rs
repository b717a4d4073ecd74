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
    /// Sorts `(distance, weight, traced bytes)` events into a curve.
    fn from_events(
        trace: &SimTrace,
        mode: Mode,
        name: &'static str,
        mut events: Vec<(u64, f64, u64)>,
        cold: f64,
        cold_bytes: f64,
    ) -> Mrc {
        events.sort_unstable_by_key(|&(d, _, _)| d);
        let (mut w, mut b) = (0.0, 0.0);
        let mut cumulative_weight = Vec::with_capacity(events.len());
        let mut cumulative_bytes = Vec::with_capacity(events.len());
        for &(_, ew, eb) in &events {
            w += ew;
            b += ew * eb as f64;
            cumulative_weight.push(w);
            cumulative_bytes.push(b);
        }
        Mrc {
            requests: trace.len() as u64,
            requested_bytes: trace.requested_bytes(),
            mode,
            name,
            distances: events.into_iter().map(|(d, _, _)| d).collect(),
            cumulative_weight,
            cumulative_bytes,
            cold,
            cold_bytes,
        }
    }

    /// A curve from a histogram of object distances (`counts[d]`, `bytes[d]`: re-accesses
    /// at distance `d` and their traced bytes): no sort needed.
    fn from_histogram(
        trace: &SimTrace,
        counts: &[u64],
        bytes: &[u64],
        cold: f64,
        cold_bytes: f64,
    ) -> Mrc {
        let (mut w, mut b) = (0.0, 0.0);
        let mut distances = Vec::new();
        let mut cumulative_weight = Vec::new();
        let mut cumulative_bytes = Vec::new();
        for (d, (&c, &by)) in counts.iter().zip(bytes).enumerate() {
            if c > 0 {
                w += c as f64;
                b += by as f64;
                distances.push(d as u64);
                cumulative_weight.push(w);
                cumulative_bytes.push(b);
            }
        }
        Mrc {
            requests: trace.len() as u64,
            requested_bytes: trace.requested_bytes(),
            mode: Mode::Object,
            name: "LRU",
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

/// Exact LRU stack distances of every request, as a curve.
pub fn lru_stack_distances(trace: &SimTrace, mode: Mode) -> Mrc {
    let n = trace.len();
    let mut last = vec![u32::MAX; trace.n_objects()];
    let mut fw = Fenwick::new(n);
    // Object mode: a histogram (distances are at most the number of objects); byte mode:
    // events sorted at the end.
    let by_histogram = mode == Mode::Object;
    let mut events = Vec::with_capacity(if by_histogram { 0 } else { n });
    let hist_len = if by_histogram {
        trace.n_objects() + 1
    } else {
        0
    };
    let (mut counts, mut bytes) = (vec![0u64; hist_len], vec![0u64; hist_len]);
    let (mut cold, mut cold_bytes) = (0u64, 0u64);
    let mut marked = 0u64;
    let (objs, sizes) = (trace.objects(), trace.sizes());
    for (i, &o) in objs.iter().enumerate() {
        let o = o as usize;
        let w = match mode {
            Mode::Object => 1,
            Mode::Byte => u64::from(sizes[i]),
        };
        let p = last[o];
        if p == u32::MAX {
            cold += 1;
            cold_bytes += u64::from(sizes[i]);
        } else {
            let p = p as usize;
            // Every object is marked once, at its last access, and nothing is marked past
            // i, so the marks after p are the running total minus the prefix up to p:
            // the distinct objects (or their bytes) touched since, plus this one.
            let d = marked - fw.prefix(p) + w;
            if by_histogram {
                counts[d as usize] += 1;
                bytes[d as usize] += u64::from(sizes[i]);
            } else {
                events.push((d, 1.0, u64::from(sizes[i])));
            }
            let old_w = match mode {
                Mode::Object => 1,
                Mode::Byte => u64::from(sizes[p]),
            };
            fw.sub(p, old_w);
            marked -= old_w;
        }
        fw.add(i, w);
        marked += w;
        last[o] = i as u32;
    }
    if by_histogram {
        Mrc::from_histogram(trace, &counts, &bytes, cold as f64, cold_bytes as f64)
    } else {
        Mrc::from_events(trace, mode, "LRU", events, cold as f64, cold_bytes as f64)
    }
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
    let threshold = ((rate.clamp(0.0, 1.0) * SHARD_MODULUS as f64) as u64).max(1);
    shards(trace, mode, threshold, usize::MAX)
}

/// SHARDS with a fixed sample size (`max_objects` tracked objects): the threshold starts
/// at 1 and is lowered to evict the largest-hash object whenever the sample would
/// exceed `max_objects`; each distance is scaled by the rate in effect when it was seen.
pub fn shards_fixed_size(trace: &SimTrace, mode: Mode, max_objects: usize) -> Mrc {
    shards(trace, mode, SHARD_MODULUS, max_objects.max(1))
}

fn shards(trace: &SimTrace, mode: Mode, mut threshold: u64, max_objects: usize) -> Mrc {
    use std::collections::BTreeSet;
    let n = trace.len();
    let ids = trace.ids();
    let hash: Vec<u64> = ids.iter().map(|&id| shard_hash(id)).collect();
    let mut last = vec![u32::MAX; trace.n_objects()];
    let mut fw = Fenwick::new(n);
    // (hash, object) of sampled objects, for lowering the threshold.
    let mut sampled: BTreeSet<(u64, u32)> = BTreeSet::new();
    // (distance scaled, weight, traced bytes) of each sampled re-access.
    let mut events: Vec<(u64, f64, u64)> = Vec::new();
    let (mut cold, mut cold_bytes) = (0.0f64, 0.0f64);
    let mut marked = 0u64;
    let (objs, sizes) = (trace.objects(), trace.sizes());
    let weight_of = |i: usize| match mode {
        Mode::Object => 1,
        Mode::Byte => u64::from(sizes[i]),
    };
    for (i, &o) in objs.iter().enumerate() {
        let h = hash[o as usize];
        if h >= threshold {
            continue;
        }
        let rate = threshold as f64 / SHARD_MODULUS as f64;
        let w = weight_of(i);
        let p = last[o as usize];
        if p == u32::MAX {
            cold += 1.0 / rate;
            cold_bytes += f64::from(sizes[i]) / rate;
            sampled.insert((h, o));
        } else {
            let p = p as usize;
            let d = marked - fw.prefix(p) + w;
            events.push(((d as f64 / rate) as u64, 1.0 / rate, u64::from(sizes[i])));
            fw.sub(p, weight_of(p));
            marked -= weight_of(p);
        }
        fw.add(i, w);
        marked += w;
        last[o as usize] = i as u32;
        while sampled.len() > max_objects {
            let (h_max, victim) = *sampled
                .iter()
                .next_back()
                .expect("a sample over its size is not empty");
            sampled.remove(&(h_max, victim));
            threshold = h_max;
            let lp = last[victim as usize] as usize;
            fw.sub(lp, weight_of(lp));
            marked -= weight_of(lp);
            last[victim as usize] = u32::MAX;
        }
    }
    Mrc::from_events(trace, mode, "LRU-SHARDS", events, cold, cold_bytes)
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

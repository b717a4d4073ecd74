//! [`fit_locality`]: kvlab's locality layer ([`kvlab_dist::locality`]) fitted to a
//! trace's sequence of key numbers.
//!
//! One pass with an LRU stack (a Fenwick tree over the recency order, `O(log n)` a
//! request). Each request is classed as:
//!
//! - **new** (its key's first touch): step `s` if the key is the previous new key plus
//!   `s` for `1 ≤ s ≤` [`MAX_STEP`] (a run through fresh keys); else near a recent key
//!   if the key `s ≤` [`NEW_NEAR_STEP`] below it was touched at LRU depth `e <`
//!   [`NEAR_DEPTH`] (the least such depth, then the least step: class `(e, e, s)` of
//!   `new_near`); else step 0 (placed by the key model);
//! - **a step from a recent key**: the key `s ≤` [`MAX_STEP`] below it was touched at
//!   LRU depth `e <` [`NEAR_DEPTH`] and more recently than the key itself (an
//!   interleaved sequential run): class `(e, e, s)`;
//! - **a re-touch** at LRU depth `d` (distinct keys touched since): exact classes for
//!   `d <` [`NEAR_DEPTH`], then eight classes per octave, each drawn uniformly.
//!
//! The weights are the counts, so generation draws the classes as often as the trace
//! had them; what it cannot keep is the order in which they came.

use std::collections::BTreeMap;

use kvlab_dist::locality::{Locality, Reuse};
use kvlab_dist::stack::{self, StackDistance};
use serde::{Deserialize, Serialize};

/// Depths below this are kept exactly, and only these count as "recent" for a step.
pub const NEAR_DEPTH: u64 = 16;
/// The largest step (in key numbers) from a recent or the previous new key.
pub const MAX_STEP: u64 = 4;
/// The largest step from a recent key to a new key placed beside it.
pub const NEW_NEAR_STEP: u64 = 64;

/// What [`fit_locality`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalityFit {
    /// The fitted layer.
    pub locality: Locality,
    /// How the requests were classed.
    pub stats: LocalityStats,
}

/// How [`fit_locality`] classed a trace's requests (the fit report's `locality`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalityStats {
    /// Requests read.
    pub requests: u64,
    /// First touches.
    pub new: u64,
    /// First touches one step from the previous first touch.
    pub new_stepped: u64,
    /// Other first touches beside a recently touched key.
    #[serde(default)]
    pub new_near: u64,
    /// Steps from a recent key.
    pub stepped: u64,
    /// Plain re-touches.
    pub reused: u64,
    /// Classes of re-touches written to the model.
    pub classes: u64,
}

/// The class of depth `d`: its bounds.
fn depth_class(d: u64) -> (u64, u64) {
    if d < NEAR_DEPTH {
        return (d, d);
    }
    let m = 63 - u64::from(d.leading_zeros()); // 2^m ≤ d < 2^{m+1}, m ≥ 4
    let width = 1u64 << (m - 3);
    let lo = (1u64 << m) + ((d - (1u64 << m)) / width) * width;
    (lo, lo + width - 1)
}

/// Fits the layer to `keys` (key numbers in `0..num`, in request order), with each
/// request's kind of operation when known (`kinds[i]`, any small code; `same_op` is
/// then fitted, else 1). `None` when there are no requests.
pub fn fit_locality(keys: &[u32], kinds: Option<&[u8]>, num: u64) -> Option<LocalityFit> {
    if keys.is_empty() || num == 0 {
        return None;
    }
    let n = keys.len();
    let mut recency = StackDistance::default();
    // Each key's position in `recency` ([`stack::NONE`]: not touched yet).
    let mut last = vec![stack::NONE; num as usize];
    let mut new_steps: BTreeMap<u64, u64> = BTreeMap::new();
    let mut new_near: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut new_near_count = 0u64;
    let mut reuse: BTreeMap<(u64, u64, u64), u64> = BTreeMap::new();
    let (mut new, mut new_stepped, mut stepped, mut reused) = (0u64, 0u64, 0u64, 0u64);
    let mut prev_new: Option<u64> = None;
    // Per key: its first kind, and whether it ever changed (bit 7); its touches (capped).
    // Per kind: requests; per first kind: re-touches, and those of that kind.
    let tracked = if kinds.is_some() { num as usize } else { 0 };
    let mut key_kind = vec![0u8; tracked];
    let mut touches = vec![0u8; tracked];
    let mut per_kind = [0u64; 128];
    let mut after = [(0u64, 0u64); 128];
    for (t, &k) in keys.iter().enumerate() {
        let key = u64::from(k);
        let slot = last[k as usize];
        if let Some(kinds) = kinds {
            let (k, kind) = (k as usize, kinds[t] & 0x7f);
            per_kind[kind as usize] += 1;
            if slot == stack::NONE {
                key_kind[k] = kind;
            } else {
                let first = key_kind[k] & 0x7f;
                after[first as usize].0 += 1;
                after[first as usize].1 += u64::from(first == kind);
                if first != kind {
                    key_kind[k] |= 0x80;
                }
            }
            touches[k] = touches[k].saturating_add(1);
        }
        // The least depth of a key up to `max_step` below this one, under `limit`
        // (then the least step): the recent key this one is a step from.
        let near_below = |max_step: u64, limit: u64| {
            let mut near: Option<(u64, u64)> = None;
            for s in 1..=max_step.min(key) {
                let from = last[(key - s) as usize];
                if from != stack::NONE {
                    let e = recency.depth(from);
                    if e < limit && near.is_none_or(|(best, _)| e < best) {
                        near = Some((e, s));
                    }
                }
            }
            near
        };
        if slot == stack::NONE {
            new += 1;
            let step = prev_new
                .map(|p| key.wrapping_sub(p))
                .filter(|s| (1..=MAX_STEP).contains(s))
                .unwrap_or(0);
            let near = if step > 0 {
                new_stepped += 1;
                None
            } else {
                near_below(NEW_NEAR_STEP, NEAR_DEPTH)
            };
            match near {
                Some(class) => {
                    new_near_count += 1;
                    *new_near.entry(class).or_insert(0) += 1;
                }
                None => *new_steps.entry(step).or_insert(0) += 1,
            }
            prev_new = Some(key);
        } else {
            let d = recency.depth(slot);
            match near_below(MAX_STEP, NEAR_DEPTH.min(d)) {
                Some((e, s)) => {
                    stepped += 1;
                    *reuse.entry((e, e, s)).or_insert(0) += 1;
                }
                None => {
                    reused += 1;
                    let (lo, hi) = depth_class(d);
                    *reuse.entry((lo, hi, 0)).or_insert(0) += 1;
                }
            }
        }
        let mut pos = slot;
        recency.access(k, &mut pos, |key, new| last[key as usize] = new);
        last[k as usize] = pos;
    }
    let classes = reuse.len() as u64;
    // Keys that keep their first kind: among keys touched c > 1 times, the share that
    // kept it, less the chance c − 1 independent draws of the mix would all repeat it
    // (Σ q_f^{c−1} / keys, q_f the first kind's share of the requests): π = (pure −
    // chance) / (1 − chance). For the other keys, per first kind k: the share S_k of
    // re-touches of kind k is π + (1 − π)(p + (1 − p) q_k), so p = ((S_k − π) / (1 − π)
    // − q_k) / (1 − q_k).
    let (pure_keys, same_op) = match kinds {
        Some(_) => {
            let q = |k: usize| per_kind[k] as f64 / n as f64;
            let (mut multi, mut pure, mut chance) = (0u64, 0u64, 0.0f64);
            for (&c, &kk) in touches.iter().zip(&key_kind) {
                if c > 1 {
                    multi += 1;
                    pure += u64::from(kk & 0x80 == 0);
                    chance += q((kk & 0x7f) as usize).powi(i32::from(c) - 1);
                }
            }
            let pure_keys = if multi == 0 {
                1.0
            } else {
                let (observed, chance) = (pure as f64 / multi as f64, chance / multi as f64);
                if chance >= 1.0 {
                    1.0
                } else {
                    ((observed - chance) / (1.0 - chance)).clamp(0.0, 1.0)
                }
            };
            let kinds_seen = per_kind.iter().rposition(|&c| c > 0).map_or(0, |k| k + 1);
            let same = (0..kinds_seen)
                .map(|k| {
                    let (retouches, same) = after[k];
                    if retouches == 0 || q(k) >= 1.0 || pure_keys >= 1.0 {
                        return 1.0;
                    }
                    let mixed = (same as f64 / retouches as f64 - pure_keys) / (1.0 - pure_keys);
                    ((mixed - q(k)) / (1.0 - q(k))).clamp(0.0, 1.0)
                })
                .collect();
            (pure_keys, same)
        }
        None => (1.0, Vec::new()),
    };
    Some(LocalityFit {
        locality: Locality {
            new_share: new as f64 / n as f64,
            new_steps: new_steps.into_iter().collect(),
            new_near: new_near
                .into_iter()
                .map(|((depth, step), weight)| Reuse {
                    depth_lo: depth,
                    depth_hi: depth,
                    step,
                    weight,
                })
                .collect(),
            reuse: reuse
                .into_iter()
                .map(|((depth_lo, depth_hi, step), weight)| Reuse {
                    depth_lo,
                    depth_hi,
                    step,
                    weight,
                })
                .collect(),
            pure_keys,
            same_op,
        },
        stats: LocalityStats {
            requests: n as u64,
            new,
            new_stepped,
            new_near: new_near_count,
            stepped,
            reused,
            classes,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvlab_dist::locality::LocalityGen;

    #[test]
    fn depth_classes_are_exact_then_eight_per_octave() {
        assert_eq!(depth_class(0), (0, 0));
        assert_eq!(depth_class(15), (15, 15));
        assert_eq!(depth_class(16), (16, 17));
        assert_eq!(depth_class(17), (16, 17));
        assert_eq!(depth_class(31), (30, 31));
        assert_eq!(depth_class(1000), (960, 1023));
        for d in [16u64, 100, 4095, 1 << 20] {
            let (lo, hi) = depth_class(d);
            assert!(lo <= d && d <= hi);
        }
    }

    #[test]
    fn a_scan_repeated_is_new_steps_then_reuse_at_the_scan_length() {
        // 0..100 twice: 100 new keys one step apart (the first placed), then each key
        // again at depth 99.
        let keys: Vec<u32> = (0..100).chain(0..100).collect();
        let fit = fit_locality(&keys, None, 100).unwrap();
        assert_eq!(fit.stats.new, 100);
        assert_eq!(fit.stats.new_stepped, 99);
        assert_eq!(fit.locality.new_steps, vec![(0, 1), (1, 99)]);
        assert!((fit.locality.new_share - 0.5).abs() < 1e-12);
        // Key 0 again: depth 99 (no recent neighbour below it); keys 1..: their
        // predecessor was just touched (depth 0) and is more recent.
        assert_eq!(fit.stats.reused, 1);
        assert_eq!(fit.stats.stepped, 99);
        let (lo, hi) = depth_class(99);
        assert!(fit.locality.reuse.contains(&Reuse {
            depth_lo: lo,
            depth_hi: hi,
            step: 0,
            weight: 1
        }));
        assert!(fit.locality.reuse.contains(&Reuse {
            depth_lo: 0,
            depth_hi: 0,
            step: 1,
            weight: 99
        }));
    }

    #[test]
    fn generating_from_a_fit_keeps_the_traces_lru_hit_ratios() {
        // A trace with locality: 30 interleaved runs over hot regions of 20 000 keys.
        let num = 20_000u64;
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut rand = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) * n) >> 31
        };
        let mut keys = Vec::new();
        let mut heads: Vec<u64> = (0..4).map(|_| rand(num)).collect();
        for _ in 0..60_000 {
            let h = rand(4) as usize;
            if rand(10) == 0 {
                heads[h] = rand(num / 10) * 10 % num;
            }
            keys.push(heads[h] as u32);
            heads[h] = (heads[h] + 1) % num;
        }
        let fit = fit_locality(&keys, None, num).unwrap();
        let mut gen = LocalityGen::new(&fit.locality, num, 5).unwrap();
        let generated: Vec<u32> = (0..keys.len())
            .map(|_| gen.next_key(rand(num)) as u32)
            .collect();
        // LRU over blocks of 4 keys, 300 blocks.
        let misses = |keys: &[u32]| {
            let mut stamp = vec![u64::MAX; num as usize / 4 + 1];
            let mut resident: std::collections::BTreeMap<u64, u32> = Default::default();
            let mut m = 0u64;
            for (t, &k) in keys.iter().enumerate() {
                let b = k / 4;
                let s = stamp[b as usize];
                if s == u64::MAX {
                    m += 1;
                    if resident.len() == 300 {
                        let (&old, &ob) = resident.iter().next().unwrap();
                        resident.remove(&old);
                        stamp[ob as usize] = u64::MAX;
                    }
                } else {
                    resident.remove(&s);
                }
                resident.insert(t as u64, b);
                stamp[b as usize] = t as u64;
            }
            m as f64
        };
        // The same requests in a random order: independent draws of the same popularity.
        let mut shuffled = keys.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rand(i as u64 + 1) as usize);
        }
        let ratio = misses(&generated) / misses(&keys);
        let independent = misses(&shuffled) / misses(&keys);
        assert!(
            (0.7..1.3).contains(&ratio) && independent > 1.5,
            "block misses: generated {ratio:.3}×, shuffled {independent:.3}× the trace's"
        );
    }
}

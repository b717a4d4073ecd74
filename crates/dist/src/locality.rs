//! [`Locality`]: temporal and spatial locality laid over any key distribution — kvlab's
//! extension of the key-range model, not a db_bench feature.
//!
//! A model of independent draws (db_bench's mixgraph, YCSB's generators) reproduces
//! how often each key is asked for, but not *when*: real traces re-read what they read
//! a moment ago and walk the key space in runs (a database scanning its pages, a file
//! system reading a file's blocks). A block cache sees exactly that, so independent
//! draws read up to twice the blocks of the trace they were fitted to, however well
//! the popularity fits. [`Locality`] adds the missing part as a stack-distance model
//! with steps (Mattson et al.'s LRU stack, 1970), fitted from a trace by
//! `kvlab-model`:
//!
//! - with probability [`Locality::new_share`] a request touches a key never touched
//!   before: either the first untouched key at or after the previous new key plus a
//!   step ([`Locality::new_steps`], a run through fresh keys), or — step 0 — the first
//!   untouched key at or after the underlying distribution's draw (where the key model
//!   puts new keys: hot ranges, hot keys); or the first untouched key at or after a
//!   recently touched key plus a step ([`Locality::new_near`]: new keys beside the ones
//!   in use);
//! - otherwise it touches again the key at LRU depth `d` (0: the key touched last;
//!   depths count distinct keys), plus a step `s` (the neighbour `s` keys further of a
//!   key touched recently: interleaved sequential runs), `(d, s)` drawn from
//!   [`Locality::reuse`].
//!
//! [`LocalityGen`] runs it: per request `O(log n)` (the recency order is a
//! [`StackDistance`], the same one trace analysis measures distances with), memory
//! `4·num` bytes for each key's last touch plus the recency order.

use rand_core::RngCore;
use rand_xoshiro::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::stack::{self, StackDistance};
use crate::{mix64, next_below, next_f64, Alias};

/// One class of re-touches: the key at an LRU depth uniform in `depth_lo..=depth_hi`,
/// plus `step` (in key numbers, wrapping at the key space), with weight `weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reuse {
    /// Least depth (0: the key touched last).
    pub depth_lo: u64,
    /// Greatest depth (`≥ depth_lo`).
    pub depth_hi: u64,
    /// Added to the key found at that depth (0: the key itself).
    pub step: u64,
    /// Relative weight (e.g. how often the trace did this).
    pub weight: u64,
}

/// The locality model's parameters (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct Locality {
    /// The share of requests that touch a key not touched before, in `[0, 1]`.
    pub new_share: f64,
    /// How a new key is placed: `(step, weight)`; step 0 starts from the underlying
    /// distribution's draw, step `s ≥ 1` from the previous new key plus `s`.
    pub new_steps: Vec<(u64, u64)>,
    /// More ways to place a new key, drawn with [`Locality::new_steps`] by weight: the
    /// first untouched key at or after the key at an LRU depth in
    /// `depth_lo..=depth_hi`, plus `step`.
    pub new_near: Vec<Reuse>,
    /// How a key is touched again.
    pub reuse: Vec<Reuse>,
    /// The share of keys that keep the payload of their first touch — in kvlab's
    /// mixgraph, the draw that decides the operation and its size — on every touch
    /// ([`LocalityGen::next_key_with`]), in `[0, 1]`.
    pub pure_keys: f64,
    /// For the other keys, per kind of that payload (in kvlab's mixgraph: Get, Put,
    /// Seek), the chance that a touch keeps it; otherwise the touch takes the new
    /// draw's. Each in `[0, 1]`; a kind past the end keeps it always.
    pub same_op: Vec<f64>,
}

/// Why a [`Locality`] cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("locality: {0}")]
pub struct LocalityError(pub String);

impl Locality {
    /// The largest key space [`LocalityGen`] tracks (4 bytes a key for its last touch).
    pub const MAX_KEYS: u64 = 1 << 27;

    /// Checks what [`LocalityGen::new`] relies on, for a key space of `num` keys (at
    /// least 1, at most [`Locality::MAX_KEYS`]).
    pub fn validate(&self, num: u64) -> Result<(), LocalityError> {
        let bad = |m: String| Err(LocalityError(m));
        if num == 0 || num > Locality::MAX_KEYS {
            return bad(format!(
                "a key space of {num} keys (1..={} allowed)",
                Locality::MAX_KEYS
            ));
        }
        if !(0.0..=1.0).contains(&self.new_share) {
            return bad(format!("new_share {} is not in [0, 1]", self.new_share));
        }
        if !(0.0..=1.0).contains(&self.pure_keys) {
            return bad(format!("pure_keys {} is not in [0, 1]", self.pure_keys));
        }
        if let Some(p) = self.same_op.iter().find(|p| !(0.0..=1.0).contains(*p)) {
            return bad(format!("same_op {p} is not in [0, 1]"));
        }
        if self.new_share > 0.0
            && self.new_steps.iter().all(|&(_, w)| w == 0)
            && self.new_near.iter().all(|r| r.weight == 0)
        {
            return bad("new_share > 0 needs new_steps or new_near with a positive weight".into());
        }
        if self.new_share < 1.0 && self.reuse.iter().all(|r| r.weight == 0) {
            return bad("new_share < 1 needs reuse classes with a positive weight".into());
        }
        if let Some(r) = self
            .reuse
            .iter()
            .chain(&self.new_near)
            .find(|r| r.depth_lo > r.depth_hi)
        {
            return bad(format!(
                "reuse depth range {}..={} is empty",
                r.depth_lo, r.depth_hi
            ));
        }
        if self.new_steps.len() + self.new_near.len() > u32::MAX as usize
            || self.reuse.len() > u32::MAX as usize
        {
            return bad("too many classes".into());
        }
        Ok(())
    }
}

/// One stream of keys with [`Locality`] over a key space `0..num`: feed it the
/// underlying distribution's draws ([`LocalityGen::next_key`]), it returns the keys to
/// ask for. Deterministic for a seed.
#[derive(Clone, Debug)]
pub struct LocalityGen {
    num: u64,
    new_share: f64,
    pure_keys: f64,
    same_op: Vec<f64>,
    /// The ways to place a new key: `new_steps` (as depth-less classes, `None`), then
    /// `new_near`.
    new_classes: Vec<(Option<Reuse>, u64)>,
    new_alias: Option<Alias>,
    reuse: Vec<Reuse>,
    reuse_alias: Option<Alias>,
    rng: Xoshiro256PlusPlus,
    /// The recency order of the keys touched so far.
    stack: StackDistance,
    /// Each key's position in `stack` ([`stack::NONE`]: never touched).
    last: Vec<u32>,
    /// Keys never touched, as a bitset (1: untouched).
    untouched: Vec<u64>,
    /// The previous new key.
    prev_new: Option<u64>,
    /// Per key, what [`LocalityGen::next_key_with`] was given at its first touch
    /// (allocated at its first call).
    payloads: Vec<u64>,
    /// Per key, whether it is one of the keys that may change payload (a bitset).
    mixed: Vec<u64>,
}

impl LocalityGen {
    /// A stream over keys `0..num` seeded `seed`. `num` must be at least 1 and at most
    /// [`Locality::MAX_KEYS`].
    pub fn new(params: &Locality, num: u64, seed: u64) -> Result<LocalityGen, LocalityError> {
        params.validate(num)?;
        let alias = |w: Vec<f64>| (w.iter().any(|&x| x > 0.0)).then(|| Alias::new(&w));
        let mut untouched = vec![u64::MAX; num.div_ceil(64) as usize];
        if !num.is_multiple_of(64) {
            *untouched.last_mut().expect("num ≥ 1") = (1u64 << (num % 64)) - 1;
        }
        Ok(LocalityGen {
            num,
            new_share: params.new_share,
            pure_keys: params.pure_keys,
            same_op: params.same_op.clone(),
            new_classes: params
                .new_steps
                .iter()
                .map(|&(s, _)| (None, s))
                .chain(params.new_near.iter().map(|r| (Some(*r), r.step)))
                .collect(),
            new_alias: alias(
                params
                    .new_steps
                    .iter()
                    .map(|&(_, w)| w as f64)
                    .chain(params.new_near.iter().map(|r| r.weight as f64))
                    .collect(),
            ),
            reuse: params.reuse.clone(),
            reuse_alias: alias(params.reuse.iter().map(|r| r.weight as f64).collect()),
            rng: Xoshiro256PlusPlus::seed_from_u64(mix64(seed ^ 0x6c6f_6361_6c69_7479)),
            stack: StackDistance::default(),
            last: vec![stack::NONE; num as usize],
            untouched,
            prev_new: None,
            payloads: Vec::new(),
            mixed: Vec::new(),
        })
    }

    /// Keys touched so far.
    pub fn distinct(&self) -> u64 {
        self.stack.live()
    }

    /// The key to ask for, given the underlying distribution's draw `fresh` (used when
    /// the model places a new key there). A draw outside `0..num` (db_bench's
    /// All_dist names such keys) is returned as it is and not remembered.
    pub fn next_key(&mut self, fresh: u64) -> u64 {
        if fresh >= self.num {
            return fresh;
        }
        let distinct = self.distinct();
        let new = distinct == 0 || next_f64(&mut self.rng) < self.new_share;
        let key = if new && distinct < self.num {
            let (near, step) = match &self.new_alias {
                Some(a) => self.new_classes[a.sample(self.rng.next_u64())],
                None => (None, 0),
            };
            let from = match (near, step, self.prev_new) {
                // Beside a recent key: there is one once anything was touched.
                (Some(r), s, _) if distinct > 0 => {
                    let depth = self.draw_depth(&r);
                    (self.key_at_depth(depth) + s % self.num) % self.num
                }
                (None, s, Some(p)) if s > 0 => (p + s % self.num) % self.num,
                _ => fresh,
            };
            let key = self.next_untouched(from);
            self.prev_new = Some(key);
            key
        } else {
            match &self.reuse_alias {
                Some(a) => {
                    let r = self.reuse[a.sample(self.rng.next_u64())];
                    let depth = self.draw_depth(&r);
                    (self.key_at_depth(depth) + r.step % self.num) % self.num
                }
                None => fresh,
            }
        };
        self.touch(key);
        key
    }

    /// A depth of class `r`, below the keys touched so far (at least one).
    fn draw_depth(&mut self, r: &Reuse) -> u64 {
        let span = r.depth_hi - r.depth_lo;
        let depth = r.depth_lo
            + if span == 0 {
                0
            } else {
                next_below(&mut self.rng, span + 1)
            };
        depth.min(self.distinct() - 1)
    }

    /// [`LocalityGen::next_key`], with a payload per key: `payload` (e.g. the draw that
    /// decides the operation and its size) is kept for a key touched the first time; a
    /// key touched again returns its kept payload — always for a share
    /// [`Locality::pure_keys`] of the keys, with probability
    /// [`Locality::same_op`]`[kind(kept)]` for the others (else the new `payload`, for
    /// that touch only) — so what the underlying model ties to a key (db_bench derives a
    /// key's op and value size from the key's own draw) stays as tied to it as the trace
    /// showed.
    pub fn next_key_with(
        &mut self,
        fresh: u64,
        payload: u64,
        kind: impl FnOnce(u64) -> usize,
    ) -> (u64, u64) {
        if self.payloads.is_empty() {
            self.payloads = vec![0; self.num as usize];
            self.mixed = vec![0; self.num.div_ceil(64) as usize];
        }
        let before = self.distinct();
        let key = self.next_key(fresh);
        if key >= self.num {
            return (key, payload);
        }
        let keep = || {
            let k = kind(self.payloads[key as usize]);
            self.same_op.get(k).copied().unwrap_or(1.0)
        };
        let k = key as usize;
        if self.distinct() > before {
            self.payloads[k] = payload;
            if next_f64(&mut self.rng) >= self.pure_keys {
                self.mixed[k / 64] |= 1 << (k % 64);
            }
            return (key, payload);
        }
        // The key's own payload stays its own; a re-touch that does not keep it takes
        // the new draw's for this touch only.
        if self.mixed[k / 64] & (1 << (k % 64)) == 0 || next_f64(&mut self.rng) < keep() {
            (key, self.payloads[key as usize])
        } else {
            (key, payload)
        }
    }

    /// The first untouched key at or after `from` (wrapping); the caller guarantees one.
    fn next_untouched(&self, from: u64) -> u64 {
        let words = self.untouched.len();
        let mut w = (from / 64) as usize;
        let first = self.untouched[w] & (u64::MAX << (from % 64));
        if first != 0 {
            return w as u64 * 64 + u64::from(first.trailing_zeros());
        }
        for _ in 0..words {
            w = if w + 1 == words { 0 } else { w + 1 };
            let bits = self.untouched[w];
            if bits != 0 {
                return w as u64 * 64 + u64::from(bits.trailing_zeros());
            }
        }
        from
    }

    /// The key at LRU depth `depth < distinct`.
    fn key_at_depth(&self, depth: u64) -> u64 {
        u64::from(self.stack.key_at_depth(depth))
    }

    /// Makes `key` the most recent.
    fn touch(&mut self, key: u64) {
        let k = key as usize;
        if self.last[k] == stack::NONE {
            self.untouched[k / 64] &= !(1u64 << (k % 64));
        }
        let last = &mut self.last;
        let mut pos = last[k];
        self.stack
            .access(key as u32, &mut pos, |slot, new| last[slot as usize] = new);
        last[k] = pos;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(new_share: f64, new_steps: Vec<(u64, u64)>, reuse: Vec<Reuse>) -> Locality {
        Locality {
            new_share,
            new_steps,
            new_near: vec![],
            reuse,
            pure_keys: 1.0,
            same_op: vec![],
        }
    }

    #[test]
    fn only_new_keys_with_step_one_walk_the_key_space_in_order() {
        let p = params(1.0, vec![(1, 1)], vec![]);
        let mut g = LocalityGen::new(&p, 100, 7).unwrap();
        let keys: Vec<u64> = (0..100).map(|_| g.next_key(40)).collect();
        let expected: Vec<u64> = (40..100).chain(0..40).collect();
        assert_eq!(keys, expected);
        assert_eq!(g.distinct(), 100);
    }

    #[test]
    fn depth_zero_repeats_and_depth_one_alternates() {
        let reuse = |d| Reuse {
            depth_lo: d,
            depth_hi: d,
            step: 0,
            weight: 1,
        };
        let mut g = LocalityGen::new(&params(0.0, vec![], vec![reuse(0)]), 10, 1).unwrap();
        let keys: Vec<u64> = (0..5).map(|_| g.next_key(3)).collect();
        assert_eq!(keys, [3, 3, 3, 3, 3]);
        let mut g = LocalityGen::new(&params(0.0, vec![], vec![reuse(1)]), 10, 1).unwrap();
        // The first is new (nothing to reuse), the second finds only depth 0.
        let keys: Vec<u64> = (0..6).map(|_| g.next_key(3)).collect();
        assert_eq!(keys, [3, 3, 3, 3, 3, 3]);
    }

    #[test]
    fn key_at_depth_matches_a_naive_lru_stack_through_compactions() {
        // Random touches of 50 keys, 20 000 of them (the 4 096 slots compact often).
        let p = params(
            0.3,
            vec![(0, 1)],
            vec![Reuse {
                depth_lo: 0,
                depth_hi: 60,
                step: 0,
                weight: 1,
            }],
        );
        let mut g = LocalityGen::new(&p, 50, 3).unwrap();
        let mut stack: Vec<u64> = Vec::new(); // most recent last
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        for _ in 0..20_000 {
            let fresh = next_below(&mut rng, 50);
            let k = g.next_key(fresh);
            stack.retain(|&x| x != k);
            stack.push(k);
            for depth in [0u64, 1, 7, 20] {
                if depth < stack.len() as u64 {
                    let naive = stack[stack.len() - 1 - depth as usize];
                    assert_eq!(g.key_at_depth(depth), naive);
                }
            }
        }
        assert_eq!(g.distinct(), stack.len() as u64);
    }

    #[test]
    fn the_first_key_beside_a_recent_one_starts_from_the_draw() {
        // Only new keys, all placed beside a recent key: the first has none to go by.
        let p = Locality {
            new_share: 1.0,
            new_steps: vec![],
            new_near: vec![Reuse {
                depth_lo: 0,
                depth_hi: 0,
                step: 2,
                weight: 1,
            }],
            reuse: vec![],
            pure_keys: 1.0,
            same_op: vec![],
        };
        let mut g = LocalityGen::new(&p, 10, 1).unwrap();
        let keys: Vec<u64> = (0..5).map(|_| g.next_key(7)).collect();
        assert_eq!(keys, [7, 9, 1, 3, 5]);
    }

    #[test]
    fn a_payload_stays_with_its_key() {
        let p = params(
            0.5,
            vec![(0, 1)],
            vec![Reuse {
                depth_lo: 0,
                depth_hi: 3,
                step: 0,
                weight: 1,
            }],
        );
        let mut g = LocalityGen::new(&p, 100_000, 4).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let mut first = std::collections::HashMap::new();
        for i in 0..5000u64 {
            let fresh = next_below(&mut rng, 100_000);
            let (key, payload) = g.next_key_with(fresh, i, |_| 0);
            let p0 = *first.entry(key).or_insert(i);
            assert_eq!(payload, p0, "key {key} at request {i}");
        }
        assert!((2000..3000).contains(&first.len()), "{}", first.len());
    }

    #[test]
    fn a_step_touches_the_neighbour_of_a_recent_key() {
        let p = params(
            0.0,
            vec![],
            vec![Reuse {
                depth_lo: 0,
                depth_hi: 0,
                step: 1,
                weight: 1,
            }],
        );
        let mut g = LocalityGen::new(&p, 8, 1).unwrap();
        let keys: Vec<u64> = (0..10).map(|_| g.next_key(5)).collect();
        assert_eq!(keys, [5, 6, 7, 0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn draws_outside_the_key_space_pass_through_and_bad_parameters_are_refused() {
        let p = params(1.0, vec![(0, 1)], vec![]);
        let mut g = LocalityGen::new(&p, 10, 1).unwrap();
        assert_eq!(g.next_key(u64::MAX - 3), u64::MAX - 3);
        assert_eq!(g.distinct(), 0);
        assert!(params(1.5, vec![(0, 1)], vec![]).validate(10).is_err());
        assert!(params(0.5, vec![(0, 0)], vec![]).validate(10).is_err());
        assert!(LocalityGen::new(&p, 0, 1).is_err());
    }
}

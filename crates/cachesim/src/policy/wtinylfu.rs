//! W-TinyLFU (Einziger, Friedman & Manes, ToS'17), as libCacheSim's `WTinyLFU.c` with its
//! default `main-cache=SLRU, window-size=0.01`.
//!
//! A window LRU (`window_ratio` of the cache) takes new objects; the main cache is a
//! segmented LRU of two segments sized 1:4 (upstream's `seg-size=1:4`). When the cache is
//! full, the window's oldest object moves to main while main has room; otherwise it
//! replaces main's victim only if the frequency sketch estimates it more popular, else it
//! is evicted. The sketch is upstream's `minimalIncrementCBF`: a counting Bloom filter
//! sized for the main cache's capacity at 0.1% error (10 hashes, ⌈14.38 × capacity⌉ 32-bit
//! counters), every counter of a key incremented on each add, all counters halved after
//! `32 × main capacity` hits in main. Keys are hashed as upstream does, with XXH64 of the
//! 8-byte little-endian object id under seeds `0x12345678` and `0x12344321`, truncated to
//! 32 bits (double hashing `a + i·b`). Upstream has no doorkeeper; `doorkeeper = true`
//! adds the TinyLFU paper's (a Bloom filter of one bit per sketch counter, 4 hashes, that
//! absorbs each key's first occurrence and is cleared at every halving), as kvlab's own
//! variant, named `WTinyLFU-doorkeeper` in results.
//!
//! One deliberate difference: in byte mode upstream sizes the sketch by the main cache's
//! *bytes* (up to 2³¹ counters, 8 GiB); kvlab caps it at 2²⁴ counters, so byte-mode results
//! can differ from libCacheSim's when main holds more than about 1.1 million bytes.
//!
//! State per object: 16 bytes of links, 8 of sizes, 2 flags; plus the sketch (4 bytes per
//! counter, 14.38 counters per object of main capacity).

use crate::list::{Links, Queue};
use crate::policy::slru::Slru;
use crate::policy::Policy;
use crate::trace::Req;

const SEED0: u64 = 0x1234_5678;
const SEED1: u64 = 0x1234_4321;
const MAX_COUNTERS: u64 = 1 << 24;

/// XXH64 of one little-endian `u64` (the xxHash specification's algorithm for an 8-byte
/// input).
pub(crate) fn xxh64_u64(v: u64, seed: u64) -> u64 {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    let mut h = seed.wrapping_add(P5).wrapping_add(8);
    let k = v.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h ^= k;
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^= h >> 32;
    h
}

/// Upstream's counting Bloom filter (`dataStructure/minimalIncrementCBF.c`), with an
/// optional doorkeeper.
#[derive(Debug)]
struct Sketch {
    hashes: u32,
    counters: Vec<u32>,
    /// Doorkeeper bits (empty: no doorkeeper).
    door: Vec<u64>,
}

impl Sketch {
    #[expect(
        clippy::approx_constant,
        reason = "upstream's literal for ln 2, kept so the hash count rounds the same"
    )]
    fn new(entries: u64, doorkeeper: bool) -> Sketch {
        let bpe = -(0.001f64).ln() / 0.480_453_013_918_201;
        let hashes = (0.693_147_180_559_945 * bpe).ceil() as u32;
        let mut n =
            ((bpe * entries as f64).ceil().min(f64::from(i32::MAX)) as u64).min(MAX_COUNTERS);
        if n < u64::from(hashes) {
            n = u64::from(hashes) * 2;
        }
        Sketch {
            hashes,
            counters: vec![0; n as usize],
            door: if doorkeeper {
                vec![0; (n as usize).div_ceil(64)]
            } else {
                Vec::new()
            },
        }
    }

    /// The doorkeeper's bit positions for `id` (4 hashes by double hashing).
    fn door_bits(&self, id: u64) -> [usize; 4] {
        let bits = (self.door.len() * 64) as u64;
        let h = xxh64_u64(id, 0x2345_6789);
        let (a, b) = (h & 0xFFFF_FFFF, (h >> 32) | 1);
        [0u64, 1, 2, 3].map(|i| (a.wrapping_add(i.wrapping_mul(b)) % bits) as usize)
    }

    fn door_contains(&self, id: u64) -> bool {
        !self.door.is_empty()
            && self
                .door_bits(id)
                .iter()
                .all(|&b| self.door[b / 64] & (1 << (b % 64)) != 0)
    }

    /// Upstream's two 32-bit hashes of a key.
    #[inline]
    fn hash_pair(id: u64) -> (u32, u32) {
        (xxh64_u64(id, SEED0) as u32, xxh64_u64(id, SEED1) as u32)
    }

    /// The counter of the `i`th hash of a key (double hashing, in 32-bit arithmetic).
    #[inline]
    fn slot(&self, (a, b): (u32, u32), i: u32) -> usize {
        (a.wrapping_add(i.wrapping_mul(b)) % self.counters.len() as u32) as usize
    }

    fn estimate(&self, id: u64) -> u32 {
        self.counters_estimate(Self::hash_pair(id)) + u32::from(self.door_contains(id))
    }

    fn counters_estimate(&self, h: (u32, u32)) -> u32 {
        (0..self.hashes)
            .map(|i| self.counters[self.slot(h, i)])
            .min()
            .unwrap_or(0)
    }

    fn add(&mut self, id: u64) {
        if !self.door.is_empty() && !self.door_contains(id) {
            for b in self.door_bits(id) {
                self.door[b / 64] |= 1 << (b % 64);
            }
            return;
        }
        // Upstream increments every counter of the key, unless one is saturated.
        let h = Self::hash_pair(id);
        if self.counters_estimate(h) == u32::MAX {
            return;
        }
        for i in 0..self.hashes {
            let x = self.slot(h, i);
            self.counters[x] = self.counters[x].wrapping_add(1);
        }
    }

    fn decay(&mut self) {
        for c in &mut self.counters {
            *c >>= 1;
        }
        self.door.fill(0);
    }
}

/// Window TinyLFU.
#[derive(Debug)]
pub struct WTinyLfu {
    capacity: u64,
    window_capacity: u64,
    main_capacity: u64,
    window_links: Links,
    window: Queue,
    in_window: Vec<bool>,
    window_size: Vec<u32>,
    main: Slru,
    sketch: Sketch,
    max_request_num: u64,
    request_counter: u64,
    ids: Vec<u64>,
}

impl WTinyLfu {
    /// An empty cache of `capacity` for objects `0..n_objects`, the window taking
    /// `window_ratio` of it; `doorkeeper` puts a doorkeeper in front of the sketch.
    pub fn new(capacity: u64, n_objects: usize, window_ratio: f64, doorkeeper: bool) -> Self {
        // cache_size *= window_size (an int64 times a double, truncated), as upstream.
        let window_capacity = (capacity as f64 * window_ratio) as u64;
        let main_capacity = capacity - window_capacity.min(capacity);
        WTinyLfu {
            capacity,
            window_capacity,
            main_capacity,
            window_links: Links::new(n_objects),
            window: Queue::default(),
            in_window: vec![false; n_objects],
            window_size: vec![0; n_objects],
            main: Slru::with_weights(main_capacity, n_objects, &[1, 4]),
            sketch: Sketch::new(main_capacity.min(i32::MAX as u64), doorkeeper),
            max_request_num: 32 * main_capacity,
            request_counter: 0,
            ids: vec![0; n_objects],
        }
    }

    fn main_req(&self, x: u32) -> Req {
        Req {
            obj: x,
            size: u64::from(self.window_size[x as usize]),
            next_access: 0,
            id: self.ids[x as usize],
        }
    }

    fn window_remove(&mut self, x: u32) {
        self.window_links
            .unlink(&mut self.window, x, u64::from(self.window_size[x as usize]));
        self.in_window[x as usize] = false;
    }
}

impl Policy for WTinyLfu {
    fn grow(&mut self, n_objects: usize) {
        self.in_window.resize(n_objects, false);
        self.window_size.resize(n_objects, 0);
        self.ids.resize(n_objects, 0);
        self.window_links.grow(n_objects);
        self.main.grow(n_objects);
    }

    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj;
        let in_window = self.in_window[x as usize];
        if in_window {
            self.window_links.move_to_head(&mut self.window, x);
        }
        let in_main = self.main.lookup(req);
        if in_main {
            self.sketch.add(req.id);
            self.request_counter += 1;
            if self.request_counter >= self.max_request_num {
                self.request_counter = 0;
                self.sketch.decay();
            }
        }
        in_window || in_main
    }

    fn can_insert(&mut self, req: &Req) -> bool {
        req.size <= self.capacity && req.size <= self.window_capacity && self.main.can_insert(req)
    }

    fn occupied(&self) -> u64 {
        self.window.bytes + self.main.occupied()
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, req: &Req) {
        loop {
            if self.window.bytes == 0 {
                self.main.evict(req);
                return;
            }
            let v = self.window.tail;
            let vreq = self.main_req(v);
            let mut evicted = false;
            if self.main.occupied() + vreq.size <= self.main_capacity {
                self.main.insert(&vreq);
                self.window_remove(v);
            } else {
                let m = self.main.victim().expect("a full main cache has a victim");
                if self.sketch.estimate(vreq.id) > self.sketch.estimate(self.ids[m as usize]) {
                    self.main.evict(req);
                    self.window_remove(v);
                    self.main.insert(&vreq);
                } else {
                    self.window_remove(v);
                }
                evicted = true;
            }
            self.sketch.add(vreq.id);
            if evicted {
                return;
            }
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.ids[x as usize] = req.id;
        self.in_window[x as usize] = true;
        self.window_size[x as usize] = req.size as u32;
        self.window_links.push_head(&mut self.window, x, req.size);
        self.sketch.add(req.id);
    }

    fn remove(&mut self, obj: u32) -> bool {
        if self.in_window[obj as usize] {
            self.window_remove(obj);
            return true;
        }
        self.main.remove(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sketch_shape_matches_upstream_formula() {
        let s = Sketch::new(1000, false);
        assert_eq!(s.hashes, 10);
        assert_eq!(s.counters.len(), 14378);
    }

    #[test]
    fn the_doorkeeper_absorbs_first_occurrences() {
        let mut s = Sketch::new(1000, true);
        s.add(42);
        let h = Sketch::hash_pair(42);
        assert_eq!((s.estimate(42), s.counters_estimate(h)), (1, 0));
        s.add(42);
        assert_eq!((s.estimate(42), s.counters_estimate(h)), (2, 1));
        s.decay();
        assert_eq!(s.estimate(42), 0);
    }
}

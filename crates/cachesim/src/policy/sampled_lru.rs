//! Redis's approximated LRU (`maxmemory-policy allkeys-lru`, `maxmemory-samples`, default
//! 5), as `evict.c` does it: each eviction samples that many resident keys into an
//! eviction pool of 16 candidates kept sorted by idle time (the pool persists across
//! evictions), then evicts the pool's idlest key that still exists. Idle time is measured
//! in requests (Redis's clock has one-second resolution). Keys are sampled uniformly with
//! replacement by Xoshiro256++ from the given seed, so runs are reproducible; Redis's
//! `dictGetSomeKeys` is not uniform, so the numbers are Redis-like, not Redis's.
//!
//! State per object: 8 bytes of last access, 4 of position in the resident list, 4 of
//! size, plus 4 bytes per resident object.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::policy::Policy;
use crate::trace::Req;

const POOL: usize = 16;
const NOT_RESIDENT: u32 = u32::MAX;

/// Redis-style sampled LRU.
#[derive(Debug)]
pub struct SampledLru {
    capacity: u64,
    occupied: u64,
    samples: u32,
    rng: Xoshiro256PlusPlus,
    now: u64,
    last_access: Vec<u64>,
    pos: Vec<u32>,
    size: Vec<u32>,
    resident: Vec<u32>,
    /// (idle, object), ascending idle; `None` slots at the end.
    pool: [Option<(u64, u32)>; POOL],
}

impl SampledLru {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize, samples: u32, seed: u64) -> Self {
        SampledLru {
            capacity,
            occupied: 0,
            samples: samples.max(1),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            now: 0,
            last_access: vec![0; n_objects],
            pos: vec![NOT_RESIDENT; n_objects],
            size: vec![0; n_objects],
            resident: Vec::new(),
            pool: [None; POOL],
        }
    }

    /// Redis's `evictionPoolPopulate`: insert each sampled key by idle time.
    fn populate(&mut self) {
        for _ in 0..self.samples {
            let i = (self.rng.next_u64() % self.resident.len() as u64) as usize;
            let x = self.resident[i];
            let idle = self.now - self.last_access[x as usize];
            let mut k = 0;
            while k < POOL && matches!(self.pool[k], Some((i2, _)) if i2 < idle) {
                k += 1;
            }
            if k == 0 && self.pool[POOL - 1].is_some() {
                continue;
            } else if k < POOL && self.pool[k].is_none() {
                // an empty slot
            } else if self.pool[POOL - 1].is_none() {
                self.pool.copy_within(k..POOL - 1, k + 1);
            } else {
                k -= 1;
                self.pool.copy_within(1..=k, 0);
            }
            self.pool[k] = Some((idle, x));
        }
    }
}

impl Policy for SampledLru {
    fn grow(&mut self, n_objects: usize) {
        self.last_access.resize(n_objects, 0);
        self.pos.resize(n_objects, NOT_RESIDENT);
        self.size.resize(n_objects, 0);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        self.now += 1;
        let x = req.obj as usize;
        if self.pos[x] == NOT_RESIDENT {
            return false;
        }
        self.last_access[x] = self.now;
        true
    }

    fn occupied(&self) -> u64 {
        self.occupied
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, _req: &Req) {
        loop {
            self.populate();
            for k in (0..POOL).rev() {
                let Some((_, x)) = self.pool[k] else {
                    continue;
                };
                self.pool.copy_within(k + 1..POOL, k);
                self.pool[POOL - 1] = None;
                if self.remove(x) {
                    return;
                }
            }
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj as usize;
        self.last_access[x] = self.now;
        self.size[x] = req.size as u32;
        self.pos[x] = self.resident.len() as u32;
        self.resident.push(req.obj);
        self.occupied += req.size;
    }

    fn remove(&mut self, obj: u32) -> bool {
        let p = self.pos[obj as usize];
        if p == NOT_RESIDENT {
            return false;
        }
        self.resident.swap_remove(p as usize);
        if let Some(&moved) = self.resident.get(p as usize) {
            self.pos[moved as usize] = p;
        }
        self.pos[obj as usize] = NOT_RESIDENT;
        self.occupied -= u64::from(self.size[obj as usize]);
        true
    }
}

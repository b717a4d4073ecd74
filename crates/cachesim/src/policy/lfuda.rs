//! LFUDA (LFU with dynamic aging), as libCacheSim's `LFUDA.c`.
//!
//! Upstream's aging differs from the textbook's and is kept: an inserted object gets
//! frequency `L + 1`, a hit adds `L` (not 1) to the object's frequency, where `L` is the
//! frequency of the last evicted object (0 before the first eviction, so until then hits
//! only move the object to the young end of its frequency). Evict the oldest object of the
//! lowest frequency.
//!
//! State per object: 8 bytes of links, 8 of frequency, 4 of size, 1 resident flag; plus one
//! queue per distinct frequency present.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hashbrown::HashMap;

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::trace::Req;

/// LFU with dynamic aging.
#[derive(Debug)]
pub struct Lfuda {
    capacity: u64,
    occupied: u64,
    links: Links,
    /// Non-empty frequency queues (oldest at the head).
    buckets: HashMap<u64, Queue>,
    /// Frequencies that had a queue, lowest first (stale ones are dropped when seen).
    keys: BinaryHeap<Reverse<u64>>,
    min_freq: u64,
    resident: Vec<bool>,
    freq: Vec<u64>,
    size: Vec<u32>,
}

impl Lfuda {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Lfuda {
            capacity,
            occupied: 0,
            links: Links::new(n_objects),
            buckets: HashMap::new(),
            keys: BinaryHeap::new(),
            min_freq: 0,
            resident: vec![false; n_objects],
            freq: vec![0; n_objects],
            size: vec![0; n_objects],
        }
    }

    /// The lowest non-empty frequency.
    fn lowest(&mut self) -> Option<u64> {
        while let Some(&Reverse(f)) = self.keys.peek() {
            if self.buckets.contains_key(&f) {
                return Some(f);
            }
            self.keys.pop();
        }
        None
    }

    /// Upstream's `update_min_freq`: the lowest non-empty frequency above the current
    /// minimum, if any (else the minimum stays). It is only called once the minimum's queue
    /// is empty, and no queue is ever below the minimum, so that is the lowest one.
    fn update_min_freq(&mut self) {
        debug_assert!(!self.buckets.contains_key(&self.min_freq) || self.min_freq == 0);
        if let Some(f) = self.lowest() {
            if f > self.min_freq {
                self.min_freq = f;
            }
        }
    }

    fn unlink(&mut self, x: u32, f: u64) {
        let size = u64::from(self.size[x as usize]);
        let q = self
            .buckets
            .get_mut(&f)
            .expect("a resident object's frequency has a queue");
        self.links.unlink(q, x, size);
        if q.is_empty() {
            self.buckets.remove(&f);
        }
    }

    fn append(&mut self, x: u32, f: u64) {
        let size = u64::from(self.size[x as usize]);
        let q = self.buckets.entry(f).or_insert_with(|| {
            self.keys.push(Reverse(f));
            Queue::default()
        });
        self.links.push_tail(q, x, size);
        if self.keys.len() > 2 * self.buckets.len() + 1024 {
            self.keys = self.buckets.keys().map(|&k| Reverse(k)).collect();
        }
    }
}

impl Policy for Lfuda {
    fn grow(&mut self, n_objects: usize) {
        self.resident.resize(n_objects, false);
        self.freq.resize(n_objects, 0);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj;
        if !self.resident[x as usize] {
            return false;
        }
        let old = self.freq[x as usize];
        // With a cache of a few objects the frequency doubles at every hit and leaves
        // i64's range (upstream's then wraps, and its frequency scan never ends); it
        // saturates here.
        let new = old.saturating_add(self.min_freq);
        self.freq[x as usize] = new;
        self.unlink(x, old);
        if self.min_freq == old && !self.buckets.contains_key(&old) {
            self.update_min_freq();
        }
        self.append(x, new);
        true
    }

    #[inline]
    fn occupied(&self) -> u64 {
        self.occupied
    }

    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, _req: &Req) {
        // Upstream reads the queue of frequency 1 while the minimum is 0 or 1. A minimum
        // left on an emptied queue would crash upstream; take the lowest non-empty one.
        let key = if self.min_freq <= 1 { 1 } else { self.min_freq };
        let (f, x) = match self.buckets.get(&key) {
            Some(q) => (key, q.head),
            None => {
                let f = self
                    .lowest()
                    .expect("evict is only called on a non-empty cache");
                (f, self.buckets[&f].head)
            }
        };
        self.min_freq = f;
        self.unlink(x, f);
        self.resident[x as usize] = false;
        self.occupied -= u64::from(self.size[x as usize]);
        if !self.buckets.contains_key(&f) {
            self.update_min_freq();
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        let f = self.min_freq.saturating_add(1);
        self.freq[x as usize] = f;
        self.size[x as usize] = req.size as u32;
        self.resident[x as usize] = true;
        self.occupied += req.size;
        self.append(x, f);
    }

    fn remove(&mut self, obj: u32) -> bool {
        if !self.resident[obj as usize] {
            return false;
        }
        let f = self.freq[obj as usize];
        self.unlink(obj, f);
        self.resident[obj as usize] = false;
        self.occupied -= u64::from(self.size[obj as usize]);
        if f == self.min_freq && !self.buckets.contains_key(&f) {
            self.update_min_freq();
        }
        true
    }
}

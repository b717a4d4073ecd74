//! LFU, as libCacheSim's `LFU.c`: evict the least frequently used object; ties go to the
//! object that entered its frequency first; a new object starts at frequency 1 (also after
//! an eviction).
//!
//! State per object: 8 bytes of links, 4 of size, 4 of frequency, 1 resident flag; plus one
//! 32-byte queue per frequency reached.

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::trace::Req;

/// Least frequently used.
#[derive(Debug)]
pub struct Lfu {
    capacity: u64,
    occupied: u64,
    links: Links,
    /// One FIFO per frequency (index = frequency; oldest at the head).
    buckets: Vec<Queue>,
    /// The lowest non-empty frequency, or 0 when it must be searched for (as upstream).
    min_freq: usize,
    max_freq: usize,
    resident: Vec<bool>,
    freq: Vec<u32>,
    size: Vec<u32>,
}

impl Lfu {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Lfu {
            capacity,
            occupied: 0,
            links: Links::new(n_objects),
            buckets: vec![Queue::default(); 2],
            min_freq: 1,
            max_freq: 1,
            resident: vec![false; n_objects],
            freq: vec![0; n_objects],
            size: vec![0; n_objects],
        }
    }

    fn update_min_freq(&mut self) {
        for f in self.min_freq + 1..=self.max_freq {
            if !self.buckets[f].is_empty() {
                self.min_freq = f;
                return;
            }
        }
    }
}

impl Policy for Lfu {
    fn grow(&mut self, n_objects: usize) {
        self.resident.resize(n_objects, false);
        self.freq.resize(n_objects, 0);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj as usize;
        if !self.resident[x] {
            return false;
        }
        let old = self.freq[x] as usize;
        let new = old + 1;
        self.freq[x] = new as u32;
        if new >= self.buckets.len() {
            self.buckets.push(Queue::default());
        }
        self.max_freq = self.max_freq.max(new);
        let size = u64::from(self.size[x]);
        self.links.unlink(&mut self.buckets[old], req.obj, size);
        self.links.push_tail(&mut self.buckets[new], req.obj, size);
        if self.buckets[old].is_empty() && self.min_freq == old {
            self.update_min_freq();
        }
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
        if self.min_freq == 0 {
            self.update_min_freq();
        }
        let f = self.min_freq;
        let x = self.buckets[f].head;
        let size = u64::from(self.size[x as usize]);
        self.links.unlink(&mut self.buckets[f], x, size);
        if self.buckets[f].is_empty() {
            self.min_freq = 0;
        }
        self.resident[x as usize] = false;
        self.occupied -= size;
    }

    #[inline]
    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.min_freq = 1;
        self.freq[x as usize] = 1;
        self.size[x as usize] = req.size as u32;
        self.resident[x as usize] = true;
        self.links.push_tail(&mut self.buckets[1], x, req.size);
        self.occupied += req.size;
    }

    fn remove(&mut self, obj: u32) -> bool {
        let x = obj as usize;
        if !self.resident[x] {
            return false;
        }
        let f = self.freq[x] as usize;
        let size = u64::from(self.size[x]);
        self.links.unlink(&mut self.buckets[f], obj, size);
        self.resident[x] = false;
        self.occupied -= size;
        if f == self.min_freq && self.buckets[f].is_empty() {
            self.update_min_freq();
        }
        true
    }
}

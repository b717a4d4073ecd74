//! GDSF (greedy dual size frequency), as libCacheSim's `cpp/GDSF.cpp`: priority
//! `L + freq × 10⁶ / size`, `L` the priority of the last evicted object; evict the lowest
//! priority, ties to the least recently requested. libCacheSim's GDSF inserts the missed
//! object first and then evicts while over capacity, so a new object can be evicted at
//! once; `freq` is 1 at insertion and counts hits from there.
//!
//! The ordered set of upstream is a min-heap here with lazily dropped stale entries (an
//! entry is current when its request time is the object's last); the order is the same:
//! (priority, request time).
//!
//! State per object: 8 bytes of last request time, 4 of frequency, 4 of size, plus 24
//! bytes per heap entry (one per request while the heap is not compacted).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::policy::Policy;
use crate::trace::Req;

const NOT_RESIDENT: u64 = u64::MAX;

/// Greedy dual size frequency.
#[derive(Debug)]
pub struct Gdsf {
    capacity: u64,
    occupied: u64,
    n_req: u64,
    pri_last_evict: f64,
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    /// Request time of the object's current heap entry, or [`NOT_RESIDENT`].
    vtime: Vec<u64>,
    freq: Vec<u32>,
    size: Vec<u32>,
    resident: u64,
}

impl Gdsf {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Gdsf {
            capacity,
            occupied: 0,
            n_req: 0,
            pri_last_evict: 0.0,
            heap: BinaryHeap::new(),
            vtime: vec![NOT_RESIDENT; n_objects],
            freq: vec![0; n_objects],
            size: vec![0; n_objects],
            resident: 0,
        }
    }

    /// Pushes the object's entry; priorities are positive, so their bits order as they do.
    fn push(&mut self, x: u32, pri: f64) {
        debug_assert!(pri >= 0.0, "GDSF priorities are never negative");
        self.vtime[x as usize] = self.n_req;
        self.heap.push(Reverse((pri.to_bits(), self.n_req, x)));
        if self.heap.len() as u64 > 4 * self.resident + 1024 {
            self.compact();
        }
    }

    /// Drops stale entries so the heap does not grow with the trace.
    fn compact(&mut self) {
        let vtime = &self.vtime;
        let entries = std::mem::take(&mut self.heap).into_vec();
        self.heap = entries
            .into_iter()
            .filter(|Reverse((_, t, x))| vtime[*x as usize] == *t)
            .collect();
    }
}

impl Policy for Gdsf {
    fn grow(&mut self, n_objects: usize) {
        self.vtime.resize(n_objects, NOT_RESIDENT);
        self.freq.resize(n_objects, 0);
        self.size.resize(n_objects, 0);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        self.n_req += 1;
        let x = req.obj as usize;
        if self.vtime[x] == NOT_RESIDENT {
            return false;
        }
        self.freq[x] += 1;
        let pri = self.pri_last_evict + f64::from(self.freq[x]) * 1.0e6 / f64::from(self.size[x]);
        self.push(req.obj, pri);
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
        loop {
            let Reverse((pri, t, x)) = self
                .heap
                .pop()
                .expect("evict is only called on a non-empty cache");
            if self.vtime[x as usize] != t {
                continue;
            }
            self.pri_last_evict = f64::from_bits(pri);
            self.vtime[x as usize] = NOT_RESIDENT;
            self.occupied -= u64::from(self.size[x as usize]);
            self.resident -= 1;
            return;
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj as usize;
        self.freq[x] = 1;
        self.size[x] = req.size as u32;
        self.occupied += req.size;
        self.resident += 1;
        let pri = self.pri_last_evict + 1.0e6 / f64::from(self.size[x]);
        self.push(req.obj, pri);
    }

    fn insert_then_evict(&self) -> bool {
        true
    }

    fn remove(&mut self, obj: u32) -> bool {
        let x = obj as usize;
        if self.vtime[x] == NOT_RESIDENT {
            return false;
        }
        self.vtime[x] = NOT_RESIDENT;
        self.occupied -= u64::from(self.size[x]);
        self.resident -= 1;
        true
    }
}

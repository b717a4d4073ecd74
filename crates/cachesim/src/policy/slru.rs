//! Segmented LRU, as libCacheSim's `SLRU.c` (4 equal segments by default): a hit moves an
//! object up one segment (or to the head of the top one); a segment over its share pushes
//! its tail down one segment ("cooling"), and the bottom segment's overflow is evicted.
//! Upstream inserts a new object into the lowest segment with room for it (so an empty
//! cache fills every segment with new objects) and evicts from the lowest non-empty one.
//!
//! State per object: 8 bytes of links, 4 of size, 1 of segment.

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::trace::Req;

const NOWHERE: u8 = u8::MAX;

/// Segmented LRU.
#[derive(Debug)]
pub struct Slru {
    capacity: u64,
    occupied: u64,
    segment_capacity: Vec<u64>,
    links: Links,
    segments: Vec<Queue>,
    segment: Vec<u8>,
    size: Vec<u32>,
}

impl Slru {
    /// An empty cache of `capacity` with `segments` (1–255) equal segments.
    pub fn new(capacity: u64, n_objects: usize, segments: u32) -> Self {
        let n = segments.clamp(1, 255) as usize;
        Slru {
            capacity,
            occupied: 0,
            segment_capacity: vec![capacity / n as u64; n],
            links: Links::new(n_objects),
            segments: vec![Queue::default(); n],
            segment: vec![NOWHERE; n_objects],
            size: vec![0; n_objects],
        }
    }

    /// A segmented LRU with segment sizes in the proportions of `weights`, each
    /// `(int64)((double)w / sum × capacity)` as upstream's `seg-size` parameter computes
    /// them (W-TinyLFU's main cache is `seg-size=1:4`).
    pub fn with_weights(capacity: u64, n_objects: usize, weights: &[u64]) -> Self {
        let sum: u64 = weights.iter().sum();
        let mut s = Slru::new(capacity, n_objects, weights.len() as u32);
        s.segment_capacity = weights
            .iter()
            .map(|&w| (w as f64 / sum as f64 * capacity as f64) as u64)
            .collect();
        s
    }

    /// The object the next eviction takes (the lowest non-empty segment's tail).
    pub(crate) fn victim(&self) -> Option<u32> {
        self.segments.iter().find(|q| q.bytes > 0).map(|q| q.tail)
    }

    fn evict_lowest(&mut self) {
        let Some(s) = self.segments.iter().position(|q| q.bytes > 0) else {
            return;
        };
        let t = self.segments[s].tail;
        let size = u64::from(self.size[t as usize]);
        self.links.unlink(&mut self.segments[s], t, size);
        self.segment[t as usize] = NOWHERE;
        self.occupied -= size;
    }

    /// Pushes segment `id`'s tail down one segment (upstream's `SLRU_cool`).
    fn cool(&mut self, id: usize) {
        if id == 0 {
            self.evict_lowest();
            return;
        }
        let t = self.segments[id].tail;
        let size = u64::from(self.size[t as usize]);
        self.links.unlink(&mut self.segments[id], t, size);
        self.links.push_head(&mut self.segments[id - 1], t, size);
        self.segment[t as usize] = (id - 1) as u8;
        while self.segments[id - 1].bytes > self.segment_capacity[id - 1] {
            self.cool(id - 1);
        }
    }
}

impl Policy for Slru {
    fn grow(&mut self, n_objects: usize) {
        self.segment.resize(n_objects, NOWHERE);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj;
        let s = self.segment[x as usize];
        if s == NOWHERE {
            return false;
        }
        let s = s as usize;
        let top = self.segments.len() - 1;
        if s == top {
            self.links.move_to_head(&mut self.segments[top], x);
        } else {
            let size = u64::from(self.size[x as usize]);
            self.links.unlink(&mut self.segments[s], x, size);
            self.links.push_head(&mut self.segments[s + 1], x, size);
            self.segment[x as usize] = (s + 1) as u8;
            loop {
                let cur = self.segment[x as usize];
                if cur == NOWHERE
                    || self.segments[cur as usize].bytes <= self.segment_capacity[cur as usize]
                {
                    break;
                }
                self.cool(cur as usize);
            }
        }
        true
    }

    fn can_insert(&mut self, req: &Req) -> bool {
        req.size <= self.capacity && req.size <= self.segment_capacity[0]
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
        self.evict_lowest();
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        let seg = match self
            .segments
            .iter()
            .zip(&self.segment_capacity)
            .position(|(q, &cap)| q.bytes + req.size <= cap)
        {
            Some(s) => s,
            None => {
                while self.occupied + req.size > self.capacity {
                    self.evict_lowest();
                }
                0
            }
        };
        self.size[x as usize] = req.size as u32;
        self.segment[x as usize] = seg as u8;
        self.links.push_head(&mut self.segments[seg], x, req.size);
        self.occupied += req.size;
    }

    fn remove(&mut self, obj: u32) -> bool {
        let s = self.segment[obj as usize];
        if s == NOWHERE {
            return false;
        }
        let size = u64::from(self.size[obj as usize]);
        self.links.unlink(&mut self.segments[s as usize], obj, size);
        self.segment[obj as usize] = NOWHERE;
        self.occupied -= size;
        true
    }
}

//! Belady's MIN, as libCacheSim's `Belady.c`: evict the object whose next request is
//! farthest in the future (objects never requested again first).
//!
//! The priority queue is a binary max-heap on the next-access time as a `double`, with the
//! same sift rules as libCacheSim's `dataStructure/pqueue.c` (a node moves only past a
//! strictly smaller priority; between equal children the left one is taken). Objects that
//! are never requested again all have the same priority, and which of them goes first
//! changes byte-mode results, so the heap's tie order is part of the policy. In object mode
//! it does not matter: any dead object is as good as another. In byte mode this is
//! libCacheSim's Belady (size-unaware: it minimises misses only for unit sizes), not its
//! sampled `BeladySize`.
//!
//! State per object: 4 bytes of heap position, 8 of priority, 4 of size.

use crate::policy::Policy;
use crate::trace::Req;

const NOT_IN_HEAP: u32 = u32::MAX;

/// Belady's MIN.
#[derive(Debug)]
pub struct Belady {
    capacity: u64,
    occupied: u64,
    /// 1-based heap of objects (slot 0 unused).
    heap: Vec<u32>,
    pos: Vec<u32>,
    pri: Vec<f64>,
    size: Vec<u32>,
}

impl Belady {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Belady {
            capacity,
            occupied: 0,
            heap: vec![NOT_IN_HEAP],
            pos: vec![NOT_IN_HEAP; n_objects],
            pri: vec![0.0; n_objects],
            size: vec![0; n_objects],
        }
    }

    #[inline]
    fn set(&mut self, i: usize, x: u32) {
        self.heap[i] = x;
        self.pos[x as usize] = i as u32;
    }

    fn bubble_up(&mut self, mut i: usize) {
        let x = self.heap[i];
        let p = self.pri[x as usize];
        while i > 1 && self.pri[self.heap[i / 2] as usize] < p {
            let parent = self.heap[i / 2];
            self.set(i, parent);
            i /= 2;
        }
        self.set(i, x);
    }

    fn max_child(&self, i: usize) -> Option<usize> {
        let l = 2 * i;
        if l >= self.heap.len() {
            return None;
        }
        if l + 1 < self.heap.len()
            && self.pri[self.heap[l] as usize] < self.pri[self.heap[l + 1] as usize]
        {
            return Some(l + 1);
        }
        Some(l)
    }

    fn percolate_down(&mut self, mut i: usize) {
        let x = self.heap[i];
        let p = self.pri[x as usize];
        while let Some(c) = self.max_child(i) {
            // Priorities are never NaN, so "not below" is "at least".
            if p >= self.pri[self.heap[c] as usize] {
                break;
            }
            let child = self.heap[c];
            self.set(i, child);
            i = c;
        }
        self.set(i, x);
    }

    fn take(&mut self, x: u32) {
        let i = self.pos[x as usize] as usize;
        let last = self.heap.pop().expect("a resident object is in the heap");
        self.pos[x as usize] = NOT_IN_HEAP;
        if i < self.heap.len() {
            self.set(i, last);
            // libCacheSim's pqueue_remove: bubble up if the removed priority is below the
            // moved one, else percolate down.
            if self.pri[x as usize] < self.pri[last as usize] {
                self.bubble_up(i);
            } else {
                self.percolate_down(i);
            }
        }
        self.occupied -= u64::from(self.size[x as usize]);
    }
}

#[inline]
fn priority(next_access: i64) -> f64 {
    next_access as f64
}

impl Policy for Belady {
    fn grow(&mut self, n_objects: usize) {
        self.pos.resize(n_objects, NOT_IN_HEAP);
        self.pri.resize(n_objects, 0.0);
        self.size.resize(n_objects, 0);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj as usize;
        let i = self.pos[x];
        if i == NOT_IN_HEAP {
            return false;
        }
        let old = self.pri[x];
        let new = priority(req.next_access);
        self.pri[x] = new;
        if old < new {
            self.bubble_up(i as usize);
        } else {
            self.percolate_down(i as usize);
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
        let top = self.heap[1];
        // pqueue_pop: the last node replaces the root and percolates down.
        let last = self
            .heap
            .pop()
            .expect("evict is only called on a non-empty cache");
        self.pos[top as usize] = NOT_IN_HEAP;
        if self.heap.len() > 1 {
            self.set(1, last);
            self.percolate_down(1);
        }
        self.occupied -= u64::from(self.size[top as usize]);
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.pri[x as usize] = priority(req.next_access);
        self.size[x as usize] = req.size as u32;
        self.heap.push(x);
        self.pos[x as usize] = (self.heap.len() - 1) as u32;
        self.bubble_up(self.heap.len() - 1);
        self.occupied += req.size;
    }

    fn remove(&mut self, obj: u32) -> bool {
        if self.pos[obj as usize] == NOT_IN_HEAP {
            return false;
        }
        self.take(obj);
        true
    }
}

//! CLOCK with an n-bit counter, as libCacheSim's `Clock.c` (`init-freq=0`): a FIFO queue;
//! a hit increments the object's counter up to 2ⁿ − 1; to evict, take the oldest: if its
//! counter is positive, decrement it and move it to the head, else evict it.
//!
//! State per object: 8 bytes of links, 4 of size, 4 of counter, 1 resident flag.

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::trace::Req;

/// CLOCK (`bits = 1`: libCacheSim's `Clock`; `bits = 2`: `Clock2bit`).
#[derive(Debug)]
pub struct Clock {
    capacity: u64,
    max_freq: u32,
    links: Links,
    queue: Queue,
    resident: Vec<bool>,
    freq: Vec<u32>,
    size: Vec<u32>,
}

impl Clock {
    /// An empty cache of `capacity` for objects `0..n_objects`, with `bits`-bit counters.
    pub fn new(capacity: u64, n_objects: usize, bits: u32) -> Self {
        Clock {
            capacity,
            max_freq: (1u32 << bits.clamp(1, 31)) - 1,
            links: Links::new(n_objects),
            queue: Queue::default(),
            resident: vec![false; n_objects],
            freq: vec![0; n_objects],
            size: vec![0; n_objects],
        }
    }
}

impl Policy for Clock {
    fn grow(&mut self, n_objects: usize) {
        self.resident.resize(n_objects, false);
        self.freq.resize(n_objects, 0);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj as usize;
        if self.resident[x] {
            if self.freq[x] < self.max_freq {
                self.freq[x] += 1;
            }
            true
        } else {
            false
        }
    }

    #[inline]
    fn occupied(&self) -> u64 {
        self.queue.bytes
    }

    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    #[inline]
    fn evict(&mut self, _req: &Req) {
        let mut x = self.queue.tail;
        while self.freq[x as usize] >= 1 {
            self.freq[x as usize] -= 1;
            self.links.move_to_head(&mut self.queue, x);
            x = self.queue.tail;
        }
        self.links
            .unlink(&mut self.queue, x, u64::from(self.size[x as usize]));
        self.resident[x as usize] = false;
    }

    #[inline]
    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.size[x as usize] = req.size as u32;
        self.resident[x as usize] = true;
        self.freq[x as usize] = 0;
        self.links.push_head(&mut self.queue, x, req.size);
    }

    fn remove(&mut self, obj: u32) -> bool {
        if !self.resident[obj as usize] {
            return false;
        }
        self.links
            .unlink(&mut self.queue, obj, u64::from(self.size[obj as usize]));
        self.resident[obj as usize] = false;
        true
    }
}

//! LRU, as libCacheSim's `LRU.c`: a hit moves the object to the head; evict the tail.
//!
//! State per object: 8 bytes of links, 1 resident flag, and 4 of size unless every size is
//! 1 (object mode: see `sizes.rs`).

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::sizes::Sizes;
use crate::trace::Req;

/// Least recently used.
#[derive(Debug)]
pub struct Lru {
    capacity: u64,
    links: Links,
    queue: Queue,
    resident: Vec<bool>,
    size: Sizes,
}

impl Lru {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Lru {
            capacity,
            links: Links::new(n_objects),
            queue: Queue::default(),
            resident: vec![false; n_objects],
            size: Sizes::new(n_objects),
        }
    }
}

impl Policy for Lru {
    fn grow(&mut self, n_objects: usize) {
        self.resident.resize(n_objects, false);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        if self.resident[req.obj as usize] {
            self.links.move_to_head(&mut self.queue, req.obj);
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
        let x = self.queue.tail;
        self.links
            .unlink(&mut self.queue, x, u64::from(self.size[x as usize]));
        self.resident[x as usize] = false;
    }

    #[inline]
    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.size.set(x as usize, req.size as u32);
        self.resident[x as usize] = true;
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

//! SIEVE, as libCacheSim's `Sieve.c`: new objects go to the head; a hit sets `visited`;
//! the hand walks from the tail toward the head clearing visited bits and evicts the first
//! unvisited object, then rests on that object's neighbour toward the head (wrapping to
//! the tail past the head).
//!
//! State per object: 8 bytes of links, 1 visited bit, 1 resident flag, and
//! 4 of size unless every size is 1 (object mode: see `sizes.rs`).

use crate::list::{Links, Queue, NIL};
use crate::policy::Policy;
use crate::sizes::Sizes;
use crate::trace::Req;

/// SIEVE.
#[derive(Debug)]
pub struct Sieve {
    capacity: u64,
    links: Links,
    queue: Queue,
    hand: u32,
    resident: Vec<bool>,
    visited: Vec<bool>,
    size: Sizes,
}

impl Sieve {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Sieve {
            capacity,
            links: Links::new(n_objects),
            queue: Queue::default(),
            hand: NIL,
            resident: vec![false; n_objects],
            visited: vec![false; n_objects],
            size: Sizes::new(n_objects),
        }
    }

    fn unlink(&mut self, x: u32) {
        if self.hand == x {
            self.hand = self.links.prev(x);
        }
        self.links
            .unlink(&mut self.queue, x, u64::from(self.size[x as usize]));
        self.resident[x as usize] = false;
    }
}

impl Policy for Sieve {
    fn grow(&mut self, n_objects: usize) {
        self.resident.resize(n_objects, false);
        self.visited.resize(n_objects, false);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj as usize;
        if self.resident[x] {
            self.visited[x] = true;
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
        let mut x = if self.hand == NIL {
            self.queue.tail
        } else {
            self.hand
        };
        while self.visited[x as usize] {
            self.visited[x as usize] = false;
            let p = self.links.prev(x);
            x = if p == NIL { self.queue.tail } else { p };
        }
        self.hand = self.links.prev(x);
        self.links
            .unlink(&mut self.queue, x, u64::from(self.size[x as usize]));
        self.resident[x as usize] = false;
    }

    #[inline]
    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.size.set(x as usize, req.size as u32);
        self.resident[x as usize] = true;
        self.visited[x as usize] = false;
        self.links.push_head(&mut self.queue, x, req.size);
    }

    fn remove(&mut self, obj: u32) -> bool {
        if !self.resident[obj as usize] {
            return false;
        }
        self.unlink(obj);
        true
    }
}

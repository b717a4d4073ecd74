//! S3-FIFO, as libCacheSim's current `S3FIFO.c` (not its older `S3FIFOv0.c`).
//!
//! A small FIFO (`small_size_ratio` of the cache), a main FIFO (the rest) and a ghost FIFO
//! of evicted ids (`ghost_size_ratio` of the cache, sized like the objects it remembers).
//! A hit increments the object's counter (no limit). A miss that was in the ghost goes to
//! main; other misses go to small — or straight to main while nothing has been evicted yet
//! and small is full. Evicting: from main if main is over its share or small is empty,
//! else from small. Small's oldest object moves to main (counter reset) if it was hit at
//! least `move_to_main_threshold` times, else it is evicted into the ghost; this repeats
//! until one object is evicted. Main's oldest object with a positive counter is reinserted
//! with `min(counter, 3) − 1`; the first with 0 is evicted.
//!
//! Upstream quirks kept: an object exactly as large as the small FIFO passes the insert
//! check (evictions happen) but is then not inserted; promotions to main ignore main's
//! share (main can overfill until the next eviction drains it).
//!
//! State per object: 8 bytes of queue links, 8 of ghost links, 4 of counter, 1 of place,
//! 1 ghost flag, and 4 of size and 4 of ghost size unless every size is 1 (object mode:
//! see `sizes.rs`).

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::sizes::Sizes;
use crate::trace::Req;

const NOWHERE: u8 = 0;
const SMALL: u8 = 1;
const MAIN: u8 = 2;

/// S3-FIFO.
#[derive(Debug)]
pub struct S3Fifo {
    capacity: u64,
    small_capacity: u64,
    main_capacity: u64,
    ghost_capacity: u64,
    threshold: u32,
    links: Links,
    small: Queue,
    main: Queue,
    ghost_links: Links,
    ghost: Queue,
    has_evicted: bool,
    hit_on_ghost: bool,
    place: Vec<u8>,
    in_ghost: Vec<bool>,
    freq: Vec<u32>,
    size: Sizes,
    ghost_size: Sizes,
}

impl S3Fifo {
    /// An empty cache; `None` when the small or main FIFO would get no space (libCacheSim
    /// stops with an error then).
    pub fn new(
        capacity: u64,
        n_objects: usize,
        small_size_ratio: f64,
        ghost_size_ratio: f64,
        move_to_main_threshold: u32,
    ) -> Option<Self> {
        // (int64_t)(cache_size * ratio), as S3FIFO_init computes them.
        let small_capacity = (capacity as f64 * small_size_ratio) as i64;
        let main_capacity = capacity as i64 - small_capacity;
        let ghost_capacity = (capacity as f64 * ghost_size_ratio) as i64;
        if small_capacity <= 0 || main_capacity <= 0 {
            return None;
        }
        Some(S3Fifo {
            capacity,
            small_capacity: small_capacity as u64,
            main_capacity: main_capacity as u64,
            ghost_capacity: ghost_capacity.max(0) as u64,
            threshold: move_to_main_threshold,
            links: Links::new(n_objects),
            small: Queue::default(),
            main: Queue::default(),
            ghost_links: Links::new(n_objects),
            ghost: Queue::default(),
            has_evicted: false,
            hit_on_ghost: false,
            place: vec![NOWHERE; n_objects],
            in_ghost: vec![false; n_objects],
            freq: vec![0; n_objects],
            size: Sizes::new(n_objects),
            ghost_size: Sizes::new(n_objects),
        })
    }

    fn insert_main(&mut self, x: u32, size: u64) {
        self.place[x as usize] = MAIN;
        self.freq[x as usize] = 0;
        self.size.set(x as usize, size as u32);
        self.links.push_head(&mut self.main, x, size);
    }

    fn insert_small(&mut self, x: u32, size: u64) {
        self.place[x as usize] = SMALL;
        self.freq[x as usize] = 0;
        self.size.set(x as usize, size as u32);
        self.links.push_head(&mut self.small, x, size);
    }

    /// The ghost FIFO's `get` of an evicted id: a FIFO cache lookup and insertion.
    fn ghost_get(&mut self, x: u32, size: u64) {
        if self.ghost_capacity == 0 || self.in_ghost[x as usize] || size > self.ghost_capacity {
            return;
        }
        while self.ghost.bytes + size > self.ghost_capacity {
            let t = self.ghost.tail;
            self.ghost_links
                .unlink(&mut self.ghost, t, u64::from(self.ghost_size[t as usize]));
            self.in_ghost[t as usize] = false;
        }
        self.in_ghost[x as usize] = true;
        self.ghost_size.set(x as usize, size as u32);
        self.ghost_links.push_head(&mut self.ghost, x, size);
    }

    fn evict_small(&mut self) {
        let mut evicted = false;
        while !evicted && self.small.bytes > 0 {
            let x = self.small.tail;
            let size = u64::from(self.size[x as usize]);
            self.links.unlink(&mut self.small, x, size);
            self.place[x as usize] = NOWHERE;
            if self.freq[x as usize] >= self.threshold {
                self.insert_main(x, size);
            } else {
                self.ghost_get(x, size);
                evicted = true;
            }
        }
    }

    fn evict_main(&mut self) {
        let mut evicted = false;
        while !evicted && self.main.bytes > 0 {
            let x = self.main.tail;
            let f = self.freq[x as usize];
            if f >= 1 {
                self.links.move_to_head(&mut self.main, x);
                self.freq[x as usize] = f.min(3) - 1;
            } else {
                let size = u64::from(self.size[x as usize]);
                self.links.unlink(&mut self.main, x, size);
                self.place[x as usize] = NOWHERE;
                evicted = true;
            }
        }
    }
}

impl Policy for S3Fifo {
    fn grow(&mut self, n_objects: usize) {
        self.place.resize(n_objects, NOWHERE);
        self.in_ghost.resize(n_objects, false);
        self.freq.resize(n_objects, 0);
        self.size.resize(n_objects, 0);
        self.ghost_size.resize(n_objects, 0);
        self.links.grow(n_objects);
        self.ghost_links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj as usize;
        self.hit_on_ghost = false;
        if self.place[x] == SMALL {
            self.freq[x] += 1;
            return true;
        }
        if self.in_ghost[x] {
            self.in_ghost[x] = false;
            self.ghost_links
                .unlink(&mut self.ghost, req.obj, u64::from(self.ghost_size[x]));
            self.hit_on_ghost = true;
        }
        if self.place[x] == MAIN {
            self.freq[x] += 1;
            return true;
        }
        false
    }

    fn can_insert(&mut self, req: &Req) -> bool {
        req.size <= self.small_capacity && req.size <= self.capacity
    }

    #[inline]
    fn occupied(&self) -> u64 {
        self.small.bytes + self.main.bytes
    }

    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, _req: &Req) {
        self.has_evicted = true;
        if self.main.bytes > self.main_capacity || self.small.bytes == 0 {
            self.evict_main();
        } else {
            self.evict_small();
        }
    }

    fn insert(&mut self, req: &Req) {
        if self.hit_on_ghost {
            self.hit_on_ghost = false;
            self.insert_main(req.obj, req.size);
        } else if req.size >= self.small_capacity {
            // Upstream returns without inserting.
        } else if !self.has_evicted && self.small.bytes >= self.small_capacity {
            self.insert_main(req.obj, req.size);
        } else {
            self.insert_small(req.obj, req.size);
        }
    }

    fn remove(&mut self, obj: u32) -> bool {
        let x = obj as usize;
        let size = u64::from(self.size[x]);
        match self.place[x] {
            SMALL => self.links.unlink(&mut self.small, obj, size),
            MAIN => self.links.unlink(&mut self.main, obj, size),
            _ => {
                if self.in_ghost[x] {
                    self.in_ghost[x] = false;
                    self.ghost_links
                        .unlink(&mut self.ghost, obj, u64::from(self.ghost_size[x]));
                    return true;
                }
                return false;
            }
        }
        self.place[x] = NOWHERE;
        true
    }
}

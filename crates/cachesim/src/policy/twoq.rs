//! 2Q (Johnson & Shasha, VLDB'94), as libCacheSim's `TwoQ.c`: Ain (a FIFO, `Ain = 0.25`
//! of the cache) takes new objects; objects evicted from Ain are remembered in Aout (a
//! FIFO of ids, `Aout = 0.5` of the cache); a miss remembered in Aout goes to Am (an LRU,
//! the rest of the cache). Hits in Ain change nothing. Evict from Am while Ain is within
//! its share, else from Ain. An insertion into Am is a full lookup of the Am LRU at its own
//! capacity, as upstream does it (`Am->get`), so Am evicts its own tail when it overflows.
//!
//! State per object: 16 bytes of links, 8 of sizes, 2 flags.

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::trace::Req;

const NOWHERE: u8 = 0;
const AIN: u8 = 1;
const AM: u8 = 2;

/// 2Q.
#[derive(Debug)]
pub struct TwoQ {
    capacity: u64,
    ain_capacity: u64,
    aout_capacity: u64,
    am_capacity: u64,
    links: Links,
    ain: Queue,
    am: Queue,
    aout_links: Links,
    aout: Queue,
    hit_on_ghost: bool,
    place: Vec<u8>,
    in_aout: Vec<bool>,
    size: Vec<u32>,
    aout_size: Vec<u32>,
}

impl TwoQ {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize, ain_ratio: f64, aout_ratio: f64) -> Self {
        let ain_capacity = (capacity as f64 * ain_ratio) as u64;
        TwoQ {
            capacity,
            ain_capacity,
            aout_capacity: (capacity as f64 * aout_ratio) as u64,
            am_capacity: capacity - ain_capacity.min(capacity),
            links: Links::new(n_objects),
            ain: Queue::default(),
            am: Queue::default(),
            aout_links: Links::new(n_objects),
            aout: Queue::default(),
            hit_on_ghost: false,
            place: vec![NOWHERE; n_objects],
            in_aout: vec![false; n_objects],
            size: vec![0; n_objects],
            aout_size: vec![0; n_objects],
        }
    }

    fn evict_am(&mut self) {
        let t = self.am.tail;
        self.links
            .unlink(&mut self.am, t, u64::from(self.size[t as usize]));
        self.place[t as usize] = NOWHERE;
    }

    /// Aout's FIFO `get` of an id evicted from Ain.
    fn aout_get(&mut self, x: u32, size: u64) {
        if self.in_aout[x as usize] || size > self.aout_capacity {
            return;
        }
        while self.aout.bytes + size > self.aout_capacity {
            let t = self.aout.tail;
            self.aout_links
                .unlink(&mut self.aout, t, u64::from(self.aout_size[t as usize]));
            self.in_aout[t as usize] = false;
        }
        self.in_aout[x as usize] = true;
        self.aout_size[x as usize] = size as u32;
        self.aout_links.push_head(&mut self.aout, x, size);
    }
}

impl Policy for TwoQ {
    fn grow(&mut self, n_objects: usize) {
        self.place.resize(n_objects, NOWHERE);
        self.in_aout.resize(n_objects, false);
        self.size.resize(n_objects, 0);
        self.aout_size.resize(n_objects, 0);
        self.links.grow(n_objects);
        self.aout_links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj as usize;
        self.hit_on_ghost = false;
        if self.place[x] == AIN {
            return true;
        }
        if self.in_aout[x] {
            self.in_aout[x] = false;
            self.aout_links
                .unlink(&mut self.aout, req.obj, u64::from(self.aout_size[x]));
            self.hit_on_ghost = true;
        }
        if self.place[x] == AM {
            self.links.move_to_head(&mut self.am, req.obj);
            return true;
        }
        false
    }

    fn can_insert(&mut self, req: &Req) -> bool {
        req.size <= self.ain_capacity && req.size <= self.capacity
    }

    #[inline]
    fn occupied(&self) -> u64 {
        self.ain.bytes + self.am.bytes
    }

    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, _req: &Req) {
        if self.am.bytes > 0 && self.ain.bytes <= self.ain_capacity {
            self.evict_am();
        } else {
            let t = self.ain.tail;
            let size = u64::from(self.size[t as usize]);
            self.aout_get(t, size);
            self.links.unlink(&mut self.ain, t, size);
            self.place[t as usize] = NOWHERE;
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        if self.hit_on_ghost {
            self.hit_on_ghost = false;
            // Am->get: an LRU miss at Am's own capacity.
            if req.size > self.am_capacity {
                return;
            }
            while self.am.bytes + req.size > self.am_capacity {
                self.evict_am();
            }
            self.place[x as usize] = AM;
            self.size[x as usize] = req.size as u32;
            self.links.push_head(&mut self.am, x, req.size);
        } else {
            self.place[x as usize] = AIN;
            self.size[x as usize] = req.size as u32;
            self.links.push_head(&mut self.ain, x, req.size);
        }
    }

    fn remove(&mut self, obj: u32) -> bool {
        let x = obj as usize;
        let size = u64::from(self.size[x]);
        match self.place[x] {
            AIN => self.links.unlink(&mut self.ain, obj, size),
            AM => self.links.unlink(&mut self.am, obj, size),
            _ => {
                if self.in_aout[x] {
                    self.in_aout[x] = false;
                    self.aout_links
                        .unlink(&mut self.aout, obj, u64::from(self.aout_size[x]));
                }
                return false;
            }
        }
        self.place[x] = NOWHERE;
        true
    }
}

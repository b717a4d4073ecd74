//! ARC (Megiddo & Modha, FAST'03), as libCacheSim's `ARC.c`.
//!
//! T1/T2 hold resident objects seen once/more than once, B1/B2 their ghosts; `p` is T1's
//! target size. Upstream details kept: `p` moves by `max(|B2|/|B1|, 1)` (or the reverse)
//! per ghost hit, in the cache's unit — so in byte mode it moves by about one *byte*, not
//! one object; sizes are bytes in byte mode; a ghost hit is a miss whose object enters T2.
//!
//! State per object: 8 bytes of links, 1 of list id, and 4 of size unless every size is
//! 1 (object mode: see `sizes.rs`).

use crate::list::{Links, Queue};
use crate::policy::Policy;
use crate::sizes::Sizes;
use crate::trace::Req;

const NONE: u8 = 0;
const T1: u8 = 1;
const T2: u8 = 2;
const B1: u8 = 3;
const B2: u8 = 4;

/// Adaptive replacement cache.
#[derive(Debug)]
pub struct Arc {
    capacity: u64,
    links: Links,
    t1: Queue,
    t2: Queue,
    b1: Queue,
    b2: Queue,
    p: f64,
    n_req: u64,
    in_b1: bool,
    in_b2: bool,
    vtime_last_req_in_ghost: u64,
    list: Vec<u8>,
    size: Sizes,
}

impl Arc {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        Arc {
            capacity,
            links: Links::new(n_objects),
            t1: Queue::default(),
            t2: Queue::default(),
            b1: Queue::default(),
            b2: Queue::default(),
            p: 0.0,
            n_req: 0,
            in_b1: false,
            in_b2: false,
            vtime_last_req_in_ghost: u64::MAX,
            list: vec![NONE; n_objects],
            size: Sizes::new(n_objects),
        }
    }

    fn queue(&mut self, id: u8) -> &mut Queue {
        match id {
            T1 => &mut self.t1,
            T2 => &mut self.t2,
            B1 => &mut self.b1,
            _ => &mut self.b2,
        }
    }

    /// Moves `x` from its list to the head of `to` (`NONE`: forgets it).
    fn relink(&mut self, x: u32, to: u8) {
        let from = self.list[x as usize];
        let size = u64::from(self.size[x as usize]);
        if from != NONE {
            let mut q = *self.queue(from);
            self.links.unlink(&mut q, x, size);
            *self.queue(from) = q;
        }
        if to != NONE {
            let mut q = *self.queue(to);
            self.links.push_head(&mut q, x, size);
            *self.queue(to) = q;
        }
        self.list[x as usize] = to;
    }

    fn ghost_hit_now(&self) -> bool {
        self.vtime_last_req_in_ghost == self.n_req && (self.in_b1 || self.in_b2)
    }

    /// The paper's REPLACE.
    fn replace(&mut self) {
        let l1 = self.t1.bytes as f64;
        let cond1 = self.t1.bytes > 0;
        let cond2 = l1 > self.p;
        let cond3 = l1 == self.p && self.in_b2;
        let cond4 = self.t2.bytes == 0;
        if (cond1 && (cond2 || cond3)) || cond4 {
            let x = self.t1.tail;
            self.relink(x, B1);
        } else {
            let x = self.t2.tail;
            self.relink(x, B2);
        }
    }

    /// Case IV of the paper: a miss in all four lists.
    fn evict_miss_on_all_queues(&mut self, incoming: u64) {
        if self.t1.bytes + self.b1.bytes + incoming > self.capacity {
            if self.b1.bytes > 0 {
                let x = self.b1.tail;
                self.relink(x, NONE);
                self.replace();
            } else {
                let x = self.t1.tail;
                self.relink(x, NONE);
            }
        } else {
            if self.t1.bytes + self.b1.bytes + self.t2.bytes + self.b2.bytes >= 2 * self.capacity
                && self.b2.bytes > 0
            {
                let x = self.b2.tail;
                self.relink(x, NONE);
            }
            self.replace();
        }
    }
}

impl Policy for Arc {
    fn grow(&mut self, n_objects: usize) {
        self.list.resize(n_objects, NONE);
        self.size.resize(n_objects, 0);
        self.links.grow(n_objects);
    }

    #[inline]
    fn lookup(&mut self, req: &Req) -> bool {
        self.n_req += 1;
        let x = req.obj;
        let l = self.list[x as usize];
        if l == NONE {
            return false;
        }
        self.in_b1 = false;
        self.in_b2 = false;
        match l {
            T1 => {
                self.relink(x, T2);
                true
            }
            T2 => {
                self.links.move_to_head(&mut self.t2, x);
                true
            }
            _ => {
                self.vtime_last_req_in_ghost = self.n_req;
                let (b1, b2) = (self.b1.bytes as f64, self.b2.bytes as f64);
                if l == B1 {
                    self.in_b1 = true;
                    let delta = (b2 / b1).max(1.0);
                    self.p = (self.p + delta).min(self.capacity as f64);
                } else {
                    self.in_b2 = true;
                    let delta = (b1 / b2).max(1.0);
                    self.p = (self.p - delta).max(0.0);
                }
                self.relink(x, NONE);
                false
            }
        }
    }

    #[inline]
    fn occupied(&self) -> u64 {
        self.t1.bytes + self.t2.bytes
    }

    #[inline]
    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, req: &Req) {
        if self.ghost_hit_now() {
            self.replace();
        } else {
            self.evict_miss_on_all_queues(req.size);
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        self.size.set(x as usize, req.size as u32);
        if self.ghost_hit_now() {
            self.relink(x, T2);
            self.in_b1 = false;
            self.in_b2 = false;
            self.vtime_last_req_in_ghost = u64::MAX;
        } else {
            self.relink(x, T1);
        }
    }

    fn remove(&mut self, obj: u32) -> bool {
        if self.list[obj as usize] == NONE {
            return false;
        }
        let resident = matches!(self.list[obj as usize], T1 | T2);
        self.relink(obj, NONE);
        resident
    }
}

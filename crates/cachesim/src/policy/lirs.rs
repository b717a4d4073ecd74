//! LIRS (Jiang & Zhang, SIGMETRICS'02), as libCacheSim's `LIRS.c`.
//!
//! Three LRU stacks: S (LIR objects and recently seen HIR objects, resident or not), Q
//! (resident HIR objects, 1% of the cache, at least 1) and NH (non-resident HIR objects
//! still in S). Upstream's order of operations is followed step by step, including its
//! bookkeeping quirks: the bottom of S is demoted as if it were LIR; a hit on a HIR object
//! only in Q first makes room in the LIR budget; S is bounded to twice the cache by
//! dropping NH's oldest entries after every request.
//!
//! State per object: 24 bytes of links (S, Q, NH), 12 of sizes, 5 flags.

use crate::list::{Links, Queue, NIL};
use crate::policy::Policy;
use crate::trace::Req;

/// Low inter-reference recency set.
#[derive(Debug)]
pub struct Lirs {
    capacity: u64,
    lirs_limit: i64,
    hirs_limit: i64,
    lirs_count: i64,
    hirs_count: i64,
    occupied: i64,
    s_links: Links,
    s: Queue,
    q_links: Links,
    q: Queue,
    nh_links: Links,
    nh: Queue,
    in_s: Vec<bool>,
    is_lir: Vec<bool>,
    s_resident: Vec<bool>,
    in_q: Vec<bool>,
    in_nh: Vec<bool>,
    s_size: Vec<u32>,
    q_size: Vec<u32>,
    nh_size: Vec<u32>,
}

impl Lirs {
    /// An empty cache of `capacity` for objects `0..n_objects`.
    pub fn new(capacity: u64, n_objects: usize) -> Self {
        // hirs_limit = MAX(1, (uint64_t)(0.01 * cache_size)), as LIRS_init.
        let hirs_limit = ((0.01 * capacity as f64) as u64).max(1);
        Lirs {
            capacity,
            lirs_limit: capacity as i64 - hirs_limit as i64,
            hirs_limit: hirs_limit as i64,
            lirs_count: 0,
            hirs_count: 0,
            occupied: 0,
            s_links: Links::new(n_objects),
            s: Queue::default(),
            q_links: Links::new(n_objects),
            q: Queue::default(),
            nh_links: Links::new(n_objects),
            nh: Queue::default(),
            in_s: vec![false; n_objects],
            is_lir: vec![false; n_objects],
            s_resident: vec![false; n_objects],
            in_q: vec![false; n_objects],
            in_nh: vec![false; n_objects],
            s_size: vec![0; n_objects],
            q_size: vec![0; n_objects],
            nh_size: vec![0; n_objects],
        }
    }

    fn s_insert(&mut self, x: u32, size: u64, lir: bool) {
        if self.in_s[x as usize] {
            self.s_remove(x);
        }
        self.in_s[x as usize] = true;
        self.is_lir[x as usize] = lir;
        self.s_resident[x as usize] = true;
        self.s_size[x as usize] = size as u32;
        self.s_links.push_head(&mut self.s, x, size);
    }

    fn s_remove(&mut self, x: u32) {
        self.s_links
            .unlink(&mut self.s, x, u64::from(self.s_size[x as usize]));
        self.in_s[x as usize] = false;
    }

    fn q_insert(&mut self, x: u32, size: u64) {
        if self.in_q[x as usize] {
            self.q_remove(x);
        }
        self.in_q[x as usize] = true;
        self.q_size[x as usize] = size as u32;
        self.q_links.push_head(&mut self.q, x, size);
    }

    fn q_remove(&mut self, x: u32) {
        self.q_links
            .unlink(&mut self.q, x, u64::from(self.q_size[x as usize]));
        self.in_q[x as usize] = false;
    }

    fn nh_insert(&mut self, x: u32, size: u64) {
        if self.in_nh[x as usize] {
            self.nh_remove(x);
        }
        self.in_nh[x as usize] = true;
        self.nh_size[x as usize] = size as u32;
        self.nh_links.push_head(&mut self.nh, x, size);
    }

    fn nh_remove(&mut self, x: u32) -> bool {
        if !self.in_nh[x as usize] {
            return false;
        }
        self.nh_links
            .unlink(&mut self.nh, x, u64::from(self.nh_size[x as usize]));
        self.in_nh[x as usize] = false;
        true
    }

    /// Drops HIR entries from the bottom of S until a LIR object is there.
    fn prune(&mut self) {
        while self.s.tail != self.s.head {
            let t = self.s.tail;
            if self.is_lir[t as usize] {
                break;
            }
            if !self.s_resident[t as usize] {
                self.nh_remove(t);
            }
            self.s_remove(t);
        }
    }

    /// Demotes the bottom of S to Q (upstream's `evictLIR`).
    fn evict_lir(&mut self) {
        let v = self.s.tail;
        if v == NIL {
            return;
        }
        let size = i64::from(self.s_size[v as usize]);
        self.lirs_count -= size;
        self.s_remove(v);
        self.occupied -= size;
        if size <= self.hirs_limit {
            while self.hirs_count + size > self.hirs_limit && self.q.tail != NIL {
                self.evict_hir();
            }
            self.q_insert(v, size as u64);
            self.hirs_count += size;
            self.occupied += size;
        }
        self.prune();
    }

    /// Evicts Q's oldest resident HIR object (upstream's `evictHIR`).
    fn evict_hir(&mut self) {
        let v = self.q.tail;
        if v == NIL {
            return;
        }
        let size = i64::from(self.q_size[v as usize]);
        self.hirs_count -= size;
        self.q_remove(v);
        if self.in_s[v as usize] {
            self.s_resident[v as usize] = false;
            self.nh_insert(v, size as u64);
        }
        self.occupied -= size;
    }

    /// Is `x` a non-resident HIR object still in S?
    fn non_resident_in_s(&self, x: usize) -> bool {
        self.in_s[x] && !self.is_lir[x] && !self.s_resident[x]
    }
}

impl Policy for Lirs {
    fn grow(&mut self, n_objects: usize) {
        self.in_s.resize(n_objects, false);
        self.is_lir.resize(n_objects, false);
        self.s_resident.resize(n_objects, false);
        self.in_q.resize(n_objects, false);
        self.in_nh.resize(n_objects, false);
        self.s_size.resize(n_objects, 0);
        self.q_size.resize(n_objects, 0);
        self.nh_size.resize(n_objects, 0);
        self.s_links.grow(n_objects);
        self.q_links.grow(n_objects);
        self.nh_links.grow(n_objects);
    }

    fn lookup(&mut self, req: &Req) -> bool {
        let x = req.obj;
        let xi = x as usize;
        if self.in_s[xi] {
            self.s_links.move_to_head(&mut self.s, x);
        }
        if self.in_q[xi] {
            self.q_links.move_to_head(&mut self.q, x);
        }
        if self.in_s[xi] {
            if self.is_lir[xi] {
                self.prune();
                true
            } else if self.s_resident[xi] {
                // A resident HIR object in S becomes LIR (upstream's hit_RD_HIRinS).
                if self.in_q[xi] {
                    let size = i64::from(self.q_size[xi]);
                    self.hirs_count -= size;
                    self.q_remove(x);
                    self.occupied -= size;
                }
                let size = i64::from(self.s_size[xi]);
                while self.lirs_count + size > self.lirs_limit && self.s.tail != NIL {
                    self.evict_lir();
                }
                self.is_lir[xi] = true;
                self.lirs_count += size;
                self.occupied += size;
                true
            } else {
                false
            }
        } else if self.in_q[xi] {
            // A resident HIR object only in Q goes back into S (upstream's hit_RD_HIRinQ).
            let size = i64::from(self.q_size[xi]);
            while self.lirs_count + size > self.lirs_limit && self.s.tail != NIL {
                self.evict_lir();
            }
            self.s_insert(x, size as u64, false);
            true
        } else {
            false
        }
    }

    fn can_insert(&mut self, req: &Req) -> bool {
        if req.size > self.capacity {
            return false;
        }
        let x = req.obj as usize;
        let size = req.size as i64;
        if self.non_resident_in_s(x) {
            let s_size = i64::from(self.s_size[x]);
            while self.lirs_count + s_size > self.lirs_limit && self.s.tail != NIL {
                self.evict_lir();
            }
            self.nh_remove(req.obj);
            return true;
        }
        if !self.in_s[x] && !self.in_q[x] {
            if size > self.lirs_limit || size > self.hirs_limit {
                return false;
            }
            if self.lirs_count + size > self.lirs_limit && self.hirs_count + size > self.hirs_limit
            {
                while self.hirs_count + size > self.hirs_limit && self.q.tail != NIL {
                    self.evict_hir();
                }
            }
            return true;
        }
        false
    }

    fn occupied(&self) -> u64 {
        self.occupied.max(0) as u64
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn evict(&mut self, req: &Req) {
        let x = req.obj as usize;
        let size = req.size as i64;
        if self.non_resident_in_s(x) {
            while self.hirs_count >= self.hirs_limit && self.q.tail != NIL {
                self.evict_hir();
            }
            self.evict_lir();
        } else if !self.in_s[x]
            && !self.in_q[x]
            && self.lirs_count + size > self.lirs_limit
            && self.hirs_count + size > self.hirs_limit
        {
            self.evict_hir();
        }
    }

    fn insert(&mut self, req: &Req) {
        let x = req.obj;
        let xi = x as usize;
        if self.non_resident_in_s(xi) {
            self.is_lir[xi] = true;
            self.s_resident[xi] = true;
            let size = i64::from(self.s_size[xi]);
            self.lirs_count += size;
            self.occupied += size;
        } else if !self.in_s[xi] && !self.in_q[xi] {
            let size = req.size as i64;
            if self.lirs_count + size <= self.lirs_limit {
                self.s_insert(x, req.size, true);
                self.lirs_count += size;
            } else {
                self.s_insert(x, req.size, false);
                self.q_insert(x, req.size);
                self.hirs_count += size;
            }
            self.occupied += size;
        }
    }

    fn end_access(&mut self) {
        // Upstream's limitStack: S holds at most twice the cache.
        while self.s.bytes > 2 * self.capacity {
            let v = self.nh.tail;
            if v == NIL {
                break;
            }
            if self.in_s[v as usize] {
                self.s_remove(v);
            }
            self.nh_remove(v);
        }
    }

    fn remove(&mut self, obj: u32) -> bool {
        let x = obj as usize;
        let mut resident = false;
        if self.in_s[x] {
            let size = i64::from(self.s_size[x]);
            if self.is_lir[x] {
                self.lirs_count -= size;
                self.occupied -= size;
                resident = true;
            }
            self.s_remove(obj);
            self.nh_remove(obj);
        }
        if self.in_q[x] {
            let size = i64::from(self.q_size[x]);
            self.hirs_count -= size;
            self.occupied -= size;
            self.q_remove(obj);
            resident = true;
        }
        self.prune();
        resident
    }
}

//! Intrusive doubly linked queues over dense object indices.
//!
//! Every policy keeps its per-object links in two `Vec<u32>` indexed by the object's dense
//! index, so moving an object costs a few array writes and nothing is allocated per
//! request. A [`Queue`] is a head, a tail, a length and a byte count; several queues can
//! share one [`Links`] as long as an object is in at most one of them at a time.
//!
//! Orientation follows libCacheSim's `cacheObj.h`: the head is the most recently inserted
//! end, the tail the oldest; `prev` points toward the head.

/// No object.
pub(crate) const NIL: u32 = u32::MAX;

/// One queue: its ends, object count and bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Queue {
    /// Newest object (or [`NIL`]).
    pub head: u32,
    /// Oldest object (or [`NIL`]).
    pub tail: u32,
    /// Objects in the queue.
    pub len: u64,
    /// Sum of the sizes the queue was given for its objects.
    pub bytes: u64,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            head: NIL,
            tail: NIL,
            len: 0,
            bytes: 0,
        }
    }
}

impl Queue {
    /// True when the queue holds no object.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// The `prev`/`next` links of every object, indexed by dense object index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl Links {
    /// Links for `n` objects, none in any queue.
    pub fn new(n: usize) -> Self {
        Links {
            prev: vec![NIL; n],
            next: vec![NIL; n],
        }
    }

    /// Makes room for objects `0..n` (never shrinks).
    pub fn grow(&mut self, n: usize) {
        if n > self.prev.len() {
            self.prev.resize(n, NIL);
            self.next.resize(n, NIL);
        }
    }

    /// The neighbour of `x` toward the head.
    #[inline]
    pub fn prev(&self, x: u32) -> u32 {
        self.prev[x as usize]
    }

    /// The neighbour of `x` toward the tail.
    #[cfg(test)]
    pub fn next(&self, x: u32) -> u32 {
        self.next[x as usize]
    }

    /// Puts `x` (in no queue of these links) at the head of `q`.
    #[inline]
    pub fn push_head(&mut self, q: &mut Queue, x: u32, size: u64) {
        self.prev[x as usize] = NIL;
        self.next[x as usize] = q.head;
        if q.head != NIL {
            self.prev[q.head as usize] = x;
        } else {
            q.tail = x;
        }
        q.head = x;
        q.len += 1;
        q.bytes += size;
    }

    /// Puts `x` (in no queue of these links) at the tail of `q`.
    #[inline]
    pub fn push_tail(&mut self, q: &mut Queue, x: u32, size: u64) {
        self.next[x as usize] = NIL;
        self.prev[x as usize] = q.tail;
        if q.tail != NIL {
            self.next[q.tail as usize] = x;
        } else {
            q.head = x;
        }
        q.tail = x;
        q.len += 1;
        q.bytes += size;
    }

    /// Takes `x` out of `q`.
    #[inline]
    pub fn unlink(&mut self, q: &mut Queue, x: u32, size: u64) {
        let p = self.prev[x as usize];
        let n = self.next[x as usize];
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            q.head = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            q.tail = p;
        }
        self.prev[x as usize] = NIL;
        self.next[x as usize] = NIL;
        q.len -= 1;
        q.bytes -= size;
    }

    /// Moves `x` (in `q`) to the head of `q`.
    #[inline]
    pub fn move_to_head(&mut self, q: &mut Queue, x: u32) {
        if q.head == x {
            return;
        }
        let p = self.prev[x as usize];
        let n = self.next[x as usize];
        // x is not the head, so p is an object.
        self.next[p as usize] = n;
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            q.tail = p;
        }
        self.prev[x as usize] = NIL;
        self.next[x as usize] = q.head;
        self.prev[q.head as usize] = x;
        q.head = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(l: &Links, q: &Queue) -> Vec<u32> {
        let mut v = Vec::new();
        let mut x = q.head;
        while x != NIL {
            v.push(x);
            x = l.next(x);
        }
        let mut back = Vec::new();
        let mut x = q.tail;
        while x != NIL {
            back.push(x);
            x = l.prev(x);
        }
        back.reverse();
        assert_eq!(v, back, "forward and backward walks agree");
        v
    }

    #[test]
    fn push_move_unlink_keep_both_directions_consistent() {
        let mut l = Links::new(5);
        let mut q = Queue::default();
        for x in 0..4 {
            l.push_head(&mut q, x, 10);
        }
        assert_eq!(order(&l, &q), [3, 2, 1, 0]);
        l.move_to_head(&mut q, 0);
        assert_eq!(order(&l, &q), [0, 3, 2, 1]);
        l.move_to_head(&mut q, 2);
        assert_eq!(order(&l, &q), [2, 0, 3, 1]);
        l.unlink(&mut q, 1, 10);
        l.unlink(&mut q, 2, 10);
        assert_eq!(order(&l, &q), [0, 3]);
        l.push_tail(&mut q, 4, 5);
        assert_eq!(order(&l, &q), [0, 3, 4]);
        assert_eq!((q.len, q.bytes), (3, 25));
    }
}

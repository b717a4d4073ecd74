//! Exact LRU stack distances in O(log k) per request and memory O(k) for k distinct keys.
//!
//! The stack distance of a request is the number of distinct other keys requested since
//! the previous request to the same key (Mattson et al., 1970): a request hits in an LRU
//! cache of `c` objects exactly when its distance is below `c`. Each key marks the
//! position of its last request in a Fenwick tree, so the distance is the number of marks
//! after that position. Positions would grow with the requests; instead, when they run
//! out, the live marks (one per key) are renumbered in order and the tree is rebuilt — at
//! most once every k requests, so the cost per request stays O(log k).

/// No position: the key has not been requested.
pub const NONE: u32 = u32::MAX;

/// Exact stack distances of a stream of keys numbered `0..k` (dense slots). The caller
/// keeps each key's position (a `u32`, [`NONE`] before its first request) beside its other
/// per-key state, so a request touches one record per key; see [`StackDistance::access`].
#[derive(Clone, Debug, Default)]
pub struct StackDistance {
    /// Fenwick tree (1-based) over positions: 1 where a key's last request is.
    tree: Vec<u32>,
    /// The key whose last request is at each position ([`NONE`] if none).
    owner: Vec<u32>,
    /// The next free position.
    next: u32,
    /// Keys requested so far (marks in the tree).
    live: u32,
}

impl StackDistance {
    /// Records a request to key `slot`, whose position is `*pos` ([`NONE`] before its
    /// first request; updated here). Returns the stack distance, `None` for the first
    /// request to the key (a cold miss: infinite distance). When positions run out they
    /// are renumbered: `renumber(slot, new_pos)` is called for every requested key, and
    /// must store `new_pos` where that key's position is kept (`*pos` is then reread).
    #[inline]
    pub fn access(
        &mut self,
        slot: u32,
        pos: &mut u32,
        renumber: impl FnMut(u32, u32),
    ) -> Option<u64> {
        if self.next as usize >= self.owner.len() {
            if let Some(new) = self.compact(slot, renumber) {
                *pos = new;
            }
        }
        let prev = *pos;
        let distance = if prev == NONE {
            self.live += 1;
            None
        } else {
            let upto = self.prefix(prev);
            self.add(prev, false);
            self.owner[prev as usize] = NONE;
            Some(u64::from(self.live - upto))
        };
        let at = self.next;
        self.next += 1;
        self.add(at, true);
        self.owner[at as usize] = slot;
        *pos = at;
        distance
    }

    /// Keys requested so far.
    pub fn live(&self) -> u64 {
        u64::from(self.live)
    }

    /// The distance a request now to the key whose last request is at position `pos`
    /// would have: the keys requested since (0: it was the last one requested).
    #[inline]
    pub fn depth(&self, pos: u32) -> u64 {
        u64::from(self.live - self.prefix(pos))
    }

    /// The key (slot) at distance `depth` (0: the last one requested); `depth` must be
    /// below [`StackDistance::live`].
    pub fn key_at_depth(&self, depth: u64) -> u32 {
        debug_assert!(
            depth < u64::from(self.live),
            "depth {depth} of {} keys",
            self.live
        );
        // The (live − depth)-th mark from the oldest: the last position whose prefix of
        // marks is below it, plus one.
        let mut rank = self.live - depth as u32;
        let mut pos = 0usize;
        let mut bit = (self.tree.len() - 1).next_power_of_two();
        while bit > 0 {
            let next = pos + bit;
            if next < self.tree.len() && self.tree[next] < rank {
                pos = next;
                rank -= self.tree[next];
            }
            bit >>= 1;
        }
        self.owner[pos]
    }

    /// Heap bytes held (the tree and the owner of each position: both O(keys)).
    pub fn heap_bytes(&self) -> usize {
        (self.tree.capacity() + self.owner.capacity()) * 4
    }

    /// Marks at positions `0..=pos`.
    #[inline]
    fn prefix(&self, pos: u32) -> u32 {
        let mut i = pos as usize + 1;
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i &= i - 1;
        }
        sum
    }

    #[inline]
    fn add(&mut self, pos: u32, mark: bool) {
        let mut i = pos as usize + 1;
        while i < self.tree.len() {
            if mark {
                self.tree[i] += 1;
            } else {
                self.tree[i] -= 1;
            }
            i += i & i.wrapping_neg();
        }
    }

    /// Renumbers the live marks `0..live` in order, in a tree with room for three times as
    /// many more (so renumbering, O(k), comes at most once every 3k requests);
    /// returns the new position of `slot`, if it has one.
    fn compact(&mut self, slot: u32, mut renumber: impl FnMut(u32, u32)) -> Option<u32> {
        let cap = (4 * self.live as usize).max(4096);
        let mut owner = vec![NONE; cap];
        let mut n = 0;
        let mut mine = None;
        for &s in &self.owner[..self.next as usize] {
            if s != NONE {
                owner[n] = s;
                renumber(s, n as u32);
                if s == slot {
                    mine = Some(n as u32);
                }
                n += 1;
            }
        }
        debug_assert_eq!(n, self.live as usize, "one mark per requested key");
        self.rebuild(owner, n);
        mine
    }

    /// Forgets the keys `keep` refuses and renames the others, for a caller that samples
    /// keys and lowers its sampling rate: `keep(slot)` returns the key's new slot, or
    /// `None` to drop it (its mark leaves the stack, so later distances no longer count
    /// it). The kept marks are renumbered in order as when positions run out, and
    /// `renumber(new_slot, new_pos)` is called for every kept key.
    pub fn retain(
        &mut self,
        mut keep: impl FnMut(u32) -> Option<u32>,
        mut renumber: impl FnMut(u32, u32),
    ) {
        let mut kept = Vec::with_capacity(self.live as usize);
        for &s in &self.owner[..self.next as usize] {
            if s != NONE {
                if let Some(new) = keep(s) {
                    kept.push(new);
                }
            }
        }
        let n = kept.len();
        let cap = (4 * n).max(4096);
        kept.resize(cap, NONE);
        for (p, &s) in kept[..n].iter().enumerate() {
            renumber(s, p as u32);
        }
        self.live = n as u32;
        self.rebuild(kept, n);
    }

    /// Installs `owner` (marks at positions `0..n`, room after them) and builds the tree.
    fn rebuild(&mut self, owner: Vec<u32>, n: usize) {
        let cap = owner.len();
        // Linear Fenwick build over ones at positions 0..n.
        let mut tree = vec![0u32; cap + 1];
        for i in 1..=cap {
            if i <= n {
                tree[i] += 1;
            }
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                tree[j] += tree[i];
            }
        }
        self.tree = tree;
        self.owner = owner;
        self.next = n as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_of_a_small_stream() {
        let mut s = StackDistance::default();
        let mut pos = [NONE; 3];
        let got: Vec<_> = [0u32, 1, 0, 0, 2, 1, 0]
            .iter()
            .map(|&k| {
                let mut p = pos[k as usize];
                let d = s.access(k, &mut p, |_, _| unreachable!("no renumbering this early"));
                pos[k as usize] = p;
                d
            })
            .collect();
        assert_eq!(
            got,
            vec![None, None, Some(1), Some(0), None, Some(2), Some(2)]
        );
    }

    #[test]
    fn retained_keys_keep_their_order_and_dropped_ones_no_longer_count() {
        // Keys 0..4 requested in order; drop 1 and 3, rename 0, 2, 4 to 0, 1, 2.
        let mut s = StackDistance::default();
        let mut pos = [NONE; 5];
        for k in 0..5u32 {
            let mut p = pos[k as usize];
            assert_eq!(
                s.access(k, &mut p, |_, _| unreachable!("no renumbering")),
                None
            );
            pos[k as usize] = p;
        }
        let mut new_pos = [NONE; 3];
        s.retain(
            |k| (k % 2 == 0).then_some(k / 2),
            |k, p| new_pos[k as usize] = p,
        );
        assert_eq!(s.live(), 3);
        // Old key 0 (now 0): only old keys 2 and 4 were requested since.
        let mut p = new_pos[0];
        assert_eq!(s.access(0, &mut p, |_, _| {}), Some(2));
        assert_eq!(s.key_at_depth(0), 0);
        assert_eq!(s.key_at_depth(2), 1);
    }
}

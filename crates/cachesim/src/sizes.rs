//! Each object's size as a policy recorded it, stored only when some size is not 1.
//!
//! In object mode every request has size 1 ([`crate::Mode::Object`]), so a `Vec<u32>` of
//! sizes per policy would hold nothing but ones: 4 bytes an object in every simulator
//! (40 bytes an object for ten simulations at once, 400 MB at 10⁷ objects). [`Sizes`]
//! holds no array until a size other than 1 is set.

use std::ops::Index;

/// The size every object has while [`Sizes`] holds no array.
const ONE: u32 = 1;

/// Per-object sizes, indexed by dense object index: reads as 1 everywhere until a size
/// other than 1 is set, then an array (objects never set read as 1, as before; policies
/// read only the sizes of objects they hold).
#[derive(Clone, Debug)]
pub(crate) struct Sizes {
    /// Empty while every size is 1.
    vals: Vec<u32>,
    /// Objects `0..n` have a size.
    n: usize,
}

impl Sizes {
    /// Sizes for objects `0..n`, all 1.
    pub fn new(n: usize) -> Self {
        Sizes {
            vals: Vec::new(),
            n,
        }
    }

    /// Makes room for objects `0..n` (never shrinks); `_fill` is ignored (new objects
    /// read as 1), kept so the call reads as `Vec::resize`.
    pub fn resize(&mut self, n: usize, _fill: u32) {
        if n > self.n {
            self.n = n;
            if !self.vals.is_empty() {
                self.vals.resize(n, ONE);
            }
        }
    }

    /// Sets object `x`'s size.
    #[inline]
    pub fn set(&mut self, x: usize, size: u32) {
        if self.vals.is_empty() {
            if size == ONE {
                return;
            }
            self.vals = vec![ONE; self.n];
        }
        self.vals[x] = size;
    }
}

impl Index<usize> for Sizes {
    type Output = u32;

    #[inline]
    fn index(&self, x: usize) -> &u32 {
        if self.vals.is_empty() {
            debug_assert!(x < self.n, "object {x} of {}", self.n);
            &ONE
        } else {
            &self.vals[x]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_take_no_array_and_other_sizes_do() {
        let mut s = Sizes::new(3);
        s.set(1, 1);
        assert!(s.vals.is_empty());
        assert_eq!(s[2], 1);
        s.resize(5, 0);
        s.set(4, 700);
        assert_eq!((s[1], s[4], s.vals.len()), (1, 700, 5));
        s.resize(6, 0);
        assert_eq!(s[5], 1);
    }
}

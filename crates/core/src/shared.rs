//! [`SharedBytes`]: a range of a buffer that many requests share.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A range of a read-only buffer shared by many requests — e.g. a workload's pool of
/// pre-filled random bytes — so that a write's value is named, not copied.
///
/// The buffer handle survives [`SharedBytes::clear`], and [`SharedBytes::set`] only
/// clones the `Arc` when given a different buffer: a client that keeps drawing values
/// from one pool touches no reference count per request (and so shares no cache line
/// with other threads).
#[derive(Clone, Default)]
pub struct SharedBytes {
    buf: Option<Arc<[u8]>>,
    start: usize,
    len: usize,
}

impl SharedBytes {
    /// Empty, with no buffer.
    pub fn new() -> SharedBytes {
        SharedBytes::default()
    }

    /// Makes this the bytes `range` of `buf`.
    ///
    /// # Panics
    ///
    /// When `range` does not lie within `buf`.
    #[inline]
    pub fn set(&mut self, buf: &Arc<[u8]>, range: Range<usize>) {
        assert!(
            range.start <= range.end && range.end <= buf.len(),
            "shared range {range:?} outside a buffer of {} bytes",
            buf.len()
        );
        if !self.buf.as_ref().is_some_and(|b| Arc::ptr_eq(b, buf)) {
            self.buf = Some(Arc::clone(buf));
        }
        self.start = range.start;
        self.len = range.end - range.start;
    }

    /// Empties the range, keeping the buffer handle for the next [`SharedBytes::set`].
    #[inline]
    pub fn clear(&mut self) {
        self.start = 0;
        self.len = 0;
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match &self.buf {
            Some(b) => &b[self.start..self.start + self.len],
            None => &[],
        }
    }

    /// The number of bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the range is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} shared bytes>", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_of_one_buffer_reuse_the_handle() {
        let pool: Arc<[u8]> = Arc::from(&b"abcdefgh"[..]);
        let mut v = SharedBytes::new();
        assert_eq!(v.as_slice(), b"");
        v.set(&pool, 2..5);
        assert_eq!((v.as_slice(), v.len()), (&b"cde"[..], 3));
        assert_eq!(Arc::strong_count(&pool), 2);
        v.clear();
        assert!(v.is_empty() && v.as_slice().is_empty());
        v.set(&pool, 0..8);
        assert_eq!(
            Arc::strong_count(&pool),
            2,
            "the same buffer is not cloned again"
        );
        let other: Arc<[u8]> = Arc::from(&b"xyz"[..]);
        v.set(&other, 1..3);
        assert_eq!(v.as_slice(), b"yz");
        assert_eq!(Arc::strong_count(&pool), 1);
    }

    #[test]
    #[should_panic(expected = "outside a buffer of 3 bytes")]
    fn a_range_past_the_end_panics() {
        let pool: Arc<[u8]> = Arc::from(&b"abc"[..]);
        SharedBytes::new().set(&pool, 1..4);
    }
}

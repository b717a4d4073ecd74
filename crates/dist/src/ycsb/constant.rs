//! YCSB's `ConstantIntegerGenerator`.

/// Always the same value (YCSB `ConstantIntegerGenerator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constant {
    pub(super) value: u64,
}

impl Constant {
    /// A generator that always returns `value`.
    pub fn new(value: u64) -> Constant {
        Constant { value }
    }

    /// The value.
    #[inline]
    pub fn next(&self) -> u64 {
        self.value
    }
}

//! What a request writes ([`Value`]) and what it reads ([`ReadFields`]).
//!
//! A write's value is one thing: named fields (YCSB's records) or one opaque blob
//! (memtier, cache and trace workloads), the blob owned or a range of a shared buffer.
//! A read says which fields it wants: all of them, some by name, or the value as one
//! blob. Both keep their buffers when they change shape, so a client that fills one
//! request over and over allocates nothing once warm.

use std::ops::Range;
use std::sync::Arc;

use crate::record::Record;
use crate::shared::SharedBytes;

/// What a write (insert, update, the write of a read-modify-write) writes.
///
/// Read it with [`Value::get`] — one `match` over [`ValueRef`] — and fill it with
/// [`Value::fields_mut`], [`Value::blob_mut`], [`Value::set_blob`] or
/// [`Value::set_shared`].
#[derive(Clone, Debug, Default)]
pub struct Value {
    shape: Shape,
    /// The fields are every field of the record: an update may replace it whole.
    whole: bool,
    fields: Record,
    blob: Vec<u8>,
    shared: SharedBytes,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Shape {
    #[default]
    Fields,
    Blob,
    Shared,
}

/// A [`Value`] as stores see it.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'a> {
    /// Named fields: stored in the YCSB field encoding ([`Record::encode_into`]), or as
    /// a hash's fields by stores that have them.
    Fields(&'a Record),
    /// One opaque value, stored verbatim.
    Blob(&'a [u8]),
}

impl Value {
    /// An empty fields value.
    pub fn new() -> Value {
        Value::default()
    }

    /// The value as stores see it.
    #[inline]
    pub fn get(&self) -> ValueRef<'_> {
        match self.shape {
            Shape::Fields => ValueRef::Fields(&self.fields),
            Shape::Blob => ValueRef::Blob(&self.blob),
            Shape::Shared => ValueRef::Blob(self.shared.as_slice()),
        }
    }

    /// True for a blob (owned or shared).
    #[inline]
    pub fn is_blob(&self) -> bool {
        self.shape != Shape::Fields
    }

    /// True when a fields value holds every field of its record (YCSB's
    /// `writeallfields`, or a one-field record): an update may then replace the stored
    /// record instead of merging into it. Always false for a blob.
    #[inline]
    pub fn is_whole(&self) -> bool {
        self.whole && self.shape == Shape::Fields
    }

    /// Says whether the fields are every field of the record ([`Value::is_whole`]).
    #[inline]
    pub fn set_whole(&mut self, whole: bool) {
        self.whole = whole;
    }

    /// The fields of a fields value; empty for a blob.
    #[inline]
    pub fn fields(&self) -> &Record {
        static EMPTY: Record = Record::new();
        match self.shape {
            Shape::Fields => &self.fields,
            _ => &EMPTY,
        }
    }

    /// The bytes of a blob; empty for a fields value.
    #[inline]
    pub fn blob(&self) -> &[u8] {
        match self.get() {
            ValueRef::Blob(b) => b,
            ValueRef::Fields(_) => b"",
        }
    }

    /// Makes this a fields value and returns its fields to fill (emptied if it was a
    /// blob).
    #[inline]
    pub fn fields_mut(&mut self) -> &mut Record {
        if self.shape != Shape::Fields {
            self.shape = Shape::Fields;
            self.fields.clear();
        }
        &mut self.fields
    }

    /// Makes this an owned blob and returns its bytes to fill (emptied if it was not
    /// one).
    #[inline]
    pub fn blob_mut(&mut self) -> &mut Vec<u8> {
        if self.shape != Shape::Blob {
            self.shape = Shape::Blob;
            self.blob.clear();
        }
        &mut self.blob
    }

    /// Makes this an owned blob holding a copy of `bytes`.
    #[inline]
    pub fn set_blob(&mut self, bytes: &[u8]) {
        let blob = self.blob_mut();
        blob.clear();
        blob.extend_from_slice(bytes);
    }

    /// Makes this a blob naming `range` of the shared `buf` (no copy; see
    /// [`SharedBytes::set`]).
    #[inline]
    pub fn set_shared(&mut self, buf: &Arc<[u8]>, range: Range<usize>) {
        self.shape = Shape::Shared;
        self.shared.set(buf, range);
    }

    /// Empties the value and makes it an empty fields value, keeping every buffer.
    #[inline]
    pub fn clear(&mut self) {
        self.shape = Shape::Fields;
        self.whole = false;
        self.fields.clear();
        self.blob.clear();
        self.shared.clear();
    }

    /// The size the client asks to write, in bytes: the fields' names and values, or
    /// the blob's length.
    #[inline]
    pub fn size_bytes(&self) -> usize {
        match self.get() {
            ValueRef::Fields(r) => r.size_bytes(),
            ValueRef::Blob(b) => b.len(),
        }
    }

    /// Appends the single value a key-value engine stores: a blob's bytes verbatim, or
    /// the fields in the YCSB field encoding ([`Record::encode_into`]).
    #[inline]
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self.get() {
            ValueRef::Fields(r) => r.encode_into(out),
            ValueRef::Blob(b) => out.extend_from_slice(b),
        }
    }
}

/// What a read (a read, a scan, the read of a read-modify-write) reads.
///
/// Set it with [`ReadFields::set_all`], [`ReadFields::set_blob`] or
/// [`ReadFields::names_mut`]; stores ask [`ReadFields::shape`] and
/// [`ReadFields::names`].
#[derive(Clone, Debug, Default)]
pub struct ReadFields {
    shape: ReadShape,
    names: Record,
    discard: bool,
}

/// The shape of a [`ReadFields`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadShape {
    /// Every field of the record (YCSB `readallfields=true`).
    #[default]
    All,
    /// Only the fields [`ReadFields::names`] names (YCSB `readallfields=false`).
    Named,
    /// The stored value as one opaque blob, returned as a single unnamed field.
    Blob,
}

impl ReadFields {
    /// A read of every field.
    pub fn new() -> ReadFields {
        ReadFields::default()
    }

    /// The shape.
    #[inline]
    pub fn shape(&self) -> ReadShape {
        self.shape
    }

    /// True for a blob read.
    #[inline]
    pub fn is_blob(&self) -> bool {
        self.shape == ReadShape::Blob
    }

    /// Reads every field.
    #[inline]
    pub fn set_all(&mut self) {
        self.shape = ReadShape::All;
    }

    /// Reads the value as one blob.
    #[inline]
    pub fn set_blob(&mut self) {
        self.shape = ReadShape::Blob;
    }

    /// Reads only named fields: returns the (emptied) list of names to fill; push each
    /// name with an empty value.
    #[inline]
    pub fn names_mut(&mut self) -> &mut Record {
        self.shape = ReadShape::Named;
        self.names.clear();
        &mut self.names
    }

    /// The names of a [`ReadShape::Named`] read; `None` for the other shapes.
    #[inline]
    pub fn names(&self) -> Option<&Record> {
        match self.shape {
            ReadShape::Named => Some(&self.names),
            _ => None,
        }
    }

    /// Asks stores to count what the read finds without copying it into the slot's
    /// reply (`true`), or to copy it (`false`, the default): for a source that never
    /// looks at the values it reads. The outcome's bytes are the same either way.
    #[inline]
    pub fn set_discard(&mut self, discard: bool) {
        self.discard = discard;
    }

    /// True when the read's values are counted, not copied into the reply
    /// ([`ReadFields::set_discard`]).
    #[inline]
    pub fn discards(&self) -> bool {
        self.discard
    }

    /// True when the read wants field `name` (every field unless named).
    #[inline]
    pub fn wants(&self, name: &[u8]) -> bool {
        self.names()
            .is_none_or(|names| names.iter().any(|(n, _)| n == name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_fields_or_a_blob_and_keeps_its_buffers() {
        let mut v = Value::new();
        v.fields_mut().push(b"f", b"1");
        assert!(matches!(v.get(), ValueRef::Fields(r) if r.len() == 1));
        assert_eq!(v.size_bytes(), 2);
        v.set_blob(b"abc");
        assert!(v.is_blob() && v.fields().is_empty());
        assert_eq!(v.blob(), b"abc");
        let buf: Arc<[u8]> = Arc::from(&b"0123456789"[..]);
        v.set_shared(&buf, 2..5);
        assert_eq!(v.blob(), b"234");
        let mut out = Vec::new();
        v.encode_into(&mut out);
        assert_eq!(out, b"234");
        // Back to fields: the old fields are gone, the buffer is reused.
        assert!(v.fields_mut().is_empty());
        v.clear();
        assert!(!v.is_blob() && v.size_bytes() == 0);
    }

    #[test]
    fn a_read_wants_every_field_unless_it_names_some() {
        let mut r = ReadFields::new();
        assert!(r.wants(b"x") && r.names().is_none());
        r.names_mut().push(b"a", b"");
        assert!(r.wants(b"a") && !r.wants(b"x"));
        r.set_blob();
        assert!(r.is_blob() && r.names().is_none());
        assert!(r.names_mut().is_empty(), "names_mut empties the old names");
    }
}

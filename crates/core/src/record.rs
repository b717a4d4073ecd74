//! [`Record`]: named fields with byte values in one flat buffer.

use std::fmt;

/// A predicate on field names, selecting the fields a partial read keeps.
pub type FieldFilter<'a> = &'a dyn Fn(&[u8]) -> bool;

/// Where one field's name and value lie inside a [`Record`]'s buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpan {
    name_start: u32,
    name_len: u32,
    value_start: u32,
    value_len: u32,
}

/// A record: an ordered list of `(field name, value)` pairs.
///
/// All bytes live in one buffer that is cleared, not freed, between uses, so a worker
/// that reuses its records does not allocate per operation once the buffers have grown
/// to the workload's record size.
///
/// The single-value encoding ([`Record::encode_into`] / [`Record::decode_from`]) is the
/// one kvlab writes to engines that store one value per key (RocksDB, LMDB, …): for
/// every field, a 4-byte big-endian name length, the name, a 4-byte big-endian value
/// length, the value — the same layout YCSB's RocksDB binding uses, so a database loaded
/// by one tool can be read by the other.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Record {
    buf: Vec<u8>,
    spans: Vec<FieldSpan>,
}

/// A stored value that is not a valid single-value record encoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corrupt record encoding at byte {offset}: {what}")]
pub struct RecordDecodeError {
    /// Byte offset in the encoded value where decoding failed.
    pub offset: usize,
    /// What was expected there.
    pub what: &'static str,
}

impl Record {
    /// An empty record.
    pub const fn new() -> Record {
        Record {
            buf: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// Removes every field, keeping the allocated capacity.
    #[inline]
    pub fn clear(&mut self) {
        self.buf.clear();
        self.spans.clear();
    }

    /// The number of fields.
    #[inline]
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when the record has no fields.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Total bytes of names and values.
    #[inline]
    pub fn size_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Total bytes of the values alone.
    pub fn value_bytes(&self) -> usize {
        self.spans.iter().map(|s| s.value_len as usize).sum()
    }

    /// Appends a field.
    #[inline]
    pub fn push(&mut self, name: &[u8], value: &[u8]) {
        let name_start = self.buf.len() as u32;
        self.buf.extend_from_slice(name);
        let value_start = self.buf.len() as u32;
        self.buf.extend_from_slice(value);
        self.spans.push(FieldSpan {
            name_start,
            name_len: name.len() as u32,
            value_start,
            value_len: value.len() as u32,
        });
    }

    /// Appends a field whose value is written in place by `fill`, which receives a
    /// zeroed slice of `value_len` bytes. Used by value generators to avoid a copy.
    pub fn push_with(&mut self, name: &[u8], value_len: usize, fill: impl FnOnce(&mut [u8])) {
        let name_start = self.buf.len() as u32;
        self.buf.extend_from_slice(name);
        let value_start = self.buf.len();
        self.buf.resize(value_start + value_len, 0);
        fill(&mut self.buf[value_start..]);
        self.spans.push(FieldSpan {
            name_start,
            name_len: name.len() as u32,
            value_start: value_start as u32,
            value_len: value_len as u32,
        });
    }

    /// The `i`-th field as `(name, value)`.
    #[inline]
    pub fn field(&self, i: usize) -> (&[u8], &[u8]) {
        let s = self.spans[i];
        (
            &self.buf[s.name_start as usize..(s.name_start + s.name_len) as usize],
            &self.buf[s.value_start as usize..(s.value_start + s.value_len) as usize],
        )
    }

    /// The value of the field called `name`, if present (the last one wins).
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// The fields in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], &[u8])> + ExactSizeIterator + '_ {
        (0..self.spans.len()).map(move |i| self.field(i))
    }

    /// Replaces the fields named in `update` and appends those not present yet — the
    /// read-merge-write step of an update on a store that keeps one value per key.
    pub fn merge_from(&mut self, update: &Record) {
        let mut merged = Record::new();
        for (name, value) in self.iter() {
            match update.get(name) {
                Some(v) => merged.push(name, v),
                None => merged.push(name, value),
            }
        }
        for (name, value) in update.iter() {
            if self.get(name).is_none() {
                merged.push(name, value);
            }
        }
        *self = merged;
    }

    /// The length of [`Record::encode_into`]'s output.
    pub fn encoded_len(&self) -> usize {
        self.buf.len() + 8 * self.spans.len()
    }

    /// Appends the single-value encoding of this record to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        for (name, value) in self.iter() {
            out.extend_from_slice(&(name.len() as u32).to_be_bytes());
            out.extend_from_slice(name);
            out.extend_from_slice(&(value.len() as u32).to_be_bytes());
            out.extend_from_slice(value);
        }
    }

    /// Replaces this record's fields with those decoded from `encoded`. When `only` is
    /// given, keeps just the fields whose names it contains (a partial read).
    pub fn decode_from(
        &mut self,
        encoded: &[u8],
        only: Option<FieldFilter<'_>>,
    ) -> Result<(), RecordDecodeError> {
        self.clear();
        walk_encoded(encoded, |name, value| {
            if only.is_none_or(|keep| keep(name)) {
                self.push(name, value);
            }
        })
    }

    /// The bytes of the values [`Record::decode_from`] would decode from `encoded` with
    /// the same filter, counted without copying them; the same errors.
    pub fn encoded_value_bytes(
        encoded: &[u8],
        only: Option<FieldFilter<'_>>,
    ) -> Result<usize, RecordDecodeError> {
        let mut bytes = 0;
        walk_encoded(encoded, |name, value| {
            if only.is_none_or(|keep| keep(name)) {
                bytes += value.len();
            }
        })?;
        Ok(bytes)
    }
}

/// Calls `each(name, value)` for every field of a single-value record encoding, in
/// order; fails at the first byte that does not fit the encoding.
#[inline]
fn walk_encoded(
    encoded: &[u8],
    mut each: impl FnMut(&[u8], &[u8]),
) -> Result<(), RecordDecodeError> {
    let mut at = 0usize;
    let take = |at: &mut usize, what: &'static str| -> Result<usize, RecordDecodeError> {
        let bytes = encoded
            .get(*at..*at + 4)
            .ok_or(RecordDecodeError { offset: *at, what })?;
        *at += 4;
        Ok(u32::from_be_bytes(bytes.try_into().expect("slice of 4 bytes")) as usize)
    };
    while at < encoded.len() {
        let name_len = take(&mut at, "a 4-byte field name length")?;
        let name = encoded.get(at..at + name_len).ok_or(RecordDecodeError {
            offset: at,
            what: "field name bytes",
        })?;
        at += name_len;
        let value_len = take(&mut at, "a 4-byte field value length")?;
        let value = encoded.get(at..at + value_len).ok_or(RecordDecodeError {
            offset: at,
            what: "field value bytes",
        })?;
        at += value_len;
        each(name, value);
    }
    Ok(())
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        for (n, v) in self.iter() {
            m.entry(
                &String::from_utf8_lossy(n),
                &format_args!("<{} bytes>", v.len()),
            );
        }
        m.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_and_partial_read() {
        let mut r = Record::new();
        r.push(b"field0", b"hello");
        r.push_with(b"field1", 3, |v| v.copy_from_slice(b"abc"));
        r.push(b"f2", b"");
        let mut enc = Vec::new();
        r.encode_into(&mut enc);
        assert_eq!(enc.len(), r.encoded_len());
        assert_eq!(&enc[..4], &6u32.to_be_bytes());
        let mut back = Record::new();
        back.decode_from(&enc, None).unwrap();
        assert_eq!(back, r);
        back.decode_from(&enc, Some(&|n: &[u8]| n == b"field1"))
            .unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back.get(b"field1"), Some(&b"abc"[..]));
    }

    #[test]
    fn decode_rejects_truncated_value() {
        let mut r = Record::new();
        r.push(b"field0", b"hello");
        let mut enc = Vec::new();
        r.encode_into(&mut enc);
        let err = Record::new()
            .decode_from(&enc[..enc.len() - 1], None)
            .unwrap_err();
        assert_eq!(err.what, "field value bytes");
        assert_eq!(err.offset, 14);
    }

    #[test]
    fn merge_replaces_and_appends() {
        let mut r = Record::new();
        r.push(b"a", b"1");
        r.push(b"b", b"2");
        let mut u = Record::new();
        u.push(b"b", b"20");
        u.push(b"c", b"30");
        r.merge_from(&u);
        let got: Vec<_> = r.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), b"1".to_vec()),
                (b"b".to_vec(), b"20".to_vec()),
                (b"c".to_vec(), b"30".to_vec())
            ]
        );
    }
}

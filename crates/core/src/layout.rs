//! How a store that keeps a record as one value lays the record out in it
//! ([`ValueLayout`]).

use crate::record::Record;
use crate::store::{Request, StoreError, StoreErrorKind};
use crate::value::ReadShape;

/// How a record's fields become the one value a server stores (Redis' string model,
/// memcached).
///
/// Records of several fields need the field encoding ([`Record::encode_into`]) to be read
/// back field by field. A workload whose every record is one field does not: stored as
/// that field's bytes alone, the server holds `fieldlength` bytes a record — what
/// redis-benchmark's and memtier_benchmark's `-d` values are, what `GET key` shows in
/// `redis-cli` — and does not spend time on the names and lengths around them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ValueLayout {
    /// Every field in the field encoding ([`Record::encode_into`]).
    #[default]
    Encoded,
    /// Every record is the one field of this name, stored as its value alone and read
    /// back as a record of that field. A record of other fields (which such a workload
    /// does not write) is stored in the field encoding.
    SingleField(Vec<u8>),
}

impl ValueLayout {
    /// The layout for records whose fields are `names`: one field is stored bare, more
    /// (or none) in the field encoding.
    pub fn for_fields<N: AsRef<[u8]>>(names: &[N]) -> ValueLayout {
        match names {
            [one] => ValueLayout::SingleField(one.as_ref().to_vec()),
            _ => ValueLayout::Encoded,
        }
    }

    /// `encoded`, or `single field NAME`: for a store's description.
    pub fn describe(&self) -> String {
        match self {
            ValueLayout::Encoded => "encoded".into(),
            ValueLayout::SingleField(name) => {
                format!("single field {}", String::from_utf8_lossy(name))
            }
        }
    }

    /// The bytes stored for `fields` as they are, when the layout stores it bare: the
    /// record is exactly the layout's one field. `None` when it must be encoded
    /// ([`ValueLayout::encode_into`]).
    #[inline]
    pub fn bare<'a>(&self, fields: &'a Record) -> Option<&'a [u8]> {
        match self {
            ValueLayout::SingleField(name) if fields.len() == 1 => {
                let (n, value) = fields.field(0);
                (n == name.as_slice()).then_some(value)
            }
            _ => None,
        }
    }

    /// The length of what [`ValueLayout::encode_into`] appends for `fields`.
    #[inline]
    pub fn stored_len(&self, fields: &Record) -> usize {
        match self.bare(fields) {
            Some(value) => value.len(),
            None => fields.encoded_len(),
        }
    }

    /// Appends the value stored for `fields`.
    #[inline]
    pub fn encode_into(&self, fields: &Record, out: &mut Vec<u8>) {
        match self.bare(fields) {
            Some(value) => out.extend_from_slice(value),
            None => fields.encode_into(out),
        }
    }

    /// Decodes a stored value for read `req` into `reply`, as [`Request::decode_value`]
    /// does for the field encoding; under [`ValueLayout::SingleField`] the value is that
    /// field's. Returns the bytes of the values read.
    #[inline]
    pub fn decode(
        &self,
        req: &Request,
        stored: &[u8],
        reply: &mut Record,
    ) -> Result<u64, StoreError> {
        let ValueLayout::SingleField(name) = self else {
            return req.decode_value(stored, reply);
        };
        let read = &req.read;
        reply.clear();
        let wanted = match read.shape() {
            ReadShape::Blob => Some(&b""[..]),
            ReadShape::All => Some(name.as_slice()),
            ReadShape::Named => read.wants(name).then_some(name.as_slice()),
        };
        let Some(as_name) = wanted else {
            return Ok(0);
        };
        if !read.discards() {
            reply.push(as_name, stored);
        }
        Ok(stored.len() as u64)
    }

    /// The read-merge-write step of a partial update in this layout: decodes `stored`
    /// into `current`, merges the update's fields into it ([`Record::merge_from`]) and
    /// appends the merged record's stored value to `out`.
    pub fn merge_update(
        &self,
        stored: &[u8],
        update: &Request,
        current: &mut Record,
        out: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        match self {
            ValueLayout::Encoded => current.decode_from(stored, None).map_err(|e| {
                StoreError::new(
                    StoreErrorKind::Corrupt,
                    format!(
                        "update of record `{}`: {e}",
                        String::from_utf8_lossy(&update.key)
                    ),
                )
            })?,
            ValueLayout::SingleField(name) => {
                current.clear();
                current.push(name, stored);
            }
        }
        current.merge_from(update.value.fields());
        out.reserve(self.stored_len(current));
        self.encode_into(current, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::OpKind;

    fn write(fields: &[(&[u8], &[u8])]) -> Request {
        let mut r = Request {
            kind: OpKind::Update,
            key: b"k".to_vec(),
            ..Request::default()
        };
        let f = r.value.fields_mut();
        for (n, v) in fields {
            f.push(n, v);
        }
        r
    }

    #[test]
    fn one_field_is_stored_bare_and_read_back_under_its_name() {
        let layout = ValueLayout::for_fields(&["field0"]);
        let w = write(&[(b"field0", b"abc")]);
        let mut out = Vec::new();
        layout.encode_into(w.value.fields(), &mut out);
        assert_eq!(out, b"abc");
        assert_eq!(layout.stored_len(w.value.fields()), 3);

        let mut read = Request::default();
        let mut reply = Record::new();
        assert_eq!(layout.decode(&read, b"xyz", &mut reply).unwrap(), 3);
        assert_eq!(reply.get(b"field0"), Some(&b"xyz"[..]));
        read.read.names_mut().push(b"other", b"");
        assert_eq!(layout.decode(&read, b"xyz", &mut reply).unwrap(), 0);
        assert!(reply.is_empty());
        read.read.names_mut().push(b"field0", b"");
        read.read.set_discard(true);
        assert_eq!(layout.decode(&read, b"xyz", &mut reply).unwrap(), 3);
        assert!(reply.is_empty(), "a discarding read only counts");
        read.read.set_discard(false);
        read.read.set_blob();
        layout.decode(&read, b"xyz", &mut reply).unwrap();
        assert_eq!(reply.get(b""), Some(&b"xyz"[..]));
    }

    #[test]
    fn other_records_keep_the_field_encoding() {
        let single = ValueLayout::for_fields(&["field0"]);
        assert_eq!(ValueLayout::for_fields(&["a", "b"]), ValueLayout::Encoded);
        for fields in [
            &[(&b"a"[..], &b"1"[..]), (b"b", b"2")][..],
            &[(&b"other"[..], &b"1"[..])][..],
        ] {
            let w = write(fields);
            let (mut bare, mut encoded) = (Vec::new(), Vec::new());
            single.encode_into(w.value.fields(), &mut bare);
            w.value.fields().encode_into(&mut encoded);
            assert_eq!(bare, encoded);
        }
    }

    #[test]
    fn a_partial_update_merges_in_either_layout() {
        let single = ValueLayout::for_fields(&["f"]);
        let (mut current, mut out) = (Record::new(), Vec::new());
        single
            .merge_update(b"old", &write(&[(b"f", b"new")]), &mut current, &mut out)
            .unwrap();
        assert_eq!(out, b"new");

        let mut stored = Vec::new();
        write(&[(b"a", b"1"), (b"b", b"2")])
            .value
            .fields()
            .encode_into(&mut stored);
        out.clear();
        ValueLayout::Encoded
            .merge_update(&stored, &write(&[(b"b", b"3")]), &mut current, &mut out)
            .unwrap();
        current.decode_from(&out, None).unwrap();
        assert_eq!(
            (current.get(b"a"), current.get(b"b")),
            (Some(&b"1"[..]), Some(&b"3"[..]))
        );
        let err = ValueLayout::Encoded
            .merge_update(b"\0\0", &write(&[(b"b", b"3")]), &mut current, &mut out)
            .unwrap_err();
        assert!(err.message.contains("update of record `k`"), "{err}");
    }
}

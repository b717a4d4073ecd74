//! Caffeine's binary key traces: **cache2k** (big-endian `i32` keys back to back) and
//! **scarab** (big-endian `i64` keys), as Caffeine's simulator reads them with Java's
//! `DataInputStream.readInt`/`readLong` (`simulator/.../parser/cache2k`, `.../scarab`).
//! No time and no sizes: the timestamp is the request's position. A negative key keeps
//! its two's-complement bits as the id (`-1i32` → `0xFFFF_FFFF_FFFF_FFFF`).

use crate::input::Input;
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads big-endian integer keys of 4 (cache2k) or 8 (scarab) bytes.
pub struct JavaKeysReader {
    input: Input,
    info: TraceInfo,
    width: usize,
    seq: u64,
}

impl JavaKeysReader {
    /// A cache2k reader (`width` 4) or a scarab reader (`width` 8).
    pub(crate) fn new(input: Input, width: usize) -> JavaKeysReader {
        let format = if width == 4 { "cache2k" } else { "scarab" };
        JavaKeysReader {
            input,
            info: TraceInfo {
                format: format.to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Sequence,
                has_sizes: false,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
            width,
            seq: 0,
        }
    }
}

impl TraceReader for JavaKeysReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        let what = if self.width == 4 {
            "cache2k key"
        } else {
            "scarab key"
        };
        let Some(b) = self.input.record(self.width, what)? else {
            return Ok(false);
        };
        rec.clear();
        rec.id = if self.width == 4 {
            i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])) as u64
        } else {
            let mut a = [0; 8];
            a.copy_from_slice(b);
            u64::from_be_bytes(a)
        };
        rec.op = Op::Get;
        rec.ts = self.seq;
        self.seq += 1;
        Ok(true)
    }
}

//! libCacheSim's *oracleGeneral* binary traces: 24-byte little-endian records `u32
//! clock_time (s), u64 obj_id, u32 obj_size, i64 next_access_vtime` (−1: never again),
//! as `traceReader/customizedReader/oracle/oracleGeneralBin.h` reads them.
//!
//! Every record is kept, including size-0 requests (which libCacheSim's simulator skips
//! by default): a count of this reader equals the file's length / 24.

use crate::input::Input;
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Bytes of one record.
pub const RECORD_BYTES: usize = 24;

/// Reads an oracleGeneral trace.
pub struct OracleGeneralReader {
    input: Input,
    info: TraceInfo,
}

impl OracleGeneralReader {
    pub(crate) fn new(input: Input) -> OracleGeneralReader {
        OracleGeneralReader {
            input,
            info: TraceInfo {
                format: "oracleGeneral".to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Seconds,
                has_sizes: true,
                has_next_access: true,
                has_outcomes: false,
                meta: Vec::new(),
            },
        }
    }
}

impl TraceReader for OracleGeneralReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    #[inline]
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        let Some(b) = self.input.record(RECORD_BYTES, "oracleGeneral record")? else {
            return Ok(false);
        };
        rec.clear();
        rec.ts = u64::from(le_u32(b, 0));
        rec.id = le_u64(b, 4);
        rec.value_size = u64::from(le_u32(b, 12));
        rec.next_access = le_i64(b, 16);
        rec.op = Op::Get;
        Ok(true)
    }
}

/// The little-endian u32 at `at`.
#[inline]
pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The little-endian u16 at `at`.
#[inline]
pub(crate) fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian u64 at `at`.
#[inline]
pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// The little-endian i64 at `at`.
#[inline]
pub(crate) fn le_i64(b: &[u8], at: usize) -> i64 {
    le_u64(b, at) as i64
}

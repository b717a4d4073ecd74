//! Twitter's binary cache traces as libCacheSim reads them (`twrBin`, 20-byte
//! little-endian records): `u32 real_time (s), u64 obj_id, u32 key_size:10 (high bits) |
//! value_size:22 (low bits), u32 op:8 (high bits) | ttl:24 (low bits)`; the op is
//! libCacheSim's `req_op_e`.

use super::lcs::op_from_libcachesim;
use super::oracle_general::{le_u32, le_u64};
use crate::input::Input;
use crate::{KeyEncoding, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads a twr trace.
pub struct TwrReader {
    input: Input,
    info: TraceInfo,
}

impl TwrReader {
    pub(crate) fn new(input: Input) -> TwrReader {
        TwrReader {
            input,
            info: TraceInfo {
                format: "twr".to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Seconds,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
        }
    }
}

impl TraceReader for TwrReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        let Some(b) = self.input.record(20, "twr record")? else {
            return Ok(false);
        };
        rec.clear();
        rec.ts = u64::from(le_u32(b, 0));
        rec.id = le_u64(b, 4);
        let kv = le_u32(b, 12);
        rec.key_size = kv >> 22;
        rec.value_size = u64::from(kv & 0x3f_ffff);
        let op_ttl = le_u32(b, 16);
        rec.op = op_from_libcachesim(op_ttl >> 24);
        rec.ttl_s = op_ttl & 0xff_ffff;
        Ok(true)
    }
}

//! libCacheSim's *lcs* binary traces, versions 1–8 (`traceReader/generalReader/lcs.h`).
//!
//! An 8192-byte header (`u64 start_magic 0x123456789ABCDEF0`, `u64 version`, an 8000-byte
//! statistics block, 21 unused u64, `u64 end_magic`), then little-endian records:
//! v1 `u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime` (oracleGeneral's
//! layout); v2 adds `u32 op:8 | tenant:24` before `next_access_vtime`; v3 is `u32 time,
//! u64 id, i64 size, u32 op:8 | tenant:24, i32 ttl, i64 next`; v4–v8 append 1, 2, 4, 8,
//! 16 u32 features after v3's layout (features are not kept). "Never again" is written as
//! `INT64_MAX` (or −1): both read as −1. The op is libCacheSim's `req_op_e`; the tenant
//! goes to [`TraceRecord::cf`]. The header's statistics (`n_req`, `n_obj`, …) are in
//! [`TraceInfo::meta`].

use super::oracle_general::{le_i64, le_u32, le_u64};
use crate::input::Input;
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// `start_magic` and `end_magic` of the header.
pub const MAGIC: u64 = 0x1234_5678_9abc_def0;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 8192;

/// libCacheSim's `req_op_e` (`include/libCacheSim/enum.h`) as an [`Op`].
pub(crate) fn op_from_libcachesim(code: u32) -> Op {
    match code {
        1 => Op::Get,
        2 => Op::Gets,
        3 => Op::Set,
        4 => Op::Add,
        5 => Op::Cas,
        6 => Op::Replace,
        7 => Op::Append,
        8 => Op::Prepend,
        9 => Op::Delete,
        10 => Op::Incr,
        11 => Op::Decr,
        12 => Op::Read,
        13 => Op::Write,
        14 => Op::Update,
        _ => Op::Other,
    }
}

/// Reads an lcs trace.
pub struct LcsReader {
    input: Input,
    info: TraceInfo,
    version: u64,
    record_bytes: usize,
}

impl LcsReader {
    pub(crate) fn new(mut input: Input) -> Result<LcsReader, TraceError> {
        let header = match input.record(HEADER_BYTES, "lcs header") {
            Ok(Some(h)) => h.to_vec(),
            Ok(None) => {
                return Err(input.corrupt(0, "empty file: an lcs trace has an 8192-byte header"))
            }
            Err(e) => return Err(e),
        };
        if le_u64(&header, 0) != MAGIC {
            return Err(input.corrupt(0, format!("lcs start magic {MAGIC:#x} expected")));
        }
        if le_u64(&header, HEADER_BYTES - 8) != MAGIC {
            return Err(input.corrupt(
                (HEADER_BYTES - 8) as u64,
                format!("lcs end magic {MAGIC:#x} expected"),
            ));
        }
        let version = le_u64(&header, 8);
        let record_bytes = match version {
            1 => 24,
            2 => 28,
            3 => 36,
            4..=8 => 36 + 4 * (1usize << (version - 4)),
            v => return Err(input.corrupt(8, format!("lcs version 1–8 expected, found {v}"))),
        };
        let names = [
            "version",
            "n_req",
            "n_obj",
            "n_req_byte",
            "n_obj_byte",
            "start_ts",
            "end_ts",
            "n_read",
            "n_write",
            "n_delete",
        ];
        let meta = names
            .iter()
            .enumerate()
            .map(|(i, n)| (format!("lcs_{n}"), le_i64(&header, 16 + 8 * i).to_string()))
            .collect();
        Ok(LcsReader {
            input,
            info: TraceInfo {
                format: "lcs".to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Seconds,
                has_sizes: true,
                has_next_access: true,
                has_outcomes: false,
                meta,
            },
            version,
            record_bytes,
        })
    }
}

impl TraceReader for LcsReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    #[inline]
    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        let Some(b) = self.input.record(self.record_bytes, "lcs record")? else {
            return Ok(false);
        };
        rec.clear();
        rec.ts = u64::from(le_u32(b, 0));
        rec.id = le_u64(b, 4);
        rec.op = Op::Get;
        let next = match self.version {
            1 => {
                rec.value_size = u64::from(le_u32(b, 12));
                le_i64(b, 16)
            }
            2 => {
                rec.value_size = u64::from(le_u32(b, 12));
                let op_tenant = le_u32(b, 16);
                rec.op = op_from_libcachesim(op_tenant & 0xff);
                rec.cf = op_tenant >> 8;
                le_i64(b, 20)
            }
            _ => {
                rec.value_size = le_u64(b, 12);
                let op_tenant = le_u32(b, 20);
                rec.op = op_from_libcachesim(op_tenant & 0xff);
                rec.cf = op_tenant >> 8;
                rec.ttl_s = le_u32(b, 24);
                // v4–v8 append their features after v3's layout (`lcs_req_v4 { lcs_req_v3_t
                // base; uint32_t feature; }`), so `next` stays at byte 28.
                le_i64(b, 28)
            }
        };
        rec.next_access = if next == i64::MAX { -1 } else { next };
        Ok(true)
    }
}

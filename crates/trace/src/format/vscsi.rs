//! VMware vscsi block traces as libCacheSim reads them
//! (`traceReader/customizedReader/vscsi.h`): version 1, 32-byte records `u32 sn, u32 len,
//! u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts_us`; version 2, 40-byte records `u16 cmd,
//! u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts_us, u64 rt_us`. The version is
//! `ver >> 8` of the first two records, read as v1 first.
//!
//! Like libCacheSim: the id is the logical block number, the size is `len` bytes, the
//! op is a read for SCSI READ(6/10/12/16) commands and a write for WRITE ones (anything
//! else is [`Op::Other`]). Time stays in µs (libCacheSim divides by 10⁶); a v2 record's
//! response time goes to [`TraceRecord::latency_ns`].

use super::oracle_general::{le_u16, le_u32, le_u64};
use crate::input::Input;
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads a vscsi trace.
pub struct VscsiReader {
    input: Input,
    info: TraceInfo,
    version: u8,
}

/// The vscsi version of a file starting with `head` (1 or 2), if it looks like one.
pub(crate) fn version(head: &[u8]) -> Option<u8> {
    let v1 = |i: usize| {
        head.get(32 * i + 14..32 * i + 16)
            .map(|b| le_u16(b, 0) >> 8)
    };
    let v2 = |i: usize| head.get(40 * i + 2..40 * i + 4).map(|b| le_u16(b, 0) >> 8);
    if v1(0) == Some(1) && v1(1).is_none_or(|v| v == 1) {
        Some(1)
    } else if v2(0) == Some(2) && v2(1).is_none_or(|v| v == 2) {
        Some(2)
    } else {
        None
    }
}

impl VscsiReader {
    pub(crate) fn new(mut input: Input) -> Result<VscsiReader, TraceError> {
        let head = input.peek(80)?;
        if head.is_empty() {
            return Err(input.corrupt(0, "empty file: a vscsi trace has 32- or 40-byte records"));
        }
        let Some(version) = version(head) else {
            return Err(input.corrupt(
                0,
                "not a vscsi trace: `ver >> 8` of the first records is neither 1 nor 2",
            ));
        };
        Ok(VscsiReader {
            input,
            info: TraceInfo {
                format: "vscsi".to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Micros,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: false,
                meta: vec![("vscsi_version".to_string(), version.to_string())],
            },
            version,
        })
    }
}

/// A SCSI command byte as an op.
fn scsi_op(cmd: u16) -> Op {
    match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Op::Read,
        0x0a | 0x2a | 0xaa | 0x8a => Op::Write,
        _ => Op::Other,
    }
}

impl TraceReader for VscsiReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        let n = if self.version == 1 { 32 } else { 40 };
        let Some(b) = self.input.record(n, "vscsi record")? else {
            return Ok(false);
        };
        rec.clear();
        if self.version == 1 {
            rec.value_size = u64::from(le_u32(b, 4));
            rec.op = scsi_op(le_u16(b, 12));
            rec.id = le_u64(b, 16);
            rec.ts = le_u64(b, 24);
        } else {
            rec.op = scsi_op(le_u16(b, 0));
            rec.value_size = u64::from(le_u32(b, 8));
            rec.id = le_u64(b, 16);
            rec.ts = le_u64(b, 24);
            rec.latency_ns = le_u64(b, 32).saturating_mul(1000);
        }
        Ok(true)
    }
}

//! Tencent CBS block traces (SNIA IOTTA), CSV: `Timestamp (s), Offset (sectors), Size
//! (sectors), IOType (0 read, 1 write), VolumeID`. A request stays whole (Caffeine's
//! reader instead splits reads into 512-byte blocks and drops writes): its object is
//! (volume, offset), with id `volume << 40 | offset` (offsets below 2⁴⁰ sectors and
//! volumes below 2²⁴; otherwise the FNV-1a [`crate::key_id`] of the 12 little-endian
//! bytes of both), its size `size × 512` bytes; the volume also goes to
//! [`TraceRecord::cf`].

use crate::input::{parse_u64, split_fields, Input};
use crate::{key_id, KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Bytes in a sector.
const SECTOR_BYTES: u64 = 512;

/// Reads a Tencent CBS trace.
pub struct TencentReader {
    input: Input,
    info: TraceInfo,
}

impl TencentReader {
    pub(crate) fn new(input: Input) -> TencentReader {
        TencentReader {
            input,
            info: TraceInfo {
                format: "tencent".to_string(),
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

/// The id of sector `offset` of `volume`.
pub fn tencent_id(volume: u32, offset: u64) -> u64 {
    if offset < 1 << 40 && volume < 1 << 24 {
        (u64::from(volume) << 40) | offset
    } else {
        let mut b = [0u8; 12];
        b[..4].copy_from_slice(&volume.to_le_bytes());
        b[4..].copy_from_slice(&offset.to_le_bytes());
        key_id(&b)
    }
}

fn parse(line: &[u8], rec: &mut TraceRecord) -> Result<(), &'static str> {
    let mut f: [&[u8]; 5] = [&[]; 5];
    if split_fields(line, b',', &mut f) != 5 {
        return Err("5 fields `Timestamp,Offset,Size,IOType,VolumeID` expected");
    }
    let num = |i: usize, what: &'static str| parse_u64(f[i].trim_ascii()).ok_or(what);
    rec.clear();
    rec.ts = num(0, "the timestamp is not an integer")?;
    let offset = num(1, "the offset is not an integer")?;
    rec.value_size = num(2, "the size is not an integer")?.saturating_mul(SECTOR_BYTES);
    rec.op = match num(3, "the IO type is not 0 or 1")? {
        0 => Op::Read,
        1 => Op::Write,
        _ => return Err("the IO type is not 0 or 1"),
    };
    let volume = u32::try_from(num(4, "the volume id is not an integer")?)
        .map_err(|_| "the volume id does not fit 32 bits")?;
    rec.cf = volume;
    rec.id = tencent_id(volume, offset);
    Ok(())
}

impl TraceReader for TencentReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        loop {
            let r = match self.input.line()? {
                None => return Ok(false),
                Some([]) => continue,
                Some(line) => parse(line, rec),
            };
            return r.map(|()| true).map_err(|what| self.input.bad_line(what));
        }
    }
}

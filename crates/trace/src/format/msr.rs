//! MSR Cambridge block traces (SNIA IOTTA), CSV: `Timestamp (Windows FILETIME),
//! Hostname, DiskNumber, Read|Write, Offset (bytes), Size (bytes), ResponseTime
//! (FILETIME ticks)`. A request stays whole: its id is its byte offset, its size the
//! request's size; the disk number goes to [`TraceRecord::cf`], the response time to
//! [`TraceRecord::latency_ns`]. The hostname is not kept.

use crate::input::{parse_u64, split_fields, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads an MSR Cambridge trace.
pub struct MsrReader {
    input: Input,
    info: TraceInfo,
}

impl MsrReader {
    pub(crate) fn new(input: Input) -> MsrReader {
        MsrReader {
            input,
            info: TraceInfo {
                format: "msr".to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Filetime,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
        }
    }
}

fn parse(line: &[u8], rec: &mut TraceRecord) -> Result<(), &'static str> {
    let mut f: [&[u8]; 7] = [&[]; 7];
    if split_fields(line, b',', &mut f) != 7 {
        return Err(
            "7 fields `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` expected",
        );
    }
    rec.clear();
    rec.ts = parse_u64(f[0].trim_ascii()).ok_or("the timestamp is not an integer")?;
    rec.cf = parse_u64(f[2].trim_ascii())
        .and_then(|v| u32::try_from(v).ok())
        .ok_or("the disk number is not an integer")?;
    let kind = f[3].trim_ascii();
    rec.op = if kind.eq_ignore_ascii_case(b"read") {
        Op::Read
    } else if kind.eq_ignore_ascii_case(b"write") {
        Op::Write
    } else {
        return Err("the type is neither Read nor Write");
    };
    rec.id = parse_u64(f[4].trim_ascii()).ok_or("the offset is not an integer")?;
    rec.value_size = parse_u64(f[5].trim_ascii()).ok_or("the size is not an integer")?;
    rec.latency_ns = parse_u64(f[6].trim_ascii())
        .ok_or("the response time is not an integer")?
        .saturating_mul(100);
    Ok(())
}

impl TraceReader for MsrReader {
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

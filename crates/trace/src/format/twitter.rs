//! Twitter's cache traces (github.com/twitter/cache-trace), CSV without a header:
//! `timestamp,anonymized key,key size,value size,client id,operation,TTL`. The key is
//! kept as bytes; its stated size (which can differ from the anonymized key's length) is
//! [`TraceRecord::key_size`]; the client id goes to [`TraceRecord::cf`]; ops are get,
//! gets, set, add, replace, cas, append, prepend, delete, incr, decr (anything else is
//! [`Op::Other`]). As in libCacheSim's reading of these traces, an object's size is key
//! size + value size ([`TraceRecord::obj_size`]). The key is the text between the first
//! comma and the fifth comma from the end, so a key holding commas still reads.

use crate::input::{parse_u64, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads a Twitter cache-trace CSV.
pub struct TwitterReader {
    input: Input,
    info: TraceInfo,
}

impl TwitterReader {
    pub(crate) fn new(input: Input) -> TwitterReader {
        TwitterReader {
            input,
            info: TraceInfo {
                format: "twitter".to_string(),
                key_encoding: KeyEncoding::Bytes,
                time_unit: TimeUnit::Seconds,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
        }
    }
}

/// Fills `rec` from one line; `Err` says what was wrong.
fn parse(line: &[u8], rec: &mut TraceRecord) -> Result<(), &'static str> {
    const EXPECTED: &str = "`timestamp,key,key_size,value_size,client_id,op,ttl` expected";
    let comma = memchr::memchr(b',', line).ok_or(EXPECTED)?;
    let ts = parse_u64(&line[..comma]).ok_or("the timestamp is not an integer")?;
    let rest = &line[comma + 1..];
    // The last five fields, from the right.
    let mut tail: [&[u8]; 5] = [&[]; 5];
    let mut end = rest.len();
    for slot in tail.iter_mut().rev() {
        let i = memchr::memrchr(b',', &rest[..end]).ok_or(EXPECTED)?;
        *slot = &rest[i + 1..end];
        end = i;
    }
    let key = &rest[..end];
    rec.clear();
    rec.ts = ts;
    rec.set_key(key);
    rec.key_size = parse_u64(tail[0])
        .and_then(|v| u32::try_from(v).ok())
        .ok_or("the key size is not an integer")?;
    rec.value_size = parse_u64(tail[1]).ok_or("the value size is not an integer")?;
    rec.cf = parse_u64(tail[2])
        .and_then(|v| u32::try_from(v).ok())
        .ok_or("the client id is not an integer")?;
    rec.op = std::str::from_utf8(tail[3])
        .ok()
        .and_then(Op::from_name)
        .unwrap_or(Op::Other);
    rec.ttl_s = parse_u64(tail[4])
        .and_then(|v| u32::try_from(v).ok())
        .ok_or("the TTL is not an integer")?;
    Ok(())
}

impl TraceReader for TwitterReader {
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
            return match r {
                Ok(()) => Ok(true),
                Err(what) => Err(self.input.bad_line(what)),
            };
        }
    }
}

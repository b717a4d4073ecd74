//! One object id per line: libCacheSim's *txt* traces (`plainTxt`, ids parsed with
//! `strtoull(…, 0)`: `0x` hex, a leading `0` octal) and the classic **LIRS** traces
//! (decimal block numbers; a `*` line is a checkpoint, skipped, as in Caffeine's
//! `LirsTraceReader`). Empty lines are skipped; a last line without a newline counts.
//! No time and no sizes: the timestamp is the request's position.

use crate::input::{parse_u64, parse_u64_base0, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads a txt or LIRS trace.
pub struct IdLinesReader {
    input: Input,
    info: TraceInfo,
    lirs: bool,
    seq: u64,
}

impl IdLinesReader {
    /// A libCacheSim txt reader, or (`lirs`) a LIRS reader.
    pub(crate) fn new(input: Input, lirs: bool) -> IdLinesReader {
        IdLinesReader {
            input,
            info: TraceInfo {
                format: if lirs { "lirs" } else { "txt" }.to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Sequence,
                has_sizes: false,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
            lirs,
            seq: 0,
        }
    }
}

impl TraceReader for IdLinesReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        loop {
            let parsed = match self.input.line()? {
                None => return Ok(false),
                Some(line) => {
                    let line = line.trim_ascii();
                    if line.is_empty() || (self.lirs && line == b"*") {
                        continue;
                    }
                    if self.lirs {
                        parse_u64(line)
                    } else {
                        parse_u64_base0(line)
                    }
                }
            };
            let Some(id) = parsed else {
                let what = if self.lirs {
                    "a decimal block number or `*` expected"
                } else {
                    "an object id (decimal, 0x hex or 0 octal) expected"
                };
                return Err(self.input.bad_line(what));
            };
            rec.clear();
            rec.id = id;
            rec.op = Op::Get;
            rec.ts = self.seq;
            self.seq += 1;
            return Ok(true);
        }
    }
}

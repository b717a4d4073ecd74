//! The ARC paper's `.lis` traces (Megiddo & Modha, FAST'03): `start_block n_blocks
//! ignore request_no` per line. A request covers `n_blocks` consecutive pages and, like
//! Caffeine's `ArcTraceReader` (`LongStream.range(start, start + n)`), becomes one record
//! per page, ids `start_block`…`start_block + n_blocks − 1`, with
//! [`TraceRecord::batch_len`] = `n_blocks` and [`TraceRecord::batch_pos`] the page's
//! index. (libCacheSim has no reader for this format.) No time and no sizes: the
//! timestamp is the record's position.

use crate::input::{parse_u64, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads an ARC `.lis` trace.
pub struct ArcReader {
    input: Input,
    info: TraceInfo,
    /// The current request: next page, pages left, its length.
    page: u64,
    left: u64,
    len: u64,
    seq: u64,
}

impl ArcReader {
    pub(crate) fn new(input: Input) -> ArcReader {
        ArcReader {
            input,
            info: TraceInfo {
                format: "arc".to_string(),
                key_encoding: KeyEncoding::Id,
                time_unit: TimeUnit::Sequence,
                has_sizes: false,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
            page: 0,
            left: 0,
            len: 0,
            seq: 0,
        }
    }
}

impl TraceReader for ArcReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        while self.left == 0 {
            let parsed = match self.input.line()? {
                None => return Ok(false),
                Some(line) => {
                    let mut f = line
                        .split(|b| b.is_ascii_whitespace())
                        .filter(|f| !f.is_empty());
                    match (f.next(), f.next()) {
                        (None, _) => continue,
                        (Some(a), Some(b)) => parse_u64(a).zip(parse_u64(b)),
                        _ => None,
                    }
                }
            };
            let Some((start, n)) = parsed else {
                return Err(self
                    .input
                    .bad_line("`start_block n_blocks ignore request_no` expected"));
            };
            (self.page, self.left, self.len) = (start, n, n);
        }
        rec.clear();
        rec.id = self.page;
        rec.op = Op::Read;
        rec.ts = self.seq;
        rec.batch_len = u32::try_from(self.len).unwrap_or(u32::MAX);
        rec.batch_pos = u32::try_from(self.len - self.left).unwrap_or(u32::MAX);
        self.seq += 1;
        self.page += 1;
        self.left -= 1;
        Ok(true)
    }
}

//! AdaptSize's request traces (Berger et al., NSDI'17; Caffeine's `AdaptSizeTraceReader`):
//! `time id size` per line, space-separated. An id's size can change from request to
//! request; each record keeps the size of its own line. Time is kept as written
//! (seconds).

use crate::input::{parse_u64, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Reads an AdaptSize trace.
pub struct AdaptSizeReader {
    input: Input,
    info: TraceInfo,
}

impl AdaptSizeReader {
    pub(crate) fn new(input: Input) -> AdaptSizeReader {
        AdaptSizeReader {
            input,
            info: TraceInfo {
                format: "adaptsize".to_string(),
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

impl TraceReader for AdaptSizeReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        loop {
            let parsed = match self.input.line()? {
                None => return Ok(false),
                Some(line) => {
                    let mut f = line
                        .split(|&b| b == b' ' || b == b'\t')
                        .filter(|f| !f.is_empty());
                    match (f.next(), f.next(), f.next()) {
                        (None, ..) => continue,
                        (Some(t), Some(id), Some(size)) => parse_u64(t)
                            .zip(parse_u64(id))
                            .zip(parse_u64(size))
                            .map(|((t, id), size)| (t, id, size)),
                        _ => None,
                    }
                }
            };
            let Some((ts, id, size)) = parsed else {
                return Err(self
                    .input
                    .bad_line("`time id size` (decimal integers) expected"));
            };
            rec.clear();
            rec.ts = ts;
            rec.id = id;
            rec.value_size = size;
            rec.op = Op::Get;
            return Ok(true);
        }
    }
}

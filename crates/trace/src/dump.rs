//! Writing traces as text other tools read.
//!
//! [`rocksdb_human`] writes RocksDB `trace_analyzer -convert_to_human_readable_trace`'s
//! layout byte for byte (`tools/trace_analyzer_tool.cc`, `WriteTraceSequence`): one line
//! per operation, `0x<KEY IN UPPER-CASE HEX> <type> <cf> <value size> <timestamp µs>\n`,
//! single spaces. Like trace_analyzer, a DeleteRange writes only its begin key, and Gets,
//! MultiGets and iterator seeks have value size 0 (RocksDB traces carry no value for
//! them). For every other format: the type is [`crate::Op::rocksdb_human_type`], the
//! column is [`TraceRecord::cf`] (0 when the format has none), the value size is
//! [`TraceRecord::value_size`], and the timestamp is converted to µs (truncated; a trace
//! without a clock writes the record's position). Keys of id traces are written as the 8
//! bytes of the id, big-endian (`0x000000000000002A` for id 42).

use std::io::Write;
use std::path::PathBuf;

use crate::{KeyEncoding, TimeUnit, TraceError, TraceReader, TraceRecord};

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Writes every record of `reader` to `out` in trace_analyzer's human-readable layout;
/// returns the lines written.
pub fn rocksdb_human<R: TraceReader + ?Sized>(
    reader: &mut R,
    out: &mut impl Write,
) -> Result<u64, TraceError> {
    let info = reader.info().clone();
    let nanos = info.time_unit.nanos();
    let mut rec = TraceRecord::default();
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut lines = 0;
    let io = |source| TraceError::Io {
        path: PathBuf::from("<rocksdb-human output>"),
        source,
    };
    while reader.read(&mut rec)? {
        line.clear();
        line.extend_from_slice(b"0x");
        if info.key_encoding == KeyEncoding::Id && rec.key.is_empty() {
            push_hex(&mut line, &rec.id.to_be_bytes());
        } else {
            push_hex(&mut line, &rec.key);
        }
        let ts_us = match (nanos, info.time_unit) {
            (_, TimeUnit::Micros) => rec.ts,
            (Some(n), _) => (u128::from(rec.ts) * u128::from(n) / 1000) as u64,
            (None, _) => rec.ts,
        };
        writeln!(
            line,
            " {} {} {} {}",
            rec.op.rocksdb_human_type(),
            rec.cf,
            rec.value_size,
            ts_us
        )
        .map_err(io)?;
        out.write_all(&line).map_err(io)?;
        lines += 1;
    }
    out.flush().map_err(io)?;
    Ok(lines)
}

fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0xf)]);
    }
}

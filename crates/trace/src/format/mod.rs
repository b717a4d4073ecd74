//! One reader per trace format, each a [`crate::TraceReader`]. Open them through
//! [`crate::open()`], which tells the format and decompresses.

pub mod adaptsize;
pub mod arc;
pub mod cache2k;
pub mod csv;
pub mod lcs;
pub mod monitor;
pub mod msr;
pub mod oracle_general;
pub mod rocksdb;
pub mod tencent;
pub mod twitter;
pub mod twr;
pub mod txt;
pub mod vscsi;

use crate::Op;

/// A SCSI command written in hex without `0x` (`28`, `2a`), as a read or write.
pub(crate) fn vscsi_op_hex(f: &[u8]) -> Option<Op> {
    let v = u16::from_str_radix(std::str::from_utf8(f).ok()?, 16).ok()?;
    match v {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        _ => None,
    }
}

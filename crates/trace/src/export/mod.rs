//! Writing traces in other tools' formats, so that the tool itself reads them.
//!
//! - [`OutputFormat`]: what `kvlab trace convert --output-format` names, and which of
//!   them an output file's name tells ([`OutputFormat::from_path`]).
//! - [`libcachesim`]: libCacheSim's *oracleGeneral* (with next-access times), *csv*
//!   (`time,obj_id,obj_size,op`) and *txt* (one id a line), with the object ids and
//!   sizes `kvlab sim` uses, so libCacheSim's miss ratio on the file is `kvlab sim`'s.
//! - [`rocksdb`]: RocksDB's query-trace format (trace format 0.2), which `db_bench
//!   -benchmarks=replay -trace_file=…` replays.
//!
//! kvlab's own `.kvtrace` is written by [`crate::KvtraceWriter`] and Parquet by
//! `crate::parquet::write_parquet` (cargo feature `parquet`).

pub mod libcachesim;
pub mod rocksdb;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A format `kvlab trace convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutputFormat {
    /// kvlab's own format (lossless).
    Kvtrace,
    /// Apache Parquet, one row per request.
    Parquet,
    /// libCacheSim's oracleGeneral binary records, next-access times computed.
    OracleGeneral,
    /// libCacheSim's csv: header `time,obj_id,obj_size,op`.
    Csv,
    /// libCacheSim's txt: one object id a line.
    Txt,
    /// RocksDB's query-trace format (`db_bench -benchmarks=replay`).
    Rocksdb,
}

impl OutputFormat {
    /// Every output format.
    pub const ALL: [OutputFormat; 6] = [
        OutputFormat::Kvtrace,
        OutputFormat::Parquet,
        OutputFormat::OracleGeneral,
        OutputFormat::Csv,
        OutputFormat::Txt,
        OutputFormat::Rocksdb,
    ];

    /// The name `--output-format` takes (scripts depend on these spellings).
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Kvtrace => "kvtrace",
            OutputFormat::Parquet => "parquet",
            OutputFormat::OracleGeneral => "oracleGeneral",
            OutputFormat::Csv => "csv",
            OutputFormat::Txt => "txt",
            OutputFormat::Rocksdb => "rocksdb",
        }
    }

    /// The format an output file's name tells: `.kvtrace`, `.parquet`,
    /// `.oracleGeneral.bin` (or `.oracleGeneral`). Other names (`.csv`, `.txt`, a
    /// RocksDB trace's free name) say too little: the caller asks for the format.
    pub fn from_path(path: &Path) -> Option<OutputFormat> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".kvtrace") {
            Some(OutputFormat::Kvtrace)
        } else if name.ends_with(".parquet") {
            Some(OutputFormat::Parquet)
        } else if name.ends_with(".oracleGeneral.bin") || name.ends_with(".oracleGeneral") {
            Some(OutputFormat::OracleGeneral)
        } else {
            None
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for OutputFormat {
    type Err = String;

    /// An output format by [`OutputFormat::name`], any case.
    fn from_str(s: &str) -> Result<OutputFormat, String> {
        OutputFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<_> = OutputFormat::ALL.iter().map(|f| f.name()).collect();
                format!("unknown output format {s:?} (known: {})", names.join(", "))
            })
    }
}

/// A timestamp of `unit` in whole units of `per_ns` nanoseconds (truncated); a trace
/// without a clock keeps the record's position.
pub(crate) fn convert_ts(ts: u64, unit: crate::TimeUnit, per_ns: u64) -> u64 {
    match unit.nanos() {
        Some(n) if n == per_ns => ts,
        Some(n) => (u128::from(ts) * u128::from(n) / u128::from(per_ns)) as u64,
        None => ts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_paths_tell_three_formats() {
        for f in OutputFormat::ALL {
            assert_eq!(f.name().parse::<OutputFormat>(), Ok(f));
        }
        assert_eq!("ORACLEGENERAL".parse(), Ok(OutputFormat::OracleGeneral));
        let of = |p: &str| OutputFormat::from_path(Path::new(p));
        assert_eq!(of("a/b.kvtrace"), Some(OutputFormat::Kvtrace));
        assert_eq!(of("b.parquet"), Some(OutputFormat::Parquet));
        assert_eq!(of("t.oracleGeneral.bin"), Some(OutputFormat::OracleGeneral));
        assert_eq!(of("t.csv"), None);
        assert_eq!(of("t.bin"), None);
    }

    #[test]
    fn timestamps_convert_by_truncation() {
        use crate::TimeUnit;
        assert_eq!(convert_ts(2_999_999_999, TimeUnit::Nanos, 1_000_000_000), 2);
        assert_eq!(convert_ts(1_500, TimeUnit::Nanos, 1_000), 1);
        assert_eq!(convert_ts(7, TimeUnit::Seconds, 1_000), 7_000_000);
        assert_eq!(convert_ts(7, TimeUnit::Sequence, 1_000), 7);
    }
}

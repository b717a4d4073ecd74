//! Delimited text traces with user-given columns, like libCacheSim's `csv` reader
//! (`traceReader/generalReader/csv.c`, columns given with `-t "time-col=2,
//! obj-id-col=5, obj-size-col=4, delimiter=,, has-header=true"`, see
//! `bin/cli_reader_utils.c`).
//!
//! Columns are 1-based. An id column with `obj-id-is-num=true` holds decimal integers
//! (the id); otherwise the field is a byte key (its id is [`crate::key_id`]). The op
//! column holds an op name (`get`, `set`, `read`, `write`, … as [`Op::from_name`] spells
//! them) or a SCSI command in hex without `0x` (`28` READ10, `2a` WRITE10, as
//! libCacheSim's `cloudPhysicsIO.csv` has them); anything else is [`Op::Other`]. Without
//! a spec, a header line names the columns (`time`/`timestamp`, `id`/`obj_id`/`key`/
//! `lbn`/`offset`, `size`/`obj_size`/`len`, `op`/`operation`/`type`/`cmd`) and ids are
//! numeric when the first row's is. Time is taken as seconds unless the spec says
//! `time-unit=ms|us|ns` (a kvlab addition).

use std::str::FromStr;

use super::vscsi_op_hex;
use crate::input::{parse_fixed, parse_u64, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// Which columns of a delimited trace hold what (1-based column numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvSpec {
    /// The timestamp's column (`time-col`).
    pub time_col: Option<usize>,
    /// The object id's column (`obj-id-col`).
    pub obj_id_col: usize,
    /// The object size's column (`obj-size-col`).
    pub obj_size_col: Option<usize>,
    /// The op's column (`op-col`).
    pub op_col: Option<usize>,
    /// The field separator (`delimiter`; `,` by default; `\t`/`tab`, `space` spelled out).
    pub delimiter: u8,
    /// Whether the first line is a header (`has-header`).
    pub has_header: bool,
    /// Whether ids are decimal integers (`obj-id-is-num`); otherwise byte keys.
    pub obj_id_is_num: bool,
    /// The timestamp's unit (`time-unit`: s, ms, us, ns; seconds by default).
    pub time_unit: TimeUnit,
}

impl Default for CsvSpec {
    fn default() -> CsvSpec {
        CsvSpec {
            time_col: None,
            obj_id_col: 1,
            obj_size_col: None,
            op_col: None,
            delimiter: b',',
            has_header: false,
            obj_id_is_num: true,
            time_unit: TimeUnit::Seconds,
        }
    }
}

impl FromStr for CsvSpec {
    type Err = String;

    /// Parses libCacheSim's `key=value` list, e.g. `time-col=2, obj-id-col=5,
    /// obj-size-col=4, op-col=3, delimiter=,, has-header=true, obj-id-is-num=true`.
    fn from_str(s: &str) -> Result<CsvSpec, String> {
        let mut spec = CsvSpec::default();
        let mut id_given = false;
        let mut rest = s.trim();
        while !rest.is_empty() {
            let eq = rest
                .find('=')
                .ok_or_else(|| format!("`key=value` expected at {rest:?}"))?;
            let key = rest[..eq].trim().trim_start_matches(',').trim();
            let after = &rest[eq + 1..];
            // The delimiter's value may itself be a comma: take one character.
            let (value, next) = if key == "delimiter" {
                let mut chars = after.char_indices();
                match chars.next() {
                    None => return Err("delimiter= needs a value".to_string()),
                    Some((_, c)) => {
                        let end = c.len_utf8();
                        let word_end = after.find(',').filter(|&i| i > end).unwrap_or(end);
                        let word = &after[..word_end];
                        if matches!(word, "\\t" | "tab" | "space") {
                            (word, &after[word_end..])
                        } else {
                            (&after[..end], &after[end..])
                        }
                    }
                }
            } else {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim(), &after[end..])
            };
            rest = next.trim_start_matches(',').trim_start();
            let col = |v: &str| -> Result<usize, String> {
                match v.parse::<usize>() {
                    Ok(c) if c >= 1 => Ok(c),
                    _ => Err(format!(
                        "{key}: a 1-based column number expected, found {v:?}"
                    )),
                }
            };
            let flag = |v: &str| -> Result<bool, String> {
                match v.to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" => Ok(true),
                    "false" | "0" | "no" => Ok(false),
                    _ => Err(format!("{key}: true or false expected, found {v:?}")),
                }
            };
            match key {
                "time-col" => spec.time_col = Some(col(value)?),
                "obj-id-col" => {
                    spec.obj_id_col = col(value)?;
                    id_given = true;
                }
                "obj-size-col" => spec.obj_size_col = Some(col(value)?),
                "op-col" => spec.op_col = Some(col(value)?),
                "delimiter" => {
                    spec.delimiter = match value {
                        "\\t" | "tab" => b'\t',
                        "space" => b' ',
                        v if v.len() == 1 => v.as_bytes()[0],
                        v => return Err(format!("delimiter: one character expected, found {v:?}")),
                    }
                }
                "has-header" | "header" => spec.has_header = flag(value)?,
                "obj-id-is-num" => spec.obj_id_is_num = flag(value)?,
                "time-unit" => {
                    spec.time_unit = match value {
                        "s" => TimeUnit::Seconds,
                        "ms" => TimeUnit::Millis,
                        "us" => TimeUnit::Micros,
                        "ns" => TimeUnit::Nanos,
                        v => {
                            return Err(format!("time-unit: s, ms, us or ns expected, found {v:?}"))
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "unknown csv parameter {other:?} (known: time-col, obj-id-col, \
                         obj-size-col, op-col, delimiter, has-header, obj-id-is-num, time-unit)"
                    ))
                }
            }
        }
        if !id_given {
            return Err("obj-id-col is required".to_string());
        }
        Ok(spec)
    }
}

/// Reads a delimited trace.
pub struct CsvReader {
    input: Input,
    info: TraceInfo,
    spec: CsvSpec,
    /// Column indexes (0-based) and the number of fields to split.
    time: Option<usize>,
    id: usize,
    size: Option<usize>,
    op: Option<usize>,
    fields: Vec<(usize, usize)>,
}

impl CsvReader {
    /// A reader with `spec`, or (`None`) with columns named by the header line.
    pub(crate) fn new(mut input: Input, spec: Option<CsvSpec>) -> Result<CsvReader, TraceError> {
        let spec = match spec {
            Some(s) => s,
            None => infer_spec(&mut input)?,
        };
        let key_encoding = if spec.obj_id_is_num {
            KeyEncoding::Id
        } else {
            KeyEncoding::Bytes
        };
        let mut reader = CsvReader {
            info: TraceInfo {
                format: "csv".to_string(),
                key_encoding,
                time_unit: if spec.time_col.is_some() {
                    spec.time_unit
                } else {
                    TimeUnit::Sequence
                },
                has_sizes: spec.obj_size_col.is_some(),
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
            time: spec.time_col.map(|c| c - 1),
            id: spec.obj_id_col - 1,
            size: spec.obj_size_col.map(|c| c - 1),
            op: spec.op_col.map(|c| c - 1),
            fields: Vec::new(),
            spec,
            input,
        };
        if reader.spec.has_header {
            reader.input.line()?;
        }
        Ok(reader)
    }
}

/// Reads a header line (without consuming it) and names columns from it.
fn infer_spec(input: &mut Input) -> Result<CsvSpec, TraceError> {
    let head = input.peek(64 * 1024)?;
    let mut lines = head.split(|&b| b == b'\n');
    let header = String::from_utf8_lossy(lines.next().unwrap_or_default())
        .trim()
        .to_string();
    let first_row = lines
        .next()
        .map(|l| String::from_utf8_lossy(l).trim().to_string());
    let delimiter = [b',', b'\t', b' ']
        .into_iter()
        .find(|&d| header.as_bytes().contains(&d))
        .unwrap_or(b',');
    let mut spec = CsvSpec {
        delimiter,
        has_header: true,
        ..CsvSpec::default()
    };
    let mut id = None;
    for (i, name) in header.split(delimiter as char).enumerate() {
        let name = name
            .trim()
            .trim_matches('"')
            .to_ascii_lowercase()
            .replace('-', "_");
        match name.as_str() {
            "time" | "timestamp" | "clock_time" | "ts" => spec.time_col = Some(i + 1),
            "id" | "obj_id" | "key" | "lbn" | "lba" | "block" | "offset" => id = Some(i + 1),
            "size" | "obj_size" | "len" | "length" => spec.obj_size_col = Some(i + 1),
            "op" | "operation" | "type" | "cmd" => spec.op_col = Some(i + 1),
            _ => {}
        }
    }
    let Some(id) = id else {
        return Err(TraceError::Format {
            path: input.path().to_path_buf(),
            what: format!(
                "csv without a column spec: the header {header:?} names no id column \
                 (id, obj_id, key, lbn, offset); give one, e.g. \"obj-id-col=2, has-header=true\""
            ),
        });
    };
    spec.obj_id_col = id;
    spec.obj_id_is_num = first_row
        .as_deref()
        .and_then(|r| r.split(delimiter as char).nth(id - 1))
        .is_none_or(|f| parse_u64(f.trim().as_bytes()).is_some());
    Ok(spec)
}

impl TraceReader for CsvReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        loop {
            let line_no = self.input.line_no() + 1;
            let r = match self.input.line()? {
                None => return Ok(false),
                Some([]) => continue,
                Some(line) => {
                    // Field boundaries, reused from line to line.
                    self.fields.clear();
                    let mut start = 0;
                    for i in memchr::memchr_iter(self.spec.delimiter, line) {
                        self.fields.push((start, i));
                        start = i + 1;
                    }
                    self.fields.push((start, line.len()));
                    let field = |c: usize| {
                        self.fields
                            .get(c)
                            .map(|&(a, b)| line[a..b].trim_ascii())
                            .ok_or("the line has fewer fields than the spec's columns")
                    };
                    (|| -> Result<(), &'static str> {
                        rec.clear();
                        let id = field(self.id)?;
                        if self.spec.obj_id_is_num {
                            rec.id =
                                parse_u64(id).ok_or("the object id is not a decimal integer")?;
                        } else {
                            rec.set_key(id);
                        }
                        if let Some(c) = self.time {
                            let t = field(c)?;
                            rec.ts = parse_u64(t)
                                .or_else(|| parse_fixed(t, 1))
                                .ok_or("the time is not a number")?;
                        } else {
                            rec.ts = line_no;
                        }
                        if let Some(c) = self.size {
                            rec.value_size =
                                parse_u64(field(c)?).ok_or("the size is not an integer")?;
                        }
                        rec.op = match self.op {
                            Some(c) => op_of(field(c)?),
                            None => Op::Get,
                        };
                        Ok(())
                    })()
                }
            };
            return r.map(|()| true).map_err(|what| self.input.bad_line(what));
        }
    }
}

/// An op field: a name, or a SCSI command in hex.
fn op_of(f: &[u8]) -> Op {
    std::str::from_utf8(f)
        .ok()
        .and_then(Op::from_name)
        .or_else(|| vscsi_op_hex(f))
        .unwrap_or(Op::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_with_comma_delimiter() {
        let s: CsvSpec =
            "time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, delimiter=,, has-header=true"
                .parse()
                .unwrap();
        assert_eq!(s.time_col, Some(2));
        assert_eq!(s.obj_id_col, 5);
        assert_eq!(s.obj_size_col, Some(4));
        assert_eq!(s.op_col, Some(3));
        assert_eq!(s.delimiter, b',');
        assert!(s.has_header);
        let t: CsvSpec = "obj-id-col=1,delimiter=\\t,obj-id-is-num=false"
            .parse()
            .unwrap();
        assert_eq!((t.delimiter, t.obj_id_is_num), (b'\t', false));
        assert!("time-col=1".parse::<CsvSpec>().is_err());
    }
}

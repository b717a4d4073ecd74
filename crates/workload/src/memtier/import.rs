//! memtier_benchmark's `--data-import` files: memcached item dumps as CSV, read by
//! memtier's `file_reader` (`file_io.cpp`) into [`ImportedItems`].
//!
//! The first line is a header starting with `dumpflags, time, exptime`; every further
//! line is one item:
//!
//! ```text
//! dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data
//! 0, 0, 0, 7, 0, 0, 0, 4, "key1", "value"
//! ```
//!
//! Eight unsigned numbers, each followed by `,` and optional blanks; then the key of
//! `nkey` bytes, a `,`, one separator byte (a space), and the data of `nbytes − 2` bytes
//! (`nbytes` counts memcached's `\r\n` after the value). Key and data are either
//! quoted — `"…"`, a `"` inside written `""`, any byte allowed — or bare, ending at a
//! `,` or a line break. memtier uses the key, the data and `exptime` (a time to live in
//! seconds); the other numbers are kept in the format only.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::MemtierError;

/// What every import file starts with (memtier compares this prefix of the first line).
pub const IMPORT_HEADER_PREFIX: &str = "dumpflags, time, exptime";

/// The whole header line memtier's `file_writer` writes.
pub const IMPORT_HEADER: &str =
    "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    key_at: usize,
    key_len: u32,
    value_at: usize,
    value_len: u32,
    exptime: u32,
}

/// The items of an import file, in file order, held in memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportedItems {
    bytes: Vec<u8>,
    items: Vec<Span>,
}

impl ImportedItems {
    /// Reads and parses the import file at `path`.
    pub fn read(path: &Path) -> Result<ImportedItems, MemtierError> {
        let text = std::fs::read(path).map_err(|source| MemtierError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        ImportedItems::parse(&text, path)
    }

    /// Parses an import file's bytes; `path` names it in errors (`FILE:LINE: …`).
    pub fn parse(text: &[u8], path: &Path) -> Result<ImportedItems, MemtierError> {
        let mut c = Cursor {
            s: text,
            pos: 0,
            path,
        };
        if !text.starts_with(IMPORT_HEADER_PREFIX.as_bytes()) {
            return Err(c.error(format!(
                "invalid file, unexpected CSV header (expected `{IMPORT_HEADER_PREFIX}, …`)"
            )));
        }
        c.pos = text
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |i| i + 1);
        let mut out = ImportedItems::default();
        loop {
            c.skip_blanks();
            if c.pos >= text.len() {
                break;
            }
            let mut numbers = [0u32; 8];
            for n in &mut numbers {
                *n = c.number()?;
                if !c.eat(b',') {
                    return Err(c.error("error parsing item values".into()));
                }
            }
            c.skip_blanks();
            let [_dumpflags, _time, exptime, nbytes, _nsuffix, _flags, _clsid, nkey] = numbers;
            if nbytes < 2 {
                return Err(c.error(format!(
                    "nbytes is {nbytes}: it counts the data and its CRLF, so at least 2"
                )));
            }
            let key_at = out.bytes.len();
            c.string(nkey, "key", &mut out.bytes)?;
            if !c.eat(b',') {
                let got =
                    c.s.get(c.pos)
                        .map_or("end of file".into(), |b| format!("'{}'", *b as char));
                return Err(c.error(format!("got {got} instead of the delimiter after the key")));
            }
            // memtier skips the one byte after the comma (a space) unread.
            c.pos += 1;
            let value_at = out.bytes.len();
            c.string(nbytes - 2, "data", &mut out.bytes)?;
            c.eat(b'\r');
            if !c.eat(b'\n') && c.pos < text.len() {
                return Err(c.error("end of line expected but not found".into()));
            }
            out.items.push(Span {
                key_at,
                key_len: nkey,
                value_at,
                value_len: nbytes - 2,
                exptime,
            });
        }
        Ok(out)
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True without items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Item `i`'s key.
    #[inline]
    pub fn key(&self, i: usize) -> &[u8] {
        let s = &self.items[i];
        &self.bytes[s.key_at..s.key_at + s.key_len as usize]
    }

    /// Item `i`'s value (its data without the trailing CRLF).
    #[inline]
    pub fn value(&self, i: usize) -> &[u8] {
        let s = &self.items[i];
        &self.bytes[s.value_at..s.value_at + s.value_len as usize]
    }

    /// Item `i`'s `exptime`, which memtier sends as the SET's time to live in seconds.
    #[inline]
    pub fn exptime(&self, i: usize) -> u32 {
        self.items[i].exptime
    }

    /// The largest value, in bytes.
    pub fn max_value_bytes(&self) -> usize {
        self.items
            .iter()
            .map(|s| s.value_len as usize)
            .max()
            .unwrap_or(0)
    }
}

/// Writes one item line as memtier's `file_writer::write_item` does (key and data
/// quoted, `"` doubled; dumpflags, time, nsuffix, it_flags and clsid 0). Start the file
/// with [`IMPORT_HEADER`] and a newline.
pub fn write_import_item<W: Write>(
    out: &mut W,
    key: &[u8],
    value: &[u8],
    exptime: u32,
) -> std::io::Result<()> {
    let quote = |s: &[u8]| -> Vec<u8> {
        let mut q = Vec::with_capacity(s.len() + 2);
        for &b in s {
            q.push(b);
            if b == b'"' {
                q.push(b'"');
            }
        }
        q
    };
    write!(
        out,
        "0, 0, {exptime}, {}, 0, 0, 0, {}, \"",
        value.len() + 2,
        key.len()
    )?;
    out.write_all(&quote(key))?;
    out.write_all(b"\", \"")?;
    out.write_all(&quote(value))?;
    out.write_all(b"\"\n")
}

struct Cursor<'a> {
    s: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl Cursor<'_> {
    /// `FILE:LINE: message`, the line being the one the cursor is on.
    fn error(&self, message: String) -> MemtierError {
        let end = self.pos.min(self.s.len());
        MemtierError::Syntax {
            path: PathBuf::from(self.path),
            line: 1 + self.s[..end].iter().filter(|&&b| b == b'\n').count(),
            message,
        }
    }

    /// Blanks and line breaks, as a blank in a `scanf` format skips them.
    fn skip_blanks(&mut self) {
        while self.s.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.s.get(self.pos) == Some(&b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// `%u`: blanks, then decimal digits that fit in 32 bits.
    fn number(&mut self) -> Result<u32, MemtierError> {
        self.skip_blanks();
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| self.error("error parsing item values".into()))
    }

    /// A key or data column of `len` bytes, quoted or bare, appended to `out`
    /// (`file_reader::read_string`).
    fn string(&mut self, len: u32, what: &str, out: &mut Vec<u8>) -> Result<(), MemtierError> {
        let start = out.len();
        let len = len as usize;
        if self.eat(b'"') {
            while out.len() - start < len {
                let Some(&b) = self.s.get(self.pos) else {
                    return Err(self.error("premature end of file".into()));
                };
                self.pos += 1;
                if b == b'"' && !self.eat(b'"') {
                    return Err(self.error(format!(
                        "{what} column is {} bytes, expected {len} bytes",
                        out.len() - start
                    )));
                }
                out.push(b);
            }
            if !self.eat(b'"') {
                return Err(self.error(format!(
                    "{what} column is longer than {len} bytes, or its closing '\"' is missing"
                )));
            }
        } else {
            while out.len() - start < len {
                match self.s.get(self.pos) {
                    Some(b',' | b'\r' | b'\n') | None => break,
                    Some(&b) => {
                        out.push(b);
                        self.pos += 1;
                    }
                }
            }
            if out.len() - start < len {
                return Err(self.error(format!(
                    "{what} column is {} bytes, expected {len} bytes",
                    out.len() - start
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ImportedItems, MemtierError> {
        ImportedItems::parse(text.as_bytes(), Path::new("dump.csv"))
    }

    #[test]
    fn memtiers_own_output_reads_back() {
        let mut file = format!("{IMPORT_HEADER}\n").into_bytes();
        write_import_item(&mut file, b"key1", b"value", 0).unwrap();
        write_import_item(&mut file, b"k\"2", b"a,\"b\"\r\nc\0", 300).unwrap();
        let items = ImportedItems::parse(&file, Path::new("x")).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(
            (items.key(0), items.value(0), items.exptime(0)),
            (&b"key1"[..], &b"value"[..], 0)
        );
        assert_eq!(
            (items.key(1), items.value(1), items.exptime(1)),
            (&b"k\"2"[..], &b"a,\"b\"\r\nc\0"[..], 300)
        );
        assert_eq!(items.max_value_bytes(), 9);
        assert!(
            String::from_utf8_lossy(&file).contains("0, 0, 300, 11, 0, 0, 0, 3, \"k\"\"2\", \"")
        );
    }

    #[test]
    fn bare_columns_and_crlf_lines() {
        let items = parse(&format!(
            "{IMPORT_HEADER}\r\n1, 2, 60, 5, 0, 0, 1, 3, abc, xyz\r\n0,0,0,2,0,0,0,1,k, \n"
        ))
        .unwrap();
        assert_eq!(
            (items.key(0), items.value(0), items.exptime(0)),
            (&b"abc"[..], &b"xyz"[..], 60)
        );
        assert_eq!((items.key(1), items.value(1)), (&b"k"[..], &b""[..]));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert!(err("key, value\n").contains("dump.csv:1: invalid file, unexpected CSV header"));
        let h = IMPORT_HEADER;
        let e = err(&format!(
            "{h}\n0, 0, 0, 7, 0, 0, 0, 4, \"key1\", \"value\"\n0, 0, x\n"
        ));
        assert!(
            e.starts_with("dump.csv:3: error parsing item values"),
            "{e}"
        );
        let e = err(&format!(
            "{h}\n0, 0, 0, 9, 0, 0, 0, 4, \"key1\", \"value\"\n"
        ));
        assert!(e.contains("dump.csv:2: data column is"), "{e}");
        let e = err(&format!("{h}\n0, 0, 0, 7, 0, 0, 0, 6, key1, \"value\"\n"));
        assert!(e.contains("key column is 4 bytes, expected 6"), "{e}");
        let e = err(&format!("{h}\n0, 0, 0, 1, 0, 0, 0, 1, k, v\n"));
        assert!(e.contains("nbytes is 1"), "{e}");
        let e = err(&format!("{h}\n0, 0, 0, 7, 0, 0, 0, 4, \"key1\", \"valu"));
        assert!(e.contains("premature end of file"), "{e}");
    }

    #[test]
    fn an_empty_file_has_no_items() {
        assert!(parse(&format!("{IMPORT_HEADER}\n")).unwrap().is_empty());
    }
}

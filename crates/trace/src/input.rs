//! A trace's bytes, read in big buffered chunks, with the offset and line number every
//! error names.
//!
//! Readers take fixed-size records ([`Input::record`]) or lines ([`Input::line`]) as
//! slices of one reused buffer, so reading allocates nothing per request.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::TraceError;

/// The size of one buffered read: big enough that the kernel and the decompressors work
/// in large chunks, small enough to stay in L2.
const CHUNK_BYTES: usize = 1 << 20;

/// A decompressed byte stream with its file name and position.
pub(crate) struct Input {
    src: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// The unread bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    eof: bool,
    path: PathBuf,
    /// Lines returned so far (the 1-based number of the last one).
    line_no: u64,
}

impl Input {
    /// Reads `src`, naming `path` in errors.
    pub(crate) fn new(src: Box<dyn Read + Send>, path: &Path) -> Input {
        Input::with_chunk(src, path, CHUNK_BYTES)
    }

    /// [`Input::new`] reading `chunk` bytes at a time (at least 1; the buffer still grows
    /// for a longer record or line). The fuzz targets read their small inputs in small
    /// chunks: zeroing a 1 MiB buffer for every input cost most of their time.
    pub(crate) fn with_chunk(src: Box<dyn Read + Send>, path: &Path, chunk: usize) -> Input {
        Input {
            src,
            buf: vec![0; chunk.max(1)],
            pos: 0,
            end: 0,
            base: 0,
            eof: false,
            path: path.to_path_buf(),
            line_no: 0,
        }
    }

    /// The file the bytes come from.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Stream offset of the next unread byte.
    #[inline]
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The number of the last line [`Input::line`] returned (1-based).
    pub(crate) fn line_no(&self) -> u64 {
        self.line_no
    }

    /// An I/O error naming the file.
    pub(crate) fn io_error(&self, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// A corruption at stream offset `offset`.
    pub(crate) fn corrupt(&self, offset: u64, what: impl Into<String>) -> TraceError {
        TraceError::Corrupt {
            path: self.path.clone(),
            offset,
            what: what.into(),
        }
    }

    /// A bad text line: the last one [`Input::line`] returned.
    pub(crate) fn bad_line(&self, what: impl Into<String>) -> TraceError {
        TraceError::BadLine {
            path: self.path.clone(),
            line: self.line_no,
            what: what.into(),
        }
    }

    /// Makes at least `n` unread bytes available unless the stream ends first; returns
    /// how many are available.
    fn fill(&mut self, n: usize) -> Result<usize, TraceError> {
        if self.end - self.pos >= n || self.eof {
            return Ok(self.end - self.pos);
        }
        // Move the unread tail to the front, grow if one record or line is larger than
        // the buffer, then read until `n` bytes are there or the stream ends.
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end < n {
            // Grow by doubling as bytes arrive, not to `n` at once: a corrupt length
            // must not allocate more than about twice what the stream holds.
            if self.end == self.buf.len() {
                let grown = (self.buf.len() * 2).min(n.next_power_of_two());
                self.buf.resize(grown, 0);
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
        Ok(self.end - self.pos)
    }

    /// The next `n` bytes, consumed: `None` at a clean end of the stream, an error naming
    /// the offset when the stream ends inside them.
    #[inline]
    pub(crate) fn record(&mut self, n: usize, what: &str) -> Result<Option<&[u8]>, TraceError> {
        if self.end - self.pos < n {
            let have = self.fill(n)?;
            if have == 0 {
                return Ok(None);
            }
            if have < n {
                return Err(self.corrupt(
                    self.offset(),
                    format!("truncated {what}: {n} bytes expected, the stream ends after {have}"),
                ));
            }
        }
        let start = self.pos;
        self.pos += n;
        Ok(Some(&self.buf[start..start + n]))
    }

    /// Up to `n` bytes without consuming them (fewer only at the end of the stream).
    pub(crate) fn peek(&mut self, n: usize) -> Result<&[u8], TraceError> {
        let have = self.fill(n)?;
        Ok(&self.buf[self.pos..self.pos + have.min(n)])
    }

    /// The next line without its `\n` (and `\r`), consumed; `None` at the end of the
    /// stream. A last line without a newline still counts.
    #[inline]
    pub(crate) fn line(&mut self) -> Result<Option<&[u8]>, TraceError> {
        let mut scanned = 0;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.pos + scanned..self.end]) {
                let start = self.pos;
                let nl = start + scanned + i;
                self.pos = nl + 1;
                self.line_no += 1;
                let mut line = &self.buf[start..nl];
                if let [rest @ .., b'\r'] = line {
                    line = rest;
                }
                return Ok(Some(line));
            }
            scanned = self.end - self.pos;
            if self.eof {
                if scanned == 0 {
                    return Ok(None);
                }
                let start = self.pos;
                self.pos = self.end;
                self.line_no += 1;
                let mut line = &self.buf[start..self.end];
                if let [rest @ .., b'\r'] = line {
                    line = rest;
                }
                return Ok(Some(line));
            }
            // At least one byte more than scanned (grows the buffer when a line is
            // longer than it); `fill` reads as much as fits.
            self.fill(scanned + 1)?;
        }
    }
}

/// Parses an unsigned decimal integer (ASCII digits only, at least one).
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// Parses an integer the way C's `strtoull(s, NULL, 0)` does for a whole field: `0x`
/// hex, a leading `0` octal, decimal otherwise (libCacheSim's txt reader).
pub(crate) fn parse_u64_base0(s: &[u8]) -> Option<u64> {
    let s = s.trim_ascii();
    let (digits, radix) = if let Some(h) = s.strip_prefix(b"0x").or(s.strip_prefix(b"0X")) {
        (h, 16)
    } else if s.len() > 1 && s[0] == b'0' {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        return None;
    }
    let text = std::str::from_utf8(digits).ok()?;
    u64::from_str_radix(text, radix).ok()
}

/// Parses a decimal number with an optional fraction (`1700000000.123456`) into whole
/// units and a fraction scaled to `scale` (e.g. 1e6 for µs).
pub(crate) fn parse_fixed(s: &[u8], scale: u64) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &b""[..]),
    };
    let whole = parse_u64(int)?;
    let mut f: u64 = 0;
    let mut unit = scale;
    for &b in frac {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        unit /= 10;
        f += u64::from(d) * unit;
    }
    whole.checked_mul(scale)?.checked_add(f)
}

/// Splits `line` on `sep` into at most `out.len()` fields; returns how many there are
/// (the last field keeps any further separators).
#[inline]
pub(crate) fn split_fields<'a>(line: &'a [u8], sep: u8, out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    let mut rest = line;
    while n + 1 < out.len() {
        match memchr::memchr(sep, rest) {
            Some(i) => {
                out[n] = &rest[..i];
                rest = &rest[i + 1..];
                n += 1;
            }
            None => break,
        }
    }
    out[n] = rest;
    n + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(bytes: &'static [u8]) -> Input {
        Input::new(Box::new(bytes), Path::new("t"))
    }

    #[test]
    fn lines_without_final_newline_and_crlf() {
        let mut i = input(b"a\r\nbb\n\nccc");
        let mut got = Vec::new();
        while let Some(l) = i.line().unwrap() {
            got.push(l.to_vec());
        }
        assert_eq!(
            got,
            vec![b"a".to_vec(), b"bb".to_vec(), vec![], b"ccc".to_vec()]
        );
        assert_eq!(i.line_no(), 4);
    }

    #[test]
    fn truncated_record_names_the_offset() {
        let mut i = input(b"0123456789");
        assert_eq!(i.record(4, "r").unwrap(), Some(&b"0123"[..]));
        assert_eq!(i.record(4, "r").unwrap(), Some(&b"4567"[..]));
        match i.record(4, "r") {
            Err(TraceError::Corrupt { offset, .. }) => assert_eq!(offset, 8),
            other => panic!("expected a corruption, got {other:?}"),
        }
    }

    #[test]
    fn strtoull_base0() {
        assert_eq!(parse_u64_base0(b"10"), Some(10));
        assert_eq!(parse_u64_base0(b"010"), Some(8));
        assert_eq!(parse_u64_base0(b"0x10"), Some(16));
        assert_eq!(parse_u64_base0(b"0"), Some(0));
    }

    #[test]
    fn fixed_point() {
        assert_eq!(
            parse_fixed(b"1700000000.123456", 1_000_000),
            Some(1_700_000_000_123_456)
        );
        assert_eq!(parse_fixed(b"2.5", 1000), Some(2500));
    }
}

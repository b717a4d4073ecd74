//! Redis `MONITOR` output (`redis-cli monitor`): one command per line,
//! `1700000000.123456 [0 127.0.0.1:5555] "SET" "key" "value"` — the Unix time in
//! seconds with µs, the database number and client, then the command's arguments quoted
//! as Redis's `sdscatrepr` writes them (`\"`, `\\`, `\n`, `\r`, `\t`, `\a`, `\b`,
//! `\xHH`). A leading `OK` line (redis-cli's reply to MONITOR) is skipped.
//!
//! Commands become records: GET/GETEX/GETDEL → get; SET/GETSET/SETEX/PSETEX → set, with
//! the value's length and the TTL of `EX s`/`PX ms`/`EXAT`/`PXAT`/SETEX/PSETEX (ms
//! rounded up to whole seconds); SETNX → add; APPEND → append; INCR/INCRBY/INCRBYFLOAT →
//! incr; DECR/DECRBY → decr; multi-key commands one record per key with
//! [`TraceRecord::batch_len`]/[`TraceRecord::batch_pos`]: MGET → get, MSET → set,
//! MSETNX → add, DEL/UNLINK → delete. Any other command is [`Op::Other`] keyed by its
//! first argument (empty without one). The database number goes to
//! [`TraceRecord::cf`]; time is in µs.

use std::ops::Range;

use crate::input::{parse_fixed, parse_u64, Input};
use crate::{KeyEncoding, Op, TimeUnit, TraceError, TraceInfo, TraceReader, TraceRecord};

/// One record of the current command.
#[derive(Clone, Debug)]
struct Item {
    op: Op,
    key: Range<usize>,
    value_size: u64,
    ttl_s: u32,
}

/// Reads `redis-cli monitor` output.
pub struct MonitorReader {
    input: Input,
    info: TraceInfo,
    /// The current line.
    line: Vec<u8>,
    /// The current command's decoded arguments, back to back, and their ranges.
    args: Vec<u8>,
    spans: Vec<Range<usize>>,
    items: Vec<Item>,
    next: usize,
    ts: u64,
    db: u32,
}

impl MonitorReader {
    pub(crate) fn new(input: Input) -> MonitorReader {
        MonitorReader {
            input,
            info: TraceInfo {
                format: "monitor".to_string(),
                key_encoding: KeyEncoding::Bytes,
                time_unit: TimeUnit::Micros,
                has_sizes: true,
                has_next_access: false,
                has_outcomes: false,
                meta: Vec::new(),
            },
            line: Vec::new(),
            args: Vec::new(),
            spans: Vec::new(),
            items: Vec::new(),
            next: 0,
            ts: 0,
            db: 0,
        }
    }

    /// Parses one line into `items`; `Ok(false)` for a line to skip.
    fn parse(&mut self, line: &[u8]) -> Result<bool, &'static str> {
        let line = line.trim_ascii();
        if line.is_empty() || line == b"OK" {
            return Ok(false);
        }
        let sp = memchr::memchr(b' ', line).ok_or("`<time> [<db> <client>] \"CMD\" …` expected")?;
        self.ts = parse_fixed(&line[..sp], 1_000_000).ok_or("the time is not `seconds.micros`")?;
        let rest = &line[sp + 1..];
        let rest = rest
            .strip_prefix(b"[")
            .ok_or("`[<db> <client>]` expected after the time")?;
        let close = memchr::memchr(b']', rest).ok_or("`]` expected after the client")?;
        let client = &rest[..close];
        let db_end = memchr::memchr(b' ', client).unwrap_or(client.len());
        self.db = parse_u64(&client[..db_end])
            .and_then(|d| u32::try_from(d).ok())
            .ok_or("the database number is not an integer")?;
        self.args.clear();
        self.spans.clear();
        let mut s = &rest[close + 1..];
        loop {
            s = s.trim_ascii_start();
            let Some(body) = s.strip_prefix(b"\"") else {
                if s.is_empty() {
                    break;
                }
                return Err("a quoted argument expected");
            };
            let start = self.args.len();
            let mut i = 0;
            loop {
                match body.get(i) {
                    None => return Err("an argument's closing quote is missing"),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        let c = *body.get(i + 1).ok_or("a backslash ends the line")?;
                        i += 2;
                        match c {
                            b'n' => self.args.push(b'\n'),
                            b'r' => self.args.push(b'\r'),
                            b't' => self.args.push(b'\t'),
                            b'a' => self.args.push(7),
                            b'b' => self.args.push(8),
                            b'x' => {
                                let h = body.get(i..i + 2).ok_or("`\\x` needs two hex digits")?;
                                let v = std::str::from_utf8(h)
                                    .ok()
                                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                                    .ok_or("`\\x` needs two hex digits")?;
                                self.args.push(v);
                                i += 2;
                            }
                            other => self.args.push(other),
                        }
                    }
                    Some(&b) => {
                        self.args.push(b);
                        i += 1;
                    }
                }
            }
            self.spans.push(start..self.args.len());
            s = &body[i + 1..];
        }
        if self.spans.is_empty() {
            return Err("no command on the line");
        }
        self.items.clear();
        self.next = 0;
        let cmd = self.args[self.spans[0].clone()].to_ascii_uppercase();
        let n = self.spans.len();
        let arg = |i: usize| self.spans.get(i).cloned();
        let len = |i: usize| self.spans.get(i).map_or(0, |r| r.len() as u64);
        let one = |op: Op, value_size: u64, ttl_s: u32| Item {
            op,
            key: arg(1).unwrap_or(0..0),
            value_size,
            ttl_s,
        };
        match cmd.as_slice() {
            b"GET" | b"GETEX" | b"GETDEL" => self.items.push(one(Op::Get, 0, 0)),
            b"SET" | b"GETSET" => {
                let ttl = self.set_ttl();
                self.items.push(one(Op::Set, len(2), ttl));
            }
            b"SETEX" | b"PSETEX" => {
                let t = arg(2).and_then(|r| parse_u64(&self.args[r])).unwrap_or(0);
                let ttl = if cmd == b"SETEX" { t } else { t.div_ceil(1000) };
                self.items
                    .push(one(Op::Set, len(3), u32::try_from(ttl).unwrap_or(u32::MAX)));
            }
            b"SETNX" => self.items.push(one(Op::Add, len(2), 0)),
            b"APPEND" => self.items.push(one(Op::Append, len(2), 0)),
            b"INCR" | b"INCRBY" | b"INCRBYFLOAT" => self.items.push(one(Op::Incr, 0, 0)),
            b"DECR" | b"DECRBY" => self.items.push(one(Op::Decr, 0, 0)),
            b"MGET" | b"DEL" | b"UNLINK" => {
                let op = if cmd == b"MGET" { Op::Get } else { Op::Delete };
                for i in 1..n {
                    self.items.push(Item {
                        op,
                        key: self.spans[i].clone(),
                        value_size: 0,
                        ttl_s: 0,
                    });
                }
            }
            b"MSET" | b"MSETNX" => {
                let op = if cmd == b"MSET" { Op::Set } else { Op::Add };
                for i in (1..n.saturating_sub(1)).step_by(2) {
                    self.items.push(Item {
                        op,
                        key: self.spans[i].clone(),
                        value_size: len(i + 1),
                        ttl_s: 0,
                    });
                }
            }
            _ => self.items.push(one(Op::Other, 0, 0)),
        }
        Ok(!self.items.is_empty())
    }

    /// The TTL of a SET's options (`EX s`, `PX ms`, `EXAT t`, `PXAT t`), in seconds.
    fn set_ttl(&self) -> u32 {
        let now_s = self.ts / 1_000_000;
        let mut i = 3;
        while i + 1 < self.spans.len() {
            let opt = self.args[self.spans[i].clone()].to_ascii_uppercase();
            let v = parse_u64(&self.args[self.spans[i + 1].clone()]);
            let ttl = match (opt.as_slice(), v) {
                (b"EX", Some(s)) => Some(s),
                (b"PX", Some(ms)) => Some(ms.div_ceil(1000)),
                (b"EXAT", Some(t)) => Some(t.saturating_sub(now_s)),
                (b"PXAT", Some(t)) => Some(t.div_ceil(1000).saturating_sub(now_s)),
                _ => None,
            };
            if let Some(t) = ttl {
                return u32::try_from(t).unwrap_or(u32::MAX);
            }
            i += 1;
        }
        0
    }
}

impl TraceReader for MonitorReader {
    fn info(&self) -> &TraceInfo {
        &self.info
    }

    fn read(&mut self, rec: &mut TraceRecord) -> Result<bool, TraceError> {
        while self.next >= self.items.len() {
            let Some(l) = self.input.line()? else {
                return Ok(false);
            };
            // Copy the line out of the input's buffer: `parse` fills `self`.
            self.line.clear();
            self.line.extend_from_slice(l);
            let line = std::mem::take(&mut self.line);
            let r = self.parse(&line);
            self.line = line;
            if let Err(what) = r {
                self.items.clear();
                return Err(self.input.bad_line(what));
            }
        }
        let item = &self.items[self.next];
        rec.clear();
        rec.ts = self.ts;
        rec.op = item.op;
        rec.set_key(&self.args[item.key.clone()]);
        rec.value_size = item.value_size;
        rec.ttl_s = item.ttl_s;
        rec.cf = self.db;
        rec.batch_len = u32::try_from(self.items.len()).unwrap_or(u32::MAX);
        rec.batch_pos = u32::try_from(self.next).unwrap_or(u32::MAX);
        self.next += 1;
        Ok(true)
    }
}

//! One block's records as columns: the writer gathers each field of every record into
//! its column, the reader decodes whole columns at once and then hands out records by
//! index. The byte layout is in the parent module's docs.

use crate::{key_id, Op, Outcome, TraceRecord};

/// The numeric columns, in the order the block holds them.
pub(super) const C_OP: usize = 0;
pub(super) const C_TS: usize = 1;
pub(super) const C_KEY_LEN: usize = 2;
pub(super) const C_ID: usize = 3;
pub(super) const C_KEY_SIZE: usize = 4;
pub(super) const C_VALUE_SIZE: usize = 5;
pub(super) const C_SCAN_LEN: usize = 6;
pub(super) const C_TTL: usize = 7;
pub(super) const C_CF: usize = 8;
pub(super) const C_NEXT: usize = 9;
pub(super) const C_BATCH_LEN: usize = 10;
pub(super) const C_BATCH_POS: usize = 11;
pub(super) const C_OUTCOME: usize = 12;
pub(super) const C_LATENCY: usize = 13;
pub(super) const C_INTENDED: usize = 14;
pub(super) const C_LOWER_LEN: usize = 15;
pub(super) const C_UPPER_LEN: usize = 16;
/// How many numeric columns there are.
pub(super) const COLUMNS: usize = 17;

/// Columns holding 32-bit fields (after their transform).
const U32_COLUMNS: [usize; 6] = [
    C_KEY_SIZE,
    C_SCAN_LEN,
    C_TTL,
    C_CF,
    C_BATCH_LEN,
    C_BATCH_POS,
];

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn outcome_code(o: Outcome) -> u64 {
    match o {
        Outcome::Unknown => 0,
        Outcome::Hit => 1,
        Outcome::Miss => 2,
        Outcome::Error => 3,
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Records being gathered into a block.
#[derive(Default)]
pub(super) struct BlockBuilder {
    cols: [Vec<u64>; COLUMNS],
    keys: Vec<u8>,
    lowers: Vec<u8>,
    uppers: Vec<u8>,
    prev_ts: u64,
}

impl BlockBuilder {
    /// Records gathered.
    pub(super) fn len(&self) -> usize {
        self.cols[C_OP].len()
    }

    /// Bytes the block will hold before compression, at most.
    pub(super) fn raw_bound(&self) -> usize {
        self.len() * 8 * COLUMNS + self.keys.len() + self.lowers.len() + self.uppers.len() + 16
    }

    /// Bytes of keys and bounds gathered.
    pub(super) fn byte_len(&self) -> usize {
        self.keys.len() + self.lowers.len() + self.uppers.len()
    }

    /// Adds one record. Every field is stored so that its default is 0, which a block
    /// then does not store at all.
    #[inline]
    pub(super) fn push(&mut self, r: &TraceRecord) {
        let implied = if r.key.is_empty() { 0 } else { key_id(&r.key) };
        self.push_id_xor(r, r.id ^ implied);
    }

    /// [`BlockBuilder::push`] of a record whose id is the one its key implies (the
    /// id column holds 0), without hashing the key.
    #[inline]
    pub(super) fn push_key_id(&mut self, r: &TraceRecord) {
        // An empty key implies no id: its id (the hash of nothing) is stored.
        let id_xor = if r.key.is_empty() { key_id(b"") } else { 0 };
        self.push_id_xor(r, id_xor);
    }

    /// Adds one record whose id column holds `id_xor` (its id XOR the key's id).
    #[inline]
    fn push_id_xor(&mut self, r: &TraceRecord, id_xor: u64) {
        let c = &mut self.cols;
        // Op::ALL is in declaration order, so the discriminant is the op's position.
        c[C_OP].push(r.op as u64);
        c[C_TS].push(zigzag(r.ts.wrapping_sub(self.prev_ts) as i64));
        self.prev_ts = r.ts;
        c[C_KEY_LEN].push(r.key.len() as u64);
        self.keys.extend_from_slice(&r.key);
        c[C_ID].push(id_xor);
        c[C_KEY_SIZE].push(u64::from(r.key_size) ^ r.key.len() as u64);
        c[C_VALUE_SIZE].push(r.value_size);
        c[C_SCAN_LEN].push(u64::from(r.scan_len));
        c[C_TTL].push(u64::from(r.ttl_s));
        c[C_CF].push(u64::from(r.cf));
        c[C_NEXT].push(zigzag(r.next_access.wrapping_add(1)));
        c[C_BATCH_LEN].push(u64::from(r.batch_len ^ 1));
        c[C_BATCH_POS].push(u64::from(r.batch_pos));
        c[C_OUTCOME].push(outcome_code(r.outcome));
        c[C_LATENCY].push(r.latency_ns);
        // Relative to the request's own time: 0 in a closed loop (intended = sent).
        c[C_INTENDED].push(zigzag(r.intended_ns.wrapping_sub(r.ts) as i64));
        c[C_LOWER_LEN].push(r.lower_bound.len() as u64);
        self.lowers.extend_from_slice(&r.lower_bound);
        c[C_UPPER_LEN].push(r.upper_bound.len() as u64);
        self.uppers.extend_from_slice(&r.upper_bound);
    }

    /// Writes the block's raw bytes to `out` and starts a new block.
    pub(super) fn encode(&mut self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for col in &mut self.cols {
            // The width needs only the highest bit set in any value: an OR, which
            // vectorizes (a `max` did not, ~130 instructions a record).
            let bits = col.iter().fold(0u64, |acc, &v| acc | v);
            let width: u8 = match bits {
                0 => 0,
                1..=0xff => 1,
                0x100..=0xffff => 2,
                0x1_0000..=0xffff_ffff => 4,
                _ => 8,
            };
            out.push(width);
            match width {
                0 => {}
                1 => out.extend(col.iter().map(|&v| v as u8)),
                2 => col
                    .iter()
                    .for_each(|&v| out.extend_from_slice(&(v as u16).to_le_bytes())),
                4 => col
                    .iter()
                    .for_each(|&v| out.extend_from_slice(&(v as u32).to_le_bytes())),
                _ => col
                    .iter()
                    .for_each(|&v| out.extend_from_slice(&v.to_le_bytes())),
            }
            col.clear();
        }
        out.extend_from_slice(&self.keys);
        out.extend_from_slice(&self.lowers);
        out.extend_from_slice(&self.uppers);
        self.keys.clear();
        self.lowers.clear();
        self.uppers.clear();
        self.prev_ts = 0;
    }
}

/// A decoded block: its columns, and which of them hold anything but zeros.
#[derive(Default)]
pub(super) struct Columns {
    n: usize,
    present: u32,
    /// The file's layout version (how intended times are stored).
    version: u32,
    cols: [Vec<u64>; COLUMNS],
    /// Offsets of keys, lower bounds and upper bounds in the raw block.
    keys: usize,
    lowers: usize,
    uppers: usize,
}

/// Where the next record's byte strings start in the raw block.
#[derive(Clone, Copy, Default)]
pub(super) struct Cursor {
    /// The next record's index.
    pub(super) i: usize,
    key: usize,
    lower: usize,
    upper: usize,
}

impl Columns {
    /// Records in the block.
    pub(super) fn len(&self) -> usize {
        self.n
    }

    /// A cursor at the first record.
    pub(super) fn start(&self) -> Cursor {
        Cursor {
            i: 0,
            key: self.keys,
            lower: self.lowers,
            upper: self.uppers,
        }
    }

    /// Decodes the columns of the raw block `raw`, which says it holds `count` records.
    /// `version` is the file's layout version: before 2, intended times are absolute.
    /// On an error, the block holds no records.
    pub(super) fn decode(&mut self, raw: &[u8], count: u32, version: u32) -> Result<(), String> {
        // No records until every check passed: a reader never fills from a damaged block.
        self.n = 0;
        let mut pos = 0;
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = *raw.get(pos).ok_or("the block ends in its record count")?;
            pos += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                break;
            }
        }
        if n != u64::from(count) {
            return Err(format!(
                "the block holds {n} records, its header says {count}"
            ));
        }
        // A column of defaults costs one byte whatever the count: without this bound, a
        // block of a few bytes could hand out billions of records.
        if count as usize > super::BLOCK_RECORDS {
            return Err(format!(
                "the block holds {count} records; a writer puts at most {} in one",
                super::BLOCK_RECORDS
            ));
        }
        let n = count as usize;
        self.present = 0;
        self.version = version;
        for (c, col) in self.cols.iter_mut().enumerate() {
            let width = *raw.get(pos).ok_or("the block ends in a column's width")? as usize;
            pos += 1;
            col.clear();
            if width == 0 {
                continue;
            }
            let end = n
                .checked_mul(width)
                .and_then(|b| b.checked_add(pos))
                .filter(|&e| e <= raw.len())
                .ok_or_else(|| format!("column {c} runs past the block"))?;
            let bytes = &raw[pos..end];
            match width {
                1 => col.extend(bytes.iter().map(|&b| u64::from(b))),
                2 => col.extend(
                    bytes
                        .chunks_exact(2)
                        .map(|b| u64::from(u16::from_le_bytes([b[0], b[1]]))),
                ),
                4 => col.extend(
                    bytes
                        .chunks_exact(4)
                        .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
                ),
                8 => col.extend(bytes.chunks_exact(8).map(|b| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    u64::from_le_bytes(a)
                })),
                w => {
                    return Err(format!(
                        "column {c} has width {w}; 0, 1, 2, 4 or 8 expected"
                    ))
                }
            }
            pos = end;
            self.present |= 1 << c;
        }
        // Validate once, so that handing out records cannot fail.
        if self.cols[C_OP]
            .iter()
            .any(|&op| op as usize >= Op::ALL.len())
        {
            return Err(format!("an op code past the {} known ops", Op::ALL.len()));
        }
        if self.cols[C_OUTCOME].iter().any(|&o| o > 3) {
            return Err("an outcome code over 3".to_string());
        }
        for c in U32_COLUMNS {
            let lens = &self.cols[C_KEY_LEN];
            let bad = if c == C_KEY_SIZE {
                // Stored as key_size XOR the key's length.
                self.cols[c]
                    .iter()
                    .enumerate()
                    .any(|(i, &v)| v ^ lens.get(i).copied().unwrap_or(0) > u64::from(u32::MAX))
            } else {
                self.cols[c].iter().any(|&v| v > u64::from(u32::MAX))
            };
            if bad {
                return Err(format!("column {c} holds a value over 32 bits"));
            }
        }
        let sum = |c: usize| -> Result<usize, String> {
            self.cols[c]
                .iter()
                .try_fold(0usize, |a, &l| a.checked_add(usize::try_from(l).ok()?))
                .ok_or_else(|| format!("column {c}'s lengths overflow"))
        };
        let (keys, lowers, uppers) = (sum(C_KEY_LEN)?, sum(C_LOWER_LEN)?, sum(C_UPPER_LEN)?);
        let want = [keys, lowers, uppers]
            .into_iter()
            .try_fold(pos, usize::checked_add)
            .ok_or("byte string lengths overflow")?;
        if want != raw.len() {
            return Err(format!(
                "the block's byte strings take {} bytes, it holds {}",
                want - pos,
                raw.len() - pos
            ));
        }
        self.keys = pos;
        self.lowers = pos + keys;
        self.uppers = pos + keys + lowers;
        // Absolute timestamps from the deltas.
        if self.present & (1 << C_TS) != 0 {
            let mut ts: u64 = 0;
            for v in &mut self.cols[C_TS] {
                ts = ts.wrapping_add(unzigzag(*v) as u64);
                *v = ts;
            }
        }
        // Version 2 stores intended times as zigzag(intended − ts).
        if version >= 2 && self.present & (1 << C_INTENDED) != 0 {
            let ts_present = self.present & (1 << C_TS) != 0;
            for i in 0..self.cols[C_INTENDED].len() {
                let ts = if ts_present { self.cols[C_TS][i] } else { 0 };
                let v = &mut self.cols[C_INTENDED][i];
                *v = ts.wrapping_add(unzigzag(*v) as u64);
            }
        }
        self.n = n;
        Ok(())
    }

    /// Fills `rec` with the record at `cur` of the block `raw` (which [`Columns::decode`]
    /// checked) and moves `cur` on.
    #[inline]
    pub(super) fn fill(&self, raw: &[u8], cur: &mut Cursor, rec: &mut TraceRecord) {
        let i = cur.i;
        let p = self.present;
        let get = |c: usize| {
            if p & (1 << c) != 0 {
                self.cols[c][i]
            } else {
                0
            }
        };
        rec.op = Op::ALL[get(C_OP) as usize];
        rec.ts = get(C_TS);
        let key_len = get(C_KEY_LEN) as usize;
        rec.key.clear();
        rec.key.extend_from_slice(&raw[cur.key..cur.key + key_len]);
        cur.key += key_len;
        rec.id = if key_len > 0 {
            key_id(&rec.key) ^ get(C_ID)
        } else {
            get(C_ID)
        };
        rec.key_size = (get(C_KEY_SIZE) ^ key_len as u64) as u32;
        rec.value_size = get(C_VALUE_SIZE);
        rec.scan_len = get(C_SCAN_LEN) as u32;
        rec.ttl_s = get(C_TTL) as u32;
        rec.cf = get(C_CF) as u32;
        rec.next_access = unzigzag(get(C_NEXT)).wrapping_sub(1);
        rec.batch_len = (get(C_BATCH_LEN) as u32) ^ 1;
        rec.batch_pos = get(C_BATCH_POS) as u32;
        rec.outcome = match get(C_OUTCOME) {
            0 => Outcome::Unknown,
            1 => Outcome::Hit,
            2 => Outcome::Miss,
            _ => Outcome::Error,
        };
        rec.latency_ns = get(C_LATENCY);
        rec.intended_ns = if p & (1 << C_INTENDED) != 0 || self.version < 2 {
            get(C_INTENDED)
        } else {
            // Version 2, every intended time equal to its ts.
            rec.ts
        };
        let lower_len = get(C_LOWER_LEN) as usize;
        rec.lower_bound.clear();
        rec.lower_bound
            .extend_from_slice(&raw[cur.lower..cur.lower + lower_len]);
        cur.lower += lower_len;
        let upper_len = get(C_UPPER_LEN) as usize;
        rec.upper_bound.clear();
        rec.upper_bound
            .extend_from_slice(&raw[cur.upper..cur.upper + upper_len]);
        cur.upper += upper_len;
        cur.i += 1;
    }
}

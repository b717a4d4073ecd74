//! The per-operation formulas of db_bench's `MixGraph` (RocksDB 7.8
//! `tools/db_bench_tool.cc`): `QueryDecider` ([`OpMix`]), `ParetoCdfInversion`,
//! `PowerCdfInversion` and `GenerateKeyFromInt` ([`KeyFormat`]).

use super::MixGraphConfig;

/// The kind of one mixgraph operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A point read.
    Get,
    /// A write of a value.
    Put,
    /// An iterator seek, then `scan_len` calls of `Next()`.
    Seek,
}

/// 2⁶³, the first double past `i64::MAX`.
pub(crate) const TWO_POW_63: f64 = (1u64 << 63) as f64;

/// C++'s `static_cast<int64_t>(double)` as x86-64 executes it (`cvttsd2si`): truncation,
/// and `i64::MIN` for NaN and anything out of range (where Rust's `as` saturates). db_bench
/// hits it with `u = 0`, where `pow(0, −k)` is infinite.
#[inline]
pub fn f64_to_i64_x86(x: f64) -> i64 {
    if x.is_nan() || x >= TWO_POW_63 {
        i64::MIN
    } else {
        x as i64
    }
}

/// db_bench's `ParetoCdfInversion(u, theta, k, sigma)`: the generalized Pareto inverse
/// CDF `θ + σ·(u^{−k} − 1)/k` (`θ − σ·ln u` for `k = 0`), rounded up, cast as x86 casts
/// ([`f64_to_i64_x86`]).
#[inline]
pub fn pareto_cdf_inversion(u: f64, theta: f64, k: f64, sigma: f64) -> i64 {
    let ret = if k == 0.0 {
        theta - sigma * u.ln()
    } else {
        theta + sigma * (u.powf(-k) - 1.0) / k
    };
    f64_to_i64_x86(ret.ceil())
}

/// db_bench's `PowerCdfInversion(u, a, b)`: the rank `⌈(u/a)^{1/b}⌉` of the power model
/// `a·x^b`, cast as x86 casts.
#[inline]
pub fn power_cdf_inversion(u: f64, a: f64, b: f64) -> i64 {
    f64_to_i64_x86((u / a).powf(1.0 / b).ceil())
}

/// db_bench's `QueryDecider`: the ratios scaled to integer bounds out of about 1000.
#[derive(Clone, Debug, PartialEq)]
pub struct OpMix {
    /// Cumulative bounds: Get below `bounds[0]`, Put below `bounds[1]`, Seek below
    /// `bounds[2]`.
    bounds: [i64; 3],
    /// The last bound (`range_`): draws are taken modulo it.
    range: i64,
    /// Each kind's ratio over the sum (`ratio_`).
    shares: [f64; 3],
}

impl OpMix {
    /// `QueryDecider::Initiate({get, put, seek})`: `range += ⌈1000 · ratio / sum⌉` for
    /// each ratio in turn. The caller guarantees non-negative ratios with a positive sum.
    pub fn new(config: &MixGraphConfig) -> OpMix {
        let ratios = [
            config.mix_get_ratio,
            config.mix_put_ratio,
            config.mix_seek_ratio,
        ];
        let sum: f64 = ratios.iter().sum();
        let mut bounds = [0i64; 3];
        let mut shares = [0f64; 3];
        let mut range = 0i64;
        for (i, &ratio) in ratios.iter().enumerate() {
            range += (1000.0 * (ratio / sum)).ceil() as i64;
            bounds[i] = range;
            shares[i] = ratio / sum;
        }
        OpMix {
            bounds,
            range,
            shares,
        }
    }

    /// `QueryDecider::GetType(draw)`: the first kind whose bound exceeds
    /// `draw % range` (Get when none does).
    #[inline]
    pub fn kind(&self, draw: u64) -> OpKind {
        let pos = (draw % self.range as u64) as i64;
        if pos < self.bounds[0] {
            OpKind::Get
        } else if pos < self.bounds[1] {
            OpKind::Put
        } else if pos < self.bounds[2] {
            OpKind::Seek
        } else {
            OpKind::Get
        }
    }

    /// The exact probability of each kind under uniform draws over `0..range`
    /// (db_bench's rounding included): `[get, put, seek]`.
    pub fn probabilities(&self) -> [f64; 3] {
        let r = self.range as f64;
        [
            self.bounds[0] as f64 / r,
            (self.bounds[1] - self.bounds[0]) as f64 / r,
            (self.bounds[2] - self.bounds[1]) as f64 / r,
        ]
    }

    /// The draws that make a Put: `draw % range` in `lo..hi`, as `(lo, hi, range)`.
    pub fn put_slots(&self) -> (u64, u64, u64) {
        (
            self.bounds[0].max(0) as u64,
            self.bounds[1].max(0) as u64,
            self.range.max(1) as u64,
        )
    }

    /// The ratios over their sum (db_bench's `ratio_`; the sine rate's read share is
    /// Get + Seek, its write share Put).
    pub fn shares(&self) -> [f64; 3] {
        self.shares
    }
}

/// db_bench's `GenerateKeyFromInt` for one key size: an optional prefix, then the
/// big-endian bytes of the key number, padded with ASCII `'0'`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyFormat {
    key_size: usize,
    /// `num / keys_per_prefix` when `keys_per_prefix > 0`.
    prefixes: Option<u64>,
    prefix_size: usize,
}

impl KeyFormat {
    /// The format of `config`'s keys. The caller guarantees a validated config.
    pub fn new(config: &MixGraphConfig) -> KeyFormat {
        KeyFormat {
            key_size: config.key_size as usize,
            prefixes: (config.keys_per_prefix > 0)
                .then(|| (config.num / config.keys_per_prefix) as u64),
            prefix_size: config.prefix_size as usize,
        }
    }

    /// Key length in bytes.
    pub fn key_size(&self) -> usize {
        self.key_size
    }

    /// A buffer holding the padding: [`KeyFormat::write`] then only writes the bytes
    /// that vary.
    pub fn buffer(&self) -> Vec<u8> {
        vec![b'0'; self.key_size]
    }

    /// Writes key number `v` (db_bench passes a negative key number as its two's
    /// complement) into `key`, a buffer from [`KeyFormat::buffer`]:
    ///
    /// - with `keys_per_prefix > 0`: the big-endian low `min(prefix_size, 8)` bytes of
    ///   `v % (num / keys_per_prefix)`, then `'0'` up to `prefix_size`;
    /// - the big-endian low `min(key_size − used, 8)` bytes of `v`;
    /// - `'0'` up to `key_size`.
    #[inline]
    pub fn write(&self, v: u64, key: &mut [u8]) {
        let mut pos = 0;
        if let Some(prefixes) = self.prefixes {
            let prefix = v % prefixes;
            let fill = self.prefix_size.min(8);
            write_be_low(prefix, &mut key[..fill]);
            pos = self.prefix_size;
        }
        let fill = (self.key_size - pos).min(8);
        write_be_low(v, &mut key[pos..pos + fill]);
    }
}

/// The low `out.len()` (≤ 8) bytes of `v`, most significant first.
#[inline]
fn write_be_low(v: u64, out: &mut [u8]) {
    let bytes = v.to_be_bytes();
    out.copy_from_slice(&bytes[8 - out.len()..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_x86() {
        assert_eq!(f64_to_i64_x86(f64::INFINITY), i64::MIN);
        assert_eq!(f64_to_i64_x86(f64::NEG_INFINITY), i64::MIN);
        assert_eq!(f64_to_i64_x86(f64::NAN), i64::MIN);
        assert_eq!(f64_to_i64_x86(TWO_POW_63), i64::MIN);
        assert_eq!(f64_to_i64_x86(-2.7), -2);
        assert_eq!(f64_to_i64_x86(1e18), 1_000_000_000_000_000_000);
    }

    #[test]
    fn inversions_at_the_edges() {
        // u = 0: the Pareto inverse is infinite (k > 0) or ln 0 = −inf (k = 0).
        assert_eq!(pareto_cdf_inversion(0.0, 0.0, 0.2615, 25.45), i64::MIN);
        assert_eq!(pareto_cdf_inversion(0.0, 0.0, 0.0, 25.45), i64::MIN);
        // u → 1: θ, rounded up.
        assert_eq!(pareto_cdf_inversion(1.0, 3.5, 0.2615, 25.45), 4);
        // u = 0.5, k = 0: θ + σ ln 2.
        assert_eq!(pareto_cdf_inversion(0.5, 0.0, 0.0, 10.0), 7);
        // ⌈(0.5/0.5)^(1/2)⌉ = 1; b < 0 at u = 0 is infinite.
        assert_eq!(power_cdf_inversion(0.5, 0.5, 2.0), 1);
        assert_eq!(power_cdf_inversion(0.0, 0.5, -0.7), i64::MIN);
    }

    #[test]
    fn op_mix_bounds_round_up_each_ratio() {
        let c = |get, put, seek| MixGraphConfig {
            mix_get_ratio: get,
            mix_put_ratio: put,
            mix_seek_ratio: seek,
            ..MixGraphConfig::default()
        };
        let m = OpMix::new(&c(0.85, 0.14, 0.01));
        assert_eq!((m.bounds, m.range), ([850, 990, 1000], 1000));
        assert_eq!(m.kind(849), OpKind::Get);
        assert_eq!(m.kind(850), OpKind::Put);
        assert_eq!(m.kind(1999), OpKind::Seek);
        // Thirds: each ⌈333.33…⌉ = 334, range 1002.
        let m = OpMix::new(&c(1.0, 1.0, 1.0));
        assert_eq!((m.bounds, m.range), ([334, 668, 1002], 1002));
        // A zero ratio takes no draws.
        let m = OpMix::new(&c(1.0, 0.0, 1.0));
        assert_eq!(m.probabilities(), [0.5, 0.0, 0.5]);
    }

    #[test]
    fn keys_are_big_endian_and_zero_padded() {
        let c = |key_size, keys_per_prefix, prefix_size| MixGraphConfig {
            key_size,
            keys_per_prefix,
            prefix_size,
            num: 1000,
            ..MixGraphConfig::default()
        };
        let f = KeyFormat::new(&c(16, 0, 0));
        let mut k = f.buffer();
        f.write(0x0102_0304_0506_0708, &mut k);
        assert_eq!(&k, b"\x01\x02\x03\x04\x05\x06\x07\x0800000000");
        // Short keys keep the low bytes.
        let f = KeyFormat::new(&c(4, 0, 0));
        let mut k = f.buffer();
        f.write(0x0102_0304_0506_0708, &mut k);
        assert_eq!(&k, b"\x05\x06\x07\x08");
        // Negative key numbers are two's complement.
        let f = KeyFormat::new(&c(10, 0, 0));
        let mut k = f.buffer();
        f.write(-2i64 as u64, &mut k);
        assert_eq!(&k, b"\xff\xff\xff\xff\xff\xff\xff\xfe00");
        // 100 prefixes (1000 keys / 10): prefix 1234 % 100 = 34 in 10 bytes (8 + '0's).
        let f = KeyFormat::new(&c(20, 10, 10));
        let mut k = f.buffer();
        f.write(1234, &mut k);
        assert_eq!(&k, b"\0\0\0\0\0\0\0\x2200\0\0\0\0\0\0\x04\xd200");
    }
}

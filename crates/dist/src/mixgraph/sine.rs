//! [`SineSchedule`]: db_bench's sine-modulated request rate (`-sine_mix_rate`, RocksDB
//! 7.8 `tools/db_bench_tool.cc`: `SineRate`, `AddNoise` and the rate update in
//! `MixGraph`) as a sequence of due times, and [`GlibcRand`], the C library `rand()` its
//! noise comes from.

use super::{MixGraphConfig, MixGraphError};

/// glibc's `rand()`/`random()` (the `TYPE_3` additive feedback generator, `stdlib/random_r.c`):
/// `r[i] = r[i−3] + r[i−31] (mod 2³²)` after seeding `r[0..31)` by
/// `16807 · r mod (2³¹ − 1)` and discarding 310 outputs; each output is `r >> 1`.
#[derive(Clone, Debug)]
pub struct GlibcRand {
    ring: [u32; 34],
    next: usize,
}

impl GlibcRand {
    /// The generator after `srand(seed)` (a program that never calls `srand` has seed 1).
    pub fn new(seed: u32) -> GlibcRand {
        let mut r = [0u32; 34];
        // glibc stores a seed of 0 as 1.
        r[0] = if seed == 0 { 1 } else { seed };
        for i in 1..31 {
            // Schrage's method on the signed words, exactly as `srandom_r`.
            let word = r[i - 1] as i32 as i64;
            let hi = word / 127_773;
            let lo = word % 127_773;
            let mut w = 16_807 * lo - 2_836 * hi;
            if w < 0 {
                w += 2_147_483_647;
            }
            r[i] = w as u32;
        }
        for i in 31..34 {
            r[i] = r[i - 31];
        }
        let mut g = GlibcRand { ring: r, next: 34 };
        for _ in 0..310 {
            g.step();
        }
        g
    }

    /// The next raw word of the recurrence.
    fn step(&mut self) -> u32 {
        let i = self.next % 34;
        let w = self.ring[(i + 34 - 31) % 34].wrapping_add(self.ring[(i + 34 - 3) % 34]);
        self.ring[i] = w;
        self.next = i + 1;
        w
    }

    /// The next `rand()`, in `0..2³¹`.
    pub fn rand(&mut self) -> i32 {
        (self.step() >> 1) as i32
    }
}

/// db_bench's sine-modulated rate (`-sine_mix_rate`) as request due times.
///
/// # How db_bench paces mixgraph
///
/// With `-sine_mix_rate`, db_bench makes two `GenericRateLimiter`s (100 ms refill
/// period), shared by all threads of the run and used as operation counters: one for
/// reads at first allowing 1,000,000 per second, one for writes at the same. Each thread
/// keeps its own interval clock; at its first operation more than
/// `sine_mix_rate_interval_milliseconds` after its last update, it computes
/// `rate = AddNoise(A·sin(B·t + C) + D)` (t = seconds since the thread started) and sets
/// the read limiter to `rate × (get + seek share)` and the write limiter to
/// `rate × put share`, each only when positive. A thread asks the read limiter for 100
/// ops after every 100th Get-or-Seek count reached by a Get, and the write limiter for
/// 100 after every 100th Put; Seeks themselves never wait. So:
///
/// - the rate is the total over all threads (the limiters are shared);
/// - operations leave in bursts of 100, paced to the rate over 100 ms refills;
/// - the first interval runs at the limiters' initial 1,000,000 ops/s (in practice as
///   fast as the store allows), and the tokens left from it make a burst after the
///   first update;
/// - `AddNoise` takes `delta = (rand() % (int)A − (int)A / 2) · noise` from the C
///   library's process-wide `rand()` (never seeded by db_bench: glibc's seed 1), one call
///   per thread per update, and keeps the rate without noise when noise would make it
///   negative;
/// - Debian's db_bench (assertions on) aborts when a limiter's share of a 100 ms refill
///   falls under 100 ops (a rate × share under 1000 ops/s).
///
/// # What kvlab's schedule does
///
/// [`SineSchedule`] gives every request a due time: interval `i` (from `i ·
/// interval`) runs at a constant rate, requests spaced `1/rate` apart, one schedule for
/// the whole run, reads and writes alike (so each kind runs at its share of the rate, as
/// db_bench intends, but evenly spaced rather than in bursts, and Seeks counted). The
/// rate of interval `i ≥ 1` is db_bench's formula at `t = i · interval` with the noise of
/// [`GlibcRand`] from seed 1, one `rand()` per interval (db_bench's single-thread
/// sequence if nothing else in its process calls `rand()` — kvlab's tests check the
/// rate without noise against db_bench, and [`GlibcRand`] against the C library, not the
/// noise sequence against db_bench; with several threads db_bench draws once per thread
/// and the last writer wins). Interval 0 runs at db_bench's initial 1,000,000 ops/s unless
/// [`SineSchedule::modulate_first_interval`] is set. A rate that is not positive keeps
/// the previous interval's rate, as db_bench keeps the limiter's. With several workers,
/// deal the due times out in turn (worker `i` of `n` takes requests `i`, `i + n`, …): the
/// rate stays the run's total, as db_bench's shared limiters keep it.
#[derive(Clone, Debug)]
pub struct SineSchedule {
    a: f64,
    b: f64,
    c: f64,
    d: f64,
    interval_ns: u64,
    noise: f64,
    rand: GlibcRand,
    /// The interval `rate_ops_per_sec` belongs to.
    interval: u64,
    /// Requests per second in `interval`.
    rate_ops_per_sec: f64,
    /// The due time of the next request, in ns from the start.
    due_ns: f64,
}

impl SineSchedule {
    /// Each limiter's rate before the first update (db_bench's `read_rate` and
    /// `write_rate` initial values), in ops/s.
    pub const DB_BENCH_INITIAL_OPS_PER_SEC: f64 = 1_000_000.0;

    /// The schedule of `config`'s `sine_*` flags (validated; `sine_mix_rate` itself is
    /// the caller's decision to use a schedule).
    pub fn new(config: &MixGraphConfig) -> Result<SineSchedule, MixGraphError> {
        // Validated as with `-sine_mix_rate`, which adds the check of `sine_a`.
        MixGraphConfig {
            sine_mix_rate: true,
            ..config.clone()
        }
        .validate()?;
        Ok(SineSchedule {
            a: config.sine_a,
            b: config.sine_b,
            c: config.sine_c,
            d: config.sine_d,
            interval_ns: config.sine_mix_rate_interval_milliseconds * 1_000_000,
            noise: config.sine_mix_rate_noise,
            rand: GlibcRand::new(1),
            interval: 0,
            rate_ops_per_sec: Self::DB_BENCH_INITIAL_OPS_PER_SEC,
            due_ns: 0.0,
        })
    }

    /// Runs interval 0 at the sine's rate at `t = 0` (with noise) instead of db_bench's
    /// initial 1,000,000 ops/s. Call before the first [`SineSchedule::next_due_ns`].
    pub fn modulate_first_interval(mut self) -> SineSchedule {
        let r = self.noisy_rate(0.0);
        if r > 0.0 {
            self.rate_ops_per_sec = r;
        }
        self
    }

    /// db_bench's `SineRate(t)`: `A·sin(B·t + C) + D`, t in seconds.
    pub fn sine_ops_per_sec(&self, t_seconds: f64) -> f64 {
        self.a * (self.b * t_seconds + self.c).sin() + self.d
    }

    /// db_bench's `AddNoise(SineRate(t), noise)`, taking one `rand()`.
    fn noisy_rate(&mut self, t_seconds: f64) -> f64 {
        let origin = self.sine_ops_per_sec(t_seconds);
        let band = self.a as i32;
        let delta = f64::from(self.rand.rand() % band - band / 2) * self.noise;
        if origin + delta < 0.0 {
            origin
        } else {
            origin + delta
        }
    }

    /// The rate of the interval the next request falls in, in ops/s.
    pub fn rate_ops_per_sec(&self) -> f64 {
        self.rate_ops_per_sec
    }

    /// The due time of the next request, in ns from the start of the run (the first is
    /// 0).
    pub fn next_due_ns(&mut self) -> u64 {
        let due = self.due_ns;
        while due >= ((self.interval + 1) * self.interval_ns) as f64 {
            self.interval += 1;
            let t = (self.interval * self.interval_ns) as f64 / 1e9;
            let r = self.noisy_rate(t);
            if r > 0.0 {
                self.rate_ops_per_sec = r;
            }
        }
        self.due_ns = due + 1e9 / self.rate_ops_per_sec;
        due as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_rand_first_outputs() {
        // glibc's rand() without srand: the well-known 1804289383, 846930886, ….
        let mut r = GlibcRand::new(1);
        let first: Vec<i32> = (0..4).map(|_| r.rand()).collect();
        assert_eq!(
            first,
            [1_804_289_383, 846_930_886, 1_681_692_777, 1_714_636_915]
        );
    }

    #[test]
    fn due_times_follow_the_interval_rates() {
        let c = MixGraphConfig {
            sine_mix_rate: true,
            sine_a: 1.0,
            sine_b: 0.0,
            sine_c: 0.0,
            sine_d: 999.0,
            sine_mix_rate_interval_milliseconds: 1000,
            ..MixGraphConfig::default()
        };
        // sin(0) = 0: 999 ops/s everywhere, noise 0; interval 0 at 1e6 ops/s.
        let mut s = SineSchedule::new(&c).expect("valid");
        let first: Vec<u64> = (0..3).map(|_| s.next_due_ns()).collect();
        assert_eq!(first, [0, 1000, 2000]);
        let mut s = SineSchedule::new(&c)
            .expect("valid")
            .modulate_first_interval();
        let first: Vec<u64> = (0..3).map(|_| s.next_due_ns()).collect();
        assert_eq!(first, [0, 1_001_001, 2_002_002]);
        assert_eq!(s.rate_ops_per_sec(), 999.0);
    }
}

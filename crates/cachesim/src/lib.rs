//! kvlab's cache simulator: libCacheSim's eviction policies behind one access loop, with
//! miss counts equal to libCacheSim's, and LRU miss-ratio curves in one pass.
//!
//! - [`SimTrace`]: a trace loaded once (from any [`kvlab_trace::TraceReader`]) into a
//!   compact form — per request a dense object index, a size and a next-access time.
//! - [`PolicySpec`] names a policy and its parameters (`"S3FIFO"`, `"Clock2bit"`…);
//!   [`simulate`] runs one at one [`Capacity`] and returns a [`SimResult`];
//!   [`simulate_many`] runs many (policy, size) pairs on all cores.
//! - [`Simulator::access`] is the one access loop (libCacheSim's `cache_get_base`) every
//!   [`Policy`] runs under: a lookup; on a miss, evict until the object fits, then insert;
//!   an object larger than the cache is a miss and is not admitted.
//! - [`mrc`]: LRU's whole miss-ratio curve from exact stack distances (Olken's algorithm
//!   with a Fenwick tree whose window is compacted, so its memory follows the objects, not
//!   the requests), and SHARDS sampling at a fixed rate or with a fixed sample size.
//! - [`stream`]: the same simulations over a stream read once in [`Block`]s
//!   ([`run_stream`]: one reader, workers each owning a share of the simulators, bounded
//!   read-ahead), with miss counts equal to the whole-trace ones; next-access times from
//!   the trace or from a pass to disk ([`NextAccessFile`]).
//!
//! Semantics are libCacheSim's (the `libcachesim` 0.3.5 PyPI package is the reference the
//! tests compare with): object mode counts every object as size 1 (`ignore_obj_size`);
//! byte mode uses traced sizes with no per-object metadata; requests of size 0 are skipped
//! and counted apart ([`LoadOptions::skip_zero_size`]); a capacity given as a fraction is
//! `max(1, int(frac × working set))`. Each policy module names the upstream file it
//! follows. Policies reproduced miss for miss: LRU, FIFO, Clock, Clock2bit, Sieve, LFU,
//! S3FIFO, ARC, LIRS, TwoQ, SLRU, WTinyLFU (object mode), GDSF, LFUDA and Belady.
//! SampledLRU imitates Redis's `allkeys-lru`.
//!
//! # Example
//!
//! ```
//! use kvlab_cachesim::{simulate_many, Capacity, Mode, PolicySpec, SimOptions, SimTrace};
//!
//! // A trace (here from ids; a real one from a reader: `SimTrace::from_reader`).
//! let trace = SimTrace::from_ids([1, 2, 3, 1, 2, 4, 1, 2, 5, 1]);
//! let size = "40%".parse::<Capacity>()?.resolve(&trace, Mode::Object); // 2 objects
//! let jobs: Vec<(PolicySpec, u64)> = ["LRU", "S3FIFO:small=0.5", "Belady"]
//!     .iter()
//!     .map(|p| Ok((p.parse()?, size)))
//!     .collect::<Result<_, kvlab_cachesim::SimError>>()?;
//! for r in simulate_many(&trace, &jobs, SimOptions::default(), 0) {
//!     let r = r?;
//!     println!("{} {} misses {}", r.policy, r.cache_size, r.misses);
//! }
//! # Ok::<(), kvlab_cachesim::SimError>(())
//! ```
//!
//! # State per object
//!
//! Every policy keeps its state in arrays indexed by dense object index, allocated once for
//! all objects of the trace, so memory is per *distinct object of the trace*, not per
//! resident object. Bytes per object: LRU, FIFO 13; Clock 17; Sieve 14; LFU 17 (+32 per
//! frequency); S3FIFO 30; ARC 13; LIRS 41; TwoQ 26; SLRU 13; WTinyLFU 34 (+ the sketch,
//! 57.5 bytes per object of main capacity); GDSF 16 (+24 per heap entry); LFUDA 21
//! (+ one queue per frequency); Belady 16; SampledLRU 16 (+4 per resident object).
//! A [`SimTrace`] holds 17 bytes per request and 12 per object; a stream
//! ([`BlockBuilder`]) about 20–40 bytes per object (its id table) and none per request,
//! and policies fed a stream grow their arrays as objects appear ([`Policy::grow`]).

#![warn(missing_docs)]

pub mod capacity;
pub mod error;
mod list;
pub mod mrc;
pub mod policy;
pub mod sim;
mod sizes;
pub mod stream;
pub mod trace;

pub use capacity::Capacity;
pub use error::SimError;
pub use policy::{Policy, PolicySpec};
pub use sim::{run_policy, simulate, simulate_many, Mode, SimOptions, SimResult, Simulator};
pub use stream::{run_stream, Block, BlockBuilder, NextAccessFile, StreamJob, StreamStats};
pub use trace::{LoadOptions, OpClass, Req, SimTrace, NEVER};

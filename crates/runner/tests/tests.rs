//! The runner end to end on real stores: per-key hit counts of multi-key reads, and
//! YCSB's read-modify-write.

mod keys;
mod rmw;

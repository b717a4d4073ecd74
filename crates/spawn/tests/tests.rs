//! Starting, sampling and stopping real redis-server and memcached processes (and a
//! Redis Cluster) on free loopback ports.

mod cluster;
mod fuzz_smoke;
mod memcached;
mod redis;

// `stop_all` stops every server this process started, so it is a binary of its own
// (see Cargo.toml).

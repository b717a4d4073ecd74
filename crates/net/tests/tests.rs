//! The network stores against real redis-server (plain, TLS, cluster) and memcached
//! processes started on free loopback ports.

mod cluster;
mod failures;
mod fuzz_smoke;
mod memcached;
mod redis;
mod tls;
mod transports;

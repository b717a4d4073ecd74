//! The sans-IO codecs: RESP and memcached round trips, property tests and the fuzz
//! corpus smoke test.

mod fuzz_smoke;
mod memcache;
mod prop;
mod resp;

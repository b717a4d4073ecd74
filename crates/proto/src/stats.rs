//! Server statistics, in one place: which fields of Redis `INFO` and memcached `stats`
//! kvlab keeps, and how an `INFO` reply's text splits into fields.
//!
//! Two uses read them: a store's statistics after a phase (copied into `result.json`:
//! [`REDIS_RESULT_FIELDS`], [`MEMCACHED_RESULT_FIELDS`]) and the monitor's samples every
//! interval (`store.csv`'s columns: [`REDIS_SAMPLED_FIELDS`], [`MEMCACHED_SAMPLED_FIELDS`]).
//! memcached's `stats` reply is read with [`crate::memcache::parse`] (its
//! [`crate::memcache::Reply::Stat`] units) or, over the binary protocol,
//! [`crate::memcache::binary::parse`].

/// Redis `INFO` fields copied into a phase's store statistics (`result.json`).
pub const REDIS_RESULT_FIELDS: &[&str] = &[
    "redis_version",
    "used_memory",
    "used_memory_peak",
    "maxmemory",
    "maxmemory_policy",
    "mem_fragmentation_ratio",
    "connected_clients",
    "total_commands_processed",
    "total_connections_received",
    "keyspace_hits",
    "keyspace_misses",
    "evicted_keys",
    "expired_keys",
    "used_cpu_sys",
    "used_cpu_user",
    "io_threads_active",
];

/// The Redis statistics the monitor samples, in `store.csv`'s column order: fields of
/// `INFO all`, then `keys` (`DBSIZE` of the selected database).
pub const REDIS_SAMPLED_FIELDS: &[&str] = &[
    "used_memory",
    "used_memory_rss",
    "maxmemory",
    "connected_clients",
    "total_commands_processed",
    "keyspace_hits",
    "keyspace_misses",
    "evicted_keys",
    "expired_keys",
    "keys",
];

/// memcached `stats` (and `stats extstore`) fields copied into a phase's store
/// statistics; counters are summed over servers.
pub const MEMCACHED_RESULT_FIELDS: &[&str] = &[
    "curr_items",
    "total_items",
    "bytes",
    "limit_maxbytes",
    "curr_connections",
    "get_hits",
    "get_misses",
    "get_expired",
    "evictions",
    "reclaimed",
    "cmd_get",
    "cmd_set",
    "rusage_user",
    "rusage_system",
    "threads",
    "extstore_bytes_written",
    "extstore_bytes_read",
    "extstore_objects_written",
    "extstore_objects_read",
    "extstore_bytes_used",
    "extstore_page_evictions",
    "get_extstore",
    "get_flushed",
    "miss_from_extstore",
];

/// The memcached statistics the monitor samples (fields of `stats`), in `store.csv`'s
/// column order. The `extstore_*` and `get_extstore` fields exist only with extstore.
pub const MEMCACHED_SAMPLED_FIELDS: &[&str] = &[
    "curr_items",
    "bytes",
    "limit_maxbytes",
    "curr_connections",
    "get_hits",
    "get_misses",
    "evictions",
    "extstore_objects_written",
    "extstore_bytes_written",
    "extstore_bytes_read",
    "get_extstore",
];

/// The `name:value` fields of a Redis `INFO` reply's text, trimmed, in order; section
/// headers (`# Server`) and blank lines are skipped.
///
/// ```
/// let text = "# Server\r\nredis_version:7.0.15\r\n\r\n# Stats\r\nkeyspace_hits:42\r\n";
/// let fields: Vec<_> = kvlab_proto::stats::info_fields(text).collect();
/// assert_eq!(fields, [("redis_version", "7.0.15"), ("keyspace_hits", "42")]);
/// ```
pub fn info_fields(text: &str) -> impl Iterator<Item = (&str, &str)> + '_ {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_fields_keep_values_with_colons_whole() {
        let text = "# Keyspace\ndb0:keys=3,expires=0,avg_ttl=0\nexecutable:/usr/bin/redis-server\n";
        let fields: Vec<_> = info_fields(text).collect();
        assert_eq!(
            fields,
            [
                ("db0", "keys=3,expires=0,avg_ttl=0"),
                ("executable", "/usr/bin/redis-server")
            ]
        );
    }
}

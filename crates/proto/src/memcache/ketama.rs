//! Ketama consistent hashing of keys over memcached servers.

use crate::md5::md5;

/// A ketama continuum: picks a server for each key so that adding or removing a server
/// moves only the keys of about its share.
///
/// The variant is the original libketama one (last.fm's `ketama.c`), MD5-based and
/// weighted:
///
/// - Each server `i` of weight `w_i` (total `W`, `N` servers) gets
///   `floor(w_i / W * 40 * N)` digests, computed in single precision as `ketama.c` does
///   (`floorf(pct * 40.0 * (float)N)` with `pct` a `float`). With equal weights that is 40
///   digests, 160 points, per server.
/// - Digest `k` (from 0) is `MD5("<name>-<k>")`, where `<name>` is the server string as
///   given (conventionally `host:port`). Each digest gives 4 points:
///   `(d[3+4h] << 24) | (d[2+4h] << 16) | (d[1+4h] << 8) | d[4h]` for `h` in 0..4.
/// - Points are sorted (ties keep server order). A key's hash is the first such word of
///   `MD5(key)` (`h = 0`); its server owns the first point at or above the hash, wrapping
///   to the first point past the largest.
///
/// libmemcached's `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` with MD5 hashing builds the same
/// continuum when the names given here are what it hashes: `host:port` for a port other
/// than 11211, `host` alone for port 11211 (its spymemcached-compatible mode differs).
#[derive(Debug, Clone)]
pub struct Ketama {
    points: Vec<u32>,
    owners: Vec<u32>,
    servers: Vec<String>,
}

impl Ketama {
    /// Builds the continuum for `(name, weight)` pairs. Servers of weight 0 get no points.
    pub fn new<S: AsRef<str>>(servers: &[(S, u32)]) -> Ketama {
        let total: u64 = servers.iter().map(|(_, w)| *w as u64).sum();
        let n = servers.len();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        if total > 0 {
            for (i, (name, weight)) in servers.iter().enumerate() {
                let pct = *weight as f32 / total as f32;
                let digests = ((pct as f64 * 40.0 * n as f32 as f64) as f32).floor() as u32;
                let name = name.as_ref();
                let mut label = Vec::with_capacity(name.len() + 12);
                for k in 0..digests {
                    label.clear();
                    label.extend_from_slice(name.as_bytes());
                    label.push(b'-');
                    crate::num::put_u64(&mut label, k as u64);
                    let d = md5(&label);
                    for h in 0..4 {
                        pairs.push((point(&d, h), i as u32));
                    }
                }
            }
        }
        pairs.sort_by_key(|&(p, _)| p);
        Ketama {
            points: pairs.iter().map(|&(p, _)| p).collect(),
            owners: pairs.iter().map(|&(_, o)| o).collect(),
            servers: servers.iter().map(|(s, _)| s.as_ref().to_owned()).collect(),
        }
    }

    /// Builds the continuum for servers of equal weight.
    pub fn unweighted<S: AsRef<str>>(servers: &[S]) -> Ketama {
        let weighted: Vec<(&str, u32)> = servers.iter().map(|s| (s.as_ref(), 1)).collect();
        Ketama::new(&weighted)
    }

    /// The ketama hash of a key: the first little-endian word of its MD5.
    pub fn hash(key: &[u8]) -> u32 {
        point(&md5(key), 0)
    }

    /// The index (in the list given to [`Ketama::new`]) of the server for `key`; `None` when
    /// no server has points.
    pub fn server_for(&self, key: &[u8]) -> Option<usize> {
        self.server_for_hash(Ketama::hash(key))
    }

    /// The server owning hash `h`: the first point at or above it, wrapping around.
    pub fn server_for_hash(&self, h: u32) -> Option<usize> {
        if self.points.is_empty() {
            return None;
        }
        let i = self.points.partition_point(|&p| p < h);
        let i = if i == self.points.len() { 0 } else { i };
        Some(self.owners[i] as usize)
    }

    /// The name of server `index`, as given.
    pub fn server_name(&self, index: usize) -> Option<&str> {
        self.servers.get(index).map(String::as_str)
    }

    /// The number of servers given (with or without points).
    pub fn server_count(&self) -> usize {
        self.servers.len()
    }

    /// The number of points on the continuum.
    pub fn point_count(&self) -> usize {
        self.points.len()
    }
}

/// Word `h` of a digest, as ketama reads it (little-endian).
fn point(d: &[u8; 16], h: usize) -> u32 {
    u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_weights_give_160_points_each() {
        for n in 1..=10 {
            let names: Vec<String> = (0..n).map(|i| format!("10.0.0.{i}:11211")).collect();
            let k = Ketama::unweighted(&names);
            assert_eq!(k.point_count(), 160 * n, "{n} servers");
        }
    }

    #[test]
    fn weights_scale_points() {
        let k = Ketama::new(&[("a:1", 1), ("b:1", 3)]);
        // pct 0.25 → floor(0.25 * 40 * 2) = 20 digests; 0.75 → 60.
        assert_eq!(k.point_count(), (20 + 60) * 4);
        let k = Ketama::new(&[("a:1", 0), ("b:1", 0)]);
        assert_eq!(k.server_for(b"x"), None);
        let k = Ketama::new::<&str>(&[]);
        assert_eq!(k.server_for(b"x"), None);
    }

    #[test]
    fn lookup_wraps_around() {
        let k = Ketama::unweighted(&["s1:11211", "s2:11211"]);
        let last = *k.points.last().unwrap();
        assert_eq!(k.server_for_hash(u32::MAX), Some(k.owners[0] as usize));
        if last < u32::MAX {
            assert_eq!(k.server_for_hash(last + 1), Some(k.owners[0] as usize));
        }
        assert_eq!(k.server_for_hash(0), Some(k.owners[0] as usize));
        let p = k.points[5];
        assert_eq!(k.server_for_hash(p), Some(k.owners[5] as usize));
    }
}

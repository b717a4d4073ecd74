//! Reading a [`CacheSpec`] from `cache.*` properties.

use std::path::{Path, PathBuf};

use super::{parse_bytes, CacheSpec, CacheWorkload, OpMix, Popularity, SizeDist};
use crate::props::suggestion;
use crate::{Origin, Properties, WorkloadError};

/// Every property a cache workload reads, with its default ("" when it has none).
pub(crate) const CACHE_PROPERTIES: &[(&str, &str)] = &[
    ("cache.data_size", ""),
    ("cache.delete", "0"),
    ("cache.get", "0.9"),
    ("cache.key_size", "fixed:16"),
    ("cache.keys", "1000000"),
    ("cache.lone_get", "0"),
    ("cache.lone_set", "0"),
    ("cache.lookaside", "false"),
    ("cache.operations", "1000000"),
    ("cache.popularity", "zipfian"),
    ("cache.popularity_buckets", ""),
    ("cache.popularity_file", ""),
    ("cache.popularity_weights", ""),
    ("cache.set", "0.1"),
    ("cache.ttl", "none"),
    ("cache.value_size", "fixed:100"),
    ("cache.zipf_theta", "0.99"),
    ("workload", CacheWorkload::CLASS),
];

const POPULARITIES: &[&str] = &["zipfian", "uniform", "buckets", "normal"];

/// Reads typed properties, with errors that name the key and its origin.
struct Reader<'a> {
    props: &'a Properties,
}

impl Reader<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.props.get(key).map(str::trim)
    }

    fn origin(&self, key: &str) -> Origin {
        self.props.origin(key).cloned().unwrap_or(Origin::Default)
    }

    fn invalid(&self, key: &str, expected: &str) -> WorkloadError {
        WorkloadError::InvalidValue {
            key: key.to_string(),
            value: self.get(key).unwrap_or_default().to_string(),
            origin: self.origin(key),
            expected: expected.to_string(),
        }
    }

    fn u64(&self, key: &str, default: u64) -> Result<u64, WorkloadError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| self.invalid(key, "a non-negative integer")),
        }
    }

    fn f64(&self, key: &str, default: f64) -> Result<f64, WorkloadError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => Err(self.invalid(key, "a non-negative number")),
            },
        }
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, WorkloadError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(self.invalid(key, "one of true, false")),
        }
    }

    fn size(&self, key: &str, default: &str) -> Result<SizeDist, WorkloadError> {
        let text = self.get(key).unwrap_or(default);
        SizeDist::parse(text).map_err(|expected| self.invalid(key, &expected))
    }

    fn list<T: std::str::FromStr>(&self, key: &str, what: &str) -> Result<Vec<T>, WorkloadError> {
        let text = self.get(key).unwrap_or_default();
        text.split(',')
            .map(|item| item.trim().parse::<T>())
            .collect::<Result<Vec<T>, _>>()
            .map_err(|_| self.invalid(key, &format!("a comma-separated list of {what}")))
    }
}

/// A file named by a property, relative to the property file that set it (or to the
/// working directory for `-p`).
fn relative_to_origin(value: &str, origin: &Origin) -> PathBuf {
    let path = Path::new(value);
    match origin {
        Origin::File { path: file, .. } if path.is_relative() => {
            file.parent().unwrap_or(Path::new("")).join(path)
        }
        _ => path.to_path_buf(),
    }
}

impl CacheSpec {
    /// Reads and checks every `cache.*` property (see `docs/cache-workloads.md` for the
    /// list and defaults). `other_known`: names consumed by other layers (e.g.
    /// `threadcount`, `target`, `db`), accepted and ignored here;
    /// `passthrough_prefixes`: e.g. `["rocksdb."]`, any key with such a prefix is
    /// accepted.
    ///
    /// The first unknown property (in key order) is an error with the closest known
    /// name as a suggestion; bad numbers, sizes and enumeration values name the key, its
    /// `file:line` and what was expected. `cache.keys` and `cache.data_size` exclude
    /// each other; with `cache.data_size` the key count is
    /// [`CacheSpec::keys_for_data_size`]. Properties of a popularity other than the one
    /// chosen (e.g. `cache.zipf_theta` with `cache.popularity=uniform`) are accepted
    /// and unused, so a preset's settings can be overridden with `-p`.
    pub fn from_properties(
        props: &Properties,
        other_known: &[&str],
        passthrough_prefixes: &[&str],
    ) -> Result<CacheSpec, WorkloadError> {
        for (key, _) in props.iter() {
            let known = CACHE_PROPERTIES.iter().any(|(k, _)| *k == key)
                || other_known.contains(&key)
                || passthrough_prefixes.iter().any(|p| key.starts_with(p));
            if !known {
                let names = CACHE_PROPERTIES
                    .iter()
                    .map(|(k, _)| *k)
                    .chain(other_known.iter().copied());
                let (key, origin) = (key.to_string(), props.origin(key).cloned());
                let origin = origin.unwrap_or(Origin::Default);
                // CacheBench's config keys are camelCase (numKeys, getRatio, …); ours
                // are not. The ones with a counterpart name it.
                let counterpart = match key.as_str() {
                    "numKeys" => Some("cache.keys"),
                    "numOps" => Some("cache.operations"),
                    "getRatio" => Some("cache.get"),
                    "setRatio" => Some("cache.set"),
                    "delRatio" => Some("cache.delete"),
                    "keySizeRange" | "keySizeRangeProbability" => Some("cache.key_size"),
                    "valSizeRange" | "valSizeRangeProbability" => Some("cache.value_size"),
                    "zipfParam" => Some("cache.zipf_theta"),
                    "ttlSec" => Some("cache.ttl"),
                    _ => None,
                };
                let suggestion = counterpart
                    .map(str::to_string)
                    .or_else(|| suggestion(&key, names));
                if key.bytes().any(|b| b.is_ascii_uppercase()) && !key.contains('.') {
                    return Err(WorkloadError::CacheBenchKey {
                        key,
                        origin,
                        suggestion,
                    });
                }
                return Err(WorkloadError::UnknownProperty {
                    key,
                    origin,
                    suggestion,
                });
            }
        }
        let r = Reader { props };
        if let Some(class) = r.get("workload") {
            if class != CacheWorkload::CLASS {
                return Err(r.invalid("workload", CacheWorkload::CLASS));
            }
        }
        let defaults = CacheSpec::default();

        let key_size = r.size("cache.key_size", "fixed:16")?;
        let value_size = r.size("cache.value_size", "fixed:100")?;
        let ttl_s = match r.get("cache.ttl") {
            None => None,
            Some(v) if v.eq_ignore_ascii_case("none") => None,
            Some(_) => Some(r.size("cache.ttl", "none")?),
        };

        // A `-p` setting of one beats a file setting of the other, so presets (which
        // set cache.data_size) can be run with `-p cache.keys=…`.
        let from_cli = |k: &str| r.origin(k) == Origin::CommandLine;
        let (keys_set, size_set) = match (r.get("cache.keys"), r.get("cache.data_size")) {
            (Some(k), Some(_)) if from_cli("cache.keys") && !from_cli("cache.data_size") => {
                (Some(k), None)
            }
            (Some(_), Some(d)) if from_cli("cache.data_size") && !from_cli("cache.keys") => {
                (None, Some(d))
            }
            other => other,
        };
        let keys = match (keys_set, size_set) {
            (Some(_), Some(_)) => {
                return Err(WorkloadError::Inconsistent(format!(
                    "cache.keys ({}) and cache.data_size ({}) both set: give one",
                    r.origin("cache.keys"),
                    r.origin("cache.data_size")
                )))
            }
            (None, Some(text)) => {
                let bytes = parse_bytes(text).filter(|&b| b > 0).ok_or_else(|| {
                    r.invalid(
                        "cache.data_size",
                        "a positive byte count such as 256MiB or 20G (binary units)",
                    )
                })?;
                CacheSpec::keys_for_data_size(bytes, &key_size, &value_size)
            }
            _ => r.u64("cache.keys", defaults.keys)?,
        };
        if keys == 0 || keys > CacheWorkload::MAX_KEYS {
            return Err(r.invalid("cache.keys", "an integer from 1 to 2^60"));
        }
        let operations = r.u64("cache.operations", defaults.operations)?;

        let popularity = match r.get("cache.popularity").unwrap_or("zipfian") {
            "zipfian" => {
                let theta = r.f64("cache.zipf_theta", 0.99)?;
                if theta <= 0.0 {
                    return Err(r.invalid("cache.zipf_theta", "a number > 0"));
                }
                Popularity::Zipfian { theta }
            }
            "uniform" => Popularity::Uniform,
            "normal" => Popularity::Normal,
            "buckets" => {
                let inline = r.get("cache.popularity_buckets").is_some()
                    || r.get("cache.popularity_weights").is_some();
                let (sizes, weights) = match (inline, r.get("cache.popularity_file")) {
                    (true, Some(_)) => {
                        return Err(WorkloadError::Inconsistent(format!(
                            "cache.popularity_file ({}) and cache.popularity_buckets/weights \
                             both set: give one",
                            r.origin("cache.popularity_file")
                        )))
                    }
                    (false, Some(file)) => {
                        let path = relative_to_origin(file, &r.origin("cache.popularity_file"));
                        crate::cache::cachebench::read_popularity_file(&path)?
                    }
                    (true, None) => {
                        let sizes: Vec<u64> = r.list("cache.popularity_buckets", "key counts")?;
                        let weights: Vec<f64> = r.list("cache.popularity_weights", "weights")?;
                        if sizes.len() != weights.len() {
                            return Err(WorkloadError::Inconsistent(format!(
                                "cache.popularity_buckets ({}) has {} entries but \
                                 cache.popularity_weights ({}) has {}",
                                r.origin("cache.popularity_buckets"),
                                sizes.len(),
                                r.origin("cache.popularity_weights"),
                                weights.len()
                            )));
                        }
                        (sizes, weights)
                    }
                    (false, None) => {
                        return Err(r.invalid(
                            "cache.popularity",
                            "cache.popularity_buckets and cache.popularity_weights, or \
                             cache.popularity_file, with cache.popularity=buckets",
                        ))
                    }
                };
                Popularity::Buckets { sizes, weights }
            }
            _ => {
                return Err(r.invalid(
                    "cache.popularity",
                    &format!("one of {}", POPULARITIES.join(", ")),
                ))
            }
        };

        let mix = OpMix {
            get: r.f64("cache.get", defaults.mix.get)?,
            set: r.f64("cache.set", defaults.mix.set)?,
            delete: r.f64("cache.delete", defaults.mix.delete)?,
            lone_get: r.f64("cache.lone_get", defaults.mix.lone_get)?,
            lone_set: r.f64("cache.lone_set", defaults.mix.lone_set)?,
        };
        if mix.normalised().is_none() {
            let listed: Vec<String> = ["get", "set", "delete", "lone_get", "lone_set"]
                .iter()
                .map(|k| {
                    let key = format!("cache.{k}");
                    format!(
                        "{key}={} ({})",
                        r.get(&key).unwrap_or("default"),
                        r.origin(&key)
                    )
                })
                .collect();
            return Err(WorkloadError::Inconsistent(format!(
                "operation shares sum to 0: {}",
                listed.join(" ")
            )));
        }
        let lookaside = r.bool("cache.lookaside", defaults.lookaside)?;

        let spec = CacheSpec {
            keys,
            operations,
            popularity,
            key_size,
            value_size,
            ttl_s,
            mix,
            lookaside,
        };
        Ok(spec)
    }
}

impl CacheWorkload {
    /// [`CacheSpec::from_properties`] then [`CacheWorkload::new`].
    pub fn from_properties(
        props: &Properties,
        other_known: &[&str],
        passthrough_prefixes: &[&str],
    ) -> Result<CacheWorkload, WorkloadError> {
        CacheWorkload::new(CacheSpec::from_properties(
            props,
            other_known,
            passthrough_prefixes,
        )?)
    }
}

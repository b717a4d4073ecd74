//! Store options as validated `name=value` pairs.

use crate::{parse_bytes, StoreError, StoreErrorKind};

/// Options for one store, as `name=value` pairs whose names start with the store's
/// prefix (`rocksdb.`). Each store takes the options it knows with the typed getters;
/// [`StoreOptions::finish`] then rejects whatever is left, so a misspelt option is an
/// error rather than silently ignored.
#[derive(Clone, Debug, Default)]
pub struct StoreOptions {
    prefix: String,
    pairs: Vec<(String, String, bool)>,
}

impl StoreOptions {
    /// Options for the store whose option names start with `prefix` (e.g. `"rocksdb."`).
    /// Pairs with other prefixes are ignored: they belong to other layers.
    pub fn new(prefix: &str, pairs: impl IntoIterator<Item = (String, String)>) -> StoreOptions {
        StoreOptions {
            prefix: prefix.to_string(),
            pairs: pairs
                .into_iter()
                .filter(|(k, _)| k.starts_with(prefix))
                .map(|(k, v)| (k, v, false))
                .collect(),
        }
    }

    /// [`StoreOptions::new`] from borrowed `(name, value)` pairs, as written in code
    /// and tests: `StoreOptions::from_strs("lmdb.", &[("lmdb.sync", "none")])`.
    pub fn from_strs(prefix: &str, pairs: &[(&str, &str)]) -> StoreOptions {
        StoreOptions::new(
            prefix,
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        )
    }

    fn take(&mut self, name: &str) -> Option<String> {
        let full = format!("{}{}", self.prefix, name);
        let mut found = None;
        for (k, v, used) in self.pairs.iter_mut() {
            if *k == full {
                *used = true;
                found = Some(v.clone());
            }
        }
        found
    }

    fn bad(&self, name: &str, value: &str, expected: &str) -> StoreError {
        StoreError::new(
            StoreErrorKind::Config,
            format!(
                "option `{}{}`: `{}` is not {}",
                self.prefix, name, value, expected
            ),
        )
    }

    /// An embedded store's data directory: `path` (from `--path`) when given, else the
    /// `dir` option; an error naming both (and `what` the directory holds) when neither
    /// is there.
    pub fn data_dir(
        &mut self,
        path: Option<&std::path::Path>,
        what: &str,
    ) -> Result<std::path::PathBuf, StoreError> {
        let dir = self.string("dir", "");
        match (path, dir.is_empty()) {
            (Some(p), _) => Ok(p.to_path_buf()),
            (None, false) => Ok(std::path::PathBuf::from(dir)),
            (None, true) => Err(StoreError::new(
                StoreErrorKind::Config,
                format!(
                    "{} needs {what}: --path DIR or -p {}dir=DIR",
                    self.prefix.trim_end_matches('.'),
                    self.prefix
                ),
            )),
        }
    }

    /// A string option.
    pub fn string(&mut self, name: &str, default: &str) -> String {
        self.take(name).unwrap_or_else(|| default.to_string())
    }

    /// A boolean option (`true/false`, `on/off`, `yes/no`, `1/0`).
    pub fn bool(&mut self, name: &str, default: bool) -> Result<bool, StoreError> {
        match self.take(name) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "1" => Ok(true),
                "false" | "off" | "no" | "0" => Ok(false),
                _ => Err(self.bad(name, &v, "a boolean (true/false)")),
            },
        }
    }

    /// An integer option.
    pub fn int(&mut self, name: &str, default: i64) -> Result<i64, StoreError> {
        match self.take(name) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| self.bad(name, &v, "an integer")),
        }
    }

    /// A byte size (`65536`, `64KiB`, `8MiB`, `1GB`, `2g`).
    pub fn size(&mut self, name: &str, default: u64) -> Result<u64, StoreError> {
        match self.take(name) {
            None => Ok(default),
            Some(v) => parse_bytes(&v).ok_or_else(|| {
                self.bad(name, &v, "a size in bytes (e.g. 65536, 64KiB, 8MiB, 1GiB)")
            }),
        }
    }

    /// One of `choices` (case-insensitive).
    pub fn choice(
        &mut self,
        name: &str,
        choices: &[&str],
        default: &str,
    ) -> Result<String, StoreError> {
        match self.take(name) {
            None => Ok(default.to_string()),
            Some(v) => {
                let lower = v.to_ascii_lowercase();
                if choices.contains(&lower.as_str()) {
                    Ok(lower)
                } else {
                    Err(self.bad(name, &v, &format!("one of: {}", choices.join(", "))))
                }
            }
        }
    }

    /// Fails on any option that no getter asked for, listing the known ones.
    pub fn finish(&self, known: &[&str]) -> Result<(), StoreError> {
        let unknown: Vec<&str> = self
            .pairs
            .iter()
            .filter(|(_, _, used)| !used)
            .map(|(k, _, _)| k.as_str())
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        let known: Vec<String> = known
            .iter()
            .map(|k| format!("{}{}", self.prefix, k))
            .collect();
        Err(StoreError::new(
            StoreErrorKind::Config,
            format!(
                "unknown option{} {}; known options: {}",
                if unknown.len() > 1 { "s" } else { "" },
                unknown
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                known.join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("65536"), Some(65536));
        assert_eq!(parse_bytes("64KiB"), Some(64 << 10));
        assert_eq!(parse_bytes("8mb"), Some(8 << 20));
        assert_eq!(parse_bytes("1.5G"), Some(3 << 29));
        assert_eq!(parse_bytes("12 parsecs"), None);
        assert_eq!(parse_bytes(""), None);
    }

    #[test]
    fn unknown_options_are_named() {
        let mut o = StoreOptions::new(
            "rocksdb.",
            vec![
                ("rocksdb.wal".to_string(), "off".to_string()),
                ("rocksdb.block_cahce_size".to_string(), "1".to_string()),
                ("redis.url".to_string(), "x".to_string()),
            ],
        );
        assert!(!o.bool("wal", true).unwrap());
        let err = o.finish(&["wal", "block_cache_size"]).unwrap_err();
        assert!(err.message.contains("`rocksdb.block_cahce_size`"), "{err}");
        assert!(err.message.contains("rocksdb.block_cache_size"), "{err}");
        assert!(!err.message.contains("redis.url"), "{err}");
    }

    #[test]
    fn bad_values_name_the_option_and_choices() {
        let mut o = StoreOptions::new("x.", vec![("x.mode".to_string(), "sideways".to_string())]);
        let err = o.choice("mode", &["up", "down"], "up").unwrap_err();
        assert_eq!(err.kind, StoreErrorKind::Config);
        assert!(
            err.message
                .contains("`x.mode`: `sideways` is not one of: up, down"),
            "{err}"
        );
    }
}

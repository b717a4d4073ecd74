//! [`Properties`]: YCSB-style `key=value` settings from property files and `-p` flags,
//! each remembering where it was set ([`Origin`]) so errors can point at the line.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::WorkloadError;

/// Where a property's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A property file, at a 1-based line (the first line of a continued line).
    File {
        /// The file as it was named when loaded.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// A `-p key=value` override.
    CommandLine,
    /// Not set anywhere: the built-in default.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::CommandLine => f.write_str("-p"),
            Origin::Default => f.write_str("default"),
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    value: String,
    origin: Origin,
}

/// An ordered set of properties. Later settings of a key replace earlier ones, so load
/// files in order and apply `-p` overrides last, as YCSB's `Client` does.
#[derive(Clone, Debug, Default)]
pub struct Properties {
    map: BTreeMap<String, Entry>,
}

impl Properties {
    /// No properties.
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Reads and parses a property file (see [`Properties::parse_str`]).
    pub fn load_file(&mut self, path: &Path) -> Result<(), WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        self.parse_str(&text, path)
    }

    /// Parses property-file text; `path` is used in origins and errors.
    ///
    /// The subset of Java's `.properties` format that YCSB files use: `key=value`,
    /// `key = value` and `key: value`; lines starting with `#` or `!` are comments;
    /// blank lines are skipped; whitespace around keys and values is trimmed; a line
    /// ending in an odd number of backslashes continues on the next line (whose leading
    /// whitespace is dropped); `\t`, `\n`, `\r`, `\f`, `\uXXXX` and `\<char>` escapes.
    /// Unlike Java, a line with no `=` or `:` is an error (Java would treat the first
    /// space as the separator), as is a key containing whitespace.
    pub fn parse_str(&mut self, text: &str, path: &Path) -> Result<(), WorkloadError> {
        let syntax = |line: usize, message: String| WorkloadError::Syntax {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate();
        while let Some((index, raw)) = lines.next() {
            let line = index + 1;
            let first = raw.trim_start();
            if first.is_empty() || first.starts_with('#') || first.starts_with('!') {
                continue;
            }
            let mut logical = String::new();
            let mut current = first;
            loop {
                let trailing = current.len() - current.trim_end_matches('\\').len();
                if trailing % 2 == 1 {
                    logical.push_str(&current[..current.len() - 1]);
                    match lines.next() {
                        Some((_, next)) => current = next.trim_start(),
                        None => break,
                    }
                } else {
                    logical.push_str(current);
                    break;
                }
            }
            let (key, value) = split_key_value(&logical).ok_or_else(|| {
                syntax(
                    line,
                    format!(
                        "expected `key=value` or `key: value`, found `{}`",
                        logical.trim()
                    ),
                )
            })?;
            let key = unescape(key.trim()).map_err(|m| syntax(line, m))?;
            let value = unescape(value.trim()).map_err(|m| syntax(line, m))?;
            if key.is_empty() {
                return Err(syntax(line, "empty property name".into()));
            }
            if key.contains(char::is_whitespace) {
                return Err(syntax(
                    line,
                    format!("property name `{key}` contains whitespace"),
                ));
            }
            self.set(
                &key,
                &value,
                Origin::File {
                    path: path.to_path_buf(),
                    line,
                },
            );
        }
        Ok(())
    }

    /// Applies a `-p key=value` override (split at the first `=`, both sides trimmed).
    pub fn set_override(&mut self, arg: &str) -> Result<(), WorkloadError> {
        match arg.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                self.set(key.trim(), value.trim(), Origin::CommandLine);
                Ok(())
            }
            _ => Err(WorkloadError::Override {
                arg: arg.to_string(),
            }),
        }
    }

    /// Sets `key` to `value`, replacing any earlier setting.
    pub fn set(&mut self, key: &str, value: &str, origin: Origin) {
        self.map.insert(
            key.to_string(),
            Entry {
                value: value.to_string(),
                origin,
            },
        );
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(key).map(|e| e.value.as_str())
    }

    /// Where `key` was set, if it was.
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.map.get(key).map(|e| &e.origin)
    }

    /// Every property, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map.iter().map(|(k, e)| (k.as_str(), e.value.as_str()))
    }

    /// Every property whose key starts with `prefix` (e.g. `rocksdb.`), as
    /// `(full key, value)`, sorted by key.
    pub fn with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        self.map
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, e)| (k.clone(), e.value.clone()))
            .collect()
    }
}

/// Splits at the first unescaped `=` or `:`.
fn split_key_value(line: &str) -> Option<(&str, &str)> {
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '=' | ':' => return Some((&line[..i], &line[i + 1..])),
            _ => {}
        }
    }
    None
}

fn unescape(s: &str) -> Result<String, String> {
    if !s.contains('\\') {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("bad escape `\\u{hex}`"))?;
                out.push(code);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

/// Levenshtein distance, for "did you mean" suggestions.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The known name closest to `key`, if it is close (at most a third of the key's
/// length in edits, and at least 2).
pub(crate) fn suggestion<'a>(key: &str, known: impl Iterator<Item = &'a str>) -> Option<String> {
    let len = key.chars().count();
    let limit = (len / 3).max(2);
    known
        // The distance is at least the difference in length: names too long or too short
        // to be within the limit are not compared (a long unknown key would cost its
        // length times every known name's).
        .filter(|k| k.chars().count().abs_diff(len) <= limit)
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Properties, WorkloadError> {
        let mut p = Properties::new();
        p.parse_str(text, Path::new("workloads/x"))?;
        Ok(p)
    }

    #[test]
    fn separators_comments_and_continuations() {
        let p = parse(
            "# comment\n! also a comment\n\n  a=1\nb = two words  \nc: 3\nd=long\\\n    value\n\
             e=x\\\\\nf=\\u0041\\=\\:\n",
        )
        .unwrap();
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get("b"), Some("two words"));
        assert_eq!(p.get("c"), Some("3"));
        assert_eq!(p.get("d"), Some("longvalue"));
        assert_eq!(
            p.get("e"),
            Some("x\\"),
            "an even backslash run does not continue"
        );
        assert_eq!(p.get("f"), Some("A=:"));
        assert_eq!(p.origin("c").unwrap().to_string(), "workloads/x:6");
        assert_eq!(p.origin("d").unwrap().to_string(), "workloads/x:7");
        assert_eq!(
            p.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e", "f"]
        );
    }

    #[test]
    fn later_settings_and_overrides_win() {
        let mut p = parse("recordcount=10\nrecordcount=20\n").unwrap();
        assert_eq!(p.get("recordcount"), Some("20"));
        assert_eq!(
            p.origin("recordcount").unwrap().to_string(),
            "workloads/x:2"
        );
        p.set_override("recordcount = 30").unwrap();
        assert_eq!(p.get("recordcount"), Some("30"));
        assert_eq!(p.origin("recordcount"), Some(&Origin::CommandLine));
        p.set_override("table=a=b").unwrap();
        assert_eq!(p.get("table"), Some("a=b"));
        let err = p.set_override("nothing").unwrap_err();
        assert!(err.to_string().contains("nothing"), "{err}");
        assert!(p.set_override("=1").is_err());
    }

    #[test]
    fn line_without_separator_is_an_error_naming_path_and_line() {
        let err = parse("a=1\n\nbogus line\n").unwrap_err();
        assert!(err.to_string().starts_with("workloads/x:3: "), "{err}");
        let err = parse("a b=1\n").unwrap_err();
        assert!(err.to_string().contains("workloads/x:1"), "{err}");
    }

    #[test]
    fn missing_file_names_the_path() {
        let mut p = Properties::new();
        let err = p
            .load_file(Path::new("/nonexistent/kvlab/workload"))
            .unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/kvlab/workload"),
            "{err}"
        );
    }

    #[test]
    fn prefix_selection_is_sorted_and_exact() {
        let p = parse("rocksdb.b=2\nrocksdb.a=1\nrocksdbx=3\nredis.a=4\n").unwrap();
        assert_eq!(
            p.with_prefix("rocksdb."),
            vec![
                ("rocksdb.a".into(), "1".into()),
                ("rocksdb.b".into(), "2".into())
            ]
        );
    }
}

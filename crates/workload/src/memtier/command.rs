//! memtier_benchmark's arbitrary commands (`--command`) and its `WAIT` requests
//! (`--wait-ratio`): [`ArbitraryCommand`] and [`WaitSpec`], parts of a
//! [`super::MemtierSpec`].
//!
//! A command line is split into arguments as memtier splits it
//! (`arbitrary_command::split_command_to_args` in `config_types.cpp`, itself Redis'
//! `sdssplitargs`): words separated by blanks; `"double quotes"` with the escapes `\n`,
//! `\r`, `\t`, `\b`, `\a`, `\xHH` and `\<any>`; `'single quotes'` with `\'`; a closing
//! quote must end the word. An argument that is exactly `__key__` is replaced by a key
//! drawn from the command's key pattern (each `__key__` draws its own), one that is
//! exactly `__data__` by a value of the object options (`--data-size` …). As in memtier
//! (`redis_protocol::format_arbitrary_command`), the first `__key__` inside a longer
//! argument (`h:__key__:x`) is replaced by a key too, keeping the text around it, while
//! `__data__` mixed with other text is refused.

use super::KeyPattern;
use super::MemtierError;

/// The argument memtier replaces by a generated key.
pub const KEY_PLACEHOLDER: &str = "__key__";
/// The argument memtier replaces by generated data.
pub const DATA_PLACEHOLDER: &str = "__data__";

/// One argument of an [`ArbitraryCommand`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandArg {
    /// Sent as is.
    Literal(Vec<u8>),
    /// `__key__`: a key from the command's key pattern, prefix and range.
    Key,
    /// An argument with `__key__` inside a longer text (`h:__key__:x`): the text before
    /// the first `__key__`, a key, and the text after it, as memtier's
    /// `has_key_affixes` arguments.
    KeyWithin {
        /// The text before the placeholder.
        before: Vec<u8>,
        /// The text after it (a further `__key__` in it is sent as is, as memtier does).
        after: Vec<u8>,
    },
    /// `__data__`: a value of the object options (size, random data).
    Data,
}

/// One `--command` with its `--command-ratio` and `--command-key-pattern`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArbitraryCommand {
    /// The command as given.
    pub text: String,
    /// Its arguments, the command name first.
    pub args: Vec<CommandArg>,
    /// `--command-ratio`: how many times in a row it is sent per cycle (default 1).
    pub ratio: u32,
    /// `--command-key-pattern` (default `R`).
    pub key_pattern: KeyPattern,
}

fn invalid(text: &str, what: impl std::fmt::Display) -> MemtierError {
    MemtierError::Inconsistent(format!("--command `{text}`: {what}"))
}

impl ArbitraryCommand {
    /// Splits and checks `text` (see the module docs), with ratio 1 and key pattern `R`.
    pub fn parse(text: &str) -> Result<ArbitraryCommand, MemtierError> {
        let words = split_args(text).map_err(|e| invalid(text, e))?;
        if words.is_empty() {
            return Err(invalid(
                text,
                "no command (expected e.g. \"set __key__ __data__\")",
            ));
        }
        let mut args = Vec::with_capacity(words.len());
        for (i, word) in words.into_iter().enumerate() {
            let contains = |p: &str| word.windows(p.len()).any(|w| w == p.as_bytes());
            let key_at = word
                .windows(KEY_PLACEHOLDER.len())
                .position(|w| w == KEY_PLACEHOLDER.as_bytes());
            let arg = if let Some(at) = key_at {
                if word == KEY_PLACEHOLDER.as_bytes() {
                    CommandArg::Key
                } else {
                    // redis_protocol::format_arbitrary_command: the key goes where the
                    // first placeholder stood, between the texts around it.
                    CommandArg::KeyWithin {
                        before: word[..at].to_vec(),
                        after: word[at + KEY_PLACEHOLDER.len()..].to_vec(),
                    }
                }
            } else if contains(DATA_PLACEHOLDER) {
                if word != DATA_PLACEHOLDER.as_bytes() {
                    return Err(invalid(
                        text,
                        "the data placeholder __data__ cannot be combined with other data in \
                         one argument",
                    ));
                }
                CommandArg::Data
            } else {
                CommandArg::Literal(word)
            };
            if i == 0 && !matches!(arg, CommandArg::Literal(_)) {
                return Err(invalid(
                    text,
                    "the first word must be the command name, not a placeholder",
                ));
            }
            args.push(arg);
        }
        Ok(ArbitraryCommand {
            text: text.to_string(),
            args,
            ratio: 1,
            key_pattern: KeyPattern::Random,
        })
    }

    /// The command name, upper case (`SET` for `set __key__ __data__`).
    pub fn name(&self) -> String {
        match self.args.first() {
            Some(CommandArg::Literal(name)) => String::from_utf8_lossy(name).to_uppercase(),
            _ => String::new(),
        }
    }

    /// How many `__key__` arguments it has.
    pub fn key_count(&self) -> usize {
        self.args
            .iter()
            .filter(|a| matches!(a, CommandArg::Key | CommandArg::KeyWithin { .. }))
            .count()
    }
}

/// memtier's name for the results of the commands called `name` (upper or lower case):
/// lower case, the first letter upper case, and an `s` — `Sets`, `Hsets`, `Waits`
/// (`run_stats::print_type_column`).
pub fn row_name(name: &str) -> String {
    let lower = name.to_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(first) => format!("{}{}s", first.to_uppercase(), chars.as_str()),
        None => "s".to_string(),
    }
}

/// memtier's `--wait-ratio=SETS:WAITS`, `--num-slaves=MIN-MAX` and
/// `--wait-timeout=MIN-MAX`: `WAIT numreplicas timeout` requests among the SETs and
/// GETs (`client::create_request`, `client::create_wait_request`).
///
/// Before each request a client sends a `WAIT` instead when it has sent none yet, or
/// when `sets_sent / waits_sent > sets / waits` — integer divisions both, as memtier
/// computes them. `numreplicas` is uniform in `[min_replicas, max_replicas]`, the
/// timeout (milliseconds) a Gaussian draw in `[min_timeout_ms, max_timeout_ms]` around
/// the middle with a sixth of the range as standard deviation, truncated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitSpec {
    /// SETs per `sets:waits`.
    pub sets: u32,
    /// WAITs per `sets:waits`; 0 sends none.
    pub waits: u32,
    /// Fewest replicas to wait for (`--num-slaves` MIN).
    pub min_replicas: u32,
    /// Most replicas to wait for (`--num-slaves` MAX).
    pub max_replicas: u32,
    /// Shortest timeout in milliseconds (`--wait-timeout` MIN).
    pub min_timeout_ms: u32,
    /// Longest timeout in milliseconds (`--wait-timeout` MAX).
    pub max_timeout_ms: u32,
}

/// Splits a command line into arguments as memtier does (see the module docs); the
/// error says what is wrong.
pub fn split_args(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let p = text.as_bytes();
    let at = |i: usize| p.get(i).copied().unwrap_or(0);
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        // C's isspace: space, \t, \n, \v, \f, \r.
        while i < p.len() && matches!(p[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
            i += 1;
        }
        if i >= p.len() {
            return Ok(args);
        }
        let mut word = Vec::new();
        let (mut double, mut single) = (false, false);
        loop {
            let c = at(i);
            if double {
                if c == b'\\'
                    && at(i + 1) == b'x'
                    && hex(at(i + 2)).is_some()
                    && hex(at(i + 3)).is_some()
                {
                    let (hi, lo) = (hex(at(i + 2)).unwrap_or(0), hex(at(i + 3)).unwrap_or(0));
                    word.push(hi * 16 + lo);
                    i += 3;
                } else if c == b'\\' && at(i + 1) != 0 {
                    i += 1;
                    word.push(match at(i) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if !is_end(at(i + 1)) {
                        return Err(format!(
                            "a closing quote must be followed by a space (at byte {})",
                            i + 1
                        ));
                    }
                    i += 1;
                    break;
                } else if c == 0 {
                    return Err("unbalanced double quotes".to_string());
                } else {
                    word.push(c);
                }
            } else if single {
                if c == b'\\' && at(i + 1) == b'\'' {
                    i += 1;
                    word.push(b'\'');
                } else if c == b'\'' {
                    if !is_end(at(i + 1)) {
                        return Err(format!(
                            "a closing quote must be followed by a space (at byte {})",
                            i + 1
                        ));
                    }
                    i += 1;
                    break;
                } else if c == 0 {
                    return Err("unbalanced single quotes".to_string());
                } else {
                    word.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        i += 1;
                        break;
                    }
                    b'"' => double = true,
                    b'\'' => single = true,
                    other => word.push(other),
                }
            }
            i += 1;
        }
        args.push(word);
    }
}

/// The end of a word after a closing quote: a blank or the end of the line.
fn is_end(c: u8) -> bool {
    matches!(c, 0 | b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        split_args(s)
            .unwrap_or_else(|e| panic!("`{s}`: {e}"))
            .into_iter()
            .map(|w| String::from_utf8_lossy(&w).into_owned())
            .collect()
    }

    #[test]
    fn words_split_on_blanks() {
        assert_eq!(
            split("set __key__ __data__"),
            ["set", "__key__", "__data__"]
        );
        assert_eq!(split("  get\t k \n"), ["get", "k"]);
        assert!(split("   ").is_empty());
    }

    #[test]
    fn quotes_group_words_and_escape() {
        assert_eq!(split(r#"set k "hello world""#), ["set", "k", "hello world"]);
        assert_eq!(split("set k 'a b' c"), ["set", "k", "a b", "c"]);
    }

    #[test]
    fn escapes_inside_double_quotes() {
        assert_eq!(
            split_args(r#"x "a\nb\x41\"c\\""#).unwrap()[1],
            b"a\nbA\"c\\".to_vec()
        );
        assert_eq!(split(r"x 'it\'s'"), ["x", "it's"]);
        // Outside quotes a backslash is an ordinary byte.
        assert_eq!(split(r"x a\nb"), ["x", r"a\nb"]);
        // A quote may open inside a word.
        assert_eq!(split(r#"x ab"c d""#), ["x", "abc d"]);
        assert_eq!(split(r#"x """#), ["x", ""]);
    }

    #[test]
    fn bad_quoting_is_refused() {
        for bad in [
            r#"set "k"#,
            "set 'k",
            r#"set "k"v"#,
            "set 'k'v",
            "set 'it''s'",
        ] {
            assert!(split_args(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn placeholders_are_whole_arguments() {
        let c = ArbitraryCommand::parse("hset __key__ f __data__").unwrap();
        assert_eq!(
            c.args,
            [
                CommandArg::Literal(b"hset".to_vec()),
                CommandArg::Key,
                CommandArg::Literal(b"f".to_vec()),
                CommandArg::Data
            ]
        );
        assert_eq!(
            (c.name(), c.key_count(), c.ratio),
            ("HSET".to_string(), 1, 1)
        );
        assert_eq!(c.key_pattern, KeyPattern::Random);
        let quoted = ArbitraryCommand::parse(r#"set "__key__" x"#).unwrap();
        assert_eq!(quoted.args[1], CommandArg::Key);
        // memtier 2.3.0 substitutes a key inside a longer argument (its first
        // __key__ only), and still refuses __data__ inside one.
        let within = ArbitraryCommand::parse("hset h:__key__:x__key__ f __data__").unwrap();
        assert_eq!(
            within.args[1],
            CommandArg::KeyWithin {
                before: b"h:".to_vec(),
                after: b":x__key__".to_vec()
            }
        );
        assert_eq!(within.key_count(), 1);
        for (bad, what) in [
            ("set k x__data__", "__data__"),
            ("__key__ get", "command name"),
            ("", "no command"),
            (r#"set "k"#, "quotes"),
        ] {
            let e = ArbitraryCommand::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains(what) && e.starts_with("--command `"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn row_names_are_memtiers() {
        assert_eq!(row_name("SET"), "Sets");
        assert_eq!(row_name("hset"), "Hsets");
        assert_eq!(row_name("WAIT"), "Waits");
    }
}

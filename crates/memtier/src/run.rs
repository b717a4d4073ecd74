//! memtier_benchmark's workload flags on `kvlab run`: `--ratio`, the key and data
//! options and `--requests` describe a memtier-style workload instead of a YCSB property
//! file, with `run`'s own threads, connections, pipeline, target rate, duration, output
//! and every store (embedded ones too).
//!
//! The flags mean exactly what they mean to `kvlab memtier`: they are handed, in
//! memtier's syntax, to the same parser ([`MemtierArgs`]).

use crate::MemtierSpec;
use clap::{Args, Parser};

use crate::args::{next_seq, MemtierArgs, Sequenced};

/// The memtier workload flags `run` takes (long forms only: `-c`, `-t`, `-P`, `-p` and
/// `-d` mean other things to `run`).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "memtier-style workload (instead of -P; see docs/memtier.md)")]
pub struct RunMemtierArgs {
    /// SET:GET ratio, e.g. 1:10; any flag of this group makes the run memtier-style.
    #[arg(long, value_name = "SETS:GETS")]
    ratio: Option<String>,
    /// Requests per connection, or `allkeys` (memtier's -n; default 10000).
    #[arg(long, value_name = "N|allkeys")]
    requests: Option<String>,
    /// Key prefix (default memtier-).
    #[arg(long, value_name = "PREFIX")]
    key_prefix: Option<String>,
    /// Smallest key number (default 0).
    #[arg(long, value_name = "N")]
    key_minimum: Option<String>,
    /// Largest key number (default 10000000).
    #[arg(long, value_name = "N")]
    key_maximum: Option<String>,
    /// SET:GET key patterns: R random, S sequential, G Gaussian, P parallel, Z Zipf.
    #[arg(long, value_name = "PATTERN")]
    key_pattern: Option<String>,
    /// Standard deviation of G.
    #[arg(long, value_name = "N")]
    key_stddev: Option<String>,
    /// Median of G.
    #[arg(long, value_name = "N")]
    key_median: Option<String>,
    /// Exponent of Z, in (0, 5).
    #[arg(long, value_name = "S")]
    key_zipf_exp: Option<String>,
    /// Value size in bytes (default 32).
    #[arg(long, value_name = "BYTES")]
    data_size: Option<String>,
    /// Value sizes MIN-MAX.
    #[arg(long, value_name = "MIN-MAX")]
    data_size_range: Option<String>,
    /// Weighted value sizes SIZE:WEIGHT,….
    #[arg(long, value_name = "LIST")]
    data_size_list: Option<String>,
    /// R (random) or S (spread) sizes of a --data-size-range.
    #[arg(long, value_name = "R|S")]
    data_size_pattern: Option<String>,
    /// Random value bytes instead of memtier's repeated `x`.
    #[arg(long)]
    random_data: bool,
    /// Times to live MIN-MAX seconds for SETs.
    #[arg(long, value_name = "MIN-MAX")]
    expiry_range: Option<String>,
    /// GETs as multi-key reads of up to N keys (Redis MGET, memcached get k1 … kN).
    #[arg(long, value_name = "N")]
    multi_key_get: Option<String>,
    /// A different random stream per connection.
    #[arg(long)]
    distinct_client_seed: bool,
    /// A Redis command instead of SET/GET (repeatable; --db redis only), e.g.
    /// --command="set __key__ __data__".
    #[arg(long, value_name = "COMMAND", value_parser = sequenced)]
    command: Vec<Sequenced<String>>,
    /// Times the last --command is sent in a row per cycle (default 1).
    #[arg(long, value_name = "N", value_parser = sequenced)]
    command_ratio: Vec<Sequenced<String>>,
    /// Key pattern of the last --command: R, S, G, P or Z (default R).
    #[arg(long, value_name = "R|S|G|P|Z", value_parser = sequenced)]
    command_key_pattern: Vec<Sequenced<String>>,
}

/// A value of `--command`, `--command-ratio` or `--command-key-pattern`, numbered in
/// command-line order (checked by memtier's parser in [`RunMemtierArgs::spec`]).
fn sequenced(s: &str) -> Result<Sequenced<String>, String> {
    Ok(Sequenced {
        seq: next_seq(),
        value: s.to_string(),
    })
}

/// memtier's flags alone, to parse them as `kvlab memtier` does.
#[derive(Parser)]
#[command(name = "run", disable_help_flag = true, no_binary_name = true)]
struct Flags {
    #[command(flatten)]
    memtier: MemtierArgs,
}

impl RunMemtierArgs {
    /// Whether `--requests` was given (it bounds the run, so `--duration` may not).
    pub fn has_requests(&self) -> bool {
        self.requests.is_some()
    }

    /// Whether any flag of the group was given.
    pub fn given(&self) -> bool {
        !self.pairs().is_empty()
            || self.random_data
            || self.distinct_client_seed
            || !self.command.is_empty()
            || !self.command_ratio.is_empty()
            || !self.command_key_pattern.is_empty()
    }

    /// The valued flags given, as (memtier flag, value).
    fn pairs(&self) -> Vec<(&'static str, &str)> {
        [
            ("--ratio", &self.ratio),
            ("--requests", &self.requests),
            ("--key-prefix", &self.key_prefix),
            ("--key-minimum", &self.key_minimum),
            ("--key-maximum", &self.key_maximum),
            ("--key-pattern", &self.key_pattern),
            ("--key-stddev", &self.key_stddev),
            ("--key-median", &self.key_median),
            ("--key-zipf-exp", &self.key_zipf_exp),
            ("--data-size", &self.data_size),
            ("--data-size-range", &self.data_size_range),
            ("--data-size-list", &self.data_size_list),
            ("--data-size-pattern", &self.data_size_pattern),
            ("--expiry-range", &self.expiry_range),
            ("--multi-key-get", &self.multi_key_get),
        ]
        .into_iter()
        .filter_map(|(flag, v)| v.as_deref().map(|v| (flag, v)))
        .collect()
    }

    /// The workload for `threads` × `connections` clients, or the first flag memtier
    /// would refuse and why.
    pub fn spec(&self, threads: usize, connections: usize) -> Result<MemtierSpec, String> {
        let mut argv = vec![
            format!("--threads={threads}"),
            format!("--clients={connections}"),
        ];
        argv.extend(self.pairs().into_iter().map(|(f, v)| format!("{f}={v}")));
        if self.random_data {
            argv.push("--random-data".into());
        }
        if self.distinct_client_seed {
            argv.push("--distinct-client-seed".into());
        }
        // The command flags in their command-line order: a ratio or key pattern applies
        // to the --command before it.
        let mut commands: Vec<(u64, String)> = Vec::new();
        for (flag, values) in [
            ("--command", &self.command),
            ("--command-ratio", &self.command_ratio),
            ("--command-key-pattern", &self.command_key_pattern),
        ] {
            commands.extend(
                values
                    .iter()
                    .map(|v| (v.seq, format!("{flag}={}", v.value))),
            );
        }
        commands.sort_by_key(|(seq, _)| *seq);
        argv.extend(commands.into_iter().map(|(_, arg)| arg));
        let flags = Flags::try_parse_from(&argv).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            first.trim_start_matches("error: ").to_string()
        })?;
        let m = &flags.memtier;
        if m.key_minimum > m.key_maximum {
            // `kvlab memtier` runs such a range as memtier does (one key, a warning);
            // `kvlab run` has no warnings to give and refuses it.
            return Err(format!(
                "--key-minimum={} is above --key-maximum={}",
                m.key_minimum, m.key_maximum
            ));
        }
        m.spec()
    }
}

#[cfg(test)]
mod tests {
    use crate::{DataSize, KeyPattern};

    use super::*;

    fn parse(line: &str) -> RunMemtierArgs {
        #[derive(Parser)]
        #[command(no_binary_name = true)]
        struct Run {
            #[command(flatten)]
            memtier: RunMemtierArgs,
        }
        Run::try_parse_from(line.split_whitespace())
            .unwrap()
            .memtier
    }

    #[test]
    fn no_flag_means_no_memtier_workload() {
        assert!(!parse("").given());
        assert!(parse("--random-data").given());
        assert!(parse("--key-maximum 9").given());
    }

    #[test]
    fn flags_mean_what_they_mean_to_memtier() {
        let spec = parse(
            "--ratio 1:4 --key-pattern=G:Z --key-minimum 1 --key-maximum 5000 \
             --data-size-range 10-20 --data-size-pattern S --requests allkeys \
             --distinct-client-seed",
        )
        .spec(2, 8)
        .unwrap();
        assert_eq!((spec.ratio.sets, spec.ratio.gets), (1, 4));
        assert_eq!(
            (spec.set_pattern, spec.get_pattern),
            (KeyPattern::Gaussian, KeyPattern::Zipfian)
        );
        assert_eq!((spec.key_minimum, spec.key_maximum), (1, 5000));
        assert!(matches!(
            spec.data_size,
            DataSize::Range {
                min_bytes: 10,
                max_bytes: 20,
                ..
            }
        ));
        assert_eq!(spec.total_clients, 16);
        // allkeys: as many requests per client as the range is wide (memtier's rule).
        assert_eq!(spec.requests, Some(4999));
        assert!(spec.distinct_client_seed);
        let spec = parse("--data-size 7 --multi-key-get 3").spec(1, 1).unwrap();
        assert_eq!(spec.multi_key_get, 3);
        assert!(matches!(spec.data_size, DataSize::Fixed(7)));
        assert_eq!(spec.key_prefix, "memtier-", "memtier's defaults otherwise");
    }

    #[test]
    fn commands_keep_their_order_and_memtiers_rules() {
        #[derive(Parser)]
        #[command(no_binary_name = true)]
        struct Run {
            #[command(flatten)]
            memtier: RunMemtierArgs,
        }
        let parse = |argv: &[&str]| Run::try_parse_from(argv).unwrap().memtier;
        let run = parse(&[
            "--command=set __key__ __data__",
            "--command-ratio=2",
            "--command",
            "get __key__",
            "--command-key-pattern=S",
        ]);
        assert!(run.given());
        let spec = run.spec(1, 1).unwrap();
        let got: Vec<(String, u32, char)> = spec
            .commands
            .iter()
            .map(|c| (c.name(), c.ratio, c.key_pattern.letter()))
            .collect();
        assert_eq!(
            got,
            [("SET".to_string(), 2, 'R'), ("GET".to_string(), 1, 'S')]
        );
        let e = parse(&["--command=get __key__", "--ratio=1:1"])
            .spec(1, 1)
            .unwrap_err();
        assert!(e.contains("--command-ratio"), "{e}");
    }

    #[test]
    fn memtiers_refusals_name_the_flag() {
        for (line, message) in [
            ("--ratio 1", "--ratio"),
            ("--key-pattern X:R", "--key-pattern"),
            ("--key-zipf-exp 7", "key-zipf-exp"),
            ("--key-stddev 3", "--key-stddev"),
            ("--key-minimum 10 --key-maximum 5", "key"),
        ] {
            let e = parse(line).spec(1, 1).unwrap_err();
            assert!(e.contains(message), "{line}: {e}");
        }
    }
}

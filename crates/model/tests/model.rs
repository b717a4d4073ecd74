//! Model files: what [`Model::to_toml`] writes reads back to the same config, and bad
//! files give errors naming the file, the line and the key.

use std::path::Path;

use kvlab_dist::mixgraph::MixGraphConfig;
use kvlab_model::{MixGraphParams, Model, ModelError};

/// The ZippyDB example as a model (also a seed of the fuzz smoke test).
pub(crate) fn zippy_model() -> Model {
    let z = MixGraphConfig::zippydb_example();
    Model {
        header: vec!["made by hand from PR #5953's example".into()],
        mixgraph: MixGraphParams {
            num: Some(z.num),
            reads: Some(z.reads),
            key_size: Some(z.key_size),
            keyrange_num: Some(z.keyrange_num),
            keyrange_dist_a: Some(z.keyrange_dist_a),
            keyrange_dist_b: Some(z.keyrange_dist_b),
            keyrange_dist_c: Some(z.keyrange_dist_c),
            keyrange_dist_d: Some(z.keyrange_dist_d),
            key_dist_a: Some(z.key_dist_a),
            key_dist_b: Some(z.key_dist_b),
            mix_get_ratio: Some(0.85),
            mix_put_ratio: Some(0.14),
            mix_seek_ratio: Some(0.01),
            value_k: Some(1.0),
            sine_mix_rate: Some(false),
            ..MixGraphParams::default()
        },
        kvlab: kvlab_model::KvlabParams::default(),
        locality: None,
        fit: toml::Table::new(),
    }
}

#[test]
fn a_written_model_reads_back_to_the_same_config() {
    let m = zippy_model();
    let text = m.to_toml();
    // Floats stay floats (`value_k = 1.0`), and every key has its meaning above it.
    assert!(text.contains("\nvalue_k = 1.0\n"), "{text}");
    assert!(text.starts_with("# made by hand"), "{text}");
    let back = Model::from_toml(&text, Path::new("zippy.toml")).expect("reads back");
    assert_eq!(back.mixgraph, m.mixgraph);
    assert_eq!(back.header, m.header);
    // The sine keys were not written: db_bench's defaults.
    let d = MixGraphConfig::default();
    let expected = MixGraphConfig {
        value_k: 1.0,
        sine_a: d.sine_a,
        sine_b: d.sine_b,
        sine_d: d.sine_d,
        sine_mix_rate_interval_milliseconds: d.sine_mix_rate_interval_milliseconds,
        ..MixGraphConfig::zippydb_example()
    };
    assert_eq!(back.to_config(), expected);
}

#[test]
fn every_params_key_is_a_db_bench_flag() {
    // The keys scripts rely on are exactly db_bench's flag names: each one is accepted by
    // the db_bench command-line parser.
    let mut c = MixGraphConfig::default();
    for key in MixGraphParams::KEYS {
        let value = if *key == "sine_mix_rate" { "true" } else { "1" };
        assert!(
            c.set_flag(key, value).expect("parses"),
            "{key} is not a flag"
        );
    }
}

fn error_of(text: &str) -> ModelError {
    match Model::from_toml(text, Path::new("/models/bad.toml")) {
        Ok(m) => panic!("accepted: {m:?}"),
        Err(e) => e,
    }
}

#[test]
fn bad_files_name_the_file_line_and_key() {
    // An unknown key.
    let e = error_of("# a model\n[mixgraph]\nnum = 10\nmix_gett_ratio = 0.5\n");
    let s = e.to_string();
    assert!(
        matches!(&e, ModelError::Key { line: 4, key, .. } if key == "mix_gett_ratio"),
        "{e:?}"
    );
    assert!(
        s.starts_with("/models/bad.toml:4: key `mix_gett_ratio`"),
        "{s}"
    );
    assert!(
        s.contains("mix_get_ratio"),
        "the allowed keys are listed: {s}"
    );

    // A value of the wrong type.
    let e = error_of("[mixgraph]\nnum = \"many\"\n");
    assert!(
        matches!(&e, ModelError::Key { line: 2, key, .. } if key == "num"),
        "{e:?}"
    );

    // A value out of range, with the allowed range.
    let e = error_of("[mixgraph]\nnum = 100\n\n# comment\nmix_get_ratio = -0.5\n");
    let s = e.to_string();
    assert!(
        matches!(&e, ModelError::Key { line: 5, key, .. } if key == "mix_get_ratio"),
        "{e:?}"
    );
    assert!(s.contains("≥ 0"), "{s}");
    let e = error_of("[mixgraph]\nnum = 100\nkeyrange_num = 500\nkey_dist_a = 0.1\n");
    assert!(
        matches!(&e, ModelError::Key { line: 3, key, message, .. }
            if key == "keyrange_num" && message.contains("1 to num (100)")),
        "{e:?}"
    );

    // An unknown table, and broken TOML.
    let e = error_of("[mixgraph]\nnum = 1\n[mixgrph]\n");
    assert!(
        matches!(&e, ModelError::Key { key, .. } if key == "mixgrph"),
        "{e:?}"
    );
    let e = error_of("[mixgraph]\nnum = = 1\n");
    assert!(
        matches!(
            &e,
            ModelError::Syntax { line: 2, .. } | ModelError::Key { line: 2, .. }
        ),
        "{e:?}"
    );
    // No [mixgraph] table.
    let e = error_of("[fit]\nrequests = 1\n");
    assert!(e.to_string().contains("mixgraph"), "{e}");
}

#[test]
fn fit_options_parse_from_command_line_words() {
    use kvlab_model::{KeyRangeRule, RangeCut};
    assert_eq!("sst".parse(), Ok(KeyRangeRule::SstFile));
    assert_eq!("keys:5000".parse(), Ok(KeyRangeRule::KeysPerRange(5000)));
    assert_eq!("ranges:30".parse(), Ok(KeyRangeRule::Ranges(30)));
    assert!("ranges:0".parse::<KeyRangeRule>().is_err());
    assert!("30".parse::<KeyRangeRule>().is_err());
    assert_eq!("span".parse(), Ok(RangeCut::EqualSpan));
    assert_eq!("keys".parse(), Ok(RangeCut::EqualKeys));
    assert!("bytes".parse::<RangeCut>().is_err());
}

#[test]
fn files_are_written_and_read_and_a_missing_one_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("zippy.model.toml");
    let m = zippy_model();
    m.write(&path).expect("writes");
    assert_eq!(Model::read(&path).expect("reads").mixgraph, m.mixgraph);
    let missing = dir.path().join("missing.toml");
    let e = Model::read(&missing).expect_err("no such file");
    assert!(
        matches!(&e, ModelError::Io { path, .. } if *path == missing),
        "{e:?}"
    );
    assert!(e.to_string().contains("missing.toml"), "{e}");
    // The model as a db_bench command line.
    let args = m.db_bench_args();
    assert_eq!(args[0], "-num=5000000");
    assert!(
        args.contains(&"-keyrange_dist_b=-2.917".to_owned()),
        "{args:?}"
    );
    let (config, unused) =
        MixGraphConfig::from_db_bench_args(args.iter().map(String::as_str)).expect("parses");
    assert!(unused.is_empty(), "{unused:?}");
    assert_eq!(config, m.to_config());
}

/// `[kvlab] keyrange_starts` reads back into the generator's explicit ranges; bad
/// starts are errors naming the file, the line of the key and what was expected.
#[test]
fn kvlab_size_laws_read_back_and_bad_ones_name_their_line() {
    use kvlab_model::sizes::SizeModel;
    let mut m = zippy_model();
    m.kvlab.value_model = Some(SizeModel::Lognormal {
        mu: 4.5,
        sigma: 0.75,
    });
    m.kvlab.scan_model = Some(SizeModel::Exponential { mean: 12.5 });
    let text = m.to_toml();
    let path = Path::new("m.toml");
    let back = Model::from_toml(&text, path).expect("reads back");
    assert_eq!(back.kvlab, m.kvlab);
    let c = back.to_config();
    assert_eq!(c.value_model, m.kvlab.value_model);
    assert_eq!(c.scan_model, m.kvlab.scan_model);
    // db_bench's command line has no such flag: it keeps the [mixgraph] keys only.
    assert!(!back.db_bench_args().iter().any(|a| a.contains("model")));
    let line = text
        .lines()
        .position(|l| l.starts_with("value_model"))
        .expect("written")
        + 1;
    for (from, to, says) in [
        ("sigma = 0.75", "sigma = -0.75", "sigma"),
        ("sigma = 0.75", "sigma = 0.75, k = 2", "no parameter `k`"),
    ] {
        let bad = text.replacen(from, to, 1);
        assert_ne!(bad, text);
        let e = Model::from_toml(&bad, path)
            .expect_err("refused")
            .to_string();
        assert!(
            e.starts_with(&format!("m.toml:{line}: key `value_model`")),
            "{e}"
        );
        assert!(e.contains(says), "{e}");
    }
    let bad = text.replacen("\"lognormal\"", "\"gamma\"", 1);
    let e = Model::from_toml(&bad, path)
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("gamma") && e.contains(&format!(":{line}")),
        "{e}"
    );
}

#[test]
fn kvlab_key_range_starts_read_back_and_bad_ones_name_their_line() {
    let mut m = zippy_model();
    m.mixgraph.keyrange_num = Some(3);
    m.kvlab.keyrange_starts = Some(vec![0, 1_000_000, 4_000_000]);
    m.kvlab.keyrange_source = Some("sst:/tmp/db".into());
    let text = m.to_toml();
    let path = std::path::Path::new("m.toml");
    let back = Model::from_toml(&text, path).expect("reads back");
    assert_eq!(back.kvlab, m.kvlab);
    let c = back.to_config();
    assert_eq!(
        c.keyrange_starts.as_deref(),
        Some(&[0, 1_000_000, 4_000_000][..])
    );
    let line = text
        .lines()
        .position(|l| l.starts_with("keyrange_starts"))
        .expect("written")
        + 1;
    let cases = [
        (
            "1000000, 4000000,",
            "4000000, 1000000,",
            "keyrange_starts",
            line,
        ),
        ("4000000,", "6000000,", "keyrange_starts", line),
    ];
    for (from, to, key, at) in cases {
        let bad = text.replacen(from, to, 1);
        assert_ne!(bad, text);
        let e = Model::from_toml(&bad, path)
            .expect_err("refused")
            .to_string();
        assert!(e.starts_with(&format!("m.toml:{at}: key `{key}`")), "{e}");
    }
    // A negative start is a type error on its own line.
    let bad = text.replacen("1000000,", "-5,", 1);
    let e = Model::from_toml(&bad, path)
        .expect_err("refused")
        .to_string();
    assert!(e.contains(": key `keyrange_starts`: invalid value"), "{e}");
    // An unknown key of [kvlab] is refused.
    let bad = text.replace("[kvlab]\n", "[kvlab]\nkeyrange_ends = [1]\n");
    let e = Model::from_toml(&bad, path)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("keyrange_ends"), "{e}");
}

#[test]
fn a_locality_table_reads_back_and_bad_ones_name_their_line() {
    use kvlab_dist::locality::{Locality, Reuse};
    let mut m = zippy_model();
    m.locality = Some(Locality {
        new_share: 0.25,
        new_steps: vec![(0, 3), (1, 9)],
        new_near: vec![Reuse {
            depth_lo: 2,
            depth_hi: 2,
            step: 40,
            weight: 4,
        }],
        reuse: vec![
            Reuse {
                depth_lo: 0,
                depth_hi: 0,
                step: 1,
                weight: 7,
            },
            Reuse {
                depth_lo: 16,
                depth_hi: 17,
                step: 0,
                weight: 5,
            },
        ],
        pure_keys: 0.75,
        same_op: vec![0.5, 1.0, 0.25],
    });
    let text = m.to_toml();
    assert!(text.contains("\n[locality]\n"), "{text}");
    let back = Model::from_toml(&text, Path::new("l.toml")).expect("reads back");
    assert_eq!(back.locality, m.locality);
    assert_eq!(
        back.to_config().locality.as_deref(),
        m.locality.as_ref(),
        "the generator gets the layer"
    );
    // db_bench's command line has no locality.
    assert!(back
        .db_bench_args()
        .iter()
        .all(|a| !a.contains("new_share")));

    // A share outside [0, 1]: the file, the line of new_share, and what was expected.
    let bad = text.replace("new_share = 0.25", "new_share = 1.5");
    let line = bad
        .lines()
        .position(|l| l.starts_with("new_share"))
        .unwrap()
        + 1;
    let e = error_of(&bad);
    let s = e.to_string();
    assert!(
        s.starts_with(&format!("/models/bad.toml:{line}: key `locality`")) && s.contains("[0, 1]"),
        "{s}"
    );
    // A reuse class of three numbers instead of four.
    let bad = text.replace("[16, 17, 0, 5]", "[16, 17, 5]");
    let e = error_of(&bad);
    assert!(
        matches!(&e, ModelError::Key { key, .. } | ModelError::Syntax { message: key, .. } if !key.is_empty()),
        "{e:?}"
    );
    let line = bad.lines().position(|l| l.contains("[16, 17, 5]")).unwrap() + 1;
    assert!(
        e.to_string()
            .starts_with(&format!("/models/bad.toml:{line}:")),
        "{e}"
    );
}

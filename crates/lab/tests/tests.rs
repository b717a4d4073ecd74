//! The phase library's tests: the store table's consistency and the refusals derived
//! from it, and the limits a plan is checked against.

use kvlab_lab::limits::{check_workers, Machine};
use kvlab_lab::{is_store_option, Access, Flag, StoreInfo, STORES};

#[test]
fn every_store_has_a_unique_name_and_its_own_prefix() {
    for (i, s) in STORES.iter().enumerate() {
        assert_eq!(s.option_prefix, format!("{}.", s.name));
        assert!(STORES[..i].iter().all(|t| t.name != s.name), "{}", s.name);
        assert!(is_store_option(&format!("{}x", s.option_prefix)));
    }
    assert!(!is_store_option("recordcount"));
}

#[test]
fn facts_agree_with_each_other() {
    for s in STORES {
        assert_eq!(
            s.takes(Flag::Path),
            s.access == Access::Embedded,
            "{}",
            s.name
        );
        assert_eq!(
            s.takes(Flag::Url),
            s.access == Access::Network,
            "{}",
            s.name
        );
        assert_eq!(s.spawnable, s.takes(Flag::Spawn), "{}", s.name);
        // What kvlab crash kills: an embedded store's writer or a server it starts.
        if s.crashable {
            assert!(s.access == Access::Embedded || s.spawnable, "{}", s.name);
        }
        assert!(!s.power_loss || s.crashable, "{}", s.name);
        // A hint is for a flag the store refuses.
        for (flag, _) in s.instead {
            assert!(!s.takes(*flag), "{}: {flag:?}", s.name);
        }
    }
}

#[test]
fn a_flag_that_does_not_apply_is_refused_in_one_sentence_naming_what_applies() {
    let redis = StoreInfo::find("redis").unwrap();
    let e = redis.check(Flag::Path).unwrap_err().to_string();
    assert_eq!(
        e,
        "--path does not apply to --db redis: it is the data directory of embedded stores \
         (rocksdb, lmdb, wiredtiger)"
    );
    let e = StoreInfo::find("rocksdb")
        .unwrap()
        .check(Flag::CacheSize)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("; rocksdb's block cache is -p rocksdb.block_cache_size=SIZE"),
        "{e}"
    );
    assert!(e.contains("(moka, foyer)"), "{e}");
    let e = StoreInfo::find("moka")
        .unwrap()
        .check_as(Flag::Connections, "--connections 2")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--connections 2 does not apply to --db moka: it is the clients per thread of network stores (redis, memcached)"), "{e}");
    assert!(redis.check(Flag::Spawn).is_ok());
    // Every refusal is one sentence: no line break, no trailing period.
    for s in STORES {
        for f in Flag::ALL {
            if let Err(e) = s.check(f) {
                let e = e.to_string();
                assert!(!e.contains('\n') && !e.ends_with('.'), "{e}");
                assert!(e.starts_with(f.name()), "{e}");
            }
        }
    }
}

#[test]
fn another_stores_option_is_refused() {
    let rocksdb = StoreInfo::find("rocksdb").unwrap();
    assert_eq!(
        rocksdb
            .check_option("lmdb.map_size")
            .unwrap_err()
            .to_string(),
        "option `lmdb.map_size` is for --db lmdb, not --db rocksdb; options of rocksdb start \
         with `rocksdb.`"
    );
    assert!(rocksdb.check_option("rocksdb.block_cache_size").is_ok());
    assert!(rocksdb.check_option("fieldcount").is_ok());
}

#[test]
fn workers_beyond_the_machine_are_refused_with_the_limit_named() {
    let m = Machine {
        max_threads: Some(1000),
        max_files: Some(1024),
        available_bytes: Some(1 << 30),
    };
    assert!(check_workers(&m, 8, 4, true).is_ok());
    let e = check_workers(&m, 100_000, 1, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("1000 threads"), "{e}");
    // 5 000 workers need about 1.2 GiB of recorders: more than the 1 GiB there is.
    let roomy = Machine {
        max_threads: None,
        ..m
    };
    let e = check_workers(&roomy, 5000, 1, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("than the 1024 MiB of memory available"), "{e}");
    assert!(check_workers(&roomy, 900, 1, false).is_ok());
    let e = check_workers(&m, 2, 600, true).unwrap_err().to_string();
    assert!(
        e.contains("1200 connections") && e.contains("1024 open files"),
        "{e}"
    );
    // Connections are sockets only for network stores.
    assert!(check_workers(&m, 2, 600, false).is_ok());
    // This machine: an absurd thread count is refused, a small one is not.
    let here = Machine::current();
    assert!(check_workers(&here, 99_999_999_999, 1, false).is_err());
    assert!(check_workers(&here, 2, 1, true).is_ok());
}

#[test]
fn meaningless_values_are_refused() {
    use kvlab_lab::plan::*;
    use std::time::Duration;
    assert!(check_duration("--duration", Duration::ZERO).is_err());
    assert!(check_duration("--duration", Duration::from_millis(1)).is_ok());
    for bad in [0.0, -1.0, 5.0, f64::NAN] {
        assert!(check_rate("--shards", bad).is_err(), "{bad}");
    }
    assert!(check_rate("--shards", 1.0).is_ok());
    assert!(check_operations(Some(0)).is_err());
    assert!(check_operations(None).is_ok());
    assert!(record_count_warning(Some("0"))
        .unwrap()
        .starts_with("recordcount=0"));
    assert!(record_count_warning(None).is_some());
    assert!(record_count_warning(Some("10")).is_none());
}

#[test]
fn an_output_file_is_replaced_only_when_asked() {
    use kvlab_lab::outputs::check_output_file;
    let dir = std::env::temp_dir().join(format!("kvlab-lab-outputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("model.toml");
    assert!(check_output_file("-o", &file, false).is_ok());
    std::fs::write(&file, "x").unwrap();
    let e = check_output_file("-o", &file, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the file exists; give --overwrite"), "{e}");
    assert!(check_output_file("-o", &file, true).is_ok());
    let e = check_output_file("--record", &dir, true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a directory"), "{e}");
    let e = check_output_file("--record", &file.join("x"), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not a directory"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_expected_state_is_each_keys_last_whole_acknowledged_write() {
    use kvlab_lab::expected::{CrashCheck, ExpectedState, Found};
    let dir = std::env::temp_dir().join(format!("kvlab-lab-expected-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("acked");
    // k3's delete is torn (the writer died inside the line): not acknowledged whole.
    std::fs::write(&log, "I\tk1\nI\tk2\nD\tk2\nU\tk3\nI\tk4\nD\tk3").unwrap();
    let state = ExpectedState::read(&log).unwrap();
    assert_eq!(state.len(), 4);
    assert_eq!(state.expected(b"k1"), Some(true));
    assert_eq!(state.expected(b"k2"), Some(false));
    assert_eq!(state.expected(b"k3"), Some(true));
    assert_eq!(state.expected(b"k9"), None);

    let mut c = CrashCheck::new(&state);
    c.count(&state, b"k1", Some(Found::Intact)); // recovered
    c.count(&state, b"k2", Some(Found::Intact)); // a delete undone: lost
    c.count(&state, b"k3", Some(Found::Missing)); // lost
    c.count(&state, b"k9", Some(Found::Intact)); // in flight, kept: allowed
    c.count(&state, b"k8", Some(Found::Missing)); // never written
    assert_eq!(
        (
            c.acknowledged,
            c.recovered,
            c.lost,
            c.unacknowledged_present,
            c.unchecked
        ),
        (4, 1, 2, 1, 1),
        "{c:?}"
    );
    assert_eq!(c.first_lost, ["k2", "k3"]);
    assert!(c.failed());

    std::fs::write(&log, "I\tk1\nX\tk2\n").unwrap();
    let e = ExpectedState::read(&log).unwrap_err().to_string();
    assert!(
        e.ends_with("acked:2: expected `I`, `U` or `D`, a tab and a key"),
        "{e}"
    );
    let e = ExpectedState::read(&dir.join("none"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("--expected-log "), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

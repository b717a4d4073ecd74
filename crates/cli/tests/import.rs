//! End-to-end tests of `kvlab import`, `run|verify --keys` and thread plans against a
//! real RocksDB in a temp dir and the null store.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;
use common::files::result_json;
use common::{report_u64, report_value, text};

/// kvlab with `args` and `--progress never`, from the repository root.
fn kvlab_cmd(args: &[&str]) -> Command {
    let mut c = common::kvlab_command(args);
    c.args(["--progress", "never"]);
    c
}

fn kvlab(args: &[&str]) -> Output {
    kvlab_cmd(args).output().expect("running kvlab")
}

/// `lines` lines shaped like TPC-H lineitem (16 fields, a trailing `|`), keys
/// `orderkey|partkey|suppkey` unique; returns the text and the keys in order.
fn lineitem(lines: usize) -> (String, Vec<String>) {
    let mut s = String::new();
    let mut keys = Vec::with_capacity(lines);
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for i in 0..lines {
        let (order, line) = (i / 4 + 1, i % 4 + 1);
        let key = format!(
            "{order}|{}|{}",
            rnd(200_000) + 1,
            line * 10 + rnd(10) as usize
        );
        s.push_str(&format!(
            "{key}|{line}|{}|{}.{:02}|0.0{}|0.0{}|N|O|1996-03-13|1996-02-12|1996-03-22|\
             DELIVER IN PERSON|TRUCK|egular courts above the {}|\n",
            rnd(50) + 1,
            rnd(100_000),
            rnd(100),
            rnd(10),
            rnd(9),
            rnd(1000)
        ));
        keys.push(key);
    }
    (s, keys)
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
fn import_into_rocksdb_samples_keys_that_verify_and_run_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("lineitem.tbl");
    let (contents, keys) = lineitem(10_000);
    write(&data, &contents);
    let db = dir.path().join("li");
    let keys_out = dir.path().join("keys.txt");
    let out = dir.path().join("out");
    // The command line of the issue, plus a seed and an output directory.
    let o = kvlab(&[
        "import",
        data.to_str().unwrap(),
        "--delimiter",
        "|",
        "--key-fields",
        "0,1,2",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--sample-keys",
        "0.07",
        "--keys-out",
        keys_out.to_str().unwrap(),
        "--seed",
        "3",
        "--threads",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "import failed: {stderr}");
    assert_eq!(report_u64(&stdout, "INSERT", "Return=OK"), 10_000);
    assert_eq!(report_u64(&stdout, "IMPORT", "Lines"), 10_000);
    assert_eq!(report_u64(&stdout, "IMPORT", "Malformed"), 0);
    let sampled = std::fs::read_to_string(&keys_out).unwrap();
    let sampled: Vec<&str> = sampled.lines().collect();
    assert_eq!(
        report_u64(&stdout, "IMPORT", "SampledKeys"),
        sampled.len() as u64
    );
    // 7 % of 10000 = 700; binomial sd ≈ 25.5, so ±130 is five sd.
    assert!(
        (570..=830).contains(&sampled.len()),
        "{} sampled",
        sampled.len()
    );
    for k in &sampled {
        assert!(
            keys.iter().any(|x| x == k),
            "sampled key {k} was never imported"
        );
    }
    let doc = result_json(&out);
    assert_eq!(doc["phase"], "import");
    assert_eq!(doc["runner"]["import"]["lines"], 10_000);
    assert_eq!(doc["workload"]["import.key_fields"], "0,1,2");

    // Every sampled key is readable.
    let db_s = db.to_str().unwrap();
    let keys_s = keys_out.to_str().unwrap();
    let o = kvlab(&[
        "verify", "--keys", keys_s, "--db", "rocksdb", "--path", db_s, "-t", "2",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "verify failed: {stdout}{stderr}");
    assert_eq!(
        report_u64(&stdout, "VERIFY", "Records"),
        sampled.len() as u64
    );
    assert_eq!(report_u64(&stdout, "VERIFY", "Missing"), 0);

    // A key that was never imported is reported, with exit code 1.
    let more = dir.path().join("more.txt");
    write(&more, &format!("{}\nnot|a|key\n", sampled[0]));
    let o = kvlab(&[
        "verify",
        "--keys",
        more.to_str().unwrap(),
        "--db",
        "rocksdb",
        "--path",
        db_s,
    ]);
    let (stdout, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert_eq!(report_u64(&stdout, "VERIFY", "Missing"), 1);
    assert_eq!(
        report_value(&stdout, "VERIFY", "MissingKey").as_deref(),
        Some("not|a|key")
    );

    // Random reads of keys from the file: every one is found.
    let o = kvlab(&[
        "run",
        "--keys",
        keys_s,
        "-P",
        "workloads/ycsb/workloadc",
        "-p",
        "operationcount=3000",
        "--db",
        "rocksdb",
        "--path",
        db_s,
        "--threads",
        "2",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "run failed: {stderr}");
    assert_eq!(report_u64(&stdout, "READ", "Operations"), 3000);
    assert_eq!(report_u64(&stdout, "READ", "Return=OK"), 3000);
    assert_eq!(report_value(&stdout, "READ", "Return=NOT_FOUND"), None);
}

#[test]
fn stored_values_are_the_other_fields_joined() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("t.tsv");
    // Key fields 2 and 0 (in that order); a tab-separated file without trailing tabs.
    write(&data, "a\tb\tc\td\n1\t2\t3\t4\n");
    let db = dir.path().join("db");
    let keys = dir.path().join("keys.txt");
    let o = kvlab(&[
        "import",
        data.to_str().unwrap(),
        "--delimiter",
        "tab",
        "--key-fields",
        "2,0",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
        "--keys-out",
        keys.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(std::fs::read_to_string(&keys).unwrap(), "c\ta\n3\t1\n");
    // Read back with RocksDB's own tool (`ldb`, from rocksdb-tools): `b<TAB>d`.
    let o = Command::new("ldb")
        .args([
            &format!("--db={}", db.display()),
            "--column_family=usertable",
            "get",
            "c\ta",
        ])
        .output()
        .expect("running ldb (apt-get install rocksdb-tools)");
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim_end(), "b\td");
    let o = kvlab(&[
        "verify",
        "--keys",
        keys.to_str().unwrap(),
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).0);
}

#[test]
fn malformed_lines_are_counted_and_named_or_stop_a_strict_import() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("bad.tbl");
    let (good, _) = lineitem(100);
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    lines[9] = "1|2|3|too few|".into(); // line 10
    lines[41] = format!("{}extra|", lines[41]); // line 42
    lines[60] = String::new(); // line 61: blank, skipped
    write(&data, &(lines.join("\n") + "\n"));
    let base = [
        "import",
        data.to_str().unwrap(),
        "--key-fields",
        "0,1,2",
        "--db",
        "null",
    ];
    let o = kvlab(&base);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(report_u64(&stdout, "IMPORT", "Lines"), 100);
    assert_eq!(report_u64(&stdout, "IMPORT", "Malformed"), 2);
    assert_eq!(report_u64(&stdout, "IMPORT", "Blank"), 1);
    assert_eq!(report_u64(&stdout, "INSERT", "Operations"), 97);
    let named: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("[IMPORT], MalformedLine, "))
        .collect();
    let path = data.display();
    assert_eq!(
        named,
        [
            format!("{path}:10: 4 fields, expected 16"),
            format!("{path}:42: 17 fields, expected 16"),
        ]
    );
    assert!(
        stderr.contains(&format!("malformed {path}:10: 4 fields")),
        "{stderr}"
    );

    // --strict stops at line 10 with exit code 1, naming file:line.
    let o = kvlab(&[&base[..], &["--strict"]].concat());
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "import stopped (--strict): {path}:10: 4 fields, expected 16"
        )),
        "{stderr}"
    );
    assert_eq!(report_u64(&stdout, "INSERT", "Operations"), 9);

    // --fields makes the expected count explicit: every line of a 16-field file is bad.
    let o = kvlab(&[&base[..], &["--fields", "17"]].concat());
    let (stdout, _) = text(&o);
    assert_eq!(report_u64(&stdout, "IMPORT", "Malformed"), 98);
}

#[test]
fn limit_and_reading_from_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let (text_in, _) = lineitem(5_000);
    let data = dir.path().join("li.tbl");
    write(&data, &text_in);
    let o = kvlab(&[
        "import",
        data.to_str().unwrap(),
        "--key-fields",
        "0,1,2",
        "--db",
        "null",
        "--limit",
        "1234",
        "--threads",
        "2",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(report_u64(&stdout, "INSERT", "Operations"), 1234);
    assert_eq!(report_u64(&stdout, "IMPORT", "Lines"), 1234);

    // Standard input, written by this process while kvlab reads.
    let mut child = kvlab_cmd(&["import", "-", "--key-fields", "0,1,2", "--db", "null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = text_in.clone();
    let writer = std::thread::spawn(move || {
        for chunk in feed.as_bytes().chunks(4096) {
            stdin.write_all(chunk).unwrap();
        }
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(report_u64(&stdout, "INSERT", "Operations"), 5_000);

    // A named pipe (as `<(zcat file.gz)` gives), fed by another process, into RocksDB.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let db = dir.path().join("db");
    let reader = kvlab_cmd(&[
        "import",
        fifo.to_str().unwrap(),
        "--key-fields",
        "0,1,2",
        "--db",
        "rocksdb",
        "--path",
        db.to_str().unwrap(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let writer = Command::new("sh")
        .args(["-c", "cat \"$1\" > \"$2\"", "sh"])
        .arg(&data)
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(writer.success());
    let o = reader.wait_with_output().unwrap();
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(report_u64(&stdout, "INSERT", "Return=OK"), 5_000);
}

#[test]
fn bad_import_options_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("li.tbl");
    write(&data, &lineitem(10).0);
    let d = data.to_str().unwrap();
    for (args, says) in [
        (
            &["--key-fields", "0,16"][..],
            "names field 16, but lines have 16 fields",
        ),
        (&["--key-fields", "0,x"][..], "`x` is not a field number"),
        (&["--key-fields", "1,1"][..], "listed twice"),
        (
            &["--key-fields", "0", "--delimiter", "||"][..],
            "expected one byte",
        ),
        (
            &["--key-fields", "0", "--sample-keys", "0.1"][..],
            "needs --keys-out",
        ),
        (
            &["--key-fields", "0", "-p", "recordcount=5"][..],
            "store options only",
        ),
        (
            &["--key-fields", "0", "-P", "workloads/ycsb/workloada"][..],
            "-P does not apply",
        ),
    ] {
        let o = kvlab(&[&["import", d, "--db", "null"][..], args].concat());
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let o = kvlab(&[
        "import",
        "/nonexistent/li.tbl",
        "--key-fields",
        "0",
        "--db",
        "null",
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent/li.tbl"), "{stderr}");
}

#[test]
fn plan_files_are_checked_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.txt");
    for (contents, says) in [
        (
            "group.r.threads=1\ngroup.r.readproportoin=1\n",
            ":2: unknown setting `readproportoin`",
        ),
        ("group.r.threads=two\n", ":1: `group.r.threads` = `two`"),
        (
            "group.r.threads=1\n",
            ":1: group `r`: every proportion is 0",
        ),
        ("# only a comment\n", ":1: no groups"),
        (
            "groups.r.threads=1\n",
            ":1: unknown plan key `groups.r.threads`",
        ),
    ] {
        write(&plan, contents);
        let o = kvlab(&["run", "--plan", plan.to_str().unwrap(), "--db", "null"]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{contents:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{}{says}", plan.display())),
            "{contents:?}: {stderr}"
        );
    }
    write(&plan, "group.r.threads=2\ngroup.r.readproportion=1\n");
    let o = kvlab(&[
        "run",
        "--plan",
        plan.to_str().unwrap(),
        "--threads",
        "3",
        "--db",
        "null",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o)
        .1
        .contains("--threads 3, but the plan's groups have 2 threads"));
    let o = kvlab(&["load", "--plan", plan.to_str().unwrap(), "--db", "null"]);
    assert_eq!(o.status.code(), Some(2));
    // Two inserting groups on YCSB keys would insert the same keys.
    write(
        &plan,
        "group.a.threads=1\ngroup.a.insertproportion=1\ngroup.b.threads=1\ngroup.b.insertproportion=1\n",
    );
    let o = kvlab(&["run", "--plan", plan.to_str().unwrap(), "--db", "null"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("groups a, b all insert"),
        "{}",
        text(&o).1
    );
}

/// The per-group counts `[GROUP:name], KIND Operations, n` of a plan run.
fn group_ops(stdout: &str, group: &str, kind: &str) -> u64 {
    report_value(
        stdout,
        &format!("GROUP:{group}"),
        &format!("{kind} Operations"),
    )
    .map_or(0, |v| v.parse().unwrap())
}

#[test]
fn each_plan_group_runs_its_own_mix() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let plan = dir.path().join("plan.txt");
    write(
        &plan,
        "# two readers, a mixed thread, an inserter\n\
         group.readers.threads = 2\n\
         group.readers.readproportion = 1\n\
         group.mixed.threads = 1\n\
         group.mixed.readproportion = 0.5\n\
         group.mixed.updateproportion = 0.5\n\
         group.writers.threads = 1\n\
         group.writers.insertproportion = 1\n",
    );
    let common = [
        "-p",
        "recordcount=2000",
        "--db",
        "rocksdb",
        "--path",
        db,
        "--seed",
        "5",
    ];
    let o = kvlab(&[&["load"][..], &common].concat());
    assert!(o.status.success(), "{}", text(&o).1);
    let out = dir.path().join("out");
    let o = kvlab(
        &[
            &[
                "run",
                "--plan",
                plan.to_str().unwrap(),
                "-p",
                "operationcount=8000",
            ][..],
            &common,
            &["--out", out.to_str().unwrap()],
        ]
        .concat(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("on rocksdb (4 threads"), "{stderr}");
    // 8000 operations over 4 threads: 2000 each.
    assert_eq!(group_ops(&stdout, "readers", "READ"), 4000);
    assert_eq!(group_ops(&stdout, "readers", "UPDATE"), 0);
    assert_eq!(group_ops(&stdout, "writers", "INSERT"), 2000);
    assert_eq!(group_ops(&stdout, "writers", "READ"), 0);
    let (r, u) = (
        group_ops(&stdout, "mixed", "READ"),
        group_ops(&stdout, "mixed", "UPDATE"),
    );
    assert_eq!(r + u, 2000);
    // Binomial(2000, 0.5): sd ≈ 22; ±120 is over five sd.
    assert!((880..=1120).contains(&r), "mixed: {r} reads, {u} updates");
    // The runner's totals agree with the groups'.
    assert_eq!(report_u64(&stdout, "READ", "Operations"), 4000 + r);
    assert_eq!(report_u64(&stdout, "INSERT", "Operations"), 2000);
    assert_eq!(
        report_value(&stdout, "GROUP:readers", "Threads").as_deref(),
        Some("0-1")
    );
    // Latency per group: the readers measured reads only, the writers inserts only.
    let latency = |group: &str, kind: &str| {
        report_value(
            &stdout,
            &format!("GROUP:{group}"),
            &format!("{kind} 99thPercentileLatency(us)"),
        )
        .map(|v| v.parse::<f64>().unwrap())
    };
    assert!(
        latency("readers", "READ").is_some_and(|l| l > 0.0),
        "{stdout}"
    );
    assert!(latency("readers", "INSERT").is_none(), "{stdout}");
    assert!(
        latency("writers", "INSERT").is_some_and(|l| l > 0.0),
        "{stdout}"
    );
    assert!(latency("writers", "READ").is_none(), "{stdout}");
    let doc = result_json(&out);
    let groups = doc["runner"]["plan_groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[2]["name"], "writers");
    assert_eq!(groups[2]["by_kind"]["INSERT"]["OK"], 2000);
    assert_eq!(doc["workload"]["plan.group.mixed.updateproportion"], "0.5");

    // Seed 003's flags: threads 0-1 run config 1 (all updates), thread 2 config 0.
    let o = kvlab(
        &[
            &[
                "run",
                "--plan_config",
                "0:100:0:0",
                "--plan_config",
                "1:0:0:100",
                "--thread_plan_map",
                "0-1:1",
                "--threads",
                "3",
                "-p",
                "operationcount=3000",
            ][..],
            &common,
        ]
        .concat(),
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(group_ops(&stdout, "config1", "UPDATE"), 2000);
    assert_eq!(group_ops(&stdout, "config0", "READ"), 1000);
    assert_eq!(report_u64(&stdout, "UPDATE", "Return=OK"), 2000);
}

#[test]
fn key_file_plans_read_only_keys_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("li.tbl");
    write(&data, &lineitem(3_000).0);
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let keys = dir.path().join("keys.txt");
    let o = kvlab(&[
        "import",
        data.to_str().unwrap(),
        "--key-fields",
        "0,1,2",
        "--db",
        "rocksdb",
        "--path",
        db,
        "--keys-out",
        keys.to_str().unwrap(),
        "--sample-keys",
        "0.1",
        "--value-format",
        "fields",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let plan = dir.path().join("plan.txt");
    write(
        &plan,
        "group.readers.threads = 2\ngroup.readers.readproportion = 1\n\
         group.writers.threads = 1\ngroup.writers.updateproportion = 1\n\
         group.writers.insertproportion = 1\n",
    );
    let o = kvlab(&[
        "run",
        "--keys",
        keys.to_str().unwrap(),
        "--value-format",
        "fields",
        "-p",
        "fieldcount=13",
        "--plan",
        plan.to_str().unwrap(),
        "-p",
        "operationcount=6000",
        "--db",
        "rocksdb",
        "--path",
        db,
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(report_u64(&stdout, "READ", "Return=OK"), 4000);
    assert_eq!(report_value(&stdout, "READ", "Return=NOT_FOUND"), None);
    let (u, i) = (
        group_ops(&stdout, "writers", "UPDATE"),
        group_ops(&stdout, "writers", "INSERT"),
    );
    assert_eq!(u + i, 2000);
    assert_eq!(report_u64(&stdout, "UPDATE", "Return=OK"), u);
    assert_eq!(report_u64(&stdout, "INSERT", "Return=OK"), i);
}

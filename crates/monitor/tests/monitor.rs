//! The monitor against the real `/proc` of this machine and a real `redis-server`: the
//! files have the documented columns, one row per interval plus the part-interval at
//! the end, and the summary agrees with the rows.

use std::path::Path;
use std::time::{Duration, Instant};

use kvlab_monitor::{Monitor, MonitorConfig, MonitorSummary};
use kvlab_spawn::{Server, ServerKind, ServerSpec};

/// The header and the rows (cells as text) of a CSV file.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header line")
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// The values of `column` in `rows`, parsed; `None` for an empty cell.
fn column(header: &[String], rows: &[Vec<String>], name: &str) -> Vec<Option<f64>> {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter()
        .map(|r| (!r[i].is_empty()).then(|| r[i].parse().unwrap()))
        .collect()
}

fn header_of(columns: &[&str]) -> Vec<String> {
    std::iter::once("time_s")
        .chain(columns.iter().copied())
        .map(str::to_string)
        .collect()
}

/// Keeps one core busy until `until`.
fn spin_until(until: Instant) -> u64 {
    let mut x = 0u64;
    while Instant::now() < until {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    x
}

#[test]
fn samples_this_process_a_redis_server_a_data_dir_and_store_statistics() {
    let out = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("000001.sst"), vec![7u8; 10_000]).unwrap();
    let server = Server::start(&ServerSpec::parse(ServerKind::Redis, "").unwrap()).unwrap();
    let addr = server.addr();

    let mut config = MonitorConfig::new(out.path());
    config.server_pid = Some(server.pid());
    config.data_dir = Some(data.path().to_path_buf());
    let mut calls = 0u32;
    config.store_stats = Some(Box::new(move || {
        calls += 1;
        // Redis INFO's key count, as a store-statistics callback would report it.
        let keys = match kvlab_spawn::resp::command(addr, &["DBSIZE"]) {
            Ok(kvlab_spawn::resp::Value::Integer(n)) => n as f64,
            _ => f64::NAN,
        };
        vec![("calls".into(), f64::from(calls)), ("keys".into(), keys)]
    }));
    let monitor = Monitor::start(config).unwrap();
    assert_eq!(monitor.dir(), out.path().join("monitor"));
    let start = Instant::now();
    // Busy for 0.9 s (kvlab's CPU shows in the first row), then at 1.5 s write keys and
    // grow the data dir, which the last row sees.
    spin_until(start + Duration::from_millis(900));
    std::thread::sleep(start + Duration::from_millis(1500) - Instant::now());
    for i in 0..100 {
        kvlab_spawn::resp::command(addr, &["SET", &format!("k{i}"), "v"]).unwrap();
    }
    std::fs::write(data.path().join("000002.sst"), vec![7u8; 20_000]).unwrap();
    std::thread::sleep(start + Duration::from_millis(2500) - Instant::now());
    let summary: MonitorSummary = monitor.stop().unwrap();
    server.stop().unwrap();

    let dir = out.path().join("monitor");
    let (h, cpu) = read_csv(&dir.join("cpu.csv"));
    assert_eq!(h, header_of(kvlab_monitor::CPU_COLUMNS));
    assert_eq!(
        h,
        [
            "time_s",
            "kvlab_cpu_pct",
            "server_cpu_pct",
            "system_cpu_pct",
            "iowait_pct"
        ]
    );
    // Rows at 1 s and 2 s, and the last half interval at 2.5 s.
    assert_eq!(cpu.len(), 3, "{cpu:?}");
    let times = column(&h, &cpu, "time_s");
    assert!((times[0].unwrap() - 1.0).abs() < 0.4, "{times:?}");
    assert!((times[2].unwrap() - 2.5).abs() < 0.4, "{times:?}");
    let kvlab_cpu = column(&h, &cpu, "kvlab_cpu_pct");
    // Most of the first second was spent spinning, the last half second sleeping.
    assert!(
        kvlab_cpu[0].unwrap() > kvlab_cpu[2].unwrap() + 5.0,
        "{kvlab_cpu:?}"
    );
    for v in column(&h, &cpu, "system_cpu_pct") {
        assert!((0.0..=100.0).contains(&v.unwrap()));
    }
    assert!(column(&h, &cpu, "server_cpu_pct")
        .iter()
        .all(Option::is_some));

    let (h, mem) = read_csv(&dir.join("memory.csv"));
    assert_eq!(h, header_of(kvlab_monitor::MEMORY_COLUMNS));
    assert_eq!(mem.len(), 3);
    let total = column(&h, &mem, "mem_total_bytes")[0].unwrap();
    let free = column(&h, &mem, "mem_free_bytes")[0].unwrap();
    let rss = column(&h, &mem, "kvlab_rss_bytes")[0].unwrap();
    let server_rss = column(&h, &mem, "server_rss_bytes")[0].unwrap();
    assert!(free < total && rss > 1e6 && server_rss > 1e5, "{mem:?}");

    let (h, disk) = read_csv(&dir.join("disk.csv"));
    assert_eq!(h, header_of(kvlab_monitor::DISK_COLUMNS));
    assert_eq!(disk.len(), 3);
    assert!(column(&h, &disk, "kvlab_read_bytes_per_s")
        .iter()
        .all(|v| v.unwrap() >= 0.0));

    let (h, db) = read_csv(&dir.join("dbsize.csv"));
    assert_eq!(h, header_of(kvlab_monitor::DBSIZE_COLUMNS));
    let sizes = column(&h, &db, "data_dir_bytes");
    assert_eq!(sizes[0], Some(10_000.0), "{db:?}");
    assert_eq!(sizes[2], Some(30_000.0), "{db:?}");
    assert_eq!(column(&h, &db, "data_dir_files")[2], Some(2.0));

    let (h, store) = read_csv(&dir.join("store.csv"));
    assert_eq!(h, ["time_s", "calls", "keys"]);
    // The first call fixed the columns at start; then one call per row.
    assert_eq!(
        column(&h, &store, "calls"),
        [Some(2.0), Some(3.0), Some(4.0)]
    );
    assert_eq!(column(&h, &store, "keys")[2], Some(100.0));

    // The summary is the mean and max of the rows.
    assert_eq!(summary.rows, 3);
    let mean = kvlab_cpu.iter().map(|v| v.unwrap()).sum::<f64>() / 3.0;
    let got = summary.column("cpu", "kvlab_cpu_pct").unwrap();
    assert!((got.mean - mean).abs() < 0.01, "{} vs {mean}", got.mean);
    assert_eq!(summary.max("dbsize", "data_dir_bytes"), Some(30_000.0));
    assert_eq!(summary.max("store", "keys"), Some(100.0));
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let back: MonitorSummary = serde_json::from_str(&text).unwrap();
    assert_eq!(back.rows, summary.rows);
    assert_eq!(
        back.columns.keys().collect::<Vec<_>>(),
        summary.columns.keys().collect::<Vec<_>>()
    );
    for (k, c) in &summary.columns {
        // JSON keeps about 17 significant digits.
        assert!(
            (back.columns[k].mean - c.mean).abs() <= 1e-9 * c.mean.abs(),
            "{k}"
        );
    }
    assert!(summary
        .flat()
        .iter()
        .any(|(k, _)| k == "cpu.kvlab_cpu_pct.mean"));
}

#[test]
fn a_server_that_is_gone_and_no_options_give_empty_cells_and_only_the_three_files() {
    let out = tempfile::tempdir().unwrap();
    let mut config = MonitorConfig::new(out.path());
    config.interval = Duration::from_millis(200);
    // Above the default pid_max: no such process.
    config.server_pid = Some(u32::MAX - 1);
    let monitor = Monitor::start(config).unwrap();
    std::thread::sleep(Duration::from_millis(450));
    let summary = monitor.stop().unwrap();
    let dir = out.path().join("monitor");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["cpu.csv", "disk.csv", "memory.csv", "summary.json"]);
    let (h, cpu) = read_csv(&dir.join("cpu.csv"));
    assert!(cpu.len() >= 2, "{cpu:?}");
    assert!(column(&h, &cpu, "server_cpu_pct")
        .iter()
        .all(Option::is_none));
    assert!(column(&h, &cpu, "kvlab_cpu_pct")
        .iter()
        .all(Option::is_some));
    assert!(summary.column("cpu", "server_cpu_pct").is_none());
    assert!(summary.column("memory", "mem_total_bytes").is_some());
}

#[test]
fn an_unwritable_output_directory_is_an_error_naming_it() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let err = Monitor::start(MonitorConfig::new(&file)).unwrap_err();
    assert!(err.to_string().contains("not-a-dir"), "{err}");
}

/// The value of `name` in a [`kvlab_monitor::ServerStats`] sample.
fn stat(row: &[(String, f64)], name: &str) -> f64 {
    row.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {row:?}"))
        .1
}

#[test]
fn server_stats_read_redis_info_with_a_password_and_memcached_stats() {
    use kvlab_monitor::{ServerStats, MEMCACHED_STATS, REDIS_STATS};
    let spec = ServerSpec::parse(ServerKind::Redis, "requirepass=s3cret").unwrap();
    let redis = Server::start(&spec).unwrap();
    let mut conn =
        kvlab_spawn::resp::Connection::connect(redis.addr(), Duration::from_secs(5)).unwrap();
    conn.call(&["AUTH", "s3cret"]).unwrap();
    conn.call(&["SELECT", "2"]).unwrap();
    for i in 0..25 {
        conn.call(&["SET", &format!("k{i}"), "v"]).unwrap();
    }
    conn.call(&["GET", "k1"]).unwrap();
    conn.call(&["GET", "absent"]).unwrap();

    // Without the password every cell is empty; with it, INFO and DBSIZE of db 2.
    let row = ServerStats::new(ServerKind::Redis, vec![redis.addr()]).sample();
    assert!(row.iter().all(|(_, v)| v.is_nan()), "{row:?}");
    let mut stats = ServerStats::new(ServerKind::Redis, vec![redis.addr()])
        .with_auth(None, "s3cret".into())
        .with_db(Some(2));
    let row = stats.sample();
    let names: Vec<&str> = row.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, REDIS_STATS);
    assert_eq!(stat(&row, "keys"), 25.0);
    assert_eq!(stat(&row, "keyspace_hits"), 1.0);
    assert_eq!(stat(&row, "keyspace_misses"), 1.0);
    assert!(stat(&row, "used_memory") > 1e5, "{row:?}");
    // Two samples on one connection: the second sees the first's commands.
    let before = stat(&row, "total_commands_processed");
    let again = stats.sample();
    assert!(
        stat(&again, "total_commands_processed") > before,
        "{again:?}"
    );
    // A server that went away gives empty cells, and the columns stay.
    redis.stop().unwrap();
    let gone = stats.sample();
    assert_eq!(gone.len(), REDIS_STATS.len());
    assert!(gone.iter().all(|(_, v)| v.is_nan()), "{gone:?}");

    // Two memcached servers: the counts add up.
    let a = Server::start(&ServerSpec::parse(ServerKind::Memcached, "m=16").unwrap()).unwrap();
    let b = Server::start(&ServerSpec::parse(ServerKind::Memcached, "m=16").unwrap()).unwrap();
    for (server, n) in [(&a, 3), (&b, 4)] {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
        for i in 0..n {
            s.write_all(format!("set k{i} 0 0 1\r\nv\r\n").as_bytes())
                .unwrap();
        }
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        while got.len() < n * "STORED\r\n".len() {
            let k = s.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..k]);
        }
    }
    let mut stats = ServerStats::new(ServerKind::Memcached, vec![a.addr(), b.addr()]);
    let row = stats.sample();
    let names: Vec<&str> = row.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, MEMCACHED_STATS);
    assert_eq!(stat(&row, "curr_items"), 7.0);
    assert_eq!(stat(&row, "limit_maxbytes"), 32.0 * 1024.0 * 1024.0);
    assert_eq!(stat(&row, "evictions"), 0.0);
    // No extstore: empty.
    assert!(stat(&row, "extstore_bytes_written").is_nan());
    a.stop().unwrap();
    b.stop().unwrap();
}

#[test]
fn server_statistics_are_sampled_over_unix_domain_sockets() {
    use kvlab_monitor::ServerStats;
    let redis =
        Server::start(&ServerSpec::parse(ServerKind::Redis, "unixsocket=r.sock").unwrap()).unwrap();
    let mut conn = kvlab_spawn::resp::Connection::connect_unix(
        redis.unix_socket().unwrap(),
        Duration::from_secs(5),
    )
    .unwrap();
    conn.call(&["SELECT", "1"]).unwrap();
    for i in 0..5 {
        conn.call(&["SET", &format!("k{i}"), "v"]).unwrap();
    }
    let mut stats =
        ServerStats::unix(ServerKind::Redis, redis.unix_socket().unwrap().into()).with_db(Some(1));
    assert_eq!(stat(&stats.sample(), "keys"), 5.0);

    let memcached =
        Server::start(&ServerSpec::parse(ServerKind::Memcached, "s=m.sock,m=16").unwrap()).unwrap();
    let mut stats = ServerStats::unix(
        ServerKind::Memcached,
        memcached.unix_socket().unwrap().into(),
    );
    let row = stats.sample();
    assert_eq!(stat(&row, "limit_maxbytes"), 16.0 * 1024.0 * 1024.0);
    assert_eq!(stat(&row, "curr_items"), 0.0);
}

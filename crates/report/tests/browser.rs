//! The HTML report in a real browser: Debian's `chromium`, headless. The report of the
//! fixture suite must load without console messages, every chart must have drawn data,
//! and the tables must sort when a header is clicked.
//!
//! Without chromium on PATH (or `KVLAB_CHROMIUM` naming it) the tests print a note and
//! pass; `apt-get install chromium` provides it.

use std::path::{Path, PathBuf};
use std::process::Command;

use kvlab_report::{ResultDocument, Study, StudyOptions};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KVLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Loads `page` in headless chromium; returns the DOM after scripts ran and the browser's
/// log (console messages appear there as `…:CONSOLE…` lines).
fn dump_dom(browser: &Path, page: &Path, profile: &Path) -> (String, String) {
    dump_dom_at(browser, page, profile, (800, 600))
}

/// [`dump_dom`] in a window of `(width, height)` pixels.
fn dump_dom_at(
    browser: &Path,
    page: &Path,
    profile: &Path,
    (width, height): (u32, u32),
) -> (String, String) {
    let out = Command::new(browser)
        .arg(format!("--window-size={width},{height}"))
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        // A profile of its own, so tests running at once do not share a browser.
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("running chromium");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {log}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), log)
}

fn console_lines(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

fn suite_html() -> String {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suite");
    Study::load(&[suite], StudyOptions::default())
        .unwrap()
        .to_html("kvlab report: fixture suite")
}

/// The `<svg class="chart">…</svg>` elements of a document.
fn charts(dom: &str) -> Vec<&str> {
    dom.match_indices("<svg class=\"chart\"")
        .map(|(start, _)| {
            let end = dom[start..].find("</svg>").expect("every svg is closed") + start;
            &dom[start..end]
        })
        .collect()
}

/// True when an SVG element has drawn data: a bar with a height, a line with at least
/// two coordinates, or a point.
fn has_drawn_data(svg: &str) -> bool {
    let bar = svg.match_indices("class=\"bar\"").any(|(i, _)| {
        let rest = &svg[i..];
        let h = rest.find("height=\"").map(|j| &rest[j + 8..]);
        h.and_then(|h| h.split('"').next()?.parse::<f64>().ok())
            .is_some_and(|h| h > 0.0)
    });
    let line = svg.match_indices("class=\"series\" d=\"M").any(|(i, _)| {
        let d = svg[i + 19..].split('"').next().unwrap_or("");
        d.split([' ', 'M', 'L'])
            .filter(|s| s.parse::<f64>().is_ok())
            .count()
            >= 2
    });
    bar || line || svg.contains("class=\"point\"")
}

#[test]
fn the_report_renders_with_every_chart_drawn() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found, HTML rendering not tested (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let html = suite_html();
    std::fs::write(&page, &html).unwrap();
    let (dom, log) = dump_dom(&browser, &page, &dir.path().join("profile"));
    assert_eq!(console_lines(&log), Vec::<&str>::new(), "console messages");
    let written = charts(&html).len();
    let rendered = charts(&dom);
    // 3 sweep charts for workloada, a throughput bar chart for each cache workload, 4 to
    // 7 charts for each of the 6 settings, 3 cache charts.
    assert!(written >= 30, "{written} charts");
    assert_eq!(
        rendered.len(),
        written,
        "the browser's DOM holds every chart"
    );
    for svg in &rendered {
        assert!(
            has_drawn_data(svg),
            "a chart without data: {}",
            &svg[..svg.len().min(400)]
        );
    }
    assert!(
        dom.contains("process: rss_bytes"),
        "the monitor CSV is charted"
    );
    assert_eq!(
        dom.matches("<table class=\"sortable\">").count(),
        html.matches("<table class=\"sortable\">").count()
    );
    assert!(
        !html
            .replace("http://www.w3.org/2000/svg", "")
            .contains("://"),
        "the page names no URL, so it loads nothing from the network"
    );
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "no external resources"
    );
}

/// Clicks headers of the summary table (in a copy of the page with a test script
/// appended) and reads back the row order.
#[test]
fn tables_sort_when_a_header_is_clicked() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found, table sorting not tested (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let probe = r#"<script>
(function () {
  var table = document.querySelector('table.sortable');
  var heads = Array.prototype.slice.call(table.querySelectorAll('thead th'));
  function column(name) {
    return heads.findIndex(function (h) { return h.textContent === name; });
  }
  function read(col, attr) {
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      return attr ? parseFloat(r.cells[col].getAttribute('data-v')) : r.cells[col].textContent;
    });
  }
  var tput = column('Throughput (ops/s)');
  var store = column('Store');
  var result = {};
  heads[tput].click();
  result.up = read(tput, true);
  heads[tput].click();
  result.down = read(tput, true);
  heads[store].click();
  result.stores = read(store, false);
  result.mark = heads[store].getAttribute('aria-sort');
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
})();
</script>
</body>"#;
    let html = suite_html().replace("</body>", probe);
    std::fs::write(&page, &html).unwrap();
    let (dom, log) = dump_dom(&browser, &page, &dir.path().join("profile"));
    assert_eq!(console_lines(&log), Vec::<&str>::new(), "console messages");
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = dom[start..].find("</pre>").unwrap() + start;
    let result: serde_json::Value = serde_json::from_str(&dom[start..end]).unwrap();
    let numbers = |k: &str| -> Vec<f64> {
        result[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (up, down) = (numbers("up"), numbers("down"));
    assert_eq!(up.len(), 10);
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "ascending: {up:?}");
    let mut reversed = down.clone();
    reversed.reverse();
    assert_eq!(up, reversed, "a second click reverses");
    let stores: Vec<&str> = result["stores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let mut sorted = stores.clone();
    sorted.sort();
    assert_eq!(stores, sorted);
    assert_eq!(result["mark"], "ascending");
}

/// The fixture suite with the long store and workload names of a real study (seed 000's
/// `memcached-extstore`, `readheavy-uniform-large`): in a 1200-pixel window, the width of
/// the examples' screenshots, every table fits the page, so a screenshot shows it whole.
#[test]
fn tables_fit_a_1200_pixel_window() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found, table widths not tested (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suite");
    let stores = ["memcached-extstore", "rocksdb-direct-reads", "redis-64mb"];
    let workloads = [
        "readheavy-uniform-large",
        "set-get-1-10-sweep",
        "updateheavy-small",
    ];
    let mut n = 0;
    let mut stack = vec![fixtures.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|f| f == "result.json") {
                let to = dir
                    .path()
                    .join("results")
                    .join(path.strip_prefix(&fixtures).unwrap());
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                for sibling in std::fs::read_dir(path.parent().unwrap()).unwrap() {
                    let sibling = sibling.unwrap().path();
                    if sibling.is_file() {
                        std::fs::copy(
                            &sibling,
                            to.parent().unwrap().join(sibling.file_name().unwrap()),
                        )
                        .unwrap();
                    }
                }
                let mut doc = ResultDocument::load(&path).unwrap();
                doc.store.label = Some(stores[n % 3].to_string());
                doc.workload_label = Some(workloads[n % 3].to_string());
                std::fs::write(&to, doc.to_json_pretty()).unwrap();
                n += 1;
            }
        }
    }
    let study = Study::load(&[dir.path().join("results")], StudyOptions::default()).unwrap();
    let probe = r#"<script>
(function () {
  var out = [];
  document.querySelectorAll('table').forEach(function (t) {
    var box = t.parentElement;
    out.push({
      table: t.querySelector('caption').textContent,
      width: Math.ceil(t.getBoundingClientRect().width),
      room: box.clientWidth
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
</body>"#;
    let html = study.to_html("long names").replace("</body>", probe);
    let page = dir.path().join("report.html");
    std::fs::write(&page, &html).unwrap();
    let (dom, log) = dump_dom_at(&browser, &page, &dir.path().join("profile"), (1200, 900));
    assert_eq!(console_lines(&log), Vec::<&str>::new(), "console messages");
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = dom[start..].find("</pre>").unwrap() + start;
    let tables: Vec<serde_json::Value> = serde_json::from_str(&dom[start..end]).unwrap();
    assert_eq!(
        tables.len(),
        4,
        "summary, operations, cache, rounds: {tables:?}"
    );
    for t in &tables {
        let (width, room) = (t["width"].as_f64().unwrap(), t["room"].as_f64().unwrap());
        assert!(room > 1000.0, "the page is 1200 pixels wide: {t}");
        assert!(width <= room, "a table wider than the page: {t}");
    }
}

/// What a reader sees of the fixture suite's report in a laptop's 1000-pixel window (the
/// probe `page_probe.js`, shared with the `kvlab` tests of the other pages): no text
/// drawn under 9 px, and every chart's points, lines and bars inside its plotted area.
#[test]
fn the_report_reads_at_a_laptop_width_with_everything_inside_its_chart() {
    let Some(browser) = chromium() else {
        eprintln!("note: chromium not found, the report's rendering not tested (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let probe = format!("<script>{}</script></body>", include_str!("page_probe.js"));
    std::fs::write(&page, suite_html().replacen("</body>", &probe, 1)).unwrap();
    let (dom, log) = dump_dom_at(&browser, &page, &dir.path().join("profile"), (1000, 900));
    assert_eq!(console_lines(&log), Vec::<&str>::new(), "console messages");
    let start = dom
        .rfind("<pre id=\"kvlab-probe\">")
        .expect("the probe ran")
        + 22;
    let end = dom[start..].find("</pre>").unwrap() + start;
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let seen: serde_json::Value = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("{e}: {}", &json[..json.len().min(300)]));
    let small: Vec<&serde_json::Value> = seen["texts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["px"].as_f64().unwrap() < 9.0)
        .collect();
    assert!(small.is_empty(), "text under 9 px: {small:?}");
    let charts = seen["charts"].as_array().unwrap();
    assert!(charts.len() >= 30, "{} charts", charts.len());
    for c in charts {
        assert_eq!(c["has_plot"], true, "{c}");
        assert!(c["drawn"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(c["outside"].as_array().unwrap().len(), 0, "{c}");
    }
}

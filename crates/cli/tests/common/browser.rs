//! What a reader sees of a page kvlab writes: the page loaded in headless chromium (Debian's
//! `chromium`, or `KVLAB_CHROMIUM`) at a window width, with a probe script appended that
//! reads the laid-out document: the size every piece of text is drawn at (an SVG's text
//! scaled as the page scales the SVG), and each chart's drawn points, lines and bars
//! against its plotted area (`<rect class="plot">`).
//!
//! Without chromium the tests that use it print a note and skip that part.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The smallest text a reader is expected to read, in CSS pixels.
pub const MIN_TEXT_PX: f64 = 9.0;

/// The window width pages are read at: a laptop's browser window, narrower than the
/// 1200-pixel screenshots of `examples/`.
pub const WINDOW_PX: u32 = 1000;

/// chromium, or `None` (with a note on stderr) when it is not installed.
pub fn chromium() -> Option<PathBuf> {
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
    eprintln!(
        "note: chromium not found, the page's rendering is not tested (apt-get install chromium)"
    );
    None
}

/// The probe (`crates/report/tests/page_probe.js`): a JSON summary of the laid-out page
/// in `<pre id="kvlab-probe">`.
const PROBE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../report/tests/page_probe.js"
));

/// What the probe read of a page.
#[derive(Debug)]
pub struct Seen {
    /// `(text, rendered size in CSS pixels)` of every piece of text.
    pub texts: Vec<(String, f64)>,
    /// Per chart (`<svg class="chart">`): its title, whether it marks its plotted area,
    /// how many points, line vertices and bar corners it draws, and those outside the
    /// plotted area.
    pub charts: Vec<Value>,
    /// The browser's console messages and uncaught errors.
    pub console: Vec<String>,
}

impl Seen {
    /// Panics naming every text drawn smaller than [`MIN_TEXT_PX`], every chart without
    /// a plotted area or without anything drawn, and everything drawn outside one.
    pub fn assert_readable(&self, page: &str) {
        assert_eq!(
            self.console,
            Vec::<String>::new(),
            "{page}: console messages"
        );
        let small: Vec<String> = self
            .texts
            .iter()
            .filter(|(_, px)| *px < MIN_TEXT_PX)
            .map(|(t, px)| format!("{px:.1} px: {t}"))
            .collect();
        assert!(
            small.is_empty(),
            "{page}: {} texts under {MIN_TEXT_PX} px at a {WINDOW_PX}-pixel window, e.g. {:?}",
            small.len(),
            &small[..small.len().min(8)]
        );
        assert!(!self.charts.is_empty(), "{page}: no chart");
        for c in &self.charts {
            assert_eq!(
                c["has_plot"], true,
                "{page}: a chart without a plotted area: {c}"
            );
            assert!(
                c["drawn"].as_u64().unwrap_or(0) > 0,
                "{page}: an empty chart: {c}"
            );
            assert_eq!(
                c["outside"].as_array().map_or(0, Vec::len),
                0,
                "{page}: drawn outside the plotted area: {c}"
            );
        }
    }
}

/// Loads the HTML `page` in headless chromium, `WINDOW_PX` wide, and reads what it draws
/// (a copy of the page with the probe goes beside it). `None` without chromium.
pub fn see(page: &Path) -> Option<Seen> {
    let browser = chromium()?;
    let html = std::fs::read_to_string(page).expect("reading the page");
    assert!(html.contains("</body>"), "{}: no </body>", page.display());
    let probed = page.with_extension("probe.html");
    let probe = format!("<script>{PROBE}</script></body>");
    std::fs::write(&probed, html.replacen("</body>", &probe, 1)).expect("writing the probe copy");
    let profile = tempfile::tempdir().expect("a browser profile directory");
    let out = Command::new(browser)
        .arg(format!("--window-size={WINDOW_PX},900"))
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", probed.display()))
        .output()
        .expect("running chromium");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {log}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .rfind("<pre id=\"kvlab-probe\">")
        .unwrap_or_else(|| panic!("the probe did not run on {}: {log}", page.display()))
        + "<pre id=\"kvlab-probe\">".len();
    let end = dom[start..]
        .find("</pre>")
        .expect("the probe's closing tag")
        + start;
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&json).expect("the probe's JSON");
    let texts = v["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|t| {
            (
                t["text"].as_str().unwrap_or("").to_string(),
                t["px"].as_f64().unwrap_or(0.0),
            )
        })
        .collect();
    let console = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    Some(Seen {
        texts,
        charts: v["charts"].as_array().expect("charts").clone(),
        console,
    })
}

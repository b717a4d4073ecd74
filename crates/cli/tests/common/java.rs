//! Java HdrHistogram, the reference for kvlab's histograms: its jar from Maven Central
//! (fetched once per machine with `mvn`, where scripts/check-merge-with-hdrhistogram.sh
//! keeps it) and small Java programs compiled against it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// One test at a time fetches the jar.
static FETCHING: Mutex<()> = Mutex::new(());

/// `$HOME/.cache/kvlab-hdrhistogram/HdrHistogram-2.2.2.jar`, fetched with `mvn
/// dependency:copy` when missing. Panics (the test fails) when mvn cannot fetch it.
pub fn hdrhistogram_jar() -> PathBuf {
    let _guard = FETCHING.lock().unwrap_or_else(|e| e.into_inner());
    let home = std::env::var_os("HOME").expect("HOME is set");
    let dir = PathBuf::from(home).join(".cache/kvlab-hdrhistogram");
    let jar = dir.join("HdrHistogram-2.2.2.jar");
    if jar.is_file() {
        return jar;
    }
    let o = Command::new("mvn")
        .args([
            "-B",
            "-q",
            "-Dstyle.color=never",
            "dependency:copy",
            "-Dartifact=org.hdrhistogram:HdrHistogram:2.2.2",
        ])
        .arg(format!("-DoutputDirectory={}", dir.display()))
        .output()
        .expect("running mvn (Maven) to fetch HdrHistogram's jar");
    assert!(
        o.status.success() && jar.is_file(),
        "mvn could not fetch HdrHistogram 2.2.2:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    jar
}

/// Compiles the Java class `class` (its source `source`) against the jar into `dir`;
/// returns the classpath that runs it.
pub fn compile(dir: &Path, class: &str, source: &str) -> String {
    let jar = hdrhistogram_jar();
    let file = dir.join(format!("{class}.java"));
    std::fs::write(&file, source).unwrap();
    let o = Command::new("javac")
        .arg("-cp")
        .arg(&jar)
        .arg("-d")
        .arg(dir)
        .arg(&file)
        .output()
        .expect("running javac");
    assert!(
        o.status.success(),
        "javac {class}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    format!("{}:{}", jar.display(), dir.display())
}

//! Python tools the tests check kvlab's files with (libCacheSim's PyPI package), in a
//! virtual environment made once per machine.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// One test at a time makes a virtual environment; the others wait and reuse it.
static MAKING: Mutex<()> = Mutex::new(());

/// The Python interpreter of a virtual environment holding exactly `packages` (pinned
/// `name==version` specs), made on first use under `$HOME/.cache/kvlab-venv/NAME` with
/// `python3 -m venv` and `pip install`, and reused after. It is built in a temporary
/// directory beside that and renamed into place, so a failed or concurrent install
/// never leaves a half environment under the name. Panics (the test fails) when python3
/// or pip cannot make it: the checks need the real tool.
pub fn venv(name: &str, packages: &[&str]) -> PathBuf {
    let _guard = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    let home = std::env::var_os("HOME").expect("HOME is set");
    let root = PathBuf::from(home).join(".cache/kvlab-venv");
    let dir = root.join(name);
    let python = dir.join("bin/python");
    let stamp = dir.join("kvlab-packages.txt");
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return python;
    }
    std::fs::create_dir_all(&root).unwrap();
    let tmp = root.join(format!("{name}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let run = |c: &mut Command, what: &str| {
        let o = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            o.status.success(),
            "{what} failed:\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&tmp),
        "python3 -m venv",
    );
    run(
        Command::new(tmp.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(packages),
        &format!("pip install {}", packages.join(" ")),
    );
    std::fs::write(tmp.join("kvlab-packages.txt"), &wanted).unwrap();
    // Only bin/python is used: it finds its environment from its own place (pyvenv.cfg
    // beside bin/), so the renamed environment works; its pip scripts would not.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&tmp, &dir).unwrap();
    python
}

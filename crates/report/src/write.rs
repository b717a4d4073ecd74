//! [`write_atomic`] and [`prepare_out_dir`]: result files that are complete or absent, and
//! never silently replaced.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::ReportError;

/// The name of the result document inside an output directory.
pub const RESULT_FILE: &str = "result.json";

fn io_error<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> ReportError + 'a {
    move |source| ReportError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` so that readers see either the old file or the complete new
/// one, never a torn write: the bytes go to a temporary file in the same directory, which
/// is synced and then renamed over `path`, and the directory is synced.
///
/// When `overwrite` is false and `path` exists, returns [`ReportError::Exists`] and leaves
/// the existing file untouched. The check is race-free: the temporary file is hard-linked
/// into place, which fails if `path` appeared meanwhile (on file systems without hard
/// links it falls back to checking, then renaming).
pub fn write_atomic(path: &Path, bytes: &[u8], overwrite: bool) -> Result<(), ReportError> {
    if !overwrite && path.exists() {
        return Err(ReportError::Exists(path.to_path_buf()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let (tmp_path, mut tmp) = create_temp(dir, path)?;
    let result = (|| {
        tmp.write_all(bytes)
            .and_then(|()| tmp.sync_all())
            .map_err(io_error("writing", &tmp_path))?;
        drop(tmp);
        if overwrite {
            fs::rename(&tmp_path, path).map_err(io_error("renaming into place", path))
        } else {
            match fs::hard_link(&tmp_path, path) {
                Ok(()) => fs::remove_file(&tmp_path).map_err(io_error("removing", &tmp_path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    Err(ReportError::Exists(path.to_path_buf()))
                }
                // No hard links here (some network or FAT file systems): check, then rename.
                Err(_) if path.exists() => Err(ReportError::Exists(path.to_path_buf())),
                Err(_) => {
                    fs::rename(&tmp_path, path).map_err(io_error("renaming into place", path))
                }
            }
        }
    })();
    if result.is_err() {
        // Best effort: the error being returned matters more than a leftover temp file.
        let _ = fs::remove_file(&tmp_path);
    }
    result?;
    sync_dir(dir)
}

/// Creates a new, uniquely named temporary file next to `path`.
fn create_temp(dir: &Path, path: &Path) -> Result<(PathBuf, File), ReportError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp_path = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)
        {
            Ok(f) => return Ok((tmp_path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_error("creating", &tmp_path)(e)),
        }
    }
}

/// Makes a rename in `dir` durable. Directories cannot be opened for syncing everywhere
/// (Windows), so failing to open one is not an error.
fn sync_dir(dir: &Path) -> Result<(), ReportError> {
    match File::open(dir) {
        Ok(d) => match d.sync_all() {
            Ok(()) => Ok(()),
            // Some file systems refuse fsync on directories; the data itself is synced.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(io_error("syncing directory", dir)(e)),
        },
        Err(_) => Ok(()),
    }
}

/// What a run writes into its output directory besides [`RESULT_FILE`]; `--overwrite`
/// removes them, so files of an earlier run that the new one does not write (a RocksDB
/// run's `monitor/` charts under a null-store result) are not reported as the new run's.
const RUN_OUTPUTS: &[&str] = &["timeline.csv", "latency.hlog", crate::load::MONITOR_DIR];

/// Creates the output directory `dir` (and its parents). When it already holds a
/// [`RESULT_FILE`] and `overwrite` is false, returns [`ReportError::Exists`] naming that
/// file, so an earlier run's results are never mixed with or replaced by a new run's;
/// when `overwrite` is true, the earlier run's timeline, latency log, `monitor/`
/// directory and memtier `run-N/` result directories are removed (its result is
/// replaced when the new one is written; other files are left alone).
pub fn prepare_out_dir(dir: &Path, overwrite: bool) -> Result<(), ReportError> {
    fs::create_dir_all(dir).map_err(io_error("creating directory", dir))?;
    let result = dir.join(RESULT_FILE);
    if !overwrite && result.exists() {
        return Err(ReportError::Exists(result));
    }
    // memtier's `-x N` runs: `run-1/`, `run-2/`, … each with a result.
    let mut runs = Vec::new();
    if overwrite {
        for entry in fs::read_dir(dir)
            .map_err(io_error("listing", dir))?
            .flatten()
        {
            let name = entry.file_name();
            let is_run = name
                .to_str()
                .and_then(|n| n.strip_prefix("run-"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            if is_run && entry.path().join(RESULT_FILE).is_file() {
                runs.push(entry.path());
            }
        }
    }
    if overwrite && (result.exists() || !runs.is_empty()) {
        for name in RUN_OUTPUTS {
            let path = dir.join(name);
            let removed = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            match removed {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(io_error("removing the earlier run's", &path)(e));
                }
                _ => {}
            }
        }
        for path in runs {
            fs::remove_dir_all(&path).map_err(io_error("removing the earlier run's", &path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn refuses_to_overwrite_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        write_atomic(&path, b"first", false).unwrap();
        let err = write_atomic(&path, b"second", false).unwrap_err();
        assert!(
            matches!(&err, ReportError::Exists(p) if p == &path),
            "{err}"
        );
        assert!(err.to_string().contains("result.json"));
        assert_eq!(fs::read(&path).unwrap(), b"first");
        // No temporary file left behind.
        assert_eq!(entries(dir.path()), ["result.json"]);

        write_atomic(&path, b"third", true).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"third");
        assert_eq!(entries(dir.path()), ["result.json"]);
    }

    #[test]
    fn missing_directory_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/dir/result.json");
        let err = write_atomic(&path, b"x", false).unwrap_err();
        assert!(
            matches!(
                err,
                ReportError::Io {
                    action: "creating",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn out_dir_with_a_result_is_refused() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("runs/a");
        prepare_out_dir(&dir, false).unwrap();
        prepare_out_dir(&dir, false).unwrap(); // empty: fine to reuse
        fs::write(dir.join(RESULT_FILE), "{}").unwrap();
        let err = prepare_out_dir(&dir, false).unwrap_err();
        assert!(matches!(&err, ReportError::Exists(p) if p == &dir.join(RESULT_FILE)));
        prepare_out_dir(&dir, true).unwrap();
        assert_eq!(fs::read_to_string(dir.join(RESULT_FILE)).unwrap(), "{}");
    }

    #[test]
    fn overwrite_removes_what_the_earlier_run_wrote_beside_its_result() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path();
        fs::create_dir_all(dir.join("monitor")).unwrap();
        fs::write(dir.join("monitor/store.csv"), "t\n").unwrap();
        fs::write(dir.join("timeline.csv"), "t\n").unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        fs::create_dir_all(dir.join("run-x")).unwrap();
        fs::write(dir.join("run-x").join(RESULT_FILE), "{}").unwrap();
        // No result yet: nothing is removed.
        prepare_out_dir(dir, true).unwrap();
        assert!(dir.join("monitor/store.csv").exists());
        // A memtier -x run's results alone count as an earlier run.
        fs::create_dir_all(dir.join("run-2")).unwrap();
        fs::write(dir.join("run-2").join(RESULT_FILE), "{}").unwrap();
        prepare_out_dir(dir, true).unwrap();
        assert!(!dir.join("monitor").exists());
        assert!(!dir.join("run-2").exists());
        fs::create_dir_all(dir.join("monitor")).unwrap();
        fs::write(dir.join("monitor/store.csv"), "t\n").unwrap();
        fs::write(dir.join("timeline.csv"), "t\n").unwrap();
        fs::create_dir_all(dir.join("run-2")).unwrap();
        fs::write(dir.join("run-2").join(RESULT_FILE), "{}").unwrap();
        fs::write(dir.join(RESULT_FILE), "{}").unwrap();
        prepare_out_dir(dir, true).unwrap();
        assert!(!dir.join("monitor").exists());
        assert!(!dir.join("timeline.csv").exists());
        assert!(!dir.join("run-2").exists());
        assert!(dir.join("run-x").exists(), "not a memtier run directory");
        assert!(dir.join("notes.txt").exists());
    }
}

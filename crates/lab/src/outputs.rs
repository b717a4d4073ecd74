//! Output files, checked before the work that fills them starts: an existing file is
//! replaced only when the user said `--overwrite`, and a directory is never taken for a
//! file — so neither an earlier result is lost nor an hour of work thrown away at the end.

use std::path::Path;

use crate::Refusal;

/// Refuses `path` as the file `flag` writes when it is a directory, or when it exists
/// and `overwrite` was not given.
pub fn check_output_file(flag: &str, path: &Path, overwrite: bool) -> Result<(), Refusal> {
    if path.is_dir() {
        return Err(Refusal(format!(
            "{flag} {}: is a directory; give the name of a file to write",
            path.display()
        )));
    }
    if path.exists() && !overwrite {
        return Err(Refusal(format!(
            "{flag} {}: the file exists; give --overwrite to replace it, or another name",
            path.display()
        )));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if parent.exists() && !parent.is_dir() {
            return Err(Refusal(format!(
                "{flag} {}: {} is not a directory",
                path.display(),
                parent.display()
            )));
        }
    }
    Ok(())
}

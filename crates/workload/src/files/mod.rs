//! Workloads from files: `kvlab import` of delimited records ([`import`]) and key files
//! (`run --keys`, `verify --keys`: [`keyfile`]), as Terark's benchmark uses them.

pub(crate) mod import;
pub(crate) mod keyfile;

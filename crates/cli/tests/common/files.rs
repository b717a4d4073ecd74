//! Files the tests write and read: kvlab's result documents, the text of a result
//! tree, suite files, crafted RocksDB traces ([`rocksdb_trace`]), and the data shipped
//! beside the project (`shared/data`).

use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::str::FromStr;

use kvlab_report::ResultDocument;
use serde_json::Value;

/// The text of every file under `dir` (none when `dir` does not exist).
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut texts = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                texts.push(String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned());
            }
        }
    }
    texts
}

/// Writes `text` as `dir/name` and returns its path as a string.
pub fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A JSON file, parsed; panics naming the file when it cannot be read or parsed.
pub fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `result.json` a kvlab run wrote into `dir` (its `--out`), as JSON.
pub fn result_json(dir: &Path) -> Value {
    read_json(&dir.join("result.json"))
}

/// `rel` under the project's shared data (`shared/data/`, beside the repository),
/// present or not.
pub fn shared_data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

/// `rel` under the shared data, or `None` (saying the test skips) when it is not
/// beside the project.
pub fn shared_data_or_skip(rel: &str) -> Option<PathBuf> {
    let p = shared_data(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is not beside the project", p.display());
        None
    }
}

/// The result document a kvlab run wrote into `dir` (its `--out`); panics naming the
/// file when there is none or it does not parse.
pub fn result_doc(dir: &Path) -> ResultDocument {
    let path = dir.join("result.json");
    ResultDocument::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Column `name` of a CSV text whose first line names its columns (a `timeline.csv`),
/// each row's cell parsed; panics naming the column when it or a cell is missing or a
/// cell does not parse.
pub fn csv_column<T: FromStr>(csv: &str, name: &str) -> Vec<T>
where
    T::Err: Debug,
{
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default();
    let i = header
        .split(',')
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in `{header}`"));
    lines
        .map(|l| {
            let cell = l
                .split(',')
                .nth(i)
                .unwrap_or_else(|| panic!("no {name} cell in `{l}`"));
            cell.parse()
                .unwrap_or_else(|e| panic!("{name} `{cell}` in `{l}`: {e:?}"))
        })
        .collect()
}

/// The result document that the kvlab run which gave `o` wrote into `dir` (its
/// `--out`); panics with that run's stdout and stderr when there is none.
pub fn result_doc_of(o: &Output, dir: &Path) -> ResultDocument {
    let (stdout, stderr) = super::text(o);
    ResultDocument::load(&dir.join("result.json"))
        .unwrap_or_else(|e| panic!("no result ({e}):\nstdout:\n{stdout}\nstderr:\n{stderr}"))
}

/// Builders of RocksDB trace bytes in trace format 0.2 (trace_replay.cc's layout: a
/// record is `timestamp u64, type u8, payload length u32, payload`, all little-endian).
pub mod rocksdb_trace {
    fn varint(out: &mut Vec<u8>, mut v: u32) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn slice(out: &mut Vec<u8>, s: &[u8]) {
        varint(out, s.len() as u32);
        out.extend_from_slice(s);
    }

    fn record(out: &mut Vec<u8>, ts_us: u64, kind: u8, payload: &[u8]) {
        out.extend_from_slice(&ts_us.to_le_bytes());
        out.push(kind);
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(payload);
    }

    /// A trace of one write a record: `(WriteBatch tag, key, value)` — tag 0x1 a Put,
    /// 0x2 a Merge, 0xF a DeleteRange (value: its end key) — a microsecond apart.
    pub fn writes(entries: &[(u8, &[u8], &[u8])]) -> Vec<u8> {
        let mut t = Vec::new();
        let header = "feedcafedeadbeef\tTrace Version: 0.2\tRocksDB Version: 7.8\t\
                      Format: Timestamp OpType Payload\n";
        record(&mut t, 1_000, 1, header.as_bytes());
        for (i, (tag, key, value)) in entries.iter().enumerate() {
            // WriteBatch: sequence number, count, then the entry.
            let mut batch = 0u64.to_le_bytes().to_vec();
            batch.extend_from_slice(&1u32.to_le_bytes());
            batch.push(*tag);
            slice(&mut batch, key);
            slice(&mut batch, value);
            // Format 0.2: a bitmap of the payload's fields (bit 1, the batch), then it.
            let mut payload = (1u64 << 1).to_le_bytes().to_vec();
            slice(&mut payload, &batch);
            record(&mut t, 2_000 + i as u64, 3, &payload);
        }
        record(&mut t, 10_000, 2, &[]);
        t
    }
}

//! Readers of the system's own counters: `/proc/stat`, `/proc/meminfo`, `/proc/diskstats`,
//! `/proc/PID/io`, and the size of a directory tree.
//!
//! Each reader parses text handed to it (so tests feed it fixed text) and has a thin
//! function that reads the live file.

use std::path::Path;

/// The aggregate `cpu` line of `/proc/stat`, in clock ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// All ticks: user, nice, system, idle, iowait, irq, softirq and steal. Guest time is
    /// already inside user and nice (proc(5)), so it is not added again.
    pub total: u64,
    /// Ticks idle (not counting iowait).
    pub idle: u64,
    /// Ticks idle while some disk I/O was outstanding.
    pub iowait: u64,
}

impl CpuTimes {
    /// Parses the first line of `/proc/stat` (`cpu  user nice system idle iowait ...`).
    pub fn parse(stat: &str) -> Option<CpuTimes> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 4 {
            return None;
        }
        let total = v.iter().take(8).sum();
        Some(CpuTimes {
            total,
            idle: v[3],
            iowait: v.get(4).copied().unwrap_or(0),
        })
    }

    /// Reads `/proc/stat`.
    pub fn read() -> Option<CpuTimes> {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Busy and iowait percentages of all CPUs between `self` (earlier) and `next`:
    /// 100 % busy is every CPU busy. `None` if no tick passed.
    pub fn percent_until(&self, next: &CpuTimes) -> Option<(f64, f64)> {
        let total = next.total.checked_sub(self.total)?;
        if total == 0 {
            return None;
        }
        let idle = next.idle.saturating_sub(self.idle);
        let iowait = next.iowait.saturating_sub(self.iowait);
        let busy = total.saturating_sub(idle + iowait);
        Some((
            100.0 * busy as f64 / total as f64,
            100.0 * iowait as f64 / total as f64,
        ))
    }
}

/// The lines of `/proc/meminfo` the monitor records, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemInfo {
    /// `MemTotal`.
    pub total_bytes: u64,
    /// `MemFree`: memory nothing uses, not even the page cache.
    pub free_bytes: u64,
    /// `MemAvailable`: what could be had without swapping (free plus reclaimable cache).
    pub available_bytes: u64,
    /// `Cached`: the page cache (file data, including a store's SST files).
    pub cached_bytes: u64,
}

impl MemInfo {
    /// Parses `/proc/meminfo` (`Name:   123 kB` lines).
    pub fn parse(text: &str) -> Option<MemInfo> {
        let mut m = MemInfo::default();
        let mut seen = 0;
        for line in text.lines() {
            let Some((name, rest)) = line.split_once(':') else {
                continue;
            };
            let slot = match name {
                "MemTotal" => &mut m.total_bytes,
                "MemFree" => &mut m.free_bytes,
                "MemAvailable" => &mut m.available_bytes,
                "Cached" => &mut m.cached_bytes,
                _ => continue,
            };
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            *slot = kb * 1024;
            seen += 1;
        }
        (seen == 4).then_some(m)
    }

    /// Reads `/proc/meminfo`.
    pub fn read() -> Option<MemInfo> {
        MemInfo::parse(&std::fs::read_to_string("/proc/meminfo").ok()?)
    }
}

/// Bytes read and written, cumulative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IoBytes {
    /// Bytes read.
    pub read: u64,
    /// Bytes written.
    pub written: u64,
}

impl IoBytes {
    /// Bytes per second from `self` (earlier) to `next` over `secs` seconds.
    pub fn rate_until(&self, next: &IoBytes, secs: f64) -> (f64, f64) {
        if secs <= 0.0 {
            return (0.0, 0.0);
        }
        (
            next.read.saturating_sub(self.read) as f64 / secs,
            next.written.saturating_sub(self.written) as f64 / secs,
        )
    }

    /// Sums sectors read and written over the whole disks named in `disks`, from the
    /// text of `/proc/diskstats` (fields 6 and 10; a sector there is always 512 bytes).
    pub fn parse_diskstats(text: &str, disks: &[String]) -> IoBytes {
        let mut sum = IoBytes::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || !disks.iter().any(|d| d == f[2]) {
                continue;
            }
            let (Ok(read), Ok(written)) = (f[5].parse::<u64>(), f[9].parse::<u64>()) else {
                continue;
            };
            sum.read += read * 512;
            sum.written += written * 512;
        }
        sum
    }

    /// Reads `/proc/diskstats` for `disks`.
    pub fn read_disks(disks: &[String]) -> Option<IoBytes> {
        let text = std::fs::read_to_string("/proc/diskstats").ok()?;
        Some(IoBytes::parse_diskstats(&text, disks))
    }

    /// Parses `/proc/PID/io`: `read_bytes` and `write_bytes`, the bytes the process made
    /// the storage layer fetch and send (page-cache hits are not in them).
    pub fn parse_process_io(text: &str) -> Option<IoBytes> {
        let mut read = None;
        let mut written = None;
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("read_bytes:") {
                read = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("write_bytes:") {
                written = v.trim().parse().ok();
            }
        }
        Some(IoBytes {
            read: read?,
            written: written?,
        })
    }

    /// Reads `/proc/PID/io`; `None` if the process is gone or kvlab may not read it.
    pub fn read_process(pid: u32) -> Option<IoBytes> {
        IoBytes::parse_process_io(&std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?)
    }
}

/// The whole disks of the machine: block devices in `/sys/block` backed by a device
/// (`/sys/block/NAME/device` exists). Partitions, loop, RAM, zram and device-mapper
/// devices have no such link, so bytes are not counted twice.
pub fn whole_disks() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut disks: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("device").exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    disks.sort();
    disks
}

/// The size of a directory tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirSize {
    /// Sum of the files' lengths (what `du --apparent-size -b` prints).
    pub bytes: u64,
    /// Sum of the blocks the files occupy, in bytes (what `du -B1` prints).
    pub allocated_bytes: u64,
    /// Regular files counted.
    pub files: u64,
}

impl DirSize {
    /// Walks `dir` without following symbolic links. Entries that vanish during the walk
    /// (a store deleting files as it compacts) are skipped; `None` if `dir` itself cannot
    /// be read.
    pub fn measure(dir: &Path) -> Option<DirSize> {
        use std::os::unix::fs::MetadataExt;
        let mut size = DirSize::default();
        let mut pending = vec![std::fs::read_dir(dir).ok()?];
        while let Some(entries) = pending.pop() {
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                if meta.is_dir() {
                    if let Ok(sub) = std::fs::read_dir(entry.path()) {
                        pending.push(sub);
                    }
                } else if meta.is_file() {
                    size.bytes += meta.len();
                    size.allocated_bytes += meta.blocks() * 512;
                    size.files += 1;
                }
            }
        }
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_line_and_percentages() {
        let a = CpuTimes::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(
            a,
            CpuTimes {
                total: 1000,
                idle: 800,
                iowait: 50
            }
        );
        let b = CpuTimes::parse("cpu  200 0 100 850 100 0 0 0 7 0\n").unwrap();
        let (busy, iowait) = a.percent_until(&b).unwrap();
        // 250 ticks passed (guest's 7 is inside user already): 50 idle, 50 iowait,
        // 150 busy.
        assert_eq!(b.total - a.total, 250);
        assert!((busy - 60.0).abs() < 1e-9, "{busy}");
        assert!((iowait - 20.0).abs() < 1e-9, "{iowait}");
        assert_eq!(a.percent_until(&a), None);
        assert_eq!(CpuTimes::parse("intr 1 2 3"), None);
    }

    #[test]
    fn meminfo_in_bytes() {
        let text = "MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    700 kB\n\
                    Buffers:          10 kB\nCached:          400 kB\nSwapCached:        0 kB\n";
        let m = MemInfo::parse(text).unwrap();
        assert_eq!(m.total_bytes, 1_024_000);
        assert_eq!(m.free_bytes, 204_800);
        assert_eq!(m.available_bytes, 716_800);
        assert_eq!(m.cached_bytes, 409_600);
        assert_eq!(MemInfo::parse("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn diskstats_sum_only_the_named_disks() {
        let text = "   7       0 loop0 9 0 9 0 9 0 9 0 0 0 0\n\
                    254       0 vda 10 0 100 0 20 0 300 0 0 0 0\n\
                    254       1 vda1 10 0 100 0 20 0 300 0 0 0 0\n\
                    259       0 nvme0n1 1 0 4 0 1 0 8 0 0 0 0\n";
        let io = IoBytes::parse_diskstats(text, &["vda".into(), "nvme0n1".into()]);
        assert_eq!(io.read, (100 + 4) * 512);
        assert_eq!(io.written, (300 + 8) * 512);
        let (r, w) = IoBytes::default().rate_until(&io, 2.0);
        assert_eq!((r, w), (io.read as f64 / 2.0, io.written as f64 / 2.0));
    }

    #[test]
    fn process_io() {
        let text = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\n\
                    write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assert_eq!(
            IoBytes::parse_process_io(text),
            Some(IoBytes {
                read: 4096,
                written: 8192
            })
        );
        assert_eq!(IoBytes::parse_process_io("rchar: 1\n"), None);
        assert!(IoBytes::read_process(std::process::id()).is_some());
    }

    #[test]
    fn directory_tree_size() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), vec![0u8; 1000]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), vec![1u8; 5000]).unwrap();
        let s = DirSize::measure(dir.path()).unwrap();
        assert_eq!(s.bytes, 6000);
        assert_eq!(s.files, 2);
        assert!(s.allocated_bytes >= 4096, "{s:?}");
        assert_eq!(DirSize::measure(&dir.path().join("missing")), None);
    }
}

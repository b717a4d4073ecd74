//! [`HostInfo`]: the machine a result was measured on.

use serde::{Deserialize, Serialize};

/// The machine the client ran on, recorded in every result so that results from different
/// machines are not compared unknowingly.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HostInfo {
    /// The host name.
    pub hostname: String,
    /// The operating system's name and version (`PRETTY_NAME` of `/etc/os-release`).
    pub os: String,
    /// The kernel release (`uname -r`).
    pub kernel: String,
    /// The CPU architecture (`x86_64`, `aarch64`, …).
    pub arch: String,
    /// The CPU model name.
    pub cpu_model: String,
    /// Logical CPUs.
    pub cpus: usize,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
}

impl HostInfo {
    /// Detects the current machine from `/proc` and `/etc/os-release`. Never fails: what
    /// cannot be read is an empty string or 0 (on systems without `/proc`, only `os`,
    /// `arch` and `cpus` are filled in).
    pub fn detect() -> HostInfo {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let (cpu_model, cpus_listed) = parse_cpuinfo(&read("/proc/cpuinfo"));
        let cpus = if cpus_listed > 0 {
            cpus_listed
        } else {
            std::thread::available_parallelism().map_or(0, |n| n.get())
        };
        let os = parse_os_release(&read("/etc/os-release"))
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        HostInfo {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            os,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpu_model,
            cpus,
            memory_bytes: parse_meminfo(&read("/proc/meminfo")),
        }
    }
}

/// The CPU model and the number of logical CPUs listed in `/proc/cpuinfo`. x86 names the
/// model `model name`; ARM kernels use `Hardware`, `Model` or `CPU part`-only listings,
/// POWER `cpu`.
fn parse_cpuinfo(text: &str) -> (String, usize) {
    let mut model = None;
    let mut fallback = None;
    let mut cpus = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" if value.parse::<u64>().is_ok() => cpus += 1,
            "model name" if model.is_none() => model = Some(value.to_string()),
            "Hardware" | "Model" | "cpu" | "cpu model" if fallback.is_none() => {
                fallback = Some(value.to_string())
            }
            _ => {}
        }
    }
    (model.or(fallback).unwrap_or_default(), cpus)
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn parse_meminfo(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|rest| {
            let mut words = rest.split_whitespace();
            let n: u64 = words.next()?.parse().ok()?;
            Some(match words.next() {
                Some("kB") => n * 1024,
                _ => n,
            })
        })
        .unwrap_or(0)
}

/// `PRETTY_NAME` of `/etc/os-release` (or `NAME` and `VERSION_ID`), unquoted.
fn parse_os_release(text: &str) -> Option<String> {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            let value = l.strip_prefix(key)?.strip_prefix('=')?;
            let value = value.trim().trim_matches('"').trim_matches('\'');
            (!value.is_empty()).then(|| value.to_string())
        })
    };
    get("PRETTY_NAME").or_else(|| {
        let name = get("NAME")?;
        Some(match get("VERSION_ID") {
            Some(v) => format!("{name} {v}"),
            None => name,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn detects_this_linux_machine() {
        let h = HostInfo::detect();
        assert!(h.cpus >= 1, "{h:?}");
        assert!(h.memory_bytes > 0, "{h:?}");
        assert!(!h.kernel.is_empty(), "{h:?}");
        assert!(!h.hostname.is_empty(), "{h:?}");
        assert_eq!(h.arch, std::env::consts::ARCH);
    }

    #[test]
    fn parses_x86_and_arm_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) \
                   CPU @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            parse_cpuinfo(x86),
            ("Intel(R) Xeon(R) CPU @ 2.20GHz".to_string(), 2)
        );
        let arm = "processor\t: 0\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n\nprocessor\t: 1\n\
                   BogoMIPS\t: 108.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4\n";
        assert_eq!(parse_cpuinfo(arm), ("BCM2835".to_string(), 2));
        assert_eq!(parse_cpuinfo(""), (String::new(), 0));
    }

    #[test]
    fn parses_meminfo_and_os_release() {
        assert_eq!(
            parse_meminfo("MemTotal:       16318480 kB\nMemFree: 1 kB\n"),
            16_710_123_520
        );
        assert_eq!(parse_meminfo("garbage"), 0);
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n";
        assert_eq!(
            parse_os_release(debian).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release("NAME=Alpine\nVERSION_ID=3.19.1\n").as_deref(),
            Some("Alpine 3.19.1")
        );
        assert_eq!(parse_os_release(""), None);
    }
}

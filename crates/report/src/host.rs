//! [`HostInfo`]: the machine a result was measured on, and how busy it was while the
//! run measured ([`HostProbe`]: read at the start, again at the end).

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
    /// The 1-minute load average when the phase started (`/proc/loadavg`); null where the
    /// kernel does not tell it.
    #[serde(default)]
    pub load_avg_start: Option<f64>,
    /// The 1-minute load average when the phase ended.
    #[serde(default)]
    pub load_avg_end: Option<f64>,
    /// CPU time the hypervisor gave to other guests during the phase (steal, `/proc/stat`),
    /// percent of all CPUs' time.
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// CPU time other processes took during the phase, percent of all CPUs' time: the
    /// machine's non-idle time (`/proc/stat`) less kvlab's own process and a server it
    /// started, over the phase's wall time × CPUs.
    #[serde(default)]
    pub other_cpu_pct: Option<f64>,
    /// The CPU frequency scaling governor (`performance`, `powersave`, …) of CPU 0, where
    /// the kernel tells it (`/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor`); a
    /// power-saving governor makes figures vary with the load.
    #[serde(default)]
    pub cpu_governor: Option<String>,
    /// CPU 0's clock when the phase ended, MHz (`scaling_cur_freq`, else `cpu MHz` of
    /// `/proc/cpuinfo`).
    #[serde(default)]
    pub cpu_mhz: Option<f64>,
    /// The machine was busy: other processes took more than [`BUSY_OTHER_CPU_PCT`] of
    /// its CPU time, or steal was above [`BUSY_STEAL_PCT`]. Its figures are those of a
    /// shared machine; reports and comparisons flag them.
    #[serde(default)]
    pub busy: bool,
}

/// Other processes' share of all CPUs' time above which a result is flagged busy:
/// 10 %, on two cores a fifth of one core taken away from the run.
pub const BUSY_OTHER_CPU_PCT: f64 = 10.0;

/// Steal above which a result is flagged busy: 5 % of all CPUs' time.
pub const BUSY_STEAL_PCT: f64 = 5.0;

/// The machine-wide CPU counters of `/proc/stat`'s `cpu` line, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CpuTicks {
    /// user + nice + system + irq + softirq (guest time is inside user and nice).
    busy: u64,
    /// steal.
    steal: u64,
    /// Every counter: busy + idle + iowait + steal.
    total: u64,
}

/// The `cpu` line of `/proc/stat`.
fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal guest guest_nice
    let busy = at(0) + at(1) + at(2) + at(5) + at(6);
    let steal = at(7);
    Some(CpuTicks {
        busy,
        steal,
        total: busy + at(3) + at(4) + steal,
    })
}

/// utime + stime of a `/proc/PID/stat` line, in clock ticks (fields 14 and 15; the
/// command name in parentheses may hold spaces, so fields count from its `)`).
fn parse_pid_stat(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After `)`: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The 1-minute load average of `/proc/loadavg`.
fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The counters of a [`HostProbe`] at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
struct Sample {
    load_avg: Option<f64>,
    cpu: Option<CpuTicks>,
    /// CPU ticks of kvlab's process and of the processes that count as its own, by PID.
    own: Vec<(u32, Option<u64>)>,
}

impl Sample {
    fn take(own: &[u32]) -> Sample {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let ticks = |pid: &str| read(&format!("/proc/{pid}/stat")).and_then(|t| parse_pid_stat(&t));
        let mut own_ticks = vec![(std::process::id(), ticks("self"))];
        own_ticks.extend(own.iter().map(|&p| (p, ticks(&p.to_string()))));
        Sample {
            load_avg: read("/proc/loadavg").and_then(|t| parse_loadavg(&t)),
            cpu: read("/proc/stat").and_then(|t| parse_proc_stat(&t)),
            own: own_ticks,
        }
    }
}

/// How busy the machine is while a phase runs: [`HostProbe::start`] reads the load
/// average, the machine's CPU counters and kvlab's own CPU time (and a started server's)
/// when the phase starts, [`HostProbe::finish`] reads them again and fills in the
/// [`HostInfo`] of the result. Other processes' share is the machine's non-idle time less
/// the own processes' time, over all CPUs' time between the two readings — measured, not
/// guessed from the load average.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostProbe {
    start: Sample,
    own: Vec<u32>,
}

impl HostProbe {
    /// Reads the counters now. `own` are processes whose CPU time is the run's own, not
    /// other load: a server kvlab started for the run. Never fails: what cannot be read
    /// leaves the figures it feeds unknown.
    pub fn start(own: &[u32]) -> HostProbe {
        HostProbe {
            start: Sample::take(own),
            own: own.to_vec(),
        }
    }

    /// The machine ([`HostInfo::detect`]) with the load average at the start and now, and
    /// the steal and other processes' CPU shares between the start and now.
    pub fn finish(&self) -> HostInfo {
        let mut host = HostInfo::detect();
        host.set_load(&self.start, &Sample::take(&self.own));
        host
    }
}

/// Percent, 0 to 100, of `part` in `whole` ticks.
fn share(part: u64, whole: u64) -> f64 {
    (100.0 * part as f64 / whole as f64).clamp(0.0, 100.0)
}

impl HostInfo {
    /// Fills in the load figures from two samples.
    fn set_load(&mut self, start: &Sample, end: &Sample) {
        self.load_avg_start = start.load_avg;
        self.load_avg_end = end.load_avg;
        self.steal_pct = None;
        self.other_cpu_pct = None;
        if let (Some(a), Some(b)) = (start.cpu, end.cpu) {
            let total = b.total.saturating_sub(a.total);
            if total > 0 {
                self.steal_pct = Some(share(b.steal.saturating_sub(a.steal), total));
                // A process that ended between the samples counts as other load.
                let own: u64 = start
                    .own
                    .iter()
                    .filter_map(|(pid, before)| {
                        let after = end.own.iter().find(|(p, _)| p == pid)?.1?;
                        Some(after.saturating_sub((*before)?))
                    })
                    .sum();
                let busy = b.busy.saturating_sub(a.busy);
                self.other_cpu_pct = Some(share(busy.saturating_sub(own), total));
            }
        }
        self.busy = self.other_cpu_pct.is_some_and(|p| p > BUSY_OTHER_CPU_PCT)
            || self.steal_pct.is_some_and(|p| p > BUSY_STEAL_PCT);
    }
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
            load_avg_start: None,
            load_avg_end: None,
            steal_pct: None,
            other_cpu_pct: None,
            cpu_governor: Some(read(CPUFREQ_GOVERNOR).trim().to_string()).filter(|g| !g.is_empty()),
            cpu_mhz: read(CPUFREQ_CURRENT)
                .trim()
                .parse::<f64>()
                .ok()
                .map(|khz| khz / 1000.0)
                .or_else(|| parse_cpu_mhz(&read("/proc/cpuinfo"))),
            busy: false,
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

const CPUFREQ_GOVERNOR: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
const CPUFREQ_CURRENT: &str = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq";

/// The first `cpu MHz` of `/proc/cpuinfo` (x86).
fn parse_cpu_mhz(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix("cpu MHz"))
        .and_then(|rest| rest.trim_start().strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
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
    fn load_figures_from_proc_files() {
        // Linux's proc(5) formats.
        assert_eq!(parse_loadavg("0.52 0.58 0.59 1/389 12345\n"), Some(0.52));
        let stat = "cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\n";
        assert_eq!(
            parse_proc_stat(stat),
            Some(CpuTicks {
                busy: 160,
                steal: 10,
                total: 990
            })
        );
        let own = "4321 (kvlab (run)) R 1 4321 4321 0 -1 4194304 100 0 0 0 250 40 0 0 20 0 3 \
                   0 100 1000 200";
        assert_eq!(parse_pid_stat(own), Some(290));
        assert_eq!(parse_pid_stat("garbage"), None);
        assert_eq!(
            parse_cpu_mhz("processor\t: 0\ncpu MHz\t\t: 2445.430\n"),
            Some(2445.43)
        );
        assert_eq!(parse_cpu_mhz("Hardware\t: BCM2835\n"), None);
    }

    #[test]
    fn other_processes_share_is_the_machine_less_the_own_processes() {
        let at = |busy, steal, total, own: u64| Sample {
            load_avg: Some(1.0),
            cpu: Some(CpuTicks { busy, steal, total }),
            own: vec![(1, Some(own))],
        };
        // 1000 ticks of all CPUs; 400 busy, 300 of them kvlab's: others took 10 %.
        let mut h = HostInfo::detect();
        h.set_load(&at(0, 0, 0, 0), &at(400, 20, 1000, 300));
        assert_eq!(h.other_cpu_pct, Some(10.0));
        assert_eq!(h.steal_pct, Some(2.0));
        assert!(!h.busy, "{h:?}");
        h.set_load(&at(0, 0, 0, 0), &at(700, 0, 1000, 300));
        assert_eq!(h.other_cpu_pct, Some(40.0));
        assert!(h.busy);
        // Nothing readable: nothing claimed.
        h.set_load(&Sample::default(), &Sample::default());
        assert_eq!((h.other_cpu_pct, h.steal_pct, h.busy), (None, None, false));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_probe_reads_this_machine() {
        let h = HostProbe::start(&[]).finish();
        assert!(
            h.load_avg_start.is_some() && h.load_avg_end.is_some(),
            "{h:?}"
        );
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

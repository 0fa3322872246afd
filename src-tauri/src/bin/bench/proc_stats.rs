//! What a process costs, read from Linux's `/proc` (proc(5)): its CPU time, resident memory
//! and open files, sampled by `taskdeck-bench fleet` once a second for the server it loads.

use std::time::Instant;

/// One reading of a process.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// When it was read.
    pub at: Instant,
    /// utime + stime of all its threads (fields 14 and 15 of `/proc/PID/stat`), in seconds.
    pub cpu_seconds: f64,
    /// `VmRSS` of `/proc/PID/status`, in KiB.
    pub rss_kib: u64,
    /// Entries of `/proc/PID/fd`: its open files, sockets and pipes.
    pub fds: u64,
}

/// Reads process `pid` now; `None` when it is gone or `/proc` is not readable.
pub fn sample(pid: u32) -> Option<Sample> {
    let at = Instant::now();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis,
    // where field 3 (state) is the first.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some(Sample {
        at,
        cpu_seconds: ticks as f64 / per_second,
        rss_kib,
        fds,
    })
}

/// CPU time this process (all threads) used so far, in seconds (`getrusage(RUSAGE_SELF)`).
pub fn own_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

//! What a process costs, read from Linux's `/proc` (proc(5)): its CPU time, resident memory
//! and open files, sampled by `taskdeck-bench fleet` once a second for the server it loads,
//! with the machine's steal time (CPU the hypervisor gave to other guests), so that a run on a
//! busy host can be told from a slower build.

use std::{collections::BTreeMap, time::Instant};

/// One reading of a process.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When it was read.
    pub at: Instant,
    /// utime + stime of all its threads (fields 14 and 15 of `/proc/PID/stat`), in seconds.
    pub cpu_seconds: f64,
    /// `VmRSS` of `/proc/PID/status`, in KiB.
    pub rss_kib: u64,
    /// Entries of `/proc/PID/fd`: its open files, sockets and pipes.
    pub fds: u64,
    /// Steal time of all CPUs together since boot (the 8th value after `cpu` on the first line
    /// of `/proc/stat`), in seconds; `None` where the kernel does not report it.
    pub steal_seconds: Option<f64>,
    /// Each thread's name (`/proc/PID/task/TID/comm`, at most 15 bytes: `taskdeck-writer`,
    /// `tokio-rt-worker`...) and utime + stime in seconds, by thread id.
    pub threads: BTreeMap<u32, (String, f64)>,
}

/// CPU seconds by thread name from the first of `samples` to the last: each thread's increase
/// between consecutive readings, summed. A thread started in between counts from 0; one that
/// ended loses at most its last interval's CPU, so the sum can fall short of the process's
/// total (which keeps the CPU of ended threads), never below 0.
pub fn cpu_by_thread(samples: &[Sample]) -> BTreeMap<String, f64> {
    let mut by_name = BTreeMap::new();
    for pair in samples.windows(2) {
        for (tid, (name, seconds)) in &pair[1].threads {
            let before = pair[0].threads.get(tid).map_or(0.0, |(_, s)| *s);
            *by_name.entry(name.clone()).or_insert(0.0) += (seconds - before).max(0.0);
        }
    }
    by_name
}

/// Reads process `pid` now; `None` when it is gone or `/proc` is not readable.
pub fn sample(pid: u32) -> Option<Sample> {
    let at = Instant::now();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks = cpu_ticks(&stat)?;
    // SAFETY: sysconf only reads a configuration value.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut threads = BTreeMap::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let read = |file: &str| std::fs::read_to_string(task.path().join(file)).ok();
        let tid = task.file_name().to_str().and_then(|t| t.parse().ok());
        // A thread that ends while it is read is left out.
        if let (Some(tid), Some(name), Some(ticks)) = (
            tid,
            read("comm"),
            read("stat").as_deref().and_then(cpu_ticks),
        ) {
            threads.insert(
                tid,
                (name.trim_end().to_string(), ticks as f64 / per_second),
            );
        }
    }
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
        steal_seconds: steal_ticks().map(|t| t as f64 / per_second),
        threads,
    })
}

/// utime + stime (fields 14 and 15) of a `/proc/.../stat` line, in clock ticks.
fn cpu_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis,
    // where field 3 (state) is the first.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split_whitespace().skip(11);
    Some(fields.next()?.parse::<u64>().ok()? + fields.next()?.parse::<u64>().ok()?)
}

/// The `steal` column of the aggregate `cpu` line of `/proc/stat`, in clock ticks.
fn steal_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
    // user nice system idle iowait irq softirq steal ...
    cpu.split_whitespace().nth(7)?.parse().ok()
}

/// CPU time this process (all threads) used so far, in seconds (`getrusage(RUSAGE_SELF)`).
pub fn own_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

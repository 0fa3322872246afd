//! Lower scheduling priority for the engine's background threads (the search indexer, the WAL
//! checkpoint thread), so that their bursts of work yield the CPU to the writer and the request
//! handlers instead of stalling them.

/// Sets the calling thread's nice level to `nice` (0 normal .. 19 lowest; Linux schedules each
/// thread by its own nice level), for a thread that others may wait on. Not `SCHED_IDLE`
/// ([`idle_this_thread`]), which can leave a thread without CPU for as long as the load lasts,
/// possibly inside a short read transaction others then wait on (measured: durable creation's
/// p99 went from ~50 ms to 330 ms while checkpoints waited for the indexer). A failure is
/// logged at debug level for `what` and otherwise ignored. A no-op outside Linux.
pub(crate) fn lower_this_thread(nice: i32, what: &str) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain system calls about the calling thread (its kernel thread id).
        let rc = unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, nice)
        };
        if rc != 0 {
            tracing::debug!(
                "{what}: cannot lower priority: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (nice, what);
}

/// Puts the calling thread in Linux's `SCHED_IDLE` class, the lowest there is: a thread that
/// wakes at normal priority takes the core from it at once, and while the core is busy it gets
/// a sliver of it (a fifth of a nice-19 thread's share). Only for a thread whose work nothing
/// urgent waits on: under a sustained load that work lags until the load ends. Measured on the
/// search index's writer (BENCHMARKS.md, "The search indexer's passes"): at 10,000 tasks
/// created a second, creation's p99 3.9-4.1 ms in SCHED_IDLE against 4.9-5.7 ms at nice 19.
/// Where the class is refused (some sandboxes), the thread goes to nice 19 instead
/// ([`lower_this_thread`]); that failure is logged at debug level for `what`. Outside Linux,
/// nothing changes.
pub(crate) fn idle_this_thread(what: &str) {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: plain system calls about the calling thread (its kernel thread id).
        let rc = unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::pid_t;
            libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param)
        };
        if rc != 0 {
            tracing::debug!(
                "{what}: cannot move to SCHED_IDLE: {}; nice 19 instead",
                std::io::Error::last_os_error()
            );
            lower_this_thread(19, what);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = what;
}

//! Lower scheduling priority for the engine's background threads (the search indexer, the WAL
//! checkpoint thread), so that their bursts of work yield the CPU to the writer and the request
//! handlers instead of stalling them.

/// Sets the calling thread's nice level to `nice` (0 normal .. 19 lowest; Linux schedules each
/// thread by its own nice level). Not `SCHED_IDLE`, which can leave a thread without CPU for as
/// long as the load lasts, possibly inside a short read transaction others then wait on
/// (measured: durable creation's p99 went from ~50 ms to 330 ms while checkpoints waited for
/// the indexer). A failure is logged at debug level for `what` and otherwise ignored. A no-op
/// outside Linux.
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

//! The free space of the file system holding the store: what the writer checks to learn that
//! a full disk has room again, and what `taskdeck doctor` reports.

use std::path::Path;

/// Free space (bytes, for this process: see [`free_bytes`]) from which a full disk counts as
/// having room again: the fleet's commits write 3-4 pages (16 KiB) each, a creation flood's a
/// few hundred KiB, so a flood may still be refused now and then just past it.
pub const SPACE_FOR_WRITES: u64 = 256 << 10;

/// The bytes this process may still write on the file system holding `dir` (statvfs(3):
/// `f_bavail * f_frsize`, or `f_bfree * f_frsize` when it may also use the blocks a file
/// system such as ext4 reserves for root: [`may_use_reserved_blocks`]), or `None` when it
/// cannot be asked (e.g. `dir` does not exist) or does not say (a file system reporting no
/// blocks at all, as some FUSE and network ones do, whatever room they have).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string and `st` is written by statvfs on success.
    let rc = unsafe { libc::statvfs(path.as_ptr(), st.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    if st.f_blocks == 0 {
        return None;
    }
    let blocks = if may_use_reserved_blocks() {
        st.f_bfree
    } else {
        st.f_bavail
    };
    // Both are 64-bit here, narrower on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    Some((blocks as u64).saturating_mul(st.f_frsize as u64))
}

/// The free bytes on the file system holding `dir` when they are fewer than
/// [`SPACE_FOR_WRITES`] (the disk counts as full: writes are refused, and SQLite cannot make a
/// store's log files), else `None` (room, or the space cannot be read).
pub fn full(dir: &Path) -> Option<u64> {
    free_bytes(dir).filter(|&b| b < SPACE_FOR_WRITES)
}

/// Whether this process has `CAP_SYS_RESOURCE` in its effective set (capabilities(7): bit 24
/// of `CapEff` in /proc/self/status), which is what lets a writer use the blocks reserved for
/// root; root in a container usually lacks it.
fn may_use_reserved_blocks() -> bool {
    const CAP_SYS_RESOURCE: u32 = 24;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_RESOURCE) != 0)
}

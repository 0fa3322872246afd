//! The free space of the file system holding the store: what the writer checks to learn that
//! a full disk has room again, and what `taskdeck doctor` reports.

use std::path::Path;

/// Free space (bytes, for an unprivileged writer) from which a full disk counts as having room
/// again: a group commit of a creation flood writes a few hundred KiB.
pub const SPACE_FOR_WRITES: u64 = 1 << 20;

/// The bytes an unprivileged process may still write on the file system holding `dir`
/// (statvfs(3): `f_bavail * f_frsize`), or `None` when it cannot be asked (e.g. `dir` does not
/// exist).
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
    // Both are 64-bit here, narrower on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

//! The data dir's lock file, `<data dir>/taskdeck.lock`: one Taskdeck process per data dir
//! (an exclusive `flock` held for the process's life, on the file and on the data dir itself,
//! so that deleting the file, as one does with a lock file that seems stale, lets no second
//! Taskdeck in), and whether the last one stopped cleanly (the file says `running <pid>`
//! while one runs and `stopped` after a clean stop).
//!
//! Why the second: the start check of the store ([`taskdeck_engine::store::integrity`]) reads
//! every page only when that is cheap or the last run ended without stopping (killed, crashed,
//! the machine lost power); `taskdeck doctor` reads the lock's holder from here too.

use std::{
    fs::File,
    io::{Read, Seek, SeekFrom, Write},
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
};

/// The lock file of `data_dir`.
pub fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("taskdeck.lock")
}

/// The lock of a data dir, held until dropped: on its lock file, and on the directory.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    _dir: File,
}

/// What [`acquire`] found.
#[derive(Debug)]
pub struct Acquired {
    /// Held for the process's life.
    pub lock: DataDirLock,
    /// The last process on this data dir did not stop cleanly (the file still said `running`).
    /// False for a new data dir and for one last used by a Taskdeck that did not record it.
    pub unclean: bool,
    /// What the lock file said before this process recorded itself (trimmed; `None`: there
    /// was no lock file), read under the lock, so no other Taskdeck changed it meanwhile: what
    /// [`restore_state`] puts back when this start is refused.
    pub last_run: Option<String>,
}

/// Why [`acquire`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "another Taskdeck is already using the data dir {0} (stop it first, or use --data-dir)"
    )]
    Busy(PathBuf),
    /// The lock file (the path) cannot be created, opened, locked or written.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Takes the lock of `data_dir` (created if needed) and records this process as running.
/// Errors: [`LockError::Busy`] when another process holds it; [`LockError::Io`].
pub fn acquire(data_dir: &Path) -> Result<Acquired, LockError> {
    let path = lock_path(data_dir);
    let io = |e| LockError::Io(path.clone(), e);
    // The directory's own lock holds however the file is deleted or replaced.
    let dir = File::open(data_dir).map_err(|e| LockError::Io(data_dir.to_path_buf(), e))?;
    if dir.try_lock().is_err() {
        return Err(LockError::Busy(data_dir.to_path_buf()));
    }
    // A refused start on a new data dir removes the file it made ([`restore_state`]): a file
    // opened just before that is locked in vain (the path then names another file, or none),
    // so the lock is taken again on what the path names now.
    for _ in 0..5 {
        let opened = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path);
        let (mut file, existed) = match opened {
            Ok(file) => (file, false),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                match File::options().read(true).write(true).open(&path) {
                    Ok(file) => (file, true),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io(e)),
                }
            }
            Err(e) => return Err(io(e)),
        };
        if file.try_lock().is_err() {
            return Err(LockError::Busy(data_dir.to_path_buf()));
        }
        let locked = file.metadata().map_err(io)?;
        let named = std::fs::metadata(&path).ok();
        if named.is_none_or(|m| (m.dev(), m.ino()) != (locked.dev(), locked.ino())) {
            continue;
        }
        let mut before = String::new();
        let _ = file.read_to_string(&mut before);
        let unclean = before.starts_with("running");
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "running {}", std::process::id()))
            .and_then(|()| file.sync_all())
            .map_err(io)?;
        return Ok(Acquired {
            lock: DataDirLock {
                _file: file,
                _dir: dir,
            },
            unclean,
            last_run: existed.then(|| before.trim().to_string()),
        });
    }
    Err(io(std::io::Error::other(
        "the lock file was replaced each time it was locked; try again",
    )))
}

/// Records that the process holding `data_dir`'s lock stopped cleanly; called as the last step
/// of a clean stop. A failure is logged: the next start then checks the whole store.
pub fn mark_stopped(data_dir: &Path) {
    let path = lock_path(data_dir);
    if let Err(e) = std::fs::write(&path, "stopped\n") {
        tracing::warn!("cannot record the clean stop in {}: {e}", path.display());
    }
}

/// True when a process holds `data_dir`'s lock (its lock file's, or the directory's when the
/// file was deleted).
pub fn in_use(data_dir: &Path) -> bool {
    let locked = |path: &Path| File::open(path).is_ok_and(|f| f.try_lock().is_err());
    locked(&lock_path(data_dir)) || locked(data_dir)
}

/// The pid holding the exclusive `flock` on `data_dir`'s lock file (or on the directory,
/// when the file was deleted), from the kernel's lock
/// table (`/proc/locks`, proc_locks(5): `1: FLOCK  ADVISORY  WRITE 812 fe:00:10018882 0 EOF`,
/// i.e. pid, then the device as hex major:minor and the inode); `None` when none is listed.
///
/// The kernel makes the table line by line across the reads of one `read_to_string`: while
/// other processes take and drop locks (SQLite takes several per statement), a line can slip
/// between two reads, so a table that does not list the lock is read again, up to 3 times.
pub fn holder(data_dir: &Path) -> Option<u32> {
    // The lock file's holder, else the directory's (its lock file was deleted).
    let wanted: Vec<String> = [lock_path(data_dir), data_dir.to_path_buf()]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|meta| {
            let dev = meta.dev();
            format!(
                "{:02x}:{:02x}:{}",
                libc::major(dev),
                libc::minor(dev),
                meta.ino()
            )
        })
        .collect();
    (0..3).find_map(|_| {
        let table = std::fs::read_to_string("/proc/locks").ok()?;
        wanted.iter().find_map(|wanted| {
            table.lines().find_map(
                |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                    [_, "FLOCK", _, "WRITE", pid, file, ..] if file == wanted => pid.parse().ok(),
                    _ => None,
                },
            )
        })
    })
}

/// What the lock file of `data_dir` says (`running <pid>`, `stopped`, or empty), for doctor;
/// `None` when it does not exist.
pub fn recorded_state(data_dir: &Path) -> Option<String> {
    std::fs::read_to_string(lock_path(data_dir))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Puts back what the lock file of `data_dir` said before a start that was refused (`state`,
/// as [`recorded_state`] read it; `None`: there was no lock file, so it is removed), for the
/// process that holds the lock: a refused start is no run, and must not read as a crash.
pub fn restore_state(data_dir: &Path, state: Option<&str>) {
    let path = lock_path(data_dir);
    let restored = match state {
        Some(s) => std::fs::write(&path, format!("{s}\n")),
        None => std::fs::remove_file(&path),
    };
    if let Err(e) = restored {
        tracing::warn!("cannot restore {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_did_not_mark_its_stop_is_unclean() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(dir.path()).unwrap();
        assert!(!first.unclean, "a new data dir");
        assert_eq!(first.last_run, None, "no lock file before");
        assert!(in_use(dir.path()));
        assert_eq!(holder(dir.path()), Some(std::process::id()));
        assert!(matches!(acquire(dir.path()), Err(LockError::Busy(_))));
        drop(first);
        assert!(!in_use(dir.path()));
        let second = acquire(dir.path()).unwrap();
        assert!(second.unclean, "the first never marked its stop");
        mark_stopped(dir.path());
        drop(second);
        assert_eq!(recorded_state(dir.path()).as_deref(), Some("stopped"));
        let third = acquire(dir.path()).unwrap();
        assert!(!third.unclean);
        assert_eq!(third.last_run.as_deref(), Some("stopped"));
        // The lock file deleted (taken for a stale one): the data dir is still in use.
        std::fs::remove_file(lock_path(dir.path())).unwrap();
        assert!(in_use(dir.path()));
        assert_eq!(holder(dir.path()), Some(std::process::id()));
        assert!(matches!(acquire(dir.path()), Err(LockError::Busy(_))));
        drop(third);
        assert!(!in_use(dir.path()));
        acquire(dir.path()).unwrap();
    }
}

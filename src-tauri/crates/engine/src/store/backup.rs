//! Online backups of the store (SQLite's backup API) and restoring one.
//!
//! A backup copies every page under one read transaction of its own connection: it is the
//! store as of one commit, taken while Taskdeck keeps writing (a WAL reader blocks no one and
//! is not restarted by later commits). The copy is a single self-contained file (rollback
//! journal mode, no -wal), written next to its destination and renamed into place, so a
//! failed backup never leaves a half file under the name asked for.

use std::{
    path::{Path, PathBuf},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use rusqlite::{Connection, backup::StepResult};

use super::{
    FILE_NAME, create_private_file,
    inspect::StoreFile,
    integrity::{self, CheckDepth, open_read_only},
};
use crate::EngineError;

/// A backup or a restore that did not happen.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The destination exists and overwriting was not asked for.
    #[error("{0} already exists")]
    Exists(PathBuf),
    /// The file to restore failed its check: it is not a sound store.
    #[error("{path} is not a sound Taskdeck store: {problem}")]
    Unsound {
        /// The file to restore.
        path: PathBuf,
        /// What the check found, or why the file is no store.
        problem: String,
    },
    /// Backup only: the copy of the store at `path` failed `PRAGMA quick_check`, and so does
    /// the store itself, so no copy was kept: a backup that cannot be restored is worse than
    /// none, as it is found out only when it is needed.
    #[error(
        "the store {path} is damaged ({problem}), so no backup was made: see \"A damaged store\" \
         in docs/operations.md"
    )]
    Damaged {
        /// The store's file.
        path: PathBuf,
        /// What `quick_check` found.
        problem: String,
    },
    /// Restore only: the file to restore is the store itself (restoring it would only move
    /// the store aside and copy it back).
    #[error(
        "{0} is the store itself, not a backup of it: give the file `taskdeck backup` wrote, or a \
         store moved aside by an earlier restore"
    )]
    IsTheStore(PathBuf),
    /// Reading, writing or renaming failed (including a full disk).
    #[error(transparent)]
    Store(#[from] EngineError),
}

/// What a backup or a restore wrote.
#[derive(Debug, Clone)]
pub struct CopySummary {
    /// The file written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Tasks in it.
    pub tasks: u64,
    /// Restore only: where the store it replaced was moved (`taskdeck.sqlite3.before-restore-
    /// <unix seconds>`, `-2`, `-3`... after it when that name is taken, with its -wal when it
    /// had one); `None` when there was none.
    pub moved_aside: Option<PathBuf>,
}

/// Copies the store of data dir `dir` to `dest` (made 0600) while it may be in use, as of one
/// commit, and checks the copy (`PRAGMA quick_check`: it reads every page, so it takes about as
/// long as the copy) before it takes `dest`'s name. `overwrite`: replace an existing `dest` (and
/// drop its stale -wal and -shm), unless `dest` is in a data dir a process runs on.
///
/// Errors: [`BackupError::Exists`]; [`BackupError::Damaged`] when the copy fails its check;
/// [`BackupError::Store`] when `dest` is in a running Taskdeck's data dir or inside `dir`, or the
/// store cannot be read or `dest` written ([`EngineError::DiskFull`] when its disk is full).
pub fn backup(dir: &Path, dest: &Path, overwrite: bool) -> Result<CopySummary, BackupError> {
    let source = dir.join(FILE_NAME);
    if !source.is_file() {
        return Err(store_error(&source, "there is no store file"));
    }
    if dest.exists() && !overwrite {
        return Err(BackupError::Exists(dest.to_path_buf()));
    }
    let same = |a: &Path, b: &Path| matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(a), Ok(b)) if a == b);
    if same(dest, &source) || same(dest, &with_suffix(&source, "-wal")) {
        return Err(store_error(
            dest,
            "is the store itself (or its WAL): back up to another path",
        ));
    }
    // Every file in the data dir is Taskdeck's (its lock, port, search index, logs): a copy
    // written over one of them would break the running Taskdeck.
    // (The nearest directory above `dest` that exists: `dest` may name new directories.)
    let inside = dest
        .ancestors()
        .skip(1)
        .find_map(|a| {
            std::fs::canonicalize(if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            })
            .ok()
        })
        .zip(std::fs::canonicalize(dir).ok())
        .is_some_and(|(parent, dir)| parent.starts_with(dir));
    if inside {
        return Err(store_error(
            dest,
            "is inside the data dir, whose files are Taskdeck's own: back up to another directory",
        ));
    }
    // A file of another data dir while a Taskdeck runs on it (its store, -wal, -shm, search
    // index...): replacing one would pull it from under that process, which would go on
    // acknowledging writes into unlinked files.
    // For every directory above `dest` (a data dir's own folders, e.g. its logs, are its files
    // too), asked of the kernel's lock table first: taking the lock to see would refuse a
    // Taskdeck that starts at that instant. Where the table does not name the file's device as
    // `stat` does (btrfs subvolumes, overlayfs), a lock file that says `running` is tried.
    let live_dir = |a: &Path| {
        crate::data_dir_lock::holder(a).is_some()
            || (crate::data_dir_lock::recorded_state(a).is_some_and(|s| s.starts_with("running"))
                && crate::data_dir_lock::in_use(a))
    };
    let absolute = std::path::absolute(dest).unwrap_or_else(|_| dest.to_path_buf());
    if let Some(live) = absolute.ancestors().skip(1).find(|a| live_dir(a)) {
        return Err(store_error(
            dest,
            &format!(
                "is in the data dir of a Taskdeck running on {}: back up to another directory",
                live.display()
            ),
        ));
    }
    let partial = partial_path(dest);
    // Checked before it is counted: counting reads the tasks b-tree, which may be the damage.
    let copied = copy_pages(&source, &partial).and_then(|()| {
        let problems = integrity::check_file(&partial, CheckDepth::Quick)?.problems;
        if problems.is_empty() {
            count_tasks(&partial).map(Ok)
        } else {
            Ok(Err(problems))
        }
    });
    let tasks = match copied {
        Ok(Ok(tasks)) => tasks,
        Ok(Err(problems)) => {
            remove_partial(&partial);
            // Damage the copy has and the store has not came from writing the copy.
            let source_sound = integrity::check_file(&source, CheckDepth::Quick)
                .is_ok_and(|r| r.problems.is_empty());
            return Err(if source_sound {
                store_error(
                    dest,
                    &format!(
                        "the copy failed its check ({}) though the store passes it: the disk \
                         holding it may be failing; no backup was made",
                        problems.join("; ")
                    ),
                )
            } else {
                BackupError::Damaged {
                    path: source,
                    problem: problems.join("; "),
                }
            });
        }
        Err(e) => {
            remove_partial(&partial);
            return Err(e.into());
        }
    };
    let placed = if overwrite {
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(with_suffix(dest, suffix));
        }
        std::fs::rename(&partial, dest)
    } else {
        // A hard link fails when `dest` appeared meanwhile, where a rename would replace it.
        std::fs::hard_link(&partial, dest).and_then(|()| std::fs::remove_file(&partial))
    };
    if let Err(e) = placed {
        remove_partial(&partial);
        return Err(match e.kind() {
            std::io::ErrorKind::AlreadyExists => BackupError::Exists(dest.to_path_buf()),
            _ => store_error(dest, &e.to_string()),
        });
    }
    Ok(CopySummary {
        path: dest.to_path_buf(),
        bytes: std::fs::metadata(dest).map(|m| m.len()).unwrap_or(0),
        tasks,
        moved_aside: None,
    })
}

/// Copies every page of the SQLite file `source` into a new file `dest` in one step (one read
/// transaction), makes `dest` a rollback-journal database and syncs it.
fn copy_pages(source: &Path, dest: &Path) -> Result<(), EngineError> {
    let _ = std::fs::remove_file(dest);
    create_private_file(dest)?;
    let src = open_read_only(source)?;
    let mut dst = Connection::open(dest)?;
    {
        let copy = rusqlite::backup::Backup::new(&src, &mut dst)?;
        // One step of every page: a later commit to the source cannot restart the copy.
        loop {
            match copy.step(-1)? {
                StepResult::Done => break,
                StepResult::More | StepResult::Busy | StepResult::Locked => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
    dst.pragma_update(None, "journal_mode", "DELETE")?;
    drop(dst);
    std::fs::File::open(dest)
        .and_then(|f| f.sync_all())
        .map_err(|e| store_io(dest, e))
}

/// The number of tasks in the store file at `path` (a copy [`copy_pages`] wrote).
fn count_tasks(path: &Path) -> Result<u64, EngineError> {
    let conn = open_read_only(path)?;
    let tasks: i64 = conn.query_row("SELECT count(*) FROM tasks", [], |r| r.get(0))?;
    Ok(tasks.max(0) as u64)
}

/// Replaces the store of data dir `dir` with a copy of the backup at `backup`, which must pass
/// `PRAGMA quick_check`. Taskdeck must not be running on `dir` (the caller holds its lock).
/// The replaced store is moved aside, not deleted ([`CopySummary::moved_aside`]); the search
/// index notices the older state at the next start and rebuilds itself.
///
/// Errors: [`BackupError::Unsound`] when `backup` is damaged or not a store;
/// [`BackupError::Store`] when a file cannot be read, copied or moved.
pub fn restore(backup: &Path, dir: &Path) -> Result<CopySummary, BackupError> {
    let unsound = |problem: String| BackupError::Unsound {
        path: backup.to_path_buf(),
        problem,
    };
    let store = dir.join(FILE_NAME);
    if let (Ok(a), Ok(b)) = (backup.canonicalize(), store.canonicalize())
        && a == b
    {
        return Err(BackupError::IsTheStore(backup.to_path_buf()));
    }
    let report = integrity::check_file(backup, CheckDepth::Quick)?;
    if let Some(problem) = report.problems.first() {
        return Err(unsound(problem.clone()));
    }
    let tasks = StoreFile::open(backup)?
        .task_count()
        .map_err(|e| unsound(e.to_string()))?;
    let partial = partial_path(&store);
    // Through SQLite, as the check above read it: a backup with a -wal beside it (a store
    // moved aside by an earlier restore) is copied with the commits in that -wal.
    if let Err(e) = copy_pages(backup, &partial) {
        remove_partial(&partial);
        return Err(e.into());
    }
    let moved_aside = if store.exists() || with_suffix(&store, "-wal").exists() {
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        // A name no earlier restore took (two restores in one second must not share one).
        let aside = (0..)
            .map(|n| match n {
                0 => with_suffix(&store, &format!(".before-restore-{stamp}")),
                n => with_suffix(&store, &format!(".before-restore-{stamp}-{n}")),
            })
            .find(|aside| !aside.exists() && !with_suffix(aside, "-wal").exists())
            .expect("an unused name");
        for suffix in ["", "-wal"] {
            let from = with_suffix(&store, suffix);
            if from.exists() {
                std::fs::rename(&from, with_suffix(&aside, suffix))
                    .map_err(|e| store_io(&from, e))?;
            }
        }
        Some(aside)
    } else {
        None
    };
    let _ = std::fs::remove_file(with_suffix(&store, "-shm"));
    std::fs::rename(&partial, &store).map_err(|e| store_io(&store, e))?;
    Ok(CopySummary {
        bytes: std::fs::metadata(&store).map(|m| m.len()).unwrap_or(0),
        path: store,
        tasks,
        moved_aside,
    })
}

/// Removes a copy that will not be placed, with the rollback journal SQLite may have left
/// beside it (`.NAME.partial-journal`, when the copy failed mid-way).
fn remove_partial(partial: &Path) {
    for suffix in ["", "-journal"] {
        let _ = std::fs::remove_file(with_suffix(partial, suffix));
    }
}

/// `path` with `suffix` appended to its file name (`x.sqlite3` + `-wal`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Where a copy to `dest` is written before it is renamed into place: `.NAME.partial` in the
/// same directory (a rename within one file system is atomic).
fn partial_path(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "backup".into());
    dest.with_file_name(format!(".{name}.partial"))
}

fn store_error(path: &Path, what: &str) -> BackupError {
    BackupError::Store(EngineError::Store(format!("{}: {what}", path.display())))
}

/// An I/O error on `path`; ENOSPC is [`EngineError::DiskFull`].
fn store_io(path: &Path, e: std::io::Error) -> EngineError {
    if e.kind() == std::io::ErrorKind::StorageFull {
        EngineError::DiskFull(format!("{}: {e}", path.display()))
    } else {
        EngineError::Store(format!("{}: {e}", path.display()))
    }
}

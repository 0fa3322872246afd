//! `taskdeck backup PATH` and `taskdeck restore PATH`: an online copy of the task store
//! (SQLite's backup API, consistent while Taskdeck runs and writes) and putting one back
//! ([`taskdeck_engine::store::backup`] does the copying; docs/operations.md).
//!
//! Exit codes: 0 done; 1 the copy failed, the destination exists (without `--force`), the
//! backup is not a sound store, or (restore) Taskdeck is running on the data dir.

use std::{path::Path, process::ExitCode};

use taskdeck_engine::{
    EngineError,
    store::backup::{self, BackupError, CopySummary},
};
use taskdeck_server::data_dir_lock;

/// `taskdeck backup DEST [--force]`: copies the store of `data_dir` to `dest` and prints
/// `<path>\t<bytes> bytes\t<tasks> tasks`.
pub fn run_backup(data_dir: &Path, dest: &Path, force: bool) -> ExitCode {
    if dest.is_dir() {
        eprintln!(
            "taskdeck: {} is a directory: give the backup file's path (e.g. {})",
            dest.display(),
            dest.join("taskdeck-backup.sqlite3").display()
        );
        return ExitCode::from(1);
    }
    match backup::backup(data_dir, dest, force) {
        Ok(summary) => {
            print_summary(&summary);
            ExitCode::SUCCESS
        }
        Err(BackupError::Exists(path)) => {
            eprintln!(
                "taskdeck: {} already exists (pass --force to replace it)",
                path.display()
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("taskdeck: backup failed: {}", copy_error(&e));
            ExitCode::from(1)
        }
    }
}

/// What a failed backup or restore says: a full disk is the copy's own (the store's message
/// would say that the store's writes resume by themselves, which is not what happened).
fn copy_error(e: &BackupError) -> String {
    match e {
        BackupError::Store(EngineError::DiskFull(what)) => {
            format!("the disk is full ({what}); free some space and try again")
        }
        e => e.to_string(),
    }
}

/// `taskdeck restore BACKUP`: refuses while Taskdeck runs on `data_dir`; otherwise holds the
/// data dir's lock (so none starts meanwhile), puts a copy of `backup` in place of the store,
/// and prints what it wrote and where the replaced store went.
pub fn run_restore(data_dir: &Path, backup_file: &Path) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(data_dir) {
        eprintln!("taskdeck: cannot create {}: {e}", data_dir.display());
        return ExitCode::from(1);
    }
    let (_lock, unclean) = match data_dir_lock::acquire(data_dir) {
        Ok(acquired) => (acquired.lock, acquired.unclean),
        Err(data_dir_lock::LockError::Busy(_)) => {
            eprintln!(
                "taskdeck: Taskdeck is running on {}: stop it first, then restore",
                data_dir.display()
            );
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("taskdeck: {e}");
            return ExitCode::from(1);
        }
    };
    let restored = backup::restore(backup_file, data_dir);
    // Not a run of Taskdeck: the lock file goes back to saying whether the store in place
    // needs the full check at the next start. A restored copy does not; a store left in
    // place by a failed restore does when the last Taskdeck on it did not stop cleanly.
    if restored.is_ok() || !unclean {
        data_dir_lock::mark_stopped(data_dir);
    }
    match restored {
        Ok(summary) => {
            print_summary(&summary);
            if let Some(aside) = &summary.moved_aside {
                eprintln!("The replaced store was moved to {}", aside.display());
            }
            // The store's tokens are the backup's too: what that undoes is for the person to know.
            eprintln!(
                "Tokens are as they were at the backup: one revoked since works again (revoke \
                 it again; `taskdeck token list` shows them), and one made since no longer \
                 works. Audit entries recorded since are gone."
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("taskdeck: restore failed: {}", copy_error(&e));
            ExitCode::from(1)
        }
    }
}

fn print_summary(s: &CopySummary) {
    println!("{}\t{} bytes\t{} tasks", s.path.display(), s.bytes, s.tasks);
}

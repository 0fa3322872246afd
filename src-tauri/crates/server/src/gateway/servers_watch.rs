//! Watching servers.json: a running Taskdeck applies an edit of the file (by hand, or by
//! `taskdeck servers add|remove` from another process) without a restart. The config dir is
//! watched, not the file, so the file's creation, removal and a rename over it (how editors and
//! [`ServersConfig::save`](super::servers_file::ServersConfig::save) write) are all seen.

use std::{path::Path, time::Duration};

use notify_debouncer_mini::{
    DebounceEventResult, Debouncer, new_debouncer,
    notify::{RecommendedWatcher, RecursiveMode},
};

/// How long the file must be quiet before a change is reported: an editor's save is several
/// events (write temp, rename, chmod), reported as one.
pub const DEBOUNCE: Duration = Duration::from_millis(200);

/// A live watch; dropping it stops watching.
pub struct ServersWatch {
    _debouncer: Debouncer<RecommendedWatcher>,
}

/// Calls `on_change` (on the watcher's own thread) about [`DEBOUNCE`] after servers.json at
/// `servers_path` was created, written, renamed over or removed; once per burst of changes.
/// Changes to other files of the directory are ignored, and so is the file being read (the
/// watcher sees it opened, and `on_change` reads it: without this, every read would call it
/// again, five times a second): only a change of its inode, size, mtime or ctime counts. The
/// directory is created if missing. Errors: the directory cannot be created or watched (e.g.
/// the inotify watch limit).
pub fn watch(
    servers_path: &Path,
    on_change: impl Fn() + Send + 'static,
) -> std::io::Result<ServersWatch> {
    let dir = servers_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    std::fs::create_dir_all(&dir)?;
    // Events name paths under the directory as watched, so compare file names only.
    let file_name = servers_path
        .file_name()
        .map(|n| n.to_os_string())
        .ok_or_else(|| std::io::Error::other("the servers file path has no file name"))?;
    let path = servers_path.to_path_buf();
    let mut seen = stamp(&path);
    let mut debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| match result {
        Ok(events) => {
            if events
                .iter()
                .any(|e| e.path.file_name() == Some(file_name.as_os_str()))
            {
                let now = stamp(&path);
                if now != seen {
                    seen = now;
                    on_change();
                }
            }
        }
        Err(e) => tracing::warn!("watching the servers file: {e}"),
    })
    .map_err(std::io::Error::other)?;
    debouncer
        .watcher()
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(std::io::Error::other)?;
    Ok(ServersWatch {
        _debouncer: debouncer,
    })
}

/// What tells one version of the file from another without opening it: its inode, size, mtime
/// and ctime (`None`: no file).
fn stamp(path: &Path) -> Option<(u64, u64, i64, i64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Waits for one report; then checks no second one comes for the same burst.
    fn expect_one(rx: &mpsc::Receiver<()>, what: &str) {
        rx.recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("no change reported after {what}"));
        while rx.recv_timeout(DEBOUNCE * 3).is_ok() {}
    }

    #[test]
    fn reports_each_kind_of_change_of_the_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cfg/servers.json");
        let (tx, rx) = mpsc::channel();
        let _watch = watch(&path, move || {
            let _ = tx.send(());
        })
        .unwrap();

        std::fs::write(&path, "{}").unwrap();
        expect_one(&rx, "creation");
        std::fs::write(&path, "{\"servers\": {}}").unwrap();
        expect_one(&rx, "a write");
        std::fs::read(&path).unwrap();
        assert!(
            rx.recv_timeout(DEBOUNCE * 4).is_err(),
            "reading the file was reported"
        );
        let tmp = dir.path().join("cfg/.servers.json.tmp");
        std::fs::write(&tmp, "{}").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        expect_one(&rx, "a rename over it");
        std::fs::remove_file(&path).unwrap();
        expect_one(&rx, "removal");

        std::fs::write(dir.path().join("cfg/policy.json"), "{}").unwrap();
        assert!(
            rx.recv_timeout(DEBOUNCE * 4).is_err(),
            "another file's change was reported"
        );
    }
}

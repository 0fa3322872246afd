//! Where Taskdeck keeps its files. Data (the SQLite store) goes under the XDG data dir
//! (`$XDG_DATA_HOME/taskdeck`, usually `~/.local/share/taskdeck`), configuration (the admin
//! token file) under the XDG config dir (`~/.config/taskdeck`). `--data-dir`/`TASKDECK_DATA_DIR`
//! and `--config-dir`/`TASKDECK_CONFIG_DIR` override them. Both are made absolute (from the
//! working dir when given relative), so every message names a file wherever it is read.

use std::path::{Path, PathBuf};

use directories::ProjectDirs;

/// The data directory: `explicit` if given, else the XDG data dir, else `./taskdeck-data`.
pub fn data_dir(explicit: Option<PathBuf>) -> PathBuf {
    resolved(explicit, ProjectDirs::data_dir, "taskdeck-data")
}

/// The config directory: `explicit` if given, else the XDG config dir, else `./taskdeck-config`.
pub fn config_dir(explicit: Option<PathBuf>) -> PathBuf {
    resolved(explicit, ProjectDirs::config_dir, "taskdeck-config")
}

/// `explicit`, else Taskdeck's `xdg` dir, else `fallback` in the working dir; absolute (from
/// the working dir when relative; as it is when that cannot be told).
fn resolved(explicit: Option<PathBuf>, xdg: fn(&ProjectDirs) -> &Path, fallback: &str) -> PathBuf {
    let dir = explicit
        .or_else(|| ProjectDirs::from("", "", "taskdeck").map(|d| xdg(&d).to_path_buf()))
        .unwrap_or_else(|| PathBuf::from(fallback));
    std::path::absolute(&dir).unwrap_or(dir)
}

/// The SQLite file inside `data_dir`.
pub fn database(data_dir: &Path) -> PathBuf {
    data_dir.join("taskdeck.sqlite3")
}

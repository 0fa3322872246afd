//! Checking a store file for damage (SQLite's `quick_check` and `integrity_check`) and the
//! message that refuses a damaged one at start.
//!
//! Why three depths: `PRAGMA quick_check` reads every page, so its cost grows with the store
//! (measured here: 0.2-0.3 s with 100,000 tasks, 0.9-1.0 s with 1,000,000 tasks, an 800 MiB
//! file); `integrity_check` also compares every index with its table (10 s at 1,000,000). Start
//! cannot pay a second at 1,000,000 (the cold-start target is 500 ms), so it runs the quick
//! check when the file is small or the last run did not stop cleanly, and the light check
//! otherwise; `taskdeck doctor` runs the quick or the full one (docs/operations.md).

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use rusqlite::{Connection, OpenFlags};

use crate::EngineError;

/// How thoroughly [`check_file`] reads a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckDepth {
    /// The header, the schema and the small tables (`meta`, `tokens`, `task_counts`):
    /// milliseconds at any size, but blind to damage in the task pages.
    Light,
    /// `PRAGMA quick_check`: every page and b-tree, without matching indexes to their tables.
    Quick,
    /// `PRAGMA integrity_check`: also every index entry against its row (about 10x the quick one).
    Full,
}

/// Store files at most this large get the quick check at every start (about 0.15 s here);
/// larger ones only after a run that did not stop cleanly.
pub const START_QUICK_CHECK_MAX_BYTES: u64 = 128 * 1024 * 1024;

/// Errors listed per check at most.
const MAX_PROBLEMS: usize = 10;

/// What [`check_file`] found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// SQLite's own words for each problem found (at most 10); empty when the file is sound.
    pub problems: Vec<String>,
    /// Size of the database file, in bytes (its -wal not included).
    pub bytes: u64,
    /// How long the check took.
    pub elapsed: Duration,
}

/// Checks the SQLite file at `path` to `depth`, on a read-only connection (safe while
/// Taskdeck runs: WAL readers block no one). Damage SQLite reports while opening or reading
/// (SQLITE_CORRUPT, SQLITE_NOTADB) is a problem in the report, not an error.
///
/// Errors: [`EngineError::Store`] when the file is missing or cannot be opened for another
/// reason (permissions, I/O).
pub fn check_file(path: &Path, depth: CheckDepth) -> Result<CheckReport, EngineError> {
    let started = Instant::now();
    let bytes = std::fs::metadata(path)
        .map_err(|e| EngineError::Store(format!("{}: {e}", path.display())))?
        .len();
    let problems = match run_check(path, depth) {
        Ok(problems) => problems,
        Err(e) if is_damage(&e) => vec![e.to_string()],
        Err(e) => return Err(EngineError::Store(format!("{}: {e}", path.display()))),
    };
    Ok(CheckReport {
        problems,
        bytes,
        elapsed: started.elapsed(),
    })
}

/// Opens `path` read-only and returns the problems the `depth` check lists.
fn run_check(path: &Path, depth: CheckDepth) -> rusqlite::Result<Vec<String>> {
    let conn = open_read_only(path)?;
    // Reads the header and parses the whole schema: NOTADB or CORRUPT when they are damaged.
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    })?;
    let pragmas: Vec<String> = match depth {
        CheckDepth::Light => ["meta", "tokens", "task_counts"]
            .into_iter()
            .filter(|t| table_exists(&conn, t).unwrap_or(false))
            .map(|t| format!("PRAGMA quick_check({t})"))
            .collect(),
        CheckDepth::Quick => vec![format!("PRAGMA quick_check({MAX_PROBLEMS})")],
        CheckDepth::Full => vec![format!("PRAGMA integrity_check({MAX_PROBLEMS})")],
    };
    let mut problems = Vec::new();
    for pragma in pragmas {
        let mut stmt = conn.prepare(&pragma)?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        for row in rows {
            let row = row?;
            if row != "ok" && problems.len() < MAX_PROBLEMS {
                problems.push(row);
            }
        }
    }
    Ok(problems)
}

/// A read-only connection to `path` that does not create it, and leaves its log files at close
/// ([`super::connection::keep_wal_files`]).
pub(crate) fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(5))?;
    // Like every connection to a store: its log files stay when it closes last.
    super::connection::keep_wal_files(&conn, c"main");
    Ok(conn)
}

fn table_exists(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1")?
        .exists([table])
}

/// True for the errors by which SQLite says a file is damaged.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// Why start refuses the store.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StartCheckError {
    /// The check found damage; the message is the one paragraph that says what to do.
    #[error(
        "the task store {path} is damaged ({first}), so Taskdeck does not start on it. Restore \
         it from a backup (stop Taskdeck, then `taskdeck restore BACKUP`, or copy the backup \
         over this file and remove its -wal and -shm files), or run `taskdeck doctor` to see \
         every problem; moving the file aside (with its -wal and -shm) starts an empty store. \
         See docs/operations.md.",
        path = path.display(),
        first = problems.first().map(String::as_str).unwrap_or("unreadable"),
    )]
    Damaged {
        /// The store file.
        path: PathBuf,
        /// What the check found (at least one).
        problems: Vec<String>,
    },
    /// The file could not be checked (permissions, I/O).
    #[error("cannot check the task store: {0}")]
    Unreadable(EngineError),
}

/// The depth start uses for a store file of `bytes` bytes: [`CheckDepth::Quick`] when it is
/// at most [`START_QUICK_CHECK_MAX_BYTES`] or `unclean` (the last run did not stop cleanly),
/// else [`CheckDepth::Light`].
pub fn start_depth(bytes: u64, unclean: bool) -> CheckDepth {
    if unclean || bytes <= START_QUICK_CHECK_MAX_BYTES {
        CheckDepth::Quick
    } else {
        CheckDepth::Light
    }
}

/// What is wrong with the store file in `dir` when it is empty (and has no WAL with frames)
/// although `last_run`, the data dir's lock file as the last Taskdeck left it
/// ([`crate::data_dir_lock::recorded_state`]), says that run stopped cleanly: a run serves
/// only once the store's tables are committed, and a clean stop copies them into the file, so
/// its tasks are gone from it, and opening it would start an empty store without a word.
/// `None` otherwise (a new data dir, a first start that stopped before its tables, a store
/// moved aside: the file is absent).
pub fn emptied_store(dir: &Path, last_run: Option<&str>) -> Option<String> {
    let path = dir.join(super::FILE_NAME);
    let empty = |p: &Path| std::fs::metadata(p).map(|m| m.len() == 0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let clean = last_run.is_some_and(|s| s.starts_with("stopped"));
    (clean && empty(&path).unwrap_or(false) && empty(Path::new(&wal)).unwrap_or(true)).then(|| {
        "the file is empty, but the last Taskdeck on this data dir stopped cleanly with a store \
         in it"
            .to_string()
    })
}

/// The start check of the store file in `dir` to [`start_depth`] (`last_run`: the lock file's
/// content as the last run left it, before this start wrote its own; a run that did not stop
/// cleanly, `running ...`, has the whole store checked); a file that does not exist yet passes
/// (it is created at open), and so does an empty one unless [`emptied_store`] says otherwise.
///
/// Errors: [`StartCheckError::Damaged`] when the check found damage or an emptied store,
/// [`StartCheckError::Unreadable`] when the file could not be checked.
pub fn check_at_start(dir: &Path, last_run: Option<&str>) -> Result<CheckReport, StartCheckError> {
    let unclean = last_run.is_some_and(|s| s.starts_with("running"));
    let path = dir.join(super::FILE_NAME);
    let bytes = match std::fs::metadata(&path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => {
            return Err(StartCheckError::Unreadable(EngineError::Store(format!(
                "{}: {e}",
                path.display()
            ))));
        }
    };
    if let Some(problem) = emptied_store(dir, last_run) {
        return Err(StartCheckError::Damaged {
            path,
            problems: vec![problem],
        });
    }
    if bytes == 0 {
        return Ok(CheckReport {
            problems: Vec::new(),
            bytes,
            elapsed: Duration::ZERO,
        });
    }
    let report =
        check_file(&path, start_depth(bytes, unclean)).map_err(StartCheckError::Unreadable)?;
    if report.problems.is_empty() {
        Ok(report)
    } else {
        Err(StartCheckError::Damaged {
            path,
            problems: report.problems,
        })
    }
}

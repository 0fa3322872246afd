//! Connections to the store file: opening one (busy handler, statement cache, the
//! `td_contains` function), the writer's pragmas, and the pool of read connections.
//!
//! Readers run in WAL mode and never wait for the writer: each sees the last commit.

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex, OnceLock},
    thread,
};

use rusqlite::{Connection, params};

use super::Durability;
use crate::{EngineError, search};

/// Opens the writer's connection to `path`: WAL mode, `synchronous` per `durability`, memory
/// for temporary b-trees, a 4 MiB page cache, and no automatic checkpoints (the checkpoint
/// thread runs them, [`super::checkpoint`]). Errors: [`EngineError::Store`].
pub(super) fn open_writer(path: &Path, durability: Durability) -> Result<Connection, EngineError> {
    let conn = open_conn(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(
        None,
        "synchronous",
        match durability {
            Durability::Process => "NORMAL",
            Durability::Power => "FULL",
        },
    )?;
    // Temporary b-trees stay in memory. The writer keeps up to 4 MiB of pages cached (the
    // readers keep SQLite's default 2 MiB each): its writes touch the ends of the b-trees,
    // and every commit walks the page cache's hash table, so a larger cache (32 MiB) made
    // each commit slower (BENCHMARKS.md).
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.pragma_update(None, "cache_size", -4_096)?;
    // Checkpoints (copying the WAL back into the database, with fsyncs) run on their own
    // thread so the writer never stalls on them; the writer asks for a pass each time its
    // commits have added `PASS_EVERY_FRAMES` frames to the WAL (checkpoint.rs).
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
    Ok(conn)
}

/// Bytes past which a reset WAL file is truncated back to this size (`journal_size_limit`).
/// The WAL is reset at half this size ([`super::checkpoint::WAL_RESET_FRAMES`]), so it reaches
/// it only when resets were held off (by readers that never paused).
pub(super) const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// The search index file attached to read connections as `search`, and its health.
pub(super) type SearchIndex = (PathBuf, Arc<search::IndexHealth>);

/// Idle read-only connections, reused by [`super::Store::read`]; at most [`Self::KEPT`] are kept.
pub(super) struct ReaderPool {
    path: PathBuf,
    /// The search index, once it is open (at start, or later: [`Self::index_ready`]).
    search: OnceLock<SearchIndex>,
    /// Idle connections, each with whether it has the index attached.
    idle: Mutex<Vec<(Connection, bool)>>,
}

impl ReaderPool {
    /// Idle connections kept for reuse; more may be open while many reads run at once.
    const KEPT: usize = 16;

    /// An empty pool of connections to `path`, each with `search` attached when given.
    pub(super) fn new(path: PathBuf, search: Option<SearchIndex>) -> ReaderPool {
        let slot = OnceLock::new();
        if let Some(index) = search {
            let _ = slot.set(index);
        }
        ReaderPool {
            path,
            search: slot,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// The index opened after the pool was made (it could not be at start, e.g. on a full
    /// disk): connections opened from now on attach it, and idle ones without it are closed.
    pub(super) fn index_ready(&self, index: SearchIndex) {
        if self.search.set(index).is_ok() {
            self.idle.lock().unwrap().retain(|(_, attached)| *attached);
        }
    }

    /// The index, while it is open and not found damaged.
    fn usable_index(&self) -> Option<&SearchIndex> {
        self.search.get().filter(|(_, h)| !h.is_damaged())
    }

    /// Whether searches may use the index: read connections have it attached and it was not
    /// found damaged.
    pub(super) fn has_search(&self) -> bool {
        self.usable_index().is_some()
    }

    /// A search failed with the index (`error`) and succeeded without it: the index is checked
    /// (at most once a minute) and marked damaged when the check finds it so; else the failure
    /// is only logged.
    pub(super) fn search_failed(&self, error: &EngineError) {
        let Some((_, health)) = self.search.get() else {
            return;
        };
        let damaged = health.may_check()
            && self
                .with(|c| Ok(search::is_damaged(c, "search", false)))
                .unwrap_or(false);
        if damaged {
            health.mark_damaged(error);
        } else {
            tracing::warn!("a search failed with the index ({error}); answered without it");
        }
    }

    /// Runs `f` on an idle connection (opened if none is idle) and keeps it for the next read.
    pub(super) fn with<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let idle = self.idle.lock().unwrap().pop();
        // Pooled connections all have the index attached while it is open (those opened before
        // it was are dropped: idle ones by `index_ready`, busy ones here when their read ends):
        // a new one that could not attach it serves this read only.
        let mut keep = true;
        let mut attached = false;
        let conn = match idle {
            Some((c, had)) => {
                attached = had;
                c
            }
            None => {
                let c = open_conn(&self.path)?;
                if let Some((index, health)) = self.usable_index() {
                    match c.execute(
                        "ATTACH DATABASE ?1 AS search",
                        params![index.to_string_lossy()],
                    ) {
                        Ok(_) => {
                            attached = true;
                            keep_wal_files(&c, c"search");
                            if let Err(e) = c.pragma_update(
                                Some("search"),
                                "journal_size_limit",
                                search::WAL_SIZE_LIMIT,
                            ) {
                                tracing::warn!("search index: {e}");
                            }
                        }
                        Err(e) => {
                            keep = false;
                            Self::attach_failed(health, e);
                        }
                    }
                }
                c
            }
        };
        let r = f(&conn);
        // One without the index, once the index is open (it was in use as `index_ready` ran),
        // is not kept: searches on pooled connections rely on the index being attached.
        let stale = !attached && self.search.get().is_some();
        let mut idle = self.idle.lock().unwrap();
        if keep && !stale && idle.len() < Self::KEPT {
            idle.push((conn, attached));
        }
        r
    }

    /// A new connection could not attach the index (`e`).
    fn attach_failed(health: &search::IndexHealth, e: rusqlite::Error) {
        // The store's reads do not need the index: this connection goes without it (searches
        // on it fall back to a scan), and one too damaged to attach is marked for a rebuild at
        // the next start.
        let damaged = matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        );
        if damaged {
            health.mark_damaged(&e.into());
        } else {
            tracing::warn!("store: cannot attach the search index: {e}");
        }
    }
}

/// Creates `path` if needed, readable and writable by the user alone (0600): tasks carry agents'
/// arguments and results. SQLite gives a database's -wal and -shm files its permissions.
pub(crate) fn create_private_file(path: &Path) -> Result<(), EngineError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .and_then(|_| std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)))
        .map_err(|e| EngineError::Store(format!("cannot create {}: {e}", path.display())))
}

/// Makes `conn` keep the -wal and -shm files of its database `schema` (`"main"`, or an attached
/// one's name) when it is the last connection to close (SQLite's `SQLITE_FCNTL_PERSIST_WAL`):
/// the log is emptied instead of deleted, when the connection has a `journal_size_limit` (it
/// stays as it is otherwise). A start on a full disk can open a store (or index) only when they
/// are there, since making them needs room, so every stop must leave them, whichever
/// connection closes last. A failure (SQLite's code) is logged: the files may then go at close,
/// as SQLite does by default.
pub(crate) fn keep_wal_files(conn: &Connection, schema: &std::ffi::CStr) {
    let mut on: std::ffi::c_int = 1;
    // SAFETY: `conn.handle()` is this open connection's handle, used only for the call;
    // SQLITE_FCNTL_PERSIST_WAL reads one int through the pointer (writing it only when it is
    // negative), which points to `on` for the whole call; `schema` is NUL-terminated.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            schema.as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&raw mut on).cast(),
        )
    };
    if rc != rusqlite::ffi::SQLITE_OK {
        tracing::warn!(
            "cannot keep the log files of {} at close: SQLite error {rc}",
            schema.to_string_lossy()
        );
    }
}

/// A connection to the store file with the busy handler, a statement cache, `td_contains`
/// registered and its log files kept at close ([`keep_wal_files`]). Errors:
/// [`EngineError::Store`].
pub(super) fn open_conn(path: &Path) -> Result<Connection, EngineError> {
    let conn = Connection::open(path)?;
    keep_wal_files(&conn, c"main");
    // A kept log is emptied at close only by a connection with a size limit (any).
    conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
    conn.busy_handler(Some(wait_for_lock))?;
    conn.set_prepared_statement_cache_capacity(64);
    register_contains(&conn)?;
    Ok(conn)
}

/// How long a connection waits for a lock another connection holds before its statement fails
/// with SQLITE_BUSY.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long it sleeps between two tries.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_micros(200);

/// The busy handler of every connection: retries every 200 µs, for up to 10 s. SQLite's own
/// (`busy_timeout`) sleeps 1, 2, 5, 10, 15, 20, 25... ms between tries: when the checkpoint
/// thread's RESTART checkpoint (which holds off new writers while it waits) waited on the
/// writer's lock that way, every waiting write stalled for 15-25 ms (BENCHMARKS.md).
pub(super) fn wait_for_lock(tries: i32) -> bool {
    if LOCK_RETRY * u32::try_from(tries).unwrap_or(u32::MAX) >= LOCK_WAIT {
        return false;
    }
    thread::sleep(LOCK_RETRY);
    true
}

/// Registers `td_contains(text, needle)`: 1 when [`search::fold_case`]`(text)` contains
/// `needle` (given folded), 0 otherwise or when `text` is NULL. Free-text queries with
/// letters beyond ASCII use it: SQLite's `LIKE` folds only ASCII, so "über" would not find
/// "Über" (the search index and the UI's live matching fold all letters).
fn register_contains(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "td_contains",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let (Ok(text), Ok(needle)) = (ctx.get_raw(0).as_str(), ctx.get_raw(1).as_str()) else {
                return Ok(false);
            };
            Ok(search::fold_case(text).contains(needle))
        },
    )
}

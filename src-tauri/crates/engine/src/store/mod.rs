//! The durable store: one SQLite file (WAL mode) holding tasks, their input rounds, their
//! timeline events, and the bearer tokens of the principals.
//!
//! Writes go through one writer thread that groups every write waiting in its queue into a
//! single transaction (group commit, `writer`): a caller's write is acknowledged only after
//! the commit that contains it, so "returned" always means "on disk". A write checks before it
//! changes anything, so a failing write leaves nothing behind and never takes its neighbours
//! down. Reads use a small pool of read-only connections (`connection`) and never wait for
//! the writer (WAL readers see the last commit).
//!
//! Parts: `schema` (tables, migrations), `connection` (opening, pragmas, readers),
//! `writer` and `checkpoint` (the threads), `write_context` (what a write sees),
//! `tasks`, `lists`, `events`, `input_requests`, `tokens` (the tables' queries), `audit` (the
//! decision log), `answers` (the cached `tasks/get` answers), and for operations `integrity`
//! (damage checks), `inspect` (a read-only look from another process), `backup` (online
//! backups, restore) and `disk_space` (the file system's free space).

mod answers;
mod audit;
pub mod backup;
mod checkpoint;
mod connection;
pub mod disk_space;
mod events;
mod input_requests;
mod inspect;
pub mod integrity;
mod lists;
mod schema;
mod tasks;
mod tokens;
mod write_context;
mod writer;

#[cfg(test)]
mod tests;

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use rusqlite::Connection;
use serde_json::Value;
use tokio::sync::oneshot;

pub(crate) use audit::{append_audit, prune_audit};
pub(crate) use connection::create_private_file;
pub(crate) use connection::keep_wal_files;
pub use events::{cancel_reason, created_ttl};
pub use input_requests::{
    answer_input, input_human_only, input_key, insert_input, outstanding_inputs, supersede_inputs,
};
pub use inspect::StoreFile;
pub use lists::{ListFilter, Page};
pub(crate) use tasks::set_arguments;
pub use tokens::TokenRow;
pub use write_context::{DELETED_EVENTS_KEPT_MS, WriteCtx};

use crate::{EngineError, answer_cache::AnswerCache, feed::ChangeFeed, search};

/// Opens the search index in `dir` ([`search::open`]) and starts its indexer on the store at
/// `path`, fed by `feed`; returns the index for read connections to attach. An index the
/// indexer finds damaged is marked for a rebuild at the next start. Errors: why the index
/// cannot be used now.
fn open_search(
    dir: &Path,
    path: &Path,
    feed: &ChangeFeed,
) -> Result<connection::SearchIndex, EngineError> {
    let index = search::open(dir)?;
    let health = Arc::new(search::IndexHealth::new(index.clone()));
    search::spawn_indexer(
        index.clone(),
        path.to_path_buf(),
        feed.subscribe_ids(),
        health.clone(),
    )
    .inspect_err(|e| {
        // A damaged index is rebuilt at the next start, not left unused for good.
        health.mark_if_damaged(e);
    })?;
    Ok((index, health))
}

/// `value` as compact JSON text, for a TEXT column. `serde_json::to_string` writes straight
/// into one growing buffer; `Value`'s `Display` (`value.to_string()`) makes the same text
/// through `fmt::Formatter`, a call per token, which the writer thread felt at the creation peak.
fn json_text(value: &serde_json::Value) -> String {
    // A `Value` always serializes: its map keys are strings.
    serde_json::to_string(value).unwrap_or_default()
}

/// How hard each commit is pushed to disk (SQLite `PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=NORMAL` in WAL mode: every commit survives a crash of the process
    /// (SIGKILL, panic); the last commits may be lost if the machine loses power.
    Process,
    /// `synchronous=FULL`: every commit is fsynced before it is acknowledged; survives power loss.
    Power,
}

/// Handle to the store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    state: Arc<StoreState>,
}

/// What every handle of one open store shares.
struct StoreState {
    path: PathBuf,
    writer: writer::Writer,
    readers: connection::ReaderPool,
    feed: ChangeFeed,
    /// Recent `tasks/get` answers; the writer invalidates what each commit changed.
    answers: Arc<AnswerCache>,
    /// See [`Store::cursor_key`].
    cursor_key: [u8; 32],
}

/// Bytes of `tasks/get` answers kept in memory ([`AnswerCache`]): a few thousand polled tasks.
const ANSWER_CACHE_BYTES: usize = 4 * 1024 * 1024;

/// Name of the store file in its directory.
const FILE_NAME: &str = "taskdeck.sqlite3";

impl Store {
    /// Opens (creating if needed) `dir/taskdeck.sqlite3` with its search index, and starts the
    /// writer thread, publishing committed changes on `feed`. An index that cannot be opened is
    /// done without (searches scan every task); on a full disk it is opened once there is room
    /// ([`Self::open_search_when_room`]).
    ///
    /// Errors: [`EngineError::Store`] when the directory or the database cannot be opened
    /// (on a full disk too: SQLite reports the log files it cannot make as I/O errors).
    pub fn open(
        dir: &Path,
        durability: Durability,
        feed: ChangeFeed,
    ) -> Result<Store, EngineError> {
        let path = Self::create_file(dir)?;
        let prepared = Prepared::open(&path, durability)?;
        // After the tables exist: the indexer starts by reading the events it has not seen.
        let search = match open_search(dir, &path, &feed) {
            Ok(index) => Some(index),
            Err(e) => {
                tracing::warn!("search index unavailable, searches scan every task: {e}");
                None
            }
        };
        let missing = search.is_none();
        let store = Self::start(prepared, path, feed, search)?;
        if missing && store.disk_full().borrow().is_some() {
            store.open_search_when_room(dir);
        }
        Ok(store)
    }

    /// The search index could not be opened at start on a full disk (its log and shared
    /// memory files need room): opens it, and starts its indexer, once the writer finds room
    /// again, from a thread that waits for that (`taskdeck-idxwt`; it ends with the store).
    /// Searches scan every task until then. Tried again each time the disk fills and frees.
    fn open_search_when_room(&self, dir: &Path) {
        let mut room = self.disk_full();
        let state = Arc::downgrade(&self.state);
        let dir = dir.to_path_buf();
        let waits = move || {
            use futures::executor::block_on;
            // `Err`: the writer, and with it the store, is gone.
            while block_on(room.wait_for(Option::is_none)).is_ok() {
                let Some(state) = state.upgrade() else {
                    return;
                };
                match open_search(&dir, &state.path, &state.feed) {
                    Ok(index) => {
                        tracing::info!("search index opened now that the disk has room");
                        state.readers.index_ready(index);
                        return;
                    }
                    Err(e) => tracing::warn!("search index still unavailable: {e}"),
                }
                drop(state);
                if block_on(room.wait_for(Option::is_some)).is_err() {
                    return;
                }
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("taskdeck-idxwt".into())
            .spawn(waits)
        {
            tracing::warn!("cannot wait to open the search index: {e}");
        }
    }

    /// Opens the store in `dir` like [`Self::open`], but without the search index and its
    /// indexer thread, and with a feed no one listens to: for a short-lived process that only
    /// manages tokens (`taskdeck token ...`) next to a server that may be running.
    ///
    /// Errors: [`EngineError::Store`] when the directory or the database cannot be opened, or
    /// the store file is empty where the last run stopped cleanly with a store in it
    /// ([`integrity::emptied_store`]).
    pub fn open_for_tokens(dir: &Path) -> Result<Store, EngineError> {
        // Not through `serve`'s start check: an emptied store must not get new tables here
        // either, after which a start would take it for a new one.
        let last_run = crate::data_dir_lock::recorded_state(dir);
        if let Some(problem) = integrity::emptied_store(dir, last_run.as_deref()) {
            return Err(EngineError::Store(format!(
                "the task store in {} is not used: {problem}; restore it from a backup, or \
                 move the empty file aside (docs/operations.md)",
                dir.display()
            )));
        }
        let path = Self::create_file(dir)?;
        let prepared = Prepared::open(&path, Durability::Power)?;
        Self::start(prepared, path, ChangeFeed::new(1), None)
    }

    /// The store file of data dir `dir` (`DIR/taskdeck.sqlite3`), there or not.
    pub fn file_in(dir: &Path) -> PathBuf {
        dir.join(FILE_NAME)
    }

    /// Creates `dir` and the store file (0600) in it; returns the file's path.
    fn create_file(dir: &Path) -> Result<PathBuf, EngineError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| EngineError::Store(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join(FILE_NAME);
        create_private_file(&path)?;
        Ok(path)
    }

    /// Starts the writer on the prepared store file at `path`; reads attach `search` (the
    /// index file and what its indexer found of its health).
    fn start(
        prepared: Prepared,
        path: PathBuf,
        feed: ChangeFeed,
        search: Option<connection::SearchIndex>,
    ) -> Result<Store, EngineError> {
        let Prepared { conn, cursor_key } = prepared;
        let answers = Arc::new(AnswerCache::new(ANSWER_CACHE_BYTES));
        let writer = writer::spawn(conn, &path, feed.clone(), answers.clone())?;
        Ok(Store {
            state: Arc::new(StoreState {
                readers: connection::ReaderPool::new(path.clone(), search),
                path,
                writer,
                feed,
                answers,
                cursor_key,
            }),
        })
    }

    /// Since when (ms since the Unix epoch) the disk holding the store is full, or `None`: set
    /// when a write fails for it ([`EngineError::DiskFull`]) or when the store is opened with
    /// less than 256 KiB free ([`disk_space::SPACE_FOR_WRITES`]; writes that need a new block
    /// are refused then), cleared once the file system has 256 KiB free again (checked every
    /// 2 s meanwhile), so a watcher learns of both without writing anything itself.
    pub fn disk_full(&self) -> tokio::sync::watch::Receiver<Option<i64>> {
        self.state.writer.disk_full()
    }

    /// Path of the SQLite file.
    pub fn path(&self) -> &Path {
        &self.state.path
    }

    /// The feed on which committed writes are published.
    pub fn feed(&self) -> &ChangeFeed {
        &self.state.feed
    }

    /// 32 random bytes made with the store and kept in it (`meta.cursor_key`): the key of the
    /// MACs that bind the list cursors handed out, so that a cursor outlives a restart but no
    /// one can make one up.
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.state.cursor_key
    }

    /// Runs `f` inside the next group commit and returns its result once that commit is durable.
    ///
    /// Contract: `f` does every check that can fail before its first change, so an `Err` leaves
    /// the database as it found it; nothing it queued is published. (There is no savepoint per
    /// write: they cost a page copy per touched page, measured in BENCHMARKS.md.) If `f` fails
    /// after changing rows, the whole group is rolled back and every write in it gets an error.
    ///
    /// Errors: `f`'s own error; [`EngineError::DiskFull`] when the file system is full (the
    /// write was not made; later writes succeed once there is space); [`EngineError::Store`]
    /// when the commit fails otherwise or the writer stopped.
    pub async fn write<R, F>(&self, f: F) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<R, EngineError> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.state.writer.send(writer::queued(f, tx))?;
        rx.await
            .map_err(|_| EngineError::Store("store writer stopped".into()))?
    }

    /// Queues `f` to run in a coming group commit without waiting for it: for reports nobody
    /// waits on (a running tool's progress), which the writer may hold back for up to 50 ms
    /// to commit them with other writes, so that a chatty task costs one commit per 50 ms, not
    /// one per report. Its change is published, like any other, once committed. Lost if the
    /// process dies before that commit. `f` follows [`Store::write`]'s contract; its failure
    /// (or its group's) is logged as a warning. Errors: [`EngineError::Store`] when the writer
    /// stopped.
    pub fn write_unhurried<F>(&self, f: F) -> Result<(), EngineError>
    where
        F: FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send + 'static,
    {
        self.state
            .writer
            .send_unhurried(writer::queued_unhurried(f))
    }

    /// How many unhurried writes woke the writer so far (the others joined a queue it was
    /// already told of).
    #[cfg(test)]
    fn unhurried_wakes(&self) -> usize {
        self.state.writer.unhurried_wakes()
    }

    /// Returns once every write queued before this call is committed or has failed, the
    /// unhurried ones ([`Store::write_unhurried`]) included: for a clean stop, before the log
    /// is emptied. Errors: [`EngineError::Store`] when the writer stopped or the commit failed.
    pub async fn flush(&self) -> Result<(), EngineError> {
        self.write(|_| Ok(())).await
    }

    /// Runs `f` on a pooled read connection. Each of its statements sees the last commit when
    /// it runs, so two statements may see different commits: reads whose statements must
    /// agree use [`Store::read_snapshot`]. Blocking; keep it short or call it from
    /// `spawn_blocking`.
    pub fn read<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.state.readers.with(f)
    }

    /// [`Store::read`] with every statement of `f` seeing the same commit (one read
    /// transaction, [`in_one_snapshot`]). Keep it short: while it lasts, the log cannot be
    /// reset past its snapshot.
    pub fn read_snapshot<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        self.state.readers.with(|c| in_one_snapshot(c, f))
    }

    /// Copies the whole write-ahead log into the store file and empties it (a `TRUNCATE`
    /// checkpoint), for a clean stop: the WAL otherwise stays on disk at up to 64 MiB
    /// (`journal_size_limit`) after a busy run. Returns false when a reader or writer still
    /// held the log for a whole second (the checkpoint thread or the search indexer may be in
    /// the middle of a read; nothing is lost then: the log stays, as after any stop). Errors:
    /// [`EngineError::Store`].
    pub fn truncate_wal(&self) -> Result<bool, EngineError> {
        for _ in 0..20 {
            let busy: i64 = self
                .read(|c| Ok(c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?))?;
            if busy == 0 {
                return Ok(true);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Ok(false)
    }
}

/// A store file with its tables in place, before its writer starts.
struct Prepared {
    /// The writer's connection.
    conn: Connection,
    /// See [`Store::cursor_key`].
    cursor_key: [u8; 32],
}

impl Prepared {
    /// Opens the writer's connection to `path` and creates or migrates the tables.
    fn open(path: &Path, durability: Durability) -> Result<Prepared, EngineError> {
        let conn = connection::open_writer(path, durability)?;
        let cursor_key = schema::prepare(&conn)?;
        Ok(Prepared { conn, cursor_key })
    }
}

/// Decodes JSON text as stored; `null` for text that is not JSON (never written by the store).
fn parse_json(s: String) -> Value {
    serde_json::from_str(&s).unwrap_or(Value::Null)
}

/// Runs `f` with every statement it runs on `c` seeing one commit: inside the transaction `c`
/// is already in (a write's), else in a deferred read transaction of its own, whose snapshot
/// is taken by its first statement and ended (whatever `f` returned) before this returns.
/// Errors: `f`'s, or [`EngineError::Store`].
pub(super) fn in_one_snapshot<R>(
    c: &Connection,
    f: impl FnOnce(&Connection) -> Result<R, EngineError>,
) -> Result<R, EngineError> {
    if !c.is_autocommit() {
        return f(c);
    }
    // Dropped on `f`'s error: rolled back, which for a read only ends the snapshot.
    let snapshot = c.unchecked_transaction()?;
    let out = f(&snapshot)?;
    snapshot.finish()?;
    Ok(out)
}

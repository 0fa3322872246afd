//! The free-text search index: an SQLite FTS5 table (trigram tokenizer) in its own file,
//! `search.sqlite3` next to the store, written by a thread in Linux's lowest scheduling class
//! (`SCHED_IDLE`, `taskdeck-index`: it yields the core to any thread that wakes, and gets a
//! sliver of a busy core) from what a thread at normal priority (`taskdeck-search`) reads from
//! the store for it; the reading one holds no read transaction while the writing one waits for
//! CPU.
//!
//! Why its own file and threads: durable creation must not pay for search. The store's writer
//! never touches the index; the indexer follows the store's timeline instead. Every change to
//! a task appends an event with a global, increasing id, so the indexer reads the events after
//! the last id it indexed, re-indexes the settled tasks they name (their tool, arguments,
//! status message, result and taskId) and stores the new last id in the same transaction.
//! A task still `working` or `input_required` is not indexed: its status message changes with
//! every progress report, and re-indexing it each time was most of the indexer's work under a
//! fleet's load (BENCHMARKS.md). Searches take every live task as a candidate instead (there
//! are few: the work in flight), and the indexer indexes a task once, when it settles.
//!
//! Searches stay exact while the index lags (after a burst of writes, or while the CPU is
//! busy): [`Store::page`](super::store::Store::page) takes its candidates from the index (tasks
//! holding all the query's trigrams), the tasks with more text than the index holds
//! (`long_tasks`), every live task and every task with an event the index has not seen yet,
//! then applies the exact `LIKE` test to them. The index only narrows; it never decides. A
//! settled task's text no longer changes, so once its last event is indexed its entry is
//! exact; a task with an entry from before it settled (or from an older version) holds
//! trigrams of older text as well, which only adds candidates.
//!
//! The index can always be rebuilt from the store: a missing, unreadable or older-version file,
//! or one a run found damaged ([`IndexHealth`]), is replaced by an empty one, and one built
//! from another store (or from a later state of this one, before a backup was restored) is
//! emptied; both fill again from the first event.
//! `meta` holds `event_id` (the last event indexed, an integer) and `store_id` (text) in its
//! `value` column, which has no type affinity so that each keeps its own type (version 3
//! declared it INTEGER, which would have turned a store_id of digits into a number).

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    thread,
    time::Duration,
};

use rusqlite::{Connection, OptionalExtension, params, types::ValueRef};
use tokio::sync::broadcast::{self, error::TryRecvError};

use super::EngineError;
use crate::store::keep_wal_files;

/// File name of the index, in the store's directory.
pub const FILE_NAME: &str = "search.sqlite3";

/// Schema version; a file with another version is rebuilt.
const VERSION: i64 = 5;

/// Text indexed per task, in bytes (cut at a character boundary). A task with more text is
/// listed in `long_tasks` and is a candidate for every query, so searches stay exact.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Most events one indexing pass reads. FTS5 writes a new segment per transaction and merges
/// segments as they pile up, so a pass's cost per task falls with its size: at 10,000 tasks
/// created a second, the index thread took 36 µs of CPU a task in passes of 100 events and 27
/// µs in passes of up to 2,000 (BENCHMARKS.md, "The search indexer's passes").
const MAX_PASS_EVENTS: usize = 2_000;

/// Most bytes of task fields one pass holds (the last task read may pass it), which bounds what
/// a pass holds whatever the tasks' sizes: a result has no size limit, and a task's fields are
/// each cut to [`MAX_RAW_FIELD_BYTES`] only. (SQLite itself still loads one whole value at a
/// time while it is read.)
const MAX_PASS_BYTES: usize = 4 << 20;

/// How long the indexer lets changes gather after the first one wakes it, so that a fleet's
/// trickle of changes is indexed in passes of many tasks. Searches stay exact meanwhile: a task
/// with an event the index has not seen is a candidate of every search.
const GATHER: Duration = Duration::from_millis(100);

/// Queries need this many consecutive characters that are not `LIKE` wildcards to use the
/// index (the trigram tokenizer's unit); shorter ones scan the tasks.
pub const MIN_INDEXED_QUERY: usize = 3;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value NOT NULL);
CREATE TABLE IF NOT EXISTS long_tasks(seq INTEGER PRIMARY KEY);
CREATE VIRTUAL TABLE IF NOT EXISTS task_text USING fts5(text, tokenize = 'trigram', detail = 'none',
  content = '', contentless_delete = 1);
";

/// Opens (creating or rebuilding if needed) the index in `dir` and returns its path. An index
/// the last run found damaged (its marker, see [`IndexHealth`]) or that cannot be opened is
/// replaced by an empty one, which the indexer fills from the store.
///
/// Errors: [`EngineError::Store`] when the file cannot be created even after removing it.
pub fn open(dir: &Path) -> Result<PathBuf, EngineError> {
    let path = dir.join(FILE_NAME);
    let marker = damaged_marker(&path);
    let problem = match std::fs::read_to_string(&marker) {
        Ok(found) => Err(PrepareError::Damaged(found.trim().to_string())),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(PrepareError::Damaged(format!(
            "its marker cannot be read: {e}"
        ))),
        Err(_) => prepare(&path),
    };
    match problem {
        Ok(()) => Ok(path),
        // Replacing the file would not help (and would lose a sound index): a full disk, a
        // file that cannot be opened for lack of rights. Searches scan meanwhile.
        Err(e) if !rebuild_helps(&e) => Err(e.into()),
        Err(e) => {
            tracing::warn!("search index {}: {e}; rebuilding it", path.display());
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            prepare(&path)?;
            // Only once the new file is in place: a start that fails before still rebuilds.
            let _ = std::fs::remove_file(&marker).or_else(|_| std::fs::remove_dir_all(&marker));
            Ok(path)
        }
    }
}

/// What the store's read connections and the indexer share about the index file: whether it
/// was found damaged.
///
/// A damaged index (a page SQLite cannot read) is found by a search that fails with it and
/// succeeds without it, or by an indexing pass that fails where `PRAGMA quick_check` then
/// finds damage. From then on searches go without it (exact, scanning the tasks), the indexer
/// stops writing it, and a marker file next to it (`search.sqlite3.damaged`) has the next
/// start replace it with an empty one that fills again from the store ([`open`]). Replacing
/// it while Taskdeck runs would need every read connection to let go of the old file first:
/// the last connection to close empties (and may remove) the `-wal` of that name, which
/// would be the new file's.
#[derive(Debug)]
pub struct IndexHealth {
    damaged: AtomicBool,
    /// The index file; its marker is this path with `.damaged` appended.
    path: PathBuf,
    /// When a search's failure last had the index checked (ms since the epoch; see
    /// [`Self::may_check`]).
    checked_at_ms: std::sync::atomic::AtomicI64,
}

impl IndexHealth {
    /// The health of the index file at `path`, sound until found otherwise.
    pub fn new(path: PathBuf) -> IndexHealth {
        IndexHealth {
            damaged: AtomicBool::new(false),
            path,
            checked_at_ms: std::sync::atomic::AtomicI64::new(i64::MIN),
        }
    }

    /// Whether a search that failed with the index may have it checked now ([`is_damaged`]
    /// reads all of it): once a minute at most, however many searches fail.
    pub fn may_check(&self) -> bool {
        let now = crate::clock::now_ms();
        let last = self.checked_at_ms.load(Ordering::Acquire);
        now.saturating_sub(last) >= 60_000
            && self
                .checked_at_ms
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// Whether the index was found damaged: searches must not use it.
    pub fn is_damaged(&self) -> bool {
        self.damaged.load(Ordering::Acquire)
    }

    /// Records that the index is damaged (`error`: what showed it) and leaves the marker that
    /// has the next start rebuild it. Logs the first time only.
    pub fn mark_damaged(&self, error: &EngineError) {
        if self.damaged.swap(true, Ordering::AcqRel) {
            return;
        }
        let marker = damaged_marker(&self.path);
        if let Err(e) = std::fs::write(&marker, format!("{error}\n")) {
            tracing::warn!("search index: cannot write {}: {e}", marker.display());
        }
        tracing::warn!(
            "search index {} is damaged ({error}); searching without it (every task is scanned) \
             until the next start, which rebuilds it",
            self.path.display()
        );
    }
}

impl IndexHealth {
    /// After the indexer could not start (`error`): marks the index damaged when a check of
    /// its file finds it so ([`is_damaged`]), so that the next start rebuilds it instead of
    /// going without an index for good. Returns whether it did.
    pub fn mark_if_damaged(&self, error: &EngineError) -> bool {
        let damaged = Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .is_ok_and(|c| {
            keep_wal_files(&c, c"main");
            is_damaged(&c, "main", true)
        });
        if damaged {
            self.mark_damaged(error);
        }
        damaged
    }
}

/// The marker of a damaged index at `index` (see [`IndexHealth`]).
fn damaged_marker(index: &Path) -> PathBuf {
    let mut s = index.as_os_str().to_owned();
    s.push(".damaged");
    PathBuf::from(s)
}

/// Whether opening the index failed in a way a new, empty file mends: the file is not an
/// index (not SQLite, damaged) or was found damaged by the last run. Not a full disk or any
/// other I/O error, which a new file would meet too.
fn rebuild_helps(e: &PrepareError) -> bool {
    match e {
        PrepareError::Damaged(_) => true,
        PrepareError::Sqlite(e) => matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
        ),
        PrepareError::Create(_) => false,
    }
}

/// Why [`prepare`] (or the last run's marker) refused the index file.
#[derive(Debug, thiserror::Error)]
enum PrepareError {
    /// The last run found it damaged ([`IndexHealth`]); what showed it.
    #[error("found damaged by the last run ({0})")]
    Damaged(String),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The file could not be created.
    #[error(transparent)]
    Create(#[from] EngineError),
}

impl From<PrepareError> for EngineError {
    fn from(e: PrepareError) -> EngineError {
        match e {
            PrepareError::Sqlite(e) => e.into(),
            PrepareError::Create(e) => e,
            e @ PrepareError::Damaged(_) => EngineError::Store(e.to_string()),
        }
    }
}

fn prepare(path: &Path) -> Result<(), PrepareError> {
    super::store::create_private_file(path)?;
    let conn = Connection::open(path)?;
    keep_wal_files(&conn, c"main");
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version != VERSION {
        conn.execute_batch("DROP TABLE IF EXISTS task_text; DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS long_tasks;")?;
        conn.execute_batch(SCHEMA)?;
        conn.pragma_update(None, "user_version", VERSION)?;
    }
    conn.query_row("SELECT count(*) FROM meta", [], |r| r.get::<_, i64>(0))?;
    Ok(())
}

/// Starts the indexer's two threads ([`run`] reads the store, [`run_index`] writes the index):
/// they index everything the index has not seen, then wait for the store's changes (`changes`,
/// from [`ChangeFeed::subscribe_ids`](crate::feed::ChangeFeed::subscribe_ids): the indexer
/// reads the changes from the store, the ids only wake it) and index them in passes. Both stop
/// when the feed closes. `health`: shared with the store's read connections; a damaged index
/// is left alone until the next start rebuilds it (see [`IndexHealth`]).
pub fn spawn_indexer(
    index: PathBuf,
    store: PathBuf,
    changes: broadcast::Receiver<i64>,
    health: Arc<IndexHealth>,
) -> Result<(), EngineError> {
    let idx = open_index(&index)?;
    let main = Connection::open_with_flags(
        &store,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    main.busy_timeout(Duration::from_secs(10))?;
    keep_wal_files(&main, c"main");
    // The indexer reads and writes each page about once: a small page cache (1 MiB, as the
    // index's own connection) instead of SQLite's 2 MiB default keeps its memory down.
    main.pragma_update(None, "cache_size", -1_024)?;
    adopt(&idx, &main)?;
    let last = indexed_up_to(&idx)?;
    let (batches_tx, batches) = mpsc::sync_channel(1);
    let (written, written_rx) = mpsc::sync_channel(1);
    thread::Builder::new()
        .name("taskdeck-index".into())
        .spawn(move || run_index(idx, batches, written, health))
        .map_err(|e| EngineError::Store(e.to_string()))?;
    thread::Builder::new()
        .name("taskdeck-search".into())
        .spawn(move || run(main, changes, last, batches_tx, written_rx))
        .map_err(|e| EngineError::Store(e.to_string()))?;
    Ok(())
}

/// Bytes past which the index's reset log file is cut back (`journal_size_limit`); a
/// connection with it also empties a kept log at close (see `keep_wal_files`).
pub(crate) const WAL_SIZE_LIMIT: i64 = 8 << 20;

/// The index thread's connection to the index file at `path` (already [`prepare`]d).
fn open_index(path: &Path) -> Result<Connection, EngineError> {
    let idx = Connection::open(path)?;
    keep_wal_files(&idx, c"main");
    // The index is rebuilt from the store if lost: it need not survive a power cut.
    idx.pragma_update(None, "synchronous", "OFF")?;
    // A merge of a whole level (see [`AUTOMERGE`]) goes through the WAL in one transaction;
    // the file is cut back to this size when the log next starts over instead of staying that
    // large.
    idx.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
    idx.pragma_update(None, "cache_size", -1_024)?;
    if let Err(e) = merge_less_often(&idx) {
        tracing::warn!("search index: cannot set its merge level: {e}");
    }
    Ok(idx)
}

/// FTS5 merges a level's segments into one of the next level once `automerge` of them have
/// piled up (default 4), so each entry is rewritten at every level it climbs. At [`AUTOMERGE`]
/// a task costs about a quarter less to index (27 → 20 µs of CPU at 10,000 tasks created a
/// second), and searches took as long (BENCHMARKS.md, "The search indexer's passes"). Written
/// into the index's own configuration only when it differs, so a start does not write.
fn merge_less_often(idx: &Connection) -> Result<(), EngineError> {
    let now: Option<i64> = idx
        .query_row(
            "SELECT v FROM task_text_config WHERE k = 'automerge'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if now != Some(AUTOMERGE) {
        idx.execute(
            "INSERT INTO task_text(task_text, rank) VALUES ('automerge', ?1)",
            params![AUTOMERGE],
        )?;
    }
    Ok(())
}

/// Segments of one level FTS5 lets pile up before merging them (its `automerge`): the level at
/// which it would merge them anyway (its default `crisismerge`), so most merges are done whole
/// inside the pass that fills a level instead of a little in every pass.
const AUTOMERGE: i64 = 16;

/// Empties the index unless it was built from this store as it is now: same store identity
/// (`meta.store_id` of both files), and no event seen that the store does not have (a store
/// restored from an older backup, or another store's file next to it). Its entries would hide
/// new tasks or name other tasks.
fn adopt(idx: &Connection, main: &Connection) -> Result<(), EngineError> {
    let store_id: String =
        main.query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
            r.get(0)
        })?;
    let newest: i64 = main.query_row("SELECT ifnull(max(id), 0) FROM events", [], |r| r.get(0))?;
    let seen_store: Option<String> = idx
        .query_row("SELECT value FROM meta WHERE key = 'store_id'", [], |r| {
            r.get(0)
        })
        .optional()?;
    let seen_event = indexed_up_to(idx)?;
    if seen_store.as_deref() == Some(store_id.as_str()) && seen_event <= newest {
        return Ok(());
    }
    if seen_store.is_some() || seen_event > 0 {
        tracing::warn!("search index belongs to another state of the store; rebuilding it");
    }
    idx.execute_batch(
        "BEGIN;
         INSERT INTO task_text(task_text) VALUES ('delete-all');
         DELETE FROM long_tasks;
         DELETE FROM meta;",
    )?;
    idx.execute(
        "INSERT INTO meta(key, value) VALUES ('store_id', ?1)",
        params![store_id],
    )?;
    idx.execute_batch("COMMIT;")?;
    Ok(())
}

/// The reading half of the indexer, at normal priority: reads what the index lacks from the
/// store ([`read_batch`]), hands it to the index thread ([`run_index`]) and waits until it is
/// written, then waits for the store's next changes. `last` is the last event indexed.
///
/// Why two threads: a read transaction on the store keeps its WAL from being reset until it
/// ends, and a thread at nice 19 on a saturated core can be left without CPU for hundreds of
/// milliseconds, even in the middle of a short read. Under a creation flood the WAL then grew
/// past its reset point to 136-148 MiB (limit 64 MiB), each reset truncated it, and the
/// writer paid to allocate and zero its blocks again (BENCHMARKS.md, "The indexer's reads
/// taken off nice 19"). The reader only copies the fields; the index thread builds the text.
fn run(
    main: Connection,
    mut changes: broadcast::Receiver<i64>,
    mut last: i64,
    batches: mpsc::SyncSender<Batch>,
    written: mpsc::Receiver<Result<(), EngineError>>,
) {
    // The error of the failing streak of passes, if one is under way: logged once as a
    // warning (a full disk fails a pass every second), its end once.
    let mut failing: Option<String> = None;
    loop {
        let outcome = match read_batch(&main, last) {
            Ok(Some(batch)) => {
                let (newest, more) = (batch.newest, batch.more);
                // The index thread ends only with this one, or if it panicked: stop too.
                if batches.send(batch).is_err() {
                    tracing::warn!("search index: the index thread ended; the index stops here");
                    return;
                }
                match written.recv() {
                    Ok(Ok(())) => {
                        last = newest;
                        Ok(more)
                    }
                    Ok(Err(e)) => Err(e),
                    Err(_) => {
                        tracing::warn!(
                            "search index: the index thread ended; the index stops here"
                        );
                        return;
                    }
                }
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e),
        };
        if outcome.is_ok()
            && let Some(e) = failing.take()
        {
            tracing::info!("search index: indexing again (the passes failed with: {e})");
        }
        match outcome {
            Ok(true) => continue,
            Ok(false) => {}
            Err(e) => {
                let e = e.to_string();
                if failing.as_ref() != Some(&e) {
                    tracing::warn!("search index: {e}; trying again every second");
                } else {
                    tracing::debug!("search index: {e}");
                }
                failing = Some(e);
                // Try again then, not at the next change: on a quiet store there may be none;
                // unless the feed closed meanwhile (the store is gone).
                thread::sleep(Duration::from_secs(1));
                loop {
                    match changes.try_recv() {
                        Ok(_) | Err(TryRecvError::Lagged(_)) => {}
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Closed) => return,
                    }
                }
                continue;
            }
        }
        match changes.blocking_recv() {
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
        thread::sleep(GATHER);
        loop {
            match changes.try_recv() {
                Ok(_) | Err(TryRecvError::Lagged(_)) => {}
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return,
            }
        }
    }
}

/// The writing half of the indexer, in `SCHED_IDLE` ([`crate::priority::idle_this_thread`]:
/// on a busy core it gets a sliver of it, and it yields the core at once to any thread that
/// wakes): writes each [`Batch`] it receives ([`write_batch`]) and answers with the outcome.
/// Holds no connection to the store: only the reading half waits on it, holding no read
/// transaction. Ends when the reading half does.
fn run_index(
    mut idx: Connection,
    batches: mpsc::Receiver<Batch>,
    written: mpsc::SyncSender<Result<(), EngineError>>,
    health: Arc<IndexHealth>,
) {
    crate::priority::idle_this_thread("search index");
    let mut oldest_seq = 0;
    // Whether the index was checked since the last pass that succeeded: a streak of failed
    // passes (one a second) checks it once.
    let mut checked = false;
    for batch in batches {
        // A damaged index is not written: searches go without it until the next start
        // rebuilds it, and a pass that failed on it would fail again every second.
        let outcome = if health.is_damaged() {
            Ok(())
        } else {
            match write_batch(&mut idx, &batch, &mut oldest_seq) {
                Ok(()) => {
                    checked = false;
                    Ok(())
                }
                Err(e) if e.is_disk_full() || std::mem::replace(&mut checked, true) => Err(e),
                Err(e) if is_damaged(&idx, "main", true) => {
                    health.mark_damaged(&e);
                    Ok(())
                }
                Err(e) => Err(e),
            }
        };
        if written.send(outcome).is_err() {
            return;
        }
    }
}

/// Whether the index, open on `conn` as schema `schema` (`main` on the index thread's own
/// connection, `search` where a store connection attached it), is damaged: `PRAGMA
/// quick_check` lists a problem (the b-trees' pages), or, with `fts`, FTS5's own
/// `integrity-check` fails with SQLite's "corrupt" (its segments; it runs as a write, so only
/// on the index thread's connection), or either says the file is not a database. A check that
/// fails for any other reason (a lock, I/O) finds nothing. Reads the whole index: asked only
/// after something failed with it, to tell damage from a passing failure.
pub(crate) fn is_damaged(conn: &Connection, schema: &str, fts: bool) -> bool {
    let damage = |e: &rusqlite::Error| {
        matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
    };
    let checked: rusqlite::Result<Vec<String>> = conn
        .prepare(&format!("PRAGMA {schema}.quick_check(1)"))
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect());
    match checked.as_deref() {
        Ok([ok]) if ok == "ok" => {}
        Ok(_) => return true,
        Err(e) => return damage(e),
    }
    if !fts {
        return false;
    }
    match conn.execute(
        &format!("INSERT INTO {schema}.task_text(task_text) VALUES ('integrity-check')"),
        [],
    ) {
        Ok(_) => false,
        Err(e) => damage(&e),
    }
}

/// What one pass read from the store for the index (see [`read_batch`]).
struct Batch {
    /// Id of the last event the pass covers: the index's `meta.event_id` once the batch is
    /// written.
    newest: i64,
    /// Whether the pass stopped at [`MAX_PASS_EVENTS`] or [`MAX_PASS_BYTES`]: more events may
    /// follow `newest` already.
    more: bool,
    /// `seq` of the oldest stored task: index rows below it name deleted tasks.
    oldest: i64,
    /// Each settled task the events named: its task id, `seq` and the fields [`task_text`]
    /// indexes (tool, arguments, status message, result).
    tasks: Vec<(String, i64, [String; 4])>,
}

/// The last event the index holds (`meta.event_id`, 0 when none).
fn indexed_up_to(idx: &Connection) -> Result<i64, EngineError> {
    Ok(idx
        .query_row("SELECT value FROM meta WHERE key = 'event_id'", [], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or(0))
}

/// Reads up to [`MAX_PASS_EVENTS`] events after `last` and the fields of the settled tasks they
/// name (a live task is a candidate of every search without an entry), or `None` when there is
/// no such event. Each field is cut to [`MAX_RAW_FIELD_BYTES`], which loses nothing the index
/// would keep, and the pass ends early at the event whose task takes its fields past
/// [`MAX_PASS_BYTES`]: the events after it are read by the next pass.
fn read_batch(main: &Connection, last: i64) -> Result<Option<Batch>, EngineError> {
    // One short read transaction: the events and the tasks they name come from the same
    // commit. It ends before the index is written: a read transaction left open keeps the
    // store's checkpoints from resetting its WAL (and a TRUNCATE checkpoint, which waits for
    // readers, holds the writer back meanwhile).
    let snapshot = main.unchecked_transaction()?;
    let events: Vec<(i64, String)> = snapshot
        .prepare_cached("SELECT id, task_id FROM events WHERE id > ?1 ORDER BY id LIMIT ?2")?
        .query_map(params![last, MAX_PASS_EVENTS as i64], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let Some(&(mut newest, _)) = events.last() else {
        return Ok(None);
    };
    let mut more = events.len() == MAX_PASS_EVENTS;
    let oldest: i64 =
        snapshot.query_row("SELECT ifnull(min(seq), 0) FROM tasks", [], |r| r.get(0))?;
    let mut tasks = Vec::new();
    {
        let mut seen = HashSet::new();
        let mut bytes = 0;
        let mut read = snapshot.prepare_cached(
            "SELECT seq, tool, arguments, status_message, result FROM tasks
             WHERE task_id = ?1 AND status NOT IN ('working', 'input_required')",
        )?;
        for (id, task_id) in &events {
            if !seen.insert(task_id.as_str()) {
                continue;
            }
            let row = read
                .query_row(params![task_id], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        [
                            kept_field(r.get_ref(1)?),
                            kept_field(r.get_ref(2)?),
                            kept_field(r.get_ref(3)?),
                            kept_field(r.get_ref(4)?),
                        ],
                    ))
                })
                .optional()?;
            if let Some((seq, fields)) = row {
                bytes += fields.iter().map(String::len).sum::<usize>();
                tasks.push((task_id.clone(), seq, fields));
                if bytes >= MAX_PASS_BYTES && *id != newest {
                    // Every event up to this one is covered: a task named again later was
                    // read as this snapshot has it, which includes those later events.
                    (newest, more) = (*id, true);
                    break;
                }
            }
        }
    }
    snapshot.finish()?;
    Ok(Some(Batch {
        newest,
        more,
        oldest,
        tasks,
    }))
}

/// Writes `batch` into the index in one transaction: the tasks' texts ([`task_text`]), the
/// rows of tasks older than the oldest stored one dropped (deleted), and `meta.event_id`.
/// `oldest_seq` is the oldest `seq` already dropped below.
fn write_batch(
    idx: &mut Connection,
    batch: &Batch,
    oldest_seq: &mut i64,
) -> Result<(), EngineError> {
    let tx = idx.transaction()?;
    {
        let mut write =
            tx.prepare_cached("INSERT OR REPLACE INTO task_text(rowid, text) VALUES (?1, ?2)")?;
        let mut long = tx.prepare_cached("INSERT OR IGNORE INTO long_tasks(seq) VALUES (?1)")?;
        let mut short = tx.prepare_cached("DELETE FROM long_tasks WHERE seq = ?1")?;
        for (task_id, seq, fields) in &batch.tasks {
            let (text, cut) = task_text(task_id, fields);
            write.execute(params![seq, text])?;
            if cut {
                long.execute(params![seq])?;
            } else {
                short.execute(params![seq])?;
            }
        }
    }
    if batch.oldest > *oldest_seq {
        tx.execute(
            "DELETE FROM task_text WHERE rowid < ?1",
            params![batch.oldest],
        )?;
        tx.execute(
            "DELETE FROM long_tasks WHERE seq < ?1",
            params![batch.oldest],
        )?;
    }
    tx.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('event_id', ?1)",
        params![batch.newest],
    )?;
    tx.commit()?;
    *oldest_seq = batch.oldest;
    Ok(())
}

/// `s` with case folded the way search compares text: each character lowercased on its own
/// (Unicode's per-character mapping, without the context rule of `str::to_lowercase` that
/// makes a word-final "Σ" a "ς"), and "ς" as "σ". The index holds folded text and queries are
/// folded the same way, so they agree with the exact test whatever the script (the trigram
/// tokenizer's own folding leaves e.g. Cherokee and Georgian capitals apart).
pub fn fold_case(s: &str) -> String {
    s.chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == 'ς' { 'σ' } else { c })
        .collect()
}

/// A field's bytes kept for indexing: folding case shrinks a character at most threefold (the
/// Kelvin sign, 3 bytes, becomes "k"), so a field cut here still folds to at least
/// [`MAX_TEXT_BYTES`], and [`task_text`] then cuts the text and marks it cut, as it would have.
const MAX_RAW_FIELD_BYTES: usize = 3 * MAX_TEXT_BYTES;

/// What a pass keeps of one of a task's fields: its first [`MAX_RAW_FIELD_BYTES`] at most, cut
/// at a character boundary and copied straight from SQLite's value, so that a pass never holds
/// a whole large result (the copy may grow up to threefold where U+FFFD replaces bytes); `""`
/// for NULL. Text that is not valid UTF-8 (SQLite stores what it is given) keeps its valid
/// parts, with U+FFFD for the rest.
fn kept_field(value: ValueRef<'_>) -> String {
    let bytes = match value {
        ValueRef::Null => return String::new(),
        ValueRef::Integer(i) => return i.to_string(),
        ValueRef::Real(f) => return f.to_string(),
        ValueRef::Text(b) | ValueRef::Blob(b) => b,
    };
    let kept = &bytes[..bytes.len().min(MAX_RAW_FIELD_BYTES)];
    match std::str::from_utf8(kept) {
        Ok(text) => text.to_owned(),
        // Only the cut split a character: keep what precedes it.
        Err(e) if e.error_len().is_none() && bytes.len() > MAX_RAW_FIELD_BYTES => {
            String::from_utf8_lossy(&kept[..e.valid_up_to()]).into_owned()
        }
        Err(_) => String::from_utf8_lossy(kept).into_owned(),
    }
}

/// Truncates `s` to at most `max` bytes, at a character boundary.
fn cut_at_char_boundary(s: &mut String, max: usize) {
    if s.len() > max {
        let mut cut = max;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
}

/// The indexed text of one task: its tool, arguments, status message, result and taskId, one
/// per line, case folded ([`fold_case`]) and cut to [`MAX_TEXT_BYTES`]; and whether it was cut.
fn task_text(task_id: &str, fields: &[String; 4]) -> (String, bool) {
    let mut text = String::with_capacity(fields.iter().map(String::len).sum::<usize>() + 64);
    for f in fields {
        text.push_str(&fold_case(f));
        text.push('\n');
    }
    text.push_str(task_id);
    let cut = text.len() > MAX_TEXT_BYTES;
    cut_at_char_boundary(&mut text, MAX_TEXT_BYTES);
    (text, cut)
}

/// Most trigrams a query puts in its `MATCH` expression (the first ones of its text).
const MAX_QUERY_TRIGRAMS: usize = 32;

/// The FTS5 `MATCH` expression that selects candidates for `query` from the index (every task
/// whose text contains all of the query's trigrams), or `None` when the query has no run of
/// [`MIN_INDEXED_QUERY`] characters outside the `LIKE` wildcards `%` and `_`. The candidates are
/// a superset of the exact matches (the trigrams may be apart, in another order, or past a
/// wildcard); the caller applies the exact test. The index stores no text of its own
/// (`content = ''`), which halves its size, so it cannot check more itself.
pub fn candidate_match(query: &str) -> Option<String> {
    let mut trigrams: Vec<String> = Vec::new();
    let query = fold_case(query);
    for run in query.split(['%', '_']) {
        let chars: Vec<char> = run.chars().collect();
        for w in chars.windows(MIN_INDEXED_QUERY) {
            // Windows of the folded query, like the folded text the index holds.
            let t: String = w.iter().collect();
            if !trigrams.contains(&t) {
                trigrams.push(t);
            }
        }
    }
    if trigrams.is_empty() {
        return None;
    }
    trigrams.truncate(MAX_QUERY_TRIGRAMS);
    let quoted: Vec<String> = trigrams
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    Some(quoted.join(" AND "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The UI decides how long to wait after a key by whether the index can serve the query
    /// (`ui/js/tasks-model.js`); its threshold must be this one.
    #[test]
    fn the_ui_uses_the_same_indexed_query_length() {
        let ui = include_str!("../../../../ui/js/tasks-model.js");
        let line = format!("export const INDEXED_QUERY_CHARS = {MIN_INDEXED_QUERY};");
        assert!(ui.contains(&line), "ui/js/tasks-model.js must say `{line}`");
    }

    #[test]
    fn queries_become_the_trigrams_they_contain() {
        assert_eq!(candidate_match("ab"), None);
        assert_eq!(candidate_match("a%b_c"), None, "wildcards break the runs");
        assert_eq!(
            candidate_match("Need").as_deref(),
            Some(r#""nee" AND "eed""#)
        );
        assert_eq!(
            candidate_match("50%_off x").as_deref(),
            Some(r#""off" AND "ff " AND "f x""#)
        );
        assert_eq!(
            candidate_match(r#"a"bc"#).as_deref(),
            Some(r#""a""b" AND """bc""#),
            "quotes doubled inside a quoted string"
        );
        let repeated = candidate_match(&"abcdefghij".repeat(20)).unwrap();
        assert_eq!(repeated.matches(" AND ").count(), 9, "10 distinct trigrams");
        let long = candidate_match("abcdefghijklmnopqrstuvwxyz0123456789").unwrap();
        assert_eq!(
            long.matches(" AND ").count(),
            MAX_QUERY_TRIGRAMS - 1,
            "capped"
        );
    }

    #[test]
    fn the_index_finds_candidates_without_storing_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = open(dir.path()).unwrap();
        let c = Connection::open(&path).unwrap();
        let add = |seq: i64, text: &str| {
            c.execute(
                "INSERT OR REPLACE INTO task_text(rowid, text) VALUES (?1, ?2)",
                params![seq, text],
            )
            .unwrap();
        };
        add(1, "echo\n{\"note\":\"needle 9\"}");
        add(2, "echo\n{\"note\":\"haystack\"}");
        add(3, "NEEDLE 95 in caps");
        let find = |q: &str| -> Vec<i64> {
            let m = candidate_match(q).unwrap();
            let mut stmt = c
                .prepare("SELECT rowid FROM task_text WHERE task_text MATCH ?1 ORDER BY rowid")
                .unwrap();
            stmt.query_map(params![m], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(find("needle 9"), vec![1, 3]);
        assert_eq!(find("hay"), vec![2]);
        add(2, "replaced");
        assert_eq!(
            find("hay"),
            Vec::<i64>::new(),
            "a replaced row's old text is gone"
        );
        assert_eq!(find("repl"), vec![2]);
        c.execute("DELETE FROM task_text WHERE rowid < 3", [])
            .unwrap();
        assert_eq!(find("needle"), vec![3]);
    }

    /// Thread id, nice level and scheduling policy (0 normal, 5 `SCHED_IDLE`) of each of this
    /// process's threads named `name` (all of them for `None`), from fields 19 and 41 of
    /// `/proc/self/task/*/stat`.
    #[cfg(target_os = "linux")]
    fn scheduling(name: Option<&str>) -> Vec<(String, (i64, i64))> {
        std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| {
                let t = t.ok()?.path();
                let comm = std::fs::read_to_string(t.join("comm")).ok()?;
                let stat = std::fs::read_to_string(t.join("stat")).ok()?;
                let tid = t.file_name()?.to_string_lossy().into_owned();
                name.is_none_or(|n| comm.trim() == n)
                    .then(|| (tid, stat_scheduling(&stat)))
            })
            .collect()
    }

    /// Nice level and policy from a `stat` line.
    #[cfg(target_os = "linux")]
    fn stat_scheduling(stat: &str) -> (i64, i64) {
        // Fields restart after the `(comm)`, which may hold spaces and parentheses.
        let after: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        (after[16].parse().unwrap(), after[38].parse().unwrap())
    }

    /// Nice level and policy of the calling thread.
    #[cfg(target_os = "linux")]
    fn own_scheduling() -> (i64, i64) {
        // SAFETY: a plain system call about the calling thread.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        stat_scheduling(&std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap())
    }

    /// The thread that reads the store runs as it was started (the test's own nice level and
    /// policy), the one that writes the index in `SCHED_IDLE` (at nice 19 where a sandbox
    /// refuses that class): a read transaction held by a thread the scheduler leaves waiting
    /// keeps the store's WAL from being reset (it grew past twice its size limit under a
    /// creation flood while the indexer read at nice 19).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_store_is_read_at_normal_priority_and_the_index_written_when_idle() {
        use crate::{
            feed::ChangeFeed,
            store::{Durability, Store},
        };
        let own = own_scheduling();
        // What a thread of this process gets when it asks for SCHED_IDLE.
        let idle = thread::spawn(|| {
            crate::priority::idle_this_thread("test");
            own_scheduling()
        })
        .join()
        .unwrap();
        assert!(
            idle == (own.0, libc::SCHED_IDLE as i64) || idle == (19, own.1),
            "{idle:?}"
        );
        // Other tests' stores run indexers too: only this store's threads count.
        let before: Vec<String> = scheduling(None).into_iter().map(|t| t.0).collect();
        let new = |name| -> Vec<(i64, i64)> {
            scheduling(Some(name))
                .into_iter()
                .filter(|t| !before.contains(&t.0))
                .map(|t| t.1)
                .collect()
        };
        let dir = tempfile::tempdir().unwrap();
        let _store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
        // Each thread names itself, and the index thread then changes its own class.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        // (Another test's store opened meanwhile adds its own threads: each must match.)
        let indexers_idle = || {
            let indexers = new("taskdeck-index");
            !indexers.is_empty() && indexers.iter().all(|&s| s == idle)
        };
        while new("taskdeck-search").is_empty() || !indexers_idle() {
            assert!(
                std::time::Instant::now() < deadline,
                "{:?}",
                scheduling(None)
            );
            thread::sleep(Duration::from_millis(10));
        }
        let readers = new("taskdeck-search");
        assert!(
            readers.iter().all(|&s| s == own),
            "{readers:?} (own: {own:?})"
        );
    }

    /// What the reader keeps of a long field indexes as the whole field would, even for the
    /// character folding shrinks most (the Kelvin sign, 3 bytes, folds to "k").
    #[test]
    fn a_field_cut_for_the_batch_indexes_as_the_whole_field() {
        for unit in ["\u{212A}", "é", "x", "aé\u{212A}"] {
            let whole = unit.repeat(MAX_RAW_FIELD_BYTES + 1);
            let kept = kept_field(ValueRef::Text(whole.as_bytes()));
            assert!(kept.len() <= MAX_RAW_FIELD_BYTES && kept.len() < whole.len());
            let fields = |f: &str| [String::new(), f.to_string(), String::new(), String::new()];
            assert_eq!(
                task_text("id", &fields(&kept)),
                task_text("id", &fields(&whole)),
                "{unit}"
            );
        }
        // A cut that splits a character keeps what precedes it.
        let odd = format!("x{}", "é".repeat(MAX_RAW_FIELD_BYTES));
        let kept = kept_field(ValueRef::Text(odd.as_bytes()));
        assert_eq!(kept.len(), MAX_RAW_FIELD_BYTES - 1);
        assert!(odd.starts_with(&kept));
        assert_eq!(kept_field(ValueRef::Text(b"ab\xc3")), "ab\u{FFFD}");
        assert_eq!(kept_field(ValueRef::Null), "");
        assert_eq!(kept_field(ValueRef::Text(b"a\xffb")), "a\u{FFFD}b");
    }

    /// A pass ends at the task that takes its fields past [`MAX_PASS_BYTES`] and says more may
    /// follow; the next pass starts after it, and reads a task named again as it is then.
    #[test]
    fn a_pass_ends_at_its_byte_bound() {
        let main = Connection::open_in_memory().unwrap();
        main.execute_batch(
            "CREATE TABLE tasks(seq INTEGER PRIMARY KEY, task_id TEXT UNIQUE, tool TEXT,
               arguments TEXT, status TEXT, status_message TEXT, result TEXT);
             CREATE TABLE events(id INTEGER PRIMARY KEY, task_id TEXT);",
        )
        .unwrap();
        // Each field is kept up to MAX_RAW_FIELD_BYTES: 4 of them a task.
        let big = "r".repeat(MAX_RAW_FIELD_BYTES + 1);
        let per_task = 4 * MAX_RAW_FIELD_BYTES;
        let fill = MAX_PASS_BYTES.div_ceil(per_task);
        let name = |n: usize| format!("t{n}");
        for n in 1..=fill + 2 {
            main.execute(
                "INSERT INTO tasks VALUES (?1, ?2, ?3, ?3, 'completed', ?3, ?3)",
                params![n as i64, name(n), big],
            )
            .unwrap();
            main.execute("INSERT INTO events(task_id) VALUES (?1)", [name(n)])
                .unwrap();
        }
        main.execute_batch(
            "INSERT INTO events(task_id) VALUES ('t1');
             INSERT INTO tasks(seq, task_id, tool, arguments, status) VALUES (99, 'live', 'echo', '{}', 'working');
             INSERT INTO events(task_id) VALUES ('live');",
        )
        .unwrap();
        let ids = |b: &Batch| b.tasks.iter().map(|t| t.0.clone()).collect::<Vec<_>>();
        let first = read_batch(&main, 0).unwrap().unwrap();
        assert_eq!(
            (first.newest, first.more, ids(&first)),
            (fill as i64, true, (1..=fill).map(name).collect())
        );
        assert!(
            first
                .tasks
                .iter()
                .all(|t| t.2.iter().all(|f| f.len() == MAX_RAW_FIELD_BYTES))
        );
        // The rest fit: the pass ends with the events, and the live task has no entry.
        let second = read_batch(&main, first.newest).unwrap().unwrap();
        assert_eq!(
            (second.newest, second.more, ids(&second), second.oldest),
            (
                (fill + 4) as i64,
                false,
                vec![name(fill + 1), name(fill + 2), name(1)],
                1
            )
        );
        assert!(read_batch(&main, second.newest).unwrap().is_none());
    }

    #[test]
    fn task_text_is_cut_at_a_character_boundary() {
        let big = "é".repeat(MAX_TEXT_BYTES);
        let (text, cut) = task_text("id", &[big, String::new(), String::new(), String::new()]);
        assert!(cut && text.len() <= MAX_TEXT_BYTES && text.len() > MAX_TEXT_BYTES - 2);
        assert_eq!(
            task_text("id", &Default::default()),
            ("\n\n\n\nid".to_string(), false)
        );
    }
}

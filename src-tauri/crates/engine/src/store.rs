//! The durable store: one SQLite file (WAL mode) holding tasks, their input rounds and their
//! timeline events.
//!
//! Writes go through one writer thread that groups every write waiting in its queue into a
//! single transaction (group commit): a caller's write is acknowledged only after the commit
//! that contains it, so "returned" always means "on disk". A write checks before it changes
//! anything, so a failing write leaves nothing behind and never takes its neighbours down. Reads use a small pool of read-only
//! connections and never wait for the writer (WAL readers see the last commit).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, mpsc},
    thread,
};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use tokio::sync::oneshot;

use super::{
    EngineError, TaskRecord, TaskStatus, TimelineEvent,
    answer_cache::{AnswerCache, CachedAnswer},
    feed::{Change, ChangeFeed},
    model::{InputRound, Progress},
    search,
};

/// How hard each commit is pushed to disk (SQLite `PRAGMA synchronous`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=NORMAL` in WAL mode: every commit survives a crash of the process
    /// (SIGKILL, panic); the last commits may be lost if the machine loses power.
    Process,
    /// `synchronous=FULL`: every commit is fsynced before it is acknowledged; survives power loss.
    Power,
}

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS tasks(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  principal TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT,
  created_at INTEGER NOT NULL,
  last_updated_at INTEGER NOT NULL,
  ttl_ms INTEGER,
  expires_at INTEGER,
  poll_interval_ms INTEGER NOT NULL,
  progress TEXT,
  result TEXT,
  error TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tasks_expires ON tasks(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_status ON tasks(status, seq);
CREATE INDEX IF NOT EXISTS tasks_principal ON tasks(principal, seq);
CREATE INDEX IF NOT EXISTS tasks_tool ON tasks(tool, seq);
CREATE TABLE IF NOT EXISTS input_requests(
  task_id TEXT NOT NULL,
  key TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  human_only INTEGER NOT NULL DEFAULT 0,
  response TEXT,
  answered_by TEXT,
  answered_at INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY(task_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  principal TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_task ON events(task_id, id);
CREATE INDEX IF NOT EXISTS events_deleted ON events(at) WHERE kind = 'deleted';
CREATE TABLE IF NOT EXISTS tokens(
  name TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS idempotency_keys(
  principal TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  task_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY(principal, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_keys_expires ON idempotency_keys(expires_at);
CREATE TABLE IF NOT EXISTS task_counts(
  principal TEXT NOT NULL,
  tool TEXT NOT NULL,
  status TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY(principal, tool, status)
) WITHOUT ROWID;
"#;

/// A write: runs inside the group transaction (`None` when no transaction could be opened: it
/// must not touch the database) and returns a closure that delivers its result once the
/// commit is known (`true` = committed).
type Job =
    Box<dyn FnOnce(Option<&mut WriteCtx<'_>>) -> (bool, Box<dyn FnOnce(bool) + Send>) + Send>;

/// What a write sees: the connection (inside the group transaction), the changes it will
/// publish after the commit, and the writer's copies of recently written `working` tasks.
///
/// Writes read, insert, save and delete tasks through this context, never with SQL of their
/// own on `conn` (which they use for input requests and idempotency keys only): that keeps the
/// copies equal to the rows.
pub struct WriteCtx<'c> {
    pub conn: &'c Connection,
    changes: Vec<Pending>,
    /// Where the current write's changes start in `changes`.
    mark: usize,
    cache: &'c mut TaskCache,
    /// The group's changes to `task_counts`: `(principal, tool, status, +1 | -1)`, applied
    /// just before the commit ([`apply_count_deltas`]).
    count_deltas: Vec<(String, String, TaskStatus, i64)>,
    /// Where the current write's entries start in `count_deltas`.
    count_mark: usize,
    /// Every task this group inserted, saved, deleted or logged an event for: their cached
    /// `tasks/get` answers are invalidated after the commit ([`AnswerCache::invalidate`]).
    touched: Vec<String>,
}

/// A change queued by the write in progress. Its task snapshot is the task as that write
/// leaves it: set when the write saves the task, or by the writer once the write returns.
struct Pending {
    event: TimelineEvent,
    task: Option<Arc<TaskRecord>>,
}

/// The writer's copies of the `working` tasks it wrote last, so that the next write of a live
/// task (progress, status message, completion) does not read it back from SQLite. Only tasks
/// without outstanding input requests are kept (their row is the whole record). Emptied when
/// a write fails or a group is rolled back, and when it reaches [`TASK_CACHE_CAP`] entries.
type TaskCache = std::collections::HashMap<String, Arc<TaskRecord>>;

/// How long the `deleted` event of a deleted task is kept (ms): an event stream resumed within
/// this time still removes the task ([`WriteCtx::delete`]).
pub const DELETED_EVENTS_KEPT_MS: i64 = 24 * 60 * 60 * 1000;

/// Entries of [`TaskCache`] (about 1 KiB each with small arguments) before it is emptied.
const TASK_CACHE_CAP: usize = 8_192;

impl WriteCtx<'_> {
    /// Appends a timeline event for `task` and queues the change for the feed; the change
    /// carries the task as this write leaves it.
    pub fn event(
        &mut self,
        task: &TaskRecord,
        at_ms: i64,
        kind: &str,
        data: Value,
    ) -> Result<(), EngineError> {
        self.conn
            .prepare_cached(
                "INSERT INTO events(task_id, principal, at, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![task.task_id, task.principal, at_ms, kind, data.to_string()])?;
        self.touched.push(task.task_id.clone());
        let event = TimelineEvent {
            id: self.conn.last_insert_rowid(),
            task_id: task.task_id.clone(),
            at_ms,
            kind: kind.to_string(),
            data,
        };
        self.changes.push(Pending { event, task: None });
        Ok(())
    }

    /// One task as this transaction sees it (with its outstanding input requests), or `None`.
    pub fn load(&mut self, task_id: &str) -> Result<Option<TaskRecord>, EngineError> {
        match self.cache.get(task_id) {
            Some(t) => Ok(Some(TaskRecord::clone(t))),
            None => load_task(self.conn, task_id),
        }
    }

    /// Inserts a new task (its `seq` is assigned) and returns it as stored.
    pub fn insert(&mut self, mut task: TaskRecord) -> Result<Arc<TaskRecord>, EngineError> {
        insert_task(self.conn, &mut task)?;
        self.count(&task.principal, &task.tool, task.status, 1);
        Ok(self.settle(task))
    }

    /// Records that `task` (already given its new status) left status `from`, for the counts
    /// per status. Every status change goes through the engine's `transition`, which calls it.
    pub fn status_changed(&mut self, task: &TaskRecord, from: TaskStatus) {
        if from != task.status {
            self.count(&task.principal, &task.tool, from, -1);
            self.count(&task.principal, &task.tool, task.status, 1);
        }
    }

    fn count(&mut self, principal: &str, tool: &str, status: TaskStatus, n: i64) {
        self.count_deltas
            .push((principal.to_string(), tool.to_string(), status, n));
    }

    /// Writes back every mutable column of `task` and returns it as stored; the changes this
    /// write queued for it carry this state.
    pub fn save(&mut self, task: TaskRecord) -> Result<Arc<TaskRecord>, EngineError> {
        save_task(self.conn, &task)?;
        Ok(self.settle(task))
    }

    /// Deletes a task with its events and input rounds, and leaves one timeline event of kind
    /// `deleted` (`data: {status, tool, principal}`, the task's last) in their place, published
    /// on the feed with the task's last snapshot: watchers drop the task, and a client that
    /// resumes its event stream later still learns of it (kept [`DELETED_EVENTS_KEPT_MS`]).
    pub fn delete(&mut self, task_id: &str) -> Result<(), EngineError> {
        let last = self.load(task_id)?;
        self.cache.remove(task_id);
        self.touched.push(task_id.to_string());
        let Some((principal, tool, status)) = delete_task(self.conn, task_id)? else {
            return Ok(());
        };
        self.count(&principal, &tool, status, -1);
        let at_ms = super::clock::now_ms();
        let data =
            serde_json::json!({"status": status.as_str(), "tool": tool, "principal": principal});
        self.conn
            .prepare_cached(
                "INSERT INTO events(task_id, principal, at, kind, data) VALUES (?1, ?2, ?3, 'deleted', ?4)",
            )?
            .execute(params![task_id, principal, at_ms, data.to_string()])?;
        let event = TimelineEvent {
            id: self.conn.last_insert_rowid(),
            task_id: task_id.to_string(),
            at_ms,
            kind: "deleted".into(),
            data,
        };
        self.changes.push(Pending {
            event,
            task: last.map(Arc::new),
        });
        Ok(())
    }

    /// Drops the `deleted` events older than `before_ms` (ms since the epoch). Returns how many.
    pub fn prune_deleted_events(&mut self, before_ms: i64) -> Result<usize, EngineError> {
        Ok(self
            .conn
            .prepare_cached("DELETE FROM events WHERE kind = 'deleted' AND at < ?1")?
            .execute(params![before_ms])?)
    }

    fn settle(&mut self, task: TaskRecord) -> Arc<TaskRecord> {
        self.touched.push(task.task_id.clone());
        let task = Arc::new(task);
        for p in self.changes[self.mark..]
            .iter_mut()
            .filter(|p| p.event.task_id == task.task_id)
        {
            p.task = Some(task.clone());
        }
        if task.status == TaskStatus::Working && task.input_requests.is_empty() {
            if self.cache.len() >= TASK_CACHE_CAP {
                self.cache.clear();
            }
            self.cache.insert(task.task_id.clone(), task.clone());
        } else {
            self.cache.remove(&task.task_id);
        }
        task
    }

    /// Gives every change of the write that just returned its task snapshot (the task as that
    /// write left it); a change whose task that write deleted is dropped with it.
    fn finish_write(&mut self) {
        let mut i = self.mark;
        while i < self.changes.len() {
            if self.changes[i].task.is_none() {
                let id = self.changes[i].event.task_id.clone();
                match self.load(&id) {
                    Ok(Some(t)) => {
                        let t = Arc::new(t);
                        for p in self.changes[i..]
                            .iter_mut()
                            .filter(|p| p.task.is_none() && p.event.task_id == id)
                        {
                            p.task = Some(t.clone());
                        }
                    }
                    Ok(None) => {
                        self.changes.remove(i);
                        continue;
                    }
                    Err(e) => {
                        tracing::error!(task_id = %id, "store: cannot read a written task: {e}");
                        self.changes.remove(i);
                        continue;
                    }
                }
            }
            i += 1;
        }
        self.mark = self.changes.len();
        self.count_mark = self.count_deltas.len();
    }

    /// Forgets what the write in progress queued (it failed).
    fn abandon_write(&mut self) {
        self.changes.truncate(self.mark);
        self.count_deltas.truncate(self.count_mark);
        self.cache.clear();
    }
}

/// Adds the group's count changes to `task_counts` (one upsert per distinct principal, tool
/// and status; a group of ~70 writes touches two or three).
fn apply_count_deltas(
    conn: &Connection,
    deltas: &[(String, String, TaskStatus, i64)],
) -> Result<(), EngineError> {
    let mut sums: BTreeMap<(&str, &str, &str), i64> = BTreeMap::new();
    for (principal, tool, status, n) in deltas {
        *sums.entry((principal, tool, status.as_str())).or_default() += n;
    }
    let mut stmt = conn.prepare_cached(
        "INSERT INTO task_counts(principal, tool, status, n) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT DO UPDATE SET n = n + excluded.n",
    )?;
    for ((principal, tool, status), n) in sums {
        if n != 0 {
            stmt.execute(params![principal, tool, status, n])?;
        }
    }
    Ok(())
}

/// Filters for [`Store::page`]. Empty fields match everything.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub statuses: Vec<TaskStatus>,
    pub tool: Option<String>,
    /// Owner; callers that are not admin must set this to themselves.
    pub principal: Option<String>,
    /// Free text, matched (case-insensitively) against tool, arguments, status message, result.
    pub query: Option<String>,
    /// Cursor: only tasks older than this `seq`.
    pub before_seq: Option<i64>,
    /// Page size, 1..=1000.
    pub limit: usize,
}

/// One page of the task list as [`Store::page`] reads it.
#[derive(Debug, Clone)]
pub struct Page {
    /// Newest first, at most the filter's `limit`.
    pub tasks: Vec<TaskRecord>,
    /// The `seq` to pass as `before_seq` for the next page, when there is one.
    pub next_seq: Option<i64>,
    /// Tasks per status (see [`Store::counts`]).
    pub counts: BTreeMap<String, i64>,
    /// The newest timeline event the page and the counts reflect (0 when there is none).
    pub event_id: i64,
}

/// Handle to the store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// The search index file, attached to every read connection as `search`.
    search: Option<PathBuf>,
    writer: mpsc::Sender<Job>,
    readers: Mutex<Vec<Connection>>,
    feed: ChangeFeed,
    /// Recent `tasks/get` answers; the writer invalidates what each commit changed.
    answers: Arc<AnswerCache>,
    /// See [`Store::cursor_key`].
    cursor_key: [u8; 32],
}

/// Bytes of `tasks/get` answers kept in memory ([`AnswerCache`]): a few thousand polled tasks.
const ANSWER_CACHE_BYTES: usize = 4 * 1024 * 1024;

impl Store {
    /// Opens (creating if needed) `dir/taskdeck.sqlite3` and starts the writer thread.
    ///
    /// Errors: [`EngineError::Store`] when the directory or the database cannot be opened.
    pub fn open(
        dir: &Path,
        durability: Durability,
        feed: ChangeFeed,
    ) -> Result<Store, EngineError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| EngineError::Store(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join("taskdeck.sqlite3");
        create_private_file(&path)?;
        let conn = open_conn(&path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(
            None,
            "synchronous",
            match durability {
                Durability::Process => "NORMAL",
                Durability::Power => "FULL",
            },
        )?;
        conn.execute_batch(SCHEMA)?;
        migrate(&conn)?;
        // This store's identity, which derived files (the search index) check they belong to.
        conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('store_id', ?1)",
            params![uuid::Uuid::new_v4().simple().to_string()],
        )?;
        let cursor_key = secret(&conn, "cursor_key")?;
        // Temporary b-trees stay in memory. The writer keeps up to 4 MiB of pages cached (the
        // readers keep SQLite's default 2 MiB each): its writes touch the ends of the b-trees,
        // and every commit walks the page cache's hash table, so a larger cache (32 MiB) made
        // each commit slower (BENCHMARKS.md).
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.pragma_update(None, "cache_size", -4_096)?;
        // Checkpoints (copying the WAL back into the database, with fsyncs) run on their own
        // thread so the writer never stalls on them; the writer asks for one every
        // CHECKPOINT_EVERY commits.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        // When the WAL is reset, truncate the file back to this size (bytes).
        conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
        let checkpointer = open_conn(&path)?;
        let (ckpt_tx, ckpt_rx) = mpsc::sync_channel::<()>(1);
        thread::Builder::new()
            .name("taskdeck-store-checkpoint".into())
            .spawn(move || {
                while ckpt_rx.recv().is_ok() {
                    // PASSIVE never blocks anyone, but under constant reads and writes it cannot
                    // reset the WAL, which then grows without bound; past WAL_RESET_FRAMES a
                    // RESTART checkpoint waits for the writer and the readers and resets it, so
                    // the next commits write the file from its start again. New writes wait
                    // while it runs (~15 ms here, about twice a second under a creation flood).
                    // TRUNCATE (also shrinking the file to 0 bytes, so that it grew again) made
                    // those waits twice as long (BENCHMARKS.md); `journal_size_limit` caps the
                    // file instead.
                    let passive =
                        checkpointer.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
                            r.get::<_, i64>(1)
                        });
                    match passive {
                        Ok(frames) if frames > WAL_RESET_FRAMES => {
                            if let Err(e) =
                                checkpointer
                                    .query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
                            {
                                tracing::warn!("checkpoint (restart): {e}");
                            }
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!("checkpoint: {e}"),
                    }
                }
            })
            .map_err(|e| EngineError::Store(e.to_string()))?;
        let search = search::open(dir).and_then(|index| {
            search::spawn_indexer(index.clone(), path.clone(), feed.subscribe())?;
            Ok(index)
        });
        let search = match search {
            Ok(index) => Some(index),
            Err(e) => {
                tracing::warn!("search index unavailable, searches scan every task: {e}");
                None
            }
        };
        let (tx, rx) = mpsc::channel::<Job>();
        let writer_feed = feed.clone();
        let answers = Arc::new(AnswerCache::new(ANSWER_CACHE_BYTES));
        let writer_answers = answers.clone();
        thread::Builder::new()
            .name("taskdeck-store-writer".into())
            .spawn(move || writer_loop(conn, rx, writer_feed, writer_answers, ckpt_tx))
            .map_err(|e| EngineError::Store(e.to_string()))?;
        Ok(Store {
            inner: Arc::new(Inner {
                path,
                search,
                writer: tx,
                readers: Mutex::new(Vec::new()),
                feed,
                answers,
                cursor_key,
            }),
        })
    }

    /// Path of the SQLite file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The feed on which committed writes are published.
    pub fn feed(&self) -> &ChangeFeed {
        &self.inner.feed
    }

    /// 32 random bytes made with the store and kept in it (`meta.cursor_key`): the key of the
    /// MACs that bind the list cursors handed out, so that a cursor outlives a restart but no
    /// one can make one up.
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.inner.cursor_key
    }

    /// Runs `f` inside the next group commit and returns its result once that commit is durable.
    ///
    /// Contract: `f` does every check that can fail before its first change, so an `Err` leaves
    /// the database as it found it; nothing it queued is published. (There is no savepoint per
    /// write: they cost a page copy per touched page, measured in BENCHMARKS.md.) If `f` fails
    /// after changing rows, the whole group is rolled back and every write in it gets an error.
    ///
    /// Errors: `f`'s own error; [`EngineError::Store`] when the commit fails or the writer stopped.
    pub async fn write<R, F>(&self, f: F) -> Result<R, EngineError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<R, EngineError> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |w| {
            let r = match w {
                Some(w) => f(w),
                None => Err(EngineError::Store("cannot open a write transaction".into())),
            };
            let ok = r.is_ok();
            let deliver = move |committed: bool| {
                let _ = tx.send(if committed || r.is_err() {
                    r
                } else {
                    Err(EngineError::Store("commit failed".into()))
                });
            };
            (ok, Box::new(deliver))
        });
        self.inner
            .writer
            .send(job)
            .map_err(|_| EngineError::Store("store writer stopped".into()))?;
        rx.await
            .map_err(|_| EngineError::Store("store writer stopped".into()))?
    }

    /// Runs `f` on a pooled read connection (sees the last commit). Blocking; keep it short or
    /// call it from `spawn_blocking`.
    pub fn read<R>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        let conn = self.inner.readers.lock().unwrap().pop();
        let conn = match conn {
            Some(c) => c,
            None => {
                let c = open_conn(&self.inner.path)?;
                if let Some(index) = &self.inner.search {
                    c.execute(
                        "ATTACH DATABASE ?1 AS search",
                        params![index.to_string_lossy()],
                    )?;
                }
                c
            }
        };
        let r = f(&conn);
        let mut pool = self.inner.readers.lock().unwrap();
        if pool.len() < 16 {
            pool.push(conn);
        }
        r
    }

    /// The owner and `GetTaskResult` JSON of one task ([`load_get_result_json`]), or `None`,
    /// from the answer cache when it holds the task, else read and cached. Errors:
    /// [`EngineError::Store`].
    pub fn get_answer(&self, task_id: &str) -> Result<Option<Arc<CachedAnswer>>, EngineError> {
        let seen = match self.inner.answers.get(task_id) {
            Ok(answer) => return Ok(Some(answer)),
            Err(seen) => seen,
        };
        let Some((owner, status, json)) = self.read(|c| load_get_result_json(c, task_id))? else {
            return Ok(None);
        };
        let answer = Arc::new(CachedAnswer::new(owner, status, json));
        self.inner.answers.fill(task_id, answer.clone(), seen);
        Ok(Some(answer))
    }

    /// Loads one task (with its outstanding input requests), or `None`.
    pub fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, EngineError> {
        self.read(|c| load_task(c, task_id))
    }

    /// Task counts per status for the tasks `filter` selects, ignoring its status, cursor and
    /// limit (so a UI can show how many of each status its other filters leave).
    ///
    /// Without a free-text query the answer comes from `task_counts` (kept by the writer in
    /// the transactions that change the tasks), so it costs the same for 10 or 1,000,000 tasks.
    pub fn counts(&self, filter: &ListFilter) -> Result<BTreeMap<String, i64>, EngineError> {
        let indexed = self.inner.search.is_some();
        self.read(|c| count_tasks(c, filter, indexed))
    }

    /// One page of the tasks `filter` selects (newest first, with the cursor for the next), its
    /// [`Self::counts`], and the id of the newest timeline event, all read in one snapshot: the
    /// page and the counts reflect exactly the events up to that id, so a change feed resumed
    /// after it (`/v1/events` with `Last-Event-ID`) brings every later change once (a task
    /// deleted meanwhile: only its `deleted` event). Errors: [`EngineError::Store`].
    pub fn page(&self, filter: &ListFilter) -> Result<Page, EngineError> {
        let indexed = self.inner.search.is_some();
        self.read(|c| {
            // A deferred read transaction: its snapshot starts at the first SELECT.
            let tx = c.unchecked_transaction()?;
            let event_id = newest_event_id(&tx)?;
            let counts = count_tasks(&tx, filter, indexed)?;
            let (tasks, next_seq) = list_tasks(&tx, filter, indexed)?;
            tx.finish()?;
            Ok(Page {
                tasks,
                next_seq,
                counts,
                event_id,
            })
        })
    }

    /// The newest `limit` timeline events of the task with an id below `before` (all when
    /// `None`), oldest first, and whether older ones exist. One indexed range read
    /// (`events_task`), however long the timeline. Errors: [`EngineError::Store`].
    pub fn timeline(
        &self,
        task_id: &str,
        before: Option<i64>,
        limit: usize,
    ) -> Result<(Vec<TimelineEvent>, bool), EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, task_id, at, kind, data FROM events WHERE task_id = ?1 AND id < ?2
                 ORDER BY id DESC LIMIT ?3",
            )?;
            let rows = stmt.query_map(
                params![task_id, before.unwrap_or(i64::MAX), limit as i64 + 1],
                row_event,
            )?;
            let mut events = rows.collect::<Result<Vec<_>, _>>()?;
            let more = events.len() > limit;
            events.truncate(limit);
            events.reverse();
            Ok((events, more))
        })
    }

    /// Every input round of the task (outstanding, answered, superseded), oldest first.
    pub fn input_rounds(&self, task_id: &str) -> Result<Vec<InputRound>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT key, request, state, response, answered_by, answered_at, created_at, human_only
                 FROM input_requests WHERE task_id = ?1 ORDER BY created_at, key",
            )?;
            let rows = stmt.query_map(params![task_id], |r| {
                Ok(InputRound {
                    key: r.get(0)?,
                    request: parse_json(r.get::<_, String>(1)?),
                    state: r.get(2)?,
                    response: r.get::<_, Option<String>>(3)?.map(parse_json),
                    answered_by: r.get(4)?,
                    answered_at_ms: r.get(5)?,
                    created_at_ms: r.get(6)?,
                    human_only: r.get(7)?,
                })
            })?;
            rows.map(|r| r.map_err(EngineError::from)).collect()
        })
    }

    /// Events after `after_id` (exclusive), oldest first, at most `limit`, optionally only those
    /// of one principal's tasks. Used to resume `/v1/events` from `Last-Event-ID`.
    pub fn events_since(
        &self,
        after_id: i64,
        principal: Option<&str>,
        limit: usize,
    ) -> Result<Vec<TimelineEvent>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, task_id, at, kind, data FROM events
                 WHERE id > ?1 AND (?2 IS NULL OR principal = ?2) ORDER BY id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![after_id, principal, limit as i64], row_event)?;
            rows.map(|r| r.map_err(EngineError::from)).collect()
        })
    }

    /// The id of the newest timeline event (0 when there is none).
    pub fn last_event_id(&self) -> Result<i64, EngineError> {
        self.read(newest_event_id)
    }

    /// Tasks that are not terminal (for restart recovery), oldest first.
    pub fn unsettled(&self) -> Result<Vec<TaskRecord>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT task_id FROM tasks WHERE status IN ('working','input_required') ORDER BY seq",
            )?;
            let ids: Vec<String> =
                stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(t) = load_task(c, &id)? {
                    out.push(t);
                }
            }
            Ok(out)
        })
    }

    /// The earliest `createdAt + ttlMs` over all tasks (ms since epoch), if any task has a TTL.
    pub fn next_expiry(&self) -> Result<Option<i64>, EngineError> {
        self.read(|c| {
            Ok(
                c.prepare_cached("SELECT MIN(expires_at) FROM tasks WHERE expires_at IS NOT NULL")?
                    .query_row([], |r| r.get::<_, Option<i64>>(0))?,
            )
        })
    }

    /// Ids of tasks whose TTL elapsed at `now_ms`, at most `limit`.
    pub fn expired(&self, now_ms: i64, limit: usize) -> Result<Vec<String>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT task_id FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?1
                 ORDER BY expires_at LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![now_ms, limit as i64], |r| r.get(0))?;
            rows.map(|r| r.map_err(EngineError::from)).collect()
        })
    }

    /// Number of tasks and their approximate bytes.
    pub fn totals(&self) -> Result<(i64, i64), EngineError> {
        self.read(|c| {
            Ok(
                c.prepare_cached("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM tasks")?
                    .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?,
            )
        })
    }

    /// Oldest terminal tasks, `limit` of them: the first to go when a cap is exceeded.
    pub fn oldest_terminal(&self, limit: usize) -> Result<Vec<String>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT task_id FROM tasks WHERE status IN ('completed','failed','cancelled')
                 ORDER BY seq LIMIT ?1",
            )?;
            let rows = stmt.query_map(params![limit as i64], |r| r.get(0))?;
            rows.map(|r| r.map_err(EngineError::from)).collect()
        })
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

/// Brings a store written by an earlier Taskdeck up to [`SCHEMA`] (which only creates what is
/// missing): columns added since are added with their defaults. Errors: [`EngineError::Store`].
fn migrate(conn: &Connection) -> Result<(), EngineError> {
    // `task_counts` (added 2026-11-29) is filled once from the tasks of a store that had none;
    // from then on the writer keeps it in step.
    let counted = conn
        .prepare("SELECT 1 FROM meta WHERE key = 'task_counts'")?
        .exists([])?;
    if !counted {
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             DELETE FROM task_counts;
             INSERT INTO task_counts(principal, tool, status, n)
               SELECT principal, tool, status, COUNT(*) FROM tasks GROUP BY 1, 2, 3;
             INSERT OR REPLACE INTO meta(key, value) VALUES ('task_counts', '1');
             COMMIT;",
        )?;
    }
    // (table, column, declaration): stores from before 2026-11-29 11:34 lack `human_only`.
    const ADDED: &[(&str, &str, &str)] =
        &[("input_requests", "human_only", "INTEGER NOT NULL DEFAULT 0")];
    for (table, column, decl) in ADDED {
        let present = conn
            .prepare("SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2")?
            .exists(params![table, column])?;
        if !present {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
            tracing::info!("store: added column {table}.{column}");
        }
    }
    Ok(())
}

/// The 32-byte secret `meta.<name>` (hex), drawn the first time from `rand`'s thread RNG (a
/// CSPRNG seeded by the OS).
/// Errors: [`EngineError::Store`], also when the stored value is not 32 bytes of hex.
fn secret(conn: &Connection, name: &str) -> Result<[u8; 32], EngineError> {
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)",
        params![name, hex::encode(rand::random::<[u8; 32]>())],
    )?;
    let stored: String = conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        params![name],
        |r| r.get(0),
    )?;
    hex::decode(&stored)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .ok_or_else(|| EngineError::Store(format!("meta.{name} is not 32 bytes of hex")))
}

fn open_conn(path: &Path) -> Result<Connection, EngineError> {
    let conn = Connection::open(path)?;
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
fn wait_for_lock(tries: i32) -> bool {
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

/// WAL size (in 4 KiB frames, so about 64 MiB) past which a checkpoint resets the WAL.
const WAL_RESET_FRAMES: i64 = 16_384;

/// Commits between two checkpoint requests.
const CHECKPOINT_EVERY: u64 = 200;

fn writer_loop(
    conn: Connection,
    rx: mpsc::Receiver<Job>,
    feed: ChangeFeed,
    answers: Arc<AnswerCache>,
    checkpoint: mpsc::SyncSender<()>,
) {
    const MAX_GROUP: usize = 512;
    let mut commits: u64 = 0;
    let mut cache = TaskCache::new();
    while let Ok(first) = rx.recv() {
        commits += 1;
        if commits.is_multiple_of(CHECKPOINT_EVERY) {
            let _ = checkpoint.try_send(());
        }
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        let mut ctx = WriteCtx {
            conn: &conn,
            changes: Vec::new(),
            mark: 0,
            cache: &mut cache,
            count_deltas: Vec::new(),
            count_mark: 0,
            touched: Vec::new(),
        };
        let mut deliveries = Vec::with_capacity(jobs.len());
        let began = match conn.execute_batch("BEGIN IMMEDIATE") {
            Ok(()) => true,
            Err(e) => {
                tracing::error!("store: cannot begin a write transaction: {e}");
                false
            }
        };
        // A write that fails must fail before its first change (see `Store::write`), so no
        // savepoint is needed per write. One that breaks this rule poisons the group: it is all
        // rolled back and every write in it is answered with an error, never half-applied.
        let mut poisoned = false;
        for job in jobs {
            let before = conn.total_changes();
            let (ok, deliver) = job(began.then_some(&mut ctx));
            if ok {
                ctx.finish_write();
            } else {
                if conn.total_changes() != before {
                    tracing::error!("a store write failed after changing rows; group rolled back");
                    poisoned = true;
                }
                ctx.abandon_write();
            }
            deliveries.push(deliver);
        }
        if began
            && !poisoned
            && let Err(e) = apply_count_deltas(&conn, &ctx.count_deltas)
        {
            tracing::error!("store: cannot update the task counts: {e}");
            poisoned = true;
        }
        let committed = began && !poisoned && conn.execute_batch("COMMIT").is_ok();
        if !committed {
            let _ = conn.execute_batch("ROLLBACK");
            ctx.cache.clear();
            tracing::error!("store commit failed; {} writes rejected", deliveries.len());
        } else {
            // Before anyone can learn of the commit (feed, acknowledgements).
            answers.invalidate(ctx.touched.iter().map(String::as_str));
            for p in ctx.changes.drain(..) {
                if let Some(task) = p.task {
                    feed.publish(Arc::new(Change {
                        event: p.event,
                        task,
                    }));
                }
            }
        }
        for deliver in deliveries {
            deliver(committed);
        }
    }
}

fn parse_json(s: String) -> Value {
    serde_json::from_str(&s).unwrap_or(Value::Null)
}

fn row_event(r: &rusqlite::Row<'_>) -> rusqlite::Result<TimelineEvent> {
    Ok(TimelineEvent {
        id: r.get(0)?,
        task_id: r.get(1)?,
        at_ms: r.get(2)?,
        kind: r.get(3)?,
        data: parse_json(r.get(4)?),
    })
}

macro_rules! task_columns {
    () => {
        "seq, task_id, tool, arguments, principal, status, status_message, created_at,
  last_updated_at, ttl_ms, poll_interval_ms, progress, result, error, cancel_requested"
    };
}
const TASK_COLUMNS: &str = task_columns!();

fn row_task(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRecord> {
    let status: String = r.get(5)?;
    Ok(TaskRecord {
        seq: r.get(0)?,
        task_id: r.get(1)?,
        tool: r.get(2)?,
        arguments: parse_json(r.get(3)?),
        principal: r.get(4)?,
        status: TaskStatus::parse(&status).unwrap_or(TaskStatus::Failed),
        status_message: r.get(6)?,
        created_at_ms: r.get(7)?,
        last_updated_at_ms: r.get(8)?,
        ttl_ms: r.get::<_, Option<i64>>(9)?.map(|t| t.max(0) as u64),
        poll_interval_ms: r.get::<_, i64>(10)?.max(0) as u64,
        progress: r
            .get::<_, Option<String>>(11)?
            .and_then(|s| serde_json::from_str::<Progress>(&s).ok()),
        result: r.get::<_, Option<String>>(12)?.map(parse_json),
        error: r.get::<_, Option<String>>(13)?.map(parse_json),
        input_requests: BTreeMap::new(),
        cancel_requested: r.get::<_, i64>(14)? != 0,
    })
}

/// Loads one task and, when it is `input_required`, its outstanding input requests.
fn load_task(c: &Connection, task_id: &str) -> Result<Option<TaskRecord>, EngineError> {
    let mut task = c
        .prepare_cached(concat!(
            "SELECT ",
            task_columns!(),
            " FROM tasks WHERE task_id = ?1"
        ))?
        .query_row(params![task_id], row_task)
        .optional()?;
    if let Some(t) = task
        .as_mut()
        .filter(|t| t.status == TaskStatus::InputRequired)
    {
        t.input_requests = outstanding_inputs(c, task_id)?;
    }
    Ok(task)
}

/// The `tasks/get` view of one task, read without decoding its stored JSON: returns the owner,
/// the status and the `GetTaskResult` object (SEP-2663 §Task Polling) as JSON text, with `result` and
/// `error` copied verbatim from the store. Same content as [`TaskRecord::wire_detailed`] plus
/// `resultType: "complete"`.
pub fn load_get_result_json(
    c: &Connection,
    task_id: &str,
) -> Result<Option<(String, TaskStatus, String)>, EngineError> {
    let row = c
        .prepare_cached(
            "SELECT principal, status, status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms,
               result, error FROM tasks WHERE task_id = ?1",
        )?
        .query_row(params![task_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?,
            ))
        })
        .optional()?;
    let Some((principal, status, message, created, updated, ttl, poll, result, error)) = row else {
        return Ok(None);
    };
    let status = TaskStatus::parse(&status).unwrap_or(TaskStatus::Failed);
    let quote = |s: &str| Value::String(s.to_string()).to_string();
    // Keys in the order serde_json's sorted maps print them.
    let mut out = String::with_capacity(256 + result.as_ref().map_or(0, String::len));
    out.push_str("{\"createdAt\":");
    out.push_str(&quote(&super::clock::iso8601(created)));
    if status == TaskStatus::Failed
        && let Some(error) = &error
    {
        out.push_str(",\"error\":");
        out.push_str(error);
    }
    if status == TaskStatus::InputRequired {
        out.push_str(",\"inputRequests\":");
        let reqs: serde_json::Map<String, Value> =
            outstanding_inputs(c, task_id)?.into_iter().collect();
        out.push_str(&Value::Object(reqs).to_string());
    }
    out.push_str(",\"lastUpdatedAt\":");
    out.push_str(&quote(&super::clock::iso8601(updated)));
    out.push_str(&format!(",\"pollIntervalMs\":{}", poll.max(0)));
    if status == TaskStatus::Completed {
        out.push_str(",\"result\":");
        push_complete_result(&mut out, result.as_deref().unwrap_or(r#"{"content":[]}"#));
    }
    out.push_str(",\"resultType\":\"complete\",\"status\":");
    out.push_str(&quote(status.as_str()));
    if let Some(m) = &message {
        out.push_str(",\"statusMessage\":");
        out.push_str(&quote(m));
    }
    out.push_str(",\"taskId\":");
    out.push_str(&quote(task_id));
    match ttl {
        Some(t) => out.push_str(&format!(",\"ttlMs\":{}}}", t.max(0))),
        None => out.push_str(",\"ttlMs\":null}"),
    }
    Ok(Some((principal, status, out)))
}

/// Appends a stored `CallToolResult` (JSON text) as a 2026-07-28 result: with
/// `resultType: "complete"` unless it has a `resultType` of its own, as
/// [`TaskRecord::wire_detailed`] inlines it.
fn push_complete_result(out: &mut String, result: &str) {
    match result.strip_prefix('{') {
        Some(rest) if !result.contains("\"resultType\"") => {
            out.push_str("{\"resultType\":\"complete\"");
            if !rest.trim_start().starts_with('}') {
                out.push(',');
            }
            out.push_str(rest);
        }
        _ => match serde_json::from_str::<Value>(result) {
            Ok(Value::Object(mut m)) => {
                m.entry("resultType")
                    .or_insert_with(|| Value::from("complete"));
                out.push_str(&Value::Object(m).to_string());
            }
            _ => out.push_str(result),
        },
    }
}

/// The outstanding input requests of a task, key → request.
pub fn outstanding_inputs(
    c: &Connection,
    task_id: &str,
) -> Result<BTreeMap<String, Value>, EngineError> {
    let mut stmt = c.prepare_cached(
        "SELECT key, request FROM input_requests WHERE task_id = ?1 AND state = 'outstanding'",
    )?;
    let rows = stmt.query_map(params![task_id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    let mut out = BTreeMap::new();
    for row in rows {
        let (k, v) = row?;
        out.insert(k, parse_json(v));
    }
    Ok(out)
}

/// The id of the newest timeline event (0 when there is none).
fn newest_event_id(c: &Connection) -> Result<i64, EngineError> {
    Ok(c.prepare_cached("SELECT ifnull(max(id), 0) FROM events")?
        .query_row([], |r| r.get(0))?)
}

/// See [`Store::counts`].
fn count_tasks(
    c: &Connection,
    filter: &ListFilter,
    indexed: bool,
) -> Result<BTreeMap<String, i64>, EngineError> {
    if filter.query.is_none() {
        let mut stmt = c.prepare_cached(
            "SELECT status, SUM(n) FROM task_counts
             WHERE (?1 IS NULL OR principal = ?1) AND (?2 IS NULL OR tool = ?2)
             GROUP BY status HAVING SUM(n) > 0",
        )?;
        let rows = stmt.query_map(params![filter.principal, filter.tool], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?;
        return Ok(rows.collect::<Result<_, _>>()?);
    }
    let (clause, args) = filter_clause(
        &ListFilter {
            statuses: Vec::new(),
            before_seq: None,
            ..filter.clone()
        },
        indexed,
    );
    let sql = format!("SELECT status, COUNT(*) FROM tasks WHERE 1=1{clause} GROUP BY status");
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The `AND ...` conditions and their arguments for `f` (statuses, tool, principal, query, cursor).
/// `indexed`: the connection has the search index attached (see [`search`]).
fn filter_clause(f: &ListFilter, indexed: bool) -> (String, Vec<rusqlite::types::Value>) {
    let mut sql = String::new();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if !f.statuses.is_empty() {
        let marks: Vec<&str> = f.statuses.iter().map(|_| "?").collect();
        sql.push_str(&format!(" AND status IN ({})", marks.join(",")));
        args.extend(f.statuses.iter().map(|s| s.as_str().to_string().into()));
    }
    if let Some(tool) = &f.tool {
        sql.push_str(" AND tool = ?");
        args.push(tool.clone().into());
    }
    if let Some(p) = &f.principal {
        sql.push_str(" AND principal = ?");
        args.push(p.clone().into());
    }
    if let Some(q) = f.query.as_ref().filter(|q| !q.is_empty()) {
        let pattern = format!(
            "%{}%",
            q.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        // Candidates: the index's matches, the tasks with more text than it holds, and every
        // task changed since its last pass.
        if let Some(candidates) = search::candidate_match(q).filter(|_| indexed) {
            let n = args.len() + 1;
            sql.push_str(&format!(
                " AND seq IN (SELECT rowid FROM search.task_text WHERE task_text MATCH ?{n}
                  UNION ALL SELECT seq FROM search.long_tasks
                  UNION ALL SELECT seq FROM tasks WHERE task_id IN (SELECT task_id FROM events
                    WHERE id > (SELECT ifnull(max(value), 0) FROM search.meta WHERE key = 'event_id')))"
            ));
            args.push(candidates.into());
        }
        let n = args.len() + 1;
        if q.is_ascii() {
            sql.push_str(&format!(
                " AND (tool LIKE ?{n} ESCAPE '\\' OR arguments LIKE ?{n} ESCAPE '\\'
                  OR COALESCE(status_message,'') LIKE ?{n} ESCAPE '\\' OR COALESCE(result,'') LIKE ?{n} ESCAPE '\\'
                  OR task_id LIKE ?{n} ESCAPE '\\')"
            ));
            args.push(pattern.into());
        } else {
            sql.push_str(&format!(
                " AND (td_contains(tool, ?{n}) OR td_contains(arguments, ?{n})
                  OR td_contains(status_message, ?{n}) OR td_contains(result, ?{n}))"
            ));
            args.push(search::fold_case(q).into());
        }
    }
    if let Some(before) = f.before_seq {
        sql.push_str(" AND seq < ?");
        args.push(before.into());
    }
    // Positional `?` after a numbered `?N` continue from N+1 in SQLite, so numbering stays right.
    (sql, args)
}

fn list_tasks(
    c: &Connection,
    f: &ListFilter,
    indexed: bool,
) -> Result<(Vec<TaskRecord>, Option<i64>), EngineError> {
    let (clause, args) = filter_clause(f, indexed);
    let mut sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE 1=1{clause}");
    let limit = f.limit.clamp(1, 1000);
    sql.push_str(&format!(" ORDER BY seq DESC LIMIT {}", limit + 1));
    // Positional `?` after a numbered `?N` continue from N+1 in SQLite, so numbering stays right.
    let mut stmt = c.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), row_task)?;
    let mut tasks: Vec<TaskRecord> = rows.collect::<Result<_, _>>()?;
    let next = if tasks.len() > limit {
        tasks.truncate(limit);
        tasks.last().map(|t| t.seq)
    } else {
        None
    };
    for t in tasks
        .iter_mut()
        .filter(|t| t.status == TaskStatus::InputRequired)
    {
        t.input_requests = outstanding_inputs(c, &t.task_id)?;
    }
    Ok((tasks, next))
}

/// Inserts a new task row (its `seq` is assigned and written back). `bytes` (for the store's
/// byte cap) is the stored size of its arguments, status message, result and error, plus 256.
fn insert_task(c: &Connection, t: &mut TaskRecord) -> Result<(), EngineError> {
    let arguments = t.arguments.to_string();
    let result = t.result.as_ref().map(Value::to_string);
    let error = t.error.as_ref().map(Value::to_string);
    let len = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let bytes = arguments.len() + len(&t.status_message) + len(&result) + len(&error) + 256;
    c.prepare_cached(
        "INSERT INTO tasks(task_id, tool, arguments, principal, status, status_message, created_at,
           last_updated_at, ttl_ms, expires_at, poll_interval_ms, progress, result, error,
           cancel_requested, bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?
    .execute(params![
        t.task_id,
        t.tool,
        arguments,
        t.principal,
        t.status.as_str(),
        t.status_message,
        t.created_at_ms,
        t.last_updated_at_ms,
        t.ttl_ms.map(|v| v as i64),
        t.ttl_ms.map(|v| t.created_at_ms + v as i64),
        t.poll_interval_ms as i64,
        t.progress
            .as_ref()
            .map(|p| serde_json::to_string(p).unwrap_or_default()),
        result,
        error,
        t.cancel_requested as i64,
        bytes as i64,
    ])?;
    t.seq = c.last_insert_rowid();
    Ok(())
}

/// The `bytes` assignment of [`save_task`]'s UPDATEs (?3 status message, ?8 result, ?9 error).
macro_rules! bytes_column {
    () => {
        "bytes = octet_length(arguments) + ifnull(octet_length(?3), 0)
           + ifnull(octet_length(?8), 0) + ifnull(octet_length(?9), 0) + 256"
    };
}

/// Writes back every mutable column of `t`; `bytes` is recomputed as in [`insert_task`].
///
/// When `ttl_ms` did not change, the TTL columns are left out of the UPDATE: SQLite rewrites an
/// index entry for every indexed column an UPDATE sets, even to the same value, and most writes
/// (progress, status messages, completion) keep the TTL.
fn save_task(c: &Connection, t: &TaskRecord) -> Result<(), EngineError> {
    let ttl = t.ttl_ms.map(|v| v as i64);
    let progress = t
        .progress
        .as_ref()
        .map(|p| serde_json::to_string(p).unwrap_or_default());
    let result = t.result.as_ref().map(Value::to_string);
    let error = t.error.as_ref().map(Value::to_string);
    let expires_at = ttl.map(|v| t.created_at_ms + v);
    let values = params![
        t.seq,
        t.status.as_str(),
        t.status_message,
        t.last_updated_at_ms,
        ttl,
        t.poll_interval_ms as i64,
        progress,
        result,
        error,
        t.cancel_requested as i64,
        expires_at,
    ];
    let kept_ttl = c
        .prepare_cached(concat!(
            "UPDATE tasks SET status = ?2, status_message = ?3, last_updated_at = ?4,
               poll_interval_ms = ?6, progress = ?7, result = ?8, error = ?9,
               cancel_requested = ?10, ",
            bytes_column!(),
            " WHERE seq = ?1 AND ttl_ms IS ?5"
        ))?
        .execute(&values[..10])?;
    if kept_ttl == 0 {
        c.prepare_cached(concat!(
            "UPDATE tasks SET status = ?2, status_message = ?3, last_updated_at = ?4, ttl_ms = ?5,
               expires_at = ?11, poll_interval_ms = ?6, progress = ?7, result = ?8, error = ?9,
               cancel_requested = ?10, ",
            bytes_column!(),
            " WHERE seq = ?1"
        ))?
        .execute(values)?;
    }
    Ok(())
}

/// Deletes a task with its events and input rounds.
/// Deletes a task's row, events and input rounds; returns the row's principal, tool and status
/// (`None` when there was no such task).
fn delete_task(
    c: &Connection,
    task_id: &str,
) -> Result<Option<(String, String, TaskStatus)>, EngineError> {
    let deleted = c
        .prepare_cached("DELETE FROM tasks WHERE task_id = ?1 RETURNING principal, tool, status")?
        .query_row(params![task_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
        })
        .optional()?;
    c.prepare_cached("DELETE FROM events WHERE task_id = ?1")?
        .execute(params![task_id])?;
    c.prepare_cached("DELETE FROM input_requests WHERE task_id = ?1")?
        .execute(params![task_id])?;
    Ok(deleted.map(|(principal, tool, status)| {
        let status = TaskStatus::parse(&status).unwrap_or(TaskStatus::Failed);
        (principal, tool, status)
    }))
}

/// One stored input round's key state: `(state, request, response)`.
pub fn input_key(
    c: &Connection,
    task_id: &str,
    key: &str,
) -> Result<Option<(String, Value, Option<Value>)>, EngineError> {
    Ok(c.prepare_cached(
        "SELECT state, request, response FROM input_requests WHERE task_id = ?1 AND key = ?2",
    )?
    .query_row(params![task_id, key], |r| {
        Ok((
            r.get::<_, String>(0)?,
            parse_json(r.get(1)?),
            r.get::<_, Option<String>>(2)?.map(parse_json),
        ))
    })
    .optional()?)
}

/// Records a new outstanding input request.
pub fn insert_input(
    c: &Connection,
    task_id: &str,
    key: &str,
    request: &Value,
    human_only: bool,
    at_ms: i64,
) -> Result<(), EngineError> {
    c.prepare_cached(
        "INSERT INTO input_requests(task_id, key, request, state, human_only, created_at) VALUES (?1, ?2, ?3, 'outstanding', ?4, ?5)",
    )?
    .execute(params![task_id, key, request.to_string(), human_only as i64, at_ms])?;
    Ok(())
}

/// The ttlMs a task was created with, as its `created` event recorded it: `Some(ttl)` (`ttl`
/// `None` = unlimited), or `None` for a task created before the event carried it. A task that
/// waited for a human gets its retention back from it.
pub fn created_ttl(c: &Connection, task_id: &str) -> Result<Option<Option<u64>>, EngineError> {
    let data: Option<String> = c
        .prepare_cached(
            "SELECT data FROM events WHERE task_id = ?1 AND kind = 'created' ORDER BY id LIMIT 1",
        )?
        .query_row(params![task_id], |r| r.get(0))
        .optional()?;
    Ok(data
        .map(parse_json)
        .and_then(|d| d.as_object().and_then(|o| o.get("ttlMs").cloned()))
        .map(|ttl| ttl.as_u64()))
}

/// True when the input request may only be answered by the human (the admin principal).
pub fn input_human_only(c: &Connection, task_id: &str, key: &str) -> Result<bool, EngineError> {
    Ok(
        c.prepare_cached("SELECT human_only FROM input_requests WHERE task_id = ?1 AND key = ?2")?
            .query_row(params![task_id, key], |r| r.get::<_, i64>(0))
            .optional()?
            .is_some_and(|v| v != 0),
    )
}

/// Marks an outstanding input request answered by `by` at `at_ms`.
pub fn answer_input(
    c: &Connection,
    task_id: &str,
    key: &str,
    response: &Value,
    by: &str,
    at_ms: i64,
) -> Result<(), EngineError> {
    c.prepare_cached(
        "UPDATE input_requests SET state = 'answered', response = ?3, answered_by = ?4, answered_at = ?5
         WHERE task_id = ?1 AND key = ?2 AND state = 'outstanding'",
    )?
    .execute(params![task_id, key, response.to_string(), by, at_ms])?;
    Ok(())
}

/// Marks outstanding input requests superseded (all of them when `key` is `None`).
pub fn supersede_inputs(
    c: &Connection,
    task_id: &str,
    key: Option<&str>,
) -> Result<Vec<String>, EngineError> {
    let keys: Vec<String> = outstanding_inputs(c, task_id)?
        .into_keys()
        .filter(|k| key.is_none_or(|key| key == k))
        .collect();
    for k in &keys {
        c.prepare_cached(
            "UPDATE input_requests SET state = 'superseded' WHERE task_id = ?1 AND key = ?2",
        )?
        .execute(params![task_id, k])?;
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn task(id: &str) -> TaskRecord {
        TaskRecord {
            task_id: id.to_string(),
            seq: 0,
            tool: "echo".into(),
            arguments: serde_json::json!({}),
            principal: "admin".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: 1,
            last_updated_at_ms: 1,
            ttl_ms: Some(1000),
            poll_interval_ms: 1000,
            progress: None,
            result: None,
            error: None,
            input_requests: BTreeMap::new(),
            cancel_requested: false,
        }
    }

    /// Past WAL_RESET_FRAMES the checkpoint thread resets the WAL even while writes and reads
    /// never stop (PASSIVE alone cannot: the file grew to 3.5 GB while a store was seeded).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_stays_bounded_under_constant_writes_and_reads() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let store =
            Arc::new(Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    store
                        .read(|c| {
                            Ok(c.query_row("SELECT count(*) FROM tasks", [], |r| {
                                r.get::<_, i64>(0)
                            })?)
                        })
                        .unwrap();
                }
            })
        };
        let wal = dir.path().join("taskdeck.sqlite3-wal");
        let note = "x".repeat(32 * 1024);
        let limit = (WAL_RESET_FRAMES * 4096) as u64;
        let mut largest = 0;
        // ~190 MiB of task rows: three times the size at which the WAL is reset.
        for i in 0..6_000 {
            let mut t = task(&format!("t{i:05}"));
            t.arguments = serde_json::json!({ "note": note });
            store
                .write(move |w| insert_task(w.conn, &mut t))
                .await
                .unwrap();
            if i % 50 == 0 {
                largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
            }
        }
        stop.store(true, Ordering::Relaxed);
        reader.join().unwrap();
        assert!(
            largest < limit * 3 / 2,
            "the WAL reached {largest} bytes (reset past {limit})"
        );
    }

    /// One write of a test group.    /// One write of a test group.
    type TestWrite = Box<dyn FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send>;

    /// Runs `writes` as one group: a first write holds the writer until all of them are queued.
    async fn one_group(store: &Store, writes: Vec<TestWrite>) -> Vec<Result<(), EngineError>> {
        let hold = store.write(|_| {
            std::thread::sleep(Duration::from_millis(300));
            Ok(())
        });
        let queued = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            futures::future::join_all(writes.into_iter().map(|f| store.write(f))).await
        };
        let (held, results) = tokio::join!(hold, queued);
        held.unwrap();
        results
    }

    /// A write that breaks the rule (it fails after a change): its whole group is rolled back.
    fn failing_halfway() -> TestWrite {
        Box::new(|w| {
            insert_task(w.conn, &mut task("b"))?;
            Err(EngineError::Invalid("failed halfway".into()))
        })
    }

    #[tokio::test]
    async fn a_write_failing_before_any_change_leaves_its_group_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
        let results = one_group(
            &store,
            vec![
                Box::new(|w| insert_task(w.conn, &mut task("a"))),
                Box::new(|_| Err(EngineError::NotFound)),
                Box::new(|w| insert_task(w.conn, &mut task("c"))),
            ],
        )
        .await;
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(matches!(results[1], Err(EngineError::NotFound)));
        assert!(store.get("a").unwrap().is_some() && store.get("c").unwrap().is_some());
    }

    /// `counts` (from `task_counts`) against a count of the rows themselves, for each filter.
    fn assert_counts_match_rows(store: &Store) {
        let filters = [
            (None, None),
            (Some("alice"), None),
            (Some("bob"), None),
            (None, Some("echo")),
            (None, Some("run")),
            (Some("bob"), Some("echo")),
            (Some("carol"), None),
        ];
        for (principal, tool) in filters {
            let filter = ListFilter {
                principal: principal.map(String::from),
                tool: tool.map(String::from),
                limit: 10,
                ..ListFilter::default()
            };
            let rows: BTreeMap<String, i64> = store
                .read(|c| {
                    let mut stmt = c.prepare(
                        "SELECT status, COUNT(*) FROM tasks WHERE (?1 IS NULL OR principal = ?1)
                         AND (?2 IS NULL OR tool = ?2) GROUP BY status",
                    )?;
                    let rows =
                        stmt.query_map(params![principal, tool], |r| Ok((r.get(0)?, r.get(1)?)))?;
                    Ok(rows.collect::<Result<_, _>>()?)
                })
                .unwrap();
            assert_eq!(
                store.counts(&filter).unwrap(),
                rows,
                "{principal:?} {tool:?}"
            );
        }
    }

    #[tokio::test]
    async fn counts_per_status_follow_inserts_transitions_deletes_and_failed_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
        fn make(id: &str, principal: &str, tool: &str) -> TaskRecord {
            let mut t = task(id);
            t.principal = principal.into();
            t.tool = tool.into();
            t
        }
        for (id, principal, tool) in [
            ("a1", "alice", "echo"),
            ("a2", "alice", "run"),
            ("b1", "bob", "echo"),
            ("b2", "bob", "echo"),
            ("b3", "bob", "run"),
        ] {
            let t = make(id, principal, tool);
            store.write(move |w| w.insert(t).map(drop)).await.unwrap();
        }
        let set_status = |id: &'static str, to: TaskStatus| {
            store.write(move |w| {
                let mut t = w.load(id)?.unwrap();
                let from = t.status;
                t.status = to;
                w.status_changed(&t, from);
                w.save(t).map(drop)
            })
        };
        set_status("a1", TaskStatus::Completed).await.unwrap();
        set_status("b1", TaskStatus::InputRequired).await.unwrap();
        set_status("b2", TaskStatus::Failed).await.unwrap();
        set_status("b1", TaskStatus::Working).await.unwrap();
        assert_counts_match_rows(&store);

        // A write that fails after queuing a status change (no row changed): its change is
        // forgotten, the others in its group count.
        let results = one_group(
            &store,
            vec![
                Box::new(|w| {
                    let t = w.load("a2")?.unwrap();
                    w.status_changed(
                        &TaskRecord {
                            status: TaskStatus::Cancelled,
                            ..t
                        },
                        TaskStatus::Working,
                    );
                    Err(EngineError::Invalid("changed its mind".into()))
                }),
                Box::new(|w| w.insert(make("c1", "carol", "echo")).map(drop)),
            ],
        )
        .await;
        assert!(results[0].is_err() && results[1].is_ok(), "{results:?}");
        assert_counts_match_rows(&store);
        // A write that fails after changing rows rolls its whole group back, counts included.
        let results = one_group(
            &store,
            vec![
                Box::new(|w| w.insert(make("c2", "carol", "run")).map(drop)),
                Box::new(|w| {
                    w.insert(make("c3", "carol", "echo"))?;
                    Err(EngineError::Invalid("half done".into()))
                }),
            ],
        )
        .await;
        assert!(results.iter().all(Result::is_err), "{results:?}");
        assert_counts_match_rows(&store);

        store.write(|w| w.delete("b3")).await.unwrap();
        store.write(|w| w.delete("no-such-task")).await.unwrap();
        assert_counts_match_rows(&store);
        let all = store.counts(&ListFilter::default()).unwrap();
        assert_eq!(all.values().sum::<i64>(), 5, "{all:?}");

        // A store whose counts were never taken (or were lost) gets them from its rows.
        store
            .read(|c| {
                c.execute_batch(
                    "DELETE FROM meta WHERE key = 'task_counts'; UPDATE task_counts SET n = 99;",
                )?;
                Ok(())
            })
            .unwrap();
        drop(store);
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
        assert_counts_match_rows(&store);
    }

    #[test]
    fn a_store_from_before_human_only_gets_the_column() {
        let dir = tempfile::tempdir().unwrap();
        {
            let old = Connection::open(dir.path().join("taskdeck.sqlite3")).unwrap();
            old.execute_batch(
                "CREATE TABLE input_requests(task_id TEXT NOT NULL, key TEXT NOT NULL,
                   request TEXT NOT NULL, state TEXT NOT NULL, response TEXT, answered_by TEXT,
                   answered_at INTEGER, created_at INTEGER NOT NULL, PRIMARY KEY(task_id, key))
                   WITHOUT ROWID;
                 INSERT INTO input_requests(task_id, key, request, state, created_at)
                   VALUES ('old', 'k', '{}', 'outstanding', 1);",
            )
            .unwrap();
        }
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
        store
            .read(|c| {
                assert!(
                    !input_human_only(c, "old", "k")?,
                    "old rows default to false"
                );
                Ok(())
            })
            .unwrap();
        let c = open_conn(store.path()).unwrap();
        insert_input(&c, "new", "k", &serde_json::json!({}), true, 2).unwrap();
        assert!(input_human_only(&c, "new", "k").unwrap());
    }

    #[tokio::test]
    async fn a_write_failing_after_a_change_rolls_back_its_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let feed = ChangeFeed::new(64);
        let mut changes = feed.subscribe();
        let store = Store::open(dir.path(), Durability::Process, feed).unwrap();
        let results = one_group(
            &store,
            vec![
                Box::new(|w| {
                    let t = task("a");
                    insert_task(w.conn, &mut t.clone())?;
                    w.event(&t, 1, "created", serde_json::json!({}))?;
                    Ok(())
                }),
                failing_halfway(),
            ],
        )
        .await;
        assert!(
            matches!(&results[0], Err(EngineError::Store(_))),
            "{results:?}"
        );
        assert!(matches!(&results[1], Err(EngineError::Invalid(_))));
        assert!(store.get("a").unwrap().is_none() && store.get("b").unwrap().is_none());
        assert!(changes.try_recv().is_err(), "nothing is published");
        // The writer goes on with the next group.
        store
            .write(|w| insert_task(w.conn, &mut task("d")))
            .await
            .unwrap();
        assert!(store.get("d").unwrap().is_some());
    }

    #[tokio::test]
    async fn the_writers_copies_follow_rollbacks_and_changes_carry_the_saved_state() {
        let dir = tempfile::tempdir().unwrap();
        let feed = ChangeFeed::new(64);
        let mut changes = feed.subscribe();
        let store = Store::open(dir.path(), Durability::Process, feed).unwrap();
        let mut a = task("a");
        a.status = TaskStatus::Working;
        store.write(move |w| w.insert(a).map(drop)).await.unwrap();
        // A save in a group that is rolled back must not survive in the writer's copy.
        let results = one_group(
            &store,
            vec![
                Box::new(|w| {
                    let mut t = w.load("a")?.unwrap();
                    t.status_message = Some("rolled back".into());
                    w.save(t).map(drop)
                }),
                failing_halfway(),
            ],
        )
        .await;
        assert!(results.iter().all(Result::is_err), "{results:?}");
        let seen = store
            .write(|w| Ok(w.load("a")?.unwrap().status_message))
            .await
            .unwrap();
        assert_eq!(seen, None, "the writer reads the committed row again");
        // An event queued before the save carries the task as the write leaves it.
        store
            .write(|w| {
                let mut t = w.load("a")?.unwrap();
                w.event(&t, 2, "statusMessage", serde_json::json!({}))?;
                t.status_message = Some("final".into());
                w.save(t).map(drop)
            })
            .await
            .unwrap();
        let change = changes.try_recv().unwrap();
        assert_eq!(change.event.kind, "statusMessage");
        assert_eq!(change.task.status_message.as_deref(), Some("final"));
        assert_eq!(
            store.get("a").unwrap().unwrap().status_message.as_deref(),
            Some("final")
        );
    }

    #[tokio::test]
    async fn cached_get_answers_follow_every_committed_write_and_no_rolled_back_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(64)).unwrap();
        let status = |store: &Store| {
            let answer = store.get_answer("a").unwrap()?;
            let v: Value = serde_json::from_str(&answer.json).unwrap();
            Some(v["status"].as_str().unwrap().to_string())
        };
        store
            .write(|w| w.insert(task("a")).map(drop))
            .await
            .unwrap();
        assert_eq!(status(&store).as_deref(), Some("working"));
        assert_eq!(store.inner.answers.len(), 1, "the answer is cached");
        // A rolled-back save changes nothing, in the store or the cache.
        let results = one_group(
            &store,
            vec![
                Box::new(|w| {
                    let mut t = w.load("a")?.unwrap();
                    t.status = TaskStatus::Completed;
                    w.save(t).map(drop)
                }),
                failing_halfway(),
            ],
        )
        .await;
        assert!(results.iter().all(Result::is_err), "{results:?}");
        assert_eq!(status(&store).as_deref(), Some("working"));
        // An input request (written with SQL of its own, then logged) shows at once.
        store
            .write(|w| {
                let mut t = w.load("a")?.unwrap();
                insert_input(
                    w.conn,
                    "a",
                    "k",
                    &serde_json::json!({"method": "elicitation/create"}),
                    false,
                    2,
                )?;
                t.status = TaskStatus::InputRequired;
                w.event(&t, 2, "inputRequested", serde_json::json!({"key": "k"}))?;
                w.save(t).map(drop)
            })
            .await
            .unwrap();
        assert_eq!(status(&store).as_deref(), Some("input_required"));
        let answer = store.get_answer("a").unwrap().unwrap();
        assert!(
            answer.json.contains("\"inputRequests\":{\"k\""),
            "{}",
            answer.json
        );
        store
            .write(|w| {
                let mut t = w.load("a")?.unwrap();
                answer_input(
                    w.conn,
                    "a",
                    "k",
                    &serde_json::json!({"action": "accept"}),
                    "admin",
                    3,
                )?;
                t.status = TaskStatus::Completed;
                t.input_requests.clear();
                t.result = Some(serde_json::json!({"content": []}));
                w.event(&t, 3, "status", serde_json::json!({}))?;
                w.save(t).map(drop)
            })
            .await
            .unwrap();
        assert_eq!(status(&store).as_deref(), Some("completed"));
        store.write(|w| w.delete("a")).await.unwrap();
        assert_eq!(status(&store), None, "a deleted task is not found");
    }
}

//! What a store write sees: [`WriteCtx`], the group transaction's connection plus the changes
//! the group will publish, the writer's copies of live tasks, and the per-status counts the
//! group moves. Writes read, insert, save and delete tasks through it.

use std::{
    collections::{BTreeMap, HashMap},
    sync::Arc,
};

use rusqlite::{Connection, params};
use serde_json::Value;

use super::tasks::{DeletedTask, delete_task, insert_task, load_task, save_task};
use crate::{EngineError, TaskRecord, TaskStatus, TimelineEvent, model::ERROR_COUNT_KEY};

/// What a write sees: the connection (inside the group transaction), the changes it will
/// publish after the commit, and the writer's copies of recently written `working` tasks.
///
/// Writes read, insert, save and delete tasks through this context, never with SQL of their
/// own on `conn` (which they use for input requests and idempotency keys only): that keeps the
/// copies equal to the rows.
pub struct WriteCtx<'c> {
    /// The store's connection, inside the group's transaction.
    pub conn: &'c Connection,
    /// The group's changes, published in this order once the group committed.
    pub(super) changes: Vec<QueuedChange>,
    /// Where the current write's changes start in `changes`.
    mark: usize,
    pub(super) cache: &'c mut WorkingTasks,
    /// The group's changes to `task_counts`, applied just before the commit
    /// ([`Self::apply_count_deltas`]).
    count_deltas: Vec<CountDelta>,
    /// Where the current write's entries start in `count_deltas`.
    count_mark: usize,
    /// Every task this group inserted, saved, deleted or logged an event for: their cached
    /// `tasks/get` answers are invalidated after the commit ([`AnswerCache::invalidate`](crate::answer_cache::AnswerCache::invalidate)).
    pub(super) touched: Vec<String>,
}

/// One change to `task_counts`: `n` (+1 or -1) tasks of `principal` and `tool` under `key`: a
/// status name, or [`ERROR_COUNT_KEY`] for a completed task whose result is an error.
struct CountDelta {
    principal: String,
    tool: String,
    key: &'static str,
    n: i64,
}

/// A change queued by the write in progress. Its task snapshot is the task as that write
/// leaves it: set when the write saves the task, or by the writer once the write returns.
pub(super) struct QueuedChange {
    pub(super) event: TimelineEvent,
    pub(super) task: Option<Arc<TaskRecord>>,
}

/// The writer's copies of the `working` tasks it wrote last, so that the next write of a live
/// task (progress, status message, completion) does not read it back from SQLite. Only tasks
/// without outstanding input requests are kept (their row is the whole record). Emptied when
/// a write fails or a group is rolled back, and when it reaches [`WORKING_TASKS_CAP`] entries.
pub(super) type WorkingTasks = HashMap<String, Arc<TaskRecord>>;

/// How long the `deleted` event of a deleted task is kept (ms): an event stream resumed within
/// this time still removes the task ([`WriteCtx::delete`]).
pub const DELETED_EVENTS_KEPT_MS: i64 = 24 * 60 * 60 * 1000;

/// Entries of [`WorkingTasks`] (about 1 KiB each with small arguments) before it is emptied.
const WORKING_TASKS_CAP: usize = 8_192;

impl<'c> WriteCtx<'c> {
    /// The context of a new group on `conn` (inside its transaction), with the writer's copies.
    pub(super) fn new(conn: &'c Connection, cache: &'c mut WorkingTasks) -> WriteCtx<'c> {
        WriteCtx {
            conn,
            changes: Vec::new(),
            mark: 0,
            cache,
            count_deltas: Vec::new(),
            count_mark: 0,
            touched: Vec::new(),
        }
    }

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
            .execute(params![task.task_id, task.principal, at_ms, kind, super::json_text(&data)])?;
        self.touched.push(task.task_id.clone());
        let event = TimelineEvent {
            id: self.conn.last_insert_rowid(),
            task_id: task.task_id.clone(),
            at_ms,
            kind: kind.to_string(),
            data,
        };
        self.changes.push(QueuedChange { event, task: None });
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
        self.count(&task.principal, &task.tool, task.status.as_str(), 1);
        if task.is_error() {
            self.count(&task.principal, &task.tool, ERROR_COUNT_KEY, 1);
        }
        Ok(self.settle(task))
    }

    /// Records that `task` (already given its new status) left status `from`, for the counts
    /// per status. Every status change goes through the engine's `transition`, which calls it
    /// with the result already set, so a task that completes with an error result is counted
    /// under [`ERROR_COUNT_KEY`] too (terminal tasks never change, so it stays counted until
    /// it is deleted).
    pub fn status_changed(&mut self, task: &TaskRecord, from: TaskStatus) {
        if from != task.status {
            self.count(&task.principal, &task.tool, from.as_str(), -1);
            self.count(&task.principal, &task.tool, task.status.as_str(), 1);
            if task.is_error() {
                self.count(&task.principal, &task.tool, ERROR_COUNT_KEY, 1);
            }
        }
    }

    fn count(&mut self, principal: &str, tool: &str, key: &'static str, n: i64) {
        self.count_deltas.push(CountDelta {
            principal: principal.to_string(),
            tool: tool.to_string(),
            key,
            n,
        });
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
        let Some(DeletedTask {
            principal,
            tool,
            status,
        }) = delete_task(self.conn, task_id)?
        else {
            return Ok(());
        };
        self.count(&principal, &tool, status.as_str(), -1);
        if last.as_ref().is_some_and(TaskRecord::is_error) {
            self.count(&principal, &tool, ERROR_COUNT_KEY, -1);
        }
        let at_ms = crate::clock::now_ms();
        let data =
            serde_json::json!({"status": status.as_str(), "tool": tool, "principal": principal});
        self.conn
            .prepare_cached(
                "INSERT INTO events(task_id, principal, at, kind, data) VALUES (?1, ?2, ?3, 'deleted', ?4)",
            )?
            .execute(params![task_id, principal, at_ms, super::json_text(&data)])?;
        let event = TimelineEvent {
            id: self.conn.last_insert_rowid(),
            task_id: task_id.to_string(),
            at_ms,
            kind: "deleted".into(),
            data,
        };
        self.changes.push(QueuedChange {
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
            if self.cache.len() >= WORKING_TASKS_CAP {
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
    pub(super) fn finish_write(&mut self) {
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
    pub(super) fn abandon_write(&mut self) {
        self.changes.truncate(self.mark);
        self.count_deltas.truncate(self.count_mark);
        self.cache.clear();
    }

    /// Adds the group's count changes to `task_counts` (one upsert per distinct principal, tool
    /// and key; a group of ~70 writes touches two or three). Called once, before the commit.
    pub(super) fn apply_count_deltas(&self) -> Result<(), EngineError> {
        let mut sums: BTreeMap<(&str, &str, &str), i64> = BTreeMap::new();
        for d in &self.count_deltas {
            *sums.entry((&d.principal, &d.tool, d.key)).or_default() += d.n;
        }
        let mut stmt = self.conn.prepare_cached(
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
}

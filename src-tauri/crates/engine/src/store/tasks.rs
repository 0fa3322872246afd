//! Task rows: reading a task (with its outstanding input requests), inserting, saving and
//! deleting one, and the store's queries over whole tasks (restart recovery, expiry, caps).

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{Store, in_one_snapshot, input_requests::outstanding_inputs, parse_json};
use crate::{EngineError, TaskRecord, TaskStatus, model::Progress};

impl Store {
    /// Loads one task (with its outstanding input requests), or `None`.
    pub fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, EngineError> {
        self.read(|c| load_task(c, task_id))
    }

    /// Tasks that are not terminal (for restart recovery), oldest first.
    pub fn unsettled(&self) -> Result<Vec<TaskRecord>, EngineError> {
        self.read_snapshot(|c| {
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

    /// Number of tasks, from `task_counts` (kept by the writer, ARCHITECTURE.md invariant 10):
    /// a few rows at any size, where `COUNT(*)` over `tasks` reads the whole table (0.2-1 s
    /// at 1,000,000 tasks). Errors: [`EngineError::Store`].
    pub fn task_count(&self) -> Result<i64, EngineError> {
        self.read(|c| {
            Ok(
                c.prepare_cached("SELECT ifnull(SUM(n), 0) FROM task_counts WHERE status != ?1")?
                    .query_row([crate::model::ERROR_COUNT_KEY], |r| r.get(0))?,
            )
        })
    }

    /// Oldest terminal tasks last changed before `settled_before_ms` (ms since the epoch),
    /// `limit` of them: the first to go when a cap is exceeded.
    pub fn oldest_terminal(
        &self,
        limit: usize,
        settled_before_ms: i64,
    ) -> Result<Vec<String>, EngineError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT task_id FROM tasks WHERE status IN ('completed','failed','cancelled')
                 AND last_updated_at < ?2 ORDER BY seq LIMIT ?1",
            )?;
            let rows = stmt.query_map(params![limit as i64, settled_before_ms], |r| r.get(0))?;
            rows.map(|r| r.map_err(EngineError::from)).collect()
        })
    }
}

/// The task columns [`row_task`] reads, as a literal for `concat!`.
macro_rules! task_columns {
    () => {
        "seq, task_id, tool, arguments, principal, status, status_message, created_at,
  last_updated_at, ttl_ms, poll_interval_ms, progress, result, error, cancel_requested"
    };
}
/// The columns [`row_task`] reads, in its order.
pub(super) const TASK_COLUMNS: &str = task_columns!();

/// A task from a row of [`TASK_COLUMNS`] (without its input requests).
pub(super) fn row_task(r: &rusqlite::Row<'_>) -> rusqlite::Result<TaskRecord> {
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

/// Loads one task and, when it is `input_required`, its outstanding input requests, both from
/// one commit: a task is never seen `input_required` without the requests it waits for (an
/// answer committed between the two reads would remove them).
pub(super) fn load_task(c: &Connection, task_id: &str) -> Result<Option<TaskRecord>, EngineError> {
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
        // Read again in one snapshot, unless already in one: this read is the rare one, and
        // the common one (a task not waiting) pays for no transaction.
        if c.is_autocommit() {
            return in_one_snapshot(c, |c| load_task(c, task_id));
        }
        t.input_requests = outstanding_inputs(c, task_id)?;
    }
    Ok(task)
}

/// Inserts a new task row (its `seq` is assigned and written back). `bytes` (for the store's
/// byte cap) is the stored size of its arguments, status message, result and error, plus 256.
pub(super) fn insert_task(c: &Connection, t: &mut TaskRecord) -> Result<(), EngineError> {
    let arguments = super::json_text(&t.arguments);
    let result = t.result.as_ref().map(super::json_text);
    let error = t.error.as_ref().map(super::json_text);
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
        t.ttl_ms.map(ttl_column),
        t.ttl_ms
            .map(|v| t.created_at_ms.saturating_add(ttl_column(v))),
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

/// Replaces the stored arguments of task `seq` (an approved edit of its call), its `bytes`
/// recomputed as in [`insert_task`].
pub(crate) fn set_arguments(
    c: &Connection,
    seq: i64,
    arguments: &Value,
) -> Result<(), EngineError> {
    let text = super::json_text(arguments);
    c.prepare_cached(
        "UPDATE tasks SET bytes = bytes - octet_length(arguments) + octet_length(?2),
           arguments = ?2 WHERE seq = ?1",
    )?
    .execute(params![seq, text])?;
    Ok(())
}

/// Writes back every mutable column of `t`; `bytes` is recomputed as in [`insert_task`].
///
/// When `status` or `ttl_ms` did not change, their columns are left out of the UPDATE: SQLite
/// rewrites an index entry for every indexed column an UPDATE sets, even to the same value, and
/// most writes keep both (progress and status messages) or the TTL (completion). A write
/// that changed one of them first finds its row with the other value (one lookup by `seq`).
pub(super) fn save_task(c: &Connection, t: &TaskRecord) -> Result<(), EngineError> {
    let ttl = t.ttl_ms.map(ttl_column);
    let progress = t
        .progress
        .as_ref()
        .map(|p| serde_json::to_string(p).unwrap_or_default());
    let result = t.result.as_ref().map(super::json_text);
    let error = t.error.as_ref().map(super::json_text);
    let expires_at = ttl.map(|v| t.created_at_ms.saturating_add(v));
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
    // Most writes (progress, status messages) keep the status too: its index entry is left
    // alone when it did not change.
    let kept_status_and_ttl = c
        .prepare_cached(concat!(
            "UPDATE tasks SET status_message = ?3, last_updated_at = ?4,
               poll_interval_ms = ?6, progress = ?7, result = ?8, error = ?9,
               cancel_requested = ?10, ",
            bytes_column!(),
            " WHERE seq = ?1 AND ttl_ms IS ?5 AND status = ?2"
        ))?
        .execute(&values[..10])?;
    if kept_status_and_ttl == 1 {
        return Ok(());
    }
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

/// What [`delete_task`] deleted: the row's owner, tool and status.
pub(super) struct DeletedTask {
    pub(super) principal: String,
    pub(super) tool: String,
    pub(super) status: TaskStatus,
}

/// Deletes a task's row, events and input rounds; `None` when there was no such task.
pub(super) fn delete_task(
    c: &Connection,
    task_id: &str,
) -> Result<Option<DeletedTask>, EngineError> {
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
    Ok(deleted.map(|(principal, tool, status)| DeletedTask {
        principal,
        tool,
        status: TaskStatus::parse(&status).unwrap_or(TaskStatus::Failed),
    }))
}

/// A ttl in ms as stored (SQLite integers are i64): one beyond `i64::MAX` is `i64::MAX`, and an
/// expiry past it is `i64::MAX` too (never, in practice), so no ttl overflows the writer.
fn ttl_column(ttl_ms: u64) -> i64 {
    i64::try_from(ttl_ms).unwrap_or(i64::MAX)
}

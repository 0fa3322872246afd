//! The timeline: every task's events (`events`), read by task, by id range (to resume the
//! change feed), for the ttlMs a task was created with and for why its cancel was requested.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{Store, parse_json};
use crate::{EngineError, TimelineEvent};

impl Store {
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

/// The id of the newest timeline event (0 when there is none).
pub(super) fn newest_event_id(c: &Connection) -> Result<i64, EngineError> {
    Ok(c.prepare_cached("SELECT ifnull(max(id), 0) FROM events")?
        .query_row([], |r| r.get(0))?)
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

/// Why the newest cancellation of a task was requested: its `cancelRequested` event's
/// `reason`, else who asked for it (`"Cancelled by alice"`, from the event's `by`). `None`
/// when no cancellation was requested.
pub fn cancel_reason(c: &Connection, task_id: &str) -> Result<Option<String>, EngineError> {
    let data: Option<String> = c
        .prepare_cached(
            "SELECT data FROM events WHERE task_id = ?1 AND kind = 'cancelRequested' \
             ORDER BY id DESC LIMIT 1",
        )?
        .query_row(params![task_id], |r| r.get(0))
        .optional()?;
    Ok(data.map(parse_json).map(|d| {
        match (
            d.get("reason").and_then(Value::as_str),
            d.get("by").and_then(Value::as_str),
        ) {
            (Some(reason), _) => reason.to_string(),
            (None, Some(by)) => format!("Cancelled by {by}"),
            (None, None) => "Cancelled on request".to_string(),
        }
    }))
}

//! Input rounds (`input_requests`): the questions a task asks while `input_required`, and
//! their answers. Engine writes call these functions on [`super::WriteCtx::conn`] inside the
//! group transaction; a round is never deleted before its task.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use super::{Store, parse_json};
use crate::{EngineError, model::InputRound};

impl Store {
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
    .execute(params![task_id, key, super::json_text(request), human_only as i64, at_ms])?;
    Ok(())
}

/// True when the input request may only be answered by a person (the admin or a human).
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
    .execute(params![task_id, key, super::json_text(response), by, at_ms])?;
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

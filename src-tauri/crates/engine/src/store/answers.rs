//! The `tasks/get` answers (SEP-2663 §Task Polling) the store serves from its answer cache:
//! read from the task's columns without decoding its stored result or error, rendered by the
//! one renderer ([`DetailedTask`]), and kept until a commit touches the task.

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Store, in_one_snapshot, input_requests::outstanding_inputs};
use crate::{
    EngineError, TaskStatus,
    answer_cache::CachedAnswer,
    detailed_task::{DetailedTask, StoredJson},
};

impl Store {
    /// The owner, status and `GetTaskResult` JSON of one task (see `read_answer`), or `None`,
    /// from the answer cache when it holds the task, else read and cached. Errors:
    /// [`EngineError::Store`].
    pub fn get_answer(&self, task_id: &str) -> Result<Option<Arc<CachedAnswer>>, EngineError> {
        let seen = match self.state.answers.get(task_id) {
            Ok(answer) => return Ok(Some(answer)),
            Err(seen) => seen,
        };
        let Some(answer) = self.read(|c| read_answer(c, task_id))? else {
            return Ok(None);
        };
        let answer = Arc::new(answer);
        self.state.answers.fill(task_id, answer.clone(), seen);
        Ok(Some(answer))
    }
}

/// The columns of a task that its `tasks/get` answer shows, as stored.
struct AnswerRow {
    principal: String,
    status: TaskStatus,
    status_message: Option<String>,
    created_at_ms: i64,
    last_updated_at_ms: i64,
    ttl_ms: Option<i64>,
    poll_interval_ms: i64,
    /// JSON text.
    result: Option<String>,
    /// JSON text.
    error: Option<String>,
}

/// The `tasks/get` answer of one task, read in one statement (two while it waits for input):
/// its owner, its status and the `GetTaskResult` object as JSON text, with `result` and `error`
/// copied verbatim from the store. `None` when there is no such task.
fn read_answer(c: &Connection, task_id: &str) -> Result<Option<CachedAnswer>, EngineError> {
    let row = c
        .prepare_cached(
            "SELECT principal, status, status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms,
               result, error FROM tasks WHERE task_id = ?1",
        )?
        .query_row(params![task_id], |r| {
            Ok(AnswerRow {
                principal: r.get(0)?,
                status: TaskStatus::parse(&r.get::<_, String>(1)?).unwrap_or(TaskStatus::Failed),
                status_message: r.get(2)?,
                created_at_ms: r.get(3)?,
                last_updated_at_ms: r.get(4)?,
                ttl_ms: r.get(5)?,
                poll_interval_ms: r.get(6)?,
                result: r.get(7)?,
                error: r.get(8)?,
            })
        })
        .optional()?;
    let Some(row) = row else {
        return Ok(None);
    };
    // The row and the requests from one commit, as in `load_task` (read again in a snapshot).
    let input_requests = match row.status {
        TaskStatus::InputRequired if c.is_autocommit() => {
            return in_one_snapshot(c, |c| read_answer(c, task_id));
        }
        TaskStatus::InputRequired => Some(outstanding_inputs(c, task_id)?),
        _ => None,
    };
    let json = DetailedTask {
        task_id,
        status: row.status,
        status_message: row.status_message.as_deref(),
        created_at_ms: row.created_at_ms,
        last_updated_at_ms: row.last_updated_at_ms,
        ttl_ms: row.ttl_ms.map(|t| t.max(0) as u64),
        poll_interval_ms: row.poll_interval_ms.max(0) as u64,
        input_requests: input_requests.as_ref(),
        result: row.result.as_deref().map(StoredJson::Text),
        error: row.error.as_deref().map(StoredJson::Text),
    }
    .get_result_json();
    Ok(Some(CachedAnswer::new(row.principal, row.status, json)))
}

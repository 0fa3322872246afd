//! Waiting briefly for a task before answering the call that created it: a tool in
//! [`ToolMode::Settle`](taskdeck_engine::ToolMode::Settle) (an upstream tool behind the
//! gateway) is answered with its result when it settles within its time, and with the task
//! otherwise. "Settled" means terminal; a task that asks for input is not waited on further.

use std::{sync::Arc, time::Duration};

use super::{
    agent_view::{self, Reader},
    task_watch::{TaskChange, TaskWatch},
};
use serde_json::{Map, Value};
use taskdeck_engine::{Engine, Principal, TaskRecord, TaskStatus};

/// `task` as it is once it ends or asks for input, or after `within_ms` milliseconds, whichever
/// comes first. Told of the task's changes by `watch`; never polls.
pub async fn settle(
    engine: &Engine,
    watch: &Arc<TaskWatch>,
    principal: &Principal,
    task: Arc<TaskRecord>,
    within_ms: u64,
) -> Arc<TaskRecord> {
    let mut watching = watch.watch(&task.task_id);
    // Changes before the watch began are in the store.
    let mut now = engine
        .get(principal, &task.task_id)
        .map(Arc::new)
        .unwrap_or(task);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(within_ms);
    while !done_waiting(&now) {
        match tokio::time::timeout_at(deadline, watching.changes.recv()).await {
            Err(_) | Ok(None) => break,
            Ok(Some(TaskChange::Changed(t))) => now = t,
            Ok(Some(TaskChange::Resync)) => {
                if let Ok(t) = engine.get(principal, &now.task_id) {
                    now = Arc::new(t);
                }
            }
        }
    }
    now
}

/// `task` with the status and status message `reader` is shown (`agent_view`): a task waiting
/// only for the human reads `working` to an agent. For answering a call with the task.
pub fn as_seen(engine: &Engine, task: Arc<TaskRecord>, reader: Reader) -> Arc<TaskRecord> {
    if task.status != TaskStatus::InputRequired {
        return task;
    }
    let human_only = engine.human_only_inputs(&task).unwrap_or_default();
    let (status, message) = agent_view::status(&task, &human_only, reader);
    let mut seen = (*task).clone();
    seen.status = status;
    seen.status_message = message;
    Arc::new(seen)
}

fn done_waiting(task: &TaskRecord) -> bool {
    task.status.is_terminal() || task.status == TaskStatus::InputRequired
}

/// What the call is answered with when `task` settled: `Ok(CallToolResult)` for a completed
/// task, with `resultType: "complete"` (2026-07-28 requires it in every result; rmcp drops it
/// for 2025-11-25 peers), `Err(JSON-RPC error object)` for a failed or cancelled one; `None`
/// while it runs or waits for input (answer with the task).
pub fn settled_answer(task: &TaskRecord) -> Option<Result<Map<String, Value>, Map<String, Value>>> {
    match task.status {
        TaskStatus::Completed => {
            let mut result = task
                .result
                .as_ref()
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            result.insert("resultType".into(), "complete".into());
            Some(Ok(result))
        }
        TaskStatus::Failed => Some(Err(task
            .error
            .as_ref()
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default())),
        TaskStatus::Cancelled => {
            let mut e = Map::new();
            e.insert("code".into(), (-32603).into());
            e.insert("message".into(), "The call was cancelled".into());
            Some(Err(e))
        }
        TaskStatus::Working | TaskStatus::InputRequired => None,
    }
}

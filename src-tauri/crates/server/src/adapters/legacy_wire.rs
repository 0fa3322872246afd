//! Wire shapes of the 2025-11-25 task path (the task-augmented requests of MCP 2025-11-25,
//! `basic/utilities/tasks`): the `Task` object, `CreateTaskResult`, and what `tasks/result`
//! answers. The same engine record as SEP-2663's shapes in `wire.rs`, another spelling.

use serde_json::{Map, Value, json};

use taskdeck_engine::{TaskRecord, TaskStatus};

/// `_meta` key tying a message to its task (2025-11-25 §Associating Task-Related Messages).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The 2025-11-25 `Task`: `{taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttl,
/// pollInterval}` (ms; `ttl: null` = unlimited), with the status and statusMessage the reader
/// is shown (`agent_view::status`). A tool result with `isError: true` stays `completed`, as in
/// SEP-2663, although 2025-11-25 §Task Status suggests `failed`: the TypeScript SDK 1.x
/// (`callToolStream`) fetches `tasks/result` only for a completed task, so a `failed` one would
/// never give the agent the tool's result (exit code, output).
pub fn task(task: &TaskRecord, shown: TaskStatus, message: Option<String>) -> Map<String, Value> {
    let base = task.wire_task();
    let mut m = Map::with_capacity(7);
    m.insert("taskId".into(), json!(task.task_id));
    m.insert("status".into(), json!(shown.as_str()));
    if let Some(msg) = message {
        m.insert("statusMessage".into(), json!(msg));
    }
    m.insert("createdAt".into(), base["createdAt"].clone());
    m.insert("lastUpdatedAt".into(), base["lastUpdatedAt"].clone());
    m.insert("ttl".into(), base["ttlMs"].clone());
    m.insert("pollInterval".into(), base["pollIntervalMs"].clone());
    m
}

/// What `tasks/result` answers for a terminal task: `Ok(CallToolResult)` exactly as the tool
/// returned it, with `_meta[related-task] = {taskId}`; `Err(JSON-RPC error)` for a failed task
/// (the error the call would have returned) and for a cancelled one (`-32603`,
/// `data.status: "cancelled"`: a cancelled call has no result). `None` while it runs.
pub fn call_result(task: &TaskRecord) -> Option<Result<Value, Value>> {
    match task.status {
        TaskStatus::Completed => {
            let mut result = task
                .result
                .clone()
                .unwrap_or_else(|| json!({"content": []}));
            if let Some(r) = result.as_object_mut() {
                r.remove("resultType");
                let meta = r.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.into(), json!({"taskId": task.task_id}));
                }
            }
            Some(Ok(result))
        }
        TaskStatus::Failed => Some(Err(task
            .error
            .clone()
            .unwrap_or_else(|| json!({"code": -32603, "message": "failed"})))),
        TaskStatus::Cancelled => Some(Err(json!({
            "code": -32603,
            "message": format!("Task {} was cancelled", task.task_id),
            "data": {"status": "cancelled"}
        }))),
        TaskStatus::Working | TaskStatus::InputRequired => None,
    }
}

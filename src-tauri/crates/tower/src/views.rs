//! Taskdeck's records as tower-mcp's types, and back: a task owner as an engine principal, a
//! [`TaskRecord`] as a [`TaskObject`] or a [`TaskSnapshot`], input requests and answers as the
//! JSON the engine stores, engine errors as [`TaskStoreError`].

use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};
use taskdeck_engine::{EngineError, TaskRecord, TaskStatus as EngineStatus, clock::iso8601};
use tower_mcp::{
    CallToolResult,
    async_task::{TaskOwner, TaskRetentionLimitKind, TaskSnapshot, TaskStoreError},
    error::JsonRpcError,
    protocol::{TaskObject, TaskStatus},
};

/// The engine principal of the tasks of an anonymous owner (`None`).
const ANONYMOUS: &str = "anonymous";
/// Prefix of the engine principal of the tasks of owner `Some(name)`: `owner:NAME`. No such
/// principal equals [`ANONYMOUS`], so `None` and `Some("")` stay distinct.
const OWNER_PREFIX: &str = "owner:";

/// The engine principal name recording `owner` (injective: [`owner_of`] gives it back).
pub(crate) fn principal_of(owner: &TaskOwner) -> String {
    match owner {
        None => ANONYMOUS.to_string(),
        Some(name) => format!("{OWNER_PREFIX}{name}"),
    }
}

/// The owner recorded by [`principal_of`]. A principal of another form (a task not made by
/// this crate) reads as that name.
pub(crate) fn owner_of(principal: &str) -> TaskOwner {
    match principal.strip_prefix(OWNER_PREFIX) {
        Some(name) => Some(name.to_string()),
        None if principal == ANONYMOUS => None,
        None => Some(principal.to_string()),
    }
}

/// The engine's status as tower-mcp's (the same five SEP-2663 states).
pub(crate) fn status_of(status: EngineStatus) -> TaskStatus {
    match status {
        EngineStatus::Working => TaskStatus::Working,
        EngineStatus::InputRequired => TaskStatus::InputRequired,
        EngineStatus::Completed => TaskStatus::Completed,
        EngineStatus::Failed => TaskStatus::Failed,
        EngineStatus::Cancelled => TaskStatus::Cancelled,
    }
}

/// tower-mcp's status as the engine's; `None` for a status tower-mcp adds later.
pub(crate) fn engine_status(status: TaskStatus) -> Option<EngineStatus> {
    Some(match status {
        TaskStatus::Working => EngineStatus::Working,
        TaskStatus::InputRequired => EngineStatus::InputRequired,
        TaskStatus::Completed => EngineStatus::Completed,
        TaskStatus::Failed => EngineStatus::Failed,
        TaskStatus::Cancelled => EngineStatus::Cancelled,
        _ => return None,
    })
}

/// The task object tower-mcp's status responses carry (no result or error: see
/// [`snapshot_of`]), with `meta` as the task's protocol `_meta`.
pub(crate) fn object_of(task: &TaskRecord, meta: Option<Value>) -> TaskObject {
    TaskObject {
        task_id: task.task_id.clone(),
        status: status_of(task.status),
        status_message: task.status_message.clone(),
        created_at: iso8601(task.created_at_ms),
        last_updated_at: iso8601(task.last_updated_at_ms),
        ttl: task.ttl_ms,
        poll_interval: Some(task.poll_interval_ms),
        result: None,
        error: None,
        meta,
    }
}

/// The task object with the result of a completed task or the error of a failed one.
/// Errors: [`TaskStoreError::Decode`] when the stored result or error is not of their shape.
pub(crate) fn snapshot_of(
    task: &TaskRecord,
    meta: Option<Value>,
) -> Result<TaskSnapshot, TaskStoreError> {
    let result = match (&task.result, task.status) {
        (Some(result), EngineStatus::Completed) => Some(decode::<CallToolResult>(result)?),
        _ => None,
    };
    let error = match (&task.error, task.status) {
        (Some(error), EngineStatus::Failed) => Some(decode::<JsonRpcError>(error)?),
        _ => None,
    };
    Ok((object_of(task, meta), result, error))
}

/// `value` as JSON. Errors: [`TaskStoreError::Encode`].
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Value, TaskStoreError> {
    serde_json::to_value(value).map_err(|e| TaskStoreError::Encode(e.to_string()))
}

/// A map of `value`s as a JSON object's members. Errors: [`TaskStoreError::Encode`].
pub(crate) fn encode_map<T: Serialize>(
    map: &std::collections::BTreeMap<String, T>,
) -> Result<Map<String, Value>, TaskStoreError> {
    map.iter()
        .map(|(k, v)| Ok((k.clone(), encode(v)?)))
        .collect()
}

/// Stored JSON as `T`. Errors: [`TaskStoreError::Decode`].
pub(crate) fn decode<T: DeserializeOwned>(value: &Value) -> Result<T, TaskStoreError> {
    T::deserialize(value).map_err(|e| TaskStoreError::Decode(e.to_string()))
}

/// An engine error as a store error: a reused input key is an invalid transition (it is
/// deterministic); everything else is the backend's.
pub(crate) fn store_error(error: EngineError) -> TaskStoreError {
    match error {
        EngineError::KeyReused(keys) => TaskStoreError::InvalidTransition(format!(
            "input request keys must be unique over a task's lifetime, but {keys} was already \
             used by this task; use a new key to ask again"
        )),
        EngineError::IllegalTransition { from, to } => {
            TaskStoreError::InvalidTransition(format!("{} -> {}", from.as_str(), to.as_str()))
        }
        EngineError::TooLarge { limit, .. } => TaskStoreError::RetentionLimitExceeded {
            kind: TaskRetentionLimitKind::PayloadBytes,
            limit,
        },
        // Deterministic: the same call fails the same way.
        EngineError::Invalid(message) => TaskStoreError::InvalidTransition(message),
        other => TaskStoreError::Backend(other.to_string()),
    }
}

/// The status message of a task cancelled through `cancel_task` with `reason`.
pub(crate) fn cancel_message(reason: Option<&str>) -> String {
    reason.map_or_else(
        || "Task cancelled".to_string(),
        |r| format!("Cancelled: {r}"),
    )
}

/// The error of `set_status` asked for `status`, which only a settlement reaches.
pub(crate) fn not_progress(status: TaskStatus) -> TaskStoreError {
    TaskStoreError::InvalidTransition(format!(
        "set_status is for non-terminal progress; use complete_task, fail_task, or \
         cancel_task to reach {status:?}"
    ))
}

/// Checks that a task's `arguments` are a JSON object, as MCP's `tools/call` has them, or null
/// (what tower-mcp gives for a live handler, whose arguments it does not keep).
/// Errors: [`TaskStoreError::InvalidTransition`] naming the tool and what was given.
pub(crate) fn check_arguments(tool: &str, arguments: &Value) -> Result<(), TaskStoreError> {
    let kind = match arguments {
        Value::Object(_) | Value::Null => return Ok(()),
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
    };
    tracing::warn!(
        tool,
        "task refused: its arguments are {kind}, not a JSON object"
    );
    Err(TaskStoreError::InvalidTransition(format!(
        "the arguments of {tool} must be a JSON object (as MCP's tools/call has them), not {kind}"
    )))
}

//! Wire shapes shared by the MCP adapters: SEP-2663 result envelopes built from engine records,
//! and the mapping of engine errors to JSON-RPC error codes.

use serde_json::{Map, Value, json};

use taskdeck_engine::{EngineError, TaskRecord};

/// JSON-RPC: invalid params (also "Task not found", SEP-2663 §Error Handling).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC: method not found.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: invalid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: parse error.
pub const PARSE_ERROR: i64 = -32700;
/// MCP 2026-07-28: `Mcp-Method`/`Mcp-Name` header missing or not matching the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// MCP 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// MCP 2026-07-28: unsupported protocol version.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The protocol revision that carries the tasks extension.
pub const MODERN_PROTOCOL: &str = "2026-07-28";
/// The tasks extension id.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `CreateTaskResult` (SEP-2663 §Task Creation): the flat task with `resultType: "task"`.
pub fn create_task_result(task: &TaskRecord) -> Map<String, Value> {
    let mut m = task.wire_task();
    m.insert("resultType".into(), json!("task"));
    m
}

/// `(code, message)` of the JSON-RPC error for an engine error.
pub fn error_code(e: &EngineError) -> (i64, String) {
    match e {
        EngineError::NotFound => (INVALID_PARAMS, "Task not found".into()),
        EngineError::Invalid(m) => (INVALID_PARAMS, m.clone()),
        EngineError::Terminal(_) | EngineError::KeyReused(_) => (INVALID_PARAMS, e.to_string()),
        EngineError::IllegalTransition { .. } | EngineError::Store(_) => {
            (INTERNAL_ERROR, e.to_string())
        }
    }
}

/// The `-32021` error data naming the tasks extension (SEP-2663 §Capability Negotiation).
pub fn missing_tasks_capability_data() -> Value {
    json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})
}

//! Wire shapes shared by the MCP adapters: SEP-2663 result envelopes built from engine records,
//! and the one mapping of engine errors and task failures to JSON-RPC error codes (the engine
//! chooses none).

use serde_json::{Map, Value, json};

use taskdeck_engine::{EngineError, FailureKind, TaskFailure, TaskRecord};

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

/// `data.reason` of the JSON-RPC error of a write refused because the store's disk is full.
pub const DISK_FULL_REASON: &str = "disk_full";

/// The `data` of the JSON-RPC error for an engine error, when it has one: `{"reason":
/// "disk_full"}` for [`EngineError::DiskFull`] (code -32603; retry once there is space).
pub fn error_data(e: &EngineError) -> Option<Value> {
    e.is_disk_full()
        .then(|| json!({"reason": DISK_FULL_REASON}))
}

/// `(code, message)` of the JSON-RPC error for an engine error; its `data` is [`error_data`].
pub fn error_code(e: &EngineError) -> (i64, String) {
    match e {
        EngineError::NotFound => (INVALID_PARAMS, "Task not found".into()),
        EngineError::Invalid(m) | EngineError::TooLarge { message: m, .. } => {
            (INVALID_PARAMS, m.clone())
        }
        EngineError::Terminal(_) | EngineError::KeyReused(_) => (INVALID_PARAMS, e.to_string()),
        EngineError::HiddenUnread { key, task_id, by } => (
            INVALID_PARAMS,
            crate::approvals::hidden_unread_text(key, task_id, by),
        ),
        EngineError::IllegalTransition { .. }
        | EngineError::Store(_)
        | EngineError::DiskFull(_) => (INTERNAL_ERROR, e.to_string()),
    }
}

/// The JSON-RPC error object `{code, message, data?}` of a failed task (SEP-2663 §Task Polling:
/// `DetailedTask.error`; 2025-11-25 `tasks/result` answers it as the call's error). Installed
/// into the engine at [`Engine::new`](taskdeck_engine::Engine::new), which stores the object
/// when the task fails; every view then shows it as stored.
///
/// Codes: `-32603` for every kind but [`FailureKind::Reported`], whose own code is kept. The
/// engine's kinds [`FailureKind::Restart`] and [`FailureKind::Expired`] put
/// `data.reason` = `"restart"` / `"expired"` first, followed by the failure's own data.
pub fn task_error_object(failure: &TaskFailure) -> Value {
    let (code, reason) = match failure.kind {
        FailureKind::Internal | FailureKind::Tool => (INTERNAL_ERROR, None),
        FailureKind::Restart => (INTERNAL_ERROR, Some("restart")),
        FailureKind::Expired => (INTERNAL_ERROR, Some("expired")),
        FailureKind::InvalidArguments => (INVALID_PARAMS, None),
        FailureKind::Reported { code } => (code, None),
    };
    let data = match (reason, &failure.data) {
        (None, data) => data.clone(),
        (Some(reason), data) => {
            let mut m = Map::new();
            m.insert("reason".into(), json!(reason));
            if let Some(Value::Object(own)) = data {
                m.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            Some(Value::Object(m))
        }
    };
    let mut error = json!({"code": code, "message": failure.message});
    if let Some(data) = data {
        error["data"] = data;
    }
    error
}

/// The `-32021` error data naming the tasks extension (SEP-2663 §Capability Negotiation).
pub fn missing_tasks_capability_data() -> Value {
    json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})
}

#[cfg(test)]
mod tests {
    use rusqlite::params;
    use taskdeck_engine::{
        Engine, EngineConfig, Principal, Recovery,
        clock::iso8601,
        feed::ChangeFeed,
        store::{Durability, Store},
    };

    use super::*;
    use crate::adapters::legacy_wire;

    const CREATED_MS: i64 = 1_767_225_600_000;
    /// `error` of a task the previous version failed at a restart, as it stored it (a
    /// `-32603` object it wrote itself).
    const OLD_RESTART_ERROR: &str = r#"{"code":-32603,"message":"Task interrupted: Taskdeck restarted while it was running","data":{"reason":"restart","lastStatusMessage":"step 2"}}"#;

    fn error_text(failure: TaskFailure) -> String {
        task_error_object(&failure).to_string()
    }

    #[test]
    fn each_failure_kind_gets_the_code_and_reason_clients_always_saw() {
        let restart = TaskFailure::new(
            FailureKind::Restart,
            "Task interrupted: Taskdeck restarted while it was running",
            Some(json!({"lastStatusMessage": "step 2"})),
        );
        assert_eq!(error_text(restart), OLD_RESTART_ERROR);
        let expired = TaskFailure::new(
            FailureKind::Expired,
            "Task expired: its ttlMs elapsed before it finished",
            None,
        );
        assert_eq!(
            error_text(expired),
            r#"{"code":-32603,"message":"Task expired: its ttlMs elapsed before it finished","data":{"reason":"expired"}}"#
        );
        let internal = TaskFailure::new(FailureKind::Internal, "tool x panicked", None);
        assert_eq!(
            error_text(internal),
            r#"{"code":-32603,"message":"tool x panicked"}"#
        );
        let timeout =
            TaskFailure::tool("timed out", Some(json!({"reason": "timeout", "tail": ""})));
        assert_eq!(
            error_text(timeout),
            r#"{"code":-32603,"message":"timed out","data":{"reason":"timeout","tail":""}}"#
        );
        let reported = TaskFailure::new(
            FailureKind::Reported { code: -32001 },
            "quota",
            Some(json!({"retryAfterMs": 5})),
        );
        assert_eq!(
            error_text(reported),
            r#"{"code":-32001,"message":"quota","data":{"retryAfterMs":5}}"#
        );
    }

    /// Writes a task row the way the previous version's store held it.
    fn insert_row(
        c: &rusqlite::Connection,
        task_id: &str,
        tool: &str,
        status: &str,
        message: &str,
        error: Option<&str>,
    ) {
        c.execute(
            "INSERT INTO tasks(task_id, tool, arguments, principal, status, status_message,
               created_at, last_updated_at, ttl_ms, expires_at, poll_interval_ms, error)
             VALUES (?1, ?2, '{}', 'admin', ?3, ?4, ?5, ?5, NULL, NULL, 1000, ?6)",
            params![task_id, tool, status, message, CREATED_MS, error],
        )
        .unwrap();
    }

    #[tokio::test]
    async fn a_store_failed_by_the_previous_version_reads_the_same_and_new_failures_match_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = {
            let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
            store.path().to_path_buf()
        };
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            insert_row(
                &c,
                "old-failed",
                "run_command",
                "failed",
                "Task interrupted: Taskdeck restarted while it was running",
                Some(OLD_RESTART_ERROR),
            );
            // Left running by the previous process; its tool is not registered now.
            insert_row(&c, "old-working", "gone_tool", "working", "step 2", None);
            // The per-status counts are rebuilt from the rows at the next open.
            c.execute("DELETE FROM meta WHERE key = 'task_counts'", [])
                .unwrap();
        }
        let store = Store::open(dir.path(), Durability::Process, ChangeFeed::new(8)).unwrap();
        let engine = Engine::new(store, EngineConfig::default(), task_error_object);
        assert_eq!(
            engine.start().await.unwrap(),
            Recovery {
                resumed: 0,
                failed: 1
            }
        );
        let admin = Principal::admin();

        // tasks/get answers the stored object byte for byte.
        let at = iso8601(CREATED_MS);
        let expected = format!(
            r#"{{"createdAt":"{at}","error":{OLD_RESTART_ERROR},"lastUpdatedAt":"{at}","pollIntervalMs":1000,"resultType":"complete","status":"failed","statusMessage":"Task interrupted: Taskdeck restarted while it was running","taskId":"old-failed","ttlMs":null}}"#
        );
        let answer = engine.get_result_json(&admin, "old-failed").unwrap();
        assert_eq!(answer.json, expected);
        let old = engine.get(&admin, "old-failed").unwrap();
        let old_error: Value = serde_json::from_str(OLD_RESTART_ERROR).unwrap();
        assert_eq!(old.wire_detailed()["error"], old_error);
        assert_eq!(legacy_wire::call_result(&old), Some(Err(old_error)));

        // The task this version failed at start stores what the previous one did, in the same
        // form; its message also names the tool this version no longer has.
        let stored: String = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row(
                "SELECT error FROM tasks WHERE task_id = 'old-working'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            stored,
            OLD_RESTART_ERROR.replace(
                "while it was running\"",
                "while it was running, and no longer has its tool gone_tool\""
            )
        );
        engine.shutdown();
    }
}

//! The task record and its parts, as stored, and their `/v1` API views (`api_view`). The
//! SEP-2663 wire objects of a task (`Task`, `DetailedTask`, `GetTaskResult`) are rendered by
//! [`crate::detailed_task`] (`TaskRecord::wire_task`, `TaskRecord::wire_detailed`).
//!
//! Wire names follow SEP-2663 (`taskId`, `status`, `statusMessage`, `createdAt`,
//! `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`, `inputRequests`, `result`, `error`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::clock::iso8601;

/// Task status, SEP-2663 §Task Status. `completed`, `failed` and `cancelled` are terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for answers to its outstanding input requests.
    InputRequired,
    /// Ended with a CallToolResult (which may say `isError: true`).
    Completed,
    /// Ended with a JSON-RPC error.
    Failed,
    /// Ended by a cancel before it finished.
    Cancelled,
}

impl TaskStatus {
    /// All statuses, in lifecycle order.
    pub const ALL: [TaskStatus; 5] = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];

    /// The wire spelling (`working`, `input_required`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the wire spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// True for `completed`, `failed` and `cancelled`: such a task never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// Progress of a task: `current` out of `total` (when known), with an optional message.
/// Whole numbers are written as JSON integers (`3`, not `3.0`), as they were reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Progress so far, in the tool's own unit.
    #[serde(serialize_with = "whole_as_integer")]
    pub current: f64,
    /// The total, in the same unit; `None` when unknown (left out of the JSON).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "some_whole_as_integer"
    )]
    pub total: Option<f64>,
    /// What the tool is doing, in words; `None` when not given (left out of the JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

fn whole_as_integer<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() < 9e15 {
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

fn some_whole_as_integer<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => whole_as_integer(v, s),
        None => s.serialize_none(),
    }
}

/// A new taskId for a task created at `now_ms` (ms since the Unix epoch): 12 hex digits of
/// `now_ms`, `-`, then a UUID v4 in 32 hex digits (122 random bits, the unguessable part), e.g.
/// `019ad3a5c2f1-5b0c1e0f9d8a4c7e8f1a2b3c4d5e6f70` (45 ASCII characters).
///
/// The random bits come from uuid's `fast-rng`: a thread-local CSPRNG (ChaCha) seeded by the
/// OS, so making an id costs no system call.
///
/// The time prefix makes ids sort by creation, so the store's taskId indexes grow at their end
/// instead of touching a random page per new task: fewer pages per commit (BENCHMARKS.md,
/// "Durable creation"). It reveals nothing the task's own `createdAt` does not.
pub fn new_task_id(now_ms: i64) -> String {
    format!(
        "{:012x}-{}",
        now_ms.clamp(0, 0xffff_ffff_ffff),
        uuid::Uuid::new_v4().simple()
    )
}

/// One task as stored. Times are milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// Opaque id made by [`new_task_id`]: 122 random bits behind a creation-time prefix
    /// (SEP-2663 §Security).
    pub task_id: String,
    /// Monotonic creation order; the list's "newest first" key and its cursor.
    pub seq: i64,
    /// The name of the tool the task runs, as registered in the engine.
    pub tool: String,
    /// The tool call's arguments (a JSON object).
    pub arguments: Value,
    /// Name of the owning principal.
    pub principal: String,
    /// SEP-2663 `status`.
    pub status: TaskStatus,
    /// SEP-2663 `statusMessage`: the latest human-readable note on the task; `None` when none.
    pub status_message: Option<String>,
    /// When the task was created (SEP-2663 `createdAt`).
    pub created_at_ms: i64,
    /// When the task last changed (SEP-2663 `lastUpdatedAt`).
    pub last_updated_at_ms: i64,
    /// Retention from creation in ms; `None` = unlimited (set while waiting for a human).
    pub ttl_ms: Option<u64>,
    /// Suggested wait between polls, in ms (SEP-2663 `pollIntervalMs`): the configured one
    /// moved by up to a twentieth either way (`EngineConfig::new_task_poll_interval_ms`).
    pub poll_interval_ms: u64,
    /// The latest progress reported; `None` before any.
    pub progress: Option<Progress>,
    /// The CallToolResult (JSON object) when `completed`, including `isError: true` results.
    pub result: Option<Value>,
    /// The JSON-RPC error object `{code, message, data?}` when `failed`: made from the engine's
    /// [`TaskFailure`](super::TaskFailure) by the server's wire mapping when the task failed
    /// (see [`crate::failure`]), and shown as it is stored. Every failed task has one.
    pub error: Option<Value>,
    /// Outstanding input requests (`key` → `{method, params}`), present while `input_required`.
    pub input_requests: BTreeMap<String, Value>,
    /// A cancel was requested and the executor has not settled the task yet.
    pub cancel_requested: bool,
}

/// The key under which `task_counts` and the `/v1/tasks` `counts` count the completed tasks
/// whose result is an error ([`TaskRecord::is_error`]); such a task is counted under
/// `completed` too.
pub const ERROR_COUNT_KEY: &str = "error";

/// The SQL condition, over a `tasks` row, that [`TaskRecord::is_error`] states in Rust.
pub const IS_ERROR_SQL: &str = "(status = 'completed' AND json_extract(result, '$.isError') IS 1)";

impl TaskRecord {
    /// A new `working` task created at `now_ms` (ms since the epoch) with a fresh
    /// [`new_task_id`], before the store gives it its `seq`: nothing reported yet.
    pub fn working(
        now_ms: i64,
        tool: &str,
        arguments: Value,
        principal: &str,
        ttl_ms: Option<u64>,
        poll_interval_ms: u64,
    ) -> TaskRecord {
        TaskRecord {
            task_id: new_task_id(now_ms),
            seq: 0,
            tool: tool.to_string(),
            arguments,
            principal: principal.to_string(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms,
            last_updated_at_ms: now_ms,
            ttl_ms,
            poll_interval_ms,
            progress: None,
            result: None,
            error: None,
            input_requests: BTreeMap::new(),
            cancel_requested: false,
        }
    }

    /// A completed task whose CallToolResult says `isError: true` (MCP 2025-11-25 §Tools, "Error
    /// Handling": the tool ran and reports an error, e.g. a command that exited non-zero). Its
    /// status stays `completed` (SEP-2663); Taskdeck counts and filters these as errors.
    pub fn is_error(&self) -> bool {
        self.status == TaskStatus::Completed
            && self
                .result
                .as_ref()
                .and_then(|r| r.get("isError"))
                .and_then(Value::as_bool)
                == Some(true)
    }

    /// The record as the `/v1` API and the UI show it: the detailed task plus Taskdeck's own
    /// fields (`seq`: the list order, `tool`, `arguments`, `principal`, `progress`,
    /// `cancelRequested`, `expiresAt`).
    pub fn api_view(&self) -> Value {
        let mut m = self.wire_detailed();
        m.insert("seq".into(), json!(self.seq));
        m.insert("tool".into(), Value::String(self.tool.clone()));
        m.insert("arguments".into(), self.arguments.clone());
        m.insert("principal".into(), Value::String(self.principal.clone()));
        if let Some(p) = &self.progress {
            m.insert(
                "progress".into(),
                serde_json::to_value(p).unwrap_or(Value::Null),
            );
        }
        m.insert("cancelRequested".into(), Value::Bool(self.cancel_requested));
        if let Some(at) = self.expires_at_ms() {
            m.insert("expiresAt".into(), Value::String(iso8601(at)));
        }
        Value::Object(m)
    }

    /// When its retention ends (Unix ms): creation plus `ttlMs`, saturating (a huge `ttlMs`
    /// gives the latest time there is); `None` while retention is unlimited.
    pub fn expires_at_ms(&self) -> Option<i64> {
        self.ttl_ms.map(|ttl| {
            self.created_at_ms
                .saturating_add(i64::try_from(ttl).unwrap_or(i64::MAX))
        })
    }
}

/// One entry of a task's timeline: every state change, progress update, status message and
/// input round is one event. `id` is global and increasing: the `/v1/events` SSE event id.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEvent {
    /// The event's id: global and increasing.
    pub id: i64,
    /// The task it belongs to.
    pub task_id: String,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// `created`, `status`, `progress`, `statusMessage`, `inputRequested` (`{key, request,
    /// humanOnly}`: `humanOnly` when only a person, the admin or a human, may answer it),
    /// `inputAnswered` (`{key, by, action}`, and `via: "host"` when a hosted task's own program
    /// recorded the answer, not a person or agent through `/v1/tasks/{id}/input` or MCP),
    /// `inputSuperseded`, `inputExpired`, `cancelRequested`, `ttl`, `resumed`, `decision` (an
    /// approval's audit record), `argumentsEdited`, `hosted`, `meta` (`{meta}`: a hosted task's
    /// protocol `_meta`, see [`Engine::set_hosted_meta`](crate::Engine::set_hosted_meta)), and
    /// `deleted` (the task was deleted: `/v1/events` only).
    pub kind: String,
    /// The kind's details, a JSON object.
    pub data: Value,
}

impl TimelineEvent {
    /// JSON for the API: the event plus an ISO 8601 `at`.
    pub fn api_view(&self) -> Value {
        json!({"id": self.id, "taskId": self.task_id, "at": iso8601(self.at_ms), "kind": self.kind, "data": self.data})
    }
}

/// One input request over its whole life (the "input round" the timeline and UI show).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRound {
    /// The request's key, unique for the task's life.
    pub key: String,
    /// The request, `{method, params}`.
    pub request: Value,
    /// `outstanding`, `answered` or `superseded`.
    pub state: String,
    /// The answer (SEP-2663 `InputResponse`); `None` until answered.
    pub response: Option<Value>,
    /// The name of the principal who answered; `None` until answered.
    pub answered_by: Option<String>,
    /// When it was answered, ms since the Unix epoch; `None` until answered.
    pub answered_at_ms: Option<i64>,
    /// When it was issued, ms since the Unix epoch.
    pub created_at_ms: i64,
    /// Only a person (the admin or a human principal) may answer it, e.g. `run_command`'s
    /// approval; an agent's answer to it is ignored.
    pub human_only: bool,
}

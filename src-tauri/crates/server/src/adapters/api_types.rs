//! The bodies `/v1` answers with, as types: they serialize to exactly the JSON the API sends
//! and, through `utoipa::ToSchema`, are the schemas of its OpenAPI document. A task is a
//! [`TaskView`], the typed form of `TaskRecord::api_view` (SEP-2663 `DetailedTask` plus
//! Taskdeck's own fields).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::task_title::task_title;
use taskdeck_engine::{
    Progress, Role, TaskRecord, TaskStatus, TimelineEvent, clock::iso8601, model::InputRound,
};

/// Task status, SEP-2663 §Task Status (`completed`, `failed`, `cancelled` are terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl From<TaskStatus> for Status {
    fn from(s: TaskStatus) -> Status {
        match s {
            TaskStatus::Working => Status::Working,
            TaskStatus::InputRequired => Status::InputRequired,
            TaskStatus::Completed => Status::Completed,
            TaskStatus::Failed => Status::Failed,
            TaskStatus::Cancelled => Status::Cancelled,
        }
    }
}

/// A failed task's JSON-RPC error object (JSON-RPC 2.0 §5.1).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct JsonRpcError {
    pub code: i64,
    pub message: String,
    /// Any JSON value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A task's progress: `current` out of `total` (when known); whole numbers are JSON integers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ProgressView {
    pub current: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A task as `/v1` shows it: SEP-2663's `DetailedTask` (`inputRequests` while input_required,
/// `result` when completed, `error` when failed) plus `seq`, `tool`, `title`, `isError`,
/// `arguments`, `principal`, `progress`, `cancelRequested`, `expiresAt`. Times are ISO 8601 UTC
/// with milliseconds. The MCP endpoint shows SEP-2663's shapes alone, without these.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    pub task_id: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(format = DateTime)]
    pub last_updated_at: String,
    /// Retention from creation in ms; null = unlimited.
    #[schema(minimum = 0)]
    pub ttl_ms: Option<u64>,
    #[schema(minimum = 0)]
    pub poll_interval_ms: u64,
    /// Outstanding input requests, key → `{method, params}` (input_required only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<BTreeMap<String, Object>>)]
    pub input_requests: Option<Value>,
    /// The CallToolResult, with `resultType: "complete"` (completed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub result: Option<Value>,
    /// The JSON-RPC error (failed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<JsonRpcError>)]
    pub error: Option<Value>,
    /// Creation order, unique and increasing: the list is newest (highest) first, and a task
    /// that arrives over `/v1/events` goes where its `seq` puts it.
    pub seq: i64,
    pub tool: String,
    /// What a person reads as the task's name: an external job's `name`, a `request_approval`'s
    /// question, a `run_command`'s command line, else the tool; one line of at most 200
    /// characters ("…" when cut). See `task_title`.
    pub title: String,
    /// Completed, with a result that says `isError: true` (e.g. a command that exited
    /// non-zero): the status stays `completed` (SEP-2663), and `counts.error` counts these.
    pub is_error: bool,
    /// The tool call's arguments (secrets redacted).
    #[schema(value_type = Object)]
    pub arguments: Value,
    pub principal: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ProgressView>)]
    pub progress: Option<Progress>,
    pub cancel_requested: bool,
    /// When the task's ttl runs out (absent when unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
}

impl From<&TaskRecord> for TaskView {
    fn from(t: &TaskRecord) -> TaskView {
        // The status-dependent members, exactly as SEP-2663's DetailedTask has them.
        let mut detailed = t.wire_detailed();
        TaskView {
            task_id: t.task_id.clone(),
            status: t.status.into(),
            status_message: t.status_message.clone(),
            created_at: iso8601(t.created_at_ms),
            last_updated_at: iso8601(t.last_updated_at_ms),
            ttl_ms: t.ttl_ms,
            poll_interval_ms: t.poll_interval_ms,
            input_requests: detailed.remove("inputRequests"),
            result: detailed.remove("result"),
            error: detailed.remove("error"),
            seq: t.seq,
            tool: t.tool.clone(),
            title: task_title(&t.tool, &t.arguments),
            is_error: t.is_error(),
            arguments: t.arguments.clone(),
            principal: t.principal.clone(),
            progress: t.progress.clone(),
            cancel_requested: t.cancel_requested,
            expires_at: t.ttl_ms.map(|ttl| iso8601(t.created_at_ms + ttl as i64)),
        }
    }
}

/// One timeline event: `kind` is `created`, `status`, `progress`, `statusMessage`,
/// `inputRequested`, `inputAnswered`, `inputSuperseded`, `cancelRequested`, `ttl`, `resumed`
/// or `deleted`; `id` is the `/v1/events` event id.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEventView {
    pub id: i64,
    pub task_id: String,
    #[schema(format = DateTime)]
    pub at: String,
    pub kind: String,
    #[schema(value_type = Object)]
    pub data: Value,
}

impl From<&TimelineEvent> for TimelineEventView {
    fn from(e: &TimelineEvent) -> TimelineEventView {
        TimelineEventView {
            id: e.id,
            task_id: e.task_id.clone(),
            at: iso8601(e.at_ms),
            kind: e.kind.clone(),
            data: e.data.clone(),
        }
    }
}

/// The state of an input round.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputRoundState {
    Outstanding,
    Answered,
    Superseded,
}

/// One input request over its whole life. `humanOnly`: only a person (the admin or a human
/// principal) may answer it; an agent's answer to it is ignored.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputRoundView {
    pub key: String,
    /// The request, `{method, params}`.
    #[schema(value_type = Object)]
    pub request: Value,
    #[schema(value_type = InputRoundState)]
    pub state: String,
    /// The answer (null until answered).
    #[schema(value_type = Option<Object>)]
    pub response: Option<Value>,
    pub answered_by: Option<String>,
    #[schema(format = DateTime)]
    pub answered_at: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub human_only: bool,
}

impl From<&InputRound> for InputRoundView {
    fn from(r: &InputRound) -> InputRoundView {
        InputRoundView {
            key: r.key.clone(),
            request: r.request.clone(),
            state: r.state.clone(),
            response: r.response.clone(),
            answered_by: r.answered_by.clone(),
            answered_at: r.answered_at_ms.map(iso8601),
            created_at: iso8601(r.created_at_ms),
            human_only: r.human_only,
        }
    }
}

/// `GET /v1/tasks`: one page, newest first. The page and `counts` reflect exactly the changes
/// up to `eventId`; `/v1/events` with `Last-Event-ID: eventId` brings every later one.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskList {
    pub tasks: Vec<TaskView>,
    /// Opaque; the next page's `cursor` (null on the last page).
    pub next_cursor: Option<String>,
    /// Tasks per status under the other filters (`status` and `error` aside), status → count,
    /// plus `error`: how many of the `completed` ones have an error result (`isError`). Only
    /// counts above 0 are present.
    pub counts: BTreeMap<String, i64>,
    /// The newest event id the page reflects, as a decimal string.
    pub event_id: String,
}

/// `GET /v1/tasks/{taskId}`: the task, its timeline (oldest first) and its input rounds.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskDetail {
    pub task: TaskView,
    pub timeline: Vec<TimelineEventView>,
    /// Older events exist: ask again with `timelineBefore` = the first event's id.
    pub timeline_more: bool,
    pub input_rounds: Vec<InputRoundView>,
}

/// `POST /v1/tasks/{taskId}/input`: which answers were taken; the task as it is now (null if
/// it was removed meanwhile).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AnswerReply {
    pub accepted: Vec<String>,
    pub ignored: Vec<String>,
    pub task: Option<TaskView>,
}

/// `POST /v1/tasks/{taskId}/cancel`: the task as it is now (null if it was removed meanwhile).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CancelReply {
    pub task: Option<TaskView>,
}

/// `GET /v1/me`: the caller's principal, its role, and whether it is the admin (`role ==
/// "admin"`; the only one who manages tokens, the policy and the servers).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Me {
    pub principal: String,
    pub role: RoleName,
    pub admin: bool,
}

/// A principal's role (`taskdeck_engine::principal`): `admin` (the admin token: everything),
/// `human` (a person: sees every task, answers human-only requests, administers nothing) or
/// `agent` (its own tasks only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleName {
    Admin,
    Human,
    Agent,
}

impl RoleName {
    /// The wire name: `admin`, `human` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            RoleName::Admin => "admin",
            RoleName::Human => "human",
            RoleName::Agent => "agent",
        }
    }
}

impl From<Role> for RoleName {
    fn from(r: Role) -> RoleName {
        match r {
            Role::Admin => RoleName::Admin,
            Role::Human => RoleName::Human,
            Role::Agent => RoleName::Agent,
        }
    }
}

/// One task tool.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolView {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// JSON Schema (draft 2020-12) of its arguments.
    #[schema(value_type = Object)]
    pub input_schema: Value,
}

/// `GET /v1/tools`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ToolList {
    pub tools: Vec<ToolView>,
}

/// `POST /v1/agents`: the new token (shown once) and ready-to-paste client configurations.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCreated {
    pub name: String,
    /// `agent` or `human`.
    pub role: RoleName,
    pub token: String,
    pub mcp_url: String,
    pub configs: Vec<super::mcp_config::ClientConfig>,
}

/// `GET /v1/agents`: token names and roles, never secrets.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AgentList {
    pub agents: Vec<super::auth::TokenInfo>,
}

/// `GET /v1/tasks/{taskId}/log`: bytes `offset..nextOffset` of the log (invalid UTF-8
/// replaced), the log's `size` in bytes, `complete` once the task is terminal and nothing is
/// left to read.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogChunk {
    pub task_id: String,
    #[schema(minimum = 0)]
    pub offset: u64,
    #[schema(minimum = 0)]
    pub next_offset: u64,
    #[schema(minimum = 0)]
    pub size: u64,
    /// Where the kept output starts: 0, unless the command wrote more than the log keeps (its
    /// latest 16 MiB); the output before it is gone, and a read from an offset before it
    /// starts here.
    #[schema(minimum = 0)]
    pub kept_from: u64,
    pub text: String,
    /// The task has ended and nothing is left to read.
    pub complete: bool,
    /// Whether the log file exists: `false` (with an empty range at 0) while the command has
    /// not started, and for good when it never ran (e.g. the human declined it).
    pub exists: bool,
}

/// `POST /v1/jobs/{taskId}/report` (200): the job, whether cancellation was requested, and
/// every answer the human gave to its input requests so far (key → answer).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportReply {
    pub task: TaskView,
    pub cancel_requested: bool,
    #[schema(value_type = BTreeMap<String, Object>)]
    pub input_responses: Map<String, Value>,
}

/// `POST /v1/jobs/{taskId}/report` (202, the report ends the job): follow `Location`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportEnded {
    pub cancel_requested: bool,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn record(status: TaskStatus) -> TaskRecord {
        TaskRecord {
            task_id: "t1".into(),
            seq: 7,
            tool: "run_command".into(),
            arguments: json!({"command": "ls"}),
            principal: "agent".into(),
            status,
            status_message: Some("hello".into()),
            created_at_ms: 1_700_000_000_000,
            last_updated_at_ms: 1_700_000_000_500,
            ttl_ms: Some(60_000),
            poll_interval_ms: 1000,
            progress: Some(Progress {
                current: 3.0,
                total: Some(10.5),
                message: None,
            }),
            result: Some(json!({"content": [], "isError": false})),
            error: Some(json!({"code": -32000, "message": "boom"})),
            input_requests: BTreeMap::from([("k".into(), json!({"method": "elicitation/create"}))]),
            cancel_requested: true,
        }
    }

    #[test]
    fn task_view_is_the_api_view_byte_for_byte() {
        for status in TaskStatus::ALL {
            let mut r = record(status);
            // The engine's view plus the adapter's own `title` and `isError`.
            let same = |r: &TaskRecord| {
                let mut view = serde_json::to_value(TaskView::from(r)).unwrap();
                let own = view.as_object_mut().unwrap();
                assert_eq!(own.shift_remove("title"), Some(json!("ls")));
                assert_eq!(own.shift_remove("isError"), Some(json!(r.is_error())));
                assert_eq!(view.to_string(), r.api_view().to_string())
            };
            same(&r);
            r.status_message = None;
            r.ttl_ms = None;
            r.progress = None;
            r.result = None;
            r.error = None;
            same(&r);
        }
    }
}

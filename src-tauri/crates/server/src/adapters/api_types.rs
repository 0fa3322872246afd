//! The bodies `/v1` answers with, as types: they serialize to exactly the JSON the API sends
//! and, through `utoipa::ToSchema`, are the schemas of its OpenAPI document. A task is a
//! [`TaskView`], the typed form of `TaskRecord::api_view` (SEP-2663 `DetailedTask` plus
//! Taskdeck's own fields).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{abridged, task_title::task_title};
use taskdeck_engine::{
    Progress, Role, TaskRecord, TaskStatus, TimelineEvent, clock::iso8601, model::InputRound,
};

/// Task status, SEP-2663 §Task Status (`completed`, `failed`, `cancelled` are terminal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Being processed.
    Working,
    /// Waiting for answers to its `inputRequests`.
    InputRequired,
    /// Ended with a `result` (which may say `isError: true`). Terminal.
    Completed,
    /// Ended with a JSON-RPC `error`. Terminal.
    Failed,
    /// Ended by a cancel before it finished. Terminal.
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
    /// The JSON-RPC error code, e.g. -32603 (internal error).
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Any JSON value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A task's progress: `current` out of `total` (when known); whole numbers are JSON integers.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ProgressView {
    /// Progress so far, in the tool's own unit (e.g. files or bytes).
    pub current: f64,
    /// The total, in the same unit (absent when unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What the task is doing, in words (absent when not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A task as `/v1` shows it: SEP-2663's `DetailedTask` (`inputRequests` while input_required,
/// `result` when completed, `error` when failed) plus `seq`, `tool`, `title`, `isError`,
/// `arguments`, `principal`, `progress`, `cancelRequested`, `expiresAt` (and `abridged` in lists
/// and events, [`TaskView::listed`]). Times are ISO 8601 UTC
/// with milliseconds. The MCP endpoint shows SEP-2663's shapes alone, without these.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    /// The task's opaque id (SEP-2663 `taskId`).
    pub task_id: String,
    /// SEP-2663 `status`.
    pub status: Status,
    /// The latest human-readable note on the task's state (SEP-2663 `statusMessage`; for a
    /// command, its latest output line); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (SEP-2663 `createdAt`).
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When the task last changed (SEP-2663 `lastUpdatedAt`).
    #[schema(format = DateTime)]
    pub last_updated_at: String,
    /// Retention from creation in ms; null = unlimited.
    #[schema(minimum = 0)]
    pub ttl_ms: Option<u64>,
    /// Suggested wait between two polls of the task, in ms (SEP-2663 `pollIntervalMs`).
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
    /// The name of the tool the task runs, e.g. `run_command`.
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
    /// The name of the principal that owns the task (the one that created it).
    pub principal: String,
    /// The latest progress the tool reported (absent before any).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ProgressView>)]
    pub progress: Option<Progress>,
    /// A cancel was requested; it stays `true` after the task ends, whatever its status.
    pub cancel_requested: bool,
    /// When the task's ttl runs out (absent when unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    pub expires_at: Option<String>,
    /// The members cut to size, of `arguments`, `result` and `error` (absent when none): a
    /// `GET /v1/tasks` page and a `/v1/events` change carry each string of over 2,048
    /// characters cut to 2,048 (its two ends, "…" between) and each array and object as its
    /// first 100 members, and cut shorter a member still over about 64 KiB.
    /// `GET /v1/tasks/{taskId}` has the task whole; `inputRequests` are never cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>)]
    pub abridged: Option<Vec<&'static str>>,
}

impl TaskView {
    /// `t` as a list page and an event stream carry it: its `arguments`, `result` and `error`
    /// cut to size ([`abridged::abridge`]), `abridged` naming the ones cut.
    pub fn listed(t: &TaskRecord) -> TaskView {
        let mut view = TaskView::from(t);
        let mut cut = Vec::new();
        if abridged::abridge(&mut view.arguments) {
            cut.push("arguments");
        }
        if view.result.as_mut().is_some_and(abridged::abridge) {
            cut.push("result");
        }
        if view.error.as_mut().is_some_and(abridged::abridge) {
            cut.push("error");
        }
        view.abridged = (!cut.is_empty()).then_some(cut);
        view
    }
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
            expires_at: t.expires_at_ms().map(iso8601),
            abridged: None,
        }
    }
}

/// One timeline event: `kind` is `created`, `status`, `progress`, `statusMessage`,
/// `inputRequested`, `inputAnswered`, `inputSuperseded`, `inputExpired`, `cancelRequested`,
/// `ttl`, `resumed`, `decision`, `argumentsEdited`, `hosted`, `meta` or `deleted` (in
/// `/v1/events` only); `id` is the `/v1/events` event id.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEventView {
    /// The event's id: global and increasing.
    pub id: i64,
    /// The task the event belongs to.
    pub task_id: String,
    /// When it happened.
    #[schema(format = DateTime)]
    pub at: String,
    /// What happened: one of the kinds listed above.
    pub kind: String,
    /// The kind's details, a JSON object (e.g. `{key, by, action}` for `inputAnswered`).
    #[schema(value_type = Object)]
    pub data: Value,
    /// `true` when `data` was cut to size as a task's members are (a `decision`'s large call,
    /// say): in `/v1/events` only, absent when nothing was cut. The task's timeline
    /// (`GET /v1/tasks/{taskId}`) has it whole.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub abridged: bool,
}

impl TimelineEventView {
    /// `e` as the event stream carries it: its `data` cut to size ([`abridged::abridge`]).
    pub fn streamed(e: &TimelineEvent) -> TimelineEventView {
        let mut view = TimelineEventView::from(e);
        view.abridged = abridged::abridge(&mut view.data);
        view
    }
}

impl From<&TimelineEvent> for TimelineEventView {
    fn from(e: &TimelineEvent) -> TimelineEventView {
        TimelineEventView {
            id: e.id,
            task_id: e.task_id.clone(),
            at: iso8601(e.at_ms),
            kind: e.kind.clone(),
            data: e.data.clone(),
            abridged: false,
        }
    }
}

/// The state of an input round.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputRoundState {
    /// Issued and not answered yet.
    Outstanding,
    /// Answered; `response` holds the answer.
    Answered,
    /// Dropped unanswered: the task ended first, or a hosted task's program withdrew it.
    Superseded,
}

/// One input request over its whole life. `humanOnly`: only a person (the admin or a human
/// principal) may answer it; an agent's answer to it is ignored.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputRoundView {
    /// The request's key, unique for the task's life (its key in `inputRequests`).
    pub key: String,
    /// The request, `{method, params}`.
    #[schema(value_type = Object)]
    pub request: Value,
    /// `outstanding`, `answered` or `superseded`.
    #[schema(value_type = InputRoundState)]
    pub state: String,
    /// The answer (null until answered).
    #[schema(value_type = Option<Object>)]
    pub response: Option<Value>,
    /// The name of the principal who answered (null until answered).
    pub answered_by: Option<String>,
    /// When it was answered (null until answered).
    #[schema(format = DateTime)]
    pub answered_at: Option<String>,
    /// When it was issued.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// Only a person (the admin or a human principal) may answer it.
    pub human_only: bool,
}

/// An approval's answer as it may be shown: the edited call it carries (`content.arguments`,
/// JSON text kept as typed, for the run to read) as the call it is (written anew: a key typed
/// twice is the last one's, as the run reads it) with its credentials masked as the call's own
/// arguments are ([`crate::approvals::shown_arguments`]); any other answer as it is.
fn edit_masked(response: &Value) -> Value {
    let edit = response
        .pointer("/content/arguments")
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str::<Value>(text).ok());
    match edit {
        Some(edit) => {
            let mut shown = response.clone();
            shown["content"]["arguments"] =
                Value::String(crate::approvals::shown_arguments(&edit).to_string());
            shown
        }
        None => response.clone(),
    }
}

impl From<&InputRound> for InputRoundView {
    fn from(r: &InputRound) -> InputRoundView {
        InputRoundView {
            key: r.key.clone(),
            request: r.request.clone(),
            state: r.state.clone(),
            response: r.response.as_ref().map(edit_masked),
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
    /// The page's tasks, newest (highest `seq`) first, their large members cut (`abridged`).
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
    /// The task.
    pub task: TaskView,
    /// The newest `timelineLimit` events (1000 by default) below `timelineBefore`, oldest first.
    pub timeline: Vec<TimelineEventView>,
    /// Older events exist: ask again with `timelineBefore` = the first event's id.
    pub timeline_more: bool,
    /// Every input round of the task, oldest first.
    pub input_rounds: Vec<InputRoundView>,
}

/// `POST /v1/tasks/{taskId}/input`: which answers were taken; the task as it is now (null if
/// it was removed meanwhile).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AnswerReply {
    /// The keys whose answers were recorded.
    pub accepted: Vec<String>,
    /// The keys whose answers were dropped: not outstanding (never issued, already answered,
    /// superseded, or the task has ended), or human-only and answered by an agent (SEP-2663
    /// §Task Update Requests).
    pub ignored: Vec<String>,
    /// Key → what was not done as asked: an approval whose edited arguments the policy
    /// refused (a deny rule) was recorded, and the call was asked again as the agent made it
    /// (the first line of that question); or an approval of a call this person approved
    /// already was not recorded (the key is in `ignored`; "alice approved this call already;
    /// another human must approve it"). Absent when empty.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub notes: std::collections::BTreeMap<String, String>,
    /// The task after the answers (null if it was removed meanwhile).
    pub task: Option<TaskView>,
}

/// `POST /v1/tasks/{taskId}/cancel`: the task as it is now (null if it was removed meanwhile).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CancelReply {
    /// The task after the request (null if it was removed meanwhile).
    pub task: Option<TaskView>,
}

/// `GET /v1/me`: the caller's principal, its role, and whether it is the admin (`role ==
/// "admin"`; the only one who manages tokens, the policy and the servers).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Me {
    /// The caller's principal name.
    pub principal: String,
    /// The caller's role.
    pub role: RoleName,
    /// The caller is the admin (`role == "admin"`).
    pub admin: bool,
}

/// A principal's role (`taskdeck_engine::principal`): `admin` (the admin token: everything),
/// `human` (a person: sees every task, answers human-only requests, administers nothing) or
/// `agent` (its own tasks only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleName {
    /// The admin token: sees and manages everything.
    Admin,
    /// A person: sees every task and answers human-only requests; administers nothing.
    Human,
    /// An agent: sees its own tasks only.
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
    /// The tool's name, as `tools/call` and the tasks' `tool` give it.
    pub name: String,
    /// A human-readable display name (null when the tool has none).
    pub title: Option<String>,
    /// What the tool does, for a model or a person to read.
    pub description: String,
    /// JSON Schema (draft 2020-12) of its arguments.
    #[schema(value_type = Object)]
    pub input_schema: Value,
}

/// `GET /v1/tools`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ToolList {
    /// Every tool registered in the engine, sorted by name.
    pub tools: Vec<ToolView>,
}

/// `POST /v1/agents`: the new token (shown once) and ready-to-paste client configurations.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCreated {
    /// The token's name, as given (trimmed): the principal's name.
    pub name: String,
    /// `agent` or `human`.
    pub role: RoleName,
    /// The bearer token's secret; shown only here, never again.
    pub token: String,
    /// The MCP endpoint's URL, `http://<Host header>/mcp`.
    pub mcp_url: String,
    /// One configuration per supported MCP client, for an `agent` token; empty for `human`.
    pub configs: Vec<super::mcp_config::ClientConfig>,
}

/// `GET /v1/agents`: token names and roles, never secrets.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AgentList {
    /// Every token, the admin's and revoked ones included.
    pub agents: Vec<super::auth::TokenInfo>,
}

/// `GET /v1/tasks/{taskId}/log`: bytes `offset..nextOffset` of the log (invalid UTF-8
/// replaced), the log's `size` in bytes, `complete` once the task is terminal and nothing is
/// left to read.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogChunk {
    /// The task whose log this is.
    pub task_id: String,
    /// Byte offset where `text` starts; it can differ from the one asked for (the next
    /// character boundary, `tail`'s line start, or `keptFrom`).
    #[schema(minimum = 0)]
    pub offset: u64,
    /// Byte offset just past `text`: where the next read starts.
    #[schema(minimum = 0)]
    pub next_offset: u64,
    /// The log's size in bytes when read.
    #[schema(minimum = 0)]
    pub size: u64,
    /// Where the kept output starts: 0, unless the command wrote more than the log keeps (its
    /// latest 16 MiB); the output before it is gone, and a read from an offset before it
    /// starts here.
    #[schema(minimum = 0)]
    pub kept_from: u64,
    /// Bytes `offset..nextOffset` as text (invalid UTF-8 replaced with U+FFFD).
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
    /// The job after the report.
    pub task: TaskView,
    /// A cancel was requested; cancellation is cooperative: the runner stops the job and
    /// reports how it ended.
    pub cancel_requested: bool,
    /// Every answer given so far, key → answer (SEP-2663 `inputResponses` shape).
    #[schema(value_type = BTreeMap<String, Object>)]
    pub input_responses: Map<String, Value>,
}

/// `POST /v1/jobs/{taskId}/report` (202, the report ends the job): follow `Location`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportEnded {
    /// A cancel had been requested before this report.
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

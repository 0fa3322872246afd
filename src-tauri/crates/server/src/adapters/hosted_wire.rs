//! The JSON bodies of the hosted-task routes ([`hosted_api`](super::hosted_api)): what a host
//! sends (a new task, a settlement, a ttl, a status, input requests, answers, `_meta`) and the
//! [`HostedTask`] record it reads back. Names follow tower-mcp's `TaskStore` and SEP-2663;
//! members are camelCase like the rest of `/v1`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::openapi::{
    RefOr, Schema,
    schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Type},
};

use super::{api_types::Status, jobs_api::ReportError};
use taskdeck_engine::{TaskRecord, clock::iso8601};

/// A hosted task as its host reads it: the task, the owner the host gave it, every answer
/// given so far, the stored `_meta`, and the result (completed) or JSON-RPC error (failed),
/// all as stored (arguments are not redacted: they are the host's own).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostedTask {
    /// The task's opaque id (SEP-2663 `taskId`).
    pub task_id: String,
    /// SEP-2663 `status`.
    pub status: Status,
    /// The latest status message (SEP-2663 `statusMessage`); absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (SEP-2663 `createdAt`), ISO 8601 UTC with milliseconds.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When the task last changed (SEP-2663 `lastUpdatedAt`), ISO 8601 UTC with milliseconds.
    #[schema(format = DateTime)]
    pub last_updated_at: String,
    /// Retention from creation in ms; null = unlimited.
    #[schema(minimum = 0)]
    pub ttl_ms: Option<u64>,
    /// ms until the retention ends, measured when this answer was made (absent when
    /// unlimited): a host's deadline without comparing clocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0)]
    pub expires_in_ms: Option<u64>,
    /// Suggested wait between two polls of the task, in ms (SEP-2663 `pollIntervalMs`).
    #[schema(minimum = 0)]
    pub poll_interval_ms: u64,
    /// The host's tool name (also the task's title in the window).
    pub tool: String,
    /// The tool call's arguments, as given at creation.
    #[schema(value_type = Object)]
    pub arguments: Value,
    /// The principal of the token that created the task (who may see it).
    pub principal: String,
    /// The host's owner of the task (tower-mcp's `TaskOwner`): a name, or null for anonymous.
    pub owner: Option<String>,
    /// Cancellation was requested (by the host, or by a person in the window).
    pub cancel_requested: bool,
    /// Outstanding input requests, key → SEP-2663 `InputRequest` (`{method, params}`).
    #[schema(value_type = BTreeMap<String, Object>)]
    pub input_requests: BTreeMap<String, Value>,
    /// Every answer recorded so far, key → SEP-2663 `InputResponse`, across all input rounds
    /// (given by the host or by a person in the window).
    #[schema(value_type = BTreeMap<String, Object>)]
    pub answers: BTreeMap<String, Value>,
    /// The CallToolResult (completed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub result: Option<Value>,
    /// The JSON-RPC error object (failed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub error: Option<Value>,
    /// The latest protocol `_meta` stored with `PUT .../meta`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub meta: Option<Value>,
}

impl HostedTask {
    /// The record of `task` at `now_ms` (ms since the epoch) with its owner, answers and meta.
    pub fn new(
        task: &TaskRecord,
        owner: Option<String>,
        answers: BTreeMap<String, Value>,
        meta: Option<Value>,
        now_ms: i64,
    ) -> HostedTask {
        let status = task.status;
        HostedTask {
            task_id: task.task_id.clone(),
            status: status.into(),
            status_message: task.status_message.clone(),
            created_at: iso8601(task.created_at_ms),
            last_updated_at: iso8601(task.last_updated_at_ms),
            ttl_ms: task.ttl_ms,
            expires_in_ms: task.ttl_ms.map(|ttl| {
                let end = task
                    .created_at_ms
                    .saturating_add(ttl.min(i64::MAX as u64) as i64);
                end.saturating_sub(now_ms).max(0) as u64
            }),
            poll_interval_ms: task.poll_interval_ms,
            tool: task.tool.clone(),
            arguments: task.arguments.clone(),
            principal: task.principal.clone(),
            owner,
            cancel_requested: task.cancel_requested,
            input_requests: task.input_requests.clone().into_iter().collect(),
            answers,
            result: task
                .result
                .clone()
                .filter(|_| status == taskdeck_engine::TaskStatus::Completed),
            error: task
                .error
                .clone()
                .filter(|_| status == taskdeck_engine::TaskStatus::Failed),
            meta,
        }
    }
}

/// `POST /v1/hosted-tasks`: a new `working` task the host runs itself.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateHosted {
    /// The host's tool name (1 to 200 characters).
    #[schema(min_length = 1, max_length = 200)]
    pub tool: String,
    /// The tool call's arguments (a JSON object, as MCP's `tools/call` has them; absent =
    /// `{}`), stored as given.
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<Map<String, Value>>,
    /// Retention from creation in ms (at most 100 years), stored as given; absent = unlimited.
    #[schema(minimum = 0, maximum = 3_153_600_000_000_u64)]
    #[serde(default, deserialize_with = "some_whole_ms")]
    pub ttl_ms: Option<u64>,
    /// The host's owner of the task; absent or null = anonymous (kept distinct from `""`).
    pub owner: Option<String>,
}

/// `POST /v1/hosted-tasks/{taskId}/settle`: an object with exactly one member, the way the
/// task ends (schema: [`SettleHosted::schema`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SettleHosted {
    /// `completed` with this CallToolResult (an `isError: true` result included).
    Completed(Map<String, Value>),
    /// `failed` with this JSON-RPC error object (`{code, message, data?}`; JSON-RPC 2.0 §5.1).
    Failed(ReportError),
    /// `cancelled`; the text becomes the status message.
    Cancelled(String),
}

/// One of `{completed: object}`, `{failed: object}`, `{cancelled: string}`, no other members
/// (a derive leaves the other members open).
impl utoipa::PartialSchema for SettleHosted {
    fn schema() -> RefOr<Schema> {
        let only = |name: &str, value: RefOr<Schema>| {
            ObjectBuilder::new()
                .title(Some(name))
                .property(name, value)
                .required(name)
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        };
        let described = |value: ObjectBuilder, what: &str| value.description(Some(what)).into();
        OneOfBuilder::new()
            .item(only(
                "completed",
                described(
                    ObjectBuilder::new().schema_type(Type::Object),
                    "The CallToolResult (an `isError: true` result included): the task completes.",
                ),
            ))
            .item(only("failed", ReportError::schema()))
            .item(only(
                "cancelled",
                described(
                    ObjectBuilder::new().schema_type(Type::String),
                    "The status message: the task is cancelled.",
                ),
            ))
            .description(Some("How the task ends: exactly one member."))
            .into()
    }
}

impl utoipa::ToSchema for SettleHosted {}

/// `PUT /v1/hosted-tasks/{taskId}/ttl`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedTtl {
    /// The new retention, in ms from creation (0 = expired now; at most 100 years).
    #[schema(minimum = 0, maximum = 3_153_600_000_000_u64)]
    #[serde(deserialize_with = "whole_ms")]
    pub ttl_ms: u64,
}

/// A status a host may set without ending the task.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LiveStatus {
    /// Back to work: any outstanding input request is superseded.
    Working,
    /// Waiting for input; only while an input request is outstanding (else 422).
    InputRequired,
}

/// `POST /v1/hosted-tasks/{taskId}/status`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedStatus {
    /// The new status.
    pub status: LiveStatus,
    /// The new status message; absent = unchanged.
    pub status_message: Option<String>,
}

/// `PUT /v1/hosted-tasks/{taskId}/input-requests`: the whole outstanding set.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedInputRequests {
    /// Key → SEP-2663 `InputRequest` (`{method, params}`), at least one. A key outstanding
    /// with the same request is carried forward; an outstanding key left out is superseded.
    #[schema(schema_with = input_requests_schema)]
    pub requests: BTreeMap<String, Map<String, Value>>,
    /// The new status message; absent = unchanged.
    pub status_message: Option<String>,
}

/// The shape of one SEP-2663 `InputRequest` in the OpenAPI document (§Task Update Requests;
/// the route keeps the request object whole, as given).
#[derive(Deserialize, utoipa::ToSchema)]
pub struct InputRequestShape {
    /// What is asked of the client.
    pub method: InputMethod,
    /// `ElicitRequestParams` or `CreateMessageRequestParams`; none for `roots/list`.
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
}

/// The schema of `requests`: an object of at least one [`InputRequestShape`].
fn input_requests_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .additional_properties(Some(<InputRequestShape as utoipa::PartialSchema>::schema()))
        .min_properties(Some(1))
        .build()
}

/// What a task may ask of its client.
#[derive(Deserialize, utoipa::ToSchema)]
pub enum InputMethod {
    /// A form or URL for the user (`ElicitRequestParams`).
    #[serde(rename = "elicitation/create")]
    Elicitation,
    /// A completion from the client's model (`CreateMessageRequestParams`).
    #[serde(rename = "sampling/createMessage")]
    Sampling,
    /// The client's roots.
    #[serde(rename = "roots/list")]
    Roots,
}

/// `POST /v1/hosted-tasks/{taskId}/input-responses`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedInputResponses {
    /// Key → SEP-2663 `InputResponse`, recorded as given (the host validated them).
    #[schema(value_type = BTreeMap<String, Object>)]
    pub responses: BTreeMap<String, Map<String, Value>>,
}

/// `PUT /v1/hosted-tasks/{taskId}/meta`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HostedMeta {
    /// The task's protocol `_meta`, a JSON object (replaces the one stored before).
    #[schema(value_type = Object)]
    pub meta: Map<String, Value>,
}

/// Whether a change applied (`false`: the task is settled, or the change was already so).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HostedChange {
    /// The change was applied.
    pub changed: bool,
}

/// `POST .../settle`: whether this call ended the task, and the task after it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HostedSettled {
    /// False when the task had already ended (it is left as it was).
    pub changed: bool,
    /// The task after this call.
    pub task: HostedTask,
}

/// `POST .../input-responses`: the keys taken, the keys ignored (never issued, answered or
/// superseded), and the keys still outstanding afterwards.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HostedAnswered {
    /// The keys whose answers were recorded, sorted.
    pub accepted: Vec<String>,
    /// The keys not outstanding (never issued, already answered or superseded), sorted.
    pub ignored: Vec<String>,
    /// The keys still waiting for an answer, sorted; empty: the task is back to `working`.
    pub outstanding: Vec<String>,
}

/// `GET /v1/hosted-tasks`: a page of the caller's hosted tasks whose retention has not
/// elapsed, newest first.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HostedTaskList {
    /// The page's tasks, newest first.
    pub tasks: Vec<HostedTask>,
    /// The next page's `cursor`; absent on the last page.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A count of ms: a JSON number with no fractional part, `0` to `u64::MAX` (JSON Schema's
/// integers include `5.0`, so a whole float is taken too).
fn whole_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    n.as_u64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && (0.0..1.8e19).contains(f))
                .map(|f| f as u64)
        })
        .ok_or_else(|| serde::de::Error::custom(format!("{n} is not a whole number of ms")))
}

/// [`whole_ms`] for an optional member (null = absent).
fn some_whole_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    struct Ms(#[serde(deserialize_with = "whole_ms")] u64);
    Ok(Option::<Ms>::deserialize(d)?.map(|Ms(ms)| ms))
}

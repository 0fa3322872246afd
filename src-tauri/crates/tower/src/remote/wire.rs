//! The hosted-task record Taskdeck's `/v1/hosted-tasks` routes answer with (its `HostedTask`
//! schema in `GET /v1/openapi.json`), and the same record as tower-mcp's types: a
//! [`TaskObject`], a [`TaskSnapshot`], the outstanding requests and the answers.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use tower_mcp::{
    CallToolResult,
    async_task::{TaskOwner, TaskSnapshot, TaskStoreError},
    error::JsonRpcError,
    protocol::{InputRequests, InputResponses, TaskObject, TaskStatus},
};

use crate::views::decode;

/// A hosted task as `GET /v1/hosted-tasks/{taskId}` answers it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HostedRecord {
    pub task_id: String,
    pub status: TaskStatus,
    pub status_message: Option<String>,
    pub created_at: String,
    pub last_updated_at: String,
    pub ttl_ms: Option<u64>,
    /// ms until the retention ends, when the answer was made (absent when unlimited).
    pub expires_in_ms: Option<u64>,
    pub poll_interval_ms: u64,
    pub tool: String,
    pub arguments: Value,
    pub owner: TaskOwner,
    pub cancel_requested: bool,
    #[serde(default)]
    pub input_requests: BTreeMap<String, Value>,
    #[serde(default)]
    pub answers: BTreeMap<String, Value>,
    pub result: Option<Value>,
    pub error: Option<Value>,
    pub meta: Option<Value>,
}

impl HostedRecord {
    /// True when the task's work must stop: cancelled, or cancellation requested (by the host
    /// or by a person in Taskdeck's window).
    pub(crate) fn must_stop(&self) -> bool {
        self.status == TaskStatus::Cancelled || self.cancel_requested
    }

    /// True for completed, failed and cancelled.
    pub(crate) fn is_terminal(&self) -> bool {
        matches!(
            self.status,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The task object of tower-mcp's status responses (no result or error; see
    /// [`HostedRecord::snapshot`]), with the stored `_meta`.
    pub(crate) fn object(&self) -> TaskObject {
        TaskObject {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: self.created_at.clone(),
            last_updated_at: self.last_updated_at.clone(),
            ttl: self.ttl_ms,
            poll_interval: Some(self.poll_interval_ms),
            result: None,
            error: None,
            meta: self.meta.clone(),
        }
    }

    /// The task object with the result of a completed task or the error of a failed one.
    /// Errors: [`TaskStoreError::Decode`] when they are not of their shape.
    pub(crate) fn snapshot(&self) -> Result<TaskSnapshot, TaskStoreError> {
        let result = match (&self.result, self.status) {
            (Some(result), TaskStatus::Completed) => Some(decode::<CallToolResult>(result)?),
            _ => None,
        };
        let error = match (&self.error, self.status) {
            (Some(error), TaskStatus::Failed) => Some(decode::<JsonRpcError>(error)?),
            _ => None,
        };
        Ok((self.object(), result, error))
    }

    /// The outstanding input requests. Errors: [`TaskStoreError::Decode`].
    pub(crate) fn outstanding(&self) -> Result<InputRequests, TaskStoreError> {
        self.input_requests
            .iter()
            .map(|(key, request)| Ok((key.clone(), decode(request)?)))
            .collect()
    }

    /// Every answer recorded so far. Errors: [`TaskStoreError::Decode`].
    pub(crate) fn responses(&self) -> Result<InputResponses, TaskStoreError> {
        self.answers
            .iter()
            .map(|(key, answer)| Ok((key.clone(), decode(answer)?)))
            .collect()
    }
}

/// `{changed}`: whether a change applied.
#[derive(Debug, Deserialize)]
pub(crate) struct Changed {
    pub changed: bool,
}

/// `POST .../settle`'s answer.
#[derive(Debug, Deserialize)]
pub(crate) struct Settled {
    pub changed: bool,
    pub task: HostedRecord,
}

/// `POST .../input-responses`' answer.
#[derive(Debug, Deserialize)]
pub(crate) struct Answered {
    pub accepted: Vec<String>,
    pub ignored: Vec<String>,
    pub outstanding: Vec<String>,
}

/// `GET /v1/hosted-tasks`' answer: one page.
#[derive(Debug, Deserialize)]
pub(crate) struct RecordList {
    pub tasks: Vec<HostedRecord>,
    /// The next page's cursor; absent on the last page.
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

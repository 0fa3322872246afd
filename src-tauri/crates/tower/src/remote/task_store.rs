//! `impl TaskStore for RemoteTaskdeckStore`: each tower-mcp call as one `/v1/hosted-tasks`
//! request, with the trait's semantics kept by the server (an expired task is absent, terminal
//! states never change, input request keys are never reissued) and by the event stream
//! (tokens raised by cancels and expiry, waiters woken by changes).

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tower_mcp::{
    CallToolResult,
    async_task::{
        AppliedInputResponses, CancellationToken, Result, TaskOwner, TaskResumeContext,
        TaskSnapshot, TaskStore, TaskStoreError,
    },
    error::JsonRpcError,
    protocol::{InputRequests, InputResponses, TaskObject, TaskStatus},
};

use super::{RemoteTaskdeckStore, events::EVERY_TASK};
use crate::views::{cancel_message, encode, encode_map, not_progress};

/// ttlMs of a task created without one: 5 minutes, as tower-mcp's `MemoryTaskStore`.
const DEFAULT_TTL_MS: u64 = 5 * 60 * 1000;

/// A status as the routes spell it (`working`, `input_required`, ...).
fn status_name(status: TaskStatus) -> Result<String> {
    match encode(&status)? {
        Value::String(name) => Ok(name),
        other => Err(TaskStoreError::Encode(format!("status {other}"))),
    }
}

/// Resolves at the next change of `task_id` (or of every task), or when changes were missed.
async fn next_change_of(changes: &mut Receiver<Arc<str>>, task_id: &str) {
    loop {
        match changes.recv().await {
            Ok(id) if &*id != task_id && &*id != EVERY_TASK => continue,
            Ok(_) | Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => std::future::pending().await,
        }
    }
}

impl RemoteTaskdeckStore {
    /// Settles `task_id`; `Ok(true)` only when this call ended it.
    async fn settle(&self, task_id: &str, settlement: Value) -> Result<bool> {
        let settled = self.inner.api.settle(task_id, settlement).await?;
        Ok(settled.is_some_and(|s| s.changed))
    }
}

#[async_trait]
impl TaskStore for RemoteTaskdeckStore {
    async fn create_task(
        &self,
        tool_name: &str,
        arguments: Value,
        ttl: Option<u64>,
        owner: TaskOwner,
    ) -> Result<(String, CancellationToken)> {
        let ttl = ttl.unwrap_or(DEFAULT_TTL_MS);
        let record = self
            .inner
            .api
            .create(tool_name, arguments, Some(ttl), &owner)
            .await?;
        let token = self.inner.routing.token(&record.task_id, Some(&record));
        Ok((record.task_id, token))
    }

    async fn task_owner(&self, task_id: &str) -> Result<Option<TaskOwner>> {
        Ok(self.inner.api.read(task_id).await?.map(|r| r.owner))
    }

    async fn get_task(&self, task_id: &str) -> Result<Option<TaskObject>> {
        Ok(self.inner.api.read(task_id).await?.map(|r| r.object()))
    }

    async fn set_task_meta(&self, task_id: &str, meta: Value) -> Result<bool> {
        self.inner.api.set_meta(task_id, meta).await
    }

    async fn discard_task(&self, task_id: &str) -> Result<bool> {
        self.inner.api.discard(task_id).await
    }

    async fn get_task_result(&self, task_id: &str) -> Result<Option<TaskSnapshot>> {
        self.inner
            .api
            .read(task_id)
            .await?
            .map(|r| r.snapshot())
            .transpose()
    }

    async fn wait_for_completion(&self, task_id: &str) -> Result<Option<TaskSnapshot>> {
        // Subscribed before the first read, so no change between the two is missed.
        let mut changes = self.inner.routing.changes.subscribe();
        loop {
            let Some(record) = self.inner.api.read(task_id).await? else {
                return Ok(None);
            };
            if record.is_terminal() {
                return record.snapshot().map(Some);
            }
            let sleep = record
                .expires_in_ms
                .map_or(Duration::from_secs(3600), Duration::from_millis);
            tokio::select! {
                _ = tokio::time::sleep(sleep) => {}
                _ = next_change_of(&mut changes, task_id) => {}
            }
        }
    }

    async fn list_tasks(&self, status_filter: Option<TaskStatus>) -> Result<Vec<TaskObject>> {
        let status = status_filter.map(status_name).transpose()?;
        let records = self.inner.api.list(status.as_deref()).await?;
        Ok(records.iter().map(|r| r.object()).collect())
    }

    async fn require_input(
        &self,
        task_id: &str,
        requests: InputRequests,
        message: Option<&str>,
    ) -> Result<bool> {
        let requests = Value::Object(encode_map(&requests)?);
        self.inner
            .api
            .require_input(task_id, requests, message)
            .await
    }

    async fn outstanding_input_requests(&self, task_id: &str) -> Result<Option<InputRequests>> {
        self.inner
            .api
            .read(task_id)
            .await?
            .map(|r| r.outstanding())
            .transpose()
    }

    async fn apply_input_responses(
        &self,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<Option<AppliedInputResponses>> {
        let responses = Value::Object(encode_map(&responses)?);
        let answered = self.inner.api.answer(task_id, responses).await?;
        Ok(answered.map(|a| AppliedInputResponses {
            accepted: a.accepted.into_iter().collect(),
            ignored: a.ignored.into_iter().collect(),
            still_outstanding: a.outstanding.into_iter().collect(),
        }))
    }

    async fn input_responses(&self, task_id: &str) -> Result<Option<InputResponses>> {
        self.inner
            .api
            .read(task_id)
            .await?
            .map(|r| r.responses())
            .transpose()
    }

    async fn set_status(
        &self,
        task_id: &str,
        status: TaskStatus,
        message: Option<&str>,
    ) -> Result<bool> {
        if !matches!(status, TaskStatus::Working | TaskStatus::InputRequired) {
            return Err(not_progress(status));
        }
        self.inner
            .api
            .set_status(task_id, &status_name(status)?, message)
            .await
    }

    async fn resume_context(&self, task_id: &str) -> Result<Option<TaskResumeContext>> {
        let Some(record) = self.inner.api.read(task_id).await? else {
            return Ok(None);
        };
        // A stop the event stream saw before this registration left the token raised.
        let token = self.inner.routing.token(task_id, Some(&record));
        let responses = record.responses()?;
        Ok(Some(
            TaskResumeContext::new(record.tool, record.arguments, responses)
                .with_cancellation_token(token),
        ))
    }

    async fn set_ttl(&self, task_id: &str, ttl_ms: u64) -> Result<bool> {
        self.inner.api.set_ttl(task_id, ttl_ms).await
    }

    async fn complete_task(&self, task_id: &str, result: CallToolResult) -> Result<bool> {
        self.settle(task_id, json!({"completed": encode(&result)?}))
            .await
    }

    async fn fail_task(&self, task_id: &str, error: JsonRpcError) -> Result<bool> {
        self.settle(task_id, json!({"failed": encode(&error)?}))
            .await
    }

    async fn cancel_task(&self, task_id: &str, reason: Option<&str>) -> Result<Option<TaskObject>> {
        let message = cancel_message(reason);
        let settled = self
            .inner
            .api
            .settle(task_id, json!({"cancelled": message}))
            .await?;
        let Some(settled) = settled else {
            return Ok(None);
        };
        // Raised even for a task that had already ended: work winding down behind it stops.
        self.inner.routing.raise(task_id);
        Ok(Some(settled.task.object()))
    }
}

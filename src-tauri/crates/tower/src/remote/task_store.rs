//! `impl TaskStore for RemoteTaskdeckStore`: each tower-mcp call as one `/v1/hosted-tasks`
//! request, with the trait's semantics kept by the server (an expired task is absent, terminal
//! states never change, input request keys are never reissued) and by the event stream
//! (tokens raised by cancels and expiry, waiters woken by changes).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

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

use super::{
    RemoteTaskdeckStore,
    api::{MAX_BODY_BYTES, SettleError},
    events::EVERY_TASK,
    wire::Settled,
};
use crate::views::{cancel_message, check_arguments, encode, encode_map, not_progress};

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

/// The ways a settle call ended for the trait method that made it.
enum Settle {
    /// Taskdeck answered: the task after it, and whether this call ended it (`None`: absent).
    Answered(Option<Box<Settled>>),
    /// Taskdeck could not take it now: kept in the outbox, sent again until it does.
    Kept,
    /// An earlier outcome of the task waits in the outbox and will end it; this one is dropped.
    Behind,
}

impl RemoteTaskdeckStore {
    /// Sends `settlement` of `task_id`, keeping it for retries when Taskdeck cannot take it now
    /// (down, or 5xx). Errors: what Taskdeck refused (the same call fails the same way).
    async fn settle(&self, task_id: &str, settlement: Value) -> Result<Settle> {
        if self.inner.outbox.holds(task_id) {
            return Ok(Settle::Behind);
        }
        match self.inner.api.settle(task_id, settlement.clone()).await {
            Ok(settled) => Ok(Settle::Answered(settled.map(Box::new))),
            Err(SettleError::Retry(e)) => {
                self.inner
                    .outbox
                    .keep(&self.inner.api, task_id, settlement, &e.to_string());
                Ok(Settle::Kept)
            }
            Err(e) => {
                let e = e.into_inner();
                tracing::warn!(task_id = %task_id, "Taskdeck refused the task's outcome: {e}");
                Err(e)
            }
        }
    }

    /// Ends `task_id` with `settlement` (`{completed}` or `{failed}`); `Ok(true)` when this
    /// call ended it, or when Taskdeck could not take it now and it is kept for retries.
    async fn finish(&self, task_id: &str, settlement: Value) -> Result<bool> {
        Ok(match self.settle(task_id, settlement).await? {
            Settle::Answered(settled) => settled.is_some_and(|s| s.changed),
            Settle::Kept => true,
            Settle::Behind => false,
        })
    }
}

/// The error a task is failed with when its result is over what Taskdeck takes in one request:
/// `result too large (N bytes, at most M)`, N and M counted as the result's compact JSON.
fn too_large(result_bytes: usize) -> JsonRpcError {
    JsonRpcError::internal_error(format!(
        "result too large ({result_bytes} bytes, at most {})",
        MAX_RESULT_BYTES
    ))
}

/// The largest result (compact JSON, bytes) a task can complete with: Taskdeck's request body
/// limit less the `{"completed":}` around it.
pub(crate) const MAX_RESULT_BYTES: usize = MAX_BODY_BYTES - r#"{"completed":}"#.len();

#[async_trait]
impl TaskStore for RemoteTaskdeckStore {
    async fn create_task(
        &self,
        tool_name: &str,
        arguments: Value,
        ttl: Option<u64>,
        owner: TaskOwner,
    ) -> Result<(String, CancellationToken)> {
        check_arguments(tool_name, &arguments)?;
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
        Ok(answered.map(|a| {
            // Keys a person answered in Taskdeck and not yet handed over count as accepted
            // once: that is what makes tower-mcp wake the handler waiting for them.
            let elsewhere = self.inner.routing.take_answered(task_id, &a.ignored);
            let (taken, ignored): (BTreeSet<String>, BTreeSet<String>) =
                a.ignored.into_iter().partition(|k| elsewhere.contains(k));
            AppliedInputResponses {
                accepted: a.accepted.into_iter().chain(taken).collect(),
                ignored,
                still_outstanding: a.outstanding.into_iter().collect(),
            }
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
        let result = encode(&result)?;
        let bytes = serde_json::to_vec(&result).map_or(0, |b| b.len());
        if bytes > MAX_RESULT_BYTES {
            // Taskdeck would refuse the whole request (413), and tower-mcp would fail the task
            // with a message that does not say why: it fails with one that does.
            tracing::warn!(task_id = %task_id, bytes, "the task's result is over what Taskdeck takes");
            let error = encode(&too_large(bytes))?;
            self.finish(task_id, json!({"failed": error})).await?;
            return Ok(false);
        }
        self.finish(task_id, json!({"completed": result})).await
    }

    async fn fail_task(&self, task_id: &str, error: JsonRpcError) -> Result<bool> {
        self.finish(task_id, json!({"failed": encode(&error)?}))
            .await
    }

    async fn cancel_task(&self, task_id: &str, reason: Option<&str>) -> Result<Option<TaskObject>> {
        let message = cancel_message(reason);
        let settled = self.settle(task_id, json!({"cancelled": message})).await?;
        // Raised even for a task that had already ended: work winding down behind it stops.
        let settled = match settled {
            Settle::Answered(None) => return Ok(None),
            Settle::Answered(Some(settled)) => settled,
            Settle::Kept | Settle::Behind => {
                self.inner.routing.raise(task_id);
                return Err(TaskStoreError::Backend(
                    "cannot reach Taskdeck; the task's outcome is kept and sent once it answers"
                        .into(),
                ));
            }
        };
        self.inner.routing.raise(task_id);
        Ok(Some(settled.task.object()))
    }
}

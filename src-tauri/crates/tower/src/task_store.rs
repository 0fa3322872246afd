//! `impl TaskStore for TaskdeckStore`: each tower-mcp call as one engine call (one store
//! write, or one read), with the trait's semantics: an expired task reads as absent
//! everywhere, terminal states never change, a cancel or an expiry raises the task's token,
//! input request keys are never reissued.

use async_trait::async_trait;
use taskdeck_engine::{Settlement, TaskRecord, store::ListFilter};
use tower_mcp::{
    CallToolResult,
    async_task::{
        AppliedInputResponses, CancellationToken, Result, TaskOwner, TaskResumeContext,
        TaskSnapshot, TaskStore,
    },
    error::JsonRpcError,
    protocol::{InputRequests, InputResponses, TaskObject, TaskStatus},
};

use crate::{
    TaskdeckStore,
    signals::{must_stop, until_ended},
    views::{
        cancel_message, check_arguments, decode, encode, encode_map, engine_status, not_progress,
        object_of, owner_of, principal_of, snapshot_of, store_error,
    },
};

/// Tasks read per page by `list_tasks`.
const LIST_PAGE: usize = 500;

impl TaskdeckStore {
    /// The live (not expired) task `task_id`, or `None`.
    fn live(&self, task_id: &str) -> Result<Option<TaskRecord>> {
        self.inner.engine.get_hosted(task_id).map_err(store_error)
    }

    /// The task's protocol `_meta`, if one was stored.
    fn meta(&self, task_id: &str) -> Result<Option<serde_json::Value>> {
        self.inner.engine.hosted_meta(task_id).map_err(store_error)
    }

    /// The task object of `task`, with its `_meta`.
    fn object(&self, task: &TaskRecord) -> Result<TaskObject> {
        Ok(object_of(task, self.meta(&task.task_id)?))
    }

    /// The snapshot of `task`, with its `_meta`.
    fn snapshot(&self, task: &TaskRecord) -> Result<TaskSnapshot> {
        snapshot_of(task, self.meta(&task.task_id)?)
    }

    /// Settles `task_id`; `Ok(true)` only when this call ended it.
    async fn settle(&self, task_id: &str, settlement: Settlement) -> Result<bool> {
        let settled = self
            .inner
            .engine
            .settle_hosted(task_id, settlement)
            .await
            .map_err(store_error)?;
        Ok(settled.is_some_and(|(_, changed)| changed))
    }
}

#[async_trait]
impl TaskStore for TaskdeckStore {
    async fn create_task(
        &self,
        tool_name: &str,
        arguments: serde_json::Value,
        ttl: Option<u64>,
        owner: TaskOwner,
    ) -> Result<(String, CancellationToken)> {
        check_arguments(tool_name, &arguments)?;
        let ttl = ttl.or(self.inner.options.default_ttl_ms);
        let task = self
            .inner
            .engine
            .create_hosted(&principal_of(&owner), tool_name, arguments, ttl)
            .await
            .map_err(store_error)?;
        let token = self.inner.signals.token(&task);
        Ok((task.task_id.clone(), token))
    }

    async fn task_owner(&self, task_id: &str) -> Result<Option<TaskOwner>> {
        Ok(self.live(task_id)?.map(|t| owner_of(&t.principal)))
    }

    async fn get_task(&self, task_id: &str) -> Result<Option<TaskObject>> {
        self.live(task_id)?.map(|t| self.object(&t)).transpose()
    }

    async fn set_task_meta(&self, task_id: &str, meta: serde_json::Value) -> Result<bool> {
        self.inner
            .engine
            .set_hosted_meta(task_id, meta)
            .await
            .map_err(store_error)
    }

    async fn discard_task(&self, task_id: &str) -> Result<bool> {
        self.inner
            .engine
            .discard_hosted(task_id)
            .await
            .map_err(store_error)
    }

    async fn get_task_result(&self, task_id: &str) -> Result<Option<TaskSnapshot>> {
        self.live(task_id)?.map(|t| self.snapshot(&t)).transpose()
    }

    async fn wait_for_completion(&self, task_id: &str) -> Result<Option<TaskSnapshot>> {
        until_ended(&self.inner.engine, task_id)
            .await
            .map_err(store_error)?
            .map(|t| self.snapshot(&t))
            .transpose()
    }

    async fn list_tasks(&self, status_filter: Option<TaskStatus>) -> Result<Vec<TaskObject>> {
        let statuses = match status_filter {
            // A status this store cannot hold has no tasks.
            Some(status) => match engine_status(status) {
                Some(status) => vec![status],
                None => return Ok(Vec::new()),
            },
            None => Vec::new(),
        };
        let mut filter = ListFilter {
            statuses,
            limit: LIST_PAGE,
            ..ListFilter::default()
        };
        let mut tasks = Vec::new();
        loop {
            let page = self
                .inner
                .engine
                .store()
                .page(&filter)
                .map_err(store_error)?;
            let now = taskdeck_engine::clock::now_ms();
            for task in &page.tasks {
                if !taskdeck_engine::retention_elapsed(task, now) {
                    tasks.push(self.object(task)?);
                }
            }
            match page.next_seq {
                Some(seq) => filter.before_seq = Some(seq),
                None => return Ok(tasks),
            }
        }
    }

    async fn require_input(
        &self,
        task_id: &str,
        requests: InputRequests,
        message: Option<&str>,
    ) -> Result<bool> {
        let requests = encode_map(&requests)?.into_iter().collect();
        self.inner
            .engine
            .require_hosted_input(task_id, requests, message.map(str::to_string))
            .await
            .map_err(store_error)
    }

    async fn outstanding_input_requests(&self, task_id: &str) -> Result<Option<InputRequests>> {
        let Some(task) = self.live(task_id)? else {
            return Ok(None);
        };
        task.input_requests
            .iter()
            .map(|(key, request)| Ok((key.clone(), decode(request)?)))
            .collect::<Result<InputRequests>>()
            .map(Some)
    }

    async fn apply_input_responses(
        &self,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<Option<AppliedInputResponses>> {
        let answers = self
            .inner
            .engine
            .answer_hosted(task_id, encode_map(&responses)?)
            .await
            .map_err(store_error)?;
        Ok(answers.map(|a| AppliedInputResponses {
            accepted: a.accepted,
            ignored: a.ignored,
            still_outstanding: a.outstanding,
        }))
    }

    async fn input_responses(&self, task_id: &str) -> Result<Option<InputResponses>> {
        if self.live(task_id)?.is_none() {
            return Ok(None);
        }
        let answers = self
            .inner
            .engine
            .hosted_answers(task_id)
            .map_err(store_error)?;
        answers
            .iter()
            .map(|(key, answer)| Ok((key.clone(), decode(answer)?)))
            .collect::<Result<InputResponses>>()
            .map(Some)
    }

    async fn set_status(
        &self,
        task_id: &str,
        status: TaskStatus,
        message: Option<&str>,
    ) -> Result<bool> {
        let Some(status) = engine_status(status).filter(|s| !s.is_terminal()) else {
            return Err(not_progress(status));
        };
        self.inner
            .engine
            .set_hosted_status(task_id, status, message.map(str::to_string))
            .await
            .map_err(store_error)
    }

    async fn resume_context(&self, task_id: &str) -> Result<Option<TaskResumeContext>> {
        let Some(task) = self.live(task_id)? else {
            return Ok(None);
        };
        let responses = self.input_responses(task_id).await?.unwrap_or_default();
        let token = self.inner.signals.token(&task);
        // A cancel or expiry committed between the read above and the token's registration
        // reached the feed reader before the token did: read again.
        if self
            .live(task_id)?
            .is_none_or(|t| must_stop(&t, taskdeck_engine::clock::now_ms()))
        {
            token.cancel();
        }
        Ok(Some(
            TaskResumeContext::new(task.tool, task.arguments, responses)
                .with_cancellation_token(token),
        ))
    }

    async fn set_ttl(&self, task_id: &str, ttl_ms: u64) -> Result<bool> {
        self.inner
            .engine
            .set_hosted_ttl(task_id, ttl_ms)
            .await
            .map_err(store_error)
    }

    async fn complete_task(&self, task_id: &str, result: CallToolResult) -> Result<bool> {
        self.settle(task_id, Settlement::Completed(encode(&result)?))
            .await
    }

    async fn fail_task(&self, task_id: &str, error: JsonRpcError) -> Result<bool> {
        self.settle(task_id, Settlement::Failed(encode(&error)?))
            .await
    }

    async fn cancel_task(&self, task_id: &str, reason: Option<&str>) -> Result<Option<TaskObject>> {
        let message = cancel_message(reason);
        let settled = self
            .inner
            .engine
            .settle_hosted(task_id, Settlement::Cancelled(message))
            .await
            .map_err(store_error)?;
        let Some((task, _)) = settled else {
            return Ok(None);
        };
        // Raised even for a task that had already ended: work winding down behind it stops.
        self.inner.signals.raise(task_id);
        self.object(&task).map(Some)
    }
}

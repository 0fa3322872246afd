//! Answers given in Taskdeck's window, delivered to the tower-mcp router as a client's
//! `tasks/update`. tower-mcp wakes a live handler parked in `TaskContext::require_input` only
//! inside its own `tasks/update` handling (after `apply_input_responses` reports an accepted key
//! and nothing outstanding), so an answer recorded in Taskdeck by a person would leave the
//! handler parked forever. The event reader notes such answers (`Routing::answered_elsewhere`);
//! once a task has nothing outstanding, the deliverer sends the router a `tasks/update` with
//! those answers, exactly as a client would, and the store's `apply_input_responses` reports
//! them as accepted (once), so the router's own code wakes the handler.

use std::{collections::HashMap, sync::Arc};

use tokio::sync::mpsc;
use tower::{Service, ServiceExt};
use tower_mcp::{
    Extensions, RequestId, RouterRequest, RouterResponse,
    async_task::TaskOwner,
    protocol::{McpRequest, UpdateTaskParams},
};

use super::RemoteTaskdeckStore;

/// Builds the request extensions a delivered `tasks/update` carries, from the task's owner
/// (what the router's task owner resolver must find to authorize it).
pub(crate) type Identity = Arc<dyn Fn(&TaskOwner) -> Extensions + Send + Sync>;

/// Runs the deliverer on a Tokio task: each task id received is read, and when nothing of it is
/// outstanding any more, its undelivered answers go to `service` as one `tasks/update`.
pub(crate) fn spawn<S>(
    store: RemoteTaskdeckStore,
    mut ids: mpsc::UnboundedReceiver<String>,
    mut service: S,
    identity: Identity,
) where
    S: Service<RouterRequest, Response = RouterResponse> + Send + 'static,
    S::Future: Send,
    S::Error: std::fmt::Display + Send,
{
    tokio::spawn(async move {
        let mut sent = 0u64;
        while let Some(id) = ids.recv().await {
            let Some(request) = update_for(&store, &id, &identity).await else {
                continue;
            };
            sent += 1;
            let request = RouterRequest {
                id: RequestId::String(format!("taskdeck-answer-{sent}")),
                ..request
            };
            let answer = match service.ready().await {
                Ok(ready) => ready.call(request).await,
                Err(e) => Err(e),
            };
            match answer {
                Ok(RouterResponse { inner: Ok(_), .. }) => {
                    tracing::debug!(task_id = %id, "answers given in Taskdeck delivered");
                }
                Ok(RouterResponse { inner: Err(e), .. }) => tracing::warn!(
                    task_id = %id,
                    "the router refused the answers given in Taskdeck: {} ({}); a server whose \
                     tasks have owners delivers them with RemoteTaskdeckStore::deliver_answers_as",
                    e.message,
                    e.code
                ),
                Err(e) => {
                    tracing::warn!(task_id = %id, "cannot deliver the answers given in Taskdeck: {e}")
                }
            }
        }
    });
}

/// The `tasks/update` delivering task `id`'s answers given elsewhere, when it has some and
/// nothing is outstanding; `None` otherwise (a task still waiting for other answers gets its
/// update when the last one comes).
async fn update_for(
    store: &RemoteTaskdeckStore,
    id: &str,
    identity: &Identity,
) -> Option<RouterRequest> {
    let routing = &store.inner.routing;
    let keys = routing.answered_keys(id);
    if keys.is_empty() {
        return None;
    }
    let record = match store.inner.api.read(id).await {
        Ok(Some(record)) => record,
        Ok(None) => {
            routing.forget_answers(id);
            return None;
        }
        Err(e) => {
            tracing::warn!(task_id = %id, "cannot read the task answered in Taskdeck: {e}");
            return None;
        }
    };
    if record.is_terminal() {
        routing.forget_answers(id);
        return None;
    }
    if !record.input_requests.is_empty() {
        return None;
    }
    let input_responses: HashMap<String, serde_json::Value> = keys
        .iter()
        .filter_map(|key| Some((key.clone(), record.answers.get(key)?.clone())))
        .collect();
    if input_responses.is_empty() {
        return None;
    }
    let mut request = RouterRequest::new(
        RequestId::Number(0),
        McpRequest::UpdateTask(UpdateTaskParams {
            task_id: id.to_string(),
            input_responses,
            meta: None,
        }),
    );
    request.extensions = identity(&record.owner);
    Some(request)
}

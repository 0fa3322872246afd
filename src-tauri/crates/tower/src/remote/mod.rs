//! [`RemoteTaskdeckStore`]: a tower-mcp [`TaskStore`](tower_mcp::async_task::TaskStore) that
//! keeps its tasks in a running Taskdeck, over its HTTP API (`/v1/hosted-tasks`, and
//! `/v1/events` for what happens in Taskdeck's window). A tower-mcp server built with it has
//! every task in the window, under its token's principal: a person answers its input requests
//! there and presses its cancel there, and the server's handlers see both (the answers through
//! `input_responses`/`resume_context`, the cancel through the task's cancellation token).
//!
//! Parts: `api` (the HTTP calls), `wire` (the record the routes answer with), `events` (tokens
//! and waiters from the event stream), `task_store` (the trait, method by method).

mod api;
mod events;
mod task_store;
mod wire;

use std::sync::Arc;

use tokio::sync::oneshot;
use tower_mcp::async_task::TaskStoreError;

use api::Api;
use events::Routing;

/// A tower-mcp task store over a running Taskdeck's HTTP API. Cheap to clone: clones share
/// one connection pool and one event stream. Hand it to `McpRouter::task_store`.
#[derive(Clone)]
pub struct RemoteTaskdeckStore {
    inner: Arc<Inner>,
}

/// What the clones of a [`RemoteTaskdeckStore`] share. Dropping it stops the event reader.
struct Inner {
    api: Api,
    routing: Arc<Routing>,
    _stop: oneshot::Sender<()>,
}

impl RemoteTaskdeckStore {
    /// Connects to the Taskdeck at `base_url` (e.g. `http://127.0.0.1:4747`, as `taskdeck
    /// serve` prints it) with `token` (a principal's token, from `taskdeck token create NAME`
    /// or the window's Agents page): opens its event stream, so every cancel and change from
    /// then on reaches the store's tokens and waiters. Must be called inside a Tokio runtime.
    ///
    /// Errors: [`TaskStoreError::Backend`] when the server cannot be reached or refuses the
    /// token (401) or the host (403).
    pub async fn connect(
        base_url: &str,
        token: &str,
    ) -> Result<RemoteTaskdeckStore, TaskStoreError> {
        let api = Api::new(base_url, token);
        let first = events::open(&api, None).await?;
        let routing = Arc::new(Routing::default());
        let (stop, stopped) = oneshot::channel();
        events::follow(api.clone(), routing.clone(), first, stopped);
        Ok(RemoteTaskdeckStore {
            inner: Arc::new(Inner {
                api,
                routing,
                _stop: stop,
            }),
        })
    }
}

//! [`RemoteTaskdeckStore`]: a tower-mcp [`TaskStore`](tower_mcp::async_task::TaskStore) that
//! keeps its tasks in a running Taskdeck, over its HTTP API (`/v1/hosted-tasks`, and
//! `/v1/events` for what happens in Taskdeck's window). A tower-mcp server built with it has
//! every task in the window, under its token's principal: a person answers its input requests
//! there and presses its cancel there, and the server's handlers see both (the answers through
//! `input_responses`/`resume_context`, the cancel through the task's cancellation token).
//!
//! A person's answer reaches a live handler parked in `TaskContext::require_input` once the
//! server calls [`RemoteTaskdeckStore::deliver_answers_to`] with its router: tower-mcp wakes
//! such a handler only from its own `tasks/update`, so the store sends it one.
//!
//! Parts: `api` (the HTTP calls), `wire` (the record the routes answer with), `events` (tokens
//! and waiters from the event stream), `deliver` (answers given in the window, to the router),
//! `outbox` (outcomes Taskdeck could not take yet, retried), `task_store` (the trait, method by
//! method).

mod api;
mod deliver;
mod events;
mod outbox;
mod task_store;
mod wire;

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use tower::Service;
use tower_mcp::{
    Extensions, RouterRequest, RouterResponse,
    async_task::{TaskOwner, TaskStoreError},
};

use api::Api;
use events::Routing;
use outbox::Outbox;

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
    outbox: Arc<Outbox>,
    _stop: oneshot::Sender<()>,
}

impl RemoteTaskdeckStore {
    /// Connects to the Taskdeck at `base_url` (e.g. `http://127.0.0.1:4747`, as `taskdeck
    /// serve` prints it) with `token` (a principal's token, from `taskdeck token create NAME`
    /// or the window's Agents page): opens its event stream, so every cancel and change from
    /// then on reaches the store's tokens and waiters. Must be called inside a Tokio runtime.
    ///
    /// Errors: [`TaskStoreError::Backend`] when `base_url` is not an `http://` or `https://`
    /// URL, or the server cannot be reached (the message ends with `base_url`) or refuses the
    /// token (401) or the host (403).
    pub async fn connect(
        base_url: &str,
        token: &str,
    ) -> Result<RemoteTaskdeckStore, TaskStoreError> {
        let scheme = reqwest::Url::parse(base_url).map(|u| u.scheme().to_string());
        if !matches!(scheme.as_deref(), Ok("http" | "https")) {
            return Err(TaskStoreError::Backend(format!(
                "{base_url:?} is not Taskdeck's URL: give it with its scheme, as \
                 http://127.0.0.1:4747"
            )));
        }
        let api = Api::new(base_url, token);
        let first = events::open(&api, None).await.map_err(|e| match e {
            TaskStoreError::Backend(why) => TaskStoreError::Backend(format!("{why} ({base_url})")),
            other => other,
        })?;
        let routing = Arc::new(Routing::default());
        let (stop, stopped) = oneshot::channel();
        events::follow(api.clone(), routing.clone(), first, stopped);
        Ok(RemoteTaskdeckStore {
            inner: Arc::new(Inner {
                api,
                routing,
                outbox: Arc::default(),
                _stop: stop,
            }),
        })
    }

    /// Delivers the answers a person gives in Taskdeck's window to `router` (the server's
    /// `McpRouter`, or any service in front of it), so a live handler parked in
    /// `TaskContext::require_input` is woken with them. Call it once, after building the router
    /// (`store.deliver_answers_to(router.clone())`); later calls do nothing.
    ///
    /// How: when the event stream shows that input requests of one of its tasks were answered
    /// other than through this store (in the window, whoever is signed in there) and nothing is
    /// outstanding any more, the store sends `router` a `tasks/update` with those answers, as a
    /// client would, and its
    /// `apply_input_responses` reports them as accepted (once), so tower-mcp's own
    /// `tasks/update` handling wakes the handler. The request carries no extensions, which
    /// tower-mcp authorizes for tasks created without an owner (a stdio server, or one without
    /// authentication); see [`RemoteTaskdeckStore::deliver_answers_as`] for owned tasks. A
    /// refusal is logged as a warning (`tracing`). The store and the router then live as long
    /// as each other.
    pub fn deliver_answers_to<S>(&self, router: S)
    where
        S: Service<RouterRequest, Response = RouterResponse> + Send + 'static,
        S::Future: Send,
        S::Error: std::fmt::Display + Send,
    {
        self.deliver_answers_as(router, |_: &TaskOwner| Extensions::new());
    }

    /// [`RemoteTaskdeckStore::deliver_answers_to`] for a server whose tasks have owners:
    /// `identity` builds, from a task's owner (tower-mcp's `TaskOwner`, as `create_task` got
    /// it), the request extensions that the router's task owner resolver maps back to that
    /// owner (e.g. the `TokenClaims` of its OAuth layer), so the delivered `tasks/update` is
    /// authorized as the owner's own.
    pub fn deliver_answers_as<S, F>(&self, router: S, identity: F)
    where
        S: Service<RouterRequest, Response = RouterResponse> + Send + 'static,
        S::Future: Send,
        S::Error: std::fmt::Display + Send,
        F: Fn(&TaskOwner) -> Extensions + Send + Sync + 'static,
    {
        let (ids, received) = mpsc::unbounded_channel();
        if self.inner.routing.deliver_to(ids) {
            deliver::spawn(self.clone(), received, router, Arc::new(identity));
        }
    }
}

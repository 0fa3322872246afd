//! The process-local side of a remote store: the [`CancellationToken`] of each task and the
//! completion waiters, driven by one `GET /v1/events` stream (Server-Sent Events) per store.
//! A change that cancels a task (the host's cancel, or a person's in Taskdeck's window),
//! expires it or deletes it raises its token; every change of a task wakes its waiters, which
//! read it again. An input answer the store did not record itself (a person in Taskdeck's
//! window, or the store's own token used there) is remembered for the deliverer (`deliver.rs`). The stream reconnects with `Last-Event-ID` after a drop; after a reconnect or
//! a `resync` (changes were missed), every token is checked against the server and every
//! waiter reads again.

use std::{
    collections::{BTreeSet, HashMap, HashSet, VecDeque},
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use sse_stream::SseStream;
use tokio::sync::{broadcast, mpsc, oneshot};
use tower_mcp::async_task::{CancellationToken, TaskStoreError};

use super::{api::Api, wire::HostedRecord};

/// A task id in [`Routing::changes`] meaning "every task" (sent after missed changes).
pub(crate) const EVERY_TASK: &str = "*";
/// How long to wait before reconnecting a dropped stream.
const RECONNECT_DELAY: Duration = Duration::from_millis(250);
/// Changes a slow waiter may fall behind before it reads its task again.
const CHANGES_CAPACITY: usize = 1024;

/// Tokens and waiters of one remote store, shared with its event reader.
pub(crate) struct Routing {
    tokens: Mutex<Tokens>,
    /// The id of every task that changed ([`EVERY_TASK`]: any may have).
    pub(crate) changes: broadcast::Sender<Arc<str>>,
    /// Task id → the input request keys answered in Taskdeck other than through this store (a
    /// person in the window) and that were not yet handed to the router as accepted
    /// (see [`Routing::take_answered`]).
    answered_elsewhere: Mutex<HashMap<String, BTreeSet<String>>>,
    /// Where the ids of tasks answered elsewhere go, once the store delivers answers to a
    /// router (`RemoteTaskdeckStore::deliver_answers_to`).
    deliveries: OnceLock<mpsc::UnboundedSender<String>>,
}

/// The tokens handed out, and the tasks seen deleted lately. A stop seen before the token is
/// asked for leaves a raised token, and a deletion a remembered id, so a cancel, an expiry or
/// a deletion racing `create_task`'s answer is not lost.
#[derive(Default)]
struct Tokens {
    /// Task id → its token (until the task is deleted).
    live: HashMap<String, CancellationToken>,
    /// The last [`GONE_KEPT`] deleted task ids, oldest first, and the same as a set.
    gone: VecDeque<String>,
    gone_set: HashSet<String>,
}

/// How many deleted task ids a store remembers for tokens asked for after the deletion.
const GONE_KEPT: usize = 4096;

impl Default for Routing {
    fn default() -> Self {
        Routing {
            tokens: Mutex::default(),
            changes: broadcast::channel(CHANGES_CAPACITY).0,
            answered_elsewhere: Mutex::default(),
            deliveries: OnceLock::new(),
        }
    }
}

impl Routing {
    /// The token of task `id` (one per task and store), raised at once when `record` says
    /// its work must stop or the task was deleted meanwhile.
    pub(crate) fn token(&self, id: &str, record: Option<&HostedRecord>) -> CancellationToken {
        let mut tokens = self.tokens.lock().unwrap();
        let deleted = tokens.gone_set.contains(id);
        let token = tokens.live.entry(id.to_string()).or_default().clone();
        if deleted || record.is_none_or(HostedRecord::must_stop) {
            token.cancel();
        }
        token
    }

    /// Raises the token of `id` (creating it raised when none was handed out yet).
    pub(crate) fn raise(&self, id: &str) {
        let mut tokens = self.tokens.lock().unwrap();
        tokens.live.entry(id.to_string()).or_default().cancel();
    }

    /// Raises the token of `id`, if any, and forgets it: the task is gone.
    fn raise_and_forget(&self, id: &str) {
        let mut tokens = self.tokens.lock().unwrap();
        if let Some(token) = tokens.live.remove(id) {
            token.cancel();
        }
        if tokens.gone_set.insert(id.to_string()) {
            tokens.gone.push_back(id.to_string());
            if tokens.gone.len() > GONE_KEPT
                && let Some(oldest) = tokens.gone.pop_front()
            {
                tokens.gone_set.remove(&oldest);
            }
        }
    }

    /// Records that `key` of task `id` was answered other than through this store, and hands the task to the deliverer, if any.
    fn answered_elsewhere(&self, id: &str, key: &str) {
        self.answered_elsewhere
            .lock()
            .unwrap()
            .entry(id.to_string())
            .or_default()
            .insert(key.to_string());
        if let Some(deliveries) = self.deliveries.get() {
            let _ = deliveries.send(id.to_string());
        }
    }

    /// The keys of task `id` answered elsewhere and not yet delivered.
    pub(crate) fn answered_keys(&self, id: &str) -> BTreeSet<String> {
        let answered = self.answered_elsewhere.lock().unwrap();
        answered.get(id).cloned().unwrap_or_default()
    }

    /// Takes (spends) the keys among `keys` of task `id` that were answered elsewhere and not
    /// yet delivered: each is reported once as accepted by `apply_input_responses`.
    pub(crate) fn take_answered(&self, id: &str, keys: &[String]) -> BTreeSet<String> {
        let mut answered = self.answered_elsewhere.lock().unwrap();
        let Some(pending) = answered.get_mut(id) else {
            return BTreeSet::new();
        };
        let taken: BTreeSet<String> = keys
            .iter()
            .filter(|k| pending.remove(*k))
            .cloned()
            .collect();
        if pending.is_empty() {
            answered.remove(id);
        }
        taken
    }

    /// Forgets the undelivered answers of task `id` (it ended or is gone).
    pub(crate) fn forget_answers(&self, id: &str) {
        self.answered_elsewhere.lock().unwrap().remove(id);
    }

    /// Sets where the ids of tasks answered elsewhere go; `false` when already set.
    pub(crate) fn deliver_to(&self, deliveries: mpsc::UnboundedSender<String>) -> bool {
        let pending: Vec<String> = self
            .answered_elsewhere
            .lock()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        if self.deliveries.set(deliveries.clone()).is_err() {
            return false;
        }
        for id in pending {
            let _ = deliveries.send(id);
        }
        true
    }

    /// The ids of the tokens not raised yet.
    fn unraised(&self) -> Vec<String> {
        let tokens = self.tokens.lock().unwrap();
        tokens
            .live
            .iter()
            .filter(|(_, t)| !t.is_cancelled())
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// The data of a `change` event (Taskdeck's `ChangeEvent`): the members read here.
#[derive(Deserialize)]
struct ChangeData {
    event: EventData,
    task: TaskData,
}

#[derive(Deserialize)]
struct EventData {
    kind: String,
    #[serde(default)]
    data: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskData {
    task_id: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    cancel_requested: bool,
}

/// What one `change` event says about its task's token.
enum Verdict {
    /// Deleted: raise its token and forget it.
    Gone,
    /// Cancelled, cancel requested, or expired: raise its token.
    Stop,
    /// A new ttl: the task may have expired; read it.
    Check,
    /// Nothing for the token.
    Carry,
}

fn verdict(change: &ChangeData) -> Verdict {
    let kind = change.event.kind.as_str();
    if kind == "deleted" {
        Verdict::Gone
    } else if change.task.status.as_deref() == Some("cancelled")
        || change.task.cancel_requested
        || (kind == "ttl" && change.event.data["reason"] == "expired")
    {
        Verdict::Stop
    } else if kind == "ttl" {
        Verdict::Check
    } else {
        Verdict::Carry
    }
}

/// Opens `GET /v1/events` for `api`'s principal, resuming after `last_id` when given.
/// Errors: [`TaskStoreError::Backend`] when the server cannot be reached or refuses.
pub(crate) async fn open(
    api: &Api,
    last_id: Option<&str>,
) -> Result<reqwest::Response, TaskStoreError> {
    let mut req = api
        .request(Method::GET, "/v1/events")
        .header("accept", "text/event-stream");
    if let Some(id) = last_id {
        req = req.header("last-event-id", id);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| TaskStoreError::Backend(format!("cannot reach Taskdeck: {e}")))?;
    match resp.status() {
        StatusCode::OK => Ok(resp),
        status => Err(TaskStoreError::Backend(format!(
            "Taskdeck refused its event stream: HTTP {status}"
        ))),
    }
}

/// Follows the event stream `first` (already open) on a Tokio task until `stop` fires (the
/// store was dropped), reconnecting as needed.
pub(crate) fn follow(
    api: Api,
    routing: Arc<Routing>,
    first: reqwest::Response,
    stop: oneshot::Receiver<()>,
) {
    tokio::spawn(async move {
        tokio::select! {
            _ = stop => {}
            _ = run(&api, &routing, first) => {}
        }
    });
}

/// Reads streams one after another, forever.
async fn run(api: &Api, routing: &Routing, first: reqwest::Response) {
    let mut last_id: Option<String> = None;
    let mut resp = Some(first);
    loop {
        if let Some(open) = resp.take() {
            read(routing, api, open, &mut last_id).await;
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
        match open(api, last_id.as_deref()).await {
            Ok(open) => {
                resp = Some(open);
                // What happened while disconnected and before the replay began.
                recheck(api, routing).await;
            }
            Err(e) => tracing::warn!("Taskdeck event stream: {e}"),
        }
    }
}

/// Reads one stream until it ends, routing each event.
async fn read(routing: &Routing, api: &Api, resp: reqwest::Response, last_id: &mut Option<String>) {
    let mut events = SseStream::from_bytes_stream(resp.bytes_stream());
    while let Some(event) = events.next().await {
        let Ok(event) = event else { return };
        if let Some(id) = &event.id {
            *last_id = Some(id.clone());
        }
        match event.event.as_deref() {
            Some("change") => {
                let Some(change) = event
                    .data
                    .as_deref()
                    .and_then(|d| serde_json::from_str::<ChangeData>(d).ok())
                else {
                    continue;
                };
                let id = change.task.task_id.as_str();
                // Answers this store recorded itself come `via: "host"`; any other (a person in
                // the window, or the store's own token used there) must reach the handler.
                if change.event.kind == "inputAnswered"
                    && change.event.data["via"] != "host"
                    && let Some(key) = change.event.data["key"].as_str()
                {
                    routing.answered_elsewhere(id, key);
                }
                if matches!(
                    change.task.status.as_deref(),
                    Some("completed" | "failed" | "cancelled")
                ) || change.event.kind == "deleted"
                {
                    routing.forget_answers(id);
                }
                match verdict(&change) {
                    Verdict::Gone => routing.raise_and_forget(id),
                    Verdict::Stop => routing.raise(id),
                    Verdict::Check => {
                        if matches!(api.read(id).await, Ok(None)) {
                            routing.raise(id);
                        }
                    }
                    Verdict::Carry => {}
                }
                let _ = routing.changes.send(Arc::from(id));
            }
            Some("resync") => recheck(api, routing).await,
            _ => {}
        }
    }
}

/// After missed changes: raises the token of every task that is gone or must stop, and wakes
/// every waiter.
async fn recheck(api: &Api, routing: &Routing) {
    for id in routing.unraised() {
        match api.read(&id).await {
            Ok(Some(record)) if !record.must_stop() => {}
            Ok(_) => routing.raise(&id),
            Err(e) => tracing::warn!(task_id = %id, "cannot read task: {e}"),
        }
    }
    let _ = routing.changes.send(Arc::from(EVERY_TASK));
}

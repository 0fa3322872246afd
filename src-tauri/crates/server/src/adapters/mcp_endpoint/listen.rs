//! `subscriptions/listen` with `notifications.taskIds` (SEP-2663 §Task Status Notifications):
//! an SSE stream of `notifications/tasks`, served from the engine's change feed because rmcp's
//! subscription filter has no `taskIds`.

use std::{collections::HashMap, convert::Infallible};

use axum::{
    http::{HeaderMap, StatusCode},
    response::{Response, sse::Event},
};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json, value::RawValue};
use tokio_stream::wrappers::BroadcastStream;

use super::{
    McpEndpoint,
    request_checks::{AnswerMedia, ExpectedRequest, RequestMeta, check_request},
    responses::{error_response, sse},
};
use crate::adapters::{agent_view, wire::INVALID_PARAMS};
use taskdeck_engine::{Principal, TaskRecord, TaskStatus};

/// The params of `subscriptions/listen`, borrowed from the body.
#[derive(Deserialize)]
pub(crate) struct ListenParams<'a> {
    #[serde(default)]
    notifications: Option<Value>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

impl<'a> ListenParams<'a> {
    /// The params of a `subscriptions/listen` this path serves: those whose `notifications`
    /// names `taskIds`. `None` for any other (left to rmcp).
    pub fn for_tasks(params: Option<&'a RawValue>) -> Option<ListenParams<'a>> {
        serde_json::from_str::<ListenParams<'a>>(params?.get())
            .ok()
            .filter(|p| {
                p.notifications
                    .as_ref()
                    .is_some_and(|n| n.get("taskIds").is_some())
            })
    }
}

/// One `notifications/tasks` event carrying `task` (as shown) and the subscription id.
fn notification(task: Map<String, Value>, subscription_id: &Value) -> Result<Event, Infallible> {
    let mut params = task;
    params.insert(
        "_meta".into(),
        json!({"io.modelcontextprotocol/subscriptionId": subscription_id}),
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params});
    Ok(Event::default().data(note.to_string()))
}

/// Answers `subscriptions/listen` request `id` for `principal`: an SSE stream that opens with
/// `notifications/subscriptions/acknowledged` (the accepted `taskIds`: those the principal may
/// see, deduplicated), then one `notifications/tasks` per accepted task as it stands, then one
/// per change of what this reader is shown of it. The request id is the subscription id.
/// Errors: the [`check_request`] rejections; HTTP 200 `-32602` when `taskIds` is not an array
/// of strings.
pub(crate) fn listen(
    endpoint: &McpEndpoint,
    headers: &HeaderMap,
    principal: &Principal,
    id: &RawValue,
    params: ListenParams<'_>,
) -> Response {
    let meta = RequestMeta::parse(params.meta);
    let expected = ExpectedRequest {
        method: "subscriptions/listen",
        name: None,
        answer: AnswerMedia::EventStream,
    };
    if let Err(resp) = check_request(headers, id, expected, &meta) {
        return resp;
    }
    let ids = params
        .notifications
        .as_ref()
        .and_then(|n| n.get("taskIds"))
        .and_then(Value::as_array)
        .filter(|a| a.iter().all(Value::is_string));
    let Some(ids) = ids else {
        return error_response(
            StatusCode::OK,
            id,
            INVALID_PARAMS,
            "Invalid params: notifications.taskIds must be an array of taskId strings",
            None,
        );
    };
    let mut requested: Vec<String> = Vec::with_capacity(ids.len());
    for t in ids.iter().filter_map(Value::as_str) {
        if !requested.iter().any(|r| r == t) {
            requested.push(t.to_string());
        }
    }
    // Subscribe first, then snapshot: a change between the two is delivered twice, never lost.
    let feed = BroadcastStream::new(endpoint.engine.store().feed().subscribe());
    // Ids the caller may not see are dropped silently, exactly like ids that do not exist.
    let visible: Vec<_> = requested
        .iter()
        .filter_map(|t| endpoint.engine.get(principal, t).ok())
        .collect();
    let accepted: Vec<String> = visible.iter().map(|t| t.task_id.clone()).collect();
    let subscription_id: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
    let ack = json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"taskIds": accepted}, "_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id}}
    });
    let reader = meta.reader(principal);
    let engine = endpoint.engine.clone();
    let shown = move |t: &TaskRecord| {
        let human_only = if t.status == TaskStatus::InputRequired {
            engine.human_only_inputs(t).unwrap_or_default()
        } else {
            Vec::new()
        };
        agent_view::detailed(t, &human_only, reader)
    };
    let snapshot: Vec<_> = visible
        .iter()
        .map(|t| notification(shown(t), &subscription_id))
        .collect();
    let sub = subscription_id.clone();
    // The last task sent per id: a change that leaves what this client is shown as it was (an
    // event that changes nothing it sees) sends nothing.
    let mut last: HashMap<String, Map<String, Value>> = visible
        .iter()
        .map(|t| (t.task_id.clone(), shown(t)))
        .collect();
    let changes = feed.filter_map(move |change| {
        // A deleted task has no further state to notify (it is gone, as if never subscribed).
        let keep = change
            .ok()
            .filter(|c| c.event.kind != "deleted" && accepted.contains(&c.task.task_id));
        let note = keep.and_then(|c| {
            let now = shown(&c.task);
            if last.get(&c.task.task_id) == Some(&now) {
                return None;
            }
            last.insert(c.task.task_id.clone(), now.clone());
            Some(notification(now, &sub))
        });
        async move { note }
    });
    let stream = futures::stream::once(async move {
        Ok::<_, Infallible>(Event::default().data(ack.to_string()))
    })
    .chain(futures::stream::iter(snapshot))
    .chain(changes);
    sse(stream)
}

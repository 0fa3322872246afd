//! `subscriptions/listen` (2026-07-28) with `notifications.taskIds` (SEP-2663 §Task Status
//! Notifications) and/or `notifications.toolsListChanged`: an SSE stream of
//! `notifications/tasks`, served from the engine's change feed because rmcp's subscription
//! filter has no `taskIds`, and of `notifications/tools/list_changed` when the upstream
//! servers' tools change (the gateway). Other filter members are not accepted: the
//! acknowledgement lists only what the stream will carry.

use std::{collections::HashMap, convert::Infallible};

use axum::{
    http::{HeaderMap, StatusCode},
    response::{Response, sse::Event},
};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json, value::RawValue};
use tokio_stream::wrappers::{BroadcastStream, WatchStream};

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
    /// The params of a `subscriptions/listen` this path serves: every one whose `notifications`
    /// is an object. `None` for any other (left to rmcp, which refuses it).
    pub fn for_tasks(params: Option<&'a RawValue>) -> Option<ListenParams<'a>> {
        serde_json::from_str::<ListenParams<'a>>(params?.get())
            .ok()
            .filter(|p| p.notifications.as_ref().is_some_and(Value::is_object))
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
    let filter = params.notifications.as_ref();
    let expected = ExpectedRequest {
        method: "subscriptions/listen",
        name: None,
        answer: AnswerMedia::EventStream,
        // Task notifications are the tasks extension's; list changes are core protocol.
        needs_tasks: filter.is_some_and(|n| n.get("taskIds").is_some()),
    };
    if let Err(resp) = check_request(headers, id, expected, &meta) {
        return resp;
    }
    let tools_changed = filter
        .and_then(|n| n.get("toolsListChanged"))
        .and_then(Value::as_bool)
        == Some(true);
    let empty = Vec::new();
    let ids = match filter.and_then(|n| n.get("taskIds")) {
        None => Some(&empty),
        Some(v) => v.as_array().filter(|a| a.iter().all(Value::is_string)),
    };
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
    let mut acknowledged = Map::new();
    if filter.is_some_and(|n| n.get("taskIds").is_some()) {
        acknowledged.insert("taskIds".into(), json!(accepted));
    }
    let tools_watch = endpoint
        .core
        .gateway
        .as_ref()
        .filter(|_| tools_changed)
        .map(|g| g.watch_tools());
    if tools_watch.is_some() {
        acknowledged.insert("toolsListChanged".into(), json!(true));
    }
    let ack = json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": acknowledged, "_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id}}
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
    let sub = subscription_id.clone();
    let tool_changes = match tools_watch {
        // The watch's current value is not a change: skip it.
        Some(rx) => WatchStream::from_changes(rx)
            .map(move |_| {
                let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                    "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": sub}}});
                Ok::<_, Infallible>(Event::default().data(note.to_string()))
            })
            .boxed(),
        None => futures::stream::pending().boxed(),
    };
    let stream = futures::stream::once(async move {
        Ok::<_, Infallible>(Event::default().data(ack.to_string()))
    })
    .chain(futures::stream::iter(snapshot))
    .chain(futures::stream::select(changes, tool_changes));
    sse(stream)
}

//! Following an upstream's own task, so that the work is one task in Taskdeck, not two.
//!
//! 2026-07-28 (SEP-2663): Taskdeck's client declares the tasks extension, so an upstream may
//! answer a call with a `CreateTaskResult`. The task is then polled with `tasks/get` at its
//! `pollIntervalMs`; its status message is copied, each of its `inputRequests` becomes an input
//! request of the Taskdeck task (`upstream-KEY`, answered in the window or by the agent) whose
//! answer goes back with `tasks/update`; its result or error ends the Taskdeck task. A cancel in
//! Taskdeck sends `tasks/cancel`.
//!
//! 2025-11-25:
//! The gateway calls every tool plainly first (rmcp's client does not keep a tool's
//! `execution.taskSupport` from `tools/list`). An upstream on 2025-11-25 answers a tool whose
//! `execution.taskSupport` is `required` with `-32601` (2025-11-25 §Tool-Level Negotiation; the
//! TypeScript SDK's `McpServer` sends it as a tool error result whose text is
//! `MCP error -32601: Tool NAME requires task augmentation ...`). A tool can also fail with a
//! `-32601` of its own after it ran (server-everything's sampling tool, whose
//! `sampling/createMessage` Taskdeck does not serve), and calling it again would run it twice:
//! so only a `-32601` whose message speaks of a task ([`asks_for_a_task`]) makes the call again
//! task-augmented (`params.task`); any other is the call's error. The upstream task is then
//! followed:
//! `tasks/result` (which blocks until the task ends and carries the upstream's queued requests,
//! e.g. its `elicitation/create`, to Taskdeck's client handler: they become input requests of
//! the Taskdeck task) while `tasks/get` is polled at the upstream's `pollInterval` to copy its
//! status message. A cancel in Taskdeck sends `tasks/cancel` upstream.

use std::{collections::BTreeMap, time::Duration};

use rmcp::{
    model::{
        CallToolResult, CancelTaskParams, ClientRequest, CustomRequest, GetTaskParams,
        ServerResult, UpdateTaskParams,
    },
    service::{Peer, RoleClient},
};
use serde_json::{Value, json};

use taskdeck_engine::{Outcome, TaskContext};

use super::upstream_error::of_request;

/// The JSON-RPC code a 2025-11-25 server answers a plain call of a task-required tool with.
pub const TASK_REQUIRED_CODE: i32 = -32601;

/// True when `result` is the TypeScript SDK's rendering of `-32601` for a plain call of a
/// task-required tool (see the module doc).
pub fn is_task_required_result(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
        && result
            .content
            .first()
            .and_then(|c| c.as_text())
            .and_then(|t| t.text.strip_prefix("MCP error -32601:"))
            .is_some_and(asks_for_a_task)
}

/// True when `error` is a `-32601` that asks for a task-augmented call (see the module doc).
pub fn is_task_required_error(error: &rmcp::ErrorData) -> bool {
    error.code.0 == TASK_REQUIRED_CODE && asks_for_a_task(&error.message)
}

/// Whether a `-32601`'s message says the tool must run as a task ("requires task
/// augmentation", "taskSupport"): a word `task` in any case, which a plain "Method not found"
/// or a tool's own failure does not have.
fn asks_for_a_task(message: &str) -> bool {
    message.to_ascii_lowercase().contains("task")
}

/// Longest and shortest poll of the upstream task's status, whatever it asks for.
const POLL_MIN: Duration = Duration::from_millis(200);
const POLL_MAX: Duration = Duration::from_secs(10);

/// How the follow ended, for the caller to turn into the task's outcome.
pub enum Followed {
    /// The upstream's `CallToolResult` (a JSON object).
    Result(Value),
    /// The upstream answered with a JSON-RPC error `{code, message, data?}`.
    Error(rmcp::ErrorData),
    /// Taskdeck's task was cancelled; `tasks/cancel` was sent upstream.
    Cancelled,
    /// The upstream task could not be created or followed (message for the human).
    Lost(String),
}

/// Follows the 2026-07-28 upstream task `created` (the answer to a call of `tool`) to its end.
pub async fn follow_modern(
    ctx: &TaskContext,
    peer: &Peer<RoleClient>,
    server: &str,
    tool: &str,
    created: Value,
) -> Followed {
    let Some(task_id) = created
        .get("taskId")
        .and_then(Value::as_str)
        .map(String::from)
    else {
        return Followed::Lost(format!(
            "upstream {server} answered {tool} with a task without a taskId"
        ));
    };
    ctx.status_message(format!("{server} runs {tool} as its task {task_id}"))
        .await;
    let mut poll_every = poll_interval_ms(&created);
    let mut last_message: Option<String> = None;
    let mut answered: Vec<String> = Vec::new();
    loop {
        tokio::select! {
            _ = ctx.cancelled() => {
                let _ = peer.cancel_task(CancelTaskParams::new(task_id.clone())).await;
                return Followed::Cancelled;
            }
            _ = tokio::time::sleep(poll_every) => {}
        }
        let task = match peer.get_task(GetTaskParams::new(task_id.clone())).await {
            Ok(t) => serde_json::to_value(t).unwrap_or_default(),
            Err(rmcp::ServiceError::McpError(e)) => return Followed::Error(e),
            Err(e) => {
                return Followed::Lost(format!(
                    "following {server}'s task {task_id} failed: {}",
                    of_request(&e)
                ));
            }
        };
        poll_every = poll_interval_ms(&task);
        let message = task
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(|m| crate::tools::secrets::mask_taskdeck_tokens_text(m.to_string()));
        if message.is_some() && message != last_message {
            ctx.status_message(format!(
                "{server}: {}",
                message.as_deref().unwrap_or_default()
            ))
            .await;
            last_message = message;
        }
        match task.get("status").and_then(Value::as_str) {
            Some("completed") => {
                return Followed::Result(task.get("result").cloned().unwrap_or_else(|| json!({})));
            }
            Some("failed") => {
                let error = task.get("error").cloned().unwrap_or_default();
                return match serde_json::from_value::<rmcp::ErrorData>(error) {
                    Ok(e) => Followed::Error(e),
                    Err(_) => Followed::Lost(format!("{server}'s task {task_id} failed")),
                };
            }
            Some("cancelled") => {
                return Followed::Lost(format!("{server} cancelled its task {task_id}"));
            }
            Some("input_required") => {
                let requests = task
                    .get("inputRequests")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                for (key, request) in requests {
                    if answered.contains(&key) {
                        continue;
                    }
                    // Taskdeck's tokens never reach the question a person or the agent reads.
                    let request =
                        crate::tools::secrets::mask_taskdeck_tokens(&request).unwrap_or(request);
                    // Waiting for an answer to the upstream's question now, not for the upstream.
                    let question = request["params"]["message"].as_str().unwrap_or_default();
                    ctx.status_message(format!("{server} asks: {question}"))
                        .await;
                    let answer = match ctx.request_input(&format!("upstream-{key}"), request).await
                    {
                        Ok(a) => a,
                        Err(_) => {
                            let _ = peer
                                .cancel_task(CancelTaskParams::new(task_id.clone()))
                                .await;
                            return Followed::Cancelled;
                        }
                    };
                    let responses = BTreeMap::from([(key.clone(), answer)]);
                    let update = UpdateTaskParams::new(task_id.clone(), responses);
                    if let Err(e) = peer.update_task(update).await {
                        return Followed::Lost(format!(
                            "answering {server}'s task {task_id} failed: {}",
                            of_request(&e)
                        ));
                    }
                    answered.push(key);
                }
            }
            _ => {}
        }
    }
}

fn poll_interval_ms(task: &Value) -> Duration {
    task.get("pollIntervalMs")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(1))
        .clamp(POLL_MIN, POLL_MAX)
}

/// Calls `tool` with `arguments` as a 2025-11-25 task on `peer` and follows that task to its
/// end.
pub async fn follow(
    ctx: &TaskContext,
    peer: &Peer<RoleClient>,
    server: &str,
    tool: &str,
    arguments: &Value,
) -> Followed {
    let created = send(
        peer,
        "tools/call",
        json!({"name": tool, "arguments": arguments, "task": {}}),
    )
    .await;
    let created = match created {
        Ok(v) => v,
        Err(Sent::Refused(e)) => return Followed::Error(e),
        Err(Sent::Failed(e)) => return Followed::Lost(e),
    };
    let Some(task_id) = created.pointer("/task/taskId").and_then(Value::as_str) else {
        return Followed::Lost(format!(
            "upstream {server} did not answer the task-augmented call of {tool} with a task"
        ));
    };
    let task_id = task_id.to_string();
    ctx.status_message(format!("{server} runs {tool} as its task {task_id}"))
        .await;
    let poll_every = poll_interval(&created["task"]);
    let result = send(peer, "tasks/result", json!({"taskId": task_id}));
    tokio::pin!(result);
    let mut last_message: Option<String> = None;
    loop {
        tokio::select! {
            r = &mut result => {
                return match r {
                    Ok(v) => Followed::Result(v),
                    Err(Sent::Refused(e)) => Followed::Error(e),
                    Err(Sent::Failed(e)) => Followed::Lost(format!("following {server}'s task {task_id} failed: {e}")),
                };
            }
            _ = ctx.cancelled() => {
                let _ = send(peer, "tasks/cancel", json!({"taskId": task_id})).await;
                return Followed::Cancelled;
            }
            _ = tokio::time::sleep(poll_every) => {
                if let Ok(task) = send(peer, "tasks/get", json!({"taskId": task_id})).await {
                    let message = task.get("statusMessage").and_then(Value::as_str).map(|m| crate::tools::secrets::mask_taskdeck_tokens_text(m.to_string()));
                    if message.is_some() && message != last_message {
                        ctx.status_message(format!("{server}: {}", message.as_deref().unwrap_or_default())).await;
                        last_message = message;
                    }
                }
            }
        }
    }
}

fn poll_interval(task: &Value) -> Duration {
    task.get("pollInterval")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(1))
        .clamp(POLL_MIN, POLL_MAX)
}

/// Why a request got no result.
enum Sent {
    /// The upstream answered with a JSON-RPC error.
    Refused(rmcp::ErrorData),
    /// The request could not be sent or answered.
    Failed(String),
}

/// Sends request `method` with `params` as given (these 2025-11-25 shapes are not rmcp's
/// typed requests) and returns the result as JSON.
async fn send(peer: &Peer<RoleClient>, method: &str, params: Value) -> Result<Value, Sent> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    match peer.send_request(request).await {
        Ok(ServerResult::CustomResult(r)) => Ok(r.0),
        Ok(other) => serde_json::to_value(other).map_err(|e| Sent::Failed(e.to_string())),
        Err(rmcp::ServiceError::McpError(e)) => Err(Sent::Refused(e)),
        Err(e) => Err(Sent::Failed(of_request(&e))),
    }
}

impl Followed {
    /// The task's outcome: the upstream result (its `resultType` dropped), or a failure naming
    /// `server`.
    pub fn into_outcome(self, server: &str, tool: &str) -> Outcome {
        match self {
            Followed::Result(mut v) => {
                if let Some(o) = v.as_object_mut() {
                    o.remove("resultType");
                }
                Outcome::Completed(v)
            }
            Followed::Error(e) => super::call::refused_by_upstream(server, tool, e),
            Followed::Cancelled => Outcome::Cancelled,
            Followed::Lost(message) => super::call::failed(message),
        }
    }
}

//! The 2025-11-25 task path (MCP 2025-11-25 `basic/utilities/tasks`), served by the `/mcp` endpoint
//! for requests on a 2025-11-25 session: rmcp 3.x implements only SEP-2663, so Taskdeck owns
//! this era. The tasks are the engine's, the same whichever era created or reads them.
//!
//! - `tools/list` marks each tool's `execution.taskSupport`: `optional` for task tools,
//!   `required` for task-only ones, absent (forbidden) for the rest.
//! - `tools/call` with `params.task` creates the task (`params.task.ttl` within the engine's
//!   bounds) and answers `CreateTaskResult {task}` at once.
//! - `tasks/get`, `tasks/list` (the caller's tasks, opaque bound cursors), `tasks/cancel` (the task;
//!   `-32602` for a terminal one) answer with 2025-11-25 `Task` objects.
//! - `tasks/result` blocks until the task is terminal, then answers exactly the tool's
//!   `CallToolResult` (or its JSON-RPC error). While the task waits for input the session's
//!   client can give, the questions go out on that stream as `elicitation/create` requests
//!   (id `taskdeck-input:<taskId>:<n>:<key>`, `n` counting the stream's requests); the client's
//!   responses, POSTed back, are applied as answers from the session's principal
//!   ([`take_answer`]); a refused answer makes the stream ask again.
//!
//! What a client is shown of a task waiting for a human follows `agent_view`.

use std::{collections::HashMap, convert::Infallible, time::Duration};

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response, sse::Event},
};
use serde_json::{Map, Value, json, value::RawValue};
use tokio::sync::{broadcast::error::RecvError, mpsc};

use super::{
    agent_view, legacy_wire,
    mcp_endpoint::{
        McpEndpoint,
        responses::{error_response, json_response, sse},
    },
    mcp_sessions::{REASK_LIMIT, Session},
    page_cursor,
    wire::{self, INVALID_PARAMS, METHOD_NOT_FOUND},
};
use crate::gateway::catalog::{Answers, Scope};
use taskdeck_engine::{EngineError, TaskRecord, TaskStatus, ToolMode, store::ListFilter};

/// Id prefix of the `elicitation/create` requests `tasks/result` sends.
const INPUT_ID_PREFIX: &str = "taskdeck-input:";
/// Tasks per `tasks/list` page.
const LIST_PAGE: usize = 50;
/// How long `tasks/cancel` waits for the tool to stop before it answers with the task as it
/// stands (cancellation stays cooperative: the tool decides the final state).
const CANCEL_WAIT: Duration = Duration::from_secs(3);

/// Answers `method` when it belongs to the 2025-11-25 task path; `None` leaves the request to
/// rmcp (plain `tools/call`, `ping`, ...).
pub async fn handle(
    endpoint: &McpEndpoint,
    session_id: &str,
    session: &Session,
    scope: Scope<'_>,
    method: &str,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Option<Response> {
    let params: Map<String, Value> = match params.map(|p| serde_json::from_str::<Value>(p.get())) {
        None => Map::new(),
        Some(Ok(Value::Object(m))) => m,
        Some(_) => return None,
    };
    let reply = match method {
        "tools/list" => Ok(tools_list(endpoint, scope)),
        "tools/call" if params.contains_key("task") => {
            create(endpoint, session_id, session, scope, &params).await
        }
        "tasks/get" => get(endpoint, session, &params),
        "tasks/list" => list(endpoint, session, &params),
        "tasks/cancel" => cancel(endpoint, session, &params).await,
        "tasks/result" => return Some(result_stream(endpoint, session, id, &params)),
        _ => return None,
    };
    Some(match reply {
        Ok(result) => {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
                id.get(),
                result
            );
            json_response(StatusCode::OK, body.into_bytes())
        }
        Err(e) => error_response(StatusCode::OK, id, e.code, &e.message, e.data),
    })
}

/// The 2026-07-28 methods, unknown in a 2025-11-25 session (SEP-2663 §Version scope): the
/// JSON-RPC error for `method` when it is one of them, said as such (not a capability or
/// `_meta` the session failed to send).
pub fn not_of_this_era(method: &str, id: &RawValue) -> Option<Response> {
    matches!(
        method,
        "tasks/update" | "server/discover" | "subscriptions/listen"
    )
    .then(|| {
        error_response(
            StatusCode::OK,
            id,
            METHOD_NOT_FOUND,
            &format!(
                "Method not found: {method} (a 2026-07-28 method; this session negotiated \
                 2025-11-25: use tasks/get, tasks/result and tasks/cancel, or send \
                 MCP-Protocol-Version: 2026-07-28 without a session)"
            ),
            None,
        )
    })
}

/// A JSON-RPC error of this path: `code`, `message` and, for an engine error that has one,
/// `data` (e.g. `{"reason": "disk_full"}` for a write refused on a full disk, [`wire::error_data`]).
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl From<(i64, String)> for RpcError {
    fn from((code, message): (i64, String)) -> RpcError {
        RpcError {
            code,
            message,
            data: None,
        }
    }
}

impl RpcError {
    /// The shared mapping of an engine error ([`wire::error_code`], [`wire::error_data`]).
    fn wire(e: &EngineError) -> RpcError {
        RpcError {
            data: wire::error_data(e),
            ..wire::error_code(e).into()
        }
    }
}

type Reply = Result<Value, RpcError>;

fn task_id(params: &Map<String, Value>) -> Result<&str, (i64, String)> {
    params.get("taskId").and_then(Value::as_str).ok_or((
        INVALID_PARAMS,
        "Invalid params: taskId must be a string".into(),
    ))
}

/// The error for an engine error on a task named by `taskId`: "Failed to retrieve task" for an
/// unknown one (2025-11-25 §Error Handling), otherwise [`RpcError::wire`].
fn engine_error(e: &EngineError) -> RpcError {
    match e {
        EngineError::NotFound => (
            INVALID_PARAMS,
            "Failed to retrieve task: Task not found".to_string(),
        )
            .into(),
        other => RpcError::wire(other),
    }
}

/// The 2025-11-25 `Task` of `task` as `session` sees it.
fn shown(endpoint: &McpEndpoint, session: &Session, task: &TaskRecord) -> Map<String, Value> {
    let human_only = endpoint.engine.human_only_inputs(task).unwrap_or_default();
    let (status, message) = agent_view::status(task, &human_only, session.reader());
    legacy_wire::task(task, status, message)
}

/// `tools/list` of `scope` with `execution.taskSupport` on every task tool.
fn tools_list(endpoint: &McpEndpoint, scope: Scope<'_>) -> Value {
    let tools: Vec<Value> = endpoint
        .core
        .tools(scope, Answers::ResultOrHandle)
        .iter()
        .map(|tool| {
            let mut v = serde_json::to_value(tool).unwrap_or(Value::Null);
            let support = endpoint
                .core
                .resolve(scope, &tool.name)
                .and_then(|name| endpoint.engine.tool(&name))
                .filter(|t| t.descriptor().agent_callable)
                .map(|t| match t.descriptor().mode {
                    ToolMode::Task { required: true } => "required",
                    ToolMode::Task { required: false } | ToolMode::Settle { .. } => "optional",
                });
            if let (Some(s), Some(obj)) = (support, v.as_object_mut()) {
                obj.insert("execution".into(), json!({"taskSupport": s}));
            }
            v
        })
        .collect();
    json!({"tools": tools})
}

/// A task-augmented `tools/call`: validates like a plain call, creates the task durably and
/// answers `CreateTaskResult {task}` (2025-11-25 §Creating Tasks).
async fn create(
    endpoint: &McpEndpoint,
    session_id: &str,
    session: &Session,
    scope: Scope<'_>,
    params: &Map<String, Value>,
) -> Reply {
    let called = params.get("name").and_then(Value::as_str).ok_or((
        INVALID_PARAMS,
        "Invalid params: name must be a string".into(),
    ))?;
    let Some(name) = endpoint.core.resolve(scope, called) else {
        return Err((INVALID_PARAMS, endpoint.core.unknown_tool(scope, called)).into());
    };
    let name = name.as_str();
    let arguments = Value::Object(
        params
            .get("arguments")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    );
    let tool = endpoint
        .engine
        .tool(name)
        .filter(|t| t.descriptor().agent_callable)
        .ok_or_else(|| {
            (
                METHOD_NOT_FOUND,
                format!("Tool {name} does not support task-augmented calls (execution.taskSupport is forbidden)"),
            )
        })?;
    endpoint
        .core
        .validate(name, called, &arguments)
        .map_err(|e| (INVALID_PARAMS, e.message.to_string()))?;
    tool.check_arguments(&arguments)
        .map_err(|m| (INVALID_PARAMS, m))?;
    let Some(task) = params.get("task").and_then(Value::as_object) else {
        return Err((
            INVALID_PARAMS,
            "Invalid params: task must be an object {ttl?}".into(),
        )
            .into());
    };
    // `ttl` (2025-11-25 `TaskMetadata.ttl`): milliseconds, a number not below 0; absent (or
    // null) leaves the choice to Taskdeck. Anything else is refused rather than read as "none".
    let ttl = match task.get("ttl") {
        None | Some(Value::Null) => None,
        Some(t) => match t.as_f64() {
            Some(t) if t.is_finite() && t >= 0.0 => Some(t as u64),
            _ => {
                return Err((
                    INVALID_PARAMS,
                    format!("Invalid params: task.ttl must be a number of milliseconds, 0 or more (got {t})"),
                )
                    .into());
            }
        },
    };
    let task = endpoint
        .engine
        .create_task_with_ttl(&session.principal, name, arguments, ttl)
        .await
        .map_err(|e| RpcError::wire(&e))?;
    let progress_token = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .and_then(|t| serde_json::from_value(t.clone()).ok());
    endpoint
        .core
        .sessions
        .watch(&task.task_id, session_id, progress_token);
    Ok(json!({"task": shown(endpoint, session, &task)}))
}

fn get(endpoint: &McpEndpoint, session: &Session, params: &Map<String, Value>) -> Reply {
    let task = endpoint
        .engine
        .get(&session.principal, task_id(params)?)
        .map_err(|e| engine_error(&e))?;
    Ok(Value::Object(shown(endpoint, session, &task)))
}

/// `tasks/list`: the caller's tasks, newest first, 50 a page; `nextCursor` when more exist
/// (2025-11-25 §Task Listing). Cursors are opaque and bound to the caller (`page_cursor`); any
/// other is `-32602`.
fn list(endpoint: &McpEndpoint, session: &Session, params: &Map<String, Value>) -> Reply {
    let key = *endpoint.engine.store().cursor_key();
    let scope = page_cursor::CursorScope {
        caller: &session.principal,
        statuses: &[],
        tool: None,
        principal: None,
        query: None,
        errors_only: false,
    };
    let before_seq = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(
            page_cursor::decode(&key, c, &scope)
                .map_err(|e| (INVALID_PARAMS, format!("Invalid params: {e}")))?,
        ),
        Some(_) => {
            return Err((
                INVALID_PARAMS,
                "Invalid params: cursor must be a string".into(),
            )
                .into());
        }
    };
    let page = endpoint
        .engine
        .page(
            &session.principal,
            ListFilter {
                before_seq,
                limit: LIST_PAGE,
                ..ListFilter::default()
            },
        )
        .map_err(|e| RpcError::wire(&e))?;
    let mut tasks = Vec::with_capacity(page.tasks.len());
    for listed in &page.tasks {
        // List rows carry no input requests; a waiting task is read whole to show it right.
        let task = if listed.status == TaskStatus::InputRequired {
            endpoint
                .engine
                .get(&session.principal, &listed.task_id)
                .unwrap_or_else(|_| listed.clone())
        } else {
            listed.clone()
        };
        tasks.push(Value::Object(shown(endpoint, session, &task)));
    }
    let mut result = json!({"tasks": tasks});
    if let Some(next) = page.next_seq {
        result["nextCursor"] = json!(page_cursor::encode(&key, next, &scope));
    }
    Ok(result)
}

/// `tasks/cancel`: `-32602` for a terminal task (2025-11-25 §Task Cancellation); otherwise
/// the tool is asked to stop and the task is answered once it ended, or after
/// [`CANCEL_WAIT`] as it stands.
async fn cancel(endpoint: &McpEndpoint, session: &Session, params: &Map<String, Value>) -> Reply {
    let id = task_id(params)?;
    let engine = &endpoint.engine;
    let mut feed = engine.store().feed().subscribe();
    let task = engine
        .get(&session.principal, id)
        .map_err(|e| engine_error(&e))?;
    if task.status.is_terminal() {
        return Err((
            INVALID_PARAMS,
            format!(
                "Cannot cancel task: already in terminal status '{}'",
                task.status.as_str()
            ),
        )
            .into());
    }
    let mut task = engine
        .cancel(&session.principal, id)
        .await
        .map_err(|e| engine_error(&e))?;
    let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
    while !task.status.is_terminal() {
        match tokio::time::timeout_at(deadline, feed.recv()).await {
            Ok(Ok(c)) if c.task.task_id == id => task = TaskRecord::clone(&c.task),
            Ok(Ok(_)) => {}
            Ok(Err(RecvError::Lagged(_))) => {
                task = engine
                    .get(&session.principal, id)
                    .map_err(|e| engine_error(&e))?;
            }
            Ok(Err(RecvError::Closed)) | Err(_) => break,
        }
    }
    Ok(Value::Object(shown(endpoint, session, &task)))
}

/// `tasks/result` (2025-11-25 §Result Retrieval): an SSE stream that carries the task's
/// questions as `elicitation/create` requests while it waits for input the client can give,
/// and ends with the tool's result once the task is terminal.
fn result_stream(
    endpoint: &McpEndpoint,
    session: &Session,
    id: &RawValue,
    params: &Map<String, Value>,
) -> Response {
    let task_id = match task_id(params) {
        Ok(t) => t.to_string(),
        Err((code, message)) => return error_response(StatusCode::OK, id, code, &message, None),
    };
    let engine = endpoint.engine.clone();
    let mut feed = engine.store().feed().subscribe();
    let first = match engine.get(&session.principal, &task_id) {
        Ok(t) => t,
        Err(e) => {
            let e = engine_error(&e);
            return error_response(StatusCode::OK, id, e.code, &e.message, e.data);
        }
    };
    let request_id: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
    let session = session.clone();
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(16);
    tokio::spawn(async move {
        let mut task = first;
        // Each question asked, with the client's refused answers to it when it was: a question
        // is asked again only after another refusal.
        let mut asked: HashMap<String, u32> = HashMap::new();
        // Numbers each request sent, so no id is used twice on the session.
        let mut sent: u64 = 0;
        loop {
            if let Some(outcome) = legacy_wire::call_result(&task) {
                let message = match outcome {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": request_id, "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": request_id, "error": error}),
                };
                let _ = tx
                    .send(Ok(Event::default().data(message.to_string())))
                    .await;
                return;
            }
            let human_only = engine.human_only_inputs(&task).unwrap_or_default();
            for (key, request) in agent_view::answerable(&task, &human_only, session.reader()) {
                let refused = session.refused(&task.task_id, key);
                let refusals = refused.as_ref().map_or(0, |r| r.count);
                if refusals > REASK_LIMIT || asked.get(key.as_str()) == Some(&refusals) {
                    continue;
                }
                asked.insert(key.clone(), refusals);
                let mut params = request.get("params").cloned().unwrap_or_else(|| json!({}));
                params["_meta"] = json!({legacy_wire::RELATED_TASK: {"taskId": task.task_id}});
                // Asked again: the client's user sees why the last answer did not count.
                if let Some(r) = refused {
                    let message = params["message"].as_str().unwrap_or_default();
                    params["message"] = json!(format!(
                        "Your last answer was refused: {}\n\n{message}",
                        r.reason
                    ));
                }
                sent += 1;
                let ask = json!({
                    "jsonrpc": "2.0",
                    "id": format!("{INPUT_ID_PREFIX}{}:{sent}:{key}", task.task_id),
                    "method": request.get("method").cloned().unwrap_or(json!("elicitation/create")),
                    "params": params,
                });
                if tx
                    .send(Ok(Event::default().data(ask.to_string())))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            // The next change of this task; a lag re-reads it from the store.
            task = loop {
                tokio::select! {
                    change = feed.recv() => match change {
                        Ok(c) if c.task.task_id == task.task_id => break TaskRecord::clone(&c.task),
                        Ok(_) => {}
                        Err(RecvError::Lagged(_)) => match engine.get(&session.principal, &task.task_id) {
                            Ok(t) => break t,
                            Err(_) => return,
                        },
                        Err(RecvError::Closed) => return,
                    },
                    // The client went away, or its session ended: stop waiting on its behalf.
                    _ = tx.closed() => return,
                    _ = session.ended.cancelled() => return,
                    // An answer the client sent was refused (e.g. it fails its form): ask again.
                    _ = session.reask.notified() => {
                        match engine.get(&session.principal, &task.task_id) {
                            Ok(t) => break t,
                            Err(_) => return,
                        }
                    }
                }
            };
        }
    });
    sse(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// A client's JSON-RPC response to an `elicitation/create` that `tasks/result` sent (id
/// `taskdeck-input:<taskId>:<n>:<key>`): applied as the answer of the session's principal (202).
/// `None` when `message` answers no such request. A response that is an error (the client could
/// not ask its user) changes nothing: the question stays open for the human in Taskdeck. An
/// answer the engine refuses (it fails its form) is a 400, and the session's `tasks/result`
/// streams ask the question again with the reason, so the client can correct it: at most
/// [`REASK_LIMIT`] times, then the question is left to the human in Taskdeck.
pub async fn take_answer(
    endpoint: &McpEndpoint,
    session: &Session,
    message: &Value,
) -> Option<Response> {
    let mut parts = message
        .get("id")?
        .as_str()?
        .strip_prefix(INPUT_ID_PREFIX)?
        .splitn(3, ':');
    let (task_id, _n, key) = (parts.next()?, parts.next()?, parts.next()?);
    let accepted = || StatusCode::ACCEPTED.into_response();
    let Some(result) = message.get("result").and_then(Value::as_object) else {
        return Some(accepted());
    };
    let mut answer = result.clone();
    answer.remove("_meta");
    let mut responses = Map::new();
    responses.insert(key.to_string(), Value::Object(answer));
    // Only an answer to a question this session may be asked counts (`agent_view`).
    let engine = &endpoint.engine;
    let Ok(task) = engine.get(&session.principal, task_id) else {
        return Some(accepted());
    };
    let human_only = engine.human_only_inputs(&task).unwrap_or_default();
    let responses =
        agent_view::answerable_responses(&task, &human_only, session.reader(), responses);
    if responses.is_empty() {
        return Some(accepted());
    }
    Some(
        match engine.answer(&session.principal, task_id, responses).await {
            Ok(_) => accepted(),
            Err(e) => {
                let (code, message) = wire::error_code(&e);
                session.refuse(task_id, key, &message);
                let null = RawValue::from_string("null".into()).expect("null is JSON");
                error_response(
                    StatusCode::BAD_REQUEST,
                    &null,
                    code,
                    &message,
                    wire::error_data(&e),
                )
            }
        },
    )
}

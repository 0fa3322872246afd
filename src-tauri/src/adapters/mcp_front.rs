//! The `/mcp` front door. Two SEP-2663 requests are answered here, on a dedicated, fully
//! validated path; everything else goes to rmcp's Streamable HTTP service unchanged:
//!
//! - `tasks/get`, the call agents repeat most: parsing it into rmcp's request enum and running it
//!   through the session machinery costs several times the work of the lookup itself. This path
//!   applies the same checks in the same order (Accept 406, Content-Type 415, protocol version
//!   400/-32022, `Mcp-Method`/`Mcp-Name` 400/-32020, tasks capability 400/-32021, unknown task
//!   -32602) and returns the same JSON; `tests/integration` compares both paths byte for byte.
//! - `subscriptions/listen` with `notifications.taskIds` (SEP-2663 §Task Status Notifications):
//!   rmcp's subscription filter has no `taskIds`, so the stream of `notifications/tasks` is served
//!   here from the engine's change feed.

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json, value::RawValue};
use tokio_stream::wrappers::BroadcastStream;
use tower::ServiceExt;

use super::wire::{
    self, HEADER_MISMATCH, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, MODERN_PROTOCOL,
    TASKS_EXTENSION,
};
use crate::engine::{Engine, Principal};

type RmcpService = rmcp::transport::streamable_http_server::StreamableHttpService<
    super::mcp::McpHandler,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
>;

/// Shared state of the front door.
pub struct Front {
    pub engine: Engine,
    pub rmcp: RmcpService,
    /// Serve `tasks/get` on the dedicated path (off: everything goes through rmcp).
    pub fast_path: bool,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// `_meta["io.modelcontextprotocol/serverInfo"]` stamped on results, as rmcp does.
    pub server_info: Value,
}

#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct TaskParams {
    #[serde(rename = "taskId")]
    task_id: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
}

#[derive(Deserialize)]
struct ListenParams {
    #[serde(default)]
    notifications: Option<Value>,
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
}

/// Axum handler for every method on `/mcp`.
pub async fn handle(State(front): State<Arc<Front>>, req: Request) -> Response {
    if req.method() != http::Method::POST {
        return forward(&front, req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, front.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => return (StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large").into_response(),
    };
    if let Ok(peek) = serde_json::from_slice::<Peek<'_>>(&bytes)
        && let (Some(method), Some(id)) = (peek.method, peek.id)
    {
        let principal = parts.extensions.get::<Principal>().cloned();
        if let Some(principal) = principal {
            if method == "tasks/get" && front.fast_path && is_modern(&parts.headers) {
                return tasks_get(&front, &parts.headers, &principal, id, peek.params);
            }
            if method == "subscriptions/listen"
                && let Some(params) = peek.params
                && let Ok(p) = serde_json::from_str::<ListenParams>(params.get())
                && p.notifications
                    .as_ref()
                    .is_some_and(|n| n.get("taskIds").is_some())
            {
                return listen(&front, &parts.headers, &principal, id, p);
            }
        }
    }
    forward(&front, Request::from_parts(parts, Body::from(bytes))).await
}

async fn forward(front: &Front, req: Request) -> Response {
    match front.rmcp.clone().oneshot(req).await {
        Ok(resp) => resp.map(Body::new),
        Err(never) => match never {},
    }
}

fn is_modern(headers: &HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v >= MODERN_PROTOCOL)
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn error_response(
    status: StatusCode,
    id: &RawValue,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    let mut error = json!({"code": code, "message": message});
    if let Some(d) = data {
        error["data"] = d;
    }
    let body = format!(r#"{{"jsonrpc":"2.0","id":{},"error":{}}}"#, id.get(), error);
    json_response(status, body.into_bytes())
}

/// The checks rmcp applies to a modern request before dispatch, in its order. `name` is the
/// value `Mcp-Name` must carry (`None`: the header must be absent or is not checked).
fn check_request(
    headers: &HeaderMap,
    id: &RawValue,
    method: &str,
    name: Option<&str>,
    meta: Option<&Value>,
    accept_json: bool,
) -> Result<(), Response> {
    let accepts = |mime: &str| {
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| {
                v.split(',').any(|part| {
                    part.split(';')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .eq_ignore_ascii_case(mime)
                })
            })
    };
    if (accept_json && !accepts("application/json")) || !accepts("text/event-stream") {
        return Err((
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Client must accept both application/json and text/event-stream",
        )
            .into_response());
    }
    let content_type_ok = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
    if !content_type_ok {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        )
            .into_response());
    }
    let header_version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let meta_version = meta
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str);
    if header_version != MODERN_PROTOCOL {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            id,
            wire::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(json!({"supported": [MODERN_PROTOCOL], "requested": header_version})),
        ));
    }
    let single = |h: &str| {
        let mut values = headers.get_all(h).iter();
        let first = values
            .next()
            .map(|v| v.to_str().unwrap_or("\u{0}").to_string());
        if values.next().is_some() {
            Some("\u{0}".to_string())
        } else {
            first
        }
    };
    match single("mcp-method") {
        Some(m) if m.trim() == method => {}
        Some(m) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                id,
                HEADER_MISMATCH,
                &format!("Mcp-Method header `{m}` does not match body method `{method}`"),
                None,
            ));
        }
        None => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                id,
                HEADER_MISMATCH,
                &format!("missing required Mcp-Method header for `{method}`"),
                None,
            ));
        }
    }
    if let Some(expected) = name {
        match single("mcp-name") {
            Some(n) if decode_header_value(n.trim()).as_deref() == Some(expected) => {}
            Some(n) => {
                return Err(error_response(
                    StatusCode::BAD_REQUEST,
                    id,
                    HEADER_MISMATCH,
                    &format!("Mcp-Name header `{n}` does not match body value `{expected}`"),
                    None,
                ));
            }
            None => {
                return Err(error_response(
                    StatusCode::BAD_REQUEST,
                    id,
                    HEADER_MISMATCH,
                    &format!("missing required Mcp-Name header for `{method}`"),
                    None,
                ));
            }
        }
    }
    match meta_version {
        Some(v) if v == header_version => {}
        Some(v) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                id,
                HEADER_MISMATCH,
                &format!(
                    "MCP-Protocol-Version header `{header_version}` does not match _meta protocolVersion `{v}`"
                ),
                None,
            ));
        }
        None => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_PARAMS,
                "request _meta is missing or has malformed required fields: io.modelcontextprotocol/protocolVersion",
                None,
            ));
        }
    }
    let declared = meta
        .and_then(|m| m.pointer("/io.modelcontextprotocol~1clientCapabilities/extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some();
    let has_caps = meta
        .and_then(|m| m.get("io.modelcontextprotocol/clientCapabilities"))
        .is_some_and(Value::is_object);
    if !has_caps {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_PARAMS,
            "request _meta is missing or has malformed required fields: io.modelcontextprotocol/clientCapabilities",
            None,
        ));
    }
    if !declared {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            id,
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
            Some(wire::missing_tasks_capability_data()),
        ));
    }
    Ok(())
}

/// Decodes an `=?base64?...?=` header value (SEP-2243); plain values pass through.
fn decode_header_value(v: &str) -> Option<String> {
    use base64::Engine as _;
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(v.to_string()),
    }
}

fn tasks_get(
    front: &Front,
    headers: &HeaderMap,
    principal: &Principal,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Response {
    let params = match params.map(|p| serde_json::from_str::<TaskParams>(p.get())) {
        Some(Ok(p)) => p,
        _ => {
            return error_response(
                StatusCode::OK,
                id,
                INVALID_PARAMS,
                "Invalid params: tasks/get needs {taskId}",
                None,
            );
        }
    };
    let task_id = params.task_id.as_ref().and_then(Value::as_str);
    if let Err(resp) = check_request(
        headers,
        id,
        "tasks/get",
        Some(task_id.unwrap_or("")),
        params.meta.as_ref(),
        true,
    ) {
        return resp;
    }
    let Some(task_id) = task_id else {
        return error_response(
            StatusCode::OK,
            id,
            INVALID_PARAMS,
            "Invalid params: taskId must be a string",
            None,
        );
    };
    match front.engine.get(principal, task_id) {
        Ok(task) => {
            let mut result = wire::get_task_result(&task);
            result.insert(
                "_meta".into(),
                json!({"io.modelcontextprotocol/serverInfo": front.server_info}),
            );
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
                id.get(),
                Value::Object(result)
            );
            json_response(StatusCode::OK, body.into_bytes())
        }
        Err(e) => {
            let (code, message) = wire::error_code(&e);
            error_response(StatusCode::OK, id, code, &message, None)
        }
    }
}

fn listen(
    front: &Front,
    headers: &HeaderMap,
    principal: &Principal,
    id: &RawValue,
    params: ListenParams,
) -> Response {
    if let Err(resp) = check_request(
        headers,
        id,
        "subscriptions/listen",
        None,
        params.meta.as_ref(),
        false,
    ) {
        return resp;
    }
    let requested: Vec<String> = params
        .notifications
        .as_ref()
        .and_then(|n| n.get("taskIds"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    // Ids the caller may not see are dropped silently, exactly like ids that do not exist.
    let accepted: Vec<String> = requested
        .into_iter()
        .filter(|t| front.engine.get(principal, t).is_ok())
        .collect();
    let subscription_id: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
    let ack = json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"taskIds": accepted}, "_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id}}
    });
    let feed = BroadcastStream::new(front.engine.store().feed().subscribe());
    let sub = subscription_id.clone();
    let changes = feed.filter_map(move |change| {
        let accepted = accepted.clone();
        let sub = sub.clone();
        async move {
            let change = change.ok()?;
            if !accepted.contains(&change.task.task_id) {
                return None;
            }
            let mut params = change.task.wire_detailed();
            params.insert(
                "_meta".into(),
                json!({"io.modelcontextprotocol/subscriptionId": sub}),
            );
            let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params});
            Some(Ok::<_, Infallible>(Event::default().data(note.to_string())))
        }
    });
    let stream = futures::stream::once(async move {
        Ok::<_, Infallible>(Event::default().data(ack.to_string()))
    })
    .chain(changes);
    sse(stream)
}

fn sse(stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    let mut resp = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    resp.headers_mut()
        .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    resp
}

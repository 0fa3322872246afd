//! The `/mcp` front door. Three requests are answered here, on a dedicated, fully
//! validated path; everything else goes to rmcp's Streamable HTTP service unchanged:
//!
//! - `tasks/get`, the call agents repeat most: parsing it into rmcp's request enum and running it
//!   through the session machinery costs several times the work of the lookup itself. This path
//!   applies the same checks in the same order (Accept 406, Content-Type 415, protocol version
//!   400/-32022, `Mcp-Method`/`Mcp-Name` 400/-32020, tasks capability 400/-32021, unknown task
//!   -32602) and returns the same JSON; `tests/integration/security.rs` compares the answers of both paths.
//! - `tools/call` of a task tool from a client that declared the tasks extension: the durable
//!   create and its `CreateTaskResult`, after the same header, capability and argument checks.
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
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use serde::Deserialize;
use serde_json::{Map, Value, json, value::RawValue};
use tokio_stream::wrappers::BroadcastStream;
use tower::ServiceExt;

use super::agent_view::{self, Reader};
use super::wire::{
    self, HEADER_MISMATCH, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, MODERN_PROTOCOL,
    TASKS_EXTENSION,
};
use taskdeck_engine::{Engine, Principal, TaskStatus};

type RmcpService = rmcp::transport::streamable_http_server::StreamableHttpService<
    super::mcp::McpHandler,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
>;

/// Shared state of the front door.
pub struct Front {
    pub engine: Engine,
    /// Tool schemas and fixtures switch, shared with the rmcp handler.
    pub core: Arc<super::mcp::McpCore>,
    pub rmcp: RmcpService,
    /// rmcp's sessions, to tell whether a 2025-11-25 session still exists.
    pub sessions: Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    /// Serve `tasks/get` on the dedicated path (off: everything goes through rmcp).
    pub fast_path: bool,
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
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

/// The parts of a request's `_meta` the front door checks, borrowed from the body.
#[derive(Deserialize, Default)]
struct MetaView<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    protocol_version: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    client_capabilities: Option<CapsView<'a>>,
}

#[derive(Deserialize)]
struct CapsView<'a> {
    #[serde(borrow, default)]
    extensions: Option<std::collections::HashMap<std::borrow::Cow<'a, str>, serde::de::IgnoredAny>>,
    #[serde(default)]
    elicitation: Option<Value>,
}

impl MetaView<'_> {
    fn declares_tasks(&self) -> bool {
        self.client_capabilities
            .as_ref()
            .and_then(|c| c.extensions.as_ref())
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
    }

    /// Who reads tasks through this request (`agent_view`), by its own capabilities.
    fn reader(&self, principal: &Principal) -> Reader {
        let elicitation = self
            .client_capabilities
            .as_ref()
            .and_then(|c| c.elicitation.clone())
            .map(|e| json!({"elicitation": e}));
        Reader {
            can_elicit: agent_view::declares_form_elicitation(elicitation.as_ref()),
            admin: principal.admin,
        }
    }
}

/// Who reads tasks through a request with this `_meta` (`agent_view`); without usable `_meta`,
/// a client that declared nothing.
fn reader_of(meta: &Result<Option<MetaView<'_>>, ()>, principal: &Principal) -> Reader {
    match meta {
        Ok(Some(m)) => m.reader(principal),
        _ => Reader {
            can_elicit: false,
            admin: principal.admin,
        },
    }
}

/// Parses `_meta`; `Err` when present but malformed (e.g. capabilities not an object).
fn parse_meta(raw: Option<&RawValue>) -> Result<Option<MetaView<'_>>, ()> {
    match raw {
        None => Ok(None),
        Some(r) => serde_json::from_str(r.get()).map(Some).map_err(|_| ()),
    }
}

#[derive(Deserialize)]
struct TaskParams<'a> {
    #[serde(rename = "taskId", borrow)]
    task_id: Option<&'a RawValue>,
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ListenParams<'a> {
    #[serde(default)]
    notifications: Option<Value>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
}

/// The one `Mcp-Session-Id` of a request (`None` without one, or with two).
fn session_header(headers: &HeaderMap) -> Option<String> {
    let mut values = headers.get_all("mcp-session-id").iter();
    let first = values.next()?.to_str().ok()?.to_string();
    values.next().is_none().then_some(first)
}

/// What rmcp answers for a session it does not know: Taskdeck answers the same for a session
/// opened by another principal, so a session id is no credential.
fn unknown_session() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// Axum handler for every method on `/mcp`.
pub async fn handle(State(front): State<Arc<Front>>, req: Request) -> Response {
    let principal = req.extensions().get::<Principal>().cloned();
    let session_id = session_header(req.headers());
    // The session, when this request is on one Taskdeck knows and rmcp still has.
    let mut session = None;
    if let Some(sid) = &session_id
        && let Some(known) = front.core.sessions.get(sid)
    {
        if Some(&known.principal) != principal.as_ref() {
            return unknown_session();
        }
        if front
            .sessions
            .has_session(&sid.clone().into())
            .await
            .unwrap_or(false)
        {
            session = Some(known);
        } else {
            front.core.sessions.close(sid);
        }
    }
    if req.method() == http::Method::DELETE {
        // An unknown session is 404 for DELETE too, as for a session of another principal.
        if let Some(sid) = &session_id
            && !front
                .sessions
                .has_session(&sid.clone().into())
                .await
                .unwrap_or(false)
        {
            return unknown_session();
        }
        let resp = forward(&front, req).await;
        if resp.status() != StatusCode::ACCEPTED {
            return resp;
        }
        // The session ended: 204, which every client takes (the Python SDK warns on 202).
        if let Some(sid) = &session_id {
            front.core.sessions.close(sid);
        }
        return StatusCode::NO_CONTENT.into_response();
    }
    if req.method() != http::Method::POST {
        return forward(&front, req).await;
    }
    let (mut parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, front.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => {
            let null = RawValue::from_string("null".into()).expect("null is JSON");
            return error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &null,
                wire::INVALID_REQUEST,
                &format!(
                    "Request body too large: /mcp accepts at most {} bytes",
                    front.max_body_bytes
                ),
                None,
            );
        }
    };
    let modern = is_modern(&parts.headers);
    if let (Some(sid), Some(session), false) = (&session_id, &session, modern) {
        if let Err(resp) = check_envelope(&bytes) {
            return resp;
        }
        if let Ok(message) = serde_json::from_slice::<Value>(&bytes)
            && message.get("method").is_none()
            && let Some(resp) = super::mcp_legacy::take_answer(&front, session, &message).await
        {
            return resp;
        }
        if let Ok(peek) = serde_json::from_slice::<Peek<'_>>(&bytes)
            && let (Some(method), Some(id)) = (peek.method, peek.id)
            && let Some(resp) =
                super::mcp_legacy::handle(&front, sid, session, method, id, peek.params).await
        {
            return resp;
        }
    }
    if let Ok(peek) = serde_json::from_slice::<Peek<'_>>(&bytes)
        && let (Some(method), Some(id)) = (peek.method, peek.id)
    {
        if method == "initialize" && session_id.is_none() && !modern {
            if let Err(resp) = check_envelope(&bytes) {
                return resp;
            }
            // A 2025-11-25 initialize whose params do not fit (e.g. `elicitation: true`) would
            // reach rmcp as an unknown request and be told a session id is missing.
            let fits = matches!(
                serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&bytes),
                Ok(rmcp::model::ClientJsonRpcMessage::Request(r))
                    if matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_))
            );
            if !fits {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    id,
                    INVALID_PARAMS,
                    "Invalid params for initialize: {protocolVersion, capabilities, clientInfo}",
                    None,
                );
            }
            let can_elicit = serde_json::from_slice::<Value>(&bytes).is_ok_and(|m| {
                agent_view::declares_form_elicitation(m.pointer("/params/capabilities"))
            });
            let resp = forward(&front, Request::from_parts(parts, Body::from(bytes))).await;
            return initialized(&front, resp, principal, can_elicit).await;
        }
        if modern
            && matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel")
            && !parts.headers.contains_key("mcp-name")
            && let Some(task_id) = peek
                .params
                .and_then(|p| serde_json::from_str::<TaskParams<'_>>(p.get()).ok())
                .and_then(|p| p.task_id)
                .and_then(|t| serde_json::from_str::<String>(t.get()).ok())
            && let Ok(value) = http::HeaderValue::from_str(&task_id)
        {
            // Liberal where it costs nothing: a tasks/* request without `Mcp-Name` (fastmcp-tasks
            // 4.1.4 sends none) is taken as naming its body's taskId; a mismatched one is
            // still rejected.
            parts.headers.insert("mcp-name", value);
        }
        if let Some(principal) = principal {
            if method == "tasks/get" && front.fast_path && modern {
                return tasks_get(&front, &parts.headers, &principal, id, peek.params);
            }
            if method == "tools/call"
                && front.fast_path
                && modern
                && let Some(resp) =
                    create_task(&front, &parts.headers, &principal, id, peek.params).await
            {
                return resp;
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
    if let Err(resp) = check_envelope(&bytes) {
        return resp;
    }
    forward(&front, Request::from_parts(parts, Body::from(bytes))).await
}

/// Completes a 2025-11-25 `initialize` rmcp answered: records the session for `principal`, and
/// advertises the 2025-11-25 task capabilities (`tasks.{list, cancel, requests.tools.call}`,
/// 2025-11-25 §Capabilities), which rmcp 3.x does not know, in place of the SEP-2663 extension
/// (not defined under 2025-11-25). The answer goes out as one JSON message.
async fn initialized(
    front: &Front,
    resp: Response,
    principal: Option<Principal>,
    can_elicit: bool,
) -> Response {
    let Some(sid) = session_header(resp.headers()) else {
        return resp;
    };
    if let Some(p) = principal {
        front.core.sessions.open(&sid, p, can_elicit);
    }
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1 << 20).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(text.as_ref()))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some());
    let Some(mut message) = message else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let negotiated = message
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if negotiated >= "2025-11-25"
        && let Some(caps) = message
            .pointer_mut("/result/capabilities")
            .and_then(Value::as_object_mut)
    {
        if let Some(Value::Object(ext)) = caps.get_mut("extensions") {
            ext.remove(TASKS_EXTENSION);
            if ext.is_empty() {
                caps.remove("extensions");
            }
        }
        caps.insert(
            "tasks".into(),
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        );
    }
    let mut out = json_response(parts.status, message.to_string().into_bytes());
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// Rejects what rmcp would answer with a bare `415`: a body that is not JSON (`-32700`), not a
/// JSON-RPC 2.0 message (`-32600`), or a known method whose params have the wrong shape
/// (`-32602`). All with HTTP 400 and a JSON-RPC error body, echoing the id when there is one.
// The `Err` is the response to send; it is built only on the rejection path.
#[allow(clippy::result_large_err)]
fn check_envelope(bytes: &[u8]) -> Result<(), Response> {
    let null = RawValue::from_string("null".into()).expect("null is JSON");
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                &null,
                wire::PARSE_ERROR,
                &format!("Parse error: {e}"),
                None,
            ));
        }
    };
    let id = value
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .and_then(|id| RawValue::from_string(id.to_string()).ok())
        .unwrap_or(null);
    let obj = value.as_object();
    let valid = obj.is_some_and(|o| {
        o.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
            && (o.contains_key("method") && o["method"].is_string()
                || o.contains_key("result")
                || o.contains_key("error"))
            && o.get("id")
                .is_none_or(|id| id.is_string() || id.is_i64() || id.is_u64())
            && o.get("params").is_none_or(Value::is_object)
    });
    if !valid {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            &id,
            wire::INVALID_REQUEST,
            "Invalid Request: expected one JSON-RPC 2.0 object with a string method, an optional object params and a string or integer id",
            None,
        ));
    }
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value) {
        Err(e) => {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                &id,
                INVALID_PARAMS,
                &format!("Invalid params: {e}"),
                None,
            ));
        }
        // rmcp falls back to a custom request when a known method's params do not fit its type.
        Ok(rmcp::model::ClientJsonRpcMessage::Request(r))
            if matches!(r.request, rmcp::model::ClientRequest::CustomRequest(_))
                && is_known_method(&method) =>
        {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                &id,
                INVALID_PARAMS,
                &format!("Invalid params for {method}"),
                None,
            ));
        }
        Ok(_) => {}
    }
    Ok(())
}

fn is_known_method(method: &str) -> bool {
    matches!(
        method,
        "server/discover"
            | "tools/call"
            | "tools/list"
            | "tasks/get"
            | "tasks/update"
            | "tasks/cancel"
            | "subscriptions/listen"
            | "prompts/get"
            | "resources/read"
    )
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

/// A JSON response with `body`.
pub(super) fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// A JSON-RPC error response for request `id`, with HTTP `status`.
pub(super) fn error_response(
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
#[allow(clippy::result_large_err)] // the `Err` is the rejection to send
fn check_request(
    headers: &HeaderMap,
    id: &RawValue,
    method: &str,
    name: Option<&str>,
    meta: Result<Option<&MetaView<'_>>, ()>,
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
    let malformed_meta = meta.is_err();
    let meta = meta.unwrap_or(None);
    let meta_version = meta.and_then(|m| m.protocol_version.as_deref());
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
    let declared = meta.is_some_and(MetaView::declares_tasks);
    let has_caps = meta.is_some_and(|m| m.client_capabilities.is_some());
    if malformed_meta || !has_caps {
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
    let params = match params.map(|p| serde_json::from_str::<TaskParams<'_>>(p.get())) {
        Some(Ok(p)) => p,
        _ => {
            return error_response(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_PARAMS,
                "Invalid params: tasks/get needs {taskId}",
                None,
            );
        }
    };
    let task_id: Option<String> = params
        .task_id
        .and_then(|t| serde_json::from_str(t.get()).ok());
    let Some(task_id) = task_id else {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_PARAMS,
            "Invalid params: taskId must be a string",
            None,
        );
    };
    let meta = parse_meta(params.meta);
    if let Err(resp) = check_request(
        headers,
        id,
        "tasks/get",
        Some(&task_id),
        meta.as_ref().map(Option::as_ref).map_err(|_| ()),
        true,
    ) {
        return resp;
    }
    match front.engine.get_result_json(principal, &task_id) {
        // A waiting task is shown differently to different clients (`agent_view`): each kind
        // of reader's rendering is made once and kept with the cached answer.
        Ok(answer) if answer.status == TaskStatus::InputRequired => {
            let reader = reader_of(&meta, principal);
            let key = reader.can_elicit as u8 | (reader.admin as u8) << 1;
            let rendered = match answer.rendering(key) {
                Some(r) => Ok(r),
                None => front.engine.get(principal, &task_id).and_then(|task| {
                    let human_only = front.engine.human_only_inputs(&task)?;
                    let mut shown = agent_view::detailed(&task, &human_only, reader);
                    shown.insert("resultType".into(), json!("complete"));
                    let r: Arc<str> = Value::Object(shown).to_string().into();
                    answer.keep_rendering(key, r.clone());
                    Ok(r)
                }),
            };
            match rendered {
                Ok(r) => {
                    let body = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#, id.get(), r);
                    json_response(StatusCode::OK, body.into_bytes())
                }
                Err(e) => {
                    let (code, message) = wire::error_code(&e);
                    error_response(StatusCode::OK, id, code, &message, None)
                }
            }
        }
        Ok(result) => {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
                id.get(),
                result.json
            );
            json_response(StatusCode::OK, body.into_bytes())
        }
        Err(e) => {
            let (code, message) = wire::error_code(&e);
            error_response(StatusCode::OK, id, code, &message, None)
        }
    }
}

#[derive(Deserialize)]
struct CallParams<'a> {
    name: Option<String>,
    arguments: Option<Map<String, Value>>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaView<'a>>,
    #[serde(rename = "inputResponses", borrow, default)]
    input_responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow, default)]
    request_state: Option<&'a RawValue>,
}

/// The dedicated path for `tools/call` of a task tool by a client that declared the tasks
/// extension: validate like rmcp, create the task durably, answer the `CreateTaskResult`.
/// `None` for every other call (sync tools, MRTR rounds, clients without the extension), which
/// then goes to rmcp.
async fn create_task(
    front: &Front,
    headers: &HeaderMap,
    principal: &Principal,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Option<Response> {
    let params: CallParams<'_> = serde_json::from_str(params?.get()).ok()?;
    let name = params.name?;
    if params.input_responses.is_some() || params.request_state.is_some() {
        return None;
    }
    let meta = params.meta?;
    let declared = meta.declares_tasks();
    let tool = front
        .engine
        .tool(&name)
        .filter(|t| t.descriptor().agent_callable)?;
    let arguments = Value::Object(params.arguments.unwrap_or_default());
    if !declared || (front.core.fixtures && super::mcp_fixtures::intercepts(&name, &arguments)) {
        return None;
    }
    if let Err(resp) = check_request(
        headers,
        id,
        "tools/call",
        Some(&name),
        Ok(Some(&meta)),
        true,
    ) {
        return Some(resp);
    }
    let invalid = |m: &str| Some(error_response(StatusCode::OK, id, INVALID_PARAMS, m, None));
    if let Err(e) = front.core.validate(&name, &arguments) {
        return invalid(&e.message);
    }
    if let Err(m) = tool.check_arguments(&arguments) {
        return invalid(&m);
    }
    Some(
        match front.engine.create_task(principal, &name, arguments).await {
            Ok(task) => {
                let mut body = Vec::with_capacity(512);
                body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                body.extend_from_slice(id.get().as_bytes());
                body.extend_from_slice(br#","result":"#);
                serde_json::to_writer(&mut body, &wire::create_task_result(&task))
                    .expect("a JSON object always serializes");
                body.push(b'}');
                json_response(StatusCode::OK, body)
            }
            Err(e) => {
                let (code, message) = wire::error_code(&e);
                error_response(StatusCode::OK, id, code, &message, None)
            }
        },
    )
}

fn notification(params: Map<String, Value>, subscription_id: &Value) -> Result<Event, Infallible> {
    let mut params = params;
    params.insert(
        "_meta".into(),
        json!({"io.modelcontextprotocol/subscriptionId": subscription_id}),
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params});
    Ok(Event::default().data(note.to_string()))
}

fn listen(
    front: &Front,
    headers: &HeaderMap,
    principal: &Principal,
    id: &RawValue,
    params: ListenParams,
) -> Response {
    let meta = parse_meta(params.meta);
    if let Err(resp) = check_request(
        headers,
        id,
        "subscriptions/listen",
        None,
        meta.as_ref().map(Option::as_ref).map_err(|_| ()),
        false,
    ) {
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
    let feed = BroadcastStream::new(front.engine.store().feed().subscribe());
    // Ids the caller may not see are dropped silently, exactly like ids that do not exist.
    let visible: Vec<_> = requested
        .iter()
        .filter_map(|t| front.engine.get(principal, t).ok())
        .collect();
    let accepted: Vec<String> = visible.iter().map(|t| t.task_id.clone()).collect();
    let subscription_id: Value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
    let ack = json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"taskIds": accepted}, "_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id}}
    });
    let reader = reader_of(&meta, principal);
    let engine = front.engine.clone();
    let shown = move |t: &taskdeck_engine::TaskRecord| {
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
    let mut last: std::collections::HashMap<String, Map<String, Value>> = visible
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

/// An SSE response of `stream`, kept alive every 15 s, unbuffered by proxies.
pub(super) fn sse(
    stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    let mut resp = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    resp.headers_mut()
        .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    resp
}

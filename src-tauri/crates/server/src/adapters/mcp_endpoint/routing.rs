//! The axum handler of `/mcp`: session rules, then each request to its dedicated path or to
//! rmcp's Streamable HTTP service.
//!
//! - A request naming a 2025-11-25 session opened by another principal gets the 404 of an
//!   unknown session; a session rmcp has dropped is forgotten.
//! - DELETE ends a session (204, which every client takes; the Python SDK warns on rmcp's 202).
//! - A POST on a 2025-11-25 session may be an answer to `tasks/result`'s questions or a task
//!   request of that era (`mcp_legacy`).
//! - A sessionless 2025-11-25 `initialize` is completed by [`initialize`](super::initialize);
//!   one on a live session is refused (it would advertise other capabilities).
//! - An `MCP-Protocol-Version` rmcp does not know is refused first (`-32022`).
//! - Any other request of that era without a session gets a JSON-RPC error saying what to send.
//! - 2026-07-28 `tasks/get`, task-creating `tools/call` and `subscriptions/listen` with
//!   `taskIds` go to their dedicated paths (see [`TaskRouting`](super::TaskRouting)).
//! - Everything else passes the [`envelope`](super::envelope) checks and goes to rmcp.

use std::sync::Arc;

use axum::{
    body::{Body, Bytes},
    extract::{Path, Request, State},
    http::{HeaderValue, Method, StatusCode, request::Parts},
    response::{IntoResponse, Response},
};
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use serde_json::{Value, value::RawValue};

use super::{
    McpEndpoint, RequestHead, TaskRouting,
    create::create_task,
    envelope::check_envelope,
    initialize::initialize,
    listen::{ListenParams, listen},
    refusals::{SESSION_REQUIRED, already_initialized, unknown_session, unsupported_version},
    request_checks::{AnswerMedia, check_media, is_modern, session_header},
    responses::{error_response, forward, null_id},
    tasks_get::{TaskParams, tasks_get},
};
use crate::adapters::{
    api_middleware::{BodyRefused, read_body},
    mcp::{UpstreamScope, scope_of},
    mcp_legacy,
    mcp_sessions::Session,
    wire::INVALID_REQUEST,
};
use taskdeck_engine::Principal;

/// Axum handler for every method on `/mcp`.
pub async fn handle(State(endpoint): State<Arc<McpEndpoint>>, req: Request) -> Response {
    // A POST's refusal echoes its id (`Post::route`).
    if req.method() != Method::POST
        && let Some(unsupported) = unsupported_version(req.headers())
    {
        return unsupported.response(&null_id());
    }
    let principal = req.extensions().get::<Principal>().cloned();
    let session_id = session_header(req.headers());
    let session = match &session_id {
        Some(sid) => match live_session(&endpoint, sid, principal.as_ref()).await {
            Ok(session) => session,
            Err(resp) => return resp,
        },
        None => None,
    };
    if req.method() == Method::DELETE {
        return end_session(&endpoint, session_id.as_deref(), req).await;
    }
    if req.method() != Method::POST {
        return forward(&endpoint, req).await;
    }
    let (parts, body) = match read_body(req, endpoint.max_body_bytes).await {
        Ok(read) => read,
        Err(BodyRefused::TooLarge) => {
            return error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &null_id(),
                INVALID_REQUEST,
                &format!(
                    "Request body too large: /mcp accepts at most {} bytes",
                    endpoint.max_body_bytes
                ),
                None,
            );
        }
        Err(BodyRefused::Unreadable(e)) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &null_id(),
                INVALID_REQUEST,
                &format!("Cannot read the request body: {e}"),
                None,
            );
        }
    };
    let post = Post {
        parts,
        body,
        principal,
        session_id,
        session,
    };
    post.route(&endpoint).await
}

/// Axum handler for every method on `/mcp/{server}`: the endpoint of one upstream server's
/// tools under their own names (see `gateway::catalog`), otherwise the same as `/mcp`.
/// 404 (`-32600`) for a server that is not configured.
pub async fn handle_upstream(
    State(endpoint): State<Arc<McpEndpoint>>,
    Path(server): Path<String>,
    mut req: Request,
) -> Response {
    let known = endpoint
        .core
        .gateway
        .as_ref()
        .is_some_and(|g| g.has_server(&server));
    if !known {
        return error_response(
            StatusCode::NOT_FOUND,
            &null_id(),
            INVALID_REQUEST,
            &format!("No upstream server named {server:?} is configured in Taskdeck"),
            None,
        );
    }
    req.extensions_mut().insert(UpstreamScope(server));
    handle(State(endpoint), req).await
}

/// The 2025-11-25 session `sid` names, when Taskdeck knows it and rmcp still has it (`None`
/// otherwise: rmcp then answers as for any session it does not know). `Err`: the 404 for a
/// session opened by another principal.
#[allow(clippy::result_large_err)] // the `Err` is the rejection to send
async fn live_session(
    endpoint: &McpEndpoint,
    sid: &str,
    principal: Option<&Principal>,
) -> Result<Option<Session>, Response> {
    let Some(known) = endpoint.core.sessions.get(sid) else {
        return Ok(None);
    };
    if Some(&known.principal) != principal {
        return Err(unknown_session());
    }
    if rmcp_has_session(endpoint, sid).await {
        Ok(Some(known))
    } else {
        endpoint.core.sessions.close(sid);
        Ok(None)
    }
}

async fn rmcp_has_session(endpoint: &McpEndpoint, sid: &str) -> bool {
    endpoint
        .sessions
        .has_session(&sid.to_string().into())
        .await
        .unwrap_or(false)
}

/// DELETE on `/mcp`: ends session `session_id` in rmcp and here. 404 for a session rmcp does not
/// know (as for one of another principal), 204 once ended, rmcp's answer otherwise.
async fn end_session(endpoint: &McpEndpoint, session_id: Option<&str>, req: Request) -> Response {
    if let Some(sid) = session_id
        && !rmcp_has_session(endpoint, sid).await
    {
        return unknown_session();
    }
    let resp = forward(endpoint, req).await;
    if resp.status() != StatusCode::ACCEPTED {
        return resp;
    }
    if let Some(sid) = session_id {
        endpoint.core.sessions.close(sid);
    }
    StatusCode::NO_CONTENT.into_response()
}

/// A POST on `/mcp` whose body has been read.
struct Post {
    parts: Parts,
    body: Bytes,
    /// Who the guard authenticated (`None` only where no guard ran).
    principal: Option<Principal>,
    /// The request's one `Mcp-Session-Id`.
    session_id: Option<String>,
    /// The live 2025-11-25 session it names, if any.
    session: Option<Session>,
}

impl Post {
    async fn route(mut self, endpoint: &McpEndpoint) -> Response {
        if let Some(unsupported) = unsupported_version(&self.parts.headers) {
            let id = serde_json::from_slice::<RequestHead<'_>>(&self.body)
                .ok()
                .and_then(|head| head.id.map(ToOwned::to_owned))
                .unwrap_or_else(null_id);
            return unsupported.response(&id);
        }
        let modern = is_modern(&self.parts.headers);
        if !modern
            && let (Some(sid), Some(session)) = (&self.session_id, &self.session)
            && let Some(resp) =
                on_legacy_session(endpoint, sid, session, &self.parts, &self.body).await
        {
            return resp;
        }
        if let Ok(head) = serde_json::from_slice::<RequestHead<'_>>(&self.body)
            && head.is_request()
            && let (Some(method), Some(id)) = (head.method, head.id)
        {
            if method == "initialize" && self.session_id.is_none() {
                let id = id.to_owned();
                return initialize(endpoint, self.parts, self.body, &id, self.principal).await;
            }
            if method == "initialize" && self.session.is_some() {
                return already_initialized(id);
            }
            if !modern && self.session_id.is_none() {
                return no_session(&self.parts, &self.body, id);
            }
            if modern
                && matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel")
                && !self.parts.headers.contains_key("mcp-name")
                && let Some(task_id) = TaskParams::task_id_of(head.params)
                && let Ok(value) = HeaderValue::from_str(&task_id)
            {
                // Liberal where it costs nothing: a tasks/* request without `Mcp-Name`
                // (fastmcp-tasks 4.1.4 sends none) is taken as naming its body's taskId; a
                // mismatched one is still rejected.
                self.parts.headers.insert("mcp-name", value);
            }
            if let Some(principal) = &self.principal {
                let headers = &self.parts.headers;
                let dedicated = endpoint.task_routing == TaskRouting::Dedicated && modern;
                if method == "tasks/get" && dedicated {
                    return tasks_get(endpoint, headers, principal, id, head.params);
                }
                if method == "tools/call"
                    && dedicated
                    && let Some(resp) = create_task(
                        endpoint,
                        headers,
                        scope_of(&self.parts),
                        principal,
                        id,
                        head.params,
                    )
                    .await
                {
                    return resp;
                }
                if method == "subscriptions/listen"
                    && let Some(params) = ListenParams::for_tasks(head.params)
                {
                    return listen(endpoint, headers, principal, id, params);
                }
            }
        }
        if let Err(resp) = check_envelope(&self.body) {
            return resp;
        }
        forward(
            endpoint,
            Request::from_parts(self.parts, Body::from(self.body)),
        )
        .await
    }
}

/// A request of the sessions' era (no 2026-07-28 `MCP-Protocol-Version`) that names no session
/// and is no `initialize`: rmcp's media checks and the envelope checks, then 400 with a
/// JSON-RPC error (-32600) that says what to send, where rmcp answers "Session ID is required"
/// as bare text (2025-11-25 §Session Management: the server SHOULD answer 400).
fn no_session(parts: &Parts, body: &[u8], id: &RawValue) -> Response {
    if let Err(resp) = check_media(&parts.headers, AnswerMedia::Json) {
        return resp;
    }
    if let Err(resp) = check_envelope(body) {
        return resp;
    }
    error_response(
        StatusCode::BAD_REQUEST,
        id,
        INVALID_REQUEST,
        SESSION_REQUIRED,
        None,
    )
}

/// A POST on live 2025-11-25 session `sid`: rmcp's media checks (406, 415) and the envelope
/// checks, then a client's answer to a question `tasks/result` asked, or a task request of that
/// era (`mcp_legacy`). `None` for anything else, which is routed like any other POST.
async fn on_legacy_session(
    endpoint: &McpEndpoint,
    sid: &str,
    session: &Session,
    parts: &Parts,
    body: &[u8],
) -> Option<Response> {
    let headers = &parts.headers;
    if let Err(resp) = check_media(headers, AnswerMedia::Json) {
        return Some(resp);
    }
    // The other era's methods, in a well-formed request (JSON, a valid envelope): unknown
    // here, before the envelope checks read their params as this era cannot.
    if let Ok(head) = serde_json::from_slice::<RequestHead<'_>>(body)
        && head.is_request()
        && let (Some(method), Some(id)) = (head.method, head.id)
        && let Some(resp) = mcp_legacy::not_of_this_era(method, id)
        && serde_json::from_slice::<Value>(body).is_ok()
    {
        return Some(resp);
    }
    if let Err(resp) = check_envelope(body) {
        return Some(resp);
    }
    if let Ok(message) = serde_json::from_slice::<Value>(body)
        && message.get("method").is_none()
        && let Some(resp) = mcp_legacy::take_answer(endpoint, session, &message).await
    {
        return Some(resp);
    }
    let head = serde_json::from_slice::<RequestHead<'_>>(body).ok()?;
    let (method, id) = (head.method?, head.id?);
    mcp_legacy::handle(
        endpoint,
        sid,
        session,
        scope_of(parts),
        method,
        id,
        head.params,
    )
    .await
}

//! A 2025-11-25 `initialize` (a POST without a session; 2026-07-28 has no `initialize`, and one
//! sent with its header that rmcp accepts still opens a 2025-11-25 session):
//! checked, forwarded to rmcp, and its answer completed. rmcp 3.x implements only SEP-2663, so
//! the answer is rewritten to advertise the 2025-11-25 task capabilities
//! (`tasks.{list, cancel, requests.tools.call}`, 2025-11-25 §Capabilities) in place of the
//! SEP-2663 extension (not defined under 2025-11-25), and the new session is recorded for its
//! principal (`mcp_sessions`), whose later task requests `mcp_legacy` serves.

use axum::{
    body::{Body, Bytes},
    extract::Request,
    http::{StatusCode, header, request::Parts},
    response::{IntoResponse, Response},
};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::{Value, json, value::RawValue};

use super::{
    McpEndpoint,
    envelope::check_envelope,
    request_checks::{is_modern, session_header},
    responses::{error_response, forward, json_response},
};
use crate::adapters::{
    agent_view,
    wire::{INVALID_PARAMS, TASKS_EXTENSION},
};
use taskdeck_engine::Principal;

/// Largest `initialize` answer read back from rmcp for the rewrite, in bytes.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Serves 2025-11-25 `initialize` request `id` (`parts` and `body` of the POST). Errors: the
/// [`check_envelope`] rejections; HTTP 400 `-32602` for params that are not
/// `{protocolVersion, capabilities, clientInfo}` (e.g. `elicitation: true`), which rmcp would
/// take for an unknown request and answer that a session id is missing.
pub(crate) async fn initialize(
    endpoint: &McpEndpoint,
    parts: Parts,
    body: Bytes,
    id: &RawValue,
    principal: Option<Principal>,
) -> Response {
    if let Err(resp) = check_envelope(&body) {
        return resp;
    }
    // Under a 2026-07-28 header rmcp decides on the params (it refuses a `protocolVersion`
    // other than the header's); a session it opens negotiates 2025-11-25 all the same, so its
    // answer is completed like any other.
    let modern_header = is_modern(&parts.headers);
    let fits = matches!(
        serde_json::from_slice::<ClientJsonRpcMessage>(&body),
        Ok(ClientJsonRpcMessage::Request(r))
            if matches!(r.request, ClientRequest::InitializeRequest(_))
    );
    if !modern_header && !fits {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_PARAMS,
            "Invalid params for initialize: {protocolVersion, capabilities, clientInfo}",
            None,
        );
    }
    let can_elicit = serde_json::from_slice::<Value>(&body)
        .is_ok_and(|m| agent_view::declares_form_elicitation(m.pointer("/params/capabilities")));
    let resp = forward(endpoint, Request::from_parts(parts, Body::from(body))).await;
    initialized(endpoint, resp, principal, can_elicit).await
}

/// Completes the `initialize` rmcp answered with `resp`: records the session for `principal`
/// (`can_elicit`: it declared form elicitation) and rewrites the capabilities (module doc). The
/// answer goes out as one JSON message with rmcp's headers; an answer without a session id or
/// without a JSON-RPC response in it passes unchanged.
async fn initialized(
    endpoint: &McpEndpoint,
    resp: Response,
    principal: Option<Principal>,
    can_elicit: bool,
) -> Response {
    let Some(sid) = session_header(resp.headers()) else {
        return resp;
    };
    if let Some(p) = principal {
        endpoint.core.sessions.open(&sid, p, can_elicit);
    }
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ANSWER_BYTES).await else {
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

//! Refusals of `/mcp` as JSON-RPC errors that say what to send instead. rmcp's Streamable HTTP
//! service refuses a request it will not read with a bare text body (`Bad Request: Session ID
//! is required`, `Not Found: Session not found`, `Method Not Allowed`) and some JSON errors
//! without an `id`; [`explained`] gives each the same status with a JSON-RPC error body. The
//! `MCP-Protocol-Version` header is checked here, before rmcp ([`unsupported_version`]), and
//! a second `initialize` on a live session is refused ([`already_initialized`]).
//!
//! The `id` of a refusal made before the message is read is `null` (JSON-RPC 2.0 §5), and an
//! answer about another principal's session never differs from one about a session that never
//! was.

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::Response,
};
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json, value::RawValue};

use super::responses::{error_response, json_response, null_id};
use crate::adapters::wire::{INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION};

/// The explanation of a request of the 2025-11-25 era that names no session (400).
pub(crate) const SESSION_REQUIRED: &str = "Session ID is required: send `initialize` first, then its \
     Mcp-Session-Id header with every request (protocol 2025-11-25); or send \
     `MCP-Protocol-Version: 2026-07-28` and `Mcp-Method` with each request, which needs no session";

/// The explanation of a request naming a session that is not there (404).
const SESSION_NOT_FOUND: &str = "Session not found: it was ended, or expired, or Taskdeck \
     restarted; send `initialize` without the Mcp-Session-Id header to start a new session \
     (protocol 2025-11-25), or use the 2026-07-28 headers, which need none";

/// What a 405 says, with `Allow: GET, POST, DELETE`.
const METHOD_NOT_ALLOWED: &str = "Method Not Allowed: /mcp takes POST; GET (the session's \
     notification stream) and DELETE (ending it) need a 2025-11-25 session's Mcp-Session-Id. \
     With 2026-07-28, `subscriptions/listen` streams notifications";

/// What a 405 under the 2026-07-28 headers says, with `Allow: POST`.
const SESSIONLESS_METHOD_NOT_ALLOWED: &str = "Method Not Allowed: with MCP-Protocol-Version \
     2026-07-28 /mcp takes POST only (there is no session to stream or end); \
     `subscriptions/listen` streams notifications";

/// Longest refusal body read; rmcp's are one line or a small JSON object.
const MAX_REFUSAL_BYTES: usize = 16 * 1024;

/// Most characters of a refused `MCP-Protocol-Version` value quoted back.
const QUOTED_VERSION_CHARS: usize = 64;

/// The 404 for a session Taskdeck does not serve to this caller: unknown, ended, or opened by
/// another principal (the same answer for each, so a session id is no credential).
pub(crate) fn unknown_session() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        &null_id(),
        INVALID_REQUEST,
        SESSION_NOT_FOUND,
        None,
    )
}

/// The 400 (`-32600`) for `initialize` request `id` on a session it opened already: answering
/// it would advertise capabilities other than the session's.
pub(crate) fn already_initialized(id: &RawValue) -> Response {
    error_response(
        StatusCode::BAD_REQUEST,
        id,
        INVALID_REQUEST,
        "This session is initialized already; to start a new one, send `initialize` without \
         the Mcp-Session-Id header",
        None,
    )
}

/// A refused `MCP-Protocol-Version` ([`unsupported_version`]).
pub(crate) struct UnsupportedVersion {
    /// The value as quoted back (cut at [`QUOTED_VERSION_CHARS`]).
    requested: String,
    /// How many headers were sent.
    headers: usize,
}

/// `Some` when `headers` carry an `MCP-Protocol-Version` that is not one protocol version rmcp
/// knows: an unknown, empty or non-ASCII value, or two headers. A request without the header
/// passes: 2025-11-25 clients omit it on `initialize`.
pub(crate) fn unsupported_version(headers: &HeaderMap) -> Option<UnsupportedVersion> {
    let values: Vec<&HeaderValue> = headers.get_all("mcp-protocol-version").iter().collect();
    let requested = match values.as_slice() {
        [] => return None,
        [one] => match one.to_str() {
            Ok(v)
                if ProtocolVersion::KNOWN_VERSIONS
                    .iter()
                    .any(|k| k.as_str() == v) =>
            {
                return None;
            }
            Ok(v) => v.to_string(),
            Err(_) => "(not visible ASCII)".to_string(),
        },
        many => many
            .iter()
            .map(|v| v.to_str().unwrap_or("?"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let requested = match requested.chars().count() > QUOTED_VERSION_CHARS {
        true => requested
            .chars()
            .take(QUOTED_VERSION_CHARS)
            .chain(['…'])
            .collect(),
        false => requested,
    };
    Some(UnsupportedVersion {
        requested,
        headers: values.len(),
    })
}

impl UnsupportedVersion {
    /// The 400 (`-32022`) for request `id`, with `data.supported` (newest first) and
    /// `data.requested` (MCP 2026-07-28 §Streamable HTTP, Headers).
    pub(crate) fn response(&self, id: &RawValue) -> Response {
        let supported: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .rev()
            .map(ProtocolVersion::as_str)
            .collect();
        let message = match self.headers {
            1 => format!(
                "Unsupported protocol version {:?} in MCP-Protocol-Version: Taskdeck speaks {}",
                self.requested,
                supported.join(", ")
            ),
            n => format!("Send one MCP-Protocol-Version header, not {n}"),
        };
        error_response(
            StatusCode::BAD_REQUEST,
            id,
            UNSUPPORTED_PROTOCOL_VERSION,
            &message,
            Some(json!({"supported": supported, "requested": self.requested})),
        )
    }
}

/// `resp` from rmcp, unchanged unless it is a refusal (4xx). A text body becomes a JSON-RPC
/// error (`-32600`) with the same status, its message rmcp's text or Taskdeck's explanation
/// (no session, an unknown session, a 405, which also gets `Allow`); a JSON-RPC error without
/// an `id` gets `"id": null`, and rmcp's bare `-32601` message (the method's name) says
/// "Method not found". `sessionless`: the request carried the 2026-07-28 headers (a 405 then
/// allows POST only).
pub(crate) async fn explained(resp: Response, sessionless: bool) -> Response {
    let status = resp.status();
    if !status.is_client_error() {
        return resp;
    }
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    let bytes = axum::body::to_bytes(resp.into_body(), MAX_REFUSAL_BYTES)
        .await
        .unwrap_or_default();
    if is_json && let Ok(Value::Object(mut body)) = serde_json::from_slice(&bytes) {
        body.entry("id").or_insert(Value::Null);
        if let Some(error) = body.get_mut("error").and_then(Value::as_object_mut)
            && error.get("code").and_then(Value::as_i64) == Some(-32601)
            && let Some(Value::String(message)) = error.get_mut("message")
            && !message.starts_with("Method not found")
        {
            *message = format!("Method not found: {message}");
        }
        let body = serde_json::to_vec(&Value::Object(body)).unwrap_or_default();
        return json_response(status, body);
    }
    let text = String::from_utf8_lossy(&bytes).trim().to_string();
    let id = null_id();
    if status == StatusCode::NOT_FOUND && text.ends_with("Session not found") {
        return unknown_session();
    }
    if text.ends_with("Session ID is required") {
        return error_response(status, &id, INVALID_REQUEST, SESSION_REQUIRED, None);
    }
    if status == StatusCode::METHOD_NOT_ALLOWED {
        let (message, allow) = match sessionless {
            true => (SESSIONLESS_METHOD_NOT_ALLOWED, "POST"),
            false => (METHOD_NOT_ALLOWED, "GET, POST, DELETE"),
        };
        let mut resp = error_response(status, &id, INVALID_REQUEST, message, None);
        resp.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static(allow));
        return resp;
    }
    let message = match text.as_str() {
        "" => status
            .canonical_reason()
            .unwrap_or("Request refused")
            .to_string(),
        text => text.to_string(),
    };
    error_response(status, &id, INVALID_REQUEST, &message, None)
}

#[cfg(test)]
mod tests {
    use axum::body::Body;

    use super::*;

    async fn body_of(resp: Response) -> Value {
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn answer(status: StatusCode, json: bool, text: &str) -> Response {
        let mut builder = Response::builder().status(status);
        if json {
            builder = builder.header(header::CONTENT_TYPE, "application/json");
        }
        builder.body(Body::from(text.to_string())).unwrap()
    }

    #[tokio::test]
    async fn refusals_become_json_rpc_errors() {
        let sessionless = explained(answer(StatusCode::METHOD_NOT_ALLOWED, false, ""), true).await;
        assert_eq!(sessionless.headers()[header::ALLOW], "POST");
        let resp = explained(
            answer(StatusCode::METHOD_NOT_ALLOWED, false, "Method Not Allowed"),
            false,
        )
        .await;
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(resp.headers()[header::ALLOW], "GET, POST, DELETE");
        let body = body_of(resp).await;
        assert_eq!(
            (&body["id"], &body["error"]["code"]),
            (&Value::Null, &json!(-32600))
        );

        let no_id = r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"foo/bar"}}"#;
        let body =
            body_of(explained(answer(StatusCode::NOT_FOUND, true, no_id), false).await).await;
        assert_eq!(body["id"], Value::Null);
        assert_eq!(body["error"]["message"], "Method not found: foo/bar");

        let ok = explained(answer(StatusCode::OK, false, "fine"), false).await;
        let bytes = axum::body::to_bytes(ok.into_body(), 64).await.unwrap();
        assert_eq!(&bytes[..], b"fine");
    }

    #[test]
    fn only_known_protocol_versions_pass() {
        let mut headers = HeaderMap::new();
        assert!(unsupported_version(&headers).is_none(), "no header");
        for known in ["2026-07-28", "2025-11-25", "2025-03-26"] {
            headers.insert("mcp-protocol-version", HeaderValue::from_static(known));
            assert!(unsupported_version(&headers).is_none(), "{known}");
        }
        for refused in ["2099-01-01", "", "2026-07-28, 2025-11-25"] {
            headers.insert(
                "mcp-protocol-version",
                HeaderValue::from_str(refused).unwrap(),
            );
            assert!(unsupported_version(&headers).is_some(), "{refused:?}");
        }
        headers.append(
            "mcp-protocol-version",
            HeaderValue::from_static("2026-07-28"),
        );
        assert_eq!(unsupported_version(&headers).map(|u| u.headers), Some(2));
    }
}

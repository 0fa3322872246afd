//! rmcp's refusals as JSON-RPC errors. rmcp's Streamable HTTP service refuses a request it will
//! not read with a bare text body (`Bad Request: Session ID is required`, `Not Found: Session
//! not found`, `Bad Request: Unsupported MCP-Protocol-Version: 2099-01-01`); a client, or a
//! person with curl, gets the same status with a JSON-RPC error body saying what to send
//! instead. The `id` is `null`: the refusal comes before the message is read (JSON-RPC 2.0
//! §5), and an answer about another principal's session must not differ from one about a
//! session that never was.

use axum::{
    http::{StatusCode, header},
    response::Response,
};
use rmcp::model::ProtocolVersion;
use serde_json::json;

use super::responses::{error_response, null_id};
use crate::adapters::wire::{INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION};

/// The explanation of a request of the 2025-11-25 era that names no session (400).
pub(crate) const SESSION_REQUIRED: &str = "Session ID is required: send `initialize` first, then its \
     Mcp-Session-Id header with every request (protocol 2025-11-25); or send \
     `MCP-Protocol-Version: 2026-07-28` and `Mcp-Method` with each request, which needs no session";

/// The explanation of a request naming a session that is not there (404).
const SESSION_NOT_FOUND: &str = "Session not found: it was ended, or expired, or Taskdeck \
     restarted; send `initialize` for a new session (protocol 2025-11-25), or use the 2026-07-28 \
     headers, which need none";

/// Longest refusal body read; rmcp's are one line.
const MAX_REFUSAL_BYTES: usize = 4096;

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

/// `resp` from rmcp, unchanged unless it is a refusal (4xx) with a body that is not JSON: then
/// the same status with a JSON-RPC error (`-32022` with `data.supported` and `data.requested`
/// for an unsupported `MCP-Protocol-Version`, as MCP 2026-07-28 §Streamable HTTP says;
/// `-32600` otherwise), whose message
/// explains the refusal where Taskdeck knows it better than rmcp's text.
pub(crate) async fn explained(resp: Response) -> Response {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !status.is_client_error() || is_json {
        return resp;
    }
    let text = match axum::body::to_bytes(resp.into_body(), MAX_REFUSAL_BYTES).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let id = null_id();
    if status == StatusCode::NOT_FOUND && text.ends_with("Session not found") {
        return unknown_session();
    }
    if text.ends_with("Session ID is required") {
        return error_response(status, &id, INVALID_REQUEST, SESSION_REQUIRED, None);
    }
    if let Some(requested) = text.strip_prefix("Bad Request: Unsupported MCP-Protocol-Version: ") {
        let supported: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .rev()
            .map(ProtocolVersion::as_str)
            .collect();
        return error_response(
            status,
            &id,
            UNSUPPORTED_PROTOCOL_VERSION,
            &format!(
                "Unsupported protocol version {requested:?} in MCP-Protocol-Version: Taskdeck speaks {}",
                supported.join(", ")
            ),
            Some(json!({"supported": supported, "requested": requested})),
        );
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

    async fn body_of(resp: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn bare(status: StatusCode, text: &str) -> Response {
        Response::builder()
            .status(status)
            .body(Body::from(text.to_string()))
            .unwrap()
    }

    #[tokio::test]
    async fn bare_refusals_become_json_rpc_errors() {
        let resp = explained(bare(
            StatusCode::BAD_REQUEST,
            "Bad Request: Unsupported MCP-Protocol-Version: 2099-01-01",
        ))
        .await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let body = body_of(resp).await;
        assert_eq!(body["id"], serde_json::Value::Null);
        assert_eq!(body["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(body["error"]["data"]["requested"], "2099-01-01");
        assert_eq!(body["error"]["data"]["supported"][0], "2026-07-28");

        let resp = explained(bare(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")).await;
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            body_of(resp).await["error"]["message"],
            "Method Not Allowed"
        );

        let ok = explained(bare(StatusCode::OK, "fine")).await;
        let bytes = axum::body::to_bytes(ok.into_body(), 64).await.unwrap();
        assert_eq!(&bytes[..], b"fine");
    }
}

//! The responses the `/mcp` endpoint builds itself: JSON bodies, JSON-RPC errors, SSE streams,
//! and the hand-over to rmcp.

use std::{convert::Infallible, time::Duration};

use axum::{
    body::Body,
    extract::Request,
    http::{StatusCode, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use futures::Stream;
use serde_json::{Value, json, value::RawValue};
use tower::ServiceExt;

use super::McpEndpoint;

/// A JSON response with `body` (bytes of one JSON value).
pub(crate) fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// A JSON-RPC 2.0 error response `{jsonrpc, id, error: {code, message, data?}}` for request `id`
/// (raw JSON, echoed as sent), with HTTP `status`.
pub(crate) fn error_response(
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

/// The JSON-RPC id `null`, for errors about a message whose id cannot be read.
pub(crate) fn null_id() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}

/// An SSE response of `stream`, kept alive every 15 s, unbuffered by proxies.
pub(crate) fn sse(
    stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    let mut resp = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    resp.headers_mut()
        .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    resp
}

/// Hands `req` to rmcp's Streamable HTTP service and returns its answer, a bare-text refusal
/// made a JSON-RPC error ([`super::refusals::explained`]).
pub(crate) async fn forward(endpoint: &McpEndpoint, req: Request) -> Response {
    // Under the 2026-07-28 headers there is no session to stream (GET) or end (DELETE).
    let sessionless = super::request_checks::is_modern(req.headers());
    match endpoint.rmcp.clone().oneshot(req).await {
        Ok(resp) => super::refusals::explained(resp.map(Body::new), sessionless).await,
        Err(never) => match never {},
    }
}

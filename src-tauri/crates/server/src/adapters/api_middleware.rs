//! The middlewares in front of every `/v1` route: a request body is read (and a too large one
//! refused with 413) before any handler runs, and axum's bare 405 becomes a problem document.
//! Both answer in the shape of every other `/v1` error ([`ApiError`]).

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

use super::api_error::ApiError;

/// Axum middleware: the bare `405` axum's router answers for a method a `/v1` path does not
/// take becomes a problem document like every other `/v1` error (its `Allow` header kept).
pub async fn problem_for_405(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let v1 = req.uri().path().starts_with("/v1");
    let resp = next.run(req).await;
    if !v1
        || resp.status() != StatusCode::METHOD_NOT_ALLOWED
        || resp.headers().contains_key(header::CONTENT_TYPE)
    {
        return resp;
    }
    let allow = resp.headers().get(header::ALLOW).cloned();
    let detail = match allow.as_ref().and_then(|a| a.to_str().ok()) {
        Some(methods) if !methods.is_empty() => format!("this path takes only {methods}"),
        _ => {
            "this path does not take this method (its Allow header lists the ones it takes)".into()
        }
    };
    ApiError {
        allow,
        ..ApiError::new(StatusCode::METHOD_NOT_ALLOWED, detail)
    }
    .into_response()
}

/// The largest request body a `/v1` route takes, in bytes: 4 MiB, as on `/mcp`. What agents
/// and runners store is capped far lower by the engine (`engine::limits`); this bounds what a
/// request can make the server read.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How much of a too large body [`limit_body`] reads (and drops) before it answers 413, in
/// bytes: a client that is still sending when the answer comes and the connection closes gets
/// a broken pipe instead of the answer.
const DRAINED_BYTES: u64 = 64 * 1024 * 1024;

/// Why a request body was not taken ([`read_body`]).
pub enum BodyRefused {
    /// Over the limit (413).
    TooLarge,
    /// The client went away mid-body (400), with the reason.
    Unreadable(String),
}

/// Reads `req`'s body, up to `max` bytes. A larger one is refused: at once when its
/// `Content-Length` is over [`DRAINED_BYTES`] or the client waits for `100 Continue` (it sends
/// nothing before), otherwise after the rest of it (up to [`DRAINED_BYTES`]) was read and
/// dropped, so that the client reads the answer rather than a broken pipe.
pub async fn read_body(
    req: axum::extract::Request,
    max: usize,
) -> Result<(http::request::Parts, bytes::Bytes), BodyRefused> {
    let max = max as u64;
    use http_body_util::BodyExt;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let waits_for_continue = req
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if declared.is_some_and(|n| n > DRAINED_BYTES || (waits_for_continue && n > max)) {
        return Err(BodyRefused::TooLarge);
    }
    let (parts, mut body) = req.into_parts();
    // A body that comes in one frame (most requests) is kept as it came, not copied.
    let mut first: Option<bytes::Bytes> = None;
    let mut kept = bytes::BytesMut::new();
    let mut read: u64 = 0;
    while let Some(frame) = body.frame().await {
        let data = match frame.map(|f| f.into_data()) {
            Ok(Ok(data)) => data,
            Ok(Err(_trailers)) => continue,
            Err(e) => return Err(BodyRefused::Unreadable(e.to_string())),
        };
        read += data.len() as u64;
        if read > max {
            if read > DRAINED_BYTES {
                break;
            }
            continue;
        }
        match first.take() {
            None if kept.is_empty() => first = Some(data),
            earlier => {
                if kept.is_empty() {
                    kept.reserve(declared.unwrap_or(0).min(max) as usize);
                }
                if let Some(earlier) = earlier {
                    kept.extend_from_slice(&earlier);
                }
                kept.extend_from_slice(&data);
            }
        }
    }
    if read > max {
        return Err(BodyRefused::TooLarge);
    }
    Ok((parts, first.unwrap_or_else(|| kept.freeze())))
}

/// Axum middleware for the `/v1` routes: reads the request body ([`read_body`]) before any
/// handler runs. A larger one is answered `413` with a problem document, whatever the route; a
/// body that cannot be read (the client went away mid-body) is a `400` one.
pub async fn limit_body(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let (parts, body) = match read_body(req, MAX_BODY_BYTES).await {
        Ok(read) => read,
        Err(BodyRefused::TooLarge) => {
            return ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body is larger than {} MiB, the most a /v1 route takes",
                    MAX_BODY_BYTES / (1024 * 1024)
                ),
            )
            .into_response();
        }
        Err(BodyRefused::Unreadable(e)) => {
            return ApiError::bad_request(format!("cannot read the request body: {e}"))
                .into_response();
        }
    };
    next.run(axum::extract::Request::from_parts(parts, body.into()))
        .await
}

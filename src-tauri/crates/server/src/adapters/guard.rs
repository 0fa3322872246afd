//! The guard in front of every route: DNS-rebinding protection (the `Host` must be a loopback
//! name, a present `Origin` must be this server's own origin: else 403) and authentication
//! (`Authorization: Bearer <token>`: else 401). The authenticated [`Principal`] is put into the
//! request's extensions for the handlers. A streaming answer (`text/event-stream`: `/v1/events`
//! and MCP notification streams) ends once its token is revoked, checked every
//! [`Authenticator::RECHECK_MS`]: revocation cuts an agent off from what it was already watching.
//! The admin token cannot be revoked, so its streams are not checked.
//!
//! MCP Streamable HTTP (2025-11-25 and 2026-07-28 §Security Warning) requires the Origin check;
//! the errors on `/mcp` are JSON-RPC error objects, on `/v1` RFC 9457 problem documents.
//! A request with two `Host` or two `Origin` headers is refused (hyper hands both on, and a check
//! of the first one alone would let the second one through to whatever reads it).

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use futures::StreamExt as _;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::auth::{ANONYMOUS, Authenticator};
use taskdeck_engine::Principal;

/// Guard settings.
pub struct Guard {
    /// Checks bearer tokens and names their principals.
    pub authenticator: Authenticator,
    /// The port the server listens on (part of the only allowed origins).
    pub port: u16,
    /// Let requests without a token act as principal `anonymous` (local test runs only).
    pub allow_anonymous: bool,
    /// Cancelled when the server stops: every open event stream ends then, so the graceful
    /// shutdown does not wait on streams that never end by themselves (the window's own
    /// `/v1/events`, agents' `subscriptions/listen`).
    pub stopping: CancellationToken,
}

/// The only origins a page may call Taskdeck from: its own, under each loopback name
/// (`http://127.0.0.1:PORT`, `http://localhost:PORT`, `http://[::1]:PORT`), lowercase and
/// without a trailing slash. The guard and rmcp's own Origin check (`serve.rs`) use
/// this one list.
pub fn loopback_origins(port: u16) -> [String; 3] {
    [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ]
}

/// The value of header `name` when the request carries it at most once: `Ok(None)` without it,
/// `Err(())` when it appears more than once.
fn single(headers: &HeaderMap, name: header::HeaderName) -> Result<Option<&HeaderValue>, ()> {
    let mut values = headers.get_all(name).into_iter();
    match (values.next(), values.next()) {
        (first, None) => Ok(first),
        _ => Err(()),
    }
}

impl Guard {
    fn host_allowed(&self, host: Option<&HeaderValue>) -> bool {
        let Some(host) = host.and_then(|h| h.to_str().ok()) else {
            return false;
        };
        let name = match host.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(""),
            None => host.rsplit_once(':').map_or(host, |(n, _)| n),
        };
        matches!(
            name.to_ascii_lowercase().as_str(),
            "127.0.0.1" | "localhost" | "::1"
        )
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        loopback_origins(self.port).contains(&origin)
    }

    /// The principal for these headers (`None` when `needs_auth` is false), or the rejection to
    /// send: 403 when `Host` is missing, sent twice or not a loopback name, or when `Origin` is
    /// sent twice or is not one of [`loopback_origins`]; 401 when a needed token is missing,
    /// unknown or revoked.
    pub fn check(
        &self,
        headers: &HeaderMap,
        needs_auth: bool,
    ) -> Result<Option<Principal>, (StatusCode, &'static str)> {
        let Ok(host) = single(headers, header::HOST) else {
            return Err((
                StatusCode::FORBIDDEN,
                "Forbidden: more than one Host header",
            ));
        };
        if !self.host_allowed(host) {
            return Err((
                StatusCode::FORBIDDEN,
                "Forbidden: Host header is not a loopback name",
            ));
        }
        let Ok(origin) = single(headers, header::ORIGIN) else {
            return Err((
                StatusCode::FORBIDDEN,
                "Forbidden: more than one Origin header",
            ));
        };
        if let Some(origin) = origin {
            let ok = origin.to_str().is_ok_and(|o| self.origin_allowed(o));
            if !ok {
                return Err((StatusCode::FORBIDDEN, "Forbidden: Origin not allowed"));
            }
        }
        if !needs_auth {
            return Ok(None);
        }
        // Two credentials: neither is taken (a proxy's added header must not decide which).
        let Ok(authorization) = single(headers, header::AUTHORIZATION) else {
            return Err((
                StatusCode::UNAUTHORIZED,
                "Unauthorized: more than one Authorization header",
            ));
        };
        match authorization.map(bearer_of) {
            Some("") => Err((
                StatusCode::UNAUTHORIZED,
                "Unauthorized: the Authorization header is not Bearer <token>",
            )),
            Some(token) => self.authenticator.authenticate(token).map(Some).ok_or((
                StatusCode::UNAUTHORIZED,
                "Unauthorized: invalid or revoked token",
            )),
            None if self.allow_anonymous => Ok(Some(Principal::named(ANONYMOUS))),
            None => Err((
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send Authorization: Bearer <token>",
            )),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` value ("" when it is not one).
fn bearer_of(value: &HeaderValue) -> &str {
    let value = value.to_str().unwrap_or("");
    value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or("")
        .trim()
}

/// Axum middleware applying [`Guard::check`]. `/mcp` and `/v1` need a principal; the UI's
/// static assets only pass the Host/Origin checks. Event streams opened with a token end when
/// it is revoked or the server stops ([`end_when_revoked_or_stopping`]).
pub async fn guard(State(g): State<Arc<Guard>>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let needs_auth = path == "/mcp" || path.starts_with("/mcp/") || path.starts_with("/v1");
    match g.check(req.headers(), needs_auth) {
        Ok(principal) => {
            // Kept (a cheap clone of the header) for the rare response that is an event stream
            // whose token can be revoked: every token but the admin's (`revoke_token` refuses
            // it, and only a start replaces it), so the admin's streams (the UI's) wait on no
            // timer while nothing happens.
            let authorization = principal
                .as_ref()
                .filter(|p| !p.is_admin())
                .and_then(|_| req.headers().get(header::AUTHORIZATION).cloned());
            if let Some(p) = principal {
                req.extensions_mut().insert(p);
            }
            let resp = next.run(req).await;
            if !is_event_stream(&resp) && resp.extensions().get::<EndsWhenRevoked>().is_none() {
                return resp;
            }
            let token = authorization.map(|value| bearer_of(&value).to_owned());
            // A hook's wait answers a stop itself ("no decision"): only a revocation ends it.
            let at_stop = resp.extensions().get::<EndsWhenRevoked>().is_none();
            end_when_revoked_or_stopping(resp, g, token, at_stop)
        }
        Err((status, message)) => rejection(req.uri().path(), status, message),
    }
}

/// Marks a response (in its extensions) that streams like an event stream without being one:
/// a waiting hook's answer. It ends too when its token is revoked, so a revoked agent's hook
/// gets no decision taken after the revocation.
#[derive(Clone, Copy, Debug)]
pub struct EndsWhenRevoked;

fn is_event_stream(resp: &Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Ends `resp`'s body (a clean end of the stream) when the server stops (if `at_stop`), or at
/// the first check, every [`Authenticator::RECHECK_MS`], that finds `token` revoked (the
/// client's reconnect then gets 401). A stream given no `token` (opened without one, or with
/// the admin token, which cannot be revoked) ends only when the server stops, and wakes no one
/// until then.
fn end_when_revoked_or_stopping(
    resp: Response,
    g: Arc<Guard>,
    token: Option<String>,
    at_stop: bool,
) -> Response {
    let period = std::time::Duration::from_millis(Authenticator::RECHECK_MS as u64);
    let stopping = g.stopping.clone();
    let stopping = async move {
        match at_stop {
            true => stopping.cancelled_owned().await,
            false => std::future::pending().await,
        }
    };
    let revoked = async move {
        let Some(token) = token else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(period).await;
            if g.authenticator.is_revoked(&token) {
                tracing::info!("an event stream ended: its token was revoked");
                return;
            }
        }
    };
    let end = async move {
        tokio::select! {
            _ = stopping => {}
            _ = revoked => {}
        }
    };
    let (parts, body) = resp.into_parts();
    let body = axum::body::Body::from_stream(body.into_data_stream().take_until(end));
    Response::from_parts(parts, body)
}

/// A 401/403 in the shape the route speaks: JSON-RPC on `/mcp`, problem+json elsewhere.
fn rejection(path: &str, status: StatusCode, message: &str) -> Response {
    let mut resp = if path.starts_with("/mcp") {
        let code = if status == StatusCode::UNAUTHORIZED {
            -32001
        } else {
            -32600
        };
        (
            status,
            axum::Json(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
            ),
        )
            .into_response()
    } else {
        super::http_api::problem(status, message)
    };
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"taskdeck\""),
        );
    }
    resp
}

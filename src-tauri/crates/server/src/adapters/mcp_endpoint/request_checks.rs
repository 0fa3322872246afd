//! The checks rmcp applies to a 2026-07-28 request before dispatch, repeated in rmcp's order by
//! the dedicated paths so that both paths answer alike (`tests/integration/security.rs`):
//! `Accept` (406), `Content-Type` (415), `MCP-Protocol-Version` (400, `-32022`), `Mcp-Method`
//! and `Mcp-Name` against the body (400, `-32020`, SEP-2243), `_meta.protocolVersion` (400,
//! `-32020`/`-32602`), `_meta.clientCapabilities` (400, `-32602`) and the tasks extension
//! (400, `-32021`, SEP-2663 §Capability Negotiation). Also the request's `_meta` as the checks
//! and `agent_view` read it, and the session and era a request's headers name.

use std::{borrow::Cow, collections::HashMap};

use axum::{
    http::{HeaderMap, StatusCode, header},
    response::Response,
};
use serde::{Deserialize, de::IgnoredAny};
use serde_json::{Value, json, value::RawValue};

use super::responses::{error_response, null_id};
use crate::adapters::{
    agent_view::{self, Reader},
    wire::{
        self, HEADER_MISMATCH, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, MODERN_PROTOCOL,
        TASKS_EXTENSION,
    },
};
use taskdeck_engine::Principal;

/// The parts of a request's `_meta` the checks read, borrowed from the body.
#[derive(Deserialize, Default)]
pub(crate) struct MetaView<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", borrow, default)]
    pub protocol_version: Option<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", borrow, default)]
    pub client_capabilities: Option<CapabilitiesView<'a>>,
}

/// The parts of `_meta.clientCapabilities` the checks read.
#[derive(Deserialize)]
pub(crate) struct CapabilitiesView<'a> {
    #[serde(borrow, default)]
    extensions: Option<HashMap<Cow<'a, str>, IgnoredAny>>,
    #[serde(default)]
    elicitation: Option<Value>,
}

impl MetaView<'_> {
    /// True when `clientCapabilities.extensions` names the tasks extension (SEP-2663).
    pub fn declares_tasks(&self) -> bool {
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
            human: principal.is_human(),
        }
    }
}

/// A request's `params._meta`, as far as it could be read.
pub(crate) enum RequestMeta<'a> {
    /// No `_meta` member.
    Absent,
    /// A `_meta` whose checked members have the expected types.
    Given(MetaView<'a>),
    /// A `_meta` that is not an object, or whose checked members have other types (e.g.
    /// `clientCapabilities` not an object).
    Malformed,
}

impl<'a> RequestMeta<'a> {
    /// Reads `_meta` from its raw JSON (`None`: absent).
    pub fn parse(raw: Option<&'a RawValue>) -> RequestMeta<'a> {
        match raw.map(|r| serde_json::from_str(r.get())) {
            None => RequestMeta::Absent,
            Some(Ok(view)) => RequestMeta::Given(view),
            Some(Err(_)) => RequestMeta::Malformed,
        }
    }

    fn view(&self) -> Option<&MetaView<'a>> {
        match self {
            RequestMeta::Given(view) => Some(view),
            RequestMeta::Absent | RequestMeta::Malformed => None,
        }
    }

    /// Who reads tasks through this request (`agent_view`); without a usable `_meta`, a client
    /// that declared nothing.
    pub fn reader(&self, principal: &Principal) -> Reader {
        match self.view() {
            Some(view) => view.reader(principal),
            None => Reader {
                can_elicit: false,
                human: principal.is_human(),
            },
        }
    }
}

/// What the response to a checked request is, hence what `Accept` must list: rmcp requires
/// `text/event-stream` always, and `application/json` too for a request answered with JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AnswerMedia {
    /// One JSON message (`tasks/get`, `tools/call`).
    Json,
    /// A Server-Sent Events stream (`subscriptions/listen`).
    EventStream,
}

/// What a 2026-07-28 request must be, for [`check_request`].
pub(crate) struct ExpectedRequest<'r> {
    /// The body's method; `Mcp-Method` must carry it.
    pub method: &'r str,
    /// The value `Mcp-Name` must carry (SEP-2243: the tool name or task id); `None` when the
    /// method has no such value and the header is not checked.
    pub name: Option<&'r str>,
    pub answer: AnswerMedia,
    /// The request needs the tasks extension declared in its `_meta` (else `-32021`).
    pub needs_tasks: bool,
}

/// Applies rmcp's checks to a 2026-07-28 request, in rmcp's order (see the module doc). `Err`
/// is the rejection to send; the JSON-RPC errors echo `id`.
#[allow(clippy::result_large_err)] // the `Err` is the rejection to send
pub(crate) fn check_request(
    headers: &HeaderMap,
    id: &RawValue,
    expected: ExpectedRequest<'_>,
    meta: &RequestMeta<'_>,
) -> Result<(), Response> {
    let ExpectedRequest {
        method,
        name,
        answer,
        needs_tasks,
    } = expected;
    check_media(headers, answer)?;
    let header_version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if header_version != MODERN_PROTOCOL {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            id,
            wire::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(json!({"supported": [MODERN_PROTOCOL], "requested": header_version})),
        ));
    }
    let mismatch = |message: String| {
        Err(error_response(
            StatusCode::BAD_REQUEST,
            id,
            HEADER_MISMATCH,
            &message,
            None,
        ))
    };
    match single_header(headers, "mcp-method") {
        Some(m) if m.trim() == method => {}
        Some(m) => {
            return mismatch(format!(
                "Mcp-Method header `{m}` does not match body method `{method}`"
            ));
        }
        None => return mismatch(format!("missing required Mcp-Method header for `{method}`")),
    }
    if let Some(expected) = name {
        match single_header(headers, "mcp-name") {
            Some(n) if decode_header_value(n.trim()).as_deref() == Some(expected) => {}
            Some(n) => {
                return mismatch(format!(
                    "Mcp-Name header `{n}` does not match body value `{expected}`"
                ));
            }
            None => return mismatch(format!("missing required Mcp-Name header for `{method}`")),
        }
    }
    let view = meta.view();
    match view.and_then(|m| m.protocol_version.as_deref()) {
        Some(v) if v == header_version => {}
        Some(v) => {
            return mismatch(format!(
                "MCP-Protocol-Version header ({header_version}) does not match request _meta protocolVersion ({v})"
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
    let has_capabilities = view.is_some_and(|m| m.client_capabilities.is_some());
    if matches!(meta, RequestMeta::Malformed) || !has_capabilities {
        return Err(error_response(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_PARAMS,
            "request _meta is missing or has malformed required fields: io.modelcontextprotocol/clientCapabilities",
            None,
        ));
    }
    if needs_tasks && !view.is_some_and(MetaView::declares_tasks) {
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

/// rmcp's first checks of any POST: `Accept` must list `text/event-stream`, and
/// `application/json` too for a request answered with JSON (else 406); `Content-Type` must be
/// `application/json` (else 415). `Err` is the rejection to send: rmcp's text as a JSON-RPC
/// error (`-32600`, id `null`), as [`super::refusals::explained`] makes rmcp's own.
#[allow(clippy::result_large_err)] // the `Err` is the rejection to send
pub(crate) fn check_media(headers: &HeaderMap, answer: AnswerMedia) -> Result<(), Response> {
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
    if (answer == AnswerMedia::Json && !accepts("application/json"))
        || !accepts("text/event-stream")
    {
        return Err(error_response(
            StatusCode::NOT_ACCEPTABLE,
            &null_id(),
            wire::INVALID_REQUEST,
            "Not Acceptable: Client must accept both application/json and text/event-stream",
            None,
        ));
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
        return Err(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &null_id(),
            wire::INVALID_REQUEST,
            "Unsupported Media Type: Content-Type must be application/json",
            None,
        ));
    }
    Ok(())
}

/// The one value of header `name`: `None` when absent, `"\0"` (matching nothing) when repeated
/// or not visible ASCII.
fn single_header(headers: &HeaderMap, name: &str) -> Option<String> {
    let mut values = headers.get_all(name).iter();
    let first = values
        .next()
        .map(|v| v.to_str().unwrap_or("\u{0}").to_string());
    if values.next().is_some() {
        Some("\u{0}".to_string())
    } else {
        first
    }
}

/// Decodes an `=?base64?...?=` header value (SEP-2243); plain values pass through. `None` when
/// the base64 or its UTF-8 is invalid.
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

/// The one `Mcp-Session-Id` of a request or response (`None` without one, or with two).
pub(crate) fn session_header(headers: &HeaderMap) -> Option<String> {
    let mut values = headers.get_all("mcp-session-id").iter();
    let first = values.next()?.to_str().ok()?.to_string();
    values.next().is_none().then_some(first)
}

/// True when `MCP-Protocol-Version` names 2026-07-28 or later: a sessionless request of the
/// era with the tasks extension, not one of a 2025-11-25 session.
pub(crate) fn is_modern(headers: &HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v >= MODERN_PROTOCOL)
}

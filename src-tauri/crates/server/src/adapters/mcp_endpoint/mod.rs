//! The `/mcp` endpoint: every POST, GET and DELETE on `/mcp` arrives here ([`routing::handle`])
//! and is either answered on a dedicated, fully validated path or passed unchanged to rmcp's
//! Streamable HTTP service. Dedicated paths exist where rmcp's generic path is too slow or
//! does not know the request:
//!
//! - [`tasks_get`]: `tasks/get`, the call agents repeat most. Parsing it into rmcp's request
//!   enum and running it through the session machinery costs several times the work of the
//!   lookup itself; this path applies the same checks in the same order ([`request_checks`])
//!   and returns the same JSON. `tests/integration/security.rs` compares both paths.
//! - [`create`]: `tools/call` of a task tool from a client that declared the tasks extension:
//!   the durable create and its `CreateTaskResult` (SEP-2663 §Task Creation).
//! - [`listen`]: `subscriptions/listen` with `notifications.taskIds` (SEP-2663 §Task Status
//!   Notifications), which rmcp's subscription filter does not have.
//! - [`initialize`]: a 2025-11-25 `initialize`, whose answer is rewritten to advertise the
//!   2025-11-25 task capabilities; that era's task requests are served by `mcp_legacy`.
//! - [`envelope`]: JSON-RPC envelope checks that give the JSON-RPC error rmcp would answer with
//!   a bare `415`.
//! - [`refusals`]: rmcp's other refusals (no session, an unknown session, an unsupported
//!   protocol version) as JSON-RPC errors that say what to send.

pub mod create;
pub mod envelope;
pub mod initialize;
pub mod listen;
pub mod refusals;
pub mod request_checks;
pub mod responses;
pub mod routing;
pub mod tasks_get;

use std::sync::Arc;

use rmcp::transport::streamable_http_server::{
    StreamableHttpService, session::local::LocalSessionManager,
};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::mcp::{McpCore, McpHandler};
use taskdeck_engine::Engine;

pub use routing::{handle, handle_upstream};

/// rmcp's Streamable HTTP service, which answers everything without a dedicated path.
pub type RmcpService = StreamableHttpService<McpHandler, LocalSessionManager>;

/// Where 2026-07-28 `tasks/get` and task-creating `tools/call` are answered. Both choices give
/// the same answers; [`TaskRouting::Rmcp`] exists to measure and compare rmcp's generic path
/// (`taskdeck serve --no-fast-path`). `subscriptions/listen` with `taskIds` and the 2025-11-25
/// task requests have no rmcp counterpart and stay on their dedicated paths either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskRouting {
    /// On the dedicated paths ([`tasks_get`], [`create`]).
    #[default]
    Dedicated,
    /// Through rmcp's Streamable HTTP service and `McpHandler`.
    Rmcp,
}

/// Shared state of the `/mcp` endpoint.
pub struct McpEndpoint {
    /// The engine the tasks live in.
    pub engine: Engine,
    /// Tool schemas, fixtures switch and 2025-11-25 sessions, shared with the rmcp handler.
    pub core: Arc<McpCore>,
    /// Answers every request without a dedicated path.
    pub rmcp: RmcpService,
    /// rmcp's sessions, to tell whether a 2025-11-25 session still exists.
    pub sessions: Arc<LocalSessionManager>,
    /// Where 2026-07-28 `tasks/get` and task creation are answered.
    pub task_routing: TaskRouting,
    /// Largest accepted request body, in bytes (larger: HTTP 413 with `-32600`).
    pub max_body_bytes: usize,
}

/// The routing-relevant members of a JSON-RPC request, borrowed from its body without parsing
/// `params`. A body that is not an object, or whose members have other types, does not parse.
#[derive(Deserialize)]
pub(crate) struct RequestHead<'a> {
    #[serde(borrow)]
    pub jsonrpc: Option<&'a str>,
    #[serde(borrow)]
    pub method: Option<&'a str>,
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub params: Option<&'a RawValue>,
}

impl RequestHead<'_> {
    /// True when the envelope is that of a JSON-RPC 2.0 request as [`envelope`] requires it:
    /// `jsonrpc: "2.0"`, an id that is a string or an integer within `i64` (MCP: never null),
    /// params absent or an object. Only such a request may take a dedicated path; any other
    /// goes through the [`envelope`] checks and gets their `-32600`.
    pub fn is_request(&self) -> bool {
        let id_ok = self.id.is_some_and(|id| {
            let raw = id.get();
            raw.starts_with('"') || raw.parse::<i64>().is_ok()
        });
        let params_ok = self.params.is_none_or(|p| p.get().starts_with('{'));
        self.jsonrpc == Some("2.0") && id_ok && params_ok
    }
}

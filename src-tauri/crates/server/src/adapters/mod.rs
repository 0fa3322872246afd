//! Adapters: translate the outside world into engine calls and back. They decide nothing about
//! tasks; they authenticate, validate wire shapes and map engine errors to wire codes.
//!
//! - [`auth`]: bearer tokens of named principals (stored hashed) and the admin token file.
//! - [`guard`]: Host/Origin validation (403) and authentication (401) for every route.
//! - [`mcp`]: the MCP endpoint (rmcp `ServerHandler`, Streamable HTTP at `/mcp`).
//! - [`mcp_endpoint`]: the `/mcp` endpoint: routes each request to a dedicated path (2026-07-28
//!   `tasks/get`, task creation, `subscriptions/listen` for `notifications/tasks`; the
//!   2025-11-25 task path, [`mcp_legacy`]) or to rmcp.
//! - [`mcp_sessions`]: 2025-11-25 sessions: their principal, capabilities and notifications.
//! - [`agent_view`]: what a client is shown of a task waiting for input (only what it can answer).
//! - [`wire`], [`legacy_wire`]: the task shapes of 2026-07-28 (SEP-2663) and 2025-11-25.
//! - [`http_api`]: the `/v1` JSON API's task routes and the router of the engine's routes;
//!   [`events_api`]: the `/v1/events` Server-Sent Events stream ([`sse_batch`] batches busy streams); [`agents_api`]: agent and human tokens.
//! - [`api_types`], [`api_error`]: the typed `/v1` bodies and the problem-document errors;
//!   [`abridged`]: a task's large members cut for lists and the event stream;
//!   [`api_middleware`]: the body limit (413) and 405 problem documents; [`api_doc`]: the
//!   OpenAPI document generated from the handlers.
//! - [`jobs_api`]: `/v1/jobs` (202 + Location + Retry-After) and external jobs' reports, whose
//!   results [`call_tool_result`] checks.
//! - [`hosted_api`], [`hosted_wire`]: `/v1/hosted-tasks`, tasks another program runs and keeps
//!   here (tower-mcp's remote `TaskStore`), and their bodies.
//! - [`idempotency_key`]: the `Idempotency-Key` header that makes `POST /v1/jobs` safe to retry.
//! - [`logs_api`]: `/v1/tasks/{taskId}/log`, byte ranges of a command task's output log.
//! - [`page_cursor`]: the opaque, bound `nextCursor` of `GET /v1/tasks`.
//! - [`servers_api`]: `/v1/servers`, the gateway's upstream servers (read by the admin and humans, changed by the admin).
//! - [`hooks_api`]: `/v1/hooks/{agent}`, Claude Code's and Codex's hook events ([`crate::hooks`]).
//! - [`audit_api`]: `/v1/audit`, the audit log of approval decisions: pages, JSON Lines and
//!   CSV exports, verification (admin only).

pub mod abridged;
pub mod agent_view;
pub mod agents_api;
pub mod api_doc;
pub mod api_error;
pub mod api_middleware;
pub mod api_types;
pub mod approvals_api;
pub mod audit_api;
pub mod auth;
pub mod call_tool_result;
pub mod events_api;
pub mod followup_tools;
pub mod guard;
pub mod hooks_api;
pub mod hosted_api;
pub mod hosted_wire;
pub mod http_api;
pub mod idempotency_key;
pub mod job_schemas;
pub mod jobs_api;
pub mod legacy_wire;
pub mod logs_api;
pub mod mcp;
pub mod mcp_config;
pub mod mcp_endpoint;
pub mod mcp_fixtures;
pub mod mcp_legacy;
pub mod mcp_sessions;
pub mod notices;
pub mod page_cursor;
pub mod policy_api;
pub mod servers_api;
pub mod settle;
pub mod sse_batch;
pub mod task_actions_api;
pub mod task_title;
pub mod task_watch;
pub mod tray_model;
pub mod ui_assets;
pub mod wire;

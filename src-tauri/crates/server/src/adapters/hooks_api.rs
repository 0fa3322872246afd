//! `POST /v1/hooks/{agent}` (`claude-code`, `codex`): the events `taskdeck hook` forwards from
//! a coding agent's command hooks, as the agent wrote them (Codex's `notify` payload too). The
//! answer is the JSON the hook prints on stdout ([`crate::hooks::output`]; `{}` = no
//! decision), 200 `application/json`.
//!
//! When the policy asks the human (a `PermissionRequest`), the answer's headers and a first
//! newline go out at once, a newline follows every [`HEARTBEAT`] while the human has not
//! answered, and the decision ends the body: the body, trimmed, is still the JSON to print.
//! The newlines are how a dropped hook is noticed (the agent killed it at its timeout): once
//! one cannot be written, the approval task is cancelled, so no dead question stays in the
//! inbox. When Taskdeck stops, a waiting hook is answered `{}` at once (no decision: the agent
//! shows its own prompt) rather than holding the stop up.

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    Extension, Json, Router,
    body::{Body, Bytes},
    extract::{State, rejection::JsonRejection},
    http::header,
    response::{IntoResponse, Response},
};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::api_error::{ApiError, ApiPath, ProblemDocument, TOO_LARGE_REASON, json_body};
use crate::hooks::{
    Agent, Hooks,
    dispatch::{HookReply, hook_output},
    output,
    own_server::AgentEnv,
};
use taskdeck_engine::{Principal, limits};

/// The request header in which `taskdeck hook claude-code` says where Claude Code's
/// `.claude.json` is (`$CLAUDE_CONFIG_DIR/.claude.json`, else `$HOME/.claude.json`, in Claude's
/// environment): which of Claude's MCP servers are this Taskdeck ([`crate::hooks::own_server`]).
pub const CLAUDE_CONFIG_HEADER: &str = "taskdeck-claude-config";

/// The request header in which `taskdeck hook claude-code` gives Claude Code's
/// `$CLAUDE_PROJECT_DIR`, the directory Claude was started in: whose project servers it uses
/// ([`crate::hooks::own_server`]).
pub const CLAUDE_PROJECT_HEADER: &str = "taskdeck-claude-project";

/// The request header in which `taskdeck hook codex` gives Codex's configuration dir
/// (`$CODEX_HOME`, else `~/.codex`, in Codex's environment): which of its MCP servers are this
/// Taskdeck ([`crate::hooks::codex_servers`]).
pub const CODEX_HOME_HEADER: &str = "taskdeck-codex-home";

/// The request header in which the hook says when it stops waiting for its first answer (Unix
/// ms): a decision Taskdeck takes later (it was paused, or slow) never reached the agent, and
/// the audit log says so rather than record it as taken.
pub const ANSWER_BY_HEADER: &str = "taskdeck-hook-answer-by";

/// A path header's value: UTF-8 bytes, as the hook sends them (a header value may carry
/// bytes over 0x7F); `None` unless absolute.
fn path_header(headers: &axum::http::HeaderMap, name: &str) -> Option<std::path::PathBuf> {
    let bytes = headers.get(name)?.as_bytes();
    let path = std::path::PathBuf::from(std::str::from_utf8(bytes).ok()?);
    path.is_absolute().then_some(path)
}

/// How often a waiting hook's answer gets a newline.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// The `/v1/hooks` routes with their OpenAPI operation.
pub fn routes() -> OpenApiRouter<Arc<Hooks>> {
    OpenApiRouter::new().routes(routes!(post_hook))
}

/// The `/v1/hooks` router.
pub fn router(hooks: Arc<Hooks>) -> Router {
    routes().split_for_parts().0.with_state(hooks)
}

/// `POST /v1/hooks/{agent}`.
#[utoipa::path(post, path = "/v1/hooks/{agent}", tag = "hooks",
    params(("agent" = String, Path, description = "`claude-code` or `codex`"),
           ("taskdeck-claude-config" = Option<String>, Header, description = "where the hook found Claude Code's `.claude.json` (an absolute path, UTF-8)"),
           ("taskdeck-claude-project" = Option<String>, Header, description = "Claude Code's `$CLAUDE_PROJECT_DIR`, where it was started (an absolute path, UTF-8)"),
           ("taskdeck-codex-home" = Option<String>, Header, description = "Codex's configuration dir, `$CODEX_HOME` or `~/.codex` (an absolute path, UTF-8)"),
           ("taskdeck-hook-answer-by" = Option<i64>, Header, description = "when the hook stops waiting for its first answer (Unix ms): a decision taken later never reached the agent, and the audit log records it as `abandoned`")),
    request_body(content = Object, description = "the event exactly as the agent gave it to its hook (Claude Code or Codex hook input, or Codex's `notify` payload)", content_type = "application/json"),
    responses((status = 200, description = "what the hook prints (`{}`: no decision); after leading newlines when the human is asked", body = Object),
              (status = 400, description = "the body is not a JSON object", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "no such agent", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 415, description = "the body is not sent as JSON (`Content-Type: application/json`)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "a tool event without `tool_name`; a permission request whose call is over 256 KiB as JSON (`reason: too_large`)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn post_hook(
    State(hooks): State<Arc<Hooks>>,
    Extension(principal): Extension<Principal>,
    ApiPath(agent): ApiPath<String>,
    headers: axum::http::HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let agent = Agent::from_name(&agent).ok_or_else(|| {
        ApiError::not_found(format!("no hooks for {agent:?} (claude-code or codex)"))
    })?;
    // JSON only: a body a web page may send across origins without asking first
    // (`text/plain`, a form) is never read as a hook's event.
    let raw = json_body(body, "the hook's input, a JSON object")?;
    if !raw.is_object() {
        return Err(ApiError::bad_request(
            "the body must be the hook's input, a JSON object",
        ));
    }
    // What the hook found in the agent's own environment: where Claude Code's `.claude.json`
    // is (`$CLAUDE_CONFIG_DIR` or its home) and where Claude was started, or Codex's
    // configuration dir; absolute paths, else this process's view is used.
    let env = AgentEnv {
        claude_config: path_header(&headers, CLAUDE_CONFIG_HEADER),
        claude_project_dir: path_header(&headers, CLAUDE_PROJECT_HEADER),
        codex_home: path_header(&headers, CODEX_HOME_HEADER),
    };
    let answer_by = headers
        .get(ANSWER_BY_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    // Reading the event and matching the policy reads every string of the call, which for a
    // call of megabytes is milliseconds of CPU per rule: done on a blocking thread, so that no
    // runtime thread waits on it while other requests do.
    let judged = {
        let (hooks, principal, runtime) = (
            hooks.clone(),
            principal.clone(),
            tokio::runtime::Handle::current(),
        );
        tokio::task::spawn_blocking(move || {
            runtime.block_on(hooks.handle(&principal, agent, &raw, &env, answer_by))
        })
        .await
        .map_err(|e| ApiError::internal(format!("the hook's event could not be judged: {e}")))?
    };
    match judged {
        Ok(HookReply::Now(out)) => Ok(Json(out).into_response()),
        Ok(HookReply::Ask(arguments)) => {
            // A call too large to keep cannot be asked: refused before the answer starts, so
            // the hook can say why (and the agent asks the person itself).
            let size = serde_json::to_vec(&arguments).map_or(0, |v| v.len());
            if size > limits::ARGUMENTS_MAX_BYTES {
                return Err(ApiError {
                    reason: Some(TOO_LARGE_REASON),
                    limit: Some(limits::ARGUMENTS_MAX_BYTES),
                    ..ApiError::unprocessable(format!(
                        "the call is {} as JSON, more than the {} KiB Taskdeck keeps of one: \
                         the agent's own prompt asks instead",
                        limits::human_bytes(size),
                        limits::ARGUMENTS_MAX_BYTES / 1024
                    ))
                });
            }
            Ok(waiting(hooks, principal, agent, arguments))
        }
        Err(why) => Err(ApiError::unprocessable(why)),
    }
}

/// The streamed answer of a hook waiting for the approval task made of `arguments` (started
/// after the headers went out: the hook's first answer never waits for the store).
fn waiting(hooks: Arc<Hooks>, principal: Principal, agent: Agent, arguments: Value) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(4);
    tokio::spawn(async move {
        let newline = || Ok(Bytes::from_static(b"\n"));
        if tx.send(newline()).await.is_err() {
            return;
        }
        let task_id = match hooks.ask(&principal, arguments).await {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!("cannot start a hook's approval: {e}");
                let _ = tx.send(Ok(Bytes::from(output::none().to_string()))).await;
                return;
            }
        };
        let mut watching = hooks.watch.watch(&task_id);
        let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
        let mut alive = !tx.is_closed();
        let out = loop {
            if !alive {
                // The hook is gone: its question must not stay in the inbox.
                let reason = format!(
                    "{} stopped waiting for this answer (asked or interrupted there)",
                    agent.display()
                );
                let _ = hooks
                    .engine
                    .cancel_because(&principal, &task_id, Some(&reason))
                    .await;
                hooks.edited.forget(&task_id);
                return;
            }
            match hooks.engine.get(&principal, &task_id) {
                Ok(task) => {
                    if let Some(out) = hook_output(agent, &task, hooks.edited.get(&task_id)) {
                        break out;
                    }
                }
                Err(_) => break output::none(),
            }
            tokio::select! {
                change = watching.changes.recv() => if change.is_none() { break output::none() },
                // Taskdeck is stopping: the agent asks the person itself; the open question is
                // recorded as abandoned at the next start.
                _ = hooks.engine.stopping() => break output::none(),
                _ = beat.tick() => alive = tx.send(newline()).await.is_ok(),
                _ = tx.closed() => alive = false,
            }
        };
        hooks.edited.forget(&task_id);
        let _ = tx.send(Ok(Bytes::from(out.to_string()))).await;
    });
    let mut resp = (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(ReceiverStream::new(rx)),
    )
        .into_response();
    // A token revoked while the human is asked ends the wait: no answer reaches the hook.
    resp.extensions_mut().insert(super::guard::EndsWhenRevoked);
    resp
}

//! The task of one agent session (`claude_code_session`, `codex_session`): created at the
//! session's first event and found again by its session id (`sessions`), it shows the
//! session's directory (its arguments) and its latest news as the status message, and
//! completes when the session ends (Claude Code's `SessionEnd`), or after [`SESSION_IDLE`]
//! without an event (Codex has no end event; an agent that crashed sends none).
//!
//! The run only relays the updates the hooks endpoint delivers ([`SessionTool::deliver`]).
//! It is resumable: after a restart it waits for the session's next event again.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::Agent;
use crate::tools::arguments::{input_schema, parse};
use taskdeck_engine::{Outcome, TaskContext, TaskTool, ToolDescriptor, ToolMode};

/// A session with no event for this long is taken as over (12 h).
pub const SESSION_IDLE: Duration = Duration::from_secs(12 * 3600);

/// The session tool's name for `agent`: `claude_code_session` or `codex_session`.
pub fn tool_name(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "claude_code_session",
        Agent::Codex => "codex_session",
    }
}

/// A session task's arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionArguments {
    /// `claude-code` or `codex`.
    pub agent: String,
    /// The agent's session id (Codex: its thread id).
    pub session_id: String,
    /// The session's working directory, as its first event gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// What happened in a session, for its task.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionUpdate {
    /// New status message. `turn`: the agent's turn id when it finished one (a second report of
    /// the same finished turn, Codex's `Stop` hook and its `notify`, is dropped).
    Status {
        /// The new status message.
        text: String,
        /// The finished turn's id, when the update reports one.
        turn: Option<String>,
    },
    /// The session ended; the task completes with this text.
    End(String),
}

/// The session runs of both agents' tools: taskId → where its run takes updates.
#[derive(Default)]
pub struct SessionTool {
    runs: Mutex<HashMap<String, mpsc::UnboundedSender<SessionUpdate>>>,
}

impl SessionTool {
    /// The shared registry of session runs.
    pub fn new() -> Arc<SessionTool> {
        Arc::new(SessionTool::default())
    }

    /// Hands `update` to session task `task_id`'s run. False when no run of it is here (the
    /// task ended).
    pub fn deliver(&self, task_id: &str, update: SessionUpdate) -> bool {
        self.runs
            .lock()
            .unwrap()
            .get(task_id)
            .is_some_and(|tx| tx.send(update).is_ok())
    }
}

/// One agent's session tool.
pub struct SessionToolFor {
    descriptor: ToolDescriptor,
    shared: Arc<SessionTool>,
}

impl SessionToolFor {
    /// `agent`'s session tool, its runs registered in `shared`.
    pub fn new(agent: Agent, shared: Arc<SessionTool>) -> SessionToolFor {
        SessionToolFor {
            descriptor: ToolDescriptor {
                name: tool_name(agent).into(),
                title: Some(format!("{} session", agent.display())),
                description: format!(
                    "A {} session, reported by its hooks: its directory and latest news.",
                    agent.display()
                ),
                input_schema: input_schema::<SessionArguments>(),
                mode: ToolMode::Task { required: true },
                resumable: true,
                agent_callable: false,
            },
            shared,
        }
    }
}

struct Unregister(Arc<SessionTool>, String);

impl Drop for Unregister {
    fn drop(&mut self) {
        self.0.runs.lock().unwrap().remove(&self.1);
    }
}

impl TaskTool for SessionToolFor {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        parse::<SessionArguments>(&self.descriptor.name, arguments).map(drop)
    }

    fn run(&self, ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
        // Registered before this returns: the endpoint delivers the first update right after
        // the creation it waited for.
        let (tx, mut rx) = mpsc::unbounded_channel();
        let task_id = ctx.task_id().to_string();
        self.shared.runs.lock().unwrap().insert(task_id.clone(), tx);
        let unregister = Unregister(self.shared.clone(), task_id);
        async move {
            let _unregister = unregister;
            let mut finished_turn: Option<String> = None;
            // When the task's retention next needs extending (a session outlives its ttlMs).
            let mut extend_at = tokio::time::Instant::now();
            loop {
                tokio::select! {
                    update = rx.recv() => match update {
                        Some(SessionUpdate::Status { text, turn }) => {
                            if tokio::time::Instant::now() >= extend_at {
                                extend_at = keep_alive(&ctx).await;
                            }
                            if turn.is_some() && turn == finished_turn {
                                continue;
                            }
                            if turn.is_some() {
                                finished_turn = turn;
                            }
                            ctx.status_message(text).await;
                        }
                        Some(SessionUpdate::End(text)) => return Outcome::text(text),
                        None => return Outcome::Cancelled,
                    },
                    _ = ctx.cancelled() => return Outcome::Cancelled,
                    _ = tokio::time::sleep(SESSION_IDLE) => {
                        return Outcome::text(format!(
                            "No event from the session for {} h: taken as over.",
                            SESSION_IDLE.as_secs() / 3600
                        ));
                    }
                }
            }
        }
        .boxed()
    }
}

/// Keeps a live session's task from expiring, however short its ttlMs: its window is at least
/// twice [`SESSION_IDLE`], extended once half of it is left, so the task outlives the
/// [`SESSION_IDLE`] its run waits after any event. Returns when to extend it again; a store
/// that cannot take the change (a full disk) is asked again a minute later.
async fn keep_alive(ctx: &TaskContext) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    let at_least = u64::try_from(2 * SESSION_IDLE.as_millis()).unwrap_or(u64::MAX);
    match ctx.keep_alive(at_least).await {
        Ok(Some(ms)) => now + Duration::from_millis(ms),
        // Unlimited retention: nothing to keep.
        Ok(None) => now + SESSION_IDLE * 1000,
        Err(e) => {
            tracing::warn!(
                task_id = ctx.task_id(),
                "cannot extend a session's ttlMs: {e}"
            );
            now + Duration::from_secs(60)
        }
    }
}

//! One hook event in, the hook's answer out: [`Hooks::handle`] routes each event to the policy
//! (`PreToolUse`, `PermissionRequest`) or to its session's task, and [`hook_output`] turns an
//! ended `permission_request` task into what the hook prints.

use serde_json::{Value, json};

use super::{
    Agent, Hooks,
    decide::HookCall,
    event::{self, EventKind},
    output,
    permission_task::{PERMISSION_TOOL, PermissionArguments},
    sessions,
};
use crate::policy::Decision;
use taskdeck_engine::{EngineError, Principal, TaskRecord, TaskStatus};

/// What the hooks endpoint answers.
#[derive(Debug)]
pub enum HookReply {
    /// Print this now (`{}`: no decision).
    Now(Value),
    /// The human is asked in this `permission_request` task; print [`hook_output`] of it once
    /// it ends.
    Wait(String),
}

/// Why an event was refused.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The event is not one Taskdeck can read (for the caller).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl Hooks {
    /// Handles `raw`, one event `agent` sent as `principal`. `PreToolUse` never waits for the
    /// store; `PermissionRequest` creates a task only when the policy asks; session events wait
    /// only for their task's creation.
    ///
    /// Errors: [`HookError::Invalid`] for a tool event without `tool_name`; the engine's.
    pub async fn handle(
        &self,
        principal: &Principal,
        agent: Agent,
        raw: &Value,
    ) -> Result<HookReply, HookError> {
        let event = event::parse(raw).map_err(HookError::Invalid)?;
        let (tool_name, tool_input, asks) = match &event.kind {
            EventKind::PreToolUse {
                tool_name,
                tool_input,
            } => (tool_name, tool_input, false),
            EventKind::PermissionRequest {
                tool_name,
                tool_input,
            } => (tool_name, tool_input, true),
            _ => {
                sessions::report(self, principal, agent, &event).await?;
                return Ok(HookReply::Now(output::none()));
            }
        };
        let call = HookCall {
            agent,
            principal: &principal.name,
            tool_name,
            tool_input,
        };
        if !asks {
            return Ok(HookReply::Now(call.pre_tool_use(&self.policy)));
        }
        let verdict = call.permission_verdict(&self.policy);
        match verdict.decision {
            Decision::Allow => Ok(HookReply::Now(output::permission_allow(None))),
            Decision::Deny => Ok(HookReply::Now(output::permission_deny(&format!(
                "Taskdeck's policy denies {tool_name} for {} ({}). Do not retry this call; ask the user to change the policy if it is needed.",
                principal.name, verdict.reason
            )))),
            Decision::Ask => {
                let (server, tool) = call.target();
                let arguments = PermissionArguments {
                    agent: agent.name().into(),
                    session_id: event.session_id.clone(),
                    cwd: event.cwd.clone(),
                    tool_name: tool_name.clone(),
                    tool_input: tool_input.as_object().cloned().unwrap_or_default(),
                    server,
                    tool,
                    reason: verdict.reason,
                };
                let arguments = serde_json::to_value(arguments)
                    .map_err(|e| HookError::Invalid(e.to_string()))?;
                let task = self
                    .engine
                    .create_task(principal, PERMISSION_TOOL, arguments)
                    .await?;
                Ok(HookReply::Wait(task.task_id.clone()))
            }
        }
    }
}

/// What the hook prints for an ended `permission_request` task of `agent`: its decision
/// (`structuredContent.behavior`: allow, with `updatedInput` only for an agent that takes it;
/// deny with its message), or `{}` (no decision: the approval expired, was cancelled or failed,
/// and the agent shows its own prompt). `None` while the task is not over.
pub fn hook_output(agent: Agent, task: &TaskRecord) -> Option<Value> {
    if !task.status.is_terminal() {
        return None;
    }
    if task.status != TaskStatus::Completed {
        return Some(output::none());
    }
    let decision = task
        .result
        .as_ref()
        .and_then(|r| r.get("structuredContent"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    Some(match decision.get("behavior").and_then(Value::as_str) {
        Some("allow") => output::permission_allow(
            decision
                .get("updatedInput")
                .filter(|_| agent.takes_updated_input())
                .cloned(),
        ),
        Some("deny") => output::permission_deny(
            decision
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("The user declined this call."),
        ),
        _ => output::none(),
    })
}

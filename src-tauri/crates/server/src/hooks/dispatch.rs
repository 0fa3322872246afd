//! One hook event in, the hook's answer out: [`Hooks::handle`] routes each event to the policy
//! (`PreToolUse`, `PermissionRequest`) or to its session's task, and [`hook_output`] turns an
//! ended `permission_request` task into what the hook prints.

use std::{collections::BTreeSet, path::Path};

use serde_json::{Value, json};

use super::{
    Agent, Hooks,
    claude_servers::{self, default_user_file, session_dirs},
    codex_servers::{self, default_codex_home},
    decide::HookCall,
    event::{self, EventKind},
    output,
    own_server::{AgentEnv, Definition, OwnServers},
    permission_task::{PERMISSION_TOOL, PermissionArguments},
    records::PendingRecord,
};
use crate::policy::{Decision, Verdict};
use taskdeck_engine::{EngineError, Principal, TaskRecord, TaskStatus};

/// Claude Code's tool that asks the person questions with choices: its `PermissionRequest` is
/// left to Claude's own prompt.
pub const ASK_USER_QUESTION: &str = "AskUserQuestion";

/// What the hooks endpoint answers.
#[derive(Debug)]
pub enum HookReply {
    /// Print this now (`{}`: no decision).
    Now(Value),
    /// Ask the human: [`Hooks::ask`] with these `permission_request` arguments, then print
    /// [`hook_output`] of the task once it ends.
    Ask(Value),
}

impl Hooks {
    /// Handles `raw`, one event `agent` sent as `principal`; `env` is what the hook found in
    /// the agent's environment ([`AgentEnv`]). Nothing here waits for the store:
    /// `PreToolUse` and `PermissionRequest` answer from the policy (an ask is the caller's to
    /// start, [`HookReply::Ask`]); session events are queued for their session's task.
    ///
    /// Errors: why the event cannot be read (a tool event without `tool_name`), for the caller.
    pub async fn handle(
        &self,
        principal: &Principal,
        agent: Agent,
        raw: &Value,
        env: &AgentEnv,
        answer_by: Option<i64>,
    ) -> Result<HookReply, String> {
        let event = event::parse(raw)?;
        // The servers a session started with are those it keeps (across `/clear` too): noted
        // at each of its events, as seen from where it started, they count however the files
        // change later. A decision also counts what is in sight from the event's `cwd` now,
        // which is not kept: Claude Code loaded its servers where it started, and a file in a
        // dir the session has since `cd`ed through must not make its calls asked twice for good.
        // Reading the agent's files (a rewritten `.claude.json` is parsed again) is blocking
        // work, off the runtime's threads; only a `PermissionRequest` for an MCP tool needs its
        // result, and a `SessionStart` waits for it so that what the session started with is
        // noted before its first call. Every other event answers without waiting.
        let (notes, decides) = match &event.kind {
            EventKind::SessionEnd { .. } => (false, false),
            EventKind::PermissionRequest { tool_name, .. } => {
                (true, tool_name.starts_with("mcp__"))
            }
            _ => (true, false),
        };
        let waits = decides || matches!(event.kind, EventKind::SessionStart { .. });
        let lookup = {
            let (lookup, event, env) = (self.own_servers.clone(), event.clone(), env.clone());
            move || {
                let started = definitions(&lookup, agent, &event, &env, false)
                    .map(|d| lookup.remember(&started_in(agent, &event, &env), d));
                if !decides {
                    return None;
                }
                let mut seen = started?;
                // Codex's view is its `cwd`'s already.
                if agent == Agent::ClaudeCode {
                    seen.extend(definitions(&lookup, agent, &event, &env, true)?);
                }
                Some(seen)
            }
        };
        let seen = match (notes, waits) {
            (false, _) => None,
            (true, true) => tokio::task::spawn_blocking(lookup).await.ok().flatten(),
            (true, false) => {
                tokio::task::spawn_blocking(lookup);
                None
            }
        };
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
                let _ = self
                    .session_events
                    .send((principal.clone(), agent, event.clone()));
                return Ok(HookReply::Now(output::none()));
            }
        };
        let call = HookCall {
            agent,
            principal: &principal.name,
            tool_name,
            tool_input,
            cwd: event.cwd.as_deref(),
        };
        if !asks {
            let (out, verdict) = call.pre_tool_use(&self.policy);
            if let Some(verdict) = verdict {
                self.record_in_background(&call, verdict, answer_by).await;
            }
            return Ok(HookReply::Now(out));
        }
        if agent == Agent::ClaudeCode && tool_name == ASK_USER_QUESTION {
            // Claude's question to the person, not a permission: only its own prompt can
            // take their answers (an allow carries none).
            return Ok(HookReply::Now(output::none()));
        }
        let verdict = call.permission_verdict(&self.policy);
        if verdict.rule_id.is_none() && self.comes_here(agent, tool_name, seen.as_ref()) {
            // The call comes to this Taskdeck, whose approval step decides it there (and
            // records that decision): asking here too would ask twice. A rule about the
            // agent's tool name still decides here.
            return Ok(HookReply::Now(output::permission_allow(None)));
        }
        if verdict.decision != Decision::Ask {
            self.record_in_background(&call, verdict.clone(), answer_by)
                .await;
        }
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
                let arguments = serde_json::to_value(arguments).map_err(|e| e.to_string())?;
                Ok(HookReply::Ask(arguments))
            }
        }
    }
}

impl Hooks {
    /// True when `tool_name` is a tool this Taskdeck serves, reached through the agent's MCP
    /// server that is this Taskdeck, given every server definition the session sees and saw
    /// (`None`: cannot be told; [`super::own_server`]).
    fn comes_here(
        &self,
        agent: Agent,
        tool_name: &str,
        seen: Option<&BTreeSet<Definition>>,
    ) -> bool {
        let Some(rest) = tool_name.strip_prefix("mcp__") else {
            return false;
        };
        let fits = match agent {
            Agent::ClaudeCode => claude_servers::fits,
            Agent::Codex => codex_servers::fits,
        };
        let Some(own) = OwnServers::decide(rest, seen, fits) else {
            return false;
        };
        let followup = crate::adapters::followup_tools::followup_tools()
            .iter()
            .any(|(name, ..)| *name == own.tool);
        let registered = match &own.server_path {
            None => own.tool.clone(),
            Some(server) => crate::gateway::catalog::registered_name(server, &own.tool),
        };
        followup
            || self
                .engine
                .tool(&registered)
                .is_some_and(|t| t.descriptor().agent_callable)
    }

    /// Starts the `permission_request` task of [`HookReply::Ask`]'s `arguments`, owned by
    /// `principal`; returns its id. Errors: the engine's.
    pub async fn ask(
        &self,
        principal: &Principal,
        arguments: Value,
    ) -> Result<String, EngineError> {
        let task = self
            .engine
            .create_task(principal, PERMISSION_TOOL, arguments)
            .await?;
        Ok(task.task_id.clone())
    }

    /// Queues the audit record of `verdict` on `call` ([`super::records`]): the hook's answer
    /// does not wait for it to be made or written (an agent's call over 256 KiB only for room
    /// among that agent's). Queued after `answer_by` (Unix ms), the decision is recorded as
    /// abandoned ([`PendingRecord::answer_by`]).
    async fn record_in_background(
        &self,
        call: &HookCall<'_>,
        verdict: Verdict,
        answer_by: Option<i64>,
    ) {
        self.records
            .queue(PendingRecord::of(call, verdict, answer_by))
            .await;
    }
}

/// Every MCP server definition `event`'s session sees now, in `agent`'s configuration as
/// `env` locates it and `lookup` reads it: for Claude Code from the dir it started in, and from
/// the event's `cwd` too when `with_cwd`; for Codex from its `cwd`, where it started. `None`
/// when that cannot be told (a file in sight unreadable, no started-in dir for Claude Code, no
/// absolute `cwd` for Codex).
fn definitions(
    lookup: &OwnServers,
    agent: Agent,
    event: &event::HookEvent,
    env: &AgentEnv,
    with_cwd: bool,
) -> Option<Vec<Definition>> {
    match agent {
        Agent::ClaudeCode => {
            let cwd = event.cwd.as_deref().filter(|_| with_cwd);
            let dirs = session_dirs(cwd, env.claude_project_dir.as_deref())?;
            let user_file = env.claude_config.clone().or_else(default_user_file);
            lookup.claude_definitions(&dirs, user_file.as_deref())
        }
        Agent::Codex => {
            let home = env.codex_home.clone().or_else(default_codex_home)?;
            let cwd = Path::new(event.cwd.as_deref()?);
            if !cwd.is_absolute() {
                return None;
            }
            lookup.codex_definitions(cwd, &home)
        }
    }
}

/// The key under which what `event`'s session saw is remembered: the agent and the dir the
/// session started in (Claude Code's `$CLAUDE_PROJECT_DIR`, Codex's `cwd`); empty when unknown.
fn started_in(agent: Agent, event: &event::HookEvent, env: &AgentEnv) -> String {
    let dir = match agent {
        Agent::ClaudeCode => env
            .claude_project_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        Agent::Codex => event.cwd.clone(),
    };
    dir.map(|d| format!("{}:{d}", agent.name()))
        .unwrap_or_default()
}

/// What the hook prints for an ended `permission_request` task of `agent`: its decision
/// (`structuredContent.behavior`: allow, with `updatedInput` only for an agent that takes it;
/// deny with its message), or `{}` (no decision: the approval expired, was cancelled or failed,
/// and the agent shows its own prompt). `None` while the task is not over. `typed`: the edited
/// input as the person typed it, when the result shows it masked
/// ([`super::permission_task::EditedInputs`]).
pub fn hook_output(agent: Agent, task: &TaskRecord, typed: Option<Value>) -> Option<Value> {
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
                .map(|shown| typed.unwrap_or_else(|| shown.clone())),
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

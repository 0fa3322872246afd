//! `permission_request`: the task that puts an agent's permission request (a hook's `ask`) to
//! the human through the one approval step ([`crate::approvals::obtain`], question key
//! `approve`; the call is editable when the agent takes an edited call back) and ends with what
//! the hook prints, in `structuredContent`:
//! `{"behavior": "allow"|"deny"|"ask", "message"?: string, "updatedInput"?: object}`
//! (`ask`: nobody answered in time and the terms hand the decision back to the agent's own
//! prompt). The approval's deadline is set when its first question is asked, at most
//! [`super::APPROVAL_EXPIRY`] later (its `expiry_cap_ms`; sooner when the terms say so), and
//! the later questions of an M of N approval share it: no question stays open past it, and it
//! ends before the hook's own timeout.
//! The task is owned by the hook's principal and shown in the inbox like any approval; the
//! hook that waits for it cancels it when its connection drops (`adapters::hooks_api`).
//! Not resumable: after a restart nobody waits for the answer any more.

use std::{sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{APPROVAL_EXPIRY, Agent};
use crate::{
    approvals::{self, AllowedBy, Approval, ApprovalCall},
    policy::{Policy, ToolHints},
    tools::arguments::{input_schema, parse, parse_for_run},
};
use taskdeck_engine::{Outcome, TaskContext, TaskTool, ToolDescriptor, ToolMode};

/// The tool's name.
pub const PERMISSION_TOOL: &str = "permission_request";
/// The question's key (the first question of an approval, plan of issue #15).
pub const APPROVE_KEY: &str = "approve";
/// Longest rendering of the call shown in the question (the task's arguments show it whole).
const SHOWN_INPUT_BYTES: usize = 4000;

/// A permission request's arguments, as the hooks endpoint makes them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionArguments {
    /// `claude-code` or `codex`.
    pub agent: String,
    /// The agent's session id.
    pub session_id: String,
    /// The agent's working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The tool as the agent names it, e.g. `Bash` or `mcp__github__create_issue`.
    pub tool_name: String,
    /// The call's arguments (the hook's `tool_input`).
    pub tool_input: Map<String, Value>,
    /// The policy's server for the call (`claude-code`, `codex`, or an MCP server's name).
    pub server: String,
    /// The policy's tool name on that server.
    pub tool: String,
    /// Why the policy asks, e.g. `default: not annotated read-only` or `rule r-1a2b3c4d`.
    pub reason: String,
}

/// Edited inputs holding credentials, by task id, from the approval to the hook that prints
/// them: the task's result shows them masked (Taskdeck stores no credential), and the hook,
/// waiting in this process, prints them as the person typed them. Nothing of it is stored: an
/// answer nobody waits for any more (Taskdeck stopped) is never printed.
#[derive(Default)]
pub struct EditedInputs(std::sync::Mutex<std::collections::HashMap<String, Value>>);

impl EditedInputs {
    /// Keeps `input` for task `task_id`'s hook.
    fn hold(&self, task_id: &str, input: Value) {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        held.insert(task_id.to_string(), input);
    }

    /// The edited input kept for task `task_id`, if any.
    pub fn get(&self, task_id: &str) -> Option<Value> {
        let held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        held.get(task_id).cloned()
    }

    /// Forgets task `task_id`'s edited input (its hook printed it, or stopped waiting).
    pub fn forget(&self, task_id: &str) {
        let mut held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        held.remove(task_id);
    }
}

/// The `permission_request` task tool.
pub struct PermissionTool {
    descriptor: ToolDescriptor,
    policy: Arc<Policy>,
    expiry: Duration,
    edited: Arc<EditedInputs>,
}

impl PermissionTool {
    /// The tool; "always allow" answers add rules to `policy`; an edited input holding
    /// credentials is kept in `edited` for its hook.
    pub fn new(policy: Arc<Policy>, edited: Arc<EditedInputs>) -> PermissionTool {
        PermissionTool {
            descriptor: ToolDescriptor {
                name: PERMISSION_TOOL.into(),
                title: Some("Agent permission request".into()),
                description: "A coding agent's permission prompt (a Claude Code or Codex hook), answered by the human.".into(),
                input_schema: input_schema::<PermissionArguments>(),
                mode: ToolMode::Task { required: true },
                resumable: false,
                agent_callable: false,
            },
            policy,
            expiry: APPROVAL_EXPIRY,
            edited,
        }
    }
}

/// The task's result: what the hook prints, as `structuredContent`; its text says how it was
/// decided (`allowed_by`, for an allow).
fn decided(
    behavior: &str,
    message: Option<String>,
    updated_input: Option<Value>,
    allowed_by: Option<&AllowedBy>,
) -> Outcome {
    let mut decision = json!({"behavior": behavior});
    if let Some(m) = &message {
        decision["message"] = json!(m);
    }
    if let Some(input) = updated_input {
        decision["updatedInput"] = input;
    }
    let text = match (behavior, &message) {
        ("allow", _) => match allowed_by {
            Some(AllowedBy::Humans(humans)) if !humans.is_empty() => {
                format!("Approved by {}.", humans.join(" and "))
            }
            Some(AllowedBy::Expiry) => {
                "Allowed: nobody answered in time, and the policy allows when an approval expires."
                    .to_string()
            }
            Some(AllowedBy::Policy) => "Allowed by the policy.".to_string(),
            _ => "Approved.".to_string(),
        },
        ("ask", _) => "Expired: the agent shows its own prompt.".to_string(),
        (_, Some(m)) => m.clone(),
        _ => "Denied.".to_string(),
    };
    Outcome::Completed(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": decision,
        "isError": false,
    }))
}

/// The JSON Schema an edit of `arguments` (an agent's own tool's call, as the policy sees it)
/// must fit: the same members, each of the JSON type it had, none added; the session's
/// directory ([`super::decide::SESSION_DIR`]) as it was. A Bash call cannot be approved as
/// `{"cmd": ...}`, which Claude Code would run as nothing it understands.
fn edit_schema(arguments: &Value) -> Value {
    let members = arguments.as_object().cloned().unwrap_or_default();
    let properties: Map<String, Value> = members
        .iter()
        .map(|(name, value)| {
            let shape = match (name.as_str(), value) {
                (super::decide::SESSION_DIR, Value::String(dir)) => {
                    json!({"type": "string", "enum": [dir]})
                }
                (_, Value::String(_)) => json!({"type": "string"}),
                (_, Value::Bool(_)) => json!({"type": "boolean"}),
                (_, Value::Number(_)) => json!({"type": "number"}),
                (_, Value::Array(_)) => json!({"type": "array"}),
                (_, Value::Object(_)) => json!({"type": "object"}),
                (_, Value::Null) => json!({"type": "null"}),
            };
            (name.clone(), shape)
        })
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": members.keys().collect::<Vec<_>>(),
        "additionalProperties": false,
    })
}

fn shown_value(input: &Value) -> String {
    let mut text = serde_json::to_string_pretty(input).unwrap_or_default();
    if text.len() > SHOWN_INPUT_BYTES {
        let mut cut = SHOWN_INPUT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n… (cut; the task shows the whole call)");
    }
    text
}

impl TaskTool for PermissionTool {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// Credentials in the call (secret-named members, passwords in URLs, at any depth of
    /// `toolInput`) are stored and shown redacted; the run (not resumable) has them as given.
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        crate::tools::secrets::redact_field(arguments, "toolInput")
    }

    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        parse::<PermissionArguments>(PERMISSION_TOOL, arguments).map(drop)
    }

    /// Its approval still open when the process ended is recorded as abandoned, handed back to
    /// the agent's own prompt (the hook answered "no decision").
    fn abandoned_decisions(
        &self,
        task: &taskdeck_engine::TaskRecord,
    ) -> Vec<taskdeck_engine::DecisionRecord> {
        crate::approvals::record::abandoned_at_restart(task, true)
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let args: PermissionArguments = match parse_for_run(PERMISSION_TOOL, arguments) {
            Ok(a) => a,
            Err(outcome) => return std::future::ready(outcome).boxed(),
        };
        let (policy, expiry, held) = (self.policy.clone(), self.expiry, self.edited.clone());
        async move {
            let agent = Agent::from_name(&args.agent).unwrap_or(Agent::ClaudeCode);
            let editable = agent.takes_updated_input();
            let place = args
                .cwd
                .as_deref()
                .map(|c| format!(" in {c}"))
                .unwrap_or_default();
            let own_tool = args.server == agent.name();
            let arguments = super::decide::policy_input(
                agent,
                &args.server,
                &Value::Object(args.tool_input.clone()),
                args.cwd.as_deref(),
            );
            // The call as the approval holds it (what an edit starts from and must keep the
            // members of); the agent's own words about it after, for the person.
            let input = shown_value(&approvals::shown_arguments(&arguments));
            let said = match args.tool_input.get("description").and_then(Value::as_str) {
                Some(d) if own_tool && !d.trim().is_empty() => {
                    let d = crate::tools::secrets::mask_string(d).unwrap_or_else(|| d.to_string());
                    format!("\n\n{} says what it is for: {d}", agent.display())
                }
                _ => String::new(),
            };
            let (who, agent_name, tool) = (ctx.principal(), agent.display(), &args.tool);
            let message = match own_tool {
                true => format!("{who} ({agent_name}{place}) asks to use {tool}:\n\n{input}{said}"),
                false => format!(
                    "{who} ({agent_name}{place}) wants to call {tool} on {} with:\n\n{input}",
                    args.server
                ),
            };
            // An edit of the agent's own tool's call keeps its shape (the agent's tool takes
            // nothing else); another server's tool's schema is not known here.
            let edit_schema = own_tool.then(|| edit_schema(&arguments));
            let call = ApprovalCall {
                server: &args.server,
                tool: &args.tool,
                arguments: &arguments,
                hints: ToolHints::default(),
                input_schema: edit_schema.as_ref(),
                editable,
                key: APPROVE_KEY,
                message,
                always_title: Some(format!(
                    "Always allow {} to call {}'s {} with exactly these arguments",
                    ctx.principal(),
                    args.server,
                    args.tool
                )),
                expiry_cap_ms: Some(expiry.as_millis() as u64),
                exact_only: super::decide::exact_only(agent, &args.server, &arguments),
                hands_back: true,
            };
            match approvals::obtain(&ctx, &policy, call).await {
                Err(e) => Outcome::from(e),
                Ok(Approval::Allow {
                    arguments,
                    edited,
                    by,
                }) => {
                    // The edited call goes back whole: the agent's own description, timeout
                    // and the like with it; the session's directory, which the policy saw
                    // beside the call, is not part of it (the agent runs where it runs).
                    let updated = (edited && editable).then(|| {
                        let mut updated = arguments;
                        if let Some(map) = updated.as_object_mut() {
                            if !args.tool_input.contains_key(super::decide::SESSION_DIR) {
                                map.remove(super::decide::SESSION_DIR);
                            }
                            for detail in super::decide::RUN_DETAILS {
                                if let Some(value) = args.tool_input.get(detail) {
                                    map.entry(detail).or_insert_with(|| value.clone());
                                }
                            }
                        }
                        updated
                    });
                    // A credential the person typed is shown masked in the result; the hook
                    // prints it as typed.
                    let updated = updated.map(|typed| {
                        let shown = approvals::shown_arguments(&typed);
                        if shown != typed {
                            held.hold(ctx.task_id(), typed);
                        }
                        shown
                    });
                    decided("allow", None, updated, Some(&by))
                }
                Ok(Approval::Deny { message, by }) => {
                    let mut denied = decided("deny", Some(message), None, None);
                    if let Outcome::Completed(result) = &mut denied {
                        approvals::refusal::mark(result, approvals::refusal::mark_for(by));
                    }
                    denied
                }
                Ok(Approval::AgentDecides { .. }) => decided("ask", None, None, None),
            }
        }
        .boxed()
    }
}

//! The policy's part in a hook's permission events: which call of the policy an agent's tool
//! call is, and what `PreToolUse` and `PermissionRequest` answer before any human is asked.
//!
//! Mapping (plan of issue #15, "Hooks"): `mcp__S__T` is server `S`'s tool `T`; every other
//! tool (`Bash`, `Edit`, `WebFetch`, ...) is the agent's own: server `claude-code` (or
//! `codex`), the tool as named. The arguments are `tool_input`; the principal is the hook's
//! token name.

use serde_json::Value;

use super::{Agent, output};
use crate::{
    approvals,
    policy::{Decision, Policy, PolicyCall, ToolHints, Verdict, has_shell_syntax},
};
use taskdeck_engine::DecisionRecord;

/// The policy's (server, tool) for an agent's tool name. An MCP server named like the agents'
/// own tools' server (`mcp__claude-code__Bash`, `mcp__codex__…`) is server `mcp__claude-code`:
/// a rule for the built-in `Bash` must not cover a server's tool that only shares its name.
pub fn policy_target(agent: Agent, tool_name: &str) -> (String, String) {
    if let Some(rest) = tool_name.strip_prefix("mcp__")
        && let Some((server, tool)) = rest.split_once("__")
        && !server.is_empty()
        && !tool.is_empty()
    {
        let server = match Agent::ALL.iter().any(|a| a.name() == server) {
            true => format!("mcp__{server}"),
            false => server.to_string(),
        };
        return (server, tool.to_string());
    }
    (agent.name().to_string(), tool_name.to_string())
}

/// One hook's tool call as the policy sees it.
pub struct HookCall<'a> {
    /// The agent that makes the call.
    pub agent: Agent,
    /// The hook's token name, the call's principal.
    pub principal: &'a str,
    /// The agent's tool name (`Bash`, `mcp__S__T`, ...).
    pub tool_name: &'a str,
    /// The call's arguments, a JSON object.
    pub tool_input: &'a Value,
    /// The session's working directory (the event's `cwd`).
    pub cwd: Option<&'a str>,
}

impl HookCall<'_> {
    /// The (server, tool) the policy matches.
    pub fn target(&self) -> (String, String) {
        policy_target(self.agent, self.tool_name)
    }

    /// Runs `f` on the policy's view of this call (no annotations: the agents' tools carry none).
    fn as_policy_call<R>(&self, f: impl FnOnce(&PolicyCall) -> R) -> R {
        let (server, tool) = self.target();
        let arguments = policy_input(self.agent, &server, self.tool_input, self.cwd);
        f(&PolicyCall {
            principal: self.principal,
            server: &server,
            tool: &tool,
            arguments: &arguments,
            hints: ToolHints::default(),
        })
    }

    /// `PreToolUse`'s answer: an explicit rule's decision (deny names the rule), else `{}`;
    /// with the rule's verdict when one matched. Codex takes only a deny here: its allow goes
    /// through its own flow and `PermissionRequest` (where the same rule allows).
    pub fn pre_tool_use(&self, policy: &Policy) -> (Value, Option<Verdict>) {
        let verdict = self.permission_verdict(policy);
        if verdict.rule_id.is_none() {
            return (output::none(), None);
        }
        // `rule ID`, with the rule's note when it has one: what the agent reads.
        let reason = format!("Taskdeck policy {}", verdict.reason);
        let out = match (verdict.decision, self.agent) {
            (Decision::Deny, _) => output::pre_tool_use(
                Decision::Deny,
                &format!(
                    "{reason} denies {} for {}. Do not retry this call; ask the user to change the policy if it is needed.",
                    self.tool_name, self.principal
                ),
            ),
            (_, Agent::Codex) => return (output::none(), None),
            (decision, Agent::ClaudeCode) => output::pre_tool_use(decision, &reason),
        };
        (out, Some(verdict))
    }

    /// The audit record of a decision taken without asking anyone (`verdict`, a rule's or a
    /// default's): `ask` there means the call went back to the agent's own prompt.
    pub fn decision_record(&self, verdict: &Verdict) -> DecisionRecord {
        let (server, tool) = self.target();
        let arguments = policy_input(self.agent, &server, self.tool_input, self.cwd);
        let shown = approvals::shown_arguments(&arguments);
        approvals::record::verdict_record(self.principal, &server, &tool, &shown, verdict)
    }

    /// `PermissionRequest`'s verdict: the first matching rule, else the default (ask: the
    /// agents' tools carry no annotations). A shell command (`tool_input.command` of the
    /// agent's own tools) that holds shell syntax is let through only by an `allow` rule naming
    /// the exact line, as for `run_command` ([`Policy::decide_exact`]).
    pub fn permission_verdict(&self, policy: &Policy) -> Verdict {
        let (server, _) = self.target();
        let exact_only = exact_only(self.agent, &server, self.tool_input);
        self.as_policy_call(|call| policy.decide_exact(call, exact_only))
    }
}

/// What an agent's own tool's input carries beside the call itself: the free text explaining it
/// (`description`, written anew on every call) and how it is run (`timeout` in ms,
/// `run_in_background`: Claude Code's Bash), none of which changes what the call does.
pub const RUN_DETAILS: [&str; 3] = ["description", "timeout", "run_in_background"];

/// The member [`policy_input`] adds to an agent's own tool's input: the directory the call
/// runs in.
pub const SESSION_DIR: &str = "cwd";

/// The arguments the policy, the digest and the approval see of a call of `server`'s tool: the
/// agent's `tool_input`; for the agent's own tools, without [`RUN_DETAILS`] (so a rule or
/// "always allow" about a command holds for the next call of that command, whatever its
/// timeout, and identical commands group) and with the session's directory `cwd` as
/// [`SESSION_DIR`] when the input has none (as `run_command`'s, so "always allow" of `rm -rf
/// build` in one project does not allow it in every other, and calls from two projects do not
/// group as one).
pub fn policy_input(agent: Agent, server: &str, tool_input: &Value, cwd: Option<&str>) -> Value {
    let mut input = tool_input.clone();
    if server == agent.name()
        && let Some(map) = input.as_object_mut()
    {
        for detail in RUN_DETAILS {
            map.remove(detail);
        }
        if let Some(dir) = cwd
            && !map.contains_key(SESSION_DIR)
        {
            map.insert(SESSION_DIR.into(), Value::String(dir.into()));
        }
    }
    input
}

/// The arguments an `allow` rule must name exactly for a call of `server`'s tool with
/// `arguments`: `command` when it is a shell line of the agent's own tools (server
/// `claude-code` or `codex`) holding shell syntax ([`has_shell_syntax`]), else none.
pub fn exact_only(agent: Agent, server: &str, arguments: &Value) -> &'static [&'static str] {
    let chained = server == agent.name()
        && arguments
            .get("command")
            .and_then(Value::as_str)
            .is_some_and(has_shell_syntax);
    if chained { &["command"] } else { &[] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_tools_map_to_their_server() {
        for (agent, name, server, tool) in [
            (
                Agent::ClaudeCode,
                "mcp__github__create_issue",
                "github",
                "create_issue",
            ),
            (Agent::ClaudeCode, "mcp__my_srv__a__b", "my_srv", "a__b"),
            (Agent::ClaudeCode, "Bash", "claude-code", "Bash"),
            (Agent::Codex, "Bash", "codex", "Bash"),
            (Agent::ClaudeCode, "mcp__x", "claude-code", "mcp__x"),
            // An MCP server named like the agents' own tools' server is not taken for them.
            (
                Agent::ClaudeCode,
                "mcp__claude-code__Bash",
                "mcp__claude-code",
                "Bash",
            ),
            (Agent::Codex, "mcp__codex__codex", "mcp__codex", "codex"),
            (Agent::ClaudeCode, "mcp__codex__Bash", "mcp__codex", "Bash"),
        ] {
            assert_eq!(policy_target(agent, name), (server.into(), tool.into()));
        }
    }
}

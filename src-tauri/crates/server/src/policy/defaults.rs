//! What the policy decides when no rule matches. Taskdeck's own tools keep their defaults
//! (`run_command` and `wait_for_http_job` ask), Claude Code's and Codex's own tools ask (the
//! hooks' servers `claude-code` and `codex`); an upstream tool's come from its MCP
//! annotations (2025-11-25 §Tool Annotations): `destructiveHint: true` → ask (even with
//! `readOnlyHint: true`), else `readOnlyHint: true` → allow, else (no annotations) → ask.

use super::{Decision, PolicyCall, TASKDECK_SERVER, Verdict};

/// The default verdict on `call`, with its reason (`"default: readOnlyHint"`).
pub fn default_verdict(call: &PolicyCall) -> Verdict {
    let (decision, why) = if call.server == TASKDECK_SERVER
        && matches!(call.tool, "run_command" | "wait_for_http_job")
    {
        (Decision::Ask, format!("{} asks", call.tool))
    } else if matches!(call.server, "claude-code" | "codex") {
        // The agents' own tools (Bash, Edit, ...) carry no annotations: their prompts ask.
        (Decision::Ask, format!("{}'s own tools ask", call.server))
    } else if call.hints.destructive == Some(true) {
        // A tool that says both read-only and destructive is taken at its worse word.
        (Decision::Ask, "destructiveHint".to_string())
    } else if call.hints.read_only == Some(true) {
        (Decision::Allow, "readOnlyHint".to_string())
    } else {
        (Decision::Ask, "not annotated read-only".to_string())
    };
    Verdict {
        decision,
        rule_id: None,
        reason: format!("default: {why}"),
        terms: Default::default(),
    }
}

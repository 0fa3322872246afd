//! What a hook prints on stdout for the agent to read (exit code 0). `{}` is "no decision":
//! the agent goes on as if the hook had said nothing (for a permission request, it shows its
//! own prompt).
//!
//! Claude Code (<https://code.claude.com/docs/en/hooks>): `PreToolUse` answers
//! `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision":
//! "allow"|"deny"|"ask", "permissionDecisionReason": "..."}}`; `PermissionRequest` answers
//! `{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior":
//! "allow"|"deny", "updatedInput"?: {...}, "message"?: "..."}}}`. Codex takes the same shapes
//! (`permission-request.command.output.schema.json`, `pre-tool-use.command.output.schema.json`)
//! but refuses `updatedInput`.

use serde_json::{Value, json};

use crate::policy::Decision;

/// No decision: `{}`.
pub fn none() -> Value {
    json!({})
}

/// A `PreToolUse` decision with its reason.
pub fn pre_tool_use(decision: Decision, reason: &str) -> Value {
    let decision = match decision {
        Decision::Allow => "allow",
        Decision::Ask => "ask",
        Decision::Deny => "deny",
    };
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

/// A `PermissionRequest` allow, with the edited call when there is one.
pub fn permission_allow(updated_input: Option<Value>) -> Value {
    let mut decision = json!({"behavior": "allow"});
    if let Some(input) = updated_input {
        decision["updatedInput"] = input;
    }
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

/// A `PermissionRequest` deny; the agent reads `message`.
pub fn permission_deny(message: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": message}}})
}

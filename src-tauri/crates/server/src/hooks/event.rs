//! The events hooks receive, read from the JSON an agent writes on the hook's stdin.
//!
//! Claude Code (<https://code.claude.com/docs/en/hooks>): every event carries `session_id`,
//! `transcript_path`, `cwd`, `permission_mode` and `hook_event_name`; `PreToolUse` and
//! `PermissionRequest` add `tool_name` and `tool_input`; `Notification` adds `message` (and
//! `notification_type`); `Stop` and `SubagentStop` may add `last_assistant_message`;
//! `SessionStart` adds `source`, `SessionEnd` `reason`, `UserPromptSubmit` `prompt`. Codex's
//! hooks use the same names plus `turn_id` and `model` (`codex-rs/hooks/schema/generated/`).
//! Codex's `notify` program gets `{"type": "agent-turn-complete", "thread-id", "turn-id",
//! "cwd", "input-messages", "last-assistant-message"}` (`codex-rs/hooks/src/legacy_notify.rs`).

use serde_json::Value;

/// One event, with what Taskdeck uses of it.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEvent {
    /// What happened.
    pub kind: EventKind,
    /// The agent's session id (Codex notify: its `thread-id`); empty when absent.
    pub session_id: String,
    /// The agent's working directory, when given.
    pub cwd: Option<String>,
    /// Codex's turn id, when given.
    pub turn_id: Option<String>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// Before a tool call (`tool_input` is the call's arguments object).
    PreToolUse {
        /// The agent's tool name (`Bash`, `mcp__S__T`, ...).
        tool_name: String,
        /// The call's arguments (`{}` when absent).
        tool_input: Value,
    },
    /// The agent would ask its user for permission to make this call.
    PermissionRequest {
        /// The agent's tool name (`Bash`, `mcp__S__T`, ...).
        tool_name: String,
        /// The call's arguments (`{}` when absent).
        tool_input: Value,
    },
    /// A session started or resumed.
    SessionStart {
        /// How it started: `startup`, `resume`, `clear` or `compact`; `None` when absent or blank.
        source: Option<String>,
    },
    /// The user sent a prompt.
    UserPromptSubmit {
        /// The prompt's text; `None` when absent or blank.
        prompt: Option<String>,
    },
    /// The agent needs its user (a permission prompt, an idle prompt, ...).
    Notification {
        /// What the agent says; `None` when absent or blank.
        message: Option<String>,
    },
    /// The agent finished its turn (Claude Code and Codex `Stop`, Codex `agent-turn-complete`).
    Stop {
        /// The agent's last message of the turn; `None` when absent or blank.
        last_message: Option<String>,
    },
    /// A subagent finished.
    SubagentStop {
        /// The subagent's last message; `None` when absent or blank.
        last_message: Option<String>,
    },
    /// The session ended.
    SessionEnd {
        /// Why (`clear`, `logout`, `prompt_input_exit`, ...); `None` when absent or blank.
        reason: Option<String>,
    },
    /// An event Taskdeck does nothing with (its name).
    Other(String),
}

fn text(raw: &Value, key: &str) -> Option<String> {
    raw.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string)
}

/// Reads `raw` (a JSON object). Errors: a tool event without `tool_name`, or without a
/// `tool_input` object (text for the caller).
pub fn parse(raw: &Value) -> Result<HookEvent, String> {
    if raw.get("type").and_then(Value::as_str) == Some("agent-turn-complete") {
        return Ok(HookEvent {
            kind: EventKind::Stop {
                last_message: text(raw, "last-assistant-message"),
            },
            session_id: text(raw, "thread-id").unwrap_or_default(),
            cwd: text(raw, "cwd"),
            turn_id: text(raw, "turn-id"),
        });
    }
    let name = text(raw, "hook_event_name").unwrap_or_default();
    let kind = match name.as_str() {
        "PreToolUse" | "PermissionRequest" => {
            let tool_name = text(raw, "tool_name")
                .ok_or_else(|| format!("a {name} event needs tool_name (a string)"))?;
            // A call is shown and decided as given: one whose input is missing or not an object
            // would be asked about as something else (a call with no arguments is `{}`).
            let tool_input = match raw.get("tool_input") {
                Some(v @ Value::Object(_)) => v.clone(),
                _ => {
                    return Err(format!(
                        "a {name} event needs tool_input (a JSON object, {{}} for no arguments)"
                    ));
                }
            };
            if name == "PreToolUse" {
                EventKind::PreToolUse {
                    tool_name,
                    tool_input,
                }
            } else {
                EventKind::PermissionRequest {
                    tool_name,
                    tool_input,
                }
            }
        }
        "SessionStart" => EventKind::SessionStart {
            source: text(raw, "source"),
        },
        "UserPromptSubmit" => EventKind::UserPromptSubmit {
            prompt: text(raw, "prompt"),
        },
        "Notification" => EventKind::Notification {
            message: text(raw, "message"),
        },
        "Stop" => EventKind::Stop {
            last_message: text(raw, "last_assistant_message"),
        },
        "SubagentStop" => EventKind::SubagentStop {
            last_message: text(raw, "last_assistant_message"),
        },
        "SessionEnd" => EventKind::SessionEnd {
            reason: text(raw, "reason"),
        },
        _ => EventKind::Other(name.clone()),
    };
    Ok(HookEvent {
        kind,
        session_id: text(raw, "session_id").unwrap_or_default(),
        cwd: text(raw, "cwd"),
        turn_id: text(raw, "turn_id"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn codex_notify_reads_as_a_stop() {
        let e = parse(
            &json!({"type": "agent-turn-complete", "thread-id": "t-1", "turn-id": "7",
            "cwd": "/p", "input-messages": ["hi"], "last-assistant-message": "done"}),
        )
        .unwrap();
        assert_eq!(e.session_id, "t-1");
        assert_eq!(e.turn_id.as_deref(), Some("7"));
        assert_eq!(
            e.kind,
            EventKind::Stop {
                last_message: Some("done".into())
            }
        );
    }

    #[test]
    fn a_tool_event_needs_a_tool_name() {
        let no_tool = json!({"hook_event_name": "PreToolUse", "session_id": "s"});
        assert!(parse(&no_tool).unwrap_err().contains("tool_name"));
        let other = parse(&json!({"hook_event_name": "PreCompact"})).unwrap();
        assert_eq!(other.kind, EventKind::Other("PreCompact".into()));
    }
}

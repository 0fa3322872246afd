//! Agent sessions as tasks: which session task an event belongs to (created at a session's
//! first event, found again by `create_task_once` with a key made of the agent and session
//! id), what the event says in its status message, and which status messages deserve a
//! desktop notification ([`attention`]: "Claude needs you", "Claude finished").
//!
//! A session resumed after its task ended (Claude Code keeps the session id on `--resume`)
//! gets a new task: the key carries a generation, and a key whose task ended is followed by
//! the next one.

use serde_json::json;

use super::{
    Agent, Hooks,
    event::{EventKind, HookEvent},
    session_task::{SessionArguments, SessionUpdate, tool_name},
};
use taskdeck_engine::{EngineError, Principal, idempotency::Creation};

/// Longest piece of an agent's text (a prompt, a last message) put in a status message, in
/// characters.
const QUOTED_CHARS: usize = 300;

/// Most tasks one session id may have had (resumed after its task ended) before its events are
/// dropped.
const MAX_GENERATIONS: u32 = 64;

/// An agent's or its user's `text` as a status message quotes it: credentials masked as in a
/// tool's arguments (`PGPASSWORD=[redacted]`, `ghp_…`: a prompt is typed, and pasted, into a
/// session), then cut to [`QUOTED_CHARS`].
fn quoted(text: &str) -> String {
    let masked = crate::tools::secrets::mask_string(text);
    let text = masked.as_deref().unwrap_or(text).trim();
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// What `event` changes in its session's task; `None` for events a session does not show.
pub fn update_for(agent: Agent, event: &HookEvent) -> Option<SessionUpdate> {
    let who = agent.display();
    let status = |text: String| SessionUpdate::Status { text, turn: None };
    Some(match &event.kind {
        EventKind::SessionStart { source } => {
            let verb = match source.as_deref() {
                Some("resume") => "Resumed",
                Some("clear") => "Cleared",
                Some("compact") => "Compacted",
                _ => "Started",
            };
            status(match &event.cwd {
                Some(cwd) => format!("{verb} in {cwd}"),
                None => verb.to_string(),
            })
        }
        EventKind::UserPromptSubmit { prompt } => status(match prompt {
            Some(p) => format!("Working on: {}", quoted(p)),
            None => "Working".to_string(),
        }),
        EventKind::Notification { message } => status(match message {
            Some(m) => format!("{who}{NEEDS_YOU}: {}", quoted(m)),
            None => format!("{who}{NEEDS_YOU}"),
        }),
        EventKind::Stop { last_message } => SessionUpdate::Status {
            text: match last_message {
                Some(m) => format!("{who}{FINISHED}: {}", quoted(m)),
                None => format!("{who}{FINISHED} its turn"),
            },
            turn: event.turn_id.clone(),
        },
        EventKind::SubagentStop { last_message } => status(match last_message {
            Some(m) => format!("A subagent finished: {}", quoted(m)),
            None => "A subagent finished".to_string(),
        }),
        EventKind::SessionEnd { reason } => SessionUpdate::End(match reason {
            Some(r) => format!("Session ended ({r})"),
            None => "Session ended".to_string(),
        }),
        EventKind::PreToolUse { .. }
        | EventKind::PermissionRequest { .. }
        | EventKind::Other(_) => {
            return None;
        }
    })
}

const NEEDS_YOU: &str = " needs you";
const FINISHED: &str = " finished";

/// What a session's status message calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionKind {
    /// The agent waits for its user ("Claude needs you").
    NeedsYou,
    /// The agent finished its turn ("Claude finished").
    Finished,
}

/// A session news worth a desktop notification: its kind, summary (`Claude needs you`,
/// `Claude finished`) and body (the agent's text after the summary, may be empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    /// Needs the user, or finished.
    pub kind: AttentionKind,
    /// The notification's summary, e.g. `Claude needs you`.
    pub summary: String,
    /// The agent's text after the summary; may be empty.
    pub body: String,
}

/// The notification a session task's (tool `tool`) status message `message` calls for, if any.
pub fn attention(tool: &str, message: &str) -> Option<Attention> {
    let agent = Agent::ALL.into_iter().find(|a| tool_name(*a) == tool)?;
    let rest = message.strip_prefix(agent.display())?;
    let (kind, word, rest) = if let Some(rest) = rest.strip_prefix(NEEDS_YOU) {
        (AttentionKind::NeedsYou, NEEDS_YOU, rest)
    } else if let Some(rest) = rest.strip_prefix(FINISHED) {
        (AttentionKind::Finished, FINISHED, rest)
    } else {
        return None;
    };
    let body = rest.strip_prefix(": ").unwrap_or(rest.trim_start());
    Some(Attention {
        kind,
        summary: format!("{}{word}", agent.display()),
        body: body.to_string(),
    })
}

/// The live session task of `event`'s session (created when there is none). `Ok(None)` when
/// the event names no session, or its session had [`MAX_GENERATIONS`] tasks.
///
/// Errors: the engine's (the store failed).
pub async fn session_task(
    hooks: &Hooks,
    principal: &Principal,
    agent: Agent,
    event: &HookEvent,
) -> Result<Option<String>, EngineError> {
    if event.session_id.is_empty() {
        return Ok(None);
    }
    let arguments = serde_json::to_value(SessionArguments {
        agent: agent.name().into(),
        session_id: event.session_id.clone(),
        cwd: event.cwd.clone(),
    })
    .unwrap_or_else(|_| json!({}));
    for generation in 0..MAX_GENERATIONS {
        let key = format!(
            "hook-session:{}:{}:{generation}",
            agent.name(),
            event.session_id
        );
        let creation = hooks
            .engine
            .create_task_once(principal, tool_name(agent), arguments.clone(), &key)
            .await?;
        let (task_id, live) = match creation {
            Creation::Created(task) => return Ok(Some(task.task_id.clone())),
            Creation::Replayed { task_id, task } => {
                let live = task.is_some_and(|t| !t.status.is_terminal());
                (task_id, live)
            }
            // Same session, another directory in its first event's arguments.
            Creation::Conflict { task_id } => {
                let live = hooks
                    .engine
                    .get(principal, &task_id)
                    .is_ok_and(|t| !t.status.is_terminal());
                (task_id, live)
            }
        };
        if live {
            return Ok(Some(task_id));
        }
    }
    Ok(None)
}

/// One session event waiting to be applied: who sent it, for which agent.
pub type SessionEvent = (Principal, Agent, HookEvent);

/// Applies the session events of `queue` one at a time, in the order they came (a hook ends
/// before the agent's next event, so this is the session's order); ends with the queue, or
/// when `hooks` is gone.
pub async fn apply_in_order(
    hooks: std::sync::Weak<Hooks>,
    mut queue: tokio::sync::mpsc::UnboundedReceiver<SessionEvent>,
) {
    while let Some((principal, agent, event)) = queue.recv().await {
        let Some(hooks) = hooks.upgrade() else {
            return;
        };
        if let Err(e) = report(&hooks, &principal, agent, &event).await {
            tracing::warn!("cannot show a {} session event: {e}", agent.name());
        }
    }
}

/// Shows `event` on its session's task (creating the task at the session's first event).
///
/// Errors: the engine's (the store failed).
pub async fn report(
    hooks: &Hooks,
    principal: &Principal,
    agent: Agent,
    event: &HookEvent,
) -> Result<(), EngineError> {
    let Some(update) = update_for(agent, event) else {
        return Ok(());
    };
    if let Some(task_id) = session_task(hooks, principal, agent, event).await? {
        hooks.sessions.deliver(&task_id, update);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind) -> HookEvent {
        HookEvent {
            kind,
            session_id: "s".into(),
            cwd: Some("/w".into()),
            turn_id: None,
        }
    }

    #[test]
    fn needs_you_and_finished_notify_and_nothing_else_does() {
        let Some(SessionUpdate::Status { text, .. }) = update_for(
            Agent::ClaudeCode,
            &event(EventKind::Notification {
                message: Some("Claude needs your permission to use Bash".into()),
            }),
        ) else {
            panic!()
        };
        let a = attention("claude_code_session", &text).unwrap();
        assert_eq!(a.kind, AttentionKind::NeedsYou);
        assert_eq!(a.summary, "Claude needs you");
        assert_eq!(a.body, "Claude needs your permission to use Bash");
        let Some(SessionUpdate::Status { text, .. }) =
            update_for(Agent::Codex, &event(EventKind::Stop { last_message: None }))
        else {
            panic!()
        };
        let a = attention("codex_session", &text).unwrap();
        assert_eq!(
            (a.kind, a.body.as_str()),
            (AttentionKind::Finished, "its turn")
        );
        assert!(attention("codex_session", "Started in /w").is_none());
        assert!(attention("run_command", "Claude needs you").is_none());
    }

    #[test]
    fn long_text_is_cut() {
        let long = "x".repeat(1000);
        assert_eq!(quoted(&long).chars().count(), QUOTED_CHARS + 1);
    }
}

//! Desktop notification policy: which task changes deserve a notification, and its text.
//! Pure (no D-Bus): the desktop shell feeds it changes and sends what it returns.
//!
//! Rules: a task that starts waiting for input always notifies (unless that kind is off or
//! do-not-disturb is on); a task that completes or fails notifies when it ran longer than the
//! threshold (default 10 s) or the window is not focused. Bodies come from agents: they are
//! escaped for the notification server's markup (`&`, `<`, `>`) and truncated. An agent
//! session's news ("Claude needs you", "Claude finished": [`crate::hooks::sessions::attention`])
//! notifies like input (needs you) and completion (finished), whether or not the window has focus.

use serde::{Deserialize, Serialize};

use taskdeck_engine::{TaskStatus, feed::Change};

/// User settings for notifications (persisted by the desktop shell as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NotificationSettings {
    pub input_required: bool,
    pub completed: bool,
    pub failed: bool,
    /// Notify completion/failure of tasks that ran at least this long, in ms (always when the
    /// window is not focused).
    pub threshold_ms: u64,
    /// Nothing at all while on.
    pub do_not_disturb: bool,
}

impl Default for NotificationSettings {
    fn default() -> Self {
        NotificationSettings {
            input_required: true,
            completed: true,
            failed: true,
            threshold_ms: 10_000,
            do_not_disturb: false,
        }
    }
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub task_id: String,
    pub summary: String,
    /// Escaped for the notification server's markup.
    pub body: String,
}

/// Longest notification body, in characters.
pub const MAX_BODY_CHARS: usize = 200;

/// Escapes `&`, `<` and `>` (the notification spec's body markup) and truncates to
/// [`MAX_BODY_CHARS`] characters.
pub fn escape_body(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_BODY_CHARS * 2));
    for (i, c) in text.chars().enumerate() {
        if i == MAX_BODY_CHARS {
            out.push('…');
            break;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The notification for `change`, if any. `window_focused`: the Taskdeck window has focus.
pub fn notice_for(
    change: &Change,
    settings: &NotificationSettings,
    window_focused: bool,
) -> Option<Notice> {
    if settings.do_not_disturb {
        return None;
    }
    if change.event.kind == "statusMessage" {
        return session_notice(change, settings);
    }
    if change.event.kind != "status" {
        return None;
    }
    let task = &change.task;
    let ran_ms = (task.last_updated_at_ms - task.created_at_ms).max(0) as u64;
    let long_or_unseen = ran_ms >= settings.threshold_ms || !window_focused;
    let (summary, body) = match task.status {
        TaskStatus::InputRequired if settings.input_required => {
            let question = task
                .input_requests
                .values()
                .find_map(|r| r.pointer("/params/message").and_then(|m| m.as_str()))
                .unwrap_or("A task needs your answer");
            (
                format!("{} needs input ({})", task.tool, task.principal),
                question.to_string(),
            )
        }
        TaskStatus::Completed if settings.completed && long_or_unseen => {
            let is_error = task
                .result
                .as_ref()
                .and_then(|r| r.get("isError"))
                .and_then(|v| v.as_bool())
                == Some(true);
            let text = task
                .result
                .as_ref()
                .and_then(|r| r.pointer("/content/0/text"))
                .and_then(|t| t.as_str())
                .unwrap_or("")
                .to_string();
            let what = if is_error {
                "completed with error"
            } else {
                "completed"
            };
            (format!("{} {what}", task.tool), text)
        }
        TaskStatus::Failed if settings.failed && long_or_unseen => {
            let message = task
                .error
                .as_ref()
                .and_then(|e| e.get("message"))
                .and_then(|m| m.as_str())
                .unwrap_or("failed");
            (format!("{} failed", task.tool), message.to_string())
        }
        _ => return None,
    };
    Some(Notice {
        task_id: task.task_id.clone(),
        summary: escape_body(&summary),
        body: escape_body(&body),
    })
}

/// The notification for an agent session's status message, if it calls for one.
fn session_notice(change: &Change, settings: &NotificationSettings) -> Option<Notice> {
    use crate::hooks::sessions::{AttentionKind, attention};
    let message = change.event.data.get("statusMessage")?.as_str()?;
    let news = attention(&change.task.tool, message)?;
    let wanted = match news.kind {
        AttentionKind::NeedsYou => settings.input_required,
        AttentionKind::Finished => settings.completed,
    };
    wanted.then(|| Notice {
        task_id: change.task.task_id.clone(),
        summary: escape_body(&news.summary),
        body: escape_body(&news.body),
    })
}

#[cfg(test)]
mod tests {
    use std::{collections::BTreeMap, sync::Arc};

    use serde_json::json;

    use super::*;
    use taskdeck_engine::{TaskRecord, TimelineEvent};

    fn change(status: TaskStatus, ran_ms: i64) -> Change {
        let mut input_requests = BTreeMap::new();
        if status == TaskStatus::InputRequired {
            input_requests.insert("k".into(), json!({"method": "elicitation/create", "params": {"message": "Deploy <b>now</b> & then?"}}));
        }
        let task = TaskRecord {
            task_id: "t1".into(),
            seq: 1,
            tool: "request_approval".into(),
            arguments: json!({}),
            principal: "agent".into(),
            status,
            status_message: None,
            created_at_ms: 1_000,
            last_updated_at_ms: 1_000 + ran_ms,
            ttl_ms: None,
            poll_interval_ms: 1000,
            progress: None,
            result: Some(json!({"content": [{"type": "text", "text": "done"}], "isError": false})),
            error: Some(json!({"code": -32603, "message": "boom"})),
            input_requests,
            cancel_requested: false,
        };
        let event = TimelineEvent {
            id: 1,
            task_id: "t1".into(),
            at_ms: 0,
            kind: "status".into(),
            data: json!({}),
        };
        Change {
            event,
            task: Arc::new(task),
        }
    }

    #[test]
    fn input_always_notifies_and_is_escaped() {
        let n = notice_for(
            &change(TaskStatus::InputRequired, 0),
            &NotificationSettings::default(),
            true,
        )
        .unwrap();
        assert_eq!(n.body, "Deploy &lt;b&gt;now&lt;/b&gt; &amp; then?");
        assert_eq!(n.summary, "request_approval needs input (agent)");
    }

    #[test]
    fn completion_needs_a_long_run_or_an_unfocused_window() {
        let s = NotificationSettings::default();
        assert!(notice_for(&change(TaskStatus::Completed, 2_000), &s, true).is_none());
        assert!(notice_for(&change(TaskStatus::Completed, 2_000), &s, false).is_some());
        assert!(notice_for(&change(TaskStatus::Completed, 12_000), &s, true).is_some());
        assert_eq!(
            notice_for(&change(TaskStatus::Failed, 12_000), &s, true)
                .unwrap()
                .body,
            "boom"
        );
        assert!(notice_for(&change(TaskStatus::Cancelled, 12_000), &s, false).is_none());
    }

    #[test]
    fn settings_switch_kinds_off_and_dnd_silences_all() {
        let off = NotificationSettings {
            input_required: false,
            ..Default::default()
        };
        assert!(notice_for(&change(TaskStatus::InputRequired, 0), &off, false).is_none());
        let dnd = NotificationSettings {
            do_not_disturb: true,
            ..Default::default()
        };
        assert!(notice_for(&change(TaskStatus::Failed, 60_000), &dnd, false).is_none());
    }

    #[test]
    fn agent_sessions_notify_when_they_need_you_or_finish() {
        let mut c = change(TaskStatus::Working, 0);
        let mut task = TaskRecord::clone(&c.task);
        task.tool = "claude_code_session".into();
        c.task = Arc::new(task);
        c.event.kind = "statusMessage".into();
        c.event.data =
            json!({"statusMessage": "Claude needs you: Claude needs your permission to use Bash"});
        let s = NotificationSettings::default();
        let n = notice_for(&c, &s, true).unwrap();
        assert_eq!(
            (n.summary.as_str(), n.body.as_str()),
            (
                "Claude needs you",
                "Claude needs your permission to use Bash"
            )
        );
        c.event.data = json!({"statusMessage": "Claude finished: All tests pass"});
        assert_eq!(notice_for(&c, &s, true).unwrap().summary, "Claude finished");
        c.event.data = json!({"statusMessage": "Working on: fix the build"});
        assert!(notice_for(&c, &s, false).is_none());
    }

    #[test]
    fn long_bodies_are_truncated() {
        let long = "x".repeat(500);
        let e = escape_body(&long);
        assert_eq!(e.chars().count(), MAX_BODY_CHARS + 1);
        assert!(e.ends_with('…'));
    }
}

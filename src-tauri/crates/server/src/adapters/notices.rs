//! Desktop notification policy: which task changes deserve a notification, and its text.
//! Pure (no D-Bus): the desktop shell feeds it changes and sends what it returns.
//!
//! Rules: a task that starts waiting for input always notifies (unless that kind is off or
//! do-not-disturb is on); a task that completes or fails notifies when it ran longer than the
//! threshold (default 10 s) since it was created or a person last answered it, or the window
//! is not focused. Bodies come from agents: they are
//! escaped for the notification server's markup (`&`, `<`, `>`) and truncated. An agent
//! session's news ("Claude needs you", "Claude finished": [`crate::hooks::sessions::attention`])
//! notifies like input (needs you) and completion (finished), whether or not the window has focus.
//!
//! Approvals (see [`pending_approvals`] and [`approval_notice`]): a task waiting on an approval
//! question gets one notification per question, with Approve / Deny buttons when the
//! notification server supports actions, the call's M of N ("1 of 2 approvals") and its
//! expiry ("expires in 5 min (14:05)"); a question that needs a form only opens the window.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, FixedOffset, Offset};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use taskdeck_engine::{TaskRecord, TaskStatus, feed::Change};

use super::task_title::{one_line, task_title};

/// User settings for notifications (persisted by the desktop shell as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NotificationSettings {
    /// Notify when a task needs an answer (turns `input_required`), and when an agent session
    /// needs the user. Default `true`.
    pub input_required: bool,
    /// Notify when a task completes (subject to `threshold_ms`), and when an agent session
    /// finishes. Default `true`.
    pub completed: bool,
    /// Notify when a task fails (subject to `threshold_ms`). Default `true`.
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
    /// The task it is about (a click shows it).
    pub task_id: String,
    /// Plain text: the notification spec's summary takes no markup, so nothing is escaped.
    pub summary: String,
    /// Escaped for the notification server's markup.
    pub body: String,
}

/// Longest notification body, in characters.
pub const MAX_BODY_CHARS: usize = 200;

/// Escapes `&`, `<` and `>` (the notification spec's body markup), shows controls but `\n` as
/// spaces and writes out the characters that hide or reorder text (`\u{202e}`: a call with Approve
/// beside it reads as what would run), and truncates to [`MAX_BODY_CHARS`] characters.
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
            c if c != '\n' && crate::tools::process::hidden(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Where an approval question carries its call: `params._meta["taskdeck/approval"]` of the
/// stored `elicitation/create` request (shape in the approval plan: server, tool, principal,
/// arguments, editable, expiresAtMs, required, approvedBy, ...).
pub const APPROVAL_META_POINTER: &str = "/params/_meta/taskdeck~1approval";

/// What an approval question is, for its notification.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ApprovalKind<'a> {
    /// A tool call waiting for the human (gateway call, `run_command`, hook, ...): its
    /// `taskdeck/approval` metadata.
    Call(&'a Value),
    /// `request_approval`, an agent's own form. `fields`: its form asks for something (then
    /// only the window can answer it).
    Question {
        /// Its `requestedSchema` has properties: only the window can answer it.
        fields: bool,
    },
}

/// A button of an approval notification. [`NoticeAction::id`] is the action key sent to the
/// notification server (`default` is what a click on the notification invokes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeAction {
    /// Shows the window on the task.
    Open,
    /// Approves without opening the window.
    Approve,
    /// Denies without opening the window (no reason).
    Deny,
    /// Shows the window on the task, to edit the call before approving it.
    Edit,
}

impl NoticeAction {
    /// Every action, for [`NoticeAction::from_id`].
    const ALL: [NoticeAction; 4] = [
        NoticeAction::Open,
        NoticeAction::Approve,
        NoticeAction::Deny,
        NoticeAction::Edit,
    ];

    /// The action key on the bus (Desktop Notifications spec, `Notify`'s `actions`).
    pub fn id(self) -> &'static str {
        match self {
            NoticeAction::Open => "default",
            NoticeAction::Approve => "approve",
            NoticeAction::Deny => "deny",
            NoticeAction::Edit => "edit",
        }
    }

    /// The button's label.
    pub fn label(self) -> &'static str {
        match self {
            NoticeAction::Open => "Open",
            NoticeAction::Approve => "Approve",
            NoticeAction::Deny => "Deny",
            NoticeAction::Edit => "Edit…",
        }
    }

    /// The action an `ActionInvoked` key names; `None` for keys this policy never sends.
    pub fn from_id(id: &str) -> Option<NoticeAction> {
        Self::ALL.into_iter().find(|a| a.id() == id)
    }
}

/// The notification for one pending approval question.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalNotice {
    /// The task waiting for the approval.
    pub task_id: String,
    /// The input request's key (`approve`, `approve-2`, `approval`, ...).
    pub key: String,
    /// What is approved, for the texts that follow ("write_file on fs").
    pub subject: String,
    /// Plain text, like [`Notice::summary`].
    pub summary: String,
    /// Escaped; ends with the M of N and the countdown lines when they apply.
    pub body: String,
    /// The actions to send, in order; always starts with [`NoticeAction::Open`] (the click).
    pub actions: Vec<NoticeAction>,
    /// When the question expires (Unix ms); `None`: never.
    pub expires_at_ms: Option<i64>,
}

/// Classifies input request `key` of `task`: an approval question, or `None` for any other
/// request. A request with `taskdeck/approval` metadata is a call; `request_approval`'s key
/// `approval` is a question.
pub fn approval_kind<'a>(
    task: &TaskRecord,
    key: &str,
    request: &'a Value,
) -> Option<ApprovalKind<'a>> {
    if let Some(meta) = request.pointer(APPROVAL_META_POINTER) {
        return Some(ApprovalKind::Call(meta));
    }
    if task.tool == "request_approval" && key == "approval" {
        let fields = request
            .pointer("/params/requestedSchema/properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        return Some(ApprovalKind::Question { fields });
    }
    None
}

/// The outstanding approval questions of `task` as `(key, request)`, in key order; empty unless
/// the task is `input_required`.
pub fn pending_approvals(task: &TaskRecord) -> Vec<(&str, &Value)> {
    if task.status != TaskStatus::InputRequired {
        return Vec::new();
    }
    task.input_requests
        .iter()
        .filter(|(k, r)| approval_kind(task, k, r).is_some())
        .map(|(k, r)| (k.as_str(), r))
        .collect()
}

/// The notification for approval question `key` of `task` (`request` is its stored input
/// request). `now_ms` and `local` (the user's UTC offset) place the countdown;
/// `actions_supported`: the notification server has the `actions` capability (else the only
/// action is the click, which opens the window). `human`: who answers from this desktop; when
/// they already approved a call that needs more humans, Approve is not offered again.
pub fn approval_notice(
    task: &TaskRecord,
    key: &str,
    request: &Value,
    now_ms: i64,
    local: FixedOffset,
    actions_supported: bool,
    human: &str,
) -> ApprovalNotice {
    let kind = approval_kind(task, key, request).unwrap_or(ApprovalKind::Question { fields: true });
    let message = request
        .pointer("/params/message")
        .and_then(Value::as_str)
        .unwrap_or("A task needs your approval");
    let mut actions = vec![NoticeAction::Open];
    let (subject, summary, body, expires_at_ms) = match kind {
        ApprovalKind::Call(meta) => {
            let text = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or("");
            let (server, tool) = (text("server"), text("tool"));
            let subject = if server.is_empty() || tool.is_empty() {
                task.tool.clone()
            } else {
                format!("{tool} on {server}")
            };
            let principal = match text("principal") {
                "" => task.principal.as_str(),
                p => p,
            };
            let call = match meta.get("arguments") {
                Some(args) => format!(
                    "{principal}: {}",
                    serde_json::to_string(args).unwrap_or_default()
                ),
                None => message.to_string(),
            };
            let mut extra = Vec::new();
            let required = meta.get("required").and_then(Value::as_u64).unwrap_or(1);
            let approved_by: Vec<&str> = meta
                .get("approvedBy")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if required > 1 {
                extra.push(approvals_so_far(&approved_by, required));
            }
            let expires = meta.get("expiresAtMs").and_then(Value::as_i64);
            if let Some(at) = expires {
                extra.push(countdown(at, now_ms, local));
            }
            // A call that masks values may hide its command there: it is approved where it
            // can be read whole (the window's "Show hidden values"), not from here.
            let hides = meta.get("hiddenValues").and_then(Value::as_bool) == Some(true);
            if hides {
                extra.push(
                    "Values are hidden: open it to read the call whole before approving.".into(),
                );
            }
            if actions_supported {
                if !approved_by.contains(&human) && !hides {
                    actions.push(NoticeAction::Approve);
                }
                actions.push(NoticeAction::Deny);
                if meta.get("editable").and_then(Value::as_bool) != Some(false) {
                    actions.push(NoticeAction::Edit);
                }
            }
            let mut body = escape_body(&call);
            for line in extra {
                body.push('\n');
                body.push_str(&escape_body(&line));
            }
            (
                subject.clone(),
                format!("Approve {subject}?"),
                body,
                expires,
            )
        }
        ApprovalKind::Question { fields } => {
            if actions_supported && !fields {
                actions.extend([NoticeAction::Approve, NoticeAction::Deny]);
            }
            (
                task.tool.clone(),
                needs_input_summary(task, message),
                escape_body(message),
                None,
            )
        }
    };
    ApprovalNotice {
        task_id: task.task_id.clone(),
        key: key.to_string(),
        summary,
        subject,
        body,
        actions,
        expires_at_ms,
    }
}

/// Most characters of a task's title in a notification's summary (its closing "…" included).
const SUMMARY_TITLE_CHARS: usize = 80;

/// How a completed task ended, in the words of the window's badge: "declined" or "denied by
/// policy" (a call Taskdeck did not make: [`crate::approvals::refusal`]), "completed with
/// error" (`isError`), else "completed".
fn completed_how(result: Option<&Value>) -> &'static str {
    let result = result.and_then(Value::as_object);
    let mark = result
        .and_then(|r| r.get("_meta"))
        .and_then(|m| m.get(crate::approvals::refusal::KEY))
        .and_then(Value::as_str);
    match mark {
        Some("declined") => "declined",
        Some("denied") => "denied by policy",
        _ if result.and_then(|r| r.get("isError")) == Some(&Value::Bool(true)) => {
            "completed with error"
        }
        _ => "completed",
    }
}

/// The task's title ([`task_title`]: a job's name, an approval's question, a command line),
/// cut to [`SUMMARY_TITLE_CHARS`].
fn summary_title(task: &TaskRecord) -> String {
    let title = task_title(&task.tool, &task.arguments);
    if title.chars().count() <= SUMMARY_TITLE_CHARS {
        return title;
    }
    let kept: String = title.chars().take(SUMMARY_TITLE_CHARS - 1).collect();
    format!("{}…", kept.trim_end())
}

/// "agent needs input: make deploy": who waits and for what; "agent needs input" when what
/// is asked (`question`, the notification's body) titles the task itself (request_approval):
/// said once, not twice.
fn needs_input_summary(task: &TaskRecord, question: &str) -> String {
    match one_line(question) == task_title(&task.tool, &task.arguments) {
        true => format!("{} needs input", task.principal),
        false => format!("{} needs input: {}", task.principal, summary_title(task)),
    }
}

/// "1 of 2 approvals (alice)": how many distinct humans approved so far of the `required`.
pub fn approvals_so_far(approved_by: &[&str], required: u64) -> String {
    let mut text = format!("{} of {required} approvals", approved_by.len());
    if !approved_by.is_empty() {
        text.push_str(&format!(" ({})", approved_by.join(", ")));
    }
    text
}

/// The expiry as a notification can show it (it does not tick): "expires in 5 min (14:05)",
/// "expires in 2 h 10 min (16:15)", "expires in 3 d (Fri 14:05)", "expires in less than a
/// minute (14:05)" or "expired". Minutes round up; the clock time is in `local`.
pub fn countdown(expires_at_ms: i64, now_ms: i64, local: FixedOffset) -> String {
    let left_ms = expires_at_ms - now_ms;
    if left_ms <= 0 {
        return "expired".into();
    }
    let Some(at) = DateTime::from_timestamp_millis(expires_at_ms).map(|t| t.with_timezone(&local))
    else {
        return "expired".into();
    };
    let minutes = (left_ms + 59_999) / 60_000;
    let (days, hours, mins) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    let (left, clock) = if left_ms < 60_000 {
        ("less than a minute".to_string(), at.format("%H:%M"))
    } else if minutes < 60 {
        (format!("{minutes} min"), at.format("%H:%M"))
    } else if days == 0 {
        let h = minutes / 60;
        let left = if mins == 0 {
            format!("{h} h")
        } else {
            format!("{h} h {mins} min")
        };
        (left, at.format("%H:%M"))
    } else {
        let left = if hours == 0 {
            format!("{days} d")
        } else {
            format!("{days} d {hours} h")
        };
        (left, at.format("%a %H:%M"))
    };
    format!("expires in {left} ({clock})")
}

/// The user's UTC offset now (the system's time zone), for [`countdown`].
pub fn local_offset() -> FixedOffset {
    chrono::Local::now().offset().fix()
}

/// The short notification shown when answering from a notification failed: `action` is what
/// was tried (Approve or Deny), `why` the reason for people ("it was already answered").
pub fn answer_failed_notice(notice: &ApprovalNotice, action: NoticeAction, why: &str) -> Notice {
    let verb = match action {
        NoticeAction::Deny => "deny",
        _ => "approve",
    };
    Notice {
        task_id: notice.task_id.clone(),
        summary: format!("Could not {verb} {}", notice.subject),
        body: escape_body(why),
    }
}

/// The notification policy over the change feed, in order: each change's notification, with a
/// task's run time (against `threshold_ms`) counted from the moment a person last answered
/// it, not from its creation, so the end of a call someone has just decided in the focused
/// window is no news to them however long the question waited. Holds one entry per task
/// waiting for input or answered and still running.
#[derive(Debug, Default)]
pub struct ChangeNotices {
    /// Tasks last seen `input_required`.
    waiting: HashSet<String>,
    /// Tasks that left `input_required`, and when (ms since the epoch).
    answered_at: HashMap<String, i64>,
}

impl ChangeNotices {
    /// The notification for `change`, if any. `window_focused`: the Taskdeck window has focus.
    pub fn notice(
        &mut self,
        change: &Change,
        settings: &NotificationSettings,
        window_focused: bool,
    ) -> Option<Notice> {
        let since = self.running_since(change);
        notice_since(change, settings, window_focused, since)
    }

    /// Takes `change` into account and returns when its task's run counts from (ms since the
    /// epoch): when it last stopped waiting for input (its end, if it ended waiting), else its
    /// creation.
    fn running_since(&mut self, change: &Change) -> i64 {
        let t = &change.task;
        let id = &t.task_id;
        if change.event.kind == "deleted" {
            self.waiting.remove(id);
            self.answered_at.remove(id);
            return t.created_at_ms;
        }
        if change.event.kind == "inputAnswered" {
            // Also for a question asked before this process started watching (a task resumed
            // at start), which this policy never saw waiting.
            self.answered_at.insert(id.clone(), change.event.at_ms);
        }
        if t.status == TaskStatus::InputRequired {
            self.waiting.insert(id.clone());
        } else if self.waiting.remove(id) {
            self.answered_at.insert(id.clone(), t.last_updated_at_ms);
        }
        let since = self.answered_at.get(id).copied();
        if t.status.is_terminal() {
            self.answered_at.remove(id);
        }
        since.unwrap_or(t.created_at_ms)
    }
}

/// The notification for `change`, if any, its task's run counted from `running_since_ms`.
/// `window_focused`: the Taskdeck window has focus.
fn notice_since(
    change: &Change,
    settings: &NotificationSettings,
    window_focused: bool,
    running_since_ms: i64,
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
    let ran_ms = (task.last_updated_at_ms - running_since_ms).max(0) as u64;
    let long_or_unseen = ran_ms >= settings.threshold_ms || !window_focused;
    let (summary, body) = match task.status {
        TaskStatus::InputRequired if settings.input_required => {
            return Some(needs_input_notice(task));
        }
        TaskStatus::Completed if settings.completed && long_or_unseen => {
            let text = task
                .result
                .as_ref()
                .and_then(|r| r.pointer("/content/0/text"))
                .and_then(|t| t.as_str())
                .unwrap_or("")
                .to_string();
            let what = completed_how(task.result.as_ref());
            (format!("{} {what}", summary_title(task)), text)
        }
        TaskStatus::Failed if settings.failed && long_or_unseen => {
            let message = task
                .error
                .as_ref()
                .and_then(|e| e.get("message"))
                .and_then(|m| m.as_str())
                .unwrap_or("failed");
            (
                format!("{} failed", summary_title(task)),
                message.to_string(),
            )
        }
        _ => return None,
    };
    Some(Notice {
        task_id: task.task_id.clone(),
        summary,
        body: escape_body(&body),
    })
}

/// "agent needs input: make deploy" / its first question: the notification of a task waiting
/// for input (one whose questions are approvals is notified by [`approval_notice`] instead).
pub fn needs_input_notice(task: &TaskRecord) -> Notice {
    let question = task
        .input_requests
        .values()
        .find_map(|r| r.pointer("/params/message").and_then(|m| m.as_str()))
        .unwrap_or("A task needs your answer");
    Notice {
        task_id: task.task_id.clone(),
        summary: needs_input_summary(task, question),
        body: escape_body(question),
    }
}

/// How many tasks found waiting for input when notifications start are notified one by one;
/// with more, one notification ([`waiting_at_start_notice`]) says how many wait.
pub const WAITING_AT_START_EACH: usize = 3;

/// The one notification for `waiting` tasks (more than [`WAITING_AT_START_EACH`], newest
/// first) found waiting for input when notifications start (Taskdeck started, or restarted
/// with questions still open): "5 tasks need your answer", the first three titles in the body.
/// Its `task_id` is empty: a click shows the window, not one task. `None` for no task.
pub fn waiting_at_start_notice(waiting: &[TaskRecord], total: u64) -> Option<Notice> {
    if waiting.is_empty() {
        return None;
    }
    let total = total.max(waiting.len() as u64);
    let mut lines: Vec<String> = waiting
        .iter()
        .take(WAITING_AT_START_EACH)
        .map(|t| format!("{}: {}", t.principal, one_line(&summary_title(t))))
        .collect();
    let more = total - lines.len() as u64;
    if more > 0 {
        lines.push(format!("and {more} more"));
    }
    let (s, verb) = if total == 1 {
        ("", "needs")
    } else {
        ("s", "need")
    };
    Some(Notice {
        task_id: String::new(),
        summary: format!("{total} task{s} {verb} your answer"),
        body: escape_body(&lines.join("\n")),
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
        summary: news.summary.clone(),
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
            arguments: json!({"message": "Deploy <b>now</b> & then?"}),
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
        let n = ChangeNotices::default()
            .notice(
                &change(TaskStatus::InputRequired, 0),
                &NotificationSettings::default(),
                true,
            )
            .unwrap();
        assert_eq!(n.body, "Deploy &lt;b&gt;now&lt;/b&gt; &amp; then?");
        assert_eq!(
            n.summary, "agent needs input",
            "the question titles its task: said once, in the body, not twice"
        );
    }

    #[test]
    fn summaries_name_the_task_by_its_title_cut_to_80_characters() {
        let s = NotificationSettings::default();
        let job = |name: String| {
            let mut done = change(TaskStatus::Completed, 12_000);
            let task = Arc::make_mut(&mut done.task);
            task.tool = "external".into();
            task.arguments = json!({ "name": name });
            done
        };
        assert_eq!(
            ChangeNotices::default()
                .notice(&job("nightly export".into()), &s, true)
                .unwrap()
                .summary,
            "nightly export completed"
        );
        let summary = ChangeNotices::default()
            .notice(&job("x".repeat(300)), &s, true)
            .unwrap()
            .summary;
        assert_eq!(summary, format!("{}… completed", "x".repeat(79)));
        // A summary is plain text: never escaped (the body is).
        assert_eq!(
            ChangeNotices::default()
                .notice(&job("a <b> & c".into()), &s, true)
                .unwrap()
                .summary,
            "a <b> & c completed"
        );
    }

    #[test]
    fn completion_needs_a_long_run_or_an_unfocused_window() {
        let s = NotificationSettings::default();
        assert!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::Completed, 2_000), &s, true)
                .is_none()
        );
        assert!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::Completed, 2_000), &s, false)
                .is_some()
        );
        assert!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::Completed, 12_000), &s, true)
                .is_some()
        );
        assert_eq!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::Failed, 12_000), &s, true)
                .unwrap()
                .body,
            "boom"
        );
        assert!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::Cancelled, 12_000), &s, false)
                .is_none()
        );
    }

    /// A question that waited 12 s, then: its end right after the answer is no news in the
    /// focused window (denied, or run a second), and is news when the run after it is long
    /// or the window is not focused.
    #[test]
    fn a_run_counts_from_the_answer_not_from_the_question() {
        let s = NotificationSettings::default();
        let at = |status: TaskStatus, ran_ms: i64| change(status, ran_ms);
        let ended = |after_answer_ms: Option<i64>, end: TaskStatus, focused: bool| {
            let mut notices = ChangeNotices::default();
            assert!(
                notices
                    .notice(&at(TaskStatus::InputRequired, 0), &s, focused)
                    .is_some()
            );
            let end_at = match after_answer_ms {
                Some(ms) => {
                    notices.notice(&at(TaskStatus::Working, 12_000), &s, focused);
                    12_000 + ms
                }
                None => 12_000,
            };
            notices.notice(&at(end, end_at), &s, focused).is_some()
        };
        assert!(!ended(None, TaskStatus::Completed, true), "denied");
        assert!(!ended(Some(1_000), TaskStatus::Completed, true));
        assert!(!ended(Some(1_000), TaskStatus::Failed, true));
        assert!(ended(Some(11_000), TaskStatus::Completed, true));
        assert!(ended(Some(1_000), TaskStatus::Completed, false));
        assert!(ended(None, TaskStatus::Completed, false));
    }

    /// A question asked before notifications started (a task resumed at start): this policy
    /// never saw it waiting, and its answer still restarts the run's clock.
    #[test]
    fn an_answer_to_a_question_asked_before_start_restarts_the_clock() {
        let s = NotificationSettings::default();
        let mut notices = ChangeNotices::default();
        let mut answered = change(TaskStatus::Working, 60_000);
        answered.event.kind = "inputAnswered".into();
        answered.event.at_ms = 61_000;
        assert!(notices.notice(&answered, &s, true).is_none());
        assert!(
            notices
                .notice(&change(TaskStatus::Completed, 61_000), &s, true)
                .is_none(),
            "ended a second after the person answered it in the focused window"
        );
        let mut fresh = ChangeNotices::default();
        assert!(
            fresh
                .notice(&change(TaskStatus::Completed, 61_000), &s, true)
                .is_some(),
            "without the answer, a 61 s run is news"
        );
    }

    #[test]
    fn tasks_waiting_at_start_are_summed_up_in_one_notification() {
        let task = |id: &str, who: &str, name: &str| {
            let mut t = (*change(TaskStatus::InputRequired, 0).task).clone();
            t.task_id = id.into();
            t.principal = who.into();
            t.tool = "external".into();
            t.arguments = json!({ "name": name });
            t
        };
        assert_eq!(waiting_at_start_notice(&[], 0), None);
        let waiting = [
            task("a", "claude", "deploy <prod>"),
            task("b", "codex", "migrate"),
            task("c", "claude", "backup"),
            task("d", "claude", "lint"),
        ];
        let n = waiting_at_start_notice(&waiting, 9).unwrap();
        assert_eq!(n.task_id, "", "a click shows the window, not one task");
        assert_eq!(n.summary, "9 tasks need your answer");
        assert_eq!(
            n.body,
            "claude: deploy &lt;prod&gt;\ncodex: migrate\nclaude: backup\nand 6 more"
        );
        let one = waiting_at_start_notice(&waiting[..1], 1).unwrap();
        assert_eq!(one.summary, "1 task needs your answer");
        assert_eq!(one.body, "claude: deploy &lt;prod&gt;");
    }

    #[test]
    fn settings_switch_kinds_off_and_dnd_silences_all() {
        let off = NotificationSettings {
            input_required: false,
            ..Default::default()
        };
        assert!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::InputRequired, 0), &off, false)
                .is_none()
        );
        let dnd = NotificationSettings {
            do_not_disturb: true,
            ..Default::default()
        };
        assert!(
            ChangeNotices::default()
                .notice(&change(TaskStatus::Failed, 60_000), &dnd, false)
                .is_none()
        );
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
        let n = ChangeNotices::default().notice(&c, &s, true).unwrap();
        assert_eq!(
            (n.summary.as_str(), n.body.as_str()),
            (
                "Claude needs you",
                "Claude needs your permission to use Bash"
            )
        );
        c.event.data = json!({"statusMessage": "Claude finished: All tests pass"});
        assert_eq!(
            ChangeNotices::default()
                .notice(&c, &s, true)
                .unwrap()
                .summary,
            "Claude finished"
        );
        c.event.data = json!({"statusMessage": "Working on: fix the build"});
        assert!(ChangeNotices::default().notice(&c, &s, false).is_none());
    }

    #[test]
    fn long_bodies_are_truncated() {
        let long = "x".repeat(500);
        let e = escape_body(&long);
        assert_eq!(e.chars().count(), MAX_BODY_CHARS + 1);
        assert!(e.ends_with('…'));
    }

    #[test]
    fn a_body_writes_out_what_reorders_or_hides_its_text() {
        assert_eq!(
            escape_body("agent: {\"command\":\"echo safe \u{202e}; rm -rf ~\"}\nnext\u{2028}"),
            "agent: {\"command\":\"echo safe \\u{202e}; rm -rf ~\"}\nnext\\u{2028}"
        );
    }
}

#[cfg(test)]
mod approval_notice_tests {
    use std::collections::BTreeMap;

    use chrono::FixedOffset;
    use serde_json::{Value, json};

    use super::*;

    const NOW: i64 = 1_764_600_000_000; // 2025-12-01 14:40:00 UTC

    fn utc() -> FixedOffset {
        FixedOffset::east_opt(0).unwrap()
    }

    fn waiting(tool: &str, key: &str, request: Value) -> TaskRecord {
        TaskRecord {
            task_id: "t1".into(),
            seq: 1,
            tool: tool.into(),
            arguments: json!({}),
            principal: "agent".into(),
            status: TaskStatus::InputRequired,
            status_message: None,
            created_at_ms: NOW,
            last_updated_at_ms: NOW,
            ttl_ms: None,
            poll_interval_ms: 1000,
            progress: None,
            result: None,
            error: None,
            input_requests: BTreeMap::from([(key.to_string(), request)]),
            cancel_requested: false,
        }
    }

    fn call_request(meta: Value) -> Value {
        json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "claude-code wants to call Bash on claude-code with: ...",
            "requestedSchema": {"type": "object", "properties": {"reason": {"type": "string"}}},
            "_meta": {"taskdeck/approval": meta}}})
    }

    fn notice(task: &TaskRecord, actions: bool) -> ApprovalNotice {
        let (key, request) = pending_approvals(task)[0];
        approval_notice(task, key, request, NOW, utc(), actions, "admin")
    }

    #[test]
    fn a_call_offers_approve_deny_and_edit_with_its_arguments() {
        let meta = json!({"server": "claude-code", "tool": "Bash", "principal": "claude-code",
            "arguments": {"command": "rm -rf <build>"}, "editable": true, "required": 1,
            "approvedBy": [], "expiresAtMs": NOW + 5 * 60_000});
        let task = waiting("claude-code__Bash", "approve", call_request(meta));
        let n = notice(&task, true);
        assert_eq!(n.key, "approve");
        assert_eq!(n.summary, "Approve Bash on claude-code?");
        assert_eq!(
            n.body,
            "claude-code: {\"command\":\"rm -rf &lt;build&gt;\"}\nexpires in 5 min (14:45)"
        );
        assert_eq!(
            n.actions,
            [
                NoticeAction::Open,
                NoticeAction::Approve,
                NoticeAction::Deny,
                NoticeAction::Edit
            ]
        );
        assert_eq!(n.expires_at_ms, Some(NOW + 300_000));
    }

    #[test]
    fn without_the_actions_capability_only_the_click_opens() {
        let task = waiting(
            "fs__write_file",
            "approve",
            call_request(json!({"server": "fs", "tool": "write_file"})),
        );
        assert_eq!(notice(&task, false).actions, [NoticeAction::Open]);
    }

    #[test]
    fn a_call_that_cannot_be_edited_has_no_edit_button() {
        let task = waiting(
            "codex",
            "approve",
            call_request(json!({"server": "codex", "tool": "shell", "editable": false})),
        );
        assert_eq!(
            notice(&task, true).actions,
            [
                NoticeAction::Open,
                NoticeAction::Approve,
                NoticeAction::Deny
            ]
        );
    }

    #[test]
    fn a_call_with_hidden_values_is_approved_in_the_window_only() {
        let meta = json!({"server": "taskdeck", "tool": "run_command", "editable": false,
            "arguments": {"command": "deploy", "env": {"API_TOKEN": "[redacted]"}},
            "hiddenValues": true});
        let n = notice(
            &waiting("run_command", "approve-command", call_request(meta)),
            true,
        );
        assert_eq!(
            n.actions,
            [NoticeAction::Open, NoticeAction::Deny],
            "read whole before approving"
        );
        assert!(
            n.body
                .ends_with("\nValues are hidden: open it to read the call whole before approving."),
            "{}",
            n.body
        );
    }

    #[test]
    fn m_of_n_is_shown_and_a_human_does_not_approve_twice() {
        let meta = json!({"server": "k8s", "tool": "deploy", "arguments": {}, "required": 2,
            "approvedBy": ["admin"]});
        let task = waiting("k8s__deploy", "approve-2", call_request(meta));
        let n = notice(&task, true);
        assert_eq!(n.key, "approve-2");
        assert!(n.body.ends_with("\n1 of 2 approvals (admin)"), "{}", n.body);
        assert!(!n.actions.contains(&NoticeAction::Approve));
        assert!(n.actions.contains(&NoticeAction::Deny));
        let other = approval_notice(
            &task,
            "approve-2",
            &task.input_requests["approve-2"],
            NOW,
            utc(),
            true,
            "bob",
        );
        assert!(other.actions.contains(&NoticeAction::Approve));
        assert_eq!(approvals_so_far(&[], 2), "0 of 2 approvals");
    }

    #[test]
    fn a_form_without_approval_metadata_is_no_call() {
        let request = json!({"method": "elicitation/create", "params": {"mode": "form",
            "message": "admin wants to call write_file on fs with: {}",
            "requestedSchema": {"type": "object", "properties": {"alwaysAllow": {"type": "boolean"}, "reason": {"type": "string"}}}}});
        assert!(pending_approvals(&waiting("fs__write_file", "approve", request)).is_empty());
    }

    #[test]
    fn request_approval_gets_buttons_only_without_fields() {
        let form = |properties: Value| {
            json!({"method": "elicitation/create", "params": {"mode": "form",
            "message": "Deploy?", "requestedSchema": {"type": "object", "properties": properties}}})
        };
        let plain = waiting("request_approval", "approval", form(json!({})));
        let n = notice(&plain, true);
        assert_eq!(n.summary, "agent needs input: request_approval");
        assert_eq!(n.body, "Deploy?");
        assert_eq!(
            n.actions,
            [
                NoticeAction::Open,
                NoticeAction::Approve,
                NoticeAction::Deny
            ]
        );
        let with_fields = waiting(
            "request_approval",
            "approval",
            form(json!({"reason": {"type": "string"}})),
        );
        assert_eq!(notice(&with_fields, true).actions, [NoticeAction::Open]);
    }

    #[test]
    fn only_waiting_tasks_have_pending_approvals() {
        let mut task = waiting("fs__write_file", "approve", call_request(json!({})));
        assert_eq!(pending_approvals(&task).len(), 1);
        task.status = TaskStatus::Working;
        assert!(pending_approvals(&task).is_empty());
        let question = json!({"method": "elicitation/create", "params": {"message": "Name?"}});
        assert!(pending_approvals(&waiting("some_tool", "name", question)).is_empty());
    }

    #[test]
    fn countdown_texts() {
        let plus_two = FixedOffset::east_opt(2 * 3600).unwrap();
        assert_eq!(
            countdown(NOW + 5 * 60_000, NOW, utc()),
            "expires in 5 min (14:45)"
        );
        assert_eq!(
            countdown(NOW + 5 * 60_000, NOW, plus_two),
            "expires in 5 min (16:45)"
        );
        assert_eq!(
            countdown(NOW + 4 * 60_000 + 1, NOW, utc()),
            "expires in 5 min (14:44)"
        );
        assert_eq!(
            countdown(NOW + 30_000, NOW, utc()),
            "expires in less than a minute (14:40)"
        );
        assert_eq!(
            countdown(NOW + 90 * 60_000, NOW, utc()),
            "expires in 1 h 30 min (16:10)"
        );
        assert_eq!(
            countdown(NOW + 120 * 60_000, NOW, utc()),
            "expires in 2 h (16:40)"
        );
        assert_eq!(
            countdown(NOW + 3 * 86_400_000, NOW, utc()),
            "expires in 3 d (Thu 14:40)"
        );
        assert_eq!(
            countdown(NOW + 26 * 3_600_000, NOW, utc()),
            "expires in 1 d 2 h (Tue 16:40)"
        );
        assert_eq!(countdown(NOW, NOW, utc()), "expired");
    }

    #[test]
    fn action_ids_round_trip_and_failures_are_short() {
        for a in NoticeAction::ALL {
            assert_eq!(NoticeAction::from_id(a.id()), Some(a));
        }
        assert_eq!(NoticeAction::from_id("__closed"), None);
        let task = waiting(
            "fs__write_file",
            "approve",
            call_request(json!({"server": "fs", "tool": "write_file"})),
        );
        let n = notice(&task, true);
        let failed = answer_failed_notice(&n, NoticeAction::Deny, "it was already answered");
        assert_eq!(failed.summary, "Could not deny write_file on fs");
        assert_eq!(failed.body, "it was already answered");
        assert_eq!(failed.task_id, "t1");
    }
}

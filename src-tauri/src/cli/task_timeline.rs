//! The timeline `taskdeck tasks show` prints: one line per event, its local time and what
//! happened in words, as the window's timeline says it ("status: working → completed: …",
//! "alice approved the call (approve-command)"), not the event's JSON. Three or more reports in
//! a row (progress, status messages: a command's output lines) fold into one line saying how
//! many and the last, so a chatty job's reports do not push the rest out of view. Every line is
//! one terminal line, cut with "…" and its control characters written out
//! ([`task_table::clamp`]).

use serde_json::Value;

use super::task_table;

/// The most terminal columns an event's words take.
const EVENT_WIDTH: usize = 200;

/// The lines for `events` (the task's `timeline`, oldest first: `{at, kind, data}`), oldest
/// first. An answer to a question that approves a call (its request carries
/// `_meta["taskdeck/approval"]`) reads "approved the call" / "denied the call". `older`: the
/// task has events before these, so a run of reports that starts them may be longer than
/// counted ("at least 400 reports").
pub fn lines(events: &[Value], older: bool) -> Vec<String> {
    let approval_keys: Vec<String> = events
        .iter()
        .filter(|e| e["kind"] == "inputRequested")
        .filter(|e| {
            e.pointer("/data/request/params/_meta/taskdeck~1approval")
                .is_some()
        })
        .filter_map(|e| e["data"]["key"].as_str().map(String::from))
        .collect();
    let approval_keys = approval_keys.as_slice();
    let mut out = Vec::new();
    let mut i = 0;
    while i < events.len() {
        let run = events[i..].iter().take_while(|e| is_report(e)).count();
        if run >= 3 {
            let last = &events[i + run - 1];
            let said = describe(last, approval_keys);
            let at_least = if older && i == 0 { "at least " } else { "" };
            out.push(line(
                last,
                &format!("{at_least}{run} reports (progress, messages), the last: {said}"),
            ));
            i += run;
        } else {
            out.push(line(&events[i], &describe(&events[i], approval_keys)));
            i += 1;
        }
    }
    out
}

/// Whether `event` is a report of a running task (progress, a status message).
fn is_report(event: &Value) -> bool {
    matches!(event["kind"].as_str(), Some("progress" | "statusMessage"))
}

/// `  YYYY-MM-DD HH:MM:SS  words`, the time local (the event's own text when it is not a time).
fn line(event: &Value, words: &str) -> String {
    let at = event["at"].as_str().unwrap_or("");
    let when = chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| task_table::clamp(at, 30));
    format!("  {when}  {}", task_table::clamp(words, EVENT_WIDTH))
}

/// What `event` says, in words.
fn describe(event: &Value, approval_keys: &[String]) -> String {
    let d = &event["data"];
    let text = |key: &str| d[key].as_str().unwrap_or("");
    let key = text("key");
    let by = match text("by") {
        "" => "someone",
        by => by,
    };
    match event["kind"].as_str().unwrap_or("") {
        "created" => match text("tool") {
            "" => "created".into(),
            tool => format!("created: tool {tool}"),
        },
        "status" => {
            let moved = match text("from") {
                "" => format!("status: {}", text("to")),
                from => format!("status: {from} → {}", text("to")),
            };
            with_detail(moved, text("statusMessage"))
        }
        "progress" => {
            let number = |v: &Value| match v.as_f64() {
                Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => Some(format!("{}", x as i64)),
                Some(x) => Some(format!("{x:.1}")),
                None => None,
            };
            let done = match (number(&d["current"]), number(&d["total"])) {
                (Some(p), Some(t)) => format!("progress {p}/{t}"),
                (Some(p), None) => format!("progress {p}"),
                _ => "progress".into(),
            };
            with_detail(done, text("message"))
        }
        "statusMessage" => format!("message: {}", text("statusMessage")),
        "inputRequested" => with_detail(
            format!("asked for input ({key})"),
            d.pointer("/request/params/message")
                .and_then(Value::as_str)
                .unwrap_or(""),
        ),
        "inputAnswered" => {
            let approval = approval_keys.iter().any(|k| k == key);
            let verb = match (text("action"), approval) {
                ("accept", true) => "approved the call",
                ("accept", false) => "accepted",
                ("decline", true) | ("cancel", true) => "denied the call",
                ("decline", false) => "declined",
                ("cancel", false) => "dismissed",
                _ => "answered",
            };
            match approval {
                true => format!("{by} {verb} ({key})"),
                false => format!("{by} {verb} {key}"),
            }
        }
        "inputExpired" => format!("no answer came in time ({key})"),
        "inputSuperseded" => format!("input request withdrawn ({key}): no longer needed"),
        "hiddenValuesShown" => format!("{by} read the call whole (its hidden values shown)"),
        "cancelRequested" => with_detail(format!("cancel requested by {by}"), text("reason")),
        "ttl" => match d["ttlMs"].as_u64() {
            Some(ms) => with_detail(
                format!("retention: {} from creation", duration(ms)),
                text("reason"),
            ),
            None => with_detail("retention: unlimited".into(), text("reason")),
        },
        "deleted" => "removed from Taskdeck".into(),
        "decision" => decision(d),
        "argumentsEdited" => "call edited by the approver: it runs as edited".into(),
        "resumed" => with_detail("resumed".into(), text("reason")),
        kind => format!("{kind}: {}", super::terminal_text::plain_json(d)),
    }
}

/// A `decision` event (an approval's outcome): what was decided, by whom or what, and why.
fn decision(d: &Value) -> String {
    let text = |key: &str| d[key].as_str().unwrap_or("");
    let how = match text("decision") {
        "allow" => "allowed",
        "deny" => "denied",
        "ask" => "handed back to the agent's own prompt",
        other => other,
    };
    let call = [text("server"), text("tool")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let by = match text("decidedBy") {
        "human" => format!(" by {}", text("human")),
        "rule" => format!(" by rule {}", text("rule")),
        "default" => " by default".into(),
        "expiry" => " as nobody answered in time".into(),
        "abandoned" => " (abandoned)".into(),
        _ => String::new(),
    };
    let edited = if d["editedArguments"].is_null() {
        ""
    } else {
        " with edited arguments"
    };
    with_detail(
        format!("{how} {call}{by}{edited}").replace("  ", " "),
        text("reason"),
    )
}

/// `ms` in its two largest units, as the window says a duration: `1d 0h`, `2h 5m`, `3m 20s`,
/// `45s`.
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        86_400.. => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
        3600.. => format!("{}h {}m", s / 3600, s % 3600 / 60),
        60.. => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{s}s"),
    }
}

/// `words`, then `: detail` when there is one.
fn with_detail(words: String, detail: &str) -> String {
    match detail.trim() {
        "" => words,
        detail => format!("{words}: {detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(kind: &str, data: Value) -> Value {
        json!({"at": "2026-12-07T09:00:00Z", "kind": kind, "data": data})
    }

    #[test]
    fn events_read_as_words_and_runs_of_reports_fold() {
        let mut events = vec![
            ev("created", json!({"status": "working", "tool": "external"})),
            ev(
                "inputRequested",
                json!({"key": "approve-command", "request": {"params": {"message": "Run make?",
                    "_meta": {"taskdeck/approval": {"tool": "run_command"}}}}}),
            ),
            ev(
                "inputRequested",
                json!({"key": "note", "request": {"params": {"message": "Why?"}}}),
            ),
            ev(
                "inputAnswered",
                json!({"key": "note", "by": "bob", "action": "decline"}),
            ),
            ev(
                "inputAnswered",
                json!({"key": "approve-command", "by": "alice", "action": "accept"}),
            ),
        ];
        for n in 1..=40 {
            events.push(ev(
                "statusMessage",
                json!({"statusMessage": format!("line {n}")}),
            ));
        }
        events.push(ev(
            "progress",
            json!({"current": 3, "total": 4, "message": "linking"}),
        ));
        events.push(ev(
            "status",
            json!({"from": "working", "to": "completed", "statusMessage": "done\nin 3 s"}),
        ));
        events.push(ev("statusMessage", json!({"statusMessage": "one"})));
        events.push(ev("statusMessage", json!({"statusMessage": "two"})));
        let words: Vec<String> = lines(&events, false)
            .iter()
            .map(|l| l.split_once(":00  ").unwrap().1.to_string())
            .collect();
        assert_eq!(
            words,
            [
                "created: tool external",
                "asked for input (approve-command): Run make?",
                "asked for input (note): Why?",
                "bob declined note",
                "alice approved the call (approve-command)",
                "41 reports (progress, messages), the last: progress 3/4: linking",
                "status: working → completed: done in 3 s",
                "message: one",
                "message: two",
            ]
        );
        // Reports that start a timeline with older events may run on before it.
        let tail = lines(&events[6..], true);
        assert!(
            tail[0].ends_with(
                "at least 40 reports (progress, messages), the last: progress 3/4: linking"
            ),
            "{tail:?}"
        );
    }

    #[test]
    fn a_decision_says_what_by_whom_and_why() {
        let d = json!({"decision": "deny", "decidedBy": "human", "human": "bob",
            "server": "taskdeck", "tool": "run_command", "reason": "not on prod"});
        assert_eq!(
            decision(&d),
            "denied taskdeck run_command by bob: not on prod"
        );
        let d = json!({"decision": "allow", "decidedBy": "rule", "rule": "r1", "tool": "x"});
        assert_eq!(decision(&d), "allowed x by rule r1");
    }

    #[test]
    fn retention_reads_as_a_duration() {
        let said = |ms: u64| describe(&ev("ttl", json!({"ttlMs": ms})), &[]);
        assert_eq!(said(86_400_566), "retention: 1d 0h from creation");
        assert_eq!(said(7_500_000), "retention: 2h 5m from creation");
        assert_eq!(said(45_000), "retention: 45s from creation");
    }
}

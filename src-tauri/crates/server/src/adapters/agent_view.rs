//! What an MCP client is shown of a task that waits for input: only the questions it can
//! answer. Questions go only where they can be answered:
//!
//! - a request reserved for the human (`run_command`'s approval, and every approval a policy
//!   reserves for the human) is never shown to an agent;
//! - an `elicitation/create` request is shown only to a client that declared form elicitation
//!   (per request in 2026-07-28 `_meta`, at `initialize` in 2025-11-25): a client that cannot
//!   answer a question gives up when told `input_required` (the Inspector CLI exits, fastmcp
//!   raises), so it is not told.
//!
//! A task whose outstanding questions are all hidden reads `working` to that client, with a
//! statusMessage saying it waits for a human in Taskdeck; the client learns the outcome from the
//! result. The UI and `/v1` show the task as it is.

use serde_json::{Map, Value, json};

use taskdeck_engine::{TaskRecord, TaskStatus};

/// Who reads the task, as far as answering its questions goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    /// The client declared form elicitation, so its user can answer `elicitation/create`.
    pub can_elicit: bool,
    /// A person (the admin or a human principal, `Principal::is_human`): may answer
    /// human-only requests, so is shown them.
    pub human: bool,
}

/// True when `capabilities` (a `ClientCapabilities` object) declares form elicitation:
/// `elicitation: {}` (form is the default) or `elicitation: {form: ...}`; a client declaring
/// only `{url: ...}` cannot fill in a form.
pub fn declares_form_elicitation(capabilities: Option<&Value>) -> bool {
    match capabilities.and_then(|c| c.get("elicitation")) {
        Some(Value::Object(e)) => e.contains_key("form") || !e.contains_key("url"),
        _ => false,
    }
}

/// The outstanding input requests of `task` that `reader` may be shown and may answer, in key
/// order. `human_only`: the keys only the human may answer (`Engine::human_only_inputs`).
pub fn answerable<'a>(
    task: &'a TaskRecord,
    human_only: &[String],
    reader: Reader,
) -> Vec<(&'a String, &'a Value)> {
    task.input_requests
        .iter()
        .filter(|(key, request)| {
            let for_human = human_only.contains(key) && !reader.human;
            let needs_form =
                request.get("method").and_then(Value::as_str) == Some("elicitation/create");
            !for_human && (reader.can_elicit || !needs_form)
        })
        .collect()
}

/// The answers in `responses` that `reader` may give: those to questions it is shown
/// ([`answerable`]). The others are dropped, so they are ignored like answers to keys that are
/// not outstanding (SEP-2663 §Task Update Requests): a client is never told its answer failed,
/// and a question it was not asked still waits for the human.
pub fn answerable_responses(
    task: &TaskRecord,
    human_only: &[String],
    reader: Reader,
    mut responses: Map<String, Value>,
) -> Map<String, Value> {
    let shown: Vec<&String> = answerable(task, human_only, reader)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    responses.retain(|key, _| shown.contains(&key));
    responses
}

/// The status and statusMessage `reader` is shown: the task's own, or, when it waits only for
/// questions `reader` cannot answer, `working` with a message saying so.
pub fn status(
    task: &TaskRecord,
    human_only: &[String],
    reader: Reader,
) -> (TaskStatus, Option<String>) {
    if task.status != TaskStatus::InputRequired || !answerable(task, human_only, reader).is_empty()
    {
        return (task.status, task.status_message.clone());
    }
    (
        TaskStatus::Working,
        Some(waiting_message(task, human_only, reader)),
    )
}

/// "Waiting for approval in Taskdeck: <question>" (a human-only request) or "Waiting for a
/// human in Taskdeck: <question>"; the question on one line, at most 200 characters.
fn waiting_message(task: &TaskRecord, human_only: &[String], reader: Reader) -> String {
    let approval = !reader.human && task.input_requests.keys().any(|k| human_only.contains(k));
    let head = if approval {
        "Waiting for approval in Taskdeck"
    } else {
        "Waiting for a human in Taskdeck"
    };
    let question = task
        .input_requests
        .values()
        .find_map(|r| r.pointer("/params/message").and_then(Value::as_str))
        .map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .map(|l| {
            if l.chars().count() > 200 {
                format!("{}…", l.chars().take(200).collect::<String>())
            } else {
                l
            }
        });
    match question {
        Some(q) => format!("{head}: {q}"),
        None => head.to_string(),
    }
}

/// The SEP-2663 `DetailedTask` (`tasks/get`, `notifications/tasks`) as `reader` sees it: the
/// task's own when it can answer every outstanding question; otherwise `inputRequests` holds
/// only those it can answer, and with none left the task reads `working` (see the module doc).
pub fn detailed(task: &TaskRecord, human_only: &[String], reader: Reader) -> Map<String, Value> {
    let mut m = task.wire_detailed();
    if task.status != TaskStatus::InputRequired {
        return m;
    }
    let shown = answerable(task, human_only, reader);
    // Checked first so that this status always agrees with [`status`]'s.
    if shown.is_empty() {
        let (status, message) = status(task, human_only, reader);
        m.remove("inputRequests");
        m.insert("status".into(), json!(status.as_str()));
        m.insert("statusMessage".into(), json!(message));
        return m;
    }
    if shown.len() == task.input_requests.len() {
        return m;
    }
    let requests: Map<String, Value> = shown
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    m.insert("inputRequests".into(), Value::Object(requests));
    m
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn waiting(keys: &[(&str, &str)]) -> TaskRecord {
        let input_requests: BTreeMap<String, Value> = keys
            .iter()
            .map(|(k, message)| {
                (
                    k.to_string(),
                    json!({"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": {"type": "object", "properties": {}}}}),
                )
            })
            .collect();
        TaskRecord {
            task_id: "t".into(),
            seq: 1,
            tool: "run_command".into(),
            arguments: json!({}),
            principal: "agent".into(),
            status: TaskStatus::InputRequired,
            status_message: Some("Waiting for a human: deploy?".into()),
            created_at_ms: 0,
            last_updated_at_ms: 0,
            ttl_ms: None,
            poll_interval_ms: 1000,
            progress: None,
            result: None,
            error: None,
            input_requests,
            cancel_requested: false,
        }
    }

    const AGENT: Reader = Reader {
        can_elicit: true,
        human: false,
    };

    #[test]
    fn an_agent_never_sees_a_human_only_request() {
        let task = waiting(&[("approve-command", "Run `make deploy`\nin /srv")]);
        let human_only = vec!["approve-command".to_string()];
        let seen = detailed(&task, &human_only, AGENT);
        assert_eq!(seen["status"], "working");
        assert!(seen.get("inputRequests").is_none());
        assert_eq!(
            seen["statusMessage"],
            "Waiting for approval in Taskdeck: Run `make deploy` in /srv"
        );
        // The human sees it as it is.
        let person = Reader {
            can_elicit: true,
            human: true,
        };
        assert_eq!(detailed(&task, &human_only, person), task.wire_detailed());
    }

    #[test]
    fn a_client_without_form_elicitation_is_not_asked() {
        let task = waiting(&[("approval", "Ship it?")]);
        let reader = Reader {
            can_elicit: false,
            human: false,
        };
        let seen = detailed(&task, &[], reader);
        assert_eq!(seen["status"], "working");
        assert_eq!(
            seen["statusMessage"],
            "Waiting for a human in Taskdeck: Ship it?"
        );
        assert_eq!(detailed(&task, &[], AGENT), task.wire_detailed());
    }

    #[test]
    fn only_the_questions_a_client_may_answer_are_listed() {
        let task = waiting(&[("a", "first"), ("b", "second")]);
        let seen = detailed(&task, &["a".to_string()], AGENT);
        assert_eq!(seen["status"], "input_required");
        let keys: Vec<&String> = seen["inputRequests"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b"]);
    }

    #[test]
    fn the_detailed_status_agrees_with_the_status_for_every_reader() {
        let readers = [(false, false), (false, true), (true, false), (true, true)]
            .map(|(can_elicit, human)| Reader { can_elicit, human });
        let tasks = [
            waiting(&[("approval", "Ship it?")]),
            waiting(&[("a", "first"), ("b", "second")]),
            waiting(&[]),
        ];
        for task in &tasks {
            for human_only in [vec![], vec!["a".to_string()], vec!["approval".to_string()]] {
                for reader in readers {
                    let (status, _) = status(task, &human_only, reader);
                    let seen = detailed(task, &human_only, reader);
                    assert_eq!(
                        seen["status"],
                        status.as_str(),
                        "{:?} {human_only:?} {reader:?}",
                        task.input_requests.keys().collect::<Vec<_>>()
                    );
                }
            }
        }
    }

    #[test]
    fn form_elicitation_is_declared_by_an_empty_object_or_form() {
        assert!(declares_form_elicitation(Some(&json!({"elicitation": {}}))));
        assert!(declares_form_elicitation(Some(
            &json!({"elicitation": {"form": {}, "url": {}}})
        )));
        assert!(!declares_form_elicitation(Some(
            &json!({"elicitation": {"url": {}}})
        )));
        assert!(!declares_form_elicitation(Some(&json!({"sampling": {}}))));
        assert!(!declares_form_elicitation(None));
    }
}

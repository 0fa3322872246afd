//! Deciding open questions from outside the task: `POST /v1/approvals/decide` and the desktop
//! notification's Approve / Deny buttons. One decision (approve or deny, one reason) applies to
//! every item given; each item is answered on its own, through `Engine::answer` (so a
//! principal that may not answer a human-only question is ignored there, never here), and
//! reported on its own: one item that fails does not stop the others. An edited call (one item
//! only) is checked against the tool's input schema before anything is answered.

use std::time::Duration;

use tokio::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    edit::{ArgumentError, argument_errors},
    question::{self, META_KEY},
};
use taskdeck_engine::{Engine, EngineError, Principal, TaskRecord, limits};

/// Approve or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecideAction {
    /// Let the call go on (answers `accept`).
    Approve,
    /// Refuse it (answers `decline`, with the reason).
    Deny,
}

/// One question to decide: a task, and the key of its question when it has several open.
#[derive(Debug, Clone, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecideItem {
    /// The task waiting.
    pub task_id: String,
    /// The question's key; absent: the task's one open approval (or its one open question).
    #[serde(default)]
    pub key: Option<String>,
}

/// `POST /v1/approvals/decide`'s body.
#[derive(Debug, Clone, PartialEq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecideRequest {
    /// The questions (1 to [`MAX_ITEMS`]).
    #[schema(min_items = 1, max_items = 500)]
    pub items: Vec<DecideItem>,
    /// Approve or deny all of them.
    pub decision: DecideAction,
    /// Why (given to the agent with a denial; at most 2000 characters are kept, a longer one
    /// cut to end with "…").
    #[serde(default)]
    pub reason: Option<String>,
    /// The edited call's arguments (a JSON object; with exactly one item, an approval whose
    /// question is editable).
    #[serde(default)]
    pub arguments: Option<Value>,
    /// Also save the narrow "always allow" rule (approvals that offer it).
    #[serde(default)]
    pub always_allow: Option<bool>,
}

/// The most items one decision takes.
pub const MAX_ITEMS: usize = 500;

/// How one item went.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemOutcome {
    /// The item's task.
    pub task_id: String,
    /// The question answered, when one was found.
    pub key: Option<String>,
    /// `Err`: why nothing was answered, for people.
    pub result: Result<(), String>,
    /// What was not done as asked although the question was answered, for people.
    pub note: Option<String>,
}

/// Why a whole decision was refused (nothing answered).
#[derive(Debug, Clone, PartialEq)]
pub enum DecideError {
    /// The request cannot be carried out as asked (422): no items, too many, arguments with a
    /// denial or with several items, an edit of a question that is not editable.
    Invalid(String),
    /// The edited arguments do not fit the tool's input schema (422).
    Arguments(Vec<ArgumentError>),
}

/// Decides `request` as `principal`. Errors: [`DecideError`], before anything is answered.
pub async fn decide(
    engine: &Engine,
    principal: &Principal,
    request: DecideRequest,
) -> Result<Vec<ItemOutcome>, DecideError> {
    if request.items.is_empty() || request.items.len() > MAX_ITEMS {
        return Err(DecideError::Invalid(format!(
            "items: give 1 to {MAX_ITEMS} questions"
        )));
    }
    let edited = match &request.arguments {
        None => None,
        Some(_) if request.decision == DecideAction::Deny => {
            return Err(DecideError::Invalid(
                "arguments: only an approval carries edited arguments".into(),
            ));
        }
        Some(_) if request.items.len() != 1 => {
            return Err(DecideError::Invalid(
                "arguments: an edit applies to exactly one item".into(),
            ));
        }
        Some(arguments) => Some(check_edit(engine, principal, &request.items[0], arguments)?),
    };
    let mut outcomes = Vec::with_capacity(request.items.len());
    // One wait for the whole decision, however many of its items are between two questions
    // (or decided by someone else meanwhile): a bulk decision is never held up per item.
    let deadline = Instant::now() + BETWEEN_QUESTIONS;
    for item in &request.items {
        let outcome = decide_one(
            engine,
            principal,
            item,
            &request,
            edited.as_deref(),
            deadline,
        )
        .await;
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

async fn decide_one(
    engine: &Engine,
    principal: &Principal,
    item: &DecideItem,
    request: &DecideRequest,
    edited: Option<&str>,
    deadline: Instant,
) -> ItemOutcome {
    let mut outcome = ItemOutcome {
        task_id: item.task_id.clone(),
        key: None,
        result: Ok(()),
        note: None,
    };
    let task = match open_question(
        engine,
        principal,
        &item.task_id,
        item.key.as_deref(),
        deadline,
    )
    .await
    {
        Ok(t) => t,
        Err(e) => {
            outcome.result = Err(explain(e));
            return outcome;
        }
    };
    let key = match question_key(&task, item.key.as_deref()) {
        Ok(k) => k,
        Err(why) => {
            // A question named that is not open any more: say who took it, and how.
            outcome.result = Err(item
                .key
                .as_deref()
                .and_then(|key| decided_already(engine, principal, &item.task_id, key))
                .unwrap_or(why));
            return outcome;
        }
    };
    outcome.key = Some(key.clone());
    let meta = question::meta_of(&task.input_requests[&key]);
    // M of N: a human who approved already does not count twice; say so rather than answer.
    // An edit is another call, which they may approve (the count starts again).
    if request.decision == DecideAction::Approve
        && edited.is_none()
        && meta
            .as_ref()
            .is_some_and(|m| m.approved_by.contains(&principal.name))
    {
        outcome.result = Err(format!(
            "{} approved this call already; another human must approve it",
            principal.name
        ));
        return outcome;
    }
    let is_call = meta.is_some();
    let answer = match request.decision {
        DecideAction::Deny => match request.reason.as_deref().map(str::trim) {
            Some(r) if !r.is_empty() => json!({"action": "decline", "content": {"reason": r}}),
            _ => json!({"action": "decline"}),
        },
        DecideAction::Approve => {
            let mut content = Map::new();
            let offers = |field: &str| {
                task.input_requests[&key]
                    .pointer(&format!("/params/requestedSchema/properties/{field}"))
                    .is_some()
            };
            // An edit holding credentials gets no rule (it would write them down).
            let edit_hides = edited
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .is_some_and(|e| super::shown_arguments(&e) != e);
            // run_command's extra environment asks whatever the rules say: no rule is saved
            // for an edit that adds it (tools/run_command.rs).
            let edit_adds_env = task.tool == crate::tools::run_command::NAME
                && edited
                    .and_then(|text| serde_json::from_str::<Value>(text).ok())
                    .and_then(|e| {
                        e.get("env")
                            .and_then(Value::as_object)
                            .map(|m| !m.is_empty())
                    })
                    .unwrap_or(false);
            if is_call && request.always_allow == Some(true) && edit_hides {
                outcome.note = Some(
                    "approved without \"always allow\": the call as edited holds credentials, \
                     which a rule would write to policy.json, so no rule was saved"
                        .into(),
                );
            } else if is_call && request.always_allow == Some(true) && edit_adds_env {
                outcome.note = Some(
                    "approved without \"always allow\": the call as edited has extra \
                     environment, which is asked about whatever the rules say, so no rule was \
                     saved"
                        .into(),
                );
            }
            if is_call && request.always_allow == Some(true) && !edit_hides && !edit_adds_env {
                if offers("alwaysAllow") {
                    content.insert("alwaysAllow".into(), Value::Bool(true));
                } else {
                    outcome.note = Some(
                        "approved without \"always allow\": this question offers none (not for \
                         a call holding credentials, whose rule would write them to policy.json, \
                         nor for one an ask rule decides, which would never reach it), so no \
                         rule was saved"
                            .into(),
                    );
                }
            }
            if let Some(text) = edited {
                content.insert("arguments".into(), Value::String(text.to_string()));
            }
            json!({"action": "accept", "content": content})
        }
    };
    let mut responses = Map::new();
    responses.insert(key.clone(), answer);
    outcome.result = match engine.answer(principal, &item.task_id, responses).await {
        Ok(report) if report.accepted.contains(&key) => {
            // An edit the approval does not use (the policy denies it) comes back at once as
            // the next question, saying so: the person is told here, not only there.
            if edited.is_some()
                && let Some(why) = edit_not_used(
                    engine,
                    principal,
                    &item.task_id,
                    &key,
                    &task.arguments,
                    deadline,
                )
                .await
            {
                outcome.note = Some(why);
            }
            Ok(())
        }
        Ok(_) if !principal.is_human() => Err(format!(
            "{key} was not answered: only a person (the admin or a human token) decides an \
             approval, and {} is an agent",
            principal.name
        )),
        Ok(_) => Err(
            decided_already(engine, principal, &item.task_id, &key).unwrap_or_else(|| {
                format!("{key} was not answered: it was decided already (by someone else, or it expired)")
            }),
        ),
        Err(e) => Err(explain(e)),
    };
    // A note says what an answer did not do; an item not answered has only its error.
    if outcome.result.is_err() {
        outcome.note = None;
    }
    outcome
}

/// Why question `key` of task `task_id` took no answer from `principal`: who decided it and
/// how ("alice denied it already"), that it expired, or that it was withdrawn; said without
/// the key, which is Taskdeck's and not the person's word for the call.
/// `None` when the task never asked `key`.
fn decided_already(
    engine: &Engine,
    principal: &Principal,
    task_id: &str,
    key: &str,
) -> Option<String> {
    let round = engine
        .input_rounds(principal, task_id)
        .ok()?
        .into_iter()
        .find(|r| r.key == key)?;
    let action = round
        .response
        .as_ref()
        .and_then(|r| r.get("action"))
        .and_then(Value::as_str);
    Some(match (round.answered_by.as_deref(), action) {
        (Some(taskdeck_engine::EXPIRED_BY), _) => {
            "this call's approval expired before your decision reached it".into()
        }
        (Some(who), Some("accept")) => {
            let still_asks = engine.get(principal, task_id).is_ok_and(|t| {
                t.input_requests
                    .iter()
                    .any(|(k, r)| k != key && question::meta_of(r).is_some())
            });
            match still_asks {
                true => format!(
                    "{who} approved this call already, and it still waits for another \
                     person's approval: decide it again"
                ),
                false => format!("{who} approved this call already"),
            }
        }
        (Some(who), Some(_)) => format!("{who} denied this call already"),
        _ if round.state == "superseded" => {
            "this question was withdrawn (the call was asked again, or the task ended)".into()
        }
        _ => "this call was decided already (by someone else, or it expired)".into(),
    })
}

/// How long a decision (all its items together) waits for the questions it answers to be
/// open: between two questions of one approval (another human's turn, an edit asked again)
/// the task is `working` with none open for a moment, and a second person's quick answer must
/// not fail for it.
const BETWEEN_QUESTIONS: Duration = Duration::from_secs(1);

/// Task `task_id` as `principal` sees it, once the question to answer (`key`, else any) is
/// open, the task has ended, or `deadline` passed. Errors: the engine's.
async fn open_question(
    engine: &Engine,
    principal: &Principal,
    task_id: &str,
    key: Option<&str>,
    deadline: Instant,
) -> Result<TaskRecord, EngineError> {
    engine
        .get_when(principal, task_id, deadline, |task| {
            let open = match key {
                Some(k) => task.input_requests.contains_key(k),
                None => !task.input_requests.is_empty(),
            };
            open || task.status.is_terminal()
        })
        .await
}

/// Why `principal`'s edit, just answered to question `key` of task `task_id` (whose arguments
/// were `before`), was not used: the first line of the next question when it says so ("NAME's
/// edit was not used: ..."), waited for until `deadline`; `None` as soon as the task goes on
/// otherwise (another question, the call's arguments changed to the edit, the task ended).
async fn edit_not_used(
    engine: &Engine,
    principal: &Principal,
    task_id: &str,
    key: &str,
    before: &Value,
    deadline: Instant,
) -> Option<String> {
    let said = format!("{}'s edit was not used", principal.name);
    let next_question = |task: &TaskRecord| {
        task.input_requests
            .iter()
            .find(|(k, _)| k.as_str() != key)
            .map(|(_, request)| request.clone())
    };
    let task = engine
        .get_when(principal, task_id, deadline, |task| {
            task.arguments != *before || next_question(task).is_some() || task.status.is_terminal()
        })
        .await
        .ok()?;
    if task.arguments != *before {
        return None;
    }
    let message = next_question(&task)?
        .pointer("/params/message")?
        .as_str()?
        .to_string();
    message
        .starts_with(&said)
        .then(|| message.lines().next().unwrap_or_default().to_string())
}

/// The key to answer: `given`, else the task's one open approval, else its one open question.
fn question_key(task: &TaskRecord, given: Option<&str>) -> Result<String, String> {
    if let Some(key) = given {
        return match task.input_requests.contains_key(key) {
            true => Ok(key.to_string()),
            false => Err(format!(
                "{key} is not open any more (decided by someone else, or expired) or was never \
                 asked"
            )),
        };
    }
    let calls: Vec<&String> = task
        .input_requests
        .iter()
        .filter(|(_, r)| question::meta_of(r).is_some())
        .map(|(k, _)| k)
        .collect();
    let candidates: Vec<&String> = match calls.is_empty() {
        false => calls,
        true => task.input_requests.keys().collect(),
    };
    match candidates.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err("the task has no open question".into()),
        _ => Err("the task has several open questions: name the key".into()),
    }
}

/// Checks an edit of `item`'s call: the question must be editable and the arguments fit its
/// tool's input schema. Returns the arguments as the JSON text the answer carries.
fn check_edit(
    engine: &Engine,
    principal: &Principal,
    item: &DecideItem,
    arguments: &Value,
) -> Result<String, DecideError> {
    let task = engine
        .get(principal, &item.task_id)
        .map_err(|e| DecideError::Invalid(explain(e)))?;
    let key = question_key(&task, item.key.as_deref()).map_err(DecideError::Invalid)?;
    let text = check_edit_of(engine, &key, &task.input_requests[&key], arguments)?;
    // The answer that carries it, with the most an approval adds.
    let answer = json!({"action": "accept", "content": {"arguments": text, "alwaysAllow": true}});
    edit_fits(serde_json::to_vec(&answer).map_or(0, |b| b.len()))?;
    Ok(text)
}

/// Refuses an edit whose answer, `answer_bytes` of JSON, is over the engine's cap on an answer
/// ([`limits::ANSWER_MAX_BYTES`]), in a person's words and saying what they can do instead (the
/// engine's own refusal names the question's key and bytes).
fn edit_fits(answer_bytes: usize) -> Result<(), DecideError> {
    if answer_bytes <= limits::ANSWER_MAX_BYTES {
        return Ok(());
    }
    Err(DecideError::Invalid(format!(
        "the edited call is too large to send: an answer may be {} as JSON, and this one is {} \
         (the call goes as JSON text, its quotes escaped); approve the call as asked, or deny it",
        limits::human_bytes(limits::ANSWER_MAX_BYTES),
        limits::human_bytes(answer_bytes)
    )))
}

/// Checks the edits among `responses`, a person's answers to task `task_id`'s questions given
/// as they are (`POST /v1/tasks/{taskId}/input`, `taskdeck tasks answer`), as [`decide`] checks
/// one: an `accept` of an open approval whose content carries `arguments` (the edited call as
/// JSON text, the question's form says so) must be an editable question's, a JSON object, and
/// fit the tool's input schema. Answers of an agent (which a human-only question ignores), to
/// keys not open, or without an edit are left to `Engine::answer`. Returns the edits to pass
/// to [`unused_edit_notes`] once the answers are recorded, and the approvals (without an edit)
/// of a call this person approved already, which must not be passed on: M of N counts a human
/// once, as [`decide`] refuses, and the answer would use up the next person's key. Errors:
/// [`DecideError`], naming the key.
pub fn check_answered_edits(
    engine: &Engine,
    principal: &Principal,
    task_id: &str,
    responses: &Map<String, Value>,
) -> Result<AnsweredEdits, DecideError> {
    let mut edits = AnsweredEdits::default();
    if !principal.is_human() {
        return Ok(edits);
    }
    let Ok(task) = engine.get(principal, task_id) else {
        return Ok(edits);
    };
    edits.before = task.arguments.clone();
    for (key, response) in responses {
        let Some(request) = task.input_requests.get(key) else {
            continue;
        };
        if question::meta_of(request).is_none() || !question::approved(response) {
            continue;
        }
        let offers = |field: &str| {
            request
                .pointer(&format!("/params/requestedSchema/properties/{field}"))
                .is_some()
        };
        if response.pointer("/content/alwaysAllow") == Some(&Value::Bool(true))
            && !offers("alwaysAllow")
            && question::meta_of(request).is_some_and(|m| m.hidden_values)
        {
            return Err(DecideError::Invalid(format!(
                "{key}: this call holds credentials, shown masked, so no \"always allow\" rule \
                 can be saved for it (the rule would write them to policy.json); approve it \
                 without alwaysAllow"
            )));
        }
        match response.pointer("/content/arguments") {
            None | Some(Value::String(_)) => {}
            Some(other) => {
                return Err(DecideError::Invalid(format!(
                    "{key}: `arguments` is the edited call as JSON text (a string), not {}",
                    json_kind(other)
                )));
            }
        }
        match question::edited_arguments(response) {
            None => {
                if question::meta_of(request)
                    .is_some_and(|m| m.approved_by.contains(&principal.name))
                {
                    edits.repeated.insert(
                        key.clone(),
                        format!(
                            "{} approved this call already; another human must approve it",
                            principal.name
                        ),
                    );
                }
            }
            Some(Err(why)) => return Err(DecideError::Invalid(format!("{key}: {why}"))),
            Some(Ok(arguments)) => {
                edit_fits(serde_json::to_vec(response).map_or(0, |b| b.len()))?;
                check_edit_of(engine, key, request, &arguments)?;
                edits.keys.push(key.clone());
            }
        }
    }
    Ok(edits)
}

/// The edits among a person's answers ([`check_answered_edits`]): the keys whose approval
/// carried edited arguments, and the call's arguments before them; and the approvals not to
/// record.
#[derive(Debug, Default)]
pub struct AnsweredEdits {
    /// The approvals' keys answered with an edit.
    pub keys: Vec<String>,
    /// The call's arguments when the answers were checked.
    pub before: Value,
    /// Key → why it is not recorded: "alice approved this call already; another human must
    /// approve it" (an approval, without an edit, of a call this person approved already).
    pub repeated: std::collections::BTreeMap<String, String>,
}

/// Key → why `principal`'s edit answered to that key (one of `edits.keys` the engine
/// `accepted`) was not used, for each such edit the policy refused (a deny rule): the first
/// line of the question that follows, as [`decide`] notes it. Waits for that question up to
/// one second; an edit that was used, or a task that goes on otherwise, has no note.
pub async fn unused_edit_notes(
    engine: &Engine,
    principal: &Principal,
    task_id: &str,
    edits: &AnsweredEdits,
    accepted: &[String],
) -> std::collections::BTreeMap<String, String> {
    let deadline = Instant::now() + BETWEEN_QUESTIONS;
    let mut notes = std::collections::BTreeMap::new();
    for key in edits.keys.iter().filter(|k| accepted.contains(k)) {
        if let Some(why) =
            edit_not_used(engine, principal, task_id, key, &edits.before, deadline).await
        {
            notes.insert(key.clone(), why);
        }
    }
    notes
}

/// "an object", "a number", … for a message.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks `arguments` as an edit of the call question `request` (key `key`) asks about.
fn check_edit_of(
    engine: &Engine,
    key: &str,
    request: &Value,
    arguments: &Value,
) -> Result<String, DecideError> {
    let meta = question::meta_of(request);
    if meta.as_ref().is_some_and(|m| m.hidden_values) {
        return Err(DecideError::Invalid(format!(
            "{key}: this call holds credentials, shown masked, so it cannot be edited (the edit \
             would lose them); approve it as asked, or deny it"
        )));
    }
    let meta = meta.filter(|m| m.editable).ok_or_else(|| {
        DecideError::Invalid(format!(
            "{key} is not an approval whose call may be edited ({META_KEY})"
        ))
    })?;
    let schema = meta
        .input_schema
        .unwrap_or_else(|| json!({"type": "object"}));
    argument_errors(&schema, arguments).map_err(DecideError::Arguments)?;
    // Taskdeck's own tools check more than their schema says (run_command: exactly one of argv
    // and command).
    if meta.server == crate::policy::TASKDECK_SERVER
        && let Some(tool) = engine.tool(&meta.tool)
        && let Err(why) = tool.check_arguments(arguments).and_then(|()| {
            // An edited call that could not start is refused now rather than approved.
            match meta.tool == crate::tools::run_command::NAME {
                true => crate::tools::run_command::cwd_problem(arguments).map_or(Ok(()), Err),
                false => Ok(()),
            }
        })
    {
        return Err(DecideError::Arguments(vec![ArgumentError {
            path: String::new(),
            message: why,
        }]));
    }
    Ok(arguments.to_string())
}

/// An engine error as one item's failure, for people.
fn explain(e: EngineError) -> String {
    match e {
        EngineError::NotFound => "no such task".into(),
        EngineError::HiddenUnread { key, task_id, by } => {
            super::hidden_unread_text(&key, &task_id, &by)
        }
        other => other.to_string(),
    }
}

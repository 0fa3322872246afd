//! Asking the human about one call and waiting for the answer under the approval's terms:
//! expiry (the request is closed as expired at its deadline and the terms' default applies),
//! M of N (further questions `KEY#2`, `KEY#3`, ... until enough distinct humans approved; one
//! denial refuses; one deadline for all of them), and edits (an approval with edited arguments
//! is checked against the tool's input schema and decided by the policy as the agent's call
//! is; one that does not fit or is denied is asked again, saying why; one the policy asks more
//! humans for needs that many; and an edit restarts the count of humans, who approved another
//! call). A resumed run
//! replays the answers given before the restart and keeps the deadline.

use std::time::Duration;

use serde_json::Value;

use super::{
    digest,
    question::{self, ApprovalMeta, VerdictShown},
};
use crate::policy::{OnExpiry, Verdict};
use taskdeck_engine::{EXPIRED_BY, HiddenHeld, InputError, TaskContext, is_expired_response};

/// One call to put to the human.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The first question's key (`approve`, `approve-command`); later ones add `#2`, `#3`, ...
    pub key: String,
    /// The question's text (who wants to do what, where).
    pub message: String,
    /// The "always allow" checkbox's title; `None` offers none.
    pub always_title: Option<String>,
    /// The server the tool belongs to (`taskdeck` for Taskdeck's own).
    pub server: String,
    /// The tool's name.
    pub tool: String,
    /// The call's arguments as shown and as edited from (credentials redacted).
    pub arguments: Value,
    /// The call as the agent gave it, when `arguments` masks some of it: held in memory for
    /// the people who decide while the question is open, and given to one who asks
    /// ([`TaskContext::hold_hidden`], `POST /v1/tasks/{taskId}/reveal`); never stored.
    pub hidden: Option<Value>,
    /// The tool's input schema (edits are checked against it).
    pub input_schema: Option<Value>,
    /// True when the human may approve an edited call.
    pub editable: bool,
    /// What the policy said (its terms apply).
    pub verdict: Verdict,
    /// The longest the question may stay open, in ms (a hook's own timeout), whatever the terms.
    pub expiry_cap_ms: Option<u64>,
    /// True when an expiry with `onExpiry: "ask"` hands the decision back to the agent's own
    /// prompt (hooks); otherwise it refuses the call (and is recorded as a denial).
    pub hands_back: bool,
}

impl Ask {
    /// What an expiry of the question does: the terms' `onExpiry`, but never `allow` for a call
    /// with hidden values (nobody may have read it whole): then `deny`.
    pub fn on_expiry(&self) -> OnExpiry {
        match self.verdict.terms.on_expiry {
            OnExpiry::Allow if self.hidden.is_some() => OnExpiry::Deny,
            other => other,
        }
    }

    /// The "always allow" checkbox's title, when it is offered: not for a call an `ask` rule
    /// decided, since the rule "always allow" saves goes after it and, first match wins, would
    /// never be reached (the same call would be asked again).
    fn always_offered(&self) -> Option<&str> {
        let asked_by_rule =
            self.verdict.decision == crate::policy::Decision::Ask && self.verdict.rule_id.is_some();
        self.always_title.as_deref().filter(|_| !asked_by_rule)
    }
}

/// What the policy says of the call with other arguments (a human's edit), as it would of the
/// agent's call ([`Policy::judge_edit`](crate::policy::Policy::judge_edit) with the arguments
/// as the tool gives them to the policy). An edit the policy denies is not used: the question
/// is asked again, saying so; one it asks more humans for needs that many.
pub type EditCheck<'a> = dyn Fn(&Value) -> EditVerdict + Send + Sync + 'a;

/// The policy's word on an edited call ([`EditCheck`]).
#[derive(Debug, Clone, PartialEq)]
pub enum EditVerdict {
    /// A `deny` rule covers it: `"rule ID"`.
    Denied(String),
    /// It may run once `humans` humans approved it (0 when the policy would allow it unasked:
    /// an edit never needs fewer humans than the call asked about); `why`: the rule or default
    /// that says so.
    Needs {
        /// How many distinct humans the policy asks for the edited call.
        humans: u32,
        /// `"rule ID"` or the default's reason.
        why: String,
        /// An `ask` rule decides the edited call: a rule "always allow" saved after it would
        /// never be reached, so none is offered.
        asked_by_rule: bool,
    },
}

/// How an approval ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Enough humans approved.
    Approved {
        /// The call as approved: `Some` when a human edited it.
        edited: Option<Value>,
        /// Every approving human asked for the narrow "always allow" rule.
        always: bool,
        /// The humans who approved, in order.
        humans: Vec<String>,
    },
    /// A human denied.
    Denied {
        /// Their reason, when they gave one.
        reason: Option<String>,
        /// Who denied.
        human: String,
    },
    /// Nobody answered in time: the terms' default applies.
    Expired(OnExpiry),
}

/// The question's key for round `n` (from 1): `base`, then `base#2`, `base#3`, ... (`#` never
/// occurs in a tool's base keys, so rounds of one question cannot take another's key).
pub fn round_key(base: &str, n: u32) -> String {
    match n {
        1 => base.to_string(),
        n => format!("{base}#{n}"),
    }
}

/// Asks until the approval is decided, and records how it ended in the audit log (also when
/// it was abandoned). Errors: the task was cancelled or the question could not be stored
/// (`Outcome::from` turns it into the tool's outcome).
pub async fn ask(
    ctx: &TaskContext,
    ask: &Ask,
    judge: &EditCheck<'_>,
) -> Result<Answer, InputError> {
    let answer = ask_rounds(ctx, ask, judge).await;
    // Taskdeck stopping is no end of the question: the next start asks it again (a resumable
    // tool) or records it as abandoned (`record::abandoned_at_restart`), once.
    if answer.is_ok() || !ctx.is_stopping() {
        super::record::record_answer(ctx, ask, answer.as_ref().ok()).await;
    }
    answer
}

async fn ask_rounds(
    ctx: &TaskContext,
    ask: &Ask,
    judge: &EditCheck<'_>,
) -> Result<Answer, InputError> {
    let earlier = ctx.input_rounds().unwrap_or_default();
    // The call as given, while its question shows it masked: for a person to read whole.
    let mut held: Option<HiddenHeld> = None;
    let mut held_values: Option<Value> = None;
    let mut arguments = ask.arguments.clone();
    // How many humans the call as it now runs needs: the terms', or more for an edit the
    // policy asks more humans for.
    let mut required = ask.verdict.terms.humans;
    let mut edited = None;
    // Who edited the call last: the next questions show the call as it now runs.
    let mut edited_by: Option<String> = None;
    let mut approved_by: Vec<String> = Vec::new();
    // How many of `approved_by` asked for the narrow "always allow" rule: it is saved only
    // when every human the terms require asked for it.
    let mut always_votes = 0usize;
    let mut note: Option<String> = None;
    // Said once with the next question: the edit just used needs more humans than asked.
    let mut raised: Option<String> = None;
    // The call as edited is decided by an `ask` rule: no "always allow" for it.
    let mut edit_shadows_always = false;
    // One deadline for the whole approval, fixed when it is first asked: later rounds (M of N,
    // a refused edit) do not extend it.
    let mut deadline: Option<Option<i64>> = None;
    // When the call was first asked: every round says the same.
    let of_this_ask = |key: &str| key == ask.key || key.starts_with(&format!("{}#", ask.key));
    let mut asked_at_ms = earlier
        .iter()
        .filter(|r| of_this_ask(&r.key))
        .find_map(|r| question::meta_of(&r.request)?.asked_at_ms);
    for n in 1.. {
        let key = round_key(&ask.key, n);
        // A human's edit is shown (and kept in the question) with what looks like a credential
        // masked, as the agent's call is; it runs as typed.
        let shown = super::shown_arguments(&arguments);
        // What this question hides: the agent's call's masked values, or those of a human's
        // edit (a credential typed into it), which the next person approves; held for them
        // also when the question was asked before a restart (the edit is read back from the
        // stored answer).
        let hidden = match &edited_by {
            Some(_) => (shown != arguments).then(|| arguments.clone()),
            None => ask.hidden.clone(),
        };
        // Held again only when they changed: whoever read the same call whole in an earlier
        // round need not read it again.
        if held_values != hidden {
            drop(held.take());
            held = hidden
                .as_ref()
                .map(|values| ctx.hold_hidden(values.clone()));
            held_values = hidden.clone();
        }
        // A call a human edited, or one with hidden values, never runs by an expiry unread.
        let on_expiry = match (ask.on_expiry(), &edited) {
            (OnExpiry::Allow, Some(_)) => OnExpiry::Deny,
            (other, _) => other,
        };
        // A question asked before a restart is waited on as it was asked.
        let request = match earlier.iter().find(|r| r.key == key) {
            Some(round) => round.request.clone(),
            None => {
                let expires_at_ms = *deadline.get_or_insert_with(|| first_deadline(ask));
                let asked =
                    *asked_at_ms.get_or_insert_with(|| chrono::Utc::now().timestamp_millis());
                // The call this round shows and the terms it is asked under.
                let meta = ApprovalMeta {
                    server: ask.server.clone(),
                    tool: ask.tool.clone(),
                    principal: ctx.principal().to_string(),
                    arguments: shown.clone(),
                    input_schema: ask.input_schema.clone(),
                    // An edit with hidden values is approved as it is, or denied.
                    editable: ask.editable && hidden.is_none(),
                    digest: digest(&ask.server, &ask.tool, &shown),
                    verdict: VerdictShown {
                        decision: "ask".into(),
                        rule: ask.verdict.rule_id.clone(),
                        reason: ask.verdict.reason.clone(),
                    },
                    asked_at_ms: Some(asked),
                    expires_at_ms,
                    on_expiry: on_expiry.as_str().into(),
                    required,
                    approved_by: approved_by.clone(),
                    edited_by: edited_by.clone(),
                    hidden_values: hidden.is_some(),
                };
                // The call as it runs now: an edit is shown in the text every human reads, not
                // only in the question's `_meta`.
                let call = match &edited_by {
                    Some(editor) => format!(
                        "{editor} edited this call: it runs as edited, not as first asked. As edited:\n\n{}\n\nAs first asked:\n\n{}",
                        serde_json::to_string_pretty(&shown).unwrap_or_default(),
                        ask.message
                    ),
                    None => ask.message.clone(),
                };
                // A call with hidden values says so, and how to read it whole.
                let call = match hidden {
                    Some(_) => format!("{call}\n\n{}", super::hidden_values_note(ctx.task_id())),
                    None => call,
                };
                let message = match &note {
                    Some(note) => format!("{note}\n\n{call}"),
                    None => call,
                };
                // A rule would write hidden values (an edit's credential) to policy.json.
                let always = ask
                    .always_offered()
                    .filter(|_| !edit_shadows_always && hidden.is_none());
                question::approval_request(&message, always, &meta)
            }
        };
        let expires_at_ms = question::meta_of(&request).and_then(|m| m.expires_at_ms);
        deadline.get_or_insert(expires_at_ms);
        // The call this question shows: an approval counts for that call only.
        let asked_about = question::meta_of(&request).map(|m| m.arguments);
        // Whether this question took an edit (not one whose call holds hidden values).
        let editable = question::meta_of(&request).map_or(ask.editable, |m| m.editable);
        let answer = answer_by_deadline(ctx, &key, request, expires_at_ms).await?;
        let human = answered_by(ctx, &key);
        // Only the engine's expiry answers as `expiry`; a human's answer that says "expired"
        // is still theirs.
        if human == EXPIRED_BY && is_expired_response(&answer) {
            return Ok(Answer::Expired(on_expiry));
        }
        if !question::approved(&answer) {
            return Ok(Answer::Denied {
                reason: question::declined_reason(&answer).map(str::to_string),
                human,
            });
        }
        // Where the count stands, said again with a refused edit (which counts for nothing).
        let so_far = match approved_by.is_empty() {
            true => String::new(),
            false => format!(
                " {} of {} humans approved ({}).",
                approved_by.len(),
                required,
                approved_by.join(", ")
            ),
        };
        let mut edit_taken = false;
        match question::edited_arguments(&answer).filter(|_| editable) {
            Some(Err(why)) => {
                note = Some(format!("{human}'s edit was not used: {why}.{so_far}"));
                continue;
            }
            Some(Ok(new)) if new != arguments => {
                // Replayed after a restart: an edit counts only as it did when it was answered
                // (the question asked after it shows whether it was used), whatever the policy
                // says now (a deny rule removed since, or a policy.json unreadable at start).
                let next = round_key(&ask.key, n + 1);
                if let Some(after) = earlier.iter().find(|r| r.key == next) {
                    // (An edit back to the call as first asked is that call again: nobody's.)
                    let editor = (new != ask.arguments).then_some(human.as_str());
                    let used = question::meta_of(&after.request).is_some_and(|m| {
                        m.edited_by.as_deref() == editor
                            && m.arguments == super::shown_arguments(&new)
                    });
                    if !used {
                        note = Some(format!(
                            "{human}'s edit was not used when it was answered.{so_far}"
                        ));
                        continue;
                    }
                }
                if let Some(why) = schema_errors(ask, &new) {
                    note = Some(format!("{human}'s edit was not used: {why}.{so_far}"));
                    continue;
                }
                // A person may change a call, not the policy: what a deny rule refuses is
                // refused as edited too, and what it asks more humans for needs them.
                let needs = match judge(&new) {
                    EditVerdict::Denied(rule) => {
                        note = Some(format!(
                            "{human}'s edit was not used: the policy denies the call as edited ({rule}).{so_far}"
                        ));
                        continue;
                    }
                    EditVerdict::Needs {
                        humans,
                        why,
                        asked_by_rule,
                    } => (humans, why, asked_by_rule),
                };
                arguments = new.clone();
                // An edit back to the call as first asked is that call again.
                (edited, edited_by) = match new == ask.arguments {
                    true => (None, None),
                    false => (Some(new), Some(human.clone())),
                };
                let before = required;
                (required, edit_shadows_always) = match edited {
                    Some(_) => (ask.verdict.terms.humans.max(needs.0), needs.2),
                    None => (ask.verdict.terms.humans, false),
                };
                raised = (required > before).then(|| {
                    format!(
                        "The call as {human} edited it needs {required} humans ({}). ",
                        needs.1
                    )
                });
                // The others approved another call: their votes (and their "always") go.
                approved_by.clear();
                always_votes = 0;
                edit_taken = true;
            }
            _ => {}
        }
        // An approval of a question that showed another call than the one that would run
        // (rounds replayed after a restart under a changed policy: an edit the policy now
        // refuses was shown to the next approver) approves nothing: asked again, as it is.
        if !edit_taken && asked_about.as_ref() != Some(&super::shown_arguments(&arguments)) {
            note = Some(format!(
                "{human}'s approval was of the call as that question showed it, which is not \
                 the call that would run (the policy changed since it was asked): asked again \
                 as it is now.{so_far}"
            ));
            continue;
        }
        if approved_by.contains(&human) {
            note = Some(format!(
                "{human} already approved this call; another human must approve it."
            ));
            continue;
        }
        // "Always allow" counts only where it was offered: a call holding credentials gets none.
        // A rule lets the call run with no human at all, so it takes every approving human's
        // consent: one of two cannot waive the other.
        // Nor a call as edited that holds credentials: the rule would write them down.
        let edit_hides = super::shown_arguments(&arguments) != arguments;
        if edit_hides && question::always_allow(&answer) {
            ctx.status_message(
                "\"Always allow\" was not saved: the call as edited holds credentials, which a \
                 rule would write to policy.json",
            )
            .await;
        }
        let wants_always = ask.always_offered().is_some()
            && !edit_shadows_always
            && !edit_hides
            && question::always_allow(&answer);
        always_votes += usize::from(wants_always);
        approved_by.push(human);
        if approved_by.len() >= required as usize {
            return Ok(Answer::Approved {
                edited,
                always: always_votes == approved_by.len(),
                humans: approved_by,
            });
        }
        let progress = format!("{} of {required} humans approved", approved_by.len());
        ctx.status_message(format!("{progress}: waiting for another human"))
            .await;
        let asked_always = match always_votes {
            0 => String::new(),
            n if n == approved_by.len() => {
                " They asked to always allow it: a rule is saved only if you ask too.".into()
            }
            _ => " Some asked to always allow it: a rule is saved only if every approver asks."
                .into(),
        };
        note = Some(format!(
            "{}{progress} ({}).{asked_always}",
            raised.take().unwrap_or_default(),
            approved_by.join(", ")
        ));
    }
    unreachable!("the rounds never run out")
}

/// When an approval asked now expires (Unix ms): its terms' expiry, capped by the caller's
/// (a hook's timeout); `None` = never.
fn first_deadline(ask: &Ask) -> Option<i64> {
    let after = match (ask.verdict.terms.expires_after_ms, ask.expiry_cap_ms) {
        (Some(t), Some(cap)) => Some(t.min(cap)),
        (t, cap) => t.or(cap),
    };
    after.map(|ms| chrono::Utc::now().timestamp_millis() + ms as i64)
}

/// Waits for the answer to `key`; at `deadline` (Unix ms) closes the question as expired (a
/// human's answer that lands first wins).
async fn answer_by_deadline(
    ctx: &TaskContext,
    key: &str,
    request: Value,
    deadline: Option<i64>,
) -> Result<Value, InputError> {
    let answer = ctx.request_human_input(key, request);
    tokio::pin!(answer);
    let Some(deadline) = deadline else {
        return answer.await;
    };
    let left = (deadline - chrono::Utc::now().timestamp_millis()).max(0) as u64;
    tokio::select! {
        a = &mut answer => return a,
        _ = tokio::time::sleep(Duration::from_millis(left)) => {}
    }
    if let Err(e) = ctx.expire_input(key).await {
        tracing::warn!(
            task_id = ctx.task_id(),
            key,
            "cannot close an expired question: {e}"
        );
    }
    answer.await
}

/// Who answered `key`, from the task's input rounds.
fn answered_by(ctx: &TaskContext, key: &str) -> String {
    ctx.input_rounds()
        .ok()
        .and_then(|rounds| rounds.into_iter().find(|r| r.key == key))
        .and_then(|r| r.answered_by)
        .unwrap_or_else(|| "unknown".into())
}

/// Why `arguments` does not fit the tool's input schema, or `None`.
pub fn schema_errors(ask: &Ask, arguments: &Value) -> Option<String> {
    let schema = ask.input_schema.as_ref()?;
    super::edit::argument_errors(schema, arguments)
        .err()
        .map(|errors| {
            errors
                .iter()
                .map(|e| format!("{} {}", e.path, e.message))
                .collect::<Vec<_>>()
                .join("; ")
        })
}

//! One audit record per decision on a call ([`taskdeck_engine::DecisionRecord`]): the policy's
//! allow or deny (`rule` or `default`), a human's approval (with the edited call) or denial,
//! an expiry and the default it applied, or a question abandoned when its task ended. The
//! record is written with the task's timeline event `decision` in one store write; a record
//! that cannot be written is logged and the decision stands (the store failing fails the task
//! anyway).

use serde_json::Value;

use super::{Answer, Ask, digest, question};
use crate::policy::{Decision, OnExpiry, Verdict};
use taskdeck_engine::{DecisionRecord, TaskContext, TaskRecord};

/// Records the policy's own decision on a call (`allow` or `deny`, by a rule or a default).
pub async fn record_verdict(
    ctx: &TaskContext,
    server: &str,
    tool: &str,
    arguments: &Value,
    verdict: &Verdict,
) {
    write(
        ctx,
        verdict_record(ctx.principal(), server, tool, arguments, verdict),
    )
    .await;
}

/// The audit record of a decision the policy took without asking anyone: `allow` or `deny`
/// (or `ask`: handed back to the agent's own prompt, for hooks), by a rule or a default.
pub fn verdict_record(
    principal: &str,
    server: &str,
    tool: &str,
    arguments: &Value,
    verdict: &Verdict,
) -> DecisionRecord {
    let decision = match verdict.decision {
        Decision::Allow => "allow",
        Decision::Deny => "deny",
        Decision::Ask => "ask",
    };
    DecisionRecord {
        task_id: None,
        principal: principal.to_string(),
        server: server.to_string(),
        tool: tool.to_string(),
        digest: digest(server, tool, arguments),
        decision: decision.into(),
        decided_by: match verdict.rule_id {
            Some(_) => "rule".into(),
            None => "default".into(),
        },
        human: None,
        rule: verdict.rule_id.clone(),
        reason: Some(verdict.reason.clone()),
        arguments: arguments.clone(),
        edited_arguments: None,
    }
}

/// Records how the human question `ask` ended: `answer`, or `None` when it was abandoned (the
/// task was cancelled or ended while asking): `deny`, or `ask` for an agent whose own prompt
/// then decides (a hook's question: the agent stopped waiting).
pub async fn record_answer(ctx: &TaskContext, ask: &Ask, answer: Option<&Answer>) {
    let (decision, decided_by, human, reason, edited) = match answer {
        Some(Answer::Approved { edited, humans, .. }) => (
            "allow",
            "human",
            Some(humans.join(", ")),
            None,
            edited.clone(),
        ),
        Some(Answer::Denied { reason, human }) => {
            ("deny", "human", Some(human.clone()), reason.clone(), None)
        }
        Some(Answer::Expired(on_expiry)) => (
            // `ask` hands the call back only to an agent with a prompt of its own.
            match on_expiry {
                OnExpiry::Ask if !ask.hands_back => "deny",
                other => other.as_str(),
            },
            "expiry",
            None,
            Some(format!(
                "nobody answered in time; onExpiry: {}",
                on_expiry.as_str()
            )),
            None,
        ),
        None if ask.hands_back => (
            "ask",
            "abandoned",
            None,
            Some("the agent stopped waiting; its own prompt decides".into()),
            None,
        ),
        None => (
            "deny",
            "abandoned",
            None,
            Some("the task ended while the question was open".into()),
            None,
        ),
    };
    write(
        ctx,
        DecisionRecord {
            task_id: None,
            principal: ctx.principal().to_string(),
            server: ask.server.clone(),
            tool: ask.tool.clone(),
            digest: digest(&ask.server, &ask.tool, &ask.arguments),
            decision: decision.into(),
            decided_by: decided_by.into(),
            human,
            rule: ask.verdict.rule_id.clone(),
            reason,
            arguments: ask.arguments.clone(),
            // A human may type a credential into an edit: it is recorded masked, as any call.
            edited_arguments: edited.as_ref().map(super::shown_arguments),
        },
    )
    .await;
}

/// The records of the approvals `task` was still asking when the process ended (stopped, killed,
/// or the machine went down), for a tool that is not run again: each a `deny` by `abandoned` of
/// the call as its question showed it, or an `ask` when `hands_back` (the agent's own prompt
/// decided: a hook's question). A stop records nothing itself ([`super::ask::ask`]), so each
/// question is recorded once.
pub fn abandoned_at_restart(task: &TaskRecord, hands_back: bool) -> Vec<DecisionRecord> {
    task.input_requests
        .values()
        .filter_map(question::meta_of)
        .map(|meta| DecisionRecord {
            task_id: Some(task.task_id.clone()),
            principal: meta.principal,
            server: meta.server,
            tool: meta.tool,
            digest: meta.digest,
            decision: if hands_back { "ask" } else { "deny" }.into(),
            decided_by: "abandoned".into(),
            human: None,
            rule: meta.verdict.rule,
            reason: Some(
                if hands_back {
                    "Taskdeck stopped while the question was open; the agent's own prompt decides"
                } else {
                    "Taskdeck stopped while the question was open"
                }
                .into(),
            ),
            arguments: meta.arguments,
            edited_arguments: None,
        })
        .collect()
}

async fn write(ctx: &TaskContext, rec: DecisionRecord) {
    if let Err(e) = ctx.record_decision(rec).await {
        tracing::warn!(
            task_id = ctx.task_id(),
            "cannot record the decision in the audit log: {e}"
        );
    }
}

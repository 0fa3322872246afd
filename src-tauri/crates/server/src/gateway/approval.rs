//! The policy step of a gateway call: `allow` goes on, `deny` ends the call with a tool error
//! result, `ask` waits for the human's answer to a human-only input request that shows the
//! server, the tool, the principal and the exact arguments. Approving with "always allow"
//! writes a narrow rule: this principal, this server and tool, these exact arguments.

use rmcp::model::Tool;
use serde_json::{Value, json};

use super::call::APPROVAL_KEY;
use crate::policy::{Decision, Policy, PolicyCall, ToolHints, question};
use taskdeck_engine::{Outcome, TaskContext};

/// Longest rendering of the arguments shown in the question; longer ones are cut (the task's
/// arguments, shown beside it, are whole).
const SHOWN_ARGUMENTS_BYTES: usize = 4000;

/// Lets the call go on (`Ok`) or ends it with the outcome the agent gets (`Err`).
pub async fn obtain(
    ctx: &TaskContext,
    policy: &Policy,
    server: &str,
    tool: &Tool,
    arguments: &Value,
) -> Result<(), Outcome> {
    let hints = tool
        .annotations
        .as_ref()
        .map(|a| ToolHints {
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
        })
        .unwrap_or_default();
    let verdict = policy.decide(&PolicyCall {
        principal: ctx.principal(),
        server,
        tool: &tool.name,
        arguments,
        hints,
    });
    match verdict.decision {
        Decision::Allow => Ok(()),
        Decision::Deny => Err(refused(format!(
            "Taskdeck's policy denies {server}'s {} for {} ({}). Do not retry this call; ask the user to change the policy if it is needed.",
            tool.name,
            ctx.principal(),
            verdict.reason
        ))),
        Decision::Ask => ask_human(ctx, policy, server, tool, arguments).await,
    }
}

async fn ask_human(
    ctx: &TaskContext,
    policy: &Policy,
    server: &str,
    tool: &Tool,
    arguments: &Value,
) -> Result<(), Outcome> {
    let mut shown = serde_json::to_string_pretty(arguments).unwrap_or_default();
    if shown.len() > SHOWN_ARGUMENTS_BYTES {
        let mut cut = SHOWN_ARGUMENTS_BYTES;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push_str("\n… (cut; the task shows the whole arguments)");
    }
    let message = format!(
        "{principal} wants to call {tool} on {server} with:\n\n{shown}",
        principal = ctx.principal(),
        tool = tool.name,
    );
    let schema = question::approval_schema(&format!(
        "Always allow {} to call {server}'s {} with exactly these arguments",
        ctx.principal(),
        tool.name
    ));
    let answer = ctx
        .elicit_human(APPROVAL_KEY, &message, schema)
        .await
        .map_err(Outcome::from)?;
    if !question::approved(&answer) {
        return Err(refused(match question::declined_reason(&answer) {
            Some(r) => format!(
                "The user declined this call of {server}'s {}. Their reason: {r}",
                tool.name
            ),
            None => format!(
                "The user declined this call of {server}'s {}. Do not retry it unchanged.",
                tool.name
            ),
        }));
    }
    if answer
        .pointer("/content/alwaysAllow")
        .and_then(Value::as_bool)
        == Some(true)
    {
        let note = format!("always allow, from task {}", ctx.task_id());
        if let Err(e) = policy.allow_always(ctx.principal(), server, &tool.name, arguments, &note) {
            tracing::warn!("cannot save the policy rule: {e}");
            // The human asked for a rule and did not get it: the task's timeline says so.
            ctx.status_message(format!("\"Always allow\" was not saved: {e}"))
                .await;
        }
    }
    Ok(())
}

/// A tool error result (the call was not made): the agent reads `text`.
fn refused(text: String) -> Outcome {
    Outcome::Completed(json!({"content": [{"type": "text", "text": text}], "isError": true}))
}

//! The policy step of a gateway call ([`crate::approvals::obtain`]): `allow` goes on, `deny`
//! ends the call with a tool error result, `ask` waits for a human, who sees the server, the
//! tool, the principal and the exact arguments, and may approve the call as asked, approve an
//! edited call (checked against the upstream's inputSchema), or deny it with a reason the agent
//! reads. Approving with "always allow" writes a narrow rule.

use rmcp::model::Tool;
use serde_json::{Value, json};

use super::call::APPROVAL_KEY;
use crate::{
    approvals::{self, Approval, ApprovalCall, refusal},
    policy::{Policy, ToolHints},
};
use taskdeck_engine::{Outcome, TaskContext};

/// Longest rendering of the arguments shown in the question; longer ones are cut (the task's
/// arguments, shown beside it, are whole).
const SHOWN_ARGUMENTS_BYTES: usize = 4000;

/// The arguments to call `tool` with and whether a person edited them (the edit, then), or
/// the outcome the agent gets (`Err`: refused, or the task ended while asking).
pub async fn obtain(
    ctx: &TaskContext,
    policy: &Policy,
    server: &str,
    tool: &Tool,
    arguments: &Value,
) -> Result<(Value, bool), Outcome> {
    let hints = tool
        .annotations
        .as_ref()
        .map(|a| ToolHints {
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
        })
        .unwrap_or_default();
    let schema = Value::Object((*tool.input_schema).clone());
    let call = ApprovalCall {
        server,
        tool: &tool.name,
        arguments,
        hints,
        input_schema: Some(&schema),
        editable: true,
        key: APPROVAL_KEY,
        message: format!(
            "{principal} wants to call {tool} on {server} with:\n\n{shown}",
            principal = ctx.principal(),
            tool = tool.name,
            shown = shown_arguments(&approvals::shown_arguments(arguments)),
        ),
        always_title: Some(format!(
            "Always allow {} to call {server}'s {} with exactly these arguments",
            ctx.principal(),
            tool.name
        )),
        expiry_cap_ms: None,
        exact_only: &[],
        hands_back: false,
    };
    match approvals::obtain(ctx, policy, call).await {
        Ok(Approval::Allow {
            arguments, edited, ..
        }) => {
            if edited {
                // The task shows the call that is made, credentials masked as at its creation.
                let shown = crate::tools::secrets::redact_value(&arguments);
                ctx.arguments_edited(shown.unwrap_or_else(|| arguments.clone()))
                    .await;
            }
            Ok((arguments, edited))
        }
        Ok(Approval::Deny { message, by }) => Err(refused(message, Some(refusal::mark_for(by)))),
        Ok(Approval::AgentDecides { message }) => Err(refused(message, None)),
        Err(e) => Err(Outcome::from(e)),
    }
}

/// The result of a call a person edited before approving it, with what the agent must know
/// first: a text block, before the server's own, saying so and naming the arguments it was
/// called with (credentials masked, cut as the question cuts them), so that the agent does not
/// take the outcome for its own call's (run_command's result says it the same way). `failed`:
/// the call's failure message gets the same sentence.
pub fn tell_edited(outcome: Outcome, called_with: &Value) -> Outcome {
    let note = format!(
        "A person edited this call before approving it: it was called with these arguments, \
         not yours:\n{}",
        shown_arguments(&approvals::shown_arguments(called_with))
    );
    match outcome {
        Outcome::Completed(mut result) => {
            let block = json!({"type": "text", "text": note});
            match result.get_mut("content").and_then(Value::as_array_mut) {
                Some(content) => content.insert(0, block),
                None => result["content"] = json!([block]),
            }
            Outcome::Completed(result)
        }
        Outcome::Failed(mut failure) => {
            failure.message = format!("{}\n{note}", failure.message);
            Outcome::Failed(failure)
        }
        other => other,
    }
}

/// The arguments pretty-printed, cut at [`SHOWN_ARGUMENTS_BYTES`].
fn shown_arguments(arguments: &Value) -> String {
    let mut shown = serde_json::to_string_pretty(arguments).unwrap_or_default();
    if shown.len() > SHOWN_ARGUMENTS_BYTES {
        let mut cut = SHOWN_ARGUMENTS_BYTES;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push_str("\n… (cut; the task shows the whole arguments)");
    }
    shown
}

/// A tool error result (the call was not made): the agent reads `text`; `mark`: the
/// [`refusal`] mark, when a human or the policy refused it.
fn refused(text: String, mark: Option<&str>) -> Outcome {
    let mut result = json!({"content": [{"type": "text", "text": text}], "isError": true});
    if let Some(mark) = mark {
        refusal::mark(&mut result, mark);
    }
    Outcome::Completed(result)
}

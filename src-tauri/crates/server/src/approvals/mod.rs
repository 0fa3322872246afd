//! The one approval step every call of someone else's tool passes (gateway calls, agent hooks,
//! `run_command`, `wait_for_http_job`): the policy decides allow, ask or deny; an `ask` is a
//! question only a human answers ([`question`]), bound to the exact call by its [`digest`],
//! under the terms the policy set (expiry and its default, how many distinct humans: [`ask`]);
//! the human may approve, approve an edited call (checked against the tool's input schema:
//! [`edit`]), or deny with a reason the agent reads. The inbox's view of open questions is
//! [`inbox`]; deciding them from `/v1` or a notification is [`decide`].

pub mod ask;
pub mod decide;
mod digest;
pub mod edit;
pub mod inbox;
pub mod question;
pub mod record;
pub mod refusal;

use serde_json::Value;

pub use ask::{Answer, Ask};
pub use digest::{canonical_json, digest};

use crate::policy::{Decision, OnExpiry, Policy, PolicyCall, ToolHints};
use taskdeck_engine::{InputError, TaskContext};

/// One call to decide on, as [`obtain`] takes it.
#[derive(Debug, Clone)]
pub struct ApprovalCall<'a> {
    /// The server the tool belongs to (an upstream's name, `claude-code`, `codex`).
    pub server: &'a str,
    /// The tool's name on that server.
    pub tool: &'a str,
    /// The call's arguments (a JSON object).
    pub arguments: &'a Value,
    /// The tool's annotations, for the policy's default.
    pub hints: ToolHints,
    /// The tool's input schema, when known (edits are checked against it).
    pub input_schema: Option<&'a Value>,
    /// True when the human may approve an edited call.
    pub editable: bool,
    /// The question's key (`approve`).
    pub key: &'a str,
    /// The question's text.
    pub message: String,
    /// The "always allow" checkbox's title; `None` offers none.
    pub always_title: Option<String>,
    /// The longest the question may stay open, in ms, whatever the terms (a hook's timeout).
    pub expiry_cap_ms: Option<u64>,
    /// Arguments an `allow` rule matches only by their exact value (a shell line with shell
    /// syntax: [`crate::policy::has_shell_syntax`]; see [`Policy::decide_exact`]).
    pub exact_only: &'a [&'a str],
    /// True when the agent has a prompt of its own to hand the decision back to (hooks): an
    /// expiry with `onExpiry: "ask"` then gives [`Approval::AgentDecides`]; otherwise that is a
    /// refusal.
    pub hands_back: bool,
}

/// `arguments` as they may be shown, recorded and hashed: the values of secret-named members
/// redacted and passwords in URLs masked, at any depth ([`crate::tools::secrets::redact_value`]).
pub fn shown_arguments(arguments: &Value) -> Value {
    crate::tools::secrets::redact_value(arguments).unwrap_or_else(|| arguments.clone())
}

/// The paragraph an approval question of task `task_id` ends with when its call holds values
/// shown masked ([`shown_arguments`], [`Ask::hidden`]): approving sends what the person has
/// not seen, and how to read it.
pub fn hidden_values_note(task_id: &str) -> String {
    format!(
        "Values that look like credentials are hidden here ([redacted], ****), and approving \
         sends them as the agent gave them: a hidden value may be part of the command. Read the \
         call whole before you approve it (\"Show hidden values\" in Taskdeck's window, or \
         taskdeck tasks reveal {task_id})."
    )
}

/// Why `by`'s approval of question `key` of task `task_id` was refused
/// ([`EngineError::HiddenUnread`](taskdeck_engine::EngineError::HiddenUnread)), and how to read
/// the call whole: every way Taskdeck offers.
pub fn hidden_unread_text(key: &str, task_id: &str, by: &str) -> String {
    format!(
        "{key}: this call is shown with values hidden, and {by} has not read it whole: read it \
         first (`taskdeck tasks reveal {task_id}`, POST /v1/tasks/{task_id}/reveal, or \"Show \
         hidden values\" in Taskdeck's window), then approve it"
    )
}

/// What the call may do.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    /// Go on, with these arguments (the human's edit when `edited`).
    Allow {
        /// The arguments to call with.
        arguments: Value,
        /// True when a human edited the call.
        edited: bool,
        /// Who or what allowed it.
        by: AllowedBy,
    },
    /// Refused; `message` tells the agent why (the human's reason, the rule, the expiry).
    Deny {
        /// For the agent.
        message: String,
        /// Who or what refused it.
        by: DeniedBy,
    },
    /// Nobody answered in time and the terms hand the decision back to the agent's own prompt
    /// (hooks); a call made through Taskdeck treats it as [`Approval::Deny`].
    AgentDecides {
        /// For the agent.
        message: String,
    },
}

/// Who or what allowed a call ([`Approval::Allow`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AllowedBy {
    /// A policy rule, or the policy's default, without asking anyone.
    Policy,
    /// These humans approved it, in order.
    Humans(Vec<String>),
    /// Nobody answered in time and the terms allow on expiry.
    Expiry,
}

/// Who or what refused a call ([`Approval::Deny`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeniedBy {
    /// A policy rule, or the policy's default, without asking anyone.
    Policy,
    /// A human answered no.
    Human,
    /// Nobody answered in time and the terms refuse on expiry.
    Expiry,
}

/// Decides on `call` for the task of `ctx`: the policy's verdict, and for `ask` the human's
/// answer under the verdict's terms. "Always allow" saves the narrow rule (the edited call's
/// arguments when edited; a save that fails is said in the task's status message). Errors:
/// the task was cancelled, or its question could not be stored.
pub async fn obtain(
    ctx: &TaskContext,
    policy: &Policy,
    call: ApprovalCall<'_>,
) -> Result<Approval, InputError> {
    let verdict = policy.decide_exact(
        &PolicyCall {
            principal: ctx.principal(),
            server: call.server,
            tool: call.tool,
            arguments: call.arguments,
            hints: call.hints,
        },
        call.exact_only,
    );
    let (server, tool) = (call.server, call.tool);
    // Credentials are never shown, recorded or hashed: a call holding some is approved or
    // denied as it is (an edit would lose them) and gets no "always allow" (the rule would
    // write them to policy.json).
    let shown = shown_arguments(call.arguments);
    let holds_secrets = shown != *call.arguments;
    if verdict.decision != Decision::Ask {
        record::record_verdict(ctx, server, tool, &shown, &verdict).await;
    }
    match verdict.decision {
        Decision::Allow => {
            return Ok(Approval::Allow {
                arguments: call.arguments.clone(),
                edited: false,
                by: AllowedBy::Policy,
            });
        }
        Decision::Deny => {
            return Ok(Approval::Deny {
                message: format!(
                    "Taskdeck's policy denies {server}'s {tool} for {} ({}). Do not retry this call; ask the user to change the policy if it is needed.",
                    ctx.principal(),
                    verdict.reason
                ),
                by: DeniedBy::Policy,
            });
        }
        Decision::Ask => {}
    }
    let question = Ask {
        key: call.key.to_string(),
        message: call.message,
        always_title: call.always_title.filter(|_| !holds_secrets),
        server: server.to_string(),
        tool: tool.to_string(),
        arguments: shown,
        hidden: holds_secrets.then(|| call.arguments.clone()),
        input_schema: call.input_schema.cloned(),
        editable: call.editable && !holds_secrets,
        verdict,
        expiry_cap_ms: call.expiry_cap_ms,
        hands_back: call.hands_back,
    };
    let judge = |edited: &Value| {
        policy.judge_edit(&PolicyCall {
            principal: ctx.principal(),
            server,
            tool,
            arguments: edited,
            hints: call.hints,
        })
    };
    Ok(match ask::ask(ctx, &question, &judge).await? {
        Answer::Approved {
            edited,
            always,
            humans,
        } => {
            let arguments = edited.clone().unwrap_or_else(|| call.arguments.clone());
            if always {
                let note = format!("always allow, from task {}", ctx.task_id());
                if let Err(e) =
                    policy.allow_always(ctx.principal(), server, tool, &arguments, &note)
                {
                    tracing::warn!("cannot save the policy rule: {e}");
                    ctx.status_message(format!("\"Always allow\" was not saved: {e}"))
                        .await;
                }
            }
            Approval::Allow {
                arguments,
                edited: edited.is_some(),
                by: AllowedBy::Humans(humans),
            }
        }
        Answer::Denied { reason, human } => Approval::Deny {
            message: match reason {
                Some(r) => {
                    format!("{human} declined this call of {server}'s {tool}. Their reason: {r}")
                }
                None => format!(
                    "{human} declined this call of {server}'s {tool}. Do not retry it unchanged."
                ),
            },
            by: DeniedBy::Human,
        },
        Answer::Expired(OnExpiry::Allow) => Approval::Allow {
            arguments: call.arguments.clone(),
            edited: false,
            by: AllowedBy::Expiry,
        },
        Answer::Expired(OnExpiry::Ask) if call.hands_back => Approval::AgentDecides {
            message: format!(
                "Nobody answered in Taskdeck in time; the approval of {server}'s {tool} is yours."
            ),
        },
        Answer::Expired(OnExpiry::Deny | OnExpiry::Ask) => Approval::Deny {
            message: format!(
                "Nobody answered the approval of this call of {server}'s {tool} in time; the policy refuses it when an approval expires."
            ),
            by: DeniedBy::Expiry,
        },
    })
}

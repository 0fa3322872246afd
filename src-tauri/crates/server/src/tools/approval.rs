//! `request_approval`: an agent asks a human. The task goes `input_required` at once with one
//! form elicitation (key `approval`); the human's answer (validated against the form's schema)
//! becomes the result: `structuredContent = {action: "accept"|"decline"|"cancel", content?}`.
//! Resumable: after a restart the question is asked again under the same key, and an answer
//! given before the restart is not lost.

use futures::{FutureExt, future::BoxFuture};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::arguments::{input_schema, parse, parse_for_run};
use taskdeck_engine::{Outcome, TaskContext, TaskTool, ToolDescriptor, ToolMode, limits};

/// The tool's name.
const NAME: &str = "request_approval";

/// `request_approval`'s arguments: `{message: string, requestedSchema?: object}`, nothing else.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ApprovalArguments {
    /// What you ask the human, in plain words (at most 64 KiB).
    #[schemars(length(min = 1))]
    pub message: String,
    /// Optional form: an elicitation schema (flat object of string, number, integer, boolean and enum fields).
    pub requested_schema: Option<Map<String, Value>>,
}

/// The `request_approval` tool.
pub struct RequestApproval {
    descriptor: ToolDescriptor,
}

impl RequestApproval {
    /// The tool with its input schema, that of [`ApprovalArguments`].
    pub fn new() -> RequestApproval {
        RequestApproval {
            descriptor: ToolDescriptor {
                name: NAME.into(),
                title: Some("Ask a human for approval".into()),
                description:
                    "Ask the human at the Taskdeck window to approve something, or to fill in a \
                    small form. Returns at once with a task; the result is the human's answer: \
                    action (accept, decline or cancel) and, for forms, the content they entered."
                        .into(),
                input_schema: input_schema::<ApprovalArguments>(),
                mode: ToolMode::Task { required: false },
                resumable: true,
                agent_callable: true,
            },
        }
    }
}

impl Default for RequestApproval {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskTool for RequestApproval {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// The message must fit [`limits::INPUT_MESSAGE_MAX_BYTES`]; the form, when given, must be
    /// an elicitation schema.
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        let arguments: ApprovalArguments = parse(NAME, arguments)?;
        limits::check_input_message("request_approval's message", &arguments.message)?;
        match arguments.requested_schema {
            Some(schema) => super::schema::check_elicitation_schema(&Value::Object(schema)),
            None => Ok(()),
        }
    }

    /// Credentials in the message and the form's texts (a URL's password, `TOKEN=…`) are
    /// stored and shown masked, and the human is asked the masked question too: what the agent
    /// asks is only shown, never run. The form's field names (`password`) are no credentials
    /// ([`super::secrets::mask_strings`]).
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        super::secrets::mask_strings(arguments)
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let arguments = self.redact_arguments(&arguments).unwrap_or(arguments);
        async move {
            let ApprovalArguments {
                message,
                requested_schema,
            } = match parse_for_run(NAME, arguments) {
                Ok(a) => a,
                Err(outcome) => return outcome,
            };
            let schema = requested_schema.map_or_else(
                || json!({"type": "object", "properties": {}}),
                Value::Object,
            );
            if !ctx.is_resumed() {
                ctx.status_message(format!("Waiting for a human in Taskdeck: {message}"))
                    .await;
            }
            let answer = match ctx.elicit("approval", &message, schema).await {
                Ok(a) => a,
                Err(e) => return e.into(),
            };
            let action = answer
                .get("action")
                .and_then(Value::as_str)
                .unwrap_or("cancel")
                .to_string();
            let content = answer.get("content").cloned();
            // Who answered (the human in Taskdeck, or the MCP client through tasks/update) is
            // in the task's input rounds; the text does not guess.
            let text = match (&action[..], &content) {
                ("accept", Some(c)) if c.as_object().is_some_and(|o| !o.is_empty()) => {
                    accepted_text(c)
                }
                ("accept", _) => "Accepted.".to_string(),
                ("decline", Some(c)) if c.get("reason").is_some_and(Value::is_string) => {
                    format!(
                        "Declined. Their reason: {}",
                        c["reason"].as_str().unwrap_or_default()
                    )
                }
                ("decline", _) => "Declined.".to_string(),
                _ => "Dismissed without an answer.".to_string(),
            };
            let mut structured = json!({"action": action});
            if let Some(c) = content {
                structured["content"] = c;
            }
            let mut result = json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured,
                "isError": false
            });
            if action == "decline" {
                crate::approvals::refusal::mark(&mut result, "declined");
            }
            Outcome::Completed(result)
        }
        .boxed()
    }
}

/// The result's text for an accepted answer `content` (a JSON object): `Accepted: {…}`. The
/// first line is the task's statusMessage, shown in every list: a field whose name says it is
/// a credential (the form's masked box, [`super::secrets::is_secret_name`]) is `[redacted]`
/// there, and its value as typed is on a second line, for the agent, which gets it in
/// `structuredContent.content` too (the window does not write it out).
fn accepted_text(content: &Value) -> String {
    let Some(fields) = content.as_object() else {
        return format!("Accepted: {content}");
    };
    let secret = |(name, v): &(&String, &Value)| {
        super::secrets::is_secret_name(name)
            && (v.as_str().is_some_and(|s| !s.is_empty()) || v.is_number())
    };
    let secrets: Map<String, Value> = fields
        .iter()
        .filter(secret)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if secrets.is_empty() {
        return format!("Accepted: {content}");
    }
    let shown: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| match secrets.contains_key(k) {
            true => (k.clone(), Value::String(super::secrets::REDACTED.into())),
            false => (k.clone(), v.clone()),
        })
        .collect();
    format!(
        "Accepted: {}\nSecret fields, as typed: {}",
        Value::Object(shown),
        Value::Object(secrets)
    )
}

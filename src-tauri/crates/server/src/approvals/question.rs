//! The approval question every `ask` puts to the human (run_command, wait_for_http_job,
//! gateway calls, agent hooks): a form only a human answers, whose action decides (accept =
//! approve, decline or cancel = deny), with optional fields `alwaysAllow` (titled with what the
//! narrow rule will allow), `reason` (why they declined, passed on to the agent) and, when the
//! call may be edited, `arguments` (the edited arguments object as JSON text). The request
//! carries the call and its terms in `params._meta["taskdeck/approval"]` ([`ApprovalMeta`]), which
//! the inbox, the notifications and `/v1/approvals` read; agents never see it (a human-only
//! request is hidden from them, ARCHITECTURE invariant 14).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The `_meta` key of an approval question.
pub const META_KEY: &str = "taskdeck/approval";

/// True when input request `request` (`{method, params}`) carries `params._meta[META_KEY]`:
/// the inbox would show it as Taskdeck's own approval of a call. A question from outside
/// Taskdeck's approvals (an external job's runner, a hosted task's host) that does is refused.
pub fn poses_as_approval(request: &Value) -> bool {
    request
        .get("params")
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(META_KEY))
        .is_some()
}

/// What the policy said, as the question shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerdictShown {
    /// `"ask"` (a question exists only for an ask).
    pub decision: String,
    /// The rule that decided, `None` for a default.
    pub rule: Option<String>,
    /// For people: `"rule r-5f2c0a1b"` or the default's reason.
    pub reason: String,
}

/// `params._meta["taskdeck/approval"]` of an approval question: the call exactly, and the
/// terms it is asked under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalMeta {
    /// The server whose tool is called: an upstream's name, `taskdeck`, `claude-code`, `codex`.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// Who calls (the task's principal).
    pub principal: String,
    /// The call's arguments as shown (credentials redacted).
    pub arguments: Value,
    /// The tool's input schema, for editing; `None` when not known.
    pub input_schema: Option<Value>,
    /// True when the human may approve an edited call (`content.arguments`).
    pub editable: bool,
    /// [`super::digest`] of server, tool and arguments.
    pub digest: String,
    /// What the policy said.
    pub verdict: VerdictShown,
    /// When the call was first asked, Unix ms: the same in every round of one approval (M of
    /// N, an edit asked again), so that the queue orders a call by how long it has waited.
    /// Absent in questions asked before Taskdeck said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_at_ms: Option<i64>,
    /// When the question expires, Unix ms; `None` = never.
    pub expires_at_ms: Option<i64>,
    /// What it becomes then: `"deny"`, `"allow"` or `"ask"`.
    pub on_expiry: String,
    /// Distinct humans who must approve.
    pub required: u32,
    /// Humans who approved so far (M of N).
    pub approved_by: Vec<String>,
    /// The human who edited the call these `arguments` are, when one did (M of N: the others
    /// approve that human's edit, not the agent's call); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_by: Option<String>,
    /// True when `arguments` masks values the call holds (credentials): a person may read
    /// the call whole while the question is open (`POST /v1/tasks/{taskId}/reveal`); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden_values: bool,
}

/// The form's schema: `alwaysAllow` (boolean, titled `always_title`) when there is one,
/// `reason` (string), and `arguments` (string: JSON text) when `editable`.
pub fn approval_schema_with(always_title: Option<&str>, editable: bool) -> Value {
    let mut properties = serde_json::Map::new();
    if let Some(title) = always_title {
        properties.insert(
            "alwaysAllow".into(),
            json!({"type": "boolean", "title": title, "default": false}),
        );
    }
    properties.insert(
        "reason".into(),
        json!({"type": "string", "title": "Reason, if you decline"}),
    );
    if editable {
        properties.insert(
            "arguments".into(),
            json!({"type": "string", "title": "Edited arguments (JSON object), to approve a changed call"}),
        );
    }
    json!({"type": "object", "properties": properties})
}

/// The form's schema with "always allow" and no editing (questions that are not about one
/// call, e.g. reaching a private network).
pub fn approval_schema(always_title: &str) -> Value {
    approval_schema_with(Some(always_title), false)
}

/// The whole `elicitation/create` request of an approval question.
pub fn approval_request(message: &str, always_title: Option<&str>, meta: &ApprovalMeta) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": approval_schema_with(always_title, meta.editable),
            "_meta": {META_KEY: meta},
        }
    })
}

/// The [`ApprovalMeta`] of an input request, when it is an approval question.
pub fn meta_of(request: &Value) -> Option<ApprovalMeta> {
    let meta = request.pointer("/params/_meta")?.get(META_KEY)?;
    serde_json::from_value(meta.clone()).ok()
}

/// The human's reason in a declined (or cancelled) answer (`content.reason`), when they gave a
/// non-blank one.
pub fn declined_reason(answer: &Value) -> Option<&str> {
    answer
        .pointer("/content/reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
}

/// True when the answer approves (`action: "accept"`).
pub fn approved(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
}

/// True when an approving answer asks for the narrow rule (`content.alwaysAllow: true`).
pub fn always_allow(answer: &Value) -> bool {
    approved(answer)
        && answer
            .pointer("/content/alwaysAllow")
            .and_then(Value::as_bool)
            == Some(true)
}

/// The edited arguments of an approving answer (`content.arguments`, JSON text of an object),
/// `None` when the call was approved as asked. Errors: the text is not a JSON object.
pub fn edited_arguments(answer: &Value) -> Option<Result<Value, String>> {
    let text = answer
        .pointer("/content/arguments")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())?;
    Some(match serde_json::from_str::<Value>(text) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err("the edited arguments are not a JSON object".into()),
        Err(e) => Err(format!("the edited arguments are not JSON: {e}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_read_from_a_decline() {
        let no = json!({"action": "decline", "content": {"reason": "  not on prod "}});
        assert_eq!(declined_reason(&no), Some("not on prod"));
        assert!(!approved(&no) && !always_allow(&no));
        let blank = json!({"action": "decline", "content": {"reason": " "}});
        assert_eq!(declined_reason(&blank), None);
        let yes = json!({"action": "accept", "content": {"alwaysAllow": true}});
        assert!(approved(&yes) && always_allow(&yes));
        assert!(approval_schema("t")["properties"]["reason"].is_object());
    }

    #[test]
    fn edits_are_json_objects() {
        let edit = json!({"action": "accept", "content": {"arguments": "{\"path\": \"/tmp/x\"}"}});
        assert_eq!(edited_arguments(&edit), Some(Ok(json!({"path": "/tmp/x"}))));
        let bad = json!({"action": "accept", "content": {"arguments": "[1]"}});
        assert!(matches!(edited_arguments(&bad), Some(Err(_))));
        assert_eq!(edited_arguments(&json!({"action": "accept"})), None);
    }

    #[test]
    fn the_meta_is_read_back_from_the_request() {
        let meta = ApprovalMeta {
            server: "fs".into(),
            tool: "write_file".into(),
            principal: "claude-code".into(),
            arguments: json!({"path": "/a"}),
            input_schema: None,
            editable: true,
            digest: super::super::digest("fs", "write_file", &json!({"path": "/a"})),
            verdict: VerdictShown {
                decision: "ask".into(),
                rule: None,
                reason: "default".into(),
            },
            asked_at_ms: Some(1),
            expires_at_ms: Some(5),
            on_expiry: "deny".into(),
            required: 2,
            approved_by: vec!["alice".into()],
            edited_by: Some("bob".into()),
            hidden_values: true,
        };
        let request = approval_request("q", Some("always"), &meta);
        assert_eq!(meta_of(&request), Some(meta));
        assert!(
            request
                .pointer("/params/requestedSchema/properties/arguments")
                .is_some()
        );
        assert_eq!(
            meta_of(&json!({"method": "elicitation/create", "params": {}})),
            None
        );
    }
}

//! The approval question every `ask` puts to the human (run_command, wait_for_http_job,
//! gateway calls): a form only the human answers, whose action decides (accept = approve,
//! decline or cancel = deny), with two optional fields: `alwaysAllow` (titled with what the
//! narrow rule will allow) and `reason` (why they declined, passed on to the agent).

use serde_json::{Value, json};

/// The form's schema: `{alwaysAllow: boolean (default false, titled `always_title`), reason:
/// string (titled "Reason, if you decline")}`.
pub fn approval_schema(always_title: &str) -> Value {
    json!({"type": "object", "properties": {
        "alwaysAllow": {"type": "boolean", "title": always_title, "default": false},
        "reason": {"type": "string", "title": "Reason, if you decline"}
    }})
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
}

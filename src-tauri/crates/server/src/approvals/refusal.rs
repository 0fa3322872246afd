//! The refusal mark: `_meta["io.taskdeck/refusal"]` on a CallToolResult that Taskdeck made in
//! place of a call it did not make, or for a question a person answered no to: `"declined"` (a
//! human answered no) or `"denied"` (the policy refused it: a rule, or its terms once nobody
//! answered in time). The window shows such a task as "Declined" or "Denied by policy" rather
//! than "Completed with error". Only Taskdeck may set it: a result that comes from elsewhere
//! (an upstream server through the gateway, a job runner's report, a hosted task's host) has
//! the mark taken out ([`unmark`]) before it is stored, so it cannot pass a call that ran for
//! one that did not.

use serde_json::{Map, Value};

use super::DeniedBy;

/// The `_meta` member that holds the mark (MCP `_meta` key naming: a reverse-DNS prefix).
pub const KEY: &str = "io.taskdeck/refusal";

/// The mark for a refusal by `by`: `"declined"` for a human, `"denied"` for the policy, its
/// rules or its terms for an approval nobody answered in time (`onExpiry`).
pub fn mark_for(by: DeniedBy) -> &'static str {
    match by {
        DeniedBy::Human => "declined",
        DeniedBy::Policy | DeniedBy::Expiry => "denied",
    }
}

/// `result` (a CallToolResult object) with the mark `mark` in its `_meta`.
pub fn mark(result: &mut Value, mark: &str) {
    let Value::Object(result) = result else {
        return;
    };
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        meta.insert(KEY.into(), Value::String(mark.into()));
    }
}

/// Takes the mark out of `result`, a CallToolResult from outside Taskdeck; an `_meta` left
/// empty goes too. True when there was one.
pub fn unmark(result: &mut Value) -> bool {
    match result {
        Value::Object(result) => unmark_object(result),
        _ => false,
    }
}

/// [`unmark`] on the CallToolResult's members.
pub fn unmark_object(result: &mut Map<String, Value>) -> bool {
    let Some(Value::Object(meta)) = result.get_mut("_meta") else {
        return false;
    };
    let had = meta.remove(KEY).is_some();
    if had && meta.is_empty() {
        result.remove("_meta");
    }
    had
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marks_and_unmarks() {
        let mut r = json!({"content": [], "isError": true});
        mark(&mut r, "declined");
        assert_eq!(r["_meta"][KEY], "declined");
        assert!(unmark(&mut r));
        assert_eq!(r, json!({"content": [], "isError": true}));
        assert!(!unmark(&mut r));
    }

    #[test]
    fn unmark_keeps_the_rest_of_meta() {
        let mut r = json!({"content": [], "_meta": {KEY: "denied", "io.example/x": 1}});
        assert!(unmark(&mut r));
        assert_eq!(r, json!({"content": [], "_meta": {"io.example/x": 1}}));
    }

    #[test]
    fn a_meta_that_is_not_an_object_is_replaced() {
        let mut r = json!({"content": [], "_meta": 7});
        mark(&mut r, "denied");
        assert_eq!(r["_meta"], json!({KEY: "denied"}));
    }

    #[test]
    fn an_expiry_is_the_policys_refusal() {
        assert_eq!(mark_for(DeniedBy::Expiry), "denied");
        assert_eq!(mark_for(DeniedBy::Human), "declined");
        assert_eq!(mark_for(DeniedBy::Policy), "denied");
    }
}

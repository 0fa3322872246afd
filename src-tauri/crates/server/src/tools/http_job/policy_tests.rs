//! `wait_for_http_job` under the policy: it asks before sending anything by default (public
//! destinations too), a `deny` rule refuses at once, a broad `allow` does not reach a private
//! destination, and "always allow" writes a rule for the origin that the next call needs.

use serde_json::{Value, json};

use super::{
    super::http_reach::REQUEST_TIMEOUT,
    ALLOW_PRIVATE_KEY, APPROVE_KEY,
    test_service::{asked, engine, local_server, result},
};
use crate::policy::{Decision, Policy};
use taskdeck_engine::{Engine, Principal};

fn write_policy(dir: &std::path::Path, rules: Value) {
    std::fs::write(dir.join("policy.json"), json!({"rules": rules}).to_string()).unwrap();
}

async fn reply(engine: &Engine, id: &str, key: &str, response: Value) {
    let mut responses = serde_json::Map::new();
    responses.insert(key.into(), response);
    let report = engine
        .answer(&Principal::admin(), id, responses)
        .await
        .unwrap();
    assert_eq!(report.accepted, [key]);
}

#[tokio::test]
async fn a_public_destination_is_asked_about_and_a_decline_gives_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
    let agent = Principal::named("agent");
    let args = json!({"url": "http://203.0.113.5/ops"});
    let task = engine
        .create_task(&agent, "wait_for_http_job", args)
        .await
        .unwrap();
    let (key, text) = asked(&engine, &task.task_id).await;
    assert_eq!(key, APPROVE_KEY);
    assert!(
        text.starts_with("Allow agent to send GET http://203.0.113.5/ops?"),
        "{text}"
    );
    let t = engine.get(&Principal::admin(), &task.task_id).unwrap();
    let schema = &t.input_requests[APPROVE_KEY]["params"]["requestedSchema"]["properties"];
    assert_eq!(
        schema["alwaysAllow"]["title"],
        "Always allow agent to send requests to http://203.0.113.5"
    );
    assert_eq!(schema["reason"]["type"], "string");
    reply(
        &engine,
        &task.task_id,
        APPROVE_KEY,
        json!({"action": "decline", "content": {"reason": "not that host"}}),
    )
    .await;
    let done = result(&engine, &task.task_id).await;
    assert_eq!(done["isError"], true, "{done}");
    let said = done["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("was not sent") && said.ends_with("Their reason: not that host"),
        "{said}"
    );
}

#[tokio::test]
async fn a_deny_rule_refuses_at_once_naming_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
    let (port, seen) = local_server().await;
    write_policy(
        dir.path(),
        json!([{"id": "r-deny1", "principal": "*", "server": "taskdeck",
        "tool": "wait_for_http_job", "arguments": {"url": "http://127.0.0.1:*"}, "decision": "deny"}]),
    );
    let args = json!({"url": format!("http://127.0.0.1:{port}/ops")});
    let task = engine
        .create_task(&Principal::named("agent"), "wait_for_http_job", args)
        .await
        .unwrap();
    let done = result(&engine, &task.task_id).await;
    assert_eq!(done["isError"], true, "{done}");
    assert!(
        done["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("rule r-deny1"),
        "{done}"
    );
    assert!(seen.lock().unwrap().is_empty());
}

/// Starts a job for `url` as `agent`, expects its question under `key`, answers it with
/// "always allow", then starts one for `again`, which must run without a question. Returns
/// the question's text.
async fn always_allow_then_again(engine: &Engine, key: &str, url: &str, again: &str) -> String {
    let agent = Principal::named("agent");
    let task = engine
        .create_task(&agent, "wait_for_http_job", json!({"url": url}))
        .await
        .unwrap();
    let (asked_key, text) = asked(engine, &task.task_id).await;
    assert_eq!(asked_key, key, "{text}");
    let always = json!({"action": "accept", "content": {"alwaysAllow": true}});
    reply(engine, &task.task_id, key, always).await;
    assert_eq!(result(engine, &task.task_id).await["isError"], false);
    let next = engine
        .create_task(&agent, "wait_for_http_job", json!({"url": again}))
        .await
        .unwrap();
    let done = result(engine, &next.task_id).await;
    assert_eq!(done["isError"], false, "no question this time: {done}");
    text
}

#[tokio::test]
async fn a_broad_allow_does_not_reach_a_private_destination_but_always_allow_does() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
    let (port, seen) = local_server().await;
    write_policy(
        dir.path(),
        json!([{"id": "r-any", "principal": "agent", "server": "taskdeck",
        "tool": "wait_for_http_job", "decision": "allow"}]),
    );
    let url = format!("http://127.0.0.1:{port}/ops");
    // The broad rule approved the call, not its private destination: asked about that alone.
    let text = always_allow_then_again(&engine, ALLOW_PRIVATE_KEY, &url, &url).await;
    assert!(
        text.starts_with(&format!("Allow this task to reach 127.0.0.1:{port}")),
        "{text}"
    );
    // The rule written (after the broad one, which does not count here) names the origin.
    let rules = Policy::new(dir.path()).rules().unwrap();
    let written = rules.last().unwrap();
    let origin = format!("http://127.0.0.1:{port}/*");
    assert_eq!(
        (
            written.decision,
            written.arguments["url"].as_str(),
            written.principal.as_str()
        ),
        (Decision::Allow, origin.as_str(), "agent")
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn always_allow_on_the_approval_of_a_private_destination_covers_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
    let (port, seen) = local_server().await;
    // One question (key `approve`) for the call and its private destination; the rule
    // covers the whole origin.
    let url = format!("http://127.0.0.1:{port}/ops");
    let elsewhere = format!("http://127.0.0.1:{port}/elsewhere");
    always_allow_then_again(&engine, APPROVE_KEY, &url, &elsewhere).await;
    assert_eq!(seen.lock().unwrap().len(), 2);
}

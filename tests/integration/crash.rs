//! Crash test: many tasks in every state, SIGKILL, restart on the same data dir. Every
//! acknowledged task is still there with the right state, and none is left stuck.

use std::{collections::HashMap, time::Duration};

use serde_json::{Value, json};

use crate::harness::Server;

#[tokio::test]
async fn sigkill_loses_nothing_and_leaves_nothing_stuck() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let agent = s.token("crash-agent");

    let mut completed = Vec::new();
    for i in 0..40 {
        completed.push(
            s.call(
                &agent,
                "slow_compute",
                json!({"seconds": 0.01, "label": format!("done-{i}")}),
            )
            .await["taskId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let mut working = Vec::new();
    for i in 0..30 {
        working.push(
            s.call(
                &agent,
                "slow_compute",
                json!({"seconds": 600, "label": format!("long-{i}")}),
            )
            .await["taskId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let mut approvals = Vec::new();
    for i in 0..20 {
        approvals.push(
            s.call(
                &agent,
                "request_approval",
                json!({"message": format!("approve {i}?")}),
            )
            .await["taskId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let mut confirms = Vec::new();
    for i in 0..10 {
        confirms.push(
            s.call(
                &agent,
                "confirm_delete",
                json!({"filename": format!("f{i}")}),
            )
            .await["taskId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let mut cancelled = Vec::new();
    for i in 0..10 {
        let id = s
            .call(
                &agent,
                "slow_compute",
                json!({"seconds": 600, "label": format!("c-{i}")}),
            )
            .await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        s.rpc(Some(&agent), "tasks/cancel", json!({"taskId": id}), true)
            .await
            .result();
        cancelled.push(id);
    }
    let mut before: HashMap<String, Value> = HashMap::new();
    for id in &completed {
        before.insert(id.clone(), s.wait_status(&agent, id, "completed").await);
    }
    for id in approvals.iter().chain(&confirms) {
        s.wait_status(&agent, id, "input_required").await;
    }
    for id in &cancelled {
        s.wait_status(&agent, id, "cancelled").await;
    }
    // Answer half the approvals (acknowledged) right before the kill.
    for id in &approvals[..10] {
        s.rpc(Some(&agent), "tasks/update", json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {}}}}), true).await.result();
    }
    s.kill().await;

    let s = Server::start_in(tmp.path(), &["--conformance-fixtures"]).await;
    assert_eq!(s.admin, t, "the admin token survives restarts");
    for id in &completed {
        let now = s.get(&agent, id).await;
        assert_eq!(
            &now, &before[id],
            "a completed task is unchanged by the restart"
        );
    }
    for id in &working {
        let v = s.get(&agent, id).await;
        assert_eq!(
            v["status"], "failed",
            "a non-resumable running task fails on restart"
        );
        assert_eq!(v["error"]["code"], -32603);
        assert_eq!(v["error"]["data"]["reason"], "restart");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("restarted")
        );
    }
    for id in &confirms {
        assert_eq!(s.get(&agent, id).await["status"], "failed");
    }
    for id in &cancelled {
        assert_eq!(s.get(&agent, id).await["status"], "cancelled");
    }
    // Answered approvals complete with the answer given before the crash; the others are
    // still waiting (resumed, same key) and complete when answered now.
    for id in &approvals[..10] {
        let v = s.wait_status(&agent, id, "completed").await;
        assert_eq!(v["result"]["structuredContent"]["action"], "accept");
    }
    for id in &approvals[10..] {
        let v = s.wait_status(&agent, id, "input_required").await;
        assert!(v["inputRequests"]["approval"].is_object());
        s.rpc(
            Some(&agent),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "decline"}}}),
            true,
        )
        .await
        .result();
        let v = s.wait_status(&agent, id, "completed").await;
        assert_eq!(v["result"]["structuredContent"]["action"], "decline");
    }
    // Nothing is stuck: every task is terminal now.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, list) = s
        .v1_get(Some(&s.admin), "/v1/tasks?status=working,input_required")
        .await;
    assert_eq!(list["tasks"], json!([]), "stuck tasks: {}", list["tasks"]);
    let (_, all) = s.v1_get(Some(&s.admin), "/v1/tasks?limit=1000").await;
    assert_eq!(
        all["tasks"].as_array().unwrap().len(),
        110,
        "every acknowledged task is there"
    );
    let (_, detail) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{}", approvals[15]))
        .await;
    let kinds: Vec<&str> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"resumed"), "{kinds:?}");
}

/// A client that sends a create and hangs up at once: whatever was stored also runs (it used
/// to stay `working` for ever when the connection closed while the write was queued).
#[tokio::test]
async fn a_create_whose_client_hangs_up_still_runs() {
    use tokio::io::AsyncWriteExt;
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let body = r#"{"tool": "echo", "arguments": {"note": "hung up"}}"#;
    let request = format!(
        "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {t}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        s.port,
        body.len()
    );
    for _ in 0..60 {
        let mut conn = tokio::net::TcpStream::connect(("127.0.0.1", s.port))
            .await
            .unwrap();
        conn.write_all(request.as_bytes()).await.unwrap();
        drop(conn);
    }
    // Whatever was stored finishes; nothing stays working.
    let mut last = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, page) = s.v1_get(Some(&t), "/v1/tasks?limit=1").await;
        last = page["counts"].clone();
        if last.get("working").is_none_or(|n| n == 0) && last.get("completed").is_some() {
            return;
        }
    }
    panic!("tasks left working after their clients hung up: {last}");
}

//! Clients that cannot take a task: 2025-11-25 sessions (initialize + Mcp-Session-Id) and
//! 2026-07-28 clients without the extension. They are never held on a long call: the tool
//! answers at once with a handle, and `task_status` / `task_respond` / `task_cancel` follow up.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{LegacySession, Server};

#[tokio::test]
async fn legacy_session_gets_a_handle_and_follows_up_with_tools() {
    let s = Server::start(&[]).await;
    let token = s.token("legacy-agent");
    let mut c = LegacySession::open(&s, &token).await;
    let tools = c.request("tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for n in [
        "request_approval",
        "task_status",
        "task_respond",
        "task_cancel",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    // A method nobody serves is named, as on the 2026-07-28 path.
    let unknown = c.request("bogus/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(
        unknown["error"]["message"], "Method not found: bogus/method",
        "{unknown}"
    );

    let started = Instant::now();
    let r = c
        .tool("request_approval", json!({"message": "Delete the cache?"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a legacy client must not be held"
    );
    assert!(
        r.get("resultType").is_none(),
        "legacy results carry no resultType"
    );
    let id = r["structuredContent"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("task_status")
    );

    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        let st = c.tool("task_status", json!({"taskId": id})).await;
        if st["structuredContent"]["task"]["status"] == "input_required" {
            break st;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert_eq!(
        status["structuredContent"]["task"]["inputRequests"]["approval"]["params"]["message"],
        "Delete the cache?"
    );
    let answered = c
        .tool(
            "task_respond",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "decline"}}}),
        )
        .await;
    assert_ne!(
        answered["structuredContent"]["task"]["status"],
        "input_required"
    );
    // task_respond says which answers it took and which it ignored, in words first.
    assert_eq!(
        answered["structuredContent"]["accepted"],
        json!(["approval"])
    );
    assert_eq!(answered["structuredContent"]["ignored"], json!([]));
    assert_eq!(answered["content"][0]["text"], "Answered \"approval\".");
    let again = c
        .tool(
            "task_respond",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "accept"}, "nope": {"action": "accept"}}}),
        )
        .await;
    assert_eq!(again["structuredContent"]["accepted"], json!([]));
    assert_eq!(
        again["structuredContent"]["ignored"],
        json!(["approval", "nope"])
    );
    let text = again["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Ignored \"approval\", \"nope\": not an outstanding request you can answer"
        ),
        "{text}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let st = c.tool("task_status", json!({"taskId": id})).await;
        if st["structuredContent"]["task"]["status"] == "completed" {
            assert_eq!(
                st["structuredContent"]["task"]["result"]["structuredContent"]["action"],
                "decline"
            );
            assert!(
                st["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|b| b["text"] == "Declined.")
            );
            break;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    // task_cancel, and "not found" for a task that is not ours.
    let r = c
        .tool("request_approval", json!({"message": "Second?"}))
        .await;
    let id2 = r["structuredContent"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // The reply says the cancel was requested, whatever status the task shows at that moment.
    let cancelled = c.tool("task_cancel", json!({"taskId": id2})).await;
    let said = cancelled["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        said.starts_with(&format!("Cancellation of task {id2} requested")),
        "{cancelled}"
    );
    let st = s.wait_status(&token, &id2, "cancelled").await;
    assert_eq!(st["status"], "cancelled");
    let again = c.tool("task_cancel", json!({"taskId": id2})).await;
    assert_eq!(
        again["content"][0]["text"],
        format!("Task {id2} had already ended (cancelled): nothing to cancel."),
        "{again}"
    );
    let other = s.token("someone-else");
    let mut c2 = LegacySession::open(&s, &other).await;
    let denied = c2
        .request(
            "tools/call",
            json!({"name": "task_status", "arguments": {"taskId": id2}}),
        )
        .await;
    assert_eq!(denied["error"]["code"], -32602);
    assert_eq!(denied["error"]["message"], "Task not found");
}

#[tokio::test]
async fn modern_client_without_extension_gets_a_handle_or_32021() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": "ok?"}}),
            false,
        )
        .await;
    let result = r.result();
    assert_eq!(result["resultType"], "complete");
    assert!(result.get("taskId").is_none());
    assert_eq!(result["structuredContent"]["task"]["status"], "working");
    // A tool that only runs as a task answers -32021 with the capability it needs, HTTP 400.
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "failing_job", "arguments": {}}),
            false,
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.error_code(), -32021);
    assert_eq!(
        r.body["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    // tasks/* without the extension: -32021 before any lookup.
    let r = s
        .rpc(Some(&t), "tasks/get", json!({"taskId": "nope"}), false)
        .await;
    assert_eq!(r.error_code(), -32021);
}

/// An answer sent before the task has asked its first question (`request_approval` asks
/// `approval` a moment after its task is stored, and an agent that knows the key may answer at
/// once) waits for that question instead of being ignored as "never asked". Here the question
/// comes 300 ms after the answer: a hosted task's host asks it.
#[tokio::test]
async fn an_answer_sent_before_the_question_waits_for_it() {
    let s = Server::start(&[]).await;
    let agent = s.token("quick-agent");
    let created = s
        .http
        .post(s.url("/v1/hosted-tasks"))
        .bearer_auth(&agent)
        .json(&json!({"tool": "deploy"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let id = created.json::<serde_json::Value>().await.unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let ask = {
        let (http, url, agent) = (
            s.http.clone(),
            s.url(&format!("/v1/hosted-tasks/{id}/input-requests")),
            agent.clone(),
        );
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let form = json!({"method": "elicitation/create", "params": {"mode": "form",
                "message": "Region?", "requestedSchema": {"type": "object",
                "properties": {"region": {"type": "string"}}}}});
            let put = http.put(url).bearer_auth(&agent);
            put.json(&json!({"requests": {"q": form}}))
                .send()
                .await
                .unwrap()
                .status()
        })
    };
    let answer = json!({"name": "task_respond", "arguments": {"taskId": id,
        "inputResponses": {"q": {"action": "accept", "content": {"region": "eu"}}}}});
    let reply = s.rpc(Some(&agent), "tools/call", answer, false).await;
    assert_eq!(ask.await.unwrap(), 200);
    let taken = &reply.result()["structuredContent"];
    assert_eq!(taken["accepted"], json!(["q"]), "{taken}");
    // A key the task never asks is still ignored, after the wait.
    let answer = json!({"name": "task_respond", "arguments": {"taskId": id,
        "inputResponses": {"nope": {"action": "accept"}}}});
    let reply = s.rpc(Some(&agent), "tools/call", answer, false).await;
    assert_eq!(
        reply.result()["structuredContent"]["ignored"],
        json!(["nope"])
    );
}

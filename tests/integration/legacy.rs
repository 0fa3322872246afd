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
    c.tool("task_cancel", json!({"taskId": id2})).await;
    let st = s.wait_status(&token, &id2, "cancelled").await;
    assert_eq!(st["status"], "cancelled");
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

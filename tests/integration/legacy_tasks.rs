//! The 2025-11-25 task path (task-augmented `tools/call`, `tasks/get|result|list|cancel`,
//! `notifications/tasks/status`, `notifications/progress`) on 2025-11-25 sessions, the sessions'
//! binding to their principal, and what each kind of client is shown while a human decides.

use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::Client;
use serde_json::{Value, json};

use crate::harness::{LegacySession, Server, parse_body};

/// Reads SSE `data:` messages from `resp` until `on_message` says stop (10 s at most).
async fn read_until(
    resp: reqwest::Response,
    mut on_message: impl AsyncFnMut(&Value) -> bool,
) -> Vec<Value> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Some(Ok(chunk))) = tokio::time::timeout(left, stream.next()).await else {
            panic!("stream ended or timed out; saw {seen:?}");
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            for line in event.lines() {
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                {
                    seen.push(v.clone());
                    if on_message(&v).await {
                        return seen;
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn task_augmented_calls_take_the_2025_11_25_task_path() {
    let s = Server::start(&[]).await;
    let token = s.token("vscode");
    let mut c = LegacySession::open(&s, &token).await;
    // initialize advertises 2025-11-25 tasks, not the SEP-2663 extension (undefined there).
    assert_eq!(
        c.init["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    assert!(
        c.init["capabilities"].get("extensions").is_none(),
        "{}",
        c.init
    );
    let tools = c.request("tools/list", json!({})).await;
    let support = |name: &str| {
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["execution"]["taskSupport"]
            .clone()
    };
    assert_eq!(support("request_approval"), "optional");
    assert_eq!(support("run_command"), "optional");
    assert_eq!(support("task_status"), Value::Null, "forbidden: absent");

    // CreateTaskResult {task} at once, with the requested ttl.
    let created = c
        .request(
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": "Merge the PR?"}, "task": {"ttl": 60000}}),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60000);
    assert!(
        task["pollInterval"].is_u64() && task.get("ttlMs").is_none(),
        "{task}"
    );
    let id = task["taskId"].as_str().unwrap().to_string();
    // A forbidden tool cannot be task-augmented.
    let r = c
        .request(
            "tools/call",
            json!({"name": "task_status", "arguments": {"taskId": id}, "task": {}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    // The 2026-07-28 methods are unknown in this era, whatever the request carries.
    for method in ["tasks/update", "server/discover", "subscriptions/listen"] {
        let r = c
            .request(method, json!({"taskId": id, "inputResponses": {}}))
            .await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("negotiated 2025-11-25"), "{message}");
    }
    // A ttl that is not a number of milliseconds is refused, not read as "none".
    for ttl in [json!(-5), json!("abc"), json!(true), json!({})] {
        let r = c
            .request(
                "tools/call",
                json!({"name": "request_approval", "arguments": {"message": "ttl?"}, "task": {"ttl": ttl}}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32602, "{ttl}: {r}");
    }

    s.wait_status(&s.admin, &id, "input_required").await;
    let got = c.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        got["result"]["ttl"],
        Value::Null,
        "unlimited while a human decides"
    );
    assert_eq!(got["result"]["status"], "input_required", "{got}");
    let listed = c.request("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["taskId"], id, "{listed}");
    for cursor in [json!("banana"), json!(""), json!("tl1.5"), json!(5)] {
        let bogus = c.request("tasks/list", json!({"cursor": cursor})).await;
        assert_eq!(bogus["error"]["code"], -32602, "{cursor}: {bogus}");
    }
    // Pages: 50 each, cursors opaque and bound to the caller.
    for n in 0..50 {
        c.request(
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": format!("q{n}")}, "task": {}}),
        )
        .await;
    }
    let first = c.request("tasks/list", json!({})).await;
    assert_eq!(first["result"]["tasks"].as_array().unwrap().len(), 50);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_string();
    let second = c.request("tasks/list", json!({"cursor": cursor})).await;
    assert_eq!(second["result"]["tasks"][0]["taskId"], id, "{second}");
    assert!(second["result"].get("nextCursor").is_none());
    // Another principal's session lists none of it, and cannot use this cursor.
    let other = s.token("someone-else");
    let mut o = LegacySession::open(&s, &other).await;
    let theirs = o.request("tasks/list", json!({"cursor": cursor})).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let theirs = o.request("tasks/list", json!({})).await;
    assert_eq!(theirs["result"]["tasks"], json!([]));
    let theirs = o.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(theirs["error"]["code"], -32602);

    // tasks/result: the question arrives on its stream; the client's answer finishes the task.
    let resp = c
        .send(
            json!({"jsonrpc": "2.0", "id": 50, "method": "tasks/result", "params": {"taskId": id}}),
        )
        .await;
    assert_eq!(resp.status(), 200);
    let seen = read_until(resp, async |m: &Value| {
        if m["method"] == "elicitation/create" {
            assert_eq!(m["params"]["message"], "Merge the PR?");
            assert_eq!(
                m["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
                id
            );
            let r = c
                .send(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "accept", "content": {}}}),
            )
            .await;
            assert_eq!(r.status(), 202);
            return false;
        }
        m["id"] == 50
    })
    .await;
    let result = &seen.last().unwrap()["result"];
    assert_eq!(result["structuredContent"]["action"], "accept", "{seen:?}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        id
    );
    assert!(
        result.get("resultType").is_none(),
        "a 2025-11-25 CallToolResult"
    );
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["inputRounds"][0]["answeredBy"], "vscode");
    // Its requested retention comes back (from creation, plus the time waited), not the default.
    let ttl = detail["task"]["ttlMs"].as_u64().unwrap();
    assert!((60_000..70_000).contains(&ttl), "{ttl}");

    // tasks/cancel: -32602 for a terminal task; otherwise the task, cancelled.
    let r = c.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let second = c
        .request(
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": "Again?"}, "task": {}}),
        )
        .await;
    let id2 = second["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = c.request("tasks/cancel", json!({"taskId": id2})).await;
    assert_eq!(r["result"]["status"], "cancelled", "{r}");
    // tasks/result of a cancelled task: an error, not a result.
    let r = c.request("tasks/result", json!({"taskId": id2})).await;
    assert_eq!(r["error"]["data"]["status"], "cancelled", "{r}");

    // DELETE ends the session with 204; the session is then unknown.
    let delete = async || {
        Client::new()
            .delete(s.url("/mcp"))
            .header("Mcp-Session-Id", &c.session)
            .header("MCP-Protocol-Version", "2025-11-25")
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
    };
    assert_eq!(delete().await.status(), 204);
    let again = delete().await;
    assert_eq!(again.status(), 404, "an ended session is unknown");
    let r = c
        .send(json!({"jsonrpc": "2.0", "id": 60, "method": "tasks/list", "params": {}}))
        .await;
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn a_session_belongs_to_the_principal_that_opened_it() {
    let s = Server::start(&[]).await;
    let owner = s.token("owner");
    // An initialize whose params do not fit is -32602, not "session id required".
    let bad = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": true},
        "clientInfo": {"name": "x", "version": "1"}}});
    let r = Client::new()
        .post(s.url("/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .bearer_auth(&owner)
        .body(bad.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let intruder = s.token("intruder");
    let mut c = LegacySession::open(&s, &owner).await;
    let as_intruder = c.with_token(&intruder);
    for body in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/list", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        let r = as_intruder.send(body).await;
        assert_eq!(r.status(), 404, "another principal's token on the session");
    }
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = Client::new()
            .request(method.clone(), s.url("/mcp"))
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", &c.session)
            .header("MCP-Protocol-Version", "2025-11-25")
            .bearer_auth(&intruder)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{method}");
    }
    // The owner's session is untouched.
    let r = c.request("tools/list", json!({})).await;
    assert!(r["result"]["tools"].is_array());
    // Ending the session ends what it was waiting on: an open tasks/result stream closes.
    let created = c
        .request(
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": "Wait?"}, "task": {}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = c
        .send(
            json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/result", "params": {"taskId": id}}),
        )
        .await;
    let deleted = Client::new()
        .delete(s.url("/mcp"))
        .header("Mcp-Session-Id", &c.session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .bearer_auth(&owner)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    let ended = tokio::time::timeout(Duration::from_secs(5), waiting.text()).await;
    assert!(
        ended.is_ok(),
        "the tasks/result stream outlived its session"
    );
}

/// A `_meta` for a 2026-07-28 request declaring the tasks extension, without elicitation.
fn meta_without_elicitation() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    })
}

#[tokio::test]
async fn questions_go_only_where_they_can_be_answered() {
    let s = Server::start(&[]).await;
    let agent = s.token("inspector");
    // A 2026-07-28 client that declared no elicitation sees `working`, never the question.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "request_approval", "arguments": {"message": "Rotate the keys?"},
        "_meta": meta_without_elicitation()}});
    let r = s
        .raw(
            Some(&agent),
            &call.to_string(),
            &[
                ("Mcp-Method", "tools/call".into()),
                ("Mcp-Name", "request_approval".into()),
            ],
        )
        .await;
    let id = r.result()["taskId"].as_str().unwrap().to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let get = |meta: Value| {
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": id, "_meta": meta}})
            .to_string()
    };
    let headers = [
        ("Mcp-Method", "tasks/get".to_string()),
        ("Mcp-Name", id.clone()),
    ];
    let blind = s
        .raw(Some(&agent), &get(meta_without_elicitation()), &headers)
        .await;
    let seen = blind.result();
    assert_eq!(seen["status"], "working", "{seen}");
    assert!(seen.get("inputRequests").is_none());
    assert_eq!(
        seen["statusMessage"],
        "Waiting for a human in Taskdeck: Rotate the keys?"
    );
    // Nor can it answer it, on any path: its answers are acknowledged and ignored.
    let update = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/update", "params": {
        "taskId": id, "inputResponses": {"approval": {"action": "accept"}},
        "_meta": meta_without_elicitation()}});
    let r = s
        .raw(
            Some(&agent),
            &update.to_string(),
            &[
                ("Mcp-Method", "tasks/update".into()),
                ("Mcp-Name", id.clone()),
            ],
        )
        .await;
    assert_eq!(r.result()["resultType"], "complete", "{}", r.body);
    let mut legacy = LegacySession::open_with(&s, &agent, json!({})).await;
    let st = legacy
        .tool(
            "task_respond",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "accept"}}}),
        )
        .await;
    assert_eq!(st["structuredContent"]["task"]["status"], "working", "{st}");
    let guessed = legacy
        .send(json!({"jsonrpc": "2.0", "id": format!("taskdeck-input:{id}:approval"), "result": {"action": "accept"}}))
        .await;
    assert_eq!(guessed.status(), 202);
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(
        detail["task"]["status"], "input_required",
        "still the human's: {detail}"
    );
    // The same task, read by a client that can ask its user: the question.
    let asking = s.get(&agent, &id).await;
    assert_eq!(asking["status"], "input_required");
    assert!(asking["inputRequests"]["approval"].is_object());
    // A 2025-11-25 session without elicitation: `working` too.
    let st = legacy.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(st["result"]["status"], "working", "{st}");
    let st = legacy.tool("task_status", json!({"taskId": id})).await;
    assert_eq!(st["structuredContent"]["task"]["status"], "working", "{st}");

    // The human answers in Taskdeck; the blind client reads the outcome, as a 2026-07-28
    // result (resultType "complete" on the inlined result too), on both tasks/get paths.
    let (status, _) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approval": {"action": "accept"}}}),
        )
        .await;
    assert_eq!(status, 200);
    s.wait_status(&agent, &id, "completed").await;
    let done = s
        .raw(Some(&agent), &get(meta_without_elicitation()), &headers)
        .await;
    assert_eq!(
        done.result()["result"]["resultType"],
        "complete",
        "{}",
        done.body
    );
    assert_eq!(
        done.result()["result"]["structuredContent"]["action"],
        "accept"
    );
    // A subscription names its tasks as an array of taskIds, or is refused.
    for bad in [json!({"taskIds": "notalist"}), json!({"taskIds": [5]})] {
        let r = s.listen(&agent, json!(9), bad.clone()).await;
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32602, "{bad}: {body}");
    }
    let mut slow = Server::start(&["--no-fast-path"]).await;
    let t = slow.admin.clone();
    let created = slow
        .call(&t, "request_approval", json!({"message": "x"}))
        .await;
    let id = created["taskId"].as_str().unwrap().to_string();
    slow.wait_status(&t, &id, "input_required").await;
    slow.rpc(
        Some(&t),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"approval": {"action": "decline"}}}),
        true,
    )
    .await
    .result();
    let v = slow.wait_status(&t, &id, "completed").await;
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    slow.kill().await;
}

#[tokio::test]
async fn task_status_and_progress_reach_the_session_stream() {
    let s = Server::start(&[]).await;
    let agent = s.token("copilot");
    let script = s.dir.join("steps.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nfor i in 1 2 3; do echo \"step $i/3\"; sleep 0.3; done\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    s.write_policy(
        json!([{"principal": "copilot", "server": "taskdeck", "tool": "run_command",
        "arguments": {"command": script.to_str().unwrap()}, "decision": "allow"}]),
    );
    let mut c = LegacySession::open(&s, &agent).await;
    let stream = Client::new()
        .get(s.url("/mcp"))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &c.session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .bearer_auth(&agent)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let created = c
        .request(
            "tools/call",
            json!({"name": "run_command",
                   "arguments": {"argv": [script.to_str().unwrap()]},
                   "task": {}, "_meta": {"progressToken": "p-1"}}),
        )
        .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut progress = Vec::new();
    let seen = read_until(stream, async |m: &Value| {
        if m["method"] == "notifications/progress" {
            assert_eq!(m["params"]["progressToken"], "p-1");
            // Related to the task, so it says which (2025-11-25 §Associating Task-Related
            // Messages).
            assert_eq!(
                m["params"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
                id.as_str(),
                "{m}"
            );
            progress.push(m["params"]["progress"].as_f64().unwrap());
        }
        m["method"] == "notifications/tasks/status"
            && m["params"]["taskId"] == id
            && m["params"]["status"] == "completed"
    })
    .await;
    assert!(
        progress.windows(2).all(|w| w[1] > w[0]) && progress.contains(&3.0),
        "progress grows to 3 of 3: {progress:?} in {seen:?}"
    );
    assert!(
        seen.iter().any(|m| m["method"] == "notifications/progress"
            && m["params"]["total"].as_f64() == Some(3.0)),
        "{seen:?}"
    );
}

#[tokio::test]
async fn answers_are_checked_and_declines_carry_no_content() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let form = json!({"type": "object", "properties": {
        "email": {"type": "string", "format": "email"},
        "day": {"type": "string", "format": "date"}}});
    let ask = async |s: &Server| {
        let created = s
            .call(
                &t,
                "request_approval",
                json!({"message": "Who?", "requestedSchema": form}),
            )
            .await;
        let id = created["taskId"].as_str().unwrap().to_string();
        s.wait_status(&t, &id, "input_required").await;
        id
    };
    // Formats are checked on both paths, as the UI checks them.
    let id = ask(&s).await;
    let r = s
        .rpc(
            Some(&t),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"email": "not an address"}}}}),
            true,
        )
        .await;
    assert_eq!(r.error_code(), -32602, "{}", r.body);
    let (status, problem) = s
        .v1_post(
            Some(&t),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approval": {"action": "accept", "content": {"day": "31/12/2026"}}}}),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    // A long value that fails its field is quoted by its start, not sent back whole.
    let (status, problem) = s
        .v1_post(
            Some(&t),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approval": {"action": "accept", "content": {"email": "x".repeat(60 * 1024)}}}}),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.len() < 400 && detail.contains("(61440 characters)"),
        "{detail}"
    );
    // An answer over 64 KiB is refused whole.
    let big = "x".repeat(65 * 1024);
    let r = s
        .rpc(
            Some(&t),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"email": big}}}}),
            true,
        )
        .await;
    assert_eq!(r.error_code(), -32602, "{}", r.body);
    // A decline's content is dropped before anything is checked, however large.
    let (status, v) = s
        .v1_post(
            Some(&t),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approval": {"action": "decline", "content": {"email": "x".repeat(70 * 1024)}}}}),
        )
        .await;
    assert_eq!(
        (status.as_u16(), &v["accepted"]),
        (200, &json!(["approval"])),
        "{v}"
    );
    s.wait_status(&t, &id, "completed").await;
    let id = ask(&s).await;
    // A decline with content: the content is dropped from the result and the record.
    let (status, _) = s
        .v1_post(
            Some(&t),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approval": {"action": "decline", "content": {"email": "a@b.example"}}}}),
        )
        .await;
    assert_eq!(status, 200);
    let v = s.wait_status(&t, &id, "completed").await;
    assert_eq!(
        v["result"]["structuredContent"],
        json!({"action": "decline"})
    );
    let (_, detail) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}")).await;
    assert_eq!(
        detail["inputRounds"][0]["response"],
        json!({"action": "decline"})
    );
    assert!(!detail.to_string().contains("a@b.example"), "{detail}");
    // A valid accept goes through.
    let id = ask(&s).await;
    s.rpc(
        Some(&t),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"email": "a@b.example", "day": "2026-12-31"}}}}),
        true,
    )
    .await
    .result();
    let v = s.wait_status(&t, &id, "completed").await;
    assert_eq!(
        v["result"]["structuredContent"]["content"]["day"],
        "2026-12-31"
    );
}

#[tokio::test]
async fn an_oversized_mcp_body_is_413_with_a_json_rpc_error() {
    let s = Server::start(&[]).await;
    let big = "x".repeat(5 * 1024 * 1024);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "request_approval", "arguments": {"message": big}}});
    let r = s
        .raw(
            Some(&s.admin),
            &body.to_string(),
            &[
                ("Mcp-Method", "tools/call".into()),
                ("Mcp-Name", "request_approval".into()),
            ],
        )
        .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.error_code(), -32600);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 4194304 bytes")
    );
}

/// On session `c`, a task-augmented `request_approval` asking `message` with form `form` (request
/// id 1), then, once it waits, its `tasks/result` stream (request id 2): the task id and the
/// stream.
async fn ask_and_wait_for_the_result(
    s: &Server,
    c: &LegacySession<'_>,
    message: &str,
    form: Value,
) -> (String, reqwest::Response) {
    let created = c
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "request_approval", "arguments": {"message": message, "requestedSchema": form}, "task": {}}}))
        .await;
    let created: Value = crate::harness::parse_body(&created.text().await.unwrap());
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let stream = c
        .send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": id}}),
        )
        .await;
    (id, stream)
}

/// An answer that fails its form, sent back on a `tasks/result` stream, is refused (400) and the
/// question is asked again on that stream under a new id, so the client can correct it.
#[tokio::test]
async fn a_refused_answer_is_asked_again_with_a_new_id() {
    let s = Server::start(&[]).await;
    let token = s.token("vscode");
    let c = LegacySession::open(&s, &token).await;
    let form = json!({"type": "object", "properties": {"email": {"type": "string", "format": "email"}}, "required": ["email"]});
    let (_, stream) = ask_and_wait_for_the_result(&s, &c, "Who?", form).await;
    let mut asks = Vec::new();
    let seen = read_until(stream, async |m: &Value| {
        if m["method"] == "elicitation/create" {
            asks.push(m["id"].clone());
            let email = if asks.len() == 1 { "not an address" } else { "a@b.example" };
            let r = c
                .send(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "accept", "content": {"email": email}}}))
                .await;
            assert_eq!(r.status(), if asks.len() == 1 { 400 } else { 202 });
            return false;
        }
        m["id"] == 2
    })
    .await;
    assert_eq!(asks.len(), 2, "{seen:?}");
    assert_ne!(
        asks[0], asks[1],
        "a request id is never used twice on a session"
    );
    let result = &seen.last().unwrap()["result"];
    assert_eq!(
        result["structuredContent"]["content"]["email"],
        "a@b.example"
    );
}

#[tokio::test]
async fn an_initialize_under_the_2026_header_opens_a_2025_11_25_session_like_any_other() {
    let s = Server::start(&[]).await;
    let token = s.token("header-first");
    let initialize = |version: &str| {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "header-first", "version": "0.1"}}})
    };
    let post = |body: Value| {
        Client::new()
            .post(s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .bearer_auth(&token)
            .body(body.to_string())
            .send()
    };
    // A params.protocolVersion other than the header's is refused, as rmcp does.
    let refused = post(initialize("2025-11-25")).await.unwrap();
    assert_eq!(refused.status(), 400);
    let refused = parse_body(&refused.text().await.unwrap());
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    // One rmcp accepts negotiates 2025-11-25: the session advertises 2025-11-25 tasks and the
    // 2025-11-25 task path serves it.
    let resp = post(initialize("2026-07-28")).await.unwrap();
    assert_eq!(resp.status(), 200);
    let session = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let init = parse_body(&resp.text().await.unwrap());
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );
    assert!(
        init["result"]["capabilities"].get("extensions").is_none(),
        "{init}"
    );
    let on_session = |body: Value| {
        Client::new()
            .post(s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Mcp-Session-Id", &session)
            .bearer_auth(&token)
            .body(body.to_string())
            .send()
    };
    on_session(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .unwrap();
    let listed =
        on_session(json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/list", "params": {}}))
            .await
            .unwrap();
    assert_eq!(listed.status(), 200);
    let listed = parse_body(&listed.text().await.unwrap());
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
}

/// A client that answers a question with the same wrong thing every time is asked again with
/// the reason, a few times (`REASK_LIMIT`), not in a tight loop; then the question waits for
/// the human in Taskdeck, whose answer ends the call on the same stream.
#[tokio::test]
async fn a_client_that_keeps_answering_wrong_is_asked_a_few_times_then_left_to_the_human() {
    let s = Server::start(&[]).await;
    let token = s.token("stubborn");
    let c = LegacySession::open(&s, &token).await;
    let form =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let (id, stream) = ask_and_wait_for_the_result(&s, &c, "How many?", form).await;
    let mut messages = Vec::new();
    let seen = read_until(stream, async |m: &Value| {
        if m["method"] == "elicitation/create" {
            messages.push(m["params"]["message"].as_str().unwrap().to_string());
            let r = c
                .send(json!({"jsonrpc": "2.0", "id": m["id"], "result": {"action": "accept", "content": {}}}))
                .await;
            assert_eq!(r.status(), 400);
            if messages.len() == 4 {
                // Time for a fifth question to come, had it been asked; then the human answers.
                tokio::time::sleep(Duration::from_millis(500)).await;
                s.answer(&id, "approval", json!({"action": "accept", "content": {"n": 3}}))
                    .await;
            }
            return false;
        }
        m["id"] == 2
    })
    .await;
    assert_eq!(messages.len(), 4, "asked once and again 3 times: {seen:?}");
    assert_eq!(messages[0], "How many?");
    for again in &messages[1..] {
        assert!(
            again.starts_with("Your last answer was refused: ")
                && again.contains("\"n\" is a required property")
                && again.ends_with("\n\nHow many?"),
            "{again}"
        );
    }
    let result = &seen.last().unwrap()["result"];
    assert_eq!(result["structuredContent"]["content"]["n"], 3, "{result}");
}

/// A request of the sessions' era that names no session and is no `initialize` gets a JSON-RPC
/// error saying what to send (rmcp's answer is bare text); rmcp's media checks still come first.
#[tokio::test]
async fn a_request_without_a_session_is_told_to_initialize_first() {
    let s = Server::start(&[]).await;
    let token = s.token("curl");
    let post = |accept: &'static str| {
        Client::new()
            .post(s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", accept)
            .bearer_auth(&token)
            .body(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).to_string())
            .send()
    };
    let r = post("application/json, text/event-stream").await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (&body["id"], &body["error"]["code"]),
        (&json!(7), &json!(-32600)),
        "{body}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("initialize") && message.contains("MCP-Protocol-Version: 2026-07-28"),
        "{message}"
    );
    assert_eq!(post("text/html").await.unwrap().status(), 406);
}

/// rmcp's other refusals, bare text of their own, are JSON-RPC errors (id `null`: nothing was
/// read) that say what to send: a notification, GET or DELETE without a session, a session
/// that is gone, and an unsupported `MCP-Protocol-Version` (`-32022` with what is supported).
/// Another principal's session gets exactly what a session that never was gets.
#[tokio::test]
async fn every_refusal_of_the_endpoint_is_a_json_rpc_error() {
    let s = Server::start(&[]).await;
    let token = s.token("curl");
    let send = |method: reqwest::Method, headers: Vec<(&'static str, String)>, body: Value| {
        let mut req = Client::new()
            .request(method, s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .bearer_auth(&token);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        if !body.is_null() {
            req = req.body(body.to_string());
        }
        async move {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let kind = r.headers()["content-type"].to_str().unwrap().to_string();
            (status, kind, parse_body(&r.text().await.unwrap()))
        }
    };
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}});
    use reqwest::Method;
    for (method, body) in [
        (Method::POST, notification.clone()),
        (Method::GET, Value::Null),
        (Method::DELETE, Value::Null),
    ] {
        let (status, kind, body) = send(method.clone(), vec![], body).await;
        assert_eq!(
            (status, kind.as_str()),
            (400, "application/json"),
            "{method}"
        );
        assert_eq!(body["error"]["code"], -32600, "{method}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("send `initialize` first"),
            "{method}: {message}"
        );
    }

    let gone = vec![("Mcp-Session-Id", "0f1e2d3c-no-such-session".to_string())];
    let (status, kind, unknown) = send(Method::POST, gone.clone(), list.clone()).await;
    assert_eq!((status, kind.as_str()), (404, "application/json"));
    assert_eq!(unknown["id"], Value::Null, "{unknown}");
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("send `initialize` without the Mcp-Session-Id"),
        "{message}"
    );
    assert_eq!(send(Method::GET, gone, Value::Null).await.2, unknown);
    let owner = s.token("owner");
    let theirs = LegacySession::open(&s, &owner).await;
    let on_theirs = vec![("Mcp-Session-Id", theirs.session.clone())];
    for method in [Method::POST, Method::GET] {
        let body = if method == Method::POST {
            list.clone()
        } else {
            Value::Null
        };
        let (status, _, answer) = send(method.clone(), on_theirs.clone(), body).await;
        assert_eq!((status, &answer), (404, &unknown), "{method}");
    }

    let future = vec![
        ("MCP-Protocol-Version", "2099-01-01".to_string()),
        ("Mcp-Method", "tools/list".to_string()),
    ];
    let (status, _, body) = send(Method::POST, future, list.clone()).await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], -32022, "{body}");
    assert_eq!(body["error"]["data"]["requested"], "2099-01-01");
    let supported = body["error"]["data"]["supported"].as_array().unwrap();
    assert!(
        supported.contains(&json!("2026-07-28")) && supported.contains(&json!("2025-11-25")),
        "{body}"
    );
    // An empty version, and a long one quoted back cut.
    let long = "9".repeat(5000);
    for version in [String::new(), long] {
        let headers = vec![("MCP-Protocol-Version", version.clone())];
        let (status, _, body) = send(Method::POST, headers, list.clone()).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!(-32022)),
            "{body}"
        );
        assert!(body.to_string().len() < 1000, "{body}");
    }

    // A second initialize on a live session would advertise other capabilities: refused.
    let mine = LegacySession::open(&s, &token).await;
    let again = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "again", "version": "1"}}});
    let on_mine = vec![("Mcp-Session-Id", mine.session.clone())];
    let (status, _, body) = send(Method::POST, on_mine, again).await;
    assert_eq!((status, &body["id"]), (400, &json!(9)), "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialized already")
    );

    // Methods /mcp does not take: 405 with Allow. A batch is named as such.
    let (status, _, body) = send(Method::PUT, vec![], list.clone()).await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(body["error"]["code"], -32600);
    let r = Client::new()
        .request(Method::PATCH, s.url("/mcp"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["allow"], "GET, POST, DELETE");
    let batch = json!([list.clone()]);
    let (status, _, body) = send(Method::POST, vec![], batch).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batches"),
        "{body}"
    );

    // A body declared larger than /mcp takes is refused at once, not waited for.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect(("127.0.0.1", s.port))
        .await
        .unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: 99999999\r\n\r\n{{}}",
        s.port
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 512];
    let n = tokio::time::timeout(Duration::from_secs(3), conn.read(&mut answer))
        .await
        .expect("answered before the body came")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

//! The task lifecycle over MCP 2026-07-28 with the tasks extension (SEP-2663): creation,
//! polling, input rounds (partial, late, invalid answers), cancellation races.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::Server;

/// A secret a person types in a form's masked box reaches the agent, but not the task's
/// statusMessage, which every list shows: the result's first line has it `[redacted]`.
#[tokio::test]
async fn a_secret_answered_in_a_form_stays_out_of_the_status_message() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let form = json!({"type": "object", "properties": {
        "env": {"type": "string", "enum": ["staging", "prod"]},
        "api_token": {"type": "string"}, "replicas": {"type": "integer"}}});
    let id = s
        .call(
            &agent,
            "request_approval",
            json!({"message": "Deploy config?", "requestedSchema": form}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&agent, &id, "input_required").await;
    let content = json!({"env": "prod", "api_token": "s3cr3t-value", "replicas": 3});
    let (status, body) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approval": {"action": "accept", "content": content}}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let done = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(
        done["statusMessage"],
        r#"Accepted: {"env":"prod","api_token":"[redacted]","replicas":3}"#
    );
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Accepted: {\"env\":\"prod\",\"api_token\":\"[redacted]\",\"replicas\":3}\n\
         Secret fields, as typed: {\"api_token\":\"s3cr3t-value\"}"
    );
    assert_eq!(done["result"]["structuredContent"]["content"], content);
}

#[tokio::test]
async fn approval_round_trip_records_who_answered() {
    let s = Server::start(&[]).await;
    let agent = s.token("claude-code");
    let form = json!({"type": "object", "properties": {"reason": {"type": "string", "minLength": 3}}, "required": ["reason"]});
    let created = s
        .call(
            &agent,
            "request_approval",
            json!({"message": "Deploy to prod?", "requestedSchema": form}),
        )
        .await;
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert!(
        created["ttlMs"].as_u64().unwrap() > 0 && created["pollIntervalMs"].as_u64().unwrap() > 0
    );
    let id = created["taskId"].as_str().unwrap().to_string();
    assert!(
        random_part_is_uuid_v4(&id),
        "taskId must end in a random UUID v4 (122 random bits): {id}"
    );

    let waiting = s.wait_status(&agent, &id, "input_required").await;
    assert_eq!(waiting["resultType"], "complete");
    let req = &waiting["inputRequests"]["approval"];
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["message"], "Deploy to prod?");
    assert_eq!(
        waiting["ttlMs"],
        Value::Null,
        "a task waiting on a human must not expire"
    );

    // A too-short reason fails the form's schema: rejected, nothing recorded.
    let bad = s
        .rpc(Some(&agent), "tasks/update", json!({"taskId": id, "inputResponses": {"approval": {"action": "accept", "content": {"reason": "no"}}}}), true)
        .await;
    assert_eq!(bad.error_code(), -32602);
    assert_eq!(s.get(&agent, &id).await["status"], "input_required");

    // The human answers through /v1 (as the window does).
    let (status, body) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/input"), json!({"inputResponses": {"approval": {"action": "accept", "content": {"reason": "tests are green"}}}}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["accepted"], json!(["approval"]));

    let done = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"action": "accept", "content": {"reason": "tests are green"}})
    );
    assert_eq!(done["result"]["isError"], false);
    assert!(
        done["ttlMs"].as_u64().is_some(),
        "ttlMs is finite again after the answer"
    );

    let (_, detail) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}")).await;
    let rounds = detail["inputRounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1);
    assert_eq!(rounds[0]["state"], "answered");
    assert_eq!(rounds[0]["answeredBy"], "admin");
    assert!(rounds[0]["answeredAt"].as_str().unwrap().ends_with('Z'));
    let kinds: Vec<&str> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    for k in [
        "created",
        "statusMessage",
        "inputRequested",
        "status",
        "inputAnswered",
    ] {
        assert!(kinds.contains(&k), "timeline lacks {k}: {kinds:?}");
    }
    // Terminal: late answers are ignored and the status never changes again.
    let late = s
        .rpc(
            Some(&agent),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"approval": {"action": "decline"}}}),
            true,
        )
        .await;
    assert_eq!(late.result()["resultType"], "complete");
    assert_eq!(
        s.get(&agent, &id).await["result"]["structuredContent"]["action"],
        "accept"
    );
}

/// A taskId is `<12 hex digits of creation ms>-<UUID v4 as 32 hex digits>`; the time prefix is
/// within a minute of now.
fn random_part_is_uuid_v4(id: &str) -> bool {
    let Some((time, random)) = id.split_once('-') else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let recent = i64::from_str_radix(time, 16).is_ok_and(|ms| (now - ms).abs() < 60_000);
    let hex = random.len() == 32 && random.chars().all(|c| c.is_ascii_hexdigit());
    recent
        && time.len() == 12
        && hex
        && uuid::Uuid::parse_str(random).is_ok_and(|u| u.get_version_num() == 4)
}

#[tokio::test]
async fn partial_late_unknown_and_superseded_answers() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let id = s.call(&t, "multi_input", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = s
        .wait_for(&t, &id, "two prompts", |v| {
            v["inputRequests"].as_object().is_some_and(|o| o.len() == 2)
        })
        .await;
    let keys: Vec<String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();

    // Partial answer: k1 accepted, an unknown key ignored; the task stays input_required with k2 only.
    let ack = s
        .rpc(
            Some(&t),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                keys[0].clone(): {"action": "accept", "content": {"name": "one"}},
                "never-issued": {"action": "accept"}
            }}),
            true,
        )
        .await;
    assert_eq!(ack.result()["resultType"], "complete");
    let after = s.get(&t, &id).await;
    assert_eq!(after["status"], "input_required");
    assert!(after["inputRequests"].get(&keys[0]).is_none());
    assert!(after["inputRequests"].get(&keys[1]).is_some());

    // A late second answer to k1 is ignored (not an error), and changes nothing.
    let again = s
        .rpc(
            Some(&t),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {keys[0].clone(): {"action": "decline"}}}),
            true,
        )
        .await;
    assert_eq!(again.result()["resultType"], "complete");
    assert_eq!(
        s.get(&t, &id).await["inputRequests"]
            .as_object()
            .unwrap()
            .len(),
        1
    );

    // A malformed answer to an outstanding key is rejected with -32602 and not recorded.
    let bad = s
        .rpc(
            Some(&t),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {keys[1].clone(): {"no": "action"}}}),
            true,
        )
        .await;
    assert_eq!(bad.error_code(), -32602);

    s.rpc(Some(&t), "tasks/update", json!({"taskId": id, "inputResponses": {keys[1].clone(): {"action": "accept", "content": {"name": "two"}}}}), true)
        .await
        .result();
    let done = s.wait_status(&t, &id, "completed").await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("one") && text.contains("two"), "{text}");

    // Cancel while waiting: outstanding requests become superseded, the task ends cancelled.
    let id2 = s
        .call(&t, "confirm_delete", json!({"filename": "a.txt"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &id2, "input_required").await;
    let ack = s
        .rpc(Some(&t), "tasks/cancel", json!({"taskId": id2}), true)
        .await;
    assert_eq!(ack.result()["resultType"], "complete");
    for k in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(
            ack.result().get(k).is_none(),
            "cancel ack must be empty, has {k}"
        );
    }
    let cancelled = s.wait_status(&t, &id2, "cancelled").await;
    assert!(cancelled.get("inputRequests").is_none());
    let (_, detail) = s.v1_get(Some(&t), &format!("/v1/tasks/{id2}")).await;
    assert_eq!(detail["inputRounds"][0]["state"], "superseded");
    // The superseded key can no longer be answered.
    let late = s
        .rpc(Some(&t), "tasks/update", json!({"taskId": id2, "inputResponses": {"confirm-delete": {"action": "accept", "content": {"confirm": true}}}}), true)
        .await;
    assert_eq!(late.result()["resultType"], "complete");
    assert_eq!(s.get(&t, &id2).await["status"], "cancelled");
}

/// Each task gets its own pollIntervalMs, within a twentieth of the configured one either
/// side, kept for its life: agents polling their tasks in a loop do not fall into step.
#[tokio::test]
async fn each_task_gets_a_poll_interval_within_a_twentieth_of_the_configured_one() {
    let s = Server::start(&["--conformance-fixtures", "--poll-interval-ms", "2000"]).await;
    let t = s.admin.clone();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let created = s.call(&t, "echo", json!({})).await;
        let ms = created["pollIntervalMs"].as_u64().unwrap();
        assert!((1900..=2100).contains(&ms), "{created}");
        let id = created["taskId"].as_str().unwrap();
        assert_eq!(
            s.get(&t, id).await["pollIntervalMs"],
            ms,
            "kept for the task's life"
        );
        seen.insert(ms);
    }
    // 40 draws among 201 values: all alike would mean no spread at all.
    assert!(seen.len() >= 10, "{seen:?}");
}

#[tokio::test]
async fn outcomes_map_to_completed_and_failed_as_sep_2663_says() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let tool_error = s.call(&t, "failing_job", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let protocol_error = s.call(&t, "protocol_error_job", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let a = s
        .wait_for(&t, &tool_error, "terminal", |v| v["status"] != "working")
        .await;
    assert_eq!(a["status"], "completed");
    assert_eq!(a["result"]["isError"], true);
    let b = s
        .wait_for(&t, &protocol_error, "terminal", |v| {
            v["status"] != "working"
        })
        .await;
    assert_eq!(b["status"], "failed");
    assert_eq!(b["error"]["code"], -32603);
    assert!(b.get("result").is_none());
    assert_eq!(b["statusMessage"], b["error"]["message"]);
}

#[tokio::test]
async fn cancel_races_settle_once_and_for_all() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let mut ids = Vec::new();
    for i in 0..24 {
        let id = s
            .call(
                &t,
                "slow_compute",
                json!({"seconds": 0.2, "label": format!("race-{i}")}),
            )
            .await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        ids.push(id);
    }
    // Cancel each at a different moment around its completion (~200 ms), twice.
    let mut handles = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let (url, token, id) = (s.url("/mcp"), t.clone(), id.clone());
        handles.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150 + (i as u64 % 8) * 10)).await;
            let srv = crate::harness::Reply::cancel_via(&url, &token, &id).await;
            let again = crate::harness::Reply::cancel_via(&url, &token, &id).await;
            (srv, again)
        }));
    }
    for h in handles {
        let (a, b) = h.await.unwrap();
        assert_eq!(a, 200);
        assert_eq!(b, 200);
    }
    let mut seen = std::collections::BTreeMap::new();
    for id in &ids {
        let v = s
            .wait_for(&t, id, "terminal", |v| {
                ["completed", "cancelled"].contains(&v["status"].as_str().unwrap())
            })
            .await;
        *seen
            .entry(v["status"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
        if v["status"] == "completed" {
            assert!(
                v["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("Computed race-")
            );
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for id in &ids {
        let v = s.get(&t, id).await;
        let again = s.get(&t, id).await;
        assert_eq!(v, again, "a terminal task never changes");
    }
    assert_eq!(seen.values().sum::<i32>(), 24, "{seen:?}");
}

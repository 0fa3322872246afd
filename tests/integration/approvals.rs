//! The approval inbox through `/v1/approvals` on the real binary, with real `run_command`
//! calls: the queue (oldest first, identical calls grouped, each call's `_meta` terms), approving
//! an edited call (checked against the tool's inputSchema: 422 and nothing answered when it
//! does not fit), denying with a reason the agent reads, deciding many at once with per-item
//! results, and an approval that expires into its policy's default.

use serde_json::{Value, json};

use crate::harness::{Server, stop_cleanly};

/// `run_command` `command` as `token`; its taskId, once it waits for the human.
async fn asking(s: &Server, token: &str, command: &str) -> String {
    let id = s
        .call(token, "run_command", json!({"command": command}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // The agent is never shown a question only a human answers: the admin sees it wait.
    s.wait_status(&s.admin, &id, "input_required").await;
    id
}

/// `POST /v1/approvals/decide` as the admin.
async fn decide(s: &Server, body: Value) -> (u16, Value) {
    let (status, reply) = s
        .v1_post(Some(&s.admin), "/v1/approvals/decide", body)
        .await;
    (status.as_u16(), reply)
}

/// `POST /v1/approvals/decide` as `token` (200 expected); the first item's result.
async fn decide_as(s: &Server, token: &str, body: Value) -> Value {
    let (status, reply) = s.v1_post(Some(token), "/v1/approvals/decide", body).await;
    assert_eq!(status, 200, "{reply}");
    reply["results"][0].clone()
}

/// The text of a completed task's result.
async fn result_text(s: &Server, token: &str, id: &str) -> (Value, String) {
    s.wait_status(token, id, "completed").await;
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let result = detail["task"]["result"].clone();
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (result, text)
}

#[tokio::test]
async fn the_queue_lists_calls_oldest_first_with_identical_ones_grouped() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let first = asking(&s, &agent, "echo first").await;
    let twins: Vec<String> = [
        asking(&s, &agent, "echo twin").await,
        asking(&s, &agent, "echo twin").await,
    ]
    .into();
    let (status, list) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(status, 200, "{list}");
    let approvals = list["approvals"].as_array().unwrap();
    let ids: Vec<&str> = approvals
        .iter()
        .map(|a| a["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [first.as_str(), twins[0].as_str(), twins[1].as_str()]);
    let a = &approvals[0];
    assert_eq!(a["kind"], "call");
    assert_eq!(
        (a["server"].as_str(), a["tool"].as_str()),
        (Some("taskdeck"), Some("run_command"))
    );
    assert_eq!(a["principal"], "agent");
    assert_eq!(a["arguments"], json!({"command": "echo first"}));
    assert_eq!(a["key"], "approve-command");
    assert_eq!(
        (a["required"].as_u64(), a["onExpiry"].as_str()),
        (Some(1), Some("deny"))
    );
    assert!(a["expiresAtMs"].as_i64().unwrap() > a["waitingSinceMs"].as_i64().unwrap());
    assert!(
        a["editable"].as_bool().unwrap() && a["inputSchema"]["properties"]["command"].is_object()
    );
    assert!(a["digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(
        list["groups"],
        json!([{"digest": approvals[1]["digest"], "count": 2, "taskIds": twins}])
    );
    // An agent sees only its own, and cannot answer them.
    let other = s.token("other");
    let (_, theirs) = s.v1_get(Some(&other), "/v1/approvals").await;
    assert_eq!(theirs["approvals"], json!([]));
    let (status, reply) = s
        .v1_post(
            Some(&agent),
            "/v1/approvals/decide",
            json!({"items": [{"taskId": first}], "decision": "approve"}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(reply["results"][0]["ok"], false, "{reply}");
    assert!(
        reply["results"][0]["error"]
            .as_str()
            .unwrap()
            .contains("only a person"),
        "{reply}"
    );
    s.wait_status(&s.admin, &first, "input_required").await;
}

#[tokio::test]
async fn an_edited_call_runs_as_edited_and_a_bad_edit_changes_nothing() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo as-asked").await;
    let item = json!([{"taskId": id}]);
    let (status, problem) = decide(
        &s,
        json!({"items": item, "decision": "approve", "arguments": {"command": 5}}),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["status"], 422);
    assert_eq!(problem["errors"][0]["path"], "/command", "{problem}");
    let (status, problem) = decide(
        &s,
        json!({"items": item, "decision": "approve", "arguments": {"cwd": "/tmp"}}),
    )
    .await;
    assert_eq!(
        status, 422,
        "run_command's own check: one of argv and command: {problem}"
    );
    // A working directory that is not there: the edited call could not start.
    let (status, problem) = decide(
        &s,
        json!({"items": item, "decision": "approve",
            "arguments": {"argv": ["echo", "x"], "cwd": "/nonexistent/dir"}}),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert!(
        problem
            .to_string()
            .contains("/nonexistent/dir does not exist"),
        "{problem}"
    );
    // An edit too large to send as an answer says so in a person's words, and what to do.
    let (status, problem) = decide(
        &s,
        json!({"items": item, "decision": "approve",
            "arguments": {"command": format!("echo {}", "\"".repeat(20_000))}}),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    let said = problem.to_string();
    assert!(
        said.contains("too large to send")
            && said.contains("approve the call as asked, or deny it"),
        "{problem}"
    );
    s.wait_status(&s.admin, &id, "input_required").await;
    let (status, _) = decide(&s, json!({"items": [{"taskId": id}, {"taskId": id}], "decision": "approve", "arguments": {"command": "echo x"}})).await;
    assert_eq!(status, 422, "an edit applies to one call");
    // A credential the human types into the edit runs, and its result and decision show it
    // masked (the answer itself is kept as typed: the run reads the edit from it).
    let edit = "PGPASSWORD=hunter10 echo edited-by-human";
    let (status, reply) = decide(
        &s,
        json!({"items": item, "decision": "approve", "arguments": {"command": edit}}),
    )
    .await;
    assert_eq!(
        (status, reply["results"][0]["ok"].as_bool()),
        (200, Some(true)),
        "{reply}"
    );
    let (result, text) = result_text(&s, &agent, &id).await;
    assert!(!text.contains("hunter10"), "{result}");
    // The agent is told its call was changed, so it does not take the run for its own.
    assert!(
        text.starts_with("`PGPASSWORD=[redacted] echo edited-by-human` exited with code 0 after ")
            && text.lines().nth(1)
                == Some(
                    "A person edited this call before approving it: you asked for \
                     `echo as-asked`; `PGPASSWORD=[redacted] echo edited-by-human` ran instead."
                ),
        "{result}"
    );
    let ran = &result["structuredContent"];
    assert_eq!(ran["editedFrom"], "echo as-asked", "{result}");
    assert_eq!(ran["command"], "PGPASSWORD=[redacted] echo edited-by-human");
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let decision = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "decision")
        .unwrap();
    assert_eq!(
        decision["data"]["editedArguments"]["command"],
        "PGPASSWORD=[redacted] echo edited-by-human"
    );
    // The task shows the command that ran (its title, its arguments), masked; the timeline
    // keeps the one asked for.
    assert_eq!(
        detail["task"]["title"], "PGPASSWORD=[redacted] echo edited-by-human",
        "{detail}"
    );
    assert_eq!(
        detail["task"]["arguments"]["command"],
        "PGPASSWORD=[redacted] echo edited-by-human"
    );
    let event = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "argumentsEdited")
        .unwrap_or_else(|| panic!("{detail}"));
    assert_eq!(event["data"]["previous"]["command"], "echo as-asked");
}

/// A person may change a call, not the policy: an edit that a deny rule refuses is not used
/// (the call is asked again, saying so), and the call runs only as a rule allows it.
#[tokio::test]
async fn an_edit_the_policy_denies_is_not_used() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "*forbidden*"}, "decision": "deny"}
    ]));
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo as-asked").await;
    let (status, reply) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve",
            "arguments": {"command": "echo forbidden-by-rule"}}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    // The decision says the edit was not used, not only the next question.
    let note = reply["results"][0]["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("admin's edit was not used: the policy denies the call as edited"),
        "{reply}"
    );
    // Asked again, saying why; nothing ran.
    let again = s
        .wait_for(&s.admin, &id, "the question asked again", |t| {
            t["inputRequests"]
                .as_object()
                .is_some_and(|r| r.keys().any(|k| k.starts_with("approve-command#")))
        })
        .await;
    let question = again.to_string();
    assert!(
        question.contains("edit was not used: the policy denies the call as edited (rule "),
        "{question}"
    );
    assert!(
        question.contains("echo as-asked"),
        "still the call as asked: {question}"
    );
    // Answered as given (`/v1/tasks/{id}/input`, `taskdeck tasks answer`), the same edit gets
    // the same note, under the question's key.
    let key = again["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .find(|k| k.starts_with("approve-command#"))
        .unwrap()
        .clone();
    let edit = json!({"command": "echo forbidden-again"}).to_string();
    let (status, reply) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {&key: {"action": "accept", "content": {"arguments": edit}}}}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["accepted"], json!([key]), "{reply}");
    assert!(
        reply["notes"][&key]
            .as_str()
            .is_some_and(|n| n.starts_with("admin's edit was not used: the policy denies")),
        "{reply}"
    );
    s.wait_for(&s.admin, &id, "the question asked a third time", |t| {
        t["inputRequests"].as_object().is_some_and(|r| {
            r.keys()
                .any(|k| k.starts_with("approve-command#") && *k != key)
        })
    })
    .await;
    let (status, reply) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let (result, text) = result_text(&s, &agent, &id).await;
    assert!(
        text.contains("as-asked") && !text.contains("forbidden"),
        "{result}"
    );
}

/// An edit is decided by the policy as the agent's call would be: a call one human may
/// approve, edited by that human into a call a rule asks two humans for, needs the second
/// human before it runs (the question says why); edited back, one is enough again.
#[tokio::test]
async fn an_edit_onto_a_two_human_rule_needs_two_humans() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"id": "r-deploy2", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo deploy*"}, "decision": "ask", "approval": {"humans": 2}}
    ]));
    let alice = s.human("alice").await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo harmless").await;
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(queue["approvals"][0]["required"], 1, "{queue}");
    let (status, r) = s
        .v1_post(
            Some(&alice),
            "/v1/approvals/decide",
            json!({"items": [{"taskId": id}], "decision": "approve",
                   "arguments": {"command": "echo deploy-prod"}}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let next = s
        .wait_for(&s.admin, &id, "round 2", |t| {
            t["inputRequests"].get("approve-command#2").is_some()
        })
        .await;
    let message = next["inputRequests"]["approve-command#2"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("needs 2 humans (rule r-deploy2)")
            && message.contains("1 of 2 humans approved (alice)"),
        "{message}"
    );
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(queue["approvals"][0]["required"], 2, "{queue}");
    // The call as edited is under an ask rule: "always allow" would save a rule it shadows.
    let form = &next["inputRequests"]["approve-command#2"]["params"]["requestedSchema"];
    assert!(form["properties"].get("alwaysAllow").is_none(), "{form}");
    // Alice cannot be the second.
    let (_, r) = s
        .v1_post(
            Some(&alice),
            "/v1/approvals/decide",
            json!({"items": [{"taskId": id}], "decision": "approve"}),
        )
        .await;
    assert_eq!(r["results"][0]["ok"], false, "{r}");
    assert!(
        r["results"][0]["error"]
            .as_str()
            .unwrap()
            .contains("alice approved this call already"),
        "{r}"
    );
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["task"]["status"], "input_required", "{detail}");
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    let (result, text) = result_text(&s, &agent, &id).await;
    assert!(text.contains("deploy-prod"), "{result}");
}

/// `humans: 2` with an edit: after a human edits the call, the next human's question says the
/// call as it will run (not only its `_meta`); "always allow" from one of two saves no rule;
/// and "Run again" after a refused edit runs what ran, not the refused edit.
#[tokio::test]
async fn two_humans_see_the_edited_call_and_both_must_ask_to_always_allow() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "*denied*"}, "decision": "deny"},
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo mofn*"}, "decision": "ask", "approval": {"humans": 2}}
    ]));
    let alice = s.human("alice").await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo mofn first").await;
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    s.wait_for(&s.admin, &id, "round 2", |t| {
        t["inputRequests"].get("approve-command#2").is_some()
    })
    .await;
    // Alice edits: the count restarts, and the admin's next question shows the edit.
    let (status, r) = s
        .v1_post(
            Some(&alice),
            "/v1/approvals/decide",
            json!({"items": [{"taskId": id}], "decision": "approve",
                   "arguments": {"command": "PGPASSWORD=hunter10 echo mofn edited-by-alice"}}),
        )
        .await;
    assert_eq!(status, 200, "{r}");
    let third = s
        .wait_for(&s.admin, &id, "round 3", |t| {
            t["inputRequests"].get("approve-command#3").is_some()
        })
        .await;
    let message = third["inputRequests"]["approve-command#3"]["params"]["message"]
        .as_str()
        .unwrap();
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(queue["approvals"][0]["editedBy"], "alice", "{queue}");
    assert!(!queue.to_string().contains("hunter10"), "{queue}");
    assert!(!message.contains("hunter10"), "{message}");
    assert!(
        message.contains("alice edited this call: it runs as edited")
            && message.contains("echo mofn edited-by-alice"),
        "{message}"
    );
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], false, "unread: {r}");
    assert!(r["results"][0].get("note").is_none(), "{r}");
    s.read_whole(&s.admin, &id).await;
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    let (result, text) = result_text(&s, &agent, &id).await;
    assert!(text.contains("edited-by-alice"), "{result}");

    // A call an ask rule decided is offered no "always allow": the rule it would save goes
    // after that ask rule, which matches first.
    let id = asking(&s, &agent, "echo mofn offered").await;
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let form = &detail["task"]["inputRequests"]["approve-command"]["params"]["requestedSchema"];
    assert!(form["properties"].get("alwaysAllow").is_none(), "{form}");
    s.v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;

    // Two humans by the file's terms (no rule decides): the admin asks to always allow a
    // call, alice does not: no rule is saved.
    let policy = json!({"approval": {"humans": 2}, "rules": [
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "*denied*"}, "decision": "deny"}]});
    std::fs::write(s.dir.join("cfg/policy.json"), policy.to_string()).unwrap();
    let id = asking(&s, &agent, "echo mofn second").await;
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let form = &detail["task"]["inputRequests"]["approve-command"]["params"]["requestedSchema"];
    assert!(form["properties"].get("alwaysAllow").is_some(), "{form}");
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve", "alwaysAllow": true}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    // Alice at once, before the second question is out: her decision waits for it.
    let (_, r) = s
        .v1_post(
            Some(&alice),
            "/v1/approvals/decide",
            json!({"items": [{"taskId": id}], "decision": "approve"}),
        )
        .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    result_text(&s, &agent, &id).await;
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let second = detail["inputRounds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "approve-command#2")
        .unwrap_or_else(|| panic!("{detail}"))
        .clone();
    assert!(
        second
            .to_string()
            .contains("a rule is saved only if you ask too"),
        "{second}"
    );
    let (_, policy) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert_eq!(policy["rules"].as_array().unwrap().len(), 1, "{policy}");

    // A refused edit, then approved as asked: "Run again" runs what ran.
    s.write_policy(json!([
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "*denied*"}, "decision": "deny"}]));
    let id = asking(&s, &agent, "echo plain-run").await;
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve",
               "arguments": {"command": "touch /tmp/denied-by-rule"}}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    s.wait_for(&s.admin, &id, "asked again", |t| {
        t["inputRequests"].get("approve-command#2").is_some()
    })
    .await;
    let (_, r) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(r["results"][0]["ok"], true, "{r}");
    let (result, text) = result_text(&s, &agent, &id).await;
    assert!(text.contains("plain-run"), "{result}");
    let (status, again) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/rerun"), json!({}))
        .await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(
        again["task"]["arguments"]["command"], "echo plain-run",
        "{again}"
    );
}

/// An edit answered as the question's form (`/v1/tasks/{id}/input`, what `taskdeck tasks
/// answer` sends) is checked as a decision's edit is: 422 and nothing answered when it is not
/// JSON text of an object that fits the tool's schema.
#[tokio::test]
async fn an_edit_answered_through_the_form_is_checked_like_a_decision() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo as-asked").await;
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let key = detail["task"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let input = format!("/v1/tasks/{id}/input");
    let answer = |arguments: Value| json!({"inputResponses": {&key: {"action": "accept", "content": {"arguments": arguments}}}});
    let (status, problem) = s
        .v1_post(Some(&s.admin), &input, answer(json!({"command": "echo x"})))
        .await;
    assert_eq!(status, 422, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("`arguments` is the edited call as JSON text (a string), not an object"),
        "{problem}"
    );
    let (status, problem) = s
        .v1_post(Some(&s.admin), &input, answer(json!("not json")))
        .await;
    assert_eq!(status, 422, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("not JSON"),
        "{problem}"
    );
    let (status, problem) = s
        .v1_post(Some(&s.admin), &input, answer(json!(r#"{"command": 5}"#)))
        .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["path"], "/command", "{problem}");
    // Nothing was answered: the same question still waits.
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["task"]["status"], "input_required");
    assert_eq!(
        detail["task"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        [&key]
    );
    let (status, reply) = s
        .v1_post(
            Some(&s.admin),
            &input,
            answer(json!(r#"{"command": "echo via-form"}"#)),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["accepted"], json!([key]));
    let (result, text) = result_text(&s, &agent, &id).await;
    // It ran as edited, and the agent is told so.
    assert!(
        text.contains("`echo via-form` exited with code 0 after"),
        "{result}"
    );
    assert_eq!(result["structuredContent"]["editedFrom"], "echo as-asked");
}

#[tokio::test]
async fn a_denial_reason_reaches_the_agent_and_many_are_decided_at_once() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let ids = [
        asking(&s, &agent, "echo a").await,
        asking(&s, &agent, "echo b").await,
    ];
    let (status, reply) = decide(
        &s,
        json!({
            "items": [{"taskId": ids[0]}, {"taskId": "01nope-0000"}, {"taskId": ids[1]}],
            "decision": "deny", "reason": "not during the release"
        }),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let oks: Vec<Value> = reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ok"].clone())
        .collect();
    assert_eq!(oks, [json!(true), json!(false), json!(true)], "{reply}");
    assert_eq!(reply["results"][1]["error"], "no such task");
    for id in &ids {
        let (result, text) = result_text(&s, &agent, id).await;
        assert_eq!(result["isError"], true);
        assert!(text.contains("not during the release"), "{result}");
    }
    // A question of request_approval denied from the queue: the agent reads the reason too.
    let asked = s
        .call(
            &agent,
            "request_approval",
            json!({"message": "Ship the release now?"}),
        )
        .await;
    let question = asked["taskId"].as_str().unwrap().to_string();
    s.wait_status(&agent, &question, "input_required").await;
    let (status, reply) = decide(
        &s,
        json!({"items": [{"taskId": question}], "decision": "deny", "reason": "after the freeze"}),
    )
    .await;
    assert_eq!(
        (status, &reply["results"][0]["ok"]),
        (200, &json!(true)),
        "{reply}"
    );
    let (result, text) = result_text(&s, &agent, &question).await;
    assert_eq!(text, "Declined. Their reason: after the freeze", "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({"action": "decline", "content": {"reason": "after the freeze"}})
    );
    // Deciding again: each item says it is no longer open.
    let (_, again) = decide(
        &s,
        json!({"items": [{"taskId": ids[0]}], "decision": "approve"}),
    )
    .await;
    assert_eq!(again["results"][0]["ok"], false, "{again}");
}

#[tokio::test]
async fn an_unanswered_approval_expires_into_the_policys_default() {
    let s = Server::start(&[]).await;
    std::fs::write(
        s.dir.join("cfg/policy.json"),
        json!({"rules": [
            {"principal": "*", "server": "taskdeck", "tool": "run_command", "arguments": {"command": "echo lenient*"},
             "decision": "ask", "approval": {"expiresAfterMs": 800, "onExpiry": "allow"}}
        ], "approval": {"expiresAfterMs": 800}}).to_string(),
    )
    .unwrap();
    let agent = s.token("agent");
    let strict = asking(&s, &agent, "echo strict").await;
    let lenient = asking(&s, &agent, "echo lenient").await;
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(list["approvals"][1]["onExpiry"], "allow", "{list}");
    let (result, text) = result_text(&s, &agent, &strict).await;
    assert_eq!(result["structuredContent"]["expired"], true, "{result}");
    assert!(text.contains("was not approved in time"), "{text}");
    let (result, text) = result_text(&s, &agent, &lenient).await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(text.contains("lenient"), "{text}");
    let (_, detail) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{strict}"))
        .await;
    let round = &detail["inputRounds"][0];
    assert_eq!(
        (
            round["answeredBy"].as_str(),
            round["response"]["expired"].as_bool()
        ),
        (Some("expiry"), Some(true)),
        "{round}"
    );
    assert!(
        detail["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "inputExpired")
    );
    assert_eq!(resumed_with(&detail), "No answer came in time", "{detail}");
}

/// The statusMessage of `detail`'s task as it went back from `input_required` to `working`:
/// what it waited for no longer holds.
fn resumed_with(detail: &Value) -> &str {
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "status" && e["data"]["from"] == "input_required")
        .and_then(|e| e["data"]["statusMessage"].as_str())
        .unwrap_or_default()
}

/// A command still waiting for its approval when Taskdeck stops, cleanly or killed, is asked
/// again at the next start (nothing ran yet): the same question, which a person then approves
/// and the command runs, decided once in the audit log. One whose arguments hide a credential
/// (the command would need it, and the store keeps it masked) fails as interrupted, and the
/// audit log says its question was abandoned, once.
#[tokio::test]
async fn an_approval_open_at_a_stop_or_a_crash_is_asked_again_or_abandoned_once() {
    let tmp = tempfile::tempdir().unwrap();
    for clean in [false, true] {
        let mut s = Server::start_in(tmp.path(), &[]).await;
        let name = format!("agent-{clean}");
        let agent = s.token(&name);
        let command = format!("echo resumed clean={clean}");
        let id = asking(&s, &agent, &command).await;
        let secret = asking(&s, &agent, "PGPASSWORD=hunter22 echo needs-it").await;
        let (_, before) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
        match clean {
            true => assert!(stop_cleanly(&mut s).await.success()),
            false => s.kill().await,
        }
        let mut s = Server::start_in(tmp.path(), &[]).await;
        s.wait_status(&s.admin, &secret, "failed").await;
        let (_, after) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
        assert_eq!(after["task"]["status"], "input_required", "{after}");
        assert_eq!(
            after["task"]["inputRequests"], before["task"]["inputRequests"],
            "the same question"
        );
        let (status, reply) = decide(
            &s,
            json!({"items": [{"taskId": id}], "decision": "approve"}),
        )
        .await;
        assert_eq!(
            (status, &reply["results"][0]["ok"]),
            (200, &json!(true)),
            "{reply}"
        );
        let (_, text) = result_text(&s, &agent, &id).await;
        assert!(text.contains(&format!("resumed clean={clean}")), "{text}");

        let (_, log) = s.v1_get(Some(&s.admin), "/v1/audit?format=json").await;
        let of = |task: &str| -> Vec<Value> {
            log["entries"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["taskId"] == task)
                .cloned()
                .collect()
        };
        let decided = of(&id);
        assert_eq!(decided.len(), 1, "clean={clean}: {log}");
        assert_eq!(
            (&decided[0]["decision"], &decided[0]["decidedBy"]),
            (&json!("allow"), &json!("human")),
            "{decided:?}"
        );
        let abandoned = of(&secret);
        assert_eq!(abandoned.len(), 1, "clean={clean}: {log}");
        assert_eq!(
            (
                &abandoned[0]["decision"],
                &abandoned[0]["decidedBy"],
                &abandoned[0]["principal"]
            ),
            (&json!("deny"), &json!("abandoned"), &json!(name)),
            "{abandoned:?}"
        );
        let (_, verified) = s.v1_get(Some(&s.admin), "/v1/audit/verify").await;
        assert_eq!(verified["ok"], true, "{verified}");
        // The data dir is free for the next round.
        assert!(stop_cleanly(&mut s).await.success());
    }
}

#[tokio::test]
async fn every_decision_is_in_the_audit_log_and_the_task_timeline() {
    let s = Server::start(&[]).await;
    s.write_policy(
        json!([{"principal": "*", "server": "taskdeck", "tool": "run_command",
        "arguments": {"command": "echo fine"}, "decision": "allow"}]),
    );
    let agent = s.token("agent");
    let by_rule = s
        .call(&agent, "run_command", json!({"command": "echo fine"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    result_text(&s, &agent, &by_rule).await;
    let edited = asking(&s, &agent, "echo before").await;
    decide(&s, json!({"items": [{"taskId": edited}], "decision": "approve", "arguments": {"command": "echo after"}})).await;
    result_text(&s, &agent, &edited).await;
    let denied = asking(&s, &agent, "echo no").await;
    decide(
        &s,
        json!({"items": [{"taskId": denied}], "decision": "deny", "reason": "too late"}),
    )
    .await;
    result_text(&s, &agent, &denied).await;
    let (status, log) = s.v1_get(Some(&s.admin), "/v1/audit?format=json").await;
    assert_eq!(status, 200, "{log}");
    let entries = log["entries"].as_array().unwrap();
    let of = |id: &str| {
        entries
            .iter()
            .find(|e| e["taskId"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not in {log}"))
    };
    let rule = of(&by_rule);
    assert_eq!(
        (rule["decision"].as_str(), rule["decidedBy"].as_str()),
        (Some("allow"), Some("rule"))
    );
    assert!(rule["rule"].as_str().unwrap().starts_with("r-"));
    let e = of(&edited);
    assert_eq!(
        (
            e["decision"].as_str(),
            e["decidedBy"].as_str(),
            e["human"].as_str()
        ),
        (Some("allow"), Some("human"), Some("admin"))
    );
    assert_eq!(e["arguments"], json!({"command": "echo before"}));
    assert_eq!(e["editedArguments"], json!({"command": "echo after"}));
    assert!(e["digest"].as_str().unwrap().starts_with("sha256:"));
    let d = of(&denied);
    assert_eq!(
        (d["decision"].as_str(), d["reason"].as_str()),
        (Some("deny"), Some("too late"))
    );
    // The task's own timeline holds the same decision.
    let (_, detail) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{edited}"))
        .await;
    let event = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "decision")
        .cloned()
        .unwrap();
    assert_eq!(
        event["data"]["editedArguments"],
        json!({"command": "echo after"}),
        "{event}"
    );
    assert_eq!(resumed_with(&detail), "Answered by admin", "{detail}");
    let (_, detail) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{denied}"))
        .await;
    assert_eq!(resumed_with(&detail), "Declined by admin", "{detail}");
    let (_, verified) = s.v1_get(Some(&s.admin), "/v1/audit/verify").await;
    assert_eq!(verified["ok"], true, "{verified}");
}

#[tokio::test]
async fn one_deadline_holds_for_every_human_and_only_the_engine_can_expire() {
    let s = Server::start(&[]).await;
    s.write_policy(
        json!([{"principal": "*", "server": "taskdeck", "tool": "run_command",
        "arguments": {"command": "echo two*"}, "decision": "ask",
        "approval": {"humans": 2, "expiresAfterMs": 600000}}]),
    );
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo two").await;
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    let first = list["approvals"][0].clone();
    let (_, reply) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(reply["results"][0]["ok"], true, "{reply}");
    // The second human's question keeps the first one's deadline.
    let second = loop {
        let (_, list) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
        match list["approvals"].as_array().and_then(|a| a.first()) {
            Some(a) if a["key"] != first["key"] => break a.clone(),
            _ => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    };
    assert_eq!(second["key"], "approve-command#2");
    assert_eq!(second["approvedBy"], json!(["admin"]));
    assert_eq!(second["expiresAtMs"], first["expiresAtMs"], "{second}");

    // A human's answer that says "expired" is still a human's answer: it counts as theirs.
    let other = asking(&s, &agent, "echo other").await;
    s.answer(
        &other,
        "approve-command",
        json!({"action": "accept", "expired": true}),
    )
    .await;
    let (result, _) = result_text(&s, &agent, &other).await;
    assert_eq!(result["isError"], false, "{result}");
    let (_, log) = s.v1_get(Some(&s.admin), "/v1/audit?format=json").await;
    let entry = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["taskId"] == other.as_str())
        .cloned()
        .unwrap();
    assert_eq!(
        (entry["decidedBy"].as_str(), entry["human"].as_str()),
        (Some("human"), Some("admin")),
        "{entry}"
    );
}

/// A person whose decision comes second is told who took the call and how, not Taskdeck's key
/// for it; a call that still waits for another person says so. Every round of one approval
/// says when the call was first asked (`askedAtMs`), which orders the queue.
#[tokio::test]
async fn a_decision_that_comes_second_says_who_took_the_call() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"id": "r-two", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo two*"}, "decision": "ask", "approval": {"humans": 2}}
    ]));
    let agent = s.token("agent");
    let alice = s.human("alice").await;
    let bob = s.human("bob").await;
    let open_key = |task: &Value| {
        task["inputRequests"]
            .as_object()
            .and_then(|r| r.keys().next().cloned())
            .unwrap()
    };
    let decide_key = async |token: &str, id: &str, key: &str, decision: &str| {
        let body = json!({"items": [{"taskId": id, "key": key}], "decision": decision});
        decide_as(&s, token, body).await
    };

    let id = asking(&s, &agent, "echo one").await;
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let key = open_key(&task["task"]);
    assert_eq!(decide_key(&alice, &id, &key, "deny").await["ok"], true);
    let late = decide_key(&bob, &id, &key, "approve").await;
    assert_eq!(late["ok"], false, "{late}");
    assert_eq!(late["error"], "alice denied this call already", "{late}");

    let id = asking(&s, &agent, "echo two").await;
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let first = open_key(&task["task"]);
    let asked_at = |task: &Value, key: &str| {
        task["inputRequests"][key]["params"]["_meta"]["taskdeck/approval"]["askedAtMs"].as_i64()
    };
    let asked = asked_at(&task["task"], &first).unwrap_or_else(|| panic!("{task}"));
    assert_eq!(decide_key(&alice, &id, &first, "approve").await["ok"], true);
    let late = decide_key(&bob, &id, &first, "approve").await;
    assert_eq!(
        late["error"],
        "alice approved this call already, and it still waits for another person's approval: decide it again",
        "{late}"
    );
    let again = s
        .wait_for(&s.admin, &id, "the second round", |t| {
            t["inputRequests"]
                .as_object()
                .is_some_and(|r| !r.contains_key(&first) && !r.is_empty())
        })
        .await;
    let second = open_key(&again);
    assert_eq!(asked_at(&again, &second), Some(asked), "{again}");
    // The queue keeps the call in its place: waiting since it was first asked.
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    let listed = queue["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["taskId"] == id.as_str())
        .unwrap_or_else(|| panic!("{queue}"));
    assert_eq!(listed["waitingSinceMs"].as_i64(), Some(asked), "{listed}");
    assert_eq!(decide_key(&bob, &id, &second, "approve").await["ok"], true);
    s.wait_status(&agent, &id, "completed").await;
}

/// An approval counts only for the call its question showed. alice edits a call onto a rule
/// that asks two humans; Taskdeck restarts, and a deny rule for the edit was added meanwhile,
/// so the replayed rounds drop the edit. bob's approval of the question that showed the edit
/// then approves nothing: the call is asked again as it now is, and nothing runs until someone
/// approves that.
#[tokio::test]
async fn an_approval_of_a_question_showing_another_call_approves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran-as-first-asked");
    let rules = json!([
        {"id": "r-safe2", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo safe*"}, "decision": "ask", "approval": {"humans": 2}}
    ]);
    let mut s = Server::start_in(tmp.path(), &[]).await;
    s.write_policy(rules.clone());
    let agent = s.token("agent");
    let alice = s.human("alice").await;
    let bob = s.human("bob").await;
    let id = s
        .call(
            &agent,
            "run_command",
            json!({"argv": ["touch", marker.to_str().unwrap()]}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let edited = decide_as(
        &s,
        &alice,
        json!({"items": [{"taskId": id}], "decision": "approve",
               "arguments": {"argv": ["echo", "safe-edit"]}}),
    )
    .await;
    assert_eq!(edited["ok"], true, "{edited}");
    let second = s
        .wait_for(&s.admin, &id, "the second human's question", |t| {
            t.to_string().contains("1 of 2 humans approved")
        })
        .await;
    assert!(second.to_string().contains("safe-edit"), "{second}");

    assert!(stop_cleanly(&mut s).await.success());
    let mut with_deny = rules.as_array().unwrap().clone();
    with_deny.insert(
        0,
        json!({"id": "r-no-edit", "principal": "*", "server": "taskdeck", "tool": "run_command",
               "arguments": {"command": "echo safe-edit"}, "decision": "deny"}),
    );
    std::fs::write(
        tmp.path().join("cfg/policy.json"),
        json!({ "rules": with_deny }).to_string(),
    )
    .unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    s.wait_status(&s.admin, &id, "input_required").await;
    let approved = decide_as(
        &s,
        &bob,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(approved["ok"], true, "{approved}");
    // Asked again, as the call now is; nothing ran.
    let again = s
        .wait_for(&s.admin, &id, "the call asked again", |t| {
            t.to_string().contains("asked again as it is now")
        })
        .await;
    assert_eq!(again["status"], "input_required", "{again}");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        !marker.exists(),
        "the call ran as first asked on bob's approval of the edit"
    );
    decide_as(
        &s,
        &bob,
        json!({"items": [{"taskId": id}], "decision": "deny"}),
    )
    .await;
    s.wait_status(&s.admin, &id, "completed").await;
    assert!(!marker.exists());
}

/// "Always allow" of an argument list saves the line `sh` runs as exactly that list: the line
/// the question showed (`$'…'`, which `sh` reads otherwise) run as a `command` is asked, and
/// runs nothing unasked.
#[tokio::test]
async fn always_allow_of_an_argument_list_never_allows_another_shell_line() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned-quote");
    let trick = format!("\n'; touch {} #", marker.display());
    let id = s
        .call(&agent, "run_command", json!({"argv": ["echo", trick]}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let (status, reply) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve", "alwaysAllow": true}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    result_text(&s, &agent, &id).await;
    let (_, policy) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    let saved = policy["rules"][0]["arguments"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("{policy}"))
        .to_string();
    assert!(!saved.contains("$'"), "{saved}");
    // The line as the question showed it, as a command: not the saved rule's call.
    let shown = format!("echo $'\\n\\'; touch {} #'", marker.display());
    let asked = s
        .call(&agent, "run_command", json!({"command": shown}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &asked, "input_required").await;
    assert!(!marker.exists());
    // The saved line itself runs unasked, as the same argument list.
    let same = s
        .call(&agent, "run_command", json!({"command": saved}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, text) = result_text(&s, &agent, &same).await;
    assert!(text.contains("exited with code 0"), "{text}");
    assert!(!marker.exists(), "{text}");
}

/// A call with extra environment asks whatever the rules say (the environment can change what
/// an allowed command does), so a rule saved for it would never be used: its question offers
/// no "always allow", and an approval asking for one says no rule was saved.
#[tokio::test]
async fn a_call_with_extra_environment_offers_no_always_allow() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let with_env = json!({"command": "echo env", "env": {"MODE": "fast"}});
    let id = s.call(&agent, "run_command", with_env.clone()).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    let form = &waiting["inputRequests"]["approve-command"]["params"]["requestedSchema"];
    assert!(form["properties"].get("alwaysAllow").is_none(), "{form}");
    // Approved with "always allow" (and `edited` arguments): answered, with a note saying why
    // no rule was saved, and none is.
    let approve_always = async |id: &str, edited: Option<Value>, why: &str| {
        let mut body =
            json!({"items": [{"taskId": id}], "decision": "approve", "alwaysAllow": true});
        if let Some(edited) = edited {
            body["arguments"] = edited;
        }
        let (status, reply) = decide(&s, body).await;
        assert_eq!(status, 200, "{reply}");
        let note = reply["results"][0]["note"].as_str().unwrap_or_default();
        assert!(
            note.contains("no rule was saved") && note.contains(why),
            "{reply}"
        );
        result_text(&s, &agent, id).await;
        let (_, policy) = s.v1_get(Some(&s.admin), "/v1/policy").await;
        assert_eq!(policy["rules"], json!([]), "{policy}");
    };
    approve_always(&id, None, "offers none").await;

    // Nor for a call that an edit gives extra environment: the rule, naming none, would let
    // the command run without it, unasked.
    let id = asking(&s, &agent, "echo plain").await;
    let edited = json!({"command": "echo plain", "env": {"MODE": "fast"}});
    approve_always(&id, Some(edited), "extra environment").await;
}

/// `taskdeck tasks reveal ID` as `token`: its exit code, stdout and stderr.
fn reveal_cli(s: &Server, token: &str, id: &str) -> (Option<i32>, String, String) {
    tasks_cli(s, token, &["reveal", id])
}

/// `taskdeck tasks ARGS…` as `token`: its exit code, stdout and stderr.
fn tasks_cli(s: &Server, token: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(crate::harness::BIN)
        .arg("tasks")
        .args(args)
        .arg("--port")
        .arg(s.port.to_string())
        .args(["--token", token])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A masked value may be the command itself (`T=…; $T`): the person asked reads the call whole
/// with `taskdeck tasks reveal` before approving it (approving it unread is refused), and what
/// they read is what runs. A call that hides nothing has nothing to reveal, and an agent's
/// token reveals nothing.
#[tokio::test]
async fn a_person_reads_a_masked_call_whole_before_approving_it() {
    let s = Server::start(&[]).await;
    let agent = s.token("builder");
    let marker = s.dir.join("ran-hidden");
    // Shown as `API_TOKEN=[redacted]`: the value is the `touch` that Python runs.
    let call = json!({
        "command": "python3 -c 'import os; os.system(os.environ[\"API_TOKEN\"])'",
        "env": {"API_TOKEN": format!("touch {}", marker.display())},
    });
    let id = s.call(&agent, "run_command", call.clone()).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert!(!queue.to_string().contains("ran-hidden"), "{queue}");
    assert_eq!(queue["approvals"][0]["hiddenValues"], true, "{queue}");

    // `tasks wait` says how to answer, and to read the call whole first; the reason goes with
    // a decline only.
    let (code, _, said) = tasks_cli(&s, &s.admin, &["wait", &id, "--timeout", "1"]);
    assert_eq!(code, Some(6), "{said}");
    assert!(
        said.contains(&format!(
            "(taskdeck tasks answer {id} approve-command accept | decline [--content \
             '{{\"reason\": \"…\"}}']; values are hidden: read the call whole with taskdeck \
             tasks reveal {id} before approving)"
        )),
        "{said}"
    );
    // Approved unread, from the CLI or /v1: refused, saying how to read it; nothing recorded.
    let (code, _, said) = tasks_cli(&s, &s.admin, &["answer", &id, "approve-command", "accept"]);
    assert_eq!(code, Some(4), "{said}");
    assert!(
        said.contains(&format!(
            "admin has not read it whole: read it first (`taskdeck tasks reveal {id}`"
        )),
        "{said}"
    );
    let (_, refused) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(refused["results"][0]["ok"], false, "{refused}");
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    assert!(
        waiting["inputRequests"].get("approve-command").is_some(),
        "{waiting}"
    );
    let (code, _, said) = reveal_cli(&s, &agent, &id);
    assert_eq!(code, Some(4), "an agent's token: {said}");
    assert!(said.contains("only the admin or a human"), "{said}");
    assert!(!said.contains("ran-hidden"), "{said}");
    let (code, printed, said) = reveal_cli(&s, &s.admin, &id);
    assert_eq!(code, Some(0), "{said}");
    let revealed: Value =
        serde_json::from_str(&printed).unwrap_or_else(|e| panic!("{e}: {printed}"));
    assert_eq!(revealed, call, "{printed}");

    let (status, decided) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve"}),
    )
    .await;
    assert_eq!(status, 200, "{decided}");
    s.wait_status(&agent, &id, "completed").await;
    assert!(marker.exists(), "what was revealed ran");
    let (code, _, said) = reveal_cli(&s, &s.admin, &id);
    assert_eq!(code, Some(4), "decided: nothing held any more: {said}");

    // Nothing masked, nothing to reveal: its question says nothing of hidden values.
    let plain = asking(&s, &agent, "echo plain").await;
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(queue["approvals"][0]["taskId"], plain, "{queue}");
    assert_eq!(queue["approvals"][0]["hiddenValues"], false, "{queue}");
    let (status, nothing) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{plain}/reveal"),
            json!({}),
        )
        .await;
    assert_eq!(status, 409, "{nothing}");
    assert!(
        nothing["detail"]
            .as_str()
            .unwrap()
            .contains("hides nothing"),
        "{nothing}"
    );
    // Another principal's task is not found for an agent, as everywhere.
    let other = s.token("other-agent");
    let (status, _) = s
        .v1_post(
            Some(&other),
            &format!("/v1/tasks/{plain}/reveal"),
            json!({}),
        )
        .await;
    assert_eq!(status, 403, "agents read no hidden value at all");
    let (status, _) = s
        .v1_post(Some(&s.admin), "/v1/tasks/no-such-task/reveal", json!({}))
        .await;
    assert_eq!(status, 404);

    // Two calls alike where shown, not where masked, are no group of identical calls.
    for value in ["echo one", "touch two"] {
        let twin = json!({
            "command": "python3 -c 'import os; os.system(os.environ[\"API_TOKEN\"])'",
            "env": {"API_TOKEN": value},
        });
        let id = s.call(&agent, "run_command", twin).await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        s.wait_status(&s.admin, &id, "input_required").await;
    }
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    let twins: Vec<&Value> = queue["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["hiddenValues"] == true)
        .collect();
    assert_eq!(twins.len(), 2, "{queue}");
    assert_eq!(twins[0]["digest"], twins[1]["digest"], "{queue}");
    assert_eq!(queue["groups"], json!([]), "{queue}");

    // A value the command itself runs is masked as any other, in its arguments and in its
    // question alike: the person reads it whole, and nothing stores it.
    let runs = json!({"command": "sh -c \"$API_TOKEN\"", "env": {"API_TOKEN": "echo three"}});
    let id = s.call(&agent, "run_command", runs.clone()).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    let question = &waiting["inputRequests"]["approve-command"]["params"];
    let meta = &question["_meta"]["taskdeck/approval"];
    assert_eq!(
        meta["arguments"]["env"]["API_TOKEN"], "[redacted]",
        "{question}"
    );
    assert_eq!(meta["hiddenValues"], true, "{question}");
    assert!(
        question["message"]
            .as_str()
            .unwrap()
            .contains("with environment API_TOKEN=[redacted]:"),
        "{question}"
    );
    let (_, revealed) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/reveal"), json!({}))
        .await;
    assert_eq!(revealed["arguments"], runs, "{revealed}");
    assert!(!waiting.to_string().contains("echo three"), "{waiting}");
}

/// A call holding credentials that waits for its approval when Taskdeck stops cannot be asked
/// again (the store has them masked, and nothing holds them any more): it fails saying why,
/// and a person has nothing left to read.
#[tokio::test]
async fn a_masked_call_waiting_at_a_restart_fails_saying_why() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let agent = s.token("agent");
    let id = s
        .call(
            &agent,
            "run_command",
            json!({"command": "echo hi", "env": {"API_TOKEN": "kept-only-in-memory"}}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    assert!(stop_cleanly(&mut s).await.success());
    let s = Server::start_in(tmp.path(), &[]).await;
    let failed = s.wait_status(&agent, &id, "failed").await;
    assert_eq!(
        failed["error"]["message"],
        "Task interrupted: Taskdeck restarted while it waited for input; its call held \
         credentials, which Taskdeck never stores, so it could not be asked again: send the call \
         again",
        "{failed}"
    );
    let (status, _) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/reveal"), json!({}))
        .await;
    assert_eq!(status, 409);
}

/// A person's edit that holds a credential is shown masked to the next person asked (M of N),
/// who reads it whole as the first call's hidden values are read: their question says values
/// are hidden, and two such edits differing only where masked are no group of identical calls.
#[tokio::test]
async fn the_next_person_reads_an_edit_with_a_credential_whole() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"id": "r-two", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "decision": "ask", "approval": {"humans": 2}}
    ]));
    let agent = s.token("agent");
    let alice = s.human("alice").await;
    let mut edits = Vec::new();
    for value in ["echo harmless", "touch elsewhere"] {
        let id = asking(&s, &agent, "echo hi").await;
        let edit = json!({
            "command": "python3 -c 'import os; os.system(os.environ[\"API_TOKEN\"])'",
            "env": {"API_TOKEN": value},
        });
        let edited = decide_as(
            &s,
            &alice,
            json!({"items": [{"taskId": id}], "decision": "approve", "arguments": edit.clone()}),
        )
        .await;
        assert_eq!(edited["ok"], true, "{edited}");
        edits.push((id, edit));
    }
    for (id, edit) in &edits {
        let second = s
            .wait_for(&s.admin, id, "the second person's question", |t| {
                t["inputRequests"].get("approve-command#2").is_some()
            })
            .await;
        let question = &second["inputRequests"]["approve-command#2"]["params"];
        assert_eq!(
            question["_meta"]["taskdeck/approval"]["hiddenValues"], true,
            "{question}"
        );
        assert!(
            question["message"]
                .as_str()
                .unwrap()
                .ends_with(&format!("or taskdeck tasks reveal {id}).")),
            "{question}"
        );
        assert!(
            question["requestedSchema"]["properties"]
                .get("alwaysAllow")
                .is_none(),
            "no rule would write the credential down: {question}"
        );
        let (status, revealed) = s
            .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/reveal"), json!({}))
            .await;
        assert_eq!(status, 200, "{revealed}");
        assert_eq!(&revealed["arguments"], edit, "{revealed}");
    }
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(queue["groups"], json!([]), "{queue}");
}

/// A call with hidden values never runs unread by expiry: a policy whose questions expire into
/// `allow` has it denied then.
#[tokio::test]
async fn a_masked_call_never_expires_into_allow() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"id": "r-lax", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "touch *"}, "decision": "ask",
         "approval": {"expiresAfterMs": 1000, "onExpiry": "allow"}}
    ]));
    let agent = s.token("agent");
    let marker = s.dir.join("ran-unread");
    let id = s
        .call(
            &agent,
            "run_command",
            json!({"argv": ["touch", marker.to_str().unwrap(), "--password", "pw-unread"]}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    let meta = &waiting["inputRequests"]["approve-command"]["params"]["_meta"]["taskdeck/approval"];
    assert_eq!(meta["hiddenValues"], true, "{waiting}");
    assert_eq!(meta["onExpiry"], "deny", "{waiting}");
    let done = s
        .wait_for(&agent, &id, "its end", |t| {
            t["status"] != "input_required" && t["status"] != "working"
        })
        .await;
    assert!(!marker.exists(), "ran unread: {done}");
}

/// A person's edit that adds a credential: "always allow" saves no rule with it (policy.json
/// never holds it), and the agent reads the edit masked in the task's input rounds.
#[tokio::test]
async fn an_edit_with_a_credential_saves_no_rule_and_reads_masked() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo aa").await;
    // As `taskdeck tasks answer` sends it (`/v1/approvals/decide` says so in its note).
    let typed = json!({"command": "true aa --password=always-secret-1"}).to_string();
    let (status, reply) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approve-command": {"action": "accept",
                "content": {"alwaysAllow": true, "arguments": typed}}}}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    s.wait_status(&agent, &id, "completed").await;
    let (_, policy) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert_eq!(policy["rules"], json!([]), "{policy}");
    let file = std::fs::read_to_string(s.dir.join("cfg/policy.json")).unwrap_or_default();
    assert!(!file.contains("always-secret-1"), "{file}");
    let (_, detail) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}")).await;
    assert!(!detail.to_string().contains("always-secret-1"), "{detail}");
    let said = detail["timeline"].as_array().unwrap().iter().any(|e| {
        e["data"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("\"Always allow\" was not saved"))
    });
    assert!(said, "the person is told no rule was saved: {detail}");
    let answer = &detail["inputRounds"][0]["response"]["content"]["arguments"];
    assert_eq!(
        answer, "{\"command\":\"true aa --password=[redacted]\"}",
        "{detail}"
    );
}

/// M of N with an edit: the next person's question survives a restart and is still read
/// whole; and a policy whose questions expire into `allow` denies an edited call at expiry
/// (it would run the agent's call, not the edit, or an edit nobody else read).
#[tokio::test]
async fn an_edit_awaiting_a_second_person_is_read_whole_after_a_restart_and_never_expires_into_allow()
 {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    s.write_policy(json!([
        {"id": "r-two", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo two*"}, "decision": "ask", "approval": {"humans": 2}},
        {"id": "r-lax", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "decision": "ask",
         "approval": {"humans": 2, "expiresAfterMs": 1500, "onExpiry": "allow"}}
    ]));
    let agent = s.token("agent");
    let alice = s.human("alice").await;
    let marker = s.dir.join("ran-by-expiry");
    let lax = asking(&s, &agent, "echo lax").await;
    let edit = json!({"command": format!("touch {}", marker.display())});
    let taken = decide_as(
        &s,
        &alice,
        json!({"items": [{"taskId": lax}], "decision": "approve", "arguments": edit}),
    )
    .await;
    assert_eq!(taken["ok"], true, "{taken}");
    let second = s
        .wait_for(&s.admin, &lax, "the second question", |t| {
            t["inputRequests"].get("approve-command#2").is_some()
        })
        .await;
    assert_eq!(
        second["inputRequests"]["approve-command#2"]["params"]["_meta"]["taskdeck/approval"]["onExpiry"],
        "deny",
        "{second}"
    );
    let ended = s
        .wait_for(&agent, &lax, "its end", |t| {
            t["status"] != "working" && t["status"] != "input_required"
        })
        .await;
    assert!(!marker.exists(), "ran at expiry: {ended}");

    let id = asking(&s, &agent, "echo two").await;
    let edit = json!({"command": "echo two \"$API_KEY\"", "env": {"API_KEY": "restart-secret"}});
    let taken = decide_as(
        &s,
        &alice,
        json!({"items": [{"taskId": id}], "decision": "approve", "arguments": edit.clone()}),
    )
    .await;
    assert_eq!(taken["ok"], true, "{taken}");
    s.wait_for(&s.admin, &id, "the second question", |t| {
        t["inputRequests"].get("approve-command#2").is_some()
    })
    .await;
    assert!(stop_cleanly(&mut s).await.success());
    let s = Server::start_in(tmp.path(), &[]).await;
    let again = s
        .wait_for(&s.admin, &id, "the second question again", |t| {
            t["inputRequests"].get("approve-command#2").is_some()
        })
        .await;
    let meta = &again["inputRequests"]["approve-command#2"]["params"]["_meta"]["taskdeck/approval"];
    assert_eq!(meta["hiddenValues"], true, "{again}");
    assert_eq!(meta["editable"], false, "{again}");
    // The question is in the store from before the restart; the resumed run holds its values
    // again once it reaches that question (a few ms after the start): 409 until then.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let revealed = loop {
        let (status, revealed) = s
            .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/reveal"), json!({}))
            .await;
        if status == 200 {
            break revealed;
        }
        assert_eq!(status, 409, "{revealed}");
        assert!(
            std::time::Instant::now() < deadline,
            "never held again: {revealed}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_eq!(revealed["arguments"], edit, "{revealed}");
}

/// An edit the policy refused when it was answered stays refused after a restart, whatever the
/// policy says then (its deny rule removed meanwhile): the call waits for its question as asked,
/// and nothing runs.
#[tokio::test]
async fn an_edit_refused_before_a_restart_stays_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    s.write_policy(json!([
        {"id": "r-den", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "*forbidden*"}, "decision": "deny"}
    ]));
    let agent = s.token("agent");
    let alice = s.human("alice").await;
    let marker = s.dir.join("forbidden-ran");
    let id = asking(&s, &agent, "echo asked").await;
    let refused = decide_as(
        &s,
        &alice,
        json!({"items": [{"taskId": id}], "decision": "approve",
               "arguments": {"command": format!("touch {} # forbidden", marker.display())}}),
    )
    .await;
    assert!(
        refused["note"]
            .as_str()
            .unwrap_or_default()
            .contains("edit was not used"),
        "{refused}"
    );
    s.wait_for(&s.admin, &id, "the call asked again", |t| {
        t["inputRequests"].get("approve-command#2").is_some()
    })
    .await;
    assert!(stop_cleanly(&mut s).await.success());
    s.write_policy(json!([]));
    let s = Server::start_in(tmp.path(), &[]).await;
    let again = s
        .wait_for(&s.admin, &id, "the question after the restart", |t| {
            t["status"] != "working"
        })
        .await;
    assert_eq!(again["status"], "input_required", "{again}");
    let shown = &again["inputRequests"]["approve-command#2"]["params"]["_meta"]["taskdeck/approval"]
        ["arguments"];
    assert_eq!(shown, &json!({"command": "echo asked"}), "{again}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!marker.exists(), "the refused edit ran");
}

/// An edit is shown as the call it is: a key typed twice is the last one's, as it runs (a
/// credential in the first is not shown), and "always allow" with an edit holding a credential
/// says no rule was saved.
#[tokio::test]
async fn an_edit_reads_as_the_call_it_is() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo one").await;
    let typed = r#"{"env": {"A_TOKEN": "dup-secret-7"}, "command": "true", "env": {"B": "1"}}"#;
    let (status, reply) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approve-command":
                {"action": "accept", "content": {"arguments": typed}}}}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    s.wait_status(&agent, &id, "completed").await;
    let (_, detail) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}")).await;
    assert!(!detail.to_string().contains("dup-secret-7"), "{detail}");

    let id = asking(&s, &agent, "echo two").await;
    let (status, decided) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve", "alwaysAllow": true,
               "arguments": {"command": "true --password=note-secret"}}),
    )
    .await;
    assert_eq!(status, 200, "{decided}");
    let note = decided["results"][0]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("the call as edited holds credentials"),
        "{decided}"
    );
}

/// M of N on a masked call: each person approves it only once they read it whole themselves
/// (another's reading does not count for them), and a reading holds from one round to the
/// next while the call is the same.
#[tokio::test]
async fn each_approver_of_a_masked_call_reads_it_whole_first() {
    let s = Server::start(&[]).await;
    s.write_policy(json!([
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo mofn*"}, "decision": "ask", "approval": {"humans": 2}}
    ]));
    let (alice, bob) = (s.human("alice").await, s.human("bob").await);
    let agent = s.token("agent");
    let marker = s.dir.join("ran-masked-mofn");
    let call = json!({"command": "echo mofn masked",
                      "env": {"API_TOKEN": format!("touch {}", marker.display())}});
    let id = s.call(&agent, "run_command", call.clone()).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let approve = json!({"items": [{"taskId": id}], "decision": "approve"});

    // bob reads it; alice, who has not, is refused until she reads it too.
    assert_eq!(s.read_whole(&bob, &id).await, call);
    let refused = decide_as(&s, &alice, approve.clone()).await;
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("alice has not read it whole"),
        "{refused}"
    );
    assert_eq!(s.read_whole(&alice, &id).await, call);
    assert_eq!(decide_as(&s, &alice, approve.clone()).await["ok"], true);
    s.wait_for(&s.admin, &id, "round 2", |t| {
        t["inputRequests"].get("approve-command#2").is_some()
    })
    .await;
    // The admin read nothing; bob read the same call in round 1, which still counts.
    let refused = decide(&s, approve.clone()).await.1;
    assert_eq!(refused["results"][0]["ok"], false, "{refused}");
    assert_eq!(decide_as(&s, &bob, approve).await["ok"], true);
    let (_, text) = result_text(&s, &agent, &id).await;
    assert!(text.contains("mofn masked"), "{text}");
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let readers: Vec<&Value> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "hiddenValuesShown")
        .map(|e| &e["data"]["by"])
        .collect();
    assert_eq!(readers, [&json!("bob"), &json!("alice")], "{detail}");
}

/// A command of several lines, asked and then edited: the result's first line still says how
/// it ended, and the edit note is one line, each command written as one `$'…'` word.
#[tokio::test]
async fn a_multi_line_command_is_named_on_one_line_in_its_result() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let id = asking(&s, &agent, "echo one\necho two").await;
    let edit = json!({"command": "echo three\nexit 2"});
    let (status, reply) = decide(
        &s,
        json!({"items": [{"taskId": id}], "decision": "approve", "arguments": edit}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let (result, text) = result_text(&s, &agent, &id).await;
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("`$'echo three\\nexit 2'` exited with code 2 after "),
        "{result}"
    );
    assert_eq!(
        lines[1],
        "A person edited this call before approving it: you asked for `$'echo one\\necho two'`; \
         `$'echo three\\nexit 2'` ran instead.",
        "{result}"
    );
    assert_eq!(lines[2], "three", "{result}");
}

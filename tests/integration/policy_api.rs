//! The approval policy through `/v1/policy` on the real binary: admin only, rules checked,
//! the old per-tool files migrated at start, and `run_command` deciding by the rules (a deny
//! refuses at once naming the rule, an allow runs without asking, a decline's reason reaches
//! the agent).

use serde_json::{Value, json};

use crate::harness::Server;

/// `PUT /v1/policy` with `body` as `token`; status and JSON.
async fn put(s: &Server, token: &str, body: Value) -> (reqwest::StatusCode, Value) {
    let resp = s
        .http
        .put(s.url("/v1/policy"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// `DELETE /v1/policy/rules/{id}` as `token`; the status.
async fn delete(s: &Server, token: &str, id: &str) -> u16 {
    s.http
        .delete(s.url(&format!("/v1/policy/rules/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// `run_command` `command` as `token`; its taskId.
async fn run(s: &Server, token: &str, command: &str) -> String {
    s.call(token, "run_command", json!({"command": command}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn the_admin_reads_replaces_and_revokes_rules_and_no_one_else_does() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let (status, body) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert_eq!((status.as_u16(), &body["rules"]), (200, &json!([])));
    let (status, body) = s.v1_get(Some(&agent), "/v1/policy").await;
    assert_eq!(status, 403, "{body}");
    let rules = json!({"rules": [
        {"principal": "agent", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "echo *"}, "decision": "allow", "note": "echo is fine"},
        {"id": "r-mine01", "principal": "*", "server": "fs", "tool": "write_*", "decision": "deny"}
    ]});
    assert_eq!(put(&s, &agent, rules.clone()).await.0, 403);
    assert_eq!(delete(&s, &agent, "r-mine01").await, 403);
    let (status, stored) = put(&s, &s.admin, rules).await;
    assert_eq!(status, 200, "{stored}");
    let first = stored["rules"][0]["id"].as_str().unwrap().to_string();
    assert!(first.starts_with("r-"), "an id is given: {stored}");
    assert_eq!(stored["rules"][1]["id"], "r-mine01");
    let (_, listed) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert_eq!(listed["rules"], stored["rules"]);
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(s.dir.join("cfg/policy.json")).unwrap())
            .unwrap();
    assert_eq!(on_disk["rules"], stored["rules"], "the file is the truth");

    // Bad rules: 400 naming the problem, and nothing changes.
    for bad in [
        json!({"rules": [{"principal": "*", "server": "*", "tool": "*", "decision": "maybe"}]}),
        json!({"rules": [{"principal": "", "server": "*", "tool": "*", "decision": "allow"}]}),
        json!({"rules": [{"principal": "*", "server": "*", "tool": "[", "decision": "allow"}]}),
        json!({"rules": [{"principal": "*", "server": "*", "tool": "*", "decision": "allow", "extra": 1}]}),
        json!({"rules": [{"id": "r-a1", "principal": "*", "server": "*", "tool": "*", "decision": "allow"},
                         {"id": "r-a1", "principal": "*", "server": "*", "tool": "*", "decision": "ask"}]}),
        json!({"rules": "all"}),
    ] {
        let (status, problem) = put(&s, &s.admin, bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {problem}");
        assert!(problem["detail"].as_str().is_some(), "{problem}");
    }
    assert_eq!(s.v1_get(Some(&s.admin), "/v1/policy").await.1, listed);

    assert_eq!(delete(&s, &s.admin, &first).await, 204);
    assert_eq!(delete(&s, &s.admin, &first).await, 404);
    let (_, after) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert_eq!(after["rules"].as_array().unwrap().len(), 1);
}

/// A change made to the version of the rules one read (`If-Match` with the `ETag`) is refused
/// with 412 once the file changed since, by any writer (another `PUT`, a hand edit), and
/// nothing is written; with the current version it is taken. A new rule gets `createdAtMs`.
#[tokio::test]
async fn a_change_to_an_old_version_of_the_rules_is_refused() {
    let s = Server::start(&[]).await;
    let read = || async {
        let resp = s
            .http
            .get(s.url("/v1/policy"))
            .bearer_auth(&s.admin)
            .send()
            .await
            .unwrap();
        let etag = resp.headers()["etag"].to_str().unwrap().to_string();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(etag, format!("\"{}\"", body["version"].as_str().unwrap()));
        (etag, body)
    };
    let put_if = |etag: String, rules: Value| {
        let s = &s;
        async move {
            let resp = s
                .http
                .put(s.url("/v1/policy"))
                .bearer_auth(&s.admin)
                .header("If-Match", etag)
                .json(&json!({ "rules": rules }))
                .send()
                .await
                .unwrap();
            let etag = resp
                .headers()
                .get("etag")
                .map(|v| v.to_str().unwrap().to_string());
            (
                resp.status().as_u16(),
                etag,
                resp.json::<Value>().await.unwrap(),
            )
        }
    };
    let deny = json!({"principal": "*", "server": "fs", "tool": "delete_*", "decision": "deny"});
    let allow = json!({"principal": "*", "server": "fs", "tool": "read_*", "decision": "allow"});
    let (first, _) = read().await;
    let (status, after, body) = put_if(first.clone(), json!([deny])).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["rules"][0]["createdAtMs"].as_i64().unwrap() > 0,
        "{body}"
    );
    assert_ne!(
        after.as_deref(),
        Some(first.as_str()),
        "a write makes a new version"
    );
    // An editor still holding the first version: refused, nothing written.
    let (status, _, problem) = put_if(first, json!([allow])).await;
    assert_eq!(status, 412, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("changed since it was read")
    );
    let (_, now) = read().await;
    assert_eq!(now["rules"].as_array().unwrap().len(), 1);
    assert_eq!(now["rules"][0]["tool"], "delete_*");
    // A hand edit is a change too.
    let (etag, _) = read().await;
    let file = s.dir.join("cfg/policy.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("delete_*", "remove_*")).unwrap();
    let (status, _, _) = put_if(etag, json!([allow])).await;
    assert_eq!(status, 412);
    // Made again to what the file holds now, and `*` or no If-Match: taken.
    let (etag, now) = read().await;
    let mut rules = now["rules"].as_array().unwrap().clone();
    rules.push(allow.clone());
    let (status, _, body) = put_if(etag, json!(rules)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["rules"].as_array().unwrap().len(), 2);
    // A list of tags matches when one of them is the current version.
    let (etag, _) = read().await;
    let listed = format!("\"zzz\", {etag}");
    assert_eq!(put_if(listed, body["rules"].clone()).await.0, 200);
    assert_eq!(put_if("*".into(), body["rules"].clone()).await.0, 200);
    assert_eq!(put(&s, &s.admin, json!({"rules": []})).await.0, 200);
}

#[tokio::test]
async fn a_malformed_file_is_reported_and_allows_nothing() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    std::fs::write(
        s.dir.join("cfg/policy.json"),
        r#"{"rules": [{"principal": "*", "server": "*", "tool": "*", "decision": "allow"}, {"oops": 1}]}"#,
    )
    .unwrap();
    let (_, body) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert_eq!(body["rules"], json!([]));
    assert!(
        body["problem"].as_str().unwrap().contains("policy.json"),
        "{body}"
    );
    let id = run(&s, &agent, "echo hi").await;
    let task = s.wait_status(&s.admin, &id, "input_required").await;
    // The question says why no rule decided: a deny rule of a broken file protects nothing.
    let reason =
        task["inputRequests"]["approve-command"]["params"]["_meta"]["taskdeck/approval"]["verdict"]
            ["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string();
    assert!(reason.contains("policy.json is not valid"), "{task}");
}

/// A typo in a file that held a deny rule does not lift it: the rules the file held when last
/// valid apply until it is fixed, and the agent is told why.
#[tokio::test]
async fn a_typo_keeps_the_deny_rules_the_file_held() {
    let (s, agent) = no_deploys_allowing("*").await;
    let id = run(&s, &agent, "echo read while valid").await;
    s.wait_status(&agent, &id, "completed").await;
    let path = s.dir.join("cfg/policy.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"deny\"", "\"deny\",,", 1)).unwrap();
    let (_, body) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    assert!(body["problem"].is_string(), "{body}");
    let text = denied(&s, &agent, "make deploy").await;
    assert!(text.contains("the rules it held when last valid"), "{text}");
}

/// A Taskdeck whose policy denies `make deploy*` to everyone and allows `agent` the commands
/// `allowed` matches; and `agent`'s token.
async fn no_deploys_allowing(allowed: &str) -> (Server, String) {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    s.write_policy(json!([
        {"id": "r-nodeploy", "principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": "make deploy*"}, "decision": "deny"},
        {"id": "r-echo", "principal": "agent", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": allowed}, "decision": "allow"}
    ]));
    (s, agent)
}

/// Runs `line` as `agent`, checks that rule r-nodeploy refused it, and returns the result's text.
async fn denied(s: &Server, agent: &str, line: &str) -> String {
    let id = run(s, agent, line).await;
    let v = s.wait_status(agent, &id, "completed").await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(v["result"]["_meta"]["io.taskdeck/refusal"], "denied", "{v}");
    let text = v["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("rule r-nodeploy"), "{text}");
    text
}

#[tokio::test]
async fn deny_refuses_allow_runs_and_a_declines_reason_reaches_the_agent() {
    let (s, agent) = no_deploys_allowing("echo *").await;
    denied(&s, &agent, "make deploy").await;

    let id = run(&s, &agent, "echo waved through").await;
    let v = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 0, "{v}");

    // Shell syntax behind an allowed prefix still asks; the human declines with a reason.
    let id = run(&s, &agent, "echo hi; rm -rf /tmp/nothing-here").await;
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    let schema = &waiting["inputRequests"]["approve-command"]["params"]["requestedSchema"];
    assert_eq!(
        schema["properties"]["reason"]["title"],
        "Reason, if you decline"
    );
    s.answer(
        &id,
        "approve-command",
        json!({"action": "decline", "content": {"reason": "no rm, please"}}),
    )
    .await;
    let v = s.wait_status(&agent, &id, "completed").await;
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with("Their reason: no rm, please"), "{text}");
    assert_eq!(
        v["result"]["_meta"]["io.taskdeck/refusal"], "declined",
        "{v}"
    );

    // "Always allow" writes a narrow rule, listed by /v1/policy.
    let id = run(&s, &agent, "true && true").await;
    s.wait_status(&s.admin, &id, "input_required").await;
    s.answer(
        &id,
        "approve-command",
        json!({"action": "accept", "content": {"alwaysAllow": true}}),
    )
    .await;
    s.wait_status(&agent, &id, "completed").await;
    let (_, listed) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    let written = listed["rules"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(written["arguments"]["command"], "true && true", "{written}");
    assert_eq!(
        (written["principal"].as_str(), written["decision"].as_str()),
        (Some("agent"), Some("allow"))
    );
    assert!(written["arguments"]["cwd"].is_string(), "{written}");
    let id = run(&s, &agent, "true && true").await;
    let v = s
        .wait_for(&s.admin, &id, "settled", |v| v["status"] != "working")
        .await;
    assert_eq!(v["status"], "completed", "no question the second time: {v}");
}

#[tokio::test]
async fn the_old_policy_files_are_migrated_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tmp.path().join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("command-policy.json"),
        json!({"allow": {"agent": ["echo migrated *"]}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        cfg.join("http-policy.json"),
        json!({"allowPrivate": {"agent": ["127.0.0.1:8080"]}}).to_string(),
    )
    .unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let agent = s.token("agent");
    assert!(cfg.join("command-policy.json.migrated").exists());
    assert!(cfg.join("http-policy.json.migrated").exists());
    assert!(!cfg.join("command-policy.json").exists());
    let (_, listed) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    let rules = listed["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 2, "{listed}");
    assert_eq!(rules[0]["tool"], "run_command");
    assert_eq!(rules[1]["tool"], "wait_for_http_job");
    assert_eq!(rules[1]["arguments"]["url"], "http*://127.0.0.1:8080/*");
    let id = run(&s, &agent, "echo migrated fine").await;
    let v = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 0, "{v}");
}

/// A rule no call can match, written into policy.json by hand, is read (it decides nothing),
/// and said: `GET /v1/policy` lists it under `neverMatching`, `doctor` reports it, and the
/// other rules can still be changed while it stays as it is.
#[tokio::test]
async fn a_hand_written_rule_that_never_matches_is_reported_and_does_not_block_changes() {
    let s = Server::start(&[]).await;
    std::fs::write(
        s.dir.join("cfg/policy.json"),
        json!({"rules": [{"id": "r-argv", "principal": "*", "server": "taskdeck",
            "tool": "run_command", "arguments": {"argv": "*deploy*"}, "decision": "deny"}]})
        .to_string(),
    )
    .unwrap();
    let (_, body) = s.v1_get(Some(&s.admin), "/v1/policy").await;
    let never = &body["neverMatching"];
    assert_eq!(
        (never[0]["rule"].as_str(), never[0]["position"].as_u64()),
        (Some("r-argv"), Some(1)),
        "{body}"
    );
    assert!(
        never[0]["why"].as_str().unwrap().contains("`command`"),
        "{body}"
    );
    // The Policies dialog sends the rules it read, plus one: taken.
    let mut rules = body["rules"].as_array().unwrap().clone();
    rules.push(json!({"principal": "*", "server": "fs", "tool": "write", "decision": "ask"}));
    let (status, stored) = put(&s, &s.admin, json!({"rules": rules})).await;
    assert_eq!(status, 200, "{stored}");
    assert_eq!(stored["rules"].as_array().unwrap().len(), 2);
    assert_eq!(stored["neverMatching"][0]["rule"], "r-argv", "{stored}");
    // A change to it must make it match something.
    let mut changed = stored["rules"].as_array().unwrap().clone();
    changed[0]["arguments"] = json!({"argv": "*prod*"});
    let (status, refused) = put(&s, &s.admin, json!({"rules": changed})).await;
    assert_eq!(status, 400, "{refused}");

    let policy = doctor_policy(&s);
    assert_eq!(policy["ok"], false, "{policy}");
    let detail = policy["detail"].as_str().unwrap();
    assert!(detail.contains("rule 1 (r-argv) never matches"), "{detail}");

    // Fixed by hand: doctor is satisfied.
    std::fs::write(
        s.dir.join("cfg/policy.json"),
        json!({"rules": [{"id": "r-cmd", "principal": "*", "server": "taskdeck",
            "tool": "run_command", "arguments": {"command": "*deploy*"}, "decision": "deny"}]})
        .to_string(),
    )
    .unwrap();
    let policy = doctor_policy(&s);
    assert_eq!(policy["ok"], true, "{policy}");
    assert!(
        policy["detail"]
            .as_str()
            .unwrap()
            .ends_with("valid: 1 rule"),
        "{policy}"
    );
}

/// `taskdeck doctor --json`'s `policy` finding for `s`'s dirs.
fn doctor_policy(s: &Server) -> Value {
    let doctor = std::process::Command::new(crate::harness::BIN)
        .args(["doctor", "--json", "--data-dir"])
        .arg(s.dir.join("data"))
        .arg("--config-dir")
        .arg(s.dir.join("cfg"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "policy")
        .unwrap_or_else(|| panic!("{report}"))
        .clone()
}

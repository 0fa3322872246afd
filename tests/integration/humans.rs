//! Human principals on the real binary: tokens with the role `human` (made by the admin with
//! `POST /v1/agents {role: "human"}` or `taskdeck token create --human`) see every principal's
//! tasks and answer human-only requests (a `run_command` approval), recorded under their
//! name, where an agent's answer is ignored; a rule asking for two humans takes two distinct
//! ones; they read but never change the policy and the servers, and make no tokens. A store from before tokens had roles keeps its tokens, as
//! agents.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{BIN, Server};

/// `POST /v1/agents` as the admin for `name` with `role`; the new token.
async fn make_token(s: &Server, name: &str, role: &str) -> String {
    let (status, made) = s
        .v1_post(
            Some(&s.admin),
            "/v1/agents",
            json!({"name": name, "role": role}),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["role"], role, "{made}");
    // Client configs are for an agent's token only: a person's in an agent's client would let
    // the agent answer the person's questions.
    let configs = made["configs"].as_array().unwrap();
    assert_eq!(configs.is_empty(), role == "human", "{made}");
    made["token"].as_str().unwrap().to_string()
}

/// `run_command` `command` as `token`; its taskId.
async fn run(s: &Server, token: &str, command: &str) -> String {
    s.call(token, "run_command", json!({"command": command}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The ids of the tasks `GET /v1/tasks` lists to `token`, newest first.
async fn task_ids(s: &Server, token: &str) -> Vec<String> {
    let (status, listed) = s.v1_get(Some(token), "/v1/tasks").await;
    assert_eq!(status, 200, "{listed}");
    let tasks = listed["tasks"].as_array().unwrap();
    tasks
        .iter()
        .map(|t| t["taskId"].as_str().unwrap().to_string())
        .collect()
}

/// The one outstanding input request's key of task `id`, as `token` sees it on `/v1`.
async fn waiting_key(s: &Server, token: &str, id: &str) -> String {
    let (status, detail) = s.v1_get(Some(token), &format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200, "{detail}");
    let requests = detail["task"]["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1, "{detail}");
    requests.keys().next().unwrap().clone()
}

/// `POST /v1/tasks/{id}/input` accepting `key` as `token`; the reply.
async fn approve(s: &Server, token: &str, id: &str, key: &str) -> Value {
    let (status, reply) = s
        .v1_post(
            Some(token),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {key: {"action": "accept", "content": {}}}}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    reply
}

/// A request with `method` to `path` as `token`; status, content type and JSON.
async fn send(
    s: &Server,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, String, Value) {
    let mut req = s.http.request(method, s.url(path)).bearer_auth(token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    let kind = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, kind, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_human_sees_every_task_and_its_approval_counts_where_an_agents_does_not() {
    let s = Server::start(&[]).await;
    let bot = s.token("bot");
    let other = s.token("other-bot");
    let alice = make_token(&s, "alice", "human").await;

    for (token, me) in [
        (
            &s.admin,
            json!({"principal": "admin", "role": "admin", "admin": true}),
        ),
        (
            &alice,
            json!({"principal": "alice", "role": "human", "admin": false}),
        ),
        (
            &bot,
            json!({"principal": "bot", "role": "agent", "admin": false}),
        ),
    ] {
        assert_eq!(s.v1_get(Some(token), "/v1/me").await.1, me);
    }

    let id = run(&s, &bot, "echo approved").await;
    // The human is shown the question over MCP too; the agent sees a working task.
    s.wait_status(&alice, &id, "input_required").await;
    assert_eq!(s.get(&bot, &id).await["status"], "working");
    let key = waiting_key(&s, &alice, &id).await;

    // Every principal's tasks for the human, its own for an agent.
    assert_eq!(task_ids(&s, &alice).await, [id.as_str()]);
    let (_, listed) = s.v1_get(Some(&alice), "/v1/tasks?principal=bot").await;
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 1, "{listed}");
    assert!(task_ids(&s, &other).await.is_empty());

    // The agent approving its own command is ignored; the request waits for a person.
    let reply = approve(&s, &bot, &id, &key).await;
    assert_eq!(
        (&reply["accepted"], &reply["ignored"]),
        (&json!([]), &json!([key]))
    );
    let (status, _) = s
        .v1_post(
            Some(&other),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {&key: {"action": "accept", "content": {}}}}),
        )
        .await;
    assert_eq!(status, 404, "another agent does not see the task");
    assert_eq!(waiting_key(&s, &s.admin, &id).await, key);

    // The human's answer counts, recorded under its name.
    let reply = approve(&s, &alice, &id, &key).await;
    assert_eq!(reply["accepted"], json!([key]), "{reply}");
    let done = s.wait_status(&bot, &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["exitCode"], 0, "{done}");
    let (_, detail) = s.v1_get(Some(&alice), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["inputRounds"][0]["answeredBy"], "alice", "{detail}");
    let answered: Vec<&Value> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "inputAnswered")
        .collect();
    assert_eq!(answered.len(), 1, "{detail}");
    assert_eq!(answered[0]["data"]["by"], "alice");

    // The human may cancel an agent's task.
    let id = run(&s, &bot, "echo never").await;
    s.wait_status(&alice, &id, "input_required").await;
    let (status, _) = s
        .v1_post(Some(&alice), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202);
    s.wait_status(&bot, &id, "cancelled").await;
}

#[tokio::test]
async fn a_human_reads_the_settings_but_administers_nothing() {
    let s = Server::start(&[]).await;
    let bot = s.token("bot");
    // The CLI makes a human too, and says so.
    let out = std::process::Command::new(BIN)
        .args([
            "token",
            "create",
            "carol",
            "--human",
            "--json",
            "--data-dir",
        ])
        .arg(s.dir.join("data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let made: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&made["name"], &made["role"]),
        (&json!("carol"), &json!("human"))
    );
    let carol = made["token"].as_str().unwrap().to_string();

    use reqwest::Method;
    let rules =
        json!({"rules": [{"principal": "*", "server": "*", "tool": "*", "decision": "allow"}]});
    let server = json!({"name": "fs", "command": "true"});
    for (method, path, body) in [
        (
            Method::POST,
            "/v1/agents",
            Some(json!({"name": "eve", "role": "human"})),
        ),
        (Method::GET, "/v1/agents", None),
        (Method::PUT, "/v1/policy", Some(rules)),
        (Method::DELETE, "/v1/policy/rules/r-0001", None),
        (Method::POST, "/v1/servers", Some(server)),
        (Method::DELETE, "/v1/servers/fs", None),
    ] {
        let (status, kind, problem) = send(&s, &carol, method.clone(), path, body).await;
        assert_eq!(status, 403, "{method} {path}: {problem}");
        assert_eq!(kind, "application/problem+json");
        assert!(
            problem["detail"]
                .as_str()
                .unwrap()
                .starts_with("only the admin "),
            "{problem}"
        );
    }
    // Reading is allowed to a person, not to an agent.
    for path in ["/v1/policy", "/v1/servers"] {
        assert_eq!(s.v1_get(Some(&carol), path).await.0, 200, "{path}");
        let (status, problem) = s.v1_get(Some(&bot), path).await;
        assert_eq!(status, 403, "{path}: {problem}");
    }
    // Nothing was made; there is no second admin.
    let (status, problem) = s
        .v1_post(
            Some(&s.admin),
            "/v1/agents",
            json!({"name": "root", "role": "admin"}),
        )
        .await;
    assert_eq!(status, 400, "{problem}");
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/agents").await;
    let roles: Vec<(&str, &str)> = list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [("admin", "admin"), ("bot", "agent"), ("carol", "human")]
    );
}

#[tokio::test]
async fn tokens_of_a_store_from_before_roles_stay_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let bot = s.token("bot");
    let mine = run(&s, &bot, "echo mine").await;
    let theirs = run(&s, &s.admin, "echo theirs").await;
    s.wait_status(&s.admin, &theirs, "input_required").await;
    s.kill().await;
    let _ = s.child.wait().await;
    // The tokens table as Taskdeck wrote it before tokens had roles.
    let db = rusqlite::Connection::open(tmp.path().join("data/taskdeck.sqlite3")).unwrap();
    db.execute_batch("ALTER TABLE tokens DROP COLUMN role")
        .unwrap();
    drop(db);

    let s = Server::start_in(tmp.path(), &[]).await;
    assert_eq!(s.v1_get(Some(&bot), "/v1/me").await.1["role"], "agent");
    assert_eq!(task_ids(&s, &bot).await, [mine.as_str()], "its own only");
    assert_eq!(s.v1_get(Some(&s.admin), "/v1/me").await.1["role"], "admin");
    let dave = make_token(&s, "dave", "human").await;
    assert_eq!(task_ids(&s, &dave).await.len(), 2);
    let out = std::process::Command::new(BIN)
        .args(["token", "list", "--data-dir"])
        .arg(tmp.path().join("data"))
        .output()
        .unwrap();
    let listing = String::from_utf8(out.stdout).unwrap();
    assert_eq!(listing.lines().next(), Some("NAME\tROLE\tCREATED\tSTATE"));
    let roles: Vec<(&str, &str)> = listing
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split('\t');
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    assert_eq!(
        roles,
        [("admin", "admin"), ("bot", "agent"), ("dave", "human")]
    );
}

/// `POST /v1/approvals/decide` approving task `id`'s open approval as `token`; the item's result.
async fn decide_approve(s: &Server, token: &str, id: &str) -> Value {
    let (status, reply) = s
        .v1_post(
            Some(token),
            "/v1/approvals/decide",
            json!({"items": [{"taskId": id}], "decision": "approve"}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    reply["results"][0].clone()
}

/// A Taskdeck whose policy asks two humans for `run_command` `command`, the agent `bot`, the
/// humans `alice` and `bob`, and the task `id` of bot's call.
struct TwoHumans {
    s: Server,
    bot: String,
    alice: String,
    bob: String,
    id: String,
}

async fn two_humans_asked(command: &str) -> TwoHumans {
    let s = Server::start(&[]).await;
    let bot = s.token("bot");
    let alice = make_token(&s, "alice", "human").await;
    let bob = make_token(&s, "bob", "human").await;
    s.write_policy(json!([
        {"principal": "*", "server": "taskdeck", "tool": "run_command",
         "arguments": {"command": command}, "decision": "ask", "approval": {"humans": 2}}
    ]));
    let id = run(&s, &bot, command).await;
    TwoHumans {
        s,
        bot,
        alice,
        bob,
        id,
    }
}

#[tokio::test]
async fn two_distinct_humans_approve_a_rule_that_asks_for_two() {
    let TwoHumans {
        s,
        bot,
        alice,
        bob,
        id,
    } = two_humans_asked("echo deploy-ok").await;
    s.wait_status(&alice, &id, "input_required").await;

    assert_eq!(decide_approve(&s, &alice, &id).await["ok"], true);
    // One of two: a further question waits, and the same human cannot be the second.
    let approved_by = |t: &Value| {
        let requests = t["inputRequests"].as_object().cloned().unwrap_or_default();
        let meta = |r: &Value| r["params"]["_meta"]["taskdeck/approval"].clone();
        requests
            .values()
            .map(meta)
            .find(|m| m["approvedBy"] != json!([]))
    };
    let waiting = s
        .wait_for(&alice, &id, "the second question", |t| {
            approved_by(t).is_some()
        })
        .await;
    let meta = approved_by(&waiting).unwrap();
    assert_eq!(
        (&meta["required"], &meta["approvedBy"]),
        (&json!(2), &json!(["alice"]))
    );
    let (_, inbox) = s.v1_get(Some(&bob), "/v1/approvals").await;
    assert_eq!(
        inbox["approvals"][0]["approvedBy"],
        json!(["alice"]),
        "{inbox}"
    );
    // An agent's approval is refused; the same human's second one does not count: the call
    // still waits for a second human.
    assert_eq!(decide_approve(&s, &bot, &id).await["ok"], false);
    let again = decide_approve(&s, &alice, &id).await;
    assert_eq!(again["ok"], false, "{again}");
    assert!(
        again["error"].as_str().unwrap().contains("another human"),
        "{again}"
    );
    let waiting = s
        .wait_for(&alice, &id, "a question again", |t| {
            approved_by(t).is_some()
        })
        .await;
    assert_eq!(
        approved_by(&waiting).unwrap()["approvedBy"],
        json!(["alice"])
    );

    assert_eq!(decide_approve(&s, &bob, &id).await["ok"], true);
    let done = s.wait_status(&bot, &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["exitCode"], 0, "{done}");
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let by: Vec<&str> = detail["inputRounds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["answeredBy"].as_str())
        .collect();
    assert_eq!(by.last(), Some(&"bob"), "{detail}");
    assert!(by[..by.len() - 1].iter().all(|h| *h == "alice"), "{detail}");
}

/// `POST /v1/tasks/{id}/input` accepting question `key` of task `id` as `token`.
async fn accept_input(s: &Server, token: &str, id: &str, key: String) -> (u16, Value) {
    let (status, reply) = s
        .v1_post(
            Some(token),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {key: {"action": "accept"}}}),
        )
        .await;
    (status.as_u16(), reply)
}

/// `POST /v1/tasks/{id}/input` (what `taskdeck tasks answer` sends) counts a human once too:
/// the same person's second approval is not recorded (it would use up the key the second
/// human answers) and the reply says why; the second human's then runs the call.
#[tokio::test]
async fn a_repeat_approval_through_input_is_not_recorded() {
    let TwoHumans {
        s,
        bot,
        alice,
        bob,
        id,
    } = two_humans_asked("echo twice-ok").await;
    let first = s.wait_status(&alice, &id, "input_required").await;
    let key = |t: &Value| {
        t["inputRequests"]
            .as_object()
            .and_then(|r| r.keys().next().cloned())
            .unwrap()
    };
    let (status, reply) = accept_input(&s, &alice, &id, key(&first)).await;
    assert_eq!(
        (status, &reply["accepted"]),
        (200, &json!([key(&first)])),
        "{reply}"
    );
    let second = s
        .wait_for(&alice, &id, "the second question", |t| {
            t["inputRequests"].as_object().is_some_and(|r| {
                r.values().any(|q| {
                    q["params"]["_meta"]["taskdeck/approval"]["approvedBy"] == json!(["alice"])
                })
            })
        })
        .await;
    let second_key = key(&second);
    let (status, reply) = accept_input(&s, &alice, &id, second_key.clone()).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["accepted"], json!([]), "{reply}");
    assert_eq!(reply["ignored"], json!([second_key]), "{reply}");
    assert_eq!(
        reply["notes"][&second_key],
        "alice approved this call already; another human must approve it",
        "{reply}"
    );
    // The same question still waits, for bob.
    let (_, now) = s.v1_get(Some(&alice), &format!("/v1/tasks/{id}")).await;
    assert_eq!(key(&now["task"]), second_key, "{now}");
    let (status, reply) = accept_input(&s, &bob, &id, second_key.clone()).await;
    assert_eq!(
        (status, &reply["accepted"]),
        (200, &json!([second_key])),
        "{reply}"
    );
    let done = s.wait_status(&bot, &id, "completed").await;
    assert_eq!(done["result"]["structuredContent"]["exitCode"], 0, "{done}");
}

//! Long-running work: the HTTP jobs API (202 + Location + Retry-After), external jobs and their
//! heartbeats, `run_command` with approval and process-group cancellation, and `taskdeck run`.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::harness::{BIN, Server, in_script, stop_cleanly};

async fn post_job(s: &Server, token: &str, body: Value) -> reqwest::Response {
    s.http
        .post(s.url("/v1/jobs"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Registers an external job (`{"external": external}`); asserts the 202 and returns its taskId.
async fn start_external(s: &Server, token: &str, external: Value) -> String {
    let r = post_job(s, token, json!({ "external": external })).await;
    assert_eq!(r.status(), 202);
    r.json::<Value>().await.unwrap()["taskId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The taskId of the external job titled `title`, once it exists (15 s at most).
async fn job_titled(s: &Server, title: &str) -> String {
    let start = Instant::now();
    loop {
        let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
        if let Some(t) = list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["title"] == title)
        {
            return t["taskId"].as_str().unwrap().to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "no job {title:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_job(s: &Server, token: &str, id: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let v: Value = s
            .http
            .get(s.url(&format!("/v1/jobs/{id}")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if pred(&v) {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "timed out: {v}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

#[tokio::test]
async fn jobs_api_speaks_202_location_retry_after() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let r = post_job(
        &s,
        &t,
        json!({"tool": "slow_compute", "arguments": {"seconds": 0.5, "label": "job"}}),
    )
    .await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(r.headers()["retry-after"], "1");
    let task: Value = r.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/jobs/{}", task["taskId"].as_str().unwrap())
    );
    let r = s
        .http
        .get(s.url(&location))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers().get("retry-after").is_some(),
        "Retry-After while not terminal"
    );
    let id = task["taskId"].as_str().unwrap();
    let done = wait_job(&s, &t, id, |v| v["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Computed job in 0.5s");
    let r = s
        .http
        .get(s.url(&location))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap();
    assert!(
        r.headers().get("retry-after").is_none(),
        "no Retry-After once terminal"
    );

    // Cancel by DELETE and by POST .../cancel: 202.
    for how in ["delete", "post"] {
        let r = post_job(
            &s,
            &t,
            json!({"tool": "slow_compute", "arguments": {"seconds": 60}}),
        )
        .await;
        let id = r.json::<Value>().await.unwrap()["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        let r = if how == "delete" {
            s.http
                .delete(s.url(&format!("/v1/jobs/{id}")))
                .bearer_auth(&t)
                .send()
                .await
                .unwrap()
        } else {
            s.http
                .post(s.url(&format!("/v1/jobs/{id}/cancel")))
                .bearer_auth(&t)
                .send()
                .await
                .unwrap()
        };
        assert_eq!(r.status(), 202);
        wait_job(&s, &t, &id, |v| v["status"] == "cancelled").await;
        // Again, once it has ended: nothing to cancel, so 200, not "accepted".
        let again = s
            .http
            .post(s.url(&format!("/v1/jobs/{id}/cancel")))
            .bearer_auth(&t)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 200);
        let (status, _) = s
            .v1_post(Some(&t), &format!("/v1/tasks/{id}/cancel"), json!({}))
            .await;
        assert_eq!(status, 200);
    }

    // Errors: problem+json with exact statuses.
    let other = s.token("other");
    for (token, path) in [
        (&t, "/v1/jobs/nope".to_string()),
        (&other, location.clone()),
    ] {
        let r = s
            .http
            .get(s.url(&path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(r.headers()["content-type"], "application/problem+json");
        let r = s
            .http
            .delete(s.url(&path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
    let r = post_job(&s, &t, json!({"tool": "no_such_tool"})).await;
    assert_eq!(r.status(), 422);
    let r = post_job(
        &s,
        &t,
        json!({"tool": "slow_compute", "arguments": {"seconds": "x"}}),
    )
    .await;
    assert_eq!(r.status(), 422);
    let r = post_job(
        &s,
        &t,
        json!({"tool": "slow_compute", "external": {"name": "both"}}),
    )
    .await;
    assert_eq!(r.status(), 400);
    let r = s
        .http
        .post(s.url("/v1/jobs"))
        .bearer_auth(&t)
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // An array is not taken item by item for the job's members.
    let r = post_job(&s, &t, json!([1])).await;
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert!(
        v["detail"]
            .as_str()
            .unwrap()
            .ends_with("it is a JSON array; send a JSON object"),
        "{v}"
    );
}

#[tokio::test]
async fn external_jobs_report_and_time_out() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let id = start_external(
        &s,
        &t,
        json!({"name": "nightly export", "heartbeatMs": 1000}),
    )
    .await;
    // An external job's log is empty until its runner reports output.
    let (status, log) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(log["exists"], false, "{log}");
    assert_eq!(log["text"], "", "{log}");
    let report = |body: Value| send_report(&s, &t, &id, body);
    let (status, v) =
        report(json!({"progress": {"current": 3, "total": 10, "message": "3 of 10 tables"}})).await;
    assert_eq!(status, 200);
    assert_eq!(
        v["task"]["progress"],
        json!({"current": 3, "total": 10, "message": "3 of 10 tables"}),
        "whole numbers stay integers"
    );
    assert_eq!(v["cancelRequested"], false);
    let (status, _) = report(
        json!({"result": {"content": [{"type": "text", "text": "exported"}], "isError": false}}),
    )
    .await;
    assert_eq!(status, 202);
    let done = wait_job(&s, &t, &id, |v| v["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "exported");
    assert_eq!(
        report(json!({})).await.0,
        409,
        "a settled job takes no reports"
    );

    // A runner that stops reporting is lost.
    let lost = start_external(&s, &t, json!({"name": "flaky", "heartbeatMs": 1000})).await;
    let v = wait_job(&s, &t, &lost, |v| v["status"] == "failed").await;
    assert_eq!(v["error"]["data"]["reason"], "runner lost");
    assert!(v["statusMessage"].as_str().unwrap().contains("Runner lost"));
    // A report's `heartbeatMs` holds from then on: a runner that asked for a second is lost a
    // second after its last report, however long its start's heartbeat.
    let shortened = start_external(&s, &t, json!({"name": "patient", "heartbeatMs": 600000})).await;
    let (status, v) = s
        .v1_post(
            Some(&t),
            &format!("/v1/jobs/{shortened}/report"),
            // As JSON Schema's integer counts it: 1000.0 too.
            json!({"heartbeatMs": 1000.0}),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let v = wait_job(&s, &t, &shortened, |v| v["status"] == "failed").await;
    assert!(
        v["statusMessage"].as_str().unwrap().contains("for 1000 ms"),
        "{v}"
    );

    // External jobs are not MCP tools.
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "external", "arguments": {"name": "x"}}),
            true,
        )
        .await;
    assert_eq!(r.error_code(), -32602);
}

#[tokio::test]
async fn external_jobs_ask_the_human_and_read_the_answers_from_report_replies() {
    let s = Server::start(&[]).await;
    let runner = s.token("deploy-bot");
    // A job's ttlMs is the server's: one asked for is refused, not ignored.
    let r = post_job(&s, &runner, json!({"external": {"name": "x", "ttlMs": 5}})).await;
    assert_eq!(r.status(), 400);
    let problem: Value = r.json().await.unwrap();
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("--default-ttl-ms"),
        "{problem}"
    );
    let id = start_external(&s, &runner, json!({"name": "deploy", "heartbeatMs": 5000})).await;
    let report = |body: Value| send_report(&s, &runner, &id, body);
    let question = json!({"method": "elicitation/create", "params": {
        "message": "Deploy build 42 to production?",
        "requestedSchema": {"type": "object", "properties": {"window": {"type": "string", "enum": ["now", "tonight"]}}, "required": ["window"]}
    }});

    // Malformed requests are refused and change nothing.
    let (status, v) = report(
        json!({"inputRequests": {"go": {"method": "sampling/createMessage", "params": {}}}}),
    )
    .await;
    assert_eq!(status, 400, "{v}");
    let (status, _) = report(json!({"inputRequests": {"go": {"method": "elicitation/create", "params": {"message": "x", "requestedSchema": {"type": "object", "properties": {"n": {"type": "object"}}}}}}})).await;
    assert_eq!(status, 400, "nested objects are not a form");
    // A runner's question cannot pose as Taskdeck's approval of a gateway call in the inbox.
    let (status, v) = report(json!({"inputRequests": {"approve": {"method": "elicitation/create", "params": {"message": "x",
        "_meta": {"taskdeck/approval": {"server": "fs", "tool": "read_file", "principal": "alice", "arguments": {}, "digest": "d"}}}}}})).await;
    assert_eq!(status, 400, "{v}");
    assert!(
        v["detail"].as_str().unwrap().contains("taskdeck/approval"),
        "{v}"
    );
    let (_, approvals) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert_eq!(approvals["approvals"], json!([]), "{approvals}");
    // A result an agent could not read as a CallToolResult ends nothing.
    for result in [
        json!({"content": [{"type": "bogus"}], "isError": "yes"}),
        json!({"content": "not an array"}),
        json!({"content": [{"type": "text", "text": "x", "extra": 1}]}),
        json!({"content": [], "structuredContent": 5}),
    ] {
        let (status, v) = report(json!({ "result": result })).await;
        assert_eq!(status, 400, "{result}: {v}");
        assert!(
            v["detail"].as_str().unwrap().contains("CallToolResult"),
            "{v}"
        );
    }
    // An image or audio block's data that is not base64 would make the TypeScript SDK refuse
    // the whole result (it decodes `data` with `atob`): refused, saying where.
    for data in ["not base64!", "aGVsb", "YQ==="] {
        let result = json!({"content": [{"type": "text", "text": "chart"},
            {"type": "image", "data": data, "mimeType": "image/png"}]});
        let (status, v) = report(json!({ "result": result })).await;
        assert_eq!(status, 400, "{result}: {v}");
        let detail = v["detail"].as_str().unwrap();
        assert!(
            detail.contains("result/content/1/data") && detail.contains("base64"),
            "{v}"
        );
    }
    // A refused block of a megabyte is not quoted whole in the answer.
    let big = "QUFB".repeat(256 * 1024);
    let result =
        json!({"content": [{"type": "image", "data": big, "mimeType": "image/png", "extra": 1}]});
    let (status, v) = report(json!({ "result": result })).await;
    assert_eq!(status, 400);
    assert!(v.to_string().len() < 2048, "{} bytes", v.to_string().len());
    // Progress that cannot be: less than nothing done, more done than the total, no total.
    for (progress, code) in [
        (json!({"current": -5, "total": 10}), 400),
        (json!({"current": 50, "total": 10}), 422),
        (json!({"current": 3, "total": 0}), 400),
    ] {
        let (status, v) = report(json!({ "progress": progress, "statusMessage": "x" })).await;
        assert_eq!(status, code, "{progress}: {v}");
        assert!(v["detail"].as_str().unwrap().contains("progress."), "{v}");
    }
    // A heartbeat a job could not have at its start either.
    for ms in [999, 86_400_001_u64] {
        let (status, v) = report(json!({ "heartbeatMs": ms, "statusMessage": "x" })).await;
        assert_eq!(status, 400, "{ms}: {v}");
        assert!(v["detail"].as_str().unwrap().contains("heartbeatMs"), "{v}");
    }
    let (_, job) = s.v1_get(Some(&runner), &format!("/v1/jobs/{id}")).await;
    assert_eq!(job["status"], "working", "{job}");
    assert!(job["progress"].is_null(), "{job}");
    assert_ne!(
        job["statusMessage"], "x",
        "nothing of a refused report applied"
    );

    let (status, v) = report(json!({"inputRequests": {"go": question}})).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["task"]["status"], "input_required");
    assert_eq!(v["task"]["inputRequests"]["go"], question);
    assert_eq!(v["inputResponses"], json!({}));
    // Asking again is harmless; reusing the key for another question is a conflict.
    assert_eq!(
        report(json!({"inputRequests": {"go": question}})).await.0,
        200
    );
    let mut other = question.clone();
    other["params"]["message"] = json!("Something else?");
    let (status, v) = report(json!({"inputRequests": {"go": other}})).await;
    assert_eq!(status, 409, "{v}");

    // The runner cannot answer its own question: only the human can. Its answer is ignored.
    let (status, v) = s
        .v1_post(
            Some(&runner),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"go": {"action": "accept", "content": {"window": "now"}}}}),
        )
        .await;
    assert_eq!(
        (status.as_u16(), &v["ignored"]),
        (200, &json!(["go"])),
        "{v}"
    );
    assert_eq!(v["task"]["status"], "input_required");
    // The human answers (validated against the form); the runner sees it in its next reply.
    let (status, v) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"go": {"action": "accept", "content": {"window": "soon"}}}}),
        )
        .await;
    assert_eq!(status, 422, "not one of the enum values: {v}");
    let (status, _) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"go": {"action": "accept", "content": {"window": "tonight"}}}}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, v) = report(json!({"statusMessage": "deploying"})).await;
    assert_eq!(status, 200);
    assert_eq!(v["task"]["status"], "working");
    assert_eq!(
        v["inputResponses"]["go"],
        json!({"action": "accept", "content": {"window": "tonight"}})
    );
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["inputRounds"][0]["answeredBy"], "admin");
    // The answered key asked again: the same question gets its answer again; another question
    // under it is refused and asks no one, so the old answer cannot pass for its answer.
    let (status, v) = report(json!({"inputRequests": {"go": question}})).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["inputResponses"]["go"]["content"]["window"], "tonight");
    let mut bigger = question.clone();
    bigger["params"]["message"] = json!("Deploy to PRODUCTION and drop the old database?");
    let (status, v) = report(json!({"inputRequests": {"go": bigger}})).await;
    assert_eq!(status, 409, "{v}");
    assert!(
        v["detail"]
            .as_str()
            .unwrap()
            .contains("\"go\" was already used"),
        "{v}"
    );
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["task"]["status"], "working", "{detail}");
    assert!(!detail.to_string().contains("PRODUCTION"), "{detail}");
    let (status, _) =
        report(json!({"result": {"content": [{"type": "text", "text": "deployed tonight"}]}}))
            .await;
    assert_eq!(status, 202);
    wait_job(&s, &runner, &id, |v| v["status"] == "completed").await;
}

#[tokio::test]
async fn a_command_running_when_taskdeck_dies_is_stopped_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let admin = s.admin.clone();
    let pids = tmp.path().join("pids");
    let script = format!(
        "echo started; sleep 300 & echo $! >> {p}; (sleep 300; true) & echo $! >> {p}; echo $$ >> {p}; wait",
        p = pids.display()
    );
    let id = approved_command(&s, &admin, &script).await;
    let all = wait_for_pids(&pids, 3).await;
    s.kill().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        all.iter().all(|p| pid_alive(*p)),
        "SIGKILL of Taskdeck leaves the command running"
    );

    let mut s = Server::start_in(tmp.path(), &[]).await;
    let v = s.wait_status(&admin, &id, "failed").await;
    assert_eq!(v["error"]["data"]["reason"], "restart");
    let gone = |all: &[i32], what: &str| {
        let (all, what) = (all.to_vec(), what.to_string());
        async move {
            let start = Instant::now();
            while all.iter().any(|p| pid_alive(*p)) {
                assert!(start.elapsed() < Duration::from_secs(5), "{what}: {all:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    gone(
        &all,
        "processes of the interrupted command survive the restart",
    )
    .await;

    // A normal stop (SIGTERM) stops running commands at once, too.
    std::fs::remove_file(&pids).unwrap();
    approved_command(&s, &admin, &script).await;
    let all = wait_for_pids(&pids, 3).await;
    let pid = s.child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.child.wait()).await;
    gone(&all, "processes of a running command survive a normal stop").await;

    // Cancelled, and Taskdeck is killed while the command ignores SIGTERM (inside the grace
    // period): the next start stops the command before it records the task as cancelled.
    let mut s = Server::start_in(tmp.path(), &[]).await;
    std::fs::remove_file(&pids).unwrap();
    let stubborn = format!(
        "trap '' TERM; echo $$ >> {p}; while true; do sleep 0.2; done",
        p = pids.display()
    );
    let id = approved_command(&s, &admin, &stubborn).await;
    let all = wait_for_pids(&pids, 1).await;
    s.rpc(Some(&admin), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .result();
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.kill().await;
    assert!(
        all.iter().all(|p| pid_alive(*p)),
        "the command ignores SIGTERM"
    );
    let s = Server::start_in(tmp.path(), &[]).await;
    s.wait_status(&admin, &id, "cancelled").await;
    gone(&all, "a cancelled command survives the restart").await;
}

/// Calls `run_command {command}` as `token` and approves it as the human; returns the taskId.
pub(crate) async fn approved_command(s: &Server, token: &str, command: &str) -> String {
    let id = s
        .call(token, "run_command", json!({"command": command}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    // A masked call is read whole before it is approved, as a person must.
    if waiting["inputRequests"]["approve-command"]["params"]["_meta"]["taskdeck/approval"]["hiddenValues"]
        == true
    {
        assert_eq!(s.read_whole(&s.admin, &id).await["command"], command);
    }
    let (status, _) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approve-command": {"action": "accept"}}}),
        )
        .await;
    assert_eq!(status, 200);
    id
}

/// A command that ignores SIGTERM and writes on through the grace before its SIGKILL: its
/// status message follows its output meanwhile, as it did while it ran.
#[tokio::test]
async fn a_command_being_stopped_still_shows_its_latest_line() {
    let s = Server::start(&[]).await;
    let admin = s.admin.clone();
    let id = approved_command(
        &s,
        &admin,
        "trap '' TERM; i=0; while true; do i=$((i+1)); echo line $i; sleep 0.2; done",
    )
    .await;
    let at = |t: &Value| {
        t["statusMessage"]
            .as_str()
            .and_then(|m| m.strip_prefix("line "))
            .and_then(|n| n.parse::<u32>().ok())
    };
    let running = s
        .wait_for(&admin, &id, "a few lines", |t| at(t) >= Some(3))
        .await;
    s.v1_post(Some(&admin), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    let first = at(&running).unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (_, stopping) = s.v1_get(Some(&admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(stopping["task"]["status"], "working", "{stopping}");
    assert!(at(&stopping["task"]) >= Some(first + 6), "{stopping}");
    s.wait_status(&admin, &id, "cancelled").await;
}

/// Waits (10 s at most) until the command under test wrote `n` pids to `path`, one a line.
async fn wait_for_pids(path: &std::path::Path, n: usize) -> Vec<i32> {
    let start = Instant::now();
    while std::fs::read_to_string(path).map_or(0, |s| s.lines().count()) < n {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "command did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// POSTs an external job's report; returns the status and the JSON answer.
async fn send_report(s: &Server, token: &str, id: &str, body: Value) -> (u16, Value) {
    let r = s
        .http
        .post(s.url(&format!("/v1/jobs/{id}/report")))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json::<Value>().await.unwrap_or(Value::Null))
}

fn pid_alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

#[tokio::test]
async fn run_command_asks_first_and_stops_whole_process_groups() {
    let s = Server::start(&[]).await;
    let agent = s.token("claude-code");
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let call = |args: Value| {
        let (s, agent) = (&s, agent.clone());
        async move {
            s.call(&agent, "run_command", args).await["taskId"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let answer = |id: String, response: Value| {
        let s = &s;
        async move {
            s.wait_status(&s.admin, &id, "input_required").await;
            s.answer(&id, "approve-command", response).await;
        }
    };

    // Declined: completed with isError, and the command never started.
    let id = call(json!({"argv": ["touch", marker.to_str().unwrap()]})).await;
    let waiting = s.wait_status(&s.admin, &id, "input_required").await;
    let question = waiting["inputRequests"]["approve-command"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(
        question.contains(&format!("touch {}", marker.display())),
        "the exact command is shown: {question}"
    );
    // A relative directory is shown resolved, as the absolute directory it will run in.
    let rel = call(json!({"command": "true", "cwd": "."})).await;
    let asked = s.wait_status(&s.admin, &rel, "input_required").await;
    let text = asked["inputRequests"]["approve-command"]["params"]["message"]
        .as_str()
        .unwrap();
    let here = std::env::current_dir().unwrap().canonicalize().unwrap();
    assert!(
        text.contains(&format!("wants to run in {}:", here.display())),
        "{text}"
    );
    s.rpc(Some(&s.admin), "tasks/cancel", json!({"taskId": rel}), true)
        .await
        .result();
    // The agent never sees the approval: its task reads `working`, waiting for the human.
    let seen = s.get(&agent, &id).await;
    assert_eq!(seen["status"], "working", "{seen}");
    assert!(seen.get("inputRequests").is_none(), "{seen}");
    assert!(
        seen["statusMessage"]
            .as_str()
            .unwrap()
            .starts_with("Waiting for approval in Taskdeck: "),
        "{seen}"
    );
    // The agent cannot approve its own command: its answer is acknowledged and ignored (never
    // an error the agent would take for a failed call), and the request waits for the human.
    let own = s
        .rpc(
            Some(&agent),
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"approve-command": {"action": "accept"}}}),
            true,
        )
        .await;
    assert_eq!(own.result()["resultType"], "complete");
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(detail["task"]["status"], "input_required");
    assert!(!marker.exists(), "the agent's own answer ran nothing");
    // task_status tells the agent to wait for the human, not to answer.
    let status = s.call(&agent, "task_status", json!({"taskId": id})).await;
    let texts: Vec<&str> = status["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("you cannot answer this yourself"))
            && !texts.iter().any(|t| t.contains("task_respond")),
        "{texts:?}"
    );
    // Before it starts, the command's log is empty and absent: no error for a reader.
    let (status, log) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(
        (&log["exists"], &log["size"], &log["text"], &log["complete"]),
        (&json!(false), &json!(0), &json!(""), &json!(false)),
        "{log}"
    );
    answer(id.clone(), json!({"action": "decline"})).await;
    let v = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(v["result"]["isError"], true);
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("declined")
    );
    assert!(!marker.exists());
    // It never ran: the log stays absent, and is complete now that the task has ended.
    let (status, log) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 200, "{log}");
    assert_eq!(
        (&log["exists"], &log["complete"]),
        (&json!(false), &json!(true)),
        "{log}"
    );

    // Approved with "always allow": runs; progress and status come from the output.
    let script = "for i in 1 2 3 4; do echo \"step $i/4\"; sleep 0.2; done; printf '\\377\\376 not utf8\\n'; exit 3";
    let id = call(json!({"command": script})).await;
    answer(
        id.clone(),
        json!({"action": "accept", "content": {"alwaysAllow": true}}),
    )
    .await;
    let v = s
        .wait_for(&agent, &id, "progress", |v| {
            v["status"] == "completed"
                || v["statusMessage"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("step"))
        })
        .await;
    let _ = v;
    let v = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(
        v["result"]["isError"], true,
        "a non-zero exit is a completed task with isError"
    );
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 3);
    let tail = v["result"]["structuredContent"]["tail"].as_str().unwrap();
    assert!(
        tail.contains("step 4/4") && tail.contains("\u{fffd}\u{fffd} not utf8"),
        "{tail}"
    );
    // The whole output is in the task's log, readable in byte ranges by its owner only.
    let (status, log) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 200, "{log}");
    let text = log["text"].as_str().unwrap();
    assert!(
        text.starts_with("step 1/4\nstep 2/4\n") && text.contains("not utf8"),
        "{text}"
    );
    assert_eq!(log["complete"], true);
    assert_eq!(log["exists"], true);
    assert_eq!(log["nextOffset"], log["size"]);
    let (_, part) = s
        .v1_get(
            Some(&agent),
            &format!("/v1/tasks/{id}/log?offset=9&limit=10"),
        )
        .await;
    assert_eq!(part["text"], "step 2/4\n", "a cut chunk ends at a line end");
    assert_eq!(
        (part["nextOffset"].as_u64(), part["complete"].as_bool()),
        (Some(18), Some(false))
    );
    let (_, tail) = s
        .v1_get(Some(&agent), &format!("/v1/tasks/{id}/log?tail=20"))
        .await;
    assert!(
        tail["text"].as_str().unwrap().ends_with("not utf8\n"),
        "{tail}"
    );
    // Output and tasks can hold secrets: only the user can read the log and the store.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: std::path::PathBuf| std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(s.dir.join(format!("data/logs/{id}.log"))), 0o600);
    assert_eq!(mode(s.dir.join("data/logs")), 0o700);
    assert_eq!(mode(s.dir.join("data/taskdeck.sqlite3")), 0o600);
    assert_eq!(mode(s.dir.join("data/taskdeck.sqlite3-wal")), 0o600);
    let other = s.token("other-agent");
    let (status, _) = s.v1_get(Some(&other), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 404, "another principal's log is not found");
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert!(
        detail["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "progress"),
        "progress parsed from 'step i/4'"
    );

    // The same command again is allowed by the saved policy: no question.
    let id = call(json!({"command": script})).await;
    let v = s
        .wait_for(&s.admin, &id, "terminal", |v| {
            v["status"] == "completed" || v["status"] == "input_required"
        })
        .await;
    assert_eq!(v["status"], "completed");
    // ... but only in the directory it was approved in.
    let id = call(json!({"command": script, "cwd": dir.path()})).await;
    s.wait_status(&s.admin, &id, "input_required").await;
    answer(id.clone(), json!({"action": "decline"})).await;
    s.wait_status(&agent, &id, "completed").await;
    // A command killed by a signal has no exit code: the signal's name says what ended it.
    let id = call(json!({"command": "kill -TERM $$"})).await;
    answer(id.clone(), json!({"action": "accept", "content": {}})).await;
    let v = s.wait_status(&agent, &id, "completed").await;
    let fields = &v["result"]["structuredContent"];
    assert_eq!(
        (
            &fields["exitCode"],
            &fields["signal"],
            &v["result"]["isError"]
        ),
        (&Value::Null, &json!("SIGTERM"), &json!(true)),
        "{v}"
    );
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("was killed by signal 15 (SIGTERM)"),
        "{v}"
    );
    // A working directory that does not exist is named as such (and nothing is asked).
    let id = call(json!({"command": "true", "cwd": "/nonexistent-taskdeck-dir"})).await;
    let v = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(v["result"]["isError"], true);
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("working directory /nonexistent-taskdeck-dir does not exist"),
        "{text}"
    );

    // The policy never waves through shell syntax or extra environment behind an allowed prefix.
    s.write_policy(
        json!([{"principal": "claude-code", "server": "taskdeck", "tool": "run_command",
        "arguments": {"command": "echo hi *"}, "decision": "allow"}]),
    );
    let id = call(json!({"command": "echo hi there"})).await;
    assert_eq!(
        s.wait_for(&s.admin, &id, "settled", |v| v["status"] != "working")
            .await["status"],
        "completed"
    );
    for sneaky in [
        json!({"command": format!("echo hi x; touch {}", marker.display())}),
        json!({"argv": ["echo", "hi", "x"], "env": {"PATH": "/tmp"}}),
    ] {
        let id = call(sneaky).await;
        let v = s
            .wait_for(&s.admin, &id, "question", |v| v["status"] != "working")
            .await;
        assert_eq!(v["status"], "input_required", "must ask: {v}");
        s.rpc(Some(&s.admin), "tasks/cancel", json!({"taskId": id}), true)
            .await
            .result();
    }
    assert!(!marker.exists());

    // Cancel: a command that ignores SIGTERM and spawns children, one of which leaves the
    // process group (setsid); nothing survives.
    std::fs::write(dir.path().join("command-policy.json"), "{}").unwrap();
    let pids = dir.path().join("pids");
    let stubborn = format!(
        "trap '' TERM; (trap '' TERM; sleep 300) & echo $! >> {p}; sleep 300 & echo $! >> {p}; setsid sleep 301 & echo $! >> {p}; echo $$ >> {p}; while true; do sleep 1; done",
        p = pids.display()
    );
    let id = call(json!({"command": stubborn})).await;
    answer(id.clone(), json!({"action": "accept"})).await;
    let all = wait_for_pids(&pids, 4).await;
    s.rpc(Some(&agent), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .result();
    s.wait_status(&agent, &id, "cancelled").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    for pid in all {
        assert!(!pid_alive(pid), "process {pid} survived the cancel");
    }

    // Several megabytes of output: bounded in memory (tail) and on disk (log file cap).
    let id =
        call(json!({"command": "yes 'a line of output that repeats' | head -c 6000000"})).await;
    answer(id.clone(), json!({"action": "accept"})).await;
    let v = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(
        v["result"]["structuredContent"]["tail"]
            .as_str()
            .unwrap()
            .lines()
            .count(),
        40
    );
    let log = v["result"]["structuredContent"]["log"].as_str().unwrap();
    assert!(std::fs::metadata(log).unwrap().len() >= 5_000_000);

    // Timeout: stopped and failed with a clear message.
    let id = call(json!({"argv": ["sleep", "30"], "timeoutMs": 300})).await;
    answer(id.clone(), json!({"action": "accept"})).await;
    let v = s.wait_status(&agent, &id, "failed").await;
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out after 300 ms")
    );
}

/// A progress bar an agent's command redraws with `\r` shows as it moves: each drawing becomes
/// the status (with its `3/5`), and the log gets it at once, before the `\r` that ends it; the
/// result's tail keeps the bar's last drawing only, not every frame.
#[tokio::test]
async fn run_command_shows_a_progress_bar_redrawn_with_cr_as_it_moves() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    s.write_policy(
        json!([{"principal": "*", "server": "taskdeck", "tool": "run_command",
                           "decision": "allow"}]),
    );
    let script = "echo fetching; for i in 1 2 3 4 5 6; do printf '\\r[%d/6] crate-%d' $i $i; \
                  sleep 0.4; done; printf '\\ndone\\n'";
    let id = s
        .call(&agent, "run_command", json!({"command": script}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let moving = s
        .wait_for(&agent, &id, "a drawing of the bar while it runs", |v| {
            assert_ne!(
                v["status"], "completed",
                "no drawing showed while it ran: {v}"
            );
            v["statusMessage"]
                .as_str()
                .is_some_and(|m| m.starts_with("[3/6]") || m.starts_with("[4/6]"))
        })
        .await;
    let (_, log) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}/log")).await;
    let text = log["text"].as_str().unwrap();
    assert!(
        text.starts_with("fetching\n\r[1/6] crate-1\r"),
        "{text:?} ({moving})"
    );
    // The log has the drawing the status shows (or a later one), not only the one before it.
    let frame = |t: &str| t.get(1..2).and_then(|n| n.parse::<u32>().ok());
    let shown = frame(moving["statusMessage"].as_str().unwrap()).unwrap();
    let last = text.rsplit('\r').next().unwrap();
    assert!(
        frame(last).is_some_and(|n| n >= shown),
        "the log's latest drawing {last:?} is behind the status {shown}: {text:?}"
    );
    let done = s.wait_status(&agent, &id, "completed").await;
    let tail = done["result"]["structuredContent"]["tail"]
        .as_str()
        .unwrap();
    assert_eq!(tail, "fetching\n[6/6] crate-6\ndone", "{done}");
}

/// An agent whose command a person cancels reads who stopped it, and the command stops.
#[tokio::test]
async fn an_agent_reads_who_cancelled_its_command() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let alice = s.human("alice").await;
    s.write_policy(
        json!([{"principal": "*", "server": "taskdeck", "tool": "run_command",
                           "decision": "allow"}]),
    );
    let id = s
        .call(
            &agent,
            "run_command",
            json!({"command": "echo started; sleep 60"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_for(&agent, &id, "the command to run", |v| {
        v["statusMessage"] == "started"
    })
    .await;
    let (code, _) = s
        .v1_post(Some(&alice), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    assert_eq!(code, 202);
    let done = s.wait_status(&agent, &id, "cancelled").await;
    assert_eq!(done["statusMessage"], "Cancelled by alice", "{done}");
}

#[tokio::test]
async fn taskdeck_run_gives_the_command_a_terminal_when_it_runs_in_one() {
    // `script` (util-linux) runs `taskdeck run` with a terminal on its standard output.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("this test needs `script` (util-linux / bsdutils)");
    }
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("build.sh");
    std::fs::write(
        &script,
        "if [ -t 1 ]; then echo on-a-terminal; else echo on-a-pipe; fi\n\
         for i in 1 2 3 4 5 6; do printf '\\rBuilding %d/6' $i; sleep 0.4; done\n\
         printf '\\n'; echo finished\n",
    )
    .unwrap();
    let line = format!(
        "{BIN} run --port {} --token {t} --name bar -- sh {}",
        s.port,
        script.display()
    );
    let out = in_script(&line).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("on-a-terminal"),
        "the command sees a terminal: {stdout}"
    );
    assert!(
        stdout.contains("\rBuilding 3/6\rBuilding 4/6"),
        "redraws pass through untouched: {stdout:?}"
    );
    // Each newline is turned into "\r\n" once, by the outer terminal alone.
    assert!(
        stdout.contains("finished\r\n") && !stdout.contains("\r\r\n"),
        "{stdout:?}"
    );
    let (_, list) = s.v1_get(Some(&t), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    let v = wait_job(&s, &t, &id, |v| v["status"] == "completed").await;
    assert_eq!(
        v["result"]["structuredContent"]["tail"],
        "on-a-terminal\nBuilding 6/6\nfinished"
    );
    // The command gets the terminal as its stdout and stderr, and no other descriptor of it:
    // neither side of the pseudo-terminal leaks to it beyond those.
    let fds = dir.path().join("fds.sh");
    std::fs::write(
        &fds,
        "for f in /proc/$$/fd/*; do echo \"fd ${f##*/} $(readlink $f)\"; done\n",
    )
    .unwrap();
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh {}",
        s.port,
        fds.display()
    );
    let out = in_script(&line).output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let to_terminals: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("/dev/pts/") || l.contains("ptmx"))
        .collect();
    assert!(
        to_terminals.iter().any(|l| l.starts_with("fd 1 ")),
        "{stdout}"
    );
    assert!(
        to_terminals.iter().all(|l| {
            let fd = l.split_whitespace().nth(1).unwrap_or("");
            ["0", "1", "2"].contains(&fd)
        }),
        "terminal descriptors beyond stdin, stdout and stderr: {stdout}"
    );
    // Each of the command's streams is on the terminal where ours is: with our stdout
    // redirected its stderr is still a terminal, and with our stderr redirected it goes there.
    let out_file = dir.path().join("out.txt");
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh -c 'if [ -t 2 ]; then echo err-tty >&2; else echo err-pipe >&2; fi; if [ -t 1 ]; then echo out-tty; else echo out-pipe; fi' > {}",
        s.port,
        out_file.display()
    );
    let out = in_script(&line).output().await.unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("err-tty"), "{shown:?}");
    assert_eq!(
        std::fs::read_to_string(&out_file).unwrap(),
        "out-pipe\n",
        "{shown:?}"
    );
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh -c 'echo visible; echo hidden >&2; if [ -t 2 ]; then echo err-tty; else echo err-pipe; fi' 2>/dev/null",
        s.port
    );
    let out = in_script(&line).output().await.unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("visible") && shown.contains("err-pipe") && !shown.contains("hidden"),
        "{shown:?}"
    );
    // A background child that keeps the terminal open does not hold `taskdeck run` back.
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh -c 'sleep 20 & echo started-bg; exit 0'",
        s.port
    );
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(15), in_script(&line).output())
        .await
        .expect("taskdeck run returned")
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("started-bg"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?} for the background child",
        started.elapsed()
    );
    // The command reads the terminal as it would alone (it is not a stopped background job).
    let ask = dir.path().join("ask.sh");
    std::fs::write(&ask, "printf 'name? '; read name; echo \"hello-$name\"\n").unwrap();
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh {}",
        s.port,
        ask.display()
    );
    // `line` run in a terminal whose keyboard is the returned stdin.
    let in_terminal = |line: &str| {
        let mut script = in_script(line)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = script.stdin.take().unwrap();
        (script, stdin)
    };
    let (script, mut stdin) = in_terminal(&line);
    use tokio::io::AsyncWriteExt;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stdin.write_all(b"ada\n").await.unwrap();
    let out = tokio::time::timeout(Duration::from_secs(10), script.wait_with_output())
        .await
        .expect("a command reading the terminal must not hang")
        .unwrap();
    drop(stdin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("hello-ada"), "{stdout:?}");

    // A command that handles Ctrl-C itself goes on, as it would alone.
    let go_on = dir.path().join("go-on");
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh -c 'trap \"echo got-int\" INT; while [ ! -e {} ]; do sleep 0.1; done; echo went-on'",
        s.port,
        go_on.display()
    );
    let (script, mut stdin) = in_terminal(&line);
    tokio::time::sleep(Duration::from_millis(700)).await;
    stdin.write_all(b"\x03").await.unwrap();
    // Longer than any grace `taskdeck run` could give it before stopping it.
    tokio::time::sleep(Duration::from_millis(6000)).await;
    std::fs::write(&go_on, "").unwrap();
    let out = tokio::time::timeout(Duration::from_secs(10), script.wait_with_output())
        .await
        .expect("the command ends on its own")
        .unwrap();
    drop(stdin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("got-int") && stdout.contains("went-on"),
        "{stdout:?}"
    );
    assert!(out.status.success(), "{:?}: {stdout:?}", out.status);

    // Ctrl-C in the terminal ends the command and what it started, even in a session of its own.
    let pids = dir.path().join("ctrl-c-pids");
    let line = format!(
        "{BIN} run --port {} --token {t} -- sh -c 'setsid sleep 401 & echo $! > {}; sleep 402'",
        s.port,
        pids.display()
    );
    let (script, mut stdin) = in_terminal(&line);
    let all = wait_for_pids(&pids, 1).await;
    // Ctrl-C once the shell waits for `sleep 402`: a shell run with -c defers a SIGINT that
    // comes between two commands (it would also hang alone).
    for _ in 0..100 {
        let found = std::process::Command::new("pgrep")
            .args(["-f", "^sleep 402$"])
            .output()
            .unwrap();
        if found.status.success() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stdin.write_all(b"\x03").await.unwrap();
    let out = tokio::time::timeout(Duration::from_secs(15), script.wait_with_output())
        .await
        .expect("Ctrl-C ends taskdeck run")
        .unwrap();
    drop(stdin);
    assert!(!out.status.success());
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!pid_alive(all[0]), "the setsid child survived Ctrl-C");

    let (_, detail) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}")).await;
    let live: Vec<&Value> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "progress")
        .collect();
    assert!(
        live.iter()
            .any(|e| e["data"]["total"] == 6.0 && e["data"]["current"].as_f64() < Some(6.0)),
        "a \\r redraw's progress shows while the command runs: {live:?}"
    );
}

/// Taskdeck paused (SIGSTOP) for longer than a job's heartbeat while its runner keeps
/// reporting: the job is not lost, since the reports of that time wait in their connections;
/// a runner that then goes silent still is.
#[tokio::test]
async fn a_pause_of_taskdeck_longer_than_the_heartbeat_does_not_lose_a_reporting_runner() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let id = start_external(
        &s,
        &t,
        json!({"name": "outlives a pause", "heartbeatMs": 2000}),
    )
    .await;
    let url = s.url(&format!("/v1/jobs/{id}/report"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runner = {
        let (http, t, stop) = (s.http.clone(), t.clone(), stop.clone());
        tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                i += 1;
                let _ = http
                    .post(&url)
                    .bearer_auth(&t)
                    .timeout(Duration::from_secs(30))
                    .json(&json!({"statusMessage": format!("report {i}")}))
                    .send()
                    .await;
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    let pid = s.child.id().unwrap().to_string();
    let signal = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
    };
    signal("-STOP");
    tokio::time::sleep(Duration::from_secs(4)).await;
    signal("-CONT");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let v = wait_job(&s, &t, &id, |_| true).await;
    assert_eq!(v["status"], "working", "{v}");
    // Silent from now on: lost after its heartbeat, as ever.
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    runner.await.unwrap();
    let v = wait_job(&s, &t, &id, |v| v["status"] != "working").await;
    assert_eq!(v["error"]["data"]["reason"], "runner lost", "{v}");
}

/// Through pipes, the command's output reaches ours byte for byte: a last line without a
/// newline stays without one, and binary data is not changed; the job still gets its lines.
#[tokio::test]
async fn taskdeck_run_passes_piped_output_through_unchanged() {
    let s = Server::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    // A PNG's magic number, then bytes with NULs.
    let data: Vec<u8> = b"\x89PNG\r\n\x1a\n"
        .iter()
        .copied()
        .chain((0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8))
        .collect();
    let blob = dir.path().join("blob.bin");
    std::fs::write(&blob, &data).unwrap();
    let run = |script: String| {
        let port = s.port.to_string();
        let token = s.admin.clone();
        async move {
            tokio::process::Command::new(BIN)
                .args(["run", "--port", &port, "--token", &token, "--", "sh", "-c"])
                .arg(script)
                .output()
                .await
                .unwrap()
        }
    };
    let out = run(format!("echo start; cat {}", blob.display())).await;
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), data.len() + 6);
    assert!(out.stdout[6..] == data, "the bytes were changed");
    // Binary output is not read as lines: no garbled status, tail or progress.
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] == "completed").await;
    assert_eq!(
        v["result"]["structuredContent"]["tail"], "start\n(binary output)",
        "{v}"
    );
    assert!(v["progress"].is_null(), "{v}");
    // Of two outputs, the lines read last end the tail, however many the other's last read
    // had to cut.
    let out = run("seq 1 3000; echo done-err >&2; exit 7".into()).await;
    assert_eq!(out.status.code(), Some(7));
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] == "completed").await;
    let tail = v["result"]["structuredContent"]["tail"].as_str().unwrap();
    assert!(tail.ends_with("3000\ndone-err"), "{tail}");
    let out = run("printf 'first\\nno-newline'; printf 'err-no-newline' >&2".into()).await;
    assert!(out.status.success());
    assert_eq!(out.stdout, b"first\nno-newline");
    assert!(
        out.stderr.ends_with(b"err-no-newline"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] == "completed").await;
    let tail = v["result"]["structuredContent"]["tail"].as_str().unwrap();
    assert!(
        tail.contains("first") && tail.contains("no-newline"),
        "{tail}"
    );
    // A progress bar redrawn with `\r` shows live through pipes too.
    let end = dir.path().join("end-now");
    let mut bar = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", "bar", "--", "sh", "-c"])
        .arg(format!(
            "printf 'Building 1/8\\r'; printf 'Building 3/8\\r'; for i in $(seq 300); do [ -e {} ] && break; sleep 0.1; done; echo built",
            end.display()
        ))
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let id = job_titled(&s, "bar").await;
    let v = wait_job(&s, &s.admin, &id, |v| v["progress"]["current"] == 3).await;
    assert_eq!(v["progress"]["total"], 8, "{v}");
    assert_eq!(v["statusMessage"], "Building 3/8", "{v}");
    std::fs::write(&end, "").unwrap();
    assert!(bar.wait().await.unwrap().success());
    // A prompt the command waits at shows as its status once it has stood a moment, though no
    // newline ended it: on stderr while stdout goes on (two pipes), and the same prompt asked
    // twice on stdout.
    let (first, second, third) = (
        dir.path().join("first"),
        dir.path().join("second"),
        dir.path().join("third"),
    );
    let wait_for = |f: &std::path::Path| {
        format!(
            "for i in $(seq 300); do [ -e {} ] && break; sleep 0.1; done",
            f.display()
        )
    };
    let mut asks = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", "asks", "--", "sh", "-c"])
        .arg(format!(
            "echo starting; printf 'Continue? [y/N] ' >&2; echo busy; {}; echo y >&2; printf 'Again? [y/N] '; {}; echo y; printf 'Again? [y/N] '; {}",
            wait_for(&first),
            wait_for(&second),
            wait_for(&third)
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let id = job_titled(&s, "asks").await;
    let asking = |v: &Value| {
        v["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("Continue?"))
    };
    let v = wait_job(&s, &s.admin, &id, asking).await;
    assert_eq!(v["status"], "working", "{v}");
    std::fs::write(&first, "").unwrap();
    let again = |v: &Value| v["statusMessage"] == "Again? [y/N]";
    wait_job(&s, &s.admin, &id, again).await;
    std::fs::write(&second, "").unwrap();
    wait_job(&s, &s.admin, &id, |v| {
        v["statusMessage"] == "Again? [y/N] y"
    })
    .await;
    wait_job(&s, &s.admin, &id, again).await;
    std::fs::write(&third, "").unwrap();
    assert!(asks.wait().await.unwrap().success());
}

#[tokio::test]
async fn taskdeck_run_wraps_a_command() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let port = s.port.to_string();
    let out = tokio::process::Command::new(BIN)
        .args([
            "run",
            "--port",
            &port,
            "--token",
            &t,
            "--name",
            "build",
            "--",
            "sh",
            "-c",
            "echo 25%; echo half 2/4; echo to-stderr >&2; exit 7",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "exits with the command's code");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("25%") && stdout.contains("half 2/4"),
        "output streams as usual: {stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("to-stderr"));
    let (_, list) = s.v1_get(Some(&t), "/v1/tasks?tool=external").await;
    let job = &list["tasks"][0];
    assert_eq!(job["arguments"]["name"], "build");
    let id = job["taskId"].as_str().unwrap();
    let v = wait_job(&s, &t, id, |v| v["status"] == "completed").await;
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 7);
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("build exited with code 7 after "),
        "{v}"
    );

    // A command that does not exist: reported, and 127 as a shell would.
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &port, "--token", &t, "--"])
        .arg("no-such-command-taskdeck")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    // Without `--`, the command starts at the first word that is not one of run's options,
    // and its own options (`-c`, even `--name`) are its own.
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &port, "--token", &t, "--name", "bare"])
        .args(["sh", "-c", "echo \"$@\"; exit 3", "sh", "--name", "x"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "--name x\n");
    job_titled(&s, "bare").await;
    // A misspelt option of run's is a usage error, not a command to run.
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &port, "--token", &t, "--nmae", "x", "echo"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // Cancel pressed in Taskdeck stops the command (and what it started).
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "run",
            "--port",
            &port,
            "--token",
            &t,
            "--",
            "sh",
            "-c",
            "sleep 300 & sleep 300",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let id = loop {
        let (_, list) = s
            .v1_get(Some(&t), "/v1/tasks?tool=external&status=working")
            .await;
        if let Some(id) = list["tasks"][0]["taskId"].as_str() {
            break id.to_string();
        }
        assert!(start.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let (status, _) = s
        .v1_post(Some(&t), &format!("/v1/jobs/{id}/cancel"), json!({}))
        .await;
    assert_eq!(status, 202);
    let code = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("taskdeck run stopped")
        .unwrap();
    assert_eq!(code.code(), Some(128 + 15), "the command was terminated");
    wait_job(&s, &t, &id, |v| v["status"] == "cancelled").await;

    // `taskdeck run` itself terminated (kill, a closed terminal): its command goes with it.
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script = format!(
        "sleep 300 & echo $! >> {p}; setsid sleep 301 & echo $! >> {p}; echo $$ >> {p}; wait",
        p = pids.display()
    );
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "run", "--port", &port, "--token", &t, "--", "sh", "-c", &script,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let all = wait_for_pids(&pids, 3).await;
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    let code = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("taskdeck run stopped")
        .unwrap();
    assert_eq!(code.code(), Some(128 + 15), "as a process ended by SIGTERM");
    tokio::time::sleep(Duration::from_millis(100)).await;
    for pid in all {
        assert!(
            !pid_alive(pid),
            "process {pid} outlived its terminated `taskdeck run`"
        );
    }
    let (_, list) = s
        .v1_get(Some(&t), "/v1/tasks?tool=external&status=cancelled")
        .await;
    // Each says how it was stopped: in Taskdeck, or by a signal to `taskdeck run`.
    let mut said: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["statusMessage"].as_str().unwrap())
        .collect();
    said.sort();
    assert_eq!(
        said,
        [
            "Cancelled by admin",
            "Stopped: `taskdeck run` was terminated (SIGTERM)"
        ],
        "{list}"
    );

    // Taskdeck not running: the command runs anyway and says so.
    let out = tokio::process::Command::new(BIN)
        .args([
            "run",
            "--port",
            "1",
            "--token",
            "x",
            "--",
            "sh",
            "-c",
            "echo alone; exit 0",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("alone"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not running"));
}

/// `taskdeck ARGS` told only the data and config dirs under `dir` (no port, no token in its
/// environment: it finds Taskdeck through the data dir), stopped when dropped.
fn on_data_dir(dir: &std::path::Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg("--config-dir")
        .arg(dir.join("cfg"))
        .env_remove("TASKDECK_PORT")
        .env_remove("TASKDECK_TOKEN")
        .kill_on_drop(true);
    cmd
}

#[tokio::test]
async fn taskdeck_run_wait_finds_a_taskdeck_that_starts_later_on_its_data_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let child = on_data_dir(tmp.path(), &["run", "--wait"])
        .args(["--", "sh", "-c", "echo waited-run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // First start on that data dir: a free port (not 4747) and a new admin token.
    let s = Server::start_in(tmp.path(), &[]).await;
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("taskdeck run --wait found Taskdeck")
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tracking as job"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("waited-run"));
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    wait_job(&s, &s.admin, &id, |v| v["status"] == "completed").await;
}

/// Taskdeck restarted on another port while `taskdeck run`'s command runs: the runner's next
/// reports find it through the data dir, so the job keeps its heartbeat and live status, and
/// ends with the command's exit code.
#[tokio::test]
async fn taskdeck_run_reports_to_a_taskdeck_restarted_on_another_port() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let end = tmp.path().join("end-now");
    let mut run = on_data_dir(tmp.path(), &["run", "--name", "outlives a restart"])
        .args(["--", "sh", "-c"])
        .arg(format!(
            "i=0; while [ ! -e {} ]; do i=$((i+1)); echo \"line $i\"; sleep 0.2; done; exit 4",
            end.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let line_number = |v: &Value| {
        v["statusMessage"]
            .as_str()
            .and_then(|m| m.strip_prefix("line "))
            .and_then(|n| n.parse::<u32>().ok())
    };
    let (_, list) = loop {
        let got = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
        if got.1["tasks"][0]["taskId"].is_string() {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    wait_job(&s, &s.admin, &id, |v| line_number(v).is_some()).await;
    // Stopped, and its port taken at once by an unrelated Taskdeck (another data dir, another
    // admin token), then started again (on another port, the old one being taken).
    let old_port = s.port;
    stop_cleanly(&mut s).await;
    let other = tempfile::tempdir().unwrap();
    let mut unrelated = tokio::process::Command::new(BIN)
        .args(["serve", "--port", &old_port.to_string(), "--data-dir"])
        .arg(other.path().join("data"))
        .arg("--config-dir")
        .arg(other.path().join("cfg"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut said = tokio::io::BufReader::new(unrelated.stdout.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = said.next_line().await.unwrap() {
            if line.contains("running headless") {
                return;
            }
        }
        panic!("the unrelated Taskdeck did not start");
    })
    .await
    .expect("the unrelated Taskdeck started");
    let s = Server::start_in(tmp.path(), &[]).await;
    assert_ne!(s.port, old_port);
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] == "working").await;
    let at_restart = line_number(&v).unwrap_or(0);
    // Reports reach the new Taskdeck: the live line moves on (the runner reports each second).
    let v = wait_job(&s, &s.admin, &id, |v| {
        line_number(v).is_some_and(|n| n > at_restart + 5)
    })
    .await;
    assert_eq!(v["status"], "working", "{v}");
    std::fs::write(&end, "").unwrap();
    let status = tokio::time::timeout(Duration::from_secs(15), run.wait())
        .await
        .expect("taskdeck run ended")
        .unwrap();
    assert_eq!(status.code(), Some(4));
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert_eq!(v["status"], "completed", "{v}");
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 4, "{v}");
}

/// `taskdeck run -- CMD | head`: only the command feels the closed pipe, as it would alone; its
/// stderr goes on, and the job ends with its exit code.
#[tokio::test]
async fn taskdeck_run_leaves_a_closed_stdout_to_the_command() {
    let s = Server::start(&[]).await;
    let line = format!(
        "{BIN} run --port {} --token {} --name piped -- sh -c 'seq 1 200000; echo after-seq=$? >&2; exit 6' | head -1",
        s.port, s.admin
    );
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new("bash")
            .args(["-c", &format!("{line}; echo \"status=${{PIPESTATUS[0]}}\"")])
            .output(),
    )
    .await
    .expect("the pipeline ended")
    .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(stdout.starts_with("1\n"), "{stdout}");
    assert!(stdout.contains("status=6"), "{stdout} {stderr}");
    // The command's `seq` got SIGPIPE (128 + 13), as it would alone.
    assert!(stderr.contains("after-seq=141"), "{stderr}");
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let id = list["tasks"][0]["taskId"].as_str().unwrap().to_string();
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 6, "{v}");

    // Both streams into the pipe that closed (`2>&1 | head`): a cancel from Taskdeck still
    // stops the command, though `taskdeck run` has nowhere left to say so.
    let line = format!(
        "{BIN} run --port {} --token {} --name both-piped -- sh -c 'seq 1 200000; sleep 60' 2>&1 | head -1",
        s.port, s.admin
    );
    let pipeline = tokio::process::Command::new("bash")
        .args(["-c", &format!("{line}; echo \"status=${{PIPESTATUS[0]}}\"")])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let id = job_titled(&s, "both-piped").await;
    let (status, _) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    assert!(status.is_success(), "{status}");
    let out = tokio::time::timeout(Duration::from_secs(20), pipeline.wait_with_output())
        .await
        .expect("the cancel stopped the command")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("status=101"),
        "taskdeck run panicked: {stdout}"
    );
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert_eq!(v["status"], "cancelled", "{v}");
}

/// A consumer of `taskdeck run`'s output that stops reading (`| less` left on a page) holds up
/// the command, as it would alone, but not the job: the status goes on, a cancel from Taskdeck
/// stops the command at once, and a command that ended has its end recorded while its last
/// lines are still on their way to the consumer, who then gets every byte.
#[tokio::test]
async fn taskdeck_run_goes_on_while_its_reader_does_not_read() {
    let s = Server::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let out_file = dir.path().join("out");
    let line = format!(
        "{BIN} run --port {} --token {} --name stalled -- sh -c 'echo $$ > {}; seq 1 300000; sleep 60' 2>&1 | (sleep 9; cat > {})",
        s.port,
        s.admin,
        pid_file.display(),
        out_file.display()
    );
    let pipeline = tokio::process::Command::new("bash")
        .args(["-c", &line])
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let id = job_titled(&s, "stalled").await;
    let started = Instant::now();
    let pid: i32 = wait_for_pids(&pid_file, 1).await[0];
    // The reports go on while the consumer sleeps: the status is the latest line read (or
    // the part of it read, where the reader waits for room).
    let v = wait_job(&s, &s.admin, &id, |v| {
        v["statusMessage"]
            .as_str()
            .is_some_and(|m| m.parse::<u64>().is_ok())
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "no report while the consumer slept"
    );
    assert_eq!(v["status"], "working", "{v}");
    let (status, _) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    assert!(status.is_success(), "{status}");
    let asked = Instant::now();
    while pid_alive(pid) {
        assert!(
            asked.elapsed() < Duration::from_secs(4),
            "the cancel did not stop the command while its reader slept"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert_eq!(v["status"], "cancelled", "{v}");
    tokio::time::timeout(Duration::from_secs(20), pipeline.wait_with_output())
        .await
        .expect("the pipeline ended")
        .unwrap();
    // `taskdeck run`'s own words went with the output, behind what waited for the consumer.
    let out = std::fs::read_to_string(&out_file).unwrap();
    assert!(
        out.contains("\n1\n2\n3\n"),
        "{}",
        &out[..300.min(out.len())]
    );
    // On a line of its own: no line of the output was cut by it.
    assert!(
        out.lines()
            .all(|l| l.parse::<u64>().is_ok() || l.starts_with("taskdeck run: ")),
        "a line was cut"
    );
    assert!(
        out.contains("\ntaskdeck run: cancelled from Taskdeck; stopping the command\n"),
        "{}",
        &out[out.len().saturating_sub(500)..]
    );

    // A command that ends while its consumer sleeps, leaving output in its pipe (more than
    // the consumer's pipe and what waits for it hold): the job's end comes first, with its
    // last line, and the consumer gets all of the output after.
    let out_file = dir.path().join("out2");
    let line = format!(
        "{BIN} run --port {} --token {} --name ended-early -- sh -c 'seq 1 30000; printf last-line' | (sleep 5; cat > {})",
        s.port,
        s.admin,
        out_file.display()
    );
    let mut pipeline = tokio::process::Command::new("bash")
        .args(["-c", &line])
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let id = job_titled(&s, "ended-early").await;
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert!(
        pipeline.try_wait().unwrap().is_none(),
        "the end was recorded only once the consumer had read it all"
    );
    assert_eq!(v["status"], "completed", "{v}");
    let tail = v["result"]["structuredContent"]["tail"].as_str().unwrap();
    assert!(tail.ends_with("30000\nlast-line"), "{tail}");
    let ended = tokio::time::timeout(Duration::from_secs(20), pipeline.wait())
        .await
        .expect("the pipeline ended")
        .unwrap();
    assert!(ended.success());
    let mut expected: String = (1..=30000).map(|i| format!("{i}\n")).collect();
    expected.push_str("last-line");
    assert!(
        std::fs::read_to_string(&out_file).unwrap() == expected,
        "the consumer did not get the output as written"
    );
}

/// A command in a process group of its own that dies of SIGINT sent it itself (no Ctrl-C, no
/// cancel): its job completes, killed by that signal, with its output's tail.
#[tokio::test]
async fn taskdeck_run_counts_a_command_s_own_sigint_as_its_end_not_a_cancel() {
    let s = Server::start(&[]).await;
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", "self-interrupted", "--", "sh", "-c"])
        .arg("echo before; kill -INT $$")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(130));
    let id = job_titled(&s, "self-interrupted").await;
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert_eq!(v["status"], "completed", "{v}");
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(v["result"]["structuredContent"]["tail"], "before", "{v}");
}

/// A message that comes after the command's output ended inside a line (`printf done` on
/// stderr) is said at once, on a line of its own: here, that Taskdeck cannot record the end
/// yet, while `taskdeck run` keeps sending it.
#[tokio::test]
async fn taskdeck_run_says_at_once_what_it_waits_for_after_an_unfinished_line() {
    let mut s = Server::start(&[]).await;
    let mut runner = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", "unfinished", "--", "sh", "-c"])
        .arg("printf done >&2; sleep 2")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    job_titled(&s, "unfinished").await;
    s.child.kill().await.unwrap();
    let mut stderr = runner.stderr.take().unwrap();
    let mut said = Vec::new();
    let found = tokio::time::timeout(Duration::from_secs(15), async {
        use tokio::io::AsyncReadExt;
        let mut buf = [0u8; 4096];
        loop {
            let n = stderr.read(&mut buf).await.unwrap();
            assert!(n > 0, "stderr closed: {}", String::from_utf8_lossy(&said));
            said.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&said).contains("cannot record the job's end yet") {
                break;
            }
        }
    })
    .await;
    let said = String::from_utf8_lossy(&said);
    assert!(found.is_ok(), "not said while sending: {said}");
    assert!(said.contains("done\ntaskdeck run: "), "{said}");
    assert!(runner.try_wait().unwrap().is_none(), "it gave up: {said}");
}

/// A cancel Taskdeck took without its runner (the runner was stopped past the cancel's grace)
/// still stops the command once the runner hears of it: the job says cancelled, so the command
/// does not keep running.
#[tokio::test]
async fn taskdeck_run_stops_a_command_taskdeck_cancelled_without_it() {
    let s = Server::start(&["--cancel-grace-ms", "500"]).await;
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let runner = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", "cancelled-meanwhile", "--", "sh", "-c"])
        .arg(format!("echo $$ > {}; sleep 60", pid_file.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let id = job_titled(&s, "cancelled-meanwhile").await;
    let pid = wait_for_pids(&pid_file, 1).await[0];
    let runner_pid = runner.id().unwrap().to_string();
    let signal = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &runner_pid])
            .status()
            .unwrap()
    };
    signal("-STOP");
    let (status, _) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    assert!(status.is_success(), "{status}");
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    signal("-CONT");
    assert_eq!(v["status"], "cancelled", "{v}");
    let woke = Instant::now();
    while pid_alive(pid) {
        assert!(
            woke.elapsed() < Duration::from_secs(5),
            "the command kept running after its job was cancelled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = tokio::time::timeout(Duration::from_secs(10), runner.wait_with_output())
        .await
        .expect("taskdeck run ended")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Taskdeck cancelled this job; stopped the command"),
        "{stderr}"
    );
    assert!(!stderr.contains("refused"), "{stderr}");
    assert_eq!(out.status.code(), Some(143), "{stderr}");
}

/// With stdout and stderr one file (`> f 2>&1`), the command's lines keep their order; its
/// progress is left where it was when it fails; a name longer than Taskdeck takes is cut.
#[tokio::test]
async fn taskdeck_run_keeps_the_order_of_one_output_file_and_cuts_a_long_name() {
    let s = Server::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.txt");
    let long_name = "n".repeat(250);
    let line = format!(
        "{BIN} run --port {} --token {} --name {long_name} -- sh -c 'for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done; echo step 3/10; exit 1' > {} 2>&1",
        s.port,
        s.admin,
        file.display()
    );
    let status = tokio::process::Command::new("sh")
        .args(["-c", &line])
        .status()
        .await
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let written = std::fs::read_to_string(&file).unwrap();
    let ours: Vec<&str> = written
        .lines()
        .filter(|l| !l.starts_with("taskdeck run:"))
        .collect();
    assert_eq!(
        ours,
        [
            "out1",
            "err1",
            "out2",
            "err2",
            "out3",
            "err3",
            "out4",
            "err4",
            "out5",
            "err5",
            "step 3/10"
        ],
        "{written}"
    );
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
    let job = &list["tasks"][0];
    let title = job["title"].as_str().unwrap();
    assert_eq!(title.chars().count(), 200, "{title}");
    assert!(title.ends_with('…'), "{title}");
    let id = job["taskId"].as_str().unwrap().to_string();
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(v["progress"]["current"], 3, "{v}");
}

/// A Taskdeck that does not answer (stopped with SIGSTOP) does not hold a command back: the
/// job's start gives up and the command runs; and one that stops answering while the command
/// runs does not delay noticing the command's end (its duration is its own).
#[tokio::test]
async fn taskdeck_run_does_not_wait_on_a_frozen_taskdeck() {
    let s = Server::start(&[]).await;
    let pid = s.child.id().unwrap().to_string();
    let signal = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
    };
    let run = |name: &str, script: &str| {
        tokio::process::Command::new(BIN)
            .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
            .args(["--name", name, "--", "sh", "-c", script])
            .output()
    };
    signal("-STOP");
    let started = Instant::now();
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        run("frozen at its start", "echo ran"),
    )
    .await
    .expect("taskdeck run ended");
    signal("-CONT");
    let out = out.unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("did not answer"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    // Frozen while the command runs and reports, and ends (the test ends it), for 6 s. (The
    // start above, answered once Taskdeck ran again, made a job nobody reports to: not this.)
    let end = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    std::fs::remove_file(&end).unwrap();
    let started = Instant::now();
    let running = tokio::spawn(run(
        "frozen while it runs",
        &format!(
            "while [ ! -e {} ]; do sleep 0.05; done; echo ended",
            end.display()
        ),
    ));
    let id = loop {
        let (_, list) = s.v1_get(Some(&s.admin), "/v1/tasks?tool=external").await;
        let found = list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["title"] == "frozen while it runs")
            .and_then(|t| t["taskId"].as_str())
            .map(String::from);
        if let Some(id) = found {
            break id;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(1100)).await;
    signal("-STOP");
    std::fs::write(&end, "").unwrap();
    let ended_by = started.elapsed();
    tokio::time::sleep(Duration::from_secs(6)).await;
    signal("-CONT");
    running.await.unwrap().unwrap();
    let v = wait_job(&s, &s.admin, &id, |v| v["status"] != "working").await;
    let ms = v["result"]["structuredContent"]["durationMs"]
        .as_u64()
        .unwrap();
    // Seen at once (a report waiting on the frozen Taskdeck held it up to 5 s before).
    assert!(
        ms < ended_by.as_millis() as u64 + 2000,
        "{ms} ms, ended by {ended_by:?}: {v}"
    );
}

#[tokio::test]
async fn tasks_cli_lists_shows_answers_and_cancels() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let id = s
        .call(&t, "request_approval", json!({"message": "Ship it?", "requestedSchema": {"type": "object", "properties": {"note": {"type": "string"}}}}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &id, "input_required").await;
    let cli = |args: &[&str]| {
        let mut full = vec!["tasks"];
        full.extend_from_slice(args);
        let port = s.port.to_string();
        let (token, port2) = (t.clone(), port.clone());
        let full: Vec<String> = full
            .iter()
            .map(|a| a.to_string())
            .chain(["--port".into(), port2, "--token".into(), token])
            .collect();
        std::process::Command::new(BIN)
            .args(&full)
            .output()
            .unwrap()
    };
    let out = cli(&["list", "--status", "input_required", "--json"]);
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["tasks"][0]["taskId"], id.as_str());
    let out = cli(&["list"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(&id));
    // wait: says what the task waits for, and gives up at --timeout (exit 6).
    let out = cli(&["wait", &id, "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "waiting for input approval: Ship it? (taskdeck tasks answer {id} approval accept [--content '{{\"note\": \"…\"}}'] | decline [--content '{{\"reason\": \"…\"}}'])"
        )) && said.contains("is still input_required"),
        "{said}"
    );
    // Spaces around the commas are no part of a status.
    let out = cli(&["list", "--status", "working, input_required", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["tasks"][0]["taskId"], id.as_str());
    // A status that does not exist is a usage error, caught before anything is sent.
    let out = cli(&["list", "--status", "working,bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"bogus\" is not a task status"));
    // What the table's STATUS says of a refused call points to the filter that finds it.
    let out = cli(&["list", "--status", "declined"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--errors lists them"));

    // Paging: a page says how to get the next one, and that cursor works.
    let agent = s.token("cli-agent");
    let mine = s
        .call(&agent, "request_approval", json!({"message": "Mine?"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let out = cli(&["list", "--limit", "1"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains(&mine) && !stdout.contains(&id),
        "{out:?}"
    );
    let cursor = stderr
        .split("add --cursor ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("no cursor hint: {stderr}"));
    let out = cli(&["list", "--limit", "1", "--cursor", cursor]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&id) && !stdout.contains(&mine),
        "{out:?}"
    );
    // One agent's tasks; a page size the API cannot serve is a usage error (exit 2).
    let out = cli(&["list", "--principal", "cli-agent", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [mine.as_str()]);
    assert_eq!(cli(&["list", "--limit", "0"]).status.code(), Some(2));
    assert!(
        s.v1_post(Some(&t), &format!("/v1/tasks/{mine}/cancel"), json!({}))
            .await
            .0
            .is_success()
    );
    // wait on a cancelled task: it ended without success (exit 5).
    let out = cli(&["wait", &mine]);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    // ... and on a question answered no: no success for a script either.
    let asked = s
        .call(&t, "request_approval", json!({"message": "Deploy?"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &asked, "input_required").await;
    s.answer(&asked, "approval", json!({"action": "decline"}))
        .await;
    let out = cli(&["wait", &asked]);
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    let out = cli(&[
        "answer",
        &id,
        "approval",
        "accept",
        "--content",
        "{\"note\": \"ok\"}",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = s.wait_status(&t, &id, "completed").await;
    assert_eq!(v["result"]["structuredContent"]["content"]["note"], "ok");
    // Answering again is ignored, and says so with exit 4 (the API itself answers 200).
    let out = cli(&["answer", &id, "approval", "decline"]);
    assert_eq!(out.status.code(), Some(4));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("approval is not waiting for an answer from this token")
            && said.contains("completed"),
        "{said}"
    );
    // Without --port, the data dir tells the CLI where its Taskdeck listens (here not 4747).
    let out = std::process::Command::new(BIN)
        .args(["tasks", "show", &id, "--json", "--token", &t, "--data-dir"])
        .arg(s.dir.join("data"))
        .env_remove("TASKDECK_PORT")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["task"]["status"], "completed");
    // wait on a task that completed: its row and its result, exit 0.
    let out = cli(&["wait", &id]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("completed"),
        "{out:?}"
    );
    let out = cli(&["show", &id]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("accepted approval") && shown.contains("status: working → completed"),
        "{shown}"
    );
    // --timeline N prints the newest N events, and says how to see more.
    let out = cli(&["show", &id, "--timeline", "1"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    let events = shown.lines().filter(|l| l.starts_with("  20")).count();
    assert_eq!(events, 1, "{shown}");
    assert!(
        shown.contains(&format!(
            "more with `taskdeck tasks show {id} --timeline 5000`"
        )),
        "{shown}"
    );
    let out = cli(&["cancel", "no-such-task"]);
    assert_eq!(out.status.code(), Some(4));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("Task not found") && said.contains("or one deleted since"),
        "{said}"
    );
    // A taskId is one path segment: "../me" names no task, not the /v1/me endpoint.
    let out = cli(&["show", "../me"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let out = cli(&["cancel", &id]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("already completed, nothing to cancel")
    );
    // No token given and no admin-token file where it looks: it says where it looked.
    let out = std::process::Command::new(BIN)
        .args([
            "tasks",
            "list",
            "--port",
            &s.port.to_string(),
            "--config-dir",
            "/nonexistent-td",
        ])
        .env_remove("TASKDECK_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/nonexistent-td/admin-token does not exist")
    );
}

/// A small remote API with long-running operations, on loopback: `POST /ops` answers 202 with
/// `Location: /ops/{n}` and `Retry-After: 1`; the monitor fails once with 503, then says
/// "running" (again with Retry-After), then "succeeded". `DELETE /ops/{n}` is recorded.
async fn remote_api() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::{
        Router,
        extract::{Path, State},
        http::{HeaderMap, StatusCode},
        routing::{get, post},
    };
    use std::sync::{Arc, Mutex};
    type Log = Arc<Mutex<Vec<String>>>;
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let app = Router::new()
        .route(
            "/ops",
            post(|State(log): State<Log>| async move {
                log.lock().unwrap().push("POST /ops".into());
                let mut h = HeaderMap::new();
                h.insert("location", "/ops/1".parse().unwrap());
                h.insert("retry-after", "1".parse().unwrap());
                (StatusCode::ACCEPTED, h, r#"{"status":"accepted"}"#)
            }),
        )
        .route(
            "/bad",
            post(|| async { (StatusCode::BAD_REQUEST, r#"{"error":"missing field"}"#) }),
        )
        .route(
            "/ops/{n}",
            get(|State(log): State<Log>, Path(n): Path<u32>| async move {
                let polls = {
                    let mut l = log.lock().unwrap();
                    l.push(format!("GET /ops/{n}"));
                    l.iter().filter(|e| **e == format!("GET /ops/{n}")).count()
                };
                let mut h = HeaderMap::new();
                match (n, polls) {
                    (_, 1) => (StatusCode::SERVICE_UNAVAILABLE, h, "busy".to_string()),
                    (1, 2) | (2, _) => {
                        h.insert("retry-after", "1".parse().unwrap());
                        (StatusCode::OK, h, r#"{"status":"running"}"#.to_string())
                    }
                    _ => (
                        StatusCode::OK,
                        h,
                        r#"{"status":"succeeded","output":42}"#.to_string(),
                    ),
                }
            })
            .delete(|State(log): State<Log>, Path(n): Path<u32>| async move {
                log.lock().unwrap().push(format!("DELETE /ops/{n}"));
                StatusCode::NO_CONTENT
            }),
        )
        .with_state(log.clone());
    (crate::harness::serve_local(app).await, log)
}

#[tokio::test]
async fn wait_for_http_job_follows_202_location_retry_after() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    // What is not an http(s) URL is refused before a task exists (-32602).
    for url in ["not a url", "ftp://example.com/x"] {
        let r = s
            .rpc(
                Some(&t),
                "tools/call",
                json!({"name": "wait_for_http_job", "arguments": {"url": url}}),
                true,
            )
            .await;
        assert_eq!(r.error_code(), -32602, "{url}: {:?}", r.body);
    }
    let (remote, log) = remote_api().await;
    let started = Instant::now();
    let id = s
        .call(
            &t,
            "wait_for_http_job",
            json!({"url": format!("{remote}/ops"), "body": {"export": "all"}}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // The remote API is on loopback: the human allows it, for good ("always allow"), so the
    // later tasks go there without asking.
    s.wait_status(&t, &id, "input_required").await;
    let allow = json!({"action": "accept", "content": {"alwaysAllow": true}});
    s.answer(&id, "approve", allow).await;
    // The tool saves the allowance once it has the answer: by the time the task ends; it
    // names the origin (`http://127.0.0.1:PORT/*`).
    let v = s.wait_status(&t, &id, "completed").await;
    let policy = std::fs::read_to_string(s.dir.join("cfg/policy.json")).unwrap();
    assert!(policy.contains(&format!("{remote}/*")), "{policy}");
    assert_eq!(v["result"]["isError"], false, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["body"],
        json!({"status": "succeeded", "output": 42})
    );
    assert_eq!(
        *log.lock().unwrap(),
        ["POST /ops", "GET /ops/1", "GET /ops/1", "GET /ops/1"],
        "one 503 retried, Retry-After honoured"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "waited as the server asked (Retry-After: 1 twice)"
    );

    // A 4xx is a clear tool error at once.
    let id = s
        .call(
            &t,
            "wait_for_http_job",
            json!({"url": format!("{remote}/bad"), "body": {}}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let v = s.wait_status(&t, &id, "completed").await;
    assert_eq!(v["result"]["isError"], true);
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("HTTP 400")
    );

    // Cancelling while following a monitor sends DELETE to it.
    let id = s
        .call(
            &t,
            "wait_for_http_job",
            json!({"monitor": format!("{remote}/ops/2")}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_for(&t, &id, "polling", |v| {
        v["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("running"))
    })
    .await;
    s.rpc(Some(&t), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .result();
    s.wait_status(&t, &id, "cancelled").await;
    assert!(log.lock().unwrap().contains(&"DELETE /ops/2".to_string()));
}

/// A job runs as long as its runner reports: its ttlMs (the server's default, 2 s here) grows
/// with it, the timeline says so, and it is kept after its last report. So does `taskdeck
/// run`'s, whose command here runs twice the default ttl.
#[tokio::test]
async fn a_job_whose_runner_reports_outlives_the_default_ttl() {
    let s = Server::start(&["--default-ttl-ms", "2000"]).await;
    let runner = s.token("nightly");
    let id = start_external(&s, &runner, json!({"name": "export", "heartbeatMs": 1000})).await;
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(6000) {
        let (status, v) = send_report(&s, &runner, &id, json!({})).await;
        assert_eq!(status, 200, "{v}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (_, job) = s.v1_get(Some(&runner), &format!("/v1/tasks/{id}")).await;
    assert_eq!(job["task"]["status"], "working", "3 ttls in: {job}");
    let ttl = job["task"]["ttlMs"].as_u64().unwrap();
    assert!(ttl > 6000, "ttlMs grew with the run: {job}");
    let kept: Vec<_> = job["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "ttl" && e["data"]["reason"] == "still running")
        .collect();
    // One extension each time half of the 2 s window is left: about one a second, not one a report.
    assert!(
        (3..=8).contains(&kept.len()),
        "{} extensions in 6 s: {kept:?}",
        kept.len()
    );
    let (status, _) = send_report(
        &s,
        &runner,
        &id,
        json!({"result": {"content": [{"type": "text", "text": "exported"}]}}),
    )
    .await;
    assert_eq!(status, 202);
    wait_job(&s, &runner, &id, |v| v["status"] == "completed").await;
    // Kept at least half a window after its last report.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let (status, job) = s.v1_get(Some(&runner), &format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200, "{job}");
    assert_eq!(job["task"]["status"], "completed", "{job}");

    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &runner])
        .args([
            "--name",
            "long build",
            "--",
            "sh",
            "-c",
            "sleep 4; echo built",
        ])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("ended this job"), "{stderr}");
    let built = job_titled(&s, "long build").await;
    let v = wait_job(&s, &runner, &built, |v| v["status"] != "working").await;
    assert_eq!(v["status"], "completed", "{v}");
    assert_eq!(v["result"]["structuredContent"]["exitCode"], 0, "{v}");

    // A heartbeat longer than the ttl: the job outlives the ttl until its first report is due.
    let slow = start_external(&s, &runner, json!({"name": "slow", "heartbeatMs": 5000})).await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let (status, v) = send_report(&s, &runner, &slow, json!({})).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["task"]["status"], "working", "{v}");
}

/// A `request_approval` "Go?" asked as `token`, once it waits for its answer: its taskId.
async fn waiting_go(s: &Server, token: &str) -> String {
    let id = s
        .call(token, "request_approval", json!({"message": "Go?"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(token, &id, "input_required").await;
    id
}

/// `tasks wait` learns of an end from the event stream, not only at its next poll: with a
/// 20 s pollIntervalMs (it polls every 5 s at most), it exits well within the poll after the
/// answer that ends the task.
#[tokio::test]
async fn tasks_wait_learns_of_an_end_at_once() {
    let s = Server::start(&["--poll-interval-ms", "20000"]).await;
    let t = s.admin.clone();
    let id = waiting_go(&s, &t).await;
    let wait = tokio::process::Command::new(BIN)
        .args([
            "tasks",
            "wait",
            &id,
            "--port",
            &s.port.to_string(),
            "--token",
            &t,
        ])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Past its first look at the task: the next poll is 5 s away.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let answered = Instant::now();
    s.answer(&id, "approval", json!({"action": "accept", "content": {}}))
        .await;
    let out = wait.wait_with_output().await.unwrap();
    let took = answered.elapsed();
    assert!(out.status.success(), "{out:?}");
    assert!(
        took < Duration::from_millis(2500),
        "exited {took:?} after the answer (a poll would take up to 3.5 s)"
    );
}

/// `tasks wait` waits out a restart of Taskdeck: stopped, then started again on another port,
/// it finds the task again (the port from the data dir) and exits when the task ends.
#[tokio::test]
async fn tasks_wait_waits_out_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let t = s.admin.clone();
    let id = waiting_go(&s, &t).await;
    let wait = tokio::process::Command::new(BIN)
        .args(["tasks", "wait", &id, "--timeout", "60", "--data-dir"])
        .arg(tmp.path().join("data"))
        .arg("--config-dir")
        .arg(tmp.path().join("cfg"))
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let old_port = s.port;
    stop_cleanly(&mut s).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let s = Server::start_in(tmp.path(), &[]).await;
    assert_ne!(s.port, old_port);
    s.answer(&id, "approval", json!({"action": "accept", "content": {}}))
        .await;
    let out = tokio::time::timeout(Duration::from_secs(20), wait.wait_with_output())
        .await
        .expect("tasks wait ends once the task has")
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(
        said.contains("not answering")
            && said.contains(&format!("is back at http://127.0.0.1:{}", s.port)),
        "{said}"
    );
}

/// A command that writes more than its log keeps (16 MiB) has its latest output kept, not its
/// first: the log's offsets stay those of the whole output, a read from before the kept part
/// starts at its first whole line, the tail is the command's last lines, and the disk holds
/// about 16 MiB of it.
#[tokio::test]
async fn a_long_command_s_log_keeps_its_latest_output() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let id = approved_command(
        &s,
        &t,
        "seq 1 250000 | sed 's/$/ of a command that writes long lines, 21 MB in all, line after line/;s/^/output line /'; echo the last line",
    )
    .await;
    s.wait_status(&t, &id, "completed").await;
    let (_, whole) = s
        .v1_get(Some(&t), &format!("/v1/tasks/{id}/log?offset=0&limit=100"))
        .await;
    let (size, kept) = (
        whole["size"].as_u64().unwrap(),
        whole["keptFrom"].as_u64().unwrap(),
    );
    assert!(size > 20_000_000, "{whole}");
    assert!(kept > 0 && size - kept <= 16 << 20, "{whole}");
    assert_eq!(
        whole["offset"], kept,
        "a read from 0 starts at the kept output"
    );
    let first = whole["text"].as_str().unwrap().lines().next().unwrap();
    let n: u64 = first
        .strip_prefix("output line ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(n > 80_000, "{first}");
    let (_, tail) = s
        .v1_get(Some(&t), &format!("/v1/tasks/{id}/log?tail=100"))
        .await;
    let tail = tail["text"].as_str().unwrap();
    assert!(
        tail.ends_with("line 250000 of a command that writes long lines, 21 MB in all, line after line\nthe last line\n"),
        "{tail}"
    );
    // A read inside the kept output is where it was asked for.
    let at = kept + 1000;
    let (_, inside) = s
        .v1_get(
            Some(&t),
            &format!("/v1/tasks/{id}/log?offset={at}&limit=10"),
        )
        .await;
    assert_eq!(inside["offset"], at, "{inside}");
    use std::os::unix::fs::MetadataExt;
    let file = s.dir.join(format!("data/logs/{id}.log"));
    let on_disk = std::fs::metadata(&file).unwrap().blocks() * 512;
    assert!(
        on_disk <= (16 << 20) + (64 << 10),
        "{on_disk} bytes on disk"
    );
}

/// A job whose runner said nothing after Taskdeck restarted is lost one heartbeat after the
/// start, and its message says the silence is counted from the restart (the runner's last
/// report may be much older).
#[tokio::test]
async fn a_job_lost_after_a_restart_says_since_when() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let runner = s.token("nightly");
    let (status, job) = s
        .v1_post(
            Some(&runner),
            "/v1/jobs",
            json!({"external": {"name": "export", "heartbeatMs": 1500}}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    let id = job["taskId"].as_str().unwrap().to_string();
    stop_cleanly(&mut s).await;
    let s = Server::start_in(tmp.path(), &[]).await;
    let v = s.wait_status(&s.admin, &id, "failed").await;
    assert_eq!(
        v["statusMessage"],
        "Runner lost: no report from the job's runner for 1500 ms since Taskdeck restarted",
        "{v}"
    );
}

/// A job Taskdeck ended without its runner (here: it heard nothing within the heartbeat, and
/// the runner was only late) answers the runner's next report with 409 and why, so the runner
/// learns its work is no longer tracked.
#[tokio::test]
async fn a_report_to_a_job_ended_without_its_runner_is_refused() {
    let s = Server::start(&[]).await;
    let runner = s.token("nightly");
    let (status, job) = s
        .v1_post(
            Some(&runner),
            "/v1/jobs",
            json!({"external": {"name": "export", "heartbeatMs": 1000}}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    let id = job["taskId"].as_str().unwrap().to_string();
    let v = s
        .wait_for(&s.admin, &id, "failed", |v| v["status"] == "failed")
        .await;
    let message = v["statusMessage"].as_str().unwrap();
    assert!(
        message.contains("Runner lost") && !message.contains("restarted"),
        "{v}"
    );
    let (status, problem) = s
        .v1_post(
            Some(&runner),
            &format!("/v1/jobs/{id}/report"),
            json!({"statusMessage": "still exporting"}),
        )
        .await;
    assert_eq!(status, 409, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("job is already failed: "),
        "{problem}"
    );
}

/// The whole log of task `id` as `token` reads it (`GET /v1/tasks/{id}/log`), with its
/// answer's last `complete`.
async fn whole_log(s: &Server, token: &str, id: &str) -> (String, bool) {
    let (mut text, mut offset) = (String::new(), 0);
    loop {
        let (status, chunk) = s
            .v1_get(
                Some(token),
                &format!("/v1/tasks/{id}/log?offset={offset}&limit=1048576"),
            )
            .await;
        assert_eq!(status, 200, "{chunk}");
        text.push_str(chunk["text"].as_str().unwrap());
        let next = chunk["nextOffset"].as_u64().unwrap();
        if next == offset || next >= chunk["size"].as_u64().unwrap() {
            return (text, chunk["complete"] == true);
        }
        offset = next;
    }
}

/// `taskdeck run` sends the command's output to its job's log in Taskdeck (the window's Output
/// panel, `GET /v1/tasks/{id}/log`): both streams' lines, colours removed, every line once and
/// in order, a last line without a newline. What a cancelled job wrote stays; only its owner
/// reads it; output that comes faster than the reports take it is left out, and said to be.
#[tokio::test]
async fn taskdeck_run_sends_its_output_to_the_job_s_log() {
    let s = Server::start(&[]).await;
    let (t, port) = (s.admin.clone(), s.port.to_string());
    let run = |name: &str, script: &str| {
        let mut c = tokio::process::Command::new(BIN);
        c.args(["run", "--port", &port, "--token", &t, "--name", name, "--"])
            .args(["sh", "-c", script])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        c
    };
    let status = run(
        "logged",
        "printf '\\033[31mred\\033[0m line\\n'; echo to-stderr >&2; \
         for i in $(seq 1 3000); do echo \"line $i\"; done; printf 'last without newline'",
    )
    .status()
    .await
    .unwrap();
    assert!(status.success());
    let id = job_titled(&s, "logged").await;
    wait_job(&s, &t, &id, |v| v["status"] == "completed").await;
    let (log, complete) = whole_log(&s, &t, &id).await;
    assert!(complete);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines[0], "red line", "{}", &log[..200.min(log.len())]);
    assert!(lines.contains(&"to-stderr"));
    let counted: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("line "))
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        counted,
        (1..=3000).map(|i| format!("line {i}")).collect::<Vec<_>>()
    );
    assert!(
        log.ends_with("\nlast without newline\n"),
        "{}",
        &log[log.len() - 100..]
    );
    // Another principal's job has no log for it.
    let other = s.token("someone-else");
    let (status, _) = s.v1_get(Some(&other), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 404);
    // A human reads it, but cannot write into another's job: it speaks for no runner.
    let out = std::process::Command::new(BIN)
        .args(["token", "create", "a-person", "--human", "--data-dir"])
        .arg(s.dir.join("data"))
        .output()
        .unwrap();
    let human = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let (status, _) = s.v1_get(Some(&human), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(status, 200);
    let running = start_external(&s, &t, json!({"name": "owned by the admin"})).await;
    let (status, _) = send_report(&s, &human, &running, json!({"output": "forged\n"})).await;
    assert_eq!(status, 403);
    let (status, _) = send_report(&s, &t, &running, json!({"output": "real\n"})).await;
    assert_eq!(status, 200);
    assert_eq!(whole_log(&s, &t, &running).await.0, "real\n");

    // Cancelled in Taskdeck: what the command wrote until it stopped stays in the log.
    let mut child = run(
        "cancelled-log",
        "for i in $(seq 1 200); do echo \"tick $i\"; sleep 0.05; done",
    )
    .spawn()
    .unwrap();
    let id = job_titled(&s, "cancelled-log").await;
    wait_job(&s, &t, &id, |v| {
        v["statusMessage"]
            .as_str()
            .and_then(|m| m.strip_prefix("tick "))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n >= 30)
    })
    .await;
    let (status, _) = s
        .v1_post(Some(&t), &format!("/v1/tasks/{id}/cancel"), json!({}))
        .await;
    assert!(status.is_success());
    tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the cancel stopped taskdeck run")
        .unwrap();
    wait_job(&s, &t, &id, |v| v["status"] == "cancelled").await;
    let (log, complete) = whole_log(&s, &t, &id).await;
    assert!(complete);
    let ticks: Vec<&str> = log.lines().collect();
    let n = ticks.len();
    assert!(n >= 30, "{log}");
    assert_eq!(
        ticks,
        (1..=n).map(|i| format!("tick {i}")).collect::<Vec<_>>()
    );

    // 40 MB in a moment: the log takes what the outbox holds (512 KiB) with each report, and
    // says what it left out.
    let status = run("flood", "yes | head -c 40000000; echo end")
        .status()
        .await
        .unwrap();
    assert!(status.success());
    let id = job_titled(&s, "flood").await;
    wait_job(&s, &t, &id, |v| v["status"] == "completed").await;
    let (log, _) = whole_log(&s, &t, &id).await;
    assert!(log.len() < 4 << 20, "{} bytes", log.len());
    assert!(
        log.contains(
            "bytes of output left out of this log: more than 512 KiB came between two reports]\n"
        ),
        "{}",
        &log[log.len().saturating_sub(300)..]
    );
}

/// `taskdeck tasks watch ARGS` on the data dir in `dir`, and the lines it printed so far.
struct Watch {
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    seen: Vec<String>,
}

impl Watch {
    /// Starts the watch and waits for its header.
    async fn start(dir: &std::path::Path, args: &[&str]) -> Watch {
        use tokio::io::AsyncBufReadExt;
        let mut child = on_data_dir(dir, &[&["tasks", "watch"], args].concat())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut w = Watch {
            child,
            lines,
            seen: Vec::new(),
        };
        w.until(|l| l.starts_with("TIME")).await;
        // Changes are printed from the newest one on, once the stream is open.
        tokio::time::sleep(Duration::from_millis(300)).await;
        w
    }

    /// The next line `what` takes (20 s at most).
    async fn until(&mut self, what: impl Fn(&str) -> bool) -> String {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("timed out; printed: {:#?}", self.seen))
                .unwrap()
                .unwrap_or_else(|| panic!("watch ended; printed: {:#?}", self.seen));
            self.seen.push(line.clone());
            if what(&line) {
                return line;
            }
        }
    }

    async fn stop(mut self) {
        self.child.start_kill().unwrap();
        let _ = self.child.wait().await;
    }
}

/// `taskdeck tasks watch` prints a line as each job is created and ends, and follows a
/// Taskdeck that restarts (on another port: found again through the data dir), from the last
/// change it saw.
#[tokio::test]
async fn tasks_watch_follows_jobs_across_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let mut watch = Watch::start(tmp.path(), &[]).await;
    let first = start_external(&s, &s.admin, json!({"name": "nightly export"})).await;
    let created = watch.until(|l| l.contains(&first)).await;
    assert!(
        created.contains("working") && created.contains("nightly export"),
        "{created}"
    );
    let (status, _) = send_report(
        &s,
        &s.admin,
        &first,
        json!({"result": {"content": [{"type": "text", "text": "done"}]}}),
    )
    .await;
    assert_eq!(status, 202);
    watch
        .until(|l| l.contains(&first) && l.contains("completed"))
        .await;

    assert!(stop_cleanly(&mut s).await.success());
    let s = Server::start_in(tmp.path(), &[]).await;
    let second = start_external(&s, &s.admin, json!({"name": "after the restart"})).await;
    watch.until(|l| l.contains(&second)).await;
    watch.stop().await;
}

/// The next line of a child's output (20 s at most).
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(lines: &mut tokio::io::Lines<R>) -> String {
    tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("a line within 20 s")
        .unwrap()
        .expect("a line before the end")
}

/// A watch whose token is revoked meanwhile exits 4 saying the token is refused, without first
/// saying Taskdeck is not answering (it answers: it ends the stream of a revoked token).
#[tokio::test]
async fn tasks_watch_with_a_revoked_token_says_so_not_that_taskdeck_is_away() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let (_, made) = s
        .v1_post(Some(&s.admin), "/v1/agents", json!({"name": "watcher"}))
        .await;
    let token = made["token"].as_str().unwrap().to_string();
    let mut child = on_data_dir(tmp.path(), &["tasks", "watch", "--token", &token])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(next_line(&mut out).await.starts_with("TIME"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let revoked = on_data_dir(tmp.path(), &["token", "revoke", "watcher"])
        .output()
        .await
        .unwrap();
    assert!(revoked.status.success(), "{revoked:?}");
    let ended = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("the watch ends")
        .unwrap();
    let said = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(4), "{said}");
    assert!(!said.contains("not answering"), "{said}");
}

/// `taskdeck tasks show` prints a job's timeline in words, and folds its run of 60 reports
/// into one line, so its creation still shows among the newest 20 lines; its result's text is
/// printed as lines, not JSON.
#[tokio::test]
async fn tasks_show_folds_a_run_of_reports_and_keeps_the_start_in_view() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let id = start_external(&s, &s.admin, json!({"name": "chatty export"})).await;
    for n in 1..=60 {
        let (status, body) = send_report(
            &s,
            &s.admin,
            &id,
            json!({"progress": {"current": n, "total": 60}, "statusMessage": format!("row {n}")}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, _) = send_report(
        &s,
        &s.admin,
        &id,
        json!({"result": {"content": [{"type": "text", "text": "exported 60 rows\nto out.csv"}]}}),
    )
    .await;
    assert_eq!(status, 202);
    s.wait_status(&s.admin, &id, "completed").await;
    let out = on_data_dir(tmp.path(), &["tasks", "show", &id])
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("result:\n  exported 60 rows\n  to out.csv\n"),
        "{shown}"
    );
    let timeline: Vec<&str> = shown.lines().filter(|l| l.starts_with("  20")).collect();
    assert!(
        timeline[0].ends_with("created: tool external"),
        "{timeline:#?}"
    );
    assert!(
        timeline
            .iter()
            .any(|l| l.contains(" reports (progress, messages), the last: ")
                && l.ends_with("row 60")),
        "{timeline:#?}"
    );
    assert!(
        timeline
            .last()
            .unwrap()
            .contains("status: working → completed"),
        "{timeline:#?}"
    );
    assert!(timeline.len() <= 20, "{timeline:#?}");
}

/// `taskdeck tasks watch` started before any Taskdeck runs on its data dir says so (not that
/// one "went away"), waits, and follows the one that starts there.
#[tokio::test]
async fn tasks_watch_started_first_waits_for_taskdeck_to_start() {
    use tokio::io::AsyncBufReadExt;
    let tmp = tempfile::tempdir().unwrap();
    let mut child = on_data_dir(tmp.path(), &["tasks", "watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let said = next_line(&mut err).await;
    assert!(
        said.contains("no Taskdeck is running on")
            && said.contains("waiting for it to start")
            && !said.contains("come back"),
        "{said}"
    );
    let s = Server::start_in(tmp.path(), &[]).await;
    let said = next_line(&mut err).await;
    assert_eq!(
        said,
        format!(
            "taskdeck: Taskdeck is running at http://127.0.0.1:{}",
            s.port
        )
    );
    let id = start_external(&s, &s.admin, json!({"name": "first of the day"})).await;
    loop {
        let line = next_line(&mut out).await;
        if line.contains(&id) {
            assert!(line.contains("first of the day"), "{line}");
            break;
        }
    }
    child.start_kill().unwrap();
    let _ = child.wait().await;
}

/// `tasks watch --messages` prints each progress report of a job with its progress, so that
/// reports without a message are told apart.
#[tokio::test]
async fn tasks_watch_messages_shows_each_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Server::start_in(tmp.path(), &[]).await;
    let mut watch = Watch::start(tmp.path(), &["--messages"]).await;
    let id = start_external(&s, &s.admin, json!({"name": "progress only"})).await;
    watch.until(|l| l.contains(&id)).await;
    for n in 1..=3 {
        let (status, body) = send_report(
            &s,
            &s.admin,
            &id,
            json!({"progress": {"current": n, "total": 3}}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let line = watch.until(|l| l.contains(&id)).await;
        assert!(line.ends_with(&format!("{n}/3")), "{line}");
    }
    // A report's progress and statusMessage (as `taskdeck run` sends them) are one change: no
    // line pairs the new progress with the old message.
    for n in 1..=3 {
        let (status, body) = send_report(
            &s,
            &s.admin,
            &id,
            json!({"progress": {"current": n, "total": 3}, "statusMessage": format!("step {n}")}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let line = watch.until(|l| l.contains(&id)).await;
        assert!(line.ends_with(&format!("{n}/3 · step {n}")), "{line}");
    }
    // Both a progress message and a statusMessage: one change, the statusMessage's.
    let both = json!({"progress": {"current": 3, "total": 3, "message": "waiting on db"},
                      "statusMessage": "db slow"});
    let (status, body) = send_report(&s, &s.admin, &id, both).await;
    assert_eq!(status, 200, "{body}");
    let line = watch.until(|l| l.contains(&id)).await;
    assert!(line.ends_with("3/3 · db slow"), "{line}");
    watch.stop().await;
}

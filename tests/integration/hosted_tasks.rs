//! `/v1/hosted-tasks` over real HTTP: what a program that runs its own tasks (tower-mcp's
//! remote store) is answered, route by route, where the store's own tests
//! (`src-tauri/crates/tower/tests/remote_*.rs`) see only the trait: 201 with `Location`, 409
//! for a spent input key, 400 for a settle body that ends a task two ways or a ttlMs over 100
//! years, 404 for another principal's task and for a task not created here, the task as
//! every other view shows it; the engine's caps (422 `too_large` with the cap), the status
//! following the input requests, the host's ttlMs kept through a person's answer, and the
//! list's pages.

use serde_json::{Value, json};

use crate::harness::Server;

/// `method` to `path` with `token` and an optional JSON body: status and JSON.
async fn send(
    s: &Server,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut req = s.http.request(method, s.url(path)).bearer_auth(token);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, resp.json().await.unwrap_or(Value::Null), headers)
}

#[tokio::test]
async fn hosted_tasks_keep_the_store_contract_over_http() {
    let s = Server::start(&[]).await;
    let host = s.token("tower-host");
    let post = reqwest::Method::POST;
    let put = reqwest::Method::PUT;

    let (status, task, headers) = send(&s, &host, post.clone(), "/v1/hosted-tasks",
        Some(json!({"tool": "deploy", "arguments": {"service": "api"}, "ttlMs": 600000, "owner": ""}))).await;
    assert_eq!(status, 201, "{task}");
    let id = task["taskId"].as_str().unwrap().to_string();
    assert_eq!(
        headers["location"],
        format!("/v1/hosted-tasks/{id}").as_str()
    );
    assert_eq!(task["owner"], "", "the empty owner is not anonymous");
    assert_eq!(task["principal"], "tower-host");
    assert!(task["expiresInMs"].as_u64().unwrap() <= 600000);

    // Input keys are never issued twice.
    let ask = |keys: &[&str]| json!({"requests": keys.iter().map(|k| (k.to_string(), json!({"method": "roots/list", "params": {}}))).collect::<serde_json::Map<_, _>>()});
    let path = format!("/v1/hosted-tasks/{id}/input-requests");
    let (status, changed, _) = send(&s, &host, put.clone(), &path, Some(ask(&["a", "b"]))).await;
    assert_eq!((status, &changed["changed"]), (200, &json!(true)));
    let (status, _, _) = send(&s, &host, put.clone(), &path, Some(ask(&["b"]))).await;
    assert_eq!(status, 200, "narrowing supersedes a");
    let (status, problem, _) = send(&s, &host, put.clone(), &path, Some(ask(&["a"]))).await;
    assert_eq!(status, 409, "{problem}");
    let (status, answered, _) = send(
        &s,
        &host,
        post.clone(),
        &format!("/v1/hosted-tasks/{id}/input-responses"),
        Some(json!({"responses": {"b": {"roots": []}, "zzz": {}}})),
    )
    .await;
    assert_eq!(status, 200, "{answered}");
    assert_eq!(
        answered,
        json!({"accepted": ["b"], "ignored": ["zzz"], "outstanding": []})
    );

    // Bodies that cannot be taken.
    let settle = format!("/v1/hosted-tasks/{id}/settle");
    let (status, _, _) = send(
        &s,
        &host,
        post.clone(),
        &settle,
        Some(json!({"cancelled": "x", "completed": {}})),
    )
    .await;
    assert_eq!(status, 400, "two ways to end");
    let (status, _, _) = send(
        &s,
        &host,
        put.clone(),
        &format!("/v1/hosted-tasks/{id}/ttl"),
        Some(json!({"ttlMs": 3_153_600_000_001_u64})),
    )
    .await;
    assert_eq!(status, 400, "over 100 years");

    // Another principal, and a task that is not hosted, read as unknown.
    let other = s.token("someone-else");
    let (status, _, _) = send(
        &s,
        &other,
        reqwest::Method::GET,
        &format!("/v1/hosted-tasks/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _, _) = send(
        &s,
        &other,
        post.clone(),
        &settle,
        Some(json!({"cancelled": "mine now"})),
    )
    .await;
    assert_eq!(status, 404);
    let (_, job) = s
        .v1_post(
            Some(&host),
            "/v1/jobs",
            json!({"external": {"name": "a job"}}),
        )
        .await;
    let job_id = job["taskId"].as_str().unwrap();
    let (status, _, _) = send(
        &s,
        &host,
        reqwest::Method::GET,
        &format!("/v1/hosted-tasks/{job_id}"),
        None,
    )
    .await;
    assert_eq!(status, 404, "a job is not a hosted task");

    // Settled once; the window shows it with its result.
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    let (status, settled, _) = send(
        &s,
        &host,
        post.clone(),
        &settle,
        Some(json!({"completed": result})),
    )
    .await;
    assert_eq!(
        (status, &settled["changed"]),
        (200, &json!(true)),
        "{settled}"
    );
    let (_, again, _) = send(
        &s,
        &host,
        post.clone(),
        &settle,
        Some(json!({"failed": {"code": -32603, "message": "late"}})),
    )
    .await;
    assert_eq!(again["changed"], false);
    assert_eq!(again["task"]["status"], "completed");
    let (status, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(detail["task"]["title"], "deploy");
    assert_eq!(detail["task"]["result"]["content"][0]["text"], "done");

    // Discarded whatever its state, then gone.
    let (status, _, _) = send(
        &s,
        &host,
        reqwest::Method::DELETE,
        &format!("/v1/hosted-tasks/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _, _) = send(
        &s,
        &host,
        reqwest::Method::GET,
        &format!("/v1/hosted-tasks/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_host_cannot_pose_as_taskdecks_approvals_nor_have_its_tasks_rerun() {
    let s = Server::start(&[]).await;
    let host = s.token("tower-host");
    let (status, task, _) = send(
        &s,
        &host,
        reqwest::Method::POST,
        "/v1/hosted-tasks",
        Some(json!({"tool": "run_command", "arguments": {"command": "rm -rf ~/work"}, "ttlMs": 600000})),
    )
    .await;
    assert_eq!(status, 201, "{task}");
    let id = task["taskId"].as_str().unwrap().to_string();

    // A question dressed as Taskdeck's own approval of a call is refused; nothing changes.
    let approval = json!({"requests": {"approve": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Approve write_file on fs?",
        "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"taskdeck/approval": {"server": "fs", "tool": "write_file", "verdict": "ask"}}}}}});
    let (status, problem, _) = send(
        &s,
        &host,
        reqwest::Method::PUT,
        &format!("/v1/hosted-tasks/{id}/input-requests"),
        Some(approval),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    assert!(!queue.to_string().contains(&id), "{queue}");
    // A plain question of a hosted task named like a gateway call is no server's question.
    let (status, posed, _) = send(
        &s,
        &host,
        reqwest::Method::POST,
        "/v1/hosted-tasks",
        Some(json!({"tool": "fs__write_file", "arguments": {"path": "/x", "content": "hi"}})),
    )
    .await;
    assert_eq!(status, 201, "{posed}");
    let posed = posed["taskId"].as_str().unwrap().to_string();
    let ask = json!({"requests": {"approve": {"method": "elicitation/create", "params": {
        "message": "agent1 wants to call write_file on fs with:"}}}});
    let (status, _, _) = send(
        &s,
        &host,
        reqwest::Method::PUT,
        &format!("/v1/hosted-tasks/{posed}/input-requests"),
        Some(ask),
    )
    .await;
    assert_eq!(status, 200);
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    let entry = queue["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["taskId"] == posed.as_str())
        .unwrap_or_else(|| panic!("{queue}"))
        .clone();
    assert_eq!(
        (&entry["kind"], &entry["server"], &entry["tool"]),
        (
            &json!("question"),
            &json!("(hosted)"),
            &json!("fs__write_file")
        ),
        "{entry}"
    );

    // Settled, it is not run again by a person's "Run again": its command line is the host's.
    let (status, _, _) = send(
        &s,
        &host,
        reqwest::Method::POST,
        &format!("/v1/hosted-tasks/{id}/settle"),
        Some(json!({"cancelled": "the host gave up"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, problem) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/rerun"), json!({}))
        .await;
    assert_eq!(status, 422, "{problem}");
}

/// A program keeping its tasks here: its calls with its token.
struct Host<'a> {
    s: &'a Server,
    token: String,
}

impl Host<'_> {
    /// `method` to `path` with an optional JSON body: status and JSON.
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let (status, body, _) = send(self.s, &self.token, method, path, body).await;
        (status, body)
    }

    /// Creates a hosted task with `body`; its taskId.
    async fn create(&self, body: Value) -> String {
        let (status, task) = self.call("POST", "/v1/hosted-tasks", Some(body)).await;
        assert_eq!(status, 201, "{task}");
        task["taskId"].as_str().unwrap().to_string()
    }

    /// The hosted task `id` as its host reads it.
    async fn read(&self, id: &str) -> Value {
        self.call("GET", &format!("/v1/hosted-tasks/{id}"), None)
            .await
            .1
    }
}

/// An `elicitation/create` form request asking `message`.
fn form(message: String) -> Value {
    json!({"method": "elicitation/create", "params": {"mode": "form", "message": message,
        "requestedSchema": {"type": "object", "properties": {"region": {"type": "string"}}}}})
}

#[tokio::test]
async fn what_a_host_stores_has_the_engines_caps() {
    let s = Server::start(&[]).await;
    let host = Host {
        s: &s,
        token: s.token("tower-host"),
    };
    let big = |bytes: usize| "x".repeat(bytes);
    // Each over its cap: refused whole, saying which cap (the remote store maps it to
    // tower-mcp's RetentionLimitExceeded), and the detail does not quote the value.
    let refused = |(status, problem): (u16, Value), limit: u64| {
        assert_eq!(status, 422, "{problem}");
        assert_eq!(problem["reason"], "too_large");
        assert_eq!(problem["limit"], limit);
        assert!(problem["detail"].as_str().unwrap().len() < 300, "{problem}");
    };
    let create = |body: Value| host.call("POST", "/v1/hosted-tasks", Some(body));
    refused(
        create(json!({"tool": "t", "arguments": {"a": big(300 * 1024)}})).await,
        256 * 1024,
    );
    refused(create(json!({"tool": "t", "owner": big(1025)})).await, 1024);
    let (_, list) = host.call("GET", "/v1/hosted-tasks", None).await;
    assert_eq!(list["tasks"], json!([]), "nothing was created");

    let id = host.create(json!({"tool": "t", "ttlMs": 600000})).await;
    let at = |rest: &str| format!("/v1/hosted-tasks/{id}/{rest}");
    let ask = json!({"requests": {"q": form(big(70 * 1024))}});
    refused(
        host.call("PUT", &at("input-requests"), Some(ask)).await,
        64 * 1024,
    );
    let meta = json!({"meta": {"m": big(70 * 1024)}});
    refused(host.call("PUT", &at("meta"), Some(meta)).await, 64 * 1024);
    let ask = json!({"requests": {"q": form("Go?".into())}});
    assert_eq!(
        host.call("PUT", &at("input-requests"), Some(ask)).await.0,
        200
    );
    let answer =
        json!({"responses": {"q": {"action": "accept", "content": {"region": big(70 * 1024)}}}});
    refused(
        host.call("POST", &at("input-responses"), Some(answer))
            .await,
        64 * 1024,
    );
    let task = host.read(&id).await;
    assert_eq!(
        task["answers"],
        json!({}),
        "the answer over its cap was not recorded"
    );
    assert_eq!(task["status"], "input_required");
    let failed = json!({"failed": {"code": -32603, "message": "no", "data": big(70 * 1024)}});
    refused(
        host.call("POST", &at("settle"), Some(failed)).await,
        64 * 1024,
    );

    // A status message is cut to 4 KiB, as every task's.
    let cancelled = json!({"cancelled": big(10_000)});
    assert_eq!(
        host.call("POST", &at("settle"), Some(cancelled)).await.0,
        200
    );
    let task = host.read(&id).await;
    let message = task["statusMessage"].as_str().unwrap();
    assert!(
        message.len() <= 4096 && message.ends_with("… [truncated 5.8 KiB]"),
        "{}",
        message.len()
    );
}

#[tokio::test]
async fn a_hosted_tasks_status_follows_its_input_requests_and_its_ttl_is_the_hosts() {
    let s = Server::start(&[]).await;
    let host = Host {
        s: &s,
        token: s.token("tower-host"),
    };
    let id = host.create(json!({"tool": "t", "ttlMs": 600000})).await;
    let at = |rest: &str| format!("/v1/hosted-tasks/{id}/{rest}");
    let ask = |key: &str| json!({"requests": {key: form("Region?".into())}});

    // input_required only while something is asked (ARCHITECTURE.md, invariant 6).
    let (status, problem) = host
        .call(
            "POST",
            &at("status"),
            Some(json!({"status": "input_required"})),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(host.read(&id).await["status"], "working");
    let (status, problem) = host
        .call("PUT", &at("input-requests"), Some(json!({"requests": {}})))
        .await;
    assert_eq!(status, 422, "an empty set asks nothing: {problem}");
    let odd = json!({"requests": {"x": {"method": "rm -rf", "params": {}}}});
    let (status, problem) = host.call("PUT", &at("input-requests"), Some(odd)).await;
    assert_eq!(status, 422, "not an InputRequest: {problem}");
    host.call("PUT", &at("input-requests"), Some(ask("a")))
        .await;
    // Back to working: what was asked is superseded, and its key is spent.
    let working = json!({"status": "working", "statusMessage": "decided without asking"});
    assert_eq!(host.call("POST", &at("status"), Some(working)).await.0, 200);
    let task = host.read(&id).await;
    assert_eq!(task["status"], "working", "{task}");
    assert_eq!(task["inputRequests"], json!({}), "{task}");
    let (status, _) = host
        .call("PUT", &at("input-requests"), Some(ask("a")))
        .await;
    assert_eq!(status, 409, "a superseded key is never issued again");

    // A person answers in the window: the task goes back to working and keeps the host's ttlMs.
    host.call("PUT", &at("input-requests"), Some(ask("b")))
        .await;
    assert_eq!(
        host.read(&id).await["ttlMs"],
        600000,
        "waiting keeps the host's ttlMs"
    );
    s.answer(
        &id,
        "b",
        json!({"action": "accept", "content": {"region": "eu"}}),
    )
    .await;
    let task = host.read(&id).await;
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttlMs"], 600000, "{task}");
    assert_eq!(task["answers"]["b"]["content"]["region"], "eu");
}

#[tokio::test]
async fn the_hosted_task_list_comes_in_pages() {
    let s = Server::start(&[]).await;
    let host = Host {
        s: &s,
        token: s.token("tower-host"),
    };
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(host.create(json!({"tool": format!("t{i}")})).await);
        // Tasks of this principal that are not hosted are looked at but never listed.
        let job = json!({"external": {"name": "a job"}});
        s.v1_post(Some(&host.token), "/v1/jobs", job).await;
    }
    let mut seen = Vec::new();
    let mut path = "/v1/hosted-tasks?limit=3".to_string();
    let mut pages = 0;
    loop {
        let (status, page) = host.call("GET", &path, None).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        let tasks = page["tasks"].as_array().unwrap();
        assert!(tasks.len() <= 3);
        seen.extend(
            tasks
                .iter()
                .map(|t| t["taskId"].as_str().unwrap().to_string()),
        );
        match page["nextCursor"].as_str() {
            Some(c) => path = format!("/v1/hosted-tasks?limit=3&cursor={c}"),
            None => break,
        }
    }
    made.reverse();
    assert_eq!(seen, made, "every hosted task once, newest first");
    assert_eq!(pages, 4, "10 tasks looked at, 3 a page");

    // A cursor continues only its own list.
    let (_, first) = host.call("GET", "/v1/hosted-tasks?limit=1", None).await;
    let cursor = first["nextCursor"].as_str().unwrap().to_string();
    let someone_else = Host {
        s: &s,
        token: s.token("someone-else"),
    };
    for (caller, path) in [
        (
            &host,
            format!("/v1/hosted-tasks?status=working&cursor={cursor}"),
        ),
        (&someone_else, format!("/v1/hosted-tasks?cursor={cursor}")),
        (&host, format!("/v1/tasks?cursor={cursor}")),
        (&host, "/v1/hosted-tasks?limit=501".to_string()),
    ] {
        let (status, problem) = caller.call("GET", &path, None).await;
        assert_eq!(status, 400, "{path}: {problem}");
    }
}

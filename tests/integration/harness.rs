//! Starts `taskdeck serve` as a child process and speaks MCP (both eras) and `/v1` to it.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

pub const BIN: &str = env!("CARGO_BIN_EXE_taskdeck");

/// A running server and the temp dir it lives in.
pub struct Server {
    pub child: Child,
    pub port: u16,
    pub dir: PathBuf,
    pub admin: String,
    pub http: Client,
    _tmp: Option<tempfile::TempDir>,
}

/// A JSON-RPC reply: HTTP status and the JSON-RPC message (from JSON or from an SSE stream).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Reply {
    /// Asserts a `-32602` error whose message contains `text`.
    pub fn assert_invalid_params(&self, text: &str) {
        assert_eq!(self.error_code(), -32602, "{:?}", self.body);
        let message = self.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(text), "{message}");
    }

    pub fn result(&self) -> &Value {
        assert!(
            self.body.get("result").is_some(),
            "expected a result, got {} {}",
            self.status,
            self.body
        );
        &self.body["result"]
    }
    pub fn error_code(&self) -> i64 {
        self.body["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("expected an error, got {} {}", self.status, self.body))
    }
}

/// Stops `s` cleanly (SIGTERM) and waits for it to exit (10 s at most); its exit status.
pub async fn stop_cleanly(s: &mut Server) -> std::process::ExitStatus {
    let pid = s.child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), s.child.wait())
        .await
        .expect("a clean stop")
        .unwrap()
}

/// `script` (util-linux) running the shell command `line` on a new terminal, its output
/// captured. The line is `exec`ed: a shell that stayed in between (dash, `script`'s shell when
/// `SHELL` is unset, does not exec a lone command) would get Ctrl-C too and report its own
/// 130 instead of the command's exit code.
pub fn in_script(line: &str) -> Command {
    let mut script = Command::new("script");
    script.args(["-qec", &format!("exec {line}"), "/dev/null"]);
    script
}

pub fn meta(declare_tasks: bool) -> Value {
    let caps = if declare_tasks {
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({"elicitation": {}})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "taskdeck-tests", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// Parses a body that is either one JSON object or an SSE stream; returns the message with `id`.
pub fn parse_body(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return v;
    }
    let mut found = Value::Null;
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:")
            && let Ok(v) = serde_json::from_str::<Value>(data.trim())
            && v.get("id").is_some()
        {
            found = v;
        }
    }
    found
}

impl Server {
    /// Starts a server in a fresh temp dir.
    pub async fn start(extra: &[&str]) -> Server {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let mut s = Server::start_in(&dir, extra).await;
        s._tmp = Some(tmp);
        s
    }

    /// Starts a server on `dir` (kept: use for restarts).
    pub async fn start_in(dir: &Path, extra: &[&str]) -> Server {
        Server::start_with_env(dir, extra, &[]).await
    }

    /// Starts a server on `dir` like [`Server::start_in`], with `env` (name, value) added to its
    /// environment (e.g. an `LD_PRELOAD`).
    pub async fn start_with_env(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut cmd = Command::new(BIN);
        cmd.envs(env.iter().copied());
        cmd.arg("serve")
            .args(["--port", "0", "--data-dir"])
            .arg(dir.join("data"))
            .arg("--config-dir")
            .arg(dir.join("cfg"))
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn taskdeck");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) =
                    line.strip_prefix("Taskdeck is running headless on http://127.0.0.1:")
                {
                    return rest.trim().parse::<u16>().unwrap();
                }
            }
            panic!("server exited before listening");
        })
        .await
        .expect("server did not start in 20 s");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let admin = std::fs::read_to_string(dir.join("cfg/admin-token"))
            .unwrap()
            .trim()
            .to_string();
        Server {
            child,
            port,
            dir: dir.to_path_buf(),
            admin,
            http: Client::new(),
            _tmp: None,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Writes the approval policy (`<config dir>/policy.json`) as `{"rules": rules}`; the
    /// running server applies it at once.
    pub fn write_policy(&self, rules: Value) {
        let policy = serde_json::json!({ "rules": rules });
        std::fs::write(self.dir.join("cfg/policy.json"), policy.to_string()).unwrap();
    }

    /// SIGKILL, no chance to clean up.
    pub async fn kill(&mut self) {
        self.child.kill().await.unwrap();
    }

    /// Creates the human principal `name` (`POST /v1/agents` as the admin); returns its token.
    pub async fn human(&self, name: &str) -> String {
        let (status, made) = self
            .v1_post(
                Some(&self.admin),
                "/v1/agents",
                json!({"name": name, "role": "human"}),
            )
            .await;
        assert_eq!(status, 201, "{made}");
        made["token"].as_str().unwrap().to_string()
    }

    /// Creates a token for principal `name` with the CLI, against this server's data dir.
    pub fn token(&self, name: &str) -> String {
        let out = std::process::Command::new(BIN)
            .args(["token", "create", name, "--data-dir"])
            .arg(self.dir.join("data"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "token create failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// A 2026-07-28 JSON-RPC request with correct routing headers.
    pub async fn rpc(
        &self,
        token: Option<&str>,
        method: &str,
        params: Value,
        declare_tasks: bool,
    ) -> Reply {
        self.rpc_at("/mcp", token, method, params, declare_tasks)
            .await
    }

    /// [`Server::rpc`] to the MCP endpoint at `path` (e.g. `/mcp/fs`, one upstream's tools).
    pub async fn rpc_at(
        &self,
        path: &str,
        token: Option<&str>,
        method: &str,
        params: Value,
        declare_tasks: bool,
    ) -> Reply {
        let mut params = params;
        params["_meta"] = meta(declare_tasks);
        let name = match method {
            "tools/call" | "prompts/get" => params["name"].as_str().map(String::from),
            "resources/read" => params["uri"].as_str().map(String::from),
            "tasks/get" | "tasks/update" | "tasks/cancel" => {
                params["taskId"].as_str().map(String::from)
            }
            _ => None,
        };
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let mut headers = vec![("Mcp-Method", method.to_string())];
        if let Some(n) = name {
            headers.push(("Mcp-Name", n));
        }
        self.raw_at(path, token, &body.to_string(), &headers).await
    }

    /// POST `/mcp` with a 2026 header set plus `extra` headers; body as given.
    pub async fn raw(&self, token: Option<&str>, body: &str, extra: &[(&str, String)]) -> Reply {
        self.raw_at("/mcp", token, body, extra).await
    }

    /// [`Server::raw`] to the MCP endpoint at `path`.
    pub async fn raw_at(
        &self,
        path: &str,
        token: Option<&str>,
        body: &str,
        extra: &[(&str, String)],
    ) -> Reply {
        let mut req = self
            .http
            .post(self.url(path))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .body(body.to_string());
        for (k, v) in extra {
            req = req.header(*k, v);
        }
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap();
        Reply {
            status,
            body: parse_body(&text),
            headers,
        }
    }

    /// Opens a `subscriptions/listen` stream (2026-07-28) for `notifications` (e.g.
    /// `{"taskIds": [...]}`) with request id `id`; the response's body is the SSE stream.
    pub async fn listen(&self, token: &str, id: Value, notifications: Value) -> reqwest::Response {
        let params = json!({"notifications": notifications, "_meta": meta(true)});
        self.http
            .post(self.url("/mcp"))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "subscriptions/listen")
            .body(json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}).to_string())
            .send()
            .await
            .unwrap()
    }

    /// `tools/call` from a client that declares the tasks extension; returns the result.
    pub async fn call(&self, token: &str, tool: &str, args: Value) -> Value {
        let r = self
            .rpc(
                Some(token),
                "tools/call",
                json!({"name": tool, "arguments": args}),
                true,
            )
            .await;
        r.result().clone()
    }

    /// `tasks/get` result (panics on error).
    pub async fn get(&self, token: &str, task_id: &str) -> Value {
        self.rpc(Some(token), "tasks/get", json!({"taskId": task_id}), true)
            .await
            .result()
            .clone()
    }

    /// Polls `tasks/get` until `pred` holds (10 s at most).
    pub async fn wait_for(
        &self,
        token: &str,
        task_id: &str,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let start = Instant::now();
        loop {
            let t = self.get(token, task_id).await;
            if pred(&t) {
                return t;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what}: {t}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Runs `slow_compute` labelled `label` (10 ms) as `token`'s principal until it completes;
    /// returns its taskId.
    pub async fn completed_task(&self, token: &str, label: &str) -> String {
        let id = self
            .call(
                token,
                "slow_compute",
                json!({"seconds": 0.01, "label": label}),
            )
            .await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        self.wait_status(token, &id, "completed").await;
        id
    }

    pub async fn wait_status(&self, token: &str, task_id: &str, status: &str) -> Value {
        self.wait_for(token, task_id, status, |t| t["status"] == status)
            .await
    }

    /// GET a `/v1` path; returns status and JSON.
    pub async fn v1_get(&self, token: Option<&str>, path: &str) -> (StatusCode, Value) {
        let mut req = self.http.get(self.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap_or(Value::Null))
    }

    /// POST JSON to a `/v1` path; returns status, content type and JSON.
    pub async fn v1_post(
        &self,
        token: Option<&str>,
        path: &str,
        body: Value,
    ) -> (StatusCode, Value) {
        let mut req = self.http.post(self.url(path)).json(&body);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap_or(Value::Null))
    }
}

/// Serves `app` on an ephemeral port of 127.0.0.1 (a service for the tools to reach) until the
/// test ends; returns its base URL, `http://127.0.0.1:PORT`.
pub async fn serve_local(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

impl Server {
    /// The human (the admin token) answers input request `key` of task `id` with `response`
    /// (`POST /v1/tasks/{id}/input`); asserts the 200 and returns `{accepted, ignored, task}`.
    pub async fn answer(&self, id: &str, key: &str, response: Value) -> Value {
        let (status, body) = self
            .v1_post(
                Some(&self.admin),
                &format!("/v1/tasks/{id}/input"),
                json!({ "inputResponses": { key: response } }),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// The person with `token` reads task `id`'s masked call whole (`POST
    /// /v1/tasks/{id}/reveal`), as they must before approving it; asserts the 200 and returns
    /// the call's arguments as the agent gave them.
    pub async fn read_whole(&self, token: &str, id: &str) -> Value {
        let (status, body) = self
            .v1_post(Some(token), &format!("/v1/tasks/{id}/reveal"), json!({}))
            .await;
        assert_eq!(status, 200, "{body}");
        body["arguments"].clone()
    }
}

impl Reply {
    /// Sends `tasks/cancel` for `task_id` from a fresh client; returns the HTTP status.
    pub async fn cancel_via(url: &str, token: &str, task_id: &str) -> u16 {
        let mut params = json!({"taskId": task_id});
        params["_meta"] = meta(true);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": params});
        let resp = Client::new()
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tasks/cancel")
            .header("Mcp-Name", task_id)
            .bearer_auth(token)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let v: Value = resp.json().await.unwrap();
        assert_eq!(v["result"]["resultType"], "complete", "{v}");
        status
    }
}

/// A 2025-11-25 client: `initialize` opened a session (`Mcp-Session-Id`) for `token`.
pub struct LegacySession<'a> {
    pub s: &'a Server,
    pub token: String,
    pub session: String,
    pub next_id: i64,
    /// The `initialize` result.
    pub init: Value,
}

impl<'a> LegacySession<'a> {
    /// Opens a session declaring form elicitation.
    pub async fn open(s: &'a Server, token: &str) -> LegacySession<'a> {
        Self::open_with(s, token, json!({"elicitation": {}})).await
    }

    /// Opens a session declaring `capabilities`.
    pub async fn open_with(s: &'a Server, token: &str, capabilities: Value) -> LegacySession<'a> {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "legacy-agent", "version": "0.1"}}});
        let resp = Client::new()
            .post(s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .bearer_auth(token)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let session = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        let init = parse_body(&resp.text().await.unwrap());
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        assert_eq!(init["result"]["serverInfo"]["name"], "taskdeck");
        let mut me = LegacySession {
            s,
            token: token.into(),
            session,
            next_id: 1,
            init: init["result"].clone(),
        };
        me.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        me
    }

    /// The same session id presented with another principal's `token`.
    pub fn with_token(&self, token: &str) -> LegacySession<'a> {
        LegacySession {
            s: self.s,
            token: token.into(),
            session: self.session.clone(),
            next_id: 0,
            init: Value::Null,
        }
    }

    /// POSTs one message on the session; the HTTP response, unread (e.g. an SSE stream).
    pub async fn send(&self, body: Value) -> reqwest::Response {
        Client::new()
            .post(self.s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Mcp-Session-Id", &self.session)
            .bearer_auth(&self.token)
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }

    /// POSTs one message on the session; the reply (JSON or the SSE message with an id).
    pub async fn post(&mut self, body: Value) -> Value {
        let resp = self.send(body).await;
        assert!(resp.status().is_success(), "{}", resp.status());
        parse_body(&resp.text().await.unwrap())
    }

    /// Sends a request with the next id; its reply.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let reply = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    /// `tools/call`; its result.
    pub async fn tool(&mut self, name: &str, args: Value) -> Value {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await;
        assert!(r.get("result").is_some(), "{r}");
        r["result"].clone()
    }
}

/// An HTTP answer read whole: its status, its `Content-Type` ("" when none) and its JSON body
/// (`Null` when it is not JSON).
pub async fn read_answer(resp: reqwest::Response) -> (u16, String, Value) {
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (
        status,
        content_type,
        resp.json().await.unwrap_or(Value::Null),
    )
}

/// None of `secrets` is in the files of the Taskdeck whose dirs are under `dir`: its store (the
/// WAL included) and its policy.json.
pub fn assert_not_on_disk(dir: &Path, secrets: &[&str]) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("taskdeck.sqlite3")
        })
        .collect();
    files.push(dir.join("cfg/policy.json"));
    for path in files.iter().filter(|p| p.exists()) {
        let bytes = std::fs::read(path).unwrap();
        for secret in secrets {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds {secret}",
                path.display()
            );
        }
    }
}

/// Waits for task `id`'s approval question `key` (as the admin sees it) and checks that it
/// shows the call with `shown` and without `secret`, says values are hidden and how to read
/// them, offers neither an edit nor "always allow", and refuses (422) an answer asking for the
/// rule anyway. A person reads the call whole (`POST /v1/tasks/{id}/reveal`, with `secret`),
/// an agent does not (403), and the timeline records who read it, without the value. Nobody
/// approves it unread (422): the admin is refused, then reads it, and may approve it.
pub async fn assert_credential_question(
    s: &Server,
    id: &str,
    key: &str,
    shown: &str,
    secret: &str,
) {
    let waiting = s.wait_status(&s.admin, id, "input_required").await;
    let request = &waiting["inputRequests"][key]["params"];
    let question = request["message"].as_str().unwrap();
    assert!(
        question.contains(shown) && !question.contains(secret),
        "{question}"
    );
    // The person is told that what they approve holds values they cannot see.
    assert!(
        question.ends_with(&format!(
            "\n\nValues that look like credentials are hidden here ([redacted], ****), and \
             approving sends them as the agent gave them: a hidden value may be part of the \
             command. Read the call whole before you approve it (\"Show hidden values\" in \
             Taskdeck's window, or taskdeck tasks reveal {id})."
        )),
        "{question}"
    );
    assert_eq!(
        request["_meta"]["taskdeck/approval"]["hiddenValues"], true,
        "{request}"
    );
    let (_, queue) = s.v1_get(Some(&s.admin), "/v1/approvals").await;
    let listed = queue["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["taskId"] == id)
        .unwrap_or_else(|| panic!("{queue}"));
    assert_eq!(listed["hiddenValues"], true, "{listed}");
    // Approving it unread is refused, and records nothing.
    let approve = json!({"inputResponses": {key: {"action": "accept"}}});
    let input = format!("/v1/tasks/{id}/input");
    let (status, refused) = s.v1_post(Some(&s.admin), &input, approve.clone()).await;
    assert_eq!(status, 422, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains(&format!(
            "admin has not read it whole: read it first (`taskdeck tasks reveal {id}`"
        )),
        "{refused}"
    );
    let reveal = format!("/v1/tasks/{id}/reveal");
    let agent = s.token("reveal-probe");
    let (status, refused) = s.v1_post(Some(&agent), &reveal, json!({})).await;
    assert_eq!(status, 403, "an agent reads no hidden value: {refused}");
    let alice = s.human("reveal-alice").await;
    let (status, revealed) = s.v1_post(Some(&alice), &reveal, json!({})).await;
    assert_eq!(status, 200, "{revealed}");
    assert_eq!(revealed["taskId"], id, "{revealed}");
    assert!(
        revealed["arguments"].to_string().contains(secret),
        "the call as the agent gave it: {revealed}"
    );
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let shown_to = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "hiddenValuesShown")
        .unwrap_or_else(|| panic!("{detail}"));
    assert_eq!(shown_to["data"], json!({"by": "reveal-alice"}), "{detail}");
    // alice read it, the admin did not: the admin's approval still waits for that.
    let (status, refused) = s.v1_post(Some(&s.admin), &input, approve).await;
    assert_eq!(status, 422, "{refused}");
    let (_, still) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert!(still["task"]["inputRequests"].get(key).is_some(), "{still}");
    s.read_whole(&s.admin, id).await;
    assert!(!detail.to_string().contains(secret), "{detail}");
    let fields = &request["requestedSchema"]["properties"];
    assert!(
        fields.get("alwaysAllow").is_none() && fields.get("arguments").is_none(),
        "{request}"
    );
    let asks_for_the_rule = json!({"action": "accept", "content": {"alwaysAllow": true}});
    let (status, refused) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {key: asks_for_the_rule}}),
        )
        .await;
    assert_eq!(status, 422, "no rule can be asked for: {refused}");
    assert!(
        refused["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("no \"always allow\" rule can be saved"),
        "says why: {refused}"
    );
}

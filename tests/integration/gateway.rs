//! The gateway with real upstream MCP servers, started by the tests: the pinned
//! `@modelcontextprotocol/server-filesystem` and `server-everything` (over stdio and over
//! Streamable HTTP) and `tests/upstreams/faulty-server.mjs` (crashes, hangs, garbage, a
//! failed start), all put behind the real `taskdeck serve` through `<config dir>/servers.json`
//! and driven over real HTTP: MCP (2026-07-28) as the agent, `/v1` as the human.
//! The npm packages come from `scripts/setup.sh` (`npm ci` in tests/upstreams).

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::process::{Child, Command};

use crate::harness::{
    BIN, LegacySession, Reply, Server, assert_credential_question, assert_not_on_disk, stop_cleanly,
};

/// How long an upstream may take to start and show its tools.
const CONNECT_DEADLINE: Duration = Duration::from_secs(20);
/// How long a condition on a task may take to hold.
const TASK_DEADLINE: Duration = Duration::from_secs(15);

/// `tests/upstreams`, where the upstream servers are installed.
fn upstreams_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstreams")
}

/// The entry point of the installed npm package `@modelcontextprotocol/PACKAGE`.
fn package_entry(package: &str) -> String {
    let path = upstreams_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup.sh (npm ci in tests/upstreams)",
        path.display()
    );
    path.display().to_string()
}

/// A servers.json entry starting the fault server with `args` (e.g. `--garbage`).
fn faulty(args: &[&str]) -> Value {
    let script = upstreams_dir().join("faulty-server.mjs");
    let mut argv = vec![script.display().to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    json!({"command": "node", "args": argv})
}

/// A servers.json entry starting server-filesystem over `dir`.
fn filesystem(dir: &Path) -> Value {
    json!({"command": "node", "args": [package_entry("server-filesystem"), dir]})
}

/// A Taskdeck started on a temp dir whose servers.json lists `servers`, and an agent token.
struct Deck {
    s: Server,
    tmp: TempDir,
    agent: String,
}

impl Deck {
    /// Writes `<tmp>/cfg/servers.json` = `{"servers": servers}`, then starts Taskdeck.
    async fn start(servers: Value) -> Deck {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("cfg")).unwrap();
        std::fs::write(
            tmp.path().join("cfg/servers.json"),
            json!({ "servers": servers }).to_string(),
        )
        .unwrap();
        let s = Server::start_in(tmp.path(), &[]).await;
        let agent = s.token("agent1");
        Deck { s, tmp, agent }
    }

    /// SIGKILLs Taskdeck and starts it again on the same dirs.
    async fn restart(&mut self) {
        self.s.kill().await;
        self.s = Server::start_in(self.tmp.path(), &[]).await;
    }

    /// The tool names `tools/list` offers the agent at `path` (`/mcp` or `/mcp/NAME`).
    async fn tool_names(&self, path: &str) -> Vec<String> {
        let r = self
            .s
            .rpc_at(path, Some(&self.agent), "tools/list", json!({}), true)
            .await;
        r.result()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// Waits until `/mcp` lists `tool` (its upstream connected). Polls every 5 ms, so that the
    /// call a test makes next comes right after the listing (a tool listed must be callable).
    async fn wait_tool(&self, tool: &str) {
        let start = Instant::now();
        loop {
            let names = self.tool_names("/mcp").await;
            if names.iter().any(|n| n == tool) {
                return;
            }
            assert!(
                start.elapsed() < CONNECT_DEADLINE,
                "{tool} not listed after {CONNECT_DEADLINE:?}: {names:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// `tools/call` as the agent (declaring the tasks extension); the raw reply.
    async fn call(&self, tool: &str, arguments: Value) -> Reply {
        self.call_at("/mcp", tool, arguments, true).await
    }

    /// `tools/call` of `tool` at `path` (`/mcp` or `/mcp/NAME`) as the agent, declaring the
    /// tasks extension or not; the raw reply.
    async fn call_at(&self, path: &str, tool: &str, arguments: Value, tasks: bool) -> Reply {
        self.s
            .rpc_at(
                path,
                Some(&self.agent),
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
                tasks,
            )
            .await
    }

    /// `tools/call` that must be answered with a task; its id.
    async fn call_task(&self, tool: &str, arguments: Value) -> String {
        let reply = self.call(tool, arguments).await;
        let result = reply.result();
        assert_eq!(result["resultType"], "task", "expected a task: {result}");
        result["taskId"].as_str().unwrap().to_string()
    }

    /// The agent cancels task `id` (`tasks/cancel`); returns once the task reads `cancelled`,
    /// with the time that took.
    async fn cancel(&self, id: &str) -> Duration {
        let start = Instant::now();
        self.s
            .rpc(
                Some(&self.agent),
                "tasks/cancel",
                json!({"taskId": id}),
                true,
            )
            .await
            .result();
        self.wait_agent(id, "cancelled", |t| t["status"] == "cancelled")
            .await;
        start.elapsed()
    }

    /// Calls server-everything's `echo` with `message` and checks that it is served.
    async fn assert_everything_echoes(&self, message: &str) {
        let reply = self
            .call("everything__echo", json!({ "message": message }))
            .await;
        let text = text_of(&self.outcome(&reply).await);
        assert!(text.contains(message), "{text}");
    }

    /// The final `CallToolResult` of a call answered either at once or with a task.
    async fn outcome(&self, reply: &Reply) -> Value {
        let result = reply.result();
        if result["resultType"] != "task" {
            return result.clone();
        }
        let id = result["taskId"].as_str().unwrap();
        let task = self
            .wait_agent(id, "completed", |t| t["status"] == "completed")
            .await;
        task["result"].clone()
    }

    /// Polls `tasks/get` as the agent until `pred` holds.
    async fn wait_agent(&self, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let t = self.s.get(&self.agent, id).await;
            if pred(&t) {
                return t;
            }
            assert!(
                start.elapsed() < TASK_DEADLINE,
                "timed out waiting for {what}: {t}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// `GET /v1/tasks/{id}` as the admin: `{task, timeline, inputRounds}`.
    async fn detail(&self, id: &str) -> Value {
        let (status, body) = self
            .s
            .v1_get(Some(&self.s.admin), &format!("/v1/tasks/{id}"))
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Polls `GET /v1/tasks/{id}` until `pred` holds.
    async fn wait_detail(&self, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let d = self.detail(id).await;
            if pred(&d) {
                return d;
            }
            assert!(
                start.elapsed() < TASK_DEADLINE,
                "timed out waiting for {what}: {d}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The only task of `tool`, once failed, as the agent reads it (`tasks/get`); `reply`, the
    /// answer to its call, is that task or, when it failed within the settle time, the same
    /// error at once.
    async fn failed_task_of(&self, tool: &str, reply: &Reply) -> Value {
        let tasks = self.tasks_of(tool).await;
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        let id = tasks[0]["taskId"].as_str().unwrap();
        let failed = self
            .wait_agent(id, "failed", |t| t["status"] == "failed")
            .await;
        match reply.body.get("error") {
            Some(error) => assert_eq!(error["message"], failed["error"]["message"]),
            None => assert_eq!(reply.result()["taskId"], id, "{:?}", reply.body),
        }
        failed
    }

    /// The tasks of `tool` as the admin sees them in `/v1/tasks`, newest first.
    async fn tasks_of(&self, tool: &str) -> Vec<Value> {
        let (status, body) = self
            .s
            .v1_get(Some(&self.s.admin), &format!("/v1/tasks?tool={tool}"))
            .await;
        assert_eq!(status, 200, "{body}");
        body["tasks"].as_array().unwrap().clone()
    }

    /// Calls `tool` with `arguments` as the agent: its task id once it waits for the human.
    async fn asking(&self, tool: &str, arguments: Value) -> String {
        let id = self.call_task(tool, arguments).await;
        self.wait_detail(&id, "the approval question", |d| {
            d["task"]["status"] == "input_required"
        })
        .await;
        id
    }

    /// Task `id`'s detail once its upstream's first question (`elicitation-0`) waits for an
    /// answer.
    async fn wait_upstream_question(&self, id: &str) -> Value {
        self.wait_detail(id, "elicitation-0", |d| {
            d["inputRounds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["key"] == "elicitation-0" && r["state"] == "outstanding")
        })
        .await
    }

    /// Task `id` once it has ended (completed or failed), as the agent reads it.
    async fn ended(&self, id: &str) -> Value {
        self.wait_agent(id, "the call's end", |t| {
            t["status"] == "completed" || t["status"] == "failed"
        })
        .await
    }

    /// The human approves (or not) the gateway call `id`: `answer` is the `approve` response.
    async fn approve(&self, id: &str, answer: Value) {
        self.wait_detail(id, "the approval question", |d| {
            d["task"]["status"] == "input_required"
        })
        .await;
        let reply = self.s.answer(id, "approve", answer).await;
        assert_eq!(reply["accepted"], json!(["approve"]), "{reply}");
    }

    /// Taskdeck is still running and serving: the process lives and `/v1/me` answers.
    async fn assert_alive(&mut self) {
        assert!(
            self.s.child.try_wait().unwrap().is_none(),
            "taskdeck exited"
        );
        let (status, me) = self.s.v1_get(Some(&self.agent), "/v1/me").await;
        assert_eq!(status, 200, "{me}");
    }
}

/// The text of a `CallToolResult`'s content blocks, joined by newlines.
fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {result}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The kinds of a `/v1` task detail's timeline events.
fn timeline_kinds(detail: &Value) -> Vec<String> {
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Polls until `path` holds a line (a request id the fault server logged as cancelled).
async fn wait_cancel_logged(path: &Path) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(line) = text.lines().next() {
            return line.to_string();
        }
        assert!(
            start.elapsed() < TASK_DEADLINE,
            "no notifications/cancelled reached the upstream ({} is empty)",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

// ---- server-filesystem ------------------------------------------------------------------------

#[tokio::test]
async fn filesystem_read_answers_at_once_and_per_server_endpoint() {
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("hello.txt");
    std::fs::write(&file, "hello gateway").unwrap();
    let deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__read_text_file").await;

    // Read-only: runs without asking, answered with its CallToolResult although the client
    // takes tasks; the call is still a completed task for the human.
    let reply = deck.call("fs__read_text_file", json!({"path": file})).await;
    let result = reply.result();
    assert_ne!(result["resultType"], "task", "{result}");
    assert_eq!(text_of(result), "hello gateway");
    let tasks = deck.tasks_of("fs__read_text_file").await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0]["status"], "completed");
    assert_eq!(tasks[0]["principal"], "agent1");

    // /mcp/fs: the upstream's tools under their own names.
    let names = deck.tool_names("/mcp/fs").await;
    assert!(names.iter().any(|n| n == "read_text_file"), "{names:?}");
    assert!(names.iter().all(|n| !n.contains("__")), "{names:?}");
    let reply = deck
        .call_at("/mcp/fs", "read_text_file", json!({"path": file}), true)
        .await;
    assert_eq!(text_of(reply.result()), "hello gateway");
    // No such server: 404.
    let nope = deck
        .s
        .rpc_at(
            "/mcp/nope",
            Some(&deck.agent),
            "tools/list",
            json!({}),
            true,
        )
        .await;
    assert_eq!(nope.status, 404, "{:?}", nope.body);
}

/// A read-only tool runs at once, but not on Taskdeck's own files: reading the admin token
/// waits for a person; a token that reaches an agent anyway (a copy in a file) comes back
/// masked, so an agent never holds a person's token to decide its own calls.
#[tokio::test]
async fn an_agent_reads_no_taskdeck_token_through_an_upstream() {
    let files = tempfile::tempdir().unwrap();
    let deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__read_text_file").await;
    let token_file = deck.tmp.path().join("cfg/admin-token");
    let id = deck
        .call_task("fs__read_text_file", json!({"path": token_file}))
        .await;
    let asked = deck
        .wait_detail(&id, "input_required", |d| {
            d["task"]["status"] == "input_required"
        })
        .await;
    let why = asked["inputRounds"][0]["request"]["params"]["_meta"]["taskdeck/approval"]["verdict"]
        ["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(why.contains("it names Taskdeck's own files"), "{asked}");

    // Relative to a server's root, the token file is known by its name.
    let id = deck
        .call_task("fs__read_media_file", json!({"path": "cfg/admin-token"}))
        .await;
    deck.wait_detail(&id, "input_required", |d| {
        d["task"]["status"] == "input_required"
    })
    .await;

    let copy = files.path().join("notes.txt");
    std::fs::write(&copy, format!("deploy key: {}\n", deck.s.admin)).unwrap();
    let reply = deck.call("fs__read_text_file", json!({"path": copy})).await;
    let text = text_of(&deck.outcome(&reply).await);
    assert_eq!(text, "deploy key: [redacted]\n");
    // Read as media, the file comes as base64: masked inside it too.
    let reply = deck
        .call("fs__read_media_file", json!({"path": copy}))
        .await;
    let media = deck.outcome(&reply).await;
    let block = &media["content"][0];
    let data = block["data"]
        .as_str()
        .or(block["resource"]["blob"].as_str())
        .unwrap_or_default();
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        "deploy key: [redacted]\n",
        "{media}"
    );
    let stored = deck.tasks_of("fs__read_text_file").await;
    assert!(
        !serde_json::to_string(&stored)
            .unwrap()
            .contains(&deck.s.admin),
        "{stored:?}"
    );
}

#[tokio::test]
async fn filesystem_write_waits_for_the_human() {
    let files = tempfile::tempdir().unwrap();
    let deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__write_file").await;

    // Approved: nothing is written until the human accepts.
    let target = files.path().join("approved.txt");
    let id = deck
        .call_task(
            "fs__write_file",
            json!({"path": target, "content": "written after approval"}),
        )
        .await;
    let seen = deck.s.get(&deck.agent, &id).await;
    assert_eq!(seen["status"], "working", "{seen}");
    assert!(
        seen["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Waiting for approval"),
        "{seen}"
    );
    let asked = deck
        .wait_detail(&id, "input_required", |d| {
            d["task"]["status"] == "input_required"
        })
        .await;
    let round = &asked["inputRounds"][0];
    assert_eq!(round["key"], "approve", "{asked}");
    assert_eq!(round["humanOnly"], true, "{asked}");
    let question = round["request"]["params"]["message"].as_str().unwrap();
    for part in ["agent1", "write_file", "fs", target.to_str().unwrap()] {
        assert!(question.contains(part), "{part:?} not in {question}");
    }
    assert!(!target.exists(), "written before approval");
    deck.approve(&id, json!({"action": "accept", "content": {}}))
        .await;
    let done = deck
        .wait_agent(&id, "completed", |t| t["status"] == "completed")
        .await;
    assert_ne!(done["result"]["isError"], true, "{done}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "written after approval"
    );

    // Declined with a reason: no file, and the agent reads the reason.
    let refused = files.path().join("declined.txt");
    let id = deck
        .call_task(
            "fs__write_file",
            json!({"path": refused, "content": "never"}),
        )
        .await;
    deck.approve(
        &id,
        json!({"action": "decline", "content": {"reason": "not in my notes folder"}}),
    )
    .await;
    let done = deck
        .wait_agent(&id, "completed", |t| t["status"] == "completed")
        .await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(
        text_of(&done["result"]).contains("not in my notes folder"),
        "{done}"
    );
    assert!(!refused.exists(), "a declined write happened");
    // Marked as Taskdeck's refusal, for the window's "Declined"; the approved write was not.
    let mark = |t: &Value| t["result"]["_meta"]["io.taskdeck/refusal"].clone();
    assert_eq!(mark(&done), "declined", "{done}");
    let written = deck.tasks_of("fs__write_file").await;
    assert_eq!(written.len(), 2, "{written:?}");
    assert_eq!(mark(&written[0]), "declined", "{written:?}");
    assert_eq!(mark(&written[1]), Value::Null, "{written:?}");

    // Approved edited: the call made is the human's, and the task shows it (title, arguments),
    // the one asked for kept in its timeline.
    let (asked_for, written) = (
        files.path().join("asked.txt"),
        files.path().join("edited.txt"),
    );
    let id = deck
        .call_task(
            "fs__write_file",
            json!({"path": asked_for, "content": "as asked"}),
        )
        .await;
    let edit = json!({"path": written, "content": "as edited"}).to_string();
    deck.approve(
        &id,
        json!({"action": "accept", "content": {"arguments": edit}}),
    )
    .await;
    let seen = deck
        .wait_agent(&id, "completed", |t| t["status"] == "completed")
        .await;
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "as edited");
    assert!(!asked_for.exists());
    // The agent is told first that its call was edited, and with what it was made; the
    // server's own answer follows.
    let content = seen["result"]["content"].as_array().unwrap();
    let told = content[0]["text"].as_str().unwrap();
    assert!(
        told.starts_with("A person edited this call before approving it")
            && told.contains("edited.txt"),
        "{seen}"
    );
    assert!(
        content[1]["text"]
            .as_str()
            .unwrap()
            .contains("Successfully wrote"),
        "{seen}"
    );
    let detail = deck.detail(&id).await;
    assert_eq!(
        detail["task"]["arguments"]["path"],
        written.to_str().unwrap(),
        "{detail}"
    );
    let edited = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "argumentsEdited")
        .unwrap_or_else(|| panic!("{detail}"));
    assert_eq!(
        edited["data"]["previous"]["path"],
        asked_for.to_str().unwrap()
    );
}

#[tokio::test]
async fn filesystem_always_allow_runs_the_same_call_unasked() {
    let files = tempfile::tempdir().unwrap();
    let deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__write_file").await;
    let target = files.path().join("always.txt");
    let arguments = json!({"path": target, "content": "same every time"});
    let id = deck.call_task("fs__write_file", arguments.clone()).await;
    deck.approve(
        &id,
        json!({"action": "accept", "content": {"alwaysAllow": true}}),
    )
    .await;
    deck.wait_agent(&id, "completed", |t| t["status"] == "completed")
        .await;
    std::fs::remove_file(&target).unwrap();
    // The same call with the same arguments: no question, answered at once.
    let reply = deck.call("fs__write_file", arguments).await;
    let result = reply.result();
    assert_ne!(result["resultType"], "task", "asked again: {result}");
    assert_ne!(result["isError"], true, "{result}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "same every time");
    // The same call with one argument more is not the call the human approved: asked again.
    let mut wider = json!({"path": target, "content": "same every time"});
    wider["extra"] = json!("more");
    let id = deck.call_task("fs__write_file", wider).await;
    deck.wait_detail(&id, "the approval question", |d| {
        d["task"]["status"] == "input_required"
    })
    .await;
}

/// A call waiting for its approval while its server's entry in servers.json changes goes to the
/// server as it now runs once approved; removed, it fails at once saying so.
#[tokio::test]
async fn an_approved_call_goes_to_the_server_as_servers_json_now_has_it() {
    let files = tempfile::tempdir().unwrap();
    let deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__write_file").await;
    let servers_json = deck.tmp.path().join("cfg/servers.json");
    let servers = |body: Value| {
        std::fs::write(&servers_json, json!({ "servers": body }).to_string()).unwrap();
    };
    let target = files.path().join("after-change.txt");
    let id = deck
        .asking("fs__write_file", json!({"path": target, "content": "sent"}))
        .await;
    // A new env var: the server is restarted as a new connection.
    let mut changed = filesystem(files.path());
    changed["env"] = json!({"DEBUG": "1"});
    servers(json!({"fs": changed}));
    let start = Instant::now();
    loop {
        let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        let fs = &body["servers"][0];
        if fs["envKeys"] == json!(["DEBUG"]) && fs["state"] == "connected" {
            break;
        }
        assert!(start.elapsed() < CONNECT_DEADLINE, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    deck.approve(&id, json!({"action": "accept", "content": {}}))
        .await;
    let done = deck.ended(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "sent");

    // Removed while a call waits: approved, it fails at once, not after the connect wait.
    let gone = files.path().join("never.txt");
    let id = deck
        .asking("fs__write_file", json!({"path": gone, "content": "x"}))
        .await;
    servers(json!({}));
    // Gone once the gateway has reloaded the file (/v1/servers reads the file itself).
    let start = Instant::now();
    while deck
        .tool_names("/mcp")
        .await
        .iter()
        .any(|n| n.starts_with("fs__"))
    {
        assert!(start.elapsed() < CONNECT_DEADLINE, "fs still served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let approved = Instant::now();
    deck.approve(&id, json!({"action": "accept", "content": {}}))
        .await;
    let failed = deck
        .wait_agent(&id, "failed", |t| t["status"] == "failed")
        .await;
    assert!(approved.elapsed() < Duration::from_secs(5));
    let said = failed["statusMessage"].as_str().unwrap_or_default();
    assert!(said.contains("removed from servers.json"), "{failed}");
    assert!(!gone.exists());
}

/// A restart that finds servers.json broken keeps the calls waiting for a human: each is asked
/// again; approved before the file is mended, it waits for it, saying so, then goes to its
/// server.
#[tokio::test]
async fn a_broken_servers_json_at_restart_keeps_waiting_calls() {
    let files = tempfile::tempdir().unwrap();
    let mut deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__write_file").await;
    let target = files.path().join("kept.txt");
    let id = deck
        .asking("fs__write_file", json!({"path": target, "content": "kept"}))
        .await;
    deck.s.kill().await;
    let servers_json = deck.tmp.path().join("cfg/servers.json");
    std::fs::write(&servers_json, "{,").unwrap();
    deck.s = Server::start_in(deck.tmp.path(), &[]).await;
    deck.wait_detail(&id, "asked again", |d| {
        d["task"]["status"] == "input_required"
    })
    .await;
    deck.approve(&id, json!({"action": "accept", "content": {}}))
        .await;
    let held = deck
        .wait_agent(&id, "the approved call held", |t| {
            t["statusMessage"]
                .as_str()
                .is_some_and(|m| m.starts_with("Approved, not sent yet: "))
        })
        .await;
    assert_eq!(held["status"], "working", "{held}");
    assert!(!target.exists());
    std::fs::write(
        &servers_json,
        json!({"servers": {"fs": filesystem(files.path())}}).to_string(),
    )
    .unwrap();
    let done = deck.ended(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
}

/// A call waiting for approval whose server was removed from servers.json while Taskdeck was
/// stopped fails at the next start saying so, not as if the restart were the cause.
#[tokio::test]
async fn a_waiting_call_whose_server_was_removed_meanwhile_says_so() {
    let files = tempfile::tempdir().unwrap();
    let mut deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__write_file").await;
    let target = files.path().join("never.txt");
    let id = deck
        .asking("fs__write_file", json!({"path": target, "content": "x"}))
        .await;
    deck.s.kill().await;
    std::fs::write(
        deck.tmp.path().join("cfg/servers.json"),
        json!({"servers": {}}).to_string(),
    )
    .unwrap();
    deck.s = Server::start_in(deck.tmp.path(), &[]).await;
    let done = deck.ended(&id).await;
    assert_eq!(done["status"], "failed", "{done}");
    let said = done["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        said,
        "Task interrupted: Taskdeck restarted while it waited for input, and no longer has its tool fs__write_file",
        "{done}"
    );
    assert!(!target.exists());
}

/// A call that two humans must approve, approved by one when Taskdeck restarts, was never
/// sent: it is asked again (not failed as "it may have run"), and runs once both approve.
#[tokio::test]
async fn a_call_half_approved_at_restart_is_asked_again() {
    let files = tempfile::tempdir().unwrap();
    let mut deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.s.write_policy(
        json!([{"principal": "*", "server": "fs", "tool": "write_file",
        "decision": "ask", "approval": {"humans": 2}}]),
    );
    deck.wait_tool("fs__write_file").await;
    let target = files.path().join("half.txt");
    let id = deck
        .asking("fs__write_file", json!({"path": target, "content": "both"}))
        .await;
    deck.approve(&id, json!({"action": "accept", "content": {}}))
        .await;
    deck.wait_detail(&id, "the second human's question", |d| {
        d["task"]["inputRequests"].get("approve#2").is_some()
    })
    .await;
    deck.restart().await;
    let asked = deck
        .wait_detail(&id, "asked again", |d| {
            d["task"]["status"] == "input_required" || d["task"]["status"] == "failed"
        })
        .await;
    assert_eq!(asked["task"]["status"], "input_required", "{asked}");
    assert!(!target.exists());
    deck.wait_tool("fs__write_file").await;
    let key = asked["task"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    // The second human: the admin approved already.
    let alice = deck.s.human("alice").await;
    let (status, reply) = deck
        .s
        .v1_post(
            Some(&alice),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {key: {"action": "accept", "content": {}}}}),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    let done = deck.ended(&id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "both");
}

#[tokio::test]
async fn per_server_endpoint_offers_the_follow_up_tools() {
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("a.txt"), "x").unwrap();
    let deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    // The last tool server-filesystem lists: its tools are offered as each is registered, and
    // the two listings compared below must not fall on either side of one registration.
    deck.wait_tool("fs__list_allowed_directories").await;
    let names = deck.tool_names("/mcp/fs").await;
    for name in ["task_status", "task_respond", "task_cancel", "write_file"] {
        assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
    }
    // With a trailing slash, the same endpoint.
    assert_eq!(deck.tool_names("/mcp/fs/").await, names);
    // A client without tasks gets a handle for a call that waits, and follows it up there.
    let reply = deck
        .call_at(
            "/mcp/fs",
            "write_file",
            json!({"path": files.path().join("b.txt"), "content": "y"}),
            false,
        )
        .await;
    let id = reply.result()["structuredContent"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no handle: {:?}", reply.result()))
        .to_string();
    let status = deck
        .call_at("/mcp/fs", "task_status", json!({"taskId": id}), false)
        .await;
    assert_eq!(
        status.result()["structuredContent"]["task"]["taskId"],
        id,
        "{:?}",
        status.result()
    );
}

#[tokio::test]
async fn secrets_of_an_upstream_url_never_reach_an_answer() {
    // Nothing listens on port 9 (discard): every request to it fails, quoting the URL.
    let deck = Deck::start(json!({
        "web": {"url": "http://127.0.0.1:9/mcp?token=qsecret999&x=1", "headers": {"Authorization": "Bearer hsecret777"}},
        "Bad Name": {"command": "true"},
        // Not a spec at all (both ways to reach it): it costs only itself.
        "both": {"command": "true", "url": "http://x.example/mcp", "headers": {"X-Key": "ksecret555"}},
        // A typo: kept aside, shown with its target (masked as any).
        "typo": {"url": "http://x.example/mcp?key=qsecret999", "header": {"X-Key": "ksecret555"}},
    }))
    .await;
    let start = Instant::now();
    loop {
        let (_, servers) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        let text = servers.to_string();
        assert!(
            !text.contains("qsecret999")
                && !text.contains("hsecret777")
                && !text.contains("ksecret555"),
            "{text}"
        );
        let named = |name: &str| {
            servers["servers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name)
                .cloned()
        };
        let (web, bad) = (named("web"), named("Bad Name"));
        if web
            .as_ref()
            .is_some_and(|w| w["state"] == "failed" && w["lastError"].is_string())
        {
            let bad = bad.expect("the invalid entry is shown");
            assert_eq!(bad["state"], "failed", "{bad}");
            assert!(
                bad["lastError"].as_str().unwrap().contains("not started"),
                "{bad}"
            );
            let both = named("both").expect("the entry that is not a spec is shown");
            assert_eq!(both["state"], "failed", "{both}");
            assert_eq!(
                both["lastError"],
                "not started: it has both `command` and `url`: give one"
            );
            assert_eq!(both["headerNames"], json!(["X-Key"]));
            assert_eq!(both["target"], "http://x.example/mcp | true");
            let typo = named("typo").expect("the entry with a typo is shown");
            assert_eq!(typo["target"], "http://x.example/mcp?key=[redacted]");
            assert!(
                typo["lastError"]
                    .as_str()
                    .unwrap()
                    .starts_with("not started: unknown field `header`"),
                "{typo}"
            );
            break;
        }
        assert!(start.elapsed() < CONNECT_DEADLINE, "{text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The invalid entry serves nothing.
    let names = deck.tool_names("/mcp").await;
    assert!(
        !names.iter().any(|n| n.starts_with("Bad Name")),
        "{names:?}"
    );
}

// ---- server-everything ------------------------------------------------------------------------

/// A servers.json entry starting server-everything over stdio.
fn everything_over_stdio_spec() -> Value {
    json!({"command": "node", "args": [package_entry("server-everything"), "stdio"]})
}

/// `node dist/index.js streamableHttp` of server-everything on a free port, killed with the test.
struct EverythingOverHttp {
    _child: Child,
    url: String,
    port: u16,
}

impl EverythingOverHttp {
    /// Its servers.json entry.
    fn spec(&self) -> Value {
        json!({ "url": self.url })
    }

    async fn start() -> EverythingOverHttp {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self::start_on(port).await
    }

    /// Started on `port` (a restart of one that was there).
    async fn start_on(port: u16) -> EverythingOverHttp {
        let child = Command::new("node")
            .arg(package_entry("server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start node");
        let start = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                start.elapsed() < CONNECT_DEADLINE,
                "server-everything does not listen on {port}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        EverythingOverHttp {
            _child: child,
            url: format!("http://127.0.0.1:{port}/mcp"),
            port,
        }
    }
}

/// The policy's deny rules hold for an upstream's resources and prompts (the tools
/// `resources/read` with `uri` and `prompts/get` with `name`): what the agent may not read is
/// not listed to it, and reading it is refused naming the rule; another agent is not concerned.
#[tokio::test]
async fn a_deny_rule_covers_resources_and_prompts() {
    let deck = Deck::start(json!({"everything": everything_over_stdio_spec(),
                                  "faulty": faulty(&["--resource"])}))
    .await;
    deck.wait_tool("everything__echo").await;
    deck.wait_tool("faulty__echo").await;
    let rules = json!({"rules": [
        {"id": "r-docs01", "principal": "agent1", "server": "everything", "tool": "resources/read",
         "arguments": {"uri": "demo://resource/static/*"}, "decision": "deny"},
        {"id": "r-docs02", "principal": "agent1", "server": "*", "tool": "prompts/get",
         "arguments": {"name": "simple-prompt"}, "decision": "deny"},
        {"id": "r-blob01", "principal": "agent1", "server": "everything", "tool": "resources/read",
         "arguments": {"uri": "demo://resource/dynamic/blob/*"}, "decision": "deny"}
    ]});
    let put = deck
        .s
        .http
        .put(deck.s.url("/v1/policy"))
        .bearer_auth(&deck.s.admin)
        .json(&rules)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let other = deck.s.token("agent2");
    let listed = |token: String, method: &'static str, key: &'static str| {
        let deck = &deck;
        async move {
            let reply = deck.s.rpc(Some(&token), method, json!({}), true).await;
            reply.result()[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    r.get("uri")
                        .unwrap_or(&r["name"])
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect::<Vec<_>>()
        }
    };
    // Another agent sees the documents and the prompt; this one neither.
    let theirs = listed(other.clone(), "resources/list", "resources").await;
    let document = theirs
        .iter()
        .find(|u| u.starts_with("demo://resource/static/document/"))
        .expect("server-everything lists its documents")
        .clone();
    let mine = listed(deck.agent.clone(), "resources/list", "resources").await;
    assert!(!mine.contains(&document), "{mine:?}");
    let prompt = "everything__simple-prompt".to_string();
    assert!(
        listed(other.clone(), "prompts/list", "prompts")
            .await
            .contains(&prompt)
    );
    let mine = listed(deck.agent.clone(), "prompts/list", "prompts").await;
    assert!(!mine.contains(&prompt) && !mine.is_empty(), "{mine:?}");
    // Reading them is refused, naming the rule; what no rule denies is read.
    let read = json!({"uri": document});
    let get = json!({"name": prompt});
    for (params, method, rule) in [
        (&read, "resources/read", "r-docs01"),
        (&get, "prompts/get", "r-docs02"),
    ] {
        let denied = deck
            .s
            .rpc(Some(&deck.agent), method, params.clone(), true)
            .await;
        assert_eq!(denied.error_code(), -32600, "{:?}", denied.body);
        let why = denied.body["error"]["message"].as_str().unwrap();
        assert!(why.contains("policy denies") && why.contains(rule), "{why}");
        // Not "not found" because another upstream (faulty) does not have it, and nothing
        // of the other upstreams' errors.
        assert!(denied.body["error"]["data"].is_null(), "{:?}", denied.body);
        let reply = deck.s.rpc(Some(&other), method, params.clone(), true).await;
        assert!(reply.result().is_object(), "{method}");
    }
    let dynamic = json!({"uri": "demo://resource/dynamic/text/1"});
    let reply = deck
        .s
        .rpc(Some(&deck.agent), "resources/read", dynamic, true)
        .await;
    assert!(reply.result()["contents"].is_array(), "{:?}", reply.body);
    let note = json!({"uri": "faulty://note"});
    let reply = deck
        .s
        .rpc(Some(&deck.agent), "resources/read", note, true)
        .await;
    assert_eq!(
        reply.result()["contents"][0]["text"],
        "a note",
        "{:?}",
        reply.body
    );
    // Taskdeck's own files are refused whatever the URI's spelling: a read answers at once,
    // so no person can be asked (docs/security.md).
    let cfg = deck.tmp.path().join("cfg").display().to_string();
    let own = json!({"uri": format!("file://{cfg}/servers%2Ejson")});
    let refused = deck
        .s
        .rpc(Some(&deck.agent), "resources/read", own, true)
        .await;
    assert_eq!(refused.error_code(), -32600, "{:?}", refused.body);
    let why = refused.body["error"]["message"].as_str().unwrap();
    assert!(why.contains("naming Taskdeck's own files"), "{why}");
    // What no upstream has and no rule denies is "not found" (-32602 since 2026-07-28).
    let nowhere = json!({"uri": "demo://resource/nowhere"});
    let reply = deck
        .s
        .rpc(Some(&deck.agent), "resources/read", nowhere, true)
        .await;
    assert_eq!(reply.error_code(), -32602, "{:?}", reply.body);
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not found")
    );
    // Another spelling of a denied URI is denied, and so is a prompt that embeds one.
    let name = document.rsplit('/').next().unwrap();
    for spelled in [
        document.replacen("demo:", "DEMO:", 1),
        format!("demo://resource/static/document/./{name}"),
    ] {
        let params = json!({ "uri": spelled });
        let denied = deck
            .s
            .rpc(Some(&deck.agent), "resources/read", params, true)
            .await;
        assert_eq!(denied.error_code(), -32600, "{spelled}: {:?}", denied.body);
    }
    let embeds = |kind: &str| json!({"name": "everything__resource-prompt", "arguments": {"resourceType": kind, "resourceId": "1"}});
    let denied = deck
        .s
        .rpc(Some(&deck.agent), "prompts/get", embeds("Blob"), true)
        .await;
    assert_eq!(denied.error_code(), -32600, "{:?}", denied.body);
    let why = denied.body["error"]["message"].as_str().unwrap();
    assert!(
        why.contains("demo://resource/dynamic/blob/1") && why.contains("r-blob01"),
        "{why}"
    );
    let text = deck
        .s
        .rpc(Some(&deck.agent), "prompts/get", embeds("Text"), true)
        .await;
    assert!(text.result()["messages"].is_array(), "{:?}", text.body);
    // A tool's result is no way around the rule: a denied resource it carries is withheld,
    // saying so; one the agent may read stays.
    let reference = |kind: &str| json!({"resourceType": kind, "resourceId": 1});
    let reply = deck
        .call("everything__get-resource-reference", reference("Blob"))
        .await;
    let result = deck.outcome(&reply).await;
    let shown = result.to_string();
    assert!(
        shown.contains("withheld the resource demo://resource/dynamic/blob/1")
            && shown.contains("r-blob01"),
        "{shown}"
    );
    assert!(
        !result["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "resource"),
        "{shown}"
    );
    let reply = deck
        .call("everything__get-resource-reference", reference("Text"))
        .await;
    let result = deck.outcome(&reply).await;
    assert!(
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "resource"
                && b["resource"]["uri"] == "demo://resource/dynamic/text/1"),
        "{result}"
    );
}

/// Progress in the timeline, an elicitation answered by the human, and a cancel, through
/// server-everything reached as `spec`.
async fn everything_through_the_gateway(spec: Value) {
    let deck = Deck::start(json!({"everything": spec})).await;
    deck.wait_tool("everything__trigger-long-running-operation")
        .await;

    // Its prompts and resources pass through: a 2026-07-28 client gets each result with its
    // `resultType` (the upstream speaks 2025-11-25 and sends none), a 2025-11-25 client without.
    let prompt = json!({"name": "everything__simple-prompt"});
    let resource = json!({"uri": "demo://resource/dynamic/text/1"});
    for (method, params) in [("prompts/get", &prompt), ("resources/read", &resource)] {
        let reply = deck
            .s
            .rpc(Some(&deck.agent), method, params.clone(), true)
            .await;
        let result = reply.result();
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert!(
            result["messages"].is_array() || result["contents"].is_array(),
            "{method}: {result}"
        );
        let mut legacy = LegacySession::open(&deck.s, &deck.agent).await;
        let reply = legacy.request(method, params.clone()).await;
        assert!(reply["result"].is_object(), "{method}: {reply}");
        assert!(
            reply["result"].get("resultType").is_none(),
            "{method}: {reply}"
        );
    }

    // A long operation (read-only: runs unasked) outlives the settle time: a task.
    let long = deck
        .call_task(
            "everything__trigger-long-running-operation",
            json!({"duration": 2, "steps": 4}),
        )
        .await;

    // Another one, cancelled by the agent: it ends `cancelled` at once.
    let doomed = deck
        .call_task(
            "everything__trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
        )
        .await;
    let took = deck.cancel(&doomed).await;
    assert!(took < Duration::from_secs(3), "the cancel took {took:?}");

    // The elicitation tool asks for approval first, then its elicitation becomes the human's
    // input request `elicitation-0`; the answer reaches the upstream.
    let elicit = deck
        .call_task("everything__trigger-elicitation-request", json!({}))
        .await;
    deck.approve(&elicit, json!({"action": "accept", "content": {}}))
        .await;
    let waiting = deck
        .wait_detail(&elicit, "elicitation-0", |d| {
            d["task"]["status"] == "input_required"
                && d["inputRounds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|r| r["key"] == "elicitation-0" && r["state"] == "outstanding")
        })
        .await;
    // The task says it waits for an answer to the upstream's question, not for the upstream.
    let said = waiting["task"]["statusMessage"]
        .as_str()
        .unwrap_or_default();
    assert!(said.starts_with("everything asks: "), "{waiting}");
    // The inbox names the upstream and its tool as the one asking.
    let (_, inbox) = deck.s.v1_get(Some(&deck.s.admin), "/v1/approvals").await;
    let asking = inbox["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["taskId"] == elicit.as_str())
        .unwrap_or_else(|| panic!("not in the inbox: {inbox}"));
    assert_eq!(asking["kind"], "question");
    assert_eq!(
        (&asking["server"], &asking["tool"]),
        (&json!("everything"), &json!("trigger-elicitation-request"))
    );
    // And still does once the call has been waiting long enough to say where it is.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let later = deck.detail(&elicit).await;
    assert!(
        later["task"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("everything asks: ")),
        "{later}"
    );
    deck.s
        .answer(
            &elicit,
            "elicitation-0",
            json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}),
        )
        .await;
    let done = deck
        .wait_agent(&elicit, "completed", |t| t["status"] == "completed")
        .await;
    let text = text_of(&done["result"]);
    assert!(text.contains("Name: Ada Lovelace"), "{text}");

    // The long operation completed, its progress in the timeline.
    let done = deck
        .wait_agent(&long, "completed", |t| t["status"] == "completed")
        .await;
    assert!(
        text_of(&done["result"]).contains("Long running operation completed"),
        "{done}"
    );
    let detail = deck.detail(&long).await;
    let progress: Vec<&Value> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "progress")
        .collect();
    assert!(progress.len() >= 2, "{detail}");
}

#[tokio::test]
async fn everything_over_stdio() {
    everything_through_the_gateway(everything_over_stdio_spec()).await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let upstream = EverythingOverHttp::start().await;
    everything_through_the_gateway(upstream.spec()).await;
}

/// A server-everything restarted between two calls, nothing in flight: the new process forgot
/// the session and refuses the next call with 400 and a JSON-RPC error without an id naming the
/// session ("Bad Request: No valid session ID provided", the TypeScript SDK's answer, where the
/// spec has 404). That call did not run: a new session is started and the call sent again in
/// it, so it is served (rather than failed as "it may have run"), and so are the next ones.
#[tokio::test]
async fn a_call_after_the_server_restarted_is_sent_again_in_a_new_session() {
    let upstream = EverythingOverHttp::start().await;
    let port = upstream.port;
    let deck = Deck::start(json!({"everything": upstream.spec()})).await;
    deck.wait_tool("everything__echo").await;
    deck.assert_everything_echoes("one").await;
    drop(upstream);
    let _restarted = EverythingOverHttp::start_on(port).await;
    // Long enough for the HTTP client to have dropped its connections to the old process.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let started = Instant::now();
    deck.assert_everything_echoes("two").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    deck.assert_everything_echoes("three").await;
}

/// A server-everything killed while a call runs in it (nothing listens any more): the call
/// fails within seconds ("it may have run") instead of waiting out its timeout while the
/// client tries to resume the call's event stream, and once the server is back the next call
/// is served.
#[tokio::test]
async fn an_http_server_killed_mid_call_fails_the_call_in_seconds() {
    let upstream = EverythingOverHttp::start().await;
    let port = upstream.port;
    let deck = Deck::start(json!({"everything": upstream.spec()})).await;
    deck.wait_tool("everything__trigger-long-running-operation")
        .await;
    let id = deck
        .call_task(
            "everything__trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
        )
        .await;
    deck.wait_detail(&id, "its first progress", |d| {
        d["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "progress")
    })
    .await;
    let killed = Instant::now();
    drop(upstream);
    let failed = deck
        .wait_agent(&id, "failed", |t| t["status"] == "failed")
        .await;
    assert!(
        killed.elapsed() < Duration::from_secs(10),
        "{:?}",
        killed.elapsed()
    );
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("everything") && message.contains("it may have run"),
        "{failed}"
    );
    let _back = EverythingOverHttp::start_on(port).await;
    deck.assert_everything_echoes("back").await;
}

/// A deck whose one server, server-everything over HTTP, was connected and has gone away since,
/// and the port it was on (to start it again there).
async fn everything_gone_away() -> (Deck, u16) {
    let upstream = EverythingOverHttp::start().await;
    let port = upstream.port;
    let deck = Deck::start(json!({"everything": upstream.spec()})).await;
    deck.wait_tool("everything__echo").await;
    drop(upstream);
    // Long enough for the HTTP client to have dropped its connections to the old process.
    tokio::time::sleep(Duration::from_secs(1)).await;
    (deck, port)
}

/// A server-everything that went away between calls, with no call to find out: its status
/// stops saying "connected" within seconds, naming why, because its event stream (the `GET`
/// the client keeps open) can no longer reach it; once it is back it is connected again.
#[tokio::test]
async fn an_http_server_gone_between_calls_is_not_shown_connected() {
    let (deck, port) = everything_gone_away().await;
    let start = Instant::now();
    let gone = loop {
        let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        let server = body["servers"][0].clone();
        if server["state"] != "connected" {
            break server;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "{body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let why = gone["lastError"].as_str().unwrap_or_default();
    assert!(why.contains("cannot reach"), "{gone}");
    assert!(why.contains(&format!("127.0.0.1:{port}")), "{gone}");
    let _back = EverythingOverHttp::start_on(port).await;
    deck.assert_everything_echoes("back").await;
    let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
    assert_eq!(body["servers"][0]["state"], "connected", "{body}");
}

/// A server-everything restarted between calls (a developer restarting their own server): the
/// call made while it is down finds the connection refused, so it did not run; it waits for the
/// server, saying so, as a call to a server known to be down does, and is served once the
/// server is back instead of failing at once.
#[tokio::test]
async fn a_call_to_a_server_being_restarted_is_served_when_it_is_back() {
    let (deck, port) = everything_gone_away().await;
    let id = deck
        .call_task("everything__echo", json!({"message": "back"}))
        .await;
    deck.wait_agent(&id, "the wait named", |t| {
        t["status"] == "working"
            && t["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains("Waiting for everything to connect"))
    })
    .await;
    let _back = EverythingOverHttp::start_on(port).await;
    let back = Instant::now();
    let done = deck
        .wait_agent(&id, "completed", |t| t["status"] == "completed")
        .await;
    assert!(
        back.elapsed() < Duration::from_secs(5),
        "served {:?} after the server was back",
        back.elapsed()
    );
    assert!(text_of(&done["result"]).contains("back"), "{done}");
}

/// A server-everything that went away: a call to it waits 30 s (`connect_wait`), then fails
/// saying it did not run (nothing accepted the connection); Taskdeck tries again with a growing
/// backoff (up to 60 s), and while a call waits for it Taskdeck tries every second, so the next
/// call is served within seconds of the server's return instead of at the end of the backoff.
#[tokio::test]
async fn a_call_waiting_for_a_server_that_is_back_is_served_in_seconds() {
    let (deck, port) = everything_gone_away().await;
    let called = Instant::now();
    let id = deck
        .call_task("everything__echo", json!({"message": "gone"}))
        .await;
    let failed = loop {
        let t = deck.s.get(&deck.agent, &id).await;
        if t["status"] == "failed" {
            break t;
        }
        assert!(called.elapsed() < Duration::from_secs(45), "{t}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        called.elapsed() > Duration::from_secs(29),
        "{:?}",
        called.elapsed()
    );
    // Whether the call found the server gone (nothing accepted it) or Taskdeck knew already
    // (its event stream could not reconnect), it says that the call did not run.
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("everything")
            && (message.contains("it did not run") || message.contains("the call was not sent")),
        "{failed}"
    );
    assert!(!message.contains("Transport ["), "{failed}");
    let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
    assert!(body["servers"][0]["restarts"].as_u64() >= Some(5), "{body}");
    // The call comes first; the server is back 3 s later, after the call's first try failed:
    // it is tried again every second while the call waits.
    let back_at = Instant::now() + Duration::from_secs(3);
    let (_, _back) = tokio::join!(deck.assert_everything_echoes("back"), async {
        tokio::time::sleep_until(back_at.into()).await;
        EverythingOverHttp::start_on(port).await
    });
    assert!(
        back_at.elapsed() < Duration::from_secs(5),
        "served {:?} after the server was back",
        back_at.elapsed()
    );
}

/// An HTTP endpoint that answers everything with 400 and a JSON-RPC error for no request whose
/// message quotes the Authorization header it got: `lastError` says what the server said,
/// without the credential (and nothing logs it unscrubbed: the transport no longer logs it).
#[tokio::test]
async fn an_error_for_no_request_is_shown_without_the_servers_secrets() {
    let app = axum::Router::new().fallback(|headers: http::HeaderMap| async move {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32001, "message": format!("bad auth {auth}")}});
        (
            http::StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            body.to_string(),
        )
    });
    let base = crate::harness::serve_local(app).await;
    let deck = Deck::start(json!({"echoing": {
        "url": format!("{base}/mcp"),
        "headers": {"Authorization": "Bearer HSECRET9"},
    }}))
    .await;
    let start = Instant::now();
    let why = loop {
        let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        let server = &body["servers"][0];
        if let Some(why) = server["lastError"].as_str() {
            assert!(!body.to_string().contains("HSECRET9"), "{body}");
            break why.to_string();
        }
        assert!(start.elapsed() < CONNECT_DEADLINE, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        why.contains("answered with an error for no request: bad auth ")
            && why.contains("[redacted]"),
        "{why}"
    );
    assert!(why.contains("-32001"), "{why}");
}

/// A tool an upstream lists that Taskdeck cannot serve is counted out of `toolCount` and
/// listed with why in `unservedTools` (and by `servers list`), not only in the log.
#[tokio::test]
async fn tools_not_served_are_shown_with_why() {
    let deck = Deck::start(json!({"odd": faulty(&["--odd-tools"])})).await;
    deck.wait_tool("odd__echo").await;
    let start = Instant::now();
    let odd = loop {
        let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        let odd = body["servers"][0].clone();
        if odd["unservedTools"]
            .as_array()
            .is_some_and(|u| u.len() == 2)
        {
            break odd;
        }
        assert!(start.elapsed() < CONNECT_DEADLINE, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let names = deck.tool_names("/mcp").await;
    let served = names.iter().filter(|n| n.starts_with("odd__")).count();
    assert_eq!(odd["toolCount"], served, "{odd}");
    let unserved = &odd["unservedTools"];
    assert_eq!(unserved[0]["name"], "bad name", "{odd}");
    assert!(
        unserved[0]["reason"].as_str().unwrap().contains("its name"),
        "{odd}"
    );
    assert_eq!(unserved[1]["name"], "badref", "{odd}");
    assert!(
        unserved[1]["reason"].as_str().unwrap().contains("Missing"),
        "{odd}"
    );
    let listed = std::process::Command::new(BIN)
        .args(["servers", "list", "--data-dir"])
        .arg(deck.s.dir.join("data"))
        .arg("--config-dir")
        .arg(deck.s.dir.join("cfg"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("not served: badref: "), "{text}");
}

/// On `/mcp/SERVER` a tool is named as that endpoint lists it, in what Taskdeck answers too:
/// an invalid call's error and a task handle say `write_file`, not `fs__write_file`.
#[tokio::test]
async fn a_servers_own_endpoint_names_tools_as_it_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let deck = Deck::start(json!({"fs": filesystem(dir.path())})).await;
    deck.wait_tool("fs__write_file").await;
    let invalid = deck
        .call_at("/mcp/fs", "read_text_file", json!({}), false)
        .await;
    assert_eq!(
        invalid.body["error"]["message"],
        "invalid arguments for read_text_file: \"path\" is a required property"
    );
    let path = dir.path().join("note.txt");
    let handle = deck
        .call_at(
            "/mcp/fs",
            "write_file",
            json!({"path": path, "content": "hi"}),
            false,
        )
        .await;
    let text = text_of(handle.result());
    assert!(
        text.contains("(write_file)") && !text.contains("fs__"),
        "{text}"
    );
}

/// A call of a tool whose server serves none now says why: disabled, or not running (its
/// error is the person's to read); a name no server has is just unknown.
#[tokio::test]
async fn a_call_to_a_server_that_serves_no_tools_says_why() {
    let mut off = faulty(&[]);
    off["disabled"] = json!(true);
    let deck = Deck::start(json!({"off": off, "broken": faulty(&["--exit-at-start"])})).await;
    let start = Instant::now();
    loop {
        let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        if body["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["state"] == "failed")
        {
            break;
        }
        assert!(start.elapsed() < CONNECT_DEADLINE, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (path, tool, says) in [
        (
            "/mcp",
            "off__echo",
            "Unknown tool: off__echo (upstream off is disabled in servers.json)",
        ),
        (
            "/mcp/off",
            "echo",
            "Unknown tool: echo (upstream off is disabled in servers.json)",
        ),
        (
            "/mcp",
            "broken__echo",
            "Unknown tool: broken__echo (upstream broken is not running: Taskdeck's Servers view says why)",
        ),
        ("/mcp", "nobody__echo", "Unknown tool: nobody__echo"),
    ] {
        let reply = deck.call_at(path, tool, json!({"text": "x"}), true).await;
        assert_eq!(reply.error_code(), -32602, "{:?}", reply.body);
        assert_eq!(reply.body["error"]["message"], says);
    }
}

/// server-everything's `simulate-research-query` runs only as a task of its own (2025-11-25
/// `taskSupport: required`): after the approval, the gateway follows that task, its
/// clarification question becomes the human's input request `elicitation-0`, and its report is
/// the result.
async fn everything_task_followed(spec: Value) {
    let deck = Deck::start(json!({"everything": spec})).await;
    deck.wait_tool("everything__simulate-research-query").await;
    let id = deck
        .call_task(
            "everything__simulate-research-query",
            json!({"topic": "python", "ambiguous": true}),
        )
        .await;
    deck.approve(&id, json!({"action": "accept", "content": {}}))
        .await;
    deck.wait_upstream_question(&id).await;
    deck.s
        .answer(
            &id,
            "elicitation-0",
            json!({"action": "accept", "content": {"interpretation": "snake"}}),
        )
        .await;
    let done = deck
        .wait_agent(&id, "completed", |t| t["status"] == "completed")
        .await;
    let report = text_of(&done["result"]);
    assert!(
        report.contains("Research Report: python (snake)"),
        "{report}"
    );
    // The upstream task's own status messages reached the timeline.
    let detail = deck.detail(&id).await;
    let stages = [
        "Gathering sources",
        "Analyzing content",
        "Synthesizing findings",
        "Generating report",
        "Continuing with interpretation",
    ];
    let followed = detail["timeline"].as_array().unwrap().iter().any(|e| {
        e["kind"] == "statusMessage"
            && stages.iter().any(|stage| {
                e["data"]["statusMessage"]
                    .as_str()
                    .is_some_and(|m| m.contains(stage))
            })
    });
    assert!(followed, "{detail}");
}

#[tokio::test]
async fn everything_task_followed_over_stdio() {
    everything_task_followed(everything_over_stdio_spec()).await;
}

#[tokio::test]
async fn everything_task_followed_over_streamable_http() {
    let upstream = EverythingOverHttp::start().await;
    everything_task_followed(upstream.spec()).await;
}

// ---- faults -------------------------------------------------------------------------------------

#[tokio::test]
async fn an_upstream_that_exits_at_start_is_not_served() {
    let mut deck = Deck::start(json!({
        "broken": faulty(&["--exit-at-start"]),
        "faulty": faulty(&[]),
    }))
    .await;
    deck.wait_tool("faulty__echo").await;
    let names = deck.tool_names("/mcp").await;
    assert!(
        names.iter().all(|n| !n.starts_with("broken__")),
        "{names:?}"
    );
    let reply = deck.call("broken__echo", json!({"text": "hi"})).await;
    assert!(reply.body.get("error").is_some(), "{:?}", reply.body);
    // `/v1/servers` shows it failed, with what it wrote to stderr.
    let start = Instant::now();
    loop {
        let (status, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        assert_eq!(status, 200, "{body}");
        let broken = body["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "broken")
            .cloned()
            .unwrap_or_else(|| panic!("{body}"));
        let tail = broken["stderrTail"].to_string();
        if broken["state"] == "failed" && tail.contains("exiting at start") {
            // A credential the server printed of its own is masked, as in a call's arguments.
            assert!(!body.to_string().contains("hunter2-x"), "{broken}");
            assert!(tail.contains("DB_PASSWORD=[redacted]"), "{tail}");
            // How it ended, in words, with its last stderr line.
            let why = broken["lastError"].as_str().unwrap_or_default();
            assert!(
                why.starts_with("MCP handshake failed: ")
                    && why
                        .contains("; the process exited (stderr: faulty-server: exiting at start")
                    && !why.contains("Transport ["),
                "{broken}"
            );
            break;
        }
        assert!(start.elapsed() < TASK_DEADLINE, "{broken}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let reply = deck
        .call("faulty__echo", json!({"text": "still here"}))
        .await;
    assert_eq!(text_of(&deck.outcome(&reply).await), "still here");
    deck.assert_alive().await;
}

/// A server slower to start than rmcp's 10 s protocol probe (`npx` downloading its package, a
/// container being pulled) answers the probe after Taskdeck moved on to `initialize`, which
/// fails that first handshake; the next start waits for the 2025-11-25 handshake the late
/// answer revealed, and the server connects instead of failing the same way forever.
#[tokio::test]
async fn an_upstream_slower_to_start_than_the_probe_connects() {
    let deck = Deck::start(json!({"late": faulty(&["--start-after", "11000"])})).await;
    let start = Instant::now();
    let mut why_seen = None;
    let late = loop {
        let (status, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        assert_eq!(status, 200, "{body}");
        let late = body["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "late")
            .cloned()
            .unwrap_or_else(|| panic!("{body}"));
        if let Some(why) = late["lastError"].as_str() {
            why_seen = Some(why.to_string());
        }
        if late["state"] == "connected" {
            break late;
        }
        assert!(
            start.elapsed() < Duration::from_secs(50),
            "not connected after 50 s: {late}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let why = why_seen.expect("the first handshake's failure was shown");
    assert!(
        why.contains("a slow start") && !why.contains("the process exited"),
        "{why}"
    );
    assert_eq!(late["restarts"], 1, "{late}");
    assert_eq!(late["protocolVersion"], "2025-11-25", "{late}");
    deck.wait_tool("late__echo").await;
    let reply = deck
        .call("late__echo", json!({"text": "slow but here"}))
        .await;
    assert_eq!(text_of(&deck.outcome(&reply).await), "slow but here");
}

#[tokio::test]
async fn a_new_timeout_applies_without_restarting_the_server() {
    let deck = Deck::start(json!({"faulty": faulty(&[])})).await;
    deck.wait_tool("faulty__slow").await;
    let slow = deck.call_task("faulty__slow", json!({"ms": 3000})).await;
    // Only timeoutMs changes: the running call is not cut, and the new timeout takes.
    let mut entry = faulty(&[]);
    entry["timeoutMs"] = json!(1000);
    std::fs::write(
        deck.tmp.path().join("cfg/servers.json"),
        json!({"servers": {"faulty": entry}}).to_string(),
    )
    .unwrap();
    let done = deck
        .wait_agent(&slow, "the slow call's end", |t| {
            t["status"] == "completed" || t["status"] == "failed"
        })
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
    assert_eq!(body["servers"][0]["restarts"], 0, "{body}");
    // The edit was seen well before the slow call ended (the watcher waits 200 ms): a hang now
    // fails after 1 s, not after the default 10 minutes.
    let reply = deck.call("faulty__hang", json!({})).await;
    let failed = deck.failed_task_of("faulty__hang", &reply).await;
    assert!(
        failed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("within 1000 ms")),
        "{failed}"
    );
}

/// A tool that ran and then failed with a `-32601` of its own (here, as server-everything's
/// sampling tool does when its `sampling/createMessage` is refused) is not called again as a
/// task: it ran once, and the agent gets its error as it was.
#[tokio::test]
async fn a_tool_failing_with_method_not_found_runs_once() {
    let runs = tempfile::NamedTempFile::new().unwrap();
    let mut entry = faulty(&[]);
    entry["env"] = json!({"RUN_LOG": runs.path()});
    let deck = Deck::start(json!({"faulty": entry})).await;
    deck.wait_tool("faulty__refuse").await;
    let reply = deck.call("faulty__refuse", json!({})).await;
    let result = deck.outcome(&reply).await;
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text_of(&result),
        "MCP error -32601: Method not found: sampling/createMessage"
    );
    assert_eq!(
        std::fs::read_to_string(runs.path()).unwrap(),
        "refuse ran\n"
    );
}

/// Task `id`'s whole output log, as the admin reads it ("" while it has none).
async fn whole_log(deck: &Deck, id: &str) -> String {
    let mut log = String::new();
    let mut offset = 0;
    loop {
        let (status, chunk) = deck
            .s
            .v1_get(
                Some(&deck.s.admin),
                &format!("/v1/tasks/{id}/log?offset={offset}&limit=1048576"),
            )
            .await;
        assert_eq!(status, 200, "{chunk}");
        log.push_str(chunk["text"].as_str().unwrap());
        if chunk["nextOffset"] == chunk["size"] {
            return log;
        }
        offset = chunk["nextOffset"].as_u64().unwrap();
    }
}

/// Two principals' calls running at once on one stdio server, whose log messages say nothing
/// of the call they belong to: none of one's messages reaches the other's task.
#[tokio::test]
async fn an_upstreams_log_never_reaches_another_principals_task() {
    let deck = Deck::start(json!({"faulty": faulty(&[])})).await;
    deck.wait_tool("faulty__chatty").await;
    let other = deck.s.token("agent2");
    let call = |token: String, tag: &'static str| {
        let s = &deck.s;
        async move {
            let params = json!({"name": "faulty__chatty",
                "arguments": {"count": 20000, "tag": tag}});
            s.rpc_at("/mcp", Some(&token), "tools/call", params, true)
                .await
        }
    };
    let (a, b) = tokio::join!(call(deck.agent.clone(), "A:"), call(other.clone(), "B:"));
    for reply in [&a, &b] {
        let id = reply.result()["taskId"].as_str().unwrap().to_string();
        deck.wait_detail(&id, "completed", |d| d["task"]["status"] == "completed")
            .await;
    }
    for task in deck.tasks_of("faulty__chatty").await {
        let (mine, theirs) = match task["principal"].as_str() {
            Some("agent2") => ("B:", "A:"),
            _ => ("A:", "B:"),
        };
        let log = whole_log(&deck, task["taskId"].as_str().unwrap()).await;
        assert!(
            !log.contains(&format!("faulty [info]: {theirs}")),
            "{mine} task has the other's lines"
        );
        let detail = deck.detail(task["taskId"].as_str().unwrap()).await;
        assert!(
            !detail["timeline"].to_string().contains(theirs),
            "{mine} timeline has the other's lines"
        );
    }
}

/// An upstream that logs in a loop: every message is in the task's output log, and the
/// timeline holds a few status messages (at most one per 250 ms), not one per message.
#[tokio::test]
async fn an_upstreams_log_messages_go_to_the_output_log_not_the_timeline() {
    let deck = Deck::start(json!({"faulty": faulty(&[])})).await;
    deck.wait_tool("faulty__chatty").await;
    let started = Instant::now();
    let reply = deck.call("faulty__chatty", json!({"count": 20000})).await;
    assert_eq!(text_of(&deck.outcome(&reply).await), "logged 20000");
    let took = started.elapsed();
    let task = &deck.tasks_of("faulty__chatty").await[0];
    let id = task["taskId"].as_str().unwrap();
    let log = whole_log(&deck, id).await;
    assert!(!log.is_empty());
    // rmcp handles each notification in a task of its own: every line, in whatever order.
    let mut lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 20000, "{}", &log[..log.len().min(500)]);
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), 20000, "each line once");
    assert!(
        lines.contains(&"faulty [info]: line 1 of 20000")
            && lines.contains(&"faulty [info]: line 20000 of 20000"),
        "{lines:?}"
    );
    let detail = deck.detail(id).await;
    let said = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "statusMessage")
        .count();
    // One per 250 ms, the first at once, and the gateway's own "Waiting for faulty to answer".
    let most = 3 + took.as_millis() as usize / 250;
    assert!(
        (1..=most).contains(&said),
        "{said} status messages in {took:?}: {detail}"
    );

    // A Taskdeck token an upstream logs (it read the token file) is masked in the log and the
    // status message.
    let token = deck.s.admin.clone();
    let reply = deck
        .call(
            "faulty__chatty",
            json!({"count": 1, "text": format!("read: {token}")}),
        )
        .await;
    deck.outcome(&reply).await;
    let task = &deck.tasks_of("faulty__chatty").await[0];
    let id = task["taskId"].as_str().unwrap();
    let (_, chunk) = deck
        .s
        .v1_get(Some(&deck.s.admin), &format!("/v1/tasks/{id}/log"))
        .await;
    let log = chunk["text"].as_str().unwrap();
    // In whatever order: rmcp handles each notification in a task of its own.
    assert!(log.contains("faulty [info]: read: [redacted]\n"), "{log}");
    let detail = deck.detail(id).await;
    assert!(!detail.to_string().contains(&token), "{detail}");
}

#[tokio::test]
async fn an_upstream_cannot_pass_its_result_off_as_taskdecks_refusal() {
    let deck = Deck::start(json!({"faulty": faulty(&[])})).await;
    deck.wait_tool("faulty__forge").await;
    let reply = deck.call("faulty__forge", json!({})).await;
    let result = deck.outcome(&reply).await;
    assert_eq!(result["isError"], true, "{result}");
    let forged = &deck.tasks_of("faulty__forge").await[0];
    for shown in [&result, &forged["result"]] {
        assert_eq!(
            shown["_meta"]["io.taskdeck/refusal"],
            Value::Null,
            "{shown}"
        );
        assert_eq!(shown["_meta"]["io.example/kept"], 1, "{shown}");
    }
    // Taskdeck's own refusal keeps its mark: a deny rule on the same tool.
    deck.s.write_policy(
        json!([{"id": "r-noforge", "principal": "*", "server": "faulty",
        "tool": "forge", "decision": "deny"}]),
    );
    let reply = deck.call("faulty__forge", json!({})).await;
    let result = deck.outcome(&reply).await;
    assert_eq!(result["_meta"]["io.taskdeck/refusal"], "denied", "{result}");
    assert!(text_of(&result).contains("r-noforge"), "{result}");
}

#[tokio::test]
async fn a_crash_mid_call_fails_the_call_and_the_server_comes_back() {
    let mut deck = Deck::start(json!({"faulty": faulty(&[])})).await;
    deck.wait_tool("faulty__crash").await;
    let reply = deck.call("faulty__crash", json!({})).await;
    let failed = deck.failed_task_of("faulty__crash", &reply).await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("faulty") && message.contains("it may have run"),
        "{failed}"
    );
    // The server is started again (after the backoff, 1 s) and serves the next call, which
    // says meanwhile what it waits for.
    let reply = deck.call("faulty__echo", json!({"text": "back"})).await;
    assert_eq!(text_of(&deck.outcome(&reply).await), "back");
    let echo = &deck.tasks_of("faulty__echo").await[0];
    let detail = deck.detail(echo["taskId"].as_str().unwrap()).await;
    assert!(
        detail["timeline"].as_array().unwrap().iter().any(|e| {
            e["kind"] == "statusMessage"
                && e["data"]["statusMessage"] == "Waiting for faulty to connect"
        }),
        "{detail}"
    );
    let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
    let faulty = &body["servers"][0];
    assert_eq!(faulty["state"], "connected", "{body}");
    assert!(faulty["restarts"].as_u64() >= Some(1), "{body}");
    deck.assert_alive().await;
}

#[tokio::test]
async fn a_hang_past_the_timeout_fails_and_is_cancelled_upstream() {
    let cancel_log = tempfile::NamedTempFile::new().unwrap();
    let mut spec = faulty(&[]);
    spec["timeoutMs"] = json!(1000);
    spec["env"] = json!({"CANCEL_LOG": cancel_log.path()});
    let mut deck = Deck::start(json!({"faulty": spec})).await;
    deck.wait_tool("faulty__hang").await;
    let started = Instant::now();
    // The timeout and the settle time are both 1 s: the agent gets the task or, when the
    // timeout strikes first, its error at once.
    let reply = deck.call("faulty__hang", json!({})).await;
    let failed = deck.failed_task_of("faulty__hang", &reply).await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("faulty") && message.contains("within 1000 ms"),
        "{failed}"
    );
    wait_cancel_logged(cancel_log.path()).await;
    deck.assert_alive().await;
}

/// The server's `timeoutMs` is its own time: while its question waits for a person, the
/// clock stands still, so a question left for longer than the timeout is not cut off, and the
/// call ends with the answer.
#[tokio::test]
async fn an_upstream_question_waiting_for_a_person_is_not_timed_out() {
    let mut spec = everything_over_stdio_spec();
    spec["timeoutMs"] = json!(1000);
    let deck = Deck::start(json!({"everything": spec})).await;
    deck.wait_tool("everything__trigger-elicitation-request")
        .await;
    let elicit = deck
        .call_task("everything__trigger-elicitation-request", json!({}))
        .await;
    deck.approve(&elicit, json!({"action": "accept", "content": {}}))
        .await;
    deck.wait_upstream_question(&elicit).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let later = deck.detail(&elicit).await;
    assert_eq!(later["task"]["status"], "input_required", "{later}");
    deck.s
        .answer(
            &elicit,
            "elicitation-0",
            json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}),
        )
        .await;
    let done = deck
        .wait_agent(&elicit, "completed", |t| t["status"] == "completed")
        .await;
    assert!(
        text_of(&done["result"]).contains("Name: Ada Lovelace"),
        "{done}"
    );
}

#[tokio::test]
async fn a_cancelled_hang_is_cancelled_upstream() {
    let cancel_log = tempfile::NamedTempFile::new().unwrap();
    let mut spec = faulty(&[]);
    spec["env"] = json!({"CANCEL_LOG": cancel_log.path()});
    let mut deck = Deck::start(json!({"faulty": spec})).await;
    deck.wait_tool("faulty__hang").await;
    let id = deck.call_task("faulty__hang", json!({})).await;
    deck.cancel(&id).await;
    wait_cancel_logged(cancel_log.path()).await;
    deck.assert_alive().await;
}

/// True while a process whose command line is `argv` runs (a zombie no longer counts).
fn running(argv: &[&str]) -> bool {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let dir = e.path();
        let zombie = std::fs::read_to_string(dir.join("stat")).is_ok_and(|s| {
            s.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'))
        });
        !zombie && std::fs::read(dir.join("cmdline")).is_ok_and(|c| c == wanted)
    })
}

/// Waits (10 s at most) until no process runs `argv`.
async fn wait_gone(argv: &[&str]) {
    let start = Instant::now();
    while running(argv) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{argv:?} still runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// What a stdio server starts ends with it: removing the server, and stopping Taskdeck, leave
/// none of its processes behind (here a `sleep` its shell started in the background).
#[tokio::test]
async fn processes_an_upstream_started_end_with_it() {
    let script = upstreams_dir().join("faulty-server.mjs");
    let spec = |secs: &str| json!({"command": "sh", "args": ["-c", format!("sleep {secs} & exec node {}", script.display())]});
    let (one, two) = (["sleep", "4242.17"], ["sleep", "4242.29"]);
    let mut deck = Deck::start(json!({"one": spec(one[1]), "two": spec(two[1])})).await;
    deck.wait_tool("one__echo").await;
    deck.wait_tool("two__echo").await;
    assert!(running(&one) && running(&two));
    let resp = deck
        .s
        .http
        .delete(deck.s.url("/v1/servers/one"))
        .bearer_auth(&deck.s.admin)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    wait_gone(&one).await;
    assert!(running(&two));
    stop_cleanly(&mut deck.s).await;
    wait_gone(&two).await;
}

/// A server removed while a call runs in it: the call fails saying so (not as if the server
/// had failed).
#[tokio::test]
async fn a_server_removed_mid_call_fails_the_call_saying_so() {
    let deck = Deck::start(json!({"faulty": faulty(&[])})).await;
    deck.wait_tool("faulty__hang").await;
    let id = deck.call_task("faulty__hang", json!({})).await;
    deck.wait_detail(&id, "the call under way", |d| {
        d["task"]["status"] == "working"
    })
    .await;
    let resp = deck
        .s
        .http
        .delete(deck.s.url("/v1/servers/faulty"))
        .bearer_auth(&deck.s.admin)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let failed = deck
        .wait_agent(&id, "failed", |t| t["status"] == "failed")
        .await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("upstream faulty was stopped during hang (removed or changed"),
        "{failed}"
    );
}

/// A stdio server whose `cwd` does not exist is `failed` saying so, not with the spawn's "No
/// such file or directory" that would blame the command.
#[tokio::test]
async fn a_missing_cwd_is_named() {
    let deck = Deck::start(json!({"nowhere": {"command": "true", "cwd": "/no/such/dir"}})).await;
    let start = Instant::now();
    loop {
        let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
        if let Some(why) = body["servers"][0]["lastError"].as_str() {
            assert_eq!(
                why,
                "cannot start true: its cwd /no/such/dir is not a directory"
            );
            break;
        }
        assert!(start.elapsed() < CONNECT_DEADLINE, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The pid of the process whose command line holds `marker` as one of its words.
fn pid_with_arg(marker: &str) -> Option<i32> {
    std::fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        cmdline
            .split(|b| *b == 0)
            .any(|w| w == marker.as_bytes())
            .then(|| e.file_name().to_str()?.parse().ok())?
    })
}

/// A stdio server's exit is seen when it exits, though a process it started in the
/// background still holds its stdout: the call it was running fails at once ("it may have
/// run"), the server shows `failed`, its leftovers are stopped, and it is started again.
#[tokio::test]
async fn an_exit_is_seen_though_a_background_child_holds_stdout() {
    let script = upstreams_dir().join("faulty-server.mjs");
    let marker = "--marker-exit-seen";
    let spec = json!({"command": "sh", "args": ["-c", format!("sleep 4246.5 & exec node {} {marker}", script.display())]});
    let mut deck = Deck::start(json!({"bg": spec})).await;
    deck.wait_tool("bg__hang").await;
    let id = deck.call_task("bg__hang", json!({})).await;
    let pid = pid_with_arg(marker).expect("the server's process");
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    let failed = deck
        .wait_agent(&id, "failed", |t| t["status"] == "failed")
        .await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("it may have run"), "{failed}");
    wait_gone(&["sleep", "4246.5"]).await;
    // Started again: a new process serves the next call.
    let reply = deck.call("bg__echo", json!({"text": "again"})).await;
    assert_eq!(text_of(&deck.outcome(&reply).await), "again");
    let (_, body) = deck.s.v1_get(Some(&deck.s.admin), "/v1/servers").await;
    assert!(body["servers"][0]["restarts"].as_u64() >= Some(1), "{body}");
    // The new process's background child goes with a clean stop.
    stop_cleanly(&mut deck.s).await;
    wait_gone(&["sleep", "4246.5"]).await;
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped() {
    let mut deck = Deck::start(json!({"faulty": faulty(&["--garbage"])})).await;
    deck.wait_tool("faulty__echo").await;
    let reply = deck.call("faulty__echo", json!({"text": "clean"})).await;
    assert_eq!(text_of(&deck.outcome(&reply).await), "clean");
    deck.assert_alive().await;
}

// ---- restart ------------------------------------------------------------------------------------

/// A credential in a gateway call's arguments (a URL's password here) reaches the upstream and
/// nothing else: the question, the stored call, the store's files and policy.json show `****`;
/// the call is approved as asked, never edited or always allowed (either would write the
/// password down). One still waiting for its approval when Taskdeck restarts fails, since its
/// password was never stored, rather than reaching the upstream masked.
#[tokio::test]
async fn a_credential_in_a_gateway_call_reaches_only_the_upstream() {
    let files = tempfile::tempdir().unwrap();
    let mut deck = Deck::start(json!({"fs": filesystem(files.path())})).await;
    deck.wait_tool("fs__write_file").await;
    let url = "postgres://u:hunter2@db/x";
    let target = files.path().join("dsn.txt");
    let write = deck
        .call_task(
            "fs__write_file",
            json!({"path": target, "content": format!("DATABASE_URL={url}")}),
        )
        .await;
    assert_credential_question(&deck.s, &write, "approve", "u:****@db", "hunter2").await;
    deck.approve(&write, json!({"action": "accept", "content": {}}))
        .await;
    deck.wait_agent(&write, "completed", |t| t["status"] == "completed")
        .await;
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        format!("DATABASE_URL={url}"),
        "the upstream got the call as given"
    );
    let detail = deck.detail(&write).await;
    assert_eq!(
        detail["task"]["arguments"]["content"], "DATABASE_URL=postgres://u:****@db/x",
        "{detail}"
    );
    assert!(!detail.to_string().contains("hunter2"), "{detail}");

    // Waiting for its approval across a restart: it fails and writes nothing.
    let later = files.path().join("later.txt");
    let pending = deck
        .call_task("fs__write_file", json!({"path": later, "content": url}))
        .await;
    deck.wait_detail(&pending, "the approval question", |d| {
        d["task"]["status"] == "input_required"
    })
    .await;
    deck.restart().await;
    let failed = deck
        .wait_agent(&pending, "failed", |t| t["status"] == "failed")
        .await;
    assert_eq!(failed["error"]["data"]["reason"], "restart", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("never stored"), "{failed}");
    assert!(!later.exists());

    assert_not_on_disk(&deck.s.dir, &["hunter2"]);
    deck.assert_alive().await;
}

#[tokio::test]
async fn a_restart_asks_pending_approvals_again_and_fails_running_calls() {
    let files = tempfile::tempdir().unwrap();
    let mut deck = Deck::start(json!({
        "fs": filesystem(files.path()),
        "faulty": faulty(&[]),
    }))
    .await;
    deck.wait_tool("fs__write_file").await;
    deck.wait_tool("faulty__slow").await;
    let target = files.path().join("after-restart.txt");
    let write = deck
        .call_task(
            "fs__write_file",
            json!({"path": target, "content": "survived"}),
        )
        .await;
    deck.wait_detail(&write, "the approval question", |d| {
        d["task"]["status"] == "input_required"
    })
    .await;
    let slow = deck.call_task("faulty__slow", json!({"ms": 60000})).await;
    // Sent upstream: its progress ("step N of 4") or the gateway's "Waiting for faulty to
    // answer slow" is the status message.
    deck.wait_agent(&slow, "the call sent upstream", |t| {
        t["statusMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("step ") || m.starts_with("Waiting for faulty"))
    })
    .await;

    deck.restart().await;
    // The tools of the calls it resumes are listed once each, with their real schemas (the
    // TypeScript SDK refuses a whole tools/list over one tool without `inputSchema.type`).
    deck.wait_tool("fs__write_file").await;
    let listed = deck
        .s
        .rpc_at("/mcp", Some(&deck.agent), "tools/list", json!({}), true)
        .await;
    let tools = listed.result()["tools"].as_array().unwrap().clone();
    let writes = tools
        .iter()
        .filter(|t| t["name"] == "fs__write_file")
        .count();
    assert_eq!(writes, 1, "{tools:?}");
    assert!(
        tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
        "{tools:?}"
    );
    // The call that was running upstream may have run: it fails, saying so.
    let failed = deck
        .wait_agent(&slow, "failed", |t| t["status"] == "failed")
        .await;
    assert_eq!(failed["error"]["data"]["reason"], "restart", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("it may have run"),
        "{failed}"
    );
    // The pending approval is asked again; approving it now writes the file.
    let asked = deck
        .wait_detail(&write, "asked again", |d| {
            d["task"]["status"] == "input_required"
                && timeline_kinds(d).iter().any(|k| k == "resumed")
        })
        .await;
    assert!(!target.exists(), "{asked}");
    deck.approve(&write, json!({"action": "accept", "content": {}}))
        .await;
    deck.wait_agent(&write, "completed", |t| t["status"] == "completed")
        .await;
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "survived");
    deck.assert_alive().await;
}

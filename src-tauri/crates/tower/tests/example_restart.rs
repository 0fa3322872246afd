//! The example server (`examples/durable_tasks.rs`, built by `cargo test`) driven over real
//! stdio with plain JSON-RPC, through a restart: a task created before the server is killed
//! is found by `tasks/get` after it starts again on the same directory, a finished one with
//! its status, and an unknown id still reads as unknown.

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

/// The example binary, next to this test's binary (`target/debug/examples/`).
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    debug.join("examples").join("durable_tasks")
}

/// A running example server and a JSON-RPC line exchange with it.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    /// Starts the example on `dir` and initializes a 2025-11-25 session.
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(example_binary())
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the durable_tasks example (built by cargo test)");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        let init = server.call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "restart-test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its response (notifications in between are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    /// `tasks/get` of `task_id`: the response.
    fn get(&mut self, task_id: &str) -> Value {
        self.call("tasks/get", json!({"taskId": task_id}))
    }

    /// Kills the server (no clean shutdown: a crash is the harder restart).
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// The task id in a task-augmented `tools/call` response.
fn task_id(response: &Value) -> String {
    response
        .pointer("/result/task/taskId")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no task in {response}"))
        .to_string()
}

#[test]
fn a_task_created_before_a_restart_is_found_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let slow = task_id(&server.call(
        "tools/call",
        json!({"name": "build_report", "arguments": {"seconds": 3600}, "task": {"ttl": 600000}}),
    ));
    let quick = task_id(&server.call(
        "tools/call",
        json!({"name": "build_report", "arguments": {"seconds": 0}, "task": {"ttl": 600000}}),
    ));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = server.get(&quick);
        if got.pointer("/result/status") == Some(&json!("completed")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the quick task did not complete: {got}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();

    let mut server = Server::start(dir.path());
    let got = server.get(&slow);
    assert_eq!(got.pointer("/result/taskId"), Some(&json!(slow)), "{got}");
    assert_eq!(
        got.pointer("/result/status"),
        Some(&json!("working")),
        "{got}"
    );
    let got = server.get(&quick);
    assert_eq!(
        got.pointer("/result/status"),
        Some(&json!("completed")),
        "{got}"
    );
    let unknown = server.get("0123456789abcdef0123456789abcdef");
    assert!(
        unknown.get("error").is_some(),
        "an unknown id is not found: {unknown}"
    );
    server.kill();
}

//! An example server (`examples/*.rs`, built by `cargo test`) driven over real stdio with
//! plain JSON-RPC, one message a line: started, initialized as a 2025-11-25 session, asked,
//! killed.

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
};

use serde_json::{Value, json};

/// The example `name`'s binary, next to this test's binary (`target/debug/examples/`).
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    debug.join("examples").join(name)
}

/// A running example server and a JSON-RPC line exchange with it.
pub struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl StdioServer {
    /// Starts `command` (an example binary with its arguments and environment) and
    /// initializes a 2025-11-25 session.
    pub fn start(mut command: Command) -> StdioServer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the example (built by cargo test)");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = StdioServer {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        let init = server.call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "example-test", "version": "1"}}),
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
    pub fn call(&mut self, method: &str, params: Value) -> Value {
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
    pub fn get(&mut self, task_id: &str) -> Value {
        self.call("tasks/get", json!({"taskId": task_id}))
    }

    /// Starts the examples' `build_report` tool (`seconds` long) as a task with a 10-minute
    /// ttl: its task id.
    pub fn build_report(&mut self, seconds: u64) -> String {
        task_id(&self.call(
            "tools/call",
            json!({"name": "build_report", "arguments": {"seconds": seconds},
                   "task": {"ttl": 600000}}),
        ))
    }

    /// Kills the server (no clean shutdown: a crash is the harder restart).
    pub fn kill(mut self) {
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

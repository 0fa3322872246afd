//! The example server (`examples/durable_tasks.rs`, built by `cargo test`) driven over real
//! stdio with plain JSON-RPC, through a restart: a task created before the server is killed
//! is found by `tasks/get` after it starts again on the same directory, a finished one with
//! its status, and an unknown id still reads as unknown.

mod stdio;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use serde_json::json;
use stdio::{StdioServer as Server, example_binary};

/// The example on directory `dir`.
fn example(dir: &std::path::Path) -> Command {
    let mut command = Command::new(example_binary("durable_tasks"));
    command.arg(dir);
    command
}

#[test]
fn a_task_created_before_a_restart_is_found_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(example(dir.path()));
    let slow = server.build_report(3600);
    let quick = server.build_report(0);
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

    let mut server = Server::start(example(dir.path()));
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

//! The remote example server (`examples/remote_tasks.rs`, built by `cargo test`) driven over
//! real stdio with plain JSON-RPC, against a real `taskdeck serve`: a task it creates is in the
//! window (the admin's `/v1/tasks`, titled by the tool), a cancel pressed there ends it as
//! `cancelled` for the MCP client, and a quick one completes with its result in both places.

mod serve;
mod stdio;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use serve::Taskdeck;
use stdio::{StdioServer, example_binary};

/// Polls `tasks/get` until the task is `status` (10 s at most).
fn wait_status(server: &mut StdioServer, id: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = server.get(id);
        if got.pointer("/result/status") == Some(&json!(status)) {
            return got;
        }
        assert!(
            Instant::now() < deadline,
            "{id} did not become {status}: {got}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_example_puts_its_tasks_in_the_window() {
    let taskdeck = Taskdeck::start().await;
    let mut command = Command::new(example_binary("remote_tasks"));
    command
        .env("TASKDECK_URL", &taskdeck.url)
        .env("TASKDECK_TOKEN", taskdeck.fresh_token());
    let admin = reqwest::Client::new();
    let window = |path: String| {
        admin
            .get(format!("{}{path}", taskdeck.url))
            .bearer_auth(&taskdeck.admin)
            .send()
    };

    let (mut server, slow, quick) = tokio::task::block_in_place(|| {
        let mut server = StdioServer::start(command);
        let slow = server.build_report(3600);
        let quick = server.build_report(0);
        wait_status(&mut server, &quick, "completed");
        (server, slow, quick)
    });

    let listed: Value = window("/v1/tasks".into())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let titles: Vec<(&Value, &Value)> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (&t["taskId"], &t["title"]))
        .collect();
    assert!(
        titles.contains(&(&json!(slow), &json!("build_report"))),
        "{listed}"
    );
    let done: Value = window(format!("/v1/tasks/{quick}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(done["task"]["status"], "completed", "{done}");
    assert_eq!(
        done["task"]["result"]["content"][0]["text"], "report built in 0 s",
        "{done}"
    );

    // The person presses cancel in the window.
    let cancel = admin
        .post(format!("{}/v1/tasks/{slow}/cancel", taskdeck.url))
        .bearer_auth(&taskdeck.admin)
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    tokio::task::block_in_place(|| {
        wait_status(&mut server, &slow, "cancelled");
        server.kill();
    });
}

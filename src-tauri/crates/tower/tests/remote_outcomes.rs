//! What a [`RemoteTaskdeckStore`] does with outcomes Taskdeck cannot take as they come, against
//! a real `taskdeck serve`: a live handler's result settled while Taskdeck is down is kept and
//! sent once it is back (same port and data dir), so the task completes with it; a result over
//! Taskdeck's 4 MiB request limit fails the task with a message saying so; arguments that are
//! not a JSON object are refused by both stores alike, with a message naming them.

mod serve;

use std::{sync::Arc, time::Duration};

use serde::Deserialize;
use serde_json::{Value, json};
use serve::Taskdeck;
use taskdeck_tower::{RemoteTaskdeckStore, TaskdeckStore};
use tokio::sync::Notify;
use tower_mcp::{
    CallToolResult, ChannelTransport, McpClient, McpRouter, TaskContext, TaskOutcome, ToolBuilder,
    async_task::{TaskStore, TaskStoreError},
    protocol::TaskStatus,
    schemars::JsonSchema,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

/// The task `id` as the window reads it (`GET /v1/tasks/{id}` with the admin's token).
async fn window_task(taskdeck: &Taskdeck, id: &str) -> Value {
    let resp = reqwest::Client::new()
        .get(format!("{}/v1/tasks/{id}", taskdeck.url))
        .bearer_auth(&taskdeck.admin)
        .send()
        .await
        .unwrap();
    resp.json::<Value>().await.unwrap()["task"].take()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_settled_while_taskdeck_is_down_arrives_after_its_restart() {
    let mut taskdeck = Taskdeck::start().await;
    let store = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();
    let release = Arc::new(Notify::new());
    let released = release.clone();
    let tool = ToolBuilder::new("build")
        .description("Finishes when told")
        .live_task_handler(move |_task: TaskContext, _: NoArgs| {
            let released = released.clone();
            async move {
                released.notified().await;
                Ok(TaskOutcome::Completed(CallToolResult::text("built")))
            }
        })
        .build();
    let router = McpRouter::new()
        .server_info("outbox", "1.0.0")
        .task_store(Arc::new(store.clone()))
        .tool(tool)
        .with_tasks();
    let client = McpClient::connect(ChannelTransport::new(router))
        .await
        .unwrap();
    client.initialize("t", "1.0.0").await.unwrap();
    let id = client
        .call_tool_as_task("build", json!({}), Some(600_000))
        .await
        .unwrap()
        .task
        .task_id;
    assert_eq!(window_task(&taskdeck, &id).await["status"], "working");

    // Taskdeck goes down; the handler finishes meanwhile.
    taskdeck.stop().await;
    release.notify_one();
    tokio::time::sleep(Duration::from_millis(700)).await;
    taskdeck.start_again().await;

    let mut task = Value::Null;
    for _ in 0..300 {
        task = window_task(&taskdeck, &id).await;
        if task["status"] != "working" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["content"][0]["text"], "built", "{task}");
    let (object, result, _) = store.get_task_result(&id).await.unwrap().unwrap();
    assert_eq!(object.status, TaskStatus::Completed);
    assert!(result.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_over_the_request_limit_fails_the_task_saying_so() {
    let taskdeck = Taskdeck::start().await;
    let store = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();

    let (big, _) = store.create_task("t", json!({}), None, None).await.unwrap();
    let text = "x".repeat(5 * 1024 * 1024);
    let bytes = serde_json::to_vec(&CallToolResult::text(text.clone()))
        .unwrap()
        .len();
    assert!(
        !store
            .complete_task(&big, CallToolResult::text(text))
            .await
            .unwrap()
    );
    let (task, result, error) = store.get_task_result(&big).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Failed);
    assert!(result.is_none());
    let error = error.unwrap();
    assert_eq!(error.code, -32603);
    let limit = 4 * 1024 * 1024 - r#"{"completed":}"#.len();
    assert_eq!(
        error.message,
        format!("result too large ({bytes} bytes, at most {limit})")
    );

    // Under the limit, a large result is kept whole.
    let (fits, _) = store.create_task("t", json!({}), None, None).await.unwrap();
    let text = "y".repeat(3 * 1024 * 1024);
    assert!(
        store
            .complete_task(&fits, CallToolResult::text(text.clone()))
            .await
            .unwrap()
    );
    let (_, result, _) = store.get_task_result(&fits).await.unwrap().unwrap();
    let result = serde_json::to_value(result.unwrap()).unwrap();
    assert_eq!(
        result["content"][0]["text"].as_str().map(str::len),
        Some(text.len())
    );
}

/// Both stores refuse arguments that are not a JSON object alike (naming the tool and what
/// was given), and both take null (what tower-mcp gives for a live handler).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_stores_refuse_non_object_arguments_alike() {
    let taskdeck = Taskdeck::start().await;
    let remote = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let embedded = TaskdeckStore::open(dir.path()).unwrap();
    let stores: [(&str, &dyn TaskStore); 2] = [("remote", &remote), ("embedded", &embedded)];
    for (name, store) in stores {
        for (arguments, kind) in [
            (json!([1, 2]), "an array"),
            (json!("go"), "a string"),
            (json!(7), "a number"),
        ] {
            let error = store
                .create_task("deploy", arguments, None, None)
                .await
                .unwrap_err();
            let TaskStoreError::InvalidTransition(message) = &error else {
                panic!("{name}: {error:?}");
            };
            assert_eq!(
                message,
                &format!(
                    "the arguments of deploy must be a JSON object (as MCP's tools/call has them), not {kind}"
                ),
                "{name}"
            );
        }
        assert!(store.list_tasks(None).await.unwrap().is_empty(), "{name}");
        store
            .create_task("deploy", Value::Null, None, None)
            .await
            .unwrap();
    }
}

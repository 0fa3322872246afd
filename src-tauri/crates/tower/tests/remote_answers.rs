//! A person's answer in Taskdeck's window reaches a live tower-mcp handler parked in
//! `TaskContext::require_input` on a [`RemoteTaskdeckStore`]: a real tower-mcp router and
//! client (in process, over `ChannelTransport`), a real `taskdeck serve`, and the answer posted
//! as the window posts it (`POST /v1/tasks/{id}/input`, with the admin's token, or with the
//! server's own token signed in to the window). The handler gets the answer, completes with it,
//! and runs once; the task's progress message shows in the window.

mod serve;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use serde::Deserialize;
use serde_json::{Value, json};
use serve::Taskdeck;
use taskdeck_tower::RemoteTaskdeckStore;
use tower_mcp::{
    CallToolResult, ChannelTransport, McpClient, McpRouter, TaskContext, TaskOutcome, ToolBuilder,
    async_task::TaskStore,
    protocol::{InputRequest, InputRequests, InputResponse, TaskStatus},
    schemars::JsonSchema,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct NoArgs {}

/// `GET path` with the admin's token (what the window reads).
async fn window(taskdeck: &Taskdeck, path: &str) -> Value {
    reqwest::Client::new()
        .get(format!("{}{path}", taskdeck.url))
        .bearer_auth(&taskdeck.admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Polls the window until task `id` is `status` (10 s at most); the task as the window has it.
async fn until_status(taskdeck: &Taskdeck, id: &str, status: &str) -> Value {
    for _ in 0..500 {
        let task = window(taskdeck, &format!("/v1/tasks/{id}")).await;
        if task["task"]["status"] == status {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{id} did not become {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_answer_in_the_window_wakes_the_live_handler() {
    answer_in_the_window_wakes_the_live_handler(false).await;
}

/// The window signed in with the server's own token offers the same form; its answer is not
/// one the store recorded itself, so it must wake the handler too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_given_in_the_window_with_the_servers_own_token_wakes_the_handler() {
    answer_in_the_window_wakes_the_live_handler(true).await;
}

/// The test of both: the answer is posted with the admin's token, or (`own_token`) with the
/// token the store itself uses.
async fn answer_in_the_window_wakes_the_live_handler(own_token: bool) {
    let taskdeck = Taskdeck::start().await;
    let token = taskdeck.fresh_token();
    let answerer = if own_token {
        token.clone()
    } else {
        taskdeck.admin.clone()
    };
    let store = RemoteTaskdeckStore::connect(&taskdeck.url, &token)
        .await
        .unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let tool = ToolBuilder::new("deploy")
        .description("Asks for approval, then deploys")
        .live_task_handler(move |task: TaskContext, _: NoArgs| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                task.working("step 1/2: checking").await?;
                let request: InputRequest = serde_json::from_value(json!({
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": "Deploy to production?",
                               "requestedSchema": {"type": "object",
                                   "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}},
                }))
                .unwrap();
                let answers = task
                    .require_input(InputRequests::from([("approval".to_string(), request)]))
                    .await?;
                let answer = serde_json::to_value(&answers["approval"]).unwrap();
                Ok(TaskOutcome::Completed(CallToolResult::text(format!(
                    "deployed: {}",
                    answer["content"]
                ))))
            }
        })
        .build();
    let router = McpRouter::new()
        .server_info("answers", "1.0.0")
        .task_store(Arc::new(store.clone()))
        .tool(tool)
        .with_tasks();
    store.deliver_answers_to(router.clone());
    let client = McpClient::connect(ChannelTransport::new(router))
        .await
        .unwrap();
    client.initialize("t", "1.0.0").await.unwrap();
    let id = client
        .call_tool_as_task("deploy", json!({}), Some(600_000))
        .await
        .unwrap()
        .task
        .task_id;

    let waiting = until_status(&taskdeck, &id, "input_required").await;
    assert!(
        waiting["task"]["inputRequests"]["approval"].is_object(),
        "{waiting}"
    );
    // The handler's progress message showed in the window before it asked.
    let timeline = window(&taskdeck, &format!("/v1/tasks/{id}")).await;
    assert!(
        timeline.to_string().contains("step 1/2: checking"),
        "{timeline}"
    );

    // The person answers in the window.
    let reply = reqwest::Client::new()
        .post(format!("{}/v1/tasks/{id}/input", taskdeck.url))
        .bearer_auth(&answerer)
        .json(
            &json!({"inputResponses": {"approval": {"action": "accept", "content": {"ok": true}}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);

    let (task, result, _) =
        tokio::time::timeout(Duration::from_secs(10), store.wait_for_completion(&id))
            .await
            .expect("the answer given in the window woke the handler within 10 s")
            .unwrap()
            .unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    let result = serde_json::to_value(result.unwrap()).unwrap();
    assert_eq!(
        result["content"][0]["text"], r#"deployed: {"ok":true}"#,
        "{result}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the handler ran once");
    let seen = client.task_get(&id).await.unwrap();
    assert_eq!(seen.status, TaskStatus::Completed);
    // The answer was handed over once: replaying it is an ordinary empty acknowledgement.
    let again = store
        .apply_input_responses(
            &id,
            [(
                "approval".to_string(),
                serde_json::from_value::<InputResponse>(
                    json!({"action": "accept", "content": {"ok": true}}),
                )
                .unwrap(),
            )]
            .into(),
        )
        .await
        .unwrap();
    assert!(
        again.as_ref().is_none_or(|a| a.accepted.is_empty()),
        "{again:?}"
    );
}

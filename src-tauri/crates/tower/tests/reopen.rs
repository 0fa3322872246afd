//! Tasks survive closing and reopening the store: the same directory (the same SQLite file)
//! opened again finds every task with its status, result, error, input requests, answers,
//! owner and `_meta`, and a task cancelled before the restart hands out a raised token.

use std::time::Duration;

use serde_json::json;
use taskdeck_tower::TaskdeckStore;
use tower_mcp::{
    CallToolResult,
    async_task::TaskStore,
    error::JsonRpcError,
    protocol::{
        ElicitAction, ElicitResult, InputRequest, InputRequests, InputResponse, InputResponses,
        ListRootsParams, TaskStatus,
    },
};

const TTL: Option<u64> = Some(600_000);

fn ask(key: &str) -> InputRequests {
    InputRequests::from([(
        key.to_string(),
        InputRequest::ListRoots(ListRootsParams { meta: None }),
    )])
}

fn accept(key: &str) -> InputResponses {
    InputResponses::from([(
        key.to_string(),
        InputResponse::Elicit(ElicitResult {
            action: ElicitAction::Accept,
            content: None,
            meta: None,
        }),
    )])
}

/// Closes a store: drops it, then gives its writer thread a moment to end.
async fn close(store: TaskdeckStore) {
    drop(store);
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_survive_reopening_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = TaskdeckStore::open(dir.path()).unwrap();

    let (done, _) = store
        .create_task("report", json!({"n": 1}), TTL, Some("alice".into()))
        .await
        .unwrap();
    assert!(
        store
            .complete_task(&done, CallToolResult::text("ready"))
            .await
            .unwrap()
    );
    assert!(
        store
            .set_task_meta(&done, json!({"io.example/trace": "t1"}))
            .await
            .unwrap()
    );

    let (failed, _) = store
        .create_task("report", json!({}), TTL, None)
        .await
        .unwrap();
    assert!(
        store
            .fail_task(&failed, JsonRpcError::invalid_params("bad"))
            .await
            .unwrap()
    );

    let (waiting, _) = store
        .create_task("deploy", json!({"to": "eu"}), TTL, None)
        .await
        .unwrap();
    assert!(
        store
            .require_input(&waiting, ask("approval"), Some("needs approval"))
            .await
            .unwrap()
    );
    store
        .apply_input_responses(&waiting, accept("approval"))
        .await
        .unwrap();
    assert!(
        store
            .require_input(&waiting, ask("region"), None)
            .await
            .unwrap()
    );

    let (running, token) = store
        .create_task("crawl", json!({}), TTL, Some(String::new()))
        .await
        .unwrap();
    let (cancelled, _) = store
        .create_task("crawl", json!({}), TTL, None)
        .await
        .unwrap();
    store.cancel_task(&cancelled, Some("user")).await.unwrap();
    close(store).await;
    assert!(!token.is_cancelled(), "closing the store cancels nothing");

    let store = TaskdeckStore::open(dir.path()).unwrap();
    let (task, result, error) = store.get_task_result(&done).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
    assert_eq!(task.meta, Some(json!({"io.example/trace": "t1"})));
    assert_eq!(
        serde_json::to_value(result).unwrap(),
        serde_json::to_value(CallToolResult::text("ready")).unwrap()
    );
    assert!(error.is_none());
    assert_eq!(
        store.task_owner(&done).await.unwrap(),
        Some(Some("alice".into()))
    );

    let (task, result, error) = store.get_task_result(&failed).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Failed);
    assert!(result.is_none());
    assert_eq!(error.unwrap().message, "bad");
    assert_eq!(store.task_owner(&failed).await.unwrap(), Some(None));

    let task = store.get_task(&waiting).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::InputRequired);
    assert_eq!(task.ttl, TTL);
    let outstanding = store
        .outstanding_input_requests(&waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outstanding.keys().collect::<Vec<_>>(), ["region"]);
    let resume = store.resume_context(&waiting).await.unwrap().unwrap();
    assert_eq!(resume.tool_name, "deploy");
    assert_eq!(resume.arguments, json!({"to": "eu"}));
    assert_eq!(
        resume.input_responses.keys().collect::<Vec<_>>(),
        ["approval"]
    );
    assert!(!resume.cancellation_token.unwrap().is_cancelled());
    // A spent key stays spent across the restart.
    assert!(
        store
            .require_input(&waiting, ask("approval"), None)
            .await
            .is_err()
    );
    // The answer after the restart resumes the task.
    let applied = store
        .apply_input_responses(&waiting, accept("region"))
        .await
        .unwrap()
        .unwrap();
    assert!(applied.is_complete());
    assert_eq!(
        store.get_task(&waiting).await.unwrap().unwrap().status,
        TaskStatus::Working
    );

    assert_eq!(
        store.get_task(&running).await.unwrap().unwrap().status,
        TaskStatus::Working
    );
    assert_eq!(
        store.task_owner(&running).await.unwrap(),
        Some(Some(String::new()))
    );
    let resumed = store.resume_context(&cancelled).await.unwrap().unwrap();
    assert!(
        resumed.cancellation_token.unwrap().is_cancelled(),
        "a cancelled task's new token is raised"
    );
    assert_eq!(
        store.get_task(&cancelled).await.unwrap().unwrap().status,
        TaskStatus::Cancelled
    );

    let listed = store.list_tasks(None).await.unwrap();
    for id in [&done, &failed, &waiting, &running, &cancelled] {
        assert!(
            listed.iter().any(|t| &t.task_id == id),
            "{id} listed after the restart"
        );
    }
    // A waiter parked after the restart is woken by a completion.
    let waiter = {
        let store = store.clone();
        let running = running.clone();
        tokio::spawn(async move { store.wait_for_completion(&running).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        store
            .complete_task(&running, CallToolResult::text("crawled"))
            .await
            .unwrap()
    );
    let (task, _, _) = tokio::time::timeout(Duration::from_secs(3), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(task.status, TaskStatus::Completed);
}

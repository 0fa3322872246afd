//! What a person does in Taskdeck's window reaches a tower-mcp server using
//! [`RemoteTaskdeckStore`]: its task is listed with the tool as its title, the person's answer
//! to its input request (`POST /v1/tasks/{id}/input` with the admin's token, as the window
//! sends it) is what `input_responses` and `resume_context` return, and the person's cancel
//! (`POST /v1/tasks/{id}/cancel`) raises the task's cancellation tokens. Against a real
//! `taskdeck serve`.

mod serve;

use std::time::Duration;

use serde_json::{Value, json};
use serve::Taskdeck;
use taskdeck_tower::RemoteTaskdeckStore;
use tower_mcp::{
    async_task::TaskStore,
    protocol::{InputRequest, InputRequests, TaskStatus},
};

/// A `/v1` request with the admin's token; the JSON answer and its status.
async fn as_admin(
    taskdeck: &Taskdeck,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(method, format!("{}{path}", taskdeck.url))
        .bearer_auth(&taskdeck.admin);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let resp = req.send().await.unwrap();
    (
        resp.status().as_u16(),
        resp.json().await.unwrap_or(Value::Null),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_answers_and_cancels_a_remote_task() {
    let taskdeck = Taskdeck::start().await;
    let store = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();
    let (id, token) = store
        .create_task(
            "deploy",
            json!({"service": "api"}),
            Some(600_000),
            Some("alice".into()),
        )
        .await
        .unwrap();

    // The window lists it, titled by the tool, under the token's principal.
    let (status, detail) = as_admin(
        &taskdeck,
        reqwest::Method::GET,
        &format!("/v1/tasks/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["task"]["title"], "deploy");
    assert_eq!(detail["task"]["principal"], "host-0");
    assert_eq!(
        store.task_owner(&id).await.unwrap(),
        Some(Some("alice".into()))
    );

    // The server asks; the person answers in the window.
    let request: InputRequest = serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "Deploy api to production?",
                   "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}},
                                       "required": ["ok"]}},
    }))
    .unwrap();
    let asked = store
        .require_input(
            &id,
            InputRequests::from([("approval".to_string(), request)]),
            Some("waiting for a decision"),
        )
        .await
        .unwrap();
    assert!(asked);
    let answer =
        json!({"inputResponses": {"approval": {"action": "accept", "content": {"ok": true}}}});
    let (status, reply) = as_admin(
        &taskdeck,
        reqwest::Method::POST,
        &format!("/v1/tasks/{id}/input"),
        Some(answer),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["accepted"], json!(["approval"]));

    let answers = serde_json::to_value(store.input_responses(&id).await.unwrap().unwrap()).unwrap();
    assert_eq!(answers["approval"]["action"], "accept", "{answers}");
    assert_eq!(
        answers["approval"]["content"],
        json!({"ok": true}),
        "{answers}"
    );
    assert!(
        store
            .outstanding_input_requests(&id)
            .await
            .unwrap()
            .unwrap()
            .is_empty()
    );
    let task = store.get_task(&id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Working);
    let resume = store.resume_context(&id).await.unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&resume.input_responses).unwrap(),
        answers
    );
    let replay_token = resume.cancellation_token.unwrap();
    assert!(!token.is_cancelled() && !replay_token.is_cancelled());

    // The person presses cancel: both tokens are raised, and the task reads as cancelled.
    let (status, reply) = as_admin(
        &taskdeck,
        reqwest::Method::POST,
        &format!("/v1/tasks/{id}/cancel"),
        None,
    )
    .await;
    assert_eq!(status, 202, "{reply}");
    tokio::time::timeout(Duration::from_secs(5), async {
        token.cancelled().await;
        replay_token.cancelled().await;
    })
    .await
    .expect("the window's cancel raised the store's tokens");
    let task = store.get_task(&id).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::Cancelled);
    let waited = store.wait_for_completion(&id).await.unwrap().unwrap();
    assert_eq!(waited.0.status, TaskStatus::Cancelled);
}

/// Another principal's hosted task is absent to it (invariant 5), and the routes need a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_principals_hosted_task_is_not_found() {
    let taskdeck = Taskdeck::start().await;
    let mine = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();
    let theirs = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();
    let (id, _) = mine.create_task("t", json!({}), None, None).await.unwrap();
    assert!(theirs.get_task(&id).await.unwrap().is_none());
    assert!(!theirs.discard_task(&id).await.unwrap());
    assert!(theirs.cancel_task(&id, None).await.unwrap().is_none());
    assert!(theirs.list_tasks(None).await.unwrap().is_empty());
    assert_eq!(mine.list_tasks(None).await.unwrap().len(), 1);
    assert!(
        RemoteTaskdeckStore::connect(&taskdeck.url, "not-a-token")
            .await
            .is_err()
    );
    // A URL without its scheme is named as such, not as an unreachable server.
    let bare = taskdeck.url.trim_start_matches("http://");
    let Err(e) = RemoteTaskdeckStore::connect(bare, "any").await else {
        panic!("{bare} was taken for Taskdeck's URL");
    };
    assert!(
        e.to_string().contains("not Taskdeck's URL") && e.to_string().contains(bare),
        "{e}"
    );
    let resp = reqwest::get(format!("{}/v1/hosted-tasks/{id}", taskdeck.url))
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
}

/// Over Taskdeck's caps, the remote store answers as tower-mcp's own stores do over theirs:
/// `RetentionLimitExceeded` with the cap; across pages, `list_tasks` still lists every task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caps_and_long_lists_read_as_tower_mcp_expects() {
    use tower_mcp::async_task::{TaskRetentionLimitKind, TaskStoreError};
    let taskdeck = Taskdeck::start().await;
    let store = RemoteTaskdeckStore::connect(&taskdeck.url, &taskdeck.fresh_token())
        .await
        .unwrap();
    let (id, _) = store.create_task("t", json!({}), None, None).await.unwrap();
    let error = store
        .set_task_meta(&id, json!({"m": "x".repeat(70 * 1024)}))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            TaskStoreError::RetentionLimitExceeded {
                kind: TaskRetentionLimitKind::PayloadBytes,
                limit: 65536
            }
        ),
        "{error:?}"
    );
    let error = store
        .create_task("t", json!({"a": "x".repeat(300 * 1024)}), None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            TaskStoreError::RetentionLimitExceeded { limit: 262144, .. }
        ),
        "{error:?}"
    );
    // More tasks than one page looks at (500).
    for _ in 0..600 {
        store.create_task("t", json!({}), None, None).await.unwrap();
    }
    assert_eq!(store.list_tasks(None).await.unwrap().len(), 601);
}

/// A Taskdeck restart leaves a hosted task as it was (its handler runs in the tower-mcp
/// server, which may still be running it): the server's store reconnects its event stream by
/// itself, so a cancel pressed after the restart still raises the task's token, and a new
/// connection finds the task and settles another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taskdeck_restart_leaves_hosted_tasks_to_their_server() {
    let mut taskdeck = Taskdeck::start().await;
    let token = taskdeck.fresh_token();
    let store = RemoteTaskdeckStore::connect(&taskdeck.url, &token)
        .await
        .unwrap();
    let (waiting, _) = store
        .create_task("deploy", json!({}), Some(600_000), Some("alice".into()))
        .await
        .unwrap();
    let (running, running_token) = store
        .create_task("build", json!({}), Some(600_000), None)
        .await
        .unwrap();
    let request: InputRequest =
        serde_json::from_value(json!({"method": "roots/list", "params": {}})).unwrap();
    let asked = InputRequests::from([("roots".to_string(), request)]);
    assert!(store.require_input(&waiting, asked, None).await.unwrap());
    taskdeck.restart().await;

    let (status, reply) = as_admin(
        &taskdeck,
        reqwest::Method::POST,
        &format!("/v1/tasks/{running}/cancel"),
        None,
    )
    .await;
    assert_eq!(status, 202, "{reply}");
    tokio::time::timeout(Duration::from_secs(5), running_token.cancelled())
        .await
        .expect("the reconnected event stream raised the token");

    let again = RemoteTaskdeckStore::connect(&taskdeck.url, &token)
        .await
        .unwrap();
    let task = again.get_task(&waiting).await.unwrap().unwrap();
    assert_eq!(task.status, TaskStatus::InputRequired);
    assert_eq!(
        again.task_owner(&waiting).await.unwrap(),
        Some(Some("alice".into()))
    );
    assert!(
        again
            .complete_task(&waiting, tower_mcp::CallToolResult::text("done"))
            .await
            .unwrap()
    );
}

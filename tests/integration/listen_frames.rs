//! `subscriptions/listen` (2026-07-28): one change of a task makes one `notifications/tasks`
//! frame, never several identical ones.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::harness::Server;

/// Every `data:` frame a stream sends within `window` (the stream stays open: it is cut then).
async fn frames_within(resp: reqwest::Response, window: Duration) -> Vec<Value> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    let mut frames = Vec::new();
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, stream.next()).await {
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let data: String = frame
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            if !data.is_empty() {
                frames.push(serde_json::from_str(&data).unwrap());
            }
        }
    }
    frames
}

#[tokio::test]
async fn one_update_one_frame_per_change() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let id = s.call(&t, "multi_input", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &id, "input_required").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let resp = s.listen(&t, json!("sub-1"), json!({"taskIds": [id]})).await;
    let reader = tokio::spawn(frames_within(resp, Duration::from_millis(1500)));
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.rpc(
        Some(&t),
        "tasks/update",
        json!({"taskId": id, "inputResponses": {
        "first-answer": {"action": "accept", "content": {"name": "a"}},
        "second-answer": {"action": "accept", "content": {"confirm": true}}}}),
        true,
    )
    .await
    .result();
    let frames = reader.await.unwrap();
    let notes: Vec<&Value> = frames
        .iter()
        .filter(|f| f["method"] == "notifications/tasks")
        .collect();
    // The state at subscription, then what the one update changed: the write that took both
    // answers logged three events (two answers, back to work), which make one frame; then the
    // tool's completion. Exactly three frames, no two alike.
    let statuses: Vec<&Value> = notes.iter().map(|n| &n["params"]["status"]).collect();
    assert_eq!(
        statuses,
        [
            &json!("input_required"),
            &json!("working"),
            &json!("completed")
        ],
        "frames: {notes:#?}"
    );
}

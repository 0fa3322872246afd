//! TTL: counted from creation; expired tasks are swept by the background sweeper; a task waiting
//! on a human never expires under them; caps delete the oldest finished tasks first.

use std::time::Duration;

use serde_json::json;

use crate::harness::Server;

#[tokio::test]
async fn expiry_sweeps_and_waiting_tasks_survive() {
    let s = Server::start(&["--conformance-fixtures", "--default-ttl-ms", "1500"]).await;
    let t = s.admin.clone();
    let events = |last_event_id: Option<String>| {
        let mut req = s.http.get(s.url("/v1/events")).bearer_auth(&t);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        req.send()
    };
    let live = events(None).await.unwrap();
    let finished = s
        .call(
            &t,
            "slow_compute",
            json!({"seconds": 0.05, "label": "short"}),
        )
        .await;
    assert_eq!(finished["ttlMs"], 1500);
    let finished = finished["taskId"].as_str().unwrap().to_string();
    let running = s
        .call(&t, "slow_compute", json!({"seconds": 60, "label": "long"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let waiting = s
        .call(&t, "request_approval", json!({"message": "still there?"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &finished, "completed").await;
    s.wait_status(&t, &waiting, "input_required").await;

    // Still readable shortly after finishing (no early expiry) ...
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.get(&t, &finished).await["status"], "completed");
    // ... and gone once createdAt + ttlMs has passed, swept without anyone asking.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, list) = s.v1_get(Some(&t), "/v1/tasks?status=completed").await;
    assert!(
        list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["taskId"] != finished.as_str()),
        "swept from the store"
    );
    let gone = s
        .rpc(Some(&t), "tasks/get", json!({"taskId": finished}), true)
        .await;
    assert_eq!(gone.error_code(), -32602);
    // Watchers are told: a `deleted` event with the task's last status, live and on resume.
    let is_deletion = |f: &crate::api::Frame| {
        f.2["event"]["kind"] == "deleted" && f.2["task"]["taskId"] == finished.as_str()
    };
    let frames = crate::api::read_until(live, |fs| fs.iter().any(is_deletion)).await;
    let deletion = frames.iter().find(|f| is_deletion(f)).unwrap();
    assert_eq!(deletion.2["event"]["data"]["status"], "completed");
    assert_eq!(deletion.2["event"]["data"]["tool"], "slow_compute");
    let first_id = frames[0].0.clone();
    let resumed = crate::api::read_until(events(first_id).await.unwrap(), |fs| {
        fs.iter().any(is_deletion)
    })
    .await;
    let replayed = resumed.iter().find(|f| is_deletion(f)).unwrap();
    assert_eq!(replayed.0, deletion.0, "the same event id");
    assert_eq!(replayed.2["task"]["status"], "completed");

    // The working task expired: failed with a JSON-RPC error saying so, its tool stopped.
    let expired = s.get(&t, &running).await;
    assert_eq!(expired["status"], "failed");
    assert_eq!(expired["error"]["data"]["reason"], "expired");

    // The task waiting for a human is untouched, ttlMs null, and completes when answered.
    let w = s.get(&t, &waiting).await;
    assert_eq!(w["status"], "input_required");
    assert_eq!(w["ttlMs"], serde_json::Value::Null);
    s.rpc(
        Some(&t),
        "tasks/update",
        json!({"taskId": waiting, "inputResponses": {"approval": {"action": "accept"}}}),
        true,
    )
    .await
    .result();
    let done = s.wait_status(&t, &waiting, "completed").await;
    let ttl = done["ttlMs"].as_u64().unwrap();
    assert!(
        ttl > 1500,
        "ttlMs extended by the time spent waiting: {ttl}"
    );
}

#[tokio::test]
async fn count_cap_deletes_oldest_finished_first() {
    let s = Server::start(&["--conformance-fixtures", "--max-tasks", "5"]).await;
    let t = s.admin.clone();
    let keep = s
        .call(&t, "request_approval", json!({"message": "keep me"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut ids = Vec::new();
    for i in 0..12 {
        let id = s
            .call(
                &t,
                "slow_compute",
                json!({"seconds": 0.01, "label": format!("n{i}")}),
            )
            .await["taskId"]
            .as_str()
            .unwrap()
            .to_string();
        s.wait_status(&t, &id, "completed").await;
        ids.push(id);
    }
    // The sweeper is woken by creations over the cap and deletes the oldest finished tasks,
    // each once it has been finished for 5 s.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, list) = s.v1_get(Some(&t), "/v1/tasks?limit=100").await;
        let present: Vec<String> = list["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["taskId"].as_str().unwrap().to_string())
            .collect();
        if present.len() <= 5 {
            assert!(
                present.contains(&keep),
                "a task still waiting is never deleted by a cap"
            );
            assert!(
                present.contains(ids.last().unwrap()),
                "the newest finished tasks stay"
            );
            assert!(
                !present.contains(&ids[0]),
                "the oldest finished task goes first"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "cap not enforced: {} tasks",
            present.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// More live tasks than the cap: none can go while they run, and once they finish the cap
/// holds without waiting for the next task to be created.
#[tokio::test]
async fn the_count_cap_holds_once_live_tasks_finish() {
    let s = Server::start(&["--conformance-fixtures", "--max-tasks", "3"]).await;
    let t = s.admin.clone();
    for i in 0..6 {
        let started = s
            .call(
                &t,
                "slow_compute",
                json!({"seconds": 1, "label": format!("live{i}")}),
            )
            .await;
        assert!(started["taskId"].is_string(), "{started}");
    }
    let (_, list) = s.v1_get(Some(&t), "/v1/tasks?limit=100").await;
    assert_eq!(
        list["tasks"].as_array().unwrap().len(),
        6,
        "live tasks stay: {list}"
    );
    // They finish about a second after their start, and may go 5 s after that.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (_, list) = s.v1_get(Some(&t), "/v1/tasks?limit=100").await;
        let tasks = list["tasks"].as_array().unwrap();
        let left = tasks.len();
        if left <= 3 && tasks.iter().all(|x| x["status"] == "completed") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{left} tasks kept over a cap of 3, with no task created since they finished"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

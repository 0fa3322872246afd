//! The `/v1` API: listing with filters and cursors, the event stream with resume, MCP
//! `notifications/tasks` over `subscriptions/listen`, and start-up errors.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::harness::Server;

pub(crate) type Frame = (Option<String>, Option<String>, Value);

/// Reads SSE frames from a response until `n` data frames arrived (5 s at most).
async fn read_frames(resp: reqwest::Response, n: usize) -> Vec<Frame> {
    read_until(resp, move |f| f.len() >= n).await
}

/// Reads SSE frames until `done(frames)` holds (5 s at most).
pub(crate) async fn read_until(
    resp: reqwest::Response,
    done: impl Fn(&[Frame]) -> bool,
) -> Vec<Frame> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    let mut frames = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !done(&frames) {
        let chunk = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("timed out reading SSE")
            .unwrap()
            .unwrap();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let (mut id, mut event, mut data) = (None, None, String::new());
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim());
                }
            }
            if !data.is_empty() {
                frames.push((id, event, serde_json::from_str(&data).unwrap()));
            }
        }
    }
    frames
}

/// `GET /v1/events` as `token`, resumed after event `last` (`Last-Event-ID`) when given.
async fn events(s: &Server, token: &str, last: Option<&str>) -> reqwest::Response {
    let mut request = s.http.get(s.url("/v1/events")).bearer_auth(token);
    if let Some(last) = last {
        request = request.header("Last-Event-ID", last);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn list_filters_and_paginates_newest_first() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let mut ids = Vec::new();
    for i in 0..7 {
        ids.push(
            s.call(
                &t,
                "slow_compute",
                json!({"seconds": 0.01, "label": format!("alpha-{i}")}),
            )
            .await["taskId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let waiting = s
        .call(
            &t,
            "request_approval",
            json!({"message": "needle in a haystack"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&t, &waiting, "input_required").await;
    for id in &ids {
        s.wait_status(&t, id, "completed").await;
    }
    let (_, page1) = s.v1_get(Some(&t), "/v1/tasks?limit=5").await;
    let page1_ids: Vec<&str> = page1["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(page1_ids[0], waiting, "newest first");
    assert_eq!(page1_ids.len(), 5);
    let cursor = page1["nextCursor"].as_str().unwrap();
    let (_, page2) = s
        .v1_get(Some(&t), &format!("/v1/tasks?limit=5&cursor={cursor}"))
        .await;
    assert_eq!(page2["tasks"].as_array().unwrap().len(), 3);
    assert_eq!(page2["nextCursor"], Value::Null);
    assert_eq!(page1["counts"]["completed"], 7);
    assert_eq!(page1["counts"]["input_required"], 1);

    let (_, inbox) = s.v1_get(Some(&t), "/v1/tasks?status=input_required").await;
    assert_eq!(inbox["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(
        inbox["tasks"][0]["inputRequests"]["approval"]["params"]["message"],
        "needle in a haystack"
    );
    let (_, by_tool) = s.v1_get(Some(&t), "/v1/tasks?tool=request_approval").await;
    assert_eq!(by_tool["tasks"].as_array().unwrap().len(), 1);
    let (_, search) = s.v1_get(Some(&t), "/v1/tasks?q=alpha-3").await;
    assert_eq!(
        search["tasks"].as_array().unwrap().len(),
        1,
        "search matches arguments"
    );
    let (_, search) = s.v1_get(Some(&t), "/v1/tasks?q=Computed%20alpha-5").await;
    assert_eq!(
        search["tasks"].as_array().unwrap().len(),
        1,
        "search matches results"
    );
    // A malformed query string gets a problem document, like every other /v1 error.
    for path in [
        "/v1/tasks?limit=abc",
        "/v1/tasks?limit=0",
        "/v1/tasks?limit=1001",
        "/v1/tasks?q=zz%00",
        "/v1/events?since=x",
        "/v1/tasks/x/log?offset=-1",
    ] {
        let resp = s
            .http
            .get(s.url(path))
            .bearer_auth(&t)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{path}");
        assert_eq!(
            resp.headers()["content-type"],
            "application/problem+json",
            "{path}"
        );
        let problem: Value = resp.json().await.unwrap();
        assert_eq!(problem["status"], 400, "{path}");
    }
    // A body not sent as JSON: 415, and nothing is created.
    for (path, body) in [
        ("/v1/jobs", r#"{"external":{"name":"x"}}"#),
        ("/v1/agents", r#"{"name":"plain-text-agent"}"#),
    ] {
        let resp = s
            .http
            .post(s.url(path))
            .bearer_auth(&t)
            .header("content-type", "text/plain")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 415, "{path}");
        assert_eq!(resp.headers()["content-type"], "application/problem+json");
    }
    let (_, tasks) = s.v1_get(Some(&t), "/v1/tasks").await;
    assert!(
        tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["tool"] != "external"),
        "{tasks}"
    );
    let (_, agents) = s.v1_get(Some(&t), "/v1/agents").await;
    assert!(!agents.to_string().contains("plain-text-agent"), "{agents}");
    // A method a path does not take: 405 with Allow, as a problem document too.
    let resp = s
        .http
        .delete(s.url("/v1/tasks"))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    assert!(resp.headers().contains_key("allow"));
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    let (_, none) = s.v1_get(Some(&t), "/v1/tasks?q=100%25_").await;
    assert_eq!(
        none["tasks"],
        json!([]),
        "LIKE wildcards in the query are literal"
    );
}

#[tokio::test]
async fn a_list_page_names_the_newest_change_it_reflects_and_the_stream_resumes_from_it() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let (_, empty) = s.v1_get(Some(&t), "/v1/tasks?limit=5").await;
    assert_eq!(empty["eventId"], "0", "no change yet");
    let first = s.completed_task(&t, "before").await;
    let (_, page) = s.v1_get(Some(&t), "/v1/tasks?limit=5").await;
    assert_eq!(page["counts"], json!({"completed": 1}));
    let event_id = page["eventId"].as_str().unwrap().to_string();
    let (_, history) = s.v1_get(Some(&t), &format!("/v1/tasks/{first}")).await;
    let newest = history["timeline"].as_array().unwrap().last().unwrap()["id"].clone();
    assert_eq!(
        event_id,
        newest.to_string(),
        "the page reflects the task's last event"
    );

    // A change after the page: a stream resumed from its eventId brings exactly that change
    // and what follows, nothing the page already had.
    let second = s.completed_task(&t, "after").await;
    let resp = events(&s, &t, Some(&event_id)).await;
    let frames = read_until(resp, |f| {
        f.iter().any(|x| {
            x.2["task"]["taskId"] == second.as_str()
                && x.2["task"]["status"] == "completed"
                && x.2["event"]["kind"] == "status"
                && x.2["event"]["data"]["to"] == "completed"
        })
    })
    .await;
    assert!(
        frames
            .iter()
            .all(|f| f.2["task"]["taskId"] == second.as_str()),
        "only the later task's changes are replayed: {frames:?}"
    );
    assert_eq!(frames[0].2["event"]["kind"], "created");
    // A principal's page names an event id too (its own changes are what it reflects).
    let other = s.token("other");
    let (_, theirs) = s.v1_get(Some(&other), "/v1/tasks").await;
    assert_eq!(theirs["tasks"], json!([]));
    assert!(theirs["eventId"].as_str().unwrap().parse::<i64>().is_ok());
}

#[tokio::test]
async fn a_long_timeline_comes_newest_first_in_pages() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let (_, job) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"external": {"name": "chatty"}}),
        )
        .await;
    let id = job["taskId"].as_str().unwrap().to_string();
    for i in 0..7 {
        let (status, _) = s
            .v1_post(
                Some(&t),
                &format!("/v1/jobs/{id}/report"),
                json!({"statusMessage": format!("step {i}")}),
            )
            .await;
        assert_eq!(status, 200);
    }
    let (_, all) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}")).await;
    let ids = |v: &Value| -> Vec<i64> {
        v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_i64().unwrap())
            .collect()
    };
    let every = ids(&all);
    assert!(every.len() >= 8, "{all}");
    assert_eq!(all["timelineMore"], false);
    // The newest three, oldest first; then the three before them; then the rest.
    let (_, page) = s
        .v1_get(Some(&t), &format!("/v1/tasks/{id}?timelineLimit=3"))
        .await;
    assert_eq!(ids(&page), every[every.len() - 3..].to_vec());
    assert_eq!(page["timelineMore"], true);
    let before = ids(&page)[0];
    let (_, older) = s
        .v1_get(
            Some(&t),
            &format!("/v1/tasks/{id}?timelineLimit=3&timelineBefore={before}"),
        )
        .await;
    assert_eq!(
        ids(&older),
        every[every.len() - 6..every.len() - 3].to_vec()
    );
    let (_, rest) = s
        .v1_get(
            Some(&t),
            &format!("/v1/tasks/{id}?timelineBefore={}", ids(&older)[0]),
        )
        .await;
    assert_eq!(ids(&rest), every[..every.len() - 6].to_vec());
    assert_eq!(rest["timelineMore"], false);
    for bad in ["timelineLimit=0", "timelineLimit=5001", "timelineBefore=x"] {
        let (status, body) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}?{bad}")).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
}

#[tokio::test]
async fn events_stream_live_and_resume_from_last_event_id() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let resp = events(&s, &t, None).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let id = s
        .call(&t, "slow_compute", json!({"seconds": 0.01, "label": "ev"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let frames = read_frames(resp, 3).await;
    assert_eq!(frames[0].1.as_deref(), Some("change"));
    assert_eq!(frames[0].2["event"]["kind"], "created");
    assert_eq!(frames[0].2["task"]["taskId"], id.as_str());
    let first_id: i64 = frames[0].0.as_ref().unwrap().parse().unwrap();
    s.wait_status(&t, &id, "completed").await;

    // Resume after the first event: the rest is replayed from the store, in order.
    let resp = events(&s, &t, Some(&first_id.to_string())).await;
    let replay = read_frames(resp, 2).await;
    let replay_ids: Vec<i64> = replay
        .iter()
        .map(|f| f.0.as_ref().unwrap().parse().unwrap())
        .collect();
    assert!(
        replay_ids[0] > first_id && replay_ids[1] > replay_ids[0],
        "{replay_ids:?}"
    );
    assert_eq!(replay.last().unwrap().2["task"]["status"], "completed");

    // Another principal's events are not delivered.
    let other = s.token("other");
    let resp = events(&s, &other, Some("0")).await;
    let mine = s
        .call(
            &other,
            "slow_compute",
            json!({"seconds": 0.01, "label": "mine"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let frames = read_frames(resp, 1).await;
    assert_eq!(
        frames[0].2["task"]["taskId"],
        mine.as_str(),
        "the replay skipped the admin's tasks"
    );

    // A Last-Event-ID this store never reached (an older backup restored): reload, then live.
    let resume = |id: &str| {
        s.http
            .get(s.url("/v1/events"))
            .bearer_auth(&t)
            .header("Last-Event-ID", id.to_string())
            .send()
    };
    let resp = resume("999999999").await.unwrap();
    let later = s
        .call(
            &t,
            "slow_compute",
            json!({"seconds": 0.01, "label": "after-restore"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let frames = read_until(resp, |f| {
        f.iter().any(|x| x.2["task"]["taskId"] == later.as_str())
    })
    .await;
    assert_eq!(frames[0].1.as_deref(), Some("resync"));
    // One that is not an event id at all: the same.
    let resp = resume("abc").await.unwrap();
    assert_eq!(read_frames(resp, 1).await[0].1.as_deref(), Some("resync"));
}

#[tokio::test]
async fn streams_open_together_each_get_every_change_with_its_own_data() {
    // The live changes' data is rendered once and shared by the open streams: each frame must
    // still carry its own event (the SSE id) and the task as it was after that event.
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let mut streams = Vec::new();
    for _ in 0..3 {
        let resp = events(&s, &t, None).await;
        streams.push(resp);
    }
    let id = s
        .call(
            &t,
            "slow_compute",
            json!({"seconds": 0.05, "label": "shared"}),
        )
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut seen = Vec::new();
    for resp in streams {
        let frames = read_until(resp, |f| {
            f.iter().any(|x| x.2["task"]["status"] == "completed")
        })
        .await;
        for (sse_id, event, data) in &frames {
            assert_eq!(event.as_deref(), Some("change"));
            assert_eq!(data["task"]["taskId"], id.as_str());
            assert_eq!(
                sse_id.as_deref().map(|i| i.parse::<i64>().unwrap()),
                data["event"]["id"].as_i64(),
                "a frame carries another change's data: {data}"
            );
        }
        // Each progress event shows the task as it was right after it.
        let progress: Vec<f64> = frames
            .iter()
            .filter(|f| f.2["event"]["kind"] == "progress")
            .map(|f| {
                assert_eq!(
                    f.2["task"]["progress"]["current"],
                    f.2["event"]["data"]["current"]
                );
                f.2["event"]["data"]["current"].as_f64().unwrap()
            })
            .collect();
        assert!(
            !progress.is_empty() && progress.windows(2).all(|w| w[0] < w[1]),
            "{progress:?}"
        );
        seen.push(frames);
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[1], seen[2]);
}

/// A stream that falls behind the feed (its reader paused while thousands of changes went by,
/// more than the feed keeps) gets what it missed from the store, in order, with no `resync`.
#[tokio::test]
async fn a_stream_that_falls_behind_catches_up_from_the_store_without_resync() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let mut paused = events(&s, &t, None).await.bytes_stream();
    // 6,000 tasks, about 18,000 changes (the feed keeps 4,096; the sockets hold a few MB).
    let mut makers = Vec::new();
    for m in 0..24 {
        let http = s.http.clone();
        let url = s.url("/v1/jobs");
        let t = t.clone();
        makers.push(tokio::spawn(async move {
            for i in 0..250 {
                let r = http
                    .post(&url)
                    .bearer_auth(&t)
                    .json(&json!({"tool": "echo", "arguments": {"note": format!("lag {m}-{i}")}}))
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success(), "{}", r.status());
            }
        }));
    }
    for m in makers {
        m.await.unwrap();
    }
    let db = rusqlite::Connection::open_with_flags(
        s.dir.join("data").join("taskdeck.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let ids = || -> Vec<i64> {
        let mut stmt = db.prepare("SELECT id FROM events ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    // Every task has settled: wait for its last event to be in the store.
    let mut want = ids();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = ids();
        if now == want {
            break;
        }
        want = now;
    }
    let mut got = Vec::new();
    let mut buf = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while got.last() != want.last() {
        let chunk = tokio::time::timeout_at(deadline, paused.next())
            .await
            .unwrap_or_else(|_| panic!("timed out after {} of {} events", got.len(), want.len()))
            .unwrap()
            .unwrap();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            assert!(
                !frame.contains("event: resync"),
                "resync after {} events",
                got.len()
            );
            if let Some(id) = frame.lines().find_map(|l| l.strip_prefix("id: ")) {
                got.push(id.trim().parse::<i64>().unwrap());
            }
        }
    }
    assert_eq!(got.len(), want.len(), "every change, once");
    assert_eq!(got, want, "in order, none missing");
}

/// An idle `/v1/events` stream carries a keep-alive comment every 15 s, and none with
/// `?keepAlive=false` (what the UI asks for over loopback, so an idle window wakes nothing).
#[tokio::test]
async fn an_idle_stream_gets_keep_alives_unless_it_asks_for_none() {
    let s = Server::start(&[]).await;
    let open = |query: &'static str| {
        s.http
            .get(s.url(&format!("/v1/events{query}")))
            .bearer_auth(&s.admin)
            .send()
    };
    let (mut kept, mut quiet) = (
        open("").await.unwrap(),
        open("?keepAlive=false").await.unwrap(),
    );
    assert_eq!(quiet.status(), 200);
    let mut bytes = (Vec::new(), Vec::new());
    let until = tokio::time::Instant::now() + Duration::from_secs(17);
    while tokio::time::Instant::now() < until {
        tokio::select! {
            c = kept.chunk() => bytes.0.extend_from_slice(&c.unwrap().unwrap()),
            c = quiet.chunk() => bytes.1.extend_from_slice(&c.unwrap().unwrap_or_default()),
            () = tokio::time::sleep_until(until) => {}
        }
    }
    let kept = String::from_utf8_lossy(&bytes.0);
    assert!(kept.starts_with(':'), "no keep-alive in 17 s: {kept:?}");
    assert!(
        bytes.1.is_empty(),
        "keepAlive=false sent {:?}",
        String::from_utf8_lossy(&bytes.1)
    );
    let (status, body) = s.v1_get(Some(&s.admin), "/v1/events?keepAlive=maybe").await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn subscriptions_listen_delivers_notifications_tasks() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let id = s
        .call(&t, "confirm_delete", json!({"filename": "n.txt"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let resp = s
        .listen(&t, json!("sub-1"), json!({"taskIds": [id, "not-a-task"]}))
        .await;
    assert_eq!(resp.status(), 200);
    s.wait_status(&t, &id, "input_required").await;
    let reader = tokio::spawn(read_until(resp, |f| {
        f.iter().any(|x| x.2["params"]["status"] == "completed")
    }));
    tokio::time::sleep(Duration::from_millis(100)).await;
    s.rpc(Some(&t), "tasks/update", json!({"taskId": id, "inputResponses": {"confirm-delete": {"action": "accept", "content": {"confirm": true}}}}), true).await.result();
    let frames = reader.await.unwrap();
    let ack = &frames[0].2;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "unknown ids are not acknowledged"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    // First the current state, then every change until completion, each a full DetailedTask.
    let note = &frames[1].2;
    assert_eq!(note["method"], "notifications/tasks");
    assert_eq!(note["params"]["taskId"], id.as_str());
    let waiting = frames
        .iter()
        .find(|f| f.2["params"]["status"] == "input_required")
        .expect("an input_required notification");
    assert!(waiting.2["params"]["inputRequests"]["confirm-delete"].is_object());
    let last = &frames.last().unwrap().2;
    assert_eq!(
        last["params"]["result"]["content"][0]["text"],
        "Deleted n.txt"
    );
    for f in &frames[1..] {
        assert_eq!(
            f.2["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "sub-1"
        );
    }
}

/// Runs `taskdeck serve --port PORT` on `s.dir`'s `data` and `cfg` dirs (named), as a second
/// start beside `s`; asserts it is refused (exit 1) and returns its stderr.
async fn serve_again(s: &Server, port: &str, data: &str, cfg: &str) -> String {
    let out = tokio::process::Command::new(crate::harness::BIN)
        .args(["serve", "--port", port, "--data-dir"])
        .arg(s.dir.join(data))
        .arg("--config-dir")
        .arg(s.dir.join(cfg))
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    err
}

#[tokio::test]
async fn busy_port_is_a_clear_error() {
    let s = Server::start(&[]).await;
    let err = serve_again(&s, &s.port.to_string(), "data2", "cfg2").await;
    assert!(
        err.contains(&format!("port {} on 127.0.0.1 is already in use", s.port)),
        "{err}"
    );
}

/// A second `taskdeck serve` on a data dir in use, on the first one's port or on another, is
/// refused and says where the first one runs, with the link that opens its UI.
#[tokio::test]
async fn a_second_serve_on_the_data_dir_leads_to_the_first() {
    let s = Server::start(&[]).await;
    for port in [s.port.to_string(), "0".to_string()] {
        let err = serve_again(&s, &port, "data", "cfg").await;
        let running = format!(
            "Taskdeck is already running on this data dir ({}) at http://127.0.0.1:{} (pid {});",
            s.dir.join("data").display(),
            s.port,
            s.child.id().unwrap()
        );
        assert!(err.contains(&running), "--port {port}: {err}");
        let link = format!(
            "Open its UI:   http://127.0.0.1:{}/#token={}",
            s.port, s.admin
        );
        assert!(err.contains(&link), "--port {port}: {err}");
    }
    // From another config dir, whose admin token is not the running one's: no link that
    // fails, but where to sign in.
    std::fs::create_dir_all(s.dir.join("cfg2")).unwrap();
    let other = format!("td_{}", "x".repeat(43));
    std::fs::write(s.dir.join("cfg2/admin-token"), &other).unwrap();
    let err = serve_again(&s, "0", "data", "cfg2").await;
    assert!(!err.contains("#token="), "{err}");
    assert!(
        err.contains("admin-token does not hold its admin token"),
        "{err}"
    );
}

#[tokio::test]
async fn connect_an_agent_creates_a_working_token() {
    let s = Server::start(&[]).await;
    let (status, created) = s
        .v1_post(Some(&s.admin), "/v1/agents", json!({"name": "claude-code"}))
        .await;
    assert_eq!(status, 201, "{created}");
    let token = created["token"].as_str().unwrap().to_string();
    assert_eq!(created["mcpUrl"], s.url("/mcp"));
    let configs = created["configs"].as_array().unwrap();
    let clients: Vec<&str> = configs
        .iter()
        .map(|c| c["client"].as_str().unwrap())
        .collect();
    assert_eq!(
        clients,
        ["claude-code", "claude-desktop", "vscode", "cursor", "codex"]
    );
    assert!(
        configs
            .iter()
            .all(|c| c["text"].as_str().unwrap().contains(&token))
    );
    let (_, me) = s.v1_get(Some(&token), "/v1/me").await;
    assert_eq!(
        me,
        json!({"principal": "claude-code", "role": "agent", "admin": false})
    );
    // The new principal is an agent, not an admin: it cannot mint tokens.
    let (status, _) = s
        .v1_post(Some(&token), "/v1/agents", json!({"name": "sneaky"}))
        .await;
    assert_eq!(status, 403);
    let (status, _) = s
        .v1_post(Some(&s.admin), "/v1/agents", json!({"name": "claude-code"}))
        .await;
    assert_eq!(status, 409);
    let (status, _) = s
        .v1_post(Some(&s.admin), "/v1/agents", json!({"name": "bad name!"}))
        .await;
    assert_eq!(status, 422);
    let (_, list) = s.v1_get(Some(&s.admin), "/v1/agents").await;
    assert!(
        list["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "claude-code")
    );
    assert!(
        !list.to_string().contains(&token),
        "secrets are never listed"
    );

    // The CLI prints the same kind of configuration.
    let out = std::process::Command::new(crate::harness::BIN)
        .args([
            "mcp-config",
            "cursor",
            "--name",
            "cursor-1",
            "--port",
            &s.port.to_string(),
            "--data-dir",
        ])
        .arg(s.dir.join("data"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let cfg: Value = serde_json::from_slice(&out.stdout).unwrap();
    let auth = cfg["mcpServers"]["taskdeck"]["headers"]["Authorization"]
        .as_str()
        .unwrap();
    let cli_token = auth.strip_prefix("Bearer ").unwrap();
    let (_, me) = s.v1_get(Some(cli_token), "/v1/me").await;
    assert_eq!(me["principal"], "cursor-1");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));

    // A --port other than the one this data dir's Taskdeck runs on: the token made is this
    // data dir's, which a Taskdeck there (serving another data dir) would refuse. Said.
    let out = std::process::Command::new(crate::harness::BIN)
        .args(["mcp-config", "cursor", "--name", "cursor-2", "--port"])
        .arg((s.port + 1).to_string())
        .arg("--data-dir")
        .arg(s.dir.join("data"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("runs on port {}, not {}", s.port, s.port + 1)),
        "{said}"
    );

    // A --token this data dir does not know is still printed, with a warning: the client
    // would be refused at its first request.
    for (token, warned) in [("td_not_a_real_token", true), (cli_token, false)] {
        let out = std::process::Command::new(crate::harness::BIN)
            .args(["mcp-config", "cursor", "--token", token, "--data-dir"])
            .arg(s.dir.join("data"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(said.contains("is not a live token"), warned, "{said}");
    }

    // A person's token given to an agent's client: said.
    let (_, human) = s
        .v1_post(
            Some(&s.admin),
            "/v1/agents",
            json!({"name": "carol", "role": "human"}),
        )
        .await;
    let out = std::process::Command::new(crate::harness::BIN)
        .args(["mcp-config", "cursor", "--data-dir"])
        .arg(s.dir.join("data"))
        .args(["--token", human["token"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("is a person's (human)"), "{said}");

    // Codex's table, for the config.toml where this Codex reads it.
    let out = std::process::Command::new(crate::harness::BIN)
        .args(["mcp-config", "codex", "--token", cli_token, "--data-dir"])
        .arg(s.dir.join("data"))
        .env("CODEX_HOME", "/srv/codex")
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("Codex — /srv/codex/config.toml:"), "{said}");
    let table: toml_edit::DocumentMut = String::from_utf8_lossy(&out.stdout).parse().unwrap();
    assert_eq!(
        table["mcp_servers"]["taskdeck"]["http_headers"]["Authorization"].as_str(),
        Some(format!("Bearer {cli_token}").as_str())
    );

    // On a data dir no Taskdeck serves, the token made is that data dir's: said, since the
    // running one (on another data dir) would refuse it.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(crate::harness::BIN)
        .args(["mcp-config", "cursor", "--data-dir"])
        .arg(elsewhere.path().join("data"))
        .arg("--config-dir")
        .arg(elsewhere.path().join("cfg"))
        .env_remove("TASKDECK_PORT")
        .env_remove("TASKDECK_TOKEN")
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no Taskdeck is running on")
            && said.contains("a Taskdeck started with another --data-dir refuses it"),
        "{said}"
    );
}

#[tokio::test]
async fn openapi_document_covers_every_route() {
    let s = Server::start(&[]).await;
    let (status, doc) = s.v1_get(Some(&s.admin), "/v1/openapi.json").await;
    assert_eq!(status, 200);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/v1/tasks", vec!["get"]),
        ("/v1/tasks/{taskId}", vec!["get"]),
        ("/v1/tasks/{taskId}/log", vec!["get"]),
        ("/v1/tasks/{taskId}/input", vec!["post"]),
        ("/v1/tasks/{taskId}/cancel", vec!["post"]),
        ("/v1/events", vec!["get"]),
        ("/v1/me", vec!["get"]),
        ("/v1/tools", vec!["get"]),
        ("/v1/agents", vec!["get", "post"]),
        ("/v1/jobs", vec!["post"]),
        ("/v1/jobs/{taskId}", vec!["get", "delete"]),
        ("/v1/jobs/{taskId}/cancel", vec!["post"]),
        ("/v1/jobs/{taskId}/report", vec!["post"]),
        ("/v1/hosted-tasks", vec!["get", "post"]),
        ("/v1/hosted-tasks/{taskId}", vec!["get", "delete"]),
        ("/v1/hosted-tasks/{taskId}/settle", vec!["post"]),
        ("/v1/hosted-tasks/{taskId}/ttl", vec!["put"]),
        ("/v1/hosted-tasks/{taskId}/status", vec!["post"]),
        ("/v1/hosted-tasks/{taskId}/input-requests", vec!["put"]),
        ("/v1/hosted-tasks/{taskId}/input-responses", vec!["post"]),
        ("/v1/hosted-tasks/{taskId}/meta", vec!["put"]),
    ] {
        for m in methods {
            assert!(
                paths.get(path).and_then(|p| p.get(m)).is_some(),
                "{m} {path} missing from the OpenAPI document"
            );
        }
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    // A report ends a job at most one way: its schema is one form per way, each with the
    // members every report may carry.
    let report_forms = doc["components"]["schemas"]["ReportBody"]["oneOf"]
        .as_array()
        .unwrap();
    assert!(
        report_forms
            .iter()
            .all(|f| f["properties"]["statusMessage"].is_object())
    );
}

#[tokio::test]
async fn ui_assets_are_served_with_a_strict_csp_and_revalidate_by_etag() {
    let s = Server::start(&[]).await;
    let page = s.http.get(s.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200, "the UI needs no token");
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("object-src 'none'"),
        "{csp}"
    );
    let etag = page.headers()["etag"].to_str().unwrap().to_string();
    assert!(page.text().await.unwrap().contains("modulepreload"));
    let again = s
        .http
        .get(s.url("/"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert!(again.bytes().await.unwrap().is_empty());
    let other = s
        .http
        .get(s.url("/js/app.js"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200, "another file's ETag does not match");
    assert_eq!(
        other.headers()["content-type"].to_str().unwrap(),
        "text/javascript"
    );
}

/// A list page and the event stream carry a task's large `arguments` and `result` cut to size,
/// saying which (`abridged`); the task read alone is whole, and its questions are never cut.
#[tokio::test]
async fn lists_and_events_cut_large_members_and_the_task_alone_is_whole() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    let notes = format!("first line\n{}\nlast line", "é".repeat(100_000));
    let stream = events(&s, &t, None).await;
    let (status, job) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"external": {"name": "big", "notes": notes, "many": (0..300).collect::<Vec<_>>()}}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    // The jobs API's answer is the task whole.
    assert_eq!(job["arguments"]["notes"], notes.as_str());
    assert!(job.get("abridged").is_none());
    let id = job["taskId"].as_str().unwrap().to_string();
    let question = "q".repeat(5000);
    let report = |body: Value| {
        let (s, id) = (&s, id.clone());
        async move {
            let (status, answer) = s
                .v1_post(Some(&s.admin), &format!("/v1/jobs/{id}/report"), body)
                .await;
            assert!(status.is_success(), "{answer}");
        }
    };
    report(json!({"progress": {"current": 1, "total": 2}})).await;
    report(json!({"inputRequests": {"ask": {"method": "elicitation/create",
        "params": {"message": question, "requestedSchema": {"type": "object", "properties": {}}}}}}))
    .await;
    let (_, page) = s.v1_get(Some(&t), "/v1/tasks").await;
    let listed = &page["tasks"][0];
    assert_eq!(
        listed["inputRequests"]["ask"]["params"]["message"],
        question.as_str()
    );
    assert_eq!(listed["abridged"], json!(["arguments"]));
    s.answer(&id, "ask", json!({"action": "accept", "content": {}}))
        .await;
    let output = format!("{}\nexit 0", "o".repeat(300_000));
    report(
        json!({"result": {"content": [{"type": "text", "text": output}],
        "structuredContent": {"exitCode": 0}}}),
    )
    .await;

    let frames = read_until(stream, |f| {
        f.iter()
            .any(|x| x.2["task"]["taskId"] == id.as_str() && x.2["task"]["status"] == "completed")
    })
    .await;
    let cut_text = |text: &Value, first: &str, last: &str| {
        let text = text.as_str().unwrap();
        assert!(
            text.chars().count() < 2100,
            "{} chars",
            text.chars().count()
        );
        assert!(text.starts_with(first) && text.ends_with(last), "{text}");
        assert!(text.contains('…'));
    };
    for (_, _, frame) in frames
        .iter()
        .filter(|f| f.2["task"]["taskId"] == id.as_str())
    {
        assert!(
            frame.to_string().len() < 20_000,
            "{} bytes",
            frame.to_string().len()
        );
        let task = &frame["task"];
        cut_text(&task["arguments"]["notes"], "first line\n", "\nlast line");
        assert_eq!(task["arguments"]["many"].as_array().unwrap().len(), 100);
        if task["status"] == "completed" {
            assert_eq!(task["abridged"], json!(["arguments", "result"]));
            cut_text(&task["result"]["content"][0]["text"], "ooo", "\nexit 0");
            assert_eq!(task["result"]["structuredContent"]["exitCode"], 0);
        } else {
            assert_eq!(task["abridged"], json!(["arguments"]));
        }
    }
    // A replay from the store is cut the same way, as is the list page.
    let replay = events(&s, &t, Some("0")).await;
    // (A replay carries each task as it is now: it ends at the event that completed it.)
    let replayed = read_until(replay, |f| {
        f.iter().any(|x| {
            x.2["task"]["taskId"] == id.as_str() && x.2["event"]["data"]["to"] == "completed"
        })
    })
    .await;
    assert!(replayed.iter().all(|f| f.2["task"]["abridged"].is_array()));
    // The report's answer to the question: its event carries the (small) data whole.
    let answered = replayed
        .iter()
        .find(|f| f.2["event"]["kind"] == "inputAnswered")
        .expect("the answer's event");
    assert!(answered.2["event"].get("abridged").is_none());
    let (_, page) = s.v1_get(Some(&t), "/v1/tasks").await;
    let listed = &page["tasks"][0];
    assert_eq!(listed["abridged"], json!(["arguments", "result"]));
    cut_text(&listed["result"]["content"][0]["text"], "ooo", "\nexit 0");
    // Read alone, the task is whole.
    let (_, alone) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}")).await;
    let whole = &alone["task"];
    assert!(whole.get("abridged").is_none());
    assert_eq!(whole["arguments"]["notes"], notes.as_str());
    assert_eq!(whole["arguments"]["many"].as_array().unwrap().len(), 300);
    assert_eq!(whole["result"]["content"][0]["text"], output.as_str());
    // A task with nothing long is listed as it is, without `abridged`.
    s.v1_post(Some(&t), "/v1/jobs", json!({"external": {"name": "small"}}))
        .await;
    let (_, page) = s.v1_get(Some(&t), "/v1/tasks").await;
    assert_eq!(page["tasks"][0]["title"], "small");
    assert!(page["tasks"][0].get("abridged").is_none());
}

/// A `/v1/events` change whose event data holds a large call (a `decision`'s) carries it cut
/// and says so; the task's timeline has it whole.
#[tokio::test]
async fn the_stream_cuts_a_large_event_and_the_timeline_keeps_it_whole() {
    let s = Server::start(&[]).await;
    s.write_policy(
        json!([{"principal": "*", "server": "taskdeck", "tool": "run_command",
        "arguments": {"command": "echo *"}, "decision": "allow"}]),
    );
    let t = s.admin.clone();
    let stream = events(&s, &t, None).await;
    let command = format!("echo {} end", "a".repeat(6000));
    let (status, job) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"tool": "run_command", "arguments": {"command": command}}),
        )
        .await;
    assert_eq!(status, 202, "{job}");
    let id = job["taskId"].as_str().unwrap().to_string();
    let frames = read_until(stream, |f| {
        f.iter()
            .any(|x| x.2["task"]["taskId"] == id.as_str() && x.2["event"]["kind"] == "decision")
    })
    .await;
    let decision = &frames
        .iter()
        .find(|x| x.2["event"]["kind"] == "decision")
        .unwrap()
        .2["event"];
    assert_eq!(decision["abridged"], true, "{decision}");
    assert!(decision.to_string().len() < 6000, "{decision}");
    assert!(!decision.to_string().contains(&command));
    s.wait_status(&t, &id, "completed").await;
    let (_, alone) = s.v1_get(Some(&t), &format!("/v1/tasks/{id}")).await;
    let whole = alone["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "decision")
        .unwrap();
    assert!(whole.get("abridged").is_none());
    assert!(whole.to_string().contains(&command), "{whole}");
}

//! `POST /v1/jobs` with an `Idempotency-Key` (IETF httpapi idempotency-key draft): a repeated
//! start returns the original task, racing repeats create one task, keys are per principal and
//! survive a restart; and `taskdeck run` retries a start that failed on the way (its answer
//! lost, a 503) with the same key, so the retry never duplicates the job.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use reqwest::header::HeaderValue;
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use crate::harness::{BIN, Server, read_answer};

/// `POST /v1/jobs` as `token` with `Idempotency-Key: key` (none when `None`); returns the
/// status, the `Location` header and the JSON body. An error must be a problem document that
/// names the header.
async fn start(
    s: &Server,
    token: &str,
    key: Option<HeaderValue>,
    body: &Value,
) -> (u16, Option<String>, Value) {
    let mut req = s.http.post(s.url("/v1/jobs")).bearer_auth(token).json(body);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    let resp = req.send().await.unwrap();
    let location = resp
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_string());
    let (status, content_type, body) = read_answer(resp).await;
    if status >= 400 {
        assert_eq!(content_type, "application/problem+json", "{status} {body}");
        let detail = body["detail"].as_str().unwrap();
        assert!(
            detail.contains("Idempotency-Key"),
            "names the header: {detail}"
        );
    }
    (status, location, body)
}

fn key(k: &str) -> Option<HeaderValue> {
    Some(HeaderValue::from_str(k).unwrap())
}

/// The admin's external jobs named `name` (the admin sees every principal's; these are its own).
async fn jobs_named(s: &Server, name: &str) -> Vec<String> {
    let (_, list) = s
        .v1_get(Some(&s.admin), "/v1/tasks?tool=external&principal=admin")
        .await;
    list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["arguments"]["name"] == name)
        .map(|t| t["taskId"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_job_started_again_with_its_idempotency_key_is_the_same_job() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Server::start_in(tmp.path(), &[]).await;
    let t = s.admin.clone();
    let body = json!({"external": {"name": "nightly export", "heartbeatMs": 600000}});

    let (status, location, first) = start(&s, &t, key("export-2026-01-01"), &body).await;
    assert_eq!(status, 202, "{first}");
    let id = first["taskId"].as_str().unwrap().to_string();
    assert_eq!(location.as_deref(), Some(&*format!("/v1/jobs/{id}")));

    // The same key and body: the original task, 200, and no second task.
    let (status, location, again) = start(&s, &t, key("export-2026-01-01"), &body).await;
    assert_eq!(status, 200, "a repeated start is not a new job: {again}");
    assert_eq!(again["taskId"], id.as_str());
    assert_eq!(location.as_deref(), Some(&*format!("/v1/jobs/{id}")));
    // The same JSON with its members in another order is the same body; the key may be given
    // as the draft's structured-field string (quoted).
    let reordered = json!({"external": {"heartbeatMs": 600000, "name": "nightly export"}});
    let (status, _, again) = start(&s, &t, key("\"export-2026-01-01\""), &reordered).await;
    assert_eq!((status, &again["taskId"]), (200, &json!(id)), "{again}");
    assert_eq!(
        jobs_named(&s, "nightly export").await,
        std::slice::from_ref(&id)
    );

    // The same key with another body: 422, and still one task.
    let other = json!({"external": {"name": "another export", "heartbeatMs": 600000}});
    let (status, _, problem) = start(&s, &t, key("export-2026-01-01"), &other).await;
    assert_eq!(status, 422, "{problem}");
    assert!(jobs_named(&s, "another export").await.is_empty());

    // Keys belong to their principal: another one gets its own job.
    let agent = s.token("export-bot");
    let (status, _, theirs) = start(&s, &agent, key("export-2026-01-01"), &body).await;
    assert_eq!(status, 202, "{theirs}");
    assert_ne!(theirs["taskId"], id.as_str());

    // Malformed keys: 400 problem documents, and nothing is created.
    let long = "k".repeat(256);
    let malformed = [
        HeaderValue::from_static(""),
        HeaderValue::from_str(&long).unwrap(),
        HeaderValue::from_static("has space"),
        HeaderValue::from_static("\"\""),
        HeaderValue::from_bytes(b"caf\xe9").unwrap(),
    ];
    for bad in malformed {
        let (status, _, problem) = start(&s, &t, Some(bad.clone()), &body).await;
        assert_eq!(status, 400, "{bad:?}: {problem}");
    }
    let (status, _, _) = start(&s, &t, key(&"k".repeat(255)), &other).await;
    assert_eq!(status, 202, "255 characters are allowed");

    // Racing starts with one key: one task, every answer names it.
    let race = json!({"external": {"name": "raced", "heartbeatMs": 600000}});
    let answers =
        futures::future::join_all((0..12).map(|_| start(&s, &t, key("race-1"), &race))).await;
    let created = answers.iter().filter(|(st, _, _)| *st == 202).count();
    let replayed = answers.iter().filter(|(st, _, _)| *st == 200).count();
    assert_eq!((created, replayed), (1, 11), "{answers:?}");
    let raced = jobs_named(&s, "raced").await;
    assert_eq!(raced.len(), 1, "{raced:?}");
    assert!(
        answers
            .iter()
            .all(|(_, _, b)| b["taskId"] == raced[0].as_str())
    );

    // The OpenAPI document says all this.
    let (_, doc) = s.v1_get(Some(&t), "/v1/openapi.json").await;
    let post = &doc["paths"]["/v1/jobs"]["post"];
    assert_eq!(post["parameters"][0]["name"], "Idempotency-Key", "{post}");
    assert_eq!(post["parameters"][0]["in"], "header");
    for status in ["200", "202", "400", "422"] {
        assert!(post["responses"][status].is_object(), "{status}: {post}");
    }

    // Keys are stored with the tasks: they hold across a restart.
    s.kill().await;
    let s = Server::start_in(tmp.path(), &[]).await;
    let (status, _, again) = start(&s, &t, key("export-2026-01-01"), &body).await;
    assert_eq!((status, &again["taskId"]), (200, &json!(id)), "{again}");
    let (status, _, _) = start(&s, &t, key("export-2026-01-01"), &other).await;
    assert_eq!(status, 422);
    assert_eq!(jobs_named(&s, "nightly export").await, [id]);
}

/// What the proxy does to the first connection: the start of `taskdeck run`'s job.
#[derive(Clone, Copy)]
enum FirstStart {
    /// Passed on, but Taskdeck's answer is dropped: the job exists, the client sees the
    /// connection close before any answer.
    AnswerLost,
    /// Answered `503 Service Unavailable` by the proxy itself: nothing was started.
    Unavailable,
}

/// The `Idempotency-Key` of the `POST /v1/jobs` that `request` (the start of an HTTP/1.1
/// request) is, if it is one ("" when it has none).
fn job_start_key(request: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(request).to_ascii_lowercase();
    text.starts_with("post /v1/jobs ").then(|| {
        text.lines()
            .find_map(|l| l.strip_prefix("idempotency-key:"))
            .map(|k| k.trim().to_string())
            .unwrap_or_default()
    })
}

/// A proxy in front of `upstream` that passes every connection through, except the first one
/// (see [`FirstStart`]). Returns its port and the `Idempotency-Key` of every `POST /v1/jobs` it
/// saw.
async fn flaky_proxy(upstream: u16, first: FirstStart) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let keys = Arc::new(Mutex::new(Vec::new()));
    let seen = keys.clone();
    tokio::spawn(async move {
        let mut fresh = true;
        while let Ok((mut client, _)) = listener.accept().await {
            let seen = seen.clone();
            let is_first = std::mem::take(&mut fresh);
            if is_first && matches!(first, FirstStart::Unavailable) {
                tokio::spawn(async move {
                    // The whole request (head and Content-Length bytes of body), then the 503.
                    let mut request = Vec::new();
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = client.read(&mut buf).await.unwrap();
                        request.extend_from_slice(&buf[..n]);
                        let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
                        if let Some(head) = text.find("\r\n\r\n") {
                            let length = text[..head]
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                            if n == 0 || request.len() >= head + 4 + length {
                                break;
                            }
                        }
                    }
                    seen.lock().unwrap().extend(job_start_key(&request));
                    let answer = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                    client.write_all(answer.as_bytes()).await.unwrap();
                });
                continue;
            }
            let drop_answer = is_first;
            let server = TcpStream::connect(("127.0.0.1", upstream)).await.unwrap();
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = tokio::spawn(async move {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        seen.lock().unwrap().extend(job_start_key(&buf[..n]));
                        if sw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match sr.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if drop_answer {
                        // Taskdeck answered (the job exists): the client never hears of it.
                        break;
                    }
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
                up.abort();
            });
        }
    });
    (port, keys)
}

#[tokio::test]
async fn taskdeck_run_retries_a_failed_start_with_the_same_key() {
    let s = Server::start(&[]).await;
    let t = s.admin.clone();
    for (first, name) in [
        (FirstStart::AnswerLost, "answer lost"),
        (FirstStart::Unavailable, "unavailable"),
    ] {
        let (port, keys) = flaky_proxy(s.port, first).await;
        let out = tokio::time::timeout(
            Duration::from_secs(30),
            tokio::process::Command::new(BIN)
                .args(["run", "--port", &port.to_string(), "--token", &t])
                .args(["--name", name, "--", "sh", "-c", "echo done"])
                .output(),
        )
        .await
        .expect("taskdeck run ended")
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        assert!(
            stderr.contains("trying again") && stderr.contains("tracking as job"),
            "{name}: {stderr}"
        );
        let keys = keys.lock().unwrap().clone();
        assert_eq!(keys.len(), 2, "{name}: one start, one retry: {keys:?}");
        assert!(
            !keys[0].is_empty() && keys[0] == keys[1],
            "{name}: {keys:?}"
        );
        let jobs = jobs_named(&s, name).await;
        assert_eq!(
            jobs.len(),
            1,
            "{name}: one job, however many starts: {jobs:?}"
        );
        let done = s
            .wait_for(&t, &jobs[0], "completed", |v| v["status"] == "completed")
            .await;
        assert_eq!(done["result"]["structuredContent"]["exitCode"], 0, "{done}");
    }
}

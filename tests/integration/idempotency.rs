//! `POST /v1/jobs` with an `Idempotency-Key` (IETF httpapi idempotency-key draft): a repeated
//! start returns the original task, racing repeats create one task, keys are per principal and
//! survive a restart.

use crate::harness::{Server, read_answer};
use reqwest::header::HeaderValue;
use serde_json::{Value, json};

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

//! Size limits: an oversized `/v1` request body is a 413 problem document on every route.

use serde_json::{Value, json};

use crate::harness::{Server, read_answer};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// POST `body` (raw bytes, as JSON) to `path`; returns the status, content type and JSON body.
async fn post_raw(s: &Server, token: &str, path: &str, body: Vec<u8>) -> (u16, String, Value) {
    let resp = s
        .http
        .post(s.url(path))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    read_answer(resp).await
}

#[tokio::test]
async fn oversized_v1_bodies_are_413_problem_documents() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();
    let (_, job) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"external": {"name": "big", "heartbeatMs": 600000}}),
        )
        .await;
    let id = job["taskId"].as_str().unwrap();
    let huge = json!({"tool": "echo", "arguments": {"blob": "x".repeat(5 * MIB)}}).to_string();
    for path in [
        "/v1/jobs".to_string(),
        format!("/v1/jobs/{id}/report"),
        format!("/v1/tasks/{id}/input"),
        format!("/v1/tasks/{id}/cancel"),
        "/v1/agents".to_string(),
    ] {
        let (status, content_type, problem) =
            post_raw(&s, &t, &path, huge.clone().into_bytes()).await;
        assert_eq!(status, 413, "{path}: {problem}");
        assert_eq!(content_type, "application/problem+json", "{path}");
        assert_eq!(problem["status"], 413);
        assert!(
            problem["detail"].as_str().unwrap().contains("MiB"),
            "{path}: says the limit: {problem}"
        );
    }
    // Without a Content-Length (chunked), the limit holds as well.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..6).map(|_| Ok(vec![b' '; MIB])).collect();
    let resp = s
        .http
        .post(s.url("/v1/jobs"))
        .bearer_auth(&t)
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    // The job is untouched and a body under the limit still works.
    let (status, _) = s
        .v1_post(
            Some(&t),
            &format!("/v1/jobs/{id}/report"),
            json!({"statusMessage": "fine"}),
        )
        .await;
    assert_eq!(status, 200);
}

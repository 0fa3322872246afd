//! Size limits: an oversized `/v1` request body is a 413 problem document on every route, and
//! what agents and runners store is capped (a status message is cut with a visible marker; an
//! approval message or arguments over their cap are refused), so a task list page stays small.
//! Time limits: a client that sends a request's head too slowly is disconnected.

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

#[tokio::test]
async fn status_messages_are_cut_and_large_messages_and_arguments_refused() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let t = s.admin.clone();

    // A runner reports a 2 MiB status message (and progress message): what is stored is cut to
    // 4 KiB with a marker saying how much went.
    let mut jobs = Vec::new();
    for i in 0..10 {
        let (status, job) = s
            .v1_post(
                Some(&t),
                "/v1/jobs",
                json!({"external": {"name": format!("chatty {i}"), "heartbeatMs": 600000}}),
            )
            .await;
        assert_eq!(status, 202);
        jobs.push(job["taskId"].as_str().unwrap().to_string());
    }
    let line = "progress line ".repeat(2 * MIB / 14 + 1);
    for id in &jobs {
        let (status, reply) = s
            .v1_post(
                Some(&t),
                &format!("/v1/jobs/{id}/report"),
                json!({"statusMessage": line}),
            )
            .await;
        assert_eq!(status, 200, "{reply}");
        let message = reply["task"]["statusMessage"].as_str().unwrap();
        assert!(message.len() <= 4 * KIB, "{} bytes stored", message.len());
        assert!(message.starts_with("progress line progress line"));
        assert!(
            message.ends_with("… [truncated 2.0 MiB]"),
            "{}",
            &message[message.len() - 60..]
        );
    }
    let (_, v) = s
        .v1_post(
            Some(&t),
            &format!("/v1/jobs/{}/report", jobs[0]),
            json!({"progress": {"current": 1, "total": 2, "message": line}}),
        )
        .await;
    assert!(v["task"]["statusMessage"].as_str().unwrap().len() <= 4 * KIB);
    assert!(v["task"]["progress"]["message"].as_str().unwrap().len() <= 4 * KIB);
    // The timeline holds the cut message too.
    let (_, detail) = s.v1_get(Some(&t), &format!("/v1/tasks/{}", jobs[1])).await;
    let detail_bytes = detail.to_string().len();
    assert!(
        detail_bytes < 32 * KIB,
        "task detail is {detail_bytes} bytes"
    );
    // A page of the list stays small.
    let page = s
        .http
        .get(s.url("/v1/tasks?limit=50"))
        .bearer_auth(&t)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(
        page.len() < 100 * KIB,
        "a page of 10 tasks is {} bytes",
        page.len()
    );

    // request_approval: a message over 64 KiB is refused on every path; 64 KiB is asked.
    let too_long = "a".repeat(64 * KIB + 1);
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": too_long}}),
            true,
        )
        .await;
    r.assert_invalid_params("64 KiB");
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "request_approval", "arguments": {"message": too_long}}),
            false,
        )
        .await;
    assert_eq!(r.error_code(), -32602, "{:?}", r.body);
    let (status, problem) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"tool": "request_approval", "arguments": {"message": too_long}}),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    let asked = s
        .call(
            &t,
            "request_approval",
            json!({"message": "a".repeat(64 * KIB)}),
        )
        .await;
    assert_eq!(asked["resultType"], "task", "{asked}");
    // The same cap holds for the questions an external job asks.
    let question = json!({"method": "elicitation/create", "params": {"message": too_long}});
    let (status, problem) = s
        .v1_post(
            Some(&t),
            &format!("/v1/jobs/{}/report", jobs[2]),
            json!({"inputRequests": {"q": question}}),
        )
        .await;
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("64 KiB"),
        "{problem}"
    );

    // Arguments over 256 KiB are refused on every path; just under is taken.
    let big = json!({"blob": "b".repeat(256 * KIB)});
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "echo", "arguments": big}),
            true,
        )
        .await;
    r.assert_invalid_params("256 KiB");
    let r = s
        .rpc(
            Some(&t),
            "tools/call",
            json!({"name": "echo", "arguments": big}),
            false,
        )
        .await;
    assert_eq!(r.error_code(), -32602, "{:?}", r.body);
    let (status, problem) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"tool": "echo", "arguments": big}),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    let (status, problem) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"external": {"name": "wordy", "notes": "n".repeat(256 * KIB)}}),
        )
        .await;
    assert_eq!(status, 422, "{problem}");
    let fits = json!({"blob": "b".repeat(255 * KIB)});
    let (status, _) = s
        .v1_post(
            Some(&t),
            "/v1/jobs",
            json!({"tool": "echo", "arguments": fits}),
        )
        .await;
    assert_eq!(status, 202);
}

/// A client that opens connections and sends their headers a byte at a time (or never) holds
/// none of them past the 30 s header deadline, while other clients are served meanwhile.
#[tokio::test]
async fn a_request_head_sent_too_slowly_is_cut_off() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let s = Server::start(&[]).await;
    let started = Instant::now();
    let connect = || tokio::net::TcpStream::connect(("127.0.0.1", s.port));
    // One trickles its head a byte every 2 s; one sends nothing at all.
    let mut trickling = connect().await.unwrap();
    let mut silent = connect().await.unwrap();
    let head = format!(
        "GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nX-Slow: ",
        s.port, s.admin
    );
    trickling.write_all(head.as_bytes()).await.unwrap();
    let mut closed_at = None;
    let mut buf = [0u8; 256];
    while started.elapsed() < Duration::from_secs(45) {
        let _ = trickling.write_all(b"x").await;
        match tokio::time::timeout(Duration::from_secs(2), trickling.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed_at = Some(started.elapsed());
                break;
            }
            Ok(Ok(n)) => panic!(
                "answered a head never finished: {}",
                String::from_utf8_lossy(&buf[..n])
            ),
            Err(_) => {}
        }
        // Meanwhile the server answers everyone else.
        let (status, me) = s.v1_get(Some(&s.admin), "/v1/me").await;
        assert_eq!(status, 200, "{me}");
    }
    let closed_at = closed_at.expect("the trickling connection is still open after 45 s");
    assert!(
        closed_at >= Duration::from_secs(29),
        "cut off before its 30 s: {closed_at:?}"
    );
    // The silent one was cut off by then too.
    let read = tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the silent connection is still open: {read:?}"
    );
    // A request sent whole on a new connection is answered.
    let mut prompt = connect().await.unwrap();
    prompt
        .write_all(format!("{head}now\r\nConnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = String::new();
    prompt.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

//! `wait_for_http_job` end to end on a real engine against local servers: destinations checked
//! and asked about (redirect hops too), requests that hang, `Retry-After`, cancels, and the
//! argument checks made before a task exists.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{
    super::http_reach::REQUEST_TIMEOUT,
    WaitForHttpJob,
    test_service::{
        LOOKUPS, allow, allowed_service, answer, asked, engine, local_server, question, result,
        wait_until,
    },
};
use taskdeck_engine::{Principal, TaskStatus};

/// An engine in `dir` ([`engine`]: `public.test` is on 127.0.0.1), a [`local_server`], and
/// agent's job to `GET http://public.test:PORT/ops` started: (engine, PORT, what the server
/// saw, the job's taskId, its URL).
async fn job_to_public_test(
    dir: &std::path::Path,
) -> (
    taskdeck_engine::Engine,
    u16,
    super::test_service::Seen,
    String,
    String,
) {
    let engine = engine(dir, REQUEST_TIMEOUT).await;
    let (port, seen) = local_server().await;
    let url = format!("http://public.test:{port}/ops");
    let task_id = agent_job(&engine, &url).await;
    (engine, port, seen, task_id, url)
}

/// Starts principal `agent`'s job to `GET url` on `engine`; its taskId.
async fn agent_job(engine: &taskdeck_engine::Engine, url: &str) -> String {
    let task = engine
        .create_task(
            &Principal::named("agent"),
            "wait_for_http_job",
            json!({"url": url}),
        )
        .await
        .unwrap();
    task.task_id.clone()
}

/// A public-looking name is judged by the address it resolves to, not by how it looks; and it
/// is not looked up before the call is allowed (a DNS query is traffic, and a name can carry
/// data): the call is asked about first, the private address it resolves to after.
#[tokio::test]
async fn a_name_that_resolves_to_a_private_address_is_asked_about() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, port, seen, task_id, url) = job_to_public_test(dir.path()).await;
    let looked_up = || {
        LOOKUPS
            .lock()
            .unwrap()
            .iter()
            .any(|(host, p)| host == "public.test" && *p == port)
    };
    let (key, first) = asked(&engine, &task_id).await;
    assert_eq!(key, "approve");
    assert!(
        first.starts_with(&format!("Allow agent to send GET {url}?")),
        "{first}"
    );
    assert!(
        !looked_up(),
        "the name was looked up before the call was allowed"
    );
    answer(&engine, &task_id, "accept").await;
    let (key, second) = asked(&engine, &task_id).await;
    assert_eq!(key, "allow-private-network");
    assert!(looked_up());
    assert!(
        second.starts_with(&format!(
            "Allow this task to reach public.test:{port} (127.0.0.1, private network)?"
        )),
        "{second}"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing sent before the answer"
    );
    answer(&engine, &task_id, "accept").await;
    let done = result(&engine, &task_id).await;
    assert_eq!(done["isError"], false, "{done}");
    let host = format!("public.test:{port}");
    assert_eq!(
        *seen.lock().unwrap(),
        [("GET".into(), "/ops".into(), host, None)]
    );
}

/// "Always allow" given on the call's question (before the host name was looked up, or while
/// it was public) does not cover a private address the name resolves to, then or in a later
/// job (DNS rebinding): the rule it writes is `publicOnly`, and the private-network question
/// is still asked, of this job and of the next, whose call the rule allows.
#[tokio::test]
async fn always_allow_before_the_lookup_does_not_cover_a_private_address() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, port, seen, task_id, url) = job_to_public_test(dir.path()).await;
    let (key, _) = asked(&engine, &task_id).await;
    assert_eq!(key, "approve");
    let mut responses = serde_json::Map::new();
    responses.insert(
        key,
        json!({"action": "accept", "content": {"alwaysAllow": true}}),
    );
    engine
        .answer(&Principal::admin(), &task_id, responses)
        .await
        .unwrap();
    let (key, second) = asked(&engine, &task_id).await;
    assert_eq!(key, "allow-private-network", "{second}");
    let policy: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("policy.json")).unwrap())
            .unwrap();
    let rule = &policy["rules"][0];
    assert_eq!(
        (rule["arguments"]["url"].as_str(), &rule["publicOnly"]),
        (Some(&*format!("http://public.test:{port}/*")), &json!(true)),
        "{policy}"
    );
    answer(&engine, &task_id, "decline").await;
    let done = result(&engine, &task_id).await;
    assert_eq!(done["isError"], true, "{done}");

    let next = agent_job(&engine, &url).await;
    let (key, asked_next) = asked(&engine, &next).await;
    assert_eq!(key, "allow-private-network", "{asked_next}");
    answer(&engine, &next, "decline").await;
    assert_eq!(result(&engine, &next).await["isError"], true);
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the private address"
    );
}

/// Every redirect hop is checked like the first request: an allowed destination that
/// redirects to another private one does not carry the allowance over.
#[tokio::test]
async fn a_redirect_to_another_private_destination_is_asked_about_again() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
    let (port, seen) = local_server().await;
    // The first destination is allowed by the policy; the redirect's is not.
    allow(dir.path(), &format!("127.0.0.1:{port}"));
    let agent = Principal::named("agent");
    let start = |path: &str| {
        let args = json!({"url": format!("http://127.0.0.1:{port}{path}"), "body": {"n": 1},
            "headers": {"Authorization": "Bearer for-127"}});
        engine.create_task(&agent, "wait_for_http_job", args)
    };
    let hits = |path: &str| {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(_, p, _, _)| p == path)
            .count()
    };

    // Declined: the redirect is not followed.
    let task = start("/away").await.unwrap();
    let asked = question(&engine, &task.task_id).await;
    assert!(
        asked.starts_with(&format!(
            "Allow this task to reach other.test:{port} (127.0.0.1, private network)?"
        )) && asked.contains(&format!("where http://127.0.0.1:{port}/away redirected")),
        "{asked}"
    );
    assert_eq!((hits("/away"), hits("/ops")), (1, 0));
    answer(&engine, &task.task_id, "decline").await;
    let refused = result(&engine, &task.task_id).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        refused["structuredContent"]["refused"],
        format!("other.test:{port}")
    );
    assert_eq!(hits("/ops"), 0, "a declined hop is never sent");

    // Accepted: followed as a 307 is (same method and body), without the credentials given
    // for the first origin.
    let task = start("/away").await.unwrap();
    question(&engine, &task.task_id).await;
    answer(&engine, &task.task_id, "accept").await;
    assert_eq!(result(&engine, &task.task_id).await["isError"], false);
    let last = seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        last,
        (
            "POST".into(),
            "/ops".into(),
            format!("other.test:{port}"),
            None
        )
    );

    // A redirect within the allowed origin asks nothing and keeps the credentials; a 302
    // turns the POST into a GET.
    let task = start("/here").await.unwrap();
    assert_eq!(result(&engine, &task.task_id).await["isError"], false);
    let last = seen.lock().unwrap().last().cloned().unwrap();
    let auth = Some("Bearer for-127".to_string());
    assert_eq!(
        last,
        (
            "GET".into(),
            "/ops".into(),
            format!("127.0.0.1:{port}"),
            auth
        )
    );
}

/// One request has a time limit of its own ([`REQUEST_TIMEOUT`], 300 ms here): a server that
/// never answers, or never finishes its body, is a transient failure retried at once, not a
/// task stuck for minutes.
#[tokio::test]
async fn a_request_that_hangs_times_out_and_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), Duration::from_millis(300)).await;
    let app = axum::Router::new()
        .route(
            "/silent",
            axum::routing::get(std::future::pending::<&'static str>),
        )
        .route(
            "/stalled",
            axum::routing::get(|| async {
                let forever = futures::stream::pending::<Result<Vec<u8>, std::io::Error>>();
                axum::response::Response::builder()
                    .header("content-length", "100")
                    .body(axum::body::Body::from_stream(forever))
                    .unwrap()
            }),
        );
    let base = allowed_service(dir.path(), app).await;
    let agent = Principal::named("agent");
    for (path, why) in [
        ("/silent", "timed out after 0.3 s; retry 1 of 5"),
        (
            "/stalled",
            "the response body broke off: timed out after 0.3 s; retry 1 of 5",
        ),
    ] {
        let args = json!({"monitor": format!("{base}{path}")});
        let began = Instant::now();
        let task = engine
            .create_task(&agent, "wait_for_http_job", args)
            .await
            .unwrap();
        let t = wait_until(&engine, &task.task_id, |t| {
            t.status_message
                .as_deref()
                .is_some_and(|m| m.contains("retry 1"))
        })
        .await;
        assert!(t.status_message.as_deref().unwrap().ends_with(why), "{t:?}");
        assert!(began.elapsed() < Duration::from_secs(3));
        engine
            .cancel(&Principal::admin(), &task.task_id)
            .await
            .unwrap();
        wait_until(&engine, &task.task_id, |t| t.status.is_terminal()).await;
    }
}

/// The wait a server asks for between polls is not a request's time: a `Retry-After` longer
/// than the time limit still polls again and finishes.
#[tokio::test]
async fn a_retry_after_longer_than_the_time_limit_still_polls() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), Duration::from_millis(300)).await;
    let polls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = polls.clone();
    let app = axum::Router::new().fallback(move || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            match n {
                0 => ([("retry-after", "1")], r#"{"status":"running"}"#),
                _ => ([("retry-after", "1")], r#"{"status":"done"}"#),
            }
        }
    });
    let base = allowed_service(dir.path(), app).await;
    let args = json!({"monitor": format!("{base}/op")});
    let task = engine
        .create_task(&Principal::named("agent"), "wait_for_http_job", args)
        .await
        .unwrap();
    let done = result(&engine, &task.task_id).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(polls.load(std::sync::atomic::Ordering::SeqCst), 2);
}

/// How the `DELETE` sent on a cancel went is recorded when it fails too: here the monitor's
/// server answered one poll and then closed its port.
#[tokio::test]
async fn a_cancel_records_a_delete_that_failed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let authority = listener.local_addr().unwrap().to_string();
    allow(dir.path(), &authority);
    // One poll: "running", next poll in a minute; then the listener goes with the task.
    let server = tokio::spawn(async move {
        let (mut conn, _) = listener.accept().await.unwrap();
        let _ = conn.read(&mut [0u8; 4096]).await.unwrap();
        let body = r#"{"status":"running"}"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\nRetry-After: 60\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(answer.as_bytes()).await.unwrap();
    });
    let monitor = format!("http://{authority}/op");
    let args = json!({"monitor": monitor});
    let task = engine
        .create_task(&Principal::named("agent"), "wait_for_http_job", args)
        .await
        .unwrap();
    wait_until(&engine, &task.task_id, |t| {
        t.status_message
            .as_deref()
            .is_some_and(|m| m.contains("running"))
    })
    .await;
    server.await.unwrap();
    engine
        .cancel(&Principal::admin(), &task.task_id)
        .await
        .unwrap();
    let t = wait_until(&engine, &task.task_id, |t| t.status.is_terminal()).await;
    assert_eq!(t.status, TaskStatus::Cancelled);
    let (events, ..) = engine
        .history(&Principal::admin(), &task.task_id, None, 100)
        .unwrap();
    let recorded: Vec<&str> = events
        .iter()
        .filter_map(|e| e.data["statusMessage"].as_str())
        .collect();
    let failed = format!("Cancelled; DELETE {monitor} failed: cannot connect: Connection refused");
    assert!(
        recorded.iter().any(|m| m.starts_with(&failed)),
        "{recorded:?}"
    );
}

/// Headers the wire cannot carry, or that only the client may set, are refused when the
/// task is asked for (-32602 / 422), not retried as transient failures later.
#[test]
fn invalid_and_reserved_headers_are_refused_at_call_time() {
    use taskdeck_engine::TaskTool as _;
    let dir = tempfile::tempdir().unwrap();
    let tool = WaitForHttpJob::new(Arc::new(crate::policy::Policy::new(dir.path())));
    let with = |headers: Value| json!({"url": "http://example.com/ops", "headers": headers});
    for (headers, why) in [
        (json!({"Bad Header": "1"}), "is not a valid header name"),
        (
            json!({"X-Ok": "a\r\nX-Injected: 1"}),
            "not a valid header value",
        ),
        (json!({"X-Ok": "a\nb"}), "not a valid header value"),
    ] {
        let refused = tool.check_arguments(&with(headers.clone())).unwrap_err();
        assert!(refused.contains(why), "{headers}: {refused}");
        assert!(
            !refused.contains("X-Injected"),
            "the value is not echoed: {refused}"
        );
    }
    for name in [
        "Host",
        "content-length",
        "Transfer-Encoding",
        "Connection",
        "Upgrade",
        "TE",
        "Trailer",
    ] {
        let refused = tool.check_arguments(&with(json!({name: "x"}))).unwrap_err();
        assert!(
            refused.contains("is set by Taskdeck's HTTP client"),
            "{refused}"
        );
    }
    let fine = json!({"Authorization": "Bearer x", "Accept": "application/json", "X-Tab": "a\tb"});
    assert_eq!(tool.check_arguments(&with(fine)), Ok(()));
}

/// A POST that was sent but got no answer in time may have started the operation: it is
/// not sent again, and the task says why.
#[tokio::test]
async fn a_post_without_an_answer_in_time_is_not_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path(), Duration::from_millis(300)).await;
    let posts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = posts.clone();
    let app = axum::Router::new().fallback(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::future::pending::<&'static str>()
    });
    let base = allowed_service(dir.path(), app).await;
    let args = json!({"url": format!("{base}/ops"), "body": {"n": 1}});
    let task = engine
        .create_task(&Principal::named("agent"), "wait_for_http_job", args)
        .await
        .unwrap();
    let done = result(&engine, &task.task_id).await;
    assert_eq!(done["isError"], true, "{done}");
    let text = done["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("timed out after 0.3 s (not retried: the request may have had effects)"),
        "{text}"
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(posts.load(std::sync::atomic::Ordering::SeqCst), 1);
}

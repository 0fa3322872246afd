//! `wait_for_http_job` against what an agent may point it at: destinations that are this
//! machine in disguise, services that misbehave (bodies too large or cut short), monitors on
//! another origin or behind a non-HTTP `Location`, and cancels that must reach an
//! authenticated API.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use axum::{
    Router,
    http::{HeaderMap, StatusCode},
    routing::get,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::harness::{Server, serve_local};

/// Starts `wait_for_http_job` with `args` as `token`; its taskId.
async fn start(s: &Server, token: &str, args: Value) -> String {
    s.call(token, "wait_for_http_job", args).await["taskId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The task's result once it completed (as the admin sees it).
async fn completed(s: &Server, id: &str) -> Value {
    let v = s.wait_status(&s.admin, id, "completed").await;
    v["result"].clone()
}

/// A service bound to all interfaces, for the tests of this machine's addresses: answers
/// `{"status":"done"}` and counts requests. Returns its port and the count.
async fn service_on_all_interfaces() -> (u16, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { r#"{"status":"done"}"# }
    });
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, hits)
}

/// Starts a task for `url` as `agent` and waits for its approval question (key `approve`,
/// which names a private destination); the taskId and the question's text.
async fn question(s: &Server, agent: &str, url: String) -> (String, String) {
    let id = start(s, agent, json!({"url": url})).await;
    let v = s.wait_status(&s.admin, &id, "input_required").await;
    let text = v["inputRequests"]["approve"]["params"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    // A call that holds no credential is not said to hide one.
    assert!(!text.contains("hidden here"), "{text}");
    (id, text)
}

/// This machine's own addresses are this machine, whatever range they are in: a service bound
/// to all interfaces, reached through the address of a network interface (say, a public one
/// on eth0), is asked about like loopback, and nothing is sent before the human's answer.
#[tokio::test]
async fn this_machines_own_interface_addresses_are_asked_about() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let (port, hits) = service_on_all_interfaces().await;
    // The interface addresses, IPv4 (IPv6 ones are link-local or unique-local here).
    let own: Vec<std::net::Ipv4Addr> = nix::ifaddrs::getifaddrs()
        .unwrap()
        .filter_map(|i| Some(i.address?.as_sockaddr_in()?.ip()))
        .filter(|ip| !ip.is_loopback())
        .collect();
    if own.is_empty() {
        eprintln!("no network interface but loopback: nothing to check for interface addresses");
    }
    for ip in own {
        let (id, text) = question(&s, &agent, format!("http://{ip}:{port}/")).await;
        assert!(
            text.starts_with(&format!("Allow this task to reach {ip}:{port} ({ip}, ")),
            "{text}"
        );
        s.answer(&id, "approve", json!({"action": "decline"})).await;
        assert_eq!(completed(&s, &id).await["isError"], true);
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent");
}

/// A `.localhost` name that does not resolve is loopback all the same (RFC 6761): the human
/// is asked about it, and once allowed the request goes to 127.0.0.1; it is not retried as a
/// name that cannot be resolved.
#[tokio::test]
async fn a_localhost_name_that_does_not_resolve_is_asked_about_as_loopback() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let (port, hits) = service_on_all_interfaces().await;
    let url = format!("http://no-such-name.localhost:{port}/");
    let (id, text) = question(&s, &agent, url).await;
    assert!(
        text.starts_with(&format!(
            "Allow this task to reach no-such-name.localhost:{port} (127.0.0.1, private network)?"
        )),
        "{text}"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "nothing sent before the answer"
    );
    // The task's own status says what it waits for (the list shows it), not the request.
    let authority = format!("no-such-name.localhost:{port}");
    let request = format!("GET http://{authority}/");
    let (_, task) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    assert_eq!(
        task["task"]["statusMessage"],
        format!("Waiting for approval to reach {authority}: {request}"),
        "{task}"
    );
    s.answer(&id, "approve", json!({"action": "accept"})).await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "sent to loopback once allowed"
    );
    let said = status_messages(&s, &id).await;
    assert!(said.contains(&format!("Sending {request}")), "{said:?}");
}

/// Lets principal `agent` reach these loopback `authorities` (`127.0.0.1:PORT`) without
/// asking, as "always allow" would have: a policy rule naming each host and port.
fn allow(s: &Server, agent: &str, authorities: &[&str]) {
    let rules: Vec<Value> = authorities
        .iter()
        .map(|a| {
            json!({"principal": agent, "server": "taskdeck", "tool": "wait_for_http_job",
                        "arguments": {"url": format!("http://{a}/*")}, "decision": "allow"})
        })
        .collect();
    s.write_policy(json!(rules));
}

/// The value of header `name` in `headers`, when it is there and is text.
fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(String::from)
}

/// `host:port` of a base URL `http://host:port`.
fn authority(base: &str) -> &str {
    base.trim_start_matches("http://")
}

/// The texts of the task's `statusMessage` timeline events, oldest first.
async fn status_messages(s: &Server, id: &str) -> Vec<String> {
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "statusMessage")
        .filter_map(|e| e["data"]["statusMessage"].as_str().map(String::from))
        .collect()
}

/// A raw HTTP/1.1 server on 127.0.0.1 that reads one request per connection and answers the
/// n-th with `answers[n]` (the last one again once they run out), written as it is, then
/// closes the connection. Returns its base URL and the request lines it read.
async fn raw_server(answers: Vec<Vec<u8>>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        for n in 0.. {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            // The head, then as much body as it announces (unread bytes would reset the connection).
            let head_end = loop {
                let read = conn.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..read]);
                if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                    break i + 4;
                }
                assert!(read > 0, "the client hung up mid-request");
            };
            let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            while request.len() < head_end + length {
                let read = conn.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..read]);
            }
            log.lock()
                .unwrap()
                .push(head.lines().next().unwrap_or_default().to_uppercase());
            let answer = &answers[n.min(answers.len() - 1)];
            let _ = conn.write_all(answer).await;
            let _ = conn.shutdown().await;
        }
    });
    (base, seen)
}

/// A whole `200 OK` answer with a JSON body.
fn whole(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A body that stops before its end (the connection closes) is a transport failure, retried
/// like a refused connection, never a success with what little arrived: a `Content-Length`
/// body cut after 35 of 1000 bytes, a chunked body cut inside a chunk. A POST whose answer was
/// cut reached the server, so it is not sent again.
#[tokio::test]
async fn a_body_cut_short_is_retried_and_never_taken_for_the_answer() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let cut_length = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{}",
        r#"{"status":"done","rows":[1,2,3,4,5,"#
    );
    assert_eq!(cut_length.split("\r\n\r\n").nth(1).unwrap().len(), 35);
    let cut_chunk = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\
                     20\r\n{\"status\":\"done\",";
    let done = whole(r#"{"status":"done","rows":[1,2,3]}"#);
    let (by_length, length_log) = raw_server(vec![cut_length.clone().into(), done.clone()]).await;
    let (by_chunks, chunk_log) = raw_server(vec![cut_chunk.into(), done]).await;
    let (post_cut, post_log) = raw_server(vec![cut_length.into()]).await;
    allow(
        &s,
        "agent",
        &[
            authority(&by_length),
            authority(&by_chunks),
            authority(&post_cut),
        ],
    );

    for (base, log) in [(&by_length, &length_log), (&by_chunks, &chunk_log)] {
        let id = start(&s, &agent, json!({"monitor": format!("{base}/job")})).await;
        let result = completed(&s, &id).await;
        assert_eq!(result["isError"], false, "{result}");
        assert_eq!(
            result["structuredContent"]["body"],
            json!({"status": "done", "rows": [1, 2, 3]}),
            "the whole answer, from the second try"
        );
        assert_eq!(log.lock().unwrap().len(), 2, "the cut answer was retried");
        let messages = status_messages(&s, &id).await;
        assert!(
            messages
                .iter()
                .any(|m| m.contains("broke off") && m.contains("retry 1 of 5")),
            "{messages:?}"
        );
    }

    let id = start(
        &s,
        &agent,
        json!({"url": format!("{post_cut}/ops"), "body": {"n": 1}}),
    )
    .await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("broke off") && text.contains("not retried"),
        "{text}"
    );
    assert_eq!(*post_log.lock().unwrap(), ["POST /OPS HTTP/1.1"]);
}

/// Taskdeck reads at most 1 MiB of a response: a longer body fails the job with a clear error
/// as soon as more arrives (the rest is never read, so the service stops being drained), and a
/// `Content-Length` over 1 MiB fails it before any of the body is read. Nothing large is stored.
#[tokio::test]
async fn a_response_body_over_1_mib_fails_the_job_and_is_not_read_whole() {
    const MIB: usize = 1 << 20;
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    // `/endless`: a JSON array of 32 MiB, made as it is sent (chunked), counting what was made.
    let made = Arc::new(AtomicUsize::new(0));
    let counter = made.clone();
    let app = Router::new()
        .route(
            "/endless",
            get(move || {
                let counter = counter.clone();
                async move {
                    let chunks = (0..512).map(move |i| {
                        let mut chunk = vec![b'1'; 64 * 1024];
                        chunk[0] = if i == 0 { b'[' } else { b',' };
                        counter.fetch_add(chunk.len(), Ordering::SeqCst);
                        Ok::<_, std::io::Error>(chunk)
                    });
                    axum::body::Body::from_stream(futures::stream::iter(chunks))
                }
            }),
        )
        .route("/declared", get(|| async { vec![b' '; 2 * MIB] }));
    let base = serve_local(app).await;
    allow(&s, "agent", &[authority(&base)]);

    for path in ["/endless", "/declared"] {
        let id = start(&s, &agent, json!({"monitor": format!("{base}{path}")})).await;
        let result = completed(&s, &id).await;
        assert_eq!(result["isError"], true, "{path}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("the response body is over 1 MiB"), "{text}");
        let stored = result.to_string().len();
        assert!(stored < 16 * 1024, "{path}: a result of {stored} bytes");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let made = made.load(Ordering::SeqCst);
    assert!(
        made < 16 * MIB,
        "{made} bytes made: the rest of the body was read"
    );
}

/// The agent's credentials (`Authorization`, `Cookie`, `Proxy-Authorization`) go only to the
/// origin they were given for: a monitor named by a `202 Location` on another origin (scheme,
/// host, port) is polled without them, and a monitor that origin names back on the first one
/// does not get them either (it was not the first origin's word).
#[tokio::test]
async fn a_monitor_on_another_origin_gets_no_credentials() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    /// `(path, Authorization, Cookie, Proxy-Authorization)` of each request.
    type Seen = Arc<Mutex<Vec<(String, Option<String>, Option<String>, Option<String>)>>>;
    let seen: Seen = Arc::default();
    // Both services share one route table: `/hop/{n}` answers 202 with the Location in `next`.
    let next: Arc<Mutex<Vec<String>>> = Arc::default();
    let app = {
        let (seen, next) = (seen.clone(), next.clone());
        Router::new().fallback(move |req: axum::extract::Request| {
            let (seen, next) = (seen.clone(), next.clone());
            async move {
                let (path, h) = (req.uri().path().to_string(), req.headers());
                seen.lock().unwrap().push((
                    path.clone(),
                    header(h, "authorization"),
                    header(h, "cookie"),
                    header(h, "proxy-authorization"),
                ));
                let n: usize = path.trim_start_matches("/hop/").parse().unwrap_or(0);
                let location = next.lock().unwrap().get(n).cloned();
                let mut h = HeaderMap::new();
                match location {
                    Some(l) => {
                        h.insert("location", l.parse().unwrap());
                        (StatusCode::ACCEPTED, h, r#"{"status":"running"}"#)
                    }
                    None => (StatusCode::OK, h, r#"{"status":"done"}"#),
                }
            }
        })
    };
    let a = serve_local(app.clone()).await;
    let b = serve_local(app).await;
    allow(&s, "agent", &[authority(&a), authority(&b)]);
    // a/hop/0 → a/hop/1 (same origin) → b/hop/2 (another) → a/hop/3 (named by b) → done.
    *next.lock().unwrap() = vec![
        format!("{a}/hop/1"),
        format!("{b}/hop/2"),
        format!("{a}/hop/3"),
    ];
    let headers = json!({"Authorization": "Bearer only-for-a", "Cookie": "session=a",
        "Proxy-Authorization": "Basic cHJveHk=", "X-Trace": "1"});
    let id = start(
        &s,
        &agent,
        json!({"url": format!("{a}/hop/0"), "method": "GET", "headers": headers, "pollIntervalMs": 100}),
    )
    .await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], false, "{result}");
    let with = (
        Some("Bearer only-for-a".to_string()),
        Some("session=a".to_string()),
        Some("Basic cHJveHk=".to_string()),
    );
    let seen: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(p, a, c, pa)| (p.clone(), (a.clone(), c.clone(), pa.clone())))
        .collect();
    assert_eq!(
        seen,
        [
            ("/hop/0".to_string(), with.clone()),
            ("/hop/1".to_string(), with),
            ("/hop/2".to_string(), (None, None, None)),
            ("/hop/3".to_string(), (None, None, None)),
        ]
    );
}

/// A URL with a user name and password and an `Authorization` header of the agent's: the header
/// is the credential sent, once (the URL's would be a second `Authorization`).
#[tokio::test]
async fn the_agents_authorization_header_wins_over_a_urls_password() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let seen: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let app = {
        let seen = seen.clone();
        Router::new().fallback(move |req: axum::extract::Request| {
            let seen = seen.clone();
            async move {
                let values = req.headers().get_all("authorization").iter();
                seen.lock()
                    .unwrap()
                    .push(values.map(|v| v.to_str().unwrap().to_string()).collect());
                r#"{"status":"done"}"#
            }
        })
    };
    let base = serve_local(app).await;
    allow(&s, "agent", &[authority(&base)]);
    let with_password = base.replace("http://", "http://bob:pw@");
    let headers = json!({"Authorization": "Bearer agent-token"});
    let id = start(
        &s,
        &agent,
        json!({"url": format!("{with_password}/job"), "method": "GET", "headers": headers}),
    )
    .await;
    assert_eq!(completed(&s, &id).await["isError"], false);
    let id = start(
        &s,
        &agent,
        json!({"url": format!("{with_password}/job"), "method": "GET"}),
    )
    .await;
    assert_eq!(completed(&s, &id).await["isError"], false);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            vec!["Bearer agent-token".to_string()],
            vec!["Basic Ym9iOnB3".to_string()]
        ]
    );
}

/// A `202` whose `Location` is not an HTTP URL (`file:`, `ftp:`) fails the job at once, as a
/// redirect there does: nothing is retried.
#[tokio::test]
async fn a_monitor_location_that_is_not_http_fails_at_once() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().fallback(move |req: axum::extract::Request| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            // `/start` names a file; `/poll` is a monitor that names an FTP URL later on.
            let location = match req.uri().path() {
                "/start" => "file:///etc/passwd",
                _ => "ftp://example.com/op/1",
            };
            (StatusCode::ACCEPTED, [("location", location)], "{}")
        }
    });
    let base = serve_local(app).await;
    allow(&s, "agent", &[authority(&base)]);
    for (args, location) in [
        (
            json!({"url": format!("{base}/start"), "body": {}}),
            "file:///etc/passwd",
        ),
        (
            json!({"monitor": format!("{base}/poll")}),
            "ftp://example.com/op/1",
        ),
    ] {
        hits.store(0, Ordering::SeqCst);
        let began = Instant::now();
        let id = start(&s, &agent, args).await;
        let result = completed(&s, &id).await;
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains(&format!("{location:?}")) && text.contains("not an HTTP URL"),
            "{text}"
        );
        assert_eq!(hits.load(Ordering::SeqCst), 1, "nothing retried");
        assert!(began.elapsed() < Duration::from_secs(3));
    }
}

/// Cancelling a task that follows a monitor sends `DELETE` with the headers the polls carry
/// (an authenticated API refuses one without them), and the task's timeline says how the
/// `DELETE` went.
#[tokio::test]
async fn a_cancel_deletes_the_monitor_with_the_polls_headers_and_records_the_outcome() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let deletes: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = deletes.clone();
    let app = Router::new().route(
        "/ops/1",
        get(|| async { ([("retry-after", "1")], r#"{"status":"running"}"#) }).delete(
            move |headers: HeaderMap| {
                let auth = header(&headers, "authorization");
                log.lock().unwrap().push(auth.clone());
                async move {
                    if auth.as_deref() == Some("Bearer api-key") {
                        StatusCode::NO_CONTENT
                    } else {
                        StatusCode::UNAUTHORIZED
                    }
                }
            },
        ),
    );
    let base = serve_local(app).await;
    allow(&s, "agent", &[authority(&base)]);
    let monitor = format!("{base}/ops/1");
    let id = start(
        &s,
        &agent,
        json!({"monitor": monitor, "headers": {"Authorization": "Bearer api-key"}}),
    )
    .await;
    s.wait_for(&agent, &id, "polling", |v| {
        v["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("running"))
    })
    .await;
    s.rpc(Some(&agent), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .result();
    s.wait_status(&agent, &id, "cancelled").await;
    assert_eq!(
        *deletes.lock().unwrap(),
        [Some("Bearer api-key".to_string())]
    );
    let messages = status_messages(&s, &id).await;
    assert!(
        messages.contains(&format!("Cancelled; DELETE {monitor} answered 204")),
        "{messages:?}"
    );
}

/// A server cannot make Taskdeck poll it in a tight loop: `Retry-After: 0`, a date in the past
/// and an invalid value all wait the task's poll interval, at least 1 s (a `pollIntervalMs` of
/// 100 included); and polls that say the same thing write one timeline event, not one each.
#[tokio::test]
async fn polls_are_at_least_a_second_apart_and_write_only_what_changed() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let polls: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let log = polls.clone();
    let app = Router::new().fallback(move || {
        let n = {
            let mut polls = log.lock().unwrap();
            polls.push(Instant::now());
            polls.len() - 1
        };
        async move {
            let (retry_after, body) = match n {
                0 => ("0", r#"{"status":"running"}"#),
                1 => ("Thu, 01 Jan 1970 00:00:00 GMT", r#"{"status":"running"}"#),
                2 => ("soon", r#"{"status":"running"}"#),
                _ => ("0", r#"{"status":"done"}"#),
            };
            ([("retry-after", retry_after)], body)
        }
    });
    let base = serve_local(app).await;
    allow(&s, "agent", &[authority(&base)]);
    let id = start(
        &s,
        &agent,
        json!({"monitor": format!("{base}/op"), "pollIntervalMs": 100}),
    )
    .await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], false, "{result}");
    let polls = polls.lock().unwrap().clone();
    assert_eq!(polls.len(), 4);
    for pair in polls.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(950), "polls {gap:?} apart");
    }
    let waiting: Vec<String> = status_messages(&s, &id)
        .await
        .into_iter()
        .filter(|m| m.starts_with("Waiting for"))
        .collect();
    assert_eq!(
        waiting,
        [format!("Waiting for {base}/op (status: running)")],
        "one event for three polls that said the same"
    );
}

/// A POST whose connection broke after it was sent may have reached the server: it is not sent
/// again (a PUT is); a POST whose connection was refused never left, and is retried.
#[tokio::test]
async fn a_post_that_may_have_arrived_is_not_sent_again() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    // Reads each request whole, then hangs up without a word.
    let (base, seen) = raw_server(vec![Vec::new()]).await;
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    allow(&s, "agent", &[authority(&base), authority(&refused)]);

    let id = start(
        &s,
        &agent,
        json!({"url": format!("{base}/ops"), "body": {"n": 1}}),
    )
    .await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("not retried: the request may have had effects"),
        "{text}"
    );
    assert_eq!(*seen.lock().unwrap(), ["POST /OPS HTTP/1.1"], "sent once");

    seen.lock().unwrap().clear();
    let id = start(
        &s,
        &agent,
        json!({"url": format!("{base}/ops"), "method": "PUT", "body": {"n": 1}}),
    )
    .await;
    retried_then_cancelled(&s, &agent, &id, "retry 2 of 5").await;
    assert!(seen.lock().unwrap().len() >= 2, "the PUT was sent again");

    let id = start(
        &s,
        &agent,
        json!({"url": format!("{refused}/ops"), "body": {"n": 1}}),
    )
    .await;
    let message = retried_then_cancelled(&s, &agent, &id, "retry 1 of 5").await;
    assert!(message.contains("cannot connect"), "{message}");
}

/// Waits until the task's statusMessage contains `retry` ("retry 1 of 5"), then cancels it;
/// that statusMessage.
async fn retried_then_cancelled(s: &Server, agent: &str, id: &str, retry: &str) -> String {
    let t = s
        .wait_for(agent, id, retry, |v| {
            v["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains(retry))
        })
        .await;
    s.rpc(Some(agent), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .result();
    t["statusMessage"].as_str().unwrap_or_default().to_string()
}

/// A URL's password is never shown: not in the human's question, the status messages, the
/// timeline or the result, whether it came in the agent's `url`, a `Location` or a redirect.
#[tokio::test]
async fn a_password_in_a_url_is_never_shown() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap().to_string();
    let polls = Arc::new(AtomicUsize::new(0));
    let app = {
        let (at, polls) = (at.clone(), polls.clone());
        Router::new().fallback(move |req: axum::extract::Request| {
            let (at, polls) = (at.clone(), polls.clone());
            async move {
                let mut h = HeaderMap::new();
                let (status, location, body) = match req.uri().path() {
                    "/start" => (202, format!("http://bob:PW2@{at}/mon"), "{}"),
                    "/mon" if polls.fetch_add(1, Ordering::SeqCst) == 0 => {
                        (200, String::new(), r#"{"status":"running"}"#)
                    }
                    "/mon" => (307, format!("http://carol:PW3@{at}/final"), ""),
                    _ => (200, String::new(), r#"{"status":"done"}"#),
                };
                if !location.is_empty() {
                    h.insert("location", location.parse().unwrap());
                }
                (StatusCode::from_u16(status).unwrap(), h, body)
            }
        })
    };
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let id = start(
        &s,
        &agent,
        json!({"url": format!("http://bob:PW1@{at}/start"), "body": {}}),
    )
    .await;
    let v = s.wait_status(&s.admin, &id, "input_required").await;
    let asked = v["inputRequests"]["approve"]["params"]["message"]
        .as_str()
        .unwrap();
    assert!(
        asked.contains("Values that look like credentials are hidden here"),
        "the question says what it hides: {asked}"
    );
    assert!(
        asked.contains(&format!("POST http://bob:****@{at}/start")) && !asked.contains("PW"),
        "{asked}"
    );
    let given = s.read_whole(&s.admin, &id).await;
    assert_eq!(
        given["url"],
        format!("http://bob:PW1@{at}/start"),
        "{given}"
    );
    s.answer(&id, "approve", json!({"action": "accept"})).await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["answeredBy"],
        format!("http://carol:****@{at}/final")
    );
    // `url` is what the agent asked; the monitor that said it finished is named beside it.
    assert_eq!(
        result["structuredContent"]["url"],
        format!("http://bob:****@{at}/start")
    );
    assert_eq!(
        result["structuredContent"]["monitor"],
        format!("http://bob:****@{at}/mon")
    );
    let (_, detail) = s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await;
    let shown = json!({"timeline": detail["timeline"].as_array().unwrap().iter()
            .filter(|e| e["kind"] != "created").collect::<Vec<_>>(),
        "statusMessage": detail["statusMessage"], "result": detail["result"]})
    .to_string();
    assert!(!shown.contains("PW"), "{shown}");
    assert!(
        shown.contains(&format!("http://bob:****@{at}/mon")),
        "{shown}"
    );
    // Nor in the stored arguments, the whole task view, or search.
    assert_eq!(
        detail["task"]["arguments"]["url"],
        format!("http://bob:****@{at}/start")
    );
    assert!(!detail.to_string().contains("PW1"), "{detail}");
    let (_, found) = s.v1_get(Some(&s.admin), "/v1/tasks?q=PW1").await;
    assert_eq!(found["tasks"], json!([]));
}

/// A cancel while the first request is in flight (the remote side may have started the job,
/// and there is no monitor to stop it by) says so in the task's timeline.
#[tokio::test]
async fn a_cancel_during_the_first_request_records_that_it_was_in_flight() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let app = Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        std::future::pending::<&'static str>()
    });
    let base = serve_local(app).await;
    allow(&s, "agent", &[authority(&base)]);
    let id = start(
        &s,
        &agent,
        json!({"url": format!("{base}/ops"), "body": {"n": 1}}),
    )
    .await;
    let began = Instant::now();
    while hits.load(Ordering::SeqCst) == 0 {
        assert!(began.elapsed() < Duration::from_secs(10), "never sent");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    s.rpc(Some(&agent), "tasks/cancel", json!({"taskId": id}), true)
        .await
        .result();
    s.wait_status(&agent, &id, "cancelled").await;
    let messages = status_messages(&s, &id).await;
    assert!(
        messages.contains(&format!(
            "Cancelled while POST {base}/ops was in flight; no monitor to DELETE"
        )),
        "{messages:?}"
    );
}

/// An answer that is neither a success, a refusal nor a server error (a 302 without
/// `Location`, a 304, a status over 599) is an error, not the operation's result; and the
/// result of a redirected request names the URL that answered.
#[tokio::test]
async fn an_answer_with_nothing_to_follow_is_an_error_and_the_answering_url_is_named() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent");
    let mut bases = Vec::new();
    for (head, code) in [
        ("HTTP/1.1 302 Found\r\nContent-Length: 0", 302),
        ("HTTP/1.1 304 Not Modified", 304),
        ("HTTP/1.1 600 Odd\r\nContent-Length: 2", 600),
    ] {
        let body = if code == 600 { "{}" } else { "" };
        let answer = format!("{head}\r\nConnection: close\r\n\r\n{body}").into_bytes();
        let (base, _) = raw_server(vec![answer]).await;
        bases.push((base, code));
    }
    let moved = Router::new()
        .route(
            "/a",
            get(|| async { (StatusCode::TEMPORARY_REDIRECT, [("location", "/b")], "") }),
        )
        .route("/b", get(|| async { r#"{"status":"done"}"# }));
    let moved = serve_local(moved).await;
    let mut authorities: Vec<&str> = bases.iter().map(|(b, _)| authority(b)).collect();
    authorities.push(authority(&moved));
    allow(&s, "agent", &authorities);

    for (base, code) in &bases {
        let id = start(&s, &agent, json!({"monitor": format!("{base}/op")})).await;
        let result = completed(&s, &id).await;
        assert_eq!(result["isError"], true, "{code}: {result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(&format!("HTTP {code}")), "{text}");
    }
    let id = start(&s, &agent, json!({"url": format!("{moved}/a")})).await;
    let result = completed(&s, &id).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["url"], format!("{moved}/a"));
    assert_eq!(
        result["structuredContent"]["answeredBy"],
        format!("{moved}/b")
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("answered by {moved}/b")), "{text}");
}

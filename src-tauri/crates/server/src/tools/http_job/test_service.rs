//! The test service of `wait_for_http_job`'s tests: an engine with the tool (and a DNS that
//! puts `public.test` and `other.test` on 127.0.0.1), local HTTP servers to reach, and waits for
//! the task to ask, answer and finish.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::FutureExt as _;
use serde_json::{Value, json};

use super::WaitForHttpJob;
use crate::policy::{Decision, Policy, Rule};
use taskdeck_engine::{
    Engine, EngineConfig, Principal, TaskRecord, TaskStatus,
    feed::ChangeFeed,
    store::{Durability, Store},
};

/// Requests a local server saw: `(method, path, Host, Authorization)`.
pub(super) type Seen = Arc<Mutex<Vec<(String, String, String, Option<String>)>>>;

/// A server on 127.0.0.1: `/ops` answers `{"status": "done"}`; `/away` redirects (307) to
/// `http://other.test:PORT/ops`, `/here` (302) to `/ops` on the same origin.
pub(super) async fn local_server() -> (u16, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
        let log = log.clone();
        async move {
            let header = |n: &str| {
                req.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(String::from)
            };
            let path = req.uri().path().to_string();
            log.lock().unwrap().push((
                req.method().to_string(),
                path.clone(),
                header("host").unwrap_or_default(),
                header("authorization"),
            ));
            let (status, location) = match path.as_str() {
                "/away" => (307, format!("http://other.test:{port}/ops")),
                "/here" => (302, "/ops".to_string()),
                _ => (200, String::new()),
            };
            axum::response::Response::builder()
                .status(status)
                .header("location", location)
                .body(axum::body::Body::from(r#"{"status": "done"}"#))
                .unwrap()
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, seen)
}

/// Every name the engines' DNS was asked for, with the port: `(host, port)`, in order (tests
/// tell theirs apart by their servers' ports).
pub(super) static LOOKUPS: std::sync::Mutex<Vec<(String, u16)>> = std::sync::Mutex::new(Vec::new());

/// An engine with `wait_for_http_job` whose DNS knows `public.test` and `other.test`, both
/// at 127.0.0.1 (what a rebinding or a hostile DNS answer would say), and whose requests
/// may take `timeout` each. Each lookup is recorded in [`LOOKUPS`].
pub(super) async fn engine(dir: &std::path::Path, timeout: Duration) -> Engine {
    let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).unwrap();
    let engine = Engine::new(
        store,
        EngineConfig::default(),
        crate::adapters::wire::task_error_object,
    );
    let lookup = Arc::new(|host: String, port: u16| {
        LOOKUPS.lock().unwrap().push((host.clone(), port));
        async move {
            match host.as_str() {
                "public.test" | "other.test" => Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))]),
                _ => Err(std::io::Error::other("unknown name")),
            }
        }
        .boxed()
    });
    let policy = Arc::new(Policy::new(dir));
    let tool = WaitForHttpJob::with_lookup(policy, lookup).with_request_timeout(timeout);
    engine.register_tool(Arc::new(tool));
    engine.start().await.unwrap();
    engine
}

pub(super) async fn wait_until(
    engine: &Engine,
    id: &str,
    pred: impl Fn(&TaskRecord) -> bool,
) -> TaskRecord {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = engine.get(&Principal::admin(), id).unwrap();
        if pred(&t) {
            return t;
        }
        assert!(
            Instant::now() < deadline,
            "still {:?}: {:?}",
            t.status,
            t.result
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The key and text of the question the task asks, once it asks.
pub(super) async fn asked(engine: &Engine, id: &str) -> (String, String) {
    let t = wait_until(engine, id, |t| t.status == TaskStatus::InputRequired).await;
    let (key, request) = t.input_requests.iter().next().unwrap();
    let text = request["params"]["message"].as_str().unwrap().to_string();
    (key.clone(), text)
}

/// The text of the question the task asks, once it asks.
pub(super) async fn question(engine: &Engine, id: &str) -> String {
    asked(engine, id).await.1
}

/// Answers the question the task asks with `action`, as the admin; a call shown with values
/// hidden is read whole first, as a person must before approving it.
pub(super) async fn answer(engine: &Engine, id: &str, action: &str) {
    let (key, text) = asked(engine, id).await;
    if action == "accept" && text.contains("Values that look like credentials are hidden here") {
        engine.reveal_hidden(&Principal::admin(), id).await.unwrap();
    }
    let mut responses = serde_json::Map::new();
    responses.insert(key.clone(), json!({"action": action}));
    let report = engine
        .answer(&Principal::admin(), id, responses)
        .await
        .unwrap();
    assert_eq!(report.accepted, [key]);
}

/// Lets principal `agent` reach `authority` (`host:port`) in `dir`'s policy: a rule naming it.
pub(super) fn allow(dir: &std::path::Path, authority: &str) {
    let rule = Rule {
        id: String::new(),
        principal: "agent".into(),
        server: "taskdeck".into(),
        tool: "wait_for_http_job".into(),
        arguments: [("url".to_string(), format!("http://{authority}/*"))].into(),
        only_these_arguments: false,
        public_only: false,
        decision: Decision::Allow,
        note: None,
        created_at_ms: None,
        approval: Default::default(),
    };
    Policy::new(dir).append(rule).unwrap();
}

pub(super) async fn result(engine: &Engine, id: &str) -> Value {
    let t = wait_until(engine, id, |t| t.status.is_terminal()).await;
    assert_eq!(t.status, TaskStatus::Completed);
    t.result.unwrap()
}

/// Serves `app` on 127.0.0.1 and lets principal `agent` reach it in `dir`'s policy; its
/// base URL.
pub(super) async fn allowed_service(dir: &std::path::Path, app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let authority = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    allow(dir, &authority);
    format!("http://{authority}")
}

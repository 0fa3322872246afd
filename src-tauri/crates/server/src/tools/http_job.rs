//! `wait_for_http_job`: start or follow a long-running HTTP operation elsewhere, the RFC 9110
//! way: a request answered `202 Accepted` with `Location` (and maybe `Retry-After`) points to a
//! status monitor, which is polled at the interval the server asks for until the operation
//! finishes; the task completes with the final representation. Transient failures (nothing
//! answered, a body cut short, 5xx, 429) are retried with exponential backoff, at most
//! [`MAX_RETRIES`] in a row; a 4xx, a body over 1 MiB or a `Location` that is not an HTTP URL
//! is a clear tool error at once. Polls are at least [`MIN_POLL_MS`] (or the task's
//! `pollIntervalMs`, if larger) apart whatever the server asks, and a poll writes the task's
//! status (a timeline event) only when what it says changed. Cancelling the task sends
//! `DELETE` to the monitor, with the headers its polls carry, and records how that went in the
//! task's timeline (or, before there is a monitor, whether the first request was in flight).
//!
//! An agent must not use Taskdeck to read services only this machine can reach: every request
//! goes through [`Reach`], which resolves and checks each destination first (a private one, or
//! one of this machine's own addresses, only once the human allowed it: a question only the
//! human can answer, key `allow-private-network`, then `-2`, `-3`, ... for further hosts;
//! "always allow" records it in `<config dir>/http-policy.json`, [`HttpPolicy`]), connects to
//! the addresses it checked, and sends the agent's credentials only to the agent's origin.

use std::{path::Path, sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use reqwest::{Method, StatusCode, Url, header};
use serde_json::{Value, json};

use super::{
    destination::{Lookup, system_lookup},
    http_policy::HttpPolicy,
    http_reach::{Answer, Failure, REQUEST_TIMEOUT, Reach, Target, check_header, shown},
};
use taskdeck_engine::{Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode};

/// Consecutive transient failures tolerated before the task fails.
pub const MAX_RETRIES: u32 = 5;
/// Longest wait between two polls the server can ask for, in ms.
pub const MAX_POLL_MS: u64 = 60_000;
/// Shortest wait between two requests of a run's polling (after the starting request too), in
/// ms, whatever the server asks (`Retry-After: 0`, a date in the past) or the agent gives as
/// `pollIntervalMs`: a server cannot make Taskdeck poll it in a tight loop.
pub const MIN_POLL_MS: u64 = 1000;
/// The key of the first question about a private destination (later ones add `-2`, `-3`, ...).
pub const ALLOW_PRIVATE_KEY: &str = "allow-private-network";

/// Status words (case-insensitive) that mean "not finished yet" in a monitor's body.
const RUNNING: [&str; 9] = [
    "running",
    "pending",
    "queued",
    "accepted",
    "inprogress",
    "in_progress",
    "notstarted",
    "working",
    "started",
];
/// Status words that mean the operation finished unsuccessfully.
const FAILED: [&str; 5] = ["failed", "error", "cancelled", "canceled", "aborted"];

/// The `wait_for_http_job` tool.
pub struct WaitForHttpJob {
    descriptor: ToolDescriptor,
    policy: Arc<HttpPolicy>,
    lookup: Lookup,
    /// How long one request may take: [`REQUEST_TIMEOUT`] (shorter in tests).
    request_timeout: Duration,
}

impl WaitForHttpJob {
    /// The tool; its policy for private destinations is `<config_dir>/http-policy.json`.
    pub fn new(config_dir: &Path) -> WaitForHttpJob {
        WaitForHttpJob::with_lookup(config_dir, system_lookup())
    }

    /// Like [`WaitForHttpJob::new`], resolving host names with `lookup` (a test gives names
    /// the addresses it wants).
    pub fn with_lookup(config_dir: &Path, lookup: Lookup) -> WaitForHttpJob {
        WaitForHttpJob {
            descriptor: ToolDescriptor {
                name: "wait_for_http_job".into(),
                title: Some("Wait for an HTTP long-running operation".into()),
                description: "Start an HTTP operation (POST/GET url) or follow an existing status monitor (monitor), poll it \
                    at the interval the server asks (Retry-After) until it finishes, and return its final representation. \
                    Cancelling the task sends DELETE to the monitor. A destination on a private network (loopback, \
                    LAN, link-local) or on this machine is reached only once the human allows it. Responses over 1 MiB \
                    fail the task."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "format": "uri", "description": "Operation to start."},
                        "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH"], "description": "Default: POST with a body, else GET."},
                        "body": {"description": "JSON body of the starting request."},
                        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                        "monitor": {"type": "string", "format": "uri", "description": "Follow this status monitor instead of starting anything."},
                        "pollIntervalMs": {"type": "integer", "minimum": 100, "description": "Poll interval when the server gives no Retry-After, and the shortest wait between polls whatever it gives (default and at least 1000)."}
                    },
                    "additionalProperties": false
                }),
                mode: ToolMode::Task { required: false },
                resumable: false,
                agent_callable: true,
            },
            policy: Arc::new(HttpPolicy::new(config_dir)),
            lookup,
            request_timeout: REQUEST_TIMEOUT,
        }
    }

    /// The same tool with another time limit per request (tests that cannot wait 30 s).
    #[cfg(test)]
    fn with_request_timeout(mut self, timeout: Duration) -> WaitForHttpJob {
        self.request_timeout = timeout;
        self
    }
}

/// A completed outcome with `isError: true`: `text` for the agent, `data` as structured content.
pub(super) fn tool_error(text: String, data: Value) -> Outcome {
    Outcome::Completed(
        json!({"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": true}),
    )
}

/// The wait before the next poll: what `answer` asks for ([`retry_after`]), but never less than
/// `interval` (the task's poll interval, at least [`MIN_POLL_MS`]).
fn next_poll(answer: &Answer, interval: Duration) -> Duration {
    retry_after(answer, interval).max(interval)
}

/// The task's poll interval: `pollIntervalMs` (default and at least [`MIN_POLL_MS`]).
fn poll_interval(arguments: &Value) -> Duration {
    let given = arguments.get("pollIntervalMs").and_then(Value::as_u64);
    Duration::from_millis(given.unwrap_or(MIN_POLL_MS).max(MIN_POLL_MS))
}

/// The delay an answer asks for: `Retry-After` in seconds (or an HTTP date), at most
/// [`MAX_POLL_MS`], else `default`.
fn retry_after(answer: &Answer, default: Duration) -> Duration {
    let Some(v) = answer
        .headers
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
    else {
        return default;
    };
    if let Ok(secs) = v.trim().parse::<u64>() {
        return Duration::from_millis(secs.saturating_mul(1000).min(MAX_POLL_MS));
    }
    httpdate_delay(v).unwrap_or(default)
}

fn httpdate_delay(v: &str) -> Option<Duration> {
    let when =
        time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc2822).ok()?;
    let ms = (when - time::OffsetDateTime::now_utc())
        .whole_milliseconds()
        .clamp(0, MAX_POLL_MS as i128);
    Some(Duration::from_millis(ms as u64))
}

/// The status word of a monitor body (`status`, `state` or `done: false`), lowercased.
fn body_status(body: &Value) -> Option<String> {
    if body.get("done") == Some(&Value::Bool(false)) {
        return Some("running".into());
    }
    ["status", "state"]
        .iter()
        .find_map(|k| body.get(*k)?.as_str())
        .map(|s| s.to_ascii_lowercase().replace([' ', '-'], ""))
}

impl TaskTool for WaitForHttpJob {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// `headers` values whose names say they are credentials are kept and shown as `[redacted]`,
    /// and the password of a `url` or `monitor` as `****` (`http://bob:****@host/`).
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        let mut shown = super::secrets::redact_field(arguments, "headers");
        for field in ["url", "monitor"] {
            let current = shown.as_ref().unwrap_or(arguments);
            if let Some(masked) = current
                .get(field)
                .and_then(Value::as_str)
                .and_then(super::secrets::mask_url_passwords)
            {
                let mut next = current.clone();
                next[field] = Value::String(masked);
                shown = Some(next);
            }
        }
        shown
    }

    /// Exactly one of `url` and `monitor`, each an HTTP URL; `headers` valid on the wire and
    /// none that only the client sets (`Host`, `Content-Length`, ...: [`check_header`]).
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        if let Some(headers) = arguments.get("headers").and_then(Value::as_object) {
            for (name, value) in headers {
                check_header(name, value.as_str().unwrap_or_default())?;
            }
        }
        match (
            arguments.get("url").is_some(),
            arguments.get("monitor").is_some(),
        ) {
            (true, false) | (false, true) => {}
            _ => {
                return Err(
                    "give exactly one of url (start an operation) or monitor (follow one)".into(),
                );
            }
        }
        for field in ["url", "monitor"] {
            if let Some(v) = arguments.get(field).and_then(Value::as_str) {
                match reqwest::Url::parse(v) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                    Ok(u) => {
                        return Err(format!(
                            "{field} must be an http or https URL, not {}:",
                            u.scheme()
                        ));
                    }
                    Err(e) => return Err(format!("{field} is not a URL ({e}): {v:?}")),
                }
            }
        }
        Ok(())
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let (policy, lookup, timeout) = (
            self.policy.clone(),
            self.lookup.clone(),
            self.request_timeout,
        );
        async move {
            let interval = poll_interval(&arguments);
            let headers: Vec<(String, String)> = arguments
                .get("headers")
                .and_then(Value::as_object)
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
                .unwrap_or_default();
            let given = arguments.get("monitor").or_else(|| arguments.get("url")).and_then(Value::as_str).unwrap_or_default();
            // The agent's credentials are for the origin of the URL it gave.
            let first = match Url::parse(given) {
                Ok(url) => Target { url, credentials: true },
                Err(e) => return tool_error(format!("the URL given is not a URL: {e}"), json!({"error": e.to_string()})),
            };
            let mut reach = match Reach::new(ctx.clone(), policy, lookup, headers, timeout) {
                Ok(r) => r,
                Err(e) => return Outcome::Failed(TaskFailure::tool(format!("cannot set up the HTTP client: {e}"), None)),
            };
            let mut status = Status { ctx: ctx.clone(), last: String::new() };
            // 1. Start the operation (or take the monitor as given).
            let (mut monitor, mut wait) = if arguments.get("monitor").is_some() {
                (first, Duration::ZERO)
            } else {
                let url = &first.url;
                let body = arguments.get("body").cloned();
                let method = match arguments.get("method").and_then(Value::as_str) {
                    Some(m) => Method::from_bytes(m.as_bytes()).unwrap_or(Method::POST),
                    None if body.is_some() => Method::POST,
                    None => Method::GET,
                };
                let label = format!("{method} {}", shown(url));
                status.set(format!("Starting {label}")).await;
                let answer = match exchange(&mut status, &mut reach, &method, &first, body.as_ref(), Duration::ZERO, &label).await {
                    Ok(answer) => answer,
                    Err(Stop::Cancelled) => {
                        // No monitor yet: say whether the remote side may have the request.
                        let note = match reach.in_flight() {
                            Some(request) => format!("Cancelled while {request} was in flight; no monitor to DELETE"),
                            None => format!("Cancelled before {label} was answered; nothing was in flight, no monitor to DELETE"),
                        };
                        tracing::info!(task_id = ctx.task_id(), "{note}");
                        status.set(note).await;
                        return Outcome::Cancelled;
                    }
                    Err(Stop::End(outcome)) => return outcome,
                };
                let code = answer.status;
                let seen = json!({"url": shown(url), "answeredBy": shown(&answer.from.url), "httpStatus": code.as_u16(), "body": answer.json()});
                if code.is_server_error() {
                    return tool_error(format!("{label} failed: HTTP {code} (not retried: the request may have had effects)"), seen);
                }
                if code.is_client_error() {
                    return tool_error(format!("{label} was refused: HTTP {code}"), seen);
                }
                if !code.is_success() {
                    return tool_error(unexpected(&label, code), seen);
                }
                if code != StatusCode::ACCEPTED {
                    return finished(url, &answer);
                }
                match answer.location() {
                    Some(Ok(monitor)) => (monitor, next_poll(&answer, interval)),
                    Some(Err(location)) => {
                        return tool_error(format!("{} answered 202 Accepted with Location {location}", shown(&answer.from.url)), seen);
                    }
                    None => {
                        return tool_error(format!("{} answered 202 Accepted without a Location to follow", shown(&answer.from.url)), seen);
                    }
                }
            };
            // 2. Poll the monitor. A cancel while waiting or polling (or asking about the
            // monitor) asks the remote operation to stop.
            loop {
                let label = format!("The status monitor {}", shown(&monitor.url));
                let answer = match exchange(&mut status, &mut reach, &Method::GET, &monitor, None, wait, &label).await {
                    Ok(answer) => answer,
                    Err(Stop::Cancelled) => {
                        let deleted = reach.delete(&monitor).await;
                        let note = format!("Cancelled; DELETE {} {deleted}", shown(&monitor.url));
                        tracing::info!(task_id = ctx.task_id(), "{note}");
                        status.set(note).await;
                        return Outcome::Cancelled;
                    }
                    Err(Stop::End(outcome)) => return outcome,
                };
                let code = answer.status;
                let seen = || json!({"monitor": shown(&monitor.url), "answeredBy": shown(&answer.from.url), "httpStatus": code.as_u16(), "body": answer.json()});
                if code.is_client_error() {
                    return tool_error(format!("{label} answered HTTP {code}"), seen());
                }
                if !code.is_success() {
                    return tool_error(unexpected(&label, code), seen());
                }
                wait = next_poll(&answer, interval);
                if code == StatusCode::ACCEPTED && let Some(location) = answer.location() {
                    monitor = match location {
                        Ok(next) => next,
                        Err(location) => {
                            return tool_error(format!("{label} answered 202 Accepted with Location {location}"), seen());
                        }
                    };
                }
                let body = answer.json();
                let word = body_status(&body);
                let running = code == StatusCode::ACCEPTED || word.as_deref().is_some_and(|w| RUNNING.contains(&w));
                if !running {
                    return finished(&monitor.url, &answer);
                }
                // The same words as the last poll's write nothing: no event per poll.
                status.set(format!("Waiting for {} (status: {})", shown(&monitor.url), word.unwrap_or_else(|| code.to_string()))).await;
            }
        }
        .boxed()
    }
}

/// The task's status message as this run last wrote it: a message is written (a timeline
/// event) only when it differs from the last one.
struct Status {
    ctx: TaskContext,
    last: String,
}

impl Status {
    /// Sets the task's status message to `message`, unless that is what it says already.
    async fn set(&mut self, message: String) {
        if message != self.last {
            self.ctx.status_message(message.clone()).await;
            self.last = message;
        }
    }
}

/// The error text for an answer that is neither a success, nor a refusal, nor a server error
/// (a 1xx, a 3xx that is no redirect to follow, a status over 599): there is nothing to follow.
fn unexpected(label: &str, code: StatusCode) -> String {
    format!(
        "{label} answered HTTP {}, which is not an answer to follow (a 2xx, 4xx or 5xx was expected)",
        code.as_u16()
    )
}

/// Why tries of a request ended without an answer to keep.
enum Stop {
    /// The task was cancelled meanwhile.
    Cancelled,
    /// The run ends with this outcome.
    End(Outcome),
}

/// Sends `method target` (with JSON `body`), first waiting `wait`, until an answer worth
/// keeping comes. A transient failure (nothing answered, a body cut short, 5xx, 429) is tried
/// again after a backoff (0.5 s, doubling), at most [`MAX_RETRIES`] times in a row; but a
/// request that is not idempotent (POST, PATCH) is tried again only when it is known not to
/// have reached the server (the name did not resolve, the connection could not be opened): its
/// 5xx or 429 is returned as its answer, and a time-out, a broken connection or a body cut
/// short ends the run (the server may have received it, and acted). `label` names the request
/// in status messages and errors ("POST url", "The status monitor url").
async fn exchange(
    status: &mut Status,
    reach: &mut Reach,
    method: &Method,
    target: &Target,
    body: Option<&Value>,
    mut wait: Duration,
    label: &str,
) -> Result<Answer, Stop> {
    let ctx = status.ctx.clone();
    let idempotent = method.is_idempotent();
    let mut failures = 0;
    loop {
        let sent = tokio::select! {
            sent = async {
                tokio::time::sleep(wait).await;
                reach.send(method.clone(), target, body).await
            } => sent,
            _ = ctx.cancelled() => return Err(Stop::Cancelled),
        };
        let why = match sent {
            Ok(answer)
                if !idempotent
                    || !(answer.status.is_server_error()
                        || answer.status == StatusCode::TOO_MANY_REQUESTS) =>
            {
                return Ok(answer);
            }
            Ok(answer) => format!("HTTP {}", answer.status),
            Err(Failure::Unsent(why)) => why,
            Err(Failure::Unanswered(why) | Failure::Cut(why)) if idempotent => why,
            Err(Failure::Unanswered(why) | Failure::Cut(why)) => {
                let text =
                    format!("{label}: {why} (not retried: the request may have had effects)");
                return Err(Stop::End(tool_error(
                    text,
                    json!({"url": shown(&target.url), "error": why}),
                )));
            }
            // A cancel while the human was asked about the destination is a cancel.
            Err(Failure::End(_)) if ctx.is_cancelled() => return Err(Stop::Cancelled),
            Err(Failure::End(outcome)) => return Err(Stop::End(outcome)),
        };
        failures += 1;
        if failures > MAX_RETRIES {
            let text = format!("{label} kept failing: {why}");
            return Err(Stop::End(tool_error(
                text,
                json!({"url": shown(&target.url), "error": why}),
            )));
        }
        status
            .set(format!("{label}: {why}; retry {failures} of {MAX_RETRIES}"))
            .await;
        wait = Duration::from_millis(500 << (failures - 1));
    }
}

/// The outcome of an operation that finished: `answer` to a request for `url` (which may have
/// been redirected: `answeredBy` names the URL that answered). An error when its body's status
/// word says it failed.
fn finished(url: &Url, answer: &Answer) -> Outcome {
    let (status, body, from) = (answer.status, answer.json(), &answer.from.url);
    let failed = body_status(&body).is_some_and(|w| FAILED.contains(&w.as_str()));
    let how = if failed {
        "unsuccessfully".to_string()
    } else {
        format!("HTTP {}", status.as_u16())
    };
    let by = if from == url {
        String::new()
    } else {
        format!(", answered by {}", shown(from))
    };
    let text = format!("{} finished ({how}{by}): {body}", shown(url));
    Outcome::Completed(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"url": shown(url), "answeredBy": shown(from), "httpStatus": status.as_u16(), "body": body},
        "isError": failed
    }))
}

#[cfg(test)]
mod tests {
    use std::{
        net::SocketAddr,
        sync::{Arc, Mutex},
        time::{Duration, Instant},
    };

    use futures::FutureExt as _;
    use serde_json::{Value, json};

    use super::{ALLOW_PRIVATE_KEY, REQUEST_TIMEOUT, WaitForHttpJob};
    use taskdeck_engine::{
        Engine, EngineConfig, Principal, TaskRecord, TaskStatus,
        feed::ChangeFeed,
        store::{Durability, Store},
    };

    /// Requests a local server saw: `(method, path, Host, Authorization)`.
    type Seen = Arc<Mutex<Vec<(String, String, String, Option<String>)>>>;

    /// A server on 127.0.0.1: `/ops` answers `{"status": "done"}`; `/away` redirects (307) to
    /// `http://other.test:PORT/ops`, `/here` (302) to `/ops` on the same origin.
    async fn local_server() -> (u16, Seen) {
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

    /// An engine with `wait_for_http_job` whose DNS knows `public.test` and `other.test`, both
    /// at 127.0.0.1 (what a rebinding or a hostile DNS answer would say), and whose requests
    /// may take `timeout` each.
    async fn engine(dir: &std::path::Path, timeout: Duration) -> Engine {
        let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).unwrap();
        let engine = Engine::new(
            store,
            EngineConfig::default(),
            crate::adapters::wire::task_error_object,
        );
        let lookup = Arc::new(|host: String, port: u16| {
            async move {
                match host.as_str() {
                    "public.test" | "other.test" => {
                        Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
                    }
                    _ => Err(std::io::Error::other("unknown name")),
                }
            }
            .boxed()
        });
        let tool = WaitForHttpJob::with_lookup(dir, lookup).with_request_timeout(timeout);
        engine.register_tool(Arc::new(tool));
        engine.start().await.unwrap();
        engine
    }

    async fn wait_until(
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

    /// The question the task asks, once it asks.
    async fn question(engine: &Engine, id: &str) -> String {
        let t = wait_until(engine, id, |t| t.status == TaskStatus::InputRequired).await;
        t.input_requests[ALLOW_PRIVATE_KEY]["params"]["message"]
            .as_str()
            .unwrap()
            .to_string()
    }

    async fn answer(engine: &Engine, id: &str, action: &str) {
        let mut responses = serde_json::Map::new();
        responses.insert(ALLOW_PRIVATE_KEY.into(), json!({"action": action}));
        let report = engine
            .answer(&Principal::admin(), id, responses)
            .await
            .unwrap();
        assert_eq!(report.accepted, [ALLOW_PRIVATE_KEY]);
    }

    async fn result(engine: &Engine, id: &str) -> Value {
        let t = wait_until(engine, id, |t| t.status.is_terminal()).await;
        assert_eq!(t.status, TaskStatus::Completed);
        t.result.unwrap()
    }

    /// A public-looking name is judged by the address it resolves to, not by how it looks.
    #[tokio::test]
    async fn a_name_that_resolves_to_a_private_address_is_asked_about() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path(), REQUEST_TIMEOUT).await;
        let (port, seen) = local_server().await;
        let agent = Principal::named("agent");
        let url = format!("http://public.test:{port}/ops");
        let task = engine
            .create_task(&agent, "wait_for_http_job", json!({"url": url}))
            .await
            .unwrap();
        let asked = question(&engine, &task.task_id).await;
        assert!(
            asked.starts_with(&format!(
                "Allow this task to reach public.test:{port} (127.0.0.1, private network)?"
            )),
            "{asked}"
        );
        assert!(
            seen.lock().unwrap().is_empty(),
            "nothing sent before the answer"
        );
        answer(&engine, &task.task_id, "accept").await;
        let done = result(&engine, &task.task_id).await;
        assert_eq!(done["isError"], false, "{done}");
        let host = format!("public.test:{port}");
        assert_eq!(
            *seen.lock().unwrap(),
            [("GET".into(), "/ops".into(), host, None)]
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
        super::HttpPolicy::new(dir.path())
            .allow("agent", &format!("127.0.0.1:{port}"))
            .unwrap();
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

    /// Serves `app` on 127.0.0.1 and lets principal `agent` reach it in `dir`'s policy; its
    /// base URL.
    async fn allowed_service(dir: &std::path::Path, app: axum::Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        super::HttpPolicy::new(dir)
            .allow("agent", &authority)
            .unwrap();
        format!("http://{authority}")
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
        super::HttpPolicy::new(dir.path())
            .allow("agent", &authority)
            .unwrap();
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
        let failed =
            format!("Cancelled; DELETE {monitor} failed: cannot connect: Connection refused");
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
        let tool = WaitForHttpJob::new(dir.path());
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
        let fine =
            json!({"Authorization": "Bearer x", "Accept": "application/json", "X-Tab": "a\tb"});
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
}

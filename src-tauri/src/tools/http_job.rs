//! `wait_for_http_job`: start or follow a long-running HTTP operation elsewhere, the RFC 9110
//! way: a request answered `202 Accepted` with `Location` (and maybe `Retry-After`) points to a
//! status monitor, which is polled at the interval the server asks for until the operation
//! finishes; the task completes with the final representation. Transient errors (connection
//! failures, 5xx, 429) are retried with exponential backoff, at most [`MAX_RETRIES`] in a row; a
//! 4xx is a clear tool error. Cancelling the task sends `DELETE` to the monitor.
//!
//! An agent must not use Taskdeck to read services only this machine can reach: before every
//! request, and before following every redirect (followed here, hop by hop, never by the HTTP
//! client), the destination is resolved and checked ([`super::destination`]). One on a private
//! network (loopback, private, link-local, a `localhost` name) is reached only if the human
//! allowed it: the task asks them (a question only the human can answer, key
//! `allow-private-network`, then `-2`, `-3`, ... for further hosts) and sends nothing before the
//! answer; "always allow" records it in `<config dir>/http-policy.json` ([`HttpPolicy`]). The
//! connection goes to the addresses that were checked, never to a fresh DNS answer.

use std::{collections::HashSet, path::Path, sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use reqwest::{Method, StatusCode, Url, header};
use serde_json::{Value, json};

use super::{
    destination::{Destination, Destinations, Lookup, system_lookup},
    http_policy::HttpPolicy,
};
use crate::engine::{Outcome, TaskContext, TaskTool, ToolDescriptor, ToolMode};

/// Consecutive transient failures tolerated before the task fails.
pub const MAX_RETRIES: u32 = 5;
/// Longest wait between two polls, whatever the server asks, in ms.
pub const MAX_POLL_MS: u64 = 60_000;
/// Redirects followed for one request, at most.
pub const MAX_REDIRECTS: usize = 10;
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
                    LAN, link-local) is reached only once the human allows it."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "url": {"type": "string", "format": "uri", "description": "Operation to start."},
                        "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH"], "description": "Default: POST with a body, else GET."},
                        "body": {"description": "JSON body of the starting request."},
                        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                        "monitor": {"type": "string", "format": "uri", "description": "Follow this status monitor instead of starting anything."},
                        "pollIntervalMs": {"type": "integer", "minimum": 100, "description": "Poll interval when the server gives no Retry-After (default 1000)."}
                    },
                    "additionalProperties": false
                }),
                mode: ToolMode::Task { required: false },
                resumable: false,
                agent_callable: true,
            },
            policy: Arc::new(HttpPolicy::new(config_dir)),
            lookup,
        }
    }
}

fn tool_error(text: String, data: Value) -> Outcome {
    Outcome::Completed(
        json!({"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": true}),
    )
}

/// The delay a response asks for: `Retry-After` in seconds (or an HTTP date), else `default`.
fn retry_after(resp: &reqwest::Response, default: Duration) -> Duration {
    let Some(v) = resp
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
    else {
        return default;
    };
    if let Ok(secs) = v.trim().parse::<u64>() {
        return Duration::from_millis((secs * 1000).min(MAX_POLL_MS));
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

/// The body as JSON, or as a JSON string when it is not JSON.
async fn body_of(resp: reqwest::Response) -> Value {
    let text = resp.text().await.unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::String(text))
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

    /// Exactly one of `url` and `monitor`.
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
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
        let (policy, lookup) = (self.policy.clone(), self.lookup.clone());
        async move {
            let default_interval = Duration::from_millis(arguments.get("pollIntervalMs").and_then(Value::as_u64).unwrap_or(1000));
            let headers: Vec<(String, String)> = arguments
                .get("headers")
                .and_then(Value::as_object)
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
                .unwrap_or_default();
            let mut reach = match Reach::new(ctx.clone(), policy, lookup, headers) {
                Ok(r) => r,
                Err(e) => return Outcome::Failed { code: -32603, message: format!("cannot set up the HTTP client: {e}"), data: None },
            };
            // 1. Start the operation (or take the monitor as given).
            let (mut monitor, mut wait) = match arguments.get("monitor").and_then(Value::as_str) {
                Some(m) => (m.to_string(), Duration::ZERO),
                None => {
                    let url = arguments["url"].as_str().unwrap_or_default().to_string();
                    let body = arguments.get("body").cloned();
                    let method = match arguments.get("method").and_then(Value::as_str) {
                        Some(m) => Method::from_bytes(m.as_bytes()).unwrap_or(Method::POST),
                        None if body.is_some() => Method::POST,
                        None => Method::GET,
                    };
                    ctx.status_message(format!("Starting {method} {url}")).await;
                    let mut failures = 0;
                    let resp = loop {
                        let attempt = tokio::select! {
                            r = reach.send(method.clone(), &url, body.as_ref()) => r,
                            _ = ctx.cancelled() => return Outcome::Cancelled,
                        };
                        let attempt = match retryable(attempt) {
                            Ok(attempt) => attempt,
                            Err(end) => return end,
                        };
                        match attempt {
                            // A POST/PATCH that reached the server is not repeated: it may have acted.
                            Ok(r) if !(r.status().is_server_error() || r.status() == StatusCode::TOO_MANY_REQUESTS)
                                || !(method == Method::GET || method == Method::PUT) => break r,
                            other => {
                                failures += 1;
                                let why = match other { Ok(r) => format!("HTTP {}", r.status()), Err(e) => e };
                                if failures > MAX_RETRIES {
                                    return tool_error(format!("{method} {url} kept failing: {why}"), json!({"url": url, "error": why}));
                                }
                                ctx.status_message(format!("{method} {url}: {why}; retry {failures} of {MAX_RETRIES}")).await;
                                tokio::select! {
                                    _ = tokio::time::sleep(Duration::from_millis(500 << (failures - 1))) => {}
                                    _ = ctx.cancelled() => return Outcome::Cancelled,
                                }
                            }
                        }
                    };
                    let status = resp.status();
                    if status.is_server_error() {
                        let body = body_of(resp).await;
                        return tool_error(format!("{method} {url} failed: HTTP {status} (not retried: the request may have had effects)"), json!({"url": url, "httpStatus": status.as_u16(), "body": body}));
                    }
                    if status.is_client_error() {
                        let body = body_of(resp).await;
                        return tool_error(format!("{method} {url} was refused: HTTP {status}"), json!({"url": url, "httpStatus": status.as_u16(), "body": body}));
                    }
                    if status != StatusCode::ACCEPTED {
                        let body = body_of(resp).await;
                        return finished(&url, status, body);
                    }
                    let location = resp.headers().get(header::LOCATION).and_then(|l| l.to_str().ok()).map(String::from);
                    let Some(location) = location else {
                        let body = body_of(resp).await;
                        return tool_error(format!("{url} answered 202 Accepted without a Location to follow"), json!({"url": url, "body": body}));
                    };
                    let monitor = resp.url().join(&location).map(|u| u.to_string()).unwrap_or(location);
                    (monitor, retry_after(&resp, default_interval))
                }
            };
            // 2. Poll the monitor.
            let mut failures = 0;
            let mut polls = 0u64;
            loop {
                // A cancel while waiting or polling (or asking about the monitor) stops the remote operation.
                let attempt = tokio::select! {
                    r = async {
                        tokio::time::sleep(wait).await;
                        reach.send(Method::GET, &monitor, None).await
                    } => Some(r),
                    _ = ctx.cancelled() => None,
                };
                let Some(attempt) = attempt else {
                    let deleted = reach.delete(&monitor).await;
                    tracing::info!(task_id = ctx.task_id(), monitor, deleted, "cancelled; asked the remote operation to stop");
                    return Outcome::Cancelled;
                };
                polls += 1;
                let attempt = match retryable(attempt) {
                    Ok(attempt) => attempt,
                    Err(end) => return end,
                };
                let resp = match attempt {
                    Ok(r) if !(r.status().is_server_error() || r.status() == StatusCode::TOO_MANY_REQUESTS) => {
                        failures = 0;
                        r
                    }
                    other => {
                        failures += 1;
                        let why = match other { Ok(r) => format!("HTTP {}", r.status()), Err(e) => e };
                        if failures > MAX_RETRIES {
                            return tool_error(format!("The status monitor {monitor} kept failing: {why}"), json!({"monitor": monitor, "error": why}));
                        }
                        ctx.status_message(format!("{monitor}: {why}; retry {failures} of {MAX_RETRIES}")).await;
                        wait = Duration::from_millis(500 << (failures - 1));
                        continue;
                    }
                };
                let status = resp.status();
                if status.is_client_error() {
                    let body = body_of(resp).await;
                    return tool_error(format!("The status monitor {monitor} answered HTTP {status}"), json!({"monitor": monitor, "httpStatus": status.as_u16(), "body": body}));
                }
                let next = retry_after(&resp, default_interval);
                if let Some(location) = resp.headers().get(header::LOCATION).and_then(|l| l.to_str().ok())
                    && status == StatusCode::ACCEPTED
                {
                    monitor = resp.url().join(location).map(|u| u.to_string()).unwrap_or(monitor);
                }
                let body = body_of(resp).await;
                let word = body_status(&body);
                let running = status == StatusCode::ACCEPTED || word.as_deref().is_some_and(|w| RUNNING.contains(&w));
                if !running {
                    return finished(&monitor, status, body);
                }
                ctx.status_message(format!("Waiting for {monitor} (status: {}, poll {polls})", word.unwrap_or_else(|| status.to_string()))).await;
                wait = next;
            }
        }
        .boxed()
    }
}

fn finished(url: &str, status: StatusCode, body: Value) -> Outcome {
    let failed = body_status(&body).is_some_and(|w| FAILED.contains(&w.as_str()));
    let how = if failed {
        "unsuccessfully".to_string()
    } else {
        format!("HTTP {}", status.as_u16())
    };
    let text = format!("{url} finished ({how}): {body}");
    Outcome::Completed(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"url": url, "httpStatus": status.as_u16(), "body": body},
        "isError": failed
    }))
}

/// Why a request got no answer.
enum Unsent {
    /// A failure worth retrying, like a 5xx: the connection failed, a name did not resolve.
    Transient(String),
    /// The run ends with this outcome: the human did not allow a destination, the task was
    /// cancelled while they were asked, or a redirect led nowhere.
    End(Outcome),
}

/// A request's result as the retry loops take it: the response or a transient failure's text,
/// or (`Err`) the outcome the run ends with.
fn retryable(
    sent: Result<reqwest::Response, Unsent>,
) -> Result<Result<reqwest::Response, String>, Outcome> {
    match sent {
        Ok(resp) => Ok(Ok(resp)),
        Err(Unsent::Transient(why)) => Ok(Err(why)),
        Err(Unsent::End(outcome)) => Err(outcome),
    }
}

/// One run's way out: its HTTP client, the names it pinned, and the private destinations the
/// human allowed during the run.
struct Reach {
    ctx: TaskContext,
    policy: Arc<HttpPolicy>,
    dests: Destinations,
    http: reqwest::Client,
    /// The agent's `headers`, sent with every request (the credentials among them only to the
    /// origin they were given for: a redirect elsewhere drops them).
    headers: Vec<(String, String)>,
    /// Private authorities (`host:port`) allowed for this run.
    allowed: HashSet<String>,
    /// Questions asked so far (each needs a key of its own).
    asked: u32,
}

/// Headers not carried across a redirect to another origin (as browsers and reqwest do).
const CREDENTIALS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

impl Reach {
    /// Errors: the HTTP client cannot be built.
    fn new(
        ctx: TaskContext,
        policy: Arc<HttpPolicy>,
        lookup: Lookup,
        headers: Vec<(String, String)>,
    ) -> reqwest::Result<Reach> {
        let dests = Destinations::new(lookup);
        let http = dests.client(
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(60)),
        )?;
        Ok(Reach {
            ctx,
            policy,
            dests,
            http,
            headers,
            allowed: HashSet::new(),
            asked: 0,
        })
    }

    /// True when `dest` may be reached without asking: it is public, or this run or the
    /// policy allowed its authority.
    fn may_reach(&self, dest: &Destination) -> bool {
        if dest.private_ip().is_none() {
            return true;
        }
        let authority = dest.authority();
        self.allowed.contains(&authority) || self.policy.allows(self.ctx.principal(), &authority)
    }

    /// Resolves `url`, makes sure its destination may be reached (asking the human about a
    /// private one: `what` says which request it is for), and pins it for the connection.
    async fn check(&mut self, url: &Url, what: &str) -> Result<(), Unsent> {
        let dest = self.dests.resolve(url).await.map_err(Unsent::Transient)?;
        if !self.may_reach(&dest) {
            self.ask(&dest, what).await?;
        }
        self.dests.pin(&dest);
        Ok(())
    }

    /// Asks the human whether this task may reach the private destination `dest`; an accept
    /// allows it for the rest of the run ("always allow": for the principal, in the policy).
    async fn ask(&mut self, dest: &Destination, what: &str) -> Result<(), Unsent> {
        let (authority, principal) = (dest.authority(), self.ctx.principal().to_string());
        let ip = dest
            .private_ip()
            .map(|ip| ip.to_string())
            .unwrap_or_default();
        self.asked += 1;
        let key = match self.asked {
            1 => ALLOW_PRIVATE_KEY.to_string(),
            n => format!("{ALLOW_PRIVATE_KEY}-{n}"),
        };
        let question = format!(
            "Allow this task to reach {authority} ({ip}, private network)?\n\n\
             {principal} asked wait_for_http_job to send {what}. The response goes back to {principal}."
        );
        let schema = json!({"type": "object", "properties": {
            "alwaysAllow": {"type": "boolean", "title": format!("Always allow {principal} to reach {authority}"), "default": false}
        }});
        let answer = self
            .ctx
            .elicit_human(&key, &question, schema)
            .await
            .map_err(|e| Unsent::End(e.into()))?;
        if answer.get("action").and_then(Value::as_str) != Some("accept") {
            return Err(Unsent::End(tool_error(
                format!(
                    "The human did not allow this task to reach {authority} ({ip}, private network): {what} was not sent."
                ),
                json!({"refused": authority, "ip": ip, "request": what}),
            )));
        }
        if answer
            .pointer("/content/alwaysAllow")
            .and_then(Value::as_bool)
            == Some(true)
            && let Err(e) = self.policy.allow(&principal, &authority)
        {
            tracing::warn!("cannot save the HTTP policy: {e}");
        }
        self.allowed.insert(authority);
        Ok(())
    }

    /// Sends `method url` with the agent's headers and JSON `body`, following redirects
    /// ([`MAX_REDIRECTS`] at most; 301/302 turn a POST, 303 anything but HEAD, into a GET
    /// without body), each hop's destination checked before it is sent.
    async fn send(
        &mut self,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<reqwest::Response, Unsent> {
        let end = |text: String| Unsent::End(tool_error(text, json!({"url": url})));
        let mut url = Url::parse(url).map_err(|e| end(format!("{url} is not a URL: {e}")))?;
        let (mut method, mut body) = (method, body.cloned());
        let mut headers = self.headers.clone();
        let mut what = format!("{method} {url}");
        for _ in 0..=MAX_REDIRECTS {
            self.check(&url, &what).await?;
            let mut req = self.http.request(method.clone(), url.clone());
            for (k, v) in &headers {
                req = req.header(k, v);
            }
            if let Some(b) = &body {
                req = req.json(b);
            }
            let resp = req
                .send()
                .await
                .map_err(|e| Unsent::Transient(e.to_string()))?;
            let status = resp.status();
            let location = resp
                .headers()
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok());
            let (true, Some(location)) = (is_redirect(status), location) else {
                return Ok(resp);
            };
            let next = url
                .join(location)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| {
                    end(format!(
                        "{url} redirected to {location:?}, which is not an HTTP URL"
                    ))
                })?;
            if status == StatusCode::SEE_OTHER && method != Method::HEAD
                || matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                    && method == Method::POST
            {
                method = Method::GET;
                body = None;
            }
            if (next.host_str(), next.port_or_known_default())
                != (url.host_str(), url.port_or_known_default())
            {
                headers.retain(|(k, _)| !CREDENTIALS.iter().any(|c| k.eq_ignore_ascii_case(c)));
            }
            what = format!("{method} {next} (where {url} redirected)");
            url = next;
        }
        Err(end(format!("{what}: more than {MAX_REDIRECTS} redirects")))
    }

    /// Sends `DELETE url` once, without asking anyone: a destination that would need the
    /// human's allowance is skipped. True when the server answered with a success.
    async fn delete(&mut self, url: &str) -> bool {
        let Ok(url) = Url::parse(url) else {
            return false;
        };
        match self.dests.resolve(&url).await {
            Ok(dest) if self.may_reach(&dest) => self.dests.pin(&dest),
            _ => return false,
        }
        self.http
            .delete(url)
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
    }
}

/// 301, 302, 303, 307 and 308: the statuses whose `Location` is followed.
fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
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

    use super::{ALLOW_PRIVATE_KEY, WaitForHttpJob};
    use crate::engine::{
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
    /// at 127.0.0.1 (what a rebinding or a hostile DNS answer would say).
    async fn engine(dir: &std::path::Path) -> Engine {
        let store = Store::open(dir, Durability::Process, ChangeFeed::new(64)).unwrap();
        let engine = Engine::new(store, EngineConfig::default());
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
        engine.register_tool(Arc::new(WaitForHttpJob::with_lookup(dir, lookup)));
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
        let engine = engine(dir.path()).await;
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
        let engine = engine(dir.path()).await;
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
}

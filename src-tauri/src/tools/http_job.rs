//! `wait_for_http_job`: start or follow a long-running HTTP operation elsewhere, the RFC 9110
//! way: a request answered `202 Accepted` with `Location` (and maybe `Retry-After`) points to a
//! status monitor, which is polled at the interval the server asks for until the operation
//! finishes; the task completes with the final representation. Transient errors (connection
//! failures, 5xx, 429) are retried with exponential backoff, at most [`MAX_RETRIES`] in a row; a
//! 4xx is a clear tool error. Cancelling the task sends `DELETE` to the monitor.

use std::time::Duration;

use futures::{FutureExt, future::BoxFuture};
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

use crate::engine::{Outcome, TaskContext, TaskTool, ToolDescriptor, ToolMode};

/// Consecutive transient failures tolerated before the task fails.
pub const MAX_RETRIES: u32 = 5;
/// Longest wait between two polls, whatever the server asks, in ms.
pub const MAX_POLL_MS: u64 = 60_000;

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
    http: reqwest::Client,
}

impl WaitForHttpJob {
    pub fn new() -> WaitForHttpJob {
        WaitForHttpJob {
            descriptor: ToolDescriptor {
                name: "wait_for_http_job".into(),
                title: Some("Wait for an HTTP long-running operation".into()),
                description: "Start an HTTP operation (POST/GET url) or follow an existing status monitor (monitor), poll it \
                    at the interval the server asks (Retry-After) until it finishes, and return its final representation. \
                    Cancelling the task sends DELETE to the monitor."
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
            http: reqwest::Client::builder().connect_timeout(Duration::from_secs(10)).timeout(Duration::from_secs(60)).build().unwrap_or_default(),
        }
    }
}

impl Default for WaitForHttpJob {
    fn default() -> Self {
        Self::new()
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
        let http = self.http.clone();
        async move {
            let default_interval = Duration::from_millis(arguments.get("pollIntervalMs").and_then(Value::as_u64).unwrap_or(1000));
            let headers: Vec<(String, String)> = arguments
                .get("headers")
                .and_then(Value::as_object)
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
                .unwrap_or_default();
            let send = |method: Method, url: String, body: Option<Value>| {
                let mut req = http.request(method, url);
                for (k, v) in &headers {
                    req = req.header(k, v);
                }
                if let Some(b) = body {
                    req = req.json(&b);
                }
                req.send()
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
                            r = send(method.clone(), url.clone(), body.clone()) => r,
                            _ = ctx.cancelled() => return Outcome::Cancelled,
                        };
                        match attempt {
                            // A POST/PATCH that reached the server is not repeated: it may have acted.
                            Ok(r) if !(r.status().is_server_error() || r.status() == StatusCode::TOO_MANY_REQUESTS)
                                || !(method == Method::GET || method == Method::PUT) => break r,
                            other => {
                                failures += 1;
                                let why = match other { Ok(r) => format!("HTTP {}", r.status()), Err(e) => e.to_string() };
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
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = ctx.cancelled() => {
                        let deleted = http.delete(&monitor).send().await.map(|r| r.status().is_success()).unwrap_or(false);
                        tracing::info!(task_id = ctx.task_id(), monitor, deleted, "cancelled; asked the remote operation to stop");
                        return Outcome::Cancelled;
                    }
                }
                polls += 1;
                let resp = match send(Method::GET, monitor.clone(), None).await {
                    Ok(r) if !(r.status().is_server_error() || r.status() == StatusCode::TOO_MANY_REQUESTS) => {
                        failures = 0;
                        r
                    }
                    other => {
                        failures += 1;
                        let why = match other { Ok(r) => format!("HTTP {}", r.status()), Err(e) => e.to_string() };
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

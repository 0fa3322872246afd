//! What a `wait_for_http_job` answer means: when to poll next (`Retry-After`, bounded by the
//! task's poll interval), whether a monitor's body says the operation is still running or
//! failed (its `status`/`state` word, or `done: false`), and the results the task ends with.

use std::time::Duration;

use reqwest::{StatusCode, Url, header};
use serde_json::{Value, json};

use super::super::http_reach::{Answer, shown};
use taskdeck_engine::Outcome;

/// Longest wait between two polls the server can ask for, in ms.
pub const MAX_POLL_MS: u64 = 60_000;

/// Status words (case-insensitive) that mean "not finished yet" in a monitor's body.
pub const RUNNING: [&str; 9] = [
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
pub const FAILED: [&str; 5] = ["failed", "error", "cancelled", "canceled", "aborted"];

/// A completed outcome with `isError: true`: `text` for the agent, `data` as structured content.
pub fn tool_error(text: String, data: Value) -> Outcome {
    Outcome::Completed(
        json!({"content": [{"type": "text", "text": text}], "structuredContent": data, "isError": true}),
    )
}

/// [`tool_error`] for a request that was not sent because a human declined it (`mark`
/// `"declined"`) or the policy denies it (`"denied"`): the result carries the
/// [`refusal`](crate::approvals::refusal) mark.
pub fn refusal(text: String, data: Value, mark: &str) -> Outcome {
    match tool_error(text, data) {
        Outcome::Completed(mut result) => {
            crate::approvals::refusal::mark(&mut result, mark);
            Outcome::Completed(result)
        }
        other => other,
    }
}

/// The wait before the next poll: what `answer` asks for ([`retry_after`]), but never less than
/// `interval` (the task's poll interval, at least [`MIN_POLL_MS`](super::MIN_POLL_MS)).
pub fn next_poll(answer: &Answer, interval: Duration) -> Duration {
    retry_after(answer, interval).max(interval)
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

/// The time from now until the HTTP date `v` (RFC 2822 form), 0 when it is past, at most
/// [`MAX_POLL_MS`]; `None` when `v` is no such date.
fn httpdate_delay(v: &str) -> Option<Duration> {
    let when = chrono::DateTime::parse_from_rfc2822(v.trim()).ok()?;
    let ms = (when.to_utc() - chrono::Utc::now())
        .num_milliseconds()
        .clamp(0, MAX_POLL_MS as i64);
    Some(Duration::from_millis(ms as u64))
}

/// The status word of a monitor body (`status`, `state` or `done: false`), lowercased.
pub fn body_status(body: &Value) -> Option<String> {
    if body.get("done") == Some(&Value::Bool(false)) {
        return Some("running".into());
    }
    ["status", "state"]
        .iter()
        .find_map(|k| body.get(*k)?.as_str())
        .map(|s| s.to_ascii_lowercase().replace([' ', '-'], ""))
}

/// The error text for an answer that is neither a success, nor a refusal, nor a server error
/// (a 1xx, a 3xx that is no redirect to follow, a status over 599): there is nothing to follow.
pub fn unexpected(label: &str, code: StatusCode) -> String {
    format!(
        "{label} answered HTTP {}, which is not an answer to follow (a 2xx, 4xx or 5xx was expected)",
        code.as_u16()
    )
}

/// The outcome of an operation that finished: `answer` to the job asked at `url` (the
/// agent's `url`, or its `monitor` when it gave one), read from the status monitor `monitor`
/// when one was polled (`None`: the first request's own answer). `answeredBy` names the URL
/// that answered (after redirects). An error when its body's status word says it failed.
pub fn finished(url: &Url, monitor: Option<&Url>, answer: &Answer) -> Outcome {
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
    let mut seen = json!({"url": shown(url), "answeredBy": shown(from), "httpStatus": status.as_u16(), "body": body});
    if let Some(monitor) = monitor.filter(|m| *m != url) {
        seen["monitor"] = json!(shown(monitor));
    }
    Outcome::Completed(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": seen,
        "isError": failed
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_become_delays() {
        let in_10s = (chrono::Utc::now() + chrono::TimeDelta::seconds(10))
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let delay = httpdate_delay(&in_10s).expect("an IMF-fixdate parses");
        assert!(
            delay > Duration::from_secs(8) && delay <= Duration::from_secs(10),
            "{delay:?}"
        );
        assert_eq!(
            httpdate_delay("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(httpdate_delay("tomorrow"), None);
    }
}

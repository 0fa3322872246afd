//! One request of a `wait_for_http_job` run, tried again on transient failures: nothing
//! answered, a body cut short, 5xx, 429, with exponential backoff, at most [`MAX_RETRIES`] in a
//! row, and never again for a request that may have had effects (a POST or PATCH the server may
//! have received).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{
    super::http_reach::{Answer, Failure, Reach, Target, shown},
    answer::tool_error,
    status::Status,
};
use taskdeck_engine::Outcome;

/// Consecutive transient failures tolerated before the task fails.
pub const MAX_RETRIES: u32 = 5;

/// Why tries of a request ended without an answer to keep.
pub enum Stop {
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
pub async fn exchange(
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

//! The first step of a `wait_for_http_job` run given a `url`: send the starting request and read
//! where its answer points (RFC 9110 §15.3.3: `202 Accepted` with `Location`, the status
//! monitor). Any other success is the operation's final answer; a starting request is never
//! sent twice once it may have had effects ([`exchange`]).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use taskdeck_engine::Outcome;

use super::{
    super::http_reach::{Reach, Target, shown},
    answer::{finished, next_poll, tool_error, unexpected},
    exchange::{Stop, exchange},
    status::Status,
};

/// How the starting request went.
pub enum Start {
    /// The operation runs: poll `monitor`, first after `wait`.
    Follow { monitor: Target, wait: Duration },
    /// The run ends with this outcome: the operation finished at once, was refused, failed, or
    /// the task was cancelled.
    End(Outcome),
}

/// Sends `method first` (with JSON `body`) and reads the answer: a `202 Accepted` with a
/// `Location` to follow gives the monitor (polled after what `Retry-After` asks, at least
/// `interval`); another 2xx finishes the task with its body; a 4xx, 5xx (not retried: the
/// request may have had effects), other status, or a 202 with no usable `Location` is a tool
/// error. A cancel before the answer records in the status whether the request was in flight.
pub async fn start(
    status: &mut Status,
    reach: &mut Reach,
    first: &Target,
    method: Method,
    body: Option<&Value>,
    interval: Duration,
) -> Start {
    let url = &first.url;
    let label = format!("{method} {}", shown(url));
    status.set(format!("Starting {label}")).await;
    let answer = match exchange(status, reach, &method, first, body, Duration::ZERO, &label).await {
        Ok(answer) => answer,
        Err(Stop::Cancelled) => {
            // No monitor yet: say whether the remote side may have the request.
            let note = match reach.in_flight() {
                Some(request) => {
                    format!("Cancelled while {request} was in flight; no monitor to DELETE")
                }
                None => format!(
                    "Cancelled before {label} was answered; nothing was in flight, no monitor to DELETE"
                ),
            };
            tracing::info!(task_id = status.ctx.task_id(), "{note}");
            status.set(note).await;
            return Start::End(Outcome::Cancelled);
        }
        Err(Stop::End(outcome)) => return Start::End(outcome),
    };
    let code = answer.status;
    let seen = json!({"url": shown(url), "answeredBy": shown(&answer.from.url), "httpStatus": code.as_u16(), "body": answer.json()});
    let error = |text: String| Start::End(tool_error(text, seen.clone()));
    if code.is_server_error() {
        return error(format!(
            "{label} failed: HTTP {code} (not retried: the request may have had effects)"
        ));
    }
    if code.is_client_error() {
        return error(format!("{label} was refused: HTTP {code}"));
    }
    if !code.is_success() {
        return error(unexpected(&label, code));
    }
    if code != StatusCode::ACCEPTED {
        return Start::End(finished(url, None, &answer));
    }
    let from = shown(&answer.from.url);
    match answer.location() {
        Some(Ok(monitor)) => Start::Follow {
            monitor,
            wait: next_poll(&answer, interval),
        },
        Some(Err(location)) => error(format!(
            "{from} answered 202 Accepted with Location {location}"
        )),
        None => error(format!(
            "{from} answered 202 Accepted without a Location to follow"
        )),
    }
}

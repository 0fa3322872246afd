//! The polling loop of a `wait_for_http_job` run: GET the status monitor at the interval the
//! server asks for (following a new `Location` a `202` gives), until its answer says the
//! operation finished. A cancel while waiting or polling sends `DELETE` to the monitor and
//! records how that went.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;
use taskdeck_engine::Outcome;

use super::{
    super::http_reach::{Reach, Target, shown},
    answer::{RUNNING, body_status, finished, next_poll, tool_error, unexpected},
    exchange::{Stop, exchange},
    status::Status,
};

/// Polls `monitor`, first after `wait`, then after what each answer asks (at least `interval`),
/// until an answer says the operation is no longer running: not a `202` and no running status
/// word ([`RUNNING`]) in its body. Returns the task's outcome: the final answer
/// ([`finished`], for the job first asked at `asked`), a tool error for a 4xx or an answer
/// there is nothing to follow in, or `Cancelled` (after the `DELETE`).
pub async fn follow(
    status: &mut Status,
    reach: &mut Reach,
    asked: &reqwest::Url,
    mut monitor: Target,
    mut wait: Duration,
    interval: Duration,
) -> Outcome {
    loop {
        let label = format!("The status monitor {}", shown(&monitor.url));
        let answer = match exchange(status, reach, &Method::GET, &monitor, None, wait, &label).await
        {
            Ok(answer) => answer,
            Err(Stop::Cancelled) => {
                let deleted = reach.delete(&monitor).await;
                let note = format!("Cancelled; DELETE {} {deleted}", shown(&monitor.url));
                tracing::info!(task_id = status.ctx.task_id(), "{note}");
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
        if code == StatusCode::ACCEPTED
            && let Some(location) = answer.location()
        {
            monitor = match location {
                Ok(next) => next,
                Err(location) => {
                    return tool_error(
                        format!("{label} answered 202 Accepted with Location {location}"),
                        seen(),
                    );
                }
            };
        }
        let body = answer.json();
        let word = body_status(&body);
        let running =
            code == StatusCode::ACCEPTED || word.as_deref().is_some_and(|w| RUNNING.contains(&w));
        if !running {
            return finished(asked, Some(&monitor.url), &answer);
        }
        // The same words as the last poll's write nothing: no event per poll.
        status
            .set(format!(
                "Waiting for {} (status: {})",
                shown(&monitor.url),
                word.unwrap_or_else(|| code.to_string())
            ))
            .await;
    }
}

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
//! Taskdeck sends nothing on an agent's word alone: the call comes under the policy
//! ([`crate::policy`]; by default the human is asked before the first request, key `approve`),
//! and every request goes through [`Reach`], which resolves and checks each destination first
//! (a private one, or one of this machine's own addresses, only with a rule naming its host or
//! the human's allowance: [`super::http_permission`]), connects to the addresses it checked,
//! and sends the agent's credentials only to the agent's origin.

mod answer;
mod arguments;
mod exchange;
#[cfg(test)]
mod policy_tests;
mod poll;
mod start;
mod status;
#[cfg(test)]
mod test_service;
#[cfg(test)]
mod tests;

use std::{sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use reqwest::Url;
use serde_json::{Value, json};

use super::{
    arguments::{input_schema, parse, parse_for_run},
    destination::{Lookup, system_lookup},
    http_permission::{Permission, policed_arguments},
    http_reach::{REQUEST_TIMEOUT, Reach, Target},
};
use crate::policy::{Decision, Policy, PolicyCall, TASKDECK_SERVER, ToolHints};
use status::Status;
use taskdeck_engine::{Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode};

pub use answer::{MAX_POLL_MS, refusal, tool_error};
pub use arguments::{StartMethod, WaitForHttpJobArguments};
pub use exchange::MAX_RETRIES;

/// The tool's name.
const NAME: &str = "wait_for_http_job";
/// Shortest wait between two requests of a run's polling (after the starting request too), in
/// ms, whatever the server asks (`Retry-After: 0`, a date in the past) or the agent gives as
/// `pollIntervalMs`: a server cannot make Taskdeck poll it in a tight loop.
pub const MIN_POLL_MS: u64 = 1000;
/// The key of the first question about a private destination (later ones add `-2`, `-3`, ...).
pub const ALLOW_PRIVATE_KEY: &str = "allow-private-network";
/// The key of the approval of the call, asked before its first request when the policy says
/// `ask` (the default).
pub const APPROVE_KEY: &str = "approve";

/// The `wait_for_http_job` tool.
pub struct WaitForHttpJob {
    descriptor: ToolDescriptor,
    policy: Arc<Policy>,
    lookup: Lookup,
    /// How long one request may take: [`REQUEST_TIMEOUT`] (shorter in tests).
    request_timeout: Duration,
}

impl WaitForHttpJob {
    /// The tool, asking `policy` (server `taskdeck`, tool `wait_for_http_job`, arguments
    /// as [`policed_arguments`] gives them).
    pub fn new(policy: Arc<Policy>) -> WaitForHttpJob {
        WaitForHttpJob::with_lookup(policy, system_lookup())
    }

    /// Like [`WaitForHttpJob::new`], resolving host names with `lookup` (a test gives names
    /// the addresses it wants).
    pub fn with_lookup(policy: Arc<Policy>, lookup: Lookup) -> WaitForHttpJob {
        WaitForHttpJob {
            descriptor: ToolDescriptor {
                name: NAME.into(),
                title: Some("Wait for an HTTP long-running operation".into()),
                description: "Start an HTTP operation (POST/GET url) or follow an existing status monitor (monitor), poll it \
                    at the interval the server asks (Retry-After) until it finishes, and return its final representation. \
                    Cancelling the task sends DELETE to the monitor. The human approves the request first unless their \
                    policy allows it for you; a destination on a private network (loopback, LAN, link-local) or on this \
                    machine needs a policy rule naming its host, or the human's allowance. Responses over 1 MiB \
                    fail the task."
                    .into(),
                input_schema: input_schema::<WaitForHttpJobArguments>(),
                mode: ToolMode::Task { required: false },
                resumable: false,
                agent_callable: true,
            },
            policy,
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

impl TaskTool for WaitForHttpJob {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// `headers` values (and `body` members) whose names say they are credentials are kept and
    /// shown as `[redacted]`, and the password of a URL (`url`, `monitor`, one in `body`) as
    /// `****` (`http://bob:****@host/`): [`super::secrets::redact_value`].
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        super::secrets::redact_value(arguments)
    }

    /// The checks of [`WaitForHttpJobArguments::check`].
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        parse::<WaitForHttpJobArguments>(NAME, arguments)?.check()
    }

    /// Its approval still open when the process ended is recorded as abandoned.
    fn abandoned_decisions(
        &self,
        task: &taskdeck_engine::TaskRecord,
    ) -> Vec<taskdeck_engine::DecisionRecord> {
        crate::approvals::record::abandoned_at_restart(task, false)
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let (policy, lookup, timeout) = (
            self.policy.clone(),
            self.lookup.clone(),
            self.request_timeout,
        );
        async move {
            let given = arguments.clone();
            let arguments: WaitForHttpJobArguments = match parse_for_run(NAME, arguments) {
                Ok(a) => a,
                Err(outcome) => return outcome,
            };
            let interval = arguments.poll_interval();
            // The agent's credentials are for the origin of the URL it gave.
            let first = match Url::parse(arguments.first_url()) {
                Ok(url) => Target {
                    url,
                    credentials: true,
                },
                Err(e) => {
                    return tool_error(
                        format!("the URL given is not a URL: {e}"),
                        json!({"error": e.to_string()}),
                    );
                }
            };
            let policed = policed_arguments(&given, &first.url);
            let headers = arguments.header_pairs();
            let verdict = policy.decide(&PolicyCall {
                principal: ctx.principal(),
                server: TASKDECK_SERVER,
                tool: NAME,
                arguments: &policed,
                hints: ToolHints::default(),
            });
            if verdict.decision != Decision::Ask {
                crate::approvals::record::record_verdict(
                    &ctx,
                    TASKDECK_SERVER,
                    NAME,
                    &super::http_permission::shown_arguments(&policed, &first.url, &headers),
                    &verdict,
                )
                .await;
            }
            if verdict.decision == Decision::Deny {
                return refusal(
                    format!(
                        "Nothing was sent: the policy denies this request ({}).",
                        verdict.reason
                    ),
                    json!({"denied": true, "policy": verdict.reason}),
                    "denied",
                );
            }
            let permission = Permission::new(
                ctx.clone(),
                policy,
                policed,
                headers.clone(),
                verdict.decision == Decision::Allow,
            );
            let mut reach = match Reach::new(permission, lookup, headers, timeout) {
                Ok(r) => r,
                Err(e) => {
                    return Outcome::Failed(TaskFailure::tool(
                        format!("cannot set up the HTTP client: {e}"),
                        None,
                    ));
                }
            };
            let mut status = Status::new(ctx);
            // 1. Start the operation (or take the monitor as given).
            let asked = first.url.clone();
            let (monitor, wait) = if arguments.monitor.is_some() {
                (first, Duration::ZERO)
            } else {
                let method = arguments.start_method();
                let body = arguments.body.as_ref();
                match start::start(&mut status, &mut reach, &first, method, body, interval).await {
                    start::Start::Follow { monitor, wait } => (monitor, wait),
                    start::Start::End(outcome) => return outcome,
                }
            };
            // 2. Poll the monitor until the operation finishes.
            poll::follow(&mut status, &mut reach, &asked, monitor, wait, interval).await
        }
        .boxed()
    }
}

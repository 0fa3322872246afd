//! One upstream tool as a Taskdeck task tool (`NAME__TOOL`): every call is a task. The run
//! asks the policy first; `deny` ends it with a tool error the agent can act on, `ask` waits
//! for the human (a human-only input request showing the server, tool, principal and exact
//! arguments; "always allow" writes a narrow rule); then the call goes to the upstream, its
//! progress and log messages land in the task's timeline, and the upstream's `CallToolResult`
//! is the task's result; an upstream that answers with its own task is followed
//! (`upstream_task.rs`). A cancel, or a call unanswered past its timeout, sends the upstream
//! `notifications/cancelled`; a transport failure makes the supervisor connect again, and a
//! call whose connection was refused (it did not run) waits for that and is sent again. An
//! approved call goes to the server as servers.json has it then (changed while the call waited,
//! it is a new connection; removed, the call fails unsent).
//!
//! Credentials in the arguments (secret-named members, passwords in URLs) are stored and shown
//! redacted; the call upstream gets them as given.
//!
//! After a restart, a call whose approval was still pending is asked again; one that had been
//! sent upstream (approved, or allowed without asking) fails with `reason: restart`, since it
//! may have run, and so does one whose credentials were never stored.

use std::{
    sync::{Arc, Weak},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
        ServerResult, Tool,
    },
    service::PeerRequestOptions,
};
use serde_json::{Value, json};

use super::{approval, upstream::Upstream, upstream_error, upstream_task};
use taskdeck_engine::{
    FailureKind, Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode,
};

/// A call still unanswered after this long gets a status message saying so.
const SAY_WHERE_AFTER: Duration = Duration::from_millis(250);

/// Key of the approval input request.
pub const APPROVAL_KEY: &str = "approve";

/// What a gateway call needs from the process: the policy, and how long to wait.
pub struct CallSettings {
    /// The approval policy: whether a call is allowed, asks the human first, or is denied.
    pub policy: Arc<crate::policy::Policy>,
    /// How long a call waits for a (re)connecting upstream before failing.
    pub connect_wait: Duration,
    /// How long an upstream may take to answer one call.
    pub call_timeout: Duration,
    /// Where the calls' output logs go (`<data dir>/logs`): an upstream's log messages
    /// ([`super::call_log`]); none, none kept.
    pub log_dir: Option<std::path::PathBuf>,
}

/// The task tool for upstream tool `tool` of server `upstream`.
pub struct GatewayCall {
    descriptor: ToolDescriptor,
    upstream: Arc<Upstream>,
    /// The gateway, to find the server as configured when the call is sent: servers.json may
    /// have changed (the server restarted as another [`Upstream`]) or dropped it while the
    /// call waited for its approval.
    gateway: Weak<super::GatewayState>,
    tool: Tool,
    settings: Arc<CallSettings>,
}

impl GatewayCall {
    /// `registered_name` is `SERVER__TOOL`; `settle_ms` as in [`ToolMode::Settle`].
    pub(super) fn new(
        registered_name: String,
        (upstream, gateway): (Arc<Upstream>, Weak<super::GatewayState>),
        tool: Tool,
        settings: Arc<CallSettings>,
        settle_ms: u64,
    ) -> GatewayCall {
        let descriptor = ToolDescriptor {
            name: registered_name,
            title: tool.title.clone(),
            description: tool.description.clone().unwrap_or_default().into_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            mode: ToolMode::Settle {
                within_ms: settle_ms,
            },
            resumable: true,
            agent_callable: true,
        };
        GatewayCall {
            descriptor,
            upstream,
            gateway,
            tool,
            settings,
        }
    }
}

impl TaskTool for GatewayCall {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// Secret-named members and URL passwords, at any depth: [`crate::tools::secrets::redact_value`].
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        crate::tools::secrets::redact_value(arguments)
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let upstream = self.upstream.clone();
        let gateway = self.gateway.clone();
        let tool = self.tool.clone();
        let settings = self.settings.clone();
        // Resumed from the store, where credentials were never kept: calling with their
        // stand-ins would send `[redacted]` upstream.
        let lost_credentials = ctx.is_resumed() && crate::tools::secrets::holds_masks(&arguments);
        async move {
            let server = upstream.name.clone();
            let ended_by_restart = if !ctx.is_resumed() {
                None
            } else if sent_before_restart(&ctx) {
                Some(("while", "was running upstream; it may have run"))
            } else if lost_credentials {
                Some((
                    "before",
                    "was called; its arguments held credentials, which are never stored: call it again",
                ))
            } else {
                None
            };
            if let Some((when, why)) = ended_by_restart {
                return Outcome::Failed(TaskFailure::new(
                    FailureKind::Restart,
                    format!("Taskdeck restarted {when} {server}'s {} {why}", tool.name),
                    Some(json!({"server": server, "tool": tool.name})),
                ));
            }
            let (arguments, edited) =
                match approval::obtain(&ctx, &settings.policy, &server, &tool, &arguments).await {
                    Ok(obtained) => obtained,
                    Err(outcome) => return outcome,
                };
            let called_with = edited.then(|| arguments.clone());
            // The server as configured now: changed in servers.json while the call waited, it
            // runs as a new connection; removed, the call is not sent.
            let upstream = match gateway.upgrade() {
                Some(g) => match configured_now(&ctx, &g, &server, &tool.name, &settings).await {
                    Ok(now) => now,
                    Err(outcome) => return outcome,
                },
                None => upstream,
            };
            let outcome = match call_upstream(&ctx, &upstream, &tool, arguments, &settings).await
            {
                Outcome::Completed(mut result) => {
                    // Only Taskdeck says a call was refused; the upstream's answer ran.
                    crate::approvals::refusal::unmark(&mut result);
                    let result = super::passthrough::withhold_denied_resources(
                        &settings.policy,
                        ctx.principal(),
                        &server,
                        result,
                    );
                    Outcome::Completed(
                        crate::tools::secrets::mask_taskdeck_tokens(&result).unwrap_or(result),
                    )
                }
                other => other,
            };
            let outcome = match &called_with {
                Some(args) => approval::tell_edited(outcome, args),
                None => outcome,
            };
            scrubbed(outcome, &upstream)
        }
        .boxed()
    }
}

/// How often an approved call whose servers.json cannot be read looks at it again.
const MEND_POLL: Duration = Duration::from_millis(500);

/// How long an approved call waits for the server a mended servers.json names to be started.
const RELOAD_WAIT: Duration = Duration::from_secs(5);

/// Server `server` as servers.json has it now, for an approved call of its `tool`. While the
/// file cannot be read (a typo; the servers keep running as they were, but one the file could
/// not name at Taskdeck's start has no connection), the call waits for it to be mended, its
/// status message saying so, up to the server's call timeout, then goes out as the mended file
/// has it. Errors (the outcome that ends the call, unsent): the server is disabled or removed,
/// the file stayed broken, or the call was cancelled meanwhile.
async fn configured_now(
    ctx: &TaskContext,
    g: &super::GatewayState,
    server: &str,
    tool: &str,
    settings: &CallSettings,
) -> Result<Arc<Upstream>, Outcome> {
    let deadline = tokio::time::Instant::now() + settings.call_timeout;
    let mut said = false;
    // Since when the readable file has named the server without a connection for it.
    let mut named_since: Option<tokio::time::Instant> = None;
    loop {
        let now = g.upstreams.lock().unwrap().get(server).cloned();
        match now {
            Some(now) if now.spec.disabled => {
                return Err(failed(format!(
                    "upstream {server} is disabled in servers.json; {tool} was not sent"
                )));
            }
            Some(now) => return Ok(now),
            None => {}
        }
        let problem = match super::ServersConfig::load(&g.servers_path) {
            // Named there: mended a moment ago, and the reload is on its way (a few seconds at
            // most; an entry the reload refuses never comes).
            Ok(c) if c.servers.contains_key(server) => {
                let since = *named_since.get_or_insert_with(tokio::time::Instant::now);
                if since.elapsed() > RELOAD_WAIT {
                    return Err(failed(format!(
                        "upstream {server} is named in servers.json but not running (see \
                         taskdeck servers list); {tool} was not sent"
                    )));
                }
                None
            }
            Ok(_) => {
                return Err(failed(format!(
                    "upstream {server} is not configured (it was removed from servers.json); \
                     {tool} was not sent"
                )));
            }
            Err(e) => Some(e.to_string()),
        };
        if tokio::time::Instant::now() >= deadline {
            let why = problem.unwrap_or_else(|| "its connection did not come back".into());
            return Err(failed(format!(
                "upstream {server} is not configured ({why}); {tool} was not sent"
            )));
        }
        if let (false, Some(why)) = (said, &problem) {
            ctx.status_message(format!(
                "Approved, not sent yet: {why}. Fix servers.json and the call goes to {server}"
            ))
            .await;
            said = true;
        }
        tokio::select! {
            _ = ctx.cancelled() => return Err(Outcome::Cancelled),
            _ = tokio::time::sleep(MEND_POLL) => {}
        }
    }
}

/// `outcome` with the upstream's secrets taken out of a failure's message and data (an error
/// from the transport may quote the URL whole), and Taskdeck's own tokens (an upstream's error
/// may quote what it read).
fn scrubbed(outcome: Outcome, upstream: &Upstream) -> Outcome {
    let masked = |v: Value| crate::tools::secrets::mask_taskdeck_tokens(&v).unwrap_or(v);
    match outcome {
        Outcome::Failed(mut f) => {
            f.message = upstream.scrub(&f.message);
            if let Value::String(m) = masked(Value::String(f.message.clone())) {
                f.message = m;
            }
            f.data = f.data.map(|d| {
                masked(serde_json::from_str(&upstream.scrub(&d.to_string())).unwrap_or(Value::Null))
            });
            Outcome::Failed(f)
        }
        other => other,
    }
}

/// True when the call had gone (or was about to go) upstream before the restart: no question
/// of its approval is open (it was approved, or it never asked).
fn sent_before_restart(ctx: &TaskContext) -> bool {
    // Its questions: `approve`, then `approve#2`, ... (another human's turn, a refused edit).
    let of_approval = |key: &str| {
        key == APPROVAL_KEY
            || key
                .strip_prefix(APPROVAL_KEY)
                .is_some_and(|r| r.starts_with('#'))
    };
    match ctx.input_rounds() {
        // One still open: the approval was not through, so nothing was sent.
        Ok(rounds) => !rounds
            .iter()
            .any(|r| of_approval(&r.key) && r.state == "outstanding"),
        Err(_) => true,
    }
}

async fn call_upstream(
    ctx: &TaskContext,
    upstream: &Arc<Upstream>,
    tool: &Tool,
    arguments: Value,
    settings: &CallSettings,
) -> Outcome {
    let server = &upstream.name;
    let called = tokio::time::Instant::now();
    let connection = match upstream.connected(Duration::ZERO).await {
        Some(c) => Some(c),
        None => {
            // Restarting, or failed: say so while the call waits for it.
            ctx.status_message(format!("Waiting for {server} to connect"))
                .await;
            tokio::select! {
                c = upstream.connected(settings.connect_wait) => c,
                _ = ctx.cancelled() => return Outcome::Cancelled,
            }
        }
    };
    let Some(connection) = connection else {
        let status = upstream.status();
        let why = status.last_error.unwrap_or_else(|| "not connected".into());
        return failed(format!(
            "upstream {server} is not available ({}: {why}); the call was not sent",
            serde_json::to_value(status.state)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("unknown")
        ));
    };
    let mut connection = connection;
    // Held until the call ends: it maps the request's progress token to this task.
    let mut _in_flight = None;
    let answer = loop {
        // A cancel that came while the call was approved or connected: nothing is sent (a
        // cancelled task must mean the call never reached the server, or was cancelled there).
        if ctx.is_cancelled() {
            return Outcome::Cancelled;
        }
        let mut params = CallToolRequestParams::new(tool.name.to_string());
        params.arguments = arguments.as_object().cloned();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // rmcp gives the request its own progress token: the in-flight record maps it to this
        // task.
        let handle = match connection
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => {
                return failed(format!(
                    "cannot send {} to upstream {server}: {}",
                    tool.name,
                    upstream_error::of_request(&e)
                ));
            }
        };
        // A call sent again drops its first record before it makes its next: both are the same
        // task's, and the first one's guard would take the second with it.
        drop(_in_flight.take());
        _in_flight = Some(upstream.in_flight.enter(
            ctx,
            &handle.progress_token,
            settings.log_dir.as_deref(),
        ));
        let answer = match answer_to(ctx, handle, server, &tool.name, settings).await {
            Ok(answer) => answer,
            Err(outcome) => return outcome,
        };
        let left = settings.connect_wait.saturating_sub(called.elapsed());
        match &answer {
            // Nothing took the connection, so the call did not run: a server being restarted
            // (or gone since its last call) is waited for as one known to be down is (within
            // the same `connect_wait` from the call's start), then called again.
            Err(e)
                if upstream_error::never_reached(e) && !upstream.stopped() && !left.is_zero() =>
            {
                upstream.lost(&connection, failure(upstream, &tool.name, e));
                ctx.status_message(format!("Waiting for {server} to connect"))
                    .await;
                let anew = tokio::select! {
                    c = upstream.connected_anew(Some(&connection), left) => c,
                    _ = ctx.cancelled() => return Outcome::Cancelled,
                };
                match anew {
                    Some(c) => connection = c,
                    None => break answer,
                }
            }
            _ => break answer,
        }
    };
    let legacy = connection.protocol_version.as_str() < "2026";
    match answer {
        Ok(ServerResult::CallToolResult(result))
            if legacy && upstream_task::is_task_required_result(&result) =>
        {
            upstream_task::follow(ctx, &connection.peer, server, &tool.name, &arguments)
                .await
                .into_outcome(server, &tool.name)
        }
        Ok(ServerResult::CallToolResult(result)) => {
            let mut value = serde_json::to_value(result).unwrap_or_else(|_| json!({}));
            if let Some(obj) = value.as_object_mut() {
                obj.remove("resultType");
            }
            Outcome::Completed(value)
        }
        Ok(ServerResult::CreateTaskResult(created)) => {
            let created = serde_json::to_value(created).unwrap_or_default();
            upstream_task::follow_modern(ctx, &connection.peer, server, &tool.name, created)
                .await
                .into_outcome(server, &tool.name)
        }
        Ok(other) => failed(format!(
            "upstream {server} answered {} with a result Taskdeck cannot follow: {other:?}",
            tool.name
        )),
        Err(rmcp::ServiceError::McpError(e))
            if legacy && upstream_task::is_task_required_error(&e) =>
        {
            upstream_task::follow(ctx, &connection.peer, server, &tool.name, &arguments)
                .await
                .into_outcome(server, &tool.name)
        }
        Err(rmcp::ServiceError::McpError(e)) => refused_by_upstream(server, &tool.name, e),
        Err(e) => {
            let why = failure(upstream, &tool.name, &e);
            upstream.lost(&connection, why.clone());
            failed(why)
        }
    }
}

/// Why a call of `tool` failed when its request to `upstream` failed with `e`, a transport
/// error: whether it may have run, and the cause.
fn failure(upstream: &Upstream, tool: &str, e: &rmcp::ServiceError) -> String {
    let server = &upstream.name;
    let cause = upstream_error::of_request(e);
    if upstream.stopped() {
        format!(
            "upstream {server} was stopped during {tool} (removed or changed in servers.json, \
             or Taskdeck is stopping); it may have run"
        )
    } else if upstream_error::never_reached(e) {
        format!("upstream {server} could not be reached for {tool} ({cause}); it did not run")
    } else {
        format!("upstream {server} failed during {tool} ({cause}); it may have run")
    }
}

/// The time, since `since_ms` (ms since the Unix epoch), the task's questions from the
/// upstream (its elicitations) waited for an answer, and whether one waits now.
fn time_asking(ctx: &TaskContext, since_ms: i64) -> (Duration, bool) {
    let now = taskdeck_engine::clock::now_ms();
    let rounds = ctx.input_rounds().unwrap_or_default();
    let asked = rounds.iter().filter(|r| r.created_at_ms >= since_ms);
    let waited: i64 = asked
        .clone()
        .map(|r| {
            r.answered_at_ms
                .unwrap_or(now)
                .saturating_sub(r.created_at_ms)
                .max(0)
        })
        .sum();
    let asking = asked.clone().any(|r| r.state == "outstanding");
    (Duration::from_millis(waited as u64), asking)
}

/// The answer to the request `handle` stands for, or the call's end when it was cancelled or
/// timed out (the upstream is sent `notifications/cancelled`). The timeout counts the
/// upstream's time only: while one of its questions waits for the human or the agent, its
/// clock stands still. A call unanswered after [`SAY_WHERE_AFTER`] gets a status message
/// saying so.
async fn answer_to(
    ctx: &TaskContext,
    handle: rmcp::service::RequestHandle<rmcp::RoleClient>,
    server: &str,
    tool: &str,
    settings: &CallSettings,
) -> Result<Result<ServerResult, rmcp::ServiceError>, Outcome> {
    let (peer, id) = (handle.peer.clone(), handle.id.clone());
    let cancel = |reason: &str| {
        let notice = CancelledNotificationParam::new(Some(id.clone()), Some(reason.to_string()));
        let peer = peer.clone();
        // Best effort: the upstream may already be gone.
        tokio::spawn(async move { peer.notify_cancelled(notice).await });
    };
    let response = handle.await_response();
    tokio::pin!(response);
    let (started, started_ms) = (
        tokio::time::Instant::now(),
        taskdeck_engine::clock::now_ms(),
    );
    let deadline = tokio::time::sleep(settings.call_timeout);
    tokio::pin!(deadline);
    // A quick call's timeline is its creation and its end; one that takes a while says where
    // it is (one store write fewer for every quick call).
    let mut said_where = false;
    loop {
        tokio::select! {
            a = &mut response => return Ok(a),
            _ = ctx.cancelled() => {
                cancel("cancelled in Taskdeck");
                return Err(Outcome::Cancelled);
            }
            _ = &mut deadline => {
                let (asking_for, asking) = time_asking(ctx, started_ms);
                let its_time = started.elapsed().saturating_sub(asking_for);
                if asking || its_time < settings.call_timeout {
                    // Waiting for an answer: look again in a second (or once its time is up).
                    let left = settings.call_timeout.saturating_sub(its_time);
                    let next = if asking { Duration::from_secs(1) } else { left };
                    deadline.as_mut().reset(tokio::time::Instant::now() + next);
                    continue;
                }
                cancel("timed out in Taskdeck");
                return Err(failed(format!(
                    "upstream {server} did not answer {tool} within {} ms (not counting the time its questions waited for an answer); the call was abandoned (it may have run)",
                    settings.call_timeout.as_millis()
                )));
            }
            _ = tokio::time::sleep(SAY_WHERE_AFTER), if !said_where => {
                said_where = true;
                // Not while the upstream waits for the human (its elicitation says so).
                let asking = ctx
                    .input_rounds()
                    .is_ok_and(|rounds| rounds.iter().any(|r| r.state == "outstanding"));
                if !asking {
                    ctx.status_message(format!("Waiting for {server} to answer {tool}"))
                        .await;
                }
            }
        }
    }
}

/// The task's failure when upstream `server` answered a call of `tool` with JSON-RPC error
/// `e`: the upstream's code and message, and `data.upstreamError`. Worded as an answer, not a
/// refusal: the tool may have run before it failed.
pub(super) fn refused_by_upstream(server: &str, tool: &str, e: rmcp::ErrorData) -> Outcome {
    Outcome::Failed(TaskFailure::new(
        FailureKind::Reported {
            code: i64::from(e.code.0),
        },
        format!(
            "upstream {server} answered {tool} with an error: {}",
            e.message
        ),
        Some(json!({"server": server, "upstreamError": e})),
    ))
}

/// A failure of the gateway's own making (not connected, timed out, disconnected).
pub(super) fn failed(message: String) -> Outcome {
    Outcome::Failed(TaskFailure::new(FailureKind::Tool, message, None))
}

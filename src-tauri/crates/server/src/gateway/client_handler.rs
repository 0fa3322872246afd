//! What Taskdeck is to an upstream server: an MCP client (rmcp [`ClientHandler`]) that declares
//! form and URL elicitation, and routes what the server sends during a call to that call's
//! task: `notifications/progress` (matched by the progress token of the call's request) become
//! the task's progress, `notifications/message` lines of its output log and its status
//! messages (progress and status messages at most every 250 ms: [`CallLog`]), and
//! `elicitation/create` an input request of the task (answered in the window, or by the agent
//! when it can; SEP-2663 §Input Requests). `notifications/tools/list_changed` makes the supervisor list the tools
//! again.
//!
//! Stdio carries no link from a server's request to the call it belongs to; an elicitation or
//! a log message is given to the call the server was sent last among those still running
//! (with one call at a time, the only one), when all of them are the same principal's. While
//! calls of several principals run on one server, such a message belongs to no task (a log
//! message goes to Taskdeck's own log, a question is declined): it is never given to another
//! principal's call.

use std::{
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

#[allow(deprecated)] // LoggingMessageNotificationParam: see on_logging_message
use rmcp::{
    ClientHandler, ErrorData as McpError,
    model::{
        ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
        Implementation, LoggingMessageNotificationParam, NumberOrString, ProgressNotificationParam,
        ProgressToken,
    },
    service::{NotificationContext, RequestContext, RoleClient},
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::call_log::CallLog;
use taskdeck_engine::TaskContext;

/// The calls under way on one upstream, oldest first.
#[derive(Default)]
pub struct InFlight {
    calls: Mutex<Vec<Call>>,
    /// The calls that ended in the last [`LATE_LOG`], oldest first, with when: a log message
    /// the server sent just before its answer can be handled after it (rmcp handles each
    /// notification in a task of its own), and still goes to its call's log.
    ended: Mutex<Vec<(std::time::Instant, Arc<CallLog>)>>,
    elicitations: AtomicU64,
}

/// How long after its call ended a log message still goes to that call's log.
const LATE_LOG: std::time::Duration = std::time::Duration::from_secs(2);

/// One call under way: its task's reports, and the progress token its request carries.
struct Call {
    log: Arc<CallLog>,
    progress_token: String,
}

/// Removes its call from [`InFlight`] when dropped.
pub struct InFlightGuard {
    in_flight: Arc<InFlight>,
    task_id: String,
}

impl InFlight {
    /// Registers the call of task `ctx`, whose request carries `progress_token`, until the
    /// guard is dropped; its log messages go to its output log under `log_dir`.
    pub fn enter(
        self: &Arc<Self>,
        ctx: &TaskContext,
        progress_token: &ProgressToken,
        log_dir: Option<&Path>,
    ) -> InFlightGuard {
        self.calls.lock().unwrap().push(Call {
            log: CallLog::new(ctx, log_dir),
            progress_token: token_text(&progress_token.0),
        });
        InFlightGuard {
            in_flight: self.clone(),
            task_id: ctx.task_id().to_string(),
        }
    }

    fn by_token(&self, token: &str) -> Option<Arc<CallLog>> {
        let calls = self.calls.lock().unwrap();
        calls
            .iter()
            .find(|c| c.progress_token == token)
            .map(|c| c.log.clone())
    }

    /// The call a question without a link to its request belongs to: the newest in flight,
    /// when every call in flight is the same principal's (it is theirs whichever call it came
    /// from); none while calls of several principals are in flight, as one principal's
    /// upstream output must never reach another's task.
    fn latest(&self) -> Option<Arc<CallLog>> {
        let calls = self.calls.lock().unwrap();
        let logs: Vec<&Arc<CallLog>> = calls.iter().map(|c| &c.log).collect();
        one_principals(&logs)
    }

    /// The call a log message belongs to: as [`Self::latest`], the calls that ended in the
    /// last [`LATE_LOG`] counted too (after those in flight).
    fn latest_for_log(&self) -> Option<Arc<CallLog>> {
        let mut ended = self.ended.lock().unwrap();
        ended.retain(|(at, _)| at.elapsed() < LATE_LOG);
        let calls = self.calls.lock().unwrap();
        let logs: Vec<&Arc<CallLog>> = ended
            .iter()
            .map(|(_, log)| log)
            .chain(calls.iter().map(|c| &c.log))
            .collect();
        one_principals(&logs)
    }
}

/// The last of `logs` when all are one principal's calls; none when they are several's.
fn one_principals(logs: &[&Arc<CallLog>]) -> Option<Arc<CallLog>> {
    let last = logs.last()?;
    let principal = last.ctx().principal();
    logs.iter()
        .all(|l| l.ctx().principal() == principal)
        .then(|| (*last).clone())
}

impl InFlight {}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        // One lock at a time: `latest_for_log` takes `ended`, then `calls`.
        let gone: Vec<Call> = {
            let mut calls = self.in_flight.calls.lock().unwrap();
            let (gone, kept) = std::mem::take(&mut *calls)
                .into_iter()
                .partition(|c| c.log.ctx().task_id() == self.task_id);
            *calls = kept;
            gone
        };
        let now = std::time::Instant::now();
        let mut ended = self.in_flight.ended.lock().unwrap();
        ended.retain(|(at, _)| at.elapsed() < LATE_LOG);
        ended.extend(gone.into_iter().map(|c| (now, c.log)));
    }
}

/// The client handler of one upstream connection.
pub struct UpstreamClient {
    server: String,
    in_flight: Arc<InFlight>,
    relist: Arc<Notify>,
}

impl UpstreamClient {
    /// The handler for upstream `server`.
    pub fn new(server: &str, in_flight: Arc<InFlight>, relist: Arc<Notify>) -> UpstreamClient {
        UpstreamClient {
            server: server.to_string(),
            in_flight,
            relist,
        }
    }
}

fn token_text(token: &NumberOrString) -> String {
    match token {
        NumberOrString::String(s) => s.to_string(),
        NumberOrString::Number(n) => n.to_string(),
    }
}

impl ClientHandler for UpstreamClient {
    fn get_info(&self) -> ClientConfig {
        // Form elicitation, and the tasks extension: an upstream's own task is followed
        // (`upstream_task.rs`).
        let capabilities = ClientCapabilities::builder()
            .enable_elicitation()
            .enable_tasks()
            .build();
        ClientConfig::new(
            capabilities,
            Implementation::new("taskdeck-gateway", env!("CARGO_PKG_VERSION"))
                .with_title("Taskdeck"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(log) = self
            .in_flight
            .by_token(&token_text(&params.progress_token.0))
        {
            log.progress((params.progress, params.total, params.message));
        }
    }

    // Logging is deprecated (SEP-2577) but the servers people run today still log this way.
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let text = match &params.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        // The logger's name is the upstream's too: one line, nothing that acts on a terminal.
        let prefix = match &params.logger {
            Some(logger) => {
                let logger: String = logger.chars().filter(|c| !c.is_control()).collect();
                format!("{} [{level}] {logger}: ", self.server)
            }
            None => format!("{} [{level}]: ", self.server),
        };
        // What an upstream read may be in what it logs: Taskdeck's tokens never reach the task.
        let prefix = crate::tools::secrets::mask_taskdeck_tokens_text(prefix);
        let text = crate::tools::secrets::mask_taskdeck_tokens_text(text);
        match self.in_flight.latest_for_log() {
            Some(log) => log.message(&prefix, &text).await,
            None => tracing::info!(server = %self.server, "{prefix}{text}"),
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.relist.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let Some(log) = self.in_flight.latest() else {
            // Nothing of ours is running there, or calls of several principals are: no one to
            // ask who is sure to be the one it is for.
            tracing::warn!(
                server = %self.server,
                "declined a question from the server: no call of one principal is running there"
            );
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let ctx = log.ctx();
        let n = self.in_flight.elicitations.fetch_add(1, Ordering::Relaxed);
        // Unique within the task: a gateway call never outlives its process (see `call.rs`).
        let key = format!("elicitation-{n}");
        let params = serde_json::to_value(&request)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        // Nor in what it asks (a person or the agent reads the question).
        let mut params = crate::tools::secrets::mask_taskdeck_tokens(&params).unwrap_or(params);
        if let Some(obj) = params.as_object_mut() {
            obj.entry("mode").or_insert(json!("form"));
            // Taskdeck's own metadata is Taskdeck's to write: an upstream's question cannot pose
            // as one of its approvals (`taskdeck/approval`).
            if let Some(meta) = obj.get_mut("_meta").and_then(Value::as_object_mut) {
                meta.retain(|k, _| !k.starts_with("taskdeck/"));
            }
        }
        // The task waits for its caller or the human now, not for the upstream: say so, and
        // say it again once the answer went back.
        let question = params["message"].as_str().unwrap_or_default().to_string();
        ctx.status_message(format!("{} asks: {question}", self.server))
            .await;
        let answer = ctx
            .request_input(
                &key,
                json!({"method": "elicitation/create", "params": params}),
            )
            .await
            .map_err(|_| McpError::internal_error("the call ended before an answer came", None))?;
        ctx.status_message(format!(
            "Answered {}; waiting for it to finish",
            self.server
        ))
        .await;
        serde_json::from_value(answer).map_err(|e| McpError::internal_error(e.to_string(), None))
    }
}

//! External jobs: work a program runs itself (e.g. `taskdeck run -- make`) and reports on over
//! the HTTP jobs API: progress, status messages, input requests for the human, heartbeats and
//! its final result. The task's "run" here only relays those reports to the engine; if no report
//! arrives within the job's heartbeat timeout, the task fails with "runner lost". While reports
//! come, the job's ttlMs grows with its run ([`TaskContext::keep_alive`]): a job runs as long as
//! its runner does, and is kept a whole ttl after its last report. After a restart the job waits for its
//! runner again with a fresh heartbeat window (the runner may still be alive), and so it does
//! after Taskdeck itself was not running for a while (stopped with SIGSTOP, frozen, starved of
//! CPU): the runner's reports of that time are still on their way.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt, future::BoxFuture};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::{
    arguments::{WholeNumber, input_schema, parse, parse_for_run},
    output::OutputLog,
};

use taskdeck_engine::{
    EngineError, Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode,
};

/// The tool name of external jobs.
pub const EXTERNAL: &str = "external";
/// How late the heartbeat's timer may fire before it counts as Taskdeck having been paused
/// (SIGSTOP, a frozen cgroup, a machine too busy to run it) rather than as a silent runner.
const PAUSED_AFTER: Duration = Duration::from_millis(250);

/// The grace a runner gets when its heartbeat was checked late ([`PAUSED_AFTER`]): time for the
/// reports it sent while Taskdeck was not running, which wait in their connections, to arrive.
/// Given once per silent stretch (a report ends the stretch), so a runner that is really gone
/// is lost this much later at most.
const PAUSE_GRACE: Duration = Duration::from_secs(5);

/// The heartbeat timeouts a job may ask for, in ms (its start's and its reports'
/// `heartbeatMs`): one second to one day.
pub const HEARTBEAT_MS_RANGE: std::ops::RangeInclusive<u64> = 1_000..=86_400_000;

/// Default heartbeat timeout, in ms.
pub const DEFAULT_HEARTBEAT_MS: u64 = 30_000;

/// One report from an external runner.
#[derive(Debug, Clone)]
pub enum Report {
    /// "Still alive" (every report counts as one).
    Heartbeat,
    /// From now on the runner counts as lost after this long without a report (in
    /// [`HEARTBEAT_MS_RANGE`]): longer while it is suspended (`taskdeck run` stopped with
    /// Ctrl-Z), back to its own when it resumes. Until Taskdeck restarts: a job resumed at
    /// Taskdeck's start has its start's `heartbeatMs` again.
    HeartbeatTimeout(Duration),
    /// Progress, checked by the jobs API (`0 <= current <= total`, `total > 0`).
    Progress {
        /// What is done so far, in the job's own unit.
        current: f64,
        /// The whole, in the same unit; `None` when unknown.
        total: Option<f64>,
        /// What the job is doing; also its status message.
        message: Option<String>,
    },
    /// A new status message (SEP-2663 `statusMessage`).
    StatusMessage(String),
    /// Input requests (key → form elicitation) for the human; the task is `input_required` until
    /// they are answered. The runner reads the answers from its report replies.
    InputRequests(serde_json::Map<String, Value>),
    /// Lines of the job's output (its last may lack its newline), appended to its output log
    /// (`<data dir>/logs/<taskId>.log`, read by `GET /v1/tasks/{taskId}/log`) as a command
    /// task's are: invalid UTF-8 replaced, ANSI escapes removed, up to
    /// [`MAX_LOG_BYTES`](super::run_command::MAX_LOG_BYTES) in all.
    Output(String),
    /// The job ended: completed (a CallToolResult), failed (JSON-RPC error) or cancelled.
    Finished(Outcome),
}

/// An external job's arguments: `{name: string (1 to 200 characters), heartbeatMs?: integer
/// (1000 to 86400000, default [`DEFAULT_HEARTBEAT_MS`]), ...}`; other fields are allowed and kept
/// as the job's description (e.g. `command`). The fields carry no doc comments: the schema has
/// no descriptions (the jobs API documents them).
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ExternalArguments {
    #[expect(
        dead_code,
        reason = "the schema requires it; the jobs API shows it, the run does not"
    )]
    #[schemars(length(min = 1, max = 200))]
    name: String,
    #[schemars(range(min = 1000, max = 86_400_000))]
    heartbeat_ms: Option<WholeNumber>,
}

/// Where each running job's relay takes reports: taskId → (report, where to say it was applied).
type Runs = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<(Report, Ack)>>>>;
type Ack = oneshot::Sender<Result<(), EngineError>>;

/// The `external` task tool.
pub struct ExternalJobs {
    descriptor: ToolDescriptor,
    runs: Runs,
    /// Where the jobs' output logs go (`<data dir>/logs`).
    log_dir: PathBuf,
}

impl ExternalJobs {
    /// The tool; its arguments are those of `ExternalArguments`: `{name: string,
    /// heartbeatMs?: integer, ...}` (other fields are kept as the job's description, e.g.
    /// `command`). Its jobs' output logs go under `data_dir`'s `logs`.
    pub fn new(data_dir: &Path) -> Arc<ExternalJobs> {
        Arc::new(ExternalJobs {
            descriptor: ToolDescriptor {
                name: EXTERNAL.into(),
                title: Some("External job".into()),
                description: "Work a program runs itself and reports on over /v1/jobs/{id}/report."
                    .into(),
                input_schema: input_schema::<ExternalArguments>(),
                mode: ToolMode::Task { required: true },
                resumable: true,
                agent_callable: false,
            },
            runs: Arc::new(Mutex::new(HashMap::new())),
            log_dir: super::output::log_dir(data_dir),
        })
    }

    /// Delivers `report` to the job's run and waits until it is applied (stored; a `Finished`
    /// report's end too). `Ok(false)` when the job is not running here (unknown, settled, or
    /// not an external job).
    ///
    /// Errors: what applying it failed with, e.g. [`EngineError::KeyReused`] for an input
    /// request key the job already used for another request.
    pub async fn report(&self, task_id: &str, report: Report) -> Result<bool, EngineError> {
        let (ack, applied) = oneshot::channel();
        let sent = self
            .runs
            .lock()
            .unwrap()
            .get(task_id)
            .is_some_and(|tx| tx.send((report, ack)).is_ok());
        if !sent {
            return Ok(false);
        }
        match applied.await {
            Ok(r) => r.map(|()| true),
            Err(_) => Ok(false),
        }
    }
}

impl TaskTool for ExternalJobs {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }

    /// The job's description as the store keeps it: a URL's password in its command line
    /// masked, secret-named members redacted ([`super::secrets::redact_value`]). The runner has
    /// the command as given; the relay needs none of it.
    fn redact_arguments(&self, arguments: &Value) -> Option<Value> {
        super::secrets::redact_value(arguments)
    }

    /// The arguments parse as `ExternalArguments` (refused when the job is asked for, not when
    /// it runs).
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        parse::<ExternalArguments>(EXTERNAL, arguments).map(drop)
    }

    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        let arguments: ExternalArguments = match parse_for_run(EXTERNAL, arguments) {
            Ok(a) => a,
            Err(outcome) => return std::future::ready(outcome).boxed(),
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        self.runs
            .lock()
            .unwrap()
            .insert(ctx.task_id().to_string(), tx);
        let mut timeout = Duration::from_millis(
            arguments
                .heartbeat_ms
                .map_or(DEFAULT_HEARTBEAT_MS, |ms| ms.0),
        );
        let (runs, task_id) = (self.runs.clone(), ctx.task_id().to_string());
        let log_path = super::output::log_path(&self.log_dir, &task_id);
        let relay = async move {
            // The output log, opened at the job's first output (`Err`: it could not be, and
            // that was logged).
            let mut log: Result<Option<Arc<Mutex<OutputLog>>>, ()> = Ok(None);
            let mut deadline = tokio::time::Instant::now() + timeout;
            // The grace of a late check was given since the last report.
            let mut graced = false;
            // When a report next asks the engine to keep the job from expiring (its ttlMs is
            // a retention, not a limit on how long a job whose runner reports may run). Asked
            // once at the start too: a heartbeat longer than half the ttl must not see its job
            // expire before the runner's first report is due.
            let mut keep_alive_at = keep_alive(&ctx, timeout).await;
            // A job resumed at Taskdeck's start whose runner has not reported since: its window
            // began at the start, not at the runner's last report.
            let mut silent_since_restart = ctx.is_resumed();
            loop {
                tokio::select! {
                    // A report that is there wins over a deadline that passed meanwhile.
                    biased;
                    report = rx.recv() => {
                        // Every report starts a new window.
                        let now = tokio::time::Instant::now();
                        deadline = now + timeout;
                        graced = false;
                        silent_since_restart = false;
                        if now >= keep_alive_at {
                            keep_alive_at = keep_alive(&ctx, timeout).await;
                        }
                        match report {
                            Some((Report::Heartbeat, ack)) => { let _ = ack.send(Ok(())); }
                            Some((Report::HeartbeatTimeout(new), ack)) => {
                                timeout = new;
                                deadline = now + timeout;
                                // The job is kept at least twice the new heartbeat from now.
                                keep_alive_at = keep_alive(&ctx, timeout).await;
                                let _ = ack.send(Ok(()));
                            }
                            Some((Report::Progress { current, total, message }, ack)) => {
                                let _ = ack.send(ctx.progress_stored(current, total, message).await);
                            }
                            Some((Report::StatusMessage(m), ack)) => {
                                let _ = ack.send(ctx.status_message_stored(m).await);
                            }
                            Some((Report::Output(text), ack)) => {
                                append_output(&mut log, &log_path, text).await;
                                let _ = ack.send(Ok(()));
                            }
                            Some((Report::InputRequests(requests), ack)) => {
                                let mut applied = Ok(());
                                for (key, request) in requests {
                                    // A question is shown, stored and asked with its
                                    // credentials masked, as an agent's is.
                                    let request = super::secrets::mask_strings(&request).unwrap_or(request);
                                    applied = ctx.issue_input_for_human(&key, request).await;
                                    if applied.is_err() {
                                        break;
                                    }
                                }
                                let _ = ack.send(applied);
                            }
                            // Acknowledged once stored: a runner told "accepted" must not lose its
                            // result to a full disk and a restart. Refused, the job runs on and
                            // the runner reports again.
                            Some((Report::Finished(outcome), ack)) => match ctx.settle(outcome.clone()).await {
                                Ok(()) => {
                                    let _ = ack.send(Ok(()));
                                    return outcome;
                                }
                                // Settled otherwise meanwhile (expired, cancelled) or deleted: the
                                // runner learns its end was not taken, and the run is over.
                                Err(e @ (EngineError::Terminal(_) | EngineError::NotFound)) => {
                                    let _ = ack.send(Err(e));
                                    return outcome;
                                }
                                Err(e) => {
                                    let _ = ack.send(Err(e));
                                }
                            },
                            None => return Outcome::Cancelled,
                        }
                    }
                    _ = tokio::time::sleep_until(deadline) => {
                        // Fired late: Taskdeck did not run for a while, and the reports the
                        // runner sent meanwhile wait in their connections. A short grace lets
                        // them arrive.
                        if !graced && deadline.elapsed() > PAUSED_AFTER {
                            tracing::info!(
                                task_id = ctx.task_id(),
                                "heartbeat checked {} ms late (Taskdeck was paused); the runner gets {} s of grace",
                                deadline.elapsed().as_millis(),
                                PAUSE_GRACE.as_secs()
                            );
                            graced = true;
                            deadline = tokio::time::Instant::now() + PAUSE_GRACE;
                            continue;
                        }
                        let since = if silent_since_restart {
                            " since Taskdeck restarted"
                        } else {
                            ""
                        };
                        return Outcome::Failed(TaskFailure::tool(
                            format!("Runner lost: no report from the job's runner for {} ms{since}", timeout.as_millis()),
                            Some(json!({"reason": "runner lost"})),
                        ));
                    }
                }
            }
        };
        async move {
            // Unregistered however the run ends (returned, or dropped by the engine after an
            // ignored cancel).
            let _unregister = Unregister(runs, task_id);
            relay.await
        }
        .boxed()
    }
}

/// Asks the engine to keep the job from expiring while its runner reports (for at least
/// twice the heartbeat `timeout` from now, so that a runner reporting within its heartbeat
/// always finds its job), and returns when to ask again. A store that cannot take the change
/// (a full disk) is asked again at a report 5 s later.
async fn keep_alive(ctx: &TaskContext, timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    let at_least = u64::try_from(timeout.as_millis() * 2).unwrap_or(u64::MAX);
    match ctx.keep_alive(at_least).await {
        Ok(Some(ms)) => now + Duration::from_millis(ms),
        // Unlimited retention: nothing to keep.
        Ok(None) => now + Duration::from_secs(86_400 * 365),
        Err(e) => {
            tracing::warn!(task_id = ctx.task_id(), "cannot extend a job's ttlMs: {e}");
            now + Duration::from_secs(5)
        }
    }
}

/// Appends `text` to the job's output log at `path`, opening it first if `log` is not open
/// yet (`Err`: it could not be; it is tried again, and the failure logged once). A log that
/// cannot be opened or written (its disk full) loses the output, not the report: the job's
/// status and result do not depend on it.
async fn append_output(
    log: &mut Result<Option<Arc<Mutex<OutputLog>>>, ()>,
    path: &Path,
    text: String,
) {
    if !matches!(log, Ok(Some(_))) {
        let opening = path.to_path_buf();
        let opened = tokio::task::spawn_blocking(move || {
            OutputLog::append(&opening, super::run_command::MAX_LOG_BYTES)
        })
        .await;
        match opened {
            Ok(Some(opened)) => *log = Ok(Some(Arc::new(Mutex::new(opened)))),
            _ => {
                if log.is_ok() {
                    tracing::warn!(path = %path.display(), "cannot open a job's output log");
                }
                return *log = Err(());
            }
        }
    }
    let Ok(Some(log)) = log.clone() else {
        return;
    };
    let _ =
        tokio::task::spawn_blocking(move || log.lock().unwrap().push_lines(text.as_bytes())).await;
}

struct Unregister(Runs, String);

impl Drop for Unregister {
    fn drop(&mut self) {
        self.0.lock().unwrap().remove(&self.1);
    }
}

//! The executor: runs each task's tool on a tokio task of its own, settles the task with the
//! run's [`Outcome`], and at start gives every task the previous process left unsettled its
//! fate (resumed, failed as interrupted, or cancelled). [`RunningTasks`] is what this process
//! knows of the runs in flight: their cancellation tokens and the input answers they await.

use std::{
    collections::HashMap,
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex, atomic::Ordering},
};

use futures::{FutureExt, StreamExt as _, TryStreamExt as _};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::Principal;

use super::{
    super::{
        clock::now_ms,
        context::{Outcome, TaskContext},
        failure::{FailureKind, TaskFailure},
        limits, store,
    },
    Engine, EngineError, TaskRecord, TaskStatus, TaskTool, load, supersede_outstanding, transition,
};

/// What [`Engine::start`] did with the tasks the previous process left unsettled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Tasks of resumable tools, running again from the top.
    pub resumed: usize,
    /// Tasks failed as interrupted (`FailureKind::Restart`).
    pub failed: usize,
}

/// Recovery writes [`Engine::start`] keeps queued at once: enough to fill group commits, few
/// enough that a store with many unsettled tasks does not queue them all.
const RECOVERY_WRITES_IN_FLIGHT: usize = 512;

/// The wait before a run's outcome is stored again after the store refused it (see
/// [`Engine::settle_run`]); doubled after each refusal up to [`SETTLE_RETRY_MAX`].
const SETTLE_RETRY_FIRST: std::time::Duration = std::time::Duration::from_millis(250);

/// The longest wait between two tries to store a run's outcome, so a task whose outcome waits
/// for a full disk settles within about this much of the space coming back.
const SETTLE_RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(5);

/// Tries in all to store a run's outcome when the store fails with another error than a full
/// disk: about 5 minutes of them (waits of 0.25 s doubling to 5 s), for an I/O error that
/// passes (a network file system back).
const SETTLE_STORE_TRIES: u32 = 64;

/// What [`Engine::recover`] did with one unsettled task.
enum Fate {
    Resumed,
    Failed,
    Cancelled,
}

/// One answer a run waits for: the waiter's id (a later wait on the same key replaces it) and
/// where the answer goes.
pub(super) struct AwaitedAnswer {
    pub(super) waiter_id: u64,
    pub(super) deliver: oneshot::Sender<Value>,
}

/// A task whose tool runs in this process.
struct RunningTask {
    cancel: CancellationToken,
    /// How the run ended, once it did, while the executor stores it ([`Engine::settle_run`]):
    /// a TTL that elapses meanwhile stores this instead of expiring the task.
    ended: Option<Outcome>,
    /// Input key → the answer its run waits for.
    awaited: HashMap<String, AwaitedAnswer>,
    /// The tool running it (told at shutdown that its run is interrupted).
    tool: Arc<dyn TaskTool>,
    /// What it holds for the people who decide its questions, and who read it
    /// (`hidden_values`).
    hidden: Option<super::hidden_values::Held>,
}

/// The runs in flight, by task id.
#[derive(Default)]
pub(super) struct RunningTasks {
    runs: Mutex<HashMap<String, RunningTask>>,
}

impl RunningTasks {
    fn insert(&self, task_id: &str, run: RunningTask) {
        self.runs.lock().unwrap().insert(task_id.to_string(), run);
    }

    fn remove(&self, task_id: &str) {
        self.runs.lock().unwrap().remove(task_id);
    }

    /// Each running task's id and tool.
    fn tools(&self) -> Vec<(String, Arc<dyn TaskTool>)> {
        let runs = self.runs.lock().unwrap();
        runs.iter()
            .map(|(id, run)| (id.clone(), run.tool.clone()))
            .collect()
    }

    /// Records how the run of `task_id` ended, while its outcome is being stored.
    fn set_ended(&self, task_id: &str, outcome: &Outcome) {
        if let Some(run) = self.runs.lock().unwrap().get_mut(task_id) {
            run.ended = Some(outcome.clone());
        }
    }

    /// How the run of `task_id` ended, when it did and its outcome is not stored yet.
    pub(super) fn ended(&self, task_id: &str) -> Option<Outcome> {
        self.runs.lock().unwrap().get(task_id)?.ended.clone()
    }

    /// Asks the run of `task_id` to stop. Returns false when it does not run in this process.
    pub(super) fn cancel(&self, task_id: &str) -> bool {
        match self.runs.lock().unwrap().get(task_id) {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Waits for the answer to `key` with `answer` (replacing an earlier waiter on that key).
    /// Returns false when `task_id` does not run in this process.
    pub(super) fn await_answer(&self, task_id: &str, key: &str, answer: AwaitedAnswer) -> bool {
        match self.runs.lock().unwrap().get_mut(task_id) {
            Some(run) => {
                run.awaited.insert(key.to_string(), answer);
                true
            }
            None => false,
        }
    }

    /// Gives each `(key, answer)` to the run waiting for it, if any.
    pub(super) fn deliver(&self, task_id: &str, answers: Vec<(String, Value)>) {
        if let Some(run) = self.runs.lock().unwrap().get_mut(task_id) {
            for (key, answer) in answers {
                if let Some(awaited) = run.awaited.remove(&key) {
                    let _ = awaited.deliver.send(answer);
                }
            }
        }
    }

    /// Sets what the run of `task_id` holds for the people who decide its questions (read by
    /// nobody yet).
    pub(super) fn set_hidden(&self, task_id: &str, held: Option<super::hidden_values::Held>) {
        if let Some(run) = self.runs.lock().unwrap().get_mut(task_id) {
            run.hidden = held;
        }
    }

    /// Runs `f` on what the run of `task_id` holds for the people who decide its questions;
    /// `None` when it holds nothing (or is not running).
    pub(super) fn with_hidden<R>(
        &self,
        task_id: &str,
        f: impl FnOnce(&mut super::hidden_values::Held) -> R,
    ) -> Option<R> {
        let mut runs = self.runs.lock().unwrap();
        runs.get_mut(task_id)?.hidden.as_mut().map(f)
    }

    /// Stops waiting on `key` if waiter `waiter_id` is still the one waiting.
    pub(super) fn forget_waiter(&self, task_id: &str, key: &str, waiter_id: u64) {
        if let Some(run) = self.runs.lock().unwrap().get_mut(task_id)
            && run
                .awaited
                .get(key)
                .is_some_and(|a| a.waiter_id == waiter_id)
        {
            run.awaited.remove(key);
        }
    }
}

impl Engine {
    /// Gives every task left unsettled by a previous process an explicit fate, then starts the
    /// TTL sweeper. Resumable tools run again; other tasks fail as interrupted
    /// ([`FailureKind::Restart`], `data.lastStatusMessage`); tasks with a pending cancel are
    /// cancelled; hosted tasks ([`Engine::create_hosted_owned`]) are left to their host.
    ///
    /// The fates are written concurrently (at most [`RECOVERY_WRITES_IN_FLIGHT`] at once), so
    /// that they share group commits: one commit per task made start wait about 0.25 ms per
    /// unsettled task (0.5 s for 2,000, BENCHMARKS.md "Cold start").
    /// Errors: [`EngineError::Store`].
    pub async fn start(&self) -> Result<Recovery, EngineError> {
        self.parts
            .sweeper
            .task_count
            .store(self.parts.store.task_count()?, Ordering::Relaxed);
        let mut fates = Vec::new();
        for task in self.parts.store.unsettled()? {
            // A hosted task's work runs in its host, which may still be running it: it stays
            // as it is, for the host to settle (its ttlMs still bounds it).
            let id = task.task_id.clone();
            if self
                .parts
                .store
                .read(move |c| Ok(super::hosted::is_hosted(c, &id)?))?
            {
                continue;
            }
            fates.push(self.recover(task));
        }
        let fates: Vec<Fate> = futures::stream::iter(fates)
            .buffer_unordered(RECOVERY_WRITES_IN_FLIGHT)
            .try_collect()
            .await?;
        let mut recovery = Recovery::default();
        for fate in fates {
            match fate {
                Fate::Resumed => recovery.resumed += 1,
                Fate::Failed => recovery.failed += 1,
                Fate::Cancelled => {}
            }
        }
        self.spawn_sweeper();
        Ok(recovery)
    }

    /// Gives `task`, left unsettled by the previous process, its fate (see [`Engine::start`]).
    /// Errors: [`EngineError::Store`].
    async fn recover(&self, task: TaskRecord) -> Result<Fate, EngineError> {
        if task.cancel_requested {
            // Its tool was still stopping it when the process ended: finish that first (e.g.
            // run_command's processes), so that "cancelled" never hides a live command.
            if let Some(tool) = self.tool(&task.tool) {
                tool.interrupted(&task.task_id);
            }
            self.finish(&task.task_id, Outcome::Cancelled).await?;
            return Ok(Fate::Cancelled);
        }
        match self.tool(&task.tool).filter(|t| t.resumes(&task)) {
            Some(tool) => {
                let id = task.task_id.clone();
                self.parts
                    .store
                    .write(move |w| {
                        let mut t = load(w, &id)?;
                        t.last_updated_at_ms = now_ms();
                        w.event(
                            &t,
                            t.last_updated_at_ms,
                            "resumed",
                            json!({"reason": "restart"}),
                        )?;
                        w.save(t)?;
                        Ok(())
                    })
                    .await?;
                self.spawn_executor(Arc::new(task), tool, true, None);
                Ok(Fate::Resumed)
            }
            None => {
                let tool = self.tool(&task.tool);
                if let Some(tool) = &tool {
                    tool.interrupted(&task.task_id);
                    for record in tool.abandoned_decisions(&task) {
                        if let Err(e) = self.record_decision(record).await {
                            tracing::warn!(
                                task_id = task.task_id,
                                "cannot record an abandoned decision in the audit log: {e}"
                            );
                        }
                    }
                }
                let mut message = if task.status == TaskStatus::InputRequired {
                    "Task interrupted: Taskdeck restarted while it waited for input".to_string()
                } else {
                    "Task interrupted: Taskdeck restarted while it was running".to_string()
                };
                // Else the restart seems the cause of what a resumable tool's absence is (an
                // upstream server removed from servers.json while Taskdeck was stopped).
                match tool.as_ref().and_then(|t| t.interrupted_because(&task)) {
                    _ if tool.is_none() => {
                        message.push_str(&format!(", and no longer has its tool {}", task.tool))
                    }
                    Some(why) => message.push_str(&format!("; {why}")),
                    None => {}
                }
                let data = json!({"lastStatusMessage": task.status_message});
                let failure = TaskFailure::new(FailureKind::Restart, message, Some(data));
                self.finish(&task.task_id, Outcome::Failed(failure)).await?;
                Ok(Fate::Failed)
            }
        }
    }

    /// True once [`Engine::shutdown`] was called: runs are being stopped with the process, and
    /// their tasks keep their stored state for the next start.
    pub fn is_stopping(&self) -> bool {
        self.parts.shutdown.is_cancelled()
    }

    /// Completes once [`Engine::shutdown`] was called (at once if it was already): for work
    /// outside a task's run that must end with the process, e.g. an answer streamed to a client
    /// while a human decides.
    pub async fn stopping(&self) {
        self.parts.shutdown.cancelled().await
    }

    /// Stops the sweeper and asks every running tool to stop (their tasks stay as they are in
    /// the store and get their fate at the next start).
    ///
    /// What a non-resumable run leaves behind (e.g. a command's processes) is stopped now
    /// ([`TaskTool::interrupted`]): nothing of it outlives Taskdeck. Once only: a second call
    /// (the signal handler's, then the server's own stop) does nothing.
    pub fn shutdown(&self) {
        if self.parts.shutdown.is_cancelled() {
            return;
        }
        self.parts.shutdown.cancel();
        for (id, tool) in self.parts.running.tools() {
            if !tool.descriptor().resumable {
                tool.interrupted(&id);
            }
        }
    }

    /// How the run of `principal`'s task `task_id` ended, from its end until shortly after
    /// that end is stored: being stored, or waiting for the store to take it (e.g. a full disk:
    /// the executor stores it once it can, so that no run ends unrecorded). `None` while the
    /// run goes on, once its end is stored, and for a task not running in this process.
    ///
    /// Errors: [`EngineError::NotFound`] for an unknown task or another principal's;
    /// [`EngineError::Store`] when the task cannot be read.
    pub fn unstored_end(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<Option<Outcome>, EngineError> {
        self.get(principal, task_id)?;
        Ok(self.parts.running.ended(task_id))
    }

    /// Starts `tool` on `task` (`resumed`: after a restart). `arguments`: what the run gets
    /// when it is not the stored arguments (secrets redacted from those).
    pub(super) fn spawn_executor(
        &self,
        task: Arc<TaskRecord>,
        tool: Arc<dyn TaskTool>,
        resumed: bool,
        arguments: Option<Value>,
    ) {
        let cancel = self.parts.shutdown.child_token();
        if task.cancel_requested {
            cancel.cancel();
        }
        self.parts.running.insert(
            &task.task_id,
            RunningTask {
                cancel: cancel.clone(),
                ended: None,
                awaited: HashMap::new(),
                tool: tool.clone(),
                hidden: None,
            },
        );
        let ctx = TaskContext {
            engine: self.clone(),
            task_id: task.task_id.clone(),
            principal: task.principal.clone(),
            cancel: cancel.clone(),
            resumed,
        };
        let engine = self.clone();
        let grace = self.parts.config.cancel_grace;
        let shutdown = self.parts.shutdown.clone();
        // The tool's run is created here, before this returns (so a tool can register the task
        // at once, e.g. external jobs awaiting reports); it is polled on its own tokio task.
        let arguments = arguments.unwrap_or_else(|| task.arguments.clone());
        let run = AssertUnwindSafe(tool.run(ctx, arguments)).catch_unwind();
        tokio::spawn(async move {
            let ignored_cancel = async {
                cancel.cancelled().await;
                tokio::time::sleep(grace).await;
            };
            let outcome = tokio::select! {
                o = run => o.unwrap_or_else(|_| Outcome::Failed(TaskFailure::new(
                    FailureKind::Internal,
                    format!("tool {} panicked", task.tool),
                    None,
                ))),
                _ = ignored_cancel => Outcome::Cancelled,
            };
            // On shutdown the task keeps its stored state; the next start decides its fate.
            if !shutdown.is_cancelled() {
                engine.parts.running.set_ended(&task.task_id, &outcome);
                engine.settle_run(&task.task_id, outcome, &shutdown).await;
            }
            engine.parts.running.remove(&task.task_id);
        });
    }

    /// Stores how a run ended ([`Self::finish`]), trying again while the store cannot take the
    /// write: for as long as its disk is full ([`EngineError::DiskFull`]), and up to
    /// [`SETTLE_STORE_TRIES`] times in all for another store error (a group commit lost to
    /// another write of its group, an I/O error that passes; one that lasts, such as damage,
    /// is logged and the task left as it is stored, `working`, until a restart fails it as
    /// interrupted). Waits [`SETTLE_RETRY_FIRST`] before the second try, then twice as
    /// long each time up to [`SETTLE_RETRY_MAX`]; stops at `shutdown` (the task keeps its
    /// stored state and the next start gives it its fate). The run's outcome is held in memory
    /// meanwhile, so a result computed while the disk was full is stored once there is space,
    /// and the task does not stay `working` after its run ended.
    async fn settle_run(&self, task_id: &str, outcome: Outcome, shutdown: &CancellationToken) {
        let mut wait = SETTLE_RETRY_FIRST;
        let (mut failed_tries, mut store_errors) = (0u32, 0u32);
        loop {
            match self.finish(task_id, outcome.clone()).await {
                Ok(()) => {
                    if failed_tries > 0 {
                        tracing::info!(task_id, failed_tries, "settled the task after all");
                    }
                    return;
                }
                // Deleted meanwhile: nothing left to settle.
                Err(EngineError::NotFound) => return,
                Err(e @ EngineError::DiskFull(_)) => {
                    if failed_tries == 0 {
                        tracing::warn!(
                            task_id,
                            "cannot settle the task yet ({e}); trying again until there is room"
                        );
                    }
                    failed_tries += 1;
                }
                Err(e @ EngineError::Store(_)) if store_errors + 1 < SETTLE_STORE_TRIES => {
                    tracing::warn!(task_id, "cannot settle the task yet ({e}); trying again");
                    store_errors += 1;
                    failed_tries += 1;
                }
                Err(e) => {
                    tracing::error!(task_id, "cannot settle the task: {e}");
                    return;
                }
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(wait) => {}
            }
            wait = (wait * 2).min(SETTLE_RETRY_MAX);
        }
    }

    /// Settles a task with `outcome`, unless it is already terminal (then nothing happens).
    /// Outstanding input requests become superseded. A failure is stored as the error object
    /// the server's mapping makes of it. Errors: [`EngineError::NotFound`];
    /// [`EngineError::DiskFull`]; [`EngineError::Store`].
    pub(crate) async fn finish(&self, task_id: &str, outcome: Outcome) -> Result<(), EngineError> {
        self.finish_applied(task_id, outcome, None).await.map(drop)
    }

    /// [`Self::finish`], saying whether it applied `outcome`: `None` when it did, else the
    /// status the task had settled with already. `kept_ms`: keep the task visible at least
    /// this long from now (ms), whatever its ttlMs says (an outcome stored after its ttlMs
    /// elapsed: [`Engine::expire`](super::Engine)). Errors: as [`Self::finish`].
    pub(crate) async fn finish_applied(
        &self,
        task_id: &str,
        outcome: Outcome,
        kept_ms: Option<u64>,
    ) -> Result<Option<TaskStatus>, EngineError> {
        let id = task_id.to_string();
        let default_ttl = self.parts.config.default_ttl_ms;
        let error_object = self.parts.error_object;
        self.parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Ok(Some(t.status));
                }
                let now = now_ms();
                // A task cancelled or settled while waiting for input gets its retention back.
                if t.ttl_ms.is_none()
                    && let Some(ttl) = store::created_ttl(w.conn, &id)?.unwrap_or(default_ttl)
                {
                    t.ttl_ms = Some((now - t.created_at_ms).max(0) as u64 + ttl);
                }
                let to = match outcome {
                    Outcome::Completed(result) => {
                        // The statusMessage now says how it ended: the result's first line.
                        if let Some(first) = result
                            .pointer("/content/0/text")
                            .and_then(Value::as_str)
                            .and_then(|t| t.lines().find(|l| !l.trim().is_empty()))
                        {
                            t.status_message = Some(first.trim().chars().take(200).collect());
                        }
                        t.result = Some(result);
                        TaskStatus::Completed
                    }
                    Outcome::Failed(failure) => {
                        t.error = Some(error_object(&failure));
                        t.status_message = Some(limits::truncate(
                            failure.message,
                            limits::STATUS_MESSAGE_MAX_BYTES,
                        ));
                        TaskStatus::Failed
                    }
                    Outcome::Cancelled => {
                        // The last progress line (e.g. "Waiting for a human in Taskdeck: ...") no longer holds.
                        t.status_message = Some(match t.cancel_requested {
                            true => store::cancel_reason(w.conn, &id)?
                                .unwrap_or_else(|| "Cancelled on request".into()),
                            false => "Cancelled".into(),
                        });
                        TaskStatus::Cancelled
                    }
                };
                supersede_outstanding(w, &mut t, now)?;
                transition(w, &mut t, to, now)?;
                // Done is all done; a result that is an error (a command that exited non-zero)
                // keeps the progress it had reached.
                let done = to == TaskStatus::Completed && !t.is_error();
                if let Some(p) = t.progress.as_mut().filter(|_| done)
                    && let Some(total) = p.total
                {
                    p.current = total;
                }
                if let Some(kept) = kept_ms {
                    let until = (now - t.created_at_ms).max(0) as u64 + kept;
                    t.ttl_ms = Some(t.ttl_ms.map_or(until, |ttl| ttl.max(until)));
                }
                w.save(t)?;
                Ok(None)
            })
            .await
    }
}

//! Updates to a live task that do not settle it: a principal's cancellation request
//! (cooperative: SEP-2663 §Task Cancellation), and the status messages and progress a running
//! tool reports through its [`TaskContext`](super::super::TaskContext).

use serde_json::json;

use super::{
    super::{clock::now_ms, context::Outcome, limits, model::Progress, store},
    Engine, EngineError, TaskRecord, load, set_ttl,
};
use crate::{Principal, store::WriteCtx};

impl Engine {
    /// Requests cancellation of a task visible to `principal`. Cooperative: the tool is told
    /// and decides the final state (SEP-2663 §Task Cancellation). Idempotent: a terminal task is
    /// returned unchanged. Returns the task as it stands after the request.
    ///
    /// Errors: [`EngineError::NotFound`].
    pub async fn cancel(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<TaskRecord, EngineError> {
        self.cancel_because(principal, task_id, None).await
    }

    /// [`Self::cancel`], saying why: `reason` (cut to the status message's limit) is
    /// recorded on the `cancelRequested` event (`{by, reason}`) and becomes the task's
    /// statusMessage once it ends cancelled, in place of "Cancelled by <principal>".
    ///
    /// Errors: [`EngineError::NotFound`].
    pub async fn cancel_because(
        &self,
        principal: &Principal,
        task_id: &str,
        reason: Option<&str>,
    ) -> Result<TaskRecord, EngineError> {
        let reason =
            reason.map(|r| limits::truncate(r.to_string(), limits::STATUS_MESSAGE_MAX_BYTES));
        let who = principal.clone();
        let id = task_id.to_string();
        let task = self
            .parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if !who.can_see(&t.principal) {
                    return Err(EngineError::NotFound);
                }
                if t.status.is_terminal() || t.cancel_requested {
                    return Ok(t);
                }
                let now = now_ms();
                t.cancel_requested = true;
                t.last_updated_at_ms = now;
                let mut data = json!({"by": who.name});
                if let Some(reason) = reason {
                    data["reason"] = json!(reason);
                }
                w.event(&t, now, "cancelRequested", data)?;
                let t = w.save(t)?;
                Ok(TaskRecord::clone(&t))
            })
            .await?;
        if !task.status.is_terminal() {
            // A task no run of this process holds (e.g. one left by a crash mid-start) is
            // settled here; a running one is settled by its executor.
            if !self.parts.running.cancel(task_id) {
                self.finish(task_id, Outcome::Cancelled).await?;
            }
        }
        Ok(task)
    }

    /// Replaces a live task's stored arguments with the call a human approved after editing it
    /// (as it will be shown: credentials masked by the caller), so the task's title and
    /// details say what runs; its timeline gets an `argumentsEdited` event `{arguments,
    /// previous}`. A terminal task is left alone. Errors: [`EngineError::NotFound`];
    /// [`EngineError::DiskFull`]; [`EngineError::Store`].
    pub(crate) async fn edit_arguments(
        &self,
        task_id: &str,
        arguments: serde_json::Value,
    ) -> Result<(), EngineError> {
        let id = task_id.to_string();
        self.parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() || t.arguments == arguments {
                    return Ok(());
                }
                let now = now_ms();
                store::set_arguments(w.conn, t.seq, &arguments)?;
                let previous = std::mem::replace(&mut t.arguments, arguments);
                t.last_updated_at_ms = now;
                let data = json!({"arguments": t.arguments, "previous": previous});
                w.event(&t, now, "argumentsEdited", data)?;
                w.save(t)?;
                Ok(())
            })
            .await
    }

    /// Sets a live task's statusMessage, cut to [`limits::STATUS_MESSAGE_MAX_BYTES`] (a
    /// terminal task is left alone). Errors: [`EngineError::NotFound`]; [`EngineError::Store`].
    pub(crate) async fn set_status_message(
        &self,
        task_id: &str,
        message: String,
    ) -> Result<(), EngineError> {
        let message = limits::truncate(message, limits::STATUS_MESSAGE_MAX_BYTES);
        let event = json!({"statusMessage": message});
        self.report(task_id, "statusMessage", event, move |t| {
            t.status_message = Some(message)
        })
        .await
    }

    /// Sets a live task's progress and returns once it is stored; its message (cut to
    /// [`limits::STATUS_MESSAGE_MAX_BYTES`]) becomes the statusMessage too. Errors:
    /// [`EngineError::NotFound`]; [`EngineError::Store`].
    pub(crate) async fn set_progress(
        &self,
        task_id: &str,
        progress: Progress,
    ) -> Result<(), EngineError> {
        self.parts
            .store
            .write(progress_write(task_id, progress)?)
            .await
    }

    /// [`Self::set_progress`] without waiting: queued for a coming commit, which the store may
    /// hold back up to 50 ms to share ([`crate::Store::write_unhurried`]). Errors:
    /// [`EngineError::Store`] (the writer stopped).
    pub(crate) fn queue_progress(
        &self,
        task_id: &str,
        progress: Progress,
    ) -> Result<(), EngineError> {
        self.parts
            .store
            .write_unhurried(progress_write(task_id, progress)?)
    }

    /// Keeps a live task from expiring while its run shows it is alive (an external job whose
    /// runner still reports): when less than half of its window is left before `createdAt +
    /// ttlMs`, ttlMs grows so that the task expires a whole window from now. The window is
    /// the ttlMs the task was created with (else the configured default), at least
    /// `at_least_ms`. SEP-2663 §Task Retention lets ttlMs change over a task's life; the
    /// timeline gets a `ttl` event `{ttlMs, reason: "still running"}`. A settled task, or one
    /// whose ttlMs is null (unlimited, or waiting for input: its window comes back with the
    /// answer), is left alone.
    ///
    /// Returns how long (ms) until a call can change anything again, `None` when never (the
    /// task's retention is unlimited, or it settled). Reads only, unless it extends.
    ///
    /// Errors: [`EngineError::NotFound`]; [`EngineError::DiskFull`]; [`EngineError::Store`].
    pub(crate) async fn keep_alive(
        &self,
        task_id: &str,
        at_least_ms: u64,
    ) -> Result<Option<u64>, EngineError> {
        let Some(t) = self.parts.store.get(task_id)? else {
            return Err(EngineError::NotFound);
        };
        let created = self.parts.store.read(|c| store::created_ttl(c, task_id))?;
        let Some(window) = created
            .unwrap_or(self.parts.config.default_ttl_ms)
            .map(|w| w.max(at_least_ms))
        else {
            return Ok(None);
        };
        let half = window / 2;
        // How long the task has left at `now` before it would need more; 0 once it does.
        let slack = move |t: &TaskRecord, now: i64| {
            t.ttl_ms.map(|ttl| {
                let left = t.created_at_ms.saturating_add(ttl as i64) - now;
                (left - half as i64).max(0) as u64
            })
        };
        if t.status.is_terminal() {
            return Ok(None);
        }
        match slack(&t, now_ms()) {
            None => return Ok(Some(half)),
            Some(ms) if ms > 0 => return Ok(Some(ms)),
            Some(_) => {}
        }
        let id = task_id.to_string();
        self.parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                let now = now_ms();
                // Settled, or waiting for input, or extended by a call that raced this one.
                if t.status.is_terminal() || slack(&t, now).is_none_or(|ms| ms > 0) {
                    return Ok(());
                }
                t.last_updated_at_ms = now;
                let ttl_ms = (now - t.created_at_ms).max(0) as u64 + window;
                set_ttl(w, &mut t, Some(ttl_ms), "still running", now)?;
                w.save(t)?;
                Ok(())
            })
            .await?;
        Ok(Some(half))
    }

    /// One report of a running tool, as a store write: applies `change` to the live task and
    /// logs it as a timeline event of `kind` with `data`. A terminal task is left alone (a
    /// report racing the task's end loses). Errors: [`EngineError::NotFound`];
    /// [`EngineError::Store`].
    async fn report(
        &self,
        task_id: &str,
        kind: &'static str,
        data: serde_json::Value,
        change: impl FnOnce(&mut TaskRecord) + Send + 'static,
    ) -> Result<(), EngineError> {
        self.parts
            .store
            .write(report_write(task_id, kind, data, change))
            .await
    }
}

/// The store write of a progress report (see [`Engine::set_progress`]). Errors:
/// [`EngineError::Store`] when the progress cannot be rendered as JSON.
fn progress_write(
    task_id: &str,
    progress: Progress,
) -> Result<impl FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send + 'static, EngineError>
{
    let progress = Progress {
        message: progress
            .message
            .map(|m| limits::truncate(m, limits::STATUS_MESSAGE_MAX_BYTES)),
        ..progress
    };
    let event = serde_json::to_value(&progress)?;
    Ok(report_write(task_id, "progress", event, move |t| {
        if let Some(m) = &progress.message {
            t.status_message = Some(m.clone());
        }
        t.progress = Some(progress);
    }))
}

/// The store write of a running tool's report (see [`Engine::report`]). Errors:
/// [`EngineError::NotFound`].
fn report_write(
    task_id: &str,
    kind: &'static str,
    data: serde_json::Value,
    change: impl FnOnce(&mut TaskRecord) + Send + 'static,
) -> impl FnOnce(&mut WriteCtx<'_>) -> Result<(), EngineError> + Send + 'static {
    let id = task_id.to_string();
    move |w| {
        let mut t = load(w, &id)?;
        if t.status.is_terminal() {
            return Ok(());
        }
        let now = now_ms();
        change(&mut t);
        t.last_updated_at_ms = now;
        w.event(&t, now, kind, data)?;
        w.save(t)?;
        Ok(())
    }
}

//! Updates to a live task that do not settle it: a principal's cancellation request
//! (cooperative: SEP-2663 §Task Cancellation), and the status messages and progress a running
//! tool reports through its [`TaskContext`](super::super::TaskContext).

use serde_json::json;

use super::{
    super::{clock::now_ms, context::Outcome, limits, model::Progress},
    Engine, EngineError, TaskRecord, load,
};
use crate::Principal;

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
                w.event(&t, now, "cancelRequested", json!({"by": who.name}))?;
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

    /// Sets a live task's statusMessage, cut to [`limits::STATUS_MESSAGE_MAX_BYTES`] (a
    /// terminal task is left alone). Errors: [`EngineError::NotFound`]; [`EngineError::Store`].
    pub(crate) async fn set_status_message(
        &self,
        task_id: &str,
        message: String,
    ) -> Result<(), EngineError> {
        let message = limits::truncate(message, limits::STATUS_MESSAGE_MAX_BYTES);
        let id = task_id.to_string();
        self.parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Ok(());
                }
                let now = now_ms();
                t.status_message = Some(message.clone());
                t.last_updated_at_ms = now;
                w.event(&t, now, "statusMessage", json!({"statusMessage": message}))?;
                w.save(t)?;
                Ok(())
            })
            .await
    }

    /// Sets a live task's progress; its message (cut to [`limits::STATUS_MESSAGE_MAX_BYTES`])
    /// becomes the statusMessage too. Errors: [`EngineError::NotFound`]; [`EngineError::Store`].
    pub(crate) async fn set_progress(
        &self,
        task_id: &str,
        current: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), EngineError> {
        let message = message.map(|m| limits::truncate(m, limits::STATUS_MESSAGE_MAX_BYTES));
        let id = task_id.to_string();
        self.parts
            .store
            .write(move |w| {
                let mut t = load(w, &id)?;
                if t.status.is_terminal() {
                    return Ok(());
                }
                let now = now_ms();
                let progress = Progress {
                    current,
                    total,
                    message,
                };
                t.progress = Some(progress.clone());
                if let Some(m) = &progress.message {
                    t.status_message = Some(m.clone());
                }
                t.last_updated_at_ms = now;
                w.event(&t, now, "progress", serde_json::to_value(&progress)?)?;
                w.save(t)?;
                Ok(())
            })
            .await
    }
}

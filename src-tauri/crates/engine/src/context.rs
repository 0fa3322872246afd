//! What a running tool sees of the engine: its task id, its cancellation token, and the calls
//! that report progress and ask for input. Every call is a durable store write.

use crate::Progress;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    Engine, EngineError,
    failure::{FailureKind, TaskFailure},
};

/// How a tool's run ended. The executor, not the canceller, decides the final state: a tool
/// that finishes its work despite a cancel request returns `Completed` and the task completes.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The tool's `CallToolResult` (a JSON object), `isError: true` results included
    /// (SEP-2663 §Task Execution Errors: such a task is `completed`).
    Completed(Value),
    /// The task is `failed`; its stored `error` is the JSON-RPC error object the server's wire
    /// mapping makes of this failure (see [`crate::failure`]).
    Failed(TaskFailure),
    /// The tool stopped because cancellation was requested.
    Cancelled,
}

impl Outcome {
    /// A completed outcome with one text content block and `isError: false`.
    pub fn text(text: impl Into<String>) -> Outcome {
        Outcome::Completed(
            json!({"content": [{"type": "text", "text": text.into()}], "isError": false}),
        )
    }
}

/// Returned by an input waiter when the task was cancelled while waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// Why [`TaskContext::request_input`] (or `elicit`) returned without an answer.
#[derive(Debug)]
pub enum InputError {
    /// The task was cancelled (or had already ended) while waiting.
    Cancelled,
    /// The request could not be stored: its key was used for another request earlier in the
    /// task's life ([`EngineError::KeyReused`]), or the store failed ([`EngineError::Store`]).
    NotIssued(EngineError),
}

impl From<InputError> for Outcome {
    /// `Cancelled` ends the task `cancelled`; `NotIssued` ends it `failed`
    /// ([`FailureKind::Internal`], "the input request could not be stored: …"), never as if
    /// someone had cancelled.
    fn from(e: InputError) -> Outcome {
        match e {
            InputError::Cancelled => Outcome::Cancelled,
            InputError::NotIssued(e) => Outcome::Failed(TaskFailure::new(
                FailureKind::Internal,
                format!("the input request could not be stored: {e}"),
                None,
            )),
        }
    }
}

/// Handle given to a tool for the duration of one run of one task.
#[derive(Clone)]
pub struct TaskContext {
    pub(crate) engine: Engine,
    pub(crate) task_id: String,
    pub(crate) principal: String,
    pub(crate) cancel: CancellationToken,
    pub(crate) resumed: bool,
}

impl TaskContext {
    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// Name of the principal that owns the task (who asked for this work).
    pub fn principal(&self) -> &str {
        &self.principal
    }

    /// True when this run resumes a task after a restart: the tool starts again from the top and
    /// [`TaskContext::request_input`] replays inputs already answered.
    pub fn is_resumed(&self) -> bool {
        self.resumed
    }

    /// True once Taskdeck is stopping ([`Engine::is_stopping`](crate::Engine::is_stopping)): a
    /// run ending now is not the task's end (the next start gives it its fate).
    pub fn is_stopping(&self) -> bool {
        self.engine.is_stopping()
    }

    /// True once cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when cancellation is requested.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }

    /// Sets the task's `statusMessage` (appended to its timeline). Ignored once terminal. A
    /// message the store cannot take is dropped; see [`Self::status_message_stored`].
    pub async fn status_message(&self, message: impl Into<String>) {
        let _ = self.status_message_stored(message).await;
    }

    /// Sets the task's `statusMessage` like [`Self::status_message`], once it is stored.
    /// Errors: [`EngineError::DiskFull`] when the disk is full (the message is not kept),
    /// [`EngineError::Store`].
    pub async fn status_message_stored(
        &self,
        message: impl Into<String>,
    ) -> Result<(), EngineError> {
        self.engine
            .set_status_message(&self.task_id, message.into())
            .await
            .map(drop)
    }

    /// Reports progress: `current` of `total` (when known), with an optional message (which
    /// becomes the statusMessage). Returns at once: like MCP's `notifications/progress`, nobody
    /// waits for it. The store keeps it with its next commit, at most 50 ms later
    /// ([`crate::Store::write_unhurried`]), and a clean stop commits it first
    /// ([`crate::Store::flush`]); if the process dies within those 50 ms it is lost, and the
    /// task shows its previous progress until the next report. Ignored once terminal.
    pub fn progress(&self, current: f64, total: Option<f64>, message: Option<String>) {
        let progress = Progress {
            current,
            total,
            message,
        };
        let _ = self.engine.queue_progress(&self.task_id, progress);
    }

    /// [`Self::progress`], returning once the report is stored: for reports whose sender is
    /// told they were taken (an external job's). Errors: [`EngineError::NotFound`];
    /// [`EngineError::Store`].
    pub async fn progress_stored(
        &self,
        current: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), EngineError> {
        let progress = Progress {
            current,
            total,
            message,
        };
        self.engine.set_progress(&self.task_id, progress).await
    }

    /// Keeps this task from expiring while the run knows it is alive (an external job's runner
    /// reporting): see [`Engine::keep_alive`](crate::Engine). `at_least_ms`: the shortest
    /// window the task is kept for from a call that extends it (e.g. twice the runner's
    /// heartbeat timeout). Returns how long (ms) until a call can change anything again,
    /// `None` when never. Errors: [`EngineError::NotFound`]; [`EngineError::DiskFull`];
    /// [`EngineError::Store`].
    pub async fn keep_alive(&self, at_least_ms: u64) -> Result<Option<u64>, EngineError> {
        self.engine.keep_alive(&self.task_id, at_least_ms).await
    }

    /// Stores how this run ends now, before it returns `outcome` (which must be the same): for
    /// a tool whose caller must learn that the end is stored, e.g. an external job's final
    /// report, acknowledged only after this commit. When it fails the task is as it was and
    /// the run goes on (the caller may try again); once it succeeded, the executor's own
    /// settling of the returned outcome finds the task settled and changes nothing.
    ///
    /// Errors: [`EngineError::Terminal`] when the task was already settled otherwise (expired,
    /// cancelled): `outcome` was not stored; [`EngineError::NotFound`] when it was deleted;
    /// [`EngineError::DiskFull`]; [`EngineError::Store`].
    pub async fn settle(&self, outcome: Outcome) -> Result<(), EngineError> {
        match self
            .engine
            .finish_applied(&self.task_id, outcome, None)
            .await?
        {
            None => Ok(()),
            Some(status) => Err(EngineError::Terminal(status)),
        }
    }

    /// Every input request of this task so far, answered or not, oldest first: lets a resumed
    /// run tell what happened before the restart. Errors: [`EngineError::Store`].
    pub fn input_rounds(&self) -> Result<Vec<crate::model::InputRound>, EngineError> {
        self.engine.store().input_rounds(&self.task_id)
    }

    /// Asks the client for input under `key` (unique for the task's whole life) and waits for
    /// the answer. `request` is an SEP-2663 `InputRequest`: `{"method": "elicitation/create",
    /// "params": {...}}` (or `sampling/createMessage`, `roots/list`). The task is
    /// `input_required` while any request is outstanding.
    ///
    /// On a resumed run, the same request under a key already answered returns its stored
    /// answer at once and a key still outstanding is waited on again. Errors: [`InputError::Cancelled`] when the task is
    /// cancelled, [`InputError::NotIssued`] when the request cannot be stored (`Outcome::from`
    /// turns either into the tool's outcome).
    pub async fn request_input(&self, key: &str, request: Value) -> Result<Value, InputError> {
        self.engine.request_input(self, key, request, false).await
    }

    /// Stores input request `key` for the human without waiting for its answer (the task goes
    /// `input_required`; the answer is recorded when it comes, and the task returns to `working`
    /// once nothing is outstanding). For tools whose answers are read elsewhere, e.g. external
    /// jobs, whose runner reads them from its report replies. Idempotent for the same request.
    ///
    /// Errors: [`EngineError::KeyReused`] when `key` was used for another request during the
    /// task's life; [`EngineError::Terminal`]; [`EngineError::Store`].
    /// Only a person (the admin or a human principal) may answer it.
    pub async fn issue_input_for_human(
        &self,
        key: &str,
        request: Value,
    ) -> Result<(), EngineError> {
        self.engine
            .issue_input(self, key, request, true)
            .await
            .map(drop)
    }

    /// Like [`TaskContext::request_input`], but only a human (the admin principal, at the
    /// Taskdeck window or CLI) may answer: for requests built by the caller, e.g. an approval
    /// form carrying `_meta`. Same errors.
    pub async fn request_human_input(
        &self,
        key: &str,
        request: Value,
    ) -> Result<Value, InputError> {
        self.engine.request_input(self, key, request, true).await
    }

    /// Shows `arguments` (credentials masked) as this task's call from now on: a human
    /// approved it edited ([`Engine::edit_arguments`]). A store failure is logged, not
    /// returned: the run goes on with the call the human approved.
    pub async fn arguments_edited(&self, arguments: Value) {
        if let Err(e) = self.engine.edit_arguments(&self.task_id, arguments).await {
            tracing::warn!(task_id = %self.task_id, "the edited arguments were not stored: {e}");
        }
    }

    /// Records an approval decision about this task's call in the audit log and its timeline
    /// ([`Engine::record_decision`]; `rec.task_id` is set to this task). Errors: as there.
    pub async fn record_decision(
        &self,
        mut rec: crate::DecisionRecord,
    ) -> Result<crate::AuditEntry, EngineError> {
        rec.task_id = Some(self.task_id.clone());
        self.engine.record_decision(rec).await
    }

    /// Form-mode elicitation (`elicitation/create`, `mode: "form"`) under `key`. Returns the
    /// `ElicitResult` (`{"action": "accept"|"decline"|"cancel", "content"?: {...}}`).
    pub async fn elicit(
        &self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> Result<Value, InputError> {
        self.engine
            .request_input(self, key, form_request(message, requested_schema), false)
            .await
    }

    /// Like [`TaskContext::elicit`], but only a person (the admin or a human principal, at the
    /// Taskdeck window or CLI) may answer: the agent that asked cannot approve its own request.
    pub async fn elicit_human(
        &self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> Result<Value, InputError> {
        self.engine
            .request_input(self, key, form_request(message, requested_schema), true)
            .await
    }
}

fn form_request(message: &str, requested_schema: Value) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": requested_schema}
    })
}

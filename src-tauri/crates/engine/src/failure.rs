//! Why a task failed, as the engine records it: a [`TaskFailure`] (what kind of failure, a
//! message, optional data). The engine chooses no JSON-RPC code: the server installs one
//! [`FailureToErrorObject`] at [`Engine::new`](super::Engine::new), and the object it makes is
//! what the task stores as its `error` and every view shows (SEP-2663 §Task Polling:
//! `DetailedTask.error` of a `failed` task).
//!
//! The object is made once, when the task fails, so that reads copy the stored text as it is
//! (the hot `tasks/get` path decodes nothing) and tasks stored by earlier versions, whose
//! `error` already holds such an object, read the same.

use serde_json::Value;

/// What kind of failure ended a task. The wire mapping gives each kind its JSON-RPC code and,
/// for the engine's own kinds, its `data.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The engine could not see the run through: the tool panicked, or an input request it made
    /// could not be stored.
    Internal,
    /// Taskdeck restarted while the task ran (or waited for input) and its tool cannot resume.
    Restart,
    /// The task's `ttlMs` elapsed before it finished.
    Expired,
    /// The tool's run failed (a command timed out, a job's runner was lost, a client could not
    /// be set up...). Tool failures whose result the agent should read are not failures: they
    /// complete with `isError: true` (SEP-2663 §Task Execution Errors).
    Tool,
    /// The tool could not read its arguments although they passed the input schema (only
    /// arguments that bypassed the engine's schema check get there).
    InvalidArguments,
    /// A JSON-RPC error reported from outside with its own `code`, e.g. by an external job's
    /// runner (`POST /v1/jobs/{id}/report` with `error: {code, message, data?}`). The engine
    /// carries the code without reading it.
    Reported {
        /// The JSON-RPC error code, as reported.
        code: i64,
    },
}

/// A failed task's error as the engine records it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFailure {
    /// What kind of failure; the server maps it to a JSON-RPC error code.
    pub kind: FailureKind,
    /// Human-readable; also becomes the task's `statusMessage` (cut to
    /// [`STATUS_MESSAGE_MAX_BYTES`](super::limits::STATUS_MESSAGE_MAX_BYTES)).
    pub message: String,
    /// Details for the client (a JSON object), e.g. `{"durationMs", "tail", "log"}` of a
    /// command that timed out.
    pub data: Option<Value>,
}

impl TaskFailure {
    /// A failure of `kind` with `message` and optional `data`.
    pub fn new(kind: FailureKind, message: impl Into<String>, data: Option<Value>) -> TaskFailure {
        TaskFailure {
            kind,
            message: message.into(),
            data,
        }
    }

    /// A [`FailureKind::Tool`] failure: the tool's run could not do its work.
    pub fn tool(message: impl Into<String>, data: Option<Value>) -> TaskFailure {
        TaskFailure::new(FailureKind::Tool, message, data)
    }
}

/// Makes the JSON-RPC error object `{code, message, data?}` a failed task stores and clients
/// see. Installed by the server at [`Engine::new`](super::Engine::new); called once per failed
/// task, inside the write that fails it.
pub type FailureToErrorObject = fn(&TaskFailure) -> Value;

//! Engine errors. Adapters map them to JSON-RPC codes and HTTP statuses; the engine never
//! chooses a wire code itself.

use super::TaskStatus;

/// What can go wrong in an engine call.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No task with this id is visible to the caller (it never existed, expired, or belongs to
    /// another principal: the three are deliberately indistinguishable).
    #[error("Task not found")]
    NotFound,
    /// The state machine forbids this transition.
    #[error("illegal transition {from:?} -> {to:?}")]
    IllegalTransition { from: TaskStatus, to: TaskStatus },
    /// An input request key was issued twice with a different request, or after it was
    /// superseded; keys are unique for the task's whole life (SEP-2663 §Task Update Requests).
    #[error("input request key {0:?} was already used in this task")]
    KeyReused(String),
    /// The caller's input is invalid (bad arguments, an answer that fails its schema...).
    #[error("{0}")]
    Invalid(String),
    /// The task is settled and cannot take this operation.
    #[error("task is already {0:?}")]
    Terminal(TaskStatus),
    /// The store failed (I/O, corruption, full disk).
    #[error("store: {0}")]
    Store(String),
}

impl From<rusqlite::Error> for EngineError {
    fn from(e: rusqlite::Error) -> Self {
        EngineError::Store(e.to_string())
    }
}

impl From<serde_json::Error> for EngineError {
    fn from(e: serde_json::Error) -> Self {
        EngineError::Store(format!("json: {e}"))
    }
}

//! Engine errors. Adapters map them to JSON-RPC codes and HTTP statuses; the engine never
//! chooses a wire code itself.

use super::TaskStatus;

/// What can go wrong in an engine call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// No task with this id is visible to the caller (it never existed, expired, or belongs to
    /// another principal: the three are deliberately indistinguishable).
    #[error("Task not found")]
    NotFound,
    /// The state machine forbids this transition.
    #[error("illegal transition {from:?} -> {to:?}")]
    IllegalTransition {
        /// The task's status.
        from: TaskStatus,
        /// The status asked for.
        to: TaskStatus,
    },
    /// An input request key was issued twice with a different request, or after it was
    /// superseded; keys are unique for the task's whole life (SEP-2663 §Task Update Requests).
    #[error("input request key {0:?} was already used in this task")]
    KeyReused(String),
    /// The caller's input is invalid (bad arguments, an answer that fails its schema...).
    #[error("{0}")]
    Invalid(String),
    /// A value the caller sent is over its cap in [`crate::limits`] (arguments, an answer, an
    /// input request, `_meta`...): refused whole, nothing of the call is recorded. `limit` is
    /// the cap in bytes of compact JSON (or UTF-8 text); the message says what and how large.
    #[error("{message}")]
    TooLarge {
        /// What was too large, how large, and the cap.
        message: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// A person's `accept` of a question while the run holds hidden values that person has not
    /// read whole ([`crate::Engine::reveal_hidden`]): refused until they do, and nothing of the
    /// answer is recorded.
    #[error(
        "{key}: this call is shown with values hidden, and {by} has not read it whole: read it \
         first, then approve it"
    )]
    HiddenUnread {
        /// The question's key.
        key: String,
        /// The task's id.
        task_id: String,
        /// Who answered.
        by: String,
    },
    /// The task is settled and cannot take this operation.
    #[error("task is already {0:?}")]
    Terminal(TaskStatus),
    /// The store failed (I/O, corruption).
    #[error("store: {0}")]
    Store(String),
    /// The store's file system is full (SQLITE_FULL, or ENOSPC): the write was not made and
    /// nothing committed before it is lost. Reads still work, and writes succeed again as soon
    /// as there is space (the writer thread keeps running); the text is SQLite's message.
    #[error(
        "the disk holding the task store is full ({0}); free some space, writes resume by themselves"
    )]
    DiskFull(String),
}

impl EngineError {
    /// True for [`EngineError::DiskFull`].
    pub fn is_disk_full(&self) -> bool {
        matches!(self, EngineError::DiskFull(_))
    }
}

/// SQLite's "database or disk is full" (SQLITE_FULL, also what it reports for ENOSPC) becomes
/// [`EngineError::DiskFull`]; every other SQLite error [`EngineError::Store`].
impl From<rusqlite::Error> for EngineError {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DiskFull) => EngineError::DiskFull(e.to_string()),
            _ => EngineError::Store(e.to_string()),
        }
    }
}

impl From<serde_json::Error> for EngineError {
    fn from(e: serde_json::Error) -> Self {
        EngineError::Store(format!("json: {e}"))
    }
}

//! `taskdeck-engine`: the task engine. Model, state machine, durable store, change feed, search
//! index, the [`Engine`] (tool registry, executors, input rounds, retention and its sweeper),
//! how a failed task's error is recorded (`failure`), idempotent creation (`idempotency`), the
//! hash-chained audit log of approval decisions (`audit`), the caps on what tasks store
//! (`limits`), and the lock that keeps a data dir to one process (`data_dir_lock`). It depends on no web, MCP-transport, CLI or desktop crate (its Cargo.toml is
//! checked by `tests/integration/layers.rs`): adapters translate its calls to the wire.
//!
//! Invariants (kept true by this module and relied upon by every adapter):
//! - every state change goes through [`Engine`] methods that run inside one store write, which
//!   checks the transition with [`state::check_transition`] and appends a timeline event;
//! - a change is published on the [`feed::ChangeFeed`] only after its write committed;
//! - a task is visible only to its principal and to people (the admin and human principals,
//!   [`principal`]); everyone else gets
//!   [`EngineError::NotFound`], exactly as for an id that never existed.

#![warn(missing_docs)]

pub mod answer_cache;
pub mod audit;
pub mod clock;
mod context;
pub mod data_dir_lock;
pub mod detailed_task;
mod engine;
pub mod error;
pub mod failure;
pub mod feed;
pub mod idempotency;
pub mod limits;
pub mod model;
pub mod principal;
mod priority;
pub mod search;
pub mod state;
pub mod store;

pub use audit::{
    AuditEntry, AuditProblem, AuditVerification, ChainLink, DecisionRecord, verify_chain,
};
pub use context::{InputError, Outcome, TaskContext};
pub use engine::{
    AnswerReport, Deletion, EXPIRED_BY, Engine, EngineConfig, HiddenHeld, HostedAnswers, Recovery,
    Settlement, TaskTool, ToolDescriptor, ToolMode, argument_errors, expired_response,
    is_expired_response, retention_elapsed, schema_error_message,
};
pub use error::EngineError;
pub use failure::{FailureKind, FailureToErrorObject, TaskFailure};
pub use model::{InputRound, Progress, TaskRecord, TaskStatus, TimelineEvent};
pub use principal::{Principal, Role};

//! `taskdeck-engine`: the task engine. Model, state machine, durable store, change feed, search
//! index, executors, sweeper, idempotent creation (`idempotency`), and the caps on what tasks
//! store (`limits`). It depends on no web, MCP-transport, CLI or desktop crate (its Cargo.toml
//! is checked by `tests/integration/layers.rs`): adapters translate its calls to the wire.
//!
//! Invariants (kept true by this module and relied upon by every adapter):
//! - every state change goes through [`Engine`] methods that run inside one store write, which
//!   checks the transition with [`state::check_transition`] and appends a timeline event;
//! - a change is published on the [`feed::ChangeFeed`] only after its write committed;
//! - a task is visible only to its principal (and the admin); everyone else gets
//!   [`EngineError::NotFound`], exactly as for an id that never existed.

pub mod answer_cache;
pub mod clock;
mod context;
pub mod detailed_task;
// The module holding the `Engine` type is named for it, like the layer.
#[allow(clippy::module_inception)]
mod engine;
pub mod error;
pub mod feed;
pub mod idempotency;
pub mod limits;
pub mod model;
pub mod search;
pub mod state;
pub mod store;
mod sweeper;

pub use context::{InputError, Outcome, TaskContext};
pub use engine::{Engine, EngineConfig, TaskTool, ToolDescriptor, ToolMode, argument_errors};
pub use error::EngineError;
pub use model::{Principal, Progress, TaskRecord, TaskStatus, TimelineEvent};

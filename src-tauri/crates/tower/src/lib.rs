//! `taskdeck-tower`: Taskdeck's durable SQLite task store as a tower-mcp
//! [`TaskStore`](tower_mcp::async_task::TaskStore). A tower-mcp server keeps its tasks across
//! restarts by giving its router a [`TaskdeckStore`] instead of the in-memory store:
//!
//! ```no_run
//! # async fn build() -> Result<(), Box<dyn std::error::Error>> {
//! let store = taskdeck_tower::TaskdeckStore::open("tasks")?;
//! let router = tower_mcp::McpRouter::new().with_tasks().task_store(std::sync::Arc::new(store));
//! # let _ = router; Ok(()) }
//! ```
//!
//! Every task lives in Taskdeck's engine (`taskdeck-engine`): one SQLite file, one timeline
//! event per change, and the engine's change feed, from which this crate raises cancellation
//! tokens and wakes completion waiters. It passes tower-mcp's own contract suites
//! (`task_store_contract` and `task_store_optional_contract`, `tests/contract.rs`).
//!
//! [`RemoteTaskdeckStore`] implements the same trait over a running Taskdeck's HTTP API
//! instead: its tasks appear in Taskdeck's window, where a person answers their input requests
//! and presses their cancel (`tests/remote_contract.rs` holds it to the same suites).
//!
//! Parts: `store` (opening and the settings), `task_store` (the trait, method by method),
//! `views` (Taskdeck's records as tower-mcp's types), `signals` (tokens and waiters),
//! `remote` (the store over HTTP).

#![warn(missing_docs)]

mod remote;
mod signals;
mod store;
mod task_store;
mod views;

pub use remote::RemoteTaskdeckStore;
pub use store::{StoreOptions, TaskdeckStore};

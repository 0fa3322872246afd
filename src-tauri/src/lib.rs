//! Taskdeck: a control room for long-running agent work.
//!
//! The crate is layered, and the layers show in the module tree (see `ARCHITECTURE.md`):
//!
//! - [`engine`]: the task model, the state machine, the durable SQLite store, the change feed,
//!   the executor runtime and the TTL sweeper. It knows nothing of HTTP, MCP transports or Tauri.
//! - [`tools`]: the task tools agents call (`request_approval`, the conformance fixtures). They
//!   run inside the engine through [`engine::TaskContext`].
//! - [`adapters`]: translate the outside world into engine calls and back: the MCP endpoint
//!   (rmcp Streamable HTTP), the `/v1` HTTP API, the event stream, authentication.
//! - [`shell`]: wires the layers into a running process (`taskdeck serve`); `desktop` (cargo
//!   feature `desktop`) adds the Tauri window, notifications and the tray.

pub mod adapters;
#[cfg(feature = "desktop")]
pub mod desktop;
pub mod engine;
pub mod shell;
pub mod tools;

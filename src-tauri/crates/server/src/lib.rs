//! `taskdeck-server`: everything between the engine and a running process, with no CLI or
//! desktop code.
//!
//! - [`tools`]: the task tools agents call (`run_command`, `request_approval`,
//!   `wait_for_http_job`, external jobs, the conformance fixtures). They run inside the engine
//!   through [`taskdeck_engine::TaskContext`].
//! - [`adapters`]: translate the outside world into engine calls and back: the MCP endpoint
//!   (both protocol eras), the `/v1` HTTP API, the event stream, authentication.
//! - [`hooks`]: Claude Code's and Codex's hooks: permission requests through the policy and
//!   the human, agent sessions as tasks.
//! - [`serve`]: the headless server (`taskdeck serve`), which the desktop shell also starts;
//!   [`listen`]: its HTTP/1.1 connection loop.
//! - [`paths`]: where data and configuration live (XDG, overridable).

#![warn(missing_docs)]

pub mod adapters;
pub mod approvals;
pub use taskdeck_engine::data_dir_lock;
pub mod doctor;
pub mod gateway;
pub mod hooks;
pub mod listen;
pub mod paths;
pub mod policy;
pub mod serve;
pub mod tools;

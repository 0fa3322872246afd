//! `taskdeck-server`: everything between the engine and a running process, with no CLI or
//! desktop code.
//!
//! - [`tools`]: the task tools agents call (`run_command`, `request_approval`,
//!   `wait_for_http_job`, external jobs, the conformance fixtures). They run inside the engine
//!   through [`taskdeck_engine::TaskContext`].
//! - [`adapters`]: translate the outside world into engine calls and back: the MCP endpoint
//!   (both protocol eras), the `/v1` HTTP API, the event stream, authentication.
//! - [`serve`]: the headless server (`taskdeck serve`), which the desktop shell also starts.
//! - [`paths`]: where data and configuration live (XDG, overridable).

pub mod adapters;
pub mod approvals;
pub mod gateway;
pub mod paths;
pub mod policy;
pub mod serve;
pub mod tools;

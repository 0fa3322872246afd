//! The command-line clients that talk to a running Taskdeck over its HTTP API.
//!
//! - [`run_cli`]: `taskdeck run -- CMD`, a local command watched as an external job; its
//!   HTTP side (starting the job, reporting to it) is `run_job`.
//! - [`tasks_cli`]: `taskdeck tasks list|show|answer|cancel`.
//! - [`servers_cli`]: `taskdeck servers add|remove|list|import` (the gateway's upstreams;
//!   `import`'s file side is `servers_import`).
//! - [`audit_cli`]: `taskdeck audit export|verify` (the audit log of approval decisions).

pub mod audit_cli;
pub mod run_cli;
mod run_job;
pub mod servers_cli;
mod servers_import;
pub mod tasks_cli;

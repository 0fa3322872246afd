//! The command-line clients that talk to a running Taskdeck over its HTTP API.
//!
//! - [`run_cli`]: `taskdeck run -- CMD`, a local command watched as an external job; its
//!   HTTP side (starting the job, reporting to it) is `run_job`.
//! - [`tasks_cli`]: `taskdeck tasks list|show|answer|cancel`.

pub mod run_cli;
mod run_job;
pub mod tasks_cli;

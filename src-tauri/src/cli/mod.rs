//! The command-line clients that talk to a running Taskdeck over its HTTP API.
//!
//! - [`run_cli`]: `taskdeck run -- CMD`, a local command watched as an external job; its
//!   HTTP side (starting the job, reporting to it) is `run_job`, the way of its output from
//!   the command to ours `run_output`.
//! - [`tasks_cli`]: `taskdeck tasks list|show|answer|cancel` (`task_table` lays out the list);
//!   [`task_actions_cli`]: `taskdeck tasks rerun|delete|clear`.
//! - [`servers_cli`]: `taskdeck servers add|remove|list|import` (the gateway's upstreams;
//!   `import`'s file side is `servers_import`).
//! - [`hook_cli`]: `taskdeck hook claude-code|codex|codex-notify|install|uninstall`, the coding
//!   agents' hooks (`hook_install` writes their settings, `hook_settings` is the JSON merge,
//!   `hook_file` writes a file with its backup).
//! - [`audit_cli`]: `taskdeck audit export|verify` (the audit log of approval decisions).
//! - `endpoint`: which Taskdeck the client commands talk to, with which token, and what a
//!   refused token means.
//! - [`doctor_cli`]: `taskdeck doctor`, the checks of the store, search index, disk, lock, port and
//!   admin token; [`backup_cli`]: `taskdeck backup|restore` (docs/operations.md).
//! - [`autostart_cli`]: `taskdeck autostart on|off|status`, the XDG autostart entry
//!   ([`autostart`]) that starts the window hidden in the tray at login.

pub mod agent_token;
pub mod audit_cli;
pub mod autostart;
pub mod autostart_cli;
pub mod backup_cli;
pub mod doctor_cli;
mod endpoint;
pub mod hook_cli;
mod hook_file;
mod hook_install;
mod hook_settings;
pub mod run_cli;
mod run_job;
mod run_output;
pub mod servers_cli;
mod servers_import;
pub mod task_actions_cli;
pub use endpoint::Target;
mod task_table;
mod task_timeline;
pub mod tasks_cli;
mod tasks_watch;
mod terminal_text;

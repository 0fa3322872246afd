//! The `taskdeck` package: the shells around [`taskdeck_server`].
//!
//! - [`cli`]: the command-line clients of a running Taskdeck (`taskdeck run`, `taskdeck tasks`).
//! - `desktop` (cargo feature `desktop`): the Tauri window, desktop notifications and the tray.
//!
//! The binary (`main.rs`) parses the command line and hands over to one of these, or to
//! [`taskdeck_server::serve`] for `taskdeck serve`.

#![warn(missing_docs)]

pub mod cli;
#[cfg(feature = "desktop")]
pub mod desktop;

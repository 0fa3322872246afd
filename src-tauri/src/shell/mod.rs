//! Shells: wire the engine and adapters into a running process. They decide nothing; they read
//! settings, open the store, start the server and print where things are.
//!
//! - [`paths`]: where data and configuration live (XDG, overridable).
//! - [`serve`]: the headless server (`taskdeck serve`).

pub mod paths;
pub mod run_cli;
pub mod serve;
pub mod tasks_cli;

//! Integration tests: each starts the real `taskdeck serve` binary on an ephemeral port with a
//! temporary data dir and talks HTTP to it, as an agent, a script or the UI would.

mod harness;

mod api;
mod approvals;
mod audit;
mod autostart;
mod crash;
mod cursors;
mod gateway;
mod hooks;
mod hosted_tasks;
mod http_jobs;
mod humans;
mod idempotency;
mod jobs;
mod layers;
mod legacy;
mod legacy_tasks;
mod lifecycle;
mod limits;
mod listen_frames;
mod mcp_fuzz;
mod names;
mod policy_api;
mod power_loss;
mod run_cli;
mod search;
mod security;
mod servers_api;
mod servers_import;
mod store_faults;
mod task_actions;
mod ttl;

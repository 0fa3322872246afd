//! The task tools agents call. Each runs inside the engine through a
//! [`TaskContext`](crate::engine::TaskContext); none knows about HTTP or MCP transports.

pub mod approval;
pub mod fixtures;
pub mod schema;

use std::sync::Arc;

use crate::engine::Engine;

/// Registers the tools every Taskdeck serves (`request_approval`), plus the conformance suite's
/// fixture task tools when `fixtures` is set.
pub fn register_all(engine: &Engine, fixtures: bool) {
    engine.register_tool(Arc::new(approval::RequestApproval::new()));
    if fixtures {
        fixtures::register(engine);
    }
}

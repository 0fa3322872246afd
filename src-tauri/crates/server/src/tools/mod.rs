//! The task tools agents call. Each runs inside the engine through a
//! [`TaskContext`](taskdeck_engine::TaskContext); none knows about HTTP or MCP transports.

pub mod approval;
pub mod arguments;
pub mod destination;
pub mod external;
pub mod fixtures;
pub mod http_job;
pub mod http_permission;
pub mod http_reach;
pub mod log_removal;
pub mod output;
pub mod process;
pub mod run_command;
pub mod schema;
mod secret_options;
mod secret_tokens;
pub mod secrets;

#[cfg(test)]
mod schema_parity;

use std::sync::Arc;

use crate::policy::Policy;
use taskdeck_engine::Engine;

/// Registers the tools every Taskdeck serves (`request_approval`, `run_command`, `wait_for_http_job`, external jobs), plus the
/// conformance suite's fixture task tools when `fixtures` is set; `run_command` and
/// `wait_for_http_job` ask `policy`. Returns the external-jobs tool
/// (the jobs API relays runners' reports to it).
pub fn register_all(
    engine: &Engine,
    fixtures: bool,
    policy: Arc<Policy>,
    data_dir: &std::path::Path,
) -> Arc<external::ExternalJobs> {
    engine.register_tool(Arc::new(approval::RequestApproval::new()));
    engine.register_tool(Arc::new(run_command::RunCommand::new(
        policy.clone(),
        data_dir,
    )));
    engine.register_tool(Arc::new(http_job::WaitForHttpJob::new(policy)));
    let external = external::ExternalJobs::new(data_dir);
    engine.register_tool(external.clone());
    if fixtures {
        fixtures::register(engine);
    }
    external
}

//! A tower-mcp server (stdio) whose tasks live in a running Taskdeck: every task shows in
//! Taskdeck's window (titled by the tool, under the token's principal), and a cancel pressed
//! there stops the handler. The same server as `durable_tasks`, with
//! [`RemoteTaskdeckStore`](taskdeck_tower::RemoteTaskdeckStore) in place of the local store.
//!
//! ```bash
//! taskdeck serve &                                    # or the desktop app
//! export TASKDECK_URL=http://127.0.0.1:4747           # as `taskdeck serve` prints it
//! export TASKDECK_TOKEN=$(taskdeck token create my-tower-server)
//! cargo run -p taskdeck-tower --example remote_tasks
//! ```
//!
//! Call `build_report` as a task (2025-11-25: `tools/call` with `params.task`; 2026-07-28 with
//! the tasks extension declared): the task appears in the window at once; pressing Cancel in
//! the window raises the task's cancellation token, and the handler stops at its next step.
//! Its progress notifications go to the MCP client, not to the window: a task's status message
//! in the window is what the store's `set_status` records (a live handler's
//! `TaskContext::working(message)`). `deliver_answers_to` lets a live handler waiting in
//! `TaskContext::require_input` be woken by a person's answer in the window.

use std::{sync::Arc, time::Duration};

use schemars::JsonSchema;
use serde::Deserialize;
use tower_mcp::{
    CallToolResult, McpRouter, StdioTransport, TaskSupportMode, ToolBuilder,
    extract::{Context, Json},
};

/// Arguments of `build_report`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReportInput {
    /// How long the report takes, in seconds (one step a second).
    seconds: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The store's warnings (an outcome kept while Taskdeck is down) on stderr; stdout is MCP's.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let url = std::env::var("TASKDECK_URL").map_err(|_| "set TASKDECK_URL")?;
    let token = std::env::var("TASKDECK_TOKEN").map_err(|_| "set TASKDECK_TOKEN")?;

    let build_report = ToolBuilder::new("build_report")
        .description("Build a report, one step a second; cancellable from Taskdeck's window.")
        .task_support(TaskSupportMode::Optional)
        .extractor_handler(
            (),
            |ctx: Context, Json(input): Json<ReportInput>| async move {
                for step in 0..input.seconds {
                    if ctx.is_cancelled() {
                        return Ok(CallToolResult::error("cancelled in Taskdeck's window"));
                    }
                    ctx.report_progress(step as f64, Some(input.seconds as f64), Some("building"))
                        .await;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Ok(CallToolResult::text(format!(
                    "report built in {} s",
                    input.seconds
                )))
            },
        )
        .build();

    // The one line that puts the tasks in Taskdeck (instead of `MemoryTaskStore::new()`).
    let task_store = Arc::new(taskdeck_tower::RemoteTaskdeckStore::connect(&url, &token).await?);

    let router = McpRouter::new()
        .server_info("remote-tasks-example", env!("CARGO_PKG_VERSION"))
        .task_store(task_store.clone())
        .tool(build_report)
        .with_tasks();
    // Answers given in the window reach handlers waiting for them.
    task_store.deliver_answers_to(router.clone());

    StdioTransport::new(router).run().await?;
    Ok(())
}

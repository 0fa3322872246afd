//! A tower-mcp server (stdio) whose tasks survive its restart: the same server as tower-mcp's
//! own tasks example, with Taskdeck's durable store in place of `MemoryTaskStore`.
//!
//! ```bash
//! cargo run -p taskdeck-tower --example durable_tasks -- ./tower-tasks
//! ```
//!
//! The argument is the store's directory (default `./tower-tasks`; it holds
//! `taskdeck.sqlite3`). Call `build_report` as a task (2025-11-25: `tools/call` with
//! `params.task`; 2026-07-28 with the tasks extension declared), stop the server, start it
//! again on the same directory: `tasks/get` still finds the task, with its result if it
//! finished. A task whose handler was running when the server stopped stays `working` until
//! its ttlMs elapses (the handler itself is gone with the process).

use std::{sync::Arc, time::Duration};

use schemars::JsonSchema;
use serde::Deserialize;
use tower_mcp::{CallToolResult, McpRouter, StdioTransport, TaskSupportMode, ToolBuilder};

/// Arguments of `build_report`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ReportInput {
    /// How long the report takes, in seconds.
    seconds: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tower-tasks".into());

    let build_report = ToolBuilder::new("build_report")
        .description("Build a report; slow enough to be worth a task.")
        .task_support(TaskSupportMode::Optional)
        .handler(|input: ReportInput| async move {
            tokio::time::sleep(Duration::from_secs(input.seconds)).await;
            Ok(CallToolResult::text(format!(
                "report built in {} s",
                input.seconds
            )))
        })
        .build();

    // The one line that makes tasks durable (instead of `MemoryTaskStore::new()`).
    let task_store = Arc::new(taskdeck_tower::TaskdeckStore::open(&dir)?);

    let router = McpRouter::new()
        .server_info("durable-tasks-example", env!("CARGO_PKG_VERSION"))
        .task_store(task_store)
        .tool(build_report)
        .with_tasks();

    StdioTransport::new(router).run().await?;
    Ok(())
}

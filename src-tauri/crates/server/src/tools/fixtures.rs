//! The task tools the official MCP conformance suite calls (served with
//! `--conformance-fixtures`; see `../shared/notes/mcp-conformance.md`). They are real tools on
//! the real engine: their tasks are stored, swept and cancelled like any other.
//!
//! - `slow_compute {seconds, label}`: works for `seconds`, reporting progress; ends `cancelled`
//!   when cancelled mid-run.
//! - `failing_job`: after about 1 s completes with an `isError: true` result.
//! - `protocol_error_job`: fails with a JSON-RPC error (`-32603`).
//! - `confirm_delete {filename}`: one elicitation (`confirm`), then completes.
//! - `multi_input`: two elicitations outstanding at once; completes when both are answered.
//! - `echo`: completes at once with its arguments (the benchmarks' creation workload).
//! - `test_tool_with_task`: the task half of the MRTR composition fixture: greets the
//!   `user_name` gathered by the synchronous round (see `adapters::mcp_fixtures`).

use std::{sync::Arc, time::Duration};

use futures::{FutureExt, future::BoxFuture};
use serde_json::{Value, json};

use taskdeck_engine::{
    Engine, Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode,
};

type Run = fn(TaskContext, Value) -> BoxFuture<'static, Outcome>;

struct Fixture {
    descriptor: ToolDescriptor,
    run: Run,
}

impl TaskTool for Fixture {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }
    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        (self.run)(ctx, arguments)
    }
}

fn fixture(
    name: &str,
    description: &str,
    input_schema: Value,
    required: bool,
    run: Run,
) -> Arc<dyn TaskTool> {
    Arc::new(Fixture {
        descriptor: ToolDescriptor {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            mode: ToolMode::Task { required },
            resumable: false,
            agent_callable: true,
        },
        run,
    })
}

/// Seconds a `slow_compute` call asks for (`seconds`, default 1, at most one hour).
pub fn slow_compute_seconds(arguments: &Value) -> f64 {
    arguments
        .get("seconds")
        .and_then(Value::as_f64)
        .unwrap_or(1.0)
        .clamp(0.0, 3600.0)
}

/// The text `slow_compute` returns for `label` after `seconds`.
pub fn slow_compute_text(arguments: &Value) -> String {
    let label = arguments
        .get("label")
        .and_then(Value::as_str)
        .unwrap_or("job");
    format!("Computed {label} in {}s", slow_compute_seconds(arguments))
}

fn slow_compute(ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        let total_ms = (slow_compute_seconds(&arguments) * 1000.0) as u64;
        let steps = 10u64;
        for step in 1..=steps {
            tokio::select! {
                _ = ctx.cancelled() => return Outcome::Cancelled,
                _ = tokio::time::sleep(Duration::from_millis(total_ms / steps)) => {}
            }
            ctx.progress(
                step as f64,
                Some(steps as f64),
                Some(format!("step {step} of {steps}")),
            )
            .await;
        }
        Outcome::text(slow_compute_text(&arguments))
    }
    .boxed()
}

fn failing_job(ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        tokio::select! {
            _ = ctx.cancelled() => return Outcome::Cancelled,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        Outcome::Completed(json!({"content": [{"type": "text", "text": "The job failed: the input could not be processed"}], "isError": true}))
    }
    .boxed()
}

fn protocol_error_job(_ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Outcome::Failed(TaskFailure::tool(
            "Internal error: the job's backend rejected the request",
            None,
        ))
    }
    .boxed()
}

fn confirm_delete(ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        let filename = arguments.get("filename").and_then(Value::as_str).unwrap_or("file").to_string();
        let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Delete it?"}}, "required": ["confirm"]});
        let answer = match ctx.elicit("confirm-delete", &format!("Delete {filename}?"), schema).await {
            Ok(answer) => answer,
            Err(e) => return e.into(),
        };
        let confirmed = answer.get("action").and_then(Value::as_str) == Some("accept")
            && answer.pointer("/content/confirm").and_then(Value::as_bool) == Some(true);
        Outcome::text(if confirmed { format!("Deleted {filename}") } else { format!("Kept {filename}") })
    }
    .boxed()
}

fn multi_input(ctx: TaskContext, _arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        let name = json!({"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}});
        let (a, b) = tokio::join!(
            ctx.elicit("first-answer", "First question: your name?", name.clone()),
            ctx.elicit("second-answer", "Second question: confirm?", name)
        );
        match (a, b) {
            (Ok(a), Ok(b)) => Outcome::text(format!("Got both answers: {} and {}", a["content"], b["content"])),
            (Err(e), _) | (_, Err(e)) => e.into(),
        }
    }
    .boxed()
}

fn echo(_ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        Outcome::Completed(json!({"content": [{"type": "text", "text": arguments.to_string()}], "structuredContent": arguments, "isError": false}))
    }
    .boxed()
}

fn test_tool_with_task(_ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
    async move {
        let name = arguments
            .get("user_name")
            .and_then(Value::as_str)
            .unwrap_or("stranger")
            .to_string();
        tokio::time::sleep(Duration::from_millis(300)).await;
        Outcome::text(format!("Hello, {name}! Your task is done."))
    }
    .boxed()
}

/// Registers the fixture task tools on `engine`.
pub fn register(engine: &Engine) {
    let obj = |props: Value| json!({"type": "object", "properties": props});
    let tools = [
        fixture(
            "slow_compute",
            "Works for `seconds` seconds, then returns; runs as a task when it can.",
            obj(json!({"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}})),
            false,
            slow_compute,
        ),
        fixture(
            "failing_job",
            "Runs about 1 s, then completes with a tool error (isError). Needs task support.",
            obj(json!({})),
            true,
            failing_job,
        ),
        fixture(
            "protocol_error_job",
            "Fails with a JSON-RPC error. Needs task support.",
            obj(json!({})),
            true,
            protocol_error_job,
        ),
        fixture(
            "confirm_delete",
            "Asks for confirmation before deleting `filename`. Needs task support.",
            obj(json!({"filename": {"type": "string"}})),
            true,
            confirm_delete,
        ),
        fixture(
            "multi_input",
            "Asks two questions at once. Needs task support.",
            obj(json!({})),
            true,
            multi_input,
        ),
        fixture(
            "echo",
            "Completes at once with its arguments.",
            json!({"type": "object"}),
            false,
            echo,
        ),
        fixture(
            "test_tool_with_task",
            "Asks for your name (synchronously), then greets you from a task.",
            obj(json!({})),
            true,
            test_tool_with_task,
        ),
    ];
    for t in tools {
        engine.register_tool(t);
    }
}

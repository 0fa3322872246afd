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
use schemars::JsonSchema;
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};

use super::arguments::{input_schema, parse, parse_for_run};
use taskdeck_engine::{
    Engine, Outcome, TaskContext, TaskFailure, TaskTool, ToolDescriptor, ToolMode,
};

/// One fixture's run, given its arguments as `A`.
type Run<A> = fn(TaskContext, A) -> BoxFuture<'static, Outcome>;

/// A fixture tool whose arguments are `A` (its input schema is derived from `A`).
struct Fixture<A> {
    descriptor: ToolDescriptor,
    run: Run<A>,
}

impl<A: DeserializeOwned + Send + Sync + 'static> TaskTool for Fixture<A> {
    fn descriptor(&self) -> &ToolDescriptor {
        &self.descriptor
    }
    /// The arguments parse as `A` (refused when the task is asked for, not when it runs).
    fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        parse::<A>(&self.descriptor.name, arguments).map(drop)
    }
    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome> {
        match parse_for_run(&self.descriptor.name, arguments) {
            Ok(arguments) => (self.run)(ctx, arguments),
            Err(outcome) => std::future::ready(outcome).boxed(),
        }
    }
}

fn fixture<A: DeserializeOwned + JsonSchema + Send + Sync + 'static>(
    name: &str,
    description: &str,
    required: bool,
    run: Run<A>,
) -> Arc<dyn TaskTool> {
    Arc::new(Fixture {
        descriptor: ToolDescriptor {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: input_schema::<A>(),
            mode: ToolMode::Task { required },
            resumable: false,
            agent_callable: true,
        },
        run,
    })
}

/// The arguments of a fixture that takes none: `{}` (other fields are ignored). The schema
/// lists its empty `properties`, as clients that read `properties` expect.
#[derive(Deserialize, JsonSchema)]
#[schemars(extend("properties" = {}))]
struct NoArguments {}

/// `slow_compute`'s arguments: `{seconds?: number >= 0, label?: string}`.
#[derive(Deserialize, JsonSchema)]
struct SlowComputeArguments {
    #[schemars(range(min = 0))]
    seconds: Option<f64>,
    label: Option<String>,
}

impl SlowComputeArguments {
    /// `seconds`, default 1, at most one hour.
    fn seconds(&self) -> f64 {
        self.seconds.unwrap_or(1.0).clamp(0.0, 3600.0)
    }

    /// The text returned after [`seconds`](Self::seconds): `Computed <label> in <seconds>s`.
    fn text(&self) -> String {
        let label = self.label.as_deref().unwrap_or("job");
        format!("Computed {label} in {}s", self.seconds())
    }
}

/// Seconds a `slow_compute` call asks for (`seconds`, default 1, at most one hour); arguments
/// that are no `slow_compute` arguments count as the default.
pub fn slow_compute_seconds(arguments: &Value) -> f64 {
    parse::<SlowComputeArguments>("slow_compute", arguments).map_or(1.0, |a| a.seconds())
}

/// The text `slow_compute` returns for `label` after `seconds` (defaults as the run has them).
pub fn slow_compute_text(arguments: &Value) -> String {
    parse::<SlowComputeArguments>("slow_compute", arguments)
        .map_or_else(|_| "Computed job in 1s".to_string(), |a| a.text())
}

/// `confirm_delete`'s arguments: `{filename?: string}`.
#[derive(Deserialize, JsonSchema)]
struct ConfirmDeleteArguments {
    filename: Option<String>,
}

/// `test_tool_with_task`'s arguments: none in its schema; `user_name`, which the synchronous
/// round gathered, is added by the MRTR composition (`adapters::mcp_fixtures`).
#[derive(Deserialize, JsonSchema)]
#[schemars(extend("properties" = {}))]
struct GreetingArguments {
    #[schemars(skip)]
    user_name: Option<String>,
}

fn slow_compute(ctx: TaskContext, arguments: SlowComputeArguments) -> BoxFuture<'static, Outcome> {
    async move {
        let total_ms = (arguments.seconds() * 1000.0) as u64;
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
            );
        }
        Outcome::text(arguments.text())
    }
    .boxed()
}

fn failing_job(ctx: TaskContext, _arguments: NoArguments) -> BoxFuture<'static, Outcome> {
    async move {
        tokio::select! {
            _ = ctx.cancelled() => return Outcome::Cancelled,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        Outcome::Completed(json!({"content": [{"type": "text", "text": "The job failed: the input could not be processed"}], "isError": true}))
    }
    .boxed()
}

fn protocol_error_job(_ctx: TaskContext, _arguments: NoArguments) -> BoxFuture<'static, Outcome> {
    async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Outcome::Failed(TaskFailure::tool(
            "Internal error: the job's backend rejected the request",
            None,
        ))
    }
    .boxed()
}

fn confirm_delete(
    ctx: TaskContext,
    arguments: ConfirmDeleteArguments,
) -> BoxFuture<'static, Outcome> {
    async move {
        let filename = arguments.filename.unwrap_or_else(|| "file".into());
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

fn multi_input(ctx: TaskContext, _arguments: NoArguments) -> BoxFuture<'static, Outcome> {
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

fn echo(_ctx: TaskContext, arguments: Map<String, Value>) -> BoxFuture<'static, Outcome> {
    async move {
        let arguments = Value::Object(arguments);
        Outcome::Completed(json!({"content": [{"type": "text", "text": arguments.to_string()}], "structuredContent": arguments, "isError": false}))
    }
    .boxed()
}

fn test_tool_with_task(
    _ctx: TaskContext,
    arguments: GreetingArguments,
) -> BoxFuture<'static, Outcome> {
    async move {
        let name = arguments.user_name.unwrap_or_else(|| "stranger".into());
        tokio::time::sleep(Duration::from_millis(300)).await;
        Outcome::text(format!("Hello, {name}! Your task is done."))
    }
    .boxed()
}

/// Registers the fixture task tools on `engine`.
pub fn register(engine: &Engine) {
    let tools = [
        fixture(
            "slow_compute",
            "Works for `seconds` seconds, then returns; runs as a task when it can.",
            false,
            slow_compute,
        ),
        fixture(
            "failing_job",
            "Runs about 1 s, then completes with a tool error (isError). Needs task support.",
            true,
            failing_job,
        ),
        fixture(
            "protocol_error_job",
            "Fails with a JSON-RPC error. Needs task support.",
            true,
            protocol_error_job,
        ),
        fixture(
            "confirm_delete",
            "Asks for confirmation before deleting `filename`. Needs task support.",
            true,
            confirm_delete,
        ),
        fixture(
            "multi_input",
            "Asks two questions at once. Needs task support.",
            true,
            multi_input,
        ),
        fixture("echo", "Completes at once with its arguments.", false, echo),
        fixture(
            "test_tool_with_task",
            "Asks for your name (synchronously), then greets you from a task.",
            true,
            test_tool_with_task,
        ),
    ];
    for t in tools {
        engine.register_tool(t);
    }
}

//! The seam between the engine and a tool: what a tool declares about itself
//! ([`ToolDescriptor`], [`ToolMode`]) and what it implements ([`TaskTool`]). Tools live in the
//! server crate; the engine runs them through this trait only.

use futures::future::BoxFuture;
use serde_json::Value;

use super::super::context::{Outcome, TaskContext};
use crate::{DecisionRecord, TaskRecord};

/// How a tool answers `tools/call`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    /// Always runs as a task. `required: true` means a client that cannot take a task handle
    /// gets `-32021` instead of a handle in an ordinary result.
    Task {
        /// Only a task-augmented call runs it (2025-11-25 `execution.taskSupport: "required"`;
        /// `false`: `"optional"`).
        required: bool,
    },
    /// Runs as a task, but a call that settles within `within_ms` milliseconds (ends without
    /// having asked for input) is answered with its `CallToolResult`, as an ordinary tool's
    /// would be; one still running, or waiting for input, is answered with the task. For work
    /// that is usually quick, e.g. an upstream server's tool behind the gateway.
    Settle {
        /// How long a call may take and still be answered with its result, in ms.
        within_ms: u64,
    },
}

/// What the engine and the adapters need to know about a task tool.
#[derive(Debug, Clone)]
pub struct ToolDescriptor {
    /// Tool name as agents call it, e.g. `request_approval`.
    pub name: String,
    /// Human-readable display name (MCP `Tool.title`); `None`: the name is shown.
    pub title: Option<String>,
    /// What the tool does, for a model to read (MCP `Tool.description`).
    pub description: String,
    /// JSON Schema (draft 2020-12) of the arguments object.
    pub input_schema: Value,
    /// How the tool answers `tools/call`.
    pub mode: ToolMode,
    /// A resumable tool can be run again from the top after a restart (its input rounds are
    /// replayed from the store); others are failed as interrupted.
    pub resumable: bool,
    /// Offered to agents as an MCP tool (false for work other programs report on, such as
    /// external jobs).
    pub agent_callable: bool,
}

/// A tool whose calls run as tasks.
pub trait TaskTool: Send + Sync + 'static {
    /// Name, schema and behaviour.
    fn descriptor(&self) -> &ToolDescriptor;
    /// Checks arguments beyond their JSON Schema before a task is created.
    /// Errors: a message for the caller (adapters answer `-32602`).
    fn check_arguments(&self, _arguments: &Value) -> Result<(), String> {
        Ok(())
    }
    /// The arguments as the store keeps them and every view shows them, when they hold secrets
    /// (credential values replaced, e.g. by `[redacted]`); `None` when there is nothing to hide.
    /// The run gets the arguments as given; a resumed run (after a restart) gets them as
    /// stored, so a resumable tool whose run needs the secrets ends such a resumed task (it
    /// can tell by calling this on them: stored arguments that held secrets give `Some`).
    fn redact_arguments(&self, _arguments: &Value) -> Option<Value> {
        None
    }
    /// Whether `task`, a call of this tool that the previous process left unsettled, is run
    /// again at start (from the top, its input rounds replayed from the store, its arguments as
    /// stored) rather than failed as interrupted. Default: the descriptor's
    /// [`ToolDescriptor::resumable`]. A tool may resume only some of its tasks, e.g. those that
    /// did nothing yet but wait for an answer.
    fn resumes(&self, _task: &TaskRecord) -> bool {
        self.descriptor().resumable
    }
    /// Runs one call. The future should watch [`TaskContext::cancelled`] and return
    /// [`Outcome::Cancelled`] promptly; one that ignores cancellation is dropped after the
    /// engine's cancel grace period.
    fn run(&self, ctx: TaskContext, arguments: Value) -> BoxFuture<'static, Outcome>;
    /// Called at start for a call of this (non-resumable) tool that was running when the last
    /// process ended, just before the task is failed as interrupted: the place to stop what the
    /// run left behind, e.g. processes it started.
    fn interrupted(&self, _task_id: &str) {}
    /// Called at start, after [`TaskTool::interrupted`], for a call of this (non-resumable)
    /// tool that was waiting for input when the last process ended: the audit records of the
    /// decisions its open questions leave unmade (an approval nobody answered: `deny` by
    /// `abandoned`), written before the task fails as interrupted. Default: none.
    fn abandoned_decisions(&self, _task: &TaskRecord) -> Vec<DecisionRecord> {
        Vec::new()
    }
    /// Called at start for a call of this tool that is not resumed and fails as interrupted:
    /// why, when the restart alone does not say it (the agent and the person read it after
    /// "Task interrupted: Taskdeck restarted while …; "). Default: nothing.
    fn interrupted_because(&self, _task: &TaskRecord) -> Option<String> {
        None
    }
}

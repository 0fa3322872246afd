//! What MCP clients without the tasks extension get from a task tool: the task handle as an
//! ordinary `CallToolResult` ([`handle_result`]), and the follow-up tools `task_status`,
//! `task_respond` and `task_cancel` to poll, answer and cancel it ([`followup_tools`]).

use rmcp::{
    ErrorData as McpError,
    model::{CallToolResponse, CallToolResult},
};
use serde_json::{Map, Value, json};

use super::{
    agent_view::{self, Reader},
    mcp::{McpHandler, mcp_error},
};
use taskdeck_engine::{AnswerReport, Principal, TaskRecord, TaskStatus};

/// How long an answer to a task that is `working` and has asked nothing yet waits for its
/// first question before it is ignored ([`McpHandler::answer`]).
pub const FIRST_QUESTION_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// `CallToolResult` for a client that cannot take a task: the handle, in words and in
/// `structuredContent.task`, with how to follow up. `called`: the tool's name as the client
/// called it (`write_file` on `/mcp/fs`, the task's tool being `fs__write_file`).
pub fn handle_result(task: &TaskRecord, called: &str) -> Value {
    let text = format!(
        "Started task {id} ({tool}); status: {status}.\n\
         This runs as a task: poll it with the task_status tool {{\"taskId\": \"{id}\"}} about every {poll} ms \
         until its status is completed, failed or cancelled. If it becomes input_required, answer its inputRequests \
         with task_respond; stop it with task_cancel.",
        id = task.task_id,
        tool = called,
        status = task.status.as_str(),
        poll = task.poll_interval_ms
    );
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"task": Value::Object(task.wire_task())},
        "isError": false,
        "resultType": "complete"
    })
}

/// What `task_cancel` did to `task` (as it is right after the request), in words: a task that
/// had ended already is left as it was; else cancellation is requested, and the task ends
/// `cancelled` unless it finishes first (SEP-2663 §Task Cancellation).
fn cancel_summary(task: &TaskRecord) -> String {
    match task.status.is_terminal() {
        true => format!(
            "Task {} had already ended ({}): nothing to cancel.",
            task.task_id,
            task.status.as_str()
        ),
        false => format!(
            "Cancellation of task {} requested: it ends cancelled unless it finishes first. \
             Poll it with task_status until its status is completed, failed or cancelled; do not \
             call task_cancel again.",
            task.task_id
        ),
    }
}

/// `CallToolResult` of `task_status`: the detailed task as `reader` sees it (`agent_view`), and
/// for a finished task its own result's content first so a legacy agent reads the outcome
/// directly. `human_only`: the outstanding input request keys that only the human may answer;
/// the agent is shown only the questions it can answer, and told to wait for the others.
pub fn status_result(task: &TaskRecord, human_only: &[String], reader: Reader) -> Value {
    let detailed = agent_view::detailed(task, human_only, reader);
    let (status, message) = agent_view::status(task, human_only, reader);
    let summary = match (&message, status.as_str()) {
        (Some(m), s) => format!("Task {} is {s}: {m}", task.task_id),
        (None, s) => format!("Task {} is {s}", task.task_id),
    };
    let mut content = vec![json!({"type": "text", "text": summary})];
    if let Some(Value::Array(inner)) = task.result.as_ref().and_then(|r| r.get("content")) {
        content.extend(inner.iter().cloned());
    }
    let for_agent = agent_view::answerable(task, human_only, reader);
    if !for_agent.is_empty() {
        content.push(json!({"type": "text", "text": format!(
            "It waits for input; answer with task_respond {{\"taskId\": \"{}\", \"inputResponses\": {{KEY: {{\"action\": \"accept\", \"content\": {{...}}}}}}}}. Outstanding inputRequests: {}",
            task.task_id, Value::Object(for_agent.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect()))}));
    } else if status == taskdeck_engine::TaskStatus::Working
        && task.status == TaskStatus::InputRequired
        && !task.cancel_requested
    {
        content.push(json!({"type": "text", "text":
            "A human answers this in Taskdeck; you cannot answer this yourself. Poll with task_status until it is completed, failed or cancelled, or stop it with task_cancel."}));
    }
    json!({"content": content, "structuredContent": {"task": Value::Object(detailed)}, "isError": false, "resultType": "complete"})
}

pub(crate) fn followup_tools() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let id =
        json!({"type": "string", "description": "The taskId returned when the task was started."});
    vec![
        (
            "task_status",
            "Task status",
            "Get the status of a task started by another tool: status, statusMessage, and the result, error or \
             outstanding inputRequests. For clients without the MCP tasks extension.",
            json!({"type": "object", "properties": {"taskId": id}, "required": ["taskId"], "additionalProperties": false}),
        ),
        (
            "task_respond",
            "Answer a task's input requests",
            "Answer outstanding inputRequests of a task that is input_required. inputResponses maps each request \
             key to an elicitation result {action: accept|decline|cancel, content?}.",
            json!({"type": "object", "properties": {"taskId": id, "inputResponses": {"type": "object"}},
                   "required": ["taskId", "inputResponses"], "additionalProperties": false}),
        ),
        (
            "task_cancel",
            "Cancel a task",
            "Ask a task to stop. Cancellation is cooperative: poll task_status to see the final status.",
            json!({"type": "object", "properties": {"taskId": id}, "required": ["taskId"], "additionalProperties": false}),
        ),
    ]
}

/// What `task_respond` says of its answers first: which were taken and which ignored (not an
/// outstanding request this agent may answer: a person's to answer, already answered, or never
/// asked), so that an agent can tell the two apart. `None` for no answers.
fn respond_summary(report: &AnswerReport) -> Option<String> {
    let keys = |keys: &[String]| {
        keys.iter()
            .map(|k| format!("{k:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let taken =
        (!report.accepted.is_empty()).then(|| format!("Answered {}.", keys(&report.accepted)));
    let ignored = (!report.ignored.is_empty()).then(|| {
        format!(
            "Ignored {}: not an outstanding request you can answer (a person answers it in Taskdeck, or it was answered already or never asked).",
            keys(&report.ignored)
        )
    });
    match (taken, ignored) {
        (None, None) => None,
        (Some(t), None) => Some(t),
        (None, Some(i)) => Some(i),
        (Some(t), Some(i)) => Some(format!("{t} {i}")),
    }
}

impl McpHandler {
    /// Applies the answers `reader` may give (`agent_view::answerable_responses`); the others
    /// are ignored. Returns the keys taken and those ignored (sorted). Errors: not found, or an
    /// answer that fails its schema (-32602).
    ///
    /// A task still `working` that has asked nothing yet is waited for, up to
    /// [`FIRST_QUESTION_WAIT`], before an answer is ignored: an agent that answers a question
    /// it knows is coming (`request_approval`'s `approval`) right after the handle came back
    /// is not told it can never answer it because the tool had not asked yet.
    pub(crate) async fn answer(
        &self,
        principal: &Principal,
        reader: Reader,
        task_id: &str,
        responses: Map<String, Value>,
    ) -> Result<AnswerReport, McpError> {
        let engine = &self.core.engine;
        let deadline = tokio::time::Instant::now() + FIRST_QUESTION_WAIT;
        let given: Vec<String> = responses.keys().cloned().collect();
        let task = engine
            .get_when(principal, task_id, deadline, |t| {
                given.is_empty() || t.status != TaskStatus::Working || !t.input_requests.is_empty()
            })
            .await
            .map_err(mcp_error)?;
        let human_only = engine.human_only_inputs(&task).map_err(mcp_error)?;
        let responses = agent_view::answerable_responses(&task, &human_only, reader, responses);
        let mut report = if responses.is_empty() {
            AnswerReport::default()
        } else {
            engine
                .answer(principal, task_id, responses)
                .await
                .map_err(mcp_error)?
        };
        for key in given {
            if !report.accepted.contains(&key) && !report.ignored.contains(&key) {
                report.ignored.push(key);
            }
        }
        report.ignored.sort();
        Ok(report)
    }

    pub(crate) async fn followup(
        &self,
        name: &str,
        principal: &Principal,
        reader: Reader,
        args: &Value,
    ) -> Result<CallToolResponse, McpError> {
        let engine = &self.core.engine;
        let id = args
            .get("taskId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut answered = None;
        let task = match name {
            "task_status" => engine.get(principal, id).map_err(mcp_error)?,
            "task_cancel" => engine.cancel(principal, id).await.map_err(mcp_error)?,
            _ => {
                let responses = args
                    .get("inputResponses")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                answered = Some(self.answer(principal, reader, id, responses).await?);
                engine.get(principal, id).map_err(mcp_error)?
            }
        };
        let human_only = engine.human_only_inputs(&task).map_err(mcp_error)?;
        let mut result = status_result(&task, &human_only, reader);
        // task_cancel: what the cancel did, first (the status may not show it yet).
        if name == "task_cancel"
            && let Some(content) = result["content"].as_array_mut()
        {
            content.insert(0, json!({"type": "text", "text": cancel_summary(&task)}));
        }
        // task_respond: which answers were taken and which ignored, first in words and in
        // structuredContent as `/v1/tasks/{taskId}/input` answers them.
        if let Some(report) = answered {
            if let Some(text) = respond_summary(&report)
                && let Some(content) = result["content"].as_array_mut()
            {
                content.insert(0, json!({"type": "text", "text": text}));
            }
            result["structuredContent"]["accepted"] = json!(report.accepted);
            result["structuredContent"]["ignored"] = json!(report.ignored);
        }
        let result: CallToolResult = serde_json::from_value(result)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        Ok(CallToolResponse::Complete(result))
    }
}

//! The synchronous side of the conformance fixtures (served with `--conformance-fixtures`):
//! `greet`, the server-stateless diagnostics, the MRTR round of `test_tool_with_task`, and the
//! immediate-result shortcut of `slow_compute {seconds: 0}`. Task fixtures live in
//! `tools::fixtures`.

use rmcp::{
    ErrorData as McpError,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, ErrorCode,
        InputRequests, InputRequiredResult,
    },
};
use serde_json::{Value, json};

use super::wire;
use crate::tools::fixtures::{slow_compute_seconds, slow_compute_text};
use taskdeck_engine::{Engine, Principal};

/// Names of the synchronous fixture tools, in [`sync_tools`] order.
const SYNC_TOOL_NAMES: [&str; 4] = [
    "greet",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
];

/// `(name, description, input schema)` of the synchronous fixture tools; `greet` first (the
/// suite's header test calls the first listed tool with `{}`).
pub fn sync_tools() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "greet",
            "Says hello to `name` (default: World).",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        ),
        (
            "test_missing_capability",
            "Needs the sampling client capability; without it answers -32021.",
            json!({"type": "object", "properties": {}}),
        ),
        (
            "test_streaming_elicitation",
            "Asks a question through MRTR (never a server-to-client request).",
            json!({"type": "object", "properties": {}}),
        ),
        (
            "test_logging_tool",
            "Would log, but only when the request sets a log level; returns at once.",
            json!({"type": "object", "properties": {}}),
        ),
    ]
}

/// True when [`call_sync`] answers this call itself (so no generic task path may take it).
pub fn intercepts(name: &str, arguments: &Value) -> bool {
    match name {
        "slow_compute" => slow_compute_seconds(arguments) == 0.0,
        "test_tool_with_task" => true,
        _ => SYNC_TOOL_NAMES.contains(&name),
    }
}

fn text(t: String) -> Result<CallToolResponse, McpError> {
    Ok(CallToolResponse::Complete(CallToolResult::success(vec![
        rmcp::model::ContentBlock::text(t),
    ])))
}

fn input_required(requests: Value) -> Result<CallToolResponse, McpError> {
    let requests: InputRequests = serde_json::from_value(requests)
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
    Ok(CallToolResponse::InputRequired(
        InputRequiredResult::from_input_requests(requests),
    ))
}

/// Answers fixture calls that do not go through the generic task path; `None` for the others.
/// `declared`: the request declares the tasks extension (2026-07-28).
pub async fn call_sync(
    engine: &Engine,
    principal: &Principal,
    request: &CallToolRequestParams,
    arguments: &Value,
    declared: bool,
) -> Option<Result<CallToolResponse, McpError>> {
    let client_caps = request.meta.as_ref().and_then(|m| m.client_capabilities());
    Some(match request.name.as_ref() {
        "greet" => text(format!(
            "Hello, {}!",
            arguments
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("World")
        )),
        "test_logging_tool" => text("Nothing was logged: this request set no log level.".into()),
        "test_missing_capability" => {
            if client_caps.as_ref().is_some_and(|c| c.sampling.is_some()) {
                text("The client declared sampling.".into())
            } else {
                Err(McpError::new(
                    ErrorCode(wire::MISSING_REQUIRED_CLIENT_CAPABILITY as i32),
                    "Missing required client capability: sampling",
                    Some(json!({"requiredCapabilities": {"sampling": {}}})),
                ))
            }
        }
        "test_streaming_elicitation" => match request
            .input_responses
            .as_ref()
            .and_then(|r| r.get("favorite-color"))
        {
            Some(answer) => text(format!("You answered {answer}")),
            None => input_required(
                json!({"favorite-color": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "Your favorite color?",
                "requestedSchema": {"type": "object", "properties": {"color": {"type": "string"}}}}}}),
            ),
        },
        "slow_compute" if slow_compute_seconds(arguments) == 0.0 => {
            text(slow_compute_text(arguments))
        }
        "test_tool_with_task" => {
            let answer = request
                .input_responses
                .as_ref()
                .and_then(|r| r.get("user_name"));
            let Some(answer) = answer else {
                return Some(input_required(
                    json!({"user_name": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}),
                ));
            };
            if !declared {
                return Some(Err(McpError::new(
                    ErrorCode(wire::MISSING_REQUIRED_CLIENT_CAPABILITY as i32),
                    "Missing required client capability",
                    Some(wire::missing_tasks_capability_data()),
                )));
            }
            let name = answer
                .pointer("/content/name")
                .and_then(Value::as_str)
                .unwrap_or("stranger");
            match engine
                .create_task(principal, "test_tool_with_task", json!({"user_name": name}))
                .await
            {
                Ok(task) => serde_json::from_value::<CreateTaskResult>(Value::Object(
                    wire::create_task_result(&task),
                ))
                .map(CallToolResponse::Task)
                .map_err(|e| McpError::internal_error(e.to_string(), None)),
                Err(e) => Err(super::mcp::mcp_error(e)),
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_intercepted_names_are_the_listed_sync_tools() {
        let listed: Vec<&str> = super::sync_tools().iter().map(|(n, _, _)| *n).collect();
        assert_eq!(listed, super::SYNC_TOOL_NAMES);
    }
}

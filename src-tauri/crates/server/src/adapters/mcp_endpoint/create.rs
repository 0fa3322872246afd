//! The dedicated path of a task-creating `tools/call` (SEP-2663 §Task Creation): a task tool
//! called by a 2026-07-28 client that declared the tasks extension. Validates like rmcp, creates
//! the task durably and answers its `CreateTaskResult`.

use axum::{
    http::{HeaderMap, StatusCode},
    response::Response,
};
use serde::Deserialize;
use serde_json::{Map, Value, value::RawValue};

use super::{
    McpEndpoint,
    request_checks::{AnswerMedia, ExpectedRequest, MetaView, RequestMeta, check_request},
    responses::{error_response, json_response},
};
use crate::adapters::{
    mcp_fixtures,
    wire::{self, INVALID_PARAMS},
};
use crate::{adapters::settle, gateway::catalog::Scope};
use taskdeck_engine::{Principal, ToolMode};

/// HTTP 200 with the JSON-RPC response `{"jsonrpc":"2.0","id":ID,"result":RESULT}`.
fn result_response(id: &RawValue, result: &impl serde::Serialize) -> Response {
    let mut body = Vec::with_capacity(512);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(id.get().as_bytes());
    body.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut body, result).expect("a JSON object always serializes");
    body.push(b'}');
    json_response(StatusCode::OK, body)
}

/// The params of `tools/call`, as far as this path reads them.
#[derive(Deserialize)]
struct CallParams<'a> {
    name: Option<String>,
    arguments: Option<Map<String, Value>>,
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<MetaView<'a>>,
    /// A multi-round-trip answer (`inputResponses`/`requestState`) continues an earlier call
    /// and is rmcp's to handle.
    #[serde(rename = "inputResponses", borrow, default)]
    input_responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow, default)]
    request_state: Option<&'a RawValue>,
}

/// Answers `tools/call` request `id` when it creates a task: the `CreateTaskResult` (HTTP 200).
/// `None` for every other call (params that do not parse, sync tools, multi-round-trip rounds,
/// requests without `_meta` or without the tasks extension, intercepted fixture calls), which
/// then goes to rmcp. Errors: the [`check_request`] rejections; HTTP 200 `-32602` for
/// arguments that fail the tool's schema or its own check; engine errors by `wire::error_code`.
pub(crate) async fn create_task(
    endpoint: &McpEndpoint,
    headers: &HeaderMap,
    scope: Scope<'_>,
    principal: &Principal,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Option<Response> {
    let params: CallParams<'_> = serde_json::from_str(params?.get()).ok()?;
    let called = params.name?;
    let name = endpoint.core.resolve(scope, &called)?;
    if params.input_responses.is_some() || params.request_state.is_some() {
        return None;
    }
    let meta = params.meta?;
    let declared = meta.declares_tasks();
    let tool = endpoint
        .engine
        .tool(&name)
        .filter(|t| t.descriptor().agent_callable)?;
    let arguments = Value::Object(params.arguments.unwrap_or_default());
    if !declared || (endpoint.core.fixtures && mcp_fixtures::intercepts(&name, &arguments)) {
        return None;
    }
    let expected = ExpectedRequest {
        method: "tools/call",
        name: Some(&called),
        answer: AnswerMedia::Json,
        needs_tasks: true,
    };
    let meta = RequestMeta::Given(meta);
    if let Err(resp) = check_request(headers, id, expected, &meta) {
        return Some(resp);
    }
    let invalid = |m: &str| Some(error_response(StatusCode::OK, id, INVALID_PARAMS, m, None));
    if let Err(e) = endpoint.core.validate(&name, &called, &arguments) {
        return invalid(&e.message);
    }
    if let Err(m) = tool.check_arguments(&arguments) {
        return invalid(&m);
    }
    Some(
        match endpoint
            .engine
            .create_task(principal, &name, arguments)
            .await
        {
            Ok(mut task) => {
                if let ToolMode::Settle { within_ms } = tool.descriptor().mode {
                    task = settle::settle(
                        &endpoint.engine,
                        &endpoint.core.task_watch,
                        principal,
                        task,
                        within_ms,
                    )
                    .await;
                    match settle::settled_answer(&task) {
                        Some(Ok(result)) => {
                            return Some(result_response(id, &Value::Object(result)));
                        }
                        Some(Err(error)) => {
                            let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                            let message = error
                                .get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("the task failed");
                            return Some(error_response(
                                StatusCode::OK,
                                id,
                                code,
                                message,
                                error.get("data").cloned(),
                            ));
                        }
                        None => {
                            task = settle::as_seen(&endpoint.engine, task, meta.reader(principal));
                        }
                    }
                }
                result_response(id, &wire::create_task_result(&task))
            }
            Err(e) => {
                let (code, message) = wire::error_code(&e);
                error_response(StatusCode::OK, id, code, &message, wire::error_data(&e))
            }
        },
    )
}

//! The dedicated path of 2026-07-28 `tasks/get` (SEP-2663 §Task Polling): rmcp's checks
//! ([`request_checks`](super::request_checks)), then the engine's cached answer, written into
//! the response without building rmcp's request and result types.

use std::sync::Arc;

use axum::{http::HeaderMap, http::StatusCode, response::Response};
use serde::Deserialize;
use serde_json::{Value, json, value::RawValue};

use super::{
    McpEndpoint,
    request_checks::{AnswerMedia, ExpectedRequest, RequestMeta, check_request},
    responses::{error_response, json_response},
};
use crate::adapters::{
    agent_view,
    wire::{self, INVALID_PARAMS},
};
use taskdeck_engine::{Principal, TaskStatus};

/// The params of `tasks/get`, `tasks/update` and `tasks/cancel`, borrowed from the body.
#[derive(Deserialize)]
pub(crate) struct TaskParams<'a> {
    #[serde(rename = "taskId", borrow)]
    pub task_id: Option<&'a RawValue>,
    #[serde(rename = "_meta", default, borrow)]
    pub meta: Option<&'a RawValue>,
}

impl TaskParams<'_> {
    /// The `taskId` of `params` (raw JSON) when it is a string.
    pub fn task_id_of(params: Option<&RawValue>) -> Option<String> {
        params
            .and_then(|p| serde_json::from_str::<TaskParams<'_>>(p.get()).ok())
            .and_then(|p| p.task_id)
            .and_then(|t| serde_json::from_str::<String>(t.get()).ok())
    }
}

/// Answers `tasks/get` request `id` with `params` for `principal`: the task's `GetTaskResult`
/// (HTTP 200), a waiting task shown as `agent_view` shows it to this request's reader. Errors:
/// HTTP 400 `-32602` for params without a string `taskId`, the [`check_request`] rejections,
/// HTTP 200 `-32602` "Task not found" for a task the principal may not see.
pub(crate) fn tasks_get(
    endpoint: &McpEndpoint,
    headers: &HeaderMap,
    principal: &Principal,
    id: &RawValue,
    params: Option<&RawValue>,
) -> Response {
    let params = match params.map(|p| serde_json::from_str::<TaskParams<'_>>(p.get())) {
        Some(Ok(p)) => p,
        _ => {
            return error_response(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_PARAMS,
                "Invalid params: tasks/get needs {taskId}",
                None,
            );
        }
    };
    let task_id: Option<String> = params
        .task_id
        .and_then(|t| serde_json::from_str(t.get()).ok());
    let Some(task_id) = task_id else {
        return error_response(
            StatusCode::BAD_REQUEST,
            id,
            INVALID_PARAMS,
            "Invalid params: taskId must be a string",
            None,
        );
    };
    let meta = RequestMeta::parse(params.meta);
    let expected = ExpectedRequest {
        method: "tasks/get",
        name: Some(&task_id),
        answer: AnswerMedia::Json,
        needs_tasks: true,
    };
    if let Err(resp) = check_request(headers, id, expected, &meta) {
        return resp;
    }
    let engine = &endpoint.engine;
    let found = |result: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
            id.get(),
            result
        );
        json_response(StatusCode::OK, body.into_bytes())
    };
    let failed = |e: taskdeck_engine::EngineError| {
        let (code, message) = wire::error_code(&e);
        error_response(StatusCode::OK, id, code, &message, None)
    };
    match engine.get_result_json(principal, &task_id) {
        // A waiting task is shown differently to different clients (`agent_view`): each kind
        // of reader's rendering is made once and kept with the cached answer.
        Ok(answer) if answer.status == TaskStatus::InputRequired => {
            let reader = meta.reader(principal);
            let key = reader.can_elicit as u8 | (reader.human as u8) << 1;
            let rendered = match answer.rendering(key) {
                Some(r) => Ok(r),
                None => engine.get(principal, &task_id).and_then(|task| {
                    let human_only = engine.human_only_inputs(&task)?;
                    let mut shown = agent_view::detailed(&task, &human_only, reader);
                    shown.insert("resultType".into(), json!("complete"));
                    let r: Arc<str> = Value::Object(shown).to_string().into();
                    answer.keep_rendering(key, r.clone());
                    Ok(r)
                }),
            };
            rendered.map_or_else(failed, |r| found(&r))
        }
        Ok(answer) => found(&answer.json),
        Err(e) => failed(e),
    }
}

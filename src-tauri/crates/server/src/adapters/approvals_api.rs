//! `/v1/approvals`: the inbox's queue and its decisions ([`crate::approvals`]).
//! `GET /v1/approvals` lists every open question the caller may see, oldest waiting first, with
//! groups of identical pending calls; `POST /v1/approvals/decide` approves or denies one or
//! many at once and reports each item (a failed item does not stop the others). Whether the
//! caller may answer a human-only question is the engine's rule (`Engine::answer`): an agent's
//! answer to one is reported as not answered. `POST /v1/tasks/{taskId}/reveal` gives a person
//! the call an open approval shows masked, as the agent gave it (`Engine::reveal_hidden`).

use axum::{
    Extension, Json, Router,
    extract::State,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    api_error::{ApiError, ApiPath, ProblemDocument, json_body},
    api_types::TaskView,
};
use crate::approvals::{
    decide::{self, DecideError, DecideRequest},
    edit::ArgumentError,
    inbox::{self, ApprovalList},
};
use taskdeck_engine::{Engine, EngineError, Principal};

/// The `/v1/approvals` routes with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<Engine> {
    OpenApiRouter::new()
        .routes(routes!(list_approvals))
        .routes(routes!(decide_approvals))
        .routes(routes!(reveal_hidden))
}

/// The `/v1/approvals` router.
pub fn router(engine: Engine) -> Router {
    routes().split_for_parts().0.with_state(engine)
}

/// One item's outcome in `POST /v1/approvals/decide`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DecideResult {
    /// The item's task.
    task_id: String,
    /// True when its question was answered.
    ok: bool,
    /// The question answered (or found), when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    /// Why it was not answered, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// What was not done as asked although the question was answered, for people (an
    /// "always allow" a call holding credentials cannot have).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// The task as it is now, when the caller may see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<TaskView>,
}

/// `POST /v1/approvals/decide`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct DecideReply {
    /// One per item, in the order given.
    results: Vec<DecideResult>,
}

/// The 422 answer to an edit that does not fit the tool's input schema.
#[derive(Serialize, utoipa::ToSchema)]
pub(crate) struct ArgumentsProblem {
    #[serde(flatten)]
    problem: ProblemDocument,
    /// Every problem with the edited arguments, with its JSON pointer into them (absent when
    /// the request itself cannot be carried out).
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<Vec<ArgumentError>>,
}

/// `GET /v1/approvals`.
#[utoipa::path(get, path = "/v1/approvals", tag = "approvals",
    responses((status = 200, description = "open questions, oldest waiting first, and groups of identical calls", body = ApprovalList)))]
pub(crate) async fn list_approvals(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
) -> Result<Json<ApprovalList>, ApiError> {
    let engine2 = engine.clone();
    let list = tokio::task::spawn_blocking(move || inbox::pending(&engine2, &p))
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??;
    Ok(Json(list))
}

/// `POST /v1/approvals/decide`.
#[utoipa::path(post, path = "/v1/approvals/decide", tag = "approvals", request_body = DecideRequest,
    responses((status = 200, description = "one result per item, in order", body = DecideReply),
              (status = 400, description = "the body is not JSON of this shape", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "nothing was answered: the edited arguments do not fit the tool's input schema (`errors` says where), or the request cannot be carried out (no items, too many, arguments with a denial or several items, an edit of a question that is not editable)", body = ArgumentsProblem, content_type = "application/problem+json")))]
pub(crate) async fn decide_approvals(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    body: Result<Json<DecideRequest>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let request = json_body(
        body,
        "{\"items\": [{\"taskId\": ...}], \"decision\": \"approve\"|\"deny\", \"reason\"?: ...}",
    )?;
    let outcomes = match decide::decide(&engine, &p, request).await {
        Ok(o) => o,
        Err(DecideError::Invalid(why)) => return Err(ApiError::unprocessable(why)),
        Err(DecideError::Arguments(errors)) => return Ok(arguments_problem(errors)),
    };
    let results = outcomes
        .into_iter()
        .map(|o| DecideResult {
            task: engine.get(&p, &o.task_id).ok().as_ref().map(TaskView::from),
            ok: o.result.is_ok(),
            error: o.result.err(),
            note: o.note,
            key: o.key,
            task_id: o.task_id,
        })
        .collect();
    Ok(Json(DecideReply { results }).into_response())
}

/// `POST /v1/tasks/{taskId}/reveal`'s answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Revealed {
    /// The task.
    task_id: String,
    /// The call's arguments as the agent gave them, credentials unmasked.
    arguments: serde_json::Value,
}

/// `POST /v1/tasks/{taskId}/reveal`: the call an open approval shows masked (its question's
/// `hiddenValues`), as the agent gave it, for a person to read whole before deciding. Answered
/// `Cache-Control: no-store`; the task's timeline records who asked (`hiddenValuesShown`).
#[utoipa::path(post, path = "/v1/tasks/{taskId}/reveal", params(("taskId" = String, Path, description = "the task's id")), tag = "approvals",
    responses((status = 200, description = "the call's arguments as the agent gave them", body = Revealed),
              (status = 403, description = "the caller is an agent: only a person (the admin or a human token) reads hidden values", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown task, or another principal's", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "no question of the task waits for a person, or its run holds no hidden values (none were hidden, or Taskdeck restarted since the question was asked)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn reveal_hidden(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
) -> Result<Response, ApiError> {
    ApiError::humans_only(&p, "reads the values an approval hides")?;
    let arguments = match engine.reveal_hidden(&p, &task_id).await {
        Ok(arguments) => arguments,
        Err(EngineError::Invalid(why)) => return Err(ApiError::conflict(why)),
        Err(e) => return Err(e.into()),
    };
    let mut resp = Json(Revealed { task_id, arguments }).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}

/// 422 `application/problem+json` for edited arguments that do not fit the tool's input
/// schema: the problem document with `errors` (each a JSON pointer `path` and a `message`).
pub(crate) fn arguments_problem(errors: Vec<ArgumentError>) -> Response {
    let detail = errors
        .iter()
        .map(|e| match e.path.is_empty() {
            true => e.message.clone(),
            false => format!("at {}: {}", e.path, e.message),
        })
        .collect::<Vec<_>>()
        .join("; ");
    let problem = ApiError::unprocessable(format!(
        "the edited arguments do not fit the tool's input schema: {detail}"
    ))
    .document();
    let body = serde_json::to_string(&ArgumentsProblem {
        problem,
        errors: Some(errors),
    })
    .unwrap_or_default();
    let mut resp = (StatusCode::UNPROCESSABLE_ENTITY, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    );
    resp
}

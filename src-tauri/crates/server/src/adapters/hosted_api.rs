//! Hosted tasks over HTTP: tasks whose work runs in another program (a tower-mcp server using
//! `taskdeck-tower`'s remote store) that keeps them here, so they show in the window like any
//! other task, a person answers their input requests (`POST /v1/tasks/{taskId}/input`) and
//! presses their cancel (`POST /v1/tasks/{taskId}/cancel`), and the host learns of both from
//! `GET /v1/events`. Each route is one call of the engine's hosted-task methods (one store
//! write with its timeline event), with tower-mcp's `TaskStore` semantics: a task whose
//! `createdAt + ttlMs` has passed is absent (404) at once, terminal states never change, an
//! input request key is never issued twice.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/hosted-tasks` `{tool, arguments?, ttlMs?, owner?}` | 201 [`HostedTask`], `Location` |
//! | `GET /v1/hosted-tasks?status=&limit=&cursor=` | `{tasks: [HostedTask], nextCursor?}`, a page of the caller's live hosted tasks |
//! | `GET /v1/hosted-tasks/{taskId}` | [`HostedTask`] |
//! | `DELETE /v1/hosted-tasks/{taskId}` | 204: discarded whatever its state |
//! | `POST .../settle` `{completed}` or `{failed}` or `{cancelled}` | `{changed, task}` |
//! | `PUT .../ttl` `{ttlMs}` | `{changed}` |
//! | `POST .../status` `{status, statusMessage?}` | `{changed}` |
//! | `PUT .../input-requests` `{requests, statusMessage?}` | `{changed}`; 409 for a spent key |
//! | `POST .../input-responses` `{responses}` | `{accepted, ignored, outstanding}`; 409 settled |
//! | `PUT .../meta` `{meta}` | `{changed}` |
//!
//! A hosted task belongs to the token's principal (ARCHITECTURE.md, invariant 5: another
//! principal's task, like an unknown, expired or not hosted one, is 404); the host's own
//! owner name is stored beside it (`owner`).

use std::collections::BTreeMap;

use axum::{
    Extension, Json,
    extract::State,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    api_error::{ApiError, ApiPath, ApiQuery, ProblemDocument, json_body},
    hosted_wire::{
        CreateHosted, HostedAnswered, HostedChange, HostedInputRequests, HostedInputResponses,
        HostedMeta, HostedSettled, HostedStatus, HostedTask, HostedTaskList, HostedTtl, LiveStatus,
        SettleHosted,
    },
    page_cursor,
};
use taskdeck_engine::{
    Engine, EngineError, Principal, Settlement, TaskRecord, TaskStatus, clock::now_ms,
    retention_elapsed, store::ListFilter,
};

/// Tasks a list page holds at most by default (`limit`).
const LIST_PAGE: usize = 100;

/// The largest `limit` of a list page.
const LIST_PAGE_MAX: usize = 500;

/// Tells a hosted-task list's cursor apart from a `/v1/tasks` one of the same caller.
const LIST_SCOPE: &str = "hosted-tasks";

/// The hosted-task routes with their OpenAPI operations (state: the engine).
pub fn routes() -> OpenApiRouter<Engine> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(read, discard))
        .routes(routes!(settle))
        .routes(routes!(set_ttl))
        .routes(routes!(set_status))
        .routes(routes!(require_input))
        .routes(routes!(answer))
        .routes(routes!(set_meta))
}

/// The caller's live hosted task `task_id` with its owner. Errors: 404 when it is unknown,
/// another principal's, expired or not hosted.
fn visible(
    engine: &Engine,
    p: &Principal,
    task_id: &str,
) -> Result<(TaskRecord, Option<String>), ApiError> {
    let missing = || ApiError::not_found(format!("no hosted task {task_id}"));
    let task = match engine.get(p, task_id) {
        Err(EngineError::NotFound) => return Err(missing()),
        other => other?,
    };
    if task.principal != p.name || retention_elapsed(&task, now_ms()) {
        return Err(missing());
    }
    let owner = engine.hosted_owner(task_id)?.ok_or_else(missing)?;
    Ok((task, owner))
}

/// Errors: 400 for a ttlMs over [`Engine::MAX_REQUESTED_TTL_MS`] (100 years).
fn check_ttl(ttl_ms: u64) -> Result<(), ApiError> {
    match ttl_ms <= Engine::MAX_REQUESTED_TTL_MS {
        true => Ok(()),
        false => Err(ApiError::bad_request(format!(
            "ttlMs must be at most {} (100 years)",
            Engine::MAX_REQUESTED_TTL_MS
        ))),
    }
}

/// The record of `task` as its host reads it.
fn record(
    engine: &Engine,
    task: &TaskRecord,
    owner: Option<String>,
) -> Result<HostedTask, ApiError> {
    let answers: BTreeMap<String, Value> = engine.hosted_answers(&task.task_id)?;
    let meta = engine.hosted_meta(&task.task_id)?;
    Ok(HostedTask::new(task, owner, answers, meta, now_ms()))
}

/// Creates a `working` hosted task owned by the caller's principal, recording `owner` (the
/// host's name for whoever asked).
#[utoipa::path(post, path = "/v1/hosted-tasks", request_body = CreateHosted, tag = "hosted tasks",
    responses((status = 201, description = "the task; `Location: /v1/hosted-tasks/{taskId}`", body = HostedTask,
                headers(("Location" = String, description = "`/v1/hosted-tasks/{taskId}`"))),
              (status = 400, description = "malformed body, a tool name that is empty or over 200 characters, or a ttlMs over 100 years", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "arguments over 256 KiB as JSON or an owner name over 1 KiB (`reason: \"too_large\"`, `limit` in bytes)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn create(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    body: Result<Json<CreateHosted>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let body = json_body(body, "{\"tool\", \"arguments\"?, \"ttlMs\"?, \"owner\"?}")?;
    if body.tool.is_empty() || body.tool.chars().count() > 200 {
        return Err(ApiError::bad_request("tool must be 1 to 200 characters"));
    }
    if let Some(ttl) = body.ttl_ms {
        check_ttl(ttl)?;
    }
    let arguments = Value::Object(body.arguments.unwrap_or_default());
    let task = engine
        .create_hosted_owned(
            &p.name,
            body.owner.clone(),
            &body.tool,
            arguments,
            body.ttl_ms,
        )
        .await?;
    let view = record(&engine, &task, body.owner)?;
    let mut resp = (StatusCode::CREATED, Json(view)).into_response();
    if let Ok(v) = HeaderValue::from_str(&format!("/v1/hosted-tasks/{}", task.task_id)) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    Ok(resp)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct ListHostedQuery {
    /// Only tasks in this status (working, input_required, completed, failed, cancelled);
    /// empty or absent: every status.
    #[param(pattern = "^(working|input_required|completed|failed|cancelled)?$")]
    status: Option<String>,
    /// Tasks looked at for this page, 1..=500 (default 100); the page holds those of them that
    /// are hosted and live, so it may hold fewer (even none) while `nextCursor` goes on.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<usize>,
    /// `nextCursor` of the previous page, as it came (opaque; bound to the caller and the
    /// status filter).
    cursor: Option<String>,
}

/// A page of the caller's hosted tasks whose retention has not elapsed, newest first; a host's
/// `list_tasks` follows `nextCursor` until it is absent.
#[utoipa::path(get, path = "/v1/hosted-tasks", params(ListHostedQuery), tag = "hosted tasks",
    responses((status = 200, description = "a page of the caller's live hosted tasks", body = HostedTaskList),
              (status = 400, description = "an unknown status, a limit out of 1..=500, a cursor that is not this list's nextCursor, or a malformed query", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn list(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiQuery(q): ApiQuery<ListHostedQuery>,
) -> Result<Json<HostedTaskList>, ApiError> {
    let statuses = match q.status.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => vec![
            TaskStatus::parse(s)
                .ok_or_else(|| ApiError::bad_request(format!("unknown status {s:?}")))?,
        ],
        None => Vec::new(),
    };
    let limit = q.limit.unwrap_or(LIST_PAGE);
    if !(1..=LIST_PAGE_MAX).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be 1 to {LIST_PAGE_MAX}"
        )));
    }
    let mut filter = ListFilter {
        statuses,
        principal: Some(p.name.clone()),
        limit,
        ..ListFilter::default()
    };
    let key = *engine.store().cursor_key();
    if let Some(cursor) = q.cursor.as_deref() {
        let seq = page_cursor::decode(&key, cursor, &list_scope(&p, &filter))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        filter.before_seq = Some(seq);
    }
    let list = tokio::task::spawn_blocking(move || {
        let page = engine.store().page(&filter)?;
        let now = now_ms();
        let mut tasks = Vec::new();
        for task in page.tasks.iter().filter(|t| !retention_elapsed(t, now)) {
            if let Some(owner) = engine.hosted_owner(&task.task_id)? {
                tasks.push(record(&engine, task, owner)?);
            }
        }
        let next_cursor = page
            .next_seq
            .map(|seq| page_cursor::encode(&key, seq, &list_scope(&p, &filter)));
        Ok::<_, ApiError>(HostedTaskList { tasks, next_cursor })
    })
    .await??;
    Ok(Json(list))
}

/// What a hosted-task list's cursor is bound to: the caller and its status filter, with
/// [`LIST_SCOPE`] in place of a text query, so that no `/v1/tasks` cursor continues it.
fn list_scope<'a>(caller: &'a Principal, filter: &'a ListFilter) -> page_cursor::CursorScope<'a> {
    page_cursor::CursorScope {
        caller,
        statuses: &filter.statuses,
        tool: None,
        principal: filter.principal.as_deref(),
        query: Some(LIST_SCOPE),
        errors_only: false,
    }
}

/// The hosted task with its owner, answers, `_meta` and outcome.
#[utoipa::path(get, path = "/v1/hosted-tasks/{taskId}", params(("taskId" = String, Path, description = "the task's id")), tag = "hosted tasks",
    responses((status = 200, description = "the task", body = HostedTask),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn read(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<HostedTask>, ApiError> {
    let (task, owner) = visible(&engine, &p, &id)?;
    Ok(Json(record(&engine, &task, owner)?))
}

/// Discards the task whatever its state (a task whose setup failed): it is deleted with its
/// timeline and input rounds; `/v1/events` sends its `deleted` event.
#[utoipa::path(delete, path = "/v1/hosted-tasks/{taskId}", params(("taskId" = String, Path, description = "the task's id")), tag = "hosted tasks",
    responses((status = 204, description = "discarded"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn discard(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    visible(&engine, &p, &id)?;
    match engine.discard_hosted(&id).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::not_found(format!("no hosted task {id}"))),
    }
}

/// Ends the task: `{"completed": CallToolResult}`, `{"failed": JsonRpcError}` or
/// `{"cancelled": "message"}`. Outstanding input requests are superseded; a cancellation also
/// sets `cancelRequested`. A task that had already ended is left as it was (`changed: false`).
#[utoipa::path(post, path = "/v1/hosted-tasks/{taskId}/settle", params(("taskId" = String, Path, description = "the task's id")), request_body = SettleHosted, tag = "hosted tasks",
    responses((status = 200, description = "whether this call ended the task, and the task after it", body = HostedSettled),
              (status = 400, description = "malformed body: not exactly one of `completed`, `failed`, `cancelled`", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "a `failed` error object over 64 KiB as JSON (`reason: \"too_large\"`, `limit` in bytes)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn settle(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<SettleHosted>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<HostedSettled>, ApiError> {
    let body = json_body(body, "{\"completed\"} or {\"failed\"} or {\"cancelled\"}")?;
    let settlement = match body {
        SettleHosted::Completed(mut result) => {
            // Only Taskdeck says a call was refused (`approvals::refusal`); a host's task ran.
            crate::approvals::refusal::unmark_object(&mut result);
            Settlement::Completed(Value::Object(result))
        }
        SettleHosted::Failed(error) => {
            let mut object = json!({"code": error.code, "message": error.message});
            if let Some(data) = error.data {
                object["data"] = data;
            }
            Settlement::Failed(object)
        }
        SettleHosted::Cancelled(message) => Settlement::Cancelled(message),
    };
    let (_, owner) = visible(&engine, &p, &id)?;
    let Some((task, changed)) = engine.settle_hosted(&id, settlement).await? else {
        return Err(ApiError::not_found(format!("no hosted task {id}")));
    };
    Ok(Json(HostedSettled {
        changed,
        task: record(&engine, &task, owner)?,
    }))
}

/// Sets the task's retention (ms from creation), terminal or not; 0 expires it now.
#[utoipa::path(put, path = "/v1/hosted-tasks/{taskId}/ttl", params(("taskId" = String, Path, description = "the task's id")), request_body = HostedTtl, tag = "hosted tasks",
    responses((status = 200, description = "`changed: true`", body = HostedChange),
              (status = 400, description = "malformed body, or a ttlMs over 100 years", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn set_ttl(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<HostedTtl>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<HostedChange>, ApiError> {
    let body = json_body(body, "{\"ttlMs\"}")?;
    check_ttl(body.ttl_ms)?;
    visible(&engine, &p, &id)?;
    match engine.set_hosted_ttl(&id, body.ttl_ms).await? {
        true => Ok(Json(HostedChange { changed: true })),
        false => Err(ApiError::not_found(format!("no hosted task {id}"))),
    }
}

/// Sets a live task's status (`working` or `input_required`) and, when given, its status
/// message; a settled task is left as it was (`changed: false`).
#[utoipa::path(post, path = "/v1/hosted-tasks/{taskId}/status", params(("taskId" = String, Path, description = "the task's id")), request_body = HostedStatus, tag = "hosted tasks",
    responses((status = 200, description = "whether the task took the status", body = HostedChange),
              (status = 400, description = "malformed body, or a terminal status (use `.../settle`)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "`input_required` while no input request is outstanding (the status follows the input requests: ask with `.../input-requests`)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn set_status(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<HostedStatus>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<HostedChange>, ApiError> {
    let body = json_body(
        body,
        "{\"status\": \"working\"|\"input_required\", \"statusMessage\"?}",
    )?;
    let status = match body.status {
        LiveStatus::Working => TaskStatus::Working,
        LiveStatus::InputRequired => TaskStatus::InputRequired,
    };
    visible(&engine, &p, &id)?;
    let changed = engine
        .set_hosted_status(&id, status, body.status_message)
        .await?;
    Ok(Json(HostedChange { changed }))
}

/// Replaces the outstanding input requests and makes the task `input_required` (SEP-2663
/// §Task Update Requests). A person answers them in the window; the host with
/// `.../input-responses`. A settled task is left as it was (`changed: false`).
#[utoipa::path(put, path = "/v1/hosted-tasks/{taskId}/input-requests", params(("taskId" = String, Path, description = "the task's id")), request_body = HostedInputRequests, tag = "hosted tasks",
    responses((status = 200, description = "whether the task took the requests", body = HostedChange),
              (status = 400, description = "malformed body", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "a key was answered or superseded earlier in the task's life, or is outstanding with another request (keys are unique over a task's life); nothing changed", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "no request, a `method` other than elicitation/create, sampling/createMessage and roots/list, a request over 64 KiB as JSON (`reason: \"too_large\"`, `limit` in bytes), or a request carrying `_meta[\"taskdeck/approval\"]`, which only Taskdeck's own approvals may", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn require_input(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<HostedInputRequests>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<HostedChange>, ApiError> {
    let body = json_body(body, "{\"requests\": {...}, \"statusMessage\"?}")?;
    // What a task may ask of its client: the schema's `InputRequest` (SEP-2663 §Task Update
    // Requests).
    const METHODS: [&str; 3] = ["elicitation/create", "sampling/createMessage", "roots/list"];
    if let Some((key, _)) = body.requests.iter().find(|(_, request)| {
        !request
            .get("method")
            .and_then(Value::as_str)
            .is_some_and(|m| METHODS.contains(&m))
    }) {
        return Err(ApiError::unprocessable(format!(
            "request {key}: `method` must be one of {}",
            METHODS.join(", ")
        )));
    }
    // Taskdeck's own approvals carry the call they approve in this `_meta` key, and the inbox
    // shows it as Taskdeck's policy question: a host may not dress its question up as one.
    if let Some(key) = body.requests.iter().find_map(|(key, request)| {
        crate::approvals::question::poses_as_approval(&Value::Object(request.clone()))
            .then_some(key)
    }) {
        return Err(ApiError::unprocessable(format!(
            "request {key}: `_meta[\"{}\"]` is Taskdeck's own approvals'; a hosted task may not send it",
            crate::approvals::question::META_KEY
        )));
    }
    visible(&engine, &p, &id)?;
    let changed = engine
        .require_hosted_input(
            &id,
            body.requests
                .into_iter()
                .map(|(k, v)| (k, Value::Object(v)))
                .collect(),
            body.status_message,
        )
        .await?;
    Ok(Json(HostedChange { changed }))
}

/// Records the host's answers to outstanding input requests, as given; other keys are ignored.
/// Once none is outstanding the task returns to `working`.
#[utoipa::path(post, path = "/v1/hosted-tasks/{taskId}/input-responses", params(("taskId" = String, Path, description = "the task's id")), request_body = HostedInputResponses, tag = "hosted tasks",
    responses((status = 200, description = "the keys taken, ignored and still outstanding", body = HostedAnswered),
              (status = 400, description = "malformed body", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "the task is settled", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "an answer over 64 KiB as JSON (`reason: \"too_large\"`, `limit` in bytes); nothing recorded", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn answer(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<HostedInputResponses>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<HostedAnswered>, ApiError> {
    let body = json_body(body, "{\"responses\": {...}}")?;
    visible(&engine, &p, &id)?;
    let Some(answers) = engine
        .answer_hosted(
            &id,
            body.responses
                .into_iter()
                .map(|(k, v)| (k, Value::Object(v)))
                .collect(),
        )
        .await?
    else {
        return Err(ApiError::conflict(format!("hosted task {id} is settled")));
    };
    Ok(Json(HostedAnswered {
        accepted: answers.accepted.into_iter().collect(),
        ignored: answers.ignored.into_iter().collect(),
        outstanding: answers.outstanding.into_iter().collect(),
    }))
}

/// Stores the task's protocol `_meta` (live or settled); every later read carries it.
#[utoipa::path(put, path = "/v1/hosted-tasks/{taskId}/meta", params(("taskId" = String, Path, description = "the task's id")), request_body = HostedMeta, tag = "hosted tasks",
    responses((status = 200, description = "`changed: true`", body = HostedChange),
              (status = 400, description = "malformed body", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, another principal's, expired, or not a hosted task", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "`meta` over 64 KiB as JSON (`reason: \"too_large\"`, `limit` in bytes)", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn set_meta(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<HostedMeta>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<HostedChange>, ApiError> {
    let body = json_body(body, "{\"meta\": {...}}")?;
    visible(&engine, &p, &id)?;
    match engine
        .set_hosted_meta(&id, Value::Object(body.meta))
        .await?
    {
        true => Ok(Json(HostedChange { changed: true })),
        false => Err(ApiError::not_found(format!("no hosted task {id}"))),
    }
}

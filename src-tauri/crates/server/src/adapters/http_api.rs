//! The `/v1` HTTP API the UI, the CLI and scripts use: its task routes, and the router that
//! gathers the engine's routes. JSON bodies ([`api_types`](super::api_types)); errors are
//! RFC 9457 problem documents ([`ApiError`]). Same authentication as `/mcp`; an agent sees
//! only its own tasks, a person (the admin or a human principal) sees all. Routes are registered through `utoipa-axum`, so the
//! OpenAPI document ([`api_doc`](super::api_doc)) is generated from the handlers.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/tasks?status=a,b&tool=&principal=&q=&error=&cursor=&limit=` | `{tasks, nextCursor, counts}` newest first; `counts` per status under the other filters, plus `error` (completed with `isError`); `error=true` lists only those; `nextCursor` is opaque and bound to the caller and the filters (see `page_cursor`) |
//! | `GET /v1/tasks/{taskId}` | `{task, timeline, inputRounds}` |
//! | `POST /v1/tasks/{taskId}/input` `{inputResponses}` | `{accepted, ignored, task}` |
//! | `POST /v1/tasks/{taskId}/cancel` | 202 `{task}` |
//! | `POST /v1/tasks/{taskId}/rerun`, `DELETE /v1/tasks/{taskId}`, `POST /v1/task-deletions` | re-run and delete settled tasks (see `task_actions_api`) |
//! | `GET /v1/tasks/{taskId}/log?offset=&tail=&limit=` | `{offset, nextOffset, size, text, complete, exists}` (see `logs_api`) |
//! | `GET /v1/events` (`Last-Event-ID` or `?since=`) | `text/event-stream` of `change` events (see `events_api`) |
//! | `/v1/hosted-tasks...` | tasks another program runs and keeps here (see `hosted_api`) |
//! | `GET /v1/me`, `GET /v1/tools` | `{principal, role, admin}`; the task tools |
//! | `POST /v1/agents` `{name, role?: "agent"\|"human"}` (admin) | 201 `{name, role, token, mcpUrl, configs: [ClientConfig]}`; 409 name taken (see `agents_api`) |
//! | `GET /v1/agents` (admin) | `{agents: [{name, role, createdAt, revoked}]}` |
//! | `GET /v1/policy` (admin, human), `PUT /v1/policy` `{rules}`, `DELETE /v1/policy/rules/{id}` (admin) | the approval policy's rules (see `policy_api`) |
//! | `GET /v1/openapi.json` | the OpenAPI 3.1 document of `/v1`, generated from this code |
//!
//! A request body over [`MAX_BODY_BYTES`] is a 413 problem document on every route ([`limit_body`]).

use axum::{
    Extension, Json, Router,
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    agents_api, api_doc,
    api_error::{ApiError, ApiPath, ApiQuery, ProblemDocument, json_body},
    api_types::{AnswerReply, CancelReply, Me, TaskDetail, TaskList, TaskView, ToolList, ToolView},
    approvals_api::{ArgumentsProblem, arguments_problem},
    events_api, hosted_api, page_cursor, task_actions_api,
};
use crate::approvals::decide::{DecideError, check_answered_edits, unused_edit_notes};
use taskdeck_engine::{Engine, EngineError, Principal, TaskStatus, store::ListFilter};

pub use super::api_middleware::{MAX_BODY_BYTES, limit_body, problem_for_405};

/// An RFC 9457 problem document response (see [`ApiError`]).
pub fn problem(status: StatusCode, detail: &str) -> Response {
    ApiError::new(status, detail).into_response()
}

/// The `/v1` routes whose state is the engine, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<Engine> {
    OpenApiRouter::new()
        .routes(routes!(list_tasks))
        .routes(routes!(get_task))
        .routes(routes!(answer))
        .routes(routes!(cancel))
        .routes(routes!(events_api::events))
        .routes(routes!(me))
        .routes(routes!(tools))
        .routes(routes!(agents_api::list_agents, agents_api::create_agent))
        .routes(routes!(api_doc::openapi))
        .merge(task_actions_api::routes())
        .merge(hosted_api::routes())
}

/// The `/v1` router (state: the engine).
pub fn router(engine: Engine) -> Router {
    routes().split_for_parts().0.with_state(engine)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Comma-separated statuses (working, input_required, completed, failed, cancelled); empty
    /// items are skipped.
    #[param(
        pattern = "^((working|input_required|completed|failed|cancelled)?,)*(working|input_required|completed|failed|cancelled)?$"
    )]
    status: Option<String>,
    /// Only this tool.
    tool: Option<String>,
    /// Only this principal's tasks. An agent sees only its own: another name lists none.
    principal: Option<String>,
    /// Free text over tool, arguments, status message, result and taskId; no NUL characters.
    #[param(pattern = "^[^\\u0000]*$")]
    q: Option<String>,
    /// `nextCursor` of the previous page, as it came (opaque). It continues only the list it
    /// came from: same caller and the same status, tool, principal, q and error (`limit` may change);
    /// any other cursor, an empty one included, is refused with 400.
    cursor: Option<String>,
    /// Page size, 1..=1000 (default 100); other values are refused with 400.
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<usize>,
    /// `true`: only completed tasks whose result is an error (`isError: true`, e.g. a command
    /// that exited non-zero; `counts.error` counts them); `false` or absent: no such filter.
    error: Option<bool>,
}

/// Tasks visible to the caller, newest first.
#[utoipa::path(get, path = "/v1/tasks", params(ListQuery), tag = "tasks",
    responses((status = 200, description = "the page and the counts reflect exactly the changes up to `eventId` (read in one snapshot); `/v1/events` with `Last-Event-ID: eventId` brings every later one (a task deleted meanwhile: only its `deleted` event)", body = TaskList),
              (status = 400, description = "unknown status, bad limit, an error that is not true or false, a q with NUL, or a cursor that is empty, not a nextCursor, altered, another principal's or another query's (the detail says which)", body = ProblemDocument, content_type = "application/problem+json")))]
async fn list_tasks(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> Result<Json<TaskList>, ApiError> {
    let mut statuses = Vec::new();
    for s in q
        .status
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.is_empty())
    {
        let status = TaskStatus::parse(s)
            .ok_or_else(|| ApiError::bad_request(format!("unknown status {s:?}")))?;
        statuses.push(status);
    }
    if q.q.as_deref().is_some_and(|t| t.contains('\0')) {
        return Err(ApiError::bad_request("q must not contain NUL characters"));
    }
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit must be 1 to 1000, not {limit}"
        )));
    }
    let mut filter = ListFilter {
        statuses,
        tool: q.tool.filter(|t| !t.is_empty()),
        principal: q.principal.filter(|t| !t.is_empty()),
        query: q.q.filter(|t| !t.is_empty()),
        errors_only: q.error.unwrap_or(false),
        before_seq: None,
        limit,
    };
    if !p.is_human() && filter.principal.is_none() {
        filter.principal = Some(p.name.clone());
    }
    let key = *engine.store().cursor_key();
    if let Some(cursor) = q.cursor.as_deref() {
        let seq = page_cursor::decode(&key, cursor, &cursor_scope(&p, &filter))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        filter.before_seq = Some(seq);
    }
    let list = tokio::task::spawn_blocking(move || {
        let page = engine.page(&p, filter.clone())?;
        let next_cursor = page
            .next_seq
            .map(|seq| page_cursor::encode(&key, seq, &cursor_scope(&p, &filter)));
        Ok::<_, EngineError>(TaskList {
            tasks: page.tasks.iter().map(TaskView::listed).collect(),
            next_cursor,
            counts: page.counts,
            event_id: page.event_id.to_string(),
        })
    })
    .await??;
    Ok(Json(list))
}

/// What a `/v1/tasks` cursor is bound to: the caller and the filters of its list.
fn cursor_scope<'a>(caller: &'a Principal, filter: &'a ListFilter) -> page_cursor::CursorScope<'a> {
    page_cursor::CursorScope {
        caller,
        statuses: &filter.statuses,
        tool: filter.tool.as_deref(),
        principal: filter.principal.as_deref(),
        query: filter.query.as_deref(),
        errors_only: filter.errors_only,
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct TaskQuery {
    /// Only timeline events with an id below this one (to page back through a long timeline).
    #[serde(rename = "timelineBefore")]
    timeline_before: Option<i64>,
    /// How many of the newest (matching) timeline events, 1..=5000 (default 1000).
    #[serde(rename = "timelineLimit")]
    #[param(minimum = 1, maximum = 5000)]
    timeline_limit: Option<usize>,
}

/// One task with its timeline (the newest 1,000 events by default) and input rounds.
#[utoipa::path(get, path = "/v1/tasks/{taskId}", params(("taskId" = String, Path, description = "the task's id"), TaskQuery), tag = "tasks",
    responses((status = 200, description = "`timeline` is oldest first; `timelineMore` says older events exist (ask again with `timelineBefore` = the first event's id); an input round's `humanOnly`: only a person (the admin or a human principal) may answer it", body = TaskDetail),
              (status = 400, description = "timelineLimit outside 1..=5000, or a malformed query", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json")))]
async fn get_task(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<TaskQuery>,
) -> Result<Json<TaskDetail>, ApiError> {
    let limit = q.timeline_limit.unwrap_or(1000);
    if !(1..=5000).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "timelineLimit must be 1 to 5000, not {limit}"
        )));
    }
    let task = engine.get(&p, &task_id)?;
    let (timeline, more, rounds) = engine.history(&p, &task_id, q.timeline_before, limit)?;
    Ok(Json(TaskDetail {
        task: TaskView::from(&task),
        timeline: timeline.iter().map(Into::into).collect(),
        timeline_more: more,
        input_rounds: rounds.iter().map(Into::into).collect(),
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct AnswerBody {
    /// Request key → answer (`{action: accept|decline|cancel, content?}` for elicitations).
    /// Answers to keys that are not outstanding are ignored, whatever they are.
    #[schema(value_type = std::collections::BTreeMap<String, Value>)]
    input_responses: Map<String, Value>,
}

/// Answers outstanding input requests (SEP-2663 semantics: partial answers taken, others ignored).
#[utoipa::path(post, path = "/v1/tasks/{taskId}/input", params(("taskId" = String, Path, description = "the task's id")), request_body = AnswerBody, tag = "tasks",
    responses((status = 200, description = "the keys taken and ignored, and the task as it is now (a settled task takes none: every key is in `ignored`)", body = AnswerReply),
              (status = 400, description = "malformed body", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown task", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "an answer fails its schema, or an approval's edited `arguments` are not an editable call's, not a JSON object, or do not fit the tool's input schema (`errors` says where, as for `/v1/approvals/decide`); nothing recorded (an agent's answer to a human-only request is no error: it is listed in `ignored`)", body = ArgumentsProblem, content_type = "application/problem+json")))]
async fn answer(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
    body: Result<Json<AnswerBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let mut body = json_body(body, "{\"inputResponses\": {...}}")?;
    let edits = match check_answered_edits(&engine, &p, &task_id, &body.input_responses) {
        Ok(edits) => edits,
        Err(DecideError::Invalid(why)) => return Err(ApiError::unprocessable(why)),
        Err(DecideError::Arguments(errors)) => return Ok(arguments_problem(errors)),
    };
    // A second approval by the same person counts for nothing: not recorded, said why.
    for key in edits.repeated.keys() {
        body.input_responses.remove(key);
    }
    let mut report = engine.answer(&p, &task_id, body.input_responses).await?;
    let mut notes = unused_edit_notes(&engine, &p, &task_id, &edits, &report.accepted).await;
    for (key, why) in &edits.repeated {
        report.ignored.push(key.clone());
        notes.insert(key.clone(), why.clone());
    }
    Ok(Json(AnswerReply {
        accepted: report.accepted,
        ignored: report.ignored,
        notes,
        task: engine.get(&p, &task_id).ok().as_ref().map(TaskView::from),
    })
    .into_response())
}

/// Requests cancellation (cooperative; idempotent).
#[utoipa::path(post, path = "/v1/tasks/{taskId}/cancel", params(("taskId" = String, Path, description = "the task's id")), tag = "tasks",
    responses((status = 202, description = "cancellation requested: the task as it is now", body = CancelReply),
              (status = 200, description = "the task had already ended: nothing to cancel; the task", body = CancelReply),
              (status = 404, description = "unknown task", body = ProblemDocument, content_type = "application/problem+json")))]
async fn cancel(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
) -> Result<(StatusCode, Json<CancelReply>), ApiError> {
    let ended = engine.cancel(&p, &task_id).await?.status.is_terminal();
    let task = engine.get(&p, &task_id).ok().as_ref().map(TaskView::from);
    let code = if ended {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((code, Json(CancelReply { task })))
}

/// The caller's principal.
#[utoipa::path(get, path = "/v1/me", tag = "auth", responses((status = 200, description = "the caller's principal, its role (`admin`, `human`, `agent`) and whether it is the admin", body = Me)))]
async fn me(Extension(p): Extension<Principal>) -> Json<Me> {
    Json(Me {
        admin: p.is_admin(),
        role: p.role.into(),
        principal: p.name,
    })
}

/// The task tools.
#[utoipa::path(get, path = "/v1/tools", tag = "tasks", responses((status = 200, description = "the task tools with their argument schemas", body = ToolList)))]
async fn tools(State(engine): State<Engine>) -> Json<ToolList> {
    let tools = engine
        .tools()
        .into_iter()
        .map(|d| ToolView {
            name: d.name,
            title: d.title,
            description: d.description,
            input_schema: d.input_schema,
        })
        .collect();
    Json(ToolList { tools })
}

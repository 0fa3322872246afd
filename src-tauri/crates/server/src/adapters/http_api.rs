//! The `/v1` HTTP API the UI, the CLI and scripts use. JSON bodies; errors are RFC 9457
//! problem documents (`application/problem+json`). Same authentication as `/mcp`; a principal
//! sees only its own tasks (the admin sees all).
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/tasks?status=a,b&tool=&principal=&q=&cursor=&limit=` | `{tasks, nextCursor, counts}` newest first; `counts` per status under the other filters; `nextCursor` is opaque and bound to the caller and the filters (see `page_cursor`) |
//! | `GET /v1/tasks/{taskId}` | `{task, timeline, inputRounds}` |
//! | `POST /v1/tasks/{taskId}/input` `{inputResponses}` | `{accepted, ignored, task}` |
//! | `POST /v1/tasks/{taskId}/cancel` | 202 `{task}` |
//! | `GET /v1/tasks/{taskId}/log?offset=&tail=&limit=` | `{offset, nextOffset, size, text, complete, exists}` (see `logs_api`) |
//! | `GET /v1/events` (`Last-Event-ID` or `?since=`) | `text/event-stream` of `change` events |
//! | `GET /v1/me`, `GET /v1/tools` | the caller's principal; the task tools |
//! | `POST /v1/agents` `{name}` (admin) | 201 `{name, token, mcpUrl, configs: [ClientConfig]}`; 409 name taken |
//! | `GET /v1/agents` (admin) | `{agents: [{name, createdAt, revoked}]}` |
//! | `GET /v1/openapi.json` | the OpenAPI 3.1 document of `/v1`, generated from this code |
//!
//! A request body over [`MAX_BODY_BYTES`] is a 413 problem document on every route ([`limit_body`]).

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    Extension, Json, Router,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::{get, post},
};
use futures::{StreamExt, stream};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_stream::wrappers::{BroadcastStream, errors::BroadcastStreamRecvError};

use super::page_cursor;
use taskdeck_engine::{
    Engine, EngineError, Principal, TaskRecord, TaskStatus, feed::Change, store::ListFilter,
};

/// Axum middleware: the bare `405` axum's router answers for a method a `/v1` path does not
/// take becomes a problem document like every other `/v1` error (its `Allow` header kept).
pub async fn problem_for_405(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let v1 = req.uri().path().starts_with("/v1");
    let resp = next.run(req).await;
    if !v1
        || resp.status() != StatusCode::METHOD_NOT_ALLOWED
        || resp.headers().contains_key(header::CONTENT_TYPE)
    {
        return resp;
    }
    let allow = resp.headers().get(header::ALLOW).cloned();
    let detail = match allow.as_ref().and_then(|a| a.to_str().ok()) {
        Some(methods) if !methods.is_empty() => format!("this path takes only {methods}"),
        _ => {
            "this path does not take this method (its Allow header lists the ones it takes)".into()
        }
    };
    let mut p = problem(StatusCode::METHOD_NOT_ALLOWED, &detail);
    if let Some(a) = allow {
        p.headers_mut().insert(header::ALLOW, a);
    }
    p
}

/// The largest request body a `/v1` route takes, in bytes: 4 MiB, as on `/mcp`. What agents
/// and runners store is capped far lower by the engine (`engine::limits`); this bounds what a
/// request can make the server read.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How much of a too large body [`limit_body`] reads (and drops) before it answers 413, in
/// bytes: a client that is still sending when the answer comes and the connection closes gets
/// a broken pipe instead of the answer.
const DRAINED_BYTES: u64 = 64 * 1024 * 1024;

/// Axum middleware for the `/v1` routes: reads the request body, up to [`MAX_BODY_BYTES`], before
/// any handler runs. A larger one (by its `Content-Length`, or once that many bytes arrived
/// without one) is answered `413` with a problem document, whatever the route, after the rest
/// of the body (up to [`DRAINED_BYTES`]) was read and dropped; a body that cannot be read (the
/// client went away mid-body) is a `400` one.
pub async fn limit_body(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    use http_body_util::BodyExt;
    let too_large = || {
        problem(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is larger than {} MiB, the most a /v1 route takes",
                MAX_BODY_BYTES / (1024 * 1024)
            ),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > DRAINED_BYTES) {
        return too_large();
    }
    let (parts, mut body) = req.into_parts();
    let mut kept =
        bytes::BytesMut::with_capacity(declared.unwrap_or(0).min(MAX_BODY_BYTES as u64) as usize);
    let mut read: u64 = 0;
    while let Some(frame) = body.frame().await {
        let data = match frame.map(|f| f.into_data()) {
            Ok(Ok(data)) => data,
            Ok(Err(_trailers)) => continue,
            Err(e) => {
                return problem(
                    StatusCode::BAD_REQUEST,
                    &format!("cannot read the request body: {e}"),
                );
            }
        };
        read += data.len() as u64;
        if read <= MAX_BODY_BYTES as u64 {
            kept.extend_from_slice(&data);
        } else if read > DRAINED_BYTES {
            break;
        }
    }
    if read > MAX_BODY_BYTES as u64 {
        return too_large();
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        kept.freeze().into(),
    ))
    .await
}

/// An RFC 9457 problem document response.
pub fn problem(status: StatusCode, detail: &str) -> Response {
    let body = json!({
        "type": "about:blank",
        "title": status.canonical_reason().unwrap_or("Error"),
        "status": status.as_u16(),
        "detail": detail,
    });
    let mut resp = (status, body.to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/problem+json"),
    );
    resp
}

/// `Query<T>` whose rejection (a malformed or mistyped query string) is a 400 problem document
/// like every other `/v1` error, not axum's plain-text one.
pub struct ProblemQuery<T>(pub T);

impl<T, S> axum::extract::FromRequestParts<S> for ProblemQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        <Query<T> as axum::extract::FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ProblemQuery(v))
            .map_err(|e| problem(StatusCode::BAD_REQUEST, &e.body_text()))
    }
}

/// The problem document for an engine error (404 for not found, 422 invalid, 409 conflicts).
pub fn engine_problem(e: EngineError) -> Response {
    match e {
        EngineError::NotFound => problem(StatusCode::NOT_FOUND, "Task not found"),
        EngineError::Invalid(m) => problem(StatusCode::UNPROCESSABLE_ENTITY, &m),
        EngineError::Terminal(_) | EngineError::KeyReused(_) => {
            problem(StatusCode::CONFLICT, &e.to_string())
        }
        EngineError::IllegalTransition { .. } | EngineError::Store(_) => {
            problem(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string())
        }
    }
}

/// The `/v1` router (state: the engine).
pub fn router(engine: Engine) -> Router {
    Router::new()
        .route("/v1/tasks", get(list_tasks))
        .route("/v1/tasks/{task_id}", get(get_task))
        .route("/v1/tasks/{task_id}/input", post(answer))
        .route("/v1/tasks/{task_id}/cancel", post(cancel))
        .route("/v1/events", get(events))
        .route("/v1/me", get(me))
        .route("/v1/agents", get(list_agents).post(create_agent))
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/tools", get(tools))
        .with_state(engine)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Comma-separated statuses (working, input_required, completed, failed, cancelled).
    status: Option<String>,
    /// Only this tool.
    tool: Option<String>,
    /// Only this principal (the admin only; others always see their own).
    principal: Option<String>,
    /// Free text over tool, arguments, status message, result and taskId.
    q: Option<String>,
    /// `nextCursor` of the previous page, as it came (opaque). It continues only the list it
    /// came from: same caller and the same status, tool, principal and q (`limit` may change);
    /// any other cursor, an empty one included, is refused with 400.
    cursor: Option<String>,
    /// Page size, 1..=1000 (default 100); other values are refused with 400.
    limit: Option<usize>,
}

/// Tasks visible to the caller, newest first.
#[utoipa::path(get, path = "/v1/tasks", params(ListQuery), tag = "tasks",
    responses((status = 200, description = "`{tasks: [Task], nextCursor: string|null, counts: {status: n}, eventId: string}`: the page and the counts reflect exactly the changes up to `eventId` (read in one snapshot); `/v1/events` with `Last-Event-ID: eventId` brings every later one (a task deleted meanwhile: only its `deleted` event)", body = Object),
              (status = 400, description = "unknown status, bad limit, or a cursor that is empty, not a nextCursor, altered, another principal's or another query's (the detail says which)", content_type = "application/problem+json")))]
async fn list_tasks(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ProblemQuery(q): ProblemQuery<ListQuery>,
) -> Response {
    let mut statuses = Vec::new();
    for s in q
        .status
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.is_empty())
    {
        match TaskStatus::parse(s) {
            Some(st) => statuses.push(st),
            None => return problem(StatusCode::BAD_REQUEST, &format!("unknown status {s:?}")),
        }
    }
    if q.q.as_deref().is_some_and(|t| t.contains('\0')) {
        return problem(StatusCode::BAD_REQUEST, "q must not contain NUL characters");
    }
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return problem(
            StatusCode::BAD_REQUEST,
            &format!("limit must be 1 to 1000, not {limit}"),
        );
    }
    let mut filter = ListFilter {
        statuses,
        tool: q.tool.filter(|t| !t.is_empty()),
        principal: q.principal.filter(|t| !t.is_empty()),
        query: q.q.filter(|t| !t.is_empty()),
        before_seq: None,
        limit,
    };
    if !p.admin {
        filter.principal = Some(p.name.clone());
    }
    let key = *engine.store().cursor_key();
    if let Some(cursor) = q.cursor.as_deref() {
        match page_cursor::decode(&key, cursor, &cursor_scope(&p, &filter)) {
            Ok(seq) => filter.before_seq = Some(seq),
            Err(e) => return problem(StatusCode::BAD_REQUEST, &e.to_string()),
        }
    }
    let result = tokio::task::spawn_blocking(move || {
        let page = engine.page(&p, filter.clone())?;
        let next = page
            .next_seq
            .map(|seq| page_cursor::encode(&key, seq, &cursor_scope(&p, &filter)));
        Ok::<_, EngineError>((page, next))
    })
    .await;
    match result {
        Ok(Ok((page, next))) => Json(json!({
            "tasks": page.tasks.iter().map(TaskRecord::api_view).collect::<Vec<_>>(),
            "nextCursor": next,
            "counts": page.counts,
            "eventId": page.event_id.to_string(),
        }))
        .into_response(),
        Ok(Err(e)) => engine_problem(e),
        Err(e) => problem(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// What a `/v1/tasks` cursor is bound to: the caller and the filters of its list.
fn cursor_scope<'a>(caller: &'a Principal, filter: &'a ListFilter) -> page_cursor::CursorScope<'a> {
    page_cursor::CursorScope {
        caller,
        statuses: &filter.statuses,
        tool: filter.tool.as_deref(),
        principal: filter.principal.as_deref(),
        query: filter.query.as_deref(),
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
    timeline_limit: Option<usize>,
}

/// One task with its timeline (the newest 1,000 events by default) and input rounds.
#[utoipa::path(get, path = "/v1/tasks/{task_id}", params(("task_id" = String, Path, description = "taskId"), TaskQuery), tag = "tasks",
    responses((status = 200, description = "`{task, timeline: [Event], timelineMore: bool, inputRounds: [InputRound]}`: `timeline` is oldest first; an InputRound is `{key, request, state: outstanding|answered|superseded, response, answeredBy, answeredAt, createdAt, humanOnly}` (`humanOnly`: only the admin may answer it); `timelineMore` says older events exist (ask again with `timelineBefore` = the first event's id)", body = Object),
              (status = 400, description = "timelineLimit outside 1..=5000", content_type = "application/problem+json"),
              (status = 404, description = "unknown, or another principal's", content_type = "application/problem+json")))]
async fn get_task(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    Path(task_id): Path<String>,
    ProblemQuery(q): ProblemQuery<TaskQuery>,
) -> Response {
    let limit = q.timeline_limit.unwrap_or(1000);
    if !(1..=5000).contains(&limit) {
        return problem(
            StatusCode::BAD_REQUEST,
            &format!("timelineLimit must be 1 to 5000, not {limit}"),
        );
    }
    let task = match engine.get(&p, &task_id) {
        Ok(t) => t,
        Err(e) => return engine_problem(e),
    };
    match engine.history(&p, &task_id, q.timeline_before, limit) {
        Ok((timeline, more, rounds)) => Json(json!({
            "task": task.api_view(),
            "timeline": timeline.iter().map(|e| e.api_view()).collect::<Vec<_>>(),
            "timelineMore": more,
            "inputRounds": rounds.iter().map(|r| json!({
                "key": r.key, "request": r.request, "state": r.state, "response": r.response,
                "answeredBy": r.answered_by,
                "answeredAt": r.answered_at_ms.map(taskdeck_engine::clock::iso8601),
                "createdAt": taskdeck_engine::clock::iso8601(r.created_at_ms),
                "humanOnly": r.human_only,
            })).collect::<Vec<_>>(),
        }))
        .into_response(),
        Err(e) => engine_problem(e),
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct AnswerBody {
    /// Request key → answer (`{action: accept|decline|cancel, content?}` for elicitations).
    input_responses: Map<String, Value>,
}

/// Answers outstanding input requests (SEP-2663 semantics: partial answers taken, others ignored).
#[utoipa::path(post, path = "/v1/tasks/{task_id}/input", params(("task_id" = String, Path, description = "taskId")), request_body = AnswerBody, tag = "tasks",
    responses((status = 200, description = "`{accepted: [key], ignored: [key], task}`", body = Object),
              (status = 400, description = "malformed body", content_type = "application/problem+json"),
              (status = 404, description = "unknown task", content_type = "application/problem+json"),
              (status = 422, description = "an answer fails its schema; nothing recorded", content_type = "application/problem+json")))]
async fn answer(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    Path(task_id): Path<String>,
    body: Result<Json<AnswerBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Json(body) = match body {
        Ok(b) => b,
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                &format!("body must be {{\"inputResponses\": {{...}}}}: {e}"),
            );
        }
    };
    match engine.answer(&p, &task_id, body.input_responses).await {
        Ok(report) => {
            let task = engine
                .get(&p, &task_id)
                .map(|t| t.api_view())
                .unwrap_or(Value::Null);
            Json(json!({"accepted": report.accepted, "ignored": report.ignored, "task": task}))
                .into_response()
        }
        Err(e) => engine_problem(e),
    }
}

/// Requests cancellation (cooperative; idempotent).
#[utoipa::path(post, path = "/v1/tasks/{task_id}/cancel", params(("task_id" = String, Path, description = "taskId")), tag = "tasks",
    responses((status = 202, description = "`{task}`", body = Object),
              (status = 404, description = "unknown task", content_type = "application/problem+json")))]
async fn cancel(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    Path(task_id): Path<String>,
) -> Response {
    match engine.cancel(&p, &task_id).await {
        Ok(_) => {
            let task = engine
                .get(&p, &task_id)
                .map(|t| t.api_view())
                .unwrap_or(Value::Null);
            (StatusCode::ACCEPTED, Json(json!({"task": task}))).into_response()
        }
        Err(e) => engine_problem(e),
    }
}

/// The caller's principal.
#[utoipa::path(get, path = "/v1/me", tag = "auth", responses((status = 200, description = "`{principal, admin}`", body = Object)))]
async fn me(Extension(p): Extension<Principal>) -> Response {
    Json(json!({"principal": p.name, "admin": p.admin})).into_response()
}

/// The task tools.
#[utoipa::path(get, path = "/v1/tools", tag = "tasks", responses((status = 200, description = "`{tools: [{name, title, description, inputSchema}]}`", body = Object)))]
async fn tools(State(engine): State<Engine>) -> Response {
    let tools: Vec<Value> = engine
        .tools()
        .into_iter()
        .map(|d| json!({"name": d.name, "title": d.title, "description": d.description, "inputSchema": d.input_schema}))
        .collect();
    Json(json!({"tools": tools})).into_response()
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct EventsQuery {
    /// Resume after this event id (like `Last-Event-ID`).
    since: Option<i64>,
}

fn change_event(change: &Change) -> Event {
    let data = json!({"event": change.event.api_view(), "task": change.task.api_view()});
    Event::default()
        .id(change.event.id.to_string())
        .event("change")
        .data(data.to_string())
}

/// `GET /v1/events`: every change to tasks the caller may see, as SSE `change` events whose
/// `id` is the timeline event id. A task removed from the store (TTL, caps) ends with an
/// event of kind `deleted` (`data: {status, tool, principal}`). With `Last-Event-ID` (or `?since=`), the stream first replays
/// what was missed from the store. If the caller falls too far behind, a `resync` event asks it
/// to reload its list.
#[utoipa::path(get, path = "/v1/events", params(EventsQuery), tag = "tasks",
    responses((status = 200, description = "Server-Sent Events: `change` events `{event, task}` with `id` = event id; `resync` when the client fell behind", content_type = "text/event-stream")))]
async fn events(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    ProblemQuery(q): ProblemQuery<EventsQuery>,
) -> Response {
    // A Last-Event-ID that is not an event id this store could have given cannot be resumed:
    // like one past the newest event, it gets `resync` (below).
    let header_id = headers
        .get("last-event-id")
        .map(|v| v.to_str().ok().and_then(|v| v.trim().parse::<i64>().ok()));
    let since = match header_id {
        Some(Some(id)) => Some(id),
        Some(None) => Some(i64::MAX),
        None => q.since,
    };
    // Subscribe before reading the backlog so nothing falls between the two.
    let live = BroadcastStream::new(engine.store().feed().subscribe());
    let mut replayed_up_to = since.unwrap_or(i64::MAX);
    let mut backlog = Vec::new();
    // An id this store never reached (e.g. a backup older than the client's last event was
    // restored): the client's state cannot be resumed, so it is asked to reload.
    let newest = match since.map(|_| engine.store().last_event_id()).transpose() {
        Ok(n) => n.unwrap_or(0),
        Err(e) => return engine_problem(e),
    };
    if since.is_some_and(|s| s > newest) {
        backlog.push(Ok(Event::default().event("resync").data("{}")));
        replayed_up_to = newest;
    } else if let Some(mut after) = since {
        let owner = (!p.admin).then(|| p.name.clone());
        loop {
            let batch = match engine.store().events_since(after, owner.as_deref(), 1000) {
                Ok(b) => b,
                Err(e) => return engine_problem(e),
            };
            let Some(last) = batch.last() else { break };
            after = last.id;
            for ev in batch {
                if ev.kind == "deleted" {
                    // The task is gone; its last status, tool and principal are in the event.
                    let task = json!({"taskId": ev.task_id, "status": ev.data["status"],
                        "tool": ev.data["tool"], "principal": ev.data["principal"]});
                    backlog.push(Ok::<_, Infallible>(
                        Event::default()
                            .id(ev.id.to_string())
                            .event("change")
                            .data(json!({"event": ev.api_view(), "task": task}).to_string()),
                    ));
                } else if let Ok(task) = engine.get(&p, &ev.task_id) {
                    backlog.push(Ok::<_, Infallible>(change_event(&Change {
                        event: ev,
                        task: Arc::new(task),
                    })));
                }
            }
            if backlog.len() > 50_000 {
                backlog.clear();
                backlog.push(Ok(Event::default().event("resync").data("{}")));
                break;
            }
        }
        replayed_up_to = after;
    }
    let principal = p.clone();
    let live = live.filter_map(move |item| {
        let principal = principal.clone();
        async move {
            match item {
                Ok(change) if change.event.id > replayed_up_to || replayed_up_to == i64::MAX => {
                    principal
                        .can_see(&change.task.principal)
                        .then(|| Ok(change_event(&change)))
                }
                Ok(_) => None,
                Err(BroadcastStreamRecvError::Lagged(_)) => {
                    Some(Ok(Event::default().event("resync").data("{}")))
                }
            }
        }
    });
    let stream = stream::iter(backlog).chain(live);
    let mut resp = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    resp.headers_mut()
        .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    resp
}

#[derive(Deserialize, utoipa::ToSchema)]
struct AgentBody {
    /// Principal name: 1-64 letters, digits, `-`, `_`, `.`.
    name: String,
}

fn admin_only(p: &Principal) -> Option<Response> {
    (!p.admin).then(|| problem(StatusCode::FORBIDDEN, "only the admin manages agent tokens"))
}

/// `POST /v1/agents`: a token for a new agent principal, with ready-to-paste client configs.
#[utoipa::path(post, path = "/v1/agents", request_body = AgentBody, tag = "auth",
    responses((status = 201, description = "`{name, token, mcpUrl, configs: [{client, title, target, kind, text}]}`", body = Object),
              (status = 403, description = "not the admin", content_type = "application/problem+json"),
              (status = 409, description = "name taken", content_type = "application/problem+json"),
              (status = 422, description = "bad name", content_type = "application/problem+json")))]
async fn create_agent(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    body: Result<Json<AgentBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    if let Some(r) = admin_only(&p) {
        return r;
    }
    let Ok(Json(body)) = body else {
        return problem(
            StatusCode::BAD_REQUEST,
            "body must be {\"name\": \"agent-name\"}",
        );
    };
    let name = body.name.trim().to_string();
    match super::auth::create_token(engine.store(), &name).await {
        Ok(token) => {
            let host = headers
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .unwrap_or("127.0.0.1");
            let mcp_url = format!("http://{host}/mcp");
            let configs: Vec<_> = super::mcp_config::CLIENTS
                .iter()
                .filter_map(|c| super::mcp_config::client_config(c, &mcp_url, &token))
                .collect();
            (
                StatusCode::CREATED,
                Json(json!({"name": name, "token": token, "mcpUrl": mcp_url, "configs": configs})),
            )
                .into_response()
        }
        Err(e @ (super::auth::AuthError::Exists(_) | super::auth::AuthError::Reserved(_))) => {
            problem(StatusCode::CONFLICT, &e.to_string())
        }
        Err(e @ super::auth::AuthError::BadName(_)) => {
            problem(StatusCode::UNPROCESSABLE_ENTITY, &e.to_string())
        }
        Err(e) => problem(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// `GET /v1/agents`: token names (never secrets).
#[utoipa::path(get, path = "/v1/agents", tag = "auth",
    responses((status = 200, description = "`{agents: [{name, createdAt, revoked}]}`", body = Object),
              (status = 403, description = "not the admin", content_type = "application/problem+json")))]
async fn list_agents(State(engine): State<Engine>, Extension(p): Extension<Principal>) -> Response {
    if let Some(r) = admin_only(&p) {
        return r;
    }
    match super::auth::list_tokens(engine.store()) {
        Ok(tokens) => Json(json!({"agents": tokens})).into_response(),
        Err(e) => problem(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// The OpenAPI 3.1 document of `/v1`, generated from the handlers' annotations.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "Taskdeck HTTP API", description = "Tasks, input rounds, events, agents and jobs. Every route needs `Authorization: Bearer <token>`; errors are RFC 9457 problem documents. A request body over 4 MiB is refused with 413 on every route."),
    paths(list_tasks, get_task, answer, cancel, me, tools, events, create_agent, list_agents,
          super::jobs_api::create, super::jobs_api::status, super::jobs_api::cancel_delete, super::jobs_api::cancel, super::jobs_api::report, super::logs_api::read_log),
    components(schemas(AnswerBody, AgentBody, super::jobs_api::CreateBody, super::jobs_api::ReportBody, super::jobs_api::ReportProgress, super::jobs_api::ReportError)),
    modifiers(&BearerAuth),
    security(("bearer" = []))
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// `GET /v1/openapi.json`.
async fn openapi() -> Response {
    Json(<ApiDoc as utoipa::OpenApi>::openapi()).into_response()
}

//! The HTTP jobs API: long-running operations the RFC 9110 way (§15.3.3 "202 Accepted": the
//! response describes the request's status and points to a status monitor). Any task tool can be
//! started as a job, and programs can register work they run themselves ("external" jobs) and
//! report on it.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/jobs` `{tool, arguments}` or `{external: {name, heartbeatMs?, ...}}` | 202, `Location: /v1/jobs/{taskId}`, `Retry-After` (s), body = the task; with an `Idempotency-Key` already used for the same body: 200 and that task; for another body: 422; when that task is gone: 410 |
//! | `GET /v1/jobs/{taskId}` | 200, the task (result/error inline when terminal); `Retry-After` while not terminal |
//! | `DELETE /v1/jobs/{taskId}`, `POST /v1/jobs/{taskId}/cancel` | 202, the task (cancellation is cooperative) |
//! | `POST /v1/jobs/{taskId}/report` (external jobs) | 200 `{task, cancelRequested}`, or 202 when the report ends the job; see [`ReportBody`] |
//!
//! Unknown ids and other principals' jobs: 404 `application/problem+json` (RFC 9457).

use std::sync::Arc;

use axum::{
    Extension, Json, Router,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{get, post},
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    http_api::{engine_problem, problem},
    idempotency_key,
};
use crate::tools::external::{EXTERNAL, ExternalJobs, Report};
use taskdeck_engine::{
    Engine, FailureKind, Outcome, Principal, TaskFailure, TaskRecord, idempotency::Creation,
};

/// State of the jobs routes.
#[derive(Clone)]
pub struct JobsState {
    pub engine: Engine,
    pub external: Arc<ExternalJobs>,
}

/// The `/v1/jobs` router.
pub fn router(state: JobsState) -> Router {
    Router::new()
        .route("/v1/jobs", post(create))
        .route("/v1/jobs/{task_id}", get(status).delete(cancel_delete))
        .route("/v1/jobs/{task_id}/cancel", post(cancel))
        .route("/v1/jobs/{task_id}/report", post(report))
        .with_state(state)
}

/// `Retry-After` in whole seconds (at least 1) from the task's pollIntervalMs.
fn retry_after(task: &TaskRecord) -> HeaderValue {
    HeaderValue::from(task.poll_interval_ms.div_ceil(1000).max(1))
}

fn job_response(status: StatusCode, task: &TaskRecord, location: bool) -> Response {
    let mut resp = (status, Json(task.api_view())).into_response();
    if location && let Ok(v) = HeaderValue::from_str(&format!("/v1/jobs/{}", task.task_id)) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    if !task.status.is_terminal() {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, retry_after(task));
    }
    resp
}

/// Start a job: `{tool, arguments}` (any task tool) or `{external: {name, heartbeatMs?, ...}}`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    /// A task tool, e.g. `run_command`.
    tool: Option<String>,
    /// The tool's arguments.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    arguments: Option<Map<String, Value>>,
    /// Register work this program runs itself and reports on.
    #[schema(value_type = Option<Object>)]
    external: Option<Map<String, Value>>,
}

/// Starts a job (RFC 9110 §15.3.3). With an `Idempotency-Key` (IETF httpapi idempotency-key
/// draft), a start the caller repeats (a retry after a lost answer) is done once: the key is
/// kept per principal for 24 h with the job it started.
#[utoipa::path(post, path = "/v1/jobs", request_body = CreateBody, tag = "jobs",
    params(("Idempotency-Key" = Option<String>, Header, description = "Makes the start safe to retry: 1 to 255 visible ASCII characters, bare or as a structured-field string (`\"...\"`), e.g. a random UUID per job. Kept per principal for 24 h with the job it started: the same key and body again answer 200 with that job, the same key with another body 422. Other principals' keys are theirs.")),
    responses((status = 202, description = "the task; `Location: /v1/jobs/{taskId}`, `Retry-After` in s", body = Object),
              (status = 200, description = "the `Idempotency-Key` started this job before, with the same body (tool and arguments, members in any order): the job as it is now, with `Location` (no second job is created)", body = Object),
              (status = 400, description = "malformed body, or a malformed `Idempotency-Key` (empty, over 255 characters, not visible ASCII, given twice)", content_type = "application/problem+json"),
              (status = 410, description = "the `Idempotency-Key` started a job that no longer exists (its ttl ran out, or a cap removed it)", content_type = "application/problem+json"),
              (status = 422, description = "unknown tool, invalid arguments, arguments over 256 KiB as JSON, or an `Idempotency-Key` used before with another body", content_type = "application/problem+json")))]
pub(crate) async fn create(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    body: Result<Json<CreateBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let key = match idempotency_key::from_headers(&headers) {
        Ok(k) => k,
        Err(m) => return problem(StatusCode::BAD_REQUEST, &m),
    };
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => {
            return problem(
                StatusCode::BAD_REQUEST,
                &format!(
                    "body must be {{\"tool\", \"arguments\"}} or {{\"external\": {{\"name\"}}}}: {e}"
                ),
            );
        }
    };
    let (tool, arguments) = match (body.tool, body.external) {
        (Some(tool), None) if tool != EXTERNAL => {
            (tool, Value::Object(body.arguments.unwrap_or_default()))
        }
        (None, Some(ext)) if body.arguments.is_none() => (EXTERNAL.to_string(), Value::Object(ext)),
        _ => {
            return problem(
                StatusCode::BAD_REQUEST,
                "give either {\"tool\", \"arguments\"} or {\"external\": {\"name\", ...}}",
            );
        }
    };
    let callable = s
        .engine
        .tool(&tool)
        .is_some_and(|t| t.descriptor().agent_callable || tool == EXTERNAL);
    if !callable {
        return problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            &format!("unknown tool: {tool}"),
        );
    }
    if let Err(e) = s.engine.check_arguments(&tool, &arguments) {
        return engine_problem(e);
    }
    let Some(key) = key else {
        return match s.engine.create_task(&p, &tool, arguments).await {
            Ok(task) => job_response(StatusCode::ACCEPTED, &task, true),
            Err(e) => engine_problem(e),
        };
    };
    match s.engine.create_task_once(&p, &tool, arguments, &key).await {
        Ok(Creation::Created(task)) => job_response(StatusCode::ACCEPTED, &task, true),
        Ok(Creation::Replayed {
            task: Some(task), ..
        }) => job_response(StatusCode::OK, &task, true),
        Ok(Creation::Replayed {
            task_id,
            task: None,
        }) => problem(
            StatusCode::GONE,
            &format!(
                "Idempotency-Key {key:?} started job {task_id}, which no longer exists (its ttl ran out or a cap removed it); use a new key to start another"
            ),
        ),
        Ok(Creation::Conflict { task_id }) => problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            &format!(
                "Idempotency-Key {key:?} was used for another request (it started job {task_id}); a key goes with one body: use a new key for a new job"
            ),
        ),
        Err(e) => engine_problem(e),
    }
}

/// The job's status monitor.
#[utoipa::path(get, path = "/v1/jobs/{task_id}", params(("task_id" = String, Path, description = "taskId")), tag = "jobs",
    responses((status = 200, description = "the task, result/error inline when terminal; `Retry-After` while not terminal", body = Object),
              (status = 404, description = "unknown, or another principal's", content_type = "application/problem+json")))]
pub(crate) async fn status(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    match s.engine.get(&p, &id) {
        Ok(task) => job_response(StatusCode::OK, &task, false),
        Err(e) => engine_problem(e),
    }
}

/// Requests cancellation.
#[utoipa::path(post, path = "/v1/jobs/{task_id}/cancel", params(("task_id" = String, Path, description = "taskId")), tag = "jobs",
    responses((status = 202, description = "the task", body = Object),
              (status = 404, description = "unknown, or another principal's", content_type = "application/problem+json")))]
pub(crate) async fn cancel(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
) -> Response {
    if let Err(e) = s.engine.cancel(&p, &id).await {
        return engine_problem(e);
    }
    match s.engine.get(&p, &id) {
        Ok(task) => job_response(StatusCode::ACCEPTED, &task, false),
        Err(e) => engine_problem(e),
    }
}

/// `DELETE /v1/jobs/{taskId}`: the same as `POST .../cancel`.
#[utoipa::path(delete, path = "/v1/jobs/{task_id}", params(("task_id" = String, Path, description = "taskId")), tag = "jobs",
    responses((status = 202, description = "the task", body = Object),
              (status = 404, description = "unknown, or another principal's", content_type = "application/problem+json")))]
pub(crate) async fn cancel_delete(
    state: State<JobsState>,
    p: Extension<Principal>,
    id: Path<String>,
) -> Response {
    cancel(state, p, id).await
}

/// A runner's report on its external job. Every field is optional; any report is a heartbeat.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReportBody {
    /// `{current, total?, message?}`.
    pub progress: Option<ReportProgress>,
    /// The job's latest status line; the first 4 KiB are kept (a longer one ends with
    /// `… [truncated N]`).
    pub status_message: Option<String>,
    /// Questions for the human, SEP-2663 shape: key → `{"method": "elicitation/create",
    /// "params": {"message", "requestedSchema"?}}` (a message of at most 64 KiB). Keys are unique for the job's life; sending
    /// the same request again is harmless. The job is `input_required` until all are answered;
    /// answers come back in `inputResponses` of every report reply.
    #[schema(value_type = Option<Object>)]
    pub input_requests: Option<Map<String, Value>>,
    /// The final CallToolResult (`{content, structuredContent?, isError?}`): completes the job.
    #[schema(value_type = Option<Object>)]
    pub result: Option<Map<String, Value>>,
    /// A JSON-RPC error `{code, message, data?}`: fails the job.
    pub error: Option<ReportError>,
    /// The runner stopped because cancellation was requested: the job ends cancelled.
    #[serde(default)]
    pub cancelled: bool,
}

/// Progress in a report.
#[derive(Deserialize, utoipa::ToSchema)]
pub struct ReportProgress {
    pub current: f64,
    pub total: Option<f64>,
    /// Also the job's statusMessage; cut to 4 KiB like it.
    pub message: Option<String>,
}

/// A JSON-RPC error in a report.
#[derive(Deserialize, utoipa::ToSchema)]
pub struct ReportError {
    pub code: i64,
    pub message: String,
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
}

/// An external runner's report (any report is also a heartbeat).
#[utoipa::path(post, path = "/v1/jobs/{task_id}/report", params(("task_id" = String, Path, description = "taskId")), request_body = ReportBody, tag = "jobs",
    responses((status = 200, description = "`{task, cancelRequested, inputResponses: {key: answer}}`: every answer the human gave to this job's input requests so far", body = Object),
              (status = 202, description = "the report ends the job", body = Object),
              (status = 404, description = "unknown, or another principal's", content_type = "application/problem+json"),
              (status = 409, description = "not an external job, or already settled", content_type = "application/problem+json")))]
pub(crate) async fn report(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Json<ReportBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return problem(StatusCode::BAD_REQUEST, &format!("invalid report: {e}")),
    };
    let task = match s.engine.get(&p, &id) {
        Ok(t) => t,
        Err(e) => return engine_problem(e),
    };
    if task.tool != EXTERNAL {
        return problem(StatusCode::CONFLICT, "only external jobs take reports");
    }
    // A job that ended without its runner (expired, failed as runner lost, cancelled) tells the
    // runner so, whatever the runner still has in flight.
    if task.status.is_terminal() {
        let why = task.status_message.as_deref().unwrap_or("");
        return problem(
            StatusCode::CONFLICT,
            &format!("job is already {}: {why}", task.status.as_str()),
        );
    }
    let finished = [body.result.is_some(), body.error.is_some(), body.cancelled]
        .iter()
        .filter(|b| **b)
        .count();
    if finished > 1 {
        return problem(
            StatusCode::BAD_REQUEST,
            "a report ends a job at most one way: result, error or cancelled",
        );
    }
    let mut reports = vec![Report::Heartbeat];
    if let Some(pr) = body.progress {
        reports.push(Report::Progress {
            current: pr.current,
            total: pr.total,
            message: pr.message,
        });
    }
    if let Some(m) = body.status_message {
        reports.push(Report::StatusMessage(m));
    }
    if let Some(requests) = body.input_requests.filter(|r| !r.is_empty()) {
        for (key, request) in &requests {
            if let Err(m) = crate::tools::schema::check_input_request(request) {
                return problem(
                    StatusCode::BAD_REQUEST,
                    &format!("input request {key:?}: {m}"),
                );
            }
        }
        reports.push(Report::InputRequests(requests));
    }
    if let Some(mut r) = body.result {
        r.entry("content").or_insert_with(|| json!([]));
        reports.push(Report::Finished(Outcome::Completed(Value::Object(r))));
    } else if let Some(e) = body.error {
        reports.push(Report::Finished(Outcome::Failed(TaskFailure::new(
            FailureKind::Reported { code: e.code },
            e.message,
            e.data,
        ))));
    } else if body.cancelled {
        reports.push(Report::Finished(Outcome::Cancelled));
    }
    let ends = reports.iter().any(|r| matches!(r, Report::Finished(_)));
    for r in reports {
        match s.external.report(&id, r).await {
            Ok(true) => {}
            Ok(false) => {
                return problem(
                    StatusCode::CONFLICT,
                    &format!("job is already {}", task.status.as_str()),
                );
            }
            Err(e) => return engine_problem(e),
        }
    }
    if ends {
        // The job settles as soon as the engine stores the outcome; follow Location to see it.
        let mut resp = (
            StatusCode::ACCEPTED,
            Json(json!({"cancelRequested": task.cancel_requested})),
        )
            .into_response();
        if let Ok(v) = HeaderValue::from_str(&format!("/v1/jobs/{id}")) {
            resp.headers_mut().insert(header::LOCATION, v);
        }
        return resp;
    }
    let task = match s.engine.get(&p, &id) {
        Ok(t) => t,
        Err(e) => return engine_problem(e),
    };
    let cancel_requested = task.cancel_requested;
    let answers: Map<String, Value> = match s.engine.input_rounds(&p, &id) {
        Ok(rounds) => rounds
            .into_iter()
            .filter_map(|r| Some((r.key, r.response?)))
            .collect(),
        Err(e) => return engine_problem(e),
    };
    Json(json!({"task": task.api_view(), "cancelRequested": cancel_requested, "inputResponses": answers}))
        .into_response()
}

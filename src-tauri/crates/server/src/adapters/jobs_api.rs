//! The HTTP jobs API: long-running operations the RFC 9110 way (§15.3.3 "202 Accepted": the
//! response describes the request's status and points to a status monitor). Any task tool can be
//! started as a job, and programs can register work they run themselves ("external" jobs) and
//! report on it.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/jobs` `{tool, arguments}` or `{external: {name, heartbeatMs?, ...}}` | 202, `Location: /v1/jobs/{taskId}`, `Retry-After` (s), body = the task; with an `Idempotency-Key` already used for the same body: 200 and that task; for another body: 422; when that task is gone: 410 |
//! | `GET /v1/jobs/{taskId}` | 200, the task (result/error inline when terminal); `Retry-After` while not terminal |
//! | `DELETE /v1/jobs/{taskId}`, `POST /v1/jobs/{taskId}/cancel` | 202, the task (cancellation is cooperative); 200 when it had already ended |
//! | `POST /v1/jobs/{taskId}/report` (external jobs) | 200 `{task, cancelRequested}`, or 202 when the report ends the job; see [`ReportBody`] |
//!
//! Unknown ids and other principals' jobs: 404 `application/problem+json` (RFC 9457).

use std::sync::Arc;

use axum::{
    Extension, Json, Router,
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    api_error::{ApiError, ApiPath, ProblemDocument, json_body},
    api_types::{ReportEnded, ReportReply, TaskView},
    call_tool_result, idempotency_key, job_schemas,
};
use crate::tools::external::{EXTERNAL, ExternalJobs, Report};
use taskdeck_engine::{
    Engine, FailureKind, Outcome, Principal, TaskFailure, TaskRecord, idempotency::Creation,
};

/// State of the jobs routes.
#[derive(Clone)]
pub struct JobsState {
    /// The engine the jobs are tasks of.
    pub engine: Engine,
    /// The external jobs and their runners' reports.
    pub external: Arc<ExternalJobs>,
}

/// The `/v1/jobs` routes with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<JobsState> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(status, cancel_delete))
        .routes(routes!(cancel))
        .routes(routes!(report))
}

/// The `/v1/jobs` router.
pub fn router(state: JobsState) -> Router {
    routes().split_for_parts().0.with_state(state)
}

/// `Retry-After`: the task's pollIntervalMs rounded to the nearest whole second, at least 1.
/// Rounded, not up: each task's is drawn within a twentieth of the configured one
/// (`EngineConfig::new_task_poll_interval_ms`), and the default's 950-1050 ms should all say
/// 1 s, not 1 or 2.
fn retry_after(task: &TaskRecord) -> HeaderValue {
    HeaderValue::from((task.poll_interval_ms.saturating_add(500) / 1000).max(1))
}

fn job_response(status: StatusCode, task: &TaskRecord, location: bool) -> Response {
    let mut resp = (status, Json(TaskView::from(task))).into_response();
    if location && let Ok(v) = HeaderValue::from_str(&format!("/v1/jobs/{}", task.task_id)) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    if !task.status.is_terminal() {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, retry_after(task));
    }
    resp
}

/// Start a job: `{tool, arguments}` (any task tool) or `{external: {name, heartbeatMs?, ...}}`
/// (schema: [`job_schemas::job_start`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    tool: Option<String>,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    external: Option<Map<String, Value>>,
}

/// Without the server's tools at hand, any tool name; the served document lists them
/// (`api_doc::document`).
impl utoipa::PartialSchema for CreateBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        job_schemas::job_start(&[]).into()
    }
}

impl utoipa::ToSchema for CreateBody {}

/// Starts a job (RFC 9110 §15.3.3). With an `Idempotency-Key` (IETF httpapi idempotency-key
/// draft), a start the caller repeats (a retry after a lost answer) is done once: the key is
/// kept per principal for 24 h with the job it started.
#[utoipa::path(post, path = "/v1/jobs", request_body = CreateBody, tag = "jobs",
    params(("Idempotency-Key" = Option<String>, Header, pattern = r#"^([!#-~][!-~]{0,254}|"([!#-\[\]-~]|\\["\\]){1,255}")$"#, description = "Makes the start safe to retry: 1 to 255 visible ASCII characters, bare or as a structured-field string (`\"...\"`), e.g. a random UUID per job. Kept per principal for 24 h with the job it started: the same key and body again answer 200 with that job, the same key with another body 422. Other principals' keys are theirs.")),
    responses((status = 202, description = "the task; `Location: /v1/jobs/{taskId}`, `Retry-After` in s", body = TaskView,
                headers(("Location" = String, description = "`/v1/jobs/{taskId}`"), ("Retry-After" = u64, description = "seconds until the next poll is useful (while not terminal)"))),
              (status = 200, description = "the `Idempotency-Key` started this job before, with the same body (tool and arguments, members in any order): the job as it is now, with `Location` (no second job is created)", body = TaskView,
                headers(("Location" = String, description = "`/v1/jobs/{taskId}`"), ("Retry-After" = u64, description = "seconds until the next poll is useful (while not terminal)"))),
              (status = 400, description = "malformed body, both or neither of `tool` and `external`, an `external` with `ttlMs` (a job's ttlMs is the server's default), or a malformed `Idempotency-Key` (empty, over 255 characters, not visible ASCII, given twice)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 410, description = "the `Idempotency-Key` started a job that no longer exists (its ttl ran out, or a cap removed it)", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "unknown tool, invalid arguments, arguments over 256 KiB as JSON, or an `Idempotency-Key` used before with another body", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn create(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
    body: Result<Json<CreateBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let key = idempotency_key::from_headers(&headers).map_err(ApiError::bad_request)?;
    let body = json_body(
        body,
        "{\"tool\", \"arguments\"} or {\"external\": {\"name\"}}",
    )?;
    let (tool, arguments) = match (body.tool, body.external) {
        (Some(tool), None) if tool != EXTERNAL => {
            (tool, Value::Object(body.arguments.unwrap_or_default()))
        }
        // Its other fields are kept as the job's description; a `ttlMs` there would read as
        // a retention it does not set.
        (None, Some(ext)) if ext.contains_key("ttlMs") => {
            return Err(ApiError::bad_request(
                "an external job's ttlMs is not set by the job: it starts as Taskdeck's \
                 --default-ttl-ms (24 h unless set; 0 = unlimited) and grows while the runner \
                 reports, so a job runs as long as its runner does",
            ));
        }
        (None, Some(ext)) if body.arguments.is_none() => (EXTERNAL.to_string(), Value::Object(ext)),
        _ => {
            return Err(ApiError::bad_request(
                "give either {\"tool\", \"arguments\"} or {\"external\": {\"name\", ...}}",
            ));
        }
    };
    let callable = s
        .engine
        .tool(&tool)
        .is_some_and(|t| t.descriptor().agent_callable || tool == EXTERNAL);
    if !callable {
        return Err(ApiError::unprocessable(format!("unknown tool: {tool}")));
    }
    s.engine.check_arguments(&tool, &arguments)?;
    let Some(key) = key else {
        let task = s.engine.create_task(&p, &tool, arguments).await?;
        return Ok(job_response(StatusCode::ACCEPTED, &task, true));
    };
    match s
        .engine
        .create_task_once(&p, &tool, arguments, &key)
        .await?
    {
        Creation::Created(task) => Ok(job_response(StatusCode::ACCEPTED, &task, true)),
        Creation::Replayed {
            task: Some(task), ..
        } => Ok(job_response(StatusCode::OK, &task, true)),
        Creation::Replayed {
            task_id,
            task: None,
        } => Err(ApiError::new(
            StatusCode::GONE,
            format!(
                "Idempotency-Key {key:?} started job {task_id}, which no longer exists (deleted, its ttl ran out, or a cap removed it); use a new key to start another"
            ),
        )),
        Creation::Conflict { task_id } => Err(ApiError::unprocessable(format!(
            "Idempotency-Key {key:?} was used for another request (it started job {task_id}); a key goes with one body: use a new key for a new job"
        ))),
    }
}

/// The job's status monitor.
#[utoipa::path(get, path = "/v1/jobs/{taskId}", params(("taskId" = String, Path, description = "the task's id")), tag = "jobs",
    responses((status = 200, description = "the task, result/error inline when terminal; `Retry-After` while not terminal", body = TaskView,
                headers(("Retry-After" = u64, description = "seconds until the next poll is useful (while not terminal)"))),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn status(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    let task = s.engine.get(&p, &id)?;
    Ok(job_response(StatusCode::OK, &task, false))
}

/// Requests cancellation.
#[utoipa::path(post, path = "/v1/jobs/{taskId}/cancel", params(("taskId" = String, Path, description = "the task's id")), tag = "jobs",
    responses((status = 202, description = "cancellation requested: the task", body = TaskView,
                headers(("Retry-After" = u64, description = "seconds until the next poll is useful (while not terminal)"))),
              (status = 200, description = "the job had already ended: nothing to cancel; the task", body = TaskView),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn cancel(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiError> {
    // A job that had already ended has nothing to cancel: 200, not "accepted".
    let ended = s.engine.cancel(&p, &id).await?.status.is_terminal();
    let task = s.engine.get(&p, &id)?;
    let code = if ended {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok(job_response(code, &task, false))
}

/// `DELETE /v1/jobs/{taskId}`: the same as `POST .../cancel`.
#[utoipa::path(delete, path = "/v1/jobs/{taskId}", params(("taskId" = String, Path, description = "the task's id")), tag = "jobs",
    responses((status = 202, description = "cancellation requested: the task", body = TaskView,
                headers(("Retry-After" = u64, description = "seconds until the next poll is useful (while not terminal)"))),
              (status = 200, description = "the job had already ended: nothing to cancel; the task", body = TaskView),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn cancel_delete(
    state: State<JobsState>,
    p: Extension<Principal>,
    id: ApiPath<String>,
) -> Result<Response, ApiError> {
    cancel(state, p, id).await
}

/// A runner's report on its external job (schema: [`job_schemas::report`]). Every field is
/// optional; any report is a heartbeat.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReportBody {
    /// `{current, total?, message?}`.
    pub progress: Option<ReportProgress>,
    /// The job's latest status line; the first 4 KiB are kept.
    pub status_message: Option<String>,
    /// Questions for the human, SEP-2663 shape: key → `{"method": "elicitation/create",
    /// "params": {"message", "requestedSchema"?}}`.
    pub input_requests: Option<Map<String, Value>>,
    /// The final CallToolResult: completes the job.
    pub result: Option<Map<String, Value>>,
    /// A JSON-RPC error `{code, message, data?}`: fails the job.
    pub error: Option<ReportError>,
    /// The runner stopped because cancellation was requested, or on its own (then its
    /// `statusMessage` says why, and stays): the job ends cancelled.
    #[serde(default)]
    pub cancelled: bool,
    /// Lines of the job's output since the last report (the last may lack its newline),
    /// appended to its output log (`GET /v1/tasks/{taskId}/log`) before the rest of the
    /// report is applied; at most 16 MiB are kept in all.
    pub output: Option<String>,
    /// From this report on, the job's runner counts as lost after this many ms without a
    /// report (1000 to 86400000; the job's start set the first): e.g. longer while the runner
    /// is suspended. A restart of Taskdeck goes back to the start's.
    pub heartbeat_ms: Option<crate::tools::arguments::WholeNumber>,
}

impl utoipa::PartialSchema for ReportBody {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        job_schemas::report(ReportProgress::schema(), ReportError::schema()).into()
    }
}

impl utoipa::ToSchema for ReportBody {}

/// Progress in a report: `current` of `total` (units of the job's choosing: steps, bytes),
/// `0 <= current <= total`, `total > 0`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportProgress {
    /// What is done so far, from 0.
    #[schema(minimum = 0)]
    pub current: f64,
    /// The whole, above 0 and at least `current`; absent when unknown.
    #[schema(exclusive_minimum = 0)]
    pub total: Option<f64>,
    /// Also the job's statusMessage; cut to 4 KiB like it.
    pub message: Option<String>,
}

impl ReportProgress {
    /// Errors: 400 for `current` negative or `total` not above 0 (what the schema says), 422
    /// for `current` more than `total`.
    fn check(&self) -> Result<(), ApiError> {
        self.problem().map_err(|(schema, why)| match schema {
            true => ApiError::bad_request(why),
            false => ApiError::unprocessable(why),
        })
    }

    /// What is wrong, and whether the schema says it (`true`) or only the pair does.
    fn problem(&self) -> Result<(), (bool, String)> {
        // As JSON writes numbers (`1e-320`, not 320 zeros), a whole one as sent: `11`, not `11.0`.
        let shown = |x: f64| {
            if x.fract() == 0.0 && x.abs() < 9.0e15 {
                json!(x as i64)
            } else {
                json!(x)
            }
        };
        let (current, total) = (shown(self.current), self.total.map(shown));
        if self.current < 0.0 {
            return Err((
                true,
                format!("progress.current is {current}; it counts what is done, from 0"),
            ));
        }
        match (self.total, total) {
            (Some(t), Some(total)) if t <= 0.0 => Err((
                true,
                format!(
                    "progress.total is {total}; it must be more than 0 (leave it out when unknown)"
                ),
            )),
            (Some(t), Some(total)) if self.current > t => Err((
                false,
                format!("progress.current ({current}) is more than progress.total ({total})"),
            )),
            _ => Ok(()),
        }
    }
}

/// A JSON-RPC error in a report (JSON-RPC 2.0 §5.1: an integer `code`).
#[derive(Deserialize, utoipa::ToSchema)]
pub struct ReportError {
    /// An integer; JSON Schema's integers include `3.0`, so a whole float is taken too.
    #[serde(deserialize_with = "whole_number")]
    #[schema(value_type = i64)]
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Any JSON value.
    pub data: Option<Value>,
}

/// A JSON number with no fractional part, as an `i64` (`3` and `3.0` alike).
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    n.as_i64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e18)
                .map(|f| f as i64)
        })
        .ok_or_else(|| {
            serde::de::Error::custom(format!("{n} is not a whole number in i64's range"))
        })
}

/// The 409 for a report on a job that has ended: "job is already completed", and how when its
/// status message says it ("job is already failed: Task expired: ...").
fn already_ended(task: &TaskRecord) -> ApiError {
    let status = task.status.as_str();
    match task
        .status_message
        .as_deref()
        .filter(|m| !m.trim().is_empty())
    {
        Some(why) => ApiError::conflict(format!("job is already {status}: {why}")),
        None => ApiError::conflict(format!("job is already {status}")),
    }
}

/// The 409 for a report that found its job's run over: the job settled since it was read, or
/// its run ended (e.g. its heartbeat lapsed) and that end is being recorded (on a full disk,
/// once there is room): the runner learns how the job ended, when that is known.
fn ended_meanwhile(s: &JobsState, p: &Principal, id: &str) -> ApiError {
    let task = match s.engine.get(p, id) {
        Ok(task) => task,
        Err(e) => return e.into(),
    };
    if task.status.is_terminal() {
        return already_ended(&task);
    }
    match s.engine.unstored_end(p, id) {
        Ok(Some(end)) => {
            let how = match &end {
                Outcome::Completed(_) => "completed".to_string(),
                Outcome::Failed(f) => format!("failed: {}", f.message),
                Outcome::Cancelled => "cancelled".to_string(),
            };
            ApiError::conflict(format!(
                "job has already ended ({how}); its end is being recorded (on a full disk, \
                 once there is room)"
            ))
        }
        // Its run is over but how is not known here: it just ended, or Taskdeck is stopping
        // (the job waits for its runner again after the next start).
        Ok(None) => ApiError::conflict(format!(
            "job is not running now (its run just ended, or Taskdeck is stopping); GET \
             /v1/jobs/{id} says how it stands"
        )),
        Err(e) => e.into(),
    }
}

/// An external runner's report (any report is also a heartbeat).
#[utoipa::path(post, path = "/v1/jobs/{taskId}/report", params(("taskId" = String, Path, description = "the task's id")), request_body = ReportBody, tag = "jobs",
    responses((status = 200, description = "the job, whether cancellation was requested, and every answer the human gave to its input requests so far", body = ReportReply),
              (status = 202, description = "the report ends the job; `Location` is its status monitor", body = ReportEnded,
                headers(("Location" = String, description = "`/v1/jobs/{taskId}`"))),
              (status = 400, description = "malformed report (a `result` that is not a CallToolResult too), one that ends the job more than one way, or a malformed input request", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 403, description = "a human's token, for a job another principal owns: only the job's owner (its runner) or the admin reports", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "not an external job, already settled, its run has ended (its end waits for room on a full disk), or an input request key already used for another request (answered or not); `detail` says how", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "a value over its limit, or progress.current past progress.total", body = ProblemDocument, content_type = "application/problem+json")))]
pub(crate) async fn report(
    State(s): State<JobsState>,
    Extension(p): Extension<Principal>,
    ApiPath(id): ApiPath<String>,
    body: Result<Json<ReportBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let mut body = json_body(body, "a report")?;
    // What an agent reads as a CallToolResult, or a 400.
    if let Some(result) = &body.result {
        call_tool_result::check(&Value::Object(result.clone())).map_err(ApiError::bad_request)?;
    }
    // Only Taskdeck says a call was refused (`approvals::refusal`); a runner's job ran.
    if let Some(result) = &mut body.result {
        crate::approvals::refusal::unmark_object(result);
    }
    let task = s.engine.get(&p, &id)?;
    if task.tool != EXTERNAL {
        return Err(ApiError::conflict("only external jobs take reports"));
    }
    // A human sees every job, but speaks for none of their runners.
    if task.principal != p.name && !p.is_admin() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "only the job's owner (its runner) or the admin reports on a job",
        ));
    }
    // A job that ended without its runner (expired, failed as runner lost, cancelled) tells the
    // runner so, whatever the runner still has in flight.
    if task.status.is_terminal() {
        return Err(already_ended(&task));
    }
    let finished = [body.result.is_some(), body.error.is_some(), body.cancelled]
        .iter()
        .filter(|b| **b)
        .count();
    if finished > 1 {
        return Err(ApiError::bad_request(
            "a report ends a job at most one way: result, error or cancelled",
        ));
    }
    let mut reports = vec![Report::Heartbeat];
    if let Some(crate::tools::arguments::WholeNumber(ms)) = body.heartbeat_ms {
        if !crate::tools::external::HEARTBEAT_MS_RANGE.contains(&ms) {
            return Err(ApiError::bad_request(format!(
                "heartbeatMs: {ms} is not from 1000 to 86400000 (ms)"
            )));
        }
        reports.push(Report::HeartbeatTimeout(std::time::Duration::from_millis(
            ms,
        )));
    }
    if let Some(text) = body.output.filter(|t| !t.is_empty()) {
        reports.push(Report::Output(text));
    }
    // With `cancelled`, the statusMessage says why the runner stopped (a Ctrl-C, its own
    // stop), and stays the job's status message once it ends.
    let cancel_reason = match body.cancelled {
        true => body.status_message.take(),
        false => None,
    };
    if let Some(pr) = body.progress {
        pr.check()?;
        // Progress and the statusMessage of one report are one change (a watcher never sees
        // the new progress beside the old message); the statusMessage wins over the
        // progress's own message, as it did when it was applied after it.
        let message = match body.status_message.take() {
            Some(m) => Some(m),
            None => pr.message,
        };
        reports.push(Report::Progress {
            current: pr.current,
            total: pr.total,
            message,
        });
    }
    if let Some(m) = body.status_message {
        reports.push(Report::StatusMessage(m));
    }
    if let Some(requests) = body.input_requests.filter(|r| !r.is_empty()) {
        for (key, request) in &requests {
            crate::tools::schema::check_input_request(request)
                .map_err(|m| ApiError::bad_request(format!("input request {key:?}: {m}")))?;
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
        if let (Report::Finished(Outcome::Cancelled), Some(reason)) = (&r, &cancel_reason) {
            // Recorded as the runner's cancel (a cancel requested before keeps its own
            // words); the report then settles it.
            s.engine.cancel_because(&p, &id, Some(reason)).await?;
        }
        if !s.external.report(&id, r).await? {
            return Err(ended_meanwhile(&s, &p, &id));
        }
    }
    if ends {
        // The job settles as soon as the engine stores the outcome; follow Location to see it.
        let mut resp = (
            StatusCode::ACCEPTED,
            Json(ReportEnded {
                cancel_requested: task.cancel_requested,
            }),
        )
            .into_response();
        if let Ok(v) = HeaderValue::from_str(&format!("/v1/jobs/{id}")) {
            resp.headers_mut().insert(header::LOCATION, v);
        }
        return Ok(resp);
    }
    let task = s.engine.get(&p, &id)?;
    let input_responses: Map<String, Value> = s
        .engine
        .input_rounds(&p, &id)?
        .into_iter()
        .filter_map(|r| Some((r.key, r.response?)))
        .collect();
    Ok(Json(ReportReply {
        cancel_requested: task.cancel_requested,
        task: TaskView::from(&task),
        input_responses,
    })
    .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_code_is_any_whole_number() {
        let code =
            |v: Value| serde_json::from_value::<ReportError>(json!({"code": v, "message": "m"}));
        assert_eq!(code(json!(-32000)).unwrap().code, -32000);
        assert_eq!(code(json!(138.0)).unwrap().code, 138);
        assert!(code(json!(1.5)).is_err());
        assert!(code(json!("1")).is_err());
        assert!(code(json!(1e300)).is_err());
    }

    #[test]
    fn a_progress_problem_shows_the_numbers_as_sent() {
        let why = |v: Value| {
            serde_json::from_value::<ReportProgress>(v)
                .unwrap()
                .problem()
                .unwrap_err()
                .1
        };
        assert_eq!(
            why(json!({"current": 11, "total": 10})),
            "progress.current (11) is more than progress.total (10)"
        );
        assert_eq!(
            why(json!({"current": 2.5, "total": 1.5})),
            "progress.current (2.5) is more than progress.total (1.5)"
        );
        assert_eq!(
            why(json!({"current": -1e-320})),
            "progress.current is -1e-320; it counts what is done, from 0"
        );
    }
}

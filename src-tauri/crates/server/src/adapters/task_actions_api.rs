//! `/v1` routes that act on settled tasks: re-running one and deleting them.
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/tasks/{taskId}/rerun` | 201 `{task, rerunOf}`: a new task with the same arguments |
//! | `DELETE /v1/tasks/{taskId}` | 204; 409 while the task is live; 404 unknown or another principal's |
//! | `POST /v1/task-deletions` `{taskIds?, finished?}` | `{deleted, results}` |
//!
//! Re-running: the new task belongs to the caller, not to the task's principal: whoever asks
//! for a command to run again is who the policy decides for and who the audit log names (an
//! admin re-running an agent's command is the admin's call). A `run_command` task runs again
//! with its stored arguments and so asks the policy again, like any call (a new approval when
//! the policy says ask). A `taskdeck run` job (tool `external`) ran in the CLI's process, which
//! is gone: its command line and working directory are run again as a `run_command`, with its
//! approval. Other tools are refused (422): their arguments mean something only to the agent
//! that sent them. A task whose stored arguments had credentials redacted (secret-named `env`
//! values, a URL's password) cannot be run again from the store (409): they were never stored.
//!
//! Deleting goes through [`Engine::delete_tasks`] / [`Engine::delete_finished`], the store
//! writer's delete that the TTL sweeper uses (a `deleted` event on `/v1/events`).

use axum::{Extension, Json, extract::State, http::StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::{
    api_error::{ApiError, ApiPath, ProblemDocument, json_body},
    api_types::TaskView,
};
use crate::tools::{
    external::EXTERNAL,
    secrets::{REDACTED, redact_value},
};
use taskdeck_engine::{Deletion, Engine, Principal};

/// The tool a re-run starts.
const RUN_COMMAND: &str = "run_command";

/// Most ids one `POST /v1/task-deletions` takes.
const MAX_IDS: usize = 1000;

/// The routes of this file, with their OpenAPI operations.
pub fn routes() -> OpenApiRouter<Engine> {
    OpenApiRouter::new()
        .routes(routes!(rerun))
        .routes(routes!(delete_task))
        .routes(routes!(delete_tasks))
}

/// `POST /v1/tasks/{taskId}/rerun`: the new task, and the id of the task it repeats.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RerunReply {
    /// The new task.
    pub task: TaskView,
    /// The id of the task it repeats.
    pub rerun_of: String,
}

/// The `run_command` arguments that run `task` (tool `tool`, stored `arguments`) again.
/// Errors: 422 for a tool that cannot be re-run; 409 when a stored value was redacted.
fn rerun_arguments(tool: &str, arguments: &Value) -> Result<Value, ApiError> {
    let arguments = match tool {
        RUN_COMMAND => arguments.clone(),
        EXTERNAL => {
            let argv = arguments
                .get("command")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty() && a.iter().all(Value::is_string))
                .ok_or_else(|| match arguments.get("commandLine") {
                    // `taskdeck run` keeps a command too long to store only as a cut line.
                    Some(_) => ApiError::unprocessable(
                        "this job's command was too long to keep whole (only a cut line of it \
                         was stored, to read): it cannot be run again from here",
                    ),
                    None => {
                        ApiError::unprocessable("this job reported no command line to run again")
                    }
                })?;
            let mut call = json!({"argv": argv});
            if let Some(cwd) = arguments.get("cwd").and_then(Value::as_str) {
                call["cwd"] = json!(cwd);
            }
            call
        }
        other => {
            return Err(ApiError::unprocessable(format!(
                "only run_command tasks and taskdeck run jobs can be re-run, not {other}"
            )));
        }
    };
    // Stored arguments that held credentials are redacted again (`redact_value`), or show the
    // stand-in of one masked where it stood (a token known by its shape, `PGPASSWORD=…`).
    if redact_value(&arguments).is_some() || holds_stand_in(&arguments) {
        return Err(ApiError::conflict(
            "its arguments held credentials, which are never stored: run the command again with them",
        ));
    }
    Ok(arguments)
}

/// True when a string in `value` holds [`REDACTED`]: a credential was masked there when it was
/// stored, so the stored call is not the one that ran.
fn holds_stand_in(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains(REDACTED),
        Value::Array(items) => items.iter().any(holds_stand_in),
        Value::Object(map) => map.values().any(holds_stand_in),
        _ => false,
    }
}

/// Runs a finished `run_command` task or `taskdeck run` job again, as a new `run_command` task
/// of the caller's (which the policy decides for anew): the command that ran, so a call the
/// human edited before approving runs again as edited.
#[utoipa::path(post, path = "/v1/tasks/{taskId}/rerun", params(("taskId" = String, Path, description = "the task to run again")), tag = "tasks",
    responses((status = 201, description = "the new task (a `run_command` of the caller's) and the id it repeats", body = RerunReply),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "the task is still live, or its arguments held credentials, which are never stored", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 422, description = "a tool other than run_command and external (taskdeck run), a job without a command line, or a hosted task", body = ProblemDocument, content_type = "application/problem+json")))]
async fn rerun(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
) -> Result<(StatusCode, Json<RerunReply>), ApiError> {
    let old = engine.get(&p, &task_id)?;
    if !old.status.is_terminal() {
        return Err(ApiError::conflict(
            "the task is still running: cancel it or wait until it ends",
        ));
    }
    // A hosted task's tool and arguments are whatever its host process said (any name, any
    // command line): they are that process's, not a run Taskdeck made, so they are not re-run.
    if engine.hosted_owner(&old.task_id)?.is_some() {
        return Err(ApiError::unprocessable(
            "a hosted task (its work ran in another process) cannot be run again here",
        ));
    }
    // What ran: a call the human edited before approving runs as edited. The task's
    // `arguments` show the call that ran with its credentials masked; the edit it came from is
    // the answer (kept as typed) whose masked form they are. An edit that was not used (refused
    // by the schema or a deny rule, or superseded by a later one) is not what ran.
    let mut ran = old.arguments.clone();
    if old.tool == RUN_COMMAND {
        let tool = engine.tool(RUN_COMMAND);
        let shown = |a: &Value| {
            tool.as_ref()
                .and_then(|t| t.redact_arguments(a))
                .unwrap_or_else(|| a.clone())
        };
        let of_approval = |key: &str| {
            key.strip_prefix("approve-command")
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('#'))
        };
        let edit = engine
            .input_rounds(&p, &task_id)?
            .into_iter()
            .filter(|r| of_approval(&r.key) && r.state == "answered")
            .filter_map(|r| r.response)
            .filter_map(|answer| crate::approvals::question::edited_arguments(&answer))
            .filter_map(Result::ok)
            .rfind(|edit| shown(edit) == old.arguments);
        if let Some(edit) = edit {
            ran = edit;
        }
    }
    let arguments = rerun_arguments(&old.tool, &ran)?;
    let task = engine.create_task(&p, RUN_COMMAND, arguments).await?;
    Ok((
        StatusCode::CREATED,
        Json(RerunReply {
            task: TaskView::from(task.as_ref()),
            rerun_of: task_id,
        }),
    ))
}

/// Deletes a settled task (its timeline goes with it; `/v1/events` sends a `deleted` event).
#[utoipa::path(delete, path = "/v1/tasks/{taskId}", params(("taskId" = String, Path, description = "the task's id")), tag = "tasks",
    responses((status = 204, description = "deleted"),
              (status = 404, description = "unknown, or another principal's", body = ProblemDocument, content_type = "application/problem+json"),
              (status = 409, description = "the task is live (working or input_required): cancel it first", body = ProblemDocument, content_type = "application/problem+json")))]
async fn delete_task(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    ApiPath(task_id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    match engine.delete_tasks(&p, vec![task_id]).await?.first() {
        Some(Deletion::Deleted) => Ok(StatusCode::NO_CONTENT),
        Some(Deletion::NotTerminal(status)) => Err(ApiError::conflict(format!(
            "the task is {}: cancel it or wait until it ends",
            status.as_str()
        ))),
        _ => Err(ApiError::not_found("Task not found")),
    }
}

/// `POST /v1/task-deletions`: the ids to delete, and/or every finished task (neither: nothing
/// is deleted).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeletionRequest {
    /// Tasks to delete (1..=1000); those live, unknown or another principal's are kept.
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub task_ids: Option<Vec<String>>,
    /// `true`: every settled task the caller sees (a person: everyone's; an agent: its own).
    #[serde(default)]
    pub finished: Option<bool>,
}

/// What one id of a [`DeletionRequest`] found.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletionResult {
    /// The id, as given.
    pub task_id: String,
    /// `deleted`, `not_found` (unknown or another principal's) or `live` (kept).
    pub outcome: String,
}

/// `POST /v1/task-deletions`'s answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletionReply {
    /// How many tasks were deleted.
    pub deleted: usize,
    /// Per id, in request order (empty for `{finished: true}`).
    pub results: Vec<DeletionResult>,
}

/// Deletes several settled tasks, or all of them ("clear finished"); live tasks are kept.
#[utoipa::path(post, path = "/v1/task-deletions", request_body = DeletionRequest, tag = "tasks",
    responses((status = 200, description = "how many were deleted and, for `taskIds`, what each id found", body = DeletionReply),
              (status = 400, description = "more than 1000 ids, or a malformed body", body = ProblemDocument, content_type = "application/problem+json")))]
async fn delete_tasks(
    State(engine): State<Engine>,
    Extension(p): Extension<Principal>,
    body: Result<Json<Map<String, Value>>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<DeletionReply>, ApiError> {
    // An object only: serde would also take an array for the struct's fields.
    let body = json_body(body, "{\"taskIds\": [...]} or {\"finished\": true}")?;
    let body: DeletionRequest = serde_json::from_value(Value::Object(body))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let ids = body.task_ids.unwrap_or_default();
    if ids.len() > MAX_IDS {
        return Err(ApiError::bad_request(format!(
            "taskIds takes at most {MAX_IDS} ids, not {}",
            ids.len()
        )));
    }
    let found = if ids.is_empty() {
        Vec::new()
    } else {
        engine.delete_tasks(&p, ids.clone()).await?
    };
    let results: Vec<DeletionResult> = ids
        .into_iter()
        .zip(found)
        .map(|(task_id, d)| DeletionResult {
            task_id,
            outcome: match d {
                Deletion::Deleted => "deleted",
                Deletion::NotFound => "not_found",
                Deletion::NotTerminal(_) => "live",
            }
            .into(),
        })
        .collect();
    let mut deleted = results.iter().filter(|r| r.outcome == "deleted").count();
    if body.finished == Some(true) {
        deleted += engine.delete_finished(&p).await?;
    }
    Ok(Json(DeletionReply { deleted, results }))
}

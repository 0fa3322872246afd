//! `taskdeck tasks rerun|delete|clear`: re-run a finished command and delete settled tasks
//! through `/v1` (`POST /v1/tasks/{id}/rerun`, `POST /v1/task-deletions`).
//!
//! Exit codes: 0 success; 1 Taskdeck unreachable or an unexpected answer; 4 the API refused
//! (its problem detail is printed), or some of the tasks named were not deleted (live,
//! unknown or another principal's: each is named on stderr).

use std::process::ExitCode;

use serde_json::{Value, json};

use super::{
    endpoint::{Target, block_on},
    tasks_cli::TasksCommand,
};

/// Every `taskdeck tasks` command: those that read and answer ([`TasksCommand`]) and those
/// that re-run or delete ([`TaskActionsCommand`]).
#[derive(clap::Subcommand)]
pub enum TasksCli {
    /// List, show, wait for, answer and cancel.
    #[command(flatten)]
    Read(TasksCommand),
    /// Run again and delete.
    #[command(flatten)]
    Actions(TaskActionsCommand),
}

/// Runs any `taskdeck tasks` command against the Taskdeck `target` names.
pub fn run_any(cmd: TasksCli, target: &Target, as_json: bool) -> ExitCode {
    match cmd {
        TasksCli::Read(cmd) => super::tasks_cli::run(cmd, target, as_json),
        TasksCli::Actions(cmd) => run(cmd, target, as_json),
    }
}

/// The task commands that re-run or delete (part of `taskdeck tasks`).
#[derive(clap::Subcommand)]
pub enum TaskActionsCommand {
    /// Run a finished run_command task or `taskdeck run` job again, as a new run_command
    /// task of yours (the policy decides anew: it may wait for an approval)
    Rerun {
        /// The task's id
        task_id: String,
    },
    /// Delete settled tasks (completed, failed, cancelled); live ones are kept
    Delete {
        /// The tasks' ids (1 to 1000)
        #[arg(required = true, num_args = 1..=1000)]
        task_ids: Vec<String>,
    },
    /// Delete every settled task you can see
    Clear {
        /// Required: what is cleared (live tasks are never deleted)
        #[arg(long, required = true)]
        finished: bool,
    },
}

/// Runs `cmd` against the Taskdeck `target` names; `as_json` prints the API's answer.
fn run(cmd: TaskActionsCommand, target: &Target, as_json: bool) -> ExitCode {
    let endpoint = match target.locate_with_token() {
        Ok(endpoint) => endpoint,
        Err(code) => return code,
    };
    block_on(async move {
        let base = endpoint.base.as_str();
        let http = super::endpoint::http_client();
        let request = match &cmd {
            TaskActionsCommand::Rerun { task_id } => {
                let mut url = reqwest::Url::parse(base).expect("a valid base URL");
                url.path_segments_mut()
                    .expect("an http URL")
                    .extend(["v1", "tasks", task_id, "rerun"]);
                http.post(url)
            }
            TaskActionsCommand::Delete { task_ids } => http
                .post(format!("{base}/v1/task-deletions"))
                .json(&json!({"taskIds": task_ids})),
            TaskActionsCommand::Clear { .. } => http
                .post(format!("{base}/v1/task-deletions"))
                .json(&json!({"finished": true})),
        };
        let body = match target.send_json(&endpoint, request).await {
            Ok(body) => body,
            Err(code) => return code,
        };
        let kept: Vec<&Value> = body["results"]
            .as_array()
            .map(|r| r.iter().filter(|r| r["outcome"] != "deleted").collect())
            .unwrap_or_default();
        if as_json {
            println!("{body}");
        } else {
            match &cmd {
                // Not its status: the new task is `working` until the policy has decided,
                // which may ask a person a moment later.
                TaskActionsCommand::Rerun { task_id } => println!(
                    "{} re-runs {task_id}",
                    body["task"]["taskId"].as_str().unwrap_or("?"),
                ),
                _ => println!("deleted {}", body["deleted"]),
            }
        }
        for r in &kept {
            let why = match r["outcome"].as_str() {
                Some("live") => "still live: cancel it or wait until it ends",
                _ => "not found",
            };
            eprintln!(
                "taskdeck: {} not deleted: {why}",
                r["taskId"].as_str().unwrap_or("?")
            );
        }
        if kept.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(4)
        }
    })
}

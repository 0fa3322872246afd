//! Re-running and deleting settled tasks over `/v1` and the CLI, and command logs without ANSI
//! colour codes.

use serde_json::{Value, json};

use crate::{harness::Server, jobs::approved_command};

/// `taskdeck tasks ARGS` against `s` with its admin token: (exit code, stdout, stderr).
fn tasks_cli(s: &Server, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(crate::harness::BIN)
        .arg("tasks")
        .args(args)
        .args(["--port", &s.port.to_string(), "--token", &s.admin])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn delete(s: &Server, token: &str, id: &str) -> u16 {
    s.http
        .delete(s.url(&format!("/v1/tasks/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn settled_tasks_are_deleted_one_by_one_in_bulk_and_all_at_once() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let agent = s.token("agent-a");
    let other = s.token("agent-b");
    let mut done = Vec::new();
    for i in 0..5 {
        done.push(s.completed_task(&agent, &format!("t{i}")).await);
    }
    let live = s.call(&agent, "confirm_delete", json!({})).await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&agent, &live, "input_required").await;
    let theirs = s.completed_task(&other, "theirs").await;

    assert_eq!(delete(&s, &agent, &live).await, 409, "a live task is kept");
    assert_eq!(
        delete(&s, &agent, &theirs).await,
        404,
        "another's is not found"
    );
    assert_eq!(delete(&s, &agent, "no-such-task").await, 404);
    assert_eq!(delete(&s, &agent, &done[0]).await, 204);
    assert_eq!(delete(&s, &agent, &done[0]).await, 404, "gone");
    let (status, _) = s
        .v1_get(Some(&agent), &format!("/v1/tasks/{}", done[0]))
        .await;
    assert_eq!(status, 404);

    let (status, body) = s
        .v1_post(
            Some(&agent),
            "/v1/task-deletions",
            json!({"taskIds": [done[1], live, theirs]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["deleted"], 1);
    let outcomes: Vec<&str> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["deleted", "live", "not_found"]);
    let (status, _) = s
        .v1_post(Some(&agent), "/v1/task-deletions", json!({}))
        .await;
    assert_eq!(status, 200, "neither ids nor finished: nothing to do");
    let too_many: Vec<String> = (0..1001).map(|i| format!("t{i}")).collect();
    let (status, _) = s
        .v1_post(
            Some(&agent),
            "/v1/task-deletions",
            json!({"taskIds": too_many}),
        )
        .await;
    assert_eq!(status, 400, "more than 1000 ids");

    // The CLI: delete names what it kept; clear --finished deletes the caller's settled tasks
    // (the admin sees everyone's) and keeps the live one.
    let (code, out, err) = tasks_cli(&s, &["delete", &done[2], &live]);
    assert_eq!((code, out.trim()), (4, "deleted 1"), "{err}");
    assert!(
        err.contains(&format!("{live} not deleted: still live")),
        "{err}"
    );
    let (status, counts) = s.v1_get(Some(&s.admin), "/v1/tasks").await;
    assert_eq!(status, 200);
    assert_eq!(counts["counts"]["completed"], 3, "{counts}");
    let (code, out, err) = tasks_cli(&s, &["clear", "--finished"]);
    assert_eq!((code, out.trim()), (0, "deleted 3"), "{err}");
    let (_, after) = s.v1_get(Some(&s.admin), "/v1/tasks").await;
    let left: Vec<&Value> = after["tasks"].as_array().unwrap().iter().collect();
    assert_eq!(left.len(), 1, "{after}");
    assert_eq!(left[0]["taskId"], live.as_str());
    assert_eq!(
        after["counts"]["completed"].as_u64().unwrap_or(0),
        0,
        "counts follow deletions"
    );
    assert_eq!(after["counts"]["input_required"], 1);
}

#[tokio::test]
async fn a_call_approved_with_an_edit_reruns_as_edited() {
    let s = Server::start(&[]).await;
    let agent = s.token("agent-e");
    let id = s
        .call(&agent, "run_command", json!({"command": "echo as asked"}))
        .await["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let edit =
        json!({"action": "accept", "content": {"arguments": "{\"command\": \"echo as edited\"}"}});
    let (status, _) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{id}/input"),
            json!({"inputResponses": {"approve-command": edit}}),
        )
        .await;
    assert_eq!(status, 200);
    let done = s.wait_status(&agent, &id, "completed").await;
    assert_eq!(
        done["result"]["structuredContent"]["tail"], "as edited",
        "{done}"
    );
    let (status, rerun) = s
        .v1_post(Some(&s.admin), &format!("/v1/tasks/{id}/rerun"), json!({}))
        .await;
    assert_eq!(status, 201, "{rerun}");
    assert_eq!(
        rerun["task"]["arguments"]["command"], "echo as edited",
        "what ran runs again, not the call as first asked: {rerun}"
    );
}

#[tokio::test]
async fn a_finished_command_reruns_as_a_new_approved_task_of_the_caller() {
    let s = Server::start(&["--conformance-fixtures"]).await;
    let agent = s.token("agent-a");
    let id = approved_command(&s, &agent, "printf '\\033[1;31mred\\033[0m plain\\n'").await;
    let done = s.wait_status(&agent, &id, "completed").await;
    let (_, log) = s.v1_get(Some(&agent), &format!("/v1/tasks/{id}/log")).await;
    assert_eq!(
        log["text"], "red plain\n",
        "no colour codes in the stored log"
    );
    assert!(
        !done.to_string().contains("\\u001b"),
        "none in the result either: {done}"
    );

    let (status, live) = s
        .v1_post(Some(&agent), "/v1/tasks/no-such/rerun", json!({}))
        .await;
    assert_eq!(status, 404, "{live}");
    // The admin re-runs the agent's command: the new task is the admin's and asks the policy
    // again (the default asks a human first).
    let (code, out, err) = tasks_cli(&s, &["rerun", &id]);
    assert_eq!(code, 0, "{err}");
    let new_id = out.split_whitespace().next().unwrap().to_string();
    assert_eq!(out, format!("{new_id} re-runs {id}\n"));
    assert_ne!(new_id, id);
    let waiting = s.wait_status(&s.admin, &new_id, "input_required").await;
    assert!(
        waiting["inputRequests"]["approve-command"].is_object(),
        "{waiting}"
    );
    let (_, detail) = s
        .v1_get(Some(&s.admin), &format!("/v1/tasks/{new_id}"))
        .await;
    assert_eq!(detail["task"]["tool"], "run_command");
    assert_eq!(detail["task"]["principal"], "admin");
    assert_eq!(
        detail["task"]["arguments"]["command"],
        done_arguments(&s, &id).await["command"]
    );
    let (status, _) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/tasks/{new_id}/rerun"),
            json!({}),
        )
        .await;
    assert_eq!(status, 409, "a live task is not re-run");

    // A token masked where it stood (its shape, or a secret-named variable): the stored command
    // is not the one that ran, so it is not run again.
    let ghp = format!("ghp_{}", "a1B2".repeat(9));
    for command in [format!("echo {ghp}"), "echo PGPASSWORD=hunter2".to_string()] {
        let masked = approved_command(&s, &agent, &command).await;
        s.wait_status(&agent, &masked, "completed").await;
        let (status, problem) = s
            .v1_post(
                Some(&agent),
                &format!("/v1/tasks/{masked}/rerun"),
                json!({}),
            )
            .await;
        assert_eq!(status, 409, "{command}: {problem}");
    }

    // A tool that is no command is refused.
    let other = s.completed_task(&agent, "not a command").await;
    let (status, _) = s
        .v1_post(Some(&agent), &format!("/v1/tasks/{other}/rerun"), json!({}))
        .await;
    assert_eq!(status, 422);
}

async fn done_arguments(s: &Server, id: &str) -> Value {
    s.v1_get(Some(&s.admin), &format!("/v1/tasks/{id}")).await.1["task"]["arguments"].clone()
}

/// Waits up to 5 s for `path` to be gone.
async fn gone(path: &std::path::Path) -> bool {
    for _ in 0..100 {
        if !path.exists() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_deleted_tasks_output_log_is_removed_and_strays_are_swept_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("data/logs");
    std::fs::create_dir_all(&logs).unwrap();
    // A log whose task is not stored (left by a run that stopped before removing it), and a
    // file that is no task's log.
    let stray = logs.join("no-such-task.log");
    let unrelated = logs.join("notes.txt");
    std::fs::write(&stray, "old output\n").unwrap();
    std::fs::write(&unrelated, "kept\n").unwrap();
    let s = Server::start_in(dir.path(), &["--conformance-fixtures"]).await;
    assert!(gone(&stray).await, "a stray log is swept at start");
    assert!(unrelated.exists(), "only <taskId>.log files are touched");

    let agent = s.token("agent-a");
    let kept = approved_command(&s, &agent, "echo kept").await;
    let deleted = approved_command(&s, &agent, "echo deleted").await;
    s.wait_status(&agent, &kept, "completed").await;
    s.wait_status(&agent, &deleted, "completed").await;
    let deleted_log = logs.join(format!("{deleted}.log"));
    assert!(deleted_log.exists(), "a command writes its log");
    assert_eq!(delete(&s, &agent, &deleted).await, 204);
    assert!(
        gone(&deleted_log).await,
        "the deleted task's log is removed"
    );
    let (status, log) = s
        .v1_get(Some(&agent), &format!("/v1/tasks/{kept}/log"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(log["text"], "kept\n", "another task's log stays");
}

//! What a person reads: every task's `title` (an external job's and a `taskdeck run`'s name, an
//! approval's question), a command that exited non-zero shown and counted as an error while its
//! status stays `completed` (`counts.error`, `?error=true`, `isError`), and `taskdeck tasks
//! list` as a table with a header, an age column and every cell cut to one short line.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{BIN, Server};

/// Runs `taskdeck run --name NAME -- sh -c SCRIPT` to its end and returns the job's id.
async fn run_named(s: &Server, name: &str, script: &str) -> String {
    let out = tokio::process::Command::new(BIN)
        .args(["run", "--port", &s.port.to_string(), "--token", &s.admin])
        .args(["--name", name, "--", "sh", "-c", script])
        .output();
    let out = tokio::time::timeout(Duration::from_secs(20), out)
        .await
        .expect("taskdeck run ended")
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let id = said
        .split("tracking as job ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no job announced: {said}"))
        .to_string();
    let started = Instant::now();
    loop {
        let (_, job) = s.v1_get(Some(&s.admin), &format!("/v1/jobs/{id}")).await;
        if job["status"] == "completed" {
            return id;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{job}");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// `taskdeck tasks ARGS...` against `s` as the admin; returns its standard output.
fn tasks_cli(s: &Server, args: &[&str]) -> String {
    let out = std::process::Command::new(BIN)
        .arg("tasks")
        .args(args)
        .args(["--port", &s.port.to_string(), "--token", &s.admin])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn tasks_are_titled_and_errors_are_counted_while_completed() {
    let s = Server::start(&[]).await;
    let admin = s.admin.clone();

    // An external job is titled by its name, in the jobs API and the list alike.
    let (code, job) = s
        .v1_post(
            Some(&admin),
            "/v1/jobs",
            json!({"external": {"name": "nightly export", "heartbeatMs": 60000}}),
        )
        .await;
    assert_eq!(code, 202, "{job}");
    assert_eq!(job["title"], "nightly export");
    assert_eq!(job["isError"], false);
    assert!(job["seq"].as_i64().is_some_and(|n| n > 0), "{job}");
    let external = job["taskId"].as_str().unwrap().to_string();

    // `taskdeck run`: a command that exits 0 and one that exits 3, both `completed`.
    let ok = run_named(&s, "build docs", "true").await;
    let failing = run_named(&s, "unit tests", "echo nope; exit 3").await;

    // An approval is titled by its question (its first line), whatever its length.
    let question = format!(
        "Deploy release 4.2 to production?\n{}",
        "details ".repeat(7000)
    );
    let asked = s
        .call(&admin, "request_approval", json!({"message": question}))
        .await;
    let approval = asked["taskId"].as_str().unwrap().to_string();
    s.wait_status(&admin, &approval, "input_required").await;

    let (_, page) = s.v1_get(Some(&admin), "/v1/tasks").await;
    let by_id = |id: &str| -> Value {
        page["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["taskId"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not listed: {page}"))
    };
    assert_eq!(by_id(&external)["title"], "nightly export");
    assert_eq!(by_id(&ok)["title"], "build docs");
    assert_eq!(by_id(&ok)["isError"], false);
    let failed = by_id(&failing);
    assert_eq!(failed["title"], "unit tests");
    assert_eq!(failed["status"], "completed");
    assert_eq!(failed["isError"], true);
    assert_eq!(
        by_id(&approval)["title"],
        "Deploy release 4.2 to production?…"
    );
    // The MCP view stays SEP-2663's Task: no title there.
    let mcp = s.get(&admin, &failing).await;
    assert!(
        mcp.get("title").is_none() && mcp.get("isError").is_none(),
        "{mcp}"
    );

    // Counted: `error` beside the statuses (the error is also one of the completed).
    assert_eq!(page["counts"]["completed"], 2, "{}", page["counts"]);
    assert_eq!(page["counts"]["error"], 1, "{}", page["counts"]);
    assert!(page["counts"].get("failed").is_none(), "{}", page["counts"]);
    // Under a text query the counts come from the rows: the same error count.
    let (_, searched) = s.v1_get(Some(&admin), "/v1/tasks?q=unit").await;
    assert_eq!(searched["counts"], json!({"completed": 1, "error": 1}));

    // Filtered: only the errors, with or without the status.
    for path in [
        "/v1/tasks?error=true",
        "/v1/tasks?status=completed&error=true",
    ] {
        let (code, errors) = s.v1_get(Some(&admin), path).await;
        assert_eq!(code, 200, "{errors}");
        let ids: Vec<&str> = errors["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["taskId"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [failing.as_str()], "{path}");
        assert_eq!(
            errors["counts"], page["counts"],
            "{path}: counts ignore the filter"
        );
    }
    let (code, none) = s
        .v1_get(Some(&admin), "/v1/tasks?status=failed&error=true")
        .await;
    assert_eq!(
        (code.as_u16(), none["tasks"].as_array().unwrap().len()),
        (200, 0)
    );
    let (code, refused) = s.v1_get(Some(&admin), "/v1/tasks?error=maybe").await;
    assert_eq!(code, 400, "{refused}");
    // A cursor of the error list does not continue another list.
    let (_, first) = s.v1_get(Some(&admin), "/v1/tasks?error=true&limit=1").await;
    assert!(first["nextCursor"].is_null(), "{first}");
    let (_, all_first) = s.v1_get(Some(&admin), "/v1/tasks?limit=1").await;
    let cursor = all_first["nextCursor"].as_str().unwrap();
    let (code, _) = s
        .v1_get(
            Some(&admin),
            &format!("/v1/tasks?error=true&cursor={cursor}"),
        )
        .await;
    assert_eq!(code, 400);

    // The CLI: a header, an age, the titles, the error visible, every line short.
    let listed = tasks_cli(&s, &["list"]);
    let lines: Vec<&str> = listed.lines().collect();
    assert!(
        lines[0].starts_with("TASK ID") && lines[0].contains("AGE") && lines[0].contains("TITLE"),
        "{listed}"
    );
    assert_eq!(lines.len(), 5, "{listed}");
    for line in &lines {
        assert!(line.chars().count() <= 200, "a long line: {line}");
    }
    let failing_line = lines.iter().find(|l| l.starts_with(&failing)).unwrap();
    assert!(
        failing_line.contains("completed (error)") && failing_line.contains("unit tests"),
        "{failing_line}"
    );
    let age = failing_line.split_whitespace().nth(3).unwrap();
    assert!(
        age.ends_with('s') && age[..age.len() - 1].parse::<u32>().is_ok(),
        "{failing_line}"
    );
    let approval_line = lines.iter().find(|l| l.starts_with(&approval)).unwrap();
    assert!(
        approval_line.contains("Deploy release 4.2"),
        "{approval_line}"
    );
    let errors_only = tasks_cli(&s, &["list", "--errors"]);
    assert_eq!(errors_only.lines().count(), 2, "{errors_only}");
    assert!(errors_only.contains(&failing));
}

/// What an agent wrote reaches a person's terminal written out: a question with an escape
/// sequence that would erase its line, a carriage return and a bidi override is printed by
/// `tasks show`, `tasks list` and `tasks wait` with those characters as `\u{...}` (the same JSON
/// value where JSON is printed), never raw.
#[tokio::test]
async fn the_cli_prints_no_character_that_acts_on_the_terminal_or_hides_text() {
    let s = Server::start(&[]).await;
    let message = "Approve report\u{202e}fdp.exe? Also\rOVERWRITTEN \u{1b}[2K\u{1b}[1Gline";
    let (code, job) = s
        .v1_post(
            Some(&s.admin),
            "/v1/jobs",
            json!({"tool": "request_approval", "arguments": {"message": message}}),
        )
        .await;
    assert_eq!(code, 202, "{job}");
    let id = job["taskId"].as_str().unwrap().to_string();
    s.wait_status(&s.admin, &id, "input_required").await;
    let raw = |text: &str| {
        text.chars()
            .any(|c| matches!(c, '\u{1b}' | '\r' | '\u{202e}'))
    };
    let shown = tasks_cli(&s, &["show", &id]);
    assert!(!raw(&shown), "{shown:?}");
    assert!(
        shown.contains("report\\u{202e}fdp.exe? Also\\u{d}OVERWRITTEN \\u{1b}[2K"),
        "{shown}"
    );
    let listed = tasks_cli(&s, &["list"]);
    assert!(!raw(&listed), "{listed:?}");
    s.answer(&id, "approval", json!({"action": "accept", "content": {}}))
        .await;
    // A result text that would clear the screen.
    let (code, ext) = s
        .v1_post(
            Some(&s.admin),
            "/v1/jobs",
            json!({"external": {"name": "export", "heartbeatMs": 60000}}),
        )
        .await;
    assert_eq!(code, 202, "{ext}");
    let ext_id = ext["taskId"].as_str().unwrap().to_string();
    let (code, body) = s
        .v1_post(
            Some(&s.admin),
            &format!("/v1/jobs/{ext_id}/report"),
            json!({"result": {"content": [{"type": "text", "text": "done\u{1b}[2J\u{1b}[Hscreen cleared"}]}}),
        )
        .await;
    assert!(code.is_success(), "{code}: {body}");
    let waited = tasks_cli(&s, &["wait", &ext_id, "--timeout", "5"]);
    assert!(!raw(&waited), "{waited:?}");
    assert!(waited.contains("done\\u{1b}[2J"), "{waited}");
}

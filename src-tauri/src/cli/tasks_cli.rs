//! `taskdeck tasks list|show|wait|watch|reveal|cancel|answer`: the `/v1` API from the command
//! line, for people and scripts (`--json` prints the API's JSON unchanged). The list is a table with a header
//! row, each cell cut to one short line ([`task_table`]).
//!
//! Exit codes: 0 success; 1 Taskdeck unreachable or an unexpected answer; 4 the API refused
//! (unknown task, invalid answer...; its problem detail is printed), or an answer was ignored
//! because its key was not outstanding (already answered, superseded or never asked); `wait`:
//! 5 the task ended without success (failed, cancelled, a result that is an error, or a
//! question answered no), 6 it was still running at `--timeout`.

use std::{
    process::ExitCode,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{
    endpoint::{Target, block_on},
    task_table, task_timeline,
    terminal_text::{plain_json, shown, written_out_as_json},
};

/// One `taskdeck tasks` command (its clap definition: `taskdeck tasks --help`).
#[derive(clap::Subcommand)]
pub enum TasksCommand {
    /// Tasks, newest first
    List {
        /// Comma-separated statuses, e.g. working,input_required
        #[arg(long, value_parser = parse_statuses)]
        status: Option<String>,
        /// Only tasks of this tool, e.g. run_command
        #[arg(long)]
        tool: Option<String>,
        /// Only this agent's tasks (principal name; an agent's token only ever sees its own)
        #[arg(long)]
        principal: Option<String>,
        /// Free text over tool, arguments, status messages and results
        #[arg(long, short)]
        query: Option<String>,
        /// Only completed tasks whose result is an error (e.g. a command that exited non-zero)
        #[arg(long)]
        errors: bool,
        /// Tasks per page (1..=1000)
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=1000))]
        limit: u16,
        /// Continue after a previous page: the cursor it printed (with the same filters)
        #[arg(long)]
        cursor: Option<String>,
    },
    /// One task with its timeline
    Show {
        /// The task's id
        task_id: String,
        /// How many lines of the newest timeline to print, runs of progress and status
        /// messages folded into one (1 to 5000; with --json: events)
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=5000))]
        timeline: u16,
    },
    /// Wait until a task ends; print its row and its result or error. Exits 0 when it
    /// completed without error, 5 when it failed, was cancelled, its result is an error or a
    /// question was answered no
    Wait {
        /// The task's id
        task_id: String,
        /// Give up after this many seconds (exit 6)
        #[arg(long)]
        timeout: Option<u64>,
    },
    /// Follow every task's changes as they happen, one line each (created, status changed,
    /// removed), until Ctrl-C; a Taskdeck that restarts meanwhile is followed on
    Watch {
        /// Only this agent's tasks (principal name)
        #[arg(long)]
        principal: Option<String>,
        /// Only tasks of this tool, e.g. external (taskdeck run and HTTP jobs), run_command
        #[arg(long)]
        tool: Option<String>,
        /// Also print each new status message and progress of a running task
        #[arg(long)]
        messages: bool,
    },
    /// Print the call an open approval shows masked, as the agent gave it (credentials
    /// unmasked), to read it whole before approving; for a person's token only (the admin or a
    /// human), and the task's timeline records who read it
    Reveal {
        /// The task's id
        task_id: String,
    },
    /// Request cancellation
    Cancel {
        /// The task's id
        task_id: String,
    },
    /// Answer one input request: accept (with --content JSON), decline or cancel
    Answer {
        /// The task's id
        task_id: String,
        /// The input request's key
        key: String,
        /// The answer: accept, decline or cancel
        #[arg(value_parser = ["accept", "decline", "cancel"])]
        action: String,
        /// The form's values as a JSON object, for accept
        #[arg(long)]
        content: Option<String>,
    },
}

/// Runs `cmd` against the Taskdeck `target` names.
pub(crate) fn run(cmd: TasksCommand, target: &Target, as_json: bool) -> ExitCode {
    // `watch` waits for a Taskdeck that has not started (nor written its admin token) yet.
    let located = match cmd {
        TasksCommand::Watch { .. } => Ok(target.locate()),
        _ => target.locate_with_token(),
    };
    let endpoint = match located {
        Ok(endpoint) => endpoint,
        Err(code) => return code,
    };
    block_on(async move {
        let base = endpoint.base.as_str();
        let http = super::endpoint::http_client();
        if let TasksCommand::Watch {
            principal,
            tool,
            messages,
        } = cmd
        {
            let filter = super::tasks_watch::WatchFilter {
                principal,
                tool,
                messages,
            };
            return super::tasks_watch::watch(target, endpoint, &http, filter, as_json).await;
        }
        if let TasksCommand::Wait { task_id, timeout } = &cmd {
            let until = timeout.map(|s| Instant::now() + Duration::from_secs(s));
            return wait_for_end(target, &endpoint, &http, task_id, until, as_json).await;
        }
        let request = match &cmd {
            TasksCommand::List {
                status,
                tool,
                principal,
                query,
                errors,
                limit,
                cursor,
            } => {
                let mut q = vec![("limit", limit.to_string())];
                if *errors {
                    q.push(("error", "true".into()));
                }
                for (k, v) in [
                    ("status", status),
                    ("tool", tool),
                    ("principal", principal),
                    ("q", query),
                    ("cursor", cursor),
                ] {
                    if let Some(v) = v {
                        q.push((k, v.clone()));
                    }
                }
                http.get(format!("{base}/v1/tasks")).query(&q)
            }
            TasksCommand::Show { task_id, timeline } => {
                // Printed for a person, runs of reports fold into one line: more events are
                // read than lines are printed, so the newest N lines are not all reports.
                let limit = match as_json {
                    true => *timeline,
                    false => timeline.saturating_mul(SHOW_READ_PER_LINE).min(5000),
                };
                let mut url = task_url(base, task_id, None);
                url.query_pairs_mut()
                    .append_pair("timelineLimit", &limit.to_string());
                http.get(url)
            }
            TasksCommand::Cancel { task_id } => http.post(task_url(base, task_id, Some("cancel"))),
            TasksCommand::Reveal { task_id } => http.post(task_url(base, task_id, Some("reveal"))),
            TasksCommand::Wait { .. } | TasksCommand::Watch { .. } => {
                unreachable!("waited for and watched above")
            }
            TasksCommand::Answer {
                task_id,
                key,
                action,
                content,
            } => {
                let mut answer = json!({"action": action});
                if let Some(c) = content {
                    match serde_json::from_str::<Value>(c) {
                        Ok(v) if v.is_object() => answer["content"] = v,
                        Ok(_) => {
                            eprintln!(
                                "taskdeck: --content must be a JSON object, e.g. '{{\"note\": \"ok\"}}'"
                            );
                            return ExitCode::from(2);
                        }
                        Err(e) => {
                            eprintln!("taskdeck: --content must be a JSON object: {e}");
                            return ExitCode::from(2);
                        }
                    }
                }
                http.post(task_url(base, task_id, Some("input")))
                    .json(&json!({"inputResponses": {key: answer}}))
            }
        };
        let body = match target.send_json(&endpoint, request).await {
            Ok(body) => body,
            Err(code) => return code,
        };
        // An answer the task did not take is a refusal for scripts, though the API says 200.
        let ignored = matches!(cmd, TasksCommand::Answer { .. })
            && body["ignored"].as_array().is_some_and(|k| !k.is_empty());
        let done = if ignored {
            ExitCode::from(4)
        } else {
            ExitCode::SUCCESS
        };
        if as_json {
            println!("{body}");
            return done;
        }
        match cmd {
            TasksCommand::List { .. } => {
                println!("{}", task_table::header());
                for t in body["tasks"].as_array().into_iter().flatten() {
                    println!("{}", row(t));
                }
                if let Some(c) = body["nextCursor"].as_str() {
                    eprintln!("(more: add --cursor {c})");
                }
            }
            TasksCommand::Show { task_id, timeline } => {
                let t = &body["task"];
                println!("{}", row(t));
                println!("arguments: {}", plain_json(&t["arguments"]));
                if let Some(r) = t.get("result") {
                    print_result(r);
                }
                if let Some(e) = t.get("error") {
                    println!("error: {}", plain_json(e));
                }
                for (k, r) in t["inputRequests"].as_object().into_iter().flatten() {
                    // A question's further lines indented under its first.
                    println!(
                        "waiting for input {}: {}",
                        shown(k),
                        shown(r["params"]["message"].as_str().unwrap_or("")).replace('\n', "\n  ")
                    );
                }
                let events = body["timeline"].as_array().map_or(&[][..], Vec::as_slice);
                let older = body["timelineMore"] == true;
                let lines = task_timeline::lines(events, older);
                let shown = &lines[lines.len().saturating_sub(usize::from(timeline))..];
                println!("timeline:");
                if older || shown.len() < lines.len() {
                    match timeline {
                        5000.. => println!("  (its newest events only)"),
                        _ => println!(
                            "  (its newest events only; more with `taskdeck tasks show {task_id} --timeline 5000`)"
                        ),
                    }
                }
                for line in shown {
                    println!("{line}");
                }
            }
            TasksCommand::Wait { .. } | TasksCommand::Watch { .. } => {}
            TasksCommand::Reveal { .. } => println!(
                "{}",
                written_out_as_json(
                    &serde_json::to_string_pretty(&body["arguments"]).unwrap_or_default()
                )
            ),
            TasksCommand::Cancel { .. } => match body["task"]["status"].as_str() {
                Some(s @ ("completed" | "failed" | "cancelled")) => {
                    println!("already {s}, nothing to cancel: {}", row(&body["task"]))
                }
                // The row is the task as it was asked to stop: it ends as cancelled once its
                // tool stops (`tasks wait` sees it end).
                _ => println!(
                    "cancel requested (it ends as cancelled once its tool stops): {}",
                    row(&body["task"])
                ),
            },
            TasksCommand::Answer {
                ref key,
                ref action,
                ..
            } => {
                // Not recorded, and why (a second approval by the same person).
                let why_ignored = body["notes"][key.as_str()].as_str().filter(|_| ignored);
                if let Some(why) = why_ignored {
                    eprintln!("taskdeck: ignored: {}: {}", shown(key), shown(why));
                } else if ignored {
                    let open: Vec<&str> = body["task"]["inputRequests"]
                        .as_object()
                        .map(|r| r.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    let open = match open.is_empty() {
                        true => String::new(),
                        false => format!("; waiting now for {}", open.join(", ")),
                    };
                    eprintln!(
                        "taskdeck: ignored: {key} is not waiting for an answer from this token \
                         (already answered, superseded or never asked; an agent's token cannot \
                         answer a request for a person); the task is {}{open}",
                        body["task"]["status"].as_str().unwrap_or("unknown")
                    );
                } else {
                    // The answer was taken; what it said (a decline is no approval).
                    let said = match action.as_str() {
                        "accept" => "accepted",
                        "decline" => "declined",
                        _ => "cancelled",
                    };
                    println!("answered {}: {said}", shown(key));
                    for (key, note) in body["notes"].as_object().into_iter().flatten() {
                        eprintln!(
                            "taskdeck: {}: {}",
                            shown(key),
                            shown(note.as_str().unwrap_or(""))
                        );
                    }
                }
            }
        }
        done
    })
}

/// `taskdeck tasks wait`: reads the task (`GET /v1/tasks/{taskId}`) whenever the event stream
/// says it changed ([`watch_changes`]), and at its `pollIntervalMs` (0.5 to 5 s) in any case,
/// until it ends or `until` passes, saying on stderr, once each, what it waits for when it
/// needs input (with the key `tasks answer` takes). At its end prints its row and its result's
/// text or its error (`--json`: the task). Exit codes in the module doc.
async fn wait_for_end(
    target: &Target,
    endpoint: &super::endpoint::Endpoint,
    http: &reqwest::Client,
    task_id: &str,
    until: Option<Instant>,
    as_json: bool,
) -> ExitCode {
    let mut told: Vec<String> = Vec::new();
    let changed = std::sync::Arc::new(tokio::sync::Notify::new());
    let watch = tokio::spawn(watch_changes(
        http.clone(),
        endpoint.clone(),
        task_id.to_string(),
        changed.clone(),
    ));
    let mut _watching = StopOnDrop(watch);
    // Until the next poll, or a change the stream announces, whichever comes first.
    let next_look = |wait: Duration| {
        let changed = changed.clone();
        async move {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = changed.notified() => {}
            }
        }
    };
    let mut endpoint = endpoint.clone();
    // Since when Taskdeck has not answered, once the task was read: a restart is waited out.
    let mut away: Option<Instant> = None;
    let mut seen = false;
    loop {
        let mut url = task_url(endpoint.base.as_str(), task_id, None);
        url.query_pairs_mut().append_pair("timelineLimit", "1");
        let read = target.send_unless_away(&endpoint, http.get(url));
        // A Taskdeck that takes the request and does not answer is not waited on past --timeout.
        let read = match until {
            Some(until) => {
                // A read that starts at the --timeout still gets a moment: a Taskdeck that
                // answers is told apart from one that does not.
                let left = until
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_secs(2));
                match tokio::time::timeout(left, read).await {
                    Ok(read) => read,
                    Err(_) => {
                        eprintln!(
                            "taskdeck: Taskdeck at {} did not answer before the --timeout; it may \
                             be hung (`taskdeck doctor` checks it)",
                            endpoint.base
                        );
                        return ExitCode::from(1);
                    }
                }
            }
            None => read.await,
        };
        let body = match read {
            Ok(Some(resp)) => resp.json::<Value>().await.unwrap_or(Value::Null),
            Ok(None) if seen => {
                if away.is_none() {
                    eprintln!(
                        "taskdeck: Taskdeck is not answering at {}; waiting for it to come back",
                        endpoint.base
                    );
                    away = Some(Instant::now());
                }
                if until.is_some_and(|until| Instant::now() >= until) {
                    eprintln!("taskdeck: Taskdeck did not come back before the --timeout");
                    return ExitCode::from(1);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
                // It may come back on another port.
                endpoint = target.locate();
                continue;
            }
            Ok(None) => {
                eprintln!("taskdeck: {}", endpoint.not_running(target));
                return ExitCode::from(1);
            }
            Err(code) => return code,
        };
        seen = true;
        if away.take().is_some() {
            eprintln!("taskdeck: Taskdeck is back at {}", endpoint.base);
            // The event stream ended with the old process: follow the new one's.
            _watching = StopOnDrop(tokio::spawn(watch_changes(
                http.clone(),
                endpoint.clone(),
                task_id.to_string(),
                changed.clone(),
            )));
        }
        let t = &body["task"];
        let status = t["status"].as_str().unwrap_or("");
        if matches!(status, "completed" | "failed" | "cancelled") {
            if as_json {
                println!("{t}");
            } else {
                println!("{}", row(t));
                let text = t["result"]["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find_map(|c| c["text"].as_str())
                    .or_else(|| t["error"]["message"].as_str());
                if let Some(text) = text {
                    println!("{}", shown(text));
                }
            }
            // A question answered no (request_approval's `action`, an agent's permission
            // request's `behavior` other than allow: denied, or handed back unanswered) is no
            // success for a script.
            let answer = &t["result"]["structuredContent"];
            let declined = matches!(answer["action"].as_str(), Some("decline" | "cancel"))
                || answer["behavior"].as_str().is_some_and(|b| b != "allow");
            let succeeded = status == "completed" && t["isError"] != true && !declined;
            return if succeeded {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(5)
            };
        }
        for (key, request) in t["inputRequests"].as_object().into_iter().flatten() {
            if !told.contains(key) {
                let schema = &request["params"]["requestedSchema"];
                let approval = &request["params"]["_meta"]["taskdeck/approval"];
                // An approval's `reason` is the decline's ("Reason, if you decline"): offered
                // with decline only.
                let content = match approval.is_object() {
                    true => {
                        let mut schema = schema.clone();
                        if let Some(fields) = schema["properties"].as_object_mut() {
                            fields.remove("reason");
                        }
                        content_hint(&schema)
                    }
                    false => content_hint(schema),
                };
                let key_shown = shown(key);
                // A call with hidden values is read whole first: said whatever the cut.
                let hidden = approval["hiddenValues"] == true;
                let read_first = match hidden {
                    true => format!(
                        "; values are hidden: read the call whole with taskdeck tasks reveal {task_id} before approving"
                    ),
                    false => String::new(),
                };
                eprintln!(
                    "waiting for input {key_shown}: {} (taskdeck tasks answer {task_id} {key_shown} accept{content} | decline{DECLINE_HINT}{read_first})",
                    super::task_table::clamp(
                        request["params"]["message"].as_str().unwrap_or(""),
                        200
                    )
                );
                told.push(key.clone());
            }
        }
        let poll = Duration::from_millis(t["pollIntervalMs"].as_u64().unwrap_or(1000))
            .clamp(Duration::from_millis(500), Duration::from_secs(5));
        if let Some(until) = until {
            if Instant::now() >= until {
                if as_json {
                    println!("{t}");
                }
                eprintln!("taskdeck: task {task_id} is still {status}");
                return ExitCode::from(6);
            }
            next_look(poll.min(until.saturating_duration_since(Instant::now()))).await;
        } else {
            next_look(poll).await;
        }
    }
}

/// Aborts a background task when dropped.
struct StopOnDrop(tokio::task::JoinHandle<()>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Wakes `changed` at each change of task `task_id` the event stream (`GET /v1/events`)
/// carries, so that `tasks wait` learns of an end at once rather than at its next poll. Ends
/// quietly when the stream cannot be opened or ends: the wait then goes on by polling alone.
async fn watch_changes(
    http: reqwest::Client,
    endpoint: super::endpoint::Endpoint,
    task_id: String,
    changed: std::sync::Arc<tokio::sync::Notify>,
) {
    use futures::StreamExt;
    // With its keep-alives (every 15 s), the stream outlives the client's read timeout.
    let url = format!("{}/v1/events", endpoint.base);
    let Ok(resp) = http.get(url).bearer_auth(&endpoint.token).send().await else {
        return;
    };
    if !resp.status().is_success() {
        return;
    }
    let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
    while let Some(Ok(event)) = events.next().await {
        let Some(data) = event.data else { continue };
        let Ok(change) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        if change["task"]["taskId"] == task_id.as_str() {
            changed.notify_one();
        }
    }
}

/// A task's result as `tasks show` prints it for a person: `result:` (`result (error):`), its
/// text blocks' lines indented under it, any other block as JSON; then its
/// `structuredContent` as JSON, but for a finished command's, whose output tail the text
/// holds already (`--json` has it all).
fn print_result(r: &Value) {
    let error = if r["isError"] == true { " (error)" } else { "" };
    println!("result{error}:");
    for (i, block) in r["content"].as_array().into_iter().flatten().enumerate() {
        // Blocks apart: one's last line does not run into the next one's first.
        if i > 0 {
            println!();
        }
        match block["text"].as_str() {
            Some(text) => {
                for line in text.lines() {
                    println!("  {}", shown(line));
                }
            }
            None => println!("  {}", plain_json(block)),
        }
    }
    let structured = &r["structuredContent"];
    let command = structured.get("exitCode").is_some() && structured["tail"].is_string();
    if !structured.is_null() && !command {
        println!("structuredContent: {}", plain_json(structured));
    }
}

/// How many timeline events `tasks show` reads for each line it prints (runs of reports fold
/// into one line).
const SHOW_READ_PER_LINE: u16 = 20;

/// `/v1/tasks/{taskId}[/tail]` on `base`, the taskId escaped as one path segment (so that an
/// id such as `../me` cannot name another endpoint).
fn task_url(base: &str, task_id: &str, tail: Option<&str>) -> reqwest::Url {
    let mut url = reqwest::Url::parse(base).expect("a valid base URL");
    url.path_segments_mut()
        .expect("an http URL")
        .extend(["v1", "tasks", task_id])
        .extend(tail);
    url
}

/// `t` as one line of the list's table, its age as of now.
fn row(t: &Value) -> String {
    task_table::row(t, taskdeck_engine::clock::now_ms())
}

/// `--status` of `taskdeck tasks list`: comma-separated task statuses, checked before anything is
/// sent (a wrong one is a usage error, exit 2). Returns the list as the API takes it, spaces
/// around the commas dropped (`"working, completed"` → `working,completed`).
fn parse_statuses(s: &str) -> Result<String, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    for part in &parts {
        if taskdeck_engine::TaskStatus::parse(part).is_none() {
            // The table's STATUS shows these for completed calls Taskdeck refused.
            let refused = matches!(*part, "declined" | "denied")
                .then_some(": a declined or denied call is a completed one; --errors lists them")
                .unwrap_or("");
            return Err(format!(
                "{part:?} is not a task status (working, input_required, completed, failed, cancelled){refused}"
            ));
        }
    }
    Ok(parts.join(","))
}

/// How `tasks wait` says to give a form's values with `accept`: ` --content '{…}'` with the
/// required fields, the optional ones after them in brackets (` --content '{"env": "a"|"b"
/// [, "n": …]}'`); all in brackets when none is required (` [--content '{"reason": "…"}']`);
/// nothing for a question without fields. A value shows its type: an enumeration its choices
/// (`"a"|"b"`, at most four, then `|…`), `"…"` a string (an approval's edited `arguments` too:
/// JSON text), `true` a boolean, `…` anything else. At most four names, then `…`.
fn content_hint(schema: &Value) -> String {
    let names: Vec<&str> = schema["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|n| names.contains(n))
        .collect();
    let optional: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !required.contains(n))
        .collect();
    let field = |name: &&str| format!("{name:?}: {}", placeholder(&schema["properties"][*name]));
    let shown_required: Vec<String> = required.iter().take(4).map(field).collect();
    let shown_optional: Vec<String> = optional
        .iter()
        .take(4 - shown_required.len())
        .map(field)
        .collect();
    let more = if names.len() > 4 { ", …" } else { "" };
    match (shown_required.is_empty(), shown_optional.is_empty()) {
        (true, true) => String::new(),
        (true, false) => format!(" [--content '{{{}{more}}}']", shown_optional.join(", ")),
        (false, _) => {
            let optional = if shown_optional.is_empty() {
                String::new()
            } else {
                format!(" [, {}]", shown_optional.join(", "))
            };
            format!(
                " --content '{{{}{optional}{more}}}'",
                shown_required.join(", ")
            )
        }
    }
}

/// What a form's field takes, for [`content_hint`]: its choices (`enum`, or `oneOf`/`anyOf`
/// of `const`s, as MCP elicitation's titled enumerations are) as JSON joined by `|`, else its
/// type's placeholder. Choices are the agent's text: written out like all of it.
fn placeholder(property: &Value) -> String {
    let consts: Vec<&Value> = match property["enum"].as_array() {
        Some(values) => values.iter().collect(),
        None => ["oneOf", "anyOf"]
            .iter()
            .filter_map(|k| property[*k].as_array())
            .flatten()
            .filter_map(|option| option.get("const"))
            .collect(),
    };
    if !consts.is_empty() {
        let mut choices: Vec<String> = consts.iter().take(4).map(|v| plain_json(v)).collect();
        if consts.len() > 4 {
            choices.push("…".into());
        }
        return choices.join("|");
    }
    match property["type"].as_str() {
        Some("string") => "\"…\"",
        Some("boolean") => "true",
        _ => "…",
    }
    .to_string()
}

/// How `tasks wait` says to decline with a reason, which any question takes (the agent is
/// told it, as the window's "Reason, if you decline" box sends it).
const DECLINE_HINT: &str = r#" [--content '{"reason": "…"}']"#;

#[cfg(test)]
mod tests {
    use super::content_hint;
    use serde_json::json;

    #[test]
    fn the_content_hint_names_a_form_s_fields() {
        assert_eq!(
            content_hint(&json!({"type": "object", "properties": {}})),
            ""
        );
        assert_eq!(content_hint(&json!(null)), "");
        assert_eq!(
            content_hint(&json!({"properties": {"alwaysAllow": {}, "reason": {}}})),
            r#" [--content '{"alwaysAllow": …, "reason": …}']"#
        );
        assert_eq!(
            content_hint(&json!({"properties": {"alwaysAllow": {"type": "boolean"},
                "arguments": {"type": "string"}, "n": {"type": "integer"}}})),
            r#" [--content '{"alwaysAllow": true, "arguments": "…", "n": …}']"#
        );
        assert_eq!(
            content_hint(
                &json!({"properties": {"env": {}, "note": {}}, "required": ["env", "gone"]})
            ),
            r#" --content '{"env": … [, "note": …]}'"#
        );
        // Choices, from `enum` or titled `oneOf` consts, as the agent wrote them.
        assert_eq!(
            content_hint(&json!({"properties": {
                "env": {"type": "string", "enum": ["a", "b\u{1b}"]},
                "size": {"oneOf": [{"const": 1, "title": "S"}, {"const": 2}]},
                "n": {"type": "integer"},
                "tier": {"enum": ["1", "2", "3", "4", "5"]}}, "required": ["env"]})),
            r#" --content '{"env": "a"|"b\u001b" [, "size": 1|2, "n": …, "tier": "1"|"2"|"3"|"4"|…]}'"#
        );
        assert_eq!(
            content_hint(
                &json!({"properties": {"a": {}, "b": {}, "c": {}, "d": {}, "e": {}},
                "required": ["e"]})
            ),
            r#" --content '{"e": … [, "a": …, "b": …, "c": …], …}'"#
        );

        assert_eq!(
            content_hint(&json!({"properties": {"a": {}, "b": {}, "c": {}, "d": {}, "e": {}}})),
            r#" [--content '{"a": …, "b": …, "c": …, "d": …, …}']"#
        );
    }
}

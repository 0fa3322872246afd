//! `taskdeck tasks watch`: every task's changes as they happen, one line each, from the event
//! stream (`GET /v1/events`): a task created, its status changed (ended, waiting for input,
//! working again), a task removed. For a person at a terminal who wants to see the moment work
//! finishes or needs them, across all their jobs and agents. Runs until Ctrl-C (exit 0); a
//! Taskdeck that stops or restarts meanwhile is waited for and followed from the last event
//! seen (`Last-Event-ID`), on the port the data dir then records.

use std::{process::ExitCode, time::Duration};

use futures::StreamExt;
use serde_json::Value;

use super::{
    endpoint::{Endpoint, Target},
    task_table,
};

/// Which changes `tasks watch` prints.
pub(crate) struct WatchFilter {
    /// Only this principal's tasks.
    pub principal: Option<String>,
    /// Only this tool's tasks.
    pub tool: Option<String>,
    /// Also each new status message and progress of a live task, not only its status.
    pub messages: bool,
}

impl WatchFilter {
    /// Whether a `change` (`{event, task}`) is printed: a creation, a status change or a
    /// removal (with `messages`, a status message or progress too) of a task the filter takes.
    fn takes(&self, change: &Value) -> bool {
        let task = &change["task"];
        let kind = change["event"]["kind"].as_str().unwrap_or_default();
        let wanted = matches!(kind, "created" | "status" | "deleted")
            || (self.messages && matches!(kind, "statusMessage" | "progress"));
        let of = |field: &str, want: &Option<String>| {
            want.as_deref()
                .is_none_or(|w| task[field].as_str() == Some(w))
        };
        wanted && of("principal", &self.principal) && of("tool", &self.tool)
    }
}

/// How long to wait between two tries to reach a Taskdeck that went away.
const RETRY: Duration = Duration::from_secs(1);

/// Follows the event stream of the Taskdeck `target` names (first at `endpoint`) and prints
/// the changes `filter` takes: a header, then `HH:MM:SS` (the change's time, local) and the
/// task's row as `tasks list` prints it (`--json`: each change as the stream gives it, one
/// per line). Exit 0 at Ctrl-C; as [`Target::send_unless_away`] says when the stream is
/// refused (a revoked token: 4).
pub(crate) async fn watch(
    target: &Target,
    mut endpoint: Endpoint,
    http: &reqwest::Client,
    filter: WatchFilter,
    as_json: bool,
) -> ExitCode {
    if !as_json {
        println!("{:<8}  {}", "TIME", task_table::header());
    }
    let mut last_id: Option<String> = None;
    let mut away = false;
    // Whether a stream was ever opened: until then Taskdeck is not "back", it has not started.
    let mut seen = false;
    // A stream that ended is opened again at once, once, before anything is said: a refusal
    // then (a revoked token) is the reason, not "not answering".
    let mut reopened = false;
    loop {
        let opened_at = std::time::Instant::now();
        let followed = async {
            let mut request = http.get(format!("{}/v1/events", endpoint.base));
            if let Some(id) = &last_id {
                request = request.header("Last-Event-ID", id.as_str());
            }
            match target.send_unless_away(&endpoint, request).await {
                Err(code) => Err(code),
                Ok(None) => Ok(false),
                Ok(Some(resp)) => {
                    if away {
                        let now = if seen { "back" } else { "running" };
                        eprintln!("taskdeck: Taskdeck is {now} at {}", endpoint.base);
                        away = false;
                    }
                    seen = true;
                    let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
                    while let Some(Ok(event)) = events.next().await {
                        if event.id.is_some() {
                            last_id = event.id.clone();
                        }
                        print_event(&event, &filter, as_json);
                    }
                    Ok(true)
                }
            }
        };
        let ended = tokio::select! {
            ended = followed => ended,
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
        };
        let streamed = match ended {
            Err(code) => return code,
            Ok(streamed) => streamed,
        };
        // Once in a row, unless the stream lasted (one closed at once, again and again, is
        // not reopened in a tight loop).
        if streamed && (!reopened || opened_at.elapsed() > RETRY) {
            reopened = true;
            endpoint = target.locate();
            continue;
        }
        reopened = false;
        if !away && !seen {
            eprintln!(
                "taskdeck: {}; waiting for it to start (Ctrl-C stops)",
                endpoint.not_running(target)
            );
            away = true;
        } else if !away {
            eprintln!(
                "taskdeck: Taskdeck at {} is not answering; waiting for it to come back",
                endpoint.base
            );
            away = true;
        }
        tokio::select! {
            _ = tokio::time::sleep(RETRY) => {}
            _ = tokio::signal::ctrl_c() => return ExitCode::SUCCESS,
        }
        endpoint = target.locate();
    }
}

/// Prints one event of the stream: a `change` the filter takes, a `resync` (changes were
/// missed) or a `store` event (the disk filled up, or has room again) on stderr.
fn print_event(event: &sse_stream::Sse, filter: &WatchFilter, as_json: bool) {
    let data = event
        .data
        .as_deref()
        .and_then(|d| serde_json::from_str::<Value>(d).ok())
        .unwrap_or(Value::Null);
    match event.event.as_deref() {
        Some("change") if filter.takes(&data) => {
            if as_json {
                println!("{data}");
                return;
            }
            let at = data["event"]["at"]
                .as_str()
                .and_then(local_clock)
                .unwrap_or_else(|| "--:--:--".into());
            let task = &data["task"];
            match data["event"]["kind"].as_str() {
                Some("deleted") => println!(
                    "{at:<8}  {}",
                    task_table::row(&removed(task), taskdeck_engine::clock::now_ms())
                ),
                _ => println!(
                    "{at:<8}  {}",
                    task_table::row(task, taskdeck_engine::clock::now_ms())
                ),
            }
        }
        Some("resync") => eprintln!(
            "taskdeck: some changes were missed (the stream fell behind); `taskdeck tasks list` shows every task as it is"
        ),
        Some("store") if data["diskFull"] == true => {
            eprintln!(
                "taskdeck: the store's disk is full: Taskdeck refuses writes until there is room"
            )
        }
        Some("store") => eprintln!("taskdeck: the store takes writes again"),
        _ => {}
    }
}

/// `task` as its removal is shown: status `removed`.
fn removed(task: &Value) -> Value {
    let mut shown = task.clone();
    shown["status"] = Value::String("removed".into());
    shown["isError"] = Value::Bool(false);
    shown
}

/// The local `HH:MM:SS` of an RFC 3339 time (`2026-12-06T02:10:00.123Z`).
fn local_clock(at: &str) -> Option<String> {
    let at = chrono::DateTime::parse_from_rfc3339(at).ok()?;
    Some(
        at.with_timezone(&chrono::Local)
            .format("%H:%M:%S")
            .to_string(),
    )
}

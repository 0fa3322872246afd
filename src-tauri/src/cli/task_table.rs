//! The table `taskdeck tasks list` prints: a header row, then one line per task with its id,
//! status (`completed (error)` for a completed task whose result is an error, `declined` or
//! `denied` for a call a person or the policy refused), age, principal,
//! title and latest status message. Every cell is one line of at most its column's width: a
//! longer text is cut and ends with "…", so a 900 KB approval question prints as one short
//! line (`--json` gives the whole task). Widths are terminal columns, as the terminal draws
//! them (a CJK character or an emoji takes two), so the columns line up whatever the titles
//! hold.

use serde_json::Value;
use unicode_width::UnicodeWidthStr;

/// The columns: (header, most terminal columns). The last one is not padded, and takes the
/// rest of a wider terminal ([`message_width`]).
const COLUMNS: [(&str, usize); 6] = [
    ("TASK ID", 45),
    ("STATUS", 17),
    ("AGE", 4),
    ("PRINCIPAL", 14),
    ("TITLE", 40),
    ("MESSAGE", 60),
];

/// The header row.
pub fn header() -> String {
    line(COLUMNS.map(|(name, _)| name.to_string()))
}

/// One task (a `/v1` task view) as a row, its age measured at `now_ms` (ms since the epoch).
pub fn row(t: &Value, now_ms: i64) -> String {
    let text = |key: &str| t[key].as_str().unwrap_or("").to_string();
    // A call Taskdeck did not make (`approvals::refusal`) says so, as the window's badge does.
    let refusal = t["result"]["_meta"][taskdeck_server::approvals::refusal::KEY].as_str();
    let status = match refusal {
        Some(how @ ("declined" | "denied")) => how.to_string(),
        _ if t["isError"] == true => format!("{} (error)", text("status")),
        _ => text("status"),
    };
    let age = taskdeck_engine::clock::parse_iso8601(&text("createdAt"))
        .map(|created| age(now_ms - created))
        .unwrap_or_default();
    let title = t["title"]
        .as_str()
        .or_else(|| t["tool"].as_str())
        .unwrap_or("")
        .to_string();
    line([
        text("taskId"),
        status,
        age,
        text("principal"),
        title,
        message(t),
    ])
}

/// The MESSAGE cell: what a waiting task asks, with the key `taskdeck tasks answer` takes
/// (`approve-command: Allow deploy-bot to run make deploy?`), else its status message, after
/// the progress of a working task (`12/50 · compiling`, `3 · copying`), or the progress's own
/// message when the task has no status message. A finished command (a result with a `tail`
/// of its output and an `exitCode`: run_command, `taskdeck run`) says how it ended and its
/// output's last line, which says why a failed one failed ([`command_end`]).
fn message(t: &Value) -> String {
    match t.pointer("/result/structuredContent") {
        Some(ran) if ran.get("exitCode").is_some() && ran["tail"].is_string() => command_end(ran),
        _ => live_message(t),
    }
}

/// How a finished command ended (`exited with code 3 after 10.0 s`, `killed by SIGTERM`; the
/// title names the command), then its output's last line, from its result's
/// `structuredContent`.
fn command_end(ran: &Value) -> String {
    let how = match (ran["signal"].as_str(), ran["exitCode"].as_i64()) {
        (Some(signal), _) => format!("killed by {signal}"),
        (None, Some(code)) => format!("exited with code {code}"),
        (None, None) => "ended".to_string(),
    };
    let after = ran["durationMs"]
        .as_f64()
        .map(|ms| format!(" after {:.1} s", ms / 1000.0))
        .unwrap_or_default();
    let last = ran["tail"]
        .as_str()
        .and_then(|tail| tail.lines().map(str::trim).rfind(|l| !l.is_empty()));
    match last {
        Some(last) => format!("{how}{after} … {last}"),
        None => format!("{how}{after}"),
    }
}

/// [`message`] of any task but a finished command.
fn live_message(t: &Value) -> String {
    let asked = t["inputRequests"].as_object().and_then(|requests| {
        let (key, request) = requests.iter().next()?;
        let question = request.pointer("/params/message").and_then(Value::as_str);
        Some(match question {
            Some(q) => format!("{key}: {q}"),
            None => key.clone(),
        })
    });
    if let Some(asked) = asked {
        return asked;
    }
    let progress = &t["progress"];
    let said = t["statusMessage"]
        .as_str()
        .or_else(|| progress["message"].as_str())
        .unwrap_or("");
    let Some(current) = progress["current"]
        .as_f64()
        .filter(|_| t["status"] == "working")
    else {
        return said.to_string();
    };
    let number = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 1e15 {
            format!("{}", x as i64)
        } else {
            format!("{x:.1}")
        }
    };
    let done = match progress["total"].as_f64() {
        Some(total) => format!("{}/{}", number(current), number(total)),
        None => number(current),
    };
    if said.is_empty() {
        done
    } else {
        format!("{done} · {said}")
    }
}

/// The MESSAGE column's width: the rest of the terminal stdout is, once the other columns
/// have theirs (a failed command's last line fits on a wide one); `COLUMNS`' 60 at least, and
/// when stdout is not a terminal.
fn message_width() -> usize {
    static WIDTH: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *WIDTH.get_or_init(|| {
        use std::{io::IsTerminal, os::fd::AsFd};
        let least = COLUMNS[COLUMNS.len() - 1].1;
        let out = std::io::stdout();
        if !out.is_terminal() {
            return least;
        }
        let columns = super::run_cli::terminal_size(out.as_fd()).ws_col as usize;
        let others: usize = COLUMNS[..COLUMNS.len() - 1]
            .iter()
            .map(|(_, w)| w + 2)
            .sum();
        columns.saturating_sub(others).max(least)
    })
}

/// The cells, each made one line, cut to its column and padded (but the last).
fn line(cells: [String; 6]) -> String {
    let last = cells.len() - 1;
    cells
        .iter()
        .zip(COLUMNS)
        .enumerate()
        .map(|(i, (cell, (_, width)))| {
            let width = if i == last { message_width() } else { width };
            let cell = clamp(cell, width);
            if i == last {
                cell
            } else {
                let pad = width.saturating_sub(cell.width());
                format!("{cell}{}", " ".repeat(pad))
            }
        })
        .collect::<Vec<_>>()
        .join("  ")
        .trim_end()
        .to_string()
}

/// `text` on one line (its lines joined by one space, without the blank lines and the
/// indentation around the breaks; tabs as spaces; every other character that would act on the
/// terminal or hide or reorder text written out, `\u{1b}`, `\u{d}`, `\u{202e}`, as everywhere
/// in the CLI, [`super::terminal_text`]) and at most `max` terminal columns wide, ending with
/// "…" when cut.
pub fn clamp(text: &str, max: usize) -> String {
    let one_line: String = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| match c {
            '\t' => " ".to_string(),
            c if taskdeck_server::tools::process::hidden(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect();
    if one_line.width() <= max {
        return one_line;
    }
    // Measured as a whole: a sequence (an emoji and its VS16) is wider than its characters.
    let mut kept = String::new();
    for c in one_line.chars() {
        kept.push(c);
        if kept.width() > max.saturating_sub(1) {
            kept.pop();
            break;
        }
    }
    format!("{kept}…")
}

/// An age in ms as its largest whole unit: `"12s"`, `"3m"`, `"2h"`, `"5d"`, `"7w"`; a time in
/// the future (another clock) counts as `"0s"`.
pub fn age(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        86_400..1_209_600 => format!("{}d", s / 86_400),
        _ => format!("{}w", s / 604_800),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ages_use_their_largest_whole_unit() {
        assert_eq!(age(-5_000), "0s");
        assert_eq!(age(59_999), "59s");
        assert_eq!(age(3 * 60_000 + 10), "3m");
        assert_eq!(age(2 * 3_600_000), "2h");
        assert_eq!(age(5 * 86_400_000), "5d");
        assert_eq!(age(30 * 86_400_000), "4w");
    }

    #[test]
    fn a_row_is_one_short_line_whatever_the_task_holds() {
        let huge = "question\n".repeat(100_000);
        let t = json!({"taskId": "t1", "status": "completed", "isError": true,
            "createdAt": "2026-01-01T00:00:00.000Z", "principal": "admin",
            "title": "make test", "tool": "external", "statusMessage": huge});
        let now = taskdeck_engine::clock::parse_iso8601("2026-01-01T02:30:00.000Z").unwrap();
        let r = row(&t, now);
        assert!(!r.contains('\n'));
        assert!(r.chars().count() < 200, "{r}");
        assert!(r.starts_with("t1 "));
        assert!(r.contains("completed (error)  2h    admin"), "{r}");
        assert!(
            r.ends_with("question quest…") && r.contains("make test "),
            "{r}"
        );
        assert!(header().starts_with("TASK ID"));
        assert_eq!(clamp("ab", 2), "ab");
        assert_eq!(clamp("abc", 2), "a…");
        // A question's paragraphs and indented command read as one line of single spaces.
        assert_eq!(
            clamp("bot wants to run in /tmp:\n\n  make  deploy\r\n", 80),
            "bot wants to run in /tmp: make  deploy"
        );
        // A tab is a space; what would act on the terminal is written out, as in `tasks show`.
        assert_eq!(
            clamp("a\tb\rc \u{1b}[31mred\u{1b}[0m", 80),
            "a b\\u{d}c \\u{1b}[31mred\\u{1b}[0m"
        );
        // Wide characters count their two columns; a cut never leaves half of one.
        assert_eq!(clamp("日本語のタスク", 6), "日本…");
        assert_eq!(clamp("日本語", 6), "日本語");
        // The MESSAGE column starts at the same terminal column whatever the title holds.
        let at = |title: &str| {
            let r = row(
                &json!({"taskId": "t", "status": "working", "title": title,
                "statusMessage": "MSG"}),
                0,
            );
            r[..r.find("MSG").unwrap()].width()
        };
        assert_eq!(at("日本語のタスク 🚀"), at("make test"));
        assert_eq!(at(&"界".repeat(50)), at("make test"));
        // An emoji with VS16 (❤️) takes two columns, as a terminal draws it.
        assert_eq!(at(&"❤\u{fe0f}".repeat(30)), at("make test"));
        assert_eq!(
            clamp(&"❤\u{fe0f}".repeat(30), 7),
            "❤\u{fe0f}❤\u{fe0f}❤\u{fe0f}…"
        );
    }

    #[test]
    fn a_refused_call_says_who_refused_it() {
        let refused = |mark: &str| {
            json!({"taskId": "t", "status": "completed", "isError": true,
                "result": {"isError": true, "_meta": {"io.taskdeck/refusal": mark}}})
        };
        let status = |mark: &str| {
            let r = row(&refused(mark), 0);
            r[45..]
                .trim_start()
                .split("  ")
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(status("declined"), "declined");
        assert_eq!(status("denied"), "denied");
        assert_eq!(status("something else"), "completed (error)");
    }

    #[test]
    fn a_finished_command_shows_its_outputs_last_line() {
        let t = json!({"taskId": "t", "status": "completed", "isError": true,
            "statusMessage": "`./fail.sh` exited with code 3 after 10.0 s.",
            "result": {"structuredContent": {"exitCode": 3, "durationMs": 10000,
                "tail": "step 1 of 5\nerror: something broke at step 5\n\n"}}});
        assert_eq!(
            message(&t),
            "exited with code 3 after 10.0 s … error: something broke at step 5"
        );
        // A command line that holds its own last line still gets it.
        let mut echoed = t.clone();
        echoed["statusMessage"] =
            json!("`echo error: boom; exit 1` exited with code 1 after 0.0 s.");
        echoed["result"]["structuredContent"]["tail"] = json!("error: boom");
        assert_eq!(
            message(&echoed),
            "exited with code 3 after 10.0 s … error: boom"
        );
        let mut quiet = t.clone();
        quiet["result"]["structuredContent"]["tail"] = json!("");
        assert_eq!(message(&quiet), "exited with code 3 after 10.0 s");
        let killed = json!({"status": "completed", "result": {"structuredContent":
            {"exitCode": null, "signal": "SIGTERM", "tail": ""}}});
        assert_eq!(message(&killed), "killed by SIGTERM");
    }

    #[test]
    fn a_waiting_task_shows_what_it_asks_with_the_key_to_answer() {
        let t = json!({"taskId": "t2", "status": "input_required", "statusMessage": "exporting",
            "inputRequests": {"approve-command": {"method": "elicitation/create",
                "params": {"message": "Allow bot to run make deploy?"}}}});
        assert!(
            row(&t, 0).ends_with("approve-command: Allow bot to run make deploy?"),
            "{}",
            row(&t, 0)
        );
        let t = json!({"taskId": "t3", "status": "working", "statusMessage": "exporting"});
        assert!(row(&t, 0).ends_with("exporting"));
    }

    #[test]
    fn a_working_task_shows_its_progress_before_its_message() {
        let cell = |progress: Value, said: Option<&str>, status: &str| {
            let mut t = json!({"taskId": "t4", "status": status, "progress": progress});
            if let Some(m) = said {
                t["statusMessage"] = json!(m);
            }
            assert!(row(&t, 0).ends_with(&message(&t)), "{}", row(&t, 0));
            message(&t)
        };
        let done = json!({"current": 12, "total": 50});
        assert_eq!(
            cell(done.clone(), Some("compiling"), "working"),
            "12/50 · compiling"
        );
        assert_eq!(cell(json!({"current": 3}), None, "working"), "3");
        let copying = json!({"current": 2.5, "total": 10, "message": "copying"});
        assert_eq!(cell(copying, None, "working"), "2.5/10 · copying");
        // A finished task's last progress says nothing its status does not.
        assert_eq!(cell(done, Some("done"), "completed"), "done");
    }
}

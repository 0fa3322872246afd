//! A task's title: the short name a person reads in the list, the detail heading and
//! `taskdeck tasks list`, made from the task's tool and (redacted) arguments. An external job
//! or `taskdeck run` is titled by its `name`, a `request_approval` by its question, a
//! `run_command` by its command line, a `wait_for_http_job` by its request (`POST URL`, or
//! `Follow MONITOR`), a coding agent's permission request by the agent's tool and what it acts on (`Allow Bash: make
//! test?`); any other task
//! by its tool name. The title is one line of at most [`TITLE_MAX_CHARS`]
//! characters: a longer one is cut and ends with "…" (the whole text stays in `arguments`).

use serde_json::Value;

use crate::{
    hooks::permission_task::PERMISSION_TOOL,
    tools::{
        external::EXTERNAL,
        process::{hidden, shell_line},
        run_command,
    },
};

/// The members of an agent tool's input that say what a permission request's call acts on,
/// in the order they are looked for (Claude Code's and Codex's tools: `Bash` and `shell`
/// commands, `Edit`/`Write`/`Read` files, `WebFetch` URLs, `WebSearch` queries, `Grep` and
/// `Glob` patterns).
const PERMISSION_SUBJECTS: [&str; 7] = [
    "command",
    "file_path",
    "notebook_path",
    "url",
    "query",
    "pattern",
    "path",
];

/// The most characters of a permission request's subject in its title.
const SUBJECT_MAX_CHARS: usize = 160;

/// The most characters a title has, its closing "…" included.
pub const TITLE_MAX_CHARS: usize = 200;

/// The title of a task of `tool` called with `arguments` (see the module comment), e.g.
/// `"nightly export"` for `external {"name": "nightly export"}`, `"Deploy to production?"` for
/// `request_approval {"message": "Deploy to production?\n\nDetails..."}`, `"make -j8"` for
/// `run_command {"command": "make -j8"}`, `"echo"` for `echo {}`.
pub fn task_title(tool: &str, arguments: &Value) -> String {
    let text = |key: &str| arguments.get(key).and_then(Value::as_str);
    let named = match tool {
        EXTERNAL => text("name").map(str::to_string),
        "request_approval" => text("message").map(str::to_string),
        run_command::NAME => text("command").map(str::to_string).or_else(|| {
            let argv: Vec<&str> = arguments
                .get("argv")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            Some(shell_line(&argv))
        }),
        PERMISSION_TOOL => text("toolName").map(|t| {
            // What an agent's own tool acts on, as its prompt names it: a person tells ten
            // questions about `Bash` apart by their commands. An MCP tool's arguments can mean
            // anything: its title names the tool only.
            let input = arguments
                .get("toolInput")
                .filter(|_| !t.starts_with("mcp__"));
            let what = PERMISSION_SUBJECTS
                .iter()
                .find_map(|key| input?.get(*key)?.as_str().filter(|s| !s.trim().is_empty()));
            match what {
                Some(what) => format!("Allow {t}: {}?", whole_line(what, SUBJECT_MAX_CHARS)),
                None => format!("Allow {t}?"),
            }
        }),
        // The stored URL, whose credentials are masked (`tools::secrets`).
        "wait_for_http_job" => text("url")
            .map(|url| {
                // The tool's default: POST with a body (`null` included: it is sent), else GET.
                let default = match arguments.get("body") {
                    Some(_) => "POST",
                    None => "GET",
                };
                let method = text("method").unwrap_or(default).to_ascii_uppercase();
                format!("{method} {url}")
            })
            .or_else(|| text("monitor").map(|m| format!("Follow {m}"))),
        _ => None,
    };
    named
        .map(|t| one_line(&t))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| tool.to_string())
}

/// `line` with tabs as spaces, every other control or hiding character written out
/// (`\u{1b}`), and runs of whitespace as one space.
fn written_out(line: &str) -> String {
    let shown: String = line
        .chars()
        .map(|c| match c {
            '\t' | '\u{b}' | '\u{c}' => " ".to_string(),
            c if hidden(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect();
    shown.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// All of `text` on one line: its lines joined with " ↵ ", written out as [`one_line`] does,
/// and when longer than `max` characters cut in the middle ("…"), so both its start and its
/// end show (a `touch` after a long `echo`, a second line after a harmless first).
fn whole_line(text: &str, max: usize) -> String {
    let joined = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(written_out)
        .collect::<Vec<_>>()
        .join(" ↵ ");
    let chars: Vec<char> = joined.chars().collect();
    if chars.len() <= max {
        return joined;
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    chars[..head]
        .iter()
        .chain(['…'].iter())
        .chain(chars[chars.len() - tail..].iter())
        .collect()
}

/// The first line of `text` that is not blank, with tabs as spaces, every other control
/// character (an escape sequence's ESC, a carriage return, BEL) and the characters that hide
/// or reorder text written out as `\u{1b}`, `\u{202e}`, runs of whitespace as one space, cut to
/// [`TITLE_MAX_CHARS`] characters ending with "…" when longer or when more lines follow.
///
/// Nothing is taken out: a title is how a person recognises what a task runs, and a dropped
/// escape sequence would take its payload with it (`echo ESC]0;x; touch f; echo BEL done`
/// would read `echo done`); a bidi override would make `echo \u{202e}~ fr- mr` read
/// `echo rm -rf ~`.
pub fn one_line(text: &str) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let line = written_out(lines.next().unwrap_or(""));
    // A text with more lines ends with "…" too: the title says more follows.
    let more = lines.next().is_some();
    if line.chars().count() <= TITLE_MAX_CHARS && !more {
        return line;
    }
    let kept: String = line.chars().take(TITLE_MAX_CHARS - 1).collect();
    format!("{}…", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_of_task_is_titled_by_what_a_person_recognises() {
        assert_eq!(
            task_title(
                "wait_for_http_job",
                &json!({"url": "https://ci.example/builds", "method": "post"})
            ),
            "POST https://ci.example/builds"
        );
        assert_eq!(
            task_title(
                "wait_for_http_job",
                &json!({"url": "https://ci.example/builds", "body": {"ref": "main"}})
            ),
            "POST https://ci.example/builds"
        );
        assert_eq!(
            task_title(
                "wait_for_http_job",
                &json!({"url": "https://ci.example/op"})
            ),
            "GET https://ci.example/op"
        );
        assert_eq!(
            task_title(
                "wait_for_http_job",
                &json!({"url": "https://ci.example/op", "body": null})
            ),
            "POST https://ci.example/op"
        );
        assert_eq!(
            task_title(
                "wait_for_http_job",
                &json!({"monitor": "https://ci.example/op/7"})
            ),
            "Follow https://ci.example/op/7"
        );
        assert_eq!(
            task_title("external", &json!({"name": "nightly export"})),
            "nightly export"
        );
        assert_eq!(
            task_title("request_approval", &json!({"message": "Deploy?"})),
            "Deploy?"
        );
        assert_eq!(
            task_title(
                "request_approval",
                &json!({"message": "\n  Deploy   to prod?\nDetails follow"})
            ),
            "Deploy to prod?…"
        );
        assert_eq!(
            task_title("run_command", &json!({"command": "make -j8"})),
            "make -j8"
        );
        assert_eq!(
            task_title("run_command", &json!({"argv": ["echo", "a b"]})),
            "echo 'a b'"
        );
        assert_eq!(
            task_title("permission_request", &json!({"toolName": "Bash"})),
            "Allow Bash?"
        );
        let asks = |tool: &str, input: Value| {
            task_title(
                "permission_request",
                &json!({"toolName": tool, "toolInput": input}),
            )
        };
        // Every line shows, and the end of a long one.
        assert_eq!(
            asks(
                "Bash",
                json!({"command": "make test\n\nrm x", "description": "d"})
            ),
            "Allow Bash: make test ↵ rm x?"
        );
        let long = asks(
            "Bash",
            json!({"command": format!("echo {}; touch pwned", "a".repeat(300))}),
        );
        assert!(long.ends_with("a; touch pwned?"), "{long}");
        assert!(long.contains('…') && long.chars().count() < TITLE_MAX_CHARS);
        assert_eq!(
            asks("Write", json!({"file_path": "/a/b.rs", "content": "x"})),
            "Allow Write: /a/b.rs?"
        );
        assert_eq!(
            asks("mcp__fs__delete", json!({"path": "/", "mode": "delete"})),
            "Allow mcp__fs__delete?"
        );
        assert_eq!(task_title("echo", &json!({"text": "hi"})), "echo");
        assert_eq!(task_title("external", &json!({"name": "  "})), "external");
    }

    #[test]
    fn a_long_text_is_cut_to_the_most_characters_with_an_ellipsis() {
        let title = task_title("request_approval", &json!({"message": "é".repeat(900_000)}));
        assert_eq!(title.chars().count(), TITLE_MAX_CHARS);
        assert!(title.ends_with('…'));
        let exact = "x".repeat(TITLE_MAX_CHARS);
        assert_eq!(task_title("external", &json!({"name": exact})), exact);
    }

    #[test]
    fn a_title_writes_out_its_control_characters_and_drops_nothing() {
        let name = "\u{1b}[1mbuild\u{1b}[0m\u{7}\tnightly\u{0}\nsecond line";
        assert_eq!(
            task_title("external", &json!({"name": name})),
            "\\u{1b}[1mbuild\\u{1b}[0m\\u{7} nightly\\u{0}…"
        );
        // An OSC sequence's payload is text the shell runs: it stays in sight.
        let command = "echo \u{1b}]0;x; touch /tmp/f; echo \u{7} done";
        assert_eq!(
            task_title("run_command", &json!({"command": command})),
            "echo \\u{1b}]0;x; touch /tmp/f; echo \\u{7} done"
        );
    }

    #[test]
    fn a_title_writes_out_what_would_reorder_or_hide_its_text() {
        assert_eq!(
            task_title(
                "run_command",
                &json!({"command": "echo safe \u{202e}; rm -rf ~ #\u{202c} done"})
            ),
            "echo safe \\u{202e}; rm -rf ~ #\\u{202c} done"
        );
        assert_eq!(
            task_title("request_approval", &json!({"message": "ok\u{200b}?"})),
            "ok\\u{200b}?"
        );
    }
}

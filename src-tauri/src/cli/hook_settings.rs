//! Taskdeck's entries in an agent's hooks file, as JSON: Claude Code's `settings.json` and
//! Codex's `hooks.json` share the shape `{"hooks": {"<Event>": [{"matcher"?: "...", "hooks":
//! [{"type": "command", "command": "...", "timeout": <seconds>}]}]}}` (Claude Code hooks
//! reference, <https://code.claude.com/docs/en/hooks>; Codex, <https://developers.openai.com/codex/hooks>).
//!
//! [`merge`] adds one group per event for Taskdeck and [`remove`] takes exactly Taskdeck's
//! hooks out again; every other key, event, group and hook stays as it was, in its order.
//! Taskdeck's hooks are those whose command runs a `taskdeck` program with `hook AGENT`.

use serde_json::{Map, Value, json};

/// One event Taskdeck hooks into.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEntry {
    /// The event's name, e.g. `PermissionRequest`.
    pub event: &'static str,
    /// The group's matcher (`*`: every tool); `None` for events without one.
    pub matcher: Option<&'static str>,
    /// The command line.
    pub command: String,
    /// How long the agent lets it run, in seconds.
    pub timeout_secs: u64,
}

/// True when `words` (a command line) run Taskdeck's hook command `verb` (`claude-code`,
/// `codex`, `codex-notify`): `.../taskdeck-hook VERB ...` or `.../taskdeck hook VERB ...`,
/// after any `NAME=value` assignments (`TASKDECK_PORT=4811 taskdeck-hook claude-code`). A line
/// that does more (a pipe, a list, a redirection: `taskdeck hook claude-code | tee log`) is
/// the user's own, never taken for Taskdeck's.
pub fn runs_taskdeck_hook(words: &[String], verb: &str) -> bool {
    const OPERATORS: [&str; 8] = ["|", "||", "&&", ";", "&", ">", ">>", "<"];
    if words.iter().any(|w| {
        OPERATORS.contains(&w.as_str())
            || w.starts_with('>')
            || w.starts_with("2>")
            || w.contains('|')
    }) {
        return false;
    }
    let assignment = |w: &String| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let words = &words[words.iter().take_while(|w| assignment(w)).count()..];
    let program = words.first().and_then(|p| {
        std::path::Path::new(p)
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
    });
    let rest: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    match program.as_deref() {
        Some("taskdeck-hook") => rest.first() == Some(&verb),
        Some(p) if p.starts_with("taskdeck") => rest.get(..2) == Some(&["hook", verb][..]),
        _ => false,
    }
}

/// True when `command` (a shell command line) is Taskdeck's hook for `agent`. A line that
/// does more than run it (a second line, a substitution `$(…)` or `` `…` ``) is the user's.
pub fn is_taskdeck_hook(command: &str, agent: &str) -> bool {
    !substitutes(command)
        && shlex::split(command).is_some_and(|words| runs_taskdeck_hook(&words, agent))
}

/// True when shell line `command` holds a line break, or a command substitution (`$(…)`, a
/// backquote) outside single quotes, where the shell would run it (a path quoted as
/// `'/opt/a$(b)/taskdeck-hook'` holds none).
fn substitutes(command: &str) -> bool {
    let mut single = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\r' => return true,
            '\'' => single = !single,
            '\\' if !single => {
                chars.next();
            }
            '`' if !single => return true,
            '$' if !single && chars.peek() == Some(&'(') => return true,
            _ => {}
        }
    }
    false
}

fn is_ours(hook: &Value, agent: &str) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| is_taskdeck_hook(c, agent))
}

fn group_for(entry: &HookEntry) -> Value {
    let mut group = Map::new();
    if let Some(m) = entry.matcher {
        group.insert("matcher".into(), json!(m));
    }
    group.insert(
        "hooks".into(),
        json!([{"type": "command", "command": entry.command, "timeout": entry.timeout_secs}]),
    );
    Value::Object(group)
}

/// Takes `agent`'s Taskdeck hooks out of `groups` (an event's list); a group left without
/// hooks goes too. Returns true when something was taken out.
fn take_ours(groups: &mut Vec<Value>, agent: &str) -> bool {
    let mut changed = false;
    groups.retain_mut(|group| {
        let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = hooks.len();
        hooks.retain(|h| !is_ours(h, agent));
        if hooks.len() == before {
            return true;
        }
        changed = true;
        !hooks.is_empty()
    });
    changed
}

/// Adds `entries` (one group each) to `settings`, a JSON object, replacing `agent`'s Taskdeck
/// hooks already there. Returns true when `settings` changed (installing twice changes
/// nothing the second time). Errors: `settings` or its `hooks` is not an object, or an event's
/// value is not a list.
pub fn merge(settings: &mut Value, agent: &str, entries: &[HookEntry]) -> Result<bool, String> {
    let root = settings
        .as_object_mut()
        .ok_or("the file is not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or("its \"hooks\" is not an object")?;
    let mut changed = false;
    for entry in entries {
        let wanted = group_for(entry);
        let groups = hooks
            .entry(entry.event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| format!("its hooks.{} is not a list", entry.event))?;
        let ours: Vec<&Value> = groups
            .iter()
            .filter(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_some_and(|hs| hs.iter().any(|h| is_ours(h, agent)))
            })
            .collect();
        if ours.len() == 1 && *ours[0] == wanted {
            continue;
        }
        take_ours(groups, agent);
        groups.push(wanted);
        changed = true;
    }
    Ok(changed)
}

/// Takes exactly `agent`'s Taskdeck hooks out of `settings`; an event list or a `hooks`
/// object that only they filled goes too. Returns true when `settings` changed.
pub fn remove(settings: &mut Value, agent: &str) -> bool {
    let Some(root) = settings.as_object_mut() else {
        return false;
    };
    let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        if take_ours(groups, agent) {
            changed = true;
            if groups.is_empty() {
                emptied.push(event.clone());
            }
        }
    }
    for event in emptied {
        hooks.remove(&event);
    }
    if changed && hooks.is_empty() {
        root.remove("hooks");
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<HookEntry> {
        vec![
            HookEntry {
                event: "PermissionRequest",
                matcher: Some("*"),
                command: "/opt/taskdeck hook claude-code".into(),
                timeout_secs: 900,
            },
            HookEntry {
                event: "Stop",
                matcher: None,
                command: "/opt/taskdeck hook claude-code".into(),
                timeout_secs: 5,
            },
        ]
    }

    #[test]
    fn merge_is_idempotent_and_remove_restores_the_file() {
        let original = json!({"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}});
        let mut s = original.clone();
        assert!(merge(&mut s, "claude-code", &entries()).unwrap());
        let once = s.clone();
        assert!(!merge(&mut s, "claude-code", &entries()).unwrap());
        assert_eq!(s, once);
        assert_eq!(s["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            s["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"],
            900
        );
        assert!(remove(&mut s, "claude-code"));
        assert_eq!(s, original);
        assert!(!remove(&mut s, "claude-code"));
    }

    #[test]
    fn only_taskdeck_hooks_for_the_agent_are_ours() {
        assert!(is_taskdeck_hook(
            "'/a b/taskdeck' hook codex --data-dir /d",
            "codex"
        ));
        assert!(!is_taskdeck_hook("/a/taskdeck hook codex", "claude-code"));
        assert!(!is_taskdeck_hook("/a/other hook codex", "codex"));
        assert!(!is_taskdeck_hook("say taskdeck hook codex", "codex"));
        assert!(is_taskdeck_hook("/b/taskdeck-hook codex", "codex"));
        assert!(!is_taskdeck_hook("/b/taskdeck-hook hook codex", "codex"));
        // A path with shell characters, quoted as install writes it: still Taskdeck's.
        assert!(is_taskdeck_hook(
            "'/opt/a$(b)`c/taskdeck-hook' claude-code",
            "claude-code"
        ));
        // Set up with its own environment: still Taskdeck's (a reinstall replaces it).
        assert!(is_taskdeck_hook(
            "TASKDECK_PORT=4811 /usr/bin/taskdeck-hook claude-code",
            "claude-code"
        ));
        // A line that does more is the user's own.
        for own in [
            "taskdeck hook claude-code | tee /tmp/log",
            "taskdeck-hook claude-code > /tmp/out",
            "taskdeck-hook claude-code 2>/dev/null",
            "taskdeck-hook claude-code; echo done",
            "taskdeck-hook claude-code && true",
            "taskdeck-hook claude-code\n/home/me/bin/notify-phone --all",
            "FOO=1 /old/taskdeck-hook claude-code --port 1 $(touch /tmp/x)",
            "taskdeck-hook claude-code --token td_abc`touch /tmp/x`",
        ] {
            assert!(!is_taskdeck_hook(own, "claude-code"), "{own}");
        }
    }
}
